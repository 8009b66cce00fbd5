//! Recordings of a run: every iteration of a SimRob server, to a file, and the reader that
//! replays, exports and plots them.
//!
//! The formats are `simrob_record`'s (`simrec`: the header, the version-2 codec, the
//! version-1 line; `swarm`: the swarm recording, its reader and validation); this is the
//! shell around them, one job a module: this one indexes and reads files (of every kind,
//! also while they are written); `compact` the [`Writer`] (start time, file, drop);
//! `recorder` the observer and writer thread ([`recorder`]); `from_swarm` draws a swarm
//! recording's snapshots as boxes (the format itself is `simrob_record::swarm`'s); `csv` the
//! CSV export.
//!
//! # Format (`simrob-recording`, version 2: compact)
//!
//! * **Line 1, the header** (JSON, ended by `\n`):
//!   `{"format":"simrob-recording","version":2,"source":"udp://127.0.0.1:5005","started_unix_ms":1700000000000}`
//!   — `format` is always `simrob-recording`; `version` the layout (readers refuse versions
//!   they do not know); `source` what was recorded; `started_unix_ms` the wall-clock start.
//! * **Then blocks**, each a fixed 32-byte block header followed by its payload (all numbers
//!   little-endian): magic `SRB2`, `u32` payload bytes, `u32` frames in the block, `u32`
//!   payload bytes once inflated, `u64` iteration and `f64` simulated time of its first frame.
//!   The payload is a zlib (deflate) stream. The block headers are the **frame index**: a
//!   reader hops from header to header without inflating anything, so opening and seeking a
//!   long recording is instant. A block holds at most [`BLOCK_FRAMES`] frames and the recorder
//!   closes one at least every [`FLUSH_EVERY`], so a reader following the file lags by that
//!   much at most.
//! * **A last block with magic `SRE2`** (no payload, `frames` = frames in the file) marks a
//!   finished recording; a file without it is still being written (or its writer died), and
//!   `simrob replay` follows it. An end mark whose count differs from the blocks', or bytes
//!   after it, are damage: the reader refuses the file.
//!
//! Inside a block, frames are written one after the other, each against the previous one in
//! the same block (the first against nothing, so each block decodes on its own): the
//! iteration, time and server modes; the list of bodies (entity, id, shape, dimensions,
//! material, mass) and of entities (id, kind, whether it has a pose) only when it changed —
//! so the field's static boxes are written once per block; then a bit per body and per posed
//! entity telling whether it moved, and for each that did, its position, Euler rotation and
//! (bodies) linear and angular velocity as 32-bit floats (about 7 significant digits: a
//! micrometre on a 10 m field). A body at rest costs one bit per frame.
//!
//! # Version 1 (JSON lines), still read
//!
//! Line 1 is the same header with `"version":1`; every further line is one [`Frame`] as JSON
//! (the frame the viewer draws: `iteration`, `time`, the modes, `bodies` with entity `e`,
//! `id`, `shape`, `dims`, position `p` in metres, Euler rotation `r` in radians with
//! R = Rz·Ry·Rx, velocities `v` and `w`; `entities` with `id`, `kind`, pose `p`/`r`). A last
//! line cut short (a file being written) is left out; any other bad line is an error naming
//! its line number.
//!
//! # Swarm recordings, read as they are
//!
//! A `simrob-swarm-recording` (written by `simrob swarm run --record`) reads as frames too:
//! its walls become one `Field` entity of boxes, every snapshot entity a `Robot` with one box
//! body ([`SWARM_ROBOT_SIZE`] map units wide); 1 map unit = 1 cm, the map's y mirrored.

mod compact;
mod csv;
mod from_swarm;
mod recorder;

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use flate2::read::ZlibDecoder;

use simrob_record::swarm;

pub use compact::Writer;
use csv::{csv_rows, CSV_HEADER};
pub use from_swarm::{swarm_box, swarm_walls, viewer_kind, SWARM_ROBOT_SIZE};
use from_swarm::{swarm_frame, SwarmSource};
pub use recorder::{recorder, FLUSH_EVERY};
pub use simrob_record::simrec::{
    check_header, Header, HeaderError, Kind, BLOCK_FRAMES, FORMAT, SWARM_FORMAT, VERSION,
    VERSION_JSON_LINES,
};
use simrob_record::simrec::{
    decode_block, parse_line, BLOCK_HEADER, BLOCK_MAGIC, END_MAGIC, MAX_BLOCK_BYTES,
    MAX_HEADER_BYTES,
};

