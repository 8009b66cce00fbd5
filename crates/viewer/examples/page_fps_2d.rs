//! How fast the 2D view's page draws a swarm in headless Chromium.
//!
//! Builds the drone swarm with N drones (HMR Sim's avoidance), runs it 15 simulated seconds
//! (so the frame holds flying, arrived and crashed drones, and routes for the flying ones),
//! serves that frame in the 2D view and opens the page with `?bench=1` in headless Chromium
//! (the browser tests' own), which redraws every animation frame and reports its rate and the
//! milliseconds of script a drawing takes.
//! Prints what was drawn (bodies by state, labels) beside the rate. `--page OPTIONS` adds
//! URL options (`--page canvas=gpu`: a GPU-backed canvas). Needs Chromium
//! (`/usr/bin/chromium`).
//!
//! ```text
//! cargo run --release -p simrob-viewer --example page_fps_2d -- 1000 10000 [--page canvas=gpu]
//! ```

use simrob_swarm::drones::Avoidance;
use simrob_swarm::scenario::{Overrides, Scenario};
use simrob_viewer::view2d::swarm::{scene, still};

#[path = "../tests/headless/mod.rs"]
mod headless;

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
        let addr = "127.0.0.1:0".parse().expect("address");
        let (view, f) = still(&sim, None, addr, "page_fps_2d").expect("view");
        let states = scene(sim.world(), None, &sim.name).states;
        let mut by_state = vec![0usize; states.len()];
        for b in &f.bodies {
            by_state[usize::from(b.state)] += 1;
        }
        let drawn: Vec<String> = states
            .iter()
            .zip(&by_state)
            .filter(|(_, k)| **k > 0)
            .map(|(s, k)| format!("{k} {}", s.legend))
            .collect();
        let profile =
            std::env::temp_dir().join(format!("simrob-page-fps-2d-{}", std::process::id()));
        let mut browser = headless::Page::open(
            &format!("http://{}/?bench=1{page}", view.addr()),
            &profile,
            1280,
            800,
        );
        browser.wait_for("__simrob2d.bench !== null", "__simrob2d.draws");
        let r = browser.eval("__simrob2d.bench");
        drop(browser);
        let v = |k: &str| r.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
        println!(
            "2D view, {n} drones at t = {:.1} s: {} bodies drawn ({}), {} routes, {} labels, {}×{} canvas, headless Chromium: {:.1} frames/s, {:.2} ms of script a frame",
            sim.time(),
            f.bodies.len(),
            drawn.join(", "),
            f.routes.len(),
            v("labels"),
            v("width"),
            v("height"),
            v("fps"),
            v("script_ms"),
        );
    }
}
