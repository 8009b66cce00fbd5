//! The coordination core running as a system of swarm simulations.

use std::path::PathBuf;

use simrob_coord::compare::{run_one, run_with_tasks, RunSpec, TaskLimit};
use simrob_coord::model::{TaskKind, TaskSpec, TaskState};
use simrob_coord::swarm::{CoordSystem, SwarmCoordConfig};
use simrob_coord::wire::Policy;
use simrob_swarm::scenario::{Overrides, Scenario};

fn scenario(name: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/swarm")
        .join(name);
    Scenario::load(&path).expect("bundled scenario")
}

#[test]
fn every_policy_completes_the_hospital_deliveries_deterministically() {
    let hospital = scenario("hospital.toml");
    for policy in [Policy::Cnp, Policy::Hungarian, Policy::Greedy] {
        let spec = RunSpec {
            policy,
            seed: 3,
            robots: None,
            tasks: 9,
            max_time: 3600.0,
            batteries: false,
            task_limit: TaskLimit::default(),
            build_limits: Default::default(),
        };
        let a = run_one(&hospital, &spec).unwrap();
        assert_eq!(a.robots, 3);
        assert_eq!((a.tasks, a.ended, a.failed), (9, 9, 0), "{policy:?}: {a:?}");
        let makespan = a.makespan.expect("done");
        assert!(makespan > 10.0 && makespan < 3600.0, "{makespan}");
        assert!(a.travel > 100.0 && a.messages > 9 * 3);
        let b = run_one(&hospital, &spec).unwrap();
        assert_eq!(
            (b.makespan, b.travel, b.messages, b.idle),
            (a.makespan, a.travel, a.messages, a.idle),
            "same seed, same run"
        );
    }
}

/// A given task list: each task released at its time, its preconditions kept, under every
/// policy.
#[test]
fn a_given_task_list_is_released_on_time_and_its_preconditions_hold() {
    let hospital = scenario("hospital.toml");
    let mut later = TaskSpec::new(
        2,
        TaskKind::Path {
            points: vec![[210.0, 390.0], [700.0, 115.0]],
        },
    );
    later.after = vec![1];
    let tasks = vec![
        (0.0, TaskSpec::new(1, TaskKind::Goto { x: 110.0, y: 115.0 })),
        (40.0, later),
        (0.0, TaskSpec::new(3, TaskKind::Perceive { seconds: 2.0 })),
    ];
    for policy in [Policy::Cnp, Policy::Hungarian, Policy::Greedy] {
        let spec = RunSpec {
            policy,
            seed: 1,
            robots: None,
            tasks: 99,
            max_time: 3600.0,
            batteries: false,
            task_limit: TaskLimit::default(),
            build_limits: Default::default(),
        };
        let r = run_with_tasks(&hospital, &spec, &tasks).unwrap();
        assert_eq!((r.tasks, r.ended, r.failed), (3, 3, 0), "{policy:?}: {r:?}");
        // Task 2 is released at 40 s and then has a way to drive.
        assert!(r.makespan.expect("done") > 45.0, "{policy:?}: {r:?}");
    }
}

/// A task whose precondition failed is BLOCKED for good: the run ends once nothing
/// runnable is left instead of waiting for it until `max_time`, and counts it as blocked,
/// not pending, under every policy.
#[test]
fn a_blocked_task_does_not_hold_the_run_open_and_counts_as_blocked() {
    let hospital = scenario("hospital.toml");
    let mut doomed = TaskSpec::new(3, TaskKind::Perceive { seconds: 1.0 });
    doomed.after = vec![1];
    let mut later = TaskSpec::new(4, TaskKind::Goto { x: 300.0, y: 115.0 });
    later.after = vec![2];
    let tasks = vec![
        // Off the map: it fails at once, and task 3 after it is BLOCKED.
        (
            0.0,
            TaskSpec::new(
                1,
                TaskKind::Goto {
                    x: 5000.0,
                    y: 5000.0,
                },
            ),
        ),
        (
            0.0,
            TaskSpec::new(
                2,
                TaskKind::Path {
                    points: vec![[505.0, 115.0], [110.0, 115.0]],
                },
            ),
        ),
        (3.0, doomed),
        (7.0, later),
    ];
    for policy in [Policy::Cnp, Policy::Hungarian, Policy::Greedy] {
        let spec = RunSpec {
            policy,
            seed: 1,
            robots: None,
            tasks: 4,
            max_time: 900.0,
            batteries: false,
            task_limit: TaskLimit::default(),
            build_limits: Default::default(),
        };
        let r = run_with_tasks(&hospital, &spec, &tasks).unwrap();
        assert_eq!(
            (r.ended, r.failed, r.blocked, r.pending()),
            (2, 1, 1, 0),
            "{policy:?}: {r:?}"
        );
        let makespan = r
            .makespan
            .expect("the run ended with nothing runnable left");
        assert!(makespan < 300.0 && r.time < 300.0, "{policy:?}: {r:?}");
    }
}

