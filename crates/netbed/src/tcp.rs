//! The TCP relay: clients connect to it instead of the server; each connection is piped to
//! the server through two threads that can add a delay, stall (forward nothing, as a link
//! that stopped) or cut every connection (both ends see it closed).
//!
//! At most [`TcpRelay::set_max_connections`] connections are open at once
//! ([`DEFAULT_MAX_CONNECTIONS`] unless set): a client past it is closed at once, never
//! relayed. A connection is forgotten (its sockets closed) when both its ways have ended, and
//! each way holds at most one chunk of [`CHUNK`] bytes: a peer that never reads stops its
//! way at what the kernel's socket buffers hold, the relay's memory stays bounded.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::{check_ends, NetbedError};

/// Connections open at once unless [`TcpRelay::set_max_connections`] says otherwise
/// (`simrob netbed tcp --max-connections`).
pub const DEFAULT_MAX_CONNECTIONS: usize = 128;

/// The most connections a relay may be set to keep open (each is two threads and two
/// sockets).
pub const MAX_CONNECTIONS: usize = 1024;

/// The most bytes a way of a connection reads before it has passed them on.
pub const CHUNK: usize = 16 << 10;

/// What a TCP relay did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpStats {
    /// Connections accepted.
    pub connections: u64,
    /// Connections cut by [`TcpRelay::cut`].
    pub cut: u64,
    /// Bytes forwarded, both ways.
    pub bytes: u64,
    /// Connections open now.
    pub open: usize,
    /// Connections closed at once because as many as allowed were open.
    pub refused: u64,
}

/// Both sockets of a connection (client, server).
type Pair = [Arc<TcpStream>; 2];

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    /// While true, nothing is forwarded.
    stalled: Mutex<bool>,
    resumed: Condvar,
    /// Delay before each chunk is forwarded, in microseconds.
    delay_us: AtomicU64,
    /// Open connections by number; a connection leaves when both its ways have ended.
    open: Mutex<BTreeMap<u64, Pair>>,
    /// Notified when a connection leaves `open` (its descriptors released).
    left: Condvar,
    /// Connections allowed open at once.
    max_connections: AtomicUsize,
    connections: AtomicU64,
    cut: AtomicU64,
    bytes: AtomicU64,
    refused: AtomicU64,
}

