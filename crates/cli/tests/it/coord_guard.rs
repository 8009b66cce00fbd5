//! `simrob coord serve` over real TCP on loopback: connections that never say hello do not
//! hold every place. When full, a newcomer takes the place of the oldest connection that has
//! not said hello; one silent for `--hello-timeout` is closed with a `refused` line naming
//! the key. Every wait is on an event (a message, a close); the time-outs only guard against
//! a hang.

use std::io::Write;
use std::net::TcpStream;

use crate::coord_common::{address, incoming, start, GUARD};

use simrob_coord::wire::Msg;

fn hello(id: u32) -> String {
    format!(
        "{{\"from\":{id},\"msg\":{{\"kind\":\"hello\",\"info\":{{\"robot\":{id},\"name\":\"r\",\"kind\":\"k\",\"world\":\"w\",\"capabilities\":[\"movement\"],\"speed\":1.0}}}}}}\n"
    )
}

/// The reasons of every `refused` on the connection until it closes.
fn refusals_until_closed(stream: &TcpStream) -> Vec<String> {
    let rx = incoming(stream);
    let mut out = Vec::new();
    loop {
        match rx.recv_timeout(GUARD) {
            Ok(Msg::Refused { reason }) => out.push(reason),
            Ok(_) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return out,
            Err(e) => panic!("the connection was never closed: {e}"),
        }
    }
}

#[test]
fn a_full_coordination_server_makes_room_by_closing_the_oldest_connection_without_hello() {
    // hello_timeout 0: only making room can free a place here.
    let cc = start(
        &[
            "coord",
            "serve",
            "--port",
            "0",
            "--max-connections",
            "2",
            "--hello-timeout",
            "0",
        ],
        false,
    );
    let addr = address(&cc, "tcp");
    let silent_a = TcpStream::connect(&addr).expect("a connects");
    let _silent_b = TcpStream::connect(&addr).expect("b connects");
    // The newcomer is a restarted robot: it gets a place and is heard.
    let mut robot = TcpStream::connect(&addr).expect("the robot connects");
    let heard = incoming(&robot);
    robot.write_all(hello(7).as_bytes()).expect("hello");
    let reasons = refusals_until_closed(&silent_a);
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("max_connections") && r.contains("make room")),
        "{reasons:?}"
    );
    cc.wait_line("closed to make room");
    // Said hello, it hears the Time Server like every robot.
    loop {
        match heard.recv_timeout(GUARD).expect("the robot is served") {
            Msg::Clock { .. } => break,
            Msg::Refused { reason } => panic!("the robot was refused: {reason}"),
            _ => {}
        }
    }
}

#[test]
fn a_connection_that_says_nothing_is_closed_after_the_hello_timeout() {
    let cc = start(
        &["coord", "serve", "--port", "0", "--hello-timeout", "0.2"],
        false,
    );
    let addr = address(&cc, "tcp");
    let silent = TcpStream::connect(&addr).expect("connects");
    let reasons = refusals_until_closed(&silent);
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("no hello within 0.2 s (hello_timeout)")),
        "{reasons:?}"
    );
    cc.wait_line("(--hello-timeout), closed");
}

#[test]
fn a_hello_timeout_out_of_range_is_refused_with_its_key() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_simrob"))
        .args(["coord", "serve", "--port", "0", "--hello-timeout", "0.01"])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("(hello_timeout)"), "{err}");
}
