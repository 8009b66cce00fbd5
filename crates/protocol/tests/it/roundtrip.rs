//! Property tests: any request, response or broadcast encodes to XML that decodes back to
//! the same value (finite numbers exactly; strings with markup characters escaped).

use proptest::prelude::*;
use simrob_protocol::*;

fn finite() -> impl Strategy<Value = f64> {
    use proptest::num::f64 as f;
    prop_oneof![
        -100.0..100.0f64,
        (-5i32..5).prop_map(f64::from),
        f::POSITIVE | f::NEGATIVE | f::NORMAL | f::SUBNORMAL | f::ZERO,
    ]
}

fn opt_finite() -> impl Strategy<Value = Option<f64>> {
    proptest::option::of(finite())
}

fn vec3() -> impl Strategy<Value = Vec3> {
    [finite(), finite(), finite()]
}

/// Printable text without surrounding whitespace (the decoder trims), including the
/// characters that need escaping.
fn text() -> impl Strategy<Value = String> {
    "([!-~é漢]([ -~é漢]{0,12}[!-~é漢])?)?"
}

fn id() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..20, any::<u32>()]
}

fn agent_type() -> impl Strategy<Value = AgentType> {
    prop_oneof![
        Just(AgentType::RobotController),
        Just(AgentType::Gui),
        text()
            .prop_filter("a custom name", |s| {
                !s.is_empty() && s != "RobotController" && s != "GUI"
            })
            .prop_map(AgentType::Other),
    ]
}

fn agent_request() -> impl Strategy<Value = AgentRequest> {
    prop_oneof![
        (
            agent_type(),
            any::<u16>(),
            text(),
            any::<bool>(),
            finite(),
            text()
        )
            .prop_map(|(agent_type, port, ip, sync, broadcast, key)| {
                AgentRequest::RegisterAgent {
                    agent_type,
                    port,
                    ip,
                    sync,
                    broadcast,
                    key,
                }
            }),
        (text(), text()).prop_map(|(requester, requested)| AgentRequest::InfoRequest {
            requester,
            requested
        }),
        (text(), any::<u64>())
            .prop_map(|(key, iteration)| AgentRequest::Synchronize { key, iteration }),
    ]
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        finite().prop_map(|radius| Shape::Sphere { radius }),
        vec3().prop_map(|size| Shape::Box { size }),
        (finite(), finite()).prop_map(|(radius, length)| Shape::Cylinder { radius, length }),
        (finite(), finite()).prop_map(|(radius, length)| Shape::WheelCylinder { radius, length }),
    ]
}

fn body() -> impl Strategy<Value = BodySpec> {
    (
        id(),
        shape(),
        proptest::option::of(id()),
        opt_finite(),
        vec3(),
        vec3(),
    )
        .prop_map(|(id, shape, material, mass, position, rotation)| BodySpec {
            id,
            shape,
            material: material.map(MaterialId),
            mass,
            position,
            rotation,
        })
}

fn joint() -> impl Strategy<Value = JointSpec> {
    prop_oneof![
        (id(), id(), id()).prop_map(|(id, body_1, body_2)| JointSpec::Fixed { id, body_1, body_2 }),
        (
            (id(), id(), id()),
            vec3(),
            vec3(),
            opt_finite(),
            opt_finite(),
            opt_finite()
        )
            .prop_map(
                |((id, body_1, body_2), axis_1, axis_2, hardness, bounciness, maximum_torque)| {
                    JointSpec::Wheel {
                        id,
                        body_1,
                        body_2,
                        axis_1,
                        axis_2,
                        hardness,
                        bounciness,
                        maximum_torque,
                    }
                }
            ),
    ]
}

fn entity_spec() -> impl Strategy<Value = EntitySpec> {
    prop_oneof![
        (
            id(),
            prop::collection::vec(body(), 0..4),
            prop::collection::vec(joint(), 0..3),
            prop::collection::vec(id(), 0..3),
            id()
        )
            .prop_map(|(entity_id, bodies, joints, motors, reference_body)| {
                EntitySpec::Robot {
                    entity_id: EntityId(entity_id),
                    bodies,
                    joints,
                    motors,
                    reference_body,
                }
            }),
        (
            id(),
            prop::collection::vec(body(), 0..4),
            prop::collection::vec(joint(), 0..2)
        )
            .prop_map(|(entity_id, bodies, joints)| EntitySpec::Field {
                entity_id: EntityId(entity_id),
                bodies,
                joints
            }),
        (
            id(),
            proptest::option::of(id()),
            opt_finite(),
            vec3(),
            vec3(),
            finite()
        )
            .prop_map(|(entity_id, material, mass, position, rotation, radius)| {
                EntitySpec::Ball {
                    entity_id: EntityId(entity_id),
                    material: material.map(MaterialId),
                    mass,
                    position,
                    rotation,
                    radius,
                }
            }),
    ]
}

