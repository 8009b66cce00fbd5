use std::f64::consts::TAU;

use crate::ecs::EntityId;
use crate::geom::{ray_cast, wrap_angle};
use crate::sim::{Ctx, System};

/// Proximity sensors: for every entity with a [`crate::Proximity`] component and a pose,
/// every `period` frames, each beam reads the distance from the robot's centre to the first
/// collider it meets (other robots from the spatial grid, walls from the static index), or
/// the sensor's range when nothing is that close. Beam `i` points at `heading + i·2π/beams`.
///
/// Only the beams that can meet a neighbour are cast: each neighbour covers an angular
/// interval as seen from the robot, and only the beams inside it are tested exactly.
/// Removing the component stops the readings; adding it back restarts them.
#[derive(Debug, Default)]
pub struct ProximitySystem {
    statics: Vec<u32>,
    dirs: Vec<(f64, f64)>,
}

impl System for ProximitySystem {
    fn name(&self) -> &str {
        "proximity"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let frame = ctx.frame;
        let w = &mut ctx.world;
        let grid = &w.res.grid;
        let statics = &w.res.statics;
        let (poses, pp) = w.pose.raw();
        let (sensors, sp) = w.proximity.raw_mut();
        let n = sensors.len().min(poses.len());
        for i in 0..n {
            if !(sp[i] && pp[i]) {
                continue;
            }
            let s = &mut sensors[i];
            if s.beams == 0 || (s.period > 1 && frame % s.period as u64 != 0) {
                continue;
            }
            let beams = s.beams as usize;
            let range = s.range;
            let p = poses[i];
            s.readings.clear();
            s.readings.resize(beams, range);
            s.updates += 1;
            let step = TAU / beams as f64;
            self.dirs.clear();
            let (sin0, cos0) = p.theta.sin_cos();
            let (sin_s, cos_s) = step.sin_cos();
            let (mut c, mut si) = (cos0, sin0);
            for _ in 0..beams {
                self.dirs.push((c, si));
                let nc = c * cos_s - si * sin_s;
                si = si * cos_s + c * sin_s;
                c = nc;
            }
            let readings = &mut s.readings;
            let dirs = &self.dirs;
            grid.for_each_near(p.x, p.y, range + grid.max_extent, |m| {
                if grid.ids[m] as usize == i {
                    return;
                }
                let (cx, cy, shape) = (grid.xs[m], grid.ys[m], grid.shapes[m]);
                let (dx, dy) = (cx - p.x, cy - p.y);
                let dist = dx.hypot(dy);
                let bound = shape.bounding_radius();
                if dist - bound >= range {
                    return;
                }
                let (k0, k1) = if dist <= bound {
                    (0i64, beams as i64 - 1)
                } else {
                    let rel = wrap_angle(dy.atan2(dx) - p.theta);
                    let half = (bound / dist).asin();
                    (
                        ((rel - half) / step).ceil() as i64,
                        ((rel + half) / step).floor() as i64,
                    )
                };
                for k in k0..=k1 {
                    let b = k.rem_euclid(beams as i64) as usize;
                    let (ux, uy) = dirs[b];
                    if let Some(t) = ray_cast(p.x, p.y, ux, uy, shape, cx, cy) {
                        if t < readings[b] {
                            readings[b] = t;
                        }
                    }
                }
            });
            if !statics.is_empty() {
                statics.near(p.x, p.y, range, &mut self.statics);
                for &si in &self.statics {
                    let (e, cx, cy, shape) = statics.items[si as usize];
                    if e == EntityId(i as u32) {
                        continue;
                    }
                    for (b, &(ux, uy)) in dirs.iter().enumerate() {
                        if let Some(t) = ray_cast(p.x, p.y, ux, uy, shape, cx, cy) {
                            if t < readings[b] {
                                readings[b] = t;
                            }
                        }
                    }
                }
            }
        }
    }
}
