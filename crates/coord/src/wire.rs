//! The General Robot Interface (GRI): every message between the Control Center, the Time
//! Server and the robots, and its one wire format.
//!
//! # Wire format (`simrob-gri`, version 1)
//!
//! A stream of UTF-8 lines, one message per line, each line one JSON object ended by `\n`:
//!
//! ```text
//! {"from":0,"to":3,"msg":{"kind":"task","task":{"id":7,"kind":{"goto":{"x":1.5,"y":-2.0}}}}}
//! {"from":3,"msg":{"kind":"task_state","robot":3,"task":7,"state":{"state":"running"},"time":12.4,"synced":true}}
//! {"from":0,"msg":{"kind":"announce","auction":4,"task":{"id":8,"kind":{"perceive":{"seconds":2.0}}},"deadline":13.0}}
//! ```
//!
//! * `from`: the sender's id (0 = Control Center, robots 1 to
//!   [`MAX_ROBOT_ID`]); `to`: the receiver's id, or absent for
//!   everyone (a broadcast). `simrob coord serve` does not read an operator's `from` (it
//!   knows operators by their connection) and answers it `to` 2³⁰ plus the connection's
//!   number.
//! * `msg.kind` names the message; its fields follow. Unknown fields are refused, on every
//!   message and operator request (those without arguments too).
//! * Blank lines between messages are skipped ([`FrameDecoder`]; [`decode`] calls a blank
//!   line given alone [`CodecError::Empty`]).
//! * Names (a robot's name, kind and world, a task's world) are one line of printable text,
//!   not empty ([`check_label`]); a decline's reason and a status's error one line
//!   ([`check_one_line`]).
//!
//! The same, for clients in any language, with the answers, refusals and limits of
//! `simrob coord serve`: `docs/reference/gri.md` (the site's "The coordination protocol").
//! * Times are seconds on the Time Server's clock (simulated time); positions are metres.
//!   Numbers are written in their shortest form and read back to the last bit.
//! * A line longer than the limit (`max_message_bytes`, 65,536 by default) is refused
//!   without being read whole; a stream that ends in the middle of a line is reported as
//!   truncated. Every error says what was wrong and where, and decoding never panics.
//!
//! | kind | from → to | fields |
//! |---|---|---|
//! | `hello` | robot → CC | `info`: id, name, kind, world, capabilities, speed |
//! | `bye` | robot → CC | `robot` |
//! | `welcome` | CC → robot | `robot` (the join was accepted) |
//! | `refused` | CC → anyone | `reason` (a request was refused, nothing changed) |
//! | `clock` | Time Server → all | `seq`, `time` |
//! | `task` | CC → robot | `task` (centralised allocation) |
//! | `task_state` | robot → CC → all | `robot`, `task`, `state`, `time`, `synced` |
//! | `status` | robot → CC | the standard robot status |
//! | `announce` | CC → all | `auction`, `task`, `deadline` (for bids) |
//! | `bid` | robot → CC | `auction`, `robot`, `cost` (absent = refuse) |
//! | `award` | CC → robot | `auction`, `task`, `winner`, `deadline` (for the answer) |
//! | `accept` / `decline` | robot → CC | `auction`, `robot` (`decline`: `reason`) |
//! | `cancel` | CC → robot | `auction`, `task` (an accept came too late: drop the task) |
//! | `abort` / `clear` | CC → robot | `task` |
//! | `operator` | operator → CC | `command` (see [`OperatorCommand`]) |
//! | `report` | CC → operator | `text` (one line of a log, or an answer) |

use serde::{Deserialize, Serialize};
use thiserror::Error;

use crate::model::{
    check_label, check_one_line, AuctionId, RobotId, RobotInfo, RobotStatus, TaskClass, TaskId,
    TaskSpec, TaskState, ValueError, MAX_ROBOT_ID, MAX_SPEED,
};

/// The default longest line (`max_message_bytes`).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 65_536;
/// The most points a path task may have on the wire; the Control Center's `max_path_points`
/// (at most this, and this by default) may lower it.
pub const MAX_PATH_POINTS: usize = 4096;

