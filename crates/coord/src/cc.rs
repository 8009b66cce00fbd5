//! The Control Center (id 0): one view of every robot whatever its kind, allocation by the
//! operator, by a centralised policy or by Contract Net (switchable at any time), abort and
//! clear, and the three logs — tasks sent, robot status, task states — stamped with the
//! Time Server's time.
//!
//! Sans-IO: feed it envelopes ([`ControlCenter::handle`]; in one process, the robots'
//! messages in an [`Outbox`], bids as compact records: [`ControlCenter::handle_outbox`]) and
//! operator requests, call [`ControlCenter::handle_timeout`] with the local clock, and take
//! out what it sends ([`ControlCenter::poll_transmit`]) and logs ([`ControlCenter::poll_log`]).
//!
//! A task state a robot reports is relayed to the robots holding tasks that wait for it (the
//! GRI's task-state slots, read by each robot's Synchronize Tasks module only where it has
//! a precondition); a robot given a task later receives its preconditions' states with it
//! (kept for preconditions already cleared), so nothing depends on having heard every
//! state of the system. A robot that leaves hands its unfinished
//! tasks back to allocation. A task nobody bid on is logged and announced again every
//! `reannounce_period` seconds while the policy is Contract Net (logged in full the first
//! time, in a few words after); under a centralised policy it waits for an idle robot (one
//! whose tasks are all final or BLOCKED). Whatever the policy, a task goes only to a robot
//! that may take it ([`ControlCenter::send_task`]'s check: its class, its world): a bid
//! from any other counts as its refusal and is refused. A robot's message that fits
//! nothing the Control Center knows — a bid, accept or decline for an auction not open, a
//! task state for a task it does not hold — is refused, and neither logged nor relayed.
//!
//! Every table is bounded by a key of [`CcConfig`]: robots (`max_robots`, of which at most
//! `max_departed_robots` that have left), their names (`max_name_bytes`), tasks
//! (`max_tasks`), a path's points (`max_path_points`) and a task's coordinates
//! (`max_coordinate`); a request past one is refused naming the key, and changes nothing.

use std::collections::{BTreeMap, HashMap, VecDeque};

use thiserror::Error;

use crate::alloc::{greedy, hungarian, Idle};
use crate::cnp::{AuctionError, Auctioneer, CnpConfig, CnpOut, CostModel, Euclidean, IdSet};
use crate::model::{
    AuctionId, RobotId, RobotInfo, RobotStatus, Running, TaskClass, TaskId, TaskSpec, TaskState,
    ValueError, CONTROL_CENTER,
};
use crate::outbox::{CompactBid, Item, Outbox};
use crate::sync::find_cycle;
use crate::time::{ClockView, Stamp};
use crate::wire::valid_cost;
use crate::wire::{class_set, validate, Envelope, Msg, OperatorCommand, Policy, MAX_PATH_POINTS};

/// Default seconds between re-announcements of unallocated tasks (`reannounce_period`).
pub const DEFAULT_REANNOUNCE_PERIOD: f64 = 1.0;
/// Default most auctions open at once (`max_open_auctions`).
pub const DEFAULT_MAX_OPEN_AUCTIONS: usize = 10_000;
/// Default most tasks tracked at once (`max_tasks`).
pub const DEFAULT_MAX_TASKS: usize = 1_000_000;
/// Default most robots (`max_robots`).
pub const DEFAULT_MAX_ROBOTS: usize = 100_000;
/// Default most robots that have left kept in the table (`max_departed_robots`).
pub const DEFAULT_MAX_DEPARTED_ROBOTS: usize = 1_000;
/// Default most finished tasks kept in the table (`max_final_tasks`).
pub const DEFAULT_MAX_FINAL_TASKS: usize = 10_000;
/// Default longest robot name, kind or world, bytes (`max_name_bytes`).
pub const DEFAULT_MAX_NAME_BYTES: usize = 256;
/// Default largest |x| or |y| of a task's point, metres (`max_coordinate`): far beyond any
/// robot's map, and short in a log.
pub const DEFAULT_MAX_COORDINATE: f64 = 1e6;
/// Default seconds a centralised round waits after the first change it could use
/// (`round_period`): 0, a round at the next [`ControlCenter::handle_timeout`] (what an
/// in-process run wants, where everything of a frame arrives before it).
pub const DEFAULT_ROUND_PERIOD: f64 = 0.0;

/// Control Center settings (every one a documented key of `simrob coord serve`).
#[derive(Clone, Debug)]
pub struct CcConfig {
    /// How tasks are allocated at start (`policy`, default Contract Net); the operator may switch
    /// it at any time.
    pub policy: Policy,
    /// Auction timing: the bid and accept windows.
    pub cnp: CnpConfig,
    /// Seconds of Time Server time between announcements again of tasks nobody took
    /// (`reannounce_period`, default 1 s).
    pub reannounce_period: f64,
    /// Most Contract Net auctions open at once (`max_open_auctions`, default 10 000): beyond it
    /// submitted tasks wait and an operator's announce is refused.
    pub max_open_auctions: usize,
    /// Most tasks tracked at once (`max_tasks`, default 1 000 000), finished ones kept for the
    /// reports included: a new task beyond it is refused.
    pub max_tasks: usize,
    /// Most finished tasks (ended, failed, aborted) kept for the reports (`max_final_tasks`,
    /// default 10 000): beyond it, the one that finished longest ago is cleared, as the
    /// operator's `clear` would (its robot is told to forget it too). A Control Center that
    /// runs for days keeps its table to the work in hand. As many ended auctions are
    /// remembered, to answer a late accept with `cancel` ([`Auctioneer::with_closed_limit`]).
    pub max_final_tasks: usize,
    /// Most robots known, present or gone (`max_robots`, default 100 000): a new robot beyond it
    /// takes the place of the robot that left longest ago, and is refused when none has left.
    pub max_robots: usize,
    /// Most robots that have left kept in the table (`max_departed_robots`, default 1 000):
    /// beyond it, the one that left longest ago is forgotten.
    pub max_departed_robots: usize,
    /// Longest robot name, kind or world, and task world, in bytes (`max_name_bytes`, default
    /// 256): a `hello` or a task with a longer one is refused.
    pub max_name_bytes: usize,
    /// Most points of a path task (`max_path_points`, default and at most 4096, the wire's
    /// limit): a task with more is refused.
    pub max_path_points: usize,
    /// Largest |x| or |y| of a task's point, metres (`max_coordinate`, default 1 000 000): a
    /// task beyond it is refused.
    pub max_coordinate: f64,
    /// Seconds of Time Server time a centralised round (`hungarian`, `greedy`) waits after the
    /// first change it could use — a task submitted, a robot joined, idle or gone
    /// (`round_period`, default 0: at the next [`ControlCenter::handle_timeout`]). Everything
    /// that arrives meanwhile is assigned together, so the optimal assignment sees the whole
    /// problem rather than one message at a time.
    pub round_period: f64,
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig {
            policy: Policy::Cnp,
            cnp: CnpConfig::default(),
            reannounce_period: DEFAULT_REANNOUNCE_PERIOD,
            max_open_auctions: DEFAULT_MAX_OPEN_AUCTIONS,
            max_tasks: DEFAULT_MAX_TASKS,
            max_robots: DEFAULT_MAX_ROBOTS,
            max_departed_robots: DEFAULT_MAX_DEPARTED_ROBOTS,
            max_final_tasks: DEFAULT_MAX_FINAL_TASKS,
            max_name_bytes: DEFAULT_MAX_NAME_BYTES,
            max_path_points: MAX_PATH_POINTS,
            max_coordinate: DEFAULT_MAX_COORDINATE,
            round_period: DEFAULT_ROUND_PERIOD,
        }
    }
}

impl CcConfig {
    /// Refuses a name (of a robot, its kind or world, a task's world) over `max_name_bytes`,
    /// empty, or not one line of printable text ([`crate::model::check_label`]: a tab or a
    /// line break would forge fields and lines of the logs and tables).
    fn check_name(&self, what: &'static str, text: &str) -> Result<(), CcError> {
        if text.len() > self.max_name_bytes {
            return Err(CcError::TooLong {
                what,
                found: text.len(),
                limit: self.max_name_bytes,
                key: "max_name_bytes",
            });
        }
        crate::model::check_label(what, text)?;
        Ok(())
    }

