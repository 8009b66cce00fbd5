//! `simrob serve`: the SimRob UDP server.

use std::net::IpAddr;
use std::path::PathBuf;

use anyhow::{Context, Result};
use simrob_protocol::{ControlRequest, Request};
use simrob_server::files::DirStore;
use simrob_server::udp::UdpServer;
use simrob_session::{all_keys, ServerConfig, Session};

/// Arguments of `simrob serve`.
#[derive(clap::Args)]
#[command(mut_arg(
    "gui",
    crate::flags::gui_help("Serve the web viewer too, on the server's IP unless ADDR names one")
))]
#[command(mut_arg("speed", |a| a.help(
    "The pace in asynchronous mode: simulated seconds per wall second (0 = as fast as possible; configuration key `realtimefactor`). With the viewer, a recording or --ros2 (without --ros2-lockstep) and neither this flag nor the key, the server paces at real time (1). As fast as possible, the simulation only runs while an agent is registered, the viewer or a recording watches, or --ros2 publishes"
)))]
#[command(group(clap::ArgGroup::new("scenario_given").args(["scenario", "scenario_flag"]).required(false)))]
pub struct ServeArgs {
    /// Configuration file: the legacy `Configuration.data` (`key value` lines) or TOML (a name
    /// ending in `.toml`) with the same keys. See `--list-config`.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Address to listen on (default: the configuration's, 127.0.0.1).
    #[arg(long, value_name = "IP")]
    pub bind: Option<IpAddr>,
    /// UDP port (default: the configuration's, 5005; 0 picks a free port).
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,
    /// Scenario to create at start: a file of SimRob XML messages applied in order (or give
    /// it as SCENARIO). The simulation then starts (Initialize_Simulation) unless --no-start
    /// is given.
    #[arg(long = "scenario", value_name = "FILE")]
    pub scenario_flag: Option<PathBuf>,
    /// The scenario file, as a positional argument (the same as --scenario FILE).
    #[arg(value_name = "SCENARIO")]
    pub scenario: Option<PathBuf>,
    /// With a scenario: create it but wait for an agent's Initialize_Simulation.
    #[arg(long, requires = "scenario_given")]
    pub no_start: bool,
    /// The largest scenario file read, `--max-scenario-bytes BYTES`.
    #[command(flatten)]
    pub scenario_bytes: crate::flags::ScenarioBytes,
    /// The pace in asynchronous mode, `--speed F`: simulated seconds per wall second (0 = as
    /// fast as possible; configuration key `realtimefactor`). With the viewer, a recording or
    /// --ros2 (without --ros2-lockstep) and neither this flag nor the key, the server paces at
    /// real time (1). As fast as possible, the simulation only runs while an agent is
    /// registered, the viewer or a recording watches, or --ros2 publishes.
    #[command(flatten)]
    pub speed: crate::flags::Speed,
    /// Directory Save and Load are confined to (configuration key `savedirectory`).
    #[arg(long, value_name = "DIR")]
    pub save_dir: Option<PathBuf>,
    /// The web viewer, `--gui[=ADDR]` (on the server's IP unless ADDR names one).
    #[command(flatten)]
    pub gui: crate::flags::Gui,
    /// The world on ROS 2: `--ros2` and its rates and lockstep.
    #[command(flatten)]
    pub ros2: crate::flags::Ros2,
    /// Record every iteration to FILE (created or truncated) in a compact, compressed format,
    /// readable while it is being written; play it with `simrob replay FILE`, export it with
    /// `simrob replay FILE --export csv`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Threads each physics step runs on (configuration key `physicsthreads`, default 1); the
    /// run is the same at any number; 1 to 256. Above 1 needs a simrob built with parallel
    /// physics: `cargo build --release -p simrob --features parallel`.
    #[arg(long, value_name = "N", value_parser = crate::flags::physics_threads)]
    pub physics_threads: Option<usize>,
    /// Print every configuration key with its default, and exit.
    #[arg(long)]
    pub list_config: bool,
}

/// Builds the server configuration from a file and flags.
pub fn config_from(args: &ServeArgs) -> Result<ServerConfig> {
    let mut config = crate::shell::read_config(args.config.as_deref())?;
    if let Some(ip) = args.bind {
        config.receiver_ip = ip;
    }
    if let Some(port) = args.port {
        config.receiver_port = port;
    }
    if let Some(f) = args.speed.given() {
        config
            .set("realtimefactor", &f.to_string())
            .map_err(anyhow::Error::msg)?;
    }
    let rtf = config.real_time_factor;
    if rtf > 0.0 && rtf < simrob_viewer::command::MIN_REAL_TIME_FACTOR {
        anyhow::bail!(
            "a pace of {rtf:?} (--speed or the configuration key `realtimefactor`) is too slow: \
             0 (as fast as possible) or at least {}",
            simrob_viewer::command::MIN_REAL_TIME_FACTOR
        );
    }
    if let Some(dir) = &args.save_dir {
        config.save_directory = dir.clone();
    }
    crate::shell::physics_threads(&mut config, args.physics_threads)?;
    args.scenario_bytes.apply(&mut config)?;
    // The viewer's limits: the file's, each flag given on the command line in its place.
    config.viewer = args.gui.limits.guard_over(config.viewer)?;
    Ok(config)
}

