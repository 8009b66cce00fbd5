//! Humanoids on the KidSize field, in-process: actions move the body, kicks roll the ball
//! 100–110 cm only when it is within reach, saves stop what the keeper's body covers.

use simrob_protocol::EntityId;
use simrob_soccer::field::BALL_ENTITY;
use simrob_soccer::{ActionStatus, KidSizeField, Pose2, Team};
use simrob_world::{HumanoidSpec, World, WorldConfig};

fn scene() -> World {
    World::kidsize(WorldConfig::default(), &KidSizeField::default()).unwrap()
}

fn humanoid(w: &mut World, id: u32, team: Team, x: f64, y: f64, heading: f64) {
    w.create_humanoid(&HumanoidSpec {
        entity_id: EntityId(id),
        team,
        pose: Pose2 { x, y, heading },
        profile: "ideal".into(),
        seed: None,
        material: None,
    })
    .unwrap();
}

fn act(w: &mut World, id: u32, name: &str, params: &[(&str, &str)]) -> String {
    let p: Vec<(String, String)> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    w.humanoid_action(EntityId(id), name, &p).unwrap()
}

fn run_until_idle(w: &mut World, id: u32, max_s: f64) {
    let n = (max_s / w.iteration_seconds()) as usize;
    for _ in 0..n {
        w.advance();
        let h = w.humanoid(EntityId(id)).unwrap();
        if h.action_state().map(|s| s.status) != Some(ActionStatus::Running) && h.is_idle() {
            return;
        }
    }
    panic!("robot {id} still busy after {max_s} s");
}

fn ball(w: &World) -> [f64; 3] {
    w.body_state(BALL_ENTITY, 0).unwrap().position
}

fn run(w: &mut World, seconds: f64) {
    let n = (seconds / w.iteration_seconds()).round() as usize;
    for _ in 0..n {
        w.advance();
    }
}

#[test]
fn walk_turn_and_lateral_steps_move_the_body() {
    let mut w = scene();
    humanoid(&mut w, 20, Team::Cyan, -2.0, 1.0, 0.0);
    act(&mut w, 20, "walk", &[("distance", "30")]);
    run_until_idle(&mut w, 20, 5.0);
    let p = w.humanoid(EntityId(20)).unwrap().pose();
    assert!(
        (p.x - -1.7).abs() < 1e-6 && (p.y - 1.0).abs() < 1e-6,
        "{p:?}"
    );
    act(&mut w, 20, "walk", &[("distance", "7")]);
    run_until_idle(&mut w, 20, 5.0);
    let p = w.humanoid(EntityId(20)).unwrap().pose();
    assert!((p.x - -1.64).abs() < 1e-6, "walk 7 moves 6 cm: {p:?}");
    act(&mut w, 20, "turn", &[("angle", "45")]);
    run_until_idle(&mut w, 20, 5.0);
    let p = w.humanoid(EntityId(20)).unwrap().pose();
    assert!((p.heading.to_degrees() + 40.0).abs() < 1e-6, "{p:?}");
    act(&mut w, 20, "walkLeft", &[("distance", "8")]);
    run_until_idle(&mut w, 20, 5.0);
    let q = w.humanoid(EntityId(20)).unwrap().pose();
    let moved = (q.x - p.x).hypot(q.y - p.y);
    assert!((moved - 0.08).abs() < 1e-6, "{q:?}");
    // The trunk body follows the model.
    let trunk = w.body_state(EntityId(20), 0).unwrap().position;
    assert!((trunk[0] - q.x).abs() < 1e-4 && (trunk[1] - q.y).abs() < 1e-4);
}

