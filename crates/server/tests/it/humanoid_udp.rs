//! Humanoid soccer over real UDP: a `simrob serve`-equivalent server with the KidSize field,
//! humanoids created and driven with SimRob messages, a `Humanoid_Brain` agent in lockstep
//! (sync mode) receiving its camera, and a `PosesOnly` agent watching the world. Time only
//! advances when both agents have synchronized: no wall-clock timing anywhere.

use crate::simrob_common;

use std::time::Duration;

use simrob_common::{control, register_xml, Peer, TestServer};
use simrob_protocol::humanoid::{decode_brain_broadcast, BrainBroadcast};
use simrob_protocol::{Broadcast, EntityId, EntityInfoKind, ServerMessage};

const ROBOT: u32 = 21;
const BALL: u32 = 2;
const WAIT: Duration = Duration::from_secs(10);

struct Rig {
    _server: TestServer,
    brain: Peer,
    poses: Peer,
    cmd: Peer,
    last: Option<(BrainBroadcast, Broadcast)>,
}

fn humanoid_xml(id: u32, x: f64, y: f64, heading: f64, profile: &str) -> String {
    control(&format!(
        "<Control_Request Command=\"Create_Entity\" Type=\"Humanoid\"><Data><Entity_id>{id}</Entity_id><Team>cyan</Team><Position_X>{x}</Position_X><Position_Y>{y}</Position_Y><Heading>{heading}</Heading><Profile>{profile}</Profile></Data><Response>true</Response></Control_Request>"
    ))
}

fn action_xml(id: u32, action: &str) -> String {
    control(&format!(
        "<Entity_Request Command=\"Humanoid_Action\"><Entity_Id>{id}</Entity_Id>{action}<Response>true</Response></Entity_Request>"
    ))
}

fn position_xml(id: u32, x: f64, y: f64, z: f64) -> String {
    control(&format!(
        "<Entity_Request Command=\"Set_Entity_Position\"><Entity_Id>{id}</Entity_Id><Position_X>{x}</Position_X><Position_Y>{y}</Position_Y><Position_Z>{z}</Position_Z><Response>true</Response></Entity_Request>"
    ))
}

impl Rig {
    /// The KidSize scene, humanoid `ROBOT` at (x, y, heading) with motion `profile`, a brain of
    /// `brain_type` and a poses watcher, both synchronous; `steps` physics steps an iteration.
    fn start(tag: &str, x: f64, y: f64, heading: f64, brain_type: &str, steps: u32) -> Rig {
        let server = TestServer::start(tag, &["soccer/kidsize.xml"], |_| {});
        let cmd = Peer::new(server.addr);
        let mut rig = Rig {
            brain: Peer::new(server.addr),
            poses: Peer::new(server.addr),
            cmd,
            _server: server,
            last: None,
        };
        rig.request(&humanoid_xml(ROBOT, x, y, heading, "ideal"));
        rig.brain.send_str(&register_xml(
            &ROBOT.to_string(),
            brain_type,
            "127.0.0.1",
            rig.brain.port(),
            true,
            0.0,
        ));
        rig.poses.send_str(&register_xml(
            "watcher",
            "PosesOnly",
            "127.0.0.1",
            rig.poses.port(),
            true,
            0.0,
        ));
        for xml in [
            format!("<Control_Request Command=\"Set_Steps_Per_Iteration\"><Steps_Per_Iteration>{steps}</Steps_Per_Iteration><Response>true</Response></Control_Request>"),
            "<Control_Request Command=\"Set_Sync_Mode\"><Sync_Mode>true</Sync_Mode><Response>true</Response></Control_Request>".to_string(),
        ] {
            rig.request(&control(&xml));
        }
        rig.request(&control(
            "<Control_Request Command=\"Initialize_Simulation\"><Response>true</Response></Control_Request>",
        ));
        rig.step();
        rig
    }

    /// Sends a request and returns its answer (confirmation or error) to the sender.
    fn request(&self, xml: &str) -> String {
        self.cmd.send_str(xml);
        loop {
            match self.cmd.recv(WAIT) {
                Some(ServerMessage::Response(simrob_protocol::Response::Text(t))) => return t,
                Some(_) => continue,
                None => panic!("no answer to {xml}"),
            }
        }
    }

