//! A 3-vs-3 FutRob match: two teams of a keeper and two field players on the KidSize field,
//! with a referee that sees only the world.
//!
//! Cyan (robots 3, 4, 5; 3 keeps goal) defends the goal at −X, magenta (6, 7, 8; 6 keeps
//! goal) the goal at +X; magenta's kick-off places are cyan's turned half a turn about the
//! centre spot. [`MatchParams::kick_off`] kicks off (by default cyan for odd seeds, magenta
//! for even ones); after a goal the team that conceded it does. At a
//! kick-off the kicking team's first field player stands 30 cm behind the ball and the others
//! outside the centre circle; until the ball is touched (moved 5 cm) or 10 s have passed, a
//! robot of the other team that enters the circle is put back on its edge (counted as an
//! infringement). The referee restarts from kick-off positions after a goal (the ball
//! wholly over the goal line between the posts), puts the ball back 30 cm inside the field
//! where it left it (over a touch line, or over a goal line outside the goal), and keeps a
//! score sheet ([`crate::referee`]): every strike of the ball with its striker, what it was
//! (shot, pass, clearance, kick) and who had the ball next; from it goals with their scorers,
//! shots and shots on target, passes and passes completed, and pass loops. It also counts
//! possession (time the nearest standing robot within 30 cm of the ball belongs to each team)
//! and falls.

use serde::Serialize;
use simrob_futrob::{Role, RuleSet};
use simrob_math::Xoshiro256StarStar;
use simrob_soccer::{Pose2, Profile, Team};

use crate::arena::{Arena, ArenaParams, Observer, PlayerSpec};
use crate::referee::{Exchange, GoalEvent, RobotAt, ScoreSheet, Strike, StrikeKind};
use crate::TrialError;

/// How a match is played.
#[derive(Debug, Clone)]
pub struct MatchParams {
    /// The noise of the humanoids' motions and cameras (`paper` or `ideal`).
    pub profile: Profile,
    /// The match's seed: every random draw of the match derives from it.
    pub seed: u64,
    /// Simulated seconds of play.
    pub duration_s: f64,
    /// The team that kicks off the match.
    pub kick_off: Team,
    /// Raised to end the match early (Ctrl-C): play stops after the iteration under way and
    /// the summary covers what was played ([`MatchSummary::played_s`]). Only read: a match
    /// not stopped is the same with or without it.
    pub stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// What happened in a match. Per-team figures are `[cyan, magenta]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct MatchSummary {
    /// The match's seed.
    pub seed: u64,
    /// The noise profile's name.
    pub profile: String,
    /// Simulated seconds of play asked for.
    pub duration_s: f64,
    /// Simulated seconds played: `duration_s`, or less when the match was stopped early.
    pub played_s: f64,
    /// The team that kicked off the match (`cyan` or `magenta`).
    pub kick_off: String,
    /// Each team's goalkeeper (its robot id).
    pub keepers: [u32; 2],
    /// Goals scored by each team.
    pub goals: [u32; 2],
    /// Shots: strikes towards the opponents' goal, fast enough to reach its line, less than
    /// 0.5 m outside a post ([`crate::referee`]).
    pub shots: [u32; 2],
    /// Shots whose line runs between the posts (goals included).
    pub shots_on_target: [u32; 2],
    /// Seconds each team had the ball.
    pub possession_s: [f64; 2],
    /// Passes: strikes by a robot running `passBall`.
    pub passes: [u32; 2],
    /// Passes after which a teammate of the passer had the ball next.
    pub passes_completed: [u32; 2],
    /// Pass loops: two teammates striking the ball back and forth at least
    /// [`crate::referee::LOOP_STRIKES`] times while it gets less than 1 m nearer the
    /// opponents' goal.
    pub pass_loops: [u32; 2],
    /// Times each team's robots fell.
    pub falls: [u32; 2],
    /// Balls put back after leaving the field.
    pub outs: u32,
    /// Robots put back out of the centre circle at a kick-off (the team not kicking off).
    pub kickoff_infringements: [u32; 2],
    /// Team messages put on the air.
    pub messages: u64,
    /// `(simulated s, what)`, in order.
    pub events: Vec<(f64, String)>,
    /// Every goal with its scorer.
    pub goal_log: Vec<GoalEvent>,
    /// Every strike of the ball, in order.
    pub strikes: Vec<Strike>,
    /// Every run of three or more strikes back and forth between two teammates.
    pub exchanges: Vec<Exchange>,
}

