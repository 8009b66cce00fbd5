//! `simrob batch`: parameter sweeps. A sweep file (TOML) names a `simrob` subcommand that
//! prints a JSON summary, the scenarios, seeds and parameter grid to run it over and the
//! summary fields to keep; runs go in parallel on this machine, or as a Slurm job array.
//!
//! Results, one row per run: `DIR/results.jsonl` (appended as runs finish, which is what makes
//! an interrupted sweep resumable) and `DIR/results.csv`, both sorted by run number when the
//! sweep ends. With Slurm, each array task writes `DIR/parts/chunk-K.jsonl` and
//! `simrob batch collect DIR` merges them, checking every row against the sweep kept in
//! `DIR/sweep.json`.

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// The most runs a sweep makes (scenarios × parameter combinations × seeds) unless
/// `--max-runs` says otherwise.
const DEFAULT_MAX_RUNS: usize = 1_000_000;

/// The largest sweep file read (bytes, 1 MiB) unless `--max-sweep-file-bytes` says
/// otherwise; a path naming anything but a regular file is refused.
const DEFAULT_MAX_SWEEP_FILE: u64 = 1 << 20;

/// The most bytes a sweep's runs hold together (256 MiB) unless `--max-sweep-bytes` says
/// otherwise: their command lines, parameter values and scenarios. A long argument or value
/// times many runs is refused before it takes the memory.
const DEFAULT_MAX_SWEEP_BYTES: usize = 256 << 20;

/// The largest result file `collect` (and `simrob plot batch`) reads (bytes, 1 GiB: a
/// sweep's 1,000,000 rows) unless `--max-results-bytes` says otherwise.
pub(crate) const DEFAULT_MAX_RESULTS_FILE: u64 = 1 << 30;

/// How a refusal says to raise each limit.
const RAISE_RUNS: &str = "--max-runs N";
const RAISE_SWEEP_FILE: &str = "--max-sweep-file-bytes BYTES";
const RAISE_SWEEP_BYTES: &str = "--max-sweep-bytes BYTES";
pub(crate) const RAISE_RESULTS: &str = "--max-results-bytes BYTES";

/// What a sweep may be: its file's size, its runs and what they hold together. A flag not
/// given is today's limit; `batch --slurm` passes the given ones on to its array tasks.
#[derive(clap::Args, Clone, Debug, Default)]
pub struct SweepLimits {
    /// Largest sweep file read, bytes, at least 1 (default 1048576); a larger one is refused.
    #[arg(long, value_name = "BYTES", value_parser = crate::flags::count(1u64, u64::MAX))]
    max_sweep_file_bytes: Option<u64>,
    /// Most runs a sweep makes (scenarios × parameter combinations × seeds; `seeds.count`
    /// alone too), at least 1 (default 1000000); a sweep of more is refused before its runs
    /// are made.
    #[arg(long, value_name = "N", value_parser = crate::flags::count(1u64, u64::MAX))]
    max_runs: Option<u64>,
    /// Most bytes a sweep's runs hold together (their command lines, parameter values and
    /// scenarios), at least 1 (default 268435456); a sweep of more is refused before its
    /// runs are made.
    #[arg(long, value_name = "BYTES", value_parser = crate::flags::count(1u64, u64::MAX))]
    max_sweep_bytes: Option<u64>,
}

impl SweepLimits {
    /// The largest sweep file read, bytes.
    fn file(&self) -> u64 {
        self.max_sweep_file_bytes.unwrap_or(DEFAULT_MAX_SWEEP_FILE)
    }

    /// The most runs of a sweep.
    fn runs(&self) -> usize {
        self.max_runs.map_or(DEFAULT_MAX_RUNS, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        })
    }

    /// The most bytes a sweep's runs hold together.
    fn bytes(&self) -> usize {
        self.max_sweep_bytes.map_or(DEFAULT_MAX_SWEEP_BYTES, |n| {
            usize::try_from(n).unwrap_or(usize::MAX)
        })
    }

    /// The largest DIR/sweep.json read: the sweep file it keeps, written as JSON (at most 6
    /// bytes a byte of the file), with room for the rest; never below the largest text
    /// file read.
    fn layout_file(&self) -> u64 {
        self.file()
            .saturating_mul(6)
            .saturating_add(1 << 20)
            .max(crate::shell::MAX_TEXT_FILE)
    }

    /// The flags given, as words of a command line (for the array tasks of `--slurm` and
    /// the `collect` they are merged with).
    fn given(&self) -> Vec<String> {
        [
            ("--max-sweep-file-bytes", self.max_sweep_file_bytes),
            ("--max-runs", self.max_runs),
            ("--max-sweep-bytes", self.max_sweep_bytes),
        ]
        .into_iter()
        .filter_map(|(flag, n)| n.map(|n| format!("{flag} {n}")))
        .collect()
    }
}

/// The longest sweep name (`name`, or the file's stem), in characters.
const MAX_NAME: usize = 100;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// `simrob batch`.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct BatchArgs {
    #[command(subcommand)]
    command: Option<BatchCommand>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(clap::Subcommand)]
enum BatchCommand {
    /// Merge the results of a sweep's Slurm array tasks (DIR/parts/*.jsonl) into
    /// DIR/results.jsonl and DIR/results.csv.
    Collect {
        /// The sweep's output directory.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// The limits of the sweep kept in DIR/sweep.json, whose rows are checked against
        /// it: those the sweep was run with.
        #[command(flatten)]
        limits: SweepLimits,
        /// Largest result file read (DIR/results.jsonl, each DIR/parts/*.jsonl), bytes, at
        /// least 1 (default 1073741824); a larger one is refused, nothing written.
        #[arg(long, value_name = "BYTES", value_parser = crate::flags::count(1u64, u64::MAX))]
        max_results_bytes: Option<u64>,
    },
}

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("slurm_or_chunk").args(["slurm", "chunk"]).multiple(true)))]
struct RunArgs {
    /// The sweep file (TOML): `command`, `scenarios`, `seeds`, `[parameters]`, `metrics`.
    #[arg(value_name = "SWEEP")]
    sweep: Option<PathBuf>,
    /// Output directory (default: results/NAME, NAME being the sweep's `name` or file stem).
    #[arg(long, short = 'o', value_name = "DIR")]
    out: Option<PathBuf>,
    /// Runs at the same time (default: the number of cores). Each run is given its share of
    /// the cores, the cores over N (at least 1), as $SIMROB_THREADS: what `swarm run`,
    /// `swarm bench` and `soccer case` use when their --threads is not given (a sweep's own
    /// $SIMROB_THREADS is left to every run).
    #[arg(long, short = 'j', value_name = "N", value_parser = at_least_one)]
    jobs: Option<usize>,
    /// Run again the runs that failed last time (finished runs are otherwise skipped).
    #[arg(long)]
    retry_failed: bool,
    /// List the runs and their command lines without running them.
    #[arg(long)]
    dry_run: bool,
    /// No progress bar.
    #[arg(long)]
    quiet: bool,
    /// Write a Slurm job-array script (DIR/sweep.sbatch) instead of running: one array task
    /// per chunk of runs. Submit it with `sbatch`, then `simrob batch collect DIR`.
    #[arg(long)]
    slurm: bool,
    /// Runs per array task (--slurm, --chunk).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = at_least_one, requires = "slurm_or_chunk")]
    chunk_size: usize,
    /// Array tasks running at once, Slurm's `--array=…%N` (--slurm; default: no limit).
    #[arg(long, value_name = "N", value_parser = at_least_one, requires = "slurm")]
    max_parallel: Option<usize>,
    /// Slurm partition (--slurm).
    #[arg(long, value_name = "NAME", requires = "slurm")]
    partition: Option<String>,
    /// Time limit of each array task, Slurm's format: MINUTES, MINUTES:SECONDS,
    /// HOURS:MINUTES:SECONDS, DAYS-HOURS[:MINUTES[:SECONDS]] or UNLIMITED, e.g. 00:30:00
    /// (--slurm).
    #[arg(long, value_name = "TIME", requires = "slurm", value_parser = slurm_time)]
    time: Option<String>,
    /// Memory of each array task, Slurm's format: a whole number, megabytes or with a unit
    /// K, M, G or T, e.g. 2G (--slurm).
    #[arg(long, value_name = "SIZE", requires = "slurm", value_parser = slurm_mem)]
    mem: Option<String>,
    /// CPUs of each array task; its runs share them (--slurm).
    #[arg(long, value_name = "N", default_value_t = 1, requires = "slurm")]
    cpus_per_task: usize,
    /// The simrob binary the array tasks run, on a filesystem the nodes share (--slurm;
    /// default: this one).
    #[arg(long, value_name = "PATH", requires = "slurm")]
    binary: Option<PathBuf>,
    /// Old spelling of `--binary`.
    #[arg(long = "simrob", value_name = "PATH", hide = true,
          value_parser = crate::flags::renamed("simrob", "binary", ""))]
    old_simrob: Option<String>,
    /// Run only chunk K of --chunk-size runs, into DIR/parts/chunk-K.jsonl: each task of the
    /// Slurm job array that --slurm writes runs its own chunk so; `simrob batch collect DIR`
    /// merges the parts.
    #[arg(long, value_name = "K")]
    chunk: Option<usize>,
    #[command(flatten)]
    limits: SweepLimits,
}

/// The forms `seeds` takes, for its error messages.
const SEED_FORMS: &str =
    "`seeds` is a list of whole numbers 0 or more (`seeds = [1, 2, 3]`) or a range (`seeds = { from = 1, count = 8 }`)";

/// A count of 1 or more (`--jobs`, `--chunk-size`, `--max-parallel`): anything else does
/// not parse (exit status 2).
fn at_least_one(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{s:?}: expected a whole number, 1 or more")),
    }
}

