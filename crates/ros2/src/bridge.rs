//! The bridge's logic, sans IO: world frames in, ROS 2 messages out; ROS 2 commands in,
//! world commands out. No sockets, threads or clocks: time is the frames' simulated time, so
//! the same frames and commands give the same messages.
//!
//! Work per step is bounded: of the velocity or wheel commands that arrive for a robot
//! between two steps only the latest is kept, so a flood on `cmd_vel` costs one command per
//! robot per step.

use std::collections::BTreeMap;

use crate::msg::{
    Clock, Header, LaserScan, Odometry, Pose, PoseStamped, PoseWithCovariance, Quaternion, Range,
    TFMessage, Time, Transform, TransformStamped, Twist, TwistWithCovariance, Vector3,
};

/// The world frame's name in `/tf`.
pub const WORLD_FRAME: &str = "world";

/// Publication rates, in simulated time (Hz; 0 = every frame the bridge is given).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    /// `/clock`.
    pub clock: f64,
    /// Each robot's `odom` and its `/tf` transforms.
    pub odom: f64,
    /// Sensors (sonars, scans, bumpers).
    pub sensors: f64,
}

impl Default for Rates {
    fn default() -> Self {
        Rates {
            clock: 0.0,
            odom: 50.0,
            sensors: 10.0,
        }
    }
}

/// A two-wheeled robot's drive: what turns `cmd_vel` into wheel speeds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiffDrive {
    /// Wheel radius, metres.
    pub wheel_radius: f64,
    /// Distance between the wheels' centres, metres.
    pub separation: f64,
    /// The wheel joint on the robot's left (+y), and the one on its right.
    pub joints: [u32; 2],
    /// +1 if a positive joint speed drives the robot forward, −1 if backward.
    pub sign: f64,
}

impl DiffDrive {
    /// Joint speeds (rad/s, for `joints` in order) for a forward speed `v` (m/s) and a turn
    /// rate `w` (rad/s, counter-clockwise).
    pub fn wheel_speeds(&self, v: f64, w: f64) -> [f64; 2] {
        let half = self.separation / 2.0;
        [
            self.sign * (v - w * half) / self.wheel_radius,
            self.sign * (v + w * half) / self.wheel_radius,
        ]
    }
}

/// A ring of range sensors (the Nomad-200's sonars): their readings and where they point.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeRing {
    /// Each sensor's heading in the robot's frame, radians, counter-clockwise from ahead.
    pub headings: Vec<f64>,
    /// The ring's radius, metres (where the sensors sit).
    pub radius: f64,
    /// Height of the ring above the robot's origin, metres.
    pub height: f64,
    /// Each sensor's reading, metres.
    pub ranges: Vec<f64>,
    /// Cone angle, radians.
    pub field_of_view: f64,
    /// Metres.
    pub min_range: f64,
    /// Metres.
    pub max_range: f64,
}

/// One robot as the world shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct RobotFrame {
    /// Its ROS name (the namespace of its topics and the prefix of its frames).
    pub name: String,
    /// The world's id for it (what commands address).
    pub id: u64,
    /// Position in the world frame, metres.
    pub position: [f64; 3],
    /// Roll, pitch, yaw (extrinsic X-Y-Z), radians.
    pub rotation: [f64; 3],
    /// Linear velocity in the world frame, m/s (None: the bridge differentiates poses).
    pub linear_velocity: Option<[f64; 3]>,
    /// Angular velocity in the world frame, rad/s (None: the bridge differentiates yaw).
    pub angular_velocity: Option<[f64; 3]>,
    /// Whether it takes `cmd_vel` (as wheel speeds through `drive`, or as
    /// [`Command::Velocity`] without one).
    pub takes_cmd_vel: bool,
    /// Its drive, when `cmd_vel` is turned into wheel speeds.
    pub drive: Option<DiffDrive>,
    /// Range sensors, when it has a ring of them.
    pub sonars: Option<RangeRing>,
    /// Bumper states, when it has bumpers.
    pub bumpers: Option<Vec<bool>>,
}

/// The world at one moment.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frame {
    /// Simulated seconds.
    pub time: f64,
    /// Its robots, each once.
    pub robots: Vec<RobotFrame>,
}

