//! Scripts: per-robot instruction lists run by the script (control) system.
//!
//! A script is a list of instructions such as `Go storage`, `Grab medicine`, `Drop`,
//! `Wait 2`. Its state is **READY** (it runs its next instruction at once), **BLOCKED**
//! (an instruction started something and the script waits for events with given tags about
//! its robot — `Go` waits for `EndOfPath`, `Grab` for `Grabbed`, `Wait` for `Wakeup`) or
//! **DONE**. Instructions are an open set: every system registers its own
//! ([`crate::System::instructions`]); the script system only knows the built-ins below.
//!
//! Errors — an instruction that fails at once, or an error event about the robot while its
//! script runs (`Unreachable`, `Collision`, `BatteryEmpty`, …) — run a handler: the
//! script's handler for that error tag, else its default handler, else the system's default
//! (`Abort`). A handler is itself a list of instructions; it ends with the script resuming
//! *after* the failed instruction, unless it says `Retry` (resume *at* it) or `Abort`.
//! An error event that arrives while a handler runs (a second collision while waiting)
//! starts the handler for that error afresh; an instruction of a handler that itself fails
//! aborts the script.
//!
//! A script runs at most [`MAX_STEPS_AT_ONCE`] (256) instructions at one go: a loop of
//! instructions that finish at once runs 256 of them a frame (`["Log a", "Loop"]`: 128
//! rounds, `Loop` counting as one).
//!
//! Built-ins: `Wait SECONDS` (or `Wait MIN MAX`, a random time between), `WaitFor TAG` (block until an event `TAG` about this robot),
//! `Emit TAG` (raise an event `TAG` about this robot), `Log TEXT…`, `Loop` (start again
//! from the top), `Abort`, and in handlers only `Retry` and `Skip` (a script's own list with
//! either is refused: they say where the script resumes after its handler).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::ecs::{Column, EntityId, SwarmWorld};
use crate::event::{Event, Payload, Tag};
use crate::sim::work::WorkLeft;
use crate::sim::{Ctx, InstructionDef, InstructionSet, Outcome, Summary, System};

/// One instruction: a name and its arguments, as written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Instr {
    /// The instruction's name (e.g. `Go`).
    pub name: String,
    /// Its arguments, as written.
    pub args: Vec<String>,
}

impl Instr {
    /// Reads `Name arg arg…` (whitespace-separated).
    pub fn parse(line: &str) -> Result<Instr, ScriptError> {
        let mut words = line.split_whitespace();
        let Some(name) = words.next() else {
            return Err(ScriptError::Empty);
        };
        Ok(Instr {
            name: name.to_string(),
            args: words.map(str::to_string).collect(),
        })
    }
}

impl std::fmt::Display for Instr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)?;
        for a in &self.args {
            write!(f, " {a}")?;
        }
        Ok(())
    }
}

/// Why a script was refused: an empty line, an unknown instruction, the wrong number of
/// arguments; `index` counts from 1, `part` is `script`, `handler "TAG"` or `default handler`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// An empty line.
    #[error("empty instruction")]
    Empty,
    /// An error on one line of a list.
    #[error("instruction {index}: {source}")]
    Line {
        /// The line, counted from 1.
        index: usize,
        /// What is wrong with it.
        source: Box<ScriptError>,
    },
    /// An error in one part of a script.
    #[error("{part}: {source}")]
    Part {
        /// `script`, `handler "TAG"` or `default handler`.
        part: String,
        /// What is wrong in it.
        source: Box<ScriptError>,
    },
    #[error(
        "{part} instruction {index} ({instruction}): unknown instruction {name:?} (known: {known})"
    )]
    /// An instruction no system offers.
    Unknown {
        /// `script`, `handler "TAG"` or `default handler`.
        part: String,
        /// The line, counted from 1.
        index: usize,
        /// The instruction as written.
        instruction: String,
        /// Its name.
        name: String,
        /// The instructions there are.
        known: String,
    },
    /// `Retry` or `Skip` in a script's own instructions: they say where a script resumes
    /// after an error handler, so they belong in handlers only.
    #[error(
        "script instruction {index} ({instruction}): {instruction} is for error handlers only \
         (it says where the script resumes after the handler); use Loop to start again, Abort \
         to end the script"
    )]
    HandlerOnly {
        /// The line, counted from 1.
        index: usize,
        /// The instruction as written.
        instruction: String,
    },
    #[error(
        "{part} instruction {index} ({instruction}): wrong number of arguments; usage: {usage}"
    )]
    /// An instruction given too few or too many arguments.
    Arguments {
        /// `script`, `handler "TAG"` or `default handler`.
        part: String,
        /// The line, counted from 1.
        index: usize,
        /// The instruction as written.
        instruction: String,
        /// How the instruction is written (e.g. `Go POI | Go X,Y`).
        usage: &'static str,
    },
}

