//! # simrob-protocol
//!
//! The SimRob XML wire format (seed 000 §1.6, §2–§5): a typed model of every message and
//! its decoder and encoder. No I/O: bytes in, typed values out, and back.
//!
//! See [`model`] for the units and frames used everywhere in simrob.

pub mod model;

pub use model::*;
