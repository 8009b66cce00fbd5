//! The tool's arguments, scenario files and libraries: what it refuses, with which message
//! and exit code, before any engine runs. Runs that time anything are kept to one SumBot and
//! a few dozen steps.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_simrob-odebench"));
    c.args(args);
    // What the calling environment sets (CI sets SIMROB_MUJOCO_LIB) is the test's choice.
    for v in ["SIMROB_MUJOCO_LIB", "SIMROB_MUJOCO_XML", "SIMROB_ODE_LIB"] {
        c.env_remove(v);
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("running simrob-odebench")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The run failed with exit code 1 and an error naming each of `words`, having printed no
/// table.
fn refused(args: &[&str], env: &[(&str, &str)], words: &[&str]) {
    let o = run(args, env);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {out}\n{err}");
    for w in words {
        assert!(err.contains(w), "{args:?}: no {w:?} in the error:\n{err}");
    }
    assert!(!out.contains('|'), "{args:?} printed a table:\n{out}");
}

/// libode is missing here (the tool says so): tests that need ODE pass without running,
/// unless `SIMROB_REQUIRE_ODE=1` (CI installs libode-dev and sets it), where that fails.
fn without_ode(o: &Output) -> bool {
    let (_, err) = text(o);
    if err.contains("libode (the Open Dynamics Engine) is not installed") {
        assert!(
            std::env::var("SIMROB_REQUIRE_ODE").as_deref() != Ok("1"),
            "SIMROB_REQUIRE_ODE=1 but libode is not installed: {err}"
        );
        eprintln!("not run: libode is not installed");
        return true;
    }
    false
}

/// MuJoCo's library: the one CI names, or python3's `mujoco` package.
fn mujoco_found() -> bool {
    let lib = std::env::var("SIMROB_MUJOCO_LIB").unwrap_or_default();
    let env: &[(&str, &str)] = if lib.is_empty() {
        &[]
    } else {
        &[("SIMROB_MUJOCO_LIB", lib.as_str())]
    };
    let o = run(
        &[
            "--crowd",
            "1",
            "--crowd-steps",
            "1",
            "--crowd-engine",
            "mujoco",
        ],
        env,
    );
    let found = o.status.success();
    if !found {
        assert!(
            std::env::var("SIMROB_REQUIRE_MUJOCO").as_deref() != Ok("1"),
            "MuJoCo is required here but: {}",
            text(&o).1
        );
        eprintln!("not run: MuJoCo's library is not found");
    }
    found
}

#[test]
fn values_past_their_bounds_are_refused_before_anything_runs() {
    let cases: [(&[&str], &[&str]); 12] = [
        (&["--layouts", "4294967295"], &["--layouts", "at most 1000"]),
        (&["--layouts", "1..1001"], &["--layouts", "more than 1000"]),
        (&["--layouts", "1..2000000"], &["--layouts", "1000000"]),
        (
            &["--crowd", "2", "--crowd-layouts", "100000000"],
            &["--crowd-layouts", "at most 100"],
        ),
        (&["--scale", "1e300"], &["--scale", "at most 100"]),
        (&["--scale", "inf"], &["--scale", "at most 100"]),
        (
            &["--crowd", "2", "--crowd-steps", "18446744073709551615"],
            &["--crowd-steps", "1000000"],
        ),
        (&["--crowd", "10001"], &["--crowd", "10000"]),
        (&["--layout-robots", "61"], &["--layout-robots", "60"]),
        (&["--layout-seconds", "3601"], &["--layout-seconds", "3600"]),
        (&["--sizes", "401"], &["--sizes", "400"]),
        (&["--sizes", "1,1,1,1,1,1,1,1,1"], &["--sizes", "at most 8"]),
    ];
    for (args, words) in cases {
        refused(args, &[], words);
    }
}

#[test]
fn an_option_given_twice_is_refused() {
    refused(
        &[
            "--engines",
            "fast",
            "--engines",
            "default",
            "--speed-only",
            "--sizes",
            "1",
            "--scale",
            "0.01",
        ],
        &[],
        &["--engines is given twice"],
    );
    refused(
        &[
            "--speed-only",
            "--engines",
            "fast",
            "--sizes",
            "1",
            "--scale",
            "0.01",
            "--speed-only",
        ],
        &[],
        &["--speed-only is given twice"],
    );
}

#[test]
fn options_the_mode_does_not_use_are_refused() {
    refused(
        &[
            "--threads",
            "2",
            "--crowd-layouts",
            "3",
            "--crowd-engine",
            "mujoco",
            "--speed-only",
            "--sizes",
            "1",
            "--scale",
            "0.01",
            "--engines",
            "fast",
        ],
        &[],
        &["--threads, --crowd-layouts and --crowd-engine do not apply without --crowd"],
    );
    refused(
        &[
            "--crowd",
            "2",
            "--crowd-steps",
            "1",
            "--check-mujoco",
            "--layouts",
            "5",
        ],
        &[],
        &["--layouts, --crowd and --crowd-steps do not apply to --check-mujoco"],
    );
    refused(
        &["--crowd", "2", "--engines", "fast", "--sizes", "1"],
        &[],
        &["--engines and --sizes do not apply to --crowd"],
    );
    refused(
        &[
            "--speed-only",
            "--engines",
            "fast",
            "--sizes",
            "1",
            "--scale",
            "0.01",
            "--layouts",
            "5",
            "--layout-robots",
            "10",
        ],
        &[],
        &["--layouts and --layout-robots do not apply when no random layouts run (--speed-only)"],
    );
    refused(
        &[
            "--engines",
            "fast",
            "--sizes",
            "1",
            "--scale",
            "0.01",
            "--layouts",
            "0",
            "--layout-seconds",
            "5",
        ],
        &[],
        &["--layout-seconds does not apply when no random layouts run (--layouts 0)"],
    );
    refused(
        &["--crowd", "2", "--crowd-engine", "mujoco", "--threads", "2"],
        &[],
        &["--crowd-engine mujoco runs on one thread"],
    );
}

/// A copy of the repository's scenario files, `file` replaced by `contents`.
fn scenarios_with(name: &str, file: &str, contents: &str) -> PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("odebench-scenarios-{name}"));
    std::fs::create_dir_all(&dir).expect("a scenario folder");
    for f in ["materials.xml", "field.xml", "ball.xml", "sumbot.xml"] {
        std::fs::copy(from.join(f), dir.join(f)).expect("copying a scenario file");
    }
    std::fs::write(dir.join(file), contents).expect("writing a scenario file");
    dir
}

