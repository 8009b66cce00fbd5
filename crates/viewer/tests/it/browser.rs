//! The viewer in a real browser (headless Chromium): the page shows the world where the
//! world says it is, and follows it.

use crate::headless;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use simrob_client::agent::{Agent, AgentOptions};
use simrob_protocol::{ControlRequest, EntityId, Request};
use simrob_viewer::{observer, responses_channel, SessionBridge, Viewer};

use crate::sumbot::{initialize, run_iterations, wheels};
use headless::{centroid, orange_pixels, screenshot, Page};

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
    let mut server = crate::sumbot::soccer_server(&dir, 1.0);
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
    server.add_sampled_observer(observer(&viewer), viewer.frame_requests());
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
    initialize(&mut agent, "observer", Duration::from_secs(2));
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
    wheels(&mut agent, 6.0, 6.0);
    run_paused_after(&mut agent, 150);
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
        .find(|e| e.entity_id == EntityId(3))
        .unwrap()
        .position
}

/// Initializes the soccer world and lets it run a few iterations.
fn initialized(live: &Live) -> Agent {
    let mut agent = Agent::connect(live.udp).unwrap();
    agent
        .register(
            "starter",
            AgentOptions {
                broadcast: -1.0,
                ..AgentOptions::default()
            },
        )
        .unwrap();
    agent
        .control(ControlRequest::InitializeSimulation, false)
        .unwrap();
    run_iterations(&mut agent, 5);
    agent
}

/// Where the page drew each label: (text, left, top, right, bottom) in CSS px.
fn label_boxes(page: &mut Page) -> Vec<(String, f64, f64, f64, f64)> {
    let v = page.eval(
        "[...document.querySelectorAll('.label')].filter((l) => l.style.display !== 'none') \
           .map((l) => { const r = l.getBoundingClientRect(); \
             return [l.textContent, r.left, r.top, r.right, r.bottom]; })",
    );
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let n = |i: usize| l[i].as_f64().unwrap();
            (l[0].as_str().unwrap().to_string(), n(1), n(2), n(3), n(4))
        })
        .collect()
}

#[test]
fn labels_do_not_overlap_in_the_default_soccer_view() {
    let live = live("labels");
    let _agent = initialized(&live);
    let url = format!("http://{}/", live.viewer.addr());
    let mut page = Page::open(&url, &live.dir.join("profile"), 1280, 800);
    page.wait_for(
        "simrob.drawn > 0 && simrob.count() > 0 && simrob.labels.length > 0",
        "document.getElementById('status').textContent",
    );
    page.docs_picture("simrob-3d");
    let boxes = label_boxes(&mut page);
    let names: Vec<&str> = boxes.iter().map(|b| b.0.as_str()).collect();
    assert!(
        names.contains(&"Robot 3"),
        "the SumBot is not labelled: {names:?}"
    );
    assert!(
        names.iter().any(|n| n.starts_with("Ball")),
        "the ball is not labelled: {names:?}"
    );
    for (i, a) in boxes.iter().enumerate() {
        for b in &boxes[i + 1..] {
            let overlap = a.1 < b.3 && b.1 < a.3 && a.2 < b.4 && b.2 < a.4;
            assert!(!overlap, "{a:?} overlaps {b:?}");
        }
    }
}

#[test]
fn url_options_that_are_not_numbers_are_ignored_and_said() {
    let live = live("badurl");
    let _agent = initialized(&live);
    let url = format!(
        "http://{}/?view=top&scale=abc&cx=foo&cy=0.5&res=x",
        live.viewer.addr()
    );
    let mut page = Page::open(&url, &live.dir.join("profile"), 800, 600);
    page.wait_for(
        "simrob.drawn > 0 && simrob.scaleBar !== undefined",
        "document.getElementById('status').textContent",
    );
    // The view fitted as without them: a finite scale, the bodies spread out on the canvas.
    let top = page.eval("[simrob.top.scale, simrob.top.cx, simrob.top.cy]");
    let finite = top
        .as_array()
        .is_some_and(|a| a.iter().all(|v| v.as_f64().is_some_and(f64::is_finite)));
    assert!(finite && top[0].as_f64() > Some(0.0), "{top}");
    // Each bad one said on the page.
    let log = page.text("log");
    for key in ["?scale=abc ignored", "?cx=foo ignored", "?res=x ignored"] {
        assert!(log.contains(key), "{key}: {log}");
    }
    assert!(!log.contains("?cy="), "{log}");
}

