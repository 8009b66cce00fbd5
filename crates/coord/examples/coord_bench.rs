//! Coordination benchmarks (run with `--release`):
//!
//! 1. Contract Net auctions per second with 1,000 robots bidding, in-process, on one core:
//!    the auction mechanics alone (auctioneer + each robot's bidder and Task Manager), and
//!    the whole path (Control Center and robot agents exchanging GRI envelopes).
//! 2. The warehouse with 1,000 robots and 10,000 tasks allocated by Contract Net: simulated
//!    seconds against wall seconds, and the tasks done.
//!
//! `cargo run --release -p simrob-coord --example coord_bench [-- --robots N --tasks N --auctions N]`

use std::path::PathBuf;
use std::time::Instant;

use simrob_coord::cc::{CcConfig, ControlCenter};
use simrob_coord::cnp::{Auctioneer, Bidder, CnpConfig, CnpOut, Euclidean};
use simrob_coord::compare::{run_one, RunSpec};
use simrob_coord::model::{RobotInfo, TaskClass, TaskKind, TaskSpec};
use simrob_coord::robot::{Command, Pose, RobotAgent};
use simrob_coord::sync::TaskBoard;
use simrob_coord::task_manager::TaskManager;
use simrob_coord::wire::{Msg, Policy};
use simrob_swarm::rng::Rng;
use simrob_swarm::scenario::Scenario;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let robots = arg("--robots", 1000);
    let auctions = arg("--auctions", 20_000);
    let tasks = arg("--tasks", 10_000);
    mechanics(robots, auctions);
    whole_path(robots, auctions / 4);
    warehouse(robots, tasks);
}

fn positions(n: usize) -> Vec<(f64, f64)> {
    let mut rng = Rng::new(7);
    (0..n)
        .map(|_| (rng.next_f64() * 1000.0, rng.next_f64() * 1000.0))
        .collect()
}

/// Auctioneer and bidders called directly: announce, 1,000 bids, award, accept.
fn mechanics(robots: usize, auctions: usize) {
    let at = positions(robots);
    let bidders: Vec<Bidder> = (1..=robots as u32).map(Bidder::new).collect();
    let tms: Vec<TaskManager> = (0..robots)
        .map(|_| TaskManager::new(&TaskClass::ALL, None))
        .collect();
    let mut auctioneer = Auctioneer::new(0, CnpConfig::default());
    let mut rng = Rng::new(1);
    let mut won = vec![0u32; robots];
    let mut bids = 0u64;
    let start = Instant::now();
    for k in 0..auctions {
        let task = TaskSpec::new(
            k as u64 + 1,
            TaskKind::Goto {
                x: rng.next_f64() * 1000.0,
                y: rng.next_f64() * 1000.0,
            },
        );
        let id = auctioneer.announce(task.clone(), 1..=robots as u32, 0.0);
        auctioneer.drain().for_each(drop);
        let mut award = None;
        for (i, b) in bidders.iter().enumerate() {
            let cost = b.cost(&task, &tms[i], at[i], &Euclidean);
            auctioneer.on_bid(id, b.robot, cost, 0.0);
            bids += 1;
        }
        for o in auctioneer.drain() {
            if let CnpOut::Send {
                msg: Msg::Award { winner, .. },
                ..
            } = o
            {
                award = Some(winner);
            }
        }
        let winner = award.expect("someone wins");
        auctioneer.on_accept(id, winner, 0.0);
        auctioneer.drain().for_each(drop);
        won[winner as usize - 1] += 1;
    }
    let wall = start.elapsed().as_secs_f64();
    let stats = auctioneer.stats;
    println!(
        "CNP mechanics: {auctions} auctions × {robots} bidders in {wall:.3} s = {:.0} auctions/s ({:.1} M bids/s); allocated {}, robots that won ≥ 1: {}",
        auctions as f64 / wall,
        bids as f64 / wall / 1e6,
        stats.allocated,
        won.iter().filter(|&&w| w > 0).count()
    );
}

