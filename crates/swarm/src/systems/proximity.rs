use std::f64::consts::TAU;
use std::sync::Arc;

use crate::ecs::{EntityId, Proximity, SwarmPose, SwarmWorld};
use crate::geom::{ray_cast, Shape};
use crate::grid::{SpatialGrid, StaticIndex};
use crate::sim::{Ctx, System};

/// Proximity sensors: for every entity with a [`crate::Proximity`] component and a pose,
/// every `period` frames, each beam reads the distance from the robot's centre to the first
/// collider it meets (other robots from the spatial grid, walls from the static index, the
/// obstacle map of the 2D engine), or the sensor's range when nothing is that close. Beam
/// `i` points at `heading + i·2π/beams`.
///
/// Only the beams that can meet a neighbour are cast exactly: those within the angle its
/// bounding disc covers as seen from the robot. A
/// sensor whose robot did not move and around which nothing moved since its last reading
/// keeps that reading (it would read the same). Sensors are independent, so large swarms
/// are read on several threads (the readings do not depend on how many). Removing the
/// component stops the readings; adding it back restarts them.
#[derive(Debug, Default)]
pub struct ProximitySystem {
    /// Threads of its own; `None`: the run's ([`crate::sim::SimConfig::threads`]).
    threads: Option<usize>,
    prev: Option<Seen>,
    /// Keys of the grid cells where something changed since the last frame, sorted.
    dirty: Vec<u64>,
}

/// The grid as the last frame's readings saw it.
#[derive(Debug, Default)]
struct Seen {
    /// The grid's cell size and dimensions.
    cell: f64,
    dims: (usize, usize),
    keys: Vec<u64>,
    ids: Vec<u32>,
    xs: Vec<f64>,
    ys: Vec<f64>,
    shapes: Vec<Shape>,
    statics: Vec<(EntityId, f64, f64, Shape)>,
    obstacles: Option<Arc<simrob_flat::Map>>,
    max_extent: f64,
}

impl ProximitySystem {
    /// A proximity system using at most `threads` threads (1 = the caller's only).
    pub fn with_threads(threads: usize) -> Self {
        ProximitySystem {
            threads: Some(threads.max(1)),
            prev: None,
            dirty: Vec::new(),
        }
    }

    /// Marks the grid cells where something changed since the last frame (an entity came,
    /// went, moved or changed shape). Returns `false` when everything must be read afresh
    /// (first frame, another grid, walls or obstacle map changed). Costs what the grid's
    /// entries cost, whatever the map's area: the cells are found by walking last frame's
    /// entries and this frame's together, both sorted by cell.
    fn mark(&mut self, w: &SwarmWorld) -> bool {
        let g = w.res.get::<SpatialGrid>();
        let prev = self.prev.get_or_insert_with(Seen::default);
        let same_obstacles = match (&prev.obstacles, &w.res.obstacles) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        let keys = g.cell_keys();
        let same = prev.dims == g.dims()
            && prev.cell == g.cell_size()
            && prev.max_extent == g.max_extent
            && prev.statics == w.res.get::<StaticIndex>().items
            && same_obstacles;
        self.dirty.clear();
        if same {
            let (mut k, mut j) = (0, 0);
            while k < keys.len() || j < prev.keys.len() {
                let c = match (keys.get(k), prev.keys.get(j)) {
                    (Some(&a), Some(&b)) => a.min(b),
                    (Some(&a), None) => a,
                    (None, Some(&b)) => b,
                    (None, None) => break,
                };
                let now = k..k + keys[k..].iter().take_while(|&&a| a == c).count();
                let before = j..j + prev.keys[j..].iter().take_while(|&&b| b == c).count();
                (k, j) = (now.end, before.end);
                let changed = now.len() != before.len()
                    || now.zip(before).any(|(k, j)| {
                        g.ids[k] != prev.ids[j]
                            || g.xs[k] != prev.xs[j]
                            || g.ys[k] != prev.ys[j]
                            || g.shapes[k] != prev.shapes[j]
                    });
                if changed {
                    self.dirty.push(c);
                }
            }
        }
        prev.cell = g.cell_size();
        prev.dims = g.dims();
        prev.keys.clear();
        prev.keys.extend_from_slice(keys);
        prev.ids.clone_from(&g.ids);
        prev.xs.clone_from(&g.xs);
        prev.ys.clone_from(&g.ys);
        prev.shapes.clone_from(&g.shapes);
        prev.statics.clone_from(&w.res.get::<StaticIndex>().items);
        prev.obstacles = w.res.obstacles.clone();
        prev.max_extent = g.max_extent;
        same
    }
}

/// A run of sensors for one thread: index of the first, the sensors, their presence flags.
type Share<'a> = (usize, &'a mut [Proximity], &'a [bool]);

/// Below this many sensors one thread does all.
const PARALLEL_MIN: usize = 4096;

struct Scratch {
    statics: Vec<u32>,
    dirs: Vec<(f64, f64)>,
    base: Vec<(f64, f64)>,
    base_beams: u16,
}

/// What every sensor of a frame reads from.
struct Scene<'a> {
    poses: &'a [SwarmPose],
    pp: &'a [bool],
    grid: &'a SpatialGrid,
    statics: &'a StaticIndex,
    obstacles: Option<&'a simrob_flat::Map>,
    /// Keys of the cells where something changed (sorted), or `None` when everything must
    /// be read afresh.
    dirty: Option<&'a [u64]>,
    frame: u64,
}

