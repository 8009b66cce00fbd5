//! simrob-physics
