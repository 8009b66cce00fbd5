//! Agents that leave: an explicit `Unregister_Agent`, a closed port (the shell reports the
//! ICMP port unreachable its host answered), and silence past `agentsilencetimeout` (time
//! handed in, never waited for).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use simrob_session::{Event, LogLevel, ServerConfig, Session};

use crate::common;
use common::*;

const INIT: &str = "<Message><Simulation_Message><Control_Request Command=\"Initialize_Simulation\"/></Simulation_Message></Message>";
const SYNC_MODE: &str = "<Message><Simulation_Message><Control_Request Command=\"Set_Sync_Mode\"><Sync_Mode>true</Sync_Mode></Control_Request></Simulation_Message></Message>";

fn register_sync(key: &str, port: u16) -> String {
    format!(
        "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"RobotController\"><Port>{port}</Port><IP>127.0.0.1</IP><Sync>true</Sync><Broadcast>-1</Broadcast><Key>{key}</Key></Agent_Message></Message>"
    )
}

fn unregister(key: &str) -> String {
    format!(
        "<Message><Agent_Message Command=\"Unregister_Agent\"><Key>{key}</Key></Agent_Message></Message>"
    )
}

fn synchronize(key: &str, iteration: u64) -> String {
    format!(
        "<Message><Agent_Message Command=\"Synchronize\"><Key>{key}</Key><Iteration>{iteration}</Iteration></Agent_Message></Message>"
    )
}

fn keys(s: &Session) -> Vec<String> {
    s.agents().iter().map(|a| a.key.clone()).collect()
}

fn logs(s: &mut Session) -> Vec<String> {
    std::iter::from_fn(|| s.poll_event())
        .filter_map(|e| match e {
            Event::Log {
                level: LogLevel::Info,
                message,
            } => Some(message),
            _ => None,
        })
        .collect()
}

/// Two synchronous agents in lockstep, at iteration 1, both awaited.
fn lockstep(config: ServerConfig, t0: Instant) -> (Session, SocketAddr, SocketAddr) {
    let mut s = session_with(config);
    let (a, b) = (addr("127.0.0.1:41001"), addr("127.0.0.1:41002"));
    s.handle_datagram(a, register_sync("a", 41001).as_bytes(), t0);
    s.handle_datagram(b, register_sync("b", 41002).as_bytes(), t0);
    s.handle_datagram(a, SYNC_MODE.as_bytes(), t0);
    s.handle_datagram(a, INIT.as_bytes(), t0);
    assert!(s.handle_timeout(t0));
    drain(&mut s);
    logs(&mut s);
    (s, a, b)
}

#[test]
fn an_agent_that_unregisters_is_removed_and_the_others_are_told() {
    let t0 = Instant::now();
    let (mut s, a, b) = lockstep(ServerConfig::default(), t0);
    s.handle_datagram(b, unregister("b").as_bytes(), t0);
    let out = drain(&mut s);
    let told = "<Response>Removed agent with key b, port 41002 and ip 127.0.0.1: it unregistered</Response>";
    assert_eq!(texts_to(&out, a), vec![told], "the agent left is told");
    assert_eq!(texts_to(&out, b), vec![told], "so is the one that left");
    assert_eq!(keys(&s), vec!["a"]);
    let logged = logs(&mut s);
    assert!(
        logged.iter().any(|m| m.contains("agent \"b\"")
            && m.contains("left: it unregistered")
            && m.contains("1 agent(s) left")),
        "{logged:?}"
    );
    // Lockstep no longer waits for b: a's Synchronize alone lets iteration 2 run at once.
    s.handle_datagram(a, synchronize("a", 1).as_bytes(), t0);
    assert_eq!(s.poll_timeout(t0), Some(t0));
    assert!(s.handle_timeout(t0));
    let out = drain(&mut s);
    assert!(texts_to(&out, b).is_empty(), "b receives nothing more");
    assert_eq!(texts_to(&out, a).len(), 1, "a gets iteration 2");
    // b is unknown now: a Synchronize or another Unregister from it is an error.
    s.handle_datagram(b, unregister("b").as_bytes(), t0);
    assert_eq!(
        texts_to(&drain(&mut s), b),
        vec!["<Response>Error: Unregister_Agent: agent \"b\" is not registered</Response>"]
    );
}