impl Scene<'_> {
    /// Whether nothing changed in the cells a sensor at `p` with this reach looks at.
    fn quiet(&self, p: &SwarmPose, reach: f64) -> bool {
        let Some(dirty) = self.dirty else {
            return false;
        };
        if dirty.is_empty() {
            return true;
        }
        let g = self.grid;
        let (cx0, cx1, cy0, cy1) = g.cells_around(p.x, p.y, reach);
        (cy0..=cy1).all(|cy| {
            let first = dirty.partition_point(|&c| c < g.cell_key(cx0, cy));
            dirty.get(first).is_none_or(|&c| c > g.cell_key(cx1, cy))
        })
    }

    fn sense(&self, first: usize, sensors: &mut [Proximity], present: &[bool]) {
        let grid = self.grid;
        let mut sc = Scratch {
            statics: Vec::new(),
            dirs: Vec::new(),
            base: Vec::new(),
            base_beams: 0,
        };
        for (k, s) in sensors.iter_mut().enumerate() {
            let i = first + k;
            if !(present[k] && self.pp.get(i).copied().unwrap_or(false)) {
                continue;
            }
            let period = s.period.max(1) as u64;
            if s.beams == 0 || !self.frame.is_multiple_of(period) {
                continue;
            }
            let beams = s.beams as usize;
            let range = s.range;
            let p = self.poses[i];
            s.updates += 1;
            let window = range + grid.max_extent;
            // (Changes are tracked frame to frame, so only sensors read every frame reuse.)
            if period == 1
                && s.readings.len() == beams
                && self.frame >= period
                && s.valid == Some((self.frame - period, p, range))
                && self.quiet(&p, window)
            {
                s.valid = Some((self.frame, p, range));
                continue;
            }
            s.valid = Some((self.frame, p, range));
            s.readings.clear();
            s.readings.resize(beams, range);
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
            let step = TAU / beams as f64;
            grid.for_each_near(p.x, p.y, window, |m| {
                if grid.ids[m] as usize == i {
                    return;
                }
                let (dx, dy) = (grid.xs[m] - p.x, grid.ys[m] - p.y);
                let bound = grid.radii[m];
                let reach = range + bound;
                let d2 = dx * dx + dy * dy;
                if d2 >= reach * reach {
                    return;
                }
                let (cx, cy, shape) = (grid.xs[m], grid.ys[m], grid.shapes[m]);
                // The beams that can meet the neighbour's bounding disc: all of them from
                // inside it, else those within its angular half-width of its bearing.
                let (k0, k1) = if d2 <= bound * bound {
                    (0, beams as i64 - 1)
                } else {
                    let d = d2.sqrt();
                    let rel = dy.atan2(dx) - p.theta;
                    let half = (bound / d).asin() + 1e-9;
                    (
                        ((rel - half) / step).ceil() as i64,
                        ((rel + half) / step).floor() as i64,
                    )
                };
                for k in k0..=k1.min(k0 + beams as i64 - 1) {
                    let b = k.rem_euclid(beams as i64) as usize;
                    let (ux, uy) = dirs[b];
                    if let Some(t) = ray_cast(p.x, p.y, ux, uy, shape, cx, cy) {
                        if t < readings[b] {
                            readings[b] = t;
                        }
                    }
                }
            });
            if let Some(map) = self.obstacles {
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
            if !self.statics.is_empty() {
                self.statics.near(p.x, p.y, range, &mut sc.statics);
                for &si in &sc.statics {
                    let (e, cx, cy, shape) = self.statics.items[si as usize];
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

impl System for ProximitySystem {
    fn name(&self) -> &str {
        "proximity"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let frame = ctx.frame;
        let own_threads = self.threads.unwrap_or_else(|| ctx.config.thread_count());
        if ctx.world.proximity.is_empty() {
            self.prev = None;
            return;
        }
        let quiet_possible = self.mark(&ctx.world);
        let w = &mut ctx.world;
        let (poses, pp) = w.pose.raw();
        let count = w.proximity.len();
        let scene = Scene {
            poses,
            pp,
            grid: w.res.get::<SpatialGrid>(),
            statics: w.res.get::<StaticIndex>(),
            obstacles: w.res.obstacles.as_deref(),
            dirty: quiet_possible.then_some(self.dirty.as_slice()),
            frame,
        };
        let (sensors, sp) = w.proximity.raw_mut();
        let threads = if count >= PARALLEL_MIN {
            own_threads
        } else {
            1
        };
        if threads <= 1 {
            scene.sense(0, sensors, sp);
            return;
        }
        // Many small chunks dealt round-robin: crowded and empty regions of the map are
        // spread evenly over the threads.
        let chunk = sensors.len().div_ceil(threads * 16).max(256);
        let mut work: Vec<Vec<Share>> = (0..threads).map(|_| Vec::new()).collect();
        for (c, (s_chunk, p_chunk)) in sensors.chunks_mut(chunk).zip(sp.chunks(chunk)).enumerate() {
            work[c % threads].push((c * chunk, s_chunk, p_chunk));
        }
        crate::par::each(threads, work, |list| {
            for (first, s_chunk, p_chunk) in list {
                scene.sense(first, s_chunk, p_chunk);
            }
        });
    }
}
