//! The live 2D view: a page of its own (`viewer/2d/`, a Canvas 2D renderer, ES modules with
//! JSDoc types, no build step, embedded in the binary) for the worlds that are flat — the
//! Mobile Robot Simulator ([`mrs`]), swarm runs ([`swarm`]) and the coordination map.
//!
//! What it is: an HTTP server (the 3D viewer's [`Guard`] and [`Backend`]) whose WebSocket
//! sends a [`Scene2d`] — the static map, once and again only when it changes — and then
//! [`Frame2d`]s: poses and states in a compact binary form, the newest only (a slow page
//! skips frames, the simulation never waits for it). What it is not: a simulator. Shells own
//! the world and hand the view what they read from it; page commands come back through the
//! [`Backend`] and the shell applies them between its own steps.
//!
//! # The WebSocket
//!
//! Server → page: text `{"type":"hello","server":…,"mode":"live"|"replay","world":"mrs"|"swarm"|…}`,
//! text `{"type":"scene",…Scene2d}`, text `{"type":"response","text":…}` and binary frames:
//!
//! ```text
//! "S2D1"                         4 bytes, the format
//! u32 header length L            then L bytes of JSON (Frame2d without its bodies),
//!                                zero-padded to a multiple of 4
//! u32 n                          bodies
//! f32 × 5n                       x, y, theta, half width, half height (per body)
//! u32 × n                        entity ids
//! u8 × n, u8 × n, u8 × n         kind (index into the scene's kinds), state (index into
//!                                the scene's states), flags (bit 0: a disc)
//! ```
//!
//! All numbers little-endian; map units, y down, a heading θ points along (cos θ, sin θ) in
//! map coordinates (so a positive turn is clockwise on the screen).
//!
//! A page is sent the bodies in its view rectangle only, and when more than
//! [`Guard::max_view_bodies`] are in it, a density picture (`"S2G1"`) instead: see
//! [`density`].
//!
//! Page → server: `{"cmd":"view",…}` (what the page shows: [`density::PageView`]) and JSON
//! commands for the [`Backend`] (`{"cmd":…}`; see [`mrs`] and [`swarm`]).

pub mod density;
pub mod mrs;
pub mod replay;
pub mod swarm;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use axum::extract::ws::{Message, WebSocket};
use axum::extract::Path;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::Router;
use serde::Serialize;
use tokio::sync::{broadcast, watch};

use crate::guard::Guard;
use crate::{Backend, CommandError};

/// The 2D page.
pub const INDEX_HTML: &str = include_str!("../../../../viewer/2d/index.html");
/// Its modules, by file name.
pub const MODULES: [(&str, &str); 3] = [
    ("main.js", include_str!("../../../../viewer/2d/main.js")),
    ("frame.js", include_str!("../../../../viewer/2d/frame.js")),
    ("draw.js", include_str!("../../../../viewer/2d/draw.js")),
];

/// Most frames a second a live 2D view publishes.
pub const FRAME_RATE: u32 = 30;

/// The magic that starts every binary frame.
pub const MAGIC: &[u8; 4] = b"S2D1";

/// How an entity state is drawn: its name (what frames index), what the legend says, and
/// the colour (CSS) and mark the page uses.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StateStyle {
    /// The state's name, as shells and [`Scene2d::state`] look it up (`moving`, `blocked`, …).
    pub name: String,
    /// What the page's legend says for it.
    pub legend: String,
    /// The CSS colour bodies in this state are drawn with (`#1f77b4`).
    pub color: String,
    /// `fill` (a filled body), `ring` (an outline), `cross` (a grey body crossed out),
    /// `dot` (small, for carried items).
    pub mark: String,
}

impl StateStyle {
    /// A state's style from its name, legend text, CSS colour and mark (see the fields).
    pub fn new(name: &str, legend: &str, color: &str, mark: &str) -> Self {
        StateStyle {
            name: name.into(),
            legend: legend.into(),
            color: color.into(),
            mark: mark.into(),
        }
    }
}

