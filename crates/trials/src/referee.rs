//! The match's score sheet, kept from the world alone: every strike of the ball, who struck
//! it, what it was (a shot, a pass, a clearance, another kick), where it went and who had the
//! ball next; and, from those, the goals' scorers, shots on target, passes completed and the
//! back-and-forth exchanges between two teammates that make no progress (pass loops).
//!
//! A **strike** is the ball going from under 0.2 m/s to over 0.5 m/s in one 10 ms iteration,
//! credited to the nearest standing robot within [`STRIKE_REACH`] (none: the ball came off a
//! wall or post). One kick is one strike however often it pushes the ball: when the ball,
//! kicked against a post or a robot, stops dead in front of the striker and the same kick,
//! still under way, pushes it again before it has left the striker ([`RobotAt::kick`]), that
//! push goes on with the open strike instead of starting a new one; the strike keeps its time
//! and place and takes its speed, heading and kind from the last push, the one the ball
//! leaves with. A new kick, a touch while walking, or a ball put back after it went out
//! starts a new strike. It is
//! - a **pass** when the striker's running action is `passBall`;
//! - a **shot** when it heads for the opponents' goal line, less than [`WIDE_MARGIN`] outside
//!   a post, fast enough to roll that far ([`ROLL_DECEL`]); **on target** when that line is
//!   between the posts; a strike that ends in a goal is a shot on target whatever was
//!   estimated;
//! - a **clearance** when the striker's action is `clearBall`; otherwise a **kick**.
//!
//! A strike ends at a goal, when the ball leaves the field, or when a robot next has the ball:
//! the next strike's robot, or the first standing robot within [`HOLD_REACH`] of the ball once
//! it is slow (not the striker until the ball has left its feet). A pass is **completed** when
//! that robot is a teammate of the passer.

use serde::Serialize;
use simrob_futrob::Role;
use simrob_soccer::Team;

/// Under this speed the ball counts as slow, m/s.
pub const SLOW: f64 = 0.2;
/// A slow ball that speeds past this in one iteration has been struck, m/s.
pub const FAST: f64 = 0.5;
/// A strike is credited to the nearest standing robot within this of the ball's centre, m.
pub const STRIKE_REACH: f64 = 0.35;
/// A robot within this of a slow ball has it, m.
pub const HOLD_REACH: f64 = 0.30;
/// A change of the ball's velocity larger than this in one iteration is a contact, m/s.
pub const CONTACT_DV: f64 = 0.15;
/// The rolling ball's deceleration on the KidSize carpet (its rolling resistance times g),
/// m/s², to tell a shot that can reach the goal line from one that cannot.
pub const ROLL_DECEL: f64 = simrob_soccer::field::CARPET_ROLLING_RESISTANCE * 9.81;
/// A strike heading for the goal line within this outside a post is a shot (wide if outside
/// the posts), m.
pub const WIDE_MARGIN: f64 = 0.5;
/// An exchange between two teammates of at least this many strikes, back and forth, that
/// brought the ball less than [`LOOP_PROGRESS`] towards the opponents' goal, is a pass loop.
pub const LOOP_STRIKES: usize = 5;
/// See [`LOOP_STRIKES`], m.
pub const LOOP_PROGRESS: f64 = 1.0;

/// What a strike was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StrikeKind {
    /// Towards the opponents' goal, fast enough to reach its line.
    Shot,
    /// Struck while the striker's action was `passBall`.
    Pass,
    /// Struck while the striker's action was `clearBall`.
    Clearance,
    /// Anything else (a kick towards a goal too far to reach, a touch while walking, a
    /// rebound).
    #[default]
    Kick,
}

/// How a strike ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum StrikeEnd {
    /// Still in play when the match ended.
    #[default]
    Open,
    /// The ball went wholly over the goal line between the posts.
    Goal,
    /// The ball left the field.
    Out,
    /// A robot (`next`) had the ball next.
    Next,
}

