//! simrob-swarm: many robots at high abstraction on the 2D world (ECS, events, navigation, scripts).
