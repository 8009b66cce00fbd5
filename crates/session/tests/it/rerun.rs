//! A controller run again against a server that keeps running: its key moves to the new
//! address when it comes from the same IP, and stays refused from another IP.

use std::time::{Duration, Instant};

use simrob_session::Session;

use crate::common;
use common::*;

const INIT: &str = "<Message><Simulation_Message><Control_Request Command=\"Initialize_Simulation\"/></Simulation_Message></Message>";

fn register_sync(key: &str, ip: &str, port: u16) -> String {
    format!(
        "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"RobotController\"><Port>{port}</Port><IP>{ip}</IP><Sync>true</Sync><Broadcast>-1</Broadcast><Key>{key}</Key></Agent_Message></Message>"
    )
}

fn synchronize(key: &str, iteration: u64) -> String {
    format!(
        "<Message><Agent_Message Command=\"Synchronize\"><Key>{key}</Key><Iteration>{iteration}</Iteration></Agent_Message></Message>"
    )
}

fn addr_of(s: &Session, key: &str) -> Option<std::net::SocketAddr> {
    s.agents().iter().find(|a| a.key == key).map(|a| a.addr)
}

#[test]
fn a_key_registered_again_from_the_same_ip_moves_to_the_new_port() {
    let mut s = session();
    let t0 = Instant::now();
    let first = addr("127.0.0.1:40000");
    let second = addr("127.0.0.1:40001");
    s.handle_datagram(
        first,
        register("commander", "127.0.0.1", 40000, 0.0).as_bytes(),
        t0,
    );
    s.handle_datagram(first, INIT.as_bytes(), t0);
    drain(&mut s);

    s.handle_datagram(
        second,
        register("commander", "127.0.0.1", 40001, 0.0).as_bytes(),
        t0,
    );
    let out = drain(&mut s);
    let to_second = texts_to(&out, second);
    assert_eq!(
        to_second,
        vec![
            "<Response>Sucessfully added agent with key commander, port 40001 and ip 127.0.0.1 (moved from 127.0.0.1:40000)</Response>"
        ]
    );
    assert!(
        texts_to(&out, first).is_empty(),
        "the old address was told: {out:?}"
    );
    assert_eq!(addr_of(&s, "commander"), Some(second));
    assert_eq!(s.agents().len(), 1);
    let logged: Vec<String> = std::iter::from_fn(|| s.poll_event())
        .filter_map(|e| match e {
            simrob_session::Event::Log { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert!(
        logged
            .iter()
            .any(|m| m.contains("moved from 127.0.0.1:40000 to 127.0.0.1:40001")),
        "{logged:?}"
    );

    // Broadcasts go to the new address only; so do Info_Request answers.
    let mut now = t0;
    for _ in 0..3 {
        now += Duration::from_millis(10);

        assert!(s.handle_timeout(now));
    }
    let out = drain(&mut s);
    assert!(
        texts_to(&out, first).is_empty(),
        "the old address got {out:?}"
    );
    assert_eq!(texts_to(&out, second).len(), 3, "{out:?}");
    let info = "<Message><Agent_Message Command=\"Info_Request\"><Requester>commander</Requester><Requested>commander</Requested></Agent_Message></Message>";
    s.handle_datagram(second, info.as_bytes(), now);
    let out = drain(&mut s);
    assert!(texts_to(&out, first).is_empty(), "{out:?}");
    assert!(
        texts_to(&out, second)[0].contains("<Port>40001</Port>"),
        "{out:?}"
    );
}

#[test]
fn a_key_registered_again_from_another_ip_is_refused_with_what_to_do() {
    let mut s = session();
    let t0 = Instant::now();
    let owner = addr("192.0.2.20:7000");
    let other = addr("192.0.2.21:7001");
    s.handle_datagram(
        owner,
        register("robot", "192.0.2.20", 7000, -1.0).as_bytes(),
        t0,
    );
    drain(&mut s);
    s.handle_datagram(
        other,
        register("robot", "192.0.2.21", 7001, -1.0).as_bytes(),
        t0,
    );
    s.handle_datagram(other, synchronize("robot", 0).as_bytes(), t0);
    let out = drain(&mut s);
    let to_other = texts_to(&out, other);
    assert_eq!(to_other.len(), 2, "{to_other:?}");
    assert!(
        to_other[0].contains("Error: Register_Agent: key \"robot\" is registered from 192.0.2.20; register under another key, or stop that agent first"),
        "{to_other:?}"
    );
    assert!(
        to_other[1].contains("register under another key, or stop that agent first"),
        "{to_other:?}"
    );
    assert!(texts_to(&out, owner).is_empty(), "{out:?}");
    assert_eq!(addr_of(&s, "robot"), Some(owner));
}

#[test]
fn a_synchronous_agent_run_again_does_not_leave_lockstep_waiting_on_its_old_address() {
    let mut s = session();
    let t0 = Instant::now();
    let first = addr("127.0.0.1:40000");
    let second = addr("127.0.0.1:40001");
    s.handle_datagram(
        first,
        register_sync("bot", "127.0.0.1", 40000).as_bytes(),
        t0,
    );
    s.handle_datagram(
        first,
        control("<Control_Request Command=\"Set_Sync_Mode\"><Sync_Mode>true</Sync_Mode></Control_Request><Control_Request Command=\"Initialize_Simulation\"/>")
            .as_bytes(),
        t0,
    );
    drain(&mut s);
    assert!(s.session_flags().sync_mode);

    // Iteration 1 goes to the first run, which stops without synchronizing it: the
    // session waits for it (up to syncwait, 0.1 s).
    assert!(s.handle_timeout(t0));
    assert_eq!(texts_to(&drain(&mut s), first).len(), 1);
    let waited = s.poll_timeout(t0).expect("an iteration is due");
    assert_eq!(waited, t0 + Duration::from_millis(100));

    // The controller runs again from a new port: the next iteration is due at once and
    // goes to the new address, which lockstep then waits for.
    s.handle_datagram(
        second,
        register_sync("bot", "127.0.0.1", 40001).as_bytes(),
        t0,
    );
    drain(&mut s);
    let due = s.poll_timeout(t0).expect("an iteration is due");
    assert!(
        due < waited,
        "lockstep still waits on the old address: {due:?}"
    );
    assert!(s.handle_timeout(due));
    let iteration = s.world().iteration();
    let out = drain(&mut s);
    assert!(texts_to(&out, first).is_empty(), "{out:?}");
    assert_eq!(texts_to(&out, second).len(), 1, "{out:?}");
    assert_eq!(s.poll_timeout(due), Some(due + Duration::from_millis(100)));

    // The old run's Synchronize no longer counts; the new run's does.
    s.handle_datagram(first, synchronize("bot", iteration).as_bytes(), due);
    let out = drain(&mut s);
    assert!(
        texts_to(&out, first)[0].contains("Error: Synchronize"),
        "{out:?}"
    );
    assert_eq!(s.poll_timeout(due), Some(due + Duration::from_millis(100)));
    s.handle_datagram(second, synchronize("bot", iteration).as_bytes(), due);
    assert!(s.poll_timeout(due).expect("due") <= due);
}
