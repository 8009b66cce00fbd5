//! ODE (Open Dynamics Engine, `libode`, double precision) loaded at run time with `dlopen`, and
//! the SimRob scene built in it the way the SimRob simulator does: boxes, spheres, cylinders,
//! wheel cylinders colliding as spheres, Hinge2 wheel joints with a suspension and a velocity
//! motor on axis 2, and one contact joint per contact point with the pair's soft ERP/CFM,
//! friction and slip (Hardness × 0.01 as CFM, Slip × 0.1, as simrob's mapping documents).

use std::ffi::{c_char, c_int};

use crate::dynlib::{c_api, open_first, Ptr};

use simrob_physics::{euler_to_quat, mapping};
use simrob_protocol::{EntitySpec, Interaction, JointSpec, Shape};

type Real = f64;

/// `dSurfaceParameters` of ODE 0.16.
#[repr(C)]
#[derive(Clone, Copy)]
struct Surface {
    mode: c_int,
    mu: Real,
    mu2: Real,
    rho: Real,
    rho2: Real,
    rho_n: Real,
    bounce: Real,
    bounce_vel: Real,
    soft_erp: Real,
    soft_cfm: Real,
    motion1: Real,
    motion2: Real,
    motion_n: Real,
    slip1: Real,
    slip2: Real,
}

/// `dContactGeom`.
#[repr(C)]
#[derive(Clone, Copy)]
struct ContactGeom {
    pos: [Real; 4],
    normal: [Real; 4],
    depth: Real,
    g1: Ptr,
    g2: Ptr,
    side1: c_int,
    side2: c_int,
}

/// `dContact`.
#[repr(C)]
#[derive(Clone, Copy)]
struct Contact {
    surface: Surface,
    geom: ContactGeom,
    fdir1: [Real; 4],
}

/// `dMass`.
#[repr(C)]
struct Mass {
    mass: Real,
    c: [Real; 4],
    i: [Real; 12],
}

const CONTACT_SOFT_ERP: c_int = 0x008;
const CONTACT_SOFT_CFM: c_int = 0x010;
const CONTACT_SLIP1: c_int = 0x100;
const CONTACT_SLIP2: c_int = 0x200;
const CONTACT_APPROX1: c_int = 0x7000;
const JOINT_TYPE_CONTACT: c_int = 4;
const PARAM_LO_STOP: c_int = 0;
const PARAM_HI_STOP: c_int = 1;
const PARAM_SUSPENSION_ERP: c_int = 11;
const PARAM_SUSPENSION_CFM: c_int = 12;
const PARAM_VEL2: c_int = 0x102;
const PARAM_FMAX2: c_int = 0x105;
/// Contact points per colliding pair (SimRob's `contactpointsammount` default).
const MAX_CONTACTS: usize = 4;

type NearCallback = unsafe extern "C" fn(Ptr, Ptr, Ptr);

