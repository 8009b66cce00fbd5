//! Recordings of a run: every broadcast iteration of a SimRob server, to a file.
//!
//! # Format (`simrob-recording`, version 1)
//!
//! A recording is a text file of [JSON lines](https://jsonlines.org/) (UTF-8, one JSON object
//! per line, each line ended by `\n`):
//!
//! * **Line 1, the header**:
//!   `{"format":"simrob-recording","version":1,"source":"udp://127.0.0.1:5005","started_unix_ms":1700000000000}`
//!   — `format` is always `simrob-recording`; `version` is the version of this layout
//!   (readers refuse versions they do not know); `source` says what was recorded (the
//!   server's address); `started_unix_ms` is the wall-clock start, in milliseconds since the
//!   Unix epoch.
//! * **Every further line, one iteration**: a [`Frame`] — what the viewer draws — with the
//!   iteration number (`iteration`), the simulated time in seconds (`time`), the server's
//!   modes, every body (`bodies`: entity `e`, body `id`, `shape`, `dims`, position `p` in
//!   metres, Euler rotation `r` in radians with R = Rz·Ry·Rx, velocities `v` and `w`) and every
//!   entity (`entities`: `id`, `kind` = `Robot`/`Ball`/`Field`, reported pose `p`/`r`, `null`
//!   for fields).
//!
//! The file is append-only: the recorder writes the header when it starts and then appends
//! one complete line per iteration, each in a single write, so another process can read the
//! file while it is being written. A reader of such a file may see a last line cut short:
//! [`Recording::parse`] ignores an unterminated last line that is not valid JSON; any other
//! bad line is an error naming its line number.
//!
//! ```text
//! {"format":"simrob-recording","version":1,"source":"udp://127.0.0.1:5005","started_unix_ms":1718000000000}
//! {"iteration":0,"time":0.0,"initialized":false,…,"bodies":[],"entities":[]}
//! {"iteration":1,"time":0.01,"initialized":true,…,"bodies":[{"e":3,"id":0,…}],"entities":[…]}
//! ```

use std::fs::File;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use simrob_server::simrob::{Observer, SimServer};

use crate::Frame;

/// The `format` of the header line.
pub const FORMAT: &str = "simrob-recording";
/// The version of the layout this crate writes and reads.
pub const VERSION: u32 = 1;

/// The first line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`].
    pub version: u32,
    /// What was recorded (for `simrob serve`, `udp://IP:PORT`).
    pub source: String,
    /// When recording started, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
}

impl Header {
    /// A header for a recording starting now.
    pub fn now(source: &str) -> Header {
        let started_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0);
        Header {
            format: FORMAT.to_string(),
            version: VERSION,
            source: source.to_string(),
            started_unix_ms,
        }
    }
}

/// Starts a recording at `path` (created, or truncated) and returns the observer that appends
/// the server's frame after every iteration. Register it to run after every iteration:
/// `server.add_observer(Duration::ZERO, recorder(path, "udp://…")?)`.
///
/// A line is written only when the iteration number changed since the last line (the first
/// call always writes). A write error is reported once on stderr and ends the recording; the
/// simulation goes on.
pub fn recorder(path: &Path, source: &str) -> std::io::Result<Observer> {
    let mut file = File::create(path)?;
    let header = serde_json::to_string(&Header::now(source)).map_err(std::io::Error::other)?;
    file.write_all(format!("{header}\n").as_bytes())?;
    file.flush()?;
    let shown = path.display().to_string();
    let mut file = Some(file);
    let mut last: Option<u64> = None;
    Ok(Box::new(move |server: &SimServer| {
        let Some(f) = file.as_mut() else { return };
        let iteration = server.world().iteration();
        if last == Some(iteration) {
            return;
        }
        last = Some(iteration);
        let written = serde_json::to_string(&Frame::of(server))
            .map_err(std::io::Error::other)
            .and_then(|mut line| {
                line.push('\n');
                // One write per line: a reader never sees half of two lines.
                f.write_all(line.as_bytes())?;
                f.flush()
            });
        if let Err(e) = written {
            eprintln!("recording to {shown} stopped at iteration {iteration}: {e}");
            file = None;
        }
    }))
}

/// A recording read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    pub header: Header,
    /// The recorded iterations, in file order.
    pub frames: Vec<Frame>,
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

impl Recording {
    /// Reads the recording at `path` (see [`Recording::parse`]).
    pub fn open(path: &Path) -> std::io::Result<Recording> {
        let text = std::fs::read_to_string(path)?;
        Recording::parse(&text).map_err(|e| invalid(format!("{}: {e}", path.display())))
    }

