//! # simrob-ros2
//!
//! simrob's worlds on ROS 2 topics, with no ROS installation: the participant speaks DDS/RTPS
//! natively (RustDDS) with ROS 2's conventions on the wire.
//!
//! * [`msg`]: the standard messages as serde structs in their CDR layout, each with its DDS
//!   type name;
//! * [`bridge`]: the sans-IO core — world [`bridge::Frame`]s in, messages out at configured
//!   rates (simulated time); `cmd_vel`, wheel speeds and goals in, world
//!   [`bridge::Command`]s out (the latest per robot);
//! * [`env`]: the domain and discovery range from ROS 2's environment variables;
//! * [`node`]: the DDS participant, its topics and their QoS (with `LOCALHOST`, on Linux, its
//!   sockets take datagrams from the loopback interface only);
//! * [`simrob`]: the SimRob server's worlds (`simrob serve --ros2`);
//! * [`mrs`]: the Mobile Robot Simulator's Nomad-200s (`simrob mrs --ros2`);
//! * [`swarm`]: the swarm's robots (`simrob swarm run --ros2`).
//! * [`soccer`]: FutRob KidSize matches (`simrob soccer match --ros2`), watched.

#![warn(missing_docs)]

pub mod bridge;
#[cfg(target_os = "linux")]
mod confine;
pub mod env;
pub mod mrs;
pub mod msg;
pub mod node;
pub mod simrob;
pub mod soccer;
pub mod swarm;
