//! What a newcomer meets first: errors that say what to do, and nothing that only looks
//! like it worked.

use crate::support::{repo, simrob};

#[test]
fn run_refuses_a_timestep_the_server_would_refuse() {
    let out = simrob()
        .args(["run", &repo("scenarios/soccer.xml"), "--timestep", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--timestep 5") && err.contains("maxtimestep"),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing ran");
}

#[test]
fn run_names_the_command_for_a_swarm_scenario() {
    let out = simrob()
        .args(["run", &repo("scenarios/swarm/hospital.toml")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is a swarm scenario"), "{err}");
    assert!(err.contains("simrob swarm run"), "{err}");
}

#[test]
fn an_error_is_a_message_without_a_backtrace_even_with_rust_backtrace_set() {
    let out = simrob()
        .args(["run", "no-such-scenario.xml"])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("Error: cannot read scenario no-such-scenario.xml"),
        "{err}"
    );
    assert!(!err.to_lowercase().contains("backtrace"), "{err}");
}

#[test]
fn serve_help_names_the_format_record_writes() {
    let out = simrob().args(["serve", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    let record = help
        .split("--record <FILE>")
        .nth(1)
        .and_then(|rest| rest.split("\n      --").next())
        .expect("serve --help documents --record");
    assert!(record.contains("compact"), "{record}");
    assert!(!record.contains("JSON lines"), "{record}");
}

#[test]
fn a_recording_serve_paces_at_real_time_unless_told_otherwise() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-record-pace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let first_line = |extra: &[&str]| {
        let mut child = simrob()
            .args(["serve", "--port", "0", "--record"])
            .arg(dir.join("run.simrec"))
            .args(extra)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let _ = child.kill();
        let _ = child.wait();
        line
    };
    assert_eq!(
        first_line(&[]).trim(),
        "pacing at real time for the recording (--speed 0: as fast as possible)"
    );
    assert!(first_line(&["--speed", "0"]).starts_with("listening on udp://"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serve_refuses_a_pace_too_slow_for_a_clock_before_it_starts() {
    // `--speed 1e-300` (or `realtimefactor 1e-300`) made the next iteration due in more
    // seconds than a clock holds: the server panicked on its first iteration.
    let dir = std::env::temp_dir().join(format!("simrob-cli-slow-pace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("Configuration.data");
    std::fs::write(&config, "realtimefactor 1e-300\n").unwrap();
    let speed = ["--speed", "1e-300"];
    let file = ["--config", config.to_str().unwrap()];
    // The flag does not parse (exit 2, clap's words, as on every command); the key is refused
    // when the configuration is read (exit 1).
    let from_flag = "invalid value '1e-300' for '--speed <F>': simulated seconds per wall second: 0 (as fast as possible) or a number of at least 0.000001";
    let from_key = "a pace of 1e-300 (--speed or the configuration key `realtimefactor`) is too slow: 0 (as fast as possible) or at least 0.000001";
    for (extra, code, says) in [(&speed[..], 2, from_flag), (&file[..], 1, from_key)] {
        // With a scenario the world is started, so an unrefused pace panicked at once.
        let out = simrob()
            .args(["serve", "--port", "0", "--scenario"])
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../scenarios/soccer.xml"
            ))
            .args(extra)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_refuses_wheel_speeds_and_print_periods_out_of_range_before_it_starts() {
    for (flag, value, why, code) in [
        // A value out of the flag's own range: the command line does not parse.
        ("--wheel-speed", "-1", "greater than 0, got '-1'", 2),
        ("--wheel-speed", "0", "greater than 0, got '0'", 2),
        ("--every-seconds", "3601", "from 0 to 3600 seconds", 2),
        ("--every-seconds", "1e308", "from 0 to 3600 seconds", 2),
        // Past the limit of the demo's own server (none with --server).
        (
            "--wheel-speed",
            "1e308",
            "--wheel-speed 1e308: is more than the server's limit",
            1,
        ),
    ] {
        let out = simrob()
            .args(["demo", "--no-gui", flag, value])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{flag} {value}: {err}");
        assert!(
            err.contains(flag) && err.contains(why),
            "{flag} {value}: {err}"
        );
        assert!(out.stdout.is_empty(), "{flag} {value}: nothing started");
    }
    // Not a number at all: the command line does not parse.
    for value in ["NaN", "inf", "six"] {
        let out = simrob()
            .args(["demo", "--no-gui", "--wheel-speed", value])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value}: {err}");
        assert!(
            err.contains(&format!("expected a number, got '{value}'")),
            "{err}"
        );
    }
}

/// A directory of its own, empty: no `scenarios/` to find there.
fn empty_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("simrob-newcomer-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn run_without_a_scenario_runs_the_built_in_one_from_any_directory() {
    let dir = empty_dir("run");
    let out = simrob()
        .args(["run", "--iterations", "10", "--every", "0"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let text = crate::support::ok(out);
    assert!(
        text.starts_with("scenarios/soccer.xml (built in): 3 entities"),
        "{text}"
    );
    let out = simrob()
        .args(["run", "--iterations", "10", "--json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_str(&crate::support::ok(out)).unwrap();
    assert_eq!(json["scenario"], "scenarios/soccer.xml (built in)");
    assert!(json["entities"]["3"]["x"].is_number(), "{json}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn swarm_run_takes_a_bundled_scenario_by_name_from_any_directory() {
    let dir = empty_dir("swarm");
    for name in ["hospital", "drone-swarm", "warehouse"] {
        let out = simrob()
            .args(["swarm", "run", name, "--duration", "0.5"])
            .args(["--json", "--quiet"])
            .args(if name == "hospital" {
                &[][..]
            } else {
                &["--robots", "4"][..]
            })
            .current_dir(&dir)
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_str(&crate::support::ok(out)).unwrap();
        assert!(
            json["robots"].as_u64().is_some_and(|n| n > 0),
            "{name}: {json}"
        );
    }
    let out = simrob()
        .args(["swarm", "run", "hospitl"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("hospitl: no such file, and not a bundled scenario")
            && err.contains("drone-swarm, hospital, warehouse"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn coord_compare_takes_a_bundled_scenario_by_name_from_any_directory() {
    let dir = empty_dir("compare");
    let out = simrob()
        .args(["coord", "compare", "warehouse", "--seeds", "1..1"])
        .args(["--policies", "greedy", "--robots", "4"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let table = crate::support::ok(out);
    assert!(table.contains("| greedy | 1/1 |"), "{table}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_docs_ask_for_the_rust_version_cargo_toml_declares() {
    let manifest = std::fs::read_to_string(repo("Cargo.toml")).unwrap();
    let manifest: toml::Value = toml::from_str(&manifest).unwrap();
    let version = manifest["workspace"]["package"]["rust-version"]
        .as_str()
        .expect("the workspace's rust-version");
    for page in ["README.md", "docs/getting-started.md", "docs/python.md"] {
        let text = std::fs::read_to_string(repo(page)).unwrap();
        assert!(
            text.contains(&format!("({version} or newer")),
            "{page} does not ask for Rust {version} or newer"
        );
    }
}

#[test]
fn simrob_load_without_a_scenario_serves_the_built_in_one_from_any_directory() {
    let dir = empty_dir("load");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_simrob-load"))
        .args(["--agents", "2", "--rate", "10", "--seconds", "0.1"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let text = crate::support::ok(out);
    assert!(text.contains("server memory"), "{text}");
    let _ = std::fs::remove_dir_all(&dir);
}
