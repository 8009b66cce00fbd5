//! The match table of docs/benchmarks.md: `paper` 3-vs-3 matches over a range of seeds, with
//! per-team goals, shots, shots on target, passes, passes completed and pass loops, their
//! spread over seeds, and what became of the shots and how the goals were scored — all read
//! from each match's own score sheet (`simrob_trials::referee`). Matches run on every core; a
//! match depends only on its seed, so the table does not depend on the thread count.
//!
//! `cargo run --release -p simrob-trials --example match_table -- [FIRST] [LAST] [MINUTES] [rows]`
//!
//! With `rows`, one line per seed too. `... -- strikes SEED [MINUTES]` prints one match's
//! strikes and exchanges instead.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use simrob_soccer::Profile;
use simrob_trials::matchplay::{play, MatchParams, MatchSummary};
use simrob_trials::referee::{StrikeEnd, StrikeKind};

fn matches(first: u64, last: u64, minutes: f64) -> Vec<MatchSummary> {
    let next = AtomicU64::new(first);
    let workers = std::thread::available_parallelism().map_or(1, |p| p.get());
    let mut all: Vec<MatchSummary> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let seed = next.fetch_add(1, Ordering::Relaxed);
                        if seed > last {
                            break;
                        }
                        let p = MatchParams::new(Profile::paper(), seed, minutes * 60.0);
                        match play(&p, None) {
                            Ok(m) => mine.push(m),
                            Err(e) => eprintln!("seed {seed}: {e}"),
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
    all.sort_by_key(|m| m.seed);
    all
}

/// `min–max, mean ± sd` of one figure over the matches.
fn spread(v: &[f64]) -> String {
    let n = v.len().max(1) as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    format!("{min:.0}–{max:.0}, {mean:.2} ± {:.2}", var.sqrt())
}

fn strikes(seed: u64, minutes: f64) {
    let p = MatchParams::new(Profile::paper(), seed, minutes * 60.0);
    let m = match play(&p, None) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("seed {seed}: {e}");
            return;
        }
    };
    for s in &m.strikes {
        println!(
            "{:7.2} {:>4} {:<8} {:<10} {:<9} {}  at {:5.2},{:5.2}  {:.2} m/s {:4.0}°  met {:>4}  {:?} {}",
            s.t,
            s.robot.map_or("-".into(), |r| r.to_string()),
            s.team.unwrap_or("-"),
            s.action,
            format!("{:?}", s.kind),
            if s.on_target { "T" } else { " " },
            s.at[0],
            s.at[1],
            s.speed,
            s.heading_deg,
            s.met.map_or("-".into(), |r| r.to_string()),
            s.end,
            s.next.map_or(String::new(), |r| r.to_string()),
        );
    }
    for e in &m.exchanges {
        println!(
            "exchange {:?} {} {:.1}–{:.1} s: {} strikes, progress {:.2} m{}",
            e.robots,
            e.team,
            e.from_t,
            e.to_t,
            e.strikes,
            e.progress_m,
            if e.is_loop() { "  LOOP" } else { "" }
        );
    }
    for (t, e) in &m.events {
        if !e.starts_with("shot") {
            println!("{t:7.2} {e}");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("strikes") {
        let seed = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
        let minutes = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10.0);
        strikes(seed, minutes);
        return;
    }
    let first: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(1);
    let last: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(100);
    let minutes: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let rows = args.iter().any(|a| a == "rows");
    let (t0, c0) = (Instant::now(), simrob_benchkit::process_cpu());
    let all = matches(first, last, minutes);
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), simrob_benchkit::process_cpu());
    if rows {
        println!("seed goals shots on-target passes completed loops longest-exchange possession-s");
        for m in &all {
            let longest = m.exchanges.iter().map(|e| e.strikes).max().unwrap_or(0);
            println!(
                "{:4} {}–{} {}–{} {}–{} {}–{} {}–{} {}–{} {} {:.0}–{:.0}",
                m.seed,
                m.goals[0],
                m.goals[1],
                m.shots[0],
                m.shots[1],
                m.shots_on_target[0],
                m.shots_on_target[1],
                m.passes[0],
                m.passes[1],
                m.passes_completed[0],
                m.passes_completed[1],
                m.pass_loops[0],
                m.pass_loops[1],
                longest,
                m.possession_s[0],
                m.possession_s[1]
            );
        }
    }
    let both = |f: &dyn Fn(&MatchSummary) -> [f64; 2]| -> (Vec<f64>, [f64; 2]) {
        let per: Vec<f64> = all.iter().map(|m| f(m)[0] + f(m)[1]).collect();
        let mut tot = [0.0; 2];
        for m in &all {
            tot[0] += f(m)[0];
            tot[1] += f(m)[1];
        }
        (per, tot)
    };
    fn u(a: [u32; 2]) -> [f64; 2] {
        [a[0] as f64, a[1] as f64]
    }
    type Figure = (&'static str, fn(&MatchSummary) -> [f64; 2]);
    let figures: [Figure; 7] = [
        ("goals", |m| u(m.goals)),
        ("shots", |m| u(m.shots)),
        ("shots on target", |m| u(m.shots_on_target)),
        ("passes", |m| u(m.passes)),
        ("passes completed", |m| u(m.passes_completed)),
        ("pass loops", |m| u(m.pass_loops)),
        ("possession, s", |m| m.possession_s),
    ];
    println!(
        "{} paper matches of {minutes} simulated minutes, seeds {first}–{last}",
        all.len()
    );
    println!("| figure | cyan–magenta (total) | per match: min–max, mean ± sd |");
    println!("|---|---|---|");
    for (name, f) in &figures {
        let (per, tot) = both(f);
        println!(
            "| {name} | {:.0}–{:.0} ({:.0}) | {} |",
            tot[0],
            tot[1],
            tot[0] + tot[1],
            spread(&per)
        );
    }
    let longest: Vec<f64> = all
        .iter()
        .map(|m| m.exchanges.iter().map(|e| e.strikes).max().unwrap_or(0) as f64)
        .collect();
    println!(
        "| longest exchange between two teammates, strikes | | {} |",
        spread(&longest)
    );
    // What became of the shots, and how the goals came.
    let (mut goal, mut saved, mut met_other, mut wide_out, mut short) = (0, 0, 0, 0, 0);
    let mut shot_goals = 0;
    let (mut by_striker, mut own, mut no_striker) = (0, 0, 0);
    for m in &all {
        let keepers = m.keepers;
        for s in m.strikes.iter().filter(|s| s.kind == StrikeKind::Shot) {
            match (s.end, s.met) {
                (StrikeEnd::Goal, _) => goal += 1,
                (_, Some(r)) if keepers.contains(&r) && Some(r) != s.robot => saved += 1,
                (_, Some(_)) => met_other += 1,
                (StrikeEnd::Out, None) => wide_out += 1,
                _ => short += 1,
            }
        }
        for g in &m.goal_log {
            match (g.scorer, g.own_goal) {
                (Some(_), false) => by_striker += 1,
                (Some(_), true) => own += 1,
                (None, _) => no_striker += 1,
            }
        }
        shot_goals += m
            .strikes
            .iter()
            .filter(|s| s.kind == StrikeKind::Shot && s.end == StrikeEnd::Goal)
            .count();
    }
    println!(
        "shots: {goal} goals, {saved} met a keeper, {met_other} met another robot, {wide_out} out of play untouched, {short} stopped short or by nobody"
    );
    println!(
        "goals: {by_striker} from a strike by the scoring team ({shot_goals} of them shots), {own} own goals, {no_striker} off a wall or post"
    );
    let kinds = |k: StrikeKind| {
        all.iter()
            .map(|m| m.strikes.iter().filter(|s| s.kind == k).count())
            .sum::<usize>()
    };
    println!(
        "strikes: {} shots, {} passes, {} clearances, {} other kicks",
        kinds(StrikeKind::Shot),
        kinds(StrikeKind::Pass),
        kinds(StrikeKind::Clearance),
        kinds(StrikeKind::Kick)
    );
    let sim = all.len() as f64 * minutes;
    match (c0, cpu) {
        (Some(a), Some(b)) => println!(
            "{sim:.0} simulated minutes in {wall:.1} s wall, {:.1} processor s ({:.2} match minutes per processor second)",
            b - a,
            sim / (b - a).max(1e-9)
        ),
        _ => println!("{sim:.0} simulated minutes in {wall:.1} s wall"),
    }
}
