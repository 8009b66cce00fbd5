//! The simulation: fixed-rate systems at `fps`, reactive systems fed by the event queue,
//! and the rules that end a run.
//!
//! One frame at time `t = frame / fps`:
//! 1. every event due at or before `t` is handled, in `(time, sequence)` order, by each
//!    system that [`System::wants`] it (a `KillSwitch` ends the run there);
//! 2. every fixed-rate system runs once, in the order it was added.
//!
//! Events raised during step 2 at time `t` are handled at the start of the next frame,
//! before time moves on. The run ends when `duration` seconds are simulated or a
//! `KillSwitch` event is handled. A run of `duration` seconds runs the frames before it and
//! handles the events due before it, those between its last frame and its end included;
//! an event due exactly at the end belongs to the frame at the end, which the run does not
//! reach, so it is never handled, whatever else is queued (an observer's event included).

pub mod work;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use serde::Serialize;

use crate::ecs::{EntityId, SwarmWorld};
use crate::event::{Event, EventQueue, Tag};
use crate::grid::{SpatialGrid, StaticIndex};
use simrob_math::Xoshiro256PlusPlus;

/// Run-wide settings.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Frames (fixed-rate system runs) per simulated second.
    pub fps: f64,
    /// Simulated seconds to run; `None` runs until a `KillSwitch`.
    pub duration: Option<f64>,
    /// The run's seed: the same scenario and seed give the same run, bit for bit.
    pub seed: u64,
    /// Side of the spatial grid's cells (map units).
    pub cell_size: f64,
    /// Raise a `KillSwitch` when all the work is done (every script finished, every drone
    /// reported).
    pub end_when_done: bool,
    /// Threads the parallel systems (drones, collision, proximity) may use; 0 = the
    /// machine's cores, at most 8; at most [`MAX_THREADS`]
    /// (more counts as that many). A run's results do not depend on it.
    pub threads: usize,
}

/// The most threads a run may be given ([`SimConfig::threads`], `Overrides::threads`,
/// `simrob swarm run --threads`): more only cut each pass into thinner parts (5,000 drones
/// for a simulated second took 5.4 s on 1,000 threads, 0.05 s on 2). More is refused when a
/// scenario's run is built; [`SimConfig::threads`] above it counts as it.
pub const MAX_THREADS: usize = 64;

impl SimConfig {
    /// The number of threads to use: [`SimConfig::threads`] (at most
    /// [`MAX_THREADS`]), or the machine's cores (at most 8)
    /// when it is 0.
    pub fn thread_count(&self) -> usize {
        if self.threads > 0 {
            self.threads.min(MAX_THREADS)
        } else {
            machine_cores().min(8)
        }
    }
}

/// The machine's cores (those this process may run on), asked once: every parallel system
/// asks for its threads each frame, and the standard library reads the process's cgroup
/// files for them on each call (some 30 system calls), which was most of a small run's time
/// (the three-robot hospital: 0.13 of its 0.16 s).
fn machine_cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            fps: 24.0,
            duration: Some(60.0),
            seed: 0,
            cell_size: 20.0,
            end_when_done: true,
            threads: 0,
        }
    }
}

/// How many errors [`Stats::error_list`] keeps.
pub const ERROR_LIST_MAX: usize = 100;

/// One error event of a run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ErrorRecord {
    /// Simulated seconds.
    pub t: f64,
    /// The entity's name, or `#id`.
    pub entity: String,
    /// The error's tag (e.g. `Collision`, `Unreachable`).
    pub tag: String,
    /// What went wrong.
    pub message: String,
}

/// Counters every run keeps.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    /// Events handled, observers' own (snapshot ticks, the wall clock) not counted:
    /// observing a run does not change its figures.
    pub events: u64,
    /// Collisions: contacts that began.
    pub collisions: u64,
    /// Units of work finished (deliveries dropped, drones arrived).
    pub tasks_done: u64,
    /// Scripts that ran to their end.
    pub scripts_done: u64,
    /// Scripts aborted by an error handler.
    pub scripts_failed: u64,
    /// Error events raised.
    pub errors: u64,
    /// The first [`ERROR_LIST_MAX`] of them: time, entity, what went wrong.
    pub error_list: Vec<ErrorRecord>,
    /// Drones at their target.
    pub arrived: u64,
    /// Drones stopped by a collision.
    pub crashed: u64,
    /// Wall seconds spent on each simulated second (filled by the clock system).
    pub clock: Vec<f64>,
}

