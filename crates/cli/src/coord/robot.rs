//! `simrob coord robot`: a robot agent program. Its upper layer is simrob-coord's robot
//! abstraction layer (Task Manager, Synchronize Tasks, CNP bidder) talking to a networked
//! Control Center; its lower layer drives one robot — a SumBot on a SimRob server (over
//! simrob-client's UDP `Agent`) or a Nomad on a Mobile Robot Simulator (over its TCP
//! client) — turning basic tasks into wheel commands and reporting the standard status.

use std::f64::consts::PI;
use std::io::Write;
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::mpsc::TryRecvError;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use simrob_client::agent::{Agent, AgentOptions};
use simrob_coord::cnp::Euclidean;
use simrob_coord::model::{BasicKind, FailCode, RobotInfo, TaskClass, TaskId};
use simrob_coord::robot::{Command, RobotAgent, RobotPose};
use simrob_coord::sync::TaskBoard;
use simrob_coord::wire::Msg;
use simrob_math::wrap_angle_euclid;
use simrob_mrs::MrsClient;
use simrob_protocol::{ControlRequest, EntityId, EntityInfoKind, EntityRequest};

use super::net::{connect_cc, write_env, Incoming};

/// Arguments of `simrob coord robot`.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("backend").args(["server", "mrs"]).required(true)))]
pub struct RobotArgs {
    /// The Control Center (`simrob coord serve`).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7030")]
    cc: String,
    /// This robot's id, from 1 to 1073741823 (2^30 - 1); unique among the Control Center's
    /// robots.
    #[arg(long, value_name = "ID")]
    id: u32,
    /// A name for lists and logs (default: the kind and the id).
    #[arg(long)]
    name: Option<String>,
    /// Drive a SumBot on this SimRob server (`simrob serve`), e.g. 127.0.0.1:5005.
    #[arg(long, value_name = "ADDR")]
    server: Option<String>,
    /// Old spelling of `--server`.
    #[arg(long = "simrob", value_name = "ADDR", hide = true,
          value_parser = crate::flags::renamed("simrob", "server", ""))]
    old_simrob: Option<String>,
    /// The SumBot's entity id on the SimRob server.
    #[arg(long, value_name = "ID", default_value_t = 3)]
    entity: u32,
    /// Send Initialize_Simulation to the SimRob server first (a fresh server).
    #[arg(long)]
    initialize: bool,
    /// Drive a Nomad on this Mobile Robot Simulator (`simrob mrs`), e.g. 127.0.0.1:7020.
    #[arg(long, value_name = "ADDR")]
    mrs: Option<String>,
    /// Seconds (or 50ms, 2s, 1min) between status reports.
    #[arg(long, value_name = "S", default_value_t = 0.5, value_parser = crate::flags::seconds)]
    status_period: f64,
    /// Tasks held that may still run (neither final nor BLOCKED) before the robot stops
    /// bidding.
    #[arg(long, value_name = "N", default_value_t = 3)]
    max_queue: usize,
    /// Distance (metres) at which a point counts as reached (default 0.05 for a SumBot,
    /// 0.1 for a Nomad).
    #[arg(long, value_name = "METRES")]
    tolerance: Option<f64>,
    /// Seconds (or 50ms, 2s, 1min) a movement may make no progress — come no closer to its point by the
    /// tolerance — before it FAILS as unreachable, FAILED(3) (a wall, the field's edge, a
    /// robot in the way); 0 = never.
    #[arg(long, default_value_t = 10.0, value_name = "S", value_parser = crate::flags::seconds)]
    stall_time: f64,
    /// Seconds (or 50ms, 2s, 1min) without a word from the Control Center (its Time Server speaks every
    /// --clock-period) after which the link counts as lost and the robot connects again
    /// (0 = never).
    #[arg(long, default_value_t = 5.0, value_name = "S", value_parser = crate::flags::seconds)]
    cc_silence: f64,
    /// After losing the Control Center (closed, cut, or silent), keep trying to connect
    /// again for this many seconds (or 50ms, 2s, 1min), then give up (0 = stop at once). A robot that connects
    /// again starts afresh, as a restarted process: the Control Center sends it its
    /// unfinished tasks again from the start.
    #[arg(long, default_value_t = 60.0, value_name = "S", value_parser = crate::flags::seconds)]
    reconnect_for: f64,
}

