//! The FutRob case studies, set up as FutRob's report describes them and judged from the
//! world: where the ball went, where the robots stood, what the brains knew.
//!
//! Placements follow the report's tables (distances from the goal line in cm; the keeper's
//! lateral offsets; the ball's release points); every placement gets the error of a person
//! placing robots by hand — position σ = 1.5 cm, heading σ = 2° — drawn from the trial's seed.
//! Trial `i` runs scenario `i mod n` (+1) of the case's table, as the report alternated them.
//!
//! | case | set-up | success |
//! |---|---|---|
//! | `penalty-kick` | ball 140 cm from the goal, kicker 180 cm, keeper (standing, no brain) 30 cm out, at 0 / ±20 cm | the shot is on target: a goal, the keeper's body stopped it, or it came to rest on a line that crosses the goal line between the posts |
//! | `penalty-save` | keeper 30 cm out with the penalty-save rules; the ball rolled from 160 cm: straight at it, 20 cm to its left, diagonally left → right | the ball did not cross the goal line between the posts, and it stopped or turned back at the keeper's body |
//! | `discovery` | keeper and two field players with the team rules, placed for a kick-off, each switched on at its own time in the first 10 s (drawn from the seed), on a radio that loses each message copy with probability 0.2 | within 10 s (`COMM_TTL`) of the last robot's start, every robot knows both teammates and their roles |
//! | `relocation` | keeper 30 cm out at offset X ∈ {5, 20, 30, 50, −5, −20, −30, −50} cm; a field player 180 cm out, facing its goal | the keeper moved exactly when 10 < abs(X) < 40 cm, towards the centre |
//! | `pass` | passer's toes 10 cm from the ball, receiver 80 cm from the passer, 45° to its left, facing the opponent goal (it sees the ball only once it looks for it) | the receiver controls the ball: after the pass, at rest at its feet (within 22 cm ahead of its centre, 10 cm to the side) for 1 s, nearer to it than to the passer |

use serde::Serialize;
use simrob_futrob::{Param, Role, RuleSet};
use simrob_math::Xoshiro256StarStar;
use simrob_soccer::{Pose2, Profile, Team};

use crate::arena::{mix, Arena, ArenaParams, Inspector, Observer, PlayerSpec};
use crate::TrialError;

/// The FutRob case studies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Case {
    /// `penalty-kick`: a kicker shoots from 180 cm past a keeper without a brain; success is a
    /// shot on target.
    PenaltyKick,
    /// `penalty-save`: a keeper with the penalty-save rules faces a rolled ball; success is the
    /// ball kept out of the goal.
    PenaltySave,
    /// `discovery`: a team of three placed for a kick-off, switched on one by one at times
    /// drawn from the seed, on a lossy radio; success is every robot knowing both teammates
    /// and their roles within 10 s of the last one's start.
    Discovery,
    /// `relocation`: a keeper set off centre; success is it moving exactly when the offset is
    /// between 10 and 40 cm, towards the centre.
    Relocation,
    /// `pass`: a passer and a receiver 80 cm away at 45°; success is the receiver controlling
    /// the ball at its feet.
    Pass,
}

impl Case {
    /// Every case, in the report's order.
    pub const ALL: [Case; 5] = [
        Case::PenaltyKick,
        Case::PenaltySave,
        Case::Discovery,
        Case::Relocation,
        Case::Pass,
    ];

