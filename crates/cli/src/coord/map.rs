//! The Control Center's live map in the 2D view (`--gui`): every robot whatever its kind, by
//! its condition (idle, busy, error, silent, left), and every task at its goal by its state
//! (waiting, auctioned, sent, queued, running, ended, aborted, failed, blocked), with a line
//! from the robot that holds it. It shows what the Control Center knows
//! ([`ControlCenter::map`](simrob_coord::cc::ControlCenter::map)) and nothing else: robots
//! are where their last status put them.
//!
//! Robots of different worlds report positions in their own world's frame (and units): the
//! map gives each world a band of its own, side by side, labelled with the world's name; in
//! its band a world is shifted so that everything known of it lies inside (with one world, the
//! shift is in the scene's title). The bands grow, never shrink, as robots and goals appear.
//! A task is drawn in its holder's world, else the world it was announced in. The page only
//! watches: tasks are sent from the operator's menu.
//!
//! A frame carries at most [`MAX_MAP_TASKS`] tasks: the unfinished ones first, then the
//! latest final ones (the status panel counts them all).

use std::net::SocketAddr;
use std::sync::Arc;

use simrob_coord::cc::{Allocation, Condition, MapView, TaskView};
use simrob_coord::model::TaskState;
use simrob_viewer::view2d::{
    Body2d, Frame2d, Label2d, Scene2d, StateStyle, Status2d, Task2d, View2d,
};
use simrob_viewer::{Backend, Guard};

/// Most tasks drawn in one frame.
pub const MAX_MAP_TASKS: usize = 5000;

/// The robot conditions the map draws, in the order frames index them.
fn robot_states() -> Vec<StateStyle> {
    vec![
        StateStyle::new("silent", "robot, no status yet", "#8a8f98", "ring"),
        StateStyle::new("idle", "robot, idle", "#4477aa", "fill"),
        StateStyle::new("busy", "robot, running a task", "#2a9d4a", "fill"),
        StateStyle::new("error", "robot, reporting an error", "#d62728", "fill"),
        StateStyle::new("left", "robot, left", "#9a9ea5", "cross"),
    ]
}

fn condition_name(c: Condition) -> &'static str {
    match c {
        Condition::Silent => "silent",
        Condition::Idle => "idle",
        Condition::Busy => "busy",
        Condition::Error => "error",
        Condition::Left => "left",
    }
}

/// A task's state as the map names it: its robot's last report, or where it is in
/// allocation when no robot has reported it.
pub fn task_state_name(t: &TaskView) -> &'static str {
    match (t.state, t.allocation) {
        (Some(TaskState::Queued), _) => "queued",
        (Some(TaskState::Running), _) => "running",
        (Some(TaskState::Ended), _) => "ended",
        (Some(TaskState::Aborted), _) => "aborted",
        (Some(TaskState::Failed { .. }), _) => "failed",
        (Some(TaskState::Blocked { .. }), _) => "blocked",
        (None, Allocation::Waiting) => "waiting",
        (None, Allocation::Auction(_)) => "auction",
        (None, Allocation::Robot(_)) => "sent",
    }
}

/// The map's frame: what is known, shifted so that it lies in `[0, width] × [0, height]`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Extent {
    min: [f64; 2],
    max: [f64; 2],
}

impl Extent {
    /// The smallest "nice" box (a margin, edges on a step of the size's order) around the
    /// points, or `None` when there are none.
    fn around(points: impl Iterator<Item = [f64; 2]>) -> Option<Extent> {
        let mut e: Option<Extent> = None;
        for p in points.filter(|p| p[0].is_finite() && p[1].is_finite()) {
            let x = e.get_or_insert(Extent { min: p, max: p });
            *x = x.union(Extent { min: p, max: p });
        }
        let mut e = e?;
        let size = (e.max[0] - e.min[0]).max(e.max[1] - e.min[1]).max(1.0);
        let step = 10f64.powf((size / 4.0).log10().floor());
        for k in 0..2 {
            e.min[k] = ((e.min[k] - size * 0.1) / step).floor() * step;
            e.max[k] = ((e.max[k] + size * 0.1) / step).ceil() * step;
        }
        Some(e)
    }