#[test]
fn only_the_address_that_registered_a_key_may_unregister_it() {
    let t0 = Instant::now();
    let (mut s, a, _b) = lockstep(ServerConfig::default(), t0);
    let stranger = addr("10.0.0.7:41002");
    s.handle_datagram(stranger, unregister("b").as_bytes(), t0);
    let out = drain(&mut s);
    assert_eq!(
        texts_to(&out, stranger),
        vec!["<Response>Error: Unregister_Agent: agent \"b\" is registered from 127.0.0.1; only that address may unregister it</Response>"]
    );
    assert!(texts_to(&out, a).is_empty());
    // The same IP, another port (a controller run again, whose old run stops late): it
    // may not remove the key the new run holds either.
    let late = addr("127.0.0.1:41999");
    s.handle_datagram(late, unregister("a").as_bytes(), t0);
    let out = drain(&mut s);
    assert!(
        texts_to(&out, late)[0]
            .contains("is registered from 127.0.0.1:41001, not from 127.0.0.1:41999"),
        "{out:?}"
    );
    assert_eq!(keys(&s), vec!["a", "b"]);
}

#[test]
fn a_run_again_is_not_removed_when_the_old_run_stops() {
    let t0 = Instant::now();
    let mut s = session();
    let (old, new) = (addr("127.0.0.1:42001"), addr("127.0.0.1:42002"));
    s.handle_datagram(old, register("ctl", "127.0.0.1", 42001, 0.0).as_bytes(), t0);
    s.handle_datagram(new, register("ctl", "127.0.0.1", 42002, 0.0).as_bytes(), t0);
    drain(&mut s);
    // The old run's port closes; the new run keeps the key.
    s.handle_unreachable(old, t0);
    s.handle_datagram(old, unregister("ctl").as_bytes(), t0);
    assert_eq!(keys(&s), vec!["ctl"]);
    assert_eq!(s.agents()[0].addr, new);
}

#[test]
fn a_closed_port_removes_its_agents_and_lockstep_goes_on() {
    let t0 = Instant::now();
    let (mut s, a, b) = lockstep(ServerConfig::default(), t0);
    // b's program stopped: the broadcast of iteration 1 came back ICMP port unreachable.
    s.handle_unreachable(b, t0);
    let out = drain(&mut s);
    assert_eq!(
        texts_to(&out, a),
        vec!["<Response>Removed agent with key b, port 41002 and ip 127.0.0.1: its port is closed (ICMP port unreachable): its program has stopped</Response>"]
    );
    assert!(
        texts_to(&out, b).is_empty(),
        "nothing goes to a closed port"
    );
    assert!(logs(&mut s)
        .iter()
        .any(|m| m.contains("agent \"b\"") && m.contains("port is closed")));
    s.handle_datagram(a, synchronize("a", 1).as_bytes(), t0);
    assert!(s.handle_timeout(t0), "lockstep waits for a alone");
    assert_eq!(s.world().iteration(), 2);
    // An unreachable address nobody is registered at changes nothing.
    s.handle_unreachable(addr("127.0.0.1:1"), t0);
    assert_eq!(keys(&s), vec!["a"]);
}

#[test]
fn unreachable_agents_stay_when_the_configuration_says_so() {
    let t0 = Instant::now();
    let config = ServerConfig {
        remove_unreachable_agents: false,
        ..ServerConfig::default()
    };
    let (mut s, _a, b) = lockstep(config, t0);
    s.handle_unreachable(b, t0);
    assert_eq!(keys(&s), vec!["a", "b"]);
}

