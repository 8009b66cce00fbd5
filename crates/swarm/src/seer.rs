//! The Seer: snapshots of the simulation at a set frequency, handed to pluggable
//! consumers (a file recorder, a live viewer, anything implementing [`Consumer`]), with the
//! run's log lines and clock trace alongside.
//!
//! # The recording format (`simrob-swarm-recording`, version 1)
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

use std::io::Write;

use serde::Serialize;
use serde_json::json;

use crate::drones::DroneState;
use crate::ecs::SwarmWorld;
use crate::event::{Event, Payload, Tag};
use crate::grid::StaticIndex;
use crate::nav::NavMap;
use crate::script::{Script, ScriptState};
use crate::sim::{Ctx, LogLine, Summary, System};
use crate::systems::ClockSystem;

/// The format name in the header line.
pub const FORMAT: &str = "simrob-swarm-recording";
/// The format version in the header line.
pub const VERSION: u32 = 1;

/// The static part of the world, sent once.
#[derive(Clone, Debug, Serialize)]
pub struct Header {
    pub scenario: String,
    pub seed: u64,
    pub fps: f64,
    pub snapshot_period: f64,
    pub width: f64,
    pub height: f64,
    pub kinds: Vec<String>,
    /// `[x, y, half width, half height]`.
    pub walls: Vec<[f64; 4]>,
    pub pois: Vec<PoiInfo>,
    /// Map-path edges `[x1, y1, x2, y2]`.
    pub paths: Vec<[f64; 4]>,
}

/// A named point of interest.
#[derive(Clone, Debug, Serialize)]
pub struct PoiInfo {
    pub name: String,
    pub x: f64,
    pub y: f64,
}

/// One entity in a snapshot.
#[derive(Clone, Debug, PartialEq)]
pub struct EntitySnap {
    pub id: u32,
    pub kind: u16,
    pub x: f64,
    pub y: f64,
    pub theta: f64,
    pub state: &'static str,
    /// Half extents of its collider (zero without one).
    pub half: [f64; 2],
}

/// The simulation at one instant.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Snapshot {
    pub frame: u64,
    pub t: f64,
    pub entities: Vec<EntitySnap>,
}

