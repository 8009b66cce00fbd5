//! `simrob mrs`: the Mobile Robot Simulator server.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};

use simrob_mrs::flat::{FlatPose, Map};
use simrob_mrs::{
    write_atomically, ClientId, DirMapFiles, MrsConfig, MrsCore, MrsServer, ShellOptions,
    EXAMPLE_MAP,
};

/// The shortest `--snapshot-every` (s): the picture rewritten ten times a second at most.
const MIN_SNAPSHOT_EVERY: f64 = 0.1;

/// The largest `--scale`, pixels per inch (a picture is at most
/// [`simrob_mrs::render::MAX_SIDE`] pixels a side whatever the scale).
const MAX_SCALE: u32 = 100;

/// Arguments of `simrob mrs`.
///
/// Serves Nomad-200 robots (radius 10 in, 16 sonars, 20 bumpers) on a 2D map over TCP: every
/// connection gets its own robot and speaks the Mobile Robot Simulator's text protocol, one
/// message per line (`V+100-300`, `A`, `S00`, `B`, `R`, `P`, `Mtext`; `#HELP` lists simrob's
/// extensions: `#SONARS`, `#BUMPERS`, `#PLACE x y a`, `#LOAD file`, `#MERGE file`,
/// `#RECT x1 y1 x2 y2`, `#STEP n`, `#SNAPSHOT file`). Units: inches, degrees, y down,
/// positive turn = clockwise.
#[derive(clap::Args)]
#[command(mut_arg("gui", crate::flags::gui_help(
    "Show the world live in the browser: the map, every robot with its id, heading, sonar rays and bumpers; place a robot, load or merge a map from the page; on 127.0.0.1"
)))]
#[command(mut_arg("speed", |a| a.help(
    "The pace: simulated seconds per wall second (1 = real time, 0 = as fast as possible) [default: 1]"
)))]
pub struct MrsArgs {
    /// The map: a vector file (`width height`, then `x1 y1 x2 y2` per rectangle) or a BMP
    /// (black = obstacle). Default: the Mobile Robot Simulator's 300×300 example, built in.
    #[arg(long, value_name = "FILE")]
    map: Option<PathBuf>,
    /// Vector maps to merge onto the map, in order. May be repeated.
    #[arg(long, value_name = "FILE")]
    merge: Vec<PathBuf>,
    /// Where robots start: `x,y,angle` (inches, degrees clockwise from +x, at most 36000 either
    /// way, taken modulo 360); it must be free.
    /// A robot whose start is taken by another robot goes to the nearest free spot.
    /// Default: the map's centre (or the nearest free spot), angle 0.
    #[arg(long, value_name = "X,Y,ANGLE", value_parser = parse_pose)]
    start: Option<FlatPose>,
    /// TCP port (0 = any free port).
    #[arg(long, default_value_t = simrob_mrs::DEFAULT_PORT)]
    port: u16,
    /// Address to listen on.
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    bind: String,
    /// The pace, `--speed F` (1 = real time, 0 = as fast as possible).
    #[command(flatten)]
    speed: crate::flags::Speed,
    /// Stepped mode: time advances only when a client sends `#STEP n` (for tests and
    /// reproducible runs).
    #[arg(long)]
    stepped: bool,
    /// Simulation step in seconds (or 50ms, 2s, 1min), from 0.00001 to 1.
    #[arg(long, value_name = "S", default_value_t = 0.01,
          value_parser = crate::flags::seconds_from(simrob_session::Limits::default().min_timestep, 1.0))]
    timestep: f64,
    /// Directory for the files named by `#LOAD`, `#MERGE` and `#SNAPSHOT` (names may not leave
    /// it); it must exist (it is not created). Temporary files an interrupted write left in it
    /// (`.simrob-tmp-…`) are removed at start. Default: the map's directory (or the current
    /// one).
    #[arg(long, value_name = "DIR")]
    map_dir: Option<PathBuf>,
    /// Write a PNG picture of the map, a robot at the start with its sonar rays, and exit
    /// (the name must end in .png).
    /// With --snapshot-every, serve and rewrite the picture periodically instead.
    #[arg(long, value_name = "FILE.png", value_parser = parse_png_path)]
    snapshot: Option<PathBuf>,
    /// Serve, and rewrite the --snapshot picture every this many seconds (or 50ms, 2s, 1min;
    /// at least 0.1).
    #[arg(long, value_name = "S", requires = "snapshot",
          value_parser = crate::flags::seconds_from(MIN_SNAPSHOT_EVERY, MAX_SECONDS))]
    snapshot_every: Option<f64>,
    /// Pixels per inch of the pictures, 1 to 100 (a picture is at most 4096 pixels a side:
    /// the scale is lowered to fit).
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = crate::flags::count(1u32, MAX_SCALE))]
    scale: u32,
    /// Most robots (connections) at a time, at least 1; a connection past it is refused at once.
    #[arg(long, value_name = "N", default_value_t = simrob_mrs::DEFAULT_MAX_CLIENTS,
          value_parser = crate::flags::count(1usize, usize::MAX))]
    max_clients: usize,
    /// Close a connection that sends nothing for this many seconds (or 50ms, 2s, 1min; 0 =
    /// never; at most 1e9).
    #[arg(long, value_name = "S", default_value_t = 600.0,
          value_parser = crate::flags::seconds_from(0.0, MAX_SECONDS))]
    idle_timeout: f64,
    /// When the server is full, a newcomer takes the place of the connection that has sent
    /// nothing for longest, if that is at least this many seconds (or 50ms, 2s, 1min; 0 =
    /// never: a full server refuses newcomers; at most 1e9).
    #[arg(long, value_name = "S", default_value_t = 10.0,
          value_parser = crate::flags::seconds_from(0.0, MAX_SECONDS))]
    make_room_after: f64,
    /// Most pictures `#SNAPSHOT` may write into the map directory in a run (each one counts,
    /// under a name written before or not); past it, `#SNAPSHOT` is refused with `E …`.
    #[arg(long, value_name = "FILES", default_value_t = 1000)]
    max_snapshots: usize,
    /// Largest map file read, bytes, at least 1 (default 268435456, 256 MiB): --map, --merge
    /// and the maps `#LOAD` and `#MERGE` name; a larger one is refused (at start, or with
    /// `E …` to the client that named it).
    #[arg(long, value_name = "BYTES", value_parser = crate::flags::count(1u64, u64::MAX))]
    max_map_bytes: Option<u64>,
    /// Most bytes of those pictures at once.
    #[arg(long, value_name = "BYTES", default_value_t = 256 << 20)]
    max_snapshot_bytes: u64,
    /// Most pixels a side of a `#SNAPSHOT` picture, from 16 to 4096 (the scale is lowered to
    /// fit): drawing a picture holds up every client.
    #[arg(long, value_name = "PIXELS", default_value_t = simrob_mrs::DEFAULT_MAX_SNAPSHOT_SIDE,
          value_parser = crate::flags::count(16u32, simrob_mrs::DEFAULT_MAX_SNAPSHOT_SIDE))]
    max_snapshot_side: u32,
    /// Most steps one `#STEP n` may ask for, from 1 to 10000000; a larger n is refused with
    /// `E … (--max-step N)` (the steps hold up every client).
    #[arg(long, value_name = "STEPS", default_value_t = simrob_mrs::DEFAULT_MAX_STEP,
          value_parser = crate::flags::count(1u32, MAX_STEP))]
    max_step: u32,
    /// Most bytes of an `M` message's text printed, from 0 to 4096; the rest is left out and
    /// how much is said (`… (N bytes more, --max-message-log-bytes 200)`).
    #[arg(long, value_name = "BYTES", default_value_t = simrob_mrs::DEFAULT_MAX_MESSAGE_LOG_BYTES,
          value_parser = crate::flags::count(0usize, simrob_mrs::protocol::MAX_LINE))]
    max_message_log_bytes: usize,
    /// Most `M` messages printed a second, from 0 (none) to 100000; those left out are
    /// counted, and the count printed once the second is over.
    #[arg(long, value_name = "MESSAGES", default_value_t = simrob_mrs::DEFAULT_MAX_MESSAGE_LOG_RATE,
          value_parser = crate::flags::count(0u32, 100_000))]
    max_message_log_rate: u32,
    /// Longest request line in bytes, its line ending left out, from 16 to 4096; a longer
    /// one is answered `E line too long … (--max-line-bytes N)` and skipped.
    #[arg(long, value_name = "BYTES", default_value_t = simrob_mrs::protocol::MAX_LINE,
          value_parser = crate::flags::count(16usize, simrob_mrs::protocol::MAX_LINE))]
    max_line_bytes: usize,
    /// Most bytes of replies waiting for a client that does not read them, from 65536 to
    /// 1073741824; past it the client gets `E closing: … (--max-output-bytes N)` if it can
    /// still take a line, is closed, and the server prints why.
    #[arg(long, value_name = "BYTES", default_value_t = simrob_mrs::DEFAULT_MAX_OUTPUT_BYTES,
          value_parser = crate::flags::count(1usize << 16, 1usize << 30))]
    max_output_bytes: usize,
    /// Most rectangles `#LOAD`, `#MERGE` and `#RECT` may leave in a vector map, from 1 to
    /// 20000 (each change rebuilds the map's index, so its cost grows with them); past it
    /// the change is refused (`E … more than --max-rects N`).
    #[arg(long, value_name = "RECTS", default_value_t = simrob_mrs::flat::MAX_RECTS,
          value_parser = crate::flags::count(1usize, simrob_mrs::flat::MAX_RECTS))]
    max_rects: usize,
    /// Show the world live in the browser: the map, every robot with its id, heading, sonar
    /// rays and bumpers; place a robot, load or merge a map from the page. On
    /// 127.0.0.1:8080 unless `--gui=ADDR` (`HOST:PORT`, or a port; 0 = any free port).
    #[command(flatten)]
    gui: crate::flags::Gui,
    /// The robots on ROS 2: `--ros2` (one Nomad waits for ROS from the start, `nomad_<id>`;
    /// every connection's robot appears too), its rates and lockstep (which runs stepped).
    #[command(flatten)]
    ros2: crate::flags::Ros2,
}

