//! The drone swarm's flight and safety promise: a drone flies straight at its target, and
//! with ORCA no two drones that start apart ever overlap, however dense the crowd (packed
//! hovering drones, flying drones pushing through them, drones pressed together, the
//! disturbance firing).

use simrob_math::hash_u01;
use simrob_swarm::drones::{Drone, DroneController, DroneState};
use simrob_swarm::ecs::{SwarmPose, Velocity};
use simrob_swarm::geom::overlaps;
use simrob_swarm::systems::{CollisionSystem, MovementSystem, StopOnCollision};
use simrob_swarm::{Shape, SimConfig, Simulation, SwarmWorld};

const SIZE: f64 = 5.0;
/// The disc a drone's ORCA sees around its square.
const RADIUS: f64 = SIZE * std::f64::consts::SQRT_2 / 2.0 + 0.1;

/// A drone to place: start, target, and whether it starts at its target, hovering.
#[derive(Clone, Copy, Debug)]
struct Spec {
    at: (f64, f64),
    target: (f64, f64),
    hovering: bool,
}

/// A world of `w × h` with these drones in the swarm's pipeline (movement, collision, stop
/// on collision, the drone controller), on `threads` threads.
fn crowd(w: f64, h: f64, drones: &[Spec], seed: u64, threads: usize) -> Simulation {
    let mut world = SwarmWorld::new(w, h);
    for s in drones {
        let e = world.spawn("drone");
        world.pose.insert(
            e,
            SwarmPose {
                x: s.at.0,
                y: s.at.1,
                theta: 0.0,
            },
        );
        world.vel.insert(e, Velocity::default());
        world.set_collider(
            e,
            Shape::Box {
                hw: SIZE / 2.0,
                hh: SIZE / 2.0,
            },
        );
        world.stop_on_collision.insert(e, ());
        world.custom_mut::<Drone>().insert(
            e,
            Drone {
                target: s.target,
                state: if s.hovering {
                    DroneState::Hovering
                } else {
                    DroneState::Flying
                },
                reported: s.hovering,
                ..Drone::default()
            },
        );
    }
    let config = SimConfig {
        fps: 24.0,
        duration: None,
        seed,
        end_when_done: false,
        threads,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(world, config);
    sim.add_system(Box::new(MovementSystem));
    sim.add_system(Box::new(CollisionSystem::default()));
    sim.add_system(Box::new(StopOnCollision));
    sim.add_system(Box::new(DroneController::new(SIZE)));
    sim
}

/// The first pair of drones whose squares overlap, if any (brute force, independent of the
/// grid and of the collision system).
fn first_overlap(sim: &Simulation) -> Option<(u32, u32)> {
    let w = sim.world();
    let poses: Vec<_> = w.pose.iter().map(|(e, p)| (e.0, *p)).collect();
    let s = Shape::Box {
        hw: SIZE / 2.0,
        hh: SIZE / 2.0,
    };
    for (k, &(a, pa)) in poses.iter().enumerate() {
        for &(b, pb) in &poses[k + 1..] {
            if overlaps(s, pa.x, pa.y, s, pb.x, pb.y) {
                return Some((a, b));
            }
        }
    }
    None
}

/// What went wrong in a run: the frame, the pair and their states.
fn describe(sim: &Simulation, (a, b): (u32, u32)) -> String {
    let w = sim.world();
    let drones = w.custom::<Drone>().expect("drones");
    let one = |i: u32| {
        let e = simrob_swarm::EntityId(i);
        let p = w.pose.get(e).copied().unwrap_or_default();
        let d = drones.get(e).copied().unwrap_or_default();
        format!(
            "#{i} at ({:.3}, {:.3}) {:?} target ({:.1}, {:.1})",
            p.x, p.y, d.state, d.target.0, d.target.1
        )
    };
    format!("frame {}: {} and {}", sim.frame(), one(a), one(b))
}

/// Runs `frames` frames; the first overlap, described, if any.
fn overlap_within(sim: &mut Simulation, frames: u64) -> Option<String> {
    if let Some(pair) = first_overlap(sim) {
        return Some(format!("overlap at the start: {}", describe(sim, pair)));
    }
    for _ in 0..frames {
        sim.step();
        if let Some(pair) = first_overlap(sim) {
            return Some(describe(sim, pair));
        }
    }
    let s = sim.summary(0.0);
    (s.collisions > 0 || s.crashed > 0).then(|| format!("collision events: {s:?}"))
}

/// A uniform number in `[lo, hi)` from the test's own seeded stream.
fn draw(seed: u64, k: &mut u64, lo: f64, hi: f64) -> f64 {
    *k += 1;
    lo + (hi - lo) * hash_u01(seed, 77, 0, *k)
}

/// Hovering drones on a square lattice a little wider than two discs, each pressing
/// towards a target a little off its place (towards its neighbours), with flying drones
/// crossing the lattice from the left to the right.
fn lattice_with_crossers(seed: u64) -> (f64, f64, Vec<Spec>) {
    let mut k = 0;
    let spacing = 2.0 * RADIUS + draw(seed, &mut k, 0.0, 1.5);
    let (cols, rows) = (8, 8);
    let (x0, y0) = (60.0, 30.0);
    let pull = draw(seed, &mut k, 0.0, 4.0);
    let mut out = Vec::new();
    for r in 0..rows {
        for c in 0..cols {
            let at = (x0 + spacing * c as f64, y0 + spacing * r as f64);
            let a = draw(seed, &mut k, 0.0, std::f64::consts::TAU);
            out.push(Spec {
                at,
                target: (at.0 + pull * a.cos(), at.1 + pull * a.sin()),
                hovering: true,
            });
        }
    }
    // Crossers in three columns 10 apart, 9 apart in each column (discs clear).
    let crossers = 6 + (draw(seed, &mut k, 0.0, 10.0) as usize);
    for c in 0..crossers {
        let y = y0 - 5.0 + 9.0 * (c / 3) as f64 + draw(seed, &mut k, 0.0, 1.0);
        let at = (10.0 + 10.0 * (c % 3) as f64, y);
        let ty = y0 + draw(seed, &mut k, 0.0, spacing * rows as f64);
        out.push(Spec {
            at,
            target: (x0 + spacing * cols as f64 + 30.0, ty),
            hovering: false,
        });
    }
    (
        x0 + spacing * cols as f64 + 60.0,
        y0 + spacing * rows as f64 + 30.0,
        out,
    )
}

/// Drones all flying to targets inside one small patch (more drones than fit), from all
/// around: a jam of flying and (once some arrive) hovering drones pressing together.
fn converging_jam(seed: u64) -> (f64, f64, Vec<Spec>) {
    let mut k = 0;
    let n = 20 + draw(seed, &mut k, 0.0, 30.0) as usize;
    let (cx, cy) = (100.0, 100.0);
    let patch = draw(seed, &mut k, 5.0, 25.0);
    let mut out: Vec<Spec> = Vec::new();
    while out.len() < n {
        let a = draw(seed, &mut k, 0.0, std::f64::consts::TAU);
        let r = draw(seed, &mut k, 40.0, 85.0);
        let at = (cx + r * a.cos(), cy + r * a.sin());
        // Start apart (discs clear).
        if out.iter().any(|s| {
            let (dx, dy) = (s.at.0 - at.0, s.at.1 - at.1);
            dx * dx + dy * dy < (2.0 * RADIUS + 0.5).powi(2)
        }) {
            continue;
        }
        let target = (
            cx + draw(seed, &mut k, -patch, patch),
            cy + draw(seed, &mut k, -patch, patch),
        );
        out.push(Spec {
            at,
            target,
            hovering: false,
        });
    }
    (200.0, 200.0, out)
}

/// Hovering drones packed at gap ≈ 0 (discs touching, some on the diagonal), each pressing
/// into its neighbours: the tightest crowd the safety step allows.
fn pressed_hoverers(seed: u64) -> (f64, f64, Vec<Spec>) {
    let mut k = 0;
    let mut out = Vec::new();
    let (cx, cy) = (60.0, 60.0);
    // Touching discs on a square lattice turned by a random angle (diagonal pairs included).
    let turn = draw(seed, &mut k, 0.0, std::f64::consts::FRAC_PI_2);
    let (s, c) = turn.sin_cos();
    let d = 2.0 * RADIUS + 1e-6;
    for r in -2..=2 {
        for q in -2..=2 {
            let (u, v) = (d * q as f64, d * r as f64);
            let at = (cx + u * c - v * s, cy + u * s + v * c);
            out.push(Spec {
                at,
                target: (cx, cy),
                hovering: true,
            });
        }
    }
    (120.0, 120.0, out)
}

/// Drones flying into a corner of the map to targets near (and beyond) its walls: a jam
/// pressed against the walls, where the map's edge stops a drone's move.
fn cornered(seed: u64) -> (f64, f64, Vec<Spec>) {
    let mut k = 0;
    let n = 15 + draw(seed, &mut k, 0.0, 25.0) as usize;
    let mut out: Vec<Spec> = Vec::new();
    while out.len() < n {
        let at = (
            draw(seed, &mut k, 20.0, 110.0),
            draw(seed, &mut k, 20.0, 110.0),
        );
        if out.iter().any(|s| {
            let (dx, dy) = (s.at.0 - at.0, s.at.1 - at.1);
            dx * dx + dy * dy < (2.0 * RADIUS + 0.5).powi(2)
        }) {
            continue;
        }
        let target = (
            draw(seed, &mut k, -10.0, 12.0),
            draw(seed, &mut k, -10.0, 12.0),
        );
        out.push(Spec {
            at,
            target,
            hovering: false,
        });
    }
    (120.0, 120.0, out)
}

#[test]
fn the_disturbance_never_pushes_pressed_drones_into_each_other() {
    // The reduced case: four hovering drones in a diamond (each touching two others on a
    // diagonal, where the squares' corners leave the least room), all pressing towards the
    // diamond's centre, their common target, the safety step holding them at gap 0. The
    // periodic disturbance adds its push to the velocity the safety step chose; uncut, a
    // push towards a neighbour went past the step's limit and nothing took it back (a pair
    // whose discs overlap may not come nearer, but nothing parts it either), so the
    // overlap grew push by push until two squares touched.
    let d = 2.0 * RADIUS + 1e-9;
    let c = d / std::f64::consts::SQRT_2;
    for seed in 1..=8 {
        let centre = (50.0, 50.0);
        let drones: Vec<Spec> = [(-c, 0.0), (c, 0.0), (0.0, -c), (0.0, c)]
            .into_iter()
            .map(|(ox, oy)| Spec {
                at: (centre.0 + ox, centre.1 + oy),
                target: centre,
                hovering: true,
            })
            .collect();
        let mut sim = crowd(100.0, 100.0, &drones, seed, 1);
        if let Some(what) = overlap_within(&mut sim, 120 * 24) {
            panic!("seed {seed}: {what}");
        }
    }
}

#[test]
fn a_drone_stopped_by_the_map_edge_never_slides_into_a_neighbour() {
    // The reduced case: two drones flying down the left edge of the map to targets beyond
    // it (so they keep pressing against it), one just below and to the right of the other.
    // The upper one's velocity kept the safety step's limit towards the lower one only
    // because part of it led left, away from it; the movement system stops it at the edge
    // and takes that part away, and what is left carried it into its neighbour.
    let c = (2.0 * RADIUS + 0.5) / std::f64::consts::SQRT_2;
    for seed in 1..=4 {
        let drones = [
            Spec {
                at: (2.5, 40.0),
                target: (-30.0, 72.5),
                hovering: false,
            },
            Spec {
                at: (2.5 + c, 40.0 + c),
                target: (-30.0, 80.0),
                hovering: false,
            },
        ];
        let mut sim = crowd(100.0, 100.0, &drones, seed, 1);
        if let Some(what) = overlap_within(&mut sim, 20 * 24) {
            panic!("seed {seed}: {what}");
        }
    }
}

#[test]
fn no_two_drones_ever_overlap_in_a_dense_crowd() {
    type Family = fn(u64) -> (f64, f64, Vec<Spec>);
    let families: [(&str, Family, u64); 4] = [
        ("cornered", cornered, 40 * 24),
        ("pressed hoverers", pressed_hoverers, 40 * 24),
        (
            "hovering lattice with crossers",
            lattice_with_crossers,
            40 * 24,
        ),
        ("converging jam", converging_jam, 60 * 24),
    ];
    let seeds: u64 = std::env::var("DRONE_SAFETY_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    let mut failures = Vec::new();
    for (name, family, frames) in families {
        for seed in 1..=seeds {
            let (w, h, drones) = family(seed);
            let mut sim = crowd(w, h, &drones, seed, 1);
            if let Some(what) = overlap_within(&mut sim, frames) {
                failures.push(format!("{name}, seed {seed}: {what}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_lone_drone_flies_straight_at_its_target_at_top_speed() {
    // Not HMR Sim's 45° and then along one axis: straight, so that drones bound for one
    // column of targets do not end in one file.
    let top = 2.5 * std::f64::consts::SQRT_2;
    for (start, target) in [
        ((20.0, 20.0), (520.0, 220.0)),
        ((500.0, 30.0), (40.0, 370.0)),
        ((300.0, 380.0), (310.0, 20.0)),
    ] {
        let spec = Spec {
            at: start,
            target,
            hovering: false,
        };
        let mut sim = crowd(600.0, 400.0, &[spec], 7, 1);
        let (lx, ly) = (target.0 - start.0, target.1 - start.1);
        let length = (lx * lx + ly * ly).sqrt();
        let mut frames = 0u32;
        loop {
            sim.step();
            frames += 1;
            let (_, d) = sim
                .world()
                .custom::<Drone>()
                .expect("drones")
                .iter()
                .next()
                .expect("one drone");
            let p = sim.world().pose.iter().next().expect("a pose").1;
            let (px, py) = (p.x - start.0, p.y - start.1);
            let off_line = (px * ly - py * lx).abs() / length;
            assert!(
                off_line < 1e-6,
                "{start:?} → {target:?}: {off_line} off the line"
            );
            if d.state == DroneState::Hovering {
                break;
            }
            assert!(frames < 1000, "{start:?} → {target:?}: not arrived");
        }
        // It reports once within 5 of its target, at top speed all the way there (the
        // first frame only takes off).
        let expected = ((length - 5.0) / top).ceil() as u32 + 1;
        assert!(
            frames.abs_diff(expected) <= 1,
            "{start:?} → {target:?}: {frames} frames, {expected} at top speed"
        );
    }
}