    /// Its command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Case::PenaltyKick => "penalty-kick",
            Case::PenaltySave => "penalty-save",
            Case::Discovery => "discovery",
            Case::Relocation => "relocation",
            Case::Pass => "pass",
        }
    }

    /// Parses a command-line name.
    pub fn parse(s: &str) -> Option<Case> {
        Case::ALL.into_iter().find(|c| c.name() == s.trim())
    }

    /// What FutRob's real robots achieved: (successes, trials), `None` for the qualitative
    /// discovery study.
    pub fn paper(self) -> Option<(u32, u32)> {
        match self {
            Case::PenaltyKick => Some((15, 30)),
            Case::PenaltySave => Some((9, 15)),
            Case::Discovery => None,
            Case::Relocation => Some((8, 8)),
            Case::Pass => Some((9, 10)),
        }
    }

    /// What success means, in a few words (the table's heading).
    pub fn success_label(self) -> &'static str {
        match self {
            Case::PenaltyKick => "shots on target",
            Case::PenaltySave => "penalties saved",
            Case::Discovery => "teams fully discovered",
            Case::Relocation => "correct keeper decisions",
            Case::Pass => "passes received",
        }
    }

    /// How many scenarios its table has.
    pub fn scenarios(self) -> u32 {
        match self {
            Case::PenaltyKick | Case::PenaltySave => 3,
            Case::Discovery | Case::Pass => 1,
            Case::Relocation => 8,
        }
    }

    /// Simulated seconds a trial may last.
    pub fn time_limit_s(self) -> f64 {
        match self {
            Case::PenaltyKick => 120.0,
            Case::PenaltySave => 12.0,
            Case::Discovery => (DISCOVERY_JOIN_WINDOW_MS + DISCOVERY_DEADLINE_MS) as f64 / 1000.0,
            Case::Relocation => 60.0,
            Case::Pass => 90.0,
        }
    }
}

/// One trial's result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialResult {
    /// The case study it is a trial of.
    pub case: Case,
    /// Trial number (from 0).
    pub trial: u32,
    /// The trial's own seed (derived from the run's seed and the trial number).
    pub seed: u64,
    /// Scenario of the case's table (from 1).
    pub scenario: u32,
    /// Where things were put: named values in cm and degrees.
    pub placement: Vec<(String, f64)>,
    /// What happened, in a word or two.
    pub outcome: String,
    /// Whether the trial met the case's criterion of success.
    pub success: bool,
    /// Measured figures, named with their units.
    pub metrics: Vec<(String, f64)>,
    /// Simulated seconds the trial ran.
    pub sim_seconds: f64,
}

impl TrialResult {
    /// A measured figure by name (see [`TrialResult::metrics`]).
    pub fn metric(&self, name: &str) -> Option<f64> {
        self.metrics.iter().find(|m| m.0 == name).map(|m| m.1)
    }
}

fn rules(xml: &str, name: &str) -> Result<RuleSet, TrialError> {
    RuleSet::parse(xml, name).map_err(|e| TrialError::Rules(e.to_string()))
}

macro_rules! bundled_rules {
    ($file:literal) => {
        rules(
            include_str!(concat!("../../../scenarios/soccer/rules/", $file)),
            $file,
        )
    };
}

/// Hand placement: a pose with a person's placement error.
struct Hand(Xoshiro256StarStar);

impl Hand {
    const POS_SD: f64 = 0.015;
    const HEADING_SD: f64 = 2.0 * std::f64::consts::PI / 180.0;
    fn pose(&mut self, x: f64, y: f64, heading: f64) -> Pose2 {
        Pose2 {
            x: x + self.0.normal(0.0, Self::POS_SD),
            y: y + self.0.normal(0.0, Self::POS_SD),
            heading: heading + self.0.normal(0.0, Self::HEADING_SD),
        }
    }
    fn offset(&mut self, v: f64, sd: f64) -> f64 {
        v + self.0.normal(0.0, sd)
    }
}

const PI: f64 = std::f64::consts::PI;

/// Runs trial `trial` of `case` for a run seeded `seed` with `profile`.
pub fn run_trial(
    case: Case,
    trial: u32,
    seed: u64,
    profile: &Profile,
) -> Result<TrialResult, TrialError> {
    run_trial_observed(case, trial, seed, profile, None)
}

/// [`run_trial`], with `observer` seeing the world after every iteration (a recorder).
pub fn run_trial_observed(
    case: Case,
    trial: u32,
    seed: u64,
    profile: &Profile,
    observer: Option<Observer>,
) -> Result<TrialResult, TrialError> {
    run_trial_inspected(case, trial, seed, profile, observer, None)
}