/// A named place of the map: a room or another labelled shape (`w`, `h` zero for a point).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Label2d {
    /// The text shown, centred on the shape.
    pub text: String,
    /// Left edge of the shape, map units.
    pub x: f64,
    /// Top edge of the shape, map units (y down).
    pub y: f64,
    /// Width of the shape, map units.
    pub w: f64,
    /// Height of the shape, map units.
    pub h: f64,
}

/// A point of interest.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Poi2d {
    /// Its name, shown next to its mark.
    pub name: String,
    /// Map units.
    pub x: f64,
    /// Map units, y down.
    pub y: f64,
}

/// An obstacle bitmap: `width` × `height` pixels of `cell` map units each; `runs` are the
/// lengths of alternate free and obstacle runs in row-major order, starting with free.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bitmap2d {
    /// Pixels per row.
    pub width: u32,
    /// Rows.
    pub height: u32,
    /// The side of one pixel, map units.
    pub cell: f64,
    /// Alternate free and obstacle run lengths, pixels, row-major, free first.
    pub runs: Vec<u32>,
}

impl Bitmap2d {
    /// Run-length codes `width × height` pixels given by `obstacle(x, y)`.
    pub fn from_fn(
        width: u32,
        height: u32,
        cell: f64,
        obstacle: impl Fn(u32, u32) -> bool,
    ) -> Self {
        let mut runs = Vec::new();
        let mut current = false;
        let mut run = 0u32;
        for y in 0..height {
            for x in 0..width {
                if obstacle(x, y) != current {
                    runs.push(run);
                    run = 0;
                    current = !current;
                }
                run += 1;
            }
        }
        runs.push(run);
        Bitmap2d {
            width,
            height,
            cell,
            runs,
        }
    }
}

/// The static part of a 2D world, sent once (and again when it changes).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Scene2d {
    /// `mrs`, `swarm` or `coord`.
    pub world: String,
    /// What it shows (the scenario's name, the map's size).
    pub title: String,
    /// The map unit (`in`, `unit`).
    pub units: String,
    /// Width of the map, map units.
    pub width: f64,
    /// Height of the map, map units.
    pub height: f64,
    /// Obstacle rectangles `[x1, y1, x2, y2]` (left, top, right, bottom).
    pub rects: Vec<[f64; 4]>,
    /// The obstacle bitmap, when the map has one.
    pub bitmap: Option<Bitmap2d>,
    /// Rooms and other named shapes.
    pub labels: Vec<Label2d>,
    /// Points of interest.
    pub pois: Vec<Poi2d>,
    /// Map-path edges `[x1, y1, x2, y2]`.
    pub paths: Vec<[f64; 4]>,
    /// Entity kinds (robot, drone, item, …): what frames' kind bytes index.
    pub kinds: Vec<String>,
    /// Entity states: what frames' state bytes index; the page's legend.
    pub states: Vec<StateStyle>,
    /// Changes whenever the scene does; frames name the version they go with.
    pub version: u64,
}

impl Scene2d {
    /// The index of state `name` (0 when unknown).
    pub fn state(&self, name: &str) -> u8 {
        self.states
            .iter()
            .position(|s| s.name == name)
            .and_then(|i| u8::try_from(i).ok())
            .unwrap_or(0)
    }
}

/// One body of a frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Body2d {
    /// The entity's id (the robot's, the item's).
    pub id: u32,
    /// Centre, map units.
    pub x: f64,
    /// Centre, map units, y down.
    pub y: f64,
    /// Heading, radians: the body points along (cos θ, sin θ) in map coordinates.
    pub theta: f64,
    /// Half width and half height, map units (a disc's radius twice).
    pub half: [f64; 2],
    /// Index into the scene's [`Scene2d::kinds`].
    pub kind: u8,
    /// Index into the scene's [`Scene2d::states`].
    pub state: u8,
    /// Drawn as a disc of radius `half[0]` rather than a rectangle.
    pub disc: bool,
}

/// An MRS robot's sensors as drawn: sonar rays from the rim to what they hit (or their
/// range), closed bumpers as points on the rim, the last `M` message.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Sensors2d {
    /// The robot's id.
    pub id: u32,
    /// `[x1, y1, x2, y2]` per sonar, sonar 0 first.
    pub rays: Vec<[f64; 4]>,
    /// The sonar readings (inches, as the robot reads them).
    pub sonar: Vec<f64>,
    /// Closed bumpers: index and point.
    pub bumpers: Vec<(u32, f64, f64)>,
    /// The robot's last `M` message, printable (empty when it sent none).
    pub message: String,
    /// Forward speed, inches per second along the heading.
    pub speed: f64,
    /// Turn rate, degrees per second, positive clockwise.
    pub turn: f64,
}

