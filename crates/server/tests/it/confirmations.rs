//! Two agents on one real server over loopback: the server confirms a request to every agent
//! and sends an error to its sender only, so a client must take only a confirmation that can
//! be its own, and must not keep every skipped response forever.

use std::time::Duration;

use simrob_client::agent::{Agent, AgentOptions, ClientError};
use simrob_protocol::{
    encode_request, CommandKeys, ControlRequest, EntityId, EntityRequest, Request, Response,
    ServerMessage,
};

use crate::simrob_common::*;

const WAIT: Duration = Duration::from_secs(5);

fn motors(id: u32, value: f64) -> Request {
    Request::Entity {
        request: EntityRequest::two_wheels(EntityId(id), value, value),
        response: Some(true),
    }
}

fn agent(server: &TestServer, key: &str, broadcast: f64) -> Agent {
    let mut a = Agent::connect(server.addr).expect("connect");
    a.register(
        key,
        AgentOptions {
            broadcast,
            ..AgentOptions::default()
        },
    )
    .expect("register");
    a
}

#[test]
fn a_request_takes_only_its_own_confirmation_not_a_classmates() {
    let server = TestServer::start("confirm-own", &["materials.xml", "sumbot.xml"], |_| {});
    let bob = agent(&server, "bob", -1.0);
    let mut carol = agent(&server, "carol", -1.0);
    let moved = Request::Entity {
        request: EntityRequest::SetEntityPosition {
            entity_id: EntityId(3),
            position: [0.0, 0.0, 0.2],
        },
        response: Some(true),
    };
    for _ in 0..5 {
        // Bob's confirmation reaches carol before the answer to her own request.
        bob.send(&motors(3, 1.0)).expect("bob");
        match carol.request(motors(999, 1.0), WAIT) {
            Err(ClientError::Server(e)) => assert!(e.contains("999"), "{e}"),
            other => panic!("carol's request for entity 999 answered {other:?}"),
        }
        bob.send(&moved).expect("bob");
        assert_eq!(
            carol.request(motors(3, 2.0), WAIT).expect("carol"),
            "Robot_Motor_Control: Motors of robot 3 set"
        );
    }
    // Bob's confirmations stay for carol's recv, in order.
    let mut texts = Vec::new();
    for _ in 0..10 {
        match carol.recv(WAIT).expect("recv") {
            Some(ServerMessage::Response(Response::Text(t))) => texts.push(t),
            other => panic!("expected bob's confirmation, got {other:?}"),
        }
    }
    for pair in texts.chunks(2) {
        assert_eq!(pair[0], "Robot_Motor_Control: Motors of robot 3 set");
        assert!(
            pair[1].starts_with("Set_Entity_Position: Entity 3 moved to "),
            "{pair:?}"
        );
    }
}

#[test]
fn responses_skipped_while_waiting_for_broadcasts_are_bounded() {
    // The documented bound: the latest 1,000.
    const KEPT: usize = 1000;
    let server = TestServer::start("confirm-bound", &["materials.xml", "sumbot.xml"], |_| {});
    let mut bob = agent(&server, "bob", -1.0);
    for request in [
        ControlRequest::SetStepMode(true),
        ControlRequest::InitializeSimulation,
    ] {
        bob.request(
            Request::Control {
                request,
                response: Some(true),
            },
            WAIT,
        )
        .expect("bob");
    }
    // Carol joins once the world waits for steps: a broadcast only after each burst.
    let mut carol = agent(&server, "carol", 0.0);
    let keys = CommandKeys::default();
    let step = encode_request(
        &Request::Control {
            request: ControlRequest::MakeStep,
            response: Some(false),
        },
        &keys,
    );
    let mut confirmed = 0;
    while confirmed <= KEPT + 100 {
        // 50 confirmations carol skips, then one step: one broadcast after them.
        let mut burst = encode_request(&motors(3, 1.0), &keys).repeat(50);
        burst.push_str(&step);
        bob.send_raw(burst.as_bytes()).expect("bob");
        confirmed += 50;
        assert!(carol.next_broadcast(WAIT).expect("broadcast").is_some());
    }
    let mut kept = 0;
    while let Some(m) = carol.recv(Duration::ZERO).expect("recv") {
        match m {
            ServerMessage::Response(Response::Text(t)) => {
                assert_eq!(t, "Robot_Motor_Control: Motors of robot 3 set")
            }
            other => panic!("expected a confirmation, got {other:?}"),
        }
        kept += 1;
    }
    assert_eq!(kept, KEPT);
    assert_eq!(simrob_client::agent::PENDING_MAX, KEPT);
}
