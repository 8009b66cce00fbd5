//! `physicsthreads`: a session whose physics steps on two threads runs as one on one thread,
//! body for body and bit for bit (the soccer scene and 24 SumBots driving in circles among
//! each other, 300 iterations driven through the sans-IO session).

use std::time::Instant;

use simrob_protocol::EntityId;
use simrob_session::{ServerConfig, Session};

use crate::common::{addr, control, drain, register, SOCCER};

const SUMBOT: &str = include_str!("../../../../scenarios/sumbot.xml");

/// SumBot `id` of `sumbot.xml`, moved `x` metres along the field.
fn sumbot(id: u32, x: f64) -> String {
    SUMBOT
        .replace(
            "<Entity_id>3</Entity_id>",
            &format!("<Entity_id>{id}</Entity_id>"),
        )
        .replace(
            "<Position_X>0</Position_X>",
            &format!("<Position_X>{x}</Position_X>"),
        )
}

fn motors(id: u32, left: f64, right: f64) -> String {
    control(&format!("<Entity_Request Command=\"Robot_Motor_Control\"><Entity_Id>{id}</Entity_Id><Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>{left}</Value></Motor><Motor><Wheel_Joint_Id>1</Wheel_Joint_Id><Value>{right}</Value></Motor></Motors></Entity_Request>"))
}

/// Every body's position, orientation and velocities after 300 iterations, as bits, and the
/// threads the world stepped on.
fn run(threads: usize) -> (Vec<u64>, usize) {
    let mut config = ServerConfig::default();
    config
        .set("physicsthreads", &threads.to_string())
        .expect("physicsthreads");
    let mut s = Session::new(config);
    let t0 = Instant::now();
    let me = addr("127.0.0.1:5001");
    s.handle_datagram(me, SOCCER.as_bytes(), t0);
    // An agent registered: the session steps as fast as it is asked to.
    s.handle_datagram(me, register("me", "127.0.0.1", 5001, 0.0).as_bytes(), t0);
    let robots: Vec<u32> = (0..24).map(|i| 100 + i).collect();
    for (i, &id) in robots.iter().enumerate() {
        // 8.5 cm apart along the field, 12 each side of the scene's own SumBot: circling,
        // they run into each other.
        let x = 0.115 + 0.085 * (i % 12) as f64;
        let x = if i < 12 { -x } else { x };
        s.handle_datagram(me, sumbot(id, x).as_bytes(), t0);
        let (l, r) = if i % 2 == 0 { (3.0, 5.0) } else { (5.0, 3.0) };
        s.handle_datagram(me, motors(id, l, r).as_bytes(), t0);
    }
    s.handle_datagram(
        me,
        control("<Control_Request Command=\"Initialize_Simulation\"/>").as_bytes(),
        t0,
    );
    drain(&mut s);
    assert_eq!(s.world().entity_ids().count(), 3 + robots.len());
    for _ in 0..300 {
        assert!(s.handle_timeout(t0));
        drain(&mut s);
    }
    let ids: Vec<EntityId> = s.world().entity_ids().collect();
    let mut bits = Vec::new();
    for id in ids {
        for body in 0..3 {
            if let Some(b) = s.world().body_state(id, body) {
                for v in b
                    .position
                    .iter()
                    .chain(&b.orientation)
                    .chain(&b.linear_velocity)
                    .chain(&b.angular_velocity)
                {
                    bits.push(v.to_bits());
                }
            }
        }
    }
    (bits, s.world().physics_threads())
}

#[cfg(feature = "parallel")]
#[test]
fn two_physics_threads_run_as_one() {
    let (one, t1) = run(1);
    let (two, t2) = run(2);
    assert_eq!((t1, t2), (1, 2));
    assert!(one.len() > 24 * 3 * 13, "{} numbers", one.len());
    assert!(one.iter().all(|b| f64::from_bits(*b).is_finite()));
    assert!(
        one == two,
        "the states differ between 1 and 2 physics threads"
    );
}

/// Without parallel physics the key is accepted in its range (the `simrob serve` command
/// refuses to start with it above 1) and the session steps on one thread.
#[cfg(not(feature = "parallel"))]
#[test]
fn without_parallel_physics_two_threads_step_as_one() {
    let (one, t1) = run(1);
    let (two, t2) = run(2);
    assert_eq!((t1, t2), (1, 1));
    assert!(one == two);
}

#[test]
fn physicsthreads_out_of_range_is_refused() {
    let mut c = ServerConfig::default();
    for bad in ["0", "257", "-1", "1.5", "two"] {
        let e = c.set("physicsthreads", bad).expect_err(bad).to_string();
        assert!(e.contains("physicsthreads"), "{e}");
    }
    assert_eq!(c.physics_threads, 1);
    c.set("physicsthreads", "2").expect("2");
    assert_eq!(c.physics_threads, 2);
}
