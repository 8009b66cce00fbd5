//! Benchmark: a 3-vs-3 KidSize match scene with six humanoid brains served their camera
//! broadcasts (proprioception + `paper` camera, encoded as the server sends them).
//!
//! ```sh
//! cargo run --release -p simrob-world --example kidsize_bench -- [SIMULATED_SECONDS]
//! ```
//!
//! Each robot runs a fixed cycle of actions (walk, turn, side-step, head motions, kick) so
//! that bodies move, the ball gets kicked and robots fall and get up. Prints simulated seconds
//! per wall second and per CPU second (the latter is the speed on one free core when the
//! machine is busy) and what the run did.

use simrob_protocol::EntityId;
use std::time::Instant;

use simrob_benchkit::process_cpu as cpu_seconds;
use simrob_protocol::humanoid::encode_brain_broadcast;
use simrob_soccer::camera::CameraProfile;
use simrob_soccer::{ActionStatus, KidSizeField, Posture};
use simrob_world::brain::BrainView;
use simrob_world::{World, WorldConfig};

const CYCLE: [(&str, &[(&str, &str)]); 8] = [
    ("walk", &[("distance", "30")]),
    ("turnHeadVertically", &[("angle", "-30")]),
    ("turn", &[("angle", "40")]),
    ("walkLeft", &[("distance", "8")]),
    ("turnHeadHorizontally", &[("angle", "30")]),
    ("kickRight", &[]),
    ("turn", &[("angle", "-60")]),
    ("walk", &[("distance", "50"), ("gait", "normal")]),
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: f64 = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(120.0);
    let mut world = World::kidsize(WorldConfig::default(), &KidSizeField::default())?;
    let keys = simrob_protocol::CommandKeys::default();
    let teams = include_str!("../../../scenarios/soccer/teams-3v3.xml");
    for r in simrob_protocol::decode_datagram(teams.as_bytes(), &keys) {
        world.apply(&r?)?;
    }
    let ids: Vec<EntityId> = world.humanoid_ids().collect();
    let mut brains: Vec<BrainView> = ids
        .iter()
        .map(|id| BrainView::new(id.0, CameraProfile::paper(), 7))
        .collect();
    let mut next = vec![0usize; ids.len()];
    let (mut bytes, mut frames, mut objects, mut falls, mut actions) = (0usize, 0, 0, 0, 0);
    let mut was_down = vec![false; ids.len()];
    let iterations = (seconds / world.iteration_seconds()).round() as u64;
    let start = Instant::now();
    let cpu_start = cpu_seconds();
    for _ in 0..iterations {
        world.advance();
        let snap = world.soccer_snapshot();
        for (k, brain) in brains.iter_mut().enumerate() {
            let Some(b) = brain.view(world.iteration(), &snap) else {
                continue;
            };
            bytes += encode_brain_broadcast(&b).len();
            if let Some(c) = &b.camera {
                frames += 1;
                objects += c.objects.len();
            }
            let id = ids[k];
            let down = matches!(b.state.posture.as_str(), "fallenFront" | "fallenBack");
            if down && !was_down[k] {
                falls += 1;
            }
            was_down[k] = down;
            let idle = world
                .humanoid(id)
                .map(|h| {
                    h.is_idle() && h.action_state().map(|s| s.status) != Some(ActionStatus::Running)
                })
                .unwrap_or(false);
            if idle {
                let posture = world.humanoid(id).map(|h| h.posture());
                let (name, params): (&str, Vec<(String, String)>) = match posture {
                    Some(Posture::FallenFront) => ("frontGetUp", Vec::new()),
                    Some(Posture::FallenBack) => ("backGetUp", Vec::new()),
                    _ => {
                        let (n, p) = CYCLE[next[k] % CYCLE.len()];
                        next[k] += 1;
                        (
                            n,
                            p.iter()
                                .map(|(a, b)| (a.to_string(), b.to_string()))
                                .collect(),
                        )
                    }
                };
                if world.humanoid_action(id, name, &params).is_ok() {
                    actions += 1;
                }
            }
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds().zip(cpu_start).map(|(b, a)| b - a);
    let sim = world.sim_time();
    let ball = world
        .body_state(simrob_soccer::field::BALL_ENTITY, 0)
        .map(|s| s.position)
        .unwrap_or_default();
    println!(
        "3-vs-3 KidSize scene, six Humanoid_Brain views (paper camera), timestep {} s",
        world.params().timestep
    );
    println!(
        "simulated {sim:.1} s in {wall:.3} s wall: {:.0}x real time ({:.0} iterations/s)",
        sim / wall,
        iterations as f64 / wall
    );
    if let Some(cpu) = cpu {
        println!(
            "on CPU {cpu:.2} s (all threads): {:.0}x real time per CPU second ({:.0} iterations per CPU second)",
            sim / cpu,
            iterations as f64 / cpu
        );
    }
    println!("actions started {actions}, falls {falls}, camera frames {frames} ({objects} objects seen), broadcast bytes {bytes}");
    println!("ball at ({:.2}, {:.2})", ball[0], ball[1]);
    Ok(())
}
