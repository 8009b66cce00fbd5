//! The SimRob server's worlds (`simrob serve`) on ROS 2: its snapshots as bridge frames, the
//! bridge's commands as SimRob requests, and the thread that runs a [`Node`] beside the
//! server's loop.
//!
//! Each robot entity is `robot_<id>`. A robot with two wheels (two `WheelCylinder` bodies,
//! wheel joints 0 and 1, as the SimRob manual's SumBot) takes `cmd_vel`: the wheels' radius
//! and separation come from its bodies; joint 0 is the wheel on its right (−y), joint 1 the
//! one on its left, and a positive joint speed turns a wheel backward (the SumBot's joint
//! axes point along +y).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use simrob_protocol::{
    ControlRequest, EntityId, EntityInfoKind, EntityRequest, MotorCommand, Request, Shape,
};
use simrob_session::{LocalCommand, Observation, Observer, Snapshot};

use crate::bridge::{Bridge, Command, DiffDrive, Frame, Rates, RobotFrame, Sent};
use crate::env::Discovery;
use crate::node::{Inputs, Node, NodeError, Wake};

/// The ROS name of entity `id`.
pub fn robot_name(id: EntityId) -> String {
    format!("robot_{}", id.0)
}

/// The bridge frame of a SimRob snapshot: every robot entity (not balls, not fields).
pub fn frame_of(s: &Snapshot) -> Frame {
    let b = &s.broadcast;
    // Each entity's bodies, in one pass.
    let mut by_entity: std::collections::HashMap<u32, Vec<&simrob_protocol::BodyState>> =
        std::collections::HashMap::new();
    for body in &b.bodies {
        by_entity.entry(body.entity_id.0).or_default().push(body);
    }
    let none = Vec::new();
    let robots = b
        .entities
        .iter()
        .filter(|e| e.kind == EntityInfoKind::Robot)
        .map(|e| {
            let bodies = by_entity.get(&e.entity_id.0).unwrap_or(&none);
            // The reference body: the one at the entity's reported pose.
            let reference = bodies
                .iter()
                .find(|x| x.position == e.position && x.rotation == e.rotation);
            let wheels: Vec<_> = bodies
                .iter()
                .filter_map(|x| match x.shape {
                    Shape::WheelCylinder { radius, .. } => Some((x.position, radius)),
                    _ => None,
                })
                .collect();
            let drive = match wheels.as_slice() {
                [(p0, r0), (p1, _)] => {
                    let dx = p1[0] - p0[0];
                    let dy = p1[1] - p0[1];
                    let dz = p1[2] - p0[2];
                    // Is wheel 0 on the robot's right? Its offset from wheel 1 along the
                    // robot's y axis (yaw only: the robot stands on the floor).
                    let (s, c) = e.rotation[2].sin_cos();
                    let along_y = -s * dx + c * dy;
                    let joints = if along_y > 0.0 { [1, 0] } else { [0, 1] };
                    Some(DiffDrive {
                        wheel_radius: *r0,
                        separation: (dx * dx + dy * dy + dz * dz).sqrt(),
                        joints,
                        sign: -1.0,
                    })
                }
                _ => None,
            };
            RobotFrame {
                name: robot_name(e.entity_id),
                id: u64::from(e.entity_id.0),
                position: e.position,
                rotation: e.rotation,
                linear_velocity: reference.map(|r| r.linear_velocity),
                angular_velocity: reference.map(|r| r.angular_velocity),
                takes_cmd_vel: drive.is_some(),
                drive,
                sonars: None,
                bumpers: None,
            }
        })
        .collect();
    Frame {
        time: s.time,
        robots,
    }
}

/// The SimRob request of a bridge command (none for commands a SimRob world has no request
/// for: goals, bare velocities).
pub fn request_of(c: &Command) -> Option<Request> {
    match c {
        Command::Wheels { id, speeds, .. } => Some(Request::Entity {
            request: EntityRequest::RobotMotorControl {
                entity_id: EntityId(u32::try_from(*id).ok()?),
                motors: speeds
                    .iter()
                    .map(|(j, v)| MotorCommand {
                        wheel_joint_id: *j,
                        value: *v,
                    })
                    .collect(),
            },
            response: Some(false),
        }),
        Command::Velocity { .. } | Command::Goal { .. } => None,
    }
}

