//! Swarm recordings replayed in the 2D view: the map, every robot, drone and item in the
//! state it was recorded in, who carries what, with the replay's controls (play, pause,
//! step, a time slider in simulated seconds, the speed).
//!
//! What it reads: a `simrob-swarm-recording` (JSON lines, written by
//! `simrob swarm run --record FILE`; see `simrob_swarm::seer`), indexed on open (the
//! position and simulated time of every snapshot line) and decoded a frame at a time, so a
//! recording of any length opens at once. A recording its writer has not finished (no `end`
//! line yet) is followed: the player waits on its last frame for the next ones. The
//! recording keeps no sizes, names or routes: bodies are drawn
//! [`BODY_HALF`]/[`ITEM_HALF`] map units across, items are labelled by id, and a carried
//! item's carrier is the body it was recorded exactly on (the swarm moves a carried item
//! with its carrier, pose for pose).
//!
//! The pacing is a clock-free core ([`Playhead`]: wall seconds in, the frame due out); the
//! player thread gives it the time. Playback starts when the first page connects (Play
//! before that only arms it: the status says `waiting`); the status says `playing`,
//! `paused` or `ended`.
//!
//! Page commands: `{"cmd":"play"}`, `{"cmd":"pause"}`, `{"cmd":"step","value":FRAMES}`
//! (pauses, then moves on that many frames, 1 by default; negative goes back),
//! `{"cmd":"seek","time":SECONDS}` (the frame shown at that simulated time) or
//! `{"cmd":"seek","value":INDEX}`, `{"cmd":"speed","value":F}` (recorded seconds per wall
//! second, F > 0).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::{Body2d, Frame2d, Poi2d, Replay2d, Scene2d, Status2d, View2d};
use crate::{Backend, CommandError, Guard};

/// The `format` of the recordings this module reads.
pub const FORMAT: &str = "simrob-swarm-recording";
/// Half the width of a robot or drone drawn in a replay, map units (the recording keeps no
/// sizes; the swarm's default body is a disc of radius 5).
pub const BODY_HALF: f64 = 5.0;
/// Half the width of an item drawn in a replay, map units.
pub const ITEM_HALF: f64 = 3.0;
/// How often a player following a recording being written looks for new frames.
pub const FOLLOW_POLL: Duration = Duration::from_millis(250);
/// The slowest and fastest replay speeds accepted.
pub const SPEEDS: (f64, f64) = (1e-3, 1e4);
/// Longest header line accepted.
const MAX_HEADER_BYTES: u64 = 64 << 20;

fn invalid(text: String) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, text)
}

/// A swarm recording read on demand: the scene from its header, the index of its snapshots.
pub struct SwarmRecording {
    path: PathBuf,
    file: File,
    scene: Scene2d,
    /// (offset, length) of every snapshot line.
    lines: Vec<(u64, usize)>,
    /// Simulated time of every snapshot, non-decreasing.
    times: Vec<f64>,
    /// Bytes indexed so far (whole lines only).
    scanned: u64,
    /// Lines read so far.
    line_no: u64,
    finished: bool,
}

impl std::fmt::Debug for SwarmRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SwarmRecording")
            .field("path", &self.path)
            .field("frames", &self.times.len())
            .field("finished", &self.finished)
            .finish()
    }
}

#[derive(Deserialize)]
struct Header {
    format: Option<String>,
    version: Option<u64>,
    #[serde(default)]
    scenario: String,
    #[serde(default)]
    seed: u64,
    width: f64,
    height: f64,
    #[serde(default)]
    kinds: Vec<String>,
    #[serde(default)]
    walls: Vec<[f64; 4]>,
    #[serde(default)]
    pois: Vec<HeaderPoi>,
    #[serde(default)]
    paths: Vec<[f64; 4]>,
}

#[derive(Deserialize)]
struct HeaderPoi {
    name: String,
    x: f64,
    y: f64,
}

