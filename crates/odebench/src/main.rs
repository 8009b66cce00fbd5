//! `simrob-odebench`: simrob's physics side by side with ODE 0.16, the engine of the SimRob
//! simulator, on the same scene — the SimRob materials and 13-box soccer field, the ball and
//! N SumBots on a grid driving in circles (wheel targets 3 and 5 rad/s), dt 0.01 s, one
//! thread each. For N = 1, 6, 22 and 100 the engines run in alternating blocks in one process
//! (41 blocks each; an engine's speed is that of its median block) and the tool prints steps
//! per second, the ratios, and what each engine did: robots flipped,
//! non-finite states, where the ball rests; then a single SumBot's resting height and tilt, its
//! drift over an idle minute, its straight-line speed against ω·r and how far the centre of
//! its circle wanders in 500 s, and how far the ball
//! falls in 0.5 s (both engines integrate once per step: ½g·t·(t + h), not ½g·t²); then the
//! ball rolled at 1.5 m/s into two walls, and how fast it comes off them; the ball off a wall
//! at five speeds and dropped from three heights, each averaged over 20 starts a twentieth of
//! a step apart (how far ODE's contact sends a ball back depends on how deep it first
//! overlaps); a SumBot driving into the ball (the robot's speed, the ball's); and robots
//! tipped over in seeded random layouts of SumBots driving among each other. `--crowd N`
//! instead times N SumBots on a large floor in simrob (or MuJoCo) alone.
//!
//! ODE is loaded at run time from Debian's `libode` (`apt-get install libode-dev`) when an ODE
//! engine is asked for; without it the tool says so and fails. MuJoCo, a third engine, joins
//! when its library is found (`mujoco.rs`: the `mujoco-core` Python wheel ships it). Build it optimised:
//! `cargo run --release -p simrob-odebench`.

mod dynlib;
mod mujoco;
mod ode;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use ode::{Api, OdeScene, Stepper};
use simrob_math::wrap_angle_euclid;
use simrob_physics::rotate;
use simrob_protocol::{
    decode_datagram, BodySpec, CommandKeys, ControlRequest, EntityId, EntityRequest, EntitySpec,
    Interaction, MaterialId, MotorCommand, Request, Shape,
};
use simrob_world::{moved_copy, World, WorldConfig};

const HELP: &str = "\
simrob-odebench — simrob's physics against ODE (the engine of the SimRob simulator) and MuJoCo

Runs the same scene in every engine (the SimRob soccer field and materials, the ball, N SumBots
driving in circles, dt 0.01 s, one thread each), alternating the engines in 41 blocks each (an
engine's speed is its median block's: a burst of load from elsewhere does not count), and
prints steps per second, the speed ratios and plausibility figures: a SumBot at rest,
driving and circling, the ball off walls and the floor, the ball rolling on the field, a
SumBot driving into the ball, robots tipped over in seeded random layouts.

ODE's shared library is loaded only when an ODE engine (ode-step, ode-quick) is asked for, as
it is by default: $SIMROB_ODE_LIB (the path of libode.so; when set, the only place looked),
else the loader's path (Debian/Ubuntu: apt-get install libode-dev); without it the tool says
so and fails (--engines default,fast,mujoco, --crowd and --check-mujoco need no ODE). MuJoCo
joins when its library is found: $SIMROB_MUJOCO_LIB (the path of libmujoco.so; when set, the
only place looked, and a library that does not load there is an error), the loader's path,
or python3's `mujoco` package (pip install mujoco-core); asked for (--engines mujoco,
--crowd-engine mujoco, --check-mujoco) and not found, the tool fails.
$SIMROB_MUJOCO_XML=FILE writes the last MuJoCo model built (MJCF); a file it cannot write is
an error.

The scenario files are checked before any engine builds a scene: a Field, a Ball (entity 8,
a positive mass) and a Robot, every size positive, every mass positive or -1 (static).

USAGE: simrob-odebench [--scale F] [--sizes 1,6,22,100] [--engines LIST] [--speed-only]
                       [--scenarios DIR] [--exact-100] [--layouts K|FIRST..LAST]
                       [--layout-robots N] [--layout-seconds S]
       simrob-odebench --crowd N [--crowd-steps S] [--crowd-layouts K|FIRST..LAST]
                       [--threads T] [--crowd-engine default|mujoco] [--scenarios DIR]
       simrob-odebench --check-mujoco [--scenarios DIR]

An option is given once; one that the chosen mode does not use (a crowd option without
--crowd, a table option with --crowd or --check-mujoco, a layout option with --speed-only
or --layouts 0) is refused.

  --scale F        multiply the number of timed steps (default 1; 0.1 for a quick look;
                   more than 0, at most 100)
  --sizes LIST     robot counts (default 1,6,22,100; each 1 to 400, at most 8 counts)
  --engines LIST   which engines to run, of ode-step, ode-quick, default, fast, mujoco
                   (default: all, MuJoCo if found); ratios need both of their engines
  --speed-only     print the steps-per-second table only (no other table, no layouts)
  --scenarios DIR  where materials.xml, field.xml, ball.xml and sumbot.xml are
                   (default: the repository's scenarios/)
  --exact-100      also time ODE's exact stepper (dWorldStep) at 100 robots or more (very
                   slow; without it its cell says so)
  --layouts K|FIRST..LAST
                   seeded random layouts to count flips in: K is layouts 1 to K (default 8;
                   0: none), FIRST..LAST those numbers (65..128: layouts 65 to 128, each the
                   same layout as in a run of 1 to 128); at most 1000 layouts, numbered 1 to
                   1000000
  --layout-robots N  SumBots in each random layout (default 22; 1 to 60)
  --layout-seconds S simulated seconds each layout drives (default 60; more than 0, at most
                   3600)
  --crowd N        only this: N SumBots (1 to 10000) on a large floor in simrob's default
                   mode (steps/s, flips, robots upright, a digest of the end state)
  --crowd-steps S  timed steps (default 500; 1 to 1000000)
  --crowd-layouts K|FIRST..LAST
                   seeded random layouts as dense as the field's (robots meet) instead of a
                   grid: K is layouts 1 to K (0, the default: the grid), FIRST..LAST those
                   numbers; at most 100 layouts, numbered 1 to 1000000
  --threads T      threads each simrob step runs on (default 1; the run is the same whatever
                   the number: compare the digests)
  --crowd-engine E the crowd in simrob's default mode (default) or in MuJoCo (mujoco; one
                   thread)
  --check-mujoco   only this: the MuJoCo scene of one SumBot and the ball against its specs and
                   simrob (mass, coordinates, rest, speed; `key values` lines; no ODE needed);
                   fails without MuJoCo's library
";

const SUMBOT_WHEEL_RADIUS: f64 = 0.023;
/// Blocks per engine: engines alternate this many times within one measurement, and each
/// engine's speed is its median block's, so that a burst of load from outside (another
/// process, the virtual machine's host) slows one block of one engine, not its figure.
const ROUNDS: u32 = 41;

struct Options {
    scale: f64,
    sizes: Vec<u32>,
    scenarios: PathBuf,
    exact_100: bool,
    /// Indices into [`ENGINES`].
    engines: Vec<usize>,
    /// `--engines` was given (else MuJoCo joins when its library is found).
    engines_given: bool,
    /// `--check-mujoco`: the MuJoCo scene's build checks only.
    check_mujoco: bool,
    speed_only: bool,
    /// The random layouts flips are counted in (empty: none).
    layouts: Layouts,
    layout_robots: u32,
    layout_seconds: f64,
    crowd: Option<u32>,
    crowd_steps: u64,
    /// Threads each simrob step runs on.
    threads: usize,
    /// `--crowd`'s random layouts (empty: the grid).
    crowd_layouts: Layouts,
    /// `--crowd-engine mujoco`: the crowd in MuJoCo instead of simrob's default mode.
    crowd_mujoco: bool,
}

/// The largest `--scale`.
const MAX_SCALE: f64 = 100.0;
/// The most counts `--sizes` takes.
const MAX_SIZES: usize = 8;
/// The most random layouts one run of `--layouts` drives.
const MAX_LAYOUTS: u32 = 1000;
/// The most random layouts one run of `--crowd-layouts` drives.
const MAX_CROWD_LAYOUTS: u32 = 100;
/// The highest layout number (`--layouts`, `--crowd-layouts`).
const MAX_LAYOUT_NUMBER: u32 = 1_000_000;
/// The most timed steps of `--crowd-steps` (10,000 simulated seconds).
const MAX_CROWD_STEPS: u64 = 1_000_000;

/// Seeded random layouts `first..=last` (numbered from 1); `last < first`: none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layouts {
    first: u32,
    last: u32,
}

impl Layouts {
    const NONE: Layouts = Layouts { first: 1, last: 0 };

    fn count(self) -> u32 {
        (self.last + 1).saturating_sub(self.first)
    }

    fn numbers(self) -> std::ops::RangeInclusive<u32> {
        self.first..=self.last
    }

