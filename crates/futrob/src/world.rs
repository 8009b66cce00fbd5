//! The world model: what the robot knows about the objects around it, in its own frame, and
//! the values of the 38 predicates.
//!
//! Positions are centimetres in the robot frame: the robot's centre projected on the floor
//! is the origin, `x` is lateral (positive to the right), `y` is forward. A camera reading
//! (angle in degrees from straight ahead, positive right; distance in cm) becomes
//! `x = d·sin a`, `y = d·cos a`.

use crate::config::BrainParams;
use crate::msg::{CommParams, Role, TeamComm};
use crate::names::{Family, ObjectKind, Predicate};
use crate::rules::PredicateSet;
use crate::sighting::Sighting;
use crate::trajectory::{motion_left, reckon, Trajectory, Vec2};

/// How long a field player averages its sightings of the keeper before reporting, ms.
pub const KEEPER_WINDOW_MS: u64 = 2000;

/// Sightings of the keeper (half the window at 4 Hz) a field player needs before it reports.
pub const KEEPER_MIN_SIGHTINGS: usize = 4;

/// What the model knows about one kind of object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObjectState {
    /// Seen, after hysteresis.
    pub visible: bool,
    streak: u32,
    /// Where it was last seen (nearest of its kind), dead-reckoned through the robot's own
    /// moves.
    pub last_pos: Option<Vec2>,
    /// Every object of this kind in the latest frame that saw one (dead-reckoned).
    pub all: Vec<Vec2>,
    /// When it was last seen, ms.
    pub last_seen_ms: Option<u64>,
    seen_since_move: bool,
    /// Searched for from the current position (within `searchRadius` of where it was).
    pub searched: bool,
    /// Where it was searched for from, dead-reckoned through the robot's moves.
    searched_from: Option<Vec2>,
}

/// The world model of one robot.
#[derive(Debug, Clone)]
pub struct WorldModel {
    params: BrainParams,
    objects: [ObjectState; 9],
    /// The ball trajectory model.
    pub trajectory: Trajectory,
    /// The team link: teammate table, discovery, outgoing messages.
    pub comm: TeamComm,
    ball_mine_since: Option<u64>,
    last_ball_mine: bool,
    /// `ballIsMine` with its hysteresis (see [`WorldModel::ball_held`]).
    holding: bool,
    gk_x: Option<(f64, u64)>,
    gk_y: Option<(f64, u64)>,
    kicked: bool,
    /// When this robot last passed the ball.
    passed_at: Option<u64>,
    frames: u64,
    /// The keeper's offsets (goal frame, cm) seen in the last `KEEPER_WINDOW_MS`, with
    /// their times.
    keeper_seen: std::collections::VecDeque<(u64, f64, f64)>,
    /// The ball's distance seen at the end of the last forward step, cm.
    walk_ref: Option<f64>,
    /// Forward steps in a row that brought the ball less than 30 % of a step nearer.
    stalled_walks: u32,
    /// Lateral steps taken since the walk was found blocked.
    dodge_steps: u32,
    /// Times the walk was found blocked (the dodge alternates sides).
    dodges: u32,
    /// The ball's offset to the side (cm, right positive) seen at the end of the last lateral
    /// step.
    side_ref: Option<f64>,
    /// Lateral steps in a row that moved the ball less than 30 % of a step across.
    stalled_sides: u32,
}

/// Forward steps in a row without progress after which the walk counts as blocked.
const STALLED_WALKS: u32 = 3;
/// Lateral steps taken to get round whatever blocks the walk.
const DODGE_STEPS: u32 = 3;
/// Lateral steps in a row without moving the ball across after which they count as blocked.
const STALLED_SIDESTEPS: u32 = 3;

