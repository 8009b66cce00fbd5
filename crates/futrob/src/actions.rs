//! The action handler and the composite actions.
//!
//! **Segments and equilibrium points.** The body executes *segments*: basic actions that go
//! from one equilibrium pose to the next and cannot be interrupted — one long step
//! (`walk distance=12`), one mini step (`walk distance=2`), one lateral step
//! (`walkRight distance=4`), one elementary turn (`turn angle=20`), a kick, a dive,
//! a get-up. The handler sends one segment at a time and waits until the body reports it
//! finished ([`BodyStatus::finished`]); that moment is the equilibrium point where a new
//! action may take over. A basic action from the rules is split into segments the FutRob
//! way: `walk distance=30` = 2 long + 3 mini steps, `turn angle=-50` = 2 left turns, never
//! farther than asked. Head
//! commands (`turnHeadHorizontally`, `turnHeadVertically`) are targets for the neck, do not
//! disturb the balance and are sent at any time.
//!
//! **Same action.** A request equal (name and parameter) to the running action is ignored;
//! another request waits for the next equilibrium point, the latest one winning.
//!
//! **Composite actions** are state machines that read the world model at every step:
//! `find…` first looks where the object was last seen (its position dead-reckoned through
//! the robot's own moves; a ball last seen rolling, where its trajectory says it has gone), then sweeps the head to both sides and down (a keeper's
//! `findBall` looks out at the field first, where its ball comes from; a field player's
//! `findBall` also turns in place 120° after a fruitless sweep and sweeps again, so it
//! covers every direction; a field player's `findPartner` while it holds the ball turns
//! with the ball after a fruitless sweep, [`TURN_WITH_BALL_DEG`] at a time, and looks again);
//! `lookAtBall`
//! keeps the ball centred; `followBall` turns toward the ball when it is off to the side,
//! walks with long steps while far and mini/lateral steps when close, until the ball is in
//! front of a foot; `kickBall`/`passBall`/`clearBall` approach, choose the direction (the
//! FutRob rule for `kickBall`, see [`shot_angle`]), turn onto it in elementary turns while
//! it is at least half a turn off, re-approach, and kick with the foot the ball is in front
//! of (`passBall`, lined up, first waits until a field-player teammate reports the ball in
//! sight — at most [`PASS_WAIT_MS`] — as a pass to a receiver still looking for the ball rolls
//! past it);
//! `save` side-steps while there is time, waits until the ball is close and dives to its
//! side, or stands still when the ball will hit its body; `relocate` side-steps back to the
//! goal centre; `supportBall` (simrob's) keeps its distance from the ball, facing it (see
//! [`support_step`]). A keeper's `findBall` sweeps with the head only: it never turns away
//! from the field.

use std::collections::VecDeque;

use crate::config::BrainParams;
use crate::msg::Role;
use crate::names::{Action, ActionKind, ObjectKind};
use crate::trajectory::Vec2;
use crate::world::WorldModel;

/// Which way the robot fell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fall {
    /// Face down: `frontGetUp`.
    Front,
    /// On its back: `backGetUp`.
    Back,
}

/// What the brain needs to know about its body.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BodyStatus {
    /// Head pan, degrees, positive right.
    pub head_pan_deg: f64,
    /// Head tilt, degrees, 0 level, negative down.
    pub head_tilt_deg: f64,
    /// How many body commands (segments) the body has finished or abandoned since start.
    pub finished: u64,
    /// The robot is on the floor.
    pub fallen: Option<Fall>,
}

/// A command for the body: a basic action with the FutRob name and parameter.
pub type Command = Action;

/// What one step of the handler produced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HandlerOutput {
    /// Commands for the body and the head, in order.
    pub commands: Vec<Command>,
    /// The action that started at this step (to announce and log).
    pub started: Option<Action>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KickTarget {
    Goal,
    Partner,
    Clear,
}

#[derive(Debug, Clone, PartialEq)]
struct Search {
    target: ObjectKind,
    idx: usize,
    reached: Option<u64>,
    commanded: Option<u64>,
    turn_left: f64,
    /// Long steps still to walk toward where the object was last seen.
    walk_left: u32,
    /// Head poses to try before the sweep goes on: where the object was last seen
    /// (dead-reckoned through the robot's own moves), and, for a goal, both ways the goal can
    /// lie from one of its posts in view.
    guided: VecDeque<(f64, f64)>,
    started: bool,
    post_guided: u32,
    /// The body already turned toward where the object was last seen.
    turned: bool,
    /// `findPartner` by a field player holding the ball: after a fruitless head sweep it
    /// turns with the ball ([`TURN_WITH_BALL_DEG`]) and looks again, instead of sweeping the
    /// same view for ever.
    with_ball: bool,
    /// Elementary turns still to make with the ball (`with_ball`), and their sign (+ right).
    orbit: (u32, f64),
    /// The full sweep was made; later looks (after turning with the ball) are level only.
    swept_once: bool,
}

/// How far (degrees) a field player holding the ball turns with it after a head sweep that
/// did not find its teammate (`findPartner`), before it looks again: two elementary turns,
/// the head on the ball, a lateral step after each turn that left the ball beside the feet.
/// With the head's ±60° and the camera's ±37°, a level look covers ±97°: three such turns
/// bring every direction into view.
pub const TURN_WITH_BALL_DEG: f64 = 40.0;

/// The level head poses of a look for the teammate after turning with the ball.
const LEVEL_SWEEP: [(f64, f64); 3] = [(0.0, 0.0), (-60.0, 0.0), (60.0, 0.0)];