    /// Refuses a task over these limits: more points than `max_path_points`, a point beyond
    /// `max_coordinate`, a world name longer than `max_name_bytes` (what the Control Center
    /// checks of every task it is given; a task file can be checked the same way up front).
    pub fn check_limits(&self, spec: &TaskSpec) -> Result<(), CcError> {
        use crate::model::TaskKind;
        let limit = self.max_coordinate;
        let point = |x: f64, y: f64| {
            for (name, value) in [("x", x), ("y", y)] {
                // (NaN was refused before; it is not within the limit either.)
                if value.is_nan() || value.abs() > limit {
                    return Err(CcError::Coordinate {
                        name,
                        value,
                        limit,
                        key: "max_coordinate",
                    });
                }
            }
            Ok(())
        };
        match &spec.kind {
            TaskKind::Goto { x, y } => point(*x, *y)?,
            TaskKind::Path { points } => {
                if points.len() > self.max_path_points {
                    return Err(ValueError::TooManyPoints {
                        max: self.max_path_points,
                        found: points.len(),
                    }
                    .into());
                }
                for p in points {
                    point(p[0], p[1])?;
                }
            }
            TaskKind::Perceive { .. } | TaskKind::PanTilt { .. } => {}
        }
        if let Some(w) = &spec.world {
            self.check_name("task world", w)?;
        }
        Ok(())
    }
}

/// Which of the three logs a line belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LogKind {
    /// Tasks sent, announced, awarded, unallocated, aborted, cleared.
    Tasks,
    /// Every robot status received.
    Status,
    /// Every new task and every state change, with the robot it belongs to.
    States,
}

impl LogKind {
    /// The log's file name.
    pub fn file_name(self) -> &'static str {
        match self {
            LogKind::Tasks => "tasks.log",
            LogKind::Status => "status.log",
            LogKind::States => "states.log",
        }
    }
}

/// One log line (tab-separated fields; the first is the common time).
#[derive(Clone, Debug, PartialEq)]
pub struct LogLine {
    /// Which log it belongs to.
    pub kind: LogKind,
    /// When it was written: Time Server time, or the local clock marked unsynced.
    pub time: Stamp,
    /// The tab-separated fields after the time.
    pub text: String,
}

impl std::fmt::Display for LogLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\t{}", self.time, self.text)
    }
}

/// A robot as the Control Center sees it.
#[derive(Clone, Debug)]
pub struct RobotEntry {
    /// What the robot said about itself when it joined.
    pub info: RobotInfo,
    /// Its latest standard status (`None` before the first).
    pub status: Option<RobotStatus>,
    /// Whether it is in the system now (false once it has left).
    pub present: bool,
    /// Tasks allocated to it that it may still run: neither final nor BLOCKED (a robot with
    /// none is idle for a centralised round).
    pub assigned: usize,
}

/// Where a task is in allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Allocation {
    /// Waiting for a robot (centralised policy, or an auction nobody won).
    Waiting,
    /// Being auctioned.
    Auction(AuctionId),
    /// Held by a robot.
    Robot(RobotId),
}

/// A task as the Control Center sees it.
#[derive(Clone, Debug)]
pub struct TaskEntry {
    /// The task as admitted, with its id; once a robot has held it, with that robot's world
    /// (a task handed back to allocation goes to a robot of the same world only).
    pub spec: TaskSpec,
    /// Where it is in allocation: waiting, in an auction or held by a robot.
    pub allocation: Allocation,
    /// The latest state its robot reported (`None` before any).
    pub state: Option<TaskState>,
    /// Abort requested while it was not yet with a robot.
    pub abort_pending: bool,
    /// Final states of preconditions that were cleared before this task reached a robot
    /// (sent to the robot with the task).
    pub settled_after: Vec<(TaskId, TaskState)>,
    /// How many times it has been announced for bids (the log describes it in full the first
    /// time only).
    pub announced: u32,
}

/// How a robot is doing, as the map shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// Joined, no status received yet.
    Silent,
    /// Running no task.
    Idle,
    /// Running at least one task.
    Busy,
    /// Its last status reported an error.
    Error,
    /// It left (or its connection closed).
    Left,
}

/// A robot on the Control Center's map: plain data for a 2D view.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RobotView {
    /// The robot's id.
    pub robot: RobotId,
    /// The robot's name.
    pub name: String,
    /// `sumbot`, `nomad`, `swarm`, …
    pub kind: String,
    /// The world its position is in (`simrob`, `mrs`, `swarm`, …).
    pub world: String,
    /// x, y (metres, its world's frame) and heading (radians), from its last status.
    pub pose: Option<[f64; 3]>,
    /// How it is doing: silent, idle, busy, in error or left.
    pub condition: Condition,
    /// The task running in each class.
    pub running: Running,
    /// Tasks it holds and has not finished.
    pub queued: u32,
    /// Battery charge 0..1 from its last status (`None`: no status yet, or no battery model).
    pub battery: Option<f64>,
    /// Time Server time of its last status.
    pub seen: Option<f64>,
}

/// A task on the Control Center's map.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TaskView {
    /// The task's id.
    pub task: TaskId,
    /// As the operator would write it (`goto 3 4 after 2`).
    pub what: String,
    /// Its class: movement, perception or pan-tilt.
    pub class: TaskClass,
    /// Where it is in allocation.
    pub allocation: Allocation,
    /// The robot holding it, if one does.
    pub robot: Option<RobotId>,
    /// Its latest state (`None`: no robot has reported it yet).
    pub state: Option<TaskState>,
    /// Where a movement task ends (its goal); `None` for perception and pan-tilt.
    pub target: Option<[f64; 2]>,
}

/// What the Control Center knows, as plain data: every robot whatever its kind, every
/// task tracked, the time and the allocation policy.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MapView {
    /// Time Server time.
    pub time: f64,
    /// Whether the Control Center has heard the Time Server (otherwise `time` is its local clock).
    pub synced: bool,
    /// The allocation policy in force.
    pub policy: Policy,
    /// Every robot that joined, in id order (those that left too).
    pub robots: Vec<RobotView>,
    /// Every task tracked, in id order (until it is cleared).
    pub tasks: Vec<TaskView>,
}

