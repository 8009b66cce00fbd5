//! The drone swarm: HMR Sim's swarm example, step by step, for any number of drones.
//!
//! * **Map:** an empty 583 × 413 page; for more than 200 drones both sides grow by
//!   `s = √(N / 200)` so the start grid and the target rings keep fitting.
//! * **Drones:** 5 × 5 squares on a grid from (20, 20), 20 apart, 29 per row (`29·s` beyond
//!   200 drones). They start landed (still) and take off on the first frame.
//! * **Targets:** points on rings of radius 25, 50, 75, … around (280, 200) (scaled by `s`);
//!   on each ring a point every 15 units of x, at the ring's upper and lower y, duplicates
//!   removed (7, 13, 20, 27, 33, 40, 47, 53 points on the first eight rings); rings are
//!   added until there are as many points as drones. Each target, in order, goes to the
//!   nearest drone without one (ties: lowest id).
//! * **Controller** (every frame, after movement and collision): a flying drone within 5 of
//!   its target reports success and hovers; a hovering drone corrects toward its target at
//!   no more than ±0.2 per axis and frame. A flying drone's velocity comes from one of two
//!   avoidance models ([`Avoidance`]):
//!   * [`Avoidance::Orca`] (the default): optimal reciprocal collision avoidance
//!     ([`crate::orca`]). The preferred velocity points straight at the target at the
//!     drone's top speed, `2.5·√2` per frame (the speed HMR Sim's drone reaches on a
//!     diagonal), or the whole way when nearer (±0.2 per axis when hovering). HMR Sim caps
//!     each axis at ±2.5 instead, so its drones fly at 45° until level with their target
//!     and then straight along one axis: every drone bound for one column of targets ends
//!     in one file, and those files jammed in the hovering swarm (a 10,000-drone run took
//!     twice as long, a 100,000-drone run nearly three times). Each drone is a disc of radius
//!     `size·√2/2 + 0.1` (the disc around its square), sees its 6 nearest neighbours within
//!     20 units and avoids them over a horizon of 24 frames. Flying and hovering drones both
//!     avoid: half the avoidance each between equals, ¾ for a flying drone towards a
//!     hovering one (so drones at their targets are pushed aside only a little), all of it
//!     towards crashed or idle drones and other colliders. Then a safety step keeps every
//!     pair apart whatever ORCA chose in a crowd: a drone moves towards a neighbour by at
//!     most half of the gap between their discs (all of it towards one that does not move),
//!     so no two discs ever come closer than the sum of their radii. Two things move a
//!     drone besides the velocity the step chose, and both keep its limits: the map's edge
//!     (a move the edge cuts short across one axis could carry the drone nearer a neighbour
//!     along the other; when it would break a limit, the step is taken again with the
//!     edges as limits of their own) and the disturbance (below).
//!     ORCA is reciprocal and local: two drones head-on on one line, or a drone pressing
//!     straight into one that hovers on its way, can stand still for good. A flying drone
//!     that has not come 1 unit closer to its target for a second is stalled and detours:
//!     for a second its preferred velocity turns 45°–90° to its right (the right-hand rule;
//!     after its first stall, to a side drawn each time) — see [`Progress`].
//!     A calm hovering drone, near its target among others near theirs with nothing
//!     flying near, moves as it wants without a look at its neighbours: the targets'
//!     spacing keeps such drones far enough apart that the look would change nothing
//!     ([`DroneController::with_calm`]).
//!   * [`Avoidance::Hmr`]: HMR Sim's heuristic, step by step. The velocity per axis is the
//!     distance to the target capped at ±2.5 per frame, times `1 + U[0,1)`; avoidance tries
//!     13 headings (the velocity turned by 0°, ±15°, … ±90°, never backwards), counts for
//!     each the neighbours (3 × 3 grid cells) that the predicted 5 × 5 box, grown by a
//!     1-unit margin, would overlap, takes the heading with the fewest (first in that order
//!     on ties) and divides the velocity by `1 + overlaps + U[0,1)`. About half of a
//!     200-drone swarm crashes with it. HMR Sim's own example hardly ever reports a crash,
//!     but only because of a bug in HMR Sim: its collision events are answered to requests
//!     that are already stale, so a crash is seldom marked; with that bug (and its
//!     avoidance counting the drone itself) removed, HMR Sim crashes about as often as this
//!     model does.
//! * **Collisions:** the collision system's event stops both drones; they have crashed.
//! * **Disturbance** every 0.125 s: each hovering drone, with probability 0.4, is pushed by
//!   `U[0, 0.1)` per frame along x or y, random sign. The push is added to the velocity the
//!   safety step chose; with ORCA it is cut to what that step's limits leave (a push that
//!   would carry a drone nearer a neighbour than its share of the gap goes only as far as
//!   the share; nearly every push is taken whole). Uncut, pushes added up in a crowd: a
//!   pair whose discs overlap may not come nearer but nothing parts them, so push by push
//!   the overlap grew until two squares touched.
//! * **End:** when every drone has reported (arrived or crashed), if the run is set to end
//!   when its work is done; otherwise at the duration.
//!
//! Random draws use [`simrob_math::hash_u01`] keyed by (seed, drone, frame), so a drone's
//! draws do not depend on the others. Both models read only the state at the start of the
//! frame (poses, last velocities, which drones fly), so a run is the same whatever the
//! number of threads.

use crate::contacts::ContactHandoff;
use crate::ecs::{centre_range, EntityId, Proximity, SwarmPose, SwarmWorld, Velocity};
use crate::event::{Event, Payload, Tag};
use crate::geom::{overlaps, Shape};
use crate::grid::SpatialGrid;
use crate::orca;
use crate::sim::work::WorkLeft;
use crate::sim::{Ctx, System};
use simrob_math::hash_u01;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What a drone is doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DroneState {
    /// On its way (or still on the ground before the first frame).
    #[default]
    Flying,
    /// At its target, holding position.
    Hovering,
    /// Stopped by a collision.
    Crashed,
    /// No target was left for it.
    Idle,
}

impl DroneState {
    /// Whether the ORCA controller's neighbour scan finds this drone's contacts (when it moves
    /// and has a collider): a drone in the air. The collision system leaves exactly these to it.
    #[inline]
    pub fn in_the_air(self) -> bool {
        matches!(self, DroneState::Flying | DroneState::Hovering)
    }
}

/// The drone component: its target and state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Drone {
    /// The point it flies to `(x, y)`, map units.
    pub target: (f64, f64),
    /// What it is doing.
    pub state: DroneState,
    /// Whether it has reported (arrived or crashed).
    pub reported: bool,
    /// How its flight is going: the stall watch that starts a detour ([`Progress`]).
    pub progress: Progress,
    /// With ORCA, whether the velocity the controller last chose for it while hovering left
    /// it less room than a disturbance's push towards a neighbour (or near the map's
    /// edge): only then is a push checked against the safety step's limits, as a push
    /// cannot break a limit with that much room.
    pub tight: bool,
}

/// A flying drone's progress towards its target, and the detour it takes when that
/// progress stalls (ORCA's reciprocal standstills: two drones head-on on one line, a drone
/// pressing straight into one that hovers on its way).
///
/// A drone that has not come [`STALL_PROGRESS`] closer to its target than ever before for
/// [`STALL_FRAMES`] frames is stalled; it then turns its preferred velocity for
/// [`DETOUR_FRAMES`] frames by an angle between 45° and 90°: to its right the first time
/// (the right-hand rule: two drones head-on both turn right and pass), then to a side drawn
/// for each further stall (a drone boxed in tries both ways). The angle and the side are
/// drawn from the run's seed, the drone and the stall's number, so a run stays the same
/// whatever the number of threads.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Progress {
    /// Closest it has come to its target (map units; 0 before the first frame).
    best: f32,
    /// The frame of the last progress.
    since: u32,
    /// While detouring: the frame the detour ends (else 0).
    detour_until: u32,
    /// Stalls so far.
    stalls: u16,
}

/// Frames without progress after which a drone is stalled (1 s at 24 frames/s).
pub const STALL_FRAMES: u32 = 24;
/// The progress (map units closer to the target than ever before) that resets the watch.
pub const STALL_PROGRESS: f32 = 1.0;
/// Frames a detour lasts.
pub const DETOUR_FRAMES: u32 = 24;

impl Progress {
    /// Whether it is detouring now (at `frame`, after [`Progress::watch`]).
    pub fn detouring(&self, frame: u32) -> bool {
        frame < self.detour_until
    }

    /// Stalls so far.
    pub fn stalls(&self) -> u16 {
        self.stalls
    }

    /// Watches a flying drone at `dist` from its target at `frame`; returns the angle
    /// (radians, counter-clockwise) to turn its preferred velocity by (0 when it is not
    /// detouring).
    fn watch(&mut self, frame: u32, dist: f64, seed: u64, drone: u64) -> f64 {
        let dist = dist as f32;
        if self.best == 0.0 || dist < self.best - STALL_PROGRESS {
            self.best = dist;
            self.since = frame;
        } else if frame >= self.detour_until && frame - self.since >= STALL_FRAMES {
            // Stalled: a detour, then a fresh watch from where it ends.
            self.stalls = self.stalls.saturating_add(1);
            self.detour_until = frame + DETOUR_FRAMES;
            self.since = self.detour_until;
            self.best = dist;
        }
        if frame >= self.detour_until {
            return 0.0;
        }
        let k = u64::from(self.stalls) * 2;
        let u = hash_u01(seed, STREAM_DETOUR, drone, k);
        let angle = (45.0 + 45.0 * u).to_radians();
        // The map's y axis points down the page: a turn to the right is counter-clockwise
        // in map coordinates.
        let right = self.stalls <= 1 || hash_u01(seed, STREAM_DETOUR, drone, k + 1) < 0.5;
        if right {
            angle
        } else {
            -angle
        }
    }
}

/// How flying drones avoid each other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Avoidance {
    /// Optimal reciprocal collision avoidance ([`crate::orca`]).
    #[default]
    Orca,
    /// HMR Sim's heuristic: 13 headings, fewest predicted overlaps, slowed by a random
    /// divisor.
    Hmr,
}

impl Avoidance {
    /// The name used in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Avoidance::Orca => "orca",
            Avoidance::Hmr => "hmr",
        }
    }
}

/// An avoidance model's name that is neither `orca` nor `hmr`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown avoidance {0:?}: \"orca\" (reciprocal velocity obstacles) or \"hmr\" (HMR Sim's heuristic)")]
pub struct UnknownAvoidance(pub String);

impl std::str::FromStr for Avoidance {
    type Err = UnknownAvoidance;
    fn from_str(s: &str) -> Result<Self, UnknownAvoidance> {
        match s {
            "orca" => Ok(Avoidance::Orca),
            "hmr" => Ok(Avoidance::Hmr),
            _ => Err(UnknownAvoidance(s.to_string())),
        }
    }
}

/// Parameters of the swarm (defaults: HMR Sim's example, ORCA avoidance).
#[derive(Clone, Debug, PartialEq)]
pub struct SwarmParams {
    /// Number of drones (default 200).
    pub drones: usize,
    /// How flying drones avoid each other.
    pub avoidance: Avoidance,
    /// Side of a drone's square.
    pub size: f64,
    /// Beams of the 12-beam (or other) proximity sensor on each drone; 0 = none.
    pub proximity_beams: u16,
    /// Range of the proximity sensor.
    pub proximity_range: f64,
}

