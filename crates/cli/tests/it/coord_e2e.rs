//! End to end: `simrob coord serve`, a robot agent driving a SumBot on `simrob serve`, one
//! driving a Nomad on `simrob mrs`, and a swarm simulation whose robots join the same
//! Control Center; an operator sends each of them a task and waits until each is ENDED.
//! Every wait is on an event (a line from a process or the Control Center); the time-outs
//! only guard against a hang.

use crate::coord_common;

use coord_common::{address, pos, start, Operator, Proc};

use simrob_coord::model::{TaskKind, TaskSpec};
use simrob_coord::wire::OperatorCommand;

/// A Control Center logging to `logs`, an operator following it, and robot 1 driving the
/// SumBot of the SimRob server at `simrob_addr`.
fn control_center_and_sumbot(
    logs: &std::path::Path,
    simrob_addr: &str,
) -> (Proc, String, Operator, Proc) {
    let cc = start(
        &[
            "coord",
            "serve",
            "--port",
            "0",
            "--log-dir",
            logs.to_str().unwrap(),
        ],
        false,
    );
    let cc_addr = address(&cc, "tcp");
    let mut op = Operator::connect(&cc_addr);
    op.send(OperatorCommand::Follow);
    op.wait(|r| r.starts_with("following"));
    let sumbot = start(
        &[
            "coord",
            "robot",
            "--cc",
            &cc_addr,
            "--id",
            "1",
            "--simrob",
            simrob_addr,
        ],
        false,
    );
    (cc, cc_addr, op, sumbot)
}

#[test]
fn an_operator_sends_tasks_to_a_sumbot_a_nomad_and_a_swarm_robot() {
    let logs = std::env::temp_dir().join(format!("simrob-coord-e2e-{}", std::process::id()));
    let simrob = start(
        &[
            "serve",
            "--port",
            "0",
            "--scenario",
            "scenarios/soccer.xml",
            "--speed",
            "1",
        ],
        false,
    );
    let simrob_addr = address(&simrob, "udp");
    let mrs = start(&["mrs", "--port", "0"], false);
    let mrs_addr = address(&mrs, "tcp");
    let (_cc, cc_addr, mut op, _sumbot) = control_center_and_sumbot(&logs, &simrob_addr);
    let _nomad = start(
        &[
            "coord", "robot", "--cc", &cc_addr, "--id", "2", "--mrs", &mrs_addr,
        ],
        false,
    );
    let _swarm = start(
        &[
            "coord",
            "swarm",
            "scenarios/swarm/hospital.toml",
            "--cc",
            &cc_addr,
            "--robot-id-base",
            "100",
            "--speed",
            "4",
        ],
        false,
    );
    let rows = op.robots(&[1, 2, 100, 101, 102]);
    // One view: the SumBot, the Nomad and the three swarm robots in one list.
    let (sx, sy) = pos(&rows, 1);
    let (nx, ny) = pos(&rows, 2);
    let tasks = [
        (
            1,
            TaskKind::Goto {
                x: sx + 0.15,
                y: sy,
            },
        ),
        (2, TaskKind::Goto { x: nx + 0.5, y: ny }),
        (100, TaskKind::Goto { x: 500.0, y: 110.0 }), // the hospital's storage room
    ];
    let mut ids = Vec::new();
    for (robot, kind) in tasks {
        op.send(OperatorCommand::Send {
            robot,
            task: TaskSpec::new(0, kind),
        });
        let answer = op.wait(|r| r.starts_with("task ") || r.starts_with("error"));
        let id: u64 = answer
            .strip_prefix("task ")
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("the task was refused: {answer}"));
        ids.push((robot, id));
    }
    // Wait until every task is reported ENDED, in whatever order they end.
    let mut pending: Vec<String> = ids
        .iter()
        .map(|(robot, id)| format!("robot={robot}\ttask={id}\t"))
        .collect();
    while !pending.is_empty() {
        let line = op.wait(|r| {
            r.starts_with("states.log") && (r.contains("→ENDED") || r.contains("→FAILED"))
        });
        if let Some(i) = pending.iter().position(|p| line.contains(p.as_str())) {
            assert!(line.ends_with("RUNNING→ENDED"), "{line}");
            pending.remove(i);
        }
    }
    // The three logs, stamped with the Time Server's time.
    let read = |name: &str| std::fs::read_to_string(logs.join(name)).unwrap_or_default();
    let states = read("states.log");
    for (robot, id) in &ids {
        assert!(
            states.contains(&format!("robot={robot}\ttask={id}\tQUEUED→RUNNING")),
            "{states}"
        );
    }
    assert!(
        read("tasks.log")
            .lines()
            .filter(|l| l.contains("\tsent\t"))
            .count()
            >= 3
    );
    let status = read("status.log");
    for robot in [1, 2, 100] {
        assert!(status.contains(&format!("\trobot={robot}\t")), "{status}");
    }
    let stamp: f64 = states
        .lines()
        .nth(1)
        .and_then(|l| l.split('\t').next())
        .and_then(|t| t.parse().ok())
        .expect("a stamped line");
    assert!(stamp > 0.0);
    let _ = std::fs::remove_dir_all(&logs);
}

#[test]
fn a_sumbot_robot_reports_its_pose_from_a_server_running_as_fast_as_it_can() {
    // Broadcasts then come far less than a millisecond apart: reading the pose must still
    // return (it drained them for ever, and the robot never sent a status).
    let logs = std::env::temp_dir().join(format!("simrob-coord-fast-{}", std::process::id()));
    let simrob = start(
        &["serve", "--port", "0", "--scenario", "scenarios/soccer.xml"],
        false,
    );
    let simrob_addr = address(&simrob, "udp");
    let (_cc, _, mut op, _sumbot) = control_center_and_sumbot(&logs, &simrob_addr);
    let rows = op.robots(&[1]);
    let (x, y) = pos(&rows, 1);
    assert!(x.is_finite() && y.is_finite(), "{rows:?}");
    let _ = std::fs::remove_dir_all(&logs);
}
