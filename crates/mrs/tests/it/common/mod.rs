//! A raw line-protocol connection for the end-to-end tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use simrob_mrs::flat::{FlatPose, Map};
use simrob_mrs::{MrsConfig, MrsCore, MrsHandle, MrsServer, NoFiles, ShellHook, ShellOptions};

pub struct Conn {
    pub reader: BufReader<TcpStream>,
    pub writer: TcpStream,
}

impl Conn {
    /// Connects; replies are awaited for at most 20 s (a failure guard).
    pub fn open(addr: SocketAddr) -> Conn {
        let s = TcpStream::connect(addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        Conn {
            writer: s.try_clone().expect("clone"),
            reader: BufReader::new(s),
        }
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.writer.write_all(bytes).expect("write");
    }

    /// One reply line, without its terminator.
    pub fn read(&mut self) -> String {
        let mut l = String::new();
        self.reader.read_line(&mut l).expect("reply");
        assert!(l.ends_with('\n'), "reply not a full line: {l:?}");
        l.trim_end_matches('\n').to_string()
    }

    pub fn ask(&mut self, line: &str) -> String {
        self.send_raw(format!("{line}\n").as_bytes());
        self.read()
    }
}

/// A hook for `MrsServer::with_hook` that sends the number of robots in the world each time it
/// changes, and the receiver: a test waits for that event instead of for time to pass.
pub fn robot_count_hook() -> (ShellHook, mpsc::Receiver<usize>) {
    let (tx, rx) = mpsc::channel();
    let mut last = None;
    let hook: ShellHook = Box::new(move |core, _| {
        let robots = core.world().robot_count();
        if last != Some(robots) {
            last = Some(robots);
            let _ = tx.send(robots);
        }
    });
    (hook, rx)
}

/// Waits until the server reports `n` robots (60 s at most, a failure guard).
pub fn wait_for_robots(counts: &mpsc::Receiver<usize>, n: usize) {
    while counts
        .recv_timeout(Duration::from_secs(60))
        .expect("the server never reported that many robots")
        != n
    {}
}

/// A stepped server (no map directory) with its one start `start`, and the robot count it
/// reports as it changes (see [`robot_count_hook`]).
pub fn serve_counting_robots(map: Map, start: FlatPose) -> (MrsHandle, mpsc::Receiver<usize>) {
    let core = MrsCore::new(
        map,
        MrsConfig {
            start: Some(start),
            stepped: true,
            ..MrsConfig::default()
        },
    );
    let (hook, counts) = robot_count_hook();
    let handle = MrsServer::bind(
        "127.0.0.1:0",
        core,
        Box::new(NoFiles),
        ShellOptions::default(),
    )
    .expect("bind")
    .with_hook(hook)
    .spawn()
    .expect("spawn");
    (handle, counts)
}
