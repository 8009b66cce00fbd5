//! The things coordination talks about: robots, tasks, task states, robot status.
//!
//! Ids: the Control Center is robot id 0 ([`CONTROL_CENTER`]); robots are numbered from 1.
//! Task ids are issued by the Control Center and are unique across the whole system, so a
//! precondition can name a task of any robot. Positions are in metres in the frame of the
//! world the robot lives in (SimRob's 3D world; the Mobile Robot Simulator's map, converted
//! from inches by its agent; a swarm map, one map unit = one metre).

use serde::{Deserialize, Serialize};

/// A participant: 0 is the Control Center, robots are 1, 2, 3, …
pub type RobotId = u32;
/// A task, unique across the system.
pub type TaskId = u64;
/// A Contract Net auction.
pub type AuctionId = u64;

/// The Control Center's id.
pub const CONTROL_CENTER: RobotId = 0;
/// The largest robot id, 2³⁰ − 1 (1,073,741,823): the ids from 2³⁰ up are the server's own
/// (its operators' connections are addressed as 2³⁰ plus their number, the Time Server is
/// 4,294,967,295), so a `hello` with one is refused.
pub const MAX_ROBOT_ID: RobotId = (1 << 30) - 1;
/// The longest a `perceive` or `pan_tilt` task may last, seconds (one day).
pub const MAX_TASK_SECONDS: f64 = 86_400.0;
/// The largest |pan| or |tilt| of a `pan_tilt` task, radians (one full turn, 2π).
pub const MAX_ANGLE: f64 = std::f64::consts::TAU;
/// The largest cruise speed a robot may declare in its `hello`, m/s (or map units a second).
pub const MAX_SPEED: f64 = 1e6;

/// Refuses text that goes into a log line or a table as one field (a robot's decline
/// reason, its status error): a control character — a tab, a line break, any other
/// (Unicode's `Cc`), or a line or paragraph separator (U+2028, U+2029) — would forge fields
/// or lines. The one check every such field goes through ([`check_label`] adds that a
/// name is not empty).
pub fn check_one_line(what: &'static str, text: &str) -> Result<(), ValueError> {
    match text
        .char_indices()
        .find(|&(_, c)| c.is_control() || c == '\u{2028}' || c == '\u{2029}')
    {
        Some((at, c)) => Err(ValueError::ControlCharacter {
            what,
            code: c as u32,
            at,
        }),
        None => Ok(()),
    }
}

/// Refuses a name (a robot's name, kind or world, a task's world) that is empty or not one
/// line of text ([`check_one_line`]).
pub fn check_label(what: &'static str, text: &str) -> Result<(), ValueError> {
    if text.is_empty() {
        return Err(ValueError::EmptyText(what));
    }
    check_one_line(what, text)
}

/// The three classes of task that run in parallel on a robot, one of each at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskClass {
    /// Driving: `goto` and `path` tasks.
    Movement,
    /// Looking around with the robot's sensors: `perceive` tasks.
    Perception,
    /// Pointing the pan-tilt unit: `pan_tilt` tasks.
    PanTilt,
}

impl TaskClass {
    /// Every class, in slot order.
    pub const ALL: [TaskClass; 3] = [
        TaskClass::Movement,
        TaskClass::Perception,
        TaskClass::PanTilt,
    ];

    /// The class's slot (0, 1, 2).
    pub fn index(self) -> usize {
        match self {
            TaskClass::Movement => 0,
            TaskClass::Perception => 1,
            TaskClass::PanTilt => 2,
        }
    }

    /// The name used on the wire and in logs.
    pub fn name(self) -> &'static str {
        match self {
            TaskClass::Movement => "movement",
            TaskClass::Perception => "perception",
            TaskClass::PanTilt => "pan_tilt",
        }
    }
}

