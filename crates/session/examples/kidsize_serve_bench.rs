//! Benchmark: a 3-vs-3 KidSize scene served by the session to six `Humanoid_Brain` agents in
//! lockstep (sync mode): every iteration each brain gets its datagram (proprioception and, at
//! 4 Hz, its `paper` camera frame) and answers `Synchronize`. No sockets: datagrams go in
//! through `Session::handle_datagram` and out through `poll_transmit`, as `UdpServer` does.
//!
//! ```sh
//! cargo run --release -p simrob-session --example kidsize_serve_bench -- [SIMULATED_SECONDS]
//! ```

use std::net::SocketAddr;
use std::time::Instant;

use simrob_protocol::{decode_datagram, CommandKeys};
use simrob_session::{ServerConfig, Session};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: f64 = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(60.0);
    let mut session = Session::new(ServerConfig::default());
    let keys = CommandKeys::default();
    let now = Instant::now();
    let commander: SocketAddr = "127.0.0.1:6999".parse()?;
    for file in [
        include_str!("../../../scenarios/soccer/kidsize.xml"),
        include_str!("../../../scenarios/soccer/teams-3v3.xml"),
    ] {
        for r in decode_datagram(file.as_bytes(), &keys) {
            r?;
        }
        session.handle_datagram(commander, file.as_bytes(), now);
    }
    let ids = [21u32, 22, 23, 31, 32, 33];
    let addr = |id: u32| -> SocketAddr { SocketAddr::from(([127, 0, 0, 1], 7000 + id as u16)) };
    for id in ids {
        let xml = format!("<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"Humanoid_Brain\"><Port>{}</Port><IP>127.0.0.1</IP><Sync>true</Sync><Broadcast>0</Broadcast><Key>{id}</Key></Agent_Message></Message>", 7000 + id);
        session.handle_datagram(addr(id), xml.as_bytes(), now);
    }
    let sim = "<Message><Simulation_Message><Control_Request Command=\"Set_Sync_Mode\"><Sync_Mode>true</Sync_Mode></Control_Request><Control_Request Command=\"Initialize_Simulation\"/></Simulation_Message></Message>";
    session.handle_datagram(commander, sim.as_bytes(), now);
    while session.poll_transmit().is_some() {}
    let iterations = (seconds / 0.01).round() as u64;
    let (mut datagrams, mut bytes, mut frames) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    for _ in 0..iterations {
        session.handle_timeout(now);
        let mut iteration = None;
        while let Some(t) = session.poll_transmit() {
            datagrams += 1;
            bytes += t.payload.len() as u64;
            let text = String::from_utf8_lossy(&t.payload);
            if text.contains("<Camera>") {
                frames += 1;
            }
            if let Some(i) = text
                .split("<Iteration>")
                .nth(1)
                .and_then(|s| s.split('<').next())
                .and_then(|s| s.parse::<u64>().ok())
            {
                iteration = Some(i);
            }
        }
        let Some(i) = iteration else { break };
        for id in ids {
            let xml = format!("<Message><Agent_Message Command=\"Synchronize\"><Key>{id}</Key><Iteration>{i}</Iteration></Agent_Message></Message>");
            session.handle_datagram(addr(id), xml.as_bytes(), now);
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let sim_s = session.world().sim_time();
    println!("3-vs-3 KidSize scene served to six Humanoid_Brain agents in lockstep (no sockets)");
    println!(
        "simulated {sim_s:.1} s in {wall:.3} s wall: {:.0}x real time",
        sim_s / wall
    );
    println!("datagrams out {datagrams} ({bytes} bytes), camera frames {frames}");
    Ok(())
}
