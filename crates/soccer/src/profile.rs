//! Named profiles: the motion noise and the camera model together.

use crate::camera::CameraProfile;
use crate::humanoid::MotionNoise;

/// A named set of noise parameters for the humanoids' motions and cameras.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The profile's name, as [`Profile::named`] accepts it (`paper`, `ideal`).
    pub name: String,
    /// Noise and fall model of the humanoids' actions.
    pub motion: MotionNoise,
    /// Noise, detection and frame model of the head camera.
    pub camera: CameraProfile,
}

/// The profile names [`Profile::named`] knows.
pub const PROFILE_NAMES: [&str; 2] = ["paper", "ideal"];

impl Profile {
    /// FutRob's robots and camera as its report measured them.
    pub fn paper() -> Self {
        Profile {
            name: "paper".into(),
            motion: MotionNoise::paper(),
            camera: CameraProfile::paper(),
        }
    }
    /// Exact motions, no falls, an exact camera every frame.
    pub fn ideal() -> Self {
        Profile {
            name: "ideal".into(),
            motion: MotionNoise::ideal(),
            camera: CameraProfile::ideal(),
        }
    }
    /// `paper` or `ideal` (any letter case).
    pub fn named(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "paper" => Some(Profile::paper()),
            "ideal" => Some(Profile::ideal()),
            _ => None,
        }
    }
}