use crate::Frame;

/// The header of a recording of `source` starting now: JSON lines (version 1; the
/// [`Writer`] writes version 2), for writers that append one [`Frame`] per line themselves.
pub fn header_now(source: &str) -> Header {
    let started_unix_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0);
    Header::new(source, VERSION_JSON_LINES, started_unix_ms)
}

fn invalid(message: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, message)
}

/// Where one unit of frames (a line, or a block) sits in the file.
#[derive(Debug, Clone, Copy)]
struct Unit {
    offset: u64,
    len: u32,
    /// Inflated payload bytes (blocks).
    raw: u32,
    /// Frames in the unit.
    frames: u32,
    /// Index of its first frame.
    first_frame: usize,
    /// Line number (lines).
    line: u64,
}

/// A recording file read on demand: opening it reads only its index (block headers, or line
/// positions), frames are decoded when asked for, and [`RecordingReader::refresh`] picks up
/// what a writer appended since. Reads every [`Kind`].
pub struct RecordingReader {
    path: PathBuf,
    file: File,
    header: Header,
    kind: Kind,
    swarm: Option<SwarmSource>,
    units: Vec<Unit>,
    frames: usize,
    /// Bytes of the file indexed so far (whole units only).
    scanned: u64,
    /// Lines read so far (line formats).
    lines: u64,
    /// The last unit is an unterminated line that parsed (the writer may still be on it).
    tentative: bool,
    finished: bool,
    cache: Option<(usize, Vec<Frame>)>,
}

impl std::fmt::Debug for RecordingReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingReader")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("frames", &self.frames)
            .finish()
    }
}

impl RecordingReader {
    /// Opens `path`, checks its header and indexes every complete frame.
    pub fn open(path: &Path) -> std::io::Result<RecordingReader> {
        let file = File::open(path)?;
        let mut reader = BufReader::new(&file).take(MAX_HEADER_BYTES);
        let mut first = Vec::new();
        reader.read_until(b'\n', &mut first)?;
        let named = |e: String| invalid(format!("{}: {e}", path.display()));
        if first.is_empty() {
            return Err(named("empty file: not a simrob recording".into()));
        }
        let value: serde_json::Value = serde_json::from_slice(&first).map_err(|e| {
            named(format!(
                "line 1: not a simrob recording (the header is not JSON: {e})"
            ))
        })?;
        let (header, kind) = check_header(&value).map_err(|e| named(e.to_string()))?;
        let swarm = if kind == Kind::Swarm {
            let reader =
                swarm::Reader::open(File::open(path)?).map_err(|e| named(e.to_string()))?;
            let h = reader.header();
            Some(SwarmSource {
                walls: swarm_walls(&h.walls),
                fps: h.fps,
                reader,
            })
        } else {
            None
        };
        let mut r = RecordingReader {
            path: path.to_path_buf(),
            file,
            header,
            kind,
            swarm,
            units: Vec::new(),
            frames: 0,
            scanned: first.len() as u64,
            lines: 1,
            tentative: false,
            finished: false,
            cache: None,
        };
        r.refresh()?;
        Ok(r)
    }

    /// The file's header (line 1): format, version, what was recorded and when it started.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Which format the file is: JSON lines, compact blocks or a swarm recording.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames indexed so far.
    pub fn len(&self) -> usize {
        self.frames
    }

    /// No frame indexed yet (a file just started, or only a header).
    pub fn is_empty(&self) -> bool {
        self.frames == 0
    }

    /// Whether the writer marked the file finished (compact and swarm recordings; a
    /// JSON-lines file never says so).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Indexes what was appended since the last call; returns how many frames it added.
    pub fn refresh(&mut self) -> std::io::Result<usize> {
        let before = self.frames;
        if self.tentative {
            if let Some(u) = self.units.pop() {
                self.frames -= u.frames as usize;
                self.scanned = u.offset;
                if self
                    .cache
                    .as_ref()
                    .is_some_and(|(k, _)| *k == self.units.len())
                {
                    self.cache = None;
                }
            }
            self.tentative = false;
        }
        match (self.kind, &mut self.swarm) {
            (Kind::Compact, _) => self.scan_blocks()?,
            (Kind::Swarm, Some(swarm)) => {
                swarm
                    .reader
                    .refresh()
                    .map_err(|e| invalid(format!("{}: {e}", self.path.display())))?;
                self.frames = swarm.reader.len();
                self.finished = swarm.reader.is_finished();
            }
            _ => self.scan_lines()?,
        }
        Ok(self.frames.saturating_sub(before))
    }