    /// `K` (layouts 1 to K; 0: none) or `FIRST..LAST` (inclusive, from 1), at most `max`
    /// layouts, none numbered above [`MAX_LAYOUT_NUMBER`].
    fn parse(name: &str, text: &str, max: u32) -> Result<Layouts> {
        let form = format!(
            "{name} is a number of layouts K (layouts 1 to K, at most {max}) or a range \
             FIRST..LAST of layout numbers (1 to {MAX_LAYOUT_NUMBER}, at most {max} layouts)"
        );
        let number = |t: &str| {
            t.trim()
                .parse::<u32>()
                .with_context(|| format!("{form}, not {text:?}"))
        };
        let layouts = match text.split_once("..") {
            Some((a, b)) => {
                let (first, last) = (number(a)?, number(b)?);
                if first == 0 || first > last {
                    bail!("{form}: {text:?} must run from 1 or more upwards (FIRST at most LAST)");
                }
                Layouts { first, last }
            }
            None => {
                let k = number(text)?;
                if k > max {
                    bail!("{form}: {k} is more than {max}");
                }
                Layouts { first: 1, last: k }
            }
        };
        if layouts.last > MAX_LAYOUT_NUMBER {
            bail!("{form}: {text:?} goes past layout {MAX_LAYOUT_NUMBER}");
        }
        if layouts.count() > max {
            bail!(
                "{form}: {text:?} is {} layouts, more than {max}",
                layouts.count()
            );
        }
        Ok(layouts)
    }
}

/// Which of the tool's modes an option belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The tables (no `--crowd`, no `--check-mujoco`).
    Tables,
    /// `--crowd N`.
    Crowd,
    /// Every mode (`--scenarios`).
    Any,
}

/// Every option, the mode it applies to, and whether it takes a value.
const OPTIONS: [(&str, Mode, bool); 17] = [
    ("--scale", Mode::Tables, true),
    ("--sizes", Mode::Tables, true),
    ("--engines", Mode::Tables, true),
    ("--speed-only", Mode::Tables, false),
    ("--scenarios", Mode::Any, true),
    ("--exact-100", Mode::Tables, false),
    ("--layouts", Mode::Tables, true),
    ("--layout-robots", Mode::Tables, true),
    ("--layout-seconds", Mode::Tables, true),
    ("--crowd", Mode::Crowd, true),
    ("--crowd-steps", Mode::Crowd, true),
    ("--crowd-layouts", Mode::Crowd, true),
    ("--threads", Mode::Crowd, true),
    ("--crowd-engine", Mode::Crowd, true),
    ("--check-mujoco", Mode::Any, false),
    ("--help", Mode::Any, false),
    ("-h", Mode::Any, false),
];

fn options() -> Result<Option<Options>> {
    parse_options(std::env::args().skip(1))
}

fn parse_options(args: impl IntoIterator<Item = String>) -> Result<Option<Options>> {
    let mut o = Options {
        scale: 1.0,
        sizes: vec![1, 6, 22, 100],
        scenarios: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios"),
        exact_100: false,
        engines: (0..MUJOCO).collect(),
        engines_given: false,
        check_mujoco: false,
        speed_only: false,
        layouts: Layouts { first: 1, last: 8 },
        layout_robots: 22,
        layout_seconds: 60.0,
        crowd: None,
        crowd_steps: 500,
        threads: 1,
        crowd_layouts: Layouts::NONE,
        crowd_mujoco: false,
    };
    let mut given: Vec<&'static str> = Vec::new();
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        let Some(&(name, _, takes_value)) = OPTIONS.iter().find(|(n, _, _)| *n == a) else {
            bail!("unknown argument {a:?} (see --help)");
        };
        if name == "--help" || name == "-h" {
            print!("{HELP}");
            return Ok(None);
        }
        if given.contains(&name) {
            bail!("{name} is given twice; give it once");
        }
        given.push(name);
        let value = if takes_value {
            args.next()
                .with_context(|| format!("{name} needs a value (see --help)"))?
        } else {
            String::new()
        };
        match name {
            "--scale" => {
                o.scale = value
                    .parse()
                    .with_context(|| format!("--scale: a number, not {value:?}"))?;
                if !(o.scale > 0.0 && o.scale <= MAX_SCALE) {
                    bail!("--scale: more than 0, at most {MAX_SCALE}, not {value}");
                }
            }
            "--sizes" => {
                o.sizes = value
                    .split(',')
                    .map(|s| s.trim().parse::<u32>())
                    .collect::<Result<_, _>>()
                    .with_context(|| {
                        format!("--sizes: robot counts separated by commas, not {value:?}")
                    })?;
                if o.sizes.iter().any(|&n| n == 0 || n > 400) {
                    bail!("--sizes: each count between 1 and 400");
                }
                if o.sizes.len() > MAX_SIZES {
                    bail!("--sizes: at most {MAX_SIZES} counts");
                }
            }
            "--scenarios" => o.scenarios = PathBuf::from(value),
            "--exact-100" => o.exact_100 = true,
            "--speed-only" => o.speed_only = true,
            "--check-mujoco" => o.check_mujoco = true,
            "--layouts" => o.layouts = Layouts::parse("--layouts", &value, MAX_LAYOUTS)?,
            "--layout-robots" => {
                o.layout_robots = value.parse().with_context(|| {
                    format!("--layout-robots: a number of robots, not {value:?}")
                })?;
                if !(1..=60).contains(&o.layout_robots) {
                    bail!("--layout-robots: between 1 and 60 (they must fit on the field)");
                }
            }
            "--crowd" => {
                let n: u32 = value
                    .parse()
                    .with_context(|| format!("--crowd: a number of robots, not {value:?}"))?;
                if !(1..=10_000).contains(&n) {
                    bail!("--crowd: between 1 and 10000 robots");
                }
                o.crowd = Some(n);
            }
            "--crowd-steps" => {
                o.crowd_steps = value
                    .parse()
                    .with_context(|| format!("--crowd-steps: a number of steps, not {value:?}"))?;
                if !(1..=MAX_CROWD_STEPS).contains(&o.crowd_steps) {
                    bail!("--crowd-steps: between 1 and {MAX_CROWD_STEPS}");
                }
            }
            "--threads" => {
                o.threads = value
                    .parse()
                    .with_context(|| format!("--threads: a number of threads, not {value:?}"))?;
                if !(1..=simrob_physics::MAX_THREADS).contains(&o.threads) {
                    bail!("--threads: between 1 and {}", simrob_physics::MAX_THREADS);
                }
            }
            "--crowd-engine" => match value.as_str() {
                "default" => o.crowd_mujoco = false,
                "mujoco" => o.crowd_mujoco = true,
                other => bail!("--crowd-engine: default or mujoco, not {other:?}"),
            },
            "--crowd-layouts" => {
                o.crowd_layouts = Layouts::parse("--crowd-layouts", &value, MAX_CROWD_LAYOUTS)?;
            }
            "--layout-seconds" => {
                o.layout_seconds = value.parse().with_context(|| {
                    format!("--layout-seconds: simulated seconds, not {value:?}")
                })?;
                if !(o.layout_seconds > 0.0 && o.layout_seconds <= 3600.0) {
                    bail!("--layout-seconds: more than 0, at most 3600");
                }
            }
            "--engines" => {
                o.engines = Vec::new();
                o.engines_given = true;
                for name in value.split(',').map(str::trim) {
                    let Some(k) = ENGINE_KEYS.iter().position(|&key| key == name) else {
                        bail!(
                            "--engines: unknown engine {name:?} (one of {})",
                            ENGINE_KEYS.join(", ")
                        );
                    };
                    if !o.engines.contains(&k) {
                        o.engines.push(k);
                    }
                }
                o.engines.sort_unstable();
            }
            _ => unreachable!("every option of OPTIONS is handled"),
        }
    }
    // Options that the chosen mode would not use are refused, not ignored.
    let of_mode = |mode: Mode| -> Vec<&str> {
        given
            .iter()
            .copied()
            .filter(|n| OPTIONS.iter().any(|(o, m, _)| o == n && *m == mode))
            .collect()
    };
    let (tables, crowd) = (of_mode(Mode::Tables), of_mode(Mode::Crowd));
    if o.check_mujoco {
        let other: Vec<&str> = tables.iter().chain(&crowd).copied().collect();
        if !other.is_empty() {
            bail!(
                "{} not apply to --check-mujoco, which runs alone (with --scenarios at most)",
                names_do(&other)
            );
        }
    } else if o.crowd.is_some() {
        if !tables.is_empty() {
            bail!(
                "{} not apply to --crowd (--crowd-steps, --crowd-layouts, --threads, \
                 --crowd-engine and --scenarios do)",
                names_do(&tables)
            );
        }
        if o.crowd_mujoco && o.threads != 1 {
            bail!("--crowd-engine mujoco runs on one thread: --threads 1 (or leave it out)");
        }
    } else {
        if !crowd.is_empty() {
            bail!(
                "{} not apply without --crowd N (they set up the crowd); give --crowd N, or \
                 leave them out",
                names_do(&crowd)
            );
        }
        if o.speed_only || o.layouts.count() == 0 {
            let mut unused: Vec<&str> = ["--layout-robots", "--layout-seconds"]
                .into_iter()
                .filter(|n| given.contains(n))
                .collect();
            if o.layouts.count() > 0 && given.contains(&"--layouts") {
                unused.insert(0, "--layouts");
            }
            if !unused.is_empty() {
                bail!(
                    "{} not apply when no random layouts run ({}); leave them out",
                    names_do(&unused),
                    if o.speed_only {
                        "--speed-only"
                    } else {
                        "--layouts 0"
                    }
                );
            }
        }
    }
    Ok(Some(o))
}

/// Options named in an error, with the verb: "--a does", "--a and --b do".
fn names_do(names: &[&str]) -> String {
    match names {
        [one] => format!("{one} does"),
        [rest @ .., last] => format!("{} and {last} do", rest.join(", ")),
        [] => String::new(),
    }
}