impl Stats {
    /// Counts an error and keeps it in [`Stats::error_list`] (the first
    /// [`ERROR_LIST_MAX`]).
    pub fn record_error(&mut self, t: f64, entity: String, tag: &str, message: &str) {
        self.errors += 1;
        if self.error_list.len() < ERROR_LIST_MAX {
            self.error_list.push(ErrorRecord {
                t,
                entity,
                tag: tag.to_string(),
                message: message.to_string(),
            });
        }
    }
}

/// What a system hands back to the scheduler and to other systems: the world, the event
/// queue, counters, the clock and a sequential random generator.
pub struct Ctx {
    /// All entities and their components.
    pub world: SwarmWorld,
    /// The time-ordered event queue.
    pub events: EventQueue,
    /// The run's counters.
    pub stats: Stats,
    /// A sequential generator for systems that draw in a fixed order.
    pub rng: Xoshiro256PlusPlus,
    /// The run-wide settings.
    pub config: SimConfig,
    /// The current frame number.
    pub frame: u64,
    /// The current simulated time in seconds.
    pub time: f64,
    /// Seconds per frame (`1 / fps`).
    pub dt: f64,
    /// Log lines waiting for the recorders.
    pub logs: Vec<LogLine>,
}

impl Ctx {
    /// Adds a line to the run's log.
    pub fn log(&mut self, entity: Option<EntityId>, text: impl Into<String>) {
        self.logs.push(LogLine {
            t: self.events.now(),
            entity: entity.map(|e| e.0),
            text: text.into(),
        });
    }
}

/// One line of the run's log.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogLine {
    /// Simulated seconds.
    pub t: f64,
    /// The entity the line is about (its id), if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entity: Option<u32>,
    /// The line.
    pub text: String,
}

/// What an instruction did.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Done at once; the script goes on.
    Ready,
    /// Started; the script waits for an event with each of these tags about its entity.
    Blocked(Vec<Tag>),
    /// Failed with this error tag and explanation; the script's handler runs.
    Failed(Tag, String),
}

/// The code of an instruction: runs it for `entity` with the given arguments.
pub type InstructionFn = Arc<dyn Fn(&mut Ctx, EntityId, &[String]) -> Outcome + Send + Sync>;

/// A load-time check of an instruction's arguments against the built world.
pub type InstructionCheck = fn(&SwarmWorld, &[String]) -> Result<(), InstructionError>;