/// One GRI message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Msg {
    /// A robot joins the system (robot → CC); the Control Center answers `welcome` or `refused`.
    Hello {
        /// The robot's id, name, kind, world, capabilities and cruise speed.
        info: Box<RobotInfo>,
    },
    /// A robot leaves (robot → CC); the Control Center hands its unfinished tasks back to
    /// allocation.
    Bye {
        /// The robot leaving (must be the sender).
        robot: RobotId,
    },
    /// The Control Center accepted a robot's `hello` (CC → robot).
    Welcome {
        /// The robot welcomed.
        robot: RobotId,
    },
    /// A request was refused and nothing changed (CC → anyone).
    Refused {
        /// Why, in words.
        reason: String,
    },
    /// The Time Server's common time base (Time Server → all).
    Clock {
        /// Publication number, counting from 1; one older than the last heard is ignored.
        seq: u64,
        /// Time Server time, seconds (inside simrob, the simulated time).
        time: f64,
    },
    /// A task sent straight to a robot: centralised allocation (CC → robot).
    Task {
        /// The task, with its preconditions.
        task: Box<TaskSpec>,
    },
    /// A task's new state (robot → CC); the Control Center relays it to the robots holding tasks
    /// that wait for it.
    TaskState {
        /// The robot holding the task (0 when the Control Center settled it itself).
        robot: RobotId,
        /// The task.
        task: TaskId,
        /// Its new state.
        state: TaskState,
        /// Time Server time of the change, seconds.
        time: f64,
        /// Whether `time` is on the Time Server's clock (false: the robot's own clock, not yet
        /// synced).
        synced: bool,
    },
    /// A robot's standard status (robot → CC).
    Status {
        /// The status, the same structure for every kind of robot.
        status: Box<RobotStatus>,
    },
    /// Contract Net announcement: a task offered for bids (CC → all).
    Announce {
        /// The auction.
        auction: AuctionId,
        /// The task offered.
        task: Box<TaskSpec>,
        /// Time Server time by which bids must arrive, seconds.
        deadline: f64,
    },
    /// A robot's answer to an announcement (robot → CC).
    Bid {
        /// The auction.
        auction: AuctionId,
        /// The bidder (must be the sender).
        robot: RobotId,
        /// Its marginal cost for the task, ≥ 0 (metres for movement, seconds otherwise); absent: it
        /// refuses.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
    },
    /// The lowest bid wins the task (CC → robot); it must accept or decline by `deadline`.
    Award {
        /// The auction.
        auction: AuctionId,
        /// The task awarded.
        task: Box<TaskSpec>,
        /// The winning robot.
        winner: RobotId,
        /// Time Server time by which the winner must answer, seconds.
        deadline: f64,
    },
    /// The winner takes the awarded task (robot → CC).
    Accept {
        /// The auction.
        auction: AuctionId,
        /// The winner (must be the sender).
        robot: RobotId,
    },
    /// The winner turns the award down (robot → CC); the next-best bid gets it.
    Decline {
        /// The auction.
        auction: AuctionId,
        /// The winner (must be the sender).
        robot: RobotId,
        /// Why, in words (leaving, cannot take it, queue full).
        reason: String,
    },
    /// An accept came too late: the robot drops the task (CC → robot).
    Cancel {
        /// The auction.
        auction: AuctionId,
        /// The task to drop.
        task: TaskId,
    },
    /// Stop a task: a running basic task is stopped and the rest dropped (CC → robot).
    Abort {
        /// The task.
        task: TaskId,
    },
    /// Stop tracking a final task (CC → robot).
    Clear {
        /// The task.
        task: TaskId,
    },
    /// A request from an operator (operator → CC); answered with a `report`.
    Operator {
        /// What the operator asks.
        command: Box<OperatorCommand>,
    },
    /// One line of a log, or the answer to an operator's request (CC → operator).
    Report {
        /// The text (a log line: its file name, the time, then tab-separated fields).
        text: String,
    },
}

impl Msg {
    /// The message's name on the wire.
    pub fn name(&self) -> &'static str {
        match self {
            Msg::Hello { .. } => "hello",
            Msg::Bye { .. } => "bye",
            Msg::Welcome { .. } => "welcome",
            Msg::Refused { .. } => "refused",
            Msg::Clock { .. } => "clock",
            Msg::Task { .. } => "task",
            Msg::TaskState { .. } => "task_state",
            Msg::Status { .. } => "status",
            Msg::Announce { .. } => "announce",
            Msg::Bid { .. } => "bid",
            Msg::Award { .. } => "award",
            Msg::Accept { .. } => "accept",
            Msg::Decline { .. } => "decline",
            Msg::Cancel { .. } => "cancel",
            Msg::Abort { .. } => "abort",
            Msg::Clear { .. } => "clear",
            Msg::Operator { .. } => "operator",
            Msg::Report { .. } => "report",
        }
    }
}

/// How tasks are allocated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Policy {
    /// Contract Net: announce, bids, award, accept.
    Cnp,
    /// Centralised: optimal assignment of waiting tasks to idle robots (Hungarian).
    Hungarian,
    /// Centralised: each waiting task to the nearest idle robot.
    Greedy,
}

impl Policy {
    /// The policy's name on the command line and in tables.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Cnp => "cnp",
            Policy::Hungarian => "hungarian",
            Policy::Greedy => "greedy",
        }
    }
}

/// A policy name that is none of `cnp`, `hungarian`, `greedy` (or their other names).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("unknown allocation policy {0:?} (expected cnp, hungarian or greedy)")]
pub struct UnknownPolicy(pub String);

impl std::str::FromStr for Policy {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, UnknownPolicy> {
        match s.trim().to_ascii_lowercase().as_str() {
            "cnp" | "contract-net" => Ok(Policy::Cnp),
            "hungarian" => Ok(Policy::Hungarian),
            "greedy" | "nearest" => Ok(Policy::Greedy),
            other => Err(UnknownPolicy(other.to_string())),
        }
    }
}

