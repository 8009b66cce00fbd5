//! Mobile Robot Simulator client (seed 001).