/// Why an instruction's arguments do not fit the built world (an [`InstructionCheck`]'s
/// answer; the scenario loader names the entity and the instruction before it).
#[derive(Debug, thiserror::Error)]
pub enum InstructionError {
    /// `Go`: neither a POI name nor coordinates.
    #[error(transparent)]
    Goal(#[from] crate::nav::GoalError),
    /// `Go`: no POI has this name (`known`: the POIs there are, or `none`).
    #[error("there is no POI called {name:?} (POIs: {known})")]
    UnknownPoi {
        /// The name asked for.
        name: String,
        /// The POIs there are, or `none`.
        known: String,
    },
    /// `Grab`/`Drop`: the entity of this name is not an item.
    #[error("{0:?} is not an item")]
    NotAnItem(String),
    /// `Grab`/`Drop`: no entity has this name.
    #[error("there is no item called {0:?}")]
    NoItem(String),
    /// `Wait`: not a number of seconds, or not `SECONDS` / `MIN MAX`.
    #[error(transparent)]
    Wait(#[from] crate::script::WaitError),
    /// The check of an instruction another crate's system adds.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// An instruction a system offers to scripts.
#[derive(Clone)]
pub struct InstructionDef {
    /// E.g. `Go POI | Go X,Y`.
    pub usage: &'static str,
    /// The fewest arguments it takes.
    pub min_args: usize,
    /// The most arguments it takes.
    pub max_args: usize,
    /// The code that runs it.
    pub run: InstructionFn,
    /// Extra validation once the world is built (e.g. that a POI exists).
    pub check: Option<InstructionCheck>,
}

/// Instructions by name (an open set: every system may add its own).
pub type InstructionSet = BTreeMap<String, InstructionDef>;

/// A system: fixed-rate, reactive, or both. Every method has a default, so a system
/// implements only what it does. A system is `Send`, so a simulation can be built on one
/// thread and stepped on another (the Python module steps it on the caller's thread with the
/// GIL released): what it shares with its owner, it shares through an `Arc<Mutex<_>>`.
pub trait System: Send {
    /// A short name (for logs).
    fn name(&self) -> &str;

    /// Whether [`System::run`] runs every frame.
    fn fixed_rate(&self) -> bool {
        false
    }

    /// Once per frame, at `ctx.time`.
    fn run(&mut self, _ctx: &mut Ctx) {}

    /// Whether this system reacts to `event`.
    fn wants(&self, _event: &Event) -> bool {
        false
    }

    /// Handles an event this system wants.
    fn react(&mut self, _event: &Event, _ctx: &mut Ctx) {}

    /// Instructions this system adds to scripts.
    fn instructions(&self) -> Vec<(String, InstructionDef)> {
        Vec::new()
    }

    /// Receives every registered instruction before the run starts.
    fn accept_instructions(&mut self, _set: Arc<InstructionSet>) {}

    /// Before the first frame (e.g. to schedule periodic events).
    fn start(&mut self, _ctx: &mut Ctx) {}

    /// After the last frame.
    fn finish(&mut self, _ctx: &mut Ctx, _summary: &Summary) {}
}

/// The end-of-run figures.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Summary {
    /// The scenario's name.
    pub scenario: String,
    /// The run's seed.
    pub seed: u64,
    /// Frames per simulated second.
    pub fps: f64,
    /// Frames run.
    pub frames: u64,
    /// Simulated seconds run (`frames / fps`).
    pub simulated_seconds: f64,
    /// Filled by the shell that measured it (the core has no clock).
    pub wall_seconds: f64,
    /// `wall_seconds / simulated_seconds` (0 before the first frame).
    pub wall_per_simulated_second: f64,
    /// Robots: entities that can move (have a velocity).
    pub robots: usize,
    /// Entities alive, the world entity included.
    pub entities: usize,
    /// Events handled (see [`Stats::events`]).
    pub events: u64,
    /// Collisions: contacts that began.
    pub collisions: u64,
    /// Units of work finished (deliveries dropped, drones arrived).
    pub tasks_done: u64,
    /// Scripts that ran to their end.
    pub scripts_done: u64,
    /// Scripts aborted by an error handler.
    pub scripts_failed: u64,
    /// Error events raised.
    pub errors: u64,
    /// Drones at their target.
    pub arrived: u64,
    /// Drones stopped by a collision.
    pub crashed: u64,
    /// Whether a kill switch ended the run (else the duration did).
    pub killed: bool,
}

impl Summary {
    /// Why a run that has ended ended: `interrupted` (stopped from outside, Ctrl-C), `all
    /// work done` (its kill switch: every script or drone done) or `duration`.
    pub fn ended_by(&self, interrupted: bool) -> &'static str {
        if interrupted {
            "interrupted"
        } else if self.killed {
            "all work done"
        } else {
            "duration"
        }
    }

    /// The summary as JSON with `ended_by` (see [`Summary::ended_by`]; `None`: the run goes
    /// on, `null`) where `killed` is (whether the kill switch ended the run, which reads as a
    /// failure where it means all work was done).
    pub fn to_json(&self, ended_by: Option<&str>) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.remove("killed");
            o.insert("ended_by".into(), serde_json::json!(ended_by));
        }
        v
    }
}

