//! What most command-line tests need: the built `simrob` binary and paths in the repository.

use std::process::Command;

/// The `simrob` binary this test build made.
pub fn simrob() -> Command {
    Command::new(env!("CARGO_BIN_EXE_simrob"))
}

/// `rel`, a path from the repository's root (scenarios, maps, sweeps).
pub fn repo(rel: &str) -> String {
    format!("{}/../../{rel}", env!("CARGO_MANIFEST_DIR"))
}
