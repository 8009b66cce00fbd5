//! What a frame's spatial grid costs on small and on huge maps: the bundled hospital and
//! drone swarm as they are, and the same scenarios in a 40,960 × 40,960 world (4,194,304 grid
//! cells of 20, the most a scenario may have) where the robots cover a tiny part of the map.
//! Each row says what the run did (robots, arrived, crashed, tasks done, collisions) and what
//! it cost: wall seconds and processor seconds per simulated second, and a digest of its
//! final state (every pose and every sensor reading, bit for bit), which no change to how
//! the grid is stored may change.
//!
//! `cargo run --release -p simrob-swarm --example grid_bench -- [FILTER] [auto|dense|sparse]`
//! (only the runs whose name contains FILTER, e.g. `40,960`; the grid's layout, which changes
//! the cost and never the run).

use std::path::Path;
use std::time::Instant;

use simrob_swarm::grid::GridLayout;
use simrob_swarm::grid::SpatialGrid;
use simrob_swarm::scenario::{Overrides, Scenario};

use simrob_benchkit::process_cpu as cpu_seconds;

/// A bundled scenario's text with `[world]` width and height set (when `side` is given).
fn scenario(
    dir: &Path,
    file: &str,
    side: Option<f64>,
) -> Result<Scenario, Box<dyn std::error::Error>> {
    let mut text = std::fs::read_to_string(dir.join(file))?;
    if let Some(s) = side {
        text = text.replacen(
            "[world]\n",
            &format!("[world]\nwidth = {s}\nheight = {s}\n"),
            1,
        );
    }
    Ok(Scenario::from_toml_str(&text, dir)?)
}

