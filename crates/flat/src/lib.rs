//! simrob-flat: the 2D world engine (maps, grid, kinematics, sonar, bumpers). No I/O.
