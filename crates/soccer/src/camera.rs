//! The humanoid's head camera: what one robot sees of a scene, as FutRob's vision module
//! reports it — for each recognised object an **angle** (degrees, from the robot's forward
//! direction, **positive to the right**) and a **distance** (cm, from the robot's centre on the
//! floor to the object's centre on the floor).
//!
//! ## The model
//! The camera sits [`crate::humanoid::CAMERA_HEIGHT`] (36 cm) above the floor; its yaw is the
//! robot's heading minus the head pan, its pitch the head tilt plus a mount offset. An object
//! is in view when its bearing is within ±½ of the horizontal field of view of the camera's yaw
//! and some part of its vertical extent is within ±½ of the vertical field of view of the
//! camera's pitch (bearing and elevation as seen from the camera). Then:
//! - it must be nearer than the profile's range (the ball has its own, shorter range);
//! - no robot may stand in the line of sight (occlusion by a robot's body, 40 cm tall standing,
//!   10 cm lying);
//! - a goal is reported only when **both** its posts are in view (the whole goal in the image)
//!   and it is at least the profile's minimum goal distance away; otherwise a post in view is
//!   reported as that goal's lateral post;
//! - each object may drop out with the profile's probability;
//! - the distance gets the bias and spread of FutRob's calibration table at that distance, the
//!   angle a normal error, the opponent goal an extra angle bias.
//!
//! | parameter | `paper` | `ideal` | source |
//! |---|---|---|---|
//! | field of view | 75.3° × 46.4° | same | 432 × 240 px at 280 px focal length (FutRob's calibration) |
//! | mount pitch offset | −6° | same | the window in which FutRob's calibration runs saw the ball |
//! | vision rate | 4 Hz | every frame | FutRob's 250 ms vision cycle |
//! | range | 800 cm | same | FutRob's `MAX_DISTANCE` |
//! | ball range | 200 cm | 800 cm | FutRob: "about 200 cm at most" at 432 × 240 |
//! | goal only from | 130 cm | 0 (whole goal in view) | FutRob: the goal is detected only beyond 130 cm |
//! | distance error | table below | none | FutRob's calibration (its figure of errors) |
//! | angle error | σ 0.5° per frame | none | simrob's estimate: a blob's centre jitters by a few pixels from frame to frame (0.17° per pixel at 432 px over 75.3°); FutRob reports angles to 0.01° and no spread |
//! | opponent-goal angle bias | +15.8° | none | FutRob's penalty trials: vision had trouble identifying the opponent goal and placed it too far right, mean goal − keeper angle +15.8° with the keeper centred |
//! | dropout | 5 % per object per frame | none | simrob's estimate |
//!
//! Distance error (cm) by true distance: the mean and the standard deviation of FutRob's
//! measured errors over the head tilts at which the ball was seen; linear in between, the
//! nearest row below 5 cm, proportional to the distance beyond 150 cm:
//!
//! | true distance | 5 | 20 | 40 | 60 | 80 | 90 | 100 | 110 | 130 | 150 |
//! |---|---|---|---|---|---|---|---|---|---|---|
//! | bias | +5.33 | +2.17 | +0.57 | +0.86 | +0.64 | +2.69 | +2.71 | +4.19 | +8.69 | +17.78 |
//! | spread (σ) | 0.62 | 0.70 | 2.14 | 2.68 | 3.63 | 4.39 | 5.39 | 5.84 | 5.83 | 6.55 |

use crate::field::{KidSizeField, Team};
use crate::humanoid::{Pose2, Posture, CAMERA_HEIGHT};
use simrob_math::{wrap_angle, Xoshiro256StarStar, DEG};

/// What the camera recognises (FutRob's object names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjectKind {
    /// `BALL`: a ball, within the profile's ball range.
    Ball,
    /// `PARTNER`: a robot of the observer's own team.
    Partner,
    /// `OPPONENT`: a robot of the other team.
    Opponent,
    /// `MY_GOAL`: the goal the observer defends, both posts in view; at its goal line's centre.
    MyGoal,
    /// `OPP_GOAL`: the goal the observer attacks, both posts in view; at its goal line's centre.
    OppGoal,
    /// `MY_LATERAL_POST`: the nearer post in view of the observer's own goal, when the whole
    /// goal is not reported.
    MyLateralPost,
    /// `OPP_LATERAL_POST`: the nearer post in view of the opponent goal, when the whole goal
    /// is not reported.
    OppLateralPost,
    /// `RIGHT_LANDMARK`: the landmark pole on the right when facing the opponent goal.
    RightLandmark,
    /// `LEFT_LANDMARK`: the landmark pole on the left when facing the opponent goal.
    LeftLandmark,
}

