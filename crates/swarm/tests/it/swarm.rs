//! End-to-end behaviour of the swarm layer: scenarios built from text, run to the end.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use simrob_swarm::drones::{Avoidance, Drone, DroneController, DroneState};
use simrob_swarm::ecs::{Proximity, SwarmPose, Velocity};
use simrob_swarm::grid::GridLayout;
use simrob_swarm::grid::SpatialGrid;
use simrob_swarm::nav::NavMap;
use simrob_swarm::scenario::{Overrides, Scenario};
use simrob_swarm::script::Script;
use simrob_swarm::script::ScriptState;
use simrob_swarm::seer::{JsonLinesRecorder, MemoryConsumer, Seer};
use simrob_swarm::systems::{CollisionSystem, MovementSystem, ProximitySystem};
use simrob_swarm::{Event, Payload, Shape, SimConfig, Simulation, SwarmWorld, Tag};

fn scenario(text: &str) -> Scenario {
    Scenario::from_toml_str(text, Path::new(".")).expect("scenario parses")
}

fn build(text: &str) -> Simulation {
    scenario(text)
        .build(&Overrides::default())
        .expect("scenario builds")
}

const CORRIDOR: &str = r#"
name = "corridor"
fps = 10
duration = 60
[world]
width = 300
height = 100
nav = { merge_radius = 2, max_off_path = 20, extend = false }
paths = [[[20, 50], [150, 50], [280, 50]]]
pois = { left = [20, 50], middle = [150, 50], right = [280, 50], island = [150, 5] }
"#;

fn with_robot(extra: &str) -> String {
    format!("{CORRIDOR}\n[[entities]]\ntype = \"robot\"\nname = \"r\"\nposition = [20, 50]\nradius = 4\n{extra}")
}

