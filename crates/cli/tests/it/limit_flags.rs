//! The limits that guard memory are flags, each a user can lower or raise: the robots and
//! grid cells of a swarm world (`--max-robots`, `--max-grid-cells` on `swarm run`, `swarm
//! bench`, `coord compare` and `coord swarm`), the tasks `coord compare` draws
//! (`--max-tasks`) and the map files `simrob mrs` reads (`--max-map-bytes`). A value below
//! what an input needs refuses it, naming the limit and the flag; the default takes it.

use std::path::PathBuf;

use crate::support::{repo, run};

/// Each command that builds a swarm world from `scenario`, with `extra` flags.
fn commands<'a>(scenario: &'a str, extra: &[&'a str]) -> Vec<Vec<&'a str>> {
    let mut all = vec![
        vec!["swarm", "run", "--duration", "1", "--quiet", scenario],
        vec![
            "coord",
            "compare",
            "--seeds",
            "1",
            "--tasks",
            "1",
            "--max-time",
            "5",
            "--quiet",
            "--json",
            scenario,
        ],
        // Robot ids past the largest: refused once the world is built, before the Control
        // Center is looked for.
        vec!["coord", "swarm", "--robot-id-base", "4294967295", scenario],
    ];
    for args in &mut all {
        args.extend_from_slice(extra);
    }
    all
}

/// Whether `args` got as far as its world being built: `coord swarm` then stops at its
/// robot ids, the others run to their end.
fn built(args: &[&str], ok: bool, stderr: &str) -> bool {
    if args[0] == "coord" && args[1] == "swarm" {
        stderr.contains("--robot-id-base 4294967295")
    } else {
        ok
    }
}

#[test]
fn max_robots_lowers_and_raises_the_robots_of_a_generated_scenario() {
    let warehouse = repo("scenarios/swarm/warehouse.toml");
    for args in commands(&warehouse, &["--robots", "3", "--max-robots", "2"]) {
        let (ok, stdout, stderr) = run(&args);
        assert!(!ok, "{args:?} ran: {stdout}");
        assert!(
            stderr.contains(
                "3 robots is more than the warehouse's limit of 2: raise it with --max-robots N"
            ),
            "{args:?}: {stderr}"
        );
    }
    for args in commands(&warehouse, &["--robots", "3"]) {
        let (ok, _, stderr) = run(&args);
        assert!(built(&args, ok, &stderr), "{args:?}: {stderr}");
    }
    for args in commands(&warehouse, &["--robots", "3", "--max-robots", "3"]) {
        let (ok, _, stderr) = run(&args);
        assert!(built(&args, ok, &stderr), "{args:?}: {stderr}");
    }
    // Past the warehouse's default of 2,000,000: refused by the default, naming the flag (and
    // nothing built, so the test stays small).
    let (ok, _, stderr) = run(&["swarm", "run", "--quiet", &warehouse, "--robots", "2000001"]);
    assert!(!ok);
    assert!(
        stderr.contains("limit of 2000000: raise it with --max-robots N"),
        "{stderr}"
    );
    // The drone swarm.
    let drones = repo("scenarios/swarm/drone-swarm.toml");
    let (ok, _, stderr) = run(&[
        "swarm",
        "run",
        "--quiet",
        "--duration",
        "1",
        &drones,
        "--robots",
        "5",
        "--max-robots",
        "4",
    ]);
    assert!(!ok);
    assert!(
        stderr.contains(
            "5 drones is more than the drone swarm's limit of 4: raise it with --max-robots N"
        ),
        "{stderr}"
    );
    let (ok, _, stderr) = run(&[
        "swarm",
        "run",
        "--quiet",
        "--duration",
        "1",
        &drones,
        "--robots",
        "5",
    ]);
    assert!(ok, "{stderr}");
}

#[test]
fn max_robots_holds_the_sizes_of_swarm_bench() {
    let bench = [
        "swarm",
        "bench",
        "--duration",
        "0.5",
        "--avoidance",
        "orca",
        "--sizes",
        "1,5",
    ];
    let (ok, stdout, stderr) = run(&[&bench[..], &["--max-robots", "4"]].concat());
    assert!(!ok, "ran: {stdout}");
    assert!(
        stderr.contains("--sizes: 5 drones is more than the drone swarm's limit of 4: raise it with --max-robots N"),
        "{stderr}"
    );
    // Checked before the first size is run.
    assert!(stdout.is_empty(), "{stdout}");
    let (ok, _, stderr) = run(&bench);
    assert!(ok, "{stderr}");
}

#[test]
fn max_grid_cells_lowers_and_raises_the_cells_of_a_swarm_world() {
    let hospital = repo("scenarios/swarm/hospital.toml");
    for args in commands(&hospital, &["--max-grid-cells", "1"]) {
        let (ok, stdout, stderr) = run(&args);
        assert!(!ok, "{args:?} ran: {stdout}");
        assert!(
            stderr.contains("grid cells, more than 1:")
                && stderr.contains("raise the limit with --max-grid-cells N"),
            "{args:?}: {stderr}"
        );
    }
    for args in commands(&hospital, &[]) {
        let (ok, _, stderr) = run(&args);
        assert!(built(&args, ok, &stderr), "{args:?}: {stderr}");
    }
    // A world of 10,000 cells, past a lowered limit and within a raised one.
    let dir = std::env::temp_dir().join(format!("simrob-grid-cells-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory");
    let file = dir.join("grid.toml");
    std::fs::write(
        &file,
        "duration = 1\n[world]\nwidth = 100\nheight = 100\ncell_size = 1\n",
    )
    .expect("a scenario");
    let path = file.to_string_lossy().to_string();
    let (ok, _, stderr) = run(&["swarm", "run", "--quiet", &path, "--max-grid-cells", "9999"]);
    assert!(!ok && stderr.contains("more than 9999:"), "{stderr}");
    let (ok, _, stderr) = run(&[
        "swarm",
        "run",
        "--quiet",
        &path,
        "--max-grid-cells",
        "10000",
    ]);
    assert!(ok, "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn max_tasks_lowers_and_raises_the_tasks_coord_compare_draws() {
    let hospital = repo("scenarios/swarm/hospital.toml");
    let compare = [
        "coord",
        "compare",
        "--seeds",
        "1",
        "--max-time",
        "5",
        "--quiet",
        "--json",
        &hospital,
    ];
    let (ok, stdout, stderr) = run(&[&compare[..], &["--tasks", "2", "--max-tasks", "1"]].concat());
    assert!(!ok, "ran: {stdout}");
    assert!(
        stderr.contains("2 tasks is more than the limit of 1: raise it with --max-tasks N"),
        "{stderr}"
    );
    // Four a robot when --tasks is left out: held to the limit too.
    let (ok, _, stderr) = run(&[&compare[..], &["--max-tasks", "1"]].concat());
    assert!(!ok && stderr.contains("--max-tasks N"), "{stderr}");
    for extra in [&["--tasks", "2"][..], &["--tasks", "2", "--max-tasks", "2"]] {
        let (ok, _, stderr) = run(&[&compare[..], extra].concat());
        assert!(ok, "{extra:?}: {stderr}");
    }
    let (ok, _, stderr) = run(&[&compare[..], &["--max-tasks", "0"]].concat());
    assert!(!ok && stderr.contains("--max-tasks"), "{stderr}");
}

#[test]
fn max_map_bytes_lowers_and_raises_the_maps_mrs_reads() {
    let dir = std::env::temp_dir().join(format!("simrob-map-bytes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory");
    let example = PathBuf::from(repo("maps/example.txt"));
    let size = std::fs::metadata(&example).expect("the map").len();
    let map = dir.join("example.txt");
    std::fs::copy(&example, &map).expect("a copy");
    let small = size.to_string();
    let under = (size - 1).to_string();
    let snap = dir.join("snap.png");
    let snap_s = snap.to_string_lossy().to_string();
    let map_s = map.to_string_lossy().to_string();
    // --map and --merge: refused at start under a lowered limit, naming the file, its size,
    // the limit and the flag.
    for flag in ["--map", "--merge"] {
        let (ok, _, stderr) = run(&[
            "mrs",
            flag,
            &map_s,
            "--snapshot",
            &snap_s,
            "--max-map-bytes",
            &under,
        ]);
        assert!(!ok, "{flag}");
        let says = format!(
            "map {map_s} is {size} bytes, more than the {under}-byte limit: raise it with --max-map-bytes BYTES"
        );
        assert!(stderr.contains(&says), "{flag}: {stderr}");
        assert!(!snap.exists());
        for limit in [&["--max-map-bytes", &small][..], &[]] {
            let (ok, _, stderr) =
                run(&[&["mrs", flag, &map_s, "--snapshot", &snap_s][..], limit].concat());
            assert!(ok, "{flag} {limit:?}: {stderr}");
            assert!(snap.exists());
            std::fs::remove_file(&snap).expect("the picture");
        }
    }
    // #LOAD and #MERGE: the client that names a map over it is told, the server goes on.
    let dir_s = dir.to_string_lossy().to_string();
    let (child, _out, mut c) =
        crate::mrs_cli::serve(&["--stepped", "--map-dir", &dir_s, "--max-map-bytes", &under]);
    for cmd in ["#LOAD example.txt", "#MERGE example.txt"] {
        let reply = crate::mrs_cli::ask(&mut c, cmd);
        assert!(
            reply.starts_with("E ")
                && reply.contains(&format!(
                    "{under}-byte limit: raise it with --max-map-bytes BYTES"
                )),
            "{cmd}: {reply}"
        );
    }
    drop(c);
    drop(child);
    // The default reads it.
    let (child, _out, mut c) = crate::mrs_cli::serve(&["--stepped", "--map-dir", &dir_s]);
    assert_eq!(crate::mrs_cli::ask(&mut c, "#LOAD example.txt"), "#LOAD");
    drop(c);
    drop(child);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The Control Center of a comparison run refused every task past its own table's default
/// (1,000,000), once the run had gone by: `--tasks` past it always failed, whatever the
/// limit said. The run's tables are now as large as the run.
#[test]
fn coord_compare_runs_more_tasks_than_a_control_centers_default_table() {
    let hospital = repo("scenarios/swarm/hospital.toml");
    let (ok, stdout, stderr) = run(&[
        "coord",
        "compare",
        "--seeds",
        "1",
        "--max-time",
        "1",
        "--policies",
        "greedy",
        "--quiet",
        "--json",
        "--tasks",
        "1000001",
        &hospital,
    ]);
    assert!(ok, "{stderr}");
    assert!(!stderr.contains("refused"), "{stderr}");
    assert!(stdout.contains("\"tasks\": 1000001"), "{stdout}");
}
