//! Crossings taken in turn: the intersection management of robots that keep lane
//! discipline.
//!
//! A crossing is a node of the navigation graph with three or more neighbours (in or out),
//! or a turn (two neighbours not in line: a robot following another round a corner loses
//! sight of it).
//! Around it is a zone of radius `NavMap::crossing_radius` (centre distance; at least a
//! robot's diameter, so a robot waiting at its edge is clear of one passing through the
//! node). A robot whose [`Navigator`](crate::ecs::Navigator) keeps its distance
//! (`keep_clear > 0`) enters a zone only while it holds it:
//!
//! * it asks when its route reaches the zone's edge within two frames of travel; a robot
//!   that does not hold the zone stops at its edge;
//! * askers are served first come, first served (then the nearer, then by entity id), never
//!   one past another waiting ahead of it in its lane; the zone is given only when nobody
//!   else is in it, except robots making the same straight movement (same lane in, same
//!   lane out: a platoon goes through together), and when the lane it leaves by has a free
//!   place for it up to the next crossing (counting robots still moving there and those
//!   already let out that way: if the queue ahead stopped, it would stand inside and block
//!   every movement through the crossing);
//! * an asker that waits only for a place in the lane it leaves by does not hold up
//!   another movement with room (the zone would stand empty meanwhile); one that waits for
//!   the zone holds up everyone who came after it;
//! * a robot holds the zone until it is out of it and its route no longer leads to it (a
//!   robot whose route ends at the node, say at a station there, holds it while it stays);
//! * a robot kept at the edge `NavMap::crossing_patience` seconds by a full lane beyond
//!   takes another way out that has room and a new route from there (so that queues closing
//!   a loop round a block do not wait for each other for ever).
//!
//! Robots that do not keep their distance (and entities without a route) are not managed,
//! but one standing in a zone keeps managed robots out of it. Everything is decided from
//! the poses at the start of the frame, in a fixed order: the same run gives the same
//! turns. [`Crossings::waits`] says what the turns cost (robot-frames at the edges by
//! cause, the longest wait, detours).

use std::collections::{BTreeMap, HashMap};

use super::NavMap;
use crate::ecs::{EntityId, Path, Resource, SwarmWorld};
use crate::grid::SpatialGrid;

/// How far inside its edge a robot must be to count as in a zone (robots that stopped at
/// the edge stand there up to rounding).
const EDGE: f64 = 0.5;

/// A robot's next crossing on its route.
#[derive(Clone, Copy, Debug)]
pub struct Approach {
    pub entity: EntityId,
    pub node: u32,
    /// Distance along the route to the node.
    pub along: f64,
    /// Unit direction it arrives in.
    pub inward: (f64, f64),
    /// Unit direction it leaves by (`None`: the route ends at the node).
    pub outward: Option<(f64, f64)>,
    /// Its own radius.
    pub radius: f64,
}

impl Approach {
    fn straight(&self) -> bool {
        self.outward
            .is_some_and(|o| o.0 * self.inward.0 + o.1 * self.inward.1 > 0.99)
    }

    fn same_movement(&self, other: &Approach) -> bool {
        let same = |a: (f64, f64), b: (f64, f64)| a.0 * b.0 + a.1 * b.1 > 0.99;
        self.straight()
            && other.straight()
            && same(self.inward, other.inward)
            && match (self.outward, other.outward) {
                (Some(a), Some(b)) => same(a, b),
                _ => false,
            }
    }
}

#[derive(Clone, Debug, Default)]
struct Zone {
    /// Holders in the order they got the zone, with the movement they hold it for.
    holders: Vec<Approach>,
    /// Askers: (frame asked, entity).
    queue: Vec<(u64, EntityId)>,
}

/// Robot-frames spent stopped at the edge of a crossing, by what kept each robot there,
/// and the detours taken: what the turns cost. Counting them changes nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrossingWaits {
    /// Another movement held the zone, or someone else stood in it.
    pub zone_taken: u64,
    /// The lane beyond the zone was full.
    pub exit_full: u64,
    /// Behind a robot waiting ahead of it in its lane, or after a robot that came first and
    /// waits for the zone.
    pub queued: u64,
    /// The longest a robot has waited at one edge, in frames.
    pub longest: u64,
    /// Detours taken after `NavMap::crossing_patience` at a full lane.
    pub detours: u64,
}