    fn scan_blocks(&mut self) -> std::io::Result<()> {
        let size = self.file.metadata()?.len();
        let mut reader = BufReader::new(&self.file);
        reader.seek(SeekFrom::Start(self.scanned))?;
        let mut at = self.scanned;
        while !self.finished && at + BLOCK_HEADER as u64 <= size {
            let mut h = [0u8; BLOCK_HEADER];
            reader.read_exact(&mut h)?;
            let word = |k: usize| u32::from_le_bytes([h[k], h[k + 1], h[k + 2], h[k + 3]]);
            let (magic, len, frames, raw) = ([h[0], h[1], h[2], h[3]], word(4), word(8), word(12));
            if magic == END_MAGIC {
                // The end mark counts the file's frames (u32::MAX: that many or more) and is
                // the file's last byte: anything else is damage, not a finished recording.
                let counted = frames == u32::MAX && self.frames >= u32::MAX as usize;
                if !counted && frames as usize != self.frames {
                    return Err(invalid(format!(
                        "{}: end mark at byte {at}: it counts {frames} frames, the blocks before it hold {} (the file is damaged)",
                        self.path.display(),
                        self.frames
                    )));
                }
                let after = size - (at + BLOCK_HEADER as u64);
                if after > 0 {
                    return Err(invalid(format!(
                        "{}: {after} bytes after the end mark at byte {at} (the file is damaged, or two files joined)",
                        self.path.display()
                    )));
                }
                self.finished = true;
                at += BLOCK_HEADER as u64;
                break;
            }
            if magic != BLOCK_MAGIC || len > MAX_BLOCK_BYTES || raw > MAX_BLOCK_BYTES {
                return Err(invalid(format!(
                    "{}: byte {at}: not a recording block (the file is damaged)",
                    self.path.display()
                )));
            }
            if frames as usize > BLOCK_FRAMES {
                return Err(invalid(format!(
                    "{}: block at byte {at}: {} (the file is damaged)",
                    self.path.display(),
                    simrob_record::simrec::DecodeError::Frames { n: frames }
                )));
            }
            let end = at + BLOCK_HEADER as u64 + u64::from(len);
            if end > size {
                // Still being written, unless the file already ends with its end mark: then
                // this block's length is damaged.
                if self.ends_with_end_mark(at, size)? {
                    return Err(invalid(format!(
                        "{}: block at byte {at}: runs past the recording's end mark (a damaged length)",
                        self.path.display()
                    )));
                }
                break;
            }
            self.units.push(Unit {
                offset: at,
                len,
                raw,
                frames,
                first_frame: self.frames,
                line: 0,
            });
            self.frames += frames as usize;
            reader.seek_relative(i64::from(len))?;
            at = end;
        }
        self.scanned = at;
        Ok(())
    }

    /// Whether the file's last block header, after byte `at`, is the end mark.
    fn ends_with_end_mark(&self, at: u64, size: u64) -> std::io::Result<bool> {
        let Some(last) = size.checked_sub(BLOCK_HEADER as u64).filter(|&l| l > at) else {
            return Ok(false);
        };
        let mut f = &self.file;
        f.seek(SeekFrom::Start(last))?;
        let mut magic = [0u8; 4];
        f.read_exact(&mut magic)?;
        Ok(magic == END_MAGIC)
    }

    fn scan_lines(&mut self) -> std::io::Result<()> {
        let file = self.file.try_clone()?;
        let mut reader = BufReader::with_capacity(1 << 20, file);
        reader.seek(SeekFrom::Start(self.scanned))?;
        let mut at = self.scanned;
        let mut line = Vec::new();
        loop {
            line.clear();
            let n = reader.read_until(b'\n', &mut line)?;
            if n == 0 {
                break;
            }
            let complete = line.ends_with(b"\n");
            let text = line.trim_ascii();
            let is_frame = !text.is_empty();
            if !complete {
                // A last line being written: counted only if it is already whole.
                if is_frame && self.decode_line(text).is_ok() {
                    self.push_line(at, n, self.lines + 1);
                    self.tentative = true;
                }
                break;
            }
            self.lines += 1;
            if is_frame {
                self.push_line(at, n, self.lines);
            }
            at += n as u64;
        }
        // A tentative line is read again by the next refresh.
        self.scanned = at;
        Ok(())
    }