impl WorldModel {
    /// The model of robot `id` playing `role`.
    pub fn new(id: i32, role: Role, params: BrainParams) -> WorldModel {
        WorldModel {
            params,
            objects: Default::default(),
            trajectory: Trajectory::new(params.trajectory),
            comm: TeamComm::new(id, role, params.comm),
            ball_mine_since: None,
            last_ball_mine: false,
            holding: false,
            gk_x: None,
            gk_y: None,
            kicked: false,
            passed_at: None,
            frames: 0,
            keeper_seen: std::collections::VecDeque::new(),
            walk_ref: None,
            stalled_walks: 0,
            dodge_steps: 0,
            dodges: 0,
            side_ref: None,
            stalled_sides: 0,
        }
    }

    /// Parameters.
    pub fn params(&self) -> &BrainParams {
        &self.params
    }

    /// Comm parameters.
    pub fn comm_params(&self) -> CommParams {
        self.params.comm
    }

    /// This robot's role.
    pub fn role(&self) -> Role {
        self.comm.role()
    }

    /// One object's state.
    pub fn object(&self, k: ObjectKind) -> &ObjectState {
        &self.objects[k.index()]
    }

    /// Vision frames handled.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// Hands in one vision cycle: every object seen in it (an object not listed is not
    /// seen). Several sightings of a kind are allowed (teammates, opponents, posts).
    pub fn observe(&mut self, now_ms: u64, frame: &[Sighting]) {
        self.frames += 1;
        let n = self.params.hysteresis.max(1);
        for kind in ObjectKind::ALL {
            let st = &mut self.objects[kind.index()];
            let mut nearest: Option<Vec2> = None;
            let mut any = false;
            for s in frame.iter().filter(|s| s.object == kind) {
                if !s.distance_cm.is_finite() || !s.angle_deg.is_finite() || s.distance_cm < 0.0 {
                    continue;
                }
                let p = s.position();
                if !any {
                    st.all.clear();
                }
                any = true;
                st.all.push(p);
                if nearest.is_none_or(|q| p.norm() < q.norm()) {
                    nearest = Some(p);
                }
            }
            if any != st.visible {
                st.streak += 1;
                if st.streak >= n {
                    st.visible = any;
                    st.streak = 0;
                }
            } else {
                st.streak = 0;
            }
            if let Some(p) = nearest {
                st.last_pos = Some(p);
                st.last_seen_ms = Some(now_ms);
                if st.visible {
                    st.seen_since_move = true;
                    if kind == ObjectKind::Ball {
                        self.kicked = false;
                    }
                }
            }
            if kind == ObjectKind::Ball {
                if let Some(p) = nearest {
                    if self.trajectory.last_time().is_some_and(|t| {
                        now_ms.saturating_sub(t) > self.params.trajectory_timeout_ms
                    }) {
                        self.trajectory.clear();
                    }
                    self.trajectory.add(now_ms, p);
                }
            }
        }
        while self
            .keeper_seen
            .front()
            .is_some_and(|(t, _, _)| now_ms.saturating_sub(*t) > KEEPER_WINDOW_MS)
        {
            self.keeper_seen.pop_front();
        }
        if let Some((x, y)) = self.keeper_offset_in_frame(frame) {
            self.keeper_seen.push_back((now_ms, x, y));
        }
        self.holding = self.ball_held();
        // Had the ball: at the feet and not rolling (a pass rolling past the feet is not
        // received).
        let mine = self.holding && !self.trajectory.is_moving();
        if mine && !self.last_ball_mine {
            self.ball_mine_since = Some(now_ms);
        }
        self.last_ball_mine = mine;
        tracing::trace!(target: "futrob::vision", robot = self.comm.id(), objects = frame.len(), "frame");
    }

    /// The robot moved: forward/lateral by `delta` (cm, robot frame before the move), then
    /// turned right by `turn_deg`. Positions are dead-reckoned; every `…LastPosValid` of an
    /// object not in sight becomes false, and every `…Searched` unless the move was a turn in
    /// place.
    pub fn robot_moved(&mut self, delta: Vec2, turn_deg: f64) {
        self.robot_moved_over(delta, turn_deg, None);
    }

