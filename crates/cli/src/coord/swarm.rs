//! `simrob coord swarm`: a swarm scenario whose robots join a networked Control Center.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use simrob_coord::model::{RobotId, MAX_ROBOT_ID};
use simrob_coord::swarm::{lock, CoordSystem, RemoteLink, SwarmCoordConfig};
use simrob_coord::wire::Msg;
use simrob_swarm::scenario::{Overrides, Scenario};

use super::net::{connect_cc, write_env, Incoming};
use simrob_swarm::script::Script;

/// Arguments of `simrob coord swarm`.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("scenario_given").args(["scenario", "scenario_flag"]).required(true)))]
#[command(mut_arg("gui", crate::flags::gui_help(
    "Watch the swarm's robots live in the browser (the 2D view: map, robots by state, their routes); on 127.0.0.1"
)))]
#[command(mut_arg("speed", |a| a.help(
    "Simulated seconds per wall second, 0 = as fast as possible [default: 1]"
)))]
pub struct SwarmArgs {
    /// The swarm scenario (.toml or .json), or a bundled scenario's name: drone-swarm,
    /// hospital, warehouse; or give it as `--scenario FILE`. Its scripts are set aside: its
    /// robots do what the Control Center allocates.
    #[arg(value_name = "SCENARIO")]
    scenario: Option<PathBuf>,
    /// The scenario file or bundled name, as a flag (the same as SCENARIO).
    #[arg(long = "scenario", value_name = "FILE")]
    scenario_flag: Option<PathBuf>,
    /// The largest scenario file and map read, `--max-scenario-bytes BYTES`.
    #[command(flatten)]
    scenario_bytes: crate::flags::SwarmScenarioBytes,
    /// The most robots and grid cells, `--max-robots N`, `--max-grid-cells N`.
    #[command(flatten)]
    build_limits: crate::flags::SwarmBuildLimits,
    /// The Control Center (`simrob coord serve`).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7030")]
    cc: String,
    /// The first robot id (the swarm's robots are numbered from it, in entity order; the
    /// last must be at most 1073741823, 2^30 - 1, the largest robot id). Every robot must
    /// be taken: if the Control Center refuses any (an id already in use, say), each refusal
    /// is said on standard error and the command stops with an error, running none.
    #[arg(long, value_name = "ID", default_value_t = 100)]
    robot_id_base: u32,
    /// Robots (generated scenarios only).
    #[arg(long, value_name = "N")]
    robots: Option<usize>,
    /// The pace, `--speed F` (0 = as fast as possible; default 1).
    #[command(flatten)]
    speed: crate::flags::Speed,
    /// Seed of the run.
    #[arg(long)]
    seed: Option<u64>,
    /// Watch the swarm's robots live in the browser (the 2D view: map, robots by state,
    /// their routes). On 127.0.0.1:8080 unless `--gui=ADDR` (`HOST:PORT`, or a port).
    #[command(flatten)]
    gui: crate::flags::Gui,
}

/// How long the Control Center has to answer the robots' hellos.
const HELLO_ANSWERS_WITHIN: Duration = Duration::from_secs(10);

/// Waits for the Control Center's answer to each hello (`welcome`, or `refused` with its
/// reason: a Control Center answers a connection's messages in order, so the first answers
/// are those of the hellos, in their order), handing everything else it sends meanwhile to
/// the robots. Returns the robots refused and why.
fn hello_answers(
    rx: &Receiver<Incoming>,
    link: &Mutex<RemoteLink>,
    mut pending: VecDeque<RobotId>,
    cc: &str,
) -> Result<Vec<(RobotId, String)>> {
    let total = pending.len();
    let until = Instant::now() + HELLO_ANSWERS_WITHIN;
    let mut refused = Vec::new();
    while let Some(&next) = pending.front() {
        let left = until.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(Incoming::Message(_, env)) => {
                match &env.msg {
                    Msg::Welcome { robot } if *robot == next => {
                        pending.pop_front();
                    }
                    Msg::Refused { reason } => {
                        pending.pop_front();
                        refused.push((next, reason.clone()));
                        continue;
                    }
                    _ => {}
                }
                lock(link).inbox.push_back(env);
            }
            Ok(Incoming::Bad(_, e)) => eprintln!("bad message from the Control Center: {e}"),
            Ok(Incoming::Closed(_)) | Err(RecvTimeoutError::Disconnected) => bail!(
                "the Control Center at {cc} closed the connection before it answered every robot's hello ({} of {total} answered)",
                total - pending.len()
            ),
            Ok(_) => {}
            Err(RecvTimeoutError::Timeout) => bail!(
                "the Control Center at {cc} answered {} of the {total} robots' hellos within {} s: is it `simrob coord serve`?",
                total - pending.len(),
                HELLO_ANSWERS_WITHIN.as_secs()
            ),
        }
    }
    Ok(refused)
}