/// A script's state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScriptState {
    /// It runs its next instruction at once.
    #[default]
    Ready,
    /// It waits for events with given tags about its robot.
    Blocked,
    /// It ended (ran to its end, or aborted).
    Done,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Resume {
    #[default]
    Skip,
    Retry,
}

/// The script component.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Script {
    /// The instructions, in order.
    pub instructions: Vec<Instr>,
    /// Index of the instruction running (or next to run).
    pub pc: usize,
    /// Ready, blocked or done.
    pub state: ScriptState,
    /// Tags of the events the script waits for.
    pub waiting: Vec<Tag>,
    /// Error tag → handler.
    pub handlers: BTreeMap<String, Vec<Instr>>,
    /// Handler for errors without their own.
    pub default_handler: Option<Vec<Instr>>,
    /// Whether an `Abort` ended it.
    pub failed: bool,
    /// The last error seen.
    pub last_error: Option<String>,
    in_handler: bool,
    queue: VecDeque<Instr>,
    resume: Resume,
    blocked_in_handler: bool,
    wake_token: u64,
}

fn parse_lines(lines: &[String]) -> Result<Vec<Instr>, ScriptError> {
    lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            Instr::parse(l).map_err(|e| ScriptError::Line {
                index: i + 1,
                source: Box::new(e),
            })
        })
        .collect()
}

fn in_part(part: impl Into<String>) -> impl FnOnce(ScriptError) -> ScriptError {
    let part = part.into();
    move |e| ScriptError::Part {
        part,
        source: Box::new(e),
    }
}

impl Script {
    /// A script from its instruction lines.
    pub fn new<S: AsRef<str>>(lines: &[S]) -> Result<Script, ScriptError> {
        let lines: Vec<String> = lines.iter().map(|l| l.as_ref().to_string()).collect();
        Ok(Script {
            instructions: parse_lines(&lines)?,
            ..Script::default()
        })
    }

    /// Adds a handler for errors tagged `tag`.
    pub fn with_handler<S: AsRef<str>>(
        mut self,
        tag: &str,
        lines: &[S],
    ) -> Result<Self, ScriptError> {
        let lines: Vec<String> = lines.iter().map(|l| l.as_ref().to_string()).collect();
        let h = parse_lines(&lines).map_err(in_part(format!("handler {tag:?}")))?;
        self.handlers.insert(tag.to_string(), h);
        Ok(self)
    }

    /// Sets the handler for errors without their own.
    pub fn with_default_handler<S: AsRef<str>>(mut self, lines: &[S]) -> Result<Self, ScriptError> {
        let lines: Vec<String> = lines.iter().map(|l| l.as_ref().to_string()).collect();
        self.default_handler = Some(parse_lines(&lines).map_err(in_part("default handler"))?);
        Ok(self)
    }

    /// Checks every instruction (main list and handlers) against the known ones.
    pub fn validate(&self, set: &InstructionSet) -> Result<(), ScriptError> {
        let check = |part: &str, i: usize, ins: &Instr| -> Result<(), ScriptError> {
            let Some(def) = set.get(&ins.name) else {
                let known: Vec<&str> = set.keys().map(String::as_str).collect();
                return Err(ScriptError::Unknown {
                    part: part.to_string(),
                    index: i + 1,
                    instruction: ins.to_string(),
                    name: ins.name.clone(),
                    known: known.join(", "),
                });
            };
            if ins.args.len() < def.min_args || ins.args.len() > def.max_args {
                return Err(ScriptError::Arguments {
                    part: part.to_string(),
                    index: i + 1,
                    instruction: ins.to_string(),
                    usage: def.usage,
                });
            }
            Ok(())
        };
        for (i, ins) in self.instructions.iter().enumerate() {
            check("script", i, ins)?;
            if handler_only(&ins.name) {
                return Err(ScriptError::HandlerOnly {
                    index: i + 1,
                    instruction: ins.to_string(),
                });
            }
        }
        for (tag, h) in &self.handlers {
            for (i, ins) in h.iter().enumerate() {
                check(&format!("handler {tag:?}"), i, ins)?;
            }
        }
        if let Some(h) = &self.default_handler {
            for (i, ins) in h.iter().enumerate() {
                check("default handler", i, ins)?;
            }
        }
        Ok(())
    }

