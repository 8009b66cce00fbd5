//! 2D geometry: shapes, overlap tests and ray casts. Units are map units (draw.io pixels for
//! maps drawn in draw.io), x to the right, y down, angles in radians measured from +x towards
//! +y (clockwise on screen).

use serde::{Deserialize, Serialize};

/// A collision shape centred on its entity's position (axis-aligned; boxes do not rotate).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Shape {
    /// An axis-aligned box given by its half width and half height.
    Box { hw: f64, hh: f64 },
    /// A disc of radius `r`.
    Circle { r: f64 },
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
    match shape {
        Shape::Box { hw, hh } => ray_box(ox, oy, dx, dy, cx - hw, cy - hh, cx + hw, cy + hh),
        Shape::Circle { r } => {
            let lx = cx - ox;
            let ly = cy - oy;
            let c = lx * lx + ly * ly - r * r;
            if c <= 0.0 {
                return Some(0.0);
            }
            let b = lx * dx + ly * dy;
            if b <= 0.0 {
                return None;
            }
            let disc = b * b - c;
            if disc < 0.0 {
                return None;
            }
            Some(b - disc.sqrt())
        }
    }
}

/// Slab test of a unit ray against the box `[x0, x1] × [y0, y1]`.
#[allow(clippy::too_many_arguments)]
#[inline]
pub fn ray_box(
    ox: f64,
    oy: f64,
    dx: f64,
    dy: f64,
    x0: f64,
    y0: f64,
    x1: f64,
    y1: f64,
) -> Option<f64> {
    let mut tmin: f64 = 0.0;
    let mut tmax = f64::INFINITY;
    for (o, d, lo, hi) in [(ox, dx, x0, x1), (oy, dy, y0, y1)] {
        if d.abs() < 1e-12 {
            if o < lo || o > hi {
                return None;
            }
        } else {
            let inv = 1.0 / d;
            let (mut t0, mut t1) = ((lo - o) * inv, (hi - o) * inv);
            if t0 > t1 {
                std::mem::swap(&mut t0, &mut t1);
            }
            tmin = tmin.max(t0);
            tmax = tmax.min(t1);
            if tmin > tmax {
                return None;
            }
        }
    }
    Some(tmin)
}

/// `a` wrapped into `(-π, π]`.
#[inline]
pub fn wrap_angle(a: f64) -> f64 {
    let mut a = a % std::f64::consts::TAU;
    if a > std::f64::consts::PI {
        a -= std::f64::consts::TAU;
    } else if a <= -std::f64::consts::PI {
        a += std::f64::consts::TAU;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_tests() {
        let b = Shape::Box { hw: 2.5, hh: 2.5 };
        assert!(overlaps(b, 0.0, 0.0, b, 4.9, 0.0));
        assert!(!overlaps(b, 0.0, 0.0, b, 5.0, 0.0));
        let c = Shape::Circle { r: 1.0 };
        assert!(overlaps(c, 0.0, 0.0, b, 3.4, 0.0));
        assert!(!overlaps(c, 0.0, 0.0, b, 3.6, 0.0));
        assert!(!overlaps(b, 0.0, 0.0, c, 3.3, 3.3));
    }

    #[test]
    fn ray_casts() {
        let b = Shape::Box { hw: 1.0, hh: 1.0 };
        assert_eq!(ray_cast(0.0, 0.0, 1.0, 0.0, b, 5.0, 0.0), Some(4.0));
        assert_eq!(ray_cast(0.0, 0.0, -1.0, 0.0, b, 5.0, 0.0), None);
        let c = Shape::Circle { r: 1.0 };
        let t = ray_cast(0.0, 0.0, 0.0, 1.0, c, 0.0, 10.0).unwrap_or(-1.0);
        assert!((t - 9.0).abs() < 1e-12);
        assert_eq!(ray_cast(0.0, 0.0, 1.0, 0.0, c, 0.0, 10.0), None);
    }
}
