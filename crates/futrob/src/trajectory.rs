//! The ball trajectory model: a straight line fitted to the ball's recent positions in the
//! robot frame, with outlier marking, trajectory-change detection, speed and averaged
//! deceleration, and predictions (position at a time, crossing of a line).
//!
//! **The fit.** FutRob fits `y = m·x + n` by ordinary least squares (its equations 6–7,
//! with the intercept's spurious leading `N` removed: see [`ols_line`]). That regression
//! breaks down for a ball rolling straight at the robot (`x` nearly constant, the
//! denominator goes to zero), which is the goalkeeper's main case, so the model fits the
//! **orthogonal** (total) least-squares line — the principal axis of the points. It is the
//! same line when the ordinary fit is well conditioned, and it works in every direction.
//!
//! **Outliers and changes.** Once a line exists, a new sample farther than `epsilon_cm` from
//! it is *marked* and left out of the fit. Two consecutive marked samples on the same side
//! of the line mean the ball changed direction: the history is cleared and restarted from
//! those two samples.
//!
//! **A ball that starts rolling.** A ball at rest gives no line, only a cloud of sightings
//! around where it lies, spread mostly along the camera's ray (the distance errors are larger
//! than the angle's), so the principal axis of that cloud points wherever the noise put it and
//! the first sightings of the ball once struck fall off it as outliers: the model used to
//! need two of them to restart, and a third to tell which way the ball went — the better part
//! of a second with a 4 Hz camera, all of a penalty's time. Instead, a sighting farther than
//! `2·epsilon_cm` from where a still ball lay (the mean of its last sightings) starts a new
//! trajectory from that rest point (held at the time of its last sighting) through the new
//! sighting: one sighting of the rolling ball gives its line, and the rest point, an average
//! of many, anchors it ([`SampleFate::Started`]).
//!
//! **Motion along the line.** Samples are projected onto the line, giving a distance
//! travelled `s_i` at time `t_i`. The velocity of each sample is FutRob's two-sample
//! difference (its equations 8–9), the acceleration the difference of two velocities
//! (equations 10–11), and the deceleration used for predictions is the **mean** of all
//! acceleration samples since the trajectory started, as FutRob does (a single noisy value
//! would spoil the prediction). The current speed is the mean of the last
//! [`TrajectoryParams::speed_window`] velocity samples, brought to the latest sample time
//! with the mean acceleration.
//!
//! **Prediction.** Straight-line motion with constant deceleration `a ≥ 0`:
//! `s(t) = v0·t − a·t²/2` until the ball stops at `v0²/2a`.
//!
//! Times are milliseconds handed in by the caller; positions are centimetres in the robot
//! frame (x to the right, y forward).

/// A point in the robot frame, cm (x right, y forward).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Vec2 {
    /// Lateral, positive to the right.
    pub x: f64,
    /// Forward.
    pub y: f64,
}

impl Vec2 {
    /// A point.
    pub const fn new(x: f64, y: f64) -> Vec2 {
        Vec2 { x, y }
    }
    /// Length.
    pub fn norm(self) -> f64 {
        self.x.hypot(self.y)
    }
    /// Dot product.
    pub fn dot(self, o: Vec2) -> f64 {
        self.x * o.x + self.y * o.y
    }
    /// Difference.
    pub fn minus(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x - o.x, self.y - o.y)
    }
    /// Sum.
    pub fn plus(self, o: Vec2) -> Vec2 {
        Vec2::new(self.x + o.x, self.y + o.y)
    }
    /// Scaled.
    pub fn scale(self, k: f64) -> Vec2 {
        Vec2::new(self.x * k, self.y * k)
    }
    /// The FutRob camera reading (angle in degrees, positive right; distance in cm) as a
    /// robot-frame point: `x = d·sin a`, `y = d·cos a`.
    pub fn from_polar(angle_deg: f64, distance_cm: f64) -> Vec2 {
        let a = angle_deg.to_radians();
        Vec2::new(distance_cm * a.sin(), distance_cm * a.cos())
    }
    /// Bearing in degrees, positive to the right of straight ahead.
    pub fn bearing_deg(self) -> f64 {
        self.x.atan2(self.y).to_degrees()
    }
}

