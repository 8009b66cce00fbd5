//! Sonar rays per second on one core, as plain numbers (the criterion benchmark
//! `cargo bench -p simrob-flat --bench rays` measures the same with statistics).
//!
//! ```sh
//! cargo run --release -p simrob-flat --example raybench
//! ```
//!
//! Maps: 1000 × 1000 in with 200 rectangles (5–60 in a side), a 2000 × 2000 bitmap with 600
//! round blobs and 150 wall segments (cluttered: 16% black), and a 2000 × 2000 bitmap of
//! 200 in rooms with doors (indoor). Rays: 120 in (a Nomad-200 sonar: radius 10 in +
//! 110 in range) from random free points, either in random directions or as 16-ray sonar
//! rings. "cpu" divides by the thread's CPU time (Linux), "wall" by elapsed time — they differ
//! when the machine is shared.

#[path = "../benches/maps.rs"]
#[allow(dead_code)]
mod maps;

use std::time::Instant;

use maps::{bitmap_map, rays_for, rooms_bitmap, vector_map};
use simrob_benchkit::thread_cpu as cpu_seconds;
use simrob_flat::{Map, Ray};

fn measure(name: &str, map: &Map, rays: &[Ray]) {
    let mut best_cpu: f64 = 0.0;
    let mut best_wall: f64 = 0.0;
    let mut sink = 0.0;
    for _ in 0..7 {
        let c0 = cpu_seconds();
        let t0 = Instant::now();
        for r in rays {
            sink += map.cast_ray(r, 120.0).unwrap_or(120.0);
        }
        let wall = t0.elapsed().as_secs_f64();
        let cpu = match (c0, cpu_seconds()) {
            (Some(a), Some(b)) if b > a => b - a,
            _ => wall,
        };
        best_cpu = best_cpu.max(rays.len() as f64 / cpu);
        best_wall = best_wall.max(rays.len() as f64 / wall);
    }
    println!(
        "{name:<40} {:6.2} M rays/s cpu  {:6.2} M rays/s wall  (checksum {sink:.0})",
        best_cpu / 1e6,
        best_wall / 1e6
    );
}

fn main() {
    for (name, map) in [
        ("vector 1000x1000, 200 rectangles", vector_map()),
        ("bitmap 2000x2000", bitmap_map()),
        ("bitmap 2000x2000 rooms", rooms_bitmap()),
    ] {
        let random = rays_for(&map, 400_000);
        let rings: Vec<Ray> = random[..25_000]
            .iter()
            .flat_map(|r| {
                (0..16).map(move |k| {
                    Ray::from_heading(r.origin, r.dir.heading_deg() + f64::from(k) * 22.5)
                })
            })
            .collect();
        measure(&format!("{name}, random rays"), &map, &random);
        measure(&format!("{name}, 16-ray sonar rings"), &map, &rings);
    }
}