/// Control Center and robot agents exchanging envelopes; winners finish their task at once.
fn whole_path(robots: usize, auctions: usize) {
    let at = positions(robots);
    let mut cc = ControlCenter::new(CcConfig {
        policy: Policy::Cnp,
        max_open_auctions: 1,
        ..CcConfig::default()
    });
    let mut agents: Vec<RobotAgent> = (1..=robots as u32)
        .map(|id| {
            RobotAgent::new(RobotInfo {
                robot: id,
                name: format!("r{id}"),
                kind: "bench".into(),
                world: "bench".into(),
                capabilities: vec![TaskClass::Movement],
                speed: 1.0,
            })
        })
        .collect();
    let mut board = TaskBoard::default();
    for a in &agents {
        cc.handle(a.hello(), 0.0).expect("joins");
    }
    cc.drop_logs();
    while cc.poll_transmit().is_some() {}
    let mut rng = Rng::new(2);
    let mut messages = 0u64;
    let start = Instant::now();
    for _ in 0..auctions {
        let task = TaskSpec::new(
            0,
            TaskKind::Goto {
                x: rng.next_f64() * 1000.0,
                y: rng.next_f64() * 1000.0,
            },
        );
        cc.announce(task).expect("announced");
        loop {
            let mut moved = false;
            while let Some(env) = cc.poll_transmit() {
                moved = true;
                messages += 1;
                match env.to {
                    None => {
                        for (i, a) in agents.iter_mut().enumerate() {
                            let pose = Pose {
                                x: at[i].0,
                                y: at[i].1,
                                ..Pose::default()
                            };
                            a.handle(&env, 0.0, pose, &mut board, &Euclidean);
                        }
                    }
                    Some(id) => {
                        let i = id as usize - 1;
                        let pose = Pose {
                            x: at[i].0,
                            y: at[i].1,
                            ..Pose::default()
                        };
                        agents[i].handle(&env, 0.0, pose, &mut board, &Euclidean);
                    }
                }
            }
            for a in agents.iter_mut() {
                while let Some(c) = a.poll_command() {
                    if let Command::Start { task, .. } = c {
                        let _ = a.basic_done(task, Ok(()), 0.0, &mut board);
                    }
                }
                while let Some(env) = a.poll_transmit() {
                    moved = true;
                    messages += 1;
                    let _ = cc.handle(env, 0.0);
                }
            }
            if !moved {
                break;
            }
        }
    }
    let wall = start.elapsed().as_secs_f64();
    let s = cc.cnp_stats();
    let ended = cc
        .tasks()
        .values()
        .filter(|t| t.state == Some(simrob_coord::model::TaskState::Ended))
        .count();
    println!(
        "CNP whole path: {auctions} auctions × {robots} robots in {wall:.3} s = {:.0} auctions/s; {messages} messages, allocated {}, tasks ended {ended}",
        auctions as f64 / wall,
        s.allocated
    );
}

fn warehouse(robots: usize, tasks: usize) {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/swarm/warehouse.toml");
    let scenario = Scenario::load(&path).expect("bundled warehouse");
    let spec = RunSpec {
        policy: Policy::Cnp,
        seed: 1,
        robots: Some(robots),
        tasks,
        max_time: 3600.0,
        batteries: false,
    };
    let start = Instant::now();
    let r = run_one(&scenario, &spec).expect("runs");
    let wall = start.elapsed().as_secs_f64();
    println!(
        "warehouse by CNP: {robots} robots, {tasks} tasks: {:.0} simulated s in {wall:.1} wall s ({:.1}× real time); tasks done {}, failed {}, makespan {}, auctions {}, messages {}",
        r.time,
        r.time / wall,
        r.ended,
        r.failed,
        r.makespan.map(|m| format!("{m:.0} s")).unwrap_or_else(|| "not reached".into()),
        r.cnp.announced,
        r.messages
    );
}
