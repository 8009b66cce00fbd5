//! How fast the 2D view's page draws a swarm in headless Chromium.
//!
//! Builds the drone swarm with N drones (HMR Sim's avoidance), runs it 15 simulated seconds
//! (so the frame holds flying, arrived and crashed drones, and routes for the flying ones),
//! serves that frame in the 2D view and loads the page with `?bench=1`, which redraws every
//! animation frame and reports its rate and the milliseconds of script a drawing takes.
//! Prints what was drawn (bodies by state, labels) beside the rate. `--page OPTIONS` adds
//! URL options (`--page canvas=gpu`: a GPU-backed canvas). Needs Chromium
//! (`/usr/bin/chromium`).
//!
//! ```text
//! cargo run --release -p simrob-viewer --example page_fps_2d -- 1000 10000 [--page canvas=gpu]
//! ```

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use simrob_swarm::drones::Avoidance;
use simrob_swarm::scenario::{Overrides, Scenario};
use simrob_viewer::view2d::swarm::{frame, scene};
use simrob_viewer::view2d::{Status2d, View2d};
use simrob_viewer::{Backend, Guard};

/// Keeps the page's report.
struct Reports(Mutex<Option<serde_json::Value>>);

impl Backend for Reports {
    fn command(&self, cmd: &serde_json::Value) -> Result<(), String> {
        if cmd.get("cmd").and_then(|c| c.as_str()) == Some("report") {
            if let Ok(mut r) = self.0.lock() {
                *r = Some(cmd.clone());
            }
        }
        Ok(())
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let page = args
        .iter()
        .position(|a| a == "--page")
        .and_then(|i| args.get(i + 1))
        .map(|o| format!("&{o}"))
        .unwrap_or_default();
    let counts: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/swarm/drone-swarm.toml");
    let scenario = Scenario::load(&path).expect("the drone swarm scenario");
    for n in if counts.is_empty() {
        vec![1000, 10000]
    } else {
        counts
    } {
        let mut sim = scenario
            .build(&Overrides {
                robots: Some(n),
                avoidance: Some(Avoidance::Hmr),
                ..Overrides::default()
            })
            .expect("build");
        // 15 simulated seconds: drones flying, arrived, crashed.
        while sim.time() < 15.0 && sim.step() {}
        let reports = Arc::new(Reports(Mutex::new(None)));
        let view = View2d::start(
            "127.0.0.1:0".parse().expect("address"),
            reports.clone(),
            "swarm",
            "page_fps_2d",
            Guard::default(),
        )
        .expect("view");
        let scene = scene(sim.world(), None, &sim.name);
        view.set_scene(&scene);
        let mut snap = simrob_swarm::seer::Snapshot::default();
        let status = Status2d {
            state: "paused".into(),
            speed: 1.0,
            controls: true,
        };
        let f = frame(&sim, &scene, status, &mut snap);
        let mut by_state = vec![0usize; scene.states.len()];
        for b in &f.bodies {
            by_state[usize::from(b.state)] += 1;
        }
        let states: Vec<String> = scene
            .states
            .iter()
            .zip(&by_state)
            .filter(|(_, k)| **k > 0)
            .map(|(s, k)| format!("{k} {}", s.legend))
            .collect();
        let (bodies, routes) = (f.bodies.len(), f.routes.len());
        view.publish(&f);
        let profile =
            std::env::temp_dir().join(format!("simrob-page-fps-2d-{}", std::process::id()));
        let mut browser = Command::new("/usr/bin/chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--use-angle=swiftshader",
                "--enable-unsafe-swiftshader",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--window-size=1280,800",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("http://{}/?bench=1{page}", view.addr()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium");
        let deadline = Instant::now() + Duration::from_secs(90);
        let mut result = None;
        while Instant::now() < deadline && result.is_none() {
            std::thread::sleep(Duration::from_millis(200));
            result = reports.0.lock().ok().and_then(|r| r.clone());
        }
        let _ = browser.kill();
        let _ = browser.wait();
        let _ = std::fs::remove_dir_all(&profile);
        match result {
            Some(r) => {
                let v = |k: &str| r.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
                println!(
                    "2D view, {n} drones at t = {:.1} s: {bodies} bodies drawn ({}), {routes} routes, {} labels, {}×{} canvas, headless Chromium: {:.1} frames/s, {:.2} ms of script a frame",
                    sim.time(),
                    states.join(", "),
                    v("labels"),
                    v("width"),
                    v("height"),
                    v("fps"),
                    v("script_ms"),
                );
            }
            None => println!("{n} drones: the page sent no report in 90 s"),
        }
    }
}
