//! `simrob netbed udp` and `simrob netbed tcp`: the relays as commands. The UDP relay does
//! exactly what its seed says (the datagrams lost and doubled are those the fates name);
//! the TCP relay forwards and cuts when told at its terminal; addresses off this machine and
//! bad numbers are refused with a clear message. Waits are on datagrams and printed lines.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::time::Duration;

use crate::coord_common::start;
use crate::support::simrob;

use simrob_netbed::fate::stream_id;
use simrob_netbed::Impairment;

const GUARD: Duration = Duration::from_secs(60);

#[test]
fn the_udp_relay_command_loses_and_doubles_exactly_what_its_seed_says() {
    let server = UdpSocket::bind("127.0.0.1:0").expect("server socket");
    server.set_read_timeout(Some(GUARD)).expect("guard");
    let to = server.local_addr().expect("addr").to_string();
    let mut relay = start(
        &[
            "netbed", "udp", "--to", &to, "--loss", "0.3", "--dup", "0.1", "--seed", "5", "--only",
            "up",
        ],
        true,
    );
    let front = relay.after("listening on udp://");
    let said = relay.wait_line("relaying to udp://");
    assert!(
        said.contains("loss 30 %") && said.contains("(up only)"),
        "{said}"
    );
    let imp = Impairment {
        loss: 0.3,
        duplicate: 0.1,
        seed: 5,
        ..Impairment::clean()
    };
    let id = stream_id(b"probe");
    let agent = UdpSocket::bind("127.0.0.1:0").expect("agent socket");
    let (mut lost, mut doubled, mut copies) = (0u64, 0u64, 0u64);
    let mut buf = [0u8; 256];
    for batch in 0..20u64 {
        // Ten at a time; each batch's copies all arrive before the next is sent.
        let mut want = Vec::new();
        for n in batch * 10..batch * 10 + 10 {
            let d = format!("<Key>probe</Key><N>{n}</N>");
            agent.send_to(d.as_bytes(), &front).expect("send");
            let k = imp.fate(id, n).delays.len() as u64;
            lost += u64::from(k == 0);
            doubled += u64::from(k == 2);
            want.extend(std::iter::repeat_n(n, k as usize));
        }
        let mut got = Vec::new();
        while got.len() < want.len() {
            let (len, _) = server.recv_from(&mut buf).expect("a datagram (guard)");
            let text = String::from_utf8_lossy(&buf[..len]).into_owned();
            let n: u64 = text
                .split("<N>")
                .nth(1)
                .and_then(|r| r.split('<').next())
                .and_then(|v| v.parse().ok())
                .expect("numbered");
            got.push(n);
        }
        got.sort_unstable();
        assert_eq!(got, want, "batch {batch}");
        copies += want.len() as u64;
    }
    assert!(lost > 30 && doubled > 5, "{lost} lost, {doubled} doubled");
    relay.type_line("stats");
    let stats = relay.wait_line("agents ");
    assert!(
        stats.contains(&format!(
            "up: received 200, lost {lost}, duplicated {doubled}, reordered 0, sent {copies}"
        )),
        "{stats}"
    );
    relay.type_line("quit");
    assert!(relay.child.wait().expect("exit").success());
}

#[test]
fn the_tcp_relay_command_forwards_and_cuts_when_told() {
    let server = TcpListener::bind("127.0.0.1:0").expect("listener");
    let to = server.local_addr().expect("addr").to_string();
    let mut relay = start(&["netbed", "tcp", "--to", &to, "--delay", "5ms"], true);
    let front = relay.after("listening on tcp://");
    let mut client = TcpStream::connect(&front).expect("connect through the relay");
    client.set_read_timeout(Some(GUARD)).expect("guard");
    let (mut upstream, _) = server.accept().expect("the relay connects on");
    upstream.set_read_timeout(Some(GUARD)).expect("guard");
    client.write_all(b"ping").expect("write");
    let mut got = [0u8; 4];
    upstream.read_exact(&mut got).expect("forwarded");
    assert_eq!(&got, b"ping");
    upstream.write_all(b"pong").expect("write back");
    client.read_exact(&mut got).expect("forwarded back");
    assert_eq!(&got, b"pong");
    relay.type_line("cut");
    relay.wait_line("cut 1 connections");
    // Both ends see it closed.
    assert_eq!(client.read(&mut got).unwrap_or(0), 0);
    assert_eq!(upstream.read(&mut got).unwrap_or(0), 0);
    relay.type_line("stats");
    let stats = relay.wait_line("connections ");
    assert!(
        stats.starts_with("connections 1, cut 1, bytes forwarded 8"),
        "{stats}"
    );
    relay.type_line("quit");
    assert!(relay.child.wait().expect("exit").success());
}