    fn union(self, o: Extent) -> Extent {
        Extent {
            min: [self.min[0].min(o.min[0]), self.min[1].min(o.min[1])],
            max: [self.max[0].max(o.max[0]), self.max[1].max(o.max[1])],
        }
    }
}

/// Turns the Control Center's map into the 2D view's scene and frames.
pub struct MapFrames {
    scene: Scene2d,
    /// Every world's extent, in the order the worlds appeared: robots of different worlds
    /// report positions in different frames (and units), so each world gets a band of its
    /// own, side by side from left to right (a SumBot near its field's origin and a Nomad
    /// near its map's would otherwise be drawn on top of each other).
    worlds: Vec<(String, Extent)>,
    frames: u64,
}

impl Default for MapFrames {
    fn default() -> Self {
        MapFrames {
            scene: Scene2d {
                world: "coord".into(),
                title: "Control Center".into(),
                units: "unit".into(),
                width: 10.0,
                height: 10.0,
                states: robot_states(),
                version: 1,
                ..Scene2d::default()
            },
            worlds: Vec::new(),
            frames: 0,
        }
    }
}

impl MapFrames {
    /// The scene now.
    pub fn scene(&self) -> &Scene2d {
        &self.scene
    }

    /// Where map point (0, 0) is in the frame of the first world's robots.
    pub fn origin(&self) -> [f64; 2] {
        self.worlds.first().map_or([0.0, 0.0], |(_, e)| e.min)
    }

    /// Where map point (0, 0) would be in `world`'s frame: a point of the world is drawn at
    /// itself less this (`None` for a world not on the map). A world's content is centred in
    /// its band.
    fn shift(&self, world: &str) -> Option<[f64; 2]> {
        let height = self.height();
        self.bands()
            .find(|(name, ..)| *name == world)
            .map(|(_, e, left, width)| {
                let (w, h) = (e.max[0] - e.min[0], e.max[1] - e.min[1]);
                [
                    e.min[0] - (left + (width - w) / 2.0),
                    e.min[1] - (height - h) / 2.0,
                ]
            })
    }

