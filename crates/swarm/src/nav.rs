//! Navigation: the shared map of safe paths, A* routes over it, the path-following system
//! and the `Go` instruction.
//!
//! Points of interest (POIs) and map-paths (polylines drawn as edges in draw.io) form an
//! undirected graph. Points closer than `merge_radius` are merged into one "super-point".
//! A robot may leave the graph by at most `max_off_path` map units: a route starts at the
//! graph point nearest to the robot and ends at the goal POI (or at the graph point nearest
//! to a goal coordinate, then the coordinate). A robot or goal coordinate within
//! `max_off_path` of a map-path but farther from every point (the middle of a long segment)
//! goes by the segment: from or to either of its ends (a one-way segment: only its way). When `extend` is on, the off-graph legs of
//! every route found are added to the shared map, so the map grows as robots explore.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use crate::ecs::{EntityId, Path, Resource, SwarmWorld};
use crate::event::{Event, Tag};
use crate::grid::SpatialGrid;
use crate::sim::{Ctx, InstructionDef, InstructionError, Outcome, System};

pub mod crossing;

use crossing::Crossings;

/// A goal for a route.
#[derive(Clone, Debug, PartialEq)]
pub enum Goal {
    /// A named point of interest.
    Poi(String),
    /// A map coordinate.
    Point(f64, f64),
}

/// Arguments that are neither a POI name nor `X,Y` coordinates.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected a POI name or X,Y coordinates, found {found:?}")]
pub struct GoalError {
    /// The arguments, joined by spaces.
    pub found: String,
}

/// Why there is no route to a goal.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RouteError {
    /// The robot is too far from every point of the map's paths.
    #[error(
        "no map point within {within} of ({:.1}, {:.1})",
        simrob_math::Shown::of(.x),
        simrob_math::Shown::of(.y)
    )]
    StartOffMap {
        /// The robot's x, map units.
        x: f64,
        /// The robot's y, map units.
        y: f64,
        /// How far from the map's paths it may be ([`NavMap::max_off_path`]), map units.
        within: f64,
    },
    /// `Go`: no POI has this name.
    #[error("there is no POI called {0:?}")]
    UnknownPoi(String),
    /// The goal is too far from every point of the map's paths.
    #[error(
        "no map point within {within} of the goal ({:.1}, {:.1})",
        simrob_math::Shown::of(.x),
        simrob_math::Shown::of(.y)
    )]
    GoalOffMap {
        /// The goal's x, map units.
        x: f64,
        /// The goal's y, map units.
        y: f64,
        /// How far from the map's paths it may be ([`NavMap::max_off_path`]), map units.
        within: f64,
    },
    /// The paths do not connect the start to the goal (`to`: its name or coordinates).
    #[error("no map-path leads from ({x:.1}, {y:.1}) to {to}")]
    NoPath {
        /// The start's x, map units.
        x: f64,
        /// The start's y, map units.
        y: f64,
        /// The goal: its name or coordinates.
        to: String,
    },
    /// The entity to route has no position (named by its label).
    #[error("{0} has no position")]
    NoPosition(String),
}

impl Goal {
    /// Reads `POI` or `X,Y` (also `X Y` given as two arguments).
    pub fn parse(args: &[String]) -> Result<Goal, GoalError> {
        let joined = args.join(",");
        let parts: Vec<&str> = joined
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if parts.len() == 2 {
            if let (Ok(x), Ok(y)) = (parts[0].parse::<f64>(), parts[1].parse::<f64>()) {
                if x.is_finite() && y.is_finite() {
                    return Ok(Goal::Point(x, y));
                }
            }
        }
        match args {
            [name] => Ok(Goal::Poi(name.clone())),
            _ => Err(GoalError {
                found: args.join(" "),
            }),
        }
    }
}

const COST_SCALE: f64 = 1000.0;

/// A cached A* result: the nodes and the cost.
type Route = (Arc<Vec<u32>>, u64);

/// The shared navigation graph (a world-level component).
#[derive(Clone, Debug)]
pub struct NavMap {
    /// Points closer than this are one node.
    pub merge_radius: f64,
    /// How far a robot may be from the graph at either end of a route.
    pub max_off_path: f64,
    /// Whether routes found are added to the map.
    pub extend: bool,
    /// Radius of the zone around each crossing that robots keeping their distance take in
    /// turn (see [`crate::nav::crossing`]); 0: crossings are not managed.
    pub crossing_radius: f64,
    /// Seconds a robot waits at a crossing whose way out stays full before it takes
    /// another free way out (and a new route from there).
    pub crossing_patience: f64,
    nodes: Vec<(f64, f64)>,
    /// Distinct neighbours (in or out) of each node.
    neighbours: Vec<Vec<u32>>,
    adj: Vec<Vec<(u32, u64)>>,
    pois: BTreeMap<String, u32>,
    buckets: HashMap<(i64, i64), Vec<u32>>,
    bucket: f64,
    cache: HashMap<(u32, u32), Option<Route>>,
}