    fn next_brain(&self) -> BrainBroadcast {
        let mut buf = vec![0u8; 70000];
        self.brain.socket.set_read_timeout(Some(WAIT)).unwrap();
        loop {
            let (n, _) = self
                .brain
                .socket
                .recv_from(&mut buf)
                .expect("a brain broadcast");
            if buf[..n].starts_with(b"<Response>") {
                continue;
            }
            return decode_brain_broadcast(&buf[..n]).expect("a valid brain broadcast");
        }
    }

    fn next_poses(&self) -> Broadcast {
        loop {
            match self.poses.recv(WAIT) {
                Some(ServerMessage::Broadcast(b)) => return b,
                Some(_) => continue,
                None => panic!("no poses broadcast"),
            }
        }
    }

    /// Waits for the current iteration's broadcasts, then lets the next iteration run.
    fn step(&mut self) -> (BrainBroadcast, Broadcast) {
        let b = self.next_brain();
        let p = self.next_poses();
        assert_eq!(b.iteration, p.iteration);
        for (peer, key) in [
            (&self.brain, ROBOT.to_string()),
            (&self.poses, "watcher".to_string()),
        ] {
            peer.send_str(&format!(
                "<Message><Agent_Message Command=\"Synchronize\"><Key>{key}</Key><Iteration>{}</Iteration></Agent_Message></Message>",
                b.iteration
            ));
        }
        self.last = Some((b.clone(), p.clone()));
        (b, p)
    }

    fn run(&mut self, iterations: usize) -> (BrainBroadcast, Broadcast) {
        let mut last = None;
        for _ in 0..iterations {
            last = Some(self.step());
        }
        last.expect("ran")
    }

    /// Steps until the robot's action `seq` is no longer running.
    fn until_done(&mut self, seq: u64) -> (BrainBroadcast, Broadcast) {
        for _ in 0..2000 {
            let (b, p) = self.step();
            if let Some(a) = &b.state.action {
                if a.seq == seq && a.status != "running" {
                    return (b, p);
                }
            }
        }
        panic!("action {seq} never finished");
    }

    /// Asks for an action and returns its sequence number from the confirmation.
    fn act(&self, action: &str) -> u64 {
        let text = self.request(&action_xml(ROBOT, action));
        let seq = text
            .rsplit("is action ")
            .next()
            .and_then(|s| s.trim().parse().ok());
        seq.unwrap_or_else(|| panic!("not accepted: {text}"))
    }
}

fn pose_of(p: &Broadcast, id: u32) -> ([f64; 3], [f64; 3]) {
    let e = p
        .entities
        .iter()
        .find(|e| e.entity_id == EntityId(id))
        .unwrap_or_else(|| panic!("entity {id} in {p:?}"));
    (e.position, e.rotation)
}

fn ball(p: &Broadcast) -> [f64; 3] {
    let e = p
        .entities
        .iter()
        .find(|e| e.kind == EntityInfoKind::Ball)
        .expect("ball");
    e.position
}

#[test]
fn actions_move_the_body_as_specified() {
    let mut rig = Rig::start("hum-walk", -2.0, 1.0, 0.0, "Humanoid_Brain_Ideal", 1);
    let seq = rig.act("<Action name=\"walk\" distance=\"30\"/>");
    let (b, p) = rig.until_done(seq);
    assert_eq!(b.state.action.as_ref().unwrap().status, "done");
    let (at, _) = pose_of(&p, ROBOT);
    assert!(
        (at[0] - -1.70).abs() < 1e-3 && (at[1] - 1.0).abs() < 1e-3,
        "{at:?}"
    );
    // 2 long steps (0.8 s) + 3 mini steps (0.4 s): 2.8 s.
    assert!((b.state.time - 2.81).abs() < 0.02, "took {}", b.state.time);

    let seq = rig.act("<Action name=\"walk\" distance=\"7\"/>");
    let (_, p) = rig.until_done(seq);
    assert!(
        (pose_of(&p, ROBOT).0[0] - -1.64).abs() < 1e-3,
        "walk 7 moves 6 cm"
    );

    let seq = rig.act("<Action name=\"turn\" angle=\"45\"/>");
    let (_, p) = rig.until_done(seq);
    let yaw = pose_of(&p, ROBOT).1[2].to_degrees();
    assert!((yaw + 40.0).abs() < 0.01, "turned {yaw}°");

    let seq = rig.act("<Action name=\"walkRight\" distance=\"8\"/>");
    let (_, p2) = rig.until_done(seq);
    let (a, b2) = (pose_of(&p, ROBOT).0, pose_of(&p2, ROBOT).0);
    assert!(((b2[0] - a[0]).hypot(b2[1] - a[1]) - 0.08).abs() < 1e-3);

    let seq = rig.act("<Action name=\"turnHeadVertically\" angle=\"-45\"/>");
    let (b, _) = rig.until_done(seq);
    assert!((b.state.head_tilt + 45.0).abs() < 1e-6);
}

