//! The drone swarm at scale: for each size, how fast a simulated second runs (wall and
//! processor seconds), peak memory, and what the run did (arrived, crashed, still flying).
//!
//! ```sh
//! cargo run --release -p simrob-swarm --example swarm_scale -- [SIZES] [DURATION] [THREADS] [SEEDS] [CELL] [RECORD_DIR] [FORMAT]
//! cargo run --release -p simrob-swarm --example swarm_scale -- 10000,100000,1000000 60 2
//! ```
//!
//! SIZES: comma-separated drone counts (default 10000,100000,1000000); DURATION: simulated
//! seconds at most (default 60; a run ends earlier once every drone has arrived or crashed);
//! THREADS: controller threads (default: the machine's cores); SEEDS: a seed, seeds
//! separated by commas (`77,4242,31337`) or a range `A..B` with A at most B (default 1); CELL: the grid's cell size (`world.cell_size`, default 20 as bundled;
//! 10,000,000 drones need 60, as a scenario's grid has at most 4,194,304 cells). Each size and seed runs in a child process of its own, so the peak
//! memory printed is that run's alone (`VmHWM`). RECORD_DIR: also record each run (snapshots at 1 Hz,
//! `simrob-swarm-recording`) to `RECORD_DIR/swarm-N-SEED.swarm` and print its size, bytes
//! per drone per snapshot and snapshots left out; the processor seconds then include the
//! recorder's. FORMAT: `compact` (version 2 on its own thread, the default, as `simrob swarm
//! run --record` writes it) or `json` (version 1, JSON lines on the run's thread, `.jsonl`). Processor seconds are the child's (user +
//! system, every thread), so other work on the machine does not count against them; a run
//! that took less than the processor clock's 10 ms tick prints `< x` (x: that tick per
//! simulated second), not 0. A bad argument is an error naming it; `--help` prints the usage.
//!
//! Progress: every `SWARM_SCALE_PROGRESS` simulated seconds (default 10; 0 for none) each
//! run prints a line to stderr, starting `progress`: the simulated time, the interval's
//! processor and wall seconds per simulated second, the peak memory so far, and the drones
//! arrived, crashed (and, apart, drones that arrived and were then stopped by a collision
//! while hovering: the summary counts them as arrived), flying, hovering, detouring and their
//! stalls so far. It only reads the
//! world between frames, so the run is the same with or without it.

use std::path::Path;
use std::time::Instant;

use simrob_benchkit::{arg, cores};
use simrob_swarm::drones::{Drone, DroneState};
use simrob_swarm::scenario::{Overrides, Scenario};
use simrob_swarm::seer::{CompactRecorder, Consumer, JsonLinesRecorder, Seer};
use simrob_swarm::sim::Simulation;