/// How a connection to the Control Center ended.
enum Lost {
    /// The Control Center closed it, or the network cut it.
    Closed,
    /// Nothing heard for --cc-silence seconds.
    Silent(f64),
    /// The connection could not be made.
    Unreachable(String),
    /// Refused because the id is still held by this robot's previous connection (the
    /// Control Center has not noticed yet that it is gone).
    IdTaken(String),
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lost::Closed => write!(f, "the Control Center closed the connection"),
            Lost::Silent(s) => write!(f, "no word from the Control Center for {s:.1} s"),
            Lost::Unreachable(e) => write!(f, "{e}"),
            Lost::IdTaken(r) => write!(f, "the Control Center refused: {r}"),
        }
    }
}

/// Pause between attempts to connect again.
const RECONNECT_PAUSE: Duration = Duration::from_millis(500);

/// A robot's body: where it is, and drive towards a point.
trait Body {
    /// The pose in metres and radians in the body's world frame.
    fn sense(&mut self) -> Result<RobotPose>;
    /// One control step towards `target` (or stop with `None`).
    fn drive(&mut self, pose: RobotPose, target: Option<(f64, f64)>) -> Result<()>;
    fn world(&self) -> &'static str;
    fn kind(&self) -> &'static str;
}

/// How long one reading of a SumBot's pose may keep draining broadcasts.
const SENSE_BUDGET: Duration = Duration::from_millis(20);

/// A SumBot on a SimRob server: pose from broadcasts, wheel speeds by request.
struct SumBot {
    agent: Agent,
    entity: u32,
    last: Option<RobotPose>,
}

impl SumBot {
    fn connect(addr: &str, entity: u32, id: u32, initialize: bool) -> Result<SumBot> {
        let server: SocketAddr = addr
            .to_socket_addrs()?
            .next()
            .context("no address for the SimRob server")?;
        let mut agent = Agent::connect(server)?;
        agent
            .register(
                &format!("coord-robot-{id}"),
                AgentOptions {
                    broadcast: 0.05,
                    ..AgentOptions::default()
                },
            )
            .context("registering with the SimRob server")?;
        if initialize {
            agent.control(ControlRequest::InitializeSimulation, false)?;
        }
        Ok(SumBot {
            agent,
            entity,
            last: None,
        })
    }

    fn motors(&self, l: f64, r: f64) -> EntityRequest {
        EntityRequest::two_wheels(EntityId(self.entity), l, r)
    }
}

impl Body for SumBot {
    fn sense(&mut self) -> Result<RobotPose> {
        // The newest broadcast that arrived; wait a little for the first. (A zero time-out
        // would not read at all: 1 ms drains what is waiting.) A server running as fast as it
        // can sends broadcasts faster than 1 ms apart, so draining stops after SENSE_BUDGET
        // too: the control loop must go on (its pose is then a little behind the server's).
        let drain = Duration::from_millis(1);
        let mut wait = if self.last.is_none() {
            Duration::from_millis(500)
        } else {
            drain
        };
        let mut until: Option<Instant> = None;
        while let Some(b) = self.agent.next_broadcast(wait)? {
            wait = drain;
            let deadline = *until.get_or_insert_with(|| Instant::now() + SENSE_BUDGET);
            if let Some(e) = b
                .entities
                .iter()
                .find(|e| e.kind == EntityInfoKind::Robot && e.entity_id == EntityId(self.entity))
            {
                // The SumBot drives towards −X of its body for positive wheel speeds.
                let heading = wrap_angle_euclid(e.rotation[2] + PI);
                self.last = Some(RobotPose {
                    x: e.position[0],
                    y: e.position[1],
                    heading,
                    speed: 0.0,
                });
            }
            if Instant::now() >= deadline {
                break;
            }
        }
        self.last
            .context("no broadcast shows the SumBot (is the simulation initialized and running?)")
    }

    fn drive(&mut self, pose: RobotPose, target: Option<(f64, f64)>) -> Result<()> {
        let (l, r) = match target {
            None => (0.0, 0.0),
            Some((x, y)) => {
                let error = wrap_angle_euclid((y - pose.y).atan2(x - pose.x) - pose.heading);
                let turn = if error.abs() > 2.5 {
                    3.0
                } else {
                    (-3.0 * error).clamp(-3.0, 3.0)
                };
                let ahead =
                    6.0 * error.cos().max(0.0) * ((x - pose.x).hypot(y - pose.y) / 0.1).min(1.0);
                (ahead + turn, ahead - turn)
            }
        };
        let m = self.motors(l, r);
        self.agent.entity(m, false)?;
        Ok(())
    }

