//! A world of disc robots on a map: fixed-step, deterministic update with robot–robot
//! collisions, sonar that also sees other robots, bumpers that also feel them.

use std::collections::BTreeMap;

use crate::geom::{sweep_disc_disc, Ray, Rect, Vec2};
use crate::map::{Map, MapError};
use crate::robot::{arc_motion, FlatPose, RobotModel, Velocity, CONTACT_SKIN};

/// The default fixed step, in seconds (100 Hz).
pub const DEFAULT_TIMESTEP: f64 = 0.01;

/// A robot's handle in a [`FlatWorld`]. Ids are handed out in increasing order and never reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RobotId(pub u32);

/// A robot in a [`FlatWorld`].
#[derive(Clone, Debug, PartialEq)]
pub struct Robot {
    /// Its geometry and sensors.
    pub model: RobotModel,
    /// The true pose. Odometry is exact (no slip, no noise), so it is also the odometry.
    pub pose: FlatPose,
    /// The commanded velocity; it persists while the robot is blocked.
    pub velocity: Velocity,
    /// Bit `i` = bumper `i` closed, as of the last step (or placement).
    pub bumpers: u64,
    /// Whether the last step's motion was cut short by a contact.
    pub blocked: bool,
    /// Distance travelled since it was added (inches).
    pub odometer: f64,
    /// The motion the last step made, per second: the displacement in the map's frame
    /// (inches/s; short of the commanded velocity, or zero, against an obstacle) and the
    /// heading's change (degrees/s, clockwise as headings). Zero before the first step and
    /// after a placement.
    pub motion: (Vec2, f64),
}

/// Why a robot could not be placed.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum PlaceError {
    /// Not a finite pose.
    #[error("the pose must be finite numbers")]
    NotFinite,
    /// The disc would overlap a wall, the border or another robot.
    #[error(
        "a robot of radius {} in at ({}, {}) would overlap an obstacle, the map border or another robot",
        simrob_math::Shown::of(.radius),
        simrob_math::Shown::of(.x),
        simrob_math::Shown::of(.y)
    )]
    Occupied {
        /// Centre x.
        x: f64,
        /// Centre y.
        y: f64,
        /// Radius.
        radius: f64,
    },
    /// No such robot.
    #[error("no robot {0}")]
    UnknownRobot(u32),
}

/// Robots on a map, advanced in fixed steps.
///
/// Each [`step`](FlatWorld::step) moves the robots one after another in id order (so the result
/// never depends on anything but the inputs): a robot turns freely and translates until it
/// would touch an obstacle, the border or another robot, where it stops (it does not slide).
/// Then every robot's bumpers are recomputed from what touches its rim.
#[derive(Clone, Debug)]
pub struct FlatWorld {
    map: Map,
    robots: BTreeMap<RobotId, Robot>,
    next_id: u32,
    timestep: f64,
    steps: u64,
    buckets: Buckets,
    /// Largest radius of any robot ever added (a safe bound for neighbour searches).
    max_radius: f64,
}

/// A coarse grid of robot ids for neighbour queries.
#[derive(Clone, Debug)]
struct Buckets {
    cell: f64,
    cols: usize,
    rows: usize,
    cells: Vec<Vec<RobotId>>,
}

impl Buckets {
    fn new(map: &Map) -> Self {
        let side = map.width().max(map.height());
        let cell = (side / 1024.0).max(32.0);
        let cols = ((map.width() / cell).ceil() as usize).max(1);
        let rows = ((map.height() / cell).ceil() as usize).max(1);
        Buckets {
            cell,
            cols,
            rows,
            cells: vec![Vec::new(); cols * rows],
        }
    }

    fn index(&self, p: Vec2) -> usize {
        let c = ((p.x.max(0.0) / self.cell) as usize).min(self.cols - 1);
        let r = ((p.y.max(0.0) / self.cell) as usize).min(self.rows - 1);
        r * self.cols + c
    }

    fn insert(&mut self, id: RobotId, p: Vec2) {
        let i = self.index(p);
        self.cells[i].push(id);
    }

    fn remove(&mut self, id: RobotId, p: Vec2) {
        let i = self.index(p);
        self.cells[i].retain(|&x| x != id);
    }

