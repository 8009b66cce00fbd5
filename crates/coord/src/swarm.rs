//! Coordination inside a swarm simulation: the Control Center, the Time Server and every
//! robot's abstraction layer run as one system of the swarm layer ([`CoordSystem`]),
//! exchanging GRI messages in memory.
//!
//! Each swarm robot is a coordination robot (ids from `robot_id_base` upward, in entity
//! order) that can move (basic `GoTo` tasks become routes on the swarm's navigation
//! graph), perceive and pan-tilt (held for their seconds). The Time Server publishes the
//! simulation's clock. A route cut short (a collision stopped the robot) is tried again
//! after a short random wait, drawn from the run's seed; a robot whose battery empties says
//! goodbye, and the Control Center hands its unfinished tasks (the running one included) to
//! the others.
//!
//! The Control Center is either in the same simulation ([`Link::Local`]) or elsewhere on
//! the network ([`Link::Remote`]: the shell carries the envelopes), so one networked
//! Control Center can see swarm robots beside SimRob and Mobile Robot Simulator robots.
//!
//! Observation never changes a run: metrics ([`CoordReport`]) are read from a shared handle.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::Serialize;
use simrob_swarm::nav::{start_route, Goal};
use simrob_swarm::{Ctx, EntityId, Event, System, Tag};

use crate::cc::{CcConfig, ControlCenter, LogLine};
use crate::cnp::{CnpStats, Euclidean};
use crate::model::{
    BasicKind, FailCode, RobotId, RobotInfo, TaskClass, TaskId, TaskSpec, TaskState,
    CONTROL_CENTER, MAX_ROBOT_ID, MAX_SPEED,
};
use crate::outbox::Outbox;
use crate::robot::{Command, RobotAgent, RobotPose};
use crate::sync::TaskBoard;
use crate::time::{TimeServer, DEFAULT_CLOCK_PERIOD};
use crate::wire::{Envelope, Msg};

/// The id the in-process Time Server sends from.
pub const TIME_SERVER: RobotId = u32::MAX;

/// Settings of the coordination system.
#[derive(Clone, Debug)]
pub struct SwarmCoordConfig {
    /// The Control Center's settings (one auction open at a time by default).
    pub cc: CcConfig,
    /// Seconds between Time Server publications.
    pub clock_period: f64,
    /// Seconds between routine status reports (a robot also reports when its running
    /// tasks change).
    pub status_period: f64,
    /// Tasks a robot holds that may still run (neither final nor BLOCKED) before it stops
    /// bidding.
    pub max_queue: usize,
    /// The first robot id.
    pub robot_id_base: RobotId,
    /// The world name robots report (tasks may be restricted to it).
    pub world: String,
    /// Keep the Control Center's log lines (for files); off for comparisons.
    pub keep_logs: bool,
    /// End the run once nothing runnable is left: every task released and final or BLOCKED.
    pub end_when_done: bool,
}

impl Default for SwarmCoordConfig {
    fn default() -> Self {
        SwarmCoordConfig {
            // In memory every robot answers at once, so auctions close as soon as they open:
            // one at a time, each sees the queues the previous one left.
            cc: CcConfig {
                max_open_auctions: 1,
                ..CcConfig::default()
            },
            clock_period: DEFAULT_CLOCK_PERIOD,
            status_period: 1.0,
            max_queue: crate::cnp::DEFAULT_MAX_QUEUE,
            robot_id_base: 1,
            world: "swarm".into(),
            keep_logs: false,
            end_when_done: true,
        }
    }
}

/// Envelopes to and from a Control Center elsewhere (the shell carries them).
#[derive(Debug, Default)]
pub struct RemoteLink {
    /// From the Control Center (and Time Server), to deliver to the swarm's robots.
    pub inbox: VecDeque<Envelope>,
    /// From the swarm's robots, to send to the Control Center.
    pub outbox: VecDeque<Envelope>,
}

