//! The Mobile Robot Simulator in the 2D view: the map (rectangles and bitmap), every robot
//! with its id, heading, sonar rays (to what they hit), closed bumpers and last message; the
//! operator places a robot and loads or merges a map from the page — the server's own
//! `#PLACE`, `#LOAD`, `#MERGE` and `#RECT`, applied on the server's thread between steps.
//!
//! Page commands: `{"cmd":"place","robot":ID,"x":…,"y":…,"heading":DEG}`,
//! `{"cmd":"load","file":NAME}`, `{"cmd":"merge","file":NAME}`,
//! `{"cmd":"rect","rect":[x1,y1,x2,y2]}` (file names in the server's map directory).

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use simrob_mrs::flat::{FlatPose, FlatWorld, Map, RobotId, Vec2};
use simrob_mrs::{CoreError, MapFiles, MrsCore, ShellHook};

use super::{Bitmap2d, Body2d, Frame2d, Scene2d, Sensors2d, StateStyle, Status2d, View2d};
use crate::command::{self, number};
use crate::{Backend, CommandError};

/// What the operator asked from the page.
#[derive(Clone, Debug, PartialEq)]
pub enum Operation {
    /// Put a robot somewhere (`#PLACE`).
    Place {
        /// The robot's id.
        robot: u32,
        /// Where: inches, y down, heading in degrees.
        pose: FlatPose,
    },
    /// Replace the map with this file of the map directory (`#LOAD`).
    Load(String),
    /// Merge this file's vector map onto the map (`#MERGE`).
    Merge(String),
    /// Merge the obstacle rectangle `[x1, y1, x2, y2]`, inches, onto the map (`#RECT`).
    Rect([f64; 4]),
}

/// The page's commands, passed to the server's thread.
pub struct MrsBackend {
    ops: Mutex<Sender<Operation>>,
}

fn file(cmd: &serde_json::Value) -> Result<String, CommandError> {
    let name = cmd
        .get("file")
        .and_then(|f| f.as_str())
        .ok_or(CommandError::Usage(
            "a map command needs \"file\": a file name in the map directory",
        ))?;
    simrob_mrs::check_file_name(name)?;
    Ok(name.to_string())
}

/// Parses a page command.
pub fn parse(cmd: &serde_json::Value) -> Result<Operation, CommandError> {
    match command::name(cmd)? {
        "place" => {
            let robot = cmd
                .get("robot")
                .and_then(|r| r.as_u64())
                .and_then(|r| u32::try_from(r).ok())
                .ok_or(CommandError::Usage("place needs \"robot\": a robot id"))?;
            // As `#PLACE`: a heading is taken modulo 360, up to a hundred turns either way.
            let heading =
                simrob_mrs::protocol::check_heading(number(cmd, "heading")?).map_err(|_| {
                    CommandError::Usage("place: a heading of at most 36000 degrees either way")
                })?;
            Ok(Operation::Place {
                robot,
                pose: FlatPose::new(number(cmd, "x")?, number(cmd, "y")?, heading),
            })
        }
        "load" => Ok(Operation::Load(file(cmd)?)),
        "merge" => Ok(Operation::Merge(file(cmd)?)),
        "rect" => {
            let values = cmd
                .get("rect")
                .and_then(|r| r.as_array())
                .filter(|r| r.len() == 4)
                .ok_or(CommandError::Usage("rect needs \"rect\": [x1, y1, x2, y2]"))?;
            let mut rect = [0.0; 4];
            for (slot, v) in rect.iter_mut().zip(values) {
                *slot = v
                    .as_f64()
                    .filter(|v| v.is_finite())
                    .ok_or(CommandError::Usage("rect: four finite numbers"))?;
            }
            Ok(Operation::Rect(rect))
        }
        other => Err(CommandError::Unknown {
            name: other.to_string(),
            takes: " (the Mobile Robot Simulator's view takes place, load, merge, rect)",
        }),
    }
}

impl Backend for MrsBackend {
    fn command(&self, cmd: &serde_json::Value) -> Result<(), CommandError> {
        let op = parse(cmd)?;
        self.ops
            .lock()
            .map_err(|_| CommandError::Poisoned)?
            .send(op)
            .map_err(|_| CommandError::Stopped("the simulator"))
    }
}