/// Why the Control Center refused a request (nothing changed).
#[derive(Clone, Debug, Error, PartialEq)]
pub enum CcError {
    /// No robot with this id has joined.
    #[error("there is no robot {0}")]
    UnknownRobot(RobotId),
    /// The robot has left the system.
    #[error("robot {0} has left")]
    RobotGone(RobotId),
    /// A robot present now already has this id.
    #[error("robot id {0} is already in use")]
    RobotIdTaken(RobotId),
    /// No task with this id is tracked.
    #[error("there is no task {0}")]
    UnknownTask(TaskId),
    /// A task with this id is already tracked.
    #[error("task id {0} is already in use")]
    TaskIdTaken(TaskId),
    /// The task's preconditions would close a dependency cycle.
    #[error("task {task}: its preconditions close a cycle ({})", cycle.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(" → "))]
    Cycle {
        /// The task refused.
        task: TaskId,
        /// The cycle, from the task back to itself.
        cycle: Vec<TaskId>,
    },
    /// Only a final (or BLOCKED) task can be cleared: abort it first.
    #[error("task {0} is not final yet: abort it first")]
    NotFinal(TaskId),
    /// The task is already ENDED, ABORTED or FAILED: there is nothing to abort.
    #[error("task {0} is already final")]
    AlreadyFinal(TaskId),
    /// The robot has no capability for the task's class.
    #[error("robot {robot} cannot run {class} tasks")]
    NotCapable {
        /// The robot.
        robot: RobotId,
        /// The class's name (`movement`, `perception`, `pan_tilt`).
        class: &'static str,
    },
    /// A configured limit is reached.
    #[error("too many {what} (limit {limit}, key {key})")]
    Limit {
        /// What there would be too many of (`robots`, `tasks`, `open auctions`).
        what: &'static str,
        /// The limit's value.
        limit: usize,
        /// The setting that sets it.
        key: &'static str,
    },
    /// A name (a robot's name, kind or world, a task's world) longer than a configured limit.
    #[error("invalid: {what} is {found} bytes, longer than {limit} (key {key})")]
    TooLong {
        /// What is too long (`robot name`, `robot kind`, `robot world`, `task world`).
        what: &'static str,
        /// Its length, bytes.
        found: usize,
        /// The limit, bytes.
        limit: usize,
        /// The setting that sets it (`max_name_bytes`).
        key: &'static str,
    },
    /// A task's coordinate beyond a configured limit.
    #[error("invalid: {name} = {} is beyond ±{} m (key {key})", short(*value), short(*limit))]
    Coordinate {
        /// The field (`x`, `y`).
        name: &'static str,
        /// The value found.
        value: f64,
        /// The limit, metres.
        limit: f64,
        /// The setting that sets it (`max_coordinate`).
        key: &'static str,
    },
    /// A task's or a message's values are invalid.
    #[error("invalid: {0}")]
    Value(#[from] ValueError),
    /// A participant said goodbye in another robot's name.
    #[error("invalid: robot {from} cannot say goodbye for robot {robot}")]
    ByeFor {
        /// The sender.
        from: RobotId,
        /// The robot it named.
        robot: RobotId,
    },
    /// A participant sent a status, task state, bid or answer in another robot's name.
    #[error("invalid: robot {from} cannot speak for robot {robot}")]
    SpeaksFor {
        /// The sender.
        from: RobotId,
        /// The robot it named.
        robot: RobotId,
    },
    /// A robot tried to join with id 0, which is the Control Center's.
    #[error("invalid: robot ids start at 1")]
    ControlCenterId,
    /// The task is restricted to another world than the robot's.
    #[error("invalid: task is for world {task}, robot {robot} is in {robot_world}")]
    OtherWorld {
        /// The task's world.
        task: String,
        /// The robot.
        robot: RobotId,
        /// The robot's world.
        robot_world: String,
    },
    /// The Control Center sends messages of this kind but never takes them (the message's name).
    #[error("{0} messages are not for the Control Center")]
    NotForMe(&'static str),
    /// A bid, accept or decline the auction it names cannot take (see [`AuctionError`]).
    #[error("{0}")]
    Auction(#[from] AuctionError),
    /// A robot reported the state of a task it does not hold (another robot's, one waiting
    /// for allocation, or one cleared).
    #[error("robot {robot} does not hold task {task}")]
    NotItsTask {
        /// The robot.
        robot: RobotId,
        /// The task.
        task: TaskId,
    },
}

/// Makes and keeps a log line only when someone wants it (files, a following operator,
/// `tracing`), so a run without logs formats nothing.
macro_rules! cclog {
    ($cc:expr, $kind:expr, $($arg:tt)*) => {
        if $cc.logging() {
            let text = format!($($arg)*);
            $cc.log($kind, text);
        }
    };
}

/// The Control Center.
pub struct ControlCenter {
    config: CcConfig,
    clock: ClockView,
    robots: BTreeMap<RobotId, RobotEntry>,
    tasks: BTreeMap<TaskId, TaskEntry>,
    next_task: TaskId,
    auctions: Auctioneer,
    by_auction: HashMap<AuctionId, TaskId>,
    /// Tasks waiting for allocation, in order of arrival.
    waiting: VecDeque<TaskId>,
    /// Tasks whose auction found no taker, to announce again.
    retry: VecDeque<TaskId>,
    /// Robots that have left and are still in the table, the one that left longest ago first.
    departed: VecDeque<RobotId>,
    /// Tasks in the table that are final, the one that became final longest ago first (an id
    /// no longer final, or no longer in the table, is passed over: see `note_final`).
    finals: VecDeque<TaskId>,
    /// Tasks that became final, and robots that joined, since the last re-announcement:
    /// room that may have opened for the tasks in `retry`.
    freed: usize,
    cost: Box<dyn CostModel + Send>,
    next_reannounce: f64,
    /// Something changed that a centralised round could use.
    dirty: bool,
    /// When the centralised round is due (Time Server time; set when `dirty` becomes true).
    round_at: f64,
    out: VecDeque<Envelope>,
    logs: VecDeque<LogLine>,
    /// Operators that asked to follow the logs.
    followers: Vec<RobotId>,
    /// The robots present now (a bit each: the hot checks do not touch `robots`).
    present: IdSet,
    /// Log lines are kept for [`ControlCenter::poll_log`] (off after `drop_logs`).
    keep_logs: bool,
    /// For each task, the tasks that wait for it: a task's state is relayed to the robots
    /// holding those (their Synchronize Tasks modules read it), not to everyone.
    dependents: HashMap<TaskId, Vec<TaskId>>,
    /// Tasks a robot was told to drop (a BLOCKED task cleared, an award cancelled) whose
    /// last states may still be on their way: taken quietly until a final one, not refused.
    dropping: std::collections::HashSet<(RobotId, TaskId)>,
    /// For each task world (or none) and class, the robots present that may not take such a
    /// task ([`ControlCenter::fits`] refuses them): their bids count as refusals. Emptied
    /// whenever a robot joins or leaves.
    unfit: HashMap<Option<String>, [Option<IdSet>; 3]>,
    now_local: f64,
}

impl std::fmt::Debug for ControlCenter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlCenter")
            .field("policy", &self.config.policy)
            .field("robots", &self.robots.len())
            .field("tasks", &self.tasks.len())
            .finish_non_exhaustive()
    }
}

impl ControlCenter {
    /// A Control Center with `config`, costs by straight-line distance.
    pub fn new(config: CcConfig) -> Self {
        let auctions =
            Auctioneer::new(CONTROL_CENTER, config.cnp).with_closed_limit(config.max_final_tasks);
        ControlCenter {
            config,
            clock: ClockView::default(),
            robots: BTreeMap::new(),
            tasks: BTreeMap::new(),
            next_task: 1,
            auctions,
            by_auction: HashMap::new(),
            waiting: VecDeque::new(),
            retry: VecDeque::new(),
            departed: VecDeque::new(),
            finals: VecDeque::new(),
            freed: 0,
            cost: Box::new(Euclidean),
            next_reannounce: 0.0,
            dirty: false,
            round_at: 0.0,
            out: VecDeque::new(),
            logs: VecDeque::new(),
            followers: Vec::new(),
            present: IdSet::default(),
            keep_logs: true,
            dependents: HashMap::new(),
            dropping: Default::default(),
            unfit: HashMap::new(),
            now_local: 0.0,
        }
    }

    /// Uses another cost model for centralised allocation.
    pub fn set_cost_model(&mut self, model: Box<dyn CostModel + Send>) {
        self.cost = model;
    }

    /// The common time now.
    pub fn now(&self) -> Stamp {
        self.clock.now(self.now_local)
    }

    fn t(&self) -> f64 {
        self.now().time
    }

    /// Whether a log line would go anywhere.
    fn logging(&self) -> bool {
        self.keep_logs
            || !self.followers.is_empty()
            || tracing::enabled!(target: "simrob_coord::cc", tracing::Level::DEBUG)
    }

    fn log(&mut self, kind: LogKind, text: String) {
        let line = LogLine {
            kind,
            time: self.now(),
            text,
        };
        {
            for &f in &self.followers {
                self.out.push_back(Envelope {
                    from: CONTROL_CENTER,
                    to: Some(f),
                    msg: Msg::Report {
                        text: format!("{}\t{}", kind.file_name(), line),
                    },
                });
            }
        }
        tracing::debug!(target: "simrob_coord::cc", log = kind.file_name(), "{line}");
        if self.keep_logs {
            self.logs.push_back(line);
        }
    }

    fn send(&mut self, to: Option<RobotId>, msg: Msg) {
        self.out.push_back(Envelope {
            from: CONTROL_CENTER,
            to,
            msg,
        });
    }

    /// Marks a change a centralised round could use: the round is due `round_period` after
    /// the first such change since the last round.
    fn changed(&mut self) {
        if !self.dirty {
            self.dirty = true;
            self.round_at = self.t() + self.config.round_period;
        }
    }

    /// The current allocation policy.
    pub fn policy(&self) -> Policy {
        self.config.policy
    }

    /// The robots, by id.
    pub fn robots(&self) -> &BTreeMap<RobotId, RobotEntry> {
        &self.robots
    }

    /// The tracked tasks, by id.
    pub fn tasks(&self) -> &BTreeMap<TaskId, TaskEntry> {
        &self.tasks
    }

    /// Tasks waiting for a robot (never announced, or announced without a taker).
    pub fn waiting(&self) -> usize {
        self.waiting.len() + self.retry.len()
    }

    /// Auction counters.
    pub fn cnp_stats(&self) -> crate::cnp::CnpStats {
        self.auctions.stats
    }

