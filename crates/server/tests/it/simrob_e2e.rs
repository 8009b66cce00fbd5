//! End-to-end over real UDP sockets: the seed's messages as they are, confirmations,
//! broadcasts, lockstep, step mode, Save/Load and bad input.

use crate::simrob_common;

use std::time::{Duration, Instant};

use simrob_common::*;
use simrob_protocol::{Broadcast, EntityId, EntityInfoKind, Response, ServerMessage};

const SHORT: Duration = Duration::from_millis(300);

fn broadcasts(messages: &[ServerMessage]) -> Vec<&Broadcast> {
    messages
        .iter()
        .filter_map(|m| match m {
            ServerMessage::Broadcast(b) => Some(b),
            _ => None,
        })
        .collect()
}

fn next_broadcast(peer: &Peer) -> Broadcast {
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        if let Some(ServerMessage::Broadcast(b)) = peer.recv(Duration::from_secs(1)) {
            return b;
        }
    }
    panic!("no broadcast within 5 s");
}

/// Saves over the wire and returns the file's contents.
fn saved(server: &TestServer, peer: &Peer, name: &str) -> String {
    peer.send_str(&control(&format!(
        "<Control_Request Command=\"Save\"><File>{name}</File><Response>true</Response></Control_Request>"
    )));
    let r = peer.response();
    assert!(r.starts_with("Save: simulation saved to"), "{r}");
    std::fs::read_to_string(server.save_dir.join(name)).expect("saved file")
}

#[test]
fn the_seed_register_and_info_examples_work_as_they_are() {
    let server = TestServer::start("register", &[], |_| {});
    // The seed's Register_Agent names port 33153; the agent must own it to hear the answer.
    let test = match std::net::UdpSocket::bind("127.0.0.1:33153") {
        Ok(s) => s,
        Err(_) => return, // the port is taken on this machine; the other tests cover it
    };
    test.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    test.send_to(&fixture("2_1_register_agent.xml"), server.addr)
        .unwrap();
    let mut buf = [0u8; 4096];
    let (n, _) = test.recv_from(&mut buf).unwrap();
    assert_eq!(
        std::str::from_utf8(&buf[..n]).unwrap(),
        "<Response>Sucessfully added agent with key Test, port 33153 and ip 127.0.0.1</Response>"
    );
    // A second agent Test2; Info_Request (seed §2.2) is answered to the requester only.
    let other = Peer::new(server.addr);
    let text = other.register("Test2", false, -1.0);
    assert_eq!(
        text,
        format!(
            "Sucessfully added agent with key Test2, port {} and ip 127.0.0.1",
            other.port()
        )
    );
    // Registration confirmations go to every agent: Test hears Test2's.
    let (n, _) = test.recv_from(&mut buf).unwrap();
    assert!(std::str::from_utf8(&buf[..n])
        .unwrap()
        .contains("key Test2"));
    other.send(&fixture("2_2_info_request.xml"));
    let (n, _) = test.recv_from(&mut buf).unwrap();
    match simrob_protocol::decode_server_message(&buf[..n]).unwrap() {
        ServerMessage::Response(Response::AgentInformation { key, port, ip }) => {
            assert_eq!(
                (key.as_str(), port, ip.as_str()),
                ("Test2", other.port(), "127.0.0.1")
            );
        }
        m => panic!("{m:?}"),
    }
    assert!(
        other.recv(SHORT).is_none(),
        "Info_Request answered to the requester only"
    );
}

