//! Every XML example of the SimRob manual §2–§5 (tests/fixtures/seed000/, repaired only where the
//! manual is at fault) decodes to the exact expected typed value.

// 1.570796 and 1.5708 are the seed's literal values, not approximations of π/2.
#![allow(clippy::approx_constant)]

use simrob_protocol::tree::parse_elements;
use simrob_protocol::*;

fn fixture(name: &str) -> String {
    let path = format!(
        "{}/tests/fixtures/seed000/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Decodes a fixture that holds exactly one request.
fn one(name: &str) -> Request {
    let mut results = decode_datagram(fixture(name).as_bytes(), &CommandKeys::default());
    assert_eq!(results.len(), 1, "{name}: {results:?}");
    results.remove(0).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn control(name: &str) -> (ControlRequest, Option<bool>) {
    match one(name) {
        Request::Control { request, response } => (request, response),
        other => panic!("{name}: not a control request: {other:?}"),
    }
}

fn element(name: &str) -> tree::Element {
    let mut roots = parse_elements(&fixture(name)).unwrap();
    assert_eq!(roots.len(), 1);
    roots.remove(0)
}

#[test]
fn s2_1_register_agent() {
    assert_eq!(
        one("2_1_register_agent.xml"),
        Request::Agent(AgentRequest::RegisterAgent {
            agent_type: AgentType::RobotController,
            port: 33153,
            ip: "127.0.0.1".into(),
            sync: false,
            broadcast: 0.1,
            key: "Test".into(),
        })
    );
}

#[test]
fn s2_1_register_agent_response() {
    let m = decode_server_message(fixture("2_1_register_agent_response.xml").as_bytes()).unwrap();
    assert_eq!(
        m,
        ServerMessage::Response(Response::Text(
            "Sucessfully added agent with key Test, port 33153 and ip 127.0.0.1".into()
        ))
    );
}

#[test]
fn s2_2_info_request_and_response() {
    assert_eq!(
        one("2_2_info_request.xml"),
        Request::Agent(AgentRequest::InfoRequest {
            requester: "Test".into(),
            requested: "Test2".into(),
        })
    );
    let m = decode_server_message(fixture("2_2_info_response.xml").as_bytes()).unwrap();
    assert_eq!(
        m,
        ServerMessage::Response(Response::AgentInformation {
            key: "Test2".into(),
            port: 33154,
            ip: "127.0.0.1".into(),
        })
    );
}

#[test]
fn s2_3_register_materials_interactions() {
    let inter = |m1, m2, hardness, bounciness, slip| Interaction {
        material_1: MaterialId(m1),
        material_2: MaterialId(m2),
        contact: Contact {
            hardness,
            bounciness,
            slip1: slip,
            slip2: slip,
            friction: 1.0,
        },
    };
    assert_eq!(
        control("2_3_register_materials_interactions.xml"),
        (
            ControlRequest::RegisterMaterialsInteractions {
                materials: vec![
                    Material {
                        id: MaterialId(0),
                        name: "Wood".into()
                    },
                    Material {
                        id: MaterialId(1),
                        name: "Metal".into()
                    },
                ],
                interactions: vec![
                    inter(0, 0, 0.15, 0.6, 0.1),
                    inter(0, 1, 0.1, 0.7, 0.1),
                    inter(1, 1, 0.05, 0.8, 0.17),
                ],
            },
            None
        )
    );
}

#[test]
fn s2_4_body_and_joint_snippets() {
    let body = |shape, id, material, mass| BodySpec {
        id,
        shape,
        material: Some(material),
        mass: Some(mass),
        position: [1.0, 0.3, 1.8],
        rotation: [0.0; 3],
    };
    let mut sphere = body(Shape::Sphere { radius: 0.023 }, 1, MaterialId(1), 1.3);
    sphere.rotation = [1.570796, 0.0, 0.0];
    assert_eq!(
        decode_body_element(&element("2_4_body_sphere.xml")).unwrap(),
        sphere
    );
    assert_eq!(
        decode_body_element(&element("2_4_body_box.xml")).unwrap(),
        body(Shape::Box { size: [0.075; 3] }, 2, MaterialId(1), 1.2)
    );
    assert_eq!(
        decode_body_element(&element("2_4_body_cylinder.xml")).unwrap(),
        body(
            Shape::Cylinder {
                radius: 0.023,
                length: 0.3
            },
            3,
            MaterialId(1),
            0.5
        )
    );
    assert_eq!(
        decode_body_element(&element("2_4_body_wheelcylinder.xml")).unwrap(),
        body(
            Shape::WheelCylinder {
                radius: 0.023,
                length: 0.3
            },
            4,
            MaterialId(2),
            0.5
        )
    );
    assert_eq!(
        decode_joint_element(&element("2_4_joint_fixed.xml")).unwrap(),
        JointSpec::Fixed {
            id: 1,
            body_1: 1,
            body_2: 2
        }
    );
    assert_eq!(
        decode_joint_element(&element("2_4_joint_wheel.xml")).unwrap(),
        wheel_joint(1, 1, 2)
    );
}

fn wheel_joint(id: u32, body_1: u32, body_2: u32) -> JointSpec {
    JointSpec::Wheel {
        id,
        body_1,
        body_2,
        axis_1: [1.0, 0.0, 0.0],
        axis_2: [0.0, 1.0, 0.0],
        hardness: Some(0.001),
        bounciness: Some(0.9),
        maximum_torque: Some(10.0),
    }
}

fn sumbot() -> EntitySpec {
    let wheel = |id, y| BodySpec {
        id,
        shape: Shape::WheelCylinder {
            radius: 0.023,
            length: 0.04,
        },
        material: Some(MaterialId(1)),
        mass: Some(0.1),
        position: [0.0, y, 0.3305],
        rotation: [1.570796, 0.0, 0.0],
    };
    EntitySpec::Robot {
        entity_id: EntityId(3),
        bodies: vec![
            BodySpec {
                id: 0,
                shape: Shape::Box { size: [0.075; 3] },
                material: Some(MaterialId(0)),
                mass: Some(1.2),
                position: [0.0, -0.1, 0.35],
                rotation: [0.0; 3],
            },
            wheel(1, -0.132925),
            wheel(2, -0.067075),
        ],
        joints: vec![wheel_joint(0, 0, 1), wheel_joint(1, 0, 2)],
        motors: vec![0, 1],
        reference_body: 0,
    }
}

#[test]
fn s2_4_1_create_robot() {
    let (request, response) = control("2_4_1_create_robot.xml");
    assert_eq!(response, None);
    let ControlRequest::CreateEntity(spec) = request else {
        panic!("not Create_Entity: {request:?}")
    };
    // Key numbers first, for a readable failure …
    let EntitySpec::Robot {
        bodies,
        joints,
        motors,
        reference_body,
        ..
    } = &spec
    else {
        panic!("not a robot: {spec:?}")
    };
    assert_eq!(bodies.len(), 3);
    assert_eq!(bodies[1].position, [0.0, -0.132925, 0.3305]);
    assert_eq!(bodies[1].rotation[0], 1.570796);
    assert_eq!(
        bodies[1].shape,
        Shape::WheelCylinder {
            radius: 0.023,
            length: 0.04
        }
    );
    assert_eq!(joints.len(), 2);
    assert_eq!(motors, &[0, 1]);
    assert_eq!(*reference_body, 0);
    // … then everything.
    assert_eq!(spec, sumbot());
}

/// The field's 13 boxes: (x, y, rotation_z, size_x, size_y, size_z).
const FIELD: [(f64, f64, f64, f64, f64, f64); 13] = [
    (0.0, 0.0, 0.0, 2.8, 1.82, 0.1),
    (0.0, -0.9, 0.0, 2.2, 0.02, 0.4),
    (0.0, 0.9, 0.0, 2.2, 0.02, 0.4),
    (1.1, -0.56, 1.5708, 0.7, 0.02, 0.4),
    (1.1, 0.56, 1.5708, 0.7, 0.02, 0.4),
    (-1.1, -0.56, 1.5708, 0.7, 0.02, 0.4),
    (-1.1, 0.56, 1.5708, 0.7, 0.02, 0.4),
    (1.2, 0.22, 0.0, 0.21, 0.02, 0.4),
    (-1.2, 0.22, 0.0, 0.21, 0.02, 0.4),
    (1.3, 0.0, 1.5708, 0.46, 0.02, 0.4),
    (-1.3, 0.0, 1.5708, 0.46, 0.02, 0.4),
    (1.2, -0.22, 0.0, 0.21, 0.02, 0.4),
    (-1.2, -0.22, 0.0, 0.21, 0.02, 0.4),
];

fn field() -> EntitySpec {
    EntitySpec::Field {
        entity_id: EntityId(7),
        bodies: FIELD
            .iter()
            .enumerate()
            .map(|(i, &(x, y, rz, sx, sy, sz))| BodySpec {
                id: i as u32,
                shape: Shape::Box { size: [sx, sy, sz] },
                material: Some(MaterialId(0)),
                mass: Some(-1.0),
                position: [x, y, 0.0],
                rotation: [0.0, 0.0, rz],
            })
            .collect(),
        joints: vec![],
    }
}

#[test]
fn s2_4_2_create_field() {
    let (request, _) = control("2_4_2_create_field.xml");
    let ControlRequest::CreateEntity(spec) = request else {
        panic!("not Create_Entity: {request:?}")
    };
    let EntitySpec::Field { bodies, joints, .. } = &spec else {
        panic!("not a field: {spec:?}")
    };
    assert_eq!(bodies.len(), 13);
    let ids: Vec<u32> = bodies.iter().map(|b| b.id).collect();
    assert_eq!(ids, (0..13).collect::<Vec<_>>());
    assert!(joints.is_empty());
    assert!(bodies.iter().all(|b| b.mass == Some(-1.0)));
    assert_eq!(spec, field());
}

fn ball() -> EntitySpec {
    EntitySpec::Ball {
        entity_id: EntityId(8),
        material: Some(MaterialId(1)),
        mass: Some(0.6),
        position: [1.2, 0.0, 0.6],
        rotation: [0.0; 3],
        radius: 0.03,
    }
}

#[test]
fn s2_4_3_create_ball() {
    assert_eq!(
        control("2_4_3_create_ball.xml"),
        (ControlRequest::CreateEntity(ball()), None)
    );
}

/// The manual shows Create_Entity without the envelope; that form decodes the same.
#[test]
fn s2_4_create_entity_without_envelope() {
    for (name, expected) in [
        ("2_4_1_create_robot.xml", sumbot()),
        ("2_4_2_create_field.xml", field()),
        ("2_4_3_create_ball.xml", ball()),
    ] {
        let bare: String = fixture(name)
            .lines()
            .filter(|l| !l.contains("Message>"))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(bare.trim_start().starts_with("<!--"));
        assert!(!bare.contains("<Message>"));
        let results = decode_datagram(bare.as_bytes(), &CommandKeys::default());
        assert_eq!(
            results,
            vec![Ok(Request::Control {
                request: ControlRequest::CreateEntity(expected.clone()),
                response: None
            })],
            "{name}"
        );
        let el = parse_elements(&bare).unwrap().remove(0);
        assert_eq!(decode_entity_spec_element(&el).unwrap(), expected);
    }
}

#[test]
fn s2_5_to_2_19_control_commands() {
    use ControlRequest::*;
    let cases = [
        ("2_5_initialize_simulation.xml", InitializeSimulation),
        ("2_6_set_step_mode.xml", SetStepMode(true)),
        ("2_7_make_step.xml", MakeStep),
        ("2_8_set_autoadjust_mode.xml", SetAutoAdjustMode(true)),
        ("2_9_set_sync_mode.xml", SetSyncMode(true)),
        ("2_11_set_sync_wait.xml", SetSyncWait(0.2)),
        ("2_12_set_timestep.xml", SetTimestep(0.3)),
        ("2_13_set_world_gravity.xml", SetWorldGravity(-9.8)),
        ("2_14_set_world_hardness.xml", SetWorldHardness(0.9)),
        ("2_15_set_world_bounciness.xml", SetWorldBounciness(0.2)),
        (
            "2_16_save.xml",
            Save("/home/current_user/simulation.xml".into()),
        ),
        (
            "2_17_load.xml",
            Load("/home/current_user/simulation.xml".into()),
        ),
        ("2_18_set_fast_mode.xml", SetFastMode(true)),
        ("2_19_set_steps_per_iteration.xml", SetStepsPerIteration(3)),
    ];
    for (name, expected) in cases {
        assert_eq!(control(name), (expected, None), "{name}");
    }
}

#[test]
fn s2_10_synchronize() {
    assert_eq!(
        one("2_10_synchronize.xml"),
        Request::Agent(AgentRequest::Synchronize {
            key: "Test".into(),
            iteration: 1234
        })
    );
}

#[test]
fn s3_entity_commands() {
    assert_eq!(
        one("3_1_set_entity_position.xml"),
        Request::Entity {
            request: EntityRequest::SetEntityPosition {
                entity_id: EntityId(1),
                position: [1.0, 0.5, 2.0]
            },
            response: None
        }
    );
    assert_eq!(
        one("3_2_robot_motor_control.xml"),
        Request::Entity {
            request: EntityRequest::RobotMotorControl {
                entity_id: EntityId(1),
                motors: vec![
                    MotorCommand {
                        wheel_joint_id: 0,
                        value: 3.0
                    },
                    MotorCommand {
                        wheel_joint_id: 1,
                        value: -5.0
                    },
                ]
            },
            response: None
        }
    );
}

#[test]
fn s4_response_flag() {
    assert_eq!(
        control("4_response_set_fast_mode.xml"),
        (ControlRequest::SetFastMode(true), Some(true))
    );
}

#[test]
fn s5_broadcast() {
    let m = decode_server_message(fixture("5_broadcast.xml").as_bytes()).unwrap();
    let ServerMessage::Broadcast(b) = m else {
        panic!("not a broadcast: {m:?}")
    };
    assert_eq!(b.iteration, 53);
    assert_eq!(b.part, None);
    assert_eq!(b.bodies.len(), 3);
    let wheel = || Shape::WheelCylinder {
        radius: 0.023,
        length: 0.04,
    };
    assert_eq!(
        b.bodies[0],
        BodyState {
            entity_id: EntityId(0),
            id: 1,
            shape: wheel(),
            material: MaterialId(1),
            mass: 0.1,
            position: [-0.0174537, -0.130084, 0.0433577],
            rotation: [-1.28877, -1.38333, 2.94624],
            linear_velocity: [-0.0372574, 0.00835157, 0.00572461],
            angular_velocity: [0.00356964, -1.32355, 0.242375],
        }
    );
    assert_eq!(
        b.bodies[1],
        BodyState {
            entity_id: EntityId(0),
            id: 0,
            shape: Shape::Box { size: [0.075; 3] },
            material: MaterialId(0),
            mass: 1.2,
            position: [-0.0233573, -0.0965763, 0.0608945],
            rotation: [-0.0522157, -0.160992, 0.0905903],
            linear_velocity: [-0.0494591, 0.00857543, 0.00130333],
            angular_velocity: [-0.0754428, -0.327948, 0.191968],
        }
    );
    assert_eq!(b.bodies[2].id, 2);
    assert_eq!(b.bodies[2].shape, wheel());
    assert_eq!(b.bodies[2].angular_velocity, [0.160203, -3.31479, 0.344777]);
    assert_eq!(
        b.entities,
        vec![EntityInfo {
            kind: EntityInfoKind::Robot,
            entity_id: EntityId(3),
            position: [-0.0218736, -0.160992, 0.0608554],
            rotation: [-0.0522157, -0.151389, 0.0905903],
        }]
    );
    // Our encoder writes the same broadcast (plus Entity_id) and reads it back.
    let again = encode_broadcast(&b);
    assert_eq!(
        decode_server_message(again.as_bytes()).unwrap(),
        ServerMessage::Broadcast(b)
    );
}

/// Every request fixture re-encodes to XML that decodes to the same value.
#[test]
fn fixtures_round_trip_through_the_encoder() {
    let keys = CommandKeys::default();
    let dir = format!("{}/tests/fixtures/seed000", env!("CARGO_MANIFEST_DIR"));
    let mut count = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let results = decode_datagram(text.as_bytes(), &keys);
        let Ok(req) = &results[0] else { continue };
        let xml = encode_request(req, &keys);
        assert_eq!(
            decode_datagram(xml.as_bytes(), &keys),
            vec![Ok(req.clone())],
            "{path:?}"
        );
        count += 1;
    }
    assert_eq!(count, 24);
}
