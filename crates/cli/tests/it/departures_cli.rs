//! Clients run twice in a row against one `simrob serve`: each run unregisters when it
//! stops, which the other agents are told, and the next run registers afresh.

use std::net::UdpSocket;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::listening;
use crate::support::{send_piped, simrob};

/// A GUI agent that receives no broadcasts, only the confirmations every agent is sent.
struct Watcher(UdpSocket);

impl Watcher {
    fn register(server: &str) -> Watcher {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = s.local_addr().unwrap().port();
        let register = format!(
            "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"GUI\"><Port>{port}</Port><IP>127.0.0.1</IP><Sync>false</Sync><Broadcast>-1</Broadcast><Key>watcher</Key></Agent_Message></Message>"
        );
        s.send_to(register.as_bytes(), server).unwrap();
        let w = Watcher(s);
        w.wait_for("Sucessfully added agent with key watcher");
        w
    }

    /// Reads confirmations until one starts with `prefix` (a 30 s guard against a hang).
    fn wait_for(&self, prefix: &str) -> String {
        let guard = Instant::now() + Duration::from_secs(30);
        let mut buf = vec![0u8; 70000];
        let mut seen = Vec::new();
        while Instant::now() < guard {
            self.0
                .set_read_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            if let Ok(n) = self.0.recv(&mut buf) {
                let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                let text = text
                    .strip_prefix("<Response>")
                    .and_then(|t| t.strip_suffix("</Response>"))
                    .unwrap_or(&text)
                    .to_string();
                if text.starts_with(prefix) {
                    return text;
                }
                seen.push(text);
            }
        }
        panic!("no {prefix:?} within 30 s; seen {seen:?}");
    }
}

fn checked(n: usize, o: &Output) -> String {
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        o.status.success(),
        "run {n}: {stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

#[test]
fn send_and_demo_run_twice_against_one_serve_and_leave_when_they_stop() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-leave-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut server, _out, addr) = listening::start(
        simrob()
            .args(["serve", "--port", "0", "--save-dir"])
            .arg(&dir),
        "udp",
    );
    let watcher = Watcher::register(&addr);

    // The commander, twice: each run registers, is confirmed, and unregisters at `quit`.
    for n in 1..=2 {
        let stdout = checked(n, &send_piped(&addr, b"timestep 0.025\nquit\n"));
        assert!(
            stdout.starts_with("Sucessfully added agent with key commander, ")
                && !stdout.contains("moved from"),
            "run {n}: a fresh registration, the first run having left: {stdout}"
        );
        assert!(
            stdout.contains("Set_Timestep: Timestep set to 0.025"),
            "{stdout}"
        );
        watcher.wait_for("Sucessfully added agent with key commander, ");
        let left = watcher.wait_for("Removed agent with key commander, ");
        assert!(left.ends_with(": it unregistered"), "{left}");
    }

    // The demo against the same server, twice (key "demo" each time).
    let script = dir.join("drive.txt");
    std::fs::write(&script, "0 6 6\n0.3 0 0\n").unwrap();
    for n in 1..=2 {
        let out = simrob()
            .args([
                "demo",
                "--every-seconds",
                "0.1",
                "--server",
                &addr,
                "--script",
            ])
            .arg(&script)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stdout = checked(n, &out);
        assert!(stdout.contains("robot ("), "run {n}: {stdout}");
        watcher.wait_for("Sucessfully added agent with key demo, ");
        let left = watcher.wait_for("Removed agent with key demo, ");
        assert!(left.ends_with(": it unregistered"), "{left}");
    }
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
}
