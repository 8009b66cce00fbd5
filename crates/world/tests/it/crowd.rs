//! SumBots driving among each other stay on their wheels in fast mode (simulated time only).

use crate::common;

use common::*;
use simrob_physics::rotate;
use simrob_protocol::{decode_datagram, CommandKeys, ControlRequest, EntityId, Request};
use simrob_world::moved_copy;

/// `simrob-odebench`'s random layout `seed`: 22 SumBots on the SimRob field with the ball, each
/// driving in a circle (wheels 3 and 5 rad/s, left or right), in fast mode.
fn layout(seed: u64) -> (simrob_world::World, u32) {
    let mut w = world_with(&["materials.xml", "field.xml", "ball.xml"]);
    let bytes = std::fs::read(scenario_path("sumbot.xml")).unwrap();
    let sumbot = match decode_datagram(&bytes, &CommandKeys::default()).remove(0) {
        Ok(Request::Control {
            request: ControlRequest::CreateEntity(spec),
            ..
        }) => spec,
        other => panic!("sumbot.xml: {other:?}"),
    };
    let mut rng = simrob_math::SplitMix64::new(seed);
    let mut placed: Vec<(f64, f64)> = Vec::new();
    let mut wheels = Vec::new();
    while placed.len() < 22 {
        let (x, y) = (-0.95 + 1.9 * rng.next_f64(), -0.75 + 1.5 * rng.next_f64());
        let taken = placed.iter().any(|&(px, py)| (px - x).hypot(py - y) < 0.14);
        let left = rng.next_u64() & 1 == 0;
        if !taken {
            placed.push((x, y));
            wheels.push(if left { (3.0, 5.0) } else { (5.0, 3.0) });
        }
    }
    for (i, &(x, y)) in placed.iter().enumerate() {
        let spec = moved_copy(&sumbot, EntityId(100 + i as u32), [x, y + 0.1, 0.0]);
        w.apply_control(&ControlRequest::CreateEntity(spec))
            .unwrap();
    }
    w.apply_control(&ControlRequest::SetFastMode(true)).unwrap();
    for (i, (l, r)) in wheels.into_iter().enumerate() {
        motors(&mut w, 100 + i as u32, l, r);
    }
    (w, placed.len() as u32)
}

/// In the layouts where fast mode's driven wheels climbed other robots and tipped them
/// (while their surfaces moved against other robots too), 30 s of driving tip none.
#[test]
fn fast_mode_keeps_a_crowd_on_its_wheels() {
    for seed in [1, 3, 5, 8] {
        let (mut w, n) = layout(seed);
        run(&mut w, 3000);
        let tipped: Vec<u32> = (0..n)
            .filter(|i| {
                let s = w.body_state(EntityId(100 + i), 0).unwrap();
                rotate(s.orientation, [0.0, 0.0, 1.0])[2] < 0.5
            })
            .collect();
        assert!(tipped.is_empty(), "layout {seed}: tipped {tipped:?}");
    }
}
