//! The GRI over TCP: a reader thread per connection turns lines into envelopes; on a server,
//! a writer thread per connection sends what the main loop queued for it.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;

use anyhow::Context;

use simrob_coord::wire::{encode, CodecError, Envelope, FrameDecoder, DEFAULT_MAX_MESSAGE_BYTES};

/// What the threads around a main loop saw.
pub enum Incoming {
    /// A message on connection `usize`.
    Message(usize, Envelope),
    /// A bad line on a connection (it stays open).
    Bad(usize, CodecError),
    /// The connection closed.
    Closed(usize),
    /// A new connection.
    Accepted(TcpStream),
    /// A line typed at the terminal.
    Line(String),
    /// The terminal closed.
    EndOfInput,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// What one connection's reader has handed to the main loop and not yet been taken: at most
/// `max` lines (messages and bad lines) at a time. A reader with `max` waiting stops reading
/// until the main loop takes one, so a connection that sends faster than it is served is
/// slowed by TCP, and the others are served in turn.
pub struct Inflow {
    state: Mutex<InflowState>,
    wake: Condvar,
    max: usize,
    start: Instant,
}

struct InflowState {
    waiting: usize,
    /// Seconds since `start` when bytes last came.
    heard: f64,
    closed: bool,
}

impl Inflow {
    /// At most `max` (at least 1) lines waiting; times in seconds since `start`.
    pub fn new(max: usize, start: Instant) -> Arc<Inflow> {
        Arc::new(Inflow {
            state: Mutex::new(InflowState {
                waiting: 0,
                heard: start.elapsed().as_secs_f64(),
                closed: false,
            }),
            wake: Condvar::new(),
            max: max.max(1),
            start,
        })
    }

    /// The main loop took one line.
    pub fn taken(&self) {
        let mut s = lock(&self.state);
        s.waiting = s.waiting.saturating_sub(1);
        self.wake.notify_all();
    }

    /// Seconds since the start when bytes last came on the connection.
    pub fn heard(&self) -> f64 {
        lock(&self.state).heard
    }

    /// Nothing more is wanted from the connection: its reader stops.
    pub fn close(&self) {
        lock(&self.state).closed = true;
        self.wake.notify_all();
    }

    fn hear(&self) {
        lock(&self.state).heard = self.start.elapsed().as_secs_f64();
    }