/// Applies an operation to the core; the text for the page.
pub fn apply(
    core: &mut MrsCore,
    op: &Operation,
    files: &mut dyn MapFiles,
) -> Result<String, CoreError> {
    match op {
        Operation::Place { robot, pose } => {
            core.place_robot(RobotId(*robot), *pose)?;
            Ok(format!(
                "robot {robot} placed at ({:.1}, {:.1}, {:.1}°)",
                pose.x, pose.y, pose.heading_deg
            ))
        }
        Operation::Load(name) => core
            .load_map(name, files)
            .map(|_| format!("map {name} loaded")),
        Operation::Merge(name) => core
            .merge_map(name, files)
            .map(|_| format!("map {name} merged")),
        Operation::Rect(r) => core
            .add_rect(*r)
            .map(|_| format!("rectangle {} {} {} {} merged", r[0], r[1], r[2], r[3])),
    }
}

/// The states an MRS robot is drawn in.
pub fn states() -> Vec<StateStyle> {
    vec![
        StateStyle::new("stopped", "stopped", "#8a8f98", "fill"),
        StateStyle::new("moving", "moving", "#2a9d4a", "fill"),
        StateStyle::new("blocked", "blocked (in contact)", "#d62728", "fill"),
    ]
}

/// The scene of a map.
pub fn scene(map: &Map, version: u64) -> Scene2d {
    let bitmap = map
        .bitmap()
        .map(|b| Bitmap2d::from_fn(b.width(), b.height(), 1.0, |x, y| b.get(x, y)));
    Scene2d {
        world: "mrs".into(),
        title: format!(
            "Mobile Robot Simulator: {} × {} in map",
            map.width(),
            map.height()
        ),
        units: "in".into(),
        width: map.width(),
        height: map.height(),
        rects: map
            .rects()
            .iter()
            .map(|r| [r.x1, r.y1, r.x2, r.y2])
            .collect(),
        bitmap,
        kinds: vec!["robot".into()],
        states: states(),
        version,
        ..Scene2d::default()
    }
}

/// The frame of a world: every robot, its sonar rays and closed bumpers, its message.
pub fn frame(core: &MrsCore, scene: u64, status: Status2d) -> Frame2d {
    let world: &FlatWorld = core.world();
    let mut f = Frame2d {
        scene,
        frame: world.steps(),
        time: world.time(),
        status,
        ..Frame2d::default()
    };
    for (id, robot) in world.robots() {
        let m = robot.model;
        let c = robot.pose.position();
        let state = if robot.blocked {
            2
        } else if robot.velocity.forward != 0.0 || robot.velocity.turn != 0.0 {
            1
        } else {
            0
        };
        f.bodies.push(Body2d {
            id: id.0,
            x: c.x,
            y: c.y,
            theta: robot.pose.heading_deg.to_radians(),
            half: [m.radius, m.radius],
            kind: 0,
            state,
            disc: true,
        });
        let mut s = Sensors2d {
            id: id.0,
            sonar: world.sonars(id).unwrap_or_default(),
            message: core
                .messages()
                .get(&id)
                .map(|t| simrob_mrs::printable(t))
                .unwrap_or_default(),
            speed: robot.velocity.forward,
            turn: robot.velocity.turn,
            ..Sensors2d::default()
        };
        for (a, b) in simrob_mrs::render::sonar_rays(world, id, robot) {
            s.rays.push([a.x, a.y, b.x, b.y]);
        }
        for b in 0..m.bumper_count {
            if robot.bumpers >> b & 1 == 1 {
                let a = robot.pose.heading_deg + b as f64 * m.bumper_spacing_deg();
                let p = c + Vec2::from_heading_deg(a) * m.radius;
                s.bumpers.push((b as u32, p.x, p.y));
            }
        }
        f.sensors.push(s);
    }
    f
}

/// What the scene was made from, to see when the map changed.
#[derive(PartialEq)]
struct MapKey {
    size: (f64, f64),
    rects: Vec<[f64; 4]>,
    bitmap: Option<(u32, u32, usize)>,
}

fn key(map: &Map) -> MapKey {
    MapKey {
        size: (map.width(), map.height()),
        rects: map
            .rects()
            .iter()
            .map(|r| [r.x1, r.y1, r.x2, r.y2])
            .collect(),
        bitmap: map.bitmap().map(|b| (b.width(), b.height(), b.count())),
    }
}

