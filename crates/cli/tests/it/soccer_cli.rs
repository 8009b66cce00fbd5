//! `simrob soccer` as a user runs it: players exchanging team messages over real UDP, the
//! spy and the sender, a team from a team file, bad configs.

use crate::soccer_common;

use std::io::Write;
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use soccer_common::{simrob, Proc};

/// A team port of this test run (several tests and runs may share the machine).
fn port(k: u16) -> u16 {
    30_000 + (std::process::id() % 5000) as u16 * 6 + k
}

fn rules(name: &str) -> String {
    format!(
        "{}/../../scenarios/soccer/rules/{name}",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("simrob-soccer-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Writes a robot's ini.config playing from a vision stub that shows a ball.
fn robot(dir: &Path, id: i32, role: i32, rules_file: &str, port: u16) -> PathBuf {
    std::fs::write(dir.join("ball.input"), "1 , ball , 12 , 150\n").unwrap();
    let p = dir.join(format!("robot{id}.config"));
    std::fs::write(
        &p,
        format!(
            "[robot_profile]\nid={id}\nrole={role}\nlogEnabled=1\nlogfile=robot{id}.log\nlogComm=1\nlogRules=1\nvisionStubEnabled=1\nvisionStubSrc=ball.input\nrules={}\nautoLookAtBall=0\n[network]\ncommPort={port}\nCOMM_TTL=1500\nreportPeriodMs=500\n",
            rules(rules_file)
        ),
    )
    .unwrap();
    p
}

fn send_raw(port: u16, bytes: &[u8]) {
    let s = UdpSocket::bind("0.0.0.0:0").unwrap();
    s.set_broadcast(true).unwrap();
    s.send_to(bytes, ("127.255.255.255", port)).unwrap();
}

#[test]
fn two_players_discover_each_other_ask_roles_and_expire() {
    let dir = tmp("players");
    let p = port(0);
    let keeper_cfg = robot(&dir, 1, 1, "penalty_keeper.xml", p);
    let kicker_cfg = robot(&dir, 3, 2, "kicker.xml", p);
    let mut keeper = Proc::start(
        simrob()
            .args(["soccer", "player", "--verbose", "--robot-config"])
            .arg(&keeper_cfg),
    );
    keeper.wait_for("robot 1 (goalkeeper) playing");
    // The keeper's own announcement went out before robot 3 existed: robot 3 misses it. A
    // player prints each message before it sends it, so the announcement is surely on the
    // air once a later message is printed (its first action, sent after the announcement).
    keeper.wait_for("sent src 1 -> dest 255 (all): COMM_PARAM_ROLE");
    keeper.wait_for("sent src 1 -> dest 255 (all): COMM_PARAM_ACTION_TAKEN");
    let mut kicker = Proc::start(
        simrob()
            .args(["soccer", "player", "--verbose", "--robot-config"])
            .arg(&kicker_cfg),
    );
    // Robot 3 announces itself: the keeper learns it with its role.
    keeper.wait_for("robot 1: teammate 3 joined as field_player");
    // Robot 3 discovers the keeper from its next status report and asks its role.
    kicker.wait_for("robot 3: teammate 1 joined");
    kicker.wait_for("sent src 3 -> dest 1: COMM_PARAM_ASK_ROLE");
    keeper.wait_for("received src 3 -> dest 1: COMM_PARAM_ASK_ROLE");
    keeper.wait_for("sent src 1 -> dest 3: COMM_PARAM_ROLE = 1 (goalkeeper)");
    kicker.wait_for("robot 3: teammate 1 is goalkeeper");
    // Garbage on the team port is dropped and counted, and the players play on.
    send_raw(p, b"hello");
    let mut odd = robot_msg(9, 255, 77, 0);
    send_raw(p, &odd);
    keeper.wait_for("dropped a datagram: datagram of 5 bytes");
    keeper.wait_for("dropped a datagram: unknown param code 77");
    // So is a message from an id no robot has (255 is the broadcast and spy id).
    send_raw(p, &robot_msg(255, 255, 2, 1));
    keeper.wait_for("dropped a datagram: src 255 -> dest 255 (all): COMM_PARAM_ROLE = 1 (goalkeeper): the source is not a robot id (1-254)");
    odd[8] = 3;
    // Robot 3 stops without a word: after COMM_TTL the keeper forgets it.
    drop(kicker);
    keeper.wait_for("robot 1: teammate 3 gone");
    assert!(
        keeper.child.try_wait().unwrap().is_none(),
        "the keeper plays on"
    );
    // The FutRob log file has the comm module's lines.
    let log = std::fs::read_to_string(dir.join("robot1.log")).unwrap();
    assert!(
        log.lines().any(|l| l.starts_with('[')
            && l.contains("MSG RECEIVED")
            && l.contains("[msgSrc = 3]")),
        "{log}"
    );
    // And what it sent, as FutRob's log has it (its announcement first).
    assert!(
        log.lines().any(|l| l.starts_with('[')
            && l.ends_with("MSG SENT [bytes = 16] [destIP = 127.255.255.255] [msgSrc = 1] [msgDest = 255] [msgParam = COMM_PARAM_START] [msgValue = 1]")),
        "{log}"
    );
    assert!(!log.contains("teammate 255"), "{log}");
}

fn robot_msg(src: i32, dest: i32, param: i32, value: i32) -> Vec<u8> {
    [src, dest, param, value]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

#[test]
fn the_spy_sees_what_the_sender_sends() {
    let p = port(1);
    let mut spy = Proc::start(simrob().args([
        "soccer",
        "spy",
        "--team-port",
        &p.to_string(),
        "--count",
        "5",
    ]));
    spy.wait_for("listening on udp port");
    let out = simrob()
        .args([
            "soccer",
            "send-msg",
            "--src",
            "2",
            "--dest",
            "3",
            "--param",
            "20",
            "--value",
            "19",
            "--team-port",
            &p.to_string(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("MSG SENT [bytes = 16]"));
    spy.wait_for("[msg=1] src 2 -> dest 3: COMM_PARAM_ACTION_TAKEN = 19 (kickBall)");
    let out = simrob()
        .args([
            "soccer",
            "send-msg",
            "--src",
            "1",
            "--param",
            "GK_POS_X",
            "--value",
            "-20",
            "--team-port",
            &p.to_string(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    spy.wait_for("[msg=2] src 1 -> dest 255 (all): COMM_PARAM_GK_POS_X = -20");
    // The FutRob sender's prompt.
    let mut c = simrob()
        .args([
            "soccer",
            "send-msg",
            "--interactive",
            "--team-port",
            &p.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin
        .take()
        .unwrap()
        .write_all(b"msg\n2\n3\n20\n19\n\nq\n")
        .unwrap();
    let out = c.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("CommSender!\naction (msg|q) > action > int msg src > "),
        "{text}"
    );
    assert!(text.contains("Program is unloading...."), "{text}");
    spy.wait_for("[msg=3] src 2 -> dest 3: COMM_PARAM_ACTION_TAKEN = 19 (kickBall)");
    send_raw(p, &[1, 2, 3]);
    spy.wait_for("[msg=4] DROPPED |----- datagram of 3 bytes");
    send_raw(p, &robot_msg(2, 3, 1234, 0));
    let all = spy.finish();
    assert!(
        all.iter()
            .any(|l| l.contains("[msg=5] DROPPED |----- unknown param code 1234")),
        "{all:?}"
    );
    assert_eq!(
        all.last().map(String::as_str),
        Some("spy: 5 datagrams, 3 accepted, 0 rejected, 2 dropped (1 bad length, 1 unknown param)")
    );
}

#[test]
fn the_spy_as_a_robot_rejects_what_that_robot_would() {
    let p = port(2);
    let mut spy = Proc::start(simrob().args([
        "soccer",
        "spy",
        "--id",
        "1",
        "--role",
        "1",
        "--team-port",
        &p.to_string(),
        "--count",
        "2",
    ]));
    spy.wait_for("listening");
    send_raw(p, &robot_msg(2, 3, 20, 19));
    spy.wait_for("-----| [msg=1] MSG REJECTED |----- src 2 -> dest 3");
    send_raw(p, &robot_msg(2, 1, 2, 2));
    spy.wait_for("[msg=2] src 2 -> dest 1: COMM_PARAM_ROLE = 2 (field_player)");
}

#[test]
fn the_spy_drops_messages_from_ids_no_robot_has() {
    // As robot 2, a ROLE from source 255 or -1 was taken as a teammate's.
    for id in ["2", "255"] {
        let p = port(if id == "2" { 4 } else { 5 });
        let mut spy = Proc::start(simrob().args([
            "soccer",
            "spy",
            "--id",
            id,
            "--team-port",
            &p.to_string(),
            "--count",
            "3",
        ]));
        spy.wait_for("listening");
        send_raw(p, &robot_msg(255, 255, 2, 1));
        spy.wait_for("[msg=1] DROPPED: the source is not a robot id (1-254) |----- src 255 -> dest 255 (all): COMM_PARAM_ROLE");
        send_raw(p, &robot_msg(-1, 2, 2, 1));
        spy.wait_for("[msg=2] DROPPED: the source is not a robot id (1-254) |----- src -1 -> dest 2: COMM_PARAM_ROLE");
        send_raw(p, &robot_msg(254, 255, 2, 1));
        let all = spy.finish();
        assert!(
            all.iter()
                .any(|l| l == "[msg=3] src 254 -> dest 255 (all): COMM_PARAM_ROLE = 1 (goalkeeper)"),
            "{all:?}"
        );
        assert_eq!(
            all.last().map(String::as_str),
            Some("spy: 3 datagrams, 1 accepted, 0 rejected, 2 dropped (0 bad length, 0 unknown param, 2 from a source not a robot id)"),
            "{all:?}"
        );
    }
}

#[test]
fn a_team_file_starts_every_robot() {
    let dir = tmp("team");
    let p = port(3);
    robot(&dir, 1, 1, "goalkeeper.xml", p);
    robot(&dir, 2, 2, "field_player.xml", p);
    std::fs::write(
        dir.join("team.txt"),
        "# keeper and a field player\nrobot1.config\nrobot2.config\n",
    )
    .unwrap();
    let mut team = Proc::start(
        simrob()
            .args(["soccer", "team", "--wall-duration", "30", "--file"])
            .arg(dir.join("team.txt")),
    );
    team.wait_for("team of 2 robots started");
    team.wait_for("[1] robot 1: teammate 2 joined");
    team.wait_for("[2] robot 2: teammate 1 joined");
    // Dropping `team` kills it outright (SIGKILL): its robots end with it, not 30 s later.
}

/// A team port for the tests of a robot's standard input, apart from [`port`]'s and
/// `team_port`'s.
fn stdin_port(k: u16) -> u16 {
    10_000 + (std::process::id() % 2500) as u16 * 4 + k
}

/// The processes `pid` started (on Linux; none elsewhere), to end them should a test fail.
#[cfg(unix)]
fn children_of(pid: u32) -> Vec<i32> {
    let mut out = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
                out.extend(
                    text.split_whitespace()
                        .filter_map(|w| w.parse::<i32>().ok()),
                );
            }
        }
    }
    out
}

/// The robots of a team killed outright (`kill -9`, a test harness's guard, a job cancelled
/// hard) ran on until their `--wall-duration`: they end with it now.
#[cfg(unix)]
#[test]
fn the_robots_of_a_team_killed_outright_end_with_it() {
    use std::sync::mpsc::channel;
    let dir = tmp("team-killed");
    let p = stdin_port(0);
    // Both robots write their log into one FIFO; the test reads it. Its end of file comes
    // when the last robot holding it open has ended.
    let fifo = dir.join("alive.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success(), "mkfifo {}: {made}", fifo.display());
    for (id, role, rules_file) in [(1, 1, "goalkeeper.xml"), (2, 2, "field_player.xml")] {
        let cfg = robot(&dir, id, role, rules_file, p);
        let text = std::fs::read_to_string(&cfg).unwrap();
        let text = text.replace(&format!("logfile=robot{id}.log"), "logfile=alive.fifo");
        std::fs::write(&cfg, text).unwrap();
    }
    std::fs::write(dir.join("team.txt"), "robot1.config\nrobot2.config\n").unwrap();
    let (ended, all_ended) = channel::<()>();
    std::thread::spawn(move || {
        // Opening waits for the first robot to open its end.
        if let Ok(mut f) = std::fs::File::open(&fifo) {
            let _ = std::io::copy(&mut f, &mut std::io::sink());
        }
        let _ = ended.send(());
    });
    // Longer than the wait below: without the team's pipe the robots would outlast it.
    let mut team = Proc::start(
        simrob()
            .args(["soccer", "team", "--wall-duration", "600", "--file"])
            .arg(dir.join("team.txt")),
    );
    // A robot says it plays once its log file is open.
    team.wait_for("[1] robot 1 (goalkeeper) playing");
    team.wait_for("[2] robot 2 (field_player) playing");
    let robots = children_of(team.child.id());
    team.child.kill().unwrap();
    team.child.wait().unwrap();
    if all_ended.recv_timeout(soccer_common::GUARD).is_err() {
        for pid in &robots {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(*pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        panic!(
            "the robots (processes {robots:?}) still ran {} s after their team was killed",
            soccer_common::GUARD.as_secs()
        );
    }
}

/// SIGTERM to a team alone (a job scheduler's stop, `kill PID`) killed its robots outright:
/// no goodbye to their teammates, no summary. Each robot is now asked to stop as on its own
/// Ctrl-C, and sums up.
#[cfg(unix)]
#[test]
fn a_team_stopped_by_sigterm_lets_every_robot_sum_up() {
    let dir = tmp("team-term");
    let p = stdin_port(2);
    robot(&dir, 1, 1, "goalkeeper.xml", p);
    robot(&dir, 2, 2, "field_player.xml", p);
    std::fs::write(dir.join("team.txt"), "robot1.config\nrobot2.config\n").unwrap();
    // A grace far longer than the guard: a robot killed instead of stopped never sums up.
    let mut team = Proc::start(
        simrob()
            .args([
                "soccer",
                "team",
                "--wall-duration",
                "600",
                "--stop-grace",
                "600",
            ])
            .arg("--file")
            .arg(dir.join("team.txt")),
    );
    team.wait_for("[1] robot 1 (goalkeeper) playing");
    team.wait_for("[2] robot 2 (field_player) playing");
    let kill = std::process::Command::new("kill")
        .args(["-TERM", &team.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    team.wait_for("[1] robot 1 stopped:");
    team.wait_for("[2] robot 2 stopped:");
    let status = team.child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status}");
}

/// Ctrl-C in a terminal reaches the team and its robots at once (one process group): a robot
/// whose pipe the team closed first took its own SIGINT for a second one and left at once,
/// without its goodbye or summary. Every robot sums up.
#[cfg(unix)]
#[test]
fn a_team_stopped_by_ctrl_c_in_its_terminal_lets_every_robot_sum_up() {
    use std::os::unix::process::CommandExt;
    let dir = tmp("team-int");
    let p = stdin_port(3);
    robot(&dir, 1, 1, "goalkeeper.xml", p);
    robot(&dir, 2, 2, "field_player.xml", p);
    robot(&dir, 3, 2, "field_player.xml", p);
    std::fs::write(
        dir.join("team.txt"),
        "robot1.config\nrobot2.config\nrobot3.config\n",
    )
    .unwrap();
    let mut team = Proc::start(
        simrob()
            .args([
                "soccer",
                "team",
                "--wall-duration",
                "600",
                "--stop-grace",
                "600",
            ])
            .arg("--file")
            .arg(dir.join("team.txt"))
            .process_group(0),
    );
    for id in 1..=3 {
        team.wait_for(&format!("[{id}] robot {id} ("));
    }
    for id in 1..=3 {
        team.wait_for(&format!("] robot {id}: teammate"));
    }
    let group = format!("-{}", team.child.id());
    let kill = std::process::Command::new("kill")
        .args(["-INT", "--", &group])
        .status()
        .expect("kill runs");
    assert!(kill.success());
    for id in 1..=3 {
        team.wait_for(&format!("[{id}] robot {id} stopped:"));
    }
    let status = team.child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{status}");
}

/// `soccer player --stop-when-stdin-closes` stops as on Ctrl-C (its goodbye and summary)
/// when its standard input closes, with status 129.
#[test]
fn a_player_asked_to_stops_when_its_standard_input_closes() {
    let dir = tmp("player-stdin");
    let cfg = robot(&dir, 2, 2, "field_player.xml", stdin_port(1));
    let mut player = Proc::start(
        simrob()
            .args([
                "soccer",
                "player",
                "--stop-when-stdin-closes",
                "--robot-config",
            ])
            .arg(&cfg)
            .stdin(Stdio::piped()),
    );
    player.wait_for("robot 2 (field_player) playing");
    drop(player.child.stdin.take());
    player.wait_for("robot 2 stopped:");
    let status = player.child.wait().unwrap();
    assert_eq!(status.code(), Some(129), "{status}");
}

#[test]
fn a_team_file_longer_than_max_robots_is_refused_saying_the_flag() {
    let dir = tmp("team-max-robots");
    let p = port(3);
    robot(&dir, 101, 1, "goalkeeper.xml", p);
    robot(&dir, 102, 2, "field_player.xml", p);
    let team = dir.join("team.txt");
    std::fs::write(&team, "robot101.config\nrobot102.config\n").unwrap();
    let out = simrob()
        .args(["soccer", "team", "--max-robots", "1", "--file"])
        .arg(&team)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "{}:2: more than 1 robots (each is a process of its own): raise the limit with \
             --max-robots N",
            team.display()
        )),
        "{err}"
    );
    // Nothing started.
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // 65 robots are past the default, 64.
    let many = dir.join("many.txt");
    let mut lines = String::new();
    for id in 1..=65 {
        robot(&dir, id, 2, "field_player.xml", p);
        lines.push_str(&format!("robot{id}.config\n"));
    }
    std::fs::write(&many, lines).unwrap();
    let out = simrob()
        .args(["soccer", "team", "--file"])
        .arg(&many)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(":65: more than 64 robots") && err.contains("--max-robots N"),
        "{err}"
    );
    // Raised to the team's size, every robot starts.
    let mut team = Proc::start(
        simrob()
            .args([
                "soccer",
                "team",
                "--max-robots",
                "2",
                "--wall-duration",
                "2",
                "--file",
            ])
            .arg(&team),
    );
    team.wait_for("team of 2 robots started");
}

#[test]
fn a_watched_match_refuses_a_pace_too_slow_for_a_clock() {
    // `--gui --speed 1e-300` made the next frame due past any clock: the match panicked.
    let out = simrob()
        .args([
            "soccer",
            "match",
            "--gui=0",
            "--speed",
            "1e-300",
            "--duration",
            "60",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "invalid value '1e-300' for '--speed <F>': simulated seconds per wall second: 0 (as fast as possible) or a number of at least 0.000001"
        ),
        "{err}"
    );
}

/// Opens the page of a watched match `m` (its `viewer on http://ADDR` line read) in headless
/// Chromium.
fn watch_page(m: &mut Proc, dir: &Path) -> crate::headless::Page {
    let line = m.wait_for("viewer on http://");
    let addr = line
        .trim()
        .trim_start_matches("viewer on http://")
        .to_string();
    crate::headless::Page::open(&format!("http://{addr}/"), &dir.join("profile"), 900, 600)
}

#[test]
fn a_match_lasts_the_simulated_seconds_asked_and_a_watched_one_may_run_flat_out() {
    // `--duration` is simulated seconds, as everywhere else; `--speed 0` with --gui plays the
    // match as fast as it can instead of being refused.
    let dir = tmp("match-flat-out");
    let mut m = Proc::start_with_stderr(
        simrob()
            .args([
                "soccer",
                "match",
                "--gui=0",
                "--speed",
                "0",
                "--duration",
                "6",
                "--json",
            ])
            .stdin(std::process::Stdio::null()),
    );
    let page = watch_page(&mut m, &dir);
    let summary = m.wait_for("\"duration_s\"");
    m.wait_for("the match has ended; the page stays on http://");
    drop(page);
    let status = crate::support::stop_with(&mut m.child, "-INT");
    assert_eq!(status.code(), Some(130), "{status:?}");
    let v: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(v["duration_s"], 6.0, "{v}");
    assert_eq!(v["played_s"], 6.0, "{v}");
    // The keepers' saves and the quietest spell, printed in the table, are in the JSON too.
    assert!(v["saves"].as_array().is_some_and(|a| a.len() == 2), "{v}");
    assert!(
        v["longest_without_strike_s"][1].as_f64() <= Some(6.0),
        "{v}"
    );
}

/// The page of `soccer match --gui` only watches: it shows no live controls and says why; at
/// the end the page keeps the final score until Ctrl-C.
#[test]
fn a_watched_match_waits_for_its_page_shows_no_controls_and_keeps_the_final_score() {
    let dir = tmp("match-watched");
    let mut m = Proc::start_with_stderr(
        simrob()
            .args([
                "soccer",
                "match",
                "--gui=0",
                "--speed",
                "0",
                "--duration",
                "3",
            ])
            .stdin(std::process::Stdio::null()),
    );
    let mut page = watch_page(&mut m, &dir);
    page.wait_for("simrob.frame !== null", "simrob.received");
    page.wait_for(
        "document.getElementById('sim').style.display === 'none' && document.getElementById('watch').textContent.includes('FutRob brains')",
        "[document.getElementById('sim').style.display, document.getElementById('watch').textContent]",
    );
    m.wait_for("the match has ended; the page stays on http://");
    page.wait_for(
        "(simrob.frame.caption || '').startsWith('full time · cyan')",
        "simrob.frame && simrob.frame.caption",
    );
    // Still served: a reload gets the final frame again.
    page.eval("location.reload(); 1");
    page.wait_for(
        "window.simrob && simrob.frame && (simrob.frame.caption || '').startsWith('full time')",
        "document.getElementById('status').textContent",
    );
    drop(page);
    let status = crate::support::stop_with(&mut m.child, "-INT");
    assert_eq!(status.code(), Some(130), "{status:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad values are a command line that does not parse (status 2, clap's message naming the
/// flag), before anything plays; a few once exited 1 from inside the command, or (a robot's
/// --duration -1) after the robot had joined its team.
#[test]
fn soccer_values_out_of_range_are_refused_before_anything_runs() {
    for (args, says) in [
        (
            &["soccer", "match", "--duration", "90000"][..],
            "at most 86400",
        ),
        (
            &["soccer", "match", "--duration", "0"][..],
            "greater than 0",
        ),
        (
            &["soccer", "match", "--kick-off", "blue"][..],
            "[possible values: alternate, toss, cyan, magenta]",
        ),
        (
            &["soccer", "match", "--profile", "fast"][..],
            "[possible values: paper, ideal]",
        ),
        (
            &["soccer", "case", "penalty-kik"][..],
            "[possible values: penalty-kick,",
        ),
        (
            &["soccer", "case", "pass", "--trials", "0"][..],
            "--trials <N>': expected a whole number, 1 or more",
        ),
        // (Both ran: clamped to 64 threads and to the machine's cores.)
        (
            &["soccer", "case", "pass", "--threads", "4294967296"][..],
            "a number of threads, 0 to 64",
        ),
        (
            &["soccer", "case", "pass", "--threads", "65"][..],
            "a number of threads, 0 to 64",
        ),
        (
            &[
                "soccer",
                "player",
                "--robot-config",
                "x.config",
                "--wall-duration",
                "-1",
            ][..],
            "wall-clock seconds, 0 or more",
        ),
        (
            &["soccer", "match", "--speed", "-1", "--duration", "1"][..],
            "for '--speed <F>': simulated seconds per wall second: 0 (as fast as possible)",
        ),
        // Port 0 (as `commPort=0` in an ini.config): a player sent to it and failed, a spy
        // listened on a port the system chose while saying port 0.
        (
            &[
                "soccer",
                "player",
                "--robot-config",
                "x.config",
                "--team-port",
                "0",
            ][..],
            "for '--team-port <PORT>': expected a whole number from 1 to 65535, got '0'",
        ),
        (
            &["soccer", "spy", "--team-port", "0", "--count", "0"][..],
            "for '--team-port <PORT>': expected a whole number from 1 to 65535, got '0'",
        ),
        (
            &[
                "soccer",
                "send-msg",
                "--src",
                "1",
                "--param",
                "1",
                "--team-port",
                "0",
            ][..],
            "for '--team-port <PORT>': expected a whole number from 1 to 65535, got '0'",
        ),
    ] {
        let out = simrob()
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing ran");
    }
    // Names in any case, as the profile always was.
    let out = simrob()
        .args([
            "soccer",
            "case",
            "PENALTY-KICK",
            "--trials",
            "1",
            "--profile",
            "IDEAL",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

/// SIGTERM (or Ctrl-C) ends a match as it ends a server: the summary of what was played, the
/// recording finished, status 143.
#[test]
fn a_match_stopped_by_sigterm_sums_up_and_finishes_its_recording() {
    let dir = tmp("match-term");
    let rec = dir.join("m.simrec");
    let mut child = simrob()
        .args([
            "soccer",
            "match",
            "--gui=0",
            "--speed",
            "1",
            "--duration",
            "86400",
            "--record",
        ])
        .arg(&rec)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = crate::support::Lines::of(child.stdout.take().unwrap());
    let err = crate::support::Lines::of(child.stderr.take().unwrap());
    let mut seen = String::new();
    if err.until("viewer on http://", &mut seen).is_none() {
        let _ = child.kill();
        let _ = child.wait();
        panic!("no viewer line: {seen}");
    }
    let status = crate::support::stop_with(&mut child, "-TERM");
    let rest = out.rest();
    assert_eq!(status.code(), Some(143), "{status:?}: {rest}");
    assert!(rest.contains("stopped at 00:"), "{rest}");
    assert!(
        rest.contains("of 24:00:00") || rest.contains("of 1440:00"),
        "{rest}"
    );
    crate::support::assert_recording_finished(&rec);
}

#[test]
fn bad_configs_and_rules_are_refused_with_file_and_line() {
    let dir = tmp("bad");
    let cfg = dir.join("ini.config");
    std::fs::write(&cfg, "id=1\nrole=7\nrules=r.xml\n").unwrap();
    let out = simrob()
        .args(["soccer", "player", "--robot-config"])
        .arg(&cfg)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ini.config:2: role must be 1 (goalkeeper) or 2 (field_player)"),
        "{err}"
    );
    std::fs::write(
        &cfg,
        "id=1\nrole=1\nrules=r.xml\nvisionStubEnabled=1\nvisionStubSrc=none.input\n",
    )
    .unwrap();
    std::fs::write(dir.join("r.xml"), "<RuleSet>\n  <Rule name=\"x\">\n    <def><value term=\"ballInView\"/></def>\n    <action name=\"findBall\"/>\n  </Rule>\n</RuleSet>\n").unwrap();
    let out = simrob()
        .args(["soccer", "player", "--robot-config"])
        .arg(&cfg)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("r.xml:3: rule \"x\": unknown predicate \"ballInView\""),
        "{err}"
    );
}

#[test]
fn a_match_kick_off_alternates_with_the_seed_and_can_be_chosen() {
    let kick_off = |args: &[&str]| {
        let out = simrob()
            .args(["soccer", "match", "--duration", "6", "--json"])
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let first = v["events"][0][1].as_str().unwrap_or_default().to_string();
        let team = v["kick_off"].as_str().unwrap_or_default().to_string();
        assert_eq!(first, format!("kick-off {team}"), "{v}");
        // Seconds of possession are whole 10 ms steps, printed without float noise
        // (2.47, not 2.4699999999999913).
        let possession = v["possession_s"].to_string();
        assert!(
            possession
                .split(['[', ',', ']'])
                .filter(|n| !n.is_empty())
                .all(|n| n.split('.').nth(1).is_none_or(|d| d.len() <= 2)),
            "{possession}"
        );
        team
    };
    assert_eq!(kick_off(&["--seed", "1"]), "cyan");
    assert_eq!(kick_off(&["--seed", "2"]), "magenta");
    assert_eq!(
        kick_off(&["--seed", "1", "--kick-off", "magenta"]),
        "magenta"
    );
    let toss = kick_off(&["--seed", "5", "--kick-off", "toss"]);
    assert_eq!(kick_off(&["--seed", "5", "--kick-off", "toss"]), toss);
    // A wrong choice is a clear error and plays nothing.
    let out = simrob()
        .args(["soccer", "match", "--kick-off", "blue", "--json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--kick-off") && err.contains("alternate"),
        "{err}"
    );
}

/// At the end of a match a coach reads the score, who scored and when, shots on target,
/// passes completed and possession — the same figures `--json` gives.
#[test]
fn a_match_ends_with_a_summary_a_coach_reads() {
    let args = ["soccer", "match", "--seed", "1", "--duration", "210"];
    let out = simrob().args(args).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let json = simrob().args(args).arg("--json").output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let goals = |k: usize| v["goals"][k].as_u64().unwrap();
    assert!(
        text.contains(&format!(
            "Final score: cyan {} – {} magenta",
            goals(0),
            goals(1)
        )),
        "{text}"
    );
    assert!(goals(0) + goals(1) > 0, "{text}");
    // Every goal is listed with its time (mm:ss), team and scorer.
    for g in v["goal_log"].as_array().unwrap() {
        let t = g["t"].as_f64().unwrap().floor() as u64;
        let line = format!(
            "{:02}:{:02}  {}",
            t / 60,
            t % 60,
            g["team"].as_str().unwrap()
        );
        assert!(text.contains(&line), "{line:?} in\n{text}");
        if let Some(r) = g["scorer"].as_u64() {
            assert!(text.contains(&format!("robot {r}")), "{text}");
        }
    }
    for row in [
        "shots (on target)",
        "keeper's saves",
        "passes completed",
        "possession",
    ] {
        assert!(text.contains(row), "{row:?} in\n{text}");
    }
    let on = |k: usize| v["shots_on_target"][k].as_u64().unwrap();
    let shots = |k: usize| v["shots"][k].as_u64().unwrap();
    let row = format!("{} ({})", shots(0), on(0));
    assert!(text.contains(&row), "{row:?} in\n{text}");
}

#[test]
fn a_recorded_match_replays_its_frames() {
    // Twelve simulated seconds recorded at 25 frames a second: every fourth 10 ms iteration.
    let dir = std::env::temp_dir().join(format!("simrob-cli-match-rec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("match.simrec");
    let out = simrob()
        .args([
            "soccer",
            "match",
            "--seed",
            "3",
            "--duration",
            "12",
            "--record",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    // The recording says what made it (it said only "simrob soccer match").
    let source = simrob_viewer::record::RecordingReader::open(&file)
        .unwrap()
        .header()
        .source
        .clone();
    assert_eq!(
        source,
        "simrob soccer match, profile paper, kick-off alternate (seed 3)"
    );
    let export = simrob()
        .args(["replay", "--export", "csv"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(export.status.success(), "{export:?}");
    let csv = String::from_utf8_lossy(&export.stdout);
    let ball: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|r| r.split(',').collect::<Vec<_>>())
        .filter(|c| c[3] == "Ball")
        .map(|c| c[0].parse().unwrap())
        .collect();
    assert_eq!(ball.len(), 300, "one frame every 40 ms for 12 s");
    assert!(
        (ball[0] - 0.04).abs() < 1e-9 && (ball[299] - 12.0).abs() < 1e-9,
        "{ball:?}"
    );
    // Six humanoids in every frame.
    assert_eq!(
        csv.lines().filter(|r| r.contains(",Humanoid,")).count(),
        1800
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_case_records_each_trial_as_a_simrec_file() {
    let dir = std::env::temp_dir().join(format!("simrob-cli-case-rec-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = simrob()
        .args([
            "soccer",
            "case",
            "penalty-kick",
            "--trials",
            "2",
            "--json",
            "--record-dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    // Numbered as the table numbers the trials: from 1.
    assert_eq!(names, ["penalty-kick-1.simrec", "penalty-kick-2.simrec"]);
    let source = simrob_viewer::record::RecordingReader::open(&dir.join("penalty-kick-2.simrec"))
        .unwrap()
        .header()
        .source
        .clone();
    assert_eq!(
        source,
        "simrob soccer case penalty-kick, profile paper, trial 2 (seed 1)"
    );
    let export = simrob()
        .args(["replay", "--export", "csv"])
        .arg(dir.join("penalty-kick-1.simrec"))
        .output()
        .unwrap();
    assert!(export.status.success(), "{export:?}");
    assert!(String::from_utf8_lossy(&export.stdout).contains(",Ball,"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `soccer match --gui --json`: the viewer's address is on standard error, and standard output
/// is the summary alone, one JSON object (the address line came first on it).
#[test]
fn a_watched_match_keeps_standard_output_for_its_json_summary() {
    let out = crate::support::stdout_when_stopped(
        simrob().args(["soccer", "match", "--gui=0", "--duration", "6", "--json"]),
        "viewer on http://",
    );
    let v: serde_json::Value =
        serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out:?}"));
    assert_eq!(v["duration_s"], 6.0, "{v}");
}

/// A team port for the tests below, apart from [`port`]'s (several tests and runs may share
/// the machine).
fn team_port(k: u16) -> u16 {
    20_000 + (std::process::id() % 2500) as u16 * 4 + k
}

/// A stand-in for `simrob serve` on 127.0.0.1: it answers the first `times` datagrams it gets
/// with `answer`, then says nothing. Its address.
fn fake_simulator(answer: &'static str, times: usize) -> String {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = s.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        let mut answered = 0;
        while let Ok((_, from)) = s.recv_from(&mut buf) {
            if answered < times {
                let _ = s.send_to(answer.as_bytes(), from);
                answered += 1;
            }
        }
    });
    addr
}

/// What a simulator says when it refuses a brain.
const REFUSED: &str =
    "<Message><Error>Register_Agent: no humanoid with entity id 77</Error></Message>";

/// `simrob ARGS` run to its end: its exit status, standard output and standard error.
fn run_to_end(cmd: &mut std::process::Command) -> (Option<i32>, String, String) {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `soccer team` started robots 1 and 2 and only then found robot 3's vision stub missing
/// (its error without its id), passed a bad --server to each robot, and exited 0 whatever its
/// robots did.
#[test]
fn a_team_checks_every_robot_before_any_starts_and_fails_when_a_robot_fails() {
    let dir = tmp("team-checks");
    let p = team_port(0);
    robot(&dir, 1, 1, "goalkeeper.xml", p);
    robot(&dir, 2, 2, "field_player.xml", p);
    let team = |name: &str, lines: &str| {
        let f = dir.join(name);
        std::fs::write(&f, lines).unwrap();
        f
    };
    let start = |file: &Path, extra: &[&str]| {
        run_to_end(
            simrob()
                .args(["soccer", "team", "--wall-duration", "1"])
                .args(extra)
                .arg("--file")
                .arg(file),
        )
    };
    // A team of robot 1 and a robot 2 whose config has `from` made `to`, in NAME.config and
    // NAME.txt: refused, no robot started. Its standard error.
    let cfg = std::fs::read_to_string(dir.join("robot2.config")).unwrap();
    let refused = |name: &str, from: &str, to: &str| {
        std::fs::write(dir.join(format!("{name}.config")), cfg.replace(from, to)).unwrap();
        let f = team(
            &format!("{name}.txt"),
            &format!("robot1.config\n{name}.config\n"),
        );
        let (code, out, err) = start(&f, &[]);
        assert_eq!(code, Some(1), "{out}{err}");
        assert!(out.is_empty(), "no robot started: {out}");
        err
    };
    // Robot 2's vision stub is missing: refused with its line.
    let err = refused(
        "nostub",
        "visionStubSrc=ball.input",
        "visionStubSrc=none.input",
    );
    assert!(
        err.contains("nostub.txt:2") && err.contains("cannot read the vision stub"),
        "{err}"
    );
    // Its log file's directory is missing: the same.
    let err = refused("nodir", "logfile=robot2.log", "logfile=gone/robot2.log");
    assert!(
        err.contains("nodir.txt:2") && err.contains("cannot write the log file"),
        "{err}"
    );
    // Two robots writing one log file.
    let err = refused("samelog", "logfile=robot2.log", "logfile=robot1.log");
    assert!(
        err.contains("samelog.txt:2: robot 2 would write the log file")
            && err.contains("of robot 1 (line 1)"),
        "{err}"
    );
    // A bad --server is a command line that does not parse.
    let f = team("team.txt", "robot1.config\nrobot2.config\n");
    let (code, out, err) = start(&f, &["--server", "127.0.0.1:99999"]);
    assert_eq!(code, Some(2), "{out}{err}");
    assert!(out.is_empty(), "no robot started: {out}");
    assert_eq!(
        err.matches("invalid value '127.0.0.1:99999' for '--server <ADDR>'")
            .count(),
        1,
        "said once: {err}"
    );
    // Robots that fail as they play: each error with its robot's id, and the team fails.
    let sim = fake_simulator(REFUSED, usize::MAX);
    let (code, out, err) = start(&f, &["--server", &sim]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("team of 2 robots started"), "{out}");
    for id in [1, 2] {
        assert!(
            err.contains(&format!(
                "[{id}] Error: the simulator at {sim} refused the brain"
            )),
            "{err}"
        );
    }
    assert!(
        err.contains("2 of 2 robots failed") && err.contains("robot 1 (exit status 1)"),
        "{err}"
    );
}

/// A robot emptied its log file before finding its vision stub missing or its --server bad.
#[test]
fn a_robot_refused_leaves_its_log_file_as_it_was() {
    let dir = tmp("keep-log");
    let p = team_port(1);
    let good = robot(&dir, 2, 2, "field_player.xml", p);
    let log = dir.join("robot2.log");
    let precious = "precious\n";
    std::fs::write(&log, precious).unwrap();
    let cfg = std::fs::read_to_string(&good).unwrap();
    let nostub = dir.join("nostub.config");
    std::fs::write(
        &nostub,
        cfg.replace("visionStubSrc=ball.input", "visionStubSrc=none.input"),
    )
    .unwrap();
    let player = |config: &Path, extra: &[&str]| {
        run_to_end(
            simrob()
                .args(["soccer", "player", "--wall-duration", "0.3"])
                .args(extra)
                .arg("--robot-config")
                .arg(config),
        )
    };
    let (code, _, err) = player(&nostub, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot read the vision stub"), "{err}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), precious);
    let (code, _, err) = player(&good, &["--server", "127.0.0.1:99999"]);
    assert_eq!(code, Some(2), "{err}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), precious);
    // A simulator that refuses the robot: it never played, its log is untouched.
    let sim = fake_simulator(REFUSED, usize::MAX);
    let (code, _, err) = player(&good, &["--server", &sim]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("refused the brain"), "{err}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), precious);
    // Through a team too.
    std::fs::write(dir.join("team.txt"), "nostub.config\n").unwrap();
    let (code, _, err) = run_to_end(
        simrob()
            .args(["soccer", "team", "--wall-duration", "0.3", "--file"])
            .arg(dir.join("team.txt")),
    );
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), precious);
    // Every check passed, the robot plays and its log starts anew.
    let (code, out, err) = player(&good, &[]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert_ne!(std::fs::read_to_string(&log).unwrap(), precious);
}

/// A player whose simulator went quiet played on without a word until --wall-duration (or for
/// ever), and registering took 10 s whatever --wall-duration said.
#[test]
fn a_player_says_when_its_simulator_stops_answering_and_keeps_to_its_wall_duration() {
    let dir = tmp("silent-sim");
    let cfg = robot(&dir, 2, 2, "field_player.xml", team_port(2));
    let player = |sim: &str, extra: &[&str]| {
        run_to_end(
            simrob()
                .args(["soccer", "player", "--server", sim])
                .args(extra)
                .arg("--robot-config")
                .arg(&cfg),
        )
    };
    // Answers the registration, then nothing.
    let sim = fake_simulator("<Message><Broadcast></Broadcast></Message>", 1);
    let (code, out, err) = player(&sim, &["--server-timeout", "0.2"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains(&format!(
            "robot 2: brain of humanoid 2 on the simulator at {sim}"
        )),
        "{out}"
    );
    assert!(out.contains("robot 2 stopped:"), "{out}");
    assert!(
        err.contains(&format!(
            "robot 2: the simulator at {sim} has sent nothing for 0.2 s (--server-timeout)"
        )),
        "{err}"
    );
    // Never answers: the robot's --wall-duration ends the wait.
    let silent = fake_simulator("", 0);
    let (code, out, err) = player(&silent, &["--wall-duration", "0.3"]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains(&format!(
            "no answer from the simulator at {silent} within the robot's --wall-duration of 0.3 s"
        )),
        "{err}"
    );
    // Or --server-timeout, when it comes first.
    let (code, out, err) = player(
        &silent,
        &["--server-timeout", "0.2", "--wall-duration", "60"],
    );
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        err.contains(&format!(
            "no answer from the simulator at {silent} within 0.2 s (--server-timeout)"
        )),
        "{err}"
    );
}

/// A datagram larger than the receive buffer was said to be the buffer's size (2048 bytes).
#[test]
fn an_oversized_datagram_is_said_with_its_real_size() {
    let dir = tmp("oversized");
    let p = team_port(3);
    let cfg = robot(&dir, 2, 2, "field_player.xml", p);
    let mut spy = Proc::start(simrob().args(["soccer", "spy", "--team-port", &p.to_string()]));
    spy.wait_for("listening on udp port");
    let mut player = Proc::start(
        simrob()
            .args(["soccer", "player", "--robot-config"])
            .arg(&cfg),
    );
    player.wait_for("robot 2 (field_player) playing");
    send_raw(p, &vec![7u8; 65_000]);
    // (The player's own messages reach the spy too.)
    spy.wait_for("DROPPED |----- datagram of 65000 bytes");
    player.wait_for("robot 2: dropped a datagram: datagram of 65000 bytes");
}

/// `soccer player --help` spoke of --duration (refused) and put the tunables in the wrong
/// page; --ideal-camera on a robot without the simulator did nothing; a rule file without
/// rules was taken without a word; the sender's prompt did not say which field was bad.
#[test]
fn the_player_says_what_it_takes_and_what_it_ignores() {
    let (code, help, _) = run_to_end(simrob().args(["soccer", "player", "--help"]));
    assert_eq!(code, Some(0));
    assert!(
        help.contains("plays until Ctrl-C or --wall-duration") && !help.contains(" --duration"),
        "{help}"
    );
    assert!(
        help.contains("tunables listed in docs/reference/config.md"),
        "{help}"
    );
    let dir = tmp("player-says");
    let cfg = robot(&dir, 2, 2, "field_player.xml", team_port(2));
    let (code, out, err) = run_to_end(
        simrob()
            .args([
                "soccer",
                "player",
                "--ideal-camera",
                "--wall-duration",
                "0",
                "--robot-config",
            ])
            .arg(&cfg),
    );
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.is_empty(), "{out}");
    assert!(
        err.contains("robot 2 sees through its vision stub")
            && err.contains("--ideal-camera is the simulator's camera"),
        "{err}"
    );
    std::fs::write(dir.join("empty.xml"), "<RuleSet></RuleSet>\n").unwrap();
    let text = std::fs::read_to_string(&cfg).unwrap();
    let empty = dir.join("empty.config");
    std::fs::write(
        &empty,
        text.replace(&rules("field_player.xml"), "empty.xml"),
    )
    .unwrap();
    let (code, out, err) = run_to_end(
        simrob()
            .args(["soccer", "player", "--wall-duration", "0", "--robot-config"])
            .arg(&empty),
    );
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(
        err.contains("empty.xml: no rules (an empty <RuleSet>): robot 2 will never act"),
        "{err}"
    );
    // The sender's prompt names the bad field.
    let mut c = simrob()
        .args(["soccer", "send-msg", "--interactive", "--team-port"])
        .arg(team_port(2).to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin
        .take()
        .unwrap()
        .write_all(b"msg\n2\nthree\n20\n19\nmsg\n2\n3\n20\n1x\nq\n")
        .unwrap();
    let out = c.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("not sent: dest must be a whole number") && text.contains("not \"three\""),
        "{text}"
    );
    assert!(
        text.contains("not sent: value must be a whole number") && text.contains("not \"1x\""),
        "{text}"
    );
}

#[test]
fn a_case_recording_ends_on_the_state_that_decided_the_trial() {
    // Trial 6 of penalty-save at seed 44011 is a goal, decided at a 10 ms step between two of
    // the recording's 25 frames a second: its recording ended with the ball short of the line.
    let dir = std::env::temp_dir().join(format!("simrob-cli-case-end-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = simrob()
        .args([
            "soccer",
            "case",
            "penalty-save",
            "--seed",
            "44011",
            "--trials",
            "6",
            "--json",
            "--record-dir",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let trials = v["trials"].as_array().unwrap();
    for (i, t) in trials.iter().enumerate() {
        let export = simrob()
            .args(["replay", "--export", "csv"])
            .arg(dir.join(format!("penalty-save-{}.simrec", i + 1)))
            .output()
            .unwrap();
        assert!(export.status.success(), "{export:?}");
        let csv = String::from_utf8_lossy(&export.stdout).into_owned();
        // time,iteration,entity,kind,x,y,…: the ball's last row.
        let last: Vec<&str> = csv
            .lines()
            .rfind(|l| l.contains(",Ball,"))
            .unwrap()
            .split(',')
            .collect();
        let (time, x): (f64, f64) = (last[0].parse().unwrap(), last[4].parse().unwrap());
        let ended = t["sim_seconds"].as_f64().unwrap();
        assert!(
            (time - ended).abs() < 1e-6,
            "trial {}: {time} vs {ended}",
            i + 1
        );
        if t["outcome"] == "goal" {
            // Wholly over the goal line (x = 4.5 m; the ball's radius is 5 cm).
            assert!(x > 4.55, "trial {}: the ball at x = {x}", i + 1);
        }
    }
    assert_eq!(trials[5]["outcome"], "goal", "{v}");
    let _ = std::fs::remove_dir_all(&dir);
}
