//! The Mobile Robot Simulator text protocol, as its manual gives it, and simrob's extensions:
//! parsing a request line and formatting replies. No I/O.
//!
//! # Framing
//!
//! The Mobile Robot Simulator manual gives none. simrob uses **one message per line**: a request is
//! a line ending in `\n` (a `\r` before it is dropped); every reply is one line ending in `\n`.
//! Blank lines are ignored (no reply). A line may be at most [`MAX_LINE`] bytes.
//!
//! # Messages (as the manual lists them)
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
//! The manual's messages are matched exactly (case, length, signs, digits). Anything else is
//! answered with an error line `E <what is wrong>`; the connection stays open and nothing
//! changes.
//!
//! # Choices the manual leaves open
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
//!   prints it with the robot's number, control characters written as escapes (`\u{1b}`).
//! - **`V` and `A`** are answered at once: the robot has no acceleration limit, so it is at
//!   the requested speed from the next step on.
//! - **Collisions.** A robot that would touch a wall, the map border or another robot stops
//!   there (no sliding) and keeps its commanded velocity: it stays pressed against the
//!   obstacle, with the touching bumpers closed, until told otherwise. Turning on the spot
//!   and backing off are always possible.
//! - **Several clients.** Each connection gets its own robot at the start pose, or the
//!   nearest free spot to it (within 400 in); a connection that finds no room, or arrives
//!   when the server already has its most robots (`--max-clients`, 64) and none of them has
//!   been silent for `--make-room-after` seconds (10), gets an error line and is closed; else
//!   the connection silent longest gets `E closing: …`, is closed, and the newcomer takes its
//!   place. A connection that sends nothing for `--idle-timeout` seconds (600) gets
//!   `E closing: …` and is closed; one that hangs up before the server took it gets no
//!   robot. A client that reconnects gets a new robot at the start pose. Robots see each other with their sonars and feel each other with
//!   their bumpers. A client that disconnects removes its robot. Requests are answered in the
//!   order they arrive.
//!
//! # simrob extensions
//!
//! Lines starting with `#` (a character the manual never uses):
//!
//! | request | meaning | reply |
//! |---|---|---|
//! | `#SONARS` | all 16 sonars | `#SONARS p0 p1 … p15` (inches) |
//! | `#BUMPERS` | all 20 bumpers | `#BUMPERS b0b1…b19` (`0`/`1` each) |
//! | `#PLACE x y a` | move this robot (inches, degrees; `a` taken modulo 360, at most [`MAX_PLACE_HEADING`] either way) | `#PLACE` |
//! | `#LOAD file` | replace the map (a plain file name in the map directory) | `#LOAD` |
//! | `#MERGE file` | merge a vector map onto the map | `#MERGE` |
//! | `#RECT x1 y1 x2 y2` | add one rectangle (inside the map) | `#RECT` |
//! | `#STEP n` | stepped mode: advance n steps (1 to the server's `max_step`, 100000 unless told) | `#STEP t` (simulated seconds, as many decimals as the timestep, at least 2) |
//! | `#SNAPSHOT file.png` | write a PNG of the world (map directory; the name must end in `.png`) | `#SNAPSHOT` |
//! | `#HELP` | list the messages | `#HELP …` |

use std::fmt;

/// The longest request line accepted, in bytes.
pub const MAX_LINE: usize = 4096;

/// The largest heading `#PLACE` takes either way, in degrees: a hundred turns. Headings are
/// taken modulo 360 (`#PLACE 150 150 -90` faces as `270`, `450` as `90`); beyond this a
/// heading is no longer a direction anyone meant and is refused.
pub const MAX_PLACE_HEADING: f64 = 36_000.0;

