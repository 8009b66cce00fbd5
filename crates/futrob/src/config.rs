//! `ini.config`: one robot's configuration, FutRob's `key=value` file with `[section]`
//! headers and `#` comments, plus the simulator address and every tunable of the brain.
//!
//! ```text
//! [robot_profile]
//! id=1
//! #roleEnum: [1=goalkeeper, 2=field_player]
//! role=1
//! logEnabled=1
//! logfile=futrob.log
//! logAction=1
//! logMotors=0
//! logVision=1
//! logComm=1
//! logRules=0
//! visionStubEnabled=0
//! visionStubSrc=objSampleData.input
//! rules=rules.xml
//! autoLookAtBall=0
//! ```
//!
//! Every key FutRob's file has is accepted (`MAX_RPM_SERVO` and `MAX_VEL_SERVO` too:
//! stored, unused in simulation). Keys may sit in any section; section names only organise
//! the file. An unknown key, a key given twice, a bad value or a missing `rules` is refused
//! with the file and line. The other keys, their defaults and units are in [`KEYS`].

pub use crate::motion::MotionTable;
use crate::msg::{CommParams, Role};
use crate::sighting::Sighting;
use crate::trajectory::TrajectoryParams;

/// A config that cannot be loaded: file, line, what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", where_in(file, *line))]
pub struct ConfigError {
    /// File name as given.
    pub file: String,
    /// 1-based line (0: the file as a whole).
    pub line: u32,
    /// What is wrong.
    pub message: String,
}

/// `file:line`, or `file` alone for the file as a whole (line 0).
fn where_in(file: &str, line: u32) -> String {
    if line == 0 {
        file.to_string()
    } else {
        format!("{file}:{line}")
    }
}

/// Every tunable of the brain. Defaults are FutRob's values where it gives them, otherwise
/// the documented choices of [`crate`] (see "Decisions").
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BrainParams {
    /// Consecutive vision cycles before an object changes between seen and not seen.
    pub hysteresis: u32,
    /// Vision cycle, ms (`VISION_LATENCY_MS`).
    pub vision_period_ms: u64,
    /// Ball trajectory model.
    pub trajectory: TrajectoryParams,
    /// Samples older than this restart the ball trajectory, ms.
    pub trajectory_timeout_ms: u64,
    /// Team link.
    pub comm: CommParams,
    /// Lateral distance of each foot's axis from the robot centre, cm.
    pub foot_offset_cm: f64,
    /// Distance of the toes ahead of the robot centre, cm.
    pub foot_front_cm: f64,
    /// `ballIsMine`: ball centre at most this far ahead of the toes, cm.
    pub possession_ahead_cm: f64,
    /// `ballIsMine`: ball centre within this of a foot's axis, cm.
    pub possession_side_cm: f64,
    /// `ballIsMine` once true stays true while the ball is within this much more of the
    /// zone, cm: noisy sightings at the zone's edge (and the head looking away to find the
    /// goal) do not make the robot let go of a ball it holds. Kicks still line up with the
    /// strict zone.
    pub possession_margin_cm: f64,
    /// `partnerInRange` / `opponentInRange`: how far a kick sends the ball, cm.
    pub kick_range_cm: f64,
    /// `partnerInRange`: a teammate nearer than this cannot receive a pass (it stands at the
    /// ball), cm.
    pub pass_min_range_cm: f64,
    /// `partnerBetterPlaced`: how much nearer the opponent goal than the ball holder a
    /// teammate must stand to be passed to, cm.
    pub pass_gain_cm: f64,
    /// `goalInRange`: the farthest goal the robot shoots at, cm.
    pub shot_range_cm: f64,
    /// `…Searched` holds until the robot is this far from where it searched, cm: a goal too
    /// near to be seen is not searched for again after every few centimetres of lining up.
    pub search_radius_cm: f64,
    /// `gkNeedsRelocate` thresholds along the goal line (`GK_X_DIFF_THRESHOLD_MIN/MAX`).
    pub gk_x_min_cm: f64,
    /// See `gk_x_min_cm`.
    pub gk_x_max_cm: f64,
    /// Thresholds out from the goal line (`GK_Y_DIFF_THRESHOLD_MIN/MAX`).
    pub gk_y_min_cm: f64,
    /// See `gk_y_min_cm`.
    pub gk_y_max_cm: f64,
    /// A teammate this close to our goal centre is taken for our keeper, cm.
    pub keeper_id_distance_cm: f64,
    /// Goal width, post to post (`GK_GOAL_WIDTH`), cm.
    pub goal_width_cm: f64,
    /// Width the keeper covers standing still (`GK_STANDING_STILL_COVERAGE`), cm.
    pub standing_coverage_cm: f64,
    /// Reach of a dive beyond the standing coverage (`SAVE_DISTANCE`), cm.
    pub save_distance_cm: f64,
    /// Tolerance of `gkNeedsStartSaving` (`GK_SAVE_TIME_THRESHOLD_MS`).
    pub save_time_threshold_ms: u64,
    /// Kick-direction rule: keeper this close (in angle) to the goal centre covers it
    /// (`THRESHOLD_DIFF_ANGLE_OPP_GK_GOAL`), degrees.
    pub kick_cover_deg: f64,
    /// Kick-direction rule: turn step toward the far post (`THRESHOLD_ANGLE_KICK`), degrees.
    pub kick_turn_deg: f64,
    /// The motion table (the brain plans with its quanta).
    pub motion: MotionTable,
    /// Camera height above the floor, cm.
    pub camera_height_cm: f64,
    /// Camera pitch below the commanded head tilt, degrees.
    pub camera_pitch_offset_deg: f64,
    /// How long a search holds each head position, ms.
    pub search_dwell_ms: u64,
    /// A body command not reported finished after this long counts as finished, ms.
    pub segment_timeout_ms: u64,
    /// Period of the status reports (ball in sight, distances), ms.
    pub report_period_ms: u64,
    /// Least interval between two keeper-position reports, ms.
    pub gk_pos_period_ms: u64,
    /// `partnerNearerBall`: a teammate's ball distance must be this much shorter than ours
    /// (or within it, with a lower id) for it to go for the ball, cm.
    pub support_margin_cm: f64,
    /// `supportBall`: the distance kept from the ball, cm (±30 %: closer, it holds; farther,
    /// it walks in).
    pub support_distance_cm: f64,
    /// A field player's `findBall`: a ball last seen farther than this and within 30° of
    /// straight ahead, not found by a sweep, is looked for again after walking toward it, cm.
    pub far_ball_cm: f64,
    /// Long steps walked toward such a ball before the next sweep.
    pub search_walk_steps: u32,
    /// `followBall`: a ball rolling toward the robot that will pass within this of its
    /// centre is waited for (with lateral steps onto its line), not walked into, cm.
    pub intercept_reach_cm: f64,
    /// Stand up automatically when the body reports a fall.
    pub auto_get_up: bool,
    /// Run `lookAtBall` on the head whenever the current action leaves it free.
    pub auto_look_at_ball: bool,
    /// The camera's distance calibration the keeper-position report corrects its ranges
    /// with (`rangeCalibration`, see [`RangeCalibration`]): FutRob's by default, the camera
    /// a FutRob brain sees through unless told otherwise (the simulator's humanoid camera,
    /// the trials' `paper` profile). A brain on an exact camera turns it off
    /// ([`BrainParams::on_exact_camera`]).
    pub range_calibration: RangeCalibration,
}