/// The scene's ingredients, decoded once from the scenario files.
#[derive(Clone)]
struct Scene {
    materials: Vec<Request>,
    interactions: Vec<Interaction>,
    field: EntitySpec,
    ball: EntitySpec,
    sumbot: EntitySpec,
}

fn requests(dir: &Path, file: &str) -> Result<Vec<Request>> {
    let path = dir.join(file);
    let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    decode_datagram(&bytes, &CommandKeys::default())
        .into_iter()
        .map(|r| r.with_context(|| format!("decoding {}", path.display())))
        .collect()
}

fn entity(dir: &Path, file: &str) -> Result<EntitySpec> {
    match requests(dir, file)?.into_iter().next() {
        Some(Request::Control {
            request: ControlRequest::CreateEntity(spec),
            ..
        }) => Ok(spec),
        _ => bail!("{file} does not start with a Create_Entity"),
    }
}

impl Scene {
    fn load(dir: &Path) -> Result<Scene> {
        let materials = requests(dir, "materials.xml")?;
        let interactions = materials
            .iter()
            .filter_map(|r| match r {
                Request::Control {
                    request: ControlRequest::RegisterMaterialsInteractions { interactions, .. },
                    ..
                } => Some(interactions.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        let scene = Scene {
            materials,
            interactions,
            field: entity(dir, "field.xml")?,
            ball: entity(dir, "ball.xml")?,
            sumbot: entity(dir, "sumbot.xml")?,
        };
        scene
            .check()
            .with_context(|| format!("the scenario files in {}", dir.display()))?;
        Ok(scene)
    }

    /// Checks the decoded specs once, before any engine builds a scene from them (ODE aborts
    /// the process on a body of no size or mass, and would time a ball as a robot): the
    /// entities' kinds, positive finite sizes, masses positive or −1 (static), a ball that
    /// moves; then simrob's world builds the field, the ball and one SumBot, which checks the
    /// rest (materials registered, joints between the entity's bodies).
    fn check(&self) -> Result<()> {
        let kinds = [
            ("field.xml", &self.field, "Field"),
            ("ball.xml", &self.ball, "Ball"),
            ("sumbot.xml", &self.sumbot, "Robot"),
        ];
        for (file, spec, kind) in kinds {
            let id = spec.entity_id();
            if spec.type_name() != kind {
                bail!(
                    "{file}: entity {id} is a {}, not a {kind} (the benchmark needs a {kind} there)",
                    spec.type_name()
                );
            }
            let (bodies, _) = spec.structure();
            if bodies.is_empty() {
                bail!("{file}: entity {id} has no body");
            }
            for b in bodies.iter() {
                let at = format!("{file}: entity {id}, body {}", b.id);
                let sizes: Vec<(&str, f64)> = match b.shape {
                    Shape::Sphere { radius } => vec![("Radius", radius)],
                    Shape::Box { size } => {
                        vec![
                            ("Size_X", size[0]),
                            ("Size_Y", size[1]),
                            ("Size_Z", size[2]),
                        ]
                    }
                    Shape::Cylinder { radius, length }
                    | Shape::WheelCylinder { radius, length } => {
                        vec![("Radius", radius), ("Length", length)]
                    }
                };
                for (name, v) in sizes {
                    if !(v.is_finite() && v > 0.0) {
                        bail!("{at}: {name} must be a positive number of metres, not {v}");
                    }
                }
                if let Some(m) = b.mass {
                    if !(m.is_finite() && (m > 0.0 || m == -1.0)) {
                        bail!("{at}: Mass must be positive (kg) or -1 (static), not {m}");
                    }
                }
                if !b.position.iter().chain(&b.rotation).all(|v| v.is_finite()) {
                    bail!("{at}: its position and rotation must be finite numbers");
                }
            }
        }
        if self.ball.entity_id() != EntityId(BALL) {
            bail!(
                "ball.xml: the ball is entity {}; the benchmark reads it as entity {BALL} (as \
                 scenarios/ball.xml)",
                self.ball.entity_id()
            );
        }
        if self.ball.structure().0.iter().any(|b| b.mass == Some(-1.0)) {
            bail!("ball.xml: the ball's Mass is -1 (static); the benchmark rolls and drops it: give it a positive mass");
        }
        let field = self.field.entity_id();
        if field == EntityId(BALL) || field.0 >= 100 {
            bail!(
                "field.xml: the field is entity {field}; the benchmark gives the ball entity \
                 {BALL} and the robots 100 on"
            );
        }
        self.simrob(&Scene::grid(1, (0.0, 0.0)), false, true)
            .context("simrob's world refuses them")?;
        Ok(())
    }

    /// Robot `i` of `n`: entity id and where it starts (a grid around the field's centre).
    fn placement(n: u32, i: u32) -> (u32, [f64; 3]) {
        let columns = (n as f64).sqrt().ceil() as u32;
        let spacing = if n > 10 { 0.15 } else { 0.4 };
        let (cx, cy) = ((i % columns) as f64, (i / columns) as f64);
        let half = (columns - 1) as f64 / 2.0;
        (
            100 + i,
            [(cx - half) * spacing, (cy - half) * spacing + 0.1, 0.0],
        )
    }

    /// N robots on the grid, all with the same wheel targets.
    fn grid(n: u32, wheels: (f64, f64)) -> Vec<Placement> {
        (0..n)
            .map(|i| Placement {
                at: Scene::placement(n, i).1,
                wheels,
            })
            .collect()
    }

    fn robots(&self, robots: &[Placement]) -> Vec<EntitySpec> {
        robots
            .iter()
            .enumerate()
            .map(|(i, r)| moved_copy(&self.sumbot, EntityId(100 + i as u32), r.at))
            .collect()
    }

    fn simrob(&self, robots: &[Placement], fast: bool, ball: bool) -> Result<World> {
        let mut w = World::new(WorldConfig::default());
        for r in &self.materials {
            w.apply(r).context("materials")?;
        }
        let mut specs = vec![self.field.clone()];
        if ball {
            specs.push(self.ball.clone());
        }
        specs.extend(self.robots(robots));
        for s in specs {
            w.apply_control(&ControlRequest::CreateEntity(s))
                .context("creating an entity")?;
        }
        if fast {
            w.apply_control(&ControlRequest::SetFastMode(true))?;
        }
        for (i, r) in robots.iter().enumerate() {
            w.apply_entity(&EntityRequest::RobotMotorControl {
                entity_id: EntityId(100 + i as u32),
                motors: vec![
                    MotorCommand {
                        wheel_joint_id: 0,
                        value: r.wheels.0,
                    },
                    MotorCommand {
                        wheel_joint_id: 1,
                        value: r.wheels.1,
                    },
                ],
            })?;
        }
        w.apply_control(&ControlRequest::InitializeSimulation)?;
        Ok(w)
    }

    fn ode(
        &self,
        api: &'static Api,
        robots: &[Placement],
        stepper: Stepper,
        ball: bool,
    ) -> OdeScene {
        let d = simrob_physics::StepParams::default().default_interaction;
        let default_pair = Interaction {
            material_1: MaterialId(0),
            material_2: MaterialId(0),
            contact: d,
        };
        let mut s = OdeScene::new(api, stepper, &self.interactions, default_pair);
        self.fill(&mut s, robots, ball);
        s
    }

    /// Adds the field, the ball if asked, the robots and their wheel targets to an engine's
    /// scene, in the order simrob's world gets them.
    fn fill(&self, b: &mut impl SceneBuilder, robots: &[Placement], ball: bool) {
        b.add(&self.field);
        if ball {
            b.add(&self.ball);
        }
        for r in self.robots(robots) {
            b.add(&r);
        }
        for (i, r) in robots.iter().enumerate() {
            b.set_motor(100 + i as u32, 0, r.wheels.0);
            b.set_motor(100 + i as u32, 1, r.wheels.1);
        }
    }
}

/// An engine's scene as it is being built: entities added as the SimRob simulator adds them,
/// and wheel targets (rad/s) by entity and wheel joint.
trait SceneBuilder {
    fn add(&mut self, spec: &EntitySpec);
    fn set_motor(&mut self, entity: u32, wheel_joint: u32, velocity: f64);
}

impl SceneBuilder for OdeScene {
    fn add(&mut self, spec: &EntitySpec) {
        OdeScene::add(self, spec);
    }
    fn set_motor(&mut self, entity: u32, wheel_joint: u32, velocity: f64) {
        OdeScene::set_motor(self, entity, wheel_joint, velocity);
    }
}

impl SceneBuilder for mujoco::Builder {
    fn add(&mut self, spec: &EntitySpec) {
        mujoco::Builder::add(self, spec);
    }
    fn set_motor(&mut self, entity: u32, wheel_joint: u32, velocity: f64) {
        mujoco::Builder::set_motor(self, entity, wheel_joint, velocity);
    }
}

impl Scene {
    /// The scene in MuJoCo, built as [`Scene::ode`] builds it in ODE.
    fn mujoco(&self, robots: &[Placement], ball: bool) -> Result<mujoco::MjScene> {
        let api = mujoco_api().map_err(anyhow::Error::msg)?;
        let mut b = mujoco::Builder::new(&self.interactions);
        self.fill(&mut b, robots, ball);
        b.build(api).map_err(anyhow::Error::msg)
    }
}

/// Where a SumBot starts (offset from `sumbot.xml`'s place, which puts it at the field's
/// centre) and its two wheel targets (rad/s).
#[derive(Clone, Copy)]
struct Placement {
    at: [f64; 3],
    wheels: (f64, f64),
}

/// An engine under test, behind one interface.
enum Engine {
    Simrob(Box<World>),
    Ode(OdeScene),
    Mujoco(Box<mujoco::MjScene>),
}

/// Position, orientation `[x, y, z, w]` and velocity of a body.
type Pose = ([f64; 3], [f64; 4], [f64; 3]);

impl Engine {
    fn step(&mut self) {
        match self {
            Engine::Simrob(w) => {
                w.advance();
            }
            Engine::Ode(s) => s.step(),
            Engine::Mujoco(s) => s.step(),
        }
    }

    /// Sets the velocities of an entity's only body (the ball).
    fn push(&mut self, entity: u32, linear: [f64; 3], angular: [f64; 3]) -> Result<()> {
        match self {
            Engine::Simrob(w) => w.set_entity_velocity(EntityId(entity), linear, angular)?,
            Engine::Ode(s) => s.set_velocity(entity, 0, linear, angular),
            Engine::Mujoco(s) => s.set_velocity(entity, 0, linear, angular),
        }
        Ok(())
    }

    fn pose(&self, entity: u32, body: u32) -> Option<Pose> {
        match self {
            Engine::Simrob(w) => w
                .body_state(EntityId(entity), body)
                .map(|s| (s.position, s.orientation, s.linear_velocity)),
            Engine::Ode(s) => s
                .state(entity, body)
                .map(|s| (s.position, s.orientation, s.linear_velocity)),
            Engine::Mujoco(s) => s.state(entity, body),
        }
    }
}

fn tilt_degrees(q: [f64; 4]) -> f64 {
    rotate(q, [0.0, 0.0, 1.0])[2]
        .clamp(-1.0, 1.0)
        .acos()
        .to_degrees()
}

fn yaw(q: [f64; 4]) -> f64 {
    simrob_physics::quat_to_euler(q)[2]
}

/// What a timed run left behind.
struct Outcome {
    steps_per_second: f64,
    flipped: u32,
    non_finite: u32,
    ball_z: f64,
}

fn outcome(e: &Engine, n: u32, steps: u64, time: Duration) -> Outcome {
    let mut flipped = 0;
    let mut non_finite = 0;
    for i in 0..n {
        match e.pose(100 + i, 0) {
            Some((p, q, _)) if p.iter().chain(&q).all(|v| v.is_finite()) => {
                if tilt_degrees(q) > 60.0 {
                    flipped += 1;
                }
            }
            _ => non_finite += 1,
        }
    }
    Outcome {
        steps_per_second: steps as f64 / time.as_secs_f64(),
        flipped,
        non_finite,
        ball_z: e.pose(BALL, 0).map_or(f64::NAN, |p| p.0[2]),
    }
}

/// The names `--engines` takes, in the order of [`ENGINES`].
const ENGINE_KEYS: [&str; 5] = ["ode-step", "ode-quick", "default", "fast", "mujoco"];

const ENGINES: [&str; 5] = [
    "ODE dWorldStep",
    "ODE QuickStep (20 it.)",
    "simrob default",
    "simrob fast",
    "MuJoCo (Newton, implicitfast)",
];
/// [`ENGINES`]' index of MuJoCo.
const MUJOCO: usize = 4;

/// MuJoCo's library, loaded once when first asked for.
fn mujoco_api() -> Result<&'static mujoco::Api, String> {
    static API: std::sync::OnceLock<Result<&'static mujoco::Api, String>> =
        std::sync::OnceLock::new();
    API.get_or_init(mujoco::Api::load).clone()
}

/// ODE's library: loaded only when an ODE engine is asked for.
type Ode = Option<&'static Api>;

fn build(
    scene: &Scene,
    api: Ode,
    which: usize,
    n: u32,
    ball: bool,
    wheels: (f64, f64),
) -> Result<Engine> {
    build_at(scene, api, which, &Scene::grid(n, wheels), ball)
}

fn build_at(
    scene: &Scene,
    api: Ode,
    which: usize,
    robots: &[Placement],
    ball: bool,
) -> Result<Engine> {
    // Loaded whenever an ODE engine is asked for (`main`).
    let ode = || api.context("ODE's library is not loaded");
    Ok(match which {
        0 => Engine::Ode(scene.ode(ode()?, robots, Stepper::Step, ball)),
        1 => Engine::Ode(scene.ode(ode()?, robots, Stepper::Quick(20), ball)),
        2 => Engine::Simrob(Box::new(scene.simrob(robots, false, ball)?)),
        3 => Engine::Simrob(Box::new(scene.simrob(robots, true, ball)?)),
        _ => Engine::Mujoco(Box::new(scene.mujoco(robots, ball)?)),
    })
}

/// The time this thread spent on a processor, so that other processes sharing the machine do
/// not count against an engine; wall time where the system does not say.
struct Clock {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Clock {
    /// `CLOCK_THREAD_CPUTIME_ID`, to the nanosecond (the kernel's `schedstat` of the thread
    /// only moves at the scheduler's tick, 4 ms on this machine: too coarse for a block).
    #[cfg(all(target_os = "linux", target_pointer_width = "64"))]
    fn thread_cpu() -> Option<Duration> {
        #[repr(C)]
        struct Timespec {
            tv_sec: i64,
            tv_nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clock: std::ffi::c_int, tp: *mut Timespec) -> std::ffi::c_int;
        }
        const CLOCK_THREAD_CPUTIME_ID: std::ffi::c_int = 3;
        let mut t = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid, writable `timespec` of 64-bit Linux.
        let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
        let sec = u64::try_from(t.tv_sec).ok()?;
        let nanos = u32::try_from(t.tv_nsec)
            .ok()
            .filter(|n| *n < 1_000_000_000)?;
        (rc == 0).then(|| Duration::new(sec, nanos))
    }

    #[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
    fn thread_cpu() -> Option<Duration> {
        None
    }

    fn now() -> Clock {
        Clock {
            wall: Instant::now(),
            cpu: Clock::thread_cpu(),
        }
    }

    fn elapsed(&self) -> Duration {
        match (self.cpu, Clock::thread_cpu()) {
            (Some(a), Some(b)) if b > a => b - a,
            _ => self.wall.elapsed(),
        }
    }

    fn kind() -> &'static str {
        if Clock::thread_cpu().is_some() {
            "processor time of the benchmark's thread"
        } else {
            "wall time"
        }
    }
}

fn timed_steps(n: u32, scale: f64) -> u64 {
    let base: u64 = match n {
        0..=1 => 20_000,
        2..=6 => 5_000,
        7..=22 => 2_000,
        _ => 1_000,
    };
    ((base as f64 * scale) as u64).max(ROUNDS as u64)
}

fn speed_table(scene: &Scene, api: Ode, o: &Options) -> Result<()> {
    println!(
        "## Steps per second (wheels 3 and 5 rad/s, dt 0.01 s, one thread each; {})\n",
        Clock::kind()
    );
    println!(
        "| SumBots | steps | {} | simrob default / ODE step | simrob default / ODE quick | simrob fast / ODE quick | simrob default / MuJoCo | simrob fast / MuJoCo |",
        ENGINES.join(" | ")
    );
    println!("|---|---|{}", "---|".repeat(ENGINES.len() + 5));
    for &n in &o.sizes {
        let steps = timed_steps(n, o.scale);
        let block = (steps / ROUNDS as u64).max(1);
        let active: Vec<usize> = o
            .engines
            .iter()
            .copied()
            .filter(|&k| k != 0 || n < 100 || o.exact_100)
            .collect();
        let mut engines = Vec::new();
        for &k in &active {
            let mut e = build(scene, api, k, n, true, (3.0, 5.0))?;
            // Landing and settling are not timed.
            for _ in 0..100 {
                e.step();
            }
            engines.push((k, e, Vec::with_capacity(ROUNDS as usize)));
        }
        for _ in 0..ROUNDS {
            for (_, e, times) in engines.iter_mut() {
                let start = Clock::now();
                for _ in 0..block {
                    e.step();
                }
                times.push(start.elapsed());
            }
        }
        let mut cells = vec![String::from("—"); ENGINES.len()];
        if o.engines.contains(&0) && !active.contains(&0) {
            cells[0] = "— (too slow at 100 SumBots or more; --exact-100 times it)".into();
        }
        let mut rate = [f64::NAN; ENGINES.len()];
        for (k, e, times) in &mut engines {
            times.sort_unstable();
            let out = outcome(e, n, block, times[times.len() / 2]);
            rate[*k] = out.steps_per_second;
            cells[*k] = format!(
                "{:.0} (flips {}, NaN {}, ball z {:.3})",
                out.steps_per_second, out.flipped, out.non_finite, out.ball_z
            );
        }
        let ratio = |a: f64, b: f64| {
            if a.is_finite() && b.is_finite() {
                format!("{:.2}×", a / b)
            } else {
                "—".into()
            }
        };
        println!(
            "| {n} | {} | {} | {} | {} | {} | {} | {} |",
            block * ROUNDS as u64,
            cells.join(" | "),
            ratio(rate[2], rate[0]),
            ratio(rate[2], rate[1]),
            ratio(rate[3], rate[1]),
            ratio(rate[2], rate[MUJOCO]),
            ratio(rate[3], rate[MUJOCO]),
        );
    }
    Ok(())
}

/// The ball's entity id in `ball.xml`.
const BALL: u32 = 8;

/// How far the ball falls in 0.5 s from rest, 2 m above the field, against ½g·t².
fn free_fall(scene: &Scene, api: Ode, which: usize) -> Result<f64> {
    let mut high = scene.clone();
    high.ball = moved_copy(&scene.ball, EntityId(BALL), [0.0, 0.0, 2.0]);
    let mut e = build(&high, api, which, 0, true, (0.0, 0.0))?;
    let (a, _, _) = e.pose(BALL, 0).context("ball")?;
    for _ in 0..50 {
        e.step();
    }
    let (b, _, _) = e.pose(BALL, 0).context("ball")?;
    Ok((a[2] - b[2]) / (0.5 * 9.8 * 0.5 * 0.5))
}

/// The ball rolled at 1.5 m/s across the field into a wall, from `x` on the field's long axis
/// (1.2: the goal mouth, 20 cm from the goal's side wall; 0: the centre spot, 80 cm from the
/// field's side wall): its fastest speed back from the wall, and its speed 1 s after the wall
/// (m/s; negative: rolling into the wall again).
fn into_a_wall(scene: &Scene, api: Ode, which: usize, x: f64) -> Result<(f64, f64)> {
    roll_into_wall(scene, api, which, (x, 0.0), 1.5, 300)
}

/// The ball placed at `x` on the field's long axis, `dy` towards the wall from its place in
/// the scene, left to settle 2 s, then rolled at `speed` towards +Y (spinning about −X) for
/// at most `steps` steps: its fastest speed back from the wall, and its speed 1 s (100 steps)
/// after it hit (m/s; positive: away from the wall).
fn roll_into_wall(
    scene: &Scene,
    api: Ode,
    which: usize,
    (x, dy): (f64, f64),
    speed: f64,
    steps: usize,
) -> Result<(f64, f64)> {
    let mut placed = scene.clone();
    let (bodies, _) = scene.ball.structure();
    let x0 = bodies.first().map_or(0.0, |b| b.position[0]);
    placed.ball = moved_copy(&scene.ball, EntityId(BALL), [x - x0, dy, 0.0]);
    let mut e = build(&placed, api, which, 0, true, (0.0, 0.0))?;
    for _ in 0..200 {
        e.step();
    }
    let r = scene_ball_radius(scene);
    e.push(BALL, [0.0, speed, 0.0], [-speed / r, 0.0, 0.0])?;
    let mut fastest_back: f64 = 0.0;
    let mut hit = None;
    for i in 0..steps {
        e.step();
        let (_, _, v) = e.pose(BALL, 0).context("ball")?;
        fastest_back = fastest_back.max(-v[1]);
        if hit.is_none() && v[1] < 0.5 * speed {
            hit = Some(i);
        }
        if hit.is_some_and(|h| i == h + 100) {
            return Ok((fastest_back, -v[1]));
        }
    }
    let (_, _, v) = e.pose(BALL, 0).context("ball")?;
    Ok((fastest_back, -v[1]))
}

/// The scene with its ball at `(x, y)` on the field, its bottom `height` above the field's top
/// (0.05 m: the floor box's top, where the ball of `ball.xml` rests).
fn ball_placed(scene: &Scene, [x, y]: [f64; 2], height: f64) -> Scene {
    let (bodies, _) = scene.ball.structure();
    let p0 = bodies.first().map_or([0.0; 3], |b| b.position);
    let z = FIELD_TOP + scene_ball_radius(scene) + height;
    let mut placed = scene.clone();
    placed.ball = moved_copy(
        &scene.ball,
        EntityId(BALL),
        [x - p0[0], y - p0[1], z - p0[2]],
    );
    placed
}

fn scene_ball_radius(scene: &Scene) -> f64 {
    let (bodies, _) = scene.ball.structure();
    bodies
        .first()
        .and_then(|b| match b.shape {
            Shape::Sphere { radius } => Some(radius),
            _ => None,
        })
        .unwrap_or(0.03)
}

fn single_robot_table(scene: &Scene, api: Ode, o: &Options) -> Result<()> {
    println!("\n## One SumBot on the field (and the ball falling from rest)\n");
    println!("| engine | resting chassis z (m) | tilt (°) | idle 60 s: turn (°) | idle 60 s: drift (mm) | straight 3 rad/s: speed / ω·r | straight 5 s: yaw (°) | ball's 0.5 s fall / ½g·t² | circling: centre's drift, 8 turns then 8 from 500 s (mm) |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let robot = 100;
    for &k in &o.engines {
        let name = ENGINES[k];
        // Idle: settle 5 s (it lands balanced over its axle, then tips onto its skid), then a minute.
        let mut e = build(scene, api, k, 1, false, (0.0, 0.0))?;
        for _ in 0..500 {
            e.step();
        }
        let (p0, q0, _) = e.pose(robot, 0).context("chassis")?;
        for _ in 0..6000 {
            e.step();
        }
        let (p1, q1, _) = e.pose(robot, 0).context("chassis")?;
        let drift = ((p1[0] - p0[0]).powi(2) + (p1[1] - p0[1]).powi(2)).sqrt();
        let turn = wrap_angle_euclid(yaw(q1) - yaw(q0)).to_degrees();
        // Straight: both wheels 3 rad/s from rest, 1 s to accelerate, then 5 s.
        let mut s = build(scene, api, k, 1, false, (3.0, 3.0))?;
        for _ in 0..600 {
            s.step();
        }
        let (a, qa, _) = s.pose(robot, 0).context("chassis")?;
        for _ in 0..500 {
            s.step();
        }
        let (b, qb, _) = s.pose(robot, 0).context("chassis")?;
        let speed = ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt() / 5.0;
        let fall = free_fall(scene, api, k)?;
        let circling = circle_drift(scene, api, k)?;
        println!(
            "| {name} | {:.4} | {:.1} | {:.3} | {:.2} | {:.3} | {:.2} | {fall:.4} | {:.1} |",
            p0[2],
            tilt_degrees(q0),
            turn,
            drift * 1e3,
            speed / (3.0 * SUMBOT_WHEEL_RADIUS),
            wrap_angle_euclid(yaw(qb) - yaw(qa)).to_degrees(),
            circling * 1e3,
        );
    }
    Ok(())
}

/// How far the centre of a SumBot's circle moves (m) as it drives in circles as in the speed
/// table (wheels 3 and 5 rad/s, the ball on the field): the chassis' mean position over its
/// first eight whole turns against its mean over eight whole turns from 500 s on (whole turns
/// of its heading, so that each mean is the circle's centre whatever time a turn takes; a
/// window that a robot does not turn through in 200 s ends there). A wheel that slips the same
/// way on every heading leaves the circle where it is.
fn circle_drift(scene: &Scene, api: Ode, which: usize) -> Result<f64> {
    const TURNS: f64 = 8.0;
    let mut e = build(scene, api, which, 1, true, (3.0, 5.0))?;
    for _ in 0..100 {
        e.step();
    }
    let mean = |e: &mut Engine| -> Result<([f64; 2], u32)> {
        let (mut sum, mut n) = ([0.0; 2], 0u32);
        let (_, q, _) = e.pose(100, 0).context("chassis")?;
        let (mut last, mut turned) = (yaw(q), 0.0f64);
        while turned.abs() < TURNS * std::f64::consts::TAU && n < 20_000 {
            e.step();
            let (p, q, _) = e.pose(100, 0).context("chassis")?;
            turned += simrob_math::wrap_angle(yaw(q) - last);
            last = yaw(q);
            sum = [sum[0] + p[0], sum[1] + p[1]];
            n += 1;
        }
        Ok(([sum[0] / f64::from(n), sum[1] / f64::from(n)], n))
    };
    let (first, n) = mean(&mut e)?;
    for _ in n + 100..50_000 {
        e.step();
    }
    let (last, _) = mean(&mut e)?;
    Ok((last[0] - first[0]).hypot(last[1] - first[1]))
}

fn wall_table(scene: &Scene, api: Ode, o: &Options) -> Result<()> {
    println!("\n## The ball rolled into a wall at 1.5 m/s\n");
    println!("| engine | goal's side wall (20 cm): fastest back (m/s) | 1 s after (m/s, + away) | field's side wall (80 cm): fastest back | 1 s after |");
    println!("|---|---|---|---|---|");
    for &k in &o.engines {
        let (f1, a1) = into_a_wall(scene, api, k, 1.2)?;
        let (f2, a2) = into_a_wall(scene, api, k, 0.0)?;
        println!("| {} | {f1:.3} | {a1:.3} | {f2:.3} | {a2:.3} |", ENGINES[k]);
    }
    Ok(())
}

/// One SumBot driving straight at `rate` rad/s (both wheels) into the ball, which lies on the
/// field `gap` ahead of its chassis' centre (a SumBot drives towards −X): the robot's speed
/// over the 0.1 s before it meets the ball, the ball's fastest speed, and the ball's speed 1 s
/// after it started to move (m/s; along −X, the robot's way). `Err` with why when the ball
/// never moved in 6 s.
fn robot_into_ball(
    scene: &Scene,
    api: Ode,
    which: usize,
    rate: f64,
    gap: f64,
) -> Result<std::result::Result<[f64; 3], &'static str>> {
    let placed = ball_placed(scene, [-gap, 0.0], 0.0);
    let robot = Scene::placement(1, 0).0;
    let mut e = build(&placed, api, which, 1, true, (rate, rate))?;
    let mut xs = std::collections::VecDeque::new();
    let (mut robot_speed, mut fastest, mut moved_at) = (0.0, 0.0_f64, None);
    for i in 0..600 {
        e.step();
        let (_, _, v) = e.pose(BALL, 0).context("ball")?;
        if moved_at.is_none() {
            if v[0].hypot(v[1]) > 0.01 {
                moved_at = Some(i);
            } else {
                xs.push_back(e.pose(robot, 0).context("chassis")?.0[0]);
                if xs.len() > 11 {
                    xs.pop_front();
                }
                if let (Some(first), Some(last)) = (xs.front(), xs.back()) {
                    robot_speed = (first - last) / ((xs.len() - 1).max(1) as f64 * TIMESTEP);
                }
            }
        }
        fastest = fastest.max(-v[0]);
        if moved_at.is_some_and(|m| i == m + 100) {
            return Ok(Ok([robot_speed, fastest, -v[0]]));
        }
    }
    let (_, q, _) = e.pose(robot, 0).context("chassis")?;
    Ok(Err(if tilt_degrees(q) > 60.0 {
        "the robot tipped over"
    } else {
        "the robot never met the ball"
    }))
}

fn robot_ball_table(scene: &Scene, api: Ode, o: &Options) -> Result<()> {
    const RATES: [f64; 2] = [5.0, 10.0];
    println!("\n## A SumBot driving into the ball (averaged over 20 starts; in brackets: against ODE dWorldStep)\n");
    engine_table_head(&RATES, |w| {
        vec![
            format!("wheels {w} rad/s: robot (m/s)"),
            "ball's fastest".into(),
            "ball 1 s after".into(),
        ]
    });
    let mut ode = Vec::new();
    for &k in &o.engines {
        print!("| {} |", ENGINES[k]);
        for (i, &w) in RATES.iter().enumerate() {
            // Starts a twentieth of a step's travel apart (ω·r·h), so over the depths at
            // which the robot first overlaps the ball.
            let mut sum = [0.0; 3];
            let mut failed = None;
            for j in 0..PHASES {
                let gap =
                    0.2 + f64::from(j) / f64::from(PHASES) * w * SUMBOT_WHEEL_RADIUS * TIMESTEP;
                match robot_into_ball(scene, api, k, w, gap)? {
                    Ok(f) => (0..3).for_each(|n| sum[n] += f[n] / f64::from(PHASES)),
                    Err(why) => failed = Some(why),
                }
            }
            if let Some(why) = failed {
                print!(" — ({why}) | — | — |");
                if k == 0 {
                    ode.push([f64::NAN; 3]);
                }
                continue;
            }
            if k == 0 {
                ode.push(sum);
            }
            let reference = ode.get(i).filter(|_| k != 0);
            print!(
                " {} | {} | {} |",
                ratio_cell(sum[0], reference.map(|r| r[0])),
                ratio_cell(sum[1], reference.map(|r| r[1])),
                ratio_cell(sum[2], reference.map(|r| r[2]))
            );
        }
        println!();
    }
    Ok(())
}

/// Robots a square metre in the random layouts of the field (22 on its 1.9 × 1.5 m).
const LAYOUT_DENSITY: f64 = 22.0 / (1.9 * 1.5);

/// `n` SumBots on a floor as large as they need (the SimRob materials, one box of wood), each
/// driving in a circle (wheels 3 and 5 rad/s: 26 cm across), in simrob's default mode, dt
/// 0.01 s, each step on `o.threads` threads: on a grid 0.4 m apart (`--crowd-layouts 0`), or
/// placed at random (seeded layouts 1..=K) as densely as the field's random layouts, turning
/// left or right at random, so that they meet. Prints, per layout, steps per second (by the
/// process's processor time and by the wall clock), robots tipped, upright and non-finite,
/// and a digest of the end state (the same digest at any number of threads).
fn crowd(scene: &Scene, n: u32, o: &Options) -> Result<()> {
    let steps = o.crowd_steps;
    // 0: the grid; layout numbers are checked before (at most MAX_CROWD_LAYOUTS of them).
    let layouts = if o.crowd_layouts.count() == 0 {
        0..=0
    } else {
        o.crowd_layouts.numbers()
    };
    for layout in layouts {
        let (robots, side) = if layout == 0 {
            grid_layout(n)
        } else {
            crowd_layout(n, u64::from(layout))
        };
        let floor = EntitySpec::Field {
            entity_id: EntityId(1),
            bodies: vec![BodySpec {
                id: 0,
                shape: Shape::Box {
                    size: [side, side, 0.1],
                },
                material: Some(MaterialId(0)),
                mass: Some(-1.0),
                position: [0.0, 0.0, 0.0],
                rotation: [0.0; 3],
            }],
            joints: Vec::new(),
        };
        let mut big = scene.clone();
        big.field = floor;
        let mut e = if o.crowd_mujoco {
            Engine::Mujoco(Box::new(big.mujoco(&robots, false)?))
        } else {
            let mut w = big.simrob(&robots, false, false)?;
            w.set_physics_threads(o.threads)?;
            Engine::Simrob(Box::new(w))
        };
        for _ in 0..100 {
            e.step();
        }
        let cpu = simrob_benchkit::process_cpu();
        let per_thread = thread_cpu();
        let wall = Instant::now();
        for _ in 0..steps {
            e.step();
        }
        let wall = wall.elapsed().as_secs_f64();
        let cpu = simrob_benchkit::process_cpu().zip(cpu).map(|(b, a)| b - a);
        // The busiest thread's share: on an idle machine a step takes at least that long.
        let busiest = thread_cpu()
            .iter()
            .map(|(tid, t)| {
                let before = per_thread
                    .iter()
                    .find(|(b, _)| b == tid)
                    .map_or(0.0, |b| b.1);
                t - before
            })
            .fold(0.0, f64::max);
        let m = robots.len() as u32;
        let out = outcome(&e, m, steps, Duration::from_secs_f64(wall));
        let digest = crowd_digest(&e, m);
        let name = if layout == 0 {
            "grid".to_string()
        } else {
            format!("random layout {layout}")
        };
        println!(
            "{m} SumBots, {name}, {}, {} thread(s), {steps} steps: {:.0} steps/s by the wall clock, {} processor s ({} steps per processor s), busiest thread {} s ({} steps per its processor s); flips {}, upright {}, NaN {}; state digest {digest:016x}",
            if o.crowd_mujoco { ENGINES[MUJOCO] } else { ENGINES[2] },
            o.threads,
            out.steps_per_second,
            cpu_seconds(cpu),
            per_cpu_second(steps, cpu),
            cpu_seconds(Some(busiest)),
            per_cpu_second(steps, Some(busiest)),
            out.flipped,
            m - out.flipped - out.non_finite,
            out.non_finite,
        );
    }
    Ok(())
}

/// Processor seconds (of `/proc`, in ticks of 10 ms) as the crowd prints them: `< 0.01` for a
/// run shorter than a tick, never a measured 0; `?` unknown.
fn cpu_seconds(cpu: Option<f64>) -> String {
    cpu.map_or("?".into(), |c| simrob_benchkit::cpu_per(c, 1.0, 2))
}

/// `steps` over processor seconds `cpu` (as [`cpu_seconds`]): `> x` for a run shorter than
/// the clock's tick (`x` the steps over one tick), never infinite; `?` unknown.
fn per_cpu_second(steps: u64, cpu: Option<f64>) -> String {
    const TICK: f64 = simrob_benchkit::PROCESS_CPU_RESOLUTION;
    match cpu {
        None => "?".into(),
        Some(c) if c.is_nan() => "?".into(),
        Some(c) if c < TICK / 2.0 => format!("> {:.0}", steps as f64 / TICK),
        Some(c) => format!("{:.0}", steps as f64 / c),
    }
}

/// `n` SumBots on a grid 0.4 m apart, each driving in a circle (they never meet), and the
/// side of the floor they need.
fn grid_layout(n: u32) -> (Vec<Placement>, f64) {
    let columns = f64::from(n).sqrt().ceil() as u32;
    let spacing = 0.4;
    let side = f64::from(columns) * spacing + 1.0;
    let half = f64::from(columns - 1) / 2.0;
    let robots = (0..n)
        .map(|i| Placement {
            at: [
                (f64::from(i % columns) - half) * spacing,
                (f64::from(i / columns) - half) * spacing + 0.1,
                0.0,
            ],
            wheels: (3.0, 5.0),
        })
        .collect();
    (robots, side)
}

/// `n` SumBots at random (seeded) on a square as dense as the field's random layouts
/// ([`random_layout`]: centres at least 14 cm apart, circles left or right at random), and
/// the side of the floor (the square and 0.5 m around it).
fn crowd_layout(n: u32, seed: u64) -> (Vec<Placement>, f64) {
    let square = (f64::from(n) / LAYOUT_DENSITY).sqrt();
    let mut rng = simrob_math::SplitMix64::new(seed);
    // A grid of 14 cm cells for the spacing test: a robot's neighbours are in the 3 × 3
    // cells around its own.
    let cells = (square / 0.14).ceil() as usize + 1;
    let mut grid: Vec<Vec<(f64, f64)>> = vec![Vec::new(); cells * cells];
    let cell = |v: f64| (((v + square / 2.0) / 0.14) as usize).min(cells - 1);
    let mut robots = Vec::new();
    let mut tries = 0;
    while robots.len() < n as usize && tries < 1_000_000 {
        tries += 1;
        let (x, y) = (
            (rng.next_f64() - 0.5) * square,
            (rng.next_f64() - 0.5) * square,
        );
        let left = rng.next_u64() & 1 == 0;
        let (cx, cy) = (cell(x), cell(y));
        let taken = (cx.saturating_sub(1)..=(cx + 1).min(cells - 1)).any(|i| {
            (cy.saturating_sub(1)..=(cy + 1).min(cells - 1)).any(|j| {
                grid[i * cells + j]
                    .iter()
                    .any(|&(rx, ry)| (rx - x).hypot(ry - y) < 0.14)
            })
        });
        if !taken {
            grid[cx * cells + cy].push((x, y));
            robots.push(Placement {
                // `sumbot.xml` puts its chassis at y = −0.1.
                at: [x, y + 0.1, 0.0],
                wheels: if left { (3.0, 5.0) } else { (5.0, 3.0) },
            });
        }
    }
    (robots, square + 1.0)
}

/// A digest of every chassis' pose, to compare runs bit for bit.
fn crowd_digest(e: &Engine, n: u32) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for i in 0..n {
        if let Some((p, q, _)) = e.pose(100 + i, 0) {
            for v in p.iter().chain(&q) {
                for b in v.to_bits().to_le_bytes() {
                    h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
                }
            }
        }
    }
    h
}

