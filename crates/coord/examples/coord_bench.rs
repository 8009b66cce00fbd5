//! Coordination benchmarks (run with `--release`):
//!
//! 1. Contract Net auctions per second with 1,000 robots bidding, in-process, on one core:
//!    the auction mechanics alone (auctioneer + each robot's bidder and Task Manager), and
//!    the whole path (Control Center and robot agents exchanging GRI messages in memory: a
//!    call for bids to every robot, each robot's bid from its own state into the outbox,
//!    award, accept, the task run and its states reported).
//! 2. The warehouse with 1,000 robots (`--warehouse-robots`, several sizes separated by
//!    commas) and 10,000 tasks allocated by Contract Net: simulated seconds against processor
//!    seconds, and what the run did (tasks done and failed, makespan, auctions, messages).
//!
//! `cargo run --release -p simrob-coord --example coord_bench [-- --robots N --tasks N --auctions N
//! --warehouse-robots N[,N…] --only mechanics|whole|warehouse]`
//!
//! `--robots` (default 1,000) is the number of bidders of the first two parts. Every argument
//! is checked before anything runs: an unknown flag or a bad value is an error naming it (exit
//! status 2); `--help` prints the usage.

use std::path::PathBuf;
use std::time::Instant;

use simrob_coord::cc::{Allocation, CcConfig, ControlCenter};
use simrob_coord::cnp::{Auctioneer, Bidder, CnpConfig, CnpOut, Euclidean};
use simrob_coord::compare::{run_one, RunSpec, TaskLimit};
use simrob_coord::model::{RobotInfo, TaskClass, TaskKind, TaskSpec};
use simrob_coord::outbox::Outbox;
use simrob_coord::robot::{Command, RobotAgent, RobotPose};
use simrob_coord::sync::TaskBoard;
use simrob_coord::task_manager::TaskManager;
use simrob_coord::wire::{Msg, Policy};
use simrob_math::Xoshiro256PlusPlus;
use simrob_swarm::scenario::Scenario;

/// Wall time and this thread's processor time (Linux: `/proc/thread-self/schedstat`), so the
/// rate "on one core" is right even when other processes share the machine.
struct Timer {
    wall: Instant,
    cpu: Option<f64>,
}

impl Timer {
    fn start() -> Timer {
        Timer {
            wall: Instant::now(),
            cpu: simrob_benchkit::thread_cpu(),
        }
    }

    /// (wall seconds, processor seconds — the wall time where unknown).
    fn stop(&self) -> (f64, f64) {
        let wall = self.wall.elapsed().as_secs_f64();
        let cpu = match (self.cpu, simrob_benchkit::thread_cpu()) {
            (Some(a), Some(b)) => b - a,
            _ => wall,
        };
        (wall, cpu)
    }
}

/// What `--help` prints.
const USAGE: &str = "\
coord_bench [--robots N] [--auctions N] [--tasks N] [--warehouse-robots N[,N...]] [--only PART]
  --robots N                  bidders of the auction benchmarks, at least 1 (default 1000)
  --auctions N                auctions of the mechanics benchmark, at least 1 (default 20000;
                              the whole path runs half as many)
  --tasks N                   tasks of the warehouse, at least 1 (default 10000)
  --warehouse-robots N[,N...] the warehouse's robots, one run per size (default 1000)
  --only PART                 run one part only: mechanics, whole or warehouse (default all)
  -h, --help                  print this and exit
";

/// The parts of the benchmark, in the order they run.
const PARTS: [&str; 3] = ["mechanics", "whole", "warehouse"];

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
struct Options {
    robots: usize,
    auctions: usize,
    tasks: usize,
    warehouse_robots: Vec<usize>,
    only: Option<&'static str>,
}

type Parsed = simrob_benchkit::Parsed<Options>;

