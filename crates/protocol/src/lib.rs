//! simrob-protocol
