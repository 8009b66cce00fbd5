//! `simrob swarm`: many robots at high abstraction.

use anyhow::{bail, Result};

/// Subcommands of `simrob swarm`.
#[derive(clap::Subcommand)]
pub enum SwarmCommand {
    /// Run a swarm scenario.
    Run,
}

pub fn run(_cmd: SwarmCommand) -> Result<()> {
    bail!("simrob swarm is not available in this build")
}