/// Whether `s` is one or more ASCII digits.
fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// `--time` in one of Slurm's forms (`sbatch --time`); anything else does not parse.
fn slurm_time(s: &str) -> Result<String, String> {
    let (days, rest) = match s.split_once('-') {
        Some((d, rest)) => (Some(d), rest),
        None => (None, s),
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let ok = ["UNLIMITED", "INFINITE"].contains(&s.to_ascii_uppercase().as_str())
        || (days.is_none_or(all_digits)
            && (1..=3).contains(&parts.len())
            && parts.iter().all(|p| all_digits(p)));
    if ok {
        Ok(s.to_string())
    } else {
        Err(format!(
            "{s:?}: Slurm's time is MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, \
             DAYS-HOURS[:MINUTES[:SECONDS]] or UNLIMITED (e.g. 00:30:00)"
        ))
    }
}

/// `--mem` in Slurm's form: a whole number with an optional unit K, M, G or T.
fn slurm_mem(s: &str) -> Result<String, String> {
    let number = s
        .strip_suffix(['K', 'M', 'G', 'T', 'k', 'm', 'g', 't'])
        .unwrap_or(s);
    if all_digits(number) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "{s:?}: Slurm's memory is a whole number of megabytes, or with a unit K, M, G or T \
             (e.g. 2G)"
        ))
    }
}

/// Slurm's default `MaxArraySize`: array indices go from 0 to one less.
const SLURM_MAX_ARRAY_SIZE: usize = 1001;

/// A TOML value as a message shows it.
fn toml_shown(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        toml::Value::Datetime(d) => d.to_string(),
        toml::Value::Array(_) => "a list".into(),
        toml::Value::Table(_) => "a table without whole numbers `from` and `count`".into(),
    }
}

/// Seeds: a list of distinct whole numbers, or `{ from = 1, count = 8 }` (at most
/// `max_runs`).
fn seeds_of(v: &toml::Value, max_runs: usize) -> Result<Vec<u64>> {
    let whole = |v: &toml::Value| v.as_integer().and_then(|i| u64::try_from(i).ok());
    match v {
        toml::Value::Array(items) => {
            if items.is_empty() {
                bail!("`seeds` is empty");
            }
            let mut seen = std::collections::HashSet::new();
            items
                .iter()
                .map(|item| {
                    let Some(n) = whole(item) else {
                        bail!("{SEED_FORMS}: found {} in the list", toml_shown(item));
                    };
                    if !seen.insert(n) {
                        bail!(
                            "`seeds` lists {n} twice: each seed makes its own runs, give it once"
                        );
                    }
                    Ok(n)
                })
                .collect()
        }
        toml::Value::Table(t) => {
            let (Some(from), Some(count)) = (
                t.get("from").and_then(whole),
                t.get("count").and_then(whole),
            ) else {
                bail!("{SEED_FORMS}: found {}", toml_shown(v));
            };
            if let Some(k) = t.keys().find(|k| !["from", "count"].contains(&k.as_str())) {
                bail!("{SEED_FORMS}: unknown key {k:?}");
            }
            if count == 0 || count > max_runs as u64 {
                bail!(
                    "`seeds.count` must be 1 to {max_runs}, found {count} (a sweep has at most \
                     {max_runs} runs: raise it with {RAISE_RUNS})"
                );
            }
            Ok((from..from.saturating_add(count)).collect())
        }
        other => bail!("{SEED_FORMS}: found {}", toml_shown(other)),
    }
}

/// The sweep file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    name: Option<String>,
    /// The simrob subcommand and its arguments, with `{scenario}`, `{seed}`, `{run}`, `{out}`
    /// and `{PARAMETER}` placeholders.
    command: Vec<String>,
    #[serde(default)]
    scenarios: Vec<String>,
    seeds: Option<toml::Value>,
    #[serde(default)]
    parameters: BTreeMap<String, Vec<toml::Value>>,
    /// Summary fields to keep (dotted paths into the JSON); default: every top-level number,
    /// string and boolean.
    #[serde(default)]
    metrics: Vec<String>,
    /// Seconds a run may take before it is stopped and recorded as `timeout`.
    timeout: Option<f64>,
}

/// One run of the sweep.
#[derive(Debug, Clone, PartialEq)]
struct Run {
    index: usize,
    scenario: Option<String>,
    seed: Option<u64>,
    params: Vec<(String, Value)>,
    args: Vec<String>,
}

/// A sweep expanded into runs.
struct Sweep {
    name: String,
    /// `command` as the file gives it, placeholders unfilled.
    command: Vec<String>,
    runs: Vec<Run>,
    metrics: Vec<String>,
    params: Vec<String>,
    timeout: Option<Duration>,
}

fn toml_to_json(v: &toml::Value) -> Result<Value> {
    Ok(match v {
        toml::Value::String(s) => json!(s),
        toml::Value::Integer(i) => json!(i),
        // JSON has no NaN or infinity (they would become null, an empty argument).
        toml::Value::Float(f) if !f.is_finite() => {
            bail!("{f} is not a finite number")
        }
        toml::Value::Float(f) => json!(f),
        toml::Value::Boolean(b) => json!(b),
        other => bail!(
            "parameter values must be numbers, strings or booleans, found {}",
            other.type_str()
        ),
    })
}

/// The bytes of `arg` outside `{placeholders}`.
fn literal_len(arg: &str) -> usize {
    let mut inside = false;
    arg.bytes()
        .filter(|&b| {
            match b {
                b'{' => inside = true,
                b'}' if inside => {
                    inside = false;
                    return false;
                }
                _ => {}
            }
            !inside
        })
        .count()
}

/// About what a parameter `name = v` of a combination takes, in bytes.
fn weight(name: &str, v: &Value) -> usize {
    let value = match v {
        Value::String(s) => s.len(),
        _ => 24,
    };
    name.len() + value + 32
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Checks a sweep's name, which names its output directory (`results/NAME`) and its Slurm
/// job: letters, digits, `-`, `_` and `.`, not starting with `.`, at most [`MAX_NAME`]
/// characters. So it can neither lead out of `results/` nor put a line into a script.
fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.chars().count() <= MAX_NAME
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        bail!(
            "name {:?}: 1 to {MAX_NAME} letters, digits, '-', '_' or '.', not starting with '.' \
             (it names the output directory results/NAME)",
            name.chars().take(MAX_NAME + 20).collect::<String>()
        );
    }
    Ok(())
}