/// FNV-1a over the bits of every pose and every proximity reading, in entity order.
fn digest(sim: &simrob_swarm::Simulation) -> u64 {
    let w = sim.world();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for (e, p) in w.pose.iter() {
        eat(e.0 as u64);
        eat(p.x.to_bits());
        eat(p.y.to_bits());
        eat(p.theta.to_bits());
        if let Some(s) = w.proximity.get(e) {
            s.readings.iter().for_each(|r| eat(r.to_bits()));
        }
    }
    h
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/swarm");
    const HUGE: f64 = 40_960.0;
    let big = Overrides {
        duration: Some(20.0),
        ..beams(10_000, 12)
    };
    let runs: [(&str, &str, Option<f64>, Overrides); 6] = [
        (
            "hospital, its map",
            "hospital.toml",
            None,
            Overrides::default(),
        ),
        (
            "hospital, 40,960² world",
            "hospital.toml",
            Some(HUGE),
            Overrides::default(),
        ),
        (
            "drone swarm 200 + 12 beams, its map",
            "drone-swarm.toml",
            None,
            beams(200, 12),
        ),
        (
            "drone swarm 200 + 12 beams, 40,960² world",
            "drone-swarm.toml",
            Some(HUGE),
            beams(200, 12),
        ),
        (
            "drone swarm 10,000 + 12 beams, 20 s, its map",
            "drone-swarm.toml",
            None,
            big.clone(),
        ),
        (
            "drone swarm 10,000 + 12 beams, 20 s, 40,960² world",
            "drone-swarm.toml",
            Some(HUGE),
            big,
        ),
    ];
    println!(
        "| run | grid cells | robots | simulated s | arrived | crashed | tasks done | collisions | wall s | processor s | wall s per simulated s | processor s per simulated s | final state |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    let filter = std::env::args().nth(1).unwrap_or_default();
    let layout = match std::env::args().nth(2).as_deref() {
        None | Some("auto") => GridLayout::Auto,
        Some("dense") => GridLayout::Dense,
        Some("sparse") => GridLayout::Sparse,
        Some(other) => return Err(format!("layout: auto, dense or sparse, not {other:?}").into()),
    };
    for (name, file, side, ov) in runs {
        if !name.contains(&filter) {
            continue;
        }
        let mut sim = scenario(&dir, file, side)?.build(&ov)?;
        sim.world_mut().res.get_mut::<SpatialGrid>().layout = layout;
        let cell = sim.ctx.config.cell_size;
        let (w, h) = (sim.world().res.width, sim.world().res.height);
        let cells = (w / cell).ceil() * (h / cell).ceil();
        let (start, cpu0) = (Instant::now(), cpu_seconds());
        while sim.step() {}
        let wall = start.elapsed().as_secs_f64();
        let cpu = cpu_seconds().zip(cpu0).map(|(b, a)| b - a);
        let s = sim.finish(wall);
        let sim_s = s.simulated_seconds.max(1e-9);
        let cpu_txt = |f: &dyn Fn(f64) -> String| cpu.map(f).unwrap_or_else(|| "unknown".into());
        println!(
            "| {name} | {cells:.0} | {} | {:.1} | {} | {} | {} | {} | {wall:.3} | {} | {:.5} | {} | {:016x} |",
            s.robots,
            s.simulated_seconds,
            s.arrived,
            s.crashed,
            s.tasks_done,
            s.collisions,
            cpu_txt(&|c| format!("{c:.2}")),
            wall / sim_s,
            cpu_txt(&|c| format!("{:.5}", c / sim_s)),
            digest(&sim),
        );
    }
    if filter.is_empty() || filter == "layouts" {
        layouts();
    }
    Ok(())
}

/// The grid alone: a rebuild and one query of a cell's reach around every entry, a frame,
/// for entries spread evenly over maps of several cells per entry, in each layout.
fn layouts() {
    println!();
    println!("| entries | cells per entry | dense: ns a frame | sparse: ns a frame | chosen |");
    println!("|---:|---:|---:|---:|---|");
    for m in [1_000usize, 10_000] {
        for per in [1.0f64, 4.0, 16.0, 64.0, 256.0] {
            let side = (per * m as f64).sqrt().ceil() * 20.0;
            let mut world = simrob_swarm::SwarmWorld::new(side, side);
            let mut state = 0x9E37_79B9_7F4A_7C15u64;
            let mut next = || {
                state = simrob_math::splitmix64(state);
                (state >> 11) as f64 / (1u64 << 53) as f64
            };
            for _ in 0..m {
                let e = world.spawn("robot");
                let (x, y) = (next() * side, next() * side);
                world
                    .pose
                    .insert(e, simrob_swarm::SwarmPose { x, y, theta: 0.0 });
                world.vel.insert(e, simrob_swarm::Velocity::default());
                world.set_collider(e, simrob_swarm::Shape::Circle { r: 3.0 });
            }
            let mut ns = Vec::new();
            let mut found = Vec::new();
            for layout in [GridLayout::Dense, GridLayout::Sparse, GridLayout::Auto] {
                let mut g = simrob_swarm::grid::SpatialGrid::default();
                g.layout = layout;
                let frames = 2_000_000 / m;
                let (start, mut seen) = (Instant::now(), 0usize);
                for _ in 0..frames {
                    g.rebuild(&world, 20.0);
                    for k in 0..g.ids.len() {
                        g.for_each_near(g.xs[k], g.ys[k], 20.0, |_| seen += 1);
                    }
                }
                ns.push(start.elapsed().as_secs_f64() * 1e9 / frames as f64);
                found.push((seen, g.is_dense()));
            }
            assert!(found[0].0 == found[1].0 && found[1].0 == found[2].0);
            println!(
                "| {m} | {per} | {:.0} | {:.0} | {} |",
                ns[0],
                ns[1],
                if found[2].1 { "dense" } else { "sparse" }
            );
        }
    }
}

fn beams(robots: usize, beams: u16) -> Overrides {
    Overrides {
        robots: Some(robots),
        proximity_beams: Some(beams),
        ..Overrides::default()
    }
}
