//! `simrob send` (the commander) as a user runs it, against a real SimRob server running in
//! this test process on a loopback UDP port.

use crate::support::{repo, send_piped, InProcess};
use std::io::{BufRead, BufReader, Write};
use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use simrob_session::ServerConfig;

/// A server in a thread, with its own save directory.
fn start_server(tag: &str) -> InProcess {
    InProcess::start(&format!("send-{tag}"), ServerConfig::default(), None)
}

impl InProcess {
    /// Sends and expects a confirmation: stdout, exit 0.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.send(args);
        assert!(
            out.status.success(),
            "{args:?}: {:?}\nstdout: {}\nstderr: {}",
            out.status,
            text(&out.stdout),
            text(&out.stderr)
        );
        assert_eq!(text(&out.stderr), "", "{args:?}");
        text(&out.stdout)
    }
}

fn simrob() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_simrob"));
    c.env_remove("SIMROB_SERVER").env_remove("RUST_BACKTRACE");
    c
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn send_set_timestep_is_confirmed() {
    let server = start_server("timestep");
    assert_eq!(
        server.ok(&["set-timestep", "0.02"]),
        "Set_Timestep: Timestep set to 0.02\n"
    );
    // The alias and a negative number as a value.
    assert_eq!(
        server.ok(&["timestep", "0.015"]),
        "Set_Timestep: Timestep set to 0.015\n"
    );
    assert_eq!(
        server.ok(&["gravity", "-3.7"]),
        "Set_World_Gravity: Gravity set to -3.7\n"
    );
    // The server's own range check comes back as an error.
    let out = server.send(&["world-bounciness", "2"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).starts_with("Error: Set_World_Bounciness: "),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn send_materials_then_sumbot_then_drive_it() {
    let server = start_server("sumbot");
    let materials = repo("scenarios/materials.xml");
    let sumbot = repo("scenarios/sumbot.xml");
    assert_eq!(
        server.ok(&["register-materials", &materials]),
        "Register_Materials_Interactions: Registered 2 materials and 3 interactions\n"
    );
    assert_eq!(
        server.ok(&["create-entity", &sumbot]),
        "Create_Entity: Created Robot entity 3\n"
    );
    assert!(server
        .ok(&["motors", "--entity", "3", "0=3", "1=-5"])
        .starts_with("Robot_Motor_Control: "));
    assert!(server
        .ok(&["set-position", "--entity", "3", "0.5", "-0.25", "0.4"])
        .starts_with("Set_Entity_Position: "));
    // The same robot again: the server refuses a duplicate id.
    let out = server.send(&["create-entity", &sumbot]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("entity 3 already exists"));
    // A file of the wrong kind is refused before anything is sent.
    let out = server.send(&["create-entity", &materials]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("not Create_Entity"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn send_motors_to_a_missing_entity_fails_with_exit_1() {
    let server = start_server("missing");
    let out = server.send(&["motors", "--entity", "9", "0=1", "1=1"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert_eq!(
        text(&out.stderr),
        "Error: Robot_Motor_Control: entity 9 does not exist\n"
    );
}

#[test]
fn send_step_mode_initialize_and_steps() {
    let server = start_server("steps");
    let out = server.send(&["step"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not initialized"));
    assert_eq!(
        server.ok(&["pause"]),
        "Set_Step_Mode: Step mode set to true\n"
    );
    assert_eq!(
        server.ok(&["initialize"]),
        "Initialize_Simulation: Simulation initialized\n"
    );
    assert_eq!(
        server.ok(&["step", "--count", "3"]),
        "Make_Step: Step granted\n".repeat(3)
    );
    assert_eq!(
        server.ok(&["play"]),
        "Set_Step_Mode: Step mode set to false\n"
    );
    assert_eq!(
        server.ok(&["step-mode", "on"]),
        "Set_Step_Mode: Step mode set to true\n"
    );
    for (args, reply) in [
        (vec!["auto-adjust", "off"], "Set_AutoAdjust_Mode: "),
        (vec!["sync-mode", "asynchronic"], "Set_Sync_Mode: "),
        (vec!["sync-wait", "0.1"], "Set_Sync_Wait: "),
        (vec!["world-hardness", "0.2"], "Set_World_Hardness: "),
        (vec!["world-bounciness", "0.5"], "Set_World_Bounciness: "),
        (vec!["fast-mode", "off"], "Set_Fast_Mode: "),
        (
            vec!["steps-per-iteration", "2"],
            "Set_Steps_Per_Iteration: ",
        ),
    ] {
        let out = server.ok(&args);
        assert!(out.starts_with(reply), "{args:?}: {out}");
    }
}

#[test]
fn send_save_then_load_inside_the_save_dir() {
    let server = start_server("save");
    server.ok(&["register-materials", &repo("scenarios/materials.xml")]);
    server.ok(&["create-entity", &repo("scenarios/ball.xml")]);
    let saved = server.ok(&["save", "run1.xml"]);
    assert!(saved.starts_with("Save: simulation saved to "), "{saved}");
    assert!(server.save_dir.join("run1.xml").is_file());
    let loaded = server.ok(&["load", "run1.xml"]);
    assert!(
        loaded.starts_with("Load: simulation loaded from run1.xml"),
        "{loaded}"
    );
    let out = server.send(&["load", "../elsewhere.xml"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("outside the save directory"));
}

#[test]
fn send_scenario_sends_every_request_in_order() {
    let server = start_server("scenario");
    let out = server.ok(&["scenario", &repo("scenarios/soccer.xml")]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].starts_with("Register_Materials_Interactions: "));
    assert!(lines[1..].iter().all(|l| l.starts_with("Create_Entity: ")));
    // Again: the materials are fine, the field's id is taken: stop at the first error.
    let out = server.send(&["scenario", &repo("scenarios/soccer.xml")]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout).lines().count(), 1);
    assert!(text(&out.stderr).contains("already exists"));
}

#[test]
fn send_raw_prints_what_comes_back() {
    let server = start_server("raw");
    let dir = server.save_dir.clone();
    let garbage = dir.join("garbage.xml");
    std::fs::write(&garbage, "this is not <XML").unwrap();
    let out = server.send(&["--raw", garbage.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).starts_with("Error: "),
        "{}",
        text(&out.stderr)
    );
    // Two requests asking for confirmations: both answers, as soon as they came.
    let two = dir.join("two.xml");
    std::fs::write(
        &two,
        "<Message><Simulation_Message>\
         <Control_Request Command=\"Set_Timestep\"><Timestep>0.03</Timestep><Response>true</Response></Control_Request>\
         <Control_Request Command=\"Set_Fast_Mode\"><Fast_Mode>true</Fast_Mode><Response>true</Response></Control_Request>\
         </Simulation_Message></Message>",
    )
    .unwrap();
    let started = Instant::now();
    let out = server.send(&["--raw", two.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "waited the timeout"
    );
    assert_eq!(
        text(&out.stdout),
        "Set_Timestep: Timestep set to 0.03\nSet_Fast_Mode: Fast mode set to true\n"
    );
    // From standard input.
    let mut child = simrob()
        .args(["send", "--server", &server.addr.to_string(), "--raw", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"<Control_Request Command=\"Initialize_Simulation\"><Response>true</Response></Control_Request>")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "Initialize_Simulation: Simulation initialized\n"
    );
}

#[test]
fn send_raw_without_a_response_request_is_sent_and_succeeds() {
    // The SimRob manual's Set_Timestep example asks for no confirmation: the server applies
    // it silently; silence (no error) is success.
    let server = start_server("raw-silent");
    let file = server.save_dir.join("timestep.xml");
    std::fs::write(
        &file,
        "<Message><Simulation_Message><Control_Request Command=\"Set_Timestep\">\
         <Timestep>0.025</Timestep></Control_Request></Simulation_Message></Message>",
    )
    .unwrap();
    let out = server.send(&["--timeout", "1", "--raw", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("no error came back"),
        "{}",
        text(&out.stdout)
    );
    // It was applied: the saved simulation has the new timestep.
    server.ok(&["save", "after.xml"]);
    let saved = std::fs::read_to_string(server.save_dir.join("after.xml")).unwrap();
    assert!(saved.contains("0.025"), "{saved}");
}

#[test]
fn send_register_and_info() {
    let server = start_server("info");
    let out = server.ok(&["--register", "boss", "info", "boss"]);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("Sucessfully added agent with key boss, port "),
        "{out}"
    );
    assert!(
        lines[1].starts_with("Agent_Information: key boss, ip 127.0.0.1, port "),
        "{out}"
    );
    // (A key stays bound to the address that registered it: another commander takes another.)
    let out = server.send(&["--register", "chief", "info", "nobody"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("\"nobody\" is not registered"),
        "{}",
        text(&out.stderr)
    );
    // Info needs a registered requester: refused locally.
    let out = server.send(&["info", "boss"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("--register"));
    // Synchronize is never confirmed; an unknown key is an error.
    let out = server.send(&["synchronize", "0", "--key", "ghost"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("\"ghost\" is not registered"));
}

/// A socket that listens and never answers: what the commander sends, and its time-out.
#[test]
fn send_checks_values_before_sending_and_times_out_without_answer() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    silent
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let addr = silent.local_addr().unwrap().to_string();
    let send = |args: &[&str]| {
        simrob()
            .args(["send", "--server", &addr, "--timeout", "0.3"])
            .args(args)
            .output()
            .unwrap()
    };
    for (args, says) in [
        (
            vec!["set-timestep", "NaN"],
            "(or 50ms, 2s, 1min), got 'NaN'",
        ),
        (vec!["set-timestep", "0"], "expected a time above 0"),
        (
            vec!["motors", "--entity", "3", "0=abc"],
            "expected a number",
        ),
        (vec!["motors", "--entity", "3", "x=1"], "wheel joint id"),
        (vec!["motors", "--entity", "3"], "JOINT=VALUE"),
        (vec!["step", "--count", "0"], "0"),
        (vec!["fast-mode", "maybe"], "maybe"),
        (
            vec!["create-entity", "/nonexistent/robot.xml"],
            "cannot read",
        ),
    ] {
        let out = send(&args);
        // A bad value is a command line that does not parse (2, as for every command); a
        // file that cannot be read is a local error (1).
        let code = if args[0] == "create-entity" { 1 } else { 2 };
        assert_eq!(out.status.code(), Some(code), "{args:?}");
        assert!(
            text(&out.stderr).contains(says),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    // A local mistake reads as every other command's error: one line, `Error: `.
    let out = send(&["--config", "/nonexistent/simrob.toml", "pause"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "Error: cannot read configuration /nonexistent/simrob.toml: No such file or directory (os error 2)\n"
    );
    let mut buf = [0u8; 4096];
    assert!(silent.recv_from(&mut buf).is_err(), "something was sent");
    // A valid command: sent with a confirmation request, then exit 3 on silence (2 is a
    // command line that does not parse, such as a bad value).
    let out = send(&["set-timestep", "0.02"]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out.stderr).contains("no answer to Set_Timestep"));
    let (n, _) = silent.recv_from(&mut buf).unwrap();
    let sent = text(&buf[..n]);
    assert!(sent.contains("Command=\"Set_Timestep\""), "{sent}");
    assert!(sent.contains("<Response>true</Response>"), "{sent}");
    // SIMROB_SERVER is the default address.
    let out = simrob()
        .env("SIMROB_SERVER", &addr)
        .args(["send", "--timeout", "0.3", "initialize"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let (n, _) = silent.recv_from(&mut buf).unwrap();
    assert!(text(&buf[..n]).contains("Initialize_Simulation"));
}

#[test]
fn send_interactive_runs_piped_commands() {
    let server = start_server("prompt");
    let out = send_piped(
        &server.addr.to_string(),
        b"# a script\ninit\npause\n\nstep\nstep --count 2\ntimestep 0.025\nquit\nplay\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("Sucessfully added agent with key commander, "),
        "{stdout}"
    );
    assert_eq!(
        &lines[1..],
        [
            "Initialize_Simulation: Simulation initialized",
            "Set_Step_Mode: Step mode set to true",
            "Make_Step: Step granted",
            "Make_Step: Step granted",
            "Make_Step: Step granted",
            "Set_Timestep: Timestep set to 0.025",
        ],
        "{stdout}"
    );
}

#[test]
fn send_interactive_reports_errors_and_goes_on() {
    let server = start_server("prompt-errors");
    let mut child = simrob()
        .args(["send", "--server", &server.addr.to_string(), "-i"])
        .args(["--register", "desk"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"step\ntimestep NaN\nfly\nmotors --entity 5 0=1\ninit\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "the worst command status");
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(
        stdout.starts_with("Sucessfully added agent with key desk, "),
        "{stdout}"
    );
    assert!(stdout.ends_with("Initialize_Simulation: Simulation initialized\n"));
    assert!(
        stderr.contains("Error: Make_Step refused: the simulation is not initialized"),
        "{stderr}"
    );
    assert!(stderr.contains("got 'NaN'"), "{stderr}");
    assert!(stderr.contains("fly"), "{stderr}");
    assert!(stderr.contains("entity 5 does not exist"), "{stderr}");
}

/// The live log: an interactive commander shows the confirmations of another commander's
/// commands as they happen.
#[test]
fn send_interactive_log_shows_other_agents_commands() {
    let server = start_server("prompt-log");
    let mut child = simrob()
        .args(["send", "--server", &server.addr.to_string(), "-i"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let wait_for = |needle: &str| -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(e) => panic!("no line with {needle:?}: {e}"),
            }
        }
    };
    wait_for("Sucessfully added agent with key commander");
    stdin.write_all(b"init\n").unwrap();
    stdin.flush().unwrap();
    wait_for("Initialize_Simulation: Simulation initialized");
    // Someone else changes the timestep: the log shows it.
    server.ok(&["set-timestep", "0.04"]);
    assert_eq!(
        wait_for("Set_Timestep"),
        "Set_Timestep: Timestep set to 0.04"
    );
    stdin.write_all(b"quit\n").unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success());
}
