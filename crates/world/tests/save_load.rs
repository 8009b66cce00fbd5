//! Save/Load (SPEC S15): the whole simulation to XML and back, bit for bit.

mod common;

use common::*;
use simrob_protocol::ControlRequest;
use simrob_world::{Applied, World, WorldConfig, WorldError};

fn busy_soccer() -> World {
    let mut w = world_with(&["soccer.xml"]);
    motors(&mut w, 3, 4.0, 2.5);
    w.set_entity_velocity(8, [-0.8, 0.3, 0.0], [0.0, 0.0, 0.0])
        .unwrap();
    w
}

fn poses(w: &World) -> Vec<[f64; 3]> {
    w.snapshot()
        .bodies
        .iter()
        .flat_map(|b| {
            [
                b.position,
                b.rotation,
                b.linear_velocity,
                b.angular_velocity,
            ]
        })
        .collect()
}

#[test]
fn save_at_500_load_and_continue_equals_an_uninterrupted_run() {
    let mut reference = busy_soccer();
    run(&mut reference, 1000);

    let mut first = busy_soccer();
    run(&mut first, 500);
    assert_eq!(
        first
            .apply_control(&ControlRequest::Save("run.xml".into()))
            .unwrap(),
        Applied::Save("run.xml".into())
    );
    let xml = first.save_xml();
    // Load into a different, fresh world.
    let mut second = World::new(WorldConfig::default());
    second.load_xml(&xml).unwrap();
    assert_eq!(second.iteration(), 500);
    assert_eq!(poses(&second), poses(&first));
    run(&mut second, 500);
    assert_eq!(second.iteration(), 1000);
    assert_eq!(
        poses(&second),
        poses(&reference),
        "trajectories diverged after load"
    );
    assert_eq!(second.motor_target(3, 0), Some(4.0));
    assert_eq!(second.sim_time(), reference.sim_time());
}

#[test]
fn saved_file_keeps_parameters_and_modes() {
    let mut w = busy_soccer();
    for c in [
        ControlRequest::SetTimestep(0.02),
        ControlRequest::SetWorldGravity(-3.7),
        ControlRequest::SetFastMode(true),
        ControlRequest::SetStepsPerIteration(3),
        ControlRequest::SetStepMode(true),
        ControlRequest::SetSyncMode(true),
        ControlRequest::SetSyncWait(0.25),
        ControlRequest::SetAutoAdjustMode(true),
        ControlRequest::SetWorldHardness(0.01),
        ControlRequest::SetWorldBounciness(0.5),
        ControlRequest::MakeStep,
    ] {
        w.apply_control(&c).unwrap();
    }
    let mut loaded = World::new(WorldConfig::default());
    loaded.load_xml(&w.save_xml()).unwrap();
    assert_eq!(loaded.params(), w.params());
    assert_eq!(loaded.modes(), w.modes());
    assert_eq!(loaded.materials().count(), 2);
    assert_eq!(loaded.entity_ids().collect::<Vec<_>>(), vec![3, 7, 8]);
    // The pending Make_Step survives too.
    assert!(loaded.advance());
    assert!(!loaded.advance());
}

#[test]
fn corrupt_or_truncated_files_are_refused_and_change_nothing() {
    let mut w = busy_soccer();
    run(&mut w, 50);
    let good = w.save_xml();
    let before = w.save_xml();
    let corrupted_hex = {
        let start = good.find("<Physics_State").unwrap();
        let mut s = good.clone();
        s.replace_range(start + 40..start + 60, "zzzzzzzzzzzzzzzzzzzz");
        s
    };
    let short_state = {
        let start = good.find("<Physics_State").unwrap();
        let end = good.find("</Physics_State>").unwrap();
        let mut s = good.clone();
        s.replace_range(start + 200..end - 200, "");
        s
    };
    for bad in [
        good[..good.len() / 2].to_string(),
        "not xml at all".to_string(),
        "<Something_Else/>".to_string(),
        good.replace("Version=\"1\"", "Version=\"99\""),
        good.replace("<Timestep>", "<Timestep>abc"),
        corrupted_hex,
        short_state,
        String::new(),
    ] {
        let err = w.load_xml(&bad).unwrap_err();
        assert!(matches!(err, WorldError::Load(_)), "{err}");
        assert!(!err.to_string().is_empty());
        assert_eq!(w.save_xml(), before, "world changed after refusing: {err}");
    }
}

#[test]
fn a_file_without_physics_state_places_the_bodies() {
    let mut w = busy_soccer();
    run(&mut w, 200);
    let xml = w.save_xml();
    let start = xml.find("<Physics_State").unwrap();
    let end = xml.find("</Physics_State>").unwrap() + "</Physics_State>".len();
    let mut hand_written = xml.clone();
    hand_written.replace_range(start..end, "");
    let mut loaded = World::new(WorldConfig::default());
    loaded.load_xml(&hand_written).unwrap();
    for (a, b) in loaded
        .snapshot()
        .bodies
        .iter()
        .zip(w.snapshot().bodies.iter())
    {
        assert_eq!((a.entity_id, a.id), (b.entity_id, b.id));
        for k in 0..3 {
            assert!((a.position[k] - b.position[k]).abs() < 1e-6);
            assert!((a.linear_velocity[k] - b.linear_velocity[k]).abs() < 1e-6);
        }
    }
    assert_eq!(loaded.motor_target(3, 1), Some(2.5));
}