    /// Waits for room for one more line; false once closed.
    fn admit(&self) -> bool {
        let mut s = lock(&self.state);
        while s.waiting >= self.max && !s.closed {
            s = self.wake.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.closed {
            return false;
        }
        s.waiting += 1;
        true
    }
}

/// Reads `stream` until it closes, sending what arrives to `tx` tagged with `conn`.
pub fn spawn_reader(
    conn: usize,
    stream: TcpStream,
    limit: usize,
    tx: Sender<Incoming>,
) -> std::io::Result<()> {
    read_on_thread(conn, stream, limit, None, tx)
}

/// As [`spawn_reader`], with at most `inflow`'s limit of lines handed over and not yet
/// taken ([`Inflow::taken`]); the time of each read is kept in `inflow`.
pub fn spawn_bounded_reader(
    conn: usize,
    stream: TcpStream,
    limit: usize,
    inflow: Arc<Inflow>,
    tx: Sender<Incoming>,
) -> std::io::Result<()> {
    read_on_thread(conn, stream, limit, Some(inflow), tx)
}

fn read_on_thread(
    conn: usize,
    mut stream: TcpStream,
    limit: usize,
    inflow: Option<Arc<Inflow>>,
    tx: Sender<Incoming>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name(format!("gri-read-{conn}"))
        .spawn(move || {
            let mut dec = FrameDecoder::new(limit);
            let mut buf = [0u8; 16 * 1024];
            loop {
                let n = match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                if let Some(f) = &inflow {
                    f.hear();
                }
                dec.push(&buf[..n]);
                while let Some(m) = dec.next_message() {
                    let item = match m {
                        Ok(env) => Incoming::Message(conn, env),
                        Err(e) => Incoming::Bad(conn, e),
                    };
                    if inflow.as_ref().is_some_and(|f| !f.admit()) {
                        let _ = tx.send(Incoming::Closed(conn));
                        return;
                    }
                    if tx.send(item).is_err() {
                        return;
                    }
                }
            }
            if let Err(e) = dec.finish() {
                if inflow.as_ref().is_none_or(|f| f.admit()) {
                    let _ = tx.send(Incoming::Bad(conn, e));
                }
            }
            let _ = tx.send(Incoming::Closed(conn));
        })?;
    Ok(())
}

/// What the main loop queued for one connection and its writer thread has not yet sent: the
/// main loop never waits for a peer.
pub struct Outflow {
    state: Mutex<OutflowState>,
    wake: Condvar,
}

struct OutflowState {
    queued: Vec<u8>,
    /// Bytes the writer took and is writing.
    writing: usize,
    /// Write what is queued without waiting, then shut the connection.
    finish: bool,
}

/// Bytes not yet sent when a line was queued past the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow(pub usize);

impl Outflow {
    /// Queues `bytes`, unless more than `limit` bytes would then wait (a line to a
    /// connection with nothing waiting is always queued): then the bytes that would wait.
    pub fn send(&self, bytes: &[u8], limit: usize) -> Result<(), Overflow> {
        let mut s = lock(&self.state);
        if s.finish {
            return Ok(());
        }
        let waiting = s.queued.len() + s.writing;
        if waiting > 0 && waiting + bytes.len() > limit {
            return Err(Overflow(waiting + bytes.len()));
        }
        s.queued.extend_from_slice(bytes);
        self.wake.notify_all();
        Ok(())
    }

    /// Sends what is queued as far as the peer takes it at once, then shuts the connection.
    pub fn finish(&self) {
        lock(&self.state).finish = true;
        self.wake.notify_all();
    }
}

/// Starts the writer thread of connection `conn`.
pub fn spawn_writer(conn: usize, mut stream: TcpStream) -> std::io::Result<Arc<Outflow>> {
    let out = Arc::new(Outflow {
        state: Mutex::new(OutflowState {
            queued: Vec::new(),
            writing: 0,
            finish: false,
        }),
        wake: Condvar::new(),
    });
    let o = out.clone();
    std::thread::Builder::new()
        .name(format!("gri-write-{conn}"))
        .spawn(move || loop {
            let (bytes, finish) = {
                let mut s = lock(&o.state);
                while s.queued.is_empty() && !s.finish {
                    s = o.wake.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                let bytes = std::mem::take(&mut s.queued);
                s.writing = bytes.len();
                (bytes, s.finish)
            };
            if finish {
                // A farewell is sent as far as the peer takes it now, never waited for.
                let _ = stream.set_nonblocking(true);
                let _ = stream.write(&bytes);
                let _ = stream.shutdown(Shutdown::Both);
                return;
            }
            if stream.write_all(&bytes).is_err() {
                let _ = stream.shutdown(Shutdown::Both);
                let mut s = lock(&o.state);
                s.finish = true;
                s.queued = Vec::new();
                s.writing = 0;
                return;
            }
            lock(&o.state).writing = 0;
        })?;
    Ok(out)
}

/// Writes one envelope as a line.
pub fn write_env(stream: &mut TcpStream, env: &Envelope) -> std::io::Result<()> {
    stream.write_all(encode(env).as_bytes())
}

/// Connects to a Control Center: the stream to write to, and what it sends.
pub fn connect_cc(addr: &str) -> anyhow::Result<(TcpStream, Receiver<Incoming>)> {
    let stream = TcpStream::connect(addr)
        .with_context(|| format!("connecting to the Control Center at {addr}"))?;
    stream.set_nodelay(true)?;
    let writer = stream.try_clone()?;
    let (tx, rx) = mpsc::channel();
    spawn_reader(0, stream, DEFAULT_MAX_MESSAGE_BYTES, tx)?;
    Ok((writer, rx))
}