/// Why a goal was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GoalRefused {
    /// Its `header.frame_id` is neither the world frame nor empty.
    #[error("in frame {0:?}, not {WORLD_FRAME:?} (or empty): simrob does not transform goals")]
    Frame(String),
    /// Its x or y is not a finite number.
    #[error("not a finite position")]
    NotFinite,
    /// No robot of that name.
    #[error("no such robot")]
    NoRobot,
}

/// The ROS message a [`Command::Wheels`] came from, as its sender wrote it.
#[derive(Clone, Debug, PartialEq)]
pub enum Sent {
    /// `cmd_vel`: `linear.x` m/s, `angular.z` rad/s.
    CmdVel {
        /// m/s.
        linear: f64,
        /// rad/s.
        angular: f64,
    },
    /// `wheel_commands`: `[left, right]` rad/s, forward positive.
    Wheels(Vec<f64>),
}

impl std::fmt::Display for Sent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use simrob_math::Shown;
        match self {
            Sent::CmdVel { linear, angular } => write!(
                f,
                "cmd_vel (linear.x {} m/s, angular.z {} rad/s)",
                Shown(*linear),
                Shown(*angular)
            ),
            Sent::Wheels(w) => {
                let w: Vec<String> = w.iter().map(|v| Shown(*v).to_string()).collect();
                write!(f, "wheel_commands [{}] rad/s", w.join(", "))
            }
        }
    }
}

/// What the bridge asks the ROS side to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Out {
    /// A robot appeared: open its topics.
    Appeared {
        /// Its name.
        robot: String,
        /// Whether it takes `cmd_vel`.
        drive: bool,
        /// Its number of range sensors (0: none).
        sonars: usize,
        /// Whether it has bumpers.
        bumpers: bool,
    },
    /// A robot is gone: close its topics.
    Gone {
        /// Its name.
        robot: String,
    },
    /// Publish on `/clock`.
    Clock(Clock),
    /// Publish on `/tf`.
    Tf(TFMessage),
    /// Publish on `/tf_static` (the world → odom frames).
    TfStatic(TFMessage),
    /// Publish on `<robot>/odom`.
    Odom {
        /// The robot.
        robot: String,
        /// The message (boxed: it is the largest).
        msg: Box<Odometry>,
    },
    /// Publish on `<robot>/sonar/<index>` and (all of them) `<robot>/scan`.
    Sonars {
        /// The robot.
        robot: String,
        /// One `Range` per sensor.
        ranges: Vec<Range>,
        /// The same readings as one scan.
        scan: LaserScan,
    },
    /// Publish on `<robot>/bumpers`.
    Bumpers {
        /// The robot.
        robot: String,
        /// One per bumper.
        pressed: Vec<bool>,
    },
}

/// A command for the world.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Set these wheel joints to these speeds (rad/s).
    Wheels {
        /// The robot's id.
        id: u64,
        /// `(joint id, rad/s)`.
        speeds: Vec<(u32, f64)>,
        /// What the ROS side sent, for messages about it.
        from: Sent,
    },
    /// Drive at this forward speed and turn rate (for worlds that take velocities).
    Velocity {
        /// The robot's id.
        id: u64,
        /// m/s.
        v: f64,
        /// rad/s.
        w: f64,
    },
    /// Go to this point (world frame).
    Goal {
        /// The robot's id.
        id: u64,
        /// x, metres.
        x: f64,
        /// y, metres.
        y: f64,
    },
}

#[derive(Clone, Debug)]
struct Known {
    id: u64,
    takes_cmd_vel: bool,
    drive: Option<DiffDrive>,
    last_pose: Option<(f64, [f64; 3], f64)>,
}

#[derive(Clone, Debug)]
enum Pending {
    Twist(Twist),
    Wheels(Vec<f64>),
}

/// The bridge: see the module docs.
#[derive(Debug)]
pub struct Bridge {
    rates: Rates,
    robots: BTreeMap<String, Known>,
    pending: BTreeMap<String, Pending>,
    pending_goals: BTreeMap<String, PoseStamped>,
    next_clock: f64,
    next_odom: f64,
    next_sensors: f64,
    dropped: u64,
}

/// Whether a publication at `rate` whose next one is at `next` is due at `t`: its time has
/// come, or the world jumped back past the last one (a reset, a load).
fn is_due(t: f64, next: f64, rate: f64) -> bool {
    rate <= 0.0 || t + 1e-9 >= next || t + 1e-9 < next - 1.0 / rate
}

