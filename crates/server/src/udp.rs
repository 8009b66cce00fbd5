//! The SimRob server, as its manual describes it: the UDP loop around a [`Session`].
//!
//! [`UdpServer`] owns the socket, the session and the [`SaveStore`]: one thread feeds the
//! session datagrams, local commands and the time, sends what it hands back, answers its file
//! requests and fans each iteration's snapshot out to the observers (the viewer, a recorder).
//!
//! The loop alternates, so that neither side starves the other: it reads waiting datagrams
//! in a bounded batch (at most [`BATCH_DATAGRAMS`], and no longer than [`BATCH_TIME`]),
//! up to [`MAX_BATCH`] per system call, and sends the answers to each such group together,
//! up to [`MAX_BATCH`] per system call too ([`crate::datagrams`]); then runs the due
//! iteration, or one
//! slice of it (the session cuts long iterations into slices); then, with nothing due, waits
//! on the socket (epoll) until the next deadline.
//!
//! The socket asks for its errors (`IP_RECVERR`, [`crate::errqueue`]): when the kernel
//! signals one (a read fails with "connection refused", or epoll reports an error), and at
//! least every [`ERROR_CHECK`], the loop reads the error queue and tells the session which
//! addresses answered ICMP port unreachable ([`Session::handle_unreachable`]): the agents
//! registered there have stopped and are removed.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use simrob_protocol::Request;
use simrob_session::{
    Event, FileResult, LocalCommand, LogLevel, Observation, Observer, Session, SessionError,
};

use crate::datagrams::{send_all, Outgoing, Received, MAX_BATCH};
use crate::files::SaveStore;

/// The default socket receive buffer asked of the OS (configuration key `receivebuffer`):
/// room for bursts (a thousand agents registering at once) while the loop is busy with an
/// iteration.
pub const DEFAULT_RECEIVE_BUFFER: usize = 8 << 20;

/// Asks the OS for a receive buffer of `bytes` on `socket`; returns the size it gave (the
/// OS may cap it, on Linux at `net.core.rmem_max`, and counts its own overhead in it).
pub fn set_receive_buffer(socket: &impl std::os::fd::AsFd, bytes: usize) -> io::Result<usize> {
    let s = socket2::SockRef::from(socket);
    s.set_recv_buffer_size(bytes)?;
    s.recv_buffer_size()
}

/// How often the socket's error queue is read when nothing signalled an error (the kernel
/// signals each one; this is a safety net): an agent whose port has closed is removed
/// within this time of the first datagram sent to it after.
pub const ERROR_CHECK: Duration = Duration::from_millis(250);

/// Longest blocking wait, so that a stop request and local commands are seen promptly.
const MAX_WAIT: Duration = Duration::from_millis(50);

/// Most datagrams read in one batch before the loop looks at the simulation again.
pub const BATCH_DATAGRAMS: usize = 1024;

/// Longest a batch of datagrams may take (wall time: on a busy machine the server may get a
/// small share of a processor, and iterations must still come).
pub const BATCH_TIME: Duration = Duration::from_millis(5);

const SOCKET: mio::Token = mio::Token(0);

/// A bound SimRob server.
pub struct UdpServer {
    socket: mio::net::UdpSocket,
    poll: mio::Poll,
    events: mio::Events,
    session: Session,
    store: Box<dyn SaveStore>,
    received: Received,
    /// The datagrams of one send, kept to reuse their room.
    outgoing: Vec<simrob_session::Transmit>,
    observers: Vec<Observer>,
    /// Observers that take every iteration (recorders); the others only ask, through their
    /// flags, for the iteration after each frame they drew.
    every_iteration: usize,
    wants: Vec<std::sync::Arc<AtomicBool>>,
    commands_rx: Receiver<LocalCommand>,
    commands_tx: Sender<LocalCommand>,
    /// The kernel signalled an error for a datagram sent (ICMP port unreachable, most often).
    errors_pending: bool,
    /// When the error queue was last read.
    errors_read: Instant,
}