/// [`run_trial_observed`], with `inspector` called with the arena (the world and every
/// robot's brain) after every iteration: to trace why a trial ended as it did. Neither
/// changes the trial.
pub fn run_trial_inspected(
    case: Case,
    trial: u32,
    seed: u64,
    profile: &Profile,
    observer: Option<Observer>,
    inspector: Option<Inspector>,
) -> Result<TrialResult, TrialError> {
    let tseed = mix(seed, trial as u64);
    let scenario = trial % case.scenarios() + 1;
    let mut hand = Hand(Xoshiro256StarStar::for_stream(tseed, 99));
    let mut params = ArenaParams::new(profile.clone(), tseed);
    if case == Case::Discovery {
        params.radio_loss = DISCOVERY_RADIO_LOSS;
    }
    let mut arena = Arena::new(params)?;
    if let Some(o) = observer {
        arena.observe(o);
    }
    if let Some(i) = inspector {
        arena.inspect(i);
    }
    let mut r = TrialResult {
        case,
        trial,
        seed: tseed,
        scenario,
        placement: Vec::new(),
        outcome: String::new(),
        success: false,
        metrics: Vec::new(),
        sim_seconds: 0.0,
    };
    match case {
        Case::PenaltyKick => penalty_kick(&mut arena, &mut hand, &mut r)?,
        Case::PenaltySave => penalty_save(&mut arena, &mut hand, &mut r)?,
        Case::Discovery => discovery(&mut arena, &mut hand, &mut r)?,
        Case::Relocation => relocation(&mut arena, &mut hand, &mut r)?,
        Case::Pass => pass(&mut arena, &mut hand, &mut r)?,
    }
    // The observer sees the world the judge decided on once more (a recording's last frame).
    arena.end();
    r.sim_seconds = arena.now_ms() as f64 / 1000.0;
    Ok(r)
}

fn cm(v: f64) -> f64 {
    (v * 1000.0).round() / 10.0
}

fn deg(v: f64) -> f64 {
    (v.to_degrees() * 10.0).round() / 10.0
}

/// The ball's motion, sampled every iteration.
struct BallWatch {
    prev: [f64; 3],
    speed: f64,
    vx: f64,
    /// Where and when it was first struck (speed above 0.25 m/s).
    kicked_at: Option<([f64; 3], u64)>,
}

impl BallWatch {
    fn new(arena: &Arena) -> Self {
        BallWatch {
            prev: arena.ball(),
            speed: 0.0,
            vx: 0.0,
            kicked_at: None,
        }
    }
    fn update(&mut self, arena: &Arena) -> [f64; 3] {
        let b = arena.ball();
        let dt = 0.01;
        let (vx, vy) = ((b[0] - self.prev[0]) / dt, (b[1] - self.prev[1]) / dt);
        self.speed = vx.hypot(vy);
        self.vx = vx;
        if self.kicked_at.is_none() && self.speed > 0.25 {
            self.kicked_at = Some((self.prev, arena.now_ms()));
        }
        self.prev = b;
        b
    }
}

/// Where the line through `a` and `b` meets `x = line_x` (its `y`), if it goes that way.
fn crossing_y(a: [f64; 3], b: [f64; 3], line_x: f64) -> Option<f64> {
    let dx = b[0] - a[0];
    if dx.abs() < 1e-6 || (line_x - a[0]) / dx < 0.0 {
        return None;
    }
    Some(a[1] + (b[1] - a[1]) * (line_x - a[0]) / dx)
}