/// The first frame at or after `seconds` of simulated time at `fps` frames a second (a time
/// within rounding of a frame's is that frame's: 3 × 0.1 s is frame 3 at 10 fps).
pub(crate) fn first_frame_at(seconds: f64, fps: f64) -> u64 {
    let f = seconds.max(0.0) * fps;
    if (f - f.round()).abs() < 1e-9 * f.max(1.0) {
        f.round() as u64
    } else {
        f.ceil() as u64
    }
}

/// A runnable simulation.
pub struct Simulation {
    /// The world, the event queue, the counters and the clock.
    pub ctx: Ctx,
    systems: Vec<Box<dyn System>>,
    instructions: InstructionSet,
    started: bool,
    finished: bool,
    killed: bool,
    total_frames: Option<u64>,
    /// The scenario's name (for summaries and recordings).
    pub name: String,
}

impl std::fmt::Debug for Simulation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("name", &self.name)
            .field("frame", &self.ctx.frame)
            .field(
                "systems",
                &self.systems.iter().map(|s| s.name()).collect::<Vec<_>>(),
            )
            .finish_non_exhaustive()
    }
}

impl Simulation {
    /// A simulation of `world`.
    pub fn new(world: SwarmWorld, config: SimConfig) -> Self {
        let fps = if config.fps.is_finite() && config.fps > 0.0 {
            config.fps
        } else {
            24.0
        };
        let total_frames = config.duration.map(|d| first_frame_at(d, fps));
        Simulation {
            ctx: Ctx {
                world,
                events: EventQueue::default(),
                stats: Stats::default(),
                rng: Xoshiro256PlusPlus::new(config.seed),
                config: SimConfig { fps, ..config },
                frame: 0,
                time: 0.0,
                dt: 1.0 / fps,
                logs: Vec::new(),
            },
            systems: Vec::new(),
            instructions: crate::script::builtin_instructions(),
            started: false,
            finished: false,
            killed: false,
            total_frames,
            name: String::new(),
        }
    }

    /// Adds a system; fixed-rate systems run in the order they are added. Its instructions
    /// become available to scripts.
    pub fn add_system(&mut self, system: Box<dyn System>) {
        for (name, def) in system.instructions() {
            self.instructions.insert(name, def);
        }
        self.systems.push(system);
    }

    /// The instructions scripts may use.
    pub fn instructions(&self) -> &InstructionSet {
        &self.instructions
    }

    /// The world.
    pub fn world(&self) -> &SwarmWorld {
        &self.ctx.world
    }

    /// Uses at most `threads` threads in the parallel systems that were not given a number
    /// of their own (0 = the machine's cores); the run does not depend on it.
    pub fn set_threads(&mut self, threads: usize) {
        self.ctx.config.threads = threads;
    }

    /// The world, mutably (between frames).
    pub fn world_mut(&mut self) -> &mut SwarmWorld {
        &mut self.ctx.world
    }

    /// Schedules an event from outside (e.g. a kill switch at a given time).
    pub fn schedule(&mut self, time: f64, event: Event) {
        self.ctx.events.schedule(time, event);
    }

    /// Current simulated time.
    pub fn time(&self) -> f64 {
        self.ctx.time
    }

    /// Frames run so far.
    pub fn frame(&self) -> u64 {
        self.ctx.frame
    }

    /// Whether the run has ended.
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// The planned number of frames (`None` without a duration).
    pub fn total_frames(&self) -> Option<u64> {
        self.total_frames
    }

    /// Prepares the run (called by the first [`Simulation::step`] if not called before).
    pub fn start(&mut self) {
        if self.started {
            return;
        }
        self.started = true;
        let set = Arc::new(self.instructions.clone());
        let cell = self.ctx.config.cell_size;
        let ctx = &mut self.ctx;
        let mut statics = std::mem::take(ctx.world.res.get_mut::<StaticIndex>());
        statics.rebuild(&ctx.world, cell);
        *ctx.world.res.get_mut::<StaticIndex>() = statics;
        ctx.world.res.statics_dirty = false;
        let mut grid = std::mem::take(ctx.world.res.get_mut::<SpatialGrid>());
        grid.rebuild(&ctx.world, cell);
        *ctx.world.res.get_mut::<SpatialGrid>() = grid;
        for s in &mut self.systems {
            s.accept_instructions(set.clone());
            s.start(ctx);
        }
    }

