//! Trials per wall second for each case study (one core), and simulated match minutes per
//! wall second, each with what the runs did, and the same rates per second of this thread's
//! processor time (what a quiet machine would give; the wall-clock rate drops when other
//! work shares the cores). `cargo bench -p simrob-trials`.

use std::time::Instant;

use simrob_soccer::{Profile, Team};
use simrob_trials::matchplay::{play, MatchParams};
use simrob_trials::{run_trial, Case};

fn main() {
    // The case studies, one core: the penalty kick with both profiles, then every case with
    // FutRob's camera (`paper`), each with its outcomes.
    let runs = [
        (Case::PenaltyKick, Profile::ideal()),
        (Case::PenaltyKick, Profile::paper()),
        (Case::PenaltySave, Profile::paper()),
        (Case::Pass, Profile::paper()),
        (Case::Relocation, Profile::paper()),
    ];
    let (mut all_n, mut all_cpu) = (0u32, 0.0);
    for (case, profile) in runs {
        let n = 60;
        let (start, cpu0) = (Instant::now(), simrob_benchkit::thread_cpu().unwrap_or(0.0));
        let mut ok = 0;
        let mut sim_s = 0.0;
        for t in 0..n {
            match run_trial(case, t, 1, &profile) {
                Ok(r) => {
                    ok += u32::from(r.success);
                    sim_s += r.sim_seconds;
                }
                Err(e) => {
                    eprintln!("{} trial {t}: {e}", case.name());
                    return;
                }
            }
        }
        let (wall, cpu) = (
            start.elapsed().as_secs_f64(),
            simrob_benchkit::thread_cpu().unwrap_or(0.0) - cpu0,
        );
        if profile.name == "paper" {
            all_n += n;
            all_cpu += cpu;
        }
        println!(
            "{}, {}: {n} trials in {wall:.2} s = {:.1} trials/s on one core ({:.0}× real time); {:.1} trials per processor second; {ok}/{n} {}",
            case.name(),
            profile.name,
            f64::from(n) / wall,
            sim_s / wall,
            f64::from(n) / cpu.max(1e-9),
            case.success_label()
        );
    }
    println!(
        "the four cases, paper: {all_n} trials in {all_cpu:.2} processor s = {:.1} trials per processor second",
        f64::from(all_n) / all_cpu.max(1e-9)
    );
    let p = MatchParams {
        profile: Profile::paper(),
        seed: 1,
        duration_s: 300.0,
        kick_off: Team::Cyan,
        stop: None,
    };
    let (start, cpu0) = (Instant::now(), simrob_benchkit::thread_cpu().unwrap_or(0.0));
    match play(&p, None) {
        Ok(s) => {
            let (wall, cpu) = (
                start.elapsed().as_secs_f64(),
                simrob_benchkit::thread_cpu().unwrap_or(0.0) - cpu0,
            );
            println!(
                "3 v 3 match, paper: 5 simulated minutes in {wall:.2} s = {:.2} match minutes per wall second, {:.2} per processor second; goals {}–{}, shots {}–{}, passes {}–{}, falls {}–{}",
                5.0 / wall,
                5.0 / cpu.max(1e-9),
                s.goals[0], s.goals[1], s.shots[0], s.shots[1], s.passes[0], s.passes[1], s.falls[0], s.falls[1]
            );
        }
        Err(e) => eprintln!("match: {e}"),
    }
}
