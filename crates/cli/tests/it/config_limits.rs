//! Every limit is a documented setting: the web viewer's limits are keys of `simrob serve`'s
//! configuration (a `--viewer-…` flag given on the command line wins), and the largest
//! scenario file is the key `maxscenariobytes` or the flag `--max-scenario-bytes`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use crate::support::{repo, simrob, Lines};

/// A folder of its own for one test.
fn folder(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("simrob-cfg-limits-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary folder");
    dir
}

/// A running `simrob serve` with the viewer, and the viewer's address.
struct Served {
    child: Child,
    viewer: SocketAddr,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `simrob serve --gui=0 --port 0` on loopback with `args`; waits (bounded) for the
/// viewer's address line.
fn serve_with_viewer(args: &[&str]) -> Served {
    let mut child = simrob()
        .args(["serve", "--port", "0", "--bind", "127.0.0.1", "--gui=0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simrob serve starts");
    let out = Lines::of(child.stdout.take().expect("stdout"));
    let err = Lines::of(child.stderr.take().expect("stderr"));
    let line = out.until("viewer on http://", &mut String::new());
    let Some(line) = line else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("{args:?}: no viewer: {}", err.rest());
    };
    let viewer = line["viewer on http://".len()..]
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no address in {line:?}"));
    Served { child, viewer }
}

/// Opens a page's WebSocket on the viewer at `addr`: the response's status line and the
/// connection (kept open by the caller to hold the page's place).
fn open_page(addr: SocketAddr) -> (String, TcpStream) {
    let mut s = TcpStream::connect(addr).expect("connect to the viewer");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("a read timeout");
    write!(
        s,
        "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .expect("send the upgrade");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).unwrap_or(0) == 0 {
            break;
        }
        head.push(byte[0]);
    }
    let status = String::from_utf8_lossy(&head)
        .lines()
        .next()
        .unwrap_or("")
        .to_string();
    (status, s)
}

/// Opens pages until one is refused; the pages that opened, and the refusal's body.
fn pages_until_refused(addr: SocketAddr, most: usize) -> (usize, String) {
    let mut open = Vec::new();
    for _ in 0..most {
        let (status, mut s) = open_page(addr);
        if status.contains("101") {
            open.push(s);
            continue;
        }
        assert!(status.contains("503"), "{status}");
        let mut body = String::new();
        let _ = s.read_to_string(&mut body);
        return (open.len(), body);
    }
    panic!("{most} pages opened, none refused");
}