/// What a task asks for. The class follows from the kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum TaskKind {
    /// Drive to a point (movement).
    Goto {
        /// Goal x, metres in the frame of the robot's world.
        x: f64,
        /// Goal y, metres in the frame of the robot's world.
        y: f64,
    },
    /// Drive through a list of points in order (movement); each point is one basic task.
    Path {
        /// The points `[x, y]` to pass through, metres; at least one, at most `max_path_points`
        /// (4096 on the wire).
        points: Vec<[f64; 2]>,
    },
    /// Look around for `seconds` (perception).
    Perceive {
        /// How long to perceive, seconds (0 to 86,400, [`MAX_TASK_SECONDS`]).
        seconds: f64,
    },
    /// Point the pan-tilt unit (radians) and hold it for `seconds` (pan-tilt).
    PanTilt {
        /// Pan angle, radians (within ±2π, [`MAX_ANGLE`]).
        pan: f64,
        /// Tilt angle, radians (within ±2π, [`MAX_ANGLE`]).
        tilt: f64,
        /// How long to hold the unit there, seconds (0 to 86,400, [`MAX_TASK_SECONDS`]).
        seconds: f64,
    },
}

impl TaskKind {
    /// The class this kind belongs to.
    pub fn class(&self) -> TaskClass {
        match self {
            TaskKind::Goto { .. } | TaskKind::Path { .. } => TaskClass::Movement,
            TaskKind::Perceive { .. } => TaskClass::Perception,
            TaskKind::PanTilt { .. } => TaskClass::PanTilt,
        }
    }

    /// The basic tasks this task is made of, in order.
    pub fn basic_tasks(&self) -> Vec<BasicKind> {
        match self {
            TaskKind::Goto { x, y } => vec![BasicKind::GoTo { x: *x, y: *y }],
            TaskKind::Path { points } => points
                .iter()
                .map(|p| BasicKind::GoTo { x: p[0], y: p[1] })
                .collect(),
            TaskKind::Perceive { seconds } => vec![BasicKind::Perceive { seconds: *seconds }],
            TaskKind::PanTilt { pan, tilt, seconds } => vec![BasicKind::PanTilt {
                pan: *pan,
                tilt: *tilt,
                seconds: *seconds,
            }],
        }
    }

    /// How many basic tasks this task has.
    pub fn basic_count(&self) -> usize {
        match self {
            TaskKind::Path { points } => points.len(),
            _ => 1,
        }
    }

    /// The basic task at `index`.
    pub fn basic(&self, index: usize) -> Option<BasicKind> {
        match self {
            TaskKind::Path { points } => points
                .get(index)
                .map(|p| BasicKind::GoTo { x: p[0], y: p[1] }),
            _ if index == 0 => self.basic_tasks().into_iter().next(),
            _ => None,
        }
    }

    /// The first point a movement task goes to.
    pub fn first_point(&self) -> Option<(f64, f64)> {
        match self {
            TaskKind::Goto { x, y } => Some((*x, *y)),
            TaskKind::Path { points } => points.first().map(|p| (p[0], p[1])),
            _ => None,
        }
    }

    /// The last point a movement task leaves the robot at.
    pub fn last_point(&self) -> Option<(f64, f64)> {
        match self {
            TaskKind::Goto { x, y } => Some((*x, *y)),
            TaskKind::Path { points } => points.last().map(|p| (p[0], p[1])),
            _ => None,
        }
    }