/// Each thread of the process and its processor time (s), from `/proc/self/task/*/stat`.
fn thread_cpu() -> Vec<(String, f64)> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|e| {
        let e = e.ok()?;
        let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let ticks: u64 =
            fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
        Some((
            e.file_name().to_string_lossy().into_owned(),
            ticks as f64 / 100.0,
        ))
    })
    .collect()
}

/// `n` SumBots at random on the field (seeded): centres at least 14 cm apart (a SumBot is
/// 11 cm across its wheels) and 15 cm from the walls, each driving in a circle, left or right
/// at random (wheel targets 3 and 5 rad/s or 5 and 3).
fn random_layout(n: u32, seed: u64) -> Vec<Placement> {
    let mut rng = simrob_math::SplitMix64::new(seed);
    let mut robots: Vec<Placement> = Vec::new();
    let mut tries = 0;
    while robots.len() < n as usize && tries < 100_000 {
        tries += 1;
        let (x, y) = (-0.95 + 1.9 * rng.next_f64(), -0.75 + 1.5 * rng.next_f64());
        let taken = robots.iter().any(|r| {
            let (rx, ry) = (r.at[0], r.at[1] - 0.1);
            (rx - x).hypot(ry - y) < 0.14
        });
        let left = rng.next_u64() & 1 == 0;
        if !taken {
            robots.push(Placement {
                // `sumbot.xml` puts its chassis at y = −0.1.
                at: [x, y + 0.1, 0.0],
                wheels: if left { (3.0, 5.0) } else { (5.0, 3.0) },
            });
        }
    }
    robots
}

