//! Protocol round trips per second over loopback: a Mobile Robot Simulator server in this
//! process (real time, the seed's example map), 1 and 4 clients each sending `P`, `S00` and
//! `V…` requests back to back and waiting for every reply.
//!
//! ```sh
//! cargo run --release -p simrob-mrs --example mrs_bench
//! ```

use std::time::Instant;

use simrob_mrs::flat::Map;
use simrob_mrs::{MrsClient, MrsError};
use simrob_mrs::{MrsConfig, MrsCore, MrsServer, NoFiles, ShellOptions, EXAMPLE_MAP};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let map = Map::parse_vector(EXAMPLE_MAP)?;
    let core = MrsCore::new(map, MrsConfig::default());
    let server = MrsServer::bind(
        "127.0.0.1:0",
        core,
        Box::new(NoFiles),
        ShellOptions::default(),
    )?;
    let handle = server.spawn()?;
    let addr = handle.addr().to_string();
    for clients in [1usize, 4] {
        let per_client = 20_000;
        let start = Instant::now();
        let threads: Vec<_> = (0..clients)
            .map(|_| {
                let addr = addr.clone();
                std::thread::spawn(move || -> Result<(), MrsError> {
                    let mut robot = MrsClient::connect(&addr)?;
                    for k in 0..per_client {
                        match k % 3 {
                            0 => drop(robot.get_pos()?),
                            1 => drop(robot.get_sonar(k % 16)?),
                            _ => robot.set_vel(0.0, 0.0)?,
                        }
                    }
                    robot.disconnect()
                })
            })
            .collect();
        for t in threads {
            t.join().map_err(|_| "client thread panicked")??;
        }
        let secs = start.elapsed().as_secs_f64();
        let total = clients * per_client;
        println!(
            "{clients} client(s): {total} round trips in {secs:.2} s = {:.0} round trips/s ({:.1} µs each per client)",
            total as f64 / secs,
            secs * 1e6 / per_client as f64
        );
    }
    handle.stop()?;
    Ok(())
}