    /// Hears the Time Server (in-process shells call this directly).
    pub fn hear_clock(&mut self, seq: u64, time: f64, local: f64) {
        self.now_local = local;
        self.clock.hear(seq, time, local);
    }

    /// Handles one message from the network, at local time `local`.
    #[inline]
    pub fn handle(&mut self, env: Envelope, local: f64) -> Result<(), CcError> {
        // The message of every robot in every auction, taken without moving the envelope
        // through the general path (the same checks, the same effect).
        if let Msg::Bid {
            auction,
            robot,
            cost,
        } = env.msg
        {
            if env.from == robot && self.present.contains(robot) && cost.is_none_or(valid_cost) {
                self.now_local = local;
                let now = self.t();
                // (Why, before the auction may end and forget its task.)
                let taken = self
                    .auctions
                    .on_bid(auction, robot, cost, now)
                    .map_err(|e| self.auction_error(e));
                self.pump_auctions();
                return taken;
            }
        }
        self.handle_any(env, local)
    }

    /// Handles messages from the network in order, at local time `local`, and empties
    /// `envs`: the same as [`ControlCenter::handle`] for each (they go through an
    /// [`Outbox`], see [`ControlCenter::handle_outbox`]). Returns why messages were refused,
    /// in order.
    pub fn handle_all(&mut self, envs: &mut Vec<Envelope>, local: f64) -> Vec<CcError> {
        let mut outbox = Outbox::new();
        outbox.extend(envs.drain(..));
        self.handle_outbox(&mut outbox, local)
    }

    /// Handles the messages of an [`Outbox`] in order, at local time `local`, and empties it
    /// (keeping its buffers): the same as [`ControlCenter::handle`] for each message, the
    /// bids of one auction that arrive together taken with the auction looked up once and
    /// read in place, without an envelope each. Returns why messages were refused, in order.
    pub fn handle_outbox(&mut self, outbox: &mut Outbox, local: f64) -> Vec<CcError> {
        let mut refused = Vec::new();
        let Outbox { items, bids } = outbox;
        for item in items.drain(..) {
            match item {
                Item::Env(env) => {
                    if let Err(e) = self.handle(env, local) {
                        refused.push(e);
                    }
                }
                Item::Bids {
                    auction,
                    start,
                    len,
                } => {
                    let mut rest = &bids[start..start + len];
                    while let Some(&first) = rest.first() {
                        let taken = self.bid_run(auction, rest, local);
                        if taken > 0 {
                            rest = &rest[taken..];
                            continue;
                        }
                        // A bid the general path must look at (it says why).
                        if let Err(e) = self.handle(first.envelope(auction), local) {
                            refused.push(e);
                        }
                        rest = &rest[1..];
                    }
                }
            }
        }
        bids.clear();
        refused
    }

    /// Takes the plain bids for `auction` at the start of `bids` (in time, from a robot
    /// present and still to answer) until bidding completes; returns how many it took (0:
    /// the first is not one). Each has exactly the effect of [`ControlCenter::handle`] on
    /// its message.
    fn bid_run(&mut self, auction: AuctionId, bids: &[CompactBid], local: f64) -> usize {
        // Only while handling a bid has no other effect than the bid (nothing waits to be
        // announced, nothing to send out).
        if self.auctions.has_output()
            || (self.config.policy == Policy::Cnp && !self.waiting.is_empty())
        {
            return 0;
        }
        self.now_local = local;
        let now = self.t();
        let present = &self.present;
        let Some(mut run) = self.auctions.bid_run(auction, now) else {
            return 0;
        };
        let mut taken = 0;
        let mut complete = false;
        for b in bids {
            // Compact bids are in the sender's own name with a valid cost or none.
            if !present.contains(b.robot) || !run.take(b.robot, b.cost) {
                break;
            }
            taken += 1;
            if run.complete() {
                complete = true;
                break;
            }
        }
        if complete {
            self.auctions.close_bidding_now(auction, now);
            self.pump_auctions();
        }
        taken
    }

    #[inline(never)]
    fn handle_any(&mut self, env: Envelope, local: f64) -> Result<(), CcError> {
        self.now_local = local;
        validate(&env.msg)?;
        let from = env.from;
        match env.msg {
            Msg::Hello { info } => self.join(*info),
            Msg::Bye { robot } => {
                if robot != from {
                    return Err(CcError::ByeFor { from, robot });
                }
                self.leave(robot);
                Ok(())
            }
            Msg::Clock { seq, time } => {
                self.clock.hear(seq, time, local);
                Ok(())
            }
            Msg::Status { status } => {
                let robot = status.robot;
                self.check_sender(from, robot)?;
                cclog!(self, LogKind::Status, "{}", status_line(&status));
                if let Some(r) = self.robots.get_mut(&robot) {
                    r.status = Some(*status);
                }
                self.changed();
                Ok(())
            }
            msg @ Msg::TaskState {
                robot, task, state, ..
            } => {
                self.check_sender(from, robot)?;
                if self.task_state(robot, task, state)? {
                    self.relay(robot, task, msg);
                }
                Ok(())
            }
            Msg::Bid {
                auction,
                robot,
                cost,
            } => {
                self.check_sender(from, robot)?;
                let now = self.t();
                let taken = self
                    .auctions
                    .on_bid(auction, robot, cost, now)
                    .map_err(|e| self.auction_error(e));
                self.pump_auctions();
                taken
            }
            Msg::Accept { auction, robot } => {
                self.check_sender(from, robot)?;
                let now = self.t();
                self.auctions.on_accept(auction, robot, now)?;
                self.pump_auctions();
                Ok(())
            }
            Msg::Decline {
                auction,
                robot,
                reason,
            } => {
                self.check_sender(from, robot)?;
                let now = self.t();
                self.auctions.on_decline(auction, robot, now)?;
                // Logged before what the decline leads to (the next award).
                cclog!(
                    self,
                    LogKind::Tasks,
                    "declined\trobot={robot}\tauction={auction}\t{reason}"
                );
                self.pump_auctions();
                Ok(())
            }
            Msg::Operator { command } => {
                let answer = self.operator(from, *command);
                let text = match answer {
                    Ok(text) => text,
                    Err(e) => format!("error: {e}"),
                };
                self.send(Some(from), Msg::Report { text });
                Ok(())
            }
            other => Err(CcError::NotForMe(other.name())),
        }
    }

    /// Why an auction did not take a robot's message, in the Control Center's words: a bid
    /// from a robot that may not take the task says why, as `send` would.
    #[cold]
    fn auction_error(&self, e: AuctionError) -> CcError {
        if let AuctionError::Unfit { auction, robot } = e {
            let spec = self
                .by_auction
                .get(&auction)
                .and_then(|t| self.tasks.get(t))
                .map(|t| &t.spec);
            if let Some(Err(why)) = spec.map(|s| self.fits(s, robot)) {
                return why;
            }
        }
        CcError::Auction(e)
    }

    #[inline]
    fn check_sender(&self, from: RobotId, robot: RobotId) -> Result<(), CcError> {
        if from == robot && self.present.contains(robot) {
            return Ok(());
        }
        self.sender_error(from, robot)
    }

    #[cold]
    fn sender_error(&self, from: RobotId, robot: RobotId) -> Result<(), CcError> {
        if from != robot {
            return Err(CcError::SpeaksFor { from, robot });
        }
        match self.robots.get(&robot) {
            None => Err(CcError::UnknownRobot(robot)),
            Some(r) if !r.present => Err(CcError::RobotGone(robot)),
            Some(_) => Ok(()),
        }
    }

    /// A robot joins (or comes back with the same id).
    pub fn join(&mut self, info: RobotInfo) -> Result<(), CcError> {
        let id = info.robot;
        if id == CONTROL_CENTER {
            return Err(CcError::ControlCenterId);
        }
        for (what, text) in [
            ("robot name", &info.name),
            ("robot kind", &info.kind),
            ("robot world", &info.world),
        ] {
            self.check_name(what, text)?;
        }
        match self.robots.get(&id) {
            Some(r) if r.present => return Err(CcError::RobotIdTaken(id)),
            Some(_) => self.departed.retain(|&d| d != id),
            None if self.robots.len() >= self.config.max_robots => {
                // The robot that left longest ago gives its place; with none gone, refused.
                let Some(gone) = self.departed.pop_front() else {
                    return Err(CcError::Limit {
                        what: "robots",
                        limit: self.config.max_robots,
                        key: "max_robots",
                    });
                };
                self.forget(gone);
            }
            None => {}
        }
        cclog!(
            self,
            LogKind::Tasks,
            "joined\trobot={id}\t{} {} in {} ({})",
            info.kind,
            info.name,
            info.world,
            info.capabilities
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(",")
        );
        self.robots.insert(
            id,
            RobotEntry {
                info,
                status: None,
                present: true,
                assigned: 0,
            },
        );
        self.present.insert(id);
        self.unfit.clear();
        self.send(Some(id), Msg::Welcome { robot: id });
        self.changed();
        Ok(())
    }

