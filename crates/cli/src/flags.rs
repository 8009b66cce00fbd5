//! The command-line vocabulary every subcommand shares, each flag defined once here: the
//! viewer's address (`--gui[=ADDR]`) and the pace (`--speed`), with the old spellings
//! (`--http-port`, `--real-time-factor`, `--bind` of replay) kept as hidden aliases that say
//! what to write instead.

use anyhow::{bail, Result};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpListener};

/// A number from the command line as an error message shows it ([`simrob_math::Shown`]).
pub fn shown(v: f64) -> String {
    simrob_math::Shown(v).to_string()
}

/// The viewer's port when the command line names none.
pub const DEFAULT_GUI_PORT: u16 = 8080;

/// Where a viewer listens, as `--gui[=ADDR]` gives it: ADDR a port (0 = any free port),
/// `IP:PORT` or an IP; what it leaves out is the command's default (its IP, port 8080).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GuiAddr {
    /// The IP, when given.
    pub ip: Option<IpAddr>,
    /// The port, when given.
    pub port: Option<u16>,
}

impl GuiAddr {
    /// Reads ADDR: empty (`--gui` alone), `PORT`, `IP:PORT` or `IP`.
    pub fn parse(s: &str) -> Result<GuiAddr, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(GuiAddr::default());
        }
        if let Ok(port) = s.parse::<u16>() {
            return Ok(GuiAddr {
                ip: None,
                port: Some(port),
            });
        }
        if let Ok(a) = s.parse::<SocketAddr>() {
            return Ok(GuiAddr {
                ip: Some(a.ip()),
                port: Some(a.port()),
            });
        }
        if let Ok(ip) = s.parse::<IpAddr>() {
            return Ok(GuiAddr {
                ip: Some(ip),
                port: None,
            });
        }
        Err(format!(
            "{s:?}: expected a PORT (0 = any free port), IP:PORT or IP, e.g. --gui=9000"
        ))
    }

    /// The address to listen on, `default_ip` and port 8080 where ADDR left them out.
    pub fn socket(&self, default_ip: IpAddr) -> SocketAddr {
        SocketAddr::new(
            self.ip.unwrap_or(default_ip),
            self.port.unwrap_or(DEFAULT_GUI_PORT),
        )
    }

    /// Where the viewer listens: [`GuiAddr::socket`] when it is free. When it is taken, a free
    /// port (said on standard error) if the user named none; an error that says what to do if
    /// they named it.
    pub fn resolve(&self, default_ip: IpAddr) -> Result<SocketAddr> {
        let addr = self.socket(default_ip);
        if addr.port() == 0 {
            return Ok(addr);
        }
        match TcpListener::bind(addr) {
            Ok(_) => Ok(addr),
            Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
                if self.port.is_some() {
                    bail!(
                        "--gui={}: port {} is taken: pick another port, or --gui=0 for a free one",
                        self.port.unwrap_or(addr.port()),
                        addr.port()
                    );
                }
                eprintln!(
                    "port {} is taken: the viewer takes a free port",
                    addr.port()
                );
                Ok(SocketAddr::new(addr.ip(), 0))
            }
            // Another failure (an IP not of this machine, …) is the viewer's own to report.
            Err(_) => Ok(addr),
        }
    }
}

/// The localhost IP the viewers listen on unless told otherwise.
pub const LOCALHOST: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);

/// `--gui[=ADDR]`: serve the page (and the hidden old `--http-port N`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Gui {
    /// Show it in the browser (the web viewer or the 2D view; prints its address). On port
    /// 8080 (a free port, said on standard error, if 8080 is taken) unless `--gui=ADDR`: a
    /// PORT (0 = any free port), IP:PORT or IP.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, require_equals = true,
          default_missing_value = "", value_parser = GuiAddr::parse)]
    pub gui: Option<GuiAddr>,
    /// Old spelling of `--gui=N` (says so on standard error).
    #[arg(long, value_name = "N", hide = true, value_parser = old_http_port)]
    pub http_port: Option<u16>,
    /// What the viewer accepts from its pages.
    #[command(flatten)]
    pub limits: ViewerLimits,
}