impl Default for SwarmParams {
    fn default() -> Self {
        SwarmParams {
            drones: 200,
            avoidance: Avoidance::Orca,
            size: 5.0,
            proximity_beams: 0,
            proximity_range: 15.0,
        }
    }
}

const BASE_W: f64 = 583.0;
const BASE_H: f64 = 413.0;
const MAX_SPEED: f64 = 2.5;
const HOVER_SPEED: f64 = 0.2;
const ARRIVE: f64 = 5.0;
const MARGIN: f64 = 1.0;
const DISTURB_PERIOD: f64 = 0.125;
const DISTURB_P: f64 = 0.4;
const DISTURB_MAX: f64 = 0.1;
/// ORCA: horizon (frames), neighbours considered, how far they are looked for, and the
/// margin added to the disc around a drone's square.
const ORCA_TAU: f64 = 24.0;
const ORCA_NEIGHBOURS: usize = 6;
/// ORCA's neighbours are those within this distance (map units).
const ORCA_RANGE: f64 = 20.0;
// The scan finds every contact only if two shapes of the largest half extent it takes over
// overlap only within its range (`2·√2·E < ORCA_RANGE`).
const _: () =
    assert!(2.0 * std::f64::consts::SQRT_2 * crate::contacts::HANDOFF_MAX_EXTENT < ORCA_RANGE);
const ORCA_MARGIN: f64 = 0.1;
/// A drone's top speed with ORCA, map units per frame, in any direction: HMR Sim's 2.5 per
/// axis on both axes at once. A flying drone wants to fly at it straight at its target.
const ORCA_MAX_SPEED: f64 = MAX_SPEED * std::f64::consts::SQRT_2;
const STREAM_CTRL: u64 = 1;
const STREAM_DISTURB: u64 = 2;
const STREAM_DETOUR: u64 = 3;

/// The layout for `n` drones: map size, start points and target points.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Map width, map units.
    pub width: f64,
    /// Map height, map units.
    pub height: f64,
    /// Start points `(x, y)`, one per drone, map units: a grid from (20, 20) at 20-unit spacing.
    pub starts: Vec<(f64, f64)>,
    /// Target points `(x, y)` on rings around the centre, map units (at least one per drone).
    pub targets: Vec<(f64, f64)>,
}

/// The map scale for `n` drones (1 up to 200 drones).
pub fn scale(n: usize) -> f64 {
    (n as f64 / 200.0).sqrt().max(1.0)
}

/// Target points on rings around `(cx, cy)` until there are at least `count`.
pub fn ring_targets(cx: f64, cy: f64, count: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(count + 64);
    let mut ring = 1;
    while out.len() < count {
        let r = 25.0 * ring as f64;
        let mut k = 0;
        loop {
            let ox = -r + 15.0 * k as f64;
            if ox > r {
                break;
            }
            let h = (r * r - ox * ox).max(0.0).sqrt();
            out.push((cx + ox, cy - h));
            if h > 0.0 {
                out.push((cx + ox, cy + h));
            }
            k += 1;
        }
        ring += 1;
    }
    out
}

/// The layout of HMR Sim's example for `n` drones.
pub fn layout(n: usize) -> Layout {
    let s = scale(n);
    let per_row = if n <= 200 {
        29
    } else {
        (29.0 * s).round() as usize
    };
    let starts = (0..n)
        .map(|i| {
            (
                20.0 + 20.0 * (i % per_row) as f64,
                20.0 + 20.0 * (i / per_row) as f64,
            )
        })
        .collect();
    Layout {
        width: BASE_W * s,
        height: BASE_H * s,
        starts,
        targets: ring_targets(280.0 * s, 200.0 * s, n),
    }
}

/// A 2-d tree over points with deletion, for "nearest point not yet taken".
struct KdTree {
    pts: Vec<(f64, f64, u32)>,
    alive: Vec<bool>,
    count: Vec<u32>,
    /// Bounding box of each subtree's points, indexed by the subtree's middle.
    bbox: Vec<[f64; 4]>,
    pos_of: Vec<usize>,
}

impl KdTree {
    fn new(points: &[(f64, f64)]) -> Self {
        let mut pts: Vec<(f64, f64, u32)> = points
            .iter()
            .enumerate()
            .map(|(i, &(x, y))| (x, y, i as u32))
            .collect();
        let n = pts.len();
        Self::build(&mut pts, 0);
        let mut pos_of = vec![0; n];
        for (p, q) in pts.iter().enumerate() {
            pos_of[q.2 as usize] = p;
        }
        let mut count = vec![0; n];
        Self::fill(&mut count, 0, n);
        let mut bbox = vec![[0.0; 4]; n];
        Self::boxes(&pts, &mut bbox, 0, n);
        KdTree {
            pts,
            alive: vec![true; n],
            count,
            bbox,
            pos_of,
        }
    }

    fn boxes(pts: &[(f64, f64, u32)], bbox: &mut [[f64; 4]], lo: usize, hi: usize) -> [f64; 4] {
        if lo >= hi {
            return [
                f64::INFINITY,
                f64::INFINITY,
                f64::NEG_INFINITY,
                f64::NEG_INFINITY,
            ];
        }
        let mid = (lo + hi) / 2;
        let l = Self::boxes(pts, bbox, lo, mid);
        let r = Self::boxes(pts, bbox, mid + 1, hi);
        let (x, y, _) = pts[mid];
        let b = [
            l[0].min(r[0]).min(x),
            l[1].min(r[1]).min(y),
            l[2].max(r[2]).max(x),
            l[3].max(r[3]).max(y),
        ];
        bbox[mid] = b;
        b
    }

    fn box_dist2(&self, lo: usize, hi: usize, x: f64, y: f64) -> f64 {
        if lo >= hi {
            return f64::INFINITY;
        }
        let b = self.bbox[(lo + hi) / 2];
        let dx = (b[0] - x).max(0.0).max(x - b[2]);
        let dy = (b[1] - y).max(0.0).max(y - b[3]);
        dx * dx + dy * dy
    }