impl Default for NavMap {
    fn default() -> Self {
        NavMap::new(5.0, 50.0)
    }
}

impl Resource for NavMap {
    fn initial() -> &'static Self {
        static INITIAL: std::sync::LazyLock<NavMap> = std::sync::LazyLock::new(NavMap::default);
        &INITIAL
    }
}

impl NavMap {
    /// An empty map.
    pub fn new(merge_radius: f64, max_off_path: f64) -> Self {
        let merge_radius = merge_radius.max(0.0);
        let max_off_path = max_off_path.max(0.0);
        NavMap {
            merge_radius,
            max_off_path,
            extend: true,
            crossing_radius: 0.0,
            crossing_patience: 5.0,
            nodes: Vec::new(),
            neighbours: Vec::new(),
            adj: Vec::new(),
            pois: BTreeMap::new(),
            buckets: HashMap::new(),
            bucket: merge_radius.max(max_off_path).max(1.0),
            cache: HashMap::new(),
        }
    }

    /// The graph's points.
    pub fn nodes(&self) -> &[(f64, f64)] {
        &self.nodes
    }

    /// Edges `(a, b)`: one-way edges as they go, two-way edges once with `a < b`.
    pub fn edges(&self) -> Vec<(u32, u32)> {
        let mut out = Vec::new();
        for (a, list) in self.adj.iter().enumerate() {
            let a = a as u32;
            for &(b, _) in list {
                if a < b || !self.has_edge(b, a) {
                    out.push((a, b));
                }
            }
        }
        out
    }

    /// POIs and their nodes.
    pub fn pois(&self) -> &BTreeMap<String, u32> {
        &self.pois
    }

    /// The position of a POI.
    pub fn poi(&self, name: &str) -> Option<(f64, f64)> {
        self.pois.get(name).map(|&n| self.nodes[n as usize])
    }

    fn key(&self, x: f64, y: f64) -> (i64, i64) {
        (
            (x / self.bucket).floor() as i64,
            (y / self.bucket).floor() as i64,
        )
    }

    /// The node nearest to `(x, y)` within `radius` (ties: lowest id).
    pub fn nearest(&self, x: f64, y: f64, radius: f64) -> Option<u32> {
        let (kx, ky) = self.key(x, y);
        let reach = (radius / self.bucket).ceil() as i64;
        let mut best: Option<(f64, u32)> = None;
        for bx in around(kx, reach) {
            for by in around(ky, reach) {
                let Some(list) = self.buckets.get(&(bx, by)) else {
                    continue;
                };
                for &n in list {
                    let (nx, ny) = self.nodes[n as usize];
                    let d = (nx - x).hypot(ny - y);
                    if d <= radius && best.is_none_or(|(bd, bn)| d < bd || (d == bd && n < bn)) {
                        best = Some((d, n));
                    }
                }
            }
        }
        best.map(|(_, n)| n)
    }

    /// The node at `(x, y)`: an existing one within `merge_radius`, or a new one.
    pub fn add_point(&mut self, x: f64, y: f64) -> u32 {
        if let Some(n) = self.nearest(x, y, self.merge_radius) {
            return n;
        }
        let n = self.nodes.len() as u32;
        self.nodes.push((x, y));
        self.neighbours.push(Vec::new());
        self.adj.push(Vec::new());
        let k = self.key(x, y);
        self.buckets.entry(k).or_default().push(n);
        n
    }

    /// Connects two nodes (both ways).
    pub fn connect(&mut self, a: u32, b: u32) {
        self.connect_oneway(a, b);
        self.connect_oneway(b, a);
    }

    /// Connects `a` to `b` (one way: a robot may go from `a` to `b` only).
    pub fn connect_oneway(&mut self, a: u32, b: u32) {
        if a == b || self.adj[a as usize].iter().any(|&(n, _)| n == b) {
            return;
        }
        let (ax, ay) = self.nodes[a as usize];
        let (bx, by) = self.nodes[b as usize];
        let cost = cost_units((ax - bx).hypot(ay - by), f64::ceil);
        if !self.has_edge(b, a) {
            self.neighbours[a as usize].push(b);
            self.neighbours[b as usize].push(a);
        }
        self.adj[a as usize].push((b, cost));
        self.cache.clear();
    }