/// The web viewer's limits (`--viewer-…`), on every command that serves a viewer. Each is
/// one of [`simrob_session::VIEWER_KEYS`]: its range, its default
/// ([`simrob_viewer::Guard::default`]) and its help come from there, and `simrob serve` reads
/// the same limits from its configuration file (a flag given here wins).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ViewerLimits {
    /// `--viewer-max-pages` (`viewermaxpages`).
    #[arg(long, value_name = "PAGES", help = viewer_help("viewermaxpages"),
          value_parser = viewer_whole::<usize>("viewermaxpages"))]
    pub viewer_max_pages: Option<usize>,
    /// `--viewer-max-message-bytes` (`viewermaxmessagebytes`).
    #[arg(long, value_name = "BYTES", help = viewer_help("viewermaxmessagebytes"),
          value_parser = viewer_whole::<usize>("viewermaxmessagebytes"))]
    pub viewer_max_message_bytes: Option<usize>,
    /// `--viewer-commands-per-second` (`viewercommandspersecond`).
    #[arg(long, value_name = "N", help = viewer_help("viewercommandspersecond"),
          value_parser = viewer_number("viewercommandspersecond"))]
    pub viewer_commands_per_second: Option<f64>,
    /// `--viewer-header-timeout` (`viewerheadertimeout`).
    #[arg(long, value_name = "S", help = viewer_help("viewerheadertimeout"),
          value_parser = viewer_number("viewerheadertimeout"))]
    pub viewer_header_timeout: Option<f64>,
    /// `--viewer-max-pending` (`viewermaxpending`).
    #[arg(long, value_name = "N", help = viewer_help("viewermaxpending"),
          value_parser = viewer_whole::<usize>("viewermaxpending"))]
    pub viewer_max_pending: Option<usize>,
    /// `--viewer-idle-timeout` (`vieweridletimeout`).
    #[arg(long, value_name = "S", help = viewer_help("vieweridletimeout"),
          value_parser = viewer_number("vieweridletimeout"))]
    pub viewer_idle_timeout: Option<f64>,
    /// `--viewer-max-view-bodies` (`viewermaxviewbodies`).
    #[arg(long, value_name = "N", help = viewer_help("viewermaxviewbodies"),
          value_parser = viewer_whole::<usize>("viewermaxviewbodies"))]
    pub viewer_max_view_bodies: Option<usize>,
    /// `--viewer-max-view-cells` (`viewermaxviewcells`).
    #[arg(long, value_name = "N", help = viewer_help("viewermaxviewcells"),
          value_parser = viewer_whole::<usize>("viewermaxviewcells"))]
    pub viewer_max_view_cells: Option<usize>,
    /// `--viewer-max-view-routes` (`viewermaxviewroutes`).
    #[arg(long, value_name = "N", help = viewer_help("viewermaxviewroutes"),
          value_parser = viewer_whole::<usize>("viewermaxviewroutes"))]
    pub viewer_max_view_routes: Option<usize>,
    /// `--viewer-max-view-names` (`viewermaxviewnames`).
    #[arg(long, value_name = "N", help = viewer_help("viewermaxviewnames"),
          value_parser = viewer_whole::<usize>("viewermaxviewnames"))]
    pub viewer_max_view_names: Option<usize>,
    /// `--viewer-max-step-frames` (`viewermaxstepframes`).
    #[arg(long, value_name = "FRAMES", help = viewer_help("viewermaxstepframes"),
          value_parser = viewer_whole::<u64>("viewermaxstepframes"))]
    pub viewer_max_step_frames: Option<u64>,
}

/// The value parser of a whole `--viewer-…` flag: its key's range (as the help and
/// docs/security.md say it), a value out of it refused when the command line is read.
fn viewer_whole<T: Whole + TryFrom<u64>>(
    key: &'static str,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    let (min, max) = match simrob_session::viewer::viewer_key(key) {
        Some(k) => (
            T::try_from(k.min as u64).unwrap_or(T::LEAST),
            T::try_from(k.max as u64).unwrap_or(T::GREATEST),
        ),
        None => (T::LEAST, T::GREATEST),
    };
    count(min, max)
}

/// The value parser of a `--viewer-…` flag whose value is a time ([`seconds_from`]) or a
/// rate ([`number_from`]), within its key's range.
fn viewer_number(
    key: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    use simrob_session::viewer::{viewer_key, ViewerUnit};
    let k = viewer_key(key);
    let (min, max) = k.map_or((0.0, f64::MAX), |k| (k.min, k.max));
    let is_time = k.is_some_and(|k| k.unit == ViewerUnit::Seconds);
    let time = seconds_from(min, max);
    let rate = number_from(min, max, " commands a second");
    move |s| if is_time { time(s) } else { rate(s) }
}

/// A `--viewer-…` flag's help, from its row of [`simrob_session::VIEWER_KEYS`]: what it
/// means, its range and default, and its configuration key.
fn viewer_help(key: &str) -> String {
    use simrob_session::viewer::{viewer_key, ViewerUnit};
    let Some(k) = viewer_key(key) else {
        return String::new();
    };
    let range = match k.unit {
        ViewerUnit::Seconds => format!(
            "Seconds {TIME_FORMS}, {}",
            k.range().replace(" seconds", "")
        ),
        ViewerUnit::Whole | ViewerUnit::PerSecond => {
            let r = k.range();
            format!("{}{}", r[..1].to_uppercase(), &r[1..])
        }
    };
    format!(
        "{}: {}. {range}, default {} (`simrob serve`'s configuration key `{}`)",
        k.view,
        k.meaning,
        k.default_text(),
        k.key
    )
}

impl ViewerLimits {
    /// The viewer's guard: the defaults, with each flag given (within its range, else an
    /// error naming the flag).
    pub fn guard(&self) -> Result<simrob_viewer::Guard> {
        self.guard_over(simrob_viewer::Guard::default())
    }

    /// `base` (the limits of `simrob serve`'s configuration) with each flag given put in its
    /// place: a flag on the command line wins. A flag out of its range is an error naming it.
    pub fn guard_over(&self, base: simrob_viewer::Guard) -> Result<simrob_viewer::Guard> {
        let whole = |v: Option<usize>| v.map(|n| n as f64);
        let mut guard = base;
        for (key, value) in [
            ("viewermaxpages", whole(self.viewer_max_pages)),
            (
                "viewermaxmessagebytes",
                whole(self.viewer_max_message_bytes),
            ),
            ("viewercommandspersecond", self.viewer_commands_per_second),
            ("viewerheadertimeout", self.viewer_header_timeout),
            ("viewermaxpending", whole(self.viewer_max_pending)),
            ("vieweridletimeout", self.viewer_idle_timeout),
            ("viewermaxviewbodies", whole(self.viewer_max_view_bodies)),
            ("viewermaxviewcells", whole(self.viewer_max_view_cells)),
            ("viewermaxviewroutes", whole(self.viewer_max_view_routes)),
            ("viewermaxviewnames", whole(self.viewer_max_view_names)),
            (
                "viewermaxstepframes",
                self.viewer_max_step_frames.map(|n| n as f64),
            ),
        ] {
            let Some(v) = value else { continue };
            let Some(k) = simrob_session::viewer::viewer_key(key) else {
                bail!("{key}: not a limit of the viewer");
            };
            if k.put(&mut guard, v).is_err() {
                bail!("{} {}: must be {}", k.flag, shown(v), k.range());
            }
        }
        Ok(guard)
    }
}