/// Where the Control Center is.
pub enum Link {
    /// In the same simulation, exchanging envelopes in memory.
    Local(Box<ControlCenter>),
    /// Elsewhere on the network: the shell carries the envelopes through the link.
    Remote(Arc<Mutex<RemoteLink>>),
}

/// What a coordinated run did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CoordReport {
    /// Coordination robots in the run.
    pub robots: usize,
    /// Tasks the run releases to the Control Center.
    pub tasks: usize,
    /// Tasks ENDED.
    pub ended: usize,
    /// Tasks FAILED.
    pub failed: usize,
    /// Tasks ABORTED.
    pub aborted: usize,
    /// Tasks BLOCKED: a precondition failed or was aborted, so they can never run (without
    /// an operator, nothing unblocks them).
    pub blocked: usize,
    /// Tasks the Control Center refused when they were released, each as `task N: why`
    /// (they never run: a run counts them as final, and a comparison stops with the reason).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// Simulated seconds until the last task was final or BLOCKED, nothing runnable left
    /// (`None` while some task may still run).
    pub makespan: Option<f64>,
    /// Total distance driven by all robots, map units (centimetres,
    /// [`simrob_swarm::MAP_UNITS_PER_METRE`]).
    pub travel: f64,
    /// Robot-seconds with no task running, up to the makespan (or the end of the run).
    pub idle: f64,
    /// GRI messages sent (a broadcast counts once).
    pub messages: u64,
    /// Contract Net counters (in-process Control Center only).
    #[serde(skip)]
    pub cnp: CnpStats,
    /// Route retries after a robot was stopped on its way.
    pub retries: u64,
    /// Simulated time of the last frame.
    pub time: f64,
}

impl CoordReport {
    /// Whether nothing runnable is left: every task released and final, BLOCKED or refused.
    pub fn done(&self) -> bool {
        self.tasks > 0 && self.settled() >= self.tasks
    }

    /// Tasks final, BLOCKED or refused.
    fn settled(&self) -> usize {
        self.ended + self.failed + self.aborted + self.blocked + self.refused.len()
    }

    /// Tasks that might still run when the run stopped: not final, not BLOCKED, not refused.
    pub fn pending(&self) -> usize {
        self.tasks.saturating_sub(self.settled())
    }

    /// Tasks ended per hour of simulated time, up to the makespan.
    pub fn tasks_per_hour(&self) -> f64 {
        let t = self.makespan.unwrap_or(self.time);
        if t > 0.0 {
            self.ended as f64 * 3600.0 / t
        } else {
            0.0
        }
    }
}

#[derive(Debug)]
struct Moving {
    task: TaskId,
    target: (f64, f64),
    /// Frames the route has been missing while the robot is at its target.
    gone: u32,
    /// Retry the route at this time (after a stop).
    retry_at: Option<f64>,
}

struct Bot {
    entity: EntityId,
    agent: RobotAgent,
    moving: Option<Moving>,
    /// Perception and pan-tilt basic tasks: (task, end time).
    timed: [Option<(TaskId, f64)>; 2],
    last: (f64, f64),
    next_status: f64,
    gone: bool,
    report_now: bool,
}

/// The coordination system (see the module docs).
pub struct CoordSystem {
    config: SwarmCoordConfig,
    link: Link,
    ts: TimeServer,
    bots: Vec<Bot>,
    by_entity: HashMap<EntityId, usize>,
    by_id: HashMap<RobotId, usize>,
    board: TaskBoard,
    /// Tasks to hand to the Control Center at their release time, in time order.
    releases: VecDeque<(f64, TaskSpec)>,
    released: Vec<TaskId>,
    final_count: usize,
    report: Arc<Mutex<CoordReport>>,
    logs: Arc<Mutex<Vec<LogLine>>>,
    kill_sent: bool,
    /// What the robots send an in-process Control Center in one round (kept for its buffers).
    outbound: Outbox,
}

