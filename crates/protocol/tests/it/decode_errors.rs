//! Datagram structure (several roots, partial input) and error messages.

use simrob_protocol::*;

fn keys() -> CommandKeys {
    CommandKeys::default()
}

fn decode(xml: &str) -> Vec<Result<Request, DecodeError>> {
    decode_datagram(xml.as_bytes(), &keys())
}

fn single_err(xml: &str) -> DecodeError {
    let mut r = decode(xml);
    assert_eq!(r.len(), 1, "{r:?}");
    r.remove(0).expect_err("expected an error")
}

fn control(request: ControlRequest) -> Request {
    Request::Control {
        request,
        response: None,
    }
}

const STEP: &str = r#"<Message><Simulation_Message><Control_Request Command="Make_Step"/></Simulation_Message></Message>"#;

fn sim(inner: &str) -> String {
    format!("<Message><Simulation_Message>{inner}</Simulation_Message></Message>")
}

fn robot_with_body(body: &str) -> String {
    sim(&format!(
        r#"<Control_Request Command="Create_Entity" Type="Robot"><Data><Entity_id>3</Entity_id><Structure>
        <Body Type="Sphere"><Body_id>0</Body_id><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Radius>1</Radius></Body>
        <Body Type="Sphere"><Body_id>1</Body_id><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Radius>1</Radius></Body>
        {body}
        </Structure><Motors/><Reference_Body>0</Reference_Body></Data></Control_Request>"#
    ))
}

#[test]
fn several_roots_and_requests_in_document_order() {
    let xml = format!(
        r#"{STEP}
        <Message>
          <Agent_Message Command="Synchronize"><Key>A</Key><Iteration>7</Iteration></Agent_Message>
          <Simulation_Message>
            <Control_Request Command="Set_Timestep"><Timestep>0.01</Timestep></Control_Request>
            <Entity_Request Command="Set_Entity_Position"><Entity_Id>2</Entity_Id>
              <Position_X>1</Position_X><Position_Y>2</Position_Y><Position_Z>3</Position_Z>
              <Response>false</Response></Entity_Request>
            <Control_Request Command="Set_Step_Mode"><Step_Mode>TRUE</Step_Mode></Control_Request>
          </Simulation_Message>
        </Message>
        <Control_Request Command="Initialize_Simulation"/>"#
    );
    let r = decode(&xml);
    assert_eq!(
        r,
        vec![
            Ok(control(ControlRequest::MakeStep)),
            Ok(Request::Agent(AgentRequest::Synchronize {
                key: "A".into(),
                iteration: 7
            })),
            Ok(control(ControlRequest::SetTimestep(0.01))),
            Ok(Request::Entity {
                request: EntityRequest::SetEntityPosition {
                    entity_id: EntityId(2),
                    position: [1.0, 2.0, 3.0]
                },
                response: Some(false)
            }),
            Ok(control(ControlRequest::SetStepMode(true))),
            Ok(control(ControlRequest::InitializeSimulation)),
        ]
    );
}

