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
        Page::open_with(url, profile, w, h, &[])
    }

    /// [`Page::open`] with more Chromium flags after the usual ones.
    pub fn open_with(url: &str, profile: &Path, w: u32, h: u32, flags: &[String]) -> Page {
        let _ = std::fs::remove_dir_all(profile);
        let mut c = Command::new(chromium());
        c.args(FLAGS)
            .args(flags)
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

    /// The browser's process id (its page, GPU and other processes are its descendants).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Evaluates `js` in the page and returns its value (JSON); fails on a script error.
    pub fn eval(&mut self, js: &str) -> serde_json::Value {
        self.try_eval(js).unwrap_or_else(|e| panic!("{js}: {e}"))
    }

    /// Evaluates `js` in the page: its value, or the script's error.
    pub fn try_eval(&mut self, js: &str) -> Result<serde_json::Value, String> {
        let result = self.call(
            "Runtime.evaluate",
            serde_json::json!({"expression": js, "returnByValue": true}),
        );
        if let Some(e) = result.get("exceptionDetails") {
            return Err(e.to_string());
        }
        Ok(result["result"]["value"].clone())
    }

    /// The page as it is on screen now, as PNG bytes.
    pub fn capture_png(&mut self) -> Vec<u8> {
        let result = self.call(
            "Page.captureScreenshot",
            serde_json::json!({"format": "png"}),
        );
        base64_decode(result["data"].as_str().expect("screenshot data"))
    }

    /// Writes the page as it is on screen now to `docs/img/NAME.png` when `SIMROB_UPDATE_DOCS`
    /// is set (`SIMROB_UPDATE_DOCS=1 cargo test -p simrob-viewer --test it` renews the guides'
    /// pictures, each the screenshot of a test that checked what it shows); otherwise nothing.
    pub fn docs_picture(&mut self, name: &str) {
        if std::env::var_os("SIMROB_UPDATE_DOCS").is_none() {
            return;
        }
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/img");
        std::fs::create_dir_all(&dir).expect("docs/img");
        let png = self.capture_png();
        std::fs::write(dir.join(format!("{name}.png")), png).expect("write the picture");
    }

    /// Calls a DevTools `method` and returns its result.
    fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.next += 1;
        let id = self.next;
        let msg = serde_json::json!({"id": id, "method": method, "params": params});
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
                return v["result"].clone();
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

/// Loads `url` in headless Chromium, waits until the page reports its newest frame drawn, and
/// returns the screenshot's pixels (RGBA, w × h). The
/// last screenshot of each name is also kept in the temporary directory as
/// `simrob-viewer-NAME`, for a person to look at.
pub fn screenshot(url: &str, out: &Path, w: u32, h: u32) -> image::RgbaImage {
    let profile = out.with_extension("profile");
    // A blank page first, its viewport set to exactly w × h, then the page itself.
    let mut page = Page::open("about:blank", &profile, w, h);
    page.call(
        "Emulation.setDeviceMetricsOverride",
        serde_json::json!({"width": w, "height": h, "deviceScaleFactor": 1, "mobile": false}),
    );
    page.call("Page.navigate", serde_json::json!({"url": url}));
    // The page says when the newest frame it received is on screen (the 3D view: `current`;
    // the 2D view: a frame drawn): wait for that, never for a span of time.
    page.wait_for(
        "(window.simrob !== undefined && simrob.drawn > 0 && simrob.current) || \
         (window.__simrob2d !== undefined && __simrob2d.frame !== null && __simrob2d.drawnFrame >= 0)",
        "[window.simrob && simrob.drawn, window.__simrob2d && __simrob2d.draws]",
    );
    let png = page.capture_png();
    drop(page);
    std::fs::write(out, &png).expect("write the screenshot");
    if let Some(name) = out.file_name() {
        let _ = std::fs::copy(
            out,
            std::env::temp_dir().join(format!("simrob-viewer-{}", name.to_string_lossy())),
        );
    }
    image::load_from_memory(&png)
        .expect("screenshot")
        .to_rgba8()
}

/// Standard base64 (RFC 4648, with padding), as the DevTools protocol sends binary data.
fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| -> u32 {
        match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {c}"),
        }
    };
    let bytes: Vec<u8> = text.bytes().filter(|&c| c != b'=').collect();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &c)| n | (value(c) << (18 - 6 * i)));
        let produced = chunk.len() - 1;
        out.extend_from_slice(&n.to_be_bytes()[1..=produced]);
    }
    out
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

