//! The swarm recording (`simrob-swarm-recording`, versions 1 and 2): its writers, its reader
//! and its validation.
//!
//! Version 2 ([`compact`], what `simrob swarm run --record` writes) keeps version 1's header
//! line and its JSON lines as records, and holds each snapshot as binary columns (16 bytes an
//! entity before deflate, about 7 after). Version 1, below, is all JSON lines.
//!
//! JSON lines (one JSON object per line, UTF-8), flushed after every line so a file can be
//! read while it is being written. Every line has a `"type"`:
//!
//! * first line, `"header"`: `{"type":"header","format":"simrob-swarm-recording",
//!   "version":1,"scenario":…,"seed":…,"fps":…,"snapshot_period":…,"width":…,"height":…,
//!   "kinds":["world","wall","drone",…],"walls":[[x,y,hw,hh],…],
//!   "pois":[{"name":…,"x":…,"y":…}],"paths":[[x1,y1,x2,y2],…]}` — the static world
//!   (walls — including the rectangles of a vector obstacle map — as centre and half
//!   extents; map-path edges as segments);
//! * `"snapshot"`: `{"type":"snapshot","frame":…,"t":…,"entities":[[id,kind,x,y,theta,
//!   state],…]}` — every entity with a position that is not a wall; `kind` indexes the
//!   header's `kinds`; `state` is a short string (`""`, `"flying"`, `"hovering"`,
//!   `"crashed"`, `"carried"`, `"blocked"`, `"done"`, …); numbers are rounded to 1/1000;
//! * `"log"`: `{"type":"log","t":…,"entity":…,"text":…}` — errors, script ends, notes;
//! * `"clock"`: `{"type":"clock","second":n,"wall":s}` — wall seconds simulated second `n`
//!   took;
//! * last line, `"end"`: `{"type":"end","summary":{…}}` — the run's summary.
//!
//! Readers must ignore unknown `type`s and unknown fields; a new version number means a
//! change that breaks that rule.
//!
//! **Validation** (the reader's, the only one): the header needs `format`, `version` 1 and a
//! positive `width` and `height`, finite walls and map paths and at most 255 kinds; every
//! snapshot a time no earlier than the one before, finite poses and kinds the header names
//! (when it names any; a state is any word). Each error names the
//! line that is wrong, as does a whole line that is not JSON. Only whole lines are read: a
//! last line without its newline is being written and is read by a later [`Reader::refresh`].
//! (Version 2: a record running past the end of the file is being written, unless the file
//! already ends with its end record: then its length is damaged, an error.)

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};

use serde::{Deserialize, Serialize};
use serde_json::json;

pub mod compact;
pub use compact::{Columns, CompactWriter, STATES};

/// The format name in the header line.
pub const FORMAT: &str = "simrob-swarm-recording";
/// The format version of the JSON-lines layout.
pub const VERSION: u32 = 1;
/// The format version of the compact layout ([`compact`]).
pub const VERSION_COMPACT: u32 = 2;
/// Longest header line a reader accepts.
const MAX_HEADER_BYTES: u64 = 64 << 20;

fn default_fps() -> f64 {
    24.0
}

/// The static part of the world: the header line (without its `type`, `format` and
/// `version`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// The scenario's name.
    #[serde(default)]
    pub scenario: String,
    /// The run's seed.
    #[serde(default)]
    pub seed: u64,
    /// Simulation frames per simulated second.
    #[serde(default = "default_fps")]
    pub fps: f64,
    /// Simulated seconds between two snapshots.
    #[serde(default)]
    pub snapshot_period: f64,
    /// Width of the map, map units.
    pub width: f64,
    /// Height of the map, map units.
    pub height: f64,
    /// Entity kinds, indexed by a snapshot's `kind`.
    #[serde(default)]
    pub kinds: Vec<String>,
    /// `[x, y, half width, half height]`.
    #[serde(default)]
    pub walls: Vec<[f64; 4]>,
    /// Named points of interest.
    #[serde(default)]
    pub pois: Vec<PoiInfo>,
    /// Map-path edges `[x1, y1, x2, y2]`.
    #[serde(default)]
    pub paths: Vec<[f64; 4]>,
}