    fn push_line(&mut self, offset: u64, len: usize, line: u64) {
        self.units.push(Unit {
            offset,
            len: u32::try_from(len).unwrap_or(u32::MAX),
            raw: 0,
            frames: 1,
            first_frame: self.frames,
            line,
        });
        self.frames += 1;
    }

    fn decode_line(&self, text: &[u8]) -> Result<Frame, serde_json::Error> {
        parse_line(text)
    }

    fn read_unit(&self, u: &Unit) -> std::io::Result<Vec<Frame>> {
        let mut f = &self.file;
        let body = if self.kind == Kind::Compact {
            BLOCK_HEADER as u64
        } else {
            0
        };
        f.seek(SeekFrom::Start(u.offset + body))?;
        let mut bytes = vec![0u8; u.len as usize];
        f.read_exact(&mut bytes)?;
        let place = |e: String| {
            if self.kind == Kind::Compact {
                invalid(format!(
                    "{}: block at byte {}: {e}",
                    self.path.display(),
                    u.offset
                ))
            } else {
                invalid(format!(
                    "{}: line {}: bad frame: {e}",
                    self.path.display(),
                    u.line
                ))
            }
        };
        if self.kind != Kind::Compact {
            return self
                .decode_line(bytes.trim_ascii())
                .map(|f| vec![f])
                .map_err(|e| place(e.to_string()));
        }
        // Grown as the block inflates: a corrupt size allocates nothing up front.
        let mut payload = Vec::with_capacity((u.raw as usize).min(1 << 20));
        ZlibDecoder::new(&bytes[..])
            .take(u64::from(u.raw) + 1)
            .read_to_end(&mut payload)
            .map_err(|e| place(format!("cannot inflate: {e}")))?;
        if payload.len() != u.raw as usize {
            return Err(place(format!(
                "{} bytes inflated, the block header says {}",
                payload.len(),
                u.raw
            )));
        }
        decode_block(&payload, u.frames).map_err(|e| place(e.to_string()))
    }

    /// Frame `index` (0-based), decoded from the file (the last unit read is kept).
    pub fn frame(&mut self, index: usize) -> std::io::Result<Frame> {
        if let Some(swarm) = &mut self.swarm {
            let snap = swarm
                .reader
                .snapshot(index)
                .map_err(|e| invalid(format!("{}: {e}", self.path.display())))?;
            return Ok(swarm_frame(snap, swarm));
        }
        if index >= self.frames {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("frame {index}: the recording has {} frames", self.frames),
            ));
        }
        let k = self
            .units
            .partition_point(|u| u.first_frame + u.frames as usize <= index);
        if self.cache.as_ref().map(|(c, _)| *c) != Some(k) {
            let unit = self.units[k];
            self.cache = Some((k, self.read_unit(&unit)?));
        }
        let (_, frames) = self.cache.as_ref().expect("just filled");
        let unit = &self.units[k];
        frames
            .get(index - unit.first_frame)
            .cloned()
            .ok_or_else(|| invalid(format!("frame {index} is missing from its block")))
    }

    /// Calls `f` with every frame in order, decoding each unit once.
    pub fn for_each(
        &mut self,
        mut f: impl FnMut(&Frame) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        if self.swarm.is_some() {
            for index in 0..self.frames {
                f(&self.frame(index)?)?;
            }
            return Ok(());
        }
        for k in 0..self.units.len() {
            let unit = self.units[k];
            for frame in &self.read_unit(&unit)? {
                f(frame)?;
            }
        }
        Ok(())
    }

    /// Every frame in memory.
    pub fn read_all(&mut self) -> std::io::Result<Recording> {
        let mut frames = Vec::with_capacity(self.frames);
        self.for_each(|f| {
            frames.push(f.clone());
            Ok(())
        })?;
        Ok(Recording {
            header: self.header.clone(),
            frames,
        })
    }

    /// Writes the CSV of [`Recording::export_csv`], frame by frame.
    pub fn export_csv(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "{CSV_HEADER}")?;
        self.for_each(|f| csv_rows(f, out))
    }
}

