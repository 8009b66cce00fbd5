//! The Mobile Robot Simulator client: the component a robot controller uses to talk to
//! `simrob mrs`, with the Mobile Robot Simulator manual's calls — [`MrsClient::connect`],
//! [`disconnect`], [`show_message`], [`set_vel`], [`stop`], [`get_sonar`], [`get_bumper`],
//! [`get_bumper_rel`], [`get_pos`] — plus simrob's extensions ([`get_sonars`],
//! [`get_bumpers`], [`place`], [`step`], …).
//!
//! One request line, one reply line, written and read with [`crate::protocol`]. Units: inches,
//! degrees, seconds; a positive turn rate turns right (clockwise); y grows downwards.
//!
//! ```no_run
//! use simrob_mrs::MrsClient;
//!
//! let mut robot = MrsClient::connect("localhost:7020")?;
//! robot.show_message("Hello world!")?;
//! robot.set_vel(10.0, -30.0)?; // 10 in/s forward, turning left at 30°/s
//! let s = robot.get_sonar(0)?; // inches ahead, 5 … 110
//! if robot.get_bumper()? {
//!     let b = robot.get_bumper_rel()?; // Some(bumper index)
//! }
//! let (x, y, a) = robot.get_pos()?;
//! robot.stop()?;
//! robot.disconnect()?;
//! # Ok::<(), simrob_mrs::MrsError>(())
//! ```
//!
//! [`disconnect`]: MrsClient::disconnect
//! [`show_message`]: MrsClient::show_message
//! [`set_vel`]: MrsClient::set_vel
//! [`stop`]: MrsClient::stop
//! [`get_sonar`]: MrsClient::get_sonar
//! [`get_bumper`]: MrsClient::get_bumper
//! [`get_bumper_rel`]: MrsClient::get_bumper_rel
//! [`get_pos`]: MrsClient::get_pos
//! [`get_sonars`]: MrsClient::get_sonars
//! [`get_bumpers`]: MrsClient::get_bumpers
//! [`place`]: MrsClient::place
//! [`step`]: MrsClient::step

use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::protocol::{
    parse_bumper_rel_reply, parse_bumper_reply, parse_bumpers_reply, parse_error_reply,
    parse_pos_reply, parse_sonar_reply, parse_sonars_reply, parse_step_reply, plain_reply,
    set_vel_request, Request,
};

/// The port `simrob mrs` listens on by default.
pub const DEFAULT_PORT: u16 = 7020;

/// How long [`MrsClient`] waits for a reply unless [`MrsClient::set_timeout`] says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Number of sonars of the Nomad-200.
pub const SONARS: usize = 16;

/// Number of bumpers of the Nomad-200.
pub const BUMPERS: usize = 20;

/// What went wrong talking to the server.
#[derive(Debug, thiserror::Error)]
pub enum MrsError {
    /// The connection failed.
    #[error("connection: {0}")]
    Io(#[from] io::Error),
    /// The server closed the connection (its robot is gone; [`MrsClient::reconnect`] gets a
    /// new one).
    #[error("the server closed the connection; reconnect for a new robot")]
    Closed,
    /// The server closed the connection and said why (idle too long, full server, …).
    #[error("the server closed the connection: {0}; reconnect for a new robot")]
    ClosedBecause(String),
    /// No reply came within the timeout ([`MrsClient::set_timeout`]). A late reply would be
    /// taken for the next one's, so the connection is not used again: reconnect.
    #[error("no reply to {request:?} within {} s; the connection is given up, reconnect", after.as_secs_f64())]
    TimedOut {
        /// What was sent.
        request: String,
        /// How long the client waited.
        after: Duration,
    },
    /// An earlier request timed out or the connection ended: reconnect first.
    #[error("this connection was given up ({0}); reconnect first")]
    GivenUp(String),
    /// The server answered with an error line.
    #[error("the server refused {request:?}: {message}")]
    Refused {
        /// What was sent.
        request: String,
        /// The server's explanation.
        message: String,
    },
    /// The reply does not have the expected shape.
    #[error("unexpected reply {reply:?} to {request:?}")]
    BadReply {
        /// What was sent.
        request: String,
        /// What came back.
        reply: String,
    },
    /// An argument cannot be sent.
    #[error("{0}")]
    BadArgument(String),
}

/// A connection to a Mobile Robot Simulator server; the server gives it its own robot.
#[derive(Debug)]
pub struct MrsClient {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    peer: SocketAddr,
    timeout: Option<Duration>,
    /// Why the connection may not be used again, once it may not.
    given_up: Option<String>,
}

impl MrsClient {
    /// Connects (`"host:port"`, or just `"host"` for [`DEFAULT_PORT`]). Replies are awaited
    /// for at most 10 s (see [`MrsClient::set_timeout`]).
    pub fn connect(addr: &str) -> Result<MrsClient, MrsError> {
        let stream = if addr.contains(':') {
            TcpStream::connect(addr)?
        } else {
            TcpStream::connect((addr, DEFAULT_PORT))?
        };
        Self::from_stream(stream)
    }