fn control_request() -> impl Strategy<Value = ControlRequest> {
    use ControlRequest::*;
    let materials = (
        prop::collection::vec(
            (id(), text()).prop_map(|(id, name)| Material {
                id: MaterialId(id),
                name,
            }),
            0..3,
        ),
        prop::collection::vec(
            (id(), id(), finite(), finite(), finite(), finite(), finite()).prop_map(
                |(material_1, material_2, hardness, bounciness, slip1, slip2, friction)| {
                    Interaction {
                        material_1: MaterialId(material_1),
                        material_2: MaterialId(material_2),
                        contact: Contact {
                            hardness,
                            bounciness,
                            slip1,
                            slip2,
                            friction,
                        },
                    }
                },
            ),
            0..3,
        ),
    )
        .prop_map(|(materials, interactions)| RegisterMaterialsInteractions {
            materials,
            interactions,
        });
    prop_oneof![
        materials,
        entity_spec().prop_map(CreateEntity),
        Just(InitializeSimulation),
        any::<bool>().prop_map(SetStepMode),
        Just(MakeStep),
        any::<bool>().prop_map(SetAutoAdjustMode),
        any::<bool>().prop_map(SetSyncMode),
        finite().prop_map(SetSyncWait),
        finite().prop_map(SetTimestep),
        finite().prop_map(SetWorldGravity),
        finite().prop_map(SetWorldHardness),
        finite().prop_map(SetWorldBounciness),
        text().prop_map(Save),
        text().prop_map(Load),
        any::<bool>().prop_map(SetFastMode),
        (1u32..=u32::MAX).prop_map(SetStepsPerIteration),
    ]
}

fn entity_request() -> impl Strategy<Value = EntityRequest> {
    prop_oneof![
        (id(), vec3()).prop_map(|(entity_id, position)| EntityRequest::SetEntityPosition {
            entity_id: EntityId(entity_id),
            position
        }),
        (
            id(),
            // One <Motor> a wheel joint (a joint given twice is refused).
            prop::collection::btree_map(id(), finite(), 0..4)
        )
            .prop_map(|(entity_id, motors)| EntityRequest::RobotMotorControl {
                entity_id: EntityId(entity_id),
                motors: motors
                    .into_iter()
                    .map(|(wheel_joint_id, value)| MotorCommand {
                        wheel_joint_id,
                        value
                    })
                    .collect()
            }),
    ]
}

fn request() -> impl Strategy<Value = Request> {
    let response = proptest::option::of(any::<bool>());
    prop_oneof![
        agent_request().prop_map(Request::Agent),
        (control_request(), response.clone())
            .prop_map(|(request, response)| Request::Control { request, response }),
        (entity_request(), response)
            .prop_map(|(request, response)| Request::Entity { request, response }),
    ]
}

fn broadcast() -> impl Strategy<Value = Broadcast> {
    let body_state = (
        (id(), id(), shape(), id(), finite()),
        vec3(),
        vec3(),
        vec3(),
        vec3(),
    )
        .prop_map(
            |(
                (entity_id, id, shape, material, mass),
                position,
                rotation,
                linear_velocity,
                angular_velocity,
            )| BodyState {
                entity_id: EntityId(entity_id),
                id,
                shape,
                material: MaterialId(material),
                mass,
                position,
                rotation,
                linear_velocity,
                angular_velocity,
            },
        );
    let entity =
        (any::<bool>(), id(), vec3(), vec3()).prop_map(|(robot, entity_id, position, rotation)| {
            EntityInfo {
                kind: if robot {
                    EntityInfoKind::Robot
                } else {
                    EntityInfoKind::Ball
                },
                entity_id: EntityId(entity_id),
                position,
                rotation,
            }
        });
    let part = proptest::option::of((1u32..50).prop_flat_map(|n| (1..=n, Just(n))));
    (
        any::<u64>(),
        part,
        prop::collection::vec(body_state, 0..6),
        prop::collection::vec(entity, 0..4),
    )
        .prop_map(|(iteration, part, bodies, entities)| Broadcast {
            iteration,
            part,
            bodies,
            entities,
        })
}

fn response() -> impl Strategy<Value = Response> {
    prop_oneof![
        text().prop_map(Response::Text),
        (text(), any::<u16>(), text()).prop_map(|(key, port, ip)| Response::AgentInformation {
            key,
            port,
            ip
        }),
    ]
}