    fn world(&self) -> &'static str {
        "simrob"
    }

    fn kind(&self) -> &'static str {
        "sumbot"
    }
}

const INCH: f64 = 0.0254;

/// A Nomad on a Mobile Robot Simulator: inches and degrees on the wire, metres and radians
/// here (map frame, y down; heading grows turning right).
struct Nomad {
    client: MrsClient,
}

impl Body for Nomad {
    fn sense(&mut self) -> Result<RobotPose> {
        let (x, y, h) = self.client.get_pos()?;
        Ok(RobotPose {
            x: x * INCH,
            y: y * INCH,
            heading: wrap_angle_euclid(h.to_radians()),
            speed: 0.0,
        })
    }

    fn drive(&mut self, pose: RobotPose, target: Option<(f64, f64)>) -> Result<()> {
        match target {
            None => self.client.stop()?,
            Some((x, y)) => {
                let error = wrap_angle_euclid((y - pose.y).atan2(x - pose.x) - pose.heading);
                let turn = (error.to_degrees() * 2.0).clamp(-60.0, 60.0);
                let dist = (x - pose.x).hypot(y - pose.y) / INCH;
                let ahead = (dist * 2.0).min(20.0) * error.cos().max(0.0);
                self.client.set_vel(ahead, turn)?;
            }
        }
        Ok(())
    }

    fn world(&self) -> &'static str {
        "mrs"
    }

    fn kind(&self) -> &'static str {
        "nomad"
    }
}

pub fn run(args: RobotArgs) -> Result<()> {
    if args.id == 0 {
        bail!("--id: robot ids start at 1 (0 is the Control Center)");
    }
    if args.id > simrob_coord::model::MAX_ROBOT_ID {
        bail!(
            "--id {}: robot ids go up to {} (2^30 - 1; the larger ones are the Control Center's own)",
            args.id,
            simrob_coord::model::MAX_ROBOT_ID
        );
    }
    if !(args.status_period.is_finite() && args.status_period > 0.0) {
        bail!("--status-period must be a positive number of seconds");
    }
    let mut body: Box<dyn Body> = match (&args.server, &args.mrs) {
        (Some(addr), _) => Box::new(SumBot::connect(
            addr,
            args.entity,
            args.id,
            args.initialize,
        )?),
        (None, Some(addr)) => Box::new(Nomad {
            client: MrsClient::connect(addr)
                .with_context(|| format!("connecting to the Mobile Robot Simulator at {addr}"))?,
        }),
        (None, None) => bail!("say which robot to drive: --server ADDR (a SimRob server) or --mrs ADDR (an MRS server)"),
    };
    for (name, v) in [
        ("--stall-time", args.stall_time),
        ("--cc-silence", args.cc_silence),
        ("--reconnect-for", args.reconnect_for),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            bail!("{name} must be 0 or a positive number of seconds");
        }
    }
    let tolerance = args
        .tolerance
        .unwrap_or(if body.world() == "mrs" { 0.1 } else { 0.05 });
    let info = RobotInfo {
        robot: args.id,
        name: args
            .name
            .clone()
            .unwrap_or_else(|| format!("{}{}", body.kind(), args.id)),
        kind: body.kind().into(),
        world: body.world().into(),
        capabilities: TaskClass::ALL.to_vec(),
        speed: if body.world() == "mrs" {
            20.0 * INCH
        } else {
            0.2
        },
    };
    let start = Instant::now();
    let mut first = true;
    let mut lost_at: Option<Instant> = None;
    loop {
        let lost = match connect_cc(&args.cc) {
            Ok((writer, rx)) => {
                let lost = session(
                    &args, &mut *body, &info, tolerance, start, writer, rx, first,
                )?;
                if !matches!(lost, Lost::IdTaken(_)) {
                    lost_at = None;
                }
                lost
            }
            Err(e) if first => return Err(e),
            Err(e) => Lost::Unreachable(format!("{e:#}")),
        };
        first = false;
        let since = *lost_at.get_or_insert_with(Instant::now);
        if since.elapsed().as_secs_f64() >= args.reconnect_for {
            if let Lost::IdTaken(r) = &lost {
                bail!("the Control Center did not take this robot: {r}");
            }
            println!("{lost}");
            if args.reconnect_for > 0.0 {
                println!(
                    "robot {}: gave up connecting again after {:.0} s (--reconnect-for)",
                    args.id, args.reconnect_for
                );
            }
            return Ok(());
        }
        println!(
            "robot {}: {lost}; connecting again to {} (for up to {:.0} s, --reconnect-for)",
            args.id, args.cc, args.reconnect_for
        );
        std::io::stdout().flush()?;
        std::thread::sleep(RECONNECT_PAUSE);
    }
}