/// What an operator may ask of the Control Center.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "op",
    rename_all = "snake_case",
    deny_unknown_fields,
    from = "OperatorWire"
)]
pub enum OperatorCommand {
    /// Send a task straight to a robot (centralised). `id` 0 lets the CC choose the id.
    Send {
        /// The robot to send it to.
        robot: RobotId,
        /// The task.
        task: TaskSpec,
    },
    /// Hand a task to the current allocation policy (`id` 0: the CC chooses).
    Submit {
        /// The task.
        task: TaskSpec,
    },
    /// Announce a task for negotiation whatever the policy.
    Announce {
        /// The task.
        task: TaskSpec,
    },
    /// Abort a task wherever it is: waiting, in an auction or on a robot.
    Abort {
        /// The task.
        task: TaskId,
    },
    /// Clear a final (or BLOCKED) task: the Control Center and its robot stop tracking it.
    Clear {
        /// The task.
        task: TaskId,
    },
    /// Switch the allocation policy; nothing restarts, waiting tasks follow the new one.
    Mode {
        /// The new policy.
        policy: Policy,
    },
    /// List the robots and their status.
    Robots,
    /// List the tasks and their states.
    Tasks,
    /// Send every log line to this operator as `report` messages from now on.
    Follow,
}

/// [`OperatorCommand`] as it is read: the requests without arguments as structs without
/// fields, so that one given a field is refused like any unknown field (serde lets a unit
/// variant of an internally tagged enum take any field and ignore it).
#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum OperatorWire {
    Send { robot: RobotId, task: TaskSpec },
    Submit { task: TaskSpec },
    Announce { task: TaskSpec },
    Abort { task: TaskId },
    Clear { task: TaskId },
    Mode { policy: Policy },
    Robots {},
    Tasks {},
    Follow {},
}

impl From<OperatorWire> for OperatorCommand {
    fn from(w: OperatorWire) -> Self {
        match w {
            OperatorWire::Send { robot, task } => OperatorCommand::Send { robot, task },
            OperatorWire::Submit { task } => OperatorCommand::Submit { task },
            OperatorWire::Announce { task } => OperatorCommand::Announce { task },
            OperatorWire::Abort { task } => OperatorCommand::Abort { task },
            OperatorWire::Clear { task } => OperatorCommand::Clear { task },
            OperatorWire::Mode { policy } => OperatorCommand::Mode { policy },
            OperatorWire::Robots {} => OperatorCommand::Robots,
            OperatorWire::Tasks {} => OperatorCommand::Tasks,
            OperatorWire::Follow {} => OperatorCommand::Follow,
        }
    }
}

/// A message with its sender and receiver.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// The sender's id (0: the Control Center).
    pub from: RobotId,
    /// `None`: everyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<RobotId>,
    /// The message.
    pub msg: Msg,
}

/// What is wrong with a line of the wire format.
#[derive(Debug, Error, PartialEq)]
pub enum CodecError {
    /// A line longer than the limit; the rest of it is skipped unread.
    #[error("message {line}: longer than {limit} bytes (max_message_bytes)")]
    TooLong {
        /// The message's number in the stream, from 1.
        line: u64,
        /// The limit, bytes (`max_message_bytes`).
        limit: usize,
    },
    /// The line is not UTF-8 text.
    #[error("message {line}: not UTF-8 text")]
    NotUtf8 {
        /// The message's number in the stream, from 1.
        line: u64,
    },
    /// The line is blank (what [`decode`] says of a blank line given alone; a
    /// [`FrameDecoder`] skips blank lines between messages).
    #[error("message {line}: empty line")]
    Empty {
        /// The message's number in the stream, from 1.
        line: u64,
    },
    /// The stream ended in the middle of a message.
    #[error(
        "message {line}: cut off (the stream ended {bytes} bytes into it, without its end of line)"
    )]
    Truncated {
        /// The message's number in the stream, from 1.
        line: u64,
        /// How many bytes of it arrived.
        bytes: usize,
    },
    /// The line is not a GRI message in JSON (bad syntax, unknown kind or field, wrong type).
    #[error("message {line}: {what} (at column {column})")]
    Malformed {
        /// The message's number in the stream, from 1.
        line: u64,
        /// The column of the error in the line, from 1.
        column: usize,
        /// What was wrong.
        what: String,
    },
    /// The message was read, but its values are refused.
    #[error("message {line} ({kind}): {what}")]
    Invalid {
        /// The message's number in the stream, from 1.
        line: u64,
        /// The message's name (`task`, `bid`, …).
        kind: &'static str,
        /// What was wrong.
        what: ValueError,
    },
}

/// Encodes one message as a line (with its `\n`).
pub fn encode(env: &Envelope) -> String {
    // Serialising these types cannot fail: no maps with non-string keys, no custom
    // serialisers. Non-finite numbers are refused before they are sent (`validate`).
    let mut s = serde_json::to_string(env).unwrap_or_else(|e| {
        format!("{{\"from\":{},\"msg\":{{\"kind\":\"refused\",\"reason\":\"unencodable message: {e}\"}}}}", env.from)
    });
    s.push('\n');
    s
}