    /// Connects to a socket address.
    pub fn connect_addr(addr: impl ToSocketAddrs) -> Result<MrsClient, MrsError> {
        Self::from_stream(TcpStream::connect(addr)?)
    }

    fn from_stream(stream: TcpStream) -> Result<MrsClient, MrsError> {
        Self::with_timeout(stream, Some(DEFAULT_TIMEOUT))
    }

    fn with_timeout(stream: TcpStream, timeout: Option<Duration>) -> Result<MrsClient, MrsError> {
        stream.set_nodelay(true)?;
        stream.set_read_timeout(timeout)?;
        let writer = stream.try_clone()?;
        Ok(MrsClient {
            peer: stream.peer_addr()?,
            reader: BufReader::new(stream),
            writer,
            timeout,
            given_up: None,
        })
    }

    /// How long to wait for a reply (`None` = forever).
    pub fn set_timeout(&mut self, timeout: Option<Duration>) -> Result<(), MrsError> {
        self.writer.set_read_timeout(timeout)?;
        self.timeout = timeout;
        Ok(())
    }

    /// Closes this connection (if still open) and connects again to the same server, with the
    /// same timeout: the server gives the new connection a new robot at its start pose (the
    /// old robot went with the old connection). After [`MrsError::Closed`],
    /// [`MrsError::ClosedBecause`] or [`MrsError::TimedOut`] this is how a controller goes on.
    pub fn reconnect(&mut self) -> Result<(), MrsError> {
        let _ = self.writer.shutdown(Shutdown::Both);
        *self = Self::with_timeout(TcpStream::connect(self.peer)?, self.timeout)?;
        Ok(())
    }

    /// The server's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// Closes the connection; the server removes the robot.
    pub fn disconnect(self) -> Result<(), MrsError> {
        self.writer.shutdown(Shutdown::Both)?;
        Ok(())
    }

    /// Sends one request line and returns the reply line (without terminator). An error line
    /// from the server becomes [`MrsError::Refused`].
    pub fn request(&mut self, line: &str) -> Result<String, MrsError> {
        if line.contains('\n') || line.contains('\r') {
            return Err(MrsError::BadArgument(
                "a request is one line (no line breaks)".into(),
            ));
        }
        if let Some(why) = &self.given_up {
            return Err(MrsError::GivenUp(why.clone()));
        }
        let mut out = Vec::with_capacity(line.len() + 1);
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
        if let Err(e) = self.writer.write_all(&out) {
            self.given_up = Some(e.to_string());
            return Err(e.into());
        }
        let mut reply = String::new();
        match self.reader.read_line(&mut reply) {
            Ok(0) => {
                self.given_up = Some("the server closed it".into());
                return Err(MrsError::Closed);
            }
            Ok(_) if !reply.ends_with('\n') => {
                self.given_up = Some("the server closed it mid-reply".into());
                return Err(MrsError::Closed);
            }
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                let after = self.timeout.unwrap_or_default();
                self.given_up = Some(format!(
                    "no reply to {line:?} within {} s",
                    after.as_secs_f64()
                ));
                return Err(MrsError::TimedOut {
                    request: line.to_string(),
                    after,
                });
            }
            Err(e) => {
                self.given_up = Some(e.to_string());
                return Err(e.into());
            }
        }
        let reply = reply.trim_end_matches(['\n', '\r']).to_string();
        if let Some(message) = parse_error_reply(&reply) {
            if let Some(why) = message.strip_prefix("closing: ") {
                // The server's farewell (idle, full): it closes the connection after it.
                self.given_up = Some(format!("the server closed it: {why}"));
                return Err(MrsError::ClosedBecause(why.to_string()));
            }
            return Err(MrsError::Refused {
                request: line.to_string(),
                message: message.to_string(),
            });
        }
        Ok(reply)
    }