c_api! {
    /// The ODE functions used here, resolved from libode 0.16 (double precision).
    pub struct Api ("libode") {}
    dInitODE2: fn(u32) -> c_int;
    dCheckConfiguration: fn(*const c_char) -> c_int;
    dWorldCreate: fn() -> Ptr;
    dWorldDestroy: fn(Ptr);
    dWorldSetGravity: fn(Ptr, Real, Real, Real);
    dWorldSetERP: fn(Ptr, Real);
    dWorldSetCFM: fn(Ptr, Real);
    dWorldStep: fn(Ptr, Real) -> c_int;
    dWorldQuickStep: fn(Ptr, Real) -> c_int;
    dWorldSetQuickStepNumIterations: fn(Ptr, c_int);
    dHashSpaceCreate: fn(Ptr) -> Ptr;
    dSpaceDestroy: fn(Ptr);
    dSpaceCollide: fn(Ptr, Ptr, NearCallback);
    dJointGroupCreate: fn(c_int) -> Ptr;
    dJointGroupEmpty: fn(Ptr);
    dJointGroupDestroy: fn(Ptr);
    dBodyCreate: fn(Ptr) -> Ptr;
    dBodySetPosition: fn(Ptr, Real, Real, Real);
    dBodySetQuaternion: fn(Ptr, *const Real);
    dBodySetMass: fn(Ptr, *const Mass);
    dBodyGetPosition: fn(Ptr) -> *const Real;
    dBodyGetQuaternion: fn(Ptr) -> *const Real;
    dBodyGetLinearVel: fn(Ptr) -> *const Real;
    dBodySetLinearVel: fn(Ptr, Real, Real, Real);
    dBodySetAngularVel: fn(Ptr, Real, Real, Real);
    dMassSetBoxTotal: fn(*mut Mass, Real, Real, Real, Real);
    dMassSetSphereTotal: fn(*mut Mass, Real, Real);
    dMassSetCylinderTotal: fn(*mut Mass, Real, c_int, Real, Real);
    dCreateBox: fn(Ptr, Real, Real, Real) -> Ptr;
    dCreateSphere: fn(Ptr, Real) -> Ptr;
    dCreateCylinder: fn(Ptr, Real, Real) -> Ptr;
    dGeomSetBody: fn(Ptr, Ptr);
    dGeomGetBody: fn(Ptr) -> Ptr;
    dGeomSetPosition: fn(Ptr, Real, Real, Real);
    dGeomSetQuaternion: fn(Ptr, *const Real);
    dGeomSetData: fn(Ptr, Ptr);
    dGeomGetData: fn(Ptr) -> Ptr;
    dCollide: fn(Ptr, Ptr, c_int, *mut ContactGeom, c_int) -> c_int;
    dJointCreateContact: fn(Ptr, Ptr, *const Contact) -> Ptr;
    dJointCreateHinge2: fn(Ptr, Ptr) -> Ptr;
    dJointCreateFixed: fn(Ptr, Ptr) -> Ptr;
    dJointAttach: fn(Ptr, Ptr, Ptr);
    dJointSetFixed: fn(Ptr);
    dJointSetHinge2Anchor: fn(Ptr, Real, Real, Real);
    dJointSetHinge2Axes: fn(Ptr, *const Real, *const Real);
    dJointSetHinge2Param: fn(Ptr, c_int, Real);
    dAreConnectedExcluding: fn(Ptr, Ptr, c_int) -> c_int;
}

/// The names tried, newest first.
const LIBRARIES: [&str; 3] = ["libode.so.8", "libode.so", "libode.so.6"];

impl Api {
    /// Loads libode and checks that it is the double-precision build; `Err` says why not.
    pub fn load() -> Result<&'static Api, String> {
        // `$SIMROB_ODE_LIB`, when set, is the only place looked.
        let explicit = std::env::var_os("SIMROB_ODE_LIB")
            .filter(|p| !p.is_empty())
            .map(|p| p.to_string_lossy().into_owned());
        let names = match &explicit {
            Some(path) => vec![path.clone()],
            None => LIBRARIES.map(String::from).to_vec(),
        };
        let (handle, _) = open_first(names).map_err(|why| match &explicit {
            Some(path) => format!(
                "SIMROB_ODE_LIB is set to {path:?}, which does not load ({}); when set it is \
                 the only place ODE's library is looked for: set it to libode.so's path, or \
                 unset it",
                if why.is_empty() {
                    "no such library".to_string()
                } else {
                    why.join("; ")
                }
            ),
            None => "libode (the Open Dynamics Engine) is not installed; on Debian or Ubuntu: \
                     apt-get install libode-dev"
                .to_string(),
        })?;
        // SAFETY: a live handle of libode, whose functions have the signatures declared above
        // in ODE 0.16's headers.
        let api = unsafe { Api::resolve(handle)? };
        // SAFETY: plain C calls with valid arguments.
        unsafe {
            (api.dInitODE2)(0);
            if (api.dCheckConfiguration)(c"ODE_double_precision".as_ptr()) == 0 {
                return Err("libode is not the double-precision build this harness expects".into());
            }
        }
        // The library stays loaded for the life of the process.
        Ok(Box::leak(Box::new(api)))
    }
}

/// Which ODE stepper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stepper {
    /// `dWorldStep`: the exact (Dantzig LCP) solver.
    Step,
    /// `dWorldQuickStep` with this many iterations.
    Quick(i32),
}

/// A geom's user data: its material and whether it is a wheel (wheels never collide with
/// wheels), packed in the pointer-sized `dGeomSetData` slot.
fn geom_tag(material: u32, wheel: bool) -> Ptr {
    ((material as usize) << 1 | wheel as usize) as Ptr
}

fn untag(p: Ptr) -> (u32, bool) {
    let v = p as usize;
    ((v >> 1) as u32, v & 1 == 1)
}

/// One body of the scene and where it came from.
pub struct OdeBody {
    pub entity: u32,
    pub body_id: u32,
    body: Ptr,
}