/// A robot's planned route: the points still ahead of it.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Route2d {
    /// The robot's id.
    pub id: u32,
    /// The points `[x, y]` still to reach, map units, the next one first.
    pub points: Vec<[f64; 2]>,
}

/// A task on the coordination map.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Task2d {
    /// The task's number.
    pub id: u64,
    /// What the task asks, with its state's detail when it has one.
    pub what: String,
    /// The Control Center's name for where it is: `waiting`, `auction`, `sent`, `queued`,
    /// `running`, `ended`, `blocked`, `aborted` or `failed`.
    pub state: String,
    /// The robot it is given to, if any.
    pub robot: Option<u32>,
    /// Its target, map units (none for a task without a place).
    pub x: Option<f64>,
    /// Its target, map units, y down (none for a task without a place).
    pub y: Option<f64>,
}

/// Where the run is: `running`, `paused`, `waiting` (for a page), `ended`; a replay is
/// `waiting`, `playing`, `paused` or `ended`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Status2d {
    /// `running`, `paused`, `waiting`, `ended` (live) or `waiting`, `playing`, `paused`,
    /// `ended` (replay).
    pub state: String,
    /// Simulated seconds per wall second (0 = as fast as possible).
    pub speed: f64,
    /// Whether the page may pause, step and change the speed.
    pub controls: bool,
}

/// One frame: time, status, bodies and what goes with them.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Frame2d {
    /// The scene version this frame goes with.
    pub scene: u64,
    /// The frame's number: the world's step count (MRS, swarm) or the frames made so far
    /// (the coordination map); the recorded one in a replay.
    pub frame: u64,
    /// Simulated time, seconds.
    pub time: f64,
    /// Where the run is.
    pub status: Status2d,
    /// The bodies, sent in the frame's binary part (not in its JSON header).
    #[serde(skip)]
    pub bodies: Vec<Body2d>,
    /// Entity names (items, named robots) by id, for labels.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<(u32, String)>,
    /// The Mobile Robot Simulator's robots' sensors.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sensors: Vec<Sensors2d>,
    /// `[item, carrier]`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub carried: Vec<[u32; 2]>,
    /// Robots' planned routes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<Route2d>,
    /// The coordination map's tasks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<Task2d>,
    /// Short figures shown in the status panel (`["arrived", "12"]`, …).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<(String, String)>,
    /// Where a replay is (replays only; see [`replay`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay2d>,
}

/// Where a replay is: the frame shown among the recording's frames, and the simulated
/// times of the first and last (the page's time slider).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Replay2d {
    /// Frames in the recording (so far, while it is followed).
    pub count: usize,
    /// The frame shown, 0-based.
    pub index: usize,
    /// Simulated time of the first frame, s.
    pub start: f64,
    /// Simulated time of the last frame, s.
    pub end: f64,
    /// More frames may come (a recording still being written).
    pub following: bool,
}

impl Frame2d {
    /// The binary form (see the module docs).
    pub fn encode(&self) -> Vec<u8> {
        let header = serde_json::to_vec(self).unwrap_or_else(|_| b"{}".to_vec());
        let n = self.bodies.len();
        let mut out = Vec::with_capacity(16 + header.len() + density::BODY_BYTES * n);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        while out.len() % 4 != 0 {
            out.push(0);
        }
        out.extend_from_slice(&(n as u32).to_le_bytes());
        for b in &self.bodies {
            for v in [b.x, b.y, b.theta, b.half[0], b.half[1]] {
                out.extend_from_slice(&(v as f32).to_le_bytes());
            }
        }
        for b in &self.bodies {
            out.extend_from_slice(&b.id.to_le_bytes());
        }
        out.extend(self.bodies.iter().map(|b| b.kind));
        out.extend(self.bodies.iter().map(|b| b.state));
        out.extend(self.bodies.iter().map(|b| u8::from(b.disc)));
        out
    }
}