/// Replaces `{name}` placeholders; an unknown one is an error.
fn fill(arg: &str, values: &HashMap<&str, String>) -> Result<String> {
    let mut out = String::new();
    let mut rest = arg;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open..].find('}') else {
            bail!("command argument {arg:?}: an unclosed {{");
        };
        let name = &rest[open + 1..open + close];
        let Some(v) = values.get(name) else {
            let mut known: Vec<&str> = values.keys().copied().collect();
            known.sort_unstable();
            bail!(
                "command argument {arg:?}: no value for {{{name}}} (known: {})",
                known.join(", ")
            );
        };
        out.push_str(v);
        rest = &rest[open + close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

impl Sweep {
    fn load(path: &Path, out: &Path, limits: &SweepLimits) -> Result<(Sweep, String)> {
        let text = crate::shell::read_text_within(
            path,
            "the sweep file",
            limits.file(),
            RAISE_SWEEP_FILE,
        )?;
        let sweep = Sweep::parse(&text, path, out, limits)
            .with_context(|| format!("sweep file {}", path.display()))?;
        Ok((sweep, text))
    }

    fn parse(text: &str, path: &Path, out: &Path, limits: &SweepLimits) -> Result<Sweep> {
        let max_runs = limits.runs();
        let max_bytes = limits.bytes();
        let file: SweepFile = toml::from_str(text)?;
        if file.command.is_empty() {
            bail!("`command` is empty: give a simrob subcommand, e.g. [\"swarm\", \"run\", \"{{scenario}}\", \"--json\"]");
        }
        if file.command[0] == "batch" {
            bail!("`command` is `batch`: a sweep cannot run sweeps (each would start the next without end)");
        }
        let seeds: Vec<Option<u64>> = match &file.seeds {
            None => vec![None],
            Some(v) => seeds_of(v, max_runs)?.into_iter().map(Some).collect(),
        };
        if let Some((_, s)) = file
            .scenarios
            .iter()
            .enumerate()
            .find(|(i, s)| file.scenarios[..*i].contains(s))
        {
            bail!("`scenarios` lists {s:?} twice: each scenario makes its own runs, give it once");
        }
        let scenarios: Vec<Option<String>> = if file.scenarios.is_empty() {
            vec![None]
        } else {
            file.scenarios.into_iter().map(Some).collect()
        };
        let mut grid: Vec<Vec<(String, Value)>> = vec![Vec::new()];
        // Each parameter's values, for counting the runs' bytes before making them.
        let mut param_values: Vec<(String, Vec<Value>)> = Vec::new();
        // What the combinations hold, in bytes: past `max_bytes` they are not made.
        let mut grid_bytes = 0usize;
        for (name, values) in &file.parameters {
            if ["scenario", "seed", "run", "out"].contains(&name.as_str()) {
                bail!("parameter {name:?}: the name is taken by a built-in placeholder");
            }
            if values.is_empty() {
                bail!("parameter {name:?} has no values");
            }
            let values: Vec<Value> = values
                .iter()
                .map(toml_to_json)
                .collect::<Result<_>>()
                .with_context(|| format!("parameter {name:?}"))?;
            if let Some((_, v)) = values
                .iter()
                .enumerate()
                .find(|(i, v)| values[..*i].contains(v))
            {
                bail!(
                    "parameter {name:?} lists {} twice: each value makes its own runs, give it \
                     once",
                    plain(v)
                );
            }
            // Counted before the combinations are made: a grid past the limit is refused
            // before it takes the memory.
            let combos = grid.len().saturating_mul(values.len());
            if combos > max_runs {
                bail!(
                    "the parameters make at least {combos} combinations: a sweep has at most \
                     {max_runs} runs (raise it with {RAISE_RUNS})"
                );
            }
            let value_bytes = values
                .iter()
                .fold(0usize, |sum, v| sum.saturating_add(weight(name, v)));
            grid_bytes = grid_bytes
                .saturating_mul(values.len())
                .saturating_add(grid.len().saturating_mul(value_bytes));
            if grid_bytes > max_bytes {
                bail!(
                    "the parameters' combinations take at least {grid_bytes} bytes: a sweep's \
                     runs hold at most {max_bytes} bytes together (raise it with \
                     {RAISE_SWEEP_BYTES})"
                );
            }
            param_values.push((name.clone(), values.clone()));
            grid = grid
                .into_iter()
                .flat_map(|combo| {
                    values.iter().map(move |v| {
                        let mut c = combo.clone();
                        c.push((name.clone(), v.clone()));
                        c
                    })
                })
                .collect();
        }
        let params: Vec<String> = file.parameters.keys().cloned().collect();
        for m in &file.metrics {
            if params.contains(m) || COLUMNS.contains(&m.as_str()) {
                bail!("metric {m:?} has the name of a parameter or a result column");
            }
        }
        let total = scenarios
            .len()
            .saturating_mul(grid.len())
            .saturating_mul(seeds.len());
        if total > max_runs {
            bail!("{total} runs: a sweep has at most {max_runs} (raise it with {RAISE_RUNS})");
        }
        let named = file.name.is_some();
        let name = match file.name {
            Some(n) => n,
            None => path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "sweep".into()),
        };
        check_name(&name).with_context(|| {
            if named {
                "`name`"
            } else {
                "the file's name, the sweep's name when `name` is not given: give `name`"
            }
        })?;
        // Every run's command line holds at least the command's text outside placeholders:
        // a long argument times many runs is refused before any run is made.
        let literal = file
            .command
            .iter()
            .fold(0usize, |sum, a| sum.saturating_add(literal_len(a) + 1));
        let at_least = total.saturating_mul(literal);
        if at_least > max_bytes {
            bail!(
                "{total} runs of a command of {literal} bytes take at least {at_least} bytes: a \
                 sweep's runs hold at most {max_bytes} bytes together (raise it with \
                 {RAISE_SWEEP_BYTES})"
            );
        }
        // What the runs will hold, counted exactly before any is made: a sweep past the limit
        // is refused at once, without taking the memory.
        let counted = RunBytes {
            command: &file.command,
            total,
            out_len: out.display().to_string().len(),
            scenarios: &scenarios,
            seeds: &seeds,
            params: &param_values,
        }
        .count(|arg| {
            // The placeholders every run fills, checked as filling them would.
            let mut known: HashMap<&str, String> = HashMap::new();
            for k in ["run", "out"] {
                known.insert(k, String::new());
            }
            if scenarios[0].is_some() {
                known.insert("scenario", String::new());
            }
            if seeds[0].is_some() {
                known.insert("seed", String::new());
            }
            for (k, _) in &param_values {
                known.insert(k, String::new());
            }
            fill(arg, &known).map(drop)
        })?;
        if counted > max_bytes {
            bail!(
                "{total} runs take {counted} bytes (command lines, parameter values, scenarios): \
                 a sweep's runs hold at most {max_bytes} bytes together (raise it with \
                 {RAISE_SWEEP_BYTES})"
            );
        }
        let mut runs = Vec::with_capacity(total);
        // Bytes of the runs so far: past `max_bytes` the sweep is refused.
        let mut command_bytes = 0usize;
        for scenario in &scenarios {
            for combo in &grid {
                for seed in &seeds {
                    let index = runs.len();
                    let mut values: HashMap<&str, String> = HashMap::new();
                    values.insert("run", index.to_string());
                    values.insert("out", out.display().to_string());
                    if let Some(s) = scenario {
                        values.insert("scenario", s.clone());
                    }
                    if let Some(s) = seed {
                        values.insert("seed", s.to_string());
                    }
                    for (k, v) in combo {
                        values.insert(k, plain(v));
                    }
                    let args = file
                        .command
                        .iter()
                        .map(|a| fill(a, &values))
                        .collect::<Result<Vec<_>>>()?;
                    command_bytes = args
                        .iter()
                        .map(String::len)
                        .chain(combo.iter().map(|(k, v)| weight(k, v)))
                        .chain(scenario.iter().map(String::len))
                        .fold(command_bytes, |sum, n| sum.saturating_add(n + 1));
                    if command_bytes > max_bytes {
                        bail!(
                            "the first {} of {total} runs already take {command_bytes} bytes \
                             (command lines, parameter values, scenarios): a sweep's runs hold \
                             at most {max_bytes} bytes together (raise it with \
                             {RAISE_SWEEP_BYTES})",
                            index + 1
                        );
                    }
                    runs.push(Run {
                        index,
                        scenario: scenario.clone(),
                        seed: *seed,
                        params: combo.clone(),
                        args,
                    });
                }
            }
        }
        // A parameter `command` never uses would make runs that differ only in a column.
        for name in &params {
            let placeholder = format!("{{{name}}}");
            if !file.command.iter().any(|a| a.contains(&placeholder)) {
                bail!(
                    "parameter {name:?} is never used in `command`: write {placeholder} where its \
                     value goes, or remove the parameter"
                );
            }
        }
        // Seeds (or scenarios) `command` never uses would make runs that are the same
        // simulation, differing only in a column.
        for (given, name, list) in [
            (file.seeds.is_some(), "seed", "seeds"),
            (scenarios[0].is_some(), "scenario", "scenarios"),
        ] {
            let placeholder = format!("{{{name}}}");
            if given && !file.command.iter().any(|a| a.contains(&placeholder)) {
                bail!(
                    "`{list}` is given but `command` never uses {placeholder}: every {name} \
                     would run the same simulation; write {placeholder} where it goes, or \
                     remove `{list}`"
                );
            }
        }
        let timeout = match file.timeout {
            Some(t) if !(t.is_finite() && t > 0.0) => {
                bail!("`timeout` must be a number of seconds greater than 0, found {t}")
            }
            Some(t) => Some(Duration::from_secs_f64(t.min(1e9))),
            None => None,
        };
        Ok(Sweep {
            name,
            command: file.command,
            runs,
            metrics: file.metrics,
            params,
            timeout,
        })
    }
}

/// What a sweep's runs will be made of, to count their bytes before making them.
struct RunBytes<'a> {
    command: &'a [String],
    total: usize,
    out_len: usize,
    scenarios: &'a [Option<String>],
    seeds: &'a [Option<u64>],
    params: &'a [(String, Vec<Value>)],
}

/// Decimal digits of `n`.
fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// Decimal digits of 0, 1, …, n − 1 together.
fn digits_below(n: usize) -> usize {
    let n = n as u64;
    let mut sum = 0u64;
    let mut low = 0u64;
    let mut width = 1u64;
    while low < n {
        let high = if width == 1 {
            10
        } else {
            low.saturating_mul(10)
        }
        .min(n);
        sum = sum.saturating_add((high - low).saturating_mul(width));
        low = high;
        width += 1;
    }
    usize::try_from(sum).unwrap_or(usize::MAX)
}

impl RunBytes<'_> {
    /// The bytes the runs' command lines, parameter values and scenarios take together, as
    /// the runs being made count them (each piece plus one); `check` is called on every
    /// argument first (an unknown placeholder is its error).
    fn count(&self, check: impl Fn(&str) -> Result<()>) -> Result<usize> {
        let n = self.total;
        // Each value of a list of `k` is in n / k of the runs.
        let spread = |k: usize, sum: usize| (n / k.max(1)).saturating_mul(sum);
        let mut bytes = 0usize;
        for arg in self.command {
            check(arg)?;
            bytes = bytes.saturating_add(n.saturating_mul(literal_len(arg) + 1));
            let mut rest = arg.as_str();
            while let Some(open) = rest.find('{') {
                let Some(close) = rest[open..].find('}') else {
                    break;
                };
                let name = &rest[open + 1..open + close];
                let filled = match name {
                    "run" => digits_below(n),
                    "out" => n.saturating_mul(self.out_len),
                    "scenario" => spread(
                        self.scenarios.len(),
                        self.scenarios.iter().flatten().map(String::len).sum(),
                    ),
                    "seed" => spread(
                        self.seeds.len(),
                        self.seeds.iter().flatten().map(|&s| digits(s)).sum(),
                    ),
                    _ => self
                        .params
                        .iter()
                        .find(|(k, _)| k == name)
                        .map_or(0, |(_, vs)| {
                            spread(vs.len(), vs.iter().map(|v| plain(v).len()).sum())
                        }),
                };
                bytes = bytes.saturating_add(filled);
                rest = &rest[open + close + 1..];
            }
        }
        for (k, vs) in self.params {
            let sum = vs.iter().map(|v| weight(k, v) + 1).sum();
            bytes = bytes.saturating_add(spread(vs.len(), sum));
        }
        let scenario_bytes = self.scenarios.iter().flatten().map(|s| s.len() + 1).sum();
        bytes = bytes.saturating_add(spread(self.scenarios.len(), scenario_bytes));
        Ok(bytes)
    }
}

/// The result columns after parameters and metrics.
const COLUMNS: [&str; 7] = [
    "run",
    "scenario",
    "seed",
    "wall_s",
    "status",
    "exit_code",
    "error",
];

/// Follows a dotted path into a JSON value.
fn lookup<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v, |v, k| match v {
        Value::Object(o) => o.get(k),
        Value::Array(a) => k.parse::<usize>().ok().and_then(|i| a.get(i)),
        _ => None,
    })
}