/// The ball: near, straight ahead and to both sides, then farther, then the feet.
const BALL_SWEEP: [(f64, f64); 7] = [
    (0.0, -45.0),
    (-50.0, -40.0),
    (50.0, -40.0),
    (50.0, -15.0),
    (0.0, -15.0),
    (-50.0, -15.0),
    (0.0, -60.0),
];
/// A keeper's ball: the ball it waits for comes from the field, so out there first (straight,
/// then to both sides), then near, then its feet. Starting near, as a field player does, a
/// keeper looking for a ball placed 130 cm out found it after three poses, 2 to 3 s — a ball
/// struck meanwhile was in the net before the keeper saw it.
const KEEPER_BALL_SWEEP: [(f64, f64); 7] = [
    (0.0, -15.0),
    (-50.0, -15.0),
    (50.0, -15.0),
    (50.0, -40.0),
    (0.0, -45.0),
    (-50.0, -40.0),
    (0.0, -60.0),
];
/// Far objects (goals, robots, landmarks): level, then lower, in 30° pan steps.
const FAR_SWEEP: [(f64, f64); 10] = [
    (0.0, 0.0),
    (-30.0, 0.0),
    (-60.0, 0.0),
    (30.0, 0.0),
    (60.0, 0.0),
    (60.0, -15.0),
    (30.0, -15.0),
    (0.0, -15.0),
    (-30.0, -15.0),
    (-60.0, -15.0),
];

impl Search {
    fn new(target: ObjectKind) -> Search {
        Search {
            target,
            idx: 0,
            reached: None,
            commanded: None,
            turn_left: 0.0,
            walk_left: 0,
            guided: VecDeque::new(),
            started: false,
            post_guided: 0,
            turned: false,
            with_ball: false,
            orbit: (0, 0.0),
            swept_once: false,
        }
    }

    /// `findPartner`'s search: a field player holding the ball turns with it between sweeps.
    fn for_a_partner() -> Search {
        Search {
            with_ball: true,
            ..Search::new(ObjectKind::Partner)
        }
    }

    /// A look for one lateral post of the opponent goal seen at `goal`: the head 30° left of
    /// the goal's centre, then 30° right — each view holds one post and not the other — and
    /// no sweep after them.
    fn for_a_post(goal: Vec2) -> Search {
        let mut s = Search::new(ObjectKind::OppPost);
        let b = goal.bearing_deg();
        for side in [-1.0, 1.0] {
            s.guided
                .push_back(((b + side * 30.0).clamp(-60.0, 60.0).round(), 0.0));
        }
        s.started = true;
        s.idx = FAR_SWEEP.len();
        s
    }

