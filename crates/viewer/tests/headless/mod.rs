//! Headless Chromium for the viewer's tests: screenshots of a page and where the SumBot is
//! drawn in them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> PathBuf {
    for c in [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ] {
        if Path::new(c).exists() {
            return PathBuf::from(c);
        }
    }
    panic!("the browser tests need Chromium (apt-get install -y chromium); .ci/run installs it");
}

/// Loads `url` in headless Chromium and returns the screenshot's pixels (RGBA, w × h). The
/// last screenshot of each name is also kept in the temporary directory as
/// `simrob-viewer-NAME`, for a person to look at.
pub fn screenshot(url: &str, out: &Path, w: u32, h: u32) -> image::RgbaImage {
    let profile = out.with_extension("profile");
    let status = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--use-angle=swiftshader",
            "--enable-unsafe-swiftshader",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={w},{h}"))
        .arg(format!("--screenshot={}", out.display()))
        .arg(url)
        .output()
        .expect("run chromium");
    assert!(
        status.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    let _ = std::fs::remove_dir_all(&profile);
    if let Some(name) = out.file_name() {
        let _ = std::fs::copy(
            out,
            std::env::temp_dir().join(format!("simrob-viewer-{}", name.to_string_lossy())),
        );
    }
    image::open(out).expect("screenshot").to_rgba8()
}

/// Pixels close to the SumBot's orange.
pub fn orange_pixels(img: &image::RgbaImage) -> Vec<(u32, u32)> {
    img.enumerate_pixels()
        .filter(|(_, _, p)| p[0] > 200 && (100..190).contains(&p[1]) && p[2] < 80)
        .map(|(x, y, _)| (x, y))
        .collect()
}

/// The centroid of `points`.
pub fn centroid(points: &[(u32, u32)]) -> (f64, f64) {
    let n = points.len() as f64;
    (
        points.iter().map(|p| p.0 as f64).sum::<f64>() / n,
        points.iter().map(|p| p.1 as f64).sum::<f64>() / n,
    )
}
