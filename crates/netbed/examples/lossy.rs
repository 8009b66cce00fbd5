//! Measures the SimRob server and its agents through the lossy relay at each setting and
//! prints the table of `docs/network.md`:
//!
//! ```sh
//! cargo run -p simrob-netbed --example lossy                # 300 iterations a setting, seed 1
//! cargo run -p simrob-netbed --example lossy -- 1000 7      # iterations, seed
//! cargo run -p simrob-netbed --example lossy -- 300 1,2,3   # several seeds: mean and spread
//! cargo run -p simrob-netbed --example lossy -- 300 1..3 50 # and 50 split broadcasts (200)
//! ```
//!
//! Per setting: six synchronous agents in lockstep (SumBot scene, `syncwait` 0.1 s) —
//! iterations a second, the longest one iteration took (between the broadcasts of two
//! iterations in a row, as an agent saw them), the broadcasts each agent missed, whether every agent reached the last iteration; then 100 confirmed
//! `Set_Sync_Wait` requests (confirmed / clear time-outs); then 200 split soccer broadcasts
//! (`maximumdatagramsize` 1024): whole ones received, half ones (must be 0). Over several
//! seeds each figure is given as the mean and its range over the seeds, and the longest
//! iteration as the longest over all seeds with each seed's, against `syncwait`.

use std::time::{Duration, Instant};

use simrob_client::agent::{Agent, AgentOptions, ClientError};
use simrob_netbed::{Impairment, UdpRelay};
use simrob_protocol::{ControlRequest, Request};

const AGENTS: usize = 6;
const SYNC_WAIT: f64 = 0.1;

#[path = "../tests/it/common.rs"]
mod common;

use common::{TestServer, START, SYNC_AND_START};