/// One strike of the ball. Times in simulated seconds, positions in metres (world frame).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct Strike {
    /// When.
    pub t: f64,
    /// The robot credited with it (none: the ball came off a wall or post).
    pub robot: Option<u32>,
    /// Its team (`cyan`, `magenta`).
    pub team: Option<&'static str>,
    /// The striker's running action (`kickBall`, `passBall`, `clearBall`, …; empty if none).
    pub action: String,
    /// What it was.
    pub kind: StrikeKind,
    /// A shot whose line runs between the posts, fast enough to reach the goal line (or that
    /// scored).
    pub on_target: bool,
    /// Where the ball was.
    pub at: [f64; 2],
    /// The ball's speed just after (after the kick's last push), m/s.
    pub speed: f64,
    /// The ball's heading just after (after the kick's last push), degrees counter-clockwise
    /// from +X.
    pub heading_deg: f64,
    /// The first robot the ball ran into (a sharp change of its velocity beside a robot)
    /// before it ended, if any — a keeper's save, a block, a pass stopped by its receiver.
    pub met: Option<u32>,
    /// How it ended.
    pub end: StrikeEnd,
    /// The robot that had the ball next (with [`StrikeEnd::Next`]).
    pub next: Option<u32>,
}

/// Who scored a goal.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GoalEvent {
    /// When, simulated seconds.
    pub t: f64,
    /// The team credited with it.
    pub team: &'static str,
    /// The robot whose strike put the ball in (none: it came off a wall or post).
    pub scorer: Option<u32>,
    /// The scorer struck the ball into its own goal.
    pub own_goal: bool,
}

/// Two teammates striking the ball back and forth between them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exchange {
    /// The first strike's time, s.
    pub from_t: f64,
    /// The last strike's time, s.
    pub to_t: f64,
    /// The team.
    pub team: &'static str,
    /// The two robots.
    pub robots: [u32; 2],
    /// Strikes in the exchange (each one after the first sends the ball back).
    pub strikes: usize,
    /// How far the ball went towards the opponents' goal from the first strike to the last, m.
    pub progress_m: f64,
}

impl Exchange {
    /// At least [`LOOP_STRIKES`] strikes and less than [`LOOP_PROGRESS`] of progress.
    pub fn is_loop(&self) -> bool {
        self.strikes >= LOOP_STRIKES && self.progress_m < LOOP_PROGRESS
    }
}

/// Where one robot stood at an iteration, as the referee sees it.
#[derive(Debug, Clone)]
pub struct RobotAt {
    /// Its entity id.
    pub entity: u32,
    /// Its team.
    pub team: Team,
    /// Its role.
    pub role: Role,
    /// Position, m.
    pub x: f64,
    /// Position, m.
    pub y: f64,
    /// Standing (not down, not diving).
    pub standing: bool,
    /// Its running action's name (empty if none).
    pub action: &'static str,
    /// The sequence number of its kick under way (0 when it is not kicking): pushes by one
    /// kick are one strike.
    pub kick: u64,
}

/// The sheet: strikes and goals as they happen.
#[derive(Debug, Clone, Default)]
pub struct ScoreSheet {
    /// Every strike, in order.
    pub strikes: Vec<Strike>,
    /// Every goal, in order.
    pub goals: Vec<GoalEvent>,
    open: Option<usize>,
    /// The open strike's striker's kick (0: none).
    open_kick: u64,
    left_striker: bool,
    prev_v: Option<[f64; 2]>,
    slow: bool,
    goal_line_x: f64,
    goal_width: f64,
}

fn dir(team: Team) -> f64 {
    match team {
        Team::Cyan => 1.0,
        Team::Magenta => -1.0,
    }
}

fn nearest(robots: &[RobotAt], at: [f64; 2], within: f64) -> Option<&RobotAt> {
    robots
        .iter()
        .filter(|r| r.standing)
        .map(|r| ((r.x - at[0]).hypot(r.y - at[1]), r))
        .filter(|(d, _)| *d <= within)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, r)| r)
}

impl ScoreSheet {
    /// A sheet for a field whose goal lines are at ±`goal_line_x` with posts `goal_width`
    /// apart.
    pub fn new(goal_line_x: f64, goal_width: f64) -> ScoreSheet {
        ScoreSheet {
            goal_line_x,
            goal_width,
            slow: true,
            ..ScoreSheet::default()
        }
    }

    /// The ball was put somewhere by the referee (kick-off, out): no velocity to compare.
    pub fn ball_placed(&mut self) {
        self.prev_v = None;
        self.slow = true;
    }

