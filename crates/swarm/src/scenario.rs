//! Scenario files: a TOML or JSON description of a run, with an optional draw.io map.
//!
//! ```toml
//! name = "hospital"
//! map = "hospital.drawio"     # relative to this file, or to `context` (optional)
//! context = "."               # HMR Sim's: the folder `map` is in, relative to this file
//! fps = 10                    # also `FPS`; 0.01 to 1000
//! duration = 600              # simulated seconds
//! seed = 7
//! end_when_done = true        # kill switch once every script / drone is done
//!
//! [world]                     # world-level components (also `simulationComponents`)
//! width = 800                 # default: the map's page, or the generator's (at least its layout)
//! height = 500
//! cell_size = 20              # spatial grid
//! collision = true
//! stop_on_collision = true    # every robot stops when it collides, generated ones too
//!                             # (left out: all but the warehouse's robots stop)
//! snapshot_period = 0.1       # Seer; at least 0.001
//! default_handler = ["Abort"] # for script errors without a handler
//! nav = { merge_radius = 8, max_off_path = 60, extend = true }
//! paths = [[[20, 50], [180, 50]]]      # extra map-paths (polylines)
//! pois = { dock = [20, 50] }           # extra POIs
//! walls = [[0, 0, 800, 10]]            # extra walls: x, y, width, height
//! obstacles = "maze.txt"               # a 2D-engine obstacle map (vector text or BMP)
//!
//! [generator]                 # optional: generated robots and map
//! kind = "drone-swarm"        # or "warehouse"
//! robots = 200               # at most 50,000,000 drones, 2,000,000 warehouse robots
//!
//! [[entities]]                # extra entities (also `extraEntities`)
//! type = "robot"
//! name = "r1"
//! position = [20, 50]
//! size = [10, 10]             # or radius = 5
//! components = { Claw = { range = 20 }, Script = ["Go dock"] }
//! ```
//!
//! # HMR Sim's `simulation.json`
//! Its keys carry over: `map`, `context` (the folder the map is in, here relative to the
//! scenario file), `FPS`, `duration`, `simulationComponents` (`[world]`) and `extraEntities`
//! (`[[entities]]`), their values in this crate's terms; `DLW` (its walls' line width) and
//! `verbose` are accepted and ignored.
//!
//! # Map shapes
//! In a draw.io map, a shape's `type` annotation decides what it becomes:
//! `robot` (or `drone`) — a moving robot (pose at the shape's centre, a box collider, or a
//! disc for ellipses, a velocity, a navigator); `poi` — a point of interest named by its
//! `name` annotation or label; `item` (or HMR Sim's `pickable`) — something a claw can carry
//! (named likewise); `wall` — a static obstacle; `ignore` — nothing. Any other type is
//! refused. Shapes without annotations are walls, except text.
//!
//! # The world's bounds
//! The world spans x from 0 to its width and y from 0 to its height; moving robots are kept
//! inside. A robot, drone, item or POI (listed or drawn) whose position is outside, or a
//! map-path point outside, is refused; walls may reach outside.
//! Annotations `component_NAME` add components, their value in JSON (HMR Sim's style):
//! `component_Script='["Go storage", "Grab medicine", "Go room1", "Drop"]'`.
//! Edges are map-paths.
//!
//! # Components
//! | name | value |
//! |---|---|
//! | `Velocity` | `[vx, vy]` or `{}` — makes an entity a mover |
//! | `Collider` | `{ box = [w, h] }` or `{ radius = r }` |
//! | `Navigator` | speed (number) or `{ speed = s, keep_clear = gap }` |
//! | `Proximity` | `{ beams = 12, range = 60, period = 1 }` |
//! | `Claw` | `{ range = 20, capacity = 1, duration = 0.5 }` or `[range, capacity]` |
//! | `Battery` | `{ capacity = 100, charge = 100, idle_drain = 0.01, move_drain = 0.01 }` |
//! | `Item` | `{}` |
//! | `StopOnCollision` | `true` / `false` |
//! | `Script` | `["Go a", …]` or `{ instructions = […], handlers = { Unreachable = […] }, default_handler = […] }` |

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use simrob_files::read_bounded;
use simrob_math::Shown;

use crate::drawio::{self, DrawioMap, MapShape};
use crate::drones::{self, DroneController, SwarmParams};
use crate::ecs::{
    Battery, Claw, Column, EntityId, Item, NameTaken, Navigator, Proximity, SwarmPose, SwarmWorld,
    Velocity,
};
use crate::geom::Shape;
use crate::nav::{NavMap, DEFAULT_SPEED};
use crate::script::{Instr, Script, ScriptError, ScriptSystem};
use crate::sim::{InstructionError, SimConfig, Simulation, MAX_THREADS};
use crate::systems::{
    BatterySystem, ClawSystem, CollisionSystem, MovementSystem, ProximitySystem, StopOnCollision,
};
use crate::warehouse::{self, WarehouseParams};

/// A scenario error: what is wrong and where.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ScenarioError(pub String);

/// Why an entity of a scenario (listed in it or drawn in its map) was refused; the loader puts
/// the file and the entity before it in a [`ScenarioError`].
#[derive(Debug, thiserror::Error)]
pub enum EntityError {
    /// The entity's name is already taken by another entity.
    #[error(transparent)]
    Name(#[from] NameTaken),
    /// A listed POI without `name`.
    #[error("a POI needs a name")]
    PoiWithoutName,
    /// A POI drawn in the map with neither a `name` annotation nor a label.
    #[error("a POI needs a name (a `name` annotation or a label)")]
    MapPoiWithoutName,
    /// A position or heading that is not a finite number.
    #[error("position and heading must be finite numbers")]
    NotFinite,
    /// A radius or size that is not positive.
    #[error("radius and size must be positive")]
    NotPositive,
    /// A wall whose place is not finite or whose width or height is not positive (a wall
    /// of negative size stopped nothing).
    #[error(
        "a wall needs a finite position and a positive width and height, found position \
         ({x}, {y}), size {w} × {h}"
    )]
    BadWall {
        /// The wall's x (its left side, or its centre for a listed entity).
        x: f64,
        /// The wall's y (its top, or its centre for a listed entity).
        y: f64,
        /// Its width.
        w: f64,
        /// Its height.
        h: f64,
    },
    /// A position outside the world (x from 0 to its width, y from 0 to its height).
    #[error(
        "position ({}, {}) is outside the {} × {} world",
        Shown::of(.x),
        Shown::of(.y),
        Shown::of(.width),
        Shown::of(.height)
    )]
    Outside {
        /// The position's x, map units.
        x: f64,
        /// The position's y, map units.
        y: f64,
        /// The world's width, map units.
        width: f64,
        /// The world's height, map units.
        height: f64,
    },
    /// A `type` the loader does not know (`known`: the types it knows).
    #[error("unknown type {found:?} (known: {known})")]
    UnknownType {
        /// The type found.
        found: String,
        /// The types there are.
        known: &'static str,
    },
    /// A map shape's `component_NAME` annotation that is not JSON.
    #[error("{key}: the value must be JSON ({error}), found {found:?}")]
    ComponentJson {
        /// The annotation's key (`component_NAME`).
        key: String,
        /// The annotation's value as drawn.
        found: String,
        /// Why it is not JSON.
        #[source]
        error: serde_json::Error,
    },
    /// A component's value (`at`: `components.NAME` or the annotation's key).
    #[error("{at}: {source}")]
    Component {
        /// Where the value was given: `components.NAME` or the annotation's key.
        at: String,
        /// Why the value was refused.
        #[source]
        source: ComponentError,
    },
}