/// The JSON summary on `stdout`: the whole output if it is one JSON object (pretty-printed or
/// not), else its last line that is one.
fn summary_of(stdout: &str) -> Option<Map<String, Value>> {
    if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(stdout.trim()) {
        return Some(o);
    }
    stdout
        .lines()
        .rev()
        .filter(|l| l.trim_start().starts_with('{'))
        .find_map(|l| match serde_json::from_str::<Value>(l.trim()) {
            Ok(Value::Object(o)) => Some(o),
            _ => None,
        })
}

/// How a run ended.
struct Outcome {
    status: &'static str,
    exit_code: Option<i32>,
    stdout: String,
    error: Option<String>,
    wall: f64,
}

/// What a failed run's standard error says went wrong: its first line starting `error:` or
/// `Error:` (an argument refused, a scenario not found: what follows is help), else its last
/// line; at most 300 characters.
fn error_line(text: &str) -> Option<String> {
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    lines()
        .find(|l| l.starts_with("error:") || l.starts_with("Error:"))
        .or_else(|| lines().next_back())
        .map(|l| l.chars().take(300).collect())
}

/// Kills `child` and every process of its process group (what it started).
fn stop_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    if let Ok(pid) = i32::try_from(child.id()) {
        use nix::sys::signal::{killpg, Signal};
        let _ = killpg(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
    }
    let _ = child.kill();
}

/// Runs `simrob ARGS`, stopping it after `timeout`; `None` if the sweep was interrupted.
/// `threads`: the run's share of the cores, given as `SIMROB_THREADS` (see
/// [`crate::flags::THREADS_ENV`]).
fn execute(
    exe: &Path,
    args: &[String],
    threads: Option<usize>,
    timeout: Option<Duration>,
    stop: &AtomicBool,
) -> Option<Outcome> {
    let started = Instant::now();
    let mut command = Command::new(exe);
    if let Some(n) = threads {
        command.env(crate::flags::THREADS_ENV, n.to_string());
    }
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // The run in a process group of its own, so that stopping it stops what it started too
    // (`soccer team`'s players, anything a subcommand spawns), and what it left running when
    // it ended does not hold its output open.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command.spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            return Some(Outcome {
                status: "failed",
                exit_code: None,
                stdout: String::new(),
                error: Some(format!("cannot start {}: {e}", exe.display())),
                wall: 0.0,
            })
        }
    };
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut p) = pipe {
                let mut bytes = Vec::new();
                let _ = p.read_to_end(&mut bytes);
                text = String::from_utf8_lossy(&bytes).into_owned();
            }
            text
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(_) => break None,
        }
        if stop.load(Ordering::Relaxed) {
            stop_group(&mut child);
            let _ = child.wait();
            return None;
        }
        if timeout.is_some_and(|t| started.elapsed() > t) {
            timed_out = true;
            stop_group(&mut child);
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Whatever the run left running goes with it.
    stop_group(&mut child);
    let wall = started.elapsed().as_secs_f64();
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
    let exit_code = status.and_then(|s| s.code());
    let (status, error) = if timed_out {
        ("timeout", Some(format!("stopped after {:.1} s", wall)))
    } else if exit_code != Some(0) {
        (
            "failed",
            error_line(&stderr).or_else(|| Some(format!("exit status {exit_code:?}"))),
        )
    } else if summary_of(&stdout).is_none() {
        ("failed", Some("no JSON summary on standard output".into()))
    } else {
        ("ok", None)
    };
    Some(Outcome {
        status,
        exit_code,
        stdout,
        error,
        wall,
    })
}

/// The result row of `run`.
fn row(run: &Run, outcome: &Outcome, metrics: &[String]) -> Map<String, Value> {
    let mut r = Map::new();
    r.insert("run".into(), json!(run.index));
    r.insert("scenario".into(), json!(run.scenario));
    r.insert("seed".into(), json!(run.seed));
    for (k, v) in &run.params {
        r.insert(k.clone(), v.clone());
    }
    let summary = summary_of(&outcome.stdout);
    // Metrics the run's summary does not have: the run failed (a named metric is a field of
    // every run's summary; an empty column marked `ok` would hide a misspelt name).
    let mut missing: Vec<&str> = Vec::new();
    if let Some(s) = &summary {
        if metrics.is_empty() {
            for (k, v) in s {
                if matches!(v, Value::Number(_) | Value::String(_) | Value::Bool(_))
                    && !r.contains_key(k)
                    && !COLUMNS.contains(&k.as_str())
                {
                    r.insert(k.clone(), v.clone());
                }
            }
        } else {
            let whole = Value::Object(s.clone());
            for m in metrics {
                match lookup(&whole, m) {
                    Some(v) => {
                        r.insert(m.clone(), v.clone());
                    }
                    None => {
                        r.insert(m.clone(), Value::Null);
                        missing.push(m.as_str());
                    }
                }
            }
        }
    } else {
        for m in metrics {
            r.insert(m.clone(), Value::Null);
        }
    }
    r.insert(
        "wall_s".into(),
        json!((outcome.wall * 1000.0).round() / 1000.0),
    );
    let (status, error) = match (outcome.status, &summary) {
        ("ok", Some(s)) if !missing.is_empty() => {
            let mut fields: Vec<&str> = s.keys().map(String::as_str).collect();
            fields.sort_unstable();
            let shown = fields
                .iter()
                .take(30)
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            let named: Vec<String> = missing.iter().map(|m| format!("{m:?}")).collect();
            (
                "failed",
                Some(format!(
                    "metric {} not in the run's JSON summary (its fields: {shown}{})",
                    named.join(", "),
                    if fields.len() > 30 { " …" } else { "" }
                )),
            )
        }
        (status, _) => (status, outcome.error.clone()),
    };
    r.insert("status".into(), json!(status));
    r.insert("exit_code".into(), json!(outcome.exit_code));
    r.insert("error".into(), json!(error));
    r
}

/// Whether a recorded row is the result of `run` of this sweep.
fn matches(row: &Map<String, Value>, run: &Run) -> bool {
    row.get("scenario") == Some(&json!(run.scenario))
        && row.get("seed") == Some(&json!(run.seed))
        && run.params.iter().all(|(k, v)| row.get(k) == Some(v))
}

/// Why a result row is not one of `sweep`'s, if it is not.
fn not_of(row: &Map<String, Value>, i: usize, sweep: &Sweep) -> Option<String> {
    match sweep.runs.get(i) {
        None => Some(format!(
            "run {i} is not in it: it has {} runs",
            sweep.runs.len()
        )),
        Some(run) if !matches(row, run) => Some(format!("run {i} differs")),
        Some(_) => None,
    }
}

/// The result files of DIR: results.jsonl, then parts/*.jsonl in name order.
fn result_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let parts = dir.join("parts");
    let mut files: Vec<PathBuf> = match std::fs::read_dir(&parts) {
        Ok(entries) => entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", parts.display())),
    };
    files.sort();
    Ok(files)
}

/// Refuses a directory holding results of another sweep: a row of DIR/results.jsonl or of
/// DIR/parts/*.jsonl whose run is not `sweep`'s, or differs from it, or results made by a
/// sweep (DIR/sweep.json) whose `command` or `metrics` differ from `sweep`'s (its rows would
/// be kept as this sweep's). The same sweep with runs added after the recorded ones (another
/// scenario at the end of `scenarios`, say) is the same sweep: its recorded runs are skipped.
fn check_same_sweep(dir: &Path, sweep: &Sweep, limits: &SweepLimits) -> Result<()> {
    let mut files = vec![dir.join("results.jsonl")];
    files.extend(result_files(dir)?);
    let mut any = false;
    for f in &files {
        let mut rows = BTreeMap::new();
        read_rows(f, &mut rows)?;
        any |= !rows.is_empty();
        for (i, r) in &rows {
            if let Some(why) = not_of(r, *i, sweep) {
                bail!(
                    "{} holds results of another sweep ({why}): give another --out",
                    f.display()
                );
            }
        }
    }
    if !any {
        return Ok(());
    }
    let layout = Layout::read(dir, limits);
    let recorded = dir.join("sweep.json");
    let another = |what: &str, was: String, now: String| {
        anyhow::anyhow!(
            "{} holds results of another sweep (its {what} was {was}, now {now}): give another \
             --out, or remove the directory to run the sweep again",
            dir.display()
        )
    };
    if let Some(src) = &layout.source {
        let old = Sweep::parse(&src.text, &src.file, &src.out, limits).with_context(|| {
            format!(
                "{}: the sweep it records does not parse; give another --out",
                recorded.display()
            )
        })?;
        if old.command != sweep.command {
            return Err(another(
                "`command`",
                format!("{:?}", old.command),
                format!("{:?}", sweep.command),
            ));
        }
    }
    if !layout.name.is_empty() && layout.metrics != sweep.metrics {
        return Err(another(
            "`metrics`",
            format!("{:?}", layout.metrics),
            format!("{:?}", sweep.metrics),
        ));
    }
    Ok(())
}

/// Whether two rows of the same run say different things (the wall time aside).
fn conflict(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let strip = |m: &Map<String, Value>| {
        let mut m = m.clone();
        m.remove("wall_s");
        m
    };
    strip(a) != strip(b)
}

