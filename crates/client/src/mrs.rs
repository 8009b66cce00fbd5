//! Mobile Robot Simulator client (seed 001): the component a robot controller uses to talk
//! to `simrob mrs`, with the seed's calls — [`MrsClient::connect`], [`disconnect`],
//! [`show_message`], [`set_vel`], [`stop`], [`get_sonar`], [`get_bumper`],
//! [`get_bumper_rel`], [`get_pos`] — plus simrob's extensions ([`get_sonars`],
//! [`get_bumpers`], [`place`], [`step`], …).
//!
//! One request line, one reply line (see `simrob_server::mrs::protocol`). Units: inches,
//! degrees, seconds; a positive turn rate turns right (clockwise); y grows downwards.
//!
//! ```no_run
//! use simrob_client::mrs::MrsClient;
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
//! # Ok::<(), simrob_client::mrs::MrsError>(())
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

pub mod wander;

use std::io::{self, BufRead, BufReader, Write};
use std::net::{Shutdown, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// The port `simrob mrs` listens on by default.
pub const DEFAULT_PORT: u16 = 7020;

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
    /// The server closed the connection.
    #[error("the server closed the connection")]
    Closed,
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
        stream.set_nodelay(true)?;
        stream.set_read_timeout(Some(Duration::from_secs(10)))?;
        let writer = stream.try_clone()?;
        Ok(MrsClient {
            reader: BufReader::new(stream),
            writer,
        })
    }

    /// How long to wait for a reply (`None` = forever).
    pub fn set_timeout(&mut self, timeout: Option<Duration>) -> Result<(), MrsError> {
        self.writer.set_read_timeout(timeout)?;
        Ok(())
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
        let mut out = Vec::with_capacity(line.len() + 1);
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
        self.writer.write_all(&out)?;
        let mut reply = String::new();
        if self.reader.read_line(&mut reply)? == 0 {
            return Err(MrsError::Closed);
        }
        let reply = reply.trim_end_matches(['\n', '\r']).to_string();
        if let Some(message) = reply.strip_prefix("E ") {
            return Err(MrsError::Refused {
                request: line.to_string(),
                message: message.to_string(),
            });
        }
        Ok(reply)
    }

    fn expect(&mut self, line: &str, want: &str) -> Result<(), MrsError> {
        let reply = self.request(line)?;
        if reply == want {
            Ok(())
        } else {
            Err(MrsError::BadReply {
                request: line.into(),
                reply,
            })
        }
    }

    /// Shows `text` on the server (`Mtext`).
    pub fn show_message(&mut self, text: &str) -> Result<(), MrsError> {
        self.expect(&format!("M{text}"), "M")
    }

    /// Sets the forward speed (in/s, negative = backwards) and turn rate (deg/s, positive =
    /// right). Values are rounded to tenths and limited to ±99.9, what the protocol carries.
    pub fn set_vel(&mut self, forward: f64, turn: f64) -> Result<(), MrsError> {
        if !(forward.is_finite() && turn.is_finite()) {
            return Err(MrsError::BadArgument(
                "velocities must be finite numbers".into(),
            ));
        }
        self.expect(&vel_message(forward, turn), "V")
    }

    /// Stops the robot (`A`).
    pub fn stop(&mut self) -> Result<(), MrsError> {
        self.expect("A", "A")
    }

    /// Sonar `i` (0–15): inches from the robot's surface to the obstacle, 5–110.
    pub fn get_sonar(&mut self, i: usize) -> Result<u32, MrsError> {
        if i >= SONARS {
            return Err(MrsError::BadArgument(format!(
                "no sonar {i}: sonars are 0 … 15"
            )));
        }
        let req = format!("S{i:02}");
        let reply = self.request(&req)?;
        reply
            .strip_prefix(&req)
            .filter(|p| p.len() == 3)
            .and_then(|p| p.parse().ok())
            .ok_or(MrsError::BadReply {
                request: req,
                reply,
            })
    }

    /// Whether any bumper is closed (`B`).
    pub fn get_bumper(&mut self) -> Result<bool, MrsError> {
        match self.request("B")?.as_str() {
            "B0" => Ok(false),
            "B1" => Ok(true),
            other => Err(MrsError::BadReply {
                request: "B".into(),
                reply: other.into(),
            }),
        }
    }

    /// The closed bumper (`R`): `Some(0…19)`, or `None` when none is.
    pub fn get_bumper_rel(&mut self) -> Result<Option<usize>, MrsError> {
        let reply = self.request("R")?;
        match reply.strip_prefix('R') {
            Some("-1") => Ok(None),
            Some(d) if d.len() == 2 => d.parse().map(Some).map_err(|_| MrsError::BadReply {
                request: "R".into(),
                reply: reply.clone(),
            }),
            _ => Err(MrsError::BadReply {
                request: "R".into(),
                reply,
            }),
        }
    }

    /// Odometry (`P`): x, y (inches) and heading (degrees), to a tenth.
    pub fn get_pos(&mut self) -> Result<(f64, f64, f64), MrsError> {
        let reply = self.request("P")?;
        parse_pos(&reply).ok_or(MrsError::BadReply {
            request: "P".into(),
            reply,
        })
    }

    /// All 16 sonars in one request (`#SONARS`, a simrob extension).
    pub fn get_sonars(&mut self) -> Result<[u32; SONARS], MrsError> {
        let reply = self.request("#SONARS")?;
        let bad = || MrsError::BadReply {
            request: "#SONARS".into(),
            reply: reply.clone(),
        };
        let rest = reply.strip_prefix("#SONARS").ok_or_else(bad)?;
        let mut out = [0u32; SONARS];
        let mut n = 0;
        for (slot, word) in out.iter_mut().zip(rest.split_whitespace()) {
            *slot = word.parse().map_err(|_| bad())?;
            n += 1;
        }
        if n == SONARS {
            Ok(out)
        } else {
            Err(bad())
        }
    }

    /// All 20 bumpers (`#BUMPERS`, a simrob extension): `true` = closed.
    pub fn get_bumpers(&mut self) -> Result<[bool; BUMPERS], MrsError> {
        let reply = self.request("#BUMPERS")?;
        let bits = reply.strip_prefix("#BUMPERS ").unwrap_or("");
        if bits.len() != BUMPERS || !bits.bytes().all(|b| b == b'0' || b == b'1') {
            return Err(MrsError::BadReply {
                request: "#BUMPERS".into(),
                reply,
            });
        }
        let mut out = [false; BUMPERS];
        for (slot, b) in out.iter_mut().zip(bits.bytes()) {
            *slot = b == b'1';
        }
        Ok(out)
    }

    /// Moves this robot to (x, y) facing `heading` degrees (`#PLACE`, a simrob extension).
    pub fn place(&mut self, x: f64, y: f64, heading: f64) -> Result<(), MrsError> {
        self.expect(&format!("#PLACE {x} {y} {heading}"), "#PLACE")
    }

    /// On a stepped server, advances `n` steps (`#STEP`); returns the simulated time.
    pub fn step(&mut self, n: u32) -> Result<f64, MrsError> {
        let req = format!("#STEP {n}");
        let reply = self.request(&req)?;
        reply
            .strip_prefix("#STEP ")
            .and_then(|t| t.parse().ok())
            .ok_or(MrsError::BadReply {
                request: req,
                reply,
            })
    }
}

