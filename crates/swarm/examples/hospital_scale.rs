//! The hospital-style scripts at scale: HMR Sim's hospital (`scenarios/swarm/hospital.toml`:
//! three robots fetch medicine and supplies from the storage room and the pharmacy and deliver
//! them to the wards, one of them also sent to the garden, which no map-path reaches) tiled
//! side by side until there are as many robots as asked, each hospital with its own rooms,
//! items and robots running the bundled scripts (names suffixed with the hospital's number).
//! For each size: wall and processor seconds per simulated second, peak memory, and what the
//! run did (deliveries dropped, scripts run to their end, collisions, error events — the
//! garden, which no map-path reaches, raises one per hospital, handled by its script).
//!
//! ```sh
//! cargo run --release -p simrob-swarm --example hospital_scale -- [SIZES] [DURATION] [THREADS]
//! cargo run --release -p simrob-swarm --example hospital_scale -- 1000,10000,100000 300 1
//! ```
//!
//! SIZES: comma-separated robot counts, rounded up to whole hospitals of three (default
//! 1000,10000,100000); DURATION: simulated seconds at most (default 300, the bundled
//! scenario's; a run ends earlier once every script has ended); THREADS: worker threads
//! (default 1). Each size runs in a child process of its own, so the peak memory printed is
//! that run's alone (`VmHWM`, the scenario's text and its parsing included). Processor
//! seconds are the child's (user + system, every thread), so other work on the machine does
//! not count against them.
//!
//! The scenario is generated as the JSON form of a scenario file (the bundled hospital's
//! walls, map-paths, points of interest, items and robots with their components, once per
//! hospital), so a tiled run is exactly what loading such a file gives.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use simrob_swarm::scenario::{Overrides, Scenario};

/// One hospital: 800 × 500 map units, as drawn in `scenarios/swarm/hospital.drawio`.
const W: f64 = 800.0;
const H: f64 = 500.0;

/// Walls: `[x, y, width, height]` (top-left corner), as drawn.
const WALLS: [[f64; 4]; 16] = [
    [0.0, 0.0, 800.0, 10.0],
    [0.0, 490.0, 800.0, 10.0],
    [0.0, 0.0, 10.0, 500.0],
    [790.0, 0.0, 10.0, 500.0],
    [195.0, 10.0, 10.0, 200.0],
    [395.0, 10.0, 10.0, 200.0],
    [595.0, 10.0, 10.0, 200.0],
    [10.0, 210.0, 75.0, 10.0],
    [125.0, 210.0, 155.0, 10.0],
    [320.0, 210.0, 160.0, 10.0],
    [520.0, 210.0, 155.0, 10.0],
    [715.0, 210.0, 75.0, 10.0],
    [10.0, 280.0, 175.0, 10.0],
    [225.0, 280.0, 350.0, 10.0],
    [615.0, 280.0, 175.0, 10.0],
    [395.0, 290.0, 10.0, 200.0],
];

/// Map-paths, as drawn (the corridor, the doors, the way to the base and the homes).
const PATHS: [&[(f64, f64)]; 10] = [
    &[
        (30.0, 250.0),
        (105.0, 250.0),
        (205.0, 250.0),
        (300.0, 250.0),
        (500.0, 250.0),
        (595.0, 250.0),
        (695.0, 250.0),
        (770.0, 250.0),
    ],
    &[(105.0, 250.0), (105.0, 110.0)],
    &[(300.0, 250.0), (300.0, 110.0)],
    &[(500.0, 250.0), (500.0, 110.0)],
    &[(695.0, 250.0), (695.0, 110.0)],
    &[(205.0, 250.0), (205.0, 385.0)],
    &[(595.0, 250.0), (595.0, 385.0)],
    &[(595.0, 385.0), (530.0, 440.0)],
    &[(595.0, 385.0), (595.0, 450.0)],
    &[(595.0, 385.0), (660.0, 440.0)],
];

/// Points of interest (centres), as drawn.
const POIS: [(&str, f64, f64); 10] = [
    ("room1", 105.0, 110.0),
    ("room2", 300.0, 110.0),
    ("storage", 500.0, 110.0),
    ("room3", 695.0, 110.0),
    ("pharmacy", 205.0, 385.0),
    ("base", 595.0, 385.0),
    ("home1", 530.0, 440.0),
    ("home2", 595.0, 450.0),
    ("home3", 660.0, 440.0),
    ("garden", 745.0, 465.0),
];

