//! The SimRob server as a sans-IO state machine.
//!
//! [`SimServer`] owns the [`World`] and the agents. The shell feeds it datagrams
//! ([`SimServer::handle_datagram`]) and the time ([`SimServer::handle_timeout`]), asks when it
//! next needs the time ([`SimServer::poll_timeout`]) and sends what it hands back
//! ([`SimServer::poll_transmit`]). No sockets, no threads, no clock inside: tests drive it with
//! any `Instant`s they like.

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

#[cfg(test)]
use simrob_protocol::ServerMessage;
use simrob_protocol::{
    decode_datagram, encode_broadcast, encode_response, AgentRequest, Broadcast, ControlRequest,
    Request, Response,
};
use simrob_world::{Applied, World};

use super::agents::{Agent, FilterRegistry};
use super::config::ServerConfig;
use super::files::SaveStore;

/// A datagram to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Transmit {
    pub to: SocketAddr,
    pub payload: Vec<u8>,
}

/// Counters for monitoring and benchmarks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pub datagrams_in: u64,
    pub datagrams_out: u64,
    pub requests: u64,
    pub errors: u64,
    pub iterations: u64,
    pub broadcasts: u64,
}

/// Auto-adjust bookkeeping: a window of wall time and simulated time.
#[derive(Debug, Clone)]
struct AutoWindow {
    started: Instant,
    sim_start: f64,
    busy: Duration,
}

/// The prefix of every error response.
pub const ERROR_PREFIX: &str = "Error: ";

/// The SimRob server core.
pub struct SimServer {
    config: ServerConfig,
    world: World,
    agents: Vec<Agent>,
    filters: FilterRegistry,
    store: Box<dyn SaveStore>,
    outbox: VecDeque<Transmit>,
    /// When the next iteration may run in paced (real-time factor or auto-adjust) mode.
    next_due: Option<Instant>,
    /// In synchronous mode, after a broadcast: the iteration agents must confirm and when it
    /// was broadcast (the server waits until then + Sync_Wait, read at each check so that a
    /// new Sync_Wait applies to the current wait too).
    sync_deadline: Option<(u64, Instant)>,
    auto: Option<AutoWindow>,
    stats: Stats,
}

fn error_text(message: impl std::fmt::Display) -> String {
    format!("{ERROR_PREFIX}{message}")
}

impl SimServer {
    /// A server with an empty world.
    pub fn new(config: ServerConfig, store: Box<dyn SaveStore>) -> Self {
        let world = World::new(config.world.clone());
        SimServer {
            config,
            world,
            agents: Vec::new(),
            filters: FilterRegistry::standard(),
            store,
            outbox: VecDeque::new(),
            next_due: None,
            sync_deadline: None,
            auto: None,
            stats: Stats::default(),
        }
    }