    /// Straight-line length of a movement task from its first point to its last.
    pub fn own_length(&self) -> f64 {
        match self {
            TaskKind::Path { points } => points
                .windows(2)
                .map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]))
                .sum(),
            _ => 0.0,
        }
    }

    /// Checks the numbers: finite, durations from 0 to [`MAX_TASK_SECONDS`], angles within
    /// ±[`MAX_ANGLE`], at least one point.
    pub fn validate(&self, max_points: usize) -> Result<(), ValueError> {
        let finite = |name: &'static str, value: f64| {
            if value.is_finite() {
                Ok(())
            } else {
                Err(ValueError::NotFiniteFound { name, value })
            }
        };
        let duration = |v: f64| {
            finite("seconds", v)?;
            if v < 0.0 {
                Err(ValueError::NegativeSeconds(v))
            } else if v > MAX_TASK_SECONDS {
                Err(ValueError::TooLong(v))
            } else {
                Ok(())
            }
        };
        let angle = |name: &'static str, value: f64| {
            finite(name, value)?;
            if value.abs() > MAX_ANGLE {
                Err(ValueError::Angle { name, value })
            } else {
                Ok(())
            }
        };
        match self {
            TaskKind::Goto { x, y } => {
                finite("x", *x)?;
                finite("y", *y)
            }
            TaskKind::Path { points } => {
                if points.is_empty() {
                    return Err(ValueError::EmptyPath);
                }
                if points.len() > max_points {
                    return Err(ValueError::TooManyPoints {
                        max: max_points,
                        found: points.len(),
                    });
                }
                for p in points {
                    finite("x", p[0])?;
                    finite("y", p[1])?;
                }
                Ok(())
            }
            TaskKind::Perceive { seconds } => duration(*seconds),
            TaskKind::PanTilt { pan, tilt, seconds } => {
                angle("pan", *pan)?;
                angle("tilt", *tilt)?;
                duration(*seconds)
            }
        }
    }
}

/// Why a message's or a task's values were refused (what JSON itself cannot check).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// A number of a task is NaN or infinite.
    #[error("{name} must be a finite number, found {value}")]
    NotFiniteFound {
        /// The field holding it (`x`, `y`, `seconds`, `pan`, `tilt`).
        name: &'static str,
        /// The value found.
        value: f64,
    },
    /// A number of a message is NaN or infinite (the field's name: `speed`, `time`, `x`,
    /// `deadline`, …).
    #[error("{0} must be a finite number")]
    NotFinite(&'static str),
    /// A duration below zero (the seconds found).
    #[error("seconds must not be negative, found {0}")]
    NegativeSeconds(f64),
    /// A duration past [`MAX_TASK_SECONDS`] (the seconds found).
    #[error("seconds must be at most 86400 (one day), found {}", simrob_math::Shown(*.0))]
    TooLong(f64),
    /// A pan or tilt angle past ±[`MAX_ANGLE`].
    #[error("{name} must be within ±6.283 rad (one turn, 2π), found {}", simrob_math::Shown(*value))]
    Angle {
        /// The field (`pan`, `tilt`).
        name: &'static str,
        /// The value found, radians.
        value: f64,
    },
    /// A path task without any point.
    #[error("a path needs at least one point")]
    EmptyPath,
    /// A path task with more points than `max_path_points` allows.
    #[error("a path has at most {max} points (max_path_points), found {found}")]
    TooManyPoints {
        /// The limit (`max_path_points`).
        max: usize,
        /// How many points the path has.
        found: usize,
    },
    /// A task lists itself among its own preconditions.
    #[error("task {0} cannot be its own precondition")]
    OwnPrecondition(TaskId),
    /// A task lists a precondition more than once (the task named twice).
    #[error("precondition {0} is listed twice")]
    PreconditionTwice(TaskId),
    /// A robot introduced itself with id 0, which is the Control Center's.
    #[error("robot ids start at 1 (0 is the Control Center)")]
    RobotZero,
    /// A robot gave a negative cruise speed.
    #[error("speed must not be negative")]
    NegativeSpeed,
    /// A robot gave a cruise speed past [`MAX_SPEED`] (the value found).
    #[error("speed must be at most 1000000 (m/s), found {}", simrob_math::Shown(*.0))]
    TooFast(f64),
    /// A robot introduced itself with an id past [`MAX_ROBOT_ID`] (the id found).
    #[error(
        "robot ids go from 1 to 1073741823 (2^30 - 1), found {0}: larger ids are the server's own"
    )]
    RobotIdTooLarge(RobotId),
    /// A name or a line of text holds a control character (what it is, the character's code,
    /// its byte offset).
    #[error("{what} holds the control character U+{code:04X} at byte {at}: it must be one line of printable text (no tab, line break or other control character)")]
    ControlCharacter {
        /// What holds it (`robot name`, `task world`, `decline reason`, …).
        what: &'static str,
        /// The character's Unicode code point.
        code: u32,
        /// Its byte offset in the text.
        at: usize,
    },
    /// A name that must not be empty is (what it is: `robot kind`, `task world`, …).
    #[error("{0} is empty")]
    EmptyText(&'static str),
    /// A robot listed a task class twice among its capabilities (the class's name).
    #[error("capability {0} listed twice")]
    CapabilityTwice(&'static str),
    /// A status gave a battery charge outside 0..1 (the value found).
    #[error("battery is a fraction 0..1, found {0}")]
    Battery(f64),
    /// A bid's cost is negative or not finite (the value found).
    #[error("cost must be a finite number ≥ 0, found {0}")]
    Cost(f64),
}

/// One step of a task as the robot's lower layer runs it.
#[derive(Clone, Debug, PartialEq)]
pub enum BasicKind {
    /// Drive to the point (`x`, `y`).
    GoTo {
        /// Goal x, metres in the frame of the robot's world.
        x: f64,
        /// Goal y, metres in the frame of the robot's world.
        y: f64,
    },
    /// Perceive for `seconds`.
    Perceive {
        /// How long, seconds.
        seconds: f64,
    },
    /// Point the pan-tilt unit at (`pan`, `tilt`) and hold it for `seconds`.
    PanTilt {
        /// Pan angle, radians.
        pan: f64,
        /// Tilt angle, radians.
        tilt: f64,
        /// How long to hold it, seconds.
        seconds: f64,
    },
}

/// A task as the Control Center sends or announces it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    /// The task's id, unique across the system; 0 in an operator's request lets the Control Center
    /// choose one.
    pub id: TaskId,
    /// What the task asks for (its class follows from it).
    pub kind: TaskKind,
    /// Preconditions: tasks (of any robot) that must be ENDED before this one runs, each
    /// named once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<TaskId>,
    /// Only robots in this world may take it (e.g. `"mrs"`, `"simrob"`, `"swarm"`; one line
    /// of printable text, not empty: [`check_label`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world: Option<String>,
}