impl ObjectKind {
    /// FutRob's name: `BALL`, `PARTNER`, `OPPONENT`, `MY_GOAL`, `OPP_GOAL`,
    /// `MY_LATERAL_POST`, `OPP_LATERAL_POST`, `RIGHT_LANDMARK`, `LEFT_LANDMARK`.
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectKind::Ball => "BALL",
            ObjectKind::Partner => "PARTNER",
            ObjectKind::Opponent => "OPPONENT",
            ObjectKind::MyGoal => "MY_GOAL",
            ObjectKind::OppGoal => "OPP_GOAL",
            ObjectKind::MyLateralPost => "MY_LATERAL_POST",
            ObjectKind::OppLateralPost => "OPP_LATERAL_POST",
            ObjectKind::RightLandmark => "RIGHT_LANDMARK",
            ObjectKind::LeftLandmark => "LEFT_LANDMARK",
        }
    }
    /// Parses a name of [`ObjectKind::as_str`] (any letter case).
    pub fn parse(s: &str) -> Option<ObjectKind> {
        ALL_KINDS
            .iter()
            .copied()
            .find(|k| k.as_str().eq_ignore_ascii_case(s.trim()))
    }
}

/// Every object kind.
pub const ALL_KINDS: [ObjectKind; 9] = [
    ObjectKind::Ball,
    ObjectKind::Partner,
    ObjectKind::Opponent,
    ObjectKind::MyGoal,
    ObjectKind::OppGoal,
    ObjectKind::MyLateralPost,
    ObjectKind::OppLateralPost,
    ObjectKind::RightLandmark,
    ObjectKind::LeftLandmark,
];

/// One recognised object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Observation {
    /// What was recognised.
    pub kind: ObjectKind,
    /// Degrees from the robot's forward direction, positive to the right.
    pub angle: f64,
    /// Centimetres on the floor from the robot's centre.
    pub distance: f64,
}

/// What one robot's camera saw at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct CameraFrame {
    /// Id of the robot whose camera this is.
    pub robot: u32,
    /// Simulated seconds.
    pub time: f64,
    /// The objects recognised, at most one per ball, robot, goal (or lateral post) and
    /// landmark; empty when the camera is not ready.
    pub objects: Vec<Observation>,
}

/// A camera profile: every parameter of the model (module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct CameraProfile {
    /// The profile's name (`paper`, `ideal`).
    pub name: String,
    /// Horizontal field of view (rad); 75.3° in both profiles.
    pub hfov: f64,
    /// Vertical field of view (rad); 46.4° in both profiles.
    pub vfov: f64,
    /// Added to the head tilt (rad, negative = down).
    pub pitch_offset: f64,
    /// Frames per simulated second; `None` = a frame whenever asked.
    pub rate_hz: Option<f64>,
    /// Largest distance for anything (m).
    pub max_distance: f64,
    /// Largest distance for the ball (m).
    pub ball_range: f64,
    /// Smallest distance at which a goal is reported (m).
    pub goal_min_distance: f64,
    /// (true distance cm, bias cm, σ cm), increasing distance; empty = exact distances.
    pub distance_error: Vec<(f64, f64, f64)>,
    /// σ of the angle error of each frame (deg).
    pub angle_sd: f64,
    /// Added to the opponent goal's angle (deg). FutRob measured it on the opponent goal
    /// object only (its penalty trials); its own goal, seen in the keeper-relocation trials,
    /// showed no such bias.
    pub opp_goal_angle_bias: f64,
    /// Probability that an object in view is not reported in a frame.
    pub dropout: f64,
    /// Whether robots hide what is behind them.
    pub occlusion: bool,
}

