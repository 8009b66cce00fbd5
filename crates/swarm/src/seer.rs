//! The Seer: snapshots of the simulation at a set frequency, handed to pluggable
//! consumers (a file recorder, a live viewer, anything implementing [`Consumer`]), with the
//! run's log lines and clock trace alongside.
//!
//! # The recording
//!
//! [`CompactRecorder`] writes the `simrob-swarm-recording` version 2 (binary snapshot
//! columns) on a thread of its own; [`JsonLinesRecorder`] writes version 1 (JSON lines) on
//! the simulation's thread. Both go through the format's owner, `simrob_record::swarm` (the
//! format, its writers, its reader and its validation); this module keeps what is the
//! swarm's: which entities a snapshot holds and in what state.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use simrob_record::swarm::compact::ENTITY_BYTES;
use simrob_record::swarm::{Columns, CompactWriter, EntityLine, WriteError, Writer};
pub use simrob_record::swarm::{Header, PoiInfo, FORMAT, VERSION, VERSION_COMPACT};

use crate::drones::DroneState;
use crate::ecs::SwarmWorld;
use crate::event::{Event, Payload, Tag};
use crate::grid::StaticIndex;
use crate::nav::NavMap;
use crate::script::{Script, ScriptState};
use crate::sim::{first_frame_at, Ctx, LogLine, Summary, System};
use crate::systems::ClockSystem;

/// One entity in a snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct EntitySnap {
    /// The entity's id.
    pub id: u32,
    /// Its type (index into [`SwarmWorld::kind_name`](crate::SwarmWorld::kind_name)).
    pub kind: u16,
    /// x, map units.
    pub x: f64,
    /// y, map units.
    pub y: f64,
    /// Heading, radians.
    pub theta: f64,
    /// What it is doing: a drone's `flying`/`hovering`/`crashed`/`idle`, `carried`, `empty`, a script's `ready`/`blocked`/`done`/`failed`, or empty.
    pub state: &'static str,
    /// Half extents of its collider (zero without one).
    pub half: [f64; 2],
}

impl EntitySnap {
    /// This entity as a recording's snapshot line.
    fn line(&self) -> EntityLine<'_> {
        EntityLine {
            id: self.id,
            kind: self.kind,
            x: self.x,
            y: self.y,
            theta: self.theta,
            state: self.state,
        }
    }
}

/// The simulation at one instant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    /// The frame it was taken at.
    pub frame: u64,
    /// Simulated seconds.
    pub t: f64,
    /// Every entity with a pose except static obstacles and POIs, in id order.
    pub entities: Vec<EntitySnap>,
}