impl TaskSpec {
    /// A task without preconditions or world restriction.
    pub fn new(id: TaskId, kind: TaskKind) -> Self {
        TaskSpec {
            id,
            kind,
            after: Vec::new(),
            world: None,
        }
    }

    /// The task's class.
    pub fn class(&self) -> TaskClass {
        self.kind.class()
    }
}

/// Why a task failed. Numeric codes are stable (they appear in logs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailCode {
    /// 1: the robot has no capability for the task's class.
    NotCapable,
    /// 2: the task's preconditions form a cycle.
    Cycle,
    /// 3: the robot cannot reach the goal.
    Unreachable,
    /// 4: the robot's lower layer reported an error while running it.
    Execution,
    /// 5: the robot left the system while holding the task.
    RobotLeft,
    /// 6: a task with the same id is already on the robot.
    DuplicateId,
    /// 7: the task is in another world than the robot.
    WrongWorld,
}

impl FailCode {
    /// The stable number of this code.
    pub fn code(self) -> u16 {
        match self {
            FailCode::NotCapable => 1,
            FailCode::Cycle => 2,
            FailCode::Unreachable => 3,
            FailCode::Execution => 4,
            FailCode::RobotLeft => 5,
            FailCode::DuplicateId => 6,
            FailCode::WrongWorld => 7,
        }
    }
}