proptest! {
    #[test]
    fn request_round_trip(req in request()) {
        let keys = CommandKeys::default();
        let xml = encode_request(&req, &keys);
        prop_assert_eq!(decode_datagram(xml.as_bytes(), &keys), vec![Ok(req.clone())], "{}", xml);
        // The same through the element API.
        let el = request_element(&req, &keys);
        prop_assert_eq!(decode_request_element(&el, &keys), Ok(req.clone()));
        let back = tree::parse_elements(&el.to_xml_pretty()).unwrap();
        prop_assert_eq!(decode_request_element(&back[0], &keys), Ok(req));
    }

    #[test]
    fn several_requests_round_trip(reqs in prop::collection::vec(request(), 1..5)) {
        let keys = CommandKeys::default();
        let xml = encode_requests(&reqs, &keys);
        let expected: Vec<Result<Request, DecodeError>> = reqs.into_iter().map(Ok).collect();
        prop_assert_eq!(decode_datagram(xml.as_bytes(), &keys), expected);
    }

    #[test]
    fn entity_spec_round_trip(spec in entity_spec()) {
        let keys = CommandKeys::default();
        let el = entity_spec_element(&spec, &keys);
        prop_assert_eq!(decode_entity_spec_element(&el), Ok(spec.clone()));
        let xml = encode_entity_spec(&spec, &keys);
        prop_assert_eq!(
            decode_datagram(xml.as_bytes(), &keys),
            vec![Ok(Request::Control { request: ControlRequest::CreateEntity(spec), response: None })]
        );
    }

    #[test]
    fn broadcast_round_trip(b in broadcast()) {
        let xml = encode_broadcast(&b);
        prop_assert_eq!(decode_server_message(xml.as_bytes()), Ok(ServerMessage::Broadcast(b.clone())));
        let mut appended = String::from("x");
        encode_broadcast_into(&b, &mut appended);
        prop_assert_eq!(&appended[1..], xml.as_str());
    }

    #[test]
    fn response_round_trip(r in response()) {
        let xml = encode_response(&r);
        prop_assert_eq!(decode_server_message(xml.as_bytes()), Ok(ServerMessage::Response(r)));
    }

    /// Any prefix of a valid datagram decodes without panicking, and whatever decodes Ok
    /// is one of the original requests, in order.
    #[test]
    fn truncation_never_invents_requests(reqs in prop::collection::vec(request(), 1..4), cut in 0.0..1.0f64) {
        let keys = CommandKeys::default();
        let xml = encode_requests(&reqs, &keys);
        let mut at = (xml.len() as f64 * cut) as usize;
        while !xml.is_char_boundary(at) { at -= 1; }
        let results = decode_datagram(&xml.as_bytes()[..at], &keys);
        prop_assert!(!results.is_empty());
        let oks: Vec<Request> = results.iter().filter_map(|r| r.as_ref().ok().cloned()).collect();
        prop_assert!(oks.len() <= reqs.len());
        prop_assert_eq!(&reqs[..oks.len()], &oks[..]);
    }

    /// Arbitrary bytes never panic the decoders.
    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..200)) {
        let keys = CommandKeys::default();
        let r = decode_datagram(&data, &keys);
        prop_assert!(!r.is_empty());
        let _ = decode_server_message(&data);
    }

    /// Arbitrary markup-heavy text never panics the decoders.
    #[test]
    fn arbitrary_markup_never_panics(s in "[<>/=\"a-zA-Z_ &;!?-]{0,200}") {
        let keys = CommandKeys::default();
        let r = decode_datagram(s.as_bytes(), &keys);
        prop_assert!(!r.is_empty());
        let _ = decode_server_message(s.as_bytes());
    }
}

/// The tree decoder's verdict on a server message, for comparison with
/// `decode_server_message` (which tries a streaming broadcast decoder first).
fn tree_decode(data: &[u8]) -> Result<ServerMessage, DecodeError> {
    let roots = simrob_protocol::tree::parse_elements_bytes(data)?;
    match roots.as_slice() {
        [root] if root.name == "Broadcast" => {
            decode_broadcast_element(root).map(ServerMessage::Broadcast)
        }
        [root] if root.name == "Response" => {
            decode_response_element(root).map(ServerMessage::Response)
        }
        _ => Err(DecodeError::invalid("not one Broadcast or Response root")),
    }
}

proptest! {
    #[test]
    fn streaming_and_tree_broadcast_decoders_agree(
        b in broadcast(),
        cut_at in 0.0..1.0f64,
        cut_len in 0usize..40,
        dup_at in 0.0..1.0f64,
        mode in 0u8..4,
    ) {
        let xml = encode_broadcast(&b);
        let mut bytes = xml.clone().into_bytes();
        let at = ((bytes.len() as f64) * cut_at) as usize;
        match mode {
            0 => {}
            1 => { let end = (at + cut_len).min(bytes.len()); bytes.drain(at..end); }
            2 => { let dup: Vec<u8> = bytes[at..(at + cut_len).min(bytes.len())].to_vec(); let pos = ((bytes.len() as f64) * dup_at) as usize; bytes.splice(pos..pos, dup); }
            _ => { if at < bytes.len() { bytes[at] = b' '; } }
        }
        let tree = tree_decode(&bytes);
        let fast = decode_server_message(&bytes);
        match tree {
            Ok(v) => prop_assert_eq!(fast.ok(), Some(v)),
            Err(_) => prop_assert!(fast.is_err(), "accepted what the tree decoder refuses: {:?}", String::from_utf8_lossy(&bytes)),
        }
        if mode == 0 {
            prop_assert_eq!(decode_server_message(xml.as_bytes()).ok(), Some(ServerMessage::Broadcast(b)));
        }
    }
}
