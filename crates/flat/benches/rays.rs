//! Sonar ray throughput on one core: a 1000×1000 in vector map with 200 rectangles and a
//! 2000×2000 bitmap, 120 in rays (the Nomad-200 sonar: 10 in radius + 110 in range) from
//! random free points in random directions. Also the full world step with many robots.
//!
//! `cargo bench -p simrob-flat --bench rays` — criterion prints rays/s as "thrpt".

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use simrob_flat::{Bitmap, Map, Pose, Ray, Rect, RobotModel, Vec2, Velocity, World};

struct Lcg(u64);

impl Lcg {
    fn next(&mut self, m: f64) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * m
    }
}

/// 1000×1000 in, 200 rectangles 5–60 in a side.
pub fn vector_map() -> Map {
    let mut rng = Lcg(7);
    let rects = (0..200)
        .map(|_| {
            let (x, y) = (rng.next(960.0), rng.next(960.0));
            let (w, h) = (5.0 + rng.next(55.0), 5.0 + rng.next(55.0));
            Rect::new(x, y, x + w, y + h)
        })
        .collect();
    Map::from_rects(1000.0, 1000.0, rects).expect("map")
}

/// 2000×2000 px: a 2 px border, 600 round blobs (radius 4–30) and 150 wall segments.
pub fn bitmap_map() -> Map {
    let mut rng = Lcg(11);
    let mut bm = Bitmap::new(2000, 2000);
    for i in 0..2000 {
        for k in 0..2 {
            bm.set(i, k, true);
            bm.set(i, 1999 - k, true);
            bm.set(k, i, true);
            bm.set(1999 - k, i, true);
        }
    }
    for _ in 0..600 {
        let (cx, cy, r) = (rng.next(2000.0), rng.next(2000.0), 4.0 + rng.next(26.0));
        let (x0, x1) = ((cx - r).max(0.0) as u32, (cx + r).min(1999.0) as u32);
        let (y0, y1) = ((cy - r).max(0.0) as u32, (cy + r).min(1999.0) as u32);
        for y in y0..=y1 {
            for x in x0..=x1 {
                let (dx, dy) = (f64::from(x) + 0.5 - cx, f64::from(y) + 0.5 - cy);
                if dx * dx + dy * dy <= r * r {
                    bm.set(x, y, true);
                }
            }
        }
    }
    for _ in 0..150 {
        let (x, y) = (rng.next(1900.0) as u32, rng.next(1900.0) as u32);
        let len = 20 + rng.next(150.0) as u32;
        let horizontal = rng.next(1.0) < 0.5;
        for k in 0..len {
            for t in 0..3 {
                if horizontal {
                    bm.set(x + k, y + t, true);
                } else {
                    bm.set(x + t, y + k, true);
                }
            }
        }
    }
    Map::from_bitmap(bm).expect("map")
}

fn rays_for(map: &Map, n: usize) -> Vec<Ray> {
    let mut rng = Lcg(3);
    let mut rays = Vec::with_capacity(n);
    while rays.len() < n {
        let p = Vec2::new(rng.next(map.width()), rng.next(map.height()));
        if map.disc_overlaps(p, 10.0) {
            continue;
        }
        rays.push(Ray::from_heading(p, rng.next(360.0)));
    }
    rays
}

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
    let mut w = World::new(map);
    let mut rng = Lcg(5);
    while w.robot_count() < 1000 {
        let p = Vec2::new(rng.next(2000.0), rng.next(2000.0));
        if let Ok(id) = w.add_robot(RobotModel::NOMAD_200, Pose::new(p.x, p.y, rng.next(360.0))) {
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
