//! The bundled warehouse's traffic: collisions and tasks done per hour, with crossings taken
//! in turn (as bundled) and, for comparison, with crossings not managed.
//!
//! `cargo run --release -p simrob-swarm --example warehouse_traffic -- [ROBOTS] [SECONDS] [SEED]`
//! (defaults 1000 robots, 600 s, seed 1).

use std::path::Path;
use std::time::Instant;

use simrob_swarm::scenario::{Overrides, Scenario};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let arg = |i: usize| std::env::args().nth(i);
    let robots: usize = arg(1).map(|s| s.parse()).transpose()?.unwrap_or(1000);
    let seconds: f64 = arg(2).map(|s| s.parse()).transpose()?.unwrap_or(600.0);
    let seed: u64 = arg(3).map(|s| s.parse()).transpose()?.unwrap_or(1);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/swarm/warehouse.toml");
    let scenario = Scenario::load(&path)?;
    for managed in [true, false] {
        let mut sim = scenario.build(&Overrides {
            robots: Some(robots),
            duration: Some(seconds),
            seed: Some(seed),
            full_duration: true,
            ..Overrides::default()
        })?;
        if !managed {
            sim.world_mut().res.nav.crossing_radius = 0.0;
        }
        let start = Instant::now();
        while sim.step() {}
        let wall = start.elapsed().as_secs_f64();
        let s = sim.finish(wall);
        println!(
            "{:<22} {robots} robots, {:.0} s: collisions {}, tasks done {} ({:.0} an hour), errors {}; {:.1}× real time",
            if managed { "crossings in turn:" } else { "crossings unmanaged:" },
            s.simulated_seconds,
            s.collisions,
            s.tasks_done,
            s.tasks_done as f64 * 3600.0 / s.simulated_seconds.max(1e-9),
            s.errors,
            s.simulated_seconds / wall.max(1e-9),
        );
    }
    Ok(())
}
