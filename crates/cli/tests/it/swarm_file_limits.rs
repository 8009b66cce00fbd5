//! The largest swarm scenario file, and the largest map it names, is `--max-scenario-bytes`
//! on every command that reads a swarm scenario (`swarm run`, `coord compare`, `coord
//! swarm`): a file over it is refused before anything starts, the error naming the file, its
//! size, the limit and the flag; the same files run under the default.

use std::path::{Path, PathBuf};

use crate::support::{repo, run};

/// The error of a command that refused `file` under a limit of `max` bytes.
fn says_too_large(stderr: &str, file: &Path, max: u64) {
    let size = std::fs::metadata(file).expect("the file").len();
    for part in [
        file.display().to_string(),
        format!("{size} bytes"),
        format!("{max}-byte limit"),
        "--max-scenario-bytes BYTES".to_string(),
    ] {
        assert!(stderr.contains(&part), "{part:?} not in {stderr}");
    }
}

/// Each swarm command reading `scenario`, with `extra` flags.
fn commands<'a>(scenario: &'a str, extra: &[&'a str]) -> Vec<Vec<&'a str>> {
    let mut all = vec![
        vec!["swarm", "run", "--duration", "1", "--quiet", scenario],
        vec![
            "coord", "compare", "--seeds", "1", "--tasks", "1", "--quiet", "--json", scenario,
        ],
        // Robot ids past the largest: refused once the scenario is loaded, before the
        // Control Center is looked for.
        vec!["coord", "swarm", "--robot-id-base", "4294967295", scenario],
    ];
    for args in &mut all {
        args.extend_from_slice(extra);
    }
    all
}

#[test]
fn a_swarm_scenario_over_a_lowered_limit_is_refused_saying_how_to_raise_it() {
    let scenario = PathBuf::from(repo("scenarios/swarm/hospital.toml"));
    let path = scenario.to_string_lossy().to_string();
    for args in commands(&path, &["--max-scenario-bytes", "100"]) {
        let (ok, stdout, stderr) = run(&args);
        assert!(!ok, "{args:?} ran: {stdout}");
        says_too_large(&stderr, &scenario, 100);
        assert!(stdout.is_empty(), "{args:?} started: {stdout}");
    }
}

#[test]
fn a_map_over_the_limit_is_refused_though_its_scenario_is_within_it() {
    let scenario = PathBuf::from(repo("scenarios/swarm/hospital.toml"));
    let map = PathBuf::from(repo("scenarios/swarm/hospital.drawio"));
    let max = std::fs::metadata(&scenario).expect("the scenario").len();
    assert!(std::fs::metadata(&map).expect("the map").len() > max);
    let path = scenario.to_string_lossy().to_string();
    let max = max.to_string();
    for args in commands(&path, &["--max-scenario-bytes", &max]) {
        let (ok, stdout, stderr) = run(&args);
        assert!(!ok, "{args:?} ran: {stdout}");
        says_too_large(&stderr, &map, max.parse().expect("a number"));
        assert!(stderr.contains("the map"), "{stderr}");
    }
}

#[test]
fn the_same_swarm_scenario_runs_under_the_default_limit() {
    let path = repo("scenarios/swarm/hospital.toml");
    for args in commands(&path, &[]) {
        let (ok, stdout, stderr) = run(&args);
        assert!(!stderr.contains("byte limit"), "{args:?}: {stderr}");
        if args[1] == "swarm" {
            // (`coord swarm` stops at its robot ids: the scenario was read by then.)
            assert!(stderr.contains("--robot-id-base 4294967295"), "{stderr}");
        } else {
            assert!(ok, "{args:?}: {stderr}");
            assert!(!stdout.is_empty(), "{args:?} printed nothing");
        }
    }
}

#[test]
fn max_scenario_bytes_of_zero_is_refused_by_the_swarm_commands() {
    let path = repo("scenarios/swarm/hospital.toml");
    for args in commands(&path, &["--max-scenario-bytes", "0"]) {
        let (ok, _, stderr) = run(&args);
        assert!(!ok, "{args:?} ran");
        assert!(stderr.contains("--max-scenario-bytes"), "{stderr}");
    }
}