impl std::fmt::Debug for CoordSystem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoordSystem")
            .field("robots", &self.bots.len())
            .finish_non_exhaustive()
    }
}

impl CoordSystem {
    /// A coordination system with its own Control Center.
    pub fn local(config: SwarmCoordConfig) -> Self {
        let cc = ControlCenter::new(config.cc.clone());
        Self::new(config, Link::Local(Box::new(cc)))
    }

    /// A coordination system whose robots talk to a Control Center elsewhere through `link`.
    pub fn remote(config: SwarmCoordConfig, link: Arc<Mutex<RemoteLink>>) -> Self {
        Self::new(config, Link::Remote(link))
    }

    fn new(config: SwarmCoordConfig, link: Link) -> Self {
        CoordSystem {
            ts: TimeServer::new(config.clock_period),
            config,
            link,
            bots: Vec::new(),
            by_entity: HashMap::new(),
            by_id: HashMap::new(),
            board: TaskBoard::default(),
            releases: VecDeque::new(),
            released: Vec::new(),
            final_count: 0,
            report: Arc::new(Mutex::new(CoordReport::default())),
            logs: Arc::new(Mutex::new(Vec::new())),
            kill_sent: false,
            outbound: Outbox::new(),
        }
    }

    /// Tasks to submit to the Control Center at the given simulated times (in-process
    /// Control Center only). Ids 0 are chosen by the Control Center.
    pub fn with_tasks(mut self, mut tasks: Vec<(f64, TaskSpec)>) -> Self {
        tasks.sort_by(|a, b| a.0.total_cmp(&b.0));
        self.releases = tasks.into();
        lock(&self.report).tasks = self.releases.len();
        self
    }

    /// A handle on the run's figures, updated every frame.
    pub fn report(&self) -> Arc<Mutex<CoordReport>> {
        self.report.clone()
    }

    /// A handle on the Control Center's log lines (when `keep_logs`).
    pub fn logs(&self) -> Arc<Mutex<Vec<LogLine>>> {
        self.logs.clone()
    }

    fn count(&self, n: u64) {
        lock(&self.report).messages += n;
    }

    fn pose_of(ctx: &Ctx, e: EntityId) -> RobotPose {
        let p = ctx.world.pose.get(e).copied().unwrap_or_default();
        let speed = ctx.world.vel.get(e).map(|v| v.x.hypot(v.y)).unwrap_or(0.0);
        RobotPose {
            x: p.x,
            y: p.y,
            heading: p.theta,
            speed,
        }
    }

    /// Delivers one envelope from the Control Center side to the robots.
    fn deliver(&mut self, env: &Envelope, ctx: &Ctx) {
        let local = ctx.time;
        let targets: Vec<usize> = match env.to {
            None => (0..self.bots.len()).collect(),
            Some(id) => self.by_id.get(&id).copied().into_iter().collect(),
        };
        for i in targets {
            let b = &mut self.bots[i];
            if b.gone {
                continue;
            }
            let pose = Self::pose_of(ctx, b.entity);
            b.agent
                .handle(env, local, pose, &mut self.board, &Euclidean);
        }
        if let Msg::TaskState { task, state, .. } = env.msg {
            self.board.publish(task, state);
        }
    }

