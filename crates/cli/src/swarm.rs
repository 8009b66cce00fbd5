//! `simrob swarm`: many robots at high abstraction (the `simrob-swarm` crate's shell).

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use simrob_swarm::drones::Avoidance;
use simrob_swarm::scenario::{Overrides, Scenario, MAX_DRONES, MAX_ROBOTS_SETTABLE};
use simrob_swarm::script::Script;
use simrob_swarm::seer::{
    CompactRecorder, Consumer, ConsumerError, JsonLinesRecorder, RecorderStats, Seer,
};
use simrob_swarm::sim::LogLine;
use simrob_swarm::systems::ClockSystem;
use simrob_swarm::{EntityId, Simulation, Summary};
use simrob_viewer::record::{swarm_box, swarm_walls, viewer_kind};
use simrob_viewer::{Frame, FrameBody, FrameEntity};

/// Subcommands of `simrob swarm`.
#[derive(clap::Subcommand)]
pub enum SwarmCommand {
    /// Run a swarm scenario (TOML or JSON) headless, with a progress bar and a summary.
    ///
    /// Bundled, by name from any directory: hospital, drone-swarm, warehouse (their files are
    /// scenarios/swarm/*.toml in the source tree).
    Run(Box<RunArgs>),
    /// Benchmark the drone swarm at several sizes: what it did (arrived, crashed, when all
    /// had arrived) and how fast (wall seconds per simulated second).
    Bench(BenchArgs),
}

