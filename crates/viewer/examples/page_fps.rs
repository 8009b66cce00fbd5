//! How fast the viewer's page draws many bodies in headless Chromium.
//!
//! Serves one frame of N bodies (boxes, spheres and cylinders on a grid, one robot entity
//! each, so each gets a heading arrow when it is large enough) and loads the page with `?bench=1`, which redraws every animation frame and, after
//! 3 s, measures 5 s: the frames drawn per second, the milliseconds of the page's script per
//! drawing, and the processor time the whole browser (every Chromium process: page, GPU
//! process with its software WebGL, compositor) spends per drawn frame, which a busy machine
//! does not change as much as it changes frames per second. Needs Chromium
//! (`/usr/bin/chromium`) and Linux's `/proc` for the processor time.
//!
//! Headless Chromium composites the page on its software GPU (SwiftShader) by default, and
//! that alone holds a blank WebGL canvas to about 16 frames/s here; the benchmark therefore
//! runs Chromium with `--disable-gpu-compositing` (the page's WebGL is still drawn by
//! SwiftShader; the compositor is Chromium's plain software one). `--gpu-compositing` keeps
//! the default. Animation frames are paced at 60 a second either way.
//!
//! ```text
//! cargo run --release -p simrob-viewer --example page_fps -- 1000 10000 [--top] [--res 1] [--instanced] [--gpu-compositing] [--flag F]…
//! ```
//!
//! `--top` measures the top view, `--res F` draws at F × the screen's resolution (default 1),
//! `--instanced` uses hardware instancing instead of batches read from a texture, `--flag F`
//! passes F to Chromium.

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use simrob_viewer::{responses_channel, Backend, Frame, FrameBody, FrameEntity, Viewer};

#[path = "../tests/it/headless/mod.rs"]
mod headless;

/// Processor time of a process tree, in clock ticks: all of it, and its GPU process's.
#[derive(Clone, Copy, Default, Debug)]
struct Ticks {
    total: u64,
    gpu: u64,
}

/// The processor time of `root` and every process below it, from `/proc`.
fn tree_ticks(root: u32) -> Ticks {
    let cpu = headless::browser_cpu(root);
    Ticks {
        total: cpu.total,
        gpu: cpu.gpu,
    }
}

/// Keeps the page's report and the browser's processor time when the measured window began
/// and ended.
struct Reports {
    browser: Mutex<Option<u32>>,
    start: Mutex<Option<Ticks>>,
    report: Mutex<Option<(serde_json::Value, Ticks)>>,
}

impl Backend for Reports {
    fn command(&self, cmd: &serde_json::Value) -> Result<(), simrob_viewer::CommandError> {
        let pid = self.browser.lock().ok().and_then(|p| *p);
        let ticks = pid.map(tree_ticks).unwrap_or_default();
        match cmd.get("cmd").and_then(|c| c.as_str()) {
            Some("bench-start") => {
                if let Ok(mut s) = self.start.lock() {
                    *s = Some(ticks);
                }
            }
            Some("report") => {
                if let Ok(mut r) = self.report.lock() {
                    *r = Some((cmd.clone(), ticks));
                }
            }
            _ => {}
        }
        Ok(())
    }
}

fn frame(n: u32) -> Frame {
    let side = (n as f64).sqrt().ceil() as u32;
    let mut f = Frame {
        initialized: true,
        paused: true,
        timestep: 0.01,
        ..Frame::default()
    };
    for i in 0..n {
        let (x, y) = ((i % side) as f64 * 0.3, (i / side) as f64 * 0.3);
        let (shape, dims) = match i % 3 {
            0 => ("Box", [0.2, 0.1, 0.08]),
            1 => ("Sphere", [0.05, 0.0, 0.0]),
            _ => ("Cylinder", [0.06, 0.1, 0.0]),
        };
        let p = [x, y, 0.05];
        f.bodies.push(FrameBody {
            e: i,
            id: 0,
            shape: shape.into(),
            dims,
            material: 0,
            mass: 1.0,
            p,
            r: [0.0, 0.0, i as f64 * 0.1],
            v: [0.0; 3],
            w: [0.0; 3],
        });
        f.entities.push(FrameEntity {
            id: i,
            kind: "Robot".into(),
            p: Some(p),
            r: Some([0.0, 0.0, i as f64 * 0.1]),
        });
    }
    f
}

