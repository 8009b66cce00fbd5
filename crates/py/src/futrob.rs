//! The FutRob case studies in this process (`simrob._native.futrob_trial`), and the FutRob
//! team task (`simrob._native.FutRobTeam`) under `simrob.pettingzoo.futrob`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use simrob_soccer::Profile;
use simrob_trials::{run_trial, Case};

/// The case studies' names: penalty-kick, penalty-save, discovery, relocation, pass.
#[pyfunction]
pub fn futrob_cases() -> Vec<&'static str> {
    Case::ALL.iter().map(|c| c.name()).collect()
}

/// Runs trial `trial` of FutRob case study `case` for a run seeded `seed` with noise profile
/// `profile` ("paper" or "ideal"), the GIL released; returns the result as a dict (case,
/// trial, seed, scenario, placement, outcome, success, metrics, sim_seconds), the same as
/// one row of `simrob soccer case --json`.
#[pyfunction]
#[pyo3(signature = (case, trial=Whole(0), seed=Whole(0), profile="paper"), text_signature = "(case, trial=0, seed=0, profile='paper')")]
pub fn futrob_trial(
    py: Python<'_>,
    case: &str,
    trial: Whole<u32>,
    seed: Whole<u64>,
    profile: &str,
) -> PyResult<Py<PyAny>> {
    let (trial, seed) = (trial.0, seed.0);
    let c = Case::parse(case).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown case {case:?}: one of {}",
            futrob_cases().join(", ")
        ))
    })?;
    let p = Profile::named(profile).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown profile {profile:?}: \"paper\" or \"ideal\""
        ))
    })?;
    let result = py
        .detach(|| run_trial(c, trial, seed, &p))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let text = serde_json::to_string(&result)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

// ---------------------------------------------------------------------------------------
// The FutRob team task: KidSize players driven by FutRob's actions chosen from Python.
// ---------------------------------------------------------------------------------------

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyRuntimeError;
use simrob_futrob::{Action, ActionKind, Predicate, Role, RuleSet};
use simrob_math::Xoshiro256StarStar;
use simrob_soccer::{Pose2, Team};
use simrob_trials::matchplay::alternate_kick_off;
use simrob_trials::{Arena, ArenaParams, PlayerSpec};

use crate::Local;
use crate::Whole;

/// The actions an agent chooses from: `(name, FutRob action, its parameter)`. The body's
/// basic actions (one step, one 20° turn quantum, a kick or a dive) and FutRob's
/// behaviours, run by the robot's FutRob action handler on its world model.
pub const TEAM_ACTIONS: [(&str, ActionKind, Option<f64>); 21] = [
    ("none", ActionKind::None, None),
    ("walk", ActionKind::Walk, None),
    ("walkLeft", ActionKind::WalkLeft, None),
    ("walkRight", ActionKind::WalkRight, None),
    ("turnLeft", ActionKind::Turn, Some(-20.0)),
    ("turnRight", ActionKind::Turn, Some(20.0)),
    ("kickLeft", ActionKind::KickLeft, None),
    ("kickRight", ActionKind::KickRight, None),
    ("saveLeft", ActionKind::SaveLeft, None),
    ("saveRight", ActionKind::SaveRight, None),
    ("findBall", ActionKind::FindBall, None),
    ("lookAtBall", ActionKind::LookAtBall, None),
    ("followBall", ActionKind::FollowBall, None),
    ("kickBall", ActionKind::KickBall, None),
    ("passBall", ActionKind::PassBall, None),
    ("clearBall", ActionKind::ClearBall, None),
    ("supportBall", ActionKind::SupportBall, None),
    ("save", ActionKind::Save, None),
    ("relocate", ActionKind::Relocate, None),
    ("findOppGoal", ActionKind::FindOppGoal, None),
    ("findMyGoal", ActionKind::FindMyGoal, None),
];

/// Numbers per robot of the observation besides the agent itself.
const OTHER_OBS: usize = 5;
/// Numbers of the observation about the agent itself and the ball.
const SELF_BALL_OBS: usize = 13;

/// Length of one agent's observation with `per_team` players a side.
pub fn team_obs_len(per_team: usize) -> usize {
    SELF_BALL_OBS + OTHER_OBS * (2 * per_team - 1) + Predicate::COUNT
}