/// Where a point `p` of the robot frame lies after the robot made the fraction `f` of a move:
/// forward/lateral by `delta` (cm, in the frame before the move), then a right turn of
/// `turn_deg`. A segment is a pure step or a pure turn, so a fraction of it is the same
/// fraction of both.
pub fn reckon(p: Vec2, delta: Vec2, turn_deg: f64, f: f64) -> Vec2 {
    let (s, c) = (-turn_deg * f).to_radians().sin_cos();
    let q = p.minus(delta.scale(f));
    // Turning right by θ rotates points left (counter-clockwise in x-right/y-forward).
    Vec2::new(q.x * c + q.y * s, -q.x * s + q.y * c)
}

/// The fraction of a move made between `during.0` and `during.1` (ms) that was still to come
/// at `seen_ms`, taking the move as steady: 1 for a sighting from before the move (or when the
/// move's time is not known), 0 for one from its end. The camera keeps running while the body
/// steps or turns, and a sighting is taken from where the body was at that moment.
pub fn motion_left(during: Option<(u64, u64)>, seen_ms: u64) -> f64 {
    match during {
        Some((start, end)) if end > start && seen_ms > start => {
            end.saturating_sub(seen_ms) as f64 / (end - start) as f64
        }
        _ => 1.0,
    }
}

/// FutRob's ordinary least-squares line `y = m·x + n` (equations 6 and 7, the intercept
/// corrected: `n = (Σx²·Σy − Σx·Σxy) / (N·Σx² − (Σx)²)`). `None` when fewer than two
/// points or when all `x` are equal (the fit is undefined).
pub fn ols_line(points: &[Vec2]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let (mut sx, mut sy, mut sxx, mut sxy) = (0.0, 0.0, 0.0, 0.0);
    for p in points {
        sx += p.x;
        sy += p.y;
        sxx += p.x * p.x;
        sxy += p.x * p.y;
    }
    let den = n * sxx - sx * sx;
    if den.abs() < 1e-9 {
        return None;
    }
    Some(((n * sxy - sx * sy) / den, (sxx * sy - sx * sxy) / den))
}

/// Tunables of the trajectory model (all are `ini.config` keys, see [`crate::config`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrajectoryParams {
    /// Distance from the line beyond which a sample is marked as an outlier, cm.
    pub epsilon_cm: f64,
    /// Samples kept in the fit (the oldest are dropped).
    pub max_samples: usize,
    /// Velocity samples averaged for the current speed.
    pub speed_window: usize,
    /// Below this speed the ball counts as still, cm/s.
    pub min_speed_cm_s: f64,
}

impl Default for TrajectoryParams {
    fn default() -> Self {
        TrajectoryParams {
            epsilon_cm: 10.0,
            max_samples: 32,
            speed_window: 3,
            min_speed_cm_s: 5.0,
        }
    }
}

/// A fitted line: a point on it and a unit direction, signed along the motion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Line {
    /// The centroid of the fitted samples.
    pub point: Vec2,
    /// Unit direction, pointing the way the ball moves.
    pub dir: Vec2,
}

impl Line {
    /// Signed distance of `p` from the line (positive on the right of the direction).
    pub fn side_distance(&self, p: Vec2) -> f64 {
        let d = p.minus(self.point);
        d.x * self.dir.y - d.y * self.dir.x
    }
    /// Position of the projection of `p` along the line.
    pub fn along(&self, p: Vec2) -> f64 {
        p.minus(self.point).dot(self.dir)
    }
}