    /// One iteration: the ball at `ball` moving at `v` (m/s), the robots where they are.
    /// Returns the strike this iteration started, if any.
    pub fn step(
        &mut self,
        t: f64,
        ball: [f64; 2],
        v: [f64; 2],
        robots: &[RobotAt],
    ) -> Option<usize> {
        let speed = v[0].hypot(v[1]);
        let mut started = None;
        let mut struck = false;
        if self.slow && speed > FAST {
            struck = true;
            let by = nearest(robots, ball, STRIKE_REACH);
            let again = match (self.open, by) {
                (Some(i), Some(r)) => {
                    !self.left_striker
                        && r.kick != 0
                        && r.kick == self.open_kick
                        && self.strikes[i].robot == Some(r.entity)
                }
                _ => false,
            };
            if let (true, Some(i), Some(r)) = (again, self.open, by) {
                // The same kick pushing the ball again: the open strike goes on, as the ball
                // now leaves it.
                let (kind, on_target) = self.classify(r, ball, v);
                let s = &mut self.strikes[i];
                s.speed = speed;
                s.heading_deg = v[1].atan2(v[0]).to_degrees();
                s.kind = kind;
                s.on_target = on_target;
            } else {
                if let Some(r) = by {
                    self.end(StrikeEnd::Next, Some(r.entity));
                }
                let mut s = Strike {
                    t,
                    robot: by.map(|r| r.entity),
                    team: by.map(|r| r.team.as_str()),
                    action: by.map(|r| r.action.to_string()).unwrap_or_default(),
                    at: ball,
                    speed,
                    heading_deg: v[1].atan2(v[0]).to_degrees(),
                    ..Strike::default()
                };
                if let Some(r) = by {
                    (s.kind, s.on_target) = self.classify(r, ball, v);
                }
                self.strikes.push(s);
                let i = self.strikes.len() - 1;
                self.open = Some(i);
                self.open_kick = by.map_or(0, |r| r.kick);
                self.left_striker = false;
                started = Some(i);
            }
        }
        if let (Some(i), Some(pv)) = (self.open, self.prev_v) {
            if !struck {
                let s = &self.strikes[i];
                let striker = s.robot.and_then(|e| robots.iter().find(|r| r.entity == e));
                if striker.is_none_or(|r| (r.x - ball[0]).hypot(r.y - ball[1]) > STRIKE_REACH) {
                    self.left_striker = true;
                }
                let contact = (v[0] - pv[0]).hypot(v[1] - pv[1]) > CONTACT_DV;
                if contact && s.met.is_none() {
                    if let Some(r) = nearest(robots, ball, HOLD_REACH) {
                        if Some(r.entity) != s.robot || self.left_striker {
                            self.strikes[i].met = Some(r.entity);
                        }
                    }
                }
                if speed < SLOW {
                    if let Some(r) = nearest(robots, ball, HOLD_REACH) {
                        if Some(r.entity) != self.strikes[i].robot || self.left_striker {
                            self.end(StrikeEnd::Next, Some(r.entity));
                        }
                    }
                }
            }
        }
        if speed < SLOW {
            self.slow = true;
        } else if speed > FAST {
            self.slow = false;
        }
        self.prev_v = Some(v);
        started
    }

    /// What a strike by `r` from `ball` at `v` is, and whether it is on target.
    fn classify(&self, r: &RobotAt, ball: [f64; 2], v: [f64; 2]) -> (StrikeKind, bool) {
        if r.action == "passBall" {
            return (StrikeKind::Pass, false);
        }
        match self.shot_line(r.team, ball, v) {
            Some(inside) => (StrikeKind::Shot, inside),
            None if r.action == "clearBall" => (StrikeKind::Clearance, false),
            None => (StrikeKind::Kick, false),
        }
    }

    /// Where a strike by `team` from `ball` at `v` crosses the opponents' goal line: `None` if
    /// it does not reach it or passes more than [`WIDE_MARGIN`] outside a post; otherwise
    /// whether it runs between the posts.
    fn shot_line(&self, team: Team, ball: [f64; 2], v: [f64; 2]) -> Option<bool> {
        let gx = dir(team) * self.goal_line_x;
        let dx = gx - ball[0];
        if v[0] * dx <= 0.0 {
            return None;
        }
        let y = ball[1] + v[1] / v[0] * dx;
        let speed = v[0].hypot(v[1]);
        let path = dx.hypot(y - ball[1]);
        let reach = speed * speed / (2.0 * ROLL_DECEL);
        let half = self.goal_width / 2.0;
        (reach >= path && y.abs() <= half + WIDE_MARGIN).then_some(y.abs() <= half)
    }

