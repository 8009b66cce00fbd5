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

/// A draw.io diagram as `simrob swarm` reads a map.
pub fn drawio(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = simrob_swarm::drawio::parse(text);
    }
}

/// A swarm scenario, as TOML and as JSON (files it names are looked for where none exist).
pub fn swarm_scenario(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let base = Path::new("/nonexistent-simrob-fuzz");
        let _ = simrob_swarm::scenario::Scenario::from_toml_str(text, base);
        let _ = simrob_swarm::scenario::Scenario::from_json_str(text, base);
    }
}