    /// The nodes a robot may go to from `n`, in the order they were connected.
    pub fn successors(&self, n: u32) -> impl Iterator<Item = u32> + '_ {
        self.adj
            .get(n as usize)
            .into_iter()
            .flatten()
            .map(|&(m, _)| m)
    }

    /// Whether node `n` is a crossing: three or more neighbours (in or out), or two that
    /// are not in line with it (a turn, where a robot following another loses sight of it
    /// round the corner).
    pub fn is_crossing(&self, n: u32) -> bool {
        let Some(list) = self.neighbours.get(n as usize) else {
            return false;
        };
        match list[..] {
            [a, b] => {
                let (x, y) = self.nodes[n as usize];
                let unit = |m: u32| {
                    let (mx, my) = self.nodes[m as usize];
                    let l = (mx - x).hypot(my - y).max(1e-12);
                    ((mx - x) / l, (my - y) / l)
                };
                let (u, v) = (unit(a), unit(b));
                u.0 * v.0 + u.1 * v.1 > -0.99
            }
            _ => list.len() >= 3,
        }
    }

    fn has_edge(&self, a: u32, b: u32) -> bool {
        self.adj[a as usize].iter().any(|&(n, _)| n == b)
    }

    /// Adds a one-way map-path: each consecutive pair an edge from the first to the second.
    pub fn add_oneway_polyline(&mut self, points: &[(f64, f64)]) {
        let ids: Vec<u32> = points.iter().map(|&(x, y)| self.add_point(x, y)).collect();
        for w in ids.windows(2) {
            self.connect_oneway(w[0], w[1]);
        }
    }

    /// The edge `(a, b)` nearest to `(x, y)` within `radius` (ties: the lowest `(a, b)`),
    /// searched over every edge: for a point whose nearby buckets hold no node, such as the
    /// middle of a segment longer than `2 × max_off_path`.
    fn nearest_edge(&self, x: f64, y: f64, radius: f64) -> Option<(u32, u32)> {
        let mut best: Option<(f64, u32, u32)> = None;
        for (a, list) in self.adj.iter().enumerate() {
            let a = a as u32;
            let (ax, ay) = self.nodes[a as usize];
            for &(b, _) in list {
                let (bx, by) = self.nodes[b as usize];
                let d = point_segment(x, y, ax, ay, bx, by);
                if d <= radius
                    && best.is_none_or(|(bd, ba, bb)| d < bd || (d == bd && (a, b) < (ba, bb)))
                {
                    best = Some((d, a, b));
                }
            }
        }
        best.map(|(_, a, b)| (a, b))
    }

    /// The ends of edge `(a, b)` a route may start from (`start`) or end at: both for a
    /// two-way edge (the route picks the shorter), else the head (from a one-way lane,
    /// robots keep to its direction) or the tail (into it, they come from its start).
    fn edge_ends(&self, a: u32, b: u32, start: bool) -> Vec<u32> {
        if self.has_edge(b, a) {
            vec![a.min(b), a.max(b)]
        } else if start {
            vec![b]
        } else {
            vec![a]
        }
    }

    /// Where a route to the point `(x, y)` may end: the nearest node within `max_off_path`,
    /// else the ends of the nearest edge within `max_off_path` (a point in the middle of a
    /// long segment).
    fn end_candidates(&self, x: f64, y: f64) -> Vec<u32> {
        if let Some(n) = self.nearest(x, y, self.max_off_path) {
            return vec![n];
        }
        match self.nearest_edge(x, y, self.max_off_path) {
            Some((a, b)) => self.edge_ends(a, b, false),
            None => Vec::new(),
        }
    }

    /// Where a route from `(x, y)` may start. On a one-way edge: its head (robots keep to
    /// the lane's direction). On a two-way edge: either end (the route picks the shorter).
    /// Elsewhere: the nearest node within `max_off_path`, else the ends of the nearest edge
    /// within `max_off_path` (a robot in the middle of a long segment, far from both ends).
    fn start_candidates(&self, x: f64, y: f64) -> Vec<u32> {
        let (kx, ky) = self.key(x, y);
        let reach = (self.max_off_path / self.bucket).ceil() as i64;
        let mut best: Option<(f64, u32, u32)> = None;
        let tol = self.merge_radius.max(1e-6);
        for bx in around(kx, reach) {
            for by in around(ky, reach) {
                for &a in self.buckets.get(&(bx, by)).into_iter().flatten() {
                    let (ax, ay) = self.nodes[a as usize];
                    for &(b, _) in &self.adj[a as usize] {
                        let (bx2, by2) = self.nodes[b as usize];
                        let d = point_segment(x, y, ax, ay, bx2, by2);
                        if d <= tol
                            && best
                                .is_none_or(|(bd, ba, bb)| d < bd || (d == bd && (a, b) < (ba, bb)))
                        {
                            best = Some((d, a, b));
                        }
                    }
                }
            }
        }
        let mut out = Vec::new();
        if let Some((_, a, b)) = best {
            out = self.edge_ends(a, b, true);
        }
        if let Some(n) = self.nearest(x, y, self.max_off_path) {
            if !out.contains(&n) && out.len() != 1 {
                out.push(n);
            }
        }
        if out.is_empty() {
            if let Some((a, b)) = self.nearest_edge(x, y, self.max_off_path) {
                out = self.edge_ends(a, b, true);
            }
        }
        out
    }

    /// Adds a map-path: a polyline of points, each consecutive pair an edge.
    pub fn add_polyline(&mut self, points: &[(f64, f64)]) {
        let ids: Vec<u32> = points.iter().map(|&(x, y)| self.add_point(x, y)).collect();
        for w in ids.windows(2) {
            self.connect(w[0], w[1]);
        }
    }

    /// Adds a POI (merged with a nearby graph point if there is one).
    pub fn add_poi(&mut self, name: &str, x: f64, y: f64) {
        let n = self.add_point(x, y);
        self.pois.insert(name.to_string(), n);
    }

    /// Connects every POI that has no edge to the nearest other node within `max_off_path`.
    pub fn connect_isolated_pois(&mut self) {
        let pois: Vec<u32> = self.pois.values().copied().collect();
        for n in pois {
            if !self.adj[n as usize].is_empty() {
                continue;
            }
            let (x, y) = self.nodes[n as usize];
            let (kx, ky) = self.key(x, y);
            let reach = (self.max_off_path / self.bucket).ceil() as i64;
            let mut best: Option<(f64, u32)> = None;
            for bx in around(kx, reach) {
                for by in around(ky, reach) {
                    for &m in self.buckets.get(&(bx, by)).into_iter().flatten() {
                        if m == n {
                            continue;
                        }
                        let (mx, my) = self.nodes[m as usize];
                        let d = (mx - x).hypot(my - y);
                        if d <= self.max_off_path
                            && best.is_none_or(|(bd, bm)| d < bd || (d == bd && m < bm))
                        {
                            best = Some((d, m));
                        }
                    }
                }
            }
            if let Some((_, m)) = best {
                self.connect(n, m);
            }
        }
    }

    fn astar(&mut self, start: u32, goal: u32) -> Option<Route> {
        if let Some(hit) = self.cache.get(&(start, goal)) {
            return hit.clone();
        }
        let (gx, gy) = self.nodes[goal as usize];
        let nodes = &self.nodes;
        let adj = &self.adj;
        let found = pathfinding::directed::astar::astar(
            &start,
            |&n| adj[n as usize].iter().copied(),
            |&n| {
                let (x, y) = nodes[n as usize];
                cost_units((x - gx).hypot(y - gy), f64::floor)
            },
            |&n| n == goal,
        )
        .map(|(path, cost)| (Arc::new(path), cost));
        self.cache.insert((start, goal), found.clone());
        found
    }

    /// A route from `(x, y)` to `goal`: the waypoints to follow, or why there is none.
    pub fn route(&mut self, x: f64, y: f64, goal: &Goal) -> Result<Vec<(f64, f64)>, RouteError> {
        let starts = self.start_candidates(x, y);
        if starts.is_empty() {
            return Err(RouteError::StartOffMap {
                x,
                y,
                within: self.max_off_path,
            });
        }
        let (ends, last) = match goal {
            Goal::Poi(name) => match self.pois.get(name) {
                Some(&n) => (vec![n], None),
                None => return Err(RouteError::UnknownPoi(name.clone())),
            },
            Goal::Point(gx, gy) => {
                let ends = self.end_candidates(*gx, *gy);
                if ends.is_empty() {
                    return Err(RouteError::GoalOffMap {
                        x: *gx,
                        y: *gy,
                        within: self.max_off_path,
                    });
                }
                (ends, Some((*gx, *gy)))
            }
        };
        let mut found: Option<(u64, u32, u32, Arc<Vec<u32>>)> = None;
        for &end in &ends {
            // The leg from the graph to a goal coordinate (the same for every start).
            let tail = match last {
                Some((gx, gy)) => {
                    let (ex, ey) = self.nodes[end as usize];
                    cost_units((ex - gx).hypot(ey - gy), f64::ceil)
                }
                None => 0,
            };
            for &s in &starts {
                let Some((nodes, cost)) = self.astar(s, end) else {
                    continue;
                };
                let (sx, sy) = self.nodes[s as usize];
                let total = cost + cost_units((sx - x).hypot(sy - y), f64::ceil) + tail;
                if found.as_ref().is_none_or(|(c, _, _, _)| total < *c) {
                    found = Some((total, s, end, nodes));
                }
            }
        }
        let Some((_, start, end, nodes)) = found else {
            let what = match goal {
                Goal::Poi(n) => n.clone(),
                Goal::Point(gx, gy) => format!("({gx:.1}, {gy:.1})"),
            };
            return Err(RouteError::NoPath { x, y, to: what });
        };
        let mut points: Vec<(f64, f64)> = nodes.iter().map(|&n| self.nodes[n as usize]).collect();
        if let Some(p) = last {
            if points
                .last()
                .is_none_or(|q| (q.0 - p.0).hypot(q.1 - p.1) > 1e-9)
            {
                points.push(p);
            }
        }
        if self.extend {
            let (sx, sy) = self.nodes[start as usize];
            if (sx - x).hypot(sy - y) > self.merge_radius {
                let n = self.add_point(x, y);
                self.connect(n, start);
            }
            if let Some((gx, gy)) = last {
                let (ex, ey) = self.nodes[end as usize];
                if (ex - gx).hypot(ey - gy) > self.merge_radius {
                    let n = self.add_point(gx, gy);
                    self.connect(end, n);
                }
            }
        }
        // Drop leading points the robot is already on.
        while points.len() > 1 && (points[0].0 - x).hypot(points[0].1 - y) < 1e-9 {
            points.remove(0);
        }
        Ok(points)
    }
}

