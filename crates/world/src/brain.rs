//! Humanoid soccer in-process: build a KidSize scene, add humanoids, step it, read what each
//! robot's camera sees — no sockets, no server, as fast as the physics goes (case studies run
//! thousands of trials this way).
//!
//! What a humanoid's brain receives — its proprioception every broadcast and its head
//! camera's frames (`simrob_protocol::humanoid::BrainBroadcast`) — is made by [`BrainView`]
//! from a [`SoccerSnapshot`] of the world. The server's `Humanoid_Brain` agent filter wraps
//! the same code.
//!
//! ```
//! use simrob_soccer::camera::CameraProfile;
//! use simrob_soccer::{KidSizeField, Pose2, Team};
//! use simrob_world::brain::BrainView;
//! use simrob_world::{HumanoidSpec, World, WorldConfig};
//! use simrob_protocol::EntityId;
//!
//! // The field, the ball on the centre spot, the carpet's rolling resistance; initialized.
//! let mut world = World::kidsize(WorldConfig::default(), &KidSizeField::default())?;
//! // A cyan striker 20 cm behind the ball, facing the magenta goal (+X); exact motions.
//! world.create_humanoid(&HumanoidSpec {
//!     entity_id: EntityId(21),
//!     team: Team::Cyan,
//!     pose: Pose2 { x: -0.2, y: 0.04, heading: 0.0 },
//!     profile: "ideal".into(), // or "paper": FutRob's motion noise and falls
//!     seed: Some(7),           // its noise stream (one per trial)
//!     material: None,
//! })?;
//! let mut eyes = BrainView::new(21, CameraProfile::paper(), 7);
//! // Actions by FutRob's names and parameters (cm, degrees).
//! world.humanoid_action(EntityId(21), "turnHeadVertically", &[("angle".into(), "-40".into())])?;
//! let mut ball_seen = 0;
//! for _ in 0..300 {
//!     world.advance(); // 10 ms: humanoids move, the ball rolls
//!     let view = eyes.view(world.iteration(), &world.soccer_snapshot()).unwrap();
//!     if let Some(frame) = view.camera { // 4 Hz with the paper camera
//!         ball_seen += frame.objects.iter().filter(|o| o.kind == "BALL").count();
//!     }
//! }
//! assert!(ball_seen > 0);
//! world.humanoid_action(EntityId(21), "walk", &[("distance".into(), "6".into())])?;
//! let h = world.humanoid(EntityId(21)).unwrap(); // pose, head, posture, action state
//! assert_eq!(h.action_state().unwrap().action.name(), "walk");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Speed: `cargo run --release -p simrob-world --example kidsize_bench` steps a 3-vs-3 scene
//! with six brain views and prints simulated seconds per second. Each `World` is independent:
//! run trials on several threads, one world each.

use simrob_math::Xoshiro256StarStar;
use simrob_protocol::humanoid::{
    ActionReport, BrainBroadcast, CameraMessage, HumanoidState, ObjectSeen,
};
use simrob_protocol::EntityId;
use simrob_soccer::camera::{Camera, CameraFrame, CameraProfile, RobotView, SceneView};
use simrob_soccer::{ActionState, KidSizeField};

/// One humanoid as a snapshot carries it: what the cameras need and what its brain is told.
#[derive(Debug, Clone, PartialEq)]
pub struct HumanoidSnapshot {
    /// What a camera sees of it: id, team, pose, head, posture.
    pub view: RobotView,
    /// The running or last action.
    pub action: Option<ActionState>,
    /// The last actions that ended (at most `simrob_soccer::humanoid::ENDED_KEPT`), oldest
    /// first, each numbered by how many actions had ended with it
    /// (`simrob_soccer::Humanoid::ended_since`).
    pub ended: Vec<(u64, ActionState)>,
}

/// The humanoid part of a world snapshot: time, humanoids, balls' centres.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SoccerSnapshot {
    /// Simulated seconds.
    pub time: f64,
    /// Every humanoid.
    pub humanoids: Vec<HumanoidSnapshot>,
    /// Every ball's centre in world coordinates, metres.
    pub balls: Vec<[f64; 3]>,
}

