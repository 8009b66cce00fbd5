//! A body the physics makes non-finite is put back and reported once, end to end through the
//! sans-IO session: the engine state of a save file sealed with the server's key (as a
//! server holding the same `savekey` would write it) carries a NaN into the engine.

use simrob_protocol::EntityId;
use std::time::Instant;

use sha2::{Digest, Sha256};
use simrob_session::{Event, FileResult, LogLevel, ServerConfig, Session};

use crate::common;
use common::{addr, control, drain, texts_to as texts, SOCCER};

const SECRET: &str = "divergence test";

/// HMAC-SHA256 under the key a `savekey` secret gives, as the save format defines its seal.
fn seal(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    h.update(b"simrob save key v1\0");
    h.update(SECRET.as_bytes());
    let key: [u8; 32] = h.finalize().into();
    let (mut ipad, mut opad) = ([0x36u8; 64], [0x5cu8; 64]);
    for (i, k) in key.iter().enumerate() {
        ipad[i] ^= k;
        opad[i] ^= k;
    }
    let mut inner = Sha256::new();
    inner.update(ipad);
    for p in parts {
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(opad);
    outer.update(inner.finalize());
    outer
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The save file with every f32 equal to `value` in its engine state made NaN, sealed again.
fn poisoned(file: &str, value: f32) -> String {
    let at = file.find("<Physics_State").expect("engine state");
    let open_end = at + file[at..].find('>').expect("tag end") + 1;
    let close = file.rfind("</Physics_State>").expect("closing tag");
    let hex = &file[open_end..close];
    let mut blob: Vec<u8> = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex"))
        .collect();
    let mut hits = 0;
    for i in 0..blob.len().saturating_sub(3) {
        if blob[i..i + 4] == value.to_le_bytes() {
            blob[i..i + 4].copy_from_slice(&f32::NAN.to_le_bytes());
            hits += 1;
        }
    }
    assert!(hits > 0, "{value} is not in the engine state");
    let new_hex: String = blob.iter().map(|b| format!("{b:02x}")).collect();
    let seal = seal(&[&file.as_bytes()[..at], &blob]);
    let tag = &file[at..open_end];
    let s_at = tag.find("Seal=\"").expect("seal") + 6;
    let s_end = s_at + tag[s_at..].find('"').expect("seal end");
    format!(
        "{}{}{seal}{}{new_hex}{}",
        &file[..at],
        &tag[..s_at],
        &tag[s_end..],
        &file[close..]
    )
}

#[test]
fn a_body_gone_non_finite_is_put_back_at_rest_and_reported_once() {
    let mut config = ServerConfig::default();
    config.set("savekey", SECRET).unwrap();
    let mut s = Session::new(config);
    let t0 = Instant::now();
    let me = addr("127.0.0.1:5001");
    let other = addr("127.0.0.1:5002");
    s.handle_datagram(me, SOCCER.as_bytes(), t0);
    for (key, who) in [("me", me), ("other", other)] {
        s.handle_datagram(
            who,
            format!("<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"RobotController\"><Port>{}</Port><IP>127.0.0.1</IP><Sync>false</Sync><Broadcast>0</Broadcast><Key>{key}</Key></Agent_Message></Message>", who.port()).as_bytes(),
            t0,
        );
    }
    s.handle_datagram(
        me,
        control("<Control_Request Command=\"Initialize_Simulation\"/>").as_bytes(),
        t0,
    );
    // The ball (entity 8) falls for ten iterations.
    for _ in 0..10 {
        assert!(s.handle_timeout(t0));
    }
    drain(&mut s);
    let ball_before = s.world().entity_pose(EntityId(8)).expect("ball");
    let z = s.world().body_state(EntityId(8), 0).expect("ball").position[2] as f32;
    s.handle_datagram(
        me,
        control("<Control_Request Command=\"Save\"><File>x.xml</File></Control_Request>")
            .as_bytes(),
        t0,
    );
    let (ticket, contents) = std::iter::from_fn(|| s.poll_event())
        .find_map(|e| match e {
            Event::SaveWanted {
                ticket, contents, ..
            } => Some((ticket, contents)),
            _ => None,
        })
        .expect("a save");
    s.handle_file_result(ticket, FileResult::Saved("x.xml".into()), t0)
        .unwrap();
    // Loaded, the engine resumes from the sealed state, NaN included.
    s.handle_datagram(me, control("<Control_Request Command=\"Load\"><File>x.xml</File><Response>true</Response></Control_Request>").as_bytes(), t0);
    let ticket = std::iter::from_fn(|| s.poll_event())
        .find_map(|e| match e {
            Event::LoadWanted { ticket, .. } => Some(ticket),
            _ => None,
        })
        .expect("a load");
    s.handle_file_result(ticket, FileResult::Loaded(poisoned(&contents, z)), t0)
        .unwrap();
    let out = drain(&mut s);
    assert!(
        texts(&out, me)
            .iter()
            .any(|t| t.contains("simulation loaded")),
        "{out:?}"
    );
    assert!(s.world().body_state(EntityId(8), 0).unwrap().position[2].is_nan());
    while s.poll_event().is_some() {}

    assert!(s.handle_timeout(t0));
    let out = drain(&mut s);
    let ball = s.world().body_state(EntityId(8), 0).unwrap();
    assert!(ball
        .position
        .iter()
        .chain(&ball.linear_velocity)
        .all(|x| x.is_finite()));
    assert_eq!(ball.linear_velocity, [0.0; 3]);
    assert_eq!(s.world().entity_pose(EntityId(8)).unwrap(), ball_before);
    for who in [me, other] {
        let reports: Vec<String> = texts(&out, who)
            .into_iter()
            .filter(|t| t.contains("non-finite"))
            .collect();
        assert_eq!(reports.len(), 1, "{reports:?}");
        assert!(reports[0].contains("Error: entity 8"), "{reports:?}");
        // Its broadcast carries finite numbers only.
        let broadcast = texts(&out, who)
            .into_iter()
            .find(|t| t.contains("<Broadcast>"))
            .expect("a broadcast");
        assert!(
            !broadcast.contains("NaN") && !broadcast.contains("inf"),
            "{broadcast}"
        );
    }
    let logged = std::iter::from_fn(|| s.poll_event())
        .filter(|e| matches!(e, Event::Log { level: LogLevel::Warn, message } if message.contains("entity 8")))
        .count();
    assert_eq!(logged, 1);
    // Reported once: whatever the engine does with it next, agents hear no more of it.
    for _ in 0..20 {
        assert!(s.handle_timeout(t0));
        let out = drain(&mut s);
        assert!(out
            .iter()
            .all(|t| !String::from_utf8_lossy(&t.payload).contains("non-finite")));
        let ball = s.world().body_state(EntityId(8), 0).unwrap();
        assert!(ball.position.iter().all(|x| x.is_finite()));
    }
}