#[test]
fn every_bad_request_is_refused_and_changes_nothing() {
    let mut rig = Rig::start("hum-bad", 0.0, 1.0, 0.0, "Humanoid_Brain_Ideal", 1);
    let (before_b, before_p) = rig.run(3);
    for action in [
        "<Action name=\"jump\"/>",
        "<Action name=\"turnHeadVertically\" angle=\"10\"/>",
        "<Action name=\"turnHeadHorizontally\" angle=\"-61\"/>",
        "<Action name=\"walk\" distance=\"-3\"/>",
        "<Action name=\"walk\" distance=\"NaN\"/>",
        "<Action name=\"walk\" speed=\"3\"/>",
        "<Action name=\"kickRight\" distance=\"3\"/>",
        "<Action name=\"backGetUp\"/>",
        "<Action/>",
    ] {
        let text = rig.request(&action_xml(ROBOT, action));
        assert!(text.starts_with("Error"), "{action}: {text}");
    }
    for xml in [
        action_xml(BALL, "<Action name=\"walk\"/>"),
        action_xml(99, "<Action name=\"walk\"/>"),
        humanoid_xml(ROBOT, 1.0, 1.0, 0.0, "ideal"),
        humanoid_xml(40, 1.0, 1.0, 0.0, "noisy"),
        control("<Control_Request Command=\"Create_Entity\" Type=\"Humanoid\"><Data><Entity_id>41</Entity_id><Team>green</Team><Position_X>0</Position_X><Position_Y>0</Position_Y></Data></Control_Request>"),
        control("<Entity_Request Command=\"Robot_Motor_Control\"><Entity_Id>21</Entity_Id><Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>1</Value></Motor></Motors></Entity_Request>"),
    ] {
        let text = rig.request(&xml);
        assert!(text.starts_with("Error"), "{xml}: {text}");
    }
    let (after_b, after_p) = rig.run(3);
    let (mut a, mut b) = (before_b.state.clone(), after_b.state.clone());
    (a.time, b.time) = (0.0, 0.0);
    assert_eq!(a, b, "the robot's state is unchanged");
    assert_eq!(pose_of(&before_p, ROBOT), pose_of(&after_p, ROBOT));
    assert_eq!(
        before_p.entities.len(),
        after_p.entities.len(),
        "no entity was created"
    );
}

#[test]
fn a_kick_rolls_the_ball_in_reach_and_misses_it_out_of_reach() {
    // In reach: the right foot 2 cm behind the ball on the centre spot.
    let mut rig = Rig::start("hum-kick", -0.14, 0.04, 0.0, "Humanoid_Brain_Ideal", 1);
    let start = ball(&rig.run(20).1);
    let seq = rig.act("<Action name=\"kickRight\"/>");
    rig.until_done(seq);
    let mid = ball(&rig.run(400).1);
    let end = ball(&rig.run(100).1);
    let rolled = (end[0] - start[0]).hypot(end[1] - start[1]);
    assert!((1.0..=1.10).contains(&rolled), "rolled {rolled} m");
    assert!(
        (end[0] - mid[0]).hypot(end[1] - mid[1]) < 1e-4,
        "it stopped"
    );

    // Out of reach: 15 cm between the toe and the ball.
    let mut rig = Rig::start("hum-miss", -0.27, 0.04, 0.0, "Humanoid_Brain_Ideal", 1);
    let start = ball(&rig.run(20).1);
    let seq = rig.act("<Action name=\"kickRight\"/>");
    rig.until_done(seq);
    let end = ball(&rig.run(100).1);
    assert!(
        (end[0] - start[0]).hypot(end[1] - start[1]) < 1e-3,
        "the ball moved"
    );
}

