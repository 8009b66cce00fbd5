//! The integration tests of this crate, in one test binary (one link instead of one per file).

mod kidsize;
mod rules_config;
mod team;
mod world_actions;
