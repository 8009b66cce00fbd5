//! Datagrams that only a server sends (answers, broadcasts, errors) are never answered, and no
//! agent registers at the server's own address: two servers, or one server and itself, never
//! answer each other for ever. Every datagram a session sends is delivered to the address it
//! names, if that address is one of the sessions, and counted.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use simrob_session::{ServerConfig, Session};

use crate::common;
use common::*;

const INIT: &str = "<Message><Simulation_Message><Control_Request Command=\"Initialize_Simulation\"/></Simulation_Message></Message>";

fn unregister(key: &str) -> String {
    format!(
        "<Message><Agent_Message Command=\"Unregister_Agent\"><Key>{key}</Key></Agent_Message></Message>"
    )
}

/// A session at `at` with a slow world (one iteration every 10 ms of made-up time).
fn server_at(at: SocketAddr) -> Session {
    let mut s = session_with(ServerConfig::default());
    s.set_own_address(at);
    s.handle_datagram(addr("127.0.0.1:9000"), INIT.as_bytes(), Instant::now());
    drain(&mut s);
    s
}

/// Runs the sessions `rounds` times: each one's due iterations, then every datagram it sends
/// to another session's (or its own) address is handed to that session. Returns how many
/// datagrams went from one session to a session.
fn pump(servers: &mut [(SocketAddr, Session)], t0: Instant, rounds: u32) -> usize {
    let mut between = 0;
    for r in 0..rounds {
        let now = t0 + Duration::from_millis(u64::from(r) * 10);
        let mut mail: Vec<(SocketAddr, SocketAddr, Vec<u8>)> = Vec::new();
        for (at, s) in servers.iter_mut() {
            s.handle_timeout(now);
            for t in drain(s) {
                mail.push((*at, t.to, t.payload));
            }
        }
        for (from, to, payload) in mail {
            if let Some((_, s)) = servers.iter_mut().find(|(at, _)| *at == to) {
                between += 1;
                s.handle_datagram(from, &payload, now);
            }
        }
    }
    between
}

#[test]
fn an_agent_may_not_register_at_the_servers_own_address() {
    let at = addr("127.0.0.1:15111");
    let mut s = server_at(at);
    let me = addr("127.0.0.1:40000");
    s.handle_datagram(
        me,
        register("self", "127.0.0.1", 15111, 0.1).as_bytes(),
        Instant::now(),
    );
    let out = texts_to(&drain(&mut s), me);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(
        out[0].contains("Error: Register_Agent: 127.0.0.1:15111 is the server's own address"),
        "{out:?}"
    );
    assert!(s.agents().is_empty());
    // Bound to every interface: its port on loopback is its own too.
    let mut any = server_at(addr("0.0.0.0:15112"));
    any.handle_datagram(
        me,
        register("self", "127.0.0.1", 15112, 0.1).as_bytes(),
        Instant::now(),
    );
    assert!(any.agents().is_empty());
    assert!(texts_to(&drain(&mut any), me)[0].contains("the server's own address"));
}

#[test]
fn what_only_a_server_sends_is_dropped_unanswered_and_counted() {
    let mut s = server_at(addr("127.0.0.1:15111"));
    let peer = addr("127.0.0.1:15222");
    for datagram in [
        "<Response>Error: unexpected root element &lt;Response&gt;</Response>",
        "<?xml version=\"1.0\"?>\n<Broadcast><Iteration>3</Iteration></Broadcast>",
        "<Response><Agent_Information><Key>a</Key><Port>1</Port><IP>127.0.0.1</IP></Agent_Information></Response>",
        "Error: a bare error text",
    ] {
        s.handle_datagram(peer, datagram.as_bytes(), Instant::now());
        assert_eq!(drain(&mut s), vec![], "{datagram} was answered");
    }
    assert_eq!(s.stats().dropped, 4);
    assert_eq!(s.stats().errors, 0);
    // A root that is not a request and not a server's still gets its error.
    s.handle_datagram(peer, b"<Responses/>", Instant::now());
    assert!(texts_to(&drain(&mut s), peer)[0].contains("unexpected root element"));
}

#[test]
fn two_servers_do_not_argue_when_one_sends_broadcasts_to_the_other() {
    let (a_at, b_at) = (addr("127.0.0.1:15111"), addr("127.0.0.1:15222"));
    let mut servers = [(a_at, server_at(a_at)), (b_at, server_at(b_at))];
    let me = addr("127.0.0.1:40000");
    let t0 = Instant::now();
    // An agent of A names B's port, then leaves; and one of B names A's port and stays.
    let a = &mut servers[0].1;
    a.handle_datagram(me, register("b", "127.0.0.1", 15222, 0.0).as_bytes(), t0);
    let b = &mut servers[1].1;
    b.handle_datagram(me, register("a", "127.0.0.1", 15111, 0.0).as_bytes(), t0);
    let during = pump(&mut servers, t0, 50);
    servers[0]
        .1
        .handle_datagram(me, unregister("b").as_bytes(), t0);
    let after = pump(&mut servers, t0 + Duration::from_secs(1), 50);
    // At most what the agents' registrations asked for; nothing the servers say to each other
    // makes either say more.
    assert!(after <= during, "{during} datagrams, then {after}");
    let quiet = pump(&mut servers, t0 + Duration::from_secs(2), 50);
    assert!(quiet <= 50, "{quiet}");
    for (_, s) in &servers {
        assert_eq!(
            s.stats().errors,
            0,
            "a server answered the other's datagrams"
        );
    }
}

