//! `simrob mrs` as a user runs it: serve on a free port, answer a client, write snapshots.

use crate::support::{ok, repo, simrob};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Stdio};
use std::time::Duration;

pub(crate) struct Server(pub(crate) Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `simrob mrs --port 0 ARGS` served, its output after the first line, and a client of it.
pub(crate) fn serve(args: &[&str]) -> (Server, BufReader<ChildStdout>, BufReader<TcpStream>) {
    let mut cmd = simrob();
    cmd.args(["mrs", "--port", "0"]).args(args);
    let (child, out, addr) = crate::listening::start(&mut cmd, "tcp");
    let child = Server(child);
    let stream = TcpStream::connect(&addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    (child, out, BufReader::new(stream))
}

/// Sends `line` and reads the reply, without its line end.
pub(crate) fn ask(reader: &mut BufReader<TcpStream>, line: &str) -> String {
    reader
        .get_mut()
        .write_all(format!("{line}\n").as_bytes())
        .expect("write");
    let mut reply = String::new();
    reader.read_line(&mut reply).expect("reply");
    reply.trim_end().to_string()
}

#[test]
fn mrs_serves_the_seed_protocol_on_a_free_port() {
    let (map, merge) = (repo("maps/example.txt"), repo("maps/box.txt"));
    let (_child, mut out, mut c) = serve(&[
        "--stepped",
        "--start",
        "150,130,0",
        "--map",
        &map,
        "--merge",
        &merge,
    ]);
    assert_eq!(ask(&mut c, "P"), "P015000130000000");
    assert_eq!(ask(&mut c, "S12"), "S12017");
    assert_eq!(ask(&mut c, "MHello world!"), "M");
    assert_eq!(ask(&mut c, "V+100+000"), "V");
    assert_eq!(ask(&mut c, "#STEP 100"), "#STEP 1.00");
    assert_eq!(ask(&mut c, "P"), "P016000130000000");
    assert!(ask(&mut c, "Vxx").starts_with("E "));
    // The box merged from maps/box.txt (230 30 260 60) is seen from below.
    assert_eq!(ask(&mut c, "#PLACE 245 80 270"), "#PLACE");
    assert_eq!(ask(&mut c, "S00"), "S00010");
    // The server prints what robots show.
    let mut seen = String::new();
    for _ in 0..10 {
        seen.clear();
        out.read_line(&mut seen).expect("log line");
        if seen.contains("Hello world!") {
            break;
        }
    }
    assert!(seen.contains("Hello world!"), "{seen:?}");
}

/// A connection past `--max-clients` is told why and closed, and the server prints so, as
/// it prints why it closed each connection.
#[test]
fn a_connection_refused_by_a_full_server_is_printed() {
    let (_child, mut out, mut first) = serve(&["--max-clients", "1", "--make-room-after", "0"]);
    assert_eq!(ask(&mut first, "MHello"), "M");
    let addr = first.get_ref().peer_addr().expect("the server's address");
    let second = TcpStream::connect(addr).expect("connect");
    second
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    let mut reply = String::new();
    BufReader::new(second)
        .read_line(&mut reply)
        .expect("the refusal");
    let full = "the server is full (1 robot, the most it takes: --max-clients 1)";
    assert_eq!(reply.trim_end(), format!("E {full}"));
    // A message shown after it: the lines up to it hold the refusal.
    assert_eq!(ask(&mut first, "Mafter the refusal"), "M");
    let mut seen = Vec::new();
    let mut line = String::new();
    while !line.contains("after the refusal") {
        line.clear();
        out.read_line(&mut line).expect("log line");
        assert!(!line.is_empty(), "the server's output ended: {seen:?}");
        seen.push(line.trim_end().to_string());
    }
    let refused = format!("a connection refused: {full}");
    assert!(seen.contains(&refused), "{seen:?}");
}

#[test]
fn mrs_snapshot_writes_a_png_and_refuses_bad_arguments() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-mrs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    for map in ["maps/example.txt", "maps/arena.bmp"] {
        let png = dir.join("shot.png");
        let _ = std::fs::remove_file(&png);
        ok(simrob()
            .args(["mrs", "--map", &repo(map), "--snapshot"])
            .arg(&png)
            .output()
            .expect("run"));
        let bytes = std::fs::read(&png).expect("png written");
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    }
    for bad in [
        vec!["mrs", "--start", "1,2"],
        vec!["mrs", "--start", "5,5,0", "--snapshot", "x.png"],
        vec!["mrs", "--map", "/no/such/map.txt"],
        vec!["mrs", "--speed", "-1"],
    ] {
        let out = simrob().args(&bad).current_dir(&dir).output().expect("run");
        assert!(!out.status.success(), "{bad:?} should fail");
        assert!(!out.stderr.is_empty(), "{bad:?}: no explanation");
    }
    // Values out of range: refused, naming the flag and its range; no picture written.
    for (bad, why) in [
        (vec!["--scale", "0"], "from 1 to 100, got '0'"),
        (vec!["--scale", "101"], "from 1 to 100, got '101'"),
        (
            vec!["--max-clients", "0"],
            "'--max-clients <N>': expected a whole number, 1 or more, got '0'",
        ),
        (
            vec!["--start", "150,130,1e308"],
            "heading 1e308 is out of range",
        ),
        (vec!["--start", "150,130,NaN"], "three finite numbers"),
    ] {
        let png = dir.join("refused.png");
        let out = simrob()
            .args(["mrs", "--snapshot"])
            .arg(&png)
            .args(&bad)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{bad:?} should fail");
        assert!(err.contains(why), "{bad:?}: {err}");
        assert!(!png.exists(), "{bad:?} wrote a picture");
    }
    // Maps P cannot report positions on, and rectangles outside their map: refused, saying why.
    std::fs::write(dir.join("big.txt"), "20000 20000\n").expect("big map");
    std::fs::write(dir.join("outside.txt"), "300 300\n250 250 400 400\n").expect("map");
    for (map, why) in [
        ("big.txt", "each side may be at most 9999.9 in"),
        (
            "outside.txt",
            "line 2: rectangle 250 250 400 400 is not inside the 300 × 300 in map",
        ),
    ] {
        let png = dir.join("refused-map.png");
        let out = simrob()
            .args(["mrs", "--map"])
            .arg(dir.join(map))
            .arg("--snapshot")
            .arg(&png)
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{map}: {err}");
        assert!(err.contains(why), "{map}: {err}");
        assert!(!png.exists(), "{map}: a picture written");
    }
    // Seconds out of range: the message gives the range.
    for flag in ["--idle-timeout", "--make-room-after"] {
        for bad in ["1e300", "-1", "NaN", "inf"] {
            let out = simrob()
                .args(["mrs", "--port", "0", flag, bad])
                .output()
                .expect("run");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{flag} {bad}: {err}");
            let says = if bad == "1e300" || bad == "-1" {
                format!(
                    "expected a time from 0 to 1000000000 seconds (or 50ms, 2s, 1min), got '{bad}'"
                )
            } else {
                format!("seconds, 0 or more (or 50ms, 2s, 1min), got '{bad}'")
            };
            assert!(err.contains(&says), "{flag} {bad}: {err}");
        }
    }
    // A map directory that does not exist is refused, not created.
    let missing = dir.join("no-such-dir").join("deep");
    let out = simrob()
        .args(["mrs", "--port", "0", "--map-dir"])
        .arg(&missing)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("does not exist or is not a directory"),
        "{err}"
    );
    assert!(
        !dir.join("no-such-dir").exists(),
        "the map directory was created"
    );
    // A picture is a PNG: a name without .png is refused (a usage error), nothing written.
    for name in ["snap.txt", "snap"] {
        let out = simrob()
            .args(["mrs", "--snapshot"])
            .arg(dir.join(name))
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains("must end in .png"), "{name}: {err}");
        assert!(!dir.join(name).exists(), "{name} written");
    }
    let turned = dir.join("turned.png");
    ok(simrob()
        .args([
            "mrs",
            "--start",
            "150,130,-450",
            "--scale",
            "1",
            "--max-clients",
            "1",
        ])
        .arg("--snapshot")
        .arg(&turned)
        .output()
        .expect("run"));
    assert!(turned.exists());
    let help = simrob().args(["mrs", "--help"]).output().expect("help");
    let text = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--map",
        "--merge",
        "--start",
        "--port",
        "--speed",
        "--stepped",
        "--snapshot",
    ] {
        assert!(text.contains(flag), "--help lacks {flag}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn limits_out_of_their_range_are_refused_naming_the_flag_and_range() {
    for (args, want) in [
        (
            &["--max-step", "0"][..],
            "'--max-step <STEPS>': expected a whole number from 1 to 10000000, got '0'",
        ),
        (
            &["--max-line-bytes", "5000"][..],
            "'--max-line-bytes <BYTES>': expected a whole number from 16 to 4096, got '5000'",
        ),
        (
            &["--max-output-bytes", "10"][..],
            "'--max-output-bytes <BYTES>': expected a whole number from 65536 to 1073741824, got '10'",
        ),
        (
            &["--max-rects", "20001"][..],
            "'--max-rects <RECTS>': expected a whole number from 1 to 20000, got '20001'",
        ),
        (
            &["--max-snapshot-side", "8"][..],
            "'--max-snapshot-side <PIXELS>': expected a whole number from 16 to 4096, got '8'",
        ),
        (
            &["--gui=0", "--viewer-max-pages", "0"][..],
            "'--viewer-max-pages <PAGES>': expected a whole number from 1 to 4096, got '0'",
        ),
        (
            &["--gui=0", "--viewer-header-timeout", "0"][..],
            "'--viewer-header-timeout <S>': expected a time from 0.1 to 3600 seconds (or 50ms, 2s, 1min), got '0'",
        ),
    ] {
        let out = simrob()
            .args(["mrs", "--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("run");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
