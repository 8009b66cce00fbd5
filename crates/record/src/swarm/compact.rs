//! Version 2 of the swarm recording: the compact layout, for a million robots at 1 Hz.
//!
//! Line 1 is the JSON header line of version 1 with `"version":2` and `"states"`, the state
//! words a snapshot's state byte indexes. After it, records, each
//! `tag (1 byte) · length (u32, little-endian) · payload (length bytes)`:
//!
//! * tag `J`: one JSON object of version 1 (`log`, `clock`, `end`) or `{"type":"dropped",
//!   "frame":…,"t":…}` — a snapshot the writer could not keep up with and left out (the
//!   run is unchanged; a reader reports the gap);
//! * tag `S`: a snapshot: `frame` (u64), `t` (f64), `count` (u32), `encoding` (u8: 0 stored,
//!   1 deflate, RFC 1951), then the body, deflated or not: `count × 16` bytes in columns —
//!   ids as differences from the id before (the first from 0, wrapping u32), kinds (u8),
//!   states (u8, into the header's `states`), x and y (i32, in thousandths of a map unit),
//!   headings (u16, in 1/65536 of a turn). A column of several bytes is stored one byte
//!   plane after another (all the lowest bytes, then all the next ones, …), which is what
//!   lets deflate shrink it.
//!
//! Numbers are little-endian. Positions are rounded to 1/1000 map unit, as version 1 rounds
//! them; headings to 1/65536 of a turn (version 1: 1/1000 rad).

use std::io::Write;

use flate2::write::DeflateEncoder;
use flate2::Compression;

use super::{EntityLine, Header, WriteError};

/// The state words a compact snapshot's state byte indexes, in order (its header's
/// `states`).
pub const STATES: [&str; 11] = [
    "", "flying", "hovering", "crashed", "idle", "carried", "empty", "ready", "blocked", "failed",
    "done",
];
/// Bytes an entity takes in a snapshot's body before compression.
pub const ENTITY_BYTES: usize = 16;
/// Most entities in one snapshot (a reader refuses more).
pub const MAX_ENTITIES: u32 = 64 << 20;
/// Longest JSON record a reader accepts.
pub(super) const MAX_JSON_BYTES: u32 = 64 << 20;
/// Tag of a JSON record.
pub(super) const TAG_JSON: u8 = b'J';
/// Tag of a snapshot record.
pub(super) const TAG_SNAPSHOT: u8 = b'S';
/// Bytes before a snapshot's body: frame, t, count, encoding.
pub(super) const SNAPSHOT_HEAD: usize = 21;

/// A snapshot quantised into the columns of the compact layout: what a simulation hands a
/// writer on another thread (16 bytes an entity, reused from snapshot to snapshot).
#[derive(Clone, Debug, Default)]
pub struct Columns {
    /// The simulation frame.
    pub frame: u64,
    /// Simulated seconds.
    pub t: f64,
    ids: Vec<u32>,
    kinds: Vec<u8>,
    states: Vec<u8>,
    x: Vec<i32>,
    y: Vec<i32>,
    theta: Vec<u16>,
}

fn quantise(v: f64, entity: u32) -> Result<i32, WriteError> {
    let q = (v * 1000.0).round();
    if q.is_finite() && q.abs() <= f64::from(i32::MAX) {
        Ok(q as i32)
    } else {
        Err(WriteError::Range { entity, value: v })
    }
}

impl Columns {
    /// Empties the columns for the snapshot of `frame` at `t`.
    pub fn begin(&mut self, frame: u64, t: f64) {
        self.frame = frame;
        self.t = t;
        self.ids.clear();
        self.kinds.clear();
        self.states.clear();
        self.x.clear();
        self.y.clear();
        self.theta.clear();
    }