    /// [`WorldModel::robot_moved`] for a move made between `during.0` and `during.1` (ms): the
    /// camera keeps running while the body moves, so a position seen during the move is
    /// moved by the part of it still to come when it was seen (the move taken as steady), not
    /// by all of it. Moving it by all of it would count the first part twice: after a 20°
    /// turn, a ball seen in the turn's last frames would be placed up to 20° off, on the side
    /// the robot came from.
    pub fn robot_moved_over(&mut self, delta: Vec2, turn_deg: f64, during: Option<(u64, u64)>) {
        // `…Searched` is "searched for from the current position": it holds while the robot
        // stays within `searchRadius` of where it searched (a clearance turning in 20° steps,
        // or a player lining up to a ball near a goal too close to be seen, would otherwise
        // search for it again after every step).
        let radius = self.params.search_radius_cm;
        for st in &mut self.objects {
            let f = motion_left(during, st.last_seen_ms.unwrap_or(0));
            let tf = |p: Vec2| reckon(p, delta, turn_deg, f);
            st.last_pos = st.last_pos.map(tf);
            for p in &mut st.all {
                *p = tf(*p);
            }
            st.seen_since_move = st.visible && st.seen_since_move;
            st.searched_from = st
                .searched_from
                .map(|p| reckon(p, delta, turn_deg, 1.0))
                .filter(|p| p.norm() <= radius);
            st.searched = st.searched_from.is_some();
        }
        self.keeper_seen.clear();
        self.holding = self.ball_held();
        self.trajectory.shift_frame_over(delta, turn_deg, during);
    }

    /// A forward step of `step_cm` ended (call before [`WorldModel::robot_moved`]): if the
    /// ball, in sight, came less than 30 % of the step nearer since the last step, the step
    /// was stalled — another robot at the shoulder, out of the camera's view, blocks the body.
    pub fn walk_finished(&mut self, step_cm: f64) {
        let seen = self
            .in_sight(ObjectKind::Ball)
            .then(|| self.objects[ObjectKind::Ball.index()].last_pos)
            .flatten()
            .map(|p| p.norm());
        match (self.walk_ref, seen) {
            (Some(prev), Some(cur)) if prev - cur < 0.3 * step_cm => self.stalled_walks += 1,
            _ => self.stalled_walks = 0,
        }
        if self.stalled_walks == STALLED_WALKS {
            self.dodges += 1;
            self.dodge_steps = 0;
        }
        self.walk_ref = seen;
    }

    /// A lateral step of `step_cm` (positive right) ended (call before
    /// [`WorldModel::robot_moved`]): counts the steps of a dodge round a blocked walk, and, if
    /// the ball, in sight, moved less than 30 % of the step across since the last lateral
    /// step, the step was stalled — a robot at the side (two opponents side-stepping into
    /// each other at the ball) blocks the body.
    pub fn lateral_finished(&mut self, step_cm: f64) {
        let seen = self
            .in_sight(ObjectKind::Ball)
            .then(|| self.objects[ObjectKind::Ball.index()].last_pos)
            .flatten()
            .map(|p| p.x);
        match (self.side_ref, seen) {
            (Some(prev), Some(cur)) if (prev - cur) * step_cm.signum() < 0.3 * step_cm.abs() => {
                self.stalled_sides += 1
            }
            _ => self.stalled_sides = 0,
        }
        self.side_ref = seen;
        self.walk_ref = None;
        if self.walk_blocked() {
            self.dodge_steps += 1;
            if self.dodge_steps >= DODGE_STEPS {
                self.stalled_walks = 0;
            }
        }
    }

    /// A turn ended: the walk starts afresh.
    pub fn turn_finished(&mut self) {
        self.walk_ref = None;
        self.stalled_walks = 0;
        self.side_ref = None;
        self.stalled_sides = 0;
    }

    /// The last lateral steps toward the ball did not move it across (see
    /// [`WorldModel::lateral_finished`]): line up by turning instead.
    pub fn sidestep_blocked(&self) -> bool {
        self.stalled_sides >= STALLED_SIDESTEPS
    }

