//! The 3D recording (`simrob-recording`): its header, the compact version-2 codec (the
//! [`Writer`] and the block decoder, [`decode_block`]) and the JSON-lines version 1's frame
//! line ([`parse_line`]). The shell opens files, stamps the start time and indexes a file
//! being written (`simrob_viewer::record`).
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
//!   `simrob replay` follows it.
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
//! body (`simrob_viewer::record::SWARM_ROBOT_SIZE` map units wide); 1 map unit = 1 cm, the map's y mirrored.

use std::io::Write;

use flate2::write::ZlibEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};

use crate::frame::{Frame, FrameBody, FrameEntity};
use crate::swarm;

/// The `format` of the header line.
pub const FORMAT: &str = "simrob-recording";
/// The version the [`Writer`] writes (compact blocks).
pub const VERSION: u32 = 2;
/// The JSON-lines version, still read (one [`Frame`] as JSON a line after the header).
pub const VERSION_JSON_LINES: u32 = 1;
/// The `format` of a swarm recording, which the readers also accept.
pub const SWARM_FORMAT: &str = swarm::FORMAT;
/// Frames per block at most.
pub const BLOCK_FRAMES: usize = 256;
/// Longest header line a reader accepts.
pub const MAX_HEADER_BYTES: u64 = 64 << 20;
/// Magic of a block header.
pub const BLOCK_MAGIC: [u8; 4] = *b"SRB2";
/// Magic of the last block header, which marks a finished recording.
pub const END_MAGIC: [u8; 4] = *b"SRE2";
/// Bytes of a block header.
pub const BLOCK_HEADER: usize = 32;
/// Largest block payload (compressed or not) a reader accepts: a corrupt length is refused
/// rather than allocated.
pub const MAX_BLOCK_BYTES: u32 = 256 << 20;

/// The first line of a recording.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`VERSION`] or [`VERSION_JSON_LINES`].
    pub version: u32,
    /// What was recorded (for `simrob serve`, `udp://IP:PORT`).
    pub source: String,
    /// When recording started, milliseconds since the Unix epoch.
    pub started_unix_ms: u64,
}

impl Header {
    /// The header of a `version` recording of `source` that started `started_unix_ms`
    /// milliseconds after the Unix epoch (the shell reads the clock).
    pub fn new(source: &str, version: u32, started_unix_ms: u64) -> Header {
        Header {
            format: FORMAT.to_string(),
            version,
            source: source.to_string(),
            started_unix_ms,
        }
    }
}

/// Why a block's payload cannot be decoded.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The payload ends inside a frame.
    #[error("the block ends early (byte {at})")]
    Short {
        /// Where it ends.
        at: usize,
    },
    /// A list longer than what is left.
    #[error("a count of {n} is larger than the block")]
    Count {
        /// The count read.
        n: usize,
    },
    /// A block header's frame count beyond [`BLOCK_FRAMES`].
    #[error("a block of {n} frames (a block holds at most {BLOCK_FRAMES})")]
    Frames {
        /// The count read.
        n: u32,
    },
    /// A name that is not UTF-8.
    #[error("{0}")]
    Utf8(std::string::FromUtf8Error),
    /// Bytes after the last frame.
    #[error("{n} bytes left over after the block's frames")]
    LeftOver {
        /// How many.
        n: usize,
    },
}

/// One frame line of a JSON-lines (version 1) recording. A pose or velocity beyond what the
/// compact format's 32-bit floats hold (±3.4 × 10³⁸: a damaged or forged line, no world's
/// numbers) is refused, naming the body or entity.
pub fn parse_line(text: &[u8]) -> Result<Frame, serde_json::Error> {
    let frame = serde_json::from_slice::<Frame>(text)?;
    let beyond = |v: &[f64; 3]| {
        v.iter()
            .any(|x| x.is_nan() || x.abs() > f64::from(f32::MAX))
    };
    let bad = |what: String| {
        <serde_json::Error as serde::de::Error>::custom(format!(
            "{what} is beyond ±3.4e38, what a recording keeps"
        ))
    };
    for b in &frame.bodies {
        for (name, v) in [
            ("position", &b.p),
            ("rotation", &b.r),
            ("velocity", &b.v),
            ("angular velocity", &b.w),
        ] {
            if beyond(v) {
                return Err(bad(format!(
                    "body {} of entity {}: {name} {v:?}",
                    b.id, b.e
                )));
            }
        }
    }
    for e in &frame.entities {
        for (name, v) in [("position", &e.p), ("rotation", &e.r)] {
            if let Some(v) = v.as_ref().filter(|v| beyond(v)) {
                return Err(bad(format!("entity {}: {name} {v:?}", e.id)));
            }
        }
    }
    Ok(frame)
}