/// FutRob's camera calibration: the mean distance error its vision made at each true
/// distance (true distance cm, mean error cm), measured over the head tilts at which the
/// ball was seen — the same figure the `paper` camera of `simrob-soccer` draws its errors
/// from.
pub const FUTROB_RANGE_BIAS: [(f64, f64); 10] = [
    (5.0, 5.33),
    (20.0, 2.17),
    (40.0, 0.57),
    (60.0, 0.86),
    (80.0, 0.64),
    (90.0, 2.69),
    (100.0, 2.71),
    (110.0, 4.19),
    (130.0, 8.69),
    (150.0, 17.78),
];

/// The mean distance error a camera is known to make, which a reading is corrected by.
///
/// A range error that is a bias at a given distance (FutRob's camera reads 150 cm as about
/// 168 cm, every frame) does not average out over sightings; knowing it, a team subtracts it.
/// `ini.config`'s `rangeCalibration` names it: `futrob` or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeCalibration {
    /// Readings taken as they come (`none`).
    None,
    /// FutRob's calibration ([`FUTROB_RANGE_BIAS`]): linear between its rows, the first row's
    /// error below 5 cm, proportional to the distance beyond 150 cm (`futrob`).
    FutRob,
}

impl RangeCalibration {
    /// The name `rangeCalibration` takes (`futrob`, `none`).
    pub fn name(self) -> &'static str {
        match self {
            RangeCalibration::None => "none",
            RangeCalibration::FutRob => "futrob",
        }
    }

    /// The calibration called `name` (`futrob` or `none`, any letter case).
    pub fn named(name: &str) -> Option<RangeCalibration> {
        match name.trim().to_ascii_lowercase().as_str() {
            "none" => Some(RangeCalibration::None),
            "futrob" => Some(RangeCalibration::FutRob),
            _ => None,
        }
    }

    /// The mean error (cm) of a reading of an object at true distance `d` cm.
    pub fn bias_at(self, d: f64) -> f64 {
        let t: &[(f64, f64)] = match self {
            RangeCalibration::None => return 0.0,
            RangeCalibration::FutRob => &FUTROB_RANGE_BIAS,
        };
        let (Some(first), Some(last)) = (t.first(), t.last()) else {
            return 0.0;
        };
        if d <= first.0 {
            return first.1;
        }
        if d >= last.0 {
            return last.1 * d / last.0;
        }
        t.windows(2).find(|w| d <= w[1].0).map_or(last.1, |w| {
            let s = (d - w[0].0) / (w[1].0 - w[0].0);
            w[0].1 + (w[1].1 - w[0].1) * s
        })
    }

    /// The true distance (cm) whose mean reading is `measured` cm: the solution of
    /// `d + bias(d) = measured` (by fixed-point iteration; FutRob's error never changes by
    /// half a centimetre per centimetre, so it converges). Not finite or negative in, out
    /// unchanged.
    pub fn correct(self, measured: f64) -> f64 {
        if self == RangeCalibration::None || !measured.is_finite() || measured < 0.0 {
            return measured;
        }
        let mut d = measured;
        for _ in 0..60 {
            d = (measured - self.bias_at(d)).max(0.0);
        }
        d
    }
}

