//! simrob-swarm: many robots at high abstraction on a 2D world — the HMR Sim model built for
//! tens of thousands of robots.
//!
//! * **Entities and components** ([`SwarmWorld`]): entities are ids; components are plain data
//!   in struct-of-arrays columns and can be added or removed at run time.
//! * **Systems** ([`System`]): fixed-rate systems run every frame at `fps`; reactive
//!   systems handle events from a time-ordered queue ([`EventQueue`], ties broken by
//!   scheduling order). A `duration` or a `KillSwitch` event ends a run. Same scenario and
//!   seed, same run, bit for bit.
//! * **Bundled systems:** movement (the only writer of poses) and the spatial grid,
//!   collision with a stop-on-collision reaction, proximity sensors, claw, battery,
//!   navigation ([`nav`]: POI and map-path graph, A*, path following), scripts
//!   ([`script`]), the clock, and the Seer ([`seer`]: snapshots for recorders and viewers).
//! * **Scenarios** ([`scenario`]): TOML or JSON files with maps drawn in draw.io
//!   ([`drawio`]), or generated (the drone swarm of [`drones`], the [`warehouse`]).
//!
//! Units are map units (draw.io pixels), x right, y down, angles in radians. The crate does
//! no I/O of its own beyond reading the scenario files it is asked to load: recorders
//! write to any `std::io::Write`, and the wall clock is handed in by the caller.
//!
//! ```
//! use simrob_swarm::scenario::{Scenario, Overrides};
//!
//! let text = r#"
//!     name = "two robots"
//!     fps = 10
//!     duration = 30
//!     [world]
//!     width = 200
//!     height = 100
//!     paths = [[[20, 50], [180, 50]]]
//!     pois = { left = [20, 50], right = [180, 50] }
//!     [[entities]]
//!     type = "robot"
//!     name = "r1"
//!     position = [20, 50]
//!     components = { Script = ["Go right", "Go left"] }
//! "#;
//! let scenario = Scenario::from_toml_str(text, std::path::Path::new(".")).unwrap();
//! let mut sim = scenario.build(&Overrides::default()).unwrap();
//! let summary = sim.run();
//! assert_eq!(summary.scripts_done, 1);
//! ```

#![warn(missing_docs)]

pub mod contacts;
pub mod drawio;
pub mod drones;
pub mod ecs;
pub mod event;
/// 2D geometry: the 2D engine's ([`simrob_flat::geom`]), shared with the Mobile Robot
/// Simulator.
pub use simrob_flat::geom;
pub mod grid;
pub mod nav;
pub mod orca;
pub mod par;
pub mod scenario;
pub mod script;
pub mod seer;
pub mod sim;
pub mod systems;
pub mod warehouse;

#[cfg(test)]
mod pinned;

pub use ecs::{
    Battery, Claw, Column, EntityId, Item, Navigator, Path, Proximity, Resource, Resources,
    SwarmPose, SwarmWorld, Velocity,
};
pub use event::{Event, EventQueue, Payload, Tag};

/// Map units per metre: a map unit is a centimetre. The model itself works in map units
/// (positions, sizes, speeds per second); the 3D viewer draws a swarm with this scale and
/// `simrob coord compare` reports travel in metres with it.
pub const MAP_UNITS_PER_METRE: f64 = 100.0;
pub use geom::Shape;
pub use sim::{
    Ctx, ErrorRecord, InstructionDef, Outcome, SimConfig, Simulation, Stats, Summary, System,
};
