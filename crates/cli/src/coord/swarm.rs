//! `simrob coord swarm`: a swarm scenario whose robots join a networked Control Center.

use std::path::PathBuf;
use std::sync::mpsc::TryRecvError;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use simrob_coord::swarm::{lock, CoordSystem, RemoteLink, SwarmCoordConfig};
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
    /// The first robot id (the swarm's robots are numbered from it, in entity order).
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
    if !simrob_coord::swarm::robot_ids_fit(args.robot_id_base, robots) {
        bail!(
            "--robot-id-base {}: {robots} robots numbered from it go past the largest robot id, {}",
            args.robot_id_base,
            u32::MAX
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
    println!(
        "{}: {} robots (ids from {}) connected to the Control Center at {}",
        scenario.name(),
        sim.world().robot_count(),
        args.robot_id_base,
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
