//! Entities: validation of a creation request against each type's rules, and building its
//! bodies and joints in the physics engine.
//!
//! Rules (SimRob manual §2.4): a Robot has any bodies and joints, motors that name its WheelJoints,
//! and a reference body that exists; a Field has bodies and no joints; a Ball is one sphere.
//! Within an entity body ids and joint ids are unique; joints connect two different bodies of
//! the same entity.

use std::collections::BTreeMap;

use simrob_physics::{BodyDesc, BodyId, JointDesc, JointId, PhysicsBackend};
use simrob_protocol::{BodySpec, EntitySpec, JointSpec, MaterialId, Shape};

use crate::{invalid, orientation, WorldConfig, WorldError};

/// One body of an entity as the world knows it.
#[derive(Debug, Clone)]
pub(crate) struct EntityBody {
    pub body_id: u32,
    pub handle: BodyId,
    pub shape: Shape,
    pub material: MaterialId,
    pub mass: f64,
}

#[derive(Debug, Clone)]
pub(crate) enum EntityKind {
    Robot {
        reference: BodyId,
        /// Wheel joint id → engine joint.
        motors: BTreeMap<u32, JointId>,
    },
    Field,
    Ball,
    /// A humanoid robot: six part bodies placed by its motion model every step
    /// (`humanoid.rs`, which creates it); the trunk is its reference body.
    Humanoid {
        reference: BodyId,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Entity {
    pub spec: EntitySpec,
    pub kind: EntityKind,
    pub bodies: Vec<EntityBody>,
}

/// A validated entity: engine descriptions with joint bodies as indices into `bodies`.
pub(crate) struct Plan {
    bodies: Vec<(u32, BodyDesc)>,
    /// (joint id, desc with body indices local to `bodies`).
    joints: Vec<(u32, JointDesc)>,
}

fn check_positive(at: &str, name: &str, v: f64) -> Result<(), WorldError> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        invalid(format!("{at}: {name} must be a positive number, got {v}"))
    }
}

fn check_finite3(at: &str, name: &str, v: &[f64; 3]) -> Result<(), WorldError> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        invalid(format!("{at}: {name} must be finite numbers"))
    }
}

fn body_desc(
    at: &str,
    body: &BodySpec,
    config: &WorldConfig,
    material_known: &dyn Fn(MaterialId) -> bool,
) -> Result<BodyDesc, WorldError> {
    match body.shape {
        Shape::Sphere { radius } => check_positive(at, "Radius", radius)?,
        Shape::Box { size } => {
            check_positive(at, "Size_X", size[0])?;
            check_positive(at, "Size_Y", size[1])?;
            check_positive(at, "Size_Z", size[2])?;
        }
        Shape::Cylinder { radius, length } | Shape::WheelCylinder { radius, length } => {
            check_positive(at, "Radius", radius)?;
            check_positive(at, "Length", length)?;
        }
    }
    let mass = body.mass.unwrap_or(config.default_body_mass);
    if !(mass.is_finite() && (mass > 0.0 || mass == -1.0)) {
        return invalid(format!(
            "{at}: Mass must be positive (kg) or -1 (static), got {mass}"
        ));
    }
    let material = body.material.unwrap_or(config.default_body_material);
    if !material_known(material) {
        return invalid(format!(
            "{at}: material {material} is not registered (send Register_Materials_Interactions first)"
        ));
    }
    check_finite3(at, "Position", &body.position)?;
    check_finite3(at, "Rotation", &body.rotation)?;
    Ok(BodyDesc {
        shape: body.shape,
        mass,
        material,
        position: body.position,
        orientation: orientation(body.rotation),
    })
}

