//! Replays the fuzz corpus (`fuzz/corpus/<target>/`) through the fuzz targets' own entry points
//! (`fuzz/src/lib.rs`): every input that once found a crash, and every seed, must pass without
//! a fuzzer installed. Runs as an ordinary test in CI, and is CI's fuzz smoke run: one test per
//! target, and a check that no target in `fuzz/fuzz_targets/` is left out.

use crate::entry;

use std::path::PathBuf;

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn replay(target: &str, run: fn(&[u8])) {
    let dir = fuzz_dir().join("corpus").join(target);
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

/// One test per target (named after it), and the list of them.
macro_rules! targets {
    ($($name:ident),* $(,)?) => {
        const TARGETS: &[&str] = &[$(stringify!($name)),*];
        $(
            #[test]
            fn $name() {
                replay(stringify!($name), entry::$name);
            }
        )*
    };
}

targets!(
    simrob_xml,
    mrs_line,
    save_file,
    drawio,
    swarm_scenario,
    config,
    coord_wire,
    futrob_team
);

#[test]
fn every_target_is_replayed() {
    let dir = fuzz_dir().join("fuzz_targets");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let p = e.expect("entry").path();
            (p.extension()? == "rs").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    found.sort();
    let mut listed: Vec<String> = TARGETS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed, "fuzz targets without a corpus replay here");
    for t in TARGETS {
        let body = std::fs::read_to_string(dir.join(format!("{t}.rs"))).expect("read");
        assert!(
            body.contains(&format!("simrob_fuzz::{t}(")),
            "{t}.rs does not call simrob_fuzz::{t}"
        );
    }
}