/// Whether `t` is due against `next` at `rate` ([`is_due`]); moves `next` on.
fn due(t: f64, next: &mut f64, rate: f64) -> bool {
    if !is_due(t, *next, rate) {
        return false;
    }
    if rate > 0.0 {
        let period = 1.0 / rate;
        // The next one a period on, or from now if the world jumped (forward past a whole
        // period, or back: a reset, a load).
        *next = if (t - *next).abs() > period {
            t + period
        } else {
            *next + period
        };
    }
    true
}

impl Bridge {
    /// A bridge publishing at `rates`.
    pub fn new(rates: Rates) -> Bridge {
        Bridge {
            rates,
            robots: BTreeMap::new(),
            pending: BTreeMap::new(),
            pending_goals: BTreeMap::new(),
            next_clock: 0.0,
            next_odom: 0.0,
            next_sensors: 0.0,
            dropped: 0,
        }
    }

    /// The robots known now, by name.
    pub fn robots(&self) -> impl Iterator<Item = &str> {
        self.robots.keys().map(String::as_str)
    }

    /// Commands replaced by a newer one before they were applied (a flood).
    pub fn superseded(&self) -> u64 {
        self.dropped
    }

    /// A `cmd_vel` for `robot` arrived. Returns false (and keeps nothing) if no such robot
    /// takes velocities.
    pub fn cmd_vel(&mut self, robot: &str, twist: Twist) -> bool {
        self.accept(robot, Pending::Twist(twist))
    }

    /// Raw wheel speeds (rad/s, one per wheel joint of the drive: left, right) for `robot`.
    pub fn wheel_speeds(&mut self, robot: &str, speeds: Vec<f64>) -> bool {
        self.accept(robot, Pending::Wheels(speeds))
    }

    /// A goal for `robot` (its pose's x, y in the world frame).
    ///
    /// The goal is in the world frame: `header.frame_id` [`WORLD_FRAME`], or empty (taken as
    /// the world frame); a goal in another frame is refused (simrob does not transform it).
    pub fn goal(&mut self, robot: &str, goal: PoseStamped) -> Result<(), GoalRefused> {
        let frame = goal.header.frame_id.as_str();
        if !(frame.is_empty() || frame == WORLD_FRAME) {
            return Err(GoalRefused::Frame(frame.to_owned()));
        }
        if !goal.pose.position.x.is_finite() || !goal.pose.position.y.is_finite() {
            return Err(GoalRefused::NotFinite);
        }
        if !self.robots.contains_key(robot) {
            return Err(GoalRefused::NoRobot);
        }
        if self.pending_goals.insert(robot.to_owned(), goal).is_some() {
            self.dropped += 1;
        }
        Ok(())
    }

    fn accept(&mut self, robot: &str, p: Pending) -> bool {
        let finite = match &p {
            Pending::Twist(t) => [t.linear.x, t.angular.z].iter().all(|v| v.is_finite()),
            Pending::Wheels(w) => w.iter().all(|v| v.is_finite()),
        };
        // Wheel speeds need a wheel drive to turn them into joint speeds.
        let taken = self.robots.get(robot).is_some_and(|k| {
            k.takes_cmd_vel && (k.drive.is_some() || matches!(p, Pending::Twist(_)))
        });
        if !finite || !taken {
            return false;
        }
        if self.pending.insert(robot.to_owned(), p).is_some() {
            self.dropped += 1;
        }
        true
    }

    /// Whether some robot takes `cmd_vel` and every such robot has a command waiting
    /// (lockstep's signal that the controllers have answered this step).
    pub fn all_commanded(&self) -> bool {
        let mut driven = self
            .robots
            .iter()
            .filter(|(_, k)| k.takes_cmd_vel)
            .peekable();
        driven.peek().is_some() && driven.all(|(n, _)| self.pending.contains_key(n))
    }