impl Default for BrainParams {
    fn default() -> Self {
        BrainParams {
            hysteresis: 2,
            vision_period_ms: 250,
            trajectory: TrajectoryParams::default(),
            trajectory_timeout_ms: 1000,
            comm: CommParams::default(),
            foot_offset_cm: 4.0,
            foot_front_cm: 6.0,
            possession_ahead_cm: 12.0,
            possession_side_cm: 4.5,
            possession_margin_cm: 4.0,
            kick_range_cm: 110.0,
            pass_min_range_cm: 40.0,
            pass_gain_cm: 50.0,
            shot_range_cm: 200.0,
            search_radius_cm: 50.0,
            gk_x_min_cm: 10.0,
            gk_x_max_cm: 40.0,
            gk_y_min_cm: 40.0,
            gk_y_max_cm: 80.0,
            keeper_id_distance_cm: 60.0,
            goal_width_cm: 180.0,
            standing_coverage_cm: 20.0,
            save_distance_cm: 25.0,
            save_time_threshold_ms: 200,
            kick_cover_deg: 10.0,
            kick_turn_deg: 15.0,
            motion: MotionTable::default(),
            camera_height_cm: 36.0,
            camera_pitch_offset_deg: -6.0,
            search_dwell_ms: 750,
            segment_timeout_ms: 8000,
            report_period_ms: 1000,
            gk_pos_period_ms: 1000,
            support_margin_cm: 20.0,
            support_distance_cm: 90.0,
            far_ball_cm: 100.0,
            search_walk_steps: 4,
            intercept_reach_cm: 40.0,
            auto_get_up: true,
            auto_look_at_ball: false,
            range_calibration: RangeCalibration::FutRob,
        }
    }
}

impl BrainParams {
    /// These parameters for a brain whose camera reports true distances (the simulator's
    /// `ideal` camera, `simrob soccer player --ideal-camera`): there is no range bias to
    /// correct, so the range calibration is off whatever `rangeCalibration` said.
    pub fn on_exact_camera(self) -> BrainParams {
        BrainParams {
            range_calibration: RangeCalibration::None,
            ..self
        }
    }
}

/// One robot's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct IniConfig {
    /// Robot id (1–254).
    pub id: i32,
    /// Initial role.
    pub role: Role,
    /// Write a log file at all.
    pub log_enabled: bool,
    /// Log file path.
    pub logfile: String,
    /// Log the action handler.
    pub log_action: bool,
    /// Log the motor commands.
    pub log_motors: bool,
    /// Log vision.
    pub log_vision: bool,
    /// Log team messages.
    pub log_comm: bool,
    /// Log the rule handler.
    pub log_rules: bool,
    /// Read observations from the vision stub file instead of the simulator's camera.
    pub vision_stub_enabled: bool,
    /// The vision stub file.
    pub vision_stub_src: String,
    /// The rules file (mandatory).
    pub rules: String,
    /// `MAX_RPM_SERVO` (kept, unused in simulation).
    pub max_rpm_servo: Option<f64>,
    /// `MAX_VEL_SERVO` (kept, unused in simulation).
    pub max_vel_servo: Option<f64>,
    /// The simulator, `IP:PORT` (overridden by `--server`).
    pub server: Option<String>,
    /// The simulator's entity id of this robot's humanoid (default: `id`).
    pub entity_id: Option<u32>,
    /// UDP port of the team messages.
    pub comm_port: u16,
    /// Where team messages are sent: a broadcast address for a LAN, or `127.0.0.1` for
    /// robots on one machine.
    pub comm_address: String,
    /// Most team datagrams handed to the brain in one decision cycle
    /// (`commMaxDatagramsPerCycle`); more wait for the next, so a flood never stops the robot
    /// deciding.
    pub comm_max_datagrams_per_cycle: usize,
    /// Most lines a second saying a dropped team datagram (`commMaxDropLinesPerSecond`); past
    /// them a drop is only counted, and the next line says how many were not said.
    pub comm_max_drop_lines_per_second: u32,
    /// Every tunable of the brain.
    pub params: BrainParams,
}

/// Default UDP port of the team messages.
pub const DEFAULT_COMM_PORT: u16 = 10020;

/// Default of `commMaxDatagramsPerCycle`.
pub const DEFAULT_COMM_MAX_DATAGRAMS_PER_CYCLE: usize = 1024;

/// Default of `commMaxDropLinesPerSecond`: a flood of bad datagrams printed a line each, 10 MB
/// in 16 s.
pub const DEFAULT_COMM_MAX_DROP_LINES_PER_SECOND: u32 = 10;

/// One key of `ini.config`, as the reference documents it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Key {
    /// The key, as spelled in the file (case matters).
    pub name: &'static str,
    /// Its unit or kind of value.
    pub unit: &'static str,
    /// Its default, as text.
    pub default: &'static str,
    /// The smallest and largest value accepted, for numbers: the parser reads them here.
    pub range: Option<(f64, f64)>,
    /// What it means.
    pub meaning: &'static str,
}