    fn build(pts: &mut [(f64, f64, u32)], depth: usize) {
        if pts.len() <= 1 {
            return;
        }
        let mid = pts.len() / 2;
        if depth.is_multiple_of(2) {
            pts.select_nth_unstable_by(mid, |a, b| a.0.total_cmp(&b.0).then(a.2.cmp(&b.2)));
        } else {
            pts.select_nth_unstable_by(mid, |a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)));
        }
        let (l, r) = pts.split_at_mut(mid);
        Self::build(l, depth + 1);
        Self::build(&mut r[1..], depth + 1);
    }

    fn fill(count: &mut [u32], lo: usize, hi: usize) {
        if lo >= hi {
            return;
        }
        let mid = (lo + hi) / 2;
        count[mid] = (hi - lo) as u32;
        Self::fill(count, lo, mid);
        Self::fill(count, mid + 1, hi);
    }

    fn remove(&mut self, id: u32) {
        let p = self.pos_of[id as usize];
        if !self.alive[p] {
            return;
        }
        self.alive[p] = false;
        let (mut lo, mut hi) = (0, self.pts.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            self.count[mid] -= 1;
            if p == mid {
                break;
            } else if p < mid {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
    }

    fn nearest(&self, x: f64, y: f64) -> Option<u32> {
        let mut best: Option<(f64, u32)> = None;
        self.search(0, self.pts.len(), x, y, &mut best);
        best.map(|b| b.1)
    }

    fn search(&self, lo: usize, hi: usize, x: f64, y: f64, best: &mut Option<(f64, u32)>) {
        if lo >= hi {
            return;
        }
        let mid = (lo + hi) / 2;
        if self.count[mid] == 0 {
            return;
        }
        if let Some((bd, _)) = *best {
            if self.box_dist2(lo, hi, x, y) > bd {
                return;
            }
        }
        let (px, py, id) = self.pts[mid];
        if self.alive[mid] {
            let d = (px - x) * (px - x) + (py - y) * (py - y);
            if best.is_none_or(|(bd, bid)| d < bd || (d == bd && id < bid)) {
                *best = Some((d, id));
            }
        }
        let (l, r) = ((lo, mid), (mid + 1, hi));
        let (dl, dr) = (
            self.box_dist2(l.0, l.1, x, y),
            self.box_dist2(r.0, r.1, x, y),
        );
        let (first, second) = if dl <= dr { (l, r) } else { (r, l) };
        self.search(first.0, first.1, x, y, best);
        self.search(second.0, second.1, x, y, best);
    }
}

/// For each start point, the index of its target: each target in order goes to the
/// nearest start point without one (ties: lowest index).
pub fn assign_targets(starts: &[(f64, f64)], targets: &[(f64, f64)]) -> Vec<Option<usize>> {
    let mut tree = KdTree::new(starts);
    let mut out = vec![None; starts.len()];
    for (t, &(x, y)) in targets.iter().enumerate() {
        let Some(d) = tree.nearest(x, y) else { break };
        out[d as usize] = Some(t);
        tree.remove(d);
    }
    out
}

/// Creates the drones of HMR Sim's swarm example in `world` (which should be sized with
/// [`layout`]'s width and height). Returns their ids.
pub fn populate(world: &mut SwarmWorld, params: &SwarmParams) -> Vec<EntityId> {
    let lay = layout(params.drones);
    let assignment = assign_targets(&lay.starts, &lay.targets);
    let half = params.size * 0.5;
    let mut ids = Vec::with_capacity(params.drones);
    for (i, &(x, y)) in lay.starts.iter().enumerate() {
        let e = world.spawn("drone");
        world.pose.insert(e, SwarmPose { x, y, theta: 0.0 });
        world.vel.insert(e, Velocity::default());
        world.set_collider(e, Shape::Box { hw: half, hh: half });
        world.stop_on_collision.insert(e, ());
        let (target, state) = match assignment[i] {
            Some(t) => (lay.targets[t], DroneState::Flying),
            None => ((x, y), DroneState::Idle),
        };
        world.custom_mut::<Drone>().insert(
            e,
            Drone {
                target,
                state,
                reported: state == DroneState::Idle,
                progress: Progress::default(),
                tight: true,
            },
        );
        if params.proximity_beams > 0 {
            world.proximity.insert(
                e,
                Proximity::new(params.proximity_beams, params.proximity_range),
            );
        }
        ids.push(e);
    }
    ids
}

/// The drones' controller, their reaction to collisions and the periodic disturbance.
#[derive(Debug)]
pub struct DroneController {
    headings: [(f64, f64); 13],
    half: f64,
    avoidance: Avoidance,
    /// Threads of its own; `None`: the run's ([`crate::sim::SimConfig::threads`]).
    threads: Option<usize>,
    reported: usize,
    total: usize,
    ticks: u64,
    /// ORCA's view of the frame's start (see [`neighbour_view`]), kept between frames to
    /// reuse the memory.
    view: View,
    /// How far from its target a hovering drone is calm ([`calm_within`]), worked out for
    /// the drones' targets whose digest ([`targets_digest`]) is kept beside it.
    calm: Option<(u64, Option<f64>)>,
    /// From this many drones on they are controlled in grid-slot order, once the grid's
    /// [`SpatialGrid::mixing`] is at least `slot_order_mixing`.
    slot_order_from: usize,
    slot_order_mixing: f64,
    /// Whether ORCA's neighbour scan also finds the drones' contacts ([`ContactHandoff`]).
    contacts_in_scan: bool,
    /// Whether calm hovering drones move without a scan ([`calm_within`]).
    calm_on: bool,
    /// Where the number of hovering drone-frames that moved as calm is added up, if asked.
    calm_count: Option<Arc<AtomicU64>>,
    /// When the next disturbance is due (simulated s).
    next_disturbance: f64,
    /// In slot order, each run of slots' drones by part ([`SlotLists`]), kept between
    /// frames to reuse the memory.
    slot_lists: SlotLists,
}

impl DroneController {
    /// The tag of the disturbance's periodic event.
    pub const DISTURBANCE: Tag = Tag::fixed("Disturbance");

    /// A controller for drones of side `size`.
    pub fn new(size: f64) -> Self {
        let mut headings = [(1.0, 0.0); 13];
        for (k, h) in headings.iter_mut().enumerate() {
            let step = k.div_ceil(2) as f64;
            let sign = if k % 2 == 1 { 1.0 } else { -1.0 };
            let a = (sign * step * 15.0).to_radians();
            *h = (a.cos(), a.sin());
        }
        DroneController {
            headings,
            half: size * 0.5,
            avoidance: Avoidance::default(),
            threads: None,
            reported: 0,
            total: 0,
            ticks: 0,
            view: View::default(),
            calm: None,
            slot_order_from: SLOT_ORDER_FROM,
            slot_order_mixing: SLOT_ORDER_MIXING,
            contacts_in_scan: true,
            calm_on: true,
            calm_count: None,
            next_disturbance: DISTURB_PERIOD,
            slot_lists: SlotLists::default(),
        }
    }

    /// Uses at most `threads` threads (the results do not depend on it).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// Controls the drones in the spatial grid's slot order (a drone's neighbours were
    /// just read for the drone before it, so their memory is at hand) in every frame once
    /// there are at least `drones` of them, however mixed they are (`usize::MAX`: never);
    /// below, in entity order. The default is [`DroneController::with_slot_order`]
    /// with [`SLOT_ORDER_FROM`] and [`SLOT_ORDER_MIXING`]. Every drone sees the same inputs
    /// either way: the run does not depend on it.
    pub fn with_slot_order_from(self, drones: usize) -> Self {
        self.with_slot_order(drones, 0.0)
    }

    /// Controls the drones in the spatial grid's slot order in the frames where there are
    /// at least `drones` of them and the grid's [`SpatialGrid::mixing`] (the share of slots
    /// whose drone is far, in entity order, from the previous slot's) is at least `mixing`;
    /// otherwise in entity order (default: [`SLOT_ORDER_FROM`] drones, [`SLOT_ORDER_MIXING`]).
    /// Every drone sees the same inputs either way: the run does not depend on it.
    pub fn with_slot_order(mut self, drones: usize, mixing: f64) -> Self {
        self.slot_order_from = drones;
        self.slot_order_mixing = mixing;
        self
    }

    /// Whether, with ORCA, each drone's neighbour scan also finds its contacts for the
    /// collision system (default: yes), instead of the collision system searching the grid
    /// around each drone again ([`ContactHandoff`]). The contacts, their events and the run
    /// are the same either way.
    pub fn with_contacts_in_scan(mut self, on: bool) -> Self {
        self.contacts_in_scan = on;
        self
    }

    /// Whether a calm hovering drone (one near its target among others near theirs, with no
    /// flying drone within ORCA's range) moves as it wants without ORCA's neighbour scan, as
    /// the scan would have it ([`calm_within`]; default on). The run is the same either way;
    /// off, every hovering drone is scanned.
    pub fn with_calm(mut self, on: bool) -> Self {
        self.calm_on = on;
        self
    }

    /// Adds to `count`, each frame, the hovering drones that moved as calm, without a scan
    /// (for benchmarks and tests: how much of a run takes that way).
    pub fn with_calm_count(mut self, count: Arc<AtomicU64>) -> Self {
        self.calm_count = Some(count);
        self
    }

    /// Flying drones avoid each other with `avoidance`.
    pub fn with_avoidance(mut self, avoidance: Avoidance) -> Self {
        self.avoidance = avoidance;
        self
    }

    /// The disc ORCA and the safety step see around a drone's square (its radius, the
    /// margin added) and the reach of the step's limits ([`orca_reach`]).
    fn disc(&self) -> (f64, f64) {
        let radius = self.half * std::f64::consts::SQRT_2 + ORCA_MARGIN;
        (radius, orca_reach(radius, self.half))
    }

    /// How far from its target a hovering drone may be and still be calm
    /// ([`calm_within`]) for the drones' targets now; the targets' spacing is worked out
    /// again only when their digest changes.
    fn calm_within(&mut self, w: &SwarmWorld) -> Option<f64> {
        let (drones, dp) = match w.custom::<Drone>() {
            Some(c) => c.raw(),
            None => return None,
        };
        let digest = targets_digest(drones, dp);
        let spacing = match self.calm {
            Some((d, spacing)) if d == digest => spacing,
            _ => {
                let targets: Vec<(f64, f64)> = drones
                    .iter()
                    .zip(dp)
                    .filter(|&(d, &p)| has_target(d, p))
                    .map(|(d, _)| d.target)
                    .collect();
                let spacing = Some(target_spacing(&targets, CALM_SPACING_CAP));
                self.calm = Some((digest, spacing));
                spacing
            }
        };
        let grid = w.res.get::<SpatialGrid>();
        calm_within(spacing?, self.disc().0, grid.max_extent)
    }

    /// The avoidance model in use.
    pub fn avoidance(&self) -> Avoidance {
        self.avoidance
    }

    fn report(&mut self, ctx: &mut Ctx, e: EntityId, arrived: bool) {
        self.reported += 1;
        if arrived {
            ctx.stats.arrived += 1;
            ctx.stats.tasks_done += 1;
            ctx.events.emit(Event::about(Tag::ARRIVED, e));
        } else {
            ctx.stats.crashed += 1;
        }
        if self.reported >= self.total {
            WorkLeft::done(ctx, "drones", "every drone has reported");
        }
    }
}

/// Below this many drones the controller runs on one thread.
const PARALLEL_MIN: usize = 4096;

/// Parts of the drones for each thread in the controller's pass and the pushes. Drones
/// differ in cost (a calm hovering drone costs a fraction of a flying one), and as a swarm
/// arrives the drones of one run of ids can be done long before those of another (the
/// bundled swarm's later rows start nearer the targets): with one part a thread, the thread
/// whose part is done waits. With several, a thread that is done takes the next part:
/// 100,000 drones to the end on two threads took 0.262–0.282 wall s per simulated s with 8
/// and 0.269–0.272 with 16, against 0.308–0.312 with one (the same run).
const PARTS_PER_THREAD: usize = 16;

/// The fewest drones in a part (when there are several): a pool's hand-off costs a few
/// microseconds, as much as some dozens of calm hovering drones.
const PART_MIN: usize = 1024;

/// How many drones go in a part of `n` for `threads` threads (one part below
/// [`PARALLEL_MIN`]; at least [`PART_MIN`]): a power of two, so that a drone's part is its
/// id shifted.
fn part_size(n: usize, threads: usize) -> usize {
    if threads <= 1 || n < PARALLEL_MIN {
        n.max(1).next_power_of_two()
    } else {
        n.div_ceil(threads * PARTS_PER_THREAD)
            .max(PART_MIN)
            .next_power_of_two()
    }
}

/// From this many drones on the controller goes through them in grid-slot order once they
/// have mixed ([`SLOT_ORDER_MIXING`]; [`DroneController::with_slot_order`]). Below, a swarm's
/// data fits in the processor's last-level cache (about 150 bytes a drone: 100,000 drones fit
/// in 32 MiB), where the order matters little: at 100,000 drones an earlier slot order (a
/// per-slot buffer copied back) measured 10–45 % slower.
pub const SLOT_ORDER_FROM: usize = 1 << 18;

/// The grid's [`SpatialGrid::mixing`] from which a large swarm is controlled in slot order.
/// The drones start on a grid in id order (mixing near 0: entity order already walks the
/// grid cell by cell); at 1,000,000 drones mixing reaches 0.14 at 10 simulated s, 0.50 at
/// 50 s and 0.74 at 110 s. Measured there by switching the order every 10 simulated s in
/// one run (2 threads): slot order cost 19 % more at mixing 0.14, 3 % more at 0.36, and
/// about the same or less from 0.5 on (−2 % at 0.50, +1 % at 0.60, −5 % at 0.67).
pub const SLOT_ORDER_MIXING: f64 = 0.5;

/// Drones controlled together in grid-slot order (see `Step::control_slots`).
const SLOT_BATCH: usize = 64;

/// What one frame of the controller reads.
struct Step<'a> {
    fps: f64,
    seed: u64,
    frame: u64,
    headings: &'a [(f64, f64); 13],
    half: f64,
    grid: &'a SpatialGrid,
    poses: &'a [SwarmPose],
    pp: &'a [bool],
    avoidance: Avoidance,
    /// ORCA: each grid slot's velocity at the start of the frame (per frame) and what it
    /// is (`MODE_*`), in the grid's order, so a neighbour scan reads contiguous memory.
    slot_vel: &'a [(f64, f64)],
    slot_mode: &'a [u8],
    /// How many of the slots before each slot hold no calm drone ([`calm_within`]; every
    /// slot without that bound), one more than the slots: a run of slots is all calm when
    /// its two ends read the same.
    unsettled_before: &'a [u32],
    /// The square of [`calm_within`]'s distance (negative without one).
    calm_within2: f64,
    /// Whether the scan finds the contacts of the moving drones it scans
    /// ([`ContactHandoff`]), and the colliders (by entity) for it.
    contacts: bool,
    shapes: &'a [Shape],
    sp: &'a [bool],
    /// ORCA, worked out once a frame: the squared distance within which two shapes of the
    /// grid may overlap (√8 times the largest half extent, with a margin for rounding), a
    /// drone's radius, and the reach of the safety step's limits.
    contact_reach2: f64,
    radius: f64,
    reach: f64,
    /// The range `(x0, x1, y0, y1)` in which the movement system keeps a drone's centre
    /// (the map less half a drone on each side).
    edges: (f64, f64, f64, f64),
    /// Whether a disturbance is due at the start of the next frame: then each hovering
    /// drone's room for its push is worked out ([`Drone::tight`]).
    room_check: bool,
}

/// What a part of the controller's frame found: the drones that arrived and the contacts
/// (pairs, smaller id first) of the drones it scanned.
#[derive(Default)]
struct Found {
    arrivals: Vec<EntityId>,
    pairs: Vec<(u32, u32)>,
    /// Hovering drones that moved as calm ([`Step::calm_here`]).
    calm: u64,
}

impl Found {
    /// What a part found: `arrivals`, and the contacts and calm drones its `work` counted.
    #[inline(always)]
    fn of(arrivals: Vec<EntityId>, work: Work) -> Found {
        Found {
            arrivals,
            pairs: work.orca_near.pairs,
            calm: work.orca_near.calm,
        }
    }

