//! Traces one trial of a FutRob case study: every `EVERY` simulated seconds, the ball and,
//! per robot, its pose, posture, running action, the body segment under way and where it
//! believes the ball is; then the trial's result. Trial numbers (from 1) and seeds are those
//! of `simrob soccer case`'s table and of the `reproduce` example's `failures` list.
//!
//! `cargo run --release -p simrob-trials --example watch_trial -- CASE TRIAL SEED EVERY [ideal]`

use simrob_soccer::Profile;
use simrob_trials::{run_trial_inspected, Case};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(case) = args.get(1).and_then(|s| Case::parse(s)) else {
        eprintln!("usage: watch_trial CASE TRIAL SEED EVERY [ideal]  (CASE: penalty-kick, penalty-save, discovery, relocation, pass; TRIAL from 1, as `simrob soccer case` numbers them)");
        std::process::exit(2);
    };
    let trial = match trial_index(args.get(2).map_or("1", String::as_str)) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    let seed: u64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1);
    let every: f64 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let profile = if args.get(5).map(String::as_str) == Some("ideal") {
        Profile::ideal()
    } else {
        Profile::paper()
    };
    let mut next = 0.0;
    let inspector = Box::new(move |a: &simrob_trials::Arena| {
        let t = a.now_ms() as f64 / 1000.0;
        if t + 1e-9 >= next {
            next += every;
            println!("{}", a.describe());
        }
    });
    match run_trial_inspected(case, trial, seed, &profile, None, Some(inspector)) {
        Ok(r) => {
            println!(
                "{}: {} after {:.1} s",
                case.name(),
                r.outcome,
                r.sim_seconds
            );
            for (k, v) in r.placement.iter().chain(&r.metrics) {
                println!("  {k} {v}");
            }
        }
        Err(e) => eprintln!("{}: {e}", case.name()),
    }
}

/// The trial a TRIAL argument names (numbered from 1, as `simrob soccer case`'s table numbers
/// them) as `run_trial`'s index (from 0).
fn trial_index(arg: &str) -> Result<u32, String> {
    match arg.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n - 1),
        _ => Err(format!(
            "TRIAL is a trial's number as `simrob soccer case` numbers them, from 1, not {arg:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trial_is_named_by_its_number_in_the_case_table() {
        // The table's trial 7 is run_trial's index 6 (TRIAL was taken as the index).
        assert_eq!(trial_index("7"), Ok(6));
        assert_eq!(trial_index("1"), Ok(0));
        let e = trial_index("0").unwrap_err();
        assert!(e.contains("from 1, not \"0\""), "{e}");
        assert!(trial_index("x").is_err());
    }
}
