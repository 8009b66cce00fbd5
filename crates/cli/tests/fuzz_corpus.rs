//! Replays the fuzz corpus (`fuzz/corpus/<target>/`) through the fuzz targets' own entry points
//! (`fuzz/src/lib.rs`): every input that once found a crash, and every seed, must pass without
//! a fuzzer installed. Runs as an ordinary test in CI.

#[path = "../../../fuzz/src/lib.rs"]
mod entry;

use std::path::PathBuf;

fn replay(target: &str, run: fn(&[u8])) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no corpus in {}", dir.display());
    for f in files {
        let data = std::fs::read(&f).expect("read");
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(outcome.is_ok(), "{target}: {} crashed", f.display());
    }
}

#[test]
fn simrob_xml_corpus() {
    replay("simrob_xml", entry::simrob_xml);
}

#[test]
fn mrs_line_corpus() {
    replay("mrs_line", entry::mrs_line);
}

#[test]
fn save_file_corpus() {
    replay("save_file", entry::save_file);
}

#[test]
fn drawio_corpus() {
    replay("drawio", entry::drawio);
}

#[test]
fn swarm_scenario_corpus() {
    replay("swarm_scenario", entry::swarm_scenario);
}