/// Why a consumer stopped taking a run's output. The Seer drops that consumer and keeps the
/// error ([`Seer::failures`]); the run goes on.
#[derive(Debug, thiserror::Error)]
pub enum ConsumerError {
    /// Writing failed (a full disk, a closed pipe).
    #[error("cannot write the recording: {0}")]
    Write(#[from] std::io::Error),
    /// A value could not be written as JSON.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// A value the recording's layout cannot hold.
    #[error("{0}")]
    Layout(WriteError),
    /// The recorder's writing thread stopped without saying why (it panicked).
    #[error("the recording's writer stopped")]
    WriterGone,
}

impl From<WriteError> for ConsumerError {
    fn from(e: WriteError) -> Self {
        match e {
            WriteError::Io(e) => ConsumerError::Write(e),
            WriteError::Json(e) => ConsumerError::Json(e),
            e => ConsumerError::Layout(e),
        }
    }
}

/// Something that receives snapshots: a recorder, a viewer, a metric.
pub trait Consumer: Send {
    /// The static world, before the first snapshot.
    fn header(&mut self, header: &Header) -> Result<(), ConsumerError>;
    /// One snapshot.
    fn snapshot(&mut self, snapshot: &Snapshot) -> Result<(), ConsumerError>;
    /// A log line.
    fn log(&mut self, _line: &LogLine) -> Result<(), ConsumerError> {
        Ok(())
    }
    /// Wall seconds that simulated second `second` took.
    fn clock(&mut self, _second: u64, _wall: f64) -> Result<(), ConsumerError> {
        Ok(())
    }
    /// The end of the run.
    fn finish(&mut self, _summary: &Summary) -> Result<(), ConsumerError> {
        Ok(())
    }
}

/// The header for `world`.
pub fn header(world: &SwarmWorld, scenario: &str, seed: u64, fps: f64, period: f64) -> Header {
    let mut walls: Vec<[f64; 4]> = world
        .res
        .get::<StaticIndex>()
        .items
        .iter()
        .map(|&(_, x, y, s)| {
            let (hw, hh) = s.half_extents();
            [x, y, hw, hh]
        })
        .collect();
    if let Some(map) = &world.res.obstacles {
        walls.extend(map.rects().iter().map(|r| {
            [
                (r.x1 + r.x2) * 0.5,
                (r.y1 + r.y2) * 0.5,
                (r.x2 - r.x1) * 0.5,
                (r.y2 - r.y1) * 0.5,
            ]
        }));
    }
    let nav = world.res.get::<NavMap>();
    let pois = nav
        .pois()
        .iter()
        .map(|(name, &n)| {
            let (x, y) = nav.nodes()[n as usize];
            PoiInfo {
                name: name.clone(),
                x,
                y,
            }
        })
        .collect();
    let paths = nav
        .edges()
        .iter()
        .map(|&(a, b)| {
            let (ax, ay) = nav.nodes()[a as usize];
            let (bx, by) = nav.nodes()[b as usize];
            [ax, ay, bx, by]
        })
        .collect();
    Header {
        scenario: scenario.to_string(),
        seed,
        fps,
        snapshot_period: period,
        width: world.res.width,
        height: world.res.height,
        kinds: world.kind_names().to_vec(),
        walls,
        pois,
        paths,
    }
}

/// A snapshot of every positioned entity except walls.
pub fn snapshot(world: &SwarmWorld, frame: u64, t: f64, out: &mut Snapshot) {
    out.frame = frame;
    out.t = t;
    out.entities.clear();
    for (e, p) in world.pose.iter() {
        let static_obstacle = world.collider.has(e) && !world.vel.has(e) && !world.item.has(e);
        if static_obstacle || world.poi.has(e) {
            continue;
        }
        let state = if let Some(d) = world
            .custom::<crate::drones::Drone>()
            .and_then(|c| c.get(e))
        {
            match d.state {
                DroneState::Flying => "flying",
                DroneState::Hovering => "hovering",
                DroneState::Crashed => "crashed",
                DroneState::Idle => "idle",
            }
        } else if world.item.get(e).is_some_and(|i| i.carried_by.is_some()) {
            "carried"
        } else if world.battery.get(e).is_some_and(|b| b.empty) {
            "empty"
        } else if let Some(s) = Script::of(world, e) {
            match s.state {
                ScriptState::Ready => "ready",
                ScriptState::Blocked => "blocked",
                ScriptState::Done if s.failed => "failed",
                ScriptState::Done => "done",
            }
        } else {
            ""
        };
        out.entities.push(EntitySnap {
            id: e.0,
            kind: world.kind.get(e).copied().unwrap_or(0),
            x: p.x,
            y: p.y,
            theta: p.theta,
            state,
            half: world
                .collider
                .get(e)
                .map(|c| {
                    let (hw, hh) = c.half_extents();
                    [hw, hh]
                })
                .unwrap_or([0.0, 0.0]),
        });
    }
}

/// The Seer system: takes a snapshot every `period` simulated seconds (at the first frame at
/// or after each multiple of it, stamped with that frame's time; one a frame when the period
/// is shorter than a frame) and one at the end, and hands it, with log lines and clock figures, to its consumers. A consumer that
/// fails is dropped and its error kept ([`Seer::errors`]).
pub struct Seer {
    period: f64,
    consumers: Vec<Box<dyn Consumer>>,
    snap: Snapshot,
    failures: Failures,
    scenario: String,
    clock_seconds: u64,
    last_frame: Option<u64>,
}

impl Seer {
    /// The tag of the Seer's periodic event.
    pub const TICK: Tag = Tag::fixed("Seer");

    /// A Seer taking a snapshot every `period` seconds for `consumers`.
    pub fn new(scenario: &str, period: f64, consumers: Vec<Box<dyn Consumer>>) -> Self {
        Seer {
            period: if period > 0.0 && period.is_finite() {
                period
            } else {
                0.1
            },
            consumers,
            snap: Snapshot::default(),
            failures: Failures::default(),
            scenario: scenario.to_string(),
            clock_seconds: 0,
            last_frame: None,
        }
    }

    /// Why consumers were dropped, as they are dropped: a handle to keep before the Seer goes
    /// into the simulation, to report a recording that stopped.
    pub fn failures(&self) -> Failures {
        self.failures.clone()
    }