    fn join(parts: impl IntoIterator<Item = Found>) -> Found {
        let mut all = Found::default();
        for p in parts {
            all.arrivals.extend(p.arrivals);
            all.pairs.extend(p.pairs);
            all.calm += p.calm;
        }
        all
    }
}

impl Step<'_> {
    /// Controls drones `first..first + drones.len()` in place, in entity order; returns
    /// those that arrived.
    fn control(
        &self,
        first: usize,
        drones: &mut [Drone],
        dp: &[bool],
        vels: &mut [Velocity],
        vp: &[bool],
    ) -> Found {
        let mut work = Work::default();
        let mut arrivals = Vec::new();
        let rows = drones
            .iter_mut()
            .zip(vels.iter_mut())
            .zip(dp.iter().zip(vp));
        for (k, ((d, v), (&has_drone, &has_vel))) in rows.enumerate() {
            let i = first + k;
            self.listed(i, has_drone && has_vel, d, v, &mut work, &mut arrivals);
        }
        Found::of(arrivals, work)
    }

    /// Controls drones `first..first + drones.len()` (part `part` of `lists`) in place, in
    /// grid-slot order (so each drone's neighbour scan reads memory next to the last one's
    /// once the drones have mixed): goes through the part's slots, run by run of the grid,
    /// [`SLOT_BATCH`] at a time (their states and velocities copied out together first:
    /// reads from all over memory that the processor makes side by side, then copied back),
    /// then, in entity order, those of the part that are not in the grid (no collider).
    /// Returns those that arrived (in the order controlled).
    #[allow(clippy::too_many_arguments)]
    fn control_slots(
        &self,
        lists: &SlotLists,
        part: usize,
        first: usize,
        drones: &mut [Drone],
        dp: &[bool],
        vels: &mut [Velocity],
        vp: &[bool],
    ) -> Found {
        let mut work = Work::default();
        let mut arrivals = Vec::new();
        let len = drones.len();
        // Which drones of the part were met in the grid.
        let mut met = vec![false; len];
        // The batch: (slot, drone of the part), and their copies.
        let mut batch = Vec::with_capacity(SLOT_BATCH);
        let mut copies = Vec::with_capacity(SLOT_BATCH);
        let mut part_of = Part {
            first,
            drones,
            dp,
            vels,
            vp,
        };
        for &(m, k) in lists.runs.iter().flat_map(|run| run.get(part)).flatten() {
            if k as usize >= len {
                continue;
            }
            met[k as usize] = true;
            batch.push((m, k));
            if batch.len() == SLOT_BATCH {
                self.batch(&mut part_of, &batch, &mut copies, &mut work, &mut arrivals);
                batch.clear();
            }
        }
        self.batch(&mut part_of, &batch, &mut copies, &mut work, &mut arrivals);
        let rest = part_of
            .drones
            .iter_mut()
            .zip(part_of.vels.iter_mut())
            .zip(met);
        for (k, ((d, v), met)) in rest.enumerate() {
            self.listed(
                first + k,
                !met && dp[k] && vp[k],
                d,
                v,
                &mut work,
                &mut arrivals,
            );
        }
        Found::of(arrivals, work)
    }

    /// Controls drone `i` (state `d`, velocity `v`) at its pose when `listed` (it has a
    /// drone and a velocity, and has not been controlled already) and it has a pose; adds it
    /// to `arrivals` when it arrived.
    #[inline(always)]
    fn listed(
        &self,
        i: usize,
        listed: bool,
        d: &mut Drone,
        v: &mut Velocity,
        work: &mut Work,
        arrivals: &mut Vec<EntityId>,
    ) {
        if listed
            && self.pp.get(i).copied().unwrap_or(false)
            && self.one(i, self.poses[i], d, v, work)
        {
            arrivals.push(EntityId(i as u32));
        }
    }

    /// Controls a batch of a part's drones in the grid (`(slot, drone of the part)`): their
    /// states and velocities copied out together first, then controlled, then copied back.
    fn batch(
        &self,
        part: &mut Part<'_>,
        batch: &[(u32, u32)],
        copies: &mut Vec<(Drone, Velocity, bool)>,
        work: &mut Work,
        arrivals: &mut Vec<EntityId>,
    ) {
        let grid = self.grid;
        copies.clear();
        copies.extend(batch.iter().map(|&(_, k)| {
            let k = k as usize;
            (part.drones[k], part.vels[k], part.dp[k] && part.vp[k])
        }));
        for (&(m, k), (d, v, ok)) in batch.iter().zip(copies.iter_mut()) {
            if !*ok {
                continue;
            }
            // In the grid, so it has a pose: the grid's copy of it, beside its neighbours'.
            let m = m as usize;
            let p = SwarmPose {
                x: grid.xs[m],
                y: grid.ys[m],
                theta: 0.0,
            };
            let i = part.first + k as usize;
            if self.one(i, p, d, v, work) {
                arrivals.push(EntityId(i as u32));
            }
        }
        for (&(_, k), (d, v, ok)) in batch.iter().zip(copies.iter()) {
            if *ok {
                part.drones[k as usize] = *d;
                part.vels[k as usize] = *v;
            }
        }
    }

    /// Controls drone `i` (state `d`, velocity `vel`, both updated); true when it arrived
    /// this frame.
    fn one(
        &self,
        i: usize,
        p: SwarmPose,
        d: &mut Drone,
        vel: &mut Velocity,
        work: &mut Work,
    ) -> bool {
        let (fps, seed, frame, grid) = (self.fps, self.seed, self.frame, self.grid);
        let reach = self.half + MARGIN + self.half;
        let Work {
            near,
            orca_near,
            scratch,
        } = work;
        // Its velocity at the start of the frame, per frame.
        let own = (vel.x / fps, vel.y / fps);
        // A drone moving at the start of the frame (as the collision system sees it) looks
        // for its contacts in ORCA's scan.
        orca_near.probe = self.contacts
            && vel.is_moving()
            && self.sp.get(i).copied().unwrap_or(false)
            && d.state.in_the_air();
        let (dx, dy) = (d.target.0 - p.x, d.target.1 - p.y);
        match d.state {
            DroneState::Crashed | DroneState::Idle => return false,
            DroneState::Hovering => {
                *vel = self.hover(i, (p, own), (dx, dy), orca_near, scratch, &mut d.tight);
                return false;
            }
            DroneState::Flying => {}
        }
        if dx * dx + dy * dy < ARRIVE * ARRIVE {
            d.state = DroneState::Hovering;
            d.reported = true;
            *vel = self.hover(i, (p, own), (dx, dy), orca_near, scratch, &mut d.tight);
            return true;
        }
        if self.avoidance == Avoidance::Orca {
            let mut preferred = straight_at(dx, dy, ORCA_MAX_SPEED);
            let turn = d.progress.watch(
                frame.min(u64::from(u32::MAX)) as u32,
                (dx * dx + dy * dy).sqrt(),
                seed,
                i as u64,
            );
            if turn != 0.0 {
                let (s, c) = turn.sin_cos();
                preferred = (
                    preferred.0 * c - preferred.1 * s,
                    preferred.0 * s + preferred.1 * c,
                );
            }
            let v = self.orca(i, (p, own), MODE_FLYING, preferred, orca_near, scratch);
            *vel = Velocity {
                x: v.0 * fps,
                y: v.1 * fps,
                w: 0.0,
            };
            return false;
        }
        let u1 = hash_u01(seed, STREAM_CTRL, i as u64, frame * 3);
        let u2 = hash_u01(seed, STREAM_CTRL, i as u64, frame * 3 + 1);
        let u3 = hash_u01(seed, STREAM_CTRL, i as u64, frame * 3 + 2);
        let vx = dx.clamp(-MAX_SPEED, MAX_SPEED) * (1.0 + u1);
        let vy = dy.clamp(-MAX_SPEED, MAX_SPEED) * (1.0 + u2);
        // Neighbours (3 × 3 cells) that some heading could reach.
        let lim = reach + (vx * vx + vy * vy).sqrt();
        near.clear();
        grid.for_each_near(p.x, p.y, grid.cell_size(), |m| {
            if grid.ids[m] as usize != i {
                let (ox, oy) = (grid.xs[m] - p.x, grid.ys[m] - p.y);
                if ox.abs() < lim && oy.abs() < lim {
                    near.push((ox, oy));
                }
            }
        });
        let (mut best_v, mut best_n) = ((vx, vy), 0usize);
        if !near.is_empty() {
            best_n = usize::MAX;
            for &(c, s) in self.headings {
                let (hx, hy) = (vx * c - vy * s, vx * s + vy * c);
                let count = near
                    .iter()
                    .filter(|&&(ox, oy)| (ox - hx).abs() < reach && (oy - hy).abs() < reach)
                    .count();
                if count < best_n {
                    best_n = count;
                    best_v = (hx, hy);
                    if count == 0 {
                        break;
                    }
                }
            }
        }
        let div = 1.0 + best_n as f64 + u3;
        *vel = Velocity {
            x: best_v.0 / div * fps,
            y: best_v.1 / div * fps,
            w: 0.0,
        };
        false
    }

    /// A hovering drone's velocity: a slow correction towards its target; with ORCA it
    /// still makes way for others, and `tight` says whether a disturbance's push could
    /// break one of the safety step's limits ([`Drone::tight`]).
    fn hover(
        &self,
        i: usize,
        at: (SwarmPose, (f64, f64)),
        to_target: (f64, f64),
        near: &mut OrcaScratch,
        scratch: &mut orca::Scratch,
        tight: &mut bool,
    ) -> Velocity {
        let preferred = (
            to_target.0.clamp(-HOVER_SPEED, HOVER_SPEED),
            to_target.1.clamp(-HOVER_SPEED, HOVER_SPEED),
        );
        let v = if self.avoidance == Avoidance::Orca {
            if self.calm_here(at.0, to_target, preferred) {
                // What the scan would find: no limit that binds or leaves less room than a
                // push, no contact (see `calm_within`).
                near.limits.clear();
                near.calm += 1;
                if self.room_check {
                    *tight = false;
                }
                return Velocity {
                    x: preferred.0 * self.fps,
                    y: preferred.1 * self.fps,
                    w: 0.0,
                };
            }
            let v = self.orca(i, at, MODE_HOVERING, preferred, near, scratch);
            if self.room_check {
                *tight = self.tight(at.0, v, &near.limits);
            }
            v
        } else {
            preferred
        };
        Velocity {
            x: v.0 * self.fps,
            y: v.1 * self.fps,
            w: 0.0,
        }
    }

    /// Whether a hovering drone at `p`, `to_target` from its target, that would rather move
    /// `v` (per frame) is calm among calm drones: it is at most [`calm_within`] from
    /// its target, every drone in the grid cells within [`ORCA_RANGE`] is calm (in the
    /// frame's view), and the move leaves it a push's room from the map's edges. Then ORCA's
    /// scan would find no flying drone, no limit of the safety step that `v` comes within a
    /// push of (so the step keeps `v` and no push is cut) and no contact
    /// ([`calm_within`]): the drone moves at `v`, as the scan would have it.
    #[inline]
    fn calm_here(&self, p: SwarmPose, to_target: (f64, f64), v: (f64, f64)) -> bool {
        if to_target.0 * to_target.0 + to_target.1 * to_target.1 > self.calm_within2 {
            return false;
        }
        if !self.push_room_at_edges(p, v) {
            return false;
        }
        // Two reads a row's run, however many drones it holds.
        let before = self.unsettled_before;
        let mut all = true;
        self.grid.for_each_run_near(p.x, p.y, ORCA_RANGE, |run| {
            all &= run.end < before.len() && before[run.start] == before[run.end];
        });
        all
    }

    /// Whether a drone at `p` moving `v` (per frame) is left a push's room ([`DISTURB_MAX`])
    /// from the map's edges on every side: then the edge cannot cut its pushed move short.
    #[inline]
    fn push_room_at_edges(&self, p: SwarmPose, v: (f64, f64)) -> bool {
        let (x0, x1, y0, y1) = self.edges;
        let (x, y) = (p.x + v.0, p.y + v.1);
        let room = DISTURB_MAX + 1e-9;
        x - room >= x0 && x + room <= x1 && y - room >= y0 && y + room <= y1
    }

    /// Whether a push of less than [`DISTURB_MAX`] (per frame, along an axis) on a drone at
    /// `p` moving at `v` (per frame) could break one of `limits`: some limit leaves it less
    /// room than that, or the map's edge could cut the pushed move short (only with a
    /// limit at all: the edge alone harms nothing).
    #[inline]
    fn tight(&self, p: SwarmPose, v: (f64, f64), limits: &[((f64, f64), f64)]) -> bool {
        if limits.is_empty() {
            return false;
        }
        let room = DISTURB_MAX + 1e-9;
        !self.push_room_at_edges(p, v)
            || limits
                .iter()
                .any(|&(u, b)| b.max(0.0) - (v.0 * u.0 + v.1 * u.1) < room)
    }

    /// ORCA's velocity (per frame) for drone `i` at `p` flying at `own_vel` (per frame), in
    /// `mode` ([`MODE_FLYING`] or [`MODE_HOVERING`]), that would rather fly at `preferred`;
    /// then the safety step.
    fn orca(
        &self,
        i: usize,
        (p, own_vel): (SwarmPose, (f64, f64)),
        mode: u8,
        preferred: (f64, f64),
        work: &mut OrcaScratch,
        scratch: &mut orca::Scratch,
    ) -> (f64, f64) {
        let OrcaScratch {
            limits,
            neighbours,
            probe,
            pairs,
            found,
            calm: _,
        } = work;
        let probe = *probe;
        let (contact_reach2, radius, reach) = (self.contact_reach2, self.radius, self.reach);
        let grid = self.grid;
        let max_speed = ORCA_MAX_SPEED;
        // One pass over the grid cells around: the safety step's limits, from every
        // neighbour that one frame could bring into contact, in scan order; whether any
        // neighbour within range flies; and the nearest few, ties by id (the same set
        // whatever the order of the scan), kept sorted by insertion.
        limits.clear();
        let mut any_flying = false;
        let mut best = [(0.0, 0, 0); ORCA_NEIGHBOURS];
        let mut count = 0;
        let (px, py) = (p.x, p.y);
        // The columns cut to one length, so a row's run is checked once against it.
        let n = grid.ids.len();
        let (ids, xs, ys, modes) = (
            &grid.ids[..],
            &grid.xs[..n],
            &grid.ys[..n],
            &self.slot_mode[..n],
        );
        let range2 = ORCA_RANGE * ORCA_RANGE;
        let me = i as u32;
        grid.for_each_run_near(px, py, ORCA_RANGE, |run| {
            // The row's run in chunks: first the entries within range (not itself) listed
            // without a branch on each (which way the range test goes is a coin toss for the
            // processor), then those few taken in the scan's order.
            let mut from = run.start;
            while from < run.end {
                let to = run.end.min(from + SCAN_CHUNK);
                let mut n_found = 0;
                let row = ids[from..to].iter().zip(&xs[from..to]).zip(&ys[from..to]);
                for (k, ((&j, &x), &y)) in row.enumerate() {
                    let d2 = (x - px).powi(2) + (y - py).powi(2);
                    // (A NaN distance is out of range, as it is for `<`.)
                    found[n_found] = (k as u32, d2);
                    n_found += usize::from((d2 < range2) & (j != me));
                }
                for &(k, d2) in &found[..n_found] {
                    let m = from + k as usize;
                    let (j, x, y, other) = (ids[m], xs[m], ys[m], modes[m]);
                    let (ox, oy) = (x - px, y - py);
                    // Its contacts, as the collision system finds them (every shape in the
                    // grid is small enough to overlap only within range, see
                    // `HANDOFF_MAX_EXTENT`). Two shapes of half extents at most E overlap only
                    // closer than √8·E (the squared bound has a margin for rounding), so the
                    // shapes are read only then.
                    if probe
                        && d2 < contact_reach2
                        && overlaps(self.shapes[i], px, py, grid.shapes[m], x, y)
                    {
                        let (a, b) = (i as u32, j);
                        pairs.push((a.min(b), a.max(b)));
                    }
                    any_flying |= other == MODE_FLYING;
                    if d2 < reach * reach && d2 > 0.0 {
                        let d = d2.sqrt();
                        let u = (ox / d, oy / d);
                        let still = (other == MODE_STILL).then(|| grid.radii[m]);
                        limits.push((u, share_of_gap(d, radius, still)));
                    }
                    keep_nearest(&mut best, &mut count, (d2, j, m));
                }
                from = to;
            }
        });
        let near = &best[..count];
        // A hovering drone with no flying one near: the safety step alone keeps it clear.
        if mode == MODE_HOVERING && !any_flying {
            let safe = safety_step(preferred, limits);
            if self.inside_edges(p, safe) {
                return safe;
            }
            return self.within_walls(i, p, preferred, safe, limits);
        }
        // No drone within range (so no half-plane and no limit): ORCA keeps the preferred
        // velocity within the speed limit, and the safety step leaves it.
        if count == 0 {
            return orca::free_velocity(preferred, max_speed);
        }
        neighbours.clear();
        let (vels, radii) = (&self.slot_vel[..n], &grid.radii[..n]);
        for &(_, _, m) in near {
            let other = modes[m];
            neighbours.push(orca::Neighbour {
                pos: (xs[m], ys[m]),
                vel: vels[m],
                radius: if other == MODE_STILL {
                    radii[m] + ORCA_MARGIN
                } else {
                    radius
                },
                responsibility: responsibility(mode, other),
            });
        }
        let agent = orca::Agent {
            pos: (p.x, p.y),
            vel: own_vel,
            radius,
            max_speed,
        };
        let v = orca::velocity(&agent, preferred, neighbours, ORCA_TAU, 1.0, scratch);
        let safe = safety_step(v, limits);
        if self.inside_edges(p, safe) {
            return safe;
        }
        self.within_walls(i, p, v, safe, limits)
    }

    /// Whether the move `v` from `p` stays within the edges (nearly always): then the edge
    /// stops nothing and [`Step::within_walls`] has nothing to do.
    #[inline]
    fn inside_edges(&self, p: SwarmPose, v: (f64, f64)) -> bool {
        let (x0, x1, y0, y1) = self.edges;
        (x0..=x1).contains(&(p.x + v.0)) && (y0..=y1).contains(&(p.y + v.1))
    }

    /// The safety step's velocity `safe` for drone `i` at `p` (chosen from `wanted` under
    /// `limits`), kept by the map's edges too: the movement system stops a drone at the
    /// edge, and a move cut short across one axis can carry it nearer a neighbour along the
    /// other than its share of the gap (a drone sliding along a wall towards a neighbour
    /// while the edge takes away the part of its move that led away from it). Only when
    /// the move the edge leaves would break a limit, the step is taken again with the
    /// edges as limits of their own; otherwise `safe` is kept as it is. (The edges are
    /// those of a drone of the controller's size, as its disc is.)
    #[cold]
    fn within_walls(
        &self,
        i: usize,
        p: SwarmPose,
        wanted: (f64, f64),
        safe: (f64, f64),
        limits: &mut Vec<((f64, f64), f64)>,
    ) -> (f64, f64) {
        if limits.is_empty() || !self.sp.get(i).copied().unwrap_or(false) {
            return safe;
        }
        let (x0, x1, y0, y1) = self.edges;
        let moved = (
            (p.x + safe.0).clamp(x0, x1) - p.x,
            (p.y + safe.1).clamp(y0, y1) - p.y,
        );
        if moved == safe || within_limits(moved, limits) {
            return safe;
        }
        limits.extend([
            ((1.0, 0.0), x1 - p.x),
            ((-1.0, 0.0), p.x - x0),
            ((0.0, 1.0), y1 - p.y),
            ((0.0, -1.0), p.y - y0),
        ]);
        safety_step(wanted, limits)
    }
}