    /// The agent types and their filters (register new ones here).
    pub fn filters_mut(&mut self) -> &mut FilterRegistry {
        &mut self.filters
    }
    pub fn world(&self) -> &World {
        &self.world
    }
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }
    pub fn agents(&self) -> &[Agent] {
        &self.agents
    }
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// Simulated seconds per wall second in asynchronous mode (0 = as fast as possible).
    pub fn set_real_time_factor(&mut self, factor: f64) {
        if factor.is_finite() && factor >= 0.0 {
            self.config.real_time_factor = factor;
            self.next_due = None;
        }
    }

    /// Applies requests without a sender (a scenario given at start). Errors are returned.
    pub fn apply_local(&mut self, requests: &[Request]) -> Result<(), String> {
        for (n, r) in requests.iter().enumerate() {
            match self.world.apply(r) {
                Ok(Applied::Done(_)) => {}
                Ok(Applied::Save(path)) => {
                    self.save(&path).map(|_| ()).map_err(|e| e.to_string())?
                }
                Ok(Applied::Load(path)) => self.load(&path)?,
                Err(e) => return Err(format!("request {}: {e}", n + 1)),
            }
        }
        Ok(())
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        let t = self.outbox.pop_front();
        if t.is_some() {
            self.stats.datagrams_out += 1;
        }
        t
    }

    fn send_text(&mut self, to: SocketAddr, text: String) {
        self.outbox.push_back(Transmit {
            to,
            payload: encode_response(&Response::Text(text)).into_bytes(),
        });
    }

    fn send_error(&mut self, to: SocketAddr, message: impl std::fmt::Display) {
        self.stats.errors += 1;
        self.send_text(to, error_text(message));
    }

    /// Sends `text` to every agent, and to `from` if it is not one (an unregistered
    /// commander still sees its confirmations).
    fn confirm(&mut self, from: Option<SocketAddr>, text: String) {
        let payload = encode_response(&Response::Text(text)).into_bytes();
        let mut sent_to_sender = false;
        for a in &self.agents {
            sent_to_sender |= Some(a.addr) == from;
            self.outbox.push_back(Transmit {
                to: a.addr,
                payload: payload.clone(),
            });
        }
        if let (Some(from), false) = (from, sent_to_sender) {
            self.outbox.push_back(Transmit { to: from, payload });
        }
    }

    /// Handles one datagram from `from`: every request in it, in order.
    pub fn handle_datagram(&mut self, from: SocketAddr, data: &[u8], now: Instant) {
        self.stats.datagrams_in += 1;
        if data.len() > self.config.maximum_datagram_size {
            self.send_error(
                from,
                format!(
                    "datagram of {} bytes is larger than maximumdatagramsize ({} bytes); nothing in it was executed",
                    data.len(),
                    self.config.maximum_datagram_size
                ),
            );
            return;
        }
        for result in decode_datagram(data, &self.config.keys) {
            self.stats.requests += 1;
            match result {
                Err(e) => self.send_error(from, e),
                Ok(Request::Agent(a)) => self.handle_agent(from, a),
                Ok(request) => self.handle_world_request(from, &request, now),
            }
        }
    }

    fn handle_world_request(&mut self, from: SocketAddr, request: &Request, now: Instant) {
        let command = request.command(&self.config.keys).to_string();
        let confirm = request
            .response()
            .unwrap_or(self.config.world.default_response_request);
        let sync_before = self.world.modes().sync_mode;
        match self.world.apply(request) {
            Ok(Applied::Done(text)) => {
                if confirm {
                    self.confirm(Some(from), format!("{command}: {text}"));
                }
            }
            Ok(Applied::Save(path)) => match self.save(&path) {
                Ok(written) => {
                    if confirm {
                        self.confirm(
                            Some(from),
                            format!("{command}: simulation saved to {written}"),
                        );
                    }
                }
                Err(e) => self.send_error(from, format!("{command}: {e}")),
            },
            Ok(Applied::Load(path)) => match self.load(&path) {
                Ok(()) => {
                    if confirm {
                        self.confirm(
                            Some(from),
                            format!(
                                "{command}: simulation loaded from {path} at iteration {}",
                                self.world.iteration()
                            ),
                        );
                    }
                }
                Err(e) => self.send_error(from, format!("{command}: {e}")),
            },
            Err(e) => self.send_error(from, format!("{command}: {e}")),
        }
        if sync_before && !self.world.modes().sync_mode {
            self.sync_deadline = None;
        }
        if matches!(
            request,
            Request::Control {
                request: ControlRequest::SetAutoAdjustMode(_) | ControlRequest::SetTimestep(_),
                ..
            }
        ) {
            self.auto = None;
            self.next_due = Some(now);
        }
    }

    fn save(&mut self, path: &str) -> Result<String, String> {
        let xml = self.world.save_xml();
        self.store.save(path, &xml).map(|p| p.display().to_string())
    }

    fn load(&mut self, path: &str) -> Result<(), String> {
        let xml = self.store.load(path)?;
        self.world.load_xml(&xml).map_err(|e| e.to_string())?;
        // Timers restart from the loaded simulated time.
        let t = self.world.sim_time();
        for a in &mut self.agents {
            a.next_broadcast = t;
            a.awaited = None;
            a.synced = a.synced.min(self.world.iteration());
        }
        self.sync_deadline = None;
        self.next_due = None;
        self.auto = None;
        Ok(())
    }

    fn handle_agent(&mut self, from: SocketAddr, request: AgentRequest) {
        match request {
            AgentRequest::RegisterAgent {
                agent_type,
                port,
                ip,
                sync,
                broadcast,
                key,
            } => {
                let type_name = agent_type.as_str().to_string();
                if self.filters.get(&type_name).is_none() {
                    let known: Vec<&str> = self.filters.names().collect();
                    return self.send_error(
                        from,
                        format!(
                            "Register_Agent: unknown agent type {type_name:?} (known: {})",
                            known.join(", ")
                        ),
                    );
                }
                let Ok(ip_addr) = ip.trim().parse::<IpAddr>() else {
                    return self.send_error(
                        from,
                        format!("Register_Agent: IP {ip:?} is not an IP address"),
                    );
                };
                if !self.config.allow_foreign_agent_ip && ip_addr != from.ip() {
                    return self.send_error(
                        from,
                        format!(
                            "Register_Agent: agent {key:?} registers IP {ip_addr} but sends from {}; an agent may only register its own address (configuration key allowforeignagentip)",
                            from.ip()
                        ),
                    );
                }
                if port == 0 {
                    return self.send_error(from, "Register_Agent: Port 0 is not a port");
                }
                if !(broadcast == -1.0 || broadcast >= 0.0) {
                    return self.send_error(
                        from,
                        format!(
                            "Register_Agent: Broadcast must be -1 (never) or a number of seconds >= 0, got {broadcast}"
                        ),
                    );
                }
                if key.trim().is_empty() {
                    return self.send_error(from, "Register_Agent: Key must not be empty");
                }
                let agent = Agent {
                    key: key.clone(),
                    agent_type: type_name,
                    addr: SocketAddr::new(ip_addr, port),
                    sync,
                    broadcast_interval: broadcast,
                    next_broadcast: self.world.sim_time(),
                    synced: self.world.iteration(),
                    awaited: None,
                };
                match self.agents.iter_mut().find(|a| a.key == key) {
                    Some(existing) => *existing = agent,
                    None => self.agents.push(agent),
                }
                self.confirm(
                    None,
                    format!("Sucessfully added agent with key {key}, port {port} and ip {ip}"),
                );
            }
            AgentRequest::InfoRequest {
                requester,
                requested,
            } => {
                let Some(to) = self
                    .agents
                    .iter()
                    .find(|a| a.key == requester)
                    .map(|a| a.addr)
                else {
                    return self.send_error(
                        from,
                        format!("Info_Request: requester {requester:?} is not a registered agent"),
                    );
                };
                let Some(info) = self.agents.iter().find(|a| a.key == requested) else {
                    return self.send_error(
                        from,
                        format!("Info_Request: agent {requested:?} is not registered"),
                    );
                };
                let response = Response::AgentInformation {
                    key: info.key.clone(),
                    port: info.addr.port(),
                    ip: info.addr.ip().to_string(),
                };
                self.outbox.push_back(Transmit {
                    to,
                    payload: encode_response(&response).into_bytes(),
                });
            }
            AgentRequest::Synchronize { key, iteration } => {
                let current = self.world.iteration();
                let Some(agent) = self.agents.iter_mut().find(|a| a.key == key) else {
                    return self.send_error(
                        from,
                        format!("Synchronize: agent {key:?} is not registered"),
                    );
                };
                if iteration > current {
                    return self.send_error(
                        from,
                        format!(
                            "Synchronize: iteration {iteration} has not happened yet (the simulation is at iteration {current})"
                        ),
                    );
                }
                agent.synced = agent.synced.max(iteration);
            }
        }
    }

    /// Whether every agent the last synchronous broadcast went to has confirmed it.
    fn sync_satisfied(&self, iteration: u64) -> bool {
        self.agents
            .iter()
            .all(|a| a.awaited != Some(iteration) || a.synced >= iteration)
    }

    /// When the next iteration may run, if one can (initialized, not paused).
    fn iteration_due(&self, now: Instant) -> Option<Instant> {
        if !self.world.can_advance() {
            return None;
        }
        if let Some((iteration, broadcast_at)) = self.sync_deadline {
            if self.world.modes().sync_mode && !self.sync_satisfied(iteration) {
                let wait = Duration::from_secs_f64(self.world.modes().sync_wait.clamp(0.0, 1e9));
                return Some(broadcast_at + wait);
            }
        }
        Some(self.next_due.unwrap_or(now))
    }

    /// When [`SimServer::handle_timeout`] should next be called; `None` = nothing to do until a
    /// datagram arrives.
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        self.iteration_due(now)
    }

    fn pace(&self) -> f64 {
        if self.world.modes().auto_adjust {
            1.0
        } else {
            self.config.real_time_factor
        }
    }

    /// Runs the next iteration if it is due at `now` (then broadcasts it). Returns whether an
    /// iteration ran.
    pub fn handle_timeout(&mut self, now: Instant) -> bool {
        match self.iteration_due(now) {
            Some(due) if due <= now => {}
            _ => return false,
        }
        let started = Instant::now();
        if !self.world.advance() {
            return false;
        }
        self.stats.iterations += 1;
        let pace = self.pace();
        self.next_due = if pace > 0.0 {
            let period = Duration::from_secs_f64(self.world.iteration_seconds() / pace);
            let base = self.next_due.unwrap_or(now);
            // Falling more than a second behind: restart the schedule instead of bursting.
            let next = base + period;
            Some(if next + Duration::from_secs(1) < now {
                now
            } else {
                next
            })
        } else {
            None
        };
        self.broadcast_iteration(now);
        if self.world.modes().auto_adjust {
            self.auto_adjust(now, started.elapsed());
        }
        true
    }

    /// Auto-adjust (seed 000 §2.8): simulated time tracks wall time. Iterations are paced at
    /// real time; once a second, if the simulation fell behind, each iteration takes one more
    /// physics step (fewer broadcasts per simulated second); if it spent less than half of the
    /// wall time computing, one step fewer.
    fn auto_adjust(&mut self, now: Instant, busy: Duration) {
        let sim = self.world.sim_time();
        let window = self.auto.get_or_insert(AutoWindow {
            started: now,
            sim_start: sim,
            busy: Duration::ZERO,
        });
        window.busy += busy;
        let wall = now.saturating_duration_since(window.started).as_secs_f64();
        if wall < 1.0 {
            return;
        }
        let achieved = (sim - window.sim_start) / wall;
        let busy_share = window.busy.as_secs_f64() / wall;
        let steps = self.world.modes().steps_per_iteration;
        let new_steps = if achieved < 0.95 {
            steps.saturating_add(1).min(1000)
        } else if busy_share < 0.5 && steps > 1 {
            steps - 1
        } else {
            steps
        };
        if new_steps != steps {
            let _ = self
                .world
                .apply_control(&ControlRequest::SetStepsPerIteration(new_steps));
        }
        self.auto = Some(AutoWindow {
            started: now,
            sim_start: sim,
            busy: Duration::ZERO,
        });
    }

    fn broadcast_iteration(&mut self, now: Instant) {
        let iteration = self.world.iteration();
        let sim_time = self.world.sim_time();
        let sync_mode = self.world.modes().sync_mode;
        let eps = 1e-9;
        let mut recipients: Vec<usize> = Vec::new();
        for (i, a) in self.agents.iter_mut().enumerate() {
            let due = if sync_mode && a.sync {
                true
            } else if a.broadcast_interval < 0.0 {
                false
            } else if sim_time + eps >= a.next_broadcast {
                a.next_broadcast = if a.broadcast_interval == 0.0 {
                    sim_time
                } else {
                    let mut next = a.next_broadcast + a.broadcast_interval;
                    if next <= sim_time + eps {
                        next = sim_time + a.broadcast_interval;
                    }
                    next
                };
                true
            } else {
                false
            };
            if due {
                recipients.push(i);
                if sync_mode && a.sync {
                    a.awaited = Some(iteration);
                }
            }
        }
        if recipients.is_empty() {
            return;
        }
        let snapshot = self.world.snapshot();
        let mut encoded: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
        for i in recipients {
            let agent_type = self.agents[i].agent_type.clone();
            if !encoded.contains_key(&agent_type) {
                let parts = match self
                    .filters
                    .get(&agent_type)
                    .and_then(|f| f.filter(&snapshot))
                {
                    Some(b) => split_broadcast(&b, self.config.maximum_datagram_size),
                    None => Vec::new(),
                };
                encoded.insert(agent_type.clone(), parts);
            }
            let to = self.agents[i].addr;
            if let Some(parts) = encoded.get(&agent_type) {
                for p in parts {
                    self.outbox.push_back(Transmit {
                        to,
                        payload: p.clone(),
                    });
                }
                self.stats.broadcasts += 1;
            }
        }
        if sync_mode && !self.sync_satisfied(iteration) {
            self.sync_deadline = Some((iteration, now));
        } else {
            self.sync_deadline = None;
        }
    }
}

