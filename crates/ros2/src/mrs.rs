//! The Mobile Robot Simulator's worlds (`simrob mrs`) on ROS 2: each Nomad-200 as
//! `nomad_<id>`, its 16 sonars, scan and 20 bumpers out, `cmd_vel` in.
//!
//! The map's inches and y-down picture become ROS's metres and y-up frame: x = 0.0254·x,
//! y = −0.0254·y, yaw = −heading (the Nomad's headings and turn rates are clockwise).
//!
//! The bridge runs inside the server's loop ([`MrsRos::turn`], called once per turn of it):
//! it publishes when simulated time moved and applies the commands that arrived. With
//! lockstep, the server runs stepped and [`MrsRos::turn`] makes each step.

use simrob_flat::robot::Velocity;
use simrob_flat::world::RobotId;
use simrob_mrs::{ClientId, MrsCore};

use crate::bridge::{Bridge, Command, Frame, RangeRing, Rates, RobotFrame};
use crate::env::Discovery;
use crate::node::{Inputs, Node, NodeError};

/// Metres per inch.
pub const INCH: f64 = 0.0254;

/// A Nomad-200's velocity for a `cmd_vel` of `v` m/s and `w` rad/s (counter-clockwise):
/// inches/s and degrees/s clockwise, each held to the ±[`MAX_VEL`] the simulator's own `V`
/// message carries (2.54 m/s, 1.74 rad/s), as a robot base saturates a command beyond what
/// it can do.
///
/// [`MAX_VEL`]: simrob_mrs::protocol::MAX_VEL
pub fn nomad_velocity(v: f64, w: f64) -> Velocity {
    let max = simrob_mrs::protocol::MAX_VEL;
    Velocity::new(
        (v / INCH).clamp(-max, max),
        (-w.to_degrees()).clamp(-max, max),
    )
}

/// The client id of the robot ROS drives from the start (no TCP client has it).
pub const ROS_CLIENT: ClientId = ClientId(u64::MAX);

/// The Nomad-200's sonar cone, radians (the Polaroid 6500 transducers' ~25°).
pub const SONAR_FIELD_OF_VIEW: f64 = 0.4363;

/// The ROS name of robot `id`.
pub fn robot_name(id: RobotId) -> String {
    format!("nomad_{}", id.0)
}

/// The bridge frame of the world as `core` has it.
pub fn frame_of(core: &MrsCore) -> Frame {
    let w = core.world();
    let robots = w
        .robots()
        .map(|(id, r)| {
            let m = r.model;
            let yaw = -r.pose.heading_deg.to_radians();
            let spacing = m.sonar_spacing_deg().to_radians();
            // The motion the last step made, not the command (a robot against a wall has
            // stopped whatever it was told).
            let (moved, turned) = r.motion;
            RobotFrame {
                name: robot_name(id),
                id: u64::from(id.0),
                position: [r.pose.x * INCH, -r.pose.y * INCH, 0.0],
                rotation: [0.0, 0.0, yaw],
                linear_velocity: Some([moved.x * INCH, -moved.y * INCH, 0.0]),
                angular_velocity: Some([0.0, 0.0, -turned.to_radians()]),
                takes_cmd_vel: true,
                drive: None,
                sonars: Some(RangeRing {
                    headings: (0..m.sonar_count).map(|i| -(i as f64) * spacing).collect(),
                    radius: m.radius * INCH,
                    height: 0.0,
                    ranges: w
                        .sonars(id)
                        .unwrap_or_default()
                        .iter()
                        .map(|r| r * INCH)
                        .collect(),
                    field_of_view: SONAR_FIELD_OF_VIEW,
                    min_range: m.sonar_min * INCH,
                    max_range: m.sonar_max * INCH,
                }),
                bumpers: Some(
                    (0..m.bumper_count)
                        .map(|i| r.bumpers & (1 << i) != 0)
                        .collect(),
                ),
            }
        })
        .collect();
    Frame {
        time: w.time(),
        robots,
    }
}

/// How `simrob mrs --ros2` runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Domain and discovery range.
    pub discovery: Discovery,
    /// Publication rates.
    pub rates: Rates,
    /// Lockstep: one step when every robot has a `cmd_vel` waiting, or on `/simrob/step`.
    pub lockstep: bool,
}

/// The ROS 2 side of an MRS server.
pub struct MrsRos {
    node: Node,
    bridge: Bridge,
    options: Options,
    last_time: Option<f64>,
    robots: usize,
    shown: std::time::Instant,
    lockstep: crate::bridge::Lockstep,
}

impl MrsRos {
    /// The participant (no robot yet: [`MrsRos::turn`] adds ROS's own on its first call).
    pub fn new(options: Options) -> Result<MrsRos, NodeError> {
        Ok(MrsRos {
            node: Node::new(
                options.discovery,
                Inputs {
                    velocity: true,
                    wheels: false,
                    goal: false,
                },
                options.lockstep,
            )?,
            bridge: Bridge::new(options.rates),
            options,
            last_time: None,
            robots: usize::MAX,
            shown: std::time::Instant::now(),
            lockstep: crate::bridge::Lockstep::default(),
        })
    }

