//! # simrob-flat
//!
//! simrob's 2D world engine: the ground the Mobile Robot Simulator (`simrob mrs`) and the
//! many-robot swarm layer stand on. It is a library of plain data and pure functions —
//! **no I/O**: no files, sockets, threads or clocks. Callers read files and hand in bytes,
//! and advance time by calling [`FlatWorld::step`].
//!
//! ## Units and frame
//!
//! Inches (one map pixel = one inch), seconds, degrees. x grows to the right and **y grows
//! downwards** (image coordinates), so a heading `a` points along `(cos a, sin a)` and
//! increasing headings turn **clockwise** on screen. A positive turn rate turns right.
//!
//! ## What is in it
//!
//! - [`Map`]: static obstacles. Read the vector text format with [`Map::parse_vector`]
//!   (`width height`, then `x1 y1 x2 y2` rectangles), a BMP with [`Map::from_bmp`] (exactly
//!   black pixels are obstacles), or either with [`Map::from_bytes`]; overlay a vector map
//!   with [`Map::merge`]. The map's border is a wall. A uniform grid of its own (cells of
//!   [`VECTOR_CELL_SIZE`] in for vector maps, [`DEFAULT_CELL_SIZE`] for bitmaps) lists the
//!   rectangles per cell and each cell's clearance; a bitmap is also kept as 8 × 8 pixel
//!   tiles (one `u64` each) with a clearance per tile. Queries are exact — rectangles are
//!   intersected as rectangles, pixels as unit squares; the grid only decides what to test:
//!   - [`Map::cast_ray`]: distance to the first obstacle along a [`Ray`] (DDA over the
//!     grid, jumping whole blocks of empty cells or tiles; pixel DDA only inside tiles
//!     that hold obstacle pixels);
//!   - [`Map::sweep_disc`]: how far a disc can move before touching anything;
//!   - [`Map::for_each_contact`], [`Map::disc_overlaps`], [`Map::for_each_obstacle_in`].
//! - [`RobotModel`] ([`RobotModel::NOMAD_200`]: radius 10 in, 16 sonars reading 5–110 in
//!   from the surface, 20 bumpers), [`FlatPose`], [`Velocity`] (forward in/s, turn deg/s), and
//!   the robot functions over a map: [`arc_motion`], [`move_disc`], [`sonar_reading`],
//!   [`bumper_mask`].
//! - [`FlatWorld`]: robots on a map, advanced in fixed steps in id order (deterministic), with
//!   robot–robot collisions; sonar sees other robots and bumpers feel them.
//!
//! ```
//! use simrob_flat::{Map, FlatPose, RobotModel, Velocity, FlatWorld};
//!
//! let map = Map::parse_vector("300 300\n0 0 300 1\n0 298 300 300\n0 0 1 300\n298 0 300 300\n")?;
//! let mut world = FlatWorld::new(map);
//! let id = world.add_robot(RobotModel::NOMAD_200, FlatPose::new(150.0, 150.0, 0.0))?;
//! // Sonar 0 looks right (+x): the wall's face is at x = 298, the robot's surface at 160.
//! assert_eq!(world.sonar(id, 0), Some(110.0)); // 138 in, clamped to the 110 in range
//! world.set_velocity(id, Velocity::new(50.0, 0.0));
//! for _ in 0..1000 {
//!     world.step(); // 10 s at 100 Hz: it drives into the wall and stops there
//! }
//! let robot = world.robot(id).ok_or("robot")?;
//! assert!((robot.pose.x - 288.0).abs() < 1e-3);
//! assert_eq!(robot.bumpers, 1); // bumper 0, at the front, is closed
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![warn(missing_docs)]

pub mod geom;
pub mod map;
pub mod robot;
pub mod world;

pub use geom::{normalize_deg, Ray, Rect, Vec2};
pub use map::{
    Bitmap, Map, MapError, DEFAULT_CELL_SIZE, MAX_MAP_SIDE, MAX_RECTS, VECTOR_CELL_SIZE,
};
pub use robot::{
    arc_motion, bumper_mask, move_disc, sonar_distance, sonar_reading, FlatPose, RobotModel,
    Velocity, CONTACT_SKIN,
};
pub use world::{FlatWorld, PlaceError, Robot, RobotId, DEFAULT_TIMESTEP};