    fn poses(&self, role: Role) -> &'static [(f64, f64)] {
        if self.swept_once {
            &LEVEL_SWEEP
        } else if self.target == ObjectKind::Ball && role == Role::Goalkeeper {
            &KEEPER_BALL_SWEEP
        } else if self.target == ObjectKind::Ball {
            &BALL_SWEEP
        } else {
            &FAR_SWEEP
        }
    }

    /// A goal is reported only when both its posts are in the image: 1.5 m away it spans 62°
    /// of the camera's 75°, so the head must point within a few degrees of its centre, which
    /// no fixed sweep guarantees. One post in view says where the goal is, up to the side:
    /// the centre is `asin(half width / distance)` from the post, on the side where the other
    /// post would be out of the image (tried first), else the other. Done again from each
    /// guided pose that still shows only a post, a few times.
    fn guide_by_post(&mut self, c: &Ctx) {
        let post = match self.target {
            ObjectKind::MyGoal => ObjectKind::MyPost,
            ObjectKind::OppGoal => ObjectKind::OppPost,
            _ => return,
        };
        if self.post_guided >= 3 || !self.guided.is_empty() || !c.wm.in_sight(post) {
            return;
        }
        let Some(p) = c.wm.object(post).last_pos else {
            return;
        };
        self.post_guided += 1;
        let w = c.p.goal_width_cm / 2.0 + 5.0;
        let half = (w / p.norm().max(w)).asin().to_degrees();
        let rel = p.bearing_deg() - c.status.head_pan_deg;
        let hfov_half = 37.0;
        // The other post, 2·half away: a side where it would be in the image is unlikely.
        let first = if rel - 2.0 * half >= -hfov_half {
            1.0
        } else {
            -1.0
        };
        for side in [first, -first] {
            let pan = (p.bearing_deg() + side * half).clamp(-60.0, 60.0).round();
            self.guided
                .push_back((pan, c.status.head_tilt_deg.min(0.0)));
        }
        self.reached = None;
        self.commanded = None;
    }

    /// Returns (head target, body segment, finished: Some(found)).
    fn step(&mut self, c: &mut Ctx) -> (Option<(f64, f64)>, Option<Action>, Option<bool>) {
        if c.wm.in_sight(self.target) {
            return (None, None, Some(true));
        }
        if c.busy {
            return (None, None, None);
        }
        if self.orbit.0 > 0 {
            // Turning with the ball: the head on it, the ball back in front of a foot after
            // each turn, then the next turn.
            let head =
                c.wm.position(ObjectKind::Ball)
                    .map(|p| head_towards(p, &c.p));
            if head.is_none() {
                // The ball is lost: leave it to the rules (`findBall`).
                self.orbit.0 = 0;
                return (None, None, Some(false));
            }
            if !c.wm.in_sight(ObjectKind::Ball) {
                // The head on its way down to the ball: a move now would lose it. A ball not
                // seen within 1.5 s is left to the rules (`findBall`).
                let since = *self.commanded.get_or_insert(c.now);
                if c.now.saturating_sub(since) > 1500 {
                    self.orbit.0 = 0;
                    return (None, None, Some(false));
                }
                return (head, None, None);
            }
            self.commanded = None;
            if let Some(a) = approach_step(c.wm) {
                return (head, Some(a), None);
            }
            // The count holds one more than the turns left: the ball is brought back to a
            // foot after the last turn too, before the look.
            self.orbit.0 -= 1;
            if self.orbit.0 > 0 {
                let a = c.p.motion.turn_step_deg.copysign(self.orbit.1);
                return (head, Some(Action::with(ActionKind::Turn, a)), None);
            }
        }
        if self.turn_left.abs() >= c.p.motion.turn_step_deg {
            let a = c.p.motion.turn_step_deg.copysign(self.turn_left);
            self.turn_left -= a;
            return (None, Some(Action::with(ActionKind::Turn, a)), None);
        }
        if self.walk_left > 0 {
            self.walk_left -= 1;
            if self.walk_left == 0 {
                // Look again from the new place.
                self.started = false;
            }
            let d = c.p.motion.step_cm;
            let seg =
                sidestep_robot(c.wm, 2.0 * d + 10.0).unwrap_or(Action::with(ActionKind::Walk, d));
            return (None, Some(seg), None);
        }
        if !self.started {
            self.started = true;
            let last = if self.target == ObjectKind::Ball {
                c.wm.ball_expected(c.now)
            } else {
                c.wm.object(self.target).last_pos
            };
            if let Some(p) = last {
                let b = p.bearing_deg();
                if b.abs() <= 90.0 {
                    self.guided.push_back(head_towards(p, &c.p));
                } else if self.target == ObjectKind::Ball
                    && c.wm.role() != Role::Goalkeeper
                    && !self.turned
                {
                    // Behind the head's reach: a field player turns its body toward it
                    // first, then looks there.
                    let q = c.p.motion.turn_step_deg;
                    self.turn_left = (b / q).round() * q;
                    self.turned = true;
                    self.started = false;
                    return self.step(c);
                }
            }
        }
        self.guide_by_post(c);
        let pose = match self.guided.front() {
            Some(g) => Some(*g),
            None => self.poses(c.wm.role()).get(self.idx).copied(),
        };
        let Some((pan, tilt)) = pose else {
            c.wm.set_searched(self.target);
            if self.target == ObjectKind::Ball {
                self.idx = 0;
                // A keeper keeps facing the field and sweeps with its head only.
                if c.wm.role() != Role::Goalkeeper {
                    // Last seen ahead but beyond what the camera makes out (a kicked ball
                    // rolls on out of its range): walk that way and look again; otherwise
                    // turn and sweep the next third of the circle.
                    let far =
                        c.wm.object(ObjectKind::Ball).last_pos.filter(|p| {
                            p.norm() > c.p.far_ball_cm && p.bearing_deg().abs() <= 30.0
                        });
                    if far.is_some() {
                        self.walk_left = c.p.search_walk_steps;
                    } else {
                        self.turn_left = 120.0;
                    }
                    return self.step(c);
                }
                return (None, None, None);
            }
            if self.with_ball && c.wm.role() == Role::FieldPlayer && c.wm.ball_held() {
                // Holding the ball with the teammate nowhere in the head's reach (behind the
                // robot, which also hides the ball from it: neither finds the other): turn
                // with the ball toward where the teammate was last seen (else left), and look
                // again.
                let side = c.wm.object(ObjectKind::Partner).last_pos.map_or(-1.0, |p| {
                    if p.x >= 0.0 {
                        1.0
                    } else {
                        -1.0
                    }
                });
                let q = c.p.motion.turn_step_deg;
                self.orbit = (((TURN_WITH_BALL_DEG / q).round() as u32).max(1) + 1, side);
                self.idx = 0;
                self.started = true;
                self.swept_once = true;
                return self.step(c);
            }
            return (None, None, Some(false));
        };
        let at = (c.status.head_pan_deg - pan).abs() < 3.0
            && (c.status.head_tilt_deg - tilt).abs() < 3.0;
        let since = self.commanded.get_or_insert(c.now);
        let stuck = c.now.saturating_sub(*since) > 1500;
        if at || stuck {
            let r = *self.reached.get_or_insert(c.now);
            if c.now.saturating_sub(r) >= c.p.search_dwell_ms {
                if self.guided.pop_front().is_none() {
                    self.idx += 1;
                }
                self.reached = None;
                self.commanded = None;
                return self.step(c);
            }
        }
        (Some((pan, tilt)), None, None)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Machine {
    Segments(VecDeque<Action>),
    Hold(Option<Action>),
    HeadHold(f64, f64),
    Find(Search),
    LookAtBall,
    Follow,
    Kick {
        target: KickTarget,
        remaining: Option<f64>,
        search: Option<Search>,
        kicking: bool,
        /// A goal post was looked for (`kickBall`).
        post_looked: bool,
        /// Lined up for a pass, waiting since then for the receiver to watch the ball.
        waiting_since: Option<u64>,
    },
    Save {
        diving: bool,
    },
    Relocate,
    Support,
}

struct Ctx<'a> {
    now: u64,
    wm: &'a mut WorldModel,
    status: &'a BodyStatus,
    busy: bool,
    p: BrainParams,
}

/// One step of a machine: head target, body segment, finished.
type Step = (Option<(f64, f64)>, Option<Action>, bool);

/// The FutRob kick-direction rule. `goal` and `keeper` are bearings (degrees, positive
/// right) of the opponent goal centre and of its keeper. With the keeper at least
/// `cover` degrees from the goal centre the centre is open: shoot at it. Otherwise shoot
/// `turn` degrees toward the post farther from the keeper.
pub fn shot_angle(goal: f64, keeper: Option<f64>, cover: f64, turn: f64) -> f64 {
    match keeper {
        Some(k) if (goal - k).abs() < cover => {
            if k < goal {
                goal + turn
            } else {
                goal - turn
            }
        }
        _ => goal,
    }
}

