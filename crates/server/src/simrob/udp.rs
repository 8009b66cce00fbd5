//! The UDP loop around a [`Session`]: one thread owns the socket, the session and the file
//! store; snapshots fan out to observers (the viewer, a recorder) once per iteration.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use simrob_protocol::Request;
use simrob_session::{Event, FileResult, LocalCommand, LogLevel, Observation, Observer, Session};

use super::files::SaveStore;
use super::ServerError;

/// Longest blocking wait, so that a stop request and local commands are seen promptly.
const MAX_WAIT: Duration = Duration::from_millis(50);

/// A bound SimRob server.
pub struct UdpServer {
    socket: UdpSocket,
    session: Session,
    store: Box<dyn SaveStore>,
    buf: Vec<u8>,
    observers: Vec<Observer>,
    commands_rx: Receiver<LocalCommand>,
    commands_tx: Sender<LocalCommand>,
}

impl UdpServer {
    /// Binds `session`'s configured address (`communicationreceiverip:communicationreceiverport`;
    /// port 0 picks a free one); Save and Load go to `store`.
    pub fn bind(session: Session, store: Box<dyn SaveStore>) -> io::Result<UdpServer> {
        let c = session.config();
        let socket = UdpSocket::bind(SocketAddr::new(c.receiver_ip, c.receiver_port))?;
        let (commands_tx, commands_rx) = channel();
        Ok(UdpServer {
            socket,
            session,
            store,
            buf: vec![0u8; 65536],
            observers: Vec::new(),
            commands_rx,
            commands_tx,
        })
    }

    /// Adds an observer. It first receives the world as it is now.
    pub fn add_observer(&mut self, observer: Observer) {
        self.observers.push(observer);
        self.session.set_observed(true);
        self.process_events();
    }

    /// A handle other threads use to send local commands (the viewer's buttons) to the
    /// running loop.
    pub fn commands(&self) -> Sender<LocalCommand> {
        self.commands_tx.clone()
    }

    /// The address agents send to.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    pub fn session(&self) -> &Session {
        &self.session
    }
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
            result.map_err(|source| ServerError::Scenario {
                request: n + 1,
                source,
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

    fn flush(&mut self) {
        self.process_events();
        while let Some(t) = self.session.poll_transmit() {
            // A failed send (an agent that went away) must not stop the server.
            if let Err(e) = self.socket.send_to(&t.payload, t.to) {
                tracing::debug!("send to {} failed: {e}", t.to);
            }
        }
    }

    /// Receives everything already waiting, without blocking.
    fn drain(&mut self) -> io::Result<()> {
        self.socket.set_nonblocking(true)?;
        loop {
            match self.socket.recv_from(&mut self.buf) {
                Ok((n, from)) => {
                    let now = Instant::now();
                    self.session.handle_datagram(from, &self.buf[..n], now);
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
                self.session
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
            while let Ok(command) = self.commands_rx.try_recv() {
                // Refusals reach the page as responses; nothing else to do with them here.
                let _ = self.session.handle_command(command, Instant::now());
                self.flush();
            }
            self.drain()?;
            let now = Instant::now();
            let iterated = self.session.handle_timeout(now);
            if iterated {
                self.flush();
                continue;
            }
            let wait = match self.session.poll_timeout(now) {
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