    /// Every instruction of the script and its handlers (for load-time checks).
    pub fn all_instructions(&self) -> impl Iterator<Item = &Instr> {
        self.instructions
            .iter()
            .chain(self.handlers.values().flatten())
            .chain(self.default_handler.iter().flatten())
    }
}

/// `Retry` and `Skip`: where the script resumes after an error handler, so only in handlers.
fn handler_only(name: &str) -> bool {
    matches!(name, "Retry" | "Skip")
}

fn no_run() -> crate::sim::InstructionFn {
    Arc::new(|_: &mut Ctx, _: EntityId, _: &[String]| Outcome::Ready)
}

fn def(usage: &'static str, min_args: usize, max_args: usize) -> InstructionDef {
    InstructionDef {
        usage,
        min_args,
        max_args,
        run: no_run(),
        check: None,
    }
}

/// Why `Wait`'s arguments are not `SECONDS` or `MIN MAX`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WaitError {
    /// An argument that is not a number of seconds (the argument).
    #[error("Wait: {0:?} is not a number of seconds")]
    NotSeconds(String),
    /// `Wait MIN MAX` with `MIN` more than `MAX`.
    #[error("Wait: the least ({least}) is more than the most ({most})")]
    Reversed {
        /// The least, seconds.
        least: f64,
        /// The most, seconds.
        most: f64,
    },
    /// Neither one argument nor two.
    #[error("Wait: give SECONDS or MIN MAX")]
    Arguments,
}

fn seconds(args: &[String]) -> Result<(f64, f64), WaitError> {
    let mut v = Vec::new();
    for a in args {
        match a.parse::<f64>() {
            Ok(s) if s.is_finite() && s >= 0.0 => v.push(s),
            _ => return Err(WaitError::NotSeconds(a.clone())),
        }
    }
    match v.as_slice() {
        [s] => Ok((*s, *s)),
        [a, b] if a <= b => Ok((*a, *b)),
        [a, b] => Err(WaitError::Reversed {
            least: *a,
            most: *b,
        }),
        _ => Err(WaitError::Arguments),
    }
}

fn wait(ctx: &mut Ctx, e: EntityId, args: &[String]) -> Outcome {
    let secs = match seconds(args) {
        Ok((a, b)) if a == b => a,
        Ok((a, b)) => a + (b - a) * ctx.rng.next_f64(),
        Err(m) => return Outcome::Failed(Tag::INSTRUCTION_FAILED, m.to_string()),
    };
    let token = match Script::of_mut(&mut ctx.world, e) {
        Some(s) => {
            s.wake_token += 1;
            s.wake_token
        }
        None => 0,
    };
    ctx.events.after(
        secs,
        Event {
            tag: Tag::WAKEUP,
            entity: Some(e),
            error: false,
            observation: false,
            payload: Payload::Value(token as f64),
        },
    );
    Outcome::Blocked(vec![Tag::WAKEUP])
}

/// The built-in instructions (control flow included, so scripts validate against one set).
pub fn builtin_instructions() -> InstructionSet {
    let mut set = InstructionSet::new();
    set.insert(
        "Wait".into(),
        InstructionDef {
            usage: "Wait SECONDS | Wait MIN MAX (a random time between)",
            min_args: 1,
            max_args: 2,
            run: Arc::new(wait),
            check: Some(|_, args| Ok(seconds(args).map(|_| ())?)),
        },
    );
    set.insert(
        "WaitFor".into(),
        InstructionDef {
            usage: "WaitFor TAG",
            min_args: 1,
            max_args: 1,
            run: Arc::new(|_, _, args| Outcome::Blocked(vec![Tag::new(args[0].clone())])),
            check: None,
        },
    );
    set.insert(
        "Emit".into(),
        InstructionDef {
            usage: "Emit TAG",
            min_args: 1,
            max_args: 1,
            run: Arc::new(|ctx, e, args| {
                ctx.events.emit(Event::about(Tag::new(args[0].clone()), e));
                Outcome::Ready
            }),
            check: None,
        },
    );
    set.insert(
        "Log".into(),
        InstructionDef {
            usage: "Log TEXT…",
            min_args: 0,
            max_args: usize::MAX,
            run: Arc::new(|ctx, e, args| {
                ctx.log(Some(e), args.join(" "));
                Outcome::Ready
            }),
            check: None,
        },
    );
    set.insert("Loop".into(), def("Loop", 0, 0));
    set.insert("Retry".into(), def("Retry", 0, 0));
    set.insert("Skip".into(), def("Skip", 0, 0));
    set.insert("Abort".into(), def("Abort", 0, 0));
    set
}