/// How `simrob serve --ros2` runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Domain and discovery range.
    pub discovery: Discovery,
    /// Publication rates.
    pub rates: Rates,
    /// Lockstep: the world advances one iteration when every robot that takes `cmd_vel` has
    /// sent one since the last, or on a message on `/simrob/step`.
    pub lockstep: bool,
    /// The server's `maxvelocity`: wheel speeds past it are refused (see [`Refusals`]).
    pub max_velocity: f64,
}

/// Wheel commands past the server's `maxvelocity` are refused, as the server refuses them
/// from any agent, with a warning naming the robot: once, then not again for that robot
/// until one of its commands is accepted (a stream of bad commands logs one line).
#[derive(Clone, Debug)]
pub struct Refusals {
    max_velocity: f64,
    refusing: std::collections::BTreeSet<u64>,
}

impl Refusals {
    /// Refusing wheel speeds past `max_velocity` (rad/s).
    pub fn new(max_velocity: f64) -> Refusals {
        Refusals {
            max_velocity,
            refusing: std::collections::BTreeSet::new(),
        }
    }

    /// Whether `c` goes to the server; when not, the warning to log (None: already said for
    /// this robot).
    pub fn admit(&mut self, c: &Command) -> Result<(), Option<String>> {
        let Command::Wheels { id, speeds, from } = c else {
            return Ok(());
        };
        let past = speeds
            .iter()
            .map(|(_, v)| *v)
            .find(|v| !(v.is_finite() && v.abs() <= self.max_velocity));
        let Some(_) = past else {
            self.refusing.remove(id);
            return Ok(());
        };
        if !self.refusing.insert(*id) {
            return Err(None);
        }
        let name = u32::try_from(*id).map_or_else(|_| id.to_string(), |i| robot_name(EntityId(i)));
        let asks = match from {
            Sent::Wheels(_) => String::new(),
            Sent::CmdVel { .. } => {
                let most = speeds.iter().map(|(_, v)| v.abs()).fold(0.0, f64::max);
                format!(" asks a wheel speed of {} rad/s,", simrob_math::Shown(most))
            }
        };
        Err(Some(format!(
            "{name}: {from}{asks} past the largest wheel speed, {} rad/s (configuration key \
             maxvelocity): refused, the robot keeps its last command (further refusals for it \
             are not logged until a command is accepted)",
            simrob_math::Shown(self.max_velocity)
        )))
    }
}

