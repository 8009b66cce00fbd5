//! `simrob mrs`: the Mobile Robot Simulator server.

use anyhow::{bail, Result};

/// Arguments of `simrob mrs`.
#[derive(clap::Args)]
pub struct MrsArgs {}

pub fn run(_args: MrsArgs) -> Result<()> {
    bail!("simrob mrs is not available in this build")
}
