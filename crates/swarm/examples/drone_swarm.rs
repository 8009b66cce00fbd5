//! Runs the drone swarm at a given size and prints what it did and how fast.
//!
//! `cargo run --release -p simrob-swarm --example drone_swarm -- 10000 60 orca [THREADS]`
//! (drones, simulated seconds at most, avoidance `orca` or `hmr`, threads). The run ends
//! when every drone has arrived or crashed, or at the duration.

use std::path::Path;
use std::time::Instant;

use simrob_swarm::drones::Avoidance;
use simrob_swarm::scenario::{Overrides, Scenario};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map(|s| s.parse()).transpose()?.unwrap_or(200);
    let secs: f64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(60.0);
    let avoidance: Avoidance = args
        .get(2)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or_default();
    let text = format!(
        "fps = 24\nduration = {secs}\nseed = 1\n[world]\ncell_size = 20\n[generator]\n\
         kind = \"drone-swarm\"\nrobots = {n}\n"
    );
    let scenario = Scenario::from_toml_str(&text, Path::new("."))?;
    let t0 = Instant::now();
    let mut sim = scenario.build(&Overrides {
        avoidance: Some(avoidance),
        ..Overrides::default()
    })?;
    let build = t0.elapsed().as_secs_f64();
    let start = Instant::now();
    while sim.step() {}
    let wall = start.elapsed().as_secs_f64();
    let s = sim.finish(wall);
    let flying = n as u64 - s.arrived - s.crashed;
    let all = if flying == 0 && s.crashed == 0 {
        format!("all arrived at {:.1} s", s.simulated_seconds)
    } else {
        format!("{flying} still flying at {:.1} s", s.simulated_seconds)
    };
    println!(
        "{n} drones, {}: arrived {}, crashed {} ({:.2}%), {all}; build {build:.2} s, \
         {:.1} simulated s in {wall:.2} wall s = {:.4} wall s per simulated s",
        avoidance.name(),
        s.arrived,
        s.crashed,
        100.0 * s.crashed as f64 / n as f64,
        s.simulated_seconds,
        s.wall_per_simulated_second,
    );
    Ok(())
}
