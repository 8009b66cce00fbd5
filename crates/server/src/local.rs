//! A scenario's requests applied to a world in this process (`simrob run`, Python's
//! `sim.World`), as a server applies them: each held to the server's limits first
//! ([`Limits::check`]), agent messages refused (there are no agents), and Save and Load
//! naming plain files in one folder, as a server's name files in its save directory
//! ([`crate::files::resolve_beside`]), a Load within the limits a server's Load applies.

use std::path::Path;

use simrob_protocol::{CommandKeys, Request};
use simrob_session::{Limits, Refusal};
use simrob_world::{Applied, LoadOptions, World, WorldError};

use crate::files::{io, loadable_size_within, read_save_within, resolve_beside, FileError};

/// Why request `n` (from 1) was not applied; those before it were.
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// An agent message (Register_Agent, …).
    #[error(
        "request {n}: agent messages (Register_Agent, …) are for a server's agents; a world \
         in this process has none: remove them from the scenario, or give it to `simrob serve`"
    )]
    AgentMessage {
        /// The request's number, from 1.
        n: usize,
    },
    /// A setting of a server's session (Set_Sync_Mode, Set_Sync_Wait, Set_AutoAdjust_Mode):
    /// how it paces its agents. A world in this process has none and runs every iteration
    /// as fast as it can.
    #[error(
        "request {n}: {command} is a server's setting (how it paces its agents); a world in \
         this process has no agents and runs every iteration as fast as it can: remove it \
         from the scenario, or give the scenario to `simrob serve`"
    )]
    SessionSetting {
        /// The request's number, from 1.
        n: usize,
        /// The command, as the default command names name it.
        command: String,
    },
    /// Past one of the server's limits.
    #[error("request {n}: {cause}")]
    Refused {
        /// The request's number, from 1.
        n: usize,
        /// The limit.
        cause: Refusal,
    },
    /// The world refused it.
    #[error("request {n}: {cause}")]
    World {
        /// The request's number, from 1.
        n: usize,
        /// Why.
        cause: WorldError,
    },
    /// Its Save or Load file.
    #[error("request {n}: {cause}")]
    File {
        /// The request's number, from 1.
        n: usize,
        /// What went wrong with the file.
        cause: FileError,
    },
}

/// Loads a saved world from `xml` within the bounds a server's Load applies under `limits`.
pub fn load_within(world: &mut World, xml: &str, limits: &Limits) -> Result<(), WorldError> {
    let options = LoadOptions {
        limits: limits.load_limits(),
        ..LoadOptions::default()
    };
    world.load_xml_with(xml, &options).map(|_| ())
}

/// Applies `requests` in order (see the module docs); Save and Load name plain files in
/// `folder` (`place` names it in messages). Returns the confirmations (`saved NAME`,
/// `loaded NAME` for files). Stops at the first request that fails.
pub fn apply_requests(
    world: &mut World,
    limits: &Limits,
    requests: &[Request],
    folder: &Path,
    place: &str,
) -> Result<Vec<String>, LocalError> {
    let mut out = Vec::with_capacity(requests.len());
    for (k, request) in requests.iter().enumerate() {
        let n = k + 1;
        if matches!(request, Request::Agent(_)) {
            return Err(LocalError::AgentMessage { n });
        }
        limits
            .check(request, world)
            .map_err(|cause| LocalError::Refused { n, cause })?;
        let file = |cause| LocalError::File { n, cause };
        let applied = world.apply(request).map_err(|cause| match cause {
            WorldError::SessionCommand => LocalError::SessionSetting {
                n,
                command: request.command(&CommandKeys::default()).to_string(),
            },
            cause => LocalError::World { n, cause },
        })?;
        match applied {
            Applied::Done(text) => out.push(text),
            Applied::Save(name) => {
                let path = resolve_beside(folder, &name, place).map_err(file)?;
                let xml = world.save_xml();
                loadable_size_within(&name, xml.len() as u64, limits.max_save_file_bytes)
                    .map_err(file)?;
                simrob_files::write_atomically(&path, xml.as_bytes())
                    .map_err(|source| file(io("save to", &name)(source)))?;
                out.push(format!("saved {name}"));
            }
            Applied::Load(name) => {
                let path = resolve_beside(folder, &name, place).map_err(file)?;
                let xml =
                    read_save_within(&path, &name, limits.max_save_file_bytes).map_err(file)?;
                load_within(world, &xml, limits).map_err(|cause| LocalError::World { n, cause })?;
                out.push(format!("loaded {name}"));
            }
        }
    }
    Ok(out)
}