/// FutRob's robot-profile keys: name, kind, default, range, meaning.
pub const PROFILE_KEYS: &[Key] = &[
    Key {
        name: "id",
        unit: "id",
        default: "(required)",
        range: Some((1.0, 254.0)),
        meaning: "robot number, unique in the team",
    },
    Key {
        name: "role",
        unit: "1/2",
        default: "2",
        range: None,
        meaning: "1 = goalkeeper, 2 = field_player (the words work too)",
    },
    Key {
        name: "logEnabled",
        unit: "0/1",
        default: "0",
        range: None,
        meaning: "write a log file",
    },
    Key {
        name: "logfile",
        unit: "file",
        default: "futrob.log",
        range: None,
        meaning: "the log file",
    },
    Key {
        name: "logAction",
        unit: "0/1",
        default: "0",
        range: None,
        meaning: "log actions",
    },
    Key {
        name: "logMotors",
        unit: "0/1",
        default: "0",
        range: None,
        meaning: "log motor commands",
    },
    Key {
        name: "logVision",
        unit: "0/1",
        default: "0",
        range: None,
        meaning: "log sightings",
    },
    Key {
        name: "logComm",
        unit: "0/1",
        default: "0",
        range: None,
        meaning: "log team messages",
    },
    Key {
        name: "logRules",
        unit: "0/1",
        default: "0",
        range: None,
        meaning: "log rule evaluations",
    },
    Key {
        name: "visionStubEnabled",
        unit: "0/1",
        default: "0",
        range: None,
        meaning: "read sightings from the vision stub file instead of the simulated camera",
    },
    Key {
        name: "visionStubSrc",
        unit: "file",
        default: "(none)",
        range: None,
        meaning: "the vision stub file (`scene, object, angle_deg, distance_cm` per line)",
    },
    Key {
        name: "rules",
        unit: "file",
        default: "(required)",
        range: None,
        meaning: "the rules file (FutRob's `rules.xml`)",
    },
    Key {
        name: "autoLookAtBall",
        unit: "0/1",
        default: "0",
        range: None,
        meaning: "the head follows the ball while it is seen",
    },
    Key {
        name: "MAX_RPM_SERVO",
        unit: "rpm",
        default: "(none)",
        range: Some((0.0, 1000000.0)),
        meaning: "stored, unused in simulation",
    },
    Key {
        name: "MAX_VEL_SERVO",
        unit: "",
        default: "(none)",
        range: Some((0.0, 1000000.0)),
        meaning: "stored, unused in simulation",
    },
];