    /// Sends `req` and reads the reply with `read`; a reply of another shape is
    /// [`MrsError::BadReply`].
    fn ask<T>(
        &mut self,
        req: &Request,
        read: impl FnOnce(&str) -> Option<T>,
    ) -> Result<T, MrsError> {
        let line = req.to_string();
        let reply = self.request(&line)?;
        read(&reply).ok_or(MrsError::BadReply {
            request: line,
            reply,
        })
    }

    /// Sends a request whose reply carries no data (`V`, `A`, `M`, `#PLACE`, …).
    fn expect(&mut self, req: &Request) -> Result<(), MrsError> {
        let want = plain_reply(req);
        self.ask(req, |r| (Some(r) == want).then_some(()))
    }

    /// Shows `text` on the server (`Mtext`).
    pub fn show_message(&mut self, text: &str) -> Result<(), MrsError> {
        self.expect(&Request::Message(text.into()))
    }

    /// Sets the forward speed (in/s, negative = backwards) and turn rate (deg/s, positive =
    /// right). Values are rounded to tenths and limited to ±99.9, what the protocol carries.
    pub fn set_vel(&mut self, forward: f64, turn: f64) -> Result<(), MrsError> {
        let req = set_vel_request(forward, turn)
            .ok_or_else(|| MrsError::BadArgument("velocities must be finite numbers".into()))?;
        self.expect(&req)
    }

    /// Stops the robot (`A`).
    pub fn stop(&mut self) -> Result<(), MrsError> {
        self.expect(&Request::Stop)
    }

    /// Sonar `i` (0–15): inches from the robot's surface to the obstacle, 5–110.
    pub fn get_sonar(&mut self, i: usize) -> Result<u32, MrsError> {
        if i >= SONARS {
            return Err(MrsError::BadArgument(format!(
                "no sonar {i}: sonars are 0 … 15"
            )));
        }
        self.ask(&Request::Sonar(i), |r| parse_sonar_reply(i, r))
    }

    /// Whether any bumper is closed (`B`).
    pub fn get_bumper(&mut self) -> Result<bool, MrsError> {
        self.ask(&Request::Bumper, parse_bumper_reply)
    }

    /// The closed bumper (`R`): `Some(0…19)`, or `None` when none is.
    pub fn get_bumper_rel(&mut self) -> Result<Option<usize>, MrsError> {
        self.ask(&Request::BumperRel, parse_bumper_rel_reply)
    }

    /// Odometry (`P`): x, y (inches) and heading (degrees), to a tenth.
    pub fn get_pos(&mut self) -> Result<(f64, f64, f64), MrsError> {
        self.ask(&Request::Pos, parse_pos_reply)
    }

    /// All 16 sonars in one request (`#SONARS`, a simrob extension).
    pub fn get_sonars(&mut self) -> Result<[u32; SONARS], MrsError> {
        self.ask(&Request::Sonars, parse_sonars_reply)
    }

    /// All 20 bumpers (`#BUMPERS`, a simrob extension): `true` = closed.
    pub fn get_bumpers(&mut self) -> Result<[bool; BUMPERS], MrsError> {
        self.ask(&Request::Bumpers, parse_bumpers_reply)
    }

    /// Moves this robot to (x, y) facing `heading` degrees (`#PLACE`, a simrob extension).
    pub fn place(&mut self, x: f64, y: f64, heading: f64) -> Result<(), MrsError> {
        self.expect(&Request::Place { x, y, heading })
    }

    /// On a stepped server, advances `n` steps (`#STEP`); returns the simulated time.
    pub fn step(&mut self, n: u32) -> Result<f64, MrsError> {
        self.ask(&Request::Step(n), parse_step_reply)
    }
}