#[test]
fn every_seed_control_example_is_confirmed() {
    let server = TestServer::start("seed", &[], |c| c.default_response_request = true);
    let peer = Peer::new(server.addr);
    peer.register("commander", false, -1.0);
    for (fixture_name, expected_start) in [
        (
            "2_3_register_materials_interactions.xml",
            "Register_Materials_Interactions: ",
        ),
        (
            "2_4_2_create_field.xml",
            "Create_Entity: Created Field entity 7",
        ),
        (
            "2_4_1_create_robot.xml",
            "Create_Entity: Created Robot entity 3",
        ),
        (
            "2_4_3_create_ball.xml",
            "Create_Entity: Created Ball entity 8",
        ),
        ("2_6_set_step_mode.xml", "Set_Step_Mode: "),
        ("2_5_initialize_simulation.xml", "Initialize_Simulation: "),
        ("2_7_make_step.xml", "Make_Step: "),
        ("2_8_set_autoadjust_mode.xml", "Set_AutoAdjust_Mode: "),
        ("2_11_set_sync_wait.xml", "Set_Sync_Wait: "),
        ("2_12_set_timestep.xml", "Set_Timestep: "),
        ("2_13_set_world_gravity.xml", "Set_World_Gravity: "),
        ("2_14_set_world_hardness.xml", "Set_World_Hardness: "),
        ("2_15_set_world_bounciness.xml", "Set_World_Bounciness: "),
        ("2_18_set_fast_mode.xml", "Set_Fast_Mode: "),
        ("4_response_set_fast_mode.xml", "Set_Fast_Mode: "),
        (
            "2_19_set_steps_per_iteration.xml",
            "Set_Steps_Per_Iteration: ",
        ),
        ("2_9_set_sync_mode.xml", "Set_Sync_Mode: "),
    ] {
        peer.send(&fixture(fixture_name));
        let r = peer.response();
        assert!(r.starts_with(expected_start), "{fixture_name}: {r}");
    }
    // §3's examples act on entity 1, which this world does not have: a clear error each.
    for name in ["3_1_set_entity_position.xml", "3_2_robot_motor_control.xml"] {
        peer.send(&fixture(name));
        let r = peer.response();
        assert!(
            r.starts_with("Error: ") && r.contains("entity 1 does not exist"),
            "{name}: {r}"
        );
    }
    // §2.16/§2.17 name /home/current_user/…, outside the save directory: refused.
    for name in ["2_16_save.xml", "2_17_load.xml"] {
        peer.send(&fixture(name));
        let r = peer.response();
        assert!(
            r.starts_with("Error: ") && r.contains("outside the save directory"),
            "{name}: {r}"
        );
    }
    // Synchronize (§2.10) for an agent that does not exist.
    peer.send(&fixture("2_10_synchronize.xml"));
    assert!(peer.response().contains("\"Test\" is not registered"));
}

#[test]
fn broadcasts_carry_the_sumbot_scene() {
    let server = TestServer::start("broadcast", &["soccer.xml"], |_| {});
    let peer = Peer::new(server.addr);
    peer.register("watcher", false, 0.5);
    peer.send_str(&control(
        "<Control_Request Command=\"Initialize_Simulation\"/>",
    ));
    let b = next_broadcast(&peer);
    assert_eq!(b.bodies.len(), 13 + 3 + 1);
    assert_eq!(
        b.bodies
            .iter()
            .filter(|x| x.entity_id == EntityId(7))
            .count(),
        13
    );
    let wheel = b
        .bodies
        .iter()
        .find(|x| x.entity_id == EntityId(3) && x.id == 2)
        .unwrap();
    assert_eq!(
        wheel.shape,
        simrob_protocol::Shape::WheelCylinder {
            radius: 0.023,
            length: 0.04
        }
    );
    let kinds: Vec<_> = b.entities.iter().map(|e| (e.kind, e.entity_id)).collect();
    assert_eq!(
        kinds,
        vec![
            (EntityInfoKind::Robot, EntityId(3)),
            (EntityInfoKind::Ball, EntityId(8))
        ]
    );
    // The robot's entry is its reference body (0, the chassis).
    let chassis = b
        .bodies
        .iter()
        .find(|x| x.entity_id == EntityId(3) && x.id == 0)
        .unwrap();
    assert_eq!(b.entities[0].position, chassis.position);
}

