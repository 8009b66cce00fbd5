//! The SimRob session as a sans-IO state machine.
//!
//! [`Session`] owns the [`World`], the agents, lockstep, pacing and auto-adjust. The shell
//! feeds it datagrams ([`Session::handle_datagram`]), local commands
//! ([`Session::handle_command`]), the time ([`Session::handle_timeout`]) and the outcome of
//! file work it asked for ([`Session::handle_file_result`]); it asks when it next needs the
//! time ([`Session::poll_timeout`]), sends what [`Session::poll_transmit`] hands back and acts
//! on [`Session::poll_event`]. No sockets, files, threads or clock inside: tests drive it
//! with any `Instant`s they like.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use simrob_protocol::{
    decode_datagram_with_depth, encode_broadcast, encode_response, server_sent_root, AgentRequest,
    Broadcast, Command, ControlRequest, DecodeError, DecodeErrorKind, EntityId, Request, Response,
};
use simrob_world::{
    default_save_key, session_flags_of, Advance, Applied, LoadOptions, SessionFlags, World,
    WorldError,
};

use crate::agents::{agent_seed, Agent, AgentFilter, AgentTable, Filter, FilterRegistry, View};
use crate::config::ServerConfig;
use crate::fast_request::InfoRequestForm;
use crate::limits::{Amplification, Refusal};
use crate::quote::quoted;
use crate::snapshot::{Snapshot, SnapshotModes};

/// A datagram to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Transmit {
    /// The address to send it to.
    pub to: SocketAddr,
    /// The datagram's bytes (one response or one part of a broadcast).
    pub payload: Vec<u8>,
}

/// Counters for monitoring and benchmarks.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Datagrams received.
    pub datagrams_in: u64,
    /// Datagrams handed out to send (those withheld by anti-amplification not counted).
    pub datagrams_out: u64,
    /// Requests handled, from datagrams and local commands.
    pub requests: u64,
    /// Error responses sent, including physics divergences reported.
    pub errors: u64,
    /// Iterations the world has run.
    pub iterations: u64,
    /// Broadcasts queued: one per agent per iteration that had something to send it.
    pub broadcasts: u64,
    /// Snapshots built (at most one per iteration, plus one per change seen while paused).
    pub snapshots: u64,
    /// Slices of iterations run (an iteration of more than `stepsperslice` physics steps
    /// runs in several).
    pub slices: u64,
    /// Times the physics diverged on an entity and it was put back at rest.
    pub diverged: u64,
    /// Datagrams dropped unanswered because they are what a server sends (a `<Response>`, a
    /// `<Broadcast>`, an error): another server's, or this one's sent back to it.
    pub dropped: u64,
    /// Lockstep waits that timed out: iterations run in sync mode after `Sync_Wait` passed
    /// without the `Synchronize` of every synchronous agent the last broadcast went to (logged
    /// at info the first time, naming the missing agents, then at most every
    /// [`SYNC_TIMEOUT_LOG_EVERY`]).
    pub sync_timeouts: u64,
}

/// How often, at most, timed-out lockstep waits after the first are logged at info (each one
/// is logged at debug); see [`Stats::sync_timeouts`].
pub const SYNC_TIMEOUT_LOG_EVERY: Duration = Duration::from_secs(10);

/// Agents named at most in a log line about a timed-out lockstep wait.
const MISSING_NAMED: usize = 8;

/// Identifies one file operation the session asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileTicket(u64);

/// How important a [`Event::Log`] line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Detail for whoever investigates, such as a datagram dropped unanswered.
    Debug,
    /// Ordinary news, such as an agent registering.
    Info,
    /// Something went wrong but the session goes on (a physics divergence, a view too large to send).
    Warn,
}

/// What the session tells its shell, besides datagrams.
#[derive(Debug, Clone)]
pub enum Event {
    /// An iteration ran: the world after it. One snapshot per iteration, shared by the
    /// broadcasts, the viewer and recorders. Emitted only while [`Session::set_observed`] is on.
    Iterated(Arc<Snapshot>),
    /// The world changed while it is not advancing (before `Initialize_Simulation`, paused):
    /// the world now. Only while observed.
    Changed(Arc<Snapshot>),
    /// Write `contents` to the save file `path`, then call [`Session::handle_file_result`]
    /// with the written file's name. Nothing else runs until then.
    SaveWanted {
        /// Hand this back with the result.
        ticket: FileTicket,
        /// The save file's path as the request named it.
        path: String,
        /// The text to write.
        contents: String,
    },
    /// Read the save file `path`, then call [`Session::handle_file_result`] with its
    /// contents. Nothing else runs until then.
    LoadWanted {
        /// Hand this back with the result.
        ticket: FileTicket,
        /// The save file's path as the request named it.
        path: String,
    },
    /// A response text for local observers: every confirmation agents receive, and the
    /// answer or error of a local command. Only while observed.
    Response(String),
    /// A line for the operator's log.
    Log {
        /// How important the line is.
        level: LogLevel,
        /// The line, without a trailing newline.
        message: String,
    },
}

/// A command from the process itself (the viewer, the command line), not from the network.
#[derive(Debug, Clone, PartialEq)]
pub enum LocalCommand {
    /// A control or entity request, applied as if an agent had sent it; confirmations go to
    /// every agent and to local observers.
    Request(Request),
    /// Simulated seconds per wall second in asynchronous mode (0 = as fast as possible).
    SetRealTimeFactor(f64),
}

/// `why`, starting with `command`'s name (once: a reason that already names it is kept as is).
fn named(command: &str, why: &impl std::fmt::Display) -> String {
    let why = why.to_string();
    if why.starts_with(command) {
        why
    } else {
        format!("{command}: {why}")
    }
}

/// Why a local command or a file operation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SessionError {
    /// The world refused the request (it is unchanged). Said once with its command's name:
    /// most of the world's reasons already start with it.
    #[error("{}", named(command, source))]
    Refused {
        /// The command, as the request named it.
        command: String,
        /// Why the world refused it.
        #[source]
        source: WorldError,
    },
    /// A save file could not be written or read.
    #[error("{command}: {message}")]
    File {
        /// The command (Save or Load), as the request named it.
        command: String,
        /// What went wrong with the file.
        message: String,
    },
    /// Agent messages come over the network.
    #[error("{0}: agent messages come from agents over the network, not from local commands")]
    AgentMessage(String),
    /// A real-time factor that is negative or not finite (holds it).
    #[error("the real-time factor must be a finite number >= 0, got {0}")]
    RealTimeFactor(f64),
    /// A file result for no pending file operation.
    #[error("no file operation is waiting for this result")]
    NoSuchTicket,
    /// The sender may not do this, or the request is past a limit (see [`crate::Limits`]).
    #[error("{command}: {reason}")]
    NotAllowed {
        /// The command, as the request named it.
        command: String,
        /// The limit or access rule that refused it.
        reason: Refusal,
    },
}

/// The answer to a file operation (see [`Event::SaveWanted`], [`Event::LoadWanted`]).
#[derive(Debug, Clone, PartialEq)]
pub enum FileResult {
    /// The save file was written; the name to report (the resolved path).
    Saved(String),
    /// The save file's contents.
    Loaded(String),
    /// It failed; the reason.
    Failed(String),
}

/// Who sent a request: an agent (or any UDP peer) or the process itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Peer(SocketAddr),
    Local,
}

impl Origin {
    fn addr(self) -> Option<SocketAddr> {
        match self {
            Origin::Peer(a) => Some(a),
            Origin::Local => None,
        }
    }
}

/// Why an agent left.
#[derive(Debug, Clone)]
enum Departure {
    /// It sent `Unregister_Agent` from this address.
    Unregistered(SocketAddr),
    /// Another key registered at its address (an address is one agent).
    Replaced {
        /// The key registered there now.
        by: String,
    },
    /// A datagram sent to it was answered ICMP port unreachable.
    Unreachable,
    /// Nothing was heard from it for this long (`agentsilencetimeout`, or
    /// `unprovensilencetimeout` when `unproven`).
    Silent {
        /// How long nothing was heard from it.
        after: Duration,
        /// Its address is not proven: the server may send it nothing more.
        unproven: bool,
    },
}

/// Auto-adjust bookkeeping: a window of wall time and simulated time.
#[derive(Debug, Clone)]
struct AutoWindow {
    started: Instant,
    sim_start: f64,
    busy: Duration,
}

/// A file operation under way.
#[derive(Debug, Clone)]
struct FileWait {
    ticket: FileTicket,
    origin: Origin,
    command: String,
    confirm: bool,
    path: String,
    load: bool,
}

/// The prefix of every error response.
pub const ERROR_PREFIX: &str = "Error: ";

fn error_text(message: impl std::fmt::Display) -> String {
    format!("{ERROR_PREFIX}{message}")
}