/// What happened to a sample handed to [`Trajectory::add`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleFate {
    /// Used in the fit.
    Accepted,
    /// Farther than ε from the line: marked, not used.
    Outlier,
    /// Second consecutive outlier on the same side: the trajectory restarted from the two.
    TrajectoryChanged,
    /// A ball at rest was seen away from where it lay: the trajectory restarted from the rest
    /// point through this sample.
    Started,
}

/// Sightings of a still ball averaged for its rest point.
const REST_SAMPLES: usize = 8;

/// The ball trajectory model.
#[derive(Debug, Clone, PartialEq)]
pub struct Trajectory {
    params: TrajectoryParams,
    samples: Vec<(u64, Vec2)>,
    pending: Option<(u64, Vec2, f64)>,
    line: Option<Line>,
    outliers: u64,
    changes: u64,
    from_rest: bool,
}

impl Trajectory {
    /// An empty model.
    pub fn new(params: TrajectoryParams) -> Trajectory {
        Trajectory {
            params,
            samples: Vec::with_capacity(params.max_samples + 1),
            pending: None,
            line: None,
            outliers: 0,
            changes: 0,
            from_rest: false,
        }
    }

    /// Forgets every sample (the robot moved, or the ball was lost).
    pub fn clear(&mut self) {
        self.samples.clear();
        self.pending = None;
        self.line = None;
        self.from_rest = false;
    }

    /// Moves every stored sample by `-delta` and rotates by `-turn_deg` (the robot moved by
    /// `delta` in its old frame, then turned right by `turn_deg`): dead reckoning that keeps
    /// the fit across the robot's own small moves.
    pub fn shift_frame(&mut self, delta: Vec2, turn_deg: f64) {
        self.shift_frame_over(delta, turn_deg, None);
    }

    /// [`Trajectory::shift_frame`] for a move made between `during.0` and `during.1` (ms): a
    /// sample taken during it already holds the part made before it, and is moved by the rest
    /// only (see [`motion_left`]).
    pub fn shift_frame_over(&mut self, delta: Vec2, turn_deg: f64, during: Option<(u64, u64)>) {
        let tf = |t: u64, p: Vec2| reckon(p, delta, turn_deg, motion_left(during, t));
        for (t, p) in &mut self.samples {
            *p = tf(*t, *p);
        }
        if let Some((t, p, _)) = &mut self.pending {
            *p = tf(*t, *p);
        }
        self.refit();
    }

    /// Adds a ball observation at time `t_ms`.
    pub fn add(&mut self, t_ms: u64, p: Vec2) -> SampleFate {
        if let Some((lt, _)) = self.samples.last() {
            if t_ms <= *lt {
                // Same instant (or clock going back): replace, do not divide by zero.
                self.samples.pop();
            }
        }
        if let Some(rest) = self.rest_point() {
            if p.minus(rest.1).norm() > 2.0 * self.params.epsilon_cm && rest.0 < t_ms {
                self.changes += 1;
                self.samples.clear();
                self.samples.push(rest);
                self.samples.push((t_ms, p));
                self.pending = None;
                self.from_rest = true;
                self.refit();
                return SampleFate::Started;
            }
        }
        let fate = match self.line {
            Some(line) if self.samples.len() >= 2 => {
                let side = line.side_distance(p);
                if side.abs() > self.params.epsilon_cm {
                    self.outliers += 1;
                    match self.pending.take() {
                        Some((t0, p0, side0)) if side0.signum() == side.signum() && t0 < t_ms => {
                            self.changes += 1;
                            self.from_rest = false;
                            self.samples.clear();
                            self.samples.push((t0, p0));
                            self.samples.push((t_ms, p));
                            self.refit();
                            return SampleFate::TrajectoryChanged;
                        }
                        _ => {
                            self.pending = Some((t_ms, p, side));
                            return SampleFate::Outlier;
                        }
                    }
                }
                SampleFate::Accepted
            }
            _ => SampleFate::Accepted,
        };
        self.pending = None;
        self.samples.push((t_ms, p));
        if self.samples.len() > self.params.max_samples {
            self.samples.remove(0);
        }
        self.refit();
        fate
    }