/// A page command's name (`"cmd"`) and its `"value"` when that is a number.
fn command_parts(cmd: &serde_json::Value) -> Result<(&str, Option<f64>), CommandError> {
    let name = crate::command::name(cmd)?;
    Ok((name, cmd.get("value").and_then(|v| v.as_f64())))
}

/// The default address of `--gui` (the 2D view's page).
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

/// A `--gui` address that is neither `HOST:PORT` nor a port.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0:?}: expected HOST:PORT (e.g. 127.0.0.1:8080) or a port")]
pub struct AddrError(pub String);

/// Reads a `--gui` address: `HOST:PORT`, or a port alone (on 127.0.0.1; 0 = any free port).
pub fn parse_addr(s: &str) -> Result<SocketAddr, AddrError> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse::<SocketAddr>()
        .map_err(|_| AddrError(s.to_string()))
}

/// A running 2D view.
pub struct View2d {
    addr: SocketAddr,
    scene: watch::Sender<Arc<String>>,
    frames: watch::Sender<Option<Arc<Frame2d>>>,
    responses: broadcast::Sender<String>,
    pages: Arc<Pages>,
    stop: Arc<AtomicBool>,
    last_publish: Mutex<Option<Instant>>,
    sent: Arc<SentStats>,
    guard: Guard,
}

/// What the view has sent its pages: frames and bytes, and the largest frame.
#[derive(Debug, Default)]
pub struct SentStats {
    frames: std::sync::atomic::AtomicU64,
    bytes: std::sync::atomic::AtomicU64,
    largest: std::sync::atomic::AtomicU64,
    grids: std::sync::atomic::AtomicU64,
}

impl SentStats {
    fn add(&self, bytes: &[u8]) {
        let n = bytes.len() as u64;
        self.frames.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(n, Ordering::Relaxed);
        self.largest.fetch_max(n, Ordering::Relaxed);
        if bytes.starts_with(density::GRID_MAGIC) {
            self.grids.fetch_add(1, Ordering::Relaxed);
        }
    }
    /// Frames sent, all pages together.
    pub fn frames(&self) -> u64 {
        self.frames.load(Ordering::Relaxed)
    }
    /// Of them, density pictures.
    pub fn grids(&self) -> u64 {
        self.grids.load(Ordering::Relaxed)
    }
    /// Bytes of frames sent.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
    /// The largest frame sent, bytes.
    pub fn largest(&self) -> u64 {
        self.largest.load(Ordering::Relaxed)
    }
}

#[derive(Clone)]
struct AppState {
    scene: watch::Receiver<Arc<String>>,
    frames: watch::Receiver<Option<Arc<Frame2d>>>,
    sent: Arc<SentStats>,
    pages: Arc<Pages>,
    page: crate::PageShared,
}

impl View2d {
    /// Serves the 2D page on `bind` (port 0 picks a free one). `world` names what it shows
    /// (`mrs`, `swarm`, `coord`), `hello` describes the source.
    pub fn start(
        bind: SocketAddr,
        backend: Arc<dyn Backend>,
        world: &str,
        hello: &str,
        guard: Guard,
    ) -> std::io::Result<View2d> {
        View2d::serve(bind, backend, world, hello, "live", guard)
    }

    /// [`View2d::start`] for a page that says it shows `mode`: `live` or `replay`.
    fn serve(
        bind: SocketAddr,
        backend: Arc<dyn Backend>,
        world: &str,
        hello: &str,
        mode: &str,
        guard: Guard,
    ) -> std::io::Result<View2d> {
        let (scene_tx, scene_rx) = watch::channel(Arc::new(String::new()));
        let (frames_tx, frames_rx) = watch::channel(None);
        let pages = Arc::new(Pages::default());
        let responses = crate::responses_channel();
        let sent = Arc::new(SentStats::default());
        let state = AppState {
            scene: scene_rx,
            frames: frames_rx,
            sent: sent.clone(),
            pages: pages.clone(),
            page: crate::PageShared::new(
                serde_json::json!({"type": "hello", "server": hello, "mode": mode, "world": world}),
                backend,
                guard,
                &responses,
            ),
        };
        let app = Router::new()
            .route("/", get(index))
            .route("/2d/{file}", get(module))
            .route("/ws", get(crate::ws::<AppState>))
            .with_state(state);
        let (addr, stop) = crate::serve_app(bind, guard, app, None)?;
        Ok(View2d {
            addr,
            scene: scene_tx,
            frames: frames_tx,
            responses,
            pages,
            stop,
            last_publish: Mutex::new(None),
            sent,
            guard,
        })
    }

