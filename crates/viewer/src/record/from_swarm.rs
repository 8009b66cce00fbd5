//! Swarm recordings shown in the 3D viewer: each snapshot (read by the format's one reader,
//! [`simrob_record::swarm::Reader`]) as a [`Frame`] of boxes.

use std::fs::File;

use simrob_record::swarm;

use crate::{Frame, FrameBody, FrameEntity};

/// Width of a swarm robot drawn in a replay, map units.
pub const SWARM_ROBOT_SIZE: f64 = 20.0;
/// Map units per metre when a swarm recording is read (divided by, so that 660 units are
/// 6.6 m, not 6.6000000000000005): a map unit is a centimetre.
const UNITS_PER_METRE: f64 = simrob_swarm::MAP_UNITS_PER_METRE;
/// Height of swarm boxes, map units.
const SWARM_HEIGHT: f64 = 5.0;

/// A swarm recording (read by its format's one reader) and its static world, as viewer
/// bodies.
#[derive(Debug)]
pub(super) struct SwarmSource {
    pub(super) reader: swarm::Reader<File>,
    pub(super) walls: Vec<FrameBody>,
    pub(super) fps: f64,
}

/// A swarm body as the 3D viewer draws it: a box of `size` map units (at least 1) on the
/// floor, at (x, y) and heading `theta` (radians) on the map, in metres with the map's y
/// axis turned to the viewer's (both the recorder of a swarm run and the reader of a swarm
/// recording use it).
pub fn swarm_box(e: u32, id: u32, x: f64, y: f64, theta: f64, size: [f64; 2]) -> FrameBody {
    let m = |units: f64| units / UNITS_PER_METRE;
    FrameBody {
        e,
        id,
        shape: "Box".into(),
        dims: [m(size[0].max(1.0)), m(size[1].max(1.0)), m(SWARM_HEIGHT)],
        material: 0,
        mass: 1.0,
        p: [m(x), m(-y), m(SWARM_HEIGHT * 0.5)],
        r: [0.0, 0.0, -theta],
        v: [0.0; 3],
        w: [0.0; 3],
    }
}

/// A swarm map's walls (`[x, y, half width, half height]`, map units) as static boxes of
/// entity 0.
pub fn swarm_walls(walls: &[[f64; 4]]) -> Vec<FrameBody> {
    walls
        .iter()
        .enumerate()
        .map(|(k, w)| {
            let mut b = swarm_box(0, k as u32, w[0], w[1], 0.0, [2.0 * w[2], 2.0 * w[3]]);
            b.mass = -1.0;
            b
        })
        .collect()
}

/// The viewer's name of a swarm world's kind `kind` (an index into the recording's `kinds`):
/// `item` → `Item`, `drone` → `Drone`; a kind without a name is a `Robot`.
pub fn viewer_kind(kinds: &[String], kind: impl TryInto<usize>) -> String {
    let name = kind
        .try_into()
        .ok()
        .and_then(|k| kinds.get(k))
        .map_or("", String::as_str);
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Robot".into(),
    }
}

/// One (checked) snapshot of a swarm recording as a frame.
pub(super) fn swarm_frame(snap: swarm::Snapshot, world: &SwarmSource) -> Frame {
    let mut bodies = world.walls.clone();
    let mut entities = Vec::with_capacity(snap.entities.len() + 1);
    if !world.walls.is_empty() {
        entities.push(FrameEntity {
            id: 0,
            kind: "Field".into(),
            p: None,
            r: None,
        });
    }
    let kinds = &world.reader.header().kinds;
    for e in snap.entities {
        let b = swarm_box(e.id, 0, e.x, e.y, e.theta, [SWARM_ROBOT_SIZE; 2]);
        entities.push(FrameEntity {
            id: e.id,
            kind: viewer_kind(kinds, e.kind),
            p: Some(b.p),
            r: Some(b.r),
        });
        bodies.push(b);
    }
    Frame {
        iteration: snap.frame,
        time: snap.t,
        initialized: true,
        timestep: 1.0 / world.fps.max(1e-9),
        steps_per_iteration: 1,
        bodies,
        entities,
        ..Frame::default()
    }
}
