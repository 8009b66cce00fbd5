//! Every command of the SimRob manual §2–§3: accepted ones take effect, rejected ones change nothing.

use crate::common;

use common::*;
use simrob_protocol::{
    BodySpec, Contact, ControlRequest as C, EntityInfoKind, EntityRequest as E, EntitySpec,
    Interaction, JointSpec, Material, MotorCommand, Shape,
};
use simrob_protocol::{EntityId, MaterialId};
use simrob_world::{Applied, World, WorldConfig, WorldError};

fn soccer() -> World {
    let mut w = world_with(&["soccer.xml"]);
    motors(&mut w, 3, 1.0, 1.0);
    run(&mut w, 30);
    w
}

fn body(id: u32, shape: Shape, mass: f64, z: f64) -> BodySpec {
    BodySpec {
        id,
        shape,
        material: Some(MaterialId(0)),
        mass: Some(mass),
        position: [0.0, 0.5, z],
        rotation: [0.0; 3],
    }
}

fn cube(id: u32) -> BodySpec {
    body(id, Shape::Box { size: [0.1; 3] }, 1.0, 0.3)
}

fn wheel_joint(id: u32, b1: u32, b2: u32) -> JointSpec {
    wheel_joint_with(id, b1, b2, [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], None)
}

fn wheel_joint_with(
    id: u32,
    b1: u32,
    b2: u32,
    axis_1: [f64; 3],
    axis_2: [f64; 3],
    torque: Option<f64>,
) -> JointSpec {
    JointSpec::Wheel {
        id,
        body_1: b1,
        body_2: b2,
        axis_1,
        axis_2,
        hardness: None,
        bounciness: None,
        maximum_torque: torque,
    }
}

fn robot(
    id: u32,
    bodies: Vec<BodySpec>,
    joints: Vec<JointSpec>,
    motors: Vec<u32>,
    reference: u32,
) -> C {
    C::CreateEntity(EntitySpec::Robot {
        entity_id: EntityId(id),
        bodies,
        joints,
        motors,
        reference_body: reference,
    })
}

fn interaction(m1: u32, m2: u32) -> Interaction {
    Interaction {
        material_1: MaterialId(m1),
        material_2: MaterialId(m2),
        contact: Contact {
            hardness: 0.1,
            bounciness: 0.5,
            slip1: 0.0,
            slip2: 0.0,
            friction: 1.0,
        },
    }
}