fn point_segment(px: f64, py: f64, ax: f64, ay: f64, bx: f64, by: f64) -> f64 {
    let (dx, dy) = (bx - ax, by - ay);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 {
        (((px - ax) * dx + (py - ay) * dy) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (px - ax - t * dx).hypot(py - ay - t * dy)
}

/// Default cruise speed for robots without a [`crate::Navigator`] (map units per second).
pub const DEFAULT_SPEED: f64 = 30.0;

/// Starts a route for `e` to `goal`: gives it a [`Path`], or explains why not.
pub fn start_route(world: &mut SwarmWorld, e: EntityId, goal: &Goal) -> Result<(), RouteError> {
    let Some(p) = world.pose.get(e).copied() else {
        return Err(RouteError::NoPosition(world.label(e)));
    };
    let points = world.res.get_mut::<NavMap>().route(p.x, p.y, goal)?;
    let speed = world
        .navigator
        .get(e)
        .map(|n| n.speed)
        .unwrap_or(DEFAULT_SPEED);
    world.path.insert(
        e,
        Path {
            points,
            next: 0,
            speed,
        },
    );
    Ok(())
}

fn go(ctx: &mut Ctx, e: EntityId, args: &[String]) -> Outcome {
    let goal = match Goal::parse(args) {
        Ok(g) => g,
        Err(m) => return Outcome::Failed(Tag::INSTRUCTION_FAILED, m.to_string()),
    };
    match start_route(&mut ctx.world, e, &goal) {
        Ok(()) => Outcome::Blocked(vec![Tag::END_OF_PATH]),
        Err(m) => Outcome::Failed(Tag::UNREACHABLE, format!("{}: {m}", ctx.world.label(e))),
    }
}

fn check_go(world: &SwarmWorld, args: &[String]) -> Result<(), InstructionError> {
    match Goal::parse(args)? {
        Goal::Poi(name) if world.res.get::<NavMap>().poi(&name).is_none() => {
            let known: Vec<&str> = world
                .res
                .get::<NavMap>()
                .pois()
                .keys()
                .map(String::as_str)
                .collect();
            Err(InstructionError::UnknownPoi {
                name,
                known: if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                },
            })
        }
        _ => Ok(()),
    }
}

/// How much of its speed a robot heading `h` may use given the robots ahead of it in its
/// lane: 1 when the way is clear, down to 0 at a gap of `keep`. Robots crossing the lane
/// (heading more than 60° away from `h`) are not waited for, so two robots never wait for
/// each other at a crossing.
fn clearance_factor(
    w: &SwarmWorld,
    e: EntityId,
    p: &crate::ecs::SwarmPose,
    h: (f64, f64),
    keep: f64,
) -> f64 {
    let grid = w.res.get::<SpatialGrid>();
    let own = w
        .collider
        .get(e)
        .map(|s| s.bounding_radius())
        .unwrap_or(0.0);
    let slow = keep + 10.0;
    let mut factor: f64 = 1.0;
    grid.for_each_near(p.x, p.y, slow + own + grid.max_extent, |m| {
        let other = EntityId(grid.ids[m]);
        if other == e {
            return;
        }
        if !w.vel.has(other) {
            return;
        }
        let (rx, ry) = (grid.xs[m] - p.x, grid.ys[m] - p.y);
        let ahead = rx * h.0 + ry * h.1;
        let side = -rx * h.1 + ry * h.0;
        let r = grid.shapes[m].bounding_radius();
        if ahead <= 0.0 || side.abs() >= own + r {
            return;
        }
        let theta = w.pose.get(other).map(|q| q.theta).unwrap_or(0.0);
        if theta.cos() * h.0 + theta.sin() * h.1 < 0.5 {
            return;
        }
        let gap = ahead - own - r;
        factor = factor.min(((gap - keep) / (slow - keep)).clamp(0.0, 1.0));
    });
    factor
}

/// The path system: steers every entity with a [`Path`] along its waypoints at the path's
/// speed (by setting its velocity; movement moves it), keeping its distance in its lane and
/// taking crossings in turn ([`crate::nav::crossing`]) when its navigator says so. At the last
/// waypoint it removes the path, stops the robot and raises `EndOfPath`. Also offers the
/// `Go` instruction.
#[derive(Debug, Default)]
pub struct PathSystem;

impl System for PathSystem {
    fn name(&self) -> &str {
        "path"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let dt = ctx.dt;
        let w = &mut ctx.world;
        let mut done = Vec::new();
        let mut paths = std::mem::take(&mut w.path);
        let mut crossings = std::mem::take(w.res.get_mut::<Crossings>());
        for (e, node, next) in crossings.update(w, &paths, ctx.frame, dt) {
            let Some(path) = paths.get_mut(e) else {
                continue;
            };
            let Some(&(gx, gy)) = path.points.last() else {
                continue;
            };
            let (a, b) = (
                w.res.get::<NavMap>().nodes()[node as usize],
                w.res.get::<NavMap>().nodes()[next as usize],
            );
            if let Ok(rest) = w
                .res
                .get_mut::<NavMap>()
                .route(b.0, b.1, &Goal::Point(gx, gy))
            {
                let mut points = vec![a, b];
                points.extend(rest.into_iter().skip_while(|&p| p == b));
                *path = Path {
                    points,
                    next: 0,
                    speed: path.speed,
                };
            }
        }
        for (e, path) in paths.iter_mut() {
            let Some(p) = w.pose.get(e).copied() else {
                continue;
            };
            let mut v = (0.0, 0.0);
            loop {
                let Some(&(tx, ty)) = path.points.get(path.next) else {
                    done.push(e);
                    break;
                };
                let (dx, dy) = (tx - p.x, ty - p.y);
                let d = (dx * dx + dy * dy).sqrt();
                if d < 1e-6 {
                    path.next += 1;
                    continue;
                }
                let mut speed = path.speed;
                if let Some(nav) = w.navigator.get(e) {
                    if nav.keep_clear > 0.0 {
                        speed *= clearance_factor(w, e, &p, (dx / d, dy / d), nav.keep_clear);
                    }
                }
                if let Some(room) = crossings.limit(w, e) {
                    speed = speed.min(room / dt);
                }
                let step = speed * dt;
                if d <= step {
                    v = (dx / dt, dy / dt);
                    path.next += 1;
                } else {
                    v = (dx / d * speed, dy / d * speed);
                }
                break;
            }
            if let Some(vel) = w.vel.get_mut(e) {
                vel.x = v.0;
                vel.y = v.1;
                vel.w = 0.0;
                if v != (0.0, 0.0) {
                    let heading = v.1.atan2(v.0);
                    vel.w = simrob_math::wrap_angle(heading - p.theta) / dt;
                }
            }
        }
        w.path = paths;
        *w.res.get_mut::<Crossings>() = crossings;
        for e in done {
            w.path.remove(e);
            if let Some(v) = w.vel.get_mut(e) {
                *v = Default::default();
            }
            ctx.events.emit(Event::about(Tag::END_OF_PATH, e));
        }
    }

    fn instructions(&self) -> Vec<(String, InstructionDef)> {
        vec![(
            "Go".into(),
            InstructionDef {
                usage: "Go POI | Go X,Y",
                min_args: 1,
                max_args: 2,
                run: Arc::new(go),
                check: Some(check_go),
            },
        )]
    }
}

/// A distance in route cost units (`COST_SCALE` a map unit), rounded by `round` and capped at
/// `u32::MAX` (4,294 km): a route's sum over at most `u32::MAX` edges never overflows, however
/// far apart a map puts its points.
fn cost_units(distance: f64, round: fn(f64) -> f64) -> u64 {
    round(distance * COST_SCALE).min(f64::from(u32::MAX)) as u64
}

/// The bucket keys from `k - reach` to `k + reach`, clamped to `i64`: a point far out (a
/// coordinate of 1e130 keys to `i64::MAX`) is looked for in the buckets that exist there.
fn around(k: i64, reach: i64) -> std::ops::RangeInclusive<i64> {
    k.saturating_sub(reach)..=k.saturating_add(reach)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hand-checked map: A(0,0) – B(10,0) – C(20,0) is 20 long; the other way round,
    /// A – (0,5) – (20,5) – (20,30) – C, is 5 + 20 + 25 + 30 = 80. "island" has no path.
    fn map() -> NavMap {
        let mut m = NavMap::new(1.0, 8.0);
        m.add_polyline(&[(0.0, 0.0), (10.0, 0.0), (20.0, 0.0)]);
        m.add_polyline(&[
            (0.0, 0.0),
            (0.0, 5.0),
            (20.0, 5.0),
            (20.0, 30.0),
            (20.0, 0.0),
        ]);
        m.add_poi("a", 0.0, 0.0);
        m.add_poi("c", 20.0, 0.0);
        m.add_poi("island", 100.0, 100.0);
        m.extend = false;
        m
    }

    #[test]
    fn shortest_route_on_a_hand_checked_map() {
        let mut m = map();
        let r = m.route(0.0, 0.0, &Goal::Poi("c".into())).unwrap();
        assert_eq!(r, vec![(10.0, 0.0), (20.0, 0.0)]);
        // Cut B–C: now A, D, (20,5), C is the shortest (5 + 20 + 5 = 30) rather than via (20,30).
        let mut m2 = NavMap::new(1.0, 8.0);
        m2.add_polyline(&[(0.0, 0.0), (10.0, 0.0)]);
        m2.add_polyline(&[(0.0, 0.0), (0.0, 5.0), (20.0, 5.0), (20.0, 0.0)]);
        m2.add_polyline(&[(0.0, 5.0), (0.0, 30.0), (20.0, 30.0), (20.0, 5.0)]);
        m2.add_poi("c", 20.0, 0.0);
        let r = m2.route(0.0, 0.0, &Goal::Poi("c".into())).unwrap();
        assert_eq!(r, vec![(0.0, 5.0), (20.0, 5.0), (20.0, 0.0)]);
    }

    #[test]
    fn nearby_points_merge() {
        let mut m = NavMap::new(2.0, 8.0);
        m.add_polyline(&[(0.0, 0.0), (10.0, 0.0)]);
        m.add_polyline(&[(10.5, 0.5), (10.0, 20.0)]);
        assert_eq!(m.nodes().len(), 3, "(10.5, 0.5) merges into (10, 0)");
        let r = m.route(0.0, 0.0, &Goal::Point(10.0, 20.0)).unwrap();
        assert_eq!(r, vec![(10.0, 0.0), (10.0, 20.0)]);
    }

    #[test]
    fn unreachable_goals_are_reported() {
        let mut m = map();
        let e = m.route(0.0, 0.0, &Goal::Poi("island".into())).unwrap_err();
        assert!(
            matches!(&e, RouteError::NoPath { to, .. } if to == "island"),
            "{e}"
        );
        assert_eq!(e.to_string(), "no map-path leads from (0.0, 0.0) to island");
        let e = m.route(500.0, 500.0, &Goal::Poi("c".into())).unwrap_err();
        assert!(matches!(e, RouteError::StartOffMap { .. }), "{e}");
        assert!(e.to_string().starts_with("no map point within"), "{e}");
        let e = m.route(0.0, 0.0, &Goal::Poi("nowhere".into())).unwrap_err();
        assert_eq!(e, RouteError::UnknownPoi("nowhere".into()));
        assert_eq!(e.to_string(), "there is no POI called \"nowhere\"");
    }

    #[test]
    fn one_way_lanes_are_followed() {
        let mut m = NavMap::new(1.0, 60.0);
        m.extend = false;
        // A one-way loop: (0,0) → (100,0) → (100,100) → (0,100) → (0,0).
        m.add_oneway_polyline(&[
            (0.0, 0.0),
            (100.0, 0.0),
            (100.0, 100.0),
            (0.0, 100.0),
            (0.0, 0.0),
        ]);
        m.add_poi("corner", 0.0, 100.0);
        // From (10, 0), on the first lane, the way to (0, 100) goes all the way round.
        let r = m.route(10.0, 0.0, &Goal::Poi("corner".into())).unwrap();
        assert_eq!(r, vec![(100.0, 0.0), (100.0, 100.0), (0.0, 100.0)]);
    }

    #[test]
    fn routes_extend_the_shared_map() {
        let mut m = map();
        m.extend = true;
        let before = m.nodes().len();
        // Start 6 units off the graph, go to a coordinate 7 units off it.
        m.route(6.0, -6.0, &Goal::Point(27.0, 0.0)).unwrap();
        assert_eq!(m.nodes().len(), before + 2);
        // The new points are now part of the map: (27, 0) is a graph point.
        assert!(m.nearest(27.0, 0.0, 0.1).is_some());
    }

    /// A robot in the middle of a segment longer than `2 × max_off_path` (or stopped there
    /// by a collision) got "no map point within 60", though it stood on the path; a `Go X,Y`
    /// target there got "no map point within 60 of the goal".
    #[test]
    fn the_middle_of_a_long_segment_is_on_the_map() {
        let mut m = NavMap::new(8.0, 60.0);
        m.extend = false;
        m.add_polyline(&[(40.0, 100.0), (360.0, 100.0)]);
        m.add_poi("a", 40.0, 100.0);
        m.add_poi("b", 360.0, 100.0);
        // From the middle (on it, or 30 off it) to either end.
        let r = m.route(196.0, 100.0, &Goal::Poi("b".into())).unwrap();
        assert_eq!(r, vec![(360.0, 100.0)]);
        let r = m.route(150.0, 130.0, &Goal::Poi("a".into())).unwrap();
        assert_eq!(r, vec![(40.0, 100.0)]);
        // To a point in the middle, from an end: by the nearer way.
        let r = m.route(40.0, 100.0, &Goal::Point(200.0, 100.0)).unwrap();
        assert_eq!(r, vec![(200.0, 100.0)]);
        let r = m.route(360.0, 100.0, &Goal::Point(300.0, 120.0)).unwrap();
        assert_eq!(r, vec![(300.0, 120.0)]);
        // From the middle to the middle, and still not beyond max_off_path.
        let r = m.route(100.0, 100.0, &Goal::Point(250.0, 100.0)).unwrap();
        assert_eq!(r.last(), Some(&(250.0, 100.0)));
        let e = m.route(200.0, 161.0, &Goal::Poi("b".into())).unwrap_err();
        assert!(matches!(e, RouteError::StartOffMap { .. }), "{e}");
        let e = m
            .route(40.0, 100.0, &Goal::Point(200.0, 190.0))
            .unwrap_err();
        assert!(matches!(e, RouteError::GoalOffMap { .. }), "{e}");
        // A one-way segment is taken its way only: from its middle to its head, then round.
        let mut m = NavMap::new(1.0, 60.0);
        m.extend = false;
        m.add_oneway_polyline(&[
            (0.0, 0.0),
            (300.0, 0.0),
            (300.0, 40.0),
            (0.0, 40.0),
            (0.0, 0.0),
        ]);
        let r = m.route(150.0, 0.0, &Goal::Point(50.0, 0.0)).unwrap();
        assert_eq!(
            r,
            vec![
                (300.0, 0.0),
                (300.0, 40.0),
                (0.0, 40.0),
                (0.0, 0.0),
                (50.0, 0.0)
            ]
        );
    }

    /// A draw.io path at y = 3.9e130 (its key is `i64::MAX`) overflowed the bucket search.
    #[test]
    fn points_far_out_are_kept_apart_without_overflow() {
        let mut m = NavMap::new(1.0, 8.0);
        let far = 3.9e130;
        m.add_polyline(&[(0.0, far), (0.0, -far), (far, far), (-far, -far)]);
        assert_eq!(m.nodes().len(), 4);
        assert_eq!(m.nearest(0.0, far, 1.0), Some(0));
        assert_eq!(m.nearest(-far, -far, 1.0), Some(3));
        assert_eq!(m.nearest(0.0, 0.0, 1.0), None);
        // Its costs overflowed the route search.
        m.add_poi("far", far, far);
        let r = m.route(0.0, far, &Goal::Poi("far".into()));
        assert_eq!(r.map(|w| w.last().copied()), Ok(Some((far, far))));
    }
}
