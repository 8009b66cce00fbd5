//! The swarm's worlds (`simrob swarm run`) on ROS 2: each moving robot under its scenario
//! name (made a valid ROS name, and unique: [`Names`]), `odom` and `/tf` out, a goal in on `goal_pose`
//! (`geometry_msgs/PoseStamped`, as RViz's "2D Goal Pose" sends) that starts a route on the
//! scenario's map-paths, as the `Go X,Y` instruction does.
//!
//! Map units are published as metres, y flipped (the map's y points down, ROS's up):
//! x = x, y = −y, yaw = −θ.
//!
//! The bridge is a swarm system ([`SwarmRos`]) that runs last in every frame: it publishes,
//! takes the goals that arrived, and paces the run at `speed` × real time (the ROS side lives
//! in wall time); with lockstep it instead waits, each frame, for a message on
//! `/simrob/step`, repeating its state every [`crate::simrob::REPEAT`] of wall time while it
//! waits.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use simrob_swarm::ecs::{EntityId, SwarmWorld};
use simrob_swarm::nav::{start_route, Goal, RouteError};
use simrob_swarm::sim::{Ctx, System};

use crate::bridge::{Bridge, Command, Frame, Rates, RobotFrame};
use crate::env::Discovery;
use crate::node::{Inputs, Node, NodeError, Wake};

/// A valid ROS name for a swarm entity: its name's letters, digits and `_` (others become
/// `_`), `robot_<id>` when that leaves nothing or starts with a digit.
pub fn robot_name(world: &SwarmWorld, e: EntityId) -> String {
    let name: String = world
        .name
        .get(e)
        .map(|n| {
            n.chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect()
        })
        .unwrap_or_default();
    match name.chars().next() {
        Some(c) if c.is_ascii_alphabetic() => name,
        _ => format!("robot_{}", e.0),
    }
}

/// The swarm's robots' ROS names, each unique and kept for the run (a name is never given
/// to another robot, even after its robot has gone). A robot is named [`robot_name`]; when a
/// robot seen before (or, in the same frame, one whose scenario name is already a valid ROS
/// name, or one of lower id) has that name, `_<id>` is appended until it is free.
#[derive(Debug, Default)]
pub struct Names {
    by_entity: BTreeMap<u32, String>,
    taken: BTreeSet<String>,
}

impl Names {
    /// The name of `e` (named now if it has none yet).
    pub fn name(&mut self, world: &SwarmWorld, e: EntityId) -> String {
        if let Some(n) = self.by_entity.get(&e.0) {
            return n.clone();
        }
        let wanted = robot_name(world, e);
        let mut name = wanted.clone();
        while self.taken.contains(&name) {
            name = format!("{name}_{}", e.0);
        }
        if name != wanted {
            tracing::warn!(target: "simrob::ros2", "robot {} (entity {}): the ROS name {wanted} is taken, published as {name}", world.name.get(e).map_or("", String::as_str), e.0);
        }
        self.taken.insert(name.clone());
        self.by_entity.insert(e.0, name.clone());
        name
    }

    /// Names the robots among `es` that have none: first those whose scenario name is a
    /// valid ROS name as it is, then the others, each in the order given.
    fn assign(&mut self, world: &SwarmWorld, es: &[EntityId]) {
        let as_given = |e: EntityId| {
            world
                .name
                .get(e)
                .is_some_and(|n| *n == robot_name(world, e))
        };
        for first in [true, false] {
            for &e in es {
                if as_given(e) == first {
                    self.name(world, e);
                }
            }
        }
    }
}

/// The robots: entities that move (have a velocity) and are not carried items, under their
/// [`Names`].
pub fn frame_of(world: &SwarmWorld, time: f64, names: &mut Names) -> Frame {
    let es: Vec<EntityId> = world
        .pose
        .iter()
        .filter(|(e, _)| world.vel.has(*e) && !world.item.has(*e) && !world.poi.has(*e))
        .map(|(e, _)| e)
        .collect();
    names.assign(world, &es);
    let robots = es
        .into_iter()
        .filter_map(|e| world.pose.get(e).map(|p| (e, p)))
        .map(|(e, p)| {
            let v = world.vel.get(e).copied().unwrap_or_default();
            RobotFrame {
                name: names.name(world, e),
                id: u64::from(e.0),
                position: [p.x, -p.y, 0.0],
                rotation: [0.0, 0.0, -p.theta],
                linear_velocity: Some([v.x, -v.y, 0.0]),
                angular_velocity: Some([0.0, 0.0, -v.w]),
                takes_cmd_vel: false,
                drive: None,
                sonars: None,
                bumpers: None,
            }
        })
        .collect();
    Frame { time, robots }
}

