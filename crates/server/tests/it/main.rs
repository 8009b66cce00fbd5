//! The integration tests of this crate, in one test binary (one link instead of one per file).

mod simrob_common;

mod confirmations;
mod departures;
mod humanoid_udp;
mod simrob_e2e;
