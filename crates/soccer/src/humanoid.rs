//! The humanoid's body and its timed actions: a sans-IO state machine advanced in fixed time
//! steps by its host (the world), which reads back the pose of every body part each step.
//!
//! ## Motions, equilibrium points and interruption
//! An action becomes a queue of **segments**, each an atomic motion from one equilibrium pose to
//! the next: one step of a walk, one lateral step, one 20° quantum of a turn, a head motion, a
//! whole kick, a whole save, a whole get-up. A new action that differs from the running one (name
//! or parameters) waits until the current segment ends, then replaces the rest of the running
//! action; the very same action sent again is ignored. A walk of `d` cm is
//! `floor(d/12)` long steps then `floor((d − 12·n)/2)` mini steps (8 cm steps with
//! `gait="normal"`); it never goes farther than asked (`walk 30` = 2 long + 3 mini = 30 cm,
//! `walk 7` = 3 mini = 6 cm). Lateral steps are 4 cm, turns 20° quanta, both rounded down; a
//! turn of less than one quantum is made of 5° small turns (`turn 45` = 40°, `turn 12` = 10°),
//! the finer motion FutRob's report asks for to line up kicks.
//!
//! ## The motion table
//! Quanta, durations, the kick and the body's size come from [`MotionTable`], FutRob's
//! vocabulary's own table (`simrob_futrob::motion`, in centimetres, degrees and
//! milliseconds: the defaults and their sources are there); the body converts them to metres,
//! radians and seconds where it moves.
//!
//! ## Noise and falls
//! [`MotionNoise`] scales each step's length, adds heading drift per step and an error per turn
//! quantum, and makes a motion end in a fall with a given probability; [`MotionNoise::ideal`]
//! has none of it, [`MotionNoise::paper`] has FutRob's fall rates (see its docs). Falls are drawn
//! from the humanoid's own seeded [`Xoshiro256StarStar`]. A fallen robot refuses every action but the
//! matching get-up. A kick's fall happens after the ball was struck, as in FutRob's trials.

use std::collections::VecDeque;
use std::f64::consts::PI;

use simrob_math::{wrap_angle, Xoshiro256StarStar, DEG};

use crate::action::{Action, Gait, Side};
use crate::field::Team;

pub use simrob_futrob::MotionTable;

/// A length of the motion table (cm) in metres.
#[inline]
fn metres(cm: f64) -> f64 {
    cm / 100.0
}

/// A duration of the motion table (ms) in seconds.
#[inline]
fn secs(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// Ball speed (m/s) right after a kick: the speed the carpet's rolling resistance stops
/// after the table's `kick_distance_cm` (`sqrt(2·C·g·d)`).
pub fn kick_speed(table: &MotionTable) -> f64 {
    (2.0 * crate::field::CARPET_ROLLING_RESISTANCE * 9.8 * metres(table.kick_distance_cm)).sqrt()
}

/// The radius (m) of the disc a standing humanoid occupies for robot–robot and robot–post
/// blocking.
pub fn body_radius(table: &MotionTable) -> f64 {
    metres(table.body_radius_cm)
}

/// Motion noise and falls. All zero in [`MotionNoise::ideal`].
#[derive(Debug, Clone, PartialEq)]
pub struct MotionNoise {
    /// Standard deviation of a step's length, as a fraction of the step.
    pub step_length_sd: f64,
    /// Standard deviation of the heading change per forward or lateral step (rad).
    pub step_heading_sd: f64,
    /// Standard deviation of a turn quantum's error (rad).
    pub turn_sd: f64,
    /// Standard deviation of the kick's ball speed, as a fraction.
    pub kick_speed_sd: f64,
    /// Standard deviation of the kick's direction (rad).
    pub kick_direction_sd: f64,
    /// Probability that a forward step ends in a fall.
    pub fall_per_step: f64,
    /// Probability that a lateral step ends in a fall.
    pub fall_per_lateral_step: f64,
    /// Probability that a turn quantum ends in a fall.
    pub fall_per_turn: f64,
    /// Probability that a kick ends in a fall (after the strike).
    pub fall_per_kick: f64,
}

impl MotionNoise {
    /// Exact motions, no falls.
    pub fn ideal() -> Self {
        MotionNoise {
            step_length_sd: 0.0,
            step_heading_sd: 0.0,
            turn_sd: 0.0,
            kick_speed_sd: 0.0,
            kick_direction_sd: 0.0,
            fall_per_step: 0.0,
            fall_per_lateral_step: 0.0,
            fall_per_turn: 0.0,
            fall_per_kick: 0.0,
        }
    }

    /// FutRob's robots as its trials show them. Falls: 11 falls while kicking in 23 penalty
    /// kicks taken and 4 in 10 passes (≈ 0.4 per kick); 4 falls while walking in 30 penalty
    /// approaches of roughly 15 steps (≈ 0.01 per step); 2 falls in 3 keeper side-steps and
    /// about 20 positioning side-steps (≈ 0.02 per lateral step). Step length ±10 %, heading
    /// drift 2° per step, 2° per turn quantum, kick speed ±5 % and direction ±5° are simrob's
    /// estimates for a worn Bioloid gait (FutRob reports motor wear and battery effects but no
    /// numbers).
    pub fn paper() -> Self {
        MotionNoise {
            step_length_sd: 0.10,
            step_heading_sd: 2.0 * DEG,
            turn_sd: 2.0 * DEG,
            kick_speed_sd: 0.05,
            kick_direction_sd: 5.0 * DEG,
            fall_per_step: 0.01,
            fall_per_lateral_step: 0.02,
            fall_per_turn: 0.005,
            fall_per_kick: 0.4,
        }
    }
}

/// A pose on the floor: position (m) and heading (rad, counter-clockwise from +X).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pose2 {
    /// Position along the field's length (m, world X).
    pub x: f64,
    /// Position across the field (m, world Y, positive to the left of +X).
    pub y: f64,
    /// Direction the robot faces (rad, counter-clockwise from +X).
    pub heading: f64,
}

