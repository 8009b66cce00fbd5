//! A SimRob agent over UDP, as the SimRob manual describes it: register, send any request, receive typed responses and
//! broadcasts, and run in lockstep with the server. A registered agent unregisters when it is
//! dropped (`Unregister_Agent`, a simrob extension), so a controller run again against the
//! same server starts afresh.
//!
//! ```no_run
//! use simrob_client::agent::{Agent, AgentOptions};
//! use simrob_protocol::{ControlRequest, EntityId, EntityRequest, MotorCommand};
//!
//! # fn main() -> Result<(), simrob_client::agent::ClientError> {
//! let mut agent = Agent::connect("127.0.0.1:5005".parse().unwrap())?;
//! agent.register("driver", AgentOptions { sync: true, ..AgentOptions::default() })?;
//! agent.control(ControlRequest::SetSyncMode(true), false)?;
//! agent.control(ControlRequest::InitializeSimulation, false)?;
//! agent.lockstep(|broadcast, agent| {
//!     agent.entity(EntityRequest::RobotMotorControl {
//!         entity_id: EntityId(3),
//!         motors: vec![MotorCommand { wheel_joint_id: 0, value: 3.0 }],
//!     }, false)?;
//!     Ok(broadcast.iteration < 100) // keep going?
//! })?;
//! # Ok(()) }
//! ```

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use simrob_protocol::{
    decode_server_message, encode_request, AgentRequest, AgentType, Broadcast, CommandKeys,
    ControlRequest, DecodeError, EntityRequest, Request, Response, ServerMessage,
};

/// How long [`Agent::register`] and [`Agent::request`] wait for an answer by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// How often [`Agent::register`] sends its request again while no confirmation comes.
pub const REGISTER_RESEND: Duration = Duration::from_millis(500);

/// Messages an agent keeps at most (responses, agent information and broadcasts skipped
/// while waiting for a broadcast, a confirmation or an answer), for [`Agent::recv`]; the
/// broadcasts among them that came while a call waited are also for
/// [`Agent::next_broadcast`]. Past this the oldest message `next_broadcast` would not give
/// is dropped first (a response, agent information, a broadcast set aside), so a broadcast
/// the server waits on is not lost to unrelated messages; only when every kept message is
/// such a broadcast does the oldest of them go. Memory stays bounded either way.
pub const PENDING_MAX: usize = 1000;

/// What can go wrong for an agent.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The socket failed.
    #[error("network: {0}")]
    Io(#[from] io::Error),
    /// The server sent something that does not decode as a SimRob message.
    #[error("undecodable message from the server: {0}")]
    Decode(#[from] DecodeError),
    /// The server answered with an error (holds its text).
    #[error("the server answered with an error: {0}")]
    Server(String),
    /// No answer came within the time waited (held here).
    #[error("no answer from the server within {0:?}: the request or its answer was lost, or no server listens there")]
    Timeout(Duration),
    /// A request that needs the agent's key before it has registered.
    #[error("register first (the agent has no key)")]
    NotRegistered,
}

/// Registration options (SimRob manual §2.1).
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The agent type, which decides what broadcasts the server sends it.
    pub agent_type: AgentType,
    /// Synchronous agent: in synchronous mode the server waits for its Synchronize.
    pub sync: bool,
    /// Broadcast interval in simulated seconds; −1 = never, 0 = every iteration.
    pub broadcast: f64,
}

impl Default for AgentOptions {
    fn default() -> Self {
        AgentOptions {
            agent_type: AgentType::RobotController,
            sync: false,
            broadcast: 0.0,
        }
    }
}

/// A part of an iteration at most this much older than the last split broadcast put together
/// is a late one and dropped; an older one starts a new assembly (the world was started
/// again).
const STALE_PARTS: u64 = 64;

/// Split broadcasts put together at once (their parts cross on a jittery link).
const ASSEMBLIES: usize = 4;

/// A message skipped by a wait, kept for [`Agent::recv`].
#[derive(Debug)]
struct Kept {
    message: ServerMessage,
    /// A broadcast [`Agent::next_broadcast`] gives too (one that came before a Load's or
    /// step or sync mode's confirmation is for `recv` only).
    for_next: bool,
}

/// A broadcast split over several datagrams, being put back together.
#[derive(Debug)]
struct Assembly {
    iteration: u64,
    parts: Vec<Option<Broadcast>>,
}

