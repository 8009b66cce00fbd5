//! # simrob-server
//!
//! The network shells around simrob's sans-IO cores: the SimRob UDP server ([`simrob`]). The
//! Mobile Robot Simulator has its own crate, `simrob-mrs`.
#![warn(missing_docs)]

pub mod datagrams;
pub mod simrob;
