//! The recorder: a session observer that hands every iteration to a writer thread of its
//! own (the shell's part of recording; the format is [`super::compact`]'s).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use simrob_session::{Observation, Observer, Snapshot};

use super::Writer;
use crate::{Frame, FrameView};

/// The recorder closes a block at least this often, so a follower sees recent frames.
pub const FLUSH_EVERY: Duration = Duration::from_millis(500);

/// Starts a recording at `path` (created, or truncated) and returns the observer that
/// records every iteration: add it with `UdpServer::add_observer`. The observer only hands
/// each iteration's snapshot (the session's shared `Arc`) to a writer thread of its own, so
/// the file work never runs on the simulation's thread; it never drops an iteration.
///
/// A frame is written only when the iteration number changed since the last one (the first
/// snapshot always writes). Blocks reach the file every [`BLOCK_FRAMES`](super::BLOCK_FRAMES) frames and at least
/// every [`FLUSH_EVERY`]; dropping the observer finishes the file (it waits for the writer).
/// A write error is logged once and ends the recording; the simulation goes on.
pub fn recorder(path: &Path, source: &str) -> std::io::Result<Observer> {
    let writer = Writer::create(path, source)?;
    let shown = path.display().to_string();
    let (tx, rx) = std::sync::mpsc::channel::<Arc<Snapshot>>();
    let thread = std::thread::Builder::new()
        .name("recorder".into())
        .spawn(move || write_snapshots(writer, rx, &shown))?;
    let mut feed = RecorderFeed {
        tx: Some(tx),
        thread: Some(thread),
    };
    Ok(Box::new(move |o: &Observation| {
        if let Observation::Iterated(s) | Observation::Changed(s) = o {
            feed.send(s.clone());
        }
    }))
}

/// The observer's end of the writer thread: closing it finishes the file.
struct RecorderFeed {
    tx: Option<std::sync::mpsc::Sender<Arc<Snapshot>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl RecorderFeed {
    fn send(&mut self, s: Arc<Snapshot>) {
        if let Some(tx) = &self.tx {
            if tx.send(s).is_err() {
                self.tx = None;
            }
        }
    }
}

impl Drop for RecorderFeed {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn write_snapshots(mut w: Writer<File>, rx: std::sync::mpsc::Receiver<Arc<Snapshot>>, shown: &str) {
    let mut last: Option<u64> = None;
    let mut flushed = Instant::now();
    while let Ok(s) = rx.recv() {
        if last == Some(s.iteration) {
            continue;
        }
        last = Some(s.iteration);
        let mut written = w.write_frame(&Frame::of(&s));
        if written.is_ok() && flushed.elapsed() >= FLUSH_EVERY {
            flushed = Instant::now();
            written = w.flush();
        }
        if let Err(e) = written {
            tracing::error!(
                "recording to {shown} stopped at iteration {}: {e}",
                s.iteration
            );
            return;
        }
    }
}
