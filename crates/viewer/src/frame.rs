//! What the viewer draws: one frame of the world ([`Frame`], also what recordings hold), and
//! the compact binary form pages receive ([`Frame::encode`]): the static scene once per
//! change, then 32-bit float poses that the page reads straight into typed arrays.

use std::sync::Arc;

use serde::Serialize;
use simrob_protocol::Shape;
use simrob_session::Snapshot;

pub use simrob_record::frame::{Frame, FrameBody, FrameEntity};

fn shape_fields(s: &Shape) -> (&'static str, [f64; 3]) {
    match *s {
        Shape::Sphere { radius } => ("Sphere", [radius, 0.0, 0.0]),
        Shape::Box { size } => ("Box", size),
        Shape::Cylinder { radius, length } => ("Cylinder", [radius, length, 0.0]),
        Shape::WheelCylinder { radius, length } => ("WheelCylinder", [radius, length, 0.0]),
    }
}

/// What the viewer does with a [`Frame`] (the type is the recording format's,
/// `simrob_record::frame`): make one of a session snapshot, encode one for the page.
pub trait FrameView: Sized {
    /// The frame of a session snapshot.
    fn of(snapshot: &Snapshot) -> Self;
    /// The frame as the page receives it (see the implementation on [`Frame`]).
    fn encode<R: Serialize>(&self, previous: &Encoded, replay: Option<&R>) -> Encoded;
}

impl FrameView for Frame {
    /// The frame of a session snapshot.
    fn of(snapshot: &Snapshot) -> Frame {
        let bodies = snapshot
            .broadcast
            .bodies
            .iter()
            .map(|b| {
                let (shape, dims) = shape_fields(&b.shape);
                FrameBody {
                    e: b.entity_id.0,
                    id: b.id,
                    shape: shape.to_string(),
                    dims,
                    material: b.material.0,
                    mass: b.mass,
                    p: b.position,
                    r: b.rotation,
                    v: b.linear_velocity,
                    w: b.angular_velocity,
                }
            })
            .collect();
        let entities = snapshot
            .kinds
            .iter()
            .map(|&(id, kind)| {
                let info = snapshot
                    .broadcast
                    .entities
                    .iter()
                    .find(|e| e.entity_id == id);
                FrameEntity {
                    id: id.0,
                    kind: kind.to_string(),
                    p: info.map(|i| i.position),
                    r: info.map(|i| i.rotation),
                }
            })
            .collect();
        let modes = &snapshot.modes;
        Frame {
            iteration: snapshot.iteration,
            time: snapshot.time,
            initialized: modes.initialized,
            paused: modes.step_mode,
            sync: modes.sync_mode,
            auto_adjust: modes.auto_adjust,
            timestep: modes.timestep,
            gravity: modes.gravity,
            steps_per_iteration: modes.steps_per_iteration,
            real_time_factor: modes.real_time_factor,
            bodies,
            entities,
        }
    }

    /// The frame as the page receives it, reusing `previous`'s scene when this frame's is the
    /// same; `replay` (a replay's status) goes into the poses' meta as `"replay"`.
    ///
    /// Two binary messages, little-endian, each `SRVF`, version `u8`, kind `u8` (1 scene,
    /// 2 poses), two zero bytes, `u32` meta length, the meta JSON (padded with spaces to a
    /// multiple of 4 bytes), then arrays of 4-byte numbers, `n` bodies and `m` entities:
    ///
    /// * **scene** — meta `{"type":"scene","scene":G,"bodies":n,"entities":m,"shapes":[…],"kinds":[…]}`;
    ///   `u32` `entity[n]`, `id[n]`, `shape[n]` (index into `shapes`), `material[n]`; `f32` `dims[3n]`,
    ///   `mass[n]`; `u32` entity `id[m]`, `kind[m]` (index into `kinds`).
    /// * **poses** — meta `{"type":"frame","scene":G,…}` with the frame's iteration, time and
    ///   modes (and `replay`); `f32` `position[3n]` (m), `quaternion[4n]` (x, y, z, w),
    ///   `velocity[3n]` (m/s), angular `velocity[3n]` (rad/s), entity `pose[6m]` (position, then
    ///   Euler rotation; NaN for an entity without a reported pose).
    fn encode<R: Serialize>(&self, previous: &Encoded, replay: Option<&R>) -> Encoded {
        encode_frame(self, previous, replay, None)
    }
}