/// Whether a movement is still getting closer to its point: it has stalled when it has come
/// no `progress` closer for `time` seconds.
#[derive(Clone, Copy, Debug)]
struct Stall {
    /// The least distance to the point so far.
    best: f64,
    /// When it last came `progress` closer (local seconds).
    since: f64,
}

impl Stall {
    /// A movement starting `distance` from its point at `now`.
    fn new(distance: f64, now: f64) -> Stall {
        Stall {
            best: distance,
            since: now,
        }
    }

    /// The movement is `distance` from its point at `now`: whether it has stalled (never
    /// with `time` 0).
    fn stalled(&mut self, distance: f64, now: f64, progress: f64, time: f64) -> bool {
        if distance <= self.best - progress {
            self.best = distance;
            self.since = now;
        }
        time > 0.0 && now - self.since >= time
    }
}

/// One connection to the Control Center, from `hello` until it is lost. The robot's upper
/// layer starts afresh on each (tasks of an earlier connection were given back to
/// allocation when it went).
#[allow(clippy::too_many_arguments)]
fn session(
    args: &RobotArgs,
    body: &mut dyn Body,
    info: &RobotInfo,
    tolerance: f64,
    start: Instant,
    mut writer: std::net::TcpStream,
    rx: std::sync::mpsc::Receiver<Incoming>,
    first: bool,
) -> Result<Lost> {
    let mut agent = RobotAgent::new(info.clone());
    agent.bidder.max_queue = args.max_queue;
    let mut board = TaskBoard::default();
    write_env(&mut writer, &agent.hello())?;
    let mut heard = start.elapsed().as_secs_f64();
    let lost = session_loop(
        args,
        body,
        &mut agent,
        &mut board,
        tolerance,
        start,
        &mut writer,
        &rx,
        &mut heard,
        first,
    );
    // Whatever ended it, the body stops and the connection goes.
    let _ = writer.shutdown(std::net::Shutdown::Both);
    if let Ok(pose) = body.sense() {
        let _ = body.drive(pose, None);
    }
    lost
}

