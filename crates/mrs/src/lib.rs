//! The Mobile Robot Simulator: its text protocol codec, the sans-IO core, the TCP server and the client.
