//! # simrob-soccer
//!
//! Humanoid robot soccer on simrob, sans-IO: the RoboCup **KidSize** field ([`field`]), the
//! humanoid body of FutRob's Bioloid robots and its **timed actions** ([`action`],
//! [`humanoid`]), the **head camera** ([`camera`]) and the named noise **profiles**
//! `paper` and `ideal` ([`profile`]), with a seeded random number generator ([`rng`]).
//!
//! It is a library of models and does no I/O (no sockets, files, threads or clocks). It does
//! not step physics: `simrob-world` holds the humanoids as entities, advances them every
//! physics step and moves their bodies; the server's camera agents call [`camera::look`].
//! It is not a robot brain either: the FutRob team (`simrob-futrob`) decides which actions to
//! ask for.

pub mod action;
pub mod camera;
pub mod field;
pub mod humanoid;
pub mod profile;
pub mod rng;

pub use action::{Action, ActionError, Gait, Side};
pub use camera::{
    look, Camera, CameraFrame, CameraProfile, ObjectKind, Observation, RobotView, SceneView,
};
pub use field::{KidSizeField, Team};
pub use humanoid::{
    ActionState, ActionStatus, Humanoid, HumanoidEvent, MotionNoise, MotionTable, Pose2, Posture,
};
pub use profile::Profile;
pub use rng::SimRng;
