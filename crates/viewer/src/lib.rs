//! # simrob-viewer
//!
//! The web viewer: an HTTP server that serves one page (HTML and JavaScript embedded in the
//! binary: no external scripts, no CDN, no build step, works offline) and streams the world
//! to it over a WebSocket.
//!
//! * **Frames** come from the simulation thread through a [`tokio::sync::watch`] channel: the
//!   simulation only replaces the latest frame; each browser connection sends the newest frame
//!   when it is ready for one, so a slow or stalled browser skips frames and never slows the
//!   simulation.
//! * **Commands** from the page (Initialize, Play, Pause, Step, timestep, gravity, motors) go to
//!   the SimRob server as ordinary SimRob XML over UDP from a registered `GUI` agent (key
//!   `viewer`), so the viewer appears to `Info_Request` and sees every confirmation and its
//!   own errors, which the page lists. The real-time factor, which has no SimRob command, goes
//!   to the server loop directly.
//!
//! Protocol of the WebSocket (JSON text messages): server → page `{"type":"frame", …Frame}`,
//! `{"type":"response","text":…}`, `{"type":"hello","server":…}`; page → server
//! `{"cmd":"initialize"|"play"|"pause"|"step"}`, `{"cmd":"timestep","value":0.01}`,
//! `{"cmd":"gravity","value":-9.8}`, `{"cmd":"rtf","value":1}`,
//! `{"cmd":"motors","entity":3,"values":[[0,3],[1,-3]]}`.
//!
//! Recordings: [`record`] writes every iteration of a server to a file and reads it back;
//! [`replay`] serves the viewer over one (hello `"mode":"replay"`; frames carry
//! `"replay":{"count","index","playing","speed"}`; the page sends `play`, `pause`,
//! `{"cmd":"seek","value":INDEX}` and `{"cmd":"speed","value":F}`).

mod frame;
pub mod record;
pub mod replay;

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::header;
use axum::response::{Html, IntoResponse};
use axum::routing::get;
use axum::Router;
use simrob_protocol::{
    decode_server_message, encode_request, AgentRequest, AgentType, CommandKeys, ControlRequest,
    EntityRequest, MotorCommand, Request, Response, ServerMessage,
};
use simrob_server::simrob::{LoopControl, Observer, SimServer};
use tokio::sync::{broadcast, watch};

pub use frame::{Frame, FrameBody, FrameEntity};

/// The page.
pub const INDEX_HTML: &str = include_str!("../../../viewer/index.html");
/// Its script.
pub const APP_JS: &str = include_str!("../../../viewer/app.js");

/// Where frames come from and commands go.
pub trait Backend: Send + Sync + 'static {
    /// Handles a command from the page; returns an error text to show.
    fn command(&self, cmd: &serde_json::Value) -> Result<(), String>;
}

#[derive(Clone)]
struct AppState {
    frames: watch::Receiver<Arc<String>>,
    responses: broadcast::Sender<String>,
    backend: Arc<dyn Backend>,
    hello: Arc<String>,
}

/// A running viewer.
pub struct Viewer {
    addr: SocketAddr,
    frames: watch::Sender<Arc<String>>,
    responses: broadcast::Sender<String>,
    stop: Arc<AtomicBool>,
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
        let listener = TcpListener::bind(bind)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let (frames_tx, frames_rx) = watch::channel(Arc::new(String::new()));
        let state = AppState {
            frames: frames_rx,
            responses: responses.clone(),
            backend,
            hello: Arc::new(
                serde_json::json!({"type": "hello", "server": hello, "mode": mode}).to_string(),
            ),
        };
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
                    let app = Router::new()
                        .route("/", get(index))
                        .route("/app.js", get(app_js))
                        .route("/ws", get(ws))
                        .with_state(state);
                    let shutdown = async move {
                        while !flag.load(Ordering::Relaxed) {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    };
                    let _ = axum::serve(listener, app)
                        .with_graceful_shutdown(shutdown)
                        .await;
                });
            })?;
        Ok(Viewer {
            addr,
            frames: frames_tx,
            responses,
            stop,
        })
    }

    /// The page's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Replaces the latest frame (cheap; never waits for browsers).
    pub fn publish(&self, frame: &Frame) {
        let mut text = String::from("{\"type\":\"frame\",");
        if let Ok(json) = serde_json::to_string(frame) {
            text.push_str(&json[1..]);
            self.frames.send_replace(Arc::new(text));
        }
    }

    /// A handle that publishes frames from another thread.
    pub fn publisher(&self) -> watch::Sender<Arc<String>> {
        self.frames.clone()
    }

    /// Shows a response in the pages' response panel.
    pub fn response(&self, text: &str) {
        let _ = self.responses.send(text.to_string());
    }

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

