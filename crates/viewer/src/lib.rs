//! # simrob-viewer
//!
//! The web viewer: an HTTP server that serves one page (HTML and JavaScript ES modules
//! embedded in the binary: no external scripts, no CDN, no build step, works offline) and
//! streams the world to it over a WebSocket. It is not a renderer of its own: the browser
//! draws (WebGL, one instanced draw call per mesh).
//!
//! * **Frames** come from the simulation thread through a [`tokio::sync::watch`] channel: the
//!   simulation only replaces the latest frame; each browser connection sends the newest frame
//!   when it is ready for one, so a slow or stalled browser skips frames and never slows the
//!   simulation.
//!   Live, the frames are made from the session's own snapshot of each iteration (the one its
//!   broadcasts are cut from): [`observer`] only passes the shared `Arc` on; encoding it
//!   happens on the viewer's thread, at most [`FRAME_RATE`] times a second, and only while a
//!   page is connected.
//! * **The binary frame** ([`Frame::encode`]): a scene message (each body's entity, id,
//!   shape, dimensions, material; each entity's kind) sent to a page only when the scene
//!   changed since the last one that page got, then per frame a poses message of 32-bit
//!   floats (positions, quaternions, velocities) that the page reads as typed arrays.
//! * **Commands** from the page (Initialize, Play, Pause, Step, timestep, gravity, motors,
//!   real-time factor) enter the session as typed local commands ([`SessionBridge`]); the page
//!   lists every confirmation agents receive and the answers to its own commands.
//!
//! Protocol of the WebSocket: server → page, binary scene and poses messages (the frame's
//! meta inside them is `{"type":"frame",…}` JSON) and JSON text `{"type":"response","text":…}`,
//! `{"type":"hello","server":…,"mode":"live"|"replay"}` (first, on every connection; with
//! `"watch":REASON` when the page only watches, [`Backend::watch_only`]); page → server
//! `{"cmd":"initialize"|"play"|"pause"|"step"}`, `{"cmd":"timestep","value":0.01}`,
//! `{"cmd":"gravity","value":-9.8}`, `{"cmd":"rtf","value":1}`,
//! `{"cmd":"motors","entity":3,"values":[[0,3],[1,-3]]}`.
//!
//! Recordings: [`record`] writes every iteration of a server to a file and reads it back;
//! [`replay`] serves the viewer over one (hello `"mode":"replay"`; frames' meta carries
//! `"replay":{"count","index","playing","speed",…}`; the page sends `play`, `pause`,
//! `{"cmd":"seek","value":INDEX}` and `{"cmd":"speed","value":F}`).

#![warn(missing_docs)]

pub mod command;
mod frame;
pub mod guard;
pub mod player;
pub mod record;
pub mod replay;
pub mod view2d;

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::Router;
use simrob_protocol::{ControlRequest, EntityId, EntityRequest, MotorCommand, Request};
use simrob_session::{LocalCommand, Observation, Observer, Snapshot};
use tokio::sync::{broadcast, watch};

pub use command::CommandError;
pub use frame::{
    encode_captioned, quaternion, wire_meta, Encoded, EncodedScene, Frame, FrameBody, FrameEntity,
    FrameView, Publisher,
};
pub use guard::Guard;

/// The page.
pub const INDEX_HTML: &str = include_str!("../../../viewer/index.html");
/// Its scripts: ES modules, `main.js` first.
pub const MODULES: [(&str, &str); 10] = [
    ("main.js", include_str!("../../../viewer/main.js")),
    ("frame.js", include_str!("../../../viewer/frame.js")),
    ("maths.js", include_str!("../../../viewer/maths.js")),
    ("colours.js", include_str!("../../../viewer/colours.js")),
    ("gl.js", include_str!("../../../viewer/gl.js")),
    ("heading.js", include_str!("../../../viewer/heading.js")),
    ("top.js", include_str!("../../../viewer/top.js")),
    ("labels.js", include_str!("../../../viewer/labels.js")),
    ("pick.js", include_str!("../../../viewer/pick.js")),
    ("panel.js", include_str!("../../../viewer/panel.js")),
];

/// Where frames come from and commands go.
pub trait Backend: Send + Sync + 'static {
    /// Handles a command from the page; the error's text is shown on the page.
    fn command(&self, cmd: &serde_json::Value) -> Result<(), CommandError>;
    /// A page connected (after its hello was sent). A replay starts playing on the first.
    fn connected(&self) {}
    /// Why the page only watches, when it does (a world its own agents drive): the page then
    /// shows no live controls and says this instead.
    fn watch_only(&self) -> Option<&'static str> {
        None
    }
}

