//! `--ros2` on the command line: three real participants on a domain of this test's own,
//! on the loopback interface.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};

use crate::support::{repo, simrob};

/// `simrob serve --ros2` on `domain`, discovery on this machine only, with `extra` flags.
fn serve(domain: u16, extra: &[&str]) -> Child {
    simrob()
        .args(["serve", "--port", "0", "--scenario"])
        .arg(repo("scenarios/soccer.xml"))
        .arg("--ros2")
        .args(extra)
        .env("ROS_DOMAIN_ID", domain.to_string())
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env_remove("RUST_LOG")
        .env_remove("NO_COLOR")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn simrob serve --ros2")
}

/// Past `--ros2-max-participants` peers ROS 2 stops with a line on standard error (plain
/// text: standard error is not a terminal here), and the server goes on and stops on SIGTERM
/// as ever.
#[test]
fn past_max_participants_ros2_stops_and_the_server_goes_on() {
    let domain = 210 + (std::process::id() % 20) as u16;
    let mut first = serve(domain, &["--ros2-max-participants", "1"]);
    let mut peers = [serve(domain, &[]), serve(domain, &[])];
    let mut err = BufReader::new(first.stderr.take().expect("stderr"));
    let mut line = String::new();
    let mut said = String::new();
    // Each line it writes, until the one that says ROS 2 stopped (or it ends).
    while err.read_line(&mut line).expect("a line of standard error") > 0 {
        if line.contains("ROS 2 stopped") {
            said = line.clone();
            break;
        }
        line.clear();
    }
    for p in &mut peers {
        let _ = p.kill();
        let _ = p.wait();
    }
    let worded = said.contains("more than 1 other DDS participant on domain")
        && said.contains("--ros2-max-participants")
        && said.contains("the world goes on");
    let plain = !said.contains('\u{1b}');
    let running = first.try_wait().expect("status").is_none();
    if !(worded && plain && running) {
        // Not left running after the test has failed.
        let _ = first.kill();
        let _ = first.wait();
    }
    assert!(worded, "{said:?}");
    assert!(
        plain,
        "colour codes in a log that is not a terminal: {said:?}"
    );
    // The server still runs, and a stop signal ends it.
    assert!(running, "the server ended");
    let pid = first.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = first.wait().expect("the server exits");
    assert_eq!(status.code(), Some(143), "{status:?}");
}

/// ROS 2 nodes live in wall time: `serve --ros2` paces at real time unless told otherwise
/// (`--speed`, or lockstep, where the ROS side sets the pace).
#[test]
fn serve_ros2_paces_at_real_time_unless_told_otherwise() {
    let domain = 190 + (std::process::id() % 20) as u16;
    let first_line = |extra: &[&str]| {
        let mut child = simrob()
            .args(["serve", "--port", "0", "--ros2"])
            .args(extra)
            .env("ROS_DOMAIN_ID", domain.to_string())
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn simrob serve --ros2");
        let mut line = String::new();
        let read = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line);
        let _ = child.kill();
        let _ = child.wait();
        read.expect("a line of standard output");
        line
    };
    assert_eq!(
        first_line(&[]).trim(),
        "pacing at real time for ROS 2 (--speed 0: as fast as possible)"
    );
    assert!(first_line(&["--speed", "0"]).starts_with("listening on udp://"));
    assert!(first_line(&["--ros2-lockstep"]).starts_with("listening on udp://"));
}

