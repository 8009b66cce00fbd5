//! `simrob soccer player`: one FutRob robot as a networked agent.

use std::collections::BTreeMap;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use simrob_futrob::msg::Received;
use simrob_futrob::rules::RuleSet;
use simrob_futrob::{BodyStatus, Brain, IniConfig, Message, Role, Sighting, VisionStub};

use super::body::DryBody;
use super::net;
use super::sim::{silence_words, Patience, SimLink};
use crate::flags::ConfigBytes;

#[derive(Args)]
pub struct PlayerArgs {
    /// The robot's ini.config.
    #[arg(long, value_name = "FILE")]
    robot_config: PathBuf,
    /// Old spelling of `--robot-config` (`--config` is a server's configuration).
    #[arg(long = "config", value_name = "FILE", hide = true,
          value_parser = crate::flags::renamed("config", "robot-config", "--config is a server's configuration"))]
    old_config: Option<String>,
    /// The simulator (`simrob serve`), IP:PORT: play its humanoid `entityId` (overrides the
    /// config's `server` and its vision stub).
    #[arg(long, value_name = "ADDR", value_parser = server_addr)]
    server: Option<SocketAddr>,
    /// Give up when the simulator has sent nothing for this many wall-clock seconds, while
    /// registering or playing (or 50ms, 2s, 1min; default 10): the robot stops with an error
    /// (exit status 1). 0 waits for ever (a simulator paused in step mode sends nothing).
    #[arg(long, value_name = "S", value_parser = wall_seconds)]
    server_timeout: Option<f64>,
    /// Stop after this many wall-clock seconds from the start, registering with the simulator
    /// included (or 50ms, 2s, 1min; default: run until Ctrl-C).
    #[arg(long, value_name = "S", value_parser = wall_seconds)]
    wall_duration: Option<f64>,
    /// Old spelling of `--wall-duration` (`--duration` is simulated seconds).
    #[arg(long = "duration", value_name = "S", hide = true,
          value_parser = crate::flags::renamed("duration", "wall-duration", "--duration is simulated seconds"))]
    old_duration: Option<String>,
    /// The team messages' UDP port, 1 to 65535; overrides the config's `commPort`.
    #[arg(long, value_name = "PORT", value_parser = crate::flags::count(1u16, u16::MAX))]
    team_port: Option<u16>,
    /// Old spelling of `--team-port`.
    #[arg(long = "comm-port", value_name = "PORT", hide = true,
          value_parser = crate::flags::renamed("comm-port", "team-port", ""))]
    old_comm_port: Option<String>,
    /// Print every team message sent and received.
    #[arg(long)]
    verbose: bool,
    /// The largest file read (`--max-config-bytes`).
    #[command(flatten)]
    limit: ConfigBytes,
    /// On the simulator, see through an exact camera instead of FutRob's (4 Hz, its
    /// calibration's distance errors, drop-outs). Its distances are true, so the keeper
    /// report's range correction (the config's `rangeCalibration`) is off. Refused for a robot
    /// that sees through its vision stub (no --server).
    #[arg(long)]
    ideal_camera: bool,
    /// Stop, as on Ctrl-C, when standard input closes (end of file): a program that starts
    /// the robot with a pipe as its standard input ends it by closing the pipe, or by ending
    /// itself, however it ends (`kill -9` included). Exit status 129, as after SIGHUP.
    /// `soccer team` starts every robot so.
    #[arg(long)]
    stop_when_stdin_closes: bool,
}

/// `--server-timeout`'s default, seconds.
pub const DEFAULT_SERVER_TIMEOUT_S: f64 = 10.0;

/// Reads a file named by a config, relative to the config's directory.
pub fn beside(config: &Path, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        config.parent().unwrap_or(Path::new(".")).join(p)
    }
}

/// `--server`: the simulator's IP:PORT (a bad one is a command line that does not parse,
/// status 2, before any robot starts).
pub(super) fn server_addr(text: &str) -> Result<SocketAddr, String> {
    text.trim()
        .parse()
        .map_err(|_| format!("expected the simulator's IP:PORT (127.0.0.1:5005), got '{text}'"))
}