/// The zones' state, kept by the path system from frame to frame.
#[derive(Clone, Debug, Default)]
pub struct Crossings {
    zones: BTreeMap<u32, Zone>,
    /// What each managed robot with a route is approaching this frame, in entity order.
    approaches: Vec<Approach>,
    /// Index into `approaches` by entity.
    index: HashMap<EntityId, usize>,
    waits: CrossingWaits,
}

/// The next crossing on `path` from `(x, y)` within `reach` along the route.
fn next_crossing(
    world: &SwarmWorld,
    e: EntityId,
    x: f64,
    y: f64,
    path: &Path,
    reach: f64,
    radius: f64,
) -> Option<Approach> {
    let nav = world.res.get::<NavMap>();
    let (mut px, mut py) = (x, y);
    let mut along = 0.0;
    for k in path.next..path.points.len() {
        let (qx, qy) = path.points[k];
        let leg = (qx - px).hypot(qy - py);
        if leg > 1e-9 {
            along += leg;
        }
        if along > reach {
            return None;
        }
        if let Some(node) = nav.nearest(qx, qy, 1e-6).filter(|&n| nav.is_crossing(n)) {
            let inward = if leg > 1e-9 {
                ((qx - px) / leg, (qy - py) / leg)
            } else {
                // At the node already: the way it faces.
                let t = world.pose.get(e).map_or(0.0, |p| p.theta);
                (t.cos(), t.sin())
            };
            let outward = path.points.get(k + 1).and_then(|&(rx, ry)| {
                let l = (rx - qx).hypot(ry - qy);
                (l > 1e-9).then(|| ((rx - qx) / l, (ry - qy) / l))
            });
            return Some(Approach {
                entity: e,
                node,
                along,
                inward,
                outward,
                radius,
            });
        }
        (px, py) = (qx, qy);
    }
    None
}

impl Resource for Crossings {
    fn initial() -> &'static Self {
        static INITIAL: std::sync::LazyLock<Crossings> =
            std::sync::LazyLock::new(Crossings::default);
        &INITIAL
    }
}