    /// Entities held.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// No entity held.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Adds an entity: a position beyond ±2,147,483 map units, a heading that is not
    /// finite, a kind above 255 or a state word not in [`STATES`] is an error (and adds
    /// nothing).
    pub fn push(&mut self, e: &EntityLine<'_>) -> Result<(), WriteError> {
        let x = quantise(e.x, e.id)?;
        let y = quantise(e.y, e.id)?;
        if !e.theta.is_finite() {
            return Err(WriteError::Range {
                entity: e.id,
                value: e.theta,
            });
        }
        let kind = u8::try_from(e.kind).map_err(|_| WriteError::Kind(e.kind))?;
        let state = STATES
            .iter()
            .position(|s| *s == e.state)
            .ok_or_else(|| WriteError::State(e.state.to_string()))?;
        let turn = (e.theta / std::f64::consts::TAU * 65536.0).round();
        self.ids.push(e.id);
        self.kinds.push(kind);
        self.states.push(state as u8);
        self.x.push(x);
        self.y.push(y);
        self.theta.push(turn.rem_euclid(65536.0) as u16);
        Ok(())
    }

    /// The uncompressed body: the columns, byte plane by byte plane.
    fn body(&self, out: &mut Vec<u8>) {
        out.clear();
        out.reserve(self.len() * ENTITY_BYTES);
        let mut prev = 0u32;
        let deltas: Vec<[u8; 4]> = self
            .ids
            .iter()
            .map(|&id| {
                let d = id.wrapping_sub(prev);
                prev = id;
                d.to_le_bytes()
            })
            .collect();
        for b in 0..4 {
            out.extend(deltas.iter().map(|d| d[b]));
        }
        out.extend_from_slice(&self.kinds);
        out.extend_from_slice(&self.states);
        for col in [&self.x, &self.y] {
            for b in 0..4 {
                out.extend(col.iter().map(|v| v.to_le_bytes()[b]));
            }
        }
        for b in 0..2 {
            out.extend(self.theta.iter().map(|v| v.to_le_bytes()[b]));
        }
    }
}

/// Writes a version-2 (compact) swarm recording to any writer, flushing after every record:
/// [`CompactWriter::header`] first, then snapshots, log, clock and dropped records, then
/// [`CompactWriter::end`].
pub struct CompactWriter<W: Write> {
    out: W,
    level: u32,
    body: Vec<u8>,
    packed: Vec<u8>,
    written: u64,
}

impl<W: Write> CompactWriter<W> {
    /// A writer to `out` deflating snapshots at `level` (0 = stored, 1 fastest … 9
    /// smallest).
    pub fn new(out: W, level: u32) -> Self {
        CompactWriter {
            out,
            level: level.min(9),
            body: Vec::new(),
            packed: Vec::new(),
            written: 0,
        }
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    fn put(&mut self, parts: &[&[u8]]) -> Result<(), WriteError> {
        for p in parts {
            self.out.write_all(p)?;
            self.written += p.len() as u64;
        }
        self.out.flush()?;
        Ok(())
    }

    fn record(&mut self, tag: u8, payload: &[u8]) -> Result<(), WriteError> {
        let len = u32::try_from(payload.len()).map_err(|_| WriteError::TooLarge)?;
        self.put(&[&[tag], &len.to_le_bytes(), payload])
    }

    fn json(&mut self, value: &serde_json::Value) -> Result<(), WriteError> {
        let text = serde_json::to_vec(value)?;
        self.record(TAG_JSON, &text)
    }

    /// The header line (JSON, as version 1's, with `"version":2` and `"states"`).
    pub fn header(&mut self, h: &Header) -> Result<(), WriteError> {
        let mut v = serde_json::to_value(h)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("type".into(), "header".into());
            o.insert("format".into(), super::FORMAT.into());
            o.insert("version".into(), super::VERSION_COMPACT.into());
            o.insert("states".into(), serde_json::to_value(STATES)?);
        }
        let mut text = serde_json::to_vec(&v)?;
        text.push(b'\n');
        self.put(&[&text])
    }