/// Why a line of a swarm recording cannot be shown: its header (line 1) or a snapshot.
#[derive(Debug, thiserror::Error)]
pub enum SwarmLineError {
    #[error("line 1: not a {FORMAT} header (it needs format, version, width, height): {0}")]
    NotAHeader(#[source] serde_json::Error),
    #[error("line 1: {FORMAT} version {0:?} is not supported (this simrob reads version 1)")]
    Version(Option<u64>),
    #[error("line 1: not a {FORMAT} (format {0:?})")]
    Format(Option<String>),
    #[error("line 1: the map is {width} × {height}: both must be positive")]
    Size { width: f64, height: f64 },
    #[error("line 1: a wall or a map-path is not finite")]
    NotFinite,
    #[error("line 1: {0} entity kinds: at most {max}", max = u8::MAX)]
    Kinds(usize),
    #[error("bad snapshot: {0}")]
    Snapshot(#[source] serde_json::Error),
    #[error("entity {0}: a pose that is not finite")]
    Pose(u32),
}

/// The scene of a swarm recording's header line.
pub fn scene_from_header(line: &[u8]) -> Result<Scene2d, SwarmLineError> {
    let h: Header = serde_json::from_slice(line).map_err(SwarmLineError::NotAHeader)?;
    match (h.format.as_deref(), h.version) {
        (Some(FORMAT), Some(1)) => {}
        (Some(FORMAT), v) => return Err(SwarmLineError::Version(v)),
        (f, _) => return Err(SwarmLineError::Format(f.map(str::to_string))),
    }
    if !(h.width.is_finite() && h.width > 0.0 && h.height.is_finite() && h.height > 0.0) {
        return Err(SwarmLineError::Size {
            width: h.width,
            height: h.height,
        });
    }
    let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
    if !h.walls.iter().all(|w| finite(w)) || !h.paths.iter().all(|p| finite(p)) {
        return Err(SwarmLineError::NotFinite);
    }
    if h.kinds.len() > usize::from(u8::MAX) {
        return Err(SwarmLineError::Kinds(h.kinds.len()));
    }
    Ok(Scene2d {
        world: "swarm".into(),
        title: format!("replay of {} (seed {})", h.scenario, h.seed),
        units: "unit".into(),
        width: h.width,
        height: h.height,
        rects: h
            .walls
            .iter()
            .map(|w| [w[0] - w[2], w[1] - w[3], w[0] + w[2], w[1] + w[3]])
            .collect(),
        bitmap: None,
        labels: Vec::new(),
        pois: h
            .pois
            .into_iter()
            .filter(|p| p.x.is_finite() && p.y.is_finite())
            .map(|p| Poi2d {
                name: p.name,
                x: p.x,
                y: p.y,
            })
            .collect(),
        paths: h.paths,
        kinds: h.kinds,
        states: super::swarm::states(),
        version: 1,
    })
}

/// The simulated time of a snapshot line (`{"type":"snapshot","frame":…,"t":T,…`), read
/// without parsing the entities.
fn snapshot_time(line: &[u8]) -> Option<f64> {
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

/// A snapshot line: `[id, kind, x, y, theta, state]` per entity.
#[derive(Deserialize)]
struct Snap {
    frame: u64,
    t: f64,
    entities: Vec<(u32, u32, f64, f64, f64, String)>,
}

/// The frame of one snapshot line.
pub fn frame_from_snapshot(line: &[u8], scene: &Scene2d) -> Result<Frame2d, SwarmLineError> {
    let snap: Snap = serde_json::from_slice(line).map_err(SwarmLineError::Snapshot)?;
    let item_kind = scene.kinds.iter().position(|k| k == "item");
    let item_state = scene.state("item");
    let carried_state = scene.state("carried");
    let mut f = Frame2d {
        scene: scene.version,
        frame: snap.frame,
        time: snap.t,
        ..Frame2d::default()
    };
    f.bodies.reserve(snap.entities.len());
    let mut counts: Vec<usize> = vec![0; scene.states.len()];
    for (id, kind, x, y, theta, state) in snap.entities {
        if !(x.is_finite() && y.is_finite() && theta.is_finite()) {
            return Err(SwarmLineError::Pose(id));
        }
        let is_item = item_kind.is_some_and(|k| k == kind as usize);
        let mut state = scene.state(&state);
        if is_item && state == 0 {
            state = item_state;
        }
        if let Some(c) = counts.get_mut(usize::from(state)) {
            *c += 1;
        }
        let half = if is_item { ITEM_HALF } else { BODY_HALF };
        f.bodies.push(Body2d {
            id,
            x,
            y,
            theta,
            half: [half, half],
            kind: u8::try_from(kind).unwrap_or(u8::MAX),
            state,
            disc: !is_item,
        });
    }
    // A carried item sits exactly on its carrier (same recorded pose).
    let key = |b: &Body2d| (b.x.to_bits(), b.y.to_bits());
    let carriers: HashMap<(u64, u64), u32> = f
        .bodies
        .iter()
        .filter(|b| b.state != carried_state && b.state != item_state)
        .map(|b| (key(b), b.id))
        .collect();
    for b in f.bodies.iter().filter(|b| b.state == carried_state) {
        if let Some(&c) = carriers.get(&key(b)) {
            f.carried.push([b.id, c]);
        }
    }
    f.figures
        .push(("entities".into(), f.bodies.len().to_string()));
    for (s, n) in scene.states.iter().zip(&counts) {
        if *n > 0 && !s.name.is_empty() {
            f.figures.push((s.name.clone(), n.to_string()));
        }
    }
    Ok(f)
}

impl SwarmRecording {
    /// Opens `path`, reads its header and indexes every complete snapshot.
    pub fn open(path: &Path) -> std::io::Result<SwarmRecording> {
        let file = File::open(path)?;
        let mut first = Vec::new();
        BufReader::new(&file)
            .take(MAX_HEADER_BYTES)
            .read_until(b'\n', &mut first)?;
        let named = |e: String| invalid(format!("{}: {e}", path.display()));
        if first.is_empty() {
            return Err(named("empty file: not a swarm recording".into()));
        }
        let scene = scene_from_header(first.trim_ascii()).map_err(|e| named(e.to_string()))?;
        let mut r = SwarmRecording {
            path: path.to_path_buf(),
            file,
            scene,
            lines: Vec::new(),
            times: Vec::new(),
            scanned: first.len() as u64,
            line_no: 1,
            finished: false,
        };
        r.refresh()?;
        Ok(r)
    }

    /// The static map.
    pub fn scene(&self) -> &Scene2d {
        &self.scene
    }

    /// Snapshots indexed so far.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Simulated times of the snapshots.
    pub fn times(&self) -> &[f64] {
        &self.times
    }

    /// Whether the writer ended the recording (its `end` line is there).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// Indexes the complete lines appended since the last call; returns how many snapshots
    /// it added. A snapshot without a readable time, or earlier than the one before, is an
    /// error naming its line.
    pub fn refresh(&mut self) -> std::io::Result<usize> {
        let before = self.times.len();
        let mut reader = BufReader::with_capacity(1 << 20, self.file.try_clone()?);
        reader.seek(SeekFrom::Start(self.scanned))?;
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
                let named = |e: &str| {
                    invalid(format!(
                        "{}: line {}: {e}",
                        self.path.display(),
                        self.line_no
                    ))
                };
                let t = snapshot_time(text).ok_or_else(|| named("a snapshot without a time"))?;
                if self.times.last().is_some_and(|&last| t < last) {
                    return Err(named("a snapshot earlier than the one before"));
                }
                self.lines.push((self.scanned, n));
                self.times.push(t);
            } else if is_end(text) {
                self.finished = true;
            }
            self.scanned += n as u64;
        }
        Ok(self.times.len() - before)
    }

    /// Frame `index`.
    pub fn frame(&mut self, index: usize) -> std::io::Result<Frame2d> {
        let &(offset, len) = self.lines.get(index).ok_or_else(|| {
            invalid(format!(
                "frame {index}: the recording has {}",
                self.times.len()
            ))
        })?;
        let mut buf = vec![0; len];
        self.file.seek(SeekFrom::Start(offset))?;
        self.file.read_exact(&mut buf)?;
        frame_from_snapshot(buf.trim_ascii(), &self.scene)
            .map_err(|e| invalid(format!("{}: snapshot {index}: {e}", self.path.display())))
    }
}

/// Where a replay is and how it moves on, without a clock: every call gets the wall time
/// `now` (seconds on any fixed origin) and the recording's frame times.
#[derive(Clone, Debug, PartialEq)]
pub struct Playhead {
    /// The frame shown.
    pub index: usize,
    pub playing: bool,
    /// Recorded seconds per wall second.
    pub speed: f64,
    /// A page is (or has been) connected; until then playing holds the frame.
    pub watched: bool,
    /// (wall, simulated) time the pacing counts from.
    anchor: (f64, f64),
}

impl Playhead {
    /// Paused on frame 0 at `speed`, waiting for a page.
    pub fn new(speed: f64) -> Playhead {
        Playhead {
            index: 0,
            playing: false,
            speed: speed.clamp(SPEEDS.0, SPEEDS.1),
            watched: false,
            anchor: (0.0, 0.0),
        }
    }

