//! The Mobile Robot Simulator against hostile and careless clients on 127.0.0.1: hang-ups,
//! silent clients, huge rectangles, control characters, connection floods.

use crate::common;

use std::io::{BufRead, Read};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use common::Conn;

use simrob_mrs::flat::{FlatPose, Map};
use simrob_mrs::{MrsConfig, MrsCore, MrsHandle, MrsServer, NoFiles, ShellOptions, EXAMPLE_MAP};

fn serve(config: MrsConfig, options: ShellOptions) -> MrsHandle {
    let core = MrsCore::new(Map::parse_vector(EXAMPLE_MAP).expect("map"), config);
    MrsServer::bind("127.0.0.1:0", core, Box::new(NoFiles), options)
        .expect("bind")
        .spawn()
        .expect("spawn")
}

fn stepped() -> MrsConfig {
    MrsConfig {
        start: Some(FlatPose::new(150.0, 130.0, 0.0)),
        stepped: true,
        ..MrsConfig::default()
    }
}

/// Waits (failure guard: 60 s) until a new client gets the start pose, which it only does
/// when every robot of the closed connections is gone.
fn wait_until_start_is_free(addr: SocketAddr) {
    let guard = Instant::now() + Duration::from_secs(60);
    loop {
        let mut c = Conn::open(addr);
        if c.ask("P") == "P015000130000000" {
            return;
        }
        assert!(
            Instant::now() < guard,
            "robots of closed connections stay on the map"
        );
    }
}

#[test]
fn connections_closed_at_once_leave_nothing_behind() {
    let h = serve(stepped(), ShellOptions::default());
    for _ in 0..300 {
        drop(TcpStream::connect(h.addr()).expect("connect"));
    }
    wait_until_start_is_free(h.addr());
    let mut c = Conn::open(h.addr());
    assert_eq!(c.ask("B"), "B0");
    drop(c);
    let core = h.stop().expect("stop");
    assert!(core.world().robots().count() <= 1);
}

#[test]
fn a_full_server_refuses_at_once_and_says_why() {
    let h = serve(
        MrsConfig {
            max_clients: 3,
            ..stepped()
        },
        ShellOptions::default(),
    );
    let mut kept: Vec<Conn> = (0..3).map(|_| Conn::open(h.addr())).collect();
    for c in &mut kept {
        assert!(c.ask("B").starts_with('B'));
    }
    let mut refused = Conn::open(h.addr());
    let mut line = String::new();
    refused.reader.read_line(&mut line).expect("refusal");
    assert!(line.starts_with("E ") && line.contains("full"), "{line}");
    line.clear();
    assert_eq!(refused.reader.read_line(&mut line).expect("closed"), 0);
    drop(kept);
}

#[test]
fn silent_clients_are_closed_after_the_idle_timeout() {
    let h = serve(
        stepped(),
        ShellOptions {
            idle_timeout: Some(Duration::from_millis(50)),
            ..ShellOptions::default()
        },
    );
    let mut c = Conn::open(h.addr());
    // Waits for the server's event (the farewell line, then the end of the stream).
    let mut line = String::new();
    c.reader.read_line(&mut line).expect("farewell");
    assert!(line.starts_with("E closing: nothing received"), "{line}");
    let mut rest = Vec::new();
    c.reader.read_to_end(&mut rest).expect("end");
    wait_until_start_is_free(h.addr());
}

#[test]
fn rectangles_must_lie_inside_the_map() {
    let h = serve(stepped(), ShellOptions::default());
    let mut c = Conn::open(h.addr());
    let e = c.ask("#RECT 0 0 1e308 1e308");
    assert!(e.starts_with("E ") && e.contains("not inside"), "{e}");
    // Huge numbers are shown short, as #PLACE shows them (1,284 bytes once).
    let e = c.ask("#RECT 1e308 1e308 1e308 1e308");
    assert!(
        e.contains("#RECT 1e308 1e308 1e308 1e308 is not inside"),
        "{e}"
    );
    assert!(e.len() < 120, "{} bytes: {e}", e.len());
    assert!(c.ask("#RECT -5 0 10 10").starts_with("E "));
    assert_eq!(c.ask("#RECT 10 10 20 20"), "#RECT");
    drop(c);
    // A new client still finds room at the start.
    wait_until_start_is_free(h.addr());
}