/// A running TCP relay (see the module's text). Dropping it stops accepting and cuts what
/// is open.
pub struct TcpRelay {
    addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl TcpRelay {
    /// Starts a relay on a free loopback port in front of `server` (a loopback address).
    pub fn start(server: SocketAddr) -> Result<TcpRelay, NetbedError> {
        Self::start_on(SocketAddr::new(server.ip(), 0), server)
    }

    /// [`TcpRelay::start`] listening on `front` (loopback).
    pub fn start_on(front: SocketAddr, server: SocketAddr) -> Result<TcpRelay, NetbedError> {
        for a in [front, server] {
            if !a.ip().is_loopback() {
                return Err(NetbedError::NotLoopback(a));
            }
        }
        Self::start_any(front, server)
    }

    /// [`TcpRelay::start_on`] without the loopback check: `front` and `server` may be any
    /// addresses. For a user who asked for it explicitly (`simrob netbed tcp
    /// --allow-non-loopback`); tests stay on loopback.
    pub fn start_any(front: SocketAddr, server: SocketAddr) -> Result<TcpRelay, NetbedError> {
        check_ends(front, server)?;
        let listener = TcpListener::bind(front)?;
        let addr = listener.local_addr()?;
        // A free port the system picked may be the server's, if no server is there.
        check_ends(addr, server)?;
        let shared = Arc::new(Shared {
            max_connections: AtomicUsize::new(DEFAULT_MAX_CONNECTIONS),
            ..Shared::default()
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("netbed-tcp".into())
            .spawn(move || accept_loop(listener, server, s))?;
        Ok(TcpRelay {
            addr,
            shared,
            thread: Some(thread),
        })
    }

    /// Where clients connect (instead of the server's address).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Delays every chunk forwarded by `delay` from now on (a slower link).
    pub fn set_delay(&self, delay: Duration) {
        let us = u64::try_from(delay.as_micros()).unwrap_or(u64::MAX);
        self.shared.delay_us.store(us, Ordering::Relaxed);
    }

    /// Keeps at most `n` connections open at once (1 to [`MAX_CONNECTIONS`], clamped): a
    /// client that comes when `n` are open is closed at once and counted as refused.
    pub fn set_max_connections(&self, n: usize) {
        self.shared
            .max_connections
            .store(n.clamp(1, MAX_CONNECTIONS), Ordering::Relaxed);
    }

    /// Stops forwarding anything (`true`) or goes on (`false`): a stalled link, the
    /// connections stay open.
    pub fn stall(&self, stalled: bool) {
        if let Ok(mut s) = self.shared.stalled.lock() {
            *s = stalled;
        }
        self.shared.resumed.notify_all();
    }

    /// Cuts every open connection: both the client and the server see it closed.
    pub fn cut(&self) {
        if let Ok(mut open) = self.shared.open.lock() {
            for (_, pair) in std::mem::take(&mut *open) {
                for s in pair {
                    let _ = s.shutdown(Shutdown::Both);
                }
                self.shared.cut.fetch_add(1, Ordering::Relaxed);
            }
        }
        self.shared.left.notify_all();
    }

    /// What the relay did so far.
    pub fn stats(&self) -> TcpStats {
        TcpStats {
            connections: self.shared.connections.load(Ordering::Relaxed),
            cut: self.shared.cut.load(Ordering::Relaxed),
            bytes: self.shared.bytes.load(Ordering::Relaxed),
            open: self.shared.open.lock().map(|o| o.len()).unwrap_or(0),
            refused: self.shared.refused.load(Ordering::SeqCst),
        }
    }
}

impl Drop for TcpRelay {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.stall(false);
        self.cut();
        // The accept loop blocks in `accept`: one connection of our own wakes it to see `stop`.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: TcpListener, server: SocketAddr, shared: Arc<Shared>) {
    // Blocks until a client connects; `Drop` connects once to wake it when it should stop.
    for client in listener.incoming() {
        if shared.stop.load(Ordering::Relaxed) {
            break;
        }
        let client = match client {
            Ok(c) => c,
            Err(_) => {
                // Out of descriptors or memory for now: the pending client stays queued, so
                // a loop straight back into `accept` would spin. It waits for a connection of
                // its own to end and release its descriptors (at most a second: the shortage
                // may be another program's).
                if let Ok(open) = shared.open.lock() {
                    let _ = shared.left.wait_timeout(open, Duration::from_secs(1));
                }
                continue;
            }
        };
        if let Err(e) = pipe(client, server, &shared) {
            eprintln!("netbed: a TCP connection could not be relayed: {e}");
        }
    }
}

/// Connection `id` leaves the open ones, its sockets released; the accept loop, if it waits
/// for descriptors, is told.
fn forget(shared: &Shared, id: u64) {
    if let Ok(mut open) = shared.open.lock() {
        open.remove(&id);
    }
    shared.left.notify_all();
}

fn pipe(client: TcpStream, server: SocketAddr, shared: &Arc<Shared>) -> io::Result<()> {
    let full = shared
        .open
        .lock()
        .map(|o| o.len() >= shared.max_connections.load(Ordering::Relaxed))
        .unwrap_or(true);
    if full {
        // As many as allowed are open: this one is closed at once (the accept loop is the
        // only one to add connections, so the count cannot grow in between).
        // Counted before it is closed: whoever sees it closed sees it counted.
        shared.refused.fetch_add(1, Ordering::SeqCst);
        let _ = client.shutdown(Shutdown::Both);
        return Ok(());
    }
    client.set_nonblocking(false)?;
    let upstream = TcpStream::connect(server)?;
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let (client, upstream) = (Arc::new(client), Arc::new(upstream));
    let id = shared.connections.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut open) = shared.open.lock() {
        open.insert(id, [client.clone(), upstream.clone()]);
    }
    // The way that ends last forgets the connection (and so closes its sockets).
    let ways = Arc::new(AtomicUsize::new(2));
    for (from, to) in [
        (client.clone(), upstream.clone()),
        (upstream.clone(), client.clone()),
    ] {
        let (s, left) = (shared.clone(), ways.clone());
        let spawned = std::thread::Builder::new()
            .name("netbed-pipe".into())
            .spawn(move || {
                forward(&from, &to, &s);
                if left.fetch_sub(1, Ordering::AcqRel) == 1 {
                    forget(&s, id);
                }
            });
        if let Err(e) = spawned {
            // No thread for this way: the connection is closed (a way already started sees
            // it closed and ends).
            let _ = client.shutdown(Shutdown::Both);
            let _ = upstream.shutdown(Shutdown::Both);
            if ways.fetch_sub(1, Ordering::AcqRel) == 1 {
                forget(shared, id);
            }
            return Err(e);
        }
    }
    Ok(())
}

fn forward(from: &TcpStream, to: &TcpStream, shared: &Shared) {
    let mut buf = vec![0u8; CHUNK];
    let (mut reader, mut writer) = (from, to);
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let delay = shared.delay_us.load(Ordering::Relaxed);
        if delay > 0 {
            // The impairment itself: a slower link holds each chunk this long. Tests wait on
            // what arrives (with a failure timeout), never on this delay.
            std::thread::sleep(Duration::from_micros(delay));
        }
        if let Ok(mut stalled) = shared.stalled.lock() {
            while *stalled && !shared.stop.load(Ordering::Relaxed) {
                stalled = match shared.resumed.wait(stalled) {
                    Ok(s) => s,
                    Err(_) => break,
                };
            }
        }
        // Counted before the bytes leave, so that whoever received them and then asks finds
        // them counted (counted after, a busy machine could answer in between); taken back
        // if the write fails.
        shared.bytes.fetch_add(n as u64, Ordering::Relaxed);
        if writer.write_all(&buf[..n]).is_err() {
            shared.bytes.fetch_sub(n as u64, Ordering::Relaxed);
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