/// FutRob's calibration errors (true distance, mean error, σ), cm.
pub const PAPER_DISTANCE_ERROR: [(f64, f64, f64); 10] = [
    (5.0, 5.33, 0.62),
    (20.0, 2.17, 0.70),
    (40.0, 0.57, 2.14),
    (60.0, 0.86, 2.68),
    (80.0, 0.64, 3.63),
    (90.0, 2.69, 4.39),
    (100.0, 2.71, 5.39),
    (110.0, 4.19, 5.84),
    (130.0, 8.69, 5.83),
    (150.0, 17.78, 6.55),
];

impl CameraProfile {
    /// As close to FutRob's camera as its numbers allow.
    pub fn paper() -> Self {
        CameraProfile {
            name: "paper".into(),
            hfov: 2.0 * (216.0f64 / 280.0).atan(),
            vfov: 2.0 * (120.0f64 / 280.0).atan(),
            pitch_offset: -6.0 * DEG,
            rate_hz: Some(4.0),
            max_distance: 8.0,
            ball_range: 2.0,
            goal_min_distance: 1.3,
            distance_error: PAPER_DISTANCE_ERROR.to_vec(),
            angle_sd: 0.5,
            opp_goal_angle_bias: 15.8,
            dropout: 0.05,
            occlusion: true,
        }
    }

    /// The same camera, exact, every frame.
    pub fn ideal() -> Self {
        CameraProfile {
            name: "ideal".into(),
            rate_hz: None,
            ball_range: 8.0,
            goal_min_distance: 0.0,
            distance_error: Vec::new(),
            angle_sd: 0.0,
            opp_goal_angle_bias: 0.0,
            dropout: 0.0,
            ..CameraProfile::paper()
        }
    }

    /// The profile called `name` (`paper` or `ideal`).
    pub fn named(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "paper" => Some(CameraProfile::paper()),
            "ideal" => Some(CameraProfile::ideal()),
            _ => None,
        }
    }

    /// Bias and σ (cm) of the distance error at true distance `d` cm.
    pub fn distance_error_at(&self, d: f64) -> (f64, f64) {
        let t = &self.distance_error;
        let (Some(first), Some(last)) = (t.first(), t.last()) else {
            return (0.0, 0.0);
        };
        if d <= first.0 {
            return (first.1, first.2);
        }
        if d >= last.0 {
            let k = d / last.0;
            return (last.1 * k, last.2 * k);
        }
        for w in t.windows(2) {
            let (a, b) = (w[0], w[1]);
            if d <= b.0 {
                let s = (d - a.0) / (b.0 - a.0);
                return (a.1 + (b.1 - a.1) * s, a.2 + (b.2 - a.2) * s);
            }
        }
        (last.1, last.2)
    }
}

/// One robot as the camera model sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RobotView {
    /// The robot's id (its entity id in the world).
    pub id: u32,
    /// Its team: decides partner or opponent, and which goal is its own.
    pub team: Team,
    /// Position on the floor and heading (world frame).
    pub pose: Pose2,
    /// Head pan (positive = right) and tilt (negative = down), rad.
    pub head: (f64, f64),
    /// Standing or lying: a standing robot hides what is behind it up to 40 cm, a lying one
    /// up to 10 cm.
    pub posture: Posture,
    /// Whether its camera works now (standing still in a posture; not while falling, lying or
    /// diving).
    pub camera_ready: bool,
}

/// A scene as the camera needs it: the field, the balls' centres and the robots.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SceneView {
    /// Simulated seconds.
    pub time: f64,
    /// The field: posts, landmarks and goal height.
    pub field: KidSizeField,
    /// Centres (x, y, z) of the balls, world frame, metres.
    pub balls: Vec<[f64; 3]>,
    /// Every robot on the field, the observers among them.
    pub robots: Vec<RobotView>,
}

struct Target {
    kind: ObjectKind,
    /// Floor point (m).
    at: [f64; 2],
    /// Vertical extent (m).
    z: (f64, f64),
    /// Radius on the floor (m), for occlusion tests.
    radius: f64,
    range: f64,
    /// The robot itself, excluded from occluders.
    robot: Option<u32>,
}

struct Eye {
    pos: [f64; 3],
    yaw: f64,
    pitch: f64,
}

