//! What `--ros2` costs `simrob serve`: iterations per second of a world of 100 SumBots run as
//! fast as possible, without ROS 2 and with the participant publishing each robot's odometry
//! and `/tf` at 50 Hz of simulated time (and `/clock` at 100 Hz) from a loopback-only
//! participant (nobody subscribes: the bridge still builds and RustDDS still serializes
//! every sample).
//!
//! Each line also says what the run left: robots upright, tipped over, fallen off the field.
//!
//! Each figure is per wall second and per processor second of the whole process (the
//! server's thread, the bridge's and RustDDS's), and the iterations are counted over the
//! same wall time for both.
//!
//! Run: `cargo run --release -p simrob-ros2 --example ros2_overhead [SECONDS] [ROBOTS]`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use simrob_protocol::{
    decode_datagram, CommandKeys, ControlRequest, EntityId, EntityRequest, EntitySpec, Request,
};
use simrob_ros2::bridge::Rates;
use simrob_ros2::env::{Discovery, Range};
use simrob_server::files::DirStore;
use simrob_server::udp::UdpServer;
use simrob_session::{ServerConfig, Session};

/// Most SumBots that fit on the field on [`world`]'s grid: 12 × 12 span 1.65 m between the
/// outer chassis' centres, within the field's 1.82 m.
const MAX_ROBOTS: u32 = 144;

/// The materials and field of the SimRob manual and `n` SumBots on a square grid 15 cm apart
/// on the field (100 span 1.35 m × 1.35 m of its 2.8 m × 1.82 m), each driving in a circle of
/// its own radius, as in `simrob-world`'s physics benchmark: circling, they run into each
/// other.
fn world(n: u32) -> Vec<Request> {
    let materials =
        std::fs::read("scenarios/materials.xml").expect("run from the repository's root");
    let field = std::fs::read("scenarios/field.xml").expect("run from the repository's root");
    let sumbot = std::fs::read("scenarios/sumbot.xml").expect("run from the repository's root");
    let keys = CommandKeys::default();
    let mut out: Vec<Request> = decode_datagram(&materials, &keys)
        .into_iter()
        .chain(decode_datagram(&field, &keys))
        .collect::<Result<_, _>>()
        .expect("field.xml decodes");
    let bot: Vec<Request> = decode_datagram(&sumbot, &keys)
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("sumbot.xml decodes");
    let spec = bot
        .iter()
        .find_map(|r| match r {
            Request::Control {
                request: ControlRequest::CreateEntity(s @ EntitySpec::Robot { .. }),
                ..
            } => Some(s.clone()),
            _ => None,
        })
        .expect("a robot in sumbot.xml");
    let columns = f64::from(n).sqrt().ceil() as u32;
    let half = f64::from(columns.max(1) - 1) / 2.0;
    for i in 0..n {
        let mut s = spec.clone();
        if let EntitySpec::Robot {
            entity_id, bodies, ..
        } = &mut s
        {
            *entity_id = EntityId(100 + i);
            for b in bodies.iter_mut() {
                // `sumbot.xml` puts its chassis at y = −0.1.
                b.position[0] += (f64::from(i % columns) - half) * 0.15;
                b.position[1] += (f64::from(i / columns) - half) * 0.15 + 0.1;
            }
        }
        out.push(Request::Control {
            request: ControlRequest::CreateEntity(s),
            response: Some(false),
        });
        out.push(Request::Entity {
            request: EntityRequest::two_wheels(
                EntityId(100 + i),
                3.0,
                3.0 - (1.0 + f64::from(i % 5) * 0.5),
            ),
            response: Some(false),
        });
    }
    out.push(Request::Control {
        request: ControlRequest::InitializeSimulation,
        response: Some(false),
    });
    out
}

struct Figure {
    iterations: u64,
    simulated: f64,
    wall: f64,
    cpu: f64,
    /// The server thread's own processor time.
    server_cpu: f64,
    /// What the run left: robots upright, tipped (chassis tilted over 60°), fallen off the
    /// field (below its top) or not finite.
    upright: u32,
    tipped: u32,
    fallen: u32,
}

