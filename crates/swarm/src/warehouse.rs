//! The warehouse: thousands of robots moving totes between shelves and packing stations.
//!
//! The floor is a grid of shelf blocks between one-way aisles (vertical aisles alternate
//! up and down, cross aisles alternate left and right, like a Manhattan street grid, the
//! outermost lanes making a loop so every point can be reached), so robots on a lane all go
//! the same way. Each vertical aisle segment has a shelf POI at
//! its middle (`s{column}_{row}`); packing stations (`dock{column}_{row}`) are the crossings
//! of every fourth aisle. Every robot works in a zone around where it starts: it carries
//! its own tote (`tote{n}`, starting on a shelf of the zone) and loops: go to the shelf,
//! grab the tote, go to a station near it, drop it (a task done),
//! grab it again, bring it back, drop it (another task), and again.
//!
//! Robots keep their distance to the robot ahead in their lane (the navigator's
//! `keep_clear`), so they queue rather than collide in a lane, and take crossings and
//! corners in turn ([`crate::nav::crossing`]: a zone of 7 units around each, entered by one
//! movement at a time, only with a free place in the lane beyond up to the next crossing;
//! a robot kept waiting 5 s by a full lane takes another way out), so they do not collide
//! there either and nobody stands inside a crossing blocking it. The summary's
//! `collisions` counts every contact; in the bundled warehouse there are none. A
//! `Collision` handler (wait 0.5–1.5 s, retry) is in their scripts for runs that turn
//! stopping on collision on (a scenario's `world.stop_on_collision = true`; left out, they
//! do not stop).
//!
//! They start four to an aisle segment, 25 units apart, each with a proximity sensor, a
//! claw and a battery.

use crate::ecs::{
    Battery, Claw, EntityId, Item, NameTaken, Navigator, Proximity, SwarmPose, SwarmWorld, Velocity,
};
use crate::geom::Shape;
use crate::nav::NavMap;
use crate::script::{Script, ScriptError};
use simrob_math::Xoshiro256PlusPlus;

/// Parameters of a generated warehouse.
#[derive(Clone, Debug, PartialEq)]
pub struct WarehouseParams {
    /// Number of robots.
    pub robots: usize,
    /// Proximity beams on each robot (0: none).
    pub proximity_beams: u16,
    /// Seed of the warehouse's random draws (the run's seed).
    pub seed: u64,
}

const AISLE_DX: f64 = 40.0;
const AISLE_DY: f64 = 100.0;
const MARGIN: f64 = 20.0;
const PER_SEGMENT: usize = 4;
const SPEED: f64 = 20.0;
const RADIUS: f64 = 3.0;
/// The zone around a crossing robots take in turn: a robot waiting at its edge is clear
/// (by one unit) of one passing through.
const CROSSING: f64 = 2.0 * RADIUS + 1.0;

/// Vertical aisles and cross aisles: both even, so that the alternating one-way lanes have
/// a perimeter that is a directed cycle and every point can reach every other.
fn grid(robots: usize) -> (usize, usize) {
    let segments = robots.div_ceil(PER_SEGMENT).max(1);
    // About 2.5 columns per row of segments, for a roughly square floor.
    let rows = ((segments as f64 / 2.5).sqrt().ceil() as usize).max(1);
    let mut cols = segments.div_ceil(rows).max(2);
    cols += cols % 2;
    let mut cross = segments.div_ceil(cols) + 1;
    cross = cross.max(2);
    cross += cross % 2;
    (cols, cross)
}

/// Floor size for `robots` robots.
pub fn size(robots: usize) -> (f64, f64) {
    let (cols, rows) = grid(robots);
    (
        2.0 * MARGIN + AISLE_DX * (cols - 1) as f64,
        2.0 * MARGIN + AISLE_DY * (rows - 1) as f64,
    )
}