/// Why a component's value (scenario syntax, see [`add_component`]) was refused.
#[derive(Debug, thiserror::Error)]
pub enum ComponentError {
    /// A component name this crate does not know (the name).
    #[error("unknown component {0:?} (known: {COMPONENTS})")]
    Unknown(String),
    /// A field the component does not take.
    #[error("unknown field {field:?} (expected: {expected})")]
    UnknownField {
        /// The field found.
        field: String,
        /// The fields the component takes.
        expected: String,
    },
    /// A value that should be a table (TOML) or object (JSON): what was found.
    #[error("expected a table/object, found {0}")]
    NotATable(String),
    /// A field that should be a number.
    #[error("{field} must be a number, found {found}")]
    NotANumber {
        /// The field.
        field: String,
        /// The value found instead.
        found: String,
    },
    /// A value that should be `true` or `false`: what was found.
    #[error("expected true or false, found {0}")]
    NotABool(String),
    /// A value that should be a list of strings: what it is for.
    #[error("{0} must be a list of strings")]
    NotStrings(String),
    /// A list element that should be a string.
    #[error("{what}: {found} is not a string")]
    NotAString {
        /// What the value is for.
        what: String,
        /// The value found instead.
        found: String,
    },
    /// A value outside what the component allows: the rule it breaks.
    #[error("{0}")]
    Rule(&'static str),
    /// A value outside what the component allows: the rule, and what was found.
    #[error("{rule}, found {found}")]
    RuleFound {
        /// The rule the value breaks.
        rule: &'static str,
        /// The value found.
        found: String,
    },
    /// A `Script` component whose script does not parse.
    #[error(transparent)]
    Script(Box<ScriptError>),
}

impl From<ScriptError> for ComponentError {
    fn from(e: ScriptError) -> Self {
        ComponentError::Script(Box::new(e))
    }
}

/// Why a script of the built world was refused (`entity`: its label).
#[derive(Debug, thiserror::Error)]
pub enum ScriptCheckError {
    /// An unknown instruction or a wrong number of arguments.
    #[error("entity {entity}: {source}")]
    Script {
        /// The entity's label.
        entity: String,
        /// Why the script was refused.
        #[source]
        source: Box<ScriptError>,
    },
    /// Arguments that do not fit the world (an instruction's own check).
    #[error("entity {entity}: {instruction}: {source}")]
    Instruction {
        /// The entity's label.
        entity: String,
        /// The instruction's name.
        instruction: String,
        /// Why the arguments were refused.
        #[source]
        source: InstructionError,
    },
}

/// The most spatial-grid cells a world may have (its width × height over `world.cell_size`
/// squared) by default ([`BuildLimits::max_grid_cells`]); a larger world is refused when the
/// run is built.
pub const MAX_GRID_CELLS: usize = 1 << 22;

/// The most drones the drone-swarm generator makes (`robots`, `--robots`): some 300 bytes
/// each, so about 15 GB at the limit. More is refused before anything is built. The default
/// of [`BuildLimits::max_drones`].
pub const MAX_DRONES: usize = 50_000_000;

/// The most robots the warehouse generator makes (`robots`, `--robots`): some 5 KB each with
/// their scripts, so about 10 GB at the limit. More is refused before anything is built.
/// The default of [`BuildLimits::max_warehouse_robots`].
pub const MAX_WAREHOUSE_ROBOTS: usize = 2_000_000;

/// The most robots a [`BuildLimits`] lets a generator make, whatever it says: a world's
/// entities are numbered in 32 bits, and a warehouse robot brings some 2.5 entities (its tote,
/// its share of shelves and stations).
pub const MAX_ROBOTS_SETTABLE: usize = 1_000_000_000;

/// The most grid cells a [`BuildLimits`] lets a world have, whatever it says: the grid
/// numbers its columns and rows in 32 bits.
pub const MAX_GRID_CELLS_SETTABLE: usize = u32::MAX as usize;

/// What a scenario may make when it is built ([`Overrides::limits`]): the robots of its
/// generator and the cells of its world's spatial grid, each guarding memory, and how a user
/// raises them, for the message of a scenario over one. The default is [`MAX_DRONES`],
/// [`MAX_WAREHOUSE_ROBOTS`] and [`MAX_GRID_CELLS`], its messages naming no way to raise them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BuildLimits {
    /// The most drones of the generated drone swarm (at most [`MAX_ROBOTS_SETTABLE`]).
    pub max_drones: usize,
    /// The most robots of the generated warehouse (at most [`MAX_ROBOTS_SETTABLE`]).
    pub max_warehouse_robots: usize,
    /// The most cells of the world's spatial grid (at most [`MAX_GRID_CELLS_SETTABLE`]).
    pub max_grid_cells: usize,
    /// How to raise the robots' limits, in the caller's words (`--max-robots N`): the end of
    /// the message "raise it with …"; `None`: the message says no more than the limit.
    pub raise_robots_with: Option<&'static str>,
    /// How to raise the grid's limit, in the caller's words (`--max-grid-cells N`).
    pub raise_grid_cells_with: Option<&'static str>,
}

impl Default for BuildLimits {
    /// [`MAX_DRONES`], [`MAX_WAREHOUSE_ROBOTS`], [`MAX_GRID_CELLS`].
    fn default() -> Self {
        BuildLimits {
            max_drones: MAX_DRONES,
            max_warehouse_robots: MAX_WAREHOUSE_ROBOTS,
            max_grid_cells: MAX_GRID_CELLS,
            raise_robots_with: None,
            raise_grid_cells_with: None,
        }
    }
}

impl BuildLimits {
    /// The defaults with `max_robots` (the drone swarm's and the warehouse's alike) and
    /// `max_grid_cells` in their place when given, a scenario over one told to raise it with
    /// `raise_robots_with` or `raise_grid_cells_with` (the caller's words: `--max-robots N`,
    /// `max_robots=`). A value of 0, or above [`MAX_ROBOTS_SETTABLE`] or
    /// [`MAX_GRID_CELLS_SETTABLE`], is an error naming it in those words.
    pub fn given(
        max_robots: Option<usize>,
        max_grid_cells: Option<usize>,
        raise_robots_with: &'static str,
        raise_grid_cells_with: &'static str,
    ) -> Result<BuildLimits, ScenarioError> {
        let check = |n: Option<usize>, most: usize, name: &str| match n {
            Some(n) if n == 0 || n > most => Err(ScenarioError(format!(
                "{name} {n}: must be from 1 to {most}"
            ))),
            _ => Ok(()),
        };
        check(max_robots, MAX_ROBOTS_SETTABLE, raise_robots_with)?;
        check(
            max_grid_cells,
            MAX_GRID_CELLS_SETTABLE,
            raise_grid_cells_with,
        )?;
        let d = BuildLimits::default();
        Ok(BuildLimits {
            max_drones: max_robots.unwrap_or(d.max_drones),
            max_warehouse_robots: max_robots.unwrap_or(d.max_warehouse_robots),
            max_grid_cells: max_grid_cells.unwrap_or(d.max_grid_cells),
            raise_robots_with: Some(raise_robots_with),
            raise_grid_cells_with: Some(raise_grid_cells_with),
        })
    }
}

/// `: raise it with …` after a limit's message, when the caller says how.
fn raise_it(with: Option<&str>) -> String {
    with.map(|w| format!(": raise it with {w}"))
        .unwrap_or_default()
}

/// The fewest frames a simulated second (`fps`): a frame of at most 100 s.
pub const MIN_FPS: f64 = 0.01;

/// The most frames a simulated second (`fps`; HMR Sim's scenarios have 10 to 24): more would
/// leave the simulated time all but still while the run goes on frame after frame.
pub const MAX_FPS: f64 = 1000.0;

/// The shortest `world.snapshot_period` (simulated s): shorter snapshots would repeat one
/// frame's world without end.
pub const MIN_SNAPSHOT_PERIOD: f64 = 0.001;

/// The default largest scenario file, draw.io map or obstacle map read, bytes (64 MiB): the
/// limit of [`Scenario::open`] and [`Scenario::load`], and [`FileLimit::default`]'s. A path
/// naming anything but a regular file (`/dev/zero`, a FIFO, a directory) is refused too.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The largest file a scenario's loading reads — the scenario file itself and the files it
/// names (its draw.io `map`, its `world.obstacles` map) — and how a user raises it, for the
/// message of a file over it ([`Scenario::open_within`], [`Scenario::load_within`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileLimit {
    /// The most bytes a file may have, at least 1.
    pub max_bytes: u64,
    /// How to raise it, in the caller's words (`--max-scenario-bytes BYTES`,
    /// `max_file_bytes=`): the end of the message "raise it with …".
    pub raise_with: &'static str,
}

impl Default for FileLimit {
    /// [`MAX_FILE_BYTES`], raised with [`Scenario::load_within`].
    fn default() -> Self {
        FileLimit {
            max_bytes: MAX_FILE_BYTES,
            raise_with: "a larger FileLimit (Scenario::open_within, Scenario::load_within)",
        }
    }
}

impl FileLimit {
    /// The bytes of the file at `path`, `what` (`scenario`, `the map`) naming it in the
    /// message of a file over the limit: its path, its size, the limit and how to raise it.
    fn read(&self, path: &Path, what: &str) -> Result<Vec<u8>, String> {
        read_bounded(path, self.max_bytes)
            .map_err(|e| e.message(&format!("{what} {}", path.display()), self.raise_with))
    }

    /// [`FileLimit::read`] as UTF-8 text.
    fn read_text(&self, path: &Path, what: &str) -> Result<String, String> {
        String::from_utf8(self.read(path, what)?).map_err(|_| {
            format!(
                "cannot read {what} {}: the file is not UTF-8 text",
                path.display()
            )
        })
    }
}

/// `text` without a leading UTF-8 byte order mark (Windows editors write one; JSON has no
/// place for it, TOML skips it).
fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The swarm scenarios bundled with simrob, by name: each built in (its TOML here, its map in
/// [`BUNDLED_MAPS`]), so that `simrob swarm run hospital` works from any directory. The same
/// files are in the source tree's `scenarios/swarm/`.
pub const BUNDLED: [(&str, &str); 3] = [
    (
        "drone-swarm",
        include_str!("../../../scenarios/swarm/drone-swarm.toml"),
    ),
    (
        "hospital",
        include_str!("../../../scenarios/swarm/hospital.toml"),
    ),
    (
        "warehouse",
        include_str!("../../../scenarios/swarm/warehouse.toml"),
    ),
];

/// The draw.io maps the [`BUNDLED`] scenarios name, by file name.
const BUNDLED_MAPS: [(&str, &str); 2] = [
    (
        "drone-swarm.drawio",
        include_str!("../../../scenarios/swarm/drone-swarm.drawio"),
    ),
    (
        "hospital.drawio",
        include_str!("../../../scenarios/swarm/hospital.drawio"),
    ),
];

/// The names of the [`BUNDLED`] scenarios.
pub fn bundled_names() -> impl Iterator<Item = &'static str> {
    BUNDLED.iter().map(|(name, _)| *name)
}

/// Where the files a scenario names (its map, its obstacle map) are read from.
enum Files<'a> {
    /// A folder: the scenario file's, and the limit on a file read from it.
    Dir(&'a Path, FileLimit),
    /// The maps built in with the [`BUNDLED`] scenarios.
    Bundled,
}