impl Pose2 {
    /// The pose moved by `(forward, left)` metres in its own frame and turned by `dyaw`.
    pub fn moved(self, forward: f64, left: f64, dyaw: f64) -> Pose2 {
        let (s, c) = self.heading.sin_cos();
        Pose2 {
            x: self.x + forward * c - left * s,
            y: self.y + forward * s + left * c,
            heading: wrap_angle(self.heading + dyaw),
        }
    }
    /// A point given in the robot's frame (forward, left) in world coordinates.
    pub fn to_world(self, forward: f64, left: f64) -> [f64; 2] {
        let (s, c) = self.heading.sin_cos();
        [
            self.x + forward * c - left * s,
            self.y + forward * s + left * c,
        ]
    }
    /// A world point in the robot's frame (forward, left).
    pub fn to_local(self, p: [f64; 2]) -> [f64; 2] {
        let (s, c) = self.heading.sin_cos();
        let (dx, dy) = (p[0] - self.x, p[1] - self.y);
        [dx * c + dy * s, -dx * s + dy * c]
    }
}

/// How the body is arranged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Posture {
    /// Upright on its feet, ready for any action.
    Standing,
    /// Lying face down.
    FallenFront,
    /// Lying on its back.
    FallenBack,
    /// Down on that side, arm stretched out (a save).
    Saving(Side),
}

impl Posture {
    /// Whether the robot is lying after a fall.
    pub fn is_fallen(self) -> bool {
        matches!(self, Posture::FallenFront | Posture::FallenBack)
    }
    /// `standing`, `fallenFront`, `fallenBack`, `savingRight`, `savingLeft`.
    pub fn as_str(self) -> &'static str {
        match self {
            Posture::Standing => "standing",
            Posture::FallenFront => "fallenFront",
            Posture::FallenBack => "fallenBack",
            Posture::Saving(Side::Right) => "savingRight",
            Posture::Saving(Side::Left) => "savingLeft",
        }
    }
}

/// How an action ended (or that it is still running).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ActionStatus {
    /// Segments remain to be done.
    Running,
    /// Every segment done.
    Done,
    /// Replaced by another action at an equilibrium point.
    Interrupted,
    /// The robot fell during it.
    Fell,
}

impl ActionStatus {
    /// `running`, `done`, `interrupted`, `fell`.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionStatus::Running => "running",
            ActionStatus::Done => "done",
            ActionStatus::Interrupted => "interrupted",
            ActionStatus::Fell => "fell",
        }
    }
}

/// What happened during [`Humanoid::advance`] that its host must act on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HumanoidEvent {
    /// The foot swings through the ball's place now: if the ball is within reach
    /// ([`Humanoid::kick_reaches`]), it leaves at `speed` m/s along world direction `heading`.
    Strike {
        /// The kicking foot.
        side: Side,
        /// Ball speed after the strike (m/s), the table's kick speed with the profile's noise.
        speed: f64,
        /// World direction the ball leaves in (rad, counter-clockwise from +X).
        heading: f64,
    },
    /// The robot fell.
    Fell(Posture),
}

/// Why an action is refused now.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RefusedAction {
    /// The robot lies after a fall and was asked for something other than its get-up.
    #[error("the robot is down ({posture}); only {get_up} can be done now")]
    Down {
        /// The robot's posture ([`Posture::as_str`]).
        posture: &'static str,
        /// The one action it accepts now: `frontGetUp` or `backGetUp`.
        get_up: &'static str,
    },
    /// A get-up that does not match the posture (the robot is not down, or down the other way).
    #[error("{action} only makes sense after a fall; the robot is {posture}")]
    NotDown {
        /// The get-up asked for (`frontGetUp` or `backGetUp`).
        action: &'static str,
        /// The robot's posture ([`Posture::as_str`]).
        posture: &'static str,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum Motion {
    /// Move by (forward, left, dyaw) in the frame of the segment's start.
    Body {
        forward: f64,
        left: f64,
        dyaw: f64,
    },
    Head {
        pan: f64,
        tilt: f64,
    },
    Kick(Side),
    Save(Side),
    GetUp,
    Rest,
}

/// Which fall probability of [`MotionNoise`] a segment draws.
#[derive(Debug, Clone, Copy, PartialEq)]
enum FallRisk {
    None,
    Step,
    Lateral,
    Turn,
    Kick,
}

#[derive(Debug, Clone, PartialEq)]
struct Segment {
    motion: Motion,
    duration: f64,
    fall: FallRisk,
}

#[derive(Debug, Clone, PartialEq)]
struct Current {
    segment: Segment,
    elapsed: f64,
    from: Pose2,
    /// Target after noise.
    to: Pose2,
    head_from: (f64, f64),
    falls: Option<Posture>,
    struck: bool,
}

/// The state of the running (or last) action as a brain sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionState {
    /// The action as requested (FutRob's units: cm, degrees).
    pub action: Action,
    /// The request's sequence number (counted per robot from 1).
    pub seq: u64,
    /// Whether it is still running, and if not, how it ended.
    pub status: ActionStatus,
}

/// One humanoid robot: pose, head, posture and actions. Its host calls
/// [`Humanoid::advance`] every physics step and places the body parts at
/// [`Humanoid::part_poses`].
#[derive(Debug, Clone, PartialEq)]
pub struct Humanoid {
    /// The robot's id (its entity id in the world).
    pub id: u32,
    /// Its team: the material of its body and the goal it defends.
    pub team: Team,
    pose: Pose2,
    /// Head pan (rad, positive right) and tilt (rad, negative down).
    head: (f64, f64),
    posture: Posture,
    /// Posture blending: from `prev_posture` to `posture` over `blend_time`.
    prev_posture: Posture,
    blend: f64,
    blend_time: f64,
    current: Option<Current>,
    queue: VecDeque<Segment>,
    state: Option<ActionState>,
    pending: Option<(Action, u64)>,
    seq: u64,
    /// The last [`ENDED_KEPT`] actions that ended, oldest first, with their end count.
    ended: VecDeque<(u64, ActionState)>,
    /// How many actions have ended since the robot was made.
    ended_total: u64,
    rng: Xoshiro256StarStar,
}

/// How many ended actions a humanoid remembers for [`Humanoid::ended_since`].
pub const ENDED_KEPT: usize = 16;

