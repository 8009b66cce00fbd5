//! The integration tests of this crate, in one test binary (one link instead of one per file).

mod bundled;
mod crossings;
mod drone_safety;
mod map_files;
mod recording;
mod swarm;
