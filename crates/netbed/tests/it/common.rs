//! A SimRob server on a loopback port, in a thread, with a scenario and local commands
//! applied before it serves.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use simrob_protocol::{decode_datagram, CommandKeys};
use simrob_server::files::DirStore;
use simrob_server::udp::UdpServer;
use simrob_session::{ServerConfig, Session};

pub struct TestServer {
    pub addr: SocketAddr,
    save_dir: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

pub fn repo_file(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

impl TestServer {
    /// A server with `scenario` (under scenarios/) and then `commands` (SimRob XML) applied.
    pub fn start(
        tag: &str,
        scenarios: &[&str],
        commands: &str,
        tweak: impl FnOnce(&mut ServerConfig),
    ) -> Self {
        let save_dir =
            std::env::temp_dir().join(format!("simrob-netbed-{tag}-{}", std::process::id()));
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

/// Local commands that put the server in synchronous mode and start it.
pub const SYNC_AND_START: &str = "<Message><Simulation_Message><Control_Request Command=\"Set_Sync_Mode\"><Sync_Mode>true</Sync_Mode></Control_Request><Control_Request Command=\"Initialize_Simulation\"/></Simulation_Message></Message>";

/// Local commands that start the server.
pub const START: &str = "<Message><Simulation_Message><Control_Request Command=\"Initialize_Simulation\"/></Simulation_Message></Message>";
