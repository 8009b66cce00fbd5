//! The sans-IO part of the UDP relay's bookkeeping: which agent (source address) has which
//! flow, and when a flow is forgotten. A flow that has seen no datagram either way for its
//! idle time, and has none on its way, is closed, so a relay that serves a controller run
//! again and again (a new source port each run) keeps room for new agents. Time is given by
//! the caller, so the tests drive it without a clock.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// How long a flow may see no datagram either way before it is forgotten, unless
/// [`crate::UdpRelay::set_flow_idle`] says otherwise (`simrob netbed udp --flow-idle`).
pub const DEFAULT_FLOW_IDLE: Duration = Duration::from_secs(60);

/// One agent's flow and what the table knows of it.
pub struct Slot<F> {
    /// The agent's address.
    pub agent: SocketAddr,
    /// The last datagram either way.
    pub last: Instant,
    /// Copies of its datagrams in the relay's release queue.
    pub pending: usize,
    /// What the relay keeps for it (its socket, its streams).
    pub flow: F,
}

/// Flows by agent, at most `max` at once, each forgotten once idle.
pub struct Flows<F> {
    by_agent: BTreeMap<SocketAddr, u64>,
    slots: BTreeMap<u64, Slot<F>>,
    opened: u64,
    max: usize,
    idle: Duration,
    /// Datagrams dropped because their agent had no flow and there was no room for one
    /// (`max` flows open and none idle).
    pub no_flow: u64,
    /// Datagrams dropped because their agent had no flow and `open` could not make one (no
    /// socket to be had: the process's open-files limit, say).
    pub not_opened: u64,
    /// Flows forgotten after their idle time.
    pub expired: u64,
}

impl<F> Flows<F> {
    /// An empty table for at most `max` flows at once, each forgotten after `idle`.
    pub fn new(max: usize, idle: Duration) -> Self {
        Flows {
            by_agent: BTreeMap::new(),
            slots: BTreeMap::new(),
            opened: 0,
            max,
            idle,
            no_flow: 0,
            not_opened: 0,
            expired: 0,
        }
    }

    /// Forgets flows idle for `idle` from now on.
    pub fn set_idle(&mut self, idle: Duration) {
        self.idle = idle;
    }

    /// The flow of `agent`, whose datagram came at `now`. A new agent gets one made by
    /// `open(n)`, `n` being the number of flows opened before it (so a flow's number does not
    /// depend on the ones forgotten). `Err(None)`, counted in [`Flows::no_flow`], when `max`
    /// flows are open; `Err(Some(why))`, counted in [`Flows::not_opened`], when `open` fails.
    pub fn get_or_open<E>(
        &mut self,
        agent: SocketAddr,
        now: Instant,
        open: impl FnOnce(u64) -> Result<F, E>,
    ) -> Result<u64, Option<E>> {
        if let Some(&id) = self.by_agent.get(&agent) {
            self.touch(id, now);
            return Ok(id);
        }
        if self.slots.len() >= self.max {
            self.no_flow += 1;
            return Err(None);
        }
        let flow = match open(self.opened) {
            Ok(flow) => flow,
            Err(why) => {
                self.not_opened += 1;
                return Err(Some(why));
            }
        };
        let id = self.opened;
        self.opened += 1;
        self.by_agent.insert(agent, id);
        self.slots.insert(
            id,
            Slot {
                agent,
                last: now,
                pending: 0,
                flow,
            },
        );
        Ok(id)
    }

    /// A datagram of flow `id` came at `now`.
    pub fn touch(&mut self, id: u64, now: Instant) {
        if let Some(s) = self.slots.get_mut(&id) {
            s.last = s.last.max(now);
        }
    }

    /// Flow `id`.
    pub fn get_mut(&mut self, id: u64) -> Option<&mut Slot<F>> {
        self.slots.get_mut(&id)
    }

    /// Flow `id`.
    pub fn get(&self, id: u64) -> Option<&Slot<F>> {
        self.slots.get(&id)
    }

