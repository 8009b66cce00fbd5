//! The viewer in a real browser (headless Chromium): the page shows the world where the
//! world says it is, and follows it.

mod headless;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use simrob_client::simrob::{Agent, AgentOptions};
use simrob_protocol::{
    decode_datagram, CommandKeys, ControlRequest, EntityRequest, MotorCommand, Request,
};
use simrob_server::simrob::{DirStore, ServerConfig, Session, UdpServer};
use simrob_viewer::{observer, responses_channel, SessionBridge, Viewer};

use headless::{centroid, orange_pixels, screenshot};

struct Live {
    udp: SocketAddr,
    viewer: Viewer,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    dir: PathBuf,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn live(tag: &str) -> Live {
    let dir = std::env::temp_dir().join(format!("simrob-viewer-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = ServerConfig {
        receiver_port: 0,
        real_time_factor: 1.0,
        save_directory: dir.clone(),
        ..ServerConfig::default()
    };
    let mut server =
        UdpServer::bind(Session::new(config), Box::new(DirStore::new(&dir).unwrap())).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/soccer.xml");
    let requests: Vec<Request> =
        decode_datagram(&std::fs::read(path).unwrap(), &CommandKeys::default())
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
    server.apply_local(&requests).unwrap();
    let udp = server.local_addr().unwrap();
    let responses = responses_channel();
    let bridge = SessionBridge::new(server.commands());
    let viewer = Viewer::start(
        "127.0.0.1:0".parse().unwrap(),
        bridge,
        responses,
        "test",
        "live",
    )
    .unwrap();
    server.add_observer(observer(&viewer));
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || server.run(&flag).unwrap());
    Live {
        udp,
        viewer,
        stop,
        thread: Some(thread),
        dir,
    }
}

#[test]
fn the_page_draws_the_robot_where_the_world_says_and_follows_it() {
    let live = live("top");
    let mut agent = Agent::connect(live.udp).unwrap();
    agent
        .register(
            "observer",
            AgentOptions {
                broadcast: -1.0,
                ..AgentOptions::default()
            },
        )
        .unwrap();
    agent
        .request(
            Request::Control {
                request: ControlRequest::InitializeSimulation,
                response: None,
            },
            Duration::from_secs(2),
        )
        .unwrap();
    run_iterations(&mut agent, 120); // the robot lands
    agent
        .request(
            Request::Control {
                request: ControlRequest::SetStepMode(true),
                response: None,
            },
            Duration::from_secs(2),
        )
        .unwrap();

    // Top view, 200 px per metre, centred on the origin: world (x, y) → (400 + 200x, 300 − 200y).
    let (w, h) = (800u32, 600u32);
    let url = format!(
        "http://{}/?view=top&scale=200&cx=0&cy=0&labels=0&panel=0",
        live.viewer.addr()
    );
    let shot = live.dir.join("before.png");
    let img = screenshot(&url, &shot, w, h);
    // Not blank: the field, the walls, the robot and the ball are all there.
    let distinct: std::collections::HashSet<[u8; 4]> = img.pixels().map(|p| p.0).collect();
    assert!(
        distinct.len() > 5,
        "the page looks blank ({} colours)",
        distinct.len()
    );
    // The robot where the world says it is.
    let world_before = pose(&mut agent);
    let orange = orange_pixels(&img);
    assert!(
        orange.len() > 50,
        "robot not drawn ({} orange pixels)",
        orange.len()
    );
    let (px, py) = centroid(&orange);
    let (ex, ey) = (
        400.0 + 200.0 * world_before[0],
        300.0 - 200.0 * world_before[1],
    );
    assert!(
        (px - ex).abs() < 6.0 && (py - ey).abs() < 6.0,
        "robot drawn at ({px:.1}, {py:.1}), world says ({ex:.1}, {ey:.1})"
    );

    // Drive it: both wheels +6 rad/s for a second of simulated time (towards −X).
    agent
        .entity(
            EntityRequest::RobotMotorControl {
                entity_id: 3,
                motors: vec![
                    MotorCommand {
                        wheel_joint_id: 0,
                        value: 6.0,
                    },
                    MotorCommand {
                        wheel_joint_id: 1,
                        value: 6.0,
                    },
                ],
            },
            false,
        )
        .unwrap();
    agent
        .control(ControlRequest::SetStepMode(false), false)
        .unwrap();
    run_iterations(&mut agent, 150);
    agent
        .control(ControlRequest::SetStepMode(true), false)
        .unwrap();
    let world_after = pose(&mut agent);
    assert!(
        world_after[0] < world_before[0] - 0.05,
        "the robot did not move in the world"
    );
    let img = screenshot(&url, &live.dir.join("after.png"), w, h);
    let (qx, qy) = centroid(&orange_pixels(&img));
    let (fx, fy) = (
        400.0 + 200.0 * world_after[0],
        300.0 - 200.0 * world_after[1],
    );
    assert!(
        (qx - fx).abs() < 6.0 && (qy - fy).abs() < 6.0,
        "moved robot drawn at ({qx:.1}, {qy:.1}), world says ({fx:.1}, {fy:.1})"
    );
    assert!(
        qx < px - 10.0,
        "the robot did not move on screen: {px:.1} → {qx:.1}"
    );
}

#[test]
fn the_3d_view_is_not_blank_and_the_viewer_is_no_network_agent() {
    let live = live("3d");
    let mut agent = Agent::connect(live.udp).unwrap();
    agent
        .register(
            "asker",
            AgentOptions {
                broadcast: -1.0,
                ..AgentOptions::default()
            },
        )
        .unwrap();
    // The viewer's commands enter the session in process: it is not a network agent.
    assert!(agent.info("viewer").is_err());
    let url = format!("http://{}/", live.viewer.addr());
    let img = screenshot(&url, &live.dir.join("3d.png"), 800, 600);
    // The 3D canvas covers the left of the window: many colours there means the scene was drawn.
    let mut colours = std::collections::HashSet::new();
    for y in (0..600).step_by(3) {
        for x in (0..480).step_by(3) {
            colours.insert(img.get_pixel(x, y).0);
        }
    }
    assert!(
        colours.len() > 20,
        "the 3D view looks blank ({} colours)",
        colours.len()
    );
    assert!(
        !orange_pixels(&img).is_empty(),
        "the SumBot is not in the 3D view"
    );
}

/// Waits (on broadcasts, not the clock) until `n` more iterations have run.
fn run_iterations(agent: &mut Agent, n: u64) {
    let options = |broadcast| AgentOptions {
        broadcast,
        ..AgentOptions::default()
    };
    agent.register("observer", options(0.0)).unwrap();
    let next = |agent: &mut Agent| {
        agent
            .next_broadcast(Duration::from_secs(10))
            .unwrap()
            .expect("a broadcast")
            .iteration
    };
    let first = next(agent);
    while next(agent) < first + n {}
    agent.register("observer", options(-1.0)).unwrap();
}

/// The SumBot's reported position, from a broadcast.
fn pose(agent: &mut Agent) -> [f64; 3] {
    agent
        .register(
            "observer",
            AgentOptions {
                broadcast: 0.0,
                ..AgentOptions::default()
            },
        )
        .unwrap();
    agent.control(ControlRequest::MakeStep, false).unwrap();
    let b = agent
        .next_broadcast(Duration::from_secs(3))
        .unwrap()
        .expect("a broadcast");
    agent
        .register(
            "observer",
            AgentOptions {
                broadcast: -1.0,
                ..AgentOptions::default()
            },
        )
        .unwrap();
    b.entities
        .iter()
        .find(|e| e.entity_id == 3)
        .unwrap()
        .position
}