fn one(
    n: usize,
    duration: f64,
    threads: usize,
    seed: u64,
    cell: f64,
    record: Option<&str>,
) -> Result<(), Box<dyn std::error::Error>> {
    let text = format!(
        "name = \"drone swarm\"\nfps = 24\nduration = {duration}\nseed = {seed}\n\
         [world]\ncell_size = {cell}\n[generator]\nkind = \"drone-swarm\"\n"
    );
    let scenario = Scenario::from_toml_str(&text, Path::new("."))?;
    let t0 = Instant::now();
    let mut sim = scenario.build(&Overrides {
        robots: Some(n),
        threads: Some(threads),
        ..Overrides::default()
    })?;
    let mut stats = None;
    if let Some(path) = record {
        // Snapshots at 1 Hz to a file, as `simrob swarm run --record` writes them.
        let file = std::io::BufWriter::new(std::fs::File::create(path)?);
        let rec: Box<dyn Consumer> = if path.ends_with(".jsonl") {
            Box::new(JsonLinesRecorder::new(file))
        } else {
            let rec = CompactRecorder::new(file, 1, 64 << 20)?;
            stats = Some(rec.stats());
            Box::new(rec)
        };
        sim.add_system(Box::new(Seer::new("drone swarm", 1.0, vec![rec])));
    }
    let build = t0.elapsed().as_secs_f64();
    let start = Instant::now();
    let c1 = simrob_benchkit::process_cpu().unwrap_or(f64::NAN);
    let every = progress_every()?;
    let mut last = (0.0, c1, start);
    let mut next = every;
    while sim.step() {
        if every > 0.0 && sim.time() >= next - 1e-9 {
            next += every;
            last = progress(&sim, n, last);
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = simrob_benchkit::process_cpu().unwrap_or(f64::NAN) - c1;
    let s = sim.finish(wall);
    let flying = n as u64 - s.arrived - s.crashed;
    let sim_s = s.simulated_seconds.max(1e-12);
    println!(
        "{:>10}  {:>4}  {:>7}  {:>6.1}  {:>9.4}  {:>9}  {:>7.2}  {:>8.0}  {:>9}  {:>7}  {:>7}  {:>6.1}",
        n,
        seed,
        threads,
        s.simulated_seconds,
        wall / sim_s,
        simrob_benchkit::cpu_per(cpu, sim_s, 4),
        sim_s / wall.max(1e-12),
        simrob_benchkit::peak_memory_mb().unwrap_or(f64::NAN),
        s.arrived,
        s.crashed,
        flying,
        build,
    );
    let after = sim
        .world()
        .custom::<Drone>()
        .map_or(0, |c| {
            c.iter()
                .filter(|(_, d)| d.state == DroneState::Crashed)
                .count() as u64
        })
        .saturating_sub(s.crashed);
    if after > 0 {
        println!(
            "            {after} of the arrived drones were stopped by a collision while hovering"
        );
    }
    if let Some(path) = record {
        let bytes = std::fs::metadata(path)?.len() as f64;
        // Snapshots at t = 0, 1, 2, … and one at the end (unless on a whole second).
        let snapshots = match &stats {
            Some(st) => st.written().max(1) as f64,
            None => s.simulated_seconds.ceil() + 1.0,
        };
        println!(
            "            recording {path}: {:.1} MB, {:.2} MB per simulated s, {:.1} bytes a drone a snapshot",
            bytes / 1e6,
            bytes / 1e6 / sim_s,
            bytes / snapshots / n as f64
        );
        if let Some(st) = stats {
            println!(
                "            {} snapshots written, {} left out (the writer behind){}",
                st.written(),
                st.dropped(),
                st.error()
                    .map(|e| format!("; failed: {e}"))
                    .unwrap_or_default()
            );
        }
    }
    Ok(())
}

/// `SWARM_SCALE_PROGRESS`: simulated seconds between progress lines (0: none).
fn progress_every() -> Result<f64, Box<dyn std::error::Error>> {
    match std::env::var("SWARM_SCALE_PROGRESS") {
        Err(_) => Ok(10.0),
        Ok(s) => match s.parse::<f64>() {
            Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
            _ => Err(format!(
                "SWARM_SCALE_PROGRESS is simulated seconds between progress lines (0: none), not {s:?}"
            )
            .into()),
        },
    }
}

/// Prints one progress line (stderr) for the interval since `last` (simulated s, processor
/// s, wall instant); returns the new mark. Reads the world only.
fn progress(sim: &Simulation, n: usize, last: (f64, f64, Instant)) -> (f64, f64, Instant) {
    let now = Instant::now();
    let cpu = simrob_benchkit::process_cpu().unwrap_or(f64::NAN);
    let t = sim.time();
    let dt = (t - last.0).max(1e-12);
    let frame = sim.frame() as u32;
    let (mut flying, mut hovering, mut detouring, mut stalls) = (0u64, 0u64, 0u64, 0u64);
    let mut stopped = 0u64;
    if let Some(drones) = sim.world().custom::<Drone>() {
        for (_, d) in drones.iter() {
            match d.state {
                DroneState::Flying => flying += 1,
                DroneState::Hovering => hovering += 1,
                DroneState::Crashed => stopped += 1,
                DroneState::Idle => {}
            }
            if d.progress.detouring(frame) {
                detouring += 1;
            }
            stalls += u64::from(d.progress.stalls());
        }
    }
    let s = sim.summary(0.0);
    eprintln!(
        "progress {n} drones  t {t:>7.1} s  cpu/sim {:>7}  wall/sim {:>7.3}  peak {:>6.0} MB  \
         arrived {}  crashed {} (+{} after arriving)  flying {flying}  hovering {hovering}  \
         detouring {detouring}  stalls {stalls}",
        simrob_benchkit::cpu_per(cpu - last.1, dt, 3),
        (now - last.2).as_secs_f64() / dt,
        simrob_benchkit::peak_memory_mb().unwrap_or(f64::NAN),
        s.arrived,
        s.crashed,
        stopped.saturating_sub(s.crashed),
    );
    (t, cpu, now)
}

/// What `--help` prints.
const USAGE: &str = "\
swarm_scale [SIZES] [DURATION] [THREADS] [SEEDS] [CELL] [RECORD_DIR] [FORMAT]
  SIZES       drone counts separated by commas (default 10000,100000,1000000)
  DURATION    simulated seconds at most, above 0 (default 60)
  THREADS     controller threads, at least 1 (default: the machine's cores)
  SEEDS       a seed (7), seeds separated by commas (77,4242,31337) or a range FIRST..LAST
              (1..30) (default 1)
  CELL        the grid's cell size, above 0 (default 20)
  RECORD_DIR  also record each run to RECORD_DIR/swarm-N-SEED.swarm
  FORMAT      compact (the default) or json
cpu/sim \"< x\": the run took less than the processor clock's 10 ms tick; x is that tick
divided by the simulated seconds.
";

fn main() -> std::process::ExitCode {
    simrob_benchkit::exit_code("swarm_scale", run())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(mut a) = simrob_benchkit::one_run(&args) {
        return one(
            a.next("drones")?,
            a.next("duration")?,
            a.next("threads")?,
            a.next("seed")?,
            a.next("cell")?,
            a.optional(),
        );
    }
    if simrob_benchkit::help_asked(&args) {
        print!("{USAGE}");
        return Ok(());
    }
    let sizes: Vec<usize> =
        simrob_benchkit::size_list(args.get(1).map_or("10000,100000,1000000", String::as_str))?;
    let duration: f64 = arg(&args, 2, "DURATION", "simulated seconds")?.unwrap_or(60.0);
    let threads = arg(&args, 3, "THREADS", "a number of threads")?.unwrap_or_else(cores);
    if !(duration.is_finite() && duration > 0.0) {
        return Err(format!("DURATION is simulated seconds above 0, not {duration}").into());
    }
    if threads == 0 {
        return Err("THREADS is a number of threads, at least 1, not 0".into());
    }
    let seeds: Vec<u64> = match args.get(4) {
        Some(s) => simrob_benchkit::seed_list("SEEDS", s)?,
        None => vec![1],
    };
    let cell: f64 =
        arg(&args, 5, "CELL", "the grid's cell size, a number above 0")?.unwrap_or(20.0);
    if !(cell.is_finite() && cell > 0.0) {
        return Err(format!("CELL is the grid's cell size, a number above 0, not {cell}").into());
    }
    let record = args.get(6);
    let ext = match args.get(7).map(String::as_str) {
        None | Some("compact") => "swarm",
        Some("json") => "jsonl",
        Some(other) => return Err(format!("FORMAT is compact or json, not {other:?}").into()),
    };
    if let Some(extra) = args.get(8) {
        return Err(format!(
            "swarm_scale takes at most 7 arguments (SIZES DURATION THREADS SEEDS CELL RECORD_DIR FORMAT); {extra:?} is one too many"
        )
        .into());
    }
    println!(
        "drone swarm (ORCA), at most {duration} simulated s (a run ends once every drone has \
         arrived or crashed); processor s = user + system of the run's process"
    );
    println!(
        "{:>10}  {:>4}  {:>7}  {:>6}  {:>9}  {:>9}  {:>7}  {:>8}  {:>9}  {:>7}  {:>7}  {:>6}",
        "drones",
        "seed",
        "threads",
        "sim s",
        "wall/sim",
        "cpu/sim",
        "× real",
        "peak MB",
        "arrived",
        "crashed",
        "flying",
        "build"
    );
    for &n in &sizes {
        for &seed in &seeds {
            let mut args = vec![
                n.to_string(),
                duration.to_string(),
                threads.to_string(),
                seed.to_string(),
                cell.to_string(),
            ];
            if let Some(dir) = record {
                args.push(format!("{dir}/swarm-{n}-{seed}.{ext}"));
            }
            let status = simrob_benchkit::run_child(args)?;
            if !status.success() {
                eprintln!("{n} drones, seed {seed}: the run failed ({status})");
            }
        }
    }
    Ok(())
}
