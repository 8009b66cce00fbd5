//! What the viewer draws: one frame of the world, as JSON.

use serde::{Deserialize, Serialize};
use simrob_protocol::Shape;
use simrob_session::Snapshot;

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
    pub material: u32,
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
    pub id: u32,
    /// `Robot`, `Field` or `Ball`.
    pub kind: String,
    pub p: Option<[f64; 3]>,
    pub r: Option<[f64; 3]>,
}

/// The world at one moment, with the server's modes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Frame {
    pub iteration: u64,
    /// Simulated seconds.
    pub time: f64,
    pub initialized: bool,
    /// Step mode (paused).
    pub paused: bool,
    pub sync: bool,
    pub auto_adjust: bool,
    pub timestep: f64,
    pub gravity: f64,
    pub steps_per_iteration: u32,
    pub real_time_factor: f64,
    pub bodies: Vec<FrameBody>,
    pub entities: Vec<FrameEntity>,
}

fn shape_fields(s: &Shape) -> (&'static str, [f64; 3]) {
    match *s {
        Shape::Sphere { radius } => ("Sphere", [radius, 0.0, 0.0]),
        Shape::Box { size } => ("Box", size),
        Shape::Cylinder { radius, length } => ("Cylinder", [radius, length, 0.0]),
        Shape::WheelCylinder { radius, length } => ("WheelCylinder", [radius, length, 0.0]),
    }
}

impl Frame {
    /// The frame of a session snapshot.
    pub fn of(snapshot: &Snapshot) -> Frame {
        let bodies = snapshot
            .broadcast
            .bodies
            .iter()
            .map(|b| {
                let (shape, dims) = shape_fields(&b.shape);
                FrameBody {
                    e: b.entity_id,
                    id: b.id,
                    shape: shape.to_string(),
                    dims,
                    material: b.material,
                    mass: b.mass,
                    p: b.position,
                    r: b.rotation,
                    v: b.linear_velocity,
                    w: b.angular_velocity,
                }
            })
            .collect();
        let entities = snapshot
            .kinds
            .iter()
            .map(|&(id, kind)| {
                let info = snapshot
                    .broadcast
                    .entities
                    .iter()
                    .find(|e| e.entity_id == id);
                FrameEntity {
                    id,
                    kind: kind.to_string(),
                    p: info.map(|i| i.position),
                    r: info.map(|i| i.rotation),
                }
            })
            .collect();
        let modes = &snapshot.modes;
        Frame {
            iteration: snapshot.iteration,
            time: snapshot.time,
            initialized: modes.initialized,
            paused: modes.step_mode,
            sync: modes.sync_mode,
            auto_adjust: modes.auto_adjust,
            timestep: modes.timestep,
            gravity: modes.gravity,
            steps_per_iteration: modes.steps_per_iteration,
            real_time_factor: modes.real_time_factor,
            bodies,
            entities,
        }
    }
}
