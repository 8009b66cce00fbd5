//! The motion table: the humanoid's motion quanta and durations, in FutRob's units
//! (centimetres, degrees, milliseconds). One table for the brain, which plans with the quanta
//! (`ini.config`'s `STEP_DISTANCE`, `turnStep`, `LATERAL_STEP_TIMING_MS`, …), and for the
//! simulated body (`simrob-soccer`), which executes them and converts to metres, radians and
//! seconds where it moves parts.
//!
//! FutRob gives the quanta (notes c.2: 12 cm long step, 2 cm mini step, 8 cm normal step, 4 cm
//! lateral step, 20° turn; §5.1.2, §8.4) but no durations (it names `LATERAL_STEP_TIMING_MS`
//! and `SAVE_TIMING_MS` without values). simrob's defaults:
//!
//! | motion | default | source |
//! |---|---|---|
//! | long step 12 cm | 800 ms | Bioloid Premium humanoid walking speed about 15 cm/s (vendor demo gaits); FutRob's step lengths |
//! | normal step 8 cm | 600 ms | same gait, shorter stride |
//! | mini step 2 cm | 400 ms | one weight shift of the same gait |
//! | lateral step 4 cm | 600 ms | `LATERAL_STEP_TIMING_MS`, value chosen to match the forward gait's cadence |
//! | turn quantum 20° | 800 ms | two weight shifts, as a long step |
//! | small turn 5° | 400 ms | one weight shift, as a mini step (the finer motion FutRob's report asks for to line up kicks) |
//! | head | 180 °/s | half the AX-12's no-load 59 rpm (354 °/s), the servos FutRob's head uses |
//! | kick | 1200 ms, ball struck at 350 ms, rolls 105 cm | a Bioloid kick motion (lift, swing, recover); FutRob: "about 110 cm at most" |
//! | save | dive 400 ms (`SAVE_TIMING_MS`), hold 1500 ms, recover 1500 ms | FutRob: "every dive that was needed was made in time" from 130 cm |
//! | get-up | 4000 ms | Bioloid get-up motions |
//! | initial position | 1000 ms | |
//! | fall | 400 ms | |

/// The humanoid's motions: quanta (cm, degrees), durations (ms), the kick and the body's
/// size. See the module table for the defaults and their sources.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MotionTable {
    /// Long forward step (`STEP_DISTANCE`), cm: `walk`'s step.
    pub step_cm: f64,
    /// Time of one long step, ms.
    pub step_ms: u64,
    /// Normal forward step (`gait="normal"`, FutRob's approach to the ball), cm.
    pub normal_step_cm: f64,
    /// Time of one normal step, ms.
    pub normal_step_ms: u64,
    /// Mini forward step (`MINI_STEP_DISTANCE`), cm.
    pub mini_step_cm: f64,
    /// Time of one mini step, ms.
    pub mini_step_ms: u64,
    /// One lateral step (`RIGHT_STEP_DISTANCE` / `LEFT_STEP_DISTANCE`), cm.
    pub lateral_step_cm: f64,
    /// Time of one lateral step (`LATERAL_STEP_TIMING_MS`).
    pub lateral_step_ms: u64,
    /// One elementary turn in place, degrees.
    pub turn_step_deg: f64,
    /// Time of one elementary turn, ms.
    pub turn_step_ms: u64,
    /// One small turn in place (a `turn` of less than `turn_step_deg` is made of these): a
    /// kick's final alignment, degrees. 0: none, kicks line up to half an elementary turn.
    pub small_turn_deg: f64,
    /// Time of one small turn, ms.
    pub small_turn_ms: u64,
    /// Head speed, degrees per second.
    pub head_deg_per_s: f64,
    /// Time of a whole kick, ms.
    pub kick_ms: u64,
    /// When, from the kick's start, the foot meets the ball, ms.
    pub kick_strike_ms: u64,
    /// How far a kicked ball rolls on the carpet, cm (it sets the kick's ball speed).
    pub kick_distance_cm: f64,
    /// Largest gap between the toe and the ball's surface for the foot to reach the ball, cm.
    pub kick_reach_cm: f64,
    /// Largest distance between the ball's centre and the kicking foot's axis, cm.
    pub kick_lateral_cm: f64,
    /// Time from starting a dive to full extension (`SAVE_TIMING_MS`).
    pub save_ms: u64,
    /// Time a keeper holds the dive, ms.
    pub save_hold_ms: u64,
    /// Time a keeper takes to get back up after a dive, ms.
    pub save_recover_ms: u64,
    /// Time of a get-up, ms.
    pub get_up_ms: u64,
    /// Time to reach the initial position, ms.
    pub initial_position_ms: u64,
    /// Time of a fall, ms.
    pub fall_ms: u64,
    /// Radius of the disc a standing humanoid occupies for robot–robot and robot–post
    /// blocking, cm.
    pub body_radius_cm: f64,
}

impl Default for MotionTable {
    fn default() -> Self {
        MotionTable {
            step_cm: 12.0,
            step_ms: 800,
            normal_step_cm: 8.0,
            normal_step_ms: 600,
            mini_step_cm: 2.0,
            mini_step_ms: 400,
            lateral_step_cm: 4.0,
            lateral_step_ms: 600,
            turn_step_deg: 20.0,
            turn_step_ms: 800,
            small_turn_deg: 5.0,
            small_turn_ms: 400,
            head_deg_per_s: 180.0,
            kick_ms: 1200,
            kick_strike_ms: 350,
            kick_distance_cm: 105.0,
            kick_reach_cm: 6.0,
            kick_lateral_cm: 5.0,
            save_ms: 400,
            save_hold_ms: 1500,
            save_recover_ms: 1500,
            get_up_ms: 4000,
            initial_position_ms: 1000,
            fall_ms: 400,
            body_radius_cm: 10.0,
        }
    }
}