impl UdpServer {
    /// Binds `session`'s configured address (`communicationreceiverip:communicationreceiverport`;
    /// port 0 picks a free one); Save and Load go to `store`.
    /// The socket's receive buffer and the store's quota come from the configuration
    /// (`receivebuffer`, `savedirectorybytes`, `savedirectoryfiles`).
    pub fn bind(mut session: Session, mut store: Box<dyn SaveStore>) -> io::Result<UdpServer> {
        let c = session.config();
        store.set_quota(crate::files::Quota {
            max_bytes: c.limits.save_directory_bytes,
            max_files: c.limits.save_directory_files,
        });
        store.set_max_file_bytes(c.limits.max_save_file_bytes);
        let asked = c.limits.receive_buffer;
        let socket = UdpSocket::bind(SocketAddr::new(c.receiver_ip, c.receiver_port))?;
        socket.set_nonblocking(true)?;
        // No agent may register at the server's own address.
        session.set_own_address(socket.local_addr()?);
        let mut socket = mio::net::UdpSocket::from_std(socket);
        let poll = mio::Poll::new()?;
        poll.registry()
            .register(&mut socket, SOCKET, mio::Interest::READABLE)?;
        let (commands_tx, commands_rx) = channel();
        match set_receive_buffer(&socket, asked) {
            Ok(got) if got < asked => tracing::warn!(
                "the OS gave a receive buffer of {got} bytes, less than the {asked} asked (raise net.core.rmem_max): bursts may be dropped"
            ),
            Ok(_) => {}
            Err(e) => tracing::warn!("cannot size the receive buffer: {e}"),
        }
        if let Err(e) = crate::errqueue::want_errors(&socket) {
            tracing::warn!(
                "cannot read the socket's error queue ({e}): agents that stop without unregistering are removed only by agentsilencetimeout"
            );
        }
        Ok(UdpServer {
            socket,
            poll,
            events: mio::Events::with_capacity(4),
            session,
            store,
            received: Received::new(MAX_BATCH, 65536),
            outgoing: Vec::new(),
            observers: Vec::new(),
            every_iteration: 0,
            wants: Vec::new(),
            commands_rx,
            commands_tx,
            errors_pending: false,
            errors_read: Instant::now(),
        })
    }

    /// Adds an observer. It first receives the world as it is now.
    pub fn add_observer(&mut self, observer: Observer) {
        self.every_iteration += 1;
        self.session.set_observe_every_iteration(true);
        self.observers.push(observer);
        self.session.set_observed(true);
        self.process_events();
    }

    /// Adds an observer that wants only some iterations (a viewer drawing a few frames a
    /// second): it receives the iteration after each time it sets `wants`, and every change
    /// while the world stands still. While only such observers watch, the iterations between
    /// cost no snapshot. It first receives the world as it is now.
    pub fn add_sampled_observer(&mut self, observer: Observer, wants: std::sync::Arc<AtomicBool>) {
        self.wants.push(wants);
        self.session
            .set_observe_every_iteration(self.every_iteration > 0);
        self.observers.push(observer);
        self.session.set_observed(true);
        self.process_events();
    }

    /// A handle other threads use to send local commands (the viewer's buttons) to the
    /// running loop.
    pub fn commands(&self) -> Sender<LocalCommand> {
        self.commands_tx.clone()
    }

    /// Asks the OS for a receive buffer of `bytes`; returns the size it gave.
    pub fn set_receive_buffer(&self, bytes: usize) -> io::Result<usize> {
        set_receive_buffer(&self.socket, bytes)
    }

    /// The socket's receive buffer now, bytes.
    pub fn receive_buffer(&self) -> io::Result<usize> {
        socket2::SockRef::from(&self.socket).recv_buffer_size()
    }

    /// The address agents send to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// The session the server runs.
    pub fn session(&self) -> &Session {
        &self.session
    }
    /// The session the server runs, to change (register filters, adjust settings).
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Applies requests as local commands (a scenario given at start), Save and Load
    /// included; stops at the first refused one.
    pub fn apply_local(&mut self, requests: &[Request]) -> Result<(), ServerError> {
        for (n, r) in requests.iter().enumerate() {
            let now = Instant::now();
            let result = self
                .session
                .handle_command(LocalCommand::Request(r.clone()), now)
                .and_then(|()| self.serve_files(now));
            result.map_err(|cause| ServerError::Scenario {
                request: n + 1,
                cause,
            })?;
        }
        self.process_events();
        Ok(())
    }