    fn each(&mut self, mut f: impl FnMut(&mut dyn Consumer) -> Result<(), ConsumerError>) {
        let mut k = 0;
        while k < self.consumers.len() {
            if let Err(e) = f(self.consumers[k].as_mut()) {
                self.failures.push(e);
                self.consumers.remove(k);
            } else {
                k += 1;
            }
        }
    }

    fn flush_logs(&mut self, ctx: &mut Ctx) {
        let logs = std::mem::take(&mut ctx.logs);
        for line in &logs {
            self.each(|c| c.log(line));
        }
    }

    /// A snapshot of the world as it is at the current frame, stamped with that frame's time
    /// (the time of the state it holds).
    fn take(&mut self, ctx: &mut Ctx) {
        self.flush_logs(ctx);
        if self.last_frame == Some(ctx.frame) {
            return;
        }
        self.last_frame = Some(ctx.frame);
        let t = ctx.frame as f64 / ctx.config.fps;
        let mut snap = std::mem::take(&mut self.snap);
        snapshot(&ctx.world, ctx.frame, t, &mut snap);
        self.each(|c| c.snapshot(&snap));
        self.snap = snap;
    }
}

/// Why a [`Seer`]'s consumers were dropped, in the order they failed (shared: the shell keeps
/// a handle while the Seer runs inside the simulation).
#[derive(Clone, Debug, Default)]
pub struct Failures(Arc<std::sync::Mutex<Vec<String>>>);

impl Failures {
    fn push(&self, e: ConsumerError) {
        if let Ok(mut list) = self.0.lock() {
            list.push(e.to_string());
        }
    }

    /// The first consumer's error, if one failed.
    pub fn first(&self) -> Option<String> {
        self.0.lock().ok().and_then(|l| l.first().cloned())
    }
}

impl System for Seer {
    fn name(&self) -> &str {
        "seer"
    }

    fn start(&mut self, ctx: &mut Ctx) {
        let h = header(
            &ctx.world,
            &self.scenario,
            ctx.config.seed,
            ctx.config.fps,
            self.period,
        );
        self.each(|c| c.header(&h));
        ctx.events.schedule(0.0, Event::observation(Self::TICK));
    }

    fn wants(&self, event: &Event) -> bool {
        event.tag == Self::TICK || event.tag == ClockSystem::TAG
    }

    fn react(&mut self, event: &Event, ctx: &mut Ctx) {
        if event.tag == ClockSystem::TAG {
            if let Payload::Value(w) = event.payload {
                self.clock_seconds += 1;
                let n = self.clock_seconds;
                self.each(|c| c.clock(n, w));
            }
            return;
        }
        self.take(ctx);
        let next = next_tick_frame(ctx.frame, self.period, ctx.config.fps);
        ctx.events
            .schedule(next as f64 / ctx.config.fps, Event::observation(Self::TICK));
    }

    fn finish(&mut self, ctx: &mut Ctx, summary: &Summary) {
        // The world as the run left it: at its last frame's time (the event clock may trail
        // it, at the time of the last event handled), as the summary and the live view say.
        self.take(ctx);
        self.each(|c| c.finish(summary));
    }
}

/// The frame of the Seer's tick after the one at `frame`: the first frame at or after the
/// next multiple of `period` (k × `period`, worked out from k, so no rounding builds up and
/// no snapshot is lost), and at least the next frame (a period shorter than a frame gives
/// one snapshot a frame). Ticks fall on frames, so each is handled at the start of its
/// frame and the snapshot it takes holds the state at the tick's time.
fn next_tick_frame(frame: u64, period: f64, fps: f64) -> u64 {
    let frame_at = |k: u64| first_frame_at(k as f64 * period, fps);
    // A k at or just before the next frame's time, then up to the first whose frame is
    // after this one (a step or two).
    let mut k = ((frame + 1) as f64 / fps / period).floor() as u64;
    k = k.saturating_sub(1);
    for _ in 0..4 {
        if frame_at(k) > frame {
            break;
        }
        k = k.saturating_add(1);
    }
    frame_at(k).max(frame + 1)
}

/// Writes a recording in the `simrob-swarm-recording` JSON-lines format to any writer
/// (the shell opens the file), flushing after every line.
pub struct JsonLinesRecorder<W: Write> {
    out: Writer<W>,
}

impl<W: Write> JsonLinesRecorder<W> {
    /// A recorder writing to `out`.
    pub fn new(out: W) -> Self {
        JsonLinesRecorder {
            out: Writer::new(out),
        }
    }
}

impl<W: Write + Send> Consumer for JsonLinesRecorder<W> {
    fn header(&mut self, h: &Header) -> Result<(), ConsumerError> {
        Ok(self.out.header(h)?)
    }