/// Every rejected control request, with a word its error must contain.
fn bad_control_requests() -> Vec<(C, &'static str)> {
    let wheel = body(
        1,
        Shape::WheelCylinder {
            radius: 0.03,
            length: 0.02,
        },
        0.1,
        0.3,
    );
    vec![
        (
            C::RegisterMaterialsInteractions {
                materials: vec![],
                interactions: vec![interaction(0, 42)],
            },
            "42",
        ),
        (
            C::RegisterMaterialsInteractions {
                materials: vec![],
                interactions: vec![{
                    let mut i = interaction(0, 1);
                    i.contact.hardness = 2.0;
                    i
                }],
            },
            "Hardness",
        ),
        (
            C::RegisterMaterialsInteractions {
                materials: vec![Material {
                    id: MaterialId(5),
                    name: "Rubber".into(),
                }],
                interactions: vec![{
                    let mut i = interaction(5, 5);
                    i.contact.friction = -1.0;
                    i
                }],
            },
            "Friction",
        ),
        (
            C::CreateEntity(EntitySpec::Ball {
                entity_id: EntityId(3),
                material: None,
                mass: Some(1.0),
                position: [0.0; 3],
                rotation: [0.0; 3],
                radius: 0.1,
            }),
            "already exists",
        ),
        (
            C::CreateEntity(EntitySpec::Field {
                entity_id: EntityId(20),
                bodies: vec![cube(0), cube(1)],
                joints: vec![JointSpec::Fixed {
                    id: 0,
                    body_1: 0,
                    body_2: 1,
                }],
            }),
            "joints",
        ),
        (
            C::CreateEntity(EntitySpec::Field {
                entity_id: EntityId(20),
                bodies: vec![],
                joints: vec![],
            }),
            "at least one body",
        ),
        (
            robot(20, vec![cube(0), cube(0)], vec![], vec![], 0),
            "twice",
        ),
        (
            robot(
                20,
                vec![cube(0), wheel.clone()],
                vec![wheel_joint(0, 0, 9)],
                vec![0],
                0,
            ),
            "body 9",
        ),
        (
            robot(
                20,
                vec![cube(0), wheel.clone()],
                vec![wheel_joint(0, 0, 1)],
                vec![0],
                7,
            ),
            "Reference_Body",
        ),
        (
            robot(
                20,
                vec![cube(0), wheel.clone()],
                vec![JointSpec::Fixed {
                    id: 0,
                    body_1: 0,
                    body_2: 1,
                }],
                vec![0],
                0,
            ),
            "WheelJoint",
        ),
        (
            robot(
                20,
                vec![cube(0), wheel.clone()],
                vec![wheel_joint(0, 0, 1)],
                vec![3],
                0,
            ),
            "motor 3",
        ),
        (
            robot(
                20,
                vec![cube(0), wheel.clone()],
                vec![wheel_joint_with(
                    0,
                    0,
                    1,
                    [1.0, 0.0, 0.0],
                    [2.0, 0.0, 0.0],
                    None,
                )],
                vec![0],
                0,
            ),
            "parallel",
        ),
        (
            robot(
                20,
                vec![cube(0), wheel.clone()],
                vec![wheel_joint_with(0, 0, 1, [0.0; 3], [0.0, 1.0, 0.0], None)],
                vec![0],
                0,
            ),
            "non-zero",
        ),
        (
            robot(
                20,
                vec![cube(0), wheel.clone()],
                vec![wheel_joint_with(
                    0,
                    0,
                    1,
                    [1.0, 0.0, 0.0],
                    [0.0, 1.0, 0.0],
                    Some(-1.0),
                )],
                vec![0],
                0,
            ),
            "Maximum_Torque",
        ),
        (
            robot(
                20,
                vec![cube(0), cube(1)],
                vec![wheel_joint(0, 0, 0)],
                vec![],
                0,
            ),
            "different bodies",
        ),
        (
            robot(
                20,
                vec![body(0, Shape::Sphere { radius: 0.0 }, 1.0, 0.3)],
                vec![],
                vec![],
                0,
            ),
            "Radius",
        ),
        (
            robot(
                20,
                vec![body(
                    0,
                    Shape::Box {
                        size: [0.1, -0.1, 0.1],
                    },
                    1.0,
                    0.3,
                )],
                vec![],
                vec![],
                0,
            ),
            "Size_Y",
        ),
        (
            robot(
                20,
                vec![body(
                    0,
                    Shape::Cylinder {
                        radius: 0.1,
                        length: f64::NAN,
                    },
                    1.0,
                    0.3,
                )],
                vec![],
                vec![],
                0,
            ),
            "Length",
        ),
        (
            robot(
                20,
                vec![body(0, Shape::Sphere { radius: 0.1 }, 0.0, 0.3)],
                vec![],
                vec![],
                0,
            ),
            "Mass",
        ),
        (
            robot(
                20,
                vec![BodySpec {
                    material: Some(MaterialId(9)),
                    ..cube(0)
                }],
                vec![],
                vec![],
                0,
            ),
            "material 9",
        ),
        (
            robot(
                20,
                vec![BodySpec {
                    position: [f64::INFINITY, 0.0, 0.0],
                    ..cube(0)
                }],
                vec![],
                vec![],
                0,
            ),
            "Position",
        ),
        (
            C::CreateEntity(EntitySpec::Ball {
                entity_id: EntityId(21),
                material: None,
                mass: Some(0.5),
                position: [0.0; 3],
                rotation: [0.0; 3],
                radius: -0.1,
            }),
            "Radius",
        ),
        (C::SetTimestep(0.0), "Timestep"),
        (C::SetTimestep(f64::NAN), "Timestep"),
        (C::SetTimestep(100.0), "Timestep"),
        (C::SetWorldGravity(f64::INFINITY), "Gravity"),
        (C::SetWorldHardness(1.5), "Hardness"),
        (C::SetWorldBounciness(-0.1), "Bounciness"),
        (C::SetStepsPerIteration(0), "Steps_Per_Iteration"),
        (C::Save("  ".into()), "File"),
        (C::Load(String::new()), "File"),
        (C::MakeStep, "step mode is off"),
    ]
}