/// Arguments of `simrob swarm run`.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("scenario_given").args(["scenario", "scenario_flag"]).required(true)))]
#[command(mut_arg("gui", crate::flags::gui_help(
    "Watch the run live in the browser (rooms, POIs, paths, routes, robots, drones and items by state, who carries what; play, pause, step, speed); it starts when the first page connects and the page stays after the end until Ctrl-C; on 127.0.0.1"
)))]
#[command(mut_arg("speed", |a| a.help(
    "With --gui or --ros2: simulated seconds per wall second (0 = as fast as possible) [default: 1]"
)))]
pub struct RunArgs {
    /// Scenario file (.toml or .json), or a bundled scenario's name: drone-swarm, hospital,
    /// warehouse; or give it as `--scenario FILE`.
    #[arg(value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,
    /// The scenario file or bundled name, as a flag (the same as SCENARIO).
    #[arg(long = "scenario", value_name = "FILE")]
    pub scenario_flag: Option<PathBuf>,
    /// The largest scenario file and map read, `--max-scenario-bytes BYTES`.
    #[command(flatten)]
    pub scenario_bytes: crate::flags::SwarmScenarioBytes,
    /// The most robots and grid cells, `--max-robots N`, `--max-grid-cells N`.
    #[command(flatten)]
    pub build_limits: crate::flags::SwarmBuildLimits,
    /// Simulated seconds to run (or 50ms, 2s, 1min), 0 or more (default: the scenario's
    /// `duration`).
    #[arg(long, value_name = "S", value_parser = crate::flags::simulated_seconds)]
    duration: Option<f64>,
    /// Seed of the run (default: the scenario's `seed`, else 0).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Number of robots (generated scenarios only: drone swarm, warehouse).
    #[arg(long, value_name = "N")]
    robots: Option<usize>,
    /// Proximity beams on every generated robot (0 = no sensor).
    #[arg(long, value_name = "BEAMS")]
    proximity: Option<u16>,
    /// How the drones of the drone swarm avoid each other: `orca` (reciprocal velocity
    /// obstacles, the default) or `hmr` (HMR Sim's heuristic, as HMR Sim runs it).
    #[arg(long, value_name = "MODEL")]
    avoidance: Option<Avoidance>,
    /// Run the whole duration even when every task is done.
    #[arg(long)]
    full_duration: bool,
    /// Threads the run may use, at most 64 (0 = $SIMROB_THREADS if set, else the machine's
    /// cores, at most 8). The run is the same whatever the count; only its speed changes.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = crate::flags::threads)]
    threads: usize,
    /// Record snapshots (every `world.snapshot_period`), logs and the clock trace to FILE,
    /// readable while written; see --record-format. FILE may not be the scenario or a map it
    /// reads (refused before the run).
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Format of --record: `swarm` (simrob-swarm-recording v2: binary snapshots, about 7
    /// bytes a drone, written on a thread of its own so the run never waits on the disk),
    /// `swarm-json` (simrob-swarm-recording v1: JSON lines, about 35 bytes a drone, written
    /// by the run) or `viewer` (simrob-recording v2, the 3D viewer's compact format, which
    /// `simrob replay` plays: every robot a box on the floor, 1 map unit = 1 cm).
    #[arg(long, value_name = "FORMAT", default_value = "swarm")]
    record_format: RecordFormat,
    /// With --record-format swarm: megabytes of snapshots (16 bytes a robot each) the
    /// recorder may hold while the disk catches up. A snapshot that does not fit is left out,
    /// counted in the summary and marked in the file; the run never waits and is unchanged.
    #[arg(long, value_name = "MB", default_value_t = 64, value_parser = crate::flags::count(1u32, 65536))]
    record_buffer: u32,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Watch the run live in the browser (rooms, POIs, paths, routes, robots, drones and
    /// items by state, who carries what; play, pause, step, speed). The run starts when the
    /// first page connects and the page stays after the end until Ctrl-C. On 127.0.0.1:8080
    /// unless `--gui=ADDR` (`HOST:PORT`, or a port; 0 = any free port).
    #[command(flatten)]
    gui: crate::flags::Gui,
    /// With --gui or --ros2: the pace, `--speed F` (0 = as fast as possible).
    #[command(flatten)]
    speed: crate::flags::Speed,
    /// The robots on ROS 2: `--ros2` (odom and /tf out, `goal_pose` in), its rates and
    /// lockstep (each frame waits for `/simrob/step`).
    #[command(flatten)]
    ros2: crate::flags::Ros2,
}

/// Recording formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RecordFormat {
    /// simrob-swarm-recording v2 (compact, written on its own thread).
    Swarm,
    /// simrob-swarm-recording v1 (JSON lines).
    SwarmJson,
    /// simrob-recording v2 (the 3D viewer's compact replay format).
    Viewer,
}

/// Arguments of `simrob swarm bench`.
#[derive(clap::Args)]
pub struct BenchArgs {
    /// Swarm sizes to measure (comma-separated), each at least 1 drone and at most
    /// --max-robots (default 50000000; all checked before the first is run).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "200,10000,100000",
        value_name = "SIZES",
        value_parser = drone_count
    )]
    sizes: Vec<usize>,
    /// Old spelling of `--sizes` (`--robots` is one count).
    #[arg(long = "robots", value_name = "SIZES", hide = true,
          value_parser = crate::flags::renamed("robots", "sizes", "--robots is one count"))]
    old_robots: Option<String>,
    /// Simulated seconds per measurement (or 50ms, 2s, 1min), at most (a run also ends when
    /// every drone has arrived or crashed).
    #[arg(long, default_value_t = 10.0, value_name = "S", value_parser = crate::flags::positive_simulated_seconds)]
    duration: f64,
    /// Avoidance models to measure (comma-separated): `orca`, `hmr` (HMR Sim's heuristic).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "orca,hmr",
        value_name = "MODELS"
    )]
    avoidance: Vec<Avoidance>,
    /// Proximity beams on every drone (0 = no sensor).
    #[arg(long, default_value_t = 0, value_name = "BEAMS")]
    proximity: u16,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads the run may use, at most 64 (0 = $SIMROB_THREADS if set, else the machine's
    /// cores, at most 8). The run is the same whatever the count; only its speed changes.
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = crate::flags::threads)]
    threads: usize,
    /// Print one JSON object per size.
    #[arg(long)]
    json: bool,
    /// The most drones and grid cells, `--max-robots N`, `--max-grid-cells N`.
    #[command(flatten)]
    build_limits: crate::flags::SwarmBuildLimits,
}

