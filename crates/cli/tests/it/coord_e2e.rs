//! End to end: `simrob coord serve`, a robot agent driving a SumBot on `simrob serve`, one
//! driving a Nomad on `simrob mrs`, and a swarm simulation whose robots join the same
//! Control Center; an operator sends each of them a task and waits until each is ENDED.
//! Every wait is on an event (a line from a process or the Control Center); the time-outs
//! only guard against a hang.

use crate::coord_common;

use coord_common::{address, incoming, pos, start, Operator, Proc, GUARD};

use simrob_coord::model::{RobotInfo, TaskClass, TaskKind, TaskSpec};
use simrob_coord::wire::{encode, Envelope, Msg, OperatorCommand};

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
    let op = Operator::following(&cc_addr);
    let sumbot = start(
        &[
            "coord",
            "robot",
            "--cc",
            &cc_addr,
            "--id",
            "1",
            "--server",
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

/// A robot's bid, accept or decline for an auction that is not open, its task state for a
/// task there is not, and its bid for a task of another world are each answered with a
/// `refused` line saying why; none shows in the logs as a decline or a state change, and
/// the robot of another world does not win.
#[test]
fn a_robots_messages_that_fit_nothing_the_control_center_knows_are_refused() {
    let cc = start(&["coord", "serve", "--port", "0"], false);
    let addr = address(&cc, "tcp");
    let mut op = Operator::following(&addr);
    let mut robot = std::net::TcpStream::connect(&addr).expect("robot connects");
    let answers = incoming(&robot);
    let mut say = |msg: Msg| {
        let env = Envelope {
            from: 31,
            to: Some(0),
            msg,
        };
        std::io::Write::write_all(&mut robot, encode(&env).as_bytes()).expect("sent");
    };
    // The next message that is not the Time Server's (within GUARD, clocks or not).
    let next = || {
        let until = std::time::Instant::now() + GUARD;
        loop {
            let left = until.saturating_duration_since(std::time::Instant::now());
            match answers.recv_timeout(left).expect("an answer") {
                Msg::Clock { .. } => continue,
                other => break other,
            }
        }
    };
    say(Msg::Hello {
        info: Box::new(RobotInfo {
            robot: 31,
            name: "r31".into(),
            kind: "test".into(),
            world: "lab".into(),
            capabilities: vec![TaskClass::Movement],
            speed: 1.0,
        }),
    });
    assert_eq!(next(), Msg::Welcome { robot: 31 });
    let not_open = "auction 12345 is not open (it has ended, or never was)";
    let bad = [
        (
            Msg::Bid {
                auction: 12345,
                robot: 31,
                cost: Some(1.0),
            },
            format!("bid from robot 31: {not_open}"),
        ),
        (
            Msg::Accept {
                auction: 12345,
                robot: 31,
            },
            format!("accept from robot 31: {not_open}"),
        ),
        (
            Msg::Decline {
                auction: 12345,
                robot: 31,
                reason: "x".into(),
            },
            format!("decline from robot 31: {not_open}"),
        ),
        (
            Msg::TaskState {
                robot: 31,
                task: 4242,
                state: simrob_coord::model::TaskState::Ended,
                time: 0.0,
                synced: false,
            },
            "task_state from robot 31: there is no task 4242".to_string(),
        ),
    ];
    for (msg, reason) in bad {
        say(msg);
        assert_eq!(next(), Msg::Refused { reason });
    }
    // A task of world flat: robot 31, in lab, bids nothing and does not win.
    op.send(OperatorCommand::Announce {
        task: TaskSpec {
            world: Some("flat".into()),
            ..TaskSpec::new(0, TaskKind::Goto { x: 1.0, y: 1.0 })
        },
    });
    let Msg::Announce { auction, .. } = next() else {
        panic!("the call for bids")
    };
    say(Msg::Bid {
        auction,
        robot: 31,
        cost: Some(0.0),
    });
    assert_eq!(
        next(),
        Msg::Refused {
            reason: "bid from robot 31: invalid: task is for world flat, robot 31 is in lab".into()
        }
    );
    // Its bid counted as its refusal: nobody took the task. Nothing before that in the logs
    // reads as a decline or a state change.
    op.wait(|r| {
        assert!(
            !r.contains("\tdeclined\t") && !r.starts_with("states.log") && !r.contains("awarded"),
            "{r}"
        );
        r.contains("\tunallocated\t")
    });
    drop(cc);
}

/// `simrob coord cc` with `flags` and no menu input: it stops at once, having started (exit
/// 0) or refused its flags (the error).
fn cc_with(flags: &[&str]) -> (bool, String) {
    let logs = std::env::temp_dir().join(format!("simrob-coord-flags-{}", std::process::id()));
    let out = crate::support::simrob()
        .args(["coord", "cc", "--port", "0", "--log-dir"])
        .arg(&logs)
        .args(flags)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("simrob runs");
    let _ = std::fs::remove_dir_all(&logs);
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn flags_out_of_their_range_are_refused_with_the_range_and_the_key() {
    for (flag, value, why) in [
        ("--clock-period", "1e-10", "from 0.01 to 60 seconds (or 50ms, 2s, 1min), got '1e-10' (clock_period)"),
        ("--clock-period", "1e308", "from 0.01 to 60 seconds (or 50ms, 2s, 1min), got '1e308' (clock_period)"),
        ("--clock-period", "NaN", "seconds, 0 or more (or 50ms, 2s, 1min), got 'NaN'"),
        ("--bid-window", "1e-10", "from 0.01 to 3600 seconds (or 50ms, 2s, 1min), got '1e-10' (bid_window)"),
        ("--accept-window", "1e308", "from 0.01 to 3600 seconds (or 50ms, 2s, 1min), got '1e308' (accept_window)"),
        ("--reannounce-period", "0.01", "from 0.1 to 3600 seconds (or 50ms, 2s, 1min), got '0.01' (reannounce_period)"),
        ("--silence-timeout", "1e-10", "0 (never) or a time from 0.1 to 86400 seconds (or 50ms, 2s, 1min), got '1e-10' (silence_timeout)"),
        ("--silence-timeout", "inf", "seconds, 0 or more (or 50ms, 2s, 1min), got 'inf'"),
        ("--silence-timeout", "2000min", "0 (never) or a time from 0.1 to 86400 seconds (or 50ms, 2s, 1min), got '2000min' (silence_timeout)"),
        ("--max-message-bytes", "0", "from 1024 to 1048576, got '0' (max_message_bytes)"),
        ("--max-message-bytes", "1048577", "from 1024 to 1048576, got '1048577' (max_message_bytes)"),
        ("--max-name-bytes", "0", "from 1 to 4096, got '0' (max_name_bytes)"),
        ("--max-name-bytes", "4097", "from 1 to 4096, got '4097' (max_name_bytes)"),
        ("--max-path-points", "4097", "from 1 to 4096, got '4097' (max_path_points)"),
        ("--max-coordinate", "1e300", "from 1 to 1000000000000 metres, got '1e300' (max_coordinate)"),
        ("--max-coordinate", "NaN", "expected a number, got 'NaN'"),
        ("--max-robots", "0", "1 or more, got '0' (max_robots)"),
        ("--max-tasks", "0", "1 or more, got '0' (max_tasks)"),
    ] {
        let (started, err) = cc_with(&[flag, value]);
        assert!(!started, "{flag} {value} was accepted");
        assert!(err.contains(why), "{flag} {value}: {err}");
    }
    // Each bound is accepted.
    let (started, err) = cc_with(&[
        "--clock-period",
        "0.01",
        "--bid-window",
        "3600",
        "--accept-window",
        "0.01",
        "--reannounce-period",
        "0.1",
        "--silence-timeout",
        "0",
        "--max-message-bytes",
        "1024",
        "--max-name-bytes",
        "4096",
        "--max-path-points",
        "1",
        "--max-coordinate",
        "1e12",
        "--max-departed-robots",
        "0",
    ]);
    assert!(started, "{err}");
    let (started, err) = cc_with(&["--clock-period", "60", "--silence-timeout", "86400"]);
    assert!(started, "{err}");
}

#[test]
fn bad_input_from_the_network_is_refused_and_changes_nothing() {
    let cc = start(
        &[
            "coord",
            "serve",
            "--port",
            "0",
            "--max-departed-robots",
            "2",
        ],
        false,
    );
    let addr = address(&cc, "tcp");
    let mut op = Operator::following(&addr);
    let error = |r: &str| r.starts_with("error") || r.starts_with("refused");
    // Coordinates past max_coordinate (the audit's path of 2,000 points at 1e300), a path
    // longer than max_path_points, a world name longer than max_name_bytes.
    let tasks = [
        (
            TaskKind::Path {
                points: vec![[1e300, 1e300]; 2000],
            },
            "error: invalid: x = 1e300 is beyond ±1000000 m (key max_coordinate)",
        ),
        (
            TaskKind::Goto { x: 3.0, y: -2e6 },
            "error: invalid: y = -2000000 is beyond ±1000000 m (key max_coordinate)",
        ),
        (
            TaskKind::Path {
                points: vec![[1.0, 1.0]; 4097],
            },
            "refused: message 4 (operator): a path has at most 4096 points (max_path_points), found 4097",
        ),
    ];
    for (kind, why) in tasks {
        op.send(OperatorCommand::Submit {
            task: TaskSpec::new(0, kind),
        });
        assert_eq!(op.wait(error), why);
    }
    op.send(OperatorCommand::Submit {
        task: TaskSpec {
            world: Some("w".repeat(300)),
            ..TaskSpec::new(0, TaskKind::Goto { x: 1.0, y: 1.0 })
        },
    });
    assert_eq!(
        op.wait(error),
        "error: invalid: task world is 300 bytes, longer than 256 (key max_name_bytes)"
    );
    // A robot with a 64,000-byte name is refused; then five robots say hello and hang up.
    let hello = |id: u32, name: String| {
        let mut s = std::net::TcpStream::connect(&addr).expect("robot connects");
        let answers = incoming(&s);
        let info = RobotInfo {
            robot: id,
            name,
            kind: "test".into(),
            world: "flat".into(),
            capabilities: vec![TaskClass::Movement],
            speed: 1.0,
        };
        let env = Envelope {
            from: id,
            to: Some(0),
            msg: Msg::Hello {
                info: Box::new(info),
            },
        };
        std::io::Write::write_all(&mut s, encode(&env).as_bytes()).expect("hello sent");
        let answer = answers.recv_timeout(GUARD).expect("an answer");
        let _ = s.shutdown(std::net::Shutdown::Both);
        answer
    };
    assert_eq!(
        hello(1, "n".repeat(64_000)),
        Msg::Refused {
            reason: "hello from robot 1: invalid: robot name is 64000 bytes, longer than 256 (key max_name_bytes)".into()
        }
    );
    // A robot may not set the time: that is the server's own Time Server's.
    {
        let mut s = std::net::TcpStream::connect(&addr).expect("robot connects");
        let answers = incoming(&s);
        for msg in [
            Msg::Hello {
                info: Box::new(RobotInfo {
                    robot: 9,
                    name: "clockmaker".into(),
                    kind: "test".into(),
                    world: "flat".into(),
                    capabilities: vec![TaskClass::Movement],
                    speed: 1.0,
                }),
            },
            Msg::Clock {
                seq: u64::MAX,
                time: 1e9,
            },
        ] {
            let env = Envelope {
                from: 9,
                to: Some(0),
                msg,
            };
            std::io::Write::write_all(&mut s, encode(&env).as_bytes()).expect("sent");
        }
        assert_eq!(
            answers.recv_timeout(GUARD).expect("welcome"),
            Msg::Welcome { robot: 9 }
        );
        let refused = loop {
            match answers.recv_timeout(GUARD).expect("an answer") {
                Msg::Clock { .. } => continue,
                other => break other,
            }
        };
        assert_eq!(
            refused,
            Msg::Refused {
                reason: "clock: only this server's Time Server publishes the time".into()
            }
        );
        let _ = s.shutdown(std::net::Shutdown::Both);
        op.wait(|r| r.contains("\tleft\t") && r.contains("robot=9\t"));
    }
    for id in 1..=5 {
        assert_eq!(hello(id, format!("r{id}")), Msg::Welcome { robot: id });
        op.wait(|r| r.contains("\tleft\t") && r.contains(&format!("robot={id}\t")));
    }
    // Of the robots that left, the last two are remembered; no task was taken.
    op.send(OperatorCommand::Robots);
    let table = op.wait(|r| r.starts_with("id\tname"));
    let ids: Vec<&str> = table
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap_or(""))
        .collect();
    assert_eq!(ids, ["4", "5"], "{table}");
    assert!(
        table.lines().skip(1).all(|l| l.ends_with("\tleft")),
        "{table}"
    );
    op.send(OperatorCommand::Tasks);
    assert_eq!(
        op.wait(|r| r.starts_with("task\t")),
        "task\trobot\tstate\tafter\twhat"
    );
    drop(cc);
}

/// A robot agent says it is connected only once the Control Center has taken its hello: a
/// second agent with a taken id never says so, and gives up.
#[test]
fn a_robot_refused_its_id_never_says_it_is_connected() {
    let cc = start(&["coord", "serve", "--port", "0"], false);
    let cc_addr = address(&cc, "tcp");
    let mrs = start(&["mrs", "--port", "0"], false);
    let mrs_addr = address(&mrs, "tcp");
    let robot = |extra: &[&str]| {
        let mut args = vec![
            "coord", "robot", "--cc", &cc_addr, "--id", "1", "--mrs", &mrs_addr,
        ];
        args.extend_from_slice(extra);
        start(&args, false)
    };
    let first = robot(&[]);
    first.wait_line("robot 1 (nomad) connected to the Control Center");
    let mut second = robot(&["--reconnect-for", "0"]);
    // Every line it prints until it ends (its output closes).
    let mut lines = Vec::new();
    loop {
        match second.lines.recv_timeout(GUARD) {
            Ok(l) => lines.push(l),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(e) => panic!("the second agent did not end: {e}; {lines:?}"),
        }
    }
    assert!(!lines.iter().any(|l| l.contains("connected")), "{lines:?}");
    let status = second.child.wait().expect("it ends");
    assert!(!status.success());
}

/// The Control Center is the Time Server's own participant: an operator's menu lines read at
/// start-up were stamped `0.000(unsynced)` in `tasks.log`, as from one that had not heard it.
#[test]
fn the_control_centers_own_first_lines_are_on_the_common_time() {
    let dir = std::env::temp_dir().join(format!("simrob-coord-synced-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let menu = dir.join("menu.txt");
    std::fs::write(
        &menu,
        "announce goto 1 1\nmode hungarian\nsubmit goto 2 2\nquit\n",
    )
    .unwrap();
    let logs = dir.join("logs");
    let out = crate::support::simrob()
        .args(["coord", "cc", "--port", "0", "--log-dir"])
        .arg(&logs)
        .stdin(std::fs::File::open(&menu).unwrap())
        .output()
        .expect("simrob runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tasks = std::fs::read_to_string(logs.join("tasks.log")).unwrap();
    assert!(tasks.contains("\tmode\tcnp→hungarian"), "{tasks}");
    assert!(!tasks.contains("unsynced"), "{tasks}");
    let _ = std::fs::remove_dir_all(&dir);
}
