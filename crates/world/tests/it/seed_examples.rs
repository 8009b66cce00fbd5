//! Every Control_Request and Entity_Request example of the SimRob manual §2–§4 (the protocol crate's
//! fixtures) applies to a world built from the seed's own entities.

use simrob_protocol::EntityId;
use simrob_protocol::{decode_datagram, CommandKeys, ControlRequest, Request};
use simrob_world::{moved_copy, Applied, World, WorldConfig, WorldError};

fn fixture(name: &str) -> Vec<Request> {
    let path = format!(
        "{}/../protocol/tests/fixtures/seed000/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    decode_datagram(&bytes, &CommandKeys::default())
        .into_iter()
        .map(|r| r.unwrap_or_else(|e| panic!("{name}: {e}")))
        .collect()
}

#[test]
fn the_seed_examples_apply_in_order() {
    let mut w = World::new(WorldConfig::default());
    let mut applied = 0;
    for name in [
        "2_3_register_materials_interactions.xml",
        "2_4_2_create_field.xml",
        "2_4_1_create_robot.xml",
        "2_4_3_create_ball.xml",
    ] {
        for r in fixture(name) {
            assert!(matches!(w.apply(&r), Ok(Applied::Done(_))), "{name}");
            applied += 1;
        }
    }
    // §3's examples drive entity 1: make it a second SumBot.
    let sumbot = w.entity_spec(EntityId(3)).cloned().unwrap();
    w.apply_control(&ControlRequest::CreateEntity(moved_copy(
        &sumbot,
        EntityId(1),
        [0.5, 0.0, 0.0],
    )))
    .unwrap();
    for name in [
        "2_5_initialize_simulation.xml",
        "2_6_set_step_mode.xml",
        "2_7_make_step.xml",
        "2_12_set_timestep.xml",
        "2_13_set_world_gravity.xml",
        "2_14_set_world_hardness.xml",
        "2_15_set_world_bounciness.xml",
        "2_18_set_fast_mode.xml",
        "2_19_set_steps_per_iteration.xml",
        "3_1_set_entity_position.xml",
        "3_2_robot_motor_control.xml",
        "4_response_set_fast_mode.xml",
    ] {
        for r in fixture(name) {
            let outcome = w.apply(&r);
            assert!(
                matches!(outcome, Ok(Applied::Done(_))),
                "{name}: {outcome:?}"
            );
            applied += 1;
        }
    }
    for (name, expected) in [
        (
            "2_16_save.xml",
            Applied::Save("/home/current_user/simulation.xml".into()),
        ),
        (
            "2_17_load.xml",
            Applied::Load("/home/current_user/simulation.xml".into()),
        ),
    ] {
        for r in fixture(name) {
            assert_eq!(w.apply(&r).unwrap(), expected);
            applied += 1;
        }
    }
    // Sync mode, Sync_Wait and auto-adjust are the session's (crates/session tests them).
    for name in [
        "2_8_set_autoadjust_mode.xml",
        "2_9_set_sync_mode.xml",
        "2_11_set_sync_wait.xml",
    ] {
        for r in fixture(name) {
            assert_eq!(w.apply(&r), Err(WorldError::SessionCommand), "{name}");
            applied += 1;
        }
    }
    assert_eq!(applied, 4 + 15 + 2);
    // The effects are visible.
    assert_eq!(w.params().timestep, 0.3);
    assert_eq!(w.modes().steps_per_iteration, 3);
    assert!(w.modes().step_mode);
    assert_eq!(w.motor_target(EntityId(1), 0), Some(3.0));
    assert_eq!(w.motor_target(EntityId(1), 1), Some(-5.0));
    let (p, _) = w.entity_pose(EntityId(1)).unwrap();
    assert!((p[0] - 1.0).abs() < 1e-6 && (p[1] - 0.5).abs() < 1e-6 && (p[2] - 2.0).abs() < 1e-6);
    // One Make_Step was granted: exactly one iteration runs.
    assert!(w.advance());
    assert!(!w.advance());
}

#[test]
fn agent_messages_are_not_the_worlds() {
    let mut w = World::new(WorldConfig::default());
    for r in fixture("2_1_register_agent.xml") {
        assert!(w.apply(&r).is_err());
    }
}
