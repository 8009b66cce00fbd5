//! Forged DDS participant announcements against a real participant, sent on the loopback
//! interface and from a network namespace of the test's own: past `max_participants` peers
//! the node stops (its participant dropped) instead of growing without bound, and with
//! `LOCALHOST` nothing from another machine reaches it.

use std::net::{Ipv4Addr, UdpSocket};
use std::time::{Duration, Instant};

use simrob_ros2::bridge::{Bridge, Rates};
use simrob_ros2::env::{Discovery, Range};
use simrob_ros2::node::{Inputs, Node};

/// RTPS's well-known port of participant `index`'s unicast discovery on `domain` (RTPS 2.5,
/// 9.6.2.3: PB 7400, DG 250, PG 2, d1 10).
fn discovery_port(domain: u16, index: u16) -> u16 {
    7400 + 250 * domain + 10 + 2 * index
}

fn parameter(out: &mut Vec<u8>, id: u16, value: &[u8]) {
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&(value.len() as u16).to_le_bytes());
    out.extend_from_slice(value);
}

fn locator(port: u16) -> Vec<u8> {
    let mut l = Vec::with_capacity(24);
    l.extend_from_slice(&1i32.to_le_bytes()); // UDPv4
    l.extend_from_slice(&u32::from(port).to_le_bytes());
    l.extend_from_slice(&[0; 12]);
    l.extend_from_slice(&Ipv4Addr::LOCALHOST.octets());
    l
}

/// An SPDP announcement (RTPS DATA of the participant writer) of a participant that does not
/// exist, `prefix` its GUID prefix, its locators `port` on 127.0.0.1, its lease `lease_s`.
fn forged_participant(prefix: [u8; 12], port: u16, lease_s: i32) -> Vec<u8> {
    let mut params = Vec::new();
    parameter(&mut params, 0x0015, &[2, 4, 0, 0]); // protocol version
    parameter(&mut params, 0x0016, &[0x01, 0x12, 0, 0]); // vendor
    let mut guid = prefix.to_vec();
    guid.extend_from_slice(&[0, 0, 1, 0xc1]); // the participant entity
    parameter(&mut params, 0x0050, &guid);
    parameter(&mut params, 0x0032, &locator(port)); // metatraffic unicast
    parameter(&mut params, 0x0031, &locator(port)); // default unicast
    parameter(&mut params, 0x0058, &0x0000_0c3fu32.to_le_bytes()); // built-in endpoints
    let mut lease = lease_s.to_le_bytes().to_vec();
    lease.extend_from_slice(&[0; 4]);
    parameter(&mut params, 0x0002, &lease);
    parameter(&mut params, 0x0001, &[]); // sentinel

    let mut body = Vec::new();
    body.extend_from_slice(&0u16.to_le_bytes()); // extra flags
    body.extend_from_slice(&16u16.to_le_bytes()); // octets to inline QoS
    body.extend_from_slice(&[0, 0, 0, 0]); // reader: unknown
    body.extend_from_slice(&[0, 1, 0, 0xc2]); // writer: SPDP participant writer
    body.extend_from_slice(&0i32.to_le_bytes());
    body.extend_from_slice(&1u32.to_le_bytes()); // sequence number 1
    body.extend_from_slice(&[0, 3, 0, 0]); // PL_CDR_LE
    body.extend_from_slice(&params);

    let mut m = b"RTPS".to_vec();
    m.extend_from_slice(&[2, 4, 0x01, 0x12]);
    m.extend_from_slice(&prefix);
    m.extend_from_slice(&[0x15, 0x05]); // DATA, little endian, data present
    m.extend_from_slice(&(body.len() as u16).to_le_bytes());
    m.extend_from_slice(&body);
    m
}

/// A node on the loopback interface (at most 20 peers) on a domain of this test process's
/// own, and its unicast discovery port.
fn local_node(domain_offset: u32) -> (Node, u16) {
    let domain = 150 + ((std::process::id() + domain_offset) % 60) as u16;
    let node = Node::new(
        Discovery {
            domain_id: domain,
            range: Range::Localhost,
            max_participants: 20,
            max_sample: simrob_ros2::env::DEFAULT_MAX_SAMPLE,
        },
        Inputs::default(),
        false,
    )
    .expect("a participant on the loopback interface");
    let index = node.participant_id().expect("the node runs");
    (node, discovery_port(domain, index))
}

/// A node on the loopback interface (at most 20 peers) that `count` forged participants have
/// been announced to, and the socket they named as their address (whatever the participant
/// sends them stays in this test).
fn forged_peers(domain_offset: u32, count: u32, mark: u8) -> (Node, UdpSocket) {
    let (node, discovery) = local_node(domain_offset);
    let sink = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("a loopback socket");
    let sink_port = sink.local_addr().expect("its address").port();
    let forger = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("a loopback socket");
    let to = (Ipv4Addr::LOCALHOST, discovery);
    for i in 0..count {
        let mut prefix = [mark; 12];
        prefix[..4].copy_from_slice(&i.to_le_bytes());
        prefix[4..8].copy_from_slice(&std::process::id().to_le_bytes());
        forger
            .send_to(&forged_participant(prefix, sink_port, 30), to)
            .expect("sent on loopback");
    }
    (node, sink)
}

