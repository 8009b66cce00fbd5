//! Shared helpers: build worlds from the scenario files of the repository.
#![allow(dead_code)]

use simrob_protocol::EntityId;
use std::path::PathBuf;

use simrob_protocol::{decode_datagram, CommandKeys, ControlRequest, EntityRequest};
use simrob_world::{Applied, World, WorldConfig};

pub fn scenario_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios")
        .join(name)
}

/// Applies every request of `scenarios/<name>`; panics on any error (the files are ours).
pub fn apply_scenario(world: &mut World, name: &str) {
    let bytes = std::fs::read(scenario_path(name)).expect("scenario file");
    for r in decode_datagram(&bytes, &CommandKeys::default()) {
        let r = r.expect("scenario decodes");
        match world.apply(&r).expect("scenario applies") {
            Applied::Done(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

pub fn world_with(files: &[&str]) -> World {
    let mut w = World::new(WorldConfig::default());
    for f in files {
        apply_scenario(&mut w, f);
    }
    w.apply_control(&ControlRequest::InitializeSimulation)
        .unwrap();
    w
}

pub fn motors(world: &mut World, entity: u32, left: f64, right: f64) {
    world
        .apply_entity(&EntityRequest::two_wheels(EntityId(entity), left, right))
        .unwrap();
}

pub fn run(world: &mut World, iterations: u64) {
    for _ in 0..iterations {
        assert!(world.advance());
    }
}

/// Yaw (rotation about Z) of the robot's reference body from its quaternion.
pub fn yaw(world: &World, entity: u32) -> f64 {
    let (_, r) = world.entity_pose(EntityId(entity)).unwrap();
    r[2]
}