fn penalty_kick(arena: &mut Arena, hand: &mut Hand, r: &mut TrialResult) -> Result<(), TrialError> {
    let f = arena.field().clone();
    let goal_x = f.length / 2.0;
    let half_goal = f.goal_width / 2.0;
    // The keeper stands on its own left (scenario 2) or right (3): it faces −X, so its
    // left is −Y — the kicker's right, where the kicker measured positive angles.
    let keeper_y = [0.0, -0.20, 0.20][(r.scenario - 1) as usize];
    let ball = (hand.offset(goal_x - 1.40, 0.015), hand.offset(0.0, 0.015));
    let kicker = hand.pose(goal_x - 1.80, 0.0, 0.0);
    let keeper = hand.pose(goal_x - 0.30, keeper_y, PI);
    arena.add_players(vec![
        PlayerSpec {
            entity: 3,
            team: Team::Cyan,
            role: Role::FieldPlayer,
            pose: kicker,
            rules: Some(bundled_rules!("kicker.xml")?),
        },
        PlayerSpec {
            entity: 4,
            team: Team::Magenta,
            role: Role::Goalkeeper,
            pose: keeper,
            rules: None,
        },
    ])?;
    arena.place_ball(ball.0, ball.1, 0.0, 0.0)?;
    r.placement = vec![
        ("ball_from_goal_cm".into(), cm(goal_x - ball.0)),
        ("kicker_from_goal_cm".into(), cm(goal_x - kicker.x)),
        ("keeper_offset_cm".into(), cm(keeper.y)),
        (
            "keeper_angle_from_ball_deg".into(),
            deg((keeper.y - ball.1).atan2(keeper.x - ball.0)),
        ),
    ];
    let mut w = BallWatch::new(arena);
    let limit = (Case::PenaltyKick.time_limit_s() * 1000.0) as u64;
    let mut rest_after_kick = 0u32;
    let outcome = loop {
        arena.step()?;
        let b = w.update(arena);
        let now = arena.now_ms();
        if b[0] > goal_x + f.ball_radius {
            break if b[1].abs() < half_goal {
                "goal"
            } else {
                "wide"
            };
        }
        if b[1].abs() > f.width / 2.0 + f.ball_radius {
            break "wide";
        }
        if let Some((k, _)) = w.kicked_at {
            let near_keeper = (b[0] - keeper.x).hypot(b[1] - keeper.y) < 0.35;
            if near_keeper && w.vx <= 0.0 && w.speed < 0.5 {
                break "saved";
            }
            if w.speed < 0.01 {
                rest_after_kick += 1;
            } else {
                rest_after_kick = 0;
            }
            if rest_after_kick >= 50 && (b[0] - k[0]).hypot(b[1] - k[1]) > 0.2 {
                break match crossing_y(k, b, goal_x) {
                    Some(y) if y.abs() < half_goal => "on target, short",
                    _ => "wide",
                };
            }
        }
        if now >= limit {
            break if w.kicked_at.is_some() {
                "wide"
            } else {
                "no shot"
            };
        }
    };
    r.outcome = outcome.into();
    r.success = matches!(outcome, "goal" | "saved" | "on target, short");
    if let Some((k, t)) = w.kicked_at {
        let b = arena.ball();
        r.metrics.push(("kick_time_s".into(), t as f64 / 1000.0));
        r.metrics.push((
            "shot_direction_deg".into(),
            deg((b[1] - k[1]).atan2(b[0] - k[0])),
        ));
        if let Some(y) = crossing_y(k, b, goal_x) {
            r.metrics.push(("goal_line_crossing_cm".into(), cm(y)));
        }
    }
    Ok(())
}

fn penalty_save(arena: &mut Arena, hand: &mut Hand, r: &mut TrialResult) -> Result<(), TrialError> {
    let f = arena.field().clone();
    let goal_x = f.length / 2.0;
    let half_goal = f.goal_width / 2.0;
    // The keeper faces −X: its left is −Y. Release 160 cm from the goal; aim points on the
    // goal line: straight at it, 20 cm to its left, left → 25 cm to its right.
    let (y0, y_aim) = [(0.0, 0.0), (-0.20, -0.20), (-0.20, 0.25)][(r.scenario - 1) as usize];
    let keeper = hand.pose(goal_x - 0.30, 0.0, PI);
    arena.add_players(vec![PlayerSpec {
        entity: 4,
        team: Team::Magenta,
        role: Role::Goalkeeper,
        pose: keeper,
        rules: Some(bundled_rules!("penalty_keeper.xml")?),
    }])?;
    let release = (hand.offset(goal_x - 1.60, 0.015), hand.offset(y0, 0.015));
    let aim = hand.offset(y_aim, 0.03);
    // A ramp gives about the same speed each time: enough to roll 2.2 m on the carpet
    // (v² = 2·C·g·d), ±3 %.
    let speed = (2.0 * 0.06 * 9.81 * 2.2_f64).sqrt() * hand.offset(1.0, 0.03);
    arena.place_ball(release.0, release.1, 0.0, 0.0)?;
    // The keeper watches the ball on the ramp for 3 s before it is released.
    while arena.now_ms() < 3000 {
        arena.step()?;
    }
    let dir = (aim - release.1).atan2(goal_x - release.0);
    arena.place_ball(release.0, release.1, speed * dir.cos(), speed * dir.sin())?;
    r.placement = vec![
        ("keeper_from_goal_cm".into(), cm(goal_x - keeper.x)),
        ("keeper_offset_cm".into(), cm(keeper.y)),
        ("release_from_goal_cm".into(), cm(goal_x - release.0)),
        ("release_offset_cm".into(), cm(release.1)),
        ("aim_offset_cm".into(), cm(aim)),
        ("speed_cm_s".into(), cm(speed)),
    ];
    let mut w = BallWatch::new(arena);
    let limit = arena.now_ms() + (Case::PenaltySave.time_limit_s() * 1000.0) as u64;
    let mut moving = false;
    let outcome = loop {
        arena.step()?;
        let b = w.update(arena);
        if w.vx > 0.05 {
            moving = true;
        }
        if b[0] > goal_x + f.ball_radius {
            break if b[1].abs() < half_goal {
                "goal"
            } else {
                "wide"
            };
        }
        if moving && (w.vx <= 0.0 || w.speed < 0.02) {
            let keeper_now = arena.robot_pose(4).unwrap_or(keeper);
            break if (b[0] - keeper_now.x).hypot(b[1] - keeper_now.y) < 0.45 {
                "saved"
            } else {
                "stopped short"
            };
        }
        if arena.now_ms() >= limit {
            break "stopped short";
        }
    };
    r.outcome = outcome.into();
    r.success = outcome == "saved";
    let kp = arena.robot_pose(4).unwrap_or(keeper);
    r.metrics
        .push(("keeper_moved_cm".into(), cm(kp.y - keeper.y)));
    r.metrics.push((
        "keeper_went_down".into(),
        f64::from(arena.players()[0].falls),
    ));
    Ok(())
}

