//! `simrob soccer team`: one player process per robot of a team file.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::Ordering;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;

use super::player::{beside, prepare};
use crate::flags::ConfigBytes;

/// The most robots a team file may list unless `--max-robots` says otherwise: each is a
/// process of its own.
const DEFAULT_MAX_ROBOTS: usize = 64;

#[derive(Args)]
pub struct TeamArgs {
    /// The team file: one ini.config per line, at most 64 robots (--max-robots).
    #[arg(long)]
    file: PathBuf,
    /// Most robots a team file may list (each is a process of its own), at least 1
    /// (default 64); a longer team file is refused before any robot starts.
    #[arg(long, value_name = "N", value_parser = crate::flags::count(1usize, usize::MAX))]
    max_robots: Option<usize>,
    /// The simulator, IP:PORT, for every robot.
    #[arg(long, value_name = "ADDR", value_parser = super::player::server_addr)]
    server: Option<SocketAddr>,
    /// Every robot gives up when the simulator has sent nothing for this many wall-clock
    /// seconds (or 50ms, 2s, 1min; default 10; 0 waits for ever), as `soccer player
    /// --server-timeout`.
    #[arg(long, value_name = "S", value_parser = super::player::wall_seconds)]
    server_timeout: Option<f64>,
    /// Stop every robot after this many wall-clock seconds (or 50ms, 2s, 1min; default: run
    /// until Ctrl-C).
    #[arg(long, value_name = "S", value_parser = super::player::wall_seconds)]
    wall_duration: Option<f64>,
    /// On Ctrl-C (or SIGTERM, SIGHUP) each robot is asked to stop, as on its own Ctrl-C (its
    /// goodbye to the team and its summary); one still running this many wall-clock seconds
    /// later is killed (or 50ms, 2s, 1min; default 5; 0 kills at once).
    #[arg(long, value_name = "S", value_parser = super::player::wall_seconds)]
    stop_grace: Option<f64>,
    /// Old spelling of `--wall-duration` (`--duration` is simulated seconds).
    #[arg(long = "duration", value_name = "S", hide = true,
          value_parser = crate::flags::renamed("duration", "wall-duration", "--duration is simulated seconds"))]
    old_duration: Option<String>,
    /// The largest file read, the team file and each robot's (`--max-config-bytes`; passed
    /// on to every robot).
    #[command(flatten)]
    limit: ConfigBytes,
}

/// `--stop-grace`'s default, wall-clock seconds.
const DEFAULT_STOP_GRACE: f64 = 5.0;

