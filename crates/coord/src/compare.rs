//! Comparing allocation policies on a swarm scenario: the same tasks, robots and seed under
//! Contract Net, the Hungarian assignment and greedy nearest, with the figures a
//! researcher compares — makespan, travel, throughput, messages, idle time — and their
//! spread over seeds.
//!
//! The scenario's own scripts are removed: its robots only do what the Control Center
//! allocates. The task list is a pick-up → drop-off [`TaskKind::Path`] per task, between
//! points of interest of the scenario's map, drawn from the seed (or a list given with
//! [`run_with_tasks`]: any tasks, each with its release time and preconditions): from shelves (`s…`) to
//! packing stations (`dock…`) in the warehouse, from the storage room and the pharmacy to
//! the rooms in the hospital; any other map uses POIs whose names start with
//! `pick`/`storage`/`pharmacy`/`shelf` and `drop`/`dock`/`room`/`ward` (every POI when it
//! has none). Drawn tasks are all released at time 0; a run ends when nothing runnable is
//! left — every task final, or BLOCKED because a precondition failed — or at `max_time`. Batteries are set aside unless asked for (a robot running flat would end
//! the comparison for reasons other than allocation). Robots do not keep their distance to the robot ahead (a robot left idle in
//! a lane would otherwise block it for good); collisions are counted by the swarm as usual.

use serde::Serialize;
use simrob_math::Xoshiro256PlusPlus;
use simrob_swarm::scenario::{BuildLimits, Overrides, Scenario, ScenarioError};

use crate::model::{TaskKind, TaskSpec};
use crate::swarm::{CoordReport, CoordSystem, SwarmCoordConfig};
use crate::wire::Policy;
use simrob_swarm::nav::NavMap;
use simrob_swarm::script::Script;

/// Why a comparison run could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// A number of robots was given for a scenario whose map sets it (the scenario's name).
    #[error("{0}: the number of robots is set by its map")]
    RobotsSetByMap(String),
    /// The map has no point of interest to make tasks from.
    #[error("the map has no points of interest to make tasks from")]
    NoSites,
    /// The scenario could not be built.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// More tasks to draw than the run's [`TaskLimit`].
    #[error("{tasks} tasks is more than the limit of {max}{}", raise_with.map(|w| format!(": raise it with {w}")).unwrap_or_default())]
    TooManyTasks {
        /// The tasks asked for.
        tasks: usize,
        /// The limit.
        max: usize,
        /// How to raise it ([`TaskLimit::raise_with`]).
        raise_with: Option<&'static str>,
    },
    /// No tasks to allocate.
    #[error("no tasks to allocate (at least 1)")]
    NoTasks,
    /// The Control Center refused tasks of the run (the first refusal, and how many).
    #[error("the Control Center refused {count} task(s); {first}")]
    Refused {
        /// The first refusal, `task N: why`.
        first: String,
        /// How many tasks were refused.
        count: usize,
    },
}

/// The most tasks a comparison run draws (`--tasks`; four per robot by default): some 150
/// bytes each before the run, so about 1.5 GB at the limit. The default of
/// [`TaskLimit::max_tasks`].
pub const MAX_TASKS: usize = 10_000_000;

/// The most tasks a comparison run draws ([`RunSpec::task_limit`]) and how a user raises it,
/// for the message of a run over it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskLimit {
    /// The most tasks drawn.
    pub max_tasks: usize,
    /// How to raise it, in the caller's words (`--max-tasks N`): the end of the message
    /// "raise it with …"; `None`: the message says no more than the limit.
    pub raise_with: Option<&'static str>,
}

impl Default for TaskLimit {
    /// [`MAX_TASKS`], naming no way to raise it.
    fn default() -> Self {
        TaskLimit {
            max_tasks: MAX_TASKS,
            raise_with: None,
        }
    }
}

