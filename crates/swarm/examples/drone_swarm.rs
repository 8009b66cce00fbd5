//! Runs the drone swarm at a given size and prints wall seconds per simulated second.
//!
//! `cargo run --release -p simrob-swarm --example drone_swarm -- 10000 10 12`
//! (drones, simulated seconds, proximity beams).

use std::path::Path;
use std::time::Instant;

use simrob_swarm::scenario::{Overrides, Scenario};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().map(|s| s.parse()).transpose()?.unwrap_or(200);
    let secs: f64 = args.get(1).map(|s| s.parse()).transpose()?.unwrap_or(10.0);
    let beams: u16 = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(0);
    let text = format!(
        "fps = 24\nduration = {secs}\nseed = 1\n[generator]\nkind = \"drone-swarm\"\n\
         robots = {n}\nproximity_beams = {beams}\n"
    );
    let scenario = Scenario::from_toml_str(&text, Path::new("."))?;
    let t0 = Instant::now();
    let mut sim = scenario.build(&Overrides {
        full_duration: true,
        ..Overrides::default()
    })?;
    let build = t0.elapsed().as_secs_f64();
    let start = Instant::now();
    while sim.step() {}
    let wall = start.elapsed().as_secs_f64();
    let s = sim.finish(wall);
    println!(
        "{n} drones, {beams} beams: build {build:.3} s; {:.1} simulated s in {wall:.3} wall s = \
         {:.6} wall s per simulated s ({:.0}× real time); arrived {}, crashed {}, events {}",
        s.simulated_seconds,
        s.wall_per_simulated_second,
        s.simulated_seconds / wall,
        s.arrived,
        s.crashed,
        s.events
    );
    Ok(())
}
