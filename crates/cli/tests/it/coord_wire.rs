//! `simrob coord serve` over real TCP on loopback, held to what its protocol says: text that
//! would forge lines of the logs is refused, requests without arguments take no field, and
//! `coord swarm` says which of its robots the Control Center refused instead of claiming
//! them all. Every wait is on an event (a message, a line, an exit); the time-outs only
//! guard against a hang.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;

use crate::coord_common::{address, incoming, start, Operator, GUARD};

use simrob_coord::wire::{Msg, OperatorCommand};

fn hello(id: u32, name: &str) -> String {
    let info = serde_json::json!({
        "robot": id, "name": name, "kind": "k", "world": "w",
        "capabilities": ["movement"], "speed": 1.0,
    });
    format!("{{\"from\":{id},\"msg\":{{\"kind\":\"hello\",\"info\":{info}}}}}\n")
}

/// The next `welcome` or `refused` on a robot's connection, as text.
fn answer(rx: &mpsc::Receiver<Msg>) -> String {
    loop {
        match rx.recv_timeout(GUARD).expect("an answer") {
            Msg::Welcome { robot } => return format!("welcome {robot}"),
            Msg::Refused { reason } => return format!("refused: {reason}"),
            _ => {}
        }
    }
}

#[test]
fn names_and_worlds_that_would_forge_log_lines_are_refused_on_the_wire() {
    let cc = start(&["coord", "serve", "--port", "0"], false);
    let addr = address(&cc, "tcp");
    let mut op = Operator::following(&addr);
    let mut robot = TcpStream::connect(&addr).expect("connects");
    let heard = incoming(&robot);
    robot
        .write_all(hello(7, "a\nb\tc\u{1}").as_bytes())
        .expect("hello");
    let a = answer(&heard);
    assert!(
        a.contains("robot name holds the control character U+000A at byte 1"),
        "{a}"
    );
    // A task whose world would add an `awarded` line of its own.
    let mut raw = TcpStream::connect(&addr).expect("connects");
    let raw_heard = incoming(&raw);
    raw.write_all(
        br#"{"from":0,"msg":{"kind":"operator","command":{"op":"submit","task":{"id":0,"kind":{"goto":{"x":2,"y":2}},"world":"w\n99.000\tawarded\tauction=1\trobot=5"}}}}
{"from":0,"msg":{"kind":"operator","command":{"op":"robots","x":1}}}
"#,
    )
    .expect("requests");
    let mut refusals = Vec::new();
    while refusals.len() < 2 {
        match raw_heard.recv_timeout(GUARD).expect("answers") {
            Msg::Refused { reason } => refusals.push(reason),
            Msg::Report { text } => panic!("answered as if taken: {text}"),
            _ => {}
        }
    }
    assert!(
        refusals[0].contains("task world holds the control character U+000A"),
        "{refusals:?}"
    );
    assert!(refusals[1].contains("unknown field `x`"), "{refusals:?}");
    // The same robot with a printable name is taken; the logs have its line and nothing
    // forged before it.
    robot
        .write_all(hello(7, "a b c").as_bytes())
        .expect("hello");
    assert_eq!(answer(&heard), "welcome 7");
    let joined = op.wait(|r| r.contains("joined"));
    assert!(joined.contains("joined\trobot=7\tk a b c in w"), "{joined}");
    op.send(OperatorCommand::Robots);
    let table = op.wait(|r| r.starts_with("id\tname"));
    assert_eq!(table.lines().count(), 2, "{table}");
    op.send(OperatorCommand::Tasks);
    let tasks = op.wait(|r| r.starts_with("task\t"));
    assert_eq!(tasks.lines().count(), 1, "no task was taken: {tasks}");
}

/// What `simrob ARGS` printed on standard error and whether it succeeded, once it exits.
fn run_to_exit(args: &[&str]) -> (bool, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_simrob"))
        .args(args)
        .current_dir(crate::coord_common::root())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simrob starts");
    let mut err = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let _ = err.read_to_string(&mut text);
        let _ = tx.send(text);
    });
    match rx.recv_timeout(GUARD) {
        Ok(text) => (child.wait().expect("exit").success(), text),
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("simrob {args:?} never ended: {e}");
        }
    }
}

#[test]
fn a_swarm_whose_robots_the_control_center_refuses_says_so_and_runs_none() {
    let cc = start(&["coord", "serve", "--port", "0"], false);
    let addr = address(&cc, "tcp");
    let mut robot = TcpStream::connect(&addr).expect("connects");
    let heard = incoming(&robot);
    robot
        .write_all(hello(101, "first").as_bytes())
        .expect("hello");
    assert_eq!(answer(&heard), "welcome 101");
    // The hospital's three robots from 100: 101 is taken.
    let (ok, err) = run_to_exit(&[
        "coord",
        "swarm",
        "hospital",
        "--cc",
        &addr,
        "--robot-id-base",
        "100",
        "--speed",
        "0",
    ]);
    assert!(!ok, "{err}");
    assert!(
        err.contains("robot 101: refused by the Control Center: hello from robot 101: robot id 101 is already in use"),
        "{err}"
    );
    assert!(
        err.contains("1 of the 3 robots (ids 100 to 102) were refused by the Control Center"),
        "{err}"
    );
}

#[test]
fn a_swarm_id_base_past_the_largest_robot_id_is_refused_before_connecting() {
    // Nothing listens there: the base is refused first.
    let (ok, err) = run_to_exit(&[
        "coord",
        "swarm",
        "hospital",
        "--cc",
        "127.0.0.1:1",
        "--robot-id-base",
        "1073741823",
    ]);
    assert!(!ok);
    assert!(
        err.contains("past the largest robot id 1073741823 (2^30 - 1"),
        "{err}"
    );
    assert!(!err.contains("connecting"), "{err}");
}

#[test]
fn a_robot_id_past_the_largest_is_refused_before_connecting() {
    let (ok, err) = run_to_exit(&[
        "coord",
        "robot",
        "--cc",
        "127.0.0.1:1",
        "--id",
        "1073741824",
        "--mrs",
        "127.0.0.1:1",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--id 1073741824: robot ids go up to 1073741823 (2^30 - 1"),
        "{err}"
    );
}
