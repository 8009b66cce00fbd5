//! The coordination layer over real TCP through the test bed's relay (`simrob-netbed`'s
//! `TcpRelay`, on loopback): `simrob coord serve`, a robot agent driving a Nomad on
//! `simrob mrs` and connected to the Control Center through the relay, and an operator
//! following the logs. A robot process killed and started again with the same id gets its
//! unfinished task again and not its finished one; a slowed link only slows, a stalled one
//! is noticed by both ends (each lets go after its silence timeout) and a cut one at once,
//! and in both the robot connects again and gets its unfinished task again. Every wait is
//! on an event (a line printed, a log line reported); the time-outs only guard against a
//! hang.

use std::time::Duration;

use crate::coord_common::{address, pos, start, Operator, Proc};

use simrob_coord::model::{TaskKind, TaskSpec};
use simrob_coord::wire::OperatorCommand;
use simrob_netbed::TcpRelay;

/// Seconds of silence after which either end lets the link go (short for the test; a loaded
/// machine still has the robot reporting every half second well within it).
const SILENCE: &str = "3";

struct Bed {
    _mrs: Proc,
    cc: Proc,
    mrs_addr: String,
    relay: TcpRelay,
    op: Operator,
    logs: std::path::PathBuf,
}

impl Bed {
    fn start(name: &str) -> Bed {
        let logs =
            std::env::temp_dir().join(format!("simrob-coord-links-{name}-{}", std::process::id()));
        let mrs = start(&["mrs", "--port", "0"], false);
        let mrs_addr = address(&mrs, "tcp");
        let cc = start(
            &[
                "coord",
                "serve",
                "--port",
                "0",
                "--silence-timeout",
                SILENCE,
                "--log-dir",
                logs.to_str().expect("a path"),
            ],
            false,
        );
        let cc_addr = address(&cc, "tcp");
        let relay = TcpRelay::start(cc_addr.parse().expect("an address")).expect("relay");
        // The operator talks to the Control Center directly; only the robot's link is impaired.
        let op = Operator::following(&cc_addr);
        Bed {
            _mrs: mrs,
            cc,
            mrs_addr,
            relay,
            op,
            logs,
        }
    }

    /// Robot 1, a Nomad, connected to the Control Center through the relay.
    fn robot(&self) -> Proc {
        start(
            &[
                "coord",
                "robot",
                "--cc",
                &self.relay.addr().to_string(),
                "--id",
                "1",
                "--mrs",
                &self.mrs_addr,
                "--cc-silence",
                SILENCE,
                "--reconnect-for",
                "600",
            ],
            false,
        )
    }

    /// Sends `kind` to robot 1; the task's id.
    fn send(&mut self, kind: TaskKind) -> u64 {
        self.op.send(OperatorCommand::Send {
            robot: 1,
            task: TaskSpec::new(0, kind),
        });
        let answer = self
            .op
            .wait(|r| r.starts_with("task ") || r.starts_with("error"));
        answer
            .strip_prefix("task ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the task was refused: {answer}"))
    }

    /// Waits until task `id` is reported changing state with `change` (`QUEUED→RUNNING`).
    fn wait_state(&self, id: u64, change: &str) {
        let task = format!("\ttask={id}\t");
        self.op
            .wait(|r| r.starts_with("states.log") && r.contains(&task) && r.ends_with(change));
    }

    /// How many times task `id` started running, from the Control Center's states.log.
    fn starts(&self, id: u64) -> usize {
        let states = std::fs::read_to_string(self.logs.join("states.log")).unwrap_or_default();
        let task = format!("\ttask={id}\t");
        states
            .lines()
            .filter(|l| l.contains(&task) && l.ends_with("QUEUED→RUNNING"))
            .count()
    }

    /// A short trip of the Nomad that ends; the task's id.
    fn trip(&mut self) -> u64 {
        let rows = self.op.robots(&[1]);
        let (x, y) = pos(&rows, 1);
        let id = self.send(TaskKind::Goto { x: x + 0.3, y });
        self.wait_state(id, "RUNNING→ENDED");
        id
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.logs);
    }
}

#[test]
fn a_robot_restarted_with_the_same_id_through_a_tcp_relay_gets_its_unfinished_task_again() {
    let mut bed = Bed::start("restart");
    let robot = bed.robot();
    let done = bed.trip();
    let long = bed.send(TaskKind::Perceive { seconds: 3600.0 });
    bed.wait_state(long, "QUEUED→RUNNING");
    // The process dies: the system closes its connection, the relay passes the close on.
    drop(robot);
    let left = bed
        .op
        .wait(|r| r.starts_with("tasks.log") && r.contains("\tleft\trobot=1\t"));
    assert!(left.contains("1 tasks back to allocation"), "{left}");
    // Started again with the same id: the unfinished task is sent to it again, afresh.
    let again = bed.robot();
    again.wait_line("connected to the Control Center");
    bed.wait_state(long, "QUEUED→RUNNING");
    // It works as any robot: a new trip ends.
    bed.trip();
    assert_eq!(bed.starts(done), 1, "a finished task is never sent again");
    assert!(bed.starts(long) >= 2, "the unfinished task ran again");
}

#[test]
fn slowed_stalled_and_cut_links_to_the_control_center_are_noticed_and_recovered() {
    let mut bed = Bed::start("links");
    let robot = bed.robot();
    // Slowed: every chunk each way held 30 ms; tasks still run and end.
    bed.relay.set_delay(Duration::from_millis(30));
    let done = bed.trip();
    bed.relay.set_delay(Duration::ZERO);
    let long = bed.send(TaskKind::Perceive { seconds: 3600.0 });
    bed.wait_state(long, "QUEUED→RUNNING");

    // Stalled: the connection stays open and nothing passes. Both ends notice the silence.
    bed.relay.stall(true);
    let let_go = bed.cc.wait_line("let go");
    assert!(let_go.contains("robot 1"), "{let_go}");
    robot.wait_line("no word from the Control Center");
    bed.op
        .wait(|r| r.starts_with("tasks.log") && r.contains("\tleft\trobot=1\t"));
    // The link comes back: the robot, trying all along, is taken again and gets its task.
    bed.relay.stall(false);
    bed.wait_state(long, "QUEUED→RUNNING");

    // Cut: both ends see the connection closed at once; the robot connects again.
    let before = bed.relay.stats().connections;
    bed.relay.cut();
    robot.wait_line("the Control Center closed the connection; connecting again");
    bed.wait_state(long, "QUEUED→RUNNING");
    assert!(bed.relay.stats().connections > before);
    assert!(bed.relay.stats().cut >= 1);
    // Still a working robot.
    bed.trip();
    assert_eq!(bed.starts(done), 1, "a finished task is never sent again");
    assert!(
        bed.starts(long) >= 3,
        "the unfinished task ran again after each loss"
    );
}