fn ball_xml() -> String {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/ball.xml");
    std::fs::read_to_string(from).expect("scenarios/ball.xml")
}

#[test]
fn a_bad_scenario_file_is_refused_the_same_by_every_engine() {
    let ball = ball_xml();
    assert!(ball.contains("<Radius>0.03</Radius>") && ball.contains("<Mass>0.6</Mass>"));
    let cases = [
        (
            "radius-0",
            "ball.xml",
            ball.replace("<Radius>0.03</Radius>", "<Radius>0</Radius>"),
            "ball.xml: entity 8, body 0: Radius must be a positive number of metres, not 0",
        ),
        (
            "radius-negative",
            "ball.xml",
            ball.replace("<Radius>0.03</Radius>", "<Radius>-0.03</Radius>"),
            "Radius must be a positive number of metres, not -0.03",
        ),
        (
            "mass-0",
            "ball.xml",
            ball.replace("<Mass>0.6</Mass>", "<Mass>0</Mass>"),
            "ball.xml: entity 8, body 0: Mass must be positive (kg) or -1 (static), not 0",
        ),
        (
            "mass-static",
            "ball.xml",
            ball.replace("<Mass>0.6</Mass>", "<Mass>-1</Mass>"),
            "the ball's Mass is -1 (static)",
        ),
        (
            "sumbot-is-a-ball",
            "sumbot.xml",
            ball.replace("<Entity_id>8</Entity_id>", "<Entity_id>100</Entity_id>"),
            "sumbot.xml: entity 100 is a Ball, not a Robot",
        ),
    ];
    for (name, file, contents, why) in cases {
        let dir = scenarios_with(name, file, &contents);
        let dir = dir.to_str().expect("a UTF-8 path");
        for engines in ["ode-step", "ode-quick", "default", "fast", "mujoco"] {
            refused(
                &[
                    "--scenarios",
                    dir,
                    "--engines",
                    engines,
                    "--speed-only",
                    "--sizes",
                    "1",
                    "--scale",
                    "0.01",
                ],
                &[],
                &[why],
            );
        }
        refused(&["--scenarios", dir, "--crowd", "1"], &[], &[why]);
        refused(&["--scenarios", dir, "--check-mujoco"], &[], &[why]);
    }
}

