//! The compact swarm recording (`simrob-swarm-recording` version 2) at scale: for N
//! entities spread uniformly at random over a square map (the worst case for deflate: drones
//! that have mixed), what a snapshot costs the simulation's thread (quantising into the
//! columns) and the writer's (encoding, deflating, writing), and its size.
//!
//! ```sh
//! cargo run --release -p simrob-record --example swarm_record_scale -- [SIZES] [SNAPSHOTS] [FILE]
//! cargo run --release -p simrob-record --example swarm_record_scale -- 100000,1000000 5 /tmp/rec.swarm
//! ```
//!
//! Positions come from the swarm's generator (`simrob_math`'s xoshiro256++, seed 1). Both
//! costs are processor seconds of this process (user + system) per snapshot, measured
//! one after the other on one thread; FILE (default: discarded) is where snapshots go.

use std::io::Write;

use simrob_math::rng::Xoshiro256PlusPlus;
use simrob_record::swarm::{Columns, CompactWriter, EntityLine, STATES};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let sizes: Vec<usize> =
        simrob_benchkit::size_list(args.get(1).map_or("100000,1000000", String::as_str))?;
    let snapshots: usize = args.get(2).map_or(Ok(5), |s| s.parse())?;
    let path = args.get(3);
    println!("compact swarm recording, entities uniform over the map; per snapshot:");
    println!(
        "{:>9}  {:>12}  {:>10}  {:>14}  {:>14}",
        "entities", "bytes", "bytes/ent", "sim thread ms", "writer ms"
    );
    // The swarm's generator, seed 1: the same positions on every run.
    let mut rng = Xoshiro256PlusPlus::new(1);
    let mut next = move || rng.next_f64();
    for &n in &sizes {
        let side = (n as f64).sqrt() * 10.0;
        let poses: Vec<(f64, f64, f64)> = (0..n)
            .map(|_| {
                (
                    next() * side,
                    next() * side,
                    (next() - 0.5) * std::f64::consts::TAU,
                )
            })
            .collect();
        let out: Box<dyn Write> = match path {
            Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p)?)),
            None => Box::new(std::io::sink()),
        };
        let mut w = CompactWriter::new(out, 1);
        let mut cols = Columns::default();
        let (mut sim, mut writer) = (0.0, 0.0);
        for k in 0..snapshots {
            let c0 = simrob_benchkit::process_cpu().unwrap_or(f64::NAN);
            cols.begin(k as u64 * 24, k as f64);
            for (i, &(x, y, theta)) in poses.iter().enumerate() {
                cols.push(&EntityLine {
                    id: i as u32 + 1,
                    kind: 1,
                    x: x + k as f64,
                    y,
                    theta,
                    state: STATES[1 + (i % 3)],
                })?;
            }
            let c1 = simrob_benchkit::process_cpu().unwrap_or(f64::NAN);
            let before = w.bytes_written();
            w.snapshot(&cols)?;
            let c2 = simrob_benchkit::process_cpu().unwrap_or(f64::NAN);
            sim += c1 - c0;
            writer += c2 - c1;
            if k + 1 == snapshots {
                let bytes = w.bytes_written() - before;
                println!(
                    "{n:>9}  {bytes:>12}  {:>10.2}  {:>14.1}  {:>14.1}",
                    bytes as f64 / n as f64,
                    sim / snapshots as f64 * 1e3,
                    writer / snapshots as f64 * 1e3
                );
            }
        }
    }
    Ok(())
}