/// A robot's configuration and rules, and the warnings about them (names written in another
/// letter case, no rules at all) to print before it starts.
pub fn load(config: &Path, limit: &ConfigBytes) -> Result<(IniConfig, RuleSet, Vec<String>)> {
    let text = limit.read(config, "the robot configuration")?;
    let cfg = IniConfig::parse(&text, &config.display().to_string())?;
    let rules_path = beside(config, &cfg.rules);
    let rules_text = limit.read(&rules_path, "the rules file")?;
    let rules = RuleSet::parse(&rules_text, &rules_path.display().to_string())?;
    let mut warnings: Vec<String> = rules
        .case_warnings()
        .iter()
        .map(|w| {
            format!(
                "{}:{}: {:?} taken as {}",
                rules_path.display(),
                w.line,
                w.written,
                w.canonical
            )
        })
        .collect();
    if rules.rules().is_empty() {
        warnings.push(format!(
            "{}: no rules (an empty <RuleSet>): robot {} will never act",
            rules_path.display(),
            cfg.id
        ));
    }
    Ok((cfg, rules, warnings))
}

/// What a robot sees through.
enum Eyes {
    /// Its vision stub file.
    Stub(VisionStub),
    /// Humanoid `entity` of the simulator at `addr`.
    Sim { addr: SocketAddr, entity: u32 },
}

/// A robot ready to start: every file it needs read and every value checked, nothing written
/// or sent yet.
pub struct Robot {
    pub cfg: IniConfig,
    rules: RuleSet,
    /// Warnings about its files, to print before it starts.
    pub warnings: Vec<String>,
    eyes: Eyes,
    dest: SocketAddr,
    /// Its log file (`logEnabled=1`), checked writable but not yet touched.
    pub log: Option<PathBuf>,
}

/// Reads and checks everything robot `config` needs (its configuration, rules, vision stub,
/// log file's directory), with the command line's `server`, `team_port` and `ideal_camera`,
/// and changes nothing: `soccer team` checks every robot so before starting any, and a robot
/// starts its log file only once all of it passed.
pub fn prepare(
    config: &Path,
    limit: &ConfigBytes,
    server: Option<SocketAddr>,
    team_port: Option<u16>,
    ideal_camera: bool,
) -> Result<Robot> {
    let (mut cfg, rules, warnings) = load(config, limit)?;
    let id = cfg.id;
    if let Some(p) = team_port {
        cfg.comm_port = p;
    }
    if let Some(s) = server {
        cfg.server = Some(s.to_string());
    }
    // --server on the command line means the simulator, even if the config enables the stub.
    let eyes = if cfg.vision_stub_enabled && server.is_none() {
        if ideal_camera {
            bail!(
                "robot {id} sees through its vision stub (visionStubEnabled=1 in {}): \
                 --ideal-camera is the simulator's camera; give --server too, or leave it out",
                config.display()
            );
        }
        let p = beside(config, &cfg.vision_stub_src);
        let text = limit.read(&p, "the vision stub")?;
        Eyes::Stub(VisionStub::parse(&text, &p.display().to_string())?)
    } else {
        let Some(server) = &cfg.server else {
            bail!("robot {id}: no simulator (--server or server=) and no vision stub (visionStubEnabled=1): nothing to see");
        };
        let addr: SocketAddr = server
            .parse()
            .with_context(|| format!("server must be IP:PORT, not {server:?}"))?;
        Eyes::Sim {
            addr,
            entity: cfg.entity_id.unwrap_or(id as u32),
        }
    };
    let dest = net::destination(&cfg.comm_address, cfg.comm_port)?;
    let log = if cfg.log_enabled {
        let p = beside(config, &cfg.logfile);
        check_log(&p, config)?;
        Some(p)
    } else {
        None
    };
    Ok(Robot {
        cfg,
        rules,
        warnings,
        eyes,
        dest,
        log,
    })
}