/// Why a consumer stopped taking a run's output. The Seer drops that consumer and keeps the
/// error ([`Seer::errors`]); the run goes on.
#[derive(Debug, thiserror::Error)]
pub enum ConsumerError {
    /// Writing failed (a full disk, a closed pipe).
    #[error("cannot write the recording: {0}")]
    Write(#[from] std::io::Error),
    /// A value could not be written as JSON.
    #[error("{0}")]
    Json(#[from] serde_json::Error),
}

/// Something that receives snapshots: a recorder, a viewer, a metric.
pub trait Consumer {
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

/// The Seer system: takes a snapshot every `period` simulated seconds (and one at the end)
/// and hands it, with log lines and clock figures, to its consumers. A consumer that
/// fails is dropped and its error kept ([`Seer::errors`]).
pub struct Seer {
    period: f64,
    consumers: Vec<Box<dyn Consumer>>,
    snap: Snapshot,
    errors: Vec<ConsumerError>,
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
            errors: Vec::new(),
            scenario: scenario.to_string(),
            clock_seconds: 0,
            last_frame: None,
        }
    }

    /// Errors of consumers that were dropped.
    pub fn errors(&self) -> &[ConsumerError] {
        &self.errors
    }

    fn each(&mut self, mut f: impl FnMut(&mut dyn Consumer) -> Result<(), ConsumerError>) {
        let mut k = 0;
        while k < self.consumers.len() {
            if let Err(e) = f(self.consumers[k].as_mut()) {
                self.errors.push(e);
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

    fn take(&mut self, ctx: &mut Ctx) {
        self.flush_logs(ctx);
        if self.last_frame == Some(ctx.frame) {
            return;
        }
        self.last_frame = Some(ctx.frame);
        let mut snap = std::mem::take(&mut self.snap);
        snapshot(&ctx.world, ctx.frame, ctx.events.now(), &mut snap);
        self.each(|c| c.snapshot(&snap));
        self.snap = snap;
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
        ctx.events
            .after(self.period, Event::observation(Self::TICK));
    }

    fn finish(&mut self, ctx: &mut Ctx, summary: &Summary) {
        self.take(ctx);
        self.each(|c| c.finish(summary));
    }
}

fn r3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Writes a recording in the `simrob-swarm-recording` JSON-lines format to any writer
/// (the shell opens the file), flushing after every line.
pub struct JsonLinesRecorder<W: Write> {
    out: W,
    buf: String,
}

impl<W: Write> JsonLinesRecorder<W> {
    /// A recorder writing to `out`.
    pub fn new(out: W) -> Self {
        JsonLinesRecorder {
            out,
            buf: String::new(),
        }
    }

    fn line(&mut self, value: &serde_json::Value) -> Result<(), ConsumerError> {
        let text = serde_json::to_string(value)?;
        self.write_raw(&text)
    }

    fn write_raw(&mut self, text: &str) -> Result<(), ConsumerError> {
        self.out
            .write_all(text.as_bytes())
            .and_then(|_| self.out.write_all(b"\n"))
            .and_then(|_| self.out.flush())
            .map_err(ConsumerError::Write)
    }
}

impl<W: Write> Consumer for JsonLinesRecorder<W> {
    fn header(&mut self, h: &Header) -> Result<(), ConsumerError> {
        let mut v = serde_json::to_value(h)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("type".into(), json!("header"));
            o.insert("format".into(), json!(FORMAT));
            o.insert("version".into(), json!(VERSION));
        }
        self.line(&v)
    }

    fn snapshot(&mut self, s: &Snapshot) -> Result<(), ConsumerError> {
        use std::fmt::Write as _;
        // Hand-written: snapshots of 100,000 robots are the hot path of recording.
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let _ = write!(
            buf,
            "{{\"type\":\"snapshot\",\"frame\":{},\"t\":{},\"entities\":[",
            s.frame,
            r3(s.t)
        );
        for (k, e) in s.entities.iter().enumerate() {
            if k > 0 {
                buf.push(',');
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

    fn log(&mut self, l: &LogLine) -> Result<(), ConsumerError> {
        let mut v = serde_json::to_value(l)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("type".into(), json!("log"));
        }
        self.line(&v)
    }

    fn clock(&mut self, second: u64, wall: f64) -> Result<(), ConsumerError> {
        self.line(&json!({"type": "clock", "second": second, "wall": wall}))
    }

    fn finish(&mut self, summary: &Summary) -> Result<(), ConsumerError> {
        self.line(&json!({"type": "end", "summary": summary}))
    }
}

/// A consumer that keeps everything in memory (tests, tools).
#[derive(Debug, Default)]
pub struct MemoryConsumer {
    pub header: Option<Header>,
    pub snapshots: Vec<Snapshot>,
    pub logs: Vec<LogLine>,
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

impl<T: Consumer> Consumer for std::rc::Rc<std::cell::RefCell<T>> {
    fn header(&mut self, h: &Header) -> Result<(), ConsumerError> {
        self.borrow_mut().header(h)
    }
    fn snapshot(&mut self, s: &Snapshot) -> Result<(), ConsumerError> {
        self.borrow_mut().snapshot(s)
    }
    fn log(&mut self, l: &LogLine) -> Result<(), ConsumerError> {
        self.borrow_mut().log(l)
    }
    fn clock(&mut self, second: u64, wall: f64) -> Result<(), ConsumerError> {
        self.borrow_mut().clock(second, wall)
    }
    fn finish(&mut self, s: &Summary) -> Result<(), ConsumerError> {
        self.borrow_mut().finish(s)
    }
}