impl TaskLimit {
    /// `Err` when `tasks` is more than the limit.
    fn check(&self, tasks: usize) -> Result<(), CompareError> {
        if tasks > self.max_tasks {
            return Err(CompareError::TooManyTasks {
                tasks,
                max: self.max_tasks,
                raise_with: self.raise_with,
            });
        }
        Ok(())
    }
}

/// One run of a comparison.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// The allocation policy.
    pub policy: Policy,
    /// The run's seed: the scenario's, and the one tasks are drawn from.
    pub seed: u64,
    /// Robots (generated scenarios only).
    pub robots: Option<usize>,
    /// Tasks to allocate.
    pub tasks: usize,
    /// Simulated seconds after which an unfinished run stops.
    pub max_time: f64,
    /// Keep the robots' batteries (a robot running flat leaves; its tasks go to others).
    pub batteries: bool,
    /// The most tasks drawn ([`TaskLimit::default`]: [`MAX_TASKS`]).
    pub task_limit: TaskLimit,
    /// The most robots and grid cells of the run's world ([`BuildLimits::default`]).
    pub build_limits: BuildLimits,
}

/// Pick-up and drop-off points of a map.
#[derive(Clone, Debug, PartialEq)]
pub struct Sites {
    /// Pick-up points: POI name and position (x, y), metres.
    pub pickups: Vec<(String, (f64, f64))>,
    /// Drop-off points: POI name and position (x, y), metres.
    pub drops: Vec<(String, (f64, f64))>,
}

fn is_shelf(name: &str) -> bool {
    let mut parts = name.strip_prefix('s').unwrap_or("").split('_');
    matches!((parts.next(), parts.next(), parts.next()), (Some(a), Some(b), None)
        if !a.is_empty() && !b.is_empty() && a.bytes().all(|c| c.is_ascii_digit()) && b.bytes().all(|c| c.is_ascii_digit()))
}

/// The pick-up and drop-off POIs of a built world (see the module docs).
pub fn sites(world: &simrob_swarm::SwarmWorld) -> Sites {
    let nav = world.res.get::<NavMap>();
    let all: Vec<(String, (f64, f64))> = nav
        .pois()
        .keys()
        .filter_map(|n| nav.poi(n).map(|p| (n.clone(), p)))
        .collect();
    let pick = |n: &str| {
        is_shelf(n)
            || ["pick", "storage", "pharmacy", "shelf"]
                .iter()
                .any(|p| n.starts_with(p))
    };
    let drop = |n: &str| {
        ["drop", "dock", "room", "ward"]
            .iter()
            .any(|p| n.starts_with(p))
    };
    let mut pickups: Vec<_> = all.iter().filter(|(n, _)| pick(n)).cloned().collect();
    let mut drops: Vec<_> = all.iter().filter(|(n, _)| drop(n)).cloned().collect();
    if pickups.is_empty() || drops.is_empty() {
        pickups = all.clone();
        drops = all;
    }
    Sites { pickups, drops }
}

/// `count` pick-up → drop-off tasks drawn from `seed`, at most [`MAX_TASKS`].
pub fn task_list(
    sites: &Sites,
    count: usize,
    seed: u64,
) -> Result<Vec<(f64, TaskSpec)>, CompareError> {
    task_list_within(sites, count, seed, TaskLimit::default())
}

/// [`task_list`] with `limit` on the tasks drawn.
pub fn task_list_within(
    sites: &Sites,
    count: usize,
    seed: u64,
    limit: TaskLimit,
) -> Result<Vec<(f64, TaskSpec)>, CompareError> {
    if sites.pickups.is_empty() || sites.drops.is_empty() {
        return Err(CompareError::NoSites);
    }
    limit.check(count)?;
    let mut rng = Xoshiro256PlusPlus::new(seed ^ 0x434f_4f52_4454_534b);
    let mut out = Vec::with_capacity(count);
    for _ in 0..count {
        let (_, a) = &sites.pickups[rng.below(sites.pickups.len() as u64) as usize];
        let mut b = sites.drops[rng.below(sites.drops.len() as u64) as usize].1;
        if b == *a && sites.drops.len() > 1 {
            b = sites.drops[rng.below(sites.drops.len() as u64) as usize].1;
        }
        out.push((
            0.0,
            TaskSpec::new(
                0,
                TaskKind::Path {
                    points: vec![[a.0, a.1], [b.0, b.1]],
                },
            ),
        ));
    }
    Ok(out)
}