#[test]
fn the_relay_commands_refuse_other_machines_and_bad_numbers() {
    let run = |args: &[&str]| {
        let out = simrob().args(args).output().expect("simrob runs");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for cmd in ["udp", "tcp"] {
        let (code, err) = run(&["netbed", cmd, "--to", "192.0.2.1:5005"]);
        assert_eq!(code, Some(1), "{err}");
        assert!(
            err.contains("is not a loopback address") && err.contains("--allow-non-loopback"),
            "{err}"
        );
    }
    // A relay to itself (it would flood itself) or to port 0 does not start.
    for cmd in ["udp", "tcp"] {
        for (to, listen, says) in [
            ("127.0.0.1:5030", "127.0.0.1:5030", "is the relay's own"),
            ("127.0.0.1:0", "127.0.0.1:0", "port 0 is no server's port"),
            (
                "localhost:0",
                "127.0.0.1:5031",
                "port 0 is no server's port",
            ),
        ] {
            let (code, err) = run(&["netbed", cmd, "--to", to, "--listen", listen]);
            assert_eq!(code, Some(1), "{cmd} --to {to}: {err}");
            assert!(
                err.contains(&format!("--to {to}: ")) && err.contains(says),
                "{err}"
            );
        }
    }
    let (code, err) = run(&["netbed", "udp", "--to", "127.0.0.1:5005", "--delay", "2h"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("seconds, 0 or more (or 50ms, 2s, 1min), got '2h'"),
        "{err}"
    );
    let (code, err) = run(&[
        "netbed",
        "udp",
        "--to",
        "127.0.0.1:5005",
        "--delay",
        "61min",
    ]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("from 0 to 3600 seconds"), "{err}");
    // Probabilities are checked as the command line is read, naming the flag.
    for (flag, p) in [("--loss", "1.5"), ("--dup", "inf"), ("--reorder", "-0.1")] {
        let (code, err) = run(&["netbed", "udp", "--to", "127.0.0.1:5005", flag, p]);
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains(&format!("for '{flag} <P>'")) && err.contains("a probability from 0 to 1"),
            "{err}"
        );
    }
    for cmd in ["udp", "tcp"] {
        let (code, err) = run(&["netbed", cmd, "--to", "127.0.0.1:5005", "--delay", "-5ms"]);
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("'--delay <S>'") && err.contains("0 or more (or 50ms, 2s, 1min)"),
            "{err}"
        );
    }
    let (code, err) = run(&[
        "netbed",
        "udp",
        "--to",
        "127.0.0.1:5005",
        "--delay",
        "10ms",
        "--jitter",
        "20ms",
    ]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("--jitter 20 ms is larger than --delay 10 ms")
            && !err.contains("cannot start"),
        "{err}"
    );
    for n in ["0", "1025", "lots"] {
        let (code, err) = run(&[
            "netbed",
            "tcp",
            "--to",
            "127.0.0.1:5005",
            "--max-connections",
            n,
        ]);
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains("a whole number from 1 to 1024"), "{n}: {err}");
    }
    for flag in ["--max-flows", "--max-queued-bytes"] {
        for n in ["0", "lots"] {
            let (code, err) = run(&["netbed", "udp", "--to", "127.0.0.1:5005", flag, n]);
            assert_eq!(code, Some(2), "{err}");
            assert!(
                err.contains(flag) && err.contains("1 or more"),
                "{n}: {err}"
            );
        }
    }
}