fn bad_entity_requests() -> Vec<(E, &'static str)> {
    let m = |j: u32, v: f64| MotorCommand {
        wheel_joint_id: j,
        value: v,
    };
    vec![
        (
            E::SetEntityPosition {
                entity_id: EntityId(99),
                position: [0.0; 3],
            },
            "99",
        ),
        (
            E::SetEntityPosition {
                entity_id: EntityId(7),
                position: [0.0; 3],
            },
            "Field",
        ),
        (
            E::SetEntityPosition {
                entity_id: EntityId(8),
                position: [0.0, f64::NAN, 0.0],
            },
            "finite",
        ),
        (
            E::RobotMotorControl {
                entity_id: EntityId(99),
                motors: vec![m(0, 1.0)],
            },
            "99",
        ),
        (
            E::RobotMotorControl {
                entity_id: EntityId(8),
                motors: vec![m(0, 1.0)],
            },
            "not a Robot",
        ),
        (
            E::RobotMotorControl {
                entity_id: EntityId(3),
                motors: vec![m(5, 1.0)],
            },
            "wheel joint 5",
        ),
        // The first motor is valid; the whole request is still refused.
        (
            E::RobotMotorControl {
                entity_id: EntityId(3),
                motors: vec![m(0, 9.0), m(1, f64::INFINITY)],
            },
            "finite",
        ),
    ]
}

#[test]
fn every_rejected_control_request_changes_nothing() {
    let mut w = soccer();
    for (request, word) in bad_control_requests() {
        let before = w.save_xml();
        let err = w
            .apply_control(&request)
            .expect_err(&format!("{request:?} was accepted"));
        assert!(
            err.to_string().contains(word),
            "{request:?}: {err} (expected {word:?})"
        );
        assert_eq!(w.save_xml(), before, "{request:?} changed the world");
    }
}

#[test]
fn every_rejected_entity_request_changes_nothing() {
    let mut w = soccer();
    for (request, word) in bad_entity_requests() {
        let before = w.save_xml();
        let err = w
            .apply_entity(&request)
            .expect_err(&format!("{request:?} was accepted"));
        assert!(
            err.to_string().contains(word),
            "{request:?}: {err} (expected {word:?})"
        );
        assert_eq!(w.save_xml(), before, "{request:?} changed the world");
    }
    assert_eq!(w.motor_target(EntityId(3), 0), Some(1.0));
}

#[test]
fn make_step_refused_before_initialize() {
    let mut w = World::new(WorldConfig::default());
    w.apply_control(&C::SetStepMode(true)).unwrap();
    let err = w.apply_control(&C::MakeStep).unwrap_err();
    assert!(
        matches!(err, WorldError::NotNow(_)) && err.to_string().contains("Initialize_Simulation")
    );
}

#[test]
fn the_world_waits_for_initialize_simulation() {
    let mut w = World::new(WorldConfig::default());
    apply_scenario(&mut w, "soccer.xml");
    let before = w.snapshot();
    assert!(!w.advance());
    assert_eq!(w.iteration(), 0);
    assert_eq!(w.snapshot(), before);
    w.apply_control(&C::InitializeSimulation).unwrap();
    assert!(w.advance());
    assert_eq!(w.iteration(), 1);
}

#[test]
fn step_mode_advances_one_iteration_per_make_step() {
    let mut w = soccer();
    let it = w.iteration();
    w.apply_control(&C::SetStepMode(true)).unwrap();
    assert!(!w.advance());
    w.apply_control(&C::MakeStep).unwrap();
    assert!(w.advance());
    assert!(!w.advance());
    assert_eq!(w.iteration(), it + 1);
    w.apply_control(&C::MakeStep).unwrap();
    w.apply_control(&C::MakeStep).unwrap();
    assert!(w.advance() && w.advance() && !w.advance());
    w.apply_control(&C::SetStepMode(false)).unwrap();
    assert!(w.advance());
    assert_eq!(w.iteration(), it + 4);
}

#[test]
fn steps_per_iteration_and_timestep_set_simulated_time() {
    let mut w = soccer();
    let t0 = w.sim_time();
    w.apply_control(&C::SetTimestep(0.02)).unwrap();
    w.apply_control(&C::SetStepsPerIteration(3)).unwrap();
    assert!((w.iteration_seconds() - 0.06).abs() < 1e-12);
    run(&mut w, 10);
    assert!((w.sim_time() - t0 - 0.6).abs() < 1e-9);
}