/// The SimRob session.
pub struct Session {
    config: ServerConfig,
    world: World,
    /// Sync mode, Sync_Wait and auto-adjust: the session's, saved with the world.
    flags: SessionFlags,
    agents: AgentTable,
    /// Per-agent filters, by agent key.
    views: BTreeMap<String, Box<dyn AgentFilter>>,
    filters: FilterRegistry,
    outbox: VecDeque<Transmit>,
    events: VecDeque<Event>,
    /// When the next iteration may run in paced (real-time factor or auto-adjust) mode.
    next_due: Option<Instant>,
    /// In synchronous mode, after a broadcast: the iteration agents must confirm and when it
    /// was broadcast (the session waits until then + Sync_Wait, read at each check so that a
    /// new Sync_Wait applies to the current wait too).
    sync_deadline: Option<(u64, Instant)>,
    /// When a timed-out lockstep wait was last logged at info, and how many timed out since
    /// (not yet logged at info).
    sync_timeout_logged: Option<(Instant, u64)>,
    auto: Option<AutoWindow>,
    /// The start of the last iteration, until the next call that tells the time: how long
    /// the shell was busy with it (auto-adjust's measure of load).
    busy_since: Option<Instant>,
    stats: Stats,
    observed: bool,
    /// Observers take every iteration (a recorder); off, only the iterations after
    /// [`Session::want_snapshot`] (a viewer that draws a few frames a second).
    observe_every: bool,
    /// An observer asked for the next iteration's snapshot.
    snapshot_wanted: bool,
    /// The world changed since the last snapshot handed out.
    dirty: bool,
    waiting: Option<FileWait>,
    queued: VecDeque<(Origin, Result<Request, DecodeError>)>,
    next_ticket: u64,
    /// Bytes from and to each address (anti-amplification).
    amplification: Amplification,
    /// The address each agent key was registered from: only it may use the key.
    owners: HashMap<String, SocketAddr>,
    /// The keys registered from each address, in the order they registered (a program may
    /// register several agents from one socket).
    owner_keys: HashMap<SocketAddr, Vec<String>>,
    /// When each agent was last heard from (only with `agentsilencetimeout`).
    heard: HashMap<String, Instant>,
    /// When the next agent may fall silent for good (only with `agentsilencetimeout`).
    silence_check: Option<Instant>,
    /// Entities already reported as gone non-finite.
    non_finite: std::collections::BTreeSet<EntityId>,
    /// The canonical `Info_Request` for the configured command names (a decoding shortcut).
    info_form: Option<InfoRequestForm>,
    /// The key that seals and checks this session's save files.
    save_key: simrob_world::SaveKey,
    /// The addresses the server itself receives at (see [`Session::set_own_address`]).
    own: Vec<SocketAddr>,
    /// Agents' addresses that have not sent the server anything yet (see [`Agent::asked`]).
    unasked: std::collections::HashSet<SocketAddr>,
}

impl Session {
    /// The key that seals this session's save files and checks those it loads: the configured
    /// `savekey`, or else the process's key (see `simrob_world::default_save_key`).
    pub fn save_key(&self) -> &simrob_world::SaveKey {
        &self.save_key
    }

    /// A session with an empty world.
    pub fn new(config: ServerConfig) -> Self {
        // The configured key seals this session's save files; without one, the process's key.
        let save_key = match &config.limits.save_key {
            Some(secret) => simrob_world::SaveKey::from_secret(secret),
            None => default_save_key().clone(),
        };
        let mut world = World::new(config.world.clone());
        if let Err(e) = world.set_physics_threads(config.physics_threads) {
            // A build without parallel physics: `simrob serve` refuses such a configuration
            // before it gets here; a session built otherwise steps on one thread.
            tracing::warn!(
                "physicsthreads {}: {e}; stepping on one thread",
                config.physics_threads
            );
        }
        let flags = SessionFlags {
            sync_wait: config.sync_wait,
            ..SessionFlags::default()
        };
        Session {
            world,
            flags,
            agents: AgentTable::default(),
            views: BTreeMap::new(),
            filters: FilterRegistry::standard(),
            outbox: VecDeque::new(),
            events: VecDeque::new(),
            next_due: None,
            sync_deadline: None,
            sync_timeout_logged: None,
            auto: None,
            busy_since: None,
            stats: Stats::default(),
            observed: false,
            observe_every: true,
            snapshot_wanted: false,
            dirty: true,
            waiting: None,
            queued: VecDeque::new(),
            next_ticket: 0,
            amplification: Amplification::default(),
            owners: HashMap::new(),
            owner_keys: HashMap::new(),
            heard: HashMap::new(),
            silence_check: None,
            non_finite: std::collections::BTreeSet::new(),
            info_form: InfoRequestForm::new(&config.keys),
            save_key,
            config,
            own: Vec::new(),
            unasked: std::collections::HashSet::new(),
        }
    }

    /// Tells the session the address its shell receives at (the bound socket's): no agent may
    /// register there, nor at that port on loopback when it is bound to every interface
    /// (the server would send its own broadcasts to itself).
    pub fn set_own_address(&mut self, addr: SocketAddr) {
        if !self.own.contains(&addr) {
            self.own.push(addr);
        }
    }

    /// Whether `addr` is one the server itself receives at.
    fn is_own_address(&self, addr: SocketAddr) -> bool {
        self.own.iter().any(|own| {
            own.port() == addr.port()
                && (own.ip() == addr.ip()
                    || (own.ip().is_unspecified()
                        && (addr.ip().is_loopback() || addr.ip().is_unspecified())))
        })
    }

    /// The agent types and their filters (register new ones here).
    pub fn filters_mut(&mut self) -> &mut FilterRegistry {
        &mut self.filters
    }
    /// The world the session runs.
    pub fn world(&self) -> &World {
        &self.world
    }
    /// The configuration the session was made with.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }
    /// The registered agents, in the order they registered.
    pub fn agents(&self) -> &[Agent] {
        self.agents.as_slice()
    }
    /// The counters so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// Simulated seconds per wall second the session paces at now (auto-adjust: 1).
    pub fn pace(&self) -> f64 {
        if self.flags().auto_adjust {
            1.0
        } else {
            self.config.real_time_factor
        }
    }

    fn flags(&self) -> SessionFlags {
        self.flags
    }

    /// Sync mode, Sync_Wait and auto-adjust now.
    pub fn session_flags(&self) -> SessionFlags {
        self.flags
    }

    /// Whether anyone reads [`Event::Iterated`], [`Event::Changed`] and [`Event::Response`]
    /// (a viewer, a recorder). Off, the session builds no snapshot nobody receives. Turning it
    /// on emits a [`Event::Changed`] with the world now.
    pub fn set_observed(&mut self, observed: bool) {
        self.observed = observed;
        if observed {
            self.dirty = true;
            self.emit_changed(true);
        }
    }

    /// Whether observers take every iteration (on by default: a recorder needs each one).
    /// Off, [`Event::Iterated`] comes only for the next iteration after each
    /// [`Session::want_snapshot`] (or when agents' broadcasts build the snapshot anyway): a
    /// viewer drawing 30 frames a second then costs the steps in between nothing. The run
    /// itself is the same either way.
    pub fn set_observe_every_iteration(&mut self, every: bool) {
        self.observe_every = every;
    }

    /// Asks for the next iteration's snapshot (see [`Session::set_observe_every_iteration`]).
    pub fn want_snapshot(&mut self) {
        self.snapshot_wanted = true;
    }

    /// The modes a snapshot carries.
    pub fn modes(&self) -> SnapshotModes {
        let m = self.world.modes();
        let p = self.world.params();
        let f = self.flags();
        SnapshotModes {
            initialized: m.initialized,
            step_mode: m.step_mode,
            sync_mode: f.sync_mode,
            auto_adjust: f.auto_adjust,
            timestep: p.timestep,
            gravity: p.gravity,
            steps_per_iteration: m.steps_per_iteration,
            real_time_factor: self.config.real_time_factor,
        }
    }

    /// The world now, as a snapshot (built on each call).
    pub fn snapshot(&mut self) -> Arc<Snapshot> {
        self.stats.snapshots += 1;
        let mut snapshot = Snapshot::of(&self.world, self.modes());
        self.contain_non_finite(&mut snapshot);
        Arc::new(snapshot)
    }

    /// A body whose state is no longer finite (the physics diverged) is never handed on:
    /// it is left out of the snapshot, its entity is reported once and its velocities are
    /// set to zero.
    fn contain_non_finite(&mut self, snapshot: &mut Snapshot) {
        let finite = |v: &[f64; 3]| v.iter().all(|x| x.is_finite());
        let b = &mut snapshot.broadcast;
        let mut bad: Vec<EntityId> = b
            .bodies
            .iter()
            .filter(|s| {
                !(finite(&s.position)
                    && finite(&s.rotation)
                    && finite(&s.linear_velocity)
                    && finite(&s.angular_velocity))
            })
            .map(|s| s.entity_id)
            .chain(
                b.entities
                    .iter()
                    .filter(|e| !(finite(&e.position) && finite(&e.rotation)))
                    .map(|e| e.entity_id),
            )
            .collect();
        if bad.is_empty() {
            return;
        }
        bad.sort_unstable();
        bad.dedup();
        b.bodies.retain(|s| !bad.contains(&s.entity_id));
        b.entities.retain(|e| !bad.contains(&e.entity_id));
        for id in bad {
            let _ = self.world.set_entity_velocity(id, [0.0; 3], [0.0; 3]);
            if self.non_finite.insert(id) {
                self.log(
                    LogLevel::Warn,
                    format!(
                        "entity {id}: the physics gave it a non-finite position or velocity at iteration {}; it is stopped and left out of broadcasts",
                        self.world.iteration()
                    ),
                );
            }
        }
    }

    /// Datagrams not sent because their address has not proven it asked for them (see
    /// [`crate::Limits::proven`]).
    pub fn withheld(&self) -> u64 {
        self.amplification.withheld
    }

