//! `simrob coord compare`: allocation policies side by side on a swarm scenario.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use simrob_coord::cc::CcError;
use simrob_coord::compare::{run_one, run_with_tasks, table, PolicyRow, RunSpec};
use simrob_coord::model::{TaskId, TaskSpec};
use simrob_coord::swarm::SwarmCoordConfig;
use simrob_coord::sync::find_cycle;
use simrob_coord::wire::Policy;
use simrob_swarm::scenario::{Overrides, Scenario};

/// Arguments of `simrob coord compare`.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("scenario_given").args(["scenario", "scenario_flag"]).required(true)))]
pub struct CompareArgs {
    /// The swarm scenario: `warehouse`, `hospital` (the bundled ones) or a scenario file
    /// (.toml or .json) whose map has points of interest to fetch from and deliver to; or
    /// give it as SCENARIO.
    #[arg(long = "scenario", value_name = "S")]
    scenario_flag: Option<String>,
    /// The swarm scenario, as a positional argument (the same as --scenario).
    #[arg(value_name = "SCENARIO")]
    scenario: Option<String>,
    /// The largest scenario file and map read, `--max-scenario-bytes BYTES`.
    #[command(flatten)]
    scenario_bytes: crate::flags::SwarmScenarioBytes,
    /// The most robots and grid cells, `--max-robots N`, `--max-grid-cells N`.
    #[command(flatten)]
    build_limits: crate::flags::SwarmBuildLimits,
    /// Allocation policies to compare: cnp (Contract Net), hungarian (optimal assignment),
    /// greedy (nearest idle robot). Every cost is a straight-line distance; robots drive
    /// along the map's paths, and travel is measured along them.
    #[arg(long, value_delimiter = ',', default_value = "cnp,hungarian,greedy")]
    policies: Vec<Policy>,
    /// Seeds: a range `A..B` (inclusive) or a list `1,5,9` (each at most once). The table gives each figure's
    /// mean ± sample standard deviation over them (n − 1; 0 with one seed).
    #[arg(long, default_value = "1..20", value_parser = parse_seeds)]
    seeds: Seeds,
    /// Robots (generated scenarios such as the warehouse; default 40 there, the map's
    /// robots elsewhere). The warehouse's floor is sized for its robots: more robots, more
    /// aisles, longer trips.
    #[arg(long, value_name = "N")]
    robots: Option<usize>,
    /// Tasks per run, at least 1 and at most --max-tasks (default: four per robot).
    #[arg(long, value_name = "N", conflicts_with = "task_file")]
    tasks: Option<usize>,
    /// Most tasks a run draws (--tasks, or four per robot), at least 1 (default 10000000,
    /// some 150 bytes each); more is refused before the first run.
    #[arg(long, value_name = "N", value_parser = crate::flags::count(1usize, usize::MAX))]
    max_tasks: Option<usize>,
    /// Your own tasks instead of drawn ones, the same in every run: a text file with one
    /// task a line, its release time in simulated seconds and then the task in the words
    /// of the `coord cc` menu (`0 path 20,70 300,120`, `30 goto 100 50 after 1`,
    /// `45 perceive 3 after 1,2`); a task is numbered by its place among the file's tasks
    /// (1, 2, …) unless it says `id N`; `#` starts a comment. At most 1 MiB.
    #[arg(long, value_name = "FILE")]
    task_file: Option<PathBuf>,
    /// Simulated seconds (or 50ms, 2s, 1min) after which an unfinished run stops (its
    /// makespan is then that time and it does not count as done).
    #[arg(long, value_name = "S", default_value_t = 3600.0, value_parser = crate::flags::simulated_seconds)]
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

/// How a heading names the seeds run: `seeds 3..7` for consecutive ones in order, else the
/// list as given (`seeds 1,9,3`).
fn seed_text(seeds: &[u64]) -> String {
    let consecutive = seeds.windows(2).all(|w| w[0].checked_add(1) == Some(w[1]));
    match (seeds.first(), seeds.last()) {
        (Some(a), Some(b)) if seeds.len() > 1 && consecutive => format!("seeds {a}..{b}"),
        _ => format!(
            "seeds {}",
            seeds
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
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
    let mut seen = HashSet::new();
    if let Some(n) = seeds.iter().find(|&&n| !seen.insert(n)) {
        return Err(format!(
            "{n} is listed twice: each seed makes its own runs, give it once (a seed run twice would count twice)"
        ));
    }
    Ok(Seeds(seeds))
}

fn load(name: &str, limit: simrob_swarm::scenario::FileLimit) -> Result<Scenario> {
    Scenario::open_within(Path::new(name), limit)
        .map_err(|e| anyhow::anyhow!("{e}"))
        .with_context(|| format!("loading scenario {name}"))
}

/// The largest task file `--task-file` reads.
const MAX_TASK_FILE: u64 = 1 << 20;

/// Reads a task file (see `--task-file`).
fn read_tasks(path: &Path) -> Result<Vec<(f64, TaskSpec)>> {
    let bytes = crate::shell::read_file(path, MAX_TASK_FILE)
        .with_context(|| format!("cannot read task file {}", path.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("task file {}: not UTF-8 text", path.display()))?;
    parse_tasks(&text).with_context(|| format!("task file {}", path.display()))
}

/// Parses a task file's text: `SECONDS TASK…` a line (see `--task-file`).
fn parse_tasks(text: &str) -> Result<Vec<(f64, TaskSpec)>> {
    let mut tasks: Vec<(usize, f64, TaskSpec)> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some((at, rest)) = words.split_first() else {
            continue;
        };
        let at: f64 = at
            .parse()
            .ok()
            .filter(|t: &f64| t.is_finite() && *t >= 0.0)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "line {}: {at:?} is not a release time (seconds, 0 or more)",
                    n + 1
                )
            })?;
        let mut spec =
            super::menu::parse_task(rest).map_err(|e| anyhow::anyhow!("line {}: {e}", n + 1))?;
        if spec.id == 0 {
            spec.id = tasks.len() as u64 + 1;
        }
        tasks.push((n + 1, at, spec));
    }
    if tasks.is_empty() {
        bail!("no tasks (one a line: SECONDS TASK, e.g. `0 goto 100 50`)");
    }
    let mut ids = HashSet::new();
    for (line, _, spec) in &tasks {
        if !ids.insert(spec.id) {
            bail!("line {line}: task {} is numbered twice", spec.id);
        }
    }
    // What the Control Center of every run will check (it would refuse the task), and
    // what would keep a task waiting for ever: a task of another world, a cycle.
    let config = SwarmCoordConfig::default();
    let after: HashMap<TaskId, &[TaskId]> = tasks
        .iter()
        .map(|(_, _, spec)| (spec.id, spec.after.as_slice()))
        .collect();
    for (line, _, spec) in &tasks {
        if let Some(missing) = spec.after.iter().find(|id| !ids.contains(id)) {
            bail!("line {line}: after {missing}: there is no task {missing} in the file (it would wait for ever)");
        }
        config
            .cc
            .check_limits(spec)
            .map_err(|e| anyhow::anyhow!("line {line}: {e}"))?;
        if let Some(w) = spec.world.as_deref().filter(|w| *w != config.world) {
            bail!(
                "line {line}: in {w}: every robot of these runs is in world {} (it would wait for ever)",
                config.world
            );
        }
        if let Some(cycle) = find_cycle(spec.id, spec.after.as_slice(), |t| after.get(&t).copied())
        {
            let e = CcError::Cycle {
                task: spec.id,
                cycle,
            };
            bail!("line {line}: {e}");
        }
    }
    Ok(tasks.into_iter().map(|(_, at, spec)| (at, spec)).collect())
}