/// Robots tipped over (chassis tilted more than 60°) in each of the `o.layouts` seeded random
/// layouts, after `o.layout_seconds` of driving, by engine.
fn layouts_table(scene: &Scene, api: Ode, o: &Options) -> Result<()> {
    let n = o.layout_robots;
    let steps = (o.layout_seconds / TIMESTEP).round() as u64;
    println!(
        "\n## Flips in random layouts ({n} SumBots at random on the field driving in circles among each other, {} s; robots tipped over at the end / processor seconds)\n",
        o.layout_seconds
    );
    // At most MAX_LAYOUTS columns (checked with the options).
    print!("| engine |");
    for seed in o.layouts.numbers() {
        print!(" layout {seed} |");
    }
    println!(" all layouts |");
    println!("|---|{}---|", "---|".repeat(o.layouts.count() as usize));
    for &k in &o.engines {
        print!("| {} |", ENGINES[k]);
        let mut total = 0;
        for seed in o.layouts.numbers() {
            let robots = random_layout(n, u64::from(seed));
            let mut e = build_at(scene, api, k, &robots, true)?;
            let start = Clock::now();
            for _ in 0..steps {
                e.step();
            }
            let time = start.elapsed();
            let out = outcome(&e, robots.len() as u32, steps, time);
            total += out.flipped + out.non_finite;
            let nan = if out.non_finite > 0 {
                format!(", NaN {}", out.non_finite)
            } else {
                String::new()
            };
            print!(" {}{nan} / {:.1} s |", out.flipped, time.as_secs_f64());
        }
        println!(" {total} |");
    }
    Ok(())
}