    /// Ids in the cells that `area` touches.
    fn for_each_in(&self, area: &Rect, mut f: impl FnMut(RobotId)) {
        let c0 = ((area.x1.max(0.0) / self.cell) as usize).min(self.cols - 1);
        let c1 = ((area.x2.max(0.0) / self.cell) as usize).min(self.cols - 1);
        let r0 = ((area.y1.max(0.0) / self.cell) as usize).min(self.rows - 1);
        let r1 = ((area.y2.max(0.0) / self.cell) as usize).min(self.rows - 1);
        for r in r0..=r1 {
            for c in c0..=c1 {
                for &id in &self.cells[r * self.cols + c] {
                    f(id);
                }
            }
        }
    }
}

impl FlatWorld {
    /// An empty world on `map`, stepping [`DEFAULT_TIMESTEP`].
    pub fn new(map: Map) -> Self {
        let buckets = Buckets::new(&map);
        FlatWorld {
            map,
            robots: BTreeMap::new(),
            next_id: 0,
            timestep: DEFAULT_TIMESTEP,
            steps: 0,
            buckets,
            max_radius: 0.0,
        }
    }

    /// Sets the fixed step in seconds (must be positive and finite; others are ignored).
    pub fn set_timestep(&mut self, dt: f64) {
        if dt > 0.0 && dt.is_finite() {
            self.timestep = dt;
        }
    }