#[test]
fn broadcast_intervals_are_in_simulated_time() {
    let server = TestServer::start("interval", &["soccer.xml"], |c| c.real_time_factor = 2.0);
    let every_tenth = Peer::new(server.addr);
    every_tenth.register("every_0.1", false, 0.1);
    let never = Peer::new(server.addr);
    never.register("never", false, -1.0);
    every_tenth.drain(Duration::from_millis(50));
    every_tenth.send_str(&control(
        "<Control_Request Command=\"Initialize_Simulation\"/>",
    ));
    let mut iterations = Vec::new();
    while iterations.len() < 6 {
        iterations.push(next_broadcast(&every_tenth).iteration);
    }
    // dt 0.01: one broadcast every 10 iterations (0.1 s of simulated time) after the first.
    for w in iterations[1..].windows(2) {
        assert_eq!(w[1] - w[0], 10, "{iterations:?}");
    }
    assert!(
        broadcasts(&never.drain(SHORT)).is_empty(),
        "Broadcast -1 means never"
    );
}

#[test]
fn make_step_advances_exactly_one_iteration() {
    let server = TestServer::start("step", &["soccer.xml"], |_| {});
    let peer = Peer::new(server.addr);
    peer.register("stepper", false, 0.0);
    peer.send_str(&control(
        "<Control_Request Command=\"Set_Step_Mode\"><Step_Mode>true</Step_Mode></Control_Request>\
         <Control_Request Command=\"Initialize_Simulation\"/>",
    ));
    assert!(
        broadcasts(&peer.drain(SHORT)).is_empty(),
        "paused: nothing runs"
    );
    for expected in 1..=3u64 {
        peer.send_str(&control("<Control_Request Command=\"Make_Step\"/>"));
        let got = peer.drain(SHORT);
        let its: Vec<u64> = broadcasts(&got).iter().map(|b| b.iteration).collect();
        assert_eq!(its, vec![expected]);
    }
}

#[test]
fn a_late_synchronous_agent_holds_the_server_and_a_silent_one_is_skipped() {
    let server = TestServer::start("sync", &["soccer.xml"], |c| c.sync_wait = 5.0);
    let agent = Peer::new(server.addr);
    agent.register("sync", true, 0.0);
    agent.send_str(&control(
        "<Control_Request Command=\"Set_Sync_Mode\"><Sync_Mode>true</Sync_Mode></Control_Request>\
         <Control_Request Command=\"Initialize_Simulation\"/>",
    ));
    // Late: answer each broadcast only after a pause; the server must not run ahead.
    let mut last = 0;
    for _ in 0..3 {
        let b = next_broadcast(&agent);
        assert_eq!(
            b.iteration,
            last + 1,
            "the server ran ahead of its synchronous agent"
        );
        assert!(broadcasts(&agent.drain(Duration::from_millis(150))).is_empty());
        agent.send_str(&format!(
            "<Message><Agent_Message Command=\"Synchronize\"><Key>sync</Key><Iteration>{}</Iteration></Agent_Message></Message>",
            b.iteration
        ));
        last = b.iteration;
    }
    // Silent: with Sync_Wait 0.2 s the server goes on without it, about 5 iterations/s.
    agent.send_str(&control(
        "<Control_Request Command=\"Set_Sync_Wait\"><Sync_Wait>0.2</Sync_Wait></Control_Request>",
    ));
    // Three more iterations arrive although the agent never answers (how long the server
    // waits each time is the session's lockstep test, driven with made-up instants).
    let mut seen = vec![last];
    while seen.len() < 4 {
        let b = next_broadcast(&agent);
        assert!(
            b.iteration > *seen.last().unwrap(),
            "iterations go forward: {seen:?} then {}",
            b.iteration
        );
        seen.push(b.iteration);
    }
}

