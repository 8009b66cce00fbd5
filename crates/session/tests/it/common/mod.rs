//! Helpers shared by the session's integration tests: made-up addresses, the soccer scene,
//! SimRob messages as text, and what the session sends.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::time::Instant;

use simrob_session::{ServerConfig, Session, Transmit};

pub const SOCCER: &str = include_str!("../../../../../scenarios/soccer.xml");

pub fn addr(s: &str) -> SocketAddr {
    s.parse().expect("address")
}

pub fn session_with(config: ServerConfig) -> Session {
    let mut s = Session::new(config);
    s.handle_datagram(addr("127.0.0.1:9000"), SOCCER.as_bytes(), Instant::now());
    drain(&mut s);
    s
}

pub fn session() -> Session {
    session_with(ServerConfig::default())
}

pub fn drain(s: &mut Session) -> Vec<Transmit> {
    std::iter::from_fn(|| s.poll_transmit()).collect()
}

pub fn texts_to(out: &[Transmit], to: SocketAddr) -> Vec<String> {
    out.iter()
        .filter(|t| t.to == to)
        .map(|t| String::from_utf8_lossy(&t.payload).into_owned())
        .collect()
}

pub fn control(body: &str) -> String {
    format!("<Message><Simulation_Message>{body}</Simulation_Message></Message>")
}

pub fn register(key: &str, ip: &str, port: u16, broadcast: f64) -> String {
    format!(
        "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"RobotController\"><Port>{port}</Port><IP>{ip}</IP><Sync>false</Sync><Broadcast>{broadcast}</Broadcast><Key>{key}</Key></Agent_Message></Message>"
    )
}
