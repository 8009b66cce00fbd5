//! Agents leaving a real server over loopback: a closed port is noticed from the ICMP port
//! unreachable its host answers (the socket's error queue) and lockstep goes on without
//! it; an agent that unregisters is confirmed to the others.

use std::time::{Duration, Instant};

use simrob_client::agent::{Agent, AgentOptions};
use simrob_protocol::{ControlRequest, Response, ServerMessage};

use crate::simrob_common::*;

/// Reads `agent`'s messages until `done` says so (a failure guard of 20 s, never a wait
/// for time to pass); answers each broadcast with a Synchronize. Returns the texts seen and
/// the last iteration.
fn follow(agent: &mut Agent, mut done: impl FnMut(&[String], u64) -> bool) -> (Vec<String>, u64) {
    let guard = Instant::now() + Duration::from_secs(20);
    let (mut texts, mut last) = (Vec::new(), 0);
    while !done(&texts, last) {
        assert!(
            Instant::now() < guard,
            "stalled at iteration {last}; texts {texts:?}"
        );
        match agent.recv(Duration::from_millis(200)).expect("recv") {
            Some(ServerMessage::Broadcast(b)) => {
                last = b.iteration;
                agent.synchronize(b.iteration).expect("sync");
            }
            Some(ServerMessage::Response(Response::Text(t))) => texts.push(t),
            _ => {}
        }
    }
    (texts, last)
}

#[test]
fn a_closed_port_is_removed_at_once_and_lockstep_goes_on() {
    // Sync_Wait 60 s: were the departed agent still awaited, every iteration would take a
    // minute and the guard below would fail the test.
    let server = TestServer::start("depart-icmp", &["materials.xml", "sumbot.xml"], |c| {
        c.sync_wait = 60.0
    });
    let mut a = Agent::connect(server.addr).expect("a");
    let sync = AgentOptions {
        sync: true,
        ..AgentOptions::default()
    };
    a.register("a", sync.clone()).expect("register a");
    // b is a raw socket: closing it sends no Unregister_Agent.
    let b = Peer::new(server.addr);
    b.register("b", true, 0.0);
    let b_port = b.port();
    a.control(ControlRequest::SetSyncMode(true), false).unwrap();
    a.control(ControlRequest::InitializeSimulation, false)
        .unwrap();
    // Both in lockstep for a few iterations; then b's program stops after its Synchronize
    // (its port closes), so the next broadcast finds the port closed.
    loop {
        let Some(ServerMessage::Broadcast(bb)) = b.recv(Duration::from_secs(20)) else {
            continue;
        };
        b.send_str(&format!(
            "<Message><Agent_Message Command=\"Synchronize\"><Key>b</Key><Iteration>{}</Iteration></Agent_Message></Message>",
            bb.iteration
        ));
        if bb.iteration >= 5 {
            drop(b);
            break;
        }
        follow(&mut a, |_, i| i >= bb.iteration);
    }
    let removed = format!(
        "Removed agent with key b, port {b_port} and ip 127.0.0.1: its port is closed (ICMP port unreachable): its program has stopped"
    );
    let (texts, at) = follow(&mut a, |texts, _| texts.contains(&removed));
    // a alone drives the world on, 50 more iterations.
    let (_, end) = follow(&mut a, |_, i| i >= at + 50);
    assert!(end >= at + 50, "{texts:?}");
}

#[test]
fn an_agent_that_unregisters_is_confirmed_to_the_others_and_sent_nothing_more() {
    let server = TestServer::start(
        "depart-unregister",
        &["materials.xml", "sumbot.xml"],
        |_| {},
    );
    let mut a = Agent::connect(server.addr).expect("a");
    a.register("a", AgentOptions::default())
        .expect("register a");
    let mut b = Agent::connect(server.addr).expect("b");
    b.register("b", AgentOptions::default())
        .expect("register b");
    let b_port = b.local_addr().unwrap().port();
    b.control(ControlRequest::InitializeSimulation, false)
        .unwrap();
    assert!(b.next_broadcast(Duration::from_secs(20)).unwrap().is_some());
    let confirmed = b.unregister().expect("unregister");
    let removed =
        format!("Removed agent with key b, port {b_port} and ip 127.0.0.1: it unregistered");
    assert_eq!(confirmed, removed);
    follow(&mut a, |texts, _| texts.contains(&removed));
    // What b received before the confirmation is kept for it; after it, nothing comes
    // while the world runs on for a.
    while b.recv(Duration::ZERO).unwrap().is_some() {}
    follow(&mut a, |_, i| i >= 100);
    assert!(
        b.recv(Duration::from_millis(300)).unwrap().is_none(),
        "b still receives"
    );
    // A second unregister is refused: b is not registered any more.
    b.send_raw(b"<Message><Agent_Message Command=\"Unregister_Agent\"><Key>b</Key></Agent_Message></Message>")
        .unwrap();
    match b.recv(Duration::from_secs(5)).unwrap() {
        Some(ServerMessage::Response(Response::Text(t))) => {
            assert!(t.contains("agent \"b\" is not registered"), "{t}")
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn a_dropped_client_unregisters_itself() {
    let server = TestServer::start("depart-drop", &["materials.xml", "sumbot.xml"], |_| {});
    let mut a = Agent::connect(server.addr).expect("a");
    a.register("a", AgentOptions::default())
        .expect("register a");
    let b = {
        let mut b = Agent::connect(server.addr).expect("b");
        b.register(
            "b",
            AgentOptions {
                broadcast: -1.0,
                ..AgentOptions::default()
            },
        )
        .expect("register b");
        b
    };
    let b_port = b.local_addr().unwrap().port();
    drop(b);
    let removed =
        format!("Removed agent with key b, port {b_port} and ip 127.0.0.1: it unregistered");
    follow(&mut a, |texts, _| texts.contains(&removed));
}