pub fn run(args: CompareArgs) -> Result<()> {
    if !(args.max_time.is_finite() && args.max_time > 0.0) {
        bail!("--max-time must be a positive number of seconds");
    }
    if args.tasks == Some(0) {
        bail!("--tasks 0: no tasks to allocate (at least 1; a run without tasks would only wait until --max-time)");
    }
    let name = crate::shell::scenario_given(&args.scenario, &args.scenario_flag)?;
    let scenario = load(&name, args.scenario_bytes.limit())?;
    let build_limits = args.build_limits.limits()?;
    let task_limit = simrob_coord::compare::TaskLimit {
        max_tasks: args.max_tasks.unwrap_or(simrob_coord::compare::MAX_TASKS),
        raise_with: Some("--max-tasks N"),
    };
    let generated = scenario.robots_configurable();
    let robots = match (args.robots, generated) {
        (Some(_), false) => bail!("{}: its robots come from its map; --robots works with generated scenarios (the warehouse)", name),
        (r, true) => Some(r.unwrap_or(40)),
        (None, false) => None,
    };
    let count = {
        let ov = Overrides {
            robots,
            duration: Some(0.0),
            limits: build_limits,
            ..Overrides::default()
        };
        scenario
            .build(&ov)
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .world()
            .robot_count()
    };
    if count == 0 {
        bail!("{}: the scenario has no robots", name);
    }
    let given = match &args.task_file {
        Some(path) => Some(read_tasks(path)?),
        None => None,
    };
    let tasks = match &given {
        Some(list) => list.len(),
        None => args.tasks.unwrap_or(4 * count),
    };
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
                task_limit,
                build_limits,
            };
            let r = match &given {
                Some(list) => run_with_tasks(&scenario, &spec, list),
                None => run_one(&scenario, &spec),
            }
            .map_err(|e| anyhow::anyhow!("{e}"))?;
            runs.push(r);
            bar.inc(1);
        }
        rows.push(PolicyRow::from_runs(policy, &runs));
    }
    bar.finish_and_clear();
    let seeds = &args.seeds.0;
    let seed_text = seed_text(seeds);
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

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_coord::model::TaskKind;

    #[test]
    fn a_heading_names_the_seeds_that_ran() {
        assert_eq!(seed_text(&[3, 4, 5]), "seeds 3..5");
        assert_eq!(seed_text(&[1, 9, 3]), "seeds 1,9,3");
        assert_eq!(seed_text(&[5, 3]), "seeds 5,3");
        assert_eq!(seed_text(&[40401, 913, 7]), "seeds 40401,913,7");
        assert_eq!(seed_text(&[u64::MAX, 0]), "seeds 18446744073709551615,0");
        assert_eq!(seed_text(&[7]), "seeds 7");
    }

    #[test]
    fn a_task_file_numbers_its_tasks_and_keeps_times_and_preconditions() {
        let text = "# time  task\n0 path 20,70 300,120\n\n 12.5 goto 100 50 after 1  # later\n3 perceive 2 after 1,2 id 9\n";
        let tasks = parse_tasks(text).unwrap();
        assert_eq!(tasks.len(), 3);
        assert_eq!((tasks[0].0, tasks[0].1.id), (0.0, 1));
        assert!(matches!(tasks[0].1.kind, TaskKind::Path { ref points } if points.len() == 2));
        assert_eq!(
            (tasks[1].0, tasks[1].1.id, &tasks[1].1.after[..]),
            (12.5, 2, &[1][..])
        );
        assert_eq!((tasks[2].1.id, &tasks[2].1.after[..]), (9, &[1, 2][..]));
    }

    #[test]
    fn a_seed_listed_twice_is_refused() {
        assert_eq!(parse_seeds("1,5,9").unwrap().0, [1, 5, 9]);
        assert_eq!(
            parse_seeds("1, 1").unwrap_err(),
            "1 is listed twice: each seed makes its own runs, give it once (a seed run twice would count twice)"
        );
        assert!(parse_seeds("3,1,2,3")
            .unwrap_err()
            .starts_with("3 is listed twice"));
    }

    #[test]
    fn a_bad_task_file_names_the_line_and_what_is_wrong() {
        let err = |text: &str| format!("{:#}", parse_tasks(text).unwrap_err());
        assert!(err("").contains("no tasks"));
        assert!(err("0 goto 1 2\nsoon goto 3 4").contains("line 2"));
        assert!(err("-1 goto 1 2").contains("release time"));
        assert!(err("0 fly 1 2").contains("line 1"));
        assert!(err("0 goto 1 2\n0 goto 3 4 id 1").contains("numbered twice"));
        assert!(err("0 goto 1 2 after 7").contains("no task 7"));
        // What the Control Center would refuse, or what would wait for ever, is refused
        // before any run, with its line.
        assert_eq!(
            err("0 goto 100 100 after 2\n0 goto 200 200 after 1"),
            "line 1: task 1: its preconditions close a cycle (1 → 2 → 1)"
        );
        assert_eq!(
            err("0 goto 100 100 after 1"),
            "line 1: task 1: its preconditions close a cycle (1 → 1)"
        );
        assert_eq!(
            err("0 goto 1 2\n0 goto 1000001 100"),
            "line 2: invalid: x = 1000001 is beyond ±1000000 m (key max_coordinate)"
        );
        assert_eq!(
            err("0 goto 100 100 in mrs"),
            "line 1: in mrs: every robot of these runs is in world swarm (it would wait for ever)"
        );
        assert!(parse_tasks("0 goto 999999 100 in swarm").is_ok());
    }
}
