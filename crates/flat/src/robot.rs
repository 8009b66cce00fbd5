//! Disc robots: the robot model (size, sonar ring, bumper ring), poses and velocities, the
//! kinematics, and the sensors as pure functions over a [`Map`].

use crate::geom::{normalize_deg, Ray, Vec2};
use crate::map::Map;

/// A robot's pose: centre (inches, y down) and heading in degrees, `[0, 360)`, 0 = +x,
/// increasing **clockwise** on screen.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlatPose {
    /// Centre, x (rightwards).
    pub x: f64,
    /// Centre, y (downwards).
    pub y: f64,
    /// Heading in degrees (clockwise from +x).
    pub heading_deg: f64,
}

impl FlatPose {
    /// A pose; the heading is normalised to `[0, 360)`.
    pub fn new(x: f64, y: f64, heading_deg: f64) -> Self {
        FlatPose {
            x,
            y,
            heading_deg: normalize_deg(heading_deg),
        }
    }

    /// The centre as a vector.
    pub fn position(&self) -> Vec2 {
        Vec2::new(self.x, self.y)
    }

    /// Whether all three numbers are finite.
    pub fn is_finite(&self) -> bool {
        self.x.is_finite() && self.y.is_finite() && self.heading_deg.is_finite()
    }
}

/// Commanded velocities: forward speed in inches/s (negative = backwards) and turn rate in
/// degrees/s (**positive = turn right = clockwise**, as the Nomad-200's protocol says).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Velocity {
    /// Inches per second along the heading.
    pub forward: f64,
    /// Degrees per second, positive clockwise.
    pub turn: f64,
}

impl Velocity {
    /// A velocity.
    pub const fn new(forward: f64, turn: f64) -> Self {
        Velocity { forward, turn }
    }

    /// Standing still.
    pub const ZERO: Velocity = Velocity::new(0.0, 0.0);
}

/// The geometry of a disc robot and its sensor rings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RobotModel {
    /// Disc radius in inches.
    pub radius: f64,
    /// Number of sonars, evenly spaced clockwise from the front (sonar 0 looks ahead).
    pub sonar_count: usize,
    /// Smallest sonar reading, from the robot's surface (inches).
    pub sonar_min: f64,
    /// Largest sonar reading, from the robot's surface (inches); also the range.
    pub sonar_max: f64,
    /// Number of bumpers, evenly spaced clockwise round the rim (bumper 0 at the front).
    pub bumper_count: usize,
    /// An obstacle closer than `radius + contact_tolerance` to the centre touches the rim.
    pub contact_tolerance: f64,
}

impl RobotModel {
    /// The Mobile Robot Simulator's Nomad-200: radius 10 in; 16 sonars 22.5° apart reading
    /// 5–110 in from the surface; 20 bumpers 18° apart (the manual's "13°" cannot close the
    /// ring; 360/20 does).
    pub const NOMAD_200: RobotModel = RobotModel {
        radius: 10.0,
        sonar_count: 16,
        sonar_min: 5.0,
        sonar_max: 110.0,
        bumper_count: 20,
        contact_tolerance: 0.01,
    };

    /// Angle between neighbouring sonars, in degrees.
    pub fn sonar_spacing_deg(&self) -> f64 {
        360.0 / self.sonar_count.max(1) as f64
    }

    /// Angle between neighbouring bumpers, in degrees.
    pub fn bumper_spacing_deg(&self) -> f64 {
        360.0 / self.bumper_count.max(1) as f64
    }

    /// World heading of sonar `i` for a robot heading `heading_deg`.
    pub fn sonar_heading(&self, heading_deg: f64, i: usize) -> f64 {
        normalize_deg(heading_deg + i as f64 * self.sonar_spacing_deg())
    }

    /// The bumper (index) whose sector of the rim contains the world direction
    /// `direction_deg`, for a robot heading `heading_deg`.
    pub fn bumper_at(&self, heading_deg: f64, direction_deg: f64) -> usize {
        let rel = normalize_deg(direction_deg - heading_deg);
        let n = self.bumper_count.max(1);
        ((rel / self.bumper_spacing_deg()).round() as usize) % n
    }

    /// A sonar reading from the distance between the robot's centre and the obstacle:
    /// surface distance clamped to `[sonar_min, sonar_max]`; `None` (nothing in range) reads
    /// `sonar_max`.
    pub fn sonar_reading(&self, centre_distance: Option<f64>) -> f64 {
        match centre_distance {
            Some(t) => (t - self.radius).clamp(self.sonar_min, self.sonar_max),
            None => self.sonar_max,
        }
    }
}

