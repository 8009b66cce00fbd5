//! The SimRob session, sans-IO: world, agents, lockstep, pacing; datagrams and time in, datagrams, timers and events out.
