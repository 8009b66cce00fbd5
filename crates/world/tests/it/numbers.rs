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
        // Euler angles come from the engine's f32 orientation: at its precision, printed as
        // the shortest text of an f32.
        for r in sent
            .bodies
            .iter()
            .map(|b| b.rotation)
            .chain(sent.entities.iter().map(|e| e.rotation))
        {
            for a in r {
                assert_eq!(f64::from(a as f32), a, "angle {a} is not an f32");
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

/// A saved file's readable state (positions, quaternions, velocities) prints the engine's f32
/// values as the shortest text that reads back to them: quaternions were printed at f64
/// length (`0.9999985694885254`).
#[test]
fn a_saved_files_numbers_are_the_shortest_that_read_back() {
    let mut w = world_with(&["materials.xml", "field.xml", "sumbot.xml", "ball.xml"]);
    motors(&mut w, 3, 3.0, 2.0);
    run(&mut w, 100);
    let xml = w.save_xml();
    let mut checked = 0;
    for name in [
        "Quaternion_X",
        "Quaternion_Y",
        "Quaternion_Z",
        "Quaternion_W",
        "Position_X",
    ] {
        let open = format!("<{name}>");
        for piece in xml.split(&open).skip(1) {
            let text = &piece[..piece.find('<').unwrap()];
            let v: f32 = text.parse().unwrap();
            assert_eq!(
                text,
                simrob_protocol::real(f64::from(v)).to_string(),
                "{name} {text}"
            );
            checked += 1;
        }
    }
    assert!(checked > 20, "{checked}");
}