    /// Where a still ball lies: the time of its newest sighting and the mean of its last
    /// [`REST_SAMPLES`] sightings; `None` unless at least four sightings, all within
    /// `1.5·epsilon_cm` of their mean, say it is still (three of a ball rolling 60 cm/s,
    /// 15 cm a frame, are within that of their mean; four are not).
    fn rest_point(&self) -> Option<(u64, Vec2)> {
        let n = self.samples.len();
        if n < 4 {
            return None;
        }
        let recent = &self.samples[n.saturating_sub(REST_SAMPLES)..];
        let mean = recent
            .iter()
            .fold(Vec2::default(), |a, (_, p)| a.plus(*p))
            .scale(1.0 / recent.len() as f64);
        // Still: every recent sighting within the camera's noise of the mean (a ball rolling
        // even 10 cm/s leaves that in two seconds).
        let still = recent
            .iter()
            .all(|(_, p)| p.minus(mean).norm() <= 1.5 * self.params.epsilon_cm);
        still.then(|| (self.samples[n - 1].0, mean))
    }

    /// `true` when the trajectory started from a ball at rest ([`SampleFate::Started`]): its
    /// first sample is the rest point, an average of many sightings, so two samples already
    /// give a line worth acting on.
    pub fn started_from_rest(&self) -> bool {
        self.from_rest
    }

    fn refit(&mut self) {
        let n = self.samples.len();
        if n < 2 {
            self.line = None;
            return;
        }
        let inv = 1.0 / n as f64;
        let c = self
            .samples
            .iter()
            .fold(Vec2::default(), |a, (_, p)| a.plus(*p))
            .scale(inv);
        let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
        for (_, p) in &self.samples {
            let d = p.minus(c);
            sxx += d.x * d.x;
            syy += d.y * d.y;
            sxy += d.x * d.y;
        }
        // Principal axis of the 2×2 scatter matrix.
        let theta = 0.5 * (2.0 * sxy).atan2(sxx - syy);
        let mut dir = Vec2::new(theta.cos(), theta.sin());
        if sxx + syy < 1e-12 {
            self.line = None;
            return;
        }
        let first = self.samples[0].1;
        let last = self.samples[n - 1].1;
        if last.minus(first).dot(dir) < 0.0 {
            dir = dir.scale(-1.0);
        }
        self.line = Some(Line { point: c, dir });
    }

    /// The fitted line, once two samples exist.
    pub fn line(&self) -> Option<Line> {
        self.line
    }

    /// Samples in the fit.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// `true` when no sample is in the fit.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// Outliers marked since creation.
    pub fn outliers(&self) -> u64 {
        self.outliers
    }

    /// Trajectory changes detected since creation.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// Time of the newest sample in the fit.
    pub fn last_time(&self) -> Option<u64> {
        self.samples.last().map(|(t, _)| *t)
    }

    fn along(&self) -> Option<(Line, Vec<(f64, f64)>)> {
        let line = self.line?;
        Some((
            line,
            self.samples
                .iter()
                .map(|(t, p)| (*t as f64 / 1000.0, line.along(*p)))
                .collect(),
        ))
    }

    /// Velocity samples along the line, cm/s (FutRob equations 8–9 on the projections).
    pub fn velocities(&self) -> Vec<f64> {
        let Some((_, s)) = self.along() else {
            return Vec::new();
        };
        s.windows(2)
            .map(|w| (w[1].1 - w[0].1) / (w[1].0 - w[0].0))
            .collect()
    }