/// The discovery study's robots are switched on at times drawn uniformly from the first this
/// many ms (10 ms steps), so that all but the first miss announcements made before they
/// started (FutRob's discovery steps 2–3: found from a later message, asked its role).
pub const DISCOVERY_JOIN_WINDOW_MS: u64 = 10_000;
/// The discovery study's radio loses each copy of a message with this probability (ours:
/// FutRob gives no figure; its robots talked over Wi-Fi, UDP broadcast without
/// retransmission), so an announcement or an answer may be missed too.
pub const DISCOVERY_RADIO_LOSS: f64 = 0.2;
/// A discovery trial succeeds when every robot knows both teammates and their roles within
/// this many ms of the last robot's start: `COMM_TTL`, the time a teammate stays known
/// without a word.
pub const DISCOVERY_DEADLINE_MS: u64 = 10_000;

fn discovery(arena: &mut Arena, hand: &mut Hand, r: &mut TrialResult) -> Result<(), TrialError> {
    let goal_x = arena.field().length / 2.0;
    arena.add_players(vec![
        PlayerSpec {
            entity: 3,
            team: Team::Cyan,
            role: Role::Goalkeeper,
            pose: hand.pose(-goal_x + 0.30, 0.0, 0.0),
            rules: Some(bundled_rules!("goalkeeper.xml")?),
        },
        PlayerSpec {
            entity: 4,
            team: Team::Cyan,
            role: Role::FieldPlayer,
            pose: hand.pose(-1.0, 0.8, 0.0),
            rules: Some(bundled_rules!("field_player.xml")?),
        },
        PlayerSpec {
            entity: 5,
            team: Team::Cyan,
            role: Role::FieldPlayer,
            pose: hand.pose(-1.0, -0.8, 0.0),
            rules: Some(bundled_rules!("field_player.xml")?),
        },
    ])?;
    // Each robot is switched on at its own time (10 ms steps), drawn from the seed.
    let mut joins = [0u64; 3];
    for (j, entity) in joins.iter_mut().zip([3u32, 4, 5]) {
        *j = hand.0.below(DISCOVERY_JOIN_WINDOW_MS / 10 + 1) * 10;
        arena.join_at(entity, *j);
    }
    let last_join = joins.iter().copied().max().unwrap_or(0);
    let limit = last_join + DISCOVERY_DEADLINE_MS;
    let roles = [
        (3, Role::Goalkeeper),
        (4, Role::FieldPlayer),
        (5, Role::FieldPlayer),
    ];
    let known = |arena: &Arena| -> usize {
        arena
            .players()
            .iter()
            .filter_map(|p| p.brain())
            .map(|b| {
                roles
                    .iter()
                    .filter(|(id, role)| {
                        b.world()
                            .comm
                            .members()
                            .any(|m| m.id == *id && m.role == Some(*role))
                    })
                    .count()
            })
            .sum()
    };
    let mut done_at = None;
    while arena.now_ms() < limit {
        arena.step()?;
        if known(arena) == 6 {
            done_at = Some(arena.now_ms());
            break;
        }
    }
    let s = |ms: u64| ms as f64 / 1000.0;
    r.placement = vec![
        ("keeper_on_s".into(), s(joins[0])),
        ("player4_on_s".into(), s(joins[1])),
        ("player5_on_s".into(), s(joins[2])),
    ];
    r.success = done_at.is_some();
    r.outcome = if r.success {
        "all known".into()
    } else {
        format!("{} of 6 known", known(arena))
    };
    // Time from the last robot's start until every robot knew the team.
    if let Some(t) = done_at {
        r.metrics
            .push(("discovery_time_s".into(), s(t.saturating_sub(last_join))));
    }
    r.metrics
        .push(("messages_sent".into(), arena.messages_sent as f64));
    r.metrics
        .push(("copies_lost".into(), arena.radio_lost() as f64));
    // FutRob's step 2: a teammate first heard from a message without its role is asked it,
    // directed, and answers with a directed ROLE.
    r.metrics.push((
        "ask_role_sent".into(),
        arena.sent_count(Param::AskRole, true) as f64,
    ));
    r.metrics.push((
        "role_answers".into(),
        arena.sent_count(Param::Role, true) as f64,
    ));
    Ok(())
}