/// The SimRob scene in ODE.
pub struct OdeScene {
    api: &'static Api,
    world: Ptr,
    space: Ptr,
    contacts: Ptr,
    pub bodies: Vec<OdeBody>,
    /// `(entity, wheel joint id, joint)`.
    wheels: Vec<(u32, u32, Ptr)>,
    pairs: Vec<((u32, u32), Interaction)>,
    default_pair: Interaction,
    stepper: Stepper,
    timestep: Real,
}

/// Pose and velocity of an ODE body (simrob's conventions: quaternion `[x, y, z, w]`).
pub struct OdeState {
    pub position: [f64; 3],
    pub orientation: [f64; 4],
    pub linear_velocity: [f64; 3],
}

impl OdeScene {
    /// An empty world with SimRob's parameters: gravity −9.8 along Z, global ERP 0.2 and CFM 1e-5.
    pub fn new(
        api: &'static Api,
        stepper: Stepper,
        interactions: &[Interaction],
        default_pair: Interaction,
    ) -> OdeScene {
        // SAFETY: plain C constructors.
        let (world, space, contacts) = unsafe {
            let w = (api.dWorldCreate)();
            (api.dWorldSetGravity)(w, 0.0, 0.0, -9.8);
            (api.dWorldSetERP)(w, 0.2);
            (api.dWorldSetCFM)(w, 1e-5);
            if let Stepper::Quick(n) = stepper {
                (api.dWorldSetQuickStepNumIterations)(w, n);
            }
            (
                w,
                (api.dHashSpaceCreate)(std::ptr::null_mut()),
                (api.dJointGroupCreate)(0),
            )
        };
        let key = |a: u32, b: u32| (a.min(b), a.max(b));
        OdeScene {
            api,
            world,
            space,
            contacts,
            bodies: Vec::new(),
            wheels: Vec::new(),
            pairs: interactions
                .iter()
                .map(|i| (key(i.material_1.0, i.material_2.0), i.clone()))
                .collect(),
            default_pair,
            stepper,
            timestep: 0.01,
        }
    }

