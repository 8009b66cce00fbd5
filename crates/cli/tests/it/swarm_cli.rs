//! `simrob swarm`: the command line end to end.

use crate::support::simrob;
use std::path::PathBuf;

fn scenario(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/swarm")
        .join(name)
}

#[test]
fn hospital_runs_and_prints_one_json_summary() {
    let out = simrob()
        .args(["swarm", "run", "--json", "--quiet"])
        .arg(scenario("hospital.toml"))
        .output()
        .expect("simrob runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON object");
    assert_eq!(v["robots"], 3);
    assert_eq!(v["tasks_done"], 3);
    assert_eq!(v["ended_by"], "all work done");
    // The core's kill-switch flag (`killed`, true for every run that ended so) is not a field.
    assert!(v.get("killed").is_none(), "{v}");
    for key in [
        "simulated_seconds",
        "wall_seconds",
        "wall_per_simulated_second",
        "events",
        "collisions",
    ] {
        assert!(v.get(key).is_some(), "{key} missing in {v}");
    }
}

/// `simrob swarm run` of 50 drones of the bundled swarm for 2 s, seed 9, recorded to `rec`
/// with `extra` options.
fn record_drones(rec: &std::path::Path, extra: &[&str]) -> std::io::Result<std::process::Output> {
    simrob()
        .args([
            "swarm",
            "run",
            "--quiet",
            "--robots",
            "50",
            "--duration",
            "2",
        ])
        .args(["--seed", "9"])
        .args(extra)
        .arg(scenario("drone-swarm.toml"))
        .arg("--record")
        .arg(rec)
        .output()
}

