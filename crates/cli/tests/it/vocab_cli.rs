//! One command-line vocabulary: `--gui[=ADDR]` for every viewer, a taken port handled one
//! way, old spellings still accepted with a line saying what to write instead.

use crate::support::{repo, simrob, Lines};
use std::process::{Child, Stdio};

/// Starts `args`, reads standard output up to the line starting with `prefix` and returns the
/// rest of that line, then stops the process and returns its standard error too.
fn address_line(args: &[&str], prefix: &str) -> (Option<String>, String) {
    address_line_on(args, prefix, false)
}

/// [`address_line`], the line read from standard error when `on_stderr` (the commands that
/// keep standard output for their summary, `--json` included); then the standard error
/// returned is what came before it and after the process stopped. Every wait is bounded.
fn address_line_on(args: &[&str], prefix: &str, on_stderr: bool) -> (Option<String>, String) {
    let mut child: Child = simrob()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("simrob runs");
    let out = Lines::of(child.stdout.take().expect("stdout"));
    let err = Lines::of(child.stderr.take().expect("stderr"));
    let mut seen = String::new();
    let found = if on_stderr {
        err.until(prefix, &mut seen)
    } else {
        out.until(prefix, &mut String::new())
    };
    let _ = child.kill();
    let _ = child.wait();
    let found = found.map(|l| l[prefix.len()..].to_string());
    (found, seen + &err.rest())
}

fn port_of(addr: &str) -> u16 {
    addr.rsplit(':')
        .next()
        .and_then(|p| p.split_whitespace().next().map(str::to_string))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {addr:?}"))
}

#[test]
fn serve_gui_with_a_port_after_equals() {
    let (addr, stderr) = address_line(
        &["serve", "--gui=0", "--port", "0", "--bind", "127.0.0.1"],
        "viewer on http://",
    );
    let addr = addr.unwrap_or_else(|| panic!("no viewer: {stderr}"));
    assert_ne!(port_of(&addr), 0, "{addr}");
}

#[test]
fn swarm_run_gui_with_a_free_port() {
    let (addr, stderr) = address_line_on(
        &[
            "swarm",
            "run",
            "--gui=0",
            &repo("scenarios/swarm/hospital.toml"),
        ],
        "2D view on http://",
        true,
    );
    let addr = addr.unwrap_or_else(|| panic!("no 2D view: {stderr}"));
    assert_ne!(port_of(&addr), 0, "{addr}");
}

#[test]
fn a_taken_named_port_is_an_error_that_says_what_to_do() {
    let held = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = held.local_addr().expect("addr").port().to_string();
    let gui = format!("--gui={port}");
    for args in [
        vec!["serve", gui.as_str(), "--port", "0", "--bind", "127.0.0.1"],
        vec!["mrs", "--port", "0", gui.as_str()],
        vec!["swarm", "run", gui.as_str(), "SCENARIO"],
    ] {
        let scenario = repo("scenarios/swarm/hospital.toml");
        let args: Vec<&str> = args
            .into_iter()
            .map(|a| {
                if a == "SCENARIO" {
                    scenario.as_str()
                } else {
                    a
                }
            })
            .collect();
        let out = simrob()
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("simrob runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("port {port} is taken")) && stderr.contains("--gui=0"),
            "{args:?}: {stderr}"
        );
        // Nothing said it was ready (a script waiting for `listening on` would think so).
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(!stdout.contains("listening"), "{args:?}: {stdout}");
    }
}

#[test]
fn http_port_still_works_and_says_what_to_use() {
    let (addr, stderr) = address_line(
        &[
            "serve",
            "--http-port",
            "0",
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
        ],
        "viewer on http://",
    );
    assert!(addr.is_some(), "no viewer: {stderr}");
    assert!(stderr.contains("use --gui=0"), "{stderr}");
}

#[test]
fn soccer_match_http_port_starts_the_viewer() {
    let (addr, stderr) = address_line_on(
        &["soccer", "match", "--duration", "6", "--http-port", "0"],
        "viewer on http://",
        true,
    );
    assert!(addr.is_some(), "--http-port was ignored: {stderr}");
    assert!(stderr.contains("use --gui=0"), "{stderr}");
}

#[test]
fn real_time_factor_still_works_and_says_what_to_use() {
    let (addr, stderr) = address_line(
        &[
            "serve",
            "--real-time-factor",
            "2",
            "--port",
            "0",
            "--bind",
            "127.0.0.1",
        ],
        "listening on udp://",
    );
    assert!(addr.is_some(), "{stderr}");
    assert!(stderr.contains("use --speed 2"), "{stderr}");
}