/// Binds a server for `config`, with the scenario applied (and started unless `start` is
/// false).
pub fn build(
    config: ServerConfig,
    scenario: Option<&std::path::Path>,
    start: bool,
) -> Result<UdpServer> {
    let store = DirStore::new(&config.save_directory)?;
    let c = config.clone();
    let mut server = match UdpServer::bind(Session::new(config), Box::new(store)) {
        Ok(s) => s,
        Err(e) => {
            return Err(crate::shell::cannot_listen(
                e,
                &format!("udp://{}:{}", c.receiver_ip, c.receiver_port),
                "simrob server",
            ))
        }
    };
    if let Some(path) = scenario {
        let mut requests = crate::run::read_requests(path, c.limits.max_scenario_bytes)?;
        if start {
            requests.push(Request::Control {
                request: ControlRequest::InitializeSimulation,
                response: Some(false),
            });
        }
        server
            .apply_local(&requests)
            .with_context(|| format!("scenario {}", path.display()))?;
    }
    Ok(server)
}

pub fn run(args: ServeArgs) -> Result<()> {
    if args.list_config {
        for (key, default) in all_keys() {
            println!("{key} {default}");
        }
        return Ok(());
    }
    // The ROS 2 environment (ROS_AUTOMATIC_DISCOVERY_RANGE, …) before anything is bound or
    // announced: a refused variable is the only thing printed.
    if args.ros2.ros2 {
        args.ros2.refuse_sensor_rate("serve")?;
    }
    let discovery = args.ros2.ros2.then(|| args.ros2.discovery()).transpose()?;
    let scenario = args.scenario.as_deref().or(args.scenario_flag.as_deref());
    if let Some(record) = &args.record {
        refuse_an_input_as_record(record, scenario, args.config.as_deref())?;
    }
    let mut config = config_from(&args)?;
    let gui = args.gui.addr();
    // Someone watching (the viewer) or a recording of a world nobody drives wants the world
    // at real time, not as fast as the machine can (a standing robot recorded for 56
    // simulated minutes in 6 s); --speed or `realtimefactor` say otherwise.
    // So do ROS 2 nodes (teleop, `ros2 topic pub -r 10`, Nav2 live in wall time), unless
    // lockstep lets the ROS side set the pace.
    let ros2_paced = args.ros2.ros2 && !args.ros2.ros2_lockstep;
    let watcher = match (&gui, &args.record, ros2_paced) {
        (Some(_), _, _) => Some("the viewer"),
        (None, Some(_), _) => Some("the recording"),
        (None, None, true) => Some("ROS 2"),
        (None, None, false) => None,
    };
    let mut pacing = None;
    if let (Some(watcher), false, true) = (
        watcher,
        args.speed.is_given(),
        config.real_time_factor == 0.0,
    ) {
        config.real_time_factor = 1.0;
        pacing = Some(watcher);
    }
    let guard = config.viewer;
    let mut server = build(config, scenario, !args.no_start)?;
    let stop = crate::shell::ctrl_c_flag()?;
    let addr = server.local_addr()?;
    // The viewer and the recording first: a taken port or an unwritable file fails before
    // the ready line (`listening on …`) is printed.
    let viewer = match gui {
        Some(gui) => Some(start_viewer_on(&mut server, gui, guard)?),
        None => None,
    };
    // Recording: a second stop signal (`timeout` and Slurm send one to the process and one to
    // its group) waits until the recording is finished and the summary printed.
    let finishing = args
        .record
        .as_ref()
        .map(|_| crate::shell::FinishBeforeExit::hold());
    if let Some(path) = &args.record {
        let recorder = simrob_viewer::record::recorder(path, &format!("udp://{addr}"))
            .with_context(|| format!("cannot record to {}", path.display()))?;
        server.add_observer(recorder);
    }
    // ROS 2 before the ready lines too: a participant that cannot start fails first.
    let ros2 = if let Some(discovery) = discovery {
        if args.ros2.ros2_lockstep {
            // Paused before the first iteration: every step is the ROS side's.
            server.apply_local(&[Request::Control {
                request: ControlRequest::SetStepMode(true),
                response: Some(false),
            }])?;
        }
        let (observer, wants, attached) = simrob_ros2::simrob::attach(
            simrob_ros2::simrob::Options {
                discovery,
                rates: args.ros2.rates(),
                lockstep: args.ros2.ros2_lockstep,
                max_velocity: server.session().config().limits.max_velocity,
            },
            server.commands(),
        )
        .context("cannot start the ROS 2 participant")?;
        server.add_sampled_observer(observer, wants);
        Some((attached, discovery))
    } else {
        None
    };
    if let Some(watcher) = pacing {
        println!("pacing at real time for {watcher} (--speed 0: as fast as possible)");
    }
    let threads = server.session().world().physics_threads();
    if threads > 1 {
        println!("physics steps on {threads} threads");
    }
    println!("listening on udp://{addr}");
    if let Some(v) = &viewer {
        println!("viewer on http://{}", v.addr());
    }
    if let Some(path) = &args.record {
        println!("recording to {}", path.display());
    }
    let _ros2 = ros2.map(|(attached, discovery)| {
        println!("{}", crate::flags::Ros2::banner(discovery));
        attached
    });
    server.run(&stop)?;
    let s = server.session().stats().clone();
    let iteration = server.session().world().iteration();
    // Dropping the server finishes a recording (its end mark written): before the summary.
    drop(server);
    println!("{}", summary(iteration, &s));
    drop(finishing);
    Ok(())
}

