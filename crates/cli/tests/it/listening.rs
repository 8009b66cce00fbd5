//! A `simrob` command that serves: its first line of standard output says where it listens.

use std::io::{BufRead, BufReader};
use std::process::{ChildStdout, Command, Stdio};

/// Starts `command` with its standard output piped and reads its first line, `listening on
/// SCHEME://ADDR`: returns the child, the rest of its output, and ADDR.
pub fn start(
    command: &mut Command,
    scheme: &str,
) -> (std::process::Child, BufReader<ChildStdout>, String) {
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn simrob");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("first line");
    let Some(addr) = line
        .trim()
        .strip_prefix(&format!("listening on {scheme}://"))
        .map(str::to_string)
    else {
        // Not left running (as fast as it can) after the test has failed.
        let _ = child.kill();
        let _ = child.wait();
        panic!("first line: {line:?}");
    };
    (child, out, addr)
}
