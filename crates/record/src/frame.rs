//! One frame of a 3D world: what a `simrob-recording` holds and the viewer draws.

use serde::{Deserialize, Serialize};

/// One body: entity, id, shape and its dimensions, pose and velocities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameBody {
    /// Entity id.
    pub e: u32,
    /// Body id within the entity.
    pub id: u32,
    /// `Sphere`, `Box`, `Cylinder` or `WheelCylinder`.
    pub shape: String,
    /// Sphere: [radius, 0, 0]; Box: sizes; cylinders: [radius, length, 0].
    pub dims: [f64; 3],
    /// Material index.
    pub material: u32,
    /// Mass, kg (negative: static).
    pub mass: f64,
    /// Position, m.
    pub p: [f64; 3],
    /// Euler rotation (R = Rz·Ry·Rx), rad.
    pub r: [f64; 3],
    /// Linear velocity, m/s.
    pub v: [f64; 3],
    /// Angular velocity, rad/s.
    pub w: [f64; 3],
}

/// One entity: its kind and (robots and balls) its reported pose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FrameEntity {
    /// Entity id.
    pub id: u32,
    /// `Robot`, `Field` or `Ball`.
    pub kind: String,
    /// Reported position, m.
    pub p: Option<[f64; 3]>,
    /// Reported Euler rotation (R = Rz·Ry·Rx), rad.
    pub r: Option<[f64; 3]>,
}

/// The world at one moment, with the server's modes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Frame {
    /// The server's iteration.
    pub iteration: u64,
    /// Simulated seconds.
    pub time: f64,
    /// The simulation was initialized.
    pub initialized: bool,
    /// Step mode (paused).
    pub paused: bool,
    /// Lockstep with the agents.
    pub sync: bool,
    /// The timestep adjusts itself.
    pub auto_adjust: bool,
    /// Simulated seconds per step.
    pub timestep: f64,
    /// Gravity, m/s².
    pub gravity: f64,
    /// Physics steps per iteration.
    pub steps_per_iteration: u32,
    /// Wanted simulated seconds per wall second.
    pub real_time_factor: f64,
    /// Every body.
    pub bodies: Vec<FrameBody>,
    /// Every entity.
    pub entities: Vec<FrameEntity>,
}