    fn end(&mut self, end: StrikeEnd, next: Option<u32>) {
        if let Some(i) = self.open.take() {
            self.strikes[i].end = end;
            self.strikes[i].next = next;
        }
    }

    /// The ball left the field.
    pub fn out(&mut self) {
        self.end(StrikeEnd::Out, None);
        self.ball_placed();
    }

    /// `team` scored: the goal, credited to the robot of the last strike (an own goal when
    /// that robot plays for the other team).
    pub fn goal(&mut self, t: f64, team: Team) -> GoalEvent {
        let last = self.open.map(|i| &mut self.strikes[i]);
        let (scorer, own_goal) = match last {
            Some(s) => {
                let own = s.team.is_some_and(|x| x != team.as_str());
                if !own && s.robot.is_some() {
                    s.kind = StrikeKind::Shot;
                    s.on_target = true;
                }
                (s.robot, own)
            }
            None => (None, false),
        };
        self.end(StrikeEnd::Goal, None);
        self.ball_placed();
        let g = GoalEvent {
            t,
            team: team.as_str(),
            scorer,
            own_goal,
        };
        self.goals.push(g.clone());
        g
    }

    /// The exchanges: runs of consecutive strikes between the same two teammates, each
    /// struck by the other one of the pair than the strike before.
    pub fn exchanges(&self) -> Vec<Exchange> {
        exchanges(&self.strikes)
    }
}