#[test]
fn a_configuration_key_limits_the_viewers_pages_and_a_flag_wins_over_it() {
    let dir = folder("pages");
    for (name, text) in [
        ("Configuration.data", "viewermaxpages 1\n"),
        ("simrob.toml", "viewermaxpages = 1\n"),
    ] {
        let config = dir.join(name);
        std::fs::write(&config, text).expect("write the configuration");
        let config = config.to_string_lossy().to_string();
        // The key: one page, the second refused, saying which limit it met.
        let served = serve_with_viewer(&["--config", &config]);
        let (opened, body) = pages_until_refused(served.viewer, 10);
        assert_eq!(opened, 1, "{name}: {body}");
        assert!(
            body.contains("--viewer-max-pages 1") && body.contains("viewermaxpages"),
            "{name}: {body}"
        );
        drop(served);
        // The flag given on the command line wins over the file.
        let served = serve_with_viewer(&["--config", &config, "--viewer-max-pages", "3"]);
        let (opened, body) = pages_until_refused(served.viewer, 10);
        assert_eq!(opened, 3, "{name}: {body}");
        assert!(body.contains("--viewer-max-pages 3"), "{name}: {body}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_viewers_keys_are_listed_and_a_bad_value_is_refused_naming_the_key_and_its_range() {
    let out = simrob()
        .args(["serve", "--list-config"])
        .output()
        .expect("simrob runs");
    let keys = String::from_utf8_lossy(&out.stdout);
    for key in [
        "viewermaxpages 64\n",
        "viewermaxmessagebytes 65536\n",
        "viewercommandspersecond 100\n",
        "viewerheadertimeout 10\n",
        "viewermaxpending 256\n",
        "vieweridletimeout 60\n",
        "viewermaxviewbodies 20000\n",
        "viewermaxviewcells 65536\n",
        "viewermaxviewroutes 2000\n",
        "viewermaxviewnames 5000\n",
        "viewermaxstepframes 100000\n",
        "maxscenariobytes 67108864\n",
    ] {
        assert!(keys.contains(key), "{key:?} missing from --list-config");
    }
    let dir = folder("bad");
    for (name, text, says) in [
        (
            "Configuration.data",
            "viewermaxpages 0\n",
            "viewermaxpages: must be from 1 to 4096, found 0",
        ),
        (
            "simrob.toml",
            "vieweridletimeout = 0.5\n",
            "vieweridletimeout: must be from 1 to 86400 seconds, found 0.5",
        ),
        (
            "big.data",
            "viewermaxmessagebytes 16777217\n",
            "viewermaxmessagebytes: must be from 1024 to 16777216, found 16777217",
        ),
    ] {
        let config = dir.join(name);
        std::fs::write(&config, text).expect("write the configuration");
        // Without --gui too: the file is refused whole, and nothing starts.
        for gui in [&["--gui=0"][..], &[]] {
            let out = simrob()
                .args(["serve", "--port", "0", "--bind", "127.0.0.1", "--config"])
                .arg(&config)
                .args(gui)
                .stdin(Stdio::null())
                .output()
                .expect("simrob runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{name}: {stderr}");
            assert!(stderr.contains(says), "{name}: {stderr}");
            assert!(
                !String::from_utf8_lossy(&out.stdout).contains("listening on"),
                "{name}: started"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The error of a command that read `scenario` with a limit of 100 bytes: the file, its
/// size, the limit and what raises it.
fn says_too_large(stderr: &str, scenario: &Path) {
    let size = std::fs::metadata(scenario).expect("the scenario").len();
    for part in [
        scenario.display().to_string(),
        format!("{size} bytes"),
        "100-byte limit".to_string(),
        "--max-scenario-bytes".to_string(),
        "maxscenariobytes".to_string(),
    ] {
        assert!(stderr.contains(&part), "{part:?} not in {stderr}");
    }
}

#[test]
fn a_scenario_over_a_lowered_limit_is_refused_saying_how_to_raise_it() {
    let scenario = PathBuf::from(repo("scenarios/soccer.xml"));
    let path = scenario.to_string_lossy().to_string();
    let dir = folder("scenario");
    let config = dir.join("Configuration.data");
    std::fs::write(&config, "maxscenariobytes 100\n").expect("write the configuration");
    let config = config.to_string_lossy().to_string();
    // The server that is to receive `simrob send`'s requests: none must come.
    let listener = std::net::UdpSocket::bind("127.0.0.1:0").expect("a UDP port");
    listener.set_nonblocking(true).expect("non-blocking");
    let server = listener.local_addr().expect("its address").to_string();
    for args in [
        vec!["run", "--max-scenario-bytes", "100", &path],
        vec!["run", "--config", &config, &path],
        vec!["serve", "--port", "0", "--config", &config, &path],
        vec![
            "serve",
            "--port",
            "0",
            "--max-scenario-bytes",
            "100",
            "--scenario",
            &path,
        ],
        vec![
            "send",
            "--server",
            &server,
            "--max-scenario-bytes",
            "100",
            "scenario",
            &path,
        ],
        vec![
            "send", "--server", &server, "--config", &config, "scenario", &path,
        ],
    ] {
        let out = simrob()
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("simrob runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} ran: {stderr}");
        says_too_large(&stderr, &scenario);
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("listening on"),
            "{args:?} started"
        );
    }
    let mut buf = [0u8; 2048];
    assert!(
        listener.recv_from(&mut buf).is_err(),
        "simrob send sent a request from a file it refused"
    );
    // A flag given on the command line wins over the file's key.
    let out = simrob()
        .args(["run", "--iterations", "1", "--json", "--config", &config])
        .args(["--max-scenario-bytes", "1000000", &path])
        .output()
        .expect("simrob runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_save_file_a_scenario_loads_is_held_to_maxsavefilebytes() {
    let dir = folder("scenario-load");
    let saved = dir.join("saved.xml");
    std::fs::write(&saved, format!("<!-- {} -->", "x".repeat(200))).expect("write the save");
    let scenario = dir.join("load.xml");
    std::fs::write(
        &scenario,
        "<Message><Simulation_Message><Control_Request Command = \"Load\">\
         <File>saved.xml</File></Control_Request></Simulation_Message></Message>",
    )
    .expect("write the scenario");
    let config = dir.join("Configuration.data");
    std::fs::write(&config, "maxsavefilebytes 100\n").expect("write the configuration");
    let out = simrob()
        .args(["run", "--iterations", "1", "--config"])
        .arg(&config)
        .arg(&scenario)
        .stdin(Stdio::null())
        .output()
        .expect("simrob runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "ran: {stderr}");
    let size = std::fs::metadata(&saved).expect("the save").len();
    for part in [
        "saved.xml".to_string(),
        format!("{size} bytes"),
        "100-byte limit".to_string(),
        "maxsavefilebytes".to_string(),
    ] {
        assert!(stderr.contains(&part), "{part:?} not in {stderr}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_demo_script_and_the_futrob_teams_files_over_their_limits_are_refused_saying_how_to_raise_them()
{
    let dir = folder("text");
    let script = dir.join("drive.txt");
    std::fs::write(&script, "0 5 5\n1 0 0\n").expect("script");
    let team = dir.join("team.txt");
    std::fs::write(&team, "robot1/ini.config\n").expect("team file");
    let robot = dir.join("ini.config");
    std::fs::write(&robot, "[robot]\nid = 1\n").expect("robot configuration");
    for (args, what, path, flag) in [
        (
            vec!["demo", "--no-gui", "--max-script-bytes", "5", "--script"],
            "script",
            &script,
            "--max-script-bytes",
        ),
        (
            vec!["soccer", "team", "--max-config-bytes", "5", "--file"],
            "the team file",
            &team,
            "--max-config-bytes",
        ),
        (
            vec![
                "soccer",
                "player",
                "--max-config-bytes",
                "5",
                "--robot-config",
            ],
            "the robot configuration",
            &robot,
            "--max-config-bytes",
        ),
    ] {
        let out = simrob()
            .args(&args)
            .arg(path)
            .stdin(Stdio::null())
            .output()
            .expect("simrob runs");
        let err = String::from_utf8_lossy(&out.stderr);
        let len = std::fs::metadata(path).expect("size").len();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "{what} {} is {len} bytes, more than the 5-byte limit: raise it with {flag} BYTES",
                path.display()
            )),
            "{args:?}: {err}"
        );
        // Nothing started: no server, no robot.
        assert!(
            out.stdout.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    // The demo's script within its limit drives as before.
    let out = simrob()
        .args(["demo", "--no-gui", "--max-script-bytes", "100", "--script"])
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .expect("simrob runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