/// Merges the rows of a result file into `rows` for `collect`, checking each: every whole
/// line must be a result row (a run number) of `sweep` (when DIR/sweep.json names it); a
/// failure is replaced by a later row of the run, a success is kept, and two successes of the
/// same run that differ are a conflict. A last line without its line break (a task killed
/// while writing it) is left out, with a warning. Errors name the file and the line.
fn merge_rows(
    path: &Path,
    rows: &mut BTreeMap<usize, (Map<String, Value>, String)>,
    sweep: Option<&Sweep>,
    max_bytes: u64,
) -> Result<()> {
    if !path.exists() {
        return Ok(()); // no results.jsonl yet
    }
    let text = crate::shell::read_text_within(path, "the results", max_bytes, RAISE_RESULTS)
        .map_err(|e| anyhow::anyhow!("{e:#}: nothing written"))?;
    let count = text.split_inclusive('\n').count();
    for (k, line) in text.split_inclusive('\n').enumerate() {
        let at = format!("{}:{}", path.display(), k + 1);
        if line.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str::<Value>(line);
        let row = match parsed {
            Ok(Value::Object(o)) if o.get("run").and_then(Value::as_u64).is_some() => o,
            _ if k + 1 == count && !line.ends_with('\n') => {
                eprintln!(
                    "warning: {at}: a line cut short (a task stopped while writing it), left out"
                );
                continue;
            }
            _ => bail!("{at}: not a result row (a JSON object with a run number): nothing written"),
        };
        let run = row.get("run").and_then(Value::as_u64).unwrap_or_default();
        let run = usize::try_from(run).unwrap_or(usize::MAX);
        if let Some(why) = sweep.and_then(|s| not_of(&row, run, s)) {
            bail!("{at}: a row of another sweep ({why}): nothing written");
        }
        let ok = |r: &Map<String, Value>| r.get("status") == Some(&json!("ok"));
        match rows.get(&run) {
            Some((old, there)) if ok(old) && ok(&row) && conflict(old, &row) => bail!(
                "{at}: run {run} has another result at {there}: the two disagree, nothing \
                 written (remove the wrong one)"
            ),
            // A success is never replaced by a failure.
            Some((old, _)) if ok(old) => {}
            _ => {
                rows.insert(run, (row, at));
            }
        }
    }
    Ok(())
}

/// Rows of a JSON-lines file, by run number (a cut last line is ignored).
fn read_rows(path: &Path, rows: &mut BTreeMap<usize, Map<String, Value>>) -> Result<()> {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    for line in std::io::BufReader::new(file).lines() {
        let line = line.with_context(|| format!("cannot read {}", path.display()))?;
        let Ok(Value::Object(o)) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(run) = o.get("run").and_then(Value::as_u64) else {
            continue;
        };
        let run = run as usize;
        // A success is never replaced by a failure.
        let keep_old = rows
            .get(&run)
            .is_some_and(|old| old.get("status") == Some(&json!("ok")))
            && o.get("status") != Some(&json!("ok"));
        if !keep_old {
            rows.insert(run, o);
        }
    }
    Ok(())
}

fn csv_field(v: Option<&Value>) -> String {
    let text = v.map(plain).unwrap_or_default();
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text
    }
}

/// Writes `path` through a temporary file of this process and a rename, so array tasks that
/// write the same file at once never trip over each other's temporary file.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    simrob_mrs::write_atomically(path, bytes).map_err(anyhow::Error::msg)
}

/// The column order of a sweep's results, kept in DIR/sweep.json for `collect`, with the
/// sweep file itself (so `collect` knows which rows belong to the sweep).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Layout {
    name: String,
    runs: usize,
    params: Vec<String>,
    metrics: Vec<String>,
    /// The sweep file's path, its text and the output directory it was run into (absent
    /// from the sweep.json of earlier versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    source: Option<Source>,
}

/// A sweep file as it was when the sweep was run or prepared.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Source {
    file: PathBuf,
    text: String,
    out: PathBuf,
}

impl Layout {
    fn of(sweep: &Sweep, source: Source) -> Layout {
        Layout {
            name: sweep.name.clone(),
            runs: sweep.runs.len(),
            params: sweep.params.clone(),
            metrics: sweep.metrics.clone(),
            source: Some(source),
        }
    }

    fn read(dir: &Path, limits: &SweepLimits) -> Layout {
        crate::shell::read_text(&dir.join("sweep.json"), limits.layout_file())
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }
}

/// Writes DIR/results.jsonl and DIR/results.csv from `rows`, sorted by run. Columns: run,
/// scenario and seed (when the sweep has them), the parameters, the metrics (the listed ones,
/// or every field seen), wall_s, status, exit_code, error.
fn write_results(
    dir: &Path,
    rows: &BTreeMap<usize, Map<String, Value>>,
    layout: &Layout,
) -> Result<()> {
    let mut jsonl = String::new();
    let mut columns: Vec<String> = vec!["run".into()];
    for c in ["scenario", "seed"] {
        if rows
            .values()
            .any(|r| r.get(c).is_some_and(|v| !v.is_null()))
        {
            columns.push(c.into());
        }
    }
    columns.extend(layout.params.iter().cloned());
    columns.extend(layout.metrics.iter().cloned());
    let mut extra: Vec<String> = Vec::new();
    for r in rows.values() {
        jsonl.push_str(&Value::Object(r.clone()).to_string());
        jsonl.push('\n');
        for k in r.keys() {
            if !columns.contains(k) && !extra.contains(k) && !COLUMNS.contains(&k.as_str()) {
                extra.push(k.clone());
            }
        }
    }
    extra.sort();
    columns.extend(extra);
    columns.extend(COLUMNS[3..].iter().map(|s| s.to_string()));
    let mut csv = columns.join(",");
    csv.push('\n');
    for r in rows.values() {
        let fields: Vec<String> = columns.iter().map(|c| csv_field(r.get(c))).collect();
        csv.push_str(&fields.join(","));
        csv.push('\n');
    }
    write_atomic(&dir.join("results.jsonl"), jsonl.as_bytes())?;
    write_atomic(&dir.join("results.csv"), csv.as_bytes())
}

/// Quotes for a POSIX shell.
fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `s` as one word of a POSIX shell: as it is when it needs no quotes, else quoted.
fn sh_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./:=,+@%".contains(c));
    if plain {
        s.to_string()
    } else {
        sh(s)
    }
}

fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p).with_context(|| format!("cannot resolve {}", p.display()))
}

pub fn run(args: BatchArgs) -> Result<()> {
    match args.command {
        Some(BatchCommand::Collect {
            dir,
            limits,
            max_results_bytes,
        }) => collect(
            &dir,
            &limits,
            max_results_bytes.unwrap_or(DEFAULT_MAX_RESULTS_FILE),
        ),
        None => run_sweep(args.run),
    }
}

