//! What the coordination tests share: `simrob` processes whose output lines they wait on.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

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