    /// The worlds' bands, left to right: name, extent, left edge and width. A band is at least
    /// a third of the widest one wide (a world of one robot gets room for it and its label),
    /// with a tenth of the widest between two bands.
    fn bands(&self) -> impl Iterator<Item = (&str, Extent, f64, f64)> + '_ {
        let widest = self
            .worlds
            .iter()
            .map(|(_, e)| (e.max[0] - e.min[0]).max(e.max[1] - e.min[1]))
            .fold(0.0, f64::max);
        let mut left = 0.0;
        self.worlds.iter().map(move |(name, e)| {
            let width = (e.max[0] - e.min[0]).max(widest / 3.0);
            let band = (name.as_str(), *e, left, width);
            left += width + widest * 0.1;
            band
        })
    }

    /// The map's height: the tallest world's, or a third of the widest.
    fn height(&self) -> f64 {
        let (mut tallest, mut widest) = (0.0f64, 0.0f64);
        for (_, e) in &self.worlds {
            tallest = tallest.max(e.max[1] - e.min[1]);
            widest = widest.max((e.max[0] - e.min[0]).max(e.max[1] - e.min[1]));
        }
        if self.worlds.len() > 1 {
            tallest.max(widest / 3.0)
        } else {
            tallest
        }
    }

    /// The frame of `map`, and whether the scene changed (a new robot kind or world, the map
    /// grew).
    pub fn frame(&mut self, map: &MapView) -> (Frame2d, bool) {
        let mut changed = false;
        let world_of_robot = |id: u32| {
            map.robots
                .iter()
                .find(|r| r.robot == id)
                .map(|r| r.world.as_str())
        };
        // A task's world: its holder's, else the one it was announced in (`… in WORLD`), else
        // the only world there is.
        let only = {
            let mut w: Vec<&str> = map.robots.iter().map(|r| r.world.as_str()).collect();
            w.sort_unstable();
            w.dedup();
            (w.len() == 1).then(|| w[0])
        };
        let task_world = |t: &TaskView| -> String {
            t.robot
                .and_then(world_of_robot)
                .or_else(|| {
                    t.what
                        .split(" in ")
                        .nth(1)
                        .and_then(|w| w.split_whitespace().next())
                })
                .or(only)
                .unwrap_or("")
                .to_string()
        };
        let mut names: Vec<String> = Vec::new();
        for w in map.robots.iter().map(|r| r.world.clone()).chain(
            map.tasks
                .iter()
                .filter(|t| t.target.is_some())
                .map(&task_world),
        ) {
            if !names.contains(&w) {
                names.push(w);
            }
        }
        for name in names {
            let points = map
                .robots
                .iter()
                .filter(|r| r.world == name)
                .filter_map(|r| r.pose.map(|p| [p[0], p[1]]))
                .chain(
                    map.tasks
                        .iter()
                        .filter(|t| task_world(t) == name)
                        .filter_map(|t| t.target),
                );
            let Some(e) = Extent::around(points) else {
                continue;
            };
            match self.worlds.iter_mut().find(|(n, _)| *n == name) {
                Some((_, old)) => {
                    let grown = old.union(e);
                    if *old != grown {
                        *old = grown;
                        changed = true;
                    }
                }
                None => {
                    self.worlds.push((name, e));
                    changed = true;
                }
            }
        }
        for r in &map.robots {
            if !self.scene.kinds.contains(&r.kind) && self.scene.kinds.len() < 255 {
                self.scene.kinds.push(r.kind.clone());
                changed = true;
            }
        }
        if changed {
            let height = self.height();
            let width = self.bands().last().map_or(0.0, |(_, _, left, w)| left + w);
            (self.scene.width, self.scene.height) = if self.worlds.is_empty() {
                (10.0, 10.0)
            } else {
                (width, height)
            };
            self.scene.labels.clear();
            if self.worlds.len() > 1 {
                let labels: Vec<Label2d> = self
                    .bands()
                    .map(|(name, _, left, w)| Label2d {
                        text: if name.is_empty() {
                            "tasks of no world".into()
                        } else {
                            format!("world {name}")
                        },
                        x: left,
                        y: 0.0,
                        w,
                        h: 0.08 * height,
                    })
                    .collect();
                self.scene.labels = labels;
                let list: Vec<&str> = self.worlds.iter().map(|(n, _)| n.as_str()).collect();
                self.scene.title = format!(
                    "Control Center: {} robots (worlds side by side, each in its own frame: {})",
                    map.robots.len(),
                    list.join(", ")
                );
            } else {
                let [ox, oy] = self.origin();
                self.scene.title = format!(
                    "Control Center: {} robots (map origin at {ox}, {oy} in the robots' frames)",
                    map.robots.len()
                );
            }
            self.scene.version += 1;
        }
        // Bodies a hundredth of the map across (the page draws them at least a few pixels).
        let half = (self.scene.width.max(self.scene.height) * 0.01).max(1e-3);
        let mut f = Frame2d {
            scene: self.scene.version,
            frame: self.frames,
            time: map.time,
            status: Status2d {
                state: if map.synced { "running" } else { "waiting" }.into(),
                speed: 0.0,
                controls: false,
            },
            ..Frame2d::default()
        };
        self.frames += 1;
        for r in &map.robots {
            let Some([x, y, heading]) = r.pose else {
                continue;
            };
            let Some([ox, oy]) = self.shift(&r.world) else {
                continue;
            };
            f.bodies.push(Body2d {
                id: r.robot,
                x: x - ox,
                y: y - oy,
                theta: heading,
                half: [half, half],
                kind: self
                    .scene
                    .kinds
                    .iter()
                    .position(|k| *k == r.kind)
                    .and_then(|i| u8::try_from(i).ok())
                    .unwrap_or(0),
                state: self.scene.state(condition_name(r.condition)),
                disc: true,
            });
            let name = if r.name.is_empty() {
                format!("{} {}", r.kind, r.robot)
            } else {
                format!("{} ({})", r.robot, r.name)
            };
            f.names.push((r.robot, name));
        }
        let mut counts: Vec<(&'static str, usize)> = Vec::new();
        for t in &map.tasks {
            let state = task_state_name(t);
            match counts.iter_mut().find(|(s, _)| *s == state) {
                Some((_, n)) => *n += 1,
                None => counts.push((state, 1)),
            }
        }
        // Unfinished tasks first, then the latest final ones.
        let mut shown: Vec<&TaskView> = map.tasks.iter().collect();
        shown.sort_by_key(|t| {
            (
                t.state.is_some_and(|s| s.is_final()),
                std::cmp::Reverse(t.task),
            )
        });
        shown.truncate(MAX_MAP_TASKS);
        shown.sort_by_key(|t| t.task);
        for t in shown {
            let state = task_state_name(t);
            let [ox, oy] = self.shift(&task_world(t)).unwrap_or([0.0, 0.0]);
            f.tasks.push(Task2d {
                id: t.task,
                what: match t.state {
                    Some(s) => format!("{} — {s}", t.what),
                    None => t.what.clone(),
                },
                state: state.into(),
                robot: t.robot,
                x: t.target.map(|p| p[0] - ox),
                y: t.target.map(|p| p[1] - oy),
            });
        }
        f.figures.push(("policy".into(), map.policy.name().into()));
        f.figures
            .push(("robots".into(), map.robots.len().to_string()));
        f.figures.extend(
            counts
                .into_iter()
                .map(|(s, n)| (format!("tasks {s}"), n.to_string())),
        );
        if !map.synced {
            f.figures
                .push(("clock".into(), "not heard the Time Server yet".into()));
        }
        (f, changed)
    }
}