impl Files<'_> {
    /// The file `rel` names (relative to the scenario), as text, and its path for messages.
    fn read(&self, rel: &Path, what: &str) -> (Result<String, String>, PathBuf) {
        match self {
            Files::Dir(base, limit) => {
                let p = base.join(rel);
                (limit.read_text(&p, what), p)
            }
            Files::Bundled => (
                Self::bundled(rel)
                    .map(str::to_string)
                    .map_err(|e| format!("cannot read {what} {}: {e}", rel.display())),
                rel.to_path_buf(),
            ),
        }
    }

    /// The file `rel` names, as bytes, and its path for messages.
    fn read_bytes(&self, rel: &Path, what: &str) -> (Result<Vec<u8>, String>, PathBuf) {
        match self {
            Files::Dir(base, limit) => {
                let p = base.join(rel);
                (limit.read(&p, what), p)
            }
            Files::Bundled => (
                Self::bundled(rel)
                    .map(|t| t.as_bytes().to_vec())
                    .map_err(|e| format!("cannot read {what} {}: {e}", rel.display())),
                rel.to_path_buf(),
            ),
        }
    }

    /// A bundled map by its file name.
    fn bundled(rel: &Path) -> Result<&'static str, String> {
        BUNDLED_MAPS
            .iter()
            .find(|(name, _)| Path::new(name) == rel)
            .map(|(_, text)| *text)
            .ok_or_else(|| "not a file bundled with simrob".to_string())
    }

    /// The path of a file read, when it is one on disk.
    fn path(&self, p: PathBuf) -> Option<PathBuf> {
        match self {
            Files::Dir(..) => Some(p),
            Files::Bundled => None,
        }
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, ScenarioError> {
    Err(ScenarioError(msg.into()))
}

/// Navigation settings of the world.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NavSpec {
    /// Points of the graph closer than this are one node, map units (default 8).
    #[serde(default = "d_merge")]
    pub merge_radius: f64,
    /// How far a robot may be from the graph at either end of a route, map units (default 60).
    #[serde(default = "d_off")]
    pub max_off_path: f64,
    /// Whether the off-graph legs of routes found are added to the map (default true).
    #[serde(default = "d_true")]
    pub extend: bool,
}

fn d_merge() -> f64 {
    8.0
}
fn d_off() -> f64 {
    60.0
}
fn d_true() -> bool {
    true
}
fn d_cell() -> f64 {
    20.0
}
fn d_period() -> f64 {
    0.1
}

impl Default for NavSpec {
    fn default() -> Self {
        NavSpec {
            merge_radius: d_merge(),
            max_off_path: d_off(),
            extend: true,
        }
    }
}

/// World-level components.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorldSpec {
    /// World width, map units; default: the map's page, the obstacle map's or the generator's.
    /// With a generator, a width or height smaller than its layout is refused.
    pub width: Option<f64>,
    /// World height, map units; default: the map's page, the obstacle map's or the generator's.
    pub height: Option<f64>,
    /// Side of a spatial-grid cell, map units (default 20).
    #[serde(default = "d_cell")]
    pub cell_size: f64,
    /// Whether the collision system runs (default true).
    #[serde(default = "d_true")]
    pub collision: bool,
    /// Whether every robot stops when it collides, generated ones included. Left out: listed
    /// and drawn robots stop, the drone swarm's drones stop (a collision is a crash), the
    /// warehouse's robots do not. `false` with the drone swarm is refused (its drones crash
    /// on a collision whatever the key says).
    #[serde(default)]
    pub stop_on_collision: Option<bool>,
    /// Seconds of simulated time between Seer snapshots (default 0.1).
    #[serde(default = "d_period")]
    pub snapshot_period: f64,
    /// The script run on a script error that has no handler of its own (e.g. `["Abort"]`).
    #[serde(default)]
    pub default_handler: Option<Vec<String>>,
    /// Navigation settings.
    #[serde(default)]
    pub nav: NavSpec,
    /// Extra map-paths: polylines of `[x, y]` points, map units.
    #[serde(default)]
    pub paths: Vec<Vec<[f64; 2]>>,
    /// Extra points of interest: name → `[x, y]`, map units.
    #[serde(default)]
    pub pois: BTreeMap<String, [f64; 2]>,
    /// Extra walls: `[x, y, width, height]` each, map units.
    #[serde(default)]
    pub walls: Vec<[f64; 4]>,
    /// A static obstacle map for the 2D engine: vector text (`width height`, then one
    /// rectangle `x1 y1 x2 y2` per line) or a BMP (black pixels are obstacles), relative to
    /// the scenario file.
    pub obstacles: Option<String>,
}

impl Default for WorldSpec {
    fn default() -> Self {
        WorldSpec {
            width: None,
            height: None,
            cell_size: d_cell(),
            collision: true,
            stop_on_collision: None,
            snapshot_period: d_period(),
            default_handler: None,
            nav: NavSpec::default(),
            paths: Vec::new(),
            pois: BTreeMap::new(),
            walls: Vec::new(),
            obstacles: None,
        }
    }
}

/// An entity declared in the scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntitySpec {
    /// The entity's type (`type` in the file): `robot`, `drone`, `poi`, `item` (or
    /// `pickable`) or `wall`; another is refused.
    #[serde(rename = "type")]
    pub kind: String,
    /// The entity's name (POIs need one; robots without one are labelled by their id).
    pub name: Option<String>,
    /// Position `[x, y]`, map units (the centre of its shape).
    pub position: [f64; 2],
    /// Heading, radians (default 0).
    #[serde(default)]
    pub heading: f64,
    /// A box collider's `[width, height]`, map units.
    pub size: Option<[f64; 2]>,
    /// A disc collider's radius, map units.
    pub radius: Option<f64>,
    /// Components by name, in scenario syntax (see the module docs).
    #[serde(default)]
    pub components: BTreeMap<String, Value>,
}

/// Generated content.
#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum GeneratorSpec {
    /// HMR Sim's drone swarm (see [`crate::drones`]).
    DroneSwarm {
        /// Number of drones (default 200).
        #[serde(default = "d_drones")]
        robots: usize,
        /// Proximity beams on each drone (default 0: no proximity sensor).
        #[serde(default)]
        proximity_beams: u16,
        /// Range of the proximity beams, map units (default 15).
        #[serde(default = "d_prox_range")]
        proximity_range: f64,
        /// `"orca"` (default) or `"hmr"` (HMR Sim's heuristic).
        #[serde(default)]
        avoidance: drones::Avoidance,
    },
    /// The warehouse (see [`crate::warehouse`]).
    Warehouse {
        /// Number of warehouse robots (default 10 000).
        #[serde(default = "d_wh")]
        robots: usize,
        /// Proximity beams on each robot (default 8).
        #[serde(default = "d_wh_beams")]
        proximity_beams: u16,
    },
}

fn d_drones() -> usize {
    200
}
fn d_prox_range() -> f64 {
    15.0
}
fn d_wh() -> usize {
    10_000
}
fn d_wh_beams() -> u16 {
    8
}

/// The scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// The scenario's name (default: where it was loaded from).
    pub name: Option<String>,
    /// The draw.io map, relative to the scenario file (or to `context`).
    pub map: Option<String>,
    /// The folder `map` is relative to, itself relative to the scenario file's folder
    /// (HMR Sim's `context`; default: the scenario file's folder).
    pub context: Option<String>,
    /// HMR Sim's default line width of its draw.io walls (`DLW`): accepted and ignored
    /// (walls are as drawn).
    #[serde(rename = "DLW")]
    pub dlw: Option<f64>,
    /// HMR Sim's `verbose` (how much its loader logs): accepted and ignored (`simrob swarm
    /// run --log` sets what is logged).
    pub verbose: Option<Value>,
    /// Frames per simulated second of the fixed-rate systems (also `FPS`; default 24).
    #[serde(alias = "FPS")]
    pub fps: Option<f64>,
    /// Simulated seconds the run lasts (default: until the work is done or a kill switch).
    pub duration: Option<f64>,
    /// Seed of the run's random streams (default 0).
    pub seed: Option<u64>,
    /// Whether a kill switch ends the run once every script or drone is done (default true).
    pub end_when_done: Option<bool>,
    /// World-level components (also `simulationComponents`).
    #[serde(default, alias = "simulationComponents")]
    pub world: WorldSpec,
    /// Generated robots and map, if any.
    pub generator: Option<GeneratorSpec>,
    /// Extra entities (also `extraEntities`).
    #[serde(default, alias = "extraEntities")]
    pub entities: Vec<EntitySpec>,
}

/// Command-line overrides of a scenario.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// Simulated seconds the run lasts, replacing the file's.
    pub duration: Option<f64>,
    /// Seed of the run's random streams, replacing the file's.
    pub seed: Option<u64>,
    /// Number of robots (generated scenarios only).
    pub robots: Option<usize>,
    /// Run the whole duration even when the work is done.
    pub full_duration: bool,
    /// Proximity beams on generated robots (0 = none).
    pub proximity_beams: Option<u16>,
    /// How the drones of a generated drone swarm avoid each other.
    pub avoidance: Option<drones::Avoidance>,
    /// Threads the parallel systems may use (`None` or 0: the machine's cores, at most 8);
    /// the run does not depend on it.
    pub threads: Option<usize>,
    /// The most robots and grid cells the run may have ([`BuildLimits::default`]: the
    /// `MAX_…` constants).
    pub limits: BuildLimits,
}

/// A loaded scenario, ready to build runs from.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The parsed scenario file.
    pub file: ScenarioFile,
    /// Where it came from (for messages).
    pub origin: String,
    /// The draw.io map, parsed, if the file names one.
    pub map: Option<DrawioMap>,
    /// Where the draw.io map was read from.
    pub map_path: Option<PathBuf>,
    /// The obstacle map (`world.obstacles`).
    pub obstacles: Option<Arc<simrob_flat::Map>>,
}

impl Scenario {
    /// A scenario file, or one of the scenarios bundled with simrob by its name
    /// ([`BUNDLED`]: `drone-swarm`, `hospital`, `warehouse`): what a command that takes a
    /// swarm scenario makes of its argument. An existing file is read (a path, however
    /// short); anything else must be a bundled name, else the error lists them.
    pub fn open(arg: &Path) -> Result<Scenario, ScenarioError> {
        Self::open_within(arg, FileLimit::default())
    }