/// [`FrameView::encode`], with `caption` (a scoreboard, a clock: text the page shows over the
/// view) in the poses' meta as `"caption"`.
pub fn encode_captioned(frame: &Frame, previous: &Encoded, caption: &str) -> Encoded {
    encode_frame(frame, previous, None::<&()>, Some(caption))
}

fn encode_frame<R: Serialize>(
    this: &Frame,
    previous: &Encoded,
    replay: Option<&R>,
    caption: Option<&str>,
) -> Encoded {
    let (shapes, kinds, content) = scene_content(this);
    let scene = if previous.scene.generation > 0 && previous.scene.content == content {
        previous.scene.clone()
    } else {
        let generation = previous.scene.generation + 1;
        let meta = serde_json::to_vec(&SceneMeta {
            kind: "scene",
            scene: generation,
            bodies: this.bodies.len(),
            entities: this.entities.len(),
            shapes: &shapes,
            kinds: &kinds,
        })
        .unwrap_or_default();
        let mut bytes = wire_header(WIRE_SCENE, &meta, content.len());
        bytes.extend_from_slice(&content);
        Arc::new(EncodedScene {
            generation,
            content,
            bytes: bytes.into(),
        })
    };
    let (n, m) = (this.bodies.len(), this.entities.len());
    let meta = serde_json::to_vec(&PosesMeta {
        kind: "frame",
        scene: scene.generation,
        bodies: n,
        entities: m,
        iteration: this.iteration,
        time: this.time,
        initialized: this.initialized,
        paused: this.paused,
        sync: this.sync,
        auto_adjust: this.auto_adjust,
        timestep: this.timestep,
        gravity: this.gravity,
        steps_per_iteration: this.steps_per_iteration,
        real_time_factor: this.real_time_factor,
        replay,
        caption,
    })
    .unwrap_or_default();
    let mut out = wire_header(WIRE_POSES, &meta, (13 * n + 6 * m) * 4);
    for b in &this.bodies {
        b.p.iter().for_each(|&v| push_f32(&mut out, v));
    }
    for b in &this.bodies {
        quaternion(b.r).iter().for_each(|&v| push_f32(&mut out, v));
    }
    for b in &this.bodies {
        b.v.iter().for_each(|&v| push_f32(&mut out, v));
    }
    for b in &this.bodies {
        b.w.iter().for_each(|&v| push_f32(&mut out, v));
    }
    for e in &this.entities {
        match (e.p, e.r) {
            (Some(p), Some(r)) => p.iter().chain(&r).for_each(|&v| push_f32(&mut out, v)),
            _ => (0..6).for_each(|_| push_f32(&mut out, f64::NAN)),
        }
    }
    Encoded {
        scene,
        poses: out.into(),
    }
}

// ------------------------------------------------------------------------------------------
// The binary frame the page receives.

/// The first four bytes of every binary message to the page.
pub const WIRE_MAGIC: [u8; 4] = *b"SRVF";
/// The layout of the binary messages (the page refuses others).
pub const WIRE_VERSION: u8 = 1;
/// A binary message holding a scene: what each body and entity is.
pub const WIRE_SCENE: u8 = 1;
/// A binary message holding poses: where each body of the current scene is.
pub const WIRE_POSES: u8 = 2;