/// The random stream of the kick-off coin toss (apart from every robot's streams).
const TOSS_STREAM: u64 = 0x004b_4943_4b4f_4646;

impl MatchParams {
    /// A match in which the kick-off alternates with the seed ([`alternate_kick_off`]).
    pub fn new(profile: Profile, seed: u64, duration_s: f64) -> Self {
        MatchParams {
            profile,
            seed,
            duration_s,
            kick_off: alternate_kick_off(seed),
            stop: None,
        }
    }
}

/// Cyan kicks off the matches of odd seeds, magenta those of even seeds: over consecutive
/// seeds each team kicks off half of the matches.
pub fn alternate_kick_off(seed: u64) -> Team {
    if seed % 2 == 1 {
        Team::Cyan
    } else {
        Team::Magenta
    }
}

/// The team that wins the kick-off coin toss of a match played with `seed` (a random stream of
/// its own): a seed always gives the same team, and each team wins about half of the seeds.
pub fn coin_toss(seed: u64) -> Team {
    if Xoshiro256StarStar::for_stream(seed, TOSS_STREAM).next_u64() >> 63 == 0 {
        Team::Cyan
    } else {
        Team::Magenta
    }
}

fn team_index(t: Team) -> usize {
    match t {
        Team::Cyan => 0,
        Team::Magenta => 1,
    }
}

/// Radius of the centre circle, m (KidSize: 1.50 m across).
const CIRCLE_RADIUS: f64 = 0.75;
/// The ball counts as touched once this far from the centre spot, m.
const KICKOFF_TOUCH: f64 = 0.05;
/// The kick-off restriction ends this long after the kick-off even if nobody touched the
/// ball, s.
const KICKOFF_LIMIT_S: f64 = 10.0;

/// Kick-off positions with `kicking` to kick off: `(entity, team, role, pose)`.
fn line_up(half_length: f64, kicking: Team) -> Vec<(u32, Team, Role, Pose2)> {
    let mut v = Vec::new();
    for (team, first, side) in [(Team::Cyan, 3, -1.0), (Team::Magenta, 6, 1.0)] {
        let facing = if side < 0.0 {
            0.0
        } else {
            std::f64::consts::PI
        };
        // Magenta's places are cyan's turned half a turn about the centre spot (not mirrored:
        // a robot's behaviour has a handedness, so only a half turn gives both teams the same
        // match).
        let at = |x: f64, y: f64| Pose2 {
            x: side * x,
            y: -side * y,
            heading: facing,
        };
        v.push((first, team, Role::Goalkeeper, at(half_length - 0.30, 0.0)));
        if team == kicking {
            v.push((first + 1, team, Role::FieldPlayer, at(0.30, 0.0)));
        } else {
            v.push((first + 1, team, Role::FieldPlayer, at(1.0, 0.8)));
        }
        v.push((first + 2, team, Role::FieldPlayer, at(1.0, -0.8)));
    }
    v
}

fn rules(xml: &str, name: &str) -> Result<RuleSet, TrialError> {
    RuleSet::parse(xml, name).map_err(|e| TrialError::Rules(e.to_string()))
}

/// Plays a match; `observer` sees the world after every iteration (a recorder, a viewer).
pub fn play(p: &MatchParams, observer: Option<Observer>) -> Result<MatchSummary, TrialError> {
    play_inspected(p, observer, &mut |_| {})
}

/// [`play`], with `inspect` called with the arena (the world, every robot's brain: its
/// predicates, rule and action) after every iteration and the referee's decisions — to trace
/// why the robots do what they do. Like an observer, it cannot change the match.
pub fn play_inspected(
    p: &MatchParams,
    observer: Option<Observer>,
    inspect: &mut dyn FnMut(&Arena),
) -> Result<MatchSummary, TrialError> {
    play_watched(p, observer, &mut |arena, _| inspect(arena))
}

