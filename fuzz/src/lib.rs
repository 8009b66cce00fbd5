//! The entry points of simrob's fuzz targets: each takes arbitrary bytes, feeds them to one
//! reader of outside input the way the program does, and checks what must hold whatever the
//! input. None may panic, hang or allocate without bound. The same functions replay the
//! corpus in the main workspace's tests (`crates/cli/tests/fuzz_corpus.rs`), so the corpus
//! stays a regression suite without a fuzzer installed.

use std::path::Path;

/// A SimRob datagram as the server decodes it, and as a client decodes a server message.
pub fn simrob_xml(data: &[u8]) {
    let keys = simrob_protocol::CommandKeys::default();
    for request in simrob_protocol::decode_datagram(data, &keys) {
        if let Err(e) = request {
            let _ = e.to_string();
        }
    }
    let _ = simrob_protocol::decode_server_message(data);
}

/// Lines of the Mobile Robot Simulator protocol: every request parsed is written back to the
/// same request, and a stepped simulator answers every line with exactly one line.
pub fn mrs_line(data: &[u8]) {
    use simrob_mrs::protocol::{parse_request, strip_line, Request};
    use simrob_mrs::{ClientId, MrsConfig, MrsCore, NoFiles};
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let map = simrob_mrs::flat::Map::parse_vector(simrob_mrs::EXAMPLE_MAP)
        .expect("the built-in map parses");
    let mut core = MrsCore::new(
        map,
        MrsConfig {
            stepped: true,
            ..MrsConfig::default()
        },
    );
    let client = ClientId(1);
    core.connect(client).expect("room for one robot");
    for line in text.split_inclusive('\n').take(64) {
        let Some(l) = strip_line(line) else {
            continue;
        };
        if let Ok(req) = parse_request(l) {
            let written = req.to_string();
            assert_eq!(
                parse_request(&written).as_ref(),
                Ok(&req),
                "{l:?} → {written:?}"
            );
            if matches!(req, Request::Step(n) if n > 100) {
                continue;
            }
        }
        let reply = core.handle_line(client, line, &mut NoFiles);
        let reply = reply.expect("a non-blank line gets a reply");
        assert!(!reply.contains(['\n', '\r']), "{reply:?}");
    }
}

/// A save file as Load reads it, then a few iterations of what was loaded. The corpus holds
/// files simrob wrote, engine state included: mutations of it must be refused or rebuilt
/// from the readable part, never reach the engine unsealed.
pub fn save_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut world = simrob_world::World::new(simrob_world::WorldConfig::default());
    let before = world.save_xml();
    match world.load_xml_with(text, &simrob_world::LoadOptions::default()) {
        Ok(_) => {
            for _ in 0..3 {
                world.advance();
            }
        }
        Err(_) => assert_eq!(world.save_xml(), before, "a refused file changed the world"),
    }
}

/// A draw.io diagram as `simrob swarm` reads a map; what parses becomes a scenario's map
/// (shapes to robots, points of interest, walls and components; edges to map-paths), which is
/// built and run.
pub fn drawio(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(map) = simrob_swarm::drawio::parse(text) {
            let base = Path::new("/nonexistent-simrob-fuzz");
            let mut scenario = simrob_swarm::scenario::Scenario::from_toml_str("", base)
                .expect("an empty scenario loads");
            scenario.map = Some(map);
            run_scenario(&scenario);
        }
    }
}

/// A swarm scenario (also a coordination scenario), as TOML and as JSON (files it names are
/// looked for where none exist); what loads is built and runs its first 30 frames.
pub fn swarm_scenario(data: &[u8]) {
    use simrob_swarm::scenario::Scenario;
    if let Ok(text) = std::str::from_utf8(data) {
        let base = Path::new("/nonexistent-simrob-fuzz");
        let toml = Scenario::from_toml_str(text, base);
        let json = Scenario::from_json_str(text, base);
        for scenario in [toml.ok(), json.ok()].into_iter().flatten() {
            run_scenario(&scenario);
        }
    }
}