    fn restart(&mut self, now: f64, times: &[f64]) {
        self.anchor = (now, times.get(self.index).copied().unwrap_or(0.0));
    }

    /// Plays from the frame shown (from frame 0 when a finished recording is on its last).
    pub fn play(&mut self, now: f64, times: &[f64], finished: bool) {
        if finished && self.index + 1 >= times.len() {
            self.index = 0;
        }
        self.playing = true;
        self.restart(now, times);
    }

    pub fn pause(&mut self) {
        self.playing = false;
    }

    /// Shows frame `index` (clamped to the recording); a playing replay goes on from there.
    pub fn seek(&mut self, index: usize, now: f64, times: &[f64]) {
        self.index = index.min(times.len().saturating_sub(1));
        self.restart(now, times);
    }

    /// The last frame at or before simulated time `t` (the first frame before it starts).
    pub fn index_at(times: &[f64], t: f64) -> usize {
        times.partition_point(|&x| x <= t).saturating_sub(1)
    }

    /// Recorded seconds per wall second, finite and > 0 (clamped to [`SPEEDS`]).
    pub fn set_speed(&mut self, speed: f64, now: f64, times: &[f64]) -> Result<(), CommandError> {
        if !(speed.is_finite() && speed > 0.0) {
            return Err(CommandError::Usage(
                "speed: recorded seconds per second, a number greater than 0",
            ));
        }
        self.speed = speed.clamp(SPEEDS.0, SPEEDS.1);
        self.restart(now, times);
        Ok(())
    }