/// Refuses a log file robot `config` could not write, without touching it: its directory must
/// be there, and a file already there must be one it may write (opened without emptying it).
fn check_log(path: &Path, config: &Path) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let cannot = || {
        format!(
            "cannot write the log file {} (logfile= in {})",
            path.display(),
            config.display()
        )
    };
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => bail!("{}: {} is not a directory", cannot(), dir.display()),
        Err(e) => bail!(
            "{}: its directory {}: {e}; create it or change logfile",
            cannot(),
            dir.display()
        ),
    }
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => bail!("{}: it is a directory", cannot()),
        Ok(m) if m.is_file() => {
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .with_context(cannot)?;
        }
        // A device (/dev/null) is written as it is.
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if std::fs::metadata(dir).is_ok_and(|m| m.permissions().readonly()) {
                bail!("{}: its directory {} is read-only", cannot(), dir.display());
            }
        }
        Err(e) => return Err(e).with_context(cannot),
    }
    Ok(())
}

/// The brain `cfg` describes; on an exact camera (`--ideal-camera`) without its range
/// correction, as there is no range bias to correct.
pub fn brain(cfg: &IniConfig, rules: RuleSet, exact_camera: bool) -> Brain {
    if exact_camera {
        Brain::new(cfg.id, cfg.role, rules, cfg.params.on_exact_camera())
    } else {
        Brain::from_config(cfg, rules)
    }
}

/// Where a player's senses come from and where its actions go.
enum Senses {
    /// The vision stub file and a body without physics, on the wall clock.
    Stub {
        stub: VisionStub,
        body: DryBody,
        t0: Instant,
        cycle: u32,
        next_frame: u64,
        period: u64,
    },
    /// A humanoid of `simrob serve`, on simulated time.
    Sim { link: SimLink, now: u64 },
}

impl Senses {
    /// Waits for the next moment worth a brain step; returns its time and any camera frame.
    fn next(&mut self, wait: Duration) -> Result<Option<(u64, Option<Vec<Sighting>>)>> {
        match self {
            Senses::Stub {
                stub,
                t0,
                cycle,
                next_frame,
                period,
                ..
            } => {
                let now = t0.elapsed().as_millis() as u64;
                if now >= *next_frame {
                    let frame = stub.scene(*cycle).to_vec();
                    *cycle += 1;
                    *next_frame = now + *period;
                    Ok(Some((now, Some(frame))))
                } else {
                    Ok(Some((now, None)))
                }
            }
            Senses::Sim { link, now } => match link.poll(wait)? {
                Some(u) => {
                    *now = u.now_ms;
                    Ok(Some((u.now_ms, u.frame)))
                }
                None => Ok(None),
            },
        }
    }

    fn status(&mut self, now: u64) -> BodyStatus {
        match self {
            Senses::Stub { body, .. } => body.status(now),
            Senses::Sim { link, .. } => link.status(),
        }
    }

    fn command(&mut self, now: u64, cmds: &[simrob_futrob::Action]) -> Result<()> {
        match self {
            Senses::Stub { body, .. } => {
                body.command(now, cmds);
                Ok(())
            }
            Senses::Sim { link, .. } => link.command(cmds),
        }
    }

    fn now(&self) -> u64 {
        match self {
            Senses::Stub { t0, .. } => t0.elapsed().as_millis() as u64,
            Senses::Sim { now, .. } => *now,
        }
    }
}