/// The `Vsaaasggg` message for these velocities (rounded to tenths, limited to ±99.9).
pub fn vel_message(forward: f64, turn: f64) -> String {
    let field = |v: f64| {
        let t = (v * 10.0).round().clamp(-999.0, 999.0) as i32;
        format!("{}{:03}", if t < 0 { '-' } else { '+' }, t.abs())
    };
    format!("V{}{}", field(forward), field(turn))
}

/// Reads a `P` reply: x, y, heading.
pub fn parse_pos(reply: &str) -> Option<(f64, f64, f64)> {
    let body = reply.strip_prefix('P')?;
    if body.len() != 15 || !body.is_ascii() {
        return None;
    }
    let field = |s: &str| s.parse::<i64>().ok().map(|v| v as f64 / 10.0);
    Some((
        field(&body[..5])?,
        field(&body[5..10])?,
        field(&body[10..])?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        assert_eq!(vel_message(10.0, -30.0), "V+100-300");
        assert_eq!(vel_message(-0.04, 500.0), "V+000+999");
        assert_eq!(vel_message(-2.55, 0.0), "V-026+000");
        assert_eq!(parse_pos("P015000130000900"), Some((150.0, 130.0, 90.0)));
        assert_eq!(parse_pos("P-001200100359 9"), None);
        assert_eq!(parse_pos("P-00120010003599"), Some((-1.2, 10.0, 359.9)));
    }
}