/// The centre of a goal of width `goal_width_cm` worked out from one of its lateral posts,
/// `post`, and the goal as vision reported it, `goal` (robot frame, cm): the post is the left
/// one when it lies left of the reported centre, else the right one (so a reported centre may
/// be off by up to half the goal's angular width), and the centre is half that width from it.
/// A post's angle carries none of the error with which vision places a whole goal, so a kick
/// re-aimed this way is not sent wide by it.
pub fn goal_from_post(goal: Vec2, post: Vec2, goal_width_cm: f64) -> Vec2 {
    let d = post.norm().max(1.0);
    let half = (goal_width_cm / 2.0 / d).min(1.0).asin().to_degrees();
    let side = if post.bearing_deg() < goal.bearing_deg() {
        1.0
    } else {
        -1.0
    };
    Vec2::from_polar(
        post.bearing_deg() + side * half,
        d * half.to_radians().cos(),
    )
}

/// A kick direction (degrees, positive right) from the goals' last sightings, dead-reckoned
/// through the robot's own moves even when no longer valid: toward the opponent goal, else
/// away from its own goal, else straight ahead. What a player with the ball but no goal in
/// view does rather than kick blind toward its own goal.
pub fn reckoned_aim(wm: &WorldModel) -> f64 {
    if let Some(g) = wm.object(ObjectKind::OppGoal).last_pos {
        return g.bearing_deg();
    }
    match wm.object(ObjectKind::MyGoal).last_pos {
        Some(g) => {
            let b = g.bearing_deg() + 180.0;
            if b > 180.0 {
                b - 360.0
            } else {
                b
            }
        }
        None => 0.0,
    }
}

/// The head angles (pan, tilt) that centre a point of the robot frame in the image.
pub fn head_towards(p: Vec2, params: &BrainParams) -> (f64, f64) {
    let d = p.norm().max(1.0);
    let pan = p.bearing_deg().clamp(-60.0, 60.0);
    let tilt = (-(params.camera_height_cm / d).atan().to_degrees()
        - params.camera_pitch_offset_deg)
        .clamp(-60.0, 0.0);
    (pan.round(), tilt.round())
}

/// A lateral step around a robot (teammate or opponent, in sight) that stands in the walking
/// corridor — its centre less than 22 cm to either side and less than 35 cm ahead — and
/// nearer than `goal_cm`, the distance to where the robot is walking: two bodies cannot pass
/// through each other, and a robot walking into another one goes nowhere. Also a few lateral
/// steps when the last forward steps brought the ball no nearer (a robot at the shoulder,
/// out of the camera's view, blocks the body: [`WorldModel::walk_blocked`]).
pub fn sidestep_robot(wm: &WorldModel, goal_cm: f64) -> Option<Action> {
    let m = wm.params().motion;
    if wm.walk_blocked() {
        let kind = if wm.dodge_left() {
            ActionKind::WalkLeft
        } else {
            ActionKind::WalkRight
        };
        return Some(Action::with(kind, m.lateral_step_cm));
    }
    [ObjectKind::Partner, ObjectKind::Opponent]
        .into_iter()
        .filter(|k| wm.in_sight(*k))
        .flat_map(|k| wm.object(k).all.iter().copied())
        .filter(|q| q.y > 0.0 && q.y < 35.0 && q.x.abs() < 22.0 && q.norm() < goal_cm - 10.0)
        .min_by(|a, b| a.norm().total_cmp(&b.norm()))
        .map(|q| {
            let kind = if q.x >= 0.0 {
                ActionKind::WalkLeft
            } else {
                ActionKind::WalkRight
            };
            Action::with(kind, m.lateral_step_cm)
        })
}

/// The next segment that brings the ball in front of a foot, or `None` when it is there.
/// Far away: turn toward the ball if it is more than 15° off, else one long step. Close:
/// lateral steps to line a foot up with it, then long or mini steps, never passing it; a ball
/// beside the feet (up to two long steps to the side) is reached with lateral steps, so the
/// heading a kick was lined up on is kept — only a ball behind the toes makes it turn, or
/// lateral steps that do not move the ball across ([`WorldModel::sidestep_blocked`]).
pub fn approach_step(wm: &WorldModel) -> Option<Action> {
    let p = wm.position(ObjectKind::Ball)?;
    if wm.ball_is_mine() {
        return None;
    }
    let pr = wm.params();
    let m = pr.motion;
    let d = p.norm();
    let bearing = p.bearing_deg();
    let turn = |a: f64| Action::with(ActionKind::Turn, m.turn_step_deg.copysign(a));
    if d > 40.0 && bearing.abs() > 15.0 {
        return Some(turn(bearing));
    }
    if d > 40.0 {
        if let Some(a) = sidestep_robot(wm, d) {
            return Some(a);
        }
        let target_y = pr.foot_front_cm + pr.possession_ahead_cm / 2.0;
        let go = (p.y - target_y).min(m.step_cm);
        return Some(if go >= m.step_cm {
            Action::with(ActionKind::Walk, m.step_cm)
        } else {
            Action::with(ActionKind::Walk, m.mini_step_cm)
        });
    }
    if p.y < pr.foot_front_cm - 1.0 {
        // Behind the toes: face it first.
        return Some(turn(if bearing.abs() < 1.0 {
            m.turn_step_deg
        } else {
            bearing
        }));
    }
    if bearing.abs() > 60.0 && p.x.abs() > 2.0 * m.step_cm {
        // Far to the side: face it.
        return Some(turn(bearing));
    }
    let foot = if p.x >= 0.0 {
        pr.foot_offset_cm
    } else {
        -pr.foot_offset_cm
    };
    let dx = p.x - foot;
    if dx.abs() >= m.lateral_step_cm.min(pr.possession_side_cm) {
        if wm.sidestep_blocked() {
            // Side-stepping gets nowhere (a robot at the side): turn toward the ball instead.
            return Some(turn(bearing));
        }
        let kind = if dx > 0.0 {
            ActionKind::WalkRight
        } else {
            ActionKind::WalkLeft
        };
        return Some(Action::with(kind, m.lateral_step_cm));
    }
    let dy = p.y - (pr.foot_front_cm + pr.possession_ahead_cm / 2.0);
    if dy >= m.step_cm {
        Some(Action::with(ActionKind::Walk, m.step_cm))
    } else if dy >= m.mini_step_cm {
        Some(Action::with(ActionKind::Walk, m.mini_step_cm))
    } else {
        // Inside the zone but for a fraction of a mini step: one lateral step toward the foot.
        let kind = if dx > 0.0 {
            ActionKind::WalkRight
        } else {
            ActionKind::WalkLeft
        };
        Some(Action::with(kind, m.lateral_step_cm))
    }
}

