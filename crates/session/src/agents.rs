//! Agents and the filters that shape what each agent type receives (SimRob manual §1.4, §7.4).
//!
//! Every agent type has one filter in the [`FilterRegistry`]. Two kinds:
//!
//! * a [`BroadcastFilter`] is stateless and shared by every agent of its type: the session
//!   runs it once per iteration and encodes the result once, whatever the number of agents
//!   (`RobotController` and `GUI` get the whole state, `PosesOnly` the robots' and balls'
//!   poses);
//! * an [`AgentFilter`] is made for each agent when it registers ([`FilterRegistry::register_per_agent`]):
//!   it keeps its own state between iterations, gets a deterministic per-agent random seed
//!   ([`AgentInfo::seed`]), sees the whole [`Snapshot`] and the agent's registration, and may
//!   emit its own broadcast body ([`View::Body`]) instead of a `<Broadcast>`.
//!
//! ```
//! use std::borrow::Cow;
//! use simrob_protocol::Broadcast;
//! use simrob_session::{AgentFilter, AgentInfo, BroadcastFilter, FilterRegistry, Snapshot, View};
//!
//! /// Robots' and balls' poses only: no per-body draw data (much smaller datagrams).
//! struct Poses;
//! impl BroadcastFilter for Poses {
//!     fn filter<'a>(&self, s: &'a Snapshot) -> Option<Cow<'a, Broadcast>> {
//!         Some(Cow::Owned(Broadcast { bodies: Vec::new(), ..s.broadcast.clone() }))
//!     }
//! }
//!
//! /// Every tenth iteration, a count of what it saw, as its own XML body.
//! struct Counter { seen: u64 }
//! impl AgentFilter for Counter {
//!     fn view(&mut self, s: &Snapshot, _agent: &AgentInfo) -> Option<View> {
//!         self.seen += 1;
//!         (s.iteration % 10 == 0).then(|| View::Body(format!("<Count>{}</Count>", self.seen)))
//!     }
//! }
//!
//! let mut filters = FilterRegistry::standard();
//! filters.register("Poses", Poses);
//! filters.register_per_agent("Counter", |_agent: &AgentInfo| Counter { seen: 0 });
//! assert!(filters.contains("Poses") && filters.contains("Counter"));
//! ```

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;

use simrob_protocol::{encode_response, AgentType, Broadcast, Response};

use crate::snapshot::Snapshot;

pub mod humanoid;

/// Decides what of the world an agent type receives: hide data, change units… Shared by
/// every agent of the type; `None` sends nothing this time.
pub trait BroadcastFilter: Send + Sync {
    /// What of `snapshot` the agents of this type are sent; `None` sends nothing.
    fn filter<'a>(&self, snapshot: &'a Snapshot) -> Option<Cow<'a, Broadcast>>;
}

/// What a per-agent filter sends this iteration.
#[derive(Debug, Clone, PartialEq)]
pub enum View {
    /// A broadcast, encoded and split over datagrams like any other.
    Broadcast(Broadcast),
    /// A body of the filter's own making (XML text), sent as one datagram. A body larger than
    /// `maximumdatagramsize` is not sent (and logged).
    Body(String),
}

/// A filter made for one agent: it keeps state between iterations (noise, a camera's
/// memory…). It runs on the simulation's thread once per iteration the agent is due a
/// broadcast, in the order agents registered.
pub trait AgentFilter: Send {
    /// What `agent` is sent for `snapshot`; `None` sends nothing this time.
    fn view(&mut self, snapshot: &Snapshot, agent: &AgentInfo) -> Option<View>;
}

/// What a per-agent filter knows of its agent.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentInfo {
    /// The key the agent registered with.
    pub key: String,
    /// Its agent type, which names its filter.
    pub agent_type: String,
    /// Where its datagrams go.
    pub addr: SocketAddr,
    /// Whether it is synchronous: in synchronous mode iterations wait for it.
    pub sync: bool,
    /// Broadcast interval in simulated seconds; negative = never.
    pub broadcast_interval: f64,
    /// A random seed for this agent: a pure function of the session's `randomseed` and the
    /// agent's key, so the same run gives every agent the same draws whatever the order or
    /// time at which agents register.
    pub seed: u64,
}

/// The whole state, unchanged (RobotController, GUI).
#[derive(Debug, Clone, Copy, Default)]
pub struct FullState;

impl BroadcastFilter for FullState {
    fn filter<'a>(&self, snapshot: &'a Snapshot) -> Option<Cow<'a, Broadcast>> {
        Some(Cow::Borrowed(&snapshot.broadcast))
    }
}

/// Only `Entities_Info` (robot and ball poses), no `DrawData`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PosesOnly;

