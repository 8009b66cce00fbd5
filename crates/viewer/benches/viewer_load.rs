//! The viewer's cost, printed:
//!
//! * the simulation's step rate (as fast as possible) with no viewer, with a viewer no page
//!   is connected to, with one browser-like WebSocket client reading every frame, and with one
//!   client that stopped reading (its socket buffers fill up; the simulation must not notice)
//!   — on the soccer scene and on a 1,003-body scene (field + 330 SumBots), by the wall clock
//!   and per CPU second of the simulation's thread, each against the rate without a viewer;
//! * frames per second the page draws with the 1,003-body scene in headless Chromium (if
//!   `/usr/bin/chromium` is installed), read through the DevTools protocol.
//!
//! Run: `cargo bench -p simrob-viewer --bench viewer_load`.

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use simrob_client::agent::{Agent, AgentOptions};
use simrob_protocol::{
    decode_datagram, CommandKeys, ControlRequest, EntityId, EntityRequest, MotorCommand, Request,
};
use simrob_server::files::DirStore;
use simrob_server::udp::UdpServer;
use simrob_session::{ServerConfig, Session};
use simrob_viewer::{observer, responses_channel, SessionBridge, Viewer};

fn requests(file: &str) -> Vec<Request> {
    let path = format!("{}/../../scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    decode_datagram(
        &std::fs::read(path).expect("scenario"),
        &CommandKeys::default(),
    )
    .into_iter()
    .map(|r| r.expect("decodes"))
    .collect()
}

fn core(robots: u32) -> UdpServer {
    let dir = std::env::temp_dir().join(format!("simrob-viewer-bench-{}", std::process::id()));
    let mut config = ServerConfig {
        receiver_port: 0,
        save_directory: dir.clone(),
        ..ServerConfig::default()
    };
    // The crowded scene is larger than the default world limits.
    for (key, value) in [("maxentities", "1000"), ("maxbodies", "5000")] {
        config.set(key, value).expect("limit");
    }
    let mut core = UdpServer::bind(
        Session::new(config),
        Box::new(DirStore::new(&dir).expect("dir")),
    )
    .expect("bind");
    core.apply_local(&requests("soccer.xml")).expect("scenario");
    let Request::Control {
        request: ControlRequest::CreateEntity(sumbot),
        ..
    } = &requests("sumbot.xml")[0]
    else {
        panic!("sumbot.xml holds one Create_Entity");
    };
    let mut extra = Vec::new();
    for i in 0..robots {
        let (cx, cy) = ((i % 22) as f64, (i / 22) as f64);
        let id = 100 + i;
        extra.push(Request::Control {
            request: ControlRequest::CreateEntity(simrob_world::moved_copy(
                sumbot,
                EntityId(id),
                [-1.0 + cx * 0.095, -0.8 + cy * 0.11, 0.0],
            )),
            response: None,
        });
        extra.push(Request::Entity {
            request: EntityRequest::RobotMotorControl {
                entity_id: EntityId(id),
                motors: vec![
                    MotorCommand {
                        wheel_joint_id: 0,
                        value: 2.0,
                    },
                    MotorCommand {
                        wheel_joint_id: 1,
                        value: 1.0 + (i % 3) as f64,
                    },
                ],
            },
            response: None,
        });
    }
    extra.push(Request::Control {
        request: ControlRequest::InitializeSimulation,
        response: None,
    });
    core.apply_local(&extra).expect("robots");
    core
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Watcher {
    /// No viewer.
    None,
    /// A viewer no page is connected to.
    Idle,
    /// A page reading every frame.
    Reading,
    Stalled,
}

fn ws_handshake(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).expect("connect");
    write!(s, "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").expect("handshake");
    s
}