/// A ball rolling toward the robot (a pass coming): `Some(Some(step))`, a lateral step that
/// brings the nearer foot onto the ball's line while there is time for it, or `Some(None)`,
/// wait where the ball will arrive — a receiver neither walks into a moving ball (its legs
/// would knock it away) nor lets it roll past. `None` when no ball is coming within reach
/// (`interceptReach` to either side of the feet): approach it as usual.
pub fn intercept_step(wm: &WorldModel, now_ms: u64) -> Option<Option<Action>> {
    if !wm.ball_is_getting_closer(now_ms) {
        return None;
    }
    let pr = wm.params();
    let m = pr.motion;
    let (x_c, t_c) = wm.ball_crossing(pr.foot_front_cm + pr.possession_ahead_cm / 2.0)?;
    let t_c = t_c - wm.ball_track_age_ms(now_ms);
    if x_c.abs() > pr.intercept_reach_cm {
        return None;
    }
    let foot = pr.foot_offset_cm.copysign(x_c);
    let dx = x_c - foot;
    if dx.abs() >= m.lateral_step_cm / 2.0 && t_c > m.lateral_step_ms as f64 {
        let kind = if dx > 0.0 {
            ActionKind::WalkRight
        } else {
            ActionKind::WalkLeft
        };
        return Some(Some(Action::with(kind, m.lateral_step_cm)));
    }
    Some(None)
}

/// Longest a lined-up pass waits for its receiver to report the ball in sight (ms).
pub const PASS_WAIT_MS: u64 = 20_000;

/// Nearer the ball than this (cm), a supporter steps aside rather than facing it.
const SUPPORT_NEAR_CM: f64 = 40.0;

/// A supporter near the ball steps aside until the ball is this far (cm) to its side.
const SUPPORT_CLEAR_CM: f64 = 25.0;

/// The next segment of `supportBall` (`None` without a known ball): face it (turn
/// while it is more than 25° off), walk in while it is farther than `supportDistance` + 30 %,
/// and otherwise hold — a supporter never walks into the ball, which its teammate goes for.
/// Nearer than 40 cm (two teammates at one ball, one leaving it to the other) it side-steps
/// until the ball is 25 cm to its side, out of its teammate's kick.
pub fn support_step(wm: &WorldModel) -> Option<Action> {
    let p = wm.position(ObjectKind::Ball)?;
    let params = wm.params();
    let m = params.motion;
    let bearing = p.bearing_deg();
    if p.norm() < SUPPORT_NEAR_CM {
        // At the ball its teammate plays: step out of the way (no turning to it from this
        // near), since one standing on the ball's line gets it kicked back and forth.
        if p.x.abs() < SUPPORT_CLEAR_CM {
            let kind = if p.x >= 0.0 {
                ActionKind::WalkLeft
            } else {
                ActionKind::WalkRight
            };
            return Some(Action::with(kind, m.lateral_step_cm));
        }
        return None;
    }
    if bearing.abs() > 25.0 {
        return Some(Action::with(
            ActionKind::Turn,
            m.turn_step_deg.copysign(bearing),
        ));
    }
    let over = p.norm() - params.support_distance_cm;
    if over > 0.3 * params.support_distance_cm {
        if let Some(a) = sidestep_robot(wm, p.norm()) {
            return Some(a);
        }
        let step = if over >= m.step_cm {
            m.step_cm
        } else {
            m.mini_step_cm
        };
        return Some(Action::with(ActionKind::Walk, step));
    }
    None
}

/// Splits a basic action into body segments (FutRob's walk decomposition: long steps, then
/// mini steps, never farther than asked).
pub fn segments(a: Action, m: &crate::config::MotionTable) -> VecDeque<Action> {
    let mut v = VecDeque::new();
    match a.kind {
        ActionKind::Walk => match a.param {
            None => v.push_back(Action::with(ActionKind::Walk, m.step_cm)),
            Some(d) => {
                let long = (d / m.step_cm + 1e-9).floor();
                let mini = ((d - long * m.step_cm) / m.mini_step_cm + 1e-9).floor();
                for _ in 0..long as u32 {
                    v.push_back(Action::with(ActionKind::Walk, m.step_cm));
                }
                for _ in 0..mini as u32 {
                    v.push_back(Action::with(ActionKind::Walk, m.mini_step_cm));
                }
            }
        },
        ActionKind::WalkRight | ActionKind::WalkLeft => {
            let n = a
                .param
                .map_or(1.0, |d| (d / m.lateral_step_cm + 1e-9).floor());
            for _ in 0..n as u32 {
                v.push_back(Action::with(a.kind, m.lateral_step_cm));
            }
        }
        ActionKind::Turn => {
            let a = a.param.unwrap_or(m.turn_step_deg);
            let n = (a.abs() / m.turn_step_deg + 1e-9).floor() as u32;
            // Less than one elementary turn: small turns, as the body makes them.
            let (n, q) = if n == 0 && m.small_turn_deg > 0.0 {
                let k = (a.abs() / m.small_turn_deg + 1e-9).floor() as u32;
                (k, m.small_turn_deg)
            } else {
                (n, m.turn_step_deg)
            };
            for _ in 0..n {
                v.push_back(Action::with(ActionKind::Turn, q.copysign(a)));
            }
        }
        _ => v.push_back(a),
    }
    v
}