#[test]
fn a_place_with_an_absurd_heading_is_refused_and_moves_nothing() {
    use simrob_mrs::{ClientId, NoFiles};
    let mut core = MrsCore::new(Map::parse_vector(EXAMPLE_MAP).expect("map"), stepped());
    core.connect(ClientId(1)).expect("robot");
    let mut ask = |line: &str| core.handle_line(ClientId(1), line, &mut NoFiles).unwrap();
    let before = ask("P");
    assert_eq!(before, "P015000130000000");
    for heading in ["1e308", "-1e308", "36000.5", "-40000", "inf", "NaN"] {
        let e = ask(&format!("#PLACE 160 130 {heading}"));
        assert!(
            e.starts_with("E #PLACE") || e.contains("finite"),
            "{heading}: {e}"
        );
        assert_eq!(ask("P"), before, "{heading} moved the robot");
    }
    let e = ask("#PLACE 160 130 1e308");
    assert!(e.contains("1e308") && e.contains("36000 degrees"), "{e}");
    // Ordinary headings are taken modulo 360, as before.
    assert_eq!(ask("#PLACE 150 130 450"), "#PLACE");
    assert_eq!(ask("P"), "P015000130000900");
    assert_eq!(ask("#PLACE 150 130 -36000"), "#PLACE");
    assert_eq!(ask("P"), "P015000130000000");
}

#[test]
fn messages_with_control_characters_are_logged_escaped() {
    use simrob_mrs::{ClientId, NoFiles};
    let mut core = MrsCore::new(Map::parse_vector(EXAMPLE_MAP).expect("map"), stepped());
    core.connect(ClientId(1)).expect("robot");
    core.drain_log();
    let reply = core.handle_line(ClientId(1), "M\u{1b}[2J\u{7}hi\n", &mut NoFiles);
    assert_eq!(reply.as_deref(), Some("M"));
    let log = core.drain_log();
    assert_eq!(log.len(), 1);
    assert!(!log[0].chars().any(char::is_control), "{:?}", log[0]);
    assert!(log[0].contains("\\u{1b}[2J\\u{7}hi"), "{:?}", log[0]);
}

#[test]
fn refusing_a_client_on_a_full_map_costs_a_bounded_search() {
    use simrob_mrs::{ClientId, NoFiles};
    let mut core = MrsCore::new(Map::parse_vector(EXAMPLE_MAP).expect("map"), stepped());
    core.connect(ClientId(0)).expect("robot");
    // Fill the whole map but the first robot's corner: nowhere left for another robot.
    assert_eq!(
        core.handle_line(ClientId(0), "#PLACE 15 15 0", &mut NoFiles)
            .as_deref(),
        Some("#PLACE")
    );
    for rect in ["#RECT 0 30 300 300", "#RECT 30 0 300 30"] {
        assert_eq!(
            core.handle_line(ClientId(0), rect, &mut NoFiles).as_deref(),
            Some("#RECT")
        );
    }
    let e = core.connect(ClientId(1)).expect_err("no room");
    assert!(e.to_string().contains("no free place"), "{e}");
    assert_eq!(core.free_start(), None);
}

#[test]
fn a_client_sending_many_requests_at_once_does_not_hold_up_the_others() {
    use std::io::Write;
    let h = serve(stepped(), ShellOptions::default());
    let mut busy = Conn::open(h.addr());
    let mut other = Conn::open(h.addr());
    assert!(other.ask("P").starts_with('P'));
    // 200 requests of 100 steps in one write: they arrive, and are read, together.
    busy.writer
        .write_all("#STEP 100\n".repeat(200).as_bytes())
        .expect("send");
    let mut first = String::new();
    busy.reader.read_line(&mut first).expect("the first answer");
    assert_eq!(first.trim_end(), "#STEP 1.00");
    // The other client's step is answered in its turn, not after all 200: the simulated time
    // it reports is that of the few steps done before it.
    let t: f64 = simrob_mrs::protocol::parse_step_reply(&other.ask("#STEP 1")).expect("#STEP t");
    assert!(
        t < 100.0,
        "the other client waited for {t} s of simulated time"
    );
    // Every request of the busy client is answered, in order.
    let mut last = first;
    for _ in 1..200 {
        last.clear();
        busy.reader.read_line(&mut last).expect("an answer");
    }
    assert_eq!(last.trim_end(), "#STEP 200.01");
}

#[test]
fn a_step_past_max_step_is_refused_and_names_the_flag() {
    let h = serve(
        MrsConfig {
            max_step: 10,
            ..stepped()
        },
        ShellOptions::default(),
    );
    let mut c = Conn::open(h.addr());
    let e = c.ask("#STEP 11");
    assert!(e.starts_with("E ") && e.contains("--max-step 10"), "{e}");
    assert_eq!(c.ask("#STEP 10"), "#STEP 0.10");
}

