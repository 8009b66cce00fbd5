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
pub struct ServeArgs {
    /// What to log on standard error, as `RUST_LOG` filters: `info` (agents registering,
    /// refusals), `simrob::session=debug,warn`… Default: `RUST_LOG`, else `warn`.
    #[arg(long, value_name = "FILTER")]
    pub log: Option<String>,
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
    /// Scenario to create at start: a file of SimRob XML messages applied in order. The
    /// simulation then starts (Initialize_Simulation) unless --no-start is given.
    #[arg(long, value_name = "FILE")]
    pub scenario: Option<PathBuf>,
    /// With --scenario: create the scenario but wait for an agent's Initialize_Simulation.
    #[arg(long, requires = "scenario")]
    pub no_start: bool,
    /// Simulated seconds per wall second in asynchronous mode (0 = as fast as possible;
    /// configuration key `realtimefactor`). With the viewer and neither this flag nor the
    /// key, the server paces at real time (1). As fast as possible, the simulation only runs
    /// while an agent is registered or the viewer or a recording watches.
    #[arg(long, value_name = "F")]
    pub real_time_factor: Option<f64>,
    /// Directory Save and Load are confined to (configuration key `savedirectory`).
    #[arg(long, value_name = "DIR")]
    pub save_dir: Option<PathBuf>,
    /// Serve the web viewer too (on --http-port, default 8080).
    #[arg(long)]
    pub gui: bool,
    /// Port of the web viewer (implies --gui; 0 picks a free port). It listens on the same
    /// address as the server.
    #[arg(long, value_name = "N")]
    pub http_port: Option<u16>,
    /// Record every iteration to FILE (created or truncated): the compact simrob-recording
    /// format (deflate blocks of 32-bit poses), readable while being written; play it with
    /// `simrob replay FILE`, export it with `simrob replay FILE --export csv`.
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Print every configuration key with its default, and exit.
    #[arg(long)]
    pub list_config: bool,
}

/// Builds the server configuration from a file and flags.
pub fn config_from(args: &ServeArgs) -> Result<ServerConfig> {
    let mut config = match &args.config {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read configuration {}", path.display()))?;
            ServerConfig::from_text(&path.display().to_string(), &text)
                .map_err(anyhow::Error::msg)?
        }
        None => ServerConfig::default(),
    };
    if let Some(ip) = args.bind {
        config.receiver_ip = ip;
    }
    if let Some(port) = args.port {
        config.receiver_port = port;
    }
    if let Some(f) = args.real_time_factor {
        config
            .set("realtimefactor", &f.to_string())
            .map_err(anyhow::Error::msg)?;
    }
    if let Some(dir) = &args.save_dir {
        config.save_directory = dir.clone();
    }
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
            let hint = if e.kind() == std::io::ErrorKind::AddrInUse {
                " (the port is taken, perhaps by another simrob server: stop it, choose \
                 another --port, or --port 0 for a free one)"
            } else {
                ""
            };
            return Err(anyhow::Error::new(e).context(format!(
                "cannot listen on udp://{}:{}{hint}",
                c.receiver_ip, c.receiver_port
            )));
        }
    };
    if let Some(path) = scenario {
        let mut requests = crate::run::read_requests(path)?;
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
    crate::shell::init_logging(args.log.as_deref())?;
    if args.list_config {
        for (key, default) in all_keys() {
            println!("{key} {default}");
        }
        return Ok(());
    }
    let mut config = config_from(&args)?;
    let gui = args.gui || args.http_port.is_some();
    if gui && args.real_time_factor.is_none() && config.real_time_factor == 0.0 {
        config.real_time_factor = 1.0;
        println!("pacing at real time for the viewer (--real-time-factor 0: as fast as possible)");
    }
    let mut server = build(config, args.scenario.as_deref(), !args.no_start)?;
    let stop = crate::shell::ctrl_c_flag()?;
    let addr = server.local_addr()?;
    println!("listening on udp://{addr}");
    let _viewer = if gui {
        let viewer = start_viewer_on(&mut server, args.http_port)?;
        println!("viewer on http://{}", viewer.addr());
        Some(viewer)
    } else {
        None
    };
    if let Some(path) = &args.record {
        let recorder = simrob_viewer::record::recorder(path, &format!("udp://{addr}"))
            .with_context(|| format!("cannot record to {}", path.display()))?;
        server.add_observer(recorder);
        println!("recording to {}", path.display());
    }
    server.run(&stop)?;
    let s = server.session().stats();
    println!(
        "stopped at iteration {}: {} datagrams in, {} out, {} errors answered",
        server.session().world().iteration(),
        s.datagrams_in,
        s.datagrams_out,
        s.errors
    );
    Ok(())
}

/// The viewer's port when none is given.
pub const DEFAULT_HTTP_PORT: u16 = 8080;

/// Starts the web viewer on `port`, or when none is given on 8080 and, if that is taken, on
/// a free port (saying so on stderr).
pub fn start_viewer_on(server: &mut UdpServer, port: Option<u16>) -> Result<simrob_viewer::Viewer> {
    match port {
        Some(p) => start_viewer(server, p).map_err(|e| {
            e.context(format!(
                "--http-port {p}: is the port taken? --http-port 0 picks a free one"
            ))
        }),
        None => start_viewer(server, DEFAULT_HTTP_PORT).or_else(|_| {
            eprintln!("port {DEFAULT_HTTP_PORT} is taken: the viewer takes a free port");
            start_viewer(server, 0)
        }),
    }
}

/// Starts the web viewer for `server`: frames from the session's snapshots, the page's
/// commands as local commands into the session.
pub fn start_viewer(server: &mut UdpServer, port: u16) -> Result<simrob_viewer::Viewer> {
    let addr = server.local_addr()?;
    let viewer = simrob_viewer::Viewer::start(
        std::net::SocketAddr::new(addr.ip(), port),
        simrob_viewer::SessionBridge::new(server.commands()),
        simrob_viewer::responses_channel(),
        &format!("udp://{addr}"),
        "live",
    )
    .with_context(|| format!("cannot serve the viewer on port {port}"))?;
    server.add_sampled_observer(simrob_viewer::observer(&viewer), viewer.frame_requests());
    Ok(viewer)
}