    /// A snapshot record of `cols`.
    pub fn snapshot(&mut self, cols: &Columns) -> Result<(), WriteError> {
        let count = u32::try_from(cols.len())
            .ok()
            .filter(|&n| n <= MAX_ENTITIES)
            .ok_or(WriteError::TooLarge)?;
        let mut body = std::mem::take(&mut self.body);
        cols.body(&mut body);
        let mut packed = std::mem::take(&mut self.packed);
        packed.clear();
        packed.extend_from_slice(&cols.frame.to_le_bytes());
        packed.extend_from_slice(&cols.t.to_le_bytes());
        packed.extend_from_slice(&count.to_le_bytes());
        if self.level == 0 {
            packed.push(0);
            packed.extend_from_slice(&body);
        } else {
            packed.push(1);
            let mut enc = DeflateEncoder::new(packed, Compression::new(self.level));
            enc.write_all(&body)?;
            packed = enc.finish()?;
        }
        let r = self.record(TAG_SNAPSHOT, &packed);
        self.body = body;
        self.packed = packed;
        r
    }

    /// A log record: `line`'s fields (`t`, `entity`, `text`) with `"type":"log"`.
    pub fn log(&mut self, line: &impl serde::Serialize) -> Result<(), WriteError> {
        let mut v = serde_json::to_value(line)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("type".into(), "log".into());
        }
        self.json(&v)
    }

    /// A clock record: wall seconds that simulated second `second` took.
    pub fn clock(&mut self, second: u64, wall: f64) -> Result<(), WriteError> {
        self.json(&serde_json::json!({"type": "clock", "second": second, "wall": wall}))
    }

    /// A dropped record: the snapshot of `frame` at `t` was left out.
    pub fn dropped(&mut self, frame: u64, t: f64) -> Result<(), WriteError> {
        self.json(&serde_json::json!({"type": "dropped", "frame": frame, "t": t}))
    }

    /// The last record, with the run's summary.
    pub fn end(&mut self, summary: &impl serde::Serialize) -> Result<(), WriteError> {
        self.json(&serde_json::json!({"type": "end", "summary": summary}))
    }
}

/// A snapshot record's payload, decoded and checked (the error says what is wrong).
pub(super) fn decode(payload: &[u8], states: &[String]) -> Result<super::Snapshot, &'static str> {
    use std::io::Read;
    if payload.len() < SNAPSHOT_HEAD {
        return Err("a snapshot shorter than its head");
    }
    let u64_at = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&payload[at..at + 8]);
        b
    };
    let frame = u64::from_le_bytes(u64_at(0));
    let t = f64::from_le_bytes(u64_at(8));
    let mut c = [0u8; 4];
    c.copy_from_slice(&payload[16..20]);
    let count = u32::from_le_bytes(c);
    if count > MAX_ENTITIES {
        return Err("more entities than a snapshot may hold");
    }
    let n = count as usize;
    let want = n * ENTITY_BYTES;
    let raw = &payload[SNAPSHOT_HEAD..];
    let inflated;
    let body: &[u8] = match payload[20] {
        0 => raw,
        1 => {
            // Grown as the stream inflates: a corrupt count allocates nothing up front.
            let mut out = Vec::with_capacity(want.min(1 << 20));
            flate2::read::DeflateDecoder::new(raw)
                .take(want as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|_| "a snapshot whose deflate stream is broken")?;
            inflated = out;
            &inflated
        }
        _ => return Err("a snapshot with an unknown encoding"),
    };
    if body.len() != want {
        return Err("a snapshot whose body is not 16 bytes an entity");
    }
    let plane = |start: usize, b: usize, i: usize| body[start + b * n + i];
    let mut entities = Vec::with_capacity(n);
    let mut id = 0u32;
    let (ids, kinds, sts, xs, ys, th) = (0, 4 * n, 5 * n, 6 * n, 10 * n, 14 * n);
    for i in 0..n {
        let d = u32::from_le_bytes([
            plane(ids, 0, i),
            plane(ids, 1, i),
            plane(ids, 2, i),
            plane(ids, 3, i),
        ]);
        id = id.wrapping_add(d);
        let word = |start| {
            i32::from_le_bytes([
                plane(start, 0, i),
                plane(start, 1, i),
                plane(start, 2, i),
                plane(start, 3, i),
            ])
        };
        let state = states
            .get(usize::from(body[sts + i]))
            .ok_or("a state byte beyond the header's states")?;
        let turn = u16::from_le_bytes([plane(th, 0, i), plane(th, 1, i)]);
        let turn = if turn > 32768 {
            f64::from(turn) - 65536.0
        } else {
            f64::from(turn)
        };
        entities.push(super::Entity {
            id,
            kind: u32::from(body[kinds + i]),
            x: f64::from(word(xs)) / 1000.0,
            y: f64::from(word(ys)) / 1000.0,
            theta: turn / 65536.0 * std::f64::consts::TAU,
            state: state.clone(),
        });
    }
    Ok(super::Snapshot { frame, t, entities })
}

