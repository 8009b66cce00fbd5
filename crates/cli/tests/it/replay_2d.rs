//! `simrob swarm run --record` then `simrob replay` as a user runs them: the recording is
//! served in the 2D view, says it is a replay, waits for a page, then plays.

use crate::support::simrob;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// The header of a 2D binary frame.
fn header(bytes: &[u8]) -> serde_json::Value {
    assert_eq!(&bytes[..4], b"S2D1");
    let len = u32::from_le_bytes(bytes[4..8].try_into().expect("length")) as usize;
    serde_json::from_slice(&bytes[8..8 + len]).expect("header")
}

#[test]
fn a_swarm_recording_replays_in_the_2d_view() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-replay-2d-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    let file = dir.join("hospital.swarm");
    let status = simrob()
        .args(["swarm", "run", "--quiet", "--duration", "20", "--record"])
        .arg(&file)
        .arg(format!(
            "{}/../../scenarios/swarm/hospital.toml",
            env!("CARGO_MANIFEST_DIR")
        ))
        .stdout(Stdio::null())
        .status()
        .expect("swarm run");
    assert!(status.success());

    let mut replay = simrob()
        .arg("replay")
        .arg(&file)
        .args(["--gui=0", "--speed", "3"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("replay");
    let mut out = BufReader::new(replay.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("line");
    let http = line
        .trim()
        .strip_prefix("2D view on http://")
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .to_string();
    line.clear();
    out.read_line(&mut line).expect("line");
    // 20 simulated seconds: the last snapshot is taken within the last frame.
    let end: f64 = line
        .trim()
        .strip_prefix("81 snapshots: simulated time 0.00–")
        .and_then(|l| l.strip_suffix(" s"))
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("second line: {line:?}"));
    assert!((19.5..=20.0).contains(&end), "{line:?}");

    // The page: its hello says replay; the first frames say playing, at the speed asked.
    let stream = std::net::TcpStream::connect(&http).expect("connect");
    let (mut ws, _) = tungstenite::client::client(format!("ws://{http}/ws"), stream).expect("ws");
    let mut hello = None;
    let frame = loop {
        match ws.read().expect("read") {
            tungstenite::Message::Text(t) if hello.is_none() => {
                hello = Some(serde_json::from_str::<serde_json::Value>(&t).expect("hello"));
            }
            tungstenite::Message::Binary(b) => {
                let h = header(&b);
                if h["status"]["state"] == "playing" {
                    break h;
                }
            }
            _ => {}
        }
    };
    let hello = hello.expect("a hello first");
    assert_eq!(
        (&hello["mode"], &hello["world"]),
        (&"replay".into(), &"swarm".into())
    );
    assert_eq!(frame["status"]["speed"], 3.0);
    assert_eq!(frame["replay"]["count"], 81);
    let recorded_end = frame["replay"]["end"].as_f64().expect("end");
    assert!(
        (recorded_end - end).abs() < 0.005,
        "{recorded_end} vs {end}"
    );
    drop(ws);

    let status = crate::support::stop_with(&mut replay, "-INT");
    assert_eq!(status.code(), Some(130), "Ctrl-C: status 130 ({status:?})");

    // A bad speed is refused before anything is served.
    let bad = simrob()
        .arg("replay")
        .arg(&file)
        .args(["--speed=-1", "--gui=0"])
        .output()
        .expect("replay");
    assert!(!bad.status.success());
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("a number from 0.001 to 10000"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