use headless::TICKS_PER_SECOND;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let has = |name: &str| args.iter().any(|a| a == name);
    let value_of = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let top = has("--top");
    let mut query = String::from("?bench=1");
    if top {
        query += "&view=top";
    }
    if let Some(r) = value_of("--res") {
        query += &format!("&res={r}");
    }
    if has("--instanced") {
        query += "&gl=instanced";
    }
    let mut flags: Vec<String> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i > 0 && args[i - 1] == "--flag")
        .map(|(_, a)| a.clone())
        .collect();
    if !has("--gpu-compositing") {
        flags.push("--disable-gpu-compositing".into());
    }
    let counts: Vec<u32> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || !matches!(args[i - 1].as_str(), "--res" | "--flag"))
        .filter_map(|(_, a)| a.parse().ok())
        .collect();
    for n in if counts.is_empty() {
        vec![1000, 10000]
    } else {
        counts
    } {
        let reports = Arc::new(Reports {
            browser: Mutex::new(None),
            start: Mutex::new(None),
            report: Mutex::new(None),
        });
        let viewer = Viewer::start(
            "127.0.0.1:0".parse().expect("address"),
            reports.clone(),
            responses_channel(),
            "page_fps",
            "live",
        )
        .expect("viewer");
        viewer.publish(&frame(n));
        let profile = std::env::temp_dir().join(format!("simrob-page-fps-{}", std::process::id()));
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
            .args(&flags)
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("http://{}/{query}", viewer.addr()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium");
        if let Ok(mut b) = reports.browser.lock() {
            *b = Some(browser.id());
        }
        let deadline = Instant::now() + Duration::from_secs(90);
        let mut result = None;
        while Instant::now() < deadline && result.is_none() {
            std::thread::sleep(Duration::from_millis(200));
            result = reports.report.lock().ok().and_then(|r| r.clone());
        }
        let start = reports.start.lock().ok().and_then(|s| *s);
        let _ = browser.kill();
        let _ = browser.wait();
        let _ = std::fs::remove_dir_all(&profile);
        let Some((r, end)) = result else {
            println!("{n} bodies: the page sent no report in 90 s");
            continue;
        };
        let num = |k: &str| r.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
        let drawn = |k: &str| {
            r.get("draw")
                .and_then(|d| d.get(k))
                .and_then(|v| v.as_u64())
                .unwrap_or(0)
        };
        let frames = num("frames");
        let cpu =
            |a: u64, b: u64| (b.saturating_sub(a)) as f64 / TICKS_PER_SECOND * 1000.0 / frames;
        let (cpu_total, cpu_gpu) = match start {
            Some(s) if frames > 0.0 => (cpu(s.total, end.total), cpu(s.gpu, end.gpu)),
            _ => (f64::NAN, f64::NAN),
        };
        println!(
            "{} view, {} bodies drawn, headless Chromium: {:.1} frames/s ({} frames in {:.1} s), {:.2} ms of script a frame, {:.1} ms of browser processor time a frame ({:.1} in its GPU process); a frame {} draw calls, {} vertices, {} triangles ({} bodies as meshes, {} as sprites, {} as dots, {} heading arrows); resolution {}, instances by {}{}; flags {}",
            if top { "top" } else { "3D" },
            num("bodies"),
            num("fps"),
            frames,
            num("seconds"),
            num("script_ms"),
            cpu_total,
            cpu_gpu,
            drawn("calls"),
            drawn("vertices"),
            drawn("triangles"),
            drawn("meshes"),
            drawn("sprites"),
            drawn("dots"),
            drawn("arrows"),
            num("res"),
            r.get("gl").and_then(|g| g.as_str()).unwrap_or("?"),
            if r.get("software").and_then(|s| s.as_bool()) == Some(true) {
                " (software WebGL)"
            } else {
                ""
            },
            if flags.is_empty() {
                "Chromium's defaults".to_string()
            } else {
                flags.join(" ")
            },
        );
    }
}
