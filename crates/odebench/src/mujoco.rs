//! MuJoCo (`libmujoco`, the library the `mujoco` / `mujoco-core` Python packages ship) loaded
//! at run time with `dlopen`, and the SimRob scene built in it as [`crate::ode`] builds it in
//! ODE: the same bodies, masses and inertias, wheels that collide as spheres and never with
//! wheels, a velocity motor limited to the joint's Maximum_Torque on each wheel, the static
//! field as world geoms, dt 0.01 s, gravity −9.8 along Z.
//!
//! The model is written as MJCF and compiled with `mj_loadXML`; only functions whose
//! signatures have not changed in MuJoCo 3 and 4 are called, and the state is read and written
//! through `mj_getState` / `mj_setState` (no `mjData` field is read by offset).
//!
//! How the scene maps (see `docs/benchmarks.md`):
//! - Structure: each entity's first body with a mass is a free body; bodies joined to it by a
//!   Fixed joint are welded into it (MuJoCo's exact weld), by a Wheel joint hang from it on a
//!   hinge about the joint's axis 2, reversed (ODE's Hinge2 motor turns body 1 against body
//!   2, MuJoCo's hinge its body against its parent). Hinge2's suspension along axis 1 (CFM
//!   0.001, ERP 0.9: a 0.05 mm sag under a SumBot) is left out.
//! - Motors: a `velocity` actuator (kv 100 N·m·s), integrated implicitly by `implicitfast`;
//!   ODE's motor is a velocity constraint limited to Maximum_Torque (10 N·m). MuJoCo's force
//!   range is not set: where it binds (a wheel spun up in the air) `implicitfast` integrates
//!   the clamped force explicitly and the 0.1 kg wheel's 2.6e-5 kg·m² diverged at dt 0.01.
//!   On the ground the wheels use about 0.03 N·m, far below the limit.
//! - Contacts: Coulomb friction μ of each material's interaction with itself (MuJoCo takes the
//!   larger of two geoms'; every pair of the SimRob materials has μ = 1), pyramidal cone,
//!   condim 3 (sliding friction only, as ODE's). ODE's ERP/CFM spring (simrob's
//!   `mapping::contact_spring`: ω, ζ per unit effective mass, as MuJoCo's `solref` is) becomes
//!   `solref = (timeconst, ζ)`: ODE's time constant 1/(ω·ζ) (5–7.5 ms) is shorter than the
//!   2·dt MuJoCo accepts at dt 0.01 (`refsafe`), so the time constant is 2·dt = 0.02 s and
//!   the damping ratio is ODE's. Cross-material pairs take MuJoCo's `solmix`-weighted average:
//!   the weights are chosen so that the wood–metal pair gets its own ζ. Force-dependent slip
//!   has no MuJoCo counterpart and is not mapped; `solimp` is MuJoCo's default.

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use crate::dynlib::{c_api, open_first, Ptr};
use std::fmt::Write as _;

use simrob_physics::{euler_to_quat, mapping, rotate, Quat, Vec3};
use simrob_protocol::{EntitySpec, Interaction, JointSpec, Shape};

const STATE_QPOS: c_int = 1 << 1;
const STATE_QVEL: c_int = 1 << 2;
const STATE_CTRL: c_int = 1 << 6;
/// The motors' velocity gain (N·m per rad/s): 10 N·m at 0.1 rad/s from the target.
pub const MOTOR_KV: f64 = 100.0;
/// The contacts' time constant (s): MuJoCo's smallest at dt 0.01 (2·dt).
const TIMECONST: f64 = 0.02;
/// The integrator named in the model (MuJoCo's recommended one; its default is `Euler`).
pub const INTEGRATOR: &str = "implicitfast";

c_api! {
    /// The MuJoCo functions used here, resolved from libmujoco 3 or 4.
    pub struct Api ("libmujoco") {
        /// Where the library was loaded from.
        pub path: String,
    }
    mj_versionString: fn() -> *const c_char;
    mj_loadXML: fn(*const c_char, *const c_void, *mut c_char, c_int) -> Ptr;
    mj_makeData: fn(Ptr) -> Ptr;
    mj_deleteModel: fn(Ptr);
    mj_deleteData: fn(Ptr);
    mj_step: fn(Ptr, Ptr);
    mj_forward: fn(Ptr, Ptr);
    mj_stateSize: fn(Ptr, c_int) -> c_int;
    mj_getState: fn(Ptr, Ptr, *mut f64, c_int);
    mj_setState: fn(Ptr, Ptr, *const f64, c_int);
    mj_getTotalmass: fn(Ptr) -> f64;
}