/// Reads the arguments after the program's name; every flag and value is checked here, so
/// nothing runs on a command line with a mistake in it.
fn parse(args: &[String]) -> Result<Parsed, String> {
    let mut o = Options {
        robots: 1000,
        auctions: 20_000,
        tasks: 10_000,
        warehouse_robots: vec![1000],
        only: None,
    };
    let count = |flag: &str, v: &str| -> Result<usize, String> {
        match v.parse::<usize>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "{flag} wants a whole number of at least 1, not {v:?}"
            )),
        }
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let flag = flag.as_str();
        if flag == "--help" || flag == "-h" {
            return Ok(Parsed::Help);
        }
        if ![
            "--robots",
            "--auctions",
            "--tasks",
            "--warehouse-robots",
            "--only",
        ]
        .contains(&flag)
        {
            return Err(format!(
                "unknown argument {flag:?}; the flags are --robots, --auctions, --tasks, --warehouse-robots, --only and --help"
            ));
        }
        let Some(value) = it.next() else {
            return Err(format!("{flag} wants a value (coord_bench --help)"));
        };
        match flag {
            "--robots" => o.robots = count(flag, value)?,
            "--auctions" => o.auctions = count(flag, value)?,
            "--tasks" => o.tasks = count(flag, value)?,
            "--warehouse-robots" => {
                o.warehouse_robots = value
                    .split(',')
                    .map(|n| count(flag, n.trim()))
                    .collect::<Result<_, _>>()
                    .map_err(|_| {
                        format!(
                            "--warehouse-robots wants robot counts of at least 1 separated by commas (1000,10000), not {value:?}"
                        )
                    })?
            }
            _ => {
                o.only = Some(PARTS.into_iter().find(|p| p == value).ok_or_else(|| {
                    format!("--only wants mechanics, whole or warehouse, not {value:?}")
                })?)
            }
        }
    }
    Ok(Parsed::Run(o))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = simrob_benchkit::options_or_exit("coord_bench", USAGE, parse(&args));
    let run = |part: &str| o.only.is_none_or(|only| only == part);
    if run("mechanics") {
        mechanics(o.robots, o.auctions);
    }
    if run("whole") {
        whole_path(o.robots, o.auctions / 2);
    }
    if run("warehouse") {
        for &n in &o.warehouse_robots {
            warehouse(n, o.tasks);
        }
    }
}

