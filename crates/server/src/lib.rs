//! # simrob-server
//!
//! The network shells around simrob's sans-IO cores: the SimRob UDP server ([`udp`]) around
//! a [`simrob_session::Session`], its Save/Load directory ([`files`]), a scenario applied to
//! a world in this process as the server would apply it ([`local`]), batched datagram
//! I/O ([`datagrams`]) and the socket's error queue, which tells when an agent's port has
//! closed ([`errqueue`]). The Mobile Robot Simulator has its own crate, `simrob-mrs`.
#![warn(missing_docs)]

pub mod datagrams;
pub mod errqueue;
pub mod files;
pub mod local;
pub mod udp;