/// Why there is no route, its coordinates in the world frame (y up) as ROS gives them.
fn in_world(err: &RouteError) -> String {
    use simrob_math::Shown;
    match err {
        RouteError::StartOffMap { x, y, within } => format!(
            "no map point within {within} of the robot ({:.1}, {:.1})",
            Shown(*x),
            Shown(-*y)
        ),
        RouteError::GoalOffMap { within, .. } => {
            format!("no map point within {within} of the goal")
        }
        RouteError::NoPath { x, y, .. } => format!(
            "no map-path leads from the robot ({:.1}, {:.1}) to the goal",
            Shown(*x),
            Shown(-*y)
        ),
        other => other.to_string(),
    }
}

/// How `simrob swarm run --ros2` runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Domain and discovery range.
    pub discovery: Discovery,
    /// Publication rates.
    pub rates: Rates,
    /// Lockstep: each frame waits for a message on `/simrob/step`.
    pub lockstep: bool,
    /// Simulated seconds per wall second when not in lockstep (0 = as fast as possible).
    pub speed: f64,
}

/// The swarm system that bridges to ROS 2 (see the module docs). It runs last in each
/// frame, after the world has moved: it publishes the state the frame reached (stamped with
/// the next frame's time) and then, in lockstep, waits for the message that asks for the next
/// frame; the state at time 0 is published (and the first frame waited for) when the run
/// starts. A stop (Ctrl-C) ends a wait without a frame: the caller checks its flag before
/// each frame.
pub struct SwarmRos {
    node: Node,
    bridge: Bridge,
    options: Options,
    stop: Arc<AtomicBool>,
    started: Option<(Instant, u64)>,
    steps_owed: usize,
    names: Names,
}

impl SwarmRos {
    /// The participant; `stop` ends a lockstep wait (Ctrl-C), woken by [`SwarmRos::waker`].
    pub fn new(options: Options, stop: Arc<AtomicBool>) -> Result<SwarmRos, NodeError> {
        Ok(SwarmRos {
            node: Node::new(
                options.discovery,
                Inputs {
                    velocity: false,
                    wheels: false,
                    goal: true,
                },
                options.lockstep,
            )?,
            bridge: Bridge::new(options.rates),
            options,
            stop,
            started: None,
            steps_owed: 0,
            names: Names::default(),
        })
    }

    /// What wakes a lockstep wait (call it after raising the stop flag).
    pub fn waker(&self) -> Wake {
        self.node.waker()
    }

    fn apply(&mut self, ctx: &mut Ctx) {
        for c in self.bridge.take_commands() {
            if let Command::Goal { id, x, y } = c {
                let Ok(id) = u32::try_from(id) else { continue };
                let e = EntityId(id);
                // The run's log speaks of map coordinates (y down), ROS's of the world frame.
                let (shown_x, shown_y) = (simrob_math::Shown(x), simrob_math::Shown(-y));
                match start_route(&mut ctx.world, e, &Goal::Point(x, -y)) {
                    Ok(()) => ctx.log(Some(e), format!("ROS goal ({shown_x:.1}, {shown_y:.1})")),
                    Err(err) => {
                        tracing::info!(target: "simrob::ros2", "goal ({:.1}, {:.1}) in world for {}: {}", simrob_math::Shown(x), simrob_math::Shown(y), self.names.name(&ctx.world, e), in_world(&err));
                        ctx.log(
                            Some(e),
                            format!("ROS goal ({shown_x:.1}, {shown_y:.1}): {err}"),
                        );
                    }
                }
            }
        }
    }