    /// The commands waiting (the latest per robot and kind), for the world to apply before
    /// its next step. A robot without a drive turns `cmd_vel` into [`Command::Velocity`].
    pub fn take_commands(&mut self) -> Vec<Command> {
        let mut out = Vec::new();
        for (name, p) in std::mem::take(&mut self.pending) {
            let Some(k) = self.robots.get(&name) else {
                continue;
            };
            match (p, k.drive) {
                (Pending::Twist(t), Some(d)) => {
                    let s = d.wheel_speeds(t.linear.x, t.angular.z);
                    out.push(Command::Wheels {
                        id: k.id,
                        speeds: vec![(d.joints[0], s[0]), (d.joints[1], s[1])],
                        from: Sent::CmdVel {
                            linear: t.linear.x,
                            angular: t.angular.z,
                        },
                    });
                }
                (Pending::Twist(t), None) => out.push(Command::Velocity {
                    id: k.id,
                    v: t.linear.x,
                    w: t.angular.z,
                }),
                (Pending::Wheels(w), Some(d)) => out.push(Command::Wheels {
                    id: k.id,
                    speeds: d
                        .joints
                        .iter()
                        .zip(w.iter().map(|s| d.sign * s))
                        .map(|(j, s)| (*j, s))
                        .collect(),
                    from: Sent::Wheels(w),
                }),
                (Pending::Wheels(_), None) => {}
            }
        }
        for (name, g) in std::mem::take(&mut self.pending_goals) {
            if let Some(k) = self.robots.get(&name) {
                out.push(Command::Goal {
                    id: k.id,
                    x: g.pose.position.x,
                    y: g.pose.position.y,
                });
            }
        }
        out
    }

    /// The world at `frame`: the messages due (robots appearing or gone first).
    pub fn step(&mut self, frame: &Frame) -> Vec<Out> {
        let mut out = Vec::new();
        let t = frame.time;
        // Robots gone, then robots new.
        let gone: Vec<String> = self
            .robots
            .keys()
            .filter(|n| !frame.robots.iter().any(|r| &r.name == *n))
            .cloned()
            .collect();
        // /tf_static is one latched message holding every robot: published again when the
        // robots change, either way.
        let mut changed = !gone.is_empty();
        for robot in gone {
            self.robots.remove(&robot);
            self.pending.remove(&robot);
            self.pending_goals.remove(&robot);
            out.push(Out::Gone { robot });
        }
        for r in &frame.robots {
            if !self.robots.contains_key(&r.name) {
                changed = true;
                out.push(Out::Appeared {
                    robot: r.name.clone(),
                    drive: r.takes_cmd_vel,
                    sonars: r.sonars.as_ref().map_or(0, |s| s.headings.len()),
                    bumpers: r.bumpers.is_some(),
                });
            }
            let k = self.robots.entry(r.name.clone()).or_insert(Known {
                id: r.id,
                takes_cmd_vel: r.takes_cmd_vel,
                drive: r.drive,
                last_pose: None,
            });
            k.id = r.id;
            k.takes_cmd_vel = r.takes_cmd_vel;
            k.drive = r.drive;
        }
        let stamp = Time::from_secs(t);
        if changed {
            out.push(Out::TfStatic(static_transforms(frame, stamp)));
        }
        let clock = due(t, &mut self.next_clock, self.rates.clock);
        let odom = due(t, &mut self.next_odom, self.rates.odom);
        let sensors = due(t, &mut self.next_sensors, self.rates.sensors);
        self.emit(frame, [clock, odom, sensors], &mut out);
        out
    }

    /// Whether a frame at simulated time `t` would publish more than `/clock` (odometry or
    /// sensors due): when not, and the robots are the same, [`Bridge::clock_only`] does
    /// without the frame.
    pub fn needs_frame(&self, t: f64) -> bool {
        self.robots.is_empty()
            || is_due(t, self.next_odom, self.rates.odom)
            || is_due(t, self.next_sensors, self.rates.sensors)
    }

    /// `/clock` at simulated time `t` if it is due (the rest is not: see
    /// [`Bridge::needs_frame`]).
    pub fn clock_only(&mut self, t: f64) -> Vec<Out> {
        if due(t, &mut self.next_clock, self.rates.clock) {
            vec![Out::Clock(Clock {
                clock: Time::from_secs(t),
            })]
        } else {
            Vec::new()
        }
    }

