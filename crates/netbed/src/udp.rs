//! The UDP relay: agents send to its front address instead of the server's; for each agent it
//! opens a socket of its own towards the server, and impairs both directions.
//!
//! A SimRob agent announces its address in `Register_Agent` (`<Port>`), and the server sends
//! there, not to where the datagram came from: the relay rewrites that port to the socket it
//! opened for the agent, so the server's broadcasts and confirmations come back through it.
//! An agent's streams are known by the `<Key>` of its first datagram (else by the order in
//! which agents appeared), so agent `a3` meets the same fates in every run, whatever port it
//! got.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};

use crate::fate::{stream_id, Impairment, LinkStats, Schedule, Stream};
use crate::NetbedError;
#[cfg(doc)]
use crate::MAX_QUEUED_BYTES;

/// The receive buffer: larger than any UDP datagram (65,507 bytes of payload over IPv4).
pub const MAX_DATAGRAM: usize = 65536;

/// Most agents (sockets towards the server) one relay keeps.
pub const MAX_FLOWS: usize = 1024;

const FRONT: Token = Token(usize::MAX);

/// What a relay did in each direction, summed over its agents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Agents towards the server.
    pub up: LinkStats,
    /// Server towards agents.
    pub down: LinkStats,
    /// Agents seen.
    pub flows: usize,
    /// Bytes of datagrams on their way now (at most [`MAX_QUEUED_BYTES`]).
    pub queued_bytes: usize,
}

/// A running UDP relay (see the module's text). Dropping it stops it.
pub struct UdpRelay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    stats: Arc<Mutex<RelayStats>>,
    thread: Option<JoinHandle<()>>,
}

impl UdpRelay {
    /// Starts a relay on a free loopback port in front of `server` (a loopback address),
    /// with `up` for agent → server datagrams and `down` for server → agent ones.
    pub fn start(
        server: SocketAddr,
        up: Impairment,
        down: Impairment,
    ) -> Result<UdpRelay, NetbedError> {
        Self::start_on(SocketAddr::new(server.ip(), 0), server, up, down)
    }

    /// [`UdpRelay::start`] on the front address `front` (loopback).
    pub fn start_on(
        front: SocketAddr,
        server: SocketAddr,
        up: Impairment,
        down: Impairment,
    ) -> Result<UdpRelay, NetbedError> {
        for a in [front, server] {
            if !a.ip().is_loopback() {
                return Err(NetbedError::NotLoopback(a));
            }
        }
        Self::start_any(front, server, up, down)
    }

    /// [`UdpRelay::start_on`] without the loopback check: `front` and `server` may be any
    /// addresses, so the impaired datagrams cross a real network. For a user who asked for
    /// it explicitly (`simrob netbed udp --allow-non-loopback`); tests stay on loopback.
    pub fn start_any(
        front: SocketAddr,
        server: SocketAddr,
        up: Impairment,
        down: Impairment,
    ) -> Result<UdpRelay, NetbedError> {
        up.validate()?;
        down.validate()?;
        let socket = UdpSocket::bind(front).map_err(NetbedError::Io)?;
        let addr = socket.local_addr().map_err(NetbedError::Io)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Mutex::new(RelayStats::default()));
        let mut relay = Relay {
            poll: Poll::new().map_err(NetbedError::Io)?,
            front: socket,
            server,
            up,
            down,
            flows: Vec::new(),
            by_agent: BTreeMap::new(),
            schedule: Schedule::default(),
            stats: stats.clone(),
        };
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("netbed-udp".into())
            .spawn(move || {
                if let Err(e) = relay.run(&flag) {
                    eprintln!("netbed: the UDP relay stopped: {e}");
                }
            })
            .map_err(NetbedError::Io)?;
        Ok(UdpRelay {
            addr,
            stop,
            stats,
            thread: Some(thread),
        })
    }

    /// Where agents send (instead of the server's address).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// What the relay did so far.
    pub fn stats(&self) -> RelayStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }
}

impl Drop for UdpRelay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[derive(Clone, Copy)]
enum Dir {
    Up(usize),
    Down(usize),
}

struct Flow {
    agent: SocketAddr,
    socket: UdpSocket,
    up: Stream,
    down: Stream,
}

struct Relay {
    poll: Poll,
    front: UdpSocket,
    server: SocketAddr,
    up: Impairment,
    down: Impairment,
    flows: Vec<Flow>,
    by_agent: BTreeMap<SocketAddr, usize>,
    schedule: Schedule<Dir>,
    stats: Arc<Mutex<RelayStats>>,
}

