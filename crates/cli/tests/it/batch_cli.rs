//! `simrob batch`, `simrob plot` and `simrob completions` as a user runs them: a real sweep
//! of `simrob swarm run`, a failing run, an interrupted sweep resumed, Slurm chunks merged,
//! figures written.

use crate::support::ok;
use std::path::{Path, PathBuf};
use std::process::Command;

fn simrob() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_simrob"));
    c.current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    c
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("simrob-batch-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `text` as `dir/sweep.toml`.
fn sweep_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("sweep.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Two scenarios (one missing) × two seeds × two durations: 8 runs, 4 of them failing.
fn write_sweep(dir: &Path) -> PathBuf {
    sweep_file(
        dir,
        r#"
name = "test"
command = ["swarm", "run", "{scenario}", "--seed", "{seed}", "--duration", "{duration}", "--json", "--quiet"]
scenarios = ["scenarios/swarm/hospital.toml", "scenarios/swarm/missing.toml"]
seeds = [1, 2]
metrics = ["tasks_done", "collisions", "robots"]
[parameters]
duration = [5, 60]
"#,
    )
}

/// The standard output of a sweep some of whose runs failed: exit status 1, saying how many
/// and that --retry-failed runs them again.
fn with_failures(out: std::process::Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("runs failed (their rows say why): --retry-failed runs them again"),
        "{err}"
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// The CSV without its wall-time column.
fn without_wall(csv: &str) -> Vec<String> {
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let i = rows[0].iter().position(|c| *c == "wall_s").expect("wall_s");
    rows.iter()
        .map(|r| {
            let mut r = r.clone();
            r.remove(i);
            r.join(",")
        })
        .collect()
}

#[test]
fn a_sweep_runs_records_failures_resumes_and_merges_chunks() {
    let dir = scratch("sweep");
    let sweep = write_sweep(&dir);
    let out = dir.join("out");
    let printed = with_failures(
        simrob()
            .arg("batch")
            .arg(&sweep)
            .arg("--out")
            .arg(&out)
            .args(["--jobs", "2", "--quiet"])
            .output()
            .unwrap(),
    );
    assert!(
        printed.contains(
            "8 runs: 4 succeeded, 4 failed (--retry-failed runs them again); this time 8 ran, 4 of them failed"
        ),
        "{printed}"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "run,scenario,seed,duration,tasks_done,collisions,robots,wall_s,status,exit_code,error"
    );
    assert_eq!(rows.len(), 9);
    let hospital: Vec<&str> = rows[1..]
        .iter()
        .copied()
        .filter(|r| r.contains(",scenarios/swarm/hospital.toml,"))
        .collect();
    assert_eq!(hospital.len(), 4);
    for r in &hospital {
        let c: Vec<&str> = r.split(',').collect();
        assert_eq!((c[6], c[8], c[9]), ("3", "ok", "0"), "{r}");
    }
    // The 60 s runs finish the hospital's three deliveries; 5 s are not enough.
    assert!(hospital.iter().any(|r| r.contains(",1,60,3,")), "{csv}");
    let missing: Vec<&str> = rows[1..]
        .iter()
        .copied()
        .filter(|r| r.contains("missing"))
        .collect();
    assert_eq!(missing.len(), 4);
    assert!(missing.iter().all(|r| r.contains(",failed,1,")), "{csv}");
    assert!(
        missing[0].contains("missing.toml"),
        "the error says why: {}",
        missing[0]
    );
    let jsonl = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let first: serde_json::Value = serde_json::from_str(jsonl.lines().next().unwrap()).unwrap();
    assert_eq!(
        (first["run"].as_u64(), first["seed"].as_u64()),
        (Some(0), Some(1))
    );
    assert_eq!(first["duration"], 5);

    // Interrupted after three runs: the same command does only the rest.
    let kept: String = jsonl.lines().take(3).map(|l| format!("{l}\n")).collect();
    std::fs::write(out.join("results.jsonl"), kept).unwrap();
    let err = simrob()
        .arg("batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&err.stderr).into_owned();
    // The failures recorded before are still failures, and said to be.
    let printed = with_failures(err);
    assert!(
        printed.contains(
            "8 runs: 4 succeeded, 4 failed (--retry-failed runs them again); this time 5 ran"
        ),
        "{printed}"
    );
    // Run again, nothing to do: the failures recorded before are still said to be.
    let printed = with_failures(
        simrob()
            .arg("batch")
            .arg(&sweep)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap(),
    );
    assert!(
        printed.contains(
            "8 runs: 4 succeeded, 4 failed (--retry-failed runs them again); none ran this time"
        ),
        "{printed}"
    );
    assert!(
        stderr.contains("8 runs, 5 to do (3 already done)"),
        "{stderr}"
    );
    let again = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(without_wall(&again), without_wall(&csv));
    // Failed runs are tried again only when asked.
    let err = simrob()
        .arg("batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .arg("--retry-failed")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&err.stderr).contains("4 to do (4 already done)"));

    // The same sweep as Slurm array tasks of 3 runs, run by hand, then merged.
    let cluster = dir.join("cluster");
    let printed = ok(simrob()
        .arg("batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&cluster)
        .args([
            "--slurm",
            "--chunk-size",
            "3",
            "--max-parallel",
            "2",
            "--partition",
            "short",
            "--time",
            "00:05:00",
            "--mem",
            "1G",
        ])
        .output()
        .unwrap());
    assert!(printed.contains("8 runs in 3 array tasks"), "{printed}");
    let script = std::fs::read_to_string(cluster.join("sweep.sbatch")).unwrap();
    for line in [
        "#SBATCH --array=0-2%2",
        "#SBATCH --partition=short",
        "#SBATCH --time=00:05:00",
        "#SBATCH --mem=1G",
        "--chunk \"$SLURM_ARRAY_TASK_ID\" --chunk-size 3",
        "on ${SLURMD_NODENAME:-$(hostname)}\" >&2",
    ] {
        assert!(script.contains(line), "{line} not in\n{script}");
    }
    // Collected before any array task has run: nothing yet, every run still to come.
    let printed = ok(simrob()
        .args(["batch", "collect"])
        .arg(&cluster)
        .output()
        .unwrap());
    assert!(printed.contains("0 rows from 0 files"), "{printed}");
    assert!(
        printed.contains("8 of 8 runs have no result yet"),
        "{printed}"
    );
    for k in 0..3 {
        // Chunk 0 is the hospital's; 1 and 2 hold the missing scenario's runs, which fail.
        let o = simrob()
            .arg("batch")
            .arg(&sweep)
            .arg("--out")
            .arg(&cluster)
            .args(["--chunk", &k.to_string(), "--chunk-size", "3", "--quiet"])
            .output()
            .unwrap();
        if k == 0 {
            ok(o);
        } else {
            with_failures(o);
        }
        let printed = ok(simrob()
            .args(["batch", "collect"])
            .arg(&cluster)
            .output()
            .unwrap());
        if k < 2 {
            assert!(printed.contains("runs have no result yet"), "{printed}");
        }
    }
    let merged = std::fs::read_to_string(cluster.join("results.csv")).unwrap();
    assert_eq!(without_wall(&merged), without_wall(&csv));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_sweeps_change_nothing() {
    let dir = scratch("bad");
    let sweep = dir.join("bad.toml");
    std::fs::write(&sweep, "command = [\"swarm\", \"run\", \"{scenery}\"]\n").unwrap();
    let out = simrob()
        .arg("batch")
        .arg(&sweep)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("no value for {scenery}"), "{e}");
    assert!(!dir.join("out").exists());
    // A SIMROB_THREADS that every run would fail on.
    let sweep = write_sweep(&dir);
    let out = simrob()
        .arg("batch")
        .arg(&sweep)
        .arg("--out")
        .arg(dir.join("out"))
        .env("SIMROB_THREADS", "0")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("SIMROB_THREADS is a number of threads (1 to 64), not \"0\""),
        "{e}"
    );
    assert!(!dir.join("out").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sweep_cannot_write_elsewhere_nor_script_a_command_nor_take_the_memory() {
    let dir = scratch("hostile");
    let cwd = dir.join("a/b");
    std::fs::create_dir_all(&cwd).unwrap();
    let refused = |text: &str, extra: &[&str]| {
        let sweep = sweep_file(&dir, text);
        let out = simrob()
            .current_dir(&cwd)
            .arg("batch")
            .arg(&sweep)
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // A name leading out of results/ (to a/escaped), or an absolute one.
    for name in ["../../escaped", "/tmp/simrob-escaped"] {
        let text = format!("name = {name:?}\ncommand = [\"swarm\", \"run\", \"x.toml\"]\n");
        let e = refused(&text, &["--slurm"]);
        assert!(e.contains("name") && e.contains("results/NAME"), "{e}");
    }
    assert!(!dir.join("a/escaped").exists());
    // A line break in the name once put a line of its own, a command, into sweep.sbatch.
    let e = refused(
        "name = \"x\\nrm -rf ~\"\ncommand = [\"swarm\", \"run\", \"x.toml\"]\n",
        &["--slurm"],
    );
    assert!(e.contains("name"), "{e}");
    // And in --out.
    let sweep = sweep_file(&dir, "command = [\"swarm\", \"run\", \"x.toml\"]\n");
    let out = simrob()
        .arg("batch")
        .arg(&sweep)
        .arg("--slurm")
        .arg("--out")
        .arg(dir.join("x\nrm -rf ~"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("control character"));
    assert!(!dir.join("x\nrm -rf ~/sweep.sbatch").exists());
    // A 900 kB argument times a million seeds once aborted the process (out of memory): a
    // clear refusal now, before anything is made.
    let e = refused(
        &format!(
            "command = [\"swarm\", \"run\", \"{}\"]\nseeds = {{ from = 1, count = 1000000 }}\n",
            "x".repeat(900_000)
        ),
        &["--dry-run"],
    );
    assert!(e.contains("at most 268435456 bytes"), "{e}");
    // NaN is not an argument.
    let e = refused(
        "command = [\"swarm\", \"run\", \"{x}\"]\n[parameters]\nx = [nan]\n",
        &["--dry-run"],
    );
    assert!(e.contains("NaN is not a finite number"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `threads` each run of a sweep of `swarm run` reported, run with `-j jobs` and the
/// sweep's environment holding `env` as `SIMROB_THREADS`.
fn threads_per_run(name: &str, jobs: usize, env: Option<&str>) -> Vec<u64> {
    let dir = scratch(name);
    let sweep = sweep_file(
        &dir,
        r#"
name = "threads"
command = ["swarm", "run", "scenarios/swarm/drone-swarm.toml", "--robots", "{robots}", "--duration", "1", "--json", "--quiet"]
metrics = ["threads"]
[parameters]
robots = [5, 6, 7]
"#,
    );
    let mut c = simrob();
    c.arg("batch")
        .arg(&sweep)
        .arg("--out")
        .arg(dir.join("out"))
        .args(["--quiet", "-j", &jobs.to_string()])
        .env_remove("SIMROB_THREADS");
    if let Some(e) = env {
        c.env("SIMROB_THREADS", e);
    }
    ok(c.output().unwrap());
    let jsonl = std::fs::read_to_string(dir.join("out/results.jsonl")).unwrap();
    let threads = jsonl
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["status"], "ok", "{v}");
            v["threads"].as_u64().expect("threads")
        })
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    threads
}

#[test]
fn each_run_of_a_sweep_gets_its_share_of_the_cores() {
    // Runs side by side share the cores instead of each taking them all.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(threads_per_run("share-all", cores, None), vec![1; 3]);
    assert_eq!(threads_per_run("share-one", 1, None), vec![cores as u64; 3]);
    // A sweep's own SIMROB_THREADS is every run's.
    assert_eq!(threads_per_run("share-env", 1, Some("3")), vec![3; 3]);
}

#[test]
fn figures_are_written_as_png_and_svg() {
    let dir = scratch("plot");
    let csv = dir.join("results.csv");
    std::fs::write(
        &csv,
        "run,seed,robots,crashed,wall_s,status,exit_code,error\n\
         0,1,10,1,0.1,ok,0,\n1,2,10,3,0.1,ok,0,\n2,1,20,4,0.1,ok,0,\n3,2,20,8,0.1,ok,0,\n\
         4,3,20,,0.1,failed,1,boom\n",
    )
    .unwrap();
    let png = dir.join("crashes.png");
    ok(simrob()
        .args(["plot", "batch"])
        .arg(&csv)
        .args(["--x", "robots", "--y", "crashed", "--size", "800x600", "-o"])
        .arg(&png)
        .output()
        .unwrap());
    let img = image::open(&png).unwrap();
    assert_eq!((img.width(), img.height()), (800, 600));
    let svg = dir.join("crashes.svg");
    ok(simrob()
        .args(["plot", "batch"])
        .arg(&csv)
        .args([
            "--x",
            "robots",
            "--y",
            "crashed",
            "--y-label",
            "crashed drones",
            "-o",
        ])
        .arg(&svg)
        .output()
        .unwrap());
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg") && text.contains("crashed drones") && text.contains("mean ± sd")
    );

    // A swarm recording: trajectories over its walls.
    let rec = dir.join("hospital.jsonl");
    ok(simrob()
        .args([
            "swarm",
            "run",
            "scenarios/swarm/hospital.toml",
            "--duration",
            "20",
            "--quiet",
            "--record",
        ])
        .arg(&rec)
        .output()
        .unwrap());
    let traj = dir.join("traj.svg");
    ok(simrob()
        .args(["plot", "trajectory"])
        .arg(&rec)
        .arg("-o")
        .arg(&traj)
        .output()
        .unwrap());
    let text = std::fs::read_to_string(&traj).unwrap();
    assert!(
        text.contains("x (m)") && text.contains("robot"),
        "labels and legend"
    );
    let bad = simrob()
        .args(["plot", "series"])
        .arg(&rec)
        .args(["-s", "3.altitude", "-o"])
        .arg(dir.join("x.png"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("ENTITY.QUANTITY"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn completions_for_bash_know_the_subcommands() {
    let text = ok(simrob().args(["completions", "bash"]).output().unwrap());
    assert!(text.contains("simrob") && text.contains("batch") && text.contains("plot"));
}

#[test]
fn a_3d_scenario_sweeps_through_simrob_run_json() {
    let dir = scratch("3d");
    let sweep = dir.join("wheels.toml");
    std::fs::write(
        &sweep,
        r#"
command = ["run", "scenarios/soccer.xml", "--iterations", "50", "--motors", "3:0=6,1={right}", "--json"]
metrics = ["entities.3.x", "entities.8.x", "iterations"]
[parameters]
right = [2.0, 6.0]
"#,
    )
    .unwrap();
    ok(simrob()
        .arg("batch")
        .arg(&sweep)
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--quiet")
        .output()
        .unwrap());
    let csv = std::fs::read_to_string(dir.join("out/results.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows[0],
        [
            "run",
            "right",
            "entities.3.x",
            "entities.8.x",
            "iterations",
            "wall_s",
            "status",
            "exit_code",
            "error"
        ]
    );
    for r in &rows[1..] {
        assert_eq!((r[4], r[6]), ("50", "ok"), "{csv}");
        assert!(
            r[2].parse::<f64>().is_ok() && r[3].parse::<f64>().is_ok(),
            "{csv}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unused_parameter_is_refused_and_a_missing_metric_fails_its_run() {
    let dir = scratch("metrics");
    // `robots` is never substituted in `command`: refused before anything runs.
    let sweep = sweep_file(
        &dir,
        r#"
command = ["swarm", "run", "scenarios/swarm/drone-swarm.toml", "--robots", "5", "--duration", "1", "--json", "--quiet"]
metrics = ["arrived"]
[parameters]
robots = [5, 6]
"#,
    );
    let out = simrob()
        .arg("batch")
        .arg(&sweep)
        .arg("--out")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("parameter \"robots\" is never used in `command`: write {robots}"),
        "{e}"
    );
    assert!(!dir.join("out").exists());
    // `arived` is no field of the summary: each run is recorded failed, saying so, and the
    // fields it does have; the metric that is there is kept.
    let sweep = sweep_file(
        &dir,
        r#"
command = ["swarm", "run", "scenarios/swarm/drone-swarm.toml", "--robots", "{robots}", "--duration", "1", "--json", "--quiet"]
metrics = ["crashed", "arived"]
[parameters]
robots = [5, 6]
"#,
    );
    let printed = with_failures(
        simrob()
            .arg("batch")
            .arg(&sweep)
            .arg("--out")
            .arg(dir.join("out"))
            .arg("--quiet")
            .output()
            .unwrap(),
    );
    assert!(
        printed.contains("2 runs: 0 succeeded, 2 failed"),
        "{printed}"
    );
    let jsonl = std::fs::read_to_string(dir.join("out/results.jsonl")).unwrap();
    for line in jsonl.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["status"], "failed", "{v}");
        assert_eq!(v["exit_code"], 0, "{v}");
        assert_eq!(v["crashed"], 0, "{v}");
        assert!(v["arived"].is_null(), "{v}");
        let error = v["error"].as_str().unwrap_or_default();
        assert!(
            error.starts_with("metric \"arived\" not in the run's JSON summary (its fields: ")
                && error.contains(" arrived "),
            "{v}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_range_beyond_a_float_is_refused_not_drawn_forever() {
    let dir = scratch("plot-range");
    let csv = dir.join("results.csv");
    let png = dir.join("f.png");
    std::fs::write(&png, "an older figure").unwrap();
    for (rows, says) in [
        ("3,1e308\n4,-1e308\n", "y axis (crashed)"),
        ("1e308,1\n-1e308,2\n", "x axis (robots)"),
    ] {
        std::fs::write(&csv, format!("robots,crashed\n{rows}")).unwrap();
        let o = simrob()
            .args(["plot", "batch"])
            .arg(&csv)
            .args(["--x", "robots", "--y", "crashed", "-o"])
            .arg(&png)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(
            err.contains(says) && err.contains("-1e308") && err.contains("1e308"),
            "{err}"
        );
        assert_eq!(std::fs::read_to_string(&png).unwrap(), "an older figure");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn collect_merges_only_the_sweeps_rows_and_slurm_refuses_another_sweeps_directory() {
    let dir = scratch("collect-check");
    let out = dir.join("res");
    let sweep = |name: &str, seeds: &str| {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(
            &path,
            format!(
                "name = \"{name}\"\ncommand = [\"swarm\", \"run\", \"{{scenario}}\", \"--seed\", \"{{seed}}\", \"--json\"]\n\
                 scenarios = [\"scenarios/swarm/hospital.toml\"]\nseeds = {seeds}\n"
            ),
        )
        .unwrap();
        path
    };
    let a = sweep("a", "[1, 2]");
    ok(simrob()
        .arg("batch")
        .arg(&a)
        .arg("--slurm")
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap());
    let row = |run: u32, seed: u32, done: u32| {
        format!(
            "{{\"run\":{run},\"scenario\":\"scenarios/swarm/hospital.toml\",\"seed\":{seed},\"tasks_done\":{done},\"wall_s\":0.1,\"status\":\"ok\",\"exit_code\":0,\"error\":null}}\n"
        )
    };
    let parts = out.join("parts");
    std::fs::create_dir_all(&parts).unwrap();
    std::fs::write(parts.join("chunk-0.jsonl"), row(0, 1, 3)).unwrap();
    let collect = || {
        simrob()
            .args(["batch", "collect"])
            .arg(&out)
            .output()
            .unwrap()
    };
    ok(collect());
    let good = std::fs::read(out.join("results.csv")).unwrap();
    // Each of these part files is refused, naming it, and nothing is written.
    for (name, text, says) in [
        ("chunk-1.jsonl", row(7, 1, 3), "run 7 is not in it"),
        ("chunk-1.jsonl", row(1, 99, 3), "run 1 differs"),
        (
            "chunk-1.jsonl",
            "not JSON at all\n".to_string(),
            "not a result row",
        ),
        ("chunk-1.jsonl", row(0, 1, 4), "the two disagree"),
    ] {
        let path = parts.join(name);
        std::fs::write(&path, &text).unwrap();
        let o = collect();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{text}: {err}");
        assert!(
            err.contains(says) && err.contains(&format!("{}:1", path.display())),
            "{text}: {err}"
        );
        assert_eq!(std::fs::read(out.join("results.csv")).unwrap(), good);
        std::fs::remove_file(&path).unwrap();
    }
    // The same row twice (a collect run again) and a failure then a success merge.
    let mut retried = row(1, 2, 5).replace("\"ok\"", "\"failed\"");
    retried.push_str(&row(1, 2, 5));
    std::fs::write(parts.join("chunk-1.jsonl"), retried).unwrap();
    let text = ok(collect());
    assert!(
        text.contains("2 rows from 2 files: 2 ok, 0 failed"),
        "{text}"
    );
    ok(collect());
    // Another sweep into this directory: refused with --slurm as without, nothing changed.
    let layout = std::fs::read(out.join("sweep.json")).unwrap();
    let b = sweep("b", "[5]");
    for extra in [&["--slurm"][..], &["--dry-run"][..]] {
        let o = simrob()
            .arg("batch")
            .arg(&b)
            .args(extra)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        if extra == ["--dry-run"] {
            assert!(o.status.success(), "a dry run writes nothing: {err}");
            continue;
        }
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("holds results of another sweep"), "{err}");
    }
    assert_eq!(std::fs::read(out.join("sweep.json")).unwrap(), layout);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_values_do_not_parse_and_exit_2() {
    let dir = scratch("bad-values");
    let sweep = sweep_file(
        &dir,
        "command = [\"swarm\", \"run\", \"x\", \"--seed\", \"{seed}\"]\nseeds = [1, 2]\n",
    );
    let csv = dir.join("r.csv");
    std::fs::write(&csv, "a,b\n1,2\n2,3\n").unwrap();
    let rec = dir.join("run.simrec");
    simrob_viewer::record::Writer::create(&rec, "test")
        .unwrap()
        .finish()
        .unwrap();
    let s = sweep.to_str().unwrap();
    let (c, r, out) = (
        csv.to_str().unwrap(),
        rec.to_str().unwrap(),
        dir.join("out"),
    );
    let out = out.to_str().unwrap();
    let png = dir.join("f.png");
    let png = png.to_str().unwrap();
    for (args, says) in [
        (vec!["batch", s, "--out", out, "--jobs", "0"], "--jobs"),
        (vec!["batch", s, "--out", out, "-j", "-1"], "--jobs"),
        (
            vec!["batch", s, "--out", out, "--slurm", "--chunk-size", "0"],
            "--chunk-size",
        ),
        (
            vec!["batch", s, "--out", out, "--slurm", "--max-parallel", "0"],
            "--max-parallel",
        ),
        (
            vec!["batch", s, "--out", out, "--slurm", "--mem", "lots"],
            "--mem",
        ),
        (
            vec!["batch", s, "--out", out, "--slurm", "--time", "banana"],
            "--time",
        ),
        (
            vec!["batch", s, "--out", out, "--slurm", "--time", "1:2:3:4"],
            "--time",
        ),
        (vec!["replay", r, "--speed", "0", "--gui=0"], "--speed"),
        (vec!["replay", r, "--speed", "-1", "--gui=0"], "--speed"),
        (
            vec![
                "plot", "batch", c, "--x", "a", "--y", "b", "-o", png, "--size", "0x0",
            ],
            "--size",
        ),
    ] {
        let o = simrob().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(says) && err.contains("invalid value"),
            "{args:?}: {err}"
        );
    }
    assert!(!dir.join("out").exists(), "nothing written");
    assert!(!Path::new(png).exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A small sweep of `swarm run` (two drone counts, one second each), `extra` lines added.
fn drone_sweep(dir: &Path, command_tail: &str, extra: &str) -> PathBuf {
    sweep_file(
        dir,
        &format!(
            "name = \"drones\"\ncommand = [\"swarm\", \"run\", \"scenarios/swarm/drone-swarm.toml\", \
             \"--robots\", \"{{robots}}\", \"--json\", \"--quiet\"{command_tail}]\n{extra}\n\
             [parameters]\nrobots = [5, 6]\n"
        ),
    )
}

/// `simrob batch SWEEP --out OUT ARGS…`, its output.
fn batch(sweep: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    simrob()
        .arg("batch")
        .arg(sweep)
        .arg("--out")
        .arg(out)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_changed_sweep_is_refused_where_the_old_ones_results_are() {
    let dir = scratch("changed");
    let out = dir.join("out");
    let metrics = "metrics = [\"arrived\"]";
    let sweep = drone_sweep(&dir, ", \"--duration\", \"1\"", metrics);
    ok(batch(&sweep, &out, &["--quiet"]));
    let before: Vec<Vec<u8>> = ["sweep.json", "results.jsonl", "results.csv"]
        .iter()
        .map(|f| std::fs::read(out.join(f)).unwrap())
        .collect();
    let unchanged = || {
        for (f, bytes) in ["sweep.json", "results.jsonl", "results.csv"]
            .iter()
            .zip(&before)
        {
            assert_eq!(&std::fs::read(out.join(f)).unwrap(), bytes, "{f} changed");
        }
    };
    // Another argument, another metric: another sweep, refused before any run.
    for (tail, extra, says) in [
        (", \"--duration\", \"2\"", metrics, "its `command` was"),
        (
            ", \"--duration\", \"1\"",
            "metrics = [\"arrived\", \"crashed\"]",
            "its `metrics` was",
        ),
        // Seeds added: the runs are numbered anew.
        (
            ", \"--duration\", \"1\", \"--seed\", \"{seed}\"",
            "metrics = [\"arrived\"]\nseeds = [1, 2]",
            "another sweep",
        ),
    ] {
        let changed = drone_sweep(&dir, tail, extra);
        let o = batch(&changed, &out, &["--quiet"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{extra}: {err}");
        assert!(
            err.contains("holds results of another sweep") && err.contains(says),
            "{extra}: {err}"
        );
        unchanged();
    }
    // The same sweep again: nothing to do, and it is still the same sweep.
    let sweep = drone_sweep(&dir, ", \"--duration\", \"1\"", metrics);
    let o = batch(&sweep, &out, &[]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("2 runs, 0 to do (2 already done)"),
        "{o:?}"
    );
    unchanged();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The `swarm run` processes whose command line holds `text` (Linux: /proc).
#[cfg(target_os = "linux")]
fn processes_with(text: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(text) && c.contains(" swarm run "))
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn a_sweep_stopped_by_two_signals_stops_its_runs_and_writes_its_results() {
    use std::os::unix::process::CommandExt;
    let dir = scratch("two-signals");
    let out = dir.join("out");
    // Runs that last until stopped (a page kept after the run), each recording from its start
    // into a pipe the test reads: opening a pipe waits for its other end, so the test knows
    // when each run has started.
    let pipes: Vec<PathBuf> = (0..2)
        .map(|k| dir.join(format!("run-{k}.simrec")))
        .collect();
    for p in &pipes {
        assert!(Command::new("mkfifo").arg(p).status().unwrap().success());
    }
    let sweep = drone_sweep(
        &dir,
        &format!(
            ", \"--gui=127.0.0.1:0\", \"--record\", \"{}/run-{{run}}.simrec\"",
            dir.display()
        ),
        "metrics = [\"arrived\"]",
    );
    let child = simrob()
        .arg("batch")
        .arg(&sweep)
        .arg("--out")
        .arg(&out)
        .args(["--jobs", "2", "--quiet"])
        .process_group(0)
        .spawn()
        .unwrap();
    // Whatever happens, the sweep does not outlive the test.
    struct Stopped(std::process::Child);
    impl Drop for Stopped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Stopped(child);
    // Both runs started: each opened its recording (kept open, unread, until the end: a
    // recording waiting for its page writes a few hundred bytes, far less than a pipe holds).
    let (tx, rx) = std::sync::mpsc::channel();
    let opening = pipes.clone();
    std::thread::spawn(move || {
        let files: Vec<std::fs::File> = opening
            .iter()
            .filter_map(|p| std::fs::File::open(p).ok())
            .collect();
        let _ = tx.send(files);
    });
    let _recordings = rx
        .recv_timeout(crate::support::LINE_GUARD)
        .expect("the runs never started");
    assert_eq!(processes_with(dir.to_str().unwrap()).len(), 2);
    // As `timeout` does: the process, then its group.
    let pid = child.0.id().to_string();
    for target in [pid.clone(), format!("-{pid}")] {
        let kill = Command::new("kill")
            .args(["-TERM", "--", &target])
            .status()
            .unwrap();
        assert!(kill.success());
    }
    let status = child.0.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert_eq!(
        processes_with(dir.to_str().unwrap()),
        Vec::<String>::new(),
        "runs left running"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(csv.starts_with("run,robots,arrived,"), "{csv}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn slurm_options_without_slurm_do_not_parse() {
    let dir = scratch("slurm-only");
    let sweep = drone_sweep(&dir, "", "");
    let out = dir.join("out");
    for args in [
        &["--partition", "short"][..],
        &["--mem", "2G"],
        &["--time", "00:30:00"],
        &["--max-parallel", "3"],
        &["--cpus-per-task", "2"],
        &["--binary", "/bin/true"],
        &["--chunk-size", "5"],
    ] {
        let o = batch(&sweep, &out, args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("--slurm"), "{args:?}: {err}");
        assert!(!out.exists(), "{args:?}: nothing runs");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sweep_file_named_as_an_output_is_refused_not_overwritten() {
    let dir = scratch("self");
    let text = std::fs::read_to_string(drone_sweep(&dir, "", "")).unwrap();
    for name in ["sweep.json", "results.csv", "results.jsonl", "sweep.sbatch"] {
        let sweep = dir.join(name);
        std::fs::write(&sweep, &text).unwrap();
        for extra in [&[][..], &["--slurm"]] {
            let o = batch(&sweep, &dir, extra);
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{name}: {err}");
            assert!(
                err.contains(&format!("is {name}, which the sweep writes")),
                "{err}"
            );
            assert_eq!(std::fs::read_to_string(&sweep).unwrap(), text);
        }
        std::fs::remove_file(&sweep).unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_dry_run_lists_command_lines_a_shell_reads_back() {
    let dir = scratch("dry-run");
    let sweep = sweep_file(
        &dir,
        "command = [\"swarm\", \"run\", \"x.toml\", \"--avoidance\", \"{av}\"]\n\
         [parameters]\nav = [\"hmr\", \"; rm -rf ~\", \"x\\ny\", \"it's\"]\n",
    );
    let listed = ok(batch(&sweep, &dir.join("out"), &["--dry-run"]));
    // Each value one word, as the run gets it.
    assert_eq!(
        listed,
        "    0  simrob swarm run x.toml --avoidance hmr\n\
         \x20   1  simrob swarm run x.toml --avoidance '; rm -rf ~'\n\
         \x20   2  simrob swarm run x.toml --avoidance 'x\ny'\n\
         \x20   3  simrob swarm run x.toml --avoidance 'it'\\''s'\n\
         4 runs\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_batch_plot_neither_pools_parameters_nor_hides_failed_or_single_runs() {
    let dir = scratch("plot-pool");
    let csv = dir.join("results.csv");
    std::fs::write(
        dir.join("sweep.json"),
        r#"{"params": ["robots", "policy"]}"#,
    )
    .unwrap();
    std::fs::write(
        &csv,
        "run,seed,robots,policy,m,wall_s,status,exit_code,error\n\
         0,1,10,cnp,1,0.1,ok,0,\n1,2,10,cnp,3,0.1,ok,0,\n2,1,10,greedy,5,0.1,ok,0,\n\
         3,2,10,greedy,,0.1,failed,1,boom\n4,1,20,cnp,2,0.1,ok,0,\n5,2,20,cnp,2,0.1,ok,0,\n\
         6,1,20,greedy,6,0.1,ok,0,\n7,2,20,greedy,8,0.1,ok,0,\n",
    )
    .unwrap();
    let svg = dir.join("f.svg");
    let plot = |csv: &Path, extra: &[&str]| {
        simrob()
            .args(["plot", "batch"])
            .arg(csv)
            .args(["--x", "robots", "--y", "m", "-o"])
            .arg(&svg)
            .args(extra)
            .output()
            .unwrap()
    };
    // cnp and greedy in one mean: refused, saying how to plot them.
    let o = plot(&csv, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("would pool runs of policy \"cnp\" and \"greedy\": add --group policy"),
        "{err}"
    );
    assert!(!svg.exists());
    // A line each: the failed run is said to be left out, of which point; greedy at 10 is one
    // run, drawn without a bar, and the legend says how many runs a point has.
    let o = plot(&csv, &["--group", "policy"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("1 failed runs left out of the means (policy greedy, robots = 10: 1)"),
        "{err}"
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains("policy cnp (mean ± sd, n = 2)"), "{text}");
    assert!(
        text.contains("policy greedy (mean ± sd, n = 1–2)"),
        "{text}"
    );
    // One run per point: no spread claimed.
    let one = dir.join("one.csv");
    std::fs::write(&one, "run,robots,m,status\n0,10,1,ok\n1,20,2,ok\n").unwrap();
    ok(plot(&one, &[]));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.contains("single runs, no spread") && !text.contains("mean ± sd"),
        "{text}"
    );
    // Without a sweep.json, the scenario still is an input.
    let scen = dir.join("scen.csv");
    std::fs::write(
        &scen,
        "run,scenario,robots,m,status\n0,a.toml,10,1,ok\n1,b.toml,10,2,ok\n",
    )
    .unwrap();
    let o = plot(&scen, &[]);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("add --group scenario"),
        "{o:?}"
    );
    // An empty file, and the JSON lines, are said to be what they are.
    let empty = dir.join("empty.csv");
    std::fs::write(&empty, "").unwrap();
    let jsonl = dir.join("results.jsonl");
    std::fs::write(&jsonl, "{\"run\":0,\"robots\":10,\"m\":1}\n").unwrap();
    for (file, says) in [
        (&empty, "empty, no header line"),
        (&jsonl, "JSON lines, not CSV"),
    ] {
        let o = plot(file, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(says), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_array_past_slurms_default_size_is_warned_of_and_out_must_be_a_directory() {
    let dir = scratch("big-array");
    let sweep = sweep_file(
        &dir,
        "command = [\"swarm\", \"run\", \"x.toml\", \"--seed\", \"{seed}\"]\n\
         seeds = { from = 1, count = 1002 }\n",
    );
    let out = dir.join("out");
    let o = batch(
        &sweep,
        &out,
        &["--slurm", "--time", "1-12", "--mem", "500m"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("warning: 1002 array tasks (indices 0 to 1001)")
            && err.contains("--chunk-size 2 makes 1001 tasks or fewer"),
        "{err}"
    );
    let o = batch(&sweep, &out, &["--slurm", "--chunk-size", "2"]);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("warning"),
        "{o:?}"
    );
    // --out naming a file.
    let o = batch(&sweep, &sweep, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("not a directory (the sweep writes its results into a directory)"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_bundled_sweeps_run_from_any_directory() {
    let repo = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."));
    // No bundled sweep names a file under scenarios/: each takes its scenario built in, by
    // name, so it runs wherever `simrob batch` is started.
    for entry in std::fs::read_dir(repo.join("sweeps")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let sweep: toml::Value = toml::from_str(&text).unwrap();
        let mut named = format!("{:?}", sweep["command"]);
        if let Some(s) = sweep.get("scenarios") {
            named += &format!("{s:?}");
        }
        assert!(!named.contains("scenarios/"), "{}: {named}", path.display());
    }
    // One of them, run in an empty directory: every run ok.
    let dir = scratch("anywhere");
    ok(simrob()
        .current_dir(&dir)
        .arg("batch")
        .arg(repo.join("sweeps/sumbot-wheels.toml"))
        .args(["--out", "out", "--quiet"])
        .output()
        .unwrap());
    let csv = std::fs::read_to_string(dir.join("out/results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 6, "{csv}");
    assert!(csv.lines().skip(1).all(|l| l.contains(",ok,")), "{csv}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_sweeps_limits_are_flags_refusals_name_them_and_slurm_tasks_get_them() {
    let dir = scratch("limits");
    let text = "name = \"lim\"\ncommand = [\"swarm\", \"run\", \"{scenario}\", \"--seed\", \"{seed}\", \"--duration\", \"1\", \"--json\", \"--quiet\"]\n\
                scenarios = [\"scenarios/swarm/hospital.toml\"]\nseeds = [1, 2, 3]\n";
    let sweep = sweep_file(&dir, text);
    let len = std::fs::metadata(&sweep).unwrap().len();
    let dry = |extra: &[&str]| {
        simrob()
            .arg("batch")
            .arg(&sweep)
            .arg("--dry-run")
            .args(extra)
            .output()
            .unwrap()
    };
    // Each limit set below what this sweep needs is refused, saying the limit and the flag.
    for (extra, says) in [
        (
            &["--max-sweep-file-bytes", "10"][..],
            format!(
                "the sweep file {} is {len} bytes, more than the 10-byte limit: raise it with \
                 --max-sweep-file-bytes BYTES",
                sweep.display()
            ),
        ),
        (
            &["--max-runs", "2"][..],
            "3 runs: a sweep has at most 2 (raise it with --max-runs N)".to_string(),
        ),
        (
            &["--max-sweep-bytes", "100"][..],
            "a sweep's runs hold at most 100 bytes together (raise it with --max-sweep-bytes \
             BYTES)"
                .to_string(),
        ),
    ] {
        let o = dry(extra);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{extra:?}: {err}");
        assert!(err.contains(&says), "{extra:?}: {says:?} not in {err}");
    }
    // `seeds.count` alone is held to --max-runs too.
    let counted = dir.join("counted.toml");
    std::fs::write(
        &counted,
        text.replace("seeds = [1, 2, 3]", "seeds = { from = 1, count = 3 }"),
    )
    .unwrap();
    let o = simrob()
        .arg("batch")
        .arg(&counted)
        .args(["--dry-run", "--max-runs", "2"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("raise it with --max-runs N"), "{err}");
    // By default, and with the limits just high enough, the sweep is taken.
    for extra in [
        &[][..],
        &[
            "--max-sweep-file-bytes",
            &len.to_string(),
            "--max-runs",
            "3",
            "--max-sweep-bytes",
            "100000",
        ][..],
    ] {
        assert!(ok(dry(extra)).contains("3 runs"), "{extra:?}");
    }
    // A sweep file past the default 1 MiB: refused unless raised, and the Slurm script's array
    // task, which reads the sweep again, is given the raised limit (and so is `collect`).
    let big = dir.join("big.toml");
    std::fs::write(
        &big,
        format!(
            "# {}\n{}",
            "x".repeat(1 << 20),
            text.replace("seeds = [1, 2, 3]", "seeds = [1]")
        ),
    )
    .unwrap();
    let out = dir.join("big");
    let o = simrob()
        .arg("batch")
        .arg(&big)
        .arg("--dry-run")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("more than the 1048576-byte limit: raise it with --max-sweep-file-bytes"),
        "{err}"
    );
    let printed = ok(simrob()
        .arg("batch")
        .arg(&big)
        .args(["--slurm", "--max-sweep-file-bytes", "2000000", "--out"])
        .arg(&out)
        .output()
        .unwrap());
    assert!(
        printed.contains(&format!(
            "simrob batch collect {} --max-sweep-file-bytes 2000000",
            out.display()
        )),
        "{printed}"
    );
    let script = std::fs::read_to_string(out.join("sweep.sbatch")).unwrap();
    let task = script
        .lines()
        .find(|l| l.starts_with("exec "))
        .expect("the task's command");
    assert!(
        task.ends_with("--quiet --max-sweep-file-bytes 2000000"),
        "{task}"
    );
    // The array task as Slurm runs it: it reads the big sweep file and runs its chunk.
    let o = Command::new("bash")
        .arg(out.join("sweep.sbatch"))
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .env("SLURM_ARRAY_TASK_ID", "0")
        .env("SLURM_ARRAY_JOB_ID", "1")
        .output()
        .unwrap();
    ok(o);
    let part = out.join("parts/chunk-0.jsonl");
    let row = std::fs::read_to_string(&part).unwrap();
    assert!(row.contains("\"status\":\"ok\""), "{row}");
    // `collect` reads the tasks' results within --max-results-bytes: below the part's size
    // it is refused, saying the flag, and nothing is written; by default it merges.
    let collect = |extra: &[&str]| {
        simrob()
            .args(["batch", "collect"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap()
    };
    let o = collect(&["--max-results-bytes", "10"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "the results {} is {} bytes, more than the 10-byte limit: raise it with \
             --max-results-bytes BYTES: nothing written",
            part.display(),
            row.len()
        )),
        "{err}"
    );
    assert!(!out.join("results.csv").exists());
    ok(collect(&[]));
    let csv = out.join("results.csv");
    assert!(std::fs::read_to_string(&csv).unwrap().contains(",ok,"));
    // `plot batch` reads a results file within the same flag.
    let plot = |extra: &[&str]| {
        simrob()
            .args(["plot", "batch"])
            .arg(&csv)
            .args(["--x", "seed", "--y", "robots", "-o"])
            .arg(dir.join("plot.svg"))
            .args(extra)
            .output()
            .unwrap()
    };
    let o = plot(&["--max-results-bytes", "10"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "the results {} is {} bytes, more than the 10-byte limit: raise it with \
             --max-results-bytes BYTES",
            csv.display(),
            std::fs::metadata(&csv).unwrap().len()
        )),
        "{err}"
    );
    assert!(!dir.join("plot.svg").exists());
    ok(plot(&[]));
    assert!(dir.join("plot.svg").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A sweep.json beside the results that cannot be read, or is not a sweep's layout, stops
/// `plot batch` naming it (it once was ignored, and a point could pool runs that differ in
/// its parameters); it is read within `--max-results-bytes`.
#[test]
fn a_batch_plot_refuses_a_broken_sweep_layout_beside_its_results() {
    let dir = scratch("plot-layout");
    let csv = dir.join("results.csv");
    std::fs::write(&csv, "run,robots,m,status\n0,10,1,ok\n1,20,2,ok\n").unwrap();
    let layout = dir.join("sweep.json");
    let svg = dir.join("f.svg");
    let plot = |extra: &[&str]| {
        simrob()
            .args(["plot", "batch"])
            .arg(&csv)
            .args(["--x", "robots", "--y", "m", "-o"])
            .arg(&svg)
            .args(extra)
            .output()
            .unwrap()
    };
    for (text, says) in [
        ("{\"params\": [\"rob", "is not JSON"),
        ("{\"runs\": 2}", "has no \"params\" list"),
    ] {
        std::fs::write(&layout, text).unwrap();
        let o = plot(&[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("sweep.json") && err.contains(says), "{err}");
        assert!(!svg.exists());
    }
    // The results (40 bytes) within 60, the layout (100 bytes) over it.
    std::fs::write(
        &layout,
        format!("{{\"params\": [\"robots\"]}}{}", " ".repeat(78)),
    )
    .unwrap();
    let o = plot(&["--max-results-bytes", "60"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("the sweep's layout")
            && err.contains(
                "100 bytes, more than the 60-byte limit: raise it with --max-results-bytes"
            ),
        "{err}"
    );
    ok(plot(&[]));
    assert!(svg.exists());
    let _ = std::fs::remove_dir_all(&dir);
}