/// `--max-scenario-bytes BYTES`: the largest scenario file a command reads (the server's
/// configuration key `maxscenariobytes`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ScenarioBytes {
    /// `--max-scenario-bytes` (`maxscenariobytes`).
    #[arg(long, value_name = "BYTES", help = scenario_bytes_help(),
          value_parser = count(1u64, u64::MAX))]
    pub max_scenario_bytes: Option<u64>,
}

fn scenario_bytes_help() -> String {
    format!(
        "Largest scenario file read, bytes, at least 1 (default {}, configuration key \
         `maxscenariobytes`); a larger file is refused before anything starts",
        simrob_session::DEFAULT_MAX_SCENARIO_BYTES
    )
}

impl ScenarioBytes {
    /// Puts `--max-scenario-bytes`, when given, in `config` (over its `maxscenariobytes`).
    pub fn apply(&self, config: &mut simrob_session::ServerConfig) -> Result<()> {
        if let Some(n) = self.max_scenario_bytes {
            config
                .set("maxscenariobytes", &n.to_string())
                .map_err(|e| anyhow::anyhow!("--max-scenario-bytes {n}: {e}"))?;
        }
        Ok(())
    }
}

/// `--max-config-bytes BYTES` on the FutRob team's commands: the largest team file, robot
/// configuration (`ini.config`), rules or vision file read.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct ConfigBytes {
    /// Largest team file, robot configuration (ini.config), rules or vision file read, bytes,
    /// at least 1 (default 67108864); a larger one is refused before anything starts.
    #[arg(long, value_name = "BYTES", value_parser = count(1u64, u64::MAX))]
    pub max_config_bytes: Option<u64>,
}

impl ConfigBytes {
    /// The text of `path` (`what` naming it in messages), within the limit.
    pub fn read(&self, path: &std::path::Path, what: &str) -> Result<String> {
        crate::shell::read_text_within(
            path,
            what,
            self.max_config_bytes.unwrap_or(crate::shell::MAX_TEXT_FILE),
            "--max-config-bytes BYTES",
        )
    }
}

/// How a user raises the largest scenario file on the command line, said by every refusal of
/// a file over it.
pub const RAISE_SCENARIO_BYTES: &str = "--max-scenario-bytes BYTES";

/// [`RAISE_SCENARIO_BYTES`] where a server's configuration can raise it too.
pub const RAISE_SCENARIO_BYTES_OR_KEY: &str =
    "--max-scenario-bytes BYTES or the configuration key `maxscenariobytes`";

/// `--max-scenario-bytes BYTES` on the commands that read a swarm scenario (`swarm run`,
/// `coord compare`, `coord swarm`): the largest scenario file and the largest map it names
/// (no configuration file: the flag alone sets it).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SwarmScenarioBytes {
    /// `--max-scenario-bytes` ([`simrob_swarm::scenario::MAX_FILE_BYTES`] by default).
    #[arg(
        long = "max-scenario-bytes",
        value_name = "BYTES",
        help = swarm_scenario_bytes_help(),
        value_parser = count(1u64, u64::MAX)
    )]
    pub max_scenario_bytes: Option<u64>,
}

fn swarm_scenario_bytes_help() -> String {
    format!(
        "Largest scenario file read, and largest file it names (its draw.io `map`, its \
         `world.obstacles` map), bytes, at least 1 (default {}); a larger file is refused \
         before anything starts",
        simrob_swarm::scenario::MAX_FILE_BYTES
    )
}

impl SwarmScenarioBytes {
    /// The limit on the scenario's files, the flag's or the default.
    pub fn limit(&self) -> simrob_swarm::scenario::FileLimit {
        simrob_swarm::scenario::FileLimit {
            max_bytes: self
                .max_scenario_bytes
                .unwrap_or(simrob_swarm::scenario::MAX_FILE_BYTES),
            raise_with: RAISE_SCENARIO_BYTES,
        }
    }
}

/// How a user raises the robots of a generated swarm scenario, said by its refusal.
pub const RAISE_ROBOTS: &str = "--max-robots N";

/// How a user raises the cells of a swarm world's grid, said by its refusal.
pub const RAISE_GRID_CELLS: &str = "--max-grid-cells N";

/// `--max-robots N` and `--max-grid-cells N` on the commands that build swarm worlds (`swarm
/// run`, `swarm bench`, `coord compare`, `coord swarm`): what a scenario may make, each
/// guarding memory (no configuration file: the flags alone set them).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SwarmBuildLimits {
    /// `--max-robots` ([`simrob_swarm::scenario::MAX_DRONES`] and
    /// [`simrob_swarm::scenario::MAX_WAREHOUSE_ROBOTS`] by default).
    #[arg(
        long = "max-robots",
        value_name = "N",
        help = max_robots_help(),
        value_parser = count(1usize, simrob_swarm::scenario::MAX_ROBOTS_SETTABLE)
    )]
    pub max_robots: Option<usize>,
    /// `--max-grid-cells` ([`simrob_swarm::scenario::MAX_GRID_CELLS`] by default).
    #[arg(
        long = "max-grid-cells",
        value_name = "N",
        help = max_grid_cells_help(),
        value_parser = count(1usize, simrob_swarm::scenario::MAX_GRID_CELLS_SETTABLE)
    )]
    pub max_grid_cells: Option<usize>,
}