impl Relay {
    fn run(&mut self, stop: &AtomicBool) -> io::Result<()> {
        self.poll
            .registry()
            .register(&mut self.front, FRONT, Interest::READABLE)?;
        let mut events = Events::with_capacity(64);
        let mut buf = vec![0u8; MAX_DATAGRAM];
        while !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            let next = self
                .flows
                .iter()
                .flat_map(|f| [f.up.held_until(), f.down.held_until()])
                .flatten()
                .chain(self.schedule.next_due())
                .min();
            let timeout = next
                .map(|t| t.saturating_duration_since(now))
                .unwrap_or(Duration::from_millis(50))
                .min(Duration::from_millis(50));
            match self.poll.poll(&mut events, Some(timeout)) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
            for event in events.iter() {
                if event.token() == FRONT {
                    self.read_front(&mut buf)?;
                } else {
                    self.read_server(event.token().0, &mut buf);
                }
            }
            self.release(Instant::now());
        }
        Ok(())
    }

    fn read_front(&mut self, buf: &mut [u8]) -> io::Result<()> {
        loop {
            let (n, from) = match self.front.recv_from(buf) {
                Ok(r) => r,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // An ICMP error for an agent that went away: nothing to relay.
                Err(_) => continue,
            };
            let Some(i) = self.flow(from, &buf[..n]) else {
                continue;
            };
            let bytes = rewrite_port(&buf[..n], from.port(), self.flows[i].port());
            let now = Instant::now();
            let f = &mut self.flows[i];
            f.up.submit(&self.up, now, bytes, Dir::Up(i), &mut self.schedule);
        }
    }

    fn read_server(&mut self, i: usize, buf: &mut [u8]) {
        let Some(f) = self.flows.get_mut(i) else {
            return;
        };
        loop {
            let n = match f.socket.recv_from(buf) {
                Ok((n, from)) if from == self.server => n,
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => continue,
            };
            let now = Instant::now();
            f.down.submit(
                &self.down,
                now,
                buf[..n].to_vec(),
                Dir::Down(i),
                &mut self.schedule,
            );
        }
    }

    /// The flow of agent `from`, opened (with its socket towards the server) on its first
    /// datagram; `None` past [`MAX_FLOWS`] or when no socket can be had.
    fn flow(&mut self, from: SocketAddr, first: &[u8]) -> Option<usize> {
        if let Some(&i) = self.by_agent.get(&from) {
            return Some(i);
        }
        if self.flows.len() >= MAX_FLOWS {
            return None;
        }
        let i = self.flows.len();
        // Towards a server on this machine from its own address; otherwise from whichever
        // address the route to it takes.
        let local = if self.server.ip().is_loopback() {
            self.server.ip()
        } else if self.server.is_ipv4() {
            std::net::Ipv4Addr::UNSPECIFIED.into()
        } else {
            std::net::Ipv6Addr::UNSPECIFIED.into()
        };
        let mut socket = UdpSocket::bind(SocketAddr::new(local, 0)).ok()?;
        self.poll
            .registry()
            .register(&mut socket, Token(i), Interest::READABLE)
            .ok()?;
        let name = element(first, "Key")
            .map(<[u8]>::to_vec)
            .unwrap_or_else(|| format!("flow {i}").into_bytes());
        let id = stream_id(&name);
        self.flows.push(Flow {
            agent: from,
            socket,
            up: Stream::new(id),
            down: Stream::new(id ^ 0x5555_5555_5555_5555),
        });
        self.by_agent.insert(from, i);
        Some(i)
    }

    fn release(&mut self, now: Instant) {
        for (i, f) in self.flows.iter_mut().enumerate() {
            f.up.expire(now, Dir::Up(i), &mut self.schedule);
            f.down.expire(now, Dir::Down(i), &mut self.schedule);
        }
        // The totals are published before the datagrams leave: whoever has received one may
        // ask for them and finds it counted (the counts are kept as fates are drawn).
        if let Ok(mut s) = self.stats.lock() {
            let mut total = RelayStats {
                flows: self.flows.len(),
                queued_bytes: self.schedule.bytes(),
                ..RelayStats::default()
            };
            for f in &self.flows {
                add(&mut total.up, &f.up.stats);
                add(&mut total.down, &f.down.stats);
            }
            *s = total;
        }
        while let Some((dir, bytes)) = self.schedule.pop_due(now) {
            // A full socket buffer loses the datagram, as a network would.
            let _ = match dir {
                Dir::Up(i) => self.flows[i].socket.send_to(&bytes, self.server),
                Dir::Down(i) => self.front.send_to(&bytes, self.flows[i].agent),
            };
        }
    }
}

impl Flow {
    fn port(&self) -> u16 {
        self.socket.local_addr().map(|a| a.port()).unwrap_or(0)
    }
}

fn add(sum: &mut LinkStats, s: &LinkStats) {
    sum.received += s.received;
    sum.lost += s.lost;
    sum.duplicated += s.duplicated;
    sum.reordered += s.reordered;
    sum.sent += s.sent;
    sum.overflowed += s.overflowed;
}

/// The text of the first `<name>…</name>` in `bytes`.
fn element<'a>(bytes: &'a [u8], name: &str) -> Option<&'a [u8]> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = find(bytes, open.as_bytes())? + open.len();
    let len = find(&bytes[start..], close.as_bytes())?;
    Some(&bytes[start..start + len])
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `bytes` with every `<Port>agent</Port>` made `<Port>relay</Port>` (an agent registering
/// its own address registers the relay's socket for it instead).
pub fn rewrite_port(bytes: &[u8], agent: u16, relay: u16) -> Vec<u8> {
    let from = format!("<Port>{agent}</Port>");
    let to = format!("<Port>{relay}</Port>");
    let mut out = Vec::with_capacity(bytes.len() + 8);
    let mut rest = bytes;
    while let Some(i) = find(rest, from.as_bytes()) {
        out.extend_from_slice(&rest[..i]);
        out.extend_from_slice(to.as_bytes());
        rest = &rest[i + from.len()..];
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_registered_port_becomes_the_relays() {
        let reg = b"<Agent_Message Command=\"Register_Agent\"><Port>40000</Port><Key>a</Key></Agent_Message>";
        let out = rewrite_port(reg, 40000, 51000);
        assert_eq!(
            out,
            b"<Agent_Message Command=\"Register_Agent\"><Port>51000</Port><Key>a</Key></Agent_Message>"
        );
        assert_eq!(rewrite_port(b"<Port>4</Port>", 40000, 1), b"<Port>4</Port>");
        assert_eq!(element(reg, "Key"), Some(&b"a"[..]));
    }
}
