//! Driving the SumBot of the soccer scenario from a test agent: iterations counted on the
//! server's broadcasts (never the clock) and wheel speeds.
#![allow(dead_code)]

use simrob_client::agent::{Agent, AgentOptions};
use simrob_protocol::{
    decode_datagram, CommandKeys, ControlRequest, EntityId, EntityRequest, MotorCommand, Request,
};
use simrob_server::files::DirStore;
use simrob_server::udp::UdpServer;
use simrob_session::{ServerConfig, Session};
use std::path::Path;
use std::time::Duration;

/// A SimRob server on a free loopback port with the soccer scenario applied (not yet
/// initialized), saving in `dir`, paced at `real_time_factor` (0: as fast as it can).
pub fn soccer_server(dir: &Path, real_time_factor: f64) -> UdpServer {
    let config = ServerConfig {
        receiver_port: 0,
        real_time_factor,
        save_directory: dir.to_path_buf(),
        ..ServerConfig::default()
    };
    let mut server =
        UdpServer::bind(Session::new(config), Box::new(DirStore::new(dir).unwrap())).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/soccer.xml");
    let requests: Vec<Request> =
        decode_datagram(&std::fs::read(path).unwrap(), &CommandKeys::default())
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
    server.apply_local(&requests).unwrap();
    server
}

/// Registers `agent` as `key` with broadcasts off, then initializes the simulation and waits
/// up to `timeout` for the server's answer.
pub fn initialize(agent: &mut Agent, key: &str, timeout: Duration) {
    agent
        .register(
            key,
            AgentOptions {
                broadcast: -1.0,
                ..AgentOptions::default()
            },
        )
        .unwrap();
    agent
        .request(
            Request::Control {
                request: ControlRequest::InitializeSimulation,
                response: None,
            },
            timeout,
        )
        .unwrap();
}

/// Waits (on broadcasts, not the clock) until `n` more iterations have run.
pub fn run_iterations(agent: &mut Agent, n: u64) {
    let options = |broadcast| AgentOptions {
        broadcast,
        ..AgentOptions::default()
    };
    agent.register("driver", options(0.0)).unwrap();
    let next = |agent: &mut Agent| {
        agent
            .next_broadcast(Duration::from_secs(10))
            .unwrap()
            .expect("a broadcast")
            .iteration
    };
    let first = next(agent);
    while next(agent) < first + n {}
    agent.register("driver", options(-1.0)).unwrap();
}

/// Sets the SumBot's (entity 3) wheel speeds, rad/s: joint 0 `left`, joint 1 `right`.
pub fn wheels(agent: &mut Agent, left: f64, right: f64) {
    agent
        .entity(
            EntityRequest::RobotMotorControl {
                entity_id: EntityId(3),
                motors: vec![
                    MotorCommand {
                        wheel_joint_id: 0,
                        value: left,
                    },
                    MotorCommand {
                        wheel_joint_id: 1,
                        value: right,
                    },
                ],
            },
            false,
        )
        .unwrap();
}
