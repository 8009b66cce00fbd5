//! # simrob-physics
//!
//! The generic physics interface of simrob (SimRob manual §7.1) and its rapier3d backend.
//!
//! The world crate talks only to [`PhysicsBackend`]: it adds bodies and joints described by
//! plain data ([`BodyDesc`], [`JointDesc`]), sets motor targets, steps, reads body states and
//! casts rays. The engine is replaceable: implement the trait for another engine and the world
//! does not change. [`RapierBackend`] is the implementation shipped with simrob.
//!
//! ## Units, frames and conventions
//! SI units, a right-handed frame with **Z up**, gravity along Z. Orientations cross this API as
//! unit quaternions `[x, y, z, w]`; [`euler_to_quat`] / [`quat_to_euler`] convert from/to the
//! protocol's Euler angles (`R = Rz·Ry·Rx`, extrinsic X then Y then Z).
//!
//! Cylinders (and wheel cylinders) are aligned with their body's **local Z axis**, as in ODE:
//! the SimRob manual's SumBot wheels are rotated by π/2 about X so that their axis lies along Y.
//!
//! ## Mapping ODE's contact and joint parameters
//! The SimRob manual was written against ODE and describes contacts and joints with ODE's
//! parameters. This crate maps them as follows (see [`mapping`] for the formulas and their tests):
//!
//! * **ERP/CFM → spring.** ODE's error-reduction parameter `ERP` and constraint-force mixing
//!   `CFM` at step `h` are a spring–damper with stiffness `k = ERP / (h·CFM)` and damping
//!   `c = (1 − ERP) / CFM` per unit of effective mass. rapier describes constraint softness by a
//!   natural frequency `ω = √k` and damping ratio `ζ = c / (2ω)`; with these, rapier's own ERP
//!   `hω / (hω + 2ζ)` equals ODE's exactly. World Hardness/Bounciness (global CFM/ERP) set the
//!   softness of every joint's locked axes.
//! * **Contacts.** Each material pair's Hardness and Bounciness make the pair's spring as
//!   above, with Hardness (CFM) scaled by [`mapping::CONTACT_CFM_SCALE`] = 0.01: taken
//!   literally, the SimRob manual's Hardness 0.15 is a 400 N/m spring that lets the ball sink
//!   through the floor (measured with ODE on the SimRob manual's scene). ODE's CFM is absolute, so
//!   with the scale the SimRob manual's pairs are springs of 40–160 kN/m: a SumBot wheel carrying 7
//!   N sinks 0.1 mm. The solver therefore holds contacts nearly rigid (error reduction 0.91 per
//!   step, almost no force mixing); the pair's Friction is its Coulomb coefficient, and the
//!   pair's ERP and CFM give its **bounce**, both applied per contact through rapier's contact
//!   modification hook. The solver's soft contacts of earlier versions (one mass-normalised spring
//!   for the whole world) let the SumBot sink 1.7 mm and, worse, left a residual sinking velocity
//!   after every step that the friction pass turned into creep: an idle SumBot turned 21° a minute.
//! * **Bounce as in ODE.** The SimRob simulator creates its contacts without `dContactBounce`:
//!   an ODE ball bounces because ODE finds a contact only once the bodies overlap and its
//!   contact asks for the normal velocity `ERP·depth/h` that corrects a share ERP of the overlap
//!   in a step, softened by CFM — and nothing takes that velocity back. A ball rolled at 1.5 m/s
//!   into a wall comes back at 0.1–0.9 m/s depending on how deep it was when first found
//!   (between nothing and a step's travel). Each new contact here gets the restitution that
//!   sends its bodies apart as fast as ODE's would from the same depth, closing speed, ERP, CFM
//!   and masses ([`mapping::ode_rebound`]; a contact still apart is met as ODE would meet it a
//!   step later); bodies that meet slower than 0.1 m/s do not bounce. On the step it bounces a
//!   contact also moves its bodies as ODE's does: they leave still overlapping, a step at the
//!   rebound speed, and are not pushed out of the overlap first (so a ball lands the second
//!   time as deep as ODE's, and bounces as high). Bodies are not swept (no continuous
//!   collision detection) and may turn as fast as they like, as in ODE: rapier's
//!   sweeping stopped a rolling ball where it first touched a wall without the overlap, and its
//!   cap on turning (79 rad/s at dt 0.01) kept a ball from rolling faster than 2.4 m/s.
//!   `simrob-odebench`'s wall and drop table: the ball's rebound within 8 % of ODE's from 0.5 to
//!   3 m/s, and its first and second bounces within 6 % of ODE's dropped from 0.1–1 m
//!   (averaged over where in a step it lands). ODE's force-dependent slip lets a spinning ball
//!   keep about half its spin through a wall, and so does simrob's (see **Slip**).
//! * **Slip.** ODE's force-dependent slip (`v_slip = slip · F_tangent`) is approximated by a
//!   reduction of the pair's friction coefficient, `μ_eff = μ / (1 + s)` with
//!   `s = 10 · SLIP_SCALE · (slip1 + slip2) / 2` and `SLIP_SCALE` = 0.1 (the SimRob manual's Slip
//!   0.1 lowers μ by 9 %). The approximation keeps the ordering "more slip ⇒ more sliding" without
//!   a velocity-level model; see [`mapping::slip_friction`]. Between two moving bodies (robot
//!   and robot, robot and ball), and against what does not move off the vertical (a wall, a
//!   post), the slip also bounds the friction as ODE's does. A contact that carried a load `N`
//!   the step before, sliding at speed `v`, carries at most `v / slip` of friction (`slip` =
//!   the pair's mean Slip × `SLIP_SCALE`, m/s per N): a coefficient `v / (slip · N)`. Without
//!   it a wheel held at 3–5 rad/s by its 10 N·m motor against another robot's side drove
//!   itself up it: `simrob-odebench`'s 16 random layouts of 22 SumBots tipped 10 robots in
//!   the default mode, ODE dWorldStep none; with it, 1 (none in 32 layouts since the next
//!   rule). A new contact (no load yet: a ball meeting a wall) is met as ODE solves it, the
//!   slip with the impact: the step ends still sliding at `slip` times the friction, a friction
//!   impulse `m_t·v / (1 + m_t·slip/h)` against a normal impulse `m_n·(1 + e)·closing speed`
//!   (`m_t`, `m_n`: the bodies' effective masses along the slide and the normal). A ball rolled
//!   into a wall keeps about half its spin (ODE at 1.5 m/s: 42–56 %), where the pair's friction
//!   alone left it a tenth. On the floor a body stands on (a normal within 45° of the
//!   vertical, against what does not move) the coefficient stays as above, and a wheel there
//!   slides as ODE's force-dependent slip lets it: at `slip` m/s per newton of the friction
//!   its contact carries, asked of the contact as a surface velocity worked out from the step
//!   before (one step of Newton's method on `s = slip · F`, with the contact's last friction
//!   and the slide the bodies have now, which holds steady). A SumBot driving straight at
//!   3 rad/s goes 0.94 ω·r (ODE: 0.93; 1.00 without the slip), and a SumBot pushing the ball
//!   holds its speed as ODE's does: without the slip its wheels swung against their motors
//!   and the robot surged, as ODE's does with the slip taken out (`simrob-odebench`).
//! * **WheelJoint = ODE Hinge2.** Axis 2 is the wheel axis: a velocity motor with at most
//!   `Maximum_Torque`; positive targets follow ODE's sign (the rate is body 1's angular velocity
//!   minus body 2's about axis 2, so on the SimRob manual's SumBot a positive speed drives it
//!   towards −X). The wheel cannot steer (rotation about axis 1 and the third axis locked — SimRob
//!   has no steering command), and the suspension along axis 1 is held as rigidly as the other
//!   locked axes: the joint's Hardness/Bounciness are checked and saved but not simulated. The
//!   SimRob manual's suspension (CFM 0.001, ERP 0.9) is a 90 kN/m spring that deflects 0.1 mm under
//!   a SumBot; solved as a spring motor it left a residual fore-aft velocity every step that made
//!   an idle SumBot turn. From 128 wheel joints on (64 SumBots), each is two rapier joints between
//!   the same frames, one locking the five axes, the other only driving the wheel axis: rapier
//!   solves joints without a motor four at a time (SIMD) when it has enough of them (100
//!   SumBots: a tenth fewer instructions a step); below, one joint each costs less.
//! * **Boxes on a face.** A box touching only one face of a much larger box (a chassis on the
//!   floor box, against a wall) gets its contacts from that face's plane: the same points,
//!   distances and normal as the general box–box test, found from the small box's vertices
//!   alone (22 SumBots: 9 % fewer instructions a step in the default mode, 15 % in fast mode).
//!   Near an edge or a corner of the large box, the general test decides. A ball (a wheel, the
//!   soccer ball) and a box get rapier's own ball–convex contact, called on the two shapes'
//!   types instead of through the shape-pair dispatch: the same contact, 0.3 k fewer
//!   instructions a wheel a step.
//! * **WheelCylinder** collides as a sphere of the wheel's radius (inertia of the cylinder) and
//!   never with another WheelCylinder. Bodies joined by a joint never collide with each other.
//! * **Solver.** Each step is solved as ODE integrates it, once per step (velocity, then
//!   position with the new velocity: a ball falling for 0.5 s drops ½g·t·(t + h), 2 % more than
//!   ½g·t², in ODE as here), with five solver passes and two without position correction
//!   (**fast mode**: two and two; with three and one, friction solved once a step, a SumBot
//!   driving in circles wandered off its circle: `simrob-odebench`'s one-SumBot table),
//!   rapier's simplified friction (one friction constraint per
//!   contact patch plus a twist constraint), and rapier's length unit set to 0.1 m, the size of
//!   the things simulated: its contact prediction distance (2 mm) and broad-phase margins (4 mm)
//!   scale with it, so robots a few centimetres apart are not all candidate pairs; speed limits
//!   and rest thresholds stay in absolute units. Three substeps of one pass each (earlier
//!   versions) cost a third more for a free fall closer to ½g·t² than ODE's.
//! * **Fast mode: wheels as driven surfaces.** In fast mode a wheel joined to its chassis by a
//!   WheelJoint with a motor (Maximum_Torque > 0) is no longer a body of its own: the wheel's
//!   shape and mass become part of the chassis (one rigid body per two-wheeled robot), and the
//!   wheel's contacts move its surface at the motor's target rate, `ω × (p − centre)`, like a
//!   conveyor belt, so the ground pushes the robot as a wheel turning at that rate would. The
//!   wheel's pose and velocity are still reported (the chassis' pose turned by the wheel's
//!   angle, integrated at the target rate), with the same body and joint indices; setting a
//!   driven wheel's state sets its angle only. What fast mode does not simulate: the wheel's
//!   own inertia (the wheel reaches its target at once), the motor's torque limit (the ground
//!   transmits what friction allows, μ·load, which for the SimRob manual's SumBot is about 0.12 N·m
//!   against its 10 N·m motors) and the wheel's play about the locked axes. The surface moves
//!   only against bodies that do not move (the field): against another robot or the ball a
//!   driven wheel is a plain surface, since a hard surface speed against another robot's side
//!   (moving up or down there) made the wheel climb it and tipped robots over. Wheels whose
//!   motor has no torque (free wheels), wheels held by a second joint, and wheels that are not
//!   spheres or WheelCylinders keep their body and joint. Leaving fast mode gives every wheel
//!   its body back where and as fast as it was turning. A robot whose driven wheels have a
//!   target other than 0 is never put to rest (it may be pushing against a wall).
//! * **Rest.** A body whose speed stays below 1 mm/s and 0.01 rad/s for 2 s, together with
//!   everything it touches or is jointed to, is put to rest (rapier's sleeping) until something
//!   touches it, one of its motors is set or it is moved; ODE's solver holds such bodies still by
//!   itself, rapier's iterative one leaves them creeping by a few millimetres a minute.
//! * **Threads.** A step runs on the calling thread. With the crate's `parallel` feature
//!   (off by default), [`RapierBackend::set_threads`] runs each step of that world on a
//!   pool of its own (rapier's parallel step: broad phase, narrow phase and solver, rayon);
//!   the run is the same bit for bit whatever the number of threads (rapier's solver
//!   colours constraints so that work done in parallel never touches the same body; tested
//!   on 300 SumBots pushing each other at 1, 2 and 3 threads). 1,000 SumBots: both cores
//!   share the work evenly (`docs/benchmarks.md`). The feature is off by default because
//!   even on one thread rapier's parallel parts cost a tenth more instructions at one
//!   SumBot (55.7 k → 60.7 k a step in the default mode).
//! * **Precision.** rapier computes in `f32`. Values cross this API as `f64` holding exactly
//!   the engine's `f32` values, so the shortest text that reads back to one is that of the
//!   `f32` (what the protocol crate prints).
#![warn(missing_docs)]