    fn snapshot(&mut self, s: &Snapshot) -> Result<(), ConsumerError> {
        let entities = s.entities.iter().map(EntitySnap::line);
        Ok(self.out.snapshot(s.frame, s.t, entities)?)
    }

    fn log(&mut self, l: &LogLine) -> Result<(), ConsumerError> {
        Ok(self.out.log(l)?)
    }

    fn clock(&mut self, second: u64, wall: f64) -> Result<(), ConsumerError> {
        Ok(self.out.clock(second, wall)?)
    }

    fn finish(&mut self, summary: &Summary) -> Result<(), ConsumerError> {
        Ok(self.out.end(summary)?)
    }
}

/// What a [`CompactRecorder`] has done so far (shared with the shell, which reports it).
#[derive(Debug, Default)]
pub struct RecorderStats {
    written: AtomicU64,
    dropped: AtomicU64,
    bytes: AtomicU64,
    pending: AtomicU64,
    error: std::sync::Mutex<Option<String>>,
}

impl RecorderStats {
    /// Snapshots written.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
    /// Snapshots left out because the writer had not finished the ones before (each is a
    /// `dropped` record in the file).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
    /// Bytes written.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
    /// Why the writer stopped, if it failed (a full disk, a value the layout cannot hold).
    pub fn error(&self) -> Option<String> {
        self.error.lock().ok().and_then(|e| e.clone())
    }
    fn fail(&self, e: &impl std::fmt::Display) {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert_with(|| e.to_string());
        }
    }
}

enum Msg {
    Header(Box<Header>),
    Snapshot(Columns),
    Log(LogLine),
    Clock(u64, f64),
    Dropped(u64, f64),
    End(serde_json::Value),
}

fn write_loop<W: Write>(
    mut w: CompactWriter<W>,
    rx: Receiver<Msg>,
    back: SyncSender<Columns>,
    stats: &RecorderStats,
) -> Result<(), WriteError> {
    for msg in rx {
        match msg {
            Msg::Header(h) => w.header(&h)?,
            Msg::Snapshot(cols) => {
                w.snapshot(&cols)?;
                stats.written.fetch_add(1, Ordering::Relaxed);
                stats
                    .pending
                    .fetch_sub((cols.len() * ENTITY_BYTES) as u64, Ordering::Relaxed);
                // The buffer goes back to the simulation for a later snapshot (two kept).
                let _ = back.try_send(cols);
            }
            Msg::Log(l) => w.log(&l)?,
            Msg::Clock(n, wall) => w.clock(n, wall)?,
            Msg::Dropped(frame, t) => w.dropped(frame, t)?,
            Msg::End(summary) => w.end(&summary)?,
        }
        stats.bytes.store(w.bytes_written(), Ordering::Relaxed);
    }
    Ok(())
}

/// Writes the `simrob-swarm-recording` version 2 (compact: binary snapshot columns,
/// deflated) on a thread of its own, so the simulation never waits on the disk.
///
/// The simulation's side quantises a snapshot into a buffer (16 bytes an entity) and hands
/// it over; the writer encodes, deflates and writes it. Snapshots waiting for the writer may
/// hold at most `max_pending` bytes (one snapshot is always taken when none waits). A
/// snapshot past that (the disk or the encoder did not keep up) is left out: counted
/// ([`RecorderStats::dropped`]) and marked in the file by a `dropped` record; memory stays
/// bounded and the run is unchanged. Log, clock and end records are never left out.
pub struct CompactRecorder {
    tx: Option<Sender<Msg>>,
    free: Receiver<Columns>,
    thread: Option<JoinHandle<Result<(), WriteError>>>,
    stats: Arc<RecorderStats>,
    max_pending: u64,
}

