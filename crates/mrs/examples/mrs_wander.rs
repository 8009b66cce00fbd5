//! A robot that wanders a Mobile Robot Simulator map without touching the walls: obstacle
//! avoidance on the 16 sonars (see `simrob_mrs::wander`).
//!
//! ```sh
//! cargo run --release -- mrs --map maps/example.txt            # terminal 1
//! cargo run --release -p simrob-mrs --example mrs_wander    # terminal 2
//! cargo run --release -p simrob-mrs --example mrs_wander -- 127.0.0.1:7020 120
//! ```
//!
//! Arguments: server address (default `127.0.0.1:7020`), seconds to run (default 60). Against
//! a stepped server (`simrob mrs --stepped`) add `--stepped`: it then advances time itself.

use std::time::{Duration, Instant};

use simrob_mrs::wander::Wander;
use simrob_mrs::{MrsClient, MrsError};

fn main() -> Result<(), MrsError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let stepped = args.iter().any(|a| a == "--stepped");
    let mut free = args.iter().filter(|a| !a.starts_with("--"));
    let addr = free
        .next()
        .cloned()
        .unwrap_or_else(|| "127.0.0.1:7020".into());
    let seconds: f64 = free.next().and_then(|s| s.parse().ok()).unwrap_or(60.0);
    let mut robot = MrsClient::connect(&addr)?;
    robot.show_message("wandering")?;
    let mut ctl = Wander::default();
    let start = Instant::now();
    let mut sim_time = 0.0;
    let mut bumps = 0;
    let mut last_report = 0.0;
    loop {
        let now = if stepped {
            sim_time
        } else {
            start.elapsed().as_secs_f64()
        };
        if now >= seconds {
            break;
        }
        let sonars = robot.get_sonars()?;
        let (v, w) = ctl.command(&sonars);
        robot.set_vel(v, w)?;
        if stepped {
            sim_time = robot.step(10)?;
        } else {
            std::thread::sleep(Duration::from_millis(100));
        }
        if robot.get_bumper()? {
            bumps += 1;
        }
        if now - last_report >= 5.0 {
            last_report = now;
            let (x, y, a) = robot.get_pos()?;
            println!("t = {now:5.1} s  pose ({x:6.1}, {y:6.1}, {a:5.1}°)  front sonar {:3} in  bumps {bumps}", sonars[0]);
        }
    }
    robot.stop()?;
    let (x, y, a) = robot.get_pos()?;
    println!("done at ({x:.1}, {y:.1}, {a:.1}°); bumper closed in {bumps} control cycles");
    robot.disconnect()
}