    /// Answers the file operations the session asked for; returns the first failure of a
    /// local command. Other events stay queued.
    fn serve_files(&mut self, now: Instant) -> Result<(), simrob_session::SessionError> {
        let mut kept = Vec::new();
        let mut outcome = Ok(());
        while let Some(event) = self.session.poll_event() {
            let (ticket, result) = match event {
                Event::SaveWanted {
                    ticket,
                    path,
                    contents,
                } => (ticket, self.save(&path, &contents)),
                Event::LoadWanted { ticket, path } => (ticket, self.load(&path)),
                other => {
                    kept.push(other);
                    continue;
                }
            };
            let r = self.session.handle_file_result(ticket, result, now);
            if outcome.is_ok() {
                outcome = r;
            }
        }
        for event in kept {
            self.dispatch(event);
        }
        outcome
    }

    fn save(&mut self, path: &str, contents: &str) -> FileResult {
        match self.store.save(path, contents) {
            Ok(written) => FileResult::Saved(written.display().to_string()),
            Err(e) => FileResult::Failed(e.to_string()),
        }
    }

    fn load(&mut self, path: &str) -> FileResult {
        match self.store.load(path) {
            Ok(xml) => FileResult::Loaded(xml),
            Err(e) => FileResult::Failed(e.to_string()),
        }
    }

    /// Hands one event to whoever it is for.
    fn dispatch(&mut self, event: Event) {
        let observation = match event {
            Event::Iterated(s) => Observation::Iterated(s),
            Event::Changed(s) => Observation::Changed(s),
            Event::Response(text) => Observation::Response(text),
            Event::Log { level, message } => {
                match level {
                    LogLevel::Debug => tracing::debug!(target: "simrob::session", "{message}"),
                    LogLevel::Info => tracing::info!(target: "simrob::session", "{message}"),
                    LogLevel::Warn => tracing::warn!(target: "simrob::session", "{message}"),
                }
                return;
            }
            Event::SaveWanted {
                ticket,
                path,
                contents,
            } => {
                let result = self.save(&path, &contents);
                let _ = self
                    .session
                    .handle_file_result(ticket, result, Instant::now());
                return;
            }
            Event::LoadWanted { ticket, path } => {
                let result = self.load(&path);
                let _ = self
                    .session
                    .handle_file_result(ticket, result, Instant::now());
                return;
            }
        };
        for observer in &mut self.observers {
            observer(&observation);
        }
    }

    fn process_events(&mut self) {
        while let Some(event) = self.session.poll_event() {
            self.dispatch(event);
        }
    }

    /// Sends every datagram the session has for the network, [`MAX_BATCH`] per system call.
    fn flush(&mut self) {
        self.process_events();
        self.outgoing.clear();
        self.outgoing
            .extend(std::iter::from_fn(|| self.session.poll_transmit()));
        if self.outgoing.is_empty() {
            return;
        }
        let out: Vec<Outgoing> = self
            .outgoing
            .iter()
            .map(|t| Outgoing {
                to: t.to,
                from: None,
                payload: &t.payload,
            })
            .collect();
        let sent = send_all(&self.socket, &out);
        // A failed send (an agent that went away) must not stop the server.
        if let Some(e) = sent.error {
            tracing::debug!("{} of {} datagrams not sent: {e}", sent.failed, out.len());
        }
    }

