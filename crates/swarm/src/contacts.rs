//! The contacts of a frame, shared by the collision system
//! ([`crate::systems::CollisionSystem`]) and the drones' ORCA controller, which finds the
//! drones' contacts in its own neighbour scan. Below both, so neither imports the other.

use crate::ecs::{EntityId, Resource};
use crate::event::{Event, Payload, Tag};
use crate::geom::overlaps;
use crate::sim::Ctx;

/// The contacts of a frame, shared by the collision system and a controller that finds
/// some of them in its own neighbour scan (a world resource).
#[derive(Debug, Default)]
pub struct ContactHandoff {
    /// Set (before the run starts) by a controller that tests the drones it controls with
    /// ORCA for contacts in its own neighbour scan; the collision system then leaves those
    /// drones' grid neighbours to it.
    pub drones: bool,
    /// Whether this frame's contacts wait for that controller's (set by the collision
    /// system, cleared by [`ContactHandoff::finish`]).
    pub(crate) pending: bool,
    /// The pairs in contact after the last frame (sorted).
    contacts: Vec<(u32, u32)>,
    /// The pairs found this frame so far.
    pub(crate) now: Vec<(u32, u32)>,
}

impl Resource for ContactHandoff {
    fn initial() -> &'static Self {
        static INITIAL: std::sync::LazyLock<ContactHandoff> =
            std::sync::LazyLock::new(ContactHandoff::default);
        &INITIAL
    }
}

/// The largest half extent of any grid entry for which the drones' ORCA scan (every grid
/// entry within 20 map units) sees every pair that can overlap: two shapes within this half
/// extent overlap only closer than `2·√2·7 < 20`. Beyond, the collision system finds every
/// contact itself that frame.
pub const HANDOFF_MAX_EXTENT: f64 = 7.0;

impl ContactHandoff {
    /// Whether this frame's contacts wait for the controller's scan.
    pub fn pending(&self) -> bool {
        self.pending
    }

    /// The pairs in contact after the last frame (smaller id first, sorted).
    pub fn contacts(&self) -> &[(u32, u32)] {
        &self.contacts
    }

    /// Ends the frame's contact detection: `found` (pairs, smaller id first) join those
    /// found so far; contacts of the last frame that still overlap stay contacts; a
    /// `Collision` event is raised for each new one, in pair order.
    pub fn finish(ctx: &mut Ctx, found: impl IntoIterator<Item = (u32, u32)>) {
        let mut this = std::mem::take(ctx.world.res.get_mut::<ContactHandoff>());
        this.pending = false;
        this.now.extend(found);
        let w = &ctx.world;
        // Contacts that still overlap stay contacts even if neither moved this frame.
        for &(a, b) in &this.contacts {
            let (ea, eb) = (EntityId(a), EntityId(b));
            if ea == EntityId::WORLD {
                if let (Some(map), Some(p), Some(s)) =
                    (&w.res.obstacles, w.pose.get(eb), w.collider.get(eb))
                {
                    let (hw, hh) = s.half_extents();
                    if map.disc_overlaps(simrob_flat::Vec2::new(p.x, p.y), hw.min(hh)) {
                        this.now.push((a, b));
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
                    this.now.push((a, b));
                }
            }
        }
        this.now.sort_unstable();
        this.now.dedup();
        // New contacts: in `now` but not in `contacts` (both sorted).
        let mut j = 0;
        for &pair in &this.now {
            while j < this.contacts.len() && this.contacts[j] < pair {
                j += 1;
            }
            if j < this.contacts.len() && this.contacts[j] == pair {
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
        std::mem::swap(&mut this.contacts, &mut this.now);
        this.now.clear();
        *ctx.world.res.get_mut::<ContactHandoff>() = this;
    }
}
