//! Small 2D geometry: vectors, axis-aligned rectangles, collision shapes (boxes and discs
//! that do not rotate), and the exact queries simrob's 2D engines need (ray against a box
//! or a disc, overlap of two shapes, moving disc against a box or a disc, closest points).
//! The Mobile Robot Simulator and the swarm layer both use it.
//!
//! Frame: x to the right, y **down** (image coordinates); lengths in the caller's unit
//! (inches for the Mobile Robot Simulator, map units for the swarm). An angle `a` points
//! along `(cos a, sin a)`, so increasing angles turn **clockwise** on the screen.

use std::ops::{Add, Mul, Neg, Sub};

/// A 2D vector or point (inches).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Vec2 {
    /// Rightwards.
    pub x: f64,
    /// Downwards.
    pub y: f64,
}

impl Vec2 {
    /// The zero vector.
    pub const ZERO: Vec2 = Vec2 { x: 0.0, y: 0.0 };

    /// A vector from its coordinates.
    pub const fn new(x: f64, y: f64) -> Self {
        Vec2 { x, y }
    }

    /// The unit vector of a heading in degrees (0 = +x, 90 = +y, i.e. clockwise on screen).
    pub fn from_heading_deg(deg: f64) -> Self {
        let (s, c) = deg.to_radians().sin_cos();
        Vec2 { x: c, y: s }
    }

    /// Dot product.
    pub fn dot(self, o: Vec2) -> f64 {
        self.x * o.x + self.y * o.y
    }

    /// Squared length.
    pub fn length_squared(self) -> f64 {
        self.dot(self)
    }

    /// Length.
    pub fn length(self) -> f64 {
        self.length_squared().sqrt()
    }

    /// Heading of this vector in degrees, in `[0, 360)` (y down: clockwise).
    pub fn heading_deg(self) -> f64 {
        normalize_deg(self.y.atan2(self.x).to_degrees())
    }

    /// True when both coordinates are finite.
    pub fn is_finite(self) -> bool {
        self.x.is_finite() && self.y.is_finite()
    }
}

impl Add for Vec2 {
    type Output = Vec2;
    fn add(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x + o.x, self.y + o.y)
    }
}

impl Sub for Vec2 {
    type Output = Vec2;
    fn sub(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x - o.x, self.y - o.y)
    }
}

impl Mul<f64> for Vec2 {
    type Output = Vec2;
    fn mul(self, k: f64) -> Vec2 {
        Vec2::new(self.x * k, self.y * k)
    }
}

impl Neg for Vec2 {
    type Output = Vec2;
    fn neg(self) -> Vec2 {
        Vec2::new(-self.x, -self.y)
    }
}

/// An angle in degrees brought into `[0, 360)`.
pub fn normalize_deg(deg: f64) -> f64 {
    let a = deg.rem_euclid(360.0);
    if a >= 360.0 {
        0.0
    } else {
        a
    }
}

/// A closed axis-aligned rectangle `[x1, x2] × [y1, y2]` (y down: `y1` is the top edge).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left.
    pub x1: f64,
    /// Top.
    pub y1: f64,
    /// Right.
    pub x2: f64,
    /// Bottom.
    pub y2: f64,
}

impl Rect {
    /// A rectangle from two opposite corners in any order.
    pub fn new(xa: f64, ya: f64, xb: f64, yb: f64) -> Self {
        Rect {
            x1: xa.min(xb),
            y1: ya.min(yb),
            x2: xa.max(xb),
            y2: ya.max(yb),
        }
    }

    /// True when `p` lies in the rectangle (edges included).
    pub fn contains(&self, p: Vec2) -> bool {
        p.x >= self.x1 && p.x <= self.x2 && p.y >= self.y1 && p.y <= self.y2
    }

    /// The point of the rectangle closest to `p` (`p` itself when inside).
    pub fn closest_point(&self, p: Vec2) -> Vec2 {
        Vec2::new(p.x.clamp(self.x1, self.x2), p.y.clamp(self.y1, self.y2))
    }

