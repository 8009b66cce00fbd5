//! Physics steps per second: the soccer scene (field, ball, 6 SumBots) and 100 SumBots, dt 0.01.
//!
//! Run: `cargo bench -p simrob-world --bench physics`. One iteration = one physics step here
//! (steps per iteration 1), so iterations/s = steps/s.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use simrob_protocol::EntityId;
use simrob_protocol::{
    decode_datagram, CommandKeys, ControlRequest, EntityRequest, MotorCommand, Request,
};
use simrob_world::{moved_copy, World, WorldConfig};

fn requests(file: &str) -> Vec<Request> {
    let path = format!("{}/../../scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).expect("scenario file");
    decode_datagram(&bytes, &CommandKeys::default())
        .into_iter()
        .map(|r| r.expect("scenario decodes"))
        .collect()
}

/// Field, materials and optionally the ball, plus `robots` SumBots on a grid, all driving in
/// circles of different radii.
fn scene(robots: u32, ball: bool) -> World {
    let mut w = World::new(WorldConfig::default());
    for r in requests("materials.xml")
        .iter()
        .chain(&requests("field.xml"))
    {
        w.apply(r).expect("applies");
    }
    if ball {
        for r in &requests("ball.xml") {
            w.apply(r).expect("applies");
        }
    }
    let Request::Control {
        request: ControlRequest::CreateEntity(sumbot),
        ..
    } = &requests("sumbot.xml")[0]
    else {
        panic!("sumbot.xml holds one Create_Entity");
    };
    let columns = (robots as f64).sqrt().ceil() as u32;
    for i in 0..robots {
        let (cx, cy) = ((i % columns) as f64, (i / columns) as f64);
        let spacing = if robots > 10 { 0.15 } else { 0.4 };
        let offset = [
            (cx - (columns - 1) as f64 / 2.0) * spacing,
            (cy - (columns - 1) as f64 / 2.0) * spacing + 0.1,
            0.0,
        ];
        let id = 100 + i;
        w.apply_control(&ControlRequest::CreateEntity(moved_copy(
            sumbot,
            EntityId(id),
            offset,
        )))
        .expect("robot created");
        let turn = 1.0 + (i % 5) as f64 * 0.5;
        w.apply_entity(&EntityRequest::RobotMotorControl {
            entity_id: EntityId(id),
            motors: vec![
                MotorCommand {
                    wheel_joint_id: 0,
                    value: 3.0,
                },
                MotorCommand {
                    wheel_joint_id: 1,
                    value: 3.0 - turn,
                },
            ],
        })
        .expect("motors");
    }
    w.apply_control(&ControlRequest::InitializeSimulation)
        .expect("init");
    for _ in 0..100 {
        w.advance();
    }
    w
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("physics_steps");
    group.throughput(Throughput::Elements(1));
    let mut soccer = scene(6, true);
    group.bench_function("soccer_field_ball_6_sumbots", |b| {
        b.iter(|| soccer.advance())
    });
    let mut crowd = scene(100, false);
    group.bench_function("field_100_sumbots", |b| b.iter(|| crowd.advance()));
    let mut fast = scene(6, true);
    fast.apply_control(&ControlRequest::SetFastMode(true))
        .expect("fast");
    group.bench_function("soccer_6_sumbots_fast_mode", |b| b.iter(|| fast.advance()));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