/// Body parts of the humanoid, in the order [`Humanoid::part_poses`] returns them.
pub const PARTS: [&str; 6] = [
    "trunk",
    "head",
    "armRight",
    "armLeft",
    "footRight",
    "footLeft",
];

/// Box sizes (m) of the parts, in [`PARTS`] order: forward depth, width, height when standing.
pub const PART_SIZES: [[f64; 3]; 6] = [
    [0.08, 0.14, 0.31],
    [0.07, 0.07, 0.07],
    [0.04, 0.03, 0.16],
    [0.04, 0.03, 0.16],
    [0.10, 0.055, 0.02],
    [0.10, 0.055, 0.02],
];

/// Height (m) of the camera above the floor when standing (FutRob's calibration tables).
pub const CAMERA_HEIGHT: f64 = 0.36;

/// Local pose of a part: position (forward, left, up) and roll/pitch (rad).
type LocalPose = ([f64; 3], [f64; 2]);

fn posture_parts(p: Posture) -> [LocalPose; 6] {
    let r90 = PI / 2.0;
    match p {
        Posture::Standing => [
            ([0.0, 0.0, 0.175], [0.0, 0.0]),
            ([0.0, 0.0, CAMERA_HEIGHT], [0.0, 0.0]),
            ([0.0, -0.085, 0.24], [0.0, 0.0]),
            ([0.0, 0.085, 0.24], [0.0, 0.0]),
            ([0.02, -0.04, 0.01], [0.0, 0.0]),
            ([0.02, 0.04, 0.01], [0.0, 0.0]),
        ],
        Posture::Saving(side) => {
            // Down on that side: the trunk lies towards it with the head beyond, that arm
            // stretched past the head along the floor, the other arm along the top of the trunk;
            // the feet stay.
            let s = match side {
                Side::Right => -1.0,
                Side::Left => 1.0,
            };
            let diving_arm = ([0.04, s * 0.27, 0.015], [-s * r90, 0.0]);
            let other_arm = ([0.0, s * 0.11, 0.155], [-s * r90, 0.0]);
            let (arm_right, arm_left) = match side {
                Side::Right => (diving_arm, other_arm),
                Side::Left => (other_arm, diving_arm),
            };
            [
                ([0.0, s * 0.11, 0.07], [-s * r90, 0.0]),
                ([0.0, s * 0.30, 0.035], [-s * r90, 0.0]),
                arm_right,
                arm_left,
                ([0.02, -0.04, 0.01], [0.0, 0.0]),
                ([0.02, 0.04, 0.01], [0.0, 0.0]),
            ]
        }
        Posture::FallenFront | Posture::FallenBack => {
            let s = if p == Posture::FallenFront { 1.0 } else { -1.0 };
            [
                ([s * 0.16, 0.0, 0.04], [0.0, s * r90]),
                ([s * 0.35, 0.0, 0.035], [0.0, s * r90]),
                ([s * 0.17, -0.085, 0.04], [0.0, s * r90]),
                ([s * 0.17, 0.085, 0.04], [0.0, s * r90]),
                ([-s * 0.02, -0.04, 0.01], [0.0, 0.0]),
                ([-s * 0.02, 0.04, 0.01], [0.0, 0.0]),
            ]
        }
    }
}

fn smooth(t: f64) -> f64 {
    let t = t.clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn lerp(a: f64, b: f64, t: f64) -> f64 {
    a + (b - a) * t
}

/// World pose of one part: position and Euler angles (R = Rz·Ry·Rx).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PartPose {
    /// Centre of the part in world coordinates (m).
    pub position: [f64; 3],
    /// Euler angles (rx, ry, rz) in rad, applied as R = Rz·Ry·Rx.
    pub rotation: [f64; 3],
}

impl Humanoid {
    /// A standing humanoid at `pose`, head level and ahead; its noise comes from `rng`.
    pub fn new(id: u32, team: Team, pose: Pose2, rng: Xoshiro256StarStar) -> Self {
        Humanoid {
            id,
            team,
            pose,
            head: (0.0, 0.0),
            posture: Posture::Standing,
            prev_posture: Posture::Standing,
            blend: 1.0,
            blend_time: 0.0,
            current: None,
            queue: VecDeque::new(),
            state: None,
            pending: None,
            seq: 0,
            ended: VecDeque::new(),
            ended_total: 0,
            rng,
        }
    }

    /// Records that an action ended (`status` is not [`ActionStatus::Running`]).
    fn ended(&mut self, action: Action, seq: u64, status: ActionStatus) {
        self.ended_total += 1;
        if self.ended.len() == ENDED_KEPT {
            self.ended.pop_front();
        }
        self.ended.push_back((
            self.ended_total,
            ActionState {
                action,
                seq,
                status,
            },
        ));
    }

    /// Ends the running action with `status` (nothing when none is running).
    fn end_running(&mut self, status: ActionStatus) {
        let Some(s) = &mut self.state else { return };
        if s.status != ActionStatus::Running {
            return;
        }
        s.status = status;
        let (action, seq) = (s.action.clone(), s.seq);
        self.ended(action, seq, status);
    }

    /// Drops the action waiting for an equilibrium point: it ends `interrupted` without
    /// having started.
    fn drop_pending(&mut self) {
        if let Some((action, seq)) = self.pending.take() {
            self.ended(action, seq, ActionStatus::Interrupted);
        }
    }

    /// How many actions have ended since the robot was made (running count; see
    /// [`Humanoid::ended_since`]).
    pub fn ended_total(&self) -> u64 {
        self.ended_total
    }

