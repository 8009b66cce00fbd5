//! The bundled warehouse's traffic: collisions and tasks done per hour, with crossings taken
//! in turn (as bundled) and, for comparison, with crossings not managed; and where the
//! robots' time went: moving, stopped at a crossing's edge (by cause), stopped in a lane
//! behind another robot, standing at a shelf or station.
//!
//! `cargo run --release -p simrob-swarm --example warehouse_traffic -- [ROBOTS] [SECONDS] [SEED] [turns]`
//! (defaults 1000 robots, 600 s, seed 1; `turns` skips the unmanaged run).

use std::path::Path;
use std::time::Instant;

use simrob_swarm::nav::crossing::Crossings;
use simrob_swarm::nav::NavMap;
use simrob_swarm::scenario::{Overrides, Scenario};

use simrob_benchkit::{arg, process_cpu as cpu_seconds};

fn main() -> std::process::ExitCode {
    simrob_benchkit::exit_code("warehouse_traffic", run())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let robots: usize = arg(&args, 1, "ROBOTS", "a number of robots")?.unwrap_or(1000);
    let seconds: f64 = arg(&args, 2, "SECONDS", "simulated seconds")?.unwrap_or(600.0);
    let seed: u64 = arg(&args, 3, "SEED", "a whole number")?.unwrap_or(1);
    let only_turns = match args.get(4).map(String::as_str) {
        None => false,
        Some("turns") => true,
        Some(other) => {
            return Err(format!("the fourth argument is turns or nothing, not {other:?}").into())
        }
    };
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/swarm/warehouse.toml");
    let scenario = Scenario::load(&path)?;
    for managed in [true, false] {
        if !managed && only_turns {
            break;
        }
        let mut sim = scenario.build(&Overrides {
            robots: Some(robots),
            duration: Some(seconds),
            seed: Some(seed),
            full_duration: true,
            ..Overrides::default()
        })?;
        if !managed {
            sim.world_mut().res.get_mut::<NavMap>().crossing_radius = 0.0;
        }
        let bots = sim.world().navigator.ids();
        // Robot-frames: moving, stopped at a crossing's edge, stopped in a lane, at a stop.
        let (mut moving, mut at_crossing, mut in_lane, mut at_stop) = (0u64, 0u64, 0u64, 0u64);
        let (start, cpu0) = (Instant::now(), cpu_seconds());
        while sim.step() {
            let w = sim.world();
            for &e in &bots {
                // Creeping up to a stop (under 1 unit a second) counts as stopped.
                if w.vel.get(e).is_some_and(|v| v.x.hypot(v.y) >= 1.0) {
                    moving += 1;
                } else if !w.path.has(e) {
                    at_stop += 1;
                } else if w
                    .res
                    .get::<Crossings>()
                    .limit(w, e)
                    .is_some_and(|r| r < 1.0)
                {
                    at_crossing += 1;
                } else {
                    in_lane += 1;
                }
            }
        }
        let wall = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
        let waits = sim.world().res.get::<Crossings>().waits();
        let frame_s = sim.time() / sim.frame().max(1) as f64;
        let s = sim.finish(wall);
        let total = (moving + at_crossing + in_lane + at_stop).max(1) as f64;
        let pct = |n: u64| 100.0 * n as f64 / total;
        println!(
            "{:<22} {robots} robots, {:.0} s: collisions {}, tasks done {} ({:.0} an hour), errors {}; {:.1}× real time ({})",
            if managed { "crossings in turn:" } else { "crossings unmanaged:" },
            s.simulated_seconds,
            s.collisions,
            s.tasks_done,
            s.tasks_done as f64 * 3600.0 / s.simulated_seconds.max(1e-9),
            s.errors,
            s.simulated_seconds / wall.max(1e-9),
            match cpu {
                Some(c) => format!("{:.1}× per processor second", s.simulated_seconds / c.max(1e-9)),
                None => "processor time unknown".into(),
            },
        );
        println!(
            "  robot time: moving {:.1}%, stopped at a crossing {:.1}%, stopped in a lane {:.1}%, at a shelf or station {:.1}%",
            pct(moving),
            pct(at_crossing),
            pct(in_lane),
            pct(at_stop)
        );
        if managed {
            println!(
                "  at crossings (robot·s): zone taken {:.0}, lane beyond full {:.0}, queued behind {:.0}; longest wait {:.1} s; detours {}",
                waits.zone_taken as f64 * frame_s,
                waits.exit_full as f64 * frame_s,
                waits.queued as f64 * frame_s,
                waits.longest as f64 * frame_s,
                waits.detours
            );
        }
    }
    Ok(())
}