#[derive(Clone)]
struct AppState {
    frames: watch::Receiver<Arc<Encoded>>,
    page: PageShared,
}

/// What every page of a view (3D or 2D) shares: its hello, where its commands go, the
/// guard's limits and the texts for its response panel.
#[derive(Clone)]
pub(crate) struct PageShared {
    /// The hello message, JSON.
    pub(crate) hello: Arc<String>,
    pub(crate) backend: Arc<dyn Backend>,
    pub(crate) guard: Guard,
    pub(crate) responses: broadcast::Sender<String>,
    /// The pages open now (at most `guard.max_pages`).
    pub(crate) open: guard::OpenPages,
}

impl PageShared {
    /// `hello`: the first message of every connection (`{"type":"hello",…}`).
    pub(crate) fn new(
        hello: serde_json::Value,
        backend: Arc<dyn Backend>,
        guard: Guard,
        responses: &broadcast::Sender<String>,
    ) -> Self {
        PageShared {
            hello: Arc::new(hello.to_string()),
            backend,
            guard,
            responses: responses.clone(),
            open: guard::OpenPages::default(),
        }
    }
}

/// Most frames a second made from live snapshots.
pub const FRAME_RATE: u32 = 30;

/// A running viewer.
pub struct Viewer {
    addr: SocketAddr,
    frames: Publisher,
    snapshots: watch::Sender<Option<Arc<Snapshot>>>,
    responses: broadcast::Sender<String>,
    stop: Arc<AtomicBool>,
    /// Raised each time the viewer is ready for the next iteration's snapshot.
    wants: Arc<AtomicBool>,
}

impl Viewer {
    /// Serves the page on `bind` (port 0 picks a free one). `backend` handles the page's
    /// commands; `responses` (see [`responses_channel`]) carries texts for the response panel;
    /// `hello` describes the source and `mode` is `live` or `replay` (shown by the page).
    pub fn start(
        bind: SocketAddr,
        backend: Arc<dyn Backend>,
        responses: broadcast::Sender<String>,
        hello: &str,
        mode: &str,
    ) -> std::io::Result<Viewer> {
        Self::start_guarded(bind, backend, responses, hello, mode, Guard::default())
    }

    /// [`Viewer::start`] with other limits than the [`Guard`]'s defaults.
    pub fn start_guarded(
        bind: SocketAddr,
        backend: Arc<dyn Backend>,
        responses: broadcast::Sender<String>,
        hello: &str,
        mode: &str,
        guard: Guard,
    ) -> std::io::Result<Viewer> {
        let (frames_tx, frames_rx) = watch::channel(Arc::new(Encoded::default()));
        let (snapshots_tx, snapshots_rx) = watch::channel(None);
        let wants = Arc::new(AtomicBool::new(false));
        let publisher = frames_tx.clone();
        let mut hello = serde_json::json!({"type": "hello", "server": hello, "mode": mode});
        if let (Some(reason), Some(fields)) = (backend.watch_only(), hello.as_object_mut()) {
            fields.insert("watch".into(), reason.into());
        }
        let state = AppState {
            frames: frames_rx,
            page: PageShared::new(hello, backend, guard, &responses),
        };
        let app = Router::new()
            .route("/", get(index))
            .route("/{file}", get(module))
            .route("/ws", get(ws::<AppState>))
            .with_state(state);
        let (addr, stop) = serve_app(
            bind,
            guard,
            app,
            Some(Box::pin(make_frames(
                snapshots_rx,
                publisher,
                wants.clone(),
            ))),
        )?;
        Ok(Viewer {
            addr,
            frames: frames_tx,
            snapshots: snapshots_tx,
            responses,
            stop,
            wants,
        })
    }

    /// The flag the viewer raises when it is ready for the next iteration's snapshot (at
    /// most [`FRAME_RATE`] times a second, only while a page is connected): hand it to
    /// `UdpServer::add_sampled_observer` with [`observer`], and the steps in between cost the
    /// simulation no snapshot.
    pub fn frame_requests(&self) -> Arc<AtomicBool> {
        self.wants.clone()
    }

    /// The page's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the latest frame (cheap; never waits for browsers).
    pub fn publish(&self, frame: &Frame) {
        publish_into(&self.frames, frame);
    }