/// A recording read back whole.
#[derive(Debug, Clone, PartialEq)]
pub struct Recording {
    /// The file's header (line 1): format, version, what was recorded and when it started.
    pub header: Header,
    /// The recorded iterations, in file order.
    pub frames: Vec<Frame>,
}

impl Recording {
    /// Reads every frame of the recording at `path`, whatever its [`Kind`].
    pub fn open(path: &Path) -> std::io::Result<Recording> {
        RecordingReader::open(path)?.read_all()
    }

    /// Parses a JSON-lines (version 1) recording held in memory. Refuses a file that is not a
    /// `simrob-recording`; accepts an unterminated, unparsable last line (a file being
    /// written) by leaving it out; reports any other bad line with its number (the header is
    /// line 1). Blank lines are skipped.
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
        let (header, kind) = check_header(&value).map_err(|e| invalid(e.to_string()))?;
        if kind != Kind::JsonLines {
            return Err(invalid(format!(
                "line 1: a {} recording is read from its file (Recording::open), not from text",
                header.format
            )));
        }
        let mut frames = Vec::new();
        while let Some((i, line)) = lines.next() {
            let body = line.trim();
            if body.is_empty() {
                continue;
            }
            match parse_line(body.as_bytes()) {
                Ok(frame) => frames.push(frame),
                // The last line, still being written.
                Err(_) if lines.peek().is_none() && !line.ends_with('\n') => {}
                Err(e) => return Err(invalid(format!("line {}: bad frame: {e}", i + 1))),
            }
        }
        Ok(Recording { header, frames })
    }

    /// Writes each robot's and ball's pose over time as CSV: a header row
    /// `time,iteration,entity,kind,x,y,z,roll,pitch,yaw`, then one row per frame and
    /// entity with a pose (fields have none and are left out). Positions in metres, Euler
    /// angles in radians, time in simulated seconds.
    pub fn export_csv(&self, out: &mut impl Write) -> std::io::Result<()> {
        writeln!(out, "{CSV_HEADER}")?;
        for frame in &self.frames {
            csv_rows(frame, out)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FrameBody, FrameEntity};

    /// A scratch directory removed on drop.
    struct Scratch(PathBuf);
    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir =
                std::env::temp_dir().join(format!("simrob-record-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }
        fn file(&self, name: &str) -> PathBuf {
            self.0.join(name)
        }
    }
    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn body(e: u32, id: u32, p: [f64; 3]) -> FrameBody {
        FrameBody {
            e,
            id,
            shape: "Box".into(),
            dims: [0.1, 0.2, 0.3],
            material: 1,
            mass: if e == 1 { -1.0 } else { 0.3 },
            p,
            r: [0.0, 0.0, 0.5],
            v: [0.25, 0.0, 0.0],
            w: [0.0; 3],
        }
    }

    /// The soccer field's shape: 13 static boxes and a robot moving along X (values exact
    /// in 32-bit floats, so a round trip compares equal).
    fn frame(iteration: u64, x: f64) -> Frame {
        let mut bodies: Vec<FrameBody> =
            (0..13).map(|k| body(1, k, [k as f64, 0.0, 0.0])).collect();
        bodies.push(body(3, 0, [x, 0.5, 0.25]));
        Frame {
            iteration,
            time: iteration as f64 * 0.01,
            initialized: true,
            timestep: 0.01,
            gravity: -9.8,
            steps_per_iteration: 1,
            bodies,
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
                    p: Some([x, 0.5, 0.25]),
                    r: Some([0.0, 0.0, 1.5]),
                },
            ],
            ..Frame::default()
        }
    }

    fn frames(n: u64) -> Vec<Frame> {
        (0..n).map(|i| frame(i, (i / 3) as f64 * 0.125)).collect()
    }

    fn v1_text(frames: &[Frame]) -> String {
        let mut s = serde_json::to_string(&header_now("test")).unwrap();
        s.push('\n');
        for f in frames {
            s.push_str(&serde_json::to_string(f).unwrap());
            s.push('\n');
        }
        s
    }

    fn write_v2(path: &Path, frames: &[Frame]) {
        let mut w = Writer::create(path, "test").unwrap();
        for f in frames {
            w.write_frame(f).unwrap();
        }
        w.finish().unwrap();
    }

    #[test]
    fn compact_round_trip_is_exact_and_small() {
        let dir = Scratch::new("round");
        let path = dir.file("run.simrec");
        let all = frames(1000);
        write_v2(&path, &all);
        let r = Recording::open(&path).unwrap();
        assert_eq!(r.header.format, FORMAT);
        assert_eq!(r.header.version, VERSION);
        assert_eq!(r.header.source, "test");
        assert_eq!(r.frames, all);
        let v2 = std::fs::metadata(&path).unwrap().len() as usize;
        let v1 = v1_text(&all).len();
        assert!(v2 * 50 < v1, "compact {v2} bytes, JSON lines {v1} bytes");
        let mut reader = RecordingReader::open(&path).unwrap();
        assert_eq!(reader.kind(), Kind::Compact);
        assert!(reader.is_finished());
        assert_eq!(reader.len(), 1000);
        // Seeking: any frame, in any order.
        for i in [999, 0, 500, 255, 256, 257] {
            assert_eq!(reader.frame(i).unwrap(), all[i]);
        }
        assert!(reader.frame(1000).is_err());
    }

    #[test]
    fn an_empty_world_round_trips() {
        let dir = Scratch::new("empty");
        let path = dir.file("empty.simrec");
        let mut all: Vec<Frame> = (0..3)
            .map(|i| Frame {
                iteration: i,
                ..Frame::default()
            })
            .collect();
        all.extend(frames(3));
        write_v2(&path, &all);
        assert_eq!(Recording::open(&path).unwrap().frames, all);
    }

    #[test]
    fn layout_changes_inside_a_block_are_kept() {
        let dir = Scratch::new("layout");
        let path = dir.file("run.simrec");
        let mut all = frames(10);
        all[4].bodies.pop();
        all[4].entities.pop();
        all[7].entities[1].p = None;
        all[7].entities[1].r = None;
        write_v2(&path, &all);
        assert_eq!(Recording::open(&path).unwrap().frames, all);
    }

    #[test]
    fn a_file_being_written_is_followed() {
        let dir = Scratch::new("follow");
        let path = dir.file("run.simrec");
        let all = frames(600);
        let mut w = Writer::create(&path, "live").unwrap();
        for f in &all[..300] {
            w.write_frame(f).unwrap();
        }
        // One full block went out; 44 frames wait in the next.
        let mut reader = RecordingReader::open(&path).unwrap();
        assert_eq!(reader.len(), BLOCK_FRAMES);
        assert!(!reader.is_finished());
        w.flush().unwrap();
        assert_eq!(reader.refresh().unwrap(), 300 - BLOCK_FRAMES);
        assert_eq!(reader.frame(299).unwrap(), all[299]);
        // Half a block on disk is not read until it is whole.
        for f in &all[300..] {
            w.write_frame(f).unwrap();
        }
        w.flush().unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let cut = dir.file("cut.simrec");
        std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
        let mut partial = RecordingReader::open(&cut).unwrap();
        assert!(
            partial.len() < 600 && partial.len() >= 300,
            "{}",
            partial.len()
        );
        assert_eq!(
            partial.frame(partial.len() - 1).unwrap(),
            all[partial.len() - 1]
        );
        w.finish().unwrap();
        assert_eq!(reader.refresh().unwrap(), 300);
        assert!(reader.is_finished());
        assert_eq!(reader.frame(599).unwrap(), all[599]);
    }

    #[test]
    fn damage_is_an_error_not_a_crash() {
        let dir = Scratch::new("damage");
        let path = dir.file("run.simrec");
        write_v2(&path, &frames(300));
        let good = std::fs::read(&path).unwrap();
        let header_len = good.iter().position(|&b| b == b'\n').unwrap() + 1;
        // A bad magic.
        let mut bad = good.clone();
        bad[header_len] = b'X';
        std::fs::write(&path, &bad).unwrap();
        let e = RecordingReader::open(&path).unwrap_err().to_string();
        assert!(e.contains("not a recording block"), "{e}");
        // A damaged payload: the index opens, the block is refused.
        let mut bad = good.clone();
        for b in &mut bad[header_len + BLOCK_HEADER + 10..header_len + BLOCK_HEADER + 40] {
            *b ^= 0x5a;
        }
        std::fs::write(&path, &bad).unwrap();
        let mut r = RecordingReader::open(&path).unwrap();
        let e = r.frame(0).unwrap_err().to_string();
        assert!(e.contains("block at byte"), "{e}");
        assert!(Recording::open(&path).is_err());
        // A frame count beyond a block's (0xFFFFFFFF): refused at once, naming the file and
        // the block's byte, not allocated.
        let mut bad = good.clone();
        bad[header_len + 8..header_len + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let e = RecordingReader::open(&path).unwrap_err().to_string();
        assert!(
            e.contains(&path.display().to_string())
                && e.contains(&format!("block at byte {header_len}"))
                && e.contains("a block holds at most 256"),
            "{e}"
        );
        assert!(Recording::open(&path).is_err());
        // A length past the end of a finished file (the end mark follows): damage at that
        // block, not a file still being written.
        let mut bad = good.clone();
        bad[header_len + 4..header_len + 8].copy_from_slice(&(1u32 << 20).to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let e = RecordingReader::open(&path).unwrap_err().to_string();
        assert!(
            e.contains(&format!("block at byte {header_len}")) && e.contains("end mark"),
            "{e}"
        );
        // The same without its end mark: a file being written, followed.
        std::fs::write(&path, &bad[..bad.len() - BLOCK_HEADER]).unwrap();
        let r = RecordingReader::open(&path).unwrap();
        assert!(!r.is_finished() && r.is_empty());
        // An end mark that miscounts, or bytes after it: damage, not a finished file.
        let mut bad = good.clone();
        let end = bad.len() - BLOCK_HEADER;
        bad[end + 8..end + 12].copy_from_slice(&123_456_789u32.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        let e = RecordingReader::open(&path).unwrap_err().to_string();
        assert!(
            e.contains(&format!("end mark at byte {end}")) && e.contains("123456789 frames"),
            "{e}"
        );
        let mut bad = good.clone();
        bad.extend_from_slice(b"trailing");
        std::fs::write(&path, &bad).unwrap();
        let e = RecordingReader::open(&path).unwrap_err().to_string();
        assert!(e.contains("8 bytes after the end mark"), "{e}");
        // A huge length.
        let mut bad = good;
        bad[header_len + 4..header_len + 8].copy_from_slice(&u32::MAX.to_le_bytes());
        std::fs::write(&path, &bad).unwrap();
        assert!(RecordingReader::open(&path).is_err());
    }

    #[test]
    fn json_lines_recordings_are_still_read() {
        let dir = Scratch::new("v1");
        let path = dir.file("old.simrec");
        let all = frames(5);
        std::fs::write(&path, v1_text(&all)).unwrap();
        let mut r = RecordingReader::open(&path).unwrap();
        assert_eq!(r.kind(), Kind::JsonLines);
        assert_eq!(r.read_all().unwrap().frames, all);
        assert_eq!(r.frame(3).unwrap(), all[3]);
        // A last line being written is left out, then read once whole.
        let partial = serde_json::to_string(&frame(5, 0.0)).unwrap();
        let mut text = v1_text(&all);
        text.push_str(&partial[..partial.len() / 2]);
        std::fs::write(&path, &text).unwrap();
        let mut r = RecordingReader::open(&path).unwrap();
        assert_eq!(r.len(), 5);
        text.push_str(&partial[partial.len() / 2..]);
        std::fs::write(&path, &text).unwrap();
        assert_eq!(r.refresh().unwrap(), 1, "a whole last line counts");
        text.push('\n');
        text.push_str(&serde_json::to_string(&frame(6, 0.0)).unwrap());
        text.push('\n');
        std::fs::write(&path, &text).unwrap();
        assert_eq!(r.refresh().unwrap(), 1);
        assert_eq!(r.len(), 7);
        assert_eq!(r.frame(6).unwrap().iteration, 6);
        // A bad line is named by its number.
        let text = v1_text(&all).replacen("{\"iteration\":1,", "{oops", 1);
        std::fs::write(&path, &text).unwrap();
        let e = Recording::open(&path).unwrap_err().to_string();
        assert!(e.contains("line 3: bad frame"), "{e}");
        let e = Recording::parse(&text).unwrap_err().to_string();
        assert!(e.starts_with("line 3: bad frame"), "{e}");
        // A pose no 32-bit float holds is refused, naming it (it was exported, and turned
        // into inf by --export simrec).
        let mut far = all.clone();
        far[1].bodies[0].p[0] = 1e300;
        std::fs::write(&path, v1_text(&far)).unwrap();
        let e = Recording::open(&path).unwrap_err().to_string();
        assert!(
            e.contains("line 3: bad frame") && e.contains("position [1e300"),
            "{e}"
        );
    }

    #[test]
    fn wrong_formats_and_versions_are_refused() {
        let dir = Scratch::new("formats");
        let path = dir.file("x");
        for (text, expected) in [
            (
                "{\"format\":\"simrob-recording\",\"version\":3}\n",
                "version 3 is not supported",
            ),
            (
                "{\"format\":\"other\",\"version\":1}\n",
                "not a simrob recording",
            ),
            ("time,x,y\n1,2,3\n", "not a simrob recording"),
            ("", "empty file"),
            ("{\"format\":\"simrob-recording\"}\n", "no version"),
        ] {
            std::fs::write(&path, text).unwrap();
            let e = RecordingReader::open(&path).unwrap_err().to_string();
            assert!(e.contains(expected), "{text:?}: {e}");
            if !text.is_empty() {
                let e = Recording::parse(text).unwrap_err().to_string();
                assert!(e.contains(expected), "{text:?}: {e}");
            }
        }
    }

    #[test]
    fn swarm_recordings_read_as_frames() {
        let dir = Scratch::new("swarm");
        let path = dir.file("swarm.jsonl");
        let text = concat!(
            "{\"type\":\"header\",\"format\":\"simrob-swarm-recording\",\"version\":1,\"scenario\":\"hospital\",\"seed\":7,\"fps\":10.0,\"width\":200,\"height\":300,\"walls\":[[50,0,50,2]],\"kinds\":[\"robot\"]}\n",
            "{\"type\":\"snapshot\",\"frame\":0,\"t\":0,\"entities\":[[4,0,100,200,0,\"\"],[5,0,10,20,1.5,\"done\"]]}\n",
            "{\"type\":\"log\",\"t\":0.5,\"entity\":4,\"text\":\"{\\\"type\\\":\\\"snapshot\\\"\"}\n",
            "{\"type\":\"snapshot\",\"frame\":10,\"t\":1,\"entities\":[[4,0,110,200,0,\"\"]]}\n",
            "{\"type\":\"end\",\"summary\":{}}\n",
        );
        std::fs::write(&path, text).unwrap();
        let mut r = RecordingReader::open(&path).unwrap();
        assert_eq!(r.kind(), Kind::Swarm);
        assert!(r.is_finished());
        assert_eq!(r.header().source, "simrob swarm: hospital (seed 7)");
        assert_eq!(r.len(), 2);
        let f = r.frame(1).unwrap();
        assert_eq!((f.iteration, f.time), (10, 1.0));
        assert_eq!(f.entities[0].kind, "Field");
        assert_eq!(f.bodies.len(), 2, "one wall, one robot");
        let robot = f.entities.iter().find(|e| e.id == 4).unwrap();
        assert_eq!(robot.p.unwrap()[..2], [1.1, -2.0]);
        assert_eq!(r.frame(0).unwrap().entities.len(), 3);
    }

    #[test]
    fn csv_has_one_row_per_frame_and_posed_entity() {
        let dir = Scratch::new("csv");
        let path = dir.file("run.simrec");
        let mut all = frames(2);
        all[1].entities[1].p = Some([-0.5, 0.5, 0.25]);
        write_v2(&path, &all);
        let mut out = Vec::new();
        RecordingReader::open(&path)
            .unwrap()
            .export_csv(&mut out)
            .unwrap();
        let csv = String::from_utf8(out).unwrap();
        let rows: Vec<&str> = csv.lines().collect();
        assert_eq!(
            rows,
            [
                "time,iteration,entity,kind,x,y,z,roll,pitch,yaw",
                "0,0,3,Robot,0,0.5,0.25,0,0,1.5",
                "0.01,1,3,Robot,-0.5,0.5,0.25,0,0,1.5",
            ]
        );
        let mut again = Vec::new();
        Recording::open(&path)
            .unwrap()
            .export_csv(&mut again)
            .unwrap();
        assert_eq!(String::from_utf8(again).unwrap(), csv);
    }
}
