//! How fast the viewer's page draws many bodies in headless Chromium.
//!
//! Serves one frame of N bodies (boxes, spheres and cylinders on a grid, one entity each) and
//! loads the page with `?bench=1`, which redraws every animation frame and reports its rate
//! and the milliseconds of script per drawing (the rest of each frame is the browser's:
//! WebGL, compositing). Needs Chromium (`/usr/bin/chromium`). `--top` measures the top view,
//! `--res F` draws at F × the screen's resolution (default 1), `--instanced` with hardware
//! instancing instead of batches read from a texture.
//!
//! ```text
//! cargo run --release -p simrob-viewer --example page_fps -- 1000 10000 [--top] [--res 1] [--instanced]
//! ```

use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use simrob_viewer::{responses_channel, Backend, Frame, FrameBody, FrameEntity, Viewer};

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
            r: Some([0.0; 3]),
        });
    }
    f
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let top = args.iter().any(|a| a == "--top");
    let res = args
        .iter()
        .position(|a| a == "--res")
        .and_then(|i| args.get(i + 1))
        .map(|r| format!("&res={r}"))
        .unwrap_or_default()
        + if args.iter().any(|a| a == "--instanced") {
            "&gl=instanced"
        } else {
            ""
        };
    let counts: Vec<u32> = args
        .iter()
        .enumerate()
        .filter(|(i, _)| *i == 0 || args[i - 1] != "--res")
        .filter_map(|(_, a)| a.parse().ok())
        .collect();
    for n in if counts.is_empty() {
        vec![1000, 10000]
    } else {
        counts
    } {
        let reports = Arc::new(Reports(Mutex::new(None)));
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
        let view = if top { "&view=top" } else { "" };
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
            .arg(format!("http://{}/?bench=1{view}{res}", viewer.addr()))
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
                let n = |k: &str| r.get(k).and_then(|v| v.as_f64()).unwrap_or(f64::NAN);
                println!(
                    "{} view, {} bodies drawn, headless Chromium: {:.1} frames/s, {:.2} ms of script a frame, resolution {}, instances by {}{}",
                    if top { "top" } else { "3D" },
                    n("bodies"),
                    n("fps"),
                    n("script_ms"),
                    n("res"),
                    r.get("gl").and_then(|g| g.as_str()).unwrap_or("?"),
                    if r.get("software").and_then(|s| s.as_bool()) == Some(true) {
                        " (software WebGL)"
                    } else {
                        ""
                    },
                );
            }
            None => println!("{n} bodies: the page sent no report in 90 s"),
        }
    }
}
