//! simrob-world
