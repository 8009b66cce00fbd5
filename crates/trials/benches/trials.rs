//! Trials per wall second for the penalty kick (one core), and simulated match minutes per
//! wall second, each with what the runs did. `cargo bench -p simrob-trials`.

use std::time::Instant;

use simrob_soccer::Profile;
use simrob_trials::matchplay::{play, MatchParams};
use simrob_trials::{run_trial, Case};

fn main() {
    for profile in [Profile::ideal(), Profile::paper()] {
        let n = 60;
        let start = Instant::now();
        let mut on_target = 0;
        let mut sim_s = 0.0;
        for t in 0..n {
            match run_trial(Case::PenaltyKick, t, 1, &profile) {
                Ok(r) => {
                    on_target += u32::from(r.success);
                    sim_s += r.sim_seconds;
                }
                Err(e) => {
                    eprintln!("trial {t}: {e}");
                    return;
                }
            }
        }
        let wall = start.elapsed().as_secs_f64();
        println!(
            "penalty kick, {}: {n} trials in {wall:.2} s = {:.1} trials/s on one core ({:.0}× real time); {on_target}/{n} on target",
            profile.name,
            f64::from(n) / wall,
            sim_s / wall
        );
    }
    let p = MatchParams {
        profile: Profile::paper(),
        seed: 1,
        duration_s: 300.0,
    };
    let start = Instant::now();
    match play(&p, None) {
        Ok(s) => {
            let wall = start.elapsed().as_secs_f64();
            println!(
                "3 v 3 match, paper: 5 simulated minutes in {wall:.2} s = {:.2} match minutes per wall second; goals {}–{}, shots {}–{}, falls {}–{}",
                5.0 / wall,
                s.goals[0], s.goals[1], s.shots[0], s.shots[1], s.falls[0], s.falls[1]
            );
        }
        Err(e) => eprintln!("match: {e}"),
    }
}