    /// A page connected: a replay waiting for one starts now.
    pub fn connected(&mut self, now: f64, times: &[f64]) {
        if !self.watched {
            self.watched = true;
            self.restart(now, times);
        }
    }

    /// Moves on to the frame due at `now` (skipping those a slow reader missed); stops on
    /// the last frame of a finished recording. Returns whether anything changed.
    pub fn advance(&mut self, now: f64, times: &[f64], finished: bool) -> bool {
        if !self.playing || !self.watched || times.is_empty() {
            return false;
        }
        let due = self.anchor.1 + (now - self.anchor.0) * self.speed;
        let index = Self::index_at(times, due).max(self.index);
        let moved = index != self.index;
        self.index = index;
        if finished && self.index + 1 >= times.len() {
            self.playing = false;
            return true;
        }
        moved
    }

    /// The wall time the next frame is due, if one will come by itself.
    pub fn next_due(&self, times: &[f64]) -> Option<f64> {
        if !self.playing || !self.watched {
            return None;
        }
        let next = times.get(self.index + 1)?;
        Some(self.anchor.0 + (next - self.anchor.1).max(0.0) / self.speed)
    }

    /// `waiting` (for a page), `playing`, `paused` or `ended`.
    pub fn state(&self, count: usize, finished: bool) -> &'static str {
        if self.playing && !self.watched {
            "waiting"
        } else if self.playing {
            "playing"
        } else if finished && self.index + 1 >= count {
            "ended"
        } else {
            "paused"
        }
    }
}

