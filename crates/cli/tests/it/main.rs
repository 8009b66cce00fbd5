//! The integration tests of this crate, in one test binary (one link instead of one per file).

mod coord_common;
#[path = "../../../../fuzz/src/lib.rs"]
mod entry;
#[path = "../../../viewer/tests/it/headless/mod.rs"]
mod headless;
#[path = "../../../client/examples/simrob_drive.rs"]
mod simrob_drive;
mod soccer_common;
#[path = "../../../viewer/tests/it/sumbot.rs"]
mod sumbot;

mod batch_cli;
mod client_simrob;
mod config_limits;
mod coord_compare;
mod coord_e2e;
mod coord_flood;
mod coord_guard;
mod coord_links;
mod coord_map;
mod coord_wire;
mod departures_cli;
mod fuzz_corpus;
mod humanoid_send;
mod limit_flags;
mod listening;
mod mrs_cli;
mod netbed_cli;
mod newcomer;
mod pipes_cli;
mod range_flags;
mod reference;
mod replay_2d;
mod replay_cli;
mod ros2_cli;
mod send_cli;
mod simrob_serve;
mod soccer_cli;
mod soccer_e2e;
mod support;
mod swarm_cli;
mod swarm_file_limits;
mod vocab_cli;
