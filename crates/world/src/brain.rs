//! What a humanoid's brain receives: its proprioception every broadcast and its head camera's
//! frames (`simrob_protocol::humanoid::BrainBroadcast`), made from the world's humanoids and
//! balls by [`BrainView`]. The server's `Humanoid_Brain` agent filter is a thin wrapper around
//! it; in-process runs use it directly.

use simrob_protocol::humanoid::{
    ActionReport, BrainBroadcast, CameraMessage, HumanoidState, ObjectSeen,
};
use simrob_soccer::camera::{Camera, CameraFrame, CameraProfile, RobotView, SceneView};
use simrob_soccer::{ActionState, KidSizeField, SimRng};

/// One humanoid as a snapshot carries it: what the cameras need and what its brain is told.
#[derive(Debug, Clone, PartialEq)]
pub struct HumanoidSnapshot {
    pub view: RobotView,
    /// The running or last action.
    pub action: Option<ActionState>,
}

/// The humanoid part of a world snapshot: time, humanoids, balls' centres.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SoccerSnapshot {
    /// Simulated seconds.
    pub time: f64,
    pub humanoids: Vec<HumanoidSnapshot>,
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
            .map(|v| HumanoidSnapshot {
                view: *v,
                action: self.humanoid(v.id).and_then(|h| h.action_state().cloned()),
            })
            .collect();
        SoccerSnapshot {
            time: scene.time,
            humanoids,
            balls: scene.balls,
        }
    }
}

/// A humanoid's proprioception in FutRob's units (degrees).
pub fn humanoid_state(h: &HumanoidSnapshot, time: f64) -> HumanoidState {
    HumanoidState {
        entity_id: h.view.id,
        time,
        head_pan: h.view.head.0.to_degrees(),
        head_tilt: h.view.head.1.to_degrees(),
        posture: h.view.posture.as_str().to_string(),
        action: h.action.as_ref().map(|a| ActionReport {
            seq: a.seq,
            status: a.status.as_str().to_string(),
            name: a.action.name().to_string(),
            params: a
                .action
                .params()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
        }),
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
    pub robot: u32,
    camera: Camera,
    field: KidSizeField,
}

impl BrainView {
    /// The view of robot `robot` with camera `profile`, noise seeded by `seed`.
    pub fn new(robot: u32, profile: CameraProfile, seed: u64) -> Self {
        BrainView {
            robot,
            camera: Camera::new(robot, profile, SimRng::for_stream(seed, robot as u64)),
            field: KidSizeField::default(),
        }
    }

    /// What the brain receives at `iteration`: `None` when its robot does not exist.
    pub fn view(&mut self, iteration: u64, s: &SoccerSnapshot) -> Option<BrainBroadcast> {
        let me = s.humanoids.iter().find(|h| h.view.id == self.robot)?;
        let state = humanoid_state(me, s.time);
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
