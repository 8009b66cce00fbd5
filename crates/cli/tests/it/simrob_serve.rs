//! `simrob serve` and `simrob demo` as a user runs them.

use crate::listening;
use crate::support::{refused_at_start, repo, send_piped, simrob};
use std::io::Write;
use std::net::UdpSocket;
use std::process::Stdio;
use std::time::Duration;

/// `kill`, `timeout` and Slurm stop a server with SIGTERM, a closed terminal with SIGHUP: it
/// stops as on Ctrl-C (its summary, its recording finished), with 128 + the signal.
#[test]
fn serve_stopped_by_sigterm_or_sighup_finishes_its_recording() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-term-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (signal, code) in [("-TERM", 143), ("-HUP", 129)] {
        let rec = dir.join(format!("run{signal}.simrec"));
        let (mut child, mut out, _addr) = listening::start(
            simrob()
                .args(["serve", "--port", "0", "--speed", "1", "--scenario"])
                .arg(repo("scenarios/soccer.xml"))
                .arg("--record")
                .arg(&rec),
            "udp",
        );
        let status = crate::support::stop_with(&mut child, signal);
        assert_eq!(status.code(), Some(code), "{signal}: {status:?}");
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
        assert!(rest.contains("stopped at iteration"), "{signal}: {rest}");
        crate::support::assert_recording_finished(&rec);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `timeout` and Slurm send their stop signal to the server and to its process group, so it
/// comes twice: the second waits for the first's clean stop (the recording finished, the
/// summary printed) before it ends the process.
#[cfg(unix)]
#[test]
fn serve_stopped_by_two_signals_at_once_finishes_its_recording() {
    use nix::sys::signal::{kill, Signal};
    let dir = std::env::temp_dir().join(format!("simrob-cli-twice-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rec = dir.join("twice.simrec");
    let (mut child, mut out, _addr) = listening::start(
        simrob()
            .args(["serve", "--port", "0", "--speed", "0", "--scenario"])
            .arg(repo("scenarios/soccer.xml"))
            .arg("--record")
            .arg(&rec),
        "udp",
    );
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    // Two different signals: the kernel does not merge them into one.
    kill(pid, Signal::SIGINT).unwrap();
    kill(pid, Signal::SIGTERM).unwrap();
    let status = child.wait().unwrap();
    assert!(matches!(status.code(), Some(130 | 143)), "{status:?}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert!(rest.contains("stopped at iteration"), "{rest}");
    crate::support::assert_recording_finished(&rec);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serve_listens_answers_and_stops_on_ctrl_c() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("Configuration.data");
    std::fs::write(
        &config,
        "# legacy form\ncommunicationreceiverip 127.0.0.1\nsyncwait 0.3\n",
    )
    .unwrap();
    let (mut child, mut out, addr) = listening::start(
        simrob()
            .args([
                "serve",
                "--port",
                "0",
                "--scenario",
                &repo("scenarios/soccer.xml"),
            ])
            .arg("--config")
            .arg(&config)
            .arg("--save-dir")
            .arg(&dir),
        "udp",
    );
    let agent = UdpSocket::bind("127.0.0.1:0").unwrap();
    agent
        .set_read_timeout(Some(Duration::from_secs(3)))
        .unwrap();
    let port = agent.local_addr().unwrap().port();
    let register = format!(
        "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"GUI\"><Port>{port}</Port><IP>127.0.0.1</IP><Sync>false</Sync><Broadcast>-1</Broadcast><Key>cli</Key></Agent_Message></Message>"
    );
    agent.send_to(register.as_bytes(), &addr).unwrap();
    let mut buf = [0u8; 2048];
    let (n, _) = agent.recv_from(&mut buf).unwrap();
    assert_eq!(
        std::str::from_utf8(&buf[..n]).unwrap(),
        format!("<Response>Sucessfully added agent with key cli, port {port} and ip 127.0.0.1</Response>")
    );
    // The scenario is there: moving the SumBot (entity 3) works, entity 4 does not exist.
    agent
        .send_to(b"<Message><Simulation_Message><Entity_Request Command=\"Set_Entity_Position\"><Entity_Id>4</Entity_Id><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0</Position_Z></Entity_Request></Simulation_Message></Message>", &addr)
        .unwrap();
    let (n, _) = agent.recv_from(&mut buf).unwrap();
    assert!(std::str::from_utf8(&buf[..n])
        .unwrap()
        .contains("entity 4 does not exist"));
    // Ctrl-C: a clean stop with a summary.
    let status = crate::support::stop_with(&mut child, "-INT");
    // Stopped by Ctrl-C: status 130, as shells expect of an interrupted program.
    assert_eq!(status.code(), Some(130), "{status:?}");
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    // --scenario starts the simulation: with an agent registered it ran (as fast as it can),
    // at least the iteration after the registration was handled.
    let iteration: u64 = rest
        .split("stopped at iteration ")
        .nth(1)
        .and_then(|r| r.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no summary: {rest}"));
    assert!(iteration >= 1, "{rest}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serve_refuses_a_bad_configuration() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-badconf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("simrob.toml");
    std::fs::write(&config, "maximumdatagramsize = 12\n").unwrap();
    let out = simrob()
        .args(["serve", "--port", "0", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("maximumdatagramsize"));
    let out = simrob().args(["serve", "--list-config"]).output().unwrap();
    let keys = String::from_utf8_lossy(&out.stdout);
    for key in [
        "communicationreceiverport 5005",
        "maximumdatagramsize",
        "commandcreateentitykey Create_Entity",
        "realtimefactor 0",
    ] {
        assert!(keys.contains(key), "{key} missing from --list-config");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scenario the world refuses: `serve` says why once, as `run` does (it said it three
/// times, once for each layer of the error).
#[test]
fn serve_and_run_say_once_why_a_scenario_is_refused() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-badscen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("neg_mass.xml");
    std::fs::write(
        &scenario,
        "<Message><Simulation_Message><Control_Request Command=\"Create_Entity\" Type=\"Ball\"><Data><Entity_id>8</Entity_id><Mass>-2</Mass><Position_X>0</Position_X><Position_Y>0</Position_Y><Position_Z>0.1</Position_Z><Rotation_X>0</Rotation_X><Rotation_Y>0</Rotation_Y><Rotation_Z>0</Rotation_Z><Radius>0.03</Radius></Data></Control_Request></Simulation_Message></Message>",
    )
    .unwrap();
    for command in [&["serve", "--port", "0"][..], &["run"][..]] {
        let out = simrob().args(command).arg(&scenario).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{command:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            err.matches("Mass must be positive").count(),
            1,
            "{command:?}: {err}"
        );
        assert!(
            err.contains("request 1: Create_Entity Ball 8"),
            "{command:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn demo_drives_the_sumbot_from_a_script() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("drive.txt");
    let mut f = std::fs::File::create(&script).unwrap();
    writeln!(f, "# t left right\n0 6 6\n1.5 0 0").unwrap();
    let out = simrob()
        .args(["demo", "--every-seconds", "0.5", "--script"])
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.starts_with("listening on udp://127.0.0.1:"), "{text}");
    let xs: Vec<f64> = text
        .lines()
        .filter_map(|l| l.split("robot (").nth(1))
        .filter_map(|rest| rest.split(',').next())
        .filter_map(|x| x.trim().parse().ok())
        .collect();
    assert!(xs.len() >= 2, "{text}");
    // Positive wheel speeds drive the SumBot towards −X.
    assert!(
        xs[xs.len() - 1] < xs[0] - 0.02,
        "robot did not move: {xs:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn send_runs_again_against_the_same_serve() {
    // A researcher runs the commander, then runs it again against the server that keeps
    // running: the second run comes from a new port and registers key "commander" again.
    let dir = std::env::temp_dir().join(format!("simrob-cli-rerun-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut server, _out, addr) = listening::start(
        simrob()
            .args(["serve", "--port", "0", "--save-dir"])
            .arg(&dir),
        "udp",
    );
    let run = || send_piped(&addr, b"timestep 0.025\nquit\n");
    let first = run();
    let second = run();
    let _ = server.kill();
    let _ = server.wait();
    let _ = std::fs::remove_dir_all(&dir);
    for (n, o) in [(1, &first), (2, &second)] {
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "run {n}: {stdout}{stderr}");
        assert!(
            stdout.starts_with("Sucessfully added agent with key commander, "),
            "run {n}: {stdout}"
        );
        assert!(
            stdout.contains("Set_Timestep: Timestep set to 0.025"),
            "run {n}: {stdout}"
        );
    }
    // The first run unregistered at `quit`: the second registers afresh (a run that
    // could not unregister, killed, is moved instead: the session's rerun tests).
    assert!(
        !String::from_utf8_lossy(&second.stdout).contains("moved from"),
        "{}",
        String::from_utf8_lossy(&second.stdout)
    );
}

/// `simrob --version` says whether this build steps the physics on several threads.
#[test]
fn the_version_says_whether_physics_runs_on_several_threads() {
    let out = simrob().arg("--version").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let expected = if cfg!(feature = "parallel") {
        "(parallel physics"
    } else {
        "(physics on one thread"
    };
    assert!(
        text.starts_with("simrob ") && text.contains(expected),
        "{text}"
    );
}

/// A `simrob` built without parallel physics refuses more than one physics thread, from the
/// flag or the configuration key, on `serve` and `run` (`run` took the key and stepped on one
/// thread), and says how to build one that takes them; out of range is refused in any build,
/// as the command-line mistake it is (exit code 2, the range in the message), whatever the
/// value (`0` and `257` exited 1 and `-1` was told "0 or more").
#[test]
fn serve_and_run_refuse_physics_threads_they_cannot_use() {
    for command in [
        vec!["serve", "--port", "0"],
        vec!["run", "--iterations", "1"],
    ] {
        for bad in ["0", "257", "-1", "abc", "1.5"] {
            let out = simrob()
                .args(&command)
                .args(["--physics-threads", bad])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{command:?} {bad}: {err}");
            assert!(
                err.contains("--physics-threads") && err.contains("1 to 256"),
                "{command:?} {bad}: {err}"
            );
        }
    }
    if cfg!(feature = "parallel") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("simrob-cli-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("simrob.toml");
    std::fs::write(&config, "physicsthreads = 2\n").unwrap();
    for args in [
        vec!["serve", "--port", "0", "--physics-threads", "2"],
        vec!["serve", "--port", "0", "--config", config.to_str().unwrap()],
        vec!["run", "--iterations", "1", "--physics-threads", "2"],
        vec![
            "run",
            "--iterations",
            "1",
            "--config",
            config.to_str().unwrap(),
        ],
    ] {
        let out = simrob().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--features parallel") && err.contains("physicsthreads"),
            "{args:?}: {err}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `serve --record` naming the scenario or the configuration file the server reads, however
/// spelt (`./`, a symbolic or a hard link), is refused before the server starts, and the file
/// is left as it was (it was overwritten with the recording).
#[test]
fn serve_refuses_to_record_over_its_scenario_or_configuration() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-record-self-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("sc.xml");
    std::fs::copy(repo("scenarios/soccer.xml"), &scenario).unwrap();
    let config = dir.join("cfg.toml");
    std::fs::write(&config, "realtimefactor = 0\n").unwrap();
    let before = (
        std::fs::read(&scenario).unwrap(),
        std::fs::read(&config).unwrap(),
    );
    let mut records = vec![
        (scenario.clone(), "the scenario"),
        (dir.join(".").join("sc.xml"), "the scenario"),
        (config.clone(), "the configuration file"),
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&scenario, dir.join("link.simrec")).unwrap();
        records.push((dir.join("link.simrec"), "the scenario"));
        std::fs::hard_link(&config, dir.join("hard.simrec")).unwrap();
        records.push((dir.join("hard.simrec"), "the configuration file"));
    }
    for (record, what) in records {
        // A server that started prints its ready lines: the first line says whether it did.
        let (code, err) = refused_at_start(
            simrob()
                .args(["serve", "--port", "0", "--speed", "0", "--config"])
                .arg(&config)
                .arg("--scenario")
                .arg(&scenario)
                .arg("--record")
                .arg(&record),
            &format!("{record:?}: the server started"),
        );
        assert_eq!(code, Some(1), "{record:?}: {err}");
        assert!(
            err.contains(&format!("--record {} is {what}", record.display()))
                && err.contains("give another file"),
            "{record:?}: {err}"
        );
    }
    let after = (
        std::fs::read(&scenario).unwrap(),
        std::fs::read(&config).unwrap(),
    );
    assert!(before == after, "an input was changed");
    let _ = std::fs::remove_dir_all(&dir);
}
