//! The SimRob UDP server (seed 000).