/// Validates `spec` completely; nothing is changed.
pub(crate) fn plan(
    spec: &EntitySpec,
    config: &WorldConfig,
    material_known: &dyn Fn(MaterialId) -> bool,
) -> Result<Plan, WorldError> {
    let eid = spec.entity_id();
    match spec {
        EntitySpec::Humanoid { .. } => {
            return invalid(format!(
                "Create_Entity Humanoid {eid}: humanoids are built by the world's humanoid module"
            ))
        }
        EntitySpec::Field { joints, .. } if !joints.is_empty() => {
            return invalid(format!(
                "Create_Entity Field {eid}: a field cannot have joints ({} given); use a Robot for jointed bodies",
                joints.len()
            ));
        }
        _ => {}
    }
    let (bodies, joints) = spec.structure();
    if bodies.is_empty() {
        return invalid(format!(
            "Create_Entity {} {eid}: an entity needs at least one body",
            spec.type_name()
        ));
    }
    let mut planned = Vec::with_capacity(bodies.len());
    let mut index_of = BTreeMap::new();
    for b in bodies.iter() {
        let at = format!("Create_Entity {} {eid}: Body {}", spec.type_name(), b.id);
        if index_of
            .insert(b.id, BodyId(planned.len() as u32))
            .is_some()
        {
            return invalid(format!("{at}: Body_id {} is used twice", b.id));
        }
        let desc = body_desc(&at, b, config, material_known)?;
        planned.push((b.id, desc));
    }
    let mut planned_joints = Vec::with_capacity(joints.len());
    let mut joint_ids = BTreeMap::new();
    for j in joints {
        let at = format!("Create_Entity Robot {eid}: Joint {}", j.id());
        if joint_ids.insert(j.id(), j.type_name()).is_some() {
            return invalid(format!("{at}: Joint_id {} is used twice", j.id()));
        }
        let (b1, b2) = j.bodies();
        let lookup = |b: u32| {
            index_of.get(&b).copied().ok_or_else(|| {
                WorldError::Invalid(format!("{at}: body {b} does not exist in this entity"))
            })
        };
        let (i1, i2) = (lookup(b1)?, lookup(b2)?);
        if i1 == i2 {
            return invalid(format!("{at}: a joint must connect two different bodies"));
        }
        if planned[i1.index()].1.mass < 0.0 && planned[i2.index()].1.mass < 0.0 {
            return invalid(format!(
                "{at}: a joint between two static bodies cannot move"
            ));
        }
        let desc = match *j {
            JointSpec::Fixed { .. } => JointDesc::Fixed {
                body_1: i1,
                body_2: i2,
            },
            JointSpec::Wheel {
                axis_1,
                axis_2,
                hardness,
                bounciness,
                maximum_torque,
                ..
            } => {
                check_finite3(&at, "Axis_1", &axis_1)?;
                check_finite3(&at, "Axis_2", &axis_2)?;
                let norm = |a: &[f64; 3]| (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
                let (n1, n2) = (norm(&axis_1), norm(&axis_2));
                if n1 < 1e-9 || n2 < 1e-9 {
                    return invalid(format!("{at}: Axis_1 and Axis_2 must be non-zero vectors"));
                }
                let dot = (axis_1[0] * axis_2[0] + axis_1[1] * axis_2[1] + axis_1[2] * axis_2[2])
                    / (n1 * n2);
                if dot.abs() > 0.999 {
                    return invalid(format!("{at}: Axis_1 and Axis_2 must not be parallel"));
                }
                let hardness = hardness.unwrap_or(config.default_wheel_joint_hardness);
                let bounciness = bounciness.unwrap_or(config.default_wheel_joint_bounciness);
                let max_torque = maximum_torque.unwrap_or(config.default_wheel_joint_max_torque);
                for (name, v) in [("Hardness", hardness), ("Bounciness", bounciness)] {
                    if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                        return invalid(format!("{at}: {name} must be between 0 and 1, got {v}"));
                    }
                }
                if !(max_torque.is_finite() && max_torque >= 0.0) {
                    return invalid(format!(
                        "{at}: Maximum_Torque must be a non-negative number, got {max_torque}"
                    ));
                }
                JointDesc::Wheel {
                    body_1: i1,
                    body_2: i2,
                    axis_1,
                    axis_2,
                    hardness,
                    bounciness,
                    max_torque,
                }
            }
        };
        planned_joints.push((j.id(), desc));
    }
    if let EntitySpec::Robot {
        motors,
        reference_body,
        ..
    } = spec
    {
        if !index_of.contains_key(reference_body) {
            return invalid(format!(
                "Create_Entity Robot {eid}: Reference_Body {reference_body} is not a body of this robot"
            ));
        }
        let mut seen = Vec::new();
        for m in motors {
            match joint_ids.get(m) {
                Some(&"WheelJoint") => {}
                Some(other) => {
                    return invalid(format!(
                        "Create_Entity Robot {eid}: motor {m} names a {other}; motors must name WheelJoints"
                    ))
                }
                None => {
                    return invalid(format!(
                        "Create_Entity Robot {eid}: motor {m} names no joint of this robot"
                    ))
                }
            }
            if seen.contains(m) {
                return invalid(format!(
                    "Create_Entity Robot {eid}: motor {m} is listed twice"
                ));
            }
            seen.push(*m);
        }
    }
    Ok(Plan {
        bodies: planned,
        joints: planned_joints,
    })
}

/// Creates the planned bodies and joints. On error the caller truncates the engine back.
pub(crate) fn build<P: PhysicsBackend>(
    physics: &mut P,
    spec: &EntitySpec,
    plan: Plan,
) -> Result<Entity, WorldError> {
    let engine = |e: simrob_physics::PhysicsError| {
        WorldError::Invalid(format!(
            "Create_Entity {} {}: {e}",
            spec.type_name(),
            spec.entity_id()
        ))
    };
    let mut bodies = Vec::with_capacity(plan.bodies.len());
    for (body_id, desc) in plan.bodies {
        let handle = physics.add_body(&desc).map_err(engine)?;
        bodies.push(EntityBody {
            body_id,
            handle,
            shape: desc.shape,
            material: desc.material,
            mass: desc.mass,
        });
    }
    let mut joints = BTreeMap::new();
    for (joint_id, desc) in plan.joints {
        // The plan's joints name bodies by their index in this entity.
        let desc = desc.with_bodies(|local| bodies[local.index()].handle);
        joints.insert(joint_id, physics.add_joint(&desc).map_err(engine)?);
    }
    let kind = match spec {
        EntitySpec::Robot {
            motors,
            reference_body,
            ..
        } => {
            let reference = bodies
                .iter()
                .find(|b| b.body_id == *reference_body)
                .map(|b| b.handle)
                .ok_or_else(|| {
                    WorldError::Invalid(format!(
                        "Create_Entity Robot {}: Reference_Body {reference_body} is not a body of this robot",
                        spec.entity_id()
                    ))
                })?;
            let motors = motors
                .iter()
                .filter_map(|m| joints.get(m).map(|j| (*m, *j)))
                .collect();
            EntityKind::Robot { reference, motors }
        }
        EntitySpec::Field { .. } => EntityKind::Field,
        EntitySpec::Ball { .. } => EntityKind::Ball,
        EntitySpec::Humanoid { .. } => EntityKind::Humanoid {
            reference: bodies.first().map_or(BodyId(0), |b| b.handle),
        },
    };
    Ok(Entity {
        spec: spec.clone(),
        kind,
        bodies,
    })
}