/// A ROS 2 environment simrob refuses (`ROS_AUTOMATIC_DISCOVERY_RANGE=OFF`) is refused before
/// anything is announced or created: no `listening on …`, no viewer address, no recording.
#[test]
fn a_refused_ros2_environment_is_the_only_thing_printed() {
    let dir = std::env::temp_dir().join(format!("simrob-ros2-env-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let runs: [&[&str]; 3] = [
        &[
            "serve",
            "--port",
            "0",
            "--gui=0",
            "--record",
            "rec.simrec",
            "--ros2",
        ],
        &[
            "soccer",
            "match",
            "--duration",
            "1",
            "--gui=0",
            "--record",
            "rec.simrec",
            "--ros2",
        ],
        &[
            "swarm",
            "run",
            "hospital",
            "--duration",
            "1",
            "--record",
            "rec.swarm",
            "--ros2",
        ],
    ];
    for args in runs {
        let out = simrob()
            .args(args)
            .current_dir(&dir)
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "OFF")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stdout.is_empty(), "{args:?} printed {stdout}");
        assert!(
            stderr.starts_with("Error: ROS_AUTOMATIC_DISCOVERY_RANGE=\"OFF\"")
                && stderr.lines().count() == 1,
            "{args:?}: {stderr}"
        );
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every line `simrob::ros2` logs reaches standard error under the documented filters, among
/// the swarm's per-frame log check (`--log simrob::ros2=info`, the same in `RUST_LOG`): here
/// the warning for each of two robots whose ROS names are taken.
#[test]
fn swarm_ros2_logs_every_line_under_the_documented_filters() {
    let dir = std::env::temp_dir().join(format!("simrob-ros2-log-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let scenario = dir.join("names.toml");
    let robot = |name: &str, x: u32| {
        format!(
            "[[entities]]\ntype = \"robot\"\nname = \"{name}\"\nposition = [{x}, 50]\n\
             radius = 4\ncomponents = {{ Navigator = 40 }}\n\n"
        )
    };
    let text = format!(
        "name = \"names\"\nfps = 20\nduration = 1\nseed = 1\n\n[world]\nwidth = 200\n\
         height = 100\npaths = [[[20, 50], [180, 50]]]\n\n{}{}{}{}",
        robot("a-b", 20),
        robot("a_b", 40),
        robot("1abc", 60),
        robot("robot_3", 80)
    );
    std::fs::write(&scenario, text).unwrap();
    let domain = 150 + (std::process::id() % 10) as u16;
    let runs: [(&[&str], Option<&str>); 3] = [
        (&["--log", "simrob::ros2=info"], None),
        (&[], Some("simrob::ros2=info")),
        (&[], Some("simrob::ros2=info,warn")),
    ];
    for (flags, rust_log) in runs {
        let mut cmd = simrob();
        cmd.args(flags)
            .args(["swarm", "run"])
            .arg(&scenario)
            .args(["--quiet", "--ros2", "--speed", "0"])
            .env("ROS_DOMAIN_ID", domain.to_string())
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .env_remove("RUST_LOG");
        if let Some(f) = rust_log {
            cmd.env("RUST_LOG", f);
        }
        let out = cmd.output().expect("simrob swarm run --ros2");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{flags:?} {rust_log:?}: {stderr}");
        for renamed in [
            "robot a-b (entity 1): the ROS name a_b is taken, published as a_b_1",
            "robot 1abc (entity 3): the ROS name robot_3 is taken, published as robot_3_3",
        ] {
            assert!(
                stderr.contains(renamed),
                "{flags:?} {rust_log:?}: no {renamed:?} in\n{stderr}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each command's `--help` says what its world publishes and takes on ROS 2, and shows no
/// flag it refuses; a refused flag is the only thing printed.
#[test]
fn ros2_help_is_true_for_each_command() {
    let help = |args: &[&str]| {
        let (ok, out, err) = crate::support::run(args);
        assert!(ok, "{args:?}: {err}");
        out.split_whitespace().collect::<Vec<_>>().join(" ")
    };
    let serve = help(&["serve", "--help"]);
    assert!(serve.contains("its wheeled robots take `cmd_vel` and `wheel_commands`"));
    assert!(!serve.contains("--ros2-sensor-rate"), "{serve}");
    let mrs = help(&["mrs", "--help"]);
    assert!(mrs.contains("--ros2-sensor-rate") && mrs.contains("each takes `cmd_vel`"));
    let swarm = help(&["swarm", "run", "--help"]);
    assert!(
        swarm.contains("each takes a goal on `goal_pose`"),
        "{swarm}"
    );
    assert!(swarm.contains("each frame waits for a message on `/simrob/step`"));
    assert!(!swarm.contains("cmd_vel") && !swarm.contains("--ros2-sensor-rate"));
    let soccer = help(&["soccer", "match", "--help"]);
    assert!(soccer.contains("nothing comes in"), "{soccer}");
    assert!(!soccer.contains("cmd_vel") && !soccer.contains("--ros2-lockstep"));
    assert!(!soccer.contains("--ros2-sensor-rate"));
    for (command, args) in [
        ("serve", &["serve", "--port", "0"][..]),
        (
            "swarm run",
            &["swarm", "run", "hospital", "--duration", "1"][..],
        ),
        ("soccer match", &["soccer", "match", "--duration", "1"][..]),
    ] {
        let out = crate::support::simrob()
            .args(args)
            .args(["--ros2", "--ros2-sensor-rate", "5"])
            .env("ROS_DOMAIN_ID", "151")
            .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
            .output()
            .expect("simrob runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{command}: {stderr}");
        assert!(out.stdout.is_empty(), "{command}");
        assert_eq!(
            stderr.trim(),
            format!(
                "Error: --ros2-sensor-rate: `simrob {command} --ros2` publishes no sensors \
                 (only `simrob mrs` does): leave it out"
            )
        );
    }
}
