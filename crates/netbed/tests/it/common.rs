//! A SimRob server on a loopback port, in a thread, with scenarios and local commands
//! applied before it serves: the server crate's test server, included by `#[path]` (the
//! `lossy` example includes this file too).
#![allow(dead_code)]

#[path = "../../../server/tests/it/simrob_common/mod.rs"]
mod simrob_common;

pub use simrob_common::TestServer;

/// Local commands that put the server in synchronous mode and start it.
pub const SYNC_AND_START: &str = "<Message><Simulation_Message><Control_Request Command=\"Set_Sync_Mode\"><Sync_Mode>true</Sync_Mode></Control_Request><Control_Request Command=\"Initialize_Simulation\"/></Simulation_Message></Message>";

/// Local commands that start the server.
pub const START: &str = "<Message><Simulation_Message><Control_Request Command=\"Initialize_Simulation\"/></Simulation_Message></Message>";
