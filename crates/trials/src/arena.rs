//! An in-process KidSize scene: the 3D world with its humanoids and ball, a FutRob brain per
//! robot that has one, each robot's head camera, and a simulated team radio per team —
//! stepped together with simulated time, no sockets.
//!
//! Each iteration: the world advances one physics iteration (10 ms); every robot's camera
//! view is computed from the world (`simrob_world::BrainView`, the same code the server's
//! `Humanoid_Brain` filter runs); every brain observes its camera frames, receives the team
//! messages due, and, every [`ArenaParams::brain_period_ms`], steps; its body requests go to
//! the world through a [`BodyLink`] exactly as a networked player's go over UDP.

use simrob_futrob::body::BodyLink;
use std::collections::BTreeMap;

use simrob_futrob::{Brain, BrainParams, ObjectKind, Param, Role, RuleSet, SimRadio, BROADCAST};
use simrob_protocol::EntityId;
use simrob_protocol::{EntityRequest, Vec3};
use simrob_soccer::field::BALL_ENTITY;
use simrob_soccer::{Action, ActionStatus, KidSizeField, Pose2, Posture, Profile, Team};
use simrob_world::brain::BrainView;
use simrob_world::{HumanoidSpec, RapierBackend, World, WorldConfig};

use crate::link::{body_report, request_of, sightings};
use crate::TrialError;

/// How the arena runs its brains and radios.
#[derive(Debug, Clone)]
pub struct ArenaParams {
    /// Motion noise, falls and camera: `paper` or `ideal`.
    pub profile: Profile,
    /// Seed of every random stream of the run (motion noise, camera, radio).
    pub seed: u64,
    /// A brain steps every this many simulated ms (camera frames and messages are taken in
    /// every iteration).
    pub brain_period_ms: u64,
    /// Team radio: probability that a message copy is lost.
    pub radio_loss: f64,
    /// Team radio: latency, ms.
    pub radio_latency_ms: u64,
}

impl ArenaParams {
    /// The `profile` run with `seed`: brains at 25 Hz, a loss-free radio with 20 ms latency.
    pub fn new(profile: Profile, seed: u64) -> Self {
        ArenaParams {
            profile,
            seed,
            brain_period_ms: 40,
            radio_loss: 0.0,
            radio_latency_ms: 20,
        }
    }
}

/// A robot to put on the field.
#[derive(Debug, Clone)]
pub struct PlayerSpec {
    /// Its entity id (also its FutRob robot id).
    pub entity: u32,
    /// The team it plays for.
    pub team: Team,
    /// Its FutRob role (goalkeeper or field player), which its rules read.
    pub role: Role,
    /// Where it stands (m) and its heading (rad, counter-clockwise from +X).
    pub pose: Pose2,
    /// Its behaviour rules; `None` for a robot without a brain (it stands where it is put).
    pub rules: Option<RuleSet>,
}

/// One robot of the arena.
#[derive(Debug, Clone)]
pub struct Player {
    /// Its entity id (also its FutRob robot id).
    pub entity: u32,
    /// The team it plays for.
    pub team: Team,
    /// Its FutRob role.
    pub role: Role,
    brain: Option<Brain>,
    view: BrainView,
    link: BodyLink,
    /// Actions started by its brain, by name.
    pub started: Vec<(u64, String)>,
    /// Times it went down.
    pub falls: u32,
    down: bool,
    /// When its brain joins the game, simulated ms ([`Arena::join_at`]; 0: at once).
    join_ms: u64,
    joined: bool,
}

impl Player {
    /// Its brain, if it has one.
    pub fn brain(&self) -> Option<&Brain> {
        self.brain.as_ref()
    }
    /// Requests its body refused.
    pub fn refused(&self) -> u64 {
        self.link.refused_count()
    }
    /// Whether its brain has joined the game (it sees, hears and sends from then on).
    pub fn joined(&self) -> bool {
        self.joined
    }
}

/// Something that watches the world after every iteration (a recorder, a viewer). It must
/// not change what it watches: observing a run never changes it. When a case trial ends
/// ([`Arena::end`]) it is called once more with the same world, its iteration the last
/// call's: the state the trial's judge decided on, which a recorder that writes every few
/// iterations writes too. It is `Send`, as the arena
/// is (the Python module steps an arena on the caller's thread with the GIL released).
pub type Observer = Box<dyn FnMut(&World<RapierBackend>) + Send>;

