//! The swarm's worlds (`simrob swarm run`) on ROS 2: each moving robot under its scenario
//! name (made a valid ROS name), `odom` and `/tf` out, a goal in on `goal_pose`
//! (`geometry_msgs/PoseStamped`, as RViz's "2D Goal Pose" sends) that starts a route on the
//! scenario's map-paths, as the `Go X,Y` instruction does.
//!
//! Map units are published as metres, y flipped (the map's y points down, ROS's up):
//! x = x, y = −y, yaw = −θ.
//!
//! The bridge is a swarm system ([`SwarmRos`]) that runs every frame: it publishes, takes
//! the goals that arrived, and paces the run at `speed` × real time (the ROS side lives in
//! wall time); with lockstep it instead waits, each frame, for a message on `/simrob/step`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use simrob_swarm::ecs::{EntityId, SwarmWorld};
use simrob_swarm::nav::{start_route, Goal};
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

/// The robots: entities that move (have a velocity) and are not carried items.
pub fn frame_of(world: &SwarmWorld, time: f64) -> Frame {
    let robots = world
        .pose
        .iter()
        .filter(|(e, _)| world.vel.has(*e) && !world.item.has(*e) && !world.poi.has(*e))
        .map(|(e, p)| {
            let v = world.vel.get(e).copied().unwrap_or_default();
            RobotFrame {
                name: robot_name(world, e),
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

/// The swarm system that bridges to ROS 2 (see the module docs).
pub struct SwarmRos {
    node: Node,
    bridge: Bridge,
    options: Options,
    stop: Arc<AtomicBool>,
    started: Option<(Instant, f64)>,
    steps_owed: usize,
}

impl SwarmRos {
    /// The participant; `stop` ends a lockstep wait (Ctrl-C), woken by [`SwarmRos::waker`].
    pub fn new(options: Options, stop: Arc<AtomicBool>) -> Result<SwarmRos, NodeError> {
        Ok(SwarmRos {
            node: Node::new(
                options.discovery,
                Inputs {
                    velocity: false,
                    goal: true,
                },
                options.lockstep,
            )?,
            bridge: Bridge::new(options.rates),
            options,
            stop,
            started: None,
            steps_owed: 0,
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
                match start_route(&mut ctx.world, e, &Goal::Point(x, -y)) {
                    Ok(()) => ctx.log(Some(e), format!("ROS goal ({x:.1}, {y:.1})")),
                    Err(err) => {
                        tracing::info!(target: "simrob::ros2", "goal for {}: {err}", robot_name(&ctx.world, e));
                        let (x, y) = (simrob_math::Shown(x), simrob_math::Shown(y));
                        ctx.log(Some(e), format!("ROS goal ({x:.1}, {y:.1}): {err}"));
                    }
                }
            }
        }
    }
}

impl System for SwarmRos {
    fn name(&self) -> &str {
        "ros2"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let outs = self.bridge.step(&frame_of(&ctx.world, ctx.time));
        if let Err(e) = self.node.publish(outs) {
            tracing::warn!(target: "simrob::ros2", "{e}");
        }
        if self.options.lockstep {
            // Sleeps until a sample arrives (or the stop flag's wake): the flag is raised
            // before the wake, so a wake that `receive` cleared is seen here.
            // One frame per message on /simrob/step (those that came together wait their turn).
            loop {
                self.steps_owed += self.node.receive(&mut self.bridge);
                if self.steps_owed > 0 {
                    self.steps_owed -= 1;
                    break;
                }
                if self.stop.load(Ordering::Relaxed) {
                    break;
                }
                self.node.wait(None);
            }
        } else {
            self.node.receive(&mut self.bridge);
            // Pace: the ROS side lives in wall time.
            if self.options.speed > 0.0 {
                let (t0, s0) = *self.started.get_or_insert((Instant::now(), ctx.time));
                let due =
                    t0 + Duration::from_secs_f64((ctx.time - s0).max(0.0) / self.options.speed);
                let now = Instant::now();
                if due > now && !self.stop.load(Ordering::Relaxed) {
                    std::thread::sleep(due - now);
                }
            }
        }
        self.apply(ctx);
    }
}