#[test]
fn save_then_load_over_the_wire_restores_the_world() {
    let server = TestServer::start("saveload", &["soccer.xml"], |_| {});
    let peer = Peer::new(server.addr);
    // Broadcast every iteration: the steps are seen arriving, not waited for.
    peer.register("saver", false, 0.0);
    peer.send_str(&control(
        "<Control_Request Command=\"Set_Step_Mode\"><Step_Mode>true</Step_Mode></Control_Request>\
         <Control_Request Command=\"Initialize_Simulation\"/>\
         <Entity_Request Command=\"Robot_Motor_Control\"><Entity_Id>3</Entity_Id><Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>3</Value></Motor><Motor><Wheel_Joint_Id>1</Wheel_Joint_Id><Value>-2</Value></Motor></Motors></Entity_Request>",
    ));
    let done = std::cell::Cell::new(0u64);
    // A few steps at a time: each broadcast of the soccer scene is about 12 KB, and a burst
    // of 30 could overflow the test socket's receive buffer while this thread is not running.
    let step = |n: u64| {
        for _ in 0..n / 5 {
            for _ in 0..5 {
                peer.send_str(&control("<Control_Request Command=\"Make_Step\"/>"));
            }
            done.set(done.get() + 5);
            while next_broadcast(&peer).iteration < done.get() {}
        }
    };
    step(20);
    let at_20 = saved(&server, &peer, "run1.xml");
    step(30);
    let at_50 = saved(&server, &peer, "later.xml");
    assert_ne!(at_20, at_50);
    peer.send_str(&control(
        "<Control_Request Command=\"Load\"><File>run1.xml</File><Response>true</Response></Control_Request>",
    ));
    let r = peer.response();
    assert!(r.contains("loaded from run1.xml at iteration 20"), "{r}");
    assert_eq!(saved(&server, &peer, "again.xml"), at_20);
}

