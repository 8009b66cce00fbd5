//! The Mobile Robot Simulator TCP server (seed 001).
