//! The Mobile Robot Simulator text protocol (seed 001) and simrob's extensions: parsing a
//! request line and formatting replies. No I/O.
//!
//! # Framing
//!
//! The seed gives none. simrob uses **one message per line**: a request is a line ending in
//! `\n` (a `\r` before it is dropped); every reply is one line ending in `\n`. Blank lines are
//! ignored (no reply). A line may be at most [`MAX_LINE`] bytes.
//!
//! # Messages (seed 001)
//!
//! | request | meaning | reply |
//! |---|---|---|
//! | `Vsaaasggg` | forward speed `saaa`/10 in/s and turn rate `sggg`/10 deg/s (each sign `+` or `-`, 3 digits; + turn = right) | `V` |
//! | `A` | stop | `A` |
//! | `Sxx` | sonar `xx` (00–15) | `Sxxppp` (inches from the surface, 005–110) |
//! | `B` | any bumper closed? | `B0` / `B1` |
//! | `R` | which bumper is closed | `Rxx` (00–19), `R-1` if none |
//! | `P` | odometry | `P` + x, y, heading, ×10, 5 characters each |
//! | `Mtext` | show `text` on the server | `M` |
//!
//! The seed's messages are matched exactly (case, length, signs, digits). Anything else is
//! answered with an error line `E <what is wrong>`; the connection stays open and nothing
//! changes.
//!
//! # Choices the seed leaves open
//!
//! - **Ranges.** Every `Vsaaasggg` value is in range (±99.9); `Sxx` must be 00–15.
//! - **`P` fields.** Values ×10 rounded to the nearest integer, zero-padded to 5 digits
//!   (`P015000130000900` = x 150.0, y 130.0, heading 90.0°). The heading is in `[0, 360)`
//!   (0 = +x, clockwise, y down). A negative value is written `-` + 4 digits (`-0012`);
//!   values are clamped to the field (-999.9 … 9999.9). Robots cannot leave the map, so
//!   negative positions only occur if a map is replaced under a robot.
//! - **`R` with several bumpers closed**: the lowest-numbered closed bumper; **with none**:
//!   `R-1`.
//! - **`S` readings** are rounded to the nearest inch.
//! - **`M` text** is everything after the `M` (may be empty, may contain spaces); the server
//!   prints it with the robot's number.
//! - **`V` and `A`** are answered at once: the robot has no acceleration limit, so it is at
//!   the requested speed from the next step on.
//! - **Collisions.** A robot that would touch a wall, the map border or another robot stops
//!   there (no sliding) and keeps its commanded velocity: it stays pressed against the
//!   obstacle, with the touching bumpers closed, until told otherwise. Turning on the spot
//!   and backing off are always possible.
//! - **Several clients.** Each connection gets its own robot at the start pose, or the
//!   nearest free spot to it (within 400 in); a connection that finds no room gets an error
//!   line and is closed. Robots see each other with their sonars and feel each other with
//!   their bumpers. A client that disconnects removes its robot. Requests are answered in the
//!   order they arrive.
//!
//! # simrob extensions
//!
//! Lines starting with `#` (a character the seed never uses):
//!
//! | request | meaning | reply |
//! |---|---|---|
//! | `#SONARS` | all 16 sonars | `#SONARS p0 p1 … p15` (inches) |
//! | `#BUMPERS` | all 20 bumpers | `#BUMPERS b0b1…b19` (`0`/`1` each) |
//! | `#PLACE x y a` | move this robot (inches, degrees) | `#PLACE` |
//! | `#LOAD file` | replace the map (file in the map directory) | `#LOAD` |
//! | `#MERGE file` | merge a vector map onto the map | `#MERGE` |
//! | `#RECT x1 y1 x2 y2` | add one rectangle | `#RECT` |
//! | `#STEP n` | stepped mode: advance n steps (1–100000) | `#STEP t` (simulated seconds) |
//! | `#SNAPSHOT file` | write a PNG of the world (map directory) | `#SNAPSHOT` |
//! | `#HELP` | list the messages | `#HELP …` |