    /// Moves messages until nothing is left to say.
    fn exchange(&mut self, ctx: &mut Ctx) {
        let now = ctx.time;
        for _ in 0..10_000 {
            let mut moved = false;
            // Control Center side → robots.
            let mut inbound = Vec::new();
            match &mut self.link {
                Link::Local(cc) => {
                    cc.handle_timeout(now);
                    while let Some(env) = cc.poll_transmit() {
                        inbound.push(env);
                    }
                }
                Link::Remote(link) => inbound.extend(lock(link).inbox.drain(..)),
            }
            if matches!(self.link, Link::Local(_)) {
                self.count(inbound.len() as u64);
            }
            for env in &inbound {
                moved = true;
                self.deliver(env, ctx);
            }
            // Robots → Control Center: in one process through an outbox (bids compact),
            // over a link as envelopes; in the same order either way.
            match &mut self.link {
                Link::Local(cc) => {
                    let mut outbound = std::mem::take(&mut self.outbound);
                    for b in &mut self.bots {
                        b.agent.tick(now, &mut self.board);
                        b.agent.drain_into(&mut outbound);
                    }
                    let n = outbound.len() as u64;
                    moved |= n > 0;
                    for e in cc.handle_outbox(&mut outbound, now) {
                        tracing::debug!(target: "simrob_coord::swarm", "control center refused a message: {e}");
                    }
                    self.outbound = outbound;
                    lock(&self.report).messages += n;
                }
                Link::Remote(link) => {
                    let mut outbound = Vec::new();
                    for b in &mut self.bots {
                        b.agent.tick(now, &mut self.board);
                        while let Some(env) = b.agent.poll_transmit() {
                            outbound.push(env);
                        }
                    }
                    lock(&self.report).messages += outbound.len() as u64;
                    if !outbound.is_empty() {
                        moved = true;
                        lock(link).outbox.extend(outbound);
                    }
                    // The remote side answers later: one round per frame.
                    if !moved {
                        break;
                    }
                    self.run_commands(ctx);
                    break;
                }
            }
            self.run_commands(ctx);
            if !moved {
                break;
            }
        }
    }

    /// Hands the robots' new basic tasks to the swarm.
    fn run_commands(&mut self, ctx: &mut Ctx) {
        let now = ctx.time;
        for i in 0..self.bots.len() {
            while let Some(cmd) = self.bots[i].agent.poll_command() {
                let b = &mut self.bots[i];
                match cmd {
                    Command::Start {
                        task,
                        basic: BasicKind::GoTo { x, y },
                        ..
                    } => {
                        b.report_now = true;
                        match start_route(&mut ctx.world, b.entity, &Goal::Point(x, y)) {
                            Ok(()) => {
                                b.moving = Some(Moving {
                                    task,
                                    target: (x, y),
                                    gone: 0,
                                    retry_at: None,
                                })
                            }
                            Err(m) => {
                                tracing::debug!(target: "simrob_coord::swarm", "robot {}: {m}", b.agent.id());
                                b.moving = None;
                                let _ = b.agent.basic_done(
                                    task,
                                    Err(FailCode::Unreachable),
                                    now,
                                    &mut self.board,
                                );
                            }
                        }
                    }
                    Command::Start {
                        task,
                        basic: BasicKind::Perceive { seconds },
                        ..
                    } => {
                        b.report_now = true;
                        b.timed[0] = Some((task, now + seconds));
                    }
                    Command::Start {
                        task,
                        basic: BasicKind::PanTilt { seconds, .. },
                        ..
                    } => {
                        b.report_now = true;
                        b.timed[1] = Some((task, now + seconds));
                    }
                    Command::Stop { task, class } => {
                        b.report_now = true;
                        match class {
                            TaskClass::Movement => {
                                if b.moving.as_ref().is_some_and(|m| m.task == task) {
                                    b.moving = None;
                                    ctx.world.path.remove(b.entity);
                                    if let Some(v) = ctx.world.vel.get_mut(b.entity) {
                                        *v = Default::default();
                                    }
                                }
                            }
                            TaskClass::Perception => b.timed[0] = None,
                            TaskClass::PanTilt => b.timed[1] = None,
                        }
                    }
                }
            }
        }
    }

    fn basic_done(&mut self, i: usize, task: TaskId, result: Result<(), FailCode>, now: f64) {
        let b = &mut self.bots[i];
        b.report_now = true;
        if let Err(e) = b.agent.basic_done(task, result, now, &mut self.board) {
            tracing::debug!(target: "simrob_coord::swarm", "robot {}: {e}", b.agent.id());
        }
    }
}

