//! `simrob soccer case`: FutRob's case studies rerun in-process, many trials at once.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use simrob_soccer::Profile;
use simrob_trials::stats::{totals, Rate, Totals};
use simrob_trials::{run_trial, run_trial_observed, Case, TrialResult};

#[derive(Args)]
pub struct CaseArgs {
    /// Which study: penalty-kick, penalty-save, discovery, relocation or pass.
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(CASES), ignore_case = true)]
    pub name: String,
    /// How many trials, at least 1 (trial i runs scenario i mod n of the study's table).
    #[arg(long, value_name = "N", default_value_t = 30, value_parser = crate::flags::count(1u32, u32::MAX))]
    pub trials: u32,
    /// Seed of the whole run: the same seed gives the same table.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// `paper` (FutRob's measured camera errors, motion noise and falls) or `ideal`
    /// (exact camera every frame, exact motions).
    #[arg(long, default_value = "paper", value_parser = clap::builder::PossibleValuesParser::new(PROFILES), ignore_case = true)]
    pub profile: String,
    /// Print one JSON object (every trial and the totals) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Write a recording of every trial into this directory (`<case>-<trial>.simrec`, trials
    /// numbered from 1 as in the table), for `simrob replay`.
    #[arg(long, value_name = "DIR")]
    pub record_dir: Option<std::path::PathBuf>,
    /// Old spelling of `--record-dir` (`--record` is one file).
    #[arg(long = "record", value_name = "DIR", hide = true,
          value_parser = crate::flags::renamed("record", "record-dir", "--record is one file"))]
    pub old_record: Option<String>,
    /// Trials run side by side on this many threads, at most 64 (0 or left out:
    /// $SIMROB_THREADS if set, else the machine's cores). The results do not depend on it.
    #[arg(long, value_name = "N", value_parser = crate::flags::threads)]
    pub threads: Option<usize>,
}

/// The case studies' names, as `--help` and a wrong one's error list them.
const CASES: [&str; 5] = [
    "penalty-kick",
    "penalty-save",
    "discovery",
    "relocation",
    "pass",
];
/// The noise profiles' names.
pub(super) const PROFILES: [&str; 2] = ["paper", "ideal"];

pub fn run(a: CaseArgs) -> Result<()> {
    let Some(case) = Case::parse(&a.name.to_ascii_lowercase()) else {
        bail!(
            "unknown case study {:?}: choose penalty-kick, penalty-save, discovery, relocation or pass",
            a.name
        );
    };
    let Some(profile) = Profile::named(&a.profile) else {
        bail!("unknown profile {:?}: choose paper or ideal", a.profile);
    };
    if let Some(dir) = &a.record_dir {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the directory {}", dir.display()))?;
    }
    let stop = crate::shell::ctrl_c_flag()?;
    let results = run_all(
        case,
        a.trials,
        a.seed,
        &profile,
        match a.threads {
            Some(n) if n > 0 => Some(n),
            _ => crate::flags::threads_from_env()?,
        },
        a.record_dir.as_deref(),
        &stop,
    )?;
    if crate::shell::interrupted() {
        eprintln!(
            "stopped after {} of {} trials: the table is theirs",
            results.len(),
            a.trials
        );
    }
    let t = totals(case, &results);
    let mut out = std::io::stdout().lock();
    if a.json {
        let doc = serde_json::json!({
            "case": case.name(),
            "profile": profile.name,
            "seed": a.seed,
            "trials": results,
            "totals": t,
        });
        write_out(&mut out, &format!("{doc}\n"))?;
    } else {
        write_out(&mut out, &table(case, &profile.name, a.seed, &results, &t))?;
    }
    Ok(())
}