impl CompactRecorder {
    /// A recorder writing to `out` on a new thread, deflating at `level` (0 = stored, 1 =
    /// fastest … 9), holding at most `max_pending` bytes of snapshots for the writer.
    pub fn new<W: Write + Send + 'static>(
        out: W,
        level: u32,
        max_pending: u64,
    ) -> std::io::Result<CompactRecorder> {
        let (tx, rx) = mpsc::channel();
        let (back, free) = mpsc::sync_channel(2);
        let stats = Arc::new(RecorderStats::default());
        let st = stats.clone();
        let thread = std::thread::Builder::new()
            .name("swarm-recorder".into())
            .spawn(move || {
                let r = write_loop(CompactWriter::new(out, level), rx, back, &st);
                if let Err(e) = &r {
                    st.fail(e);
                }
                r
            })?;
        Ok(CompactRecorder {
            tx: Some(tx),
            free,
            thread: Some(thread),
            stats,
            max_pending,
        })
    }

    /// What it has written and left out so far.
    pub fn stats(&self) -> Arc<RecorderStats> {
        self.stats.clone()
    }

    /// Stops the writer (after what it holds) and returns why it had stopped, if it failed.
    fn stop(&mut self) -> Result<(), ConsumerError> {
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            None | Some(Ok(Ok(()))) => Ok(()),
            Some(Ok(Err(e))) => Err(e.into()),
            Some(Err(_)) => Err(ConsumerError::WriterGone),
        }
    }

    fn send(&mut self, msg: Msg) -> Result<(), ConsumerError> {
        if let Some(tx) = &self.tx {
            if tx.send(msg).is_ok() {
                return Ok(());
            }
        }
        // The writer has stopped: say why.
        self.stop()?;
        Err(ConsumerError::WriterGone)
    }
}

impl Drop for CompactRecorder {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

impl Consumer for CompactRecorder {
    fn header(&mut self, h: &Header) -> Result<(), ConsumerError> {
        self.send(Msg::Header(Box::new(h.clone())))
    }

    fn snapshot(&mut self, s: &Snapshot) -> Result<(), ConsumerError> {
        let need = (s.entities.len() * ENTITY_BYTES) as u64;
        let pending = self.stats.pending.load(Ordering::Relaxed);
        if pending > 0 && pending + need > self.max_pending {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            return self.send(Msg::Dropped(s.frame, s.t));
        }
        let mut cols = self.free.try_recv().unwrap_or_default();
        self.stats.pending.fetch_add(need, Ordering::Relaxed);
        cols.begin(s.frame, s.t);
        for e in &s.entities {
            if let Err(err) = cols.push(&e.line()) {
                self.stats.fail(&err);
                let _ = self.stop();
                return Err(err.into());
            }
        }
        self.send(Msg::Snapshot(cols))
    }

    fn log(&mut self, l: &LogLine) -> Result<(), ConsumerError> {
        self.send(Msg::Log(l.clone()))
    }

    fn clock(&mut self, second: u64, wall: f64) -> Result<(), ConsumerError> {
        self.send(Msg::Clock(second, wall))
    }

    fn finish(&mut self, summary: &Summary) -> Result<(), ConsumerError> {
        self.send(Msg::End(serde_json::to_value(summary)?))?;
        self.stop()
    }
}

/// A consumer that keeps everything in memory (tests, tools).
#[derive(Debug, Default)]
pub struct MemoryConsumer {
    /// The run's header, once received.
    pub header: Option<Header>,
    /// The snapshots, in order.
    pub snapshots: Vec<Snapshot>,
    /// The log lines, in order.
    pub logs: Vec<LogLine>,
    /// The end-of-run figures, once the run ended.
    pub summary: Option<Summary>,
}

impl Consumer for MemoryConsumer {
    fn header(&mut self, h: &Header) -> Result<(), ConsumerError> {
        self.header = Some(h.clone());
        Ok(())
    }
    fn snapshot(&mut self, s: &Snapshot) -> Result<(), ConsumerError> {
        self.snapshots.push(s.clone());
        Ok(())
    }
    fn log(&mut self, l: &LogLine) -> Result<(), ConsumerError> {
        self.logs.push(l.clone());
        Ok(())
    }
    fn finish(&mut self, s: &Summary) -> Result<(), ConsumerError> {
        self.summary = Some(s.clone());
        Ok(())
    }
}

/// A consumer shared with whoever reads what it kept (a poisoned lock is taken over: a
/// consumer keeps no invariant a panic elsewhere could break).
impl<T: Consumer> Consumer for std::sync::Arc<std::sync::Mutex<T>> {
    fn header(&mut self, h: &Header) -> Result<(), ConsumerError> {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .header(h)
    }
    fn snapshot(&mut self, s: &Snapshot) -> Result<(), ConsumerError> {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .snapshot(s)
    }
    fn log(&mut self, l: &LogLine) -> Result<(), ConsumerError> {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .log(l)
    }
    fn clock(&mut self, second: u64, wall: f64) -> Result<(), ConsumerError> {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clock(second, wall)
    }
    fn finish(&mut self, s: &Summary) -> Result<(), ConsumerError> {
        self.lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .finish(s)
    }
}