/// Items (centres), as drawn.
const ITEMS: [(&str, f64, f64); 3] = [
    ("medicine_a", 488.0, 98.0),
    ("medicine_b", 512.0, 98.0),
    ("supplies_c", 215.0, 400.0),
];

/// Robots: name, start (centre) and script, as drawn; `{}` is the hospital's suffix.
const ROBOTS: [(&str, f64, f64, &[&str]); 3] = [
    (
        "r1",
        530.0,
        440.0,
        &[
            "Go storage{}",
            "Grab medicine_a{}",
            "Go room1{}",
            "Drop",
            "Go home1{}",
        ],
    ),
    (
        "r2",
        595.0,
        450.0,
        &[
            "Wait 2",
            "Go pharmacy{}",
            "Grab supplies_c{}",
            "Go room3{}",
            "Drop",
            "Go home2{}",
        ],
    ),
    (
        "r3",
        660.0,
        440.0,
        &[
            "Wait 5",
            "Go storage{}",
            "Grab medicine_b{}",
            "Go room2{}",
            "Drop",
            "Go garden{}",
            "Go home3{}",
        ],
    ),
];

/// The scenario (JSON form of a scenario file) with `hospitals` hospitals in a grid.
fn scenario_json(hospitals: usize, duration: f64, seed: u64) -> String {
    let cols = ((hospitals as f64 * H / W).sqrt().ceil() as usize).max(1);
    let rows = hospitals.div_ceil(cols);
    // Cells of 20 map units (as bundled) up to the grid's limit, larger beyond.
    let cell = {
        let mut c: f64 = 20.0;
        while (cols as f64 * W / c).ceil() * (rows as f64 * H / c).ceil() > 4_000_000.0 {
            c *= 2.0;
        }
        c
    };
    let mut s = String::with_capacity(hospitals * 3200 + 1024);
    let _ = write!(
        s,
        "{{\"name\":\"hospital delivery × {hospitals}\",\"fps\":20,\"duration\":{duration},\
         \"seed\":{seed},\"end_when_done\":true,\"world\":{{\"width\":{},\"height\":{},\
         \"cell_size\":{cell},\"snapshot_period\":1.0,\"default_handler\":[\"Wait 1 2\",\"Retry\"],\
         \"nav\":{{\"merge_radius\":8,\"max_off_path\":60,\"extend\":true}},",
        cols as f64 * W,
        rows as f64 * H
    );
    let at = |k: usize| ((k % cols) as f64 * W, (k / cols) as f64 * H);
    s.push_str("\"walls\":[");
    for k in 0..hospitals {
        let (ox, oy) = at(k);
        for (i, w) in WALLS.iter().enumerate() {
            if k + i > 0 {
                s.push(',');
            }
            let _ = write!(s, "[{},{},{},{}]", w[0] + ox, w[1] + oy, w[2], w[3]);
        }
    }
    s.push_str("],\"paths\":[");
    for k in 0..hospitals {
        let (ox, oy) = at(k);
        for (i, p) in PATHS.iter().enumerate() {
            if k + i > 0 {
                s.push(',');
            }
            s.push('[');
            for (j, (x, y)) in p.iter().enumerate() {
                if j > 0 {
                    s.push(',');
                }
                let _ = write!(s, "[{},{}]", x + ox, y + oy);
            }
            s.push(']');
        }
    }
    s.push_str("],\"pois\":{");
    for k in 0..hospitals {
        let (ox, oy) = at(k);
        for (i, (n, x, y)) in POIS.iter().enumerate() {
            if k + i > 0 {
                s.push(',');
            }
            let _ = write!(s, "\"{n}_{k}\":[{},{}]", x + ox, y + oy);
        }
    }
    s.push_str("}},\"entities\":[");
    for k in 0..hospitals {
        let (ox, oy) = at(k);
        for (i, (n, x, y)) in ITEMS.iter().enumerate() {
            if k + i > 0 {
                s.push(',');
            }
            let _ = write!(
                s,
                "{{\"type\":\"item\",\"name\":\"{n}_{k}\",\"position\":[{},{}],\"size\":[8,8]}}",
                x + ox,
                y + oy
            );
        }
        for (n, x, y, script) in ROBOTS {
            let lines: Vec<String> = script
                .iter()
                .map(|l| format!("\"{}\"", l.replace("{}", &format!("_{k}"))))
                .collect();
            let handlers = if n == "r3" {
                ",\"handlers\":{\"Unreachable\":[\"Log the garden has no map-path: going home instead\",\"Skip\"]}"
            } else {
                ""
            };
            let _ = write!(
                s,
                ",{{\"type\":\"robot\",\"name\":\"{n}_{k}\",\"position\":[{},{}],\"radius\":8,\
                 \"components\":{{\"Navigator\":{{\"speed\":40}},\
                 \"Claw\":{{\"range\":20,\"capacity\":1,\"duration\":0.5}},\
                 \"Battery\":{{\"capacity\":100,\"idle_drain\":0.05,\"move_drain\":0.02}},\
                 \"Proximity\":{{\"beams\":8,\"range\":40}},\
                 \"Script\":{{\"instructions\":[{}]{handlers}}}}}}}",
                x + ox,
                y + oy,
                lines.join(",")
            );
        }
    }
    s.push_str("]}");
    s
}