/// A named point of interest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PoiInfo {
    /// Its name.
    pub name: String,
    /// Map x.
    pub x: f64,
    /// Map y.
    pub y: f64,
}

/// One entity of a snapshot, as it is written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EntityLine<'a> {
    /// The entity's id.
    pub id: u32,
    /// Index into the header's `kinds`.
    pub kind: u16,
    /// Map x.
    pub x: f64,
    /// Map y.
    pub y: f64,
    /// Heading, radians.
    pub theta: f64,
    /// Its state word (`""`, `"carried"`, `"done"`, …).
    pub state: &'a str,
}

/// Why a line could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Writing failed (a full disk, a closed pipe).
    #[error("cannot write the recording: {0}")]
    Io(#[from] std::io::Error),
    /// A value could not be written as JSON.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// A coordinate the compact layout cannot hold (beyond ±2,147,483 map units, or not
    /// finite).
    #[error(
        "entity {entity}: {} cannot be recorded (beyond ±2,147,483 map units, or not finite)",
        simrob_math::Shown::of(.value)
    )]
    Range {
        /// The entity.
        entity: u32,
        /// The value.
        value: f64,
    },
    /// A pose that is not a finite number: JSON has none (a version-1 snapshot line).
    #[error("entity {entity}: {value} cannot be recorded (not a finite number)")]
    NotFinite {
        /// The entity.
        entity: u32,
        /// The value.
        value: f64,
    },
    /// A kind index above 255.
    #[error("entity kind {0}: the compact recording holds at most 256 kinds")]
    Kind(u16),
    /// A state word the compact layout does not know.
    #[error("state {0:?} is not one of the compact recording's states")]
    State(String),
    /// A snapshot or record too large for the layout.
    #[error("a snapshot larger than the compact recording holds")]
    TooLarge,
}

/// `v` rounded to 1/1000 (a number too large to scale is kept: it is whole already).
fn r3(v: f64) -> f64 {
    let scaled = v * 1000.0;
    if scaled.is_finite() {
        scaled.round() / 1000.0
    } else {
        v
    }
}

/// Writes a swarm recording to any writer (the shell opens the file), flushing after every
/// line: [`Writer::header`] first, then snapshots, log and clock lines, then
/// [`Writer::end`].
pub struct Writer<W: Write> {
    out: W,
    buf: String,
}

impl<W: Write> Writer<W> {
    /// A writer to `out`.
    pub fn new(out: W) -> Self {
        Writer {
            out,
            buf: String::new(),
        }
    }

    fn line(&mut self, value: &serde_json::Value) -> Result<(), WriteError> {
        let text = serde_json::to_string(value)?;
        self.write_raw(&text)
    }

    fn write_raw(&mut self, text: &str) -> Result<(), WriteError> {
        self.out
            .write_all(text.as_bytes())
            .and_then(|_| self.out.write_all(b"\n"))
            .and_then(|_| self.out.flush())
            .map_err(WriteError::Io)
    }