#[test]
fn the_top_view_has_a_scale_grid_and_coordinates_and_picks_by_shape() {
    let live = live("topview");
    let _agent = initialized(&live);
    // 200 px per metre, centred on the origin, no side panel.
    let url = format!(
        "http://{}/?view=top&scale=200&cx=0&cy=0&panel=0",
        live.viewer.addr()
    );
    let mut page = Page::open(&url, &live.dir.join("profile"), 800, 600);
    let describe = "document.getElementById('status').textContent";
    page.wait_for(
        "simrob.drawn > 0 && simrob.scaleBar !== undefined",
        describe,
    );
    assert_eq!(
        page.eval("[simrob.scaleBar.metres, simrob.scaleBar.px]"),
        serde_json::json!([0.5, 100])
    );
    // 200 px right of and 100 px above the stage's centre.
    page.eval(
        "(() => { const r = document.getElementById('stage').getBoundingClientRect(); \
           document.getElementById('stage').dispatchEvent(new MouseEvent('mousemove', \
           {clientX: r.left + r.width / 2 + 200, clientY: r.top + r.height / 2 - 100, bubbles: true})); })()",
    );
    // Within a pixel (the stage's centre may fall between two).
    let coords = page.text("coords");
    let xy: Vec<f64> = coords
        .split(['x', 'y', 'm', '·', ' '])
        .filter_map(|t| t.parse().ok())
        .collect();
    assert!(
        xy.len() == 2 && (xy[0] - 1.0).abs() < 0.005 && (xy[1] - 0.5).abs() < 0.005,
        "the cursor at (1.0, 0.5) m reads {coords:?}"
    );
    drop(page);

    // Zoomed on the SumBot (1000 px per metre): a click on its body far from its centre picks
    // it; a click on the floor picks nothing.
    let mut page = Page::open(
        &format!("http://{}/?view=top&scale=1000&panel=0", live.viewer.addr()),
        &live.dir.join("profile2"),
        800,
        600,
    );
    page.wait_for("simrob.drawn > 0 && simrob.count() > 0", describe);
    page.eval(
        "(() => { const e = simrob.entity(3); \
           simrob.top.cx = e.p[0]; simrob.top.cy = e.p[1]; simrob.redraw(); })()",
    );
    // Drawn centred on the robot before looking where its body is.
    page.wait_for(
        "simrob.current && Math.abs(simrob.toScreen([simrob.top.cx, simrob.top.cy, 0])[0] - document.getElementById('stage').clientWidth / 2) < 1",
        describe,
    );
    let at = page.eval(
        "(() => { const body = simrob.bodiesOf(3).filter((b) => b.shape === 'Box') \
             .sort((a, b) => b.dims[0] * b.dims[1] - a.dims[0] * a.dims[1])[0]; \
           const c = simrob.toScreen(body.p); \
           const v = simrob.outline(body.index)[0]; \
           return [c[0] + 0.8 * (v[0] - c[0]), c[1] + 0.8 * (v[1] - c[1]), Math.hypot(v[0] - c[0], v[1] - c[1])]; })()",
    );
    let (x, y, reach) = (
        at[0].as_f64().unwrap(),
        at[1].as_f64().unwrap(),
        at[2].as_f64().unwrap(),
    );
    assert!(
        0.8 * reach > 25.0,
        "the click is only {:.0} px from the centre",
        0.8 * reach
    );
    let click = |page: &mut Page, x: f64, y: f64| {
        page.eval(&format!(
            "(() => {{ const o = {{clientX: {x}, clientY: {y}, bubbles: true}}; \
               document.getElementById('stage').dispatchEvent(new MouseEvent('mousedown', o)); \
               window.dispatchEvent(new MouseEvent('mouseup', o)); return simrob.selected; }})()"
        ))
    };
    assert_eq!(click(&mut page, x, y), serde_json::json!(3));
    assert_eq!(click(&mut page, 5.0, 5.0), serde_json::Value::Null);
}