fn positions(n: usize) -> Vec<(f64, f64)> {
    let mut rng = Xoshiro256PlusPlus::new(7);
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
    let mut rng = Xoshiro256PlusPlus::new(1);
    let mut won = vec![0u32; robots];
    let mut bids = 0u64;
    let timer = Timer::start();
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
            // (Every robot is invited once, in time: each bid is taken.)
            let _ = auctioneer.on_bid(id, b.robot, cost, 0.0);
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
        let _ = auctioneer.on_accept(id, winner, 0.0);
        auctioneer.drain().for_each(drop);
        won[winner as usize - 1] += 1;
    }
    let (wall, cpu) = timer.stop();
    let stats = auctioneer.stats;
    println!(
        "CNP mechanics: {auctions} auctions × {robots} bidders in {cpu:.3} s of processor time ({wall:.3} s wall) = {:.0} auctions/s ({:.1} M bids/s); allocated {}, robots that won ≥ 1: {}",
        auctions as f64 / cpu,
        bids as f64 / cpu / 1e6,
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
        // Every finished task stays in the table, which the figures below count.
        max_final_tasks: usize::MAX,
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
    let pose = |i: usize| RobotPose {
        x: at[i].0,
        y: at[i].1,
        ..RobotPose::default()
    };
    let mut rng = Xoshiro256PlusPlus::new(2);
    let mut messages = 0u64;
    let mut answers = Outbox::new();
    let timer = Timer::start();
    for _ in 0..auctions {
        let task = TaskSpec::new(
            0,
            TaskKind::Goto {
                x: rng.next_f64() * 1000.0,
                y: rng.next_f64() * 1000.0,
            },
        );
        cc.announce(task).expect("announced");
        // The in-memory router: each envelope from the Control Center goes to its robot (or
        // to every robot in id order); what the robots answer goes into one outbox, in
        // order (a bid as a compact record, every other message as its envelope), and
        // back to the Control Center together.
        while let Some(env) = cc.poll_transmit() {
            messages += 1;
            let targets = match env.to {
                None => 0..agents.len(),
                Some(id) => id as usize - 1..id as usize,
            };
            for i in targets {
                let a = &mut agents[i];
                a.handle_into(&env, 0.0, pose(i), &mut board, &Euclidean, &mut answers);
                while let Some(c) = a.poll_command() {
                    if let Command::Start { task, .. } = c {
                        let _ = a.basic_done(task, Ok(()), 0.0, &mut board);
                        a.drain_into(&mut answers);
                    }
                }
            }
            messages += answers.len() as u64;
            let _refused = cc.handle_outbox(&mut answers, 0.0);
        }
    }
    let (wall, cpu) = timer.stop();
    let s = cc.cnp_stats();
    let ended = cc
        .tasks()
        .values()
        .filter(|t| t.state == Some(simrob_coord::model::TaskState::Ended))
        .count();
    // Which robot won which task: how many robots won any, and a digest (FNV-1a over
    // (task, robot) in task order) that changes if a single task goes to another robot.
    let mut digest: u64 = 0xcbf2_9ce4_8422_2325;
    let mut winners = std::collections::BTreeSet::new();
    for (&task, t) in cc.tasks() {
        if let Allocation::Robot(r) = t.allocation {
            winners.insert(r);
            for b in task.to_le_bytes().into_iter().chain(r.to_le_bytes()) {
                digest = (digest ^ b as u64).wrapping_mul(0x100_0000_01b3);
            }
        }
    }
    println!(
        "CNP whole path: {auctions} auctions × {robots} robots in {cpu:.3} s of processor time ({wall:.3} s wall) = {:.0} auctions/s; {messages} messages, allocated {}, tasks ended {ended}, robots that won ≥ 1: {}, allocation digest {digest:016x}",
        auctions as f64 / cpu,
        s.allocated,
        winners.len()
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
        task_limit: TaskLimit::default(),
        build_limits: Default::default(),
    };
    let timer = Timer::start();
    let r = run_one(&scenario, &spec).expect("runs");
    let (wall, cpu) = timer.stop();
    println!(
        "warehouse by CNP: {robots} robots, {tasks} tasks: {:.0} simulated s in {cpu:.1} s of processor time ({wall:.1} s wall) = {:.1}× real time; tasks done {}, failed {}, makespan {}, auctions {}, messages {}",
        r.time,
        r.time / cpu,
        r.ended,
        r.failed,
        r.makespan.map(|m| format!("{m:.0} s")).unwrap_or_else(|| "not reached".into()),
        r.cnp.announced,
        r.messages
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_words(words: &[&str]) -> Result<Parsed, String> {
        parse(&words.iter().map(|w| w.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn defaults_and_flags() {
        let Ok(Parsed::Run(o)) = parse_words(&[]) else {
            panic!("no arguments run everything");
        };
        assert_eq!(
            o,
            Options {
                robots: 1000,
                auctions: 20_000,
                tasks: 10_000,
                warehouse_robots: vec![1000],
                only: None
            }
        );
        let Ok(Parsed::Run(o)) = parse_words(&[
            "--only",
            "warehouse",
            "--warehouse-robots",
            "1000,10000",
            "--robots",
            "50",
        ]) else {
            panic!("valid");
        };
        assert_eq!(o.only, Some("warehouse"));
        assert_eq!(o.warehouse_robots, vec![1000, 10000]);
        assert_eq!(o.robots, 50);
        assert_eq!(parse_words(&["--help"]), Ok(Parsed::Help));
        assert_eq!(parse_words(&["--robots", "5", "-h"]), Ok(Parsed::Help));
    }

    #[test]
    fn mistakes_are_errors_naming_them() {
        let err = |w: &[&str]| parse_words(w).unwrap_err();
        assert_eq!(
            err(&["--only", "wholee"]),
            "--only wants mechanics, whole or warehouse, not \"wholee\""
        );
        assert_eq!(
            err(&["--robots", "abc"]),
            "--robots wants a whole number of at least 1, not \"abc\""
        );
        assert!(err(&["--robots", "0"]).starts_with("--robots wants"));
        assert_eq!(
            err(&["--tasks"]),
            "--tasks wants a value (coord_bench --help)"
        );
        // Checked before anything runs: the first size is fine, the second is not.
        assert!(err(&["--warehouse-robots", "150,abc"]).contains("\"150,abc\""));
        assert!(err(&["--warehouse-robots", "150,0"]).starts_with("--warehouse-robots"));
        assert!(err(&["--robot", "5"]).starts_with("unknown argument \"--robot\""));
        assert!(err(&["500"]).starts_with("unknown argument \"500\""));
    }
}
