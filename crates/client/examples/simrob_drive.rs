//! Drive the SumBot in lockstep with a SimRob server.
//!
//! ```sh
//! cargo run --release -- serve --port 5005 --scenario scenarios/soccer.xml &
//! cargo run --release -p simrob-client --example simrob_drive -- 127.0.0.1:5005
//! ```
//!
//! Registers as a synchronous agent, switches the server to synchronous mode, and for 300
//! iterations reads each broadcast, steers the robot (entity 3) towards the ball (entity 8)
//! and synchronizes.

use std::net::SocketAddr;

use simrob_client::simrob::{Agent, AgentOptions};
use simrob_protocol::{ControlRequest, EntityInfoKind, EntityRequest, MotorCommand};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server: SocketAddr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:5005".into())
        .parse()?;
    let mut agent = Agent::connect(server)?;
    println!(
        "{}",
        agent.register(
            "driver",
            AgentOptions {
                sync: true,
                ..AgentOptions::default()
            }
        )?
    );
    agent.control(ControlRequest::SetSyncMode(true), false)?;
    agent.control(ControlRequest::InitializeSimulation, false)?;
    agent.lockstep(|b, agent| {
        let find = |kind, id| {
            b.entities
                .iter()
                .find(|e| e.kind == kind && e.entity_id == id)
                .map(|e| (e.position, e.rotation[2]))
        };
        let (Some((robot, yaw)), Some((ball, _))) = (
            find(EntityInfoKind::Robot, 3),
            find(EntityInfoKind::Ball, 8),
        ) else {
            return Ok(b.iteration < 300);
        };
        // The SumBot drives towards −X for positive wheel speeds: its heading is yaw + π.
        let heading = yaw + std::f64::consts::PI;
        let bearing = (ball[1] - robot[1]).atan2(ball[0] - robot[0]);
        let error = (bearing - heading + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
            - std::f64::consts::PI;
        // Facing away: always turn the same way, or ±π would flip the sign every iteration.
        // (wheel 0 faster than wheel 1 turns the heading clockwise).
        let turn = if error.abs() > 2.5 {
            3.0
        } else {
            (-2.0 * error).clamp(-3.0, 3.0)
        };
        agent.entity(
            EntityRequest::RobotMotorControl {
                entity_id: 3,
                motors: vec![
                    MotorCommand {
                        wheel_joint_id: 0,
                        value: 4.0 + turn,
                    },
                    MotorCommand {
                        wheel_joint_id: 1,
                        value: 4.0 - turn,
                    },
                ],
            },
            false,
        )?;
        if b.iteration % 50 == 0 {
            println!(
                "iteration {:>4}: robot at ({:.3}, {:.3}), ball at ({:.3}, {:.3})",
                b.iteration, robot[0], robot[1], ball[0], ball[1]
            );
        }
        Ok(b.iteration < 300)
    })?;
    agent.control(ControlRequest::SetSyncMode(false), false)?;
    Ok(())
}