/// Builds a run of at most 32 generated robots with at most 16 proximity beams each (a
/// larger swarm is slower, not different: 100 warehouse robots took 4 s under the sanitizer)
/// and steps it 30 frames.
fn run_scenario(scenario: &simrob_swarm::scenario::Scenario) {
    use simrob_swarm::scenario::{GeneratorSpec, Overrides};
    let (robots, beams) = match &scenario.file.generator {
        Some(GeneratorSpec::DroneSwarm {
            robots,
            proximity_beams,
            ..
        })
        | Some(GeneratorSpec::Warehouse {
            robots,
            proximity_beams,
        }) => (Some((*robots).min(32)), Some((*proximity_beams).min(16))),
        None => (None, None),
    };
    let overrides = Overrides {
        duration: Some(1.0),
        robots,
        proximity_beams: beams,
        ..Overrides::default()
    };
    if let Ok(mut sim) = scenario.build(&overrides) {
        for _ in 0..30 {
            if !sim.step() {
                break;
            }
        }
    }
}

/// The configuration files simrob reads, one format per first byte (the rest is the file):
///
/// | byte | file | what runs after a successful read |
/// |---|---|---|
/// | `S` | SimRob server configuration, legacy `Configuration.data` form | its limits and command names are checked |
/// | `T` | the same in TOML (`simrob.toml`) | the same |
/// | `I` | FutRob robot configuration (`ini.config`) | a brain with those settings plays 40 cycles |
/// | `R` | FutRob behaviour rules (XML) | a field player and a goalkeeper play 40 cycles each with them |
/// | `V` | FutRob vision stub (`scene, object, angle, distance`) | a brain plays 40 cycles seeing it |
/// | `M` | a Mobile Robot Simulator map (vector text or BMP), also a swarm obstacle map | a robot joins, drives, reads its sonars, steps, and the map is drawn |
///
/// Other first bytes are ignored. Coordination scenarios are swarm scenario files (the
/// `swarm_scenario` target).
pub fn config(data: &[u8]) {
    let Some((&kind, file)) = data.split_first() else {
        return;
    };
    if kind == b'M' {
        return mrs_map(file);
    }
    let Ok(text) = std::str::from_utf8(file) else {
        return;
    };
    match kind {
        b'S' => server_config("Configuration.data", text),
        b'T' => server_config("simrob.toml", text),
        b'I' => {
            if let Ok(cfg) = simrob_futrob::IniConfig::parse(text, "ini.config") {
                let rules = simrob_futrob::RuleSet::parse(FIELD_PLAYER_RULES, "field_player.xml")
                    .expect("the bundled rules parse");
                play(simrob_futrob::Brain::from_config(&cfg, rules), None);
            }
        }
        b'R' => {
            if let Ok(rules) = simrob_futrob::RuleSet::parse(text, "rules.xml") {
                for role in [
                    simrob_futrob::Role::FieldPlayer,
                    simrob_futrob::Role::Goalkeeper,
                ] {
                    let params = simrob_futrob::BrainParams::default();
                    play(
                        simrob_futrob::Brain::new(2, role, rules.clone(), params),
                        None,
                    );
                }
            }
        }
        b'V' => {
            if let Ok(stub) = simrob_futrob::VisionStub::parse(text, "objSampleData.input") {
                let rules = simrob_futrob::RuleSet::parse(FIELD_PLAYER_RULES, "field_player.xml")
                    .expect("the bundled rules parse");
                let params = simrob_futrob::BrainParams::default();
                let role = simrob_futrob::Role::FieldPlayer;
                play(
                    simrob_futrob::Brain::new(2, role, rules, params),
                    Some(&stub),
                );
            }
        }
        _ => {}
    }
}

const FIELD_PLAYER_RULES: &str = include_str!("../../scenarios/soccer/rules/field_player.xml");

