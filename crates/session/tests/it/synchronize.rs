//! `Synchronize` answers the broadcast an agent was sent: an older iteration is an error
//! (it would leave the server waiting the whole Sync_Wait), a copy of the last one answered
//! is a resend and says nothing, and errors about an agent's key say where it is registered.

use std::net::SocketAddr;
use std::time::Instant;

use simrob_session::{ServerConfig, Session};

use crate::common;
use common::*;

const INIT: &str = "<Message><Simulation_Message><Control_Request Command=\"Initialize_Simulation\"/></Simulation_Message></Message>";
const SYNC_MODE: &str = "<Message><Simulation_Message><Control_Request Command=\"Set_Sync_Mode\"><Sync_Mode>true</Sync_Mode></Control_Request></Simulation_Message></Message>";

fn register_sync(key: &str, port: u16) -> String {
    format!(
        "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"RobotController\"><Port>{port}</Port><IP>127.0.0.1</IP><Sync>true</Sync><Broadcast>-1</Broadcast><Key>{key}</Key></Agent_Message></Message>"
    )
}

fn synchronize(key: &str, iteration: i64) -> String {
    format!(
        "<Message><Agent_Message Command=\"Synchronize\"><Key>{key}</Key><Iteration>{iteration}</Iteration></Agent_Message></Message>"
    )
}

/// One synchronous agent in lockstep at iteration 1, awaited.
fn lockstep(config: ServerConfig, t0: Instant) -> (Session, SocketAddr) {
    let mut s = session_with(config);
    let a = addr("127.0.0.1:41001");
    s.handle_datagram(a, register_sync("a", 41001).as_bytes(), t0);
    s.handle_datagram(a, SYNC_MODE.as_bytes(), t0);
    s.handle_datagram(a, INIT.as_bytes(), t0);
    assert!(s.handle_timeout(t0));
    drain(&mut s);
    assert_eq!(s.world().iteration(), 1);
    (s, a)
}

#[test]
fn an_older_iteration_is_an_error_and_a_resend_of_the_last_answer_is_not() {
    let t0 = Instant::now();
    let (mut s, a) = lockstep(ServerConfig::default(), t0);
    for old in [0, -1] {
        s.handle_datagram(a, synchronize("a", old).as_bytes(), t0);
        let out = texts_to(&drain(&mut s), a);
        assert_eq!(out.len(), 1, "Iteration {old}: {out:?}");
        if old == 0 {
            assert!(
                out[0].contains("Error: Synchronize: iteration 0 is older than iteration 1, the broadcast agent \"a\" must answer now; answer the latest broadcast"),
                "{out:?}"
            );
        }
    }
    // Not answered: the next iteration waits.
    assert!(!s.handle_timeout(t0));
    s.handle_datagram(a, synchronize("a", 1).as_bytes(), t0);
    assert_eq!(drain(&mut s), vec![]);
    assert!(s.handle_timeout(t0));
    assert_eq!(s.world().iteration(), 2);
    drain(&mut s);
    // The answer to 1 again (sent twice, or duplicated on the way): nothing said.
    s.handle_datagram(a, synchronize("a", 1).as_bytes(), t0);
    assert_eq!(drain(&mut s), vec![]);
    s.handle_datagram(a, synchronize("a", 2).as_bytes(), t0);
    assert_eq!(drain(&mut s), vec![]);
    assert!(s.handle_timeout(t0));
    assert_eq!(s.world().iteration(), 3);
}

fn unregister(key: &str) -> String {
    format!(
        "<Message><Agent_Message Command=\"Unregister_Agent\"><Key>{key}</Key></Agent_Message></Message>"
    )
}

#[test]
fn a_key_used_from_another_port_is_told_where_it_is_registered_and_nothing_more() {
    let t0 = Instant::now();
    let mut s = session();
    let (owner, other) = (addr("127.0.0.1:41001"), addr("127.0.0.1:55347"));
    s.handle_datagram(
        owner,
        register("once", "127.0.0.1", 41001, -1.0).as_bytes(),
        t0,
    );
    drain(&mut s);
    s.handle_datagram(other, synchronize("once", 0).as_bytes(), t0);
    s.handle_datagram(other, unregister("once").as_bytes(), t0);
    let out = texts_to(&drain(&mut s), other);
    assert_eq!(
        out,
        vec![
            "<Response>Error: Synchronize: agent \"once\" is registered from 127.0.0.1:41001, not from 127.0.0.1:55347; only the address that registered a key may synchronize it: send from 127.0.0.1:41001, or register the key again from here</Response>",
            "<Response>Error: Unregister_Agent: agent \"once\" is registered from 127.0.0.1:41001, not from 127.0.0.1:55347; only the address that registered a key may unregister it: send from 127.0.0.1:41001</Response>",
        ]
    );
    assert!(!out.iter().any(|t| t.contains("registered again")));
}