/// Leaves step mode, runs `n` iterations and pauses again.
fn run_paused_after(agent: &mut Agent, n: u64) {
    agent
        .control(ControlRequest::SetStepMode(false), false)
        .unwrap();
    run_iterations(agent, n);
    agent
        .control(ControlRequest::SetStepMode(true), false)
        .unwrap();
}

/// The white pixel of the heading arrow farthest from `centre` (within 100 px: not the scale
/// bar's text), as an angle on screen (rad, from +x towards screen-up), and how many white
/// pixels there are.
fn arrow_tip(img: &image::RgbaImage, centre: (f64, f64)) -> (f64, usize) {
    let near = |x: u32, y: u32| (x as f64 - centre.0).hypot(y as f64 - centre.1) < 100.0;
    let white: Vec<(u32, u32)> = img
        .enumerate_pixels()
        .filter(|(x, y, p)| near(*x, *y) && p[0] > 225 && p[1] > 225 && p[2] > 225)
        .map(|(x, y, _)| (x, y))
        .collect();
    let far = white
        .iter()
        .max_by(|a, b| {
            let d = |p: &&(u32, u32)| (p.0 as f64 - centre.0).hypot(p.1 as f64 - centre.1);
            d(a).total_cmp(&d(b))
        })
        .copied()
        .unwrap_or((0, 0));
    (
        (centre.1 - far.1 as f64).atan2(far.0 as f64 - centre.0),
        white.len(),
    )
}

/// The difference of two angles, in [0, π].
fn angle_between(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(std::f64::consts::TAU);
    d.min(std::f64::consts::TAU - d)
}

#[test]
fn a_wheeled_robots_arrow_points_where_it_drives() {
    let live = live("heading");
    let mut agent = initialized(&live);
    run_iterations(&mut agent, 100);
    // The robot lands; then turn it in place (opposite wheel speeds), then stop it and pause.
    wheels(&mut agent, 6.0, -6.0);
    run_iterations(&mut agent, 40);
    wheels(&mut agent, 0.0, 0.0);
    run_iterations(&mut agent, 30);
    agent
        .control(ControlRequest::SetStepMode(true), false)
        .unwrap();
    let at = pose(&mut agent);

    // The arrow seen from above, centred on the robot: as a mesh (600 px per metre, the robot
    // about 65 px across) and as a sprite (200 px per metre, about 22 px).
    let mut drawn = Vec::new();
    for scale in [600, 200] {
        let url = format!(
            "http://{}/?view=top&scale={scale}&cx={}&cy={}&labels=0&panel=0",
            live.viewer.addr(),
            at[0],
            at[1]
        );
        let img = screenshot(
            &url,
            &live.dir.join(format!("heading-{scale}.png")),
            800,
            600,
        );
        let (angle, white) = arrow_tip(&img, (400.0, 300.0));
        assert!(
            white > 20,
            "no heading arrow at {scale} px/m ({white} white pixels)"
        );
        drawn.push((scale, angle));
    }

    // Where the robot goes when driven forwards (both wheels positive).
    wheels(&mut agent, 6.0, 6.0);
    run_paused_after(&mut agent, 60);
    let to = pose(&mut agent);
    let (dx, dy) = (to[0] - at[0], to[1] - at[1]);
    assert!(dx.hypot(dy) > 0.03, "the robot did not drive: ({dx}, {dy})");
    let drives = dy.atan2(dx);
    // It turned: a robot that still faced −X would not test much.
    assert!(
        angle_between(drives, std::f64::consts::PI) > 0.3,
        "the robot did not turn before driving (drives at {drives:.2} rad)"
    );
    for (scale, angle) in drawn {
        assert!(
            angle_between(angle, drives) < 0.25,
            "at {scale} px/m the arrow points at {angle:.2} rad, the robot drives at {drives:.2} rad"
        );
    }
}