#[cfg(test)]
mod tests {
    use super::super::{ReadError, Reader};
    use super::*;
    use std::io::Cursor;

    fn header() -> Header {
        Header {
            snapshot_period: 1.0,
            kinds: vec!["world".into(), "drone".into()],
            ..super::super::tests::header()
        }
    }

    fn columns(frame: u64, t: f64, n: u32) -> Columns {
        let mut c = Columns::default();
        c.begin(frame, t);
        for k in 0..n {
            c.push(&EntityLine {
                id: 1 + 2 * k,
                kind: 1,
                x: f64::from(k) * 0.0123 - 7.0,
                y: 1000.0 + f64::from(k),
                theta: f64::from(k) * 0.1 - 3.0,
                state: STATES[k as usize % STATES.len()],
            })
            .unwrap();
        }
        c
    }

    fn file(level: u32) -> Vec<u8> {
        let mut out = Vec::new();
        let mut w = CompactWriter::new(&mut out, level);
        w.header(&header()).unwrap();
        w.snapshot(&columns(0, 0.0, 50)).unwrap();
        w.log(&serde_json::json!({"t": 0.1, "text": "note"}))
            .unwrap();
        w.clock(1, 0.25).unwrap();
        w.dropped(10, 1.0).unwrap();
        w.snapshot(&columns(20, 2.0, 3)).unwrap();
        w.end(&serde_json::json!({})).unwrap();
        assert_eq!(w.bytes_written() as usize, out.len());
        out
    }

    #[test]
    fn what_is_written_reads_back_stored_and_deflated() {
        for level in [0, 1, 6] {
            let bytes = file(level);
            let mut r = Reader::open(Cursor::new(bytes)).unwrap();
            assert_eq!(r.version(), 2);
            assert_eq!(r.header(), &header());
            assert!(r.is_finished());
            assert_eq!(r.times(), &[0.0, 2.0]);
            assert_eq!(r.dropped(), &[1.0]);
            let s = r.snapshot(0).unwrap();
            assert_eq!((s.frame, s.t, s.entities.len()), (0, 0.0, 50));
            for (k, e) in s.entities.iter().enumerate() {
                let kf = k as f64;
                assert_eq!(e.id, 1 + 2 * k as u32);
                assert_eq!(e.kind, 1);
                assert_eq!(e.x, ((kf * 0.0123 - 7.0) * 1000.0).round() / 1000.0);
                assert_eq!(e.y, 1000.0 + kf);
                let dt = (e.theta - (kf * 0.1 - 3.0)).rem_euclid(std::f64::consts::TAU);
                assert!(
                    dt.min(std::f64::consts::TAU - dt) < 1e-4,
                    "{k}: {}",
                    e.theta
                );
                assert!(e.theta.abs() <= std::f64::consts::PI);
                assert_eq!(e.state, STATES[k % STATES.len()]);
            }
            assert_eq!(r.snapshot(1).unwrap().frame, 20);
        }
        assert!(file(1).len() < file(0).len());
    }

    #[test]
    fn a_growing_file_is_read_a_whole_record_at_a_time() {
        let whole = file(1);
        let head_len = whole.iter().position(|&b| b == b'\n').unwrap() + 1;
        let mut r = Reader::open(Cursor::new(whole[..head_len + 7].to_vec())).unwrap();
        assert_eq!(r.len(), 0);
        for cut in [head_len + 30, whole.len() - 3, whole.len()] {
            *r.src.get_mut() = whole[..cut].to_vec();
            r.refresh().unwrap();
        }
        assert_eq!(r.len(), 2);
        assert!(r.is_finished());
    }