#[test]
fn errors_name_every_agent_command_by_its_configured_name() {
    let mut config = ServerConfig::default();
    for (key, name) in [
        ("commandregisteragentkey", "Hello"),
        ("commandinforequestkey", "Who"),
        ("commandsynthesizekey", "Done"),
        ("commandunregisteragentkey", "Bye"),
    ] {
        config.set(key, name).expect(key);
    }
    let mut s = session_with(config);
    let me = addr("127.0.0.1:41001");
    let t0 = Instant::now();
    let hello = |port: u16, key: &str| {
        format!("<Message><Agent_Message Command=\"Hello\" Agent_Type=\"RobotController\"><Port>{port}</Port><IP>127.0.0.1</IP><Sync>false</Sync><Broadcast>-1</Broadcast><Key>{key}</Key></Agent_Message></Message>")
    };
    for datagram in [
        hello(0, "k"),
        "<Message><Agent_Message Command=\"Who\"><Requester>nobody</Requester><Requested>k</Requested></Agent_Message></Message>".to_string(),
        "<Message><Agent_Message Command=\"Done\"><Key>nobody</Key><Iteration>0</Iteration></Agent_Message></Message>".to_string(),
        "<Message><Agent_Message Command=\"Bye\"><Key>nobody</Key></Agent_Message></Message>".to_string(),
    ] {
        s.handle_datagram(me, datagram.as_bytes(), t0);
    }
    let out = texts_to(&drain(&mut s), me);
    let prefixes: Vec<&str> = out
        .iter()
        .map(|t| {
            t.trim_start_matches("<Response>Error: ")
                .split(':')
                .next()
                .unwrap_or("")
        })
        .collect();
    assert_eq!(prefixes, ["Hello", "Who", "Done", "Bye"], "{out:?}");
}

/// The log lines the session emitted at `level` since the last call.
fn logs(s: &mut Session, level: simrob_session::LogLevel) -> Vec<String> {
    std::iter::from_fn(|| s.poll_event())
        .filter_map(|e| match e {
            simrob_session::Event::Log { level: l, message } if l == level => Some(message),
            _ => None,
        })
        .collect()
}

#[test]
fn lockstep_waits_that_time_out_are_counted_and_logged_naming_the_missing_agents() {
    use simrob_session::{LogLevel, SYNC_TIMEOUT_LOG_EVERY};
    use std::time::Duration;

    let t0 = Instant::now();
    let mut s = session_with(ServerConfig::default()); // Sync_Wait 0.1 s
    let (a, b) = (addr("127.0.0.1:41001"), addr("127.0.0.1:41002"));
    s.handle_datagram(a, register_sync("a", 41001).as_bytes(), t0);
    s.handle_datagram(b, register_sync("b", 41002).as_bytes(), t0);
    s.handle_datagram(a, SYNC_MODE.as_bytes(), t0);
    s.handle_datagram(a, INIT.as_bytes(), t0);
    assert!(s.handle_timeout(t0));
    drain(&mut s);
    logs(&mut s, LogLevel::Info);
    assert_eq!(s.world().iteration(), 1);

    // Both answer: no wait times out.
    s.handle_datagram(a, synchronize("a", 1).as_bytes(), t0);
    s.handle_datagram(b, synchronize("b", 1).as_bytes(), t0);
    assert!(s.handle_timeout(t0));
    assert_eq!(s.world().iteration(), 2);
    assert_eq!(s.stats().sync_timeouts, 0);

    // Only a answers iteration 2: the wait runs Sync_Wait out, once.
    s.handle_datagram(a, synchronize("a", 2).as_bytes(), t0);
    let wait = Duration::from_millis(101);
    assert!(!s.handle_timeout(t0 + Duration::from_millis(50)));
    assert_eq!(s.stats().sync_timeouts, 0);
    let mut now = t0 + wait;
    assert!(s.handle_timeout(now));
    assert_eq!(s.world().iteration(), 3);
    assert_eq!(s.stats().sync_timeouts, 1);
    drain(&mut s);
    let info = logs(&mut s, LogLevel::Info);
    assert_eq!(info.len(), 1, "{info:?}");
    assert!(
        info[0].starts_with(
            "lockstep: no Synchronize for iteration 2 from agent \"b\" within Sync_Wait (0.1 s); the next iteration runs without it. Further timed-out waits are logged at most every 10 s"
        ),
        "{info:?}"
    );

    // Neither answers, many times within 10 s: counted each time, logged at info once more
    // only when 10 s have passed since the first line, with the count since.
    let mut timed_out = 1;
    while now < t0 + wait + SYNC_TIMEOUT_LOG_EVERY {
        now += wait;
        let iteration = s.world().iteration();
        assert!(s.handle_timeout(now));
        assert_eq!(s.world().iteration(), iteration + 1);
        timed_out += 1;
        assert_eq!(s.stats().sync_timeouts, timed_out);
        drain(&mut s);
        let events: Vec<_> = std::iter::from_fn(|| s.poll_event()).collect();
        let debug = events
            .iter()
            .filter(|e| matches!(e, simrob_session::Event::Log { level: LogLevel::Debug, message } if message.contains(&format!("iteration {iteration} from agents \"a\", \"b\""))))
            .count();
        assert_eq!(debug, 1, "{events:?}");
        let info: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                simrob_session::Event::Log {
                    level: LogLevel::Info,
                    message,
                } => Some(message.clone()),
                _ => None,
            })
            .collect();
        if now < t0 + wait + SYNC_TIMEOUT_LOG_EVERY {
            assert_eq!(info, Vec::<String>::new(), "at {:?}", now - t0);
        } else {
            assert_eq!(info.len(), 1, "{info:?}");
            assert!(
                info[0].ends_with(&format!(
                    "; {} lockstep waits timed out in the last 10 s, {timed_out} in all",
                    timed_out - 1
                )),
                "{info:?}"
            );
        }
    }
    // A wait not yet run out is not counted.
    assert!(!s.handle_timeout(now));
    assert_eq!(s.stats().sync_timeouts, timed_out);
}
