//! The integration tests of this crate, in one test binary (one link instead of one per file).

mod common;

mod client;
mod e2e;
mod hostile;
mod map_changes;
mod reconnect;
mod stepped;
mod wander;
