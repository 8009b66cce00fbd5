//! Relays under abuse: connections opened and closed without end, more at once than
//! allowed, a flood of datagrams held for a long delay. Memory and descriptors stay within
//! the documented limits, and the relay keeps serving. Waits are on the relays' counts,
//! with a guard against failure.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use simrob_netbed::{Impairment, NetbedError, TcpRelay, UdpLimits, UdpRelay, MAX_QUEUED_BYTES};

const GUARD: Duration = Duration::from_secs(60);

/// Waits until `done` holds; fails past the guard.
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < GUARD, "never: {what}");
        std::thread::yield_now();
    }
}

/// Opens a connection through `relay` and the server's end of it.
fn connect(relay: &TcpRelay, server: &TcpListener) -> (TcpStream, TcpStream) {
    let client = TcpStream::connect(relay.addr()).expect("connect through the relay");
    client.set_read_timeout(Some(GUARD)).expect("guard");
    let (upstream, _) = server.accept().expect("the relay connects on");
    upstream.set_read_timeout(Some(GUARD)).expect("guard");
    (client, upstream)
}

#[test]
fn a_tcp_relay_forgets_closed_connections_and_refuses_past_its_limit() {
    let server = TcpListener::bind("127.0.0.1:0").expect("listener");
    let relay = TcpRelay::start(server.local_addr().expect("addr")).expect("relay");
    relay.set_max_connections(2);
    // Many connections, one after the other: each is forgotten (its sockets closed) once both
    // ends have closed, so the relay's descriptors do not run out.
    for i in 0..300u32 {
        let (mut client, mut upstream) = connect(&relay, &server);
        client.write_all(&i.to_le_bytes()).expect("write");
        let mut got = [0u8; 4];
        upstream.read_exact(&mut got).expect("forwarded");
        assert_eq!(u32::from_le_bytes(got), i);
        drop((client, upstream));
        wait_until("the connection forgotten", || relay.stats().open == 0);
    }
    // Two at once are relayed; a third is closed at once, and counted.
    let (a, a_up) = connect(&relay, &server);
    let (_b, _b_up) = connect(&relay, &server);
    let mut third = TcpStream::connect(relay.addr()).expect("connect");
    third.set_read_timeout(Some(GUARD)).expect("guard");
    let mut byte = [0u8; 1];
    assert_eq!(third.read(&mut byte).unwrap_or(0), 0, "closed at once");
    let s = relay.stats();
    assert_eq!((s.open, s.refused, s.connections), (2, 1, 302), "{s:?}");
    // Room again once one closes.
    drop((a, a_up));
    wait_until("room again", || relay.stats().open == 1);
    let (mut c, mut c_up) = connect(&relay, &server);
    c.write_all(b"x").expect("write");
    c_up.read_exact(&mut byte).expect("forwarded");
    assert_eq!(&byte, b"x");
}

#[test]
fn a_flood_held_by_a_long_delay_stays_within_the_queue_limit() {
    let server = UdpSocket::bind("127.0.0.1:0").expect("server socket");
    let slow = Impairment {
        delay: Duration::from_secs(3600),
        duplicate: 1.0,
        ..Impairment::clean()
    };
    let relay = UdpRelay::start(server.local_addr().expect("addr"), slow, slow).expect("relay");
    let agent = UdpSocket::bind("127.0.0.1:0").expect("agent socket");
    let datagram = vec![b'x'; 60_000];
    // Twice over what the relay may hold (each datagram doubled), one at a time so the
    // kernel loses none.
    let n = (MAX_QUEUED_BYTES / datagram.len()) as u64 + 2;
    for k in 1..=n {
        agent.send_to(&datagram, relay.addr()).expect("send");
        wait_until("the datagram received", || relay.stats().up.received == k);
    }
    let s = relay.stats();
    assert!(s.queued_bytes <= MAX_QUEUED_BYTES, "{s:?}");
    // Nothing has left: what is held waits, the rest overflowed.
    assert_eq!(
        (s.up.sent, s.up.waiting),
        (0, (MAX_QUEUED_BYTES / datagram.len()) as u64),
        "{s:?}"
    );
    assert_eq!(s.up.waiting + s.up.overflowed, 2 * n, "{s:?}");
    assert_eq!(s.queued_bytes as u64, s.up.waiting * datagram.len() as u64);
}