mod face_contacts;
pub mod mapping;
mod rapier_backend;

pub use rapier_backend::{RapierBackend, MAX_THREADS, PARALLEL};

/// A 3-vector in f64.
pub type Vec3 = [f64; 3];
/// A unit quaternion `[x, y, z, w]`.
pub type Quat = [f64; 4];

pub use simrob_protocol::{Contact, MaterialId, Shape};

/// Index of a body inside a backend: dense, in order of creation (not the body id an entity
/// gives its body on the wire).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[repr(transparent)]
#[serde(transparent)]
pub struct BodyId(pub u32);

/// Index of a joint inside a backend: dense, in order of creation (not the joint id an entity
/// gives its joint on the wire).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[repr(transparent)]
#[serde(transparent)]
pub struct JointId(pub u32);

impl BodyId {
    /// The position in the backend's body list.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl JointId {
    /// The position in the backend's joint list.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for BodyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::fmt::Display for JointId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Everything needed to create one rigid body.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BodyDesc {
    /// The collision shape (sizes in metres); it also sets the inertia.
    pub shape: Shape,
    /// kg; any negative value (the protocol's −1) makes the body static (infinite mass).
    pub mass: f64,
    /// Material id used to pick the interaction of a colliding pair.
    pub material: MaterialId,
    /// The centre's position in world coordinates, metres.
    pub position: Vec3,
    /// The orientation in world coordinates, a unit quaternion.
    pub orientation: Quat,
}