    /// A robot leaves (said goodbye, or its connection closed): its bids are dropped and its
    /// unfinished tasks go back to allocation.
    pub fn leave(&mut self, robot: RobotId) {
        let Some(r) = self.robots.get_mut(&robot) else {
            return;
        };
        if !r.present {
            return;
        }
        r.present = false;
        r.assigned = 0;
        // It runs nothing now: the table shows it so (its last pose stays).
        if let Some(st) = r.status.as_mut() {
            st.running = Running::default();
            st.queued = 0;
        }
        self.present.remove(robot);
        self.unfit.clear();
        self.dropping.retain(|&(r, _)| r != robot);
        self.departed.push_back(robot);
        while self.departed.len() > self.config.max_departed_robots {
            if let Some(gone) = self.departed.pop_front() {
                self.forget(gone);
            }
        }
        let now = self.t();
        self.auctions.robot_left(robot, now);
        let mut back = Vec::new();
        for (id, t) in self.tasks.iter_mut() {
            if t.allocation == Allocation::Robot(robot) && !t.state.is_some_and(TaskState::is_final)
            {
                t.allocation = Allocation::Waiting;
                back.push((*id, t.state.take()));
            }
        }
        for &(id, old) in &back {
            let old = old.map(|s| s.to_string()).unwrap_or_else(|| "new".into());
            cclog!(
                self,
                LogKind::States,
                "robot={robot}\ttask={id}\t{old}→new\t(robot {robot} left: back to allocation)"
            );
        }
        cclog!(
            self,
            LogKind::Tasks,
            "left\trobot={robot}\t{} tasks back to allocation",
            back.len()
        );
        for (id, _) in back {
            self.waiting.push_back(id);
        }
        self.changed();
        self.pump_auctions();
    }

    /// Drops a robot that has left from the table (its finished tasks keep its id).
    fn forget(&mut self, robot: RobotId) {
        if self.robots.get(&robot).is_some_and(|r| !r.present) {
            self.robots.remove(&robot);
            cclog!(
                self,
                LogKind::Tasks,
                "forgotten\trobot={robot}\tleft longest ago (max_departed_robots, max_robots)"
            );
        }
    }

    /// Refuses a name (of a robot, its kind or world, a task's world) over `max_name_bytes`.
    fn check_name(&self, what: &'static str, text: &str) -> Result<(), CcError> {
        self.config.check_name(what, text)
    }

    /// Refuses a task over the configured limits (see [`CcConfig::check_limits`]).
    fn check_limits(&self, spec: &TaskSpec) -> Result<(), CcError> {
        self.config.check_limits(spec)
    }

    /// A robot's report of a task's state: true if it is news to relay. A task the robot
    /// does not hold is refused (nothing logged, nothing relayed), except the last words on
    /// a task it was told to drop, taken quietly.
    fn task_state(
        &mut self,
        robot: RobotId,
        task: TaskId,
        state: TaskState,
    ) -> Result<bool, CcError> {
        let holds = self
            .tasks
            .get(&task)
            .is_some_and(|t| t.allocation == Allocation::Robot(robot));
        if !holds {
            if self.dropping.contains(&(robot, task)) {
                if state.is_final() {
                    self.dropping.remove(&(robot, task));
                }
                return Ok(false);
            }
            // The winner of the task's auction, whose accept is still on its way.
            let winner = match self.tasks.get(&task).map(|t| t.allocation) {
                Some(Allocation::Auction(a)) => self.auctions.awarded_to(a),
                _ => None,
            };
            if winner == Some(robot) {
                return Ok(false);
            }
            return Err(match self.tasks.contains_key(&task) {
                true => CcError::NotItsTask { robot, task },
                false => CcError::UnknownTask(task),
            });
        }
        let Some(t) = self.tasks.get_mut(&task) else {
            return Err(CcError::UnknownTask(task));
        };
        let old = t.state.replace(state);
        if old == Some(state) {
            return Ok(false);
        }
        let became_final = state.is_final() && !old.is_some_and(TaskState::is_final);
        let old_text = old.map(|s| s.to_string()).unwrap_or_else(|| "new".into());
        // A BLOCKED task keeps its robot no more than a final one: the robot is idle for
        // a centralised round once all it holds is final or blocked.
        match (may_run(old), may_run(Some(state))) {
            (true, false) => {
                if let Some(r) = self.robots.get_mut(&robot) {
                    r.assigned = r.assigned.saturating_sub(1);
                }
                self.changed();
            }
            (false, true) => {
                if let Some(r) = self.robots.get_mut(&robot) {
                    r.assigned += 1;
                }
            }
            _ => {}
        }
        if became_final {
            self.freed += 1;
        }
        cclog!(
            self,
            LogKind::States,
            "robot={robot}\ttask={task}\t{old_text}→{state}"
        );
        if became_final {
            self.note_final(task);
        }
        Ok(true)
    }

    /// Relays a task-state message to the robots holding tasks that wait for `task` (not
    /// back to `from`, which knows it).
    fn relay(&mut self, from: RobotId, task: TaskId, msg: Msg) {
        let Some(deps) = self.dependents.get(&task) else {
            return;
        };
        let mut to: Vec<RobotId> = deps
            .iter()
            .filter_map(|d| match self.tasks.get(d)?.allocation {
                Allocation::Robot(r) if r != from => Some(r),
                _ => None,
            })
            .collect();
        to.sort_unstable();
        to.dedup();
        for r in to {
            self.send(Some(r), msg.clone());
        }
    }

    /// Relays a state the Control Center decided itself (a task aborted before any robot
    /// held it), as if from `holder`.
    fn relay_state(&mut self, holder: RobotId, task: TaskId, state: TaskState) {
        let now = self.now();
        let msg = Msg::TaskState {
            robot: holder,
            task,
            state,
            time: now.time,
            synced: now.synced,
        };
        self.relay(CONTROL_CENTER, task, msg);
    }

    /// The states of `spec`'s preconditions known now, for the robot about to hold it.
    fn precondition_states(&self, spec: &TaskSpec, settled: &[(TaskId, TaskState)]) -> Vec<Msg> {
        let now = self.now();
        let known = spec.after.iter().filter_map(|a| {
            let t = self.tasks.get(a)?;
            let holder = match t.allocation {
                Allocation::Robot(r) => r,
                _ => CONTROL_CENTER,
            };
            Some((holder, *a, t.state?))
        });
        let cleared = settled.iter().map(|&(a, s)| (CONTROL_CENTER, a, s));
        known
            .chain(cleared)
            .map(|(robot, task, state)| Msg::TaskState {
                robot,
                task,
                state,
                time: now.time,
                synced: now.synced,
            })
            .collect()
    }

    fn fits(&self, task: &TaskSpec, robot: RobotId) -> Result<(), CcError> {
        let r = self
            .robots
            .get(&robot)
            .ok_or(CcError::UnknownRobot(robot))?;
        if !r.present {
            return Err(CcError::RobotGone(robot));
        }
        if !class_set(&r.info.capabilities)[task.class().index()] {
            return Err(CcError::NotCapable {
                robot,
                class: task.class().name(),
            });
        }
        if let Some(w) = &task.world {
            if *w != r.info.world {
                return Err(CcError::OtherWorld {
                    task: w.clone(),
                    robot,
                    robot_world: r.info.world.clone(),
                });
            }
        }
        Ok(())
    }

    /// The robots present that may not take `spec` ([`ControlCenter::fits`] refuses them),
    /// kept for its world and class until a robot joins or leaves.
    fn unfit_for(&mut self, spec: &TaskSpec) -> IdSet {
        let class = spec.class().index();
        if let Some(Some(set)) = self.unfit.get(&spec.world).map(|c| &c[class]) {
            return set.clone();
        }
        let mut set = IdSet::default();
        for (&id, r) in &self.robots {
            if r.present && self.fits(spec, id).is_err() {
                set.insert(id);
            }
        }
        // (Every task world named is kept: a few dozen at most in practice.)
        if self.unfit.len() >= 256 {
            self.unfit.clear();
        }
        self.unfit.entry(spec.world.clone()).or_default()[class] = Some(set.clone());
        set
    }