    /// The walk towards the ball is blocked: step sideways, to the side
    /// [`WorldModel::dodge_left`] says, until a few lateral steps are done.
    pub fn walk_blocked(&self) -> bool {
        self.stalled_walks >= STALLED_WALKS
    }

    /// Which way to dodge a blocked walk (alternates from one blocked walk to the next).
    pub fn dodge_left(&self) -> bool {
        self.dodges % 2 == 1
    }

    /// The robot passed the ball to a teammate at `now_ms` (with [`WorldModel::kicked`]):
    /// for the pass window the ball is the teammate's, and this robot leaves it to it
    /// (`partnerNearerBall`) unless it gets the ball back.
    pub fn passed(&mut self, now_ms: u64) {
        self.passed_at = Some(now_ms);
    }

    /// The robot kicked: the ball is expected to leave, so its last position is no longer
    /// valid until it is seen again.
    pub fn kicked(&mut self) {
        self.kicked = true;
        self.objects[ObjectKind::Ball.index()].seen_since_move = false;
        self.trajectory.clear();
        self.holding = false;
    }

    /// Marks `k` as searched for from here.
    pub fn set_searched(&mut self, k: ObjectKind) {
        let st = &mut self.objects[k.index()];
        st.searched = true;
        st.searched_from = Some(Vec2::default());
    }

    /// The keeper's offset along the goal line reported by a field player (keeper only).
    pub fn set_gk_offset_x(&mut self, cm: f64, now_ms: u64) {
        self.gk_x = Some((cm, now_ms));
    }

    /// The keeper's distance out from the goal line reported by a field player.
    pub fn set_gk_offset_y(&mut self, cm: f64, now_ms: u64) {
        self.gk_y = Some((cm, now_ms));
    }

    /// The keeper's offsets (x along the goal line, + to its right; y out from the line),
    /// while younger than the TTL.
    pub fn gk_offsets(&self, now_ms: u64) -> (Option<f64>, Option<f64>) {
        let ttl = self.params.comm.ttl_ms;
        let f = |v: Option<(f64, u64)>| {
            v.filter(|(_, t)| now_ms.saturating_sub(*t) <= ttl)
                .map(|(v, _)| v)
        };
        (f(self.gk_x), f(self.gk_y))
    }

    /// The keeper moved `dx` cm along the goal line (+ right): dead-reckon its offset.
    pub fn keeper_stepped(&mut self, dx: f64) {
        if let Some((v, t)) = self.gk_x {
            self.gk_x = Some((v + dx, t));
        }
    }

    /// `…InSight`.
    pub fn in_sight(&self, k: ObjectKind) -> bool {
        self.objects[k.index()].visible
    }

    /// `…LastPosValid`.
    pub fn last_pos_valid(&self, k: ObjectKind) -> bool {
        let st = &self.objects[k.index()];
        if k == ObjectKind::Ball {
            if self.kicked {
                return st.visible;
            }
            if !st.visible && self.trajectory.is_moving() {
                return false;
            }
        }
        st.visible || st.seen_since_move
    }

    /// The last known position of `k`, if it is still valid.
    pub fn position(&self, k: ObjectKind) -> Option<Vec2> {
        if self.last_pos_valid(k) {
            self.objects[k.index()].last_pos
        } else {
            None
        }
    }

    /// Which foot the ball is in front of: `Some(true)` right, `Some(false)` left, when it
    /// is in the possession zone.
    pub fn possession_foot(&self) -> Option<bool> {
        self.possession_foot_within(0.0)
    }

    fn possession_foot_within(&self, margin: f64) -> Option<bool> {
        let p = self.position(ObjectKind::Ball)?;
        let pr = &self.params;
        let ahead = p.y - pr.foot_front_cm;
        if !(-1.0 - margin..=pr.possession_ahead_cm + margin).contains(&ahead) {
            return None;
        }
        let side = pr.possession_side_cm + margin / 2.0;
        if (p.x - pr.foot_offset_cm).abs() <= side && p.x >= 0.0 {
            Some(true)
        } else if (p.x + pr.foot_offset_cm).abs() <= side {
            Some(false)
        } else {
            None
        }
    }

