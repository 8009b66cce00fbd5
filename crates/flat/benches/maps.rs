//! The benchmark maps, shared by the criterion benchmark and the `raybench` example.

use simrob_flat::{Bitmap, Map, Ray, Rect, Vec2};

pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self, m: f64) -> f64 {
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

pub fn rays_for(map: &Map, n: usize) -> Vec<Ray> {
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

/// 2000×2000 px of rooms: walls 3 px thick every 200 px with a 40 px door in each wall
/// segment, and a 2 px border — a typical indoor bitmap.
pub fn rooms_bitmap() -> Map {
    let mut bm = Bitmap::new(2000, 2000);
    for i in 0..2000u32 {
        for k in 0..2 {
            bm.set(i, k, true);
            bm.set(i, 1999 - k, true);
            bm.set(k, i, true);
            bm.set(1999 - k, i, true);
        }
    }
    for wall in (200..2000u32).step_by(200) {
        for i in 0..2000u32 {
            let door = (i % 200) >= 80 && (i % 200) < 120;
            if door {
                continue;
            }
            for t in 0..3 {
                bm.set(i, wall + t, true);
                bm.set(wall + t, i, true);
            }
        }
    }
    Map::from_bitmap(bm).expect("map")
}
