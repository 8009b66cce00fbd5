//! End to end: `simrob coord serve`, a robot agent driving a SumBot on `simrob serve`, one
//! driving a Nomad on `simrob mrs`, and a swarm simulation whose robots join the same
//! Control Center; an operator sends each of them a task and waits until each is ENDED.
//! Every wait is on an event (a line from a process or the Control Center); the time-outs
//! only guard against a hang.

use crate::coord_common;

use std::io::Write;
use std::net::TcpStream;
use std::sync::mpsc::{self, Receiver};

use coord_common::{start, Proc, GUARD};

use simrob_coord::model::{TaskKind, TaskSpec};
use simrob_coord::wire::{encode, Envelope, FrameDecoder, Msg, OperatorCommand};

fn address(p: &Proc, scheme: &str) -> String {
    p.after(&format!("listening on {scheme}://"))
}

/// The operator's connection to the Control Center.
struct Operator {
    stream: TcpStream,
    reports: Receiver<String>,
}

impl Operator {
    fn connect(addr: &str) -> Operator {
        let stream = TcpStream::connect(addr).expect("operator connects");
        let mut reader = stream.try_clone().expect("clone");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut dec = FrameDecoder::default();
            let mut buf = [0u8; 8192];
            loop {
                let n = match std::io::Read::read(&mut reader, &mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                dec.push(&buf[..n]);
                while let Some(m) = dec.next_message() {
                    let text = match m.expect("the Control Center speaks the wire format").msg {
                        Msg::Report { text } => text,
                        Msg::Refused { reason } => format!("refused: {reason}"),
                        other => format!("{other:?}"),
                    };
                    if tx.send(text).is_err() {
                        return;
                    }
                }
            }
        });
        Operator {
            stream,
            reports: rx,
        }
    }

    fn send(&mut self, command: OperatorCommand) {
        let env = Envelope {
            from: 0,
            to: Some(0),
            msg: Msg::Operator {
                command: Box::new(command),
            },
        };
        self.stream
            .write_all(encode(&env).as_bytes())
            .expect("send");
    }

    fn wait(&self, pred: impl Fn(&str) -> bool) -> String {
        loop {
            match self.reports.recv_timeout(GUARD) {
                Ok(r) if pred(&r) => return r,
                Ok(_) => {}
                Err(e) => panic!("the awaited report never came: {e}"),
            }
        }
    }

    /// The robots table, once it lists every robot in `ids` with a position.
    fn robots(&mut self, ids: &[u32]) -> Vec<(u32, f64, f64)> {
        loop {
            self.send(OperatorCommand::Robots);
            let table = self.wait(|r| r.starts_with("id\tname"));
            let rows: Vec<(u32, f64, f64)> = table
                .lines()
                .skip(1)
                .filter_map(|l| {
                    let f: Vec<&str> = l.split('\t').collect();
                    Some((f[0].parse().ok()?, f[4].parse().ok()?, f[5].parse().ok()?))
                })
                .collect();
            if ids.iter().all(|id| rows.iter().any(|r| r.0 == *id)) {
                return rows;
            }
            // Not everyone has joined and reported yet: wait for the next status.
            self.wait(|r| r.starts_with("status.log"));
        }
    }
}

fn pos(rows: &[(u32, f64, f64)], id: u32) -> (f64, f64) {
    rows.iter()
        .find(|r| r.0 == id)
        .map(|r| (r.1, r.2))
        .expect("listed")
}

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