    /// Registers a new task (id 0: the Control Center chooses one).
    fn admit(&mut self, mut spec: TaskSpec) -> Result<TaskId, CcError> {
        if self.tasks.len() >= self.config.max_tasks {
            return Err(CcError::Limit {
                what: "tasks",
                limit: self.config.max_tasks,
                key: "max_tasks",
            });
        }
        crate::wire::check_task(&spec)?;
        self.check_limits(&spec)?;
        if spec.id == 0 {
            // The next free id from `next_task`, past the largest back to 1 (an id is never
            // 0; at most `max_tasks` are taken, so one is free), and not one a tracked task's
            // preconditions name (that task waits for the task given that id, not for this).
            while self.next_task == 0
                || self.tasks.contains_key(&self.next_task)
                || self.dependents.contains_key(&self.next_task)
            {
                self.next_task = self.next_task.wrapping_add(1);
            }
            spec.id = self.next_task;
        } else if self.tasks.contains_key(&spec.id) {
            return Err(CcError::TaskIdTaken(spec.id));
        }
        let tasks = &self.tasks;
        if let Some(cycle) = find_cycle(spec.id, &spec.after, |t| {
            tasks.get(&t).map(|e| e.spec.after.as_slice())
        }) {
            return Err(CcError::Cycle {
                task: spec.id,
                cycle,
            });
        }
        let id = spec.id;
        // (An id given as the largest leaves `next_task` there: the next chosen id goes on
        // from 1.)
        self.next_task = self.next_task.max(id.saturating_add(1));
        self.tasks.insert(
            id,
            TaskEntry {
                spec,
                allocation: Allocation::Waiting,
                state: None,
                abort_pending: false,
                settled_after: Vec::new(),
                announced: 0,
            },
        );
        for &a in &self.tasks[&id].spec.after {
            self.dependents.entry(a).or_default().push(id);
        }
        Ok(id)
    }

    fn give(&mut self, id: TaskId, robot: RobotId, how: &str) {
        let Some(t) = self.tasks.get_mut(&id) else {
            return;
        };
        t.allocation = Allocation::Robot(robot);
        // A task keeps the world it was first given in (its frame and units): back in
        // allocation, it goes to a robot of that world only.
        if t.spec.world.is_none() {
            if let Some(r) = self.robots.get(&robot) {
                t.spec.world = Some(r.info.world.clone());
            }
        }
        let abort = t.abort_pending;
        let settled = std::mem::take(&mut t.settled_after);
        if let Some(r) = self.robots.get_mut(&robot) {
            r.assigned += 1;
        }
        let spec = &self.tasks[&id].spec;
        // What its Synchronize Tasks module must know: its preconditions' states so far.
        let states = if spec.after.is_empty() {
            Vec::new()
        } else {
            self.precondition_states(spec, &settled)
        };
        if how != "won" {
            let task = Box::new(spec.clone());
            self.send(Some(robot), Msg::Task { task });
        }
        for msg in states {
            self.send(Some(robot), msg);
        }
        cclog!(
            self,
            LogKind::Tasks,
            "{how}\trobot={robot}\ttask={id}\t{}",
            describe(&self.tasks[&id].spec)
        );
        if abort {
            self.send(Some(robot), Msg::Abort { task: id });
        }
    }

    /// Sends a task straight to `robot` (centralised, the operator's choice).
    pub fn send_task(&mut self, robot: RobotId, spec: TaskSpec) -> Result<TaskId, CcError> {
        self.check_limits(&spec)?;
        self.fits(&spec, robot)?;
        let id = self.admit(spec)?;
        self.give(id, robot, "sent");
        Ok(id)
    }

    /// Announces a task for negotiation, whatever the policy.
    pub fn announce(&mut self, spec: TaskSpec) -> Result<TaskId, CcError> {
        if self.auctions.open_count() >= self.config.max_open_auctions {
            return Err(CcError::Limit {
                what: "open auctions",
                limit: self.config.max_open_auctions,
                key: "max_open_auctions",
            });
        }
        let id = self.admit(spec)?;
        self.start_auction(id);
        self.pump_auctions();
        Ok(id)
    }

    /// Hands a task to the current policy.
    pub fn submit(&mut self, spec: TaskSpec) -> Result<TaskId, CcError> {
        let id = self.admit(spec)?;
        cclog!(
            self,
            LogKind::Tasks,
            "submitted\ttask={id}\t{}",
            describe(&self.tasks[&id].spec)
        );
        self.waiting.push_back(id);
        self.changed();
        if self.config.policy == Policy::Cnp {
            self.announce_waiting();
        }
        Ok(id)
    }

    fn start_auction(&mut self, id: TaskId) {
        let Some(t) = self.tasks.get(&id) else { return };
        let spec = t.spec.clone();
        let now = self.t();
        let unfit = self.unfit_for(&spec);
        let auction = self
            .auctions
            .announce_to(spec.clone(), self.present.clone(), unfit, now);
        let mut times = 0;
        if let Some(t) = self.tasks.get_mut(&id) {
            t.allocation = Allocation::Auction(auction);
            t.announced = t.announced.saturating_add(1);
            times = t.announced;
        }
        self.by_auction.insert(auction, id);
        // In full the first time; again (every `reannounce_period` while nobody takes it),
        // in a few words whatever the task's size.
        if times <= 1 {
            cclog!(
                self,
                LogKind::Tasks,
                "announced\tauction={auction}\ttask={id}\t{}",
                describe(&spec)
            );
        } else {
            cclog!(
                self,
                LogKind::Tasks,
                "announced\tauction={auction}\ttask={id}\tagain ({times} times): {}",
                summary(&spec)
            );
        }
    }

    fn announce_waiting(&mut self) {
        while self.auctions.open_count() < self.config.max_open_auctions {
            let Some(id) = self.waiting.pop_front() else {
                break;
            };
            if self
                .tasks
                .get(&id)
                .is_some_and(|t| t.allocation == Allocation::Waiting)
            {
                self.start_auction(id);
            }
        }
        self.pump_auctions();
    }

    #[inline]
    fn pump_auctions(&mut self) {
        if self.auctions.has_output()
            || (self.config.policy == Policy::Cnp && !self.waiting.is_empty())
        {
            self.pump_auctions_out();
        }
    }

    fn pump_auctions_out(&mut self) {
        let outs: Vec<CnpOut> = self.auctions.drain().collect();
        for o in outs {
            match o {
                CnpOut::Send { to, msg } => {
                    // A cancelled award: what the robot says of the task until it has
                    // dropped it is taken quietly.
                    if let (Some(r), Msg::Cancel { task, .. }) = (to, &msg) {
                        self.note_dropping(r, *task);
                    }
                    if let Msg::Award {
                        auction, winner, ..
                    } = &msg
                    {
                        let (auction, winner) = (*auction, *winner);
                        cclog!(
                            self,
                            LogKind::Tasks,
                            "awarded\tauction={auction}\trobot={winner}"
                        );
                    }
                    self.send(to, msg);
                }
                CnpOut::Allocated {
                    auction,
                    task,
                    robot,
                    cost,
                } => {
                    self.by_auction.remove(&auction);
                    cclog!(
                        self,
                        LogKind::Tasks,
                        "accepted\tauction={auction}\trobot={robot}\tcost={}",
                        fixed(cost, 3)
                    );
                    self.give(task, robot, "won");
                }
                CnpOut::Unallocated {
                    auction,
                    task,
                    bids,
                } => {
                    self.by_auction.remove(&auction);
                    cclog!(
                        self,
                        LogKind::Tasks,
                        "unallocated\tauction={auction}\ttask={}\t{bids} answers, no robot took it",
                        task.id
                    );
                    if let Some(t) = self.tasks.get_mut(&task.id) {
                        if t.abort_pending {
                            t.state = Some(TaskState::Aborted);
                            t.allocation = Allocation::Waiting;
                            self.relay_state(CONTROL_CENTER, task.id, TaskState::Aborted);
                            self.note_final(task.id);
                            continue;
                        }
                        t.allocation = Allocation::Waiting;
                        // Announced again under Contract Net; under a centralised policy
                        // it waits for that policy's next round, like any waiting task.
                        if self.config.policy == Policy::Cnp {
                            self.retry.push_back(task.id);
                        } else {
                            self.waiting.push_back(task.id);
                            self.changed();
                        }
                    }
                }
                CnpOut::Note(text) => cclog!(self, LogKind::Tasks, "note\t{text}"),
            }
        }
        if self.config.policy == Policy::Cnp
            && !self.waiting.is_empty()
            && self.auctions.open_count() < self.config.max_open_auctions
        {
            self.announce_waiting();
        }
    }

