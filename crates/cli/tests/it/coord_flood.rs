//! `simrob coord serve` over real TCP on loopback: one connection cannot stall the others.
//! A connection that sends faster than it is served waits its turn (`--max-queued-lines`);
//! one that does not read what it asked for is cut (`--max-output-bytes`), and the others
//! are served meanwhile. Every wait is on an event (a message, a line, a close); the
//! time-outs only guard against a hang.

use std::io::{Read, Write};
use std::net::TcpStream;

use crate::coord_common::{address, incoming, start, Operator, GUARD};

use simrob_coord::wire::{encode, Envelope, Msg, OperatorCommand};

fn hello(id: u32) -> String {
    format!(
        "{{\"from\":{id},\"msg\":{{\"kind\":\"hello\",\"info\":{{\"robot\":{id},\"name\":\"r{id}\",\"kind\":\"k\",\"world\":\"w\",\"capabilities\":[\"movement\"],\"speed\":1.0}}}}}}\n"
    )
}

fn robots_request() -> String {
    encode(&Envelope {
        from: 0,
        to: Some(0),
        msg: Msg::Operator {
            command: Box::new(OperatorCommand::Robots),
        },
    })
}

/// Writes `count` copies of `line` on a thread of its own (a write refused because the
/// server cut the connection ends it).
fn flood(stream: &TcpStream, line: String, count: usize) -> std::thread::JoinHandle<()> {
    let mut w = stream.try_clone().expect("clone");
    std::thread::spawn(move || {
        let chunk = line.repeat(500);
        for _ in 0..count / 500 {
            if w.write_all(chunk.as_bytes()).is_err() {
                return;
            }
        }
    })
}

/// Whether a `robots` table lists robot `id` as present (not `left`).
fn present(table: &str, id: u32) -> bool {
    table.lines().skip(1).any(|l| {
        let f: Vec<&str> = l.split('\t').collect();
        f.first() == Some(&id.to_string().as_str()) && f.last() != Some(&"left")
    })
}

/// Whether a `robots` table lists robot `id`.
fn lists(table: &str, id: u32) -> bool {
    table
        .lines()
        .skip(1)
        .any(|l| l.split('\t').next() == Some(&id.to_string()))
}

#[test]
fn a_connection_flooding_requests_waits_its_turn_and_a_robot_joining_meanwhile_is_served() {
    const FLOOD: usize = 20_000;
    let cc = start(
        &[
            "coord",
            "serve",
            "--port",
            "0",
            "--max-queued-lines",
            "8",
            "--hello-timeout",
            "0",
            // Time plays no part: only the limits under test act.
            "--silence-timeout",
            "0",
        ],
        false,
    );
    let addr = address(&cc, "tcp");
    let flooder = TcpStream::connect(&addr).expect("the flooder connects");
    let answers = incoming(&flooder);
    let writer = flood(&flooder, robots_request(), FLOOD);
    // The flood is being served: a robot joins now.
    match answers.recv_timeout(GUARD) {
        Ok(Msg::Report { text }) => assert!(text.starts_with("id\tname"), "{text}"),
        other => panic!("the flood's first answer: {other:?}"),
    }
    let mut robot = TcpStream::connect(&addr).expect("the robot connects");
    robot.write_all(hello(7).as_bytes()).expect("hello");
    let mut with_robot = 0;
    for n in 1..FLOOD {
        match answers.recv_timeout(GUARD) {
            Ok(Msg::Report { text }) => with_robot += usize::from(lists(&text, 7)),
            other => panic!("answer {n} of the flood: {other:?}"),
        }
    }
    writer.join().expect("the flood was written");
    // Without a turn for each connection the robot's hello waited behind every request the
    // server had read of the flood, and nearly every answer missed it.
    assert!(
        with_robot > FLOOD / 4,
        "only {with_robot} of {FLOOD} answers list the robot that joined after the first"
    );
    // The robot was served and heard: the Control Center still has it, present.
    let mut op = Operator::connect(&addr);
    op.send(OperatorCommand::Robots);
    let table = op.wait(|r| r.starts_with("id\tname"));
    assert!(present(&table, 7), "{table}");
}

#[test]
fn a_connection_that_does_not_read_its_answers_is_cut_and_the_others_are_served() {
    const FLOOD: usize = 60_000;
    let cc = start(
        &[
            "coord",
            "serve",
            "--port",
            "0",
            "--max-output-bytes",
            "65536",
            "--hello-timeout",
            "0",
            // Time plays no part: only the limits under test act.
            "--silence-timeout",
            "0",
        ],
        false,
    );
    let addr = address(&cc, "tcp");
    let mut deaf = TcpStream::connect(&addr).expect("the deaf robot connects");
    deaf.write_all(hello(9).as_bytes()).expect("hello");
    let writer = flood(&deaf, robots_request(), FLOOD);
    let line = cc.wait_line("(max_output_bytes)");
    assert!(
        line.contains("more than --max-output-bytes 65536") && line.contains("cut"),
        "{line}"
    );
    writer.join().expect("the flood was written or refused");
    // The deaf connection was closed: what it was sent ends.
    deaf.set_read_timeout(Some(GUARD)).expect("timeout");
    let mut sink = Vec::new();
    let _ = deaf.read_to_end(&mut sink);
    // Another robot and an operator are served.
    let mut robot = TcpStream::connect(&addr).expect("the robot connects");
    let heard = incoming(&robot);
    robot.write_all(hello(7).as_bytes()).expect("hello");
    // The Time Server's clock goes to robots that said hello: the robot was taken.
    loop {
        match heard.recv_timeout(GUARD) {
            Ok(Msg::Clock { .. }) => break,
            Ok(_) => {}
            Err(e) => panic!("the robot never heard the Time Server: {e}"),
        }
    }
    let mut op = Operator::connect(&addr);
    op.send(OperatorCommand::Robots);
    let table = op.wait(|r| r.starts_with("id\tname"));
    assert!(present(&table, 7) && !present(&table, 9), "{table}");
}