    /// The open flows, by number.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Slot<F>)> {
        self.slots.iter().map(|(id, s)| (*id, s))
    }

    /// The open flows, by number.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (u64, &mut Slot<F>)> {
        self.slots.iter_mut().map(|(id, s)| (*id, s))
    }

    /// Flows open now.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// No flow open.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Flows opened since the start (open now or forgotten).
    pub fn opened(&self) -> u64 {
        self.opened
    }

    /// Forgets, and gives back, the flows that saw no datagram for the idle time up to `now`,
    /// have none in the queue and none `held` (a datagram kept back in the flow itself).
    pub fn expire(&mut self, now: Instant, held: impl Fn(&F) -> bool) -> Vec<F> {
        let idle = self.idle;
        let gone: Vec<u64> = self
            .slots
            .iter()
            .filter(|(_, s)| {
                s.pending == 0 && !held(&s.flow) && now.saturating_duration_since(s.last) >= idle
            })
            .map(|(id, _)| *id)
            .collect();
        let mut out = Vec::with_capacity(gone.len());
        for id in gone {
            if let Some(s) = self.slots.remove(&id) {
                self.by_agent.remove(&s.agent);
                self.expired += 1;
                out.push(s.flow);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    /// A flow that is its own number.
    fn open(n: u64) -> Result<u64, ()> {
        Ok(n)
    }

    #[test]
    fn idle_flows_are_forgotten_and_make_room_for_new_agents() {
        let t0 = Instant::now();
        let idle = Duration::from_secs(60);
        let mut flows: Flows<u64> = Flows::new(2, idle);
        // Two agents fill the table; a third is dropped and counted.
        assert_eq!(flows.get_or_open(agent(1), t0, open), Ok(0));
        assert_eq!(flows.get_or_open(agent(2), t0, open), Ok(1));
        assert_eq!(flows.get_or_open(agent(3), t0, open), Err(None));
        assert_eq!(flows.no_flow, 1);
        // Agent 1 keeps talking; agent 2 falls silent but has a datagram on its way.
        let later = t0 + Duration::from_secs(59);
        assert_eq!(flows.get_or_open(agent(1), later, open), Ok(0));
        flows.get_mut(1).expect("flow 1").pending = 1;
        assert!(flows.expire(t0 + idle, |_| false).is_empty());
        // Once delivered, it goes after its idle time; a held datagram keeps a flow too.
        flows.get_mut(1).expect("flow 1").pending = 0;
        assert!(flows.expire(t0 + idle, |n| *n == 1).is_empty());
        assert_eq!(flows.expire(t0 + idle, |_| false), vec![1]);
        assert_eq!((flows.len(), flows.expired), (1, 1));
        // Room again: the newcomer gets the next number, not the forgotten one's.
        assert_eq!(flows.get_or_open(agent(3), t0 + idle, open), Ok(2));
        assert_eq!(flows.get_or_open(agent(4), t0 + idle, open), Err(None));
        assert_eq!((flows.no_flow, flows.opened()), (2, 3));
        // Agent 1, silent since 59 s, goes at 119 s and not before.
        assert!(flows
            .expire(later + idle - Duration::from_millis(1), |_| false)
            .is_empty());
        assert_eq!(flows.expire(later + idle, |_| false), vec![0]);
    }

    #[test]
    fn a_thousand_runs_of_a_controller_never_run_out_of_flows() {
        // A controller run again and again from new ports, each run a few seconds: with
        // room for only 16 flows, every run is relayed.
        let t0 = Instant::now();
        let mut flows: Flows<()> = Flows::new(16, DEFAULT_FLOW_IDLE);
        for run in 0..2000u16 {
            let now = t0 + Duration::from_secs(5 * u64::from(run));
            flows.expire(now, |_| false);
            assert!(
                flows
                    .get_or_open(agent(10_000 + run), now, |_| Ok::<(), ()>(()))
                    .is_ok(),
                "run {run}"
            );
        }
        assert_eq!(flows.no_flow, 0);
        assert!(flows.len() <= 13, "{}", flows.len());
    }

    #[test]
    fn a_flow_that_cannot_be_opened_is_told_apart_from_a_full_table() {
        let t0 = Instant::now();
        let mut flows: Flows<u64> = Flows::new(2, DEFAULT_FLOW_IDLE);
        // Room, but no socket: the reason comes back, counted apart from a full table.
        assert_eq!(
            flows.get_or_open(agent(1), t0, |_| Err("no socket")),
            Err(Some("no socket"))
        );
        assert_eq!((flows.not_opened, flows.no_flow, flows.len()), (1, 0, 0));
        // The agent's next datagram tries again, and gets the first number.
        assert_eq!(flows.get_or_open(agent(1), t0, open), Ok(0));
        assert_eq!(flows.get_or_open(agent(2), t0, open), Ok(1));
        assert_eq!(
            flows.get_or_open(agent(3), t0, |_| Err("no socket")),
            Err(None)
        );
        assert_eq!((flows.not_opened, flows.no_flow), (1, 1));
    }
}