    /// A handle that publishes frames from another thread (with [`publish_into`]).
    pub fn publisher(&self) -> Publisher {
        self.frames.clone()
    }

    /// Shows a response in the pages' response panel.
    pub fn response(&self, text: &str) {
        let _ = self.responses.send(text.to_string());
    }

    /// The response panel's channel: a sender whose texts every page shows.
    pub fn responses(&self) -> broadcast::Sender<String> {
        self.responses.clone()
    }
}

impl Drop for Viewer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The channel of the response panel.
pub fn responses_channel() -> broadcast::Sender<String> {
    broadcast::channel(256).0
}

/// A task the HTTP server's runtime runs beside it.
pub(crate) type Background = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Serves `app` on `bind` (port 0 picks a free one; through a [`guard::GuardedListener`]) on
/// a thread of its own, with `background` beside it; returns the address bound and a flag
/// that ends the server when set.
pub(crate) fn serve_app(
    bind: SocketAddr,
    guard: Guard,
    app: Router,
    background: Option<Background>,
) -> std::io::Result<(SocketAddr, Arc<AtomicBool>)> {
    // The icon every browser asks for: none (204), rather than a 404 in its console.
    let app = app.route(
        "/favicon.ico",
        get(|| async { axum::http::StatusCode::NO_CONTENT }),
    );
    let listener = TcpListener::bind(bind)?;
    listener.set_nonblocking(true)?;
    let addr = listener.local_addr()?;
    let stop = Arc::new(AtomicBool::new(false));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let flag = stop.clone();
    std::thread::Builder::new()
        .name("viewer".into())
        .spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let Ok(listener) = guard::GuardedListener::new(listener, guard) else {
                    return;
                };
                if let Some(task) = background {
                    tokio::spawn(task);
                }
                let shutdown = async move {
                    while !flag.load(Ordering::Relaxed) {
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                };
                let app = app.layer(axum::middleware::map_response(guard::one_request));
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(shutdown)
                    .await;
            });
        })?;
    Ok((addr, stop))
}

/// Publishes a frame into `sender` (see [`Viewer::publish`]): encoded once for every page,
/// its scene shared with the previous frame's when it did not change.
pub fn publish_into(sender: &Publisher, frame: &Frame) {
    publish_with(sender, frame, None::<&()>);
}

/// [`publish_into`] with a caption the page shows over the view (a match's score and clock,
/// say; see [`encode_captioned`]).
pub fn publish_captioned(sender: &Publisher, frame: &Frame, caption: &str) {
    let previous = sender.borrow().clone();
    sender.send_replace(Arc::new(frame::encode_captioned(frame, &previous, caption)));
}

/// [`publish_into`] with `extra` in the frame's meta as `"replay"`.
pub(crate) fn publish_with<R: serde::Serialize>(
    sender: &Publisher,
    frame: &Frame,
    extra: Option<&R>,
) {
    let previous = sender.borrow().clone();
    sender.send_replace(Arc::new(frame.encode(&previous, extra)));
}

/// Turns the newest snapshot into the newest frame, at most [`FRAME_RATE`] times a second and
/// only while a page is connected (the watch's own receiver is the one always there). It never
/// waits on the snapshots while nobody watches: a waiting task is woken by every iteration's
/// snapshot, which costs the simulation's thread a wake-up per step.
async fn make_frames(
    mut snapshots: watch::Receiver<Option<Arc<Snapshot>>>,
    frames: Publisher,
    wants: Arc<AtomicBool>,
) {
    let period = Duration::from_secs(1) / FRAME_RATE;
    loop {
        if frames.receiver_count() <= 1 {
            // Nobody watching: look again a period later (the news stays marked).
            tokio::time::sleep(period).await;
            continue;
        }
        // Ready for the next iteration (a server with sampled observers builds its snapshot
        // only then).
        wants.store(true, Ordering::Relaxed);
        if snapshots.changed().await.is_err() {
            return;
        }
        let snapshot = snapshots.borrow_and_update().clone();
        if let Some(s) = snapshot {
            publish_into(&frames, &Frame::of(&s));
        }
        tokio::time::sleep(period).await;
    }
}