/// A joint between two bodies of the same backend.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum JointDesc {
    /// Keeps the bodies' relative pose as it is when the joint is created.
    Fixed {
        /// The first body.
        body_1: BodyId,
        /// The second body.
        body_2: BodyId,
    },
    /// ODE Hinge2 (see the crate docs). Axes in world coordinates at creation time; the anchor
    /// is body 2's centre (the wheel).
    Wheel {
        /// The chassis.
        body_1: BodyId,
        /// The wheel; the anchor is its centre.
        body_2: BodyId,
        /// The suspension (steering) axis, world coordinates; rotation about it is locked.
        axis_1: Vec3,
        /// The wheel axis, world coordinates: the motor drives rotation about it.
        axis_2: Vec3,
        /// The joint's Hardness (CFM); checked and saved, not simulated.
        hardness: f64,
        /// The joint's Bounciness (ERP); checked and saved, not simulated.
        bounciness: f64,
        /// The motor's most torque, N·m (`Maximum_Torque`); 0 = a free wheel.
        max_torque: f64,
    },
}

impl JointDesc {
    /// The two bodies it joins.
    pub fn bodies(&self) -> (BodyId, BodyId) {
        match *self {
            JointDesc::Fixed { body_1, body_2 } | JointDesc::Wheel { body_1, body_2, .. } => {
                (body_1, body_2)
            }
        }
    }