    /// [`Scenario::open`] with `limit` on the scenario file and the files it names (a
    /// bundled scenario is built in: no limit applies to it).
    pub fn open_within(arg: &Path, limit: FileLimit) -> Result<Scenario, ScenarioError> {
        if arg.is_file() {
            return Self::load_within(arg, limit);
        }
        if let Some(scenario) = arg.to_str().and_then(Self::bundled) {
            return scenario;
        }
        if arg.exists() {
            // A folder, a device…: the loader says why it is no scenario.
            return Self::load_within(arg, limit);
        }
        err(format!(
            "{}: no such file, and not a bundled scenario (bundled: {}); give a scenario \
             file (.toml or .json) or one of those names",
            arg.display(),
            bundled_names().collect::<Vec<_>>().join(", ")
        ))
    }

    /// The bundled scenario `name` ([`BUNDLED`]), built into simrob with its map: `None`
    /// for another name.
    pub fn bundled(name: &str) -> Option<Result<Scenario, ScenarioError>> {
        let (_, text) = BUNDLED.iter().find(|(n, _)| *n == name)?;
        let origin = format!("{name} (bundled)");
        Some(
            toml::from_str(text)
                .map_err(|e| ScenarioError(format!("{origin}: {e}")))
                .and_then(|file| Self::with_files(file, &Files::Bundled, origin)),
        )
    }

    /// Loads a `.toml` or `.json` scenario file (and its map), each file of at most
    /// [`MAX_FILE_BYTES`].
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        Self::load_within(path, FileLimit::default())
    }

    /// [`Scenario::load`] with `limit` on the scenario file and the files it names: a file
    /// over it is refused, the error naming it, its size, the limit and
    /// [`FileLimit::raise_with`].
    pub fn load_within(path: &Path, limit: FileLimit) -> Result<Scenario, ScenarioError> {
        let text = limit.read_text(path, "scenario").map_err(ScenarioError)?;
        let base = path.parent().unwrap_or(Path::new("."));
        let origin = path.display().to_string();
        let file: ScenarioFile = match path.extension().and_then(|e| e.to_str()) {
            Some("json") => serde_json::from_str(without_bom(&text))
                .map_err(|e| ScenarioError(format!("{origin}: {e}")))?,
            Some("toml") => {
                toml::from_str(&text).map_err(|e| ScenarioError(format!("{origin}: {e}")))?
            }
            _ => return err(format!("{origin}: a scenario is a .toml or a .json file")),
        };
        Self::with_files(file, &Files::Dir(base, limit), origin)
    }

    /// A scenario from TOML text; `base` is the folder its map path is relative to (each
    /// map of at most [`MAX_FILE_BYTES`]).
    pub fn from_toml_str(text: &str, base: &Path) -> Result<Scenario, ScenarioError> {
        let file: ScenarioFile =
            toml::from_str(text).map_err(|e| ScenarioError(format!("scenario: {e}")))?;
        Self::with_files(
            file,
            &Files::Dir(base, FileLimit::default()),
            "scenario".into(),
        )
    }

    /// A scenario from JSON text; `base` is the folder its map path is relative to (each
    /// map of at most [`MAX_FILE_BYTES`]).
    pub fn from_json_str(text: &str, base: &Path) -> Result<Scenario, ScenarioError> {
        let file: ScenarioFile = serde_json::from_str(without_bom(text))
            .map_err(|e| ScenarioError(format!("scenario: {e}")))?;
        Self::with_files(
            file,
            &Files::Dir(base, FileLimit::default()),
            "scenario".into(),
        )
    }

    fn with_files(
        file: ScenarioFile,
        files: &Files,
        origin: String,
    ) -> Result<Scenario, ScenarioError> {
        let (map, map_path) = match &file.map {
            Some(m) => {
                let p = match &file.context {
                    Some(c) => Path::new(c).join(m),
                    None => PathBuf::from(m),
                };
                let (text, p) = files.read(&p, "the map");
                let text = text.map_err(|e| ScenarioError(format!("{origin}: {e}")))?;
                let map = drawio::parse(&text)
                    .map_err(|e| ScenarioError(format!("map {}: {e}", p.display())))?;
                (Some(map), files.path(p))
            }
            None => (None, None),
        };
        if let Some(fps) = file.fps {
            if !(MIN_FPS..=MAX_FPS).contains(&fps) {
                return err(format!(
                    "{origin}: fps must be from {MIN_FPS} to {MAX_FPS} frames a simulated \
                     second, found {fps:?}"
                ));
            }
        }
        let period = file.world.snapshot_period;
        if !(period.is_finite() && period >= MIN_SNAPSHOT_PERIOD) {
            return err(format!(
                "{origin}: world.snapshot_period must be at least {MIN_SNAPSHOT_PERIOD} simulated \
                 seconds, found {period:?}"
            ));
        }
        let nav = &file.world.nav;
        for (key, v) in [
            ("merge_radius", nav.merge_radius),
            ("max_off_path", nav.max_off_path),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return err(format!(
                    "{origin}: world.nav.{key} must be a non-negative number of map units, \
                     found {}",
                    Shown(v)
                ));
            }
        }
        if let Some(GeneratorSpec::DroneSwarm {
            proximity_range, ..
        }) = &file.generator
        {
            if !(proximity_range.is_finite() && *proximity_range > 0.0) {
                return err(format!(
                    "{origin}: generator.proximity_range must be a positive number of map \
                     units, found {}",
                    Shown(*proximity_range)
                ));
            }
        }
        if let Some(d) = file.duration {
            if !(d.is_finite() && d >= 0.0) {
                return err(format!(
                    "{origin}: duration must be a non-negative number, found {d}"
                ));
            }
        }
        let obstacles = match &file.world.obstacles {
            Some(o) => {
                let (bytes, p) = files.read_bytes(Path::new(o), "the obstacle map");
                let bytes = bytes.map_err(|e| ScenarioError(format!("{origin}: {e}")))?;
                let m = simrob_flat::Map::from_bytes(&bytes)
                    .map_err(|e| ScenarioError(format!("obstacle map {}: {e}", p.display())))?;
                Some(Arc::new(m))
            }
            None => None,
        };
        Ok(Scenario {
            file,
            origin,
            map,
            map_path,
            obstacles,
        })
    }

    /// The scenario's name.
    pub fn name(&self) -> String {
        self.file
            .name
            .clone()
            .unwrap_or_else(|| self.origin.clone())
    }

    /// Whether `--robots` applies (the robots are generated).
    pub fn robots_configurable(&self) -> bool {
        self.file.generator.is_some()
    }

    /// Builds a run.
    pub fn build(&self, ov: &Overrides) -> Result<Simulation, ScenarioError> {
        let f = &self.file;
        let origin = &self.origin;
        let mut generator = f.generator.clone();
        if let Some(n) = ov.robots {
            match &mut generator {
                Some(GeneratorSpec::DroneSwarm { robots, .. })
                | Some(GeneratorSpec::Warehouse { robots, .. }) => *robots = n,
                None => {
                    return err(format!(
                        "{origin}: this scenario's robots are fixed (drawn in its map or listed in \
                         it); --robots works with generated scenarios (drone swarm, warehouse)"
                    ))
                }
            }
        }
        if let Some(t) = ov.threads.filter(|&t| t > MAX_THREADS) {
            return err(format!(
                "{origin}: {t} threads is more than the limit of {} (0: the machine's cores)",
                MAX_THREADS
            ));
        }
        let limits = &ov.limits;
        let max_drones = limits.max_drones.min(MAX_ROBOTS_SETTABLE);
        let max_warehouse = limits.max_warehouse_robots.min(MAX_ROBOTS_SETTABLE);
        match &generator {
            Some(GeneratorSpec::DroneSwarm { robots: 0, .. })
            | Some(GeneratorSpec::Warehouse { robots: 0, .. }) => {
                return err(format!(
                    "{origin}: a generated scenario needs at least 1 robot (generator.robots or \
                     --robots)"
                ));
            }
            Some(GeneratorSpec::DroneSwarm { robots, .. }) if *robots > max_drones => {
                return err(format!(
                    "{origin}: {robots} drones is more than the drone swarm's limit of \
                     {max_drones}{}",
                    raise_it(limits.raise_robots_with)
                ));
            }
            Some(GeneratorSpec::Warehouse { robots, .. }) if *robots > max_warehouse => {
                return err(format!(
                    "{origin}: {robots} robots is more than the warehouse's limit of \
                     {max_warehouse}{}",
                    raise_it(limits.raise_robots_with)
                ));
            }
            _ => {}
        }
        if let Some(b) = ov.proximity_beams {
            match &mut generator {
                Some(GeneratorSpec::DroneSwarm {
                    proximity_beams, ..
                })
                | Some(GeneratorSpec::Warehouse {
                    proximity_beams, ..
                }) => *proximity_beams = b,
                None => {
                    return err(format!(
                    "{origin}: --proximity works with generated scenarios (drone swarm, warehouse)"
                ))
                }
            }
        }
        if ov.avoidance.is_some() && !matches!(generator, Some(GeneratorSpec::DroneSwarm { .. })) {
            return err(format!(
                "{origin}: --avoidance works with the generated drone swarm (kind = \"drone-swarm\")"
            ));
        }
        // World size: explicit, else generator, else map, else 1000 × 1000.
        let (mut width, mut height) = match (&self.map, &self.obstacles) {
            (Some(m), _) => (m.width, m.height),
            (None, Some(o)) => (o.width(), o.height()),
            (None, None) => (1000.0, 1000.0),
        };
        let layout = match &generator {
            Some(GeneratorSpec::DroneSwarm { robots, .. }) => {
                let lay = drones::layout(*robots);
                Some((lay.width, lay.height, format!("{robots}-drone swarm")))
            }
            Some(GeneratorSpec::Warehouse { robots, .. }) => {
                let (w, h) = warehouse::size(*robots);
                Some((w, h, format!("warehouse of {robots} robots")))
            }
            None => None,
        };
        if let Some((w, h, _)) = &layout {
            width = width.max(*w);
            height = height.max(*h);
        }
        if let Some(w) = f.world.width {
            width = w;
        }
        if let Some(h) = f.world.height {
            height = h;
        }
        if let Some((w, h, what)) = &layout {
            check_room_for_layout(width, height, *w, *h, what)
                .map_err(|e| ScenarioError(format!("{origin}: {e}")))?;
        }
        if !(width.is_finite() && width > 0.0 && height.is_finite() && height > 0.0) {
            return err(format!(
                "{origin}: the world's width and height must be positive"
            ));
        }
        let mut world = SwarmWorld::new(width, height);
        world.res.obstacles = self.obstacles.clone();
        let nav = &f.world.nav;
        *world.res.get_mut::<NavMap>() = NavMap::new(nav.merge_radius, nav.max_off_path);
        world.res.get_mut::<NavMap>().extend = nav.extend;
        let stop = f.world.stop_on_collision.unwrap_or(true);
        if f.world.stop_on_collision == Some(false)
            && matches!(generator, Some(GeneratorSpec::DroneSwarm { .. }))
        {
            return err(format!(
                "{origin}: world.stop_on_collision = false does not apply to the drone swarm: \
                 a drone that collides has crashed and stops; leave the key out (listed robots \
                 take StopOnCollision = false one by one)"
            ));
        }

        if let Some(map) = &self.map {
            let mp = self
                .map_path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default();
            for shape in &map.shapes {
                add_shape(&mut world, shape, stop).map_err(|e| {
                    ScenarioError(format!("map {mp}: shape id={:?}: {e}", shape.id))
                })?;
            }
            for p in &map.paths {
                for &(x, y) in &p.points {
                    path_point(&world, x, y)
                        .map_err(|e| ScenarioError(format!("map {mp}: edge id={:?}: {e}", p.id)))?;
                }
                if p.oneway {
                    world.res.get_mut::<NavMap>().add_oneway_polyline(&p.points);
                } else {
                    world.res.get_mut::<NavMap>().add_polyline(&p.points);
                }
            }
        }
        for (k, p) in f.world.paths.iter().enumerate() {
            if p.len() < 2 {
                return err(format!(
                    "{origin}: world.paths[{k}] needs at least two points"
                ));
            }
            for (i, q) in p.iter().enumerate() {
                path_point(&world, q[0], q[1])
                    .map_err(|e| ScenarioError(format!("{origin}: world.paths[{k}][{i}]: {e}")))?;
            }
            let pts: Vec<(f64, f64)> = p.iter().map(|q| (q[0], q[1])).collect();
            world.res.get_mut::<NavMap>().add_polyline(&pts);
        }
        for (name, p) in &f.world.pois {
            add_poi(&mut world, name, p[0], p[1])
                .map_err(|e| ScenarioError(format!("{origin}: world.pois.{name}: {e}")))?;
        }
        for (k, w) in f.world.walls.iter().enumerate() {
            check_wall(w[0], w[1], w[2], w[3])
                .map_err(|e| ScenarioError(format!("{origin}: world.walls[{k}]: {e}")))?;
            add_wall(&mut world, w[0], w[1], w[2], w[3]);
        }
        let mut drone_size = None;
        match &generator {
            Some(GeneratorSpec::DroneSwarm {
                robots,
                proximity_beams,
                proximity_range,
                avoidance,
            }) => {
                let params = SwarmParams {
                    drones: *robots,
                    proximity_beams: *proximity_beams,
                    proximity_range: *proximity_range,
                    avoidance: ov.avoidance.unwrap_or(*avoidance),
                    ..SwarmParams::default()
                };
                drone_size = Some((params.size, params.avoidance));
                drones::populate(&mut world, &params);
            }
            Some(GeneratorSpec::Warehouse {
                robots,
                proximity_beams,
            }) => {
                let ids = warehouse::populate(
                    &mut world,
                    &WarehouseParams {
                        robots: *robots,
                        proximity_beams: *proximity_beams,
                        seed: ov.seed.or(f.seed).unwrap_or(0),
                    },
                )
                .map_err(|e| ScenarioError(format!("{origin}: warehouse: {e}")))?;
                // The warehouse's robots keep going after a contact unless the file says.
                if f.world.stop_on_collision == Some(true) {
                    for e in ids {
                        world.stop_on_collision.insert(e, ());
                    }
                }
            }
            None => {}
        }
        for (k, spec) in f.entities.iter().enumerate() {
            let where_ = match &spec.name {
                Some(n) => format!("{origin}: entities[{k}] ({n})"),
                None => format!("{origin}: entities[{k}]"),
            };
            add_entity(&mut world, spec, stop)
                .map_err(|e| ScenarioError(format!("{where_}: {e}")))?;
        }
        world.res.get_mut::<NavMap>().connect_isolated_pois();

        let config = SimConfig {
            fps: f.fps.unwrap_or(24.0),
            duration: ov.duration.or(f.duration),
            seed: ov.seed.or(f.seed).unwrap_or(0),
            cell_size: f.world.cell_size,
            end_when_done: f.end_when_done.unwrap_or(true) && !ov.full_duration,
            threads: ov.threads.unwrap_or(0),
        };
        if !(config.cell_size.is_finite() && config.cell_size > 0.0) {
            return err(format!("{origin}: world.cell_size must be positive"));
        }
        let cells = (width / config.cell_size).ceil() * (height / config.cell_size).ceil();
        let max_cells = limits.max_grid_cells.min(MAX_GRID_CELLS_SETTABLE);
        if cells > max_cells as f64 {
            let raise = match limits.raise_grid_cells_with {
                Some(w) => format!(", or raise the limit with {w}"),
                None => String::new(),
            };
            // A whole count while it reads as one (a world of 10¹³⁰ units makes no sense spelt out).
            let counted = if cells < 1e15 {
                format!("{}", cells as u64)
            } else {
                format!("{cells:.3e}")
            };
            return err(format!(
                "{origin}: a {width} × {height} world in cells of {} makes {counted} grid cells, \
                 more than {max_cells}: make world.cell_size larger or the world smaller{raise}",
                config.cell_size
            ));
        }
        let mut sim = Simulation::new(world, config);
        sim.name = self.name();
        let mut scripts = ScriptSystem::new();
        if let Some(h) = &f.world.default_handler {
            let parsed: Result<Vec<Instr>, _> = h.iter().map(|l| Instr::parse(l)).collect();
            scripts = scripts.with_default_handler(
                parsed
                    .map_err(|e| ScenarioError(format!("{origin}: world.default_handler: {e}")))?,
            );
        }
        sim.add_system(Box::new(scripts));
        sim.add_system(Box::new(crate::nav::PathSystem));
        sim.add_system(Box::new(BatterySystem));
        sim.add_system(Box::new(MovementSystem));
        if f.world.collision {
            sim.add_system(Box::new(CollisionSystem::default()));
            sim.add_system(Box::new(StopOnCollision));
        }
        sim.add_system(Box::new(ProximitySystem::default()));
        if let Some((size, avoidance)) = drone_size {
            sim.add_system(Box::new(
                DroneController::new(size).with_avoidance(avoidance),
            ));
        }
        sim.add_system(Box::new(ClawSystem));
        if let Some(h) = &f.world.default_handler {
            check_lines(&sim, h)
                .map_err(|e| ScenarioError(format!("{origin}: world.default_handler: {e}")))?;
        }
        validate_scripts(&sim).map_err(|e| ScenarioError(format!("{origin}: {e}")))?;
        Ok(sim)
    }
}