struct Inner {
    recording: SwarmRecording,
    head: Playhead,
    stop: bool,
    /// What was last published (index, state, command count, frames), to publish only
    /// changes.
    shown: Option<(usize, &'static str, u64, usize)>,
    /// Bumped by every command, so a changed speed is published too.
    version: u64,
}

struct Shared {
    inner: Mutex<Inner>,
    wake: Condvar,
    view: OnceLock<View2d>,
    clock: Instant,
    following: bool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now(&self) -> f64 {
        self.clock.elapsed().as_secs_f64()
    }

    /// Publishes the frame shown with the replay's status, if it changed.
    fn publish(&self, inner: &mut Inner) {
        let count = inner.recording.len();
        let finished = inner.recording.is_finished();
        let state = inner.head.state(count, finished);
        let key = (inner.head.index, state, inner.version, count);
        if inner.shown == Some(key) || count == 0 {
            return;
        }
        inner.shown = Some(key);
        match inner.recording.frame(inner.head.index) {
            Ok(mut f) => {
                let times = inner.recording.times();
                f.status = Status2d {
                    state: state.into(),
                    speed: inner.head.speed,
                    controls: true,
                };
                f.replay = Some(Replay2d {
                    count,
                    index: inner.head.index,
                    start: times.first().copied().unwrap_or(0.0),
                    end: times.last().copied().unwrap_or(0.0),
                    following: !finished,
                });
                if let Some(v) = self.view.get() {
                    v.publish(&f);
                }
            }
            Err(e) => {
                tracing::warn!("replay: {e}");
                if let Some(v) = self.view.get() {
                    v.response(&format!("Error: {e}"));
                }
            }
        }
    }

    /// Applies a change to the playhead, publishes it and wakes the player.
    fn update(
        &self,
        f: impl FnOnce(&mut Playhead, f64, &[f64], bool) -> Result<(), CommandError>,
    ) -> Result<(), CommandError> {
        let now = self.now();
        let mut inner = self.lock();
        let inner = &mut *inner;
        let finished = inner.recording.is_finished();
        f(&mut inner.head, now, inner.recording.times(), finished)?;
        inner.version += 1;
        self.publish(inner);
        self.wake.notify_all();
        Ok(())
    }

    /// The player thread: advances while playing, sleeps until the next frame is due.
    fn run(&self) {
        let frame_gap = 1.0 / f64::from(super::FRAME_RATE);
        let mut inner = self.lock();
        loop {
            if inner.stop {
                return;
            }
            let now = self.now();
            let i = &mut *inner;
            let at_end = i.head.index + 1 >= i.recording.len();
            if self.following && !i.recording.is_finished() && at_end {
                if let Err(e) = i.recording.refresh() {
                    tracing::warn!("replay: {e}");
                }
            }
            let finished = i.recording.is_finished();
            i.head.advance(now, i.recording.times(), finished);
            self.publish(i);
            let wait = match i.head.next_due(i.recording.times()) {
                Some(due) => (due - now).max(frame_gap),
                None if self.following && !finished => FOLLOW_POLL.as_secs_f64(),
                None => f64::INFINITY,
            };
            inner = if wait.is_finite() {
                self.wake
                    .wait_timeout(inner, Duration::from_secs_f64(wait.min(3600.0)))
                    .map(|(g, _)| g)
                    .unwrap_or_else(|p| p.into_inner().0)
            } else {
                self.wake.wait(inner).unwrap_or_else(|p| p.into_inner())
            };
        }
    }
}

/// The page's replay commands (a weak link: the view they belong to is the player's).
struct Controls(std::sync::Weak<Shared>);

impl Backend for Controls {
    fn connected(&self) {
        let Some(shared) = self.0.upgrade() else {
            return;
        };
        let _ = shared.update(|head, now, times, _| {
            head.connected(now, times);
            Ok(())
        });
    }