    /// Aborts a task wherever it is.
    pub fn abort(&mut self, task: TaskId) -> Result<(), CcError> {
        let t = self
            .tasks
            .get_mut(&task)
            .ok_or(CcError::UnknownTask(task))?;
        if t.state.is_some_and(TaskState::is_final) {
            return Err(CcError::AlreadyFinal(task));
        }
        let alloc = t.allocation;
        match alloc {
            Allocation::Robot(r) => {
                self.send(Some(r), Msg::Abort { task });
            }
            Allocation::Auction(_) => t.abort_pending = true,
            Allocation::Waiting => {
                t.state = Some(TaskState::Aborted);
                self.waiting.retain(|&w| w != task);
                self.retry.retain(|&w| w != task);
                cclog!(
                    self,
                    LogKind::States,
                    "robot=0\ttask={task}\tnew→ABORTED\t(never allocated)"
                );
                self.relay_state(CONTROL_CENTER, task, TaskState::Aborted);
            }
        }
        cclog!(self, LogKind::Tasks, "abort\ttask={task}");
        if alloc == Allocation::Waiting {
            self.note_final(task);
        }
        Ok(())
    }

    /// Notes that `task` became final; past `max_final_tasks` finished tasks in the table, the
    /// one that finished longest ago is cleared (logged as `forgotten`).
    fn note_final(&mut self, task: TaskId) {
        self.finals.push_back(task);
        while self.finals.len() > self.config.max_final_tasks {
            let Some(old) = self.finals.pop_front() else {
                break;
            };
            // Cleared by the operator since, or (a robot's later word) no longer final.
            let still_final = self
                .tasks
                .get(&old)
                .is_some_and(|t| t.state.is_some_and(TaskState::is_final));
            if still_final && self.forget_task(old).is_ok() {
                cclog!(
                    self,
                    LogKind::Tasks,
                    "forgotten\ttask={old}\tfinished longest ago (max_final_tasks)"
                );
            }
        }
    }

    /// Remembers that robot `r` was told to drop `task` (see `dropping`), within
    /// `max_tasks` entries.
    fn note_dropping(&mut self, r: RobotId, task: TaskId) {
        if self.dropping.len() < self.config.max_tasks {
            self.dropping.insert((r, task));
        }
    }

    /// Clears a final task: the Control Center and its robot stop tracking it.
    pub fn clear(&mut self, task: TaskId) -> Result<(), CcError> {
        self.forget_task(task)?;
        self.finals.retain(|&f| f != task);
        cclog!(self, LogKind::Tasks, "clear\ttask={task}");
        Ok(())
    }

    /// [`ControlCenter::clear`] without the log line, leaving `finals` as it is.
    fn forget_task(&mut self, task: TaskId) -> Result<(), CcError> {
        let t = self.tasks.get(&task).ok_or(CcError::UnknownTask(task))?;
        let blocked = matches!(t.state, Some(TaskState::Blocked { .. }));
        if !t.state.is_some_and(TaskState::is_final) && !blocked {
            return Err(CcError::NotFinal(task));
        }
        let settled = if blocked {
            TaskState::Aborted
        } else {
            t.state.unwrap_or(TaskState::Aborted)
        };
        if let Allocation::Robot(r) = t.allocation {
            if blocked {
                // Its ABORTED may still come: taken quietly.
                self.send(Some(r), Msg::Abort { task });
                self.note_dropping(r, task);
            }
            self.send(Some(r), Msg::Clear { task });
        }
        let Some(t) = self.tasks.remove(&task) else {
            return Err(CcError::UnknownTask(task));
        };
        // Its preconditions no longer have it as a dependent; its dependents keep its final
        // state, for the robot that takes them later.
        for a in &t.spec.after {
            if let Some(list) = self.dependents.get_mut(a) {
                list.retain(|&d| d != task);
                if list.is_empty() {
                    self.dependents.remove(a);
                }
            }
        }
        if blocked {
            self.relay_state(CONTROL_CENTER, task, settled);
        }
        for d in self.dependents.remove(&task).unwrap_or_default() {
            if let Some(e) = self.tasks.get_mut(&d) {
                e.settled_after.push((task, settled));
            }
        }
        Ok(())
    }

    /// Switches the allocation policy; nothing restarts. Waiting tasks follow the new one.
    pub fn set_policy(&mut self, policy: Policy) {
        if self.config.policy != policy {
            cclog!(
                self,
                LogKind::Tasks,
                "mode\t{}→{}",
                self.config.policy.name(),
                policy.name()
            );
        }
        self.config.policy = policy;
        self.dirty = false;
        self.changed();
        let again: Vec<TaskId> = self.retry.drain(..).collect();
        self.waiting.extend(again);
        if policy == Policy::Cnp {
            self.announce_waiting();
        }
    }

    /// Runs what is due at local time `local`: auction deadlines, re-announcements,
    /// centralised allocation rounds.
    pub fn handle_timeout(&mut self, local: f64) {
        self.now_local = local;
        let now = self.t();
        self.auctions.handle_timeout(now);
        self.pump_auctions();
        match self.config.policy {
            Policy::Cnp => {
                if !self.retry.is_empty() && (self.freed > 0 || now >= self.next_reannounce) {
                    // As many as there may be room for (at least one per period).
                    let n = self.freed.max(1).min(self.retry.len());
                    self.freed = 0;
                    self.next_reannounce = now + self.config.reannounce_period;
                    let again: Vec<TaskId> = self.retry.drain(..n).collect();
                    self.waiting.extend(again);
                }
                if !self.waiting.is_empty() {
                    self.announce_waiting();
                }
            }
            Policy::Hungarian | Policy::Greedy => {
                if self.dirty && (self.config.round_period <= 0.0 || now >= self.round_at) {
                    self.dirty = false;
                    self.centralised_round();
                }
            }
        }
    }

    /// When [`ControlCenter::handle_timeout`] next has work (common time), if known.
    pub fn poll_timeout(&mut self) -> Option<f64> {
        let mut next = self.auctions.poll_timeout();
        if self.config.policy == Policy::Cnp && !self.retry.is_empty() {
            next = Some(next.map_or(self.next_reannounce, |n| n.min(self.next_reannounce)));
        }
        if self.config.policy != Policy::Cnp && self.dirty {
            next = Some(next.map_or(self.round_at, |n| n.min(self.round_at)));
        }
        next
    }

    fn centralised_round(&mut self) {
        self.waiting.retain(|id| {
            self.tasks
                .get(id)
                .is_some_and(|t| t.allocation == Allocation::Waiting)
        });
        if self.waiting.is_empty() {
            return;
        }
        let idle: Vec<Idle> = self
            .robots
            .iter()
            .filter(|(_, r)| r.present && r.assigned == 0)
            .filter_map(|(&id, r)| {
                r.status.as_ref().map(|s| Idle {
                    robot: id,
                    at: (s.x, s.y),
                })
            })
            .collect();
        if idle.is_empty() {
            return;
        }
        let specs: Vec<&TaskSpec> = self
            .waiting
            .iter()
            .filter_map(|id| self.tasks.get(id))
            .map(|t| &t.spec)
            .collect();
        let fits = |t: &TaskSpec, r: RobotId| self.fits(t, r).is_ok();
        let pairs = match self.config.policy {
            Policy::Hungarian => hungarian(&specs, &idle, self.cost.as_ref(), fits),
            _ => greedy(&specs, &idle, self.cost.as_ref(), fits),
        };
        let how = self.config.policy.name();
        for (task, robot) in pairs {
            self.waiting.retain(|&w| w != task);
            self.give(task, robot, how);
        }
    }