    /// The header line.
    pub fn header(&mut self, h: &Header) -> Result<(), WriteError> {
        let mut v = serde_json::to_value(h)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("type".into(), json!("header"));
            o.insert("format".into(), json!(FORMAT));
            o.insert("version".into(), json!(VERSION));
        }
        self.line(&v)
    }

    /// A snapshot line: simulation frame `frame` at simulated time `t` (numbers rounded to
    /// 1/1000). A pose that is not a finite number is refused ([`WriteError::NotFinite`]),
    /// and nothing is written: JSON has no infinities or NaN.
    pub fn snapshot<'a>(
        &mut self,
        frame: u64,
        t: f64,
        entities: impl IntoIterator<Item = EntityLine<'a>>,
    ) -> Result<(), WriteError> {
        use std::fmt::Write as _;
        // Hand-written: snapshots of 100,000 robots are the hot path of recording.
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let _ = write!(
            buf,
            "{{\"type\":\"snapshot\",\"frame\":{},\"t\":{},\"entities\":[",
            frame,
            r3(t)
        );
        for (k, e) in entities.into_iter().enumerate() {
            if k > 0 {
                buf.push(',');
            }
            if let Some(&value) = [e.x, e.y, e.theta].iter().find(|v| !v.is_finite()) {
                self.buf = buf;
                return Err(WriteError::NotFinite {
                    entity: e.id,
                    value,
                });
            }
            let _ = write!(
                buf,
                "[{},{},{},{},{},\"{}\"]",
                e.id,
                e.kind,
                r3(e.x),
                r3(e.y),
                r3(e.theta),
                e.state
            );
        }
        buf.push_str("]}");
        let r = self.write_raw(&buf);
        self.buf = buf;
        r
    }

    /// A log line: `line`'s fields (`t`, `entity`, `text`) with `"type":"log"`.
    pub fn log(&mut self, line: &impl Serialize) -> Result<(), WriteError> {
        let mut v = serde_json::to_value(line)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("type".into(), json!("log"));
        }
        self.line(&v)
    }

    /// A clock line: wall seconds that simulated second `second` took.
    pub fn clock(&mut self, second: u64, wall: f64) -> Result<(), WriteError> {
        self.line(&json!({"type": "clock", "second": second, "wall": wall}))
    }

    /// The last line, with the run's summary.
    pub fn end(&mut self, summary: &impl Serialize) -> Result<(), WriteError> {
        self.line(&json!({"type": "end", "summary": summary}))
    }
}

/// Why a swarm recording, or one of its lines, cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Reading the file failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Nothing in the file.
    #[error("empty file: not a swarm recording")]
    Empty,
    /// The first line is not a header.
    #[error("line 1: not a {FORMAT} header (it needs format, version, width, height): {0}")]
    NotAHeader(#[source] serde_json::Error),
    /// A version this reader does not know.
    #[error(
        "line 1: {FORMAT} version {0:?} is not supported (this simrob reads versions 1 and 2)"
    )]
    Version(Option<u64>),
    /// Another format.
    #[error("line 1: not a {FORMAT} (format {0:?})")]
    Format(Option<String>),
    /// A map without an area.
    #[error(
        "line 1: the map is {} × {}: both must be positive",
        simrob_math::Shown::of(.width),
        simrob_math::Shown::of(.height)
    )]
    Size {
        /// The header's width.
        width: f64,
        /// The header's height.
        height: f64,
    },
    /// A wall or map path with a coordinate that is not finite.
    #[error("line 1: a wall or a map-path is not finite")]
    NotFinite,
    /// More kinds than a snapshot's kind index may name.
    #[error("line 1: {0} entity kinds: at most {max}", max = u8::MAX)]
    Kinds(usize),
    /// A snapshot line whose time cannot be read.
    #[error("line {line}: a snapshot without a time")]
    NoTime {
        /// Its line (the header is line 1).
        line: u64,
    },
    /// A snapshot earlier than the one before it.
    #[error("line {line}: a snapshot earlier than the one before")]
    OutOfOrder {
        /// Its line.
        line: u64,
    },
    /// A snapshot line that is not a snapshot.
    #[error("line {line}: bad snapshot: {source}")]
    Snapshot {
        /// Its line.
        line: u64,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// A whole line (version 1) that is not JSON.
    #[error("line {line}: not a JSON line (a version-1 recording is all JSON lines)")]
    NotJson {
        /// Its line.
        line: u64,
    },
    /// An entity whose kind indexes no kind of the header.
    #[error("line {line}: entity {entity}: kind {kind}, but the header names {kinds} kinds (0 to {})", .kinds.saturating_sub(1))]
    Kind {
        /// Its line (version 2: its record).
        line: u64,
        /// The entity's id.
        entity: u32,
        /// Its kind index.
        kind: u32,
        /// Kinds the header names.
        kinds: usize,
    },
    /// An entity whose pose is not finite.
    #[error("line {line}: entity {entity}: a pose that is not finite")]
    Pose {
        /// Its line.
        line: u64,
        /// The entity.
        entity: u32,
    },
    /// A version-2 record that cannot be read.
    #[error("record {record} (byte {offset}): {what}")]
    Record {
        /// Its number (the header is record 1).
        record: u64,
        /// Where it starts in the file.
        offset: u64,
        /// What is wrong.
        what: &'static str,
    },
    /// A snapshot past the last one indexed.
    #[error("frame {index}: the recording has {count}")]
    NoFrame {
        /// The snapshot asked for.
        index: usize,
        /// Snapshots indexed.
        count: usize,
    },
}

