//! `simrob serve --record` then `simrob replay --export csv` and `simrob replay` as a user
//! runs them.

use crate::listening;
use crate::support::{refused_at_start, repo, simrob};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::sumbot::{initialize, run_iterations, wheels};
use simrob_client::agent::Agent;

#[test]
fn a_recorded_serve_exports_to_csv_and_replays() {
    let dir = fresh_dir("replay");
    let file = dir.join("run.simrec");
    let (mut child, mut out, addr) = listening::start(
        simrob()
            .args([
                "serve",
                "--port",
                "0",
                "--speed",
                "1",
                "--scenario",
                &repo("scenarios/soccer.xml"),
            ])
            .arg("--save-dir")
            .arg(&dir)
            .arg("--record")
            .arg(&file),
        "udp",
    );
    // Initialize, then drive the SumBot (entity 3) with both wheels at +6 rad/s, counting
    // the iterations the server broadcasts (not the clock).
    let mut agent = Agent::connect(addr.parse().unwrap()).unwrap();
    initialize(&mut agent, "driver", Duration::from_secs(10));
    run_iterations(&mut agent, 40);
    wheels(&mut agent, 6.0, 6.0);
    run_iterations(&mut agent, 120);
    let status = crate::support::stop_with(&mut child, "-INT");
    assert_eq!(status.code(), Some(130), "Ctrl-C: status 130 ({status:?})");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(rest.contains("recording to"), "{rest}");

    // Export to standard output.
    let export = simrob()
        .args(["replay", "--export", "csv"])
        .arg(&file)
        .output()
        .unwrap();
    let csv = String::from_utf8_lossy(&export.stdout);
    assert!(
        export.status.success(),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );
    let mut rows = csv.lines();
    assert_eq!(
        rows.next(),
        Some("time,iteration,entity,kind,x,y,z,roll,pitch,yaw")
    );
    let robot: Vec<(f64, u64, f64)> = rows
        .map(|r| r.split(',').collect::<Vec<_>>())
        .filter(|c| c[2] == "3")
        .map(|c| {
            assert_eq!(c.len(), 10, "{c:?}");
            assert_eq!(c[3], "Robot");
            (
                c[0].parse().unwrap(),
                c[1].parse().unwrap(),
                c[4].parse().unwrap(),
            )
        })
        .collect();
    assert!(robot.len() > 20, "{} robot rows", robot.len());
    assert!(robot.windows(2).all(|w| w[1].1 > w[0].1 && w[1].0 > w[0].0));
    let (first, last) = (robot[0].2, robot[robot.len() - 1].2);
    assert!(
        last < first - 0.02,
        "the robot did not move: {first} → {last}"
    );
    assert!(csv.contains(",Ball,"), "the ball is exported too");
    // A recording the server stopped cleanly ends with its end mark: no warning.
    assert!(
        !String::from_utf8_lossy(&export.stderr).contains("warning"),
        "{}",
        String::from_utf8_lossy(&export.stderr)
    );

    // A copy cut short (no end mark, the last block half there): what it holds is exported,
    // and the command says the file is incomplete.
    let bytes = std::fs::read(&file).unwrap();
    let cut = dir.join("cut.simrec");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let export = simrob()
        .args(["replay", "--export", "csv"])
        .arg(&cut)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&export.stderr);
    assert!(
        err.contains("has no end mark") && err.contains("cut short"),
        "{err}"
    );
    assert!(String::from_utf8_lossy(&export.stdout).starts_with("time,iteration"));

    // Export to a file: the same text.
    let out_file = dir.join("poses.csv");
    let status = simrob()
        .arg("replay")
        .arg(&file)
        .args(["--export", "csv", "--out"])
        .arg(&out_file)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), csv);

    // The viewer over the recording, stopped with Ctrl-C.
    let mut replay = simrob()
        .arg("replay")
        .arg(&file)
        .args(["--gui=0"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(replay.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    let http = line
        .trim()
        .strip_prefix("viewer on http://")
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .to_string();
    let mut stream = std::net::TcpStream::connect(&http).unwrap();
    std::io::Write::write_all(
        &mut stream,
        b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut page = String::new();
    std::io::Read::read_to_string(&mut stream, &mut page).unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    let status = crate::support::stop_with(&mut replay, "-INT");
    assert_eq!(status.code(), Some(130), "Ctrl-C: status 130 ({status:?})");

    // Not a recording: a clear error.
    let bad = simrob()
        .args(["replay", "--export", "csv"])
        .arg(&out_file)
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("not a simrob recording"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn replay_and_plot_refuse_a_fifo_a_device_or_a_directory_at_once() {
    let dir = fresh_dir("replay-fifo");
    let fifo = dir.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let fifo_arg = fifo.to_str().unwrap().to_string();
    let png = dir.join("p.png");
    let png_arg = png.to_str().unwrap().to_string();
    for path in [fifo_arg.as_str(), "/dev/zero", dir.to_str().unwrap()] {
        for args in [
            vec!["replay", path, "--export", "csv"],
            vec!["replay", path],
            vec!["plot", "trajectory", path, "-o", &png_arg],
            vec!["plot", "series", path, "-s", "3.x", "-o", &png_arg],
        ] {
            let child = simrob()
                .args(&args)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn simrob");
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = tx.send(child.wait_with_output());
            });
            let out = match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(out) => out.expect("output"),
                Err(_) => {
                    // Failure guard: a command waiting in open() for a writer is let go.
                    let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
                    panic!("{args:?} waits on its input");
                }
            };
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains("not a regular file") && err.contains(path),
                "{args:?}: {err}"
            );
            assert!(out.stdout.is_empty(), "{args:?}: nothing exported");
            assert!(!png.exists(), "{args:?}: no picture");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An empty directory of its own for a test: `simrob-cli-TAG-PID` in the temporary directory.
fn fresh_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("simrob-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A compact recording of `n` frames of one robot moving along X, finished.
fn write_recording(path: &std::path::Path, n: u64) {
    use simrob_viewer::{Frame, FrameEntity};
    let mut w = simrob_viewer::record::Writer::create(path, "test").unwrap();
    for i in 0..n {
        w.write_frame(&Frame {
            iteration: i,
            time: i as f64 * 0.01,
            entities: vec![FrameEntity {
                id: 3,
                kind: "Robot".into(),
                p: Some([i as f64 * 0.125, 0.5, 0.25]),
                r: Some([0.0, 0.0, 1.5]),
            }],
            ..Frame::default()
        })
        .unwrap();
    }
    w.finish().unwrap();
}

/// Byte offsets of the blocks of a compact recording (after its header line).
fn block_offsets(bytes: &[u8]) -> Vec<usize> {
    let mut at = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let mut out = Vec::new();
    while at + 32 <= bytes.len() && &bytes[at..at + 4] == b"SRB2" {
        out.push(at);
        let len = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap()) as usize;
        at += 32 + len;
    }
    out
}

#[test]
fn an_export_never_destroys_its_input_or_a_good_output() {
    let dir = fresh_dir("export");
    let file = dir.join("run.simrec");
    write_recording(&file, 600);
    let good = std::fs::read(&file).unwrap();
    // The output is the input (spelt the same, or otherwise): refused, the file untouched.
    let other_spelling = dir.join(".").join("run.simrec");
    for format in ["csv", "simrec"] {
        for out in [&file, &other_spelling] {
            let o = simrob()
                .arg("replay")
                .arg(&file)
                .args(["--export", format, "--out"])
                .arg(out)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            assert_eq!(o.status.code(), Some(1), "{format}: {err}");
            assert!(err.contains("is the recording being exported"), "{err}");
            assert_eq!(
                std::fs::read(&file).unwrap(),
                good,
                "{format}: input intact"
            );
        }
    }
    // A good export to compare with.
    let csv = dir.join("poses.csv");
    let o = simrob()
        .arg("replay")
        .arg(&file)
        .args(["--export", "csv", "--out"])
        .arg(&csv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let good_csv = std::fs::read(&csv).unwrap();
    let simrec = dir.join("copy.simrec");
    let o = simrob()
        .arg("replay")
        .arg(&file)
        .args(["--export", "simrec", "--out"])
        .arg(&simrec)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let good_simrec = std::fs::read(&simrec).unwrap();
    // A recording damaged in its second block: the export fails midway, and the outputs
    // already there are kept as they were, with no temporary file left beside them.
    let mut bad = good.clone();
    let second = block_offsets(&bad)[1];
    for b in &mut bad[second + 32 + 4..second + 32 + 40] {
        *b ^= 0x5a;
    }
    let damaged = dir.join("damaged.simrec");
    std::fs::write(&damaged, &bad).unwrap();
    for (format, out, before) in [("csv", &csv, &good_csv), ("simrec", &simrec, &good_simrec)] {
        let o = simrob()
            .arg("replay")
            .arg(&damaged)
            .args(["--export", format, "--out"])
            .arg(out)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{format}");
        assert_eq!(
            &std::fs::read(out).unwrap(),
            before,
            "{format}: old output kept"
        );
        // A new output is not created at all.
        let fresh = dir.join(format!("fresh.{format}"));
        let o = simrob()
            .arg("replay")
            .arg(&damaged)
            .args(["--export", format, "--out"])
            .arg(&fresh)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{format}");
        assert!(!fresh.exists(), "{format}: no partial file");
    }
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["copy.simrec", "damaged.simrec", "poses.csv", "run.simrec"],
        "no temporary file left"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damage_before_the_end_mark_is_an_error_and_plot_warns_of_a_cut() {
    let dir = fresh_dir("damage");
    let file = dir.join("run.simrec");
    write_recording(&file, 600);
    let good = std::fs::read(&file).unwrap();
    // The second block's length damaged (longer than the rest of the file): the end mark
    // follows, so this is an error naming the block, not a file cut short.
    let mut bad = good.clone();
    let second = block_offsets(&bad)[1];
    bad[second + 4..second + 8].copy_from_slice(&(1u32 << 20).to_le_bytes());
    let damaged = dir.join("damaged.simrec");
    std::fs::write(&damaged, &bad).unwrap();
    for args in [
        vec!["replay", "--export", "csv"],
        vec!["plot", "trajectory", "-o", "/dev/null/x.svg"],
    ] {
        let o = simrob().args(&args).arg(&damaged).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&format!("block at byte {second}")) && !err.contains("warning"),
            "{args:?}: {err}"
        );
    }
    // Cut short (no end mark): plot draws what is there and says so, as --export does.
    let cut = dir.join("cut.simrec");
    std::fs::write(&cut, &good[..good.len() - 32]).unwrap();
    let svg = dir.join("paths.svg");
    let o = simrob()
        .args(["plot", "trajectory"])
        .arg(&cut)
        .arg("-o")
        .arg(&svg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("has no end mark") && err.contains("plotted its 600 complete frames"),
        "{err}"
    );
    assert!(svg.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_export_that_cannot_read_its_recording_says_so() {
    let dir = fresh_dir("readerr");
    let file = dir.join("run.simrec");
    write_recording(&file, 600);
    // The second block's payload damaged, and the end mark gone: the export stops at the
    // second block, and does not claim to have exported the 600 frames it indexed.
    let mut bad = std::fs::read(&file).unwrap();
    let second = block_offsets(&bad)[1];
    for b in &mut bad[second + 32 + 4..second + 32 + 40] {
        *b ^= 0x5a;
    }
    bad.truncate(bad.len() - 32);
    let damaged = dir.join("damaged.simrec");
    std::fs::write(&damaged, &bad).unwrap();
    let out_csv = dir.join("p.csv");
    for (format, out) in [
        ("csv", None),
        ("csv", Some(&out_csv)),
        ("simrec", Some(&dir.join("c.simrec"))),
    ] {
        let mut cmd = simrob();
        cmd.arg("replay").arg(&damaged).args(["--export", format]);
        if let Some(o) = out {
            cmd.arg("--out").arg(o);
        }
        let o = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{format} {out:?}: {err}");
        let first = err.lines().next().unwrap_or_default();
        assert!(
            first.contains("cannot read the recording") && !err.contains("cannot write"),
            "{format} {out:?}: {err}"
        );
        assert!(err.contains(&format!("block at byte {second}")), "{err}");
        assert!(!err.contains("exported its"), "{format} {out:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `simrob replay FILE` to its end when it refuses FILE (exit status, standard error); fails
/// the test if it serves the replay instead (its first line says where).
fn replay_refused(file: &std::path::Path, more: &[&str]) -> (Option<i32>, String) {
    refused_at_start(
        simrob().arg("replay").arg(file).arg("--gui=0").args(more),
        &format!("{file:?} was served"),
    )
}

/// The viewer refuses a recording damaged before its end mark, as --export does (it served
/// it and skipped the damage with a warning a frame); a recording without frames is said to
/// be one (the first line blamed the address).
#[test]
fn replay_refuses_a_damaged_or_empty_recording_saying_what_is_wrong() {
    let dir = fresh_dir("replay-bad");
    let file = dir.join("run.simrec");
    write_recording(&file, 600);
    let mut bad = std::fs::read(&file).unwrap();
    let second = block_offsets(&bad)[1];
    for b in &mut bad[second + 40..second + 48] {
        *b = 0xff;
    }
    let damaged = dir.join("damaged.simrec");
    std::fs::write(&damaged, &bad).unwrap();
    let (code, err) = replay_refused(&damaged, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "Error: cannot read the recording {}",
            damaged.display()
        )) && err.contains(&format!("block at byte {second}")),
        "{err}"
    );
    let empty = dir.join("empty.simrec");
    write_recording(&empty, 0);
    let (code, err) = replay_refused(&empty, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.starts_with(&format!(
            "Error: the recording {} has no frames",
            empty.display()
        )) && !err.contains("cannot serve"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A recording without frames (a soccer match or a server stopped before its first
/// iteration, a swarm run stopped before its first snapshot, a JSON-lines file with its
/// header only) exports as an empty table — the CSV's header line, or a recording without
/// frames — and exits 0, as for any recording; standard error says the recording holds no
/// frames, the same for every kind (the CSV's header came out without a word).
#[test]
fn an_export_of_a_recording_without_frames_says_so_and_keeps_the_csv_valid() {
    let dir = fresh_dir("export-empty");
    let compact = dir.join("kick-off.simrec");
    write_recording(&compact, 0);
    let swarm = dir.join("swarm.rec");
    std::fs::write(
        &swarm,
        concat!(
            r#"{"type":"header","format":"simrob-swarm-recording","version":1,"width":100,"height":100,"kinds":["world","robot"]}"#,
            "\n",
            r#"{"type":"end","summary":{}}"#,
            "\n"
        ),
    )
    .unwrap();
    let lines = dir.join("old.jsonl");
    std::fs::write(
        &lines,
        concat!(
            r#"{"format":"simrob-recording","version":1,"source":"test","started_unix_ms":0}"#,
            "\n"
        ),
    )
    .unwrap();
    let header = "time,iteration,entity,kind,x,y,z,roll,pitch,yaw\n";
    for file in [&compact, &swarm, &lines] {
        let says_so = |err: &str| {
            err.contains(&format!(
                "warning: the recording {} holds no frames",
                file.display()
            ))
        };
        let out = simrob()
            .arg("replay")
            .arg(file)
            .args(["--export", "csv"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{file:?}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), header, "{file:?}");
        assert!(says_so(&err), "{file:?}: {err}");
        assert!(err.contains("the CSV has its header line only"), "{err}");
        assert!(!err.contains("end mark"), "{file:?} is finished: {err}");
        // The same to a file, and converted to the compact format.
        let csv = dir.join("poses.csv");
        let out = simrob()
            .arg("replay")
            .arg(file)
            .args(["--export", "csv", "--out"])
            .arg(&csv)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{file:?}: {err}");
        assert_eq!(std::fs::read_to_string(&csv).unwrap(), header);
        assert!(says_so(&err), "{file:?}: {err}");
        let again = dir.join("again.simrec");
        let out = simrob()
            .arg("replay")
            .arg(file)
            .args(["--export", "simrec", "--out"])
            .arg(&again)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{file:?}: {err}");
        assert!(
            says_so(&err) && err.contains(&format!("{} holds none either", again.display())),
            "{file:?}: {err}"
        );
    }
    // A recording with frames says nothing of the kind.
    let full = dir.join("full.simrec");
    write_recording(&full, 3);
    let out = simrob()
        .arg("replay")
        .arg(&full)
        .args(["--export", "csv"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stderr.is_empty(), "{out:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A replay's --speed outside 0.001 to 10,000 is refused naming the range (it was clamped to
/// it without a word).
#[test]
fn replay_refuses_a_speed_out_of_its_range() {
    let dir = fresh_dir("replay-speed");
    let file = dir.join("run.simrec");
    write_recording(&file, 3);
    for speed in ["1e9", "1e-9", "0", "nan"] {
        let (code, err) = replay_refused(&file, &["--speed", speed]);
        assert_eq!(code, Some(2), "{speed}: {err}");
        assert!(
            err.contains("a number from 0.001 to 10000"),
            "{speed}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