/// ORCA's view of the frame's start ([`neighbour_view`]).
#[derive(Debug, Default)]
struct View {
    /// Each grid slot's velocity (per frame).
    slot_vel: Vec<(f64, f64)>,
    /// What each grid slot is (`MODE_*`).
    slot_mode: Vec<u8>,
    /// How many slots before each grid slot hold no calm drone ([`calm_within`]), one more
    /// than the slots (the last: all of them).
    unsettled_before: Vec<u32>,
    /// Each entity's `MODE_*` (by entity id) and [`CALM_BIT`], the first step of the view.
    mode_of: Vec<u8>,
}

impl View {
    fn clear(&mut self) {
        self.slot_vel.clear();
        self.slot_mode.clear();
        self.unsettled_before.clear();
    }
}

/// ORCA's view of the frame's start in the grid's slot order: each slot's velocity (per
/// frame; zero without one), what it is (`MODE_*`) and whether it is a calm drone (a
/// hovering one at most `calm_within` from its target). Built by gathering once per slot
/// (on `threads` threads for a large grid; each slot depends on itself alone), so a
/// neighbour scan then reads these beside the grid's positions instead of looking every
/// neighbour up by entity id.
fn neighbour_view(
    w: &SwarmWorld,
    fps: f64,
    threads: usize,
    calm_within: Option<f64>,
    view: &mut View,
) {
    let View {
        slot_vel,
        slot_mode,
        unsettled_before,
        mode_of,
    } = view;
    let grid = w.res.get::<SpatialGrid>();
    let (vels, vp) = w.vel.raw();
    let (poses, pp) = w.pose.raw();
    let (drones, dp) = match w.custom::<Drone>() {
        Some(c) => c.raw(),
        None => (&[][..], &[][..]),
    };
    // Each drone's mode, in entity order first (one pass over the drones in order, a byte
    // each), so that the pass in slot order reads a byte from a small array instead of a
    // whole drone from anywhere in memory once the drones have mixed. The byte's top bit
    // says whether it is calm ([`calm_within`]).
    let calm2 = calm_within.map_or(-1.0, |d| d * d);
    let mode = |i: usize, d: &Drone, present: bool| match (d.state, present) {
        (DroneState::Flying, true) => MODE_FLYING,
        (DroneState::Hovering, true) => {
            let calm = match (poses.get(i), pp.get(i)) {
                (Some(p), Some(true)) => {
                    (d.target.0 - p.x).powi(2) + (d.target.1 - p.y).powi(2) <= calm2
                }
                _ => false,
            };
            MODE_HOVERING | if calm { CALM_BIT } else { 0 }
        }
        _ => MODE_STILL,
    };
    let ents = drones.len().min(dp.len());
    mode_of.resize(ents, MODE_STILL);
    let modes = |first: usize, out: &mut [u8]| {
        let drones = drones[first..].iter().zip(&dp[first..]);
        for (k, (m, (d, &p))) in out.iter_mut().zip(drones).enumerate() {
            *m = mode(first + k, d, p);
        }
    };
    if threads <= 1 || ents < PARALLEL_MIN {
        modes(0, mode_of);
    } else {
        let chunk = ents.div_ceil(threads);
        let parts = mode_of.chunks_mut(chunk).enumerate().collect();
        crate::par::each(threads, parts, |(c, out)| modes(c * chunk, out));
    }
    let mode_of = &mode_of[..];
    let n = grid.ids.len();
    slot_vel.resize(n, (0.0, 0.0));
    slot_mode.resize(n, MODE_STILL);
    // Each slot's own count first (1: not calm) one place on, then summed.
    unsettled_before.resize(n + 1, 0);
    let fill = |ids: &[u32], sv: &mut [(f64, f64)], sm: &mut [u8], sc: &mut [u32]| {
        for (((&j, v), m), c) in ids.iter().zip(sv).zip(sm).zip(sc) {
            let j = j as usize;
            *v = if vp.get(j).copied().unwrap_or(false) {
                (vels[j].x / fps, vels[j].y / fps)
            } else {
                (0.0, 0.0)
            };
            let mode = mode_of.get(j).copied().unwrap_or(MODE_STILL);
            *m = mode & !CALM_BIT;
            *c = u32::from(mode & CALM_BIT == 0);
        }
    };
    if threads <= 1 || n < PARALLEL_MIN {
        fill(&grid.ids, slot_vel, slot_mode, &mut unsettled_before[1..]);
    } else {
        let chunk = n.div_ceil(threads);
        let parts = grid
            .ids
            .chunks(chunk)
            .zip(slot_vel.chunks_mut(chunk))
            .zip(slot_mode.chunks_mut(chunk))
            .zip(unsettled_before[1..].chunks_mut(chunk))
            .collect();
        crate::par::each(threads, parts, |(((ids, sv), sm), sc)| {
            fill(ids, sv, sm, sc)
        });
    }
    unsettled_before[0] = 0;
    let mut sum = 0;
    for c in unsettled_before.iter_mut() {
        sum += *c;
        *c = sum;
    }
}