    /// The ball is in front of a foot, inside the possession zone (what a kick needs).
    pub fn ball_is_mine(&self) -> bool {
        self.possession_foot().is_some()
    }

    /// `ballIsMine` as the rules and the team see it: inside the possession zone, or, for a
    /// ball the robot already held, within `possessionMargin` more of it — so that the noise
    /// of one sighting at the zone's edge does not send the robot back to the ball between
    /// finding the goal and kicking.
    pub fn ball_held(&self) -> bool {
        self.ball_is_mine()
            || (self.holding
                && self
                    .possession_foot_within(self.params.possession_margin_cm)
                    .is_some())
    }

    /// `ballIsGettingCloser`: the fitted ball motion reduces its range, faster than the still
    /// threshold, and the ball was seen within the trajectory timeout.
    pub fn ball_is_getting_closer(&self, now_ms: u64) -> bool {
        let t = &self.trajectory;
        let (Some(line), Some(p), Some(last)) = (t.line(), t.position(), t.last_time()) else {
            return false;
        };
        (t.len() >= 3 || t.len() >= 2 && t.started_from_rest())
            && now_ms.saturating_sub(last) <= self.params.trajectory_timeout_ms
            && t.is_moving()
            && line.dir.dot(p) < 0.0
    }

    fn in_range(&self, k: ObjectKind, range: f64) -> bool {
        self.position(k).is_some_and(|p| p.norm() <= range)
    }

    /// `gkNeedsRelocate`: keeper only; the reported offset along the goal line within
    /// `[GK_X_DIFF_THRESHOLD_MIN, GK_X_DIFF_THRESHOLD_MAX]` (inclusive).
    pub fn gk_needs_relocate(&self, now_ms: u64) -> bool {
        if self.role() != Role::Goalkeeper {
            return false;
        }
        let (x, _) = self.gk_offsets(now_ms);
        x.is_some_and(|x| x.abs() >= self.params.gk_x_min_cm && x.abs() <= self.params.gk_x_max_cm)
    }

    /// The keeper's save plan for the current ball trajectory: (crossing point x relative to
    /// the keeper, cm; time to crossing, ms; lateral steps needed; keeper time, ms). `None`
    /// when the ball does not cross the keeper's line inside the goal.
    pub fn save_plan(&self) -> Option<(f64, f64, u32, f64)> {
        let (x_c, t_c) = self.trajectory.crossing(0.0)?;
        let p = &self.params;
        // The keeper stands near the goal centre: a crossing beyond the posts is wide.
        if x_c.abs() > p.goal_width_cm / 2.0 + p.save_distance_cm {
            return None;
        }
        let need = (x_c.abs() - p.standing_coverage_cm / 2.0).max(0.0);
        if need == 0.0 {
            return Some((x_c, t_c, 0, 0.0));
        }
        let steps = ((need - p.save_distance_cm).max(0.0) / p.motion.lateral_step_cm).ceil() as u32;
        let t_keeper = steps as f64 * p.motion.lateral_step_ms as f64 + p.motion.save_ms as f64;
        Some((x_c, t_c, steps, t_keeper))
    }

    /// Where to look for a ball that left the camera's view: where its trajectory says it
    /// will be 2 s after it was last seen, or, for a ball not seen rolling, where it was last seen (`None` if never).
    /// A pass that rolls past its receiver is looked for behind it, where it went, not in
    /// front of it, where it was last seen.
    pub fn ball_expected(&self, now_ms: u64) -> Option<Vec2> {
        let last = self.object(ObjectKind::Ball).last_pos;
        let t = &self.trajectory;
        let fresh = t
            .last_time()
            .is_some_and(|s| now_ms.saturating_sub(s) <= self.params.trajectory_timeout_ms);
        if fresh && t.is_moving() && (t.len() >= 3 || t.started_from_rest()) {
            // Where it will be 2 s after it was last seen (a pass has about stopped by then;
            // no farther, as the deceleration is an estimate, 0 until known).
            let horizon = t.last_time().unwrap_or(now_ms).saturating_add(2000);
            return t.predict(horizon).or(last);
        }
        last
    }