fn collect(dir: &Path, limits: &SweepLimits, max_results: u64) -> Result<()> {
    let layout = Layout::read(dir, limits);
    // The sweep the directory was made for, to check every row against.
    let sweep = match &layout.source {
        Some(src) => Some(
            Sweep::parse(&src.text, &src.file, &src.out, limits).with_context(|| {
                format!(
                    "{}: the sweep it records does not parse",
                    dir.join("sweep.json").display()
                )
            })?,
        ),
        None => None,
    };
    let parts = dir.join("parts");
    if !parts.exists() && !dir.join("sweep.json").is_file() {
        bail!(
            "no array-task results in {}: not a sweep's directory",
            parts.display()
        );
    }
    let files = result_files(dir)?;
    let mut merged = BTreeMap::new();
    merge_rows(
        &dir.join("results.jsonl"),
        &mut merged,
        sweep.as_ref(),
        max_results,
    )?;
    for f in &files {
        merge_rows(f, &mut merged, sweep.as_ref(), max_results)?;
    }
    let rows: BTreeMap<usize, Map<String, Value>> =
        merged.into_iter().map(|(k, (r, _))| (k, r)).collect();
    let layout = Layout::read(dir, limits);
    write_results(dir, &rows, &layout)?;
    let ok = rows
        .values()
        .filter(|r| r.get("status") == Some(&json!("ok")))
        .count();
    let expected = (layout.runs > 0).then_some(layout.runs);
    println!(
        "{} rows from {} files: {ok} ok, {} failed",
        rows.len(),
        files.len(),
        rows.len() - ok
    );
    if let Some(n) = expected {
        let missing: Vec<String> = (0..n)
            .filter(|i| !rows.contains_key(i))
            .map(|i| i.to_string())
            .collect();
        if !missing.is_empty() {
            println!(
                "{} of {n} runs have no result yet: {}",
                missing.len(),
                missing
                    .iter()
                    .take(20)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
    }
    println!("results: {}", dir.join("results.csv").display());
    Ok(())
}

fn run_sweep(args: RunArgs) -> Result<()> {
    let Some(sweep_path) = &args.sweep else {
        bail!("give a sweep file: simrob batch SWEEP.toml (see simrob batch --help)");
    };
    // The output directory may only be known after the name; read the file twice is fine.
    let (probe, _) = Sweep::load(sweep_path, Path::new("DIR"), &args.limits)?;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("results").join(&probe.name));
    drop(probe);
    let (sweep, text) = Sweep::load(sweep_path, &dir, &args.limits)?;
    // A SIMROB_THREADS every run would fail on is refused before anything is written.
    let env_threads = crate::flags::threads_from_env()?;
    if args.dry_run {
        for r in &sweep.runs {
            let words: Vec<String> = r.args.iter().map(|a| sh_word(a)).collect();
            println!("{:>5}  simrob {}", r.index, words.join(" "));
        }
        println!("{} runs", sweep.runs.len());
        return Ok(());
    }
    if dir.exists() && !dir.is_dir() {
        bail!(
            "--out {}: not a directory (the sweep writes its results into a directory): give \
             a directory, new or the sweep's",
            dir.display()
        );
    }
    // The sweep file where a result goes would be overwritten by it.
    for name in ["sweep.json", "results.csv", "results.jsonl", "sweep.sbatch"] {
        if simrob_files::same_file(sweep_path, &dir.join(name)) {
            bail!(
                "the sweep file {} is {name}, which the sweep writes in {}: move it out, or \
                 give another --out",
                sweep_path.display(),
                dir.display()
            );
        }
    }
    // Results of another sweep in DIR (its results or its array tasks' parts) are refused
    // before anything is written, here or with --slurm.
    check_same_sweep(&dir, &sweep, &args.limits)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let layout = Layout::of(
        &sweep,
        Source {
            file: absolute(sweep_path)?,
            text,
            out: dir.clone(),
        },
    );
    write_atomic(
        &dir.join("sweep.json"),
        serde_json::to_string_pretty(&layout)?.as_bytes(),
    )?;
    if args.slurm {
        return write_slurm(&args, sweep_path, &dir, &sweep);
    }
    let (runs, results): (Vec<&Run>, PathBuf) = match args.chunk {
        Some(k) => {
            let from = k.saturating_mul(args.chunk_size);
            if from >= sweep.runs.len() {
                bail!("--chunk {k}: the sweep has {} runs", sweep.runs.len());
            }
            let to = (from + args.chunk_size).min(sweep.runs.len());
            let parts = dir.join("parts");
            std::fs::create_dir_all(&parts)
                .with_context(|| format!("cannot create {}", parts.display()))?;
            (
                sweep.runs[from..to].iter().collect(),
                parts.join(format!("chunk-{k}.jsonl")),
            )
        }
        None => (sweep.runs.iter().collect(), dir.join("results.jsonl")),
    };
    let mut rows = BTreeMap::new();
    read_rows(&results, &mut rows)?;
    let in_scope = runs.len();
    let in_scope_runs: Vec<usize> = runs.iter().map(|r| r.index).collect();
    let pending: Vec<&Run> = runs
        .into_iter()
        .filter(|r| match rows.get(&r.index) {
            None => true,
            Some(row) => args.retry_failed && row.get("status") != Some(&json!("ok")),
        })
        .collect();
    let skipped = in_scope - pending.len();
    let exe = std::env::current_exe().context("cannot find the simrob binary")?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = args.jobs.unwrap_or(cores).max(1);
    // Each run's share of the cores, unless the sweep's own environment already says.
    let share = env_threads
        .is_none()
        .then(|| (cores / jobs).clamp(1, crate::flags::THREADS_ENV_MAX));
    if !args.quiet && args.chunk.is_none() {
        eprintln!(
            "{}: {} runs, {} to do ({skipped} already done), {jobs} at a time{}; results in {}",
            sweep.name,
            sweep.runs.len(),
            pending.len(),
            match share {
                Some(1) => ", 1 thread each".to_string(),
                Some(n) => format!(", {n} threads each"),
                None => String::new(),
            },
            dir.display()
        );
    }
    let stop = crate::shell::ctrl_c_flag()?;
    // A second stop signal (`timeout` and Slurm signal the process, then its group) waits
    // until the runs are stopped and the results written, instead of ending the process with
    // its runs left running and no results.csv.
    let _finishing = crate::shell::FinishBeforeExit::hold();
    let bar = if args.quiet {
        ProgressBar::hidden()
    } else {
        let b =
            ProgressBar::with_draw_target(Some(pending.len() as u64), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "[{bar:40}] {pos}/{len} runs, {msg} {elapsed} elapsed, eta {eta}",
        ) {
            b.set_style(style.progress_chars("=> "));
        }
        b
    };
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&results)
        .with_context(|| format!("cannot write {}", results.display()))?;
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<Map<String, Value>>();
    let mut failed = 0usize;
    let mut ran = 0usize;
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..jobs.min(pending.len()) {
            let tx = tx.clone();
            let (next, pending, stop, exe, sweep) = (&next, &pending, &stop, &exe, &sweep);
            scope.spawn(move || loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let Some(run) = pending.get(next.fetch_add(1, Ordering::SeqCst)) else {
                    return;
                };
                let Some(outcome) = execute(exe, &run.args, share, sweep.timeout, stop) else {
                    return;
                };
                if tx.send(row(run, &outcome, &sweep.metrics)).is_err() {
                    return;
                }
            });
        }
        drop(tx);
        for r in rx {
            ran += 1;
            if r.get("status") != Some(&json!("ok")) {
                failed += 1;
            }
            let mut line = Value::Object(r.clone()).to_string();
            line.push('\n');
            log.write_all(line.as_bytes())
                .and_then(|()| log.flush())
                .with_context(|| format!("cannot write {}", results.display()))?;
            if let Some(i) = r.get("run").and_then(Value::as_u64) {
                rows.insert(i as usize, r);
            }
            bar.set_message(if failed > 0 {
                format!("{failed} failed,")
            } else {
                String::new()
            });
            bar.inc(1);
        }
        Ok(())
    })?;
    bar.finish_and_clear();
    if args.chunk.is_none() {
        write_results(&dir, &rows, &layout)?;
    }
    let interrupted = stop.load(Ordering::Relaxed);
    println!(
        "{}",
        summary_line(
            &sweep.name,
            args.chunk,
            &in_scope_runs,
            &rows,
            (ran, failed),
            interrupted
        )
    );
    // The runs of this sweep (or chunk) whose recorded result is a failure, this time or
    // before.
    let failing = in_scope_runs
        .iter()
        .filter(|&&i| {
            rows.get(&i)
                .is_some_and(|r| r.get("status") != Some(&json!("ok")))
        })
        .count();
    if args.chunk.is_none() {
        println!("results: {}", dir.join("results.csv").display());
    }
    if failing > 0 && !interrupted {
        bail!(
            "{failing} of {in_scope} runs failed (their rows say why): --retry-failed runs them \
             again"
        );
    }
    Ok(())
}

/// The line a sweep (or a chunk of it) ends with: its runs by their recorded result (ok,
/// failed, not run yet, this time or before), then what this invocation ran, e.g.
/// `drone-crashes: 25 runs: 0 succeeded, 25 failed; this time 25 ran, 25 of them failed`.
/// `this_time` is (runs run, of which failed).
fn summary_line(
    name: &str,
    chunk: Option<usize>,
    in_scope: &[usize],
    rows: &BTreeMap<usize, Map<String, Value>>,
    this_time: (usize, usize),
    interrupted: bool,
) -> String {
    let (ran, failed) = this_time;
    let recorded: Vec<bool> = in_scope
        .iter()
        .filter_map(|i| rows.get(i))
        .map(|r| r.get("status") == Some(&json!("ok")))
        .collect();
    let ok = recorded.iter().filter(|&&ok| ok).count();
    let failing = recorded.len() - ok;
    let not_run = in_scope.len() - recorded.len();
    let mut s = match chunk {
        Some(k) => format!("{name} chunk {k}: "),
        None => format!("{name}: "),
    };
    s += &format!(
        "{} run{}: {ok} succeeded, {failing} failed",
        in_scope.len(),
        if in_scope.len() == 1 { "" } else { "s" }
    );
    if failing > 0 {
        s += " (--retry-failed runs them again)";
    }
    if not_run > 0 {
        s += &format!(", {not_run} not run yet");
    }
    s += &match (ran, failed) {
        (0, _) => "; none ran this time".to_string(),
        (ran, 0) => format!("; this time {ran} ran, none failed"),
        (ran, failed) => format!("; this time {ran} ran, {failed} of them failed"),
    };
    if interrupted {
        s += " (interrupted: run the same command again to resume)";
    }
    s
}

