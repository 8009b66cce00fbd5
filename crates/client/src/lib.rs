//! # simrob-client
//!
//! Client libraries for programs that drive simrob: [`simrob`] speaks the SimRob XML protocol
//! over UDP (seed 000); [`mrs`] speaks the Mobile Robot Simulator text protocol over TCP
//! (seed 001).

pub mod mrs;
pub mod simrob;
