//! Six synchronous agents in lockstep through a relay that loses a fifth of the datagrams
//! each way: no agent is left behind, the server goes on past every loss, and the relay's
//! fates repeat exactly with the seed.

use std::time::Duration;

use simrob_client::agent::{Agent, AgentOptions, ClientError};
use simrob_netbed::{Impairment, UdpRelay};

use crate::common::{TestServer, SYNC_AND_START};

const AGENTS: usize = 6;
const TARGET: u64 = 40;

/// Registers through a lossy link: Register_Agent is safe to repeat (the same key from the
/// same address changes nothing), so a lost request or confirmation is sent again.
fn register(agent: &mut Agent, key: &str, sync: bool) {
    for _ in 0..20 {
        match agent.register(
            key,
            AgentOptions {
                sync,
                ..AgentOptions::default()
            },
        ) {
            Ok(_) => return,
            Err(ClientError::Timeout(_)) => continue,
            Err(e) => panic!("register {key}: {e}"),
        }
    }
    panic!("register {key}: no confirmation in 20 tries");
}

/// Runs one agent in lockstep until it has seen iteration `TARGET`; the iterations it saw.
fn run_agent(server: std::net::SocketAddr, key: String) -> Vec<u64> {
    let mut agent = Agent::connect(server).expect("socket");
    register(&mut agent, &key, true);
    let mut seen = Vec::new();
    loop {
        // A failure guard only: the server goes on within Sync_Wait of any loss.
        let b = agent
            .next_broadcast(Duration::from_secs(30))
            .expect("receive")
            .unwrap_or_else(|| panic!("{key}: no broadcast for 30 s: left behind"));
        agent.synchronize(b.iteration).expect("synchronize");
        seen.push(b.iteration);
        if b.iteration >= TARGET {
            return seen;
        }
    }
}

#[test]
fn six_synchronous_agents_keep_going_through_twenty_percent_loss() {
    let server = TestServer::start_with(
        "lockstep",
        &["materials.xml", "sumbot.xml"],
        SYNC_AND_START,
        |c| {
            c.sync_wait = 0.05;
        },
    );
    let lossy = Impairment {
        loss: 0.2,
        seed: 11,
        ..Impairment::clean()
    };
    let relay =
        UdpRelay::start(server.addr, lossy, Impairment { seed: 12, ..lossy }).expect("relay");
    let threads: Vec<_> = (0..AGENTS)
        .map(|i| {
            let addr = relay.addr();
            std::thread::spawn(move || run_agent(addr, format!("a{i}")))
        })
        .collect();
    for (i, t) in threads.into_iter().enumerate() {
        let seen = t.join().expect("agent thread");
        // Iterations only go forward, and the agent reached the target.
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "a{i}: {seen:?}");
        assert!(*seen.last().unwrap_or(&0) >= TARGET, "a{i}: {seen:?}");
    }
    let stats = relay.stats();
    assert_eq!(stats.flows, AGENTS);
    assert!(stats.up.lost > 0 && stats.down.lost > 0, "{stats:?}");
}

#[test]
fn the_relay_does_exactly_what_the_seed_says() {
    use simrob_netbed::fate::stream_id;
    use std::net::UdpSocket;
    let server = UdpSocket::bind("127.0.0.1:0").expect("server socket");
    let imp = Impairment {
        loss: 0.2,
        duplicate: 0.05,
        reorder: 0.1,
        seed: 3,
        ..Impairment::clean()
    };
    let relay = UdpRelay::start(server.local_addr().expect("addr"), imp, Impairment::clean())
        .expect("relay");
    // What the seed says: each datagram's copies, the lost ones none.
    const N: u64 = 400;
    let id = stream_id(b"probe");
    let mut expected: Vec<u64> = (0..N)
        .flat_map(|n| std::iter::repeat_n(n, imp.fate(id, n).delays.len()))
        .collect();
    let want = expected.len();
    server
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("guard");
    // How many datagrams the server has taken so far: the agent keeps at most two batches
    // ahead of it, so that the server's receive buffer never overflows while its thread
    // waits for a core (the relay and the sending agent can keep both cores busy).
    let arrived = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = arrived.clone();
    let receiver = std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = [0u8; 256];
        while got.len() < want {
            let (len, _) = server.recv_from(&mut buf).expect("a datagram (30 s guard)");
            let text = String::from_utf8_lossy(&buf[..len]);
            let n = text
                .split("<N>")
                .nth(1)
                .and_then(|r| r.split('<').next())
                .and_then(|v| v.parse::<u64>().ok())
                .expect("numbered");
            got.push(n);
            counter.store(got.len(), std::sync::atomic::Ordering::Release);
        }
        got
    });
    // Copies the seed sends of the datagrams numbered below `k`.
    let copies_below =
        |k: u64| -> usize { (0..k.min(N)).map(|n| imp.fate(id, n).delays.len()).sum() };
    let agent = UdpSocket::bind("127.0.0.1:0").expect("agent socket");
    for n in 0..N {
        let d = format!("<Key>probe</Key><N>{n}</N>");
        agent.send_to(d.as_bytes(), relay.addr()).expect("send");
        if n % 10 == 9 {
            // Ten at a time, each batch taken by the relay before the next (no socket
            // buffer overflows on a loaded machine): waits for the relay's count.
            while relay.stats().up.received <= n {
                std::thread::yield_now();
            }
            // And every copy of the batch before the last has reached the server (a copy
            // the relay holds back is let go once later ones have passed it). Waits on the
            // server's count; a receiver that failed ends the wait.
            let due = copies_below((n + 1).saturating_sub(20));
            while arrived.load(std::sync::atomic::Ordering::Acquire) < due
                && !receiver.is_finished()
            {
                std::thread::yield_now();
            }
        }
    }
    let mut got = receiver.join().expect("receiver");
    got.sort_unstable();
    expected.sort_unstable();
    assert_eq!(got, expected);
    // The relay counts a copy sent as it hands it to the socket: wait for the last.
    let mut s = relay.stats().up;
    while s.sent < expected.len() as u64 {
        std::thread::yield_now();
        s = relay.stats().up;
    }
    assert_eq!(s.received, N);
    assert_eq!(s.sent, expected.len() as u64);
    assert!(s.lost > 40 && s.duplicated > 5 && s.reordered > 10, "{s:?}");
}