    /// The fixed step in seconds.
    pub fn timestep(&self) -> f64 {
        self.timestep
    }

    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }

    /// Simulated time in seconds.
    pub fn time(&self) -> f64 {
        self.steps as f64 * self.timestep
    }

    /// The map.
    pub fn map(&self) -> &Map {
        &self.map
    }

    /// Replaces the map. Robots keep their poses (one now overlapping an obstacle can move
    /// out of it: contacts only stop motion that goes deeper); bumpers are recomputed.
    pub fn set_map(&mut self, map: Map) {
        self.map = map;
        self.buckets = Buckets::new(&self.map);
        let placed: Vec<(RobotId, Vec2)> = self
            .robots
            .iter()
            .map(|(&id, r)| (id, r.pose.position()))
            .collect();
        for (id, p) in placed {
            self.buckets.insert(id, p);
        }
        self.update_bumpers();
    }

    /// Merges a vector map onto the current map (see [`Map::merge`]).
    pub fn merge_map(&mut self, other: &Map) -> Result<(), MapError> {
        self.map.merge(other)?;
        self.update_bumpers();
        Ok(())
    }

    /// Whether a robot of `radius` fits at `p` without overlapping anything (robot `except`
    /// ignored).
    pub fn is_free(&self, p: Vec2, radius: f64, except: Option<RobotId>) -> bool {
        if self.map.disc_overlaps(p, radius) {
            return false;
        }
        let mut free = true;
        let reach = radius + self.max_radius();
        self.buckets.for_each_in(
            &Rect::new(p.x - reach, p.y - reach, p.x + reach, p.y + reach),
            |id| {
                if Some(id) != except {
                    if let Some(o) = self.robots.get(&id) {
                        let rr = radius + o.model.radius;
                        free &= (o.pose.position() - p).length_squared() >= rr * rr;
                    }
                }
            },
        );
        free
    }

    /// The free position nearest to `near` (searched on rings 1 inch apart, up to `max_dist`)
    /// where a robot of `radius` fits.
    pub fn find_free_spot(&self, near: Vec2, radius: f64, max_dist: f64) -> Option<Vec2> {
        if self.is_free(near, radius, None) {
            return Some(near);
        }
        let mut ring = 1.0;
        while ring <= max_dist {
            let n = ((2.0 * std::f64::consts::PI * ring).ceil() as usize).max(8);
            for k in 0..n {
                let a = k as f64 * 360.0 / n as f64;
                let p = near + Vec2::from_heading_deg(a) * ring;
                if self.is_free(p, radius, None) {
                    return Some(p);
                }
            }
            ring += 1.0;
        }
        None
    }

    /// Adds a robot at `pose`; it must not overlap anything.
    pub fn add_robot(&mut self, model: RobotModel, pose: FlatPose) -> Result<RobotId, PlaceError> {
        if !pose.is_finite() {
            return Err(PlaceError::NotFinite);
        }
        let pose = FlatPose::new(pose.x, pose.y, pose.heading_deg);
        if !self.is_free(pose.position(), model.radius, None) {
            return Err(PlaceError::Occupied {
                x: pose.x,
                y: pose.y,
                radius: model.radius,
            });
        }
        let id = RobotId(self.next_id);
        self.next_id += 1;
        self.max_radius = self.max_radius.max(model.radius);
        self.robots.insert(
            id,
            Robot {
                model,
                pose,
                velocity: Velocity::ZERO,
                bumpers: 0,
                blocked: false,
                odometer: 0.0,
                motion: (Vec2::default(), 0.0),
            },
        );
        self.buckets.insert(id, pose.position());
        self.refresh_bumpers(id);
        Ok(id)
    }

    /// Moves a robot to `pose` (teleport); it must not overlap anything. Its velocity is kept.
    pub fn place_robot(&mut self, id: RobotId, pose: FlatPose) -> Result<(), PlaceError> {
        if !pose.is_finite() {
            return Err(PlaceError::NotFinite);
        }
        let pose = FlatPose::new(pose.x, pose.y, pose.heading_deg);
        let Some(r) = self.robots.get(&id) else {
            return Err(PlaceError::UnknownRobot(id.0));
        };
        let (radius, old) = (r.model.radius, r.pose.position());
        if !self.is_free(pose.position(), radius, Some(id)) {
            return Err(PlaceError::Occupied {
                x: pose.x,
                y: pose.y,
                radius,
            });
        }
        self.buckets.remove(id, old);
        self.buckets.insert(id, pose.position());
        if let Some(r) = self.robots.get_mut(&id) {
            r.pose = pose;
            r.motion = (Vec2::default(), 0.0);
        }
        self.update_bumpers();
        Ok(())
    }

    /// Removes a robot.
    pub fn remove_robot(&mut self, id: RobotId) -> Option<Robot> {
        let r = self.robots.remove(&id)?;
        self.buckets.remove(id, r.pose.position());
        self.update_bumpers();
        Some(r)
    }

    /// Sets a robot's commanded velocity (non-finite numbers are refused). Returns whether
    /// the robot exists and the velocity was taken.
    pub fn set_velocity(&mut self, id: RobotId, vel: Velocity) -> bool {
        if !(vel.forward.is_finite() && vel.turn.is_finite()) {
            return false;
        }
        match self.robots.get_mut(&id) {
            Some(r) => {
                r.velocity = vel;
                true
            }
            None => false,
        }
    }

    /// A robot.
    pub fn robot(&self, id: RobotId) -> Option<&Robot> {
        self.robots.get(&id)
    }

    /// All robots in id order.
    pub fn robots(&self) -> impl Iterator<Item = (RobotId, &Robot)> {
        self.robots.iter().map(|(&id, r)| (id, r))
    }

    /// Number of robots.
    pub fn robot_count(&self) -> usize {
        self.robots.len()
    }

    fn max_radius(&self) -> f64 {
        self.max_radius
    }

    /// Advances one fixed step.
    pub fn step(&mut self) {
        let dt = self.timestep;
        let max_r = self.max_radius();
        let ids: Vec<RobotId> = self.robots.keys().copied().collect();
        for id in ids {
            let Some(r) = self.robots.get(&id) else {
                continue;
            };
            let (pose, vel, radius) = (r.pose, r.velocity, r.model.radius);
            let (d, dtheta) = arc_motion(&pose, vel, dt);
            let from = pose.position();
            let len = d.length();
            let mut s: f64 = 1.0;
            if len > 0.0 {
                s = self.map.sweep_disc(from, d, radius);
                let to = from + d;
                let reach = radius + max_r;
                let area = Rect::new(from.x, from.y, to.x, to.y);
                let area = Rect::new(
                    area.x1 - reach,
                    area.y1 - reach,
                    area.x2 + reach,
                    area.y2 + reach,
                );
                self.buckets.for_each_in(&area, |other| {
                    if other != id {
                        if let Some(o) = self.robots.get(&other) {
                            if let Some(t) =
                                sweep_disc_disc(from, d, radius, o.pose.position(), o.model.radius)
                            {
                                s = s.min(t);
                            }
                        }
                    }
                });
            }
            let blocked = s < 1.0;
            let to = if blocked {
                from + d * (s - CONTACT_SKIN / len).max(0.0)
            } else {
                from + d
            };
            let moved = (to - from).length();
            if moved > 0.0 {
                self.buckets.remove(id, from);
                self.buckets.insert(id, to);
            }
            if let Some(r) = self.robots.get_mut(&id) {
                r.pose = FlatPose::new(to.x, to.y, pose.heading_deg + dtheta);
                r.blocked = blocked;
                r.odometer += moved;
                r.motion = if dt > 0.0 {
                    ((to - from) * (1.0 / dt), dtheta / dt)
                } else {
                    (Vec2::default(), 0.0)
                };
            }
        }
        self.steps += 1;
        self.update_bumpers();
    }

    fn update_bumpers(&mut self) {
        let ids: Vec<RobotId> = self.robots.keys().copied().collect();
        for id in ids {
            self.refresh_bumpers(id);
        }
    }

    fn refresh_bumpers(&mut self, id: RobotId) {
        let Some(r) = self.robots.get(&id) else {
            return;
        };
        let mask = self.contact_mask(id, r);
        if let Some(r) = self.robots.get_mut(&id) {
            r.bumpers = mask;
        }
    }

    fn contact_mask(&self, id: RobotId, r: &Robot) -> u64 {
        let model = r.model;
        let centre = r.pose.position();
        let heading = r.pose.heading_deg;
        let mut mask = 0u64;
        let reach = model.radius + model.contact_tolerance;
        self.map.for_each_contact(centre, reach, |c| {
            mask |= 1 << (model.bumper_at(heading, (c - centre).heading_deg()) % 64);
        });
        let around = reach + self.max_radius();
        self.buckets.for_each_in(
            &Rect::new(
                centre.x - around,
                centre.y - around,
                centre.x + around,
                centre.y + around,
            ),
            |other| {
                if other == id {
                    return;
                }
                if let Some(o) = self.robots.get(&other) {
                    let v = o.pose.position() - centre;
                    let rr = reach + o.model.radius;
                    if v.length_squared() <= rr * rr {
                        mask |= 1 << (model.bumper_at(heading, v.heading_deg()) % 64);
                    }
                }
            },
        );
        mask
    }

    /// Distance from a robot's centre along a world heading to the first obstacle or other
    /// robot, if within `max_dist`.
    pub fn cast_from(&self, id: RobotId, heading_deg: f64, max_dist: f64) -> Option<f64> {
        let r = self.robots.get(&id)?;
        let ray = Ray::from_heading(r.pose.position(), heading_deg);
        let mut best = self.map.cast_ray(&ray, max_dist);
        let o = ray.origin;
        let end = ray.at(max_dist);
        let pad = self.max_radius();
        let area = Rect::new(o.x, o.y, end.x, end.y);
        let area = Rect::new(area.x1 - pad, area.y1 - pad, area.x2 + pad, area.y2 + pad);
        self.buckets.for_each_in(&area, |other| {
            if other == id {
                return;
            }
            if let Some(x) = self.robots.get(&other) {
                if let Some(t) = ray.hit_disc(x.pose.position(), x.model.radius) {
                    if t <= max_dist && best.is_none_or(|b| t < b) {
                        best = Some(t);
                    }
                }
            }
        });
        best
    }

    /// The reading of a robot's sonar `i` (surface distance clamped to its model's range),
    /// seeing the map and the other robots. `None` for an unknown robot or sonar.
    pub fn sonar(&self, id: RobotId, i: usize) -> Option<f64> {
        let r = self.robots.get(&id)?;
        if i >= r.model.sonar_count {
            return None;
        }
        let m = r.model;
        let t = self.cast_from(
            id,
            m.sonar_heading(r.pose.heading_deg, i),
            m.radius + m.sonar_max,
        );
        Some(m.sonar_reading(t))
    }

    /// All of a robot's sonar readings, sonar 0 first.
    pub fn sonars(&self, id: RobotId) -> Option<Vec<f64>> {
        let r = self.robots.get(&id)?;
        (0..r.model.sonar_count)
            .map(|i| self.sonar(id, i))
            .collect()
    }

    /// Closed bumpers of a robot (bit `i` = bumper `i`).
    pub fn bumpers(&self, id: RobotId) -> Option<u64> {
        self.robots.get(&id).map(|r| r.bumpers)
    }
}