#[test]
fn layout_ranges_run_those_layouts_only() {
    let crowd = |layouts: &str| {
        let o = run(
            &[
                "--crowd",
                "3",
                "--crowd-steps",
                "2",
                "--crowd-layouts",
                layouts,
            ],
            &[],
        );
        let (out, err) = text(&o);
        assert!(o.status.success(), "{out}\n{err}");
        out.lines()
            .map(|l| {
                let layout = l.split(", ").nth(1).unwrap_or("").to_string();
                let digest = l.rsplit(' ').next().unwrap_or("").to_string();
                (layout, digest)
            })
            .collect::<Vec<_>>()
    };
    let all = crowd("3");
    let tail = crowd("2..3");
    assert_eq!(
        all.iter().map(|l| l.0.as_str()).collect::<Vec<_>>(),
        ["random layout 1", "random layout 2", "random layout 3"]
    );
    // The same layouts, the same runs.
    assert_eq!(tail, all[1..]);
}

#[test]
fn the_crowd_never_prints_an_infinite_rate() {
    let o = run(&["--crowd", "1", "--crowd-steps", "1"], &[]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("processor s ("), "{out}");
    assert!(!out.contains("inf"), "{out}");
}

#[test]
fn ode_is_loaded_only_for_an_ode_engine() {
    let missing = "/nonexistent/libode.so";
    let quick = ["--speed-only", "--sizes", "1", "--scale", "0.01"];
    let o = run(
        &[&["--engines", "default,fast"][..], &quick[..]].concat(),
        &[("SIMROB_ODE_LIB", missing)],
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("| 1 |"), "{out}");
    refused(
        &[&["--engines", "ode-quick,fast"][..], &quick[..]].concat(),
        &[("SIMROB_ODE_LIB", missing)],
        &["SIMROB_ODE_LIB", missing, "--engines default,fast,mujoco"],
    );
}

#[test]
fn ode_step_at_100_says_why_it_is_not_timed() {
    let o = run(
        &[
            "--engines",
            "ode-step",
            "--sizes",
            "100",
            "--speed-only",
            "--scale",
            "0.01",
        ],
        &[],
    );
    if without_ode(&o) {
        return;
    }
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}\n{err}");
    assert!(
        out.contains("too slow") && out.contains("--exact-100"),
        "{out}"
    );
}

#[test]
fn mujoco_asked_for_and_not_found_fails() {
    let missing = "/nonexistent/libmujoco.so";
    let env = [("SIMROB_MUJOCO_LIB", missing)];
    refused(&["--check-mujoco"], &env, &["SIMROB_MUJOCO_LIB", missing]);
    refused(
        &["--crowd", "1", "--crowd-engine", "mujoco"],
        &env,
        &["SIMROB_MUJOCO_LIB", missing],
    );
    // Set, it is the only place looked, even when MuJoCo would only join if found.
    refused(
        &["--speed-only", "--sizes", "1", "--scale", "0.01"],
        &env,
        &["SIMROB_MUJOCO_LIB", missing, "only place"],
    );
}

#[test]
fn a_mujoco_model_that_cannot_be_written_is_an_error() {
    if !mujoco_found() {
        return;
    }
    let lib = std::env::var("SIMROB_MUJOCO_LIB").unwrap_or_default();
    let mut env = vec![("SIMROB_MUJOCO_XML", "/nonexistent/model.xml")];
    if !lib.is_empty() {
        env.push(("SIMROB_MUJOCO_LIB", lib.as_str()));
    }
    refused(
        &["--check-mujoco"],
        &env,
        &["SIMROB_MUJOCO_XML", "/nonexistent/model.xml"],
    );
}