pub fn run(args: PlayerArgs) -> Result<()> {
    let robot = prepare(
        &args.robot_config,
        &args.limit,
        args.server,
        args.team_port,
        args.ideal_camera,
    )?;
    for w in &robot.warnings {
        eprintln!("warning: {w}");
    }
    let Robot {
        cfg,
        rules,
        eyes,
        dest,
        log,
        ..
    } = robot;
    let id = cfg.id;
    let stop = crate::shell::ctrl_c_flag()?;
    if args.stop_when_stdin_closes {
        crate::shell::stop_when_stdin_closes()?;
    }
    let wall = Instant::now();
    let end = args
        .wall_duration
        .and_then(|s| Duration::try_from_secs_f64(s).ok());
    let silence = Some(args.server_timeout.unwrap_or(DEFAULT_SERVER_TIMEOUT_S))
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok());
    let mut senses = match eyes {
        Eyes::Stub(stub) => Senses::Stub {
            stub,
            body: DryBody::new(),
            t0: Instant::now(),
            cycle: 1,
            next_frame: 0,
            period: cfg.params.vision_period_ms,
        },
        Eyes::Sim { addr, entity } => {
            let agent_type = if args.ideal_camera {
                "Humanoid_Brain_Ideal"
            } else {
                "Humanoid_Brain"
            };
            let patience = Patience {
                silence,
                until: end.map(|e| (wall + e, args.wall_duration.unwrap_or_default())),
                stop: &stop,
            };
            let Some(link) = SimLink::connect(addr, entity, agent_type, &patience)? else {
                // Ctrl-C while registering.
                return Ok(());
            };
            say!("robot {id}: brain of humanoid {entity} on the simulator at {addr}");
            Senses::Sim { link, now: 0 }
        }
    };
    let sock = net::team_socket(cfg.comm_port)?;
    sock.set_nonblocking(true)?;
    // Only now, every check passed, does the log file start (FutRob's log starts empty).
    let file_log = match &log {
        Some(p) => super::logfmt::writer(&cfg, p)?,
        None => None,
    };
    crate::shell::init_logging_with(crate::shell::log_filter().as_deref(), file_log)?;
    let mut outbox = Outbox::new(&sock, dest);
    let mut brain = brain(&cfg, rules, args.ideal_camera);
    say!(
        "robot {id} ({}) playing; team messages on udp port {} to {}",
        cfg.role.name(),
        cfg.comm_port,
        dest.ip()
    );
    // Any datagram fits: its true size is said when it is not a team message.
    let mut buf = vec![0u8; 65_536];
    let mut drops = DropReport::new(cfg.comm_max_drop_lines_per_second);
    let mut known: BTreeMap<i32, Option<Role>> = BTreeMap::new();
    let stub_mode = matches!(senses, Senses::Stub { .. });
    let mut failure = None;
    brain.start();
    loop {
        if stop.load(Ordering::Relaxed) || end.is_some_and(|e| wall.elapsed() >= e) {
            break;
        }
        if let (Some(limit), Senses::Sim { link, .. }) = (silence, &senses) {
            if link.silent_for() >= limit {
                failure = Some(format!(
                    "robot {id}: the simulator at {} has sent nothing for {}: it stopped, \
                     was paused or cannot reach this robot; --server-timeout 0 waits for ever",
                    link.server(),
                    silence_words(limit)
                ));
                break;
            }
        }
        let news = senses.next(Duration::from_millis(20))?;
        // The team is listened to with or without news from the simulator.
        let heard = news.as_ref().map_or_else(|| senses.now(), |(now, _)| *now);
        drain(
            &sock,
            &mut buf,
            &mut brain,
            heard,
            id,
            args.verbose,
            &mut drops,
            cfg.comm_max_datagrams_per_cycle,
        );
        let Some((now, frame)) = news else {
            continue;
        };
        if let Some(frame) = frame {
            brain.observe(now, &frame);
        }
        let status = senses.status(now);
        let out = brain.step(now, &status);
        if let Some(a) = out.started {
            say!("robot {id}: action {a}");
        }
        senses.command(now, &out.commands)?;
        for m in &out.messages {
            if args.verbose {
                say!("robot {id}: sent {m}");
            }
            if let Err(e) = outbox.send(m) {
                say!("robot {id}: cannot send ({e}); playing on");
            }
        }
        report_team(id, &brain, &mut known);
        if stub_mode {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    if let Senses::Sim { link, .. } = &senses {
        say!(
            "robot {id}: the simulator refused {} requests",
            link.refused()
        );
    }
    brain.leave();
    let now = senses.now();
    let status = senses.status(now);
    let out = brain.step(now, &status);
    for m in &out.messages {
        let _ = outbox.send(m);
    }
    let s = brain.world().comm.stats();
    say!(
        "robot {id} stopped: {} cycles, messages received {} accepted {} dropped {} (bad length {}, unknown param {}, source not a robot id {}, new senders while the teammate table was full {}), {}",
        brain.cycles(),
        s.received,
        s.accepted,
        s.bad_length + s.unknown_param + s.bad_source + s.table_full,
        s.bad_length,
        s.unknown_param,
        s.bad_source,
        s.table_full,
        outbox.summary()
    );
    match failure {
        Some(f) => bail!(f),
        None => Ok(()),
    }
}

/// The team messages a robot sends, counted as the socket took them or refused them.
struct Outbox<'a> {
    sock: &'a UdpSocket,
    dest: SocketAddr,
    sent: u64,
    failed: u64,
}