/// The ball rolled at `speed` from the centre spot into the field's side wall (80 cm away):
/// how fast it comes off the wall (its fastest speed back) and how fast it rolls 1 s after
/// it hit (m/s; positive: away from the wall).
fn rebound_off_wall(
    scene: &Scene,
    api: Ode,
    which: usize,
    speed: f64,
    phase: f64,
) -> Result<(f64, f64)> {
    // `phase` of a step's travel nearer the wall: how deep the ball is when it first overlaps
    // the wall depends on it (ODE's rebound with it).
    roll_into_wall(
        scene,
        api,
        which,
        (0.0, phase * speed * TIMESTEP),
        speed,
        1000,
    )
}

/// The ball dropped from rest, its bottom `height` above the field at the centre spot: how
/// high its bottom rises after the first and the second bounce (m above where it rests), and
/// how many times it leaves the floor by more than 1 mm in 3 s.
fn drop_bounces(scene: &Scene, api: Ode, which: usize, height: f64) -> Result<(f64, f64, u32)> {
    let rest = FIELD_TOP + scene_ball_radius(scene);
    let placed = ball_placed(scene, [0.0, 0.0], height);
    let mut e = build(&placed, api, which, 0, true, (0.0, 0.0))?;
    let mut peaks = Vec::new();
    let mut prev_vz = 0.0;
    let mut top: f64 = f64::NEG_INFINITY;
    let mut rising = false;
    for _ in 0..300 {
        e.step();
        let (p, _, v) = e.pose(BALL, 0).context("ball")?;
        if !rising && prev_vz < 0.0 && v[2] > 0.0 {
            rising = true;
            top = p[2];
        }
        if rising {
            top = top.max(p[2]);
            if v[2] < 0.0 {
                rising = false;
                peaks.push(top - rest);
            }
        }
        prev_vz = v[2];
    }
    let bounces = peaks.iter().filter(|&&h| h > 0.001).count() as u32;
    Ok((
        peaks.first().copied().unwrap_or(0.0).max(0.0),
        peaks.get(1).copied().unwrap_or(0.0).max(0.0),
        bounces,
    ))
}

