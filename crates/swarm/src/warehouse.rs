//! The warehouse: thousands of robots moving totes between shelves and packing stations.
//!
//! The floor is a grid of shelf blocks between one-way aisles (vertical aisles alternate
//! up and down, cross aisles alternate left and right, like a Manhattan street grid), so
//! robots on a lane all go the same way. Each vertical aisle segment has a shelf POI at
//! its middle (`s{column}_{row}`); packing stations (`dock{column}`) are the top
//! crossings. Every robot carries its own tote (`tote{n}`, starting on a random shelf) and
//! loops: go to the shelf, grab the tote, go to a random station, drop it (a task done),
//! grab it again, bring it back, drop it (another task), and again. A robot that collides
//! stops; its script's `Collision` handler waits a random 0.5–1.5 s and retries the
//! instruction (routes are re-planned from where it stands).
//!
//! Robots start eight to an aisle segment, 10 units apart, each with a proximity sensor,
//! a claw and a battery.

use crate::ecs::{Battery, Claw, EntityId, Item, Navigator, Pose, Proximity, Velocity, World};
use crate::geom::Shape;
use crate::rng::Rng;
use crate::script::Script;

/// Parameters of a generated warehouse.
#[derive(Clone, Debug, PartialEq)]
pub struct WarehouseParams {
    pub robots: usize,
    pub proximity_beams: u16,
    pub seed: u64,
}

const AISLE_DX: f64 = 40.0;
const AISLE_DY: f64 = 100.0;
const MARGIN: f64 = 20.0;
const PER_SEGMENT: usize = 8;
const SPEED: f64 = 20.0;
const RADIUS: f64 = 3.0;

fn grid(robots: usize) -> (usize, usize) {
    let segments = robots.div_ceil(PER_SEGMENT).max(1);
    // About as many columns as 2.5 × rows, for a roughly square floor.
    let mut rows = ((segments as f64 / 2.5).sqrt().ceil() as usize).max(1);
    let cols = segments.div_ceil(rows).max(2);
    rows = segments.div_ceil(cols).max(1);
    (cols, rows + 1)
}

/// Floor size for `robots` robots.
pub fn size(robots: usize) -> (f64, f64) {
    let (cols, rows) = grid(robots);
    (
        2.0 * MARGIN + AISLE_DX * (cols - 1) as f64,
        2.0 * MARGIN + AISLE_DY * (rows - 1) as f64,
    )
}

/// Builds the floor, the lanes and the robots in `world`.
pub fn populate(world: &mut World, p: &WarehouseParams) -> Result<Vec<EntityId>, String> {
    let (cols, rows) = grid(p.robots);
    let x = |i: usize| MARGIN + AISLE_DX * i as f64;
    let y = |j: usize| MARGIN + AISLE_DY * j as f64;
    let nav = &mut world.res.nav;
    nav.extend = false;
    nav.merge_radius = 1.0;
    nav.max_off_path = AISLE_DY;
    // Vertical aisles with shelf POIs at segment midpoints.
    for i in 0..cols {
        let down = i % 2 == 0;
        let mut pts = Vec::new();
        for j in 0..rows {
            pts.push((x(i), y(j)));
            if j + 1 < rows {
                pts.push((x(i), y(j) + AISLE_DY * 0.5));
            }
        }
        if !down {
            pts.reverse();
        }
        nav.add_oneway_polyline(&pts);
    }
    for j in 0..rows {
        let mut pts: Vec<(f64, f64)> = (0..cols).map(|i| (x(i), y(j))).collect();
        if j % 2 == 1 {
            pts.reverse();
        }
        nav.add_oneway_polyline(&pts);
    }
    let mut shelves = Vec::new();
    for i in 0..cols {
        for j in 0..rows - 1 {
            let name = format!("s{i}_{j}");
            let (px, py) = (x(i), y(j) + AISLE_DY * 0.5);
            let e = world.spawn("poi");
            world.pose.insert(
                e,
                Pose {
                    x: px,
                    y: py,
                    theta: 0.0,
                },
            );
            world.poi.insert(e, ());
            world.set_name(e, &name)?;
            world.res.nav.add_poi(&name, px, py);
            shelves.push((name, px, py));
        }
    }
    let mut docks = Vec::new();
    for i in 0..cols {
        let name = format!("dock{i}");
        let e = world.spawn("poi");
        world.pose.insert(
            e,
            Pose {
                x: x(i),
                y: y(0),
                theta: 0.0,
            },
        );
        world.poi.insert(e, ());
        world.set_name(e, &name)?;
        world.res.nav.add_poi(&name, x(i), y(0));
        docks.push(name);
    }
    // Shelf blocks between the aisles.
    for i in 0..cols - 1 {
        for j in 0..rows - 1 {
            let e = world.spawn("shelf");
            world.pose.insert(
                e,
                Pose {
                    x: x(i) + AISLE_DX * 0.5,
                    y: y(j) + AISLE_DY * 0.5,
                    theta: 0.0,
                },
            );
            world.set_collider(
                e,
                Shape::Box {
                    hw: AISLE_DX * 0.5 - 6.0,
                    hh: AISLE_DY * 0.5 - 6.0,
                },
            );
        }
    }
    let mut rng = Rng::new(p.seed ^ 0x5741_5245_484F_5553);
    let mut ids = Vec::with_capacity(p.robots);
    for n in 0..p.robots {
        let seg = n / PER_SEGMENT;
        let k = n % PER_SEGMENT;
        let (i, j) = (seg % cols, seg / cols);
        let e = world.spawn("robot");
        let down = i % 2 == 0;
        world.pose.insert(
            e,
            Pose {
                x: x(i),
                y: y(j) + 15.0 + 10.0 * k as f64,
                theta: if down {
                    std::f64::consts::FRAC_PI_2
                } else {
                    -std::f64::consts::FRAC_PI_2
                },
            },
        );
        world.vel.insert(e, Velocity::default());
        world.set_collider(e, Shape::Circle { r: RADIUS });
        world.navigator.insert(e, Navigator { speed: SPEED });
        world.stop_on_collision.insert(e, ());
        world.set_name(e, &format!("bot{n}"))?;
        if p.proximity_beams > 0 {
            world
                .proximity
                .insert(e, Proximity::new(p.proximity_beams, 20.0));
        }
        world.claw.insert(
            e,
            Claw {
                range: 5.0,
                capacity: 1,
                duration: 1.0,
                held: Vec::new(),
            },
        );
        world.battery.insert(
            e,
            Battery {
                capacity: 10_000.0,
                charge: 10_000.0,
                idle_drain: 0.5,
                move_drain: 0.05,
                empty: false,
            },
        );
        let (shelf, sx, sy) = shelves[rng.below(shelves.len() as u64) as usize].clone();
        let dock = &docks[rng.below(docks.len() as u64) as usize];
        let tote = world.spawn("item");
        world.pose.insert(
            tote,
            Pose {
                x: sx,
                y: sy,
                theta: 0.0,
            },
        );
        world.item.insert(tote, Item::default());
        let tote_name = format!("tote{n}");
        world.set_name(tote, &tote_name)?;
        let script = Script::new(&[
            format!("Go {shelf}"),
            format!("Grab {tote_name}"),
            format!("Go {dock}"),
            "Drop".to_string(),
            format!("Grab {tote_name}"),
            format!("Go {shelf}"),
            "Drop".to_string(),
            "Loop".to_string(),
        ])?
        .with_handler("Collision", &["Wait 0.5 1.5", "Retry"])?;
        world.script.insert(e, script);
        ids.push(e);
    }
    Ok(ids)
}