impl<'a> Outbox<'a> {
    fn new(sock: &'a UdpSocket, dest: SocketAddr) -> Outbox<'a> {
        Outbox {
            sock,
            dest,
            sent: 0,
            failed: 0,
        }
    }

    /// Sends `m` to the team's address.
    fn send(&mut self, m: &Message) -> std::io::Result<()> {
        match self.sock.send_to(&m.encode(), self.dest) {
            Ok(n) => {
                self.sent += 1;
                super::logfmt::msg_sent(n, self.dest, m);
                Ok(())
            }
            Err(e) => {
                self.failed += 1;
                Err(e)
            }
        }
    }

    /// "sent N", and how many could not be sent if any.
    fn summary(&self) -> String {
        match self.failed {
            0 => format!("sent {}", self.sent),
            n => format!("sent {} ({n} could not be sent)", self.sent),
        }
    }
}

/// Says dropped datagrams, at most `per_second` lines a (simulated) second (the
/// `ini.config` key `commMaxDropLinesPerSecond`); past them a drop is only counted, and the
/// next line says how many were not said: a flood of bad datagrams printed a line each, 10 MB
/// in 16 s.
struct DropReport {
    per_second: u32,
    window_start: u64,
    said: u32,
    unsaid: u64,
}

impl DropReport {
    fn new(per_second: u32) -> DropReport {
        DropReport {
            per_second,
            window_start: 0,
            said: 0,
            unsaid: 0,
        }
    }

