use crate::contacts::{ContactHandoff, HANDOFF_MAX_EXTENT};
use crate::drones::Drone;
use crate::ecs::SwarmWorld;
use crate::event::{Event, Payload, Tag};
use crate::geom::{overlaps, Shape};
use crate::grid::{SpatialGrid, StaticIndex};
use crate::script::Script;
use crate::sim::{Ctx, System};

/// Collision: every moving collider is tested against the colliders in the grid cells
/// around it, against nearby walls, and against the obstacle map (as its inscribed disc;
/// such a contact names the world entity, 0). A `Collision` event naming both entities (smaller
/// id first) is raised when a contact begins; a contact is remembered while the two
/// still overlap, so it is reported once, however long it lasts.
///
/// The drones' ORCA controller already scans every drone's neighbours each frame; when it
/// asks for it ([`ContactHandoff::drones`]), the drones that it scans are tested there, in
/// that scan, and this system tests only the rest (other moving colliders, and every
/// moving collider against walls and the obstacle map). The controller then finishes the
/// frame's contacts ([`ContactHandoff::finish`]) before its own events, so the same contacts
/// are raised in the same order as when this system finds them all.
#[derive(Debug, Default)]
pub struct CollisionSystem {
    statics: Vec<u32>,
    /// Threads of its own; `None`: the run's ([`crate::sim::SimConfig::threads`]).
    threads: Option<usize>,
}

/// Below this many colliders one thread does all.
const PARALLEL_MIN: usize = 4096;

/// Contacts of the moving colliders in grid slots `range` (pairs, smaller id first); with
/// `handoff`, not those of a drone with grid neighbours that the drones' controller scans
/// ([`ContactHandoff`]).
fn detect(
    w: &SwarmWorld,
    range: std::ops::Range<usize>,
    handoff: bool,
    now: &mut Vec<(u32, u32)>,
    statics: &mut Vec<u32>,
) {
    let grid = w.res.get::<SpatialGrid>();
    let static_index = w.res.get::<StaticIndex>();
    let obstacles = w.res.obstacles.as_deref();
    let (vels, vp) = w.vel.raw();
    let (drones, dp) = match w.custom::<Drone>() {
        Some(c) if handoff => c.raw(),
        _ => (&[][..], &[][..]),
    };
    let (_, pp) = w.pose.raw();
    // Without walls and an obstacle map, the drones the controller scans need nothing here
    // (their velocity is not even read).
    let grid_only = obstacles.is_none() && static_index.is_empty();
    for k in range {
        let i = grid.ids[k] as usize;
        // The drones the controller scans: those it controls (a drone with a pose and a
        // velocity) that fly or hover.
        let has_vel = vp.get(i).copied().unwrap_or(false);
        let scanned = has_vel
            && dp.get(i).copied().unwrap_or(false)
            && pp.get(i).copied().unwrap_or(false)
            && drones[i].state.in_the_air();
        if scanned && grid_only {
            continue;
        }
        if !(has_vel && vels[i].is_moving()) {
            continue;
        }
        let (x, y, s) = (grid.xs[k], grid.ys[k], grid.shapes[k]);
        let (hw, hh) = s.half_extents();
        let reach = hw.max(hh) + grid.max_extent;
        if !scanned {
            grid_contacts(grid, i, (x, y, s), reach, now);
        }
        if let Some(map) = obstacles {
            if map.disc_overlaps(simrob_flat::Vec2::new(x, y), hw.min(hh)) {
                now.push((0, i as u32));
            }
        }
        if !static_index.is_empty() {
            static_index.near(x, y, reach, statics);
            for &si in statics.iter() {
                let (e, sx, sy, ss) = static_index.items[si as usize];
                if e.index() != i && overlaps(s, x, y, ss, sx, sy) {
                    now.push((i.min(e.index()) as u32, i.max(e.index()) as u32));
                }
            }
        }
    }
}

/// With the drones' scan finding their contacts and neither walls nor an obstacle map: the
/// contacts of the moving colliders among entities `range` that the drones' controller does
/// not scan (pairs, smaller id first), the same as [`detect`] finds for them from their grid
/// slots (every collider with a pose and a velocity is in the grid, at its pose).
fn detect_unscanned(w: &SwarmWorld, range: std::ops::Range<usize>, now: &mut Vec<(u32, u32)>) {
    let grid = w.res.get::<SpatialGrid>();
    let (vels, vp) = w.vel.raw();
    let (poses, pp) = w.pose.raw();
    let (shapes, sp) = w.collider.raw();
    let (drones, dp) = match w.custom::<Drone>() {
        Some(c) => c.raw(),
        None => (&[][..], &[][..]),
    };
    for i in range {
        if !(pp.get(i).copied().unwrap_or(false)
            && sp.get(i).copied().unwrap_or(false)
            && vp.get(i).copied().unwrap_or(false))
        {
            continue;
        }
        let scanned = dp.get(i).copied().unwrap_or(false) && drones[i].state.in_the_air();
        if scanned || !vels[i].is_moving() {
            continue;
        }
        let (x, y, s) = (poses[i].x, poses[i].y, shapes[i]);
        let (hw, hh) = s.half_extents();
        let reach = hw.max(hh) + grid.max_extent;
        grid_contacts(grid, i, (x, y, s), reach, now);
    }
}

