//! # simrob-session
//!
//! The SimRob session, sans-IO: it owns the world, the agents, lockstep, pacing,
//! auto-adjust, broadcasts (cut per agent type by filters, split over datagrams) and
//! responses. Datagrams, local commands, file results and the time go in; datagrams, the
//! next deadline and [`Event`]s come out.
//!
//! **What it is not:** no sockets, no files, no threads, no clock. It never calls
//! `Instant::now()`: every entry point takes `now` from its caller, so a test drives it with
//! made-up instants and a shell (the UDP server in `simrob-server`) with the real ones. A
//! Save or Load becomes an [`Event::SaveWanted`] / [`Event::LoadWanted`] that the shell
//! answers with [`Session::handle_file_result`]; nothing else runs in between, so requests
//! keep their order.
//!
//! ```
//! use std::time::Instant;
//! use simrob_protocol::{ControlRequest, EntityId, EntitySpec, Request};
//! use simrob_session::{Event, LocalCommand, ServerConfig, Session};
//!
//! let mut session = Session::new(ServerConfig::default());
//! session.set_observed(true);
//! let now = Instant::now();
//! let control = |request| LocalCommand::Request(Request::Control { request, response: None });
//! session.handle_command(control(ControlRequest::CreateEntity(EntitySpec::Ball {
//!     entity_id: EntityId(1), material: None, mass: Some(0.6),
//!     position: [0.0, 0.0, 1.0], rotation: [0.0; 3], radius: 0.03,
//! })), now).unwrap();
//! session.handle_command(control(ControlRequest::InitializeSimulation), now).unwrap();
//! assert_eq!(session.poll_timeout(now), Some(now)); // as fast as possible: due at once
//! assert!(session.handle_timeout(now));
//! let iterated = std::iter::from_fn(|| session.poll_event())
//!     .find_map(|e| match e { Event::Iterated(s) => Some(s), _ => None })
//!     .unwrap();
//! assert_eq!(iterated.iteration, 1);
//! assert!(iterated.broadcast.entities[0].position[2] < 1.0); // falling
//! ```
#![warn(missing_docs)]

mod agents;
mod config;
mod fast_request;
pub mod keydoc;
mod limits;
mod quote;
mod session;
mod snapshot;
pub mod viewer;

pub use agents::humanoid;
pub use agents::{
    agent_seed, Agent, AgentFilter, AgentInfo, BroadcastFilter, Filter, FilterRegistry, FullState,
    PosesOnly, View,
};
pub use config::{all_keys, ConfigError, ServerConfig, MAX_DATAGRAM_SIZE, MIN_DATAGRAM_SIZE};
pub use limits::{
    Amplification, LimitValueError, Limits, Refusal, Trusted, WorldAccess,
    DEFAULT_MAX_SCENARIO_BYTES,
};
pub use session::{
    split_broadcast, Event, FileResult, FileTicket, LocalCommand, LogLevel, Session, SessionError,
    Stats, Transmit, ERROR_PREFIX, SYNC_TIMEOUT_LOG_EVERY,
};
pub use snapshot::{Observation, Observer, Snapshot, SnapshotModes};
pub use viewer::{ViewerGuard, ViewerKey, ViewerValueError, VIEWER_KEYS};