/// A scenario entity's name as a robot's name: one line of printable text, as a `hello`
/// must have it (control characters become spaces; an empty name is `robot ID`).
fn robot_name(label: String, id: RobotId) -> String {
    let name: String = label
        .chars()
        .map(|c| {
            if crate::model::check_one_line("", c.encode_utf8(&mut [0; 4])).is_ok() {
                c
            } else {
                ' '
            }
        })
        .collect();
    if name.is_empty() {
        format!("robot {id}")
    } else {
        name
    }
}

/// Whether `robots` robots numbered from `base` all have robot ids (1 to
/// [`MAX_ROBOT_ID`], 2³⁰ − 1: a Control Center refuses a `hello` with a larger one).
pub fn robot_ids_fit(base: RobotId, robots: usize) -> bool {
    base >= 1 && (base as u64).saturating_add(robots as u64) - 1 <= MAX_ROBOT_ID as u64
}

impl System for CoordSystem {
    fn name(&self) -> &str {
        "coord"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn start(&mut self, ctx: &mut Ctx) {
        let ids = ctx.world.vel.ids();
        for (k, e) in ids.into_iter().enumerate() {
            // Ids past the largest a robot may have are not given (the command line refuses
            // such a base; see `robot_ids_fit`).
            let Some(id) = RobotId::try_from(k)
                .ok()
                .and_then(|k| self.config.robot_id_base.checked_add(k))
                .filter(|&id| id <= MAX_ROBOT_ID)
            else {
                break;
            };
            let speed = ctx
                .world
                .navigator
                .get(e)
                .map(|n| n.speed)
                .unwrap_or(simrob_swarm::nav::DEFAULT_SPEED)
                // (For cost estimates only: a scenario's faster robot says the most a
                // `hello` may.)
                .min(MAX_SPEED);
            let info = RobotInfo {
                robot: id,
                name: robot_name(ctx.world.label(e), id),
                kind: "swarm".into(),
                world: self.config.world.clone(),
                capabilities: TaskClass::ALL.to_vec(),
                speed,
            };
            let mut agent = RobotAgent::new(info);
            agent.bidder.max_queue = self.config.max_queue;
            let p = ctx.world.pose.get(e).copied().unwrap_or_default();
            self.by_entity.insert(e, self.bots.len());
            self.by_id.insert(id, self.bots.len());
            let stagger = self.config.status_period * (k as f64 * 0.618_034).fract();
            self.bots.push(Bot {
                entity: e,
                agent,
                moving: None,
                timed: [None; 2],
                last: (p.x, p.y),
                next_status: stagger,
                gone: false,
                report_now: true,
            });
        }
        lock(&self.report).robots = self.bots.len();
        let mut hellos = Vec::new();
        for b in &self.bots {
            hellos.push(b.agent.hello());
        }
        self.count(hellos.len() as u64);
        match &mut self.link {
            Link::Local(cc) => {
                if !self.config.keep_logs {
                    cc.drop_logs();
                }
                for h in hellos {
                    let _ = cc.handle(h, ctx.time);
                }
            }
            Link::Remote(link) => lock(link).outbox.extend(hellos),
        }
    }

    fn wants(&self, event: &Event) -> bool {
        (event.tag == Tag::END_OF_PATH || event.tag == Tag::BATTERY_EMPTY)
            && event
                .entity
                .is_some_and(|e| self.by_entity.contains_key(&e))
    }

    fn react(&mut self, event: &Event, ctx: &mut Ctx) {
        let Some(&i) = event.entity.and_then(|e| self.by_entity.get(&e)) else {
            return;
        };
        let now = ctx.time.max(ctx.events.now());
        if event.tag == Tag::END_OF_PATH {
            if let Some(m) = self.bots[i].moving.take() {
                self.basic_done(i, m.task, Ok(()), now);
            }
        } else if event.tag == Tag::BATTERY_EMPTY && !self.bots[i].gone {
            // The robot stops where it is and leaves; the Control Center hands what it
            // held, the task it was running included, to the others.
            self.bots[i].moving = None;
            let b = &mut self.bots[i];
            b.gone = true;
            let bye = b.agent.bye();
            let mut flush = Vec::new();
            while let Some(env) = b.agent.poll_transmit() {
                flush.push(env);
            }
            flush.push(bye);
            self.count(flush.len() as u64);
            match &mut self.link {
                Link::Local(cc) => {
                    for env in flush {
                        let _ = cc.handle(env, now);
                    }
                }
                Link::Remote(link) => lock(link).outbox.extend(flush),
            }
        }
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let now = ctx.time;
        let dt = ctx.dt;
        // The Time Server.
        if let Some(msg) = self.ts.tick(now) {
            if let Link::Local(cc) = &mut self.link {
                let env = Envelope {
                    from: TIME_SERVER,
                    to: None,
                    msg,
                };
                if let Msg::Clock { seq, time } = env.msg {
                    cc.hear_clock(seq, time, now);
                }
                self.count(1);
                self.deliver(&env, ctx);
            }
        }
        // Tasks released now.
        while self.releases.front().is_some_and(|(t, _)| *t <= now) {
            let Some((_, spec)) = self.releases.pop_front() else {
                break;
            };
            if let Link::Local(cc) = &mut self.link {
                let id = spec.id;
                match cc.submit(spec) {
                    Ok(id) => self.released.push(id),
                    Err(e) => {
                        tracing::warn!(target: "simrob_coord::swarm", "task {id} refused: {e}");
                        lock(&self.report).refused.push(format!("task {id}: {e}"));
                    }
                }
            }
        }
        // Routes cut short, timed basic tasks.
        for i in 0..self.bots.len() {
            let e = self.bots[i].entity;
            let has_path = ctx.world.path.has(e);
            let p = ctx.world.pose.get(e).copied().unwrap_or_default();
            let mut finish: Option<(TaskId, Result<(), FailCode>)> = None;
            if let Some(m) = self.bots[i].moving.as_mut() {
                if !has_path {
                    if let Some(at) = m.retry_at {
                        if now >= at {
                            m.retry_at = None;
                            lock(&self.report).retries += 1;
                            if let Err(msg) =
                                start_route(&mut ctx.world, e, &Goal::Point(m.target.0, m.target.1))
                            {
                                tracing::debug!(target: "simrob_coord::swarm", "{msg}");
                                finish = Some((m.task, Err(FailCode::Unreachable)));
                            }
                        }
                    } else if (p.x - m.target.0).hypot(p.y - m.target.1) < 0.5 {
                        m.gone += 1;
                        if m.gone > 1 {
                            finish = Some((m.task, Ok(())));
                        }
                    } else {
                        // Stopped on the way (a collision): try again in 1–2 s.
                        m.retry_at = Some(now + 1.0 + ctx.rng.next_f64());
                    }
                }
            }
            if let Some((task, result)) = finish {
                self.bots[i].moving = None;
                self.basic_done(i, task, result, now);
            }
            for slot in 0..2 {
                if let Some((task, end)) = self.bots[i].timed[slot] {
                    if now >= end {
                        self.bots[i].timed[slot] = None;
                        self.basic_done(i, task, Ok(()), now);
                    }
                }
            }
        }
        self.exchange(ctx);
        // Status reports, travel and idle time.
        let mut statuses = Vec::new();
        let mut travel = 0.0;
        let mut idle = 0.0;
        for b in &mut self.bots {
            if b.gone {
                continue;
            }
            let p = ctx.world.pose.get(b.entity).copied().unwrap_or_default();
            travel += (p.x - b.last.0).hypot(p.y - b.last.1);
            b.last = (p.x, p.y);
            let r = b.agent.tm.running();
            if r.movement.is_none() && r.perception.is_none() && r.pan_tilt.is_none() {
                idle += dt;
            }
            if b.report_now || now >= b.next_status {
                b.report_now = false;
                b.next_status = now + self.config.status_period;
                let pose = Self::pose_of(ctx, b.entity);
                let battery = ctx.world.battery.get(b.entity).map(|bat| {
                    if bat.capacity > 0.0 {
                        (bat.charge / bat.capacity).clamp(0.0, 1.0)
                    } else {
                        0.0
                    }
                });
                statuses.push(b.agent.status(now, pose, battery, None));
            }
        }
        self.count(statuses.len() as u64);
        match &mut self.link {
            Link::Local(cc) => {
                for s in statuses {
                    let _ = cc.handle(s, now);
                }
            }
            Link::Remote(link) => lock(link).outbox.extend(statuses),
        }
        self.exchange(ctx);
        // Figures.
        let mut finals = [0usize; 4];
        for id in &self.released {
            match self.board.get(*id) {
                Some(TaskState::Ended) => finals[0] += 1,
                Some(TaskState::Failed { .. }) => finals[1] += 1,
                Some(TaskState::Aborted) => finals[2] += 1,
                Some(TaskState::Blocked { .. }) => finals[3] += 1,
                _ => {}
            }
        }
        self.final_count = finals.iter().sum();
        let mut r = lock(&self.report);
        r.time = now + dt;
        if r.makespan.is_none() {
            r.travel += travel;
            r.idle += idle;
        }
        r.ended = finals[0];
        r.failed = finals[1];
        r.aborted = finals[2];
        r.blocked = finals[3];
        if let Link::Local(cc) = &mut self.link {
            r.cnp = cc.cnp_stats();
            if self.config.keep_logs {
                let mut logs = lock(&self.logs);
                while let Some(l) = cc.poll_log() {
                    logs.push(l);
                }
            } else {
                cc.drop_logs();
            }
        }
        if r.makespan.is_none() && r.done() {
            r.makespan = Some(now);
            if self.config.end_when_done && !self.kill_sent {
                self.kill_sent = true;
                ctx.events.emit(Event::global(Tag::KILL_SWITCH));
            }
        }
    }
}

/// The Control Center of a run with a local one (for the operator's views).
impl CoordSystem {
    /// The in-process Control Center, if this system has one.
    pub fn control_center(&mut self) -> Option<&mut ControlCenter> {
        match &mut self.link {
            Link::Local(cc) => Some(cc),
            Link::Remote(_) => None,
        }
    }

    /// The id of the Control Center robots talk to.
    pub fn cc_id(&self) -> RobotId {
        CONTROL_CENTER
    }
}

/// The shared state behind `m` (a poisoned lock is taken over: a report, logs or a link's
/// queues hold no invariant a panic elsewhere could break).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenario_names_become_names_a_hello_may_have() {
        assert_eq!(robot_name("a\tb\nc".into(), 3), "a b c");
        assert_eq!(robot_name(String::new(), 3), "robot 3");
        assert_eq!(robot_name("nurse «1»".into(), 3), "nurse «1»");
        crate::model::check_label("robot name", &robot_name("\u{1}".into(), 3)).unwrap();
    }

    #[test]
    fn robot_ids_fit_from_1_to_the_largest() {
        assert!(robot_ids_fit(1, 0) && robot_ids_fit(1, 10));
        assert!(robot_ids_fit(MAX_ROBOT_ID - 2, 3));
        assert!(!robot_ids_fit(MAX_ROBOT_ID - 1, 3));
        assert!(!robot_ids_fit(1 << 30, 1));
        assert!(!robot_ids_fit(0, 1));
        assert!(!robot_ids_fit(2, usize::MAX));
    }
}