#[test]
fn scripts_block_on_events_and_resume() {
    let text = with_robot(r#"components = { Script = ["WaitFor Ping", "Go right"] }"#);
    let mut sim = build(&text);
    let r = sim.world().find("r").unwrap();
    sim.schedule(3.0, Event::about(Tag::new("Ping"), r));
    sim.run_until(2.0);
    let s = Script::of(sim.world(), r).unwrap();
    assert_eq!(s.state, ScriptState::Blocked);
    assert_eq!(s.waiting, vec![Tag::new("Ping")]);
    assert_eq!(sim.world().pose.get(r).unwrap().x, 20.0, "still waiting");
    sim.run_until(4.0);
    let s = Script::of(sim.world(), r).unwrap();
    assert_eq!(
        (s.state, s.pc),
        (ScriptState::Blocked, 1),
        "now going right"
    );
    assert!(sim.world().pose.get(r).unwrap().x > 20.0);
    let summary = sim.run();
    assert_eq!(summary.scripts_done, 1);
    assert!(
        summary.killed,
        "every script done: the kill switch ends the run"
    );
    let p = sim.world().pose.get(r).unwrap();
    assert!((p.x - 280.0).abs() < 1e-6 && (p.y - 50.0).abs() < 1e-6);
    assert!(summary.simulated_seconds < 20.0);
}

#[test]
fn error_handlers_run_and_the_default_handler_aborts() {
    // The island POI is more than max_off_path from any map-path: Go island is unreachable.
    let text = with_robot(
        r#"components = { Script = { instructions = ["Go island", "Go right"], handlers = { Unreachable = ["Log no way to the island", "Skip"] } } }"#,
    );
    let mut sim = build(&text);
    let log = Arc::new(Mutex::new(MemoryConsumer::default()));
    sim.add_system(Box::new(Seer::new("t", 1.0, vec![Box::new(log.clone())])));
    let summary = sim.run();
    assert_eq!((summary.scripts_done, summary.scripts_failed), (1, 0));
    let r = sim.world().find("r").unwrap();
    assert!(
        (sim.world().pose.get(r).unwrap().x - 280.0).abs() < 1e-6,
        "went right after the handler"
    );
    let texts: Vec<String> = log
        .lock()
        .unwrap()
        .logs
        .iter()
        .map(|l| l.text.clone())
        .collect();
    assert!(
        texts.iter().any(|t| t == "no way to the island"),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.contains("Unreachable")), "{texts:?}");

    // Without a handler the default (Abort) ends the script as failed.
    let text = with_robot(r#"components = { Script = ["Go island", "Go right"] }"#);
    let mut sim = build(&text);
    let summary = sim.run();
    assert_eq!((summary.scripts_done, summary.scripts_failed), (0, 1));
    let r = sim.world().find("r").unwrap();
    assert!(Script::of(sim.world(), r).unwrap().failed);
    assert_eq!(sim.world().pose.get(r).unwrap().x, 20.0);

    // A scenario-wide default handler replaces Abort; Retry re-runs the failed instruction.
    let text = with_robot(
        r#"components = { Script = { instructions = ["Grab nothing_here"], default_handler = ["Wait 1", "Retry"] } }"#,
    );
    let err = scenario(&text)
        .build(&Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("no item called \"nothing_here\""), "{err}");
}

#[test]
fn retry_and_wait_in_handlers() {
    let text = format!(
        "{}\ncomponents = {{ Claw = {{ range = 5 }}, Script = {{ instructions = [\"Grab box\", \"Go right\", \"Drop\"], handlers = {{ GrabFailed = [\"Wait 2\", \"Retry\"] }} }} }}\n\
         [[entities]]\ntype = \"item\"\nname = \"box\"\nposition = [60, 50]",
        with_robot("")
    );
    // r cannot reach the box (40 away) and retries every 2 s; it never gets it, so stop at 10 s.
    let mut sim = scenario(&text)
        .build(&Overrides {
            duration: Some(10.0),
            ..Overrides::default()
        })
        .unwrap();
    let s = sim.run();
    let r = sim.world().find("r").unwrap();
    let script = Script::of(sim.world(), r).unwrap();
    assert_eq!(script.pc, 0, "still retrying the grab");
    assert!(s.errors >= 4, "a GrabFailed error every 2 s: {}", s.errors);
    assert!(script
        .last_error
        .as_deref()
        .unwrap_or("")
        .contains("GrabFailed"));
}

#[test]
fn claw_grabs_carries_and_drops() {
    let text = format!(
        "{}\ncomponents = {{ Claw = {{ range = 5, duration = 0.5 }}, Script = [\"Go middle\", \"Grab box\", \"Go right\", \"Drop\"] }}\n\
         [[entities]]\ntype = \"item\"\nname = \"box\"\nposition = [152, 50]",
        with_robot("")
    );
    let mut sim = build(&text);
    let s = sim.run();
    assert_eq!((s.scripts_done, s.tasks_done), (1, 1));
    let w = sim.world();
    let b = w.find("box").unwrap();
    let p = w.pose.get(b).unwrap();
    assert!(
        (p.x - 280.0).abs() < 1e-6,
        "the box travelled with the robot: {p:?}"
    );
    assert_eq!(w.item.get(b).unwrap().carried_by, None);
}

#[test]
fn battery_runs_out() {
    let text = with_robot(
        r#"components = { Battery = { capacity = 1, idle_drain = 0, move_drain = 0.01 }, Script = { instructions = ["Go right"], handlers = { BatteryEmpty = ["Log flat", "Abort"] } } }"#,
    );
    let mut sim = build(&text);
    let s = sim.run();
    assert_eq!(s.scripts_failed, 1);
    let r = sim.world().find("r").unwrap();
    let x = sim.world().pose.get(r).unwrap().x;
    // 1 unit of charge at 0.01 per unit travelled: about 100 units.
    assert!(
        (115.0..=125.0).contains(&x),
        "stopped after ~100 units: x = {x}"
    );
    assert!(sim.world().battery.get(r).unwrap().empty);
}

/// A world with a robot at (50, 50) and a 10 × 10 obstacle robot at (80, 50).
fn sensor_world() -> Simulation {
    let mut w = SwarmWorld::new(200.0, 100.0);
    let a = w.spawn("robot");
    w.pose.insert(
        a,
        SwarmPose {
            x: 50.0,
            y: 50.0,
            theta: 0.0,
        },
    );
    w.vel.insert(a, Velocity::default());
    w.set_collider(a, Shape::Circle { r: 2.0 });
    w.proximity.insert(a, Proximity::new(4, 50.0));
    let b = w.spawn("robot");
    w.pose.insert(
        b,
        SwarmPose {
            x: 80.0,
            y: 50.0,
            theta: 0.0,
        },
    );
    w.vel.insert(b, Velocity::default());
    w.set_collider(b, Shape::Box { hw: 5.0, hh: 5.0 });
    let mut sim = Simulation::new(
        w,
        SimConfig {
            fps: 10.0,
            duration: Some(100.0),
            ..SimConfig::default()
        },
    );
    sim.add_system(Box::new(MovementSystem));
    sim.add_system(Box::new(ProximitySystem::default()));
    sim
}

#[test]
fn proximity_reads_and_a_removed_sensor_stops() {
    let mut sim = sensor_world();
    let a = simrob_swarm::EntityId(1);
    sim.run_until(1.0);
    let p = sim.world().proximity.get(a).unwrap();
    assert_eq!(p.updates, 10);
    // Beam 0 looks along +x: the box's near face is at x = 75, 25 from the centre.
    assert!((p.readings[0] - 25.0).abs() < 1e-9, "{:?}", p.readings);
    assert_eq!(&p.readings[1..], &[50.0, 50.0, 50.0]);
    // The sensor fails: remove the component; no readings any more.
    sim.world_mut().proximity.remove(a);
    sim.run_until(2.0);
    assert!(sim.world().proximity.get(a).is_none());
    assert!(sim.world().proximity.is_empty());
    // Repaired: a fresh sensor reads again from zero.
    sim.world_mut().proximity.insert(a, Proximity::new(4, 50.0));
    sim.run_until(2.5);
    assert_eq!(sim.world().proximity.get(a).unwrap().updates, 5);
    // Turned by 180°: beam 2 now looks along +x.
    sim.world_mut().pose.get_mut(a).unwrap().theta = std::f64::consts::PI;
    sim.run_until(3.0);
    let r = &sim.world().proximity.get(a).unwrap().readings;
    assert!((r[2] - 25.0).abs() < 1e-9 && r[0] == 50.0, "{r:?}");
}

#[test]
fn collisions_are_reported_once_per_contact() {
    // A robot drives through another (no stop-on-collision): one contact, one event;
    // then it comes back through: a second contact.
    let mut w = SwarmWorld::new(200.0, 100.0);
    let a = w.spawn("robot");
    w.pose.insert(
        a,
        SwarmPose {
            x: 20.0,
            y: 50.0,
            theta: 0.0,
        },
    );
    w.vel.insert(
        a,
        Velocity {
            x: 10.0,
            y: 0.0,
            w: 0.0,
        },
    );
    w.set_collider(a, Shape::Circle { r: 4.0 });
    let b = w.spawn("robot");
    w.pose.insert(
        b,
        SwarmPose {
            x: 60.0,
            y: 50.0,
            theta: 0.0,
        },
    );
    w.vel.insert(b, Velocity::default());
    w.set_collider(b, Shape::Box { hw: 4.0, hh: 4.0 });
    let mut sim = Simulation::new(
        w,
        SimConfig {
            fps: 10.0,
            duration: Some(20.0),
            ..SimConfig::default()
        },
    );
    sim.add_system(Box::new(MovementSystem));
    sim.add_system(Box::new(CollisionSystem::default()));
    let log = Spy::add(&mut sim, &[Tag::COLLISION]);
    sim.run_until(8.0); // a passes b between x = 52 and 68 (about 1.6 s of contact)
    assert_eq!(log.lock().unwrap().len(), 1);
    assert_eq!(log.lock().unwrap()[0].1, Payload::Pair(a, b));
    sim.world_mut().vel.get_mut(a).unwrap().x = -10.0;
    sim.run();
    assert_eq!(
        log.lock().unwrap().len(),
        2,
        "back through b: a new contact"
    );
    assert_eq!(sim.summary(0.0).collisions, 2);
}

#[test]
fn stop_on_collision_stops_both_and_tells_their_scripts() {
    let text = format!(
        "{}\ncomponents = {{ Script = {{ instructions = [\"Go right\"], handlers = {{ Collision = [\"Log bump\", \"Abort\"] }} }} }}\n\
         [[entities]]\ntype = \"robot\"\nname = \"other\"\nposition = [280, 50]\nradius = 4\n\
         components = {{ Script = {{ instructions = [\"Go left\"], default_handler = [\"Abort\"] }} }}",
        with_robot("")
    );
    let mut sim = build(&text);
    let s = sim.run();
    assert_eq!(s.collisions, 1);
    assert_eq!(s.scripts_failed, 2);
    let w = sim.world();
    let (r, o) = (w.find("r").unwrap(), w.find("other").unwrap());
    let gap = w.pose.get(o).unwrap().x - w.pose.get(r).unwrap().x;
    assert!(gap < 8.0 && gap > 0.0, "they met in the middle: gap {gap}");
    assert!(!w.vel.get(r).unwrap().is_moving() && !w.vel.get(o).unwrap().is_moving());
}

fn swarm(n: usize, seconds: f64) -> Simulation {
    let text = format!(
        "fps = 24\nduration = {seconds}\nseed = 7\n[generator]\nkind = \"drone-swarm\"\nrobots = {n}\nproximity_beams = 12\n"
    );
    build(&text)
}

/// The drones' entity ids, in entity order.
fn drone_ids(world: &SwarmWorld) -> Vec<simrob_swarm::EntityId> {
    world
        .custom::<Drone>()
        .expect("drones")
        .iter()
        .map(|(e, _)| e)
        .collect()
}

/// `world` (taken from `built`, whose config it keeps) in the drone swarm's pipeline on
/// `threads` threads: movement, collision, stop on collision and `controller`.
fn drone_pipeline(
    world: SwarmWorld,
    built: &Simulation,
    threads: usize,
    controller: DroneController,
) -> Simulation {
    let mut c = Simulation::new(world, built.ctx.config.clone());
    c.set_threads(threads);
    c.add_system(Box::new(MovementSystem));
    c.add_system(Box::new(CollisionSystem::default()));
    c.add_system(Box::new(simrob_swarm::systems::StopOnCollision));
    c.add_system(Box::new(controller));
    c
}

/// A system that logs the events of some tags (time, payload), in the order raised.
struct Spy {
    tags: Vec<Tag>,
    log: Arc<Mutex<Vec<(f64, Payload)>>>,
}

impl Spy {
    /// Adds a spy on `tags` to `sim`; its log.
    fn add(sim: &mut Simulation, tags: &[Tag]) -> Arc<Mutex<Vec<(f64, Payload)>>> {
        let log = Arc::new(Mutex::new(Vec::new()));
        sim.add_system(Box::new(Spy {
            tags: tags.to_vec(),
            log: log.clone(),
        }));
        log
    }
}

impl simrob_swarm::System for Spy {
    fn name(&self) -> &str {
        "spy"
    }
    fn wants(&self, e: &Event) -> bool {
        self.tags.contains(&e.tag)
    }
    fn react(&mut self, e: &Event, ctx: &mut simrob_swarm::Ctx) {
        self.log
            .lock()
            .unwrap()
            .push((ctx.events.now(), e.payload.clone()));
    }
}

fn fingerprint(sim: &Simulation) -> Vec<u64> {
    let w = sim.world();
    let mut out = Vec::new();
    for (e, p) in w.pose.iter() {
        out.extend([e.0 as u64, p.x.to_bits(), p.y.to_bits()]);
        if let Some(s) = w.proximity.get(e) {
            out.extend(s.readings.iter().map(|r| r.to_bits()));
        }
    }
    out
}

#[test]
fn same_scenario_and_seed_same_run_bit_for_bit() {
    let mut a = swarm(300, 6.0);
    let mut b = swarm(300, 6.0);
    let (sa, sb) = (a.run(), b.run());
    assert_eq!(fingerprint(&a), fingerprint(&b));
    assert_eq!(
        (sa.events, sa.collisions, sa.arrived, sa.crashed, sa.frames),
        (sb.events, sb.collisions, sb.arrived, sb.crashed, sb.frames)
    );
    assert!(sa.arrived > 0 && sa.events > 0);
    // Another seed, another run.
    let text = "fps = 24\nduration = 6\nseed = 8\n[generator]\nkind = \"drone-swarm\"\nrobots = 300\nproximity_beams = 12\n";
    let mut c = build(text);
    c.run();
    assert_ne!(fingerprint(&a), fingerprint(&c));
}

#[test]
fn threads_do_not_change_a_large_swarm() {
    // 10,000 drones: movement and the grid's entries also go parallel (from 8,192).
    let text =
        "fps = 24\nduration = 0.25\nseed = 4\n[generator]\nkind = \"drone-swarm\"\nrobots = 10000\n";
    let sc = scenario(text);
    let runs: Vec<_> = [1, 2]
        .into_iter()
        .map(|threads| {
            let mut sim = sc
                .build(&Overrides {
                    threads: Some(threads),
                    ..Overrides::default()
                })
                .unwrap();
            let s = sim.run();
            (
                fingerprint(&sim),
                (s.frames, s.collisions, s.crashed, s.arrived),
            )
        })
        .collect();
    assert_eq!(runs[0].1 .0, 6);
    assert_eq!(runs[1], runs[0], "2 threads as 1");
}

#[test]
fn threads_do_not_change_the_pushes_of_a_large_hovering_swarm() {
    // 5,000 drones hovering 7.4 apart (their limits leave less room than a push, so pushes
    // are cut by what the neighbours leave), disturbed every 0.125 s: from 4,096 drones the
    // pushes are drawn and cut on several threads. A pushed drone is back at its target a
    // frame later, so the swarm is looked at in the frame of each push.
    let text =
        "fps = 24\nduration = 1\nseed = 3\n[generator]\nkind = \"drone-swarm\"\nrobots = 5000\n";
    let runs: Vec<_> = [1, 2]
        .into_iter()
        .map(|threads| {
            let mut sim = scenario(text)
                .build(&Overrides {
                    threads: Some(threads),
                    ..Overrides::default()
                })
                .unwrap();
            let w = sim.world_mut();
            let ids = drone_ids(w);
            assert_eq!(ids.len(), 5000);
            for (k, &e) in ids.iter().enumerate() {
                let (x, y) = (100.0 + 7.4 * (k % 70) as f64, 100.0 + 7.4 * (k / 70) as f64);
                *w.pose.get_mut(e).unwrap() = SwarmPose { x, y, theta: 0.0 };
                let d = w.custom_mut::<Drone>().get_mut(e).unwrap();
                d.target = (x, y);
                d.state = DroneState::Hovering;
                d.reported = true;
            }
            // The frames of the pushes at 0.125, 0.25 and 0.375 s.
            [0.13, 0.26, 0.38]
                .into_iter()
                .map(|t| {
                    sim.run_until(t);
                    let w = sim.world();
                    let drones = w.custom::<Drone>().unwrap();
                    let off = |&&e: &&_| {
                        drones.get(e).map(|d| d.target) != w.pose.get(e).map(|p| (p.x, p.y))
                    };
                    (fingerprint(&sim), ids.iter().filter(off).count())
                })
                .collect::<Vec<_>>()
        })
        .collect();
    for (k, (_, moved)) in runs[0].iter().enumerate() {
        assert!(*moved > 1000, "push {k}: {moved} drones off their targets");
    }
    assert!(runs[1] == runs[0], "2 threads as 1");
}

#[test]
fn calm_hovering_drones_move_as_the_scan_has_them() {
    // 400 drones for 24 s: most arrive and hover, flying drones still pass among them. A
    // calm hovering drone (near its target among others near theirs, nothing flying near)
    // moves without ORCA's scan; the run is the one in which every drone is scanned, in
    // entity and in slot order, on one and on two threads.
    let text =
        "fps = 24\nduration = 24\nseed = 9\n[generator]\nkind = \"drone-swarm\"\nrobots = 400\n";
    let runs: Vec<_> = [(false, usize::MAX, 1), (true, usize::MAX, 1), (true, 0, 2)]
        .into_iter()
        .map(|(calm, from, threads)| {
            let mut b = scenario(text).build(&Overrides::default()).unwrap();
            let world = std::mem::take(b.world_mut());
            let count = Arc::new(AtomicU64::new(0));
            let mut c = drone_pipeline(
                world,
                &b,
                threads,
                DroneController::new(5.0)
                    .with_calm(calm)
                    .with_calm_count(count.clone())
                    .with_slot_order_from(from),
            );
            let log = Spy::add(&mut c, &[Tag::COLLISION, Tag::ARRIVED]);
            let s = c.run();
            let events = log.lock().unwrap().clone();
            (
                (fingerprint(&c), events),
                (s.events, s.collisions, s.crashed, s.arrived, s.frames),
                count.load(Ordering::Relaxed),
            )
        })
        .collect();
    let (scanned, calm, calm_slots) = (&runs[0], &runs[1], &runs[2]);
    assert!(scanned.1 .3 > 300, "most arrive: {:?}", scanned.1);
    assert_eq!(scanned.2, 0, "all scanned");
    // Of some 4,000 drone-seconds hovering, most are calm.
    assert!(calm.2 > 40_000, "calm drone-frames: {}", calm.2);
    assert_eq!(calm_slots.2, calm.2);
    assert_eq!(calm.1, scanned.1, "calm as scanned");
    assert!(calm.0 == scanned.0, "the same run, calm as scanned");
    assert!(
        calm_slots.0 == scanned.0,
        "the same run, slot order, 2 threads"
    );
}

#[test]
fn slot_order_gives_the_same_run_as_entity_order() {
    // 400 drones for 20 s (most arrive, crowds form at the targets): the controller in grid
    // slot order (as for a large swarm) and in entity order, on one and on two threads.
    let text =
        "fps = 24\nduration = 20\nseed = 5\n[generator]\nkind = \"drone-swarm\"\nrobots = 400\n";
    for avoidance in [Avoidance::Orca, Avoidance::Hmr] {
        let runs: Vec<_> = [(usize::MAX, 1), (0, 1), (0, 2)]
            .into_iter()
            .map(|(from, threads)| {
                let mut b = scenario(text)
                    .build(&Overrides {
                        avoidance: Some(avoidance),
                        ..Overrides::default()
                    })
                    .unwrap();
                let world = std::mem::take(b.world_mut());
                let mut c = drone_pipeline(
                    world,
                    &b,
                    threads,
                    DroneController::new(5.0)
                        .with_slot_order_from(from)
                        .with_avoidance(avoidance),
                );
                let s = c.run();
                (
                    fingerprint(&c),
                    (s.events, s.collisions, s.crashed, s.arrived, s.frames),
                )
            })
            .collect();
        assert!(runs[0].1 .3 > 100, "{avoidance:?}: {:?}", runs[0].1);
        assert_eq!(
            runs[1], runs[0],
            "{avoidance:?}: slot order as entity order"
        );
        assert_eq!(runs[2], runs[0], "{avoidance:?}: slot order on two threads");
    }
}

#[test]
fn slot_order_in_many_parts_gives_the_same_run() {
    // 6,000 drones (from 4,096 the controller splits them into parts, several a thread, and
    // in slot order lists each part's slots first) for 2 s, pressed 14 apart so that ORCA
    // has neighbours to avoid: in entity order on one thread, in slot order on one, two and
    // three threads.
    let text =
        "fps = 24\nduration = 2\nseed = 6\n[generator]\nkind = \"drone-swarm\"\nrobots = 6000\n";
    let runs: Vec<_> = [(usize::MAX, 1), (0, 1), (0, 2), (0, 3)]
        .into_iter()
        .map(|(from, threads)| {
            let mut b = scenario(text).build(&Overrides::default()).unwrap();
            let mut world = std::mem::take(b.world_mut());
            let ids = drone_ids(&world);
            for (k, e) in ids.into_iter().enumerate() {
                if let Some(p) = world.pose.get_mut(e) {
                    (p.x, p.y) = (20.0 + 14.0 * (k % 90) as f64, 20.0 + 14.0 * (k / 90) as f64);
                }
            }
            let mut c = drone_pipeline(
                world,
                &b,
                threads,
                DroneController::new(5.0).with_slot_order_from(from),
            );
            let log = Spy::add(&mut c, &[Tag::COLLISION, Tag::ARRIVED]);
            let s = c.run();
            let events = log.lock().unwrap().clone();
            (
                fingerprint(&c),
                (s.events, s.collisions, s.crashed, s.arrived, s.frames),
                events,
            )
        })
        .collect();
    assert_eq!(runs[0].1 .4, 48, "{:?}", runs[0].1);
    for (k, run) in runs.iter().enumerate().skip(1) {
        assert_eq!(run.1, runs[0].1, "run {k}");
        assert!(run.2 == runs[0].2, "the same events: run {k}");
        assert!(run.0 == runs[0].0, "the same run: run {k}");
    }
}

#[test]
fn threads_do_not_change_the_run() {
    // 5,000 drones: above the size where collision and control go parallel; both models;
    // one, two and three threads.
    for avoidance in [Avoidance::Orca, Avoidance::Hmr] {
        let text =
            "fps = 24\nduration = 1\nseed = 3\n[generator]\nkind = \"drone-swarm\"\nrobots = 5000\n";
        let sc = scenario(text);
        let runs: Vec<_> = [1, 2, 3]
            .into_iter()
            .map(|threads| {
                let mut sim = sc
                    .build(&Overrides {
                        avoidance: Some(avoidance),
                        threads: Some(threads),
                        ..Overrides::default()
                    })
                    .unwrap();
                let s = sim.run();
                (fingerprint(&sim), (s.collisions, s.crashed, s.arrived))
            })
            .collect();
        assert_eq!(runs[1], runs[0], "{avoidance:?}: 2 threads as 1");
        assert_eq!(runs[2], runs[0], "{avoidance:?}: 3 threads as 1");
        // The same run with one thread given to each system by hand.
        let mut b = sc
            .build(&Overrides {
                avoidance: Some(avoidance),
                ..Overrides::default()
            })
            .unwrap();
        let world = std::mem::take(b.world_mut());
        let mut c = Simulation::new(world, b.ctx.config.clone());
        c.add_system(Box::new(MovementSystem));
        c.add_system(Box::new(CollisionSystem::with_threads(1)));
        c.add_system(Box::new(simrob_swarm::systems::StopOnCollision));
        c.add_system(Box::new(
            DroneController::new(5.0)
                .with_threads(1)
                .with_avoidance(avoidance),
        ));
        let sc1 = c.run();
        // The scenario's pipeline also has script, path, battery and proximity systems, which
        // do nothing here.
        assert_eq!(fingerprint(&c), runs[0].0, "{avoidance:?}");
        assert_eq!(
            (sc1.collisions, sc1.crashed, sc1.arrived),
            runs[0].1,
            "{avoidance:?}"
        );
    }
}

#[test]
fn contacts_found_in_orcas_scan_are_the_collision_systems() {
    // 5,000 drones (the parallel paths) rammed by robots that are not drones (boxes along
    // the rows, discs down the columns; they keep going, so contacts last and begin again):
    // the drones' contacts found in ORCA's neighbour scan give the same collision events, at
    // the same times and in the same order, and the same run, as the collision system
    // finding them all; on one and two threads, in entity and in slot order. A rammer too
    // large for the scan (half extent 8) makes the collision system find every contact;
    // with walls, it still tests the scanned drones against them.
    type Run = (Vec<u64>, (u64, u64, u64, u64), Vec<(f64, Payload)>);
    fn run(big: bool, walls: bool, in_scan: bool, threads: usize, slot_from: usize) -> Run {
        let text =
            "fps = 24\nduration = 1.5\nseed = 2\n[generator]\nkind = \"drone-swarm\"\nrobots = 5000\n";
        let mut b = scenario(text).build(&Overrides::default()).unwrap();
        let mut world = std::mem::take(b.world_mut());
        // Forty drones start on top of another one, both moving: contacts between two
        // flying drones, which only the drones' own scans find when the scan looks for
        // contacts.
        let drones = drone_ids(&world);
        for k in 0..40 {
            let (a, b) = (drones[k * 120], drones[k * 120 + 1]);
            let p = *world.pose.get(b).unwrap();
            world.pose.insert(
                a,
                SwarmPose {
                    x: p.x + 0.2,
                    y: p.y + 0.1,
                    theta: 0.0,
                },
            );
            for e in [a, b] {
                world.vel.insert(
                    e,
                    Velocity {
                        x: 1.0,
                        y: 0.5,
                        w: 0.0,
                    },
                );
            }
        }
        if walls {
            // Walls across the start grid (static colliders, in the wall index).
            for k in 0..4 {
                let e = world.spawn("wall");
                world.pose.insert(
                    e,
                    SwarmPose {
                        x: 300.0 + 400.0 * k as f64,
                        y: 130.0,
                        theta: 0.0,
                    },
                );
                world.set_collider(e, Shape::Box { hw: 150.0, hh: 4.0 });
            }
        }
        for k in 0..12 {
            let (pose, vel, shape) = if k % 2 == 0 {
                let half = if big && k == 0 { 8.0 } else { 4.0 };
                (
                    SwarmPose {
                        x: 5.0,
                        y: 20.0 + 60.0 * k as f64,
                        theta: 0.0,
                    },
                    (200.0, 0.0),
                    Shape::Box { hw: half, hh: half },
                )
            } else {
                (
                    SwarmPose {
                        x: 20.0 + 60.0 * k as f64,
                        y: 5.0,
                        theta: 0.0,
                    },
                    (0.0, 150.0),
                    Shape::Circle { r: 3.0 },
                )
            };
            let e = world.spawn("robot");
            world.pose.insert(e, pose);
            world.vel.insert(
                e,
                Velocity {
                    x: vel.0,
                    y: vel.1,
                    w: 0.0,
                },
            );
            world.set_collider(e, shape);
        }
        let mut c = drone_pipeline(
            world,
            &b,
            threads,
            DroneController::new(5.0)
                .with_slot_order_from(slot_from)
                .with_contacts_in_scan(in_scan),
        );
        let log = Spy::add(&mut c, &[Tag::COLLISION, Tag::ARRIVED]);
        let s = c.run();
        let events = log.lock().unwrap().clone();
        (
            fingerprint(&c),
            (s.events, s.collisions, s.crashed, s.arrived),
            events,
        )
    }
    for (big, walls) in [(false, false), (true, false), (false, true)] {
        let all = run(big, walls, false, 1, usize::MAX);
        assert!(all.1 .1 > 60, "rammed drones: {:?}", all.1);
        for (threads, slot_from) in [(1, usize::MAX), (2, usize::MAX), (2, 0)] {
            let fused = run(big, walls, true, threads, slot_from);
            assert_eq!(
                fused.1, all.1,
                "big {big}, {threads} threads, from {slot_from}"
            );
            assert!(
                fused.2 == all.2,
                "the same events: big {big}, {threads} threads, from {slot_from}"
            );
            assert!(
                fused.0 == all.0,
                "the same run: big {big}, {threads} threads"
            );
        }
    }
}

#[test]
fn every_drone_arrives_whatever_the_seed_and_size() {
    // ORCA alone leaves a few drones standing for good (two head-on on one line, or one
    // pressing into a drone that hovers on its way); the stall watch's detours free them.
    for n in [40, 200] {
        for seed in 1..=4 {
            let text = format!(
                "fps = 24\nduration = 60\nseed = {seed}\n[generator]\nkind = \"drone-swarm\"\nrobots = {n}\n"
            );
            let mut sim = build(&text);
            let s = sim.run();
            assert_eq!(
                (s.arrived, s.crashed),
                (n as u64, 0),
                "{n} drones, seed {seed}: {s:?}"
            );
            assert!(s.killed && s.simulated_seconds < 30.0, "{s:?}");
            let detoured = sim
                .world()
                .custom::<Drone>()
                .expect("drones")
                .iter()
                .filter(|(_, d)| d.progress.stalls() > 0)
                .count();
            assert!(detoured < n / 4, "{detoured} of {n} drones detoured");
        }
    }
}

#[test]
fn how_the_grid_stores_its_cells_never_changes_a_run() {
    // Drones with proximity sensors (crowded and, later, standing still: sensors keep their
    // readings), with the grid's cells stored densely, sparsely and as chosen frame by frame.
    let runs: Vec<_> = [GridLayout::Dense, GridLayout::Sparse, GridLayout::Auto]
        .into_iter()
        .map(|layout| {
            let mut sim = swarm(300, 4.0);
            sim.world_mut().res.get_mut::<SpatialGrid>().layout = layout;
            let s = sim.run();
            assert_eq!(
                sim.world().res.get::<SpatialGrid>().is_dense(),
                layout != GridLayout::Sparse
            );
            (
                fingerprint(&sim),
                (s.events, s.collisions, s.arrived, s.crashed, s.frames),
            )
        })
        .collect();
    assert!(runs[0].1 .2 > 0, "drones arrived: {:?}", runs[0].1);
    assert_eq!(runs[1], runs[0], "sparse as dense");
    assert_eq!(runs[2], runs[0], "chosen as dense");
}

#[test]
fn a_huge_world_runs_as_its_map_does() {
    // The hospital in a 40,960 × 40,960 world (4,194,304 grid cells, the most a scenario may
    // have by default): the robots stay in the map's corner, the grid looks only at the cells
    // between them, and the run is the same.
    let small = bundled("hospital.toml");
    let mut huge = small.clone();
    huge.file.world.width = Some(40_960.0);
    huge.file.world.height = Some(40_960.0);
    let mut a = small.build(&Overrides::default()).unwrap();
    let mut b = huge.build(&Overrides::default()).unwrap();
    let (sa, sb) = (a.run(), b.run());
    assert_eq!(b.world().res.get::<SpatialGrid>().dims(), (2048, 2048));
    assert_eq!(
        (sa.events, sa.collisions, sa.tasks_done, sa.frames),
        (sb.events, sb.collisions, sb.tasks_done, sb.frames)
    );
    assert_eq!(sa.tasks_done, 3);
    assert_eq!(fingerprint(&a), fingerprint(&b));
}

#[test]
fn the_bundled_drone_swarm_avoids_with_orca_and_crashes_with_hmr_sims_heuristic() {
    let sc = bundled("drone-swarm.toml");
    // ORCA (the default): no crash, every one of the 200 drones arrives.
    let mut sim = sc.build(&Overrides::default()).unwrap();
    let s = sim.run();
    assert_eq!((s.arrived, s.crashed), (200, 0), "{s:?}");
    assert!(s.killed, "{s:?}");
    // HMR Sim's heuristic, as HMR Sim runs it without its stale-request bug: about half
    // crash (this is the model, kept as it is).
    let mut sim = sc
        .build(&Overrides {
            avoidance: Some(Avoidance::Hmr),
            ..Overrides::default()
        })
        .unwrap();
    let s = sim.run();
    assert_eq!((s.arrived, s.crashed), (112, 88), "{s:?}");
    // The avoidance is for the drone swarm only.
    let m = bundled("hospital.toml")
        .build(&Overrides {
            avoidance: Some(Avoidance::Orca),
            ..Overrides::default()
        })
        .unwrap_err()
        .to_string();
    assert!(m.contains("--avoidance"), "{m}");
}

#[test]
fn drones_report_and_the_run_ends_when_all_have() {
    let mut sim = swarm(48, 120.0);
    let s = sim.run();
    assert_eq!(s.arrived + s.crashed, 48);
    assert!(s.killed && s.simulated_seconds < 120.0);
    let w = sim.world();
    assert!(w
        .custom::<Drone>()
        .expect("drones")
        .iter()
        .all(|(_, d)| matches!(d.state, DroneState::Hovering | DroneState::Crashed)));
}

#[test]
fn recordings_are_versioned_json_lines() {
    let mut sim = swarm(30, 2.0);
    let buf = Arc::new(Mutex::new(Vec::<u8>::new()));
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let rec = JsonLinesRecorder::new(Shared(buf.clone()));
    sim.add_system(Box::new(Seer::new("swarm", 0.5, vec![Box::new(rec)])));
    let s = sim.run();
    let summary = sim.finish(0.0);
    let _ = s;
    let text = String::from_utf8(buf.lock().unwrap().clone()).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    assert_eq!(lines[0]["type"], "header");
    assert_eq!(lines[0]["format"], "simrob-swarm-recording");
    assert_eq!(lines[0]["version"], 1);
    assert_eq!(lines[0]["kinds"][1], "drone");
    let snaps: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] == "snapshot").collect();
    assert!(snaps.len() >= 5, "t = 0, 0.5, 1, 1.5, 2: {}", snaps.len());
    assert_eq!(snaps[0]["entities"].as_array().unwrap().len(), 30);
    assert_eq!(snaps[0]["entities"][0][0], 1);
    assert!(lines.iter().any(|l| l["type"] == "end"));
    assert_eq!(summary.robots, 30);
}