impl Script {
    /// The script of `e`, if it has one (scripts live in a column of their own,
    /// [`SwarmWorld::custom`]).
    pub fn of(world: &SwarmWorld, e: EntityId) -> Option<&Script> {
        world.custom::<Script>()?.get(e)
    }

    /// The script of `e`, to change, if it has one.
    pub fn of_mut(world: &mut SwarmWorld, e: EntityId) -> Option<&mut Script> {
        world.custom_mut::<Script>().get_mut(e)
    }
}

/// The most instructions a script runs at one go (in a frame, or when an event it waits
/// for arrives; `Loop`, `Retry` and `Skip` count too): a loop of instructions that finish at
/// once (`["Log a", "Loop"]`: 128 rounds a frame) goes on in the next frame rather than
/// stalling the run. A fixed rule of the model, not a setting.
pub const MAX_STEPS_AT_ONCE: usize = 256;

/// The script (control) system: runs READY scripts each frame and reacts to the events
/// their robots wait for and to error events about them.
#[derive(Default)]
pub struct ScriptSystem {
    set: Arc<InstructionSet>,
    default_handler: Vec<Instr>,
}

impl ScriptSystem {
    /// A script system whose default error handler is `Abort`.
    pub fn new() -> Self {
        ScriptSystem {
            set: Arc::new(builtin_instructions()),
            default_handler: vec![Instr {
                name: "Abort".into(),
                args: vec![],
            }],
        }
    }

    /// Replaces the handler used when a script has neither a handler for an error nor a
    /// default handler of its own.
    pub fn with_default_handler(mut self, handler: Vec<Instr>) -> Self {
        self.default_handler = handler;
        self
    }

    fn abort(ctx: &mut Ctx, e: EntityId, why: &str) {
        if let Some(s) = Script::of_mut(&mut ctx.world, e) {
            s.state = ScriptState::Done;
            s.failed = true;
            s.waiting.clear();
            s.queue.clear();
            s.in_handler = false;
        }
        ctx.stats.scripts_failed += 1;
        let text = format!("{}: script aborted: {why}", ctx.world.label(e));
        ctx.log(Some(e), text.clone());
        ctx.events.emit(Event::error(Tag::SCRIPT_FAILED, e, text));
    }

    /// Starts the handler for an error. `raised_now` is true when an instruction of the
    /// script itself failed (as opposed to an error event arriving while it waits).
    fn on_error(&self, ctx: &mut Ctx, e: EntityId, tag: &Tag, message: &str, raised_now: bool) {
        let label = ctx.world.label(e);
        let Some(s) = Script::of_mut(&mut ctx.world, e) else {
            return;
        };
        if s.state == ScriptState::Done {
            return;
        }
        s.last_error = Some(format!("{tag}: {message}"));
        if s.in_handler && raised_now {
            ctx.log(
                Some(e),
                format!("{label}: {tag} inside an error handler: {message}"),
            );
            Self::abort(ctx, e, &format!("{tag} inside an error handler"));
            return;
        }
        let handler = s
            .handlers
            .get(tag.as_str())
            .or(s.default_handler.as_ref())
            .cloned()
            .unwrap_or_else(|| self.default_handler.clone());
        s.waiting.clear();
        s.queue = handler.into();
        s.in_handler = true;
        s.resume = Resume::Skip;
        s.state = ScriptState::Ready;
        ctx.log(Some(e), format!("{label}: {tag}: {message}"));
    }