/// What kind of file a reader reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `simrob-recording` version 1 (JSON lines).
    JsonLines,
    /// `simrob-recording` version 2 (compact blocks).
    Compact,
    /// `simrob-swarm-recording` version 1 or 2.
    Swarm,
}

/// Why a recording's first line is not a header this reader knows.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    /// The header's fields are not a [`Header`].
    #[error("line 1: bad header: {0}")]
    Bad(serde_json::Error),
    /// A version this reader does not know.
    #[error(
        "line 1: {format} version {version} is not supported (this simrob reads {} versions {} and {}, {} versions 1 and 2)",
        FORMAT, VERSION_JSON_LINES, VERSION, SWARM_FORMAT
    )]
    Version {
        /// The format named.
        format: String,
        /// Its version.
        version: u64,
    },
    /// No version number.
    #[error("line 1: the header has no version number")]
    NoVersion,
    /// Another format.
    #[error(
        "line 1: not a simrob recording (format {}, expected \"{}\" or \"{}\")",
        found.as_deref().map_or("missing".to_string(), |f| format!("{f:?}")), FORMAT, SWARM_FORMAT
    )]
    NotARecording {
        /// The format named, if any.
        found: Option<String>,
    },
}

/// Checks a recording's first line (as JSON): a `simrob-recording` version 1 or 2, or a
/// `simrob-swarm-recording` version 1 or 2 (its header then names the scenario and seed).
pub fn check_header(value: &serde_json::Value) -> Result<(Header, Kind), HeaderError> {
    let format = value.get("format").and_then(|f| f.as_str());
    let version = value.get("version").and_then(|v| v.as_u64());
    match (format, version) {
        (Some(FORMAT), Some(v))
            if v == u64::from(VERSION) || v == u64::from(VERSION_JSON_LINES) =>
        {
            let header: Header = serde_json::from_value(value.clone()).map_err(HeaderError::Bad)?;
            let kind = if v == u64::from(VERSION) {
                Kind::Compact
            } else {
                Kind::JsonLines
            };
            Ok((header, kind))
        }
        (Some(SWARM_FORMAT), Some(1 | 2)) => {
            let scenario = value
                .get("scenario")
                .and_then(|s| s.as_str())
                .unwrap_or("?");
            let seed = value.get("seed").and_then(|s| s.as_u64()).unwrap_or(0);
            Ok((
                Header {
                    format: SWARM_FORMAT.into(),
                    version: 1,
                    source: format!("simrob swarm: {scenario} (seed {seed})"),
                    started_unix_ms: 0,
                },
                Kind::Swarm,
            ))
        }
        (Some(f @ (FORMAT | SWARM_FORMAT)), Some(v)) => Err(HeaderError::Version {
            format: f.to_string(),
            version: v,
        }),
        (Some(FORMAT | SWARM_FORMAT), None) => Err(HeaderError::NoVersion),
        (f, _) => Err(HeaderError::NotARecording {
            found: f.map(str::to_string),
        }),
    }
}

/// Writes a JSON-lines (version 1) recording to any writer: [`JsonLinesWriter::header`],
/// then one [`Frame`] a line ([`JsonLinesWriter::frame`]), each line written whole and
/// flushed.
pub struct JsonLinesWriter<W: Write> {
    out: W,
}

impl<W: Write> JsonLinesWriter<W> {
    /// A writer to `out`.
    pub fn new(out: W) -> Self {
        JsonLinesWriter { out }
    }