/// Runs `scenario` once under `spec` and returns what the coordination did.
pub fn run_one(scenario: &Scenario, spec: &RunSpec) -> Result<CoordReport, CompareError> {
    run(scenario, spec, None)
}

/// Runs `scenario` once under `spec` with the given tasks instead of drawn ones
/// (`spec.tasks` is not used): each released to the Control Center at its time in
/// simulated seconds, with its own id and preconditions.
pub fn run_with_tasks(
    scenario: &Scenario,
    spec: &RunSpec,
    tasks: &[(f64, TaskSpec)],
) -> Result<CoordReport, CompareError> {
    run(scenario, spec, Some(tasks))
}

fn run(
    scenario: &Scenario,
    spec: &RunSpec,
    given: Option<&[(f64, TaskSpec)]>,
) -> Result<CoordReport, CompareError> {
    let generated = scenario.robots_configurable();
    if spec.robots.is_some() && !generated {
        return Err(CompareError::RobotsSetByMap(scenario.name()));
    }
    if given.is_none() {
        spec.task_limit.check(spec.tasks)?;
    }
    if given.map_or(spec.tasks, <[_]>::len) == 0 {
        return Err(CompareError::NoTasks);
    }
    let ov = Overrides {
        duration: Some(spec.max_time),
        seed: Some(spec.seed),
        robots: spec.robots,
        full_duration: false,
        proximity_beams: generated.then_some(0),
        limits: spec.build_limits,
        ..Overrides::default()
    };
    let mut sim = scenario.build(&ov)?;
    let world = sim.world_mut();
    let scripts = world.custom_mut::<Script>();
    for e in scripts.ids() {
        scripts.remove(e);
    }
    // A robot with nothing to do stays where its last task left it, possibly in a lane:
    // robots do not queue behind one another here, or a parked robot would block its
    // lane for good.
    for e in world.navigator.ids() {
        if let Some(n) = world.navigator.get_mut(e) {
            n.keep_clear = 0.0;
        }
    }
    if !spec.batteries {
        for e in world.battery.ids() {
            world.battery.remove(e);
        }
    }
    let tasks = match given {
        Some(list) => list.to_vec(),
        None => task_list_within(&sites(sim.world()), spec.tasks, spec.seed, spec.task_limit)?,
    };
    let mut config = SwarmCoordConfig::default();
    config.cc.policy = spec.policy;
    // The run's own Control Center holds every task and robot of the run, all released at
    // once: its tables are as large as the run (bounded by `task_limit` and `build_limits`),
    // where a task past the default `max_tasks` was refused once the run had gone by.
    config.cc.max_tasks = config.cc.max_tasks.max(tasks.len());
    config.cc.max_robots = config.cc.max_robots.max(sim.world().robot_count());
    let system = CoordSystem::local(config).with_tasks(tasks);
    let report = system.report();
    sim.add_system(Box::new(system));
    sim.run();
    let r = crate::swarm::lock(&report).clone();
    if let Some(first) = r.refused.first() {
        return Err(CompareError::Refused {
            first: first.clone(),
            count: r.refused.len(),
        });
    }
    Ok(r)
}

