//! Output piped into a reader that stops early (`simrob run … | head -2`): simrob ends
//! quietly with status 0 instead of panicking on the broken pipe.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn run_piped_into_head_ends_quietly() {
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/soccer.xml");
    let mut child = Command::new(env!("CARGO_BIN_EXE_simrob"))
        .args(["run", scenario, "--iterations", "200000", "--every", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simrob runs");
    // Read two lines, then close the pipe as `head -2` does.
    let stdout = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(stdout).lines();
    for _ in 0..2 {
        lines.next().expect("a line").expect("text");
    }
    drop(lines);
    let out = child.wait_with_output().expect("simrob ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_busy_udp_port_says_how_to_get_a_free_one() {
    let taken = std::net::UdpSocket::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("address").port().to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_simrob"))
        .args(["serve", "--bind", "127.0.0.1", "--port", &port])
        .output()
        .expect("simrob runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("--port 0"), "{stderr}");
}

#[test]
fn serve_gui_takes_a_free_port_when_8080_is_busy() {
    // Hold 8080 if we can; if something else already holds it, the situation is the same.
    let _held = std::net::TcpListener::bind("127.0.0.1:8080");
    let mut child = Command::new(env!("CARGO_BIN_EXE_simrob"))
        .args(["serve", "--gui", "--port", "0", "--bind", "127.0.0.1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simrob runs");
    let stdout = child.stdout.take().expect("stdout");
    let mut viewer = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("text");
        if let Some(addr) = line.strip_prefix("viewer on http://") {
            viewer = Some(addr.to_string());
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let viewer = viewer.expect("the viewer started");
    assert!(!viewer.ends_with(":8080"), "{viewer}");
}

#[test]
fn any_listing_into_a_closed_pipe_ends_quietly() {
    // The reader is gone before simrob prints its first line: every write fails.
    let mut child = Command::new(env!("CARGO_BIN_EXE_simrob"))
        .args(["serve", "--list-config"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simrob runs");
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("simrob ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}: {stderr}", out.status);
    assert!(!stderr.contains("panicked"), "{stderr}");
}