    /// How long ago (ms) the newest ball sighting of the trajectory model was taken: what a
    /// prediction made from it ([`WorldModel::save_plan`], [`WorldModel::ball_crossing`]) must
    /// take off its time to go. 0 without a trajectory.
    pub fn ball_track_age_ms(&self, now_ms: u64) -> f64 {
        self.trajectory
            .last_time()
            .map_or(0.0, |t| now_ms.saturating_sub(t) as f64)
    }

    /// `gkNeedsStartSaving`: keeper only; the ball will cross its line inside the goal,
    /// outside what it covers standing, and the time left minus the time the keeper needs
    /// is within `GK_SAVE_TIME_THRESHOLD_MS`.
    pub fn gk_needs_start_saving(&self) -> bool {
        if self.role() != Role::Goalkeeper {
            return false;
        }
        match self.save_plan() {
            Some((_, t_c, _, t_keeper)) if t_keeper > 0.0 => {
                t_c - t_keeper <= self.params.save_time_threshold_ms as f64
            }
            _ => false,
        }
    }

    /// Where and when (ms) the rolling ball crosses the line `y_cm` ahead of the robot
    /// (x: cm, + right), from the trajectory model; `None` if it is not coming that far.
    pub fn ball_crossing(&self, y_cm: f64) -> Option<(f64, f64)> {
        self.trajectory.crossing(y_cm)
    }

    /// Whether a pass would find its receiver watching: some fresh field-player teammate
    /// reports the ball in sight, or there is no fresh field-player teammate to wait for.
    pub fn receiver_watching_ball(&self, now_ms: u64) -> bool {
        let mut field = self
            .comm
            .fresh(now_ms)
            .filter(|t| t.role == Some(Role::FieldPlayer))
            .peekable();
        field.peek().is_none() || field.any(|t| t.ball_in_sight)
    }

    /// `partnerPass`: a fresh teammate reported `passBall` within the pass window, and this
    /// robot has not had the ball since.
    pub fn partner_pass(&self, now_ms: u64) -> bool {
        match self.comm.recent_pass(now_ms) {
            Some(t) => self.ball_mine_since.is_none_or(|m| m < t),
            None => false,
        }
    }

    /// `partnerNearerBall`: a fresh field-player teammate has the ball, or reports it nearer
    /// than this robot sees it — by more than `supportMargin`, or within it when its id is
    /// lower (so two robots that see the ball about as near agree on one of them). A robot
    /// that does not see the ball is farther than any that does. Also true for the pass
    /// window after this robot passed (the pass is its teammate's ball), until it holds the
    /// ball again. While this robot holds the ball, true only when a fresh field-player
    /// teammate with a lower id holds it too (two teammates face to face over one ball: one
    /// of them leaves it to the other). After a teammate's pass (`partnerPass`) the margin and
    /// the ids do not count: the receiver leaves the ball only to a teammate that holds it or
    /// sees it nearer. False for a keeper.
    pub fn partner_nearer_ball(&self, now_ms: u64) -> bool {
        if self.role() != Role::FieldPlayer {
            return false;
        }
        if self.ball_held() {
            let me = self.comm.id();
            return self
                .comm
                .fresh(now_ms)
                .any(|t| t.role == Some(Role::FieldPlayer) && t.ball_is_mine && t.id < me);
        }
        if let Some(t) = self.passed_at {
            let window = now_ms.saturating_sub(t) <= self.params.comm.pass_window_ms;
            if window && self.ball_mine_since.is_none_or(|m| m < t) {
                return true;
            }
        }
        let mine = if self.in_sight(ObjectKind::Ball) {
            self.position(ObjectKind::Ball).map(|p| p.norm())
        } else {
            None
        };
        // After a teammate's pass the ball is meant for this robot: it leaves it only to a
        // teammate that holds it or sees it nearer, with no margin and no precedence of ids
        // (with them, a pass that stopped 20 cm short was left by both robots, the passer for
        // its pass window and the receiver to the passer's lower id).
        let pass_for_me = self.partner_pass(now_ms);
        let margin = if pass_for_me {
            0.0
        } else {
            self.params.support_margin_cm
        };
        let me = self.comm.id();
        self.comm
            .fresh(now_ms)
            .filter(|t| t.role == Some(Role::FieldPlayer))
            .any(|t| {
                if t.ball_is_mine {
                    return true;
                }
                let theirs = match (t.ball_in_sight, t.ball_distance) {
                    (true, Some(d)) => d as f64,
                    _ => return false,
                };
                match mine {
                    None => true,
                    Some(d) => {
                        theirs < d - margin || (!pass_for_me && theirs <= d + margin && t.id < me)
                    }
                }
            })
    }

