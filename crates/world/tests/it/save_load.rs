//! Save/Load (SPEC S15): the whole simulation to XML and back, bit for bit.

use crate::common;

use common::*;
use simrob_protocol::ControlRequest;
use simrob_protocol::EntityId;
use simrob_world::{
    default_save_key, session_flags_of, Applied, EngineState, LoadLimits, LoadOptions, SaveKey,
    SessionFlags, World, WorldConfig, WorldError,
};

fn busy_soccer() -> World {
    let mut w = world_with(&["soccer.xml"]);
    motors(&mut w, 3, 4.0, 2.5);
    w.set_entity_velocity(EntityId(8), [-0.8, 0.3, 0.0], [0.0, 0.0, 0.0])
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
    assert_eq!(second.motor_target(EntityId(3), 0), Some(4.0));
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
        ControlRequest::SetWorldHardness(0.01),
        ControlRequest::SetWorldBounciness(0.5),
        ControlRequest::MakeStep,
    ] {
        w.apply_control(&c).unwrap();
    }
    let flags = SessionFlags {
        auto_adjust: true,
        sync_mode: true,
        sync_wait: 0.25,
    };
    let xml = w.save_xml_with_flags(default_save_key(), &flags);
    assert_eq!(session_flags_of(&xml), Ok(flags));
    let mut loaded = World::new(WorldConfig::default());
    loaded.load_xml(&xml).unwrap();
    assert_eq!(loaded.params(), w.params());
    assert_eq!(loaded.modes(), w.modes());
    assert_eq!(loaded.materials().count(), 2);
    assert_eq!(
        loaded.entity_ids().map(|id| id.0).collect::<Vec<_>>(),
        vec![3, 7, 8]
    );
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
    for bad in [
        good[..good.len() / 2].to_string(),
        "not xml at all".to_string(),
        "<Something_Else/>".to_string(),
        good.replace("Version=\"1\"", "Version=\"99\""),
        good.replace("<Timestep>", "<Timestep>abc"),
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
    assert_eq!(loaded.motor_target(EntityId(3), 1), Some(2.5));
}

/// The byte range of the hex digits of the engine state in a saved file.
fn blob_range(xml: &str) -> std::ops::Range<usize> {
    let tag = xml.find("<Physics_State").unwrap();
    let start = tag + xml[tag..].find('>').unwrap() + 1;
    let end = xml.find("</Physics_State>").unwrap();
    start..end
}

#[test]
fn a_damaged_engine_state_is_not_used_the_world_is_rebuilt_from_the_readable_part() {
    let mut w = busy_soccer();
    run(&mut w, 50);
    let good = w.save_xml();
    let r = blob_range(&good);
    let corrupted_hex = {
        let mut s = good.clone();
        s.replace_range(r.start + 40..r.start + 60, "zzzzzzzzzzzzzzzzzzzz");
        s
    };
    let short_state = {
        let mut s = good.clone();
        s.replace_range(r.start + 200..r.end - 200, "");
        s
    };
    let flipped = {
        let mut s = good.clone();
        let i = r.start + (r.end - r.start) / 2;
        let c = if &s[i..=i] == "0" { "1" } else { "0" };
        s.replace_range(i..=i, c);
        s
    };
    for bad in [corrupted_hex, short_state, flipped] {
        let mut loaded = World::new(WorldConfig::default());
        let engine = loaded
            .load_xml_with(&bad, &LoadOptions::default())
            .expect("rebuilt from the readable part");
        assert!(matches!(engine, EngineState::Rebuilt(_)), "{engine:?}");
        assert_eq!(loaded.iteration(), w.iteration());
        assert_eq!(
            loaded.entity_ids().map(|id| id.0).collect::<Vec<_>>(),
            vec![3, 7, 8]
        );
        run(&mut loaded, 20);
    }
    // The untouched file resumes the engine exactly.
    let mut loaded = World::new(WorldConfig::default());
    assert_eq!(
        loaded.load_xml_with(&good, &LoadOptions::default()),
        Ok(EngineState::Resumed)
    );
}