    /// Adds an entity (robot, field or ball) as SimRob builds it.
    pub fn add(&mut self, spec: &EntitySpec) {
        let a = self.api;
        let entity = spec.entity_id().0;
        let (bodies, joints) = spec.structure();
        let mut made: Vec<(u32, Ptr, [f64; 3])> = Vec::new();
        for b in bodies.iter() {
            let q = euler_to_quat(b.rotation);
            let q_ode = [q[3], q[0], q[1], q[2]];
            let material = b.material.map_or(0, |m| m.0);
            let mass = b.mass.unwrap_or(1.0);
            // Static bodies (mass −1) get a geom and no body; masses only for the others (a
            // placeholder of 1 kg for the static ones, never used). Earlier versions gave every
            // body at least 1 kg: the SumBot's 0.1 kg wheels and the 0.6 kg ball weighed 1 kg in
            // ODE.
            let total = if mass > 0.0 { mass } else { 1.0 };
            // SAFETY: valid world/space handles; sizes and masses are positive and finite
            // (`Scene::check` in main.rs refuses other scenario files before any scene is built;
            // the crowd's floor is a positive box).
            unsafe {
                let mut m = Mass {
                    mass: 0.0,
                    c: [0.0; 4],
                    i: [0.0; 12],
                };
                let (geom, wheel) = match b.shape {
                    Shape::Sphere { radius } => {
                        (a.dMassSetSphereTotal)(&mut m, total, radius);
                        ((a.dCreateSphere)(self.space, radius), false)
                    }
                    Shape::Box { size } => {
                        (a.dMassSetBoxTotal)(&mut m, total, size[0], size[1], size[2]);
                        ((a.dCreateBox)(self.space, size[0], size[1], size[2]), false)
                    }
                    Shape::Cylinder { radius, length } => {
                        (a.dMassSetCylinderTotal)(&mut m, total, 3, radius, length);
                        ((a.dCreateCylinder)(self.space, radius, length), false)
                    }
                    Shape::WheelCylinder { radius, length } => {
                        (a.dMassSetCylinderTotal)(&mut m, total, 3, radius, length);
                        ((a.dCreateSphere)(self.space, radius), true)
                    }
                };
                (a.dGeomSetData)(geom, geom_tag(material, wheel));
                let p = b.position;
                let body = if mass > 0.0 {
                    let body = (a.dBodyCreate)(self.world);
                    // `total` is `mass` here.
                    (a.dBodySetMass)(body, &m);
                    (a.dBodySetPosition)(body, p[0], p[1], p[2]);
                    (a.dBodySetQuaternion)(body, q_ode.as_ptr());
                    (a.dGeomSetBody)(geom, body);
                    self.bodies.push(OdeBody {
                        entity,
                        body_id: b.id,
                        body,
                    });
                    body
                } else {
                    (a.dGeomSetPosition)(geom, p[0], p[1], p[2]);
                    (a.dGeomSetQuaternion)(geom, q_ode.as_ptr());
                    std::ptr::null_mut()
                };
                made.push((b.id, body, p));
            }
        }
        let find = |id: u32| made.iter().find(|(i, _, _)| *i == id).map(|m| (m.1, m.2));
        for j in joints {
            match j {
                JointSpec::Fixed { body_1, body_2, .. } => {
                    if let (Some((b1, _)), Some((b2, _))) = (find(*body_1), find(*body_2)) {
                        // SAFETY: two bodies of this world.
                        unsafe {
                            let joint = (a.dJointCreateFixed)(self.world, std::ptr::null_mut());
                            (a.dJointAttach)(joint, b1, b2);
                            (a.dJointSetFixed)(joint);
                        }
                    }
                }
                JointSpec::Wheel {
                    id,
                    body_1,
                    body_2,
                    axis_1,
                    axis_2,
                    hardness,
                    bounciness,
                    maximum_torque,
                } => {
                    let (Some((b1, _)), Some((b2, anchor))) = (find(*body_1), find(*body_2)) else {
                        continue;
                    };
                    let ax1 = [axis_1[0], axis_1[1], axis_1[2], 0.0];
                    let ax2 = [axis_2[0], axis_2[1], axis_2[2], 0.0];
                    // SAFETY: two bodies of this world; axes are 4-element dVector3s.
                    unsafe {
                        let joint = (a.dJointCreateHinge2)(self.world, std::ptr::null_mut());
                        (a.dJointAttach)(joint, b1, b2);
                        (a.dJointSetHinge2Anchor)(joint, anchor[0], anchor[1], anchor[2]);
                        (a.dJointSetHinge2Axes)(joint, ax1.as_ptr(), ax2.as_ptr());
                        (a.dJointSetHinge2Param)(joint, PARAM_LO_STOP, 0.0);
                        (a.dJointSetHinge2Param)(joint, PARAM_HI_STOP, 0.0);
                        let p = |k, v| (a.dJointSetHinge2Param)(joint, k, v);
                        p(PARAM_SUSPENSION_ERP, bounciness.unwrap_or(0.9));
                        p(PARAM_SUSPENSION_CFM, hardness.unwrap_or(0.001));
                        p(PARAM_FMAX2, maximum_torque.unwrap_or(10.0));
                        p(PARAM_VEL2, 0.0);
                        self.wheels.push((entity, *id, joint));
                    }
                }
            }
        }
    }

    /// Sets a wheel joint's motor target (rad/s, ODE's sign as in SimRob).
    pub fn set_motor(&mut self, entity: u32, wheel_joint: u32, velocity: f64) {
        for (e, id, joint) in &self.wheels {
            if *e == entity && *id == wheel_joint {
                // SAFETY: a hinge2 joint of this world.
                unsafe { (self.api.dJointSetHinge2Param)(*joint, PARAM_VEL2, velocity) };
            }
        }
    }

    /// One step: collisions, contact joints, the stepper, then the contacts are dropped.
    pub fn step(&mut self) {
        let this: *mut OdeScene = self;
        // SAFETY: `near` only reads the scene through `this` while `dSpaceCollide` runs, and
        // the scene outlives the call.
        unsafe {
            (self.api.dSpaceCollide)(self.space, this as Ptr, near);
            match self.stepper {
                Stepper::Step => (self.api.dWorldStep)(self.world, self.timestep),
                Stepper::Quick(_) => (self.api.dWorldQuickStep)(self.world, self.timestep),
            };
            (self.api.dJointGroupEmpty)(self.contacts);
        }
    }

    /// Sets the linear and angular velocity of body `body_id` of `entity`.
    pub fn set_velocity(&mut self, entity: u32, body_id: u32, linear: [f64; 3], angular: [f64; 3]) {
        if let Some(b) = self
            .bodies
            .iter()
            .find(|b| b.entity == entity && b.body_id == body_id)
        {
            // SAFETY: a body of this world.
            unsafe {
                (self.api.dBodySetLinearVel)(b.body, linear[0], linear[1], linear[2]);
                (self.api.dBodySetAngularVel)(b.body, angular[0], angular[1], angular[2]);
            }
        }
    }