/// Why scenario `t` does not load or build (empty when it does).
fn load_error(t: &str) -> String {
    match Scenario::from_toml_str(t, Path::new(".")) {
        Err(e) => e.to_string(),
        Ok(s) => s
            .build(&Overrides::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default(),
    }
}

#[test]
fn bad_scenarios_say_what_and_where() {
    let e = load_error;
    let m = e(&with_robot(r#"components = { Script = ["Fly away"] }"#));
    assert!(
        m.contains("entity r") && m.contains("unknown instruction \"Fly\"") && m.contains("Go"),
        "{m}"
    );
    let m = e(&with_robot(r#"components = { Script = ["Go nowhere"] }"#));
    assert!(m.contains("no POI called \"nowhere\""), "{m}");
    let m = e(&with_robot(r#"components = { Script = ["Wait soon"] }"#));
    assert!(m.contains("\"soon\" is not a number"), "{m}");
    let m = e(&with_robot(r#"components = { Jetpack = {} }"#));
    assert!(
        m.contains("entities[0] (r)") && m.contains("unknown component \"Jetpack\""),
        "{m}"
    );
    let m = e(&with_robot(r#"components = { Proximity = { beams = 0 } }"#));
    assert!(m.contains("Proximity") && m.contains("beams"), "{m}");
    let m = e("fps = -3");
    assert!(m.contains("fps"), "{m}");
    // A frame so short that simulated time stood still, snapshots repeating one frame.
    let m = e("fps = 1e300");
    assert!(
        m.contains("fps must be from 0.01 to 1000") && m.contains("1e300"),
        "{m}"
    );
    let m = e("[world]\nsnapshot_period = 1e-300");
    assert!(
        m.contains("world.snapshot_period must be at least 0.001"),
        "{m}"
    );
    let m = e("fsp = 3");
    assert!(m.contains("unknown field") && m.contains("fsp"), "{m}");
    let m = e("map = \"missing.drawio\"");
    assert!(m.contains("missing.drawio"), "{m}");
    let m = Scenario::from_toml_str(CORRIDOR, Path::new("."))
        .unwrap()
        .build(&Overrides {
            robots: Some(5),
            ..Overrides::default()
        })
        .unwrap_err()
        .to_string();
    assert!(m.contains("--robots"), "{m}");
}

/// The messages a user reads for an entity, a component or a script the loader refuses,
/// whole: the file, the entity, the field, then what is wrong.
#[test]
fn refused_entities_components_and_scripts_read_exactly() {
    let e = |t: &str| {
        scenario(t)
            .build(&Overrides::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let robot = |extra: &str| e(&with_robot(&format!("components = {{ {extra} }}")));
    let r = "scenario: entities[0] (r): components";
    for (extra, want) in [
        (
            "Jetpack = {}",
            format!(
                "{r}.Jetpack: unknown component \"Jetpack\" (known: Velocity, Collider, \
                 Navigator, Proximity, Claw, Battery, Item, StopOnCollision, Script)"
            ),
        ),
        (
            "Proximity = { beams = 0 }",
            format!("{r}.Proximity: beams must be a whole number from 1 to 360, found 0"),
        ),
        (
            "Proximity = { beams = \"x\" }",
            format!("{r}.Proximity: beams must be a number, found \"x\""),
        ),
        (
            "Proximity = { range = -1 }",
            format!("{r}.Proximity: range must be positive and period a whole number ≥ 1"),
        ),
        (
            "Collider = { radius = -2 }",
            format!("{r}.Collider: radius must be a positive number, found -2"),
        ),
        (
            "Collider = { box = [1] }",
            format!("{r}.Collider: box must be [width, height], found [1]"),
        ),
        (
            "Collider = { size = 1 }",
            format!("{r}.Collider: unknown field \"size\" (expected: box, radius)"),
        ),
        (
            "Navigator = { speed = 0 }",
            format!("{r}.Navigator: speed must be positive and keep_clear ≥ 0, found 0 and 0"),
        ),
        (
            "Battery = 3",
            format!("{r}.Battery: expected a table/object, found 3"),
        ),
        (
            "StopOnCollision = 1",
            format!("{r}.StopOnCollision: expected true or false, found 1"),
        ),
        (
            "Script = [1]",
            format!("{r}.Script: Script: 1 is not a string"),
        ),
        (
            "Script = { handlers = {} }",
            format!("{r}.Script: a Script needs instructions"),
        ),
        (
            "Velocity = [\"a\", 1]",
            format!("{r}.Velocity: vx must be a number"),
        ),
        (
            "Script = [\"Go nowhere\"]",
            "scenario: entity r: Go nowhere: there is no POI called \"nowhere\" \
             (POIs: island, left, middle, right)"
                .to_string(),
        ),
        (
            "Script = [\"Wait 3 1\"]",
            "scenario: entity r: Wait 3 1: Wait: the least (3) is more than the most (1)"
                .to_string(),
        ),
        (
            "Script = [\"Grab left\"]",
            "scenario: entity r: Grab left: \"left\" is not an item".to_string(),
        ),
        (
            "Script = [\"Grab box\"]",
            "scenario: entity r: Grab box: there is no item called \"box\"".to_string(),
        ),
    ] {
        assert_eq!(robot(extra), want, "{extra}");
    }
    let twice = format!(
        "{CORRIDOR}\n[[entities]]\ntype = \"poi\"\nposition = [1, 1]\n\
         [[entities]]\ntype = \"robot\"\nname = \"left\"\nposition = [2, 2]\n"
    );
    assert_eq!(e(&twice), "scenario: entities[0]: a POI needs a name");
    let taken =
        format!("{CORRIDOR}\n[[entities]]\ntype = \"robot\"\nname = \"left\"\nposition = [2, 2]\n");
    assert!(
        e(&taken).starts_with(
            "scenario: entities[0] (left): the name \"left\" is already used by entity #"
        ),
        "{}",
        e(&taken)
    );
}

fn bundled(name: &str) -> Scenario {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/swarm")
        .join(name);
    Scenario::load(&p).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn the_hospital_delivers() {
    let sc = bundled("hospital.toml");
    let mut sim = sc.build(&Overrides::default()).unwrap();
    let s = sim.run();
    assert_eq!(s.robots, 3);
    assert_eq!(s.tasks_done, 3, "three deliveries");
    assert_eq!(s.scripts_done, 3, "{s:?}");
    assert!(s.killed);
    let w = sim.world();
    for (item, room) in [
        ("medicine_a", "room1"),
        ("medicine_b", "room2"),
        ("supplies_c", "room3"),
    ] {
        let p = w.pose.get(w.find(item).unwrap()).unwrap();
        let (rx, ry) = w.res.get::<NavMap>().poi(room).unwrap();
        assert!((p.x - rx).hypot(p.y - ry) < 1.0, "{item} is in {room}");
    }
}

#[test]
fn the_warehouse_and_the_swarm_scenarios_run() {
    let sc = bundled("warehouse.toml");
    let mut sim = sc
        .build(&Overrides {
            robots: Some(200),
            duration: Some(40.0),
            ..Overrides::default()
        })
        .unwrap();
    let s = sim.run();
    assert_eq!(s.robots, 200);
    assert!(s.tasks_done > 50, "{s:?}");
    let sc = bundled("drone-swarm.toml");
    assert!(sc.robots_configurable());
    let mut sim = sc
        .build(&Overrides {
            robots: Some(60),
            duration: Some(3.0),
            ..Overrides::default()
        })
        .unwrap();
    assert_eq!(sim.run().robots, 60);
}

#[test]
fn obstacle_maps_of_the_2d_engine_block_robots_and_beams() {
    let dir = std::env::temp_dir().join(format!("simrob-swarm-obstacles-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("wall.txt"), "300 300\n200 0 220 300\n").unwrap();
    let text = r#"
        fps = 10
        duration = 10
        [world]
        obstacles = "wall.txt"
        [[entities]]
        type = "robot"
        name = "r"
        position = [100, 150]
        radius = 5
        components = { Velocity = [50, 0], Proximity = { beams = 4, range = 150 } }
    "#;
    let sc = Scenario::from_toml_str(text, &dir).unwrap();
    let mut sim = sc.build(&Overrides::default()).unwrap();
    assert_eq!(
        sim.world().res.width,
        300.0,
        "the world takes the map's size"
    );
    sim.run_until(0.1);
    let r = sim.world().find("r").unwrap();
    let reading = sim.world().proximity.get(r).unwrap().readings[0];
    let x = sim.world().pose.get(r).unwrap().x;
    assert!(
        (reading - (200.0 - x)).abs() < 1e-9,
        "beam 0 sees the wall: {reading} at x = {x}"
    );
    let s = sim.run();
    assert_eq!(s.collisions, 1, "one contact with the map");
    let x = sim.world().pose.get(r).unwrap().x;
    assert!(x > 195.0 && x <= 200.0, "stopped at the wall: x = {x}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reused_sensor_readings_equal_fresh_ones() {
    // Late in a swarm run many drones have crashed and stand still: their sensors keep
    // their readings. Read everything afresh from the same poses and compare.
    let mut sim = swarm(400, 8.0);
    sim.run();
    let before: Vec<(u32, Vec<f64>)> = sim
        .world()
        .proximity
        .iter()
        .map(|(e, p)| (e.0, p.readings.clone()))
        .collect();
    let world = std::mem::take(sim.world_mut());
    let mut fresh = Simulation::new(world, SimConfig::default());
    fresh.add_system(Box::new(ProximitySystem::with_threads(1)));
    fresh.step();
    let after: Vec<(u32, Vec<f64>)> = fresh
        .world()
        .proximity
        .iter()
        .map(|(e, p)| (e.0, p.readings.clone()))
        .collect();
    assert_eq!(before, after);
}

#[test]
fn observing_a_run_does_not_change_its_figures() {
    // The hospital with and without a recorder (snapshots every 0.1 s) and the wall clock.
    let plain = bundled("hospital.toml")
        .build(&Overrides::default())
        .unwrap()
        .run();
    let mut watched = bundled("hospital.toml")
        .build(&Overrides::default())
        .unwrap();
    let rec = JsonLinesRecorder::new(std::io::sink());
    watched.add_system(Box::new(Seer::new("hospital", 0.1, vec![Box::new(rec)])));
    let mut fake_wall = 0.0;
    watched.add_system(Box::new(simrob_swarm::systems::ClockSystem::new(Box::new(
        move || {
            fake_wall += 0.01;
            fake_wall
        },
    ))));
    let seen = watched.run();
    assert_eq!(
        (
            plain.events,
            plain.collisions,
            plain.tasks_done,
            plain.errors
        ),
        (seen.events, seen.collisions, seen.tasks_done, seen.errors)
    );
    assert_eq!(plain.frames, seen.frames, "{plain:?} {seen:?}");
    // Every error is itemized, recorder or not.
    let errors = &watched.ctx.stats.error_list;
    assert_eq!(errors.len() as u64, seen.errors);
    assert!(errors
        .iter()
        .all(|e| !e.tag.is_empty() && !e.entity.is_empty()));
}

/// Scripted robots and generated drones in one run: the run ends for work done only when
/// both are done. It ended when the first kind did (the script's `Wait 1`, at 1.04 s, with
/// none of the 50 drones arrived), and said "all work done".
#[test]
fn a_run_of_scripts_and_drones_ends_when_both_are_done() {
    let text = r#"
fps = 24
duration = 60
[generator]
kind = "drone-swarm"
robots = 50
[world]
pois = { p = [500, 380] }
[[entities]]
type = "robot"
name = "walker"
position = [500, 380]
components = { Script = ["Wait 1"] }
"#;
    let s = build(text).run();
    assert!(s.killed, "the work ends the run: {s:?}");
    assert_eq!((s.scripts_done, s.arrived, s.crashed), (1, 50, 0), "{s:?}");
    assert!(s.simulated_seconds > 1.5, "{s:?}");
    // The other way round: the drones arrive long before a script's Wait 30 ends.
    let s = build(&text.replace("Wait 1", "Wait 30")).run();
    assert!(s.killed, "{s:?}");
    assert_eq!((s.scripts_done, s.arrived), (1, 50), "{s:?}");
    assert!(s.simulated_seconds >= 30.0, "{s:?}");
}

/// `Retry` and `Skip` say where a script resumes after an error handler. In a script's own
/// list they stood on the instruction for ever (256 times a frame, the script never done),
/// and the scenario loaded: now it is refused, naming the robot and the instruction.
#[test]
fn retry_and_skip_outside_a_handler_are_refused() {
    for word in ["Retry", "Skip"] {
        let text = with_robot(&format!(
            "components = {{ Script = [\"Log a\", \"{word}\", \"Log x\"] }}"
        ));
        let e = scenario(&text)
            .build(&Overrides::default())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("entity r:")
                && e.contains(&format!("instruction 2 ({word})"))
                && e.contains("error handlers only"),
            "{e}"
        );
        // In a handler they are what they are for.
        let text = with_robot(&format!(
            "components = {{ Script = {{ instructions = [\"Go island\"], handlers = {{ Unreachable = [\"{word}\"] }} }} }}"
        ));
        assert!(scenario(&text).build(&Overrides::default()).is_ok());
        let text = CORRIDOR.replace(
            "[world]\n",
            &format!("[world]\ndefault_handler = [\"Wait 1\", \"{word}\"]\n"),
        );
        assert!(scenario(&text).build(&Overrides::default()).is_ok());
    }
    // A script put in by hand (not checked) fails there instead of stalling: the default
    // handler (Abort) ends it.
    let mut sim = build(CORRIDOR);
    let w = sim.world_mut();
    let r = w.spawn("robot");
    w.pose.insert(r, SwarmPose::default());
    w.custom_mut::<Script>()
        .insert(r, Script::new(&["Skip", "Log x"]).unwrap());
    let s = sim.run();
    assert_eq!((s.scripts_done, s.scripts_failed), (0, 1), "{s:?}");
    assert!(s.killed && s.simulated_seconds < 1.0, "{s:?}");
}

/// A loop of instructions that finish at once runs `MAX_STEPS_AT_ONCE` of them a frame
/// (documented), and the run goes on.
#[test]
fn a_loop_of_instant_instructions_runs_a_bounded_number_a_frame() {
    use simrob_swarm::script::MAX_STEPS_AT_ONCE;
    let mut sim = build(&with_robot(
        r#"components = { Script = ["Log a", "Loop"] }"#,
    ));
    assert!(sim.step());
    let logged = sim.ctx.logs.iter().filter(|l| l.text == "a").count();
    assert_eq!(logged, MAX_STEPS_AT_ONCE / 2, "Log and Loop each count");
    assert!(sim.step());
    assert_eq!(sim.ctx.logs.len(), MAX_STEPS_AT_ONCE);
}

/// Moves its entity 1 to the right on every `Nudge` event: an event that changes the world.
struct Nudger(simrob_swarm::EntityId);

impl simrob_swarm::System for Nudger {
    fn name(&self) -> &str {
        "nudger"
    }
    fn wants(&self, event: &Event) -> bool {
        event.tag == Tag::new("Nudge")
    }
    fn react(&mut self, _event: &Event, ctx: &mut simrob_swarm::Ctx) {
        if let Some(p) = ctx.world.pose.get_mut(self.0) {
            p.x += 1.0;
        }
    }
}

#[test]
fn events_due_at_the_end_are_not_handled_whatever_else_is_queued() {
    // 1 s at 10 fps: frames at 0, 0.1, …, 0.9. Nudges before the end (one between the last
    // frame and the end) happen; the one due exactly at the end does not, with or without
    // an observer's event queued just before it.
    let run = |observer_at: Option<f64>| {
        let mut w = SwarmWorld::new(200.0, 100.0);
        let a = w.spawn("robot");
        w.pose.insert(
            a,
            SwarmPose {
                x: 50.0,
                y: 50.0,
                theta: 0.0,
            },
        );
        let mut sim = Simulation::new(
            w,
            SimConfig {
                fps: 10.0,
                duration: Some(1.0),
                ..SimConfig::default()
            },
        );
        sim.add_system(Box::new(Nudger(a)));
        for t in [0.5, 0.95, 1.0] {
            sim.schedule(t, Event::global(Tag::new("Nudge")));
        }
        if let Some(t) = observer_at {
            sim.schedule(t, Event::observation(Tag::new("Look")));
        }
        let s = sim.run();
        (
            s.events,
            s.frames,
            s.killed,
            sim.world().pose.get(a).unwrap().x,
        )
    };
    let plain = run(None);
    assert_eq!(plain, (2, 10, false, 52.0));
    for t in [0.93, 0.97, 0.999_999] {
        assert_eq!(run(Some(t)), plain, "an observer's event at {t} s");
    }
}

#[test]
fn every_snapshot_is_stamped_with_the_time_of_its_poses_and_none_is_lost() {
    // A robot at a constant 20 map units a second, snapshots every 0.1 s for 10 s: at 10 fps
    // one a frame; at 24 fps at the first frame at or after each 0.1 s (0, 0.125, 0.208…).
    for fps in [10.0, 24.0, 7.0] {
        let text = format!(
            "fps = {fps}\nduration = 10\n[world]\nwidth = 400\nheight = 300\n\
             [[entities]]\ntype = \"robot\"\nname = \"r\"\nposition = [50, 150]\nradius = 5\n\
             components = {{ Velocity = [20, 0] }}\n"
        );
        let mut sim = build(&text);
        let log = Arc::new(Mutex::new(MemoryConsumer::default()));
        sim.add_system(Box::new(Seer::new("t", 0.1, vec![Box::new(log.clone())])));
        sim.run();
        let log = log.lock().unwrap();
        let frames: Vec<u64> = log.snapshots.iter().map(|s| s.frame).collect();
        // 0, 0.1, …, 9.9 s and the end (10 s); at 7 fps some 0.1 s share a frame, and 9.9 s
        // falls on the end's.
        let mut want: Vec<u64> = (0..100)
            .map(|k| (f64::from(k) / 10.0 * fps - 1e-9).ceil() as u64)
            .collect();
        want.push((10.0 * fps) as u64);
        want.dedup();
        assert_eq!(frames, want, "{fps} fps");
        for s in &log.snapshots {
            assert_eq!(s.t, s.frame as f64 / fps, "{fps} fps, frame {}", s.frame);
            let x = s.entities[0].x;
            assert!(
                (x - (50.0 + 20.0 * s.t)).abs() < 1e-6,
                "{fps} fps: x = {x} at {} s",
                s.t
            );
        }
    }
}

/// Positions outside the world, unknown entity types and bad numbers of `[world]` and the
/// generator are refused when the scenario is loaded or built, naming what and where.
#[test]
fn outside_positions_unknown_types_and_bad_numbers_are_refused() {
    let e = load_error;
    let entity = |kind: &str, at: &str| {
        e(&format!(
            "{CORRIDOR}\n[[entities]]\ntype = \"{kind}\"\nname = \"r1\"\nposition = {at}\n"
        ))
    };
    // CORRIDOR's world is 300 × 100.
    for (kind, at, want) in [
        (
            "robot",
            "[5000, 50]",
            "scenario: entities[0] (r1): position (5000, 50) is outside the 300 × 100 world",
        ),
        (
            "robot",
            "[1e308, 1e308]",
            "scenario: entities[0] (r1): position (1e308, 1e308) is outside the 300 × 100 world",
        ),
        (
            "item",
            "[-1, 50]",
            "scenario: entities[0] (r1): position (-1, 50) is outside the 300 × 100 world",
        ),
        (
            "poi",
            "[20, 100.5]",
            "scenario: entities[0] (r1): position (20, 100.5) is outside the 300 × 100 world",
        ),
        (
            "robto",
            "[20, 50]",
            "scenario: entities[0] (r1): unknown type \"robto\" (known: robot, drone, item \
             (or pickable), poi, wall)",
        ),
    ] {
        assert_eq!(entity(kind, at), want, "{kind} at {at}");
    }
    // On the world's edge is inside; HMR Sim's `pickable` is an item.
    assert_eq!(entity("robot", "[300, 0]"), "");
    let sim = build(&format!(
        "{CORRIDOR}\n[[entities]]\ntype = \"pickable\"\nname = \"box\"\nposition = [30, 50]\n"
    ));
    let b = sim.world().find("box").unwrap();
    assert!(sim.world().item.has(b));
    assert_eq!(sim.world().kind_name(b), "item");

    let world = |extra: &str| e(&format!("[world]\nwidth = 400\nheight = 300\n{extra}"));
    for (extra, want) in [
        (
            "pois = { shelf = [3000, 200] }",
            "scenario: world.pois.shelf: position (3000, 200) is outside the 400 × 300 world",
        ),
        (
            "paths = [[[50, 50], [300, 50], [nan, 200]]]",
            "scenario: world.paths[0][2]: a map-path's points must be finite numbers, found \
             (NaN, 200)",
        ),
        (
            "paths = [[[50, 50], [300, 500]]]",
            "scenario: world.paths[0][1]: map-path point: position (300, 500) is outside the \
             400 × 300 world",
        ),
        (
            "nav = { merge_radius = -8 }",
            "scenario: world.nav.merge_radius must be a non-negative number of map units, found -8",
        ),
        (
            "nav = { max_off_path = nan, extend = true }",
            "scenario: world.nav.max_off_path must be a non-negative number of map units, found \
             NaN",
        ),
        (
            "walls = [[0, 0, inf, 10]]",
            "scenario: world.walls[0]: a wall needs a finite position and a positive width and \
             height, found position (0, 0), size inf × 10",
        ),
    ] {
        assert_eq!(world(extra), want, "{extra}");
    }
    let m = e("[generator]\nkind = \"drone-swarm\"\nproximity_beams = 4\nproximity_range = -15\n");
    assert_eq!(
        m,
        "scenario: generator.proximity_range must be a positive number of map units, found -15"
    );
}
