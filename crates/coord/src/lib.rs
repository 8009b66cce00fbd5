//! simrob-coord: coordination of teams of heterogeneous robots — a Control Center, a Time
//! Server, and on every robot a Task Manager with preconditions and a Contract Net bidder.
//!
//! The architecture is the one described for the ROMEO-4R robot's multi-robot system: a
//! Control Center (id 0) with one view of every robot; a Time Server giving everyone one
//! time base (simulated time inside simrob); on each robot an abstraction layer that is
//! the same for every kind of robot ([`robot::RobotAgent`]: [`task_manager`], [`sync`],
//! the CNP bidder of [`cnp`]) above a robot-specific layer that runs basic tasks. All of
//! them talk through the General Robot Interface, whose messages and wire format are in
//! [`wire`].
//!
//! What this crate is: sans-IO state machines fed with messages and times, plus the
//! systems that run them inside a swarm simulation ([`swarm`]). What it is not: it opens no
//! socket or file, starts no thread and reads no clock — the `simrob coord` commands do
//! (the networked Control Center, the robot agents that drive a SumBot on the SimRob server
//! or a Nomad on the Mobile Robot Simulator, the operator's menu, the policy comparison).
//!
//! ```
//! use simrob_coord::cc::{CcConfig, ControlCenter};
//! use simrob_coord::model::{RobotInfo, TaskClass, TaskKind, TaskSpec};
//! use simrob_coord::wire::Msg;
//!
//! let mut cc = ControlCenter::new(CcConfig::default());
//! cc.join(RobotInfo { robot: 1, name: "r1".into(), kind: "swarm".into(), world: "swarm".into(),
//!     capabilities: vec![TaskClass::Movement], speed: 1.0 }).unwrap();
//! let id = cc.send_task(1, TaskSpec::new(0, TaskKind::Goto { x: 3.0, y: 4.0 })).unwrap();
//! let sent: Vec<_> = std::iter::from_fn(|| cc.poll_transmit()).collect();
//! assert!(matches!(&sent[1].msg, Msg::Task { task } if task.id == id));
//! ```

#![warn(missing_docs)]

pub mod alloc;
pub mod cc;
pub mod cnp;
pub mod compare;
pub mod model;
pub mod outbox;
pub mod robot;
pub mod swarm;
pub mod sync;
pub mod task_manager;
pub mod time;
pub mod wire;
