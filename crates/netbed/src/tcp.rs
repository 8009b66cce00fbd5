//! The TCP relay: clients connect to it instead of the server; each connection is piped to
//! the server through two threads that can add a delay, stall (forward nothing, as a link
//! that stopped) or cut every connection (both ends see it closed).

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::NetbedError;

/// What a TCP relay did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TcpStats {
    /// Connections accepted.
    pub connections: u64,
    /// Connections cut by [`TcpRelay::cut`].
    pub cut: u64,
    /// Bytes forwarded, both ways.
    pub bytes: u64,
}

#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    /// While true, nothing is forwarded.
    stalled: Mutex<bool>,
    resumed: Condvar,
    /// Delay before each chunk is forwarded, in microseconds.
    delay_us: AtomicU64,
    open: Mutex<Vec<TcpStream>>,
    connections: AtomicU64,
    cut: AtomicU64,
    bytes: AtomicU64,
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
        let listener = TcpListener::bind(front)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared::default());
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
            for s in open.drain(..) {
                let _ = s.shutdown(Shutdown::Both);
                self.shared.cut.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// What the relay did so far (cut counts sockets, two per connection).
    pub fn stats(&self) -> TcpStats {
        TcpStats {
            connections: self.shared.connections.load(Ordering::Relaxed),
            cut: self.shared.cut.load(Ordering::Relaxed) / 2,
            bytes: self.shared.bytes.load(Ordering::Relaxed),
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
        let Ok(client) = client else { continue };
        if let Err(e) = pipe(client, server, &shared) {
            eprintln!("netbed: a TCP connection could not be relayed: {e}");
        }
    }
}

fn pipe(client: TcpStream, server: SocketAddr, shared: &Arc<Shared>) -> io::Result<()> {
    client.set_nonblocking(false)?;
    let upstream = TcpStream::connect(server)?;
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    if let Ok(mut open) = shared.open.lock() {
        open.push(client.try_clone()?);
        open.push(upstream.try_clone()?);
    }
    shared.connections.fetch_add(1, Ordering::Relaxed);
    for (from, to) in [
        (client.try_clone()?, upstream.try_clone()?),
        (upstream, client),
    ] {
        let s = shared.clone();
        std::thread::Builder::new()
            .name("netbed-pipe".into())
            .spawn(move || forward(from, to, &s))?;
    }
    Ok(())
}

fn forward(mut from: TcpStream, mut to: TcpStream, shared: &Shared) {
    let mut buf = vec![0u8; 16 << 10];
    loop {
        let n = match from.read(&mut buf) {
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
        if to.write_all(&buf[..n]).is_err() {
            shared.bytes.fetch_sub(n as u64, Ordering::Relaxed);
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