    /// State of body `body_id` of `entity`.
    pub fn state(&self, entity: u32, body_id: u32) -> Option<OdeState> {
        let b = self
            .bodies
            .iter()
            .find(|b| b.entity == entity && b.body_id == body_id)?;
        // SAFETY: ODE returns pointers to 3 (position, velocity) and 4 (quaternion) reals that
        // live as long as the body.
        unsafe {
            let p = std::slice::from_raw_parts((self.api.dBodyGetPosition)(b.body), 3);
            let q = std::slice::from_raw_parts((self.api.dBodyGetQuaternion)(b.body), 4);
            let v = std::slice::from_raw_parts((self.api.dBodyGetLinearVel)(b.body), 3);
            Some(OdeState {
                position: [p[0], p[1], p[2]],
                orientation: [q[1], q[2], q[3], q[0]],
                linear_velocity: [v[0], v[1], v[2]],
            })
        }
    }

    fn interaction(&self, m1: u32, m2: u32) -> &Interaction {
        let key = (m1.min(m2), m1.max(m2));
        self.pairs
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, i)| i)
            .unwrap_or(&self.default_pair)
    }
}

impl Drop for OdeScene {
    fn drop(&mut self) {
        // SAFETY: handles created in `new`, destroyed once.
        unsafe {
            (self.api.dJointGroupDestroy)(self.contacts);
            (self.api.dSpaceDestroy)(self.space);
            (self.api.dWorldDestroy)(self.world);
        }
    }
}

/// `dSpaceCollide`'s callback: contact joints for a pair of geoms, as SimRob creates them.
unsafe extern "C" fn near(data: Ptr, o1: Ptr, o2: Ptr) {
    // SAFETY: `data` is the `OdeScene` passed by `OdeScene::step`.
    let scene = unsafe { &*(data as *const OdeScene) };
    let a = scene.api;
    // SAFETY: geoms of this scene's space; contact buffers sized for MAX_CONTACTS.
    unsafe {
        let (b1, b2) = ((a.dGeomGetBody)(o1), (a.dGeomGetBody)(o2));
        if b1.is_null() && b2.is_null() {
            return;
        }
        if !b1.is_null()
            && !b2.is_null()
            && (a.dAreConnectedExcluding)(b1, b2, JOINT_TYPE_CONTACT) != 0
        {
            return;
        }
        let ((m1, wheel1), (m2, wheel2)) =
            (untag((a.dGeomGetData)(o1)), untag((a.dGeomGetData)(o2)));
        if wheel1 && wheel2 {
            return;
        }
        let i = scene.interaction(m1, m2).contact;
        let surface = Surface {
            mode: CONTACT_SOFT_ERP
                | CONTACT_SOFT_CFM
                | CONTACT_SLIP1
                | CONTACT_SLIP2
                | CONTACT_APPROX1,
            mu: i.friction,
            mu2: 0.0,
            rho: 0.0,
            rho2: 0.0,
            rho_n: 0.0,
            bounce: 0.0,
            bounce_vel: 0.0,
            soft_erp: i.bounciness,
            soft_cfm: i.hardness * mapping::CONTACT_CFM_SCALE,
            motion1: 0.0,
            motion2: 0.0,
            motion_n: 0.0,
            slip1: i.slip1 * mapping::SLIP_SCALE,
            slip2: i.slip2 * mapping::SLIP_SCALE,
        };
        let empty = ContactGeom {
            pos: [0.0; 4],
            normal: [0.0; 4],
            depth: 0.0,
            g1: std::ptr::null_mut(),
            g2: std::ptr::null_mut(),
            side1: 0,
            side2: 0,
        };
        let mut contacts = [Contact {
            surface,
            geom: empty,
            fdir1: [0.0; 4],
        }; MAX_CONTACTS];
        let n = (a.dCollide)(
            o1,
            o2,
            MAX_CONTACTS as c_int,
            &mut contacts[0].geom,
            std::mem::size_of::<Contact>() as c_int,
        );
        for c in contacts.iter().take(n.max(0) as usize) {
            let joint = (a.dJointCreateContact)(scene.world, scene.contacts, c);
            (a.dJointAttach)(joint, b1, b2);
        }
    }
}
