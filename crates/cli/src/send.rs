//! `simrob send`: the commander.

use anyhow::{bail, Result};

/// Arguments of `simrob send`.
#[derive(clap::Args)]
pub struct SendArgs {}

pub fn run(_args: SendArgs) -> Result<()> {
    bail!("simrob send is not available in this build")
}
