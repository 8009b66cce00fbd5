//! `simrob soccer team`: one player process per robot of a team file.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::Ordering;

use anyhow::{bail, Context, Result};
use clap::Args;

use super::player::{beside, load};
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
    #[arg(long, value_name = "ADDR")]
    server: Option<String>,
    /// Stop every robot after this many wall-clock seconds (or 50ms, 2s, 1min; default: run
    /// until Ctrl-C).
    #[arg(long, value_name = "S", value_parser = super::player::wall_seconds)]
    wall_duration: Option<f64>,
    /// Old spelling of `--wall-duration` (`--duration` is simulated seconds).
    #[arg(long = "duration", value_name = "S", hide = true,
          value_parser = crate::flags::renamed("duration", "wall-duration", "--duration is simulated seconds"))]
    old_duration: Option<String>,
    /// The largest file read, the team file and each robot's (`--max-config-bytes`; passed
    /// on to every robot).
    #[command(flatten)]
    limit: ConfigBytes,
}

pub fn run(args: TeamArgs) -> Result<()> {
    let text = args.limit.read(&args.file, "the team file")?;
    let max_robots = args.max_robots.unwrap_or(DEFAULT_MAX_ROBOTS);
    let mut configs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if configs.len() == max_robots {
            bail!(
                "{}:{}: more than {max_robots} robots (each is a process of its own): raise \
                 the limit with --max-robots N",
                args.file.display(),
                i + 1
            );
        }
        let path = beside(&args.file, line);
        // Check every robot before starting any.
        let (cfg, _) = load(&path, &args.limit)
            .with_context(|| format!("{}:{}", args.file.display(), i + 1))?;
        if configs.iter().any(|(_, id)| *id == cfg.id) {
            bail!(
                "{}:{}: robot id {} appears twice",
                args.file.display(),
                i + 1,
                cfg.id
            );
        }
        configs.push((path, cfg.id));
    }
    if configs.is_empty() {
        bail!("{}: no robots", args.file.display());
    }
    let stop = crate::shell::ctrl_c_flag()?;
    let exe = std::env::current_exe().context("cannot find the simrob executable")?;
    let mut children = Vec::new();
    let mut readers = Vec::new();
    for (path, id) in &configs {
        let mut cmd = Command::new(&exe);
        cmd.args(["soccer", "player", "--robot-config"]).arg(path);
        if let Some(s) = &args.server {
            cmd.args(["--server", s]);
        }
        if let Some(d) = args.wall_duration {
            cmd.args(["--wall-duration", &d.to_string()]);
        }
        if let Some(n) = args.limit.max_config_bytes {
            cmd.args(["--max-config-bytes", &n.to_string()]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start robot {id}"))?;
        let out = child.stdout.take().context("no output pipe")?;
        let id = *id;
        readers.push(std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                say!("[{id}] {line}");
            }
        }));
        children.push(child);
    }
    say!("team of {} robots started", children.len());
    loop {
        if stop.load(Ordering::Relaxed) {
            for c in &mut children {
                let _ = c.kill();
            }
        }
        let mut running = 0;
        for c in &mut children {
            if c.try_wait()?.is_none() {
                running += 1;
            }
        }
        if running == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    for r in readers {
        let _ = r.join();
    }
    Ok(())
}