    fn command(&self, cmd: &serde_json::Value) -> Result<(), CommandError> {
        let (name, value) = super::command_parts(cmd)?;
        let shared = self
            .0
            .upgrade()
            .ok_or(CommandError::Stopped("the replay"))?;
        match name {
            "play" => shared.update(|h, now, times, finished| {
                h.play(now, times, finished);
                Ok(())
            }),
            "pause" => shared.update(|h, _, _, _| {
                h.pause();
                Ok(())
            }),
            "step" => {
                let n = value.unwrap_or(1.0);
                if !(n.is_finite() && n.fract() == 0.0 && n != 0.0 && n.abs() <= 1e9) {
                    return Err(CommandError::Usage(
                        "step: a whole number of frames, not 0 (negative goes back)",
                    ));
                }
                shared.update(|h, now, times, _| {
                    h.pause();
                    let to = if n > 0.0 {
                        h.index.saturating_add(n as usize)
                    } else {
                        h.index.saturating_sub((-n) as usize)
                    };
                    h.seek(to, now, times);
                    Ok(())
                })
            }
            "seek" => {
                if let Some(t) = cmd.get("time").and_then(|v| v.as_f64()) {
                    if !t.is_finite() {
                        return Err(CommandError::Usage("seek: a time in simulated seconds"));
                    }
                    shared.update(|h, now, times, _| {
                        h.seek(Playhead::index_at(times, t), now, times);
                        Ok(())
                    })
                } else {
                    let index =
                        cmd.get("value")
                            .and_then(|v| v.as_u64())
                            .ok_or(CommandError::Usage(
                            "seek needs \"time\" (simulated seconds) or \"value\" (a frame index)",
                        ))?;
                    shared.update(|h, now, times, _| {
                        h.seek(usize::try_from(index).unwrap_or(usize::MAX), now, times);
                        Ok(())
                    })
                }
            }
            "speed" => {
                let v = value.ok_or(CommandError::Usage(
                    "speed needs \"value\": a number greater than 0",
                ))?;
                shared.update(|h, now, times, _| h.set_speed(v, now, times))
            }
            other => Err(CommandError::NotInReplay {
                name: other.to_string(),
                takes: " (play, pause, step, seek, speed)",
            }),
        }
    }
}

/// A swarm recording served in the 2D view; dropping it stops the player and the page.
pub struct SwarmReplay {
    shared: Arc<Shared>,
}

impl SwarmReplay {
    /// Serves the 2D view of `recording` on `bind` (port 0 picks a free one), paused on its
    /// first frame at `speed` (recorded seconds per wall second, > 0). Refuses a finished
    /// recording without snapshots.
    pub fn serve(
        recording: SwarmRecording,
        bind: SocketAddr,
        speed: f64,
        guard: Guard,
    ) -> std::io::Result<SwarmReplay> {
        if recording.is_empty() && recording.is_finished() {
            return Err(invalid(format!(
                "{}: the recording has no snapshots",
                recording.path.display()
            )));
        }
        let mut head = Playhead::new(1.0);
        head.set_speed(speed, 0.0, &[])
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        let hello = format!("replay of {}", recording.path.display());
        let scene = recording.scene.clone();
        let shared = Arc::new(Shared {
            following: !recording.is_finished(),
            inner: Mutex::new(Inner {
                recording,
                head,
                stop: false,
                shown: None,
                version: 0,
            }),
            wake: Condvar::new(),
            view: OnceLock::new(),
            clock: Instant::now(),
        });
        let view = View2d::serve(
            bind,
            Arc::new(Controls(Arc::downgrade(&shared))),
            "swarm",
            &hello,
            "replay",
            guard,
        )?;
        view.set_scene(&scene);
        let _ = shared.view.set(view);
        let player = shared.clone();
        std::thread::Builder::new()
            .name("replay-2d".into())
            .spawn(move || player.run())?;
        Ok(SwarmReplay { shared })
    }