#[test]
fn a_save_covers_the_side_it_dives_to() {
    // Keeper 21 on its line facing the field; a striker 22 kicks the ball at it from 0.85 m,
    // 25 cm to the keeper's right (−Y).
    let mut rig = Rig::start("hum-save", -4.2, 0.0, 0.0, "Humanoid_Brain_Ideal", 1);
    rig.request(&humanoid_xml(
        22,
        -3.21,
        -0.29,
        std::f64::consts::PI,
        "ideal",
    ));
    let mut shot = |save: Option<&str>| -> f64 {
        rig.request(&position_xml(BALL, -3.35, -0.25, 0.05));
        rig.request(&position_xml(22, -3.21, -0.29, 0.0));
        rig.request(&position_xml(ROBOT, -4.2, 0.0, 0.0));
        rig.run(20);
        rig.request(&action_xml(22, "<Action name=\"kickRight\"/>"));
        if let Some(s) = save {
            rig.act(&format!("<Action name=\"{s}\"/>"));
        }
        ball(&rig.run(500).1)[0]
    };
    let free = shot(None);
    assert!(
        free < -4.3,
        "a ball beside a standing keeper passes: {free}"
    );
    let saved = shot(Some("saveRight"));
    assert!(saved > -4.3, "the dive to the right stops it: {saved}");
    let wrong = shot(Some("saveLeft"));
    assert!(wrong < -4.3, "a dive to the other side does not: {wrong}");
}

fn objects<'a>(
    b: &'a BrainBroadcast,
    kind: &str,
) -> Vec<&'a simrob_protocol::humanoid::ObjectSeen> {
    b.camera
        .iter()
        .flat_map(|c| c.objects.iter())
        .filter(|o| o.kind == kind)
        .collect()
}

#[test]
fn the_camera_sees_only_its_field_of_view_and_the_goal_beyond_its_detection_distance() {
    let mut rig = Rig::start("hum-fov", 0.0, 2.0, 0.0, "Humanoid_Brain_Ideal", 1);
    let seq = rig.act("<Action name=\"turnHeadVertically\" angle=\"-20\"/>");
    rig.until_done(seq);
    for deg in (0..360).step_by(10) {
        let a = (deg as f64).to_radians();
        rig.request(&position_xml(BALL, a.cos(), 2.0 + a.sin(), 0.05));
        let (b, _) = rig.run(2);
        let bearing = ((-(deg as f64)) + 540.0) % 360.0 - 180.0;
        let seen = objects(&b, "BALL");
        if bearing.abs() <= 37.0 {
            assert_eq!(seen.len(), 1, "ball at {bearing}° not seen");
            assert!(
                (seen[0].angle - bearing).abs() < 0.05,
                "{:?} vs {bearing}",
                seen[0]
            );
            assert!((seen[0].distance - 100.0).abs() < 0.5);
        } else if bearing.abs() >= 38.5 {
            assert!(seen.is_empty(), "ball at {bearing}° seen: {seen:?}");
        }
    }
    // Facing the magenta goal: level head; the goal fits the image from about 1.23 m.
    let seq = rig.act("<Action name=\"turnHeadVertically\" angle=\"0\"/>");
    rig.until_done(seq);
    rig.request(&position_xml(BALL, 0.0, -2.5, 0.05));
    for (distance, expected) in [(1.0, false), (1.2, false), (1.3, true), (3.0, true)] {
        rig.request(&position_xml(ROBOT, 4.5 - distance, 0.0, 0.0));
        let (b, _) = rig.run(2);
        assert_eq!(
            !objects(&b, "OPP_GOAL").is_empty(),
            expected,
            "goal at {distance} m: {:?}",
            b.camera
        );
    }
}

