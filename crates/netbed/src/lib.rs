//! # simrob-netbed
//!
//! A lossy-network test bed in user space, on loopback only (for kernels without `netem`):
//!
//! - [`UdpRelay`]: sits between SimRob agents and the server and drops, duplicates, reorders
//!   and delays datagrams in each direction. Every choice is drawn from a seeded random
//!   stream ([`Impairment`]): the `n`-th datagram each way of each agent meets the same fate
//!   in every run, so an impaired run can be repeated.
//! - [`TcpRelay`]: sits between TCP clients (the Mobile Robot Simulator, the coordination
//!   layer) and their server and delays, stalls or cuts the connections on demand.
//!
//! [`fate`] and [`flows`] are the sans-IO parts (fates, the release queue, which agent has
//! which flow and when it is forgotten), tested without sockets or clocks.
//! The tests of this crate run the SimRob server through the relay; `examples/lossy.rs`
//! measures it (see `docs/network.md`).
//!
//! ```no_run
//! use std::time::Duration;
//! use simrob_netbed::{Impairment, UdpRelay};
//!
//! let server = "127.0.0.1:5005".parse().unwrap();
//! let lossy = Impairment { loss: 0.05, delay: Duration::from_millis(50),
//!     jitter: Duration::from_millis(20), seed: 1, ..Impairment::clean() };
//! let relay = UdpRelay::start(server, lossy, lossy)?;
//! println!("agents send to {}", relay.addr());
//! # Ok::<(), simrob_netbed::NetbedError>(())
//! ```
#![warn(missing_docs)]

pub mod fate;
pub mod flows;
mod tcp;
mod udp;

pub use fate::{Impairment, LinkStats, MAX_HELD, MAX_QUEUED_BYTES, REORDER_HOLD};
pub use flows::DEFAULT_FLOW_IDLE;
pub use tcp::{TcpRelay, TcpStats, CHUNK, DEFAULT_MAX_CONNECTIONS, MAX_CONNECTIONS};
pub use udp::{rewrite_port, RelayStats, UdpLimits, UdpRelay, MAX_DATAGRAM, MAX_FLOWS};

use std::net::SocketAddr;
use std::time::Duration;

/// Open files a process needs besides its relay's sockets (standard streams, the listening
/// socket, the poller, a terminal): what [`raise_open_files`] is asked for on top.
pub const OTHER_OPEN_FILES: u64 = 64;

/// Raises this process's soft limit on open files (`ulimit -n`) to `needed`, as far as its
/// hard limit allows (a relay holds a socket for every UDP agent, two for every TCP
/// connection; a soft limit of 1,024, common, would run out before [`MAX_FLOWS`] agents).
/// Returns the soft limit in force afterwards, `None` when there is none.
pub fn raise_open_files(needed: u64) -> Option<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let now = getrlimit(Resource::Nofile);
    let soft = now.current?;
    let target = now.maximum.map_or(needed, |hard| needed.min(hard));
    if target <= soft {
        return Some(soft);
    }
    let raised = Rlimit {
        current: Some(target),
        maximum: now.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => Some(target),
        Err(_) => Some(soft),
    }
}

/// The open files `count` relayed agents or connections need, `each` sockets apiece, with
/// [`OTHER_OPEN_FILES`] on top (what [`raise_open_files`] is asked for).
pub fn open_files_needed(count: usize, each: u64) -> u64 {
    (count as u64)
        .saturating_mul(each)
        .saturating_add(OTHER_OPEN_FILES)
}

/// Why sockets may run out, for a message: the process's open-files limits and what to do
/// when `agents` agents at once are wanted.
pub(crate) fn open_files_hint(agents: usize) -> String {
    use rustix::process::{getrlimit, Resource};
    let now = getrlimit(Resource::Nofile);
    let shown = |l: Option<u64>| l.map_or_else(|| "unlimited".to_string(), |n| n.to_string());
    let needed = open_files_needed(agents, 1);
    format!(
        "this process may open {} files (`ulimit -n`; hard limit {}), and {agents} agents \
         need some {needed}; raise the limit (`ulimit -n {needed}`, within the hard limit or \
         as root) before starting the relay, or relay fewer agents at once (--max-flows)",
        shown(now.current),
        shown(now.maximum),
    )
}

/// Why a relay could not start.
#[derive(Debug, thiserror::Error)]
pub enum NetbedError {
    /// The bed works on loopback addresses only.
    #[error("{0} is not a loopback address: the test bed only relays on this machine")]
    NotLoopback(SocketAddr),
    /// A probability outside 0–1.
    #[error("{name} {}: a probability between 0 and 1", simrob_math::Shown::of(.value))]
    Probability {
        /// Which one.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// Jitter larger than the delay (delays would be negative).
    #[error("jitter {jitter:?} is larger than the delay {delay:?}")]
    Jitter {
        /// The jitter given.
        jitter: Duration,
        /// The delay given.
        delay: Duration,
    },
    /// A server address with port 0, where nothing can be reached.
    #[error("{0}: port 0 is no server's port")]
    NoPort(SocketAddr),
    /// The server's address is the relay's own: it would relay to itself without end.
    #[error("the server's address {0} is the relay's own: it would relay to itself")]
    Loop(SocketAddr),
    /// A relay's limit of 0: it could relay nothing.
    #[error("limits {0:?}: each must be at least 1")]
    Limit(crate::udp::UdpLimits),
    /// A socket or thread could not be had.
    #[error("network: {0}")]
    Io(#[from] std::io::Error),
}

/// Checks that a relay on `front` may relay to `server`: the server has a port, and it is
/// not the relay's own address (a relay sending to itself floods itself).
pub fn check_ends(front: SocketAddr, server: SocketAddr) -> Result<(), NetbedError> {
    if server.port() == 0 {
        return Err(NetbedError::NoPort(server));
    }
    let same_ip = front.ip() == server.ip() || front.ip().is_unspecified();
    if front.port() == server.port() && same_ip {
        return Err(NetbedError::Loop(server));
    }
    Ok(())
}