#[test]
fn demo_speed_is_refused_with_a_hint_to_write_wheel_speed() {
    // Once taken, silently, as the wheel speed; `--speed` is the pace everywhere else.
    let out = simrob()
        .args(["demo", "--speed", "3"])
        .stdin(Stdio::null())
        .output()
        .expect("simrob runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("write --wheel-speed 3"), "{stderr}");
}

#[test]
fn negative_numbers_reach_each_command_and_its_own_message() {
    // Once "unexpected argument '-5' found", with a tip (`-- -5`) that did not work.
    let scenario = repo("scenarios/swarm/hospital.toml");
    let soccer = repo("scenarios/soccer.xml");
    for (args, code, says) in [
        (
            vec!["swarm", "run", &scenario, "--duration", "-5"],
            2,
            "invalid value '-5' for '--duration <S>': expected simulated seconds, 0 or more (or 50ms, 2s, 1min), got '-5'",
        ),
        (
            vec!["run", &soccer, "--timestep", "-1"],
            2,
            "invalid value '-1' for '--timestep <S>': expected a time: seconds, 0 or more (or 50ms, 2s, 1min), got '-1'",
        ),
        (
            vec!["mrs", "--speed", "-1"],
            2,
            "invalid value '-1' for '--speed <F>': simulated seconds per wall second: 0 (as fast as possible) or a number of at least 0.000001",
        ),
        (
            vec!["swarm", "run", &scenario, "--robots", "-3"],
            2,
            "invalid value '-3' for '--robots <N>': expected a whole number, 0 or more, got '-3'",
        ),
        (
            vec!["run", &soccer, "--iterations", "-3"],
            2,
            "a whole number, 0 or more",
        ),
    ] {
        let out = simrob()
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("simrob runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("unexpected argument"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn every_command_that_takes_a_pace_refuses_the_same_bad_values_in_the_same_words() {
    // Each command checked `--speed` on its own: exit 1 or 2, "must be 0 or positive", "a
    // factor ≥ 0", the configuration key's name; `mrs --speed 1e-300` printed a 300-digit
    // time factor and served.
    let hospital = repo("scenarios/swarm/hospital.toml");
    let drones = repo("scenarios/swarm/drone-swarm.toml");
    let soccer = repo("scenarios/soccer.xml");
    let commands: [Vec<&str>; 5] = [
        vec!["serve", &soccer, "--port", "0"],
        vec!["mrs", "--port", "0"],
        vec!["soccer", "match", "--gui=0"],
        vec!["coord", "swarm", &hospital],
        vec!["swarm", "run", &drones, "--gui=0"],
    ];
    for command in &commands {
        for bad in ["-1", "NaN", "inf", "1e-300", "fast"] {
            let out = simrob()
                .args(command)
                .args(["--speed", bad])
                .stdin(Stdio::null())
                .output()
                .expect("simrob runs");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{command:?} --speed {bad}: {stderr}"
            );
            assert!(
                stderr.contains(&format!("invalid value '{bad}' for '--speed <F>': simulated seconds per wall second: 0 (as fast as possible) or a number of at least 0.000001")),
                "{command:?} --speed {bad}: {stderr}"
            );
        }
    }
}

#[test]
fn a_scenario_is_positional_or_a_flag_on_every_command_that_takes_one() {
    let hospital = repo("scenarios/swarm/hospital.toml");
    let soccer = repo("scenarios/soccer.xml");
    for (positional, flag) in [
        (
            vec![
                "swarm",
                "run",
                &hospital,
                "--duration",
                "1",
                "--json",
                "--quiet",
            ],
            vec![
                "swarm",
                "run",
                "--scenario",
                &hospital,
                "--duration",
                "1",
                "--json",
                "--quiet",
            ],
        ),
        (
            vec!["run", &soccer, "--iterations", "3", "--json"],
            vec!["run", "--scenario", &soccer, "--iterations", "3", "--json"],
        ),
        (
            vec![
                "coord", "compare", "hospital", "--seeds", "1", "--json", "--quiet",
            ],
            vec![
                "coord",
                "compare",
                "--scenario",
                "hospital",
                "--seeds",
                "1",
                "--json",
                "--quiet",
            ],
        ),
    ] {
        let run = |args: &[&str]| {
            let out = simrob()
                .current_dir(repo(""))
                .args(args)
                .stdin(Stdio::null())
                .output()
                .expect("simrob runs");
            assert!(out.status.success(), "{args:?}: {out:?}");
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let a: serde_json::Value = serde_json::from_str(run(&positional).trim()).unwrap();
        let b: serde_json::Value = serde_json::from_str(run(&flag).trim()).unwrap();
        for key in ["robots", "scenario", "iterations", "policies"] {
            assert_eq!(a.get(key), b.get(key), "{key}: {positional:?} / {flag:?}");
        }
    }
    // Both at once, or neither where one is needed: clap says which forms there are.
    for args in [
        vec!["swarm", "run", "a.toml", "--scenario", "b.toml"],
        vec!["coord", "swarm"],
        vec!["serve", "--no-start"],
    ] {
        let out = simrob().args(&args).output().expect("simrob runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("<SCENARIO|--scenario <FILE>>"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn a_robot_agent_without_a_backend_names_both() {
    let out = simrob()
        .args(["coord", "robot", "--id", "2"])
        .output()
        .expect("simrob runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("<--server <ADDR>|--mrs <ADDR>>"),
        "{stderr}"
    );
}

/// `--gui 8081` (a space where `=` belongs) was read as the next argument: `serve` took it
/// for its scenario, the others for an unexpected argument. Every command now refuses it
/// with what to write, before anything starts.
#[test]
fn gui_with_a_space_says_to_write_equals() {
    let scenario = repo("scenarios/swarm/hospital.toml");
    for args in [
        vec!["mrs", "--gui", "9000"],
        vec!["serve", "--port", "0", "--gui", "8081"],
        vec!["swarm", "run", "--gui", "8081", scenario.as_str()],
        vec!["demo", "--gui", "127.0.0.1:8081"],
        vec!["coord", "cc", "--gui", "8081"],
    ] {
        let out = simrob()
            .args(&args)
            .stdin(Stdio::null())
            .output()
            .expect("simrob runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let addr = args[args.iter().position(|a| *a == "--gui").unwrap_or(0) + 1];
        assert!(
            stderr.contains(&format!(
                "write --gui={addr} (the viewer's address takes '=')"
            )),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}: something started");
    }
}

#[test]
fn an_unnamed_taken_port_gives_way_to_a_free_one_and_says_so() {
    // Hold 8080 if we can; if something else already holds it, the situation is the same.
    let _held = std::net::TcpListener::bind("127.0.0.1:8080");
    let (addr, stderr) = address_line(&["mrs", "--port", "0", "--gui"], "2D view on http://");
    let addr = addr.unwrap_or_else(|| panic!("no 2D view: {stderr}"));
    assert_ne!(port_of(&addr), 8080, "{addr}");
    assert!(stderr.contains("port 8080 is taken"), "{stderr}");
}

#[test]
fn replay_bind_still_works_and_says_what_to_use() {
    let dir = std::env::temp_dir().join(format!("simrob-vocab-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let file = dir.join("run.jsonl");
    let status = simrob()
        .args(["swarm", "run", "--quiet", "--record"])
        .arg(&file)
        .arg(repo("scenarios/swarm/hospital.toml"))
        .stdout(Stdio::null())
        .status()
        .expect("swarm run");
    assert!(status.success());
    let file = file.to_string_lossy().to_string();
    let (addr, stderr) = address_line(
        &["replay", &file, "--bind", "127.0.0.1", "--gui=0"],
        "2D view on http://",
    );
    let _ = std::fs::remove_dir_all(&dir);
    let addr = addr.unwrap_or_else(|| panic!("no 2D view: {stderr}"));
    assert!(addr.starts_with("127.0.0.1:"), "{addr}");
    assert!(stderr.contains("use --gui=127.0.0.1"), "{stderr}");
}

#[test]
fn swarm_run_speed_without_gui_says_it_needs_gui() {
    let out = simrob()
        .args(["swarm", "run", "--speed", "2"])
        .arg(repo("scenarios/swarm/hospital.toml"))
        .output()
        .expect("simrob runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("needs --gui"), "{stderr}");
}

/// A server's port that is taken: every server says what to do, the same way (`serve` did;
/// `mrs`, `coord serve` and `coord cc` said only "Address already in use").
#[test]
fn a_taken_server_port_says_what_to_do_on_every_server() {
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("a free TCP port");
    let tcp_port = tcp.local_addr().expect("addr").port().to_string();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").expect("a free UDP port");
    let udp_port = udp.local_addr().expect("addr").port().to_string();
    // Each runs in an empty folder: a server that cannot listen writes nothing there.
    let dir = std::env::temp_dir().join(format!("simrob-port-taken-{}", std::process::id()));
    for args in [
        vec!["serve", "--bind", "127.0.0.1", "--port", udp_port.as_str()],
        vec!["mrs", "--bind", "127.0.0.1", "--port", tcp_port.as_str()],
        vec![
            "coord",
            "serve",
            "--bind",
            "127.0.0.1",
            "--port",
            tcp_port.as_str(),
        ],
        vec![
            "coord",
            "cc",
            "--bind",
            "127.0.0.1",
            "--port",
            tcp_port.as_str(),
        ],
    ] {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("an empty folder");
        let out = simrob()
            .args(&args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .output()
            .expect("simrob runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .expect("the folder")
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{args:?} wrote {left:?}");
        let port = args[args.len() - 1];
        assert!(
            stderr.contains(&format!(":{port} (the port is taken"))
                && stderr.contains("choose another --port, or --port 0 for a free one"),
            "{args:?}: {stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
