//! The FutRob brain driving simrob's humanoids in-process: the KidSize field with its
//! physics, the humanoid bodies and the head cameras (`simrob-world`), stepped with simulated
//! time — the same brain and body link `simrob soccer player` runs over the network.

use simrob_futrob::body::{BodyLink, BodyReport};
use simrob_futrob::rules::RuleSet;
use simrob_futrob::{ActionKind, Brain, BrainParams, Fall, ObjectKind, Role, Sighting};
use simrob_protocol::humanoid::BrainBroadcast;
use simrob_protocol::{EntityId, EntityRequest};
use simrob_soccer::camera::CameraProfile;
use simrob_soccer::{KidSizeField, Pose2, Team};
use simrob_world::brain::BrainView;
use simrob_world::{HumanoidSpec, World, WorldConfig};

fn rules(name: &str) -> RuleSet {
    let path = format!(
        "{}/../../scenarios/soccer/rules/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    RuleSet::parse(&std::fs::read_to_string(&path).unwrap(), name).unwrap()
}

/// One robot: its brain, its eyes (the world's brain view) and the link to its body.
struct Robot {
    entity: u32,
    brain: Brain,
    eyes: BrainView,
    link: BodyLink,
    started: Vec<ActionKind>,
    saw_ball: u32,
    refused: u32,
}

impl Robot {
    fn new(entity: u32, id: i32, role: Role, rules_file: &str, seed: u64) -> Robot {
        let mut brain = Brain::new(id, role, rules(rules_file), BrainParams::default());
        brain.start();
        Robot {
            entity,
            brain,
            eyes: BrainView::new(entity, CameraProfile::paper(), seed),
            link: BodyLink::default(),
            started: Vec::new(),
            saw_ball: 0,
            refused: 0,
        }
    }

    fn tick(&mut self, world: &mut World) {
        let Some(b): Option<BrainBroadcast> =
            self.eyes.view(world.iteration(), &world.soccer_snapshot())
        else {
            return;
        };
        let now = (b.state.time * 1000.0).round() as u64;
        let s = &b.state;
        self.link.report(
            now,
            &BodyReport {
                head_pan_deg: s.head_pan,
                head_tilt_deg: s.head_tilt,
                fallen: match s.posture.as_str() {
                    "fallenFront" => Some(Fall::Front),
                    "fallenBack" => Some(Fall::Back),
                    _ => None,
                },
                action: s.action.as_ref().map(|a| (a.seq, a.status == "running")),
            },
        );
        if let Some(c) = &b.camera {
            let frame: Vec<Sighting> = c
                .objects
                .iter()
                .filter_map(|o| {
                    ObjectKind::from_token(&o.kind).map(|k| Sighting::new(k, o.angle, o.distance))
                })
                .collect();
            self.brain.observe(now, &frame);
            if self.brain.world().in_sight(ObjectKind::Ball) {
                self.saw_ball += 1;
            }
        }
        let out = self.brain.step(now, &self.link.status());
        if let Some(a) = out.started {
            self.started.push(a.kind);
        }
        self.link.command(&out.commands);
        if let Some(a) = self.link.poll_request(now) {
            let params: Vec<(String, String)> = match (a.param, a.kind.params().first()) {
                (Some(v), Some(p)) => vec![(p.name.to_string(), v.to_string())],
                _ => Vec::new(),
            };
            if world
                .humanoid_action(EntityId(self.entity), a.kind.name(), &params)
                .is_err()
            {
                self.link.refused();
                self.refused += 1;
            }
        }
    }
}

#[test]
fn the_field_player_kicks_towards_the_goal_and_the_keeper_tracks_the_ball() {
    let mut world = World::kidsize(WorldConfig::default(), &KidSizeField::default()).unwrap();
    // The magenta goal is at +X (x = 4.5 m). The ball on the penalty mark (1.8 m out), the
    // cyan kicker 40 cm behind it turned 30° away, the magenta keeper 30 cm in front of its
    // goal line facing the field.
    world
        .apply_entity(&EntityRequest::SetEntityPosition {
            entity_id: EntityId(2),
            position: [2.7, 0.0, 0.05],
        })
        .unwrap();
    for (id, team, pose) in [
        (
            22,
            Team::Cyan,
            Pose2 {
                x: 2.3,
                y: 0.05,
                heading: 30f64.to_radians(),
            },
        ),
        (
            31,
            Team::Magenta,
            Pose2 {
                x: 4.2,
                y: 0.0,
                heading: std::f64::consts::PI,
            },
        ),
    ] {
        world
            .create_humanoid(&HumanoidSpec {
                entity_id: EntityId(id),
                team,
                pose,
                profile: "ideal".into(),
                seed: Some(7),
                material: None,
            })
            .unwrap();
    }
    let mut kicker = Robot::new(22, 2, Role::FieldPlayer, "field_player.xml", 1);
    let mut keeper = Robot::new(31, 1, Role::Goalkeeper, "goalkeeper.xml", 2);
    let ball = |w: &World| w.soccer_snapshot().balls[0];
    let start = ball(&world);
    let mut kicked_at = None;
    for _ in 0..12_000 {
        // 120 simulated seconds at most
        world.advance();
        kicker.tick(&mut world);
        keeper.tick(&mut world);
        let b = ball(&world);
        if kicked_at.is_none() && (b[0] - start[0]).hypot(b[1] - start[1]) > 0.2 {
            kicked_at = Some(world.iteration());
        }
        if kicked_at.is_some_and(|k| world.iteration() > k + 500) {
            break;
        }
    }
    let end = ball(&world);
    assert!(
        kicked_at.is_some(),
        "the ball never moved; kicker actions {:?}, saw the ball {} frames, refused {}",
        kicker.started,
        kicker.saw_ball,
        kicker.refused
    );
    assert!(
        kicker.started.contains(&ActionKind::KickBall),
        "{:?}",
        kicker.started
    );
    // Towards the goal: forward along +X and aimed between the posts' extension.
    let (dx, dy) = (end[0] - start[0], end[1] - start[1]);
    assert!(
        dx > 0.3,
        "the ball went {dx:.2} m along X, {dy:.2} m across"
    );
    let y_at_goal = start[1] + dy / dx * (4.5 - start[0]);
    assert!(
        y_at_goal.abs() < 0.9 + 0.3,
        "aimed at y = {y_at_goal:.2} m on the goal line"
    );
    // The keeper saw the ball and followed it with its rules (look at it, save when it came).
    assert!(keeper.saw_ball > 0);
    assert!(
        keeper
            .started
            .iter()
            .any(|a| matches!(a, ActionKind::LookAtBall | ActionKind::Save)),
        "keeper actions {:?}",
        keeper.started
    );
}