/// Something that looks at the whole arena (the world and every robot's brain) after every
/// iteration, to trace why the robots do what they do. Like an observer, it cannot change
/// the run.
pub type Inspector = Box<dyn FnMut(&Arena) + Send>;

/// See the module documentation.
pub struct Arena {
    world: World<RapierBackend>,
    field: KidSizeField,
    params: ArenaParams,
    players: Vec<Player>,
    radios: Vec<(Team, SimRadio)>,
    next_brain_ms: u64,
    observer: Option<Observer>,
    inspector: Option<Inspector>,
    /// Team messages put on the air.
    pub messages_sent: u64,
    /// Messages put on the air by (param code, directed to one robot).
    sent_by: BTreeMap<(i32, bool), u64>,
}

impl Arena {
    /// The KidSize field with its ball on the centre spot and no robots.
    pub fn new(params: ArenaParams) -> Result<Arena, TrialError> {
        let field = KidSizeField::default();
        let world = World::kidsize(WorldConfig::default(), &field)?;
        Ok(Arena {
            world,
            field,
            params,
            players: Vec::new(),
            radios: Vec::new(),
            next_brain_ms: 0,
            observer: None,
            inspector: None,
            messages_sent: 0,
            sent_by: BTreeMap::new(),
        })
    }

    /// Calls `observer` with the world after every iteration from now on.
    pub fn observe(&mut self, observer: Observer) {
        self.observer = Some(observer);
    }

    /// Shows the observer the world once more, as it stands (the same iteration as its last
    /// call): a case trial calls it when its judge has decided, so that a recording ends on
    /// the state that decided the trial. Nothing else changes.
    pub fn end(&mut self) {
        if let Some(o) = self.observer.as_mut() {
            o(&self.world);
        }
    }

    /// Calls `inspector` with the arena after every iteration from now on.
    pub fn inspect(&mut self, inspector: Inspector) {
        self.inspector = Some(inspector);
    }

    /// Adds the robots (call once, before the first step).
    pub fn add_players(&mut self, specs: Vec<PlayerSpec>) -> Result<(), TrialError> {
        for s in specs {
            self.world.create_humanoid(&HumanoidSpec {
                entity_id: EntityId(s.entity),
                team: s.team,
                pose: s.pose,
                profile: self.params.profile.name.clone(),
                seed: Some(mix(self.params.seed, s.entity as u64)),
                material: None,
            })?;
            let brain = s.rules.map(|rules| {
                // The brain is configured as an `ini.config` would configure it: the default
                // `rangeCalibration` (FutRob's camera, the `paper` profile's), off on an exact
                // camera as with `simrob soccer player --ideal-camera`.
                let exact = self.params.profile.camera.distance_error.is_empty();
                let params = if exact {
                    BrainParams::default().on_exact_camera()
                } else {
                    BrainParams::default()
                };
                // It announces itself when it joins (at once unless `join_at` says later).
                Brain::new(s.entity as i32, s.role, rules, params)
            });
            self.players.push(Player {
                entity: s.entity,
                team: s.team,
                role: s.role,
                brain,
                view: BrainView::new(
                    s.entity,
                    self.params.profile.camera.clone(),
                    mix(self.params.seed, 1000 + s.entity as u64),
                ),
                link: BodyLink::default(),
                started: Vec::new(),
                falls: 0,
                down: false,
                join_ms: 0,
                joined: false,
            });
        }
        for team in [Team::Cyan, Team::Magenta] {
            let ids: Vec<i32> = self
                .players
                .iter()
                .filter(|p| p.team == team && p.brain.is_some())
                .map(|p| p.entity as i32)
                .collect();
            if !ids.is_empty() {
                let radio = SimRadio::new(
                    &ids,
                    self.params.radio_loss,
                    self.params.radio_latency_ms,
                    0,
                    mix(self.params.seed, 7 + team as u64),
                );
                self.radios.push((team, radio));
            }
        }
        Ok(())
    }

    /// Robot `entity`'s brain joins the game at `ms` of simulated time instead of at once
    /// (call before the first step): until then it neither sees, hears nor sends and its
    /// body stands where it was put; when it joins it announces itself (`START`, `ROLE`), as
    /// a robot switched on late does. Its teammates' announcements went out before: it
    /// learns of them from their next messages and asks their roles.
    pub fn join_at(&mut self, entity: u32, ms: u64) {
        if let Some(p) = self.players.iter_mut().find(|p| p.entity == entity) {
            p.join_ms = ms;
        }
    }

    /// Team-message copies the radios lost so far.
    pub fn radio_lost(&self) -> u64 {
        self.radios.iter().map(|(_, r)| r.lost()).sum()
    }