/// Whether `heading` (degrees) is one `#PLACE` takes: finite and at most
/// [`MAX_PLACE_HEADING`] either way (the error says so).
pub fn check_heading(heading: f64) -> Result<f64, String> {
    if heading.is_finite() && heading.abs() <= MAX_PLACE_HEADING {
        Ok(heading)
    } else {
        Err(format!(
            "heading {} is out of range: at most {MAX_PLACE_HEADING} degrees either way (taken modulo 360)",
            simrob_math::Shown(heading)
        ))
    }
}

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
                heading: check_heading(v[2]).map_err(|e| ProtocolError(format!("#PLACE {e}")))?,
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
            Ok(n) if n >= 1 => Ok(Request::Step(n)),
            _ => err("usage: #STEP n (n steps, at least 1; the server's --max-step at most)"),
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

// ---------------------------------------------------------------------------------------------
// The client's side: requests written, replies read. Each writer above has its reader here, and
// the tests check that the two agree.

impl fmt::Display for Request {
    /// The request line (without terminator) that [`parse_request`] reads back as `self`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let field = |t: i32| format!("{}{:03}", if t < 0 { '-' } else { '+' }, t.unsigned_abs());
        match self {
            Request::SetVel {
                forward_tenths,
                turn_tenths,
            } => write!(f, "V{}{}", field(*forward_tenths), field(*turn_tenths)),
            Request::Stop => f.write_str("A"),
            Request::Sonar(i) => write!(f, "S{i:02}"),
            Request::Bumper => f.write_str("B"),
            Request::BumperRel => f.write_str("R"),
            Request::Pos => f.write_str("P"),
            Request::Message(text) => write!(f, "M{text}"),
            Request::Sonars => f.write_str("#SONARS"),
            Request::Bumpers => f.write_str("#BUMPERS"),
            Request::Place { x, y, heading } => write!(f, "#PLACE {x} {y} {heading}"),
            Request::Load(name) => write!(f, "#LOAD {name}"),
            Request::Merge(name) => write!(f, "#MERGE {name}"),
            Request::Rect([x1, y1, x2, y2]) => write!(f, "#RECT {x1} {y1} {x2} {y2}"),
            Request::Step(n) => write!(f, "#STEP {n}"),
            Request::Snapshot(name) => write!(f, "#SNAPSHOT {name}"),
            Request::Help => f.write_str("#HELP"),
        }
    }
}

/// The largest speed or turn rate a `V` message carries (±99.9).
pub const MAX_VEL: f64 = 99.9;

/// The `V` request for these velocities (in/s, deg/s), rounded to tenths and limited to
/// ±[`MAX_VEL`]; `None` unless both are finite.
pub fn set_vel_request(forward: f64, turn: f64) -> Option<Request> {
    let tenths = |v: f64| (v * 10.0).round().clamp(-999.0, 999.0) as i32;
    (forward.is_finite() && turn.is_finite()).then(|| Request::SetVel {
        forward_tenths: tenths(forward),
        turn_tenths: tenths(turn),
    })
}

/// Reads an `Sxxppp` reply to `Sxx`: the reading in inches.
pub fn parse_sonar_reply(i: usize, reply: &str) -> Option<u32> {
    let p = reply.strip_prefix(&format!("S{i:02}"))?;
    (p.len() == 3 && p.bytes().all(|b| b.is_ascii_digit()))
        .then(|| p.parse().ok())
        .flatten()
}

/// Reads a `B0`/`B1` reply.
pub fn parse_bumper_reply(reply: &str) -> Option<bool> {
    match reply {
        "B0" => Some(false),
        "B1" => Some(true),
        _ => None,
    }
}

/// Reads an `Rxx` / `R-1` reply: `Some(bumper)` or `None`; the outer `None` = not a reply.
pub fn parse_bumper_rel_reply(reply: &str) -> Option<Option<usize>> {
    match reply.strip_prefix('R')? {
        "-1" => Some(None),
        d if d.len() == 2 && d.bytes().all(|b| b.is_ascii_digit()) => d.parse().ok().map(Some),
        _ => None,
    }
}