#[test]
fn a_flood_of_forged_participants_stops_the_node_at_its_limit() {
    let (mut node, _sink) = forged_peers(0, 50, 0x5a);
    let mut bridge = Bridge::new(Rates::default());
    // The participant's status wakes the node; the guard only bounds a failing test.
    let guard = Instant::now() + Duration::from_secs(120);
    while node.stopped().is_none() && Instant::now() < guard {
        node.wait(Some(Duration::from_secs(1)));
        node.receive(&mut bridge);
    }
    let why = node.stopped().expect("the node stops past 20 peers");
    assert!(
        why.contains("more than 20 other DDS participants")
            && why.contains("--ros2-max-participants"),
        "{why}"
    );
    assert_eq!(node.robots().count(), 0);
    assert_eq!(node.participant_id(), None);
    // A stopped node publishes and reads nothing, and drops at once.
    assert!(node.publish(bridge.clock_only(1.0)).is_ok());
    assert_eq!(node.receive(&mut bridge), 0);
}

#[test]
fn a_few_peers_leave_the_node_running() {
    let (mut node, sink) = forged_peers(30, 5, 0xa5);
    sink.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("a timeout");
    // The participant took them as peers: it speaks to the address they named.
    let mut buf = [0u8; 2048];
    let (n, _) = sink
        .recv_from(&mut buf)
        .expect("the participant answers its peers");
    assert_eq!(&buf[..4], b"RTPS", "{n} bytes");
    let mut bridge = Bridge::new(Rates::default());
    node.receive(&mut bridge);
    assert!(node.publish(bridge.clock_only(1.0)).is_ok());
    assert_eq!(node.stopped(), None);
    assert!(node.participant_id().is_some());
}

/// A network namespace of this test's own, joined to this one by a veth pair (removed on
/// drop): a second machine whose datagrams arrive on an interface that is not `lo`.
struct OtherMachine {
    name: String,
    host_side: String,
}

impl OtherMachine {
    /// Its address and ours, or None where namespaces cannot be made (no `ip`, no
    /// privilege).
    fn new() -> Option<(OtherMachine, Ipv4Addr, Ipv4Addr)> {
        let id = std::process::id() % 50_000;
        let m = OtherMachine {
            name: format!("simrob-t{id}"),
            host_side: format!("srt{id}a"),
        };
        let peer = format!("srt{id}b");
        let net = (id % 60) as u8;
        let (ours, theirs) = (
            Ipv4Addr::new(10, 213, net, 1),
            Ipv4Addr::new(10, 213, net, 2),
        );
        if !ip(&["netns", "add", &m.name]) {
            return None;
        }
        let ok = ip(&[
            "link",
            "add",
            &m.host_side,
            "type",
            "veth",
            "peer",
            "name",
            &peer,
        ]) && ip(&["link", "set", &peer, "netns", &m.name])
            && ip(&["addr", "add", &format!("{ours}/30"), "dev", &m.host_side])
            && ip(&["link", "set", &m.host_side, "up"])
            && ip(&[
                "netns",
                "exec",
                &m.name,
                "ip",
                "addr",
                "add",
                &format!("{theirs}/30"),
                "dev",
                &peer,
            ])
            && ip(&["netns", "exec", &m.name, "ip", "link", "set", &peer, "up"]);
        if !ok {
            eprintln!("the namespace {} could not be wired (veth)", m.name);
            return None; // `m` removes what was made.
        }
        Some((m, ours, theirs))
    }

    /// Sends `datagram` from inside the namespace to `to`.
    fn send(&self, datagram: &[u8], to: (Ipv4Addr, u16)) {
        let hex: String = datagram.iter().map(|b| format!("{b:02x}")).collect();
        let script = "import socket,sys; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(bytes.fromhex(sys.argv[1]), (sys.argv[2], int(sys.argv[3])))";
        let ok = std::process::Command::new("ip")
            .args(["netns", "exec", &self.name, "python3", "-c", script, &hex])
            .arg(to.0.to_string())
            .arg(to.1.to_string())
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "sent from the namespace");
    }
}

impl Drop for OtherMachine {
    fn drop(&mut self) {
        ip(&["link", "del", &self.host_side]);
        ip(&["netns", "del", &self.name]);
    }
}

fn ip(args: &[&str]) -> bool {
    std::process::Command::new("ip")
        .args(args)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// With `LOCALHOST`, a participant takes nothing that came from another machine: a forged
/// peer announced from a network namespace is not answered, while the same announcement
/// from loopback is.
#[cfg(target_os = "linux")]
#[test]
fn localhost_takes_nothing_from_another_machine() {
    let Some((other, ours, _theirs)) = OtherMachine::new() else {
        eprintln!(
            "skipped: no network namespace can be made here (needs `ip`, CAP_NET_ADMIN and veth)"
        );
        return;
    };
    let (node, port) = local_node(15);
    let from_afar = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("a loopback socket");
    let from_here = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("a loopback socket");
    let named = |s: &UdpSocket| s.local_addr().expect("its address").port();
    // From the other machine to our address on the veth pair (the sockets bind every
    // address), naming a socket here; then the same from loopback.
    other.send(
        &forged_participant([0x11; 12], named(&from_afar), 30),
        (ours, port),
    );
    UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))
        .expect("a loopback socket")
        .send_to(
            &forged_participant([0x22; 12], named(&from_here), 30),
            (Ipv4Addr::LOCALHOST, port),
        )
        .expect("sent on loopback");
    // The peer announced from here is answered at once (its announcement, then heartbeats
    // ten times a second); by its twentieth datagram one announced from afar would have
    // been answered too.
    from_here
        .set_read_timeout(Some(Duration::from_secs(60)))
        .expect("a timeout");
    let mut buf = [0u8; 2048];
    for _ in 0..20 {
        from_here
            .recv_from(&mut buf)
            .expect("the participant answers the peer announced from loopback");
    }
    from_afar.set_nonblocking(true).expect("non-blocking");
    assert!(
        from_afar.recv_from(&mut buf).is_err(),
        "the peer announced from another machine was answered"
    );
    drop(node);
}