fn measure(ros: bool, seconds: f64, robots: u32, dir: &std::path::Path) -> Figure {
    let mut config = ServerConfig {
        receiver_port: 0,
        ..ServerConfig::default()
    };
    config
        .set("realtimefactor", "0")
        .expect("realtimefactor is a key");
    let store = DirStore::new(dir).expect("a save directory");
    let mut server = UdpServer::bind(Session::new(config), Box::new(store)).expect("binds");
    server
        .apply_local(&world(robots))
        .expect("the world builds");
    // The world runs while watched: without ROS, nothing else watches.
    server.session_mut().set_observed(true);
    let _attached = ros.then(|| {
        let (observer, wants, attached) = simrob_ros2::simrob::attach(
            simrob_ros2::simrob::Options {
                discovery: Discovery {
                    domain_id: 200 + (std::process::id() % 30) as u16,
                    range: Range::Localhost,
                    max_participants: simrob_ros2::env::DEFAULT_MAX_PARTICIPANTS,
                    max_sample: simrob_ros2::env::DEFAULT_MAX_SAMPLE,
                },
                rates: Rates {
                    clock: 100.0,
                    odom: 50.0,
                    sensors: 10.0,
                },
                lockstep: false,
                max_velocity: server.session().config().limits.max_velocity,
            },
            server.commands(),
        )
        .expect("the participant starts");
        server.add_sampled_observer(observer, wants);
        attached
    });
    let stop = Arc::new(AtomicBool::new(false));
    let (i0, t0) = (
        server.session().world().iteration(),
        server.session().world().sim_time(),
    );
    let (c0, w0) = (
        simrob_benchkit::process_cpu().unwrap_or(f64::NAN),
        Instant::now(),
    );
    let (server, server_cpu) = std::thread::scope(|s| {
        let h = s.spawn(|| {
            let c = simrob_benchkit::thread_cpu().unwrap_or(f64::NAN);
            server.run(&stop).expect("runs");
            (
                server,
                simrob_benchkit::thread_cpu().unwrap_or(f64::NAN) - c,
            )
        });
        std::thread::sleep(Duration::from_secs_f64(seconds));
        stop.store(true, Ordering::Relaxed);
        h.join().expect("the server thread")
    });
    let (wall, cpu) = (
        w0.elapsed().as_secs_f64(),
        simrob_benchkit::process_cpu().unwrap_or(f64::NAN) - c0,
    );
    let (mut upright, mut tipped, mut fallen) = (0, 0, 0);
    for i in 0..robots {
        match server.session().world().entity_pose(EntityId(100 + i)) {
            Some((p, [roll, pitch, _])) if p.iter().all(|v| v.is_finite()) && p[2] > 0.0 => {
                if (roll.cos() * pitch.cos()).acos() > 60f64.to_radians() {
                    tipped += 1;
                } else {
                    upright += 1;
                }
            }
            _ => fallen += 1,
        }
    }
    Figure {
        upright,
        tipped,
        fallen,
        iterations: server.session().world().iteration() - i0,
        simulated: server.session().world().sim_time() - t0,
        wall,
        cpu,
        server_cpu,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let seconds: f64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let robots: u32 = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    if robots > MAX_ROBOTS {
        eprintln!("ros2_overhead: at most {MAX_ROBOTS} SumBots fit on the field, not {robots}");
        std::process::exit(2);
    }
    let dir = std::env::temp_dir().join(format!("simrob-ros2-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    println!("{robots} SumBots, as fast as possible, {seconds} s each");
    let mut figures = Vec::new();
    for ros in [false, true, false, true] {
        let f = measure(ros, seconds, robots, &dir);
        println!(
            "{:<24} {:>6} iterations ({:.1} simulated s): {:>6.0} it/s wall, {:>6.0} it/s per server-thread processor second, {:>6.0} per process processor second ({:.1} s); robots upright {}, tipped {}, fallen or not finite {}",
            if ros { "--ros2 (odom+tf 50 Hz)" } else { "without ROS 2" },
            f.iterations,
            f.simulated,
            f.iterations as f64 / f.wall,
            f.iterations as f64 / f.server_cpu,
            f.iterations as f64 / f.cpu,
            f.cpu,
            f.upright,
            f.tipped,
            f.fallen
        );
        figures.push((ros, f));
    }
    type Per = fn(&Figure) -> f64;
    let rate = |ros: bool, per: Per| {
        let (n, w) = figures
            .iter()
            .filter(|(r, _)| *r == ros)
            .fold((0.0, 0.0), |(n, w), (_, f)| {
                (n + f.iterations as f64, w + per(f))
            });
        n / w
    };
    let pers: [(&str, Per); 3] = [
        ("wall time", |f| f.wall),
        ("the server thread's processor time", |f| f.server_cpu),
        ("the process's processor time", |f| f.cpu),
    ];
    for (what, per) in pers {
        let (without, with) = (rate(false, per), rate(true, per));
        println!(
            "--ros2: {:.1} % of the iterations per second of {what} without ({:.1} % fewer)",
            100.0 * with / without,
            100.0 * (1.0 - with / without)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
