//! The FutRob robot-soccer team as a sans-IO brain: behaviour rules, world model, actions
//! and team messages of the FutRob humanoid KidSize team (Bioloid humanoids, 3 against 3:
//! one goalkeeper and two field players), for robots on the simrob humanoid soccer field.
//!
//! **What it is.** Everything one robot decides, with no I/O: no sockets, files, threads or
//! clocks. Time is milliseconds handed in by the caller. The `simrob soccer` commands wrap
//! it with UDP sockets and files; an in-process trial steps many brains with simulated time.
//!
//! **What it is not.** Not the body (the simulator executes the basic actions and owns the
//! physics), not the camera (the simulator's camera filter produces the observations), not
//! a network layer.
//!
//! # Modules
//! - [`rules`]: the rules XML (`RuleSet` → `Rule` → `def` with `not`/`and`/`or`/`value`,
//!   `action`), validated at load with file:line errors, compiled, evaluated against a
//!   [`PredicateSet`]: first true rule wins, evaluation restarts from the top each cycle.
//! - [`world`]: the world model — observations to robot frame, visibility hysteresis,
//!   `…LastPosValid`, `…Searched`, possession, the keeper's offsets, all 36 predicates.
//! - [`trajectory`]: the ball's least-squares line with outliers and trajectory changes,
//!   speed, averaged deceleration, predicted position and goal-line crossing.
//! - [`actions`]: the action handler (segments, equilibrium points, no restart of the same
//!   action) and the composite actions as state machines.
//! - [`msg`]: the 16-byte team message, the param table, the teammate table with TTL,
//!   discovery and `ASK_ROLE`, the simulated radio.
//! - [`sighting`]: what the camera reports of one object.
//! - [`config`]: `ini.config` and the vision stub file. [`log`]: FutRob's log line.
//! - [`names`]: the FutRob vocabulary (objects, predicates, actions with their parameters,
//!   ranges and codes) and [`motion`]: the motion table, both also the simulated body's
//!   (`simrob-soccer`).
//! - [`brain`]: all of the above for one robot. [`body`]: the link to a body that runs one
//!   action at a time (the simulated humanoid).
//!
//! # Stepping a brain in-process
//! ```
//! use simrob_futrob::{Brain, BodyStatus, BrainParams, ObjectKind, Role, Sighting, SimRadio};
//! use simrob_futrob::rules::RuleSet;
//!
//! let xml = include_str!("../../../scenarios/soccer/rules/kicker.xml");
//! let rules = RuleSet::parse(xml, "kicker.xml").unwrap();
//! let mut brain = Brain::new(3, Role::FieldPlayer, rules, BrainParams::default());
//! let mut radio = SimRadio::new(&[3], 0.0, 20, 0, 1);
//! let mut body = BodyStatus::default();
//! brain.start();
//! for cycle in 0..8u64 {
//!     let now = cycle * 250; // simulated time, ms
//!     brain.observe(now, &[Sighting::new(ObjectKind::Ball, 10.0, 80.0)]); // one camera frame
//!     for (to, m) in radio.deliver(now) { if to == 3 { brain.handle_message(now, m); } }
//!     let out = brain.step(now, &body);
//!     for m in &out.messages { radio.send(*m, now); }
//!     // Hand out.commands to the simulated body; when it finishes one, count it:
//!     body.finished += out.commands.iter().filter(|c| !c.kind.name().starts_with("turnHead")).count() as u64;
//! }
//! assert!(brain.world().in_sight(ObjectKind::Ball));
//! ```
//! The loop is: `observe` each camera frame, `handle_message` (or `handle_datagram`) each
//! team message, then `step` with the body's [`BodyStatus`]; send `commands` to the body and
//! `messages` to the radio. [`BodyStatus::finished`] counts the body commands the body has
//! completed: the handler sends the next segment only once the previous one is done.
//!
//! # Decisions on what FutRob leaves open
//! - **Letter case of names.** Canonical names are camelCase (`findBall`, `findRightLM`,
//!   `findMyLP`, `relocate`, `gkNeedsRelocate`); predicate, action and parameter names match
//!   ignoring case, and the loader warns (and records a [`rules::CaseWarning`]) when the case
//!   differs, so FutRob's lower-case `findball` and `GKNeedsRelocate` load.
//! - **No rule true:** the running action continues; "no rule matched" is logged once per
//!   transition. **Unknown names, wrong arity, out-of-range values:** refused at load with
//!   file and line. Parameter ranges (one table, [`names::ParamSpec`], also the
//!   body's): `walk*` distance [0, 1200] cm, `turn` angle [−360, 360] (default one 20° turn),
//!   head tilt [−60, 0], head pan [−60, 60].
//! - **Same action** = same name and same parameter value; it is not restarted.
//! - **Hysteresis** N = 2 vision cycles (`visibilityHysteresis`).
//! - **`ballLastPosValid`** is false while the ball is out of sight and its trajectory says
//!   it moves faster than 5 cm/s, and after the robot kicks until the ball is seen again.
//!   Head motion never invalidates a last position; every body segment that translates or
//!   rotates the robot (steps, turns, get-ups, dives) does for objects not in sight, and
//!   every one but a turn in place resets every `…Searched` ("searched for from the current
//!   position": a turn keeps the position). Last positions are dead-reckoned through the robot's own
//!   moves so that composite actions keep using them; the camera keeps running while the body
//!   steps or turns, so a position seen during a move is carried only through the part of the
//!   move still to come when it was seen.
//! - **Possession** (`ballIsMine`): ball centre at most 12 cm ahead of the toes (6 cm ahead
//!   of the robot centre) and within 6 cm of a foot's axis (feet 4 cm each side).
//! - **Ranges:** `partnerInRange`/`opponentInRange` use the 110 cm a kick carries the ball
//!   (`partnerInRange` also wants the teammate at least 40 cm away: a nearer one stands at
//!   the ball and cannot receive a pass);
//!   `goalInRange` uses the opponent goal and a separate shot range of 200 cm, because
//!   FutRob's penalty kicker shot from about 155 cm (the ball 140 cm from the goal, the
//!   robot behind it) with this very rule.
//! - **`ballIsGettingCloser`:** at least three fitted samples (two when the trajectory
//!   started from a ball at rest: its first is the rest point, an average of many sightings),
//!   the ball moving faster than 5 cm/s along a direction that reduces its range, seen within
//!   the last second.
//! - **`partnerPass`:** a fresh teammate reported `ACTION_TAKEN = passBall` within 10 s and
//!   this robot has not had the ball since.
//! - **Keeper position reports.** A field player seeing its own goal and a teammate within
//!   60 cm of the goal centre sends that teammate's offset in the **goal frame** (x along the
//!   goal line, + to the right of a keeper facing the field; y out from the goal line), the
//!   mean of its sightings in the last 2 s and not before it has four of them,
//!   once a second at most, directed to the known keeper (broadcast if none is known), each
//!   axis only inside its `[MIN, MAX]` window (10/40 cm in x, 40/80 cm in y, inclusive).
//!   `gkNeedsRelocate` uses the x offset only: the FutRob keeper moves only along its goal
//!   line, so a y report could never be corrected. The keeper dead-reckons its offset
//!   with each lateral step until the next report. The ranges of the keeper and the goal
//!   are first corrected by the camera's known mean error
//!   (`rangeCalibration`, [`config::RangeCalibration`]: FutRob's table by default, the
//!   camera a FutRob brain sees through; none on an exact camera):
//!   the x offset is the keeper's range times the sine of the bearing difference, so a
//!   range bias (FutRob's camera reads 150 cm 12 % long) would scale every offset.
//! - **`gkNeedsStartSaving`:** crossing point `x_c` and time `t_c` of the keeper's line
//!   (`y = 0` in its frame); `need = |x_c| − coverage/2`; lateral steps
//!   `n = ceil(max(0, need − SAVE_DISTANCE)/step)`; keeper time
//!   `t_k = n·LATERAL_STEP_TIMING_MS + SAVE_TIMING_MS`; true when
//!   `t_c − t_k ≤ GK_SAVE_TIME_THRESHOLD_MS` and the crossing is within the goal.
//!   Values: coverage 20 cm, `SAVE_DISTANCE` 25 cm, step 4 cm in 600 ms, dive 400 ms,
//!   threshold 200 ms, goal 180 cm.
//! - **Trajectory:** orthogonal least squares (see [`trajectory`]); ε = 10 cm; after a change
//!   the fit restarts from the two marked samples; samples older than 1 s restart it.
//! - **Walking.** Three quanta: long step 12 cm and mini step 2 cm (`walk`, and the
//!   approaches), lateral step 4 cm; elementary turn 20°, and every turn is made of whole
//!   elementary turns (never more than asked), as the simulated humanoid does.
//!   `THRESHOLD_ANGLE_KICK` (15°) is the offset of a post shot from the goal centre; the
//!   kicker lines up with elementary turns while the shot is at least 10° off its heading.
//! - **Falls:** the simulator knows when the robot is down ([`BodyStatus::fallen`]), so the
//!   handler stands it up automatically (`autoGetUp`, default on).
//! - **`findPartner` with the ball.** FutRob's search moves the head; a field player holding
//!   the ball whose teammate is behind it (where its body also hides the ball from the
//!   teammate) would sweep for ever. After one fruitless sweep it turns with the ball:
//!   [`actions::TURN_WITH_BALL_DEG`] in elementary turns, the head on the ball, stepping
//!   the ball back to a foot after each, toward where the teammate was last seen, then a
//!   level three-pose look, and again.
//! - **`autoLookAtBall`:** whenever the current action leaves the head free (not a search,
//!   not an explicit head command) and the ball's position is known.
//! - **Team messages:** little-endian i32 × 4; params and action codes in [`msg`] and
//!   [`ActionKind::code`]; own broadcasts are ignored, and so are messages from a source id
//!   outside 1–254 ([`msg::ROBOT_IDS`]: 255 is the broadcast id, 0 and negatives no robot's); `ASK_ROLE` is answered with a directed
//!   `ROLE`; a teammate whose role is still unknown is asked again on its next message at
//!   most once a second (FutRob asked only once, which a lossy radio defeats); a status report (ball in sight and distance) goes out every second, which also
//!   keeps teammates' TTL fresh and lets a robot that missed an announcement discover the
//!   sender and ask its role.
//! - **Vision stub:** after its last scene the last scene stays; object tokens ignore case.
#![warn(missing_docs)]

pub mod actions;
pub mod body;
pub mod brain;
pub mod config;
pub mod log;
pub mod motion;
pub mod msg;
pub mod names;
pub mod rules;
pub mod sighting;
pub mod trajectory;
pub mod world;

pub use actions::{ActionHandler, BodyStatus, Fall};
pub use brain::{Brain, BrainOutput};
pub use config::{BrainParams, ConfigError, IniConfig, RangeCalibration, VisionStub};
pub use motion::MotionTable;
pub use msg::{Message, Param, Role, SimRadio, TeamComm, BROADCAST};
pub use names::{Action, ActionKind, Family, ObjectKind, Predicate};
pub use rules::{PredicateSet, RuleSet, RulesError};
pub use sighting::Sighting;
pub use trajectory::{Trajectory, Vec2};
pub use world::WorldModel;