use std::fmt;

/// The longest request line accepted, in bytes.
pub const MAX_LINE: usize = 4096;

/// The prefix of an error reply.
pub const ERROR_PREFIX: &str = "E ";

/// A parsed request.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// `Vsaaasggg`: velocities in tenths (in/s, deg/s).
    SetVel {
        /// Forward speed ×10.
        forward_tenths: i32,
        /// Turn rate ×10, positive = right.
        turn_tenths: i32,
    },
    /// `A`.
    Stop,
    /// `Sxx`.
    Sonar(usize),
    /// `B`.
    Bumper,
    /// `R`.
    BumperRel,
    /// `P`.
    Pos,
    /// `Mtext`.
    Message(String),
    /// `#SONARS`.
    Sonars,
    /// `#BUMPERS`.
    Bumpers,
    /// `#PLACE x y a`.
    Place {
        /// Centre x, inches.
        x: f64,
        /// Centre y, inches.
        y: f64,
        /// Heading, degrees.
        heading: f64,
    },
    /// `#LOAD file`.
    Load(String),
    /// `#MERGE file`.
    Merge(String),
    /// `#RECT x1 y1 x2 y2`.
    Rect([f64; 4]),
    /// `#STEP n`.
    Step(u32),
    /// `#SNAPSHOT file`.
    Snapshot(String),
    /// `#HELP`.
    Help,
}

/// Why a request line was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtocolError(pub String);

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProtocolError {}

fn err<T>(msg: impl Into<String>) -> Result<T, ProtocolError> {
    Err(ProtocolError(msg.into()))
}

/// Strips the line terminator (`\n`, `\r\n`). Returns `None` for a blank line.
pub fn strip_line(line: &str) -> Option<&str> {
    let l = line.strip_suffix('\n').unwrap_or(line);
    let l = l.strip_suffix('\r').unwrap_or(l);
    (!l.trim().is_empty()).then_some(l)
}

fn signed3(s: &str, what: &str, msg: &str) -> Result<i32, ProtocolError> {
    let b = s.as_bytes();
    let sign = match b.first() {
        Some(b'+') => 1,
        Some(b'-') => -1,
        _ => {
            return err(format!(
                "{msg}: the {what} must start with + or -, found {s:?}"
            ))
        }
    };
    if b.len() != 4 || !b[1..].iter().all(u8::is_ascii_digit) {
        return err(format!(
            "{msg}: the {what} must be a sign and 3 digits (tenths), found {s:?}"
        ));
    }
    let v = b[1..]
        .iter()
        .fold(0i32, |acc, d| acc * 10 + i32::from(d - b'0'));
    Ok(sign * v)
}

fn number(s: &str, what: &str) -> Result<f64, ProtocolError> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => err(format!("{what}: {s:?} is not a finite number")),
    }
}

/// Parses one request line (terminator already stripped, see [`strip_line`]).
pub fn parse_request(line: &str) -> Result<Request, ProtocolError> {
    if line.len() > MAX_LINE {
        return err(format!(
            "line too long ({} bytes, at most {MAX_LINE})",
            line.len()
        ));
    }
    let mut chars = line.chars();
    let Some(tag) = chars.next() else {
        return err("empty message");
    };
    let rest = chars.as_str();
    match tag {
        'V' => {
            const MSG: &str = "V needs Vsaaasggg, e.g. V+100-300 (10 in/s forward, 30 deg/s left)";
            if rest.len() != 8 || !rest.is_ascii() {
                return err(format!("{MSG}; found {line:?}"));
            }
            Ok(Request::SetVel {
                forward_tenths: signed3(&rest[..4], "speed", MSG)?,
                turn_tenths: signed3(&rest[4..], "turn rate", MSG)?,
            })
        }
        'A' if rest.is_empty() => Ok(Request::Stop),
        'B' if rest.is_empty() => Ok(Request::Bumper),
        'R' if rest.is_empty() => Ok(Request::BumperRel),
        'P' if rest.is_empty() => Ok(Request::Pos),
        'A' | 'B' | 'R' | 'P' => err(format!(
            "{tag} takes no arguments; found {line:?} (send just \"{tag}\")"
        )),
        'S' => {
            let b = rest.as_bytes();
            if b.len() != 2 || !b.iter().all(u8::is_ascii_digit) {
                return err(format!(
                    "S needs 2 digits for the sonar, e.g. S00 … S15; found {line:?}"
                ));
            }
            let i = usize::from(b[0] - b'0') * 10 + usize::from(b[1] - b'0');
            if i >= 16 {
                return err(format!("no sonar {i:02}: sonars are 00 … 15"));
            }
            Ok(Request::Sonar(i))
        }
        'M' => Ok(Request::Message(rest.to_string())),
        '#' => parse_extension(rest),
        _ => err(format!(
            "unknown message {line:?}: messages are V, A, S, B, R, P, M (and #HELP for simrob's extensions)"
        )),
    }
}