/// One agent: a UDP socket talking to one server.
///
/// The server sends a confirmation to every registered agent, and an error to the sender
/// only. So [`Agent::request`] waits for a confirmation that can be its own: the same command
/// and, where the server's text names them, the same entity, materials or file
/// (`Robot_Motor_Control: Motors of robot 3 set` answers a motor command for robot 3, not
/// robot 4); other agents' confirmations are kept for [`Agent::recv`]. The protocol carries
/// no request number, so two agents sending the same command for the same entity at about
/// the same time cannot be told apart: each may take the other's confirmation (and a set
/// command's value is not compared). Any error the server sends this agent ends the wait,
/// even one for an earlier request sent without asking for a confirmation. At most
/// [`PENDING_MAX`] skipped messages are kept for [`Agent::recv`]; past that the oldest one
/// [`Agent::next_broadcast`] would not give goes first.
pub struct Agent {
    socket: UdpSocket,
    server: SocketAddr,
    keys: CommandKeys,
    key: Option<String>,
    buf: Vec<u8>,
    pending: VecDeque<Kept>,
    assembly: Vec<Assembly>,
    /// The iteration of the last split broadcast put together.
    assembled: Option<u64>,
    /// A Load was confirmed (see [`Agent::take_rewound`]).
    rewound: bool,
}