impl Eye {
    fn bearing(&self, p: [f64; 2]) -> f64 {
        wrap_angle((p[1] - self.pos[1]).atan2(p[0] - self.pos[0]) - self.yaw)
    }
    fn in_view(&self, p: [f64; 2], z: (f64, f64), profile: &CameraProfile) -> bool {
        if self.bearing(p).abs() > profile.hfov / 2.0 {
            return false;
        }
        let d = ((p[0] - self.pos[0]).powi(2) + (p[1] - self.pos[1]).powi(2)).sqrt();
        let e0 = (z.0 - self.pos[2]).atan2(d);
        let e1 = (z.1 - self.pos[2]).atan2(d);
        let (lo, hi) = (
            self.pitch - profile.vfov / 2.0,
            self.pitch + profile.vfov / 2.0,
        );
        e0.min(e1) <= hi && e0.max(e1) >= lo
    }
}

fn robot_height(p: Posture) -> f64 {
    if p == Posture::Standing {
        0.40
    } else {
        0.10
    }
}

fn occluded(eye: &Eye, t: &Target, robots: &[RobotView], me: u32) -> bool {
    let (dx, dy) = (t.at[0] - eye.pos[0], t.at[1] - eye.pos[1]);
    let dist = (dx * dx + dy * dy).sqrt();
    if dist < 1e-9 {
        return false;
    }
    let (ux, uy) = (dx / dist, dy / dist);
    let zt = (t.z.0 + t.z.1) / 2.0;
    robots.iter().any(|r| {
        if r.id == me || Some(r.id) == t.robot {
            return false;
        }
        let (rx, ry) = (r.pose.x - eye.pos[0], r.pose.y - eye.pos[1]);
        let along = rx * ux + ry * uy;
        if along <= 0.0 || along >= dist - t.radius {
            return false;
        }
        let across = (rx * uy - ry * ux).abs();
        if across > 0.1 {
            return false;
        }
        let z_line = eye.pos[2] + (zt - eye.pos[2]) * along / dist;
        z_line < robot_height(r.posture)
    })
}