fn one(robots: usize, duration: f64, threads: usize) -> Result<(), Box<dyn std::error::Error>> {
    let hospitals = robots.div_ceil(ROBOTS.len()).max(1);
    let t0 = Instant::now();
    let c0 = simrob_benchkit::process_cpu().unwrap_or(f64::NAN);
    let text = scenario_json(hospitals, duration, 1);
    let scenario = Scenario::from_json_str(&text, Path::new("."))?;
    drop(text);
    let mut sim = scenario.build(&Overrides {
        threads: Some(threads),
        ..Overrides::default()
    })?;
    drop(scenario);
    let build_wall = t0.elapsed().as_secs_f64();
    let build_cpu = simrob_benchkit::process_cpu().unwrap_or(f64::NAN) - c0;
    let start = Instant::now();
    let c1 = simrob_benchkit::process_cpu().unwrap_or(f64::NAN);
    while sim.step() {}
    let wall = start.elapsed().as_secs_f64();
    let cpu = simrob_benchkit::process_cpu().unwrap_or(f64::NAN) - c1;
    let s = sim.finish(wall);
    let sim_s = s.simulated_seconds.max(1e-12);
    println!(
        "{:>8}  {:>9}  {:>6.1}  {:>9.4}  {:>9}  {:>8.0}  {:>10}  {:>8}  {:>10}  {:>6}  {:>7}  {:>5.1} ({:.1})",
        s.robots,
        hospitals,
        s.simulated_seconds,
        wall / sim_s,
        simrob_benchkit::cpu_per(cpu, sim_s, 4),
        simrob_benchkit::peak_memory_mb().unwrap_or(f64::NAN),
        s.tasks_done,
        s.scripts_done,
        s.collisions,
        s.errors,
        if s.killed { "done" } else { "duration" },
        build_cpu,
        build_wall,
    );
    Ok(())
}

fn main() -> std::process::ExitCode {
    simrob_benchkit::exit_code("hospital_scale", run())
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if let Some(mut a) = simrob_benchkit::one_run(&args) {
        return one(a.next("robots")?, a.next("duration")?, a.next("threads")?);
    }
    let sizes: Vec<usize> =
        simrob_benchkit::size_list(args.get(1).map_or("1000,10000,100000", String::as_str))?;
    let duration: f64 =
        simrob_benchkit::arg(&args, 2, "DURATION", "simulated seconds")?.unwrap_or(300.0);
    let threads: usize =
        simrob_benchkit::arg(&args, 3, "THREADS", "a number of threads")?.unwrap_or(1);
    println!(
        "{:>8}  {:>9}  {:>6}  {:>9}  {:>9}  {:>8}  {:>10}  {:>8}  {:>10}  {:>6}  {:>7}  build cpu (wall) s",
        "robots",
        "hospitals",
        "sim s",
        "wall/sim",
        "cpu/sim",
        "peak MB",
        "deliveries",
        "scripts",
        "collisions",
        "errors",
        "ended"
    );
    for n in sizes {
        let status =
            simrob_benchkit::run_child([n.to_string(), duration.to_string(), threads.to_string()])?;
        if !status.success() {
            eprintln!("hospital_scale: the run with {n} robots failed ({status})");
        }
    }
    Ok(())
}