impl BroadcastFilter for PosesOnly {
    fn filter<'a>(&self, snapshot: &'a Snapshot) -> Option<Cow<'a, Broadcast>> {
        let b = &snapshot.broadcast;
        Some(Cow::Owned(Broadcast {
            iteration: b.iteration,
            part: b.part,
            bodies: Vec::new(),
            entities: b.entities.clone(),
        }))
    }
}

type MakeFilter = dyn Fn(&AgentInfo) -> Box<dyn AgentFilter> + Send + Sync;

/// One agent type's filter.
#[derive(Clone)]
pub enum Filter {
    /// One filter for every agent of the type; its broadcast is encoded once per iteration.
    Shared(Arc<dyn BroadcastFilter>),
    /// Makes a stateful filter for each agent when it registers.
    PerAgent(Arc<MakeFilter>),
}

/// Agent type name → filter.
#[derive(Clone)]
pub struct FilterRegistry {
    filters: BTreeMap<String, Filter>,
}

impl FilterRegistry {
    /// `RobotController` and `GUI` (full state), `PosesOnly`, and the humanoid brains'
    /// cameras `Humanoid_Brain` and `Humanoid_Brain_Ideal` ([`humanoid`]).
    pub fn standard() -> Self {
        let mut r = FilterRegistry {
            filters: BTreeMap::new(),
        };
        r.register(AgentType::RobotController.as_str(), FullState);
        r.register(AgentType::Gui.as_str(), FullState);
        r.register("PosesOnly", PosesOnly);
        humanoid::register(&mut r);
        r
    }

    /// Adds (or replaces) an agent type with a shared filter.
    pub fn register(&mut self, agent_type: &str, filter: impl BroadcastFilter + 'static) {
        self.filters
            .insert(agent_type.to_string(), Filter::Shared(Arc::new(filter)));
    }

    /// Adds (or replaces) an agent type whose agents each get their own filter, made by
    /// `make` when the agent registers (again when it registers again).
    pub fn register_per_agent<F, M>(&mut self, agent_type: &str, make: M)
    where
        F: AgentFilter + 'static,
        M: Fn(&AgentInfo) -> F + Send + Sync + 'static,
    {
        let make: Arc<MakeFilter> = Arc::new(move |a| Box::new(make(a)));
        self.filters
            .insert(agent_type.to_string(), Filter::PerAgent(make));
    }

    /// The filter of an agent type.
    pub fn get(&self, agent_type: &str) -> Option<&Filter> {
        self.filters.get(agent_type)
    }

    /// Whether `agent_type` is known.
    pub fn contains(&self, agent_type: &str) -> bool {
        self.filters.contains_key(agent_type)
    }

    /// Known agent type names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.filters.keys().map(String::as_str)
    }
}

/// A registered agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    /// The key it registered with (a new registration with the same key replaces it).
    pub key: String,
    /// Its agent type, which names its filter.
    pub agent_type: String,
    /// Where broadcasts and confirmations go (the registered IP and port).
    pub addr: SocketAddr,
    /// Whether it is synchronous: in synchronous mode iterations wait for it.
    pub sync: bool,
    /// Broadcast interval in simulated seconds; negative = never.
    pub broadcast_interval: f64,
    /// Simulated time of its next broadcast.
    pub next_broadcast: f64,
    /// Highest iteration it has synchronized with.
    pub synced: u64,
    /// The iteration it was last sent in synchronous mode and must synchronize with.
    pub awaited: Option<u64>,
    /// Its random seed (see [`AgentInfo::seed`]).
    pub seed: u64,
    /// Whether its address has sent the server a datagram (it registered from there, or sent
    /// anything since): only then is it sent broadcasts, other agents' confirmations and
    /// answers to `Info_Request`s. An address that never sent anything never asked for them.
    pub asked: bool,
    /// The `<Iteration>` of the last `Synchronize` it sent that was taken (a copy of it that
    /// comes again is a resend, not an error).
    pub answered: Option<u64>,
}

impl Agent {
    /// What a per-agent filter sees of this agent.
    pub fn info(&self) -> AgentInfo {
        AgentInfo {
            key: self.key.clone(),
            agent_type: self.agent_type.clone(),
            addr: self.addr,
            sync: self.sync,
            broadcast_interval: self.broadcast_interval,
            seed: self.seed,
        }
    }
}

/// The registered agents, in the order they registered, found by key in constant time (a
/// thousand agents each sending a hundred requests a second made a scan of the list per
/// request the server's main cost).
#[derive(Debug, Clone, Default)]
pub struct AgentTable {
    list: Vec<Agent>,
    by_key: HashMap<String, usize>,
    /// Each agent's answer to an `Info_Request` about it, encoded once when it registers
    /// (an agent's key and address change only by registering again, which replaces it).
    answers: Vec<Vec<u8>>,
}