/// A world of `width` × `height` (given by `world.width`/`world.height`) holds a generator's
/// layout of `need_w` × `need_h`: a smaller one put drones and shelves outside it (20 drones
/// in 100 × 100: 16 crashed, none arrived).
fn check_room_for_layout(
    width: f64,
    height: f64,
    need_w: f64,
    need_h: f64,
    what: &str,
) -> Result<(), String> {
    if width < need_w || height < need_h {
        return Err(format!(
            "the world ({width} × {height}, world.width/world.height) is smaller than the \
             {what} needs (at least {} × {}): leave world.width and world.height out and \
             the generator sizes the world",
            need_w.ceil(),
            need_h.ceil()
        ));
    }
    Ok(())
}

/// Checks the lines of `world.default_handler` (a handler: `Retry` and `Skip` allowed).
fn check_lines(sim: &Simulation, lines: &[String]) -> Result<(), ScriptError> {
    let s = Script::default().with_default_handler(lines)?;
    s.validate(sim.instructions())
}

/// Checks every script of the world against the simulation's instructions.
pub fn validate_scripts(sim: &Simulation) -> Result<(), ScriptCheckError> {
    let w = sim.world();
    for (e, s) in w.custom::<Script>().into_iter().flat_map(Column::iter) {
        s.validate(sim.instructions())
            .map_err(|source| ScriptCheckError::Script {
                entity: w.label(e),
                source: Box::new(source),
            })?;
        for ins in s.all_instructions() {
            if let Some(check) = sim.instructions().get(&ins.name).and_then(|d| d.check) {
                check(w, &ins.args).map_err(|source| ScriptCheckError::Instruction {
                    entity: w.label(e),
                    instruction: ins.to_string(),
                    source,
                })?;
            }
        }
    }
    Ok(())
}

/// A wall at `(x, y)` of `w` × `h`: finite, with a positive width and height.
fn check_wall(x: f64, y: f64, w: f64, h: f64) -> Result<(), EntityError> {
    let finite = [x, y, w, h].iter().all(|v| v.is_finite());
    if finite && w > 0.0 && h > 0.0 {
        Ok(())
    } else {
        Err(EntityError::BadWall { x, y, w, h })
    }
}

