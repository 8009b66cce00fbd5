//! Crossings taken in turn: robots that keep their distance wait at the edge of a crossing
//! someone else is using, so they never overlap there, and the warehouse keeps working.

use std::path::Path;

use simrob_swarm::nav::crossing::Crossings;
use simrob_swarm::nav::NavMap;
use simrob_swarm::scenario::{Overrides, Scenario};
use simrob_swarm::sim::Summary;

/// Two robots, each on its own one-way lane, 60 units from the crossing of the lanes: they
/// reach it in the same frame.
fn two_lanes(crossing_radius: f64) -> Summary {
    let text = r#"
        fps = 10
        duration = 30
        end_when_done = true
        [world]
        width = 200
        height = 200
        pois = { east = [180, 100], south = [100, 180] }
        [[entities]]
        type = "robot"
        name = "across"
        position = [40, 100]
        radius = 3
        components = { Navigator = { speed = 20, keep_clear = 3 }, Script = ["Go east"] }
        [[entities]]
        type = "robot"
        name = "down"
        position = [100, 40]
        radius = 3
        components = { Navigator = { speed = 20, keep_clear = 3 }, Script = ["Go south"] }
    "#;
    let sc = Scenario::from_toml_str(text, Path::new(".")).expect("scenario");
    let mut sim = sc.build(&Overrides::default()).expect("build");
    let nav = sim.world_mut().res.get_mut::<NavMap>();
    nav.add_oneway_polyline(&[(20.0, 100.0), (100.0, 100.0), (180.0, 100.0)]);
    nav.add_oneway_polyline(&[(100.0, 20.0), (100.0, 100.0), (100.0, 180.0)]);
    nav.crossing_radius = crossing_radius;
    sim.run()
}

#[test]
fn two_robots_reaching_a_crossing_together_take_it_in_turn() {
    let s = two_lanes(7.0);
    assert_eq!(s.collisions, 0, "{s:?}");
    assert_eq!(s.scripts_done, 2, "both arrive: {s:?}");
    // One waited for the other: the run lasts longer than the 80 units at 20 a second.
    assert!(s.simulated_seconds > 4.2, "{s:?}");
    // Unmanaged, the same two robots run into each other at the crossing (and stop there).
    let unmanaged = two_lanes(0.0);
    assert!(unmanaged.collisions >= 1, "{unmanaged:?}");
}

fn warehouse(robots: usize, seconds: f64) -> Summary {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/swarm/warehouse.toml");
    let sc = Scenario::load(&path).expect("bundled warehouse");
    let mut sim = sc
        .build(&Overrides {
            robots: Some(robots),
            duration: Some(seconds),
            full_duration: true,
            ..Overrides::default()
        })
        .expect("build");
    sim.run()
}

#[test]
fn the_warehouse_robots_never_overlap_and_keep_delivering() {
    let s = warehouse(120, 120.0);
    assert_eq!(s.collisions, 0, "{s:?}");
    assert_eq!(s.errors, 0, "{s:?}");
    assert!(s.tasks_done >= 120, "{s:?}");
    // The same run again: the same turns, the same figures.
    let again = warehouse(120, 120.0);
    assert_eq!(
        (again.tasks_done, again.events, again.collisions),
        (s.tasks_done, s.events, s.collisions)
    );
}

/// Nobody blocks the box: a robot let into a crossing's zone on its way somewhere never
/// stands there (it is let in only with a free place in the lane beyond), and no robot
/// waits at one crossing's edge for long.
#[test]
fn no_robot_on_its_way_stands_in_a_crossing_and_nobody_waits_long() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/swarm/warehouse.toml");
    let sc = Scenario::load(&path).expect("bundled warehouse");
    let mut sim = sc
        .build(&Overrides {
            robots: Some(200),
            duration: Some(120.0),
            full_duration: true,
            ..Overrides::default()
        })
        .expect("build");
    let bots = sim.world().navigator.ids();
    let zone = sim.world().res.get::<NavMap>().crossing_radius;
    let crossings: Vec<(f64, f64)> = {
        let nav = sim.world().res.get::<NavMap>();
        (0..nav.nodes().len() as u32)
            .filter(|&n| nav.is_crossing(n))
            .map(|n| nav.nodes()[n as usize])
            .collect()
    };
    // Frames each robot has stood (under 1 unit/s) inside a zone it drove into on its way
    // (not one whose route starts there: a robot leaving a station at a crossing).
    let mut standing = vec![0u32; bots.len()];
    let mut entered = vec![false; bots.len()];
    let mut was_inside = vec![true; bots.len()];
    let mut worst = 0;
    while sim.step() {
        let w = sim.world();
        for (k, &e) in bots.iter().enumerate() {
            let (Some(p), Some(v)) = (w.pose.get(e), w.vel.get(e)) else {
                continue;
            };
            let inside = crossings
                .iter()
                .any(|&(x, y)| (p.x - x).hypot(p.y - y) < zone - 1.0);
            let on_way = w.path.has(e);
            entered[k] = inside && on_way && (entered[k] || !was_inside[k]);
            was_inside[k] = inside;
            if entered[k] && v.x.hypot(v.y) < 1.0 {
                standing[k] += 1;
                worst = worst.max(standing[k]);
            } else {
                standing[k] = 0;
            }
        }
    }
    let waits = sim.world().res.get::<Crossings>().waits();
    let s = sim.finish(0.0);
    assert_eq!(s.collisions, 0, "{s:?}");
    // A robot may pause a frame or two in a zone (the robot ahead slowing), never stand.
    assert!(worst <= 5, "a robot stood {worst} frames in a crossing");
    // At 10 frames a second: under 20 s at one edge (a full lane gets a detour at 5 s).
    assert!(waits.longest < 200, "{waits:?}");
    assert!(s.tasks_done >= 250, "{s:?}");
}