/// The raw header, its format and version checked before anything else.
#[derive(Deserialize)]
struct RawHeader {
    format: Option<String>,
    version: Option<u64>,
    #[serde(default)]
    states: Vec<String>,
    #[serde(flatten)]
    header: Header,
}

/// Reads and checks a header line (line 1).
pub fn parse_header(line: &[u8]) -> Result<Header, ReadError> {
    parse_header_versioned(line).map(|(h, _, _)| h)
}

/// Reads and checks a header line: the header, its version and (version 2) its states.
fn parse_header_versioned(line: &[u8]) -> Result<(Header, u32, Vec<String>), ReadError> {
    let raw: RawHeader = serde_json::from_slice(line).map_err(ReadError::NotAHeader)?;
    let version = match (raw.format.as_deref(), raw.version) {
        (Some(FORMAT), Some(v @ (1 | 2))) => v as u32,
        (Some(FORMAT), v) => return Err(ReadError::Version(v)),
        (f, _) => return Err(ReadError::Format(f.map(str::to_string))),
    };
    let h = raw.header;
    if !(h.width.is_finite() && h.width > 0.0 && h.height.is_finite() && h.height > 0.0) {
        return Err(ReadError::Size {
            width: h.width,
            height: h.height,
        });
    }
    let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
    if !h.walls.iter().all(|w| finite(w)) || !h.paths.iter().all(|p| finite(p)) {
        return Err(ReadError::NotFinite);
    }
    if h.kinds.len() > usize::from(u8::MAX) {
        return Err(ReadError::Kinds(h.kinds.len()));
    }
    if raw.states.len() > 256 {
        return Err(ReadError::Kinds(raw.states.len()));
    }
    let states = if raw.states.is_empty() {
        STATES.iter().map(|s| s.to_string()).collect()
    } else {
        raw.states
    };
    Ok((h, version, states))
}

/// One entity of a snapshot, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Entity {
    /// The entity's id.
    pub id: u32,
    /// Index into the header's `kinds`.
    pub kind: u32,
    /// Map x.
    pub x: f64,
    /// Map y.
    pub y: f64,
    /// Heading, radians.
    pub theta: f64,
    /// Its state word.
    pub state: String,
}

/// A snapshot line, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// The simulation frame.
    pub frame: u64,
    /// Simulated seconds.
    pub t: f64,
    /// Every entity with a position that is not a wall.
    pub entities: Vec<Entity>,
}

/// Reads and checks snapshot line number `line`: finite poses.
pub fn parse_snapshot(text: &[u8], line: u64) -> Result<Snapshot, ReadError> {
    #[derive(Deserialize)]
    struct Snap {
        frame: u64,
        t: f64,
        entities: Vec<(u32, u32, f64, f64, f64, String)>,
    }
    let snap: Snap =
        serde_json::from_slice(text).map_err(|source| ReadError::Snapshot { line, source })?;
    let mut entities = Vec::with_capacity(snap.entities.len());
    for (id, kind, x, y, theta, state) in snap.entities {
        if !(x.is_finite() && y.is_finite() && theta.is_finite()) {
            return Err(ReadError::Pose { line, entity: id });
        }
        entities.push(Entity {
            id,
            kind,
            x,
            y,
            theta,
            state,
        });
    }
    Ok(Snapshot {
        frame: snap.frame,
        t: snap.t,
        entities,
    })
}

/// The simulated time of a snapshot line (`{"type":"snapshot","frame":…,"t":T,…`), read
/// without parsing the entities.
pub fn snapshot_time(line: &[u8]) -> Option<f64> {
    let at = line.windows(4).position(|w| w == b"\"t\":")? + 4;
    let rest = &line[at..];
    let end = rest
        .iter()
        .position(|&c| c == b',' || c == b'}')
        .unwrap_or(rest.len());
    std::str::from_utf8(&rest[..end])
        .ok()?
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|t| t.is_finite())
}