/// The state of a task, reported upward on every change.
///
/// ```text
/// QUEUED ──(preconditions ENDED, class free)──► RUNNING ──(all basic tasks done)──► ENDED
///   │  ╲──(a precondition ABORTED/FAILED)──► BLOCKED(by)             │
///   │                                           │                   └──(error)──► FAILED(code)
///   ├──(abort)──► ABORTED ◄──(abort)─────────────┴── RUNNING
///   └──(refused: class, cycle, world)──► FAILED(code)
/// ```
/// ENDED, ABORTED and FAILED are final; the Control Center's *clear* removes them from
/// tracking. BLOCKED stays until the operator aborts or clears the task: nothing cascades.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum TaskState {
    /// Held by a robot, waiting for its preconditions to be ENDED or for its class to be free.
    Queued,
    /// Its basic tasks are being run by the robot's lower layer.
    Running,
    /// Every basic task concluded: the task is done. The only state that satisfies a precondition.
    Ended,
    /// Stopped by the Control Center's abort (also one decided before any robot held it).
    Aborted,
    /// Refused or stopped by an error; `code` says why.
    Failed {
        /// Why the task failed.
        code: FailCode,
    },
    /// Queued, but a precondition (`by`, or a task it waits on) was aborted or failed.
    Blocked {
        /// The aborted or failed task that makes this one wait for good.
        by: TaskId,
    },
}

impl TaskState {
    /// Whether no further change will come (ENDED, ABORTED, FAILED).
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskState::Ended | TaskState::Aborted | TaskState::Failed { .. }
        )
    }

    /// Whether a task waiting on this one can never run (ABORTED, FAILED, BLOCKED).
    pub fn dooms_dependents(self) -> bool {
        matches!(
            self,
            TaskState::Aborted | TaskState::Failed { .. } | TaskState::Blocked { .. }
        )
    }
}

impl std::fmt::Display for TaskState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TaskState::Queued => write!(f, "QUEUED"),
            TaskState::Running => write!(f, "RUNNING"),
            TaskState::Ended => write!(f, "ENDED"),
            TaskState::Aborted => write!(f, "ABORTED"),
            TaskState::Failed { code } => write!(f, "FAILED({}:{code:?})", code.code()),
            TaskState::Blocked { by } => write!(f, "BLOCKED(by {by})"),
        }
    }
}

/// Which tasks a robot is running, one per class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Running {
    /// The movement task running, if any.
    pub movement: Option<TaskId>,
    /// The perception task running, if any.
    pub perception: Option<TaskId>,
    /// The pan-tilt task running, if any.
    pub pan_tilt: Option<TaskId>,
}

impl Running {
    /// The task running in `class`.
    pub fn get(&self, class: TaskClass) -> Option<TaskId> {
        match class {
            TaskClass::Movement => self.movement,
            TaskClass::Perception => self.perception,
            TaskClass::PanTilt => self.pan_tilt,
        }
    }
}

/// The standard robot status: every robot, whatever its kind, reports this structure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotStatus {
    /// The robot this status is of.
    pub robot: RobotId,
    /// Time Server time (s) when the status was taken.
    pub time: f64,
    /// False while the robot has not yet heard the Time Server (`time` is then local).
    pub synced: bool,
    /// Metres, in the frame of the robot's world.
    pub x: f64,
    /// y, metres in the frame of the robot's world.
    pub y: f64,
    /// Radians, counter-clockwise from +x.
    pub heading: f64,
    /// m/s.
    pub speed: f64,
    /// 0..1, or absent when the robot has no battery model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub battery: Option<f64>,
    /// The task running in each class.
    pub running: Running,
    /// Tasks held and not yet final (queued, blocked, running).
    pub queued: u32,
    /// False when the robot reports an error (`error` then says which).
    pub ok: bool,
    /// The robot's error, in its own words (`None` while all is well).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// What a robot says about itself when it joins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RobotInfo {
    /// The robot's id (1 to [`MAX_ROBOT_ID`]; 0 is the Control Center).
    pub robot: RobotId,
    /// A name for people (shown on the map and in logs). Name, kind and world are each one
    /// line of printable text, not empty ([`check_label`]).
    pub name: String,
    /// `sumbot`, `nomad`, `swarm`, …
    pub kind: String,
    /// The world the robot lives in: `simrob`, `mrs`, `swarm`, …
    pub world: String,
    /// The task classes it can run.
    pub capabilities: Vec<TaskClass>,
    /// Cruise speed, m/s (for cost estimates), 0 to 1,000,000 ([`MAX_SPEED`]).
    pub speed: f64,
}
