//! Codec benchmarks: decoding the seed's robot and a motor command, encoding a large
//! broadcast.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use simrob_protocol::*;

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/fixtures/seed000/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn big_broadcast() -> Broadcast {
    let bodies = (0..1000u32)
        .map(|i| {
            let f = f64::from(i);
            BodyState {
                entity_id: EntityId(i / 10),
                id: i % 10,
                shape: Shape::Box {
                    size: [0.075, 0.075, 0.075],
                },
                material: MaterialId(1),
                mass: 1.2,
                position: [f * 0.0123456, -f * 0.0234567, 0.0608945],
                rotation: [-0.0522157, -0.160992, 0.0905903 + f * 1e-4],
                linear_velocity: [-0.0494591, 0.00857543, 0.00130333],
                angular_velocity: [-0.0754428, -0.327948, 0.191968],
            }
        })
        .collect();
    let entities = (0..100u32)
        .map(|i| EntityInfo {
            kind: EntityInfoKind::Robot,
            entity_id: EntityId(i),
            position: [f64::from(i) * 0.01, -0.160992, 0.0608554],
            rotation: [-0.0522157, -0.151389, 0.0905903],
        })
        .collect();
    Broadcast {
        iteration: 123_456,
        part: None,
        bodies,
        entities,
    }
}

fn benches(c: &mut Criterion) {
    let keys = CommandKeys::default();

    let robot = fixture("2_4_1_create_robot.xml");
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Bytes(robot.len() as u64));
    g.bench_function("decode_create_robot", |b| {
        b.iter(|| decode_datagram(black_box(&robot), &keys))
    });
    let motors = fixture("3_2_robot_motor_control.xml");
    g.throughput(Throughput::Bytes(motors.len() as u64));
    g.bench_function("decode_motor_control", |b| {
        b.iter(|| decode_datagram(black_box(&motors), &keys))
    });
    g.finish();

    let broadcast = big_broadcast();
    let mut out = String::new();
    encode_broadcast_into(&broadcast, &mut out);
    let mut g = c.benchmark_group("encode");
    g.throughput(Throughput::Bytes(out.len() as u64));
    g.bench_function("encode_broadcast_1000_bodies", |b| {
        b.iter(|| {
            out.clear();
            encode_broadcast_into(black_box(&broadcast), &mut out);
            out.len()
        })
    });
    g.finish();

    // A broadcast of the soccer scene's size (17 bodies, 2 entities), as agents receive it.
    let small = Broadcast {
        bodies: broadcast.bodies[..17].to_vec(),
        entities: broadcast.entities[..2].to_vec(),
        ..broadcast.clone()
    };
    let small_xml = encode_broadcast(&small);
    let big_xml = out.clone();
    let mut g = c.benchmark_group("decode_broadcast");
    g.throughput(Throughput::Bytes(small_xml.len() as u64));
    g.bench_function("decode_broadcast_17_bodies", |b| {
        b.iter(|| decode_server_message(black_box(small_xml.as_bytes())))
    });
    g.throughput(Throughput::Bytes(big_xml.len() as u64));
    g.bench_function("decode_broadcast_1000_bodies", |b| {
        b.iter(|| decode_server_message(black_box(big_xml.as_bytes())))
    });
    g.finish();
}

criterion_group!(codec, benches);
criterion_main!(codec);