    /// The page's address.
    pub fn addr(&self) -> SocketAddr {
        self.shared
            .view
            .get()
            .map_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)), |v| v.addr())
    }

    /// Where the replay is: its state word (`waiting`, `playing`, `paused`, `ended`), the
    /// frame shown and the frames indexed.
    pub fn status(&self) -> (&'static str, usize, usize) {
        let inner = self.shared.lock();
        let count = inner.recording.len();
        (
            inner.head.state(count, inner.recording.is_finished()),
            inner.head.index,
            count,
        )
    }

    /// Plays (from the first page's connection on).
    pub fn play(&self) {
        let _ = Controls(Arc::downgrade(&self.shared)).command(&serde_json::json!({"cmd": "play"}));
    }
}

impl Drop for SwarmReplay {
    fn drop(&mut self) {
        self.shared.lock().stop = true;
        self.shared.wake.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TIMES: [f64; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];

    #[test]
    fn the_playhead_waits_for_a_page_then_keeps_the_recorded_pace() {
        let mut h = Playhead::new(2.0);
        h.play(10.0, &TIMES, true);
        assert_eq!(h.state(5, true), "waiting");
        assert!(!h.advance(50.0, &TIMES, true), "no page: held on frame 0");
        assert_eq!(h.next_due(&TIMES), None);
        h.connected(100.0, &TIMES);
        assert_eq!(h.state(5, true), "playing");
        // At speed 2, frame 1 (0.25 s) is due 0.125 wall s after the start.
        assert_eq!(h.next_due(&TIMES), Some(100.125));
        assert!(!h.advance(100.1, &TIMES, true));
        assert!(h.advance(100.125, &TIMES, true));
        assert_eq!(h.index, 1);
        // A slow reader skips to the frame that is due.
        assert!(h.advance(100.4, &TIMES, true));
        assert_eq!(h.index, 3);
        assert!(h.advance(200.0, &TIMES, true));
        assert_eq!((h.index, h.playing, h.state(5, true)), (4, false, "ended"));
        // Play from the end starts again at frame 0.
        h.play(300.0, &TIMES, true);
        assert_eq!((h.index, h.state(5, true)), (0, "playing"));
    }

    #[test]
    fn a_followed_recording_plays_on_as_it_grows() {
        let mut h = Playhead::new(1.0);
        h.connected(0.0, &TIMES[..2]);
        h.play(0.0, &TIMES[..2], false);
        h.advance(5.0, &TIMES[..2], false);
        assert_eq!((h.index, h.state(2, false)), (1, "playing"));
        // New frames: the newest due is shown at once.
        h.advance(5.0, &TIMES, false);
        assert_eq!(h.index, 4);
    }

    #[test]
    fn seek_pause_and_speed_restart_the_pacing_from_the_frame_shown() {
        let mut h = Playhead::new(1.0);
        h.connected(0.0, &TIMES);
        h.seek(Playhead::index_at(&TIMES, 0.6), 0.0, &TIMES);
        assert_eq!(h.index, 2);
        assert_eq!(Playhead::index_at(&TIMES, -3.0), 0);
        assert_eq!(Playhead::index_at(&TIMES, 9.0), 4);
        h.play(1.0, &TIMES, true);
        h.set_speed(0.5, 1.0, &TIMES).expect("speed");
        assert_eq!(h.next_due(&TIMES), Some(1.5));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert!(h.set_speed(bad, 1.0, &TIMES).is_err());
        }
        assert_eq!(h.speed, 0.5);
        h.pause();
        assert!(!h.advance(100.0, &TIMES, true));
        assert_eq!((h.index, h.state(5, true)), (2, "paused"));
    }

    fn scene() -> Scene2d {
        scene_from_header(
            br#"{"type":"header","format":"simrob-swarm-recording","version":1,"scenario":"s","seed":3,"fps":10,"width":200,"height":100,"kinds":["world","robot","item"],"walls":[[10,20,5,2]],"pois":[{"name":"ward","x":5,"y":6}],"paths":[[0,0,1,1]]}"#,
        )
        .expect("header")
    }