/// Publishes a frame into `sender` (see [`Viewer::publish`]).
pub fn publish_into(sender: &watch::Sender<Arc<String>>, frame: &Frame) {
    if let Ok(json) = serde_json::to_string(frame) {
        let mut text = String::with_capacity(json.len() + 16);
        text.push_str("{\"type\":\"frame\",");
        text.push_str(&json[1..]);
        sender.send_replace(Arc::new(text));
    }
}

/// An observer for [`simrob_server::simrob::UdpServer::add_observer`] that publishes the
/// server's world to the viewer. The frame is built on the simulation thread (a snapshot) and
/// serialised there too; at 30 frames a second this is a small share of a step's time.
pub fn observer(sender: watch::Sender<Arc<String>>) -> Observer {
    Box::new(move |server: &SimServer| {
        // Nobody watching: skip the work.
        if sender.receiver_count() > 1 {
            publish_into(&sender, &Frame::of(server));
        }
    })
}

async fn index() -> impl IntoResponse {
    Html(INDEX_HTML)
}

async fn app_js() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        APP_JS,
    )
}

async fn ws(upgrade: WebSocketUpgrade, State(state): State<AppState>) -> impl IntoResponse {
    upgrade.on_upgrade(move |socket| session(socket, state))
}

async fn session(mut socket: WebSocket, state: AppState) {
    let mut frames = state.frames.clone();
    let mut responses = state.responses.subscribe();
    if socket
        .send(Message::Text(state.hello.as_str().into()))
        .await
        .is_err()
    {
        return;
    }
    // The current frame at once, then each new one.
    frames.mark_changed();
    loop {
        tokio::select! {
            changed = frames.changed() => {
                if changed.is_err() {
                    return;
                }
                let text = frames.borrow_and_update().clone();
                if text.is_empty() {
                    continue;
                }
                if socket.send(Message::Text(text.as_str().into())).await.is_err() {
                    return;
                }
            }
            r = responses.recv() => {
                let text = match r {
                    Ok(t) => t,
                    Err(broadcast::error::RecvError::Lagged(n)) => format!("({n} responses not shown)"),
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                let msg = serde_json::json!({"type": "response", "text": text}).to_string();
                if socket.send(Message::Text(msg.into())).await.is_err() {
                    return;
                }
            }
            incoming = socket.recv() => {
                let Some(Ok(msg)) = incoming else { return };
                if let Message::Text(t) = msg {
                    let outcome = serde_json::from_str::<serde_json::Value>(t.as_str())
                        .map_err(|e| format!("bad command: {e}"))
                        .and_then(|cmd| state.backend.command(&cmd));
                    if let Err(e) = outcome {
                        let msg = serde_json::json!({"type": "response", "text": format!("Error: {e}")}).to_string();
                        if socket.send(Message::Text(msg.into())).await.is_err() {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// The page's commands sent to a SimRob server as a registered GUI agent over UDP.
pub struct SimRobBridge {
    socket: UdpSocket,
    server: SocketAddr,
    keys: CommandKeys,
    control: Mutex<Option<std::sync::mpsc::Sender<LoopControl>>>,
    stop: Arc<AtomicBool>,
}

impl SimRobBridge {
    /// Registers `key` as a `GUI` agent (Broadcast −1: frames come in-process) at `server` and
    /// forwards every response it receives to `responses`.
    pub fn connect(
        server: SocketAddr,
        key: &str,
        responses: broadcast::Sender<String>,
        control: Option<std::sync::mpsc::Sender<LoopControl>>,
    ) -> std::io::Result<Arc<SimRobBridge>> {
        let socket = UdpSocket::bind(SocketAddr::new(server.ip(), 0))?;
        let me = socket.local_addr()?;
        let register = Request::Agent(AgentRequest::RegisterAgent {
            agent_type: AgentType::Gui,
            port: me.port(),
            ip: me.ip().to_string(),
            sync: false,
            broadcast: -1.0,
            key: key.to_string(),
        });
        let keys = CommandKeys::default();
        socket.send_to(encode_request(&register, &keys).as_bytes(), server)?;
        socket.set_read_timeout(Some(Duration::from_millis(200)))?;
        let stop = Arc::new(AtomicBool::new(false));
        let reader = socket.try_clone()?;
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("viewer-agent".into())
            .spawn(move || {
                let mut buf = vec![0u8; 65536];
                while !flag.load(Ordering::Relaxed) {
                    if let Ok((n, _)) = reader.recv_from(&mut buf) {
                        if let Ok(ServerMessage::Response(r)) = decode_server_message(&buf[..n]) {
                            let text = match r {
                                Response::Text(t) => t,
                                Response::AgentInformation { key, port, ip } => {
                                    format!("Agent {key}: {ip}:{port}")
                                }
                            };
                            let _ = responses.send(text);
                        }
                    }
                }
            })?;
        Ok(Arc::new(SimRobBridge {
            socket,
            server,
            keys,
            control: Mutex::new(control),
            stop,
        }))
    }

    fn send(&self, request: Request) -> Result<(), String> {
        self.socket
            .send_to(encode_request(&request, &self.keys).as_bytes(), self.server)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

impl Drop for SimRobBridge {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn number(cmd: &serde_json::Value, name: &str) -> Result<f64, String> {
    cmd.get(name)
        .and_then(|v| v.as_f64())
        .filter(|v| v.is_finite())
        .ok_or_else(|| format!("{name} must be a finite number"))
}

impl Backend for SimRobBridge {
    fn command(&self, cmd: &serde_json::Value) -> Result<(), String> {
        let name = cmd
            .get("cmd")
            .and_then(|c| c.as_str())
            .ok_or("a command needs \"cmd\"")?;
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
                    return Err("the real-time factor must not be negative".into());
                }
                let guard = self.control.lock().map_err(|_| "viewer state poisoned")?;
                return match guard.as_ref() {
                    Some(tx) => tx
                        .send(LoopControl::RealTimeFactor(v))
                        .map_err(|_| "the server loop has stopped".to_string()),
                    None => {
                        Err("this server's real-time factor cannot be changed from here".into())
                    }
                };
            }
            "motors" => {
                let entity = cmd
                    .get("entity")
                    .and_then(|e| e.as_u64())
                    .and_then(|e| u32::try_from(e).ok())
                    .ok_or("motors needs \"entity\"")?;
                let values = cmd
                    .get("values")
                    .and_then(|v| v.as_array())
                    .ok_or("motors needs \"values\": [[joint, rad/s], …]")?;
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
                        return Err("each motor is [joint id, finite rad/s]".into());
                    };
                    motors.push(MotorCommand {
                        wheel_joint_id,
                        value,
                    });
                }
                Request::Entity {
                    request: EntityRequest::RobotMotorControl {
                        entity_id: entity,
                        motors,
                    },
                    response: Some(true),
                }
            }
            other => return Err(format!("unknown command {other:?}")),
        };
        self.send(request)
    }
}
