//! SimRob server figures, printed:
//!
//! * lockstep iterations per second on loopback with 1 and 6 synchronous agents on the soccer
//!   scene (field, ball, SumBot): each agent waits for the broadcast, decodes it, sends a
//!   Robot_Motor_Control and Synchronize; the server waits for all of them every iteration;
//! * Robot_Motor_Control requests decoded and applied per second (the server core, no
//!   sockets).
//!
//! Each figure is given per wall-clock second and per processor second (Linux: the process's
//! user + system time from `/proc/self/stat` for lockstep, where the server and the agents
//! are threads of this process; the measuring thread's for the server core), so a busy
//! machine shows in the wall-clock rate more than in the other.
//!
//! Run: `cargo bench -p simrob-server --bench simrob_lockstep`.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use simrob_client::agent::{Agent, AgentOptions};
use simrob_protocol::{
    decode_datagram, encode_request, CommandKeys, ControlRequest, EntityId, EntityRequest,
    MotorCommand, Request,
};
use simrob_server::files::DirStore;
use simrob_server::udp::UdpServer;
use simrob_session::{LocalCommand, ServerConfig, Session};

/// What a measurement did, per wall-clock second and per processor second.
struct Rate {
    count: f64,
    wall: f64,
    cpu: f64,
}

fn soccer_requests() -> Vec<Request> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/soccer.xml");
    let bytes = std::fs::read(path).expect("scenario");
    decode_datagram(&bytes, &CommandKeys::default())
        .into_iter()
        .map(|r| r.expect("decodes"))
        .collect()
}

fn save_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("simrob-bench-{}", std::process::id()))
}

fn core() -> Session {
    let config = ServerConfig {
        receiver_port: 0,
        save_directory: save_dir(),
        ..ServerConfig::default()
    };
    let mut core = Session::new(config);
    for r in soccer_requests() {
        core.handle_command(LocalCommand::Request(r), Instant::now())
            .expect("scenario");
    }
    core
}