    /// Parses a recording. Refuses a file that is not a `simrob-recording` of a known version;
    /// accepts an unterminated, unparsable last line (a file being written) by leaving it out;
    /// reports any other bad line with its number (the header is line 1). Blank lines are
    /// skipped.
    pub fn parse(text: &str) -> std::io::Result<Recording> {
        let mut lines = text.split_inclusive('\n').enumerate().peekable();
        let Some((_, first)) = lines.next() else {
            return Err(invalid("empty file: not a simrob recording".into()));
        };
        let value: serde_json::Value = serde_json::from_str(first.trim_end()).map_err(|e| {
            invalid(format!(
                "line 1: not a simrob recording (the header is not JSON: {e})"
            ))
        })?;
        let format = value.get("format").and_then(|f| f.as_str());
        if format != Some(FORMAT) {
            return Err(invalid(format!(
                "line 1: not a simrob recording (format {}, expected \"{FORMAT}\")",
                format.map_or("missing".to_string(), |f| format!("{f:?}"))
            )));
        }
        match value.get("version").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(VERSION) => {}
            Some(v) => {
                return Err(invalid(format!(
                    "line 1: recording format version {v} is not supported (this simrob reads version {VERSION})"
                )))
            }
            None => return Err(invalid("line 1: the header has no version number".into())),
        }
        let header: Header = serde_json::from_value(value)
            .map_err(|e| invalid(format!("line 1: bad header: {e}")))?;
        let mut frames = Vec::new();
        while let Some((i, line)) = lines.next() {
            let body = line.trim();
            if body.is_empty() {
                continue;
            }
            match serde_json::from_str::<Frame>(body) {
                Ok(frame) => frames.push(frame),
                // The last line, still being written.
                Err(_) if lines.peek().is_none() && !line.ends_with('\n') => {}
                Err(e) => return Err(invalid(format!("line {}: bad frame: {e}", i + 1))),
            }
        }
        Ok(Recording { header, frames })
    }

    /// Writes each robot's and ball's pose over time as CSV: a header row
    /// `time,iteration,entity,kind,x,y,z,rot_x,rot_y,rot_z`, then one row per frame and
    /// entity with a pose (fields have none and are left out). Positions in metres, Euler
    /// angles in radians, time in simulated seconds.
    pub fn export_csv(&self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "time,iteration,entity,kind,x,y,z,rot_x,rot_y,rot_z")?;
        for frame in &self.frames {
            for e in &frame.entities {
                let (Some(p), Some(r)) = (e.p, e.r) else {
                    continue;
                };
                if e.kind == "Field" {
                    continue;
                }
                writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{}",
                    frame.time, frame.iteration, e.id, e.kind, p[0], p[1], p[2], r[0], r[1], r[2]
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FrameEntity;

    fn frame(iteration: u64, x: f64) -> Frame {
        Frame {
            iteration,
            time: iteration as f64 * 0.01,
            entities: vec![
                FrameEntity {
                    id: 1,
                    kind: "Field".into(),
                    p: None,
                    r: None,
                },
                FrameEntity {
                    id: 3,
                    kind: "Robot".into(),
                    p: Some([x, 0.5, 0.02]),
                    r: Some([0.0, 0.0, 1.5]),
                },
            ],
            ..Frame::default()
        }
    }

    fn text(frames: &[Frame]) -> String {
        let mut s = serde_json::to_string(&Header::now("test")).unwrap();
        s.push('\n');
        for f in frames {
            s.push_str(&serde_json::to_string(f).unwrap());
            s.push('\n');
        }
        s
    }

    #[test]
    fn round_trip() {
        let frames = vec![frame(0, 0.0), frame(1, 0.1), frame(2, 0.25)];
        let r = Recording::parse(&text(&frames)).unwrap();
        assert_eq!(r.header.format, FORMAT);
        assert_eq!(r.header.version, VERSION);
        assert_eq!(r.header.source, "test");
        assert!(r.header.started_unix_ms > 0);
        assert_eq!(r.frames, frames);
    }

    #[test]
    fn a_truncated_last_line_is_left_out() {
        let mut t = text(&[frame(0, 0.0), frame(1, 0.1)]);
        let partial = serde_json::to_string(&frame(2, 0.2)).unwrap();
        t.push_str(&partial[..partial.len() / 2]);
        let r = Recording::parse(&t).unwrap();
        assert_eq!(r.frames.len(), 2);
        // A complete last line without its newline counts.
        let mut t = text(&[frame(0, 0.0)]);
        t.push_str(&partial);
        assert_eq!(Recording::parse(&t).unwrap().frames.len(), 2);
    }

    #[test]
    fn a_bad_line_is_reported_with_its_number() {
        let t = text(&[frame(0, 0.0), frame(1, 0.1)]).replacen("{\"iteration\":1", "{oops", 1);
        let e = Recording::parse(&t).unwrap_err().to_string();
        assert!(e.starts_with("line 3: bad frame"), "{e}");
        // A cut line followed by others is not "being written".
        let mut t = text(&[frame(0, 0.0)]);
        t.push_str("{\"iteration\":1,\n");
        t.push_str(&serde_json::to_string(&frame(2, 0.0)).unwrap());
        let e = Recording::parse(&t).unwrap_err().to_string();
        assert!(e.starts_with("line 3:"), "{e}");
    }

    #[test]
    fn a_wrong_format_or_version_is_refused() {
        let t = text(&[frame(0, 0.0)]).replacen("\"version\":1", "\"version\":2", 1);
        let e = Recording::parse(&t).unwrap_err().to_string();
        assert!(
            e.contains("version 2 is not supported") && e.contains("reads version 1"),
            "{e}"
        );
        let e = Recording::parse("{\"format\":\"other\",\"version\":1}\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a simrob recording"), "{e}");
        let e = Recording::parse("time,x,y\n1,2,3\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a simrob recording"), "{e}");
        assert!(Recording::parse("").is_err());
    }

    #[test]
    fn csv_has_one_row_per_frame_and_posed_entity() {
        let r = Recording::parse(&text(&[frame(0, 0.0), frame(1, -0.5)])).unwrap();
        let mut out = Vec::new();
        r.export_csv(&mut out).unwrap();
        let csv = String::from_utf8(out).unwrap();
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(
            rows,
            [
                "time,iteration,entity,kind,x,y,z,rot_x,rot_y,rot_z",
                "0,0,3,Robot,0,0.5,0.02,0,0,1.5",
                "0.01,1,3,Robot,-0.5,0.5,0.02,0,0,1.5",
            ]
        );
    }
}
