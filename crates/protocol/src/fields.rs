//! The element names of SimRob's three-component fields (`Position_X`, `Position_Y`,
//! `Position_Z`, …), shared by the decoder and the encoder.

pub(crate) const POSITION: [&str; 3] = ["Position_X", "Position_Y", "Position_Z"];
pub(crate) const ROTATION: [&str; 3] = ["Rotation_X", "Rotation_Y", "Rotation_Z"];
pub(crate) const AXIS_1: [&str; 3] = ["Axis_1_X", "Axis_1_Y", "Axis_1_Z"];
pub(crate) const AXIS_2: [&str; 3] = ["Axis_2_X", "Axis_2_Y", "Axis_2_Z"];
pub(crate) const SIZE: [&str; 3] = ["Size_X", "Size_Y", "Size_Z"];
pub(crate) const LINEAR_VELOCITY: [&str; 3] = [
    "Linear_Velocity_X",
    "Linear_Velocity_Y",
    "Linear_Velocity_Z",
];
pub(crate) const ANGULAR_VELOCITY: [&str; 3] = [
    "Angular_Velocity_X",
    "Angular_Velocity_Y",
    "Angular_Velocity_Z",
];
pub(crate) const POS: [&str; 3] = ["pos_x", "pos_y", "pos_z"];
pub(crate) const ROT: [&str; 3] = ["rot_x", "rot_y", "rot_z"];