fn max_robots_help() -> String {
    use simrob_swarm::scenario::{MAX_DRONES, MAX_ROBOTS_SETTABLE, MAX_WAREHOUSE_ROBOTS};
    format!(
        "Most robots a generated scenario may make, from 1 to {MAX_ROBOTS_SETTABLE} (default \
         {MAX_DRONES} drones of the drone swarm, some 300 bytes each; {MAX_WAREHOUSE_ROBOTS} \
         robots of the warehouse, some 5 KB each); more is refused before anything is built"
    )
}

fn max_grid_cells_help() -> String {
    use simrob_swarm::scenario::{MAX_GRID_CELLS, MAX_GRID_CELLS_SETTABLE};
    format!(
        "Most cells of the world's spatial grid (width × height over world.cell_size squared), \
         from 1 to {MAX_GRID_CELLS_SETTABLE} (default {MAX_GRID_CELLS}); a larger world is \
         refused before anything is built"
    )
}

impl SwarmBuildLimits {
    /// The limits of a build, the flags' or the defaults, their messages naming the flags.
    pub fn limits(&self) -> Result<simrob_swarm::scenario::BuildLimits> {
        simrob_swarm::scenario::BuildLimits::given(
            self.max_robots,
            self.max_grid_cells,
            RAISE_ROBOTS,
            RAISE_GRID_CELLS,
        )
        .map_err(|e| anyhow::anyhow!(e.0))
    }
}

impl Gui {
    /// The viewer's limits ([`ViewerLimits::guard`]).
    pub fn guard(&self) -> Result<simrob_viewer::Guard> {
        self.limits.guard()
    }

    /// The viewer's address if the command line asks for one (`--http-port N` counts, with a
    /// line on standard error, said when it is read, saying to write `--gui=N`).
    pub fn addr(&self) -> Option<GuiAddr> {
        match self.http_port {
            Some(n) => Some(GuiAddr {
                ip: self.gui.and_then(|g| g.ip),
                port: Some(n),
            }),
            None => self.gui,
        }
    }
}

/// `--gui`'s help on one command (`#[command(mut_arg("gui", gui_help(WHAT)))]`): what the
/// page shows, then the address rule every command shares.
pub fn gui_help(what: &'static str) -> impl FnOnce(clap::Arg) -> clap::Arg {
    move |a| {
        a.help(format!(
            "{what}. On port 8080 (a free port, said on standard error, if 8080 is taken) unless \
             `--gui=ADDR`: a PORT (0 = any free port), IP:PORT or IP"
        ))
    }
}

/// `--speed F`: the pace, simulated seconds per wall second (and the hidden old
/// `--real-time-factor F`).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Speed {
    /// Pace: simulated (or recorded) seconds per wall second; 0 = as fast as possible where
    /// the command allows it (default 1).
    #[arg(long, value_name = "F", value_parser = pace)]
    pub speed: Option<f64>,
    /// Old spelling of `--speed` (says so on standard error).
    #[arg(long, value_name = "F", hide = true, value_parser = old_real_time_factor)]
    pub real_time_factor: Option<f64>,
}

impl Speed {
    /// The pace given on the command line, if any (`--real-time-factor F` counts, with a line
    /// on standard error, said when it is read, saying to write `--speed F`).
    pub fn given(&self) -> Option<f64> {
        self.real_time_factor.or(self.speed)
    }

    /// Whether the command line gives a pace (in either spelling).
    pub fn is_given(&self) -> bool {
        self.speed.is_some() || self.real_time_factor.is_some()
    }

    /// The pace given, else 1 (real time).
    pub fn or_real_time(&self) -> f64 {
        self.given().unwrap_or(1.0)
    }
}

