//! What the camera reports of one object, in the robot's frame: the input of the world model
//! ([`crate::world`]) and of the vision stub ([`crate::config::VisionStub`]).

use crate::names::ObjectKind;
use crate::trajectory::Vec2;

/// One object the camera reports: which, at what angle (degrees from the body's forward
/// direction, positive to the right) and distance (cm from the robot centre on the floor).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sighting {
    /// What was seen.
    pub object: ObjectKind,
    /// Bearing, degrees, positive to the right of the body's forward direction.
    pub angle_deg: f64,
    /// Distance on the floor, cm.
    pub distance_cm: f64,
}

impl Sighting {
    /// A sighting.
    pub fn new(object: ObjectKind, angle_deg: f64, distance_cm: f64) -> Sighting {
        Sighting {
            object,
            angle_deg,
            distance_cm,
        }
    }
    /// Robot-frame position.
    pub fn position(&self) -> Vec2 {
        Vec2::from_polar(self.angle_deg, self.distance_cm)
    }
}