/// Every key that is not FutRob's robot profile: name, unit, default, range, meaning.
pub const KEYS: &[Key] = &[
    Key { name: "server", unit: "IP:PORT", default: "(none)", range: None, meaning: "the simulator (simrob serve); --server overrides it" },
    Key { name: "entityId", unit: "id", default: "id", range: Some((1.0, 4000000000.0)), meaning: "the simulator's entity id of this robot's humanoid" },
    Key { name: "commPort", unit: "port", default: "10020", range: Some((1.0, 65535.0)), meaning: "UDP port of the team messages" },
    Key { name: "commAddress", unit: "IPv4", default: "127.255.255.255", range: None, meaning: "where team messages go: 255.255.255.255 on a LAN; the loopback broadcast 127.255.255.255 for robots on one machine" },
    Key { name: "COMM_TTL", unit: "ms", default: "10000", range: Some((1.0, 3600000.0)), meaning: "teammate data older than this is dropped" },
    Key { name: "partnerPassWindow", unit: "ms", default: "10000", range: Some((0.0, 3600000.0)), meaning: "partnerPass holds this long after a teammate's pass" },
    Key { name: "commMaxTeammates", unit: "count", default: "64", range: Some((1.0, 4096.0)), meaning: "teammates the table holds; a message from a new sender while this many are fresh is dropped, its sender not asked its role" },
    Key { name: "commMaxDatagramsPerCycle", unit: "count", default: "1024", range: Some((1.0, 1048576.0)), meaning: "team datagrams handed to the brain per decision cycle; more wait for the next (past the socket's buffer the kernel drops them)" },
    Key { name: "commMaxDropLinesPerSecond", unit: "count", default: "10", range: Some((1.0, 1000000.0)), meaning: "lines a second saying a dropped team datagram; past them a drop is only counted, and the next line says how many were not said" },
    Key { name: "visibilityHysteresis", unit: "cycles", default: "2", range: Some((1.0, 100.0)), meaning: "vision cycles before an object changes between seen and not seen" },
    Key { name: "VISION_LATENCY_MS", unit: "ms", default: "250", range: Some((1.0, 10000.0)), meaning: "vision cycle (the vision stub plays one scene per cycle)" },
    Key { name: "trajectoryEpsilon", unit: "cm", default: "10", range: Some((0.1, 1000.0)), meaning: "a ball sample farther than this from the fitted line is an outlier" },
    Key { name: "trajectorySamples", unit: "count", default: "32", range: Some((3.0, 10000.0)), meaning: "ball samples kept in the fit" },
    Key { name: "trajectoryTimeoutMs", unit: "ms", default: "1000", range: Some((1.0, 3600000.0)), meaning: "a ball unseen this long restarts its trajectory" },
    Key { name: "ballStillSpeed", unit: "cm/s", default: "5", range: Some((0.0, 1000.0)), meaning: "below this the ball counts as still" },
    Key { name: "footOffset", unit: "cm", default: "4", range: Some((0.0, 50.0)), meaning: "each foot's axis from the robot centre" },
    Key { name: "footFront", unit: "cm", default: "6", range: Some((0.0, 50.0)), meaning: "toes ahead of the robot centre" },
    Key { name: "possessionAhead", unit: "cm", default: "12", range: Some((0.0, 100.0)), meaning: "ballIsMine: ball centre at most this far ahead of the toes" },
    Key { name: "possessionSide", unit: "cm", default: "4.5", range: Some((0.0, 100.0)), meaning: "ballIsMine: ball centre within this of a foot's axis (inside the 5 cm a kick reaches to the side)" },
    Key { name: "possessionMargin", unit: "cm", default: "4", range: Some((0.0, 100.0)), meaning: "ballIsMine, once true, holds while the ball is within this much more of the zone" },
    Key { name: "kickRange", unit: "cm", default: "110", range: Some((0.0, 2000.0)), meaning: "partnerInRange / opponentInRange" },
    Key { name: "passMinRange", unit: "cm", default: "40", range: Some((0.0, 2000.0)), meaning: "partnerInRange: a nearer teammate cannot receive a pass" },
    Key { name: "passGain", unit: "cm", default: "50", range: Some((0.0, 2000.0)), meaning: "partnerBetterPlaced: a teammate this much nearer the opponent goal can be passed to" },
    Key { name: "shotRange", unit: "cm", default: "200", range: Some((0.0, 2000.0)), meaning: "goalInRange: the farthest goal the robot shoots at" },
    Key { name: "searchRadius", unit: "cm", default: "50", range: Some((0.0, 2000.0)), meaning: "…Searched holds until the robot is this far from where it searched" },
    Key { name: "GK_X_DIFF_THRESHOLD_MIN", unit: "cm", default: "10", range: Some((0.0, 1000.0)), meaning: "keeper relocation: least offset along the goal line" },
    Key { name: "GK_X_DIFF_THRESHOLD_MAX", unit: "cm", default: "40", range: Some((0.0, 1000.0)), meaning: "keeper relocation: larger offsets are vision errors" },
    Key { name: "GK_Y_DIFF_THRESHOLD_MIN", unit: "cm", default: "40", range: Some((0.0, 1000.0)), meaning: "keeper position report: least distance out from the goal line" },
    Key { name: "GK_Y_DIFF_THRESHOLD_MAX", unit: "cm", default: "80", range: Some((0.0, 1000.0)), meaning: "keeper position report: larger distances are vision errors" },
    Key { name: "keeperIdDistance", unit: "cm", default: "60", range: Some((0.0, 1000.0)), meaning: "a teammate this close to our goal centre is our keeper" },
    Key { name: "GK_GOAL_WIDTH", unit: "cm", default: "180", range: Some((1.0, 1000.0)), meaning: "goal width, post to post" },
    Key { name: "GK_STANDING_STILL_COVERAGE", unit: "cm", default: "20", range: Some((0.0, 200.0)), meaning: "width the keeper covers standing" },
    Key { name: "SAVE_DISTANCE", unit: "cm", default: "25", range: Some((0.0, 200.0)), meaning: "reach of a dive beyond the standing coverage" },
    Key { name: "GK_SAVE_TIME_THRESHOLD_MS", unit: "ms", default: "200", range: Some((0.0, 10000.0)), meaning: "gkNeedsStartSaving tolerance" },
    Key { name: "THRESHOLD_DIFF_ANGLE_OPP_GK_GOAL", unit: "deg", default: "10", range: Some((0.0, 90.0)), meaning: "kickBall: keeper this close to the goal centre covers it" },
    Key { name: "THRESHOLD_ANGLE_KICK", unit: "deg", default: "15", range: Some((1.0, 90.0)), meaning: "kickBall: turn step toward the far post" },
    Key { name: "STEP_DISTANCE", unit: "cm", default: "12", range: Some((1.0, 100.0)), meaning: "long step" },
    Key { name: "MINI_STEP_DISTANCE", unit: "cm", default: "2", range: Some((0.5, 100.0)), meaning: "mini step" },
    Key { name: "RIGHT_STEP_DISTANCE", unit: "cm", default: "4", range: Some((0.5, 100.0)), meaning: "lateral step (both sides)" },
    Key { name: "LEFT_STEP_DISTANCE", unit: "cm", default: "4", range: Some((0.5, 100.0)), meaning: "lateral step (both sides)" },
    Key { name: "turnStep", unit: "deg", default: "20", range: Some((1.0, 180.0)), meaning: "elementary turn in place" },
    Key { name: "smallTurnStep", unit: "deg", default: "5", range: Some((0.0, 180.0)), meaning: "small turn in place, a kick's final alignment (0: none)" },
    Key { name: "LATERAL_STEP_TIMING_MS", unit: "ms", default: "600", range: Some((1.0, 60000.0)), meaning: "one lateral step" },
    Key { name: "SAVE_TIMING_MS", unit: "ms", default: "400", range: Some((1.0, 60000.0)), meaning: "dive to full extension" },
    Key { name: "cameraHeight", unit: "cm", default: "36", range: Some((1.0, 500.0)), meaning: "camera above the floor" },
    Key { name: "cameraPitchOffset", unit: "deg", default: "-6", range: Some((-45.0, 45.0)), meaning: "camera axis relative to the commanded head tilt" },
    Key { name: "searchDwellMs", unit: "ms", default: "750", range: Some((0.0, 60000.0)), meaning: "a search holds each head position this long" },
    Key { name: "segmentTimeoutMs", unit: "ms", default: "8000", range: Some((100.0, 600000.0)), meaning: "a body command not reported finished after this long counts as finished" },
    Key { name: "reportPeriodMs", unit: "ms", default: "1000", range: Some((10.0, 3600000.0)), meaning: "period of the status messages" },
    Key { name: "gkPosPeriodMs", unit: "ms", default: "1000", range: Some((10.0, 3600000.0)), meaning: "least interval between keeper-position messages" },
    Key { name: "supportMargin", unit: "cm", default: "20", range: Some((0.0, 1000.0)), meaning: "partnerNearerBall: a teammate this much nearer the ball goes for it" },
    Key { name: "supportDistance", unit: "cm", default: "90", range: Some((10.0, 1000.0)), meaning: "supportBall: distance kept from the ball" },
    Key { name: "farBall", unit: "cm", default: "100", range: Some((0.0, 10000.0)), meaning: "findBall: a ball last seen ahead beyond this is walked toward, not turned from" },
    Key { name: "interceptReach", unit: "cm", default: "40", range: Some((0.0, 1000.0)), meaning: "followBall: a ball rolling by within this is waited for, not walked into" },
    Key { name: "searchWalkSteps", unit: "steps", default: "4", range: Some((0.0, 100.0)), meaning: "findBall: long steps toward a far ball before the next sweep" },
    Key { name: "autoGetUp", unit: "0/1", default: "1", range: None, meaning: "stand up automatically when the body reports a fall" },
    Key { name: "rangeCalibration", unit: "futrob/none", default: "futrob", range: None, meaning: "keeper position report: the camera's mean range error its keeper and goal ranges are corrected by, `futrob` (FutRob's calibration table, the error of the simulator's FutRob camera and of the `paper` profile) or `none`; off on an exact camera (`--ideal-camera`, the `ideal` profile)" },
];