    /// The world at `frame` again, every message whatever the rates (a paused world, in
    /// lockstep, repeats its state for controllers that join late). The robots must be
    /// known: call [`Bridge::step`] with the frame first.
    pub fn repeat(&mut self, frame: &Frame) -> Vec<Out> {
        let mut out = Vec::new();
        self.emit(frame, [true, true, true], &mut out);
        out
    }

    fn emit(&mut self, frame: &Frame, [clock, odom, sensors]: [bool; 3], out: &mut Vec<Out>) {
        let t = frame.time;
        let stamp = Time::from_secs(t);
        if clock {
            out.push(Out::Clock(Clock { clock: stamp }));
        }
        if odom {
            let mut tf = TFMessage::default();
            for r in &frame.robots {
                let odom = self.odometry(r, t, stamp);
                tf.transforms.push(TransformStamped {
                    header: odom.header.clone(),
                    child_frame_id: odom.child_frame_id.clone(),
                    transform: Transform {
                        translation: odom.pose.pose.position,
                        rotation: odom.pose.pose.orientation,
                    },
                });
                out.push(Out::Odom {
                    robot: r.name.clone(),
                    msg: Box::new(odom),
                });
            }
            if !tf.transforms.is_empty() {
                out.push(Out::Tf(tf));
            }
        }
        if sensors {
            for r in &frame.robots {
                if let Some(ring) = &r.sonars {
                    out.push(sonar_messages(&r.name, ring, stamp, self.rates.sensors));
                }
                if let Some(b) = &r.bumpers {
                    out.push(Out::Bumpers {
                        robot: r.name.clone(),
                        pressed: b.clone(),
                    });
                }
            }
        }
    }

    fn odometry(&mut self, r: &RobotFrame, t: f64, stamp: Time) -> Odometry {
        let [roll, pitch, yaw] = r.rotation;
        let q = Quaternion::from_rpy(roll, pitch, yaw);
        let rot = rotation_matrix(roll, pitch, yaw);
        let prev = self
            .robots
            .get_mut(&r.name)
            .and_then(|k| k.last_pose.replace((t, r.position, yaw)));
        let diff = |prev: Option<(f64, [f64; 3], f64)>| -> ([f64; 3], [f64; 3]) {
            match prev {
                Some((t0, p0, y0)) if t > t0 => {
                    let dt = t - t0;
                    let dyaw = (yaw - y0 + std::f64::consts::PI)
                        .rem_euclid(2.0 * std::f64::consts::PI)
                        - std::f64::consts::PI;
                    (
                        [
                            (r.position[0] - p0[0]) / dt,
                            (r.position[1] - p0[1]) / dt,
                            (r.position[2] - p0[2]) / dt,
                        ],
                        [0.0, 0.0, dyaw / dt],
                    )
                }
                _ => ([0.0; 3], [0.0; 3]),
            }
        };
        let (lin, ang) = match (r.linear_velocity, r.angular_velocity) {
            (Some(l), Some(a)) => (l, a),
            (l, a) => {
                let (dl, da) = diff(prev);
                (l.unwrap_or(dl), a.unwrap_or(da))
            }
        };
        // Velocities in the robot's frame: Rᵀ·v.
        let body = |v: [f64; 3]| Vector3 {
            x: rot[0][0] * v[0] + rot[1][0] * v[1] + rot[2][0] * v[2],
            y: rot[0][1] * v[0] + rot[1][1] * v[1] + rot[2][1] * v[2],
            z: rot[0][2] * v[0] + rot[1][2] * v[1] + rot[2][2] * v[2],
        };
        Odometry {
            header: Header {
                stamp,
                frame_id: format!("{}/odom", r.name),
            },
            child_frame_id: format!("{}/base_link", r.name),
            pose: PoseWithCovariance {
                pose: Pose {
                    position: Vector3 {
                        x: r.position[0],
                        y: r.position[1],
                        z: r.position[2],
                    },
                    orientation: q,
                },
                covariance: Default::default(),
            },
            twist: TwistWithCovariance {
                twist: Twist {
                    linear: body(lin),
                    angular: body(ang),
                },
                covariance: Default::default(),
            },
        }
    }
}