    /// The same joint between other bodies: `f` maps each of its two.
    pub fn with_bodies(mut self, f: impl Fn(BodyId) -> BodyId) -> JointDesc {
        match &mut self {
            JointDesc::Fixed { body_1, body_2 } | JointDesc::Wheel { body_1, body_2, .. } => {
                *body_1 = f(*body_1);
                *body_2 = f(*body_2);
            }
        }
        self
    }
}

/// World-wide simulation parameters.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StepParams {
    /// Seconds per physics step.
    pub timestep: f64,
    /// m/s² along Z (−9.8 pulls down).
    pub gravity: f64,
    /// Global CFM (ODE), applied to joints.
    pub world_hardness: f64,
    /// Global ERP (ODE), applied to joints.
    pub world_bounciness: f64,
    /// Faster, less exact solver.
    pub fast_mode: bool,
    /// The interaction used for a pair of materials that has none registered.
    pub default_interaction: Contact,
}

impl Default for StepParams {
    fn default() -> Self {
        StepParams {
            timestep: 0.01,
            gravity: -9.8,
            world_hardness: 1e-5,
            world_bounciness: 0.2,
            fast_mode: false,
            default_interaction: Contact::DEFAULT,
        }
    }
}

/// Kinematic state of a body.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BodyState {
    /// The centre's position in world coordinates, metres.
    pub position: Vec3,
    /// The orientation in world coordinates, a unit quaternion.
    pub orientation: Quat,
    /// The centre's velocity in world coordinates, m/s.
    pub linear_velocity: Vec3,
    /// The angular velocity in world coordinates, rad/s.
    pub angular_velocity: Vec3,
}

impl BodyState {
    /// Whether every number of it (pose and velocities) is finite.
    pub fn is_finite(&self) -> bool {
        self.position
            .iter()
            .chain(&self.orientation)
            .chain(&self.linear_velocity)
            .chain(&self.angular_velocity)
            .all(|x| x.is_finite())
    }
}