fn add_wall(world: &mut SwarmWorld, x: f64, y: f64, w: f64, h: f64) -> EntityId {
    let e = world.spawn("wall");
    world.pose.insert(
        e,
        SwarmPose {
            x: x + w * 0.5,
            y: y + h * 0.5,
            theta: 0.0,
        },
    );
    world.set_collider(
        e,
        Shape::Box {
            hw: w * 0.5,
            hh: h * 0.5,
        },
    );
    e
}

/// Refuses a point outside the world: x from 0 to its width, y from 0 to its height (a
/// moving robot is kept inside them; a robot, item or POI placed outside could not be reached
/// or would jump to the edge at its first move).
fn inside(world: &SwarmWorld, x: f64, y: f64) -> Result<(), EntityError> {
    let (width, height) = (world.res.width, world.res.height);
    if (0.0..=width).contains(&x) && (0.0..=height).contains(&y) {
        Ok(())
    } else {
        Err(EntityError::Outside {
            x,
            y,
            width,
            height,
        })
    }
}

/// A map-path's point: finite and inside the world.
fn path_point(world: &SwarmWorld, x: f64, y: f64) -> Result<(), String> {
    if !(x.is_finite() && y.is_finite()) {
        return Err(format!(
            "a map-path's points must be finite numbers, found ({}, {})",
            Shown(x),
            Shown(y)
        ));
    }
    inside(world, x, y).map_err(|e| format!("map-path point: {e}"))
}

/// The entity types of a scenario's `[[entities]]` (HMR Sim's `pickable` is an `item`).
const ENTITY_TYPES: &str = "robot, drone, item (or pickable), poi, wall";

/// The entity types of a draw.io map's shapes.
const SHAPE_TYPES: &str = "robot, drone, item (or pickable), poi, wall, ignore";

/// `kind` as the loader knows it: `pickable` (HMR Sim's name) is `item`.
fn known_type(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "robot" => "robot",
        "drone" => "drone",
        "item" | "pickable" => "item",
        "poi" => "poi",
        "wall" => "wall",
        _ => return None,
    })
}

fn add_poi(world: &mut SwarmWorld, name: &str, x: f64, y: f64) -> Result<EntityId, EntityError> {
    inside(world, x, y)?;
    let e = world.spawn("poi");
    world.pose.insert(e, SwarmPose { x, y, theta: 0.0 });
    world.poi.insert(e, ());
    world.set_name(e, name)?;
    world.res.get_mut::<NavMap>().add_poi(name, x, y);
    Ok(e)
}

fn add_shape(world: &mut SwarmWorld, s: &MapShape, stop: bool) -> Result<(), EntityError> {
    if s.is_text() && !s.annotated {
        return Ok(());
    }
    let kind = s
        .attrs
        .get("type")
        .map(|t| t.trim().to_ascii_lowercase())
        .unwrap_or_else(|| "wall".into());
    if kind == "ignore" {
        return Ok(());
    }
    let kind = known_type(&kind).ok_or(EntityError::UnknownType {
        found: kind,
        known: SHAPE_TYPES,
    })?;
    let name = s
        .attrs
        .get("name")
        .cloned()
        .or_else(|| (!s.label.trim().is_empty()).then(|| strip_html(&s.label)));
    let (cx, cy) = s.centre();
    let e = match kind {
        "wall" => {
            add_wall(world, s.x, s.y, s.width, s.height);
            return Ok(());
        }
        "poi" => {
            let Some(n) = name else {
                return Err(EntityError::MapPoiWithoutName);
            };
            add_poi(world, &n, cx, cy)?
        }
        _ => {
            inside(world, cx, cy)?;
            let e = world.spawn(kind);
            world.pose.insert(
                e,
                SwarmPose {
                    x: cx,
                    y: cy,
                    theta: 0.0,
                },
            );
            if let Some(n) = &name {
                world.set_name(e, n)?;
            }
            match kind {
                "robot" | "drone" => {
                    let shape = if s.is_ellipse() {
                        Shape::Circle {
                            r: s.width.min(s.height) * 0.5,
                        }
                    } else {
                        Shape::Box {
                            hw: s.width * 0.5,
                            hh: s.height * 0.5,
                        }
                    };
                    make_robot(world, e, shape, stop);
                }
                "item" => {
                    world.item.insert(e, Item::default());
                }
                _ => {}
            }
            e
        }
    };
    for (k, v) in &s.attrs {
        if let Some(comp) = k.strip_prefix("component_") {
            let value: Value =
                serde_json::from_str(v).map_err(|error| EntityError::ComponentJson {
                    key: k.clone(),
                    found: v.clone(),
                    error,
                })?;
            add_component(world, e, comp, &value).map_err(|source| EntityError::Component {
                at: k.clone(),
                source,
            })?;
        }
    }
    Ok(())
}

/// `s` without its HTML tags (draw.io labels may be HTML).
pub fn strip_html(s: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.trim().to_string()
}

fn make_robot(world: &mut SwarmWorld, e: EntityId, shape: Shape, stop: bool) {
    world.vel.insert(e, Velocity::default());
    world.set_collider(e, shape);
    world.navigator.insert(
        e,
        Navigator {
            speed: DEFAULT_SPEED,
            keep_clear: 0.0,
        },
    );
    if stop {
        world.stop_on_collision.insert(e, ());
    }
}

fn add_entity(world: &mut SwarmWorld, spec: &EntitySpec, stop: bool) -> Result<(), EntityError> {
    let [x, y] = spec.position;
    if !(x.is_finite() && y.is_finite() && spec.heading.is_finite()) {
        return Err(EntityError::NotFinite);
    }
    let found = spec.kind.trim().to_ascii_lowercase();
    let kind = known_type(&found).ok_or(EntityError::UnknownType {
        found,
        known: ENTITY_TYPES,
    })?;
    match kind {
        "wall" => {
            let [w, h] = spec.size.unwrap_or([10.0, 10.0]);
            check_wall(x, y, w, h)?;
            add_wall(world, x - w * 0.5, y - h * 0.5, w, h);
            return Ok(());
        }
        "poi" => {
            let Some(n) = &spec.name else {
                return Err(EntityError::PoiWithoutName);
            };
            add_poi(world, n, x, y)?;
            return Ok(());
        }
        _ => {}
    }
    inside(world, x, y)?;
    let e = world.spawn(kind);
    world.pose.insert(
        e,
        SwarmPose {
            x,
            y,
            theta: spec.heading,
        },
    );
    if let Some(n) = &spec.name {
        world.set_name(e, n)?;
    }
    let shape = match (spec.radius, spec.size) {
        (Some(r), _) if r > 0.0 => Shape::Circle { r },
        (_, Some([w, h])) if w > 0.0 && h > 0.0 => Shape::Box {
            hw: w * 0.5,
            hh: h * 0.5,
        },
        (None, None) => Shape::Circle { r: 5.0 },
        _ => return Err(EntityError::NotPositive),
    };
    match kind {
        "robot" | "drone" => make_robot(world, e, shape, stop),
        "item" => {
            world.item.insert(e, Item::default());
        }
        _ => {}
    }
    for (name, v) in &spec.components {
        add_component(world, e, name, v).map_err(|source| EntityError::Component {
            at: format!("components.{name}"),
            source,
        })?;
    }
    Ok(())
}

const COMPONENTS: &str =
    "Velocity, Collider, Navigator, Proximity, Claw, Battery, Item, StopOnCollision, Script";

fn field(v: &Value, k: &str, default: f64) -> Result<f64, ComponentError> {
    match v.get(k) {
        None => Ok(default),
        Some(x) => match x.as_f64() {
            Some(n) if n.is_finite() => Ok(n),
            _ => Err(ComponentError::NotANumber {
                field: k.to_string(),
                found: x.to_string(),
            }),
        },
    }
}

fn check_keys(v: &Value, allowed: &[&str]) -> Result<(), ComponentError> {
    if let Some(o) = v.as_object() {
        for k in o.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(ComponentError::UnknownField {
                    field: k.clone(),
                    expected: allowed.join(", "),
                });
            }
        }
        Ok(())
    } else {
        Err(ComponentError::NotATable(v.to_string()))
    }
}

fn strings(v: &Value, what: &str) -> Result<Vec<String>, ComponentError> {
    let Some(a) = v.as_array() else {
        return Err(ComponentError::NotStrings(what.to_string()));
    };
    a.iter()
        .map(|x| {
            x.as_str()
                .map(str::to_string)
                .ok_or_else(|| ComponentError::NotAString {
                    what: what.to_string(),
                    found: x.to_string(),
                })
        })
        .collect()
}