/// The page only watches.
struct Watching;

impl Backend for Watching {
    fn command(&self, _: &serde_json::Value) -> Result<(), simrob_viewer::CommandError> {
        Err(simrob_viewer::CommandError::WatchOnly(
            "the Control Center's map only watches: send tasks from the operator's menu",
        ))
    }
}

/// The map served live.
pub struct LiveMap {
    view: View2d,
    frames: MapFrames,
}

impl LiveMap {
    /// Serves the map's page on `bind`.
    pub fn start(bind: SocketAddr, hello: &str, guard: Guard) -> std::io::Result<LiveMap> {
        let view = View2d::start(bind, Arc::new(Watching), "coord", hello, guard)?;
        let frames = MapFrames::default();
        view.set_scene(frames.scene());
        Ok(LiveMap { view, frames })
    }

    /// The page's address.
    pub fn addr(&self) -> SocketAddr {
        self.view.addr()
    }

    /// Publishes the map when a page is there and a frame is due; `map` is only asked for
    /// then.
    pub fn show(&mut self, map: impl FnOnce() -> MapView) {
        if !self.view.due() {
            return;
        }
        let (frame, changed) = self.frames.frame(&map());
        if changed {
            self.view.set_scene(self.frames.scene());
        }
        self.view.publish(&frame);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_coord::cc::{CcConfig, ControlCenter};
    use simrob_coord::model::{RobotInfo, RobotStatus, Running, TaskClass, TaskKind, TaskSpec};
    use simrob_coord::wire::{Envelope, Msg, OperatorCommand};

    fn hello(cc: &mut ControlCenter, robot: u32, kind: &str, at: [f64; 2]) {
        hello_in(cc, robot, kind, "swarm", at);
    }

    fn hello_in(cc: &mut ControlCenter, robot: u32, kind: &str, world: &str, at: [f64; 2]) {
        let info = RobotInfo {
            robot,
            name: format!("r{robot}"),
            kind: kind.into(),
            world: world.into(),
            capabilities: vec![TaskClass::Movement],
            speed: 1.0,
        };
        cc.handle(
            Envelope {
                from: robot,
                to: Some(0),
                msg: Msg::Hello {
                    info: Box::new(info),
                },
            },
            0.0,
        )
        .expect("hello");
        let status = RobotStatus {
            robot,
            time: 0.0,
            synced: true,
            x: at[0],
            y: at[1],
            heading: 0.5,
            speed: 0.0,
            battery: None,
            running: Running::default(),
            queued: 0,
            ok: true,
            error: None,
        };
        cc.handle(
            Envelope {
                from: robot,
                to: Some(0),
                msg: Msg::Status {
                    status: Box::new(status),
                },
            },
            0.0,
        )
        .expect("status");
    }

    #[test]
    fn robots_and_task_goals_are_placed_in_one_shifted_frame_with_their_states() {
        let mut cc = ControlCenter::new(CcConfig::default());
        hello(&mut cc, 1, "swarm", [-40.0, 10.0]);
        hello(&mut cc, 2, "nomad", [60.0, 90.0]);
        cc.handle(
            Envelope {
                from: 0x4000_0000,
                to: Some(0),
                msg: Msg::Operator {
                    command: Box::new(OperatorCommand::Send {
                        robot: 2,
                        task: TaskSpec::new(0, TaskKind::Goto { x: 100.0, y: -20.0 }),
                    }),
                },
            },
            0.0,
        )
        .expect("send");
        let mut frames = MapFrames::default();
        let (f, changed) = frames.frame(&cc.map());
        assert!(changed, "the first robots set the map's extent");
        let [ox, oy] = frames.origin();
        let s = frames.scene();
        // Everything known lies inside the map.
        assert!(ox <= -40.0 && oy <= -20.0, "origin {ox}, {oy}");
        assert!(ox + s.width >= 100.0 && oy + s.height >= 90.0);
        assert_eq!(s.kinds, vec!["swarm".to_string(), "nomad".to_string()]);
        let b = f.bodies.iter().find(|b| b.id == 2).expect("robot 2");
        assert_eq!((b.x + ox, b.y + oy, b.theta), (60.0, 90.0, 0.5));
        assert_eq!(s.states[usize::from(b.state)].name, "idle");
        assert_eq!(s.kinds[usize::from(b.kind)], "nomad");
        assert_eq!(f.tasks.len(), 1);
        let t = &f.tasks[0];
        assert_eq!((t.state.as_str(), t.robot), ("sent", Some(2)));
        assert_eq!(
            (t.x.map(|x| x + ox), t.y.map(|y| y + oy)),
            (Some(100.0), Some(-20.0))
        );
        // Nothing new: the scene stays; a frame number moves on.
        let (g, changed) = frames.frame(&cc.map());
        assert!(!changed);
        assert_eq!(g.frame, f.frame + 1);
    }

    /// The coordination guide's team: a SumBot near its field's origin (metres), a Nomad near
    /// its map's (inches) and swarm robots hundreds of units away. In one frame the SumBot and
    /// the Nomad were drawn on top of each other (the map said 5 robots and showed 4); each
    /// world now has a band of its own.
    #[test]
    fn robots_of_different_worlds_are_drawn_apart_each_in_its_worlds_band() {
        let mut cc = ControlCenter::new(CcConfig::default());
        hello_in(&mut cc, 1, "sumbot", "simrob", [0.2, 0.1]);
        hello_in(&mut cc, 2, "nomad", "mrs", [3.81, 3.81]);
        hello_in(&mut cc, 100, "swarm", "swarm", [530.0, 440.0]);
        hello_in(&mut cc, 101, "swarm", "swarm", [595.0, 450.0]);
        let mut frames = MapFrames::default();
        let (f, _) = frames.frame(&cc.map());
        let s = frames.scene();
        let at = |id: u32| {
            let b = f
                .bodies
                .iter()
                .find(|b| b.id == id)
                .expect("robot on the map");
            assert!(
                (0.0..=s.width).contains(&b.x) && (0.0..=s.height).contains(&b.y),
                "robot {id} at ({}, {}) outside the {} × {} map",
                b.x,
                b.y,
                s.width,
                s.height
            );
            [b.x, b.y]
        };
        let (sumbot, nomad) = (at(1), at(2));
        let apart = (sumbot[0] - nomad[0]).hypot(sumbot[1] - nomad[1]);
        // Five radii of a robot's disc (a hundredth of the map) at least: two discs and the
        // labels between them.
        assert!(
            apart > 0.05 * s.width.max(s.height),
            "the SumBot and the Nomad are {apart} apart on a {} × {} map",
            s.width,
            s.height
        );
        // Within a world, distances are the world's own.
        let (a, b) = (at(100), at(101));
        assert!(((b[0] - a[0]) - 65.0).abs() < 1e-9 && ((b[1] - a[1]) - 10.0).abs() < 1e-9);
        let labels: Vec<&str> = s.labels.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(labels, ["world simrob", "world mrs", "world swarm"]);
        assert!(s.title.contains("worlds side by side"), "{}", s.title);
    }
}
