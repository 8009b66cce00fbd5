//! Drive the SumBot to the ball in lockstep with a SimRob server.
//!
//! ```sh
//! cargo run --release -- serve --port 5005 --scenario scenarios/soccer.xml &
//! cargo run --release -p simrob-client --example simrob_drive -- 127.0.0.1:5005
//! ```
//!
//! Registers as a synchronous agent, switches the server to synchronous mode, initializes
//! the simulation and then, broadcast by broadcast, steers the robot (entity 3) towards the
//! ball (entity 8) until it touches it, then stops the wheels and gives the server back its
//! asynchronous mode. It counts iterations from the first broadcast it gets, so it works the
//! same against a server that has been running for a while. Exit status 0 when the robot
//! reached the ball, 1 when it did not within the limit (default 6000 iterations; a second
//! argument changes it).

use std::net::SocketAddr;

use simrob_client::agent::{Agent, AgentOptions, ClientError};
use simrob_protocol::{ControlRequest, EntityId, EntityInfoKind, EntityRequest};

/// The robot and the ball of the soccer scenario.
const ROBOT: EntityId = EntityId(3);
const BALL: EntityId = EntityId(8);
/// Centre-to-centre distance at which the robot touches the ball: half the SumBot's 7.5 cm
/// body diagonal plus the ball's 3 cm radius, and a little slack.
const TOUCH: f64 = 0.09;

/// How a drive ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Drive {
    /// Iterations driven (counted from the first broadcast).
    pub iterations: u64,
    /// Distance between the robot's and the ball's centres at the end, metres.
    pub distance: f64,
    pub reached: bool,
}

/// Wheel speeds (joint 0, joint 1) that steer the SumBot towards the ball. `yaw` is the
/// robot's rotation about Z; the SumBot drives towards −X of its body for positive wheel
/// speeds, so its heading is yaw + π. Wheel 0 faster than wheel 1 turns it clockwise.
pub fn steer(robot: [f64; 3], yaw: f64, ball: [f64; 3]) -> (f64, f64) {
    use std::f64::consts::PI;
    let heading = yaw + PI;
    let bearing = (ball[1] - robot[1]).atan2(ball[0] - robot[0]);
    let error = simrob_math::wrap_angle_euclid(bearing - heading);
    // Facing away: always turn the same way, or ±π would flip the sign every iteration.
    let turn = if error.abs() > 2.5 {
        3.0
    } else {
        (-3.0 * error).clamp(-3.0, 3.0)
    };
    // Slow down to turn: full speed only when roughly facing the ball.
    let ahead = 6.0 * error.cos().max(0.0);
    (ahead + turn, ahead - turn)
}

/// Registers as `driver`, drives to the ball for at most `limit` iterations and leaves the
/// robot stopped and the server asynchronous.
pub fn drive(server: SocketAddr, limit: u64, verbose: bool) -> Result<Drive, ClientError> {
    let mut agent = Agent::connect(server)?;
    let hello = agent.register(
        "driver",
        AgentOptions {
            sync: true,
            ..AgentOptions::default()
        },
    )?;
    if verbose {
        println!("{hello}");
    }
    agent.control(ControlRequest::SetSyncMode(true), false)?;
    agent.control(ControlRequest::InitializeSimulation, false)?;
    let motors = |l: f64, r: f64| EntityRequest::two_wheels(ROBOT, l, r);
    let mut first = None;
    let mut end = Drive {
        iterations: 0,
        distance: f64::INFINITY,
        reached: false,
    };
    agent.lockstep(|b, agent| {
        let first = *first.get_or_insert(b.iteration);
        end.iterations = b.iteration.saturating_sub(first);
        let find = |kind, id| {
            b.entities
                .iter()
                .find(|e| e.kind == kind && e.entity_id == id)
                .map(|e| (e.position, e.rotation[2]))
        };
        let (Some((robot, yaw)), Some((ball, _))) =
            (find(EntityInfoKind::Robot, ROBOT), find(EntityInfoKind::Ball, BALL))
        else {
            return Ok(end.iterations < limit);
        };
        end.distance = (ball[0] - robot[0]).hypot(ball[1] - robot[1]);
        end.reached = end.distance <= TOUCH;
        if verbose && (end.iterations.is_multiple_of(100) || end.reached) {
            println!(
                "iteration {:>5}: robot at ({:6.3}, {:6.3}), ball at ({:6.3}, {:6.3}), {:.3} m apart",
                b.iteration, robot[0], robot[1], ball[0], ball[1], end.distance
            );
        }
        if end.reached {
            return Ok(false);
        }
        let (l, r) = steer(robot, yaw, ball);
        agent.entity(motors(l, r), false)?;
        Ok(end.iterations < limit)
    })?;
    agent.entity(motors(0.0, 0.0), false)?;
    agent.control(ControlRequest::SetSyncMode(false), false)?;
    Ok(end)
}

#[allow(dead_code)] // the end-to-end test includes this file and calls `drive`
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let server: SocketAddr = args
        .next()
        .unwrap_or_else(|| "127.0.0.1:5005".into())
        .parse()?;
    let limit: u64 = match args.next() {
        Some(s) => s.parse()?,
        None => 6000,
    };
    let end = drive(server, limit, true)?;
    if end.reached {
        println!("reached the ball in {} iterations", end.iterations);
        Ok(())
    } else {
        println!(
            "did not reach the ball in {} iterations ({:.3} m away)",
            end.iterations, end.distance
        );
        std::process::exit(1)
    }
}