/// What robot `robot` sees of `scene` with `profile`, drawing noise from `rng`. Pure: the same
/// arguments give the same frame. Empty when the robot is unknown or its camera is not ready.
pub fn look(
    scene: &SceneView,
    robot: u32,
    profile: &CameraProfile,
    rng: &mut Xoshiro256StarStar,
) -> CameraFrame {
    let mut frame = CameraFrame {
        robot,
        time: scene.time,
        objects: Vec::new(),
    };
    let Some(me) = scene.robots.iter().find(|r| r.id == robot) else {
        return frame;
    };
    if !me.camera_ready {
        return frame;
    }
    let eye = Eye {
        pos: [me.pose.x, me.pose.y, CAMERA_HEIGHT],
        yaw: wrap_angle(me.pose.heading - me.head.0),
        pitch: me.head.1 + profile.pitch_offset,
    };
    let f = &scene.field;
    let mut targets: Vec<Target> = Vec::new();
    for b in &scene.balls {
        targets.push(Target {
            kind: ObjectKind::Ball,
            at: [b[0], b[1]],
            z: (b[2], b[2]),
            radius: f.ball_radius,
            range: profile.ball_range,
            robot: None,
        });
    }
    for r in &scene.robots {
        if r.id == robot {
            continue;
        }
        targets.push(Target {
            kind: if r.team == me.team {
                ObjectKind::Partner
            } else {
                ObjectKind::Opponent
            },
            at: [r.pose.x, r.pose.y],
            z: (0.0, robot_height(r.posture)),
            radius: 0.1,
            range: profile.max_distance,
            robot: Some(r.id),
        });
    }
    // Landmarks: right and left as seen attacking the opponent goal.
    let attack = -me.team.own_side();
    for p in f.landmarks() {
        // Facing +X, −Y is on the right.
        let right = (p[1] < 0.0) == (attack > 0.0);
        targets.push(Target {
            kind: if right {
                ObjectKind::RightLandmark
            } else {
                ObjectKind::LeftLandmark
            },
            at: p,
            z: (0.0, f.landmark_height),
            radius: f.landmark_diameter / 2.0,
            range: profile.max_distance,
            robot: None,
        });
    }
    let mut out: Vec<Observation> = Vec::new();
    let push = |kind: ObjectKind,
                at: [f64; 2],
                rng: &mut Xoshiro256StarStar,
                out: &mut Vec<Observation>| {
        if rng.chance(profile.dropout) {
            return;
        }
        let true_d = ((at[0] - me.pose.x).powi(2) + (at[1] - me.pose.y).powi(2)).sqrt() * 100.0;
        let true_a =
            -wrap_angle((at[1] - me.pose.y).atan2(at[0] - me.pose.x) - me.pose.heading) / DEG;
        let (bias, sd) = profile.distance_error_at(true_d);
        let distance = (true_d + rng.normal(bias, sd)).max(0.0);
        let mut angle = true_a + rng.normal(0.0, profile.angle_sd);
        if kind == ObjectKind::OppGoal {
            angle += profile.opp_goal_angle_bias;
        }
        out.push(Observation {
            kind,
            angle,
            distance,
        });
    };
    let visible = |t: &Target| -> bool {
        let d = ((t.at[0] - eye.pos[0]).powi(2) + (t.at[1] - eye.pos[1]).powi(2)).sqrt();
        d <= t.range
            && eye.in_view(t.at, t.z, profile)
            && !(profile.occlusion && occluded(&eye, t, &scene.robots, robot))
    };
    for t in &targets {
        if visible(t) {
            push(t.kind, t.at, rng, &mut out);
        }
    }
    // Goals: whole goal in view, else a lateral post.
    for sign in [-1.0, 1.0] {
        let mine = sign == me.team.own_side();
        let posts = f.posts(sign);
        let seen: Vec<[f64; 2]> = posts
            .iter()
            .copied()
            .filter(|p| {
                visible(&Target {
                    kind: ObjectKind::MyGoal,
                    at: *p,
                    z: (0.0, f.goal_height + f.post_diameter),
                    radius: f.post_diameter / 2.0,
                    range: profile.max_distance,
                    robot: None,
                })
            })
            .collect();
        let centre = [sign * f.length / 2.0, 0.0];
        let centre_d = ((centre[0] - me.pose.x).powi(2) + (centre[1] - me.pose.y).powi(2)).sqrt();
        if seen.len() == 2 && centre_d >= profile.goal_min_distance {
            let kind = if mine {
                ObjectKind::MyGoal
            } else {
                ObjectKind::OppGoal
            };
            push(kind, centre, rng, &mut out);
        } else if let Some(p) = seen.iter().copied().min_by(|a, b| {
            let da = (a[0] - me.pose.x).hypot(a[1] - me.pose.y);
            let db = (b[0] - me.pose.x).hypot(b[1] - me.pose.y);
            da.total_cmp(&db)
        }) {
            let kind = if mine {
                ObjectKind::MyLateralPost
            } else {
                ObjectKind::OppLateralPost
            };
            push(kind, p, rng, &mut out);
        }
    }
    frame.objects = out;
    frame
}

/// One robot's camera over time: the profile's frame rate and its own noise stream.
#[derive(Debug, Clone, PartialEq)]
pub struct Camera {
    /// Id of the robot carrying the camera.
    pub robot: u32,
    /// The camera model: field of view, range, noise, frame rate.
    pub profile: CameraProfile,
    rng: Xoshiro256StarStar,
    next: f64,
}

impl Camera {
    /// The camera of `robot`; noise from `rng` (use [`Xoshiro256StarStar::for_stream`] with the robot's id so
    /// that every camera has its own reproducible stream).
    pub fn new(robot: u32, profile: CameraProfile, rng: Xoshiro256StarStar) -> Self {
        Camera {
            robot,
            profile,
            rng,
            next: f64::NEG_INFINITY,
        }
    }

