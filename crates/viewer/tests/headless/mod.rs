//! Headless Chromium for the viewer's tests: screenshots of a page and where the SumBot is
//! drawn in them, and pages driven over the DevTools protocol ([`Page`]).
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// Headless Chromium's arguments, the same for screenshots and pages.
const FLAGS: [&str; 11] = [
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
];

fn browser(profile: &Path, w: u32, h: u32) -> Command {
    let mut c = Command::new(chromium());
    c.args(FLAGS)
        .arg("--virtual-time-budget=3000")
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--window-size={w},{h}"));
    c
}

/// A page open in headless Chromium, driven over the DevTools protocol: tests read the page's
/// state with JavaScript and wait until it says what they expect (a generous timeout only as a
/// failure guard), never for a span of time.
pub struct Page {
    child: Child,
    ws: tungstenite::WebSocket<TcpStream>,
    next: u64,
    profile: PathBuf,
}

/// The longest a test waits for the browser or the page before failing.
const GUARD: Duration = Duration::from_secs(60);

impl Page {
    /// Opens `url` in a `w` × `h` window; `profile` is a scratch directory, removed on drop.
    pub fn open(url: &str, profile: &Path, w: u32, h: u32) -> Page {
        let _ = std::fs::remove_dir_all(profile);
        let mut c = Command::new(chromium());
        c.args(FLAGS)
            .arg("--remote-debugging-port=0")
            .arg(format!("--user-data-dir={}", profile.display()))
            .arg(format!("--window-size={w},{h}"))
            .arg(url)
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut child = c.spawn().expect("run chromium");
        let ws = match std::panic::catch_unwind(|| connect_devtools(profile)) {
            Ok(ws) => ws,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                std::panic::resume_unwind(e)
            }
        };
        let mut page = Page {
            child,
            ws,
            next: 0,
            profile: profile.to_path_buf(),
        };
        page.eval("1");
        page
    }

    /// Evaluates `js` in the page and returns its value (JSON); fails on a script error.
    pub fn eval(&mut self, js: &str) -> serde_json::Value {
        self.try_eval(js).unwrap_or_else(|e| panic!("{js}: {e}"))
    }

    /// Evaluates `js` in the page: its value, or the script's error.
    pub fn try_eval(&mut self, js: &str) -> Result<serde_json::Value, String> {
        self.next += 1;
        let id = self.next;
        let msg = serde_json::json!({"id": id, "method": "Runtime.evaluate",
            "params": {"expression": js, "returnByValue": true}});
        self.ws
            .send(tungstenite::Message::Text(msg.to_string().into()))
            .expect("devtools send");
        loop {
            let reply = self.ws.read().expect("devtools read");
            let tungstenite::Message::Text(text) = reply else {
                continue;
            };
            let v: serde_json::Value = serde_json::from_str(text.as_str()).expect("devtools json");
            if v["id"] == id {
                if let Some(e) = v["result"].get("exceptionDetails") {
                    return Err(e.to_string());
                }
                return Ok(v["result"]["result"]["value"].clone());
            }
        }
    }

    /// Waits until `js` is true in the page (a script error counts as not yet: the page may
    /// still be loading); fails with `describe`'s value if it never is.
    pub fn wait_for(&mut self, js: &str, describe: &str) {
        let started = Instant::now();
        while self.try_eval(js) != Ok(serde_json::Value::Bool(true)) {
            assert!(
                started.elapsed() < GUARD,
                "the page never showed {js}: {:?}",
                self.try_eval(describe)
            );
            std::thread::yield_now();
        }
    }

    /// The text of the element with `id`.
    pub fn text(&mut self, id: &str) -> String {
        let v = self.eval(&format!("document.getElementById('{id}').textContent"));
        v.as_str().unwrap_or_default().to_string()
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.profile);
    }
}

/// The DevTools socket of the browser's first page: the port from `DevToolsActivePort` in the
/// profile, the page from `/json/list`.
fn connect_devtools(profile: &Path) -> tungstenite::WebSocket<TcpStream> {
    let started = Instant::now();
    let guard = |what: &str| {
        assert!(started.elapsed() < GUARD, "chromium: no {what}");
        std::thread::yield_now();
    };
    let port = loop {
        let text = std::fs::read_to_string(profile.join("DevToolsActivePort")).unwrap_or_default();
        if let Some(Ok(port)) = text.lines().next().map(str::parse::<u16>) {
            if text.lines().count() >= 2 {
                break port;
            }
        }
        guard("DevTools port");
    };
    let url = loop {
        let body = http_get(port, "/json/list").unwrap_or_default();
        let targets: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let page = targets.as_array().and_then(|t| {
            t.iter()
                .find(|t| t["type"] == "page")
                .and_then(|t| t["webSocketDebuggerUrl"].as_str().map(String::from))
        });
        if let Some(url) = page {
            break url;
        }
        guard("page target");
    };
    let stream = TcpStream::connect(("127.0.0.1", port)).expect("devtools connect");
    tungstenite::client::client(url, stream)
        .expect("devtools handshake")
        .0
}

/// Loads `url` in headless Chromium and returns the screenshot's pixels (RGBA, w × h). The
/// last screenshot of each name is also kept in the temporary directory as
/// `simrob-viewer-NAME`, for a person to look at.
pub fn screenshot(url: &str, out: &Path, w: u32, h: u32) -> image::RgbaImage {
    let profile = out.with_extension("profile");
    let status = browser(&profile, w, h)
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

/// The body of `GET path` from the DevTools server on `port` (which keeps connections open:
/// read by Content-Length).
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").ok()?;
    let mut data = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&chunk[..n]);
        let text = String::from_utf8_lossy(&data);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                return Some(
                    String::from_utf8_lossy(&data[end + 4..end + 4 + length]).into_owned(),
                );
            }
        }
    }
}