    /// The teammate a match pass goes to (`partnerBetterPlaced`): of the teammates this robot
    /// sees within pass range (`passMinRange` to `kickRange`), the one nearest the opponent
    /// goal (its last sighting, dead-reckoned through the robot's moves), if it stands at least
    /// `passGain` nearer that goal than this robot. `None` for a keeper, when the opponent goal
    /// was never seen, and for the pass window after a teammate's pass (a pass is not sent
    /// straight back to its passer: with both players judging from their own noisy views,
    /// each could find the other better placed).
    pub fn better_placed_partner(&self, now_ms: u64) -> Option<Vec2> {
        if self.role() != Role::FieldPlayer || self.comm.recent_pass(now_ms).is_some() {
            return None;
        }
        if !self.last_pos_valid(ObjectKind::Partner) {
            return None;
        }
        let g = self.objects[ObjectKind::OppGoal.index()].last_pos?;
        let p = &self.params;
        self.objects[ObjectKind::Partner.index()]
            .all
            .iter()
            .filter(|q| (p.pass_min_range_cm..=p.kick_range_cm).contains(&q.norm()))
            .filter(|q| q.minus(g).norm() <= g.norm() - p.pass_gain_cm)
            .min_by(|a, b| a.minus(g).norm().total_cmp(&b.minus(g).norm()))
            .copied()
    }

    /// Where `passBall` aims: the better-placed teammate when there is one
    /// ([`WorldModel::better_placed_partner`]), else the nearest teammate seen (FutRob's
    /// pass, which its case study makes without a goal).
    pub fn pass_target(&self, now_ms: u64) -> Option<Vec2> {
        self.better_placed_partner(now_ms)
            .or_else(|| self.position(ObjectKind::Partner))
    }

    /// The value of every predicate at `now_ms`.
    pub fn predicates(&self, now_ms: u64) -> PredicateSet {
        let mut s = PredicateSet::default();
        for k in ObjectKind::ALL {
            s.set(Predicate::of(k, Family::InSight), self.in_sight(k));
            s.set(
                Predicate::of(k, Family::LastPosValid),
                self.last_pos_valid(k),
            );
            s.set(
                Predicate::of(k, Family::Searched),
                self.objects[k.index()].searched,
            );
        }
        let mine = self.ball_held();
        let p = &self.params;
        s.set(Predicate::BALL_IS_MINE, mine);
        s.set(
            Predicate::BALL_IS_OURS,
            mine || self.comm.teammate_has_ball(now_ms),
        );
        s.set(
            Predicate::BALL_IS_GETTING_CLOSER,
            self.ball_is_getting_closer(now_ms),
        );
        s.set(
            Predicate::PARTNER_IN_RANGE,
            self.position(ObjectKind::Partner)
                .is_some_and(|q| (p.pass_min_range_cm..=p.kick_range_cm).contains(&q.norm())),
        );
        s.set(
            Predicate::OPPONENT_IN_RANGE,
            self.in_range(ObjectKind::Opponent, p.kick_range_cm),
        );
        s.set(
            Predicate::GOAL_IN_RANGE,
            self.in_range(ObjectKind::OppGoal, p.shot_range_cm),
        );
        s.set(Predicate::PARTNER_PASS, self.partner_pass(now_ms));
        s.set(Predicate::GK_NEEDS_RELOCATE, self.gk_needs_relocate(now_ms));
        s.set(
            Predicate::GK_NEEDS_START_SAVING,
            self.gk_needs_start_saving(),
        );
        s.set(
            Predicate::PARTNER_NEARER_BALL,
            self.partner_nearer_ball(now_ms),
        );
        s.set(
            Predicate::PARTNER_BETTER_PLACED,
            self.better_placed_partner(now_ms).is_some(),
        );
        s
    }