/// A thread's part of the drones (entities `first..first + drones.len()`).
struct Part<'a> {
    first: usize,
    drones: &'a mut [Drone],
    dp: &'a [bool],
    vels: &'a mut [Velocity],
    vp: &'a [bool],
}

/// The grid's slots of each part's drones, for the controller in slot order: the grid's
/// slots split into runs (one a thread, listed on the threads), and for each run and part
/// `(slot, drone of the part)` in slot order. A part's slots, run after run, are in slot
/// order: each part goes through its own drones' slots alone instead of through the whole
/// grid.
#[derive(Debug, Default)]
struct SlotLists {
    runs: Vec<Vec<Vec<(u32, u32)>>>,
}

impl SlotLists {
    /// Lists the slots of `ids` (the grid's entity ids, by slot) for `parts` parts of
    /// `chunk` drones (a power of two), in `threads` runs of slots; ids of no part are left
    /// out.
    fn fill(&mut self, ids: &[u32], chunk: usize, parts: usize, threads: usize) {
        let threads = threads.max(1);
        let shift = chunk.trailing_zeros();
        self.runs.resize_with(threads, Vec::new);
        let span = ids.len().div_ceil(threads).max(1);
        let list = |(r, lists): (usize, &mut Vec<Vec<(u32, u32)>>)| {
            lists.resize_with(parts, Vec::new);
            lists.truncate(parts);
            for l in lists.iter_mut() {
                l.clear();
            }
            let from = (r * span).min(ids.len());
            let to = (from + span).min(ids.len());
            for (m, &id) in (from..to).zip(&ids[from..to]) {
                let p = (u64::from(id) >> shift) as usize;
                if let Some(l) = lists.get_mut(p) {
                    l.push((m as u32, (id as usize & (chunk - 1)) as u32));
                }
            }
        };
        let runs: Vec<_> = self.runs.iter_mut().enumerate().collect();
        if threads <= 1 {
            runs.into_iter().for_each(list);
        } else {
            crate::par::each(threads, runs, list);
        }
    }
}

/// Per-thread working space of the controller.
#[derive(Default)]
struct Work {
    /// HMR avoidance: neighbours' offsets.
    near: Vec<(f64, f64)>,
    orca_near: OrcaScratch,
    scratch: orca::Scratch,
}

/// Per-thread working space of the ORCA controller.
#[derive(Default)]
struct OrcaScratch {
    /// The safety step's limits.
    limits: Vec<((f64, f64), f64)>,
    neighbours: Vec<orca::Neighbour>,
    /// Whether the scan finds the scanning drone's contacts too (its collider is
    /// `Step::shapes[i]`).
    probe: bool,
    /// Contacts found (pairs, smaller id first).
    pairs: Vec<(u32, u32)>,
    /// A chunk's entries within range: place in the chunk, squared distance.
    found: [(u32, f64); SCAN_CHUNK],
    /// Hovering drones that moved as calm, without a scan.
    calm: u64,
}

/// How many of a row's entries ORCA's scan tests for range before taking those within it.
const SCAN_CHUNK: usize = 32;

/// Keeps `best[..count]` the nearest candidates `(squared distance, id, grid slot)` seen so
/// far, at most `K`, sorted by distance then id: `cand` is inserted in its place (most
/// candidates are farther than the last once there are `K`, and cost one comparison). The
/// same few, in the same order, as sorting every candidate by (distance, id) and keeping the
/// first `K`, whatever order they come in.
#[inline]
fn keep_nearest<const K: usize>(
    best: &mut [(f64, u32, usize); K],
    count: &mut usize,
    cand: (f64, u32, usize),
) {
    let closer =
        |a: (f64, u32, usize), b: (f64, u32, usize)| a.0 < b.0 || (a.0 == b.0 && a.1 < b.1);
    if *count == K {
        if K == 0 || !closer(cand, best[K - 1]) {
            return;
        }
    } else {
        *count += 1;
    }
    let mut at = *count - 1;
    while at > 0 && closer(cand, best[at - 1]) {
        best[at] = best[at - 1];
        at -= 1;
    }
    best[at] = cand;
}

/// The spacing of targets beyond which [`target_spacing`] looks no further.
const CALM_SPACING_CAP: f64 = 32.0;

/// How far from its target a hovering drone may be and still be calm, when no two drones'
/// targets are nearer than `spacing`, for drones of disc `radius` among colliders of half
/// extent at most `max_extent`; `None` when the targets are too near for any.
///
/// Two calm drones are then at least `spacing − 2·d` apart, where `d` is what this returns,
/// at least the margin [`CALM_MARGIN`] more than all of the following need:
/// * the safety step's limit towards the other leaves at least `HOVER_SPEED·√2` (the
///   fastest a hovering drone wants to move) plus a push ([`DISTURB_MAX`]): half the gap
///   between the discs, so the centres at least `2·radius + 2·(HOVER_SPEED·√2 + DISTURB_MAX)`
///   apart. No limit then binds, the step keeps the velocity and no push is cut;
/// * no contact: two shapes of half extent at most `max_extent` touch only nearer than
///   `2·√2·max_extent`.
///
/// A drone among calm drones alone (none other in the grid within ORCA's range) is in
/// neither ORCA's view of a flying drone nor a still one: it moves as it wants
/// ([`Step::calm_here`]).
fn calm_within(spacing: f64, radius: f64, max_extent: f64) -> Option<f64> {
    let apart = (2.0 * radius + 2.0 * (HOVER_SPEED * std::f64::consts::SQRT_2 + DISTURB_MAX))
        .max(2.0 * std::f64::consts::SQRT_2 * max_extent);
    let d = 0.5 * (spacing - apart) - CALM_MARGIN;
    (d > 0.0).then_some(d)
}

/// What [`calm_within`] keeps in hand for rounding (map units).
const CALM_MARGIN: f64 = 0.01;

/// Whether a drone's target counts for the targets' spacing: it is present and not idle
/// (an idle drone has no target, and never hovers).
fn has_target(d: &Drone, present: bool) -> bool {
    present && d.state != DroneState::Idle
}

/// A digest of the drones' targets (those that [`has_target`]) that does not depend on
/// their order: when it changes, the targets' spacing is worked out again.
fn targets_digest(drones: &[Drone], present: &[bool]) -> u64 {
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    drones
        .iter()
        .zip(present)
        .filter(|&(d, &p)| has_target(d, p))
        .fold(0u64, |acc, (d, _)| {
            let (x, y) = (d.target.0.to_bits(), d.target.1.to_bits());
            acc.wrapping_add(mix(x ^ mix(y)))
        })
}

/// The least distance between two of `targets`, or `cap` when none are nearer (a lower
/// bound of it in any case; a NaN target makes it 0). Points are sorted into cells of side
/// `cap` and each is measured against those in its own and the eight cells around.
fn target_spacing(targets: &[(f64, f64)], cap: f64) -> f64 {
    if targets
        .iter()
        .any(|t| !(t.0.is_finite() && t.1.is_finite()))
    {
        return 0.0;
    }
    let cell = |t: (f64, f64)| ((t.0 / cap).floor() as i64, (t.1 / cap).floor() as i64);
    let mut keyed: Vec<((i64, i64), usize)> = targets
        .iter()
        .enumerate()
        .map(|(k, &t)| (cell(t), k))
        .collect();
    keyed.sort_unstable();
    let mut best2 = cap * cap;
    for &((cx, cy), k) in &keyed {
        let t = targets[k];
        for nx in cx - 1..=cx + 1 {
            for ny in cy - 1..=cy + 1 {
                let from = keyed.partition_point(|&(c, _)| c < (nx, ny));
                for &(c, m) in &keyed[from..] {
                    if c != (nx, ny) {
                        break;
                    }
                    if m != k {
                        let u = targets[m];
                        best2 = best2.min((t.0 - u.0).powi(2) + (t.1 - u.1).powi(2));
                    }
                }
            }
        }
    }
    best2.sqrt()
}

/// A hovering drone near enough its target to be calm ([`calm_within`]), in the first step
/// of the view.
const CALM_BIT: u8 = 0x80;

/// What a drone is, for the others' avoidance.
const MODE_STILL: u8 = 0;
const MODE_FLYING: u8 = 1;
const MODE_HOVERING: u8 = 2;

/// The velocity (per frame) straight at a target `(dx, dy)` away: the whole way when it
/// is nearer than `speed`, else `speed` along the line.
#[inline]
fn straight_at(dx: f64, dy: f64, speed: f64) -> (f64, f64) {
    let d2 = dx * dx + dy * dy;
    if d2 <= speed * speed {
        return (dx, dy);
    }
    let k = speed / d2.sqrt();
    (dx * k, dy * k)
}