/// Shows an MRS server live: the page's backend and the server's hook. `speed` is the
/// server's time factor (0 = as fast as possible), `stepped` whether it only steps on
/// `#STEP`.
pub fn live(
    view_bind: std::net::SocketAddr,
    hello: &str,
    guard: crate::Guard,
    speed: f64,
    stepped: bool,
) -> std::io::Result<(Arc<View2d>, ShellHook)> {
    let (tx, rx) = channel();
    let backend = Arc::new(MrsBackend {
        ops: Mutex::new(tx),
    });
    let view = Arc::new(View2d::start(view_bind, backend, "mrs", hello, guard)?);
    let hook = hook(view.clone(), rx, speed, stepped);
    Ok((view, hook))
}

fn hook(view: Arc<View2d>, ops: Receiver<Operation>, speed: f64, stepped: bool) -> ShellHook {
    let mut shown: Option<MapKey> = None;
    let mut version = 0u64;
    let status = Status2d {
        state: if stepped { "stepped" } else { "running" }.into(),
        speed: if stepped { 0.0 } else { speed },
        controls: false,
    };
    Box::new(move |core: &mut MrsCore, files: &mut dyn MapFiles| {
        let mut changed = false;
        while let Ok(op) = ops.try_recv() {
            changed = true;
            match apply(core, &op, files) {
                Ok(text) => view.response(&text),
                Err(e) => view.response(&format!("Error: {e}")),
            }
        }
        if !changed && !view.due() {
            return;
        }
        let now = key(core.world().map());
        if shown.as_ref() != Some(&now) {
            version += 1;
            view.set_scene(&scene(core.world().map(), version));
            shown = Some(now);
        }
        view.publish_owned(frame(core, version, status.clone()));
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use simrob_mrs::{ClientId, MrsConfig, NoFiles};

    #[test]
    fn bad_page_commands_are_refused_with_a_reason() {
        for (cmd, why) in [
            (
                json!({"cmd": "place", "robot": 0, "x": "a", "y": 1, "heading": 0}),
                "x must be",
            ),
            (
                json!({"cmd": "place", "x": 1, "y": 1, "heading": 0}),
                "robot id",
            ),
            (json!({"cmd": "load"}), "needs \"file\""),
            (
                json!({"cmd": "merge", "file": "../secret"}),
                "plain file name",
            ),
            (
                json!({"cmd": "merge", "file": ".hidden"}),
                "plain file name",
            ),
            (
                json!({"cmd": "rect", "rect": [1, 2, 3]}),
                "[x1, y1, x2, y2]",
            ),
            (
                json!({"cmd": "rect", "rect": [1, 2, 3, null]}),
                "four finite",
            ),
            (json!({"cmd": "teleport"}), "unknown command"),
            (
                json!({"cmd": "place", "robot": 0, "x": 150, "y": 150, "heading": 1e308}),
                format!(
                    "at most {} degrees",
                    simrob_mrs::protocol::MAX_PLACE_HEADING
                )
                .as_str(),
            ),
        ] {
            let e = parse(&cmd).expect_err(&cmd.to_string()).to_string();
            assert!(e.contains(why), "{cmd}: {e}");
        }
    }

    #[test]
    fn a_refused_operation_changes_nothing_and_a_merged_rectangle_is_drawn() {
        let map = Map::parse_vector(simrob_mrs::EXAMPLE_MAP).expect("map");
        let mut core = MrsCore::new(map, MrsConfig::default());
        let id = core.connect(ClientId(1)).expect("robot");
        let before = frame(&core, 1, Status2d::default());
        let mut files = NoFiles;
        for op in [
            Operation::Place {
                robot: id.0,
                pose: FlatPose::new(2.0, 2.0, 0.0),
            },
            Operation::Place {
                robot: 99,
                pose: FlatPose::new(60.0, 60.0, 0.0),
            },
            Operation::Load("map.txt".into()),
            Operation::Rect([250.0, 10.0, 400.0, 20.0]),
        ] {
            assert!(apply(&mut core, &op, &mut files).is_err(), "{op:?}");
        }
        assert_eq!(frame(&core, 1, Status2d::default()), before);
        assert_eq!(scene(core.world().map(), 1).rects.len(), 10);
        let text = apply(
            &mut core,
            &Operation::Rect([250.0, 10.0, 280.0, 20.0]),
            &mut files,
        )
        .expect("rect");
        assert_eq!(text, "rectangle 250 10 280 20 merged");
        let s = scene(core.world().map(), 2);
        assert_eq!(s.rects.last(), Some(&[250.0, 10.0, 280.0, 20.0]));
    }
}