/// The timestep of every engine (s).
const TIMESTEP: f64 = 0.01;
/// Start positions a wall and drop figure is averaged over: how deep a ball is when it first
/// overlaps a wall or the floor, and so how fast ODE's contact sends it back, depends on where
/// within a step's travel it starts (between nothing and ERP of its speed).
const PHASES: u32 = 20;

/// Top of the SimRob field's floor box (m).
const FIELD_TOP: f64 = 0.05;

fn ratio_cell(value: f64, ode: Option<f64>) -> String {
    match ode {
        Some(o) if o.abs() > 1e-9 => format!("{value:.3} ({:+.0} %)", (value / o - 1.0) * 100.0),
        _ => format!("{value:.3}"),
    }
}

/// A height `value` (m) in millimetres to a tenth, against ODE's as [`ratio_cell`] does.
fn mm_cell(value: f64, ode: Option<f64>) -> String {
    let mm = value * 1e3;
    match ode {
        Some(o) if o.abs() > 1e-9 => format!("{mm:.1} ({:+.0} %)", (value / o - 1.0) * 100.0),
        _ => format!("{mm:.1}"),
    }
}

/// Prints a table's head: an engine column, then for each of `groups` the columns `columns`
/// gives it (each cell's text, the first naming the group).
fn engine_table_head<T: Copy>(groups: &[T], columns: impl Fn(T) -> Vec<String>) {
    let cells: Vec<String> = groups.iter().flat_map(|&g| columns(g)).collect();
    println!("| engine | {} |", cells.join(" | "));
    println!("|---|{}", "---|".repeat(cells.len()));
}

/// The ball rolled from rest along the field's long axis at `speed` (rolling, not sliding),
/// from 1 m behind the centre spot, 30 cm off the axis: its speed after 1.5 s over the speed
/// it was given, and the vertical velocity the engine reports for it then (m/s).
fn roll_on_floor(scene: &Scene, api: Ode, which: usize, speed: f64) -> Result<(f64, f64)> {
    let placed = ball_placed(scene, [-1.0, 0.3], 0.0);
    let mut e = build(&placed, api, which, 0, true, (0.0, 0.0))?;
    for _ in 0..200 {
        e.step();
    }
    let r = scene_ball_radius(scene);
    e.push(BALL, [speed, 0.0, 0.0], [0.0, speed / r, 0.0])?;
    for _ in 0..150 {
        e.step();
    }
    let (_, _, v) = e.pose(BALL, 0).context("ball")?;
    Ok((v[0].hypot(v[1]) / speed, v[2]))
}

/// How the ball rolls on the field (see [`roll_on_floor`]), by engine.
fn rolling_table(scene: &Scene, api: Ode, o: &Options) -> Result<()> {
    const SPEEDS: [f64; 3] = [0.25, 0.5, 1.0];
    println!("\n## The ball rolling on the field (its speed after 1.5 s over the speed it was given; the vertical velocity reported then)\n");
    engine_table_head(&SPEEDS, |v| {
        vec![format!("{v} m/s: speed kept"), "vertical (m/s)".into()]
    });
    for &k in &o.engines {
        print!("| {} |", ENGINES[k]);
        for &v in &SPEEDS {
            let (kept, vz) = roll_on_floor(scene, api, k, v)?;
            print!(" {kept:.3} | {vz:.3} |");
        }
        println!();
    }
    Ok(())
}