#[allow(clippy::too_many_arguments)]
fn session_loop(
    args: &RobotArgs,
    body: &mut dyn Body,
    agent: &mut RobotAgent,
    board: &mut TaskBoard,
    tolerance: f64,
    start: Instant,
    writer: &mut std::net::TcpStream,
    rx: &std::sync::mpsc::Receiver<Incoming>,
    heard: &mut f64,
    first: bool,
) -> Result<Lost> {
    let mut goal: Option<(TaskId, (f64, f64))> = None;
    let mut stall: Option<Stall> = None;
    let mut timed: [Option<(TaskId, f64)>; 2] = [None; 2];
    let mut next_status = 0.0;
    let mut report_now = true;
    let mut last_pose: Option<(RobotPose, f64)> = None;
    loop {
        let local = start.elapsed().as_secs_f64();
        let pose = {
            let mut p = body.sense()?;
            if let Some((l, t)) = last_pose {
                if local > t {
                    p.speed = (p.x - l.x).hypot(p.y - l.y) / (local - t);
                }
            }
            last_pose = Some((p, local));
            p
        };
        // Messages from the Control Center.
        loop {
            match rx.try_recv() {
                Ok(Incoming::Message(_, env)) => {
                    *heard = local;
                    if let Msg::Refused { reason } = &env.msg {
                        eprintln!("the Control Center refused: {reason}");
                        if !agent.welcomed {
                            if reason.contains("already in use") {
                                // Most likely this robot's previous connection, not yet
                                // noticed gone: try again (within --reconnect-for).
                                return Ok(Lost::IdTaken(reason.clone()));
                            }
                            bail!("the Control Center did not take this robot: {reason}");
                        }
                    }
                    let was_welcomed = agent.welcomed;
                    agent.handle(&env, local, pose, board, &Euclidean);
                    if agent.welcomed && !was_welcomed {
                        // Connected only once the Control Center took the hello.
                        println!(
                            "robot {} ({}) {} the Control Center at {}",
                            args.id,
                            body.kind(),
                            if first {
                                "connected to"
                            } else {
                                "connected again to"
                            },
                            args.cc
                        );
                        std::io::stdout().flush()?;
                    }
                }
                Ok(Incoming::Bad(_, e)) => eprintln!("bad message from the Control Center: {e}"),
                Ok(Incoming::Closed(_)) | Err(TryRecvError::Disconnected) => {
                    return Ok(Lost::Closed);
                }
                Ok(_) => {}
                Err(TryRecvError::Empty) => break,
            }
        }
        if args.cc_silence > 0.0 && local - *heard >= args.cc_silence {
            return Ok(Lost::Silent(local - *heard));
        }
        // The lower layer: reached points, finished timed tasks.
        if let Some((task, (x, y))) = goal {
            let distance = (x - pose.x).hypot(y - pose.y);
            let stall = stall.get_or_insert_with(|| Stall::new(distance, local));
            if distance <= tolerance {
                goal = None;
                body.drive(pose, None)?;
                report_now = true;
                let _ = agent.basic_done(task, Ok(()), local, board);
            } else if stall.stalled(distance, local, tolerance, args.stall_time) {
                goal = None;
                body.drive(pose, None)?;
                report_now = true;
                eprintln!(
                    "robot {}: task {task}: no closer than {distance:.2} m to its point for {} s (--stall-time): unreachable",
                    args.id, args.stall_time
                );
                let _ = agent.basic_done(task, Err(FailCode::Unreachable), local, board);
            }
        }
        if goal.is_none() {
            stall = None;
        }
        for slot in &mut timed {
            if let Some((task, end)) = *slot {
                if local >= end {
                    *slot = None;
                    report_now = true;
                    let _ = agent.basic_done(task, Ok(()), local, board);
                }
            }
        }
        agent.tick(local, board);
        while let Some(cmd) = agent.poll_command() {
            report_now = true;
            match cmd {
                Command::Start {
                    task,
                    basic: BasicKind::GoTo { x, y },
                    ..
                } => {
                    goal = Some((task, (x, y)));
                    stall = None;
                }
                Command::Start {
                    task,
                    basic: BasicKind::Perceive { seconds },
                    ..
                } => timed[0] = Some((task, local + seconds)),
                Command::Start {
                    task,
                    basic: BasicKind::PanTilt { seconds, .. },
                    ..
                } => timed[1] = Some((task, local + seconds)),
                Command::Stop { task, class } => match class {
                    TaskClass::Movement if goal.is_some_and(|g| g.0 == task) => goal = None,
                    TaskClass::Perception => timed[0] = None,
                    TaskClass::PanTilt => timed[1] = None,
                    _ => {}
                },
            }
        }
        if let Err(e) = body.drive(pose, goal.map(|g| g.1)) {
            if let Some((task, _)) = goal.take() {
                let _ = agent.basic_done(task, Err(FailCode::Execution), local, board);
            }
            eprintln!("robot {}: {e}", args.id);
        }
        if report_now || local >= next_status {
            report_now = false;
            next_status = local + args.status_period;
            let s = agent.status(local, pose, None, None);
            if write_env(writer, &s).is_err() {
                return Ok(Lost::Closed);
            }
        }
        while let Some(env) = agent.poll_transmit() {
            if write_env(writer, &env).is_err() {
                return Ok(Lost::Closed);
            }
        }
        // The control period; messages are read at the next step.
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::Stall;

    #[test]
    fn a_movement_that_comes_no_closer_for_the_stall_time_has_stalled() {
        // Driving closer every step: never stalled, however long it takes.
        let mut s = Stall::new(10.0, 0.0);
        for step in 1..=1000 {
            let now = step as f64 * 0.1;
            assert!(!s.stalled(10.0 - now * 0.05, now, 0.05, 10.0), "{now}");
        }
        // Against a wall: 10 s without coming 5 cm closer (turning on the spot, creeping
        // by less) stalls it, not before.
        let mut s = Stall::new(2.0, 0.0);
        assert!(!s.stalled(1.9, 1.0, 0.05, 10.0));
        assert!(!s.stalled(1.89, 6.0, 0.05, 10.0));
        assert!(!s.stalled(1.87, 10.9, 0.05, 10.0));
        assert!(s.stalled(1.87, 11.0, 0.05, 10.0));
        // 0: never.
        let mut s = Stall::new(2.0, 0.0);
        assert!(!s.stalled(2.0, 1e9, 0.05, 0.0));
    }
}