impl SoccerSnapshot {
    /// The scene the cameras look at, on `field`.
    pub fn scene(&self, field: &KidSizeField) -> SceneView {
        SceneView {
            time: self.time,
            field: field.clone(),
            balls: self.balls.clone(),
            robots: self.humanoids.iter().map(|h| h.view).collect(),
        }
    }
}

impl<P: simrob_physics::PhysicsBackend + Default> crate::World<P> {
    /// The humanoids and balls now (empty lists when there are none).
    pub fn soccer_snapshot(&self) -> SoccerSnapshot {
        let scene = self.scene_view(&KidSizeField::default());
        let humanoids = scene
            .robots
            .iter()
            .map(|v| {
                let h = self.humanoid(EntityId(v.id));
                HumanoidSnapshot {
                    view: *v,
                    action: h.and_then(|h| h.action_state().cloned()),
                    ended: h
                        .map(|h| {
                            let first = h
                                .ended_total()
                                .saturating_sub(simrob_soccer::humanoid::ENDED_KEPT as u64);
                            (first + 1..).zip(h.ended_since(first).cloned()).collect()
                        })
                        .unwrap_or_default(),
                }
            })
            .collect();
        SoccerSnapshot {
            time: scene.time,
            humanoids,
            balls: scene.balls,
        }
    }
}

fn report(a: &ActionState) -> ActionReport {
    ActionReport {
        seq: a.seq,
        status: a.status.as_str().to_string(),
        name: a.action.name().to_string(),
        params: a
            .action
            .params()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    }
}

/// A humanoid's proprioception in FutRob's units (degrees), with no ended actions (a
/// [`BrainView`] adds those its brain has not been told of).
pub fn humanoid_state(h: &HumanoidSnapshot, time: f64) -> HumanoidState {
    HumanoidState {
        entity_id: EntityId(h.view.id),
        time,
        head_pan: h.view.head.0.to_degrees(),
        head_tilt: h.view.head.1.to_degrees(),
        posture: h.view.posture.as_str().to_string(),
        action: h.action.as_ref().map(report),
        ended: Vec::new(),
    }
}

/// A camera frame as the wire carries it.
pub fn camera_message(f: &CameraFrame) -> CameraMessage {
    CameraMessage {
        time: f.time,
        objects: f
            .objects
            .iter()
            .map(|o| ObjectSeen {
                kind: o.kind.as_str().to_string(),
                angle: o.angle,
                distance: o.distance,
            })
            .collect(),
    }
}

/// One brain's view: its robot's camera (rate and noise stream of its own) and field.
#[derive(Debug, Clone, PartialEq)]
pub struct BrainView {
    /// The humanoid whose camera it is (its entity id).
    pub robot: u32,
    camera: Camera,
    field: KidSizeField,
    /// How many of its robot's actions had ended at the last view (`None` before the first).
    ended_seen: Option<u64>,
}

impl BrainView {
    /// The view of robot `robot` with camera `profile`, noise seeded by `seed`.
    pub fn new(robot: u32, profile: CameraProfile, seed: u64) -> Self {
        BrainView {
            robot,
            camera: Camera::new(
                robot,
                profile,
                Xoshiro256StarStar::for_stream(seed, robot as u64),
            ),
            field: KidSizeField::default(),
            ended_seen: None,
        }
    }

    /// What the brain receives at `iteration`: `None` when its robot does not exist. Its
    /// state lists the actions that ended since the previous view (none at the first).
    pub fn view(&mut self, iteration: u64, s: &SoccerSnapshot) -> Option<BrainBroadcast> {
        let me = s.humanoids.iter().find(|h| h.view.id == self.robot)?;
        let mut state = humanoid_state(me, s.time);
        // The actions that ended since the previous view; from the first view on (what ended
        // before it is history this brain was not there for).
        let total = me.ended.last().map_or(0, |(n, _)| *n);
        if let Some(seen) = self.ended_seen {
            state.ended = me
                .ended
                .iter()
                // (A robot made again since counts from zero again.)
                .filter(|(n, _)| *n > seen || total < seen)
                .map(|(_, a)| report(a))
                .collect();
        }
        self.ended_seen = Some(total);
        let camera = self
            .camera
            .frame(&s.scene(&self.field))
            .map(|f| camera_message(&f));
        Some(BrainBroadcast {
            iteration,
            state,
            camera,
        })
    }
}