impl AgentTable {
    /// The agents in the order they first registered.
    pub fn as_slice(&self) -> &[Agent] {
        &self.list
    }
    /// How many agents are registered.
    pub fn len(&self) -> usize {
        self.list.len()
    }
    /// Whether no agent is registered.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    /// The agents in the order they first registered.
    pub fn iter(&self) -> std::slice::Iter<'_, Agent> {
        self.list.iter()
    }
    /// The agents in the order they first registered, to update.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Agent> {
        self.list.iter_mut()
    }
    /// The agent registered with `key`.
    pub fn get(&self, key: &str) -> Option<&Agent> {
        self.by_key.get(key).map(|&i| &self.list[i])
    }
    /// The `i`-th agent in the order they first registered, to update.
    pub fn at_mut(&mut self, i: usize) -> Option<&mut Agent> {
        self.list.get_mut(i)
    }
    /// The agent registered with `key`, to update.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Agent> {
        self.by_key.get(key).map(|&i| &mut self.list[i])
    }
    /// Adds `agent`, or replaces the one with its key (which keeps its place in the order).
    pub fn insert(&mut self, agent: Agent) {
        let answer = encode_response(&Response::AgentInformation {
            key: agent.key.clone(),
            port: agent.addr.port(),
            ip: agent.addr.ip().to_string(),
        })
        .into_bytes();
        match self.by_key.get(&agent.key) {
            Some(&i) => {
                self.list[i] = agent;
                self.answers[i] = answer;
            }
            None => {
                self.by_key.insert(agent.key.clone(), self.list.len());
                self.list.push(agent);
                self.answers.push(answer);
            }
        }
    }
    /// Removes the agent registered with `key` (the others keep their order); returns it.
    pub fn remove(&mut self, key: &str) -> Option<Agent> {
        let i = self.by_key.remove(key)?;
        self.answers.remove(i);
        let agent = self.list.remove(i);
        for index in self.by_key.values_mut() {
            if *index > i {
                *index -= 1;
            }
        }
        Some(agent)
    }
    /// The answer to an `Info_Request` about agent `key`: `<Response><Agent_Information>`
    /// with its key, port and IP, encoded when it registered.
    pub fn info_answer(&self, key: &str) -> Option<&[u8]> {
        self.by_key.get(key).map(|&i| self.answers[i].as_slice())
    }
}

impl std::ops::Index<usize> for AgentTable {
    type Output = Agent;
    fn index(&self, i: usize) -> &Agent {
        &self.list[i]
    }
}

/// The seed of the agent `key` in a session seeded with `session_seed`: FNV-1a of the key
/// mixed with the session seed by SplitMix64.
pub fn agent_seed(session_seed: u64, key: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in key.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    simrob_math::splitmix64(session_seed ^ h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Agent seeds pinned: a session seed recorded today gives its agents the same seeds
    /// forever.
    #[test]
    fn agent_seeds_are_pinned() {
        assert_eq!(agent_seed(1, "a"), 0xc0fc99fea7ab959c);
        assert_eq!(agent_seed(7, "a9301"), 0x46f6c832a9515ef2);
        assert_eq!(agent_seed(0, ""), 0xc3817c016ba4ff30);
    }

    #[test]
    fn removing_an_agent_keeps_the_others_in_order_and_findable() {
        let mut t = AgentTable::default();
        for (i, key) in ["a", "b", "c", "d"].iter().enumerate() {
            t.insert(Agent {
                key: key.to_string(),
                agent_type: "RobotController".into(),
                addr: SocketAddr::from(([127, 0, 0, 1], 9000 + i as u16)),
                sync: false,
                broadcast_interval: 0.0,
                next_broadcast: 0.0,
                synced: 0,
                awaited: None,
                seed: 0,
                asked: true,
                answered: None,
            });
        }
        assert_eq!(t.remove("b").map(|a| a.key), Some("b".to_string()));
        assert!(t.remove("b").is_none());
        let keys: Vec<&str> = t.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["a", "c", "d"]);
        for key in ["a", "c", "d"] {
            assert_eq!(t.get(key).map(|a| a.key.as_str()), Some(key));
            let answer = String::from_utf8(t.info_answer(key).unwrap().to_vec()).unwrap();
            assert!(answer.contains(&format!("<Key>{key}</Key>")), "{answer}");
        }
        assert!(t.get("b").is_none() && t.info_answer("b").is_none());
    }

    #[test]
    fn agent_seeds_depend_on_key_and_session_only() {
        assert_eq!(agent_seed(1, "a"), agent_seed(1, "a"));
        assert_ne!(agent_seed(1, "a"), agent_seed(1, "b"));
        assert_ne!(agent_seed(1, "a"), agent_seed(2, "a"));
    }
}