/// The first body a ray meets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RayHit {
    /// The body hit.
    pub body: BodyId,
    /// Distance from the ray origin along the (normalised) direction, metres.
    pub distance: f64,
    /// Outward surface normal at the hit point.
    pub normal: Vec3,
}

/// What a backend can refuse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PhysicsError {
    /// No body has this index in the backend.
    #[error("no body with index {0}")]
    NoSuchBody(BodyId),
    /// No joint has this index in the backend.
    #[error("no joint with index {0}")]
    NoSuchJoint(JointId),
    /// A motor command for a joint that is not a wheel joint.
    #[error("joint {0} is not a wheel joint and has no motor")]
    NotAWheelJoint(JointId),
    /// A value the backend cannot take: a non-finite pose, a zero quaternion, zero or parallel
    /// wheel axes… (says which).
    #[error("invalid value: {0}")]
    Invalid(String),
    /// Exported engine state that does not decode or does not hold together.
    #[error("corrupt physics state: {0}")]
    CorruptState(String),
}

/// The generic physics interface (SimRob manual §7.1). One implementation per engine.
pub trait PhysicsBackend {
    /// Adds a rigid body; returns its index.
    fn add_body(&mut self, desc: &BodyDesc) -> Result<BodyId, PhysicsError>;
    /// Adds a joint between two existing bodies; returns its index.
    fn add_joint(&mut self, desc: &JointDesc) -> Result<JointId, PhysicsError>;
    /// Removes every body and joint added after the first `bodies` bodies and `joints` joints
    /// (used to undo a partially created entity).
    fn truncate(&mut self, bodies: usize, joints: usize);
    /// Number of bodies.
    fn body_count(&self) -> usize;
    /// Number of joints.
    fn joint_count(&self) -> usize;
    /// Replaces the per-material-pair interactions (unordered pairs).
    fn set_interactions(&mut self, pairs: &[((MaterialId, MaterialId), Contact)]);
    /// Sets the world parameters.
    fn set_params(&mut self, params: &StepParams) -> Result<(), PhysicsError>;
    /// The world parameters.
    fn params(&self) -> StepParams;
    /// Sets a wheel joint's motor target angular velocity (rad/s, ODE sign).
    fn set_motor_velocity(&mut self, joint: JointId, velocity: f64) -> Result<(), PhysicsError>;
    /// The motor target of a wheel joint.
    fn motor_velocity(&self, joint: JointId) -> Result<f64, PhysicsError>;
    /// Advances the world by one timestep.
    fn step(&mut self);
    /// Runs each step on `threads` threads (at least 1). The step's result is the same
    /// whatever the number: only the order in which independent work is done changes. The
    /// setting belongs to the backend, not to its state: importing a state keeps it.
    fn set_threads(&mut self, threads: usize) -> Result<(), PhysicsError>;
    /// Threads a step runs on ([`PhysicsBackend::set_threads`]).
    fn threads(&self) -> usize;
    /// Kinematic state of a body.
    fn body_state(&self, body: BodyId) -> Result<BodyState, PhysicsError>;
    /// A body's pose (position, orientation): the pose of [`PhysicsBackend::body_state`],
    /// without its velocities.
    fn body_pose(&self, body: BodyId) -> Result<(Vec3, Quat), PhysicsError> {
        self.body_state(body).map(|s| (s.position, s.orientation))
    }
    /// Notes every body's pose where it is finite, for [`PhysicsBackend::last_finite_pose`]: a
    /// body whose pose is not finite keeps the pose noted before. The notes are the
    /// backend's own, not part of its state: loading a state keeps them.
    fn note_finite_poses(&mut self);
    /// The [`PhysicsBackend::body_pose`] of `body` at the last
    /// [`PhysicsBackend::note_finite_poses`] at which it was finite; `None` if it never was.
    fn last_finite_pose(&self, body: BodyId) -> Option<(Vec3, Quat)>;
    /// Appends to `out`, in index order, every body whose [`PhysicsBackend::body_state`] is not
    /// finite ([`BodyState::is_finite`]), without building the states of the others.
    fn non_finite_bodies(&self, out: &mut Vec<BodyId>) {
        non_finite_states(self, out);
    }
    /// Teleports a body (pose and velocities).
    fn set_body_state(&mut self, body: BodyId, state: &BodyState) -> Result<(), PhysicsError>;
    /// Casts a ray; `direction` need not be normalised. Bodies in `exclude` are ignored.
    /// Scene queries see the world as of the last [`PhysicsBackend::step`].
    fn cast_ray(
        &self,
        origin: Vec3,
        direction: Vec3,
        max_distance: f64,
        exclude: &[BodyId],
    ) -> Option<RayHit>;
    /// The complete engine state (bodies, joints, contacts, solver warm starts, parameters,
    /// interactions), such that `import_state` on any backend of the same kind continues the
    /// simulation exactly.
    fn export_state(&self) -> Vec<u8>;
    /// Replaces the whole state with one from [`PhysicsBackend::export_state`]. On error the
    /// backend is unchanged.
    fn import_state(&mut self, bytes: &[u8]) -> Result<(), PhysicsError>;
}