    /// The participant's event queue, for the server's loop to wait on (see
    /// [`Node::ready_source`]).
    #[cfg(unix)]
    pub fn ready_source(&self) -> crate::node::ReadySource {
        self.node.ready_source()
    }

    /// One turn of the server's loop: ROS's own robot on the first, then what is due
    /// published (when time moved or robots came or went), the commands that arrived
    /// applied, and with lockstep the step made when the ROS side answered.
    pub fn turn(&mut self, core: &mut MrsCore) {
        if self.last_time.is_none() {
            if let Err(e) = core.connect(ROS_CLIENT) {
                tracing::warn!(target: "simrob::ros2", "no robot for ROS: {e}");
            }
        }
        if !self.show(core)
            && self.options.lockstep
            && self.shown.elapsed() >= crate::simrob::REPEAT
        {
            // Paused: the state again, for controllers that join late.
            self.shown = std::time::Instant::now();
            let outs = self.bridge.repeat(&frame_of(core));
            if let Err(e) = self.node.publish(outs) {
                tracing::warn!(target: "simrob::ros2", "{e}");
            }
        }
        let mut triggers = self.node.receive(&mut self.bridge);
        loop {
            let step = self.options.lockstep
                && self.lockstep.step(
                    Some(core.world().steps()),
                    std::mem::take(&mut triggers),
                    self.bridge.all_commanded(),
                );
            if !self.options.lockstep || step {
                for c in self.bridge.take_commands() {
                    if let Command::Velocity { id, v, w } = c {
                        let Ok(id) = u32::try_from(id) else { continue };
                        core.set_velocity(RobotId(id), nomad_velocity(v, w));
                    }
                }
            }
            if !step {
                break;
            }
            core.step();
            // Each step shown before the next (one per message on /simrob/step, those that
            // came together included).
            self.show(core);
        }
    }

    /// Publishes what is due if simulated time moved or robots came or went; returns
    /// whether it did.
    fn show(&mut self, core: &MrsCore) -> bool {
        let (time, count) = (core.world().time(), core.world().robot_count());
        if self.last_time == Some(time) && self.robots == count {
            return false;
        }
        self.last_time = Some(time);
        self.robots = count;
        let outs = self.bridge.step(&frame_of(core));
        if let Err(e) = self.node.publish(outs) {
            tracing::warn!(target: "simrob::ros2", "{e}");
        }
        self.shown = std::time::Instant::now();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cmd_vel_beyond_the_v_messages_range_is_held_to_it() {
        let within = nomad_velocity(0.5, 1.0);
        assert!((within.forward - 0.5 / INCH).abs() < 1e-9);
        assert!((within.turn + 1f64.to_degrees()).abs() < 1e-9);
        let far = nomad_velocity(1e300, -1e300);
        assert_eq!((far.forward, far.turn), (99.9, 99.9));
        let back = nomad_velocity(-1e300, 1e300);
        assert_eq!((back.forward, back.turn), (-99.9, -99.9));
    }

    #[test]
    fn odometry_twist_is_the_motion_made_not_the_command() {
        let map = simrob_flat::map::Map::empty(200.0, 200.0).expect("map");
        let mut core = MrsCore::new(
            map,
            simrob_mrs::MrsConfig {
                start: Some(simrob_flat::robot::FlatPose::new(150.0, 100.0, 0.0)),
                ..Default::default()
            },
        );
        let id = core.connect(ClientId(1)).expect("a robot");
        let twist = |core: &MrsCore| {
            let f = frame_of(core);
            let r = &f.robots[0];
            (r.linear_velocity.unwrap(), r.angular_velocity.unwrap())
        };
        assert_eq!(twist(&core), ([0.0; 3], [0.0; 3]), "not moved yet");
        core.set_velocity(id, Velocity::new(20.0, 0.0));
        core.step();
        let (lin, _) = twist(&core);
        assert!((lin[0] - 20.0 * INCH).abs() < 1e-9, "{lin:?}");
        // Against the map's border (x = 200) it has stopped, whatever it is told.
        for _ in 0..500 {
            core.step();
        }
        let r = core.world().robot(id).expect("robot");
        assert!(r.blocked && r.velocity.forward == 20.0);
        assert_eq!(twist(&core).0, [0.0; 3]);
        // Turning on the spot: no translation, the turn counter-clockwise in ROS's frame.
        core.set_velocity(id, Velocity::new(0.0, 90.0));
        core.step();
        let (lin, ang) = twist(&core);
        assert_eq!(lin, [0.0; 3]);
        assert!((ang[2] + 90f64.to_radians()).abs() < 1e-9, "{ang:?}");
    }
}
