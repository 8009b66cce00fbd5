//! The SimRob server (seed 000): agents over UDP, lockstep, broadcasts, Save/Load.
//!
//! [`SimServer`] is the sans-IO core; [`UdpServer`] the socket loop around it.

mod agents;
mod config;
mod core;
mod files;
mod udp;

pub use agents::{Agent, BroadcastFilter, FilterRegistry, FullState, PosesOnly};
pub use config::{all_keys, ServerConfig, MAX_DATAGRAM_SIZE, MIN_DATAGRAM_SIZE};
pub use core::{split_broadcast, SimServer, Stats, Transmit, ERROR_PREFIX};
pub use files::{DirStore, SaveStore, MAX_SAVE_FILE};
pub use udp::{LoopControl, Observer, UdpServer};