#[test]
fn gravity_and_modes_take_effect() {
    let mut w = world_with(&["materials.xml", "ball.xml"]);
    w.apply_control(&C::SetWorldGravity(0.0)).unwrap();
    let z0 = w.entity_pose(EntityId(8)).unwrap().0[2];
    run(&mut w, 50);
    assert_eq!(
        w.entity_pose(EntityId(8)).unwrap().0[2],
        z0,
        "no gravity, no fall"
    );
    w.apply_control(&C::SetWorldGravity(9.8)).unwrap();
    run(&mut w, 10);
    assert!(
        w.entity_pose(EntityId(8)).unwrap().0[2] > z0,
        "gravity along +Z lifts"
    );
    for (req, check) in [
        (C::SetFastMode(true), 0),
        (C::SetWorldHardness(0.3), 4),
        (C::SetWorldBounciness(0.7), 5),
    ] {
        assert!(matches!(w.apply_control(&req).unwrap(), Applied::Done(_)));
        match check {
            0 => assert!(w.params().fast_mode),
            4 => assert_eq!(w.params().world_hardness, 0.3),
            _ => assert_eq!(w.params().world_bounciness, 0.7),
        }
    }
    // Sync mode, Sync_Wait and auto-adjust are the session's: the world refuses them.
    for req in [
        C::SetSyncMode(true),
        C::SetAutoAdjustMode(true),
        C::SetSyncWait(0.5),
    ] {
        assert_eq!(w.apply_control(&req), Err(WorldError::SessionCommand));
    }
}

#[test]
fn set_entity_position_moves_the_whole_robot_rigidly() {
    let mut w = soccer();
    let before: Vec<_> = (0..3)
        .map(|b| w.body_state(EntityId(3), b).unwrap().position)
        .collect();
    w.apply_entity(&E::SetEntityPosition {
        entity_id: EntityId(3),
        position: [0.5, 0.3, 0.2],
    })
    .unwrap();
    let (p, _) = w.entity_pose(EntityId(3)).unwrap();
    assert!((p[0] - 0.5).abs() < 1e-6 && (p[1] - 0.3).abs() < 1e-6 && (p[2] - 0.2).abs() < 1e-6);
    for b in 0..3 {
        let now = w.body_state(EntityId(3), b).unwrap().position;
        for k in 0..3 {
            let offset_before = before[b as usize][k] - before[0][k];
            let offset_now = now[k] - p[k];
            assert!((offset_before - offset_now).abs() < 1e-5);
        }
    }
    w.apply_entity(&E::SetEntityPosition {
        entity_id: EntityId(8),
        position: [0.0, 0.0, 0.5],
    })
    .unwrap();
    assert!((w.entity_pose(EntityId(8)).unwrap().0[2] - 0.5).abs() < 1e-6);
}

#[test]
fn materials_and_a_new_robot_are_accepted() {
    let mut w = soccer();
    w.apply_control(&C::RegisterMaterialsInteractions {
        materials: vec![Material {
            id: MaterialId(5),
            name: "Rubber".into(),
        }],
        interactions: vec![interaction(5, 0), interaction(5, 5)],
    })
    .unwrap();
    assert_eq!(w.materials().count(), 3);
    let wheel = body(
        1,
        Shape::WheelCylinder {
            radius: 0.03,
            length: 0.02,
        },
        0.1,
        0.3,
    );
    let reply = w
        .apply_control(&robot(
            20,
            vec![
                cube(0),
                BodySpec {
                    material: Some(MaterialId(5)),
                    ..wheel
                },
            ],
            vec![wheel_joint(0, 0, 1)],
            vec![0],
            0,
        ))
        .unwrap();
    assert_eq!(reply, Applied::Done("Created Robot entity 20".into()));
    assert!(w.entity_ids().any(|e| e == EntityId(20)));
}

#[test]
fn snapshot_has_every_body_with_its_entity_and_robot_and_ball_entries() {
    let w = soccer();
    let b = w.snapshot();
    assert_eq!(b.iteration, w.iteration());
    assert_eq!(b.bodies.len(), 13 + 3 + 1);
    assert_eq!(
        b.bodies
            .iter()
            .filter(|x| x.entity_id == EntityId(7))
            .count(),
        13
    );
    assert_eq!(
        b.bodies
            .iter()
            .filter(|x| x.entity_id == EntityId(3))
            .count(),
        3
    );
    let wheel = b
        .bodies
        .iter()
        .find(|x| x.entity_id == EntityId(3) && x.id == 1)
        .unwrap();
    assert_eq!(
        wheel.shape,
        Shape::WheelCylinder {
            radius: 0.023,
            length: 0.04
        }
    );
    assert_eq!((wheel.material, wheel.mass), (MaterialId(1), 0.1));
    let kinds: Vec<_> = b.entities.iter().map(|e| (e.kind, e.entity_id)).collect();
    assert_eq!(
        kinds,
        vec![
            (EntityInfoKind::Robot, EntityId(3)),
            (EntityInfoKind::Ball, EntityId(8))
        ]
    );
    let chassis = b
        .bodies
        .iter()
        .find(|x| x.entity_id == EntityId(3) && x.id == 0)
        .unwrap();
    assert_eq!(b.entities[0].position, chassis.position);
}