/// The keeper's initial offsets of the report's relocation table, cm.
pub const RELOCATION_OFFSETS_CM: [f64; 8] = [5.0, 20.0, 30.0, 50.0, -5.0, -20.0, -30.0, -50.0];

fn relocation(arena: &mut Arena, hand: &mut Hand, r: &mut TrialResult) -> Result<(), TrialError> {
    let goal_x = arena.field().length / 2.0;
    let x_i = hand.offset(RELOCATION_OFFSETS_CM[(r.scenario - 1) as usize], 0.5);
    // The offset is in the goal frame: + toward the right post as the keeper, facing the
    // field (+X), sees it — that is −Y.
    let keeper = hand.pose(-goal_x + 0.30, -x_i / 100.0, 0.0);
    let keeper = Pose2 {
        y: -x_i / 100.0,
        ..keeper
    };
    arena.add_players(vec![
        PlayerSpec {
            entity: 3,
            team: Team::Cyan,
            role: Role::Goalkeeper,
            pose: keeper,
            rules: Some(bundled_rules!("relocation_keeper.xml")?),
        },
        PlayerSpec {
            entity: 4,
            team: Team::Cyan,
            role: Role::FieldPlayer,
            pose: hand.pose(-goal_x + 1.80, 0.0, PI),
            rules: Some(bundled_rules!("relocation_field_player.xml")?),
        },
    ])?;
    arena.place_ball(0.0, 0.0, 0.0, 0.0)?;
    let limit = (Case::Relocation.time_limit_s() * 1000.0) as u64;
    while arena.now_ms() < limit {
        arena.step()?;
    }
    let end = arena.robot_pose(3).unwrap_or(keeper);
    let x_f = -end.y * 100.0;
    let expected = x_i.abs() > 10.0 && x_i.abs() < 40.0;
    let moved = (x_f - x_i).abs() > 2.0;
    r.placement = vec![("keeper_offset_cm".into(), (x_i * 10.0).round() / 10.0)];
    r.metrics
        .push(("final_offset_cm".into(), (x_f * 10.0).round() / 10.0));
    r.metrics.push(("moved".into(), f64::from(u8::from(moved))));
    r.success = moved == expected && (!moved || x_f.abs() < x_i.abs());
    r.outcome = match (moved, r.success) {
        (true, true) => "moved to the centre",
        (false, true) => "stayed",
        (true, false) => "moved wrongly",
        (false, false) => "did not move",
    }
    .into();
    Ok(())
}

