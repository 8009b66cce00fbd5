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

/// `n` SumBots at random (seeded) on a large floor of the SimRob wood, as densely as the
/// field's random layouts (so that they meet), each driving in a circle, default mode.
#[cfg(feature = "parallel")]
fn floor_crowd(n: usize, seed: u64) -> simrob_world::World {
    use simrob_protocol::{BodySpec, EntitySpec, MaterialId, Shape};
    let mut w = world_with(&["materials.xml"]);
    let square = (n as f64 / (22.0 / (1.9 * 1.5))).sqrt();
    let floor = EntitySpec::Field {
        entity_id: EntityId(1),
        bodies: vec![BodySpec {
            id: 0,
            shape: Shape::Box {
                size: [square + 1.0, square + 1.0, 0.1],
            },
            material: Some(MaterialId(0)),
            mass: Some(-1.0),
            position: [0.0, 0.0, 0.0],
            rotation: [0.0; 3],
        }],
        joints: Vec::new(),
    };
    w.apply_control(&ControlRequest::CreateEntity(floor))
        .unwrap();
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
    while placed.len() < n {
        let (x, y) = (
            (rng.next_f64() - 0.5) * square,
            (rng.next_f64() - 0.5) * square,
        );
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
    for (i, (l, r)) in wheels.into_iter().enumerate() {
        motors(&mut w, 100 + i as u32, l, r);
    }
    w
}

/// Every body's pose and velocities, bit for bit.
#[cfg(feature = "parallel")]
fn every_state_bits(w: &simrob_world::World, n: usize) -> Vec<u64> {
    let mut bits = Vec::new();
    for i in 0..n {
        for body in 0..3 {
            let s = w.body_state(EntityId(100 + i as u32), body).unwrap();
            for v in s
                .position
                .iter()
                .chain(&s.orientation)
                .chain(&s.linear_velocity)
                .chain(&s.angular_velocity)
            {
                bits.push(v.to_bits());
            }
        }
    }
    bits
}

/// A crowd of SumBots pushing each other runs the same, bit for bit, on one, two and three
/// threads (placed as densely as the field's random layouts, they push each other).
#[cfg(feature = "parallel")]
#[test]
fn threads_do_not_change_a_crowd() {
    let n = 300;
    let mut runs = Vec::new();
    for threads in [1, 2, 3] {
        let mut w = floor_crowd(n, 7);
        w.set_physics_threads(threads).unwrap();
        assert_eq!(w.physics_threads(), threads);
        let start = every_state_bits(&w, n);
        run(&mut w, 200);
        let end = every_state_bits(&w, n);
        assert_ne!(start, end, "the crowd did not move");
        runs.push(end);
    }
    assert!(runs[0] == runs[1], "one and two threads differ");
    assert!(runs[0] == runs[2], "one and three threads differ");
}

/// Loading a save file keeps the threads the world steps on (a setting of the shell running
/// it, not of the simulation in the file), and the loaded crowd runs on as it did.
#[cfg(feature = "parallel")]
#[test]
fn loading_a_save_keeps_the_physics_threads() {
    let n = 40;
    let mut w = floor_crowd(n, 11);
    w.set_physics_threads(2).unwrap();
    run(&mut w, 20);
    let saved = w.save_xml();
    run(&mut w, 50);
    w.load_xml(&saved).expect("load");
    assert_eq!(
        w.physics_threads(),
        2,
        "a load dropped the world to one thread"
    );
    let mut one = floor_crowd(n, 11);
    one.load_xml(&saved).expect("load on one thread");
    assert_eq!(one.physics_threads(), 1);
    run(&mut w, 50);
    run(&mut one, 50);
    assert!(
        every_state_bits(&w, n) == every_state_bits(&one, n),
        "a loaded crowd runs differently on two threads and on one"
    );
}

/// Without the `parallel` feature a world runs on one thread and says so when asked for more.
#[cfg(not(feature = "parallel"))]
#[test]
fn threads_need_the_parallel_feature() {
    let mut w = world_with(&["materials.xml"]);
    assert!(w.set_physics_threads(1).is_ok());
    let err = w.set_physics_threads(2).unwrap_err().to_string();
    assert!(err.contains("parallel"), "{err}");
}
