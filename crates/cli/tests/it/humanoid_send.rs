//! `simrob send humanoid` and `simrob send action` against a real server on the KidSize field.

use std::net::SocketAddr;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use simrob_protocol::{decode_datagram, CommandKeys};
use simrob_server::files::DirStore;
use simrob_server::udp::UdpServer;
use simrob_session::{ServerConfig, Session};

struct Server {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    dir: std::path::PathBuf,
}

impl Server {
    fn kidsize() -> Server {
        let dir = std::env::temp_dir().join(format!("simrob-humanoid-send-{}", std::process::id()));
        let config = ServerConfig {
            receiver_port: 0,
            save_directory: dir.clone(),
            ..ServerConfig::default()
        };
        let store = DirStore::new(&dir).expect("save dir");
        let mut server = UdpServer::bind(Session::new(config), Box::new(store)).expect("bind");
        let scene = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/soccer/kidsize.xml"
        ))
        .expect("scenario");
        let requests: Vec<_> = decode_datagram(&scene, &CommandKeys::default())
            .into_iter()
            .map(|r| r.expect("decodes"))
            .collect();
        server.apply_local(&requests).expect("applies");
        let addr = server.local_addr().expect("address");
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || server.run(&flag).expect("server loop"));
        Server {
            addr,
            stop,
            thread: Some(thread),
            dir,
        }
    }

    fn send(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_simrob"))
            .args([
                "send",
                "--server",
                &self.addr.to_string(),
                "--timeout",
                "10",
            ])
            .args(args)
            .output()
            .expect("simrob runs")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn create_a_humanoid_and_drive_it() {
    let server = Server::kidsize();
    let o = server.send(&[
        "humanoid", "--entity", "21", "--team", "cyan", "--", "-0.3", "0.04", "0",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert_eq!(out.trim(), "Create_Entity: Created Humanoid entity 21");

    let o = server.send(&["action", "--entity", "21", "walk", "distance=14"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert_eq!(
        out.trim(),
        "Humanoid_Action: robot 21: walk distance=14 is action 1"
    );

    let o = server.send(&["action", "--entity", "21", "turnHeadVertically", "angle=10"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains("angle = 10 is out of range [-60, 0] degrees"),
        "{err}"
    );

    let o = server.send(&[
        "humanoid", "--entity", "22", "--team", "green", "--", "1", "1",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("Team must be cyan or magenta"), "{err}");

    // A malformed parameter is refused before anything is sent.
    let o = server.send(&["action", "--entity", "21", "walk", "30"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("PARAM=VALUE"), "{err}");
}