/// Decodes one line (without or with its `\n`); `line` numbers the message in errors.
pub fn decode(bytes: &[u8], line: u64) -> Result<Envelope, CodecError> {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|_| CodecError::NotUtf8 { line })?;
    if text.trim().is_empty() {
        return Err(CodecError::Empty { line });
    }
    let env: Envelope = serde_json::from_str(text).map_err(|e| {
        let what = e.to_string();
        // serde_json appends " at line L column C"; keep the explanation only.
        let what = match what.rfind(" at line ") {
            Some(i) => what[..i].to_string(),
            None => what,
        };
        let what = if e.is_eof() {
            format!("incomplete JSON ({what})")
        } else {
            what
        };
        CodecError::Malformed {
            line,
            column: e.column(),
            what,
        }
    })?;
    validate(&env.msg).map_err(|what| CodecError::Invalid {
        line,
        kind: env.msg.name(),
        what,
    })?;
    Ok(env)
}

fn finite(name: &'static str, v: f64) -> Result<(), ValueError> {
    if v.is_finite() {
        Ok(())
    } else {
        Err(ValueError::NotFinite(name))
    }
}

/// Checks a task: its numbers (finite, durations and angles in range, at least one point,
/// the points limit), its preconditions (not itself, none twice) and its world (one line of
/// printable text, not empty).
pub fn check_task(task: &TaskSpec) -> Result<(), ValueError> {
    task.kind.validate(MAX_PATH_POINTS)?;
    if task.after.contains(&task.id) && task.id != 0 {
        return Err(ValueError::OwnPrecondition(task.id));
    }
    if task.after.len() > 1 {
        let mut ids = task.after.clone();
        ids.sort_unstable();
        if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
            return Err(ValueError::PreconditionTwice(w[0]));
        }
    }
    if let Some(w) = &task.world {
        check_label("task world", w)?;
    }
    Ok(())
}

/// Checks what JSON cannot: finite numbers, sensible ranges, robot ids.
#[inline]
pub fn validate(msg: &Msg) -> Result<(), ValueError> {
    // The messages of every auction, checked without a call.
    match msg {
        Msg::Bid { cost: None, .. } | Msg::Accept { .. } => Ok(()),
        Msg::Bid { cost: Some(c), .. } if valid_cost(*c) => Ok(()),
        _ => validate_all(msg),
    }
}

fn validate_all(msg: &Msg) -> Result<(), ValueError> {
    match msg {
        Msg::Hello { info } => {
            if info.robot == 0 {
                return Err(ValueError::RobotZero);
            }
            if info.robot > MAX_ROBOT_ID {
                return Err(ValueError::RobotIdTooLarge(info.robot));
            }
            check_label("robot name", &info.name)?;
            check_label("robot kind", &info.kind)?;
            check_label("robot world", &info.world)?;
            finite("speed", info.speed)?;
            if info.speed < 0.0 {
                return Err(ValueError::NegativeSpeed);
            }
            if info.speed > MAX_SPEED {
                return Err(ValueError::TooFast(info.speed));
            }
            let mut seen = [false; 3];
            for c in &info.capabilities {
                if std::mem::replace(&mut seen[c.index()], true) {
                    return Err(ValueError::CapabilityTwice(c.name()));
                }
            }
            Ok(())
        }
        Msg::Clock { time, .. } => finite("time", *time),
        Msg::Task { task } => check_task(task),
        Msg::TaskState { time, .. } => finite("time", *time),
        Msg::Status { status } => {
            for (n, v) in [
                ("time", status.time),
                ("x", status.x),
                ("y", status.y),
                ("heading", status.heading),
                ("speed", status.speed),
            ] {
                finite(n, v)?;
            }
            if let Some(b) = status.battery {
                if !(0.0..=1.0).contains(&b) {
                    return Err(ValueError::Battery(b));
                }
            }
            if let Some(e) = &status.error {
                check_one_line("status error", e)?;
            }
            Ok(())
        }
        Msg::Announce { task, deadline, .. } => {
            finite("deadline", *deadline)?;
            check_task(task)
        }
        Msg::Bid { cost, .. } => match cost {
            Some(c) if !c.is_finite() || *c < 0.0 => Err(ValueError::Cost(*c)),
            _ => Ok(()),
        },
        Msg::Award { deadline, task, .. } => {
            finite("deadline", *deadline)?;
            check_task(task)
        }
        Msg::Decline { reason, .. } => check_one_line("decline reason", reason),
        Msg::Operator { command } => match &**command {
            OperatorCommand::Send { task, .. }
            | OperatorCommand::Submit { task }
            | OperatorCommand::Announce { task } => check_task(task),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}

/// Splits a byte stream into messages: feed bytes as they arrive, take messages out.
#[derive(Debug)]
pub struct FrameDecoder {
    buf: Vec<u8>,
    limit: usize,
    line: u64,
    /// Skipping the rest of an over-long line.
    discarding: bool,
}

impl Default for FrameDecoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_MESSAGE_BYTES)
    }
}