impl Default for RobotModel {
    fn default() -> Self {
        RobotModel::NOMAD_200
    }
}

/// The displacement and heading change of a free (unobstructed) motion at `vel` for `dt`
/// seconds, integrated exactly along the circular arc.
pub fn arc_motion(pose: &FlatPose, vel: Velocity, dt: f64) -> (Vec2, f64) {
    let dtheta = vel.turn * dt;
    let a0 = pose.heading_deg.to_radians();
    let dist = vel.forward * dt;
    if dtheta.abs() < 1e-9 {
        return (Vec2::from_heading_deg(pose.heading_deg) * dist, dtheta);
    }
    let w = dtheta.to_radians();
    let k = dist / w;
    let a1 = a0 + w;
    (
        Vec2::new(k * (a1.sin() - a0.sin()), -k * (a1.cos() - a0.cos())),
        dtheta,
    )
}

/// Distance slack kept between a stopped disc and what stopped it (inches), so that a robot
/// pressed against a wall is in contact but never overlapping.
pub const CONTACT_SKIN: f64 = 1e-4;

/// Moves a disc robot for one step of `dt` seconds against the map: it turns freely, and its
/// translation (the chord of the arc) stops where it would first touch an obstacle, the
/// border, or — through `blocked_by` — anything else (return the allowed fraction of the
/// motion, 1 = free). Returns the new pose and whether the motion was cut short.
pub fn move_disc(
    map: &Map,
    pose: &FlatPose,
    radius: f64,
    vel: Velocity,
    dt: f64,
    blocked_by: impl FnOnce(Vec2, Vec2) -> f64,
) -> (FlatPose, bool) {
    let (d, dtheta) = arc_motion(pose, vel, dt);
    let from = pose.position();
    let len = d.length();
    let mut s = 1.0;
    if len > 0.0 {
        s = map.sweep_disc(from, d, radius).min(blocked_by(from, d));
    }
    let cut = s < 1.0;
    let to = if cut {
        from + d * ((s - CONTACT_SKIN / len).max(0.0))
    } else {
        from + d
    };
    (FlatPose::new(to.x, to.y, pose.heading_deg + dtheta), cut)
}

/// Distance from the robot's centre along sonar `i` to the first obstacle of the map, if
/// within the sonar's range.
pub fn sonar_distance(map: &Map, model: &RobotModel, pose: &FlatPose, i: usize) -> Option<f64> {
    let ray = Ray::from_heading(pose.position(), model.sonar_heading(pose.heading_deg, i));
    map.cast_ray(&ray, model.radius + model.sonar_max)
}

/// The reading of sonar `i` against the map alone: surface distance clamped to the model's
/// range.
pub fn sonar_reading(map: &Map, model: &RobotModel, pose: &FlatPose, i: usize) -> f64 {
    model.sonar_reading(sonar_distance(map, model, pose, i))
}

/// Bit `i` set = bumper `i` closed, against the map alone.
pub fn bumper_mask(map: &Map, model: &RobotModel, pose: &FlatPose) -> u64 {
    let mut mask = 0u64;
    let centre = pose.position();
    map.for_each_contact(centre, model.radius + model.contact_tolerance, |c| {
        let b = model.bumper_at(pose.heading_deg, (c - centre).heading_deg());
        mask |= 1 << (b % 64);
    });
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arc_motion_turns_clockwise() {
        // A quarter circle to the right at radius 10: from heading 0, ends at (10, 10).
        let pose = FlatPose::new(0.0, 0.0, 0.0);
        let r = 10.0;
        let vel = Velocity::new(r * std::f64::consts::FRAC_PI_2, 90.0);
        let (d, dth) = arc_motion(&pose, vel, 1.0);
        assert!(
            (d.x - 10.0).abs() < 1e-9 && (d.y - 10.0).abs() < 1e-9,
            "{d:?}"
        );
        assert_eq!(dth, 90.0);
    }

    #[test]
    fn bumper_sectors() {
        let m = RobotModel::NOMAD_200;
        assert_eq!(m.bumper_at(0.0, 0.0), 0);
        assert_eq!(m.bumper_at(0.0, 18.0), 1);
        assert_eq!(m.bumper_at(0.0, 350.0), 19);
        assert_eq!(m.bumper_at(90.0, 0.0), 15);
        assert_eq!(m.sonar_heading(0.0, 15), 337.5);
    }
}