fn parse_extension(rest: &str) -> Result<Request, ProtocolError> {
    let (cmd, args) = match rest.split_once(char::is_whitespace) {
        Some((c, a)) => (c, a.trim()),
        None => (rest, ""),
    };
    let nums = |n: usize, usage: &str| -> Result<Vec<f64>, ProtocolError> {
        let v: Vec<&str> = args.split_whitespace().collect();
        if v.len() != n {
            return err(format!("usage: {usage}"));
        }
        v.iter().map(|s| number(s, usage)).collect()
    };
    let file = |usage: &str| -> Result<String, ProtocolError> {
        if args.is_empty() {
            return err(format!("usage: {usage}"));
        }
        Ok(args.to_string())
    };
    let none = |r: Request, name: &str| -> Result<Request, ProtocolError> {
        if args.is_empty() {
            Ok(r)
        } else {
            err(format!("#{name} takes no arguments"))
        }
    };
    match cmd.to_ascii_uppercase().as_str() {
        "SONARS" => none(Request::Sonars, "SONARS"),
        "BUMPERS" => none(Request::Bumpers, "BUMPERS"),
        "HELP" => none(Request::Help, "HELP"),
        "PLACE" => {
            let v = nums(3, "#PLACE x y heading (inches, degrees)")?;
            Ok(Request::Place {
                x: v[0],
                y: v[1],
                heading: v[2],
            })
        }
        "RECT" => {
            let v = nums(4, "#RECT x1 y1 x2 y2 (inches)")?;
            Ok(Request::Rect([v[0], v[1], v[2], v[3]]))
        }
        "LOAD" => Ok(Request::Load(file("#LOAD file (in the map directory)")?)),
        "MERGE" => Ok(Request::Merge(file("#MERGE file (in the map directory)")?)),
        "SNAPSHOT" => Ok(Request::Snapshot(file(
            "#SNAPSHOT file.png (in the map directory)",
        )?)),
        "STEP" => match args.parse::<u32>() {
            Ok(n) if (1..=100_000).contains(&n) => Ok(Request::Step(n)),
            _ => err("usage: #STEP n (1 … 100000 steps)"),
        },
        other => err(format!("unknown extension #{other}: try #HELP")),
    }
}

/// Help text for `#HELP` (one line).
pub const HELP: &str = "#HELP Vsaaasggg A Sxx B R P Mtext | #SONARS #BUMPERS #PLACE x y a #LOAD file #MERGE file #RECT x1 y1 x2 y2 #STEP n #SNAPSHOT file #HELP";

/// An error reply line (without the terminator).
pub fn error_reply(e: &impl fmt::Display) -> String {
    let mut s = format!("{ERROR_PREFIX}{e}");
    s.retain(|c| c != '\n' && c != '\r');
    s
}

/// `Sxxppp`: the reading rounded to the nearest inch, 3 digits.
pub fn sonar_reply(i: usize, reading: f64) -> String {
    let p = reading.round().clamp(0.0, 999.0) as u32;
    format!("S{i:02}{p:03}")
}

