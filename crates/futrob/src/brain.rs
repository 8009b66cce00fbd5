//! The brain: rules, world model, action handler and team link of one robot, stepped with
//! time handed in.

use crate::actions::{ActionHandler, BodyStatus, HandlerOutput};
use crate::config::{BrainParams, IniConfig};
use crate::msg::{Message, Param, Received, Role, BROADCAST};
use crate::names::{Action, ObjectKind};
use crate::rules::{PredicateSet, RuleSet};
use crate::sighting::Sighting;
use crate::world::WorldModel;

/// What one brain step produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BrainOutput {
    /// Basic actions for the body and head, in order (FutRob names and parameters).
    pub commands: Vec<Action>,
    /// Team messages to put on the air, in order.
    pub messages: Vec<Message>,
    /// The rule that fired (index in file order), if any.
    pub rule: Option<usize>,
    /// The action that started at this step.
    pub started: Option<Action>,
}

/// One robot's brain. No I/O: observations, body status and team messages go in through
/// method calls, commands and messages come out of [`Brain::step`].
#[derive(Debug, Clone)]
pub struct Brain {
    rules: RuleSet,
    wm: WorldModel,
    handler: ActionHandler,
    hout: HandlerOutput,
    out: BrainOutput,
    last_rule: Option<Option<usize>>,
    last_report: Option<u64>,
    last_gk_report: Option<u64>,
    reported_sight: Option<bool>,
    reported_mine: Option<bool>,
    predicates: PredicateSet,
    cycles: u64,
}

impl Brain {
    /// The brain of robot `id` playing `role` with `rules`.
    pub fn new(id: i32, role: Role, rules: RuleSet, params: BrainParams) -> Brain {
        Brain {
            rules,
            wm: WorldModel::new(id, role, params),
            handler: ActionHandler::new(),
            hout: HandlerOutput::default(),
            out: BrainOutput::default(),
            last_rule: None,
            last_report: None,
            last_gk_report: None,
            reported_sight: None,
            reported_mine: None,
            predicates: PredicateSet::default(),
            cycles: 0,
        }
    }

    /// The brain an `ini.config` describes, with its rules already loaded.
    pub fn from_config(cfg: &IniConfig, rules: RuleSet) -> Brain {
        Brain::new(cfg.id, cfg.role, rules, cfg.params)
    }

    /// Queues the announcement (`START`, `ROLE`); call once when the robot joins.
    pub fn start(&mut self) {
        self.wm.comm.announce();
    }

    /// Queues `LEAVE` (broadcast); call when the robot leaves the game.
    pub fn leave(&mut self) {
        self.wm.comm.send(BROADCAST, Param::Leave, 0);
    }

    /// Hands in one vision cycle at `now_ms`.
    pub fn observe(&mut self, now_ms: u64, frame: &[Sighting]) {
        self.wm.observe(now_ms, frame);
    }

    /// Hands in a received datagram at `now_ms`. Datagrams that are not exactly 16 bytes or
    /// carry an unknown param are counted and dropped.
    pub fn handle_datagram(&mut self, now_ms: u64, bytes: &[u8]) -> Received {
        let r = self.wm.comm.handle_datagram(bytes, now_ms);
        if let Received::Accepted(m) = r {
            self.apply_gk(m, now_ms);
        }
        r
    }

    /// Hands in a decoded message at `now_ms` (from the simulated radio).
    pub fn handle_message(&mut self, now_ms: u64, m: Message) -> Received {
        let r = self.wm.comm.handle_message(m, now_ms);
        if let Received::Accepted(m) = r {
            self.apply_gk(m, now_ms);
        }
        r
    }

    fn apply_gk(&mut self, m: Message, now_ms: u64) {
        if self.wm.role() != Role::Goalkeeper {
            return;
        }
        match m.param {
            Param::GkPosX => self.wm.set_gk_offset_x(m.value as f64, now_ms),
            Param::GkPosY => self.wm.set_gk_offset_y(m.value as f64, now_ms),
            _ => {}
        }
    }