/// Iterations per second for `seconds`, with `watcher`.
fn step_rate(robots: u32, watcher: Watcher, seconds: f64) -> Rate {
    let mut server = core(robots);
    let mut _viewer = None;
    let stop_client = Arc::new(AtomicBool::new(false));
    let mut client = None;
    if watcher != Watcher::None {
        let responses = responses_channel();
        let bridge = SessionBridge::new(server.commands());
        let viewer = Viewer::start(
            "127.0.0.1:0".parse().expect("addr"),
            bridge,
            responses,
            "bench",
            "live",
        )
        .expect("viewer");
        server.add_sampled_observer(observer(&viewer), viewer.frame_requests());
        let http = viewer.addr();
        _viewer = Some(viewer);
        let flag = stop_client.clone();
        client = (watcher != Watcher::Idle).then(|| {
            std::thread::spawn(move || match watcher {
                Watcher::Reading => {
                    let (mut ws, _) = tungstenite::client::client(
                        format!("ws://{http}/ws"),
                        TcpStream::connect(http).expect("tcp"),
                    )
                    .expect("ws");
                    let mut frames = 0u64;
                    while !flag.load(Ordering::Relaxed) {
                        if ws.read().is_ok() {
                            frames += 1;
                        }
                    }
                    frames
                }
                _ => {
                    // Handshake, then never read again.
                    let _socket = ws_handshake(http);
                    while !flag.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    0
                }
            })
        });
    }
    let udp = server.local_addr().expect("addr");
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        let cpu = simrob_benchkit::thread_cpu().unwrap_or(f64::NAN);
        server.run(&flag).expect("run");
        (
            server.session().stats().iterations,
            simrob_benchkit::thread_cpu().unwrap_or(f64::NAN) - cpu,
        )
    });
    // An agent that takes no broadcasts: without anyone there, an unpaced server idles.
    let mut agent = Agent::connect(udp).expect("agent");
    agent
        .register(
            "silent",
            AgentOptions {
                broadcast: -1.0,
                ..AgentOptions::default()
            },
        )
        .expect("register");
    // Warm-up, then the measured window.
    std::thread::sleep(Duration::from_millis(500));
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    let (iterations, cpu) = thread.join().expect("server");
    let wall = t0.elapsed().as_secs_f64() + 0.5;
    stop_client.store(true, Ordering::Relaxed);
    drop(_viewer);
    if let Some(c) = client {
        if watcher == Watcher::Stalled {
            let _ = c.join();
        }
    }
    Rate {
        wall: iterations as f64 / wall,
        cpu: iterations as f64 / cpu,
    }
}

/// Steps a second of the simulation: by the wall clock and by the processor time of the
/// simulation's thread (which other processes on a busy machine change much less).
struct Rate {
    wall: f64,
    cpu: f64,
}

/// Collects the page's own measurement (`?bench=1` reports its draw rate after 8 s).
struct Reports(std::sync::Mutex<Option<(f64, f64)>>);

impl simrob_viewer::Backend for Reports {
    fn command(&self, cmd: &serde_json::Value) -> Result<(), simrob_viewer::CommandError> {
        if cmd.get("cmd").and_then(|c| c.as_str()) == Some("report") {
            let fps = cmd.get("fps").and_then(|v| v.as_f64()).unwrap_or(0.0);
            let bodies = cmd.get("bodies").and_then(|v| v.as_f64()).unwrap_or(0.0);
            if let Ok(mut r) = self.0.lock() {
                *r = Some((bodies, fps));
            }
        }
        Ok(())
    }
}

/// Draws per second of the page in headless Chromium with `robots` extra SumBots.
fn page_fps(robots: u32) -> Option<(f64, f64)> {
    let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|c| std::path::Path::new(c).exists())?;
    let mut server = core(robots);
    let reports = Arc::new(Reports(std::sync::Mutex::new(None)));
    let viewer = Viewer::start(
        "127.0.0.1:0".parse().expect("addr"),
        reports.clone(),
        responses_channel(),
        "bench",
        "live",
    )
    .expect("viewer");
    server.add_sampled_observer(observer(&viewer), viewer.frame_requests());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || server.run(&flag).expect("run"));
    let profile =
        std::env::temp_dir().join(format!("simrob-bench-chromium-{}", std::process::id()));
    let mut browser: Child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,800",
            "--remote-debugging-port=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("http://{}/?bench=1", viewer.addr()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + Duration::from_secs(40);
    let mut result = None;
    while Instant::now() < deadline && result.is_none() {
        std::thread::sleep(Duration::from_millis(200));
        result = reports.0.lock().ok().and_then(|r| *r);
    }
    let _ = browser.kill();
    let _ = browser.wait();
    let _ = std::fs::remove_dir_all(&profile);
    stop.store(true, Ordering::Relaxed);
    let _ = thread.join();
    result
}

fn main() {
    let quick = std::env::args().any(|a| a == "--test");
    let seconds = if quick { 0.5 } else { 4.0 };
    let only_page = std::env::args().any(|a| a == "page");
    for (robots, name) in [(0u32, "soccer scene (17 bodies)"), (330, "1,003 bodies")] {
        if only_page {
            break;
        }
        let mut alone = None;
        for watcher in [
            Watcher::None,
            Watcher::Idle,
            Watcher::Reading,
            Watcher::Stalled,
        ] {
            let r = step_rate(robots, watcher, seconds);
            let base = *alone.get_or_insert((r.wall, r.cpu));
            println!(
                "{name:>26}, viewer {watcher:>8?}: {:>8.0} steps/s by the wall clock ({:+5.1} %), {:>8.0} steps per CPU second of the simulation thread ({:+5.1} %)",
                r.wall,
                100.0 * (r.wall / base.0 - 1.0),
                r.cpu,
                100.0 * (r.cpu / base.1 - 1.0),
            );
        }
    }
    if !quick {
        match page_fps(330) {
            Some((bodies, fps)) => {
                println!("page draws, {bodies} bodies, headless Chromium: {fps:.1} frames/s")
            }
            None => println!("page frames/s: Chromium not available"),
        }
    }
}