fn run_all(
    case: Case,
    trials: u32,
    seed: u64,
    profile: &Profile,
    threads: Option<usize>,
    record: Option<&std::path::Path>,
    stop: &std::sync::atomic::AtomicBool,
) -> Result<Vec<TrialResult>> {
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .clamp(1, 64);
    let bar = ProgressBar::with_draw_target(Some(u64::from(trials)), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} trials, {elapsed}, eta {eta}")
    {
        bar.set_style(style);
    }
    bar.set_message(case.name());
    let next = AtomicU32::new(0);
    let results: Mutex<Vec<TrialResult>> = Mutex::new(Vec::new());
    let error: Mutex<Option<String>> = Mutex::new(None);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                // Ctrl-C: the trials under way finish (their recordings too), no more start.
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= trials {
                    break;
                }
                let run = || -> Result<TrialResult> {
                    let Some(dir) = record else {
                        return Ok(run_trial(case, i, seed, profile)?);
                    };
                    // A second stop signal waits until this trial's recording is finished.
                    let _finishing = crate::shell::FinishBeforeExit::hold();
                    // Numbered from 1, as the table numbers the trials.
                    let number = u64::from(i) + 1;
                    let path = dir.join(format!("{}-{number}.simrec", case.name()));
                    let source = format!(
                        "simrob soccer case {}, profile {}, trial {number} (seed {seed})",
                        case.name(),
                        profile.name
                    );
                    let rec = super::matchcmd::Recording::create(&path, &source)?;
                    let r = run_trial_observed(case, i, seed, profile, Some(rec.observer()))?;
                    rec.finish()?;
                    Ok(r)
                };
                match run() {
                    Ok(r) => {
                        if let Ok(mut v) = results.lock() {
                            v.push(r);
                        }
                    }
                    Err(e) => {
                        if let Ok(mut err) = error.lock() {
                            err.get_or_insert_with(|| format!("trial {i}: {e}"));
                        }
                        break;
                    }
                }
                bar.inc(1);
            });
        }
    });
    bar.finish_and_clear();
    if let Some(e) = error.into_inner().unwrap_or(None) {
        bail!(e);
    }
    let mut v = results.into_inner().unwrap_or_default();
    v.sort_by_key(|r| r.trial);
    Ok(v)
}

fn pct(r: &Rate) -> String {
    format!(
        "{}/{} = {:.0} % [{:.0}–{:.0} %]",
        r.successes,
        r.trials,
        100.0 * r.rate,
        100.0 * r.low,
        100.0 * r.high
    )
}

fn table(case: Case, profile: &str, seed: u64, results: &[TrialResult], t: &Totals) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "FutRob case study: {} — profile {profile}, seed {seed}",
        case.name()
    );
    let Some(first) = results.first() else {
        return s;
    };
    let mut head = String::from("trial  sc");
    for (k, _) in &first.placement {
        let _ = write!(head, "  {k}");
    }
    let _ = write!(head, "  outcome");
    let mut metric_names: Vec<&str> = Vec::new();
    for r in results {
        for (k, _) in &r.metrics {
            if !metric_names.contains(&k.as_str()) {
                metric_names.push(k);
            }
        }
    }
    for k in &metric_names {
        let _ = write!(head, "  {k}");
    }
    let _ = writeln!(s, "{head}");
    for r in results {
        let _ = write!(s, "{:>5}  {:>2}", r.trial + 1, r.scenario);
        for ((k, v), (hk, _)) in r.placement.iter().zip(&first.placement) {
            let _ = write!(s, "  {:>w$}", fmt_num(*v), w = hk.len().max(k.len()));
        }
        let _ = write!(s, "  {:<18}", r.outcome);
        for k in &metric_names {
            let v = r
                .metrics
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, v)| fmt_num(*v));
            let _ = write!(s, "  {:>w$}", v.unwrap_or_else(|| "–".into()), w = k.len());
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s);
    for (o, n) in &t.outcomes {
        let _ = writeln!(s, "  {o}: {n}");
    }
    let _ = writeln!(
        s,
        "{}: simulated {}",
        case.success_label(),
        pct(&t.simulated)
    );
    match &t.paper {
        Some(p) => {
            let _ = writeln!(s, "{}: FutRob's robots {}", case.success_label(), pct(p));
        }
        None => {
            let _ = writeln!(
                s,
                "FutRob's report gives no rate for this study (qualitative)."
            );
        }
    }
    s
}

/// Writes to standard output; a reader that went away (`| head`) ends the output quietly.
fn write_out(out: &mut impl std::io::Write, text: &str) -> Result<()> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

fn fmt_num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}