#[test]
fn a_udp_relay_forgets_idle_agents_and_keeps_their_figures() {
    let server = UdpSocket::bind("127.0.0.1:0").expect("server socket");
    server.set_read_timeout(Some(GUARD)).expect("guard");
    let clean = Impairment::clean();
    let relay = UdpRelay::start(server.local_addr().expect("addr"), clean, clean).expect("relay");
    // Forgotten as soon as idle: each run of the agent (a new socket) gets a new flow, and
    // the old one is closed, so runs never use up the relay's flows.
    relay.set_flow_idle(Duration::from_millis(1));
    let mut buf = [0u8; 64];
    for run in 1..=5u64 {
        let agent = UdpSocket::bind("127.0.0.1:0").expect("agent socket");
        agent
            .send_to(b"<Key>again</Key>", relay.addr())
            .expect("send");
        let (n, _) = server.recv_from(&mut buf).expect("relayed (guard)");
        assert_eq!(&buf[..n], b"<Key>again</Key>");
        wait_until("the flow forgotten", || relay.stats().expired == run);
    }
    let s = relay.stats();
    assert_eq!((s.flows, s.no_flow), (0, 0), "{s:?}");
    assert_eq!((s.up.received, s.up.sent), (5, 5), "{s:?}");
}

#[test]
fn a_datagram_received_is_counted_sent_and_no_longer_on_its_way() {
    let server = UdpSocket::bind("127.0.0.1:0").expect("server socket");
    server.set_read_timeout(Some(GUARD)).expect("guard");
    let clean = Impairment::clean();
    let relay = UdpRelay::start(server.local_addr().expect("addr"), clean, clean).expect("relay");
    let agent = UdpSocket::bind("127.0.0.1:0").expect("agent socket");
    agent.set_read_timeout(Some(GUARD)).expect("guard");
    let mut buf = [0u8; 256];
    for k in 1..=50u64 {
        agent.send_to(&[b'u'; 101], relay.addr()).expect("send");
        let (_, via) = server.recv_from(&mut buf).expect("relayed up (guard)");
        // The moment it has arrived, the relay counts it sent and holds no byte of it.
        let s = relay.stats();
        assert_eq!(
            (s.up.sent, s.up.waiting, s.queued_bytes),
            (k, 0, 0),
            "{s:?}"
        );
        server.send_to(&[b'd'; 101], via).expect("answer");
        agent.recv_from(&mut buf).expect("relayed down (guard)");
        let s = relay.stats();
        assert_eq!(
            (s.down.sent, s.down.waiting, s.queued_bytes),
            (k, 0, 0),
            "{s:?}"
        );
    }
}

#[test]
fn a_udp_relay_keeps_to_the_flows_and_bytes_it_is_given() {
    let server = UdpSocket::bind("127.0.0.1:0").expect("server socket");
    server.set_read_timeout(Some(GUARD)).expect("guard");
    let to = server.local_addr().expect("addr");
    let front = std::net::SocketAddr::new(to.ip(), 0);
    let clean = Impairment::clean();
    for bad in [
        UdpLimits {
            max_flows: 0,
            ..UdpLimits::default()
        },
        UdpLimits {
            max_queued_bytes: 0,
            ..UdpLimits::default()
        },
    ] {
        let refused = UdpRelay::start_on_within(front, to, clean, clean, bad);
        assert!(matches!(refused, Err(NetbedError::Limit(l)) if l == bad));
    }
    // Two agents at once: a third is not relayed (counted), the two are.
    let two = UdpLimits {
        max_flows: 2,
        ..UdpLimits::default()
    };
    let relay = UdpRelay::start_on_within(front, to, clean, clean, two).expect("relay");
    let agents: Vec<UdpSocket> = (0..3)
        .map(|_| UdpSocket::bind("127.0.0.1:0").expect("agent socket"))
        .collect();
    let mut buf = [0u8; 16];
    for (k, agent) in agents.iter().enumerate() {
        agent.send_to(&[k as u8], relay.addr()).expect("send");
        wait_until("the datagram received", || {
            relay.stats().up.received + relay.stats().no_flow == k as u64 + 1
        });
    }
    for k in 0..2u8 {
        let (n, _) = server.recv_from(&mut buf).expect("relayed (guard)");
        assert_eq!(&buf[..n], &[k]);
    }
    let s = relay.stats();
    assert_eq!((s.flows, s.no_flow, s.up.sent), (2, 1, 2), "{s:?}");
    drop(relay);
    // A queue of 1,000 bytes holds one 600-byte datagram held by a long delay, not two.
    let slow = Impairment {
        delay: Duration::from_secs(3600),
        ..Impairment::clean()
    };
    let small = UdpLimits {
        max_queued_bytes: 1000,
        ..UdpLimits::default()
    };
    let relay = UdpRelay::start_on_within(front, to, slow, slow, small).expect("relay");
    for k in 1..=2u64 {
        agents[0].send_to(&[b'q'; 600], relay.addr()).expect("send");
        wait_until("the datagram received", || relay.stats().up.received == k);
    }
    let s = relay.stats();
    assert_eq!(
        (s.up.waiting, s.up.overflowed, s.queued_bytes),
        (1, 1, 600),
        "{s:?}"
    );
}
