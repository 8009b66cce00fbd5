//! The integration tests of this crate, in one test binary: the SimRob server and the Mobile
//! Robot Simulator through the lossy relays, on loopback.

mod common;

mod futrob;
mod lockstep;
mod mrs;
mod split;