    /// One decision cycle at `now_ms` with the body's latest status: expire teammates,
    /// compute the predicates, evaluate the rules (first true rule wins), run the action
    /// handler, queue the team reports.
    pub fn step(&mut self, now_ms: u64, status: &BodyStatus) -> &BrainOutput {
        self.cycles += 1;
        self.out.commands.clear();
        self.out.messages.clear();
        self.out.started = None;
        self.wm.comm.expire(now_ms);
        self.predicates = self.wm.predicates(now_ms);
        let picked = self.rules.evaluate(&self.predicates).map(|(i, a)| (i, *a));
        self.out.rule = picked.map(|(i, _)| i);
        if self.last_rule != Some(self.out.rule) {
            self.last_rule = Some(self.out.rule);
            match picked {
                Some((i, a)) => {
                    tracing::debug!(target: "futrob::rules", robot = self.wm.comm.id(), rule = i, name = %self.rules.rules()[i].name, action = %a, "rule fired")
                }
                None => {
                    tracing::debug!(target: "futrob::rules", robot = self.wm.comm.id(), "no rule matched")
                }
            }
        }
        if let Some((_, a)) = picked {
            self.handler.request(a);
        }
        self.hout.commands.clear();
        self.hout.started = None;
        self.handler
            .step(now_ms, &mut self.wm, status, &mut self.hout);
        for c in &self.hout.commands {
            tracing::debug!(target: "futrob::motors", robot = self.wm.comm.id(), command = %c, "command");
        }
        self.out.commands.extend_from_slice(&self.hout.commands);
        self.out.started = self.hout.started;
        if let Some(a) = self.hout.started {
            self.wm
                .comm
                .send(BROADCAST, Param::ActionTaken, a.kind.code());
        }
        self.reports(now_ms);
        while let Some(m) = self.wm.comm.poll_transmit() {
            self.out.messages.push(m);
        }
        &self.out
    }

    fn reports(&mut self, now_ms: u64) {
        let p = *self.wm.params();
        let sight = self.wm.in_sight(ObjectKind::Ball);
        let mine = self.wm.ball_held();
        let periodic = self
            .last_report
            .is_none_or(|t| now_ms.saturating_sub(t) >= p.report_period_ms);
        if periodic || self.reported_sight != Some(sight) {
            self.wm
                .comm
                .send(BROADCAST, Param::BallInSight, sight as i32);
            if sight {
                if let Some(b) = self.wm.object(ObjectKind::Ball).last_pos {
                    self.wm
                        .comm
                        .send(BROADCAST, Param::BallDistance, b.norm().round() as i32);
                }
            }
            self.reported_sight = Some(sight);
            self.last_report = Some(now_ms);
        }
        if self.reported_mine != Some(mine) {
            self.wm.comm.send(BROADCAST, Param::BallIsMine, mine as i32);
            self.reported_mine = Some(mine);
        }
        let gk_due = self
            .last_gk_report
            .is_none_or(|t| now_ms.saturating_sub(t) >= p.gk_pos_period_ms);
        if gk_due {
            if let Some((x, y)) = self.wm.keeper_report() {
                let to = self.wm.comm.keeper_id(now_ms).unwrap_or(BROADCAST);
                if let Some(x) = x {
                    self.wm.comm.send(to, Param::GkPosX, x);
                }
                if let Some(y) = y {
                    self.wm.comm.send(to, Param::GkPosY, y);
                }
                if x.is_some() || y.is_some() {
                    self.last_gk_report = Some(now_ms);
                }
            }
        }
    }

    /// Asks the action handler for `a` from outside the rules (a learning agent choosing
    /// FutRob's actions): ignored if it is the running action, else it starts at the next
    /// equilibrium point. With rules that also fire, the next step's rule can replace it.
    pub fn request(&mut self, a: Action) {
        self.handler.request(a);
    }

    /// The predicates as computed by the last step.
    pub fn predicates(&self) -> PredicateSet {
        self.predicates
    }

    /// The world model.
    pub fn world(&self) -> &WorldModel {
        &self.wm
    }

    /// The world model, to set up tests and experiments.
    pub fn world_mut(&mut self) -> &mut WorldModel {
        &mut self.wm
    }

    /// The action handler.
    pub fn handler(&self) -> &ActionHandler {
        &self.handler
    }

    /// The rules.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }

    /// Steps run.
    pub fn cycles(&self) -> u64 {
        self.cycles
    }
}
