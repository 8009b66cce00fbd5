//! The integration tests of this crate, in one test binary (one link instead of one per file).

mod common;

mod departures;
mod divergence;
mod hardening;
mod info_request;
mod loops;
mod physics_threads;
mod rerun;
mod synchronize;