/// The largest `--max-step`.
const MAX_STEP: u32 = 10_000_000;

/// The longest `--idle-timeout` and `--make-room-after`, in seconds (about 31 years).
const MAX_SECONDS: f64 = 1e9;

/// A number of seconds from the command line, 0 to [`MAX_SECONDS`]; 0 = never (`None`).
fn seconds_or_never(flag: &str, seconds: f64) -> Result<Option<Duration>> {
    if seconds == 0.0 {
        return Ok(None);
    }
    if !(0.0..=MAX_SECONDS).contains(&seconds) {
        bail!(
            "{flag} {}: must be from 0 to {MAX_SECONDS:e} seconds (0 = never)",
            crate::flags::shown(seconds)
        );
    }
    Ok(Some(Duration::from_secs_f64(seconds)))
}

fn parse_png_path(s: &str) -> Result<PathBuf, String> {
    let path = PathBuf::from(s);
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    simrob_mrs::check_png_name(&name).map_err(|e| e.to_string())?;
    Ok(path)
}

fn parse_pose(s: &str) -> Result<FlatPose, String> {
    let v: Vec<f64> = s
        .split(',')
        .map(|p| p.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .map_err(|_| format!("{s:?}: expected X,Y,ANGLE, e.g. 150,130,90"))?;
    match v[..] {
        [x, y, a] if x.is_finite() && y.is_finite() && a.is_finite() => {
            let a = simrob_mrs::protocol::check_heading(a).map_err(|e| format!("{s:?}: {e}"))?;
            Ok(FlatPose::new(x, y, a))
        }
        _ => Err(format!("{s:?}: expected three finite numbers X,Y,ANGLE")),
    }
}

/// How a user raises the largest map file read, said by every refusal of a map over it.
const RAISE_MAP_BYTES: &str = "--max-map-bytes BYTES";

/// The map at `path`, of at most `max` bytes (`--max-map-bytes`).
fn read_map(path: &Path, max: u64) -> Result<Map> {
    let bytes = simrob_files::read_bounded(path, max).map_err(|e| {
        anyhow::anyhow!(e.message(&format!("map {}", path.display()), RAISE_MAP_BYTES))
    })?;
    Map::from_bytes(&bytes).with_context(|| format!("map {}", path.display()))
}

/// Builds the core from the arguments: map, merges, start.
fn build_core(args: &MrsArgs) -> Result<MrsCore> {
    let max_map = args.max_map_bytes.unwrap_or(simrob_mrs::MAX_MAP_FILE);
    let mut map = match &args.map {
        Some(p) => read_map(p, max_map)?,
        None => Map::parse_vector(EXAMPLE_MAP).context("the built-in example map")?,
    };
    for m in &args.merge {
        map.merge(&read_map(m, max_map)?)
            .with_context(|| format!("cannot merge {}", m.display()))?;
    }
    simrob_mrs::check_map_size(&map)
        .map_err(anyhow::Error::msg)
        .with_context(|| match &args.map {
            Some(p) => format!("map {}", p.display()),
            None => "the built-in example map".into(),
        })?;
    // Every flag's range is checked when the command line is read (exit status 2).
    let core = MrsCore::new(
        map,
        MrsConfig {
            start: args.start,
            stepped: args.stepped || args.ros2.ros2_lockstep,
            timestep: args.timestep,
            snapshot_scale: args.scale,
            max_snapshot_side: args.max_snapshot_side,
            max_step: args.max_step,
            max_rects: args.max_rects,
            max_message_log_bytes: args.max_message_log_bytes,
            max_message_log_rate: args.max_message_log_rate,
            max_clients: args.max_clients,
        },
    );
    let s = core.start_pose();
    let radius = simrob_mrs::flat::RobotModel::NOMAD_200.radius;
    if args.start.is_some() && !core.world().is_free(s.position(), radius, None) {
        bail!(
            "--start {},{},{}: a robot (radius {radius} in) there would overlap a wall or leave the {} × {} in map; choose a free spot",
            simrob_math::Shown::of(&s.x),
            simrob_math::Shown::of(&s.y),
            simrob_math::Shown::of(&s.heading_deg),
            core.world().map().width(),
            core.world().map().height()
        );
    }
    if core.free_start().is_none() {
        bail!(
            "no room for a robot (radius {radius} in) at or near ({}, {}): choose a --start",
            s.x,
            s.y
        );
    }
    Ok(core)
}

pub fn run(args: MrsArgs) -> Result<()> {
    let mut core = build_core(&args)?;
    if let (Some(path), None) = (&args.snapshot, args.snapshot_every) {
        // One picture: a robot at the start, then exit.
        let preview = ClientId(0);
        core.connect(preview).map_err(anyhow::Error::msg)?;
        let png = core.snapshot_png().map_err(anyhow::Error::msg)?;
        write_atomically(path, &png).map_err(anyhow::Error::msg)?;
        let r = core
            .robot_of(preview)
            .and_then(|id| core.world().robot(id))
            .map(|r| r.pose)
            .unwrap_or_default();
        println!(
            "wrote {} ({} × {} in map, robot at ({:.1}, {:.1}, {:.1}°))",
            path.display(),
            core.world().map().width(),
            core.world().map().height(),
            r.x,
            r.y,
            r.heading_deg
        );
        return Ok(());
    }
    let dir = match (&args.map_dir, &args.map) {
        (Some(d), _) => d.clone(),
        (None, Some(m)) => m
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from(".")),
        (None, None) => PathBuf::from("."),
    };
    let files = DirMapFiles::new(&dir)
        .map_err(anyhow::Error::msg)?
        .with_quota(simrob_files::Quota {
            max_files: args.max_snapshots,
            max_bytes: args.max_snapshot_bytes,
        })
        .with_max_map_bytes(
            args.max_map_bytes.unwrap_or(simrob_mrs::MAX_MAP_FILE),
            RAISE_MAP_BYTES,
        );
    let snapshot = match (&args.snapshot, args.snapshot_every) {
        (Some(p), Some(every)) => Some((p.clone(), Duration::from_secs_f64(every))),
        _ => None,
    };
    let options = ShellOptions {
        speed: args.speed.or_real_time(),
        snapshot,
        print_log: true,
        idle_timeout: seconds_or_never("--idle-timeout", args.idle_timeout)?,
        make_room_after: seconds_or_never("--make-room-after", args.make_room_after)?,
        max_line_bytes: args.max_line_bytes,
        max_output_bytes: args.max_output_bytes,
    };
    let map_desc = format!(
        "{} × {} in map, {} rectangles{}",
        core.world().map().width(),
        core.world().map().height(),
        core.world().map().rects().len(),
        if core.world().map().bitmap().is_some() {
            " + bitmap"
        } else {
            ""
        }
    );
    let server = MrsServer::bind(
        (args.bind.as_str(), args.port),
        core,
        Box::new(files),
        options,
    )
    .map_err(|e| {
        crate::shell::cannot_listen(
            e,
            &format!("tcp://{}:{}", args.bind, args.port),
            "Mobile Robot Simulator",
        )
    })?;
    let mut view = None;
    let server = match args
        .gui
        .addr()
        .map(|g| g.resolve(crate::flags::LOCALHOST))
        .transpose()?
    {
        Some(addr) => {
            let (v, hook) = simrob_viewer::view2d::mrs::live(
                addr,
                &format!("Mobile Robot Simulator on tcp://{}", server.local_addr()?),
                args.gui.guard()?,
                args.speed.or_real_time(),
                args.stepped,
            )
            .with_context(|| format!("cannot serve the 2D view on {addr}"))?;
            view = Some(v);
            server.with_hook(hook)
        }
        None => server,
    };
    let server = if args.ros2.ros2 {
        let discovery = args.ros2.discovery()?;
        let mut ros = simrob_ros2::mrs::MrsRos::new(simrob_ros2::mrs::Options {
            discovery,
            rates: args.ros2.rates(),
            lockstep: args.ros2.ros2_lockstep,
        })
        .context("cannot start the ROS 2 participant")?;
        let mut server = server;
        let mut gui_hook = server.take_hook();
        println!("{}", crate::flags::Ros2::banner(discovery));
        #[cfg(unix)]
        let server = server.with_wake_source(Box::new(ros.ready_source()));
        server.with_hook(Box::new(move |core, files| {
            if let Some(h) = gui_hook.as_mut() {
                h(core, files);
            }
            ros.turn(core);
        }))
    } else {
        server
    };
    let stop = crate::shell::ctrl_c_flag()?;
    println!("listening on tcp://{}", server.local_addr()?);
    if let Some(v) = &view {
        println!("2D view on http://{}", v.addr());
    }
    println!(
        "{map_desc}; {}; map directory {}",
        if args.stepped {
            "stepped (#STEP n advances time)".to_string()
        } else {
            format!("time factor {}", args.speed.or_real_time())
        },
        dir.display()
    );
    let core = server.run(&stop)?;
    let (requests, errors) = core.counts();
    println!(
        "stopped at t = {:.2} s: {requests} requests, {errors} errors answered",
        core.world().time()
    );
    Ok(())
}
