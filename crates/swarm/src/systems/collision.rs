use crate::ecs::{EntityId, SwarmWorld};
use crate::event::{Event, Payload, Tag};
use crate::geom::overlaps;
use crate::grid::{SpatialGrid, StaticIndex};
use crate::script::Script;
use crate::sim::{Ctx, System};

/// Collision: every moving collider is tested against the colliders in the grid cells
/// around it, against nearby walls, and against the obstacle map (as its inscribed disc;
/// such a contact names the world entity, 0). A `Collision` event naming both entities (smaller
/// id first) is raised when a contact begins; a contact is remembered while the two
/// still overlap, so it is reported once, however long it lasts.
#[derive(Debug, Default)]
pub struct CollisionSystem {
    contacts: Vec<(u32, u32)>,
    now: Vec<(u32, u32)>,
    statics: Vec<u32>,
    /// Threads of its own; `None`: the run's ([`crate::sim::SimConfig::threads`]).
    threads: Option<usize>,
}

/// Below this many colliders one thread does all.
const PARALLEL_MIN: usize = 4096;

/// Contacts of the moving colliders in grid slots `range` (pairs, smaller id first).
fn detect(
    w: &SwarmWorld,
    range: std::ops::Range<usize>,
    now: &mut Vec<(u32, u32)>,
    statics: &mut Vec<u32>,
) {
    let grid = w.res.get::<SpatialGrid>();
    let static_index = w.res.get::<StaticIndex>();
    let obstacles = w.res.obstacles.as_deref();
    let (vels, vp) = w.vel.raw();
    for k in range {
        let i = grid.ids[k] as usize;
        if !(vp.get(i).copied().unwrap_or(false) && vels[i].is_moving()) {
            continue;
        }
        let (x, y, s) = (grid.xs[k], grid.ys[k], grid.shapes[k]);
        let (hw, hh) = s.half_extents();
        let reach = hw.max(hh) + grid.max_extent;
        grid.for_each_near(x, y, reach, |m| {
            let j = grid.ids[m] as usize;
            if j != i && overlaps(s, x, y, grid.shapes[m], grid.xs[m], grid.ys[m]) {
                now.push((i.min(j) as u32, i.max(j) as u32));
            }
        });
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

impl CollisionSystem {
    /// Uses at most `threads` threads (the results do not depend on it).
    pub fn with_threads(threads: usize) -> Self {
        CollisionSystem {
            threads: Some(threads.max(1)),
            ..CollisionSystem::default()
        }
    }

    /// The pairs in contact after the last frame.
    pub fn contacts(&self) -> &[(u32, u32)] {
        &self.contacts
    }
}

impl System for CollisionSystem {
    fn name(&self) -> &str {
        "collision"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let w = &ctx.world;
        let n = w.res.get::<SpatialGrid>().ids.len();
        self.now.clear();
        let threads = self.threads.unwrap_or_else(|| ctx.config.thread_count());
        if threads <= 1 || n < PARALLEL_MIN {
            detect(w, 0..n, &mut self.now, &mut self.statics);
        } else {
            let chunk = n.div_ceil(threads);
            let parts: Vec<Vec<(u32, u32)>> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..threads)
                    .map(|c| {
                        let range = (c * chunk).min(n)..((c + 1) * chunk).min(n);
                        scope.spawn(move || {
                            let mut out = Vec::new();
                            detect(w, range, &mut out, &mut Vec::new());
                            out
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_default())
                    .collect()
            });
            for p in parts {
                self.now.extend(p);
            }
        }
        // Contacts that still overlap stay contacts even if neither moved this frame.
        for &(a, b) in &self.contacts {
            let (ea, eb) = (EntityId(a), EntityId(b));
            if ea == EntityId::WORLD {
                if let (Some(map), Some(p), Some(s)) =
                    (&w.res.obstacles, w.pose.get(eb), w.collider.get(eb))
                {
                    let (hw, hh) = s.half_extents();
                    if map.disc_overlaps(simrob_flat::Vec2::new(p.x, p.y), hw.min(hh)) {
                        self.now.push((a, b));
                    }
                }
                continue;
            }
            if let (Some(pa), Some(sa), Some(pb), Some(sb)) = (
                w.pose.get(ea),
                w.collider.get(ea),
                w.pose.get(eb),
                w.collider.get(eb),
            ) {
                if overlaps(*sa, pa.x, pa.y, *sb, pb.x, pb.y) {
                    self.now.push((a, b));
                }
            }
        }
        self.now.sort_unstable();
        self.now.dedup();
        // New contacts: in `now` but not in `contacts` (both sorted).
        let mut j = 0;
        for &pair in &self.now {
            while j < self.contacts.len() && self.contacts[j] < pair {
                j += 1;
            }
            if j < self.contacts.len() && self.contacts[j] == pair {
                continue;
            }
            ctx.stats.collisions += 1;
            ctx.events.emit(Event {
                tag: Tag::COLLISION,
                entity: None,
                error: false,
                observation: false,
                payload: Payload::Pair(EntityId(pair.0), EntityId(pair.1)),
            });
        }
        std::mem::swap(&mut self.contacts, &mut self.now);
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
