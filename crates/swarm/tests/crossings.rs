//! Crossings taken in turn: robots that keep their distance wait at the edge of a crossing
//! someone else is using, so they never overlap there, and the warehouse keeps working.

use std::path::Path;

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
    let nav = &mut sim.world_mut().res.nav;
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