#[test]
fn when_the_last_agent_leaves_the_server_has_nothing_to_do() {
    let t0 = Instant::now();
    let mut s = session();
    let me = addr("127.0.0.1:43000");
    s.handle_datagram(me, register("solo", "127.0.0.1", 43000, 0.0).as_bytes(), t0);
    s.handle_datagram(me, INIT.as_bytes(), t0);
    assert!(s.handle_timeout(t0));
    assert_eq!(
        s.poll_timeout(t0),
        Some(t0),
        "as fast as possible for the agent"
    );
    s.handle_unreachable(me, t0);
    assert!(s.agents().is_empty());
    assert_eq!(s.poll_timeout(t0), None, "no deadline: the shell blocks");
    assert!(!s.handle_timeout(t0 + Duration::from_secs(5)));
}

#[test]
fn a_silent_agent_is_removed_after_the_configured_time_and_a_talking_one_stays() {
    let t0 = Instant::now();
    let config = ServerConfig {
        agent_silence_timeout: 2.0,
        ..ServerConfig::default()
    };
    let (mut s, a, b) = lockstep(config, t0);
    assert_eq!(s.poll_timeout(t0), Some(t0 + Duration::from_millis(100)));
    // a synchronizes every 100 ms of (handed-in) time; b, behind a firewall, is gone.
    let mut now = t0;
    let mut removed_at = None;
    for _ in 0..40 {
        now += Duration::from_millis(100);
        let i = s.world().iteration();
        s.handle_datagram(a, synchronize("a", i).as_bytes(), now);
        s.handle_timeout(now);
        let out = drain(&mut s);
        if removed_at.is_none() && !keys(&s).contains(&"b".to_string()) {
            removed_at = Some(now - t0);
            assert!(
                texts_to(&out, a).iter().any(|t| t.contains(
                    "Removed agent with key b, port 41002 and ip 127.0.0.1: nothing heard from it for 2 s (configuration key agentsilencetimeout)"
                )),
                "{out:?}"
            );
        }
        if removed_at.is_some() {
            assert!(texts_to(&out, b).is_empty());
        }
    }
    assert_eq!(removed_at, Some(Duration::from_secs(2)));
    assert_eq!(keys(&s), vec!["a"], "a kept talking");
    assert!(s.world().iteration() > 20, "lockstep went on");
    // With a alone and talking, the next check is a's silence deadline.
    let due = s.poll_timeout(now).unwrap();
    assert!(due <= now + Duration::from_secs(2));
}

#[test]
fn the_silence_deadline_wakes_an_idle_server_and_no_timeout_means_none() {
    let t0 = Instant::now();
    let config = ServerConfig {
        agent_silence_timeout: 3.0,
        ..ServerConfig::default()
    };
    let mut s = session_with(config);
    let me = addr("127.0.0.1:44000");
    s.handle_datagram(
        me,
        register("quiet", "127.0.0.1", 44000, 0.0).as_bytes(),
        t0,
    );
    drain(&mut s);
    // Not initialized: nothing to run, but the silence deadline is due.
    assert_eq!(s.poll_timeout(t0), Some(t0 + Duration::from_secs(3)));
    assert!(!s.handle_timeout(t0 + Duration::from_millis(2999)));
    assert!(s.handle_timeout(t0 + Duration::from_secs(3)));
    assert!(s.agents().is_empty());
    assert_eq!(s.poll_timeout(t0 + Duration::from_secs(3)), None);

    let mut off = session();
    off.handle_datagram(
        me,
        register("quiet", "127.0.0.1", 44000, 0.0).as_bytes(),
        t0,
    );
    assert_eq!(off.poll_timeout(t0), None);
    assert!(!off.handle_timeout(t0 + Duration::from_secs(3600)));
    assert_eq!(keys(&off), vec!["quiet"], "no timeout configured: it stays");
}