/// `--ros2` and its options: the world on ROS 2 topics (one shared spelling for every
/// command that serves robots).
#[derive(clap::Args, Clone, Debug, Default)]
pub struct Ros2 {
    /// Publish the world on ROS 2 (DDS/RTPS, no ROS installation needed): `/clock`, `/tf`,
    /// each robot's `odom`, and its inputs (`cmd_vel`...). Domain from `ROS_DOMAIN_ID`;
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` (or `ROS_LOCALHOST_ONLY=1`) keeps discovery
    /// on this machine. Topics and types: docs/ros2.md
    #[arg(long)]
    pub ros2: bool,
    /// With --ros2: each robot's `odom` and `/tf`, per simulated second (0 = every
    /// iteration; default 50).
    #[arg(long, value_name = "HZ", requires = "ros2", value_parser = rate)]
    pub ros2_odom_rate: Option<f64>,
    /// With --ros2: `/clock` per simulated second (0 = every iteration, the default).
    #[arg(long, value_name = "HZ", requires = "ros2", value_parser = rate)]
    pub ros2_clock_rate: Option<f64>,
    /// With --ros2: the Nomads' sensors (sonars, scans, bumpers) per simulated second
    /// (default 10).
    #[arg(long, value_name = "HZ", requires = "ros2", value_parser = rate)]
    pub ros2_sensor_rate: Option<f64>,
    /// With --ros2: the world waits for the ROS side each iteration: it advances when every
    /// robot that takes `cmd_vel` has sent one, or on a message on `/simrob/step`
    /// (`std_msgs/Empty`), so a ROS controller's run is reproducible.
    #[arg(long, requires = "ros2")]
    pub ros2_lockstep: bool,
    /// With --ros2: how many other ROS 2 processes on the domain simrob keeps track of; past
    /// it ROS 2 stops with a line on standard error and the world goes on without it, so that
    /// a flood of announcements (real or fake) cannot make simrob's memory grow without
    /// bound (default 1000).
    #[arg(long, value_name = "N", requires = "ros2", value_parser = count(1u32, 1_000_000))]
    pub ros2_max_participants: Option<u32>,
    /// With --ros2: the largest sample, in bytes, a ROS 2 peer may send simrob (on Linux, a
    /// datagram announcing a larger one is dropped before any memory is set aside for it, and
    /// counted in a log line); default 65536.
    #[arg(long, value_name = "BYTES", requires = "ros2", value_parser = count(1024u32, 1 << 30))]
    pub ros2_max_sample: Option<u32>,
}

impl Ros2 {
    /// The rates asked for, the defaults where none is given.
    pub fn rates(&self) -> simrob_ros2::bridge::Rates {
        let d = simrob_ros2::bridge::Rates::default();
        simrob_ros2::bridge::Rates {
            clock: self.ros2_clock_rate.unwrap_or(d.clock),
            odom: self.ros2_odom_rate.unwrap_or(d.odom),
            sensors: self.ros2_sensor_rate.unwrap_or(d.sensors),
        }
    }

    /// The line a serving command prints when its participant is up.
    pub fn banner(d: simrob_ros2::env::Discovery) -> String {
        format!(
            "ROS 2 on domain {}{}",
            d.domain_id,
            match d.range {
                simrob_ros2::env::Range::Localhost => ", discovery on this machine only",
                simrob_ros2::env::Range::Subnet => "",
            }
        )
    }

    /// Refuses `--ros2-sensor-rate` on `simrob COMMAND`, whose world publishes no sensors.
    pub fn refuse_sensor_rate(&self, command: &str) -> Result<()> {
        if self.ros2_sensor_rate.is_some() {
            anyhow::bail!(
                "--ros2-sensor-rate: `simrob {command} --ros2` publishes no sensors (only \
                 `simrob mrs` does): leave it out"
            );
        }
        Ok(())
    }

    /// The `--ros2` flags' help texts made true for each command (they share one group):
    /// what each world publishes and takes, what steps it in lockstep; the flags a command
    /// refuses are not shown.
    pub fn per_command(cli: clap::Command) -> clap::Command {
        const CONFIG: &str =
            " Domain from `ROS_DOMAIN_ID`; `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` (or \
             `ROS_LOCALHOST_ONLY=1`) keeps discovery on this machine. Topics and types: \
             docs/ros2.md";
        let ros2 = |what: &str| format!("{what}{CONFIG}");
        let hide = |a: clap::Arg| a.hide(true);
        let refuse_sensors = |c: clap::Command| c.mut_arg("ros2_sensor_rate", hide);
        cli.mut_subcommand("serve", |c| {
            refuse_sensors(c.mut_arg("ros2", |a| {
                a.help(ros2(
                    "Publish the world on ROS 2 (DDS/RTPS, no ROS installation needed): \
                     `/clock`, `/tf`, each robot's `odom`; its wheeled robots take `cmd_vel` \
                     and `wheel_commands`.",
                ))
            }))
        })
        .mut_subcommand("mrs", |c| {
            c.mut_arg("ros2", |a| {
                a.help(ros2(
                    "Publish the world on ROS 2 (DDS/RTPS, no ROS installation needed): \
                     `/clock`, `/tf`, each Nomad's `odom`, sonars, `scan` and `bumpers`; each \
                     takes `cmd_vel`.",
                ))
            })
        })
        .mut_subcommand("swarm", |c| {
            c.mut_subcommand("run", |c| {
                refuse_sensors(
                    c.mut_arg("ros2", |a| {
                        a.help(ros2(
                            "Publish the world on ROS 2 (DDS/RTPS, no ROS installation \
                             needed): `/clock`, `/tf`, each robot's `odom`; each takes a goal \
                             on `goal_pose`.",
                        ))
                    })
                    .mut_arg("ros2_lockstep", |a| {
                        a.help(
                            "With --ros2: each frame waits for a message on `/simrob/step` \
                             (`std_msgs/Empty`), one frame per message, so a ROS \
                             controller's run is reproducible",
                        )
                    }),
                )
            })
        })
        .mut_subcommand("soccer", |c| {
            c.mut_subcommand("match", |c| {
                refuse_sensors(
                    c.mut_arg("ros2", |a| {
                        a.help(ros2(
                            "Publish the match on ROS 2 (DDS/RTPS, no ROS installation \
                             needed): `/clock`, `/tf`, each player's `odom`, the ball, the \
                             score and the events; nothing comes in.",
                        ))
                    })
                    .mut_arg("ros2_lockstep", hide),
                )
            })
        })
    }

    /// The domain and discovery range from ROS 2's environment variables.
    pub fn discovery(&self) -> Result<simrob_ros2::env::Discovery> {
        let mut d = simrob_ros2::env::Discovery::from_env()?;
        if let Some(n) = self.ros2_max_participants {
            d.max_participants = n as usize;
        }
        if let Some(n) = self.ros2_max_sample {
            d.max_sample = n;
        }
        Ok(d)
    }
}

/// A rate in Hz: a finite number ≥ 0.
fn rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() && f >= 0.0 => Ok(f),
        _ => Err(format!("{s:?}: expected a rate in Hz, 0 or more")),
    }
}

/// How a time is written on the command line, as help texts and errors say it.
pub const TIME_FORMS: &str = "(or 50ms, 2s, 1min)";

/// A time on the command line, in seconds: a plain number of seconds, or a number with a unit
/// `ms`, `s` or `min` (`2`, `2s`, `50ms`, `1.5min`); finite, 0 or more. Every flag whose
/// value is a time reads it so (then checks its own range, if it has one).
pub fn seconds(s: &str) -> Result<f64, String> {
    let bad = || format!("expected a time: seconds, 0 or more {TIME_FORMS}, got '{s}'");
    let t = s.trim();
    let (number, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("min") {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    let number = number.trim_end();
    // A sign, `inf` and `NaN` are not times.
    if !number.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return Err(bad());
    }
    let v = number.parse::<f64>().map_err(|_| bad())? * scale;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(bad())
    }
}

/// A time ([`seconds`]) that `accept` takes; any other is a command-line mistake (exit
/// status 2) whose message says what is expected (`range`, e.g. "a time from 1 to 60").
fn seconds_where(
    accept: impl Fn(f64) -> bool + Clone + Send + Sync + 'static,
    range: String,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| match seconds(s) {
        Ok(v) if accept(v) => Ok(v),
        Err(e) if !s.trim().parse::<f64>().is_ok_and(f64::is_finite) => Err(e),
        _ => Err(format!("expected {range} seconds {TIME_FORMS}, got '{s}'")),
    }
}

/// A time ([`seconds`]) from `min` to `max` seconds: a value out of the range is a
/// command-line mistake (exit status 2) whose message names the range.
pub fn seconds_from(
    min: f64,
    max: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    let range = format!("a time from {} to {}", shown(min), shown(max));
    seconds_where(move |v| (min..=max).contains(&v), range)
}

/// `parser`, its refusal followed by ` (NOTE)`: the configuration key a flag stands for
/// (`--clock-period`: "(clock_period)").
pub fn noting<T>(
    parser: impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static,
    note: &'static str,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |s| parser(s).map_err(|e| format!("{e} ({note})"))
}

/// A time ([`seconds`]): 0 (never) or from `min` to `max` seconds (as [`seconds_from`]).
pub fn seconds_or_never_from(
    min: f64,
    max: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    let range = format!("0 (never) or a time from {} to {}", shown(min), shown(max));
    seconds_where(move |v| v == 0.0 || (min..=max).contains(&v), range)
}

/// A time ([`seconds`]) above 0 and at most `max` seconds (as [`seconds_from`]).
pub fn seconds_above_0(
    max: f64,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    let range = format!("a time above 0 and at most {}", shown(max));
    seconds_where(move |v| v > 0.0 && v <= max, range)
}

/// A number (finite) from `min` to `max` (`unit` after the range: " rad/s", "" for none): a
/// value out of it is a command-line mistake (exit status 2) whose message names the range.
pub fn number_from(
    min: f64,
    max: f64,
    unit: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| match number(s) {
        Ok(v) if (min..=max).contains(&v) => Ok(v),
        Err(e) => Err(e),
        Ok(_) => Err(format!(
            "expected a number from {} to {}{unit}, got '{s}'",
            shown(min),
            shown(max)
        )),
    }
}

/// A number (finite) greater than 0, `what` saying what it is ("a number of rad/s").
pub fn number_above_0(
    what: &'static str,
) -> impl Fn(&str) -> Result<f64, String> + Clone + Send + Sync + 'static {
    move |s| match number(s) {
        Ok(v) if v > 0.0 => Ok(v),
        Err(e) => Err(e),
        Ok(_) => Err(format!("expected {what} greater than 0, got '{s}'")),
    }
}

/// [`seconds`] as a [`std::time::Duration`].
pub fn duration(s: &str) -> Result<std::time::Duration, String> {
    let v = seconds(s)?;
    std::time::Duration::try_from_secs_f64(v)
        .map_err(|_| format!("'{s}' is too long a time {TIME_FORMS}"))
}

/// `--duration S` of a simulation: simulated seconds ([`seconds`]), 0 or more. Anything
/// else does not parse (exit status 2), whichever command it is given to.
pub fn simulated_seconds(s: &str) -> Result<f64, String> {
    seconds(s).map_err(|_| format!("expected simulated seconds, 0 or more {TIME_FORMS}, got '{s}'"))
}

/// [`simulated_seconds`] above 0 (a measurement that needs some time).
pub fn positive_simulated_seconds(s: &str) -> Result<f64, String> {
    match simulated_seconds(s) {
        Ok(f) if f > 0.0 => Ok(f),
        _ => Err(format!(
            "expected simulated seconds above 0 {TIME_FORMS}, got '{s}'"
        )),
    }
}

/// A whole number's type on the command line ([`count`]).
pub trait Whole:
    std::str::FromStr + PartialOrd + Copy + std::fmt::Display + Send + Sync + 'static
{
    /// The type's least value.
    const LEAST: Self;
    /// The type's greatest value.
    const GREATEST: Self;
    /// Whether the greatest value is too long to be worth saying ("0 or more" instead).
    const WIDE: bool;
}

macro_rules! whole {
    ($($t:ty => $wide:expr),*) => {
        $(impl Whole for $t {
            const LEAST: Self = <$t>::MIN;
            const GREATEST: Self = <$t>::MAX;
            const WIDE: bool = $wide;
        })*
    };
}
whole!(u8 => false, u16 => false, u32 => true, u64 => true, usize => true,
       i8 => false, i16 => false, i32 => true, i64 => true);

/// What [`count`] accepts, in words: "a whole number from 1 to 64", "a whole number, 0 or
/// more".
pub fn whole_words<T: Whole>(min: T, max: T) -> String {
    if max == T::GREATEST && T::WIDE {
        if min == T::LEAST && T::LEAST.to_string().starts_with('-') {
            "a whole number".into()
        } else {
            format!("a whole number, {min} or more")
        }
    } else {
        format!("a whole number from {min} to {max}")
    }
}

/// The value parser of a whole number from `min` to `max` (a count, an id, a port): its error
/// says what it takes ("expected a whole number from 1 to 64, got 'x'"), not Rust's
/// "invalid digit found in string". Every number flag without a parser of its own gets it
/// (with its type's range) in [`crate::command`].
pub fn count<T: Whole>(
    min: T,
    max: T,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |s| match s.trim().parse::<T>() {
        Ok(n) if min <= n && n <= max => Ok(n),
        _ => Err(format!("expected {}, got '{s}'", whole_words(min, max))),
    }
}

/// A number on the command line (a finite one: not `inf`, not `NaN`): the value parser of
/// every number flag without a parser of its own ([`crate::command`]), whose error says
/// "expected a number" instead of Rust's "invalid float literal".
pub fn number(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(format!("expected a number, got '{s}'")),
    }
}

/// `--threads N` of a run: 0 (`SIMROB_THREADS` if set, else the machine's cores) to
/// [`THREADS_ENV_MAX`]. Anything else does not parse (exit status 2).
pub fn threads(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(n) if n <= THREADS_ENV_MAX => Ok(n),
        _ => Err(format!(
            "a number of threads, 0 to {THREADS_ENV_MAX} (0 = ${THREADS_ENV} if set, else the machine's cores)"
        )),
    }
}

/// Reads `--physics-threads N`: 1 to [`simrob_world::MAX_PHYSICS_THREADS`] (a value out of
/// range is a command-line mistake like any other, refused before anything starts).
pub fn physics_threads(s: &str) -> Result<usize, String> {
    let max = simrob_world::MAX_PHYSICS_THREADS;
    match s.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(format!("a number of physics threads, 1 to {max}")),
    }
}

/// Reads the old `--http-port N`, saying on standard error what to write instead.
fn old_http_port(s: &str) -> Result<u16, String> {
    let n: u16 = s
        .parse()
        .map_err(|_| format!("{s:?}: expected a port (0 = any free port)"))?;
    eprintln!("--http-port {n} is an old spelling: use --gui={n}");
    Ok(n)
}

/// Reads the old `--real-time-factor F`, saying on standard error what to write instead.
fn old_real_time_factor(s: &str) -> Result<f64, String> {
    let f = pace(s)?;
    eprintln!("--real-time-factor {s} is an old spelling: use --speed {s}");
    Ok(f)
}

/// `--speed F` on every command: 0 (as fast as possible) or a pace of at least
/// [`MIN_REAL_TIME_FACTOR`](simrob_viewer::command::MIN_REAL_TIME_FACTOR) simulated seconds
/// per wall second (a slower one put the next frame past any clock). Anything else does not
/// parse: the same words and exit status 2 whichever command it is given to.
pub fn pace(s: &str) -> Result<f64, String> {
    let least = simrob_viewer::command::MIN_REAL_TIME_FACTOR;
    match s.trim().parse::<f64>() {
        Ok(f) if f == 0.0 || (f.is_finite() && f >= least) => Ok(f),
        _ => Err(format!(
            "simulated seconds per wall second: 0 (as fast as possible) or a number of at least {least}"
        )),
    }
}

/// The value parser of an old spelling kept hidden: it refuses every value with a message
/// naming the new spelling (exit status 2), e.g. `--every 2` on `demo`: "write
/// --every-seconds 2". `why` says what the old spelling means elsewhere, if anything.
pub fn renamed(
    old: &'static str,
    new: &'static str,
    why: &'static str,
) -> impl Fn(&str) -> Result<String, String> + Clone + Send + Sync + 'static {
    move |v| {
        let v = if v.is_empty() || v.contains(char::is_whitespace) {
            format!("{v:?}")
        } else {
            v.to_string()
        };
        let why = if why.is_empty() {
            String::new()
        } else {
            format!(" ({why})")
        };
        Err(format!(
            "--{old} is an old spelling here: write --{new} {v}{why}"
        ))
    }
}

/// `--gui 8081`, `--gui 0.0.0.0:8081`: a viewer's address after a space, which clap would
/// take for the next argument (a scenario, or "unexpected argument '8081'"). The message
/// that refuses it, saying to write `--gui=ADDR`; `None` when the command line has none.
pub fn gui_with_a_space(args: &[String]) -> Option<String> {
    let args = args.split(|a| a == "--").next().unwrap_or_default();
    args.windows(2).find_map(|w| {
        let looks_like_an_address =
            w[1].trim().parse::<u16>().is_ok() || w[1].trim().parse::<SocketAddr>().is_ok();
        (w[0] == "--gui" && looks_like_an_address).then(|| {
            format!(
                "error: --gui {0}: write --gui={0} (the viewer's address takes '=')",
                w[1].trim()
            )
        })
    })
}

/// The environment variable that gives a run its share of the machine's cores when its
/// command line does not say how many threads to use (`simrob batch` sets it for each run
/// to its cores over its jobs, so that runs side by side do not take more threads than
/// there are cores).
pub const THREADS_ENV: &str = "SIMROB_THREADS";

/// The most threads `SIMROB_THREADS` may give.
pub const THREADS_ENV_MAX: usize = 64;

/// The threads a run uses when its command line leaves the choice to it: `SIMROB_THREADS`
/// when set (1 to [`THREADS_ENV_MAX`]; anything else is an error), else `None` (the
/// machine's cores).
pub fn threads_from_env() -> Result<Option<usize>> {
    match std::env::var(THREADS_ENV) {
        Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(v)) => {
            bail!("{THREADS_ENV} is a number of threads (1 to {THREADS_ENV_MAX}), not {v:?}")
        }
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if (1..=THREADS_ENV_MAX).contains(&n) => Ok(Some(n)),
            _ => bail!("{THREADS_ENV} is a number of threads (1 to {THREADS_ENV_MAX}), not {v:?}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each of the viewer's limits is a flag of every command that serves a viewer, with its
    /// help from its key; the flag's value goes in its key's place, over the configuration's.
    #[test]
    fn each_viewer_key_is_a_flag_and_a_flag_wins_over_the_key() {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            limits: ViewerLimits,
        }
        let cmd = <Cli as clap::CommandFactory>::command();
        for k in simrob_session::VIEWER_KEYS {
            let arg = cmd
                .get_arguments()
                .find(|a| a.get_long().map(|l| format!("--{l}")).as_deref() == Some(k.flag))
                .unwrap_or_else(|| panic!("no {}", k.flag));
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            assert!(
                help.contains(k.key) && help.contains(&k.default_text()),
                "{help}"
            );
            // Every value a flag is given replaces the configuration's, within the range.
            let mut base = simrob_viewer::Guard::default();
            assert!(base
                .set(k.key, &format!("{}", k.max))
                .is_some_and(|r| r.is_ok()));
            let min = if k.min.fract() == 0.0 {
                format!("{}", k.min)
            } else {
                format!("{}s", k.min)
            };
            let cli = <Cli as clap::Parser>::try_parse_from(["t", k.flag, &min])
                .unwrap_or_else(|e| panic!("{}: {e}", k.flag));
            let g = cli.limits.guard_over(base).expect("within the range");
            assert_eq!(k.get(&g), k.min, "{}", k.flag);
            let none = <Cli as clap::Parser>::try_parse_from(["t"]).expect("no flag");
            assert_eq!(none.limits.guard_over(base).expect("the key's"), base);
        }
    }

    #[test]
    fn numbers_in_errors_are_short() {
        assert_eq!(shown(1e300), "1e300");
        assert_eq!(shown(1e-300), "1e-300");
        assert_eq!(shown(0.5), "0.5");
        assert_eq!(shown(0.0), "0");
        assert_eq!(shown(f64::NAN), "NaN");
    }

    #[test]
    fn one_way_to_write_a_time() {
        for (text, v) in [
            ("2", 2.0),
            ("2s", 2.0),
            ("50ms", 0.05),
            ("1.5min", 90.0),
            (" 0.5 s ", 0.5),
            ("0", 0.0),
            (".25", 0.25),
            ("1e3ms", 1.0),
        ] {
            assert_eq!(seconds(text), Ok(v), "{text}");
        }
        for bad in [
            "-1", "-0.5s", "nan", "NaN", "inf", "1e400", "x", "", "ms", "2h", "+1",
        ] {
            let e = seconds(bad).unwrap_err();
            assert!(e.contains("(or 50ms, 2s, 1min)"), "{bad}: {e}");
        }
        assert_eq!(duration("50ms"), Ok(std::time::Duration::from_millis(50)));
        assert!(duration("1e300").is_err());
    }

    #[test]
    fn seconds_and_threads() {
        assert_eq!(simulated_seconds("0"), Ok(0.0));
        assert_eq!(simulated_seconds(" 2.5 "), Ok(2.5));
        for bad in ["-1", "nan", "inf", "-inf", "x", ""] {
            assert!(simulated_seconds(bad).is_err(), "{bad}");
        }
        assert!(positive_simulated_seconds("0").is_err());
        assert_eq!(positive_simulated_seconds("1e-3"), Ok(1e-3));
        assert_eq!(threads("0"), Ok(0));
        assert_eq!(threads("64"), Ok(64));
        for bad in ["65", "-1", "x"] {
            assert!(threads(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn addresses() {
        assert_eq!(GuiAddr::parse("").unwrap(), GuiAddr::default());
        assert_eq!(GuiAddr::parse("9000").unwrap().port, Some(9000));
        let a = GuiAddr::parse("0.0.0.0:81").unwrap();
        assert_eq!(a.socket(LOCALHOST), "0.0.0.0:81".parse().unwrap());
        let a = GuiAddr::parse("10.0.0.1").unwrap();
        assert_eq!(a.socket(LOCALHOST), "10.0.0.1:8080".parse().unwrap());
        assert!(GuiAddr::parse("nine").is_err());
    }

    #[test]
    fn an_address_after_a_space() {
        let args = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        for (line, says) in [
            (
                "simrob mrs --gui 9000",
                "write --gui=9000 (the viewer's address takes '=')",
            ),
            (
                "simrob serve --gui 0.0.0.0:81 x.xml",
                "write --gui=0.0.0.0:81",
            ),
        ] {
            let e = gui_with_a_space(&args(line)).unwrap_or_default();
            assert!(e.contains(says), "{line}: {e}");
        }
        for line in [
            "simrob mrs --gui --speed 2",
            "simrob serve --gui scene.xml",
            "simrob mrs --gui=9000",
            "simrob batch s.toml -- --gui 9000",
        ] {
            assert_eq!(gui_with_a_space(&args(line)), None, "{line}");
        }
    }
}