    /// Messages with `param` put on the air so far, directed to one robot (`directed`) or
    /// broadcast.
    pub fn sent_count(&self, param: Param, directed: bool) -> u64 {
        self.sent_by
            .get(&(param.code(), directed))
            .copied()
            .unwrap_or(0)
    }

    /// Puts the ball at `(x, y)` on the floor with velocity `(vx, vy)` m/s.
    pub fn place_ball(&mut self, x: f64, y: f64, vx: f64, vy: f64) -> Result<(), TrialError> {
        let position: Vec3 = [x, y, self.field.ball_radius];
        self.world.apply_entity(&EntityRequest::SetEntityPosition {
            entity_id: BALL_ENTITY,
            position,
        })?;
        let r = self.field.ball_radius;
        // Rolling without slipping: spin about the axis perpendicular to the motion.
        self.world
            .set_entity_velocity(BALL_ENTITY, [vx, vy, 0.0], [-vy / r, vx / r, 0.0])?;
        Ok(())
    }

    /// Puts robot `entity` at `pose`, standing, its action cancelled.
    pub fn place_robot(&mut self, entity: u32, pose: Pose2) -> Result<(), TrialError> {
        self.world.place_humanoid(EntityId(entity), pose)?;
        Ok(())
    }

    /// The ball's centre (m).
    pub fn ball(&self) -> [f64; 3] {
        self.world
            .entity_pose(BALL_ENTITY)
            .map(|(p, _)| p)
            .unwrap_or([0.0; 3])
    }

    /// A robot's pose on the floor.
    pub fn robot_pose(&self, entity: u32) -> Option<Pose2> {
        self.world.humanoid(EntityId(entity)).map(|h| h.pose())
    }

    /// The robots.
    pub fn players(&self) -> &[Player] {
        &self.players
    }

    /// Robot `entity`'s brain, to hand it actions chosen outside its rules (a learning
    /// agent); `None` for an unknown robot or one without a brain.
    pub fn brain_mut(&mut self, entity: u32) -> Option<&mut Brain> {
        self.players
            .iter_mut()
            .find(|p| p.entity == entity)
            .and_then(|p| p.brain.as_mut())
    }

    /// The field's dimensions.
    pub fn field(&self) -> &KidSizeField {
        &self.field
    }

    /// The world (read-only), for judges and recorders.
    pub fn world(&self) -> &World<RapierBackend> {
        &self.world
    }

    /// Simulated time, ms.
    pub fn now_ms(&self) -> u64 {
        (self.world.sim_time() * 1000.0).round() as u64
    }

    /// One iteration of the world, the cameras, the radios and (when due) the brains.
    pub fn step(&mut self) -> Result<(), TrialError> {
        if !self.world.advance() {
            return Err(TrialError::Stalled);
        }
        if let Some(o) = self.observer.as_mut() {
            o(&self.world);
        }
        let now = self.now_ms();
        let iteration = self.world.iteration();
        for p in &mut self.players {
            if let (false, Some(brain)) = (p.joined, p.brain.as_mut()) {
                if now >= p.join_ms {
                    p.joined = true;
                    brain.start();
                }
            }
        }
        let snap = self.world.soccer_snapshot();
        for p in &mut self.players {
            let Some(b) = p.view.view(iteration, &snap) else {
                continue;
            };
            let report = body_report(&b);
            let down = report.fallen.is_some();
            if down && !p.down {
                p.falls += 1;
            }
            p.down = down;
            p.link.report(now, &report);
            if let (true, Some(brain), Some(frame)) = (p.joined, p.brain.as_mut(), sightings(&b)) {
                brain.observe(now, &frame);
            }
        }
        for (team, radio) in &mut self.radios {
            for (to, m) in radio.deliver(now) {
                if let Some(brain) = self
                    .players
                    .iter_mut()
                    .find(|p| p.team == *team && p.entity as i32 == to && p.joined)
                    .and_then(|p| p.brain.as_mut())
                {
                    brain.handle_message(now, m);
                }
            }
        }
        let think = now >= self.next_brain_ms;
        if think {
            self.next_brain_ms = now + self.params.brain_period_ms;
        }
        for p in &mut self.players {
            if !p.joined {
                continue;
            }
            let Some(brain) = p.brain.as_mut() else {
                continue;
            };
            if think {
                let out = brain.step(now, &p.link.status());
                p.link.command(&out.commands);
                if let Some(a) = &out.started {
                    p.started.push((now, a.kind.name().to_string()));
                }
                if let Some((_, radio)) = self.radios.iter_mut().find(|(t, _)| *t == p.team) {
                    for m in &out.messages {
                        radio.send(*m, now);
                        self.messages_sent += 1;
                        *self
                            .sent_by
                            .entry((m.param.code(), m.destination != BROADCAST))
                            .or_default() += 1;
                    }
                }
            }
            while let Some(a) = p.link.poll_request(now) {
                let (name, params) = request_of(&a);
                match self
                    .world
                    .humanoid_action(EntityId(p.entity), name, &params)
                {
                    Ok(_) => break,
                    Err(e) => {
                        tracing::debug!(target: "trials", robot = p.entity, action = %a, error = %e, "refused");
                        p.link.refused();
                    }
                }
            }
        }
        if let Some(mut inspect) = self.inspector.take() {
            inspect(self);
            self.inspector = Some(inspect);
        }
        Ok(())
    }