#[test]
fn the_unregister_command_takes_its_configured_name() {
    let t0 = Instant::now();
    let mut config = ServerConfig::default();
    config
        .set("commandunregisteragentkey", "Leave")
        .expect("a command key");
    let mut s = session_with(config);
    let me = addr("127.0.0.1:45000");
    s.handle_datagram(me, register("x", "127.0.0.1", 45000, 0.0).as_bytes(), t0);
    s.handle_datagram(me, unregister("x").as_bytes(), t0);
    let out = drain(&mut s);
    assert!(
        texts_to(&out, me)
            .iter()
            .any(|t| t.contains("unknown") || t.contains("Unregister_Agent")),
        "{out:?}"
    );
    assert_eq!(
        keys(&s),
        vec!["x"],
        "the default name is not the command any more"
    );
    s.handle_datagram(
        me,
        unregister("x")
            .replace("Unregister_Agent", "Leave")
            .as_bytes(),
        t0,
    );
    assert!(s.agents().is_empty());
}

#[test]
fn an_agent_at_an_unproven_address_that_falls_silent_is_removed_after_unprovensilencetimeout() {
    // With trustloopback false, an agent that left sent nothing more: its credit spent, the
    // server sent it nothing, no ICMP came back, and it held a maxagents place for good.
    let t0 = Instant::now();
    let mut config = ServerConfig {
        unproven_silence_timeout: 5.0,
        ..ServerConfig::default()
    };
    config.limits.trust_loopback = false;
    let mut s = session_with(config);
    let (gone, talking) = (addr("127.0.0.1:45001"), addr("127.0.0.1:45002"));
    s.handle_datagram(
        gone,
        register("gone", "127.0.0.1", 45001, 0.0).as_bytes(),
        t0,
    );
    s.handle_datagram(
        talking,
        register("talking", "127.0.0.1", 45002, 0.0).as_bytes(),
        t0,
    );
    drain(&mut s);
    logs(&mut s);
    assert_eq!(s.poll_timeout(t0), Some(t0 + Duration::from_secs(5)));
    // "talking" asks about itself at 4 s; "gone" says nothing.
    let t4 = t0 + Duration::from_secs(4);
    s.handle_datagram(
        talking,
        "<Message><Agent_Message Command=\"Info_Request\"><Requester>talking</Requester><Requested>talking</Requested></Agent_Message></Message>".as_bytes(),
        t4,
    );
    assert!(!s.handle_timeout(t0 + Duration::from_millis(4999)));
    assert_eq!(keys(&s), vec!["gone", "talking"]);
    assert!(s.handle_timeout(t0 + Duration::from_secs(5)));
    assert_eq!(keys(&s), vec!["talking"]);
    let log = logs(&mut s).join("\n");
    assert!(
        log.contains("agent \"gone\"") && log.contains("configuration key unprovensilencetimeout"),
        "{log}"
    );
    // The next deadline is talking's: 5 s after it was last heard.
    assert_eq!(
        s.poll_timeout(t0 + Duration::from_secs(5)),
        Some(t4 + Duration::from_secs(5))
    );
    assert!(s.handle_timeout(t4 + Duration::from_secs(5)));
    assert!(s.agents().is_empty());

    // On loopback with trustloopback (the default) an address is proven: no such timeout.
    let mut proven = session();
    proven.handle_datagram(
        gone,
        register("gone", "127.0.0.1", 45001, 0.0).as_bytes(),
        t0,
    );
    assert_eq!(proven.poll_timeout(t0), None);
    assert!(!proven.handle_timeout(t0 + Duration::from_secs(3600)));
    assert_eq!(keys(&proven), vec!["gone"]);
}