    /// The actions that ended after the first `count` ones, in the order they ended, each with
    /// its final status: at most the last [`ENDED_KEPT`]. Every action requested ends exactly
    /// once: `done`, `fell`, or `interrupted` (replaced by a newer request, before or after it
    /// started, or cancelled by [`Humanoid::place`] or a fall).
    pub fn ended_since(&self, count: u64) -> impl Iterator<Item = &ActionState> + '_ {
        self.ended
            .iter()
            .filter(move |(n, _)| *n > count)
            .map(|(_, s)| s)
    }

    /// Where it stands.
    pub fn pose(&self) -> Pose2 {
        self.pose
    }
    /// Head pan and tilt (rad; pan positive right, tilt negative down).
    pub fn head(&self) -> (f64, f64) {
        self.head
    }
    /// Its posture (the one it is in or moving into).
    pub fn posture(&self) -> Posture {
        self.posture
    }
    /// The running or last action.
    pub fn action_state(&self) -> Option<&ActionState> {
        self.state.as_ref()
    }
    /// The action waiting for the next equilibrium point.
    pub fn pending(&self) -> Option<&Action> {
        self.pending.as_ref().map(|(a, _)| a)
    }
    /// Whether it is standing still with nothing to do.
    pub fn is_idle(&self) -> bool {
        self.current.is_none() && self.queue.is_empty() && self.pending.is_none()
    }
    /// Its noise generator (its state goes into save files).
    pub fn rng(&self) -> &Xoshiro256StarStar {
        &self.rng
    }

    /// Puts it at `pose`, standing, head level, with no action (a referee placing a robot):
    /// the running action and the one waiting end `interrupted`.
    pub fn place(&mut self, pose: Pose2) {
        self.end_running(ActionStatus::Interrupted);
        self.drop_pending();
        self.pose = pose;
        self.head = (0.0, 0.0);
        self.posture = Posture::Standing;
        self.prev_posture = Posture::Standing;
        self.blend = 1.0;
        self.current = None;
        self.queue.clear();
    }

    /// Asks for an action; returns its sequence number, or `None` when it is the very action
    /// already running (ignored, as FutRob's action handler does). The action starts now if the
    /// robot is idle, otherwise at the running action's next equilibrium point.
    pub fn request(
        &mut self,
        action: Action,
        table: &MotionTable,
    ) -> Result<Option<u64>, RefusedAction> {
        let posture = self.posture.as_str();
        match (&action, self.posture) {
            (Action::FrontGetUp, Posture::FallenFront)
            | (Action::BackGetUp, Posture::FallenBack) => {}
            (Action::FrontGetUp | Action::BackGetUp, _) => {
                return Err(RefusedAction::NotDown {
                    action: action.name(),
                    posture,
                })
            }
            (_, Posture::FallenFront) => {
                return Err(RefusedAction::Down {
                    posture,
                    get_up: "frontGetUp",
                })
            }
            (_, Posture::FallenBack) => {
                return Err(RefusedAction::Down {
                    posture,
                    get_up: "backGetUp",
                })
            }
            _ => {}
        }
        if let Some(s) = &self.state {
            if s.status == ActionStatus::Running && s.action == action && self.pending.is_none() {
                return Ok(None);
            }
        }
        if let Some((p, _)) = &self.pending {
            if *p == action {
                return Ok(None);
            }
        }
        self.seq += 1;
        // A request waiting for an equilibrium point is replaced before it started.
        self.drop_pending();
        self.pending = Some((action, self.seq));
        if self.current.is_none() {
            self.start_pending(table);
        }
        Ok(Some(self.seq))
    }

    fn start_pending(&mut self, table: &MotionTable) {
        let Some((action, seq)) = self.pending.take() else {
            return;
        };
        self.end_running(ActionStatus::Interrupted);
        self.queue = self.segments(&action, table);
        self.state = Some(ActionState {
            action,
            seq,
            status: ActionStatus::Running,
        });
    }

    fn segments(&self, action: &Action, t: &MotionTable) -> VecDeque<Segment> {
        let mut out = VecDeque::new();
        let body = |forward, left, dyaw, duration, fall| Segment {
            motion: Motion::Body {
                forward,
                left,
                dyaw,
            },
            duration,
            fall,
        };
        match *action {
            Action::None => {}
            Action::InitialPosition => out.push_back(Segment {
                motion: Motion::Rest,
                duration: secs(t.initial_position_ms),
                fall: FallRisk::None,
            }),
            Action::Walk { distance_cm, gait } => {
                let d = distance_cm / 100.0 + 1e-9;
                let (step, time) = match gait {
                    Gait::Long => (metres(t.step_cm), secs(t.step_ms)),
                    Gait::Normal => (metres(t.normal_step_cm), secs(t.normal_step_ms)),
                };
                let n = (d / step).floor() as usize;
                let m = ((d - n as f64 * step) / metres(t.mini_step_cm)).floor() as usize;
                for _ in 0..n {
                    out.push_back(body(step, 0.0, 0.0, time, FallRisk::Step));
                }
                for _ in 0..m {
                    out.push_back(body(
                        metres(t.mini_step_cm),
                        0.0,
                        0.0,
                        secs(t.mini_step_ms),
                        FallRisk::Step,
                    ));
                }
            }
            Action::WalkRight { distance_cm } | Action::WalkLeft { distance_cm } => {
                let s = if matches!(action, Action::WalkRight { .. }) {
                    -1.0
                } else {
                    1.0
                };
                let n = (distance_cm / 100.0 / metres(t.lateral_step_cm) + 1e-9).floor() as usize;
                for _ in 0..n {
                    out.push_back(body(
                        0.0,
                        s * metres(t.lateral_step_cm),
                        0.0,
                        secs(t.lateral_step_ms),
                        FallRisk::Lateral,
                    ));
                }
            }
            Action::Turn { angle_deg } => {
                let n = (angle_deg.abs() * DEG / (t.turn_step_deg * DEG) + 1e-9).floor() as usize;
                // Less than one quantum: small turns (none when the table has none).
                let (n, q, time) = if n == 0 && (t.small_turn_deg * DEG) > 0.0 {
                    let k = (angle_deg.abs() * DEG / (t.small_turn_deg * DEG) + 1e-9).floor();
                    (k as usize, (t.small_turn_deg * DEG), secs(t.small_turn_ms))
                } else {
                    (n, (t.turn_step_deg * DEG), secs(t.turn_step_ms))
                };
                // Positive turns right: clockwise, a negative heading change.
                let dyaw = -angle_deg.signum() * q;
                for _ in 0..n {
                    out.push_back(body(0.0, 0.0, dyaw, time, FallRisk::Turn));
                }
            }
            Action::TurnHeadVertically { angle_deg } => {
                let tilt = angle_deg * DEG;
                out.push_back(Segment {
                    motion: Motion::Head {
                        pan: self.head.0,
                        tilt,
                    },
                    duration: ((tilt - self.head.1).abs() / (t.head_deg_per_s * DEG)).max(0.02),
                    fall: FallRisk::None,
                });
            }
            Action::TurnHeadHorizontally { angle_deg } => {
                let pan = angle_deg * DEG;
                out.push_back(Segment {
                    motion: Motion::Head {
                        pan,
                        tilt: self.head.1,
                    },
                    duration: ((pan - self.head.0).abs() / (t.head_deg_per_s * DEG)).max(0.02),
                    fall: FallRisk::None,
                });
            }
            Action::Kick(side) => out.push_back(Segment {
                motion: Motion::Kick(side),
                duration: secs(t.kick_ms),
                fall: FallRisk::Kick,
            }),
            Action::Save(side) => out.push_back(Segment {
                motion: Motion::Save(side),
                duration: secs(t.save_ms) + secs(t.save_hold_ms) + secs(t.save_recover_ms),
                fall: FallRisk::None,
            }),
            Action::FrontGetUp | Action::BackGetUp => out.push_back(Segment {
                motion: Motion::GetUp,
                duration: secs(t.get_up_ms),
                fall: FallRisk::None,
            }),
        }
        out
    }

    fn set_posture(&mut self, p: Posture, time: f64) {
        if p == self.posture {
            return;
        }
        self.prev_posture = self.posture;
        self.posture = p;
        self.blend = 0.0;
        self.blend_time = time;
    }

    /// Advances the robot by `dt` seconds. `reach(from, to)` says where a body move from
    /// `from` towards `to` ends among the other robots and the posts: at `to` when nothing is
    /// in the way, somewhere else when the move slides along what it touches (the step goes on
    /// along the same line from there), at `from` when it is stopped (the step ends where the
    /// robot stands). Only its position is used: turning is never stopped. Returns what the
    /// host must act on.
    pub fn advance(
        &mut self,
        dt: f64,
        table: &MotionTable,
        noise: &MotionNoise,
        reach: &dyn Fn(Pose2, Pose2) -> Pose2,
    ) -> Vec<HumanoidEvent> {
        let mut events = Vec::new();
        if self.blend < 1.0 {
            self.blend = if self.blend_time > 0.0 {
                (self.blend + dt / self.blend_time).min(1.0)
            } else {
                1.0
            };
        }
        let mut left = dt;
        // A loop so that a segment ending mid-step hands the rest of the step to the next one.
        for _ in 0..8 {
            if self.current.is_none() {
                if self.queue.is_empty() && self.pending.is_some() {
                    self.start_pending(table);
                }
                let Some(segment) = self.queue.pop_front() else {
                    self.end_running(ActionStatus::Done);
                    break;
                };
                self.begin(segment, table, noise);
            }
            let Some(cur) = &mut self.current else { break };
            let dur = cur.segment.duration;
            let before = cur.elapsed;
            let now = (before + left).min(dur);
            left -= now - before;
            cur.elapsed = now;
            let f = if dur > 0.0 { now / dur } else { 1.0 };
            match cur.segment.motion.clone() {
                Motion::Body { .. } => {
                    let s = smooth(f);
                    let candidate = Pose2 {
                        x: lerp(cur.from.x, cur.to.x, s),
                        y: lerp(cur.from.y, cur.to.y, s),
                        heading: wrap_angle(
                            cur.from.heading + wrap_angle(cur.to.heading - cur.from.heading) * s,
                        ),
                    };
                    let moved =
                        (candidate.x - self.pose.x).abs() + (candidate.y - self.pose.y).abs();
                    let reached = if moved > 0.0 {
                        reach(self.pose, candidate)
                    } else {
                        candidate
                    };
                    if (reached.x, reached.y) == (candidate.x, candidate.y) {
                        self.pose = candidate;
                    } else if (reached.x, reached.y) == (self.pose.x, self.pose.y) {
                        // Stopped by an obstacle: the step ends where the robot stands.
                        cur.from = self.pose;
                        cur.to = Pose2 {
                            heading: candidate.heading,
                            ..self.pose
                        };
                    } else {
                        // Slid along an obstacle: the rest of the step runs parallel to its
                        // line, from where the robot got to.
                        let (dx, dy) = (reached.x - candidate.x, reached.y - candidate.y);
                        for end in [&mut cur.from, &mut cur.to] {
                            end.x += dx;
                            end.y += dy;
                        }
                        self.pose = Pose2 {
                            heading: candidate.heading,
                            ..reached
                        };
                    }
                }
                Motion::Head { pan, tilt } => {
                    let s = smooth(f);
                    self.head = (
                        lerp(cur.head_from.0, pan, s),
                        lerp(cur.head_from.1, tilt, s),
                    );
                }
                Motion::Kick(side) => {
                    if !cur.struck && now >= secs(table.kick_strike_ms) {
                        cur.struck = true;
                        let speed = kick_speed(table)
                            * (1.0 + self.rng.normal(0.0, noise.kick_speed_sd)).max(0.0);
                        let heading = wrap_angle(
                            self.pose.heading + self.rng.normal(0.0, noise.kick_direction_sd),
                        );
                        events.push(HumanoidEvent::Strike {
                            side,
                            speed,
                            heading,
                        });
                    }
                }
                Motion::Save(side) => {
                    if before == 0.0 {
                        self.set_posture(Posture::Saving(side), secs(table.save_ms));
                    }
                    let up = secs(table.save_ms) + secs(table.save_hold_ms);
                    if before < up && now >= up {
                        self.set_posture(Posture::Standing, secs(table.save_recover_ms));
                    }
                }
                Motion::GetUp => {
                    if before == 0.0 {
                        self.set_posture(Posture::Standing, secs(table.get_up_ms));
                    }
                }
                Motion::Rest => {}
            }
            let done = now >= dur;
            if !done {
                break;
            }
            // An equilibrium point.
            let cur = self.current.take();
            if let Some(Current {
                falls: Some(p),
                segment,
                ..
            }) = cur
            {
                if let Motion::Head { pan, tilt } = segment.motion {
                    self.head = (pan, tilt);
                }
                self.set_posture(p, secs(table.fall_ms));
                self.queue.clear();
                self.end_running(ActionStatus::Fell);
                events.push(HumanoidEvent::Fell(p));
                // Whatever was asked meanwhile cannot be done lying down.
                self.drop_pending();
                break;
            }
            if let Some(Current { segment, .. }) = &cur {
                if let Motion::Head { pan, tilt } = segment.motion {
                    self.head = (pan, tilt);
                }
            }
            if self.pending.is_some() {
                self.queue.clear();
                self.start_pending(table);
            }
            if left <= 1e-12 {
                if self.queue.is_empty() && self.pending.is_none() {
                    self.end_running(ActionStatus::Done);
                }
                break;
            }
        }
        events
    }

    fn begin(&mut self, segment: Segment, table: &MotionTable, noise: &MotionNoise) {
        let fall_p = match segment.fall {
            FallRisk::None => 0.0,
            FallRisk::Step => noise.fall_per_step,
            FallRisk::Lateral => noise.fall_per_lateral_step,
            FallRisk::Turn => noise.fall_per_turn,
            FallRisk::Kick => noise.fall_per_kick,
        };
        let to = match segment.motion {
            Motion::Body {
                forward,
                left,
                dyaw,
            } => {
                let scale = (1.0 + self.rng.normal(0.0, noise.step_length_sd)).max(0.0);
                let drift = if dyaw == 0.0 {
                    self.rng.normal(0.0, noise.step_heading_sd)
                } else {
                    // A quantum's error; a small turn's in proportion to its angle.
                    let part = (dyaw.abs() / (table.turn_step_deg * DEG)).min(1.0);
                    self.rng.normal(0.0, noise.turn_sd * part)
                };
                self.pose.moved(forward * scale, left * scale, dyaw + drift)
            }
            _ => self.pose,
        };
        let falls = if self.rng.chance(fall_p) {
            Some(if self.rng.next_f64() < 0.5 {
                Posture::FallenFront
            } else {
                Posture::FallenBack
            })
        } else {
            None
        };
        self.current = Some(Current {
            segment,
            elapsed: 0.0,
            from: self.pose,
            to,
            head_from: self.head,
            falls,
            struck: false,
        });
    }

    /// Whether a ball at world point `ball` (centre, m) with radius `r` is within the reach of
    /// the `side` foot of a standing robot.
    pub fn kick_reaches(&self, side: Side, ball: [f64; 3], r: f64, table: &MotionTable) -> bool {
        if self.posture != Posture::Standing || ball[2] > 2.0 * r + 0.02 {
            return false;
        }
        let foot = posture_parts(Posture::Standing)[match side {
            Side::Right => 4,
            Side::Left => 5,
        }]
        .0;
        let toe = foot[0] + PART_SIZES[4][0] / 2.0;
        let [fwd, left] = self.pose.to_local([ball[0], ball[1]]);
        let gap = fwd - r - toe;
        // From a ball pressed against the toe (the foot draws back 5 cm before it swings; a
        // ball pushed by the foot while the robot turns or steps sits up to 2 cm into the
        // toe's box) to `kick_reach` beyond it.
        (-0.02..=metres(table.kick_reach_cm)).contains(&gap)
            && (left - foot[1]).abs() <= metres(table.kick_lateral_cm)
    }

    /// World poses of the body parts ([`PARTS`] order) now.
    pub fn part_poses(&self, table: &MotionTable) -> [PartPose; 6] {
        let a = posture_parts(self.prev_posture);
        let b = posture_parts(self.posture);
        let s = smooth(self.blend);
        let kick = match &self.current {
            Some(Current {
                segment:
                    Segment {
                        motion: Motion::Kick(side),
                        ..
                    },
                elapsed,
                ..
            }) => Some((*side, *elapsed)),
            _ => None,
        };
        let mut out = [PartPose {
            position: [0.0; 3],
            rotation: [0.0; 3],
        }; 6];
        for i in 0..6 {
            let mut local = [
                lerp(a[i].0[0], b[i].0[0], s),
                lerp(a[i].0[1], b[i].0[1], s),
                lerp(a[i].0[2], b[i].0[2], s),
            ];
            let mut roll = lerp(a[i].1[0], b[i].1[0], s);
            let mut pitch = lerp(a[i].1[1], b[i].1[1], s);
            let mut yaw = self.pose.heading;
            if let Some((side, t)) = kick {
                let foot = match side {
                    Side::Right => 4,
                    Side::Left => 5,
                };
                if i == foot {
                    let (dx, dz) = kick_foot_offset(t, table);
                    local[0] += dx;
                    local[2] += dz;
                }
            }
            if i == 1 && self.posture == Posture::Standing && self.blend >= 1.0 {
                // The head turns: pitch down is a positive rotation about the robot's Y axis.
                pitch = -self.head.1;
                yaw = wrap_angle(self.pose.heading - self.head.0);
                roll = 0.0;
            }
            let [wx, wy] = self.pose.to_world(local[0], local[1]);
            out[i] = PartPose {
                position: [wx, wy, local[2]],
                rotation: [roll, pitch, yaw],
            };
        }
        out
    }

    /// The camera's place and aim: position (m), yaw (rad, world) and pitch of the head (rad,
    /// negative down, before the mount offset). `None` unless standing.
    pub fn camera(&self) -> Option<([f64; 3], f64, f64)> {
        if self.posture != Posture::Standing || self.blend < 1.0 {
            return None;
        }
        Some((
            [self.pose.x, self.pose.y, CAMERA_HEIGHT],
            wrap_angle(self.pose.heading - self.head.0),
            self.head.1,
        ))
    }

    /// Restores the parts of the state a save file carries.
    pub fn restore(
        &mut self,
        pose: Pose2,
        head: (f64, f64),
        posture: Posture,
        seq: u64,
        rng: Xoshiro256StarStar,
    ) {
        self.place(pose);
        self.head = head;
        self.posture = posture;
        self.prev_posture = posture;
        self.seq = seq;
        self.rng = rng;
    }

    /// The request sequence counter.
    pub fn seq(&self) -> u64 {
        self.seq
    }
}