    /// The next datagram to send.
    pub fn poll_transmit(&mut self) -> Option<Transmit> {
        while let Some(t) = self.outbox.pop_front() {
            if self
                .amplification
                .may_send(&self.config.limits, t.to, t.payload.len())
            {
                self.stats.datagrams_out += 1;
                return Some(t);
            }
        }
        None
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    fn log(&mut self, level: LogLevel, message: String) {
        self.events.push_back(Event::Log { level, message });
    }

    fn respond_locally(&mut self, text: String) {
        if self.observed {
            self.events.push_back(Event::Response(text));
        }
    }

    fn send_text(&mut self, to: SocketAddr, text: String) {
        self.outbox.push_back(Transmit {
            to,
            payload: encode_response(&Response::Text(text)).into_bytes(),
        });
    }

    /// Forgets that `key` was registered from `owner`.
    fn disown(&mut self, owner: SocketAddr, key: &str) {
        if let Some(keys) = self.owner_keys.get_mut(&owner) {
            keys.retain(|k| k != key);
            if keys.is_empty() {
                self.owner_keys.remove(&owner);
            }
        }
    }

    /// Whether `from` may change the world: as any of the agents registered from it.
    fn may_change_world(&self, from: SocketAddr) -> Result<(), Refusal> {
        let limits = &self.config.limits;
        let keys = self.owner_keys.get(&from).map_or(&[][..], Vec::as_slice);
        if keys
            .iter()
            .any(|k| limits.may_change_world(from, Some(k)).is_ok())
        {
            return Ok(());
        }
        limits.may_change_world(from, keys.last().map(String::as_str))
    }

    /// Refuses a `Register_Agent`: the error to its sender, and a log line saying who was
    /// turned away and why (a server's operator sees refusals at `--log info`).
    fn refuse_registration(&mut self, to: Origin, key: &str, message: impl std::fmt::Display) {
        let from = match to {
            Origin::Peer(addr) => addr.to_string(),
            Origin::Local => "this process".to_string(),
        };
        let text = message.to_string();
        let prefix = format!("{}: ", &self.config.keys[Command::RegisterAgent]);
        let why = text.strip_prefix(prefix.as_str()).unwrap_or(&text);
        self.log(
            LogLevel::Info,
            format!("agent {} from {from} not registered: {why}", quoted(key)),
        );
        self.send_error(to, text);
    }

    fn send_error(&mut self, to: Origin, message: impl std::fmt::Display) {
        self.stats.errors += 1;
        let text = error_text(message);
        match to {
            Origin::Peer(addr) => self.send_text(addr, text),
            Origin::Local => self.respond_locally(text),
        }
    }

    /// Sends `text` to every agent (at most `maxconfirmationfanout`, else to `from` alone),
    /// and to `from` if it is not one (an unregistered commander still sees its
    /// confirmations); local observers see it too when it answers them or a registered agent.
    /// What an unproven address caused goes to it alone (within its amplification credit):
    /// a stranger's registrations, moves and requests are never fanned out to other agents.
    fn confirm(&mut self, from: Option<SocketAddr>, text: String) {
        let alone = from.is_some_and(|a| !self.config.limits.proven(a));
        self.confirm_to(from, text, alone);
    }

    /// [`Session::confirm`], to `from` alone when `alone`.
    fn confirm_to(&mut self, from: Option<SocketAddr>, text: String, alone: bool) {
        let payload = encode_response(&Response::Text(text.clone())).into_bytes();
        let mut sent_to_sender = false;
        let fan_out = !alone && self.agents.len() <= self.config.limits.max_confirmation_fanout;
        for a in self.agents.iter() {
            if (!fan_out || !a.asked) && Some(a.addr) != from {
                continue;
            }
            sent_to_sender |= Some(a.addr) == from;
            self.outbox.push_back(Transmit {
                to: a.addr,
                payload: payload.clone(),
            });
        }
        if let (Some(from), false) = (from, sent_to_sender) {
            self.outbox.push_back(Transmit { to: from, payload });
        }
        // Local observers (the viewer's response panel) see the confirmations of local
        // commands and of registered agents, not what any sender can make the server say.
        if from.is_none_or(|a| self.owner_keys.contains_key(&a)) {
            self.respond_locally(text);
        }
    }

    /// Notes the time after an iteration's work (see `busy_since`).
    fn tell_time(&mut self, now: Instant) {
        if let Some(started) = self.busy_since.take() {
            if let Some(w) = self.auto.as_mut() {
                w.busy += now.saturating_duration_since(started);
            }
        }
    }

    /// Handles one datagram from `from`: every request in it, in order.
    pub fn handle_datagram(&mut self, from: SocketAddr, data: &[u8], now: Instant) {
        self.tell_time(now);
        self.stats.datagrams_in += 1;
        if self.unasked.remove(&from) {
            // The agents registered at this address now show they receive there.
            for a in self.agents.iter_mut().filter(|a| a.addr == from) {
                a.asked = true;
            }
        }
        if self.tracks_silence() {
            // Whatever it sends keeps every agent registered from that address.
            for key in self.owner_keys.get(&from).into_iter().flatten() {
                if let Some(t) = self.heard.get_mut(key) {
                    *t = now;
                }
            }
        }
        if !self.config.limits.proven(from) {
            // Proven addresses are never held to their credit: no need to count.
            self.amplification.received_within(
                self.config.limits.amplification_ledger,
                from,
                data.len(),
            );
        }
        if let Some(root) = server_sent_root(data) {
            // Another server's answer or broadcast (or this one's, sent back to it): an
            // error in reply would be answered with an error, and so on for ever.
            self.stats.dropped += 1;
            let what = if root == "Error" {
                "an error".to_string()
            } else {
                format!("a <{root}>")
            };
            self.log(
                LogLevel::Debug,
                format!(
                    "dropped a datagram of {} bytes from {from} unanswered: it is {what}, which only a server sends",
                    data.len()
                ),
            );
            return;
        }
        if data.len() > self.config.maximum_datagram_size {
            self.send_error(
                Origin::Peer(from),
                format!(
                    "datagram of {} bytes is larger than maximumdatagramsize ({} bytes); nothing in it was executed",
                    data.len(),
                    self.config.maximum_datagram_size
                ),
            );
            return;
        }
        // The most frequent request in its canonical form skips the general decoder.
        let results = match self.info_form.as_ref().and_then(|f| f.matches(data)) {
            Some(request) => vec![Ok(request)],
            None => decode_datagram_with_depth(
                data,
                &self.config.keys,
                self.config.limits.max_xml_depth,
            ),
        };
        if let Some(reason) = self.refuse_datagram(&results) {
            self.stats.requests += results.len() as u64;
            self.send_error(Origin::Peer(from), reason);
            return;
        }
        let results = self.refuse_strangers_at_once(from, results);
        if let Some(reason) = self.refuse_queueing(from, &results) {
            self.stats.requests += results.len() as u64;
            self.send_error(Origin::Peer(from), reason);
            return;
        }
        for result in results {
            self.stats.requests += 1;
            self.queued.push_back((Origin::Peer(from), result));
        }
        self.run_queue(now);
    }

    /// Handles a command from the process itself. A request the world refuses is returned
    /// as an error (and shown to local observers); a Save or Load completes later, through
    /// [`Event::SaveWanted`] / [`Event::LoadWanted`] and [`Session::handle_file_result`].
    pub fn handle_command(
        &mut self,
        command: LocalCommand,
        now: Instant,
    ) -> Result<(), SessionError> {
        self.tell_time(now);
        match command {
            LocalCommand::SetRealTimeFactor(f) => {
                if !(f.is_finite() && f >= 0.0) {
                    let e = SessionError::RealTimeFactor(f);
                    self.send_error(Origin::Local, &e);
                    return Err(e);
                }
                self.config.real_time_factor = f;
                self.next_due = None;
                self.dirty = true;
                self.emit_changed(false);
                // Confirmed as the timestep and gravity are: to every agent and the viewer.
                self.confirm(
                    None,
                    format!("Set_Real_Time_Factor: Real-time factor set to {f}"),
                );
                Ok(())
            }
            LocalCommand::Request(request) => {
                if let Request::Agent(_) = request {
                    let e =
                        SessionError::AgentMessage(request.command(&self.config.keys).to_string());
                    self.send_error(Origin::Local, &e);
                    return Err(e);
                }
                self.stats.requests += 1;
                if self.waiting.is_some() || self.world.iteration_in_progress() {
                    self.queued.push_back((Origin::Local, Ok(request)));
                    return Ok(());
                }
                let outcome = self.handle_world_request(Origin::Local, &request, now);
                self.run_queue(now);
                outcome
            }
        }
    }

    /// Why none of a datagram's requests may run, if so: it is not well-formed XML (then even
    /// the requests before the break would be a partial execution), or it carries more work
    /// than one datagram may (`maxrequestsperdatagram`, `maxfilerequestsperdatagram`).
    fn refuse_datagram(&self, results: &[Result<Request, DecodeError>]) -> Option<String> {
        let limits = &self.config.limits;
        if let Some(Err(e)) = results
            .iter()
            .find(|r| matches!(r, Err(e) if e.kind() == DecodeErrorKind::Syntax))
        {
            return Some(format!(
                "{e}; the datagram is not well-formed XML, so nothing in it was executed"
            ));
        }
        if results.len() > limits.max_requests_per_datagram {
            return Some(format!(
                "the datagram carries {} requests, more than {} (configuration key maxrequestsperdatagram); nothing in it was executed",
                results.len(),
                limits.max_requests_per_datagram
            ));
        }
        let files = results
            .iter()
            .filter(|r| {
                matches!(
                    r,
                    Ok(Request::Control {
                        request: ControlRequest::Save(_) | ControlRequest::Load(_),
                        ..
                    })
                )
            })
            .count();
        if files > limits.max_file_requests_per_datagram {
            return Some(format!(
                "the datagram carries {files} Save or Load requests, more than {} (configuration key maxfilerequestsperdatagram); nothing in it was executed",
                limits.max_file_requests_per_datagram
            ));
        }
        None
    }

    /// While requests must wait (an iteration under way, a file operation), refuses at once
    /// the requests of `results` that change the world when `from` may not change it, so
    /// they do not hold places in the queue; returns the others. A datagram that registers
    /// an agent, or a sender with requests waiting (a registration among them may give it
    /// the right), is left to be judged in turn.
    fn refuse_strangers_at_once(
        &mut self,
        from: SocketAddr,
        results: Vec<Result<Request, DecodeError>>,
    ) -> Vec<Result<Request, DecodeError>> {
        let must_wait = self.waiting.is_some() || self.world.iteration_in_progress();
        let registers = results.iter().any(|r| {
            matches!(
                r,
                Ok(Request::Agent(
                    simrob_protocol::AgentRequest::RegisterAgent { .. }
                ))
            )
        });
        let origin = Origin::Peer(from);
        if !must_wait || registers || self.queued.iter().any(|(o, _)| *o == origin) {
            return results;
        }
        let Err(reason) = self.may_change_world(from) else {
            return results;
        };
        let mut kept = Vec::with_capacity(results.len());
        for r in results {
            match r {
                Ok(request @ (Request::Control { .. } | Request::Entity { .. })) => {
                    self.stats.requests += 1;
                    let command = request.command(&self.config.keys).to_string();
                    let e = SessionError::NotAllowed {
                        command,
                        reason: reason.clone(),
                    };
                    self.send_error(origin, &e);
                }
                other => kept.push(other),
            }
        }
        kept
    }

    /// Why the requests of `results` from `from` may not wait in the queue, if so: it
    /// already holds `maxqueuedrequests` waiting for an iteration under way or a file
    /// operation. Only requests that would wait count: registrations, Info_Requests and
    /// Synchronizes that run at once between slices of an iteration are never refused.
    fn refuse_queueing(
        &self,
        from: SocketAddr,
        results: &[Result<Request, DecodeError>],
    ) -> Option<String> {
        let max = self.config.limits.max_queued_requests;
        let in_progress = self.world.iteration_in_progress();
        let origin = Origin::Peer(from);
        // Once one of the sender's requests waits, its later ones wait behind it.
        let mut held = self.waiting.is_some() || self.queued.iter().any(|(o, _)| *o == origin);
        let mut n = 0;
        for r in results {
            let changes_world = matches!(r, Ok(Request::Control { .. } | Request::Entity { .. }));
            held |= changes_world && in_progress;
            if held {
                n += 1;
            }
        }
        (n > 0 && !self.queued.is_empty() && self.queued.len() + n > max).then(|| {
            format!(
                "the server is busy: {} requests are waiting for the iteration under way or a file operation (configuration key maxqueuedrequests = {max}); nothing in this datagram was executed, send it again",
                self.queued.len()
            )
        })
    }

    /// Whether `request` from `origin` may run: who may change the world (peers only), and
    /// the limits on values and sizes (everyone).
    fn admit(&self, origin: Origin, request: &Request) -> Result<(), Refusal> {
        if let Origin::Peer(from) = origin {
            self.may_change_world(from)?;
        }
        self.config.limits.check(request, &self.world)
    }

    /// Runs queued requests until the queue is empty or a file operation must be waited for.
    /// While an iteration is under way (in slices), requests that change the world wait for
    /// it to complete, and so do later requests of the same sender (each sender's requests
    /// keep their order); other agents' registrations, Info_Requests and Synchronizes run.
    fn run_queue(&mut self, now: Instant) {
        let mut held: Vec<(Origin, Result<Request, DecodeError>)> = Vec::new();
        while self.waiting.is_none() {
            let Some((origin, result)) = self.queued.pop_front() else {
                break;
            };
            let changes_world =
                matches!(result, Ok(Request::Control { .. } | Request::Entity { .. }));
            if (changes_world && self.world.iteration_in_progress())
                || held.iter().any(|(o, _)| *o == origin)
            {
                held.push((origin, result));
                continue;
            }
            match result {
                Err(e) => self.send_error(origin, e),
                Ok(Request::Agent(a)) => match origin {
                    Origin::Peer(from) => self.handle_agent(from, a, now),
                    Origin::Local => {}
                },
                Ok(request) => {
                    let _ = self.handle_world_request(origin, &request, now);
                }
            }
        }
        for item in held.into_iter().rev() {
            self.queued.push_front(item);
        }
        self.emit_changed(false);
    }

    fn handle_world_request(
        &mut self,
        origin: Origin,
        request: &Request,
        now: Instant,
    ) -> Result<(), SessionError> {
        let command = request.command(&self.config.keys).to_string();
        if let Err(reason) = self.admit(origin, request) {
            let e = SessionError::NotAllowed { command, reason };
            self.send_error(origin, &e);
            return Err(e);
        }
        let confirm = request
            .response()
            .unwrap_or(self.config.default_response_request);
        let sync_before = self.flags().sync_mode;
        let outcome = match self.apply(request) {
            Ok(Applied::Done(text)) => {
                self.dirty = true;
                if confirm {
                    self.confirm(origin.addr(), format!("{command}: {text}"));
                }
                Ok(())
            }
            Ok(Applied::Save(path)) => {
                let contents = self.world.save_xml_with_flags(&self.save_key, &self.flags);
                let ticket = self.wait_for_file(origin, &command, confirm, &path, false);
                self.events.push_back(Event::SaveWanted {
                    ticket,
                    path,
                    contents,
                });
                Ok(())
            }
            Ok(Applied::Load(path)) => {
                let ticket = self.wait_for_file(origin, &command, confirm, &path, true);
                self.events.push_back(Event::LoadWanted { ticket, path });
                Ok(())
            }
            Err(source) => {
                let e = SessionError::Refused { command, source };
                self.send_error(origin, &e);
                Err(e)
            }
        };
        if sync_before && !self.flags().sync_mode {
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
        outcome
    }

    /// Applies a control or entity request: the session's own settings here, the rest in
    /// the world.
    fn apply(&mut self, request: &Request) -> Result<Applied, WorldError> {
        let done = |text: String| Ok(Applied::Done(text));
        match request {
            Request::Control { request, .. } => match request {
                ControlRequest::SetSyncMode(on) => {
                    self.flags.sync_mode = *on;
                    done(format!("Sync mode set to {on}"))
                }
                ControlRequest::SetAutoAdjustMode(on) => {
                    self.flags.auto_adjust = *on;
                    done(format!("Auto-adjust mode set to {on}"))
                }
                ControlRequest::SetSyncWait(s) => {
                    if !(s.is_finite() && *s >= 0.0) {
                        return Err(WorldError::Invalid(format!(
                            "Sync_Wait must be a non-negative number of seconds, got {s}"
                        )));
                    }
                    self.flags.sync_wait = *s;
                    done(format!("Sync wait set to {s}"))
                }
                _ => self.world.apply_control(request),
            },
            _ => self.world.apply(request),
        }
    }

    fn wait_for_file(
        &mut self,
        origin: Origin,
        command: &str,
        confirm: bool,
        path: &str,
        load: bool,
    ) -> FileTicket {
        self.next_ticket += 1;
        let ticket = FileTicket(self.next_ticket);
        self.waiting = Some(FileWait {
            ticket,
            origin,
            command: command.to_string(),
            confirm,
            path: path.to_string(),
            load,
        });
        ticket
    }

    /// The outcome of the file operation `ticket` asked for. Requests that arrived meanwhile
    /// run now. For a local command, a failure is also returned.
    pub fn handle_file_result(
        &mut self,
        ticket: FileTicket,
        result: FileResult,
        now: Instant,
    ) -> Result<(), SessionError> {
        self.tell_time(now);
        let wait = match self.waiting.take() {
            Some(w) if w.ticket == ticket => w,
            other => {
                self.waiting = other;
                return Err(SessionError::NoSuchTicket);
            }
        };
        let outcome = match (wait.load, result) {
            (false, FileResult::Saved(written)) => {
                if wait.confirm {
                    self.confirm(
                        wait.origin.addr(),
                        format!("{}: simulation saved to {written}", wait.command),
                    );
                }
                Ok(())
            }
            (true, FileResult::Loaded(xml)) => match session_flags_of(&xml).and_then(|flags| {
                let max = self.config.limits.max_sync_wait;
                if flags.sync_wait > max {
                    return Err(WorldError::Load(format!(
                        "Sync_Wait {} is out of range (0 … {max} s, configuration key maxsyncwait)",
                        simrob_math::Shown::of(&flags.sync_wait)
                    )));
                }
                self.world
                    .load_xml_with(
                        &xml,
                        &LoadOptions {
                            key: Some(&self.save_key),
                            limits: self.config.limits.load_limits(),
                        },
                    )
                    .map(|_| flags)
            }) {
                Ok(flags) => {
                    self.flags = flags;
                    self.after_load();
                    if wait.confirm {
                        self.confirm(
                            wait.origin.addr(),
                            format!(
                                "{}: simulation loaded from {} at iteration {}",
                                wait.command,
                                wait.path,
                                self.world.iteration()
                            ),
                        );
                    }
                    Ok(())
                }
                Err(source) => Err(SessionError::Refused {
                    command: wait.command.clone(),
                    source,
                }),
            },
            (_, FileResult::Failed(message)) => Err(SessionError::File {
                command: wait.command.clone(),
                message,
            }),
            (load, other) => Err(SessionError::File {
                command: wait.command.clone(),
                message: format!(
                    "the file store answered {other:?} to a {}",
                    if load { "load" } else { "save" }
                ),
            }),
        };
        if let Err(e) = &outcome {
            self.send_error(wait.origin, e);
        }
        self.run_queue(now);
        if wait.origin == Origin::Local {
            outcome
        } else {
            Ok(())
        }
    }

    fn after_load(&mut self) {
        // Timers restart from the loaded simulated time.
        let t = self.world.sim_time();
        for a in self.agents.iter_mut() {
            a.next_broadcast = t;
            a.awaited = None;
            a.synced = a.synced.min(self.world.iteration());
        }
        self.sync_deadline = None;
        self.next_due = None;
        self.auto = None;
        self.dirty = true;
    }

    /// Emits [`Event::Changed`] when observed, something changed and no iteration is coming
    /// to show it (or `force`).
    fn emit_changed(&mut self, force: bool) {
        if !self.observed || !self.dirty {
            return;
        }
        if !force && self.world.can_advance() && self.waiting.is_none() {
            return;
        }
        self.dirty = false;
        let snapshot = self.snapshot();
        self.events.push_back(Event::Changed(snapshot));
    }

    fn handle_agent(&mut self, from: SocketAddr, request: AgentRequest, now: Instant) {
        let origin = Origin::Peer(from);
        match request {
            AgentRequest::RegisterAgent {
                agent_type,
                port,
                ip,
                sync,
                broadcast,
                key,
            } => {
                let reg = self.config.keys[Command::RegisterAgent].to_string();
                let key_q = quoted(&key);
                let type_name = agent_type.as_str().to_string();
                if !self.filters.contains(&type_name) {
                    let known: Vec<&str> = self.filters.names().collect();
                    let known = known.join(", ");
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!(
                            "{reg}: unknown agent type {} (known: {known})",
                            quoted(&type_name)
                        ),
                    );
                }
                let Ok(ip_addr) = ip.trim().parse::<IpAddr>() else {
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!("{reg}: IP {} is not an IP address", quoted(&ip)),
                    );
                };
                if !self.config.allow_foreign_agent_ip && ip_addr != from.ip() {
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!(
                            "{reg}: agent {key_q} registers IP {ip_addr} but sends from {}; an agent may only register its own address (configuration key allowforeignagentip)",
                            from.ip()
                        ),
                    );
                }
                if port == 0 {
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!("{reg}: Port 0 is not a port"),
                    );
                }
                if self.is_own_address(SocketAddr::new(ip_addr, port)) {
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!(
                            "{reg}: {} is the server's own address; register the address your program receives at (the one it sends from)",
                            SocketAddr::new(ip_addr, port)
                        ),
                    );
                }
                if !(broadcast == -1.0 || broadcast >= 0.0) {
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!(
                            "{reg}: Broadcast must be -1 (never) or a number of seconds >= 0, got {broadcast}"
                        ),
                    );
                }
                if key.trim().is_empty() {
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!("{reg}: Key must not be empty"),
                    );
                }
                if key.chars().any(|c| c.is_control()) {
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!(
                            "{reg}: Key {key_q} has a control character; a key is sent back to every agent in XML, which cannot carry it"
                        ),
                    );
                }
                let brain_note = if crate::agents::humanoid::is_brain(&type_name) {
                    match crate::agents::humanoid::check_key(&type_name, &key, &self.world) {
                        Ok(note) => note,
                        Err(e) => {
                            return self.refuse_registration(origin, &key, format!("{reg}: {e}"))
                        }
                    }
                } else {
                    String::new()
                };
                // A key registered again from the IP it was registered from moves to the new
                // address (a controller run again comes from a new port); from another IP
                // it is refused (a stranger may not take over someone's agent).
                let old_owner = self.owners.get(&key).copied().filter(|o| *o != from);
                if let Some(owner) = old_owner.filter(|o| o.ip() != from.ip()) {
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!(
                            "{reg}: key {key_q} is registered from {}; register under another key, or stop that agent first (a key may be registered again only from the IP it was registered from)",
                            owner.ip()
                        ),
                    );
                }
                // An address is one agent: another key registered at it is replaced (a
                // controller run again on a fixed port under a new key; its old key would
                // otherwise be sent broadcasts it no longer reads, and held lockstep).
                let new_addr = SocketAddr::new(ip_addr, port);
                let replaced: Vec<String> = self
                    .agents
                    .iter()
                    .filter(|a| a.addr == new_addr && a.key != key)
                    .map(|a| a.key.clone())
                    .collect();
                if let Some((other, owner)) = replaced.iter().find_map(|k| {
                    self.owners
                        .get(k)
                        .filter(|o| o.ip() != from.ip())
                        .map(|o| (k.clone(), *o))
                }) {
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!(
                            "{reg}: {new_addr} is agent {}'s, registered from {}; an address is one agent, and only a program on that IP may take it over",
                            quoted(&other),
                            owner.ip()
                        ),
                    );
                }
                let max_agents = self.config.limits.max_agents;
                if self.agents.get(&key).is_none()
                    && self.agents.len() - replaced.len() >= max_agents
                {
                    return self.refuse_registration(
                        origin,
                        &key,
                        format!(
                            "{reg}: the server already has {} agents, the most allowed (configuration key maxagents = {max_agents}); agent {key_q} was not registered",
                            self.agents.len()
                        ),
                    );
                }
                for other in &replaced {
                    self.depart(other, Departure::Replaced { by: key.clone() });
                }
                let moved_from = self
                    .agents
                    .get(&key)
                    .map(|a| a.addr)
                    .filter(|old| *old != new_addr);
                // Its address asked for datagrams if the registration came from it (or an
                // agent there already showed it receives there).
                let asked =
                    new_addr == from || self.agents.iter().any(|a| a.addr == new_addr && a.asked);
                if !asked {
                    self.unasked.insert(new_addr);
                }
                let agent = Agent {
                    asked,
                    answered: None,
                    key: key.clone(),
                    agent_type: type_name,
                    addr: new_addr,
                    sync,
                    broadcast_interval: broadcast,
                    next_broadcast: self.world.sim_time(),
                    synced: self.world.iteration(),
                    awaited: None,
                    seed: agent_seed(self.config.random_seed, &key),
                };
                match self.filters.get(&agent.agent_type) {
                    Some(Filter::PerAgent(make)) => {
                        let view = make(&agent.info());
                        self.views.insert(key.clone(), view);
                    }
                    _ => {
                        self.views.remove(&key);
                    }
                }
                let message = match moved_from {
                    Some(old) => format!(
                        "agent {key_q} ({}) moved from {old} to {} (registered again; sync {sync}, broadcast {broadcast})",
                        agent.agent_type, agent.addr
                    ),
                    None => format!(
                        "agent {key_q} ({}) registered at {} (sync {sync}, broadcast {broadcast})",
                        agent.agent_type, agent.addr
                    ),
                };
                self.log(LogLevel::Info, message);
                // The agent is replaced whole: it is awaited by no synchronous iteration
                // (its new address has been sent none), so lockstep does not wait on the
                // address it left; its next broadcast goes to the new address.
                self.agents.insert(agent);
                if let Some(old) = old_owner {
                    self.disown(old, &key);
                }
                self.owners.insert(key.clone(), from);
                let keys = self.owner_keys.entry(from).or_default();
                if !keys.contains(&key) {
                    keys.push(key.clone());
                }
                if let Some((timeout, _)) = self.silence_timeout(new_addr) {
                    self.heard.insert(key.clone(), now);
                    let due = now + timeout;
                    self.silence_check = Some(self.silence_check.map_or(due, |c| c.min(due)));
                } else {
                    self.heard.remove(&key);
                }
                let mut moved = match moved_from {
                    Some(old) => format!(" (moved from {old})"),
                    None => String::new(),
                };
                for other in &replaced {
                    moved.push_str(&format!(" (replacing agent {other})"));
                }
                self.confirm(
                    Some(from),
                    format!(
                        "Sucessfully added agent with key {key}, port {port} and ip {ip}{moved}{brain_note}"
                    ),
                );
            }
            AgentRequest::InfoRequest {
                requester,
                requested,
            } => {
                let (requester_q, requested_q) = (quoted(&requester), quoted(&requested));
                let info = self.config.keys[Command::InfoRequest].to_string();
                let Some((to, asked)) = self.agents.get(&requester).map(|a| (a.addr, a.asked))
                else {
                    return self.send_error(
                        origin,
                        format!("{info}: requester {requester_q} is not a registered agent"),
                    );
                };
                if !asked {
                    return self.send_error(
                        origin,
                        format!(
                            "{info}: requester {requester_q} receives at {to}, which has sent the server nothing yet; send this request from there"
                        ),
                    );
                }
                let Some(answer) = self.agents.info_answer(&requested) else {
                    return self.send_error(
                        origin,
                        format!("{info}: agent {requested_q} is not registered"),
                    );
                };
                self.outbox.push_back(Transmit {
                    to,
                    payload: answer.to_vec(),
                });
            }
            AgentRequest::Synchronize { key, iteration } => {
                let key_q = quoted(&key);
                let sync_name = self.config.keys[Command::Synchronize].to_string();
                if let Some(owner) = self.owners.get(&key).copied().filter(|o| *o != from) {
                    let hint = if owner.ip() == from.ip() {
                        format!("is registered from {owner}, not from {from}; only the address that registered a key may synchronize it: send from {owner}, or register the key again from here")
                    } else {
                        format!("is registered from {}; only that address may synchronize it: register under another key, or stop that agent first", owner.ip())
                    };
                    return self.send_error(origin, format!("{sync_name}: agent {key_q} {hint}"));
                }
                let current = self.world.iteration();
                let Some(agent) = self.agents.get_mut(&key) else {
                    return self.send_error(
                        origin,
                        format!("{sync_name}: agent {key_q} is not registered"),
                    );
                };
                if iteration > current {
                    return self.send_error(
                        origin,
                        format!(
                            "{sync_name}: iteration {iteration} has not happened yet (the simulation is at iteration {current})"
                        ),
                    );
                }
                // The broadcast this agent must answer: an older iteration does not answer
                // it (the server would wait the whole Sync_Wait), unless it repeats the
                // last one answered (a datagram sent again, or duplicated on the way).
                if let Some(awaited) = agent.awaited.filter(|a| iteration < *a) {
                    if agent.answered == Some(iteration) {
                        return;
                    }
                    return self.send_error(
                        origin,
                        format!(
                            "{sync_name}: iteration {iteration} is older than iteration {awaited}, the broadcast agent {key_q} must answer now; answer the latest broadcast (send its <Iteration>)"
                        ),
                    );
                }
                agent.synced = agent.synced.max(iteration);
                agent.answered = Some(iteration);
            }
            AgentRequest::UnregisterAgent { key } => {
                let key_q = quoted(&key);
                let command = self.config.keys[Command::UnregisterAgent].to_string();
                match self.owners.get(&key).copied() {
                    None => self.send_error(
                        origin,
                        format!("{command}: agent {key_q} is not registered"),
                    ),
                    Some(owner) if owner != from => {
                        let hint = if owner.ip() == from.ip() {
                            format!("is registered from {owner}, not from {from}; only the address that registered a key may unregister it: send from {owner}")
                        } else {
                            format!(
                                "is registered from {}; only that address may unregister it",
                                owner.ip()
                            )
                        };
                        self.send_error(origin, format!("{command}: agent {key_q} {hint}"));
                    }
                    Some(_) => self.depart(&key, Departure::Unregistered(from)),
                }
            }
        }
    }

    /// Whether any agent may be removed for silence.
    fn tracks_silence(&self) -> bool {
        self.config.agent_silence_timeout > 0.0 || self.config.unproven_silence_timeout > 0.0
    }

    /// How long an agent receiving at `addr` may be silent before it is removed, and whether
    /// that is the unproven address's timeout; `None`: never.
    fn silence_timeout(&self, addr: SocketAddr) -> Option<(Duration, bool)> {
        let secs = |s: f64| (s > 0.0).then(|| Duration::from_secs_f64(s.min(1e6)));
        let any = secs(self.config.agent_silence_timeout).map(|d| (d, false));
        let unproven = secs(self.config.unproven_silence_timeout)
            .filter(|_| !self.config.limits.proven(addr))
            .map(|d| (d, true));
        match (any, unproven) {
            (Some(a), Some(u)) => Some(if u.0 < a.0 { u } else { a }),
            (a, u) => a.or(u),
        }
    }

    /// The silence timeout of agent `key`, if it has one.
    fn silence_timeout_of(&self, key: &str) -> Option<(Duration, bool)> {
        self.agents
            .get(key)
            .and_then(|a| self.silence_timeout(a.addr))
    }

    /// A datagram sent to `addr` was refused: the host answered ICMP port unreachable (on
    /// Linux the shell reads it from the socket's error queue, which names the address).
    /// Every agent registered at `addr` has stopped: it is removed, its departure logged and
    /// confirmed to the agents left (unless `removeunreachableagents` is off).
    pub fn handle_unreachable(&mut self, addr: SocketAddr, now: Instant) {
        self.tell_time(now);
        if !self.config.remove_unreachable_agents {
            return;
        }
        let gone: Vec<String> = self
            .agents
            .iter()
            .filter(|a| a.addr == addr)
            .map(|a| a.key.clone())
            .collect();
        for key in gone {
            self.depart(&key, Departure::Unreachable);
        }
    }

    /// Removes the agents nothing was heard from for `agentsilencetimeout`; notes when the
    /// next one may fall silent.
    fn expire_silent(&mut self, now: Instant) -> bool {
        if !self.tracks_silence() {
            return false;
        }
        if self.silence_check.is_none_or(|c| c > now) {
            return false;
        }
        let mut gone: Vec<(String, Duration, bool)> = self
            .heard
            .iter()
            .filter_map(|(k, t)| {
                let (timeout, unproven) = self.silence_timeout_of(k)?;
                (now.saturating_duration_since(*t) >= timeout)
                    .then(|| (k.clone(), timeout, unproven))
            })
            .collect();
        // In registration order, whatever the map's.
        gone.sort_by_key(|(k, ..)| self.agents.iter().position(|a| &a.key == k));
        for (key, after, unproven) in &gone {
            self.depart(
                key,
                Departure::Silent {
                    after: *after,
                    unproven: *unproven,
                },
            );
        }
        self.silence_check = self
            .heard
            .iter()
            .filter_map(|(k, t)| Some(*t + self.silence_timeout_of(k)?.0))
            .min();
        !gone.is_empty()
    }

    /// Removes agent `key`: it is sent nothing more, no iteration waits for it, and its
    /// departure is logged and confirmed to the agents left (and to whoever unregistered it).
    fn depart(&mut self, key: &str, why: Departure) {
        let Some(agent) = self.agents.remove(key) else {
            return;
        };
        if !self.agents.iter().any(|a| a.addr == agent.addr) {
            self.unasked.remove(&agent.addr);
        }
        self.views.remove(key);
        self.heard.remove(key);
        let owner = self.owners.remove(key);
        if let Some(owner) = owner {
            self.disown(owner, key);
        }
        // An agent registered from or at an unproven address: its departure is its own news.
        let limits = &self.config.limits;
        let unproven = !limits.proven(agent.addr) || owner.is_some_and(|o| !limits.proven(o));
        let reason = match &why {
            Departure::Unregistered(_) => "it unregistered".to_string(),
            Departure::Unreachable => {
                "its port is closed (ICMP port unreachable): its program has stopped".to_string()
            }
            Departure::Replaced { by } => format!(
                "agent {} registered at its address (an address is one agent: a program run again there)",
                quoted(by)
            ),
            Departure::Silent {
                after,
                unproven: false,
            } => format!(
                "nothing heard from it for {} s (configuration key agentsilencetimeout)",
                after.as_secs_f64()
            ),
            Departure::Silent {
                after,
                unproven: true,
            } => format!(
                "nothing heard from it for {} s, and its address is not proven, so the server may send it nothing more (configuration key unprovensilencetimeout)",
                after.as_secs_f64()
            ),
        };
        self.log(
            LogLevel::Info,
            format!(
                "agent {} ({}) at {} left: {reason}; {} agent(s) left",
                quoted(key),
                agent.agent_type,
                agent.addr,
                self.agents.len()
            ),
        );
        let from = match why {
            Departure::Unregistered(from) => Some(from),
            _ if unproven => Some(agent.addr),
            _ => None,
        };
        self.confirm_to(
            from,
            format!(
                "Removed agent with key {key}, port {} and ip {}: {reason}",
                agent.addr.port(),
                agent.addr.ip()
            ),
            unproven,
        );
    }

    /// Whether every agent the last synchronous broadcast went to has confirmed it.
    fn sync_satisfied(&self, iteration: u64) -> bool {
        self.agents
            .iter()
            .all(|a| a.awaited != Some(iteration) || a.synced >= iteration)
    }

    /// When the next iteration may run, if one can (initialized, not paused, no file
    /// operation under way).
    fn iteration_due(&self, now: Instant) -> Option<Instant> {
        if self.world.iteration_in_progress() {
            return Some(now);
        }
        if !self.world.can_advance() || self.waiting.is_some() || self.nobody_listens() {
            return None;
        }
        let flags = self.flags();
        if let Some((iteration, broadcast_at)) = self.sync_deadline {
            if flags.sync_mode && !self.sync_satisfied(iteration) {
                let wait = Duration::from_secs_f64(flags.sync_wait.clamp(0.0, 1e9));
                return Some(broadcast_at + wait);
            }
        }
        Some(self.next_due.unwrap_or(now))
    }

    /// Running as fast as possible (no pacing, not in step mode) with no agent registered
    /// and no observer: iterations would only heat the machine, so none run until someone
    /// registers, observes, or a pace is set.
    fn nobody_listens(&self) -> bool {
        self.pace() == 0.0
            && !self.world.modes().step_mode
            && self.agents.is_empty()
            && !self.observed
    }

    /// When [`Session::handle_timeout`] should next be called; `None` = nothing to do until a
    /// datagram, a command or a file result arrives.
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        let due = self.iteration_due(now);
        match (due, self.silence_check) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Runs the next iteration if it is due at `now` (then broadcasts it), or the next slice
    /// of it: an iteration of more than `stepsperslice` physics steps runs over several calls,
    /// so that the shell reads and answers datagrams in between (requests that change the
    /// world wait until it completes). Returns whether any work was done; while an iteration
    /// is under way, [`Session::poll_timeout`] is `now`.
    pub fn handle_timeout(&mut self, now: Instant) -> bool {
        self.tell_time(now);
        let expired = self.expire_silent(now);
        match self.iteration_due(now) {
            Some(due) if due <= now => {}
            _ => return expired,
        }
        if !self.world.iteration_in_progress() {
            self.note_sync_timeout(now);
        }
        self.stats.slices += 1;
        match self.world.advance_slice(self.config.limits.steps_per_slice) {
            Advance::Idle => return false,
            Advance::Partial => {
                if self.flags().auto_adjust {
                    self.busy_since = Some(now);
                }
                return true;
            }
            Advance::Completed => {}
        }
        self.stats.iterations += 1;
        self.report_diverged();
        self.dirty = true;
        let pace = self.pace();
        self.next_due = if pace > 0.0 {
            // At most a million seconds an iteration (a pace of 1e-300 is a world at rest,
            // not a panic converting the period).
            let period = Duration::from_secs_f64((self.world.iteration_seconds() / pace).min(1e6));
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
        if self.flags().auto_adjust {
            self.auto_adjust(now);
            self.busy_since = Some(now);
        }
        // Requests that waited for the iteration run before the next one starts.
        self.run_queue(now);
        true
    }

    /// Tells agents (as an error response, to every agent up to `maxconfirmationfanout`) and
    /// the log, once per entity, that the physics diverged on it and it was put back.
    fn report_diverged(&mut self) {
        for d in self.world.take_diverged() {
            self.stats.diverged += 1;
            if !self.non_finite.insert(d.entity) {
                continue;
            }
            let text = format!(
                "entity {}: the physics gave it a non-finite position or velocity in iteration {}; it was put back where it was before that iteration, at rest (reported once per entity)",
                d.entity, d.iteration
            );
            self.log(LogLevel::Warn, text.clone());
            self.stats.errors += 1;
            self.confirm(None, error_text(text));
        }
    }

    /// Auto-adjust (SimRob manual §2.8): simulated time tracks wall time. Iterations are paced at
    /// real time; once a second, if the simulation fell behind, each iteration takes one more
    /// physics step (fewer broadcasts per simulated second); if the shell spent less than half
    /// of the wall time on iterations (from an iteration's start to the next call that tells
    /// the time), one step fewer.
    fn auto_adjust(&mut self, now: Instant) {
        let sim = self.world.sim_time();
        let window = self.auto.get_or_insert(AutoWindow {
            started: now,
            sim_start: sim,
            busy: Duration::ZERO,
        });
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
        let sync_mode = self.flags().sync_mode;
        let eps = 1e-9;
        let mut recipients: Vec<usize> = Vec::new();
        for (i, a) in self.agents.iter_mut().enumerate() {
            if !a.asked {
                // Its address has sent nothing: it never asked for broadcasts.
                continue;
            }
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
        if recipients.is_empty() && !self.observed {
            return;
        }
        let emit = self.observed && (self.observe_every || self.snapshot_wanted);
        if recipients.is_empty() && !emit {
            // Observed, but nobody wants this iteration: no snapshot (the world changed).
            self.dirty = true;
            self.set_sync_deadline(sync_mode, iteration, now);
            return;
        }
        self.snapshot_wanted = false;
        let snapshot = self.snapshot();
        self.dirty = false;
        let max = self.config.maximum_datagram_size;
        let mut encoded: BTreeMap<&str, Vec<Vec<u8>>> = BTreeMap::new();
        let mut sent_nothing = Vec::new();
        for i in recipients {
            let agent = &self.agents[i];
            let to = agent.addr;
            let parts: Vec<Vec<u8>> = match self.filters.get(&agent.agent_type) {
                Some(Filter::Shared(filter)) => {
                    if !encoded.contains_key(agent.agent_type.as_str()) {
                        let parts = match filter.filter(&snapshot) {
                            Some(b) => split_broadcast(&b, max),
                            None => Vec::new(),
                        };
                        encoded.insert(agent.agent_type.as_str(), parts);
                    }
                    encoded[agent.agent_type.as_str()].clone()
                }
                Some(Filter::PerAgent(_)) => match self.views.get_mut(&agent.key) {
                    Some(view) => match view.view(&snapshot, &agent.info()) {
                        Some(View::Broadcast(b)) => split_broadcast(&b, max),
                        Some(View::Body(text)) if text.len() <= max => vec![text.into_bytes()],
                        Some(View::Body(text)) => {
                            self.events.push_back(Event::Log {
                                level: LogLevel::Warn,
                                message: format!(
                                    "the {} filter of agent {:?} made a body of {} bytes, more than maximumdatagramsize ({max}); not sent",
                                    agent.agent_type,
                                    agent.key,
                                    text.len()
                                ),
                            });
                            Vec::new()
                        }
                        None => Vec::new(),
                    },
                    None => Vec::new(),
                },
                None => Vec::new(),
            };
            if parts.is_empty() {
                // Sent nothing (a brain whose humanoid does not exist): lockstep does not
                // wait for an answer to a broadcast it never got.
                sent_nothing.push(i);
            } else {
                self.stats.broadcasts += 1;
            }
            for payload in parts {
                self.outbox.push_back(Transmit { to, payload });
            }
        }
        drop(encoded);
        for i in sent_nothing {
            if let Some(a) = self
                .agents
                .at_mut(i)
                .filter(|a| a.awaited == Some(iteration))
            {
                a.awaited = None;
            }
        }
        self.set_sync_deadline(sync_mode, iteration, now);
        if self.observed {
            self.events.push_back(Event::Iterated(snapshot));
        }
    }

    /// Before an iteration starts: if the session was waiting for synchronous agents and not
    /// all of them answered (the wait ran its `Sync_Wait` out), counts it and logs which
    /// agents were missing: at info the first time and then at most every
    /// [`SYNC_TIMEOUT_LOG_EVERY`] (with the count since), at debug each time.
    fn note_sync_timeout(&mut self, now: Instant) {
        let Some((iteration, _)) = self.sync_deadline else {
            return;
        };
        if !self.flags().sync_mode || self.sync_satisfied(iteration) {
            return;
        }
        // The wait is over: counted once, whatever the iteration's slices do.
        self.sync_deadline = None;
        self.stats.sync_timeouts += 1;
        let missing: Vec<String> = self
            .agents
            .iter()
            .filter(|a| a.awaited == Some(iteration) && a.synced < iteration)
            .map(|a| quoted(&a.key))
            .collect();
        let mut named = missing
            .iter()
            .take(MISSING_NAMED)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        if missing.len() > MISSING_NAMED {
            named.push_str(&format!(" and {} more", missing.len() - MISSING_NAMED));
        }
        let agent = if missing.len() == 1 {
            "agent"
        } else {
            "agents"
        };
        let wait = simrob_math::Shown::of(&self.flags().sync_wait);
        let total = self.stats.sync_timeouts;
        let what = format!(
            "lockstep: no Synchronize for iteration {iteration} from {agent} {named} within Sync_Wait ({wait} s); the next iteration runs without it"
        );
        self.log(
            LogLevel::Debug,
            format!("{what} ({total} waits timed out in all)"),
        );
        match self.sync_timeout_logged {
            None => {
                self.log(
                    LogLevel::Info,
                    format!(
                        "{what}. Further timed-out waits are logged at most every {} s and counted in the summary `simrob serve` prints when it stops; a slow agent wants a larger Sync_Wait (Set_Sync_Wait, configuration key syncwait)",
                        SYNC_TIMEOUT_LOG_EVERY.as_secs()
                    ),
                );
                self.sync_timeout_logged = Some((now, 0));
            }
            Some((at, since)) if now.saturating_duration_since(at) >= SYNC_TIMEOUT_LOG_EVERY => {
                let seconds = now.saturating_duration_since(at).as_secs();
                self.log(
                    LogLevel::Info,
                    format!(
                        "{what}; {} lockstep waits timed out in the last {seconds} s, {total} in all",
                        since + 1
                    ),
                );
                self.sync_timeout_logged = Some((now, 0));
            }
            Some((at, since)) => self.sync_timeout_logged = Some((at, since + 1)),
        }
    }

    fn set_sync_deadline(&mut self, sync_mode: bool, iteration: u64, now: Instant) {
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
    use simrob_protocol::{
        decode_server_message, BodyState, EntityInfo, EntityInfoKind, MaterialId, ServerMessage,
        Shape,
    };

    fn sample(bodies: usize, entities: usize) -> Broadcast {
        Broadcast {
            iteration: 7,
            part: None,
            bodies: (0..bodies)
                .map(|i| BodyState {
                    entity_id: EntityId(1),
                    id: i as u32,
                    shape: Shape::Box {
                        size: [0.1, 0.2, 0.3],
                    },
                    material: MaterialId(0),
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
                    entity_id: EntityId(i as u32),
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

    /// The scenario files as text, compiled in (tests do no file I/O either).
    const MATERIALS: &str = include_str!("../../../scenarios/materials.xml");
    const BALL: &str = include_str!("../../../scenarios/ball.xml");

    fn server(tweak: impl FnOnce(&mut ServerConfig)) -> Session {
        let mut config = ServerConfig::default();
        tweak(&mut config);
        let mut s = Session::new(config);
        let t0 = Instant::now();
        for file in [MATERIALS, BALL] {
            for r in simrob_protocol::decode_datagram(file.as_bytes(), &s.config.keys.clone()) {
                s.handle_command(LocalCommand::Request(r.unwrap()), t0)
                    .unwrap();
            }
        }
        s
    }

    fn agent(port: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], port))
    }

    fn send(s: &mut Session, from: SocketAddr, xml: &str, now: Instant) {
        s.handle_datagram(from, xml.as_bytes(), now);
        while s.poll_transmit().is_some() {}
    }

    fn register(s: &mut Session, port: u16, sync: bool, now: Instant) {
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
        register(&mut s, 9000, false, t0);
        assert_eq!(s.poll_timeout(t0), None);
        assert!(!s.handle_timeout(t0));
        send(&mut s, agent(9000), INIT, t0);
        assert_eq!(s.poll_timeout(t0), Some(t0));
        assert!(s.handle_timeout(t0));
    }

    #[test]
    fn nobody_listening_runs_nothing_as_fast_as_possible() {
        let mut s = server(|_| {});
        let t0 = Instant::now();
        s.handle_command(
            LocalCommand::Request(Request::Control {
                request: ControlRequest::InitializeSimulation,
                response: None,
            }),
            t0,
        )
        .unwrap();
        assert_eq!(s.poll_timeout(t0), None, "no agent, no observer, no pace");
        assert!(!s.handle_timeout(t0));
        s.set_observed(true);
        assert_eq!(s.poll_timeout(t0), Some(t0));
        s.set_observed(false);
        register(&mut s, 9000, false, t0);
        assert!(s.handle_timeout(t0), "an agent is there");
        let mut paced = server(|c| c.real_time_factor = 1.0);
        send(&mut paced, agent(9000), INIT, t0);
        assert!(paced.handle_timeout(t0), "paced runs stay cheap: they run");
    }

    #[test]
    fn a_real_time_factor_set_locally_is_confirmed_to_every_agent_and_the_viewer() {
        let mut s = server(|_| {});
        let t0 = Instant::now();
        register(&mut s, 9000, false, t0);
        let _ = texts(&mut s);
        s.set_observed(true);
        while s.poll_event().is_some() {}
        s.handle_command(LocalCommand::SetRealTimeFactor(2.0), t0)
            .unwrap();
        let said = "Set_Real_Time_Factor: Real-time factor set to 2";
        assert_eq!(texts(&mut s), [(agent(9000), said.to_string())]);
        let local: Vec<String> = std::iter::from_fn(|| s.poll_event())
            .filter_map(|e| match e {
                Event::Response(t) => Some(t),
                _ => None,
            })
            .collect();
        assert_eq!(local, [said]);
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
    fn a_pace_too_slow_for_a_clock_holds_the_world_instead_of_panicking() {
        // `realtimefactor 1e-300`: an iteration due in a million seconds, not a period too
        // long for a `Duration`.
        let mut s = server(|c| c.real_time_factor = 1e-300);
        let t0 = Instant::now();
        send(&mut s, agent(9000), INIT, t0);
        assert!(s.handle_timeout(t0));
        let due = s.poll_timeout(t0).unwrap();
        assert_eq!(due - t0, Duration::from_secs(1_000_000));
        assert!(!s.handle_timeout(t0 + Duration::from_secs(3600)));
    }

    #[test]
    fn lockstep_waits_for_every_synchronous_agent_or_sync_wait() {
        let mut s = server(|c| c.sync_wait = 0.5);
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

    fn datagram(requests: &str) -> String {
        format!("<Message><Simulation_Message>{requests}</Simulation_Message></Message>")
    }

    fn texts(s: &mut Session) -> Vec<(SocketAddr, String)> {
        std::iter::from_fn(|| s.poll_transmit())
            .filter_map(|t| match decode_server_message(&t.payload) {
                Ok(ServerMessage::Response(Response::Text(text))) => Some((t.to, text)),
                _ => None,
            })
            .collect()
    }

    use simrob_protocol::{decode_server_message, ServerMessage};

    #[test]
    fn save_and_load_wait_for_the_shell_and_keep_the_order_of_requests() {
        let mut s = server(|_| {});
        let t0 = Instant::now();
        let me = agent(9100);
        s.handle_datagram(
            me,
            datagram(
                "<Control_Request Command=\"Save\"><File>a.xml</File><Response>true</Response></Control_Request>\
                 <Control_Request Command=\"Set_World_Gravity\"><Gravity>-1</Gravity><Response>true</Response></Control_Request>",
            )
            .as_bytes(),
            t0,
        );
        // The gravity waits behind the save: nothing answered, nothing changed yet.
        assert!(texts(&mut s).is_empty());
        assert_eq!(s.world().params().gravity, -9.8);
        let (ticket, saved) = match s.poll_event() {
            Some(Event::SaveWanted {
                ticket,
                path,
                contents,
            }) => {
                assert_eq!(path, "a.xml");
                (ticket, contents)
            }
            other => panic!("expected SaveWanted, got {other:?}"),
        };
        assert_eq!(
            s.poll_timeout(t0),
            None,
            "no iteration while a file is pending"
        );
        assert_eq!(
            s.handle_file_result(FileTicket(999), FileResult::Saved("x".into()), t0),
            Err(SessionError::NoSuchTicket)
        );
        s.handle_file_result(ticket, FileResult::Saved("/d/a.xml".into()), t0)
            .unwrap();
        let answered: Vec<String> = texts(&mut s).into_iter().map(|(_, t)| t).collect();
        assert_eq!(
            answered,
            vec![
                "Save: simulation saved to /d/a.xml".to_string(),
                "Set_World_Gravity: Gravity set to -1".to_string()
            ]
        );
        assert_eq!(s.world().params().gravity, -1.0);
        // Loading the file brings the old gravity back; a failed load changes nothing.
        s.handle_datagram(
            me,
            datagram("<Control_Request Command=\"Load\"><File>a.xml</File><Response>true</Response></Control_Request>").as_bytes(),
            t0,
        );
        let Some(Event::LoadWanted { ticket, .. }) = s.poll_event() else {
            panic!("expected LoadWanted");
        };
        s.handle_file_result(ticket, FileResult::Failed("no such file".into()), t0)
            .unwrap();
        assert_eq!(
            texts(&mut s),
            vec![(me, "Error: Load: no such file".to_string())]
        );
        assert_eq!(s.world().params().gravity, -1.0);
        s.handle_datagram(
            me,
            datagram("<Control_Request Command=\"Load\"><File>a.xml</File></Control_Request>")
                .as_bytes(),
            t0,
        );
        let Some(Event::LoadWanted { ticket, .. }) = s.poll_event() else {
            panic!("expected LoadWanted");
        };
        s.handle_file_result(ticket, FileResult::Loaded(saved), t0)
            .unwrap();
        assert_eq!(s.world().params().gravity, -9.8);
    }

    #[test]
    fn one_snapshot_per_iteration_whatever_the_observers_and_agent_types() {
        let mut s = server(|_| {});
        let t0 = Instant::now();
        for (port, kind) in [
            (9201, "RobotController"),
            (9202, "GUI"),
            (9203, "PosesOnly"),
        ] {
            let xml = format!(
                "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"{kind}\"><Port>{port}</Port><IP>127.0.0.1</IP><Sync>false</Sync><Broadcast>0</Broadcast><Key>a{port}</Key></Agent_Message></Message>"
            );
            send(&mut s, agent(port), &xml, t0);
        }
        s.set_observed(true);
        send(&mut s, agent(9201), INIT, t0);
        while s.poll_event().is_some() {}
        let before = s.stats().snapshots;
        assert!(s.handle_timeout(t0));
        assert_eq!(s.stats().snapshots, before + 1);
        let sent: Vec<Transmit> = std::iter::from_fn(|| s.poll_transmit()).collect();
        assert_eq!(sent.len(), 3);
        assert!(
            sent[2].payload.len() < sent[0].payload.len(),
            "PosesOnly is smaller"
        );
        let iterated: Vec<Arc<Snapshot>> = std::iter::from_fn(|| s.poll_event())
            .filter_map(|e| match e {
                Event::Iterated(snap) => Some(snap),
                _ => None,
            })
            .collect();
        assert_eq!(iterated.len(), 1);
        assert_eq!(iterated[0].iteration, 1);
        assert_eq!(
            iterated[0].kinds.iter().map(|k| k.1).collect::<Vec<_>>(),
            vec!["Ball"]
        );
    }

    #[test]
    fn a_sampled_observer_gets_the_iterations_it_asks_for_and_the_run_is_the_same() {
        let t0 = Instant::now();
        let run = |every: bool| {
            let mut s = server(|_| {});
            s.set_observed(true);
            s.set_observe_every_iteration(every);
            for r in simrob_protocol::decode_datagram(INIT.as_bytes(), &s.config.keys.clone()) {
                s.handle_command(LocalCommand::Request(r.unwrap()), t0)
                    .unwrap();
            }
            while s.poll_event().is_some() {}
            let before = s.stats().snapshots;
            let mut iterated = Vec::new();
            for i in 1..=10u64 {
                if i == 4 || i == 9 {
                    s.want_snapshot();
                }
                assert!(s.handle_timeout(t0));
                while let Some(e) = s.poll_event() {
                    if let Event::Iterated(snap) = e {
                        iterated.push(snap.iteration);
                    }
                }
            }
            let built = s.stats().snapshots - before;
            let end = s.snapshot();
            (iterated, built, format!("{:?}", end.broadcast))
        };
        let (every, every_built, every_end) = run(true);
        let (sampled, sampled_built, sampled_end) = run(false);
        assert_eq!(every, (1..=10).collect::<Vec<u64>>());
        assert_eq!(every_built, 10);
        assert_eq!(sampled, vec![4, 9], "only the iterations asked for");
        assert_eq!(sampled_built, 2, "no snapshot for the others");
        assert_eq!(every_end, sampled_end, "observing does not change the run");
    }

    #[test]
    fn per_agent_filters_keep_state_see_the_registration_and_get_stable_seeds() {
        use crate::agents::{AgentFilter, AgentInfo, View};
        struct Counter {
            seen: u64,
        }
        impl AgentFilter for Counter {
            fn view(&mut self, snapshot: &Snapshot, agent: &AgentInfo) -> Option<View> {
                self.seen += 1;
                Some(View::Body(format!(
                    "<Seen key=\"{}\" seed=\"{}\" iteration=\"{}\">{}</Seen>",
                    agent.key, agent.seed, snapshot.iteration, self.seen
                )))
            }
        }
        let run = |order: [u16; 2]| {
            let mut s = server(|c| c.random_seed = 7);
            s.filters_mut()
                .register_per_agent("Counting", |_: &AgentInfo| Counter { seen: 0 });
            let t0 = Instant::now();
            for port in order {
                let xml = format!(
                    "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"Counting\"><Port>{port}</Port><IP>127.0.0.1</IP><Sync>false</Sync><Broadcast>0</Broadcast><Key>a{port}</Key></Agent_Message></Message>"
                );
                send(&mut s, agent(port), &xml, t0);
            }
            send(&mut s, agent(order[0]), INIT, t0);
            assert!(s.handle_timeout(t0));
            assert!(s.handle_timeout(t0));
            let mut bodies: Vec<(SocketAddr, String)> = std::iter::from_fn(|| s.poll_transmit())
                .map(|t| (t.to, String::from_utf8(t.payload).unwrap()))
                .collect();
            bodies.sort();
            bodies
        };
        let a = run([9301, 9302]);
        assert_eq!(a, run([9302, 9301]), "seeds do not depend on the order");
        assert_eq!(a.len(), 4);
        let seed = agent_seed(7, "a9301");
        assert_eq!(
            a[1].1,
            format!("<Seen key=\"a9301\" seed=\"{seed}\" iteration=\"2\">2</Seen>")
        );
    }

    #[test]
    fn sync_and_auto_adjust_are_the_sessions_and_travel_in_save_files() {
        let mut s = server(|_| {});
        let t0 = Instant::now();
        let control = |request| {
            LocalCommand::Request(Request::Control {
                request,
                response: None,
            })
        };
        for c in [
            ControlRequest::SetSyncMode(true),
            ControlRequest::SetSyncWait(0.25),
            ControlRequest::SetAutoAdjustMode(true),
        ] {
            s.handle_command(control(c), t0).unwrap();
        }
        let refused = s.handle_command(control(ControlRequest::SetSyncWait(-1.0)), t0);
        assert!(
            matches!(&refused, Err(SessionError::NotAllowed { command, .. }) if command == "Set_Sync_Wait"),
            "{refused:?}"
        );
        let flags = s.session_flags();
        assert!(flags.sync_mode && flags.auto_adjust && flags.sync_wait == 0.25);
        s.handle_command(control(ControlRequest::Save("f.xml".into())), t0)
            .unwrap();
        let Some(Event::SaveWanted {
            ticket, contents, ..
        }) = s.poll_event()
        else {
            panic!("expected SaveWanted");
        };
        s.handle_file_result(ticket, FileResult::Saved("f.xml".into()), t0)
            .unwrap();
        let mut fresh = server(|_| {});
        assert_eq!(fresh.session_flags(), SessionFlags::default());
        fresh
            .handle_command(control(ControlRequest::Load("f.xml".into())), t0)
            .unwrap();
        let Some(Event::LoadWanted { ticket, .. }) = fresh.poll_event() else {
            panic!("expected LoadWanted");
        };
        fresh
            .handle_file_result(ticket, FileResult::Loaded(contents), t0)
            .unwrap();
        assert_eq!(fresh.session_flags(), flags);
    }
}
