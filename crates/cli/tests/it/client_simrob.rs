//! The SimRob client (`simrob-client`) against a real server on loopback. It lives here,
//! beside the command-line tests, because this crate already depends on both: a
//! dev-dependency of the client on the server would give the client's examples a different
//! feature set from the main build and make them rebuild the whole tree.

use std::time::Duration;

use simrob_client::agent::{Agent, AgentOptions, ClientError};
use simrob_protocol::{AgentType, ControlRequest, EntityId, EntityRequest, MotorCommand, Request};
use simrob_session::ServerConfig;

use crate::support::InProcess;

fn serve(tag: &str, max_datagram: usize) -> InProcess {
    let config = ServerConfig {
        maximum_datagram_size: max_datagram,
        ..ServerConfig::default()
    };
    InProcess::start(
        &format!("client-{tag}"),
        config,
        Some("scenarios/soccer.xml"),
    )
}

#[test]
fn register_request_and_errors() {
    let server = serve("basic", 65000);
    let mut a = Agent::connect(server.addr).unwrap();
    let text = a.register("alpha", AgentOptions::default()).unwrap();
    assert!(text.starts_with("Sucessfully added agent with key alpha, port "));
    let ok = a
        .request(
            Request::Control {
                request: ControlRequest::SetTimestep(0.02),
                response: None,
            },
            Duration::from_secs(2),
        )
        .unwrap();
    assert_eq!(ok, "Set_Timestep: Timestep set to 0.02");
    let err = a
        .request(
            Request::Entity {
                request: EntityRequest::SetEntityPosition {
                    entity_id: EntityId(77),
                    position: [0.0; 3],
                },
                response: None,
            },
            Duration::from_secs(2),
        )
        .unwrap_err();
    assert!(
        matches!(err, ClientError::Server(ref m) if m.contains("entity 77 does not exist")),
        "{err}"
    );
    let mut b = Agent::connect(server.addr).unwrap();
    b.register(
        "beta",
        AgentOptions {
            agent_type: AgentType::Gui,
            sync: false,
            broadcast: -1.0,
        },
    )
    .unwrap();
    let (key, port, ip) = a.info("beta").unwrap();
    assert_eq!(
        (key.as_str(), port, ip.as_str()),
        ("beta", b.local_addr().unwrap().port(), "127.0.0.1")
    );
}

#[test]
fn lockstep_with_split_broadcasts() {
    // 1,024-byte datagrams: every broadcast of the soccer scene comes in many parts.
    let server = serve("lockstep", 1024);
    let mut a = Agent::connect(server.addr).unwrap();
    a.register(
        "driver",
        AgentOptions {
            sync: true,
            ..AgentOptions::default()
        },
    )
    .unwrap();
    a.control(ControlRequest::SetSyncMode(true), false).unwrap();
    a.entity(
        EntityRequest::RobotMotorControl {
            entity_id: EntityId(3),
            motors: vec![
                MotorCommand {
                    wheel_joint_id: 0,
                    value: 3.0,
                },
                MotorCommand {
                    wheel_joint_id: 1,
                    value: 3.0,
                },
            ],
        },
        false,
    )
    .unwrap();
    a.control(ControlRequest::InitializeSimulation, false)
        .unwrap();
    let mut seen = Vec::new();
    let last = a
        .lockstep(|b, _| {
            assert_eq!(b.bodies.len(), 17, "parts reassembled");
            assert_eq!(b.entities.len(), 2);
            seen.push((b.iteration, b.entities[0].position[0]));
            Ok(b.iteration < 60)
        })
        .unwrap();
    assert_eq!(last, 60);
    let its: Vec<u64> = seen.iter().map(|s| s.0).collect();
    assert_eq!(
        its,
        (1..=60).collect::<Vec<_>>(),
        "every iteration, in order, none skipped"
    );
    assert!(seen[59].1 < seen[0].1, "the robot drove towards -X");
}

/// The `simrob_drive` example, compiled into this test so that what it does is checked.
#[allow(dead_code)]
use crate::simrob_drive;

#[test]
fn the_drive_example_reaches_the_ball_on_a_server_already_running() {
    let server = serve("drive", 65000);
    // Let the server run past iteration 300 on its own first.
    let mut watcher = Agent::connect(server.addr).unwrap();
    watcher
        .register(
            "watcher",
            AgentOptions {
                broadcast: 0.0,
                ..AgentOptions::default()
            },
        )
        .unwrap();
    watcher
        .control(ControlRequest::InitializeSimulation, false)
        .unwrap();
    loop {
        let b = watcher
            .next_broadcast(Duration::from_secs(30))
            .unwrap()
            .expect("the server broadcasts");
        if b.iteration > 300 {
            break;
        }
    }
    let end = simrob_drive::drive(server.addr, 6000, false).unwrap();
    assert!(end.reached, "{end:?}");
    assert!(end.iterations > 50, "it drove: {end:?}");
}