#[test]
fn a_bad_request_does_not_spoil_its_neighbours() {
    let xml = sim(r#"<Control_Request Command="Make_Step"/>
        <Control_Request Command="Set_Timestep"><Timestep>abc</Timestep></Control_Request>
        <Control_Request Command="Initialize_Simulation"/>"#);
    let r = decode(&xml);
    assert_eq!(r.len(), 3);
    assert_eq!(r[0], Ok(control(ControlRequest::MakeStep)));
    let e = r[1].clone().unwrap_err();
    assert_eq!(
        e.to_string(),
        "Message[1]/Simulation_Message/Control_Request[Set_Timestep]: Timestep: expected a number, found \"abc\""
    );
    assert_eq!(e.kind(), DecodeErrorKind::InvalidValue);
    assert_eq!(r[2], Ok(control(ControlRequest::InitializeSimulation)));
}

#[test]
fn truncated_xml_keeps_what_came_before() {
    let full = sim(
        r#"<Control_Request Command="Make_Step"/><Control_Request Command="Set_Timestep"><Timestep>0.5</Timestep></Control_Request>"#,
    );
    let cut = &full[..full.find("<Timestep>").unwrap() + 12];
    let r = decode(&format!("{STEP}{cut}"));
    assert_eq!(r.len(), 3, "{r:?}");
    assert_eq!(r[0], Ok(control(ControlRequest::MakeStep)));
    assert_eq!(r[1], Ok(control(ControlRequest::MakeStep)));
    let e = r[2].clone().unwrap_err();
    assert_eq!(e.kind(), DecodeErrorKind::Syntax);
    let s = e.to_string();
    assert!(
        s.starts_with(
            "Message[2]/Simulation_Message/Control_Request/Timestep: XML syntax error at byte "
        ),
        "{s}"
    );
    assert!(s.contains("line 1"), "{s}");
    assert!(s.contains("<Timestep> is not closed"), "{s}");

    // A break in the middle of a tag.
    let r = decode(&format!("{STEP}\n<Message><Simulation_Mess"));
    assert_eq!(r.len(), 2);
    assert!(r[0].is_ok());
    let e = r[1].clone().unwrap_err();
    assert_eq!(e.kind(), DecodeErrorKind::Syntax);
    assert_eq!(e.position().unwrap().line, 2);
}

#[test]
fn mismatched_tags_are_syntax_errors_with_position() {
    let e = single_err("<Message>\n  <Simulation_Message>\n  </Message>");
    assert_eq!(e.kind(), DecodeErrorKind::Syntax);
    let p = e.position().unwrap();
    assert_eq!(p.line, 3);
    let s = e.to_string();
    assert!(s.contains("XML syntax error at byte"), "{s}");
    assert!(s.contains("Simulation_Message"), "{s}");
}

#[test]
fn garbage_empty_and_non_utf8() {
    let e = single_err("this is not xml");
    assert_eq!(e.kind(), DecodeErrorKind::Syntax);
    assert!(e.to_string().contains("text outside any element"), "{e}");

    for empty in ["", "   \n ", "<!-- only a comment -->"] {
        let e = single_err(empty);
        assert_eq!(e.kind(), DecodeErrorKind::Empty, "{empty:?}");
        assert!(e.to_string().contains("empty datagram"), "{e}");
    }

    let r = decode_datagram(b"<Message>\xff\xfe</Message>", &keys());
    assert_eq!(r.len(), 1);
    let e = r[0].clone().unwrap_err();
    assert_eq!(e.kind(), DecodeErrorKind::NotUtf8);
    assert_eq!(
        e.to_string(),
        "the input is not valid UTF-8 (invalid byte at offset 9)"
    );

    let e = single_err("<<<>>>");
    assert_eq!(e.kind(), DecodeErrorKind::Syntax);
}

#[test]
fn unknown_command() {
    let e = single_err(&sim(r#"<Control_Request Command="Foo"/>"#));
    assert_eq!(e.kind(), DecodeErrorKind::UnknownCommand);
    let s = e.to_string();
    assert!(
        s.starts_with(
            "Message[1]/Simulation_Message/Control_Request[Foo]: unknown command \"Foo\" in Control_Request (known: Register_Materials_Interactions, Create_Entity, "
        ),
        "{s}"
    );
    assert!(
        s.contains("Set_Steps_Per_Iteration, Set_Rolling_Resistance)"),
        "{s}"
    );

    // A command sent in the wrong kind of request says where it belongs.
    let e = single_err(&sim(r#"<Control_Request Command="Robot_Motor_Control"/>"#));
    assert!(
        e.to_string()
            .ends_with("; Robot_Motor_Control is a command of <Entity_Request>"),
        "{e}"
    );
    let e = single_err(r#"<Message><Agent_Message Command="Nope"/></Message>"#);
    assert!(
        e.to_string().contains(
            "unknown command \"Nope\" in Agent_Message (known: Register_Agent, Info_Request, Synchronize, Unregister_Agent)"
        ),
        "{e}"
    );
    let e = single_err(&sim(r#"<Control_Request/>"#));
    assert_eq!(e.kind(), DecodeErrorKind::MissingAttribute);
    assert_eq!(
        e.to_string(),
        "Message[1]/Simulation_Message/Control_Request: missing required attribute Command"
    );
}

#[test]
fn missing_required_child_is_named_with_its_path() {
    // Body[3] has Body_id 2 and no Radius.
    let body = r#"<Body Type="Sphere"><Body_id>2</Body_id><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z></Body>"#;
    let e = single_err(&robot_with_body(body));
    assert_eq!(e.kind(), DecodeErrorKind::MissingElement);
    assert_eq!(
        e.to_string(),
        "Message[1]/Simulation_Message/Control_Request[Create_Entity]/Data/Structure/Body[3] (Body_id 2): missing required child <Radius>"
    );

    let r = decode(&format!(
        "{STEP}{}",
        robot_with_body(&body.replace("</Body>", "<Radius>abc</Radius></Body>"))
    ));
    assert_eq!(r.len(), 2);
    let e = r[1].clone().unwrap_err();
    assert_eq!(
        e.to_string(),
        "Message[2]/Simulation_Message/Control_Request[Create_Entity]/Data/Structure/Body[3] (Body_id 2): Radius: expected a number, found \"abc\""
    );

    let e = single_err(
        r#"<Message><Agent_Message Command="Register_Agent" Agent_Type="GUI"><Port>1</Port><IP>x</IP><Sync>true</Sync><Key>k</Key></Agent_Message></Message>"#,
    );
    assert_eq!(
        e.to_string(),
        "Message[1]/Agent_Message[Register_Agent]: missing required child <Broadcast>"
    );

    let e = single_err(&sim(
        r#"<Entity_Request Command="Robot_Motor_Control"><Entity_Id>1</Entity_Id><Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>1</Value></Motor><Motor><Wheel_Joint_Id>1</Wheel_Joint_Id></Motor></Motors></Entity_Request>"#,
    ));
    assert_eq!(
        e.to_string(),
        "Message[1]/Simulation_Message/Entity_Request[Robot_Motor_Control]/Motors/Motor[2]: missing required child <Value>"
    );
}

#[test]
fn nan_inf_and_out_of_range_numbers() {
    for bad in ["NaN", "nan", "inf", "-inf", "infinity", "1e400"] {
        let e = single_err(&sim(&format!(
            r#"<Control_Request Command="Set_World_Gravity"><Gravity>{bad}</Gravity></Control_Request>"#
        )));
        assert_eq!(e.kind(), DecodeErrorKind::InvalidValue);
        assert_eq!(
            e.to_string(),
            format!("Message[1]/Simulation_Message/Control_Request[Set_World_Gravity]: Gravity: expected a finite number (NaN and infinity are not allowed), found \"{bad}\"")
        );
    }
    let e = single_err(&sim(
        r#"<Entity_Request Command="Set_Entity_Position"><Entity_Id>-1</Entity_Id><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z></Entity_Request>"#,
    ));
    assert_eq!(
        e.to_string(),
        "Message[1]/Simulation_Message/Entity_Request[Set_Entity_Position]: Entity_Id: expected a non-negative integer (0 to 4294967295), found \"-1\""
    );
    let e = single_err(&sim(
        r#"<Control_Request Command="Set_Steps_Per_Iteration"><Steps_Per_Iteration>0</Steps_Per_Iteration></Control_Request>"#,
    ));
    assert!(e.to_string().contains("must be at least 1"), "{e}");
    let e = single_err(
        r#"<Message><Agent_Message Command="Register_Agent" Agent_Type="GUI"><Port>70000</Port><IP>x</IP><Sync>true</Sync><Broadcast>1</Broadcast><Key>k</Key></Agent_Message></Message>"#,
    );
    assert!(
        e.to_string()
            .ends_with("Port: expected an integer (0 to 65535; digits, no decimal point or exponent), found \"70000\""),
        "{e}"
    );
    let e = single_err(
        r#"<Agent_Message Command="Synchronize"><Key>k</Key><Iteration>1.5</Iteration></Agent_Message>"#,
    );
    assert_eq!(
        e.to_string(),
        "Agent_Message[Synchronize]: Iteration: expected an integer (0 to 18446744073709551615; digits, no decimal point or exponent), found \"1.5\""
    );
    let e = single_err(&sim(
        r#"<Control_Request Command="Set_Step_Mode"><Step_Mode>yes</Step_Mode></Control_Request>"#,
    ));
    assert!(
        e.to_string()
            .ends_with("Step_Mode: expected true or false (or 1 or 0; in any case), found \"yes\""),
        "{e}"
    );
}

#[test]
fn unknown_types() {
    let e = single_err(&robot_with_body(
        r#"<Body Type="Cone"><Body_id>2</Body_id></Body>"#,
    ));
    assert_eq!(e.kind(), DecodeErrorKind::UnknownType);
    assert!(e.to_string().ends_with("Structure/Body[3] (Body_id 2): unknown body type \"Cone\" in attribute Type (known: Sphere, Box, Cylinder, WheelCylinder)"), "{e}");

    let e = single_err(&robot_with_body(
        r#"<Joint Type="Hinge"><Joint_id>0</Joint_id></Joint>"#,
    ));
    assert!(e.to_string().ends_with("Structure/Joint[1] (Joint_id 0): unknown joint type \"Hinge\" in attribute Type (known: FixedJoint, WheelJoint)"), "{e}");

    let e = single_err(&sim(
        r#"<Control_Request Command="Create_Entity" Type="Tree"><Data/></Control_Request>"#,
    ));
    assert!(
        e.to_string().ends_with(
            "Control_Request[Create_Entity]: unknown entity type \"Tree\" in attribute Type (known: Robot, Field, Ball, Humanoid)"
        ),
        "{e}"
    );

    let e = single_err(&robot_with_body("<Bdy/>"));
    assert_eq!(e.kind(), DecodeErrorKind::UnexpectedElement);
    assert!(e.to_string().ends_with(
        "Data/Structure: unexpected element <Bdy> in <Structure> (expected <Body> or <Joint>)"
    ));

    // Unknown agent types are kept for the server to judge.
    let r = decode(
        r#"<Message><Agent_Message Command="Register_Agent" Agent_Type="Referee"><Port>1</Port><IP>x</IP><Sync>1</Sync><Broadcast>-1</Broadcast><Key>k</Key></Agent_Message></Message>"#,
    );
    assert_eq!(
        r,
        vec![Ok(Request::Agent(AgentRequest::RegisterAgent {
            agent_type: AgentType::Other("Referee".into()),
            port: 1,
            ip: "x".into(),
            sync: true,
            broadcast: -1.0,
            key: "k".into(),
        }))]
    );
}

#[test]
fn unexpected_roots_and_children_and_empty_messages() {
    let r = decode(&format!("<Foo/>{STEP}"));
    assert_eq!(r.len(), 2);
    let e = r[0].clone().unwrap_err();
    assert_eq!(e.kind(), DecodeErrorKind::UnexpectedElement);
    assert!(
        e.to_string().starts_with("unexpected root element <Foo>"),
        "{e}"
    );
    assert!(r[1].is_ok());

    let e = single_err("<Message><Simulation_Mesage/></Message>");
    assert_eq!(
        e.to_string(),
        "Message[1]: unexpected element <Simulation_Mesage> in <Message> (expected <Agent_Message> or <Simulation_Message>)"
    );
    let e = single_err("<Message/>");
    assert_eq!(e.kind(), DecodeErrorKind::MissingElement);
    assert!(e
        .to_string()
        .starts_with("Message[1]: <Message> holds no request"));
    let e = single_err("<Message><Simulation_Message></Simulation_Message></Message>");
    assert!(e
        .to_string()
        .starts_with("Message[1]/Simulation_Message: <Simulation_Message> holds no request"));
}

#[test]
fn field_joints_are_decoded_for_the_world_to_judge() {
    let xml = sim(
        r#"<Control_Request Command="Create_Entity" Type="Field"><Data><Entity_id>1</Entity_id><Structure>
        <Joint Type="FixedJoint"><Joint_id>0</Joint_id><Body_1>0</Body_1><Body_2>1</Body_2></Joint>
        </Structure></Data></Control_Request>"#,
    );
    let r = decode(&xml);
    assert_eq!(
        r,
        vec![Ok(control(ControlRequest::CreateEntity(
            EntitySpec::Field {
                entity_id: EntityId(1),
                bodies: vec![],
                joints: vec![JointSpec::Fixed {
                    id: 0,
                    body_1: 0,
                    body_2: 1
                }],
            }
        )))]
    );
}

#[test]
fn leniencies() {
    // Whitespace around text and attribute values, 1/0 booleans, '>' before a boolean,
    // Entity_Id spelled either way, comments and an XML declaration, a byte-order mark.
    let xml = "\u{feff}<?xml version=\"1.0\"?><!-- hi --><Message><Simulation_Message>
        <Control_Request Command = \" Set_Fast_Mode \"><Fast_Mode> >>1 </Fast_Mode><Response> TRUE </Response></Control_Request>
        <Entity_Request Command=\"Set_Entity_Position\"><Entity_id> 4 </Entity_id>
          <Position_X> 1e-3 </Position_X><Position_Y>-0</Position_Y><Position_Z>+2</Position_Z></Entity_Request>
        </Simulation_Message></Message>";
    assert_eq!(
        decode(xml),
        vec![
            Ok(Request::Control {
                request: ControlRequest::SetFastMode(true),
                response: Some(true)
            }),
            Ok(Request::Entity {
                request: EntityRequest::SetEntityPosition {
                    entity_id: EntityId(4),
                    position: [0.001, 0.0, 2.0]
                },
                response: None
            }),
        ]
    );
    // A bare Simulation_Message root.
    assert_eq!(
        decode("<Simulation_Message><Control_Request Command=\"Make_Step\"/></Simulation_Message>"),
        vec![Ok(control(ControlRequest::MakeStep))]
    );
}

#[test]
fn custom_command_keys() {
    let mut k = CommandKeys::default();
    assert!(k.set("commandsetstepflagkey", "Step"));
    assert!(k.set("commandrobotcontrolkey", "Motors"));
    k.validate().unwrap();
    let renamed = sim(
        r#"<Control_Request Command="Step"/><Entity_Request Command="Motors"><Entity_Id>1</Entity_Id><Motors/></Entity_Request>"#,
    );
    assert_eq!(
        decode_datagram(renamed.as_bytes(), &k),
        vec![
            Ok(control(ControlRequest::MakeStep)),
            Ok(Request::Entity {
                request: EntityRequest::RobotMotorControl {
                    entity_id: EntityId(1),
                    motors: vec![]
                },
                response: None
            })
        ]
    );
    // The default name is now unknown.
    let r = decode_datagram(STEP.as_bytes(), &k);
    let e = r[0].clone().unwrap_err();
    assert_eq!(e.kind(), DecodeErrorKind::UnknownCommand);
    assert!(
        e.to_string().contains("unknown command \"Make_Step\""),
        "{e}"
    );
    assert!(e.to_string().contains("(known: "), "{e}");
    assert!(e.to_string().contains(", Step, "), "{e}");
    // And the encoder uses the configured names.
    let req = control(ControlRequest::MakeStep);
    let xml = encode_request(&req, &k);
    assert!(xml.contains("Command=\"Step\""), "{xml}");
    assert_eq!(decode_datagram(xml.as_bytes(), &k), vec![Ok(req.clone())]);
    assert_eq!(req.command(&k), "Step");
}

#[test]
fn decode_request_element_forms() {
    let k = keys();
    let roots = tree::parse_elements(&format!(
        "{STEP}<Control_Request Command=\"Make_Step\"/><Message/>"
    ))
    .unwrap();
    assert_eq!(
        decode_request_element(&roots[0], &k),
        Ok(control(ControlRequest::MakeStep))
    );
    assert_eq!(
        decode_request_element(&roots[1], &k),
        Ok(control(ControlRequest::MakeStep))
    );
    assert!(decode_request_element(&roots[2], &k).is_err());
}

#[test]
fn server_messages() {
    let m = decode_server_message(
        b"<Response>Sucessfully added agent with key Test, port 33153 and ip 127.0.0.1</Response>",
    )
    .unwrap();
    assert_eq!(
        m,
        ServerMessage::Response(Response::Text(
            "Sucessfully added agent with key Test, port 33153 and ip 127.0.0.1".into()
        ))
    );
    assert_eq!(
        encode_response(&Response::Text("a < b & c".into())),
        "<Response>a &lt; b &amp; c</Response>"
    );
    assert_eq!(
        encode_response(&Response::Text(String::new())),
        "<Response></Response>"
    );
    assert_eq!(
        encode_response(&Response::AgentInformation {
            key: "Test2".into(),
            port: 33154,
            ip: "127.0.0.1".into()
        }),
        "<Response><Agent_Information><Key>Test2</Key><Port>33154</Port><IP>127.0.0.1</IP></Agent_Information></Response>"
    );
    let e = decode_server_message(b"<Response/><Response/>").unwrap_err();
    assert!(e.to_string().contains("expected one root element"), "{e}");
    let e = decode_server_message(
        b"<Broadcast><Iteration>1</Iteration><Part>3</Part><Parts>2</Parts></Broadcast>",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Broadcast: Part: must be between 1 and Parts (2), found 3"
    );
    let e = decode_server_message(b"<Broadcast><Iteration>1</Iteration><Part>1</Part></Broadcast>")
        .unwrap_err();
    assert!(e.to_string().contains("together"), "{e}");
    let m = decode_server_message(
        b"<Broadcast><Iteration>1</Iteration><Part>2</Part><Parts>2</Parts><Extra/></Broadcast>",
    )
    .unwrap();
    assert_eq!(
        m,
        ServerMessage::Broadcast(Broadcast {
            iteration: 1,
            part: Some((2, 2)),
            bodies: vec![],
            entities: vec![],
        })
    );
}

#[test]
fn an_element_a_request_does_not_read_is_an_error_not_ignored() {
    // A misspelt `<response>` ran the request and answered nothing; `<Rotation_Z>` in
    // Set_Entity_Position was dropped; of two `<Timestep>`s the first was used; of two motors
    // on one joint the last.
    let position = |extra: &str| {
        sim(&format!(
            r#"<Entity_Request Command="Set_Entity_Position"><Entity_Id>3</Entity_Id><Position_X>0</Position_X><Position_Y>-0.3</Position_Y><Position_Z>0.1</Position_Z>{extra}</Entity_Request>"#
        ))
    };
    for (xml, says) in [
        (
            position("<response>true</response>"),
            "unknown element <response> (did you mean <Response>? names are case-sensitive)",
        ),
        (
            position("<Respones>true</Respones>"),
            "unknown element <Respones> (this request reads <Entity_Id>, <Position_X>, <Position_Y>, <Position_Z>, <Response>)",
        ),
        (
            position("<Rotation_Z>0</Rotation_Z>"),
            "unknown element <Rotation_Z>",
        ),
        (
            sim(r#"<Control_Request Command="Set_Timestep"><Timestep>0.01</Timestep><Timestep>0.03</Timestep></Control_Request>"#),
            "<Timestep> given 2 times, read 1",
        ),
        (
            sim(r#"<Entity_Request Command="Robot_Motor_Control"><Entity_Id>3</Entity_Id><Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>5</Value></Motor><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>-5</Value></Motor></Motors></Entity_Request>"#),
            "wheel joint 0 is given twice (one <Motor> a joint)",
        ),
    ] {
        let e = single_err(&xml).to_string();
        assert!(e.contains(says), "{e}");
    }
    // Written right, each runs.
    assert!(decode(&position("<Response>true</Response>"))[0].is_ok());
}

#[test]
fn an_element_a_request_does_not_read_is_an_error_at_every_depth() {
    // A misspelt optional child fell back to its default (a chassis of 1 kg instead of 1.2,
    // a wheel of 10 N·m instead of 0.001); an extra or repeated one was dropped.
    let wheel_joint = |extra: &str| {
        format!(
            r#"<Joint Type="WheelJoint"><Joint_id>0</Joint_id><Body_1>0</Body_1><Body_2>1</Body_2><Axis_1_X>0</Axis_1_X><Axis_1_Y>0</Axis_1_Y><Axis_1_Z>1</Axis_1_Z><Axis_2_X>0</Axis_2_X><Axis_2_Y>1</Axis_2_Y><Axis_2_Z>0</Axis_2_Z>{extra}</Joint>"#
        )
    };
    let ball = |extra: &str| {
        sim(&format!(
            r#"<Control_Request Command="Create_Entity" Type="Ball"><Data><Entity_id>8</Entity_id><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0.1</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Radius>0.03</Radius>{extra}</Data></Control_Request>"#
        ))
    };
    let materials = |extra: &str| {
        sim(&format!(
            r#"<Control_Request Command="Register_Materials_Interactions"><Material><Material_Id>1</Material_Id><Material_Name>felt</Material_Name></Material><Interaction><Material_1>1</Material_1><Material_2>1</Material_2><Hardness>1</Hardness><Bounciness>0.2</Bounciness><Slip1>0</Slip1><Slip2>0</Slip2><Friction>1</Friction>{extra}</Interaction></Control_Request>"#
        ))
    };
    let prefix = "Message[1]/Simulation_Message/Control_Request[Create_Entity]/Data";
    for (xml, says) in [
        (
            robot_with_body(r#"<Body Type="Sphere"><Body_id>2</Body_id><Mas>1.2</Mas><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Radius>1</Radius></Body>"#),
            format!("{prefix}/Structure/Body[3] (Body_id 2): unknown element <Mas> (this <Body> reads <Body_id>, <Position_X>, <Position_Y>, <Position_Z>, <Rotation_X>, <Rotation_Y>, <Rotation_Z>, <Radius>, <Material>, <Mass>)"),
        ),
        (
            robot_with_body(&wheel_joint("<Maximum_Torgue>0.001</Maximum_Torgue>")),
            format!("{prefix}/Structure/Joint[1] (Joint_id 0): unknown element <Maximum_Torgue> (this <Joint> reads <Joint_id>, <Body_1>, <Body_2>, <Axis_1_X>, <Axis_1_Y>, <Axis_1_Z>, <Axis_2_X>, <Axis_2_Y>, <Axis_2_Z>, <Hardness>, <Bounciness>, <Maximum_Torque>)"),
        ),
        (
            robot_with_body(&wheel_joint("<maximum_torque>0.001</maximum_torque>")),
            format!("{prefix}/Structure/Joint[1] (Joint_id 0): unknown element <maximum_torque> (did you mean <Maximum_Torque>? names are case-sensitive)"),
        ),
        (
            robot_with_body(&wheel_joint("<Hardness>1</Hardness><Hardness>2</Hardness>")),
            format!("{prefix}/Structure/Joint[1] (Joint_id 0): <Hardness> given 2 times, read 1"),
        ),
        (
            ball("<Radius>0.5</Radius>"),
            format!("{prefix}: <Radius> given 2 times, read 1"),
        ),
        (
            ball("<Velocity_X>3</Velocity_X>"),
            format!("{prefix}: unknown element <Velocity_X> (this <Data> reads <Entity_id>, <Position_X>, <Position_Y>, <Position_Z>, <Rotation_X>, <Rotation_Y>, <Rotation_Z>, <Radius>, <Material>, <Mass>)"),
        ),
        (
            ball("<Entity_Id>8</Entity_Id>"),
            format!("{prefix}: <Entity_id> given 2 times, read 1"),
        ),
        (
            materials("<Restitution>0.9</Restitution>"),
            "Message[1]/Simulation_Message/Control_Request[Register_Materials_Interactions]/Interaction[1]: unknown element <Restitution> (this <Interaction> reads <Material_1>, <Material_2>, <Hardness>, <Bounciness>, <Slip1>, <Slip2>, <Friction>)".to_string(),
        ),
        (
            sim(r#"<Entity_Request Command="Robot_Motor_Control"><Entity_Id>3</Entity_Id><Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>5</Value></Motor><Motor><Wheel_Joint_Id>1</Wheel_Joint_Id><Value>5</Value><Velocity>9</Velocity></Motor></Motors></Entity_Request>"#),
            "Message[1]/Simulation_Message/Entity_Request[Robot_Motor_Control]/Motors/Motor[2]: unknown element <Velocity> (this <Motor> reads <Wheel_Joint_Id>, <Value>)".to_string(),
        ),
        (
            ball("").replace("<Radius>0.03</Radius>", "<Radius>0.03<Unit>m</Unit></Radius>"),
            format!("{prefix}/Radius: unknown element <Unit> (this <Radius> holds no element)"),
        ),
    ] {
        let e = single_err(&xml);
        assert_eq!(e.kind(), DecodeErrorKind::UnexpectedElement, "{e}");
        assert_eq!(e.to_string(), says);
    }
    // Written right, each is read; the manual's other spelling of Entity_id too.
    for xml in [
        robot_with_body(&wheel_joint("<Maximum_Torque>0.001</Maximum_Torque>")),
        ball("<Mass>0.05</Mass>"),
        ball("").replace("Entity_id>", "Entity_Id>"),
        materials(""),
    ] {
        assert!(decode(&xml)[0].is_ok(), "{xml}");
    }
    // The element decoders other crates use (save files) check the same.
    let [body] = &tree::parse_elements(r#"<Body Type="Sphere"><Body_id>0</Body_id><Mas>1</Mas><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Radius>1</Radius></Body>"#).unwrap()[..] else {
        panic!("one element")
    };
    assert!(decode_body_element(body)
        .unwrap_err()
        .to_string()
        .contains("unknown element <Mas>"));
}

#[test]
fn a_misspelt_required_element_is_named_beside_the_one_missing() {
    let e = single_err(&sim(
        r#"<Entity_Request Command="Robot_Motor_Control"><Entity_Id>3</Entity_Id><Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Valeu>1</Valeu></Motor></Motors></Entity_Request>"#,
    ));
    let text = e.to_string();
    assert!(
        text.contains("missing required child <Value>; found <Valeu>: is it misspelt?"),
        "{text}"
    );
    assert!(text.contains("Motor"), "where it is: {text}");
    // In another case, too; and an unrelated element is not named.
    let e = single_err(&sim(
        r#"<Control_Request Command="Set_Timestep"><timestep>0.01</timestep></Control_Request>"#,
    ));
    assert!(e.to_string().contains("found <timestep>"), "{e}");
    let e = single_err(&sim(
        r#"<Control_Request Command="Set_Timestep"><Gravity>0.01</Gravity></Control_Request>"#,
    ));
    assert!(!e.to_string().contains("found"), "{e}");
}

#[test]
fn a_datagram_declaring_another_encoding_than_utf8_is_refused() {
    let body = sim(r#"<Control_Request Command="Make_Step"/>"#);
    let e = single_err(&format!(
        "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>{body}"
    ));
    assert_eq!(e.kind(), DecodeErrorKind::NotUtf8);
    assert!(
        e.to_string()
            .contains("declares encoding \"ISO-8859-1\", but SimRob messages are UTF-8 only"),
        "{e}"
    );
    for decl in [
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>",
        "<?xml version='1.0' encoding='UTF8'?>",
        "<?xml version=\"1.0\"?>",
    ] {
        assert!(decode(&format!("{decl}{body}"))[0].is_ok(), "{decl}");
    }
}
