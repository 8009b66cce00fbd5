//! Sonar ray throughput on one core: a 1000×1000 in vector map with 200 rectangles and a
//! 2000×2000 bitmap, 120 in rays (the Nomad-200 sonar: 10 in radius + 110 in range) from
//! random free points in random directions. Also the full world step with many robots.
//!
//! `cargo bench -p simrob-flat --bench rays` — criterion prints rays/s as "thrpt".

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use simrob_flat::{FlatPose, FlatWorld, RobotModel, Vec2, Velocity};

#[allow(dead_code)]
mod maps;
use maps::{bitmap_map, rays_for, vector_map, Lcg};

fn bench_rays(c: &mut Criterion) {
    let mut g = c.benchmark_group("sonar_rays");
    let cells: Vec<u32> = std::env::var("FLAT_CELLS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_default();
    let mut maps = vec![
        ("vector_1000_200rects".to_string(), vector_map()),
        ("bitmap_2000".to_string(), bitmap_map()),
    ];
    for &c in &cells {
        for (name, mut map) in [("vector", vector_map()), ("bitmap", bitmap_map())] {
            map.set_cell_size(c);
            maps.push((format!("{name}_cell{c}"), map));
        }
    }
    for (name, map) in maps {
        let rays = rays_for(&map, 100_000);
        g.throughput(Throughput::Elements(rays.len() as u64));
        g.bench_function(&name, |b| {
            b.iter(|| {
                let mut sum = 0.0;
                for ray in &rays {
                    sum += map.cast_ray(black_box(ray), 120.0).unwrap_or(120.0);
                }
                sum
            })
        });
    }
    g.finish();
}

fn bench_world(c: &mut Criterion) {
    let mut g = c.benchmark_group("world_step");
    g.sample_size(10);
    let map = bitmap_map();
    let mut w = FlatWorld::new(map);
    let mut rng = Lcg(5);
    while w.robot_count() < 1000 {
        let p = Vec2::new(rng.next(2000.0), rng.next(2000.0));
        if let Ok(id) = w.add_robot(
            RobotModel::NOMAD_200,
            FlatPose::new(p.x, p.y, rng.next(360.0)),
        ) {
            w.set_velocity(id, Velocity::new(20.0, rng.next(40.0) - 20.0));
        }
    }
    g.throughput(Throughput::Elements(1000));
    g.bench_function("1000_nomads_step", |b| b.iter(|| w.step()));
    let ids: Vec<_> = w.robots().map(|(id, _)| id).collect();
    g.throughput(Throughput::Elements(16 * ids.len() as u64));
    g.bench_function("1000_nomads_16_sonars", |b| {
        b.iter(|| {
            let mut sum = 0.0;
            for &id in &ids {
                for s in 0..16 {
                    sum += w.sonar(id, s).unwrap_or(0.0);
                }
            }
            sum
        })
    });
    g.finish();
}

criterion_group!(benches, bench_rays, bench_world);
criterion_main!(benches);