    fn line(&mut self, value: &impl Serialize) -> Result<(), swarm::WriteError> {
        let mut text = serde_json::to_string(value)?;
        text.push('\n');
        self.out.write_all(text.as_bytes())?;
        Ok(self.out.flush()?)
    }

    /// The header line (its version should be [`VERSION_JSON_LINES`]).
    pub fn header(&mut self, header: &Header) -> Result<(), swarm::WriteError> {
        self.line(header)
    }

    /// One frame line.
    pub fn frame(&mut self, frame: &Frame) -> Result<(), swarm::WriteError> {
        self.line(frame)
    }
}

/// What the previous frame of the block left, as stored.
#[derive(Default)]
struct Previous {
    bodies: Vec<FrameBody>,
    motion: Vec<[f32; 12]>,
    entities: Vec<FrameEntity>,
    poses: Vec<Option<[f32; 6]>>,
}

fn f32s<const N: usize>(parts: &[&[f64; 3]]) -> [f32; N] {
    let mut out = [0f32; N];
    for (k, v) in parts.iter().flat_map(|p| p.iter()).enumerate().take(N) {
        out[k] = *v as f32;
    }
    out
}

fn motion_of(b: &FrameBody) -> [f32; 12] {
    f32s(&[&b.p, &b.r, &b.v, &b.w])
}

fn pose_of(e: &FrameEntity) -> Option<[f32; 6]> {
    match (&e.p, &e.r) {
        (Some(p), Some(r)) => Some(f32s(&[p, r])),
        _ => None,
    }
}

fn same_body(a: &FrameBody, b: &FrameBody) -> bool {
    a.e == b.e
        && a.id == b.id
        && a.shape == b.shape
        && a.dims == b.dims
        && a.material == b.material
        && a.mass.to_bits() == b.mass.to_bits()
}

fn same_entity(a: &FrameEntity, b: &FrameEntity) -> bool {
    a.id == b.id && a.kind == b.kind && pose_of(a).is_some() == pose_of(b).is_some()
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    let bytes = &s.as_bytes()[..s.len().min(255)];
    out.push(bytes.len() as u8);
    out.extend_from_slice(bytes);
}

fn put_mask(out: &mut Vec<u8>, bits: &[bool]) {
    for chunk in bits.chunks(8) {
        let mut byte = 0u8;
        for (k, &b) in chunk.iter().enumerate() {
            byte |= u8::from(b) << k;
        }
        out.push(byte);
    }
}