/// The ROS 2 side of a running server: stops its thread when dropped.
pub struct Attached {
    stop: Arc<AtomicBool>,
    wake: Wake,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Attached {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.wake.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts the ROS 2 participant for a server whose local commands go to `commands`. Returns
/// the observer to add to the server (sampled, with the flag returned), and the handle.
pub fn attach(
    options: Options,
    commands: Sender<LocalCommand>,
) -> Result<(Observer, Arc<AtomicBool>, Attached), NodeError> {
    let node = Node::new(
        options.discovery,
        Inputs {
            velocity: true,
            wheels: true,
            goal: false,
        },
        options.lockstep,
    )?;
    // The frames: the observer hands the latest snapshot over, never blocking the loop,
    // and wakes the thread (which otherwise sleeps until a DDS sample arrives).
    let (tx, rx) = sync_channel::<Arc<Snapshot>>(4);
    let wants = Arc::new(AtomicBool::new(true));
    let wake = node.waker();
    let observer: Observer = Box::new(move |o: &Observation| {
        if let Observation::Iterated(s) | Observation::Changed(s) = o {
            if tx.try_send(s.clone()).is_ok() {
                wake.wake();
            }
        }
    });
    if options.lockstep {
        let _ = commands.send(LocalCommand::Request(Request::Control {
            request: ControlRequest::SetStepMode(true),
            response: Some(false),
        }));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let stop_wake = node.waker();
    let thread = {
        let (stop, wants) = (stop.clone(), wants.clone());
        std::thread::Builder::new()
            .name("ros2".into())
            .spawn(move || run(node, options, rx, commands, &stop, &wants))
            .map_err(|e| NodeError::Dds {
                context: "thread".into(),
                message: e.to_string(),
            })?
    };
    Ok((
        observer,
        wants,
        Attached {
            stop,
            wake: stop_wake,
            thread: Some(thread),
        },
    ))
}

/// The simulated time of a snapshot on the world's grid: the world adds its time step up
/// (floating point), so after many iterations its sum drifts by nanoseconds; this counts
/// iterations from the last change of the step instead.
#[derive(Debug, Default)]
pub struct Grid {
    /// The iteration, its time, and the seconds per iteration since then.
    anchor: Option<(u64, f64, f64)>,
}

impl Grid {
    /// The time of `s`: its iteration's place on the grid (anchored anew when the seconds
    /// per iteration change, or the world's own time is more than half an iteration away).
    pub fn time(&mut self, s: &Snapshot) -> f64 {
        let per = s.modes.timestep * f64::from(s.modes.steps_per_iteration);
        self.at(s.iteration, s.time, per)
    }

    /// The time of iteration `iteration`, which the world says is `time`, `per` seconds an
    /// iteration.
    pub fn at(&mut self, iteration: u64, time: f64, per: f64) -> f64 {
        if let Some((i0, t0, p0)) = self.anchor {
            if p0 == per && iteration >= i0 {
                let t = t0 + (iteration - i0) as f64 * per;
                if (t - time).abs() <= per / 2.0 {
                    return t;
                }
            }
        }
        self.anchor = Some((iteration, time, per));
        time
    }
}

/// How often a world paused in lockstep repeats its state (wall time), for controllers that
/// join late.
pub const REPEAT: Duration = Duration::from_millis(250);

fn run(
    mut node: Node,
    options: Options,
    frames: Receiver<Arc<Snapshot>>,
    commands: Sender<LocalCommand>,
    stop: &AtomicBool,
    wants: &AtomicBool,
) {
    let mut bridge = Bridge::new(options.rates);
    let mut refusals = Refusals::new(options.max_velocity);
    // Lockstep: the steps owed and the iteration last stepped from.
    let mut lockstep = crate::bridge::Lockstep::default();
    let mut current: Option<u64> = None;
    let mut shown: Option<(Frame, Instant)> = None;
    let mut grid = Grid::default();
    let mut kinds = Vec::new();
    // A frame seen while deciding whether to sleep.
    let mut carried: Option<Arc<Snapshot>> = None;
    while !stop.load(Ordering::Relaxed) {
        let mut latest = carried.take();
        loop {
            match frames.try_recv() {
                Ok(s) => latest = Some(s),
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => return,
            }
        }
        if let Some(s) = latest {
            current = Some(s.iteration);
            let time = grid.time(&s);
            // Most iterations carry only /clock: the frame (every robot) is built when
            // odometry or sensors are due, the robots changed, or in lockstep.
            if options.lockstep || s.kinds != kinds || bridge.needs_frame(time) {
                kinds.clone_from(&s.kinds);
                let frame = Frame {
                    time,
                    ..frame_of(&s)
                };
                if let Err(e) = node.publish(bridge.step(&frame)) {
                    tracing::warn!(target: "simrob::ros2", "{e}");
                }
                shown = Some((frame, Instant::now()));
            } else if let Err(e) = node.publish(bridge.clock_only(time)) {
                tracing::warn!(target: "simrob::ros2", "{e}");
            }
            wants.store(true, Ordering::Relaxed);
        } else if let (true, Some((frame, at))) = (options.lockstep, shown.as_mut()) {
            if at.elapsed() >= REPEAT {
                *at = Instant::now();
                if let Err(e) = node.publish(bridge.repeat(frame)) {
                    tracing::warn!(target: "simrob::ros2", "{e}");
                }
            }
        }
        let triggers = node.receive(&mut bridge);
        if options.lockstep {
            if lockstep.step(current, triggers, bridge.all_commanded()) {
                send(&commands, &mut refusals, bridge.take_commands());
                let _ = commands.send(LocalCommand::Request(Request::Control {
                    request: ControlRequest::MakeStep,
                    response: Some(false),
                }));
            }
        } else {
            send(&commands, &mut refusals, bridge.take_commands());
        }
        // Sleep until a frame, a sample or a stop wakes the thread (`receive` cleared the
        // readiness, so look at the frames once more: one handed over since then may have
        // had its wake cleared); a paused lockstep world wakes to repeat its state.
        match frames.try_recv() {
            Ok(s) => carried = Some(s),
            Err(TryRecvError::Disconnected) => return,
            Err(TryRecvError::Empty) => {
                let timeout = match (&shown, options.lockstep) {
                    (Some((_, at)), true) => Some(REPEAT.saturating_sub(at.elapsed())),
                    _ => None,
                };
                if !stop.load(Ordering::Relaxed) {
                    node.wait(timeout);
                }
            }
        }
    }
}

fn send(commands: &Sender<LocalCommand>, refusals: &mut Refusals, cs: Vec<Command>) {
    for c in cs {
        match refusals.admit(&c) {
            Ok(()) => {}
            Err(Some(warning)) => {
                tracing::warn!(target: "simrob::ros2", "{warning}");
                continue;
            }
            Err(None) => continue,
        }
        if let Some(r) = request_of(&c) {
            let _ = commands.send(LocalCommand::Request(r));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stamps are the simulated time on its grid: 10 ms iterations summed up to ~999 s
    /// (as the world sums them) are stamped on the 10 ms grid, not a few ns off it.
    #[test]
    fn stamps_are_on_the_iteration_grid() {
        use crate::msg::Time;
        let mut grid = Grid::default();
        let mut summed = 0.0;
        let mut off = 0;
        for i in 0..100_000u64 {
            let t = Time::from_secs(grid.at(i, summed, 0.01));
            if !t.nanosec.is_multiple_of(10_000_000) {
                off += 1;
            }
            summed += 0.01;
        }
        assert_eq!(off, 0);
        assert_eq!(
            Time::from_secs(grid.at(99_914, 999.139_999_999_9, 0.01)),
            Time {
                sec: 999,
                nanosec: 140_000_000
            }
        );
        // A new step: anchored there.
        assert_eq!(grid.at(100_000, 1000.0, 0.002), 1000.0);
        assert_eq!(grid.at(100_500, 1_001.000_000_01, 0.002), 1001.0);
    }

    #[test]
    fn wheel_speeds_past_maxvelocity_are_refused_with_one_warning_per_streak() {
        let mut r = Refusals::new(100.0);
        // A drive whose positive joint speed drives backwards: the joints' speeds have the
        // other sign from what was sent.
        let wheels = |id, v: f64| Command::Wheels {
            id,
            speeds: vec![(0, -1.0), (1, -v)],
            from: Sent::Wheels(vec![1.0, v]),
        };
        assert_eq!(r.admit(&wheels(3, 100.0)), Ok(()));
        let warning = r.admit(&wheels(3, 250.0)).unwrap_err().expect("a warning");
        assert!(
            warning.starts_with(
                "robot_3: wheel_commands [1, 250] rad/s past the largest wheel speed, 100 rad/s"
            ) && warning.contains("maxvelocity")
                && warning.contains("keeps its last command"),
            "{warning}"
        );
        // From cmd_vel: what was sent, in its units and sign, then the wheel speed it asks.
        let twist = Command::Wheels {
            id: 5,
            speeds: vec![(0, -4.0e31), (1, -4.0e31)],
            from: Sent::CmdVel {
                linear: 1e30,
                angular: 0.0,
            },
        };
        let warning = r.admit(&twist).unwrap_err().expect("a warning");
        assert!(
            warning.starts_with(
                "robot_5: cmd_vel (linear.x 1e30 m/s, angular.z 0 rad/s) asks a wheel speed of \
                 4e31 rad/s, past the largest wheel speed, 100 rad/s"
            ),
            "{warning}"
        );
        // The same robot again: refused, not said again; another robot: said.
        assert_eq!(r.admit(&wheels(3, -1e6)), Err(None));
        assert!(r.admit(&wheels(4, f64::INFINITY)).unwrap_err().is_some());
        // Once one of its commands is accepted, the next refusal is said again.
        assert_eq!(r.admit(&wheels(3, 5.0)), Ok(()));
        assert!(r.admit(&wheels(3, 1e6)).unwrap_err().is_some());
        // Goals and bare velocities are not the server's wheels.
        assert_eq!(
            r.admit(&Command::Velocity {
                id: 3,
                v: 1e9,
                w: 0.0
            }),
            Ok(())
        );
    }
}