/// The observer that shows a server's session in `viewer` (add it with
/// `UdpServer::add_observer`): snapshots are handed over as they are (an `Arc`), responses
/// go to the response panel. Nothing is computed on the simulation's thread.
pub fn observer(viewer: &Viewer) -> Observer {
    let snapshots = viewer.snapshots.clone();
    let responses = viewer.responses.clone();
    Box::new(move |o: &Observation| match o {
        Observation::Iterated(s) | Observation::Changed(s) => {
            snapshots.send_replace(Some(s.clone()));
        }
        Observation::Response(text) => {
            let _ = responses.send(text.clone());
        }
    })
}

/// Set to a directory (the checkout's `viewer/`), the page's files are read from there at
/// each request instead of from the binary: edit, reload, no rebuild.
pub const PAGE_DIR_VAR: &str = "SIMROB_VIEWER_DIR";

/// The page file `name` (one of `index.html` and the [`MODULES`]), from [`PAGE_DIR_VAR`]'s
/// directory when it is set and holds it.
fn page_file(name: &str, embedded: &'static str) -> std::borrow::Cow<'static, str> {
    std::env::var_os(PAGE_DIR_VAR)
        .and_then(|dir| std::fs::read_to_string(std::path::Path::new(&dir).join(name)).ok())
        .map_or(
            std::borrow::Cow::Borrowed(embedded),
            std::borrow::Cow::Owned,
        )
}

async fn index() -> impl IntoResponse {
    Html(page_file("index.html", INDEX_HTML))
}

/// The module `file` among `modules` (name, embedded source) as JavaScript, read from
/// `folder` under [`PAGE_DIR_VAR`] when that is set; 404 when there is no such module.
fn serve_module(
    folder: &str,
    modules: &[(&str, &'static str)],
    file: &str,
) -> axum::response::Response {
    match modules.iter().find(|(name, _)| *name == file) {
        Some((name, source)) => (
            [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
            page_file(&format!("{folder}{name}"), source),
        )
            .into_response(),
        None => (axum::http::StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}

/// One of the page's [`MODULES`].
async fn module(
    axum::extract::Path(file): axum::extract::Path<String>,
) -> axum::response::Response {
    serve_module("", &MODULES, &file)
}

/// A view's state as its pages' WebSocket handler ([`ws`]) needs it: what its pages share,
/// and how it talks to a page once connected.
pub(crate) trait PageState: Clone + Send + Sync + 'static {
    /// What every page of the view shares.
    fn page(&self) -> &PageShared;

    /// Talks to one connected page until it leaves.
    fn serve(self, socket: WebSocket) -> impl std::future::Future<Output = ()> + Send + 'static;
}

impl PageState for AppState {
    fn page(&self) -> &PageShared {
        &self.page
    }

    fn serve(self, socket: WebSocket) -> impl std::future::Future<Output = ()> + Send + 'static {
        session(socket, self)
    }
}

/// A page's WebSocket request (3D or 2D): refused or upgraded by the [`guard`] under the
/// view's limits, then served by the view ([`PageState::serve`]).
pub(crate) async fn ws<S: PageState>(
    upgrade: WebSocketUpgrade,
    headers: axum::http::HeaderMap,
    State(state): State<S>,
) -> axum::response::Response {
    let limits = state.page().guard;
    let open = state.page().open.clone();
    guard::upgrade(upgrade, &headers, limits, &open, move |socket| {
        state.serve(socket)
    })
}

async fn session(mut socket: WebSocket, state: AppState) {
    let mut frames = state.frames.clone();
    let Some((mut link, mut responses)) = PageLink::open(&mut socket, &state.page).await else {
        return;
    };
    // The current frame at once, then each new one.
    frames.mark_changed();
    let mut scene_sent = 0;
    loop {
        tokio::select! {
            _ = link.tick() => if !link.ping(&mut socket).await { return },
            changed = frames.changed() => {
                if changed.is_err() {
                    return;
                }
                let frame = frames.borrow_and_update().clone();
                if frame.poses.is_empty() {
                    continue;
                }
                // The scene only when this page does not have it yet.
                if frame.scene.generation != scene_sent {
                    if !link.send(&mut socket, Message::Binary(frame.scene.bytes.clone())).await {
                        return;
                    }
                    scene_sent = frame.scene.generation;
                }
                if !link.send(&mut socket, Message::Binary(frame.poses.clone())).await {
                    return;
                }
            }
            r = responses.recv() => if !link.forward_response(&mut socket, r).await { return },
            incoming = socket.recv() => {
                if !link.command(&mut socket, incoming).await {
                    return;
                }
            }
        }
    }
}

/// What every page connection does beside sending frames: pings (a page silent, not even a
/// pong, for the guard's idle timeout is gone) and its commands within the guard's budget.
pub(crate) struct PageLink {
    guard: Guard,
    backend: Arc<dyn Backend>,
    budget: guard::CommandBudget,
    pings: tokio::time::Interval,
    last_heard: tokio::time::Instant,
}

impl PageLink {
    /// Opens a page's connection: the hello first, then the backend hears of the page (a
    /// replay starts playing on the first). Returns the link and the page's subscription to
    /// the response panel's texts (from before the hello); None: the page is already gone.
    pub(crate) async fn open(
        socket: &mut WebSocket,
        shared: &PageShared,
    ) -> Option<(Self, broadcast::Receiver<String>)> {
        let responses = shared.responses.subscribe();
        let hello = Message::Text(shared.hello.as_str().into());
        if !guard::send(socket, hello, shared.guard.idle_timeout).await {
            return None;
        }
        shared.backend.connected();
        let guard = shared.guard;
        // A ping every third of the idle timeout.
        let mut pings = tokio::time::interval(guard.idle_timeout / 3);
        pings.tick().await;
        let link = PageLink {
            guard,
            backend: shared.backend.clone(),
            budget: guard::CommandBudget::new(guard.commands_per_second, std::time::Instant::now()),
            pings,
            last_heard: tokio::time::Instant::now(),
        };
        Some((link, responses))
    }

    /// Completes when the next ping is due.
    pub(crate) async fn tick(&mut self) {
        self.pings.tick().await;
    }

    /// Pings the page, or closes it when it has been silent too long. False: it is gone.
    pub(crate) async fn ping(&mut self, socket: &mut WebSocket) -> bool {
        if self.last_heard.elapsed() >= self.guard.idle_timeout {
            let _ = self.send(socket, Message::Close(None)).await;
            return false;
        }
        self.send(socket, Message::Ping(Vec::new().into())).await
    }

    /// Sends `message` to the page within the guard's idle timeout (see [`guard::send`]).
    /// False: the page is gone or reads nothing.
    pub(crate) async fn send(&self, socket: &mut WebSocket, message: Message) -> bool {
        guard::send(socket, message, self.guard.idle_timeout).await
    }

    /// Sends a response (or how many were missed) to the page. False: the connection is over.
    pub(crate) async fn forward_response(
        &self,
        socket: &mut WebSocket,
        r: Result<String, broadcast::error::RecvError>,
    ) -> bool {
        let text = match r {
            Ok(t) => t,
            Err(broadcast::error::RecvError::Lagged(n)) => format!("({n} responses not shown)"),
            Err(broadcast::error::RecvError::Closed) => return false,
        };
        let msg = serde_json::json!({"type": "response", "text": text}).to_string();
        self.send(socket, Message::Text(msg.into())).await
    }

    /// Handles what the page sent: a command goes to the backend, its error back to the page.
    /// False: the connection is over (errors include a message over the size limit).
    pub(crate) async fn command(
        &mut self,
        socket: &mut WebSocket,
        incoming: Option<Result<Message, axum::Error>>,
    ) -> bool {
        self.command_with(socket, incoming, |_| None).await
    }

    /// [`PageLink::command`], with the commands `local` answers (`Some`) kept from the
    /// backend: what is the page's own (its view), charged to the same budget.
    pub(crate) async fn command_with(
        &mut self,
        socket: &mut WebSocket,
        incoming: Option<Result<Message, axum::Error>>,
        mut local: impl FnMut(&serde_json::Value) -> Option<Result<(), CommandError>>,
    ) -> bool {
        let msg = match incoming {
            Some(Ok(msg)) => msg,
            Some(Err(e)) => {
                // A message past the limit: the page is told why it is closed (close code
                // 1009, "message too big"), not cut off without a word.
                let text = e.to_string();
                let close = if text.contains("Control frame") {
                    // A ping, pong or close of more than 125 bytes breaks the WebSocket
                    // protocol whatever the limit (it is no message of the page's).
                    Some((
                        1002,
                        "a control frame (ping, pong or close) larger than the 125 bytes the WebSocket protocol allows".to_string(),
                    ))
                } else if text.contains("too long")
                    || text.contains("too big")
                    || text.contains("Space limit")
                {
                    Some((
                        1009,
                        format!(
                            "message larger than {} bytes (--viewer-max-message-bytes, key viewermaxmessagebytes)",
                            self.guard.max_message
                        ),
                    ))
                } else {
                    None
                };
                if let Some((code, reason)) = close {
                    let frame = axum::extract::ws::CloseFrame {
                        code,
                        reason: reason.into(),
                    };
                    let _ = self.send(socket, Message::Close(Some(frame))).await;
                }
                return false;
            }
            None => return false,
        };
        self.last_heard = tokio::time::Instant::now();
        let Message::Text(t) = msg else {
            return true;
        };
        let outcome = if self.budget.take(std::time::Instant::now()) {
            serde_json::from_str::<serde_json::Value>(t.as_str())
                .map_err(CommandError::from)
                .and_then(|cmd| match local(&cmd) {
                    Some(r) => r,
                    None => self.backend.command(&cmd),
                })
        } else {
            Err(CommandError::TooMany {
                per_second: self.guard.commands_per_second,
            })
        };
        match outcome {
            Ok(()) => true,
            Err(e) => {
                let msg = serde_json::json!({"type": "response", "text": format!("Error: {e}")});
                self.send(socket, Message::Text(msg.to_string().into()))
                    .await
            }
        }
    }
}

/// The page's commands as typed local commands into a running session (through
/// `UdpServer::commands`). Refusals come back as responses through the [`observer`].
pub struct SessionBridge {
    commands: Mutex<Sender<LocalCommand>>,
}

impl SessionBridge {
    /// A bridge sending into a session's local commands (`UdpServer::commands`).
    pub fn new(commands: Sender<LocalCommand>) -> Arc<SessionBridge> {
        Arc::new(SessionBridge {
            commands: Mutex::new(commands),
        })
    }

    fn send(&self, command: LocalCommand) -> Result<(), CommandError> {
        self.commands
            .lock()
            .map_err(|_| CommandError::Poisoned)?
            .send(command)
            .map_err(|_| CommandError::Stopped("the server"))
    }
}

impl Backend for SessionBridge {
    fn command(&self, cmd: &serde_json::Value) -> Result<(), CommandError> {
        use command::number;
        let name = command::name(cmd)?;
        let control = |request: ControlRequest| Request::Control {
            request,
            response: Some(true),
        };
        let request = match name {
            "initialize" => control(ControlRequest::InitializeSimulation),
            "play" => control(ControlRequest::SetStepMode(false)),
            "pause" => control(ControlRequest::SetStepMode(true)),
            "step" => control(ControlRequest::MakeStep),
            "timestep" => control(ControlRequest::SetTimestep(number(cmd, "value")?)),
            "gravity" => control(ControlRequest::SetWorldGravity(number(cmd, "value")?)),
            "rtf" => {
                let v = number(cmd, "value")?;
                if v < 0.0 {
                    return Err(CommandError::Usage(
                        "the real-time factor must not be negative",
                    ));
                }
                if v > 0.0 && v < command::MIN_REAL_TIME_FACTOR {
                    return Err(CommandError::Usage(
                        "the real-time factor is 0 (as fast as possible) or at least 0.000001",
                    ));
                }
                return self.send(LocalCommand::SetRealTimeFactor(v));
            }
            "motors" => {
                let entity = cmd
                    .get("entity")
                    .and_then(|e| e.as_u64())
                    .and_then(|e| u32::try_from(e).ok())
                    .ok_or(CommandError::Usage("motors needs \"entity\""))?;
                let values =
                    cmd.get("values")
                        .and_then(|v| v.as_array())
                        .ok_or(CommandError::Usage(
                            "motors needs \"values\": [[joint, rad/s], …]",
                        ))?;
                let mut motors = Vec::new();
                for pair in values {
                    let joint = pair
                        .get(0)
                        .and_then(|j| j.as_u64())
                        .and_then(|j| u32::try_from(j).ok());
                    let value = pair
                        .get(1)
                        .and_then(|v| v.as_f64())
                        .filter(|v| v.is_finite());
                    let (Some(wheel_joint_id), Some(value)) = (joint, value) else {
                        return Err(CommandError::Usage(
                            "each motor is [joint id, finite rad/s]",
                        ));
                    };
                    motors.push(MotorCommand {
                        wheel_joint_id,
                        value,
                    });
                }
                Request::Entity {
                    request: EntityRequest::RobotMotorControl {
                        entity_id: EntityId(entity),
                        motors,
                    },
                    response: Some(true),
                }
            }
            other => {
                return Err(CommandError::Unknown {
                    name: other.to_string(),
                    takes: "",
                })
            }
        };
        self.send(LocalCommand::Request(request))
    }
}
