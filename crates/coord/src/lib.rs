//! Coordination of heterogeneous robot teams: Control Center, Time Server, task managers with preconditions and Contract Net, sans-IO.