impl Agent {
    /// A socket on the interface that reaches `server` (loopback for a local server), any port.
    pub fn connect(server: SocketAddr) -> Result<Agent, ClientError> {
        let local: SocketAddr = if server.ip().is_loopback() {
            if server.is_ipv4() {
                "127.0.0.1:0"
            } else {
                "[::1]:0"
            }
        } else if server.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        }
        .parse()
        .map_err(|_| io::Error::other("bad local address"))?;
        let socket = UdpSocket::bind(local)?;
        Ok(Agent {
            socket,
            server,
            keys: CommandKeys::default(),
            key: None,
            buf: vec![0u8; 65536],
            pending: VecDeque::new(),
            assembly: Vec::new(),
            assembled: None,
            rewound: false,
        })
    }

    /// Uses configured command names (when the server's configuration renames commands).
    pub fn with_keys(mut self, keys: CommandKeys) -> Self {
        self.keys = keys;
        self
    }

    /// The local address the server sends to.
    pub fn local_addr(&self) -> Result<SocketAddr, ClientError> {
        let mut a = self.socket.local_addr()?;
        if a.ip().is_unspecified() {
            // Learn the interface address used towards the server.
            let probe = UdpSocket::bind(if a.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" })?;
            probe.connect(self.server)?;
            a.set_ip(probe.local_addr()?.ip());
        }
        Ok(a)
    }

    /// The server's address.
    pub fn server(&self) -> SocketAddr {
        self.server
    }
    /// The key it registered with; `None` before it registers.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// Sends one request.
    pub fn send(&self, request: &Request) -> Result<(), ClientError> {
        self.send_raw(encode_request(request, &self.keys).as_bytes())
    }

    /// Sends raw bytes as one datagram (any XML, even several messages).
    pub fn send_raw(&self, datagram: &[u8]) -> Result<(), ClientError> {
        self.socket.send_to(datagram, self.server)?;
        Ok(())
    }

    /// Sends a control request; `confirm` asks for a confirmation response.
    pub fn control(&self, request: ControlRequest, confirm: bool) -> Result<(), ClientError> {
        self.send(&Request::Control {
            request,
            response: Some(confirm),
        })
    }

    /// Sends an entity request; `confirm` asks for a confirmation response.
    pub fn entity(&self, request: EntityRequest, confirm: bool) -> Result<(), ClientError> {
        self.send(&Request::Entity {
            request,
            response: Some(confirm),
        })
    }

    /// Sends `request` asking for a confirmation and waits for the response: its confirmation
    /// text (one of this command, naming the same entity, materials or file where the
    /// server's text names them; see [`Agent`]), or [`ClientError::Server`] with the error.
    /// Broadcasts and other agents' confirmations that arrive meanwhile are kept for
    /// [`Agent::recv`]. A lost request or confirmation gives
    /// [`ClientError::Timeout`] after `timeout`; the request is not sent again (whether the
    /// server applied it is not known, and `Make_Step`, `Initialize_Simulation` or a motor
    /// command must not be applied twice): the caller decides.
    pub fn request(&mut self, request: Request, timeout: Duration) -> Result<String, ClientError> {
        let request = match request {
            Request::Control { request, .. } => Request::Control {
                request,
                response: Some(true),
            },
            Request::Entity { request, .. } => Request::Entity {
                request,
                response: Some(true),
            },
            other => other,
        };
        self.send(&request)?;
        let expected = Expected::of(&request, &self.keys);
        self.wait_response(timeout, |t| expected.matches(t))
    }

    /// Registers this agent under `key`, announcing its own address, and waits for the
    /// server's confirmation. Registering is safe to repeat (the same key from the same
    /// address changes nothing), so over a lossy link the request is sent again every
    /// [`REGISTER_RESEND`] until confirmed, for at most [`DEFAULT_TIMEOUT`] in all; then
    /// [`ClientError::Timeout`].
    pub fn register(&mut self, key: &str, options: AgentOptions) -> Result<String, ClientError> {
        let addr = self.local_addr()?;
        let request = Request::Agent(AgentRequest::RegisterAgent {
            agent_type: options.agent_type,
            port: addr.port(),
            ip: addr.ip().to_string(),
            sync: options.sync,
            broadcast: options.broadcast,
            key: key.to_string(),
        });
        // Its own confirmation, not another agent's removal naming the same key.
        let expected = Expected::of(&request, &self.keys);
        let deadline = Instant::now() + DEFAULT_TIMEOUT;
        loop {
            self.send(&request)?;
            let left = deadline.saturating_duration_since(Instant::now());
            match self.wait_response(left.min(REGISTER_RESEND), |t| expected.matches(t)) {
                Ok(text) => {
                    self.key = Some(key.to_string());
                    return Ok(text);
                }
                Err(ClientError::Timeout(_)) if Instant::now() < deadline => continue,
                Err(ClientError::Timeout(_)) => return Err(ClientError::Timeout(DEFAULT_TIMEOUT)),
                Err(e) => return Err(e),
            }
        }
    }

    /// Asks the server where agent `requested` is.
    pub fn info(&mut self, requested: &str) -> Result<(String, u16, String), ClientError> {
        let requester = self.key.clone().ok_or(ClientError::NotRegistered)?;
        self.send(&Request::Agent(AgentRequest::InfoRequest {
            requester,
            requested: requested.to_string(),
        }))?;
        let deadline = Instant::now() + DEFAULT_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv_direct(left)? {
                Some(ServerMessage::Response(Response::AgentInformation { key, port, ip })) => {
                    return Ok((key, port, ip))
                }
                Some(ServerMessage::Response(Response::Text(t))) if t.starts_with("Error: ") => {
                    return Err(ClientError::Server(t))
                }
                Some(other) => self.keep(other),
                None => return Err(ClientError::Timeout(DEFAULT_TIMEOUT)),
            }
        }
    }

    /// Unregisters this agent (`Unregister_Agent`, a simrob extension) and waits for the
    /// server's confirmation: the server sends it nothing more and no longer waits for it
    /// in lockstep. Dropping a registered agent sends the request without waiting.
    pub fn unregister(&mut self) -> Result<String, ClientError> {
        let key = self.key.clone().ok_or(ClientError::NotRegistered)?;
        let request = Request::Agent(AgentRequest::UnregisterAgent { key });
        self.send(&request)?;
        let expected = Expected::of(&request, &self.keys);
        let text = self.wait_response(DEFAULT_TIMEOUT, |t| expected.matches(t))?;
        self.key = None;
        Ok(text)
    }

    /// Forgets the registration without telling the server (nothing is sent when the agent
    /// is dropped): the server notices the closed port or the silence instead.
    pub fn forget(&mut self) {
        self.key = None;
    }

    /// Tells the server this agent finished `iteration`.
    pub fn synchronize(&self, iteration: u64) -> Result<(), ClientError> {
        let key = self.key.clone().ok_or(ClientError::NotRegistered)?;
        self.send(&Request::Agent(AgentRequest::Synchronize {
            key,
            iteration,
        }))
    }

    fn wait_response(
        &mut self,
        timeout: Duration,
        accept: impl Fn(&str) -> bool,
    ) -> Result<String, ClientError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv_direct(left)? {
                Some(ServerMessage::Response(Response::Text(t))) if !is_divergence(&t) => {
                    if let Some(e) = t.strip_prefix("Error: ") {
                        return Err(ClientError::Server(e.to_string()));
                    }
                    if accept(&t) {
                        return Ok(t);
                    }
                    self.keep(ServerMessage::Response(Response::Text(t)));
                }
                Some(other) => self.keep(other),
                None => return Err(ClientError::Timeout(timeout)),
            }
        }
    }

    /// Keeps `m` for [`Agent::recv`] (and a broadcast for [`Agent::next_broadcast`]): at most
    /// [`PENDING_MAX`], the oldest one `next_broadcast` would not give dropped first.
    fn keep(&mut self, m: ServerMessage) {
        if self.pending.len() >= PENDING_MAX {
            // A broadcast the server may be waiting on outlasts unrelated messages.
            let at = self.pending.iter().position(|k| !k.for_next).unwrap_or(0);
            self.pending.remove(at);
        }
        let for_next = matches!(m, ServerMessage::Broadcast(_));
        self.pending.push_back(Kept {
            message: m,
            for_next,
        });
    }

    /// How many messages are kept for [`Agent::recv`] (at most [`PENDING_MAX`]).
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// The next message from the server (responses and complete broadcasts), waiting at most
    /// `timeout`; `None` on time-out. Messages skipped by [`Agent::next_broadcast`] and by a
    /// wait for a confirmation come first (at most [`PENDING_MAX`] of them, see there; a
    /// broadcast given here is not given by [`Agent::next_broadcast`] too). Split broadcasts
    /// are reassembled (a few iterations at a time, as parts cross on a jittery link) and
    /// delivered whole or not at all: one with a part lost is dropped when a newer one
    /// completes, and never goes out half.
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<ServerMessage>, ClientError> {
        if let Some(k) = self.pending.pop_front() {
            return Ok(Some(k.message));
        }
        self.recv_direct(timeout)
    }

    fn recv_direct(&mut self, timeout: Duration) -> Result<Option<ServerMessage>, ClientError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.socket.set_read_timeout(Some(left))?;
            let n = match self.socket.recv_from(&mut self.buf) {
                Ok((n, from)) if from == self.server => n,
                Ok(_) => continue, // not from our server
                // A signal arrived while waiting (a child process ended, say): wait on.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return Ok(None)
                }
                Err(e) => return Err(e.into()),
            };
            let message = decode_server_message(&self.buf[..n])?;
            if let ServerMessage::Response(Response::Text(t)) = &message {
                self.note_response(t);
            }
            match message {
                ServerMessage::Broadcast(b) => {
                    if let Some(whole) = self.assemble(b) {
                        return Ok(Some(ServerMessage::Broadcast(whole)));
                    }
                }
                other => return Ok(Some(other)),
            }
        }
    }

    fn note_response(&mut self, text: &str) {
        if is_load_confirmation(text) {
            // A Load winds the iterations back: the next broadcasts repeat iteration numbers
            // already delivered, and must be put together (and answered) again.
            self.assembly.clear();
            self.assembled = None;
            self.rewound = true;
            // Broadcasts kept from before it are of iterations the Load undid.
            self.set_kept_broadcasts_aside();
        } else if is_mode_confirmation(text) {
            // Broadcasts kept from before step or sync mode came are not waited on (the
            // world ran freely): next_broadcast gives a Make_Step's, or the one to answer.
            self.set_kept_broadcasts_aside();
        }
    }

    /// The broadcasts kept so far are left for [`Agent::recv`] only.
    fn set_kept_broadcasts_aside(&mut self) {
        for k in &mut self.pending {
            k.for_next = false;
        }
    }

    /// Whether a Load was confirmed since the last call: the iterations went back to the
    /// saved one, so a controller that skips broadcasts of iterations it already answered
    /// answers them again.
    pub fn take_rewound(&mut self) -> bool {
        std::mem::take(&mut self.rewound)
    }

    fn assemble(&mut self, b: Broadcast) -> Option<Broadcast> {
        let Some((index, count)) = b.part else {
            return Some(b);
        };
        // Parts of an iteration already delivered (late, duplicated) are dropped; far older
        // ones mean the world was started again.
        if let Some(done) = self.assembled {
            if b.iteration <= done && done - b.iteration <= STALE_PARTS {
                return None;
            }
        }
        let at = match self
            .assembly
            .iter()
            .position(|a| a.iteration == b.iteration && a.parts.len() == count as usize)
        {
            Some(at) => at,
            None => {
                // Parts of several iterations may cross on a jittery link: a few are put
                // together at once, the oldest dropped past ASSEMBLIES.
                self.assembly.retain(|a| a.iteration != b.iteration);
                if self.assembly.len() >= ASSEMBLIES {
                    if let Some(oldest) =
                        (0..self.assembly.len()).min_by_key(|&i| self.assembly[i].iteration)
                    {
                        self.assembly.remove(oldest);
                    }
                }
                self.assembly.push(Assembly {
                    iteration: b.iteration,
                    parts: vec![None; count as usize],
                });
                self.assembly.len() - 1
            }
        };
        let a = &mut self.assembly[at];
        let slot = a.parts.get_mut((index as usize).checked_sub(1)?)?;
        *slot = Some(b);
        if !a.parts.iter().all(Option::is_some) {
            return None;
        }
        let done = self.assembly.remove(at);
        // Older incomplete ones can no longer be delivered in order: dropped whole.
        self.assembly.retain(|a| a.iteration > done.iteration);
        self.assembled = Some(done.iteration);
        let mut whole = Broadcast {
            iteration: done.iteration,
            part: None,
            bodies: Vec::new(),
            entities: Vec::new(),
        };
        for p in done.parts.into_iter().flatten() {
            whole.bodies.extend(p.bodies);
            whole.entities.extend(p.entities);
        }
        Some(whole)
    }

    /// The next complete broadcast, skipping responses (kept for [`Agent::recv`], at most
    /// [`PENDING_MAX`] messages in all, a lockstep loop that never calls `recv` does not grow;
    /// past that the oldest response goes, never before a broadcast kept for this call);
    /// `None` on time-out. Broadcasts that came while another
    /// call waited for a confirmation or an answer come first, in order, each once (one
    /// [`Agent::recv`] gave is not given again), so a lockstep controller may send confirmed
    /// requests between a broadcast and its Synchronize, and after it. Those that came before
    /// the confirmation of step mode, sync mode (`Step mode set to true`, `Sync mode set to
    /// true`) or a `Load` are left for `recv`: the next one is then a `Make_Step`'s, one the
    /// server waits to be synchronized, or the loaded world's. After a `Load`'s confirmation ([`Agent::take_rewound`]), iterations already
    /// delivered come again and are delivered again.
    pub fn next_broadcast(&mut self, timeout: Duration) -> Result<Option<Broadcast>, ClientError> {
        if let Some(at) = self.pending.iter().position(|k| k.for_next) {
            if let Some(Kept {
                message: ServerMessage::Broadcast(b),
                ..
            }) = self.pending.remove(at)
            {
                return Ok(Some(b));
            }
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv_direct(left)? {
                Some(ServerMessage::Broadcast(b)) => return Ok(Some(b)),
                Some(other) => self.keep(other),
                None => return Ok(None),
            }
        }
    }

    /// Lockstep: wait for each broadcast, call `act`, then Synchronize with its iteration (a
    /// duplicate of the broadcast just answered is skipped).
    /// Stops when `act` returns `Ok(false)` or no broadcast comes for 5 s.
    pub fn lockstep(
        &mut self,
        mut act: impl FnMut(&Broadcast, &mut Agent) -> Result<bool, ClientError>,
    ) -> Result<u64, ClientError> {
        let mut last = 0;
        let mut answered = None;
        loop {
            let Some(b) = self.next_broadcast(Duration::from_secs(5))? else {
                return Err(ClientError::Timeout(Duration::from_secs(5)));
            };
            if std::mem::take(&mut self.rewound) {
                answered = None; // a Load: iterations already answered come again
            }
            if answered == Some(b.iteration) {
                continue; // a duplicate (a lossy link): acted on already
            }
            answered = Some(b.iteration);
            let go_on = act(&b, self)?;
            self.synchronize(b.iteration)?;
            last = last.max(b.iteration);
            if !go_on {
                return Ok(last);
            }
        }
    }
}

