//! What the coordination tests share: `simrob` processes whose output lines they wait on.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use simrob_coord::wire::{encode, Envelope, FrameDecoder, Msg, OperatorCommand};

/// The longest a test waits for an awaited line before failing.
pub const GUARD: Duration = Duration::from_secs(180);

/// A `simrob` process and the lines it prints.
pub struct Proc {
    pub child: Child,
    stdin: Option<ChildStdin>,
    pub lines: Receiver<String>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Starts `simrob ARGS` in the repository's root; with `typed`, its standard input is a
/// pipe for [`Proc::type_line`].
pub fn start(args: &[&str], typed: bool) -> Proc {
    let mut child = Command::new(env!("CARGO_BIN_EXE_simrob"))
        .args(args)
        .current_dir(root())
        .stdin(if typed { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("simrob starts");
    let out = child.stdout.take().expect("stdout");
    let stdin = child.stdin.take();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    Proc {
        child,
        stdin,
        lines: rx,
    }
}

impl Proc {
    /// Waits for a line containing `needle`; returns it.
    pub fn wait_line(&self, needle: &str) -> String {
        loop {
            match self.lines.recv_timeout(GUARD) {
                Ok(l) if l.contains(needle) => return l,
                Ok(_) => {}
                Err(e) => panic!("no line with {needle:?}: {e}"),
            }
        }
    }

    /// What follows `prefix` on the first line that has it (an address, say).
    pub fn after(&self, prefix: &str) -> String {
        let l = self.wait_line(prefix);
        l.split(prefix)
            .nth(1)
            .expect("text after the prefix")
            .trim()
            .to_string()
    }

    /// Types a line at the process's standard input.
    pub fn type_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("started with a typed input");
        writeln!(stdin, "{line}").expect("a line typed");
        stdin.flush().expect("flush");
    }
}

pub fn address(p: &Proc, scheme: &str) -> String {
    p.after(&format!("listening on {scheme}://"))
}

/// Every message the Control Center sends on `stream`, decoded on a thread of their own
/// (the channel closes with the connection).
pub fn incoming(stream: &TcpStream) -> Receiver<Msg> {
    let mut reader = stream.try_clone().expect("clone");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut dec = FrameDecoder::default();
        let mut buf = [0u8; 8192];
        loop {
            let n = match std::io::Read::read(&mut reader, &mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            dec.push(&buf[..n]);
            while let Some(m) = dec.next_message() {
                let env = m.expect("the Control Center speaks the wire format");
                if tx.send(env.msg).is_err() {
                    return;
                }
            }
        }
    });
    rx
}

/// The operator's connection to the Control Center.
pub struct Operator {
    stream: TcpStream,
    reports: Receiver<Msg>,
}

impl Operator {
    pub fn connect(addr: &str) -> Operator {
        let stream = TcpStream::connect(addr).expect("operator connects");
        let reports = incoming(&stream);
        Operator { stream, reports }
    }

    /// An operator connected to the Control Center at `addr` that has asked to follow it
    /// (and been told it does).
    pub fn following(addr: &str) -> Operator {
        let mut op = Operator::connect(addr);
        op.send(OperatorCommand::Follow);
        op.wait(|r| r.starts_with("following"));
        op
    }

    pub fn send(&mut self, command: OperatorCommand) {
        let env = Envelope {
            from: 0,
            to: Some(0),
            msg: Msg::Operator {
                command: Box::new(command),
            },
        };
        self.stream
            .write_all(encode(&env).as_bytes())
            .expect("send");
    }

    pub fn wait(&self, pred: impl Fn(&str) -> bool) -> String {
        loop {
            let report = self.reports.recv_timeout(GUARD).map(|m| match m {
                Msg::Report { text } => text,
                Msg::Refused { reason } => format!("refused: {reason}"),
                other => format!("{other:?}"),
            });
            match report {
                Ok(r) if pred(&r) => return r,
                Ok(_) => {}
                Err(e) => panic!("the awaited report never came: {e}"),
            }
        }
    }

    /// The robots table, once it lists every robot in `ids` with a position.
    pub fn robots(&mut self, ids: &[u32]) -> Vec<(u32, f64, f64)> {
        loop {
            self.send(OperatorCommand::Robots);
            let table = self.wait(|r| r.starts_with("id\tname"));
            let rows: Vec<(u32, f64, f64)> = table
                .lines()
                .skip(1)
                .filter_map(|l| {
                    let f: Vec<&str> = l.split('\t').collect();
                    Some((f[0].parse().ok()?, f[4].parse().ok()?, f[5].parse().ok()?))
                })
                .collect();
            if ids.iter().all(|id| rows.iter().any(|r| r.0 == *id)) {
                return rows;
            }
            // Not everyone has joined and reported yet: wait for the next status.
            self.wait(|r| r.starts_with("status.log"));
        }
    }
}

pub fn pos(rows: &[(u32, f64, f64)], id: u32) -> (f64, f64) {
    rows.iter()
        .find(|r| r.0 == id)
        .map(|r| (r.1, r.2))
        .expect("listed")
}