/// A scene message, encoded once for every page that needs it.
#[derive(Debug, Default)]
pub struct EncodedScene {
    /// Grows by one each time the scene changes (0: no scene yet).
    pub generation: u64,
    /// What the scene is made of, to tell whether the next frame changed it.
    content: Vec<u8>,
    /// The message.
    pub bytes: axum::body::Bytes,
}

/// One frame as pages receive it: its scene (sent to a page only when it differs from the
/// last one that page got) and its poses.
#[derive(Debug, Default, Clone)]
pub struct Encoded {
    /// The scene message this frame goes with, shared by every frame until the scene changes.
    pub scene: Arc<EncodedScene>,
    /// The poses message; empty before the first frame.
    pub poses: axum::body::Bytes,
}

/// Where a viewer's frames go: the newest one only (see [`crate::publish_into`]).
pub type Publisher = tokio::sync::watch::Sender<Arc<Encoded>>;

/// The unit quaternion `[x, y, z, w]` of the rotation R = Rz(r₂)·Ry(r₁)·Rx(r₀).
pub fn quaternion(r: [f64; 3]) -> [f64; 4] {
    let (sx, cx) = (r[0] / 2.0).sin_cos();
    let (sy, cy) = (r[1] / 2.0).sin_cos();
    let (sz, cz) = (r[2] / 2.0).sin_cos();
    [
        cz * cy * sx - sz * sy * cx,
        cz * sy * cx + sz * cy * sx,
        sz * cy * cx - cz * sy * sx,
        cz * cy * cx + sz * sy * sx,
    ]
}

/// The fixed part of every binary message: magic, version, kind, meta length; then the meta
/// JSON padded with spaces so the arrays after it start on a multiple of 4 bytes.
fn wire_header(kind: u8, meta: &[u8], body: usize) -> Vec<u8> {
    let padded = meta.len().div_ceil(4) * 4;
    let mut out = Vec::with_capacity(12 + padded + body);
    out.extend_from_slice(&WIRE_MAGIC);
    out.extend_from_slice(&[WIRE_VERSION, kind, 0, 0]);
    out.extend_from_slice(&(padded as u32).to_le_bytes());
    out.extend_from_slice(meta);
    out.resize(12 + padded, b' ');
    out
}

fn push_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn push_f32(out: &mut Vec<u8>, v: f64) {
    out.extend_from_slice(&(v as f32).to_le_bytes());
}

/// The index of `name` in `table`, adding it if new.
fn index_of(table: &mut Vec<String>, name: &str) -> u32 {
    match table.iter().position(|t| t == name) {
        Some(i) => i as u32,
        None => {
            table.push(name.to_string());
            (table.len() - 1) as u32
        }
    }
}

/// The scene of `frame`: shape and kind names, then the arrays (see [`Frame::encode`]).
fn scene_content(frame: &Frame) -> (Vec<String>, Vec<String>, Vec<u8>) {
    let (n, m) = (frame.bodies.len(), frame.entities.len());
    let mut shapes = Vec::new();
    let mut kinds = Vec::new();
    let mut out = Vec::with_capacity(n * 32 + m * 8);
    for b in &frame.bodies {
        push_u32(&mut out, b.e);
    }
    for b in &frame.bodies {
        push_u32(&mut out, b.id);
    }
    for b in &frame.bodies {
        let shape = index_of(&mut shapes, &b.shape);
        push_u32(&mut out, shape);
    }
    for b in &frame.bodies {
        push_u32(&mut out, b.material);
    }
    for b in &frame.bodies {
        for d in b.dims {
            push_f32(&mut out, d);
        }
    }
    for b in &frame.bodies {
        push_f32(&mut out, b.mass);
    }
    for e in &frame.entities {
        push_u32(&mut out, e.id);
    }
    for e in &frame.entities {
        let kind = index_of(&mut kinds, &e.kind);
        push_u32(&mut out, kind);
    }
    (shapes, kinds, out)
}