    /// Publishes the world as it is at frame `frame` (simulated time `frame / fps`, exactly
    /// on the frame grid), takes what arrived, and paces or (lockstep) waits for the next
    /// frame's step message; then applies the goals taken.
    fn show_and_wait(&mut self, ctx: &mut Ctx, frame: u64) {
        let time = frame as f64 / ctx.config.fps;
        let state = frame_of(&ctx.world, time, &mut self.names);
        let outs = self.bridge.step(&state);
        if let Err(e) = self.node.publish(outs) {
            tracing::warn!(target: "simrob::ros2", "{e}");
        }
        if self.options.lockstep {
            // One frame per message on /simrob/step (those that came together wait their
            // turn). Sleeps until a sample arrives, the stop flag's wake (the flag is raised
            // before the wake, so a wake that `receive` cleared is seen here), or the time to
            // repeat the state for a controller that joins late.
            let mut shown = Instant::now();
            loop {
                self.steps_owed += self.node.receive(&mut self.bridge);
                if self.steps_owed > 0 {
                    self.steps_owed -= 1;
                    break;
                }
                if self.stop.load(Ordering::Relaxed) {
                    break;
                }
                let left = crate::simrob::REPEAT.saturating_sub(shown.elapsed());
                if left.is_zero() {
                    if let Err(e) = self.node.publish(self.bridge.repeat(&state)) {
                        tracing::warn!(target: "simrob::ros2", "{e}");
                    }
                    shown = Instant::now();
                    continue;
                }
                self.node.wait(Some(left));
            }
        } else {
            self.node.receive(&mut self.bridge);
            // Pace: the ROS side lives in wall time.
            if self.options.speed > 0.0 {
                let (t0, f0) = *self.started.get_or_insert((Instant::now(), frame));
                let simulated = frame.saturating_sub(f0) as f64 / ctx.config.fps;
                let due = t0 + Duration::from_secs_f64(simulated / self.options.speed);
                let now = Instant::now();
                if due > now && !self.stop.load(Ordering::Relaxed) {
                    std::thread::sleep(due - now);
                }
            }
        }
        self.apply(ctx);
    }
}

impl System for SwarmRos {
    fn name(&self) -> &str {
        "ros2"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn start(&mut self, ctx: &mut Ctx) {
        self.show_and_wait(ctx, ctx.frame);
    }

    fn run(&mut self, ctx: &mut Ctx) {
        // The frame has moved the world: its state is that of the next frame.
        self.show_and_wait(ctx, ctx.frame + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_swarm::ecs::{SwarmPose, Velocity};

    fn world(names: &[&str]) -> SwarmWorld {
        let mut w = SwarmWorld::new(200.0, 100.0);
        for n in names {
            let e = w.spawn("robot");
            w.pose.insert(e, SwarmPose::default());
            w.vel.insert(e, Velocity::default());
            w.set_name(e, n).expect("a new name");
        }
        w
    }

    fn names_of(w: &SwarmWorld, names: &mut Names) -> Vec<String> {
        frame_of(w, 0.0, names)
            .robots
            .into_iter()
            .map(|r| r.name)
            .collect()
    }

    #[test]
    fn robot_names_are_unique_and_kept() {
        // Entity 1 is `1abc` (`robot_1` on ROS), `a-b` and `a_b` both sanitise to `a_b`.
        let mut w = world(&["1abc", "a-b", "dup", "ab", "robot_1", "a_b"]);
        let mut names = Names::default();
        let first = names_of(&w, &mut names);
        // Names valid as given keep them; the others give way, `_<id>` appended.
        assert_eq!(first, ["robot_1_1", "a_b_2", "dup", "ab", "robot_1", "a_b"]);
        // The same on every frame, and in a second run.
        assert_eq!(names_of(&w, &mut names), first);
        assert_eq!(names_of(&w, &mut Names::default()), first);
        // A robot that comes later takes no name already given, even one whose robot went.
        let gone = EntityId(3);
        w.vel.remove(gone);
        let e = w.spawn("robot");
        w.pose.insert(e, SwarmPose::default());
        w.vel.insert(e, Velocity::default());
        w.name.insert(e, "dup".into());
        assert_eq!(
            names_of(&w, &mut names),
            ["robot_1_1", "a_b_2", "ab", "robot_1", "a_b", "dup_7"]
        );
    }
}
