//! How fast the 2D view's page draws a swarm in headless Chromium, and what a frame costs.
//!
//! Builds the drone swarm with N drones (HMR Sim's avoidance), runs it 15 simulated seconds
//! (so the frame holds flying, arrived and crashed drones, and routes for the flying ones),
//! serves that frame in the 2D view and opens the page with `?bench=1` in headless Chromium
//! (the browser tests' own, software rendering), which redraws every animation frame. After
//! 30 frames it measures 3 s: frames drawn per second, and per frame the milliseconds of the
//! page's drawing script (by phase) and the processor time of the page's main thread (script
//! and the canvas's drawing), of its renderer process and of the whole browser. Frames per
//! second fall when other work shares the machine; processor time per frame hardly does.
//!
//! Each body count runs under two sets of browser flags: the defaults (animation frames
//! paced at 60 a second) and `--disable-frame-rate-limit` (frames as fast as the page and
//! the browser draw them). `--flag F` (repeatable) measures one more row with F added,
//! `--page OPTIONS` adds URL options to every row (`--page canvas=gpu`: a GPU-backed canvas).
//! Needs Chromium (`/usr/bin/chromium`) and Linux's `/proc`.
//!
//! ```text
//! cargo run --release -p simrob-viewer --example page_fps_2d -- 1000 10000 [1] [--flag F]… [--page OPTIONS]
//! ```

use std::time::{Duration, Instant};

use simrob_swarm::drones::Avoidance;
use simrob_swarm::scenario::{Overrides, Scenario};
use simrob_viewer::view2d::swarm::{scene, still};

#[path = "../tests/it/headless/mod.rs"]
mod headless;

use headless::{BrowserCpu, Page, TICKS_PER_SECOND};

/// How long frames are counted, after the first 30.
const WINDOW: Duration = Duration::from_secs(3);

/// The page's counters and the browser's processor time at one moment.
struct Sample {
    at: Instant,
    bench: serde_json::Value,
    cpu: BrowserCpu,
}

fn sample(page: &mut Page) -> Sample {
    let bench = page.eval("__simrob2d.bench");
    Sample {
        at: Instant::now(),
        bench,
        cpu: page.cpu(),
    }
}

/// One measured row.
struct Row {
    flags: String,
    fps: f64,
    frames: f64,
    script_ms: f64,
    page_ms: f64,
    renderer_ms: f64,
    gpu_ms: f64,
    browser_ms: f64,
    phases: Vec<(String, f64)>,
    labels: f64,
    canvas: String,
}

fn measure(url: &str, flags: &[String]) -> Row {
    let profile = std::env::temp_dir().join(format!("simrob-page-fps-2d-{}", std::process::id()));
    let mut page = Page::open_with(url, &profile, 1280, 800, flags);
    page.wait_for(
        "__simrob2d.bench !== null && __simrob2d.bench.frames >= 30",
        "__simrob2d.draws",
    );
    let a = sample(&mut page);
    std::thread::sleep(WINDOW);
    let mut b = sample(&mut page);
    // On a very busy machine: at least 10 frames, for at most 30 s more.
    let f = |s: &Sample, k: &str| s.bench.get(k).and_then(|v| v.as_f64()).unwrap_or(0.0);
    while f(&b, "frames") - f(&a, "frames") < 10.0 && b.at - a.at < WINDOW * 10 {
        std::thread::sleep(Duration::from_millis(500));
        b = sample(&mut page);
    }
    drop(page);
    let frames = (f(&b, "frames") - f(&a, "frames")).max(1.0);
    let per_frame = |ticks: u64| ticks as f64 / TICKS_PER_SECOND * 1e3 / frames;
    let (browser, gpu, renderer, page_thread) = b.cpu.since(&a.cpu);
    let phase = |s: &Sample, k: &str| s.bench["phases"][k].as_f64().unwrap_or(0.0);
    let names: Vec<String> = b.bench["phases"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    Row {
        flags: if flags.is_empty() {
            "(defaults)".into()
        } else {
            flags.join(" ")
        },
        fps: frames / (b.at - a.at).as_secs_f64(),
        frames,
        script_ms: (f(&b, "script_ms") - f(&a, "script_ms")) / frames,
        page_ms: per_frame(page_thread),
        renderer_ms: per_frame(renderer),
        gpu_ms: per_frame(gpu),
        browser_ms: per_frame(browser),
        phases: names
            .into_iter()
            .map(|k| {
                let ms = (phase(&b, &k) - phase(&a, &k)) / frames;
                (k, ms)
            })
            .collect(),
        labels: f(&b, "labels"),
        canvas: format!("{}×{}", f(&b, "width"), f(&b, "height")),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let after = |name: &str| -> Vec<String> {
        args.windows(2)
            .filter(|w| w[0] == name)
            .map(|w| w[1].clone())
            .collect()
    };
    let page: String = after("--page").iter().map(|o| format!("&{o}")).collect();
    let extra = after("--flag");
    let counts: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || !matches!(args[i - 1].as_str(), "--page" | "--flag"))
        .filter_map(|(_, a)| a.parse().ok())
        .collect();
    let mut configs: Vec<Vec<String>> = vec![vec![], vec!["--disable-frame-rate-limit".into()]];
    if !extra.is_empty() {
        configs.push(extra);
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/swarm/drone-swarm.toml");
    let scenario = Scenario::load(&path).expect("the drone swarm scenario");
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "2D view in headless Chromium (software rendering, the browser tests' flags), page options: {}; load average {}",
        if page.is_empty() { "none" } else { &page[1..] },
        load.split(' ').take(3).collect::<Vec<_>>().join(" ")
    );
    println!(
        "per frame: script = the page's drawing code (performance.now); page thread, renderer, browser = processor time (/proc) of the page's main thread, its process, every browser process"
    );
    println!();
    println!("| bodies | browser flags | frames/s | script ms | page thread ms | renderer ms | GPU process ms | browser ms | frames per page-thread CPU s |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut notes = Vec::new();
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
        let url = format!("http://{}/?bench=1{page}", view.addr());
        for flags in &configs {
            let r = measure(&url, flags);
            println!(
                "| {n} | {} | {:.1} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} | {:.0} |",
                r.flags,
                r.fps,
                r.script_ms,
                r.page_ms,
                r.renderer_ms,
                r.gpu_ms,
                r.browser_ms,
                1e3 / r.page_ms.max(1e-3),
            );
            let phases: Vec<String> = r
                .phases
                .iter()
                .map(|(k, ms)| format!("{k} {ms:.2}"))
                .collect();
            notes.push(format!(
                "{n} bodies, {}: {} frames; script ms by phase: {}",
                r.flags,
                r.frames,
                phases.join(", ")
            ));
            if flags.is_empty() {
                notes.push(format!(
                    "{n} bodies drawn at t = {:.1} s ({}), {} routes, {} labels, a {} canvas",
                    sim.time(),
                    drawn.join(", "),
                    f.routes.len(),
                    r.labels,
                    r.canvas
                ));
            }
        }
    }
    println!();
    for n in notes {
        println!("{n}");
    }
}