    /// True when the two rectangles share at least one point.
    pub fn intersects(&self, o: &Rect) -> bool {
        self.x1 <= o.x2 && o.x1 <= self.x2 && self.y1 <= o.y2 && o.y1 <= self.y2
    }
}

/// A ray prepared for repeated box tests: origin, unit direction and reciprocal direction.
#[derive(Clone, Copy, Debug)]
pub struct Ray {
    /// Where the ray starts.
    pub origin: Vec2,
    /// Unit direction.
    pub dir: Vec2,
    inv: Vec2,
}

impl Ray {
    /// A ray from `origin` along `dir` (normalised here; a zero `dir` gives +x).
    pub fn new(origin: Vec2, dir: Vec2) -> Self {
        let len = dir.length();
        let dir = if len > 0.0 && len.is_finite() {
            dir * (1.0 / len)
        } else {
            Vec2::new(1.0, 0.0)
        };
        Ray {
            origin,
            dir,
            inv: Vec2::new(1.0 / dir.x, 1.0 / dir.y),
        }
    }

    /// A ray from `origin` along `dir`, which must already be a unit vector (no
    /// normalisation: for hot loops that reuse precomputed directions).
    #[inline]
    pub fn unit(origin: Vec2, dir: Vec2) -> Self {
        Ray {
            origin,
            dir,
            inv: Vec2::new(1.0 / dir.x, 1.0 / dir.y),
        }
    }

    /// A ray from `origin` along a heading in degrees.
    pub fn from_heading(origin: Vec2, heading_deg: f64) -> Self {
        Ray::new(origin, Vec2::from_heading_deg(heading_deg))
    }

    /// The reciprocal of the direction (infinite along an axis the ray does not move on).
    pub fn inv(&self) -> Vec2 {
        self.inv
    }

    /// The point at distance `t`.
    pub fn at(&self, t: f64) -> Vec2 {
        self.origin + self.dir * t
    }

    /// Distance along the ray to where it first meets `r` (0 if it starts inside), if it does.
    #[inline]
    pub fn hit_rect(&self, r: &Rect) -> Option<f64> {
        let (mut t0, mut t1) = (0.0f64, f64::INFINITY);
        if self.dir.x == 0.0 {
            if self.origin.x < r.x1 || self.origin.x > r.x2 {
                return None;
            }
        } else {
            let a = (r.x1 - self.origin.x) * self.inv.x;
            let b = (r.x2 - self.origin.x) * self.inv.x;
            t0 = t0.max(a.min(b));
            t1 = t1.min(a.max(b));
        }
        if self.dir.y == 0.0 {
            if self.origin.y < r.y1 || self.origin.y > r.y2 {
                return None;
            }
        } else {
            let a = (r.y1 - self.origin.y) * self.inv.y;
            let b = (r.y2 - self.origin.y) * self.inv.y;
            t0 = t0.max(a.min(b));
            t1 = t1.min(a.max(b));
        }
        (t0 <= t1).then_some(t0)
    }

    /// Distance along the ray to where it first meets the disc (`centre`, `radius`), if it
    /// does (0 if it starts inside).
    pub fn hit_disc(&self, centre: Vec2, radius: f64) -> Option<f64> {
        let m = self.origin - centre;
        let c = m.length_squared() - radius * radius;
        if c <= 0.0 {
            return Some(0.0);
        }
        let b = m.dot(self.dir);
        if b > 0.0 {
            return None;
        }
        let disc = b * b - c;
        if disc < 0.0 {
            return None;
        }
        Some((-b - disc.sqrt()).max(0.0))
    }
}

/// A collision shape centred on its body's position; boxes are axis-aligned and do not
/// rotate with the body.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// An axis-aligned box given by its half width and half height.
    Box {
        /// Half the width, along x, in inches.
        hw: f64,
        /// Half the height, along y, in inches.
        hh: f64,
    },
    /// A disc of radius `r`.
    Circle {
        /// The radius, in inches.
        r: f64,
    },
}