fn lockstep(agents: usize, seconds: f64) -> Rate {
    let store = DirStore::new(save_dir()).expect("dir");
    let mut server = UdpServer::bind(core(), Box::new(store)).expect("bind");
    let addr: SocketAddr = server.local_addr().expect("addr");
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::spawn(move || {
        server.run(&flag).expect("serve");
        server.session().world().iteration()
    });
    let mut clients = Vec::new();
    for i in 0..agents {
        let mut a = Agent::connect(addr).expect("connect");
        a.register(
            &format!("agent{i}"),
            AgentOptions {
                sync: true,
                ..AgentOptions::default()
            },
        )
        .expect("register");
        clients.push(a);
    }
    clients[0]
        .control(ControlRequest::SetSyncMode(true), false)
        .expect("sync mode");
    clients[0]
        .control(ControlRequest::SetSyncWait(1.0), false)
        .expect("sync wait");
    let running = Arc::new(AtomicBool::new(true));
    let handles: Vec<_> = clients
        .into_iter()
        .map(|mut a| {
            let running = running.clone();
            std::thread::spawn(move || {
                let mut n = 0u64;
                while running.load(Ordering::Relaxed) {
                    let Ok(Some(b)) = a.next_broadcast(Duration::from_millis(200)) else {
                        continue;
                    };
                    let speed = (b.iteration % 7) as f64;
                    let _ = a.entity(
                        EntityRequest::RobotMotorControl {
                            entity_id: EntityId(3),
                            motors: vec![
                                MotorCommand {
                                    wheel_joint_id: 0,
                                    value: speed,
                                },
                                MotorCommand {
                                    wheel_joint_id: 1,
                                    value: -speed,
                                },
                            ],
                        },
                        false,
                    );
                    let _ = a.synchronize(b.iteration);
                    n += 1;
                }
                n
            })
        })
        .collect();
    let starter = Agent::connect(addr).expect("connect");
    starter
        .control(ControlRequest::InitializeSimulation, false)
        .expect("init");
    // Warm up, then count iterations over the measured window.
    std::thread::sleep(Duration::from_millis(300));
    let probe = |a: &mut Agent| -> u64 {
        a.register(
            "probe",
            AgentOptions {
                sync: false,
                broadcast: 0.0,
                ..AgentOptions::default()
            },
        )
        .expect("probe");
        let it = a
            .next_broadcast(Duration::from_secs(2))
            .ok()
            .flatten()
            .map(|b| b.iteration)
            .unwrap_or(0);
        a.register(
            "probe",
            AgentOptions {
                sync: false,
                broadcast: -1.0,
                ..AgentOptions::default()
            },
        )
        .expect("probe off");
        it
    };
    let mut p = Agent::connect(addr).expect("connect");
    let i0 = probe(&mut p);
    let (t0, c0) = (
        Instant::now(),
        simrob_benchkit::process_cpu().unwrap_or(f64::NAN),
    );
    std::thread::sleep(Duration::from_secs_f64(seconds));
    let i1 = probe(&mut p);
    let rate = Rate {
        count: (i1 - i0) as f64,
        wall: t0.elapsed().as_secs_f64(),
        cpu: simrob_benchkit::process_cpu().unwrap_or(f64::NAN) - c0,
    };
    running.store(false, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    stop.store(true, Ordering::Relaxed);
    let _ = thread.join();
    rate
}

fn motor_control_rate() -> Rate {
    let mut core = core();
    let keys = CommandKeys::default();
    let datagrams: Vec<Vec<u8>> = (0..1000)
        .map(|i| {
            encode_request(
                &Request::Entity {
                    request: EntityRequest::RobotMotorControl {
                        entity_id: EntityId(3),
                        motors: vec![
                            MotorCommand {
                                wheel_joint_id: 0,
                                value: i as f64 * 0.01,
                            },
                            MotorCommand {
                                wheel_joint_id: 1,
                                value: -(i as f64) * 0.01,
                            },
                        ],
                    },
                    response: Some(false),
                },
                &keys,
            )
            .into_bytes()
        })
        .collect();
    let from: SocketAddr = "127.0.0.1:9".parse().expect("addr");
    let now = Instant::now();
    let rounds = 300;
    let (t0, c0) = (
        Instant::now(),
        simrob_benchkit::thread_cpu().unwrap_or(f64::NAN),
    );
    for _ in 0..rounds {
        for d in &datagrams {
            core.handle_datagram(from, d, now);
        }
        while core.poll_transmit().is_some() {}
    }
    let (wall, cpu) = (
        t0.elapsed().as_secs_f64(),
        simrob_benchkit::thread_cpu().unwrap_or(f64::NAN) - c0,
    );
    assert_eq!(core.stats().errors, 0);
    Rate {
        count: (rounds * datagrams.len()) as f64,
        wall,
        cpu,
    }
}

fn main() {
    // `cargo test --benches` passes --bench-less arguments; keep it quick there.
    let quick = std::env::args().any(|a| a == "--test");
    let seconds = if quick { 0.3 } else { 3.0 };
    println!(
        "{:<52} {:>9} {:>8} {:>8} {:>12} {:>12}",
        "measurement", "done", "wall s", "CPU s", "per wall s", "per CPU s"
    );
    let row = |what: &str, r: Rate| {
        println!(
            "{what:<52} {:>9.0} {:>8.2} {:>8.2} {:>12.0} {:>12.0}",
            r.count,
            r.wall,
            r.cpu,
            r.count / r.wall,
            r.count / r.cpu
        );
    };
    row(
        "Robot_Motor_Control decoded and applied (requests)",
        motor_control_rate(),
    );
    for agents in [1, 6] {
        row(
            &format!("lockstep, {agents} synchronous agent(s), soccer (iterations)"),
            lockstep(agents, seconds),
        );
    }
}