/// [`PhysicsBackend::non_finite_bodies`] from each body's [`PhysicsBackend::body_state`].
fn non_finite_states<B: PhysicsBackend + ?Sized>(backend: &B, out: &mut Vec<BodyId>) {
    for i in 0..backend.body_count() {
        let body = BodyId(i as u32);
        if backend.body_state(body).is_ok_and(|s| !s.is_finite()) {
            out.push(body);
        }
    }
}

/// Converts Euler angles (radians, `R = Rz(z)·Ry(y)·Rx(x)`) to a unit quaternion.
pub fn euler_to_quat(e: Vec3) -> Quat {
    let (sx, cx) = (e[0] * 0.5).sin_cos();
    let (sy, cy) = (e[1] * 0.5).sin_cos();
    let (sz, cz) = (e[2] * 0.5).sin_cos();
    // q = qz * qy * qx
    [
        sx * cy * cz - cx * sy * sz,
        cx * sy * cz + sx * cy * sz,
        cx * cy * sz - sx * sy * cz,
        cx * cy * cz + sx * sy * sz,
    ]
}

/// Converts a unit quaternion to Euler angles (inverse of [`euler_to_quat`]); `y` in
/// [−π/2, π/2].
pub fn quat_to_euler(q: Quat) -> Vec3 {
    let [x, y, z, w] = q;
    let m20 = 2.0 * (x * z - w * y);
    let m21 = 2.0 * (y * z + w * x);
    let m22 = 1.0 - 2.0 * (x * x + y * y);
    let m10 = 2.0 * (x * y + w * z);
    let m00 = 1.0 - 2.0 * (y * y + z * z);
    let pitch = (-m20).clamp(-1.0, 1.0).asin();
    if m20.abs() > 0.999_999 {
        // Gimbal lock: put all yaw into z.
        let m01 = 2.0 * (x * y - w * z);
        let m11 = 1.0 - 2.0 * (x * x + z * z);
        return [0.0, pitch, (-m01).atan2(m11)];
    }
    [m21.atan2(m22), pitch, m10.atan2(m00)]
}

/// Rotates vector `v` by unit quaternion `q`.
pub fn rotate(q: Quat, v: Vec3) -> Vec3 {
    let [x, y, z, w] = q;
    // t = 2 * cross(q.xyz, v)
    let t = [
        2.0 * (y * v[2] - z * v[1]),
        2.0 * (z * v[0] - x * v[2]),
        2.0 * (x * v[1] - y * v[0]),
    ];
    [
        v[0] + w * t[0] + (y * t[2] - z * t[1]),
        v[1] + w * t[1] + (z * t[0] - x * t[2]),
        v[2] + w * t[2] + (x * t[1] - y * t[0]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Vec3, b: Vec3) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn euler_round_trip() {
        for e in [
            [0.0, 0.0, 0.0],
            [1.2, 0.0, 0.0],
            [0.3, -0.4, 2.9],
            [-1.28877, -1.38333, 2.94624],
        ] {
            assert!(close(quat_to_euler(euler_to_quat(e)), e), "{e:?}");
        }
    }

    #[test]
    fn euler_convention_is_extrinsic_xyz() {
        // Rx(90°) then Rz(90°): the body's Z axis goes to world −Y by Rx, Rz keeps −Y ... rotated
        // to +X.
        let q = euler_to_quat([
            std::f64::consts::FRAC_PI_2,
            0.0,
            std::f64::consts::FRAC_PI_2,
        ]);
        assert!(close(rotate(q, [0.0, 0.0, 1.0]), [1.0, 0.0, 0.0]));
        // Rx alone takes Z to −Y (ODE cylinders of the SumBot wheels lie along Y).
        let q = euler_to_quat([std::f64::consts::FRAC_PI_2, 0.0, 0.0]);
        assert!(close(rotate(q, [0.0, 0.0, 1.0]), [0.0, -1.0, 0.0]));
    }
}