/// Kills a child process when dropped, whatever happened.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn the_demo_behind_a_lossy_relay_takes_no_answer_for_another_requests() {
    let dir = std::env::temp_dir().join(format!("simrob-netbed-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let script = dir.join("drive.txt");
    std::fs::write(&script, "0 2 2\n1 0 0\n").expect("script");
    let mut driven = 0;
    for seed in [1, 3, 4] {
        // A fresh world each time: nothing of the scene is there before the demo.
        let (server, _out, addr) = crate::listening::start(
            simrob()
                .args(["serve", "--port", "0", "--save-dir"])
                .arg(&dir),
            "udp",
        );
        let _server = Killed(server);
        let lossy = Impairment {
            loss: 0.2,
            duplicate: 0.5,
            seed,
            ..Impairment::clean()
        };
        let down = Impairment {
            seed: seed + 100,
            ..lossy
        };
        let relay = simrob_netbed::UdpRelay::start(addr.parse().expect("addr"), lossy, down)
            .expect("relay");
        let out = simrob()
            .args(["demo", "--no-gui", "--every-seconds", "0.1", "--server"])
            .arg(relay.addr().to_string())
            .arg("--script")
            .arg(&script)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("the demo runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        // Duplicated and late answers are never taken for another request's.
        assert!(
            !stdout.contains("already in the world") && !stdout.contains("refused"),
            "seed {seed}: {stdout}"
        );
        if out.status.success() {
            assert!(
                stdout.contains("robot (") && stdout.contains("ball ("),
                "seed {seed}: {stdout}"
            );
            driven += 1;
        } else {
            // Or a time-out that names the request left unanswered.
            assert!(
                stderr.contains("Error: no answer to ") && !stderr.contains("creating the"),
                "seed {seed}: {stderr}"
            );
        }
    }
    assert!(driven > 0, "no run drove through the relay");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A link towards the server that loses the `n`-th datagram (from 0) of the agent with key
/// "demo", and none other of its first 40 (the first seed that does so).
fn losing_only(n: u64) -> Impairment {
    let id = stream_id(b"demo");
    (0..1_000_000)
        .map(|seed| Impairment {
            loss: 0.05,
            seed,
            ..Impairment::clean()
        })
        .find(|imp| (0..40).all(|k| imp.fate(id, k).lost == (k == n)))
        .expect("a seed that loses that datagram alone")
}

#[test]
fn the_demo_sends_its_set_up_again_until_the_server_confirms_it() {
    let dir = std::env::temp_dir().join(format!("simrob-netbed-set-up-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let script = dir.join("drive.txt");
    std::fs::write(&script, "0 2 2\n1 0 0\n").expect("script");
    // The demo's datagrams towards the server: its registration (0), the scene's four
    // requests (1 to 4), then auto-adjust on (5), step mode off (6) and the physics started
    // (7). Each run loses one of the last three, and nothing else.
    for (lost, what) in [
        (5, "Set_AutoAdjust_Mode"),
        (6, "Set_Step_Mode"),
        (7, "Initialize_Simulation"),
    ] {
        let (server, _out, addr) = crate::listening::start(
            simrob()
                .args(["serve", "--port", "0", "--save-dir"])
                .arg(&dir),
            "udp",
        );
        let _server = Killed(server);
        let addr: std::net::SocketAddr = addr.parse().expect("addr");
        // A viewer beside the demo, straight to the server: it is sent every confirmation.
        let mut watcher = simrob_client::agent::Agent::connect(addr).expect("watcher socket");
        watcher
            .register(
                "watcher",
                simrob_client::agent::AgentOptions {
                    agent_type: simrob_protocol::AgentType::Gui,
                    sync: false,
                    broadcast: -1.0,
                },
            )
            .expect("the watcher registers");
        let relay = simrob_netbed::UdpRelay::start(addr, losing_only(lost), Impairment::clean())
            .expect("relay");
        let out = simrob()
            .args(["demo", "--no-gui", "--every-seconds", "0.1", "--server"])
            .arg(relay.addr().to_string())
            .arg("--script")
            .arg(&script)
            .stdin(std::process::Stdio::null())
            .output()
            .expect("the demo runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("robot ("),
            "{what} lost: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(relay.stats().up.lost, 1, "{what} lost");
        // The server was paced, its step mode off and its physics started: it confirmed
        // each, the lost one too (its copy sent again).
        let mut want = vec![
            "Set_AutoAdjust_Mode: Auto-adjust mode set to true",
            "Set_Step_Mode: Step mode set to false",
            "Initialize_Simulation: Simulation initialized",
        ];
        let mut seen = Vec::new();
        while !want.is_empty() {
            match watcher.recv(GUARD).expect("the watcher's socket") {
                Some(simrob_protocol::ServerMessage::Response(
                    simrob_protocol::Response::Text(t),
                )) => {
                    want.retain(|w| *w != t);
                    seen.push(t);
                }
                Some(_) => {}
                None => panic!("{what} lost: the server never confirmed {want:?}; seen {seen:?}"),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `simrob netbed udp` started by `bash` under `ulimit LIMIT` (its output and errors merged),
/// relaying to `to`: the process and its lines.
fn relay_under_ulimit(limit: &str, to: &str) -> (Killed, std::sync::mpsc::Receiver<String>) {
    use std::io::BufRead;
    let mut child = std::process::Command::new("bash")
        .args([
            "-c",
            &format!("ulimit {limit} && exec \"$0\" netbed udp --to {to} 2>&1"),
            env!("CARGO_BIN_EXE_simrob"),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("bash starts the relay");
    let out = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (Killed(child), rx)
}

fn line_with(lines: &std::sync::mpsc::Receiver<String>, needle: &str) -> String {
    loop {
        match lines.recv_timeout(GUARD) {
            Ok(l) if l.contains(needle) => return l,
            Ok(_) => {}
            Err(e) => panic!("no line with {needle:?}: {e}"),
        }
    }
}

#[test]
fn the_udp_relay_raises_its_open_files_limit_and_names_it_when_sockets_run_out() {
    let server = UdpSocket::bind("127.0.0.1:0").expect("server socket");
    server.set_read_timeout(Some(GUARD)).expect("guard");
    let to = server.local_addr().expect("addr").to_string();
    let agents = |front: &str| -> Vec<UdpSocket> {
        (0..60)
            .map(|i| {
                let a = UdpSocket::bind("127.0.0.1:0").expect("agent socket");
                a.send_to(format!("<Key>a{i}</Key>").as_bytes(), front)
                    .expect("send");
                a
            })
            .collect()
    };
    // A soft limit of 40 open files (the hard one higher): the relay raises it, and sixty
    // agents are relayed.
    let (mut relay, lines) = relay_under_ulimit("-Sn 40", &to);
    let front = line_with(&lines, "listening on udp://").replace("listening on udp://", "");
    let _held = agents(&front);
    let mut buf = [0u8; 64];
    for _ in 0..60 {
        server
            .recv_from(&mut buf)
            .expect("every agent's datagram (guard)");
    }
    let stdin = relay.0.stdin.as_mut().expect("stdin");
    writeln!(stdin, "stats").expect("typed");
    let stats = line_with(&lines, "agents ");
    assert!(
        stats.starts_with(
            "agents 60 (forgotten 0, datagrams from agents with no room 0, with no socket 0)"
        ),
        "{stats}"
    );
    drop(relay);
    // A hard limit of 40: said at the start; past it, the real reason is said (not a full
    // table) and counted apart.
    let (mut relay, lines) = relay_under_ulimit("-n 40", &to);
    let said = line_with(&lines, "may open at most 40 files");
    assert!(
        said.contains("fewer than 1024 agents with a flow"),
        "{said}"
    );
    let front = line_with(&lines, "listening on udp://").replace("listening on udp://", "");
    let _held = agents(&front);
    let why = line_with(&lines, "no socket towards the server for a new agent");
    assert!(
        why.contains("Too many open files") && why.contains("ulimit -n"),
        "{why}"
    );
    let stdin = relay.0.stdin.as_mut().expect("stdin");
    writeln!(stdin, "stats").expect("typed");
    let stats = line_with(&lines, "agents ");
    let no_socket: u64 = stats
        .split("with no socket ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|n| n.parse().ok())
        .expect("a count of datagrams with no socket");
    assert!(
        no_socket > 0 && stats.contains("with no room 0,"),
        "{stats}"
    );
}