/// `Rxx`: the bumper, or `R-1`.
pub fn bumper_rel_reply(bumper: Option<usize>) -> String {
    match bumper {
        Some(b) => format!("R{b:02}"),
        None => "R-1".into(),
    }
}

/// One 5-character `P` field: `value` ×10 rounded, zero-padded; negative as `-` + 4 digits;
/// clamped to the field.
pub fn pos_field(value: f64) -> String {
    let v = (value * 10.0).round();
    let v = if v.is_finite() { v } else { 0.0 };
    let v = v.clamp(-9999.0, 99999.0) as i64;
    if v < 0 {
        format!("-{:04}", -v)
    } else {
        format!("{v:05}")
    }
}

/// `P` + x, y, heading.
pub fn pos_reply(x: f64, y: f64, heading_deg: f64) -> String {
    let mut a = (heading_deg * 10.0).round();
    if !(0.0..3600.0).contains(&a) {
        a = a.rem_euclid(3600.0);
    }
    format!("P{}{}{}", pos_field(x), pos_field(y), pos_field(a / 10.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_messages_parse() {
        assert_eq!(
            parse_request("V+100-300"),
            Ok(Request::SetVel {
                forward_tenths: 100,
                turn_tenths: -300
            })
        );
        assert_eq!(
            parse_request("V-999+000"),
            Ok(Request::SetVel {
                forward_tenths: -999,
                turn_tenths: 0
            })
        );
        assert_eq!(parse_request("A"), Ok(Request::Stop));
        assert_eq!(parse_request("S07"), Ok(Request::Sonar(7)));
        assert_eq!(parse_request("B"), Ok(Request::Bumper));
        assert_eq!(parse_request("R"), Ok(Request::BumperRel));
        assert_eq!(parse_request("P"), Ok(Request::Pos));
        assert_eq!(
            parse_request("MHello world!"),
            Ok(Request::Message("Hello world!".into()))
        );
        assert_eq!(parse_request("M"), Ok(Request::Message(String::new())));
    }

    #[test]
    fn malformed_messages_are_explained() {
        for (line, needle) in [
            ("V+10-300", "Vsaaasggg"),
            ("V100-3000", "+ or -"),
            ("V+1x0-300", "3 digits"),
            ("V+100*300", "+ or -"),
            ("S16", "no sonar 16"),
            ("S1", "2 digits"),
            ("Sxx", "2 digits"),
            ("A1", "no arguments"),
            ("P ", "no arguments"),
            ("x", "unknown message"),
            ("v+100+000", "unknown message"),
            ("#FOO", "unknown extension"),
            ("#STEP 0", "usage"),
            ("#PLACE 1 2", "usage"),
            ("#PLACE 1 2 NaN", "finite"),
            ("#LOAD", "usage"),
            ("V+100-3é0", "Vsaaasggg"),
        ] {
            let e = parse_request(line).expect_err(line);
            assert!(e.0.contains(needle), "{line:?}: {e}");
        }
    }

    #[test]
    fn replies_have_the_seed_shapes() {
        assert_eq!(sonar_reply(3, 5.0), "S03005");
        assert_eq!(sonar_reply(15, 109.6), "S15110");
        assert_eq!(bumper_rel_reply(Some(7)), "R07");
        assert_eq!(bumper_rel_reply(None), "R-1");
        assert_eq!(pos_reply(150.0, 130.0, 90.0), "P015000130000900");
        assert_eq!(pos_reply(12.34, 0.0, 359.97), "P001230000000000");
        assert_eq!(
            pos_reply(-1.2, 99999.0, 0.0),
            "P-001299999".to_string() + "00000"
        );
        assert_eq!(strip_line("A\r\n"), Some("A"));
        assert_eq!(strip_line("\r\n"), None);
        assert_eq!(error_reply(&"bad\nthing"), "E badthing");
    }
}
