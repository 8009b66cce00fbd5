//! The Mobile Robot Simulator server (seed 001): Nomad-200 robots on a 2D map, one per TCP
//! connection, driven with the seed's text protocol.
//!
//! - [`protocol`]: the wire format, the framing (one message per line) and every choice the
//!   seed leaves open, plus simrob's `#` extensions.
//! - [`MrsCore`]: the sans-IO simulator — a [`simrob_flat::World`], a robot per client,
//!   request line in, reply line out.
//! - [`MrsServer`]: the TCP shell (threads, real-time or stepped clock, snapshots).
//! - [`render`]: PNG pictures of the world.
//!
//! ```no_run
//! use simrob_server::mrs::{DirMapFiles, MrsConfig, MrsCore, MrsServer, ShellOptions};
//! use simrob_server::mrs::flat::Map;
//!
//! let map = Map::parse_vector(simrob_server::mrs::EXAMPLE_MAP)?;
//! let core = MrsCore::new(map, MrsConfig::default());
//! let files = Box::new(DirMapFiles::new("maps")?);
//! let server = MrsServer::bind("127.0.0.1:0", core, files, ShellOptions::default())?;
//! println!("listening on tcp://{}", server.local_addr()?);
//! let handle = server.spawn()?; // … clients connect to handle.addr() …
//! let core = handle.stop()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod core;
pub mod protocol;
pub mod render;
mod tcp;

pub use self::core::{ClientId, MapFiles, MrsConfig, MrsCore, NoFiles, MAX_MAP_FILE};
pub use self::tcp::{write_atomically, DirMapFiles, MrsHandle, MrsServer, ShellOptions};
/// The 2D engine the simulator runs on.
pub use simrob_flat as flat;

/// The seed's 300×300 example environment (vector format), built in.
pub const EXAMPLE_MAP: &str = include_str!("../../../maps/example.txt");