#[test]
fn drone_swarm_with_robots_seed_duration_and_a_recording() {
    let dir = std::env::temp_dir().join(format!("simrob-swarm-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("run.jsonl");
    let out = record_drones(&rec, &[]).expect("simrob runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "drone swarm (seed 9)",
        "simulated        2.00 s",
        "wall s per simulated s",
        "robots           50",
        "collisions",
        "tasks done",
        "drones",
    ] {
        assert!(text.contains(needle), "{needle:?} not in\n{text}");
    }
    assert!(text.contains("left out"), "the recorder's figures:\n{text}");
    // The default recording: version 2 (compact), read by the one reader.
    let mut r = simrob_record::swarm::Reader::open(std::fs::File::open(&rec).unwrap()).unwrap();
    assert_eq!(r.version(), 2);
    assert_eq!(r.header().scenario, "drone swarm");
    assert!(r.is_finished());
    assert!(r.len() >= 20, "a snapshot every 0.1 s: {}", r.len());
    assert!(r.dropped().is_empty());
    let last = r.snapshot(r.len() - 1).unwrap();
    assert_eq!(last.entities.iter().filter(|e| e.kind == 1).count(), 50);
    // The replay reads it too: its poses as CSV.
    let csv = simrob()
        .args(["replay", "--export", "csv"])
        .arg(&rec)
        .output()
        .expect("simrob replay");
    assert!(
        csv.status.success(),
        "{}",
        String::from_utf8_lossy(&csv.stderr)
    );
    let csv = String::from_utf8_lossy(&csv.stdout);
    let rows = csv.lines().count();
    assert!(rows > 50 * 20, "{rows} CSV rows");
    // Each row names its entity's kind as the world does: drones are drones.
    let kinds: std::collections::BTreeSet<&str> = csv
        .lines()
        .skip(1)
        .filter_map(|l| l.split(',').nth(3))
        .collect();
    assert_eq!(kinds, ["Drone"].into(), "{}", &csv[..csv.len().min(400)]);
    // Version 1 (JSON lines) on request.
    let out = record_drones(&rec, &["--record-format", "swarm-json"]).expect("simrob runs");
    assert!(out.status.success());
    let rec_text = std::fs::read_to_string(&rec).unwrap();
    let first: serde_json::Value = serde_json::from_str(rec_text.lines().next().unwrap()).unwrap();
    assert_eq!(first["format"], "simrob-swarm-recording");
    assert_eq!(first["version"], 1);
    let snaps = rec_text
        .lines()
        .filter(|l| l.contains("\"type\":\"snapshot\""))
        .count();
    assert!(snaps >= 20, "a snapshot every 0.1 s: {snaps}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_input_is_a_clear_error() {
    let out = simrob()
        .args(["swarm", "run", "--robots", "10"])
        .arg(scenario("hospital.toml"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--robots"), "{err}");
    let out = simrob()
        .args(["swarm", "run", "no/such/scenario.toml"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/scenario.toml"));
    let out = simrob()
        .args([
            "swarm",
            "run",
            "--record-buffer",
            "0",
            "--record",
            "/nonexistent/x",
        ])
        .arg(scenario("drone-swarm.toml"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--record-buffer"));
    let help = simrob().args(["swarm", "run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in ["--duration", "--seed", "--robots", "--record", "--json"] {
        assert!(help.contains(flag), "{flag} not in --help");
    }
}

#[test]
fn viewer_format_recordings_replay_in_the_viewer() {
    let dir = std::env::temp_dir().join(format!("simrob-swarm-viewer-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("hospital.jsonl");
    let out = simrob()
        .args([
            "swarm",
            "run",
            "--quiet",
            "--duration",
            "3",
            "--record-format",
            "viewer",
        ])
        .arg(scenario("hospital.toml"))
        .arg("--record")
        .arg(&rec)
        .output()
        .expect("simrob runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The compact format, its end marked: a replay of it ends.
    let mut r = simrob_viewer::record::RecordingReader::open(&rec).expect("the viewer reads it");
    assert_eq!(r.header().version, 2);
    // The seed that made it is in its header (it was not).
    assert!(
        r.header().source.ends_with("(seed 1)"),
        "{}",
        r.header().source
    );
    assert!(r.is_finished(), "no end mark");
    assert!(r.len() >= 10, "{} frames", r.len());
    let f = r.frame(0).expect("frame 0");
    assert!(f.entities.iter().any(|e| e.kind == "Field"), "walls");
    // Kinds named from the world: the hospital's three robots and its three medicine items.
    assert_eq!(f.entities.iter().filter(|e| e.kind == "Robot").count(), 3);
    assert_eq!(f.entities.iter().filter(|e| e.kind == "Item").count(), 3);
    // The swarm's own recording exported as CSV names them alike (it called every one a
    // robot), in metres as short as they are (660 units: 6.6, not 6.6000000000000005).
    let own = dir.join("hospital.swarm");
    let out = simrob()
        .args(["swarm", "run", "--quiet", "--duration", "3"])
        .arg(scenario("hospital.toml"))
        .arg("--record")
        .arg(&own)
        .output()
        .expect("simrob runs");
    assert!(out.status.success());
    let csv = simrob()
        .args(["replay", "--export", "csv"])
        .arg(&own)
        .output()
        .expect("simrob replay");
    let csv = String::from_utf8_lossy(&csv.stdout);
    let first: Vec<&str> = csv
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("0,0,"))
        .collect();
    let kinds = |k: &str| {
        first
            .iter()
            .filter(|l| l.split(',').nth(3) == Some(k))
            .count()
    };
    assert_eq!((kinds("Robot"), kinds("Item")), (3, 3), "{first:?}");
    assert!(first.iter().all(|l| !l.contains("00000")), "{first:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `simrob swarm run --gui=0 --speed 0` of the hospital with `flags`, and the 2D view's
/// address it printed.
fn hospital_live(flags: &[&str]) -> (std::process::Child, String) {
    let mut child = simrob()
        .args(["swarm", "run", "--gui=0", "--speed", "0", "--quiet"])
        .args(flags)
        .arg(scenario("hospital.toml"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("simrob runs");
    let err = crate::support::Lines::of(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    let line = err.until("2D view on http://", &mut seen);
    let addr = line.as_deref().and_then(|l| {
        l.strip_prefix("2D view on http://")
            .and_then(|rest| rest.split_whitespace().next().map(str::to_owned))
    });
    let Some(addr) = addr else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("no address printed: {seen}");
    };
    (child, addr)
}

/// The live 2D view of the hospital draws its 16 walls, as the replay of the same run does
/// (it once drew none: the scene was read before the run had indexed its walls).
#[test]
fn the_live_view_draws_the_hospitals_walls() {
    let (mut child, addr) = hospital_live(&[]);
    let (mut ws, _) = tungstenite::connect(format!("ws://{addr}/ws")).expect("connect");
    let scene = loop {
        match ws.read().expect("a message") {
            tungstenite::Message::Text(t) => {
                let v: serde_json::Value = serde_json::from_str(&t).expect("JSON");
                if v["type"] == "scene" {
                    break v;
                }
            }
            _ => continue,
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(
        scene["rects"].as_array().map(Vec::len),
        Some(16),
        "the live view's walls: {}",
        scene["rects"]
    );
}

/// `--viewer-max-step-frames` holds a page's `step` command to it, and the page is told the
/// range.
#[test]
fn a_page_step_past_the_flags_frames_is_refused_saying_the_range() {
    let (mut child, addr) = hospital_live(&["--viewer-max-step-frames", "5"]);
    let (mut ws, _) = tungstenite::connect(format!("ws://{addr}/ws")).expect("connect");
    ws.send(tungstenite::Message::text(r#"{"cmd":"step","value":6}"#))
        .expect("send");
    // The answer comes before the frames that follow the command; a step taken instead
    // pauses the run, which then sends a frame every 100 ms: 100 messages bound the wait.
    let mut texts = Vec::new();
    let mut refused = false;
    for _ in 0..100 {
        match ws.read() {
            Ok(tungstenite::Message::Text(t)) if t.contains("step: 1 to 5 frames") => {
                refused = true;
                break;
            }
            Ok(tungstenite::Message::Text(t)) => texts.push(t.to_string()),
            Ok(_) => continue,
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(refused, "no refusal among {texts:?}");
}

#[test]
fn threads_change_nothing_but_speed() {
    let dir = std::env::temp_dir().join(format!("simrob-swarm-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = |threads: &str| {
        let rec = dir.join(format!("run-{threads}.jsonl"));
        let out = simrob()
            .args(["swarm", "run", "--json", "--quiet", "--robots", "400"])
            .args(["--duration", "3", "--seed", "5", "--threads", threads])
            .args(["--record-format", "swarm-json"])
            .arg(scenario("drone-swarm.toml"))
            .arg("--record")
            .arg(&rec)
            .output()
            .expect("simrob runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut summary: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("one JSON object");
        let fields = summary.as_object_mut().expect("an object");
        // What the wall clock measured, and the recording's own name, differ by nature.
        fields.retain(|k, _| {
            !k.contains("wall") && !matches!(k.as_str(), "times_real_time" | "record" | "threads")
        });
        let snapshots: Vec<String> = std::fs::read_to_string(&rec)
            .unwrap()
            .lines()
            .filter(|l| l.contains("\"type\":\"snapshot\""))
            .map(str::to_owned)
            .collect();
        assert!(snapshots.len() >= 30, "{}", snapshots.len());
        (summary, snapshots)
    };
    let (summary1, snapshots1) = run("1");
    let (summary2, snapshots2) = run("2");
    assert_eq!(summary1, summary2, "one thread and two ended differently");
    assert_eq!(snapshots1.len(), snapshots2.len());
    for (i, (a, b)) in snapshots1.iter().zip(&snapshots2).enumerate() {
        assert!(a == b, "snapshot {i} differs between one thread and two");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The threads a `swarm run` used, from its JSON summary, given `--threads` and
/// `SIMROB_THREADS`; `Err` with its standard error when it failed.
fn threads_used(flag: Option<&str>, env: Option<&str>) -> Result<serde_json::Value, String> {
    let mut c = simrob();
    c.args([
        "swarm",
        "run",
        "--json",
        "--quiet",
        "--robots",
        "5",
        "--duration",
        "1",
    ])
    .arg(scenario("drone-swarm.toml"))
    .env_remove("SIMROB_THREADS");
    if let Some(t) = flag {
        c.args(["--threads", t]);
    }
    if let Some(e) = env {
        c.env("SIMROB_THREADS", e);
    }
    let out = c.output().expect("simrob runs");
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let text = String::from_utf8(out.stdout).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON object");
    Ok(v["threads"].clone())
}

#[test]
fn threads_come_from_the_flag_then_simrob_threads_then_the_cores() {
    let cores = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    assert_eq!(threads_used(None, None), Ok(serde_json::json!(cores)));
    assert_eq!(threads_used(None, Some("3")), Ok(serde_json::json!(3)));
    assert_eq!(threads_used(Some("2"), Some("3")), Ok(serde_json::json!(2)));
    for bad in ["0", "x", "65", "-1"] {
        let err = threads_used(None, Some(bad)).expect_err(bad);
        assert!(
            err.contains(&format!(
                "SIMROB_THREADS is a number of threads (1 to 64), not {bad:?}"
            )),
            "{bad}: {err}"
        );
    }
    // A flag given leaves the variable unread.
    assert_eq!(threads_used(Some("1"), Some("x")), Ok(serde_json::json!(1)));
}

/// `--record` naming a file the run reads (the scenario, its map), however spelt, is refused
/// before the run and the file is left as it was (it was overwritten with the recording).
#[test]
fn the_record_file_may_not_be_the_scenario_or_its_map() {
    let dir = std::env::temp_dir().join(format!("simrob-swarm-record-self-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["hospital.toml", "hospital.drawio"] {
        std::fs::copy(scenario(f), dir.join(f)).unwrap();
    }
    let toml = dir.join("hospital.toml");
    let before = (
        std::fs::read(&toml).unwrap(),
        std::fs::read(dir.join("hospital.drawio")).unwrap(),
    );
    let mut records = vec![
        (toml.clone(), "the scenario"),
        (dir.join(".").join("hospital.toml"), "the scenario"),
        (dir.join("hospital.drawio"), "the scenario's map"),
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(dir.join("hospital.drawio"), dir.join("link.swarm")).unwrap();
        records.push((dir.join("link.swarm"), "the scenario's map"));
    }
    for (record, what) in records {
        let out = simrob()
            .args(["swarm", "run", "--quiet", "--duration", "1"])
            .arg(&toml)
            .arg("--record")
            .arg(&record)
            .output()
            .expect("simrob runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{record:?}: {err}");
        assert!(
            err.contains(&format!("--record {} is {what}", record.display()))
                && err.contains("give another file"),
            "{record:?}: {err}"
        );
        assert!(
            out.stdout.is_empty(),
            "the run ran: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let after = (
        std::fs::read(&toml).unwrap(),
        std::fs::read(dir.join("hospital.drawio")).unwrap(),
    );
    assert!(before == after, "an input was changed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `swarm run --gui` says where its page is on standard error: standard output is the
/// summary's alone, one JSON object with `--json` (the address line came first on it). A run
/// stopped before any page connected simulated nothing: 0× real time, as `--duration 0`
/// says (it said `inf×`, `null` in JSON).
#[test]
fn with_gui_standard_output_is_the_summary_alone() {
    for json in [true, false] {
        let out = crate::support::stdout_when_stopped(
            simrob()
                .args(["swarm", "run", "--gui=0", "--quiet"])
                .args(json.then_some("--json"))
                .arg(scenario("hospital.toml")),
            "2D view on http://",
        );
        if json {
            let v: serde_json::Value =
                serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
            assert_eq!(v["ended_by"], "interrupted", "{v}");
            assert_eq!(v["simulated_seconds"], 0.0, "{v}");
            assert_eq!(v["times_real_time"], 0.0, "{v}");
        } else {
            assert!(!out.contains("2D view"), "{out}");
            assert!(out.contains("ended: interrupted"), "{out}");
            assert!(out.contains("(0× real time)"), "{out}");
        }
    }
}

/// A bad `--duration` or `--threads` is a command line that does not parse (exit status 2,
/// as for every bad value), on `swarm run` and `swarm bench` alike (they gave exit 1 after
/// the scenario was read).
#[test]
fn bad_duration_and_threads_do_not_parse() {
    let cases: [(&[&str], &str); 8] = [
        (&["run", "--duration", "-1"], "--duration"),
        (&["run", "--duration", "nan"], "--duration"),
        (&["run", "--duration", "inf"], "--duration"),
        (&["run", "--threads", "65"], "--threads"),
        (&["bench", "--duration", "-1"], "--duration"),
        (&["bench", "--duration", "0"], "--duration"),
        (&["bench", "--duration", "nan"], "--duration"),
        (&["bench", "--threads", "65"], "--threads"),
    ];
    for (args, flag) in cases {
        let mut c = simrob();
        c.arg("swarm").args(args);
        if args[0] == "run" {
            c.arg(scenario("hospital.toml"));
        }
        let out = c.output().expect("simrob runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("invalid value '{}' for '{flag}", args[2])),
            "{args:?}: {err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// Every size of `swarm bench --sizes` is checked before the first is run: one out of
/// range (0, more than the drone swarm's limit) is refused and nothing is measured (the
/// sizes before it were run, then it failed with "scenario: …").
#[test]
fn bench_checks_every_size_before_running_any() {
    for (sizes, says) in [
        (
            "200,0",
            "for '--sizes <SIZES>': a number of drones, 1 to 1000000000",
        ),
        (
            "0",
            "for '--sizes <SIZES>': a number of drones, 1 to 1000000000",
        ),
        (
            "200,60000000",
            "--sizes: 60000000 drones is more than the drone swarm's limit of 50000000: \
             raise it with --max-robots N",
        ),
        (
            "50000001",
            "--sizes: 50000001 drones is more than the drone swarm's limit of 50000000",
        ),
    ] {
        let out = simrob()
            .args(["swarm", "bench", "--duration", "1", "--sizes", sizes])
            .output()
            .expect("simrob runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{sizes}: {err}");
        assert!(err.contains(says), "{sizes}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{sizes}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// A script's `Log` line goes to standard error at level info when `--log` asks for it, with
/// its simulated time and entity, with and without a recording (it was only in a recording);
/// showing it changes nothing in the run.
#[test]
fn log_lines_go_to_standard_error_when_asked_for() {
    let dir = std::env::temp_dir().join(format!("simrob-swarm-log-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("run.jsonl");
    let run = |extra: &[&str]| {
        let out = simrob()
            .args(["swarm", "run", "--json", "--quiet"])
            .args(extra)
            .arg(scenario("hospital.toml"))
            .env_remove("RUST_LOG")
            .env("NO_COLOR", "1")
            .output()
            .expect("simrob runs");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{extra:?}: {err}");
        let mut v: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("one JSON object");
        let fields = v.as_object_mut().expect("an object");
        fields.retain(|k, _| {
            !k.contains("wall") && !matches!(k.as_str(), "times_real_time" | "record")
        });
        (v, err)
    };
    let line = "t = 31.00 s r3: the garden has no map-path: going home instead";
    let (quiet, err) = run(&[]);
    assert!(!err.contains("going home"), "{err}");
    let (shown, err) = run(&["--log", "info"]);
    assert!(err.contains(line), "{err}");
    assert!(err.contains("every script is done"), "{err}");
    assert_eq!(quiet, shown, "showing the log changed the run");
    let rec_arg = rec.to_string_lossy().into_owned();
    let record = [
        "--record",
        rec_arg.as_str(),
        "--record-format",
        "swarm-json",
    ];
    let (recorded, err) = run(&[&["--log", "simrob::swarm::log=info"][..], &record[..]].concat());
    assert!(err.contains(line), "{err}");
    let (recorded_quietly, _) = run(&record);
    assert_eq!(
        recorded, recorded_quietly,
        "showing the log changed the run"
    );
    // The recording keeps its log lines.
    let text = std::fs::read_to_string(&rec).unwrap();
    assert!(
        text.contains("going home instead"),
        "the recording lost its log"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `swarm bench --json` says why each run ended as `swarm run` does (`ended_by`), not with
/// the core's `killed` (true for a swarm that all arrived).
#[test]
fn bench_json_says_why_each_run_ended() {
    let out = simrob()
        .args([
            "swarm",
            "bench",
            "--json",
            "--sizes",
            "10",
            "--avoidance",
            "orca",
        ])
        .args(["--duration", "30", "--threads", "1"])
        .output()
        .expect("simrob runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert!(v.get("killed").is_none(), "{v}");
    assert_eq!(v["ended_by"], "all work done", "{v}");
    assert_eq!(v["still_flying"], 0, "{v}");
}

/// A recording that cannot be written (a full disk: `/dev/full`) stops, the run goes on and the
/// summary says why, whatever the format (the JSON-lines and viewer formats said nothing).
#[test]
fn a_recording_that_cannot_be_written_is_said_in_every_format() {
    for format in ["swarm", "swarm-json", "viewer"] {
        let out = simrob()
            .args(["swarm", "run", "--quiet", "--json", "--record", "/dev/full"])
            .args(["--record-format", format])
            .arg(scenario("hospital.toml"))
            .output()
            .expect("simrob runs");
        assert!(out.status.success(), "{format}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        let error = v["recording"]["error"].as_str().unwrap_or_default();
        assert!(error.contains("No space left"), "{format}: {v}");
        assert_eq!(v["tasks_done"], 3, "{format}: the run went on: {v}");

        let out = simrob()
            .args(["swarm", "run", "--quiet", "--record", "/dev/full"])
            .args(["--record-format", format])
            .arg(scenario("hospital.toml"))
            .output()
            .expect("simrob runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("the recording stopped: cannot write the recording"),
            "{format}: {text}"
        );
    }
}