    /// The mean acceleration along the motion since the trajectory started, cm/s² (FutRob
    /// equations 10–11, averaged). Negative means slowing down. `None` with fewer than
    /// three samples.
    pub fn mean_acceleration(&self) -> Option<f64> {
        let (_, s) = self.along()?;
        if s.len() < 3 {
            return None;
        }
        let mut sum = 0.0;
        for w in s.windows(3) {
            let v1 = (w[1].1 - w[0].1) / (w[1].0 - w[0].0);
            let v2 = (w[2].1 - w[1].1) / (w[2].0 - w[1].0);
            sum += (v2 - v1) / (0.5 * (w[2].0 - w[0].0));
        }
        Some(sum / (s.len() - 2) as f64)
    }

    /// Deceleration magnitude used for predictions (cm/s², ≥ 0; 0 until known).
    pub fn deceleration(&self) -> f64 {
        self.mean_acceleration().map_or(0.0, |a| (-a).max(0.0))
    }

    /// Speed along the line at the newest sample, cm/s (≥ 0 by construction of the
    /// direction; 0 when fewer than two samples).
    pub fn speed(&self) -> f64 {
        let Some((_, s)) = self.along() else {
            return 0.0;
        };
        let n = s.len();
        let k = self.params.speed_window.max(1).min(n - 1);
        let (mut v_sum, mut t_sum) = (0.0, 0.0);
        for w in s[n - 1 - k..].windows(2) {
            v_sum += (w[1].1 - w[0].1) / (w[1].0 - w[0].0);
            t_sum += 0.5 * (w[0].0 + w[1].0);
        }
        let (v_mean, t_mean) = (v_sum / k as f64, t_sum / k as f64);
        // The mean velocity is that of the window's middle: bring it to the newest sample.
        (v_mean - self.deceleration() * (s[n - 1].0 - t_mean)).max(0.0)
    }

    /// The ball's current position on the line: the projection of the newest sample.
    pub fn position(&self) -> Option<Vec2> {
        let line = self.line?;
        let (_, p) = *self.samples.last()?;
        Some(line.point.plus(line.dir.scale(line.along(p))))
    }

    /// `true` when the ball moves faster than the still threshold.
    pub fn is_moving(&self) -> bool {
        self.line.is_some() && self.speed() > self.params.min_speed_cm_s
    }

    /// Predicted position at `t_ms` (not before the newest sample).
    pub fn predict(&self, t_ms: u64) -> Option<Vec2> {
        let line = self.line?;
        let p = self.position()?;
        let dt = t_ms.saturating_sub(self.last_time()?) as f64 / 1000.0;
        let (v0, a) = (self.speed(), self.deceleration());
        let s = if a > 0.0 {
            let t = dt.min(v0 / a);
            v0 * t - 0.5 * a * t * t
        } else {
            v0 * dt
        };
        Some(p.plus(line.dir.scale(s)))
    }

    /// Seconds the ball needs to travel `s` cm along its line from its current position, or
    /// `None` if it stops first.
    pub fn time_to_travel(&self, s: f64) -> Option<f64> {
        let (v0, a) = (self.speed(), self.deceleration());
        if s <= 0.0 {
            return Some(0.0);
        }
        if a <= 0.0 {
            return (v0 > 0.0).then(|| s / v0);
        }
        let disc = v0 * v0 - 2.0 * a * s;
        (disc >= 0.0).then(|| (v0 - disc.sqrt()) / a)
    }

    /// Where and when (ms after the newest sample) the ball crosses the line `y = y_line`
    /// of the robot frame (the keeper's own lateral line is `y = 0`). `None` if it moves
    /// away, parallel, too slowly, or stops first.
    pub fn crossing(&self, y_line: f64) -> Option<(f64, f64)> {
        let line = self.line?;
        let p = self.position()?;
        if !self.is_moving() || line.dir.y.abs() < 1e-6 {
            return None;
        }
        let s = (y_line - p.y) / line.dir.y;
        if s < 0.0 {
            return None;
        }
        let t = self.time_to_travel(s)?;
        Some((p.x + line.dir.x * s, t * 1000.0))
    }
}
