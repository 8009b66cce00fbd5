//! # simrob-server
//!
//! The network shells around simrob's sans-IO cores: the SimRob UDP server ([`udp`]) around
//! a [`simrob_session::Session`], its Save/Load directory ([`files`]) and batched datagram
//! I/O ([`datagrams`]). The Mobile Robot Simulator has its own crate, `simrob-mrs`.

pub mod datagrams;
pub mod files;
pub mod udp;