#[test]
fn a_server_sent_its_own_datagrams_does_not_answer_itself() {
    // Its own address not told (a shell that does not know it): its broadcasts come back to
    // it, and are dropped.
    let at = addr("127.0.0.1:15111");
    let mut s = session_with(ServerConfig::default());
    s.handle_datagram(addr("127.0.0.1:9000"), INIT.as_bytes(), Instant::now());
    s.handle_datagram(
        at,
        register("self", "127.0.0.1", 15111, 0.0).as_bytes(),
        Instant::now(),
    );
    drain(&mut s);
    let mut servers = [(at, s)];
    let first = pump(&mut servers, Instant::now(), 100);
    assert!(first <= 100, "{first}");
    assert_eq!(servers[0].1.stats().errors, 0);
}

fn info_request(requester: &str, requested: &str) -> String {
    format!(
        "<Message><Agent_Message Command=\"Info_Request\"><Requester>{requester}</Requester><Requested>{requested}</Requested></Agent_Message></Message>"
    )
}

#[test]
fn an_address_that_sent_nothing_is_sent_nothing_even_on_loopback() {
    // One registration from one socket naming another port of this machine: the other port
    // never asked, and gets nothing, however many iterations run.
    let mut s = server_at(addr("127.0.0.1:5005"));
    let (sender, victim) = (addr("127.0.0.1:40000"), addr("127.0.0.1:40001"));
    let t0 = Instant::now();
    s.handle_datagram(
        sender,
        register("v", "127.0.0.1", 40001, 0.0).as_bytes(),
        t0,
    );
    let out = drain(&mut s);
    let to_sender = texts_to(&out, sender);
    assert_eq!(to_sender.len(), 1, "{to_sender:?}");
    assert!(to_sender[0].contains("Sucessfully added agent with key v, port 40001"));
    // Other agents' news and Info_Request answers do not go there either.
    let other = addr("127.0.0.1:40002");
    s.handle_datagram(
        other,
        register("o", "127.0.0.1", 40002, -1.0).as_bytes(),
        t0,
    );
    s.handle_datagram(sender, info_request("v", "o").as_bytes(), t0);
    let refused = texts_to(&drain(&mut s), sender);
    assert!(
        refused.iter().any(|t| t.contains("Error: Info_Request: requester \"v\" receives at 127.0.0.1:40001, which has sent the server nothing yet")),
        "{refused:?}"
    );
    let mut to_victim = 0;
    for i in 0..100u64 {
        s.handle_timeout(t0 + Duration::from_millis(i * 10));
        to_victim += drain(&mut s).iter().filter(|t| t.to == victim).count();
    }
    assert_eq!(
        to_victim, 0,
        "an address that never sent anything was sent datagrams"
    );
    assert!(s.stats().iterations >= 10);
    // Once it sends something (here an Info_Request about itself), it gets its broadcasts.
    let later = t0 + Duration::from_secs(2);
    s.handle_datagram(victim, info_request("v", "v").as_bytes(), later);
    let answer = texts_to(&drain(&mut s), victim);
    assert!(answer[0].contains("<Agent_Information>"), "{answer:?}");
    s.handle_timeout(later + Duration::from_millis(10));
    let out = texts_to(&drain(&mut s), victim);
    assert!(out.iter().any(|t| t.starts_with("<Broadcast>")), "{out:?}");
}

#[test]
fn what_an_unproven_address_causes_is_not_fanned_out_to_other_agents() {
    // Loopback not trusted; the lab's agents at 127.0.0.5 are. A stranger at 127.0.0.2
    // registers one key from 200 ports, each closing (ICMP port unreachable) after.
    let mut config = ServerConfig::default();
    config.set("trustloopback", "false").expect("trustloopback");
    config
        .set("trustedagentips", "127.0.0.5")
        .expect("trustedagentips");
    let mut s = session_with(config);
    let t0 = Instant::now();
    let lab: Vec<SocketAddr> = (0..5)
        .map(|i| addr(&format!("127.0.0.5:{}", 21000 + i)))
        .collect();
    for (i, a) in lab.iter().enumerate() {
        let reg = register(&format!("lab{i}"), "127.0.0.5", a.port(), 1000.0);
        s.handle_datagram(*a, reg.as_bytes(), t0);
    }
    drain(&mut s);
    let mut sent = 0;
    let mut to_lab = 0;
    for p in 0..200u16 {
        let from = addr(&format!("127.0.0.2:{}", 30000 + p));
        let reg = register("stranger", "127.0.0.2", from.port(), 1000.0);
        sent += reg.len();
        s.handle_datagram(from, reg.as_bytes(), t0);
        s.handle_unreachable(from, t0);
        let out = drain(&mut s);
        to_lab += out
            .iter()
            .filter(|t| lab.contains(&t.to))
            .map(|t| t.payload.len())
            .sum::<usize>();
    }
    assert_eq!(
        to_lab, 0,
        "the stranger's {sent} bytes made the lab's agents be sent {to_lab}"
    );
    // The lab's own news still reaches the lab.
    s.handle_datagram(lab[0], unregister("lab0").as_bytes(), t0);
    let out = drain(&mut s);
    assert_eq!(texts_to(&out, lab[1]).len(), 1, "{out:?}");
}