    /// A frame if one is due at `scene.time` (always, for a profile without a rate).
    pub fn frame(&mut self, scene: &SceneView) -> Option<CameraFrame> {
        if let Some(hz) = self.profile.rate_hz {
            if scene.time + 1e-9 < self.next {
                return None;
            }
            let period = 1.0 / hz;
            self.next = if self.next.is_finite() && scene.time - self.next < period {
                self.next + period
            } else {
                scene.time + period
            };
        }
        Some(look(scene, self.robot, &self.profile, &mut self.rng))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn scene_with(ball: [f64; 3], pose: Pose2, head: (f64, f64)) -> SceneView {
        SceneView {
            time: 0.0,
            field: KidSizeField::default(),
            balls: vec![ball],
            robots: vec![RobotView {
                id: 3,
                team: Team::Cyan,
                pose,
                head,
                posture: Posture::Standing,
                camera_ready: true,
            }],
        }
    }

    fn ball_of(f: &CameraFrame) -> Option<Observation> {
        f.objects
            .iter()
            .copied()
            .find(|o| o.kind == ObjectKind::Ball)
    }

    #[test]
    fn ball_ahead_is_seen_with_its_angle_and_distance() {
        let s = scene_with([1.0, -0.2, 0.05], Pose2::default(), (0.0, -20.0 * DEG));
        let f = look(
            &s,
            3,
            &CameraProfile::ideal(),
            &mut Xoshiro256StarStar::new(1),
        );
        let b = ball_of(&f).expect("ball in view");
        assert!((b.distance - 101.98).abs() < 0.01, "{b:?}");
        // The ball is at −Y: to the right, a positive angle.
        assert!((b.angle - 11.31).abs() < 0.01, "{b:?}");
    }

    #[test]
    fn nothing_outside_the_field_of_view() {
        let p = CameraProfile::ideal();
        // Ball 45° to the left: outside ±37.65°.
        let s = scene_with([1.0, 1.0, 0.05], Pose2::default(), (0.0, -20.0 * DEG));
        assert!(ball_of(&look(&s, 3, &p, &mut Xoshiro256StarStar::new(1))).is_none());
        // Pan the head left by 30°: now in view.
        let s = scene_with(
            [1.0, 1.0, 0.05],
            Pose2::default(),
            (-30.0 * DEG, -20.0 * DEG),
        );
        assert!(ball_of(&look(&s, 3, &p, &mut Xoshiro256StarStar::new(1))).is_some());
        // A ball at the feet with the head level is below the image.
        let s = scene_with([0.15, 0.0, 0.05], Pose2::default(), (0.0, 0.0));
        assert!(ball_of(&look(&s, 3, &p, &mut Xoshiro256StarStar::new(1))).is_none());
    }

    #[test]
    fn paper_error_table_interpolates() {
        let p = CameraProfile::paper();
        assert_eq!(p.distance_error_at(100.0), (2.71, 5.39));
        let (b, s) = p.distance_error_at(95.0);
        assert!((b - 2.70).abs() < 1e-9 && (s - 4.89).abs() < 1e-9);
        let (b, _) = p.distance_error_at(300.0);
        assert!((b - 35.56).abs() < 1e-9);
        assert_eq!(CameraProfile::ideal().distance_error_at(100.0), (0.0, 0.0));
    }

    #[test]
    fn the_goal_angle_bias_is_the_opponent_goals_only() {
        // The paper profile's errors but its goal bias, exactly.
        let p = CameraProfile {
            distance_error: Vec::new(),
            angle_sd: 0.0,
            dropout: 0.0,
            ..CameraProfile::paper()
        };
        let mut seen = Vec::new();
        for (x, heading) in [(2.0, 0.0), (-2.0, PI)] {
            let pose = Pose2 { x, y: 0.0, heading };
            let s = scene_with([x, 0.0, 0.05], pose, (0.0, 0.0));
            let f = look(&s, 3, &p, &mut Xoshiro256StarStar::new(1));
            for o in &f.objects {
                match o.kind {
                    ObjectKind::OppGoal => assert!((o.angle - 15.8).abs() < 1e-9, "{o:?}"),
                    ObjectKind::MyGoal => assert!(o.angle.abs() < 1e-9, "{o:?}"),
                    _ => continue,
                }
                seen.push(o.kind);
            }
        }
        seen.sort();
        assert_eq!(seen, [ObjectKind::MyGoal, ObjectKind::OppGoal]);
    }

    #[test]
    fn rate_limits_frames() {
        let mut cam = Camera::new(3, CameraProfile::paper(), Xoshiro256StarStar::new(2));
        let mut s = scene_with([1.0, 0.0, 0.05], Pose2::default(), (0.0, -20.0 * DEG));
        let mut frames = 0;
        for i in 0..=400 {
            s.time = i as f64 * 0.01;
            if cam.frame(&s).is_some() {
                frames += 1;
            }
        }
        // 0.00, 0.25, …, 4.00 s.
        assert_eq!(frames, 17);
    }
}