/// Whether a (non-snapshot) line is the recording's last, `{"type":"end",…}` (its keys in
/// any order).
fn is_end(line: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Typed<'a> {
        #[serde(borrow, rename = "type")]
        kind: Option<&'a str>,
    }
    serde_json::from_slice::<Typed>(line).is_ok_and(|t| t.kind == Some("end"))
}

/// Where a snapshot line is.
#[derive(Clone, Copy, Debug)]
struct Place {
    offset: u64,
    len: usize,
    line: u64,
}

/// A swarm recording read on demand: the header checked on open, then an index of the
/// snapshot lines (position and simulated time; [`Reader::refresh`] adds what a writer
/// appended since), each snapshot parsed when asked for. A recording of any length opens at
/// once.
pub struct Reader<R: Read + Seek> {
    src: R,
    header: Header,
    places: Vec<Place>,
    /// Simulated time of every snapshot, non-decreasing.
    times: Vec<f64>,
    /// Bytes indexed so far (whole lines only).
    scanned: u64,
    /// Lines (version 1) or records (version 2) read so far.
    line_no: u64,
    finished: bool,
    version: u32,
    states: Vec<String>,
    dropped: Vec<f64>,
}

impl<R: Read + Seek> std::fmt::Debug for Reader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("swarm::Reader")
            .field("scenario", &self.header.scenario)
            .field("frames", &self.times.len())
            .field("finished", &self.finished)
            .finish()
    }
}