/// Numbers of the ground-truth state with `per_team` players a side.
pub fn team_state_len(per_team: usize) -> usize {
    4 + 5 * 2 * per_team
}

/// Entity id of player `k` of `team` (cyan 3, 4, 5; magenta 6, 7, 8, as in a match).
fn entity_of(team: Team, k: usize) -> u32 {
    match team {
        Team::Cyan => 3 + k as u32,
        Team::Magenta => 6 + k as u32,
    }
}

/// Roles of a side of `n` players: one field player; a keeper and a field player; a keeper
/// and two field players.
fn roles(n: usize) -> Vec<Role> {
    match n {
        1 => vec![Role::FieldPlayer],
        2 => vec![Role::Goalkeeper, Role::FieldPlayer],
        _ => vec![Role::Goalkeeper, Role::FieldPlayer, Role::FieldPlayer],
    }
}

/// `+1` for cyan (attacks +X), `-1` for magenta.
fn side(team: Team) -> f64 {
    match team {
        Team::Cyan => 1.0,
        Team::Magenta => -1.0,
    }
}

fn team_index(t: Team) -> usize {
    match t {
        Team::Cyan => 0,
        Team::Magenta => 1,
    }
}

/// The random stream of the kick-off jitter (apart from the arena's streams).
const JITTER_STREAM: u64 = 0x0046_5554_524f_4254;

/// How the team task is set up.
#[derive(Debug, Clone)]
struct TeamSetup {
    per_team: usize,
    /// Magenta played by FutRob's match rules instead of agents.
    futrob_opponent: bool,
    profile: simrob_soccer::Profile,
    iterations: u32,
    shaping: f64,
}

/// One episode.
struct TeamRun {
    arena: Arena,
    /// Entity ids, cyan's then magenta's, in agent order.
    robots: Vec<(u32, Team)>,
    /// How many of `robots` are agents (all, or cyan's).
    agents: usize,
    prev_ball: [f64; 3],
    ball_velocity: [f64; 2],
    goals: [u32; 2],
    outs: u32,
}

/// Kick-off places of side `team` (`kicking` kicks off), jittered by `rng` (±5 cm, ±5°).
fn line_up(
    n: usize,
    team: Team,
    kicking: Team,
    half_length: f64,
    rng: &mut Xoshiro256StarStar,
) -> Vec<Pose2> {
    let s = side(team);
    let facing = if s > 0.0 { 0.0 } else { std::f64::consts::PI };
    // Cyan's places (x < 0); magenta's are turned half a turn about the centre spot.
    let mut places: Vec<(f64, f64)> = Vec::new();
    for (k, role) in roles(n).into_iter().enumerate() {
        let field_k = if n == 1 { k } else { k.saturating_sub(1) };
        places.push(match (role, field_k) {
            (Role::Goalkeeper, _) => (-(half_length - 0.30), 0.0),
            (_, 0) if team == kicking => (-0.30, 0.0),
            (_, 0) => (-1.0, 0.8),
            _ => (-1.0, -0.8),
        });
    }
    places
        .into_iter()
        .map(|(x, y)| {
            let jx = (rng.next_f64() - 0.5) * 0.10;
            let jy = (rng.next_f64() - 0.5) * 0.10;
            let jh = (rng.next_f64() - 0.5) * 10f64.to_radians();
            Pose2 {
                x: s * x + jx,
                y: s * y + jy,
                heading: facing + jh,
            }
        })
        .collect()
}

fn bundled_rules(role: Role) -> Result<RuleSet, String> {
    let (xml, name) = match role {
        Role::Goalkeeper => (
            include_str!("../../../scenarios/soccer/rules/goalkeeper.xml"),
            "goalkeeper.xml",
        ),
        Role::FieldPlayer => (
            include_str!("../../../scenarios/soccer/rules/field_player.xml"),
            "field_player.xml",
        ),
    };
    RuleSet::parse(xml, name).map_err(|e| e.to_string())
}

