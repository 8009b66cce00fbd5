//! # simrob-client
//!
//! Client library for programs that drive simrob: an [`agent`] speaks the SimRob XML protocol
//! over UDP. The Mobile Robot Simulator's client lives with its server in `simrob-mrs`.

pub mod agent;