/// Refuses a `--record` file that is the scenario or the configuration file the server reads,
/// however the path is spelt (`./`, `..`, a symbolic or hard link): creating the recording
/// would destroy it.
fn refuse_an_input_as_record(
    record: &std::path::Path,
    scenario: Option<&std::path::Path>,
    config: Option<&std::path::Path>,
) -> Result<()> {
    let inputs = [
        ("the scenario", scenario),
        ("the configuration file", config),
    ];
    for (what, input) in inputs {
        if let Some(input) = input.filter(|i| simrob_files::same_file(i, record)) {
            anyhow::bail!(
                "--record {} is {what} ({}): give another file",
                record.display(),
                input.display()
            );
        }
    }
    Ok(())
}

/// The line `simrob serve` prints when it stops: the iteration, datagrams in and out, errors
/// answered, and the lockstep waits that timed out when there were any.
fn summary(iteration: u64, s: &simrob_session::Stats) -> String {
    let timed_out = match s.sync_timeouts {
        0 => String::new(),
        1 => ", 1 lockstep wait timed out (Sync_Wait)".to_string(),
        n => format!(", {n} lockstep waits timed out (Sync_Wait)"),
    };
    format!(
        "stopped at iteration {iteration}: {} datagrams in, {} out, {} errors answered{timed_out}",
        s.datagrams_in, s.datagrams_out, s.errors
    )
}

/// Starts the web viewer at `gui` (on the server's IP unless it names one; a taken port as
/// [`crate::flags::GuiAddr::resolve`] says).
pub fn start_viewer_on(
    server: &mut UdpServer,
    gui: crate::flags::GuiAddr,
    guard: simrob_viewer::Guard,
) -> Result<simrob_viewer::Viewer> {
    let addr = gui.resolve(server.local_addr()?.ip())?;
    start_viewer(server, addr, guard)
}

/// Starts the web viewer for `server`: frames from the session's snapshots, the page's
/// commands as local commands into the session.
pub fn start_viewer(
    server: &mut UdpServer,
    bind: std::net::SocketAddr,
    guard: simrob_viewer::Guard,
) -> Result<simrob_viewer::Viewer> {
    let addr = server.local_addr()?;
    let viewer = simrob_viewer::Viewer::start_guarded(
        bind,
        simrob_viewer::SessionBridge::new(server.commands()),
        simrob_viewer::responses_channel(),
        &format!("udp://{addr}"),
        "live",
        guard,
    )
    .with_context(|| format!("cannot serve the viewer on {bind}"))?;
    server.add_sampled_observer(simrob_viewer::observer(&viewer), viewer.frame_requests());
    Ok(viewer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_lockstep_waits_that_timed_out_when_there_were_any() {
        let mut s = simrob_session::Stats {
            datagrams_in: 7,
            datagrams_out: 9,
            errors: 1,
            ..Default::default()
        };
        assert_eq!(
            summary(12, &s),
            "stopped at iteration 12: 7 datagrams in, 9 out, 1 errors answered"
        );
        s.sync_timeouts = 1;
        assert!(summary(12, &s).ends_with(", 1 lockstep wait timed out (Sync_Wait)"));
        s.sync_timeouts = 3;
        assert!(summary(12, &s).ends_with(", 3 lockstep waits timed out (Sync_Wait)"));
    }
}