impl FrameDecoder {
    /// A decoder refusing lines longer than `limit` bytes.
    pub fn new(limit: usize) -> Self {
        FrameDecoder {
            buf: Vec::new(),
            limit: limit.max(16),
            line: 0,
            discarding: false,
        }
    }

    /// Appends bytes received.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, an error for a bad line (the stream goes on after it), or
    /// `None` when more bytes are needed.
    pub fn next_message(&mut self) -> Option<Result<Envelope, CodecError>> {
        loop {
            match self.buf.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let rest = self.buf.split_off(i + 1);
                    let line = std::mem::replace(&mut self.buf, rest);
                    self.line += 1;
                    if std::mem::take(&mut self.discarding) {
                        continue;
                    }
                    if line.len() > self.limit + 1 {
                        return Some(Err(CodecError::TooLong {
                            line: self.line,
                            limit: self.limit,
                        }));
                    }
                    if line.iter().all(|b| b.is_ascii_whitespace()) {
                        continue; // blank lines between messages are allowed
                    }
                    return Some(decode(&line, self.line));
                }
                None => {
                    if self.buf.len() > self.limit && !self.discarding {
                        self.buf.clear();
                        self.discarding = true;
                        return Some(Err(CodecError::TooLong {
                            line: self.line + 1,
                            limit: self.limit,
                        }));
                    }
                    if self.discarding {
                        self.buf.clear();
                    }
                    return None;
                }
            }
        }
    }

    /// At the end of the stream: an error if a message was cut off.
    pub fn finish(&mut self) -> Result<(), CodecError> {
        let pending = std::mem::take(&mut self.buf);
        if pending.iter().all(|b| b.is_ascii_whitespace()) || self.discarding {
            Ok(())
        } else {
            Err(CodecError::Truncated {
                line: self.line + 1,
                bytes: pending.len(),
            })
        }
    }
}

/// The classes a robot can run, as a small set.
pub fn class_set(classes: &[TaskClass]) -> [bool; 3] {
    let mut s = [false; 3];
    for c in classes {
        s[c.index()] = true;
    }
    s
}