fn build_team(setup: &TeamSetup, seed: u64) -> Result<TeamRun, String> {
    let mut arena =
        Arena::new(ArenaParams::new(setup.profile.clone(), seed)).map_err(|e| e.to_string())?;
    let hl = arena.field().length / 2.0;
    let kicking = alternate_kick_off(seed);
    let mut rng = Xoshiro256StarStar::for_stream(seed, JITTER_STREAM);
    let empty = RuleSet::parse("<RuleSet></RuleSet>", "agent").map_err(|e| e.to_string())?;
    let mut specs = Vec::new();
    let mut robots = Vec::new();
    for team in [Team::Cyan, Team::Magenta] {
        let poses = line_up(setup.per_team, team, kicking, hl, &mut rng);
        for (k, (role, pose)) in roles(setup.per_team).into_iter().zip(poses).enumerate() {
            let entity = entity_of(team, k);
            let rules = if team == Team::Magenta && setup.futrob_opponent {
                bundled_rules(role)?
            } else {
                empty.clone()
            };
            specs.push(PlayerSpec {
                entity,
                team,
                role,
                pose,
                rules: Some(rules),
            });
            robots.push((entity, team));
        }
    }
    arena.add_players(specs).map_err(|e| e.to_string())?;
    arena
        .place_ball(0.0, 0.0, 0.0, 0.0)
        .map_err(|e| e.to_string())?;
    let agents = if setup.futrob_opponent {
        setup.per_team
    } else {
        2 * setup.per_team
    };
    Ok(TeamRun {
        prev_ball: arena.ball(),
        arena,
        robots,
        agents,
        ball_velocity: [0.0; 2],
        goals: [0; 2],
        outs: 0,
    })
}

/// What one step ended with.
struct TeamStep {
    obs: Vec<f32>,
    rewards: Vec<f64>,
    /// Index of the team that scored (0 cyan, 1 magenta), if one did.
    scorer: Option<usize>,
    ball_out: bool,
}

impl TeamRun {
    /// One agent step: the actions handed to the brains, then `iterations` iterations of
    /// the arena (stopping at a goal), with the referee's ball-out rule.
    fn step(&mut self, setup: &TeamSetup, actions: &[usize]) -> Result<TeamStep, String> {
        for (i, &a) in actions.iter().enumerate() {
            let (entity, _) = self.robots[i];
            let (_, kind, param) = TEAM_ACTIONS[a];
            if let Some(b) = self.arena.brain_mut(entity) {
                b.request(Action { kind, param });
            }
        }
        let f = self.arena.field().clone();
        let (hl, hw) = (f.length / 2.0, f.width / 2.0);
        let mut start_x = self.arena.ball()[0];
        let mut scorer = None;
        let mut ball_out = false;
        let mut progress = 0.0;
        let dt = 0.01;
        for _ in 0..setup.iterations {
            self.arena.step().map_err(|e| e.to_string())?;
            let b = self.arena.ball();
            self.ball_velocity = [
                (b[0] - self.prev_ball[0]) / dt,
                (b[1] - self.prev_ball[1]) / dt,
            ];
            self.prev_ball = b;
            let over_goal_line = b[0].abs() > hl + f.ball_radius;
            if over_goal_line && b[1].abs() < f.goal_width / 2.0 {
                let t = if b[0] > 0.0 { 0 } else { 1 };
                self.goals[t] += 1;
                scorer = Some(t);
                break;
            }
            if over_goal_line || b[1].abs() > hw + f.ball_radius {
                // Put back 30 cm inside, as the match referee does; the ball's progress
                // counts up to where it left and restarts from where it is put.
                progress += b[0] - start_x;
                let x = b[0].clamp(-(hl - 0.30), hl - 0.30);
                let y = b[1].clamp(-(hw - 0.30), hw - 0.30);
                self.arena
                    .place_ball(x, y, 0.0, 0.0)
                    .map_err(|e| e.to_string())?;
                self.prev_ball = self.arena.ball();
                start_x = self.prev_ball[0];
                self.ball_velocity = [0.0; 2];
                self.outs += 1;
                ball_out = true;
            }
        }
        progress += self.arena.ball()[0] - start_x;
        let rewards = self.robots[..self.agents]
            .iter()
            .map(|&(_, team)| {
                let goal = match scorer {
                    Some(t) if t == team_index(team) => 1.0,
                    Some(_) => -1.0,
                    None => 0.0,
                };
                goal + setup.shaping * side(team) * progress
            })
            .collect();
        Ok(TeamStep {
            obs: self.observe(setup),
            rewards,
            scorer,
            ball_out,
        })
    }