    /// A datagram dropped at `now` (ms) for `why`: the line to print, if one is due.
    fn dropped(&mut self, id: i32, now: u64, why: &dyn std::fmt::Display) -> Option<String> {
        if now.saturating_sub(self.window_start) >= 1000 {
            self.window_start = now;
            self.said = 0;
        }
        if self.said >= self.per_second {
            self.unsaid += 1;
            return None;
        }
        let more = match self.unsaid {
            0 => String::new(),
            n => format!(" ({n} more dropped, not said)"),
        };
        self.said += 1;
        self.unsaid = 0;
        Some(format!("robot {id}: dropped a datagram: {why}{more}"))
    }
}

/// Hands the waiting team datagrams to the brain, at most `max` (the `ini.config` key
/// `commMaxDatagramsPerCycle`); more wait for the next cycle (and past the socket's buffer
/// the kernel drops them), so a flood never stops the robot deciding.
#[allow(clippy::too_many_arguments)]
fn drain(
    sock: &std::net::UdpSocket,
    buf: &mut [u8],
    brain: &mut Brain,
    now: u64,
    id: i32,
    verbose: bool,
    drops: &mut DropReport,
    max: usize,
) {
    for _ in 0..max {
        let Ok((n, _)) = sock.recv_from(buf) else {
            return;
        };
        let line = match brain.handle_datagram(now, &buf[..n]) {
            Received::Accepted(m) if verbose => Some(format!("robot {id}: received {m}")),
            Received::Dropped(e) => drops.dropped(id, now, &e),
            Received::BadSource(m) => drops.dropped(
                id,
                now,
                &format_args!("{m}: the source is not a robot id (1-254)"),
            ),
            Received::TableFull(m) => drops.dropped(
                id,
                now,
                &format_args!(
                    "{m}: a new sender while the teammate table is full (commMaxTeammates)"
                ),
            ),
            _ => None,
        };
        if let Some(line) = line {
            say!("{line}");
        }
    }
}

/// Prints team changes: a teammate joined, its role became known, it left or expired.
fn report_team(id: i32, brain: &Brain, known: &mut BTreeMap<i32, Option<Role>>) {
    let now: BTreeMap<i32, Option<Role>> = brain
        .world()
        .comm
        .members()
        .map(|t| (t.id, t.role))
        .collect();
    for (tid, role) in &now {
        match known.get(tid) {
            None => say!(
                "robot {id}: teammate {tid} joined{}",
                role.map(|r| format!(" as {}", r.name()))
                    .unwrap_or_default()
            ),
            Some(old) if old != role => {
                if let Some(r) = role {
                    say!("robot {id}: teammate {tid} is {}", r.name());
                }
            }
            _ => {}
        }
    }
    for tid in known.keys() {
        if !now.contains_key(tid) {
            say!("robot {id}: teammate {tid} gone (left or silent longer than COMM_TTL)");
        }
    }
    *known = now;
}

/// `--wall-duration` of a robot or a team, and `--server-timeout`: wall-clock seconds, 0 or more (checked before anything
/// starts; a bad one is a command line that does not parse, status 2).
pub(super) fn wall_seconds(text: &str) -> Result<f64, String> {
    crate::flags::duration(text)
        .map(|d| d.as_secs_f64())
        .map_err(|_| {
            format!(
                "expected wall-clock seconds, 0 or more {}, got '{text}'",
                crate::flags::TIME_FORMS
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_futrob::{ObjectKind, Vec2};
    use simrob_soccer::CameraProfile;

    /// What FutRob's camera (`paper`) reads on average of an object at (x, y) cm: the true
    /// bearing, the true range plus its calibration's mean error there.
    fn mean_reading(o: ObjectKind, x: f64, y: f64) -> Sighting {
        let p = Vec2::new(x, y);
        let (bias, _) = CameraProfile::paper().distance_error_at(p.norm());
        Sighting::new(o, p.bearing_deg(), p.norm() + bias)
    }

    /// The keeper offset robot 2 reports from an `ini.config` with `extra` lines, loaded as
    /// `simrob soccer player` loads it, seeing its goal 180 cm ahead and its keeper 30 cm in
    /// front of it and 20 cm to the right through FutRob's camera (150 cm read as 168 cm).
    fn reported(name: &str, extra: &str, exact_camera: bool) -> Option<i32> {
        let dir =
            std::env::temp_dir().join(format!("simrob-player-range-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rules = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/soccer/rules/field_player.xml"
        );
        let config = dir.join("ini.config");
        std::fs::write(
            &config,
            format!("[robot_profile]\nid=2\nrole=2\nrules={rules}\n{extra}"),
        )
        .unwrap();
        let (cfg, rules, _) = load(&config, &ConfigBytes::default()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let mut b = brain(&cfg, rules, exact_camera);
        let frame = [
            mean_reading(ObjectKind::MyGoal, 0.0, 180.0),
            mean_reading(ObjectKind::Partner, 20.0, 150.0),
        ];
        for i in 0..8 {
            b.observe(i * 250, &frame);
        }
        b.world().keeper_report().and_then(|r| r.0)
    }

    #[test]
    fn a_player_corrects_its_keeper_report_by_the_configured_range_calibration() {
        // The default and `futrob` correct the camera's 12 % at 150 cm: 20 cm off is sent
        // as 20 cm (x is + to the keeper's right, our left).
        assert_eq!(reported("default", "", false), Some(-20));
        assert_eq!(
            reported("futrob", "[brain]\nrangeCalibration=futrob\n", false),
            Some(-20)
        );
        // Without it, the bias scales the offset.
        assert_eq!(
            reported("none", "rangeCalibration=none\n", false),
            Some(-22)
        );
        // On the exact camera there is nothing to correct, whatever the config says.
        assert_eq!(
            reported("exact", "rangeCalibration=futrob\n", true),
            Some(-22)
        );
    }

    #[test]
    fn a_flood_of_bad_datagrams_is_said_ten_lines_a_second_with_how_many_more() {
        // Each bad datagram printed a line: a flood wrote 10 MB in 16 s.
        let mut r = DropReport::new(simrob_futrob::config::DEFAULT_COMM_MAX_DROP_LINES_PER_SECOND);
        let why = "datagram of 1 bytes (a team message is exactly 16)";
        // 10 a millisecond for 3 s.
        let lines: Vec<String> = (0..30_000u64)
            .filter_map(|i| r.dropped(1, i / 10, &why))
            .collect();
        assert_eq!(lines.len(), 30);
        let plain = format!("robot 1: dropped a datagram: {why}");
        let after = format!("{plain} (9990 more dropped, not said)");
        for (i, line) in lines.iter().enumerate() {
            let want = if i > 0 && i % 10 == 0 { &after } else { &plain };
            assert_eq!(line, want, "line {i}");
        }
    }

    #[test]
    fn the_drop_lines_a_second_are_the_configs_comm_max_drop_lines_per_second() {
        let cfg = IniConfig::parse(
            "id=1\nrules=r.xml\ncommMaxDropLinesPerSecond=3\n",
            "ini.config",
        )
        .unwrap();
        let mut r = DropReport::new(cfg.comm_max_drop_lines_per_second);
        // 10 a millisecond for 2 s: three lines a second.
        let lines: Vec<String> = (0..20_000u64)
            .filter_map(|i| r.dropped(1, i / 10, &"bad"))
            .collect();
        assert_eq!(lines.len(), 6, "{lines:?}");
        assert!(
            lines[3].ends_with("(9997 more dropped, not said)"),
            "{lines:?}"
        );
    }

    #[test]
    fn a_cycle_hands_the_brain_at_most_comm_max_datagrams_per_cycle() {
        let rules_path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/soccer/rules/goalkeeper.xml"
        );
        let rules_text = std::fs::read_to_string(rules_path).unwrap();
        let cycle = |text: &str, sent: usize| {
            let cfg = IniConfig::parse(text, "ini.config").unwrap();
            let rules = RuleSet::parse(&rules_text, rules_path).unwrap();
            let mut brain = brain(&cfg, rules, false);
            let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            sock.set_nonblocking(true).unwrap();
            let to = sock.local_addr().unwrap();
            let from = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            for _ in 0..sent {
                from.send_to(&[0u8], to).unwrap();
            }
            // Loopback queues each datagram on the receiving socket as it is sent.
            let mut buf = [0u8; 2048];
            let mut drops = DropReport::new(cfg.comm_max_drop_lines_per_second);
            drain(
                &sock,
                &mut buf,
                &mut brain,
                0,
                cfg.id,
                false,
                &mut drops,
                cfg.comm_max_datagrams_per_cycle,
            );
            brain.world().comm.stats().received
        };
        // Three of five waiting, the rest left for the next cycle.
        assert_eq!(
            cycle("id=1\nrules=r.xml\ncommMaxDatagramsPerCycle=3\n", 5),
            3
        );
        // By default, 1,024: all five.
        let all = cycle("id=1\nrules=r.xml\n", 5);
        assert_eq!(all, 5);
    }

    #[test]
    fn the_summary_counts_as_sent_only_what_the_socket_took() {
        // Every message was counted as sent, those the socket refused too ("sent 11" after
        // ten "cannot send" lines).
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = sock.local_addr().unwrap();
        let m = Message::new(2, 255, simrob_futrob::Param::Start, 2);
        let mut out = Outbox::new(&sock, to);
        out.send(&m).unwrap();
        out.send(&m).unwrap();
        assert_eq!(out.summary(), "sent 2");
        // Port 0 takes nothing.
        let mut out = Outbox::new(&sock, "127.0.0.1:0".parse().unwrap());
        assert!(out.send(&m).is_err());
        assert!(out.send(&m).is_err());
        assert_eq!(out.summary(), "sent 0 (2 could not be sent)");
    }

    #[test]
    fn an_unknown_range_calibration_is_refused_with_the_line() {
        let dir =
            std::env::temp_dir().join(format!("simrob-player-range-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let config = dir.join("ini.config");
        std::fs::write(&config, "id=2\nrules=r.xml\nrangeCalibration=paper\n").unwrap();
        let e = load(&config, &ConfigBytes::default())
            .unwrap_err()
            .to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(
            e.ends_with("ini.config:3: rangeCalibration must be futrob or none, not \"paper\""),
            "{e}"
        );
    }
}
