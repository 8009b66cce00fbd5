//! A robot's abstraction layer (the same for every kind of robot): Task Manager,
//! Synchronize Tasks, CNP Manager, the Time Server's clock and the standard status.
//!
//! The robot-specific part (driving a SumBot, a Nomad, a swarm robot) sits below it: it
//! takes [`Command`]s (start or stop a basic task), reports when a basic task concluded
//! ([`RobotAgent::basic_done`]) and gives the robot's pose for the status and for bids.

use std::collections::VecDeque;

use crate::cnp::{Bidder, CostModel};
use crate::model::{
    BasicKind, FailCode, RobotInfo, RobotStatus, TaskClass, TaskId, CONTROL_CENTER,
};
use crate::outbox::Outbox;
use crate::sync::TaskBoard;
use crate::task_manager::{TaskManager, TmError, TmEvent};
use crate::time::{ClockView, Stamp};
use crate::wire::{Envelope, Msg};

/// What the robot's lower layer must do.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// Start a basic task of `task`.
    Start {
        /// The task it belongs to.
        task: TaskId,
        /// Its class: one basic task per class runs at a time.
        class: TaskClass,
        /// What to do.
        basic: BasicKind,
    },
    /// Stop what runs for `task` (it was aborted).
    Stop {
        /// The aborted task.
        task: TaskId,
        /// The class whose basic task to stop.
        class: TaskClass,
    },
}

/// Where the robot is, for status and bids.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RobotPose {
    /// x, metres in the frame of the robot's world.
    pub x: f64,
    /// y, metres in the frame of the robot's world.
    pub y: f64,
    /// Heading, radians counter-clockwise from +x.
    pub heading: f64,
    /// Speed, m/s.
    pub speed: f64,
}

/// One robot's coordination layer.
#[derive(Debug)]
pub struct RobotAgent {
    /// What the robot says about itself (sent in its `hello`).
    pub info: RobotInfo,
    /// Its Task Manager, with its Synchronize Tasks module.
    pub tm: TaskManager,
    /// Its CNP Manager.
    pub bidder: Bidder,
    clock: ClockView,
    out: VecDeque<Envelope>,
    commands: VecDeque<Command>,
    /// Messages sent so far.
    pub sent: u64,
    /// Set when the Control Center welcomed this robot.
    pub welcomed: bool,
}

impl RobotAgent {
    /// The layer for the robot described by `info`.
    pub fn new(info: RobotInfo) -> Self {
        let tm = TaskManager::new(&info.capabilities, Some(info.world.clone()));
        let bidder = Bidder::new(info.robot);
        RobotAgent {
            info,
            tm,
            bidder,
            clock: ClockView::default(),
            out: VecDeque::new(),
            commands: VecDeque::new(),
            sent: 0,
            welcomed: false,
        }
    }

    /// The robot's id.
    pub fn id(&self) -> u32 {
        self.info.robot
    }

    /// The `hello` that introduces this robot to the Control Center.
    pub fn hello(&self) -> Envelope {
        Envelope {
            from: self.info.robot,
            to: Some(CONTROL_CENTER),
            msg: Msg::Hello {
                info: Box::new(self.info.clone()),
            },
        }
    }

    /// The common time at local time `local`.
    pub fn now(&self, local: f64) -> Stamp {
        self.clock.now(local)
    }

    #[inline]
    fn send_cc(&mut self, msg: Msg) {
        self.sent += 1;
        self.out.push_back(Envelope {
            from: self.info.robot,
            to: Some(CONTROL_CENTER),
            msg,
        });
    }

    /// Handles a message addressed to this robot (or to everyone). `board` holds the latest
    /// state of every task; this robot's own changes are written to it as they happen.
    #[inline]
    pub fn handle(
        &mut self,
        env: &Envelope,
        local: f64,
        pose: RobotPose,
        board: &mut TaskBoard,
        model: &dyn CostModel,
    ) {
        // A call for bids, the message every robot gets in every auction: answered at once.
        if let Msg::Announce { auction, task, .. } = &env.msg {
            let bid = self
                .bidder
                .on_announce(*auction, task, &self.tm, (pose.x, pose.y), model);
            self.send_cc(bid);
            self.pump(local, board);
            return;
        }
        self.handle_any(env, local, pose, board, model);
    }

    /// [`RobotAgent::handle`], then what the robot sends moves into `out`, in order: the
    /// in-process path, where the answer to a call for bids is written straight into `out`
    /// as a compact bid (still one message sent) instead of an envelope queued and taken
    /// out again. The same messages, in the same order, as `handle` followed by
    /// [`RobotAgent::poll_transmit`] until empty, each pushed into `out`.
    #[inline]
    pub fn handle_into(
        &mut self,
        env: &Envelope,
        local: f64,
        pose: RobotPose,
        board: &mut TaskBoard,
        model: &dyn CostModel,
        out: &mut Outbox,
    ) {
        if let Msg::Announce { auction, task, .. } = &env.msg {
            if self.out.is_empty() {
                let cost = self.bidder.cost(task, &self.tm, (pose.x, pose.y), model);
                self.sent += 1;
                out.push_bid(*auction, self.info.robot, cost);
                self.pump(local, board);
                self.drain_into(out);
                return;
            }
        }
        self.handle(env, local, pose, board, model);
        self.drain_into(out);
    }