/// Appends `frame`, encoded against `prev`, to `out`, and makes it the new `prev`.
fn encode_frame(out: &mut Vec<u8>, frame: &Frame, prev: &mut Previous) {
    out.extend_from_slice(&frame.iteration.to_le_bytes());
    out.extend_from_slice(&frame.time.to_le_bytes());
    out.push(
        u8::from(frame.initialized)
            | u8::from(frame.paused) << 1
            | u8::from(frame.sync) << 2
            | u8::from(frame.auto_adjust) << 3,
    );
    out.extend_from_slice(&frame.timestep.to_le_bytes());
    out.extend_from_slice(&frame.gravity.to_le_bytes());
    out.extend_from_slice(&frame.steps_per_iteration.to_le_bytes());
    out.extend_from_slice(&frame.real_time_factor.to_le_bytes());
    let bodies_same = prev.bodies.len() == frame.bodies.len()
        && prev
            .bodies
            .iter()
            .zip(&frame.bodies)
            .all(|(a, b)| same_body(a, b));
    let entities_same = prev.entities.len() == frame.entities.len()
        && prev
            .entities
            .iter()
            .zip(&frame.entities)
            .all(|(a, b)| same_entity(a, b));
    out.push(u8::from(!bodies_same) | u8::from(!entities_same) << 1);
    if !bodies_same {
        out.extend_from_slice(&(frame.bodies.len() as u32).to_le_bytes());
        for b in &frame.bodies {
            out.extend_from_slice(&b.e.to_le_bytes());
            out.extend_from_slice(&b.id.to_le_bytes());
            put_str(out, &b.shape);
            for d in b.dims {
                out.extend_from_slice(&d.to_le_bytes());
            }
            out.extend_from_slice(&b.material.to_le_bytes());
            out.extend_from_slice(&b.mass.to_le_bytes());
        }
        prev.bodies = frame.bodies.clone();
        prev.motion.clear();
    }
    let motion: Vec<[f32; 12]> = frame.bodies.iter().map(motion_of).collect();
    let moved: Vec<bool> = motion
        .iter()
        .enumerate()
        .map(|(k, m)| prev.motion.get(k) != Some(m))
        .collect();
    put_mask(out, &moved);
    for (m, _) in motion.iter().zip(&moved).filter(|(_, &c)| c) {
        for v in m {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    prev.motion = motion;
    if !entities_same {
        out.extend_from_slice(&(frame.entities.len() as u32).to_le_bytes());
        for e in &frame.entities {
            out.extend_from_slice(&e.id.to_le_bytes());
            put_str(out, &e.kind);
            out.push(u8::from(pose_of(e).is_some()));
        }
        prev.entities = frame.entities.clone();
        prev.poses.clear();
    }
    let poses: Vec<Option<[f32; 6]>> = frame.entities.iter().map(pose_of).collect();
    let posed: Vec<usize> = (0..poses.len()).filter(|&k| poses[k].is_some()).collect();
    let changed: Vec<bool> = posed
        .iter()
        .map(|&k| prev.poses.get(k).copied().flatten() != poses[k])
        .collect();
    put_mask(out, &changed);
    for (&k, _) in posed.iter().zip(&changed).filter(|(_, &c)| c) {
        for v in poses[k].unwrap_or_default() {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    prev.poses = poses;
}

/// Writes a version-2 recording: [`Writer::write_frame`] per iteration; blocks are closed
/// every [`BLOCK_FRAMES`] frames or by [`Writer::flush`]; [`Writer::finish`] (or dropping the
/// writer) closes the last block and marks the file finished.
pub struct Writer<W: Write> {
    out: W,
    payload: Vec<u8>,
    frames_in_block: u32,
    first: (u64, f64),
    last: (u64, f64),
    total: u64,
    prev: Previous,
    finished: bool,
}

impl<W: Write> Writer<W> {
    /// Writes `header` (its version set to [`VERSION`]) to `out`.
    pub fn new(mut out: W, header: &Header) -> std::io::Result<Writer<W>> {
        let header = serde_json::to_string(&Header {
            version: VERSION,
            ..header.clone()
        })
        .map_err(std::io::Error::other)?;
        out.write_all(format!("{header}\n").as_bytes())?;
        out.flush()?;
        Ok(Writer {
            out,
            payload: Vec::new(),
            frames_in_block: 0,
            first: (0, 0.0),
            last: (0, 0.0),
            total: 0,
            prev: Previous::default(),
            finished: false,
        })
    }

    /// Appends one frame (written out when its block closes).
    pub fn write_frame(&mut self, frame: &Frame) -> std::io::Result<()> {
        if self.frames_in_block == 0 {
            self.first = (frame.iteration, frame.time);
        }
        self.last = (frame.iteration, frame.time);
        encode_frame(&mut self.payload, frame, &mut self.prev);
        self.frames_in_block += 1;
        self.total += 1;
        if self.frames_in_block as usize >= BLOCK_FRAMES {
            self.flush()?;
        }
        Ok(())
    }

    /// Frames written so far.
    pub fn frames(&self) -> u64 {
        self.total
    }

    /// Closes the current block (if it has frames) and flushes it to the file.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if self.frames_in_block == 0 {
            return self.out.flush();
        }
        let mut z = ZlibEncoder::new(
            Vec::with_capacity(self.payload.len() / 4),
            Compression::new(6),
        );
        z.write_all(&self.payload)?;
        let data = z.finish()?;
        let mut block = Vec::with_capacity(BLOCK_HEADER + data.len());
        let raw = u32::try_from(self.payload.len()).map_err(std::io::Error::other)?;
        let len = u32::try_from(data.len()).map_err(std::io::Error::other)?;
        block_header(
            &mut block,
            BLOCK_MAGIC,
            len,
            self.frames_in_block,
            raw,
            self.first,
        );
        block.extend_from_slice(&data);
        // One write per block: a reader sees whole blocks or a cut last one.
        self.out.write_all(&block)?;
        self.out.flush()?;
        self.payload.clear();
        self.frames_in_block = 0;
        self.prev = Previous::default();
        Ok(())
    }

    /// Closes the last block and marks the recording finished.
    pub fn finish(mut self) -> std::io::Result<()> {
        self.close()
    }

    /// Closes the last block and marks the recording finished; later calls do nothing.
    pub fn close(&mut self) -> std::io::Result<()> {
        if self.finished {
            return Ok(());
        }
        self.flush()?;
        self.finished = true;
        let mut block = Vec::with_capacity(BLOCK_HEADER);
        let total = u32::try_from(self.total).unwrap_or(u32::MAX);
        block_header(&mut block, END_MAGIC, 0, total, 0, self.last);
        self.out.write_all(&block)?;
        self.out.flush()
    }
}

impl<W: Write> Drop for Writer<W> {
    /// Closes the recording; an error here is lost (call [`Writer::close`] to see it).
    fn drop(&mut self) {
        let _ = self.close();
    }
}

fn block_header(
    out: &mut Vec<u8>,
    magic: [u8; 4],
    len: u32,
    frames: u32,
    raw: u32,
    first: (u64, f64),
) {
    out.extend_from_slice(&magic);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&frames.to_le_bytes());
    out.extend_from_slice(&raw.to_le_bytes());
    out.extend_from_slice(&first.0.to_le_bytes());
    out.extend_from_slice(&first.1.to_le_bytes());
}

/// A little-endian cursor over a block's payload.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let Some(end) = end else {
            return Err(DecodeError::Short { at: self.at });
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.array::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(self.array()?))
    }
    fn f64(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from_le_bytes(self.array()?))
    }
    fn f32(&mut self) -> Result<f64, DecodeError> {
        Ok(f64::from(f32::from_le_bytes(self.array()?)))
    }
    fn v3(&mut self) -> Result<[f64; 3], DecodeError> {
        Ok([self.f32()?, self.f32()?, self.f32()?])
    }
    fn str(&mut self) -> Result<String, DecodeError> {
        let n = self.u8()? as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(DecodeError::Utf8)
    }
    fn mask(&mut self, n: usize) -> Result<Vec<bool>, DecodeError> {
        let bytes = self.take(n.div_ceil(8))?;
        Ok((0..n).map(|k| bytes[k / 8] >> (k % 8) & 1 == 1).collect())
    }
    /// A count of items of at least `min` bytes each: it cannot exceed what is left of the
    /// block, so a corrupt count is refused before anything is allocated for it.
    fn count(&mut self, min: usize) -> Result<usize, DecodeError> {
        let n = self.u32()? as usize;
        if n > (self.bytes.len() - self.at) / min {
            return Err(DecodeError::Count { n });
        }
        Ok(n)
    }
}