    #[test]
    fn bad_records_are_refused_naming_the_record() {
        let whole = file(1);
        let head_len = whole.iter().position(|&b| b == b'\n').unwrap() + 1;
        let open = |bytes: Vec<u8>| Reader::open(Cursor::new(bytes));
        let mut bad = whole.clone();
        bad[head_len] = b'X';
        let e = open(bad).unwrap_err();
        assert!(matches!(e, ReadError::Record { record: 2, .. }), "{e}");
        assert!(e.to_string().contains("unknown record tag"), "{e}");
        let mut bad = whole.clone();
        bad[head_len + 1..head_len + 5].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(open(bad).unwrap_err().to_string().contains("longer"));
        // A broken deflate stream or a body of the wrong size: refused when read.
        let mut bad = whole.clone();
        for b in &mut bad[head_len + 5 + SNAPSHOT_HEAD..head_len + 5 + SNAPSHOT_HEAD + 8] {
            *b = 0xff;
        }
        let mut r = open(bad).unwrap();
        let e = r.snapshot(0).unwrap_err();
        assert!(matches!(e, ReadError::Record { record: 2, .. }), "{e}");
        let mut bad = whole;
        bad[head_len + 5 + 16..head_len + 5 + 20].copy_from_slice(&51u32.to_le_bytes());
        let e = open(bad).unwrap().snapshot(0).unwrap_err().to_string();
        assert!(e.contains("16 bytes an entity"), "{e}");
    }

    #[test]
    fn a_damaged_length_before_the_end_record_is_an_error_not_a_cut() {
        let whole = file(1);
        let head_len = whole.iter().position(|&b| b == b'\n').unwrap() + 1;
        // The first snapshot's length made longer than the rest of the file (within what
        // the format allows): the end record follows, so this is damage, named.
        let mut bad = whole.clone();
        bad[head_len + 1..head_len + 5].copy_from_slice(&(1u32 << 20).to_le_bytes());
        let e = Reader::open(Cursor::new(bad.clone())).unwrap_err();
        assert!(
            matches!(e, ReadError::Record { record: 2, offset, .. } if offset == head_len as u64),
            "{e}"
        );
        assert!(e.to_string().contains("damaged length"), "{e}");
        // The same file cut before its end record: a file still being written.
        let cut = bad[..whole.len() - 3].to_vec();
        let r = Reader::open(Cursor::new(cut)).unwrap();
        assert_eq!(r.len(), 0);
        assert!(!r.is_finished());
    }

    #[test]
    fn binary_records_behind_a_version_1_header_are_refused() {
        let whole = file(1);
        let head_len = whole.iter().position(|&b| b == b'\n').unwrap() + 1;
        let head = String::from_utf8(whole[..head_len].to_vec()).unwrap();
        assert!(head.contains("\"version\":2"), "{head}");
        let mut bad = head.replace("\"version\":2", "\"version\":1").into_bytes();
        bad.extend_from_slice(&whole[head_len..]);
        bad.push(b'\n');
        let e = Reader::open(Cursor::new(bad)).unwrap_err();
        assert!(matches!(e, ReadError::NotJson { line: 2 }), "{e}");
    }

    #[test]
    fn what_the_layout_cannot_hold_is_refused_before_writing() {
        let mut c = Columns::default();
        c.begin(0, 0.0);
        let e = |x: f64, kind: u16, state: &'static str| EntityLine {
            id: 1,
            kind,
            x,
            y: 0.0,
            theta: 0.0,
            state,
        };
        assert!(matches!(
            c.push(&e(3e6, 1, "")),
            Err(WriteError::Range { entity: 1, .. })
        ));
        assert!(c.push(&e(f64::NAN, 1, "")).is_err());
        assert!(matches!(
            c.push(&e(0.0, 300, "")),
            Err(WriteError::Kind(300))
        ));
        assert!(matches!(
            c.push(&e(0.0, 1, "dancing")),
            Err(WriteError::State(_))
        ));
        assert!(c.is_empty());
    }
}