/// A bid's cost is a number ≥ 0 and finite: a sign bit of 0 and an exponent below all
/// ones (+0 to the largest finite), or −0. On the bits, two comparisons: `is_finite() && c
/// >= 0.0` became a dozen instructions on every bid.
#[inline(always)]
pub(crate) fn valid_cost(c: f64) -> bool {
    let b = c.to_bits();
    b < 0x7ff0_0000_0000_0000 || b == 0x8000_0000_0000_0000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_costs_are_finite_and_not_negative() {
        for c in [0.0, -0.0, 1e-300, 5e-324, 1.0, f64::MAX] {
            assert_eq!(valid_cost(c), c.is_finite() && c >= 0.0, "{c}");
            assert!(valid_cost(c));
        }
        for c in [
            -5e-324,
            -1.0,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ] {
            assert!(!valid_cost(c), "{c}");
        }
    }

    use crate::model::{FailCode, Running, TaskKind};

    fn every_message() -> Vec<Msg> {
        let task = TaskSpec {
            id: 7,
            kind: TaskKind::Path {
                points: vec![[1.5, -2.0], [0.1, 1e-3]],
            },
            after: vec![3, 4],
            world: Some("mrs".into()),
        };
        vec![
            Msg::Hello {
                info: Box::new(RobotInfo {
                    robot: 3,
                    name: "nomad \"one\"".into(),
                    kind: "nomad".into(),
                    world: "mrs".into(),
                    capabilities: vec![TaskClass::Movement, TaskClass::PanTilt],
                    speed: 0.5,
                }),
            },
            Msg::Bye { robot: 3 },
            Msg::Welcome { robot: 3 },
            Msg::Refused {
                reason: "ünïcode\nand a newline".into(),
            },
            Msg::Clock {
                seq: u64::MAX,
                time: 0.1 + 0.2,
            },
            Msg::Task {
                task: Box::new(task.clone()),
            },
            Msg::TaskState {
                robot: 3,
                task: 7,
                state: TaskState::Failed {
                    code: FailCode::Cycle,
                },
                time: 1.0,
                synced: false,
            },
            Msg::TaskState {
                robot: 3,
                task: 7,
                state: TaskState::Blocked { by: 2 },
                time: 1.0,
                synced: true,
            },
            Msg::Status {
                status: Box::new(RobotStatus {
                    robot: 3,
                    time: 2.5,
                    synced: true,
                    x: 1.0,
                    y: -1.0,
                    heading: 3.25,
                    speed: 0.2,
                    battery: Some(0.75),
                    running: Running {
                        movement: Some(7),
                        perception: None,
                        pan_tilt: Some(9),
                    },
                    queued: 4,
                    ok: false,
                    error: Some("bumper".into()),
                }),
            },
            Msg::Announce {
                auction: 1,
                task: Box::new(TaskSpec::new(8, TaskKind::Perceive { seconds: 2.0 })),
                deadline: 3.0,
            },
            Msg::Bid {
                auction: 1,
                robot: 3,
                cost: Some(12.25),
            },
            Msg::Bid {
                auction: 1,
                robot: 4,
                cost: None,
            },
            Msg::Award {
                auction: 1,
                task: Box::new(TaskSpec::new(
                    8,
                    TaskKind::PanTilt {
                        pan: 0.5,
                        tilt: -0.1,
                        seconds: 1.0,
                    },
                )),
                winner: 3,
                deadline: 3.5,
            },
            Msg::Accept {
                auction: 1,
                robot: 3,
            },
            Msg::Decline {
                auction: 1,
                robot: 3,
                reason: "queue full".into(),
            },
            Msg::Cancel {
                auction: 1,
                task: 8,
            },
            Msg::Abort { task: 7 },
            Msg::Clear { task: 7 },
            Msg::Operator {
                command: Box::new(OperatorCommand::Send { robot: 3, task }),
            },
            Msg::Operator {
                command: Box::new(OperatorCommand::Mode {
                    policy: Policy::Hungarian,
                }),
            },
            Msg::Operator {
                command: Box::new(OperatorCommand::Robots),
            },
            Msg::Report {
                text: "a\tb".into(),
            },
        ]
    }

    #[test]
    fn every_message_survives_a_round_trip_in_one_line() {
        let mut stream = Vec::new();
        let all = every_message();
        for (i, msg) in all.iter().enumerate() {
            let env = Envelope {
                from: i as u32,
                to: if i % 2 == 0 { None } else { Some(3) },
                msg: msg.clone(),
            };
            let line = encode(&env);
            assert_eq!(line.matches('\n').count(), 1, "one line: {line}");
            assert_eq!(decode(line.as_bytes(), 1), Ok(env.clone()));
            stream.extend_from_slice(line.as_bytes());
        }
        // The same through the stream decoder, fed in awkward pieces.
        let mut dec = FrameDecoder::default();
        let mut got = Vec::new();
        for chunk in stream.chunks(7) {
            dec.push(chunk);
            while let Some(m) = dec.next_message() {
                got.push(m.unwrap().msg);
            }
        }
        assert_eq!(got, all);
        assert_eq!(dec.finish(), Ok(()));
    }

    #[test]
    fn numbers_survive_the_wire_to_the_last_bit() {
        // A deadline the Control Center computed: its shortest form has 16 digits, more
        // than a best-effort parse reads exactly (it came back as 9.783505397).
        for t in [9.783505396999999, 0.1 + 0.2, 1e-300, 123_456.789_012_345_67] {
            let env = Envelope {
                from: 0,
                to: None,
                msg: Msg::Clock { seq: 1, time: t },
            };
            let line = encode(&env);
            assert_eq!(decode(line.as_bytes(), 1), Ok(env), "{line}");
        }
    }

    fn err(text: &str) -> String {
        decode(text.as_bytes(), 4).unwrap_err().to_string()
    }

    #[test]
    fn malformed_messages_get_a_clear_error() {
        assert_eq!(err("hello"), "message 4: expected value (at column 1)");
        assert_eq!(err("   "), "message 4: empty line");
        assert_eq!(
            err(r#"{"from":1,"msg":{"kind":"teleport"}}"#),
            "message 4: unknown variant `teleport`, expected one of `hello`, `bye`, `welcome`, `refused`, `clock`, `task`, `task_state`, `status`, `announce`, `bid`, `award`, `accept`, `decline`, `cancel`, `abort`, `clear`, `operator`, `report` (at column 34)"
        );
        assert!(err(r#"{"from":1,"msg":{"kind":"bye"}}"#).contains("missing field `robot`"));
        assert!(
            err(r#"{"from":1,"msg":{"kind":"bye","robot":1,"extra":2}}"#)
                .contains("unknown field `extra`")
        );
        assert!(err(r#"{"from":-1,"msg":{"kind":"bye","robot":1}}"#)
            .contains("invalid value: integer `-1`"));
        assert_eq!(
            err(r#"{"from":1,"msg":{"kind":"bid","auction":1,"robot":1,"cost":-3}}"#),
            "message 4 (bid): cost must be a finite number ≥ 0, found -3"
        );
        assert_eq!(
            err(
                r#"{"from":1,"msg":{"kind":"task","task":{"id":5,"kind":{"path":{"points":[]}}}}}"#
            ),
            "message 4 (task): a path needs at least one point"
        );
        assert_eq!(
            err(
                r#"{"from":1,"msg":{"kind":"task","task":{"id":5,"kind":{"goto":{"x":1,"y":2}},"after":[5]}}}"#
            ),
            "message 4 (task): task 5 cannot be its own precondition"
        );
        assert_eq!(
            err(
                r#"{"from":1,"msg":{"kind":"hello","info":{"robot":0,"name":"a","kind":"b","world":"c","capabilities":[],"speed":1}}}"#
            ),
            "message 4 (hello): robot ids start at 1 (0 is the Control Center)"
        );
        assert_eq!(
            err(
                r#"{"from":1,"msg":{"kind":"task","task":{"id":5,"kind":{"perceive":{"seconds":1e999}}}}}"#
            ),
            "message 4: number out of range (at column 81)"
        );
        assert_eq!(
            decode(b"\xff\xfe{}", 2),
            Err(CodecError::NotUtf8 { line: 2 })
        );
    }

    fn hello_line(name: &str, kind: &str, world: &str, robot: u32, speed: &str) -> String {
        let info = serde_json::json!({
            "robot": robot, "name": name, "kind": kind, "world": world,
            "capabilities": ["movement"],
        });
        let info = info.to_string();
        format!(
            r#"{{"from":{robot},"msg":{{"kind":"hello","info":{},"speed":{speed}}}}}}}"#,
            &info[..info.len() - 1]
        )
    }

    #[test]
    fn names_reasons_and_worlds_with_control_characters_are_refused() {
        // A tab or a line break would forge fields and lines of the logs and tables.
        assert_eq!(
            err(&hello_line("a\nb\tc\u{1}", "k", "w", 3, "1")),
            "message 4 (hello): robot name holds the control character U+000A at byte 1: it must be one line of printable text (no tab, line break or other control character)"
        );
        assert!(err(&hello_line("a", "k\tk", "w", 3, "1"))
            .contains("robot kind holds the control character U+0009 at byte 1"));
        assert!(err(&hello_line("a", "k", "w\r", 3, "1"))
            .contains("robot world holds the control character U+000D"));
        assert!(err(&hello_line("a", "k", "w\u{2028}", 3, "1")).contains("U+2028"));
        assert!(err(&hello_line("a", "k", "w\u{85}", 3, "1")).contains("U+0085"));
        assert_eq!(
            err(
                r#"{"from":0,"msg":{"kind":"operator","command":{"op":"submit","task":{"id":0,"kind":{"goto":{"x":1,"y":2}},"world":"w\n99.000\tawarded\tauction=1\trobot=5"}}}}"#
            ),
            "message 4 (operator): task world holds the control character U+000A at byte 1: it must be one line of printable text (no tab, line break or other control character)"
        );
        assert!(err(
            r#"{"from":3,"msg":{"kind":"decline","auction":1,"robot":3,"reason":"full\n1.0\tjoined"}}"#
        )
        .contains("decline reason holds the control character U+000A"));
        let status = |error: &str| {
            format!(
                r#"{{"from":3,"msg":{{"kind":"status","status":{{"robot":3,"time":1,"synced":true,"x":0,"y":0,"heading":0,"speed":0,"running":{{}},"queued":0,"ok":false,"error":"{error}"}}}}}}"#
            )
        };
        assert!(
            err(&status(r"bump\tx")).contains("status error holds the control character U+0009")
        );
        // Printable text of any script is welcome, spaces included.
        assert!(decode(
            hello_line("nomad «one» ünï", "k", "w", 3, "1").as_bytes(),
            1
        )
        .is_ok());
        assert!(decode(status("bumper hit").as_bytes(), 1).is_ok());
    }

    #[test]
    fn hellos_with_empty_names_absurd_speeds_or_the_servers_ids_are_refused() {
        assert_eq!(
            err(&hello_line("a", "", "w", 3, "1")),
            "message 4 (hello): robot kind is empty"
        );
        assert_eq!(
            err(&hello_line("a", "k", "", 3, "1")),
            "message 4 (hello): robot world is empty"
        );
        assert_eq!(
            err(&hello_line("", "k", "w", 3, "1")),
            "message 4 (hello): robot name is empty"
        );
        assert_eq!(
            err(&hello_line("a", "k", "w", 3, "1e308")),
            "message 4 (hello): speed must be at most 1000000 (m/s), found 1e308"
        );
        assert!(decode(hello_line("a", "k", "w", 3, "1000000").as_bytes(), 1).is_ok());
        assert_eq!(
            err(&hello_line("a", "k", "w", 1 << 30, "1")),
            "message 4 (hello): robot ids go from 1 to 1073741823 (2^30 - 1), found 1073741824: larger ids are the server's own"
        );
        assert!(decode(hello_line("a", "k", "w", (1 << 30) - 1, "1").as_bytes(), 1).is_ok());
        assert_eq!(
            err(
                r#"{"from":0,"msg":{"kind":"task","task":{"id":5,"kind":{"goto":{"x":1,"y":2}},"world":""}}}"#
            ),
            "message 4 (task): task world is empty"
        );
    }

    #[test]
    fn tasks_with_a_precondition_twice_or_absurd_durations_and_angles_are_refused() {
        let task = |kind: &str, after: &str| {
            format!(
                r#"{{"from":0,"msg":{{"kind":"task","task":{{"id":5,"kind":{kind},"after":[{after}]}}}}}}"#
            )
        };
        let goto = r#"{"goto":{"x":1,"y":2}}"#;
        assert_eq!(
            err(&task(goto, "3,4,3")),
            "message 4 (task): precondition 3 is listed twice"
        );
        assert!(decode(task(goto, "3,4").as_bytes(), 1).is_ok());
        assert_eq!(
            err(&task(r#"{"perceive":{"seconds":1e300}}"#, "")),
            "message 4 (task): seconds must be at most 86400 (one day), found 1e300"
        );
        assert!(decode(task(r#"{"perceive":{"seconds":86400}}"#, "").as_bytes(), 1).is_ok());
        assert_eq!(
            err(&task(
                r#"{"pan_tilt":{"pan":1e9,"tilt":-1e9,"seconds":1}}"#,
                ""
            )),
            "message 4 (task): pan must be within ±6.283 rad (one turn, 2π), found 1000000000"
        );
        assert!(
            err(&task(r#"{"pan_tilt":{"pan":1,"tilt":-7,"seconds":1}}"#, ""))
                .contains("tilt must be within ±6.283 rad")
        );
        assert!(err(&task(
            r#"{"pan_tilt":{"pan":1,"tilt":1,"seconds":1e5}}"#,
            ""
        ))
        .contains("seconds must be at most 86400"));
        assert!(decode(
            task(r#"{"pan_tilt":{"pan":-6.28,"tilt":3.14,"seconds":2}}"#, "").as_bytes(),
            1
        )
        .is_ok());
    }

    #[test]
    fn operator_requests_without_arguments_refuse_fields_too() {
        for op in ["robots", "tasks", "follow"] {
            let line =
                format!(r#"{{"from":0,"msg":{{"kind":"operator","command":{{"op":"{op}"}}}}}}"#);
            assert!(decode(line.as_bytes(), 1).is_ok(), "{line}");
            let extra = format!(
                r#"{{"from":0,"msg":{{"kind":"operator","command":{{"op":"{op}","x":1}}}}}}"#
            );
            assert!(err(&extra).contains("unknown field `x`"), "{}", err(&extra));
        }
        assert!(err(
            r#"{"from":0,"msg":{"kind":"operator","command":{"op":"abort","task":1,"x":1}}}"#
        )
        .contains("unknown field `x`"));
        assert!(err(r#"{"from":0,"msg":{"kind":"operator","command":{"op":"jump"}}}"#)
            .contains("unknown variant `jump`, expected one of `send`, `submit`, `announce`, `abort`, `clear`, `mode`, `robots`, `tasks`, `follow`"));
    }

    #[test]
    fn blank_lines_between_messages_are_skipped_and_a_blank_line_alone_is_empty() {
        let line = encode(&Envelope {
            from: 0,
            to: None,
            msg: Msg::Clear { task: 1 },
        });
        let mut dec = FrameDecoder::default();
        dec.push(b"\n  \r\n\t\n");
        dec.push(line.as_bytes());
        // Skipped, yet counted: the message is the stream's fourth line.
        assert_eq!(
            dec.next_message().unwrap().unwrap().msg,
            Msg::Clear { task: 1 }
        );
        dec.push(b"{");
        dec.push(b"\n");
        assert!(matches!(
            dec.next_message(),
            Some(Err(CodecError::Malformed { line: 5, .. }))
        ));
        assert_eq!(decode(b"\r\n", 9), Err(CodecError::Empty { line: 9 }));
    }

    #[test]
    fn truncated_messages_are_reported_and_the_stream_goes_on() {
        let line = encode(&Envelope {
            from: 0,
            to: Some(2),
            msg: Msg::Abort { task: 9 },
        });
        let cut = &line[..line.len() / 2];
        assert!(
            err(cut).starts_with("message 4: incomplete JSON (EOF while parsing"),
            "{}",
            err(cut)
        );
        // A stream cut in the middle of its last message.
        let mut dec = FrameDecoder::default();
        dec.push(line.as_bytes());
        dec.push(cut.as_bytes());
        assert!(dec.next_message().unwrap().is_ok());
        assert!(dec.next_message().is_none(), "waits for the rest");
        assert_eq!(
            dec.finish(),
            Err(CodecError::Truncated {
                line: 2,
                bytes: cut.len()
            })
        );
        // A bad line in the middle: an error for it, then the next message as usual.
        let mut dec = FrameDecoder::default();
        dec.push(b"{\"from\":1\n\n");
        dec.push(line.as_bytes());
        assert!(matches!(
            dec.next_message(),
            Some(Err(CodecError::Malformed { line: 1, .. }))
        ));
        assert_eq!(
            dec.next_message().unwrap().unwrap().msg,
            Msg::Abort { task: 9 }
        );
    }

    #[test]
    fn over_long_lines_are_refused_without_being_buffered() {
        let mut dec = FrameDecoder::new(64);
        dec.push(&[b'x'; 50]);
        assert!(dec.next_message().is_none());
        dec.push(&[b'x'; 50]);
        assert_eq!(
            dec.next_message(),
            Some(Err(CodecError::TooLong { line: 1, limit: 64 }))
        );
        dec.push(&[b'y'; 1000]);
        assert!(
            dec.next_message().is_none(),
            "the rest of the line is skipped"
        );
        dec.push(b"yyy\n");
        let line = encode(&Envelope {
            from: 0,
            to: None,
            msg: Msg::Clear { task: 1 },
        });
        dec.push(line.as_bytes());
        assert_eq!(
            dec.next_message().unwrap().unwrap().msg,
            Msg::Clear { task: 1 }
        );
        assert_eq!(dec.finish(), Ok(()));
    }
}
