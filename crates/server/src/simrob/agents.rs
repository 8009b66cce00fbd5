//! Agents and the filters that shape what each agent type receives (seed 000 §1.4, §7.4).
//!
//! Every agent type has one [`BroadcastFilter`]. `RobotController` and `GUI` receive the
//! whole world state. Adding an agent type is one call:
//!
//! ```
//! use std::borrow::Cow;
//! use simrob_protocol::Broadcast;
//! use simrob_server::simrob::{BroadcastFilter, FilterRegistry};
//!
//! /// Robots' and balls' poses only: no per-body draw data (much smaller datagrams).
//! struct PosesOnly;
//! impl BroadcastFilter for PosesOnly {
//!     fn filter<'a>(&self, b: &'a Broadcast) -> Option<Cow<'a, Broadcast>> {
//!         Some(Cow::Owned(Broadcast { bodies: Vec::new(), ..b.clone() }))
//!     }
//! }
//! let mut filters = FilterRegistry::standard();
//! filters.register("PosesOnly", PosesOnly);
//! assert!(filters.get("PosesOnly").is_some());
//! ```
//!
//! (simrob ships that filter as [`PosesOnly`], registered under the type `PosesOnly`.)

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;

use simrob_protocol::{AgentType, Broadcast};

/// Decides what of a broadcast an agent type receives: hide data, add noise, change units…
/// `None` sends nothing this time.
pub trait BroadcastFilter: Send + Sync {
    fn filter<'a>(&self, broadcast: &'a Broadcast) -> Option<Cow<'a, Broadcast>>;
}

/// The whole state, unchanged (RobotController, GUI).
#[derive(Debug, Clone, Copy, Default)]
pub struct FullState;

impl BroadcastFilter for FullState {
    fn filter<'a>(&self, broadcast: &'a Broadcast) -> Option<Cow<'a, Broadcast>> {
        Some(Cow::Borrowed(broadcast))
    }
}

/// Only `Entities_Info` (robot and ball poses), no `DrawData`.
#[derive(Debug, Clone, Copy, Default)]
pub struct PosesOnly;

impl BroadcastFilter for PosesOnly {
    fn filter<'a>(&self, broadcast: &'a Broadcast) -> Option<Cow<'a, Broadcast>> {
        Some(Cow::Owned(Broadcast {
            iteration: broadcast.iteration,
            part: broadcast.part,
            bodies: Vec::new(),
            entities: broadcast.entities.clone(),
        }))
    }
}

/// Agent type name → filter.
#[derive(Clone)]
pub struct FilterRegistry {
    filters: BTreeMap<String, Arc<dyn BroadcastFilter>>,
}

impl FilterRegistry {
    /// `RobotController` and `GUI` (full state) and `PosesOnly`.
    pub fn standard() -> Self {
        let mut r = FilterRegistry {
            filters: BTreeMap::new(),
        };
        r.register(AgentType::RobotController.as_str(), FullState);
        r.register(AgentType::Gui.as_str(), FullState);
        r.register("PosesOnly", PosesOnly);
        r
    }

    /// Adds (or replaces) an agent type and its filter.
    pub fn register(&mut self, agent_type: &str, filter: impl BroadcastFilter + 'static) {
        self.filters
            .insert(agent_type.to_string(), Arc::new(filter));
    }

    pub fn get(&self, agent_type: &str) -> Option<&Arc<dyn BroadcastFilter>> {
        self.filters.get(agent_type)
    }

    /// Known agent type names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.filters.keys().map(String::as_str)
    }
}

/// A registered agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Agent {
    pub key: String,
    pub agent_type: String,
    /// Where broadcasts and confirmations go (the registered IP and port).
    pub addr: SocketAddr,
    pub sync: bool,
    /// Broadcast interval in simulated seconds; negative = never.
    pub broadcast_interval: f64,
    /// Simulated time of its next broadcast.
    pub next_broadcast: f64,
    /// Highest iteration it has synchronized with.
    pub synced: u64,
    /// The iteration it was last sent in synchronous mode and must synchronize with.
    pub awaited: Option<u64>,
}
