//! The UDP loop around [`SimServer`]: one thread owns the socket and the world.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::core::SimServer;

/// Longest blocking wait, so that a stop request is seen promptly.
const MAX_WAIT: Duration = Duration::from_millis(50);

/// Something that watches the simulation from inside the server loop (a viewer, a
/// recorder): called at most every `every` of wall time, and after every iteration when
/// `every` is zero. It must be quick: it runs on the simulation's thread.
pub type Observer = Box<dyn FnMut(&SimServer) + Send>;

/// Requests to the running loop from other threads.
#[derive(Debug, Clone, PartialEq)]
pub enum LoopControl {
    /// Simulated seconds per wall second in asynchronous mode (0 = as fast as possible).
    RealTimeFactor(f64),
}

/// A bound SimRob server.
pub struct UdpServer {
    socket: UdpSocket,
    core: SimServer,
    buf: Vec<u8>,
    observers: Vec<(Duration, Option<Instant>, Observer)>,
    control_rx: std::sync::mpsc::Receiver<LoopControl>,
    control_tx: std::sync::mpsc::Sender<LoopControl>,
}

impl UdpServer {
    /// Binds `core`'s configured address (`communicationreceiverip:communicationreceiverport`;
    /// port 0 picks a free one).
    pub fn bind(core: SimServer) -> io::Result<UdpServer> {
        let c = core.config();
        let socket = UdpSocket::bind(SocketAddr::new(c.receiver_ip, c.receiver_port))?;
        let (control_tx, control_rx) = std::sync::mpsc::channel();
        Ok(UdpServer {
            socket,
            core,
            buf: vec![0u8; 65536],
            observers: Vec::new(),
            control_rx,
            control_tx,
        })
    }

    /// Adds an observer called at most every `every` of wall time (zero: after every
    /// iteration).
    pub fn add_observer(&mut self, every: Duration, observer: Observer) {
        self.observers.push((every, None, observer));
    }

    /// A handle other threads use to steer the running loop.
    pub fn control(&self) -> std::sync::mpsc::Sender<LoopControl> {
        self.control_tx.clone()
    }

    fn observe(&mut self, now: Instant, iterated: bool) {
        for (every, last, observer) in &mut self.observers {
            let due = match last {
                None => true,
                Some(t) if every.is_zero() => {
                    iterated || now.saturating_duration_since(*t) >= MAX_WAIT
                }
                Some(t) => now.saturating_duration_since(*t) >= *every,
            };
            if due {
                *last = Some(now);
                observer(&self.core);
            }
        }
    }

    /// The address agents send to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    pub fn core(&self) -> &SimServer {
        &self.core
    }
    pub fn core_mut(&mut self) -> &mut SimServer {
        &mut self.core
    }

    fn flush(&mut self) {
        while let Some(t) = self.core.poll_transmit() {
            // A failed send (an agent that went away) must not stop the server.
            let _ = self.socket.send_to(&t.payload, t.to);
        }
    }

    /// Receives everything already waiting, without blocking.
    fn drain(&mut self) -> io::Result<()> {
        self.socket.set_nonblocking(true)?;
        loop {
            match self.socket.recv_from(&mut self.buf) {
                Ok((n, from)) => {
                    let now = Instant::now();
                    self.core.handle_datagram(from, &self.buf[..n], now);
                    self.flush();
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                // Errors reported for earlier sends (ICMP) are not the server's problem.
                Err(e) if is_transient(&e) => continue,
                Err(e) => return Err(e),
            }
        }
        self.socket.set_nonblocking(false)
    }

    /// Waits up to `timeout` for one datagram.
    fn wait(&mut self, timeout: Duration) -> io::Result<()> {
        self.socket
            .set_read_timeout(Some(timeout.max(Duration::from_micros(10))))?;
        match self.socket.recv_from(&mut self.buf) {
            Ok((n, from)) => {
                self.core
                    .handle_datagram(from, &self.buf[..n], Instant::now());
                self.flush();
                Ok(())
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) || is_transient(&e) =>
            {
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Serves until `stop` becomes true.
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<()> {
        while !stop.load(Ordering::Relaxed) {
            while let Ok(c) = self.control_rx.try_recv() {
                match c {
                    LoopControl::RealTimeFactor(f) => self.core.set_real_time_factor(f),
                }
            }
            self.drain()?;
            let now = Instant::now();
            let iterated = self.core.handle_timeout(now);
            if !self.observers.is_empty() {
                self.observe(now, iterated);
            }
            if iterated {
                self.flush();
                continue;
            }
            let wait = match self.core.poll_timeout(now) {
                Some(at) => at.saturating_duration_since(now).min(MAX_WAIT),
                None => MAX_WAIT,
            };
            if !wait.is_zero() {
                self.wait(wait)?;
            }
        }
        Ok(())
    }
}

fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
    )
}