impl Default for Shape {
    fn default() -> Self {
        Shape::Circle { r: 1.0 }
    }
}

impl Shape {
    /// Half extents of the shape's bounding box.
    #[inline]
    pub fn half_extents(&self) -> (f64, f64) {
        match *self {
            Shape::Box { hw, hh } => (hw, hh),
            Shape::Circle { r } => (r, r),
        }
    }

    /// Radius of the smallest disc that holds the shape.
    #[inline]
    pub fn bounding_radius(&self) -> f64 {
        match *self {
            Shape::Box { hw, hh } => (hw * hw + hh * hh).sqrt(),
            Shape::Circle { r } => r,
        }
    }

    /// The shape placed at `centre`, as a rectangle (its bounding box).
    #[inline]
    pub fn bounds(&self, centre: Vec2) -> Rect {
        let (hw, hh) = self.half_extents();
        Rect::new(centre.x - hw, centre.y - hh, centre.x + hw, centre.y + hh)
    }
}

/// Whether two shapes at `(ax, ay)` and `(bx, by)` overlap (touching is not overlapping).
#[inline]
pub fn overlaps(a: Shape, ax: f64, ay: f64, b: Shape, bx: f64, by: f64) -> bool {
    let dx = bx - ax;
    let dy = by - ay;
    match (a, b) {
        (Shape::Box { hw: w1, hh: h1 }, Shape::Box { hw: w2, hh: h2 }) => {
            dx.abs() < w1 + w2 && dy.abs() < h1 + h2
        }
        (Shape::Circle { r: r1 }, Shape::Circle { r: r2 }) => {
            let r = r1 + r2;
            dx * dx + dy * dy < r * r
        }
        (Shape::Box { hw, hh }, Shape::Circle { r }) => circle_box(dx, dy, r, hw, hh),
        (Shape::Circle { r }, Shape::Box { hw, hh }) => circle_box(-dx, -dy, r, hw, hh),
    }
}

/// A circle of radius `r` at `(dx, dy)` relative to a box's centre.
#[inline]
fn circle_box(dx: f64, dy: f64, r: f64, hw: f64, hh: f64) -> bool {
    let qx = (dx.abs() - hw).max(0.0);
    let qy = (dy.abs() - hh).max(0.0);
    qx * qx + qy * qy < r * r
}

/// Distance along the unit ray `(ox, oy) + t (dx, dy)`, `t >= 0`, to `shape` at `(cx, cy)`,
/// or `None` if the ray misses it. A ray starting inside the shape hits at `t = 0`.
#[inline]
pub fn ray_cast(ox: f64, oy: f64, dx: f64, dy: f64, shape: Shape, cx: f64, cy: f64) -> Option<f64> {
    let ray = Ray::unit(Vec2::new(ox, oy), Vec2::new(dx, dy));
    let centre = Vec2::new(cx, cy);
    match shape {
        Shape::Box { .. } => ray.hit_rect(&shape.bounds(centre)),
        Shape::Circle { r } => ray.hit_disc(centre, r),
    }
}