#[test]
fn bad_input_is_answered_and_the_world_stays_as_it_was() {
    let server = TestServer::start("bad", &["soccer.xml"], |_| {});
    let peer = Peer::new(server.addr);
    peer.register("tester", false, -1.0);
    std::fs::write(
        server.save_dir.join("corrupt.xml"),
        "<SimRob_Simulation Version=\"1\"><Parameters>",
    )
    .unwrap();
    let good = std::fs::read_to_string(repo_file("scenarios/soccer.xml")).unwrap();
    let before = saved(&server, &peer, "before.xml");
    let mut truncated_save = before.clone();
    truncated_save.truncate(before.len() / 3);
    std::fs::write(server.save_dir.join("truncated.xml"), truncated_save).unwrap();
    // A save file whose Sync_Wait would hold every iteration for ever.
    assert!(before.contains("<Sync_Wait>0.1</Sync_Wait>"), "{before}");
    std::fs::write(
        server.save_dir.join("forever.xml"),
        before.replace("<Sync_Wait>0.1</Sync_Wait>", "<Sync_Wait>1e300</Sync_Wait>"),
    )
    .unwrap();
    let junk: Vec<u8> = (0..65507u32).map(|i| (i * 7919 % 251) as u8).collect();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (vec![0xff, 0x00, 0x13, 0x37, 0xfe], "UTF-8"),
        (good.as_bytes()[..good.len() / 2].to_vec(), "Error"),
        (junk, "maximumdatagramsize"),
        (b"<Message><Simulation_Message><Control_Request Command=\"Fly\"/></Simulation_Message></Message>".to_vec(), "unknown command"),
        (control("<Entity_Request Command=\"Set_Entity_Position\"><Entity_Id>42</Entity_Id><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z></Entity_Request>").into_bytes(), "entity 42 does not exist"),
        (control("<Control_Request Command=\"Set_World_Gravity\"><Gravity>NaN</Gravity></Control_Request>").into_bytes(), "NaN"),
        (control("<Control_Request Command=\"Set_Timestep\"><Timestep>inf</Timestep></Control_Request>").into_bytes(), "infinity"),
        (control("<Entity_Request Command=\"Robot_Motor_Control\"><Entity_Id>3</Entity_Id><Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>-inf</Value></Motor></Motors></Entity_Request>").into_bytes(), "finite"),
        (control("<Control_Request Command=\"Create_Entity\" Type=\"Robot\"><Data><Entity_id>30</Entity_id><Structure><Body Type=\"Box\"><Body_id>0</Body_id><Mass>1</Mass><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>1</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Size_X>0.1</Size_X><Size_Y>0.1</Size_Y><Size_Z>0.1</Size_Z></Body><Joint Type=\"FixedJoint\"><Joint_id>0</Joint_id><Body_1>0</Body_1><Body_2>5</Body_2></Joint></Structure><Motors/><Reference_Body>0</Reference_Body></Data></Control_Request>").into_bytes(), "body 5 does not exist"),
        (control("<Control_Request Command=\"Create_Entity\" Type=\"Field\"><Data><Entity_id>31</Entity_id><Structure><Body Type=\"Box\"><Body_id>0</Body_id><Mass>-1</Mass><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Size_X>1</Size_X><Size_Y>1</Size_Y><Size_Z>0.1</Size_Z></Body><Body Type=\"Box\"><Body_id>1</Body_id><Mass>-1</Mass><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>1</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Size_X>1</Size_X><Size_Y>1</Size_Y><Size_Z>0.1</Size_Z></Body><Joint Type=\"FixedJoint\"><Joint_id>0</Joint_id><Body_1>0</Body_1><Body_2>1</Body_2></Joint></Structure></Data></Control_Request>").into_bytes(), "a field cannot have joints"),
        (control("<Control_Request Command=\"Load\"><File>corrupt.xml</File></Control_Request>").into_bytes(), "cannot load simulation"),
        (control("<Control_Request Command=\"Load\"><File>truncated.xml</File></Control_Request>").into_bytes(), "cannot load simulation"),
        (control("<Control_Request Command=\"Load\"><File>missing.xml</File></Control_Request>").into_bytes(), "missing.xml"),
        (control("<Control_Request Command=\"Load\"><File>forever.xml</File></Control_Request>").into_bytes(), "maxsyncwait"),
        (control("<Control_Request Command=\"Set_Sync_Wait\"><Sync_Wait>1e300</Sync_Wait></Control_Request>").into_bytes(), "maxsyncwait"),
        (control("<Control_Request Command=\"Set_Sync_Wait\"><Sync_Wait>10.5</Sync_Wait></Control_Request>").into_bytes(), "maxsyncwait"),
        (control("<Control_Request Command=\"Set_Sync_Wait\"><Sync_Wait>-1</Sync_Wait></Control_Request>").into_bytes(), "(0 … 10 s, configuration key maxsyncwait)"),
        (control("<Control_Request Command=\"Save\"><File>../escape.xml</File></Control_Request>").into_bytes(), "outside the save directory"),
        (control("<Control_Request Command=\"Save\"><File>/tmp/escape.xml</File></Control_Request>").into_bytes(), "outside the save directory"),
        (register_xml("spoof", "RobotController", "10.1.2.3", 4000, false, 0.1).into_bytes(), "may only register its own address"),
        (register_xml("odd", "Toaster", "127.0.0.1", 4000, false, 0.1).into_bytes(), "unknown agent type"),
        (b"".to_vec(), "empty"),
    ];
    for (bytes, word) in &cases {
        peer.send(bytes);
        let r = peer.response();
        assert!(r.starts_with("Error: "), "not an error: {r}");
        assert!(
            r.to_lowercase().contains(&word.to_lowercase()),
            "{r:?} does not mention {word:?}"
        );
    }
    assert!(!std::path::Path::new("/tmp/escape.xml").exists());
    assert!(!server.save_dir.join("../escape.xml").exists());
    // Still serving, world untouched.
    assert_eq!(saved(&server, &peer, "after.xml"), before);
}