impl IniConfig {
    /// Parses `ini.config` text; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<IniConfig, ConfigError> {
        let mut c = IniConfig {
            id: 0,
            role: Role::FieldPlayer,
            log_enabled: false,
            logfile: "futrob.log".into(),
            log_action: false,
            log_motors: false,
            log_vision: false,
            log_comm: false,
            log_rules: false,
            vision_stub_enabled: false,
            vision_stub_src: String::new(),
            rules: String::new(),
            max_rpm_servo: None,
            max_vel_servo: None,
            server: None,
            entity_id: None,
            comm_port: DEFAULT_COMM_PORT,
            comm_address: "127.255.255.255".into(),
            comm_max_datagrams_per_cycle: DEFAULT_COMM_MAX_DATAGRAMS_PER_CYCLE,
            comm_max_drop_lines_per_second: DEFAULT_COMM_MAX_DROP_LINES_PER_SECOND,
            params: BrainParams::default(),
        };
        let mut seen: Vec<(String, u32)> = Vec::new();
        let mut have_id = false;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i as u32 + 1;
            let err = |message: String| ConfigError {
                file: file.into(),
                line: line_no,
                message,
            };
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
                continue;
            }
            if line.starts_with('[') {
                if !line.ends_with(']') || line.len() < 3 {
                    return Err(err(format!("malformed section header {line:?}")));
                }
                continue;
            }
            let Some((key, value)) = line.split_once('=') else {
                return Err(err(format!("expected key=value, found {line:?}")));
            };
            let (key, value) = (key.trim(), value.trim());
            if let Some((_, first)) = seen.iter().find(|(k, _)| k == key) {
                return Err(err(format!("{key} given twice (first on line {first})")));
            }
            seen.push((key.to_string(), line_no));
            let flag = || match value {
                "0" => Ok(false),
                "1" => Ok(true),
                _ => Err(err(format!("{key} must be 0 or 1, not {value:?}"))),
            };
            let num = |min: f64, max: f64| -> Result<f64, ConfigError> {
                let v: f64 = value
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite())
                    .ok_or_else(|| err(format!("{key} must be a number, not {value:?}")))?;
                if v < min || v > max {
                    return Err(err(format!("{key}={v} is out of range [{min}, {max}]")));
                }
                Ok(v)
            };
            // The range of `key` in the tables the reference is generated from.
            // A count, an id, a port, cycles or steps is a whole number: 2.5 is refused, not
            // cut to 2.
            let numk = || {
                let k = PROFILE_KEYS.iter().chain(KEYS).find(|k| k.name == key);
                let (min, max) = k
                    .and_then(|k| k.range)
                    .unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
                let v = num(min, max)?;
                let whole = k.is_some_and(|k| {
                    matches!(k.unit, "count" | "id" | "port" | "cycles" | "steps")
                });
                if whole && v.fract() != 0.0 {
                    return Err(err(format!("{key} must be a whole number, not {value:?}")));
                }
                Ok(v)
            };
            let msk = || numk().map(|v| v as u64);
            let p = &mut c.params;
            match key {
                "id" => {
                    let v = numk()?;
                    if v.fract() != 0.0 {
                        return Err(err(format!("id must be an integer, not {value:?}")));
                    }
                    c.id = v as i32;
                    have_id = true;
                }
                "role" => {
                    c.role = match value {
                        "1" | "goalkeeper" => Role::Goalkeeper,
                        "2" | "field_player" => Role::FieldPlayer,
                        _ => {
                            return Err(err(format!(
                                "role must be 1 (goalkeeper) or 2 (field_player), not {value:?}"
                            )))
                        }
                    }
                }
                "logEnabled" => c.log_enabled = flag()?,
                "logfile" => c.logfile = value.into(),
                "logAction" => c.log_action = flag()?,
                "logMotors" => c.log_motors = flag()?,
                "logVision" => c.log_vision = flag()?,
                "logComm" => c.log_comm = flag()?,
                "logRules" => c.log_rules = flag()?,
                "visionStubEnabled" => c.vision_stub_enabled = flag()?,
                "visionStubSrc" => c.vision_stub_src = value.into(),
                "rules" => {
                    if value.is_empty() {
                        return Err(err("rules must name the rules file".into()));
                    }
                    c.rules = value.into()
                }
                "autoLookAtBall" => p.auto_look_at_ball = flag()?,
                "MAX_RPM_SERVO" => c.max_rpm_servo = Some(numk()?),
                "MAX_VEL_SERVO" => c.max_vel_servo = Some(numk()?),
                "server" => {
                    if value.parse::<std::net::SocketAddr>().is_err() {
                        return Err(err(format!("server must be IP:PORT, not {value:?}")));
                    }
                    c.server = Some(value.into())
                }
                "entityId" => c.entity_id = Some(numk()? as u32),
                "commPort" => c.comm_port = numk()? as u16,
                "commAddress" => {
                    if value.parse::<std::net::Ipv4Addr>().is_err() {
                        return Err(err(format!(
                            "commAddress must be an IPv4 address, not {value:?}"
                        )));
                    }
                    c.comm_address = value.into()
                }
                "COMM_TTL" => p.comm.ttl_ms = msk()?,
                "partnerPassWindow" => p.comm.pass_window_ms = msk()?,
                "commMaxTeammates" => p.comm.max_teammates = numk()? as usize,
                "commMaxDatagramsPerCycle" => c.comm_max_datagrams_per_cycle = numk()? as usize,
                "commMaxDropLinesPerSecond" => c.comm_max_drop_lines_per_second = numk()? as u32,
                "visibilityHysteresis" => p.hysteresis = numk()? as u32,
                "VISION_LATENCY_MS" => p.vision_period_ms = msk()?,
                "trajectoryEpsilon" => p.trajectory.epsilon_cm = numk()?,
                "trajectorySamples" => p.trajectory.max_samples = numk()? as usize,
                "trajectoryTimeoutMs" => p.trajectory_timeout_ms = msk()?,
                "ballStillSpeed" => p.trajectory.min_speed_cm_s = numk()?,
                "footOffset" => p.foot_offset_cm = numk()?,
                "footFront" => p.foot_front_cm = numk()?,
                "possessionAhead" => p.possession_ahead_cm = numk()?,
                "possessionSide" => p.possession_side_cm = numk()?,
                "possessionMargin" => p.possession_margin_cm = numk()?,
                "kickRange" => p.kick_range_cm = numk()?,
                "passMinRange" => p.pass_min_range_cm = numk()?,
                "passGain" => p.pass_gain_cm = numk()?,
                "shotRange" => p.shot_range_cm = numk()?,
                "searchRadius" => p.search_radius_cm = numk()?,
                "GK_X_DIFF_THRESHOLD_MIN" => p.gk_x_min_cm = numk()?,
                "GK_X_DIFF_THRESHOLD_MAX" => p.gk_x_max_cm = numk()?,
                "GK_Y_DIFF_THRESHOLD_MIN" => p.gk_y_min_cm = numk()?,
                "GK_Y_DIFF_THRESHOLD_MAX" => p.gk_y_max_cm = numk()?,
                "keeperIdDistance" => p.keeper_id_distance_cm = numk()?,
                "GK_GOAL_WIDTH" => p.goal_width_cm = numk()?,
                "GK_STANDING_STILL_COVERAGE" => p.standing_coverage_cm = numk()?,
                "SAVE_DISTANCE" => p.save_distance_cm = numk()?,
                "GK_SAVE_TIME_THRESHOLD_MS" => p.save_time_threshold_ms = msk()?,
                "THRESHOLD_DIFF_ANGLE_OPP_GK_GOAL" => p.kick_cover_deg = numk()?,
                "THRESHOLD_ANGLE_KICK" => p.kick_turn_deg = numk()?,
                "STEP_DISTANCE" => p.motion.step_cm = numk()?,
                "MINI_STEP_DISTANCE" => p.motion.mini_step_cm = numk()?,
                "RIGHT_STEP_DISTANCE" | "LEFT_STEP_DISTANCE" => p.motion.lateral_step_cm = numk()?,
                "turnStep" => p.motion.turn_step_deg = numk()?,
                "smallTurnStep" => p.motion.small_turn_deg = numk()?,
                "LATERAL_STEP_TIMING_MS" => p.motion.lateral_step_ms = msk()?,
                "SAVE_TIMING_MS" => p.motion.save_ms = msk()?,
                "cameraHeight" => p.camera_height_cm = numk()?,
                "cameraPitchOffset" => p.camera_pitch_offset_deg = numk()?,
                "searchDwellMs" => p.search_dwell_ms = msk()?,
                "segmentTimeoutMs" => p.segment_timeout_ms = msk()?,
                "reportPeriodMs" => p.report_period_ms = msk()?,
                "gkPosPeriodMs" => p.gk_pos_period_ms = msk()?,
                "supportMargin" => p.support_margin_cm = numk()?,
                "supportDistance" => p.support_distance_cm = numk()?,
                "farBall" => p.far_ball_cm = numk()?,
                "interceptReach" => p.intercept_reach_cm = numk()?,
                "searchWalkSteps" => p.search_walk_steps = numk()? as u32,
                "autoGetUp" => p.auto_get_up = flag()?,
                "rangeCalibration" => {
                    p.range_calibration = RangeCalibration::named(value).ok_or_else(|| {
                        err(format!(
                            "rangeCalibration must be futrob or none, not {value:?}"
                        ))
                    })?
                }
                _ => return Err(err(format!("unknown key {key:?}"))),
            }
        }
        let whole = |message: &str| ConfigError {
            file: file.into(),
            line: 0,
            message: message.into(),
        };
        if !have_id {
            return Err(whole("missing id (1-254)"));
        }
        if c.rules.is_empty() {
            return Err(whole("missing rules (the rules file is mandatory)"));
        }
        if c.vision_stub_enabled && c.vision_stub_src.is_empty() {
            return Err(whole(
                "visionStubEnabled=1 needs visionStubSrc (the stub file)",
            ));
        }
        if c.params.gk_x_min_cm > c.params.gk_x_max_cm
            || c.params.gk_y_min_cm > c.params.gk_y_max_cm
        {
            return Err(whole(
                "GK_*_DIFF_THRESHOLD_MIN must not exceed the matching MAX",
            ));
        }
        Ok(c)
    }
}