/// A page backend that ignores commands (the frames are published by the test).
struct Quiet;

impl simrob_viewer::Backend for Quiet {
    fn command(&self, _cmd: &serde_json::Value) -> Result<(), simrob_viewer::CommandError> {
        Ok(())
    }
}

/// A viewer showing `frame` and nothing else (its page's commands are ignored).
fn showing(frame: &simrob_viewer::Frame) -> Viewer {
    let viewer = Viewer::start(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(Quiet),
        responses_channel(),
        "test",
        "live",
    )
    .unwrap();
    viewer.publish(frame);
    viewer
}

#[test]
fn swarm_robots_arrows_point_along_their_map_heading() {
    use simrob_viewer::{record::swarm_box, Frame, FrameEntity};
    let dir = std::env::temp_dir().join(format!(
        "simrob-viewer-swarm-heading-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Three robots 1 m apart on the map's x axis (map units are centimetres, y down), each
    // turned its own way.
    let headings = [0.3, 2.0, -2.5];
    let mut frame = Frame {
        initialized: true,
        ..Frame::default()
    };
    for (k, theta) in headings.iter().enumerate() {
        let id = k as u32 + 1;
        let b = swarm_box(id, 0, 100.0 * k as f64, 0.0, *theta, [20.0, 20.0]);
        frame.entities.push(FrameEntity {
            id,
            kind: "Robot".into(),
            p: Some(b.p),
            r: Some(b.r),
        });
        frame.bodies.push(b);
    }
    let viewer = showing(&frame);
    // Top view, 200 px per metre, centred on the middle robot: robot k at x = 200 + 200k px.
    let url = format!(
        "http://{}/?view=top&scale=200&cx=1&cy=0&labels=0&panel=0",
        viewer.addr()
    );
    let img = screenshot(&url, &dir.join("swarm-heading.png"), 800, 600);
    for (k, theta) in headings.iter().enumerate() {
        let (angle, white) = arrow_tip(&img, (200.0 + 200.0 * k as f64, 300.0));
        assert!(white > 20, "robot {k} has no arrow ({white} white pixels)");
        // Heading θ on the map (y down) is −θ in the world (y up), as on the screen.
        assert!(
            angle_between(angle, -theta) < 0.2,
            "robot {k}: heading {theta} rad on the map, arrow at {angle:.2} rad on screen"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The angle (rad, from +x towards screen-up, in [0, π)) of the long axis of `points`, from
/// their second moments.
fn long_axis(points: &[(u32, u32)]) -> f64 {
    let (cx, cy) = centroid(points);
    let (mut xx, mut yy, mut xy) = (0.0, 0.0, 0.0);
    for &(x, y) in points {
        let (dx, dy) = (x as f64 - cx, cy - y as f64);
        xx += dx * dx;
        yy += dy * dy;
        xy += dx * dy;
    }
    (0.5 * (2.0 * xy).atan2(xx - yy)).rem_euclid(std::f64::consts::PI)
}

#[test]
fn a_small_box_is_drawn_turned_as_it_is_whether_a_mesh_or_a_sprite() {
    use simrob_viewer::{Frame, FrameBody, FrameEntity};
    let dir = std::env::temp_dir().join(format!("simrob-viewer-sprite-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A 20 × 4 cm plank turned 30° about Z, one item (no heading arrow on it).
    let turn = 30f64.to_radians();
    let r = [0.0, 0.0, turn];
    let frame = Frame {
        initialized: true,
        bodies: vec![FrameBody {
            e: 1,
            id: 0,
            shape: "Box".into(),
            dims: [0.2, 0.04, 0.02],
            material: 0,
            mass: 1.0,
            p: [0.0, 0.0, 0.01],
            r,
            v: [0.0; 3],
            w: [0.0; 3],
        }],
        entities: vec![FrameEntity {
            id: 1,
            kind: "Item".into(),
            p: Some([0.0, 0.0, 0.01]),
            r: Some(r),
        }],
        ..Frame::default()
    };
    let viewer = showing(&frame);
    // 100 px per metre: the plank is 20 px long, a sprite (its pixels at its centre's depth,
    // or, `depth=1`, each at its own); 500: 100 px, a mesh.
    for (scale, depth) in [(100, 0), (100, 1), (500, 0)] {
        let url = format!(
            "http://{}/?view=top&scale={scale}&cx=0&cy=0&labels=0&panel=0&depth={depth}",
            viewer.addr()
        );
        let img = screenshot(
            &url,
            &dir.join(format!("plank-{scale}-{depth}.png")),
            400,
            300,
        );
        let teal: Vec<(u32, u32)> = img
            .enumerate_pixels()
            .filter(|(_, _, p)| p[0] < 100 && p[1] > 140 && p[2] > 130)
            .map(|(x, y, _)| (x, y))
            .collect();
        let expected = (scale as f64 * 0.2) * (scale as f64 * 0.04);
        assert!(
            (teal.len() as f64) > 0.6 * expected && (teal.len() as f64) < 1.5 * expected,
            "at {scale} px/m the plank covers {} px, {expected:.0} expected",
            teal.len()
        );
        let (cx, cy) = centroid(&teal);
        assert!(
            (cx - 200.0).abs() < 2.0 && (cy - 150.0).abs() < 2.0,
            "at {scale} px/m the plank is drawn at ({cx:.1}, {cy:.1}), not (200, 150)"
        );
        let axis = long_axis(&teal);
        assert!(
            angle_between(axis, turn) < 0.1,
            "at {scale} px/m the plank lies at {:.1}°, not 30°",
            axis.to_degrees()
        );
    }
    // `depth=1` did give the sprites their own depth (the browser has EXT_frag_depth).
    let mut page = Page::open(
        &format!("http://{}/?view=top&depth=1", viewer.addr()),
        &dir.join("profile"),
        400,
        300,
    );
    page.wait_for("simrob.drawn > 0", "simrob.gl");
    assert_eq!(page.eval("simrob.spriteDepth"), serde_json::json!(true));
    drop(page);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A page served by `simrob soccer match` is titled "simrob viewer: soccer match", its heading
/// "simrob soccer match" (they once said "simrob simrob soccer match"), and the score and
/// clock the match publishes with its frames show over the view (they once showed nowhere).
#[test]
fn a_match_page_names_simrob_once_and_shows_the_score_and_clock() {
    use simrob_viewer::{Frame, FrameBody, FrameEntity};
    let viewer = Viewer::start(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(Quiet),
        responses_channel(),
        "simrob soccer match",
        "live",
    )
    .unwrap();
    let frame = Frame {
        initialized: true,
        bodies: vec![FrameBody {
            e: 8,
            id: 0,
            shape: "Sphere".into(),
            dims: [0.04, 0.0, 0.0],
            material: 0,
            mass: 0.1,
            p: [0.0, 0.0, 0.04],
            r: [0.0; 3],
            v: [0.0; 3],
            w: [0.0; 3],
        }],
        entities: vec![FrameEntity {
            id: 8,
            kind: "Ball".into(),
            p: Some([0.0, 0.0, 0.04]),
            r: Some([0.0; 3]),
        }],
        ..Frame::default()
    };
    let score = "cyan 1 : 0 magenta    02:05 / 10:00";
    simrob_viewer::publish_captioned(&viewer.publisher(), &frame, score);
    let dir = std::env::temp_dir().join(format!("simrob-viewer-title-{}", std::process::id()));
    let mut page = Page::open(
        &format!("http://{}/", viewer.addr()),
        &dir.join("profile"),
        640,
        480,
    );
    page.wait_for(
        "document.title !== 'simrob viewer' && simrob.frame !== null",
        "document.title",
    );
    assert_eq!(page.eval("document.title"), "simrob viewer: soccer match");
    let heading = page.eval("document.querySelector('h1').textContent");
    assert!(
        heading
            .as_str()
            .is_some_and(|h| h.starts_with("simrob soccer match")),
        "{heading}"
    );
    page.wait_for(
        &format!("document.getElementById('caption').textContent === '{score}'"),
        "document.getElementById('caption').textContent",
    );
    let shown = page.eval(
        "(() => { const r = document.getElementById('caption').getBoundingClientRect(); \
         return r.width > 100 && r.height > 10 && getComputedStyle(document.getElementById('caption')).display !== 'none'; })()",
    );
    assert_eq!(shown, true, "the caption is not visible");
    drop(page);
    let _ = std::fs::remove_dir_all(&dir);
}

/// On a whole KidSize field in view, humanoids and the ball are drawn at least 40 and 12 px
/// across (magnified on their feet when smaller), not specks a few pixels wide.
#[test]
fn humanoids_and_the_ball_are_not_specks_on_a_whole_field() {
    use simrob_viewer::{Frame, FrameBody, FrameEntity};
    let body = |e: u32, id: u32, shape: &str, dims: [f64; 3], p: [f64; 3]| FrameBody {
        e,
        id,
        shape: shape.into(),
        dims,
        material: 0,
        mass: 1.0,
        p,
        r: [0.0; 3],
        v: [0.0; 3],
        w: [0.0; 3],
    };
    let entity = |id: u32, kind: &str, p: [f64; 3]| FrameEntity {
        id,
        kind: kind.into(),
        p: Some(p),
        r: Some([0.0; 3]),
    };
    // The KidSize floor with its surroundings, a humanoid (legs, torso, head) and the ball.
    let frame = Frame {
        initialized: true,
        bodies: vec![
            body(1, 0, "Box", [10.4, 7.4, 0.1], [0.0, 0.0, -0.05]),
            body(21, 0, "Box", [0.04, 0.04, 0.18], [1.0, 0.03, 0.09]),
            body(21, 1, "Box", [0.04, 0.04, 0.18], [1.0, -0.03, 0.09]),
            body(21, 2, "Box", [0.08, 0.12, 0.14], [1.0, 0.0, 0.25]),
            body(21, 3, "Sphere", [0.04, 0.0, 0.0], [1.0, 0.0, 0.36]),
            body(8, 0, "Sphere", [0.04, 0.0, 0.0], [0.0, 0.0, 0.04]),
        ],
        entities: vec![
            entity(1, "Field", [0.0, 0.0, -0.05]),
            entity(21, "Humanoid", [1.0, 0.0, 0.2]),
            entity(8, "Ball", [0.0, 0.0, 0.04]),
        ],
        ..Frame::default()
    };
    let viewer = showing(&frame);
    let dir = std::env::temp_dir().join(format!("simrob-viewer-specks-{}", std::process::id()));
    let mut page = Page::open(
        &format!("http://{}/", viewer.addr()),
        &dir.join("profile"),
        960,
        600,
    );
    page.wait_for(
        "simrob.drawn > 0 && simrob.symbols !== undefined && Object.keys(simrob.symbols).length === 2",
        "JSON.stringify({drawn: simrob.drawn, symbols: simrob.symbols})",
    );
    let symbols = page.eval("JSON.stringify(simrob.symbols)");
    let symbols: serde_json::Value =
        serde_json::from_str(symbols.as_str().expect("json")).expect("symbols");
    for (id, least) in [("21", 40.0), ("8", 12.0)] {
        let across = symbols[id].as_f64().unwrap_or(0.0);
        assert!(
            across >= least - 0.01,
            "entity {id} is drawn {across:.1} px across, less than {least}: {symbols}"
        );
    }
    drop(page);
    let _ = std::fs::remove_dir_all(&dir);
}