    /// The limits the view was started within.
    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    /// What has been sent to pages so far.
    pub fn sent(&self) -> Arc<SentStats> {
        self.sent.clone()
    }

    /// The page's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Pages connected now.
    pub fn pages(&self) -> usize {
        self.pages.count()
    }

    /// Waits until a page is connected, or `stop` is set (checked every 100 ms). Returns
    /// whether a page is there.
    pub fn wait_for_page(&self, stop: &AtomicBool) -> bool {
        let Ok(mut n) = self.pages.count.lock() else {
            return false;
        };
        while *n == 0 {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            n = match self
                .pages
                .changed
                .wait_timeout(n, Duration::from_millis(100))
            {
                Ok((n, _)) => n,
                Err(_) => return false,
            };
        }
        true
    }

    /// Replaces the scene (pages get it at once).
    pub fn set_scene(&self, scene: &Scene2d) {
        let mut v = serde_json::to_value(scene).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("type".into(), "scene".into());
        }
        self.scene.send_replace(Arc::new(v.to_string()));
    }

    /// Replaces the newest frame (a copy; never waits for pages). Each page is sent what
    /// is in its view ([`density`]), encoded on the view's thread.
    pub fn publish(&self, frame: &Frame2d) {
        self.publish_owned(frame.clone());
    }

    /// [`View2d::publish`] without the copy.
    pub fn publish_owned(&self, frame: Frame2d) {
        self.frames.send_replace(Some(Arc::new(frame)));
    }

    /// Whether a frame is due now: a page is connected and the last frame is at least
    /// 1/[`FRAME_RATE`] s old. Shells ask before building a frame, so an unwatched run
    /// builds none.
    pub fn due(&self) -> bool {
        if self.pages() == 0 {
            return false;
        }
        let now = Instant::now();
        let Ok(mut last) = self.last_publish.lock() else {
            return true;
        };
        match *last {
            Some(t) if now.duration_since(t) < Duration::from_secs(1) / FRAME_RATE => false,
            _ => {
                *last = Some(now);
                true
            }
        }
    }

    /// Shows a text in the pages' response panel.
    pub fn response(&self, text: &str) {
        let _ = self.responses.send(text.to_string());
    }
}

impl Drop for View2d {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The page's files, from `$SIMROB_VIEWER_DIR/2d/` when that is set (see
/// [`crate::PAGE_DIR_VAR`]: edit, reload, no rebuild).
async fn index() -> impl IntoResponse {
    Html(crate::page_file("2d/index.html", INDEX_HTML))
}

async fn module(Path(file): Path<String>) -> axum::response::Response {
    crate::serve_module("2d/", &MODULES, &file)
}

impl crate::PageState for AppState {
    fn page(&self) -> &crate::PageShared {
        &self.page
    }

    fn serve(self, socket: WebSocket) -> impl std::future::Future<Output = ()> + Send + 'static {
        page(socket, self)
    }
}

/// The pages connected now, and a condition to wait for one.
#[derive(Default)]
struct Pages {
    count: Mutex<usize>,
    changed: Condvar,
}

impl Pages {
    fn add(&self, delta: isize) {
        if let Ok(mut n) = self.count.lock() {
            *n = n.saturating_add_signed(delta);
        }
        self.changed.notify_all();
    }

    fn count(&self) -> usize {
        self.count.lock().map_or(0, |n| *n)
    }
}

/// Counts a page while it is connected.
struct PageCount(Arc<Pages>);

impl PageCount {
    fn new(pages: Arc<Pages>) -> Self {
        pages.add(1);
        PageCount(pages)
    }
}

impl Drop for PageCount {
    fn drop(&mut self) {
        self.0.add(-1);
    }
}