    /// The keeper's offset from the goal centre in one frame that shows both (field player
    /// only; the goal must be in sight): a teammate within `keeperIdDistance` of the goal
    /// centre, in the goal frame (x along the goal line, + to the right of a keeper facing
    /// the field; y out from the goal line), cm.
    fn keeper_offset_in_frame(&self, frame: &[Sighting]) -> Option<(f64, f64)> {
        if self.role() != Role::FieldPlayer || !self.in_sight(ObjectKind::MyGoal) {
            return None;
        }
        let valid = |s: &&Sighting| s.distance_cm.is_finite() && s.angle_deg.is_finite();
        let p = &self.params;
        // Ranges corrected by the camera's known mean error: the offset along the goal line
        // is the keeper's range times the sine of the bearing difference (keeper − goal
        // centre), so a range bias scales it — FutRob's camera reads 150 cm 12 % long, every
        // frame, and averaging more frames does not remove that.
        let at = |s: &Sighting| {
            Vec2::from_polar(s.angle_deg, p.range_calibration.correct(s.distance_cm))
        };
        let g = at(frame
            .iter()
            .filter(valid)
            .find(|s| s.object == ObjectKind::MyGoal)?);
        let k = frame
            .iter()
            .filter(valid)
            .filter(|s| s.object == ObjectKind::Partner)
            .map(at)
            .filter(|k| k.minus(g).norm() <= p.keeper_id_distance_cm)
            .min_by(|a, b| a.minus(g).norm().total_cmp(&b.minus(g).norm()))?;
        let gn = g.norm();
        if gn < 1e-6 {
            return None;
        }
        let d = g.scale(1.0 / gn); // toward the goal
        let right = Vec2::new(d.y, -d.x); // the field player's right, across that direction
        let off = k.minus(g);
        // A keeper facing the field faces the field player: its right is our left.
        Some((-off.dot(right), -off.dot(d)))
    }

    /// A field player's report of its keeper's position: the mean of the offsets it saw
    /// (see [`WorldModel::observe`]) in the last 2 s, each axis `None` outside its
    /// `[MIN, MAX]` window (FutRob sends nothing for a tiny offset, and takes a huge one for a
    /// vision error). `None` when it saw no keeper in that time. Averaging the frames
    /// (eight at 4 Hz) is what keeps one noisy frame from moving the keeper; `None` until it
    /// has [`KEEPER_MIN_SIGHTINGS`] of them.
    pub fn keeper_report(&self) -> Option<(Option<i32>, Option<i32>)> {
        let n = self.keeper_seen.len();
        // Not before half a window's sightings: the first report used to go out after one
        // frame, and one noisy frame moved a keeper 5.9 cm off (threshold 10 cm).
        if n < KEEPER_MIN_SIGHTINGS || self.role() != Role::FieldPlayer {
            return None;
        }
        let (sx, sy) = self
            .keeper_seen
            .iter()
            .fold((0.0, 0.0), |(a, b), (_, x, y)| (a + x, b + y));
        let (x, y) = (sx / n as f64, sy / n as f64);
        let p = &self.params;
        let win =
            |v: f64, lo: f64, hi: f64| (v.abs() >= lo && v.abs() <= hi).then(|| v.round() as i32);
        Some((
            win(x, p.gk_x_min_cm, p.gk_x_max_cm),
            win(y, p.gk_y_min_cm, p.gk_y_max_cm),
        ))
    }
}