fn pass(arena: &mut Arena, hand: &mut Hand, r: &mut TrialResult) -> Result<(), TrialError> {
    // 10 cm from the passer's toes (7 cm ahead of its centre) to the ball's surface.
    let passer = hand.pose(-(0.07 + 0.10 + 0.05), 0.0, 0.0);
    // The receiver is "well placed": 80 cm from the passer, 45° to its left, facing the
    // opponent goal as the passer does — so it does not see the ball until it looks for it
    // after the pass (FutRob's receiver searched in every trial).
    let bearing = PI / 4.0;
    let (rx, ry) = (passer.x + 0.80 * bearing.cos(), 0.80 * bearing.sin());
    let receiver = hand.pose(rx, ry, 0.0);
    arena.add_players(vec![
        PlayerSpec {
            entity: 3,
            team: Team::Cyan,
            role: Role::FieldPlayer,
            pose: passer,
            rules: Some(bundled_rules!("pass_passer.xml")?),
        },
        PlayerSpec {
            entity: 4,
            team: Team::Cyan,
            role: Role::FieldPlayer,
            pose: receiver,
            rules: Some(bundled_rules!("pass_receiver.xml")?),
        },
    ])?;
    let ball = (hand.offset(0.0, 0.015), hand.offset(0.0, 0.015));
    arena.place_ball(ball.0, ball.1, 0.0, 0.0)?;
    r.placement = vec![
        (
            "passer_toes_to_ball_cm".into(),
            cm((ball.0 - passer.x).hypot(ball.1 - passer.y) - 0.07 - 0.05),
        ),
        (
            "receiver_to_passer_cm".into(),
            cm((receiver.x - passer.x).hypot(receiver.y - passer.y)),
        ),
    ];
    let mut w = BallWatch::new(arena);
    let limit = (Case::Pass.time_limit_s() * 1000.0) as u64;
    let mut held = 0u32;
    let mut received_at = None;
    // The pass as struck: its direction off the line to the receiver, and how far the
    // ball's line passes beside the receiver (positive: left of it, seen from the passer).
    let mut struck: Option<(f64, f64)> = None;
    let mut closest = f64::INFINITY;
    while arena.now_ms() < limit {
        arena.step()?;
        let b = w.update(arena);
        let Some(rp) = arena.robot_pose(4) else {
            break;
        };
        if struck.is_none() && w.speed > 0.25 {
            let from = w.kicked_at.map_or(ball, |(k, _)| (k[0], k[1]));
            let dir = (b[1] - from.1).atan2(b[0] - from.0);
            let to_receiver = (rp.y - from.1).atan2(rp.x - from.0);
            let dist = (rp.x - from.0).hypot(rp.y - from.1);
            let off = simrob_math::wrap_angle_euclid(dir - to_receiver);
            struck = Some((off, dist * off.sin()));
        }
        if struck.is_some() {
            closest = closest.min((b[0] - rp.x).hypot(b[1] - rp.y));
        }
        let (dx, dy) = (b[0] - rp.x, b[1] - rp.y);
        let ahead = dx * rp.heading.cos() + dy * rp.heading.sin();
        let side = -dx * rp.heading.sin() + dy * rp.heading.cos();
        // Passed: struck, and nearer the receiver than the passer — not a ball the passer
        // nudged and the receiver then took from its feet.
        let passed = struck.is_some()
            && arena
                .robot_pose(3)
                .is_none_or(|pp| (b[0] - pp.x).hypot(b[1] - pp.y) > dx.hypot(dy));
        let at_feet = (0.0..=0.22).contains(&ahead) && side.abs() <= 0.10;
        if passed && at_feet && w.speed < 0.05 {
            held += 1;
            if held >= 100 {
                received_at = Some(arena.now_ms());
                break;
            }
        } else {
            held = 0;
        }
    }
    r.success = received_at.is_some();
    r.outcome = if r.success {
        "received"
    } else if w.kicked_at.is_some() {
        "not controlled"
    } else {
        "no pass"
    }
    .into();
    if let Some((_, t)) = w.kicked_at {
        r.metrics.push(("pass_time_s".into(), t as f64 / 1000.0));
    }
    if let Some((off, beside)) = struck {
        r.metrics.push(("pass_off_line_deg".into(), deg(off)));
        r.metrics
            .push(("line_beside_receiver_cm".into(), cm(beside)));
        r.metrics
            .push(("closest_to_receiver_cm".into(), cm(closest)));
    }
    if let Some(t) = received_at {
        r.metrics
            .push(("received_time_s".into(), t as f64 / 1000.0));
    }
    Ok(())
}