pub fn run(args: SwarmArgs) -> Result<()> {
    let speed = args.speed.or_real_time();
    if args.robot_id_base == 0 {
        bail!("--robot-id-base: robot ids start at 1");
    }
    let path = crate::shell::scenario_given(&args.scenario, &args.scenario_flag)?;
    let scenario = Scenario::open_within(&path, args.scenario_bytes.limit())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let ov = Overrides {
        robots: args.robots,
        seed: args.seed,
        duration: Some(f64::MAX / 4.0),
        full_duration: true,
        limits: args.build_limits.limits()?,
        ..Overrides::default()
    };
    let mut sim = scenario.build(&ov).map_err(|e| anyhow::anyhow!("{e}"))?;
    let robots = sim.world().robot_count();
    let base = args.robot_id_base;
    let last = (base as u64 + robots as u64).saturating_sub(1);
    if !simrob_coord::swarm::robot_ids_fit(base, robots) {
        bail!(
            "--robot-id-base {base}: {robots} robots numbered from it reach id {last}, past the largest robot id {MAX_ROBOT_ID} (2^30 - 1; the Control Center refuses a larger one): give a base of at most {}",
            (MAX_ROBOT_ID as u64 + 1).saturating_sub(robots as u64).max(1)
        );
    }
    let world = sim.world_mut();
    let scripts = world.custom_mut::<Script>();
    for e in scripts.ids() {
        scripts.remove(e);
    }
    let (mut writer, rx) = connect_cc(&args.cc)?;
    let link = Arc::new(Mutex::new(RemoteLink::default()));
    let config = SwarmCoordConfig {
        robot_id_base: args.robot_id_base,
        end_when_done: false,
        ..SwarmCoordConfig::default()
    };
    sim.add_system(Box::new(CoordSystem::remote(config, link.clone())));
    // The first frame says every robot's hello; each is answered before anything else.
    if !sim.step() {
        return Ok(());
    }
    let out: Vec<_> = lock(&link).outbox.drain(..).collect();
    let hellos: VecDeque<RobotId> = out
        .iter()
        .filter_map(|env| match &env.msg {
            Msg::Hello { info } => Some(info.robot),
            _ => None,
        })
        .collect();
    for env in out {
        write_env(&mut writer, &env)?;
    }
    let refused = hello_answers(&rx, &link, hellos, &args.cc)?;
    if !refused.is_empty() {
        for (id, reason) in &refused {
            eprintln!("robot {id}: refused by the Control Center: {reason}");
        }
        bail!(
            "{} of the {robots} robots (ids {base} to {last}) were refused by the Control Center at {}, each said above; none runs",
            refused.len(),
            args.cc
        );
    }
    println!(
        "{}: {robots} robots (ids {base} to {last}) joined the Control Center at {}",
        scenario.name(),
        args.cc
    );
    let mut watch = match args
        .gui
        .addr()
        .map(|g| g.resolve(crate::flags::LOCALHOST))
        .transpose()?
    {
        Some(addr) => {
            let hello = format!(
                "simrob coord swarm: {} (Control Center {})",
                sim.name, args.cc
            );
            let w = simrob_viewer::view2d::swarm::Watch::start_guarded(
                addr,
                &mut sim,
                scenario.map.as_ref(),
                &hello,
                args.gui.guard()?,
            )?;
            println!("2D view on http://{}", w.addr());
            Some(w)
        }
        None => None,
    };
    let fps = sim.ctx.config.fps;
    let start = Instant::now();
    loop {
        loop {
            match rx.try_recv() {
                Ok(Incoming::Message(_, env)) => lock(&link).inbox.push_back(env),
                Ok(Incoming::Bad(_, e)) => eprintln!("bad message from the Control Center: {e}"),
                Ok(Incoming::Closed(_)) | Err(TryRecvError::Disconnected) => {
                    println!("the Control Center closed the connection");
                    return Ok(());
                }
                Ok(_) => {}
                Err(TryRecvError::Empty) => break,
            }
        }
        if !sim.step() {
            return Ok(());
        }
        if let Some(w) = watch.as_mut() {
            w.show(&sim);
        }
        let out: Vec<_> = lock(&link).outbox.drain(..).collect();
        for env in out {
            write_env(&mut writer, &env)?;
        }
        // Simulated time runs at --speed × wall time (0: as fast as possible).
        if speed > 0.0 {
            let due = sim.frame() as f64 / fps / speed;
            let ahead = due - start.elapsed().as_secs_f64();
            if ahead > 0.0 {
                std::thread::sleep(Duration::from_secs_f64(ahead.min(1.0)));
            }
        }
    }
}
