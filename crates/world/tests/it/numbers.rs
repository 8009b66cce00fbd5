//! Every number of a broadcast reads back exactly: the engine's `f32` values as the same `f32`,
//! every other value as the same `f64`; and none is printed longer than it needs.

use crate::common;

use common::*;
use simrob_protocol::{decode_server_message, encode_broadcast, ServerMessage};

/// `printed` (read back from text) is the value `sent` at the precision `sent` has.
fn reads_back(sent: f64, printed: f64) -> bool {
    if (sent as f32) as f64 == sent {
        printed as f32 == sent as f32
    } else {
        printed == sent
    }
}

#[test]
fn every_broadcast_number_reads_back_exactly() {
    let mut w = world_with(&["materials.xml", "field.xml", "sumbot.xml", "ball.xml"]);
    motors(&mut w, 3, 3.0, 2.0);
    let mut checked = 0;
    for _ in 0..20 {
        run(&mut w, 25);
        let sent = w.snapshot();
        let text = encode_broadcast(&sent);
        // No f32 value printed as an f64: 9 significant digits at most for those.
        assert!(!text.contains("0000000"), "float noise in {text}");
        let ServerMessage::Broadcast(got) = decode_server_message(text.as_bytes()).unwrap() else {
            panic!("not a broadcast");
        };
        assert_eq!(got.bodies.len(), sent.bodies.len());
        for (a, b) in sent.bodies.iter().zip(&got.bodies) {
            let values = |s: &simrob_protocol::BodyState| {
                let mut v = vec![s.mass];
                for x in [
                    s.position,
                    s.rotation,
                    s.linear_velocity,
                    s.angular_velocity,
                ] {
                    v.extend(x);
                }
                v
            };
            for (x, y) in values(a).into_iter().zip(values(b)) {
                assert!(reads_back(x, y), "{x} printed as {y}");
                checked += 1;
            }
        }
        for (a, b) in sent.entities.iter().zip(&got.entities) {
            for (x, y) in a
                .position
                .into_iter()
                .chain(a.rotation)
                .zip(b.position.into_iter().chain(b.rotation))
            {
                assert!(reads_back(x, y), "{x} printed as {y}");
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "{checked}");
}