/// The vision stub: FutRob's deterministic fake camera (`scene, object, angle_deg,
/// distance_cm` per line). One scene per vision cycle, scenes numbered from 1; a scene with
/// no lines repeats the previous one; after the last scene the last one stays.
#[derive(Debug, Clone, PartialEq)]
pub struct VisionStub {
    scenes: Vec<(u32, Vec<Sighting>)>,
}

impl VisionStub {
    /// Parses a stub file; `file` names it in errors.
    pub fn parse(text: &str, file: &str) -> Result<VisionStub, ConfigError> {
        let mut scenes: Vec<(u32, Vec<Sighting>)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let err = |message: String| ConfigError {
                file: file.into(),
                line: i as u32 + 1,
                message,
            };
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let f: Vec<&str> = line.split(',').map(str::trim).collect();
            if f.len() != 4 {
                return Err(err(format!(
                    "expected `scene, object, angle, distance`, found {line:?}"
                )));
            }
            let scene: u32 = f[0]
                .parse()
                .ok()
                .filter(|s| *s >= 1)
                .ok_or_else(|| err(format!("scene must be a number from 1, not {:?}", f[0])))?;
            let object = crate::ObjectKind::from_token(f[1])
                .ok_or_else(|| err(format!("unknown object {:?}", f[1])))?;
            let num = |s: &str, what: &str| {
                s.parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| err(format!("{what} must be a number, not {s:?}")))
            };
            let angle = num(f[2], "angle")?;
            let distance = num(f[3], "distance")?;
            if !(-180.0..=180.0).contains(&angle) || distance < 0.0 {
                return Err(err(format!(
                    "angle {angle} or distance {distance} out of range"
                )));
            }
            match scenes.last_mut() {
                Some((s, v)) if *s == scene => v.push(Sighting::new(object, angle, distance)),
                Some((s, _)) if *s > scene => {
                    return Err(err(format!(
                        "scene {scene} after scene {s}: scenes must not go back"
                    )))
                }
                _ => scenes.push((scene, vec![Sighting::new(object, angle, distance)])),
            }
        }
        Ok(VisionStub { scenes })
    }

    /// The objects seen in vision cycle `cycle` (1-based).
    pub fn scene(&self, cycle: u32) -> &[Sighting] {
        self.scenes
            .iter()
            .rev()
            .find(|(s, _)| *s <= cycle)
            .map(|(_, v)| v.as_slice())
            .unwrap_or(&[])
    }
}
