//! Broadcasts split over several datagrams, through a relay that loses, duplicates and
//! reorders them: an agent gets whole worlds or nothing, never half of one.

use std::time::Duration;

use simrob_client::agent::{Agent, AgentOptions, ClientError};
use simrob_netbed::{Impairment, UdpRelay};

use crate::common::{TestServer, START};

fn register(agent: &mut Agent, key: &str) {
    for _ in 0..20 {
        match agent.register(key, AgentOptions::default()) {
            Ok(_) => return,
            Err(ClientError::Timeout(_)) => continue,
            Err(e) => panic!("register {key}: {e}"),
        }
    }
    panic!("register {key}: no confirmation in 20 tries");
}

#[test]
fn a_lost_part_drops_that_iterations_broadcast_whole() {
    // Small datagrams: each soccer broadcast is split in many parts.
    let server = TestServer::start_with("split", &["soccer.xml"], START, |c| {
        c.maximum_datagram_size = 1024;
    });
    // The whole world, as an agent on a perfect link sees it.
    let mut direct = Agent::connect(server.addr).expect("socket");
    register(&mut direct, "direct");
    let whole = direct
        .next_broadcast(Duration::from_secs(30))
        .expect("receive")
        .expect("a broadcast");
    let (bodies, entities) = (whole.bodies.len(), whole.entities.len());
    assert!(
        bodies + entities > 10,
        "{bodies} bodies, {entities} entities"
    );
    drop(direct);

    let lossy = Impairment {
        loss: 0.05,
        duplicate: 0.05,
        reorder: 0.2,
        seed: 21,
        ..Impairment::clean()
    };
    let relay = UdpRelay::start(server.addr, Impairment::clean(), lossy).expect("relay");
    let mut agent = Agent::connect(relay.addr()).expect("socket");
    register(&mut agent, "lossy");
    let mut last = 0;
    let mut got = 0;
    while got < 40 {
        let b = agent
            .next_broadcast(Duration::from_secs(30))
            .expect("receive")
            .expect("a broadcast (30 s guard)");
        assert_eq!(b.part, None, "parts are put together");
        assert_eq!(
            (b.bodies.len(), b.entities.len()),
            (bodies, entities),
            "iteration {}: half a world",
            b.iteration
        );
        assert!(b.iteration > last, "iteration {} after {last}", b.iteration);
        last = b.iteration;
        got += 1;
    }
    let s = relay.stats().down;
    assert!(s.lost > 0 && s.reordered > 0 && s.duplicated > 0, "{s:?}");
}
