//! # simrob-server
//!
//! The network shells around simrob's sans-IO cores: the SimRob UDP server ([`simrob`]) and
//! the Mobile Robot Simulator TCP server ([`mrs`]).

pub mod mrs;
pub mod simrob;
