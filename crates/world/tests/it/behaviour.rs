//! The seed's scene behaves like the world (issue: "It behaves like the world").

use crate::common;

use common::*;
use simrob_physics::rotate;
use simrob_protocol::EntityId;

const SUMBOT: u32 = 3;
const BALL: u32 = 8;
const WHEEL_RADIUS: f64 = 0.023;
/// Top face of the field's floor box (centre z 0, height 0.1).
const FLOOR_TOP: f64 = 0.05;

#[test]
fn sumbot_lands_on_its_wheels_and_stays_upright() {
    let mut w = world_with(&["materials.xml", "field.xml", "sumbot.xml"]);
    run(&mut w, 300);
    for wheel in [1, 2] {
        let s = w.body_state(EntityId(SUMBOT), wheel).unwrap();
        let bottom = s.position[2] - WHEEL_RADIUS;
        assert!(
            (bottom - FLOOR_TOP).abs() < 0.003,
            "wheel {wheel} bottom at {bottom}"
        );
        assert!(s.linear_velocity.iter().all(|v| v.abs() < 1e-3), "{s:?}");
    }
    let chassis = w.body_state(EntityId(SUMBOT), 0).unwrap();
    let up = rotate(chassis.orientation, [0.0, 0.0, 1.0]);
    // Upright: at most the ≈8° skid tilt of SPEC S9, far from tipping.
    assert!(up[2] > 20f64.to_radians().cos(), "chassis up vector {up:?}");
    // Its chassis never goes through the floor.
    assert!(chassis.position[2] - 0.0375 > FLOOR_TOP - 0.02);
}

#[test]
fn equal_wheel_speeds_drive_straight_at_omega_r() {
    let mut w = world_with(&["materials.xml", "field.xml", "sumbot.xml"]);
    run(&mut w, 100);
    motors(&mut w, SUMBOT, 3.0, 3.0);
    run(&mut w, 100); // accelerate
    let (p0, _) = w.entity_pose(EntityId(SUMBOT)).unwrap();
    let t0 = w.sim_time();
    run(&mut w, 400);
    let (p1, _) = w.entity_pose(EntityId(SUMBOT)).unwrap();
    let dt = w.sim_time() - t0;
    let vx = (p1[0] - p0[0]) / dt;
    let expected = 3.0 * WHEEL_RADIUS;
    // Positive wheel speed drives the SumBot towards −X, as in ODE (SPEC S9).
    assert!(vx < 0.0, "vx {vx}");
    assert!(
        (vx.abs() - expected).abs() < 0.15 * expected,
        "speed {} vs ω·r {expected}",
        vx.abs()
    );
    assert!(
        (p1[1] - p0[1]).abs() < 0.01,
        "drifted sideways {} m",
        p1[1] - p0[1]
    );
    assert!(
        yaw(&w, SUMBOT).abs() < 0.05,
        "turned {} rad",
        yaw(&w, SUMBOT)
    );
}

#[test]
fn opposite_wheel_speeds_turn_in_place() {
    let mut w = world_with(&["materials.xml", "field.xml", "sumbot.xml"]);
    run(&mut w, 100);
    motors(&mut w, SUMBOT, 3.0, -3.0);
    // Record the centre after every full turn (unwrapped yaw passing a multiple of 2π).
    let mut last = yaw(&w, SUMBOT);
    let mut total = 0.0f64;
    let mut crossings = vec![w.entity_pose(EntityId(SUMBOT)).unwrap().0];
    for _ in 0..3000 {
        run(&mut w, 1);
        let now = yaw(&w, SUMBOT);
        let mut d = now - last;
        if d > std::f64::consts::PI {
            d -= std::f64::consts::TAU;
        } else if d < -std::f64::consts::PI {
            d += std::f64::consts::TAU;
        }
        total += d;
        last = now;
        if total.abs() >= std::f64::consts::TAU * crossings.len() as f64 {
            crossings.push(w.entity_pose(EntityId(SUMBOT)).unwrap().0);
        }
    }
    assert!(
        crossings.len() >= 3,
        "only {} full turns in 30 s",
        crossings.len()
    );
    for pair in crossings.windows(2) {
        let d = ((pair[1][0] - pair[0][0]).powi(2) + (pair[1][1] - pair[0][1]).powi(2)).sqrt();
        assert!(d < 0.02, "centre drifted {d} m in one turn");
    }
}

#[test]
fn ball_dropped_bounces_then_rests_on_the_floor() {
    let mut w = world_with(&["materials.xml", "field.xml", "ball.xml"]);
    let mut touched = false;
    let mut bounced = false;
    for _ in 0..500 {
        run(&mut w, 1);
        let s = w.body_state(EntityId(BALL), 0).unwrap();
        if s.position[2] < FLOOR_TOP + 0.031 {
            touched = true;
        }
        if touched && s.linear_velocity[2] > 0.05 {
            bounced = true;
        }
    }
    assert!(bounced, "the ball never bounced");
    let s = w.body_state(EntityId(BALL), 0).unwrap();
    assert!(
        (s.position[2] - (FLOOR_TOP + 0.03)).abs() < 0.002,
        "rests at z {}",
        s.position[2]
    );
    assert!(s.linear_velocity.iter().all(|v| v.abs() < 0.01), "{s:?}");
}

#[test]
fn ball_rolled_into_a_wall_comes_back() {
    let mut w = world_with(&["materials.xml", "field.xml", "ball.xml"]);
    w.apply_entity(&simrob_protocol::EntityRequest::SetEntityPosition {
        entity_id: EntityId(BALL),
        position: [0.0, 0.5, FLOOR_TOP + 0.03],
    })
    .unwrap();
    run(&mut w, 20);
    // Rolling towards the +Y side wall (inner face at y = 0.89).
    w.set_entity_velocity(EntityId(BALL), [0.0, 1.5, 0.0], [-1.5 / 0.03, 0.0, 0.0])
        .unwrap();
    let mut max_y: f64 = 0.0;
    for _ in 0..100 {
        run(&mut w, 1);
        max_y = max_y.max(w.body_state(EntityId(BALL), 0).unwrap().position[1]);
    }
    assert!(max_y > 0.85, "never reached the wall: {max_y}");
    let s = w.body_state(EntityId(BALL), 0).unwrap();
    assert!(s.linear_velocity[1] < -0.01, "not coming back: {s:?}");
    run(&mut w, 100);
    let y = w.body_state(EntityId(BALL), 0).unwrap().position[1];
    assert!(y < max_y - 0.02, "still at the wall: {y}");
}

#[test]
fn free_fall_matches_gravity_as_in_ode() {
    let mut w = world_with(&["materials.xml", "ball.xml"]);
    w.apply_entity(&simrob_protocol::EntityRequest::SetEntityPosition {
        entity_id: EntityId(BALL),
        position: [0.0, 0.0, 20.0],
    })
    .unwrap();
    run(&mut w, 100);
    let s = w.body_state(EntityId(BALL), 0).unwrap();
    let t = w.sim_time();
    let drop = 20.0 - s.position[2];
    // As in ODE (velocity, then position with the new velocity, once per 0.01 s step): the drop
    // is ½g·t·(t + h), 1 % more than ½g·t² after 1 s.
    let g_measured = 2.0 * drop / (t * (t + 0.01));
    assert!((g_measured - 9.8).abs() < 0.0098, "g = {g_measured}");
    assert!(
        (s.linear_velocity[2] + 9.8 * t).abs() < 0.098 * t,
        "v = {}",
        s.linear_velocity[2]
    );
}