    /// Every agent's observation, laid end to end (see the Python module's documentation).
    fn observe(&self, setup: &TeamSetup) -> Vec<f32> {
        let f = self.arena.field();
        let (hl, hw) = (f.length / 2.0, f.width / 2.0);
        let k = team_obs_len(setup.per_team);
        let mut out = Vec::with_capacity(k * self.agents);
        let ball = self.arena.ball();
        let poses: Vec<Pose2> = self
            .robots
            .iter()
            .map(|&(e, _)| self.arena.robot_pose(e).unwrap_or_default())
            .collect();
        for i in 0..self.agents {
            let (entity, team) = self.robots[i];
            let s = side(team);
            let me = poses[i];
            // The team frame: the team attacks +X.
            let th = me.heading + if s > 0.0 { 0.0 } else { std::f64::consts::PI };
            let brain = self.arena.players().iter().find(|p| p.entity == entity);
            let busy = brain
                .and_then(|p| p.brain())
                .is_some_and(|b| b.handler().in_flight().is_some());
            let o = [
                s * me.x / hl,
                s * me.y / hw,
                th.cos(),
                th.sin(),
                f64::from(u8::from(self.arena.standing(entity))),
                f64::from(u8::from(busy)),
            ];
            out.extend(o.iter().map(|&v| v as f32));
            let [bf, bl] = me.to_local([ball[0], ball[1]]);
            let b = [
                bf,
                bl,
                bf.hypot(bl),
                s * ball[0] / hl,
                s * ball[1] / hw,
                s * self.ball_velocity[0],
                s * self.ball_velocity[1],
            ];
            out.extend(b.iter().map(|&v| v as f32));
            // Teammates (in order, without the agent), then opponents (in order).
            let mates = self
                .robots
                .iter()
                .enumerate()
                .filter(|&(j, &(_, t))| t == team && j != i);
            let opps = self
                .robots
                .iter()
                .enumerate()
                .filter(|&(_, &(_, t))| t != team);
            for (j, &(e, _)) in mates.chain(opps) {
                let q = poses[j];
                let [qf, ql] = me.to_local([q.x, q.y]);
                let rel = q.heading - me.heading;
                let r = [
                    qf,
                    ql,
                    rel.cos(),
                    rel.sin(),
                    f64::from(u8::from(self.arena.standing(e))),
                ];
                out.extend(r.iter().map(|&v| v as f32));
            }
            let preds = brain
                .and_then(|p| p.brain())
                .map(|b| b.predicates())
                .unwrap_or_default();
            out.extend(Predicate::all().map(|p| f32::from(u8::from(preds.get(p)))));
        }
        out
    }

    /// The ground truth in field coordinates: ball x, y (m), vx, vy (m/s); then per robot
    /// (cyan's, then magenta's) x, y (m), cos and sin of its heading, standing.
    fn state(&self) -> Vec<f32> {
        let b = self.arena.ball();
        let mut out = vec![
            b[0] as f32,
            b[1] as f32,
            self.ball_velocity[0] as f32,
            self.ball_velocity[1] as f32,
        ];
        for &(e, _) in &self.robots {
            let q = self.arena.robot_pose(e).unwrap_or_default();
            out.extend_from_slice(&[
                q.x as f32,
                q.y as f32,
                q.heading.cos() as f32,
                q.heading.sin() as f32,
                f32::from(u8::from(self.arena.standing(e))),
            ]);
        }
        out
    }
}

/// FutRob's team task: `players_per_team` KidSize humanoids a side (1: a field player; 2: a
/// keeper and a field player; 3: a keeper and two field players), each with a FutRob brain
/// (camera, world model, team radio, action handler) whose actions are chosen by an agent
/// instead of rules; with `opponent="futrob"` magenta is played by FutRob's match rules.
#[pyclass(module = "simrob._native", subclass)]
pub struct FutRobTeam {
    setup: TeamSetup,
    run: Option<Local<Option<TeamRun>>>,
}