    /// Moves every message waiting to be sent into `out`, in order (as
    /// [`RobotAgent::poll_transmit`] until empty would give them).
    #[inline]
    pub fn drain_into(&mut self, out: &mut Outbox) {
        if !self.out.is_empty() {
            out.extend(self.out.drain(..));
        }
    }

    #[inline(never)]
    fn handle_any(
        &mut self,
        env: &Envelope,
        local: f64,
        pose: RobotPose,
        board: &mut TaskBoard,
        model: &dyn CostModel,
    ) {
        match &env.msg {
            Msg::Clock { seq, time } => self.clock.hear(*seq, *time, local),
            Msg::Welcome { robot } if *robot == self.info.robot => self.welcomed = true,
            Msg::Task { task } => {
                if let Err(e) = self.tm.submit((**task).clone(), board) {
                    tracing::warn!(target: "simrob_coord::robot", robot = self.info.robot, "task refused: {e}");
                }
            }
            Msg::TaskState { task, state, .. } => {
                // A precondition changed: what waited on it may start, or is now blocked.
                board.publish(*task, *state);
                self.tm.schedule(board);
            }
            Msg::Announce { auction, task, .. } => {
                let bid =
                    self.bidder
                        .on_announce(*auction, task, &self.tm, (pose.x, pose.y), model);
                self.send_cc(bid);
            }
            Msg::Award {
                auction,
                task,
                winner,
                ..
            } if *winner == self.info.robot => {
                let answer = self.bidder.on_award(*auction, task, &self.tm);
                let accepted = matches!(answer, Msg::Accept { .. });
                self.send_cc(answer);
                if accepted {
                    if let Err(e) = self.tm.submit((**task).clone(), board) {
                        tracing::warn!(target: "simrob_coord::robot", robot = self.info.robot, "awarded task refused: {e}");
                    }
                }
            }
            Msg::Cancel { task, .. } | Msg::Abort { task } => {
                if let Err(e) = self.tm.abort(*task) {
                    tracing::debug!(target: "simrob_coord::robot", robot = self.info.robot, "abort: {e}");
                }
            }
            Msg::Clear { task } => {
                if let Err(e) = self.tm.clear(*task) {
                    tracing::debug!(target: "simrob_coord::robot", robot = self.info.robot, "clear: {e}");
                }
            }
            _ => {}
        }
        self.pump(local, board);
    }

    /// The lower layer concluded the current basic task of `task`.
    pub fn basic_done(
        &mut self,
        task: TaskId,
        result: Result<(), FailCode>,
        local: f64,
        board: &mut TaskBoard,
    ) -> Result<(), TmError> {
        let r = self.tm.basic_done(task, result);
        self.pump(local, board);
        r
    }

    /// Starts whatever may start now (call after task states changed, or periodically).
    pub fn tick(&mut self, local: f64, board: &mut TaskBoard) {
        self.tm.schedule(board);
        self.pump(local, board);
    }

    #[inline]
    fn pump(&mut self, local: f64, board: &mut TaskBoard) {
        if self.tm.has_events() {
            self.pump_events(local, board);
        }
    }

    fn pump_events(&mut self, local: f64, board: &mut TaskBoard) {
        // Each state change may let another task start: drain, schedule, until quiet.
        loop {
            let mut any = false;
            while let Some(ev) = self.tm.poll_event() {
                any = true;
                match ev {
                    TmEvent::State { task, state } => {
                        board.publish(task, state);
                        let now = self.clock.now(local);
                        self.send_cc(Msg::TaskState {
                            robot: self.info.robot,
                            task,
                            state,
                            time: now.time,
                            synced: now.synced,
                        });
                    }
                    TmEvent::Start {
                        task, class, basic, ..
                    } => self
                        .commands
                        .push_back(Command::Start { task, class, basic }),
                    TmEvent::Stop { task, class } => {
                        self.commands.push_back(Command::Stop { task, class })
                    }
                }
            }
            if !any {
                break;
            }
            self.tm.schedule(board);
        }
    }

    /// The standard status at local time `local`.
    pub fn status(
        &mut self,
        local: f64,
        pose: RobotPose,
        battery: Option<f64>,
        error: Option<String>,
    ) -> Envelope {
        let now = self.clock.now(local);
        let status = RobotStatus {
            robot: self.info.robot,
            time: now.time,
            synced: now.synced,
            x: pose.x,
            y: pose.y,
            heading: pose.heading,
            speed: pose.speed,
            battery,
            running: self.tm.running(),
            queued: self.tm.outstanding() as u32,
            ok: error.is_none(),
            error,
        };
        self.sent += 1;
        Envelope {
            from: self.info.robot,
            to: Some(CONTROL_CENTER),
            msg: Msg::Status {
                status: Box::new(status),
            },
        }
    }

    /// The next message for the Control Center.
    #[inline]
    pub fn poll_transmit(&mut self) -> Option<Envelope> {
        self.out.pop_front()
    }

    /// The next command for the lower layer.
    #[inline]
    pub fn poll_command(&mut self) -> Option<Command> {
        self.commands.pop_front()
    }

    /// A goodbye: the robot declines awards from now on.
    pub fn bye(&mut self) -> Envelope {
        self.bidder.leaving = true;
        self.sent += 1;
        Envelope {
            from: self.info.robot,
            to: Some(CONTROL_CENTER),
            msg: Msg::Bye {
                robot: self.info.robot,
            },
        }
    }
}