pub fn run(cmd: SwarmCommand) -> Result<()> {
    match cmd {
        SwarmCommand::Run(args) => run_scenario(*args),
        SwarmCommand::Bench(args) => bench(args),
    }
}

/// A size of `swarm bench`: 1 to [`MAX_ROBOTS_SETTABLE`] drones (a bad one does not parse,
/// so no size is run when one of them is out of range; [`bench`] holds them to
/// `--max-robots` before the first is run).
fn drone_count(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_ROBOTS_SETTABLE).contains(&n) => Ok(n),
        _ => Err(format!(
            "a number of drones, 1 to {MAX_ROBOTS_SETTABLE} (and at most --max-robots, \
             default {MAX_DRONES})"
        )),
    }
}

fn wall_clock() -> Box<dyn FnMut() -> f64 + Send> {
    let start = Instant::now();
    Box::new(move || start.elapsed().as_secs_f64())
}

/// The threads a run is given: `--threads` when above 0, else `SIMROB_THREADS` when set, else
/// 0 (the machine's cores, at most 8).
fn run_threads(flag: usize) -> Result<usize> {
    if flag > 0 {
        return Ok(flag);
    }
    Ok(crate::flags::threads_from_env()?.unwrap_or(0))
}

fn run_scenario(args: RunArgs) -> Result<()> {
    // The ROS 2 environment (ROS_AUTOMATIC_DISCOVERY_RANGE, …) before a recording is created.
    if args.ros2.ros2 {
        args.ros2.refuse_sensor_rate("swarm run")?;
        args.ros2.discovery()?;
    }
    let path = crate::shell::scenario_given(&args.scenario, &args.scenario_flag)?;
    let scenario = Scenario::open_within(&path, args.scenario_bytes.limit())?;
    if let Some(record) = &args.record {
        refuse_an_input_as_record(record, &path, &scenario)?;
    }
    let overrides = Overrides {
        duration: args.duration,
        seed: args.seed,
        robots: args.robots,
        full_duration: args.full_duration,
        proximity_beams: args.proximity,
        avoidance: args.avoidance,
        threads: Some(run_threads(args.threads)?),
        limits: args.build_limits.limits()?,
    };
    let mut sim = scenario.build(&overrides)?;
    if sim.total_frames().is_none() {
        bail!(
            "{}: no duration: give one in the scenario or with --duration",
            path.display()
        );
    }
    sim.add_system(Box::new(ClockSystem::new(wall_clock())));
    let mut recorder_stats = None;
    let mut failures = None;
    // A second stop signal waits until the recording is finished and the summary printed.
    let finishing = args
        .record
        .as_ref()
        .map(|_| crate::shell::FinishBeforeExit::hold());
    if let Some(path) = &args.record {
        let file = File::create(path)
            .with_context(|| format!("cannot create the recording {}", path.display()))?;
        let out = BufWriter::new(file);
        let recorder: Box<dyn Consumer> = match args.record_format {
            RecordFormat::Swarm => {
                let rec = CompactRecorder::new(out, 1, u64::from(args.record_buffer) << 20)
                    .context("cannot start the recorder's thread")?;
                recorder_stats = Some(rec.stats());
                Box::new(rec)
            }
            RecordFormat::SwarmJson => Box::new(JsonLinesRecorder::new(out)),
            RecordFormat::Viewer => Box::new(ViewerRecorder::new(out)),
        };
        let period = scenario.file.world.snapshot_period;
        let mut consumers = vec![recorder];
        // The recorder's observer gathers the log lines: the echo is one more of its consumers.
        if tracing::enabled!(target: LOG_TARGET, tracing::Level::INFO) {
            consumers.push(Box::new(LogEcho::names_of(&sim)));
        }
        let seer = Seer::new(&sim.name.clone(), period, consumers);
        failures = Some(seer.failures());
        sim.add_system(Box::new(seer));
    } else {
        sim.add_system(Box::new(LogEcho::default()));
    }
    if args.speed.is_given() && args.gui.addr().is_none() && !args.ros2.ros2 {
        bail!("--speed paces the run in the 2D view: it needs --gui (without it the run is as fast as possible)");
    }
    // Ctrl-C ends the run early with a summary.
    let stop = crate::shell::ctrl_c_flag()?;
    if args.ros2.ros2 {
        let discovery = args.ros2.discovery()?;
        let ros = simrob_ros2::swarm::SwarmRos::new(
            simrob_ros2::swarm::Options {
                discovery,
                rates: args.ros2.rates(),
                lockstep: args.ros2.ros2_lockstep,
                // The 2D view paces a run it shows; without it the bridge paces.
                speed: if args.gui.addr().is_some() {
                    0.0
                } else {
                    args.speed.or_real_time()
                },
            },
            stop.clone(),
        )
        .context("cannot start the ROS 2 participant")?;
        let wake = ros.waker();
        crate::shell::on_ctrl_c(Box::new(move || wake.wake()));
        sim.add_system(Box::new(ros));
        // Standard output is the summary's alone (one JSON object with --json).
        eprintln!("{}", crate::flags::Ros2::banner(discovery));
    }
    let (summary, interrupted, view) = match args
        .gui
        .addr()
        .map(|g| g.resolve(crate::flags::LOCALHOST))
        .transpose()?
    {
        Some(addr) => {
            let (summary, interrupted, view) = drive_live(
                &mut sim,
                &scenario,
                addr,
                args.speed.or_real_time(),
                args.gui.guard()?,
                &stop,
            )?;
            (summary, interrupted, Some(view))
        }
        None => {
            let (summary, interrupted) = drive(&mut sim, args.quiet, &stop);
            (summary, interrupted, None)
        }
    };
    // Why the recording stopped: its writer's error, or the Seer's when it dropped the recorder
    // (a JSON-lines or viewer recording that could not be written).
    let recording_error = recorder_stats
        .as_ref()
        .and_then(|s| s.error())
        .or_else(|| failures.and_then(|f| f.first()));
    let recording = args.record.as_deref().map(|path| Recording {
        path,
        stats: recorder_stats.as_deref(),
        error: recording_error,
    });
    report(&summary, &sim, args.json, interrupted, recording.as_ref());
    drop(finishing);
    if let (Some(view), false) = (view, interrupted) {
        eprintln!(
            "the run has ended; the page stays on http://{} until Ctrl-C",
            view.addr()
        );
        crate::shell::wait_for_stop();
    }
    Ok(())
}

