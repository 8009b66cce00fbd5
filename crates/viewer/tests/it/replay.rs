//! Record a live run, read it back, export it, and replay it in a real browser (headless
//! Chromium): the page draws the robot where the recorded frame says.

use crate::headless;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use simrob_client::agent::{Agent, AgentOptions};
use simrob_protocol::{
    decode_datagram, CommandKeys, ControlRequest, EntityId, EntityRequest, MotorCommand, Request,
};
use simrob_server::files::DirStore;
use simrob_server::udp::UdpServer;
use simrob_session::{ServerConfig, Session};
use simrob_viewer::record::{recorder, Header, Recording, RecordingReader, FORMAT, VERSION};
use simrob_viewer::replay::serve_replay;
use simrob_viewer::{Frame, FrameBody, FrameEntity};

use headless::{centroid, orange_pixels, screenshot, Page};

/// Runs the soccer scenario at real time with a recorder, drives the SumBot, stops.
fn record_a_run(dir: &Path) -> PathBuf {
    let file = dir.join("run.simrec");
    let config = ServerConfig {
        receiver_port: 0,
        real_time_factor: 1.0,
        save_directory: dir.to_path_buf(),
        ..ServerConfig::default()
    };
    let mut server =
        UdpServer::bind(Session::new(config), Box::new(DirStore::new(dir).unwrap())).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/soccer.xml");
    let requests: Vec<Request> =
        decode_datagram(&std::fs::read(path).unwrap(), &CommandKeys::default())
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
    server.apply_local(&requests).unwrap();
    let udp = server.local_addr().unwrap();
    server.add_observer(recorder(&file, &format!("udp://{udp}")).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || server.run(&flag).unwrap());

    let mut agent = Agent::connect(udp).unwrap();
    agent
        .register(
            "driver",
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
    // The robot lands, then both wheels +6 rad/s: towards −X.
    run_iterations(&mut agent, 50);
    agent
        .entity(
            EntityRequest::RobotMotorControl {
                entity_id: EntityId(3),
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
    run_iterations(&mut agent, 150);
    // The file can be read while it is written.
    let partial = Recording::open(&file).unwrap();
    assert!(partial.frames.len() > 10, "{} frames", partial.frames.len());
    stop.store(true, Ordering::Relaxed);
    thread.join().unwrap();
    file
}

/// Waits (on broadcasts, not the clock) until `n` more iterations have run.
fn run_iterations(agent: &mut Agent, n: u64) {
    let options = |broadcast| AgentOptions {
        broadcast,
        ..AgentOptions::default()
    };
    agent.register("driver", options(0.0)).unwrap();
    let next = |agent: &mut Agent| {
        agent
            .next_broadcast(Duration::from_secs(10))
            .unwrap()
            .expect("a broadcast")
            .iteration
    };
    let first = next(agent);
    while next(agent) < first + n {}
    agent.register("driver", options(-1.0)).unwrap();
}

fn robot(frame: &Frame) -> [f64; 3] {
    frame
        .entities
        .iter()
        .find(|e| e.id == 3 && e.kind == "Robot")
        .and_then(|e| e.p)
        .expect("the SumBot's pose")
}

/// The centroid of the pixels close to the SumBot's orange.
fn robot_on_screen(img: &image::RgbaImage) -> (f64, f64) {
    let points = orange_pixels(img);
    assert!(
        points.len() > 50,
        "robot not drawn ({} orange pixels)",
        points.len()
    );
    centroid(&points)
}

#[test]
fn a_recorded_run_reads_back_exports_and_replays_in_the_browser() {
    let dir = std::env::temp_dir().join(format!("simrob-replay-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = record_a_run(&dir);

    // The file: a JSON header line, then compact blocks, finished when the server stopped.
    let bytes = std::fs::read(&file).unwrap();
    let first = bytes.split(|&b| b == b'\n').next().unwrap();
    let header: serde_json::Value = serde_json::from_slice(first).unwrap();
    assert_eq!(header["format"], FORMAT);
    assert_eq!(header["version"], VERSION);
    assert!(header["source"].as_str().unwrap().starts_with("udp://"));
    assert!(header["started_unix_ms"].as_u64().unwrap() > 0);
    let reader = RecordingReader::open(&file).unwrap();
    assert!(reader.is_finished());
    let recording = Recording::open(&file).unwrap();
    assert_eq!(recording.frames.len(), reader.len());
    assert!(
        recording.frames.len() > 50,
        "{} frames",
        recording.frames.len()
    );
    for pair in recording.frames.windows(2) {
        assert_eq!(
            pair[1].iteration,
            pair[0].iteration + 1,
            "one line per iteration"
        );
        assert!(pair[1].time > pair[0].time || pair[0].bodies.is_empty());
    }
    // The robot moved (towards −X).
    let last = recording.frames.len() - 1;
    let early = recording
        .frames
        .iter()
        .position(|f| f.time >= 0.3)
        .expect("a frame after 0.3 s");
    let (a, b) = (
        robot(&recording.frames[early]),
        robot(&recording.frames[last]),
    );
    assert!(b[0] < a[0] - 0.05, "the robot did not move: {a:?} → {b:?}");

    // The CSV: a header row, one row per frame and robot or ball.
    let mut csv = Vec::new();
    recording.export_csv(&mut csv).unwrap();
    let csv = String::from_utf8(csv).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(
        rows[0],
        "time,iteration,entity,kind,x,y,z,rot_x,rot_y,rot_z"
    );
    let posed: usize = recording
        .frames
        .iter()
        .map(|f| {
            f.entities
                .iter()
                .filter(|e| e.p.is_some() && e.kind != "Field")
                .count()
        })
        .sum();
    assert_eq!(rows.len() - 1, posed);
    let last_robot_row = rows
        .iter()
        .rev()
        .find(|r| r.split(',').nth(2) == Some("3"))
        .unwrap();
    let cols: Vec<&str> = last_robot_row.split(',').collect();
    assert_eq!(cols[3], "Robot");
    assert_eq!(cols[1], recording.frames[last].iteration.to_string());
    assert!((cols[4].parse::<f64>().unwrap() - b[0]).abs() < 1e-6);

    // The replay in the browser: top view, 200 px per metre, centred on the origin.
    let frames = recording.frames.clone();
    let (viewer, player) =
        serve_replay(recording, "127.0.0.1:0".parse().unwrap(), "test replay").unwrap();
    player.play();
    player.pause();
    let url = format!(
        "http://{}/?view=top&scale=200&cx=0&cy=0&labels=0&panel=0",
        viewer.addr()
    );
    let mut drawn = Vec::new();
    for (index, name) in [(early, "early.png"), (last, "last.png")] {
        player.seek(index);
        let status = player.status();
        assert_eq!((status.index, status.playing), (index, false));
        let img = screenshot(&url, &dir.join(name), 800, 600);
        let (px, py) = robot_on_screen(&img);
        let p = robot(&frames[index]);
        let (ex, ey) = (400.0 + 200.0 * p[0], 300.0 - 200.0 * p[1]);
        assert!(
            (px - ex).abs() < 6.0 && (py - ey).abs() < 6.0,
            "frame {index}: robot drawn at ({px:.1}, {py:.1}), the recording says ({ex:.1}, {ey:.1})"
        );
        drawn.push(px);
    }
    assert!(
        drawn[1] < drawn[0] - 10.0,
        "the robot did not move on screen: {drawn:?}"
    );
    drop(player);
    drop(viewer);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A ball rolling along X for `n` frames of `dt` simulated seconds.
fn rolling_ball(n: u64, dt: f64) -> Recording {
    let frames = (0..n)
        .map(|i| {
            let p = [i as f64 * 0.001, 0.0, 0.02];
            Frame {
                iteration: i,
                time: i as f64 * dt,
                initialized: true,
                timestep: dt,
                bodies: vec![FrameBody {
                    e: 1,
                    id: 0,
                    shape: "Sphere".into(),
                    dims: [0.02, 0.0, 0.0],
                    material: 0,
                    mass: 0.05,
                    p,
                    r: [0.0; 3],
                    v: [0.0; 3],
                    w: [0.0; 3],
                }],
                entities: vec![FrameEntity {
                    id: 1,
                    kind: "Ball".into(),
                    p: Some(p),
                    r: Some([0.0; 3]),
                }],
                ..Frame::default()
            }
        })
        .collect();
    Recording {
        header: Header::now("test"),
        frames,
    }
}

#[test]
fn the_replay_page_says_replay_shows_the_real_speed_and_starts_when_a_browser_connects() {
    let dir = std::env::temp_dir().join(format!("simrob-replay-page-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // 100 simulated seconds: at speed 2.5, 40 s of playing, longer than the page takes to load.
    let (viewer, player) = serve_replay(
        rolling_ball(2001, 0.05),
        "127.0.0.1:0".parse().unwrap(),
        "rolling ball",
    )
    .unwrap();
    player.set_speed(2.5).unwrap();
    player.play();
    // No page yet: armed, held on the first frame.
    let status = player.status();
    assert!(status.playing && status.waiting, "{status:?}");
    assert_eq!(status.index, 0);
    assert_eq!((status.start, status.end), (0.0, 100.0));

    let url = format!("http://{}/", viewer.addr());
    let mut page = Page::open(&url, &dir.join("profile"), 800, 600);
    let describe = "document.getElementById('status').textContent";
    page.wait_for("document.body.dataset.replay === 'playing'", describe);
    // The page connected: the player runs.
    assert!(!player.status().waiting);
    assert_eq!(page.eval("document.body.dataset.mode"), "replay");
    assert_eq!(page.text("mode"), "REPLAY");
    assert_eq!(
        page.eval("getComputedStyle(document.getElementById('sim')).display"),
        "none"
    );
    assert_eq!(page.text("r-state"), "playing");
    // The status line is written when the frame is drawn, after the replay panel.
    page.wait_for(
        "document.getElementById('status').textContent.startsWith('replay · playing · t = ')",
        describe,
    );
    assert_eq!(page.eval("document.getElementById('r-speed').value"), "2.5");
    assert_eq!(page.text("r-start"), "0.00 s");
    assert_eq!(page.text("r-end"), "100.00 s");
    assert!(page.text("r-time").ends_with(" of 100.00 s"));

    // Paused at 20 s.
    player.pause();
    player.seek(400);
    page.wait_for(
        "document.body.dataset.replay === 'paused' && simrob.frame.iteration === 400",
        describe,
    );
    assert_eq!(page.text("r-time"), "t = 20.00 s of 100.00 s");
    page.wait_for(
        "document.getElementById('status').textContent.startsWith('replay · paused · t = 20.00 s')",
        describe,
    );
    assert_eq!(page.eval("document.getElementById('seek').value"), "400");

    // Played to the end.
    player.seek(1998);
    player.play();
    page.wait_for("document.body.dataset.replay === 'ended'", describe);
    assert!(player.status().ended);
    assert_eq!(page.text("r-state"), "ended");
    assert!(page.text("r-time").starts_with("t = 100.00 s"));
    drop(page);
    drop(player);
    drop(viewer);
    let _ = std::fs::remove_dir_all(&dir);
}