/// Reads a `P` reply: x, y, heading.
pub fn parse_pos_reply(reply: &str) -> Option<(f64, f64, f64)> {
    let body = reply.strip_prefix('P')?;
    if body.len() != 15 || !body.is_ascii() {
        return None;
    }
    let field = |s: &str| {
        let digits = s.strip_prefix('-').unwrap_or(s);
        if !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse::<i64>().ok().map(|v| v as f64 / 10.0)
    };
    Some((
        field(&body[..5])?,
        field(&body[5..10])?,
        field(&body[10..])?,
    ))
}

/// `#SONARS p0 … p15`.
pub fn sonars_reply(readings: &[f64]) -> String {
    let mut s = String::from("#SONARS");
    for r in readings {
        let r = if r.is_finite() { r.round() as i64 } else { 0 };
        s.push_str(&format!(" {r}"));
    }
    s
}

/// Reads a `#SONARS` reply of exactly `N` readings.
pub fn parse_sonars_reply<const N: usize>(reply: &str) -> Option<[u32; N]> {
    let rest = reply.strip_prefix("#SONARS")?;
    let mut out = [0u32; N];
    let mut words = rest.split_whitespace();
    for slot in out.iter_mut() {
        *slot = words.next()?.parse().ok()?;
    }
    words.next().is_none().then_some(out)
}

/// `#BUMPERS b0b1…` for `count` bumpers of the bit set `bits` (at most 64).
pub fn bumpers_reply(bits: u64, count: usize) -> String {
    let bits: String = (0..count)
        .map(|i| {
            if i < 64 && bits >> i & 1 == 1 {
                '1'
            } else {
                '0'
            }
        })
        .collect();
    format!("#BUMPERS {bits}")
}

/// Reads a `#BUMPERS` reply of exactly `N` bumpers: `true` = closed.
pub fn parse_bumpers_reply<const N: usize>(reply: &str) -> Option<[bool; N]> {
    let bits = reply.strip_prefix("#BUMPERS ")?;
    if bits.len() != N || !bits.bytes().all(|b| b == b'0' || b == b'1') {
        return None;
    }
    let mut out = [false; N];
    for (slot, b) in out.iter_mut().zip(bits.bytes()) {
        *slot = b == b'1';
    }
    Some(out)
}

/// `#STEP t`: the simulated time after the steps (a whole number of steps of `timestep`
/// seconds), with as many decimals as the timestep has, at least 2: `#STEP 1.00` with the
/// default 0.01 s, `#STEP 0.005` after five steps of 0.001 s.
pub fn step_reply(time: f64, timestep: f64) -> String {
    let shown = timestep.to_string();
    let decimals = shown.split_once('.').map_or(0, |(_, d)| d.len()).max(2);
    format!("#STEP {time:.decimals$}")
}

/// Reads a `#STEP t` reply.
pub fn parse_step_reply(reply: &str) -> Option<f64> {
    reply
        .strip_prefix("#STEP ")?
        .parse()
        .ok()
        .filter(|t: &f64| t.is_finite())
}

/// The message of an error reply (`E …`), if `reply` is one.
pub fn parse_error_reply(reply: &str) -> Option<&str> {
    reply.strip_prefix(ERROR_PREFIX)
}

