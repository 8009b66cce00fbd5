//! # simrob-mrs
//!
//! The Mobile Robot Simulator: Nomad-200 robots on a 2D map, one per TCP connection, driven
//! with a one-line text protocol. This crate holds all of it, server and client sharing one
//! codec:
//!
//! - [`protocol`]: the wire format — requests parsed and written, replies written and parsed —
//!   the framing (one message per line), every choice the protocol leaves open, and simrob's
//!   `#` extensions. No I/O.
//! - [`MrsCore`]: the sans-IO simulator — a [`simrob_flat::FlatWorld`], a robot per client,
//!   request line in, reply line out.
//! - [`MrsServer`]: the TCP shell (one thread, real-time or stepped clock, snapshots).
//! - [`MrsClient`]: the component a robot controller uses to talk to a server, and
//!   [`wander::Wander`], a wandering controller built on it.
//! - [`render`]: PNG pictures of the world.
//!
//! It is not the SimRob UDP simulator (see `simrob-session`) and has no 3D physics: the world
//! is the 2D engine of `simrob-flat`.
//!
//! ```no_run
//! use simrob_mrs::{DirMapFiles, MrsClient, MrsConfig, MrsCore, MrsServer, ShellOptions};
//! use simrob_mrs::flat::Map;
//!
//! let map = Map::parse_vector(simrob_mrs::EXAMPLE_MAP)?;
//! let core = MrsCore::new(map, MrsConfig::default());
//! let files = Box::new(DirMapFiles::new("maps")?);
//! let server = MrsServer::bind("127.0.0.1:0", core, files, ShellOptions::default())?;
//! println!("listening on tcp://{}", server.local_addr()?);
//! let handle = server.spawn()?;
//! let mut robot = MrsClient::connect_addr(handle.addr())?;
//! robot.set_vel(10.0, 0.0)?;
//! let core = handle.stop()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

mod client;
mod core;
pub mod protocol;
pub mod render;
mod tcp;
pub mod wander;

pub use self::client::{MrsClient, MrsError, BUMPERS, DEFAULT_PORT, DEFAULT_TIMEOUT, SONARS};
pub use self::core::{
    check_map_size, check_png_name, printable, ClientId, CoreError, FileError, MapFiles, MrsConfig,
    MrsCore, NoFiles, DEFAULT_MAX_CLIENTS, DEFAULT_MAX_MESSAGE_LOG_BYTES,
    DEFAULT_MAX_MESSAGE_LOG_RATE, DEFAULT_MAX_SNAPSHOT_SIDE, DEFAULT_MAX_STEP, MAX_MAP_FILE,
    MAX_MAP_SIDE,
};
pub use self::tcp::{
    check_file_name, write_atomically, DirMapFiles, MrsHandle, MrsServer, ShellHook, ShellOptions,
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAKE_ROOM_AFTER, DEFAULT_MAX_OUTPUT_BYTES, MAX_FILE_NAME,
};
/// The 2D engine the simulator runs on.
pub use simrob_flat as flat;

/// The 300×300 example environment of the Mobile Robot Simulator (vector format), built in.
pub const EXAMPLE_MAP: &str = include_str!("../../../maps/example.txt");