    #[test]
    fn a_snapshot_becomes_a_frame_with_items_their_carriers_and_states() {
        let scene = scene();
        assert_eq!(scene.rects, vec![[5.0, 18.0, 15.0, 22.0]]);
        assert_eq!(scene.title, "replay of s (seed 3)");
        let f = frame_from_snapshot(
            br#"{"type":"snapshot","frame":40,"t":4,"entities":[[1,1,10.5,20,0.5,"ready"],[2,2,10.5,20,0.5,"carried"],[3,2,50,50,0,""],[4,1,50,50,0,"blocked"]]}"#,
            &scene,
        )
        .expect("frame");
        assert_eq!((f.frame, f.time, f.bodies.len()), (40, 4.0, 4));
        assert_eq!(f.carried, vec![[2, 1]], "carried by the robot it sits on");
        let state = |i: usize| scene.states[usize::from(f.bodies[i].state)].name.as_str();
        assert_eq!(
            [state(0), state(1), state(2), state(3)],
            ["ready", "carried", "item", "blocked"]
        );
        assert!(f.bodies[0].disc && !f.bodies[2].disc);
        assert!(f.figures.contains(&("carried".into(), "1".into())));
    }

    #[test]
    fn bad_headers_and_snapshots_are_refused_with_what_is_wrong() {
        for (header, want) in [
            (
                &br#"{"format":"simrob-recording","version":2,"width":1,"height":1}"#[..],
                "not a simrob-swarm-recording",
            ),
            (
                br#"{"format":"simrob-swarm-recording","version":2,"width":1,"height":1}"#,
                "version",
            ),
            (
                br#"{"format":"simrob-swarm-recording","version":1,"width":0,"height":1}"#,
                "positive",
            ),
            (
                br#"{"format":"simrob-swarm-recording","version":1}"#,
                "width",
            ),
            (b"not json", "header"),
        ] {
            let e = scene_from_header(header).expect_err("refused").to_string();
            assert!(e.contains(want), "{e}");
        }
        let scene = scene();
        for line in [
            &br#"{"frame":1,"t":0,"entities":[[1,1,"x",0,0,""]]}"#[..],
            br#"{"frame":1,"t":0}"#,
            br#"{"frame":1,"t":0,"entities":[[1,1,1e999,0,0,""]]}"#,
        ] {
            assert!(frame_from_snapshot(line, &scene).is_err());
        }
        assert_eq!(
            snapshot_time(br#"{"type":"snapshot","frame":3,"t":1.25,"entities":[]}"#),
            Some(1.25)
        );
        assert_eq!(snapshot_time(br#"{"type":"snapshot","frame":3}"#), None);
    }

    #[test]
    fn a_recording_is_indexed_as_it_grows_and_ends() {
        let dir = std::env::temp_dir().join(format!("simrob-replay2d-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("run.jsonl");
        let header = r#"{"type":"header","format":"simrob-swarm-recording","version":1,"width":100,"height":100,"kinds":["world","robot"]}"#;
        let snap = |k: u32| {
            format!(
                r#"{{"type":"snapshot","frame":{k},"t":{},"entities":[[1,1,{k},5,0,""]]}}"#,
                f64::from(k) * 0.5
            )
        };
        std::fs::write(
            &path,
            format!("{header}\n{}\n{{\"type\":\"log\"}}\n{}", snap(0), snap(1)),
        )
        .expect("write");
        let mut r = SwarmRecording::open(&path).expect("open");
        assert_eq!(
            (r.len(), r.is_finished()),
            (1, false),
            "the last line is not whole yet"
        );
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("append");
        write!(
            file,
            "\n{}\n{{\"summary\":{{}},\"type\":\"end\"}}\n",
            snap(2)
        )
        .expect("write");
        assert_eq!(r.refresh().expect("refresh"), 2);
        assert!(r.is_finished());
        assert_eq!(r.times(), &[0.0, 0.5, 1.0]);
        assert_eq!(r.frame(2).expect("frame").bodies[0].x, 2.0);
        assert!(r.frame(3).is_err());
        std::fs::write(&path, format!("{header}\n{}\n{}\n", snap(2), snap(1))).expect("write");
        let e = SwarmRecording::open(&path).expect_err("time goes back");
        assert!(e.to_string().contains("line 3"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
