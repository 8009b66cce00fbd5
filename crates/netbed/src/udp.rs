//! The UDP relay: agents send to its front address instead of the server's; for each agent it
//! opens a socket of its own towards the server, and impairs both directions.
//!
//! A SimRob agent announces its address in `Register_Agent` (`<Port>`), and the server sends
//! there, not to where the datagram came from: the relay rewrites that port to the socket it
//! opened for the agent, so the server's broadcasts and confirmations come back through it.
//! An agent's streams are known by the `<Key>` of its first datagram (else by the order in
//! which agents appeared), so agent `a3` meets the same fates in every run, whatever port it
//! got.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};

use crate::fate::{stream_id, Impairment, LinkStats, Schedule, Stream};
use crate::flows::{Flows, DEFAULT_FLOW_IDLE};
use crate::MAX_QUEUED_BYTES;
use crate::{check_ends, NetbedError};

/// The receive buffer: larger than any UDP datagram (65,507 bytes of payload over IPv4).
pub const MAX_DATAGRAM: usize = 65536;

/// Most agents (sockets towards the server) one relay keeps at once. An agent's flow is
/// forgotten once it has seen no datagram either way for the flow idle time
/// ([`UdpRelay::set_flow_idle`], [`DEFAULT_FLOW_IDLE`]); a new agent that comes while this
/// many are open and none idle is not relayed, and its datagrams are counted in
/// [`RelayStats::no_flow`].
pub const MAX_FLOWS: usize = 1024;

/// How much one UDP relay keeps at once: agents with a flow, and bytes of datagrams on their
/// way. The defaults are [`MAX_FLOWS`] and [`MAX_QUEUED_BYTES`] (`simrob netbed udp
/// --max-flows`, `--max-queued-bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpLimits {
    /// Most agents with a flow (a socket towards the server each) at once, at least 1.
    pub max_flows: usize,
    /// Most bytes of datagrams on their way (delayed or held back for reordering), at
    /// least 1; a copy past it is dropped and counted as overflowed.
    pub max_queued_bytes: usize,
}

impl Default for UdpLimits {
    fn default() -> Self {
        UdpLimits {
            max_flows: MAX_FLOWS,
            max_queued_bytes: MAX_QUEUED_BYTES,
        }
    }
}

const FRONT: Token = Token(usize::MAX);

/// What a relay did in each direction, summed over its agents.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayStats {
    /// Agents towards the server.
    pub up: LinkStats,
    /// Server towards agents.
    pub down: LinkStats,
    /// Agents with a flow now.
    pub flows: usize,
    /// Flows forgotten after their idle time.
    pub expired: u64,
    /// Datagrams from agents that got no flow ([`UdpLimits::max_flows`] open and none idle), not
    /// relayed.
    pub no_flow: u64,
    /// Datagrams from agents whose flow could not get a socket towards the server (the
    /// process's open-files limit reached, say), not relayed.
    pub no_socket: u64,
    /// Bytes of the copies on their way now (`waiting`: for their delay, or held back for
    /// reordering), at most [`UdpLimits::max_queued_bytes`].
    pub queued_bytes: usize,
}