/// `$SIMROB_MUJOCO_LIB` when set (to anything but the empty string): then the only place the
/// library is looked for.
pub fn lib_override() -> Option<String> {
    std::env::var_os("SIMROB_MUJOCO_LIB")
        .filter(|p| !p.is_empty())
        .map(|p| p.to_string_lossy().into_owned())
}

/// Where to find the library: `$SIMROB_MUJOCO_LIB` (a path), the loader's search path, then
/// the `mujoco` Python package of `python3` (the `mujoco-core` wheel carries
/// `libmujoco.so.*` beside its modules).
fn candidates() -> Vec<String> {
    let mut out = Vec::new();
    if let Some(p) = lib_override() {
        out.push(p);
        return out;
    }
    out.push("libmujoco.so".into());
    let script = "import importlib.util as u, glob, os\n\
                  s = u.find_spec('mujoco')\n\
                  d = list(s.submodule_search_locations) if s else []\n\
                  print('\\n'.join(sorted(glob.glob(os.path.join(d[0], 'libmujoco.so*'))) if d else ''))";
    if let Ok(o) = std::process::Command::new("python3")
        .args(["-c", script])
        .stderr(std::process::Stdio::null())
        .output()
    {
        if o.status.success() {
            out.extend(
                String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| l.trim().to_string()),
            );
        }
    }
    out
}

impl Api {
    /// Loads libmujoco; `Err` says why not.
    pub fn load() -> Result<&'static Api, String> {
        let why = match open_first(candidates()) {
            Ok((handle, path)) => {
                // SAFETY: a live handle of libmujoco, whose functions have the signatures
                // declared above in MuJoCo 3 and 4's mujoco.h.
                let api = unsafe { Api::resolve(handle, path)? };
                // The library stays loaded for the life of the process.
                return Ok(Box::leak(Box::new(api)));
            }
            Err(why) => why,
        };
        if let Some(path) = lib_override() {
            return Err(format!(
                "SIMROB_MUJOCO_LIB is set to {path:?}, which does not load ({}); when set it \
                 is the only place MuJoCo's library is looked for: set it to libmujoco.so's \
                 path, or unset it to search the loader's path and python3's `mujoco` package",
                if why.is_empty() {
                    "no such library".to_string()
                } else {
                    why.join("; ")
                }
            ));
        }
        Err(format!(
            "MuJoCo's library is not found (set SIMROB_MUJOCO_LIB to libmujoco.so's path, or \
             `pip install mujoco-core` for python3){}",
            if why.is_empty() {
                String::new()
            } else {
                format!(": {}", why.join("; "))
            }
        ))
    }

    /// The library's version, e.g. "4.0.0".
    pub fn version(&self) -> String {
        // SAFETY: returns a static NUL-terminated string.
        unsafe { CStr::from_ptr((self.mj_versionString)()) }
            .to_string_lossy()
            .into_owned()
    }
}

/// A free body of the scene: where its pose and velocity are in `qpos` / `qvel`.
struct Free {
    entity: u32,
    body_id: u32,
    qpos: usize,
    qvel: usize,
}

/// The scene being written as MJCF.
pub struct Builder {
    bodies: String,
    actuators: String,
    free: Vec<Free>,
    /// `(entity, wheel joint id)` of each actuator, in order.
    motors: Vec<(u32, u32, f64)>,
    nq: usize,
    nv: usize,
    materials: Vec<(u32, f64, f64, f64)>,
    /// Total mass of the moving bodies, from the specs.
    pub mass: f64,
}