/// A controller run again on a fixed port under a new key: the old key, whose program has
/// stopped, is replaced (an address is one agent), everyone is told, and lockstep no longer
/// waits for it (it waited `syncwait` an iteration for a key nobody would synchronize).
#[test]
fn a_new_key_at_an_agents_address_replaces_it() {
    let t0 = Instant::now();
    let (mut s, a, b) = lockstep(ServerConfig::default(), t0);
    // b's program stopped without unregistering; a new one binds the same port as "b2".
    s.handle_datagram(b, register_sync("b2", 41002).as_bytes(), t0);
    let out = drain(&mut s);
    let told = "<Response>Removed agent with key b, port 41002 and ip 127.0.0.1: agent \"b2\" registered at its address (an address is one agent: a program run again there)</Response>";
    assert!(texts_to(&out, a).iter().any(|t| t == told), "{out:?}");
    let to_b = texts_to(&out, b);
    assert_eq!(
        to_b.iter()
            .filter(|t| t.contains("Sucessfully added"))
            .count(),
        1,
        "one confirmation to the address: {to_b:?}"
    );
    assert!(
        to_b[to_b.len() - 1].contains("(replacing agent b)"),
        "{to_b:?}"
    );
    assert_eq!(keys(&s), vec!["a", "b2"]);
    let logged = logs(&mut s);
    assert!(
        logged
            .iter()
            .any(|m| m.contains("agent \"b\"")
                && m.contains("agent \"b2\" registered at its address")),
        "{logged:?}"
    );
    // a's Synchronize alone lets the next iteration run: nobody waits for "b".
    s.handle_datagram(a, synchronize("a", 1).as_bytes(), t0);
    assert_eq!(s.poll_timeout(t0), Some(t0));
    assert!(s.handle_timeout(t0));
    let out = drain(&mut s);
    assert_eq!(texts_to(&out, b).len(), 1, "b2 gets the broadcast once");
}

/// A refused registration is logged (who, from where, why) as well as answered: a server's
/// operator sees at `--log info` why an agent was turned away.
#[test]
fn a_refused_registration_is_logged() {
    let t0 = Instant::now();
    let mut config = ServerConfig::default();
    config.set("maxagents", "1").expect("maxagents");
    let mut s = session_with(config);
    let (a, b) = (addr("127.0.0.1:41001"), addr("127.0.0.1:41002"));
    s.handle_datagram(a, register_sync("first", 41001).as_bytes(), t0);
    s.handle_datagram(b, register_sync("second", 41002).as_bytes(), t0);
    let out = drain(&mut s);
    assert!(texts_to(&out, b)[0].contains("maxagents"), "{out:?}");
    let logged = logs(&mut s);
    assert!(
        logged.iter().any(
            |m| m.contains("agent \"second\" from 127.0.0.1:41002 not registered")
                && m.contains("maxagents")
        ),
        "{logged:?}"
    );
    assert_eq!(keys(&s), vec!["first"]);
    // Replacing the agent at an address frees its place: a full server takes the new key.
    s.handle_datagram(a, register_sync("first-again", 41001).as_bytes(), t0);
    drain(&mut s);
    assert_eq!(keys(&s), vec!["first-again"]);
}

/// A program that registers two agents from one socket (each receiving at a port of its
/// own) and keeps talking keeps both: what an address sends keeps every agent registered
/// from it (the first key was removed for silence while its program talked as the second).
#[test]
fn one_socket_talking_keeps_every_agent_it_registered() {
    let t0 = Instant::now();
    let config = ServerConfig {
        agent_silence_timeout: 2.0,
        ..ServerConfig::default()
    };
    let mut s = session_with(config);
    let sender = addr("127.0.0.1:41010");
    s.handle_datagram(sender, register_sync("left", 41011).as_bytes(), t0);
    s.handle_datagram(sender, register_sync("right", 41012).as_bytes(), t0);
    drain(&mut s);
    assert_eq!(keys(&s), vec!["left", "right"]);
    let info = "<Message><Agent_Message Command=\"Info_Request\"><Requester>left</Requester><Requested>right</Requested></Agent_Message></Message>";
    let mut now = t0;
    for _ in 0..50 {
        now += Duration::from_millis(200);
        s.handle_datagram(sender, info.as_bytes(), now);
        s.handle_timeout(now);
        drain(&mut s);
    }
    assert_eq!(
        keys(&s),
        vec!["left", "right"],
        "both stayed for 10 s of talk"
    );
    // Silence removes both.
    now += Duration::from_secs(3);
    s.handle_timeout(now);
    drain(&mut s);
    assert!(keys(&s).is_empty(), "{:?}", keys(&s));
}