/// Fraction `s ∈ [0, 1]` of the motion `from → from + d` that a disc of radius `r` can make
/// before touching the rectangle, or `None` if it never touches it during the motion.
///
/// A disc that already touches or overlaps the rectangle at `from` is stopped (`Some(0)`) only
/// if the motion takes it deeper; moving away or sliding tangentially is free, so a robot in
/// contact can always back off.
pub fn sweep_disc_rect(from: Vec2, d: Vec2, r: f64, rect: &Rect) -> Option<f64> {
    let c = rect.closest_point(from);
    let n = from - c;
    let dist2 = n.length_squared();
    if dist2 <= r * r {
        if dist2 == 0.0 {
            // Centre inside the obstacle (only possible if an obstacle was put on the robot):
            // let it move so that it can leave.
            return None;
        }
        return (d.dot(n) < 0.0).then_some(0.0);
    }
    let dd = d.length_squared();
    if dd == 0.0 {
        return None;
    }
    let mut best: Option<f64> = None;
    let mut consider = |t: Option<f64>| {
        if let Some(t) = t {
            if (0.0..=1.0).contains(&t) && best.is_none_or(|b| t < b) {
                best = Some(t);
            }
        }
    };
    // The Minkowski sum of the rectangle and the disc: two slabs and four corner circles.
    consider(segment_box_entry(
        from,
        d,
        rect.x1 - r,
        rect.y1,
        rect.x2 + r,
        rect.y2,
    ));
    consider(segment_box_entry(
        from,
        d,
        rect.x1,
        rect.y1 - r,
        rect.x2,
        rect.y2 + r,
    ));
    for corner in [
        Vec2::new(rect.x1, rect.y1),
        Vec2::new(rect.x2, rect.y1),
        Vec2::new(rect.x1, rect.y2),
        Vec2::new(rect.x2, rect.y2),
    ] {
        consider(segment_circle_entry(from, d, corner, r));
    }
    best
}

/// Fraction of the motion `from → from + d` a disc of radius `r` can make before touching a
/// disc of radius `other_r` at `other` (same contact rules as [`sweep_disc_rect`]).
pub fn sweep_disc_disc(from: Vec2, d: Vec2, r: f64, other: Vec2, other_r: f64) -> Option<f64> {
    let n = from - other;
    let rr = r + other_r;
    let dist2 = n.length_squared();
    if dist2 <= rr * rr {
        if dist2 == 0.0 {
            return None;
        }
        return (d.dot(n) < 0.0).then_some(0.0);
    }
    segment_circle_entry(from, d, other, rr).filter(|t| (0.0..=1.0).contains(t))
}

/// Parameter `t` (in units of `d`) at which the segment `from + t d` enters the box, if the
/// start is outside it.
fn segment_box_entry(from: Vec2, d: Vec2, x1: f64, y1: f64, x2: f64, y2: f64) -> Option<f64> {
    let (mut t0, mut t1) = (f64::NEG_INFINITY, f64::INFINITY);
    for (o, dv, lo, hi) in [(from.x, d.x, x1, x2), (from.y, d.y, y1, y2)] {
        if dv == 0.0 {
            if o < lo || o > hi {
                return None;
            }
        } else {
            let a = (lo - o) / dv;
            let b = (hi - o) / dv;
            t0 = t0.max(a.min(b));
            t1 = t1.min(a.max(b));
        }
    }
    (t0 <= t1 && t0 >= 0.0).then_some(t0)
}

