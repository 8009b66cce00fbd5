//! Runs of the bundled scenarios pinned to hashes of their end states: moving code around the
//! store, its resources and its systems must not change a single bit of a run.

use std::path::Path;

use crate::scenario::{Overrides, Scenario};

/// FNV-1a over the end state: every living entity's pose bits and the summary's counts.
fn run_hash(file: &str, overrides: Overrides) -> u64 {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/swarm")
        .join(file);
    let scenario = Scenario::load(&path).expect("bundled scenario");
    let mut sim = scenario.build(&overrides).expect("build");
    let s = sim.run();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |v: u64| {
        for b in v.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    };
    for (e, p) in sim.world().pose.iter() {
        eat(u64::from(e.0));
        eat(p.x.to_bits());
        eat(p.y.to_bits());
        eat(p.theta.to_bits());
    }
    for v in [
        s.frames,
        s.events,
        s.collisions,
        s.tasks_done,
        s.scripts_done,
        s.scripts_failed,
        s.errors,
        s.arrived,
        s.crashed,
    ] {
        eat(v);
    }
    h
}

#[test]
fn bundled_runs_are_pinned() {
    let short = |seconds: f64, robots: Option<usize>| Overrides {
        robots,
        duration: Some(seconds),
        full_duration: true,
        ..Overrides::default()
    };
    let hashes = [
        run_hash("warehouse.toml", short(60.0, Some(60))),
        run_hash("hospital.toml", short(120.0, None)),
        run_hash("drone-swarm.toml", short(20.0, Some(200))),
    ];
    assert_eq!(
        hashes,
        [
            497628364780475783,
            16884890370980875774,
            // Changed on purpose when stalled drones began to detour (every drone arrives).
            603641587264767656
        ]
    );
}