#[test]
fn paper_camera_noise_has_the_calibration_tables_bias_and_spread() {
    // 0.25 s per iteration: one paper frame per broadcast.
    let mut rig = Rig::start("hum-paper", 0.0, 2.0, 0.0, "Humanoid_Brain", 25);
    let seq = rig.act("<Action name=\"turnHeadVertically\" angle=\"-20\"/>");
    rig.until_done(seq);
    rig.request(&position_xml(BALL, 1.0, 2.0, 0.05));
    rig.run(2);
    let mut errors = Vec::new();
    let mut frames = 0;
    for _ in 0..1500 {
        let (b, _) = rig.step();
        frames += b.camera.is_some() as usize;
        errors.extend(objects(&b, "BALL").iter().map(|o| o.distance - 100.0));
    }
    assert!(frames >= 1499, "{frames} frames");
    let n = errors.len() as f64;
    let mean = errors.iter().sum::<f64>() / n;
    let sd = (errors.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    // FutRob at 100 cm: +2.71 cm, σ 5.39 cm. Three standard errors: 0.43 cm and 0.31 cm.
    assert!((mean - 2.71).abs() < 0.45, "bias {mean} over {n} frames");
    assert!((sd - 5.39).abs() < 0.35, "spread {sd}");
    // 5 % dropouts: three standard errors 1.7 %.
    let dropped = 1.0 - n / frames as f64;
    assert!((dropped - 0.05).abs() < 0.017, "dropout {dropped}");
}

#[test]
fn a_brain_is_told_once_of_every_action_that_ends() {
    let mut rig = Rig::start("hum-ended", -2.0, 1.0, 0.0, "Humanoid_Brain_Ideal", 1);
    let mut ended = Vec::new();
    let mut note = |b: &BrainBroadcast| {
        for e in &b.state.ended {
            ended.push((e.seq, e.name.clone(), e.status.clone()));
        }
    };
    // Replaced before it started.
    assert_eq!(rig.act("<Action name=\"walk\" distance=\"30\"/>"), 1);
    assert_eq!(rig.act("<Action name=\"turn\" angle=\"-40\"/>"), 2);
    for _ in 0..50 {
        note(&rig.step().0);
    }
    // Replaced at the end of a quantum, then placed mid-walk.
    assert_eq!(rig.act("<Action name=\"walk\" distance=\"30\"/>"), 3);
    for _ in 0..100 {
        note(&rig.step().0);
    }
    rig.request(&position_xml(ROBOT, -2.0, 1.0, 0.0));
    let seq = rig.act("<Action name=\"walkLeft\" distance=\"4\"/>");
    for _ in 0..200 {
        note(&rig.step().0);
    }
    assert_eq!(seq, 4);
    // Each exactly once (in which order 1 and 2 end depends on whether the turn arrived
    // before the walk's first iteration).
    ended.sort();
    let s = |x: &str| x.to_string();
    assert_eq!(
        ended,
        vec![
            (1, s("walk"), s("interrupted")),
            (2, s("turn"), s("interrupted")),
            (3, s("walk"), s("interrupted")),
            (4, s("walkLeft"), s("done")),
        ]
    );
}

#[test]
fn a_brain_key_names_a_humanoid_or_none_yet_and_never_holds_lockstep() {
    let mut rig = Rig::start("hum-key", -2.0, 1.0, 0.0, "Humanoid_Brain_Ideal", 1);
    // The longest Sync_Wait: an agent lockstep waited for would hold each iteration 10 s.
    let t = rig.request(&control(
        "<Control_Request Command=\"Set_Sync_Wait\"><Sync_Wait>10</Sync_Wait><Response>true</Response></Control_Request>",
    ));
    assert!(!t.starts_with("Error"), "{t}");
    let other = Peer::new(rig.cmd.server);
    let answer = |key: &str| -> String {
        other.send_str(&register_xml(
            key,
            "Humanoid_Brain",
            "127.0.0.1",
            other.port(),
            true,
            0.0,
        ));
        loop {
            match other.recv(WAIT) {
                Some(ServerMessage::Response(simrob_protocol::Response::Text(t))) => return t,
                Some(_) => continue,
                None => panic!("no answer to registering {key}"),
            }
        }
    };
    let s = |x: &str| x.to_string();
    let t = answer(&BALL.to_string());
    assert!(
        t.starts_with("Error") && t.contains("entity 2 is a Ball, not a Humanoid"),
        "{t}"
    );
    let t = answer("striker");
    assert!(t.starts_with("Error") && t.contains("entity id"), "{t}");
    let t = answer("99");
    assert!(
        !t.starts_with("Error") && t.contains("no humanoid 99 yet"),
        "{t}"
    );
    // Each iteration comes as soon as brain 21 and the watcher synchronized, well within
    // the 10 s lockstep would wait for brain 99.
    let first = rig.step().0.iteration;
    let quick = Duration::from_secs(5);
    for i in 1..=5 {
        let b = loop {
            match rig.poses.recv(quick) {
                Some(ServerMessage::Broadcast(b)) => break b,
                Some(_) => continue,
                None => panic!("iteration {} waited for brain 99", first + i),
            }
        };
        assert_eq!(b.iteration, first + i);
        let brain = rig.next_brain();
        for (peer, key) in [(&rig.brain, ROBOT.to_string()), (&rig.poses, s("watcher"))] {
            peer.send_str(&format!(
                "<Message><Agent_Message Command=\"Synchronize\"><Key>{key}</Key><Iteration>{}</Iteration></Agent_Message></Message>",
                brain.iteration
            ));
        }
    }
}