/// Parameter `t` at which `from + t d` enters the circle, if the start is outside it.
fn segment_circle_entry(from: Vec2, d: Vec2, centre: Vec2, r: f64) -> Option<f64> {
    let m = from - centre;
    let a = d.length_squared();
    if a == 0.0 {
        return None;
    }
    let b = m.dot(d);
    let c = m.length_squared() - r * r;
    if c <= 0.0 || b >= 0.0 {
        return None;
    }
    let disc = b * b - a * c;
    if disc < 0.0 {
        return None;
    }
    Some((-b - disc.sqrt()) / a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ray_hits_rect_faces() {
        let r = Rect::new(10.0, -5.0, 20.0, 5.0);
        let ray = Ray::new(Vec2::ZERO, Vec2::new(1.0, 0.0));
        assert_eq!(ray.hit_rect(&r), Some(10.0));
        let ray = Ray::new(Vec2::ZERO, Vec2::new(-1.0, 0.0));
        assert_eq!(ray.hit_rect(&r), None);
        let inside = Ray::new(Vec2::new(15.0, 0.0), Vec2::new(0.0, 1.0));
        assert_eq!(inside.hit_rect(&r), Some(0.0));
        let diag = Ray::new(Vec2::ZERO, Vec2::new(1.0, 1.0));
        assert_eq!(diag.hit_rect(&r), None);
        let tall = Rect::new(10.0, -5.0, 20.0, 15.0);
        let t = diag.hit_rect(&tall).unwrap_or(f64::NAN);
        assert!((t - 10.0 * 2f64.sqrt()).abs() < 1e-12, "{t}");
    }

    #[test]
    fn disc_stops_at_wall_and_can_leave() {
        let wall = Rect::new(20.0, -100.0, 30.0, 100.0);
        let s = sweep_disc_rect(Vec2::ZERO, Vec2::new(20.0, 0.0), 10.0, &wall);
        assert_eq!(s, Some(0.5));
        // Touching: going in is blocked, backing off or sliding is free.
        let touch = Vec2::new(10.0, 0.0);
        assert_eq!(
            sweep_disc_rect(touch, Vec2::new(1.0, 0.0), 10.0, &wall),
            Some(0.0)
        );
        assert_eq!(
            sweep_disc_rect(touch, Vec2::new(-1.0, 0.0), 10.0, &wall),
            None
        );
        assert_eq!(
            sweep_disc_rect(touch, Vec2::new(0.0, 5.0), 10.0, &wall),
            None
        );
    }

    #[test]
    fn disc_hits_corner() {
        let block = Rect::new(0.0, 0.0, 10.0, 10.0);
        // Moving along the diagonal towards the corner (10, 10) from (30, 30).
        let s = sweep_disc_rect(Vec2::new(30.0, 30.0), Vec2::new(-20.0, -20.0), 10.0, &block)
            .unwrap_or(f64::NAN);
        let travelled = s * 20.0 * 2f64.sqrt();
        assert!(
            (travelled - (20.0 * 2f64.sqrt() - 10.0)).abs() < 1e-9,
            "{travelled}"
        );
    }

    #[test]
    fn shapes_overlap_and_rays_hit_them() {
        let b = Shape::Box { hw: 2.5, hh: 2.5 };
        assert!(overlaps(b, 0.0, 0.0, b, 4.9, 0.0));
        assert!(!overlaps(b, 0.0, 0.0, b, 5.0, 0.0));
        let c = Shape::Circle { r: 1.0 };
        assert!(overlaps(c, 0.0, 0.0, b, 3.4, 0.0));
        assert!(!overlaps(c, 0.0, 0.0, b, 3.6, 0.0));
        assert!(!overlaps(b, 0.0, 0.0, c, 3.3, 3.3));
        let unit = Shape::Box { hw: 1.0, hh: 1.0 };
        assert_eq!(ray_cast(0.0, 0.0, 1.0, 0.0, unit, 5.0, 0.0), Some(4.0));
        assert_eq!(ray_cast(0.0, 0.0, -1.0, 0.0, unit, 5.0, 0.0), None);
        let t = ray_cast(0.0, 0.0, 0.0, 1.0, c, 0.0, 10.0).unwrap_or(-1.0);
        assert!((t - 9.0).abs() < 1e-12);
        assert_eq!(ray_cast(0.0, 0.0, 1.0, 0.0, c, 0.0, 10.0), None);
        assert_eq!(ray_cast(5.0, 0.0, 1.0, 0.0, unit, 5.0, 0.0), Some(0.0));
    }

    #[test]
    fn headings_are_clockwise_with_y_down() {
        let v = Vec2::from_heading_deg(90.0);
        assert!(v.x.abs() < 1e-12 && (v.y - 1.0).abs() < 1e-12);
        assert!((Vec2::new(0.0, -1.0).heading_deg() - 270.0).abs() < 1e-9);
        assert_eq!(normalize_deg(-0.0), 0.0);
        assert_eq!(normalize_deg(720.5), 0.5);
    }
}
