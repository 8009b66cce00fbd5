//! The integration tests of this crate, in one test binary (one link instead of one per file).

mod core;
mod gri_doc;
mod swarm;