/// Prints a line on standard error, ignoring a closed pipe.
macro_rules! tell {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

pub fn run(args: TeamArgs) -> Result<()> {
    let text = args.limit.read(&args.file, "the team file")?;
    let max_robots = args.max_robots.unwrap_or(DEFAULT_MAX_ROBOTS);
    let mut configs: Vec<(PathBuf, i32)> = Vec::new();
    // Each log file and the robot (and team file line) that writes it.
    let mut logs: BTreeMap<PathBuf, (i32, usize)> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let at = format!("{}:{}", args.file.display(), i + 1);
        if configs.len() == max_robots {
            bail!(
                "{at}: more than {max_robots} robots (each is a process of its own): raise \
                 the limit with --max-robots N"
            );
        }
        let path = beside(&args.file, line);
        // Every robot's files and values checked, as its player will, before any starts.
        let robot =
            prepare(&path, &args.limit, args.server, None, false).with_context(|| at.clone())?;
        let id = robot.cfg.id;
        if configs.iter().any(|(_, other)| *other == id) {
            bail!("{at}: robot id {id} appears twice");
        }
        // (A device such as /dev/null may be shared.)
        if let Some(log) = robot
            .log
            .as_ref()
            .filter(|l| std::fs::metadata(l).map_or(true, |m| m.is_file()))
        {
            let key = same_file_key(log);
            if let Some((other, other_line)) = logs.get(&key) {
                bail!(
                    "{at}: robot {id} would write the log file {} of robot {other} (line \
                     {other_line}): give each robot a logfile of its own",
                    log.display()
                );
            }
            logs.insert(key, (id, i + 1));
        }
        configs.push((path, id));
    }
    if configs.is_empty() {
        bail!("{}: no robots", args.file.display());
    }
    let stop = crate::shell::ctrl_c_flag()?;
    let exe = std::env::current_exe().context("cannot find the simrob executable")?;
    let mut children: Vec<(i32, Child)> = Vec::new();
    let mut readers = Vec::new();
    // What the wait below wakes on: a robot's output closed (it is ending), or Ctrl-C.
    let (events, woken) = std::sync::mpsc::channel::<Wake>();
    for (path, id) in &configs {
        let mut cmd = Command::new(&exe);
        // Each robot's standard input is a pipe from the team that nothing is written to: it
        // closes when the team ends, however it ends (`kill -9` too), and the robot then stops.
        cmd.args([
            "soccer",
            "player",
            "--stop-when-stdin-closes",
            "--robot-config",
        ])
        .arg(path);
        if let Some(s) = &args.server {
            cmd.args(["--server", &s.to_string()]);
        }
        if let Some(t) = args.server_timeout {
            cmd.args(["--server-timeout", &t.to_string()]);
        }
        if let Some(d) = args.wall_duration {
            cmd.args(["--wall-duration", &d.to_string()]);
        }
        if let Some(n) = args.limit.max_config_bytes {
            cmd.args(["--max-config-bytes", &n.to_string()]);
        }
        let spawned = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                for (_, c) in &mut children {
                    let _ = c.kill();
                    let _ = c.wait();
                }
                return Err(e).with_context(|| format!("cannot start robot {id}"));
            }
        };
        let id = *id;
        let k = children.len();
        // Each robot's lines with its id in front, standard output and standard error alike;
        // each reader says when its pipe closed.
        if let Some(out) = child.stdout.take() {
            let events = events.clone();
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(out).lines().map_while(Result::ok) {
                    say!("[{id}] {line}");
                }
                let _ = events.send(Wake::Closed(k));
            }));
        }
        if let Some(err) = child.stderr.take() {
            let events = events.clone();
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(err).lines().map_while(Result::ok) {
                    tell!("[{id}] {line}");
                }
                let _ = events.send(Wake::Closed(k));
            }));
        }
        // (Its standard input stays in `child`, open until the robot is waited for.)
        children.push((id, child));
    }
    say!("team of {} robots started", children.len());
    crate::shell::on_ctrl_c(Box::new(move || {
        let _ = events.send(Wake::Stop);
    }));
    // A robot is waited for once both its pipes closed (it is ending). Ctrl-C closes the
    // standard input of those still running, which stops them as their own Ctrl-C would;
    // those still running `--stop-grace` later are killed, and their pipes then close.
    let grace = Duration::try_from_secs_f64(args.stop_grace.unwrap_or(DEFAULT_STOP_GRACE))
        .unwrap_or(Duration::MAX);
    let mut open: Vec<usize> = vec![2; children.len()];
    let mut running = children.len();
    let mut failed: Vec<String> = Vec::new();
    let mut asked_at: Option<Instant> = None;
    let mut killed = false;
    while running > 0 {
        let wake = if stop.load(Ordering::Relaxed) && asked_at.is_none() {
            Wake::Stop
        } else if let (Some(at), false) = (asked_at, killed) {
            match woken.recv_timeout(grace.saturating_sub(at.elapsed())) {
                Ok(w) => w,
                Err(RecvTimeoutError::Timeout) => Wake::GraceOver,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match woken.recv() {
                Ok(w) => w,
                Err(_) => break,
            }
        };
        match wake {
            Wake::Stop if asked_at.is_none() => {
                asked_at = Some(Instant::now());
                for (k, (_, c)) in children.iter_mut().enumerate() {
                    if open[k] > 0 {
                        drop(c.stdin.take());
                    }
                }
            }
            Wake::Stop => {}
            Wake::GraceOver => {
                killed = true;
                for (k, (_, c)) in children.iter_mut().enumerate() {
                    if open[k] > 0 {
                        let _ = c.kill();
                    }
                }
            }
            Wake::Closed(k) => {
                open[k] -= 1;
                if open[k] > 0 {
                    continue;
                }
                running -= 1;
                let (id, c) = &mut children[k];
                let status = c.wait()?;
                if !status.success() {
                    let how = match status.code() {
                        Some(code) => format!("exit status {code}"),
                        None => format!("{status}"),
                    };
                    failed.push(format!("robot {id} ({how})"));
                }
            }
        }
    }
    for r in readers {
        let _ = r.join();
    }
    // Stopped by Ctrl-C (theirs and the team's): no robot failed.
    if !failed.is_empty() && !stop.load(Ordering::Relaxed) {
        bail!(
            "{} of {} robots failed (each one's error is above, after its [id]): {}",
            failed.len(),
            configs.len(),
            failed.join(", ")
        );
    }
    Ok(())
}

/// Where a log file is, to tell two robots writing one file: its directory's real path and
/// its name.
fn same_file_key(path: &std::path::Path) -> PathBuf {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    match path.file_name() {
        Some(name) => dir.join(name),
        None => path.to_path_buf(),
    }
}

/// What wakes `soccer team`'s wait for its robots.
enum Wake {
    /// One of robot `k`'s two output pipes closed.
    Closed(usize),
    /// Ctrl-C (or SIGTERM, SIGHUP).
    Stop,
    /// The robots asked to stop had `--stop-grace` to end.
    GraceOver,
}
