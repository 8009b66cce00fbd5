//! A scenario naming a device, a FIFO or a huge file as its map gets a clear error at
//! once: nothing is read from it and no memory is taken for it.

use std::path::{Path, PathBuf};

use simrob_swarm::scenario::{Scenario, MAX_FILE_BYTES};

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("simrob-swarm-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn refused(toml: &str, base: &Path) -> String {
    match Scenario::from_toml_str(toml, base) {
        Ok(_) => panic!("accepted: {toml}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_device_as_map_or_obstacles_is_refused() {
    let dir = temp_dir("dev");
    let e = refused("map = \"/dev/zero\"\n", &dir);
    assert!(
        e.contains("/dev/zero") && e.contains("not a regular file"),
        "{e}"
    );
    let e = refused("[world]\nobstacles = \"/dev/zero\"\n", &dir);
    assert!(e.contains("not a regular file"), "{e}");
    let e = refused("map = \".\"\n", &dir);
    assert!(e.contains("not a regular file"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_fifo_as_map_is_refused_without_waiting_for_a_writer() {
    let dir = temp_dir("fifo");
    let fifo = dir.join("map.drawio");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo is not available: skipped");
        return;
    }
    // Opening a FIFO for reading would block until a writer came: the reader looks first.
    let e = refused("map = \"map.drawio\"\n", &dir);
    assert!(e.contains("not a regular file"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_past_the_limit_is_refused_before_it_is_read() {
    let dir = temp_dir("huge");
    // Sparse: 10 GB on paper, nothing on disk.
    let huge = dir.join("huge.drawio");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(10_000_000_000)
        .unwrap();
    let e = refused("map = \"huge.drawio\"\n", &dir);
    assert!(
        e.contains("10000000000 bytes") && e.contains(&MAX_FILE_BYTES.to_string()),
        "{e}"
    );
    // One byte past the limit, as the obstacle map and as the scenario itself.
    let over = dir.join("over.txt");
    std::fs::File::create(&over)
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    let e = refused("[world]\nobstacles = \"over.txt\"\n", &dir);
    assert!(e.contains("limit"), "{e}");
    let scenario = dir.join("big.toml");
    std::fs::File::create(&scenario)
        .unwrap()
        .set_len(MAX_FILE_BYTES + 1)
        .unwrap();
    let Err(e) = Scenario::load(&scenario) else {
        panic!("a scenario past the limit was accepted");
    };
    let e = e.to_string();
    assert!(e.contains("limit"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

fn built_err(toml: &str, base: &Path) -> String {
    match Scenario::from_toml_str(toml, base).and_then(|s| s.build(&Default::default())) {
        Ok(_) => panic!("accepted: {toml}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_map_shape_of_unknown_type_or_outside_the_world_is_refused() {
    let dir = temp_dir("shapes");
    let hospital = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/swarm/hospital.drawio"),
    )
    .unwrap();
    let map = dir.join("map.drawio");
    let toml = "map = \"map.drawio\"\n";
    // A typo in a robot's type.
    let typo = hospital.replacen(r#"type="robot""#, r#"type="robto""#, 1);
    assert_ne!(typo, hospital);
    std::fs::write(&map, &typo).unwrap();
    let e = built_err(toml, &dir);
    assert!(
        e.starts_with(&format!("map {}: shape id=", map.display()))
            && e.ends_with(
                ": unknown type \"robto\" (known: robot, drone, item (or pickable), poi, wall, \
                 ignore)"
            ),
        "{e}"
    );
    // The same map with a world narrower than its robots and POIs.
    std::fs::write(&map, &hospital).unwrap();
    let e = built_err(&format!("{toml}[world]\nwidth = 100\n"), &dir);
    assert!(
        e.contains(": shape id=") && e.contains("is outside the 100 × "),
        "{e}"
    );
    // A map-path whose end lies left of the page (x < 0).
    let edge = r##"<mxfile><diagram name="p" id="p"><mxGraphModel pageWidth="400" pageHeight="300"><root>
<mxCell id="0"/><mxCell id="1" parent="0"/>
<mxCell id="e" style="endArrow=none;" edge="1" parent="1">
  <mxGeometry relative="1" as="geometry">
    <mxPoint x="50" y="50" as="sourcePoint"/><mxPoint x="-20" y="50" as="targetPoint"/>
  </mxGeometry></mxCell>
</root></mxGraphModel></diagram></mxfile>"##;
    std::fs::write(&map, edge).unwrap();
    assert_eq!(
        built_err(toml, &dir),
        format!(
            "map {}: edge id=\"e\": map-path point: position (-20, 50) is outside the 400 × 300 \
             world",
            map.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_json_scenario_may_start_with_a_byte_order_mark() {
    let dir = temp_dir("bom");
    let path = dir.join("bom.json");
    let json = r#"{"name": "bom", "fps": 10, "duration": 1, "extraEntities": [
        {"type": "robot", "name": "r1", "position": [50, 50]}]}"#;
    std::fs::write(&path, format!("\u{feff}{json}")).unwrap();
    let s = Scenario::load(&path).unwrap();
    assert_eq!(s.name(), "bom");
    let sim = s.build(&Default::default()).unwrap();
    assert!(sim.world().find("r1").is_some());
    let s = Scenario::from_json_str(&format!("\u{feff}{json}"), &dir).unwrap();
    assert_eq!(s.file.entities.len(), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hmr_sims_own_simulation_json_keys_are_accepted() {
    // HMR Sim's examples/hospitalSimulation/simulation.json key set, the map in `context`.
    let dir = temp_dir("hmr");
    std::fs::create_dir_all(dir.join("maps")).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/swarm/hospital.drawio"),
        dir.join("maps/hospital.drawio"),
    )
    .unwrap();
    let path = dir.join("simulation.json");
    std::fs::write(
        &path,
        r#"{"context": "maps", "map": "hospital.drawio", "FPS": 60, "DLW": 10, "duration": 10, "verbose": 20}"#,
    )
    .unwrap();
    let s = Scenario::load(&path).unwrap();
    assert_eq!(
        s.map_path.as_deref(),
        Some(dir.join("maps/hospital.drawio").as_path())
    );
    let sim = s.build(&Default::default()).unwrap();
    assert_eq!(sim.world().robot_count(), 3);
    // Without `context` the map is looked for beside the scenario.
    std::fs::write(&path, r#"{"map": "hospital.drawio", "DLW": 10}"#).unwrap();
    let e = Scenario::load(&path).unwrap_err().to_string();
    assert!(
        e.contains("cannot read the map") && e.contains("hospital.drawio"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