impl Drop for Agent {
    /// A registered agent tells the server it stops (`Unregister_Agent`, without waiting
    /// for the confirmation), so that the server no longer sends to it or waits for it.
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let _ = self.send(&Request::Agent(AgentRequest::UnregisterAgent { key }));
        }
    }
}

/// Whether `text` is the error the server sends every agent when the physics diverged on an
/// entity: not the answer to any request.
fn is_divergence(text: &str) -> bool {
    text.strip_prefix("Error: entity ")
        .is_some_and(|t| t.contains(": the physics gave it a non-finite "))
}

/// What a confirmation of one request looks like: one of `starts` (`Command: ` and the text
/// the server writes, as far as it names the request's entity, materials or file), the whole
/// text when `exact` (robot 3 is not robot 30), and `contains` somewhere after it.
struct Expected {
    starts: Vec<String>,
    exact: bool,
    contains: Option<String>,
}

impl Expected {
    fn of(request: &Request, keys: &CommandKeys) -> Expected {
        let command = request.command(keys);
        let one = |s: String| vec![format!("{command}: {s}")];
        let mut contains = None;
        let exact = matches!(
            request,
            Request::Control {
                request: ControlRequest::RegisterMaterialsInteractions { .. }
                    | ControlRequest::CreateEntity(_),
                ..
            } | Request::Entity {
                request: EntityRequest::RobotMotorControl { .. },
                ..
            }
        );
        let starts = match request {
            Request::Control { request, .. } => match request {
                ControlRequest::RegisterMaterialsInteractions {
                    materials,
                    interactions,
                } => one(format!(
                    "Registered {} materials and {} interactions",
                    materials.len(),
                    interactions.len()
                )),
                ControlRequest::CreateEntity(spec) => one(format!(
                    "Created {} entity {}",
                    spec.type_name(),
                    spec.entity_id()
                )),
                ControlRequest::Save(path) => {
                    contains = std::path::Path::new(path)
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned());
                    one("simulation saved to ".into())
                }
                ControlRequest::Load(path) => {
                    one(format!("simulation loaded from {path} at iteration "))
                }
                ControlRequest::SetRollingResistance {
                    material_1,
                    material_2,
                    ..
                } => one(format!(
                    "Rolling resistance of materials {material_1} and {material_2} set to "
                )),
                _ => one(String::new()),
            },
            Request::Entity { request, .. } => match request {
                EntityRequest::SetEntityPosition { entity_id, .. } => vec![
                    format!("{command}: Entity {entity_id} moved to "),
                    format!("{command}: Humanoid {entity_id} placed at "),
                ],
                EntityRequest::RobotMotorControl { entity_id, .. } => {
                    one(format!("Motors of robot {entity_id} set"))
                }
                EntityRequest::HumanoidAction { entity_id, .. } => {
                    one(format!("robot {entity_id}: "))
                }
            },
            Request::Agent(AgentRequest::RegisterAgent { key, .. }) => {
                vec![format!("Sucessfully added agent with key {key},")]
            }
            Request::Agent(AgentRequest::UnregisterAgent { key }) => {
                vec![format!("Removed agent with key {key},")]
            }
            Request::Agent(_) => vec![format!("{command}: ")],
        };
        Expected {
            starts,
            exact,
            contains,
        }
    }

    fn matches(&self, text: &str) -> bool {
        self.starts.iter().any(|s| {
            let hit = if self.exact {
                text == s
            } else {
                text.starts_with(s.as_str())
            };
            hit && self
                .contains
                .as_ref()
                .is_none_or(|c| text[s.len()..].contains(c.as_str()))
        })
    }
}

