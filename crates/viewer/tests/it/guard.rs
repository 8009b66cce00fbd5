//! The viewer's HTTP server against hostile pages and clients, over real TCP on 127.0.0.1:
//! foreign origins, silent connections, oversized messages, command floods. Each waits on the
//! server's answer or its closing the connection (a generous timeout only guards failures).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use simrob_viewer::{responses_channel, Backend, Guard, Viewer};

#[derive(Default)]
struct Counting {
    commands: AtomicUsize,
}

impl Backend for Counting {
    fn command(&self, _cmd: &serde_json::Value) -> Result<(), simrob_viewer::CommandError> {
        self.commands.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

fn start(guard: Guard) -> (Viewer, Arc<Counting>) {
    let backend = Arc::new(Counting::default());
    let viewer = Viewer::start_guarded(
        "127.0.0.1:0".parse().unwrap(),
        backend.clone(),
        responses_channel(),
        "test",
        "live",
        guard,
    )
    .expect("viewer");
    (viewer, backend)
}

fn connect(addr: SocketAddr) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s
}

/// Sends a WebSocket upgrade with `origin`; returns the status line.
fn upgrade(s: &mut TcpStream, addr: SocketAddr, origin: Option<&str>) -> String {
    upgrade_to(s, &addr.to_string(), origin)
}

/// Sends a WebSocket upgrade for `host` (the `Host` header) with `origin`; returns the status
/// line.
fn upgrade_to(s: &mut TcpStream, addr: &str, origin: Option<&str>) -> String {
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    write!(
        s,
        "GET /ws HTTP/1.1\r\nHost: {addr}\r\n{origin}Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .unwrap();
    // Read the response head.
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).unwrap_or(0) == 0 {
            break;
        }
        head.push(byte[0]);
    }
    String::from_utf8_lossy(&head)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// A masked client text frame.
fn frame(payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x81u8];
    let n = payload.len();
    if n < 126 {
        f.push(0x80 | n as u8);
    } else if n < 65536 {
        f.push(0x80 | 126);
        f.extend_from_slice(&(n as u16).to_be_bytes());
    } else {
        f.push(0x80 | 127);
        f.extend_from_slice(&(n as u64).to_be_bytes());
    }
    let mask = [1u8, 2, 3, 4];
    f.extend_from_slice(&mask);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    f
}

/// Reads one server frame: (opcode, payload); `None` at the end of the stream.
fn read_frame(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut h = [0u8; 2];
    s.read_exact(&mut h).ok()?;
    let mut n = u64::from(h[1] & 0x7f);
    if n == 126 {
        let mut b = [0u8; 2];
        s.read_exact(&mut b).ok()?;
        n = u64::from(u16::from_be_bytes(b));
    } else if n == 127 {
        let mut b = [0u8; 8];
        s.read_exact(&mut b).ok()?;
        n = u64::from_be_bytes(b);
    }
    let mut p = vec![0u8; n as usize];
    s.read_exact(&mut p).ok()?;
    Some((h[0] & 0x0f, p))
}