#[test]
fn an_engine_state_sealed_by_another_key_or_edited_around_is_not_used() {
    let mut w = busy_soccer();
    run(&mut w, 30);
    let mine = SaveKey::from_secret("this installation");
    let theirs = SaveKey::from_secret("another installation");
    let xml = w.save_xml_sealed(&theirs);
    let mut loaded = World::new(WorldConfig::default());
    let opts = LoadOptions {
        key: Some(&mine),
        limits: LoadLimits::default(),
    };
    assert!(matches!(
        loaded.load_xml_with(&xml, &opts),
        Ok(EngineState::Rebuilt(_))
    ));
    // Sealed by mine: resumed.
    let xml = w.save_xml_sealed(&mine);
    assert_eq!(loaded.load_xml_with(&xml, &opts), Ok(EngineState::Resumed));
    // The readable part edited (gravity changed): the seal no longer holds.
    let g = xml.find("<Gravity>").unwrap() + "<Gravity>".len();
    let mut edited = xml.clone();
    edited.replace_range(g..g + xml[g..].find('<').unwrap(), "-5");
    assert!(matches!(
        loaded.load_xml_with(&edited, &opts),
        Ok(EngineState::Rebuilt(_))
    ));
    // A second, unsealed Physics_State after the sealed one is refused as a seal.
    let appended = xml.replace(
        "</SimRob_Simulation>",
        "<Physics_State Encoding=\"hex\">00</Physics_State></SimRob_Simulation>",
    );
    assert!(matches!(
        loaded.load_xml_with(&appended, &opts),
        Ok(EngineState::Rebuilt(_)) | Err(_)
    ));
    // With no key, engine states are never used.
    let none = LoadOptions {
        key: None,
        limits: LoadLimits::default(),
    };
    assert!(matches!(
        loaded.load_xml_with(&xml, &none),
        Ok(EngineState::Rebuilt(_))
    ));
}

#[test]
fn byte_mutations_of_the_engine_state_never_reach_the_engine() {
    // Mutated engine states once made the engine panic on the next step. Unsealed, they are
    // never read: every mutation loads from the readable part and steps on.
    let mut w = busy_soccer();
    run(&mut w, 40);
    let good = w.save_xml();
    let r = blob_range(&good);
    let digits = "0123456789abcdef";
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..60 {
        let mut bad = good.clone().into_bytes();
        for _ in 0..4 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = r.start + (state >> 33) as usize % (r.end - r.start);
            if bad[i].is_ascii_hexdigit() {
                bad[i] = digits.as_bytes()[(state >> 20) as usize % 16];
            }
        }
        let bad = String::from_utf8(bad).unwrap();
        if bad == good {
            continue;
        }
        let mut loaded = World::new(WorldConfig::default());
        let engine = loaded.load_xml_with(&bad, &LoadOptions::default()).unwrap();
        assert!(matches!(engine, EngineState::Rebuilt(_)));
        run(&mut loaded, 3);
    }
}

#[test]
fn files_past_the_limits_are_refused_before_anything_is_built() {
    let mut w = busy_soccer();
    let before = w.save_xml();
    let xml = w.save_xml();
    // 20,000 entities: refused by count, before decoding any.
    let crowd = xml.replacen(
        "<Entities>",
        &format!("<Entities>{}", "<Control_Request/>".repeat(20_000)),
        1,
    );
    let err = w.load_xml(&crowd).unwrap_err().to_string();
    assert!(err.contains("maxentities"), "{err}");
    let small = LoadOptions {
        limits: LoadLimits {
            max_bodies: 3,
            ..LoadLimits::default()
        },
        ..LoadOptions::default()
    };
    let err = w.load_xml_with(&xml, &small).unwrap_err().to_string();
    assert!(err.contains("maxbodies"), "{err}");
    for (limits, key) in [
        (
            LoadLimits {
                max_body_size: 0.01,
                ..LoadLimits::default()
            },
            "maxbodysize",
        ),
        (
            LoadLimits {
                max_body_mass: 1e-6,
                ..LoadLimits::default()
            },
            "maxbodymass",
        ),
        (
            LoadLimits {
                max_materials: 1,
                ..LoadLimits::default()
            },
            "maxmaterials",
        ),
    ] {
        let options = LoadOptions {
            limits,
            ..LoadOptions::default()
        };
        let err = w.load_xml_with(&xml, &options).unwrap_err().to_string();
        assert!(err.contains(key), "{key}: {err}");
    }
    let timestep = xml.replacen("<Timestep>0.01<", "<Timestep>10<", 1);
    assert_ne!(timestep, xml);
    assert!(w
        .load_xml(&timestep)
        .unwrap_err()
        .to_string()
        .contains("Timestep"));
    let gravity = xml.replacen("<Gravity>", "<Gravity>1e30", 1);
    assert!(w
        .load_xml(&gravity)
        .unwrap_err()
        .to_string()
        .contains("Gravity"));
    let far = {
        let state = xml.find("<State>").unwrap();
        let at = state + xml[state..].find("<Position_X>").unwrap() + "<Position_X>".len();
        let mut s = xml.clone();
        s.insert_str(at, "1e308");
        let end = at + 5 + s[at + 5..].find('<').unwrap();
        s.replace_range(at + 5..end, "");
        s
    };
    let err = w.load_xml(&far).unwrap_err().to_string();
    assert!(err.contains("out of range"), "{err}");
    assert_eq!(w.save_xml(), before, "a refused file changed the world");
}
