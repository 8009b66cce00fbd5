//! What the soccer command-line tests share: a simrob process whose output is read line by
//! line.

// Each test binary uses its own part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

/// Longest wait for an expected line (a guard against a hang, not a timing window).
pub const GUARD: Duration = Duration::from_secs(120);

pub fn simrob() -> Command {
    Command::new(env!("CARGO_BIN_EXE_simrob"))
}

/// A running simrob process whose output lines arrive on a channel.
pub struct Proc {
    pub child: Child,
    lines: Receiver<String>,
    pub seen: Vec<String>,
}

impl Proc {
    /// Starts `cmd`, its standard output read (standard error as the test's).
    pub fn start(cmd: &mut Command) -> Proc {
        Self::start_reading(cmd, false)
    }

    /// Starts `cmd`, its standard output and standard error read (the lines of each in order,
    /// the two interleaved as they come): for a command that says where its page is on
    /// standard error.
    pub fn start_with_stderr(cmd: &mut Command) -> Proc {
        Self::start_reading(cmd, true)
    }

    fn start_reading(cmd: &mut Command, stderr: bool) -> Proc {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(if stderr {
                Stdio::piped()
            } else {
                Stdio::inherit()
            })
            .spawn()
            .expect("simrob runs");
        let (tx, lines) = channel();
        let mut streams: Vec<Box<dyn std::io::Read + Send>> =
            vec![Box::new(child.stdout.take().unwrap())];
        if let Some(e) = child.stderr.take() {
            streams.push(Box::new(e));
        }
        for stream in streams {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for l in BufReader::new(stream).lines().map_while(Result::ok) {
                    if tx.send(l).is_err() {
                        break;
                    }
                }
            });
        }
        Proc {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for a line containing `needle`, or finds it among the lines already read (the
    /// timeout only guards against a hang).
    pub fn wait_for(&mut self, needle: &str) -> String {
        if let Some(l) = self.seen.iter().find(|l| l.contains(needle)) {
            return l.clone();
        }
        let deadline = Instant::now() + GUARD;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    self.seen.push(l.clone());
                    if l.contains(needle) {
                        return l;
                    }
                }
                Err(_) => panic!(
                    "no line with {needle:?}; output so far:\n{}",
                    self.seen.join("\n")
                ),
            }
        }
    }

    /// Everything until the process exits.
    pub fn finish(mut self) -> Vec<String> {
        while let Ok(l) = self.lines.recv_timeout(GUARD) {
            self.seen.push(l);
        }
        let _ = self.child.wait();
        std::mem::take(&mut self.seen)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Proc {
    /// Takes the lines printed so far without waiting.
    pub fn drain(&mut self) {
        while let Ok(l) = self.lines.try_recv() {
            self.seen.push(l);
        }
    }
}