#[test]
fn messages_are_logged_cut_to_a_length_and_at_most_a_rate() {
    use simrob_mrs::{ClientId, NoFiles};
    let mut core = MrsCore::new(
        Map::parse_vector(EXAMPLE_MAP).expect("map"),
        MrsConfig {
            max_message_log_bytes: 10,
            max_message_log_rate: 2,
            ..stepped()
        },
    );
    core.connect(ClientId(1)).expect("robot");
    core.set_log_time(0.0);
    core.drain_log();
    let long = format!("M{}\n", "x".repeat(1000));
    for _ in 0..5 {
        assert_eq!(
            core.handle_line(ClientId(1), &long, &mut NoFiles)
                .as_deref(),
            Some("M")
        );
    }
    let log = core.drain_log();
    assert_eq!(log.len(), 2, "{log:?}");
    for l in &log {
        assert!(l.len() < 100, "{l}");
        assert!(
            l.contains("990 bytes more, --max-message-log-bytes 10"),
            "{l}"
        );
    }
    // The second is not over: nothing more.
    core.set_log_time(0.9);
    assert!(core.drain_log().is_empty());
    // Once it is, how many were left out.
    core.set_log_time(1.0);
    let log = core.drain_log();
    assert_eq!(
        log,
        vec!["3 messages not shown (--max-message-log-rate 2 a second)".to_string()]
    );
    // A new second: messages are logged again.
    core.handle_line(ClientId(1), "Mhi\n", &mut NoFiles);
    assert_eq!(core.drain_log().len(), 1);
}

#[test]
fn lines_past_max_line_bytes_are_refused_naming_the_flag() {
    let h = serve(
        stepped(),
        ShellOptions {
            max_line_bytes: 20,
            ..ShellOptions::default()
        },
    );
    let mut c = Conn::open(h.addr());
    assert_eq!(c.ask(&format!("M{}", "x".repeat(19))), "M");
    assert_eq!(c.ask(&format!("M{}\r", "x".repeat(19))), "M", "CRLF");
    let e = c.ask(&format!("M{}", "x".repeat(20)));
    assert!(
        e.starts_with("E ") && e.contains("--max-line-bytes 20"),
        "{e}"
    );
    // Longer than one read: skipped whole, answered once.
    let e = c.ask(&format!("M{}", "x".repeat(50_000)));
    assert!(e.contains("--max-line-bytes 20"), "{e}");
    assert_eq!(c.ask("B"), "B0");
}

#[test]
fn a_client_that_does_not_read_its_replies_is_closed_and_the_server_says_why() {
    use std::io::Write;
    use std::sync::mpsc;
    let (tx, rx) = mpsc::channel();
    let hook: simrob_mrs::ShellHook = Box::new(move |core, _| {
        for l in core.drain_log() {
            let _ = tx.send(l);
        }
    });
    let core = MrsCore::new(Map::parse_vector(EXAMPLE_MAP).expect("map"), stepped());
    let h = MrsServer::bind(
        "127.0.0.1:0",
        core,
        Box::new(NoFiles),
        ShellOptions {
            max_output_bytes: 65_536,
            ..ShellOptions::default()
        },
    )
    .expect("bind")
    .with_hook(hook)
    .spawn()
    .expect("spawn");
    let mut deaf = TcpStream::connect(h.addr()).expect("connect");
    let mut w = deaf.try_clone().expect("clone");
    // Far more replies than the sockets hold; it never reads them.
    let writer = std::thread::spawn(move || {
        let chunk = "#HELP\n".repeat(1000);
        for _ in 0..200 {
            if w.write_all(chunk.as_bytes()).is_err() {
                return;
            }
        }
    });
    loop {
        let l = rx
            .recv_timeout(Duration::from_secs(120))
            .expect("the server never closed the client that does not read");
        if l.contains("disconnected") {
            assert!(
                l.contains("replies not read (--max-output-bytes 65536)"),
                "{l}"
            );
            break;
        }
    }
    writer.join().expect("the writer ends");
    // What it was sent ends: the connection is closed.
    deaf.set_read_timeout(Some(Duration::from_secs(120)))
        .expect("timeout");
    let mut sink = Vec::new();
    let _ = deaf.read_to_end(&mut sink);
}

#[test]
fn a_map_change_past_max_rects_is_refused_naming_the_flag() {
    let map = Map::parse_vector(EXAMPLE_MAP).expect("map");
    let now = map.rects().len();
    let h = serve(
        MrsConfig {
            max_rects: now + 1,
            ..stepped()
        },
        ShellOptions::default(),
    );
    let mut c = Conn::open(h.addr());
    assert_eq!(c.ask("#RECT 10 10 20 20"), "#RECT");
    let e = c.ask("#RECT 30 10 40 20");
    assert!(
        e.starts_with("E ") && e.contains(&format!("more than --max-rects {}", now + 1)),
        "{e}"
    );
}