    /// One line for the ball and one per robot: its pose (m, degrees), posture, running
    /// action, the body segment under way, where it believes the ball is (cm, its frame;
    /// `*` when in sight) and its head (pan, tilt) — a trace of why the robots do what they do.
    pub fn describe(&self) -> String {
        let t = self.now_ms() as f64 / 1000.0;
        let b = self.ball();
        let mut line = format!("{t:6.2} ball {:5.2} {:5.2}", b[0], b[1]);
        for p in &self.players {
            let Some(q) = self.robot_pose(p.entity) else {
                continue;
            };
            let (action, seg, seen, sees) = match p.brain() {
                Some(br) => (
                    br.handler()
                        .current()
                        .map(|x| x.to_string())
                        .unwrap_or_default(),
                    br.handler()
                        .in_flight()
                        .map(|x| x.to_string())
                        .unwrap_or_default(),
                    br.world()
                        .position(ObjectKind::Ball)
                        .map(|v| format!("{:.0},{:.0}", v.x, v.y))
                        .unwrap_or_else(|| "-".into()),
                    br.world().in_sight(ObjectKind::Ball),
                ),
                None => Default::default(),
            };
            let up = if self.standing(p.entity) { "" } else { " DOWN" };
            let h = self.world.humanoid(EntityId(p.entity));
            let head = h.map(|h| h.head()).unwrap_or_default();
            let body = h
                .and_then(|h| h.action_state())
                .map(|a| format!(" body {}#{} {}", a.action, a.seq, a.status.as_str()))
                .unwrap_or_default();
            line += &format!(
                "\n    {} {:6.3},{:6.3},{:5.1}{up} {action} [{seg}] ball@{seen}{} head {:.0},{:.0}{body}",
                p.entity,
                q.x,
                q.y,
                q.heading.to_degrees(),
                if sees { "*" } else { "" },
                head.0.to_degrees(),
                head.1.to_degrees(),
            );
        }
        line
    }

    /// Whether robot `entity` is standing (not down, not diving).
    pub fn standing(&self, entity: u32) -> bool {
        self.world
            .humanoid(EntityId(entity))
            .is_some_and(|h| h.posture() == Posture::Standing)
    }

    /// The sequence number of robot `entity`'s kick under way (its body's request), 0 when
    /// it is not kicking: one kick keeps one number from the swing to the end.
    pub fn kick(&self, entity: u32) -> u64 {
        self.world
            .humanoid(EntityId(entity))
            .and_then(|h| h.action_state())
            .filter(|a| a.status == ActionStatus::Running && matches!(a.action, Action::Kick(_)))
            .map_or(0, |a| a.seq)
    }
}

/// A seed for stream `k` of a run seeded `seed`: one SplitMix64 step from
/// `seed + k·0xBF58476D1CE4E5B9`.
pub fn mix(seed: u64, k: u64) -> u64 {
    simrob_math::splitmix64(seed.wrapping_add(k.wrapping_mul(0xBF58_476D_1CE4_E5B9)))
}

#[cfg(test)]
mod pins {
    use super::*;

    /// The stream seeds of a run pinned: seeds recorded today replay forever.
    #[test]
    fn stream_seeds_are_pinned() {
        assert_eq!(mix(0, 0), 0xe220a8397b1dcdaf);
        assert_eq!(mix(1, 2), 0x68d4364de9aee53c);
        assert_eq!(mix(42, 1000), 0x21bfb843330a908a);
        assert_eq!(mix(u64::MAX, 7), 0x91436a5526acc133);
    }
}