#[derive(Serialize)]
struct SceneMeta<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    scene: u64,
    bodies: usize,
    entities: usize,
    shapes: &'a [String],
    kinds: &'a [String],
}

#[derive(Serialize)]
struct PosesMeta<'a, R: Serialize> {
    #[serde(rename = "type")]
    kind: &'a str,
    scene: u64,
    bodies: usize,
    entities: usize,
    iteration: u64,
    time: f64,
    initialized: bool,
    paused: bool,
    sync: bool,
    auto_adjust: bool,
    timestep: f64,
    gravity: f64,
    steps_per_iteration: u32,
    real_time_factor: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    replay: Option<&'a R>,
    #[serde(skip_serializing_if = "Option::is_none")]
    caption: Option<&'a str>,
}

/// The meta JSON of a binary message (see [`Frame::encode`]), or `None` if `message` is not
/// one.
pub fn wire_meta(message: &[u8]) -> Option<serde_json::Value> {
    if message.len() < 12 || message[..4] != WIRE_MAGIC || message[4] != WIRE_VERSION {
        return None;
    }
    let len = u32::from_le_bytes(message[8..12].try_into().ok()?) as usize;
    serde_json::from_slice(message.get(12..12usize.checked_add(len)?)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(e: u32, shape: &str, p: [f64; 3], r: [f64; 3]) -> FrameBody {
        FrameBody {
            e,
            id: 0,
            shape: shape.into(),
            dims: [0.1, 0.2, 0.3],
            material: 7,
            mass: 1.5,
            p,
            r,
            v: [1.0, 2.0, 3.0],
            w: [4.0, 5.0, 6.0],
        }
    }

    fn frame(x: f64) -> Frame {
        Frame {
            iteration: 12,
            time: 0.12,
            bodies: vec![
                body(1, "Box", [0.0, 0.0, -0.05], [0.0; 3]),
                body(2, "Sphere", [x, 0.5, 0.02], [0.1, -0.2, 0.3]),
            ],
            entities: vec![
                FrameEntity {
                    id: 1,
                    kind: "Field".into(),
                    p: None,
                    r: None,
                },
                FrameEntity {
                    id: 2,
                    kind: "Ball".into(),
                    p: Some([x, 0.5, 0.02]),
                    r: Some([0.1, -0.2, 0.3]),
                },
            ],
            ..Frame::default()
        }
    }

    fn f32s(bytes: &[u8]) -> Vec<f32> {
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    fn u32s(bytes: &[u8]) -> Vec<u32> {
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }

    /// The arrays after the meta.
    fn arrays(message: &[u8]) -> &[u8] {
        let len = u32::from_le_bytes(message[8..12].try_into().unwrap()) as usize;
        assert_eq!((12 + len) % 4, 0, "arrays start on 4 bytes");
        &message[12 + len..]
    }

    #[test]
    fn the_scene_is_sent_once_and_poses_as_floats() {
        let first = frame(1.0).encode(&Encoded::default(), None::<&()>);
        assert_eq!(first.scene.generation, 1);
        let scene = wire_meta(&first.scene.bytes).unwrap();
        assert_eq!(scene["type"], "scene");
        assert_eq!(scene["shapes"], serde_json::json!(["Box", "Sphere"]));
        assert_eq!(scene["kinds"], serde_json::json!(["Field", "Ball"]));
        let a = arrays(&first.scene.bytes);
        // entity, id, shape, material (2 each), dims (6), mass (2), entity ids, kinds (2 each).
        assert_eq!(a.len(), (2 * 4 + 6 + 2 + 2 * 2) * 4);
        assert_eq!(u32s(&a[..32]), [1, 2, 0, 0, 0, 1, 7, 7]);
        assert_eq!(f32s(&a[32..56]), [0.1, 0.2, 0.3, 0.1, 0.2, 0.3]);
        assert_eq!(u32s(&a[64..]), [1, 2, 0, 1]);

        let poses = wire_meta(&first.poses).unwrap();
        assert_eq!(poses["type"], "frame");
        assert_eq!(
            (poses["scene"].as_u64(), poses["iteration"].as_u64()),
            (Some(1), Some(12))
        );
        let v = f32s(arrays(&first.poses));
        assert_eq!(v.len(), 2 * 13 + 2 * 6);
        assert_eq!(&v[3..6], [1.0, 0.5, 0.02]);
        let q = quaternion([0.1, -0.2, 0.3]).map(|c| c as f32);
        assert_eq!(&v[10..14], q);
        assert_eq!(&v[14..20], [1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
        assert!(
            v[26..32].iter().all(|x| x.is_nan()),
            "the field has no pose"
        );
        assert_eq!(&v[32..38], [1.0, 0.5, 0.02, 0.1, -0.2, 0.3]);

        // Only a pose changed: the same scene, not encoded again.
        let second = frame(2.0).encode(&first, None::<&()>);
        assert!(Arc::ptr_eq(&first.scene, &second.scene));
        assert_eq!(f32s(arrays(&second.poses))[3], 2.0);
        // A body more: a new scene.
        let mut bigger = frame(2.0);
        bigger.bodies.push(body(2, "Cylinder", [0.0; 3], [0.0; 3]));
        let third = bigger.encode(&second, Some(&serde_json::json!({"index": 3})));
        assert_eq!(third.scene.generation, 2);
        let meta = wire_meta(&third.poses).unwrap();
        assert_eq!(
            (meta["scene"].as_u64(), meta["bodies"].as_u64()),
            (Some(2), Some(3))
        );
        assert_eq!(meta["replay"]["index"], 3);
    }

    #[test]
    fn the_quaternion_is_the_euler_rotation() {
        // R = Rz(c)·Ry(b)·Rx(a) applied to v, against the quaternion's rotation of v.
        let (a, b, c) = (0.4_f64, -1.1_f64, 2.5_f64);
        let rx = |v: [f64; 3]| {
            [
                v[0],
                a.cos() * v[1] - a.sin() * v[2],
                a.sin() * v[1] + a.cos() * v[2],
            ]
        };
        let ry = |v: [f64; 3]| {
            [
                b.cos() * v[0] + b.sin() * v[2],
                v[1],
                -b.sin() * v[0] + b.cos() * v[2],
            ]
        };
        let rz = |v: [f64; 3]| {
            [
                c.cos() * v[0] - c.sin() * v[1],
                c.sin() * v[0] + c.cos() * v[1],
                v[2],
            ]
        };
        let q = quaternion([a, b, c]);
        let norm: f64 = q.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-12);
        let rotate = |v: [f64; 3]| {
            let (u, w) = ([q[0], q[1], q[2]], q[3]);
            let cross = |x: [f64; 3], y: [f64; 3]| {
                [
                    x[1] * y[2] - x[2] * y[1],
                    x[2] * y[0] - x[0] * y[2],
                    x[0] * y[1] - x[1] * y[0],
                ]
            };
            let t = cross(u, v).map(|x| 2.0 * x);
            let ut = cross(u, t);
            [0, 1, 2].map(|i| v[i] + w * t[i] + ut[i])
        };
        for v in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.3, -0.7, 0.2]] {
            let (e, g) = (rz(ry(rx(v))), rotate(v));
            for i in 0..3 {
                assert!((e[i] - g[i]).abs() < 1e-12, "{v:?}: {e:?} vs {g:?}");
            }
        }
    }

    #[test]
    fn a_truncated_or_foreign_message_has_no_meta() {
        let m = frame(1.0).encode(&Encoded::default(), None::<&()>);
        assert!(wire_meta(&m.poses).is_some());
        assert!(wire_meta(&m.poses[..20]).is_none());
        assert!(wire_meta(b"{\"type\":\"frame\"}").is_none());
        assert!(wire_meta(&[]).is_none());
    }
}