fn restitution_table(scene: &Scene, api: Ode, o: &Options) -> Result<()> {
    const SPEEDS: [f64; 5] = [0.5, 1.0, 1.5, 2.0, 3.0];
    const HEIGHTS: [f64; 3] = [0.1, 0.3, 1.0];
    println!("\n## The ball off a wall and off the floor (in brackets: against ODE dWorldStep)\n");
    engine_table_head(&SPEEDS, |v| {
        vec![format!("wall at {v} m/s: back"), "1 s after".into()]
    });
    let mut ode: Vec<(f64, f64)> = Vec::new();
    for &k in &o.engines {
        print!("| {} |", ENGINES[k]);
        for (i, &v) in SPEEDS.iter().enumerate() {
            let (mut back, mut after) = (0.0, 0.0);
            for j in 0..PHASES {
                let (b, a) = rebound_off_wall(scene, api, k, v, f64::from(j) / f64::from(PHASES))?;
                back += b / f64::from(PHASES);
                after += a / f64::from(PHASES);
            }
            if k == 0 {
                ode.push((back, after));
            }
            let reference = ode.get(i).filter(|_| k != 0);
            print!(
                " {} | {} |",
                ratio_cell(back, reference.map(|r| r.0)),
                ratio_cell(after, reference.map(|r| r.1))
            );
        }
        println!();
    }
    println!();
    engine_table_head(&HEIGHTS, |h| {
        vec![
            format!("dropped {h} m: 1st bounce (mm)"),
            "2nd (mm)".into(),
            format!("bounces > 1 mm, all {PHASES} drops"),
        ]
    });
    let mut ode: Vec<(f64, f64, u32)> = Vec::new();
    for &k in &o.engines {
        print!("| {} |", ENGINES[k]);
        for (i, &h) in HEIGHTS.iter().enumerate() {
            // Heights a step's fall apart at the speed the ball lands with, averaged.
            let landing = (2.0 * 9.8 * h).sqrt();
            let (mut first, mut second, mut n) = (0.0, 0.0, 0);
            for j in 0..PHASES {
                let dh = f64::from(j) / f64::from(PHASES) * landing * TIMESTEP;
                let (a, b, c) = drop_bounces(scene, api, k, h + dh)?;
                first += a / f64::from(PHASES);
                second += b / f64::from(PHASES);
                n += c;
            }
            if k == 0 {
                ode.push((first, second, n));
            }
            let reference = ode.get(i).filter(|_| k != 0);
            print!(
                " {} | {} | {n} |",
                mm_cell(first, reference.map(|r| r.0)),
                mm_cell(second, reference.map(|r| r.1))
            );
        }
        println!();
    }
    Ok(())
}

fn main() -> Result<()> {
    let Some(o) = options()? else {
        return Ok(());
    };
    // The scenario files are checked before any engine builds a scene from them.
    let scene = Scene::load(&o.scenarios)?;
    if let Some(n) = o.crowd {
        // simrob (or MuJoCo) alone: no ODE needed.
        return crowd(&scene, n, &o);
    }
    if o.check_mujoco {
        return check_mujoco(&scene);
    }
    let mut o = o;
    let mujoco = match mujoco_api() {
        Ok(m) => {
            if !o.engines_given {
                o.engines.push(MUJOCO);
            }
            Ok(m)
        }
        // Asked for by --engines, or (when --engines does not choose) by SIMROB_MUJOCO_LIB:
        // not left out quietly.
        Err(why)
            if o.engines.contains(&MUJOCO)
                || (!o.engines_given && mujoco::lib_override().is_some()) =>
        {
            bail!("{why}")
        }
        Err(why) => Err(why),
    };
    // ODE only when an ODE engine is asked for.
    let api = if o.engines.iter().any(|&k| k < 2) {
        Some(Api::load().map_err(|why| {
            anyhow::anyhow!("{why} (or leave ODE out: --engines default,fast,mujoco)")
        })?)
    } else {
        None
    };
    if cfg!(debug_assertions) {
        println!(
            "(a debug build: timings mean little; use cargo run --release -p simrob-odebench)\n"
        );
    }
    match mujoco {
        Ok(m) => println!("MuJoCo {} from {}", m.version(), m.path),
        Err(why) => println!("(without MuJoCo: {why})"),
    }
    println!();
    speed_table(&scene, api, &o)?;
    if !o.speed_only {
        single_robot_table(&scene, api, &o)?;
        wall_table(&scene, api, &o)?;
        restitution_table(&scene, api, &o)?;
        rolling_table(&scene, api, &o)?;
        robot_ball_table(&scene, api, &o)?;
    }
    if o.layouts.count() > 0 && !o.speed_only {
        layouts_table(&scene, api, &o)?;
    }
    Ok(())
}

/// `--check-mujoco`: the MuJoCo scene against its specs and simrob's default mode, one SumBot
/// and the ball (no ODE needed): the model's mass and coordinates, where the SumBot and the
/// ball come to rest, and the SumBot's straight-line speed towards −X against ω·r. One
/// `key value...` line each, for the crate's test.
fn check_mujoco(scene: &Scene) -> Result<()> {
    // Asked to check MuJoCo: without it, that is a failure.
    let api = mujoco_api().map_err(anyhow::Error::msg)?;
    println!("mujoco {} {}", api.version(), api.path);
    let idle = Scene::grid(1, (0.0, 0.0));
    let m = scene.mujoco(&idle, true)?;
    let (nq, nv) = m.sizes();
    println!("mass {} {}", m.spec_mass, m.total_mass());
    println!("sizes {nq} {nv}");
    let mut rest = Vec::new();
    for mut e in [
        Engine::Mujoco(Box::new(m)),
        Engine::Simrob(Box::new(scene.simrob(&idle, false, true)?)),
    ] {
        for _ in 0..500 {
            e.step();
        }
        let (p, q, _) = e.pose(100, 0).context("chassis")?;
        let (b, _, _) = e.pose(BALL, 0).context("ball")?;
        rest.push((p[2], tilt_degrees(q), b[2]));
    }
    println!("rest_z {} {}", rest[0].0, rest[1].0);
    println!("rest_tilt {} {}", rest[0].1, rest[1].1);
    println!(
        "ball_z {} {}",
        rest[0].2,
        FIELD_TOP + scene_ball_radius(scene)
    );
    let straight = Scene::grid(1, (3.0, 3.0));
    let mut speeds = Vec::new();
    for mut e in [
        Engine::Mujoco(Box::new(scene.mujoco(&straight, false)?)),
        Engine::Simrob(Box::new(scene.simrob(&straight, false, false)?)),
    ] {
        for _ in 0..100 {
            e.step();
        }
        let (a, _, _) = e.pose(100, 0).context("chassis")?;
        for _ in 0..200 {
            e.step();
        }
        let (b, _, _) = e.pose(100, 0).context("chassis")?;
        // Along −X: a positive wheel target drives the SumBot that way in ODE (the SimRob
        // manual's robot), and in simrob.
        let speed = -(b[0] - a[0]) / 2.0;
        speeds.push(speed / (3.0 * SUMBOT_WHEEL_RADIUS));
    }
    println!("straight {} {}", speeds[0], speeds[1]);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Option<Options>> {
        parse_options(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn layouts_are_a_count_or_a_range() {
        let l = |t: &str| Layouts::parse("--layouts", t, MAX_LAYOUTS);
        assert_eq!(l("8").unwrap(), Layouts { first: 1, last: 8 });
        assert_eq!(l("0").unwrap().count(), 0);
        let r = l("65..128").unwrap();
        assert_eq!((r.first, r.last, r.count()), (65, 128, 64));
        assert_eq!(l("129..129").unwrap().count(), 1);
        for bad in [
            "0..3",
            "5..3",
            "1..1001",
            "1001",
            "4294967295",
            "x",
            "3..",
            "999999..1000001",
        ] {
            let e = l(bad).unwrap_err().to_string();
            assert!(e.contains("--layouts") && e.contains("1000"), "{bad}: {e}");
        }
        let c = Layouts::parse("--crowd-layouts", "100000000", MAX_CROWD_LAYOUTS);
        assert!(c.unwrap_err().to_string().contains("at most 100"));
    }

    #[test]
    fn the_options_keep_their_defaults_and_ranges() {
        let o = parse(&["--layouts", "129..160"]).unwrap().unwrap();
        assert_eq!(o.layouts.numbers(), 129..=160);
        let o = parse(&["--crowd", "5", "--crowd-layouts", "6..10"])
            .unwrap()
            .unwrap();
        assert_eq!(o.crowd_layouts.numbers(), 6..=10);
        let o = parse(&[]).unwrap().unwrap();
        assert_eq!(o.layouts.numbers(), 1..=8);
        assert_eq!(o.crowd_layouts.count(), 0);
        // The docs' callgrind command.
        assert!(parse(&["--speed-only", "--layouts", "0"]).is_ok());
    }

    #[test]
    fn bounce_heights_print_in_millimetres() {
        assert_eq!(mm_cell(0.0015, None), "1.5");
        assert_eq!(mm_cell(0.0015, Some(0.0016)), "1.5 (-6 %)");
        assert_eq!(mm_cell(0.100, Some(0.100)), "100.0 (+0 %)");
    }

    #[test]
    fn a_run_shorter_than_a_tick_is_never_infinitely_fast() {
        assert_eq!(cpu_seconds(Some(0.0)), "< 0.01");
        assert_eq!(per_cpu_second(1, Some(0.0)), "> 100");
        assert_eq!(cpu_seconds(Some(1.5)), "1.50");
        assert_eq!(per_cpu_second(300, Some(1.5)), "200");
        assert_eq!(cpu_seconds(None), "?");
        assert_eq!(per_cpu_second(300, None), "?");
    }
}