/// Adds the component `name` with the value `v` (scenario syntax) to `e`.
pub fn add_component(
    world: &mut SwarmWorld,
    e: EntityId,
    name: &str,
    v: &Value,
) -> Result<(), ComponentError> {
    use ComponentError::{Rule, RuleFound};
    match name {
        "Velocity" => {
            let vel = match v.as_array() {
                Some(a) if a.len() == 2 => Velocity {
                    x: a[0].as_f64().ok_or(Rule("vx must be a number"))?,
                    y: a[1].as_f64().ok_or(Rule("vy must be a number"))?,
                    w: 0.0,
                },
                _ if v.as_object().is_some_and(|o| o.is_empty()) => Velocity::default(),
                _ => {
                    return Err(RuleFound {
                        rule: "Velocity is [vx, vy] or {} (at rest)",
                        found: v.to_string(),
                    })
                }
            };
            world.vel.insert(e, vel);
            if world.collider.has(e) {
                world.res.statics_dirty = true;
            }
        }
        "Collider" | "Collidable" => {
            check_keys(v, &["box", "radius"])?;
            let shape = if let Some(r) = v.get("radius") {
                match r.as_f64() {
                    Some(r) if r > 0.0 && r.is_finite() => Shape::Circle { r },
                    _ => {
                        return Err(RuleFound {
                            rule: "radius must be a positive number",
                            found: r.to_string(),
                        })
                    }
                }
            } else if let Some(b) = v.get("box") {
                match b.as_array().map(|a| {
                    (
                        a.len(),
                        a.first().and_then(Value::as_f64),
                        a.get(1).and_then(Value::as_f64),
                    )
                }) {
                    Some((2, Some(w), Some(h))) if w > 0.0 && h > 0.0 => Shape::Box {
                        hw: w * 0.5,
                        hh: h * 0.5,
                    },
                    _ => {
                        return Err(RuleFound {
                            rule: "box must be [width, height]",
                            found: b.to_string(),
                        })
                    }
                }
            } else {
                return Err(Rule("give box = [w, h] or radius = r"));
            };
            world.set_collider(e, shape);
        }
        "Navigator" | "Speed" => {
            let (speed, keep_clear) = match v.as_f64() {
                Some(s) => (s, 0.0),
                None => {
                    check_keys(v, &["speed", "keep_clear"])?;
                    (
                        field(v, "speed", DEFAULT_SPEED)?,
                        field(v, "keep_clear", 0.0)?,
                    )
                }
            };
            if !(speed.is_finite() && speed > 0.0) || keep_clear < 0.0 {
                return Err(RuleFound {
                    rule: "speed must be positive and keep_clear ≥ 0",
                    found: format!("{speed} and {keep_clear}"),
                });
            }
            world.navigator.insert(e, Navigator { speed, keep_clear });
        }
        "Proximity" => {
            check_keys(v, &["beams", "range", "period"])?;
            let beams = field(v, "beams", 12.0)?;
            let range = field(v, "range", 50.0)?;
            let period = field(v, "period", 1.0)?;
            if !(1.0..=360.0).contains(&beams) || beams.fract() != 0.0 {
                return Err(RuleFound {
                    rule: "beams must be a whole number from 1 to 360",
                    found: beams.to_string(),
                });
            }
            if range <= 0.0 || period < 1.0 || period.fract() != 0.0 {
                return Err(Rule("range must be positive and period a whole number ≥ 1"));
            }
            let mut p = Proximity::new(beams as u16, range);
            p.period = period as u32;
            world.proximity.insert(e, p);
        }
        "Claw" => {
            let (range, capacity, duration) = match v.as_array() {
                Some(a) => (
                    a.first()
                        .and_then(Value::as_f64)
                        .ok_or(Rule("Claw: [range, capacity]"))?,
                    a.get(1).and_then(Value::as_f64).unwrap_or(1.0),
                    0.5,
                ),
                None => {
                    check_keys(v, &["range", "capacity", "duration"])?;
                    (
                        field(v, "range", 20.0)?,
                        field(v, "capacity", 1.0)?,
                        field(v, "duration", 0.5)?,
                    )
                }
            };
            if range < 0.0 || capacity < 0.0 || duration < 0.0 || capacity.fract() != 0.0 {
                return Err(Rule(
                    "range and duration must be ≥ 0, capacity a whole number ≥ 0",
                ));
            }
            world.claw.insert(
                e,
                Claw {
                    range,
                    capacity: capacity as u32,
                    duration,
                    held: Vec::new(),
                },
            );
        }
        "Battery" => {
            check_keys(v, &["capacity", "charge", "idle_drain", "move_drain"])?;
            let capacity = field(v, "capacity", 100.0)?;
            let b = Battery {
                capacity,
                charge: field(v, "charge", capacity)?,
                idle_drain: field(v, "idle_drain", 0.01)?,
                move_drain: field(v, "move_drain", 0.01)?,
                empty: false,
            };
            if b.capacity <= 0.0
                || b.charge < 0.0
                || b.charge > b.capacity
                || b.idle_drain < 0.0
                || b.move_drain < 0.0
            {
                return Err(RuleFound {
                    rule: "capacity must be positive, charge from 0 to capacity, drains ≥ 0",
                    found: format!(
                        "capacity {}, charge {}, idle_drain {}, move_drain {}",
                        b.capacity, b.charge, b.idle_drain, b.move_drain
                    ),
                });
            }
            world.battery.insert(e, b);
        }
        "Item" => {
            world.item.insert(e, Item::default());
        }
        "StopOnCollision" => match v.as_bool() {
            Some(true) => {
                world.stop_on_collision.insert(e, ());
            }
            Some(false) => {
                world.stop_on_collision.remove(e);
            }
            None => return Err(ComponentError::NotABool(v.to_string())),
        },
        "Script" => {
            let script = if v.is_array() {
                Script::new(&strings(v, "Script")?)?
            } else {
                check_keys(v, &["instructions", "handlers", "default_handler"])?;
                let lines = match v.get("instructions") {
                    Some(i) => strings(i, "instructions")?,
                    None => return Err(Rule("a Script needs instructions")),
                };
                let mut s = Script::new(&lines)?;
                if let Some(h) = v.get("handlers") {
                    let Some(o) = h.as_object() else {
                        return Err(Rule("handlers must map error tags to instruction lists"));
                    };
                    for (tag, lines) in o {
                        s = s.with_handler(tag, &strings(lines, &format!("handlers.{tag}"))?)?;
                    }
                }
                if let Some(d) = v.get("default_handler") {
                    s = s.with_default_handler(&strings(d, "default_handler")?)?;
                }
                s
            };
            world.custom_mut::<Script>().insert(e, script);
        }
        other => {
            return Err(ComponentError::Unknown(other.to_string()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_world_too_large_for_its_grid_is_refused() {
        // A draw.io page (or world.width) of 1e300 overflowed the grid's cell count.
        let base = Path::new("/nonexistent");
        for size in ["1e300", "1e7"] {
            let text = format!("[world]\nwidth = {size}\nheight = {size}\n");
            let s = Scenario::from_toml_str(&text, base).unwrap();
            let e = s.build(&Overrides::default()).unwrap_err().to_string();
            assert!(e.contains("grid cells"), "{e}");
        }
        // The drone swarm in cells of 0.1: 2.4 GB of grid.
        let text = "[world]\ncell_size = 0.1\n[generator]\nkind = \"drone-swarm\"\nrobots = 80\n";
        let s = Scenario::from_toml_str(text, base).unwrap();
        assert!(s.build(&Overrides::default()).is_err());
        let ok = Scenario::from_toml_str("[world]\nwidth = 4000\nheight = 3000\n", base).unwrap();
        assert!(ok.build(&Overrides::default()).is_ok());
    }
    #[test]
    fn more_generated_robots_than_the_limits_are_refused_before_anything_is_built() {
        let base = Path::new("/nonexistent");
        for (kind, over, limit) in [
            ("drone-swarm", MAX_DRONES + 1, "drone swarm's limit"),
            ("drone-swarm", usize::MAX, "drone swarm's limit"),
            ("warehouse", MAX_WAREHOUSE_ROBOTS + 1, "warehouse's limit"),
            ("warehouse", usize::MAX, "warehouse's limit"),
        ] {
            let text = format!("[generator]\nkind = \"{kind}\"\nrobots = 10\n");
            let s = Scenario::from_toml_str(&text, base).unwrap();
            let ov = Overrides {
                robots: Some(over),
                ..Overrides::default()
            };
            let e = s.build(&ov).unwrap_err().to_string();
            assert!(e.contains(limit) && e.contains(&over.to_string()), "{e}");
        }
        // None at all: a run of nothing until the duration.
        for kind in ["drone-swarm", "warehouse"] {
            let text = format!("[generator]\nkind = \"{kind}\"\nrobots = 0\n");
            let s = Scenario::from_toml_str(&text, base).unwrap();
            let e = s.build(&Overrides::default()).unwrap_err().to_string();
            assert!(e.contains("at least 1 robot"), "{e}");
            let text = format!("[generator]\nkind = \"{kind}\"\nrobots = 3\n");
            let s = Scenario::from_toml_str(&text, base).unwrap();
            let ov = Overrides {
                robots: Some(0),
                ..Overrides::default()
            };
            assert!(s.build(&ov).is_err());
        }
    }

    /// The robots' and the grid's limits were constants: a user could not lower them to
    /// guard a smaller machine, nor raise them for a larger one.
    #[test]
    fn build_limits_lower_and_raise_the_robots_and_the_grid() {
        // The caller's values in place of the defaults, out of range refused in its words.
        let given = BuildLimits::given(Some(7), None, "--max-robots N", "--max-grid-cells N");
        let l = given.expect("in range");
        assert_eq!((l.max_drones, l.max_warehouse_robots), (7, 7));
        assert_eq!(l.max_grid_cells, MAX_GRID_CELLS);
        assert_eq!(l.raise_robots_with, Some("--max-robots N"));
        for (robots, cells, says) in [
            (Some(0), None, "max_robots= 0: must be from 1 to 1000000000"),
            (
                None,
                Some(0),
                "max_grid_cells= 0: must be from 1 to 4294967295",
            ),
            (
                Some(MAX_ROBOTS_SETTABLE + 1),
                None,
                "max_robots= 1000000001",
            ),
        ] {
            let e = BuildLimits::given(robots, cells, "max_robots=", "max_grid_cells=");
            assert!(
                e.is_err_and(|e| e.0.starts_with(says)),
                "{robots:?} {cells:?}"
            );
        }
        let base = Path::new("/nonexistent");
        let with = |limits: BuildLimits, robots: usize| Overrides {
            robots: Some(robots),
            limits,
            ..Overrides::default()
        };
        let raise = BuildLimits {
            raise_robots_with: Some("--max-robots N"),
            raise_grid_cells_with: Some("--max-grid-cells N"),
            ..BuildLimits::default()
        };
        for kind in ["drone-swarm", "warehouse"] {
            let text = format!("[generator]\nkind = \"{kind}\"\nrobots = 10\n");
            let s = Scenario::from_toml_str(&text, base).unwrap();
            let low = BuildLimits {
                max_drones: 5,
                max_warehouse_robots: 5,
                ..raise
            };
            let e = s.build(&with(low, 6)).unwrap_err().to_string();
            assert!(
                e.contains("6 ") && e.contains("limit of 5: raise it with --max-robots N"),
                "{e}"
            );
            assert!(s.build(&with(low, 5)).is_ok(), "{kind}: 5 robots");
            // The default: as before, and no way to raise it named.
            let e = s
                .build(&with(BuildLimits::default(), usize::MAX))
                .unwrap_err()
                .to_string();
            assert!(!e.contains("raise it"), "{e}");
        }
        // Raised: past the default, up to what a world can number, never further.
        let text = "[generator]\nkind = \"warehouse\"\nrobots = 10\n";
        let s = Scenario::from_toml_str(text, base).unwrap();
        let high = BuildLimits {
            max_warehouse_robots: usize::MAX,
            ..raise
        };
        let e = s
            .build(&with(high, MAX_ROBOTS_SETTABLE + 1))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("limit of {MAX_ROBOTS_SETTABLE}")),
            "{e}"
        );
        // The grid: 100 × 100 in cells of 1 is 10,000 cells.
        let text = "[world]\nwidth = 100\nheight = 100\ncell_size = 1\n";
        let s = Scenario::from_toml_str(text, base).unwrap();
        let cells = |max_grid_cells: usize| Overrides {
            limits: BuildLimits {
                max_grid_cells,
                ..raise
            },
            ..Overrides::default()
        };
        let e = s.build(&cells(9_999)).unwrap_err().to_string();
        assert!(
            e.contains("makes 10000 grid cells, more than 9999")
                && e.contains("raise the limit with --max-grid-cells N"),
            "{e}"
        );
        assert!(s.build(&cells(10_000)).is_ok());
        assert!(s.build(&Overrides::default()).is_ok());
        // 1e7 × 1e7 in cells of 20 (the default) is 2.5e11 cells: past the default, and
        // past what any limit lets through.
        let text = "[world]\nwidth = 1e7\nheight = 1e7\n";
        let s = Scenario::from_toml_str(text, base).unwrap();
        let e = s.build(&cells(usize::MAX)).unwrap_err().to_string();
        assert!(
            e.contains(&format!(
                "makes 250000000000 grid cells, more than {MAX_GRID_CELLS_SETTABLE}"
            )),
            "{e}"
        );
        let e = s.build(&Overrides::default()).unwrap_err().to_string();
        assert!(
            e.contains(&format!("more than {MAX_GRID_CELLS}:")) && !e.contains("raise"),
            "{e}"
        );
    }

    /// A wall of negative size loaded and stopped nothing; a NaN corner loaded too.
    #[test]
    fn walls_of_no_size_or_no_place_are_refused() {
        let base = Path::new(".");
        for (walls, at) in [
            ("[world]\nwalls = [[150, 80, -20, 40]]", "world.walls[0]"),
            (
                "[world]\nwalls = [[0, 0, 5, 5], [nan, 0, 10, 10]]",
                "world.walls[1]",
            ),
            ("[world]\nwalls = [[0, 0, 10, 0]]", "world.walls[0]"),
            (
                "[[entities]]\ntype = \"wall\"\nposition = [200, 50]\nsize = [-10, 5]",
                "entities[0]",
            ),
            (
                "[[entities]]\ntype = \"wall\"\nposition = [200, 50]\nsize = [inf, 5]",
                "entities[0]",
            ),
        ] {
            let s = Scenario::from_toml_str(walls, base).unwrap();
            let e = s.build(&Overrides::default()).unwrap_err().to_string();
            assert!(
                e.contains(at) && e.contains("a positive width and height"),
                "{walls}: {e}"
            );
        }
        let ok = "[world]\nwalls = [[0, 0, 10, 5]]\n[[entities]]\ntype = \"wall\"\n\
                  position = [200, 50]\nsize = [10, 5]";
        let s = Scenario::from_toml_str(ok, base).unwrap();
        assert!(s.build(&Overrides::default()).is_ok());
    }

    /// A given world smaller than the generator's layout loaded: 20 drones in 100 × 100
    /// started and flew outside it (16 crashed, none arrived).
    #[test]
    fn a_given_world_smaller_than_the_generators_layout_is_refused() {
        let base = Path::new(".");
        for (kind, robots) in [("drone-swarm", 20), ("warehouse", 40)] {
            let lay = |w: &str, h: &str| {
                format!(
                    "[world]\nwidth = {w}\nheight = {h}\n[generator]\nkind = \"{kind}\"\n\
                     robots = {robots}\n"
                )
            };
            let (need_w, need_h) = if kind == "drone-swarm" {
                let l = drones::layout(robots);
                (l.width, l.height)
            } else {
                warehouse::size(robots)
            };
            for (w, h) in [
                (need_w - 1.0, need_h),
                (need_w, need_h - 1.0),
                (100.0, 100.0),
            ] {
                let s =
                    Scenario::from_toml_str(&lay(&w.to_string(), &h.to_string()), base).unwrap();
                let e = s.build(&Overrides::default()).unwrap_err().to_string();
                let needs = format!("at least {} × {}", need_w.ceil(), need_h.ceil());
                assert!(
                    e.contains("is smaller than the") && e.contains(&needs),
                    "{e}"
                );
            }
            // As large or larger: built, at the size given.
            let text = lay(&need_w.to_string(), &(need_h + 50.0).to_string());
            let sim = Scenario::from_toml_str(&text, base)
                .unwrap()
                .build(&Overrides::default())
                .unwrap();
            let r = &sim.world().res;
            assert_eq!((r.width, r.height), (need_w, need_h + 50.0));
        }
    }

    /// `world.stop_on_collision` never reached generated robots: warehouse robots could not
    /// be made to stop, drones stopped whatever it said.
    #[test]
    fn stop_on_collision_reaches_generated_robots() {
        let base = Path::new(".");
        let stopping = |text: &str| -> Result<(usize, usize), String> {
            let sim = Scenario::from_toml_str(text, base)
                .unwrap()
                .build(&Overrides::default())
                .map_err(|e| e.to_string())?;
            let w = sim.world();
            Ok((w.robot_count(), w.stop_on_collision.iter().count()))
        };
        let wh = "[generator]\nkind = \"warehouse\"\nrobots = 8\n";
        assert_eq!(stopping(wh), Ok((8, 0)), "left out: they do not stop");
        let on = format!("[world]\nstop_on_collision = true\n{wh}");
        assert_eq!(stopping(&on), Ok((8, 8)));
        let off = format!("[world]\nstop_on_collision = false\n{wh}");
        assert_eq!(stopping(&off), Ok((8, 0)));
        let ds = "[generator]\nkind = \"drone-swarm\"\nrobots = 8\n";
        assert_eq!(stopping(ds), Ok((8, 8)), "left out: drones stop");
        let on = format!("[world]\nstop_on_collision = true\n{ds}");
        assert_eq!(stopping(&on), Ok((8, 8)));
        let off = format!("[world]\nstop_on_collision = false\n{ds}");
        let e = stopping(&off).unwrap_err();
        assert!(e.contains("does not apply to the drone swarm"), "{e}");
        // Listed robots: the key as before.
        let listed = "[[entities]]\ntype = \"robot\"\nposition = [5, 5]\n";
        assert_eq!(stopping(listed), Ok((1, 1)));
        let off = format!("[world]\nstop_on_collision = false\n{listed}");
        assert_eq!(stopping(&off), Ok((1, 0)));
    }

    /// A charge above the capacity loaded; `Velocity = { x = 1 }` said `(expected: )`.
    #[test]
    fn battery_charge_above_capacity_and_velocity_fields_are_refused_clearly() {
        let base = Path::new(".");
        let robot = |c: &str| {
            format!("[[entities]]\ntype = \"robot\"\nname = \"r\"\nposition = [5, 5]\ncomponents = {{ {c} }}\n")
        };
        let refused = |c: &str| {
            Scenario::from_toml_str(&robot(c), base)
                .unwrap()
                .build(&Overrides::default())
                .unwrap_err()
                .to_string()
        };
        let e = refused("Battery = { capacity = 10, charge = 20 }");
        assert!(
            e.contains("components.Battery") && e.contains("charge from 0 to capacity"),
            "{e}"
        );
        assert!(e.contains("capacity 10, charge 20"), "{e}");
        let e = refused("Velocity = { x = 1 }");
        assert!(
            e.contains("components.Velocity") && e.contains("Velocity is [vx, vy] or {}"),
            "{e}"
        );
        assert!(!e.contains("expected: )"), "{e}");
        for ok in [
            "Battery = { capacity = 10, charge = 10 }",
            "Velocity = {}",
            "Velocity = [1, 0]",
        ] {
            let s = Scenario::from_toml_str(&robot(ok), base).unwrap();
            assert!(s.build(&Overrides::default()).is_ok(), "{ok}");
        }
    }

    #[test]
    fn more_threads_than_the_limit_are_refused() {
        let base = Path::new(".");
        let s = Scenario::from_toml_str("[generator]\nkind = \"drone-swarm\"\nrobots = 10\n", base)
            .unwrap();
        for (threads, ok) in [
            (0, true),
            (1, true),
            (MAX_THREADS, true),
            (MAX_THREADS + 1, false),
        ] {
            let ov = Overrides {
                threads: Some(threads),
                ..Overrides::default()
            };
            match s.build(&ov) {
                Ok(sim) => {
                    assert!(ok, "{threads} threads built");
                    assert!(sim.ctx.config.thread_count() <= MAX_THREADS);
                }
                Err(e) => {
                    assert!(!ok, "{threads} threads: {e}");
                    let e = e.to_string();
                    assert!(e.contains("more than the limit of 64"), "{e}");
                }
            }
        }
        let mut sim = s.build(&Overrides::default()).unwrap();
        sim.set_threads(usize::MAX);
        assert_eq!(sim.ctx.config.thread_count(), MAX_THREADS);
    }
}
