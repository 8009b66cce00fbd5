//! The rapier backend behaves like the world: free fall, contacts, wheels, state export.

use simrob_physics::*;

const IDENTITY: Quat = [0.0, 0.0, 0.0, 1.0];

fn floor(p: &mut RapierBackend) -> BodyId {
    p.add_body(&BodyDesc {
        shape: Shape::Box {
            size: [4.0, 4.0, 0.1],
        },
        mass: -1.0,
        material: MaterialId(0),
        position: [0.0, 0.0, 0.0],
        orientation: IDENTITY,
    })
    .unwrap()
}

fn ball(p: &mut RapierBackend, z: f64) -> BodyId {
    p.add_body(&BodyDesc {
        shape: Shape::Sphere { radius: 0.03 },
        mass: 0.6,
        material: MaterialId(1),
        position: [0.0, 0.0, z],
        orientation: IDENTITY,
    })
    .unwrap()
}

/// Free fall integrates as ODE does (semi-implicit Euler, once per step: velocity, then position
/// with the new velocity): after n steps of h, v = g·n·h and the drop is g·h²·n(n+1)/2, which is
/// ½g·t² plus ½g·t·h (2 % more after 0.5 s at h = 0.01 s, in ODE as here).
#[test]
fn free_fall_integrates_as_ode_does() {
    let mut p = RapierBackend::default();
    let b = ball(&mut p, 10.0);
    let steps = 50; // 0.5 s at dt 0.01
    for _ in 0..steps {
        p.step();
    }
    let s = p.body_state(b).unwrap();
    let (h, n) = (0.01, steps as f64);
    let expected_v = -9.8 * n * h;
    let expected_drop = 9.8 * h * h * n * (n + 1.0) / 2.0;
    let drop = 10.0 - s.position[2];
    assert!(
        (s.linear_velocity[2] - expected_v).abs() < 1e-4 * expected_v.abs(),
        "{s:?}"
    );
    assert!(
        (drop - expected_drop).abs() < 1e-4 * expected_drop,
        "drop {drop} vs {expected_drop}"
    );
}

#[test]
fn ball_bounces_then_rests_on_the_floor_top() {
    let mut p = RapierBackend::default();
    floor(&mut p);
    p.set_interactions(&[(
        (MaterialId(0), MaterialId(1)),
        Contact {
            hardness: 0.1,
            bounciness: 0.7,
            slip1: 0.1,
            slip2: 0.1,
            friction: 1.0,
        },
    )]);
    let b = ball(&mut p, 0.6);
    let mut went_down = false;
    let mut bounced_up = false;
    for _ in 0..300 {
        p.step();
        let s = p.body_state(b).unwrap();
        if s.position[2] < 0.2 {
            went_down = true;
        }
        if went_down && s.linear_velocity[2] > 0.05 {
            bounced_up = true;
        }
    }
    let s = p.body_state(b).unwrap();
    assert!(bounced_up, "the ball never bounced");
    // Floor top at 0.05, ball radius 0.03.
    assert!(
        (s.position[2] - 0.08).abs() < 0.003,
        "rest height {}",
        s.position[2]
    );
    assert!(s.linear_velocity[2].abs() < 0.01);
}

#[test]
fn export_import_continues_bit_for_bit() {
    let mut a = RapierBackend::default();
    floor(&mut a);
    let b = ball(&mut a, 0.3);
    a.set_body_state(
        b,
        &BodyState {
            position: [0.0, 0.0, 0.3],
            orientation: IDENTITY,
            linear_velocity: [1.0, 0.5, 0.0],
            angular_velocity: [0.0, 0.0, 0.0],
        },
    )
    .unwrap();
    for _ in 0..50 {
        a.step();
    }
    let saved = a.export_state();
    let mut c = RapierBackend::default();
    c.import_state(&saved).unwrap();
    for _ in 0..100 {
        a.step();
        c.step();
    }
    assert_eq!(a.body_state(b).unwrap(), c.body_state(b).unwrap());
    assert!(c.import_state(&saved[..saved.len() / 2]).is_err());
    assert_eq!(a.body_state(b).unwrap(), c.body_state(b).unwrap());
}

#[test]
fn ray_hits_the_floor() {
    let mut p = RapierBackend::default();
    let f = floor(&mut p);
    let b = ball(&mut p, 1.0);
    let mut params = p.params();
    params.gravity = 0.0;
    p.set_params(&params).unwrap();
    // Scene queries see the world as of the last step.
    p.step();
    let hit = p
        .cast_ray([0.0, 0.0, 2.0], [0.0, 0.0, -1.0], 10.0, &[])
        .unwrap();
    assert_eq!(hit.body, b);
    assert!((hit.distance - 0.97).abs() < 1e-4);
    let hit = p
        .cast_ray([0.0, 0.0, 2.0], [0.0, 0.0, -1.0], 10.0, &[b])
        .unwrap();
    assert_eq!(hit.body, f);
    assert!((hit.distance - 1.95).abs() < 1e-4);
    assert!((hit.normal[2] - 1.0).abs() < 1e-4);
}

#[test]
fn wheels_never_collide_with_wheels() {
    let mut p = RapierBackend::default();
    let wheel = |p: &mut RapierBackend, x: f64| {
        p.add_body(&BodyDesc {
            shape: Shape::WheelCylinder {
                radius: 0.1,
                length: 0.05,
            },
            mass: 1.0,
            material: MaterialId(0),
            position: [x, 0.0, 0.0],
            orientation: IDENTITY,
        })
        .unwrap()
    };
    let a = wheel(&mut p, 0.0);
    let b = wheel(&mut p, 0.05);
    let mut params = p.params();
    params.gravity = 0.0;
    p.set_params(&params).unwrap();
    for _ in 0..10 {
        p.step();
    }
    // Overlapping wheels stay where they are: no contact pushes them apart.
    assert_eq!(p.body_state(a).unwrap().position, [0.0, 0.0, 0.0]);
    assert!((p.body_state(b).unwrap().position[0] - 0.05).abs() < 1e-6);
}
