//! A real SimRob server on a loopback UDP port, in a thread, for end-to-end tests.
#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use simrob_protocol::{decode_datagram, decode_server_message, CommandKeys, ServerMessage};
use simrob_server::files::DirStore;
use simrob_server::udp::UdpServer;
use simrob_session::{ServerConfig, Session};

pub struct TestServer {
    pub addr: SocketAddr,
    pub save_dir: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

pub fn repo_file(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

pub fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(repo_file(&format!(
        "crates/protocol/tests/fixtures/seed000/{name}"
    )))
    .expect("fixture")
}

impl TestServer {
    /// A server with `scenario` files (under scenarios/) applied, configured by `tweak`.
    pub fn start(tag: &str, scenarios: &[&str], tweak: impl FnOnce(&mut ServerConfig)) -> Self {
        Self::start_with(tag, scenarios, "", tweak)
    }

    /// Like [`TestServer::start`], then `commands` (SimRob XML, if not empty) applied too.
    pub fn start_with(
        tag: &str,
        scenarios: &[&str],
        commands: &str,
        tweak: impl FnOnce(&mut ServerConfig),
    ) -> Self {
        let save_dir =
            std::env::temp_dir().join(format!("simrob-e2e-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&save_dir);
        let mut config = ServerConfig {
            receiver_port: 0,
            save_directory: save_dir.clone(),
            ..ServerConfig::default()
        };
        tweak(&mut config);
        let store = DirStore::new(&save_dir).expect("save dir");
        let mut server = UdpServer::bind(Session::new(config), Box::new(store)).expect("bind");
        let mut inputs: Vec<Vec<u8>> = scenarios
            .iter()
            .map(|s| std::fs::read(repo_file(&format!("scenarios/{s}"))).expect("scenario"))
            .collect();
        if !commands.is_empty() {
            inputs.push(commands.as_bytes().to_vec());
        }
        for bytes in &inputs {
            let requests: Vec<_> = decode_datagram(bytes, &CommandKeys::default())
                .into_iter()
                .map(|r| r.expect("decodes"))
                .collect();
            server.apply_local(&requests).expect("applies");
        }
        let addr = server.local_addr().expect("addr");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            server.run(&flag).expect("server loop");
        });
        TestServer {
            addr,
            save_dir,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.save_dir);
    }
}

/// A raw UDP peer that sends bytes as they are and reads what comes back.
pub struct Peer {
    pub socket: UdpSocket,
    pub server: SocketAddr,
}

impl Peer {
    pub fn new(server: SocketAddr) -> Peer {
        let socket = UdpSocket::bind("127.0.0.1:0").expect("bind peer");
        Peer { socket, server }
    }

    pub fn port(&self) -> u16 {
        self.socket.local_addr().expect("addr").port()
    }

    pub fn send(&self, bytes: &[u8]) {
        self.socket.send_to(bytes, self.server).expect("send");
    }

    pub fn send_str(&self, xml: &str) {
        self.send(xml.as_bytes())
    }

    /// Next datagram within `timeout`, decoded.
    pub fn recv(&self, timeout: Duration) -> Option<ServerMessage> {
        let mut buf = vec![0u8; 70000];
        self.socket
            .set_read_timeout(Some(timeout))
            .expect("timeout");
        match self.socket.recv_from(&mut buf) {
            Ok((n, _)) => Some(decode_server_message(&buf[..n]).expect("server sends valid XML")),
            Err(_) => None,
        }
    }

    /// The next text response (skipping broadcasts).
    pub fn response(&self) -> String {
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if let Some(ServerMessage::Response(simrob_protocol::Response::Text(t))) =
                self.recv(Duration::from_millis(500))
            {
                return t;
            }
        }
        panic!("no response within 3 s");
    }

    /// Registers as `key` with the given sync flag and broadcast interval.
    pub fn register(&self, key: &str, sync: bool, broadcast: f64) -> String {
        self.send_str(&register_xml(
            key,
            "RobotController",
            "127.0.0.1",
            self.port(),
            sync,
            broadcast,
        ));
        self.response()
    }

    /// Everything received until `quiet` passes with nothing.
    pub fn drain(&self, quiet: Duration) -> Vec<ServerMessage> {
        let mut out = Vec::new();
        while let Some(m) = self.recv(quiet) {
            out.push(m);
        }
        out
    }
}

pub fn register_xml(
    key: &str,
    agent_type: &str,
    ip: &str,
    port: u16,
    sync: bool,
    broadcast: f64,
) -> String {
    format!(
        "<Message><Agent_Message Command=\"Register_Agent\" Agent_Type=\"{agent_type}\"><Port>{port}</Port><IP>{ip}</IP><Sync>{sync}</Sync><Broadcast>{broadcast}</Broadcast><Key>{key}</Key></Agent_Message></Message>"
    )
}

pub fn control(body: &str) -> String {
    format!("<Message><Simulation_Message>{body}</Simulation_Message></Message>")
}
