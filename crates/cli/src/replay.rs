//! `simrob replay`: recordings in the viewer, or exported.

use anyhow::{bail, Result};

/// Arguments of `simrob replay`.
#[derive(clap::Args)]
pub struct ReplayArgs {}

pub fn run(_args: ReplayArgs) -> Result<()> {
    bail!("simrob replay is not available in this build")
}