/// Decodes the `frames` frames of one (inflated) block payload.
pub fn decode_block(payload: &[u8], frames: u32) -> Result<Vec<Frame>, DecodeError> {
    let mut c = Cursor {
        bytes: payload,
        at: 0,
    };
    if frames as usize > BLOCK_FRAMES {
        return Err(DecodeError::Frames { n: frames });
    }
    let mut out: Vec<Frame> = Vec::with_capacity(frames as usize);
    for _ in 0..frames {
        let mut f = Frame {
            iteration: c.u64()?,
            time: c.f64()?,
            ..Frame::default()
        };
        let flags = c.u8()?;
        f.initialized = flags & 1 != 0;
        f.paused = flags & 2 != 0;
        f.sync = flags & 4 != 0;
        f.auto_adjust = flags & 8 != 0;
        f.timestep = c.f64()?;
        f.gravity = c.f64()?;
        f.steps_per_iteration = c.u32()?;
        f.real_time_factor = c.f64()?;
        let layout = c.u8()?;
        let prev = out.last();
        f.bodies = if layout & 1 != 0 {
            // A body is 45 bytes at least: entity, id, name length, dimensions, material, mass.
            let n = c.count(45)?;
            let mut bodies = Vec::with_capacity(n);
            for _ in 0..n {
                bodies.push(FrameBody {
                    e: c.u32()?,
                    id: c.u32()?,
                    shape: c.str()?,
                    dims: [c.f64()?, c.f64()?, c.f64()?],
                    material: c.u32()?,
                    mass: c.f64()?,
                    p: [0.0; 3],
                    r: [0.0; 3],
                    v: [0.0; 3],
                    w: [0.0; 3],
                });
            }
            bodies
        } else {
            // The first frame of a block compares with an empty world.
            prev.map(|p| p.bodies.clone()).unwrap_or_default()
        };
        let moved = c.mask(f.bodies.len())?;
        for (b, _) in f.bodies.iter_mut().zip(&moved).filter(|(_, &m)| m) {
            b.p = c.v3()?;
            b.r = c.v3()?;
            b.v = c.v3()?;
            b.w = c.v3()?;
        }
        f.entities = if layout & 2 != 0 {
            // An entity is 6 bytes at least: id, name length, whether it has a pose.
            let n = c.count(6)?;
            let mut entities = Vec::with_capacity(n);
            for _ in 0..n {
                let id = c.u32()?;
                let kind = c.str()?;
                let posed = c.u8()? != 0;
                entities.push(FrameEntity {
                    id,
                    kind,
                    p: posed.then_some([0.0; 3]),
                    r: posed.then_some([0.0; 3]),
                });
            }
            entities
        } else {
            prev.map(|p| p.entities.clone()).unwrap_or_default()
        };
        let posed = f.entities.iter().filter(|e| e.p.is_some()).count();
        let changed = c.mask(posed)?;
        for (e, _) in f
            .entities
            .iter_mut()
            .filter(|e| e.p.is_some())
            .zip(&changed)
            .filter(|(_, &m)| m)
        {
            e.p = Some(c.v3()?);
            e.r = Some(c.v3()?);
        }
        out.push(f);
    }
    if c.at != payload.len() {
        return Err(DecodeError::LeftOver {
            n: payload.len() - c.at,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One frame of a block with `bodies` bodies announced (and none following).
    fn payload_announcing(bodies: u32) -> Vec<u8> {
        let mut p = Vec::new();
        p.extend_from_slice(&7u64.to_le_bytes()); // iteration
        p.extend_from_slice(&0.5f64.to_le_bytes()); // time
        p.push(1); // flags
        p.extend_from_slice(&0.01f64.to_le_bytes()); // timestep
        p.extend_from_slice(&(-9.8f64).to_le_bytes()); // gravity
        p.extend_from_slice(&1u32.to_le_bytes()); // steps per iteration
        p.extend_from_slice(&1f64.to_le_bytes()); // real-time factor
        p.push(1); // layout: the bodies follow
        p.extend_from_slice(&bodies.to_le_bytes());
        p
    }

    #[test]
    fn a_frame_count_beyond_a_block_is_refused_before_allocating() {
        let p = payload_announcing(0);
        assert!(matches!(
            decode_block(&p, u32::MAX),
            Err(DecodeError::Frames { n: u32::MAX })
        ));
        assert!(matches!(
            decode_block(&p, BLOCK_FRAMES as u32 + 1),
            Err(DecodeError::Frames { .. })
        ));
    }

    #[test]
    fn a_list_longer_than_its_bytes_can_hold_is_refused() {
        // 4000 bytes follow: room for 88 bodies of 45 bytes, not 1000.
        let mut p = payload_announcing(1000);
        p.extend(std::iter::repeat_n(0u8, 4000));
        let e = decode_block(&p, 1).unwrap_err();
        assert!(matches!(e, DecodeError::Count { n: 1000 }), "{e}");
        let mut p = payload_announcing(u32::MAX);
        p.extend(std::iter::repeat_n(0u8, 64));
        assert!(matches!(
            decode_block(&p, 1),
            Err(DecodeError::Count { .. })
        ));
    }
}