    /// Runs `e`'s script while it is READY (at most [`MAX_STEPS_AT_ONCE`] instructions
    /// per call, so a loop of instant instructions cannot stall the run).
    fn execute(&self, ctx: &mut Ctx, e: EntityId) {
        for _ in 0..MAX_STEPS_AT_ONCE {
            let Some(s) = Script::of_mut(&mut ctx.world, e) else {
                return;
            };
            if s.state != ScriptState::Ready {
                return;
            }
            let from_handler;
            let ins = if s.in_handler {
                match s.queue.pop_front() {
                    Some(i) => {
                        from_handler = true;
                        i
                    }
                    None => {
                        s.in_handler = false;
                        if s.resume == Resume::Skip {
                            s.pc += 1;
                        }
                        continue;
                    }
                }
            } else if let Some(i) = s.instructions.get(s.pc) {
                from_handler = false;
                i.clone()
            } else {
                s.state = ScriptState::Done;
                ctx.stats.scripts_done += 1;
                ctx.events.emit(Event::about(Tag::SCRIPT_DONE, e));
                return;
            };
            if !from_handler && handler_only(&ins.name) {
                // A script not checked against its instructions (built by hand): fail
                // rather than stand on the instruction for ever.
                let text = format!("{} outside an error handler", ins.name);
                self.on_error(ctx, e, &Tag::INSTRUCTION_FAILED, &text, true);
                continue;
            }
            match ins.name.as_str() {
                "Retry" => {
                    s.resume = Resume::Retry;
                    continue;
                }
                "Skip" => {
                    s.resume = Resume::Skip;
                    continue;
                }
                "Abort" => {
                    let why = s
                        .last_error
                        .clone()
                        .unwrap_or_else(|| "Abort instruction".to_string());
                    Self::abort(ctx, e, &why);
                    return;
                }
                "Loop" => {
                    if from_handler {
                        s.queue.clear();
                        s.in_handler = false;
                    }
                    s.pc = 0;
                    continue;
                }
                _ => {}
            }
            let Some(def) = self.set.get(&ins.name) else {
                let text = format!("unknown instruction {:?}", ins.name);
                self.on_error(ctx, e, &Tag::INSTRUCTION_FAILED, &text, true);
                continue;
            };
            match (def.run)(ctx, e, &ins.args) {
                Outcome::Ready => {
                    if !from_handler {
                        if let Some(s) = Script::of_mut(&mut ctx.world, e) {
                            s.pc += 1;
                        }
                    }
                }
                Outcome::Blocked(tags) => {
                    if let Some(s) = Script::of_mut(&mut ctx.world, e) {
                        if tags.is_empty() {
                            if !from_handler {
                                s.pc += 1;
                            }
                        } else {
                            s.state = ScriptState::Blocked;
                            s.waiting = tags;
                            s.blocked_in_handler = from_handler;
                        }
                    }
                }
                Outcome::Failed(tag, message) => {
                    let who = ctx.world.label(e);
                    let now = ctx.time;
                    ctx.stats.record_error(now, who, tag.as_str(), &message);
                    self.on_error(ctx, e, &tag, &message, true);
                }
            }
        }
    }
}

impl System for ScriptSystem {
    fn name(&self) -> &str {
        "script"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn accept_instructions(&mut self, set: Arc<InstructionSet>) {
        self.set = set;
    }

    fn start(&mut self, ctx: &mut Ctx) {
        let running = ctx
            .world
            .custom::<Script>()
            .is_some_and(|c| c.iter().any(|(_, s)| s.state != ScriptState::Done));
        if running {
            WorkLeft::begin(ctx, "scripts");
        }
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let mut all_done = true;
        let ids = ctx
            .world
            .custom::<Script>()
            .map(Column::ids)
            .unwrap_or_default();
        for e in &ids {
            if Script::of(&ctx.world, *e).is_some_and(|s| s.state == ScriptState::Ready) {
                self.execute(ctx, *e);
            }
            if Script::of(&ctx.world, *e).is_some_and(|s| s.state != ScriptState::Done) {
                all_done = false;
            }
        }
        if !ids.is_empty() {
            if all_done {
                WorkLeft::done(ctx, "scripts", "every script is done");
            } else {
                WorkLeft::begin(ctx, "scripts");
            }
        }
    }

    fn wants(&self, event: &Event) -> bool {
        event.entity.is_some()
    }

    fn react(&mut self, event: &Event, ctx: &mut Ctx) {
        let Some(e) = event.entity else { return };
        let Some(s) = Script::of_mut(&mut ctx.world, e) else {
            return;
        };
        if s.state == ScriptState::Done {
            return;
        }
        if event.error {
            let message = event.message().unwrap_or("").to_string();
            self.on_error(ctx, e, &event.tag, &message, false);
            self.execute(ctx, e);
            return;
        }
        if s.state != ScriptState::Blocked {
            return;
        }
        if event.tag == Tag::WAKEUP {
            if let Payload::Value(v) = event.payload {
                if v != s.wake_token as f64 {
                    return; // a Wait that an error interrupted
                }
            }
        }
        if let Some(k) = s.waiting.iter().position(|t| *t == event.tag) {
            s.waiting.remove(k);
            if s.waiting.is_empty() {
                s.state = ScriptState::Ready;
                if !s.blocked_in_handler {
                    s.pc += 1;
                }
                self.execute(ctx, e);
            }
        }
    }

    fn finish(&mut self, _ctx: &mut Ctx, _summary: &Summary) {}
}