impl Machine {
    fn new(a: Action, p: &BrainParams) -> Machine {
        match a.kind {
            ActionKind::None | ActionKind::InitialPosition => Machine::Hold(Some(a)),
            ActionKind::TurnHeadHorizontally => Machine::HeadHold(a.param.unwrap_or(0.0), f64::NAN),
            ActionKind::TurnHeadVertically => Machine::HeadHold(f64::NAN, a.param.unwrap_or(0.0)),
            k if k.is_basic() => Machine::Segments(segments(a, &p.motion)),
            ActionKind::LookAtBall => Machine::LookAtBall,
            ActionKind::FollowBall => Machine::Follow,
            ActionKind::KickBall | ActionKind::PassBall | ActionKind::ClearBall => Machine::Kick {
                target: match a.kind {
                    ActionKind::KickBall => KickTarget::Goal,
                    ActionKind::PassBall => KickTarget::Partner,
                    _ => KickTarget::Clear,
                },
                remaining: None,
                search: None,
                kicking: false,
                post_looked: false,
                waiting_since: None,
            },
            ActionKind::Save => Machine::Save { diving: false },
            ActionKind::Relocate => Machine::Relocate,
            ActionKind::SupportBall => Machine::Support,
            ActionKind::FindPartner => Machine::Find(Search::for_a_partner()),
            k => match k.search_target() {
                Some(t) => Machine::Find(Search::new(t)),
                None => Machine::Hold(None),
            },
        }
    }

    /// Whether this machine leaves the head free (for `autoLookAtBall`).
    fn head_free(&self) -> bool {
        match self {
            Machine::Find(_) | Machine::HeadHold(..) | Machine::LookAtBall => false,
            Machine::Kick { search, .. } => search.is_none(),
            _ => true,
        }
    }