#[test]
fn a_kick_rolls_a_ball_in_reach_100_to_110_cm_and_misses_one_out_of_reach() {
    let mut w = scene();
    // Ball on the centre spot; the right foot (y − 4 cm) 2 cm behind it.
    humanoid(&mut w, 20, Team::Cyan, -0.14, 0.04, 0.0);
    run(&mut w, 0.5);
    let start = ball(&w);
    act(&mut w, 20, "kickRight", &[]);
    run(&mut w, 6.0);
    let end = ball(&w);
    let rolled = (end[0] - start[0]).hypot(end[1] - start[1]);
    assert!((1.0..=1.10).contains(&rolled), "rolled {rolled} m");
    let v = w.body_state(BALL_ENTITY, 0).unwrap().linear_velocity;
    assert!(v[0].hypot(v[1]) < 1e-3, "the ball stops: {v:?}");

    // Out of reach: 15 cm between toe and ball.
    let mut w = scene();
    humanoid(&mut w, 20, Team::Cyan, -0.27, 0.04, 0.0);
    run(&mut w, 0.5);
    let start = ball(&w);
    act(&mut w, 20, "kickRight", &[]);
    run(&mut w, 3.0);
    let end = ball(&w);
    let moved = (end[0] - start[0]).hypot(end[1] - start[1]);
    assert!(moved < 1e-3, "the ball moved {moved} m");
}

#[test]
fn two_feet_striking_one_ball_at_once_add_their_kicks_whatever_the_ids() {
    // Two robots at right angles, each with its right foot 2 cm behind the ball on the centre
    // spot (one facing +X, one facing +Y), kick in the same iteration: the ball leaves between
    // their headings, whichever robot the world steps first (the later one used to win).
    let mut ends = Vec::new();
    for (a, b) in [(20, 21), (21, 20)] {
        let mut w = scene();
        humanoid(&mut w, a, Team::Cyan, -0.14, 0.04, 0.0);
        humanoid(
            &mut w,
            b,
            Team::Magenta,
            -0.04,
            -0.14,
            std::f64::consts::FRAC_PI_2,
        );
        run(&mut w, 0.5);
        let start = ball(&w);
        act(&mut w, a, "kickRight", &[]);
        act(&mut w, b, "kickRight", &[]);
        run(&mut w, 4.0);
        let end = ball(&w);
        let (dx, dy) = (end[0] - start[0], end[1] - start[1]);
        let heading = dy.atan2(dx).to_degrees();
        assert!(dx.hypot(dy) > 1.0, "ids {a}, {b}: rolled {}", dx.hypot(dy));
        assert!(
            (heading - 45.0).abs() < 3.0,
            "ids {a}, {b}: left at {heading}°"
        );
        ends.push(end);
    }
    assert_eq!(ends[0], ends[1], "the same whichever id is stepped first");
}

/// Rolls the ball from 1.3 m in front of a keeper, `offset` m to its side (+ = its left), and
/// says whether it crossed the keeper's line.
fn shot_passes(save: Option<&str>, offset: f64) -> bool {
    let mut w = scene();
    // Keeper on its goal line region facing +X; ball 1.3 m ahead rolling towards it.
    humanoid(&mut w, 30, Team::Cyan, -4.2, 0.0, 0.0);
    w.apply_entity(&simrob_protocol::EntityRequest::SetEntityPosition {
        entity_id: BALL_ENTITY,
        position: [-2.9, offset, 0.05],
    })
    .unwrap();
    run(&mut w, 0.2);
    let v = 2.0;
    w.set_entity_velocity(BALL_ENTITY, [-v, 0.0, 0.0], [0.0, -v / 0.05, 0.0])
        .unwrap();
    if let Some(s) = save {
        act(&mut w, 30, s, &[]);
    }
    run(&mut w, 2.0);
    ball(&w)[0] < -4.2 - 0.1
}

#[test]
fn a_save_covers_its_side_and_only_that() {
    // Standing: the body covers about its own width.
    assert!(!shot_passes(None, 0.0));
    assert!(shot_passes(None, 0.25));
    // Diving to its right (−Y) stops a ball 25 cm to the right but not one 25 cm to the left.
    assert!(!shot_passes(Some("saveRight"), -0.25));
    assert!(shot_passes(Some("saveRight"), 0.25));
    assert!(!shot_passes(Some("saveLeft"), 0.30));
    // Beyond the stretched arm.
    assert!(shot_passes(Some("saveLeft"), 0.55));
}

