//! Reruns FutRob's five case studies, both profiles, and prints each success rate beside the
//! real robots', with what the trials ended in — the table of docs/benchmarks.md, "FutRob's case
//! studies, reproduced", in one command. Trials run on every core; the same seed gives the
//! same table. Also prints the wall-clock and processor time taken.
//!
//! `cargo run --release -p simrob-trials --example reproduce -- [TRIALS] [SEED] [CASE] [failures]`
//!
//! With `failures`, every trial that did not succeed is listed too (trial, its seed,
//! scenario, outcome, placement and metrics), to rerun and watch.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use simrob_soccer::Profile;
use simrob_trials::stats::totals;
use simrob_trials::{run_trial, Case, TrialResult};

/// Processor time of this process (all threads), s, from `/proc/self/stat` (Linux).
fn cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/stat").ok()?;
    let rest = s.rsplit_once(')')?.1;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn run(case: Case, n: u32, seed: u64, profile: &Profile) -> Vec<TrialResult> {
    let next = AtomicU32::new(0);
    let workers = std::thread::available_parallelism().map_or(1, |p| p.get());
    let mut all: Vec<TrialResult> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let t = next.fetch_add(1, Ordering::Relaxed);
                        if t >= n {
                            break;
                        }
                        match run_trial(case, t, seed, profile) {
                            Ok(r) => mine.push(r),
                            Err(e) => eprintln!("{} trial {t}: {e}", case.name()),
                        }
                    }
                    mine
                })
            })
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    all.sort_by_key(|r| r.trial);
    all
}

/// Prints a line; a closed pipe (the output piped into `head`) ends the run quietly.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write;
        if writeln!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(0);
        }
    }};
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: u32 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    let seed: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let only = args.get(3).and_then(|s| Case::parse(s));
    let failures = args.iter().skip(3).any(|a| a == "failures");
    let pct = |r: &simrob_trials::stats::Rate| {
        format!(
            "{:.0} % [{:.0}–{:.0}]",
            100.0 * r.rate,
            100.0 * r.low,
            100.0 * r.high
        )
    };
    let (wall0, cpu0) = (Instant::now(), cpu_seconds());
    out!("{n} trials a case, seed {seed}");
    for case in [
        Case::PenaltyKick,
        Case::PenaltySave,
        Case::Discovery,
        Case::Relocation,
        Case::Pass,
    ] {
        if only.is_some_and(|o| o != case) {
            continue;
        }
        let paper = case
            .paper()
            .map(|(k, m)| format!("{k}/{m} = {:.0} %", 100.0 * f64::from(k) / f64::from(m)))
            .unwrap_or_else(|| "qualitative".into());
        out!(
            "{} ({}; FutRob's robots {paper})",
            case.name(),
            case.success_label()
        );
        for profile in [Profile::paper(), Profile::ideal()] {
            let results = run(case, n, seed, &profile);
            let t = totals(case, &results);
            let outcomes: Vec<String> =
                t.outcomes.iter().map(|(o, k)| format!("{o} {k}")).collect();
            out!(
                "  {:<5} {:<16} {}",
                profile.name,
                pct(&t.simulated),
                outcomes.join(", ")
            );
            for r in results.iter().filter(|r| failures && !r.success) {
                let named = |v: &[(String, f64)]| {
                    v.iter()
                        .map(|(k, x)| format!("{k} {x}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                out!(
                    "    trial {} (seed {}, scenario {}): {}; {}; {}",
                    r.trial,
                    r.seed,
                    r.scenario,
                    r.outcome,
                    named(&r.placement),
                    named(&r.metrics)
                );
            }
        }
    }
    let wall = wall0.elapsed().as_secs_f64();
    match (cpu0, cpu_seconds()) {
        (Some(a), Some(b)) => out!("{wall:.1} s wall, {:.1} s processor time", b - a),
        _ => out!("{wall:.1} s wall"),
    }
}
