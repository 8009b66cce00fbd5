//! `simrob coord compare --task-file`: the policies compared on the researcher's own tasks,
//! released at their times, preconditions kept; a bad file is refused with its line.

use std::process::Command;

fn simrob() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_simrob"));
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

fn task_file(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "simrob-coord-compare-{}-{name}",
        std::process::id()
    ));
    std::fs::write(&path, text).expect("task file");
    path
}

/// `simrob coord compare --scenario hospital --quiet --task-file FILE ARGS…`
fn compare_hospital(file: &std::path::Path, args: &[&str]) -> std::process::Output {
    let out = simrob()
        .args(["coord", "compare", "--scenario", "hospital", "--quiet"])
        .args(args)
        .arg("--task-file")
        .arg(file)
        .output()
        .expect("runs");
    let _ = std::fs::remove_file(file);
    out
}

#[test]
fn policies_are_compared_on_a_task_file() {
    let file = task_file(
        "hospital.txt",
        "# storage to room 1, the pharmacy to room 3; a look round once the first is done\n\
         0  path 505,115 110,115\n\
         0  path 210,390 700,115\n\
         5  perceive 2 after 1\n",
    );
    let out = compare_hospital(
        &file,
        &["--policies", "cnp,greedy", "--seeds", "1..2", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["tasks"], 3, "{v}");
    let policies = v["policies"].as_array().expect("policies");
    assert_eq!(policies.len(), 2);
    for p in policies {
        assert_eq!(p["completed"], 2, "{p}");
        assert_eq!(p["tasks_ended"]["mean"], 3.0, "{p}");
        // The look round waits for task 1, which takes a while to drive.
        assert!(p["makespan_s"]["min"].as_f64().unwrap() > 10.0, "{p}");
    }
}

#[test]
fn a_bad_task_file_is_refused_with_its_line() {
    let file = task_file("bad.txt", "0 goto 100 100\n0 perceive 2 after 4\n");
    let out = compare_hospital(&file, &["--seeds", "1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2") && err.contains("no task 4"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn no_tasks_is_refused_before_any_run() {
    let out = simrob()
        .args([
            "coord",
            "compare",
            "--scenario",
            "warehouse",
            "--seeds",
            "1..2",
            "--tasks",
            "0",
            "--quiet",
        ])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--tasks 0: no tasks to allocate"), "{err}");
    assert!(out.stdout.is_empty());
}