#[test]
fn a_burst_of_requests_is_answered_whole_in_order_and_byte_for_byte() {
    // The server reads and answers up to 64 datagrams per system call: a burst of several
    // batches must come back as if each request had been answered on its own.
    let server = TestServer::start("burst", &[], |_| {});
    let a = Peer::new(server.addr);
    let b = Peer::new(server.addr);
    let c = Peer::new(server.addr);
    a.register("A", false, -1.0);
    b.register("B", false, -1.0);
    c.register("C", false, -1.0);
    // A heard B's and C's confirmations, B heard C's.
    for peer in [&a, &b] {
        while let Some(m) = peer.recv(SHORT) {
            assert!(
                matches!(m, ServerMessage::Response(Response::Text(_))),
                "{m:?}"
            );
        }
    }
    let info = |requested: &str| {
        format!(
            "<Message><Agent_Message Command=\"Info_Request\"><Requester>A</Requester><Requested>{requested}</Requested></Agent_Message></Message>"
        )
    };
    let answer = |key: &str, port: u16| {
        simrob_protocol::encode_response(&Response::AgentInformation {
            key: key.into(),
            port,
            ip: "127.0.0.1".into(),
        })
        .into_bytes()
    };
    let mut expected = Vec::new();
    let requests: Vec<String> = (0..150)
        .map(|i| match i % 3 {
            0 => {
                expected.push(answer("B", b.port()));
                info("B")
            }
            1 => {
                expected.push(answer("C", c.port()));
                info("C")
            }
            _ => {
                expected.push(
                    simrob_protocol::encode_response(&Response::Text(
                        "Error: Info_Request: agent \"Nobody\" is not registered".into(),
                    ))
                    .into_bytes(),
                );
                info("Nobody")
            }
        })
        .collect();
    let all: Vec<u8> = requests.concat().into_bytes();
    for r in &requests {
        a.send_str(r);
    }
    a.socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = vec![0u8; 70000];
    let mut got = Vec::new();
    while got.len() < expected.len() {
        let (n, _) = a
            .socket
            .recv_from(&mut buf)
            .expect("every request answered within 10 s");
        got.push(buf[..n].to_vec());
    }
    for (i, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(
            String::from_utf8_lossy(g),
            String::from_utf8_lossy(e),
            "answer {i}"
        );
    }
    assert!(all.len() > 64, "more than one batch");
    assert!(a.recv(SHORT).is_none(), "nothing more");
    assert!(b.recv(SHORT).is_none() && c.recv(SHORT).is_none());
}

#[test]
fn a_configuration_beyond_the_servers_own_limits_is_refused_naming_the_keys() {
    let dir = std::env::temp_dir().join(format!("simrob-e2e-config-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let read = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        simrob_server::files::read_config(&path).map_err(|e| e.to_string())
    };
    for (text, keys) in [
        // One synchronous agent that never synchronizes would stop the world for good.
        ("syncwait 1e300\n", &["syncwait", "maxsyncwait"][..]),
        ("syncwait 10.5\n", &["syncwait", "maxsyncwait"]),
        ("maxsyncwait 1\nsyncwait 2\n", &["syncwait", "maxsyncwait"]),
        // The limits agents are held to hold for the file too.
        ("defaultgravity 1e300\n", &["defaultgravity", "maxgravity"]),
        (
            "maxgravity 5\ndefaultgravity -9.8\n",
            &["defaultgravity", "maxgravity"],
        ),
        (
            "mintimestep 2\nmaxtimestep 1\n",
            &["mintimestep", "maxtimestep"],
        ),
        (
            "defaultstepsize 0.5\nmaxtimestep 0.1\n",
            &["defaultstepsize", "maxtimestep"],
        ),
        ("mintimestep 0.05\n", &["defaultstepsize", "mintimestep"]),
    ] {
        for (name, body) in [
            ("c.data", text.to_string()),
            ("c.toml", text.replace(' ', " = ")),
        ] {
            let e = read(name, &body).expect_err(&body);
            assert!(
                e.contains(name) && keys.iter().all(|k| e.contains(k)),
                "{body:?}: {e}"
            );
            // Numbers are shown short, not in 300 digits.
            assert!(e.len() < 300, "{e}");
        }
    }
    let e = read("c.data", "syncwait 1e300\n").unwrap_err();
    assert!(e.contains("1e300"), "{e}");
    // Within the limits, in any order: accepted as before.
    let c = read("ok.data", "syncwait 20\nmaxsyncwait 30\nmaxgravity 20\n").unwrap();
    assert_eq!((c.sync_wait, c.limits.max_sync_wait), (20.0, 30.0));
    let c = read("ok.toml", "defaultgravity = -1.6\nmaxtimestep = 0.01\n").unwrap();
    assert_eq!(c.world.default_gravity, -1.6);
    assert_eq!(c.limits.max_sync_wait, 10.0);
    std::fs::remove_dir_all(&dir).unwrap();
}