    /// Handles every event due at or before `t` (`through`) or strictly before it, in
    /// order; `true` if a kill switch ended the run.
    fn dispatch_due(&mut self, t: f64, through: bool) -> bool {
        loop {
            let next = if through {
                self.ctx.events.pop_due(t)
            } else {
                self.ctx.events.pop_before(t)
            };
            let Some((when, event)) = next else { break };
            if !event.observation {
                self.ctx.stats.events += 1;
            }
            if event.error {
                let entity = event
                    .entity
                    .map(|e| self.ctx.world.label(e))
                    .unwrap_or_default();
                self.ctx.stats.record_error(
                    when,
                    entity,
                    event.tag.as_str(),
                    event.message().unwrap_or_default(),
                );
            }
            for s in &mut self.systems {
                if s.wants(&event) {
                    s.react(&event, &mut self.ctx);
                }
            }
            if event.tag == Tag::KILL_SWITCH {
                self.killed = true;
                return true;
            }
        }
        false
    }

    /// Runs one frame. Returns `false` once the run has ended.
    pub fn step(&mut self) -> bool {
        if !self.started {
            self.start();
        }
        if self.finished {
            return false;
        }
        let fps = self.ctx.config.fps;
        if let Some(total) = self.total_frames {
            if self.ctx.frame >= total {
                // Events due before the end still happen; those due at the end belong to
                // the frame at the end, which the run does not reach (its fixed-rate
                // systems do not run either), whatever else is queued.
                let end = total as f64 / fps;
                self.dispatch_due(end, false);
                self.ctx.time = end;
                self.finished = true;
                return false;
            }
        }
        let t = self.ctx.frame as f64 / fps;
        if self.dispatch_due(t, true) {
            self.finished = true;
            return false;
        }
        self.ctx.time = t;
        self.ctx.events.set_now(t);
        for s in &mut self.systems {
            if s.fixed_rate() {
                s.run(&mut self.ctx);
            }
        }
        self.ctx.frame += 1;
        self.ctx.time = self.ctx.frame as f64 / fps;
        true
    }

    /// Runs frames until simulated time reaches `t` or the run ends.
    pub fn run_until(&mut self, t: f64) {
        while !self.finished && (self.ctx.frame as f64) / self.ctx.config.fps < t {
            if !self.step() {
                break;
            }
        }
    }

    /// Runs to the end and returns the summary (wall time left at zero).
    pub fn run(&mut self) -> Summary {
        while self.step() {}
        self.finish(0.0)
    }

    /// Ends the run: systems finish (recorders write their last line) with the summary.
    pub fn finish(&mut self, wall_seconds: f64) -> Summary {
        self.finished = true;
        let summary = self.summary(wall_seconds);
        for s in &mut self.systems {
            s.finish(&mut self.ctx, &summary);
        }
        summary
    }

    /// The figures so far.
    pub fn summary(&self, wall_seconds: f64) -> Summary {
        let st = &self.ctx.stats;
        let sim = self.ctx.frame as f64 / self.ctx.config.fps;
        Summary {
            scenario: self.name.clone(),
            seed: self.ctx.config.seed,
            fps: self.ctx.config.fps,
            frames: self.ctx.frame,
            simulated_seconds: sim,
            wall_seconds,
            wall_per_simulated_second: if sim > 0.0 { wall_seconds / sim } else { 0.0 },
            robots: self.ctx.world.robot_count(),
            entities: self.ctx.world.entities().count(),
            events: st.events,
            collisions: st.collisions,
            tasks_done: st.tasks_done,
            scripts_done: st.scripts_done,
            scripts_failed: st.scripts_failed,
            errors: st.errors,
            arrived: st.arrived,
            crashed: st.crashed,
            killed: self.killed,
        }
    }
}