/// Whether `text` confirms step or sync mode (whatever the command is called): `…: Step
/// mode set to true`, `…: Sync mode set to true`.
fn is_mode_confirmation(text: &str) -> bool {
    !text.starts_with("Error: ")
        && text.split_once(": ").is_some_and(|(command, rest)| {
            !command.contains(':')
                && matches!(rest, "Step mode set to true" | "Sync mode set to true")
        })
}

/// Whether `text` confirms a Load (whatever the command is called): `…: simulation loaded
/// from FILE at iteration N`.
fn is_load_confirmation(text: &str) -> bool {
    !text.starts_with("Error: ")
        && text.contains(": simulation loaded from ")
        && text
            .rsplit_once(" at iteration ")
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(iteration: u64, index: u32) -> Broadcast {
        Broadcast {
            iteration,
            part: Some((index, 2)),
            bodies: Vec::new(),
            entities: Vec::new(),
        }
    }

    fn whole(iteration: u64) -> ServerMessage {
        ServerMessage::Broadcast(Broadcast {
            iteration,
            part: None,
            bodies: Vec::new(),
            entities: Vec::new(),
        })
    }

    fn text(t: &str) -> ServerMessage {
        ServerMessage::Response(Response::Text(t.to_string()))
    }

    /// A server on loopback that answers each datagram it receives with the next of
    /// `script`, in order.
    fn scripted_server(
        script: Vec<Vec<ServerMessage>>,
    ) -> (SocketAddr, std::thread::JoinHandle<()>) {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("server socket");
        socket
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("server timeout");
        let addr = socket.local_addr().expect("server address");
        let handle = std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            for answers in script {
                let Ok((_, agent)) = socket.recv_from(&mut buf) else {
                    return;
                };
                for m in &answers {
                    let datagram = simrob_protocol::encode_server_message(m);
                    socket.send_to(datagram.as_bytes(), agent).expect("send");
                }
            }
        });
        (addr, handle)
    }

    fn iteration(m: Option<ServerMessage>) -> Option<u64> {
        match m {
            Some(ServerMessage::Broadcast(b)) => Some(b.iteration),
            _ => None,
        }
    }

    #[test]
    fn a_broadcast_that_came_while_a_call_waited_is_the_next_one_next_broadcast_gives() {
        let motors = || Request::Entity {
            request: EntityRequest::RobotMotorControl {
                entity_id: simrob_protocol::EntityId(3),
                motors: Vec::new(),
            },
            response: Some(true),
        };
        let set = "Robot_Motor_Control: Motors of robot 3 set";
        let (server, handle) = scripted_server(vec![
            // Each broadcast comes before the confirmation or answer the call waits for.
            vec![
                whole(1),
                text("Sucessfully added agent with key k, at 127.0.0.1:1"),
            ],
            vec![whole(2), text(set)],
            vec![
                whole(3),
                ServerMessage::Response(Response::AgentInformation {
                    key: "k".into(),
                    port: 1,
                    ip: "127.0.0.1".into(),
                }),
            ],
            // recv takes this one: next_broadcast does not give it again.
            vec![whole(4), text(set)],
            // Broadcasts from before sync mode, step mode or a Load are for recv only.
            vec![
                whole(5),
                text("Set_Sync_Mode: Sync mode set to true"),
                whole(6),
            ],
            vec![whole(7), text("Set_Step_Mode: Step mode set to true")],
            vec![
                whole(8),
                text("Load: simulation loaded from s.xml at iteration 2"),
                whole(3),
            ],
        ]);
        let mut agent = Agent::connect(server).expect("agent");
        agent
            .register("k", AgentOptions::default())
            .expect("register");
        agent.request(motors(), DEFAULT_TIMEOUT).expect("motors");
        assert_eq!(agent.info("k").expect("info").0, "k");
        // Far less than a Sync_Wait: a broadcast set aside for recv fails here.
        let long = Duration::from_secs(5);
        for expected in 1..=3 {
            let b = agent.next_broadcast(long).expect("next_broadcast");
            assert_eq!(b.map(|b| b.iteration), Some(expected));
        }
        assert!(agent
            .next_broadcast(Duration::ZERO)
            .expect("none")
            .is_none());
        assert_eq!(agent.pending(), 0, "each broadcast delivered once");

        agent.request(motors(), DEFAULT_TIMEOUT).expect("motors");
        assert_eq!(
            iteration(agent.recv(Duration::ZERO).expect("recv")),
            Some(4)
        );
        assert!(agent
            .next_broadcast(Duration::ZERO)
            .expect("none")
            .is_none());

        let sync = Request::Control {
            request: ControlRequest::SetSyncMode(true),
            response: Some(true),
        };
        agent.request(sync, DEFAULT_TIMEOUT).expect("sync mode");
        let b = agent.next_broadcast(long).expect("next_broadcast");
        assert_eq!(b.map(|b| b.iteration), Some(6));
        let step = Request::Control {
            request: ControlRequest::SetStepMode(true),
            response: Some(true),
        };
        agent.request(step, DEFAULT_TIMEOUT).expect("step mode");
        assert!(agent
            .next_broadcast(Duration::ZERO)
            .expect("none")
            .is_none());
        let load = Request::Control {
            request: ControlRequest::Load("s.xml".into()),
            response: Some(true),
        };
        agent.request(load, DEFAULT_TIMEOUT).expect("load");
        let b = agent.next_broadcast(long).expect("next_broadcast");
        assert_eq!(b.map(|b| b.iteration), Some(3));
        // The ones set aside are still there for recv, in order.
        let kept: Vec<_> = (0..3)
            .map(|_| iteration(agent.recv(Duration::ZERO).expect("recv")))
            .collect();
        assert_eq!(kept, [Some(5), Some(7), Some(8)]);
        agent.forget();
        handle.join().expect("server thread");
    }

    #[test]
    fn a_kept_broadcast_outlasts_a_full_buffer_of_other_agents_confirmations() {
        const BURST: usize = 50;
        const REQUESTS: usize = PENDING_MAX / BURST + 2;
        let motors = || Request::Entity {
            request: EntityRequest::RobotMotorControl {
                entity_id: simrob_protocol::EntityId(3),
                motors: Vec::new(),
            },
            response: Some(true),
        };
        let other = |n: usize| {
            text(&format!(
                "Set_Entity_Position: Entity 8 moved to ({n}, 0, 0)"
            ))
        };
        let set = "Robot_Motor_Control: Motors of robot 3 set";
        // Twice: the broadcast the server waits on comes first, then more than PENDING_MAX
        // classmates' confirmations (in bursts a loopback socket holds) while the agent waits
        // for its own.
        let mut script = Vec::new();
        for _ in 0..2 {
            script.push(vec![text(
                "Sucessfully added agent with key k, at 127.0.0.1:1",
            )]);
            for r in 0..REQUESTS {
                let mut answers = if r == 0 { vec![whole(1)] } else { Vec::new() };
                answers.extend((0..BURST).map(|i| other(r * BURST + i)));
                answers.push(text(set));
                script.push(answers);
            }
        }
        let (server, handle) = scripted_server(script);
        let others = REQUESTS * BURST;
        for drain_with_recv in [false, true] {
            let mut agent = Agent::connect(server).expect("agent");
            agent
                .register("k", AgentOptions::default())
                .expect("register");
            for _ in 0..REQUESTS {
                agent.request(motors(), DEFAULT_TIMEOUT).expect("motors");
            }
            assert_eq!(agent.pending(), PENDING_MAX);
            let mut texts = Vec::new();
            if drain_with_recv {
                // recv gives the broadcast first: it is the oldest kept.
                assert_eq!(
                    iteration(agent.recv(Duration::ZERO).expect("recv")),
                    Some(1)
                );
            } else {
                let b = agent.next_broadcast(Duration::ZERO).expect("kept");
                assert_eq!(b.map(|b| b.iteration), Some(1));
            }
            while let Some(m) = agent.recv(Duration::ZERO).expect("recv") {
                match m {
                    ServerMessage::Response(Response::Text(t)) => texts.push(t),
                    other => panic!("expected a confirmation, got {other:?}"),
                }
            }
            // The latest of the others, the oldest dropped.
            let latest: Vec<String> = (others + 1 - PENDING_MAX..others)
                .map(|n| format!("Set_Entity_Position: Entity 8 moved to ({n}, 0, 0)"))
                .collect();
            assert_eq!(texts, latest);
            agent.forget();
        }
        handle.join().expect("server thread");
    }

    #[test]
    fn after_a_load_split_broadcasts_of_iterations_already_delivered_are_delivered_again() {
        let mut agent = Agent::connect("127.0.0.1:9".parse().expect("address")).expect("socket");
        assert!(agent.assemble(part(30, 1)).is_none());
        assert_eq!(agent.assemble(part(30, 2)).map(|b| b.iteration), Some(30));
        // Without a Load, parts of an iteration already delivered are late: dropped.
        assert!(agent.assemble(part(21, 1)).is_none());
        assert!(agent.assemble(part(21, 2)).is_none());
        assert!(!agent.take_rewound());
        agent.note_response("Error: Load: simulation loaded from a at iteration 20");
        agent.note_response("Load: simulation loaded from s.xml at iteration 20");
        assert!(agent.take_rewound());
        assert!(!agent.take_rewound());
        assert!(agent.assemble(part(21, 1)).is_none());
        assert_eq!(agent.assemble(part(21, 2)).map(|b| b.iteration), Some(21));
        assert!(is_load_confirmation(
            "Charger: simulation loaded from x at iteration 7"
        ));
        assert!(!is_load_confirmation("Save: simulation saved to x"));
    }
}