/// The contacts of entity `i` (at `(x, y)`, of shape `s`) with the grid's entries within
/// `reach`, as pairs, smaller id first.
#[inline]
fn grid_contacts(
    grid: &SpatialGrid,
    i: usize,
    (x, y, s): (f64, f64, Shape),
    reach: f64,
    now: &mut Vec<(u32, u32)>,
) {
    grid.for_each_near(x, y, reach, |m| {
        let j = grid.ids[m] as usize;
        if j != i && overlaps(s, x, y, grid.shapes[m], grid.xs[m], grid.ys[m]) {
            now.push((i.min(j) as u32, i.max(j) as u32));
        }
    });
}

impl CollisionSystem {
    /// Uses at most `threads` threads (the results do not depend on it).
    pub fn with_threads(threads: usize) -> Self {
        CollisionSystem {
            threads: Some(threads.max(1)),
            ..CollisionSystem::default()
        }
    }
}

impl System for CollisionSystem {
    fn name(&self) -> &str {
        "collision"
    }

    fn start(&mut self, ctx: &mut Ctx) {
        // A fresh run: no contacts yet, and none left to a controller until one that runs
        // after this system asks (in its own start).
        *ctx.world.res.get_mut::<ContactHandoff>() = ContactHandoff::default();
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let mut handoff = std::mem::take(ctx.world.res.get_mut::<ContactHandoff>());
        let w = &ctx.world;
        let grid = w.res.get::<SpatialGrid>();
        let n = grid.ids.len();
        // The controller's scan sees every pair that can overlap only while the grid's
        // shapes are small.
        let deferred = handoff.drones && grid.max_extent <= HANDOFF_MAX_EXTENT;
        let mut now = std::mem::take(&mut handoff.now);
        now.clear();
        let threads = self.threads.unwrap_or_else(|| ctx.config.thread_count());
        // With no walls and no obstacle map, what is left to this system when the drones'
        // scan finds their contacts is the few other moving colliders: looked for in entity
        // order, which reads the drones' columns one after the other (in grid-slot order,
        // once the drones have mixed, each slot's drone is a read from anywhere in memory).
        let grid_only = w.res.obstacles.is_none() && w.res.get::<StaticIndex>().is_empty();
        if deferred && grid_only {
            let entities = w.pose.raw().0.len();
            in_parts(entities, threads, &mut now, |range, out| {
                detect_unscanned(w, range, out)
            });
        } else if threads <= 1 || n < PARALLEL_MIN {
            detect(w, 0..n, deferred, &mut now, &mut self.statics);
        } else {
            in_parts(n, threads, &mut now, |range, out| {
                detect(w, range, deferred, out, &mut Vec::new())
            });
        }
        handoff.now = now;
        handoff.pending = deferred;
        *ctx.world.res.get_mut::<ContactHandoff>() = handoff;
        if !deferred {
            ContactHandoff::finish(ctx, []);
        }
    }
}

/// Runs `find` over `0..len` — in one go on one thread or for a small `len`, else in
/// `threads` consecutive parts on a pool of that many threads — and appends what it found to `out`
/// in part order (the same pairs, in the same order, as one go).
fn in_parts(
    len: usize,
    threads: usize,
    out: &mut Vec<(u32, u32)>,
    find: impl Fn(std::ops::Range<usize>, &mut Vec<(u32, u32)>) + Sync,
) {
    if threads <= 1 || len < PARALLEL_MIN {
        find(0..len, out);
        return;
    }
    let chunk = len.div_ceil(threads);
    let ranges = (0..threads)
        .map(|c| (c * chunk).min(len)..((c + 1) * chunk).min(len))
        .collect();
    let parts = crate::par::each(threads, ranges, |range| {
        let mut part = Vec::new();
        find(range, &mut part);
        part
    });
    for p in parts {
        out.extend(p);
    }
}

/// The stop-on-collision reaction: an entity marked `stop_on_collision` that takes part in
/// a collision stops (velocity zero, path dropped); if it runs a script, the script gets a
/// `Collision` error naming the other entity.
#[derive(Debug, Default)]
pub struct StopOnCollision;

impl System for StopOnCollision {
    fn name(&self) -> &str {
        "stop-on-collision"
    }

    fn wants(&self, event: &Event) -> bool {
        event.tag == Tag::COLLISION && event.entity.is_none()
    }

    fn react(&mut self, event: &Event, ctx: &mut Ctx) {
        let Payload::Pair(a, b) = event.payload else {
            return;
        };
        for (me, other) in [(a, b), (b, a)] {
            if !ctx.world.stop_on_collision.has(me) {
                continue;
            }
            if let Some(v) = ctx.world.vel.get_mut(me) {
                *v = Default::default();
            }
            ctx.world.path.remove(me);
            if Script::of(&ctx.world, me).is_some() {
                let text = format!(
                    "{} collided with {}",
                    ctx.world.label(me),
                    ctx.world.label(other)
                );
                ctx.events.emit(Event::error(Tag::COLLISION, me, text));
            }
        }
    }
}