    fn step(&mut self, c: &mut Ctx) -> Step {
        let track = |c: &Ctx| {
            c.wm.position(ObjectKind::Ball)
                .map(|p| head_towards(p, &c.p))
        };
        match self {
            Machine::Segments(q) => {
                if c.busy {
                    return (None, None, false);
                }
                match q.pop_front() {
                    Some(s) => (None, Some(s), false),
                    None => (None, None, true),
                }
            }
            Machine::Hold(a) => {
                if c.busy {
                    return (None, None, false);
                }
                (None, a.take(), false)
            }
            Machine::HeadHold(pan, tilt) => {
                let pan = if pan.is_nan() {
                    c.status.head_pan_deg
                } else {
                    *pan
                };
                let tilt = if tilt.is_nan() {
                    c.status.head_tilt_deg
                } else {
                    *tilt
                };
                (Some((pan, tilt)), None, false)
            }
            Machine::Find(s) => {
                let (head, body, fin) = s.step(c);
                (head, body, fin.is_some())
            }
            Machine::LookAtBall => (track(c), None, false),
            Machine::Follow => {
                if c.busy {
                    return (track(c), None, false);
                }
                if let Some(step) = intercept_step(c.wm, c.now) {
                    return (track(c), step, false);
                }
                match approach_step(c.wm) {
                    Some(a) => (track(c), Some(a), false),
                    None => (track(c), None, true),
                }
            }
            Machine::Kick {
                target,
                remaining,
                search,
                kicking,
                post_looked,
                waiting_since,
            } => {
                if *kicking {
                    return (None, None, !c.busy);
                }
                if let Some(s) = search {
                    let (head, body, fin) = s.step(c);
                    match fin {
                        None => return (head, body, false),
                        Some(_) => *search = None,
                    }
                }
                if c.busy {
                    return (track(c), None, false);
                }
                if c.wm.position(ObjectKind::Ball).is_none() {
                    return (None, None, true);
                }
                if let Some(a) = approach_step(c.wm) {
                    return (track(c), Some(a), false);
                }
                if *target == KickTarget::Goal && remaining.is_none() && !*post_looked {
                    // Before aiming, a look at one post of the goal: vision may place a whole
                    // goal off (FutRob's placed the opponent goal 15.8° too far right), a
                    // post it places right.
                    if let Some(g) = c.wm.position(ObjectKind::OppGoal) {
                        *post_looked = true;
                        *search = Some(Search::for_a_post(g));
                        return self.step(c);
                    }
                }
                if remaining.is_none() {
                    // The ball leaves along the robot's heading from where it lies, in front
                    // of a foot: targets are aimed at from the ball, not from the robot's
                    // centre (a teammate 80 cm away at 45° is 58° off from a ball 15 cm ahead).
                    let ball = c.wm.position(ObjectKind::Ball).unwrap_or_default();
                    let from_ball = |q: Vec2| q.minus(ball).bearing_deg();
                    let goal = c.wm.position(ObjectKind::OppGoal).map(|g| {
                        match c.wm.position(ObjectKind::OppPost) {
                            Some(post) => goal_from_post(g, post, c.p.goal_width_cm),
                            None => g,
                        }
                    });
                    let aim = match *target {
                        KickTarget::Goal => goal.map(|g| {
                            let keeper =
                                c.wm.object(ObjectKind::Opponent)
                                    .all
                                    .iter()
                                    .filter(|_| c.wm.last_pos_valid(ObjectKind::Opponent))
                                    .min_by(|a, b| a.minus(g).norm().total_cmp(&b.minus(g).norm()))
                                    .map(|k| from_ball(*k));
                            shot_angle(from_ball(g), keeper, c.p.kick_cover_deg, c.p.kick_turn_deg)
                        }),
                        KickTarget::Partner => c.wm.pass_target(c.now).map(from_ball),
                        KickTarget::Clear => Some(match c.wm.position(ObjectKind::MyGoal) {
                            Some(g) if g.bearing_deg().abs() < 60.0 => {
                                if g.bearing_deg() >= 0.0 {
                                    -90.0
                                } else {
                                    90.0
                                }
                            }
                            _ => reckoned_aim(c.wm),
                        }),
                    };
                    match aim {
                        Some(a) => {
                            tracing::debug!(target: "futrob::action", robot = c.wm.comm.id(), shot = a, "shot direction");
                            *remaining = Some(a)
                        }
                        None => {
                            let t = if *target == KickTarget::Goal {
                                ObjectKind::OppGoal
                            } else {
                                ObjectKind::Partner
                            };
                            if c.wm.object(t).searched {
                                // Searched from here without finding it: kick where the
                                // goals were last seen, else straight ahead.
                                *remaining = Some(reckoned_aim(c.wm));
                            } else {
                                *search = Some(Search::new(t));
                                return self.step(c);
                            }
                        }
                    }
                }
                // Line up: elementary turns, then small turns for the rest (re-approaching
                // the ball after each), and kick only when within half a small turn.
                let r = remaining.unwrap_or(0.0);
                let m = c.p.motion;
                let q = if r.abs() >= m.turn_step_deg / 2.0 || m.small_turn_deg <= 0.0 {
                    m.turn_step_deg
                } else {
                    m.small_turn_deg
                };
                if r.abs() >= q / 2.0 {
                    let a = q.copysign(r);
                    *remaining = Some(r - a);
                    return (track(c), Some(Action::with(ActionKind::Turn, a)), false);
                }
                // A pass to a teammate that is not watching the ball (still looking for it,
                // turned away) rolls past it: lined up, wait until a field-player teammate
                // reports the ball in sight, for at most PASS_WAIT_MS.
                if *target == KickTarget::Partner && !c.wm.receiver_watching_ball(c.now) {
                    let since = *waiting_since.get_or_insert(c.now);
                    if c.now.saturating_sub(since) < PASS_WAIT_MS {
                        return (track(c), None, false);
                    }
                }
                let right = c.wm.possession_foot().unwrap_or(true);
                *kicking = true;
                if *target == KickTarget::Partner {
                    c.wm.passed(c.now);
                }
                let kind = if right {
                    ActionKind::KickRight
                } else {
                    ActionKind::KickLeft
                };
                (track(c), Some(Action::new(kind)), false)
            }
            Machine::Save { diving } => {
                if *diving {
                    return (None, None, !c.busy);
                }
                let head = track(c);
                if c.busy || c.wm.role() != Role::Goalkeeper {
                    return (head, None, false);
                }
                let Some((x_c, t_c, steps, _)) = c.wm.save_plan() else {
                    return (head, None, false);
                };
                // The plan is from the newest sighting; the ball has rolled on since (vision
                // runs at 4 Hz, the brain far faster): time left from now.
                let t_c = t_c - c.wm.ball_track_age_ms(c.now);
                let p = c.p;
                if steps == 0 && x_c.abs() <= p.standing_coverage_cm / 2.0 {
                    // The ball will hit the body: stand still.
                    return (head, None, false);
                }
                let right = x_c > 0.0;
                if steps > 0 && t_c > (p.motion.lateral_step_ms + p.motion.save_ms) as f64 {
                    let kind = if right {
                        ActionKind::WalkRight
                    } else {
                        ActionKind::WalkLeft
                    };
                    return (
                        head,
                        Some(Action::with(kind, p.motion.lateral_step_cm)),
                        false,
                    );
                }
                if t_c <= (p.motion.save_ms + p.save_time_threshold_ms) as f64 || steps > 0 {
                    *diving = true;
                    let kind = if right {
                        ActionKind::SaveRight
                    } else {
                        ActionKind::SaveLeft
                    };
                    return (head, Some(Action::new(kind)), false);
                }
                (head, None, false)
            }
            Machine::Support => {
                if c.busy {
                    return (track(c), None, false);
                }
                if c.wm.position(ObjectKind::Ball).is_none() {
                    return (None, None, true);
                }
                // A ball rolling its way (a pass, a rebound): onto its line, and wait.
                if let Some(step) = intercept_step(c.wm, c.now) {
                    return (track(c), step, false);
                }
                (track(c), support_step(c.wm), false)
            }
            Machine::Relocate => {
                if c.busy {
                    return (None, None, false);
                }
                let (Some(dx), _) = c.wm.gk_offsets(c.now) else {
                    return (None, None, true);
                };
                let step = c.p.motion.lateral_step_cm;
                if dx.abs() < step {
                    return (None, None, true);
                }
                // Right of the centre: step left, and the other way.
                let kind = if dx > 0.0 {
                    ActionKind::WalkLeft
                } else {
                    ActionKind::WalkRight
                };
                (None, Some(Action::with(kind, step)), false)
            }
        }
    }
}

/// The action handler: runs one action at a time, segment by segment.
#[derive(Debug, Clone)]
pub struct ActionHandler {
    current: Option<(Action, Machine)>,
    pending: Option<Action>,
    issued: u64,
    in_flight: Option<(Action, u64)>,
    head: Option<(f64, f64, u64)>,
    getting_up: bool,
}

impl Default for ActionHandler {
    fn default() -> Self {
        Self::new()
    }
}

impl ActionHandler {
    /// An idle handler.
    pub fn new() -> ActionHandler {
        ActionHandler {
            current: None,
            pending: None,
            issued: 0,
            in_flight: None,
            head: None,
            getting_up: false,
        }
    }

