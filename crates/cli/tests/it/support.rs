//! What most command-line tests need: the built `simrob` binary and paths in the repository.

use std::process::Command;

/// The `simrob` binary this test build made.
pub fn simrob() -> Command {
    Command::new(env!("CARGO_BIN_EXE_simrob"))
}

/// `rel`, a path from the repository's root (scenarios, maps, sweeps).
pub fn repo(rel: &str) -> String {
    format!("{}/../../{rel}", env!("CARGO_MANIFEST_DIR"))
}

/// `simrob send --interactive` against `server` with `input` piped in, run to its end.
pub fn send_piped(server: &str, input: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = simrob()
        .args([
            "send",
            "--server",
            server,
            "--timeout",
            "10",
            "--interactive",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simrob send starts");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(input)
        .expect("simrob send reads its input");
    child.wait_with_output().expect("simrob send ends")
}

/// The standard output of a `simrob` that succeeded; fails the test with both outputs if it
/// did not.
/// `simrob ARGS` to its end: whether it succeeded, its standard output and its standard error.
pub fn run(args: &[&str]) -> (bool, String, String) {
    let out = simrob()
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("simrob runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub fn ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Sends `signal` (`-TERM`, `-HUP`, …) to `child` with `kill`, and waits for it to end.
pub fn stop_with(child: &mut std::process::Child, signal: &str) -> std::process::ExitStatus {
    let kill = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success(), "kill {signal}");
    child.wait().expect("the child ends")
}

/// Fails the test unless the recording `rec` was finished (its end mark written): a command
/// stopped by a signal still finishes its recording.
pub fn assert_recording_finished(rec: &std::path::Path) {
    let export = simrob()
        .args(["replay", "--export", "csv"])
        .arg(rec)
        .output()
        .expect("simrob replay runs");
    let err = String::from_utf8_lossy(&export.stderr);
    assert!(export.status.success(), "{}: {err}", rec.display());
    assert!(!err.contains("no end mark"), "{}: {err}", rec.display());
}

/// Longest wait for an expected line of a process's output (a guard against a hang, not a
/// timing window).
pub const LINE_GUARD: std::time::Duration = std::time::Duration::from_secs(120);

/// A process's output stream read line by line on a thread of its own, so that every wait
/// for a line is bounded ([`LINE_GUARD`]).
pub struct Lines(std::sync::mpsc::Receiver<String>);

impl Lines {
    /// Starts reading `stream`.
    pub fn of(stream: impl std::io::Read + Send + 'static) -> Lines {
        use std::io::BufRead;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in std::io::BufReader::new(stream)
                .lines()
                .map_while(Result::ok)
            {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Lines(rx)
    }

    /// The first line starting with `prefix` (`None` if the stream ended first, or nothing
    /// came for [`LINE_GUARD`]); the lines before it are added to `before`.
    pub fn until(&self, prefix: &str, before: &mut String) -> Option<String> {
        while let Ok(l) = self.0.recv_timeout(LINE_GUARD) {
            if l.starts_with(prefix) {
                return Some(l);
            }
            before.push_str(&l);
            before.push('\n');
        }
        None
    }

    /// The lines still to come, until the stream ends (or nothing came for [`LINE_GUARD`]).
    pub fn rest(&self) -> String {
        let mut out = String::new();
        while let Ok(l) = self.0.recv_timeout(LINE_GUARD) {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }
}

/// Starts `cmd` with no standard input and its standard output and error piped.
fn spawn_piped(cmd: &mut Command) -> std::process::Child {
    cmd.stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("simrob runs")
}

/// Runs `cmd`, which should refuse to start: a program that started prints a first line on
/// standard output, so one there is stopped and panics with `started` and that line. Its exit
/// status and standard error.
pub fn refused_at_start(cmd: &mut Command, started: &str) -> (Option<i32>, String) {
    use std::io::BufRead;
    let mut child = spawn_piped(cmd);
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut first)
        .expect("standard output reads");
    if !first.is_empty() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{started}: {first}");
    }
    let out = child.wait_with_output().expect("simrob ends");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Starts `cmd` (its standard output and error piped), waits for a line starting with
/// `marker` on its standard error, stops it with SIGTERM (exit status 143) and returns all it
/// wrote on standard output. Panics, killing it, when the line never comes.
pub fn stdout_when_stopped(cmd: &mut Command, marker: &str) -> String {
    let mut child = spawn_piped(cmd);
    let out = Lines::of(child.stdout.take().expect("stdout"));
    let err = Lines::of(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    if err.until(marker, &mut seen).is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "no {marker:?} on standard error: {seen}; standard output: {}",
            out.rest()
        );
    }
    let status = stop_with(&mut child, "-TERM");
    assert_eq!(status.code(), Some(143), "{status:?}");
    out.rest()
}

/// A SimRob server in a thread of this test process on a loopback UDP port, saving into a
/// directory of its own; stopped, and the directory removed, when dropped.
pub struct InProcess {
    pub addr: std::net::SocketAddr,
    pub save_dir: std::path::PathBuf,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl InProcess {
    /// A server configured as `config` but on port 0 and saving into a fresh directory named
    /// after `tag`; `scenario` (a path from the repository's root), when given, is applied
    /// before the server starts.
    pub fn start(
        tag: &str,
        config: simrob_session::ServerConfig,
        scenario: Option<&str>,
    ) -> InProcess {
        let save_dir = std::env::temp_dir().join(format!("simrob-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&save_dir);
        let config = simrob_session::ServerConfig {
            receiver_port: 0,
            save_directory: save_dir.clone(),
            ..config
        };
        let store = simrob_server::files::DirStore::new(&save_dir).expect("save dir");
        let mut server = simrob_server::udp::UdpServer::bind(
            simrob_session::Session::new(config),
            Box::new(store),
        )
        .expect("bind");
        if let Some(scenario) = scenario {
            let scene = std::fs::read(repo(scenario)).expect("scenario");
            let keys = simrob_protocol::CommandKeys::default();
            let requests: Vec<_> = simrob_protocol::decode_datagram(&scene, &keys)
                .into_iter()
                .map(|r| r.expect("decodes"))
                .collect();
            server.apply_local(&requests).expect("applies");
        }
        let addr = server.local_addr().expect("address");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || server.run(&flag).expect("server loop"));
        InProcess {
            addr,
            save_dir,
            stop,
            thread: Some(thread),
        }
    }

    /// `simrob send --server ADDR --timeout 10 ARGS…`.
    pub fn send(&self, args: &[&str]) -> std::process::Output {
        simrob()
            .env_remove("SIMROB_SERVER")
            .env_remove("RUST_BACKTRACE")
            .args([
                "send",
                "--server",
                &self.addr.to_string(),
                "--timeout",
                "10",
            ])
            .args(args)
            .output()
            .expect("simrob runs")
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.save_dir);
    }
}