/// The reply a request gets when all went well and it carries no data (`V`, `A`, `M`,
/// `#PLACE`, …); `None` for requests whose reply carries data.
pub fn plain_reply(req: &Request) -> Option<&'static str> {
    Some(match req {
        Request::SetVel { .. } => "V",
        Request::Stop => "A",
        Request::Message(_) => "M",
        Request::Place { .. } => "#PLACE",
        Request::Load(_) => "#LOAD",
        Request::Merge(_) => "#MERGE",
        Request::Rect(_) => "#RECT",
        Request::Snapshot(_) => "#SNAPSHOT",
        _ => return None,
    })
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
            ("#PLACE 150 150 1e308", "heading 1e308 is out of range"),
            ("#PLACE 150 150 -36001", "36000 degrees"),
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

    #[test]
    fn requests_written_are_read_back() {
        for req in [
            Request::SetVel {
                forward_tenths: 100,
                turn_tenths: -300,
            },
            Request::SetVel {
                forward_tenths: -999,
                turn_tenths: 0,
            },
            Request::Stop,
            Request::Sonar(0),
            Request::Sonar(15),
            Request::Bumper,
            Request::BumperRel,
            Request::Pos,
            Request::Message("Hello world!".into()),
            Request::Message(String::new()),
            Request::Sonars,
            Request::Bumpers,
            Request::Place {
                x: 150.5,
                y: -2.0,
                heading: 90.0,
            },
            Request::Load("a.txt".into()),
            Request::Merge("b.txt".into()),
            Request::Rect([1.0, 2.0, 3.5, 4.0]),
            Request::Step(7),
            Request::Snapshot("s.png".into()),
            Request::Help,
        ] {
            assert_eq!(parse_request(&req.to_string()), Ok(req.clone()), "{req}");
        }
        assert_eq!(
            set_vel_request(10.0, -30.0).map(|r| r.to_string()),
            Some("V+100-300".into())
        );
        assert_eq!(
            set_vel_request(-0.04, 500.0).map(|r| r.to_string()),
            Some("V+000+999".into())
        );
        assert_eq!(
            set_vel_request(-2.55, 0.0).map(|r| r.to_string()),
            Some("V-026+000".into())
        );
        assert_eq!(set_vel_request(f64::NAN, 0.0), None);
    }

    #[test]
    fn replies_written_are_read_back() {
        assert_eq!(parse_sonar_reply(3, &sonar_reply(3, 5.0)), Some(5));
        assert_eq!(parse_sonar_reply(4, &sonar_reply(3, 5.0)), None);
        assert_eq!(
            parse_bumper_rel_reply(&bumper_rel_reply(Some(7))),
            Some(Some(7))
        );
        assert_eq!(parse_bumper_rel_reply(&bumper_rel_reply(None)), Some(None));
        assert_eq!(parse_bumper_rel_reply("R7"), None);
        assert_eq!(parse_bumper_reply("B1"), Some(true));
        assert_eq!(
            parse_pos_reply(&pos_reply(150.0, 130.0, 90.0)),
            Some((150.0, 130.0, 90.0))
        );
        assert_eq!(
            parse_pos_reply(&pos_reply(-1.2, 10.0, 359.9)),
            Some((-1.2, 10.0, 359.9))
        );
        assert_eq!(parse_pos_reply("P-001200100359 9"), None);
        assert_eq!(parse_pos_reply("P+00120010003599"), None);
        let r: Vec<f64> = (0..16).map(f64::from).collect();
        let got: Option<[u32; 16]> = parse_sonars_reply(&sonars_reply(&r));
        assert_eq!(got.map(|a| a[15]), Some(15));
        assert_eq!(parse_sonars_reply::<16>(&sonars_reply(&r[..15])), None);
        let b: Option<[bool; 20]> = parse_bumpers_reply(&bumpers_reply(0b101, 20));
        assert_eq!(b.map(|a| (a[0], a[1], a[2])), Some((true, false, true)));
        assert_eq!(parse_step_reply(&step_reply(1.5, 0.01)), Some(1.5));
        assert_eq!(step_reply(1.5, 0.01), "#STEP 1.50");
        assert_eq!(step_reply(0.001, 0.001), "#STEP 0.001");
        assert_eq!(step_reply(9.0 * 0.001, 0.001), "#STEP 0.009");
        assert_eq!(step_reply(3.0 * 0.00001, 0.00001), "#STEP 0.00003");
        assert_eq!(step_reply(7.0 * 0.1, 0.1), "#STEP 0.70");
        assert_eq!(step_reply(2.0, 1.0), "#STEP 2.00");
        assert_eq!(parse_error_reply(&error_reply(&"no")), Some("no"));
    }
}