/// Processor time a browser has used, in clock ticks (`/proc`, 100 a second): every process
/// of it, its GPU process (compositing) and each page process (`--type=renderer`) with its
/// main thread (the page's script, layout and a CPU canvas's drawing).
#[derive(Clone, Debug, Default)]
pub struct BrowserCpu {
    pub total: u64,
    pub gpu: u64,
    /// Process id, the process's ticks, its main thread's ticks.
    pub renderers: Vec<(u32, u64, u64)>,
}

impl BrowserCpu {
    /// The ticks since `before` of the whole browser, its GPU process, and of the page
    /// process whose main thread worked most in between (the page being drawn; others are
    /// the browser's own pages) and of that main thread.
    pub fn since(&self, before: &BrowserCpu) -> (u64, u64, u64, u64) {
        let (renderer, page) = self
            .renderers
            .iter()
            .map(|(pid, process, main)| {
                let old = before.renderers.iter().find(|r| r.0 == *pid);
                let (p0, m0) = old.map_or((0, 0), |r| (r.1, r.2));
                (process.saturating_sub(p0), main.saturating_sub(m0))
            })
            .max_by_key(|r| r.1)
            .unwrap_or_default();
        (
            self.total.saturating_sub(before.total),
            self.gpu.saturating_sub(before.gpu),
            renderer,
            page,
        )
    }
}

/// Clock ticks a second in `/proc` (`sysconf(_SC_CLK_TCK)`, 100 on Linux).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// A `/proc/…/stat` line's parent id and processor time (user + system, ticks).
fn stat_times(stat: &str) -> Option<(u32, u64)> {
    // After the command name in parentheses: state, ppid, …, utime (14th), stime (15th).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let number = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    Some((number(1)? as u32, number(11)? + number(12)?))
}

impl Page {
    /// The processor time the browser has used so far (Linux only: zeros elsewhere).
    pub fn cpu(&self) -> BrowserCpu {
        browser_cpu(self.child.id())
    }
}

/// The processor time used so far by the browser whose first process is `root` (Linux only:
/// zeros elsewhere).
pub fn browser_cpu(root: u32) -> BrowserCpu {
    let mut procs = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if let Some((ppid, ticks)) = stat_times(&stat) {
            procs.push((pid, ppid, ticks));
        }
    }
    let mut tree = vec![root];
    let mut grew = true;
    while grew {
        grew = false;
        for (pid, ppid, _) in &procs {
            if tree.contains(ppid) && !tree.contains(pid) {
                tree.push(*pid);
                grew = true;
            }
        }
    }
    let mut cpu = BrowserCpu::default();
    for (pid, _, ticks) in procs.iter().filter(|p| tree.contains(&p.0)) {
        cpu.total += ticks;
        // Chromium rewrites its processes' command lines into one string.
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let has = |flag: &[u8]| cmdline.windows(flag.len()).any(|w| w == flag);
        if has(b"--type=gpu-process") {
            cpu.gpu += ticks;
        } else if has(b"--type=renderer") {
            // The main thread's id is the process's.
            let main = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/stat"))
                .ok()
                .and_then(|s| stat_times(&s))
                .map_or(0, |t| t.1);
            cpu.renderers.push((*pid, *ticks, main));
        }
    }
    cpu
}