async fn page(mut socket: WebSocket, state: AppState) {
    let mut scene = state.scene.clone();
    let mut frames = state.frames.clone();
    // Counted from before its hello: whoever waits for a page finds it connecting.
    let _count = PageCount::new(state.pages.clone());
    let Some((mut link, mut responses)) = crate::PageLink::open(&mut socket, &state.page).await
    else {
        return;
    };
    scene.mark_changed();
    frames.mark_changed();
    let guard = state.page.guard;
    let mut view: Option<density::PageView> = None;
    loop {
        tokio::select! {
            _ = link.tick() => if !link.ping(&mut socket).await { return },
            changed = scene.changed() => {
                if changed.is_err() {
                    return;
                }
                let text = scene.borrow_and_update().clone();
                if !text.is_empty() && !link.send(&mut socket, Message::Text(text.as_str().into())).await {
                    return;
                }
            }
            changed = frames.changed() => {
                if changed.is_err() {
                    return;
                }
                let frame = frames.borrow_and_update().clone();
                if let Some(frame) = frame {
                    let bytes = density::encode_for(&frame, view.as_ref(), &guard);
                    state.sent.add(&bytes);
                    if !link.send(&mut socket, Message::Binary(bytes.into())).await {
                        return;
                    }
                }
            }
            r = responses.recv() => {
                if !link.forward_response(&mut socket, r).await {
                    return;
                }
            }
            incoming = socket.recv() => {
                let mut changed_view = false;
                let ok = link.command_with(&mut socket, incoming, |cmd| {
                    (cmd.get("cmd").and_then(|c| c.as_str()) == Some("view")).then(|| {
                        view = Some(density::PageView::parse(cmd)?);
                        changed_view = true;
                        Ok(())
                    })
                }).await;
                if !ok {
                    return;
                }
                if changed_view {
                    // The page sees its new view at once, even while the run is paused.
                    frames.mark_changed();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bitmap_is_run_length_coded_row_by_row_starting_free() {
        let on = |x: u32, y: u32| (x == 1 && y == 0) || y == 2;
        let b = Bitmap2d::from_fn(3, 3, 1.0, on);
        assert_eq!(b.runs, vec![1, 1, 4, 3]);
        assert_eq!(b.runs.iter().sum::<u32>(), 9);
    }

    #[test]
    fn a_frame_is_encoded_as_its_header_then_aligned_typed_arrays() {
        let f = Frame2d {
            scene: 3,
            frame: 7,
            time: 0.5,
            bodies: vec![
                Body2d {
                    id: 9,
                    x: 1.0,
                    y: 2.0,
                    theta: 0.5,
                    half: [3.0, 4.0],
                    kind: 1,
                    state: 2,
                    disc: true,
                },
                Body2d {
                    id: 10,
                    ..Body2d::default()
                },
            ],
            ..Frame2d::default()
        };
        let b = f.encode();
        assert_eq!(&b[..4], MAGIC);
        let len = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
        let header: serde_json::Value = serde_json::from_slice(&b[8..8 + len]).unwrap();
        assert_eq!(header["frame"], 7);
        assert_eq!(header["scene"], 3);
        let mut off = 8 + len;
        off += (4 - off % 4) % 4;
        let word = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let float = |o: usize| f32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        assert_eq!(word(off), 2);
        let pose = off + 4;
        assert_eq!(
            (0..5).map(|k| float(pose + 4 * k)).collect::<Vec<_>>(),
            vec![1.0, 2.0, 0.5, 3.0, 4.0]
        );
        let ids = pose + 40;
        assert_eq!((word(ids), word(ids + 4)), (9, 10));
        let bytes = ids + 8;
        assert_eq!(&b[bytes..], &[1, 0, 2, 0, 1, 0]);
    }

    #[test]
    fn gui_addresses_are_host_port_or_a_port() {
        assert_eq!(parse_addr("0").unwrap().to_string(), "127.0.0.1:0");
        assert_eq!(
            parse_addr("0.0.0.0:9000").unwrap().to_string(),
            "0.0.0.0:9000"
        );
        assert!(parse_addr("localhost:x").is_err());
    }
}