fn register(agent: &mut Agent, key: &str, sync: bool) -> Result<(), ClientError> {
    let mut last = None;
    for _ in 0..10 {
        match agent.register(
            key,
            AgentOptions {
                sync,
                ..AgentOptions::default()
            },
        ) {
            Ok(_) => return Ok(()),
            Err(e @ ClientError::Timeout(_)) => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or(ClientError::NotRegistered))
}

struct Lockstep {
    per_second: f64,
    longest_wait: Duration,
    missed: Vec<u64>,
    all_reached: bool,
    cpu: f64,
}

fn lockstep(up: Impairment, down: Impairment, iterations: u64) -> Lockstep {
    let server = TestServer::start_with(
        "bench",
        &["materials.xml", "sumbot.xml"],
        SYNC_AND_START,
        |c| {
            c.sync_wait = SYNC_WAIT;
        },
    );
    let relay = UdpRelay::start(server.addr, up, down).expect("relay");
    let cpu0 = simrob_benchkit::process_cpu().unwrap_or(f64::NAN);
    let t0 = Instant::now();
    let threads: Vec<_> = (0..AGENTS)
        .map(|i| {
            let addr = relay.addr();
            std::thread::spawn(move || {
                let mut agent = Agent::connect(addr).expect("socket");
                if register(&mut agent, &format!("a{i}"), true).is_err() {
                    return (Duration::ZERO, u64::MAX, 0, None);
                }
                let (mut first, mut last) = (None, 0);
                let mut seen = std::collections::BTreeSet::new();
                let mut longest = Duration::ZERO;
                let mut at = Instant::now();
                loop {
                    let Ok(Some(b)) = agent.next_broadcast(Duration::from_secs(10)) else {
                        return (longest, u64::MAX, last, first);
                    };
                    let now = Instant::now();
                    // One iteration's time: between the broadcasts of two iterations in a row.
                    if b.iteration == last + 1 && first.is_some() {
                        longest = longest.max(now - at);
                    }
                    at = now;
                    if !seen.insert(b.iteration) {
                        continue; // a duplicate
                    }
                    let _ = agent.synchronize(b.iteration);
                    first.get_or_insert(b.iteration);
                    last = b.iteration;
                    if b.iteration >= iterations {
                        let span = b.iteration - first.unwrap_or(0) + 1;
                        return (longest, span.saturating_sub(seen.len() as u64), last, first);
                    }
                }
            })
        })
        .collect();
    let results: Vec<_> = threads
        .into_iter()
        .map(|t| t.join().expect("agent"))
        .collect();
    let wall = t0.elapsed().as_secs_f64();
    let first = results.iter().filter_map(|r| r.3).min().unwrap_or(0);
    Lockstep {
        per_second: (iterations - first) as f64 / wall,
        longest_wait: results.iter().map(|r| r.0).max().unwrap_or_default(),
        missed: results.iter().map(|r| r.1).collect(),
        all_reached: results.iter().all(|r| r.2 >= iterations),
        cpu: simrob_benchkit::process_cpu().unwrap_or(f64::NAN) - cpu0,
    }
}

/// Confirmed requests and clear time-outs out of `n` confirmed Set_Sync_Wait requests.
fn requests(up: Impairment, down: Impairment, n: usize) -> (usize, usize) {
    let server = TestServer::start_with("bench", &["materials.xml", "sumbot.xml"], "", |_| {});
    let relay = UdpRelay::start(server.addr, up, down).expect("relay");
    let mut agent = Agent::connect(relay.addr()).expect("socket");
    let mut confirmed = 0;
    let mut timeouts = 0;
    for _ in 0..n {
        match agent.request(
            Request::Control {
                request: ControlRequest::SetSyncWait(SYNC_WAIT),
                response: Some(true),
            },
            Duration::from_millis(500),
        ) {
            Ok(_) => confirmed += 1,
            Err(ClientError::Timeout(_)) => timeouts += 1,
            Err(e) => panic!("request: {e}"),
        }
    }
    (confirmed, timeouts)
}

/// Whole broadcasts received and half ones, out of the iterations spanned by `n` broadcasts.
fn split(up: Impairment, down: Impairment, n: usize) -> (usize, u64, usize) {
    let server = TestServer::start_with("bench", &["soccer.xml"], START, |c| {
        c.maximum_datagram_size = 1024;
        c.real_time_factor = 1.0;
    });
    let mut direct = Agent::connect(server.addr).expect("socket");
    register(&mut direct, "direct", false).expect("register");
    let whole = direct
        .next_broadcast(Duration::from_secs(10))
        .expect("receive")
        .expect("broadcast");
    drop(direct);
    let want = (whole.bodies.len(), whole.entities.len());
    let relay = UdpRelay::start(server.addr, up, down).expect("relay");
    let mut agent = Agent::connect(relay.addr()).expect("socket");
    register(&mut agent, "lossy", false).expect("register");
    let (mut got, mut half, mut first, mut last) = (0, 0, None, 0);
    let mut seen = std::collections::BTreeSet::new();
    while got < n {
        let Ok(Some(b)) = agent.next_broadcast(Duration::from_secs(10)) else {
            break;
        };
        if (b.bodies.len(), b.entities.len()) != want {
            half += 1;
        }
        if !seen.insert(b.iteration) {
            continue;
        }
        first.get_or_insert(b.iteration);
        last = last.max(b.iteration);
        got += 1;
    }
    (got, last.saturating_sub(first.unwrap_or(0)) + 1, half)
}

/// One setting's figures for one seed.
struct Run {
    lockstep: Lockstep,
    confirmed: usize,
    whole: usize,
    spanned: u64,
    half: usize,
}

/// `a,b,c` or `a..b` (inclusive) or one seed.
fn seeds(arg: Option<String>) -> Vec<u64> {
    let Some(arg) = arg else { return vec![1] };
    if let Some((a, b)) = arg.split_once("..") {
        if let (Ok(a), Ok(b)) = (a.parse::<u64>(), b.parse::<u64>()) {
            return (a..=b).collect();
        }
    }
    let list: Vec<u64> = arg
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    if list.is_empty() {
        eprintln!("seeds: {arg:?} is not a seed, a list (1,2,3) or a range (1..5)");
        std::process::exit(2);
    }
    list
}

/// `mean (min–max)` of `v`, with `digits` decimals; the value alone for one seed.
fn spread(v: &[f64], digits: usize) -> String {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return format!("{mean:.digits$}");
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{mean:.digits$} ({min:.digits$}–{max:.digits$})")
}

fn main() {
    let mut args = std::env::args().skip(1);
    let iterations: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(300);
    let seeds = seeds(args.next());
    let splits: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200);
    let seed = seeds[0];
    let base = Impairment {
        seed,
        ..Impairment::clean()
    };
    let delay = Impairment {
        delay: Duration::from_millis(50),
        jitter: Duration::from_millis(20),
        ..base
    };
    let settings = [
        ("clean", base),
        ("loss 5 %", Impairment { loss: 0.05, ..base }),
        ("loss 20 %", Impairment { loss: 0.2, ..base }),
        (
            "duplication 5 %",
            Impairment {
                duplicate: 0.05,
                ..base
            },
        ),
        (
            "reordering 5 %",
            Impairment {
                reorder: 0.05,
                ..base
            },
        ),
        ("delay 50 ± 20 ms", delay),
        (
            "all: loss 5 %, dup 5 %, reorder 5 %, 50 ± 20 ms",
            Impairment {
                loss: 0.05,
                duplicate: 0.05,
                reorder: 0.05,
                ..delay
            },
        ),
    ];
    let seed_list: Vec<String> = seeds.iter().map(|s| s.to_string()).collect();
    println!(
        "{AGENTS} synchronous agents, syncwait {SYNC_WAIT} s, {iterations} iterations a setting, {splits} split broadcasts, seeds {}; the same impairment both ways{}\n",
        seed_list.join(", "),
        if seeds.len() > 1 { "; mean (min–max) over the seeds" } else { "" }
    );
    println!("| setting | iterations/s | longest iteration: the longest (× syncwait); each seed's | broadcasts missed per agent: mean (most) | every agent to the end | processor s | confirmed of 100 | split broadcasts whole / iterations spanned | half worlds |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, imp) in settings {
        let runs: Vec<Run> = seeds
            .iter()
            .map(|&seed| {
                let imp = Impairment { seed, ..imp };
                let down = Impairment {
                    seed: seed ^ 0xD0,
                    ..imp
                };
                let lockstep = lockstep(imp, down, iterations);
                // Every request not confirmed is a clear time-out (anything else panics).
                let (confirmed, _timeouts) = requests(imp, down, 100);
                let (whole, spanned, half) = split(imp, down, splits);
                Run {
                    lockstep,
                    confirmed,
                    whole,
                    spanned,
                    half,
                }
            })
            .collect();
        let f = |g: &dyn Fn(&Run) -> f64| runs.iter().map(g).collect::<Vec<f64>>();
        let longest: Vec<f64> = f(&|r| r.lockstep.longest_wait.as_secs_f64() * 1000.0);
        let worst = longest.iter().copied().fold(0.0, f64::max);
        let each: Vec<String> = longest.iter().map(|l| format!("{l:.0}")).collect();
        let missed: Vec<u64> = runs
            .iter()
            .flat_map(|r| r.lockstep.missed.iter().copied())
            .collect();
        let behind = missed.iter().filter(|m| **m == u64::MAX).count();
        let counted: Vec<f64> = missed
            .iter()
            .filter(|m| **m != u64::MAX)
            .map(|m| *m as f64)
            .collect();
        let most = counted.iter().copied().fold(0.0, f64::max);
        let mean_missed = counted.iter().sum::<f64>() / counted.len().max(1) as f64;
        let reached = runs.iter().filter(|r| r.lockstep.all_reached).count();
        println!(
            "| {name} | {} | {worst:.0} ms ({:.1}×); {} ms | {mean_missed:.1} ({most:.0}){} | {} | {} | {} | {} / {} | {} |",
            spread(&f(&|r| r.lockstep.per_second), 0),
            worst / (SYNC_WAIT * 1000.0),
            each.join(", "),
            if behind > 0 { format!(", {behind} left behind") } else { String::new() },
            if reached == runs.len() { "yes".to_string() } else { format!("NO ({} of {} seeds)", reached, runs.len()) },
            spread(&f(&|r| r.lockstep.cpu), 1),
            spread(&f(&|r| r.confirmed as f64), 0),
            spread(&f(&|r| r.whole as f64), 0),
            spread(&f(&|r| r.spanned as f64), 0),
            runs.iter().map(|r| r.half).sum::<usize>(),
        );
    }
}
