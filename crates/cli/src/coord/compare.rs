//! `simrob coord compare`: allocation policies side by side on a swarm scenario.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use simrob_coord::compare::{run_one, table, PolicyRow, RunSpec};
use simrob_coord::wire::Policy;
use simrob_swarm::scenario::{Overrides, Scenario};

/// Arguments of `simrob coord compare`.
#[derive(clap::Args)]
pub struct CompareArgs {
    /// The swarm scenario: `warehouse`, `hospital` (the bundled ones) or a scenario file
    /// (.toml or .json) whose map has points of interest to fetch from and deliver to.
    #[arg(long, value_name = "S")]
    scenario: String,
    /// Allocation policies to compare: cnp (Contract Net), hungarian (optimal assignment),
    /// greedy (nearest idle robot).
    #[arg(long, value_delimiter = ',', default_value = "cnp,hungarian,greedy")]
    policies: Vec<Policy>,
    /// Seeds: a range `A..B` (inclusive) or a list `1,5,9`.
    #[arg(long, default_value = "1..20", value_parser = parse_seeds)]
    seeds: Seeds,
    /// Robots (generated scenarios such as the warehouse; default 40 there, the map's
    /// robots elsewhere).
    #[arg(long, value_name = "N")]
    robots: Option<usize>,
    /// Tasks per run (default: four per robot).
    #[arg(long, value_name = "N")]
    tasks: Option<usize>,
    /// Simulated seconds after which an unfinished run stops (its makespan is then that
    /// time and it does not count as done).
    #[arg(long, value_name = "S", default_value_t = 3600.0)]
    max_time: f64,
    /// Keep the robots' batteries (by default they are set aside: a robot running flat
    /// leaves and its tasks go to the others, which muddles the comparison).
    #[arg(long)]
    batteries: bool,
    /// Print the table as JSON (one object per policy) instead of Markdown.
    #[arg(long)]
    json: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
}

/// A list of seeds.
#[derive(Clone, Debug)]
pub struct Seeds(Vec<u64>);

fn parse_seeds(s: &str) -> Result<Seeds, String> {
    let s = s.trim();
    if let Some((a, b)) = s.split_once("..") {
        let a: u64 = a
            .trim()
            .parse()
            .map_err(|_| format!("{a:?} is not a seed (a whole number)"))?;
        let b: u64 = b
            .trim()
            .trim_start_matches('=')
            .parse()
            .map_err(|_| format!("{b:?} is not a seed (a whole number)"))?;
        if b < a {
            return Err(format!("the range {s} is empty"));
        }
        if b - a >= 100_000 {
            return Err("at most 100,000 seeds".into());
        }
        return Ok(Seeds((a..=b).collect()));
    }
    let seeds: Result<Vec<u64>, String> = s
        .split(',')
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| format!("{x:?} is not a seed (a whole number)"))
        })
        .collect();
    let seeds = seeds?;
    if seeds.is_empty() {
        return Err("no seeds".into());
    }
    Ok(Seeds(seeds))
}

fn load(name: &str) -> Result<Scenario> {
    let path = match name {
        "warehouse" | "hospital" => {
            let bundled = PathBuf::from("scenarios/swarm").join(format!("{name}.toml"));
            if bundled.exists() {
                bundled
            } else {
                PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                    .join("../../scenarios/swarm")
                    .join(format!("{name}.toml"))
            }
        }
        other => PathBuf::from(other),
    };
    Scenario::load(&path)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("loading scenario {}", path.display()))
}

pub fn run(args: CompareArgs) -> Result<()> {
    if !(args.max_time.is_finite() && args.max_time > 0.0) {
        bail!("--max-time must be a positive number of seconds");
    }
    let scenario = load(&args.scenario)?;
    let generated = scenario.robots_configurable();
    let robots = match (args.robots, generated) {
        (Some(_), false) => bail!("{}: its robots come from its map; --robots works with generated scenarios (the warehouse)", args.scenario),
        (r, true) => Some(r.unwrap_or(40)),
        (None, false) => None,
    };
    let count = {
        let ov = Overrides {
            robots,
            duration: Some(0.0),
            ..Overrides::default()
        };
        scenario
            .build(&ov)
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .world()
            .robot_count()
    };
    if count == 0 {
        bail!("{}: the scenario has no robots", args.scenario);
    }
    let tasks = args.tasks.unwrap_or(4 * count);
    let mut policies = args.policies.clone();
    policies.dedup();
    let total = (policies.len() * args.seeds.0.len()) as u64;
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{msg:>24} [{bar:40}] {pos}/{len} runs, {elapsed} wall, eta {eta}",
        ) {
            b.set_style(style.progress_chars("=> "));
        }
        b
    };
    let mut rows = Vec::new();
    for &policy in &policies {
        let mut runs = Vec::new();
        for &seed in &args.seeds.0 {
            bar.set_message(format!("{} seed {seed}", policy.name()));
            let spec = RunSpec {
                policy,
                seed,
                robots,
                tasks,
                max_time: args.max_time,
                batteries: args.batteries,
            };
            let r = run_one(&scenario, &spec).map_err(|e| anyhow::anyhow!("{e}"))?;
            runs.push(r);
            bar.inc(1);
        }
        rows.push(PolicyRow::from_runs(policy, &runs));
    }
    bar.finish_and_clear();
    let seeds = &args.seeds.0;
    let seed_text = match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if seeds.len() > 1 && b - a + 1 == seeds.len() as u64 => {
            format!("seeds {a}..{b}")
        }
        _ => format!(
            "seeds {}",
            seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
    };
    if args.json {
        let out = serde_json::json!({
            "scenario": scenario.name(),
            "robots": count,
            "tasks": tasks,
            "seeds": seeds,
            "policies": rows,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "{}: {count} robots, {tasks} tasks, {seed_text} (mean ± sd)\n",
            scenario.name()
        );
        print!("{}", table(&rows));
    }
    Ok(())
}