#[test]
fn a_page_of_another_origin_cannot_open_the_websocket() {
    let (viewer, backend) = start(Guard::default());
    for origin in ["http://evil.example", "null"] {
        let mut s = connect(viewer.addr());
        let status = upgrade(&mut s, viewer.addr(), Some(origin));
        assert!(status.contains("403"), "{origin}: {status}");
        // Nothing it sends reaches the simulator.
        let _ = s.write_all(&frame(br#"{"cmd":"play"}"#));
    }
    let mut s = connect(viewer.addr());
    let own = format!("http://{}", viewer.addr());
    assert!(upgrade(&mut s, viewer.addr(), Some(&own)).contains("101"));
    let mut s = connect(viewer.addr());
    assert!(upgrade(&mut s, viewer.addr(), None).contains("101"));
    assert_eq!(backend.commands.load(Ordering::Relaxed), 0);
}

/// A foreign page whose name was made to resolve to 127.0.0.1 (DNS rebinding) sends its
/// name as both Host and Origin: refused (it got 101 and could drive the live controls). The
/// viewer's own page reached by `localhost` is let in.
#[test]
fn a_page_of_a_name_rebound_to_the_viewer_cannot_open_the_websocket() {
    let (viewer, backend) = start(Guard::default());
    let port = viewer.addr().port();
    let evil = format!("evil.example:{port}");
    let mut s = connect(viewer.addr());
    let status = upgrade_to(&mut s, &evil, Some(&format!("http://{evil}")));
    assert!(status.contains("403"), "{status}");
    let _ = s.write_all(&frame(br#"{"cmd":"play"}"#));
    let local = format!("localhost:{port}");
    let mut s = connect(viewer.addr());
    let status = upgrade_to(&mut s, &local, Some(&format!("http://{local}")));
    assert!(status.contains("101"), "{status}");
    assert_eq!(backend.commands.load(Ordering::Relaxed), 0);
}

#[test]
fn pages_past_max_pages_are_refused_until_one_closes() {
    // Every open page held some 140 KB and was sent every frame, with no bound: 3,000
    // WebSockets from one program took a server from 12 to 423 MB.
    let (viewer, _) = start(Guard {
        max_pages: 2,
        ..Guard::default()
    });
    let addr = viewer.addr();
    let mut first = connect(addr);
    assert!(upgrade(&mut first, addr, None).contains("101"));
    let mut second = connect(addr);
    assert!(upgrade(&mut second, addr, None).contains("101"));
    let mut third = connect(addr);
    let refused = upgrade(&mut third, addr, None);
    assert!(refused.contains("503"), "{refused}");
    // The page says which limit it met.
    let mut body = String::new();
    let _ = third.read_to_string(&mut body);
    assert!(body.contains("--viewer-max-pages 2"), "{body}");
    // One closes (the WebSocket close handshake, then the server hangs up): its place is
    // free as its session ends, just after; each try is a whole upgrade, answered.
    first.write_all(&[0x88, 0x80, 1, 2, 3, 4]).unwrap();
    let mut rest = Vec::new();
    let _ = first.read_to_end(&mut rest);
    let reopened = (0..1000).any(|_| {
        let mut s = connect(addr);
        upgrade(&mut s, addr, None).contains("101")
    });
    assert!(reopened, "no place came free after a page closed");
}

#[test]
fn a_connection_that_sends_no_request_head_is_closed() {
    let (viewer, _) = start(Guard {
        header_timeout: Duration::from_millis(100),
        ..Guard::default()
    });
    let mut silent = connect(viewer.addr());
    silent.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap(); // never finished
    let mut rest = Vec::new();
    // Waits for the server to close it (a reset, as it never read what was sent): no answer.
    match silent.read_to_end(&mut rest) {
        Ok(n) => assert_eq!(n, 0, "{}", String::from_utf8_lossy(&rest)),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
    }
    // A complete request still gets the page.
    let mut s = connect(viewer.addr());
    write!(
        s,
        "GET / HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        viewer.addr()
    )
    .unwrap();
    let mut page = String::new();
    s.read_to_string(&mut page).unwrap();
    assert!(page.starts_with("HTTP/1.1 200"), "{page:.80}");
}

/// A ping of 200 bytes (over the WebSocket protocol's 125 for control frames, well within
/// the message limit) is closed as a protocol error saying so (it was said to be a message
/// larger than the limit).
#[test]
fn a_control_frame_past_the_protocol_limit_is_said_to_be_one() {
    let (viewer, _backend) = start(Guard {
        max_message: 2048,
        ..Guard::default()
    });
    let mut s = connect(viewer.addr());
    assert!(upgrade(&mut s, viewer.addr(), None).contains("101"));
    let mut ping = frame(&[b'p'; 200]);
    ping[0] = 0x89;
    let _ = s.write_all(&ping);
    loop {
        match read_frame(&mut s) {
            None => panic!("closed without a close frame"),
            Some((0x8, p)) => {
                assert_eq!(p.get(..2), Some(&[0x03, 0xEA][..]), "close code 1002");
                let reason = String::from_utf8_lossy(&p[2..]);
                assert!(
                    reason.contains("control frame") && reason.contains("125 bytes"),
                    "{reason}"
                );
                break;
            }
            Some(_) => {}
        }
    }
}

#[test]
fn an_oversized_message_ends_the_connection_and_is_not_applied() {
    let (viewer, backend) = start(Guard {
        max_message: 1024,
        ..Guard::default()
    });
    let mut s = connect(viewer.addr());
    assert!(upgrade(&mut s, viewer.addr(), None).contains("101"));
    let mut big = br#"{"cmd":"play","pad":""#.to_vec();
    big.extend(std::iter::repeat_n(b'x', 16 << 10));
    big.extend_from_slice(br#""}"#);
    let _ = s.write_all(&frame(&big));
    // The server closes with a close frame saying why (1009, message too big), never a
    // response to it.
    loop {
        match read_frame(&mut s) {
            None => panic!("closed without a close frame"),
            Some((0x8, p)) => {
                assert_eq!(p.get(..2), Some(&[0x03, 0xF1][..]), "close code 1009");
                let reason = String::from_utf8_lossy(&p[2..]);
                assert!(
                    reason.contains("larger than 1024 bytes (--viewer-max-message-bytes, key viewermaxmessagebytes)"),
                    "{reason}"
                );
                break;
            }
            Some((_, p)) => assert!(!String::from_utf8_lossy(&p).contains("\"response\"")),
        }
    }
    assert_eq!(backend.commands.load(Ordering::Relaxed), 0);
}

#[test]
fn commands_past_the_rate_are_refused_and_the_page_is_told() {
    let (viewer, backend) = start(Guard {
        commands_per_second: 1.0,
        ..Guard::default()
    });
    let mut s = connect(viewer.addr());
    assert!(upgrade(&mut s, viewer.addr(), None).contains("101"));
    for _ in 0..10 {
        s.write_all(&frame(br#"{"cmd":"step"}"#)).unwrap();
    }
    let applied = |b: &Counting| b.commands.load(Ordering::Relaxed);
    let mut dropped = 0;
    while applied(&backend) + dropped < 10 {
        let (op, p) = read_frame(&mut s).expect("a frame");
        if op == 1 && String::from_utf8_lossy(&p).contains("command dropped") {
            assert!(
                String::from_utf8_lossy(&p).contains(
                    "(--viewer-commands-per-second 1, configuration key viewercommandspersecond)"
                ),
                "{}",
                String::from_utf8_lossy(&p)
            );
            dropped += 1;
        }
    }
    assert!(applied(&backend) <= 3, "{} applied", applied(&backend));
    assert_eq!(applied(&backend) + dropped, 10);
}

/// Gets `/` on a new connection; the status line.
fn page_load(addr: SocketAddr) -> String {
    let mut s = connect(addr);
    write!(
        s,
        "GET / HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut page = String::new();
    let _ = s.read_to_string(&mut page);
    page.lines().next().unwrap_or("").to_string()
}

#[test]
fn half_open_connections_never_keep_a_page_load_out() {
    // Far more half-open connections than may wait, and a head timeout that never comes
    // within the test: only making room lets the page loads in.
    let (viewer, _) = start(Guard {
        max_pending: 16,
        header_timeout: Duration::from_secs(3600),
        ..Guard::default()
    });
    let addr = viewer.addr();
    let mut held: Vec<TcpStream> = (0..100)
        .map(|i| {
            let mut s = connect(addr);
            if i % 2 == 0 {
                s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap(); // never finished
            }
            s
        })
        .collect();
    for i in 0..40 {
        let status = page_load(addr);
        assert!(status.starts_with("HTTP/1.1 200"), "load {i}: {status:?}");
        // More half-open connections arrive between the loads.
        held.push(connect(addr));
    }
    // The oldest were let go: the first one is closed without an answer.
    let mut rest = Vec::new();
    match held[0].read_to_end(&mut rest) {
        Ok(n) => assert_eq!(n, 0),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
    }
}

#[test]
fn every_answer_closes_its_connection_so_the_next_head_is_timed_again() {
    // Kept open after an answer, a connection was past the guard: its next request head
    // had no time limit (60 connections each sending a byte of it a second were all open
    // 25 s on) and idle ones stayed for ever, in any number. (The default head timeout: a
    // loaded machine may be slow to read the first head.)
    let (viewer, _) = start(Guard::default());
    let addr = viewer.addr();
    for path in ["/", "/main.js", "/no-such-file"] {
        let mut s = connect(addr);
        // HTTP/1.1 without `Connection: close`: a client that would keep it open.
        write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
        let mut answer = Vec::new();
        // The server closes after its answer (the read timeout only guards a failure).
        s.read_to_end(&mut answer)
            .unwrap_or_else(|e| panic!("{path}: the connection stayed open: {e}"));
        let answer = String::from_utf8_lossy(&answer).to_ascii_lowercase();
        assert!(
            answer.contains("\r\nconnection: close\r\n"),
            "{path}: {answer:.200}"
        );
        // Nothing more is read from it: a second head on it is never answered.
        let _ = s.write_all(b"GET / HTTP/1.1\r\n");
    }
    // A WebSocket stays open.
    let mut s = connect(addr);
    assert!(upgrade(&mut s, addr, None).contains("101"));
    assert_eq!(read_frame(&mut s).map(|(op, _)| op), Some(1), "the hello");
}

/// A frame of `n` small boxes (its scene differs with `n`).
fn boxes(n: usize, x: f64) -> simrob_viewer::Frame {
    use simrob_viewer::{Frame, FrameBody, FrameEntity};
    Frame {
        iteration: n as u64,
        initialized: true,
        bodies: (0..n)
            .map(|i| FrameBody {
                e: i as u32,
                id: 0,
                shape: "Box".into(),
                dims: [0.1, 0.1, 0.1],
                material: 0,
                mass: 1.0,
                p: [x + i as f64, 0.0, 0.0],
                r: [0.0; 3],
                v: [0.0; 3],
                w: [0.0; 3],
            })
            .collect(),
        entities: (0..n)
            .map(|i| FrameEntity {
                id: i as u32,
                kind: "Robot".into(),
                p: Some([x + i as f64, 0.0, 0.0]),
                r: Some([0.0; 3]),
            })
            .collect(),
        ..Frame::default()
    }
}

#[test]
fn a_page_that_never_reads_is_let_go_after_the_idle_timeout() {
    // A page that reads nothing fills the socket's buffers; the server's send then waited
    // for ever, pings unsent and the idle timeout never checked: the page held its place
    // among max_pages for good (64 of them locked every browser out).
    let (viewer, _) = start(Guard {
        max_pages: 1,
        idle_timeout: Duration::from_millis(300),
        ..Guard::default()
    });
    let addr = viewer.addr();
    let mut stalled = connect(addr);
    assert!(upgrade(&mut stalled, addr, None).contains("101"));
    // Frames of megabytes until its buffers are full; then it is let go and the place is
    // free: each try is an upgrade, answered (the deadline only guards a failure).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut n = 0;
    let freed = loop {
        n += 1;
        viewer.publish(&boxes(20_000 + n % 2, n as f64));
        let mut s = connect(addr);
        let status = upgrade(&mut s, addr, None);
        if status.contains("101") {
            break true;
        }
        assert!(status.contains("503"), "{status}");
        if std::time::Instant::now() > deadline {
            break false;
        }
    };
    assert!(freed, "a page that never reads kept its place");
    drop(stalled);
}

#[test]
fn a_real_time_factor_too_small_for_a_clock_is_refused_and_the_server_runs_on() {
    // `{"cmd":"rtf","value":1e-300}` made the next iteration due in more seconds than a
    // Duration holds: the server's thread panicked and the world stopped for every agent.
    use crate::sumbot::{initialize, run_iterations};
    use simrob_client::agent::Agent;
    use simrob_viewer::{observer, SessionBridge};
    use std::sync::atomic::AtomicBool;

    let dir = std::env::temp_dir().join(format!("simrob-viewer-rtf-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut server = crate::sumbot::soccer_server(&dir, 0.0);
    let udp = server.local_addr().unwrap();
    let viewer = Viewer::start(
        "127.0.0.1:0".parse().unwrap(),
        SessionBridge::new(server.commands()),
        responses_channel(),
        "test",
        "live",
    )
    .unwrap();
    server.add_sampled_observer(observer(&viewer), viewer.frame_requests());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || server.run(&flag));
    let mut agent = Agent::connect(udp).unwrap();
    initialize(&mut agent, "rtf", Duration::from_secs(10));

    let mut page = connect(viewer.addr());
    assert!(upgrade(&mut page, viewer.addr(), None).contains("101"));
    for value in ["1e-300", "1e-7"] {
        page.write_all(&frame(
            format!(r#"{{"cmd":"rtf","value":{value}}}"#).as_bytes(),
        ))
        .unwrap();
        let refusal = loop {
            let (op, p) = read_frame(&mut page).expect("an answer");
            let text = String::from_utf8_lossy(&p).to_string();
            if op == 1 && text.contains("\"response\"") {
                break text;
            }
        };
        assert!(
            refusal.contains(
                "Error: the real-time factor is 0 (as fast as possible) or at least 0.000001"
            ),
            "{value}: {refusal}"
        );
    }
    // The world runs on.
    run_iterations(&mut agent, 20);
    stop.store(true, Ordering::Relaxed);
    thread.join().expect("the server's thread").unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
