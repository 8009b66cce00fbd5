//! Reruns FutRob's five case studies, both profiles, and prints each success rate beside the
//! real robots', with what the trials ended in — the table of docs/benchmarks.md, "FutRob's case
//! studies, reproduced", in one command. Trials run on every core; the same seed gives the
//! same table. Also prints the wall-clock and processor time taken.
//!
//! `cargo run --release -p simrob-trials --example reproduce -- [TRIALS] [SEED] [CASE] [paper|ideal] [failures]`
//!
//! With `failures`, every trial that did not succeed is listed too (trial, its seed,
//! scenario, outcome, placement and metrics), to rerun and watch. `paper` or `ideal` runs one
//! profile only.
//!
//! SEED may be a range, `FIRST..LAST` (inclusive): TRIALS trials at each seed, and each case's
//! rate pooled over all of them (with its 95 % Wilson interval), the lowest, median and
//! highest rate of one seed's trials, and whether the interval's lower end reaches FutRob's
//! own rate — the table of docs/benchmarks.md, "The case studies over many seeds":
//! `cargo run --release -p simrob-trials --example reproduce -- 100 1001..1020 paper`

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Instant;

use simrob_soccer::Profile;
use simrob_trials::stats::{over_seeds, totals, Rate};
use simrob_trials::{run_trial, Case, TrialResult};

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
    let seed_arg = args.get(2).map_or("1", String::as_str);
    let (first, last) = match seed_arg.split_once("..") {
        Some((a, b)) => (a.parse().ok(), b.parse().ok()),
        None => (seed_arg.parse().ok(), seed_arg.parse().ok()),
    };
    let (Some(first), Some(last)) = (first, last) else {
        eprintln!("SEED is a number or a range FIRST..LAST, not {seed_arg:?}");
        std::process::exit(2);
    };
    let words = || args.iter().skip(3).map(String::as_str);
    let only = words().find_map(Case::parse);
    let failures = words().any(|a| a == "failures");
    let profiles: Vec<Profile> = [Profile::paper(), Profile::ideal()]
        .into_iter()
        .filter(|p| !words().any(|w| w == "paper" || w == "ideal") || words().any(|w| w == p.name))
        .collect();
    if first != last {
        over_seed_range(n, first, last, only, &profiles);
        return;
    }
    let seed: u64 = first;
    let pct = |r: &simrob_trials::stats::Rate| {
        format!(
            "{:.0} % [{:.0}–{:.0}]",
            100.0 * r.rate,
            100.0 * r.low,
            100.0 * r.high
        )
    };
    let (wall0, cpu0) = (Instant::now(), simrob_benchkit::process_cpu());
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
        for profile in profiles.iter().cloned() {
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
    match (cpu0, simrob_benchkit::process_cpu()) {
        (Some(a), Some(b)) => out!("{wall:.1} s wall, {:.1} s processor time", b - a),
        _ => out!("{wall:.1} s wall"),
    }
}

/// The table over seeds `first..=last`, `n` trials at each.
fn over_seed_range(n: u32, first: u64, last: u64, only: Option<Case>, profiles: &[Profile]) {
    let pct = |x: f64| format!("{:.1}", 100.0 * x);
    let (wall0, cpu0) = (Instant::now(), simrob_benchkit::process_cpu());
    let seeds = last.saturating_sub(first) + 1;
    out!("{n} trials a case at each of seeds {first}..{last} ({seeds} seeds)");
    out!("| case | profile | trials | pooled rate [95 % Wilson] | per seed min / median / max | FutRob's robots | lower end ≥ FutRob's rate |");
    out!("|---|---|---|---|---|---|---|");
    for case in Case::ALL {
        if only.is_some_and(|o| o != case) || case == Case::Discovery && only.is_none() {
            continue;
        }
        for profile in profiles {
            let per_seed: Vec<Vec<TrialResult>> =
                (first..=last).map(|s| run(case, n, s, profile)).collect();
            let o = over_seeds(&per_seed);
            let all: Vec<TrialResult> = per_seed.into_iter().flatten().collect();
            let t = totals(case, &all);
            let futrob = case.paper().map(|(k, m)| Rate::new(k, m));
            out!(
                "| {} | {} | {} | {} % [{}–{}] | {} / {} / {} % | {} | {} |",
                case.name(),
                profile.name,
                o.pooled.trials,
                pct(o.pooled.rate),
                pct(o.pooled.low),
                pct(o.pooled.high),
                pct(o.min),
                pct(o.median),
                pct(o.max),
                futrob.map_or("qualitative".into(), |r| format!(
                    "{}/{} = {:.0} %",
                    r.successes,
                    r.trials,
                    100.0 * r.rate
                )),
                futrob.map_or("–".into(), |r| if o.pooled.low >= r.rate - 1e-12 {
                    "yes".to_string()
                } else {
                    "no".to_string()
                }),
            );
            let outcomes: Vec<String> =
                t.outcomes.iter().map(|(o, k)| format!("{o} {k}")).collect();
            eprintln!("{} {}: {}", case.name(), profile.name, outcomes.join(", "));
        }
    }
    let wall = wall0.elapsed().as_secs_f64();
    match (cpu0, simrob_benchkit::process_cpu()) {
        (Some(a), Some(b)) => out!("{wall:.1} s wall, {:.1} s processor time", b - a),
        _ => out!("{wall:.1} s wall"),
    }
}