    /// Reads and handles waiting datagrams, without blocking: until none is left, or
    /// [`BATCH_DATAGRAMS`] were read, or [`BATCH_TIME`] has passed since `started`. Reads
    /// up to [`MAX_BATCH`] datagrams a call, and sends what they are answered together.
    /// Returns whether the socket was left empty.
    fn drain(&mut self, started: Instant) -> io::Result<bool> {
        let mut read = 0;
        while read < BATCH_DATAGRAMS {
            let n = match self.received.recv(&self.socket) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(true),
                // An error reported for an earlier send (ICMP port unreachable: an agent
                // that stopped): the error queue says whose.
                Err(e) if is_transient(&e) => {
                    self.errors_pending |= e.kind() == io::ErrorKind::ConnectionRefused;
                    continue;
                }
                Err(e) => return Err(e),
            };
            read += n;
            let now = Instant::now();
            for i in 0..self.received.len() {
                if let Some(d) = self.received.get(i) {
                    self.session.handle_datagram(d.from, d.payload, now);
                }
                // A Save or Load is answered before the next datagram, as it comes.
                self.process_events();
            }
            self.flush();
            if n < MAX_BATCH {
                // Fewer than asked: the call found the socket empty.
                return Ok(true);
            }
            if now.saturating_duration_since(started) >= BATCH_TIME {
                return Ok(false);
            }
        }
        Ok(false)
    }

    /// Reads the socket's error queue: every agent registered at an address that answered
    /// ICMP port unreachable is removed.
    fn take_errors(&mut self, now: Instant) {
        self.errors_pending = false;
        self.errors_read = now;
        match crate::errqueue::take_refused(&self.socket) {
            Ok(refused) => {
                for addr in refused {
                    self.session.handle_unreachable(addr, now);
                }
                self.flush();
            }
            Err(e) => tracing::debug!("cannot read the socket's error queue: {e}"),
        }
    }

    /// Serves until `stop` becomes true.
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<()> {
        while !stop.load(Ordering::Relaxed) {
            let now = Instant::now();
            if self.errors_pending || now.saturating_duration_since(self.errors_read) >= ERROR_CHECK
            {
                self.take_errors(now);
            }
            if self.wants.iter().any(|w| w.swap(false, Ordering::Relaxed)) {
                self.session.want_snapshot();
            }
            while let Ok(command) = self.commands_rx.try_recv() {
                // Refusals reach the page as responses; nothing else to do with them here.
                let _ = self.session.handle_command(command, Instant::now());
                self.flush();
            }
            let emptied = self.drain(Instant::now())?;
            let now = Instant::now();
            if self.session.handle_timeout(now) {
                self.flush();
                continue;
            }
            if !emptied {
                continue;
            }
            let wait = match self.session.poll_timeout(now) {
                Some(at) => at.saturating_duration_since(now).min(MAX_WAIT),
                None => MAX_WAIT,
            };
            if !wait.is_zero() {
                // Readiness is edge-triggered: the socket was read until it was empty.
                match self.poll.poll(&mut self.events, Some(wait)) {
                    Ok(()) => {
                        self.errors_pending |= self.events.iter().any(|e| e.is_error());
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
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

/// Why the server could not start or apply its scenario.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// A request of the start-up scenario was refused; the ones after it were not applied.
    /// The message holds why (so `cause` is not also the error's source, which an error
    /// report would print again).
    #[error("request {request}: {cause}")]
    Scenario {
        /// Which request, counted from 1.
        request: usize,
        /// Why the session refused it.
        cause: SessionError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::DirStore;
    use simrob_session::{ServerConfig, Session};

    #[test]
    fn the_socket_gets_a_larger_receive_buffer_than_the_kernel_default() {
        // At the kernel default (212,992 bytes on Linux) 70% of a burst of requests from a
        // thousand agents were dropped before the server could read them.
        let config = ServerConfig {
            receiver_port: 0,
            ..ServerConfig::default()
        };
        let dir = std::env::temp_dir().join(format!("simrob-udp-rcvbuf-{}", std::process::id()));
        let server =
            UdpServer::bind(Session::new(config), Box::new(DirStore::new(&dir).unwrap())).unwrap();
        let got = server.receive_buffer().unwrap();
        let default = std::fs::read_to_string("/proc/sys/net/core/rmem_default")
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok());
        let max = std::fs::read_to_string("/proc/sys/net/core/rmem_max")
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok());
        if let (Some(default), Some(max)) = (default, max) {
            if max > default {
                assert!(
                    got > 2 * default,
                    "{got} bytes (default {default}, max {max})"
                );
            }
        }
        assert!(server.set_receive_buffer(1 << 20).unwrap() >= 1 << 20);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