/// A task the Control Center refuses at its release is not dropped silently: the run does
/// not wait for it until its end, and the comparison stops naming it.
#[test]
fn a_task_refused_at_release_stops_the_comparison_with_the_reason() {
    let hospital = scenario("hospital.toml");
    let tasks = vec![
        (0.0, TaskSpec::new(1, TaskKind::Goto { x: 110.0, y: 115.0 })),
        (0.0, TaskSpec::new(2, TaskKind::Goto { x: 1e7, y: 115.0 })),
    ];
    let spec = RunSpec {
        policy: Policy::Cnp,
        seed: 1,
        robots: None,
        tasks: 2,
        max_time: 3600.0,
        batteries: false,
        task_limit: TaskLimit::default(),
        build_limits: Default::default(),
    };
    let e = run_with_tasks(&hospital, &spec, &tasks).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the Control Center refused 1 task(s); task 2: invalid: x = 10000000 is beyond ±1000000 m (key max_coordinate)"
    );
}

#[test]
fn a_run_without_tasks_is_refused() {
    let spec = RunSpec {
        policy: Policy::Cnp,
        seed: 1,
        robots: Some(5),
        tasks: 0,
        max_time: 3600.0,
        batteries: false,
        task_limit: TaskLimit::default(),
        build_limits: Default::default(),
    };
    let e = run_one(&scenario("warehouse.toml"), &spec).unwrap_err();
    assert_eq!(e.to_string(), "no tasks to allocate (at least 1)");
}

#[test]
fn the_warehouse_is_served_by_contract_net() {
    let warehouse = scenario("warehouse.toml");
    let spec = RunSpec {
        policy: Policy::Cnp,
        seed: 1,
        robots: Some(16),
        tasks: 40,
        max_time: 3600.0,
        batteries: false,
        task_limit: TaskLimit::default(),
        build_limits: Default::default(),
    };
    let r = run_one(&warehouse, &spec).unwrap();
    assert_eq!(r.robots, 16);
    assert_eq!(r.ended, 40, "{r:?}");
    assert_eq!(
        r.cnp.allocated, 40,
        "every task won in an auction: {:?}",
        r.cnp
    );
}

#[test]
fn preconditions_hold_inside_the_swarm() {
    let text = r#"
        name = "corridor"
        fps = 10
        duration = 120
        [world]
        width = 200
        height = 100
        paths = [[[10, 50], [100, 50], [190, 50]]]
        [[entities]]
        type = "robot"
        name = "a"
        position = [10, 50]
        components = { Navigator = { speed = 20 } }
        [[entities]]
        type = "robot"
        name = "b"
        position = [190, 50]
        components = { Navigator = { speed = 20 } }
    "#;
    let sc = Scenario::from_toml_str(text, std::path::Path::new(".")).unwrap();
    let mut sim = sc.build(&Overrides::default()).unwrap();
    let config = SwarmCoordConfig {
        keep_logs: true,
        ..SwarmCoordConfig::default()
    };
    let mut first = TaskSpec::new(1, TaskKind::Goto { x: 100.0, y: 50.0 });
    first.world = Some("swarm".into());
    let mut second = TaskSpec::new(2, TaskKind::Perceive { seconds: 1.0 });
    second.after = vec![1];
    let system = CoordSystem::local(config).with_tasks(vec![(0.0, second), (0.5, first)]);
    let report = system.report();
    let logs = system.logs();
    sim.add_system(Box::new(system));
    sim.run();
    let r = simrob_coord::swarm::lock(&report);
    assert_eq!(r.ended, 2, "{r:?}");
    let logs = simrob_coord::swarm::lock(&logs);
    let line = |needle: &str| {
        logs.iter()
            .position(|l| l.text.contains(needle))
            .unwrap_or_else(|| panic!("no {needle:?} in {logs:#?}"))
    };
    let ended1 = line(&format!("task=1\tRUNNING→{}", TaskState::Ended));
    let ran2 = line("task=2\tQUEUED→RUNNING");
    assert!(ended1 < ran2, "task 2 ran only after task 1 ended");
    assert!(logs[ended1].time.synced && logs[ended1].time.time > 4.0);
}
