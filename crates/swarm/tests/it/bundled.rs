//! The bundled scenarios open by name from any directory, the same as their files in the
//! source tree; a path still opens that file; anything else is refused with the names.

use std::path::{Path, PathBuf};

use simrob_swarm::scenario::{bundled_names, Scenario};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

#[test]
fn each_bundled_name_opens_the_scenario_its_file_holds() {
    let names: Vec<_> = bundled_names().collect();
    assert_eq!(names, ["drone-swarm", "hospital", "warehouse"]);
    for name in names {
        // The tests run in the crate's folder, which has no file of that name.
        assert!(!Path::new(name).exists());
        let bundled = Scenario::open(Path::new(name)).expect(name);
        let file = Scenario::load(&repo(&format!("scenarios/swarm/{name}.toml"))).expect(name);
        assert_eq!(format!("{:?}", bundled.file), format!("{:?}", file.file));
        assert_eq!(format!("{:?}", bundled.map), format!("{:?}", file.map));
        assert_eq!(bundled.map.is_some(), name != "warehouse");
        // Nothing on disk is the bundled scenario's map.
        assert_eq!(bundled.map_path, None);
        assert_eq!(bundled.name(), file.name());
    }
}

#[test]
fn a_path_opens_that_file() {
    let path = repo("scenarios/swarm/hospital.toml");
    let s = Scenario::open(&path).expect("hospital.toml");
    assert_eq!(s.origin, path.display().to_string());
    assert!(s.map_path.is_some());
}

#[test]
fn neither_a_file_nor_a_bundled_name_is_refused_with_the_names() {
    let e = Scenario::open(Path::new("hospitl"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("hospitl: no such file, and not a bundled scenario")
            && e.contains("drone-swarm, hospital, warehouse"),
        "{e}"
    );
}