impl Crossings {
    /// Decides this frame's turns; then [`Crossings::limit`] gives each robot's speed.
    /// Returns the detours to take: `(robot, crossing, node to leave by)` for robots that
    /// waited `NavMap::crossing_patience` seconds at a crossing whose way out stayed full
    /// while another way out is free.
    pub fn update(
        &mut self,
        world: &SwarmWorld,
        paths: &crate::ecs::Column<Path>,
        frame: u64,
        dt: f64,
    ) -> Vec<(EntityId, u32, u32)> {
        let zone = world.res.get::<NavMap>().crossing_radius;
        self.approaches.clear();
        self.index.clear();
        if zone <= 0.0 {
            self.zones.clear();
            return Vec::new();
        }
        for (e, path) in paths.iter() {
            let Some(nav) = world.navigator.get(e) else {
                continue;
            };
            if nav.keep_clear <= 0.0 {
                continue;
            }
            let Some(p) = world.pose.get(e) else { continue };
            let radius = world.collider.get(e).map_or(0.0, |s| s.bounding_radius());
            let reach = zone + 2.0 * path.speed * dt + 1.0;
            if let Some(a) = next_crossing(world, e, p.x, p.y, path, reach, radius) {
                self.index.insert(e, self.approaches.len());
                self.approaches.push(a);
            }
        }
        let (approaches, index) = (&self.approaches, &self.index);
        let approach_of = |e: EntityId, node: u32| {
            index
                .get(&e)
                .map(|&i| approaches[i])
                .filter(|a| a.node == node)
        };
        // Releases: holders out of the zone whose route no longer leads to it.
        let nodes = world.res.get::<NavMap>().nodes();
        for (&node, z) in self.zones.iter_mut() {
            let (nx, ny) = nodes[node as usize];
            z.holders.retain(|h| {
                let Some(p) = world.pose.get(h.entity) else {
                    return false;
                };
                (p.x - nx).hypot(p.y - ny) <= zone || approach_of(h.entity, node).is_some()
            });
            z.queue.retain(|&(_, e)| approach_of(e, node).is_some());
        }
        // Askers join their zone's queue; a robot already inside a zone it does not hold
        // (its route began there) holds it at once, so that it can leave.
        for a in approaches {
            let z = self.zones.entry(a.node).or_default();
            if let Some(h) = z.holders.iter_mut().find(|h| h.entity == a.entity) {
                *h = *a;
                continue;
            }
            let (nx, ny) = nodes[a.node as usize];
            let inside = world
                .pose
                .get(a.entity)
                .is_some_and(|p| (p.x - nx).hypot(p.y - ny) < zone - EDGE);
            if inside {
                z.holders.push(*a);
            } else if !z.queue.iter().any(|&(_, e)| e == a.entity) {
                z.queue.push((frame, a.entity));
            }
        }
        // Grants, first come first served. An asker that must wait for the zone holds up
        // everyone after it; one that waits only for room beyond the zone does not hold up
        // another movement that has room (the zone would stand empty), nor is anyone let
        // past a robot waiting ahead of it in its own lane.
        let patience = world.res.get::<NavMap>().crossing_patience;
        let mut detours = Vec::new();
        let waits = &mut self.waits;
        let mut granted = Vec::new();
        for (&node, z) in self.zones.iter_mut() {
            // First come first served; of those that came in the same frame, the nearer.
            z.queue.sort_by(|p, q| {
                let along = |e| approach_of(e, node).map_or(f64::MAX, |a| a.along);
                (p.0, along(p.1), p.1)
                    .partial_cmp(&(q.0, along(q.1), q.1))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
            granted.clear();
            let mut held_up = false;
            for (k, &(asked_at, e)) in z.queue.iter().enumerate() {
                let Some(a) = approach_of(e, node) else {
                    continue;
                };
                let at_edge = a.along - zone < EDGE;
                let waited = frame.saturating_sub(asked_at);
                let mut wait = |count: &mut u64| {
                    if at_edge {
                        *count += 1;
                        waits.longest = waits.longest.max(waited);
                    }
                };
                // Never past a robot waiting ahead of it in its own lane.
                let behind = z.queue.iter().enumerate().any(|(j, &(_, o))| {
                    j != k
                        && !granted.contains(&o)
                        && approach_of(o, node).is_some_and(|b| {
                            b.along < a.along
                                && b.inward.0 * a.inward.0 + b.inward.1 * a.inward.1 > 0.99
                        })
                });
                if held_up || behind {
                    wait(&mut waits.queued);
                    continue;
                }
                // Nobody else in the zone (a platoon on one straight movement excepted)…
                if !z.holders.iter().all(|h| h.same_movement(&a))
                    || !zone_free(world, node, zone, e, &z.holders)
                {
                    wait(&mut waits.zone_taken);
                    held_up = true;
                    continue;
                }
                // …and room beyond it.
                if !a
                    .outward
                    .is_none_or(|o| exit_clear(world, node, zone, o, e, a.radius, &z.holders))
                {
                    wait(&mut waits.exit_full);
                    // Waited long at the edge for a lane that stays full: another way out.
                    if waited as f64 * dt >= patience && at_edge {
                        if let Some(m) = detour(world, node, zone, &a, &z.holders) {
                            detours.push((e, node, m));
                            waits.detours += 1;
                        }
                    }
                    continue;
                }
                z.holders.push(a);
                granted.push(e);
            }
            z.queue.retain(|(_, e)| !granted.contains(e));
        }
        self.zones
            .retain(|_, z| !z.holders.is_empty() || !z.queue.is_empty());
        detours
    }

    /// What the turns have cost so far.
    pub fn waits(&self) -> CrossingWaits {
        self.waits
    }

    /// The farthest `e` may go along its route this frame: up to the edge of the next zone
    /// it does not hold (`None`: no limit).
    pub fn limit(&self, world: &SwarmWorld, e: EntityId) -> Option<f64> {
        let zone = world.res.get::<NavMap>().crossing_radius;
        let a = self.approaches[*self.index.get(&e)?];
        let holds = self
            .zones
            .get(&a.node)
            .is_some_and(|z| z.holders.iter().any(|h| h.entity == e));
        (!holds).then(|| (a.along - zone).max(0.0))
    }
}

/// Whether nobody but `me` and the holders is inside the zone of `node`.
fn zone_free(world: &SwarmWorld, node: u32, zone: f64, me: EntityId, holders: &[Approach]) -> bool {
    let grid = world.res.get::<SpatialGrid>();
    let (nx, ny) = world.res.get::<NavMap>().nodes()[node as usize];
    let mut free = true;
    grid.for_each_near(nx, ny, zone + grid.max_extent, |m| {
        let other = EntityId(grid.ids[m]);
        if !free || other == me || !world.vel.has(other) {
            return;
        }
        if holders.iter().any(|h| h.entity == other) {
            return;
        }
        // Inside (robots waiting at the edge are not).
        if (grid.xs[m] - nx).hypot(grid.ys[m] - ny) < zone - EDGE {
            free = false;
        }
    });
    free
}

/// The lane leaving `node` along `out`: its length up to the next crossing (or its end)
/// and whether that end is a crossing. `None` when no edge leaves that way.
fn lane_out(world: &SwarmWorld, node: u32, out: (f64, f64)) -> Option<(f64, bool)> {
    let nav = world.res.get::<NavMap>();
    let nodes = nav.nodes();
    let (nx, ny) = nodes[node as usize];
    let (mut at, mut length) = (node, 0.0);
    // A lane is a few straight edges between crossings; the bound only guards odd graphs.
    for _ in 0..64 {
        let (ax, ay) = nodes[at as usize];
        let next = nav.successors(at).find(|&m| {
            let (mx, my) = nodes[m as usize];
            let l = (mx - ax).hypot(my - ay);
            l > 1e-9 && ((mx - ax) * out.0 + (my - ay) * out.1) / l > 0.99
        })?;
        let (mx, my) = nodes[next as usize];
        length = (mx - nx) * out.0 + (my - ny) * out.1;
        at = next;
        if nav.is_crossing(at) {
            return Some((length, true));
        }
        if nav.successors(at).next().is_none() {
            return Some((length, false));
        }
    }
    Some((length, false))
}

/// Whether the lane leaving `node` along `out` has a free place for `me` (radius `radius`)
/// beyond the zone: the robots in it up to the next crossing's zone, with the holders
/// already let out that way, are fewer than it holds at the gap robots keep. Robots still
/// moving count too: if the queue ahead stops, a robot let in must still get out of the
/// zone, or it would stand in the crossing and block every movement through it.
fn exit_clear(
    world: &SwarmWorld,
    node: u32,
    zone: f64,
    out: (f64, f64),
    me: EntityId,
    radius: f64,
    holders: &[Approach],
) -> bool {
    let grid = world.res.get::<SpatialGrid>();
    let (nx, ny) = world.res.get::<NavMap>().nodes()[node as usize];
    let keep = world.navigator.get(me).map_or(0.0, |n| n.keep_clear);
    let place = 2.0 * radius + keep;
    // Unknown way out: room for one robot beyond the zone.
    let (length, far_zone) = lane_out(world, node, out).unwrap_or((2.0 * zone + place, true));
    let end = length - if far_zone { zone } else { 0.0 };
    let places = (((end - zone + keep) / place).floor() as usize).max(1);
    let mut taken = holders
        .iter()
        .filter(|h| h.entity != me && h.outward.is_some_and(|o| o.0 * out.0 + o.1 * out.1 > 0.99))
        .count();
    if taken >= places {
        return false;
    }
    let (cx, cy) = (nx + out.0 * length * 0.5, ny + out.1 * length * 0.5);
    grid.for_each_near(cx, cy, length * 0.5 + radius + grid.max_extent, |m| {
        let other = EntityId(grid.ids[m]);
        if taken >= places || other == me || !world.vel.has(other) {
            return;
        }
        if holders.iter().any(|h| h.entity == other) {
            return;
        }
        let (rx, ry) = (grid.xs[m] - nx, grid.ys[m] - ny);
        let ahead = rx * out.0 + ry * out.1;
        let side = (-rx * out.1 + ry * out.0).abs();
        if ahead > zone - EDGE && ahead <= end + EDGE && side < radius + grid.radii[m] {
            taken += 1;
        }
    });
    taken < places
}

/// Another way out of `node` than the one `a` means to take, with room: the first in the
/// graph's order.
fn detour(
    world: &SwarmWorld,
    node: u32,
    zone: f64,
    a: &Approach,
    holders: &[Approach],
) -> Option<u32> {
    let nav = world.res.get::<NavMap>();
    let (nx, ny) = nav.nodes()[node as usize];
    nav.successors(node).find(|&m| {
        let (mx, my) = nav.nodes()[m as usize];
        let l = (mx - nx).hypot(my - ny);
        if l < 1e-9 {
            return false;
        }
        let out = ((mx - nx) / l, (my - ny) / l);
        let same = a.outward.is_some_and(|o| o.0 * out.0 + o.1 * out.1 > 0.99);
        let back = a.inward.0 * out.0 + a.inward.1 * out.1 < -0.99;
        !same && !back && exit_clear(world, node, zone, out, a.entity, a.radius, holders)
    })
}
