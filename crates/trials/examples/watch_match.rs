//! Traces a 3-vs-3 match: every `EVERY` simulated seconds, the ball and, per robot, its pose,
//! posture, running action, the body segment under way and where it believes the ball is.
//!
//! `cargo run --release -p simrob-trials --example watch_match -- SEED SECONDS EVERY [ideal]`

use simrob_soccer::Profile;
use simrob_trials::matchplay::{play_inspected, MatchParams};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seed: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
    let duration_s: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(120.0);
    let every: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let profile = if args.get(4).map(String::as_str) == Some("ideal") {
        Profile::ideal()
    } else {
        Profile::paper()
    };
    let mut next = 0.0;
    let mut trace = |a: &simrob_trials::Arena| {
        let t = a.now_ms() as f64 / 1000.0;
        if t + 1e-9 < next {
            return;
        }
        next += every;
        let line = a.describe();
        println!("{line}");
    };
    let params = MatchParams::new(profile, seed, duration_s);
    match play_inspected(&params, None, &mut trace) {
        Ok(s) => println!(
            "goals {:?} shots {:?} passes {:?} possession {:.0?} falls {:?} outs {}",
            s.goals, s.shots, s.passes, s.possession_s, s.falls, s.outs
        ),
        Err(e) => eprintln!("match: {e}"),
    }
}