#[test]
fn robots_do_not_walk_through_each_other_or_posts() {
    let mut w = scene();
    humanoid(&mut w, 20, Team::Cyan, 0.0, 2.0, 0.0);
    humanoid(&mut w, 21, Team::Magenta, 0.5, 2.0, std::f64::consts::PI);
    act(&mut w, 20, "walk", &[("distance", "60")]);
    run_until_idle(&mut w, 20, 10.0);
    let a = w.humanoid(EntityId(20)).unwrap().pose();
    let b = w.humanoid(EntityId(21)).unwrap().pose();
    assert!((a.x - b.x).hypot(a.y - b.y) >= 0.2 - 1e-9, "{a:?} {b:?}");
    assert!(a.x > 0.2, "it walked until it met the other robot: {a:?}");
    // A goal post at (4.5, 0.95).
    humanoid(&mut w, 22, Team::Cyan, 4.0, 0.95, 0.0);
    act(&mut w, 22, "walk", &[("distance", "100")]);
    run_until_idle(&mut w, 22, 10.0);
    let c = w.humanoid(EntityId(22)).unwrap().pose();
    assert!(4.5 - c.x >= 0.15 - 1e-9, "{c:?}");
}

#[test]
fn robots_in_contact_slide_along_each_other_but_not_into_each_other() {
    // Two opponents face to face at a ball, 20 cm apart (touching), a little offset, both
    // side-stepping the same way: each step slides along the other robot and goes on.
    let mut w = scene();
    let deg = |d: f64| d.to_radians();
    humanoid(&mut w, 20, Team::Cyan, 0.372, 0.225, deg(-10.4));
    humanoid(&mut w, 21, Team::Magenta, 0.569, 0.190, deg(177.7));
    act(&mut w, 20, "walkLeft", &[("distance", "8")]);
    act(&mut w, 21, "walkRight", &[("distance", "8")]);
    run_until_idle(&mut w, 20, 5.0);
    run_until_idle(&mut w, 21, 5.0);
    let a = w.humanoid(EntityId(20)).unwrap().pose();
    let b = w.humanoid(EntityId(21)).unwrap().pose();
    assert!((a.x - 0.372).hypot(a.y - 0.225) > 0.07, "{a:?}");
    assert!((b.x - 0.569).hypot(b.y - 0.190) > 0.07, "{b:?}");
    // Sliding past each other, the two 20 cm bodies overlap by a centimetre or two at most.
    assert!((a.x - b.x).hypot(a.y - b.y) > 0.18, "{a:?} {b:?}");
    // Shoulder to shoulder at a ball, a walk ahead that closes on the other robot at 65° off
    // its line slides along it and gets most of the way.
    let mut w = scene();
    humanoid(&mut w, 20, Team::Cyan, -0.366, 0.847, deg(99.0));
    humanoid(&mut w, 21, Team::Magenta, -0.558, 0.903, deg(66.8));
    act(&mut w, 20, "walk", &[("distance", "12")]);
    run_until_idle(&mut w, 20, 5.0);
    let a = w.humanoid(EntityId(20)).unwrap().pose();
    assert!((a.x + 0.366).hypot(a.y - 0.847) > 0.08, "{a:?}");
    assert!((a.x + 0.558).hypot(a.y - 0.903) > 0.19, "{a:?}");
    // A side step straight into a robot at its side stops where it is.
    let mut w = scene();
    humanoid(&mut w, 20, Team::Cyan, 0.0, 2.0, 0.0);
    humanoid(&mut w, 21, Team::Magenta, 0.0, 1.8, 0.0);
    act(&mut w, 20, "walkRight", &[("distance", "8")]);
    run_until_idle(&mut w, 20, 5.0);
    let a = w.humanoid(EntityId(20)).unwrap().pose();
    assert!((a.x - 0.0).hypot(a.y - 2.0) < 1e-9, "{a:?}");
}

#[test]
fn bad_actions_are_refused_and_change_nothing() {
    let mut w = scene();
    humanoid(&mut w, 20, Team::Cyan, 0.0, 1.0, 0.0);
    let before = format!("{:?}", w.humanoid(EntityId(20)));
    for (name, params) in [
        ("jump", vec![]),
        ("turnHeadVertically", vec![("angle", "10")]),
        ("turnHeadHorizontally", vec![("angle", "61")]),
        ("walk", vec![("distance", "-1")]),
        ("walk", vec![("speed", "3")]),
        ("frontGetUp", vec![]),
    ] {
        let p: Vec<(String, String)> = params
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert!(
            w.humanoid_action(EntityId(20), name, &p).is_err(),
            "{name} {params:?}"
        );
    }
    assert!(
        w.humanoid_action(EntityId(2), "walk", &[]).is_err(),
        "the ball is not a humanoid"
    );
    assert!(w.humanoid_action(EntityId(99), "walk", &[]).is_err());
    assert_eq!(before, format!("{:?}", w.humanoid(EntityId(20))));
}

