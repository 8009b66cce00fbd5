//! Map changes at run time (`#LOAD`, `#MERGE`, `#RECT`) against the connected robots and the
//! `P` reply's range, through the sans-IO core.

use std::collections::HashMap;
use std::path::PathBuf;

use simrob_mrs::flat::Map;
use simrob_mrs::{ClientId, FileError, MapFiles, MrsConfig, MrsCore, EXAMPLE_MAP};

/// Map files held in memory.
#[derive(Default)]
struct Mem(HashMap<String, Vec<u8>>);

impl MapFiles for Mem {
    fn read(&mut self, name: &str) -> Result<Vec<u8>, FileError> {
        self.0
            .get(name)
            .cloned()
            .ok_or_else(|| FileError::NotAMapFile(name.to_string()))
    }
    fn write(&mut self, name: &str, bytes: &[u8]) -> Result<PathBuf, FileError> {
        self.0.insert(name.to_string(), bytes.to_vec());
        Ok(PathBuf::from(name))
    }
}

fn core_on(map: &str) -> MrsCore {
    let mut core = MrsCore::new(
        Map::parse_vector(map).expect("map"),
        MrsConfig {
            stepped: true,
            ..MrsConfig::default()
        },
    );
    core.connect(ClientId(0)).expect("robot");
    core
}

fn ask(core: &mut MrsCore, files: &mut Mem, line: &str) -> String {
    core.handle_line(ClientId(0), line, files).expect("a reply")
}

#[test]
fn map_changes_that_would_bury_a_connected_robot_are_refused() {
    let mut files = Mem::default();
    for (name, text) in [
        ("center.txt", "300 300\n100 100 200 200\n"),
        ("full.txt", "300 300\n0 0 300 300\n"),
        ("small.txt", "200 100\n"),
        ("aside.txt", "300 300\n10 10 20 20\n"),
    ] {
        files.0.insert(name.into(), text.as_bytes().to_vec());
    }
    let mut core = core_on("300 300\n");
    assert_eq!(ask(&mut core, &mut files, "P"), "P015000150000000");
    let sonars = ask(&mut core, &mut files, "#SONARS");
    for line in [
        "#RECT 140 140 160 160",
        "#RECT 155 150 300 151",
        "#LOAD center.txt",
        "#LOAD full.txt",
        "#LOAD small.txt",
        "#MERGE center.txt",
    ] {
        let e = ask(&mut core, &mut files, line);
        assert!(
            e.starts_with(&format!("E {line} would put robot 0 at (150, 150)")),
            "{line}: {e}"
        );
        assert!(e.contains("move it first (#PLACE)"), "{e}");
        assert_eq!(ask(&mut core, &mut files, "#SONARS"), sonars, "{line}");
        assert_eq!(core.world().map().rects().len(), 0, "{line}");
        assert_eq!(core.world().map().width(), 300.0, "{line}");
    }
    // Touching is not overlapping; changes away from the robot go through.
    assert_eq!(ask(&mut core, &mut files, "#RECT 160 0 170 300"), "#RECT");
    assert_eq!(ask(&mut core, &mut files, "#MERGE aside.txt"), "#MERGE");
    assert_eq!(ask(&mut core, &mut files, "#LOAD aside.txt"), "#LOAD");
    // Moved away, the robot no longer stands in the way.
    assert_eq!(ask(&mut core, &mut files, "#PLACE 50 50 0"), "#PLACE");
    assert_eq!(ask(&mut core, &mut files, "#LOAD center.txt"), "#LOAD");
}

#[test]
fn maps_larger_than_p_can_report_are_refused() {
    let mut files = Mem::default();
    files.0.insert("big.txt".into(), b"20000 20000\n".to_vec());
    files
        .0
        .insert("edge.txt".into(), b"9999.9 9999.9\n".to_vec());
    let mut core = core_on(EXAMPLE_MAP);
    let e = ask(&mut core, &mut files, "#LOAD big.txt");
    assert!(
        e.contains("a 20000 × 20000 in map is too large: `P` reports positions in 5 digits of tenths of an inch, so each side may be at most 9999.9 in"),
        "{e}"
    );
    assert_eq!(core.world().map().width(), 300.0);
    // The largest map: every position on it reads back exactly.
    assert_eq!(ask(&mut core, &mut files, "#LOAD edge.txt"), "#LOAD");
    assert_eq!(
        ask(&mut core, &mut files, "#PLACE 9989.8 9989.8 0"),
        "#PLACE"
    );
    assert_eq!(ask(&mut core, &mut files, "P"), "P998989989800000");
    assert!(simrob_mrs::check_map_size(&Map::empty(10_000.0, 5.0).expect("map")).is_err());
    assert!(simrob_mrs::check_map_size(&Map::empty(9999.9, 9999.9).expect("map")).is_ok());
    // The other 2D worlds keep larger maps.
    assert!(Map::empty(100_000.0, 100_000.0).is_ok());
}

#[test]
fn snapshots_are_written_only_under_png_names() {
    let mut files = Mem::default();
    let mut core = core_on(EXAMPLE_MAP);
    for name in ["x.txt", "png", ".png", "shot.png.txt", "shotpng"] {
        let e = ask(&mut core, &mut files, &format!("#SNAPSHOT {name}"));
        assert!(e.starts_with("E "), "{name}: {e}");
        assert!(e.contains("must end in .png"), "{name}: {e}");
    }
    assert!(
        files.0.is_empty(),
        "a refused name wrote {:?}",
        files.0.keys()
    );
    assert_eq!(
        ask(&mut core, &mut files, "#SNAPSHOT shot.png"),
        "#SNAPSHOT"
    );
    assert_eq!(
        ask(&mut core, &mut files, "#SNAPSHOT SHOT.PNG"),
        "#SNAPSHOT"
    );
    assert_eq!(files.0.len(), 2);
}
