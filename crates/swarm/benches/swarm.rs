//! Criterion benchmarks: one simulated second of the drone swarm at several sizes, with and
//! without 12-beam proximity sensors, on its own map and in a 40,960 × 40,960 world
//! (4,194,304 grid cells), and of the warehouse. (`simrob swarm bench` prints what
//! longer runs did and their wall seconds per simulated second, for both avoidance models.)

use std::path::Path;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use simrob_swarm::scenario::{Overrides, Scenario};

fn swarm(n: usize, beams: u16) -> Scenario {
    swarm_in(n, beams, "")
}

/// The drone swarm with `world` (TOML keys of `[world]`) added.
fn swarm_in(n: usize, beams: u16, world: &str) -> Scenario {
    let text = format!(
        "fps = 24\nduration = 1\nseed = 1\n[world]\n{world}\n[generator]\nkind = \"drone-swarm\"\n\
         robots = {n}\nproximity_beams = {beams}\n"
    );
    match Scenario::from_toml_str(&text, Path::new(".")) {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    }
}

fn one_second(c: &mut Criterion, name: &str, scenario: Scenario, robots: Option<usize>) {
    let ov = Overrides {
        full_duration: true,
        robots,
        duration: Some(1.0),
        ..Overrides::default()
    };
    c.bench_function(name, |b| {
        b.iter_batched(
            || match scenario.build(&ov) {
                Ok(s) => s,
                Err(e) => panic!("{e}"),
            },
            |mut sim| {
                while sim.step() {}
                sim
            },
            BatchSize::LargeInput,
        )
    });
}

fn benches(c: &mut Criterion) {
    one_second(c, "drone swarm 200, 1 simulated s", swarm(200, 0), None);
    one_second(
        c,
        "drone swarm 200 + 12 beams, 40,960² world, 1 simulated s",
        swarm_in(200, 12, "width = 40960\nheight = 40960"),
        None,
    );
    one_second(
        c,
        "drone swarm 10,000, 1 simulated s",
        swarm(10_000, 0),
        None,
    );
    one_second(
        c,
        "drone swarm 10,000 + 12 beams, 1 simulated s",
        swarm(10_000, 12),
        None,
    );
    let warehouse =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/swarm/warehouse.toml");
    if let Ok(w) = Scenario::load(&warehouse) {
        one_second(c, "warehouse 2,000, 1 simulated s", w, Some(2_000));
    }
}

criterion_group! {
    name = group;
    config = Criterion::default().sample_size(10);
    targets = benches
}
criterion_main!(group);