/// A running UDP relay (see the module's text). Dropping it stops it.
pub struct UdpRelay {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    stats: Arc<Mutex<RelayStats>>,
    flow_idle_us: Arc<AtomicU64>,
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
        Self::start_on_within(front, server, up, down, UdpLimits::default())
    }

    /// [`UdpRelay::start_on`] within `limits` instead of the defaults.
    pub fn start_on_within(
        front: SocketAddr,
        server: SocketAddr,
        up: Impairment,
        down: Impairment,
        limits: UdpLimits,
    ) -> Result<UdpRelay, NetbedError> {
        for a in [front, server] {
            if !a.ip().is_loopback() {
                return Err(NetbedError::NotLoopback(a));
            }
        }
        Self::start_any(front, server, up, down, limits)
    }

    /// [`UdpRelay::start_on_within`] without the loopback check: `front` and `server` may be
    /// any addresses, so the impaired datagrams cross a real network. For a user who asked for
    /// it explicitly (`simrob netbed udp --allow-non-loopback`); tests stay on loopback.
    /// Each of `limits` must be at least 1.
    pub fn start_any(
        front: SocketAddr,
        server: SocketAddr,
        up: Impairment,
        down: Impairment,
        limits: UdpLimits,
    ) -> Result<UdpRelay, NetbedError> {
        if limits.max_flows == 0 || limits.max_queued_bytes == 0 {
            return Err(NetbedError::Limit(limits));
        }
        up.validate()?;
        down.validate()?;
        check_ends(front, server)?;
        let socket = UdpSocket::bind(front).map_err(NetbedError::Io)?;
        let addr = socket.local_addr().map_err(NetbedError::Io)?;
        // A free port the system picked may be the server's, if no server is there.
        check_ends(addr, server)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Mutex::new(RelayStats::default()));
        let flow_idle_us = Arc::new(AtomicU64::new(micros(DEFAULT_FLOW_IDLE)));
        let mut relay = Relay {
            poll: Poll::new().map_err(NetbedError::Io)?,
            front: socket,
            server,
            up,
            down,
            flows: Flows::new(limits.max_flows, DEFAULT_FLOW_IDLE),
            max_flows: limits.max_flows,
            flow_idle_us: flow_idle_us.clone(),
            gone: (LinkStats::default(), LinkStats::default()),
            warned: false,
            warned_socket: false,
            to_say: Vec::new(),
            schedule: Schedule::with_limit(limits.max_queued_bytes),
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
            flow_idle_us,
            thread: Some(thread),
        })
    }

    /// Forgets an agent's flow (closes its socket towards the server) once it has seen no
    /// datagram either way for `idle` ([`DEFAULT_FLOW_IDLE`] unless set), and has none on
    /// its way. The fates of the other flows do not change.
    pub fn set_flow_idle(&self, idle: Duration) {
        self.flow_idle_us.store(micros(idle), Ordering::Relaxed);
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

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

#[derive(Clone, Copy)]
enum Dir {
    Up(u64),
    Down(u64),
}

struct Flow {
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
    flows: Flows<Flow>,
    /// The most agents with a flow ([`UdpLimits::max_flows`]).
    max_flows: usize,
    flow_idle_us: Arc<AtomicU64>,
    /// What the forgotten flows did (up, down).
    gone: (LinkStats, LinkStats),
    /// A warning was printed for a datagram that got no flow.
    warned: bool,
    /// Whether a new agent's flow was said to have no socket (said once).
    warned_socket: bool,
    /// Warnings to print once the stats that count what they tell of are published (so
    /// whoever reads one and asks for the stats finds it counted).
    to_say: Vec<String>,
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
                .flat_map(|(_, s)| [s.flow.up.held_until(), s.flow.down.held_until()])
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
                    self.read_server(event.token().0 as u64, &mut buf);
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
            let now = Instant::now();
            let i = match self.flow(from, &buf[..n], now) {
                Ok(i) => i,
                Err(None) => {
                    if !self.warned {
                        self.warned = true;
                        self.to_say.push(format!(
                            "netbed: {} agents have a flow and none has been idle \
                             long enough to be forgotten: datagrams from new agents ({from}) \
                             are not relayed (counted in stats as datagrams from agents with \
                             no room; a shorter flow idle time, --flow-idle, forgets agents \
                             sooner, and --max-flows keeps more)",
                            self.max_flows
                        ));
                    }
                    continue;
                }
                Err(Some(why)) => {
                    if !self.warned_socket {
                        self.warned_socket = true;
                        self.to_say.push(format!(
                            "netbed: no socket towards the server for a new agent ({from}) with \
                             {} agents having a flow: {why}. Its datagrams are not relayed \
                             (counted in stats as datagrams from agents with no socket). Each \
                             agent's flow holds a socket: {}",
                            self.flows.len(),
                            crate::open_files_hint(self.max_flows)
                        ));
                    }
                    continue;
                }
            };
            let Some(s) = self.flows.get_mut(i) else {
                continue;
            };
            let bytes = rewrite_port(&buf[..n], from.port(), s.flow.port());
            let before = self.schedule.len();
            s.flow
                .up
                .submit(&self.up, now, bytes, Dir::Up(i), &mut self.schedule);
            s.pending += self.schedule.len() - before;
        }
    }

    fn read_server(&mut self, i: u64, buf: &mut [u8]) {
        let Some(s) = self.flows.get_mut(i) else {
            return;
        };
        loop {
            let n = match s.flow.socket.recv_from(buf) {
                Ok((n, from)) if from == self.server => n,
                Ok(_) => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => continue,
            };
            let now = Instant::now();
            s.last = s.last.max(now);
            let before = self.schedule.len();
            s.flow.down.submit(
                &self.down,
                now,
                buf[..n].to_vec(),
                Dir::Down(i),
                &mut self.schedule,
            );
            s.pending += self.schedule.len() - before;
        }
    }

    /// The flow of agent `from`, opened (with its socket towards the server) on its first
    /// datagram; `Err(None)` past [`UdpLimits::max_flows`], `Err(Some(why))` when no socket can be had.
    fn flow(
        &mut self,
        from: SocketAddr,
        first: &[u8],
        now: Instant,
    ) -> Result<u64, Option<io::Error>> {
        // Towards a server on this machine from its own address; otherwise from whichever
        // address the route to it takes.
        let local = if self.server.ip().is_loopback() {
            self.server.ip()
        } else if self.server.is_ipv4() {
            std::net::Ipv4Addr::UNSPECIFIED.into()
        } else {
            std::net::Ipv6Addr::UNSPECIFIED.into()
        };
        let registry = self.poll.registry();
        self.flows.get_or_open(from, now, |i| {
            let mut socket = UdpSocket::bind(SocketAddr::new(local, 0))?;
            let token = usize::try_from(i).map_err(io::Error::other)?;
            registry.register(&mut socket, Token(token), Interest::READABLE)?;
            let name = element(first, "Key")
                .map(<[u8]>::to_vec)
                .unwrap_or_else(|| format!("flow {i}").into_bytes());
            let id = stream_id(&name);
            Ok(Flow {
                socket,
                up: Stream::new(id),
                down: Stream::new(id ^ 0x5555_5555_5555_5555),
            })
        })
    }

    fn release(&mut self, now: Instant) {
        for (i, s) in self.flows.iter_mut() {
            let before = self.schedule.len();
            s.flow.up.expire(now, Dir::Up(i), &mut self.schedule);
            s.flow.down.expire(now, Dir::Down(i), &mut self.schedule);
            s.pending += self.schedule.len() - before;
        }
        // The copies due leave now: counted as sent and published before they are handed to
        // the sockets, so whoever has received one and asks finds it counted (and no longer
        // on its way).
        let mut leaving = Vec::new();
        while let Some((dir, bytes)) = self.schedule.pop_due(now) {
            let (Dir::Up(i) | Dir::Down(i)) = dir;
            let Some(s) = self.flows.get_mut(i) else {
                continue;
            };
            s.pending = s.pending.saturating_sub(1);
            match dir {
                Dir::Up(_) => s.flow.up.leave(),
                Dir::Down(_) => s.flow.down.leave(),
            }
            leaving.push((dir, bytes));
        }
        if let Ok(mut s) = self.stats.lock() {
            // The forgotten flows' figures stay in the totals.
            let mut total = RelayStats {
                flows: self.flows.len(),
                expired: self.flows.expired,
                no_flow: self.flows.no_flow,
                no_socket: self.flows.not_opened,
                queued_bytes: self.schedule.bytes(),
                up: self.gone.0,
                down: self.gone.1,
            };
            for (_, f) in self.flows.iter() {
                add(&mut total.up, &f.flow.up.stats);
                add(&mut total.down, &f.flow.down.stats);
            }
            *s = total;
        }
        for text in self.to_say.drain(..) {
            eprintln!("{text}");
        }
        for (dir, bytes) in leaving {
            let (Dir::Up(i) | Dir::Down(i)) = dir;
            let Some(s) = self.flows.get(i) else {
                continue;
            };
            // A full socket buffer loses the datagram, as a network would.
            let _ = match dir {
                Dir::Up(_) => s.flow.socket.send_to(&bytes, self.server),
                Dir::Down(_) => self.front.send_to(&bytes, s.agent),
            };
        }
        self.flows.set_idle(Duration::from_micros(
            self.flow_idle_us.load(Ordering::Relaxed),
        ));
        for mut f in self.flows.expire(now, |f| {
            f.up.held_until().is_some() || f.down.held_until().is_some()
        }) {
            let _ = self.poll.registry().deregister(&mut f.socket);
            add(&mut self.gone.0, &f.up.stats);
            add(&mut self.gone.1, &f.down.stats);
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
    sum.waiting += s.waiting;
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