/// The share of the avoidance a drone in `mode` takes towards one in `other`: all of it
/// towards what does not avoid; half between equals; a flying drone takes ¾ towards a
/// hovering one, so drones at their targets are pushed aside only a little.
fn responsibility(mode: u8, other: u8) -> f64 {
    match (mode, other) {
        (_, MODE_STILL) => 1.0,
        (MODE_FLYING, MODE_HOVERING) => 0.75,
        (MODE_HOVERING, MODE_FLYING) => 0.25,
        _ => 0.5,
    }
}

/// The safety step: ORCA is local and, in a crowd with no free velocity left, only
/// minimizes how much it trespasses. Each limit `(u, b)` says "move at most `b` along the
/// unit vector `u` towards that neighbour" (half the gap between the two discs, all of it
/// towards one that does not move); as both of a pair keep to it, no pair can come closer
/// than the sum of their radii. The velocity is projected onto the limits a few times and
/// then scaled down until it keeps every one.
fn safety_step(mut v: (f64, f64), limits: &[((f64, f64), f64)]) -> (f64, f64) {
    for _ in 0..4 {
        let mut ok = true;
        for &(u, b) in limits {
            let over = v.0 * u.0 + v.1 * u.1 - b.max(0.0);
            if over > 1e-12 {
                v = (v.0 - over * u.0, v.1 - over * u.1);
                ok = false;
            }
        }
        if ok {
            return v;
        }
    }
    let mut t: f64 = 1.0;
    for &(u, b) in limits {
        let along = v.0 * u.0 + v.1 * u.1;
        if along > b.max(0.0) {
            t = t.min(b.max(0.0) / along);
        }
    }
    (v.0 * t, v.1 * t)
}

/// The safety step's limit towards a neighbour whose centre is `d` away, for a drone whose
/// disc has `radius`: half the gap between the two discs towards a drone in the air (it
/// takes the other half), all of the gap towards anything else (`still`: its shape's radius
/// in the grid, the margin added).
#[inline]
fn share_of_gap(d: f64, radius: f64, still: Option<f64>) -> f64 {
    match still {
        None => 0.5 * (d - 2.0 * radius),
        Some(r) => d - radius - (r + ORCA_MARGIN),
    }
}

/// Whether the move `v` keeps every limit of the safety step.
fn within_limits(v: (f64, f64), limits: &[((f64, f64), f64)]) -> bool {
    limits
        .iter()
        .all(|&(u, b)| v.0 * u.0 + v.1 * u.1 <= b.max(0.0) + 1e-12)
}

/// The reach of the safety step's limits for drones of disc `radius` and half side
/// `half`: every neighbour that one frame could bring into contact.
fn orca_reach(radius: f64, half: f64) -> f64 {
    2.0 * radius + 2.0 * ORCA_MAX_SPEED + half
}

/// What the disturbance reads to keep a push within the safety step's limits: the grid
/// (the poses the controller last saw: nothing has moved since), the drones' states, the
/// drones' disc radius, the limits' reach and the map's size.
struct Near<'a> {
    grid: &'a SpatialGrid,
    drones: &'a crate::ecs::Column<Drone>,
    radius: f64,
    reach: f64,
    map: (f64, f64),
}

impl Near<'_> {
    /// The push (per frame, along `axis`: 0 = x, 1 = y) that drone `e` at `p`, of `shape`,
    /// moving at `vel` (per frame, as the safety step chose it) may take of `push` without
    /// coming nearer to a neighbour than its share of the gap between their discs (half of
    /// it towards a drone in the air, all of it towards anything else), the map's edge
    /// stopping it as the movement system does. `None` when `push` keeps every limit (it
    /// is taken whole); else the largest part of it that does (0 when none does).
    fn cut_push(
        &self,
        e: EntityId,
        p: SwarmPose,
        shape: Shape,
        vel: (f64, f64),
        axis: usize,
        push: f64,
    ) -> Option<f64> {
        let (hw, hh) = shape.half_extents();
        let (x0, x1, y0, y1) = centre_range(self.map, hw, hh);
        let (pos, lo_hi) = ([p.x, p.y], [(x0, x1), (y0, y1)]);
        let v = [vel.0, vel.1];
        let moved = |k: usize, dv: f64| (pos[k] + v[k] + dv).clamp(lo_hi[k].0, lo_hi[k].1) - pos[k];
        let other = 1 - axis;
        let (still, pushed, across) = (moved(axis, 0.0), moved(axis, push), moved(other, 0.0));
        // The move along `axis` that every limit leaves: [lo, hi].
        let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
        let grid = self.grid;
        // Only a neighbour this near can hold the move back: the move is at most `moves`
        // long whatever the push, and a limit binds only on a move longer than it allows
        // (half the gap between two drones' discs, all of it towards anything else, whose
        // disc is at most √2 times the grid's largest half extent plus the margin). The
        // others' limits hold for every move in question, so leaving them out changes
        // nothing.
        let moves = (v[0] * v[0] + v[1] * v[1]).sqrt() + push.abs();
        let other_radius = std::f64::consts::SQRT_2 * grid.max_extent + ORCA_MARGIN;
        let near = (2.0 * (self.radius + moves))
            .max(self.radius + other_radius + moves)
            .min(self.reach)
            + 1e-9;
        grid.for_each_near(p.x, p.y, near, |m| {
            let j = grid.ids[m];
            if j == e.0 {
                return;
            }
            let (ox, oy) = (grid.xs[m] - p.x, grid.ys[m] - p.y);
            let d2 = ox * ox + oy * oy;
            if !(d2 < self.reach * self.reach && d2 > 0.0) {
                return;
            }
            let d = d2.sqrt();
            let u = [ox / d, oy / d];
            let in_the_air = self
                .drones
                .get(EntityId(j))
                .is_some_and(|o| o.state.in_the_air());
            let b = share_of_gap(d, self.radius, (!in_the_air).then(|| grid.radii[m]));
            let room = b.max(0.0) - across * u[other];
            if u[axis] > 0.0 {
                hi = hi.min(room / u[axis]);
            } else if u[axis] < 0.0 {
                lo = lo.max(room / u[axis]);
            }
        });
        if (lo..=hi).contains(&pushed) {
            return None;
        }
        // As far as the limits leave, never beyond the push nor back past the move without it.
        let kept = if lo <= hi {
            pushed.clamp(lo, hi)
        } else {
            still
        };
        let kept = kept.clamp(still.min(pushed), still.max(pushed));
        Some(kept - v[axis])
    }
}

