//! # simrob-soccer
//!
//! Humanoid robot soccer on simrob, sans-IO: the RoboCup **KidSize** field ([`field`]), the
//! humanoid body of FutRob's Bioloid robots and its **timed actions** ([`action`],
//! [`humanoid`]), the **head camera** ([`camera`]) and the named noise **profiles**
//! `paper` and `ideal` ([`profile`]), drawing their noise from `simrob_math::Xoshiro256StarStar`.
//!
//! It is a library of models and does no I/O (no sockets, files, threads or clocks). It does
//! not step physics: `simrob-world` holds the humanoids as entities, advances them every
//! physics step and moves their bodies; the server's camera agents call [`camera::look`].
//! It is not a robot brain either: the FutRob team (`simrob-futrob`) decides which actions to
//! ask for.
//!
//! **Running a scene in-process** (no server, thousands of trials): `simrob_world::World::kidsize`
//! builds the field and ball, `World::create_humanoid` adds robots, `World::humanoid_action`
//! asks for actions, `World::advance` steps, and `simrob_world::brain::BrainView` gives each
//! robot's camera frames — see the `simrob_world::brain` docs for a complete example.
//! Over the network the same robots are `Create_Entity Type="Humanoid"` and `Humanoid_Action`
//! requests, and a `Humanoid_Brain` agent receives the camera (`simrob_protocol::humanoid`).

#![warn(missing_docs)]

pub mod action;
pub mod camera;
pub mod field;
pub mod humanoid;
pub mod profile;

pub use action::{Action, ActionError, Gait, Side};
pub use camera::{
    look, Camera, CameraFrame, CameraProfile, ObjectKind, Observation, RobotView, SceneView,
};
pub use field::{KidSizeField, Team};
pub use humanoid::{
    ActionState, ActionStatus, Humanoid, HumanoidEvent, MotionNoise, MotionTable, Pose2, Posture,
};
pub use profile::Profile;