/// Mean, standard deviation, minimum and maximum of a figure over seeds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    /// Mean over seeds.
    pub mean: f64,
    /// Sample standard deviation over seeds (0 for a single run).
    pub sd: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (sample standard deviation).
    pub fn of(values: &[f64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        let n = values.len() as f64;
        let mean = values.iter().sum::<f64>() / n;
        let var = if values.len() > 1 {
            values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Spread {
            mean,
            sd: var.sqrt(),
            min: values.iter().copied().fold(f64::INFINITY, f64::min),
            max: values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        }
    }
}

/// One policy's figures over every seed.
#[derive(Clone, Debug, Serialize)]
pub struct PolicyRow {
    /// The policy's name (`cnp`, `hungarian`, `greedy`).
    pub policy: &'static str,
    /// Runs made (one per seed).
    pub runs: usize,
    /// Runs in which every task was final or BLOCKED before `max_time`.
    pub completed: usize,
    /// Seconds until every task was final or BLOCKED (the run's end for a run that never
    /// got there).
    pub makespan_s: Spread,
    /// Metres driven by all robots (their map units converted, a map unit a centimetre).
    pub travel_m: Spread,
    /// Tasks ended per hour of simulated time.
    pub tasks_per_hour: Spread,
    /// GRI messages sent.
    pub messages: Spread,
    /// Robot-seconds with no task running.
    pub idle_s: Spread,
    /// Tasks ENDED.
    pub tasks_ended: Spread,
    /// Tasks FAILED or ABORTED.
    pub tasks_failed: Spread,
    /// Tasks ABORTED (counted in `tasks_failed` too).
    pub tasks_aborted: Spread,
    /// Tasks BLOCKED when the run ended: a precondition failed, so they could never run.
    pub tasks_blocked: Spread,
    /// Tasks that might still have run when the run stopped (`max_time`): neither final nor
    /// BLOCKED. ended + failed + blocked + pending = the run's tasks.
    pub tasks_pending: Spread,
}

impl PolicyRow {
    /// Sums up the runs of one policy.
    pub fn from_runs(policy: Policy, runs: &[CoordReport]) -> PolicyRow {
        let f =
            |g: &dyn Fn(&CoordReport) -> f64| Spread::of(&runs.iter().map(g).collect::<Vec<_>>());
        PolicyRow {
            policy: policy.name(),
            runs: runs.len(),
            completed: runs.iter().filter(|r| r.makespan.is_some()).count(),
            makespan_s: f(&|r| r.makespan.unwrap_or(r.time)),
            travel_m: f(&|r| r.travel / simrob_swarm::MAP_UNITS_PER_METRE),
            tasks_per_hour: f(&|r| r.tasks_per_hour()),
            messages: f(&|r| r.messages as f64),
            idle_s: f(&|r| r.idle),
            tasks_ended: f(&|r| r.ended as f64),
            tasks_failed: f(&|r| (r.failed + r.aborted) as f64),
            tasks_aborted: f(&|r| r.aborted as f64),
            tasks_blocked: f(&|r| r.blocked as f64),
            tasks_pending: f(&|r| r.pending() as f64),
        }
    }
}

/// The comparison table as Markdown: mean ± sample standard deviation over seeds (failed
/// counts aborted tasks too; blocked, those whose precondition failed; pending, those
/// neither final nor blocked when the run stopped).
pub fn table(rows: &[PolicyRow]) -> String {
    let mut s = String::from(
        "| policy | runs done | makespan (s) | travel (m) | tasks/h | messages | idle (robot·s) | failed | blocked | pending |\n|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let pm = |x: Spread, d: usize| format!("{:.d$} ± {:.d$}", x.mean, x.sd, d = d);
    for r in rows {
        s.push_str(&format!(
            "| {} | {}/{} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            r.policy,
            r.completed,
            r.runs,
            pm(r.makespan_s, 1),
            pm(r.travel_m, 1),
            pm(r.tasks_per_hour, 0),
            pm(r.messages, 0),
            pm(r.idle_s, 0),
            pm(r.tasks_failed, 1),
            pm(r.tasks_blocked, 1),
            pm(r.tasks_pending, 1),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shelves_are_recognised() {
        assert!(is_shelf("s12_3"));
        assert!(!is_shelf("storage") && !is_shelf("s1") && !is_shelf("s1_2_3") && !is_shelf("s_2"));
    }

    #[test]
    fn more_tasks_than_the_limit_are_refused_before_the_run_is_built() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/swarm/warehouse.toml");
        let scenario = Scenario::load(&path).expect("bundled scenario");
        for tasks in [MAX_TASKS + 1, usize::MAX] {
            let spec = RunSpec {
                policy: Policy::Cnp,
                seed: 1,
                robots: Some(2),
                tasks,
                max_time: 10.0,
                batteries: false,
                task_limit: TaskLimit::default(),
                build_limits: BuildLimits::default(),
            };
            match run_one(&scenario, &spec) {
                Err(CompareError::TooManyTasks { tasks: n, max, .. }) => {
                    assert_eq!((n, max), (tasks, MAX_TASKS))
                }
                other => panic!("{tasks} tasks: {other:?}"),
            }
        }
    }

    /// The limit on the tasks drawn was a constant: a user could neither lower nor raise it.
    #[test]
    fn a_task_limit_lowers_and_raises_the_tasks_drawn() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/swarm/warehouse.toml");
        let scenario = Scenario::load(&path).expect("bundled scenario");
        let spec = |tasks: usize, max_tasks: usize| RunSpec {
            policy: Policy::Greedy,
            seed: 1,
            robots: Some(2),
            tasks,
            max_time: 1.0,
            batteries: false,
            task_limit: TaskLimit {
                max_tasks,
                raise_with: Some("--max-tasks N"),
            },
            build_limits: BuildLimits::default(),
        };
        let e = run_one(&scenario, &spec(4, 3)).unwrap_err().to_string();
        assert_eq!(
            e,
            "4 tasks is more than the limit of 3: raise it with --max-tasks N"
        );
        assert!(run_one(&scenario, &spec(3, 3)).is_ok());
        // The default says no more than the limit (drawing past it would take 1.5 GB).
        let sites = Sites {
            pickups: vec![("a".into(), (0.0, 0.0))],
            drops: vec![("b".into(), (10.0, 0.0))],
        };
        let lowered = TaskLimit {
            max_tasks: 2,
            raise_with: None,
        };
        assert!(task_list_within(&sites, 3, 1, lowered).is_err());
        assert_eq!(
            task_list_within(&sites, 2, 1, lowered)
                .map(|t| t.len())
                .ok(),
            Some(2)
        );
        let e = task_list(&sites, MAX_TASKS + 1, 1).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{} tasks is more than the limit of {MAX_TASKS}",
                MAX_TASKS + 1
            )
        );
    }

    #[test]
    fn the_table_shows_what_is_pending() {
        let stopped = CoordReport {
            tasks: 14,
            ended: 9,
            failed: 1,
            aborted: 1,
            blocked: 2,
            time: 10.0,
            ..CoordReport::default()
        };
        let row = PolicyRow::from_runs(Policy::Cnp, &[stopped.clone(), stopped]);
        assert_eq!(row.tasks_pending.mean, 1.0);
        assert_eq!(row.tasks_blocked.mean, 2.0);
        assert_eq!(row.tasks_aborted.mean, 1.0);
        assert_eq!(row.tasks_failed.mean, 2.0);
        let t = table(&[row]);
        assert!(
            t.starts_with("| policy |") && t.contains("| failed | blocked | pending |"),
            "{t}"
        );
        assert!(
            t.ends_with("| 2.0 ± 0.0 | 2.0 ± 0.0 | 1.0 ± 0.0 |\n"),
            "{t}"
        );
    }

    #[test]
    fn spread_of_a_few_values() {
        let s = Spread::of(&[1.0, 2.0, 3.0]);
        assert_eq!((s.mean, s.sd, s.min, s.max), (2.0, 1.0, 1.0, 3.0));
        assert_eq!(Spread::of(&[]), Spread::default());
    }
}