/// Encodes `b` in as few datagrams of at most `max` bytes as it takes. One datagram carries
/// the broadcast as is; several carry `<Part>i</Part><Parts>n</Parts>` and share the bodies
/// and entity entries in order. A single body too large for `max` still goes, alone.
pub fn split_broadcast(b: &Broadcast, max: usize) -> Vec<Vec<u8>> {
    let whole = encode_broadcast(b);
    if whole.len() <= max {
        return vec![whole.into_bytes()];
    }
    let items = b.bodies.len() + b.entities.len();
    let mut n = whole.len().div_ceil(max).max(2);
    loop {
        let per = items.div_ceil(n.min(items.max(1))).max(1);
        let n_parts = items.div_ceil(per).max(1);
        let mut parts = Vec::with_capacity(n_parts);
        let mut fits = true;
        for p in 0..n_parts {
            let (lo, hi) = (p * per, ((p + 1) * per).min(items));
            let nb = b.bodies.len();
            let part = Broadcast {
                iteration: b.iteration,
                part: Some((p as u32 + 1, n_parts as u32)),
                bodies: b.bodies[lo.min(nb)..hi.min(nb)].to_vec(),
                entities: b.entities[lo.saturating_sub(nb)..hi.saturating_sub(nb)].to_vec(),
            };
            let text = encode_broadcast(&part);
            fits &= text.len() <= max;
            parts.push(text.into_bytes());
        }
        if fits || per == 1 {
            return parts;
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_protocol::{decode_server_message, BodyState, EntityInfo, EntityInfoKind, Shape};

    fn sample(bodies: usize, entities: usize) -> Broadcast {
        Broadcast {
            iteration: 7,
            part: None,
            bodies: (0..bodies)
                .map(|i| BodyState {
                    entity_id: 1,
                    id: i as u32,
                    shape: Shape::Box {
                        size: [0.1, 0.2, 0.3],
                    },
                    material: 0,
                    mass: 1.5,
                    position: [i as f64 * 0.123456789, 1.0, 2.0],
                    rotation: [0.1, 0.2, 0.3],
                    linear_velocity: [0.0; 3],
                    angular_velocity: [0.0; 3],
                })
                .collect(),
            entities: (0..entities)
                .map(|i| EntityInfo {
                    kind: EntityInfoKind::Robot,
                    entity_id: i as u32,
                    position: [1.0; 3],
                    rotation: [0.0; 3],
                })
                .collect(),
        }
    }

    #[test]
    fn split_parts_fit_and_reassemble() {
        for (bodies, entities, max) in [
            (17, 2, 1024),
            (3, 1, 1024),
            (200, 50, 4096),
            (1, 0, 1024),
            (0, 3, 1024),
        ] {
            let b = sample(bodies, entities);
            let parts = split_broadcast(&b, max);
            let mut whole = Broadcast {
                iteration: 7,
                ..Broadcast::default()
            };
            let n = parts.len() as u32;
            for (i, p) in parts.iter().enumerate() {
                assert!(p.len() <= max || n == 1 || bodies + entities == n as usize);
                let ServerMessage::Broadcast(d) = decode_server_message(p).unwrap() else {
                    panic!("not a broadcast");
                };
                assert_eq!(d.iteration, 7);
                if n > 1 {
                    assert_eq!(d.part, Some((i as u32 + 1, n)));
                }
                whole.bodies.extend(d.bodies);
                whole.entities.extend(d.entities);
            }
            assert_eq!(whole.bodies, b.bodies);
            assert_eq!(whole.entities, b.entities);
        }
    }
}

#[cfg(test)]
mod timing_tests {
    //! The core driven with made-up instants: pacing, lockstep and auto-adjust without
    //! sockets or sleeping.
    use super::*;
    use crate::simrob::files::DirStore;

    fn server(tweak: impl FnOnce(&mut ServerConfig)) -> SimServer {
        let dir = std::env::temp_dir().join(format!("simrob-core-timing-{}", std::process::id()));
        let mut config = ServerConfig::default();
        tweak(&mut config);
        let mut s = SimServer::new(config, Box::new(DirStore::new(dir).unwrap()));
        for file in ["materials.xml", "ball.xml"] {
            let path = format!("{}/../../scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
            let requests: Vec<Request> =
                decode_datagram(&std::fs::read(path).unwrap(), &s.config.keys.clone())
                    .into_iter()
                    .map(|r| r.unwrap())
                    .collect();
            s.apply_local(&requests).unwrap();
        }
        s
    }

    fn agent(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn send(s: &mut SimServer, from: SocketAddr, xml: &str, now: Instant) {
        s.handle_datagram(from, xml.as_bytes(), now);
        while s.poll_transmit().is_some() {}
    }

    fn register(s: &mut SimServer, port: u16, sync: bool, now: Instant) {
        let xml = format!(
            "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"RobotController\"><Port>{port}</Port><IP>127.0.0.1</IP><Sync>{sync}</Sync><Broadcast>0</Broadcast><Key>a{port}</Key></Agent_Message></Message>"
        );
        send(s, agent(port), &xml, now);
    }

    const INIT: &str = "<Message><Simulation_Message><Control_Request Command=\"Initialize_Simulation\"/></Simulation_Message></Message>";

    #[test]
    fn nothing_runs_before_initialize() {
        let mut s = server(|_| {});
        let t0 = Instant::now();
        assert_eq!(s.poll_timeout(t0), None);
        assert!(!s.handle_timeout(t0));
        send(&mut s, agent(9000), INIT, t0);
        assert_eq!(s.poll_timeout(t0), Some(t0));
        assert!(s.handle_timeout(t0));
    }

    #[test]
    fn real_time_factor_paces_iterations() {
        let mut s = server(|c| c.real_time_factor = 2.0);
        let t0 = Instant::now();
        send(&mut s, agent(9000), INIT, t0);
        assert!(s.handle_timeout(t0));
        // dt 0.01 s at twice real time: the next iteration is due 5 ms later.
        let due = s.poll_timeout(t0).unwrap();
        assert_eq!(due - t0, Duration::from_millis(5));
        assert!(!s.handle_timeout(t0 + Duration::from_millis(4)));
        assert!(s.handle_timeout(due));
    }

    #[test]
    fn lockstep_waits_for_every_synchronous_agent_or_sync_wait() {
        let mut s = server(|c| c.world.sync_wait = 0.5);
        let t0 = Instant::now();
        register(&mut s, 9001, true, t0);
        register(&mut s, 9002, true, t0);
        send(&mut s, agent(9001), "<Message><Simulation_Message><Control_Request Command=\"Set_Sync_Mode\"><Sync_Mode>true</Sync_Mode></Control_Request></Simulation_Message></Message>", t0);
        send(&mut s, agent(9001), INIT, t0);
        assert!(s.handle_timeout(t0));
        let sent: Vec<_> = std::iter::from_fn(|| s.poll_transmit())
            .map(|t| t.to)
            .collect();
        assert_eq!(sent, vec![agent(9001), agent(9002)]);
        // Waiting: due at the Sync_Wait deadline.
        assert_eq!(s.poll_timeout(t0), Some(t0 + Duration::from_millis(500)));
        assert!(!s.handle_timeout(t0 + Duration::from_millis(100)));
        let sync = |k: u16| {
            format!("<Message><Agent_Message Command=\"Synchronize\"><Key>a{k}</Key><Iteration>1</Iteration></Agent_Message></Message>")
        };
        send(&mut s, agent(9001), &sync(9001), t0);
        assert!(
            !s.handle_timeout(t0 + Duration::from_millis(100)),
            "one agent still missing"
        );
        send(&mut s, agent(9002), &sync(9002), t0);
        let t1 = t0 + Duration::from_millis(101);
        assert_eq!(
            s.poll_timeout(t1),
            Some(t1),
            "all synchronized: go on at once"
        );
        assert!(s.handle_timeout(t1));
        // Nobody answers iteration 2: the server goes on at the deadline.
        while s.poll_transmit().is_some() {}
        assert!(!s.handle_timeout(t1 + Duration::from_millis(499)));
        assert!(s.handle_timeout(t1 + Duration::from_millis(500)));
        assert_eq!(s.world().iteration(), 3);
    }

    #[test]
    fn auto_adjust_adds_steps_when_behind_real_time() {
        let mut s = server(|_| {});
        let t0 = Instant::now();
        send(&mut s, agent(9000), INIT, t0);
        send(&mut s, agent(9000), "<Message><Simulation_Message><Control_Request Command=\"Set_AutoAdjust_Mode\"><AutoAdjust_Mode>true</AutoAdjust_Mode></Control_Request></Simulation_Message></Message>", t0);
        // A slow machine: an iteration can only run every 30 ms of wall time, for 10 ms of
        // simulated time.
        let mut now = t0;
        for _ in 0..200 {
            now += Duration::from_millis(30);
            s.handle_timeout(now);
        }
        assert!(
            s.world().modes().steps_per_iteration >= 2,
            "{:?}",
            s.world().modes()
        );
    }
}