/// See [`ScoreSheet::exchanges`]; runs of fewer than three strikes are left out.
pub fn exchanges(strikes: &[Strike]) -> Vec<Exchange> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < strikes.len() {
        let mut j = i;
        while j + 1 < strikes.len() {
            let (a, b) = (&strikes[j], &strikes[j + 1]);
            let pair = a.robot.is_some()
                && b.robot.is_some()
                && a.robot != b.robot
                && a.team == b.team
                && (j == i || strikes[j - 1].robot == b.robot);
            if !pair {
                break;
            }
            j += 1;
        }
        if j >= i + 2 {
            let (first, last) = (&strikes[i], &strikes[j]);
            let team = first.team.unwrap_or_default();
            let d = if team == "magenta" { -1.0 } else { 1.0 };
            out.push(Exchange {
                from_t: first.t,
                to_t: last.t,
                team,
                robots: [first.robot.unwrap_or(0), strikes[i + 1].robot.unwrap_or(0)],
                strikes: j - i + 1,
                progress_m: d * (last.at[0] - first.at[0]),
            });
        }
        i = if j > i { j } else { i + 1 };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strike(t: f64, robot: u32, team: &'static str, x: f64) -> Strike {
        Strike {
            t,
            robot: Some(robot),
            team: Some(team),
            at: [x, 0.0],
            ..Strike::default()
        }
    }

    #[test]
    fn an_exchange_is_two_teammates_in_turn_and_a_loop_makes_no_progress() {
        // 4, 5, 4, 5, 4 of cyan, the ball moving 0.2 m up the field: a pass loop.
        let s: Vec<Strike> = (0..5)
            .map(|i| strike(i as f64, 4 + (i % 2), "cyan", 0.05 * i as f64))
            .collect();
        let e = exchanges(&s);
        assert_eq!(e.len(), 1);
        assert_eq!((e[0].strikes, e[0].robots), (5, [4, 5]));
        assert!(e[0].is_loop(), "{e:?}");
        // The same for magenta going towards −X: progress counts its way.
        let s: Vec<Strike> = (0..5)
            .map(|i| strike(i as f64, 7 + (i % 2), "magenta", -0.5 * i as f64))
            .collect();
        let e = exchanges(&s);
        assert!(
            (e[0].progress_m - 2.0).abs() < 1e-9 && !e[0].is_loop(),
            "{e:?}"
        );
        // A third robot, an opponent, or the same robot twice breaks the run.
        let s = vec![
            strike(0.0, 4, "cyan", 0.0),
            strike(1.0, 5, "cyan", 0.0),
            strike(2.0, 4, "cyan", 0.0),
            strike(3.0, 7, "magenta", 0.0),
            strike(4.0, 5, "cyan", 0.0),
            strike(5.0, 5, "cyan", 0.0),
            strike(6.0, 4, "cyan", 0.0),
        ];
        let e = exchanges(&s);
        assert_eq!(e.len(), 1, "{e:?}");
        assert_eq!(e[0].strikes, 3);
        assert!(!e[0].is_loop());
    }

    #[test]
    fn a_shot_must_reach_the_line_and_is_on_target_between_the_posts() {
        let sheet = ScoreSheet::new(4.5, 1.8);
        // From 1 m out at 1.12 m/s (rolls 1.07 m): a shot, on target.
        assert_eq!(
            sheet.shot_line(Team::Cyan, [3.5, 0.0], [1.12, 0.0]),
            Some(true)
        );
        // From 2 m out the same kick stops short: not a shot.
        assert_eq!(sheet.shot_line(Team::Cyan, [2.5, 0.0], [1.12, 0.0]), None);
        // Crossing 0.3 m outside a post: a shot, wide; 0.8 m outside: not a shot.
        assert_eq!(
            sheet.shot_line(Team::Cyan, [4.0, 1.2], [1.5, 0.0]),
            Some(false)
        );
        assert_eq!(sheet.shot_line(Team::Cyan, [4.0, 1.7], [1.5, 0.0]), None);
        // Towards its own goal it is no shot; magenta shoots towards −X.
        assert_eq!(sheet.shot_line(Team::Cyan, [-3.5, 0.0], [-1.12, 0.0]), None);
        assert_eq!(
            sheet.shot_line(Team::Magenta, [-3.5, 0.0], [-1.12, 0.0]),
            Some(true)
        );
    }
    fn robot_7(kick: u64) -> Vec<RobotAt> {
        vec![RobotAt {
            entity: 7,
            team: Team::Magenta,
            role: Role::FieldPlayer,
            x: -4.27,
            y: 0.95,
            standing: true,
            action: "clearBall",
            kick,
        }]
    }

    /// Robot 7's kick at a ball 10 cm in front of the left post at 0 s, the ball stopped by
    /// the post, and a second push at 0.08 s by the kick `second` (its number; 0: not kicking).
    fn kick_into_the_post(second: u64) -> ScoreSheet {
        let mut sheet = ScoreSheet::new(4.5, 1.9);
        let at = [-4.41, 0.95];
        let v = |speed: f64, deg: f64| {
            let a = f64::to_radians(deg);
            [speed * a.cos(), speed * a.sin()]
        };
        sheet.step(0.0, at, [0.0, 0.0], &robot_7(895));
        sheet.step(0.01, at, v(1.12, 167.0), &robot_7(895));
        for k in 2..8 {
            sheet.step(k as f64 * 0.01, at, v(0.1, 167.0), &robot_7(895));
        }
        sheet.step(0.08, at, v(0.51, 139.0), &robot_7(second));
        for k in 9..30 {
            sheet.step(k as f64 * 0.01, at, v(0.45, 139.0), &robot_7(second));
        }
        sheet
    }

    #[test]
    fn a_kick_that_pushes_the_ball_twice_against_a_post_is_one_strike() {
        // The same kick (895) pushing again: one strike, with the speed and heading
        // the ball left with.
        let sheet = kick_into_the_post(895);
        assert_eq!(sheet.strikes.len(), 1, "{:?}", sheet.strikes);
        let s = &sheet.strikes[0];
        assert_eq!((s.t, s.robot), (0.01, Some(7)));
        assert!((s.speed - 0.51).abs() < 1e-9, "{s:?}");
        assert!((s.heading_deg - 139.0).abs() < 1e-9, "{s:?}");
        // 0.51 m/s from 9 cm out, crossing 8 cm outside the post: a shot, wide.
        assert_eq!((s.kind, s.on_target), (StrikeKind::Shot, false));
        // A new kick by the same robot (896) is a strike of its own.
        let sheet = kick_into_the_post(896);
        assert_eq!(sheet.strikes.len(), 2, "{:?}", sheet.strikes);
        assert_eq!(sheet.strikes[0].end, StrikeEnd::Next);
        assert_eq!(sheet.strikes[0].next, Some(7));
        // A push while not kicking (a step into the ball) never continues a strike.
        let sheet = kick_into_the_post(0);
        assert_eq!(sheet.strikes.len(), 2, "{:?}", sheet.strikes);
    }
}
