//! The integration tests of this crate, in one test binary: the SimRob server and the Mobile
//! Robot Simulator through the lossy relays, on loopback; the relays under abuse.

mod common;

mod futrob;
mod hostile;
mod lockstep;
mod mrs;
mod split;