    /// The running action.
    pub fn current(&self) -> Option<Action> {
        self.current.as_ref().map(|(a, _)| *a)
    }

    /// The action waiting for the next equilibrium point.
    pub fn pending(&self) -> Option<Action> {
        self.pending
    }

    /// Body segments sent so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }

    /// The segment the body is executing, if any.
    pub fn in_flight(&self) -> Option<Action> {
        self.in_flight.map(|(a, _)| a)
    }

    /// Asks for `a`. Ignored if it is the running action; otherwise it replaces whatever
    /// was waiting and starts at the next equilibrium point.
    pub fn request(&mut self, a: Action) {
        if self.current.as_ref().is_some_and(|(c, _)| c.same_as(&a)) {
            self.pending = None;
            return;
        }
        self.pending = Some(a);
    }

    /// Notes in the world model the move of segment `seg`, made between `during.0` and
    /// `during.1` (ms).
    fn apply_motion(seg: Action, wm: &mut WorldModel, during: (u64, u64)) {
        let d = seg.param.unwrap_or(0.0);
        let during = Some(during);
        match seg.kind {
            ActionKind::Walk => {
                wm.walk_finished(d);
                wm.robot_moved_over(Vec2::new(0.0, d), 0.0, during);
            }
            ActionKind::WalkRight => {
                wm.lateral_finished(d);
                wm.robot_moved_over(Vec2::new(d, 0.0), 0.0, during);
                wm.keeper_stepped(d);
            }
            ActionKind::WalkLeft => {
                wm.lateral_finished(-d);
                wm.robot_moved_over(Vec2::new(-d, 0.0), 0.0, during);
                wm.keeper_stepped(-d);
            }
            ActionKind::Turn => {
                wm.turn_finished();
                wm.robot_moved_over(Vec2::default(), d, during);
            }
            ActionKind::KickRight | ActionKind::KickLeft => wm.kicked(),
            ActionKind::FrontGetUp
            | ActionKind::BackGetUp
            | ActionKind::SaveLeft
            | ActionKind::SaveRight => wm.robot_moved(Vec2::default(), 0.0),
            _ => {}
        }
    }

    /// One step at `now_ms`: notes finished segments, switches actions at equilibrium
    /// points, runs the current action, and appends commands to `out`.
    pub fn step(
        &mut self,
        now_ms: u64,
        wm: &mut WorldModel,
        status: &BodyStatus,
        out: &mut HandlerOutput,
    ) {
        let p = *wm.params();
        let mut busy = false;
        if let Some((seg, at)) = self.in_flight {
            if status.finished >= self.issued || now_ms.saturating_sub(at) > p.segment_timeout_ms {
                self.in_flight = None;
                Self::apply_motion(seg, wm, (at, now_ms));
            } else {
                busy = true;
            }
        }
        if let Some(fall) = status.fallen {
            if p.auto_get_up && !busy && !self.getting_up {
                let kind = match fall {
                    Fall::Front => ActionKind::FrontGetUp,
                    Fall::Back => ActionKind::BackGetUp,
                };
                self.current = None;
                self.getting_up = true;
                self.emit_body(Action::new(kind), now_ms, out);
            }
            return;
        }
        if !busy {
            self.getting_up = false;
        }
        if !busy {
            if let Some(a) = self.pending.take() {
                tracing::debug!(target: "futrob::action", robot = wm.comm.id(), action = %a, "Execute");
                self.current = Some((a, Machine::new(a, &p)));
                out.started = Some(a);
            }
        }
        let mut head_free = true;
        if let Some((_, m)) = &mut self.current {
            let mut c = Ctx {
                now: now_ms,
                wm,
                status,
                busy,
                p,
            };
            let (head, body, done) = m.step(&mut c);
            head_free = m.head_free();
            if let Some((pan, tilt)) = head {
                self.emit_head(pan, tilt, now_ms, out);
            }
            if let Some(b) = body {
                if !busy {
                    self.emit_body(b, now_ms, out);
                }
            }
            if done {
                self.current = None;
            }
        }
        if p.auto_look_at_ball && head_free {
            if let Some(pos) = wm.position(ObjectKind::Ball) {
                let (pan, tilt) = head_towards(pos, &p);
                self.emit_head(pan, tilt, now_ms, out);
            }
        }
    }

    fn emit_body(&mut self, a: Action, now_ms: u64, out: &mut HandlerOutput) {
        self.issued += 1;
        self.in_flight = Some((a, now_ms));
        out.commands.push(a);
    }

    fn emit_head(&mut self, pan: f64, tilt: f64, now_ms: u64, out: &mut HandlerOutput) {
        let (pan, tilt) = (pan.clamp(-60.0, 60.0), tilt.clamp(-60.0, 0.0));
        let resend = match self.head {
            Some((p0, t0, at)) => {
                (p0 - pan).abs() >= 2.0
                    || (t0 - tilt).abs() >= 2.0
                    || now_ms.saturating_sub(at) >= 1000
            }
            None => true,
        };
        if !resend {
            return;
        }
        let (p0, t0) = self.head.map_or((f64::NAN, f64::NAN), |(p, t, _)| (p, t));
        if (p0 - pan).abs() >= 0.5
            || p0.is_nan()
            || now_ms.saturating_sub(self.head.map_or(0, |h| h.2)) >= 1000
        {
            out.commands
                .push(Action::with(ActionKind::TurnHeadHorizontally, pan));
        }
        if (t0 - tilt).abs() >= 0.5
            || t0.is_nan()
            || now_ms.saturating_sub(self.head.map_or(0, |h| h.2)) >= 1000
        {
            out.commands
                .push(Action::with(ActionKind::TurnHeadVertically, tilt));
        }
        self.head = Some((pan, tilt, now_ms));
    }
}
