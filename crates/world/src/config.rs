//! The world's defaults (SimRob manual §6, the keys that concern the simulation itself).

use simrob_protocol::{Contact, MaterialId};

/// Defaults applied by the world when a request leaves a value out, and its initial
/// parameters. Every field has a built-in default so no configuration file is needed.
#[derive(Debug, Clone, PartialEq)]
pub struct WorldConfig {
    /// `defaultstepsize`: seconds per physics step.
    pub default_step_size: f64,
    /// `defaultphysicsworldbounciness`: global ERP (joints).
    pub default_world_bounciness: f64,
    /// `defaultphysicsworldhardness`: global CFM (joints).
    pub default_world_hardness: f64,
    /// `default*interaction`: the interaction of a material pair with none registered.
    pub default_interaction: Contact,
    /// `defaultgravity`: m/s² along Z.
    pub default_gravity: f64,
    /// `defaultwheeljointhardness`.
    pub default_wheel_joint_hardness: f64,
    /// `defaultwheeljointbounciness`.
    pub default_wheel_joint_bounciness: f64,
    /// `defaultwheeljointmaxtorque`: N·m.
    pub default_wheel_joint_max_torque: f64,
    /// `defaultbodymaterial`: material of a body that names none. This material id is always
    /// accepted, registered or not.
    pub default_body_material: MaterialId,
    /// `defaultbodymass`: kg, for a body that gives no mass.
    pub default_body_mass: f64,
    /// `contactpointsammount`: accepted for compatibility; rapier keeps at most four contact
    /// points per contact manifold whatever the value.
    pub contact_points_amount: u32,
}

impl Default for WorldConfig {
    fn default() -> Self {
        WorldConfig {
            default_step_size: 0.01,
            default_world_bounciness: 0.2,
            default_world_hardness: 1e-5,
            default_interaction: Contact::DEFAULT,
            default_gravity: -9.8,
            default_wheel_joint_hardness: 0.001,
            default_wheel_joint_bounciness: 0.9,
            default_wheel_joint_max_torque: 10.0,
            default_body_material: MaterialId(0),
            default_body_mass: 1.0,
            contact_points_amount: 4,
        }
    }
}