#[test]
fn the_bundled_kidsize_scenario_is_the_rust_scene() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/soccer/");
    let keys = simrob_protocol::CommandKeys::default();
    let xml = std::fs::read(format!("{root}kidsize.xml")).unwrap();
    let from_file: Vec<simrob_protocol::ControlRequest> =
        simrob_protocol::decode_datagram(&xml, &keys)
            .into_iter()
            .map(|r| match r.unwrap() {
                simrob_protocol::Request::Control { request, .. } => request,
                other => panic!("{other:?}"),
            })
            .collect();
    assert_eq!(from_file, KidSizeField::default().scene_requests());
    // And the teams load on it: six humanoids, three a side.
    let mut w = scene();
    let teams = std::fs::read(format!("{root}teams-3v3.xml")).unwrap();
    for r in simrob_protocol::decode_datagram(&teams, &keys) {
        w.apply(&r.unwrap()).unwrap();
    }
    let ids: Vec<u32> = w.humanoid_ids().map(|id| id.0).collect();
    assert_eq!(ids, vec![21, 22, 23, 31, 32, 33]);
    let cyan = ids
        .iter()
        .filter(|i| w.humanoid(EntityId(**i)).unwrap().team == Team::Cyan)
        .count();
    assert_eq!(cyan, 3);
}

#[test]
fn a_saved_scene_reloads_with_the_robots_where_they_stood() {
    let mut w = scene();
    humanoid(&mut w, 20, Team::Magenta, 1.0, -1.0, 0.5);
    act(&mut w, 20, "walk", &[("distance", "24")]);
    run_until_idle(&mut w, 20, 5.0);
    let before = w.humanoid(EntityId(20)).unwrap().pose();
    let xml = w.save_xml();
    let mut loaded = World::new(WorldConfig::default());
    loaded.load_xml(&xml).unwrap();
    let after = loaded.humanoid(EntityId(20)).unwrap().pose();
    assert!((after.x - before.x).abs() < 1e-9 && (after.y - before.y).abs() < 1e-9);
    assert!((after.heading - before.heading).abs() < 1e-9);
    assert_eq!(loaded.humanoid(EntityId(20)).unwrap().team, Team::Magenta);
    // And it keeps working.
    act(&mut loaded, 20, "turn", &[("angle", "20")]);
    run_until_idle(&mut loaded, 20, 5.0);
}

#[test]
fn a_brain_is_told_once_of_every_action_that_ends() {
    use simrob_soccer::camera::CameraProfile;
    use simrob_world::brain::BrainView;
    let mut w = scene();
    humanoid(&mut w, 21, Team::Cyan, -2.0, 1.0, 0.0);
    let mut brain = BrainView::new(21, CameraProfile::ideal(), 1);
    let mut ended = Vec::new();
    let mut look = |w: &World, brain: &mut BrainView| {
        let b = brain.view(w.iteration(), &w.soccer_snapshot()).unwrap();
        for e in b.state.ended {
            ended.push((e.seq, e.name, e.status));
        }
    };
    look(&w, &mut brain);
    // Replaced before it moved, replaced mid-walk, placed mid-turn, done.
    act(&mut w, 21, "walk", &[("distance", "30")]);
    act(&mut w, 21, "turn", &[("angle", "-40")]);
    run(&mut w, 0.5);
    look(&w, &mut brain);
    act(&mut w, 21, "walk", &[("distance", "30")]);
    run(&mut w, 1.0);
    look(&w, &mut brain);
    w.place_humanoid(EntityId(21), Pose2::default()).unwrap();
    w.advance();
    look(&w, &mut brain);
    act(&mut w, 21, "walkLeft", &[("distance", "4")]);
    run(&mut w, 2.0);
    look(&w, &mut brain);
    look(&w, &mut brain);
    let s = |x: &str| x.to_string();
    assert_eq!(
        ended,
        vec![
            (1, s("walk"), s("interrupted")),
            (2, s("turn"), s("interrupted")),
            (3, s("walk"), s("interrupted")),
            (4, s("walkLeft"), s("done")),
        ]
    );
}