    fn operator(&mut self, from: RobotId, command: OperatorCommand) -> Result<String, CcError> {
        match command {
            OperatorCommand::Send { robot, task } => self
                .send_task(robot, task)
                .map(|id| format!("task {id} sent to robot {robot}")),
            OperatorCommand::Submit { task } => self
                .submit(task)
                .map(|id| format!("task {id} submitted ({})", self.config.policy.name())),
            OperatorCommand::Announce { task } => {
                self.announce(task).map(|id| format!("task {id} announced"))
            }
            OperatorCommand::Abort { task } => self
                .abort(task)
                .map(|()| format!("abort of task {task} sent")),
            OperatorCommand::Clear { task } => {
                self.clear(task).map(|()| format!("task {task} cleared"))
            }
            OperatorCommand::Mode { policy } => {
                self.set_policy(policy);
                Ok(format!("allocation policy: {}", policy.name()))
            }
            OperatorCommand::Robots => Ok(self.robots_table()),
            OperatorCommand::Tasks => Ok(self.tasks_table()),
            OperatorCommand::Follow => {
                if !self.followers.contains(&from) {
                    self.followers.push(from);
                }
                Ok("following the logs".into())
            }
        }
    }

    /// Stops sending log lines to an operator (its connection closed).
    pub fn unfollow(&mut self, operator: RobotId) {
        self.followers.retain(|&f| f != operator);
    }

    /// The robots as a table (the operator's "list robots").
    pub fn robots_table(&self) -> String {
        let mut s = String::from(
            "id\tname\tkind\tworld\tx\ty\theading\tmovement\tperception\tpan_tilt\tqueued\tstatus",
        );
        for (id, r) in &self.robots {
            let st = r.status.as_ref();
            let f = |v: Option<f64>| v.map(|v| fixed(v, 2)).unwrap_or_else(|| "-".into());
            let t = |v: Option<TaskId>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
            s.push_str(&format!(
                "\n{id}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                r.info.name,
                r.info.kind,
                r.info.world,
                f(st.map(|s| s.x)),
                f(st.map(|s| s.y)),
                f(st.map(|s| s.heading)),
                t(st.and_then(|s| s.running.movement)),
                t(st.and_then(|s| s.running.perception)),
                t(st.and_then(|s| s.running.pan_tilt)),
                st.map(|s| s.queued).unwrap_or(0),
                if !r.present {
                    "left"
                } else if st.is_some_and(|s| !s.ok) {
                    "error"
                } else {
                    "ok"
                },
            ));
        }
        s
    }

    /// Robots (pose, kind, condition, running tasks) and tasks (state, holder, goal) as plain
    /// data, in id order: what a 2D map of the team draws.
    pub fn map(&self) -> MapView {
        let now = self.now();
        let robots = self
            .robots
            .iter()
            .map(|(&robot, r)| {
                let st = r.status.as_ref();
                let condition = match st {
                    _ if !r.present => Condition::Left,
                    None => Condition::Silent,
                    Some(s) if !s.ok => Condition::Error,
                    Some(s) if s.running == Running::default() => Condition::Idle,
                    Some(_) => Condition::Busy,
                };
                RobotView {
                    robot,
                    name: r.info.name.clone(),
                    kind: r.info.kind.clone(),
                    world: r.info.world.clone(),
                    pose: st.map(|s| [s.x, s.y, s.heading]),
                    condition,
                    running: st.map(|s| s.running).unwrap_or_default(),
                    queued: st.map(|s| s.queued).unwrap_or(0),
                    battery: st.and_then(|s| s.battery),
                    seen: st.map(|s| s.time),
                }
            })
            .collect();
        let tasks = self
            .tasks
            .iter()
            .map(|(&task, t)| TaskView {
                task,
                what: describe(&t.spec),
                class: t.spec.class(),
                allocation: t.allocation,
                robot: match t.allocation {
                    Allocation::Robot(r) => Some(r),
                    _ => None,
                },
                state: t.state,
                target: t.spec.kind.last_point().map(|(x, y)| [x, y]),
            })
            .collect();
        MapView {
            time: now.time,
            synced: now.synced,
            policy: self.config.policy,
            robots,
            tasks,
        }
    }

    /// The tasks as a table (the operator's "list tasks").
    pub fn tasks_table(&self) -> String {
        let mut s = String::from("task\trobot\tstate\tafter\twhat");
        for (id, t) in &self.tasks {
            let robot = match t.allocation {
                Allocation::Robot(r) => r.to_string(),
                Allocation::Auction(a) => format!("auction {a}"),
                Allocation::Waiting => "waiting".into(),
            };
            let state = t.state.map(|s| s.to_string()).unwrap_or_else(|| "-".into());
            let after = t
                .spec
                .after
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(",");
            s.push_str(&format!(
                "\n{id}\t{robot}\t{state}\t{after}\t{}",
                describe(&t.spec)
            ));
        }
        s
    }

    /// The next message to send.
    pub fn poll_transmit(&mut self) -> Option<Envelope> {
        self.out.pop_front()
    }

    /// The next log line.
    pub fn poll_log(&mut self) -> Option<LogLine> {
        self.logs.pop_front()
    }

    /// Stops keeping log lines (a run that does not want them): those kept are dropped, and
    /// later ones are not even formatted unless an operator follows the logs or `tracing`
    /// wants them.
    pub fn drop_logs(&mut self) {
        self.keep_logs = false;
        self.logs.clear();
    }
}

/// Whether a task in `state` may still run (it keeps its robot busy): not final, not BLOCKED.
fn may_run(state: Option<TaskState>) -> bool {
    !state.is_some_and(|s| s.is_final() || matches!(s, TaskState::Blocked { .. }))
}

fn status_line(s: &RobotStatus) -> String {
    let t = |v: Option<TaskId>| v.map(|v| v.to_string()).unwrap_or_else(|| "-".into());
    format!(
        "robot={}\tx={}\ty={}\theading={}\tspeed={}\tbattery={}\tmovement={}\tperception={}\tpan_tilt={}\tqueued={}\t{}",
        s.robot, fixed(s.x, 3), fixed(s.y, 3), fixed(s.heading, 3), fixed(s.speed, 3),
        s.battery.map(|b| format!("{b:.2}")).unwrap_or_else(|| "-".into()),
        t(s.running.movement), t(s.running.perception), t(s.running.pan_tilt), s.queued,
        if s.ok { "ok".to_string() } else { format!("error: {}", s.error.as_deref().unwrap_or("")) },
    )
}

/// A number as logs and tables show it: its shortest form, in exponent form when that is
/// shorter than many digits (`1e300`, `5e-324`: at most 24 characters whatever the value).
pub fn short(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && a.is_finite() && !(1e-6..1e15).contains(&a) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// `{v:.prec$}`, or the exponent form for a value too large to print in full.
fn fixed(v: f64, prec: usize) -> String {
    if v.abs() < 1e15 {
        format!("{v:.prec$}")
    } else {
        format!("{v:e}")
    }
}

/// A short description of a task for logs and tables.
pub fn describe(spec: &TaskSpec) -> String {
    use crate::model::TaskKind;
    let mut s = match &spec.kind {
        TaskKind::Goto { x, y } => format!("goto {} {}", short(*x), short(*y)),
        TaskKind::Path { points } => format!(
            "path {}",
            points
                .iter()
                .map(|p| format!("{},{}", short(p[0]), short(p[1])))
                .collect::<Vec<_>>()
                .join(" ")
        ),
        TaskKind::Perceive { seconds } => format!("perceive {}", short(*seconds)),
        TaskKind::PanTilt { pan, tilt, seconds } => format!(
            "pan_tilt {} {} {}",
            short(*pan),
            short(*tilt),
            short(*seconds)
        ),
    };
    if !spec.after.is_empty() {
        s.push_str(&format!(
            " after {}",
            spec.after
                .iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    if let Some(w) = &spec.world {
        s.push_str(&format!(" in {w}"));
    }
    s
}

/// A task in a few words whatever its size (a path by its number of points and its goal,
/// preconditions by their number): what the log says of a task announced again.
pub fn summary(spec: &TaskSpec) -> String {
    use crate::model::TaskKind;
    let mut s = match &spec.kind {
        TaskKind::Path { points } if points.len() > 1 => {
            let last = points[points.len() - 1];
            format!(
                "path of {} points to {},{}",
                points.len(),
                short(last[0]),
                short(last[1])
            )
        }
        _ => describe(&TaskSpec::new(spec.id, spec.kind.clone())),
    };
    match spec.after.len() {
        0 => {}
        1 => s.push_str(&format!(" after {}", spec.after[0])),
        n => s.push_str(&format!(" after {n} tasks")),
    }
    if let Some(w) = &spec.world {
        s.push_str(&format!(" in {w}"));
    }
    s
}