fn quat_mul(a: Quat, b: Quat) -> Quat {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

fn conj(q: Quat) -> Quat {
    [-q[0], -q[1], -q[2], q[3]]
}

fn sub(a: Vec3, b: Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// MJCF's quaternion order (w x y z).
fn wxyz(q: Quat) -> String {
    format!("{} {} {} {}", q[3], q[0], q[1], q[2])
}

fn v3(v: Vec3) -> String {
    format!("{} {} {}", v[0], v[1], v[2])
}

impl Builder {
    /// An empty scene with the SimRob materials' contact parameters.
    pub fn new(interactions: &[Interaction]) -> Builder {
        let find = |a: u32, b: u32| {
            interactions.iter().find(|i| {
                let (x, y) = (i.material_1.0, i.material_2.0);
                (x, y) == (a, b) || (x, y) == (b, a)
            })
        };
        let mut ids: Vec<u32> = interactions
            .iter()
            .flat_map(|i| [i.material_1.0, i.material_2.0])
            .collect();
        ids.sort_unstable();
        ids.dedup();
        let zeta = |a: u32, b: u32| {
            find(a, b).map(|i| {
                mapping::contact_spring(i.contact.hardness, i.contact.bounciness, 0.01).zeta
            })
        };
        // solmix: with two materials, weights that give the cross pair its own ζ (MuJoCo
        // averages two geoms' solref weighted by solmix).
        let mut mix = vec![1.0; ids.len()];
        if let &[a, b] = ids.as_slice() {
            if let (Some(za), Some(zb), Some(zab)) = (zeta(a, a), zeta(b, b), zeta(a, b)) {
                if (za - zb).abs() > 1e-9 {
                    let f = ((zab - za) / (zb - za)).clamp(0.01, 0.99);
                    mix = vec![1.0 - f, f];
                }
            }
        }
        let materials = ids
            .iter()
            .zip(&mix)
            .map(|(&m, &w)| {
                let friction = find(m, m).map_or(1.0, |i| i.contact.friction);
                (m, friction, zeta(m, m).unwrap_or(1.0), w)
            })
            .collect();
        Builder {
            bodies: String::new(),
            actuators: String::new(),
            free: Vec::new(),
            motors: Vec::new(),
            nq: 0,
            nv: 0,
            materials,
            mass: 0.0,
        }
    }

    /// The geom attributes of a material (and whether it is a wheel: wheels never touch
    /// wheels).
    fn contact(&self, material: u32, wheel: bool) -> String {
        let (friction, zeta, mix) = self
            .materials
            .iter()
            .find(|m| m.0 == material)
            .map_or((1.0, 1.0, 1.0), |m| (m.1, m.2, m.3));
        let (contype, conaffinity) = if wheel { (2, 1) } else { (1, 3) };
        format!(
            "contype=\"{contype}\" conaffinity=\"{conaffinity}\" condim=\"3\" friction=\"{friction} 0 0\" solref=\"{TIMECONST} {zeta}\" solmix=\"{mix}\""
        )
    }

    fn geom(&self, shape: &Shape, material: u32, pos: Vec3, quat: Quat) -> String {
        let (kind, size, wheel) = match *shape {
            Shape::Sphere { radius } => ("sphere", format!("{radius}"), false),
            Shape::Box { size } => (
                "box",
                format!("{} {} {}", size[0] / 2.0, size[1] / 2.0, size[2] / 2.0),
                false,
            ),
            Shape::Cylinder { radius, length } => {
                ("cylinder", format!("{radius} {}", length / 2.0), false)
            }
            // As ODE's harness and the SimRob simulator: a wheel collides as a sphere.
            Shape::WheelCylinder { radius, .. } => ("sphere", format!("{radius}"), true),
        };
        format!(
            "<geom type=\"{kind}\" size=\"{size}\" pos=\"{}\" quat=\"{}\" {}/>",
            v3(pos),
            wxyz(quat),
            self.contact(material, wheel)
        )
    }

    /// Adds an entity (robot, field or ball) as [`crate::ode::OdeScene::add`] adds it.
    pub fn add(&mut self, spec: &EntitySpec) {
        let entity = spec.entity_id().0;
        let (bodies, joints) = spec.structure();
        let statics: Vec<_> = bodies
            .iter()
            .filter(|b| b.mass.unwrap_or(1.0) <= 0.0)
            .collect();
        for b in statics {
            let g = self.geom(
                &b.shape,
                b.material.map_or(0, |m| m.0),
                b.position,
                euler_to_quat(b.rotation),
            );
            self.bodies.push_str(&g);
            self.bodies.push('\n');
        }
        let moving: Vec<_> = bodies
            .iter()
            .filter(|b| b.mass.unwrap_or(1.0) > 0.0)
            .collect();
        if moving.is_empty() {
            return;
        }
        // The tree: which body hangs from which, and by what (None: welded).
        let mut parent: Vec<Option<(u32, Option<Vec3>)>> = vec![None; moving.len()];
        let index = |id: u32| moving.iter().position(|b| b.id == id);
        let mut placed = vec![false; moving.len()];
        placed[0] = true;
        let mut changed = true;
        while changed {
            changed = false;
            for j in joints {
                let (b1, b2, axis) = match j {
                    JointSpec::Fixed { body_1, body_2, .. } => (*body_1, *body_2, None),
                    JointSpec::Wheel {
                        body_1,
                        body_2,
                        axis_2,
                        ..
                    } => (*body_1, *body_2, Some(*axis_2)),
                };
                let (Some(i1), Some(i2)) = (index(b1), index(b2)) else {
                    continue;
                };
                let (p, c) = if placed[i1] && !placed[i2] {
                    (i1, i2)
                } else if placed[i2] && !placed[i1] {
                    (i2, i1)
                } else {
                    continue;
                };
                // A hinge's rate is its body's turning against its parent's about the axis;
                // ODE's Hinge2 rate about axis 2 (its motor's target) is body 1's against body
                // 2's (`dJointGetHinge2Angle2Rate`: axis · (ω1 − ω2)), so a positive target
                // drives a SumBot towards −X. A wheel (body 2) hung from its chassis turns
                // about the reversed axis; a body 1 hung from body 2 about the axis itself.
                let axis = if c == i2 {
                    axis.map(|a| a.map(|v| -v))
                } else {
                    axis
                };
                parent[c] = Some((moving[p].id, axis));
                placed[c] = true;
                changed = true;
            }
        }
        // Bodies joined to none of the others are free bodies of their own, as in ODE.
        let mut xml = String::new();
        for (i, p) in parent.iter().enumerate() {
            if p.is_none() {
                self.body(&moving, &parent, joints, entity, i, None, &mut xml);
            }
        }
        self.bodies.push_str(&xml);
    }

    #[allow(clippy::too_many_arguments)]
    fn body(
        &mut self,
        moving: &[&simrob_protocol::BodySpec],
        parent: &[Option<(u32, Option<Vec3>)>],
        joints: &[JointSpec],
        entity: u32,
        i: usize,
        frame: Option<(Vec3, Quat)>,
        xml: &mut String,
    ) {
        let b = moving[i];
        let q = euler_to_quat(b.rotation);
        let (pos, quat) = match frame {
            None => (b.position, q),
            Some((pp, pq)) => (rotate(conj(pq), sub(b.position, pp)), quat_mul(conj(pq), q)),
        };
        let _ = writeln!(
            xml,
            "<body name=\"e{entity}b{}\" pos=\"{}\" quat=\"{}\">",
            b.id,
            v3(pos),
            wxyz(quat)
        );
        let mass = b.mass.unwrap_or(1.0);
        self.mass += mass;
        let inertia = match b.shape {
            Shape::Sphere { radius } => [0.4 * mass * radius * radius; 3],
            Shape::Box { size } => {
                let [x, y, z] = size.map(|s| s * s);
                [
                    mass * (y + z) / 12.0,
                    mass * (x + z) / 12.0,
                    mass * (x + y) / 12.0,
                ]
            }
            // ODE's dMassSetCylinderTotal with direction 3: the axis is the body's Z.
            Shape::Cylinder { radius, length } | Shape::WheelCylinder { radius, length } => {
                let side = mass * (3.0 * radius * radius + length * length) / 12.0;
                [side, side, 0.5 * mass * radius * radius]
            }
        };
        let _ = writeln!(
            xml,
            "<inertial pos=\"0 0 0\" mass=\"{mass}\" diaginertia=\"{}\"/>",
            v3(inertia)
        );
        match frame {
            None => {
                let _ = writeln!(xml, "<freejoint/>");
                self.free.push(Free {
                    entity,
                    body_id: b.id,
                    qpos: self.nq,
                    qvel: self.nv,
                });
                self.nq += 7;
                self.nv += 6;
            }
            Some(_) => {
                if let Some((_, Some(axis))) = parent[i] {
                    // The axis in this body's frame; the hinge at its origin (ODE's anchor).
                    let local = rotate(conj(q), axis);
                    let _ = writeln!(
                        xml,
                        "<joint name=\"e{entity}j{}\" type=\"hinge\" axis=\"{}\"/>",
                        b.id,
                        v3(local)
                    );
                    self.nq += 1;
                    self.nv += 1;
                    for j in joints {
                        if let JointSpec::Wheel {
                            id,
                            body_2,
                            body_1,
                            maximum_torque,
                            ..
                        } = j
                        {
                            if *body_2 == b.id || *body_1 == b.id {
                                // No force range: see the module's docs.
                                let _ = maximum_torque;
                                let _ = writeln!(
                                    self.actuators,
                                    "<velocity joint=\"e{entity}j{}\" kv=\"{MOTOR_KV}\"/>",
                                    b.id
                                );
                                self.motors.push((entity, *id, 0.0));
                            }
                        }
                    }
                }
            }
        }
        let g = self.geom(
            &b.shape,
            b.material.map_or(0, |m| m.0),
            [0.0; 3],
            [0.0, 0.0, 0.0, 1.0],
        );
        xml.push_str(&g);
        xml.push('\n');
        for (c, p) in parent.iter().enumerate() {
            if p.is_some_and(|(pid, _)| pid == b.id) {
                self.body(
                    moving,
                    parent,
                    joints,
                    entity,
                    c,
                    Some((b.position, q)),
                    xml,
                );
            }
        }
        xml.push_str("</body>\n");
    }

    /// Sets a wheel joint's motor target (rad/s) before the model is built.
    pub fn set_motor(&mut self, entity: u32, wheel_joint: u32, velocity: f64) {
        for m in self.motors.iter_mut() {
            if m.0 == entity && m.1 == wheel_joint {
                m.2 = velocity;
            }
        }
    }

    /// The MJCF document.
    pub fn xml(&self) -> String {
        format!(
            "<mujoco model=\"simrob-scene\">\n\
             <option timestep=\"0.01\" gravity=\"0 0 -9.8\" integrator=\"{INTEGRATOR}\" solver=\"Newton\"/>\n\
             <worldbody>\n{}</worldbody>\n<actuator>\n{}</actuator>\n</mujoco>\n",
            self.bodies, self.actuators
        )
    }

    /// Compiles the model.
    pub fn build(self, api: &'static Api) -> Result<MjScene, String> {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("simrob-odebench-{}-{n}.xml", std::process::id()));
        std::fs::write(&path, self.xml()).map_err(|e| format!("{}: {e}", path.display()))?;
        let c = CString::new(path.to_string_lossy().into_owned()).map_err(|e| e.to_string())?;
        let mut error = [0 as c_char; 1000];
        // SAFETY: a NUL-terminated path, a 1000-byte error buffer.
        let model = unsafe {
            (api.mj_loadXML)(
                c.as_ptr(),
                std::ptr::null(),
                error.as_mut_ptr(),
                error.len() as c_int,
            )
        };
        let _ = std::fs::remove_file(&path);
        // To look at the model in MuJoCo's own tools.
        if let Some(keep) = std::env::var_os("SIMROB_MUJOCO_XML") {
            if let Err(e) = std::fs::write(&keep, self.xml()) {
                if !model.is_null() {
                    // SAFETY: compiled above, not used after.
                    unsafe { (api.mj_deleteModel)(model) };
                }
                return Err(format!(
                    "SIMROB_MUJOCO_XML: cannot write the model to {}: {e}",
                    std::path::Path::new(&keep).display()
                ));
            }
        }
        if model.is_null() {
            // SAFETY: MuJoCo writes a NUL-terminated message into the buffer.
            let msg = unsafe { CStr::from_ptr(error.as_ptr()) };
            return Err(format!(
                "MuJoCo rejected the scene: {}",
                msg.to_string_lossy()
            ));
        }
        // SAFETY: a compiled model.
        let data = unsafe { (api.mj_makeData)(model) };
        if data.is_null() {
            // SAFETY: created above.
            unsafe { (api.mj_deleteModel)(model) };
            return Err("MuJoCo could not allocate its data".into());
        }
        // SAFETY: model and data of one another.
        let (nq, nv, nu) = unsafe {
            (
                (api.mj_stateSize)(model, STATE_QPOS) as usize,
                (api.mj_stateSize)(model, STATE_QVEL) as usize,
                (api.mj_stateSize)(model, STATE_CTRL) as usize,
            )
        };
        let mut scene = MjScene {
            api,
            model,
            data,
            free: self.free,
            qpos: vec![0.0; nq],
            qvel: vec![0.0; nv],
            layout_ok: nq == self.nq && nv == self.nv && nu == self.motors.len(),
            spec_mass: self.mass,
        };
        if !scene.layout_ok {
            return Err(format!(
                "MuJoCo's model has nq {nq}, nv {nv}, nu {nu}; the scene expected {}, {}, {}",
                self.nq,
                self.nv,
                self.motors.len()
            ));
        }
        let ctrl: Vec<f64> = self.motors.iter().map(|m| m.2).collect();
        // SAFETY: `ctrl` has nu entries.
        unsafe {
            (api.mj_setState)(model, data, ctrl.as_ptr(), STATE_CTRL);
            (api.mj_forward)(model, data);
        }
        scene.read();
        Ok(scene)
    }
}

/// The SimRob scene in MuJoCo.
pub struct MjScene {
    api: &'static Api,
    model: Ptr,
    data: Ptr,
    free: Vec<Free>,
    /// `qpos` and `qvel` as of the last step.
    qpos: Vec<f64>,
    qvel: Vec<f64>,
    layout_ok: bool,
    /// The moving bodies' total mass according to the specs.
    pub spec_mass: f64,
}

impl MjScene {
    fn read(&mut self) {
        // SAFETY: buffers of nq and nv entries.
        unsafe {
            (self.api.mj_getState)(self.model, self.data, self.qpos.as_mut_ptr(), STATE_QPOS);
            (self.api.mj_getState)(self.model, self.data, self.qvel.as_mut_ptr(), STATE_QVEL);
        }
    }

    /// One `mj_step`.
    pub fn step(&mut self) {
        // SAFETY: model and data of one another.
        unsafe { (self.api.mj_step)(self.model, self.data) };
    }

    /// The moving bodies' total mass in the compiled model (kg).
    pub fn total_mass(&self) -> f64 {
        // SAFETY: a compiled model.
        unsafe { (self.api.mj_getTotalmass)(self.model) }
    }

    /// `(nq, nv)`: position and velocity coordinates.
    pub fn sizes(&self) -> (usize, usize) {
        (self.qpos.len(), self.qvel.len())
    }

    /// Sets the linear (world) and angular (world) velocity of a free body.
    pub fn set_velocity(&mut self, entity: u32, body_id: u32, linear: Vec3, angular: Vec3) {
        self.read();
        let Some(f) = self
            .free
            .iter()
            .find(|f| f.entity == entity && f.body_id == body_id)
        else {
            return;
        };
        let p = &self.qpos[f.qpos..f.qpos + 7];
        let q = [p[4], p[5], p[6], p[3]];
        // A free joint's angular velocity is in the body's frame.
        let local = rotate(conj(q), angular);
        self.qvel[f.qvel..f.qvel + 3].copy_from_slice(&linear);
        self.qvel[f.qvel + 3..f.qvel + 6].copy_from_slice(&local);
        // SAFETY: a buffer of nv entries.
        unsafe {
            (self.api.mj_setState)(self.model, self.data, self.qvel.as_ptr(), STATE_QVEL);
        }
    }

    /// Pose and linear velocity of a free body (simrob's quaternion order `[x, y, z, w]`);
    /// `None` for a body welded or hinged to another.
    pub fn state(&self, entity: u32, body_id: u32) -> Option<(Vec3, Quat, Vec3)> {
        if !self.layout_ok {
            return None;
        }
        let f = self
            .free
            .iter()
            .find(|f| f.entity == entity && f.body_id == body_id)?;
        let (mut qpos, mut qvel) = (vec![0.0; self.qpos.len()], vec![0.0; self.qvel.len()]);
        // SAFETY: buffers of nq and nv entries.
        unsafe {
            (self.api.mj_getState)(self.model, self.data, qpos.as_mut_ptr(), STATE_QPOS);
            (self.api.mj_getState)(self.model, self.data, qvel.as_mut_ptr(), STATE_QVEL);
        }
        let p = &qpos[f.qpos..f.qpos + 7];
        let v = &qvel[f.qvel..f.qvel + 3];
        Some((
            [p[0], p[1], p[2]],
            [p[4], p[5], p[6], p[3]],
            [v[0], v[1], v[2]],
        ))
    }
}

impl Drop for MjScene {
    fn drop(&mut self) {
        // SAFETY: created in `build`, deleted once.
        unsafe {
            (self.api.mj_deleteData)(self.data);
            (self.api.mj_deleteModel)(self.model);
        }
    }
}