fn server_config(name: &str, text: &str) {
    match simrob_session::ServerConfig::from_text(name, text) {
        Ok(c) => {
            assert!(c.keys.validate().is_ok(), "accepted command names clash");
            let step = c.world.default_step_size;
            assert!(step > 0.0 && step <= simrob_world::MAX_TIMESTEP, "{step}");
            assert!(c.sync_wait >= 0.0 && c.real_time_factor >= 0.0);
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
}

/// Forty decision cycles of 40 ms: the ball (from the stub, or straight ahead and coming
/// closer), the body finishing each command at once, a fall now and then.
fn play(mut brain: simrob_futrob::Brain, stub: Option<&simrob_futrob::VisionStub>) {
    use simrob_futrob::{BodyStatus, ObjectKind, Sighting};
    brain.start();
    let mut status = BodyStatus::default();
    for cycle in 1..=40u32 {
        let now = u64::from(cycle) * 40;
        match stub {
            Some(stub) => brain.observe(now, stub.scene(cycle)),
            None => {
                let ball = Sighting::new(ObjectKind::Ball, 10.0, 200.0 - 4.0 * f64::from(cycle));
                brain.observe(now, &[ball]);
            }
        }
        if cycle == 25 {
            status.fallen = Some(simrob_futrob::Fall::Front);
        }
        let out = brain.step(now, &status);
        status.finished += out.commands.len() as u64;
        status.fallen = None;
    }
}

fn mrs_map(file: &[u8]) {
    use simrob_mrs::{ClientId, MrsConfig, MrsCore, NoFiles};
    let Ok(map) = simrob_mrs::flat::Map::from_bytes(file) else {
        return;
    };
    let config = MrsConfig {
        stepped: true,
        ..MrsConfig::default()
    };
    let mut core = MrsCore::new(map, config);
    let client = ClientId(1);
    if core.connect(client).is_ok() {
        for line in [
            "V+300+100\n",
            "A\n",
            "#STEP 20\n",
            "B\n",
            "R\n",
            "#SONARS\n",
        ] {
            let reply = core.handle_line(client, line, &mut NoFiles);
            assert!(reply.is_some(), "{line:?} got no reply");
        }
    }
    let _ = core.snapshot_png();
}

/// A byte stream from a coordination connection (the `simrob-gri` lines between robots, the
/// Control Center and the Time Server). The first byte sets the size of the pieces the
/// stream arrives in (1–64 bytes), the rest is the stream. Every message decoded must encode
/// to one line that decodes to the same message; each one then goes to a Control Center (which
/// has robot 1 joined) and to robot 1's coordination layer, which run against each other
/// until quiet, robot 1 finishing every basic task at once. Whatever either of them sends must
/// pass the codec: no hostile input makes the system put an unreadable message on the wire.
pub fn coord_wire(data: &[u8]) {
    use simrob_coord::cc::{CcConfig, ControlCenter};
    use simrob_coord::cnp::Euclidean;
    use simrob_coord::model::{RobotInfo, TaskClass};
    use simrob_coord::robot::{Command, RobotAgent, RobotPose};
    use simrob_coord::sync::TaskBoard;
    use simrob_coord::wire::{decode, encode, FrameDecoder};

    let Some((&piece, stream)) = data.split_first() else {
        return;
    };
    let piece = usize::from(piece % 64) + 1;
    let mut cc = ControlCenter::new(CcConfig {
        max_open_auctions: 8,
        max_tasks: 256,
        max_robots: 32,
        ..CcConfig::default()
    });
    let mut robot = RobotAgent::new(RobotInfo {
        robot: 1,
        name: "r1".into(),
        kind: "fuzz".into(),
        world: "flat".into(),
        capabilities: TaskClass::ALL.to_vec(),
        speed: 1.0,
    });
    let mut board = TaskBoard::default();
    let pose = RobotPose::default();
    let mut local = 0.0;
    let through_codec = |env: &simrob_coord::wire::Envelope, who: &str| {
        let line = encode(env);
        assert_eq!(
            line.matches('\n').count(),
            1,
            "{who} sent two lines: {line}"
        );
        let back = decode(line.as_bytes(), 1)
            .unwrap_or_else(|e| panic!("{who} sent what the codec refuses: {e}: {line}"));
        assert_eq!(
            encode(&back),
            line,
            "{who}: a message changed through the codec"
        );
    };
    let _ = cc.handle(robot.hello(), local);
    let mut dec = FrameDecoder::new(4096);
    let mut messages = 0;
    for bytes in stream.chunks(piece) {
        dec.push(bytes);
        while let Some(next) = dec.next_message() {
            let env = match next {
                Ok(env) => env,
                Err(e) => {
                    let _ = e.to_string();
                    continue;
                }
            };
            through_codec(&env, "the fuzzer");
            messages += 1;
            if messages > 64 {
                return;
            }
            local += 0.25;
            let _ = cc.handle(env.clone(), local);
            if env.to.is_none_or(|to| to == 1) {
                robot.handle(&env, local, pose, &mut board, &Euclidean);
            }
            // Both sides until quiet (bounded: a loop between them is a finding too).
            for _ in 0..256 {
                let mut quiet = true;
                cc.handle_timeout(local);
                while let Some(out) = cc.poll_transmit() {
                    quiet = false;
                    through_codec(&out, "the Control Center");
                    if out.to.is_none_or(|to| to == 1) {
                        robot.handle(&out, local, pose, &mut board, &Euclidean);
                    }
                }
                while let Some(cmd) = robot.poll_command() {
                    quiet = false;
                    if let Command::Start { task, .. } = cmd {
                        let _ = robot.basic_done(task, Ok(()), local, &mut board);
                    }
                }
                while let Some(out) = robot.poll_transmit() {
                    quiet = false;
                    through_codec(&out, "robot 1");
                    let _ = cc.handle(out, local);
                }
                while let Some(line) = cc.poll_log() {
                    let _ = line.to_string();
                }
                if quiet {
                    break;
                }
            }
        }
    }
    let _ = dec.finish();
    let _ = (cc.robots_table(), cc.tasks_table(), cc.map());
}

/// FutRob team datagrams as a robot's radio hands them in: records of one length byte (the
/// datagram's size, modulo 33) and that many bytes. Every datagram that decodes encodes back
/// to the same 16 bytes; each goes to a goalkeeper's brain, a field player's brain and a
/// listener's team link, the brains playing a decision cycle every fourth datagram and
/// sending what they say to each other. What a brain sends must decode, and the listener's
/// counters must account for every datagram.
pub fn futrob_team(data: &[u8]) {
    use simrob_futrob::msg::{Message, Param, Received, TeamComm};
    use simrob_futrob::{BodyStatus, ObjectKind, Role, RuleSet, Sighting};

    let rules = |xml: &str, name: &str| RuleSet::parse(xml, name).expect("the bundled rules parse");
    let params = simrob_futrob::BrainParams::default();
    let mut brains = [
        simrob_futrob::Brain::new(
            1,
            Role::Goalkeeper,
            rules(GOALKEEPER_RULES, "goalkeeper.xml"),
            params,
        ),
        simrob_futrob::Brain::new(
            2,
            Role::FieldPlayer,
            rules(FIELD_PLAYER_RULES, "field_player.xml"),
            params,
        ),
    ];
    let mut listener = TeamComm::new(
        9,
        Role::FieldPlayer,
        simrob_futrob::msg::CommParams::default(),
    );
    let mut status = [BodyStatus::default(), BodyStatus::default()];
    for b in &mut brains {
        b.start();
    }
    let mut rest = data;
    let mut count = 0u64;
    while let Some((&len, tail)) = rest.split_first() {
        let len = usize::from(len % 33).min(tail.len());
        let (datagram, tail) = tail.split_at(len);
        rest = tail;
        count += 1;
        if count > 512 {
            break;
        }
        let now = count * 40;
        if let Ok(m) = Message::decode(datagram) {
            assert_eq!(&m.encode()[..], datagram, "{m}");
            assert_eq!(Param::parse(m.param.name()), Some(m.param));
            assert_eq!(Param::parse(&m.param.code().to_string()), Some(m.param));
            let _ = m.to_string();
        }
        for b in &mut brains {
            let _ = b.handle_datagram(now, datagram);
        }
        if let Received::Dropped(e) = listener.handle_datagram(datagram, now) {
            let _ = e.to_string();
        }
        while listener.poll_transmit().is_some() {}
        if count.is_multiple_of(4) {
            let ball = Sighting::new(ObjectKind::Ball, 10.0, 300.0 - (count % 64) as f64 * 4.0);
            let mut said = Vec::new();
            for (b, s) in brains.iter_mut().zip(&mut status) {
                b.observe(now, &[ball]);
                let out = b.step(now, s);
                s.finished += out.commands.len() as u64;
                said.extend(out.messages.iter().map(Message::encode));
            }
            for bytes in said {
                let m = Message::decode(&bytes).expect("a brain sends only team messages");
                assert_eq!(m.encode(), bytes);
                for b in &mut brains {
                    let _ = b.handle_datagram(now, &bytes);
                }
            }
        }
    }
    let s = listener.stats();
    assert_eq!(
        s.received,
        s.accepted + s.bad_length + s.unknown_param + s.not_for_me + s.own + s.bad_source,
        "{s:?}"
    );
}

const GOALKEEPER_RULES: &str = include_str!("../../scenarios/soccer/rules/goalkeeper.xml");
