//! What a swarm that has arrived costs: every drone of the bundled drone swarm starts at its
//! target, hovering (disturbed every 0.125 s, ORCA making way, as at the end of a run), and
//! the world runs DURATION simulated seconds. Prints, for each size, the wall and processor
//! seconds per simulated second, the processor nanoseconds per drone per frame, peak memory,
//! and what the run did: drones still hovering and crashed. It is the least a frame of that
//! many drones costs in this model, since every drone is still controlled, moved, put in the
//! grid and disturbed each frame.
//!
//! ```sh
//! cargo run --release -p simrob-swarm --example swarm_settled -- [SIZES] [DURATION] [THREADS] [SEEDS]
//! cargo run --release -p simrob-swarm --example swarm_settled -- 10000,100000,1000000 5 2
//! ```
//!
//! SIZES: comma-separated drone counts (default 10000,100000,1000000); DURATION: simulated
//! seconds timed (default 5; one more is run first, untimed, for the controller to settle);
//! THREADS: controller threads (default: the machine's cores); SEEDS: a seed, seeds separated
//! by commas (`1,5,9`) or a range `A..B` with A at most B (default 1). Each size and seed runs
//! in a child process of its own, so the peak memory printed is that run's alone (`VmHWM`).
//! Processor seconds are the child's (user + system, every thread); a run that took less than
//! the processor clock's 10 ms tick prints `< x` (x: that tick per simulated second, or per
//! drone and frame), not 0. A bad argument is an error naming it; `--help` prints the usage.

use std::path::Path;
use std::time::Instant;

use simrob_benchkit::{arg, cores};
use simrob_swarm::drones::{Drone, DroneState};
use simrob_swarm::ecs::SwarmPose;
use simrob_swarm::scenario::{Overrides, Scenario};

/// Untimed simulated seconds before the timed ones.
const WARM_UP: f64 = 1.0;

fn one(
    n: usize,
    duration: f64,
    threads: usize,
    seed: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    if !(duration.is_finite() && duration > 0.0) {
        return Err(format!("DURATION is simulated seconds above 0, not {duration}").into());
    }
    let text = format!(
        "name = \"drone swarm\"\nfps = 24\nduration = {}\nseed = {seed}\n\
         [world]\ncell_size = 20\n[generator]\nkind = \"drone-swarm\"\n",
        WARM_UP + duration
    );
    let scenario = Scenario::from_toml_str(&text, Path::new("."))?;
    let mut sim = scenario.build(&Overrides {
        robots: Some(n),
        threads: Some(threads),
        full_duration: true,
        ..Overrides::default()
    })?;
    // Every drone at its target, hovering, as one that arrived.
    let w = sim.world_mut();
    let ids: Vec<_> = w
        .custom::<Drone>()
        .map(|c| c.iter().map(|(e, _)| e).collect())
        .unwrap_or_default();
    for e in ids {
        let Some(d) = w.custom_mut::<Drone>().get_mut(e) else {
            continue;
        };
        if d.state != DroneState::Flying {
            continue;
        }
        let (x, y) = d.target;
        d.state = DroneState::Hovering;
        d.reported = true;
        if let Some(p) = w.pose.get_mut(e) {
            *p = SwarmPose { x, y, theta: 0.0 };
        }
    }
    sim.run_until(WARM_UP);
    let c0 = simrob_benchkit::process_cpu().unwrap_or(f64::NAN);
    let t0 = Instant::now();
    sim.run_until(WARM_UP + duration);
    let wall = t0.elapsed().as_secs_f64();
    let cpu = simrob_benchkit::process_cpu().unwrap_or(f64::NAN) - c0;
    let (mut hovering, mut crashed) = (0u64, 0u64);
    if let Some(drones) = sim.world().custom::<Drone>() {
        for (_, d) in drones.iter() {
            match d.state {
                DroneState::Hovering => hovering += 1,
                DroneState::Crashed => crashed += 1,
                DroneState::Flying | DroneState::Idle => {}
            }
        }
    }
    let frames = duration * 24.0 * n.max(1) as f64;
    println!(
        "{:>10}  {:>4}  {:>7}  {:>6.1}  {:>9.4}  {:>9}  {:>8}  {:>7.2}  {:>8.0}  {:>9}  {:>7}",
        n,
        seed,
        threads,
        duration,
        wall / duration,
        simrob_benchkit::cpu_per(cpu, duration, 4),
        simrob_benchkit::cpu_per(cpu, frames / 1e9, 1),
        duration / wall.max(1e-12),
        simrob_benchkit::peak_memory_mb().unwrap_or(f64::NAN),
        hovering,
        crashed,
    );
    Ok(())
}

/// What `--help` prints.
const USAGE: &str = "\
swarm_settled [SIZES] [DURATION] [THREADS] [SEEDS]
  SIZES     drone counts separated by commas (default 10000,100000,1000000)
  DURATION  simulated seconds timed, above 0 (default 5; one more is run first, untimed)
  THREADS   controller threads, at least 1 (default: the machine's cores)
  SEEDS     a seed (7), seeds separated by commas (1,5,9) or a range FIRST..LAST (1..30)
            (default 1)
cpu/sim and ns/drone \"< x\": the run took less than the processor clock's 10 ms tick; x is
that tick divided by the simulated seconds (or by the drones' frames).
";

fn main() -> std::process::ExitCode {
    simrob_benchkit::exit_code("swarm_settled", run())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(mut a) = simrob_benchkit::one_run(&args) {
        return one(
            a.next("drones")?,
            a.next("duration")?,
            a.next("threads")?,
            a.next("seed")?,
        );
    }
    if simrob_benchkit::help_asked(&args) {
        print!("{USAGE}");
        return Ok(());
    }
    let sizes: Vec<usize> =
        simrob_benchkit::size_list(args.get(1).map_or("10000,100000,1000000", String::as_str))?;
    let duration: f64 = arg(&args, 2, "DURATION", "simulated seconds above 0")?.unwrap_or(5.0);
    if !(duration.is_finite() && duration > 0.0) {
        return Err(format!("DURATION is simulated seconds above 0, not {duration}").into());
    }
    let threads = arg(&args, 3, "THREADS", "a number of threads")?.unwrap_or_else(cores);
    if threads == 0 {
        return Err("THREADS is a number of threads, at least 1, not 0".into());
    }
    let seeds: Vec<u64> = match args.get(4) {
        Some(s) => simrob_benchkit::seed_list("SEEDS", s)?,
        None => vec![1],
    };
    if let Some(extra) = args.get(5) {
        return Err(format!(
            "swarm_settled takes at most 4 arguments (SIZES DURATION THREADS SEEDS); {extra:?} is one too many"
        )
        .into());
    }
    println!(
        "drone swarm (ORCA), every drone starting at its target, hovering; {duration} simulated s \
         timed after {WARM_UP} untimed; processor s = user + system of the run's process"
    );
    println!(
        "{:>10}  {:>4}  {:>7}  {:>6}  {:>9}  {:>9}  {:>8}  {:>7}  {:>8}  {:>9}  {:>7}",
        "drones",
        "seed",
        "threads",
        "sim s",
        "wall/sim",
        "cpu/sim",
        "ns/drone",
        "× real",
        "peak MB",
        "hovering",
        "crashed"
    );
    for &n in &sizes {
        for &seed in &seeds {
            let status = simrob_benchkit::run_child([
                n.to_string(),
                duration.to_string(),
                threads.to_string(),
                seed.to_string(),
            ])?;
            if !status.success() {
                eprintln!("{n} drones, seed {seed}: the run failed ({status})");
            }
        }
    }
    Ok(())
}