fn write_slurm(args: &RunArgs, sweep_path: &Path, dir: &Path, sweep: &Sweep) -> Result<()> {
    let chunks = sweep.runs.len().div_ceil(args.chunk_size);
    if chunks == 0 {
        bail!("the sweep has no runs");
    }
    let exe = match &args.binary {
        Some(p) => absolute(p)?,
        None => std::env::current_exe().context("cannot find the simrob binary")?,
    };
    let dir_abs = absolute(dir)?;
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    // The script names these paths on lines of their own: a line break or other control
    // character in one would start a line of its own, a command of the script.
    for (what, p) in [
        ("the output directory", &dir_abs),
        ("the current directory", &cwd),
        ("the simrob binary", &exe),
    ] {
        if p.to_string_lossy().chars().any(char::is_control) {
            bail!(
                "{what} {:?} has a control character (a line break?): the Slurm script cannot \
                 name it",
                p.display()
            );
        }
    }
    let logs = dir_abs.join("slurm");
    std::fs::create_dir_all(&logs).with_context(|| format!("cannot create {}", logs.display()))?;
    if chunks > SLURM_MAX_ARRAY_SIZE {
        eprintln!(
            "warning: {chunks} array tasks (indices 0 to {}): a cluster with Slurm's default \
             MaxArraySize ({SLURM_MAX_ARRAY_SIZE}) refuses the array; --chunk-size {} makes \
             {SLURM_MAX_ARRAY_SIZE} tasks or fewer",
            chunks - 1,
            sweep.runs.len().div_ceil(SLURM_MAX_ARRAY_SIZE)
        );
    }
    // The limits given, on every line that reads the sweep again: each array task and the
    // `collect` that merges them.
    let limits: String = args
        .limits
        .given()
        .iter()
        .map(|w| format!(" {w}"))
        .collect();
    let mut array = format!("0-{}", chunks - 1);
    if let Some(n) = args.max_parallel {
        array.push_str(&format!("%{n}"));
    }
    let mut s = String::from("#!/bin/bash\n");
    s.push_str(&format!(
        "# {}: {} runs in {chunks} array tasks of up to {} runs.\n",
        sweep.name,
        sweep.runs.len(),
        args.chunk_size
    ));
    s.push_str(&format!(
        "# Submit: sbatch {}\n",
        dir_abs.join("sweep.sbatch").display()
    ));
    s.push_str(&format!(
        "# Then:   simrob batch collect {}{limits}\n",
        dir_abs.display()
    ));
    s.push_str(&format!(
        "#SBATCH --job-name=simrob-{}\n",
        sweep.name.replace(char::is_whitespace, "-")
    ));
    s.push_str(&format!("#SBATCH --array={array}\n"));
    s.push_str(&format!("#SBATCH --output={}/%A_%a.out\n", logs.display()));
    s.push_str(&format!("#SBATCH --chdir={}\n", cwd.display()));
    s.push_str("#SBATCH --ntasks=1\n");
    s.push_str(&format!(
        "#SBATCH --cpus-per-task={}\n",
        args.cpus_per_task.max(1)
    ));
    for (key, value) in [
        ("partition", &args.partition),
        ("time", &args.time),
        ("mem", &args.mem),
    ] {
        if let Some(v) = value {
            if v.contains(char::is_whitespace) || v.is_empty() {
                bail!("--{key} {v:?}: no spaces allowed");
            }
            s.push_str(&format!("#SBATCH --{key}={v}\n"));
        }
    }
    s.push_str("set -euo pipefail\n");
    // Which node ran which task, in the task's log: where a run failed on a cluster.
    s.push_str(
        "echo \"simrob batch: array task $SLURM_ARRAY_TASK_ID of job $SLURM_ARRAY_JOB_ID on ${SLURMD_NODENAME:-$(hostname)}\" >&2\n",
    );
    s.push_str(&format!(
        "exec {} batch {} --out {} --chunk \"$SLURM_ARRAY_TASK_ID\" --chunk-size {} --jobs \"${{SLURM_CPUS_PER_TASK:-1}}\" --quiet{}{limits}\n",
        sh(&exe.display().to_string()),
        sh(&absolute(sweep_path)?.display().to_string()),
        sh(&dir_abs.display().to_string()),
        args.chunk_size,
        if args.retry_failed { " --retry-failed" } else { "" }
    ));
    let script = dir_abs.join("sweep.sbatch");
    write_atomic(&script, s.as_bytes())?;
    println!(
        "{}: {} runs in {chunks} array tasks; submit with:\n  sbatch {}\nthen merge with:\n  simrob batch collect {}{limits}",
        sweep.name,
        sweep.runs.len(),
        script.display(),
        dir_abs.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` parsed as the sweep file `file` writing to `out`, within the default limits.
    fn parsed(text: &str, file: &str, out: &str) -> Result<Sweep> {
        Sweep::parse(
            text,
            Path::new(file),
            Path::new(out),
            &SweepLimits::default(),
        )
    }

    #[test]
    fn the_summary_line_counts_runs_by_result_then_what_ran_this_time() {
        let row = |ok: bool| {
            let mut r = Map::new();
            r.insert("status".into(), json!(if ok { "ok" } else { "failed" }));
            r
        };
        // Every run failing read "25 of 25 runs done, 25 failed this time": done and failed
        // at once.
        let all: Vec<usize> = (0..25).collect();
        let rows = all.iter().map(|&i| (i, row(false))).collect();
        assert_eq!(
            summary_line("drone-crashes", None, &all, &rows, (25, 25), false),
            "drone-crashes: 25 runs: 0 succeeded, 25 failed (--retry-failed runs them again); \
             this time 25 ran, 25 of them failed"
        );
        let rows = all.iter().map(|&i| (i, row(true))).collect();
        assert_eq!(
            summary_line("drone-crashes", None, &all, &rows, (25, 0), false),
            "drone-crashes: 25 runs: 25 succeeded, 0 failed; this time 25 ran, none failed"
        );
        // Interrupted: runs not run yet; a chunk counts its own runs.
        let rows = (0..3).map(|i| (i, row(i != 1))).collect();
        assert_eq!(
            summary_line("s", Some(0), &[0, 1, 2, 3], &rows, (3, 1), true),
            "s chunk 0: 4 runs: 2 succeeded, 1 failed (--retry-failed runs them again), 1 not \
             run yet; this time 3 ran, 1 of them failed (interrupted: run the same command \
             again to resume)"
        );
        let one = BTreeMap::new();
        assert_eq!(
            summary_line("s", None, &[0], &one, (0, 0), true),
            "s: 1 run: 0 succeeded, 0 failed, 1 not run yet; none ran this time (interrupted: \
             run the same command again to resume)"
        );
    }

    const SWEEP: &str = r#"
name = "demo"
command = ["swarm", "run", "{scenario}", "--seed", "{seed}", "--robots", "{robots}", "--out={out}/{run}.jsonl"]
scenarios = ["a.toml", "b.toml"]
seeds = { from = 1, count = 3 }
metrics = ["tasks_done", "stats.events"]
timeout = 60
[parameters]
robots = [10, 20]
"#;

    #[test]
    fn slurm_times_and_memory_sizes_are_slurms_forms() {
        for t in [
            "30",
            "30:00",
            "00:30:00",
            "2-0",
            "2-12:30",
            "2-12:30:00",
            "UNLIMITED",
        ] {
            assert_eq!(slurm_time(t).as_deref(), Ok(t), "{t}");
        }
        for t in ["banana", "", "1:2:3:4", "a-1", "1-", "1h", "-5", "1:-2"] {
            assert!(slurm_time(t).is_err(), "{t}");
        }
        for m in ["2G", "500", "500m", "1T", "0"] {
            assert_eq!(slurm_mem(m).as_deref(), Ok(m), "{m}");
        }
        for m in ["lots", "", "G", "2GB", "1.5G", "-1G"] {
            assert!(slurm_mem(m).is_err(), "{m}");
        }
    }

    #[test]
    fn a_failed_runs_error_is_its_error_line_not_the_help_after_it() {
        let clap = "error: invalid value 'true' for '--avoidance <MODEL>'\n  [possible values: orca, hmr]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            error_line(clap).as_deref(),
            Some("error: invalid value 'true' for '--avoidance <MODEL>'")
        );
        assert_eq!(
            error_line("loading\nError: no such file\n").as_deref(),
            Some("Error: no such file")
        );
        assert_eq!(
            error_line("a\npanicked here\n\n").as_deref(),
            Some("panicked here")
        );
        assert_eq!(error_line(" \n"), None);
    }

    #[test]
    fn a_sweep_expands_to_scenarios_times_grid_times_seeds() {
        let s = parsed(SWEEP, "x.toml", "res").unwrap();
        assert_eq!(s.name, "demo");
        assert_eq!(s.runs.len(), 2 * 2 * 3);
        assert_eq!(
            s.runs[0].args,
            [
                "swarm",
                "run",
                "a.toml",
                "--seed",
                "1",
                "--robots",
                "10",
                "--out=res/0.jsonl"
            ]
        );
        assert_eq!(s.runs[4].args[6], "20");
        assert_eq!(s.runs[4].seed, Some(2));
        assert_eq!(s.runs[11].scenario.as_deref(), Some("b.toml"));
        assert_eq!(s.timeout, Some(Duration::from_secs(60)));
        assert_eq!(s.params, ["robots"]);
    }

    #[test]
    fn bad_sweeps_are_refused_with_the_reason() {
        let cases = [
            (SWEEP.replace("{robots}", "{speed}"), "no value for {speed}"),
            (SWEEP.replace("count = 3", "count = 0"), "seeds.count"),
            (
                SWEEP.replace("seeds = { from = 1, count = 3 }", "seeds = [1, 2, 1]"),
                "`seeds` lists 1 twice",
            ),
            (
                SWEEP.replace("seeds = { from = 1, count = 3 }", "seeds = \"1..3\""),
                "`seeds` is a list of whole numbers 0 or more (`seeds = [1, 2, 3]`) or a range (`seeds = { from = 1, count = 8 }`): found \"1..3\"",
            ),
            (
                SWEEP.replace("seeds = { from = 1, count = 3 }", "seeds = [1, -2]"),
                "found -2 in the list",
            ),
            (
                SWEEP.replace("count = 3", "count = 3, step = 2"),
                "unknown key \"step\"",
            ),
            // A parameter `command` never uses: runs that differ only in a column.
            (
                SWEEP.replace("robots = [10, 20]", "robots = [10, 20]\nspeed = [1, 2]"),
                "parameter \"speed\" is never used in `command`: write {speed}",
            ),
            (
                SWEEP.replace("robots = [10, 20]", "robots = []"),
                "no values",
            ),
            // Seeds or scenarios `command` never uses: every one the same simulation.
            (
                SWEEP.replace("\"--seed\", \"{seed}\", ", ""),
                "`seeds` is given but `command` never uses {seed}",
            ),
            (
                SWEEP.replace("\"{scenario}\"", "\"a.toml\""),
                "`scenarios` is given but `command` never uses {scenario}",
            ),
            // A value or scenario listed twice would run the same runs twice.
            (
                SWEEP.replace("robots = [10, 20]", "robots = [10, 20, 10]"),
                "parameter \"robots\" lists 10 twice",
            ),
            (
                SWEEP.replace("\"b.toml\"]", "\"a.toml\"]"),
                "`scenarios` lists \"a.toml\" twice",
            ),
            (SWEEP.replace("robots = [10, 20]", "seed = [1]"), "built-in"),
            (SWEEP.replace("timeout = 60", "timeout = -1"), "timeout"),
            (
                SWEEP.replace("timeout = 60", "timout = 60"),
                "unknown field",
            ),
            (
                SWEEP.replace("\"tasks_done\"", "\"robots\""),
                "name of a parameter",
            ),
            // 32⁵ combinations (33,554,432, times 3 seeds and 2 scenarios): refused before they
            // are made, at the fifth parameter's first 32.
            (
                SWEEP.replace("robots = [10, 20]", &{
                    let values = (0..32)
                        .map(|v| v.to_string())
                        .collect::<Vec<_>>()
                        .join(", ");
                    ["a", "b", "c", "d", "e"]
                        .map(|p| format!("{p} = [{values}]\n"))
                        .concat()
                }),
                "a sweep has at most 1000000 runs",
            ),
            (
                SWEEP.replace("count = 3", "count = 18446744073709551615"),
                "value was too large",
            ),
            (
                SWEEP.replace("count = 3", "count = 9223372036854775807"),
                "seeds.count",
            ),
            // A sweep that runs itself would start runs without end.
            (
                SWEEP.replace("[\"swarm\", \"run\",", "[\"batch\", \"x.toml\","),
                "a sweep cannot run sweeps",
            ),
            // The name is the output directory's: it cannot lead elsewhere, nor put a line of
            // its own into the Slurm script.
            (SWEEP.replace("\"demo\"", "\"../../elsewhere\""), "name"),
            (SWEEP.replace("\"demo\"", "\"/tmp/elsewhere\""), "name"),
            (SWEEP.replace("\"demo\"", "\"x\\nrm -rf ~\""), "name"),
            (SWEEP.replace("\"demo\"", "\"\""), "name"),
            // NaN and infinity would be empty arguments.
            (
                SWEEP.replace("robots = [10, 20]", "robots = [10, nan]"),
                "not a finite number",
            ),
            (
                SWEEP.replace("robots = [10, 20]", "robots = [-inf]"),
                "not a finite number",
            ),
            // A long argument times many runs: refused before it takes the memory (about
            // 300 MB here), as are long values times many combinations.
            (
                SWEEP
                    .replace("\"{scenario}\"", &format!("\"{}\"", "x".repeat(300_000)))
                    .replace("count = 3", "count = 500"),
                "at most 268435456 bytes",
            ),
            (
                SWEEP.replace(
                    "robots = [10, 20]",
                    &format!(
                        "robots = [\"{}\"]\nspeed = [{}]",
                        "x".repeat(300_000),
                        (0..1000)
                            .map(|v| v.to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
                "at most 268435456 bytes",
            ),
        ];
        for (text, expected) in cases {
            let e = match parsed(&text, "x.toml", "r") {
                Ok(_) => panic!("accepted: {text}"),
                Err(e) => format!("{e:#}"),
            };
            assert!(e.contains(expected), "{expected:?} not in {e}");
        }
    }

    #[test]
    fn a_sweep_without_a_name_is_named_by_its_file_if_that_name_is_plain() {
        let text = SWEEP.replace("name = \"demo\"\n", "");
        let s = parsed(&text, "dir/my-sweep.toml", "r").unwrap();
        assert_eq!(s.name, "my-sweep");
        let e = match parsed(&text, "dir/a\nb.toml", "r") {
            Ok(_) => panic!("accepted a line break in the name"),
            Err(e) => format!("{e:#}"),
        };
        assert!(e.contains("give `name`"), "{e}");
    }

    #[test]
    fn a_sweep_file_that_is_not_a_regular_file_is_refused() {
        let e = match Sweep::load(
            Path::new("/dev/zero"),
            Path::new("r"),
            &SweepLimits::default(),
        ) {
            Ok(_) => panic!("accepted /dev/zero"),
            Err(e) => format!("{e:#}"),
        };
        assert!(e.contains("not a regular file"), "{e}");
    }

    #[test]
    fn rows_keep_parameters_metrics_and_status() {
        let s = parsed(SWEEP, "x.toml", "res").unwrap();
        let outcome = Outcome {
            status: "ok",
            exit_code: Some(0),
            stdout: "progress\n{\"tasks_done\":4,\"stats\":{\"events\":9},\"wall\":1}\n".into(),
            error: None,
            wall: 1.23456,
        };
        let r = row(&s.runs[3], &outcome, &s.metrics);
        let v = Value::Object(r.clone());
        assert_eq!(v["robots"], 20);
        assert_eq!(v["seed"], 1);
        assert_eq!(v["tasks_done"], 4);
        assert_eq!(v["stats.events"], 9);
        assert_eq!(v["wall_s"], 1.235);
        assert!(v.get("wall").is_none(), "only the listed metrics");
        assert!(matches(&r, &s.runs[3]));
        assert!(!matches(&r, &s.runs[4]));
        // A pretty-printed summary, and arrays indexed in paths.
        let pretty = Outcome {
            stdout: "{\n  \"policies\": [\n    {\"makespan\": {\"mean\": 2.5}}\n  ]\n}\n".into(),
            ..outcome
        };
        let v = Value::Object(row(
            &s.runs[0],
            &pretty,
            &["policies.0.makespan.mean".into()],
        ));
        assert_eq!(v["policies.0.makespan.mean"], 2.5);
        // A listed metric the summary does not have: the run failed, and says which.
        let v = Value::Object(row(
            &s.runs[0],
            &pretty,
            &[
                "policies.0.makespan.mean".into(),
                "policies.0.makespn".into(),
            ],
        ));
        assert_eq!(v["status"], "failed");
        assert_eq!(v["exit_code"], 0);
        assert_eq!(
            v["error"],
            "metric \"policies.0.makespn\" not in the run's JSON summary (its fields: policies)"
        );
        let outcome = Outcome {
            stdout: "progress\n{\"tasks_done\":4,\"stats\":{\"events\":9},\"wall\":1}\n".into(),
            ..pretty
        };
        // Every scalar when no metric is listed.
        let all = row(&s.runs[0], &outcome, &[]);
        assert_eq!(all["wall"], 1);
        assert!(all.get("stats").is_none());
    }

    #[test]
    fn the_runs_bytes_are_counted_exactly_before_they_are_made() {
        for text in [
            SWEEP,
            "command = [\"swarm\", \"run\", \"{seed}\", \"r{run}x{run}\"]\nseeds = { from = 95, count = 1010 }\n",
            "command = [\"a{p}{q}\", \"{out}/{run}\"]\n[parameters]\np = [\"xy\", 3, true]\nq = [1.5, \"\"]\n",
        ] {
            let limits = SweepLimits::default();
            let s = Sweep::parse(text, Path::new("x.toml"), Path::new("some/dir"), &limits).unwrap();
            let made: usize = s
                .runs
                .iter()
                .map(|r| {
                    r.args.iter().map(|a| a.len() + 1).sum::<usize>()
                        + r.params.iter().map(|(k, v)| weight(k, v) + 1).sum::<usize>()
                        + r.scenario.as_ref().map_or(0, |s| s.len() + 1)
                })
                .sum();
            let file: SweepFile = toml::from_str(text).unwrap();
            let scenarios: Vec<Option<String>> = if file.scenarios.is_empty() {
                vec![None]
            } else {
                file.scenarios.iter().cloned().map(Some).collect()
            };
            let seeds: Vec<Option<u64>> = match &file.seeds {
                None => vec![None],
                Some(v) => seeds_of(v, limits.runs()).unwrap().into_iter().map(Some).collect(),
            };
            let params: Vec<(String, Vec<Value>)> = file
                .parameters
                .iter()
                .map(|(k, vs)| (k.clone(), vs.iter().map(|v| toml_to_json(v).unwrap()).collect()))
                .collect();
            let counted = RunBytes {
                command: &file.command,
                total: s.runs.len(),
                out_len: "some/dir".len(),
                scenarios: &scenarios,
                seeds: &seeds,
                params: &params,
            }
            .count(|_| Ok(()))
            .unwrap();
            assert_eq!(counted, made, "{text}");
        }
        assert_eq!(digits_below(1), 1);
        assert_eq!(digits_below(10), 10);
        assert_eq!(digits_below(101), 10 + 180 + 3);
    }

    #[test]
    fn a_sweep_too_large_is_refused_before_its_runs_are_made() {
        // 1,000,000 runs of 13 arguments: past 256 MiB together. Refused on the count, not
        // after 972,031 runs were made.
        let text = r#"
command = ["swarm", "run", "scenarios/swarm/hospital.toml", "--seed", "{seed}", "--duration", "{a}", "--robots", "{b}", "--threads", "{c}", "--json", "--quiet"]
seeds = { from = 1, count = 1000 }
[parameters]
a = [1,2,3,4,5,6,7,8,9,10]
b = [1,2,3,4,5,6,7,8,9,10]
c = [1,2,3,4,5,6,7,8,9,10]
"#;
        let e = parsed(text, "x.toml", "res")
            .err()
            .expect("refused")
            .to_string();
        assert!(e.starts_with("1000000 runs take "), "{e}");
    }

    #[test]
    fn results_merge_sort_and_quote() {
        let dir = std::env::temp_dir().join(format!("simrob-batch-unit-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("parts")).unwrap();
        std::fs::write(
            dir.join("parts/chunk-1.jsonl"),
            "{\"run\":1,\"scenario\":\"a\",\"seed\":2,\"x\":1,\"wall_s\":0.5,\"status\":\"failed\",\"exit_code\":1,\"error\":\"bad, \\\"very\\\"\"}\n{\"run\":1,\"scenario\":\"a\",\"seed\":2,\"x\":3,\"wall_s\":0.5,\"status\":\"ok\",\"exit_code\":0,\"error\":null}\n{\"run\":1,\"status\":\"fail",
        )
        .unwrap();
        std::fs::write(
            dir.join("parts/chunk-0.jsonl"),
            "{\"run\":0,\"scenario\":\"a\",\"seed\":1,\"x\":2,\"wall_s\":0.5,\"status\":\"failed\",\"exit_code\":1,\"error\":\"bad, \\\"very\\\"\"}\n",
        )
        .unwrap();
        collect(&dir, &SweepLimits::default(), DEFAULT_MAX_RESULTS_FILE).unwrap();
        let csv = std::fs::read_to_string(dir.join("results.csv")).unwrap();
        assert_eq!(
            csv,
            "run,scenario,seed,x,wall_s,status,exit_code,error\n\
             0,a,1,2,0.5,failed,1,\"bad, \"\"very\"\"\"\n\
             1,a,2,3,0.5,ok,0,\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("results.jsonl"))
                .unwrap()
                .lines()
                .count(),
            2
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