impl System for DroneController {
    fn name(&self) -> &str {
        "drones"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn start(&mut self, ctx: &mut Ctx) {
        let drones = ctx.world.custom_mut::<Drone>();
        self.total = drones.len();
        self.reported = drones.iter().filter(|(_, d)| d.reported).count();
        if self.reported < self.total {
            WorkLeft::begin(ctx, "drones");
        }
        // ORCA scans every drone's neighbours: it finds their contacts too.
        if self.avoidance == Avoidance::Orca && self.contacts_in_scan {
            ctx.world.res.get_mut::<ContactHandoff>().drones = true;
        }
        self.next_disturbance = DISTURB_PERIOD.max(ctx.events.now());
        ctx.events
            .schedule(DISTURB_PERIOD, Event::global(Self::DISTURBANCE));
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let fps = ctx.config.fps;
        let seed = ctx.config.seed;
        let frame = ctx.frame;
        let headings = self.headings;
        let half = self.half;
        let threads = self.threads.unwrap_or_else(|| ctx.config.thread_count());
        let avoidance = self.avoidance;
        // The disturbance due at the start of the next frame (as the run's loop takes its
        // events) reads the room this frame leaves the hovering drones.
        let room_check = self.next_disturbance <= (frame + 1) as f64 / fps;
        let mut view = std::mem::take(&mut self.view);
        let mut calm_within = None;
        if avoidance == Avoidance::Orca {
            if self.calm_on {
                calm_within = self.calm_within(&ctx.world);
            }
            neighbour_view(&ctx.world, fps, threads, calm_within, &mut view);
        } else {
            view.clear();
        }
        let (slot_order_from, slot_order_mixing) = (self.slot_order_from, self.slot_order_mixing);
        let mut lists = std::mem::take(&mut self.slot_lists);
        let contacts = ctx.world.res.get::<ContactHandoff>().pending();
        let found: Found = ctx.world.with_custom::<Drone, _>(|drones, w| {
            let grid = w.res.get::<SpatialGrid>();
            let (shapes, sp) = w.collider.raw();
            let (drones, dp) = drones.raw_mut();
            let (poses, pp) = w.pose.raw();
            let (vels, vp) = w.vel.raw_mut();
            let n = drones.len().min(poses.len()).min(vels.len());
            let (drones, dp, vels, vp) = (&mut drones[..n], &dp[..n], &mut vels[..n], &vp[..n]);
            let (radius, reach) = self.disc();
            let step = Step {
                fps,
                seed,
                frame,
                headings: &headings,
                half,
                grid,
                poses,
                pp,
                avoidance,
                slot_vel: &view.slot_vel,
                slot_mode: &view.slot_mode,
                unsettled_before: &view.unsettled_before,
                calm_within2: calm_within.map_or(-1.0, |d| d * d),
                contacts,
                shapes,
                sp,
                contact_reach2: 8.0 * grid.max_extent * grid.max_extent * (1.0 + 1e-9),
                radius,
                reach,
                edges: centre_range((w.res.width, w.res.height), half, half),
                room_check,
            };
            // Slot order once the drones have mixed (a choice of cost alone).
            let use_slots = n >= slot_order_from && grid.mixing() >= slot_order_mixing;
            // Runs of drones by id ([`PARTS_PER_THREAD`] a thread), each controlled on its
            // own (in slot order: going through its own drones' slots, listed first).
            let chunk = part_size(n, threads);
            if use_slots {
                lists.fill(&grid.ids, chunk, n.div_ceil(chunk), threads);
            }
            let lists = &lists;
            let control =
                |c: usize, d: &mut [Drone], dpc: &[bool], v: &mut [Velocity], vpc: &[bool]| {
                    if use_slots {
                        step.control_slots(lists, c, c * chunk, d, dpc, v, vpc)
                    } else {
                        step.control(c * chunk, d, dpc, v, vpc)
                    }
                };
            let mut found = if chunk >= n {
                control(0, drones, dp, vels, vp)
            } else {
                let parts = drones
                    .chunks_mut(chunk)
                    .zip(vels.chunks_mut(chunk))
                    .zip(dp.chunks(chunk).zip(vp.chunks(chunk)))
                    .enumerate()
                    .collect();
                Found::join(crate::par::each(
                    threads,
                    parts,
                    |(c, ((d, v), (dpc, vpc)))| control(c, d, dpc, v, vpc),
                ))
            };
            // Reported in id order, as in entity order.
            if use_slots {
                found.arrivals.sort_unstable();
            }
            found
        });
        self.view = view;
        self.slot_lists = lists;
        if let Some(count) = &self.calm_count {
            count.fetch_add(found.calm, Ordering::Relaxed);
        }
        // The frame's contacts are raised before the arrivals, as when the collision system
        // (which runs before this controller) finds them all.
        if contacts {
            ContactHandoff::finish(ctx, found.pairs);
        }
        for e in found.arrivals {
            self.report(ctx, e, true);
        }
    }

    fn wants(&self, event: &Event) -> bool {
        (event.tag == Tag::COLLISION && event.entity.is_none()) || event.tag == Self::DISTURBANCE
    }

    fn react(&mut self, event: &Event, ctx: &mut Ctx) {
        if event.tag == Self::DISTURBANCE {
            self.ticks += 1;
            let fps = ctx.config.fps;
            let seed = ctx.config.seed;
            let ticks = self.ticks;
            let safety = self.avoidance == Avoidance::Orca;
            let (radius, reach) = self.disc();
            let threads = self.threads.unwrap_or_else(|| ctx.config.thread_count());
            ctx.world.with_custom::<Drone, _>(|drones, w| {
                let drones = &*drones;
                let near = Near {
                    grid: w.res.get::<SpatialGrid>(),
                    drones,
                    radius,
                    reach,
                    map: (w.res.width, w.res.height),
                };
                let (ds, dp) = drones.raw();
                let (poses, pp) = w.pose.raw();
                let (shapes, sp) = w.collider.raw();
                let (vels, vp) = w.vel.raw_mut();
                let n = ds.len().min(dp.len()).min(vels.len()).min(vp.len());
                // Each hovering drone's push is drawn for it alone and cut by what the grid
                // of the last frame and the drones' states leave, neither of which a push
                // changes: on several threads for a large swarm, the same pushes.
                let push_part = |(first, vels): (usize, &mut [Velocity])| {
                    for (k, v) in vels.iter_mut().enumerate() {
                        let i = first + k;
                        let d = &ds[i];
                        if !dp[i] || !vp[i] || d.state != DroneState::Hovering {
                            continue;
                        }
                        let id = i as u64;
                        let c = ticks * 4;
                        if hash_u01(seed, STREAM_DISTURB, id, c) >= DISTURB_P {
                            continue;
                        }
                        let along_x = hash_u01(seed, STREAM_DISTURB, id, c + 1) < 0.5;
                        let mut push =
                            hash_u01(seed, STREAM_DISTURB, id, c + 2) * DISTURB_MAX * fps;
                        if hash_u01(seed, STREAM_DISTURB, id, c + 3) < 0.5 {
                            push = -push;
                        }
                        // With ORCA the push keeps the safety step's limits (the velocity
                        // it is added to was chosen to keep them): cut to what they leave.
                        // A drone with room enough for any push needs no check.
                        let posed = pp.get(i).copied().unwrap_or(false)
                            && sp.get(i).copied().unwrap_or(false);
                        if safety && d.tight && posed {
                            if let (Some(p), Some(shape)) = (poses.get(i), shapes.get(i)) {
                                let vel = (v.x / fps, v.y / fps);
                                let axis = usize::from(!along_x);
                                let e = EntityId(i as u32);
                                if let Some(cut) =
                                    near.cut_push(e, *p, *shape, vel, axis, push / fps)
                                {
                                    push = cut * fps;
                                }
                            }
                        }
                        if along_x {
                            v.x += push;
                        } else {
                            v.y += push;
                        }
                    }
                };
                let vels = &mut vels[..n];
                let chunk = part_size(n, threads);
                if chunk >= n {
                    push_part((0, vels));
                } else {
                    let parts = vels
                        .chunks_mut(chunk)
                        .enumerate()
                        .map(|(c, part)| (c * chunk, part))
                        .collect();
                    crate::par::each(threads, parts, push_part);
                }
            });
            self.next_disturbance = ctx.events.now() + DISTURB_PERIOD;
            ctx.events
                .after(DISTURB_PERIOD, Event::global(Self::DISTURBANCE));
            return;
        }
        let Payload::Pair(a, b) = event.payload else {
            return;
        };
        for e in [a, b] {
            let Some(d) = ctx.world.custom_mut::<Drone>().get_mut(e) else {
                continue;
            };
            if d.state == DroneState::Crashed {
                continue;
            }
            d.state = DroneState::Crashed;
            let first = !d.reported;
            d.reported = true;
            if let Some(v) = ctx.world.vel.get_mut(e) {
                *v = Velocity::default();
            }
            if first {
                self.report(ctx, e, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn target_spacing_is_the_least_distance_up_to_its_cap() {
        // Points at random (some near each other, some across cell edges and at negative
        // coordinates) against every pair measured.
        for seed in 0..20u64 {
            let n = 2 + (seed as usize * 7) % 60;
            let pts: Vec<(f64, f64)> = (0..n as u64)
                .map(|k| {
                    let u = hash_u01(seed, 11, k, 0);
                    let v = hash_u01(seed, 11, k, 1);
                    (u * 300.0 - 100.0, v * 200.0 - 50.0)
                })
                .collect();
            let mut least = f64::INFINITY;
            for a in 0..n {
                for b in a + 1..n {
                    least = least.min((pts[a].0 - pts[b].0).hypot(pts[a].1 - pts[b].1));
                }
            }
            for cap in [5.0, 32.0] {
                let got = target_spacing(&pts, cap);
                assert!(
                    (got - least.min(cap)).abs() < 1e-9,
                    "seed {seed}, cap {cap}: {got} against {least}"
                );
            }
        }
        // The bundled layout's targets are 15 apart.
        let lay = layout(10_000);
        let s = target_spacing(&lay.targets, CALM_SPACING_CAP);
        assert!((s - 15.0).abs() < 1e-3, "{s}");
        assert_eq!(target_spacing(&[(0.0, 0.0), (f64::NAN, 1.0)], 32.0), 0.0);
        assert_eq!(target_spacing(&[(1.0, 1.0), (1.0, 1.0)], 32.0), 0.0);
    }

    #[test]
    fn calm_drones_are_apart_enough_that_no_limit_binds_and_no_push_is_cut() {
        let radius = 2.5 * std::f64::consts::SQRT_2 + ORCA_MARGIN;
        let d = calm_within(15.0, radius, 2.5).unwrap();
        assert!(d > 3.0, "{d}");
        // Two calm drones are at least this far apart: the limit towards the other leaves
        // the fastest hovering move and a push, and their squares cannot touch.
        let apart = 15.0 - 2.0 * d;
        let share = share_of_gap(apart, radius, None);
        let fastest = (HOVER_SPEED, HOVER_SPEED);
        assert!(share >= HOVER_SPEED * std::f64::consts::SQRT_2 + DISTURB_MAX + CALM_MARGIN);
        let limit = [(
            (
                std::f64::consts::FRAC_1_SQRT_2,
                std::f64::consts::FRAC_1_SQRT_2,
            ),
            share,
        )];
        assert_eq!(safety_step(fastest, &limit), fastest);
        assert!(apart > 2.0 * std::f64::consts::SQRT_2 * 2.5);
        // Targets too near for any, or larger colliders about: none.
        assert_eq!(calm_within(8.0, radius, 2.5), None);
        assert!(calm_within(15.0, radius, 4.5).is_none_or(|d| 15.0 - 2.0 * d > 4.5 * 8f64.sqrt()));
    }

    #[test]
    fn the_targets_digest_ignores_order_and_idle_drones() {
        let drone = |x: f64, y: f64, state| Drone {
            target: (x, y),
            state,
            ..Drone::default()
        };
        let a = [
            drone(1.0, 2.0, DroneState::Flying),
            drone(3.0, 4.0, DroneState::Hovering),
            drone(9.0, 9.0, DroneState::Idle),
        ];
        let b = [a[1], a[2], a[0]];
        let present = [true; 3];
        assert_eq!(targets_digest(&a, &present), targets_digest(&b, &present));
        let mut c = a;
        c[2].target = (50.0, 50.0);
        assert_eq!(targets_digest(&a, &present), targets_digest(&c, &present));
        c[0].target = (1.0, 2.5);
        assert_ne!(targets_digest(&a, &present), targets_digest(&c, &present));
        assert_ne!(
            targets_digest(&a, &present),
            targets_digest(&a, &[true, false, true])
        );
    }

    #[test]
    fn rings_match_the_example() {
        let counts: Vec<usize> = (1..=8).map(ring_count).collect();
        assert_eq!(counts, vec![7, 13, 20, 27, 33, 40, 47, 53]);
        assert_eq!(ring_targets(280.0, 200.0, 200).len(), 240);
        assert_eq!(ring_targets(280.0, 200.0, 7).len(), 7);
    }

    fn ring_count(ring: usize) -> usize {
        let r = 25.0 * ring as f64;
        let mut n = 0;
        let mut k = 0;
        loop {
            let ox = -r + 15.0 * k as f64;
            if ox > r {
                break;
            }
            n += if (r * r - ox * ox).max(0.0).sqrt() > 0.0 {
                2
            } else {
                1
            };
            k += 1;
        }
        n
    }

    #[test]
    fn targets_go_to_the_nearest_free_drone() {
        let starts = [(0.0, 0.0), (10.0, 0.0), (20.0, 0.0)];
        let targets = [(9.0, 0.0), (8.0, 0.0), (100.0, 0.0), (0.0, 0.0)];
        assert_eq!(
            assign_targets(&starts, &targets),
            vec![Some(1), Some(0), Some(2)]
        );
        // Same answer as a brute-force search on a bigger set.
        let lay = layout(500);
        let fast = assign_targets(&lay.starts, &lay.targets);
        let mut taken = vec![false; lay.starts.len()];
        let mut slow = vec![None; lay.starts.len()];
        for (t, &(x, y)) in lay.targets.iter().enumerate() {
            let mut best: Option<(f64, usize)> = None;
            for (i, &(sx, sy)) in lay.starts.iter().enumerate() {
                if taken[i] {
                    continue;
                }
                let d = (sx - x).powi(2) + (sy - y).powi(2);
                if best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, i));
                }
            }
            let Some((_, i)) = best else { break };
            taken[i] = true;
            slow[i] = Some(t);
        }
        assert_eq!(fast, slow);
    }

    #[test]
    fn the_nearest_few_are_those_of_a_full_sort() {
        // Candidates in many orders, with ties in distance (broken by id): the kept few are
        // the first of all of them sorted by (distance, id).
        for round in 0..200u64 {
            let n = (round % 23) as usize;
            let cands: Vec<(f64, u32, usize)> = (0..n)
                .map(|k| {
                    let u = hash_u01(round, 9, k as u64, 0);
                    // Few distinct distances, so ties are common.
                    let d2 = (u * 5.0).floor() * 3.0;
                    let id = (hash_u01(round, 9, k as u64, 1) * 1000.0) as u32 * 16 + k as u32;
                    (d2, id, k)
                })
                .collect();
            let mut best = [(0.0, 0, 0); ORCA_NEIGHBOURS];
            let mut count = 0;
            for &c in &cands {
                keep_nearest(&mut best, &mut count, c);
            }
            let mut sorted = cands.clone();
            sorted.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            sorted.truncate(ORCA_NEIGHBOURS);
            assert_eq!(&best[..count], &sorted[..], "round {round}");
        }
    }

    #[test]
    fn layout_grows_with_the_swarm() {
        let small = layout(200);
        assert_eq!((small.width, small.height), (583.0, 413.0));
        let big = layout(100_000);
        let max_x = big.starts.iter().map(|p| p.0).fold(0.0, f64::max);
        let max_y = big.starts.iter().map(|p| p.1).fold(0.0, f64::max);
        assert!(max_x < big.width && max_y < big.height);
        assert!(big
            .targets
            .iter()
            .all(|&(x, y)| (0.0..=big.width).contains(&x) && (0.0..=big.height).contains(&y)));
    }
}