impl FutRobTeam {
    fn worker(&self) -> PyResult<&Local<Option<TeamRun>>> {
        self.run.as_ref().ok_or_else(|| crate::closed("FutRobTeam"))
    }
    fn agents(&self) -> usize {
        if self.setup.futrob_opponent {
            self.setup.per_team
        } else {
            2 * self.setup.per_team
        }
    }
}

/// What `FutRobTeam.step` returns.
type TeamStepOut<'py> = (
    Bound<'py, PyArray2<f32>>,
    Bound<'py, PyArray1<f64>>,
    Option<usize>,
    bool,
);

#[pymethods]
impl FutRobTeam {
    /// `FutRobTeam(players_per_team=2, opponent="agents", profile="paper", step_ms=200,
    /// shaping=0.0)`: `opponent` is "agents" (both teams are agents) or "futrob" (magenta
    /// plays FutRob's match rules); a step lasts `step_ms` simulated ms (a multiple of 10,
    /// 10 to 10 000); `shaping` (finite, |shaping| <= 100) adds `shaping` × the ball's
    /// progress towards the opponents' goal (m) to each agent's reward.
    #[new]
    #[pyo3(
        signature = (players_per_team=Whole(2), opponent="agents", profile="paper", step_ms=Whole(200), shaping=0.0),
        text_signature = "(players_per_team=2, opponent='agents', profile='paper', step_ms=200, shaping=0.0)"
    )]
    fn new(
        py: Python<'_>,
        players_per_team: Whole<usize>,
        opponent: &str,
        profile: &str,
        step_ms: Whole<u32>,
        shaping: f64,
    ) -> PyResult<Self> {
        let (players_per_team, step_ms) = (players_per_team.0, step_ms.0);
        if !(1..=3).contains(&players_per_team) {
            return Err(PyValueError::new_err(format!(
                "players_per_team = {players_per_team}: 1, 2 or 3"
            )));
        }
        let futrob_opponent = match opponent {
            "agents" => false,
            "futrob" => true,
            o => {
                return Err(PyValueError::new_err(format!(
                    "opponent {}: \"agents\" or \"futrob\"",
                    quoted(o)
                )))
            }
        };
        let p = Profile::named(profile).ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown profile {}: \"paper\" or \"ideal\"",
                quoted(profile)
            ))
        })?;
        if !(10..=10_000).contains(&step_ms) || step_ms % 10 != 0 {
            return Err(PyValueError::new_err(format!(
                "step_ms = {step_ms}: a multiple of 10 from 10 to 10000"
            )));
        }
        if !shaping.is_finite() || shaping.abs() > 100.0 {
            return Err(PyValueError::new_err(format!(
                "shaping = {shaping}: a finite number within [-100, 100]"
            )));
        }
        Ok(FutRobTeam {
            setup: TeamSetup {
                per_team: players_per_team,
                futrob_opponent,
                profile: p,
                iterations: step_ms / 10,
                shaping,
            },
            run: Some(Local::start(py, || Ok(None))?),
        })
    }

    /// The agents' robots: `(team, entity id, role)` each, cyan's first.
    fn players(&self) -> Vec<(&'static str, u32, &'static str)> {
        let mut v = Vec::new();
        for team in [Team::Cyan, Team::Magenta] {
            for (k, role) in roles(self.setup.per_team).into_iter().enumerate() {
                v.push((
                    team.as_str(),
                    entity_of(team, k),
                    match role {
                        Role::Goalkeeper => "goalkeeper",
                        Role::FieldPlayer => "field player",
                    },
                ));
            }
        }
        v.truncate(self.agents());
        v
    }

    /// Length of one agent's observation.
    #[getter]
    fn obs_len(&self) -> usize {
        team_obs_len(self.setup.per_team)
    }

    /// Length of `state()`.
    #[getter]
    fn state_len(&self) -> usize {
        team_state_len(self.setup.per_team)
    }

    /// Starts an episode from `seed` (kick-off places jittered, every noise stream, the
    /// kicking team: cyan for odd seeds); returns the observations `(agents, obs_len)`.
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: Whole<u64>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let seed = seed.0;
        let setup = self.setup.clone();
        let (n, k) = (self.agents(), self.obs_len());
        let obs = self.worker()?.call(py, move |slot| {
            let run = build_team(&setup, seed)?;
            let obs = run.observe(&setup);
            *slot = Some(run);
            Ok::<_, String>(obs)
        })?;
        let obs = obs.map_err(PyRuntimeError::new_err)?;
        let a = Array2::from_shape_vec((n, k), obs)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(a.into_pyarray(py))
    }

    /// One step with `actions` (`(agents,)` integers of any integer type, or a list: indices
    /// into `team_actions()`).
    /// Returns `(obs (agents, obs_len) float32, rewards (agents,), scorer, ball_out)`:
    /// `scorer` is 0 (cyan) or 1 (magenta) when a goal ended the step, else None;
    /// `ball_out` when the ball left the field and was put back 30 cm inside.
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: &Bound<'py, PyAny>,
    ) -> PyResult<TeamStepOut<'py>> {
        let (n, k) = (self.agents(), self.obs_len());
        self.worker()?;
        let actions = crate::integers(actions, "actions")?;
        let a = actions.as_array();
        if a.len() != n {
            return Err(PyValueError::new_err(format!(
                "{} actions: expected {n}",
                a.len()
            )));
        }
        let mut acts = Vec::with_capacity(n);
        for &x in a.iter() {
            match usize::try_from(x) {
                Ok(i) if i < TEAM_ACTIONS.len() => acts.push(i),
                _ => {
                    return Err(PyValueError::new_err(format!(
                        "action {x}: an index from 0 to {}",
                        TEAM_ACTIONS.len() - 1
                    )))
                }
            }
        }
        let setup = self.setup.clone();
        let out = self.worker()?.call(py, move |slot| match slot.as_mut() {
            Some(run) => run.step(&setup, &acts),
            None => Err("call reset before step".into()),
        })?;
        let s = out.map_err(PyRuntimeError::new_err)?;
        let obs = Array2::from_shape_vec((n, k), s.obs)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok((
            obs.into_pyarray(py),
            s.rewards.into_pyarray(py),
            s.scorer,
            s.ball_out,
        ))
    }

    /// The ground truth `(state_len,)` float32: ball x, y (m), vx, vy (m/s), then per robot
    /// (cyan's, then magenta's) x, y (m), cos and sin of its heading, 1 if standing.
    fn state<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let s = self
            .worker()?
            .call(py, |slot| slot.as_ref().map(TeamRun::state))?
            .ok_or_else(|| PyRuntimeError::new_err("call reset first"))?;
        Ok(s.into_pyarray(py))
    }

    /// `(cyan, magenta)` goals and balls put back since the reset.
    fn score(&self, py: Python<'_>) -> PyResult<(u32, u32, u32)> {
        self.worker()?
            .call(py, |slot| {
                slot.as_ref().map(|r| (r.goals[0], r.goals[1], r.outs))
            })?
            .ok_or_else(|| PyRuntimeError::new_err("call reset first"))
    }

    /// Simulated seconds since the reset.
    fn sim_time(&self, py: Python<'_>) -> PyResult<f64> {
        self.worker()?
            .call(py, |slot| {
                slot.as_ref().map(|r| r.arena.now_ms() as f64 / 1000.0)
            })?
            .ok_or_else(|| PyRuntimeError::new_err("call reset first"))
    }

    /// Frees the run; using it afterwards raises `RuntimeError`.
    fn close(&mut self) {
        self.run = None;
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.run.is_none()
    }
}

/// The team task's action names, by index.
#[pyfunction]
pub fn team_actions() -> Vec<&'static str> {
    TEAM_ACTIONS.iter().map(|a| a.0).collect()
}

/// The names of the observation's predicate entries, one per FutRob predicate (the robot's FutRob world model).
#[pyfunction]
pub fn team_predicates() -> Vec<&'static str> {
    Predicate::all().map(|p| p.name()).collect()
}

/// `text` quoted for an error, its first 40 characters at most (an error does not repeat a
/// megabyte it was given).
fn quoted(text: &str) -> String {
    const MOST: usize = 40;
    if text.chars().count() <= MOST {
        format!("{text:?}")
    } else {
        let head: String = text.chars().take(MOST).collect();
        format!("{head:?}… ({} characters)", text.chars().count())
    }
}