/// [`play_inspected`], with the match's figures so far (goals, shots…) handed to `inspect`
/// too: what a live view shows as the score.
pub fn play_watched(
    p: &MatchParams,
    observer: Option<Observer>,
    inspect: &mut dyn FnMut(&Arena, &MatchSummary),
) -> Result<MatchSummary, TrialError> {
    let mut arena = Arena::new(ArenaParams::new(p.profile.clone(), p.seed))?;
    if let Some(o) = observer {
        arena.observe(o);
    }
    let f = arena.field().clone();
    let (hl, hw) = (f.length / 2.0, f.width / 2.0);
    let keeper = include_str!("../../../scenarios/soccer/rules/goalkeeper.xml");
    let player = include_str!("../../../scenarios/soccer/rules/field_player.xml");
    let mut kicking = p.kick_off;
    let lineup = line_up(hl, kicking);
    let mut specs = Vec::new();
    for (entity, team, role, pose) in &lineup {
        let r = match role {
            Role::Goalkeeper => rules(keeper, "goalkeeper.xml")?,
            Role::FieldPlayer => rules(player, "field_player.xml")?,
        };
        specs.push(PlayerSpec {
            entity: *entity,
            team: *team,
            role: *role,
            pose: *pose,
            rules: Some(r),
        });
    }
    let mut keepers = [0; 2];
    for (entity, team, role, _) in &lineup {
        if *role == Role::Goalkeeper {
            keepers[team_index(*team)] = *entity;
        }
    }
    arena.add_players(specs)?;
    arena.place_ball(0.0, 0.0, 0.0, 0.0)?;
    let mut s = MatchSummary {
        seed: p.seed,
        profile: p.profile.name.clone(),
        duration_s: p.duration_s,
        kick_off: p.kick_off.as_str().into(),
        keepers,
        ..MatchSummary::default()
    };
    s.events
        .push((0.0, format!("kick-off {}", kicking.as_str())));
    let mut kickoff_at = Some(0.0);
    // Possession counted in steps of 10 ms, so that its seconds are k / 100, not the sum of
    // k 0.01s (2.4699999999999913).
    let mut possession_steps = [0u64; 2];
    let end_ms = (p.duration_s * 1000.0).round() as u64;
    let mut prev = arena.ball();
    let mut sheet = ScoreSheet::new(hl, f.goal_width);
    let mut robots: Vec<RobotAt> = Vec::new();
    let stopped = || {
        p.stop
            .as_ref()
            .is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    };
    while arena.now_ms() < end_ms && !stopped() {
        arena.step()?;
        let t = arena.now_ms() as f64 / 1000.0;
        let b = arena.ball();
        if let Some(k) = kickoff_at {
            if b[0].hypot(b[1]) > KICKOFF_TOUCH || t - k > KICKOFF_LIMIT_S {
                kickoff_at = None;
            } else {
                let outside = CIRCLE_RADIUS + 0.15;
                let mut back = Vec::new();
                for pl in arena.players() {
                    if pl.team == kicking {
                        continue;
                    }
                    if let Some(q) = arena.robot_pose(pl.entity) {
                        let r = q.x.hypot(q.y);
                        if r < CIRCLE_RADIUS + 0.10 {
                            let (ux, uy) = if r > 1e-6 {
                                (q.x / r, q.y / r)
                            } else if pl.team == Team::Cyan {
                                (-1.0, 0.0)
                            } else {
                                (1.0, 0.0)
                            };
                            back.push((
                                pl.entity,
                                pl.team,
                                Pose2 {
                                    x: ux * outside,
                                    y: uy * outside,
                                    ..q
                                },
                            ));
                        }
                    }
                }
                for (entity, team, pose) in back {
                    arena.place_robot(entity, pose)?;
                    s.kickoff_infringements[team_index(team)] += 1;
                    s.events.push((
                        t,
                        format!("robot {entity} put back out of the centre circle"),
                    ));
                }
            }
        }
        let (vx, vy) = ((b[0] - prev[0]) / 0.01, (b[1] - prev[1]) / 0.01);
        prev = b;
        robots.clear();
        for pl in arena.players() {
            if let Some(q) = arena.robot_pose(pl.entity) {
                robots.push(RobotAt {
                    entity: pl.entity,
                    team: pl.team,
                    role: pl.role,
                    x: q.x,
                    y: q.y,
                    standing: arena.standing(pl.entity),
                    kick: arena.kick(pl.entity),
                    action: pl
                        .brain()
                        .and_then(|br| br.handler().current())
                        .map_or("", |a| a.kind.name()),
                });
            }
        }
        sheet.step(t, [b[0], b[1]], [vx, vy], &robots);
        // Who is nearest the ball.
        let nearest = arena
            .players()
            .iter()
            .filter_map(|pl| {
                arena
                    .robot_pose(pl.entity)
                    .map(|q| ((q.x - b[0]).hypot(q.y - b[1]), pl.entity, pl.team))
            })
            .min_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((d, entity, team)) = nearest {
            if d < 0.30 && arena.standing(entity) {
                let i = team_index(team);
                possession_steps[i] += 1;
                s.possession_s[i] = possession_steps[i] as f64 / 100.0;
            }
        }
        let over_goal_line = b[0].abs() > hl + f.ball_radius;
        if over_goal_line && b[1].abs() < f.goal_width / 2.0 {
            let scorer = if b[0] > 0.0 {
                Team::Cyan
            } else {
                Team::Magenta
            };
            s.goals[team_index(scorer)] += 1;
            let g = sheet.goal(t, scorer);
            let by = match (g.scorer, g.own_goal) {
                (Some(r), false) => format!(" (robot {r})"),
                (Some(r), true) => format!(" (own goal, robot {r})"),
                (None, _) => String::new(),
            };
            s.events.push((t, format!("goal {}{by}", scorer.as_str())));
            kicking = if scorer == Team::Cyan {
                Team::Magenta
            } else {
                Team::Cyan
            };
            for (entity, _, _, pose) in line_up(hl, kicking) {
                arena.place_robot(entity, pose)?;
            }
            arena.place_ball(0.0, 0.0, 0.0, 0.0)?;
            prev = arena.ball();
            kickoff_at = Some(t);
            s.events.push((t, format!("kick-off {}", kicking.as_str())));
        } else if over_goal_line || b[1].abs() > hw + f.ball_radius {
            let x = b[0].clamp(-(hl - 0.30), hl - 0.30);
            let y = b[1].clamp(-(hw - 0.30), hw - 0.30);
            arena.place_ball(x, y, 0.0, 0.0)?;
            prev = arena.ball();
            sheet.out();
            s.outs += 1;
            s.events.push((t, "ball out: put back".into()));
        }
        inspect(&arena, &s);
    }
    for pl in arena.players() {
        s.falls[team_index(pl.team)] += pl.falls;
    }
    s.messages = arena.messages_sent;
    // Counted at the end: a strike that scores becomes a shot on target when the goal comes.
    for st in &sheet.strikes {
        let Some(k) = st.team.and_then(Team::parse).map(team_index) else {
            continue;
        };
        match st.kind {
            StrikeKind::Shot => {
                s.shots[k] += 1;
                s.shots_on_target[k] += st.on_target as u32;
            }
            StrikeKind::Pass => s.passes[k] += 1,
            _ => {}
        }
        if let (StrikeKind::Pass, Some(team), Some(next)) = (st.kind, st.team, st.next) {
            let mate = robots
                .iter()
                .any(|r| r.entity == next && r.team.as_str() == team && Some(next) != st.robot);
            if mate {
                if let Some(t) = Team::parse(team) {
                    s.passes_completed[team_index(t)] += 1;
                }
            }
        }
    }
    s.exchanges = sheet.exchanges();
    for e in s.exchanges.iter().filter(|e| e.is_loop()) {
        if let Some(t) = Team::parse(e.team) {
            s.pass_loops[team_index(t)] += 1;
        }
    }
    s.goal_log = sheet.goals;
    s.strikes = sheet.strikes;
    s.played_s = arena.now_ms() as f64 / 1000.0;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magentas_places_are_cyans_turned_half_a_turn() {
        let hl = 4.5;
        for kicking in [Team::Cyan, Team::Magenta] {
            let other = if kicking == Team::Cyan {
                Team::Magenta
            } else {
                Team::Cyan
            };
            let a = line_up(hl, kicking);
            let b = line_up(hl, other);
            // Robot k of the kicking team in `a` stands where robot k of the other team
            // stands in `b`, turned half a turn.
            for (entity, team, role, p) in a.iter().filter(|r| r.1 == kicking) {
                let twin = if *team == Team::Cyan {
                    entity + 3
                } else {
                    entity - 3
                };
                let (_, _, twin_role, q) = b.iter().find(|r| r.0 == twin).copied().unwrap();
                assert_eq!(*role, twin_role);
                assert!((p.x + q.x).abs() < 1e-12 && (p.y + q.y).abs() < 1e-12);
                let turn = (p.heading - q.heading).rem_euclid(std::f64::consts::TAU);
                assert!((turn - std::f64::consts::PI).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn kick_offs_alternate_with_the_seed_and_the_toss_is_fair() {
        assert_eq!(alternate_kick_off(1), Team::Cyan);
        assert_eq!(alternate_kick_off(2), Team::Magenta);
        assert_eq!(
            MatchParams::new(Profile::ideal(), 4, 1.0).kick_off,
            Team::Magenta
        );
        assert_eq!(coin_toss(17), coin_toss(17));
        let cyan = (1..=1000).filter(|&s| coin_toss(s) == Team::Cyan).count();
        assert!(
            (450..=550).contains(&cyan),
            "cyan won {cyan} of 1000 tosses"
        );
    }
}