impl<R: Read + Seek> Reader<R> {
    /// Reads and checks the header of `src` (from its start) and indexes every whole
    /// snapshot line.
    pub fn open(mut src: R) -> Result<Reader<R>, ReadError> {
        src.seek(SeekFrom::Start(0))?;
        let mut first = Vec::new();
        BufReader::new(&mut src)
            .take(MAX_HEADER_BYTES)
            .read_until(b'\n', &mut first)?;
        if first.is_empty() {
            return Err(ReadError::Empty);
        }
        let (header, version, states) = parse_header_versioned(first.trim_ascii())?;
        let mut r = Reader {
            src,
            header,
            places: Vec::new(),
            times: Vec::new(),
            scanned: first.len() as u64,
            line_no: 1,
            finished: false,
            version,
            states,
            dropped: Vec::new(),
        };
        r.refresh()?;
        Ok(r)
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Snapshots indexed so far.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// No snapshot indexed yet.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Simulated times of the snapshots, non-decreasing.
    pub fn times(&self) -> &[f64] {
        &self.times
    }

    /// Whether the writer ended the recording (its `end` line is there).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The file's version: 1 (JSON lines) or 2 (compact).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// Simulated times of the snapshots the writer left out because it could not keep up
    /// (version 2's `dropped` records).
    pub fn dropped(&self) -> &[f64] {
        &self.dropped
    }

    /// Indexes the version-2 records appended since the last call.
    fn refresh_compact(&mut self) -> Result<(), ReadError> {
        let end = self.src.seek(SeekFrom::End(0))?;
        while !self.finished && end - self.scanned >= 5 {
            let offset = self.scanned;
            let record = self.line_no + 1;
            let bad = |what| ReadError::Record {
                record,
                offset,
                what,
            };
            self.src.seek(SeekFrom::Start(offset))?;
            let mut head = [0u8; 5 + 16];
            self.src.read_exact(&mut head[..5])?;
            let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]);
            if head[0] != compact::TAG_SNAPSHOT && head[0] != compact::TAG_JSON {
                return Err(bad("an unknown record tag"));
            }
            let max = compact::MAX_ENTITIES as u64 * compact::ENTITY_BYTES as u64 * 2;
            if u64::from(len) > max {
                return Err(bad("a record longer than any the format allows"));
            }
            if end - offset - 5 < u64::from(len) {
                // A record still being written, unless the file already ends with its end
                // record: then this record's length is damaged.
                if self.ends_with_end_record(offset + 5, end)? {
                    return Err(bad(
                        "a record running past the recording's end record (a damaged length)",
                    ));
                }
                break;
            }
            match head[0] {
                compact::TAG_SNAPSHOT => {
                    if (len as usize) < compact::SNAPSHOT_HEAD {
                        return Err(bad("a snapshot shorter than its head"));
                    }
                    self.src.read_exact(&mut head[5..])?;
                    let mut tb = [0u8; 8];
                    tb.copy_from_slice(&head[13..21]);
                    let t = f64::from_le_bytes(tb);
                    if !t.is_finite() {
                        return Err(bad("a snapshot without a finite time"));
                    }
                    if self.times.last().is_some_and(|&last| t < last) {
                        return Err(bad("a snapshot earlier than the one before"));
                    }
                    self.places.push(Place {
                        offset: offset + 5,
                        len: len as usize,
                        line: record,
                    });
                    self.times.push(t);
                }
                compact::TAG_JSON => {
                    if len > compact::MAX_JSON_BYTES {
                        return Err(bad("a JSON record longer than 64 MiB"));
                    }
                    let mut text = vec![0; len as usize];
                    self.src.read_exact(&mut text)?;
                    #[derive(Deserialize)]
                    struct Typed<'a> {
                        #[serde(borrow, rename = "type")]
                        kind: Option<&'a str>,
                        t: Option<f64>,
                    }
                    let typed: Typed = serde_json::from_slice(&text)
                        .map_err(|_| bad("a JSON record that is not a JSON object"))?;
                    match typed.kind {
                        Some("end") => self.finished = true,
                        Some("dropped") => self.dropped.push(typed.t.unwrap_or(f64::NAN)),
                        _ => {}
                    }
                }
                _ => return Err(bad("an unknown record tag")),
            }
            self.scanned = offset + 5 + u64::from(len);
            self.line_no = record;
        }
        Ok(())
    }

    /// Whether the bytes `from..end` end with a whole end record (`J`, its length, then
    /// `{"type":"end",…}`), looked for in the last MiB.
    fn ends_with_end_record(&mut self, from: u64, end: u64) -> Result<bool, ReadError> {
        let start = from.max(end.saturating_sub(1 << 20));
        self.src.seek(SeekFrom::Start(start))?;
        let mut tail = Vec::new();
        (&mut self.src).take(end - start).read_to_end(&mut tail)?;
        Ok((0..tail.len().saturating_sub(5)).any(|p| {
            tail[p] == compact::TAG_JSON
                && u32::from_le_bytes([tail[p + 1], tail[p + 2], tail[p + 3], tail[p + 4]]) as usize
                    == tail.len() - p - 5
                && is_end(&tail[p + 5..])
        }))
    }

    /// Indexes the whole lines appended since the last call; returns how many snapshots it
    /// added. A snapshot without a readable time, or earlier than the one before, is an
    /// error naming its line.
    pub fn refresh(&mut self) -> Result<usize, ReadError> {
        let before = self.times.len();
        if self.version == VERSION_COMPACT {
            self.refresh_compact()?;
            return Ok(self.times.len() - before);
        }
        self.src.seek(SeekFrom::Start(self.scanned))?;
        let mut reader = BufReader::with_capacity(1 << 20, &mut self.src);
        let mut line = Vec::new();
        while !self.finished {
            line.clear();
            let n = reader.read_until(b'\n', &mut line)?;
            if n == 0 || !line.ends_with(b"\n") {
                break; // the end, or a line still being written
            }
            self.line_no += 1;
            let text = line.trim_ascii();
            if text.starts_with(b"{\"type\":\"snapshot\"") {
                let at = self.line_no;
                let t = snapshot_time(text).ok_or(ReadError::NoTime { line: at })?;
                if self.times.last().is_some_and(|&last| t < last) {
                    return Err(ReadError::OutOfOrder { line: at });
                }
                self.places.push(Place {
                    offset: self.scanned,
                    len: n,
                    line: at,
                });
                self.times.push(t);
            } else if is_end(text) {
                self.finished = true;
            } else if !text.is_empty()
                && serde_json::from_slice::<serde::de::IgnoredAny>(text).is_err()
            {
                // Binary records behind a version-1 header, or a damaged line.
                return Err(ReadError::NotJson { line: self.line_no });
            }
            self.scanned += n as u64;
        }
        Ok(self.times.len() - before)
    }

    /// Snapshot `index` (0-based), read and checked.
    pub fn snapshot(&mut self, index: usize) -> Result<Snapshot, ReadError> {
        let place = *self.places.get(index).ok_or(ReadError::NoFrame {
            index,
            count: self.times.len(),
        })?;
        let mut buf = vec![0; place.len];
        self.src.seek(SeekFrom::Start(place.offset))?;
        self.src.read_exact(&mut buf)?;
        let snapshot = if self.version == VERSION_COMPACT {
            compact::decode(&buf, &self.states).map_err(|what| ReadError::Record {
                record: place.line,
                offset: place.offset - 5,
                what,
            })?
        } else {
            parse_snapshot(buf.trim_ascii(), place.line)?
        };
        // A header that names no kinds (they are optional) leaves the index unchecked.
        let kinds = self.header.kinds.len();
        let out_of_range = |e: &&Entity| kinds > 0 && e.kind as usize >= kinds;
        if let Some(e) = snapshot.entities.iter().find(out_of_range) {
            return Err(ReadError::Kind {
                line: place.line,
                entity: e.id,
                kind: e.kind,
                kinds,
            });
        }
        Ok(snapshot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    /// A small header the format tests share (the compact format's tests too).
    pub(super) fn header() -> Header {
        Header {
            scenario: "s".into(),
            seed: 3,
            fps: 10.0,
            snapshot_period: 0.5,
            width: 100.0,
            height: 50.0,
            kinds: vec!["world".into(), "robot".into()],
            walls: vec![[1.0, 2.0, 3.0, 4.0]],
            pois: vec![PoiInfo {
                name: "p".into(),
                x: 1.5,
                y: 2.5,
            }],
            paths: vec![],
        }
    }

    fn robot(x: f64) -> EntityLine<'static> {
        EntityLine {
            id: 4,
            kind: 1,
            x,
            y: 2.0004,
            theta: 0.5,
            state: "done",
        }
    }

    #[test]
    fn what_is_written_reads_back() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out);
        w.header(&header()).unwrap();
        w.snapshot(0, 0.0, [robot(1.0)]).unwrap();
        w.log(&json!({"t": 0.1, "text": "note"})).unwrap();
        w.clock(1, 0.25).unwrap();
        w.snapshot(5, 0.5, [robot(2.0), robot(3.0)]).unwrap();
        w.end(&json!({})).unwrap();
        let text = String::from_utf8(out.clone()).unwrap();
        assert!(text.lines().nth(1).unwrap().starts_with(
            "{\"type\":\"snapshot\",\"frame\":0,\"t\":0,\"entities\":[[4,1,1,2,0.5,\"done\"]]}"
        ));
        let mut r = Reader::open(Cursor::new(out)).unwrap();
        assert_eq!(r.header(), &header());
        assert!(r.is_finished());
        assert_eq!(r.times(), &[0.0, 0.5]);
        let s = r.snapshot(1).unwrap();
        assert_eq!((s.frame, s.t, s.entities.len()), (5, 0.5, 2));
        assert_eq!(s.entities[1].x, 3.0);
        assert_eq!(s.entities[1].y, 2.0);
        assert!(matches!(
            r.snapshot(2),
            Err(ReadError::NoFrame { index: 2, count: 2 })
        ));
    }

    #[test]
    fn a_snapshot_line_is_always_json() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out);
        w.header(&header()).unwrap();
        // 1e308 × 1000 overflows: the number is kept as it is, not rounded to infinity.
        w.snapshot(0, 0.0, [robot(1e308)]).unwrap();
        for bad in [f64::INFINITY, f64::NAN] {
            let e = w.snapshot(1, 0.1, [robot(1.0), robot(bad)]).unwrap_err();
            assert!(matches!(e, WriteError::NotFinite { entity: 4, .. }), "{e}");
            assert!(e.to_string().contains("not a finite number"), "{e}");
        }
        w.end(&json!({})).unwrap();
        let mut r = Reader::open(Cursor::new(out)).unwrap();
        assert_eq!(r.times(), &[0.0], "the refused lines are not written");
        assert_eq!(r.snapshot(0).unwrap().entities[0].x, 1e308);
    }

    #[test]
    fn a_kind_the_header_does_not_name_is_refused_naming_the_line() {
        let mut out = Vec::new();
        let mut w = Writer::new(&mut out);
        w.header(&header()).unwrap();
        w.snapshot(0, 0.0, [robot(1.0)]).unwrap();
        w.snapshot(
            1,
            0.1,
            [
                robot(1.0),
                EntityLine {
                    kind: 99,
                    ..robot(2.0)
                },
            ],
        )
        .unwrap();
        w.end(&json!({})).unwrap();
        let mut r = Reader::open(Cursor::new(out)).unwrap();
        assert!(r.snapshot(0).is_ok());
        let e = r.snapshot(1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "line 3: entity 4: kind 99, but the header names 2 kinds (0 to 1)"
        );
    }

    #[test]
    fn a_growing_recording_is_read_a_whole_line_at_a_time() {
        let head = "{\"type\":\"header\",\"format\":\"simrob-swarm-recording\",\"version\":1,\"width\":1,\"height\":1}\n";
        let snap = "{\"type\":\"snapshot\",\"frame\":0,\"t\":0,\"entities\":[]}";
        let mut bytes = format!("{head}{snap}").into_bytes();
        let mut r = Reader::open(Cursor::new(bytes.clone())).unwrap();
        assert_eq!(r.len(), 0, "the line is not whole yet");
        bytes.extend_from_slice(b"\n{\"summary\":{},\"type\":\"end\"}\n");
        *r.src.get_mut() = bytes;
        assert_eq!(r.refresh().unwrap(), 1);
        assert!(r.is_finished());
    }

    #[test]
    fn bad_lines_are_refused_naming_the_line() {
        let head = "{\"type\":\"header\",\"format\":\"simrob-swarm-recording\",\"version\":1,\"width\":1,\"height\":1}\n";
        let snap = |t: &str, x: &str| {
            format!("{{\"type\":\"snapshot\",\"frame\":0,\"t\":{t},\"entities\":[[1,1,{x},0,0,\"\"]]}}\n")
        };
        let open = |text: String| Reader::open(Cursor::new(text.into_bytes()));
        let e = open(format!("{head}{}{}", snap("1", "0"), snap("0.5", "0"))).unwrap_err();
        assert!(matches!(e, ReadError::OutOfOrder { line: 3 }), "{e}");
        assert_eq!(
            e.to_string(),
            "line 3: a snapshot earlier than the one before"
        );
        let e = open(format!("{head}{}", snap("x", "0"))).unwrap_err();
        assert!(matches!(e, ReadError::NoTime { line: 2 }), "{e}");
        let mut r = open(format!("{head}{}{}", snap("0", "0"), snap("1", "1e999"))).unwrap();
        // JSON has no infinities: an overflowing number is refused as it is parsed.
        let e = r.snapshot(1).unwrap_err();
        assert!(matches!(e, ReadError::Snapshot { line: 3, .. }), "{e}");
        for (text, want) in [
            ("", "empty file"),
            (
                "{\"format\":\"simrob-recording\",\"version\":2,\"width\":1,\"height\":1}\n",
                "not a simrob-swarm-recording",
            ),
            (
                "{\"format\":\"simrob-swarm-recording\",\"version\":3,\"width\":1,\"height\":1}\n",
                "version",
            ),
            (
                "{\"format\":\"simrob-swarm-recording\",\"version\":1,\"width\":0,\"height\":1}\n",
                "positive",
            ),
            (
                "{\"format\":\"simrob-swarm-recording\",\"version\":1}\n",
                "width",
            ),
        ] {
            let e = open(text.to_string()).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
        }
    }
}
