use std::f64::consts::TAU;

use crate::ecs::{EntityId, Pose, Proximity};
use crate::geom::ray_cast;
use crate::grid::{SpatialGrid, StaticIndex};
use crate::sim::{Ctx, System};

/// Proximity sensors: for every entity with a [`crate::Proximity`] component and a pose,
/// every `period` frames, each beam reads the distance from the robot's centre to the first
/// collider it meets (other robots from the spatial grid, walls from the static index, the
/// obstacle map of the 2D engine), or the sensor's range when nothing is that close. Beam `i` points at `heading + i·2π/beams`.
///
/// Only the beams that can meet a neighbour are cast exactly: a beam is skipped when it
/// points away from the neighbour or its line misses the neighbour's bounding disc.
/// Sensors are independent, so large swarms are read on several threads (the readings do
/// not depend on how many). Removing the component stops the readings; adding it back
/// restarts them.
#[derive(Debug)]
pub struct ProximitySystem {
    threads: usize,
}

impl Default for ProximitySystem {
    fn default() -> Self {
        ProximitySystem {
            threads: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
                .min(8),
        }
    }
}

impl ProximitySystem {
    /// A proximity system using at most `threads` threads (1 = the caller's only).
    pub fn with_threads(threads: usize) -> Self {
        ProximitySystem {
            threads: threads.max(1),
        }
    }
}

/// Below this many sensors one thread does all.
const PARALLEL_MIN: usize = 4096;

struct Scratch {
    statics: Vec<u32>,
    dirs: Vec<(f64, f64)>,
    base: Vec<(f64, f64)>,
    base_beams: u16,
}

#[allow(clippy::too_many_arguments)]
fn sense(
    first: usize,
    sensors: &mut [Proximity],
    present: &[bool],
    poses: &[Pose],
    pp: &[bool],
    grid: &SpatialGrid,
    statics: &StaticIndex,
    obstacles: Option<&simrob_flat::Map>,
    frame: u64,
) {
    let mut sc = Scratch {
        statics: Vec::new(),
        dirs: Vec::new(),
        base: Vec::new(),
        base_beams: 0,
    };
    for (k, s) in sensors.iter_mut().enumerate() {
        let i = first + k;
        if !(present[k] && pp.get(i).copied().unwrap_or(false)) {
            continue;
        }
        if s.beams == 0 || (s.period > 1 && frame % s.period as u64 != 0) {
            continue;
        }
        let beams = s.beams as usize;
        let range = s.range;
        let p = poses[i];
        s.readings.clear();
        s.readings.resize(beams, range);
        s.updates += 1;
        if sc.base_beams != s.beams {
            let step = TAU / beams as f64;
            sc.base = (0..beams)
                .map(|b| {
                    let (si, c) = (step * b as f64).sin_cos();
                    (c, si)
                })
                .collect();
            sc.base_beams = s.beams;
        }
        sc.dirs.clear();
        if p.theta == 0.0 {
            sc.dirs.extend_from_slice(&sc.base);
        } else {
            let (st, ct) = p.theta.sin_cos();
            sc.dirs.extend(
                sc.base
                    .iter()
                    .map(|&(c, si)| (c * ct - si * st, si * ct + c * st)),
            );
        }
        let readings = &mut s.readings;
        let dirs = &sc.dirs;
        grid.for_each_near(p.x, p.y, range + grid.max_extent, |m| {
            if grid.ids[m] as usize == i {
                return;
            }
            let (cx, cy, shape) = (grid.xs[m], grid.ys[m], grid.shapes[m]);
            let (dx, dy) = (cx - p.x, cy - p.y);
            let bound = shape.bounding_radius();
            let reach = range + bound;
            let d2 = dx * dx + dy * dy;
            if d2 >= reach * reach {
                return;
            }
            let inside = d2 <= bound * bound;
            for (b, &(ux, uy)) in dirs.iter().enumerate() {
                // Beams pointing away from the neighbour, or whose line misses its bounding
                // disc, cannot hit it.
                if !inside {
                    let along = dx * ux + dy * uy;
                    let across = dx * uy - dy * ux;
                    if along <= 0.0 || across * across >= bound * bound {
                        continue;
                    }
                }
                if let Some(t) = ray_cast(p.x, p.y, ux, uy, shape, cx, cy) {
                    if t < readings[b] {
                        readings[b] = t;
                    }
                }
            }
        });
        if let Some(map) = obstacles {
            let origin = simrob_flat::Vec2::new(p.x, p.y);
            for (b, &(ux, uy)) in dirs.iter().enumerate() {
                let ray = simrob_flat::Ray::new(origin, simrob_flat::Vec2::new(ux, uy));
                if let Some(t) = map.cast_ray(&ray, readings[b]) {
                    if t < readings[b] {
                        readings[b] = t;
                    }
                }
            }
        }
        if !statics.is_empty() {
            statics.near(p.x, p.y, range, &mut sc.statics);
            for &si in &sc.statics {
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
        if w.proximity.is_empty() {
            return;
        }
        let grid = &w.res.grid;
        let statics = &w.res.statics;
        let obstacles = w.res.obstacles.as_deref();
        let (poses, pp) = w.pose.raw();
        let count = w.proximity.len();
        let (sensors, sp) = w.proximity.raw_mut();
        let threads = if count >= PARALLEL_MIN {
            self.threads
        } else {
            1
        };
        if threads <= 1 {
            sense(0, sensors, sp, poses, pp, grid, statics, obstacles, frame);
            return;
        }
        let chunk = sensors.len().div_ceil(threads);
        std::thread::scope(|scope| {
            for (c, (s_chunk, p_chunk)) in
                sensors.chunks_mut(chunk).zip(sp.chunks(chunk)).enumerate()
            {
                scope.spawn(move || {
                    sense(
                        c * chunk,
                        s_chunk,
                        p_chunk,
                        poses,
                        pp,
                        grid,
                        statics,
                        obstacles,
                        frame,
                    )
                });
            }
        });
    }
}
