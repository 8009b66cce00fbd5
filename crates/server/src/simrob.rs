//! The SimRob server, as its manual describes it: the UDP and file shell around a
//! [`simrob_session::Session`].
//!
//! [`UdpServer`] owns the socket, the session and the [`SaveStore`]; it feeds the session
//! datagrams, local commands and the time, sends what it hands back, answers its file
//! requests and fans each iteration's snapshot out to the observers.

mod files;
mod udp;

pub use files::{DirStore, FileError, Quota, SaveStore, MAX_SAVE_FILE};
pub use simrob_session::{
    all_keys, split_broadcast, Agent, AgentFilter, AgentInfo, BroadcastFilter, Event,
    FilterRegistry, FullState, LocalCommand, Observation, Observer, PosesOnly, ServerConfig,
    Session, SessionError, Snapshot, Stats, Transmit, View, ERROR_PREFIX, MAX_DATAGRAM_SIZE,
    MIN_DATAGRAM_SIZE,
};
pub use udp::{set_receive_buffer, UdpServer, DEFAULT_RECEIVE_BUFFER};

/// Why the server could not start or apply its scenario.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A request of the start-up scenario was refused; the ones after it were not applied.
    #[error("request {request}: {source}")]
    Scenario {
        /// Which request, counted from 1.
        request: usize,
        /// Why the session refused it.
        #[source]
        source: SessionError,
    },
}
