//! # simrob-math
//!
//! The numerics every simrob crate shares and none may change: the seeded random number
//! generators whose streams are part of recorded runs ([`rng`]), angle wrapping
//! ([`angle`]), and numbers as error messages show them ([`Shown`]). Each algorithm lives here once, named for what it is, with tests pinning its
//! outputs bit for bit: a seed recorded today replays identically forever.
//!
//! No dependencies, no I/O.

#![deny(missing_docs)]

pub mod angle;
pub mod rng;
mod shown;

pub use angle::{wrap_angle, wrap_angle_euclid, DEG};
pub use rng::{hash_u01, mix64, splitmix64, SplitMix64, Xoshiro256PlusPlus, Xoshiro256StarStar};
pub use shown::Shown;