/// The kicking foot's offset (forward, up) at `t` seconds into the kick: back-swing, then the
/// swing through the ball at the strike, then back to rest.
fn kick_foot_offset(t: f64, table: &MotionTable) -> (f64, f64) {
    let strike = secs(table.kick_strike_ms);
    let swing_end = strike + 0.15;
    if t < strike {
        let s = smooth(t / strike);
        (-0.05 * s, 0.03 * s)
    } else if t < swing_end {
        let s = smooth((t - strike) / (swing_end - strike));
        (lerp(-0.05, 0.03, s), 0.03)
    } else {
        let s = smooth((t - swing_end) / (secs(table.kick_ms) - swing_end).max(1e-6));
        (lerp(0.03, 0.0, s), lerp(0.03, 0.0, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(h: &mut Humanoid, seconds: f64) -> Vec<HumanoidEvent> {
        let t = MotionTable::default();
        let n = ideal();
        let mut ev = Vec::new();
        for _ in 0..(seconds / 0.01).round() as usize {
            ev.extend(h.advance(0.01, &t, &n, &|_, to| to));
        }
        ev
    }

    fn ideal() -> MotionNoise {
        MotionNoise::ideal()
    }

    fn robot() -> Humanoid {
        Humanoid::new(1, Team::Cyan, Pose2::default(), Xoshiro256StarStar::new(1))
    }

    fn walk(d: f64) -> Action {
        Action::Walk {
            distance_cm: d,
            gait: Gait::Long,
        }
    }

    #[test]
    fn walk_decomposes_into_long_then_mini_steps() {
        let t = MotionTable::default();
        let mut h = robot();
        h.request(walk(30.0), &t).unwrap();
        // 2 long (0.8 s) + 3 mini (0.4 s) = 2.8 s.
        run(&mut h, 2.79);
        assert_eq!(h.action_state().unwrap().status, ActionStatus::Running);
        run(&mut h, 0.02);
        assert_eq!(h.action_state().unwrap().status, ActionStatus::Done);
        assert!((h.pose().x - 0.30).abs() < 1e-9, "{:?}", h.pose());
        let mut h = robot();
        h.request(walk(7.0), &t).unwrap();
        run(&mut h, 3.0);
        assert!((h.pose().x - 0.06).abs() < 1e-9, "{:?}", h.pose());
    }

    #[test]
    fn turn_in_quanta_positive_right() {
        let t = MotionTable::default();
        let mut h = robot();
        h.request(Action::Turn { angle_deg: 45.0 }, &t).unwrap();
        run(&mut h, 3.0);
        assert!(
            (h.pose().heading + 40.0 * DEG).abs() < 1e-9,
            "{:?}",
            h.pose()
        );
        // Under one quantum: 5° small turns, never more than asked.
        for (asked, turned) in [(-12.0, 10.0), (7.0, -5.0), (4.0, 0.0)] {
            let mut h = robot();
            h.request(Action::Turn { angle_deg: asked }, &t).unwrap();
            run(&mut h, 2.0);
            assert!(
                (h.pose().heading - turned * DEG).abs() < 1e-9,
                "turn {asked}: {:?}",
                h.pose()
            );
        }
    }

    #[test]
    fn a_new_action_waits_for_the_end_of_the_step() {
        let t = MotionTable::default();
        let mut h = robot();
        h.request(walk(48.0), &t).unwrap();
        run(&mut h, 0.5);
        assert_eq!(
            h.request(walk(48.0), &t),
            Ok(None),
            "the same action is ignored"
        );
        h.request(Action::Turn { angle_deg: -20.0 }, &t).unwrap();
        run(&mut h, 0.3);
        // The first step finished (0.8 s), then the turn started.
        assert!((h.pose().x - 0.12).abs() < 1e-9);
        assert_eq!(h.action_state().unwrap().action.name(), "turn");
        run(&mut h, 1.0);
        assert!((h.pose().heading - 20.0 * DEG).abs() < 1e-9);
        assert!((h.pose().x - 0.12).abs() < 1e-9);
    }

    /// The examples of docs/reference/humanoid.md ("How a request becomes steps"): how far,
    /// how much and how long each request goes.
    #[test]
    fn the_documented_step_examples_hold() {
        let t = MotionTable::default();
        let cases: [(Action, f64, f64, f64); 10] = [
            (walk(30.0), 30.0, 0.0, 2.8),
            (walk(7.0), 6.0, 0.0, 1.2),
            (
                Action::Walk {
                    distance_cm: 17.0,
                    gait: Gait::Normal,
                },
                16.0,
                0.0,
                1.2,
            ),
            (walk(1.0), 0.0, 0.0, 0.0),
            (Action::WalkRight { distance_cm: 10.0 }, 8.0, 0.0, 1.2),
            (Action::Turn { angle_deg: 45.0 }, 0.0, -40.0, 1.6),
            (Action::Turn { angle_deg: -12.0 }, 0.0, 10.0, 0.8),
            (Action::Turn { angle_deg: 35.0 }, 0.0, -20.0, 0.8),
            (Action::Turn { angle_deg: 4.0 }, 0.0, 0.0, 0.0),
            (walk(50.0), 50.0, 0.0, 3.6),
        ];
        for (action, cm, deg, secs) in cases {
            let mut h = robot();
            h.request(action.clone(), &t).unwrap();
            let mut took = 0.0;
            while h.action_state().unwrap().status == ActionStatus::Running {
                run(&mut h, 0.01);
                took += 0.01;
                assert!(took < 10.0, "{action}");
            }
            let p = h.pose();
            let moved = p.x.hypot(p.y) * 100.0;
            assert!((moved - cm).abs() < 1e-6, "{action}: {moved} cm");
            assert!((p.heading.to_degrees() - deg).abs() < 1e-6, "{action}");
            // Done in the step after its last motion ends (at most one 10 ms step late).
            assert!(
                took + 1e-9 >= secs && took <= secs + 0.0101,
                "{action}: {took} s"
            );
        }
    }

    fn ended(h: &Humanoid) -> Vec<(u64, &'static str, ActionStatus)> {
        h.ended_since(0)
            .map(|s| (s.seq, s.action.name(), s.status))
            .collect()
    }

    #[test]
    fn every_action_ends_once_even_when_replaced_before_it_started() {
        let t = MotionTable::default();
        let mut h = robot();
        // Two requests with no time between: the walk never moves.
        assert_eq!(h.request(walk(30.0), &t), Ok(Some(1)));
        assert_eq!(
            h.request(Action::Turn { angle_deg: -40.0 }, &t),
            Ok(Some(2))
        );
        assert_eq!(ended(&h), vec![(1, "walk", ActionStatus::Interrupted)]);
        // A walk replaced mid-step; a turn waiting for the step's end, replaced in turn.
        run(&mut h, 2.0);
        assert_eq!(h.request(walk(30.0), &t), Ok(Some(3)));
        run(&mut h, 0.2);
        assert_eq!(h.request(Action::Turn { angle_deg: 20.0 }, &t), Ok(Some(4)));
        assert_eq!(
            h.request(Action::WalkLeft { distance_cm: 8.0 }, &t),
            Ok(Some(5))
        );
        run(&mut h, 5.0);
        assert_eq!(
            ended(&h),
            vec![
                (1, "walk", ActionStatus::Interrupted),
                (2, "turn", ActionStatus::Done),
                (4, "turn", ActionStatus::Interrupted),
                (3, "walk", ActionStatus::Interrupted),
                (5, "walkLeft", ActionStatus::Done),
            ]
        );
        assert_eq!(h.ended_total(), 5);
        assert_eq!(h.ended_since(4).count(), 1);
    }

    #[test]
    fn placing_a_robot_interrupts_its_action() {
        let t = MotionTable::default();
        let mut h = robot();
        h.request(walk(48.0), &t).unwrap();
        run(&mut h, 0.3);
        h.place(Pose2::default());
        run(&mut h, 1.0);
        assert_eq!(
            h.action_state().unwrap().status,
            ActionStatus::Interrupted,
            "not done: the walk did not reach its end"
        );
        assert_eq!(ended(&h), vec![(1, "walk", ActionStatus::Interrupted)]);
    }

    #[test]
    fn a_fallen_robot_only_gets_up() {
        let t = MotionTable::default();
        let mut h = robot();
        let noise = MotionNoise {
            fall_per_step: 1.0,
            ..MotionNoise::ideal()
        };
        h.request(walk(24.0), &t).unwrap();
        let mut fell = None;
        for _ in 0..200 {
            for e in h.advance(0.01, &t, &noise, &|_, to| to) {
                if let HumanoidEvent::Fell(p) = e {
                    fell = Some(p);
                }
            }
        }
        let p = fell.expect("fell");
        assert_eq!(h.action_state().unwrap().status, ActionStatus::Fell);
        assert!(h.request(walk(10.0), &t).is_err());
        let wrong = if p == Posture::FallenFront {
            Action::BackGetUp
        } else {
            Action::FrontGetUp
        };
        assert!(h.request(wrong, &t).is_err());
        let right = if p == Posture::FallenFront {
            Action::FrontGetUp
        } else {
            Action::BackGetUp
        };
        h.request(right, &t).unwrap();
        run(&mut h, 4.1);
        assert_eq!(h.posture(), Posture::Standing);
        assert!(h.camera().is_some());
    }

    #[test]
    fn kick_strikes_once_and_reach_is_in_front_of_the_foot() {
        let t = MotionTable::default();
        let mut h = robot();
        h.request(Action::Kick(Side::Right), &t).unwrap();
        let ev = run(&mut h, 1.3);
        let strikes: Vec<_> = ev
            .iter()
            .filter(|e| matches!(e, HumanoidEvent::Strike { .. }))
            .collect();
        assert_eq!(strikes.len(), 1);
        let r = 0.05;
        // Right foot at y = −0.04, toe at x = 0.07.
        assert!(h.kick_reaches(Side::Right, [0.07 + r + 0.02, -0.04, r], r, &t));
        assert!(!h.kick_reaches(Side::Right, [0.07 + r + 0.10, -0.04, r], r, &t));
        assert!(!h.kick_reaches(Side::Right, [0.07 + r + 0.02, 0.06, r], r, &t));
        assert!(h.kick_reaches(Side::Left, [0.07 + r + 0.02, 0.04, r], r, &t));
        // Pressed against the toe: struck; behind the toe: not.
        assert!(h.kick_reaches(Side::Right, [0.07 + r - 0.015, -0.04, r], r, &t));
        assert!(!h.kick_reaches(Side::Right, [0.07 + r - 0.03, -0.04, r], r, &t));
    }

    /// A step that slides along an obstacle goes on from where it slid to, parallel to its
    /// line, and the walk covers its distance along the obstacle.
    #[test]
    fn steps_that_slide_go_on_along_the_obstacle() {
        let t = MotionTable::default();
        let mut h = robot();
        h.request(walk(60.0), &t).unwrap();
        // Past x = 0.2, whatever a move would gain along x it gains along y instead.
        let deflect = |from: Pose2, to: Pose2| {
            if to.x > 0.2 {
                Pose2 {
                    x: from.x,
                    y: from.y + (to.x - from.x) + (to.y - from.y),
                    ..to
                }
            } else {
                to
            }
        };
        for _ in 0..1000 {
            h.advance(0.01, &t, &ideal(), &deflect);
        }
        let p = h.pose();
        assert!(p.x <= 0.2 && p.x > 0.15, "{p:?}");
        assert!(p.y > 0.3, "the walk went on along the obstacle: {p:?}");
    }

    #[test]
    fn blocked_steps_stop() {
        let t = MotionTable::default();
        let mut h = robot();
        h.request(walk(60.0), &t).unwrap();
        for _ in 0..600 {
            h.advance(0.01, &t, &ideal(), &|from, to| {
                if to.x > 0.2 {
                    from
                } else {
                    to
                }
            });
        }
        assert!(h.pose().x <= 0.2 && h.pose().x > 0.15, "{:?}", h.pose());
    }
}