/// Every robot's fixed frames (keep-last-1 on `/tf_static`: always the whole set):
/// `world → <robot>/odom` (the odometry is the world's truth, so the frames coincide) and
/// `<robot>/base_link → <robot>/sonar_<i>`.
fn static_transforms(frame: &Frame, stamp: Time) -> TFMessage {
    let mut transforms = Vec::new();
    let header = |frame_id: String| Header { stamp, frame_id };
    for r in &frame.robots {
        transforms.push(TransformStamped {
            header: header(WORLD_FRAME.to_owned()),
            child_frame_id: format!("{}/odom", r.name),
            transform: Transform::default(),
        });
        if let Some(ring) = &r.sonars {
            for (i, h) in ring.headings.iter().enumerate() {
                transforms.push(TransformStamped {
                    header: header(format!("{}/base_link", r.name)),
                    child_frame_id: format!("{}/sonar_{i}", r.name),
                    transform: Transform {
                        translation: Vector3 {
                            x: ring.radius * h.cos(),
                            y: ring.radius * h.sin(),
                            z: ring.height,
                        },
                        rotation: Quaternion::from_yaw(*h),
                    },
                });
            }
        }
    }
    TFMessage { transforms }
}

/// R = Rz(yaw)·Ry(pitch)·Rx(roll), rows.
fn rotation_matrix(roll: f64, pitch: f64, yaw: f64) -> [[f64; 3]; 3] {
    let (sr, cr) = roll.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    let (sy, cy) = yaw.sin_cos();
    [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
}

fn sonar_messages(robot: &str, ring: &RangeRing, stamp: Time, rate: f64) -> Out {
    let ranges: Vec<Range> = ring
        .ranges
        .iter()
        .enumerate()
        .map(|(i, r)| Range {
            header: Header {
                stamp,
                frame_id: format!("{robot}/sonar_{i}"),
            },
            radiation_type: Range::ULTRASOUND,
            field_of_view: ring.field_of_view as f32,
            min_range: ring.min_range as f32,
            max_range: ring.max_range as f32,
            range: *r as f32,
        })
        .collect();
    // The scan's rays counter-clockwise from the smallest heading in [0, 2π), measured from
    // the robot's centre (a sonar reads from the rim).
    let n = ring.headings.len().max(1);
    let mut rays: Vec<(f64, f64)> = ring
        .headings
        .iter()
        .zip(&ring.ranges)
        .map(|(h, r)| (h.rem_euclid(std::f64::consts::TAU), r + ring.radius))
        .collect();
    rays.sort_by(|a, b| a.0.total_cmp(&b.0));
    let first = rays.first().map_or(0.0, |r| r.0);
    let step = std::f64::consts::TAU / n as f64;
    let scan = LaserScan {
        header: Header {
            stamp,
            frame_id: format!("{robot}/base_link"),
        },
        angle_min: first as f32,
        angle_max: (first + step * (n as f64 - 1.0)) as f32,
        angle_increment: step as f32,
        time_increment: 0.0,
        scan_time: if rate > 0.0 { (1.0 / rate) as f32 } else { 0.0 },
        range_min: (ring.min_range + ring.radius) as f32,
        range_max: (ring.max_range + ring.radius) as f32,
        ranges: rays.iter().map(|r| r.1 as f32).collect(),
        intensities: Vec::new(),
    };
    Out::Sonars {
        robot: robot.to_owned(),
        ranges,
        scan,
    }
}

/// Lockstep's bookkeeping, sans IO: one step per message on `/simrob/step` (messages that
/// arrive together, or while a step is under way, wait their turn), or one when every driven
/// robot has a command waiting ([`Bridge::all_commanded`]); never a second step before the
/// world has shown the one made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lockstep {
    owed: usize,
    stepped_from: Option<u64>,
}

impl Lockstep {
    /// `triggers` step messages arrived; the world shows iteration `shown` (None: nothing
    /// yet); `all_commanded` as [`Bridge::all_commanded`]. Returns whether to step now.
    pub fn step(&mut self, shown: Option<u64>, triggers: usize, all_commanded: bool) -> bool {
        self.owed = self.owed.saturating_add(triggers);
        let Some(it) = shown else { return false };
        if self.stepped_from == Some(it) || (self.owed == 0 && !all_commanded) {
            return false;
        }
        self.owed = self.owed.saturating_sub(1);
        self.stepped_from = Some(it);
        true
    }

    /// Step messages received and not yet stepped for.
    pub fn owed(&self) -> usize {
        self.owed
    }
}