/// Refuses a `--record` file that is one of the files the run reads (the scenario, its
/// draw.io map, its obstacle map), however the path is spelt (`./`, `..`, a link): creating
/// the recording would destroy it.
fn refuse_an_input_as_record(record: &Path, path: &Path, scenario: &Scenario) -> Result<()> {
    let base = path.parent().unwrap_or(Path::new("."));
    let inputs = [
        ("the scenario", Some(path.to_path_buf())),
        ("the scenario's map", scenario.map_path.clone()),
        (
            "the scenario's obstacle map",
            scenario.file.world.obstacles.as_ref().map(|o| base.join(o)),
        ),
    ];
    for (what, input) in inputs {
        if let Some(input) = input.filter(|i| simrob_files::same_file(i, record)) {
            bail!(
                "--record {} is {what} ({}): give another file",
                record.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// The target of the run's log lines on standard error (`--log simrob::swarm::log=info`).
const LOG_TARGET: &str = "simrob::swarm::log";

/// The run's log (a script's `Log TEXT`, its errors, "every script is done") on standard
/// error, at level info, each line with its simulated time and entity: `t = 41.00 s r1: done`.
/// Without a recording it is a system that takes the lines as they come (nothing else reads
/// them: they would pile up); with one, a consumer of the recorder's observer, which takes them.
/// Either way it only reads the run: the run is the same whether its log is shown or not.
#[derive(Default)]
struct LogEcho {
    /// Entity names by id, for the consumer (the system asks the world).
    names: std::collections::HashMap<u32, String>,
}

impl LogEcho {
    /// The consumer, with the names of `sim`'s entities.
    fn names_of(sim: &Simulation) -> Self {
        LogEcho {
            names: sim
                .world()
                .name
                .iter()
                .map(|(e, n)| (e.0, n.clone()))
                .collect(),
        }
    }

    fn echo(line: &LogLine, who: Option<String>) {
        let text = &line.text;
        match who {
            // (An error's line names its entity already.)
            Some(who) if !text.starts_with(&format!("{who}: ")) => {
                tracing::info!(target: LOG_TARGET, "t = {:.2} s {who}: {text}", line.t)
            }
            _ => tracing::info!(target: LOG_TARGET, "t = {:.2} s {text}", line.t),
        }
    }

    fn take(ctx: &mut simrob_swarm::Ctx) {
        let lines = std::mem::take(&mut ctx.logs);
        if tracing::enabled!(target: LOG_TARGET, tracing::Level::INFO) {
            for l in &lines {
                Self::echo(l, l.entity.map(|e| ctx.world.label(EntityId(e))));
            }
        }
    }
}

impl simrob_swarm::System for LogEcho {
    fn name(&self) -> &str {
        "log on standard error"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn run(&mut self, ctx: &mut simrob_swarm::Ctx) {
        Self::take(ctx);
    }

    fn finish(&mut self, ctx: &mut simrob_swarm::Ctx, _summary: &Summary) {
        Self::take(ctx);
    }
}

impl Consumer for LogEcho {
    fn header(&mut self, _header: &simrob_swarm::seer::Header) -> Result<(), ConsumerError> {
        Ok(())
    }

    fn snapshot(&mut self, _snap: &simrob_swarm::seer::Snapshot) -> Result<(), ConsumerError> {
        Ok(())
    }

    fn log(&mut self, line: &LogLine) -> Result<(), ConsumerError> {
        let who = line.entity.map(|e| {
            self.names
                .get(&e)
                .cloned()
                .unwrap_or_else(|| EntityId(e).to_string())
        });
        Self::echo(line, who);
        Ok(())
    }
}

fn drive(sim: &mut Simulation, quiet: bool, stop: &AtomicBool) -> (Summary, bool) {
    let total = sim.total_frames().unwrap_or(0);
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} {msg} [{bar:40}] {percent:>3}% simulated, {elapsed} wall, eta {eta}",
        ) {
            b.set_style(style.progress_chars("=> "));
        }
        b
    };
    let start = Instant::now();
    let mut interrupted = false;
    let fps = sim.ctx.config.fps;
    // A stop is seen before each frame: none runs after it (a lockstep ROS 2 run's wait,
    // ended by the stop, asked for no frame).
    sim.start();
    loop {
        if stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        if !sim.step() {
            break;
        }
        let f = sim.frame();
        if f.is_multiple_of(8) {
            bar.set_position(f);
            bar.set_message(format!("t = {:.1} s", f as f64 / fps));
        }
    }
    let wall = start.elapsed().as_secs_f64();
    bar.finish_and_clear();
    (sim.finish(wall), interrupted)
}

/// Runs `sim` shown in the 2D view on `addr`, paced at `speed` (the page may change it).
fn drive_live(
    sim: &mut Simulation,
    scenario: &Scenario,
    addr: std::net::SocketAddr,
    speed: f64,
    guard: simrob_viewer::Guard,
    stop: &AtomicBool,
) -> Result<(Summary, bool, simrob_viewer::view2d::View2d)> {
    use simrob_viewer::view2d::{swarm as live, View2d};
    if !(speed.is_finite() && speed >= 0.0) {
        bail!("--speed {speed}: a factor ≥ 0 (0 = as fast as possible)");
    }
    let control = live::SwarmControl::within(true, speed, &guard);
    let view = View2d::start(
        addr,
        control.clone(),
        "swarm",
        &format!("simrob swarm: {}", sim.name),
        guard,
    )
    .with_context(|| format!("cannot serve the 2D view on {addr}"))?;
    eprintln!(
        "2D view on http://{} (the run starts when a page connects)",
        view.addr()
    );
    // The walls the page draws come from the static index the run builds when it starts.
    sim.start();
    let scene = live::scene(sim.world(), scenario.map.as_ref(), &sim.name.clone());
    let run = live::run_live(sim, &scene, &view, &control, stop);
    Ok((sim.finish(run.stepping_seconds), run.interrupted, view))
}

/// What `swarm run --record` wrote, for the summary.
struct Recording<'a> {
    path: &'a Path,
    /// The compact recorder's figures (the other formats are written on the run's thread).
    stats: Option<&'a RecorderStats>,
    /// Why the recording stopped before the end of the run.
    error: Option<String>,
}

fn report(
    s: &Summary,
    sim: &Simulation,
    json: bool,
    interrupted: bool,
    recording: Option<&Recording>,
) {
    // Simulated seconds per wall second: 0 when nothing was simulated (`--duration 0`, a run
    // interrupted before a page connected), however little wall time that took.
    let realtime = if s.simulated_seconds == 0.0 {
        0.0
    } else if s.wall_seconds > 0.0 {
        s.simulated_seconds / s.wall_seconds
    } else {
        f64::INFINITY
    };
    // Why the run ended: `interrupted` (Ctrl-C), `all work done` or `duration`.
    let ended_by = s.ended_by(interrupted);
    if json {
        let mut v = s.to_json(Some(ended_by));
        if let Some(o) = v.as_object_mut() {
            o.insert("times_real_time".into(), serde_json::json!(realtime));
            o.insert(
                "threads".into(),
                serde_json::json!(sim.ctx.config.thread_count()),
            );
            o.insert(
                "error_list".into(),
                serde_json::to_value(&sim.ctx.stats.error_list).unwrap_or_default(),
            );
            o.insert(
                "wall_per_simulated_second_trace".into(),
                serde_json::json!(sim.ctx.stats.clock),
            );
            if let Some(r) = recording {
                o.insert(
                    "record".into(),
                    serde_json::json!(r.path.display().to_string()),
                );
                let mut rec = serde_json::json!({"error": r.error});
                if let (Some(st), Some(m)) = (r.stats, rec.as_object_mut()) {
                    m.insert("snapshots".into(), st.written().into());
                    m.insert("dropped".into(), st.dropped().into());
                    m.insert("bytes".into(), st.bytes().into());
                }
                o.insert("recording".into(), rec);
            }
        }
        println!("{v}");
        return;
    }
    println!("{} (seed {})", s.scenario, s.seed);
    println!(
        "  simulated        {:.2} s ({} frames at {} fps), ended: {ended_by}",
        s.simulated_seconds, s.frames, s.fps
    );
    println!(
        "  wall             {:.3} s: {:.6} wall s per simulated s ({:.0}× real time)",
        s.wall_seconds, s.wall_per_simulated_second, realtime
    );
    println!("  robots           {} ({} entities)", s.robots, s.entities);
    println!("  events           {}", s.events);
    println!("  collisions       {}", s.collisions);
    println!("  tasks done       {}", s.tasks_done);
    if s.scripts_done + s.scripts_failed > 0
        || sim
            .world()
            .custom::<Script>()
            .is_some_and(|c| !c.is_empty())
    {
        println!(
            "  scripts          {} done, {} aborted, {} running; {} errors",
            s.scripts_done,
            s.scripts_failed,
            sim.world().custom::<Script>().map_or(0, |c| c.len()) as u64
                - s.scripts_done
                - s.scripts_failed,
            s.errors
        );
    }
    let listed = &sim.ctx.stats.error_list;
    for e in listed {
        println!(
            "    error at {:7.2} s  {:<12} {}: {}",
            e.t, e.entity, e.tag, e.message
        );
    }
    if (listed.len() as u64) < s.errors {
        println!("    … and {} more errors", s.errors - listed.len() as u64);
    }
    let drones = sim
        .world()
        .custom::<simrob_swarm::drones::Drone>()
        .map_or(0, |c| c.len());
    if drones > 0 {
        println!(
            "  drones           {} arrived, {} crashed, {} still flying",
            s.arrived,
            s.crashed,
            drones as u64 - s.arrived - s.crashed
        );
    }
    if let Some(r) = recording {
        println!("  recording        {}", r.path.display());
        if let Some(st) = r.stats {
            println!(
                "                   {} snapshots, {:.1} MB; {} left out (the disk did not keep up)",
                st.written(),
                st.bytes() as f64 / 1e6,
                st.dropped()
            );
        }
        if let Some(e) = &r.error {
            println!("                   the recording stopped: {e}");
        }
    }
}

fn bench(args: BenchArgs) -> Result<()> {
    // (`{:?}` writes a float TOML reads back, `1e300` included, where `{}` would write it in
    // full: an integer TOML cannot hold.)
    let text = format!(
        "name = \"drone swarm\"\nfps = 24\nduration = {:?}\nseed = {}\n\
         [generator]\nkind = \"drone-swarm\"\nproximity_beams = {}\n",
        args.duration, args.seed, args.proximity
    );
    let scenario = Scenario::from_toml_str(&text, Path::new("."))?;
    let limits = args.build_limits.limits()?;
    if let Some(n) = args.sizes.iter().find(|&&n| n > limits.max_drones) {
        bail!(
            "--sizes: {n} drones is more than the drone swarm's limit of {}: raise it with {}",
            limits.max_drones,
            crate::flags::RAISE_ROBOTS
        );
    }
    let threads = run_threads(args.threads)?;
    if !args.json {
        println!(
            "drone swarm, at most {} simulated s each (a run ends when every drone has arrived \
             or crashed), proximity beams: {}",
            crate::flags::shown(args.duration),
            args.proximity
        );
        println!(
            "{:>9}  {:>9}  {:>8}  {:>8}  {:>7}  {:>13}  {:>9}  {:>13}  {:>7}",
            "drones",
            "avoidance",
            "arrived",
            "crashed",
            "flying",
            "all in at s",
            "wall s",
            "wall s/sim s",
            "× real"
        );
    }
    for &n in &args.sizes {
        for &avoidance in &args.avoidance {
            let t0 = Instant::now();
            let mut sim = scenario.build(&Overrides {
                robots: Some(n),
                avoidance: Some(avoidance),
                threads: Some(threads),
                limits,
                ..Overrides::default()
            })?;
            let build = t0.elapsed().as_secs_f64();
            let start = Instant::now();
            while sim.step() {}
            let wall = start.elapsed().as_secs_f64();
            let s = sim.finish(wall);
            let flying = n as u64 - s.arrived - s.crashed;
            // When every drone had arrived (none crashed, none still flying).
            let all_in = (flying == 0 && s.crashed == 0).then_some(s.simulated_seconds);
            if args.json {
                let mut v = s.to_json(Some(s.ended_by(false)));
                if let Some(o) = v.as_object_mut() {
                    o.insert("avoidance".into(), serde_json::json!(avoidance.name()));
                    o.insert("still_flying".into(), serde_json::json!(flying));
                    o.insert("all_arrived_at".into(), serde_json::json!(all_in));
                    o.insert("build_seconds".into(), serde_json::json!(build));
                    o.insert("proximity_beams".into(), serde_json::json!(args.proximity));
                }
                println!("{v}");
            } else {
                println!(
                    "{:>9}  {:>9}  {:>8}  {:>8}  {:>7}  {:>13}  {:>9.2}  {:>13.4}  {:>7.2}",
                    n,
                    avoidance.name(),
                    s.arrived,
                    s.crashed,
                    flying,
                    all_in.map_or("-".to_string(), |t| format!("{t:.1}")),
                    wall,
                    s.wall_per_simulated_second,
                    s.simulated_seconds / wall.max(1e-12),
                );
            }
        }
    }
    Ok(())
}

/// Writes snapshots in the viewer's recording format (`simrob-recording` v2, compact, its
/// end marked when the run finishes): each frame
/// holds every wall (one `Field` entity of boxes) and every robot or item (a `Robot`
/// entity with one box body). The 2D map becomes the floor: x stays, y is mirrored (the
/// viewer's Y points away from the screen's top), 1 map unit = 1 cm.
struct ViewerRecorder<W: std::io::Write> {
    /// The file, until the header names the recording's source.
    out: Option<W>,
    writer: Option<simrob_viewer::record::Writer<W>>,
    /// The map's walls as the viewer's static boxes.
    walls: Vec<FrameBody>,
    fps: f64,
    /// The world's kind names (robot, drone, item, …), by kind index.
    kinds: Vec<String>,
}

impl<W: std::io::Write> ViewerRecorder<W> {
    fn new(out: W) -> Self {
        ViewerRecorder {
            out: Some(out),
            writer: None,
            walls: Vec::new(),
            fps: 24.0,
            kinds: Vec::new(),
        }
    }
}

impl<W: std::io::Write + Send> Consumer for ViewerRecorder<W> {
    fn header(&mut self, h: &simrob_swarm::seer::Header) -> Result<(), ConsumerError> {
        self.walls = swarm_walls(&h.walls);
        self.fps = h.fps;
        self.kinds = h.kinds.clone();
        if let Some(out) = self.out.take() {
            self.writer = Some(simrob_viewer::record::Writer::new(
                out,
                &format!("simrob swarm: {} (seed {})", h.scenario, h.seed),
            )?);
        }
        Ok(())
    }

    fn snapshot(&mut self, snap: &simrob_swarm::seer::Snapshot) -> Result<(), ConsumerError> {
        let mut bodies = Vec::with_capacity(self.walls.len() + snap.entities.len());
        bodies.extend_from_slice(&self.walls);
        let mut entities = Vec::with_capacity(snap.entities.len() + 1);
        if !self.walls.is_empty() {
            entities.push(FrameEntity {
                id: 0,
                kind: "Field".into(),
                p: None,
                r: None,
            });
        }
        for en in &snap.entities {
            let size = [2.0 * en.half[0], 2.0 * en.half[1]];
            let b = swarm_box(en.id, 0, en.x, en.y, en.theta, size);
            entities.push(FrameEntity {
                id: en.id,
                kind: viewer_kind(&self.kinds, en.kind),
                p: Some(b.p),
                r: Some(b.r),
            });
            bodies.push(b);
        }
        let frame = Frame {
            iteration: snap.frame,
            time: snap.t,
            initialized: true,
            paused: false,
            sync: false,
            auto_adjust: false,
            timestep: 1.0 / self.fps,
            gravity: 0.0,
            steps_per_iteration: 1,
            real_time_factor: 0.0,
            bodies,
            entities,
        };
        if let Some(w) = self.writer.as_mut() {
            w.write_frame(&frame)?;
        }
        Ok(())
    }

    fn finish(&mut self, _summary: &Summary) -> Result<(), ConsumerError> {
        if let Some(w) = self.writer.take() {
            w.finish()?;
        }
        Ok(())
    }
}