/// Why the warehouse could not be built in a world: a name it gives (`s0_0`, `dock0_0`,
/// `bot0`, `tote0`…) is taken already, or a robot's script was refused.
#[derive(Debug, thiserror::Error)]
pub enum WarehouseError {
    /// A name the warehouse gives is taken already.
    #[error(transparent)]
    Name(#[from] NameTaken),
    /// A robot's script was refused.
    #[error(transparent)]
    Script(#[from] ScriptError),
}

/// Builds the floor, the lanes and the robots in `world`.
pub fn populate(
    world: &mut SwarmWorld,
    p: &WarehouseParams,
) -> Result<Vec<EntityId>, WarehouseError> {
    let (cols, rows) = grid(p.robots);
    let x = |i: usize| MARGIN + AISLE_DX * i as f64;
    let y = |j: usize| MARGIN + AISLE_DY * j as f64;
    let nav = world.res.get_mut::<NavMap>();
    nav.extend = false;
    nav.merge_radius = 1.0;
    nav.max_off_path = AISLE_DY;
    nav.crossing_radius = CROSSING;
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
        if j % 2 == 0 {
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
                SwarmPose {
                    x: px,
                    y: py,
                    theta: 0.0,
                },
            );
            world.poi.insert(e, ());
            world.set_name(e, &name)?;
            world.res.get_mut::<NavMap>().add_poi(&name, px, py);
            shelves.push((name, px, py));
        }
    }
    // Packing stations at the crossings of every fourth aisle.
    let mut docks = Vec::new();
    for i in (0..cols).step_by(4) {
        for j in 0..rows {
            let name = format!("dock{i}_{j}");
            let e = world.spawn("poi");
            world.pose.insert(
                e,
                SwarmPose {
                    x: x(i),
                    y: y(j),
                    theta: 0.0,
                },
            );
            world.poi.insert(e, ());
            world.set_name(e, &name)?;
            world.res.get_mut::<NavMap>().add_poi(&name, x(i), y(j));
            docks.push((name, i, j));
        }
    }
    // Shelf blocks between the aisles.
    for i in 0..cols - 1 {
        for j in 0..rows - 1 {
            let e = world.spawn("shelf");
            world.pose.insert(
                e,
                SwarmPose {
                    x: x(i) + AISLE_DX * 0.5,
                    y: y(j) + AISLE_DY * 0.5,
                    theta: 0.0,
                },
            );
            world.set_collider(
                e,
                Shape::Box {
                    hw: AISLE_DX * 0.5 - 8.0,
                    hh: AISLE_DY * 0.5 - 8.0,
                },
            );
        }
    }
    let mut rng = Xoshiro256PlusPlus::new(p.seed ^ 0x5741_5245_484F_5553);
    let mut ids = Vec::with_capacity(p.robots);
    for n in 0..p.robots {
        let seg = n / PER_SEGMENT;
        let k = n % PER_SEGMENT;
        let (i, j) = (seg % cols, seg / cols);
        let e = world.spawn("robot");
        let down = i % 2 == 0;
        world.pose.insert(
            e,
            SwarmPose {
                x: x(i),
                y: y(j) + 12.5 + 25.0 * k as f64,
                theta: if down {
                    std::f64::consts::FRAC_PI_2
                } else {
                    -std::f64::consts::FRAC_PI_2
                },
            },
        );
        world.vel.insert(e, Velocity::default());
        world.set_collider(e, Shape::Circle { r: RADIUS });
        world.navigator.insert(
            e,
            Navigator {
                speed: SPEED,
                keep_clear: 3.0,
            },
        );
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
        // A shelf in the robot's zone (a few aisles around where it starts) and a station
        // near that shelf.
        let pick = |rng: &mut Xoshiro256PlusPlus, centre: usize, spread: usize, n: usize| {
            let lo = centre.saturating_sub(spread);
            let hi = (centre + spread).min(n - 1);
            lo + rng.below((hi - lo + 1) as u64) as usize
        };
        let si = pick(&mut rng, i, 3, cols);
        let sj = pick(&mut rng, j, 2, rows - 1);
        let (shelf, sx, sy) = shelves[si * (rows - 1) + sj].clone();
        let near: Vec<&(String, usize, usize)> = docks
            .iter()
            .filter(|(_, di, dj)| di.abs_diff(si) <= 4 && dj.abs_diff(sj) <= 1)
            .collect();
        let dock = match near.is_empty() {
            false => &near[rng.below(near.len() as u64) as usize].0,
            true => &docks[rng.below(docks.len() as u64) as usize].0,
        };
        let tote = world.spawn("item");
        world.pose.insert(
            tote,
            SwarmPose {
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
        ])
        .and_then(|s| s.with_handler("Collision", &["Wait 0.5 1.5", "Retry"]))
        .and_then(|s| s.with_handler("DropFailed", &["Skip"]))?;
        world.custom_mut::<Script>().insert(e, script);
        ids.push(e);
    }
    Ok(ids)
}
