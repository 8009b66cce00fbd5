//! SimRob UDP client (seed 000).
