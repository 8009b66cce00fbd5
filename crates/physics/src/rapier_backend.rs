//! [`PhysicsBackend`] on rapier3d.

use std::sync::atomic::{AtomicBool, Ordering};

use rapier3d::geometry::NEW_CONTACT_BIT;
use rapier3d::parry::mass_properties::MassProperties;
use rapier3d::prelude::*;
use serde::{Deserialize, Serialize};
use simrob_protocol::MaterialId;

use crate::face_contacts::FaceContacts;
use crate::mapping::{
    ode_impact_friction, ode_rebound, ode_spring, slip_friction, Impact, CONTACT_CFM_SCALE,
    SLIP_SCALE,
};
use crate::{
    BodyDesc, BodyId, BodyState, Contact, JointDesc, JointId, PhysicsBackend, PhysicsError, RayHit,
    Shape, StepParams, Vec3,
};
use rapier3d::parry::query::{DefaultQueryDispatcher, QueryDispatcher};

/// Collision group of ordinary bodies.
const GROUP_BODY: Group = Group::GROUP_1;
/// Collision group of wheel cylinders (never collide with each other).
const GROUP_WHEEL: Group = Group::GROUP_2;
/// Damping gain of the wheel velocity motors (N·m·s/rad): large enough that the motor behaves
/// as ODE's velocity constraint, bounded by the joint's maximum torque.
const MOTOR_GAIN: f32 = 1.0e4;
/// `h·ω` of the solver's contact constraint: an error reduction of 0.91 per step with almost no
/// constraint-force mixing (see [`rigid_contact`]).
const RIGID_CONTACT_H_OMEGA: f64 = 20.0;
/// A body whose speed stays below this (m/s) ...
const SLEEP_LINEAR: f32 = 0.001;
/// ... and whose rotation rate stays below this (rad/s) ...
const SLEEP_ANGULAR: f32 = 0.01;
/// ... for this long (s), together with every body it touches or is jointed to, is at rest:
/// the engine stops moving it until something touches it, a joint's motor changes or it is
/// moved. Far below anything a robot or a rolling ball does (1 mm/s, 0.6°/s).
const SLEEP_AFTER: f32 = 2.0;
/// Solver substeps per step in the default and in the fast mode: one, as ODE (velocity, then
/// position with the new velocity, once per step); contacts and joints are set up once a step.
const SUBSTEPS: usize = 1;
const FAST_SUBSTEPS: usize = 1;
/// Solver passes within the substep. Five settle a jointed SumBot to rest as six did (no turn,
/// no drift in an idle minute); four leave it rocking (0.03° and 0.25 mm a minute), two or
/// three let it creep 3–6 mm a minute. Fast mode's SumBots are one body each (driven wheels):
/// two passes, with two passes without position correction after them
/// ([`FAST_STABILIZATION_PASSES`]), settle them (no turn, no drift; 1.000 ω·r before the
/// wheels slipped on the floor, 0.940 since), drive them straight on equal wheel speeds (no
/// yaw in 10 s) and keep SumBots driving in circles among
/// each other on their wheels (`simrob-odebench`'s 32 random layouts of 22, a simulated minute
/// each: no flips). With one pass without correction after them two passes turned a SumBot
/// driving straight 12° in 10 s; one pass (with two without correction) tipped SumBots over
/// in nearly every random layout.
const PASSES: usize = 5;
const FAST_PASSES: usize = 2;
/// Passes without position correction after them, where friction is solved: two in both
/// modes. With one, fast mode (then with three passes before it; 43.2 k instructions a step at
/// one SumBot against 45.4 k now) let a SumBot driving in circles wander off its circle: its
/// centre moved 166 mm in 500 s, where ODE QuickStep's moves 12–14 mm and the default mode's 7,
/// until it met a wall; with two it moves 16 mm (`simrob-odebench`'s one-SumBot table).
/// Friction solved in the passes with correction too (rapier's `friction_in_bias_pass`, one
/// pass and one: 41.3 k) held the circle as well, but a chassis dragging an edge on the floor
/// rocks on it (`simrob-physics`' fast-mode wheel test).
const STABILIZATION_PASSES: usize = 2;
const FAST_STABILIZATION_PASSES: usize = 2;
/// The size of the things simulated (m): SumBots, balls and wheels are centimetres across.
/// rapier scales its tolerances by it — contact prediction distance 2 mm, the broad phase's
/// margin 4 mm — so a crowd of robots 15 cm apart is not a crowd of candidate pairs.
const LENGTH_UNIT: f32 = 0.1;
/// From this many wheel joints (with their bodies, outside fast mode) on, each wheel joint is
/// two rapier joints, the five locked axes and the motor. rapier solves joints without a motor
/// four at a time (SIMD) when one colour of its joint graph holds 64 of them (a robot's wheels
/// share their chassis, so never a colour): 100 SumBots take a tenth fewer instructions a step.
/// Below, the second joint's set-up costs more than SIMD saves (22 SumBots: 4 % more).
const SPLIT_MOTORS_FROM: usize = 128;
/// Bodies that meet slower than this (m/s) do not bounce: what ODE would send back is at most
/// 6 cm/s (0.2 mm high), and a robot rocking on a new contact point of its chassis would
/// chatter. (ODE's own `bounce_vel`, had the SimRob simulator used `dContactBounce`.)
const BOUNCE_MIN_SPEED: f32 = 0.1;
/// Contacts push penetrating bodies apart at most this fast (m/s), whatever [`LENGTH_UNIT`].
const MAX_CORRECTIVE_VELOCITY: f32 = 3.0;
/// Most threads a step may run on ([`RapierBackend::set_threads`]).
pub const MAX_THREADS: usize = 256;
/// Whether this build can step on more than one thread (the crate's `parallel` feature).
pub const PARALLEL: bool = cfg!(feature = "parallel");
/// No body moves faster than this (m/s), whatever [`LENGTH_UNIT`].
const MAX_LINEAR_VELOCITY: f32 = 400.0;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct BodyEntry {
    handle: RigidBodyHandle,
    desc: BodyDesc,
    /// Index into [`State::driven`] when this body is a wheel driven as a surface of its chassis.
    driven: Option<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct JointEntry {
    handle: ImpulseJointHandle,
    /// A wheel joint's motor when it is a joint of its own, between the same frames, that only
    /// drives the wheel axis (see [`SPLIT_MOTORS_FROM`]).
    motor: Option<ImpulseJointHandle>,
    desc: JointDesc,
    motor_target: f64,
    /// Index into [`State::driven`] when the joint's wheel is driven as a surface of its chassis.
    driven: Option<usize>,
}

/// A wheel that, in fast mode, is a driven contact surface of its chassis: the wheel's body and
/// joint are disabled, a collider of the wheel's shape and mass sits on the chassis where the
/// joint frame is (its local X the wheel axis), and contacts with it move its surface at the
/// wheel's rate (see [`MaterialHooks`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct DrivenWheel {
    joint: JointId,
    chassis: BodyId,
    wheel: BodyId,
    /// The collider on the chassis.
    collider: ColliderHandle,
    /// The wheel body's pose in the joint frame at angle 0.
    wheel_in_frame: Pose,
    /// The wheel's angle about the axis, integrated at its rate (rad).
    angle: f64,
}

/// A pose noted by [`PhysicsBackend::note_finite_poses`]: a rigid body's, or what a driven
/// wheel's is made of (its chassis's noted pose, its frame on the chassis, its angle), so that
/// noting costs no trigonometry and the wheel's pose is built only when asked for.
#[derive(Debug, Clone, Copy)]
enum Noted {
    Body(Pose),
    Wheel {
        chassis: usize,
        frame_on_chassis: Pose,
        wheel_in_frame: Pose,
        angle: f64,
    },
}

/// A body that [`PhysicsBackend::note_finite_poses`] notes at every call: its index, and its
/// rigid body or its driven wheel.
#[derive(Debug, Clone, Copy)]
enum ToNote {
    Body(usize, RigidBodyHandle),
    /// A wheel noted with its frame: only its angle changes.
    Wheel(usize, usize),
    /// A wheel not noted when every body was (no frame, or an angle that is not finite).
    WheelAgain(usize, usize),
}

/// Everything that is saved by `export_state`.
#[derive(Serialize, Deserialize)]
struct State {
    world: PhysicsWorld,
    bodies: Vec<BodyEntry>,
    joints: Vec<JointEntry>,
    params: StepParams,
    interactions: Vec<((MaterialId, MaterialId), Contact)>,
    /// Wheels driven as contact surfaces (fast mode).
    driven: Vec<DrivenWheel>,
    /// The wheels (driven surfaces in fast mode, motors as joints of their own from
    /// [`SPLIT_MOTORS_FROM`] on) must be reconciled with the mode and the joints before the
    /// next step.
    wheels_dirty: bool,
}

/// Friction and ODE contact parameters of a material pair, precomputed for the contact hook.
#[derive(Debug, Clone, Copy)]
struct PairCoefficients {
    friction: f32,
    /// ODE's contact ERP (the pair's Bounciness).
    erp: f32,
    /// ODE's contact CFM (the pair's Hardness × [`crate::mapping::CONTACT_CFM_SCALE`]).
    cfm: f32,
    /// ODE's force-dependent slip (m/s per N): the pair's mean Slip1/Slip2 ×
    /// [`crate::mapping::SLIP_SCALE`], as the SimRob simulator gives ODE.
    slip: f32,
}

impl PairCoefficients {
    fn of(i: &Contact) -> Self {
        PairCoefficients {
            friction: slip_friction(i.friction, i.slip1, i.slip2) as f32,
            erp: i.bounciness.clamp(0.0, 1.0) as f32,
            cfm: (i.hardness.max(0.0) * CONTACT_CFM_SCALE) as f32,
            slip: (0.5 * (i.slip1.max(0.0) + i.slip2.max(0.0)) * SLIP_SCALE) as f32,
        }
    }
}

/// The inverse mass of a contact's body (0: fixed, or no body).
fn inverse_mass(rb: Option<&RigidBody>) -> f32 {
    match rb {
        Some(rb) if rb.is_dynamic() && rb.mass() > 0.0 => 1.0 / rb.mass(),
        _ => 0.0,
    }
}

/// The restitution that makes a manifold's bodies leave as fast as ODE's soft contact would
/// send them apart ([`ode_rebound`]): from its deepest point, the speed at which the two bodies
/// close there, and the pair's ERP and CFM. rapier applies it only to a contact that is new
/// (that bore no load the step before) and that is pushed this step, once, after the solver's
/// passes; resting and rolling contacts are not new. At most [`MAX_RESTITUTION`]: a body that
/// closes slowly on a deep overlap does not leave faster than it came.
fn ode_restitution(
    m: &ModifiableManifold,
    rb1: Option<&RigidBody>,
    rb2: Option<&RigidBody>,
    coeffs: &PairCoefficients,
    h: f32,
    gravity: Vector,
) -> f32 {
    // rapier bounces only contacts that are new, unless the restitution is 1 or more: below
    // that, what a manifold without a new contact gets does not matter (most manifolds: a
    // wheel rolling, a box resting), and is not worked out.
    if coeffs.erp < 1.0
        && m.solver_contacts
            .iter()
            .all(|c| c.contact_id[0] & NEW_CONTACT_BIT == 0)
    {
        return 0.0;
    }
    let Some(deepest) = m
        .solver_contacts
        .iter()
        .min_by(|a, b| a.dist.total_cmp(&b.dist))
    else {
        return 0.0;
    };
    let approach = relative_velocity(deepest, rb1, rb2).dot(*m.normal);
    if approach < BOUNCE_MIN_SPEED {
        return 0.0;
    }
    let closing = approach + step_gravity(gravity, *m.normal, rb1, rb2, h);
    let rebound = ode_rebound(
        f64::from(coeffs.erp),
        f64::from(coeffs.cfm),
        f64::from(h),
        f64::from(inverse_mass(rb1) + inverse_mass(rb2)),
        f64::from(deepest.dist),
        f64::from(closing.max(0.0)),
    ) as f32;
    // rapier sends the contact back at the restitution times the approach it had before the
    // step's gravity; ODE's rebound is the speed after it.
    (rebound / approach).clamp(0.0, MAX_RESTITUTION)
}

/// The first body's velocity relative to the second's at a solver contact (a missing body
/// stands still).
fn relative_velocity(
    c: &SolverContact,
    rb1: Option<&RigidBody>,
    rb2: Option<&RigidBody>,
) -> Vector {
    let v1 = rb1.map_or(Vector::ZERO, |rb| rb.velocity_at_point(c.anchor1));
    let v2 = rb2.map_or(Vector::ZERO, |rb| rb.velocity_at_point(c.anchor2));
    v1 - v2
}

/// How much faster two bodies close along `normal` (from the first to the second) once a
/// step's gravity has acted on them. ODE applies gravity before it moves the bodies: a
/// falling ball meets the floor a step's gravity faster than it fell.
fn step_gravity(
    gravity: Vector,
    normal: Vector,
    rb1: Option<&RigidBody>,
    rb2: Option<&RigidBody>,
    h: f32,
) -> f32 {
    let falls = |rb: Option<&RigidBody>| f32::from(u8::from(moves(rb)));
    h * gravity.dot(normal) * (falls(rb1) - falls(rb2))
}

/// The most restitution a contact is given: rapier bounces a contact with a restitution of 1
/// or more on every step, not only on the step it is met.
const MAX_RESTITUTION: f32 = 0.99;

/// A bouncing contact moves its bodies on the step it is met as ODE's does (`gravity`: see
/// [`step_gravity`]).
///
/// ODE's bounce is its position correction (see [`ode_restitution`]): the step that meets the
/// contact sends the body back at the rebound speed and moves it a step at that speed, still
/// overlapping; the contact then lets it go. rapier would also push the body out of the
/// overlap by its own correction (up to [`MAX_CORRECTIVE_VELOCITY`] for a step, nine tenths of
/// the overlap) before the bounce sets its velocity: the ball left the floor from higher than
/// ODE's, came down on it less deep and bounced lower the second time (dropped from 1 m, its
/// second bounce was a third of ODE's). So each overlapping point's overlap is made shallow
/// enough that rapier's correction moves the bodies apart at the point's rebound speed.
///
/// A point not yet overlapping (rapier meets contacts a little before the bodies touch; ODE
/// only once they overlap) would stop the bodies where they touch. ODE lets them fall into the
/// overlap for a step (`closing`: the approach with the step's gravity), then sends them back a
/// step at the rebound speed; here that happens in the one step, a step early: the point's gap
/// is widened to let the bodies through to where ODE's would be after its bounce.
fn bounce_as_in_ode(
    m: &mut ModifiableManifold,
    rb1: Option<&RigidBody>,
    rb2: Option<&RigidBody>,
    restitution: f32,
    gravity: f32,
    h: f32,
) {
    let erp_inv_dt = rigid_contact(f64::from(h)).erp_inv_dt(h);
    if erp_inv_dt.is_nan() || erp_inv_dt <= 0.0 {
        return;
    }
    let normal = *m.normal;
    for c in m.solver_contacts.iter_mut() {
        let approach = relative_velocity(c, rb1, rb2).dot(normal);
        let rebound = restitution * approach;
        if rebound.is_nan() || rebound <= 0.0 {
            // Not closing: rapier's correction as for any other contact.
            continue;
        }
        c.dist = if c.dist < 0.0 {
            c.dist.max(-rebound / erp_inv_dt)
        } else {
            c.dist.max((approach + gravity - rebound) * h)
        };
    }
}

/// A contact against what does not move whose normal is this close to the vertical (the
/// cosine of the angle between them; the world's Z is up) carries a body's weight (the floor
/// under a robot or the ball): its friction is the pair's own, not bounded by the slip (see
/// [`slipping_friction`]).
const SUPPORT_NORMAL_COS: f32 = 0.7;

/// Whether a contact's slip bounds its friction ([`slipping_friction`]): between two moving
/// bodies (robot and robot, robot and ball), and against what does not move off the vertical
/// (a wall, a goal post); not on the floor a body stands on, so that a SumBot rests and drives
/// as with the pair's friction alone.
fn slip_bounded(normal: Vector, rb1: Option<&RigidBody>, rb2: Option<&RigidBody>) -> bool {
    match (moves(rb1), moves(rb2)) {
        (true, true) => true,
        (false, false) => false,
        _ => normal.z.abs() < SUPPORT_NORMAL_COS,
    }
}

/// The inverse of a body's effective mass along `dir` at the world point `at` (0: fixed).
fn inverse_effective_mass(rb: Option<&RigidBody>, at: Vector, dir: Vector) -> f32 {
    match rb {
        Some(rb) if rb.is_dynamic() => {
            let mp = rb.mass_properties();
            let arm = (at - mp.world_com).cross(dir);
            let inv_inertia = mp.local_mprops.world_inv_inertia(rb.rotation());
            inverse_mass(Some(rb)) + arm.dot(inv_inertia * arm)
        }
        _ => 0.0,
    }
}

/// The friction coefficient of a contact under ODE's force-dependent slip: ODE lets a contact
/// slide at `slip` m/s per newton of friction it carries.
///
/// * A contact that carried a load the step before (its normal impulses over `h`) carries at
///   most `speed / slip` of friction at the speed its surfaces slide past each other: as a
///   coefficient, over that load.
/// * A contact that carried none (it is new: a ball meeting a wall) is met as ODE meets it,
///   in one step, with the slip solved together with the impact: the step ends with the
///   surfaces still sliding at `slip` times the friction, so a friction impulse of
///   `m_t·v / (1 + m_t·slip/h)` (`m_t` the bodies' effective mass along the slide, `v` its
///   speed), against a normal impulse of `m_n·(1 + e)·closing speed`, ODE's with the
///   rebound. A ball rolled into a wall keeps about half its spin through it, as ODE's does;
///   with the pair's friction alone the wall took it all, and the ball rolled away up to five
///   times as fast as ODE's a second later (`simrob-odebench`'s wall table). rapier limits
///   the friction by the normal impulse of its passes, which leave the rebound for after
///   them, so the ball gets `1 + e` times less friction than the impulse above: it keeps
///   0.49 of its spin where the formula gives 0.39. Without the rebound in the normal impulse
///   it keeps 0.39, and its roll a second after the wall is 30 % below ODE's at 0.5 m/s and
///   146 % above at 3 m/s (with it: −42 % and +88 %, and within 20 % at 1.5–2 m/s).
///
/// The pair's own coefficient is the other bound.
fn slipping_friction(
    m: &ModifiableManifold,
    rb1: Option<&RigidBody>,
    rb2: Option<&RigidBody>,
    coeffs: &PairCoefficients,
    h: f32,
    restitution: f32,
) -> f32 {
    if coeffs.slip <= 0.0 {
        return coeffs.friction;
    }
    let load = per_second(m, h, |d| d.impulse);
    let Some((c, v, slide)) = slide_at_first(m, rb1, rb2) else {
        return coeffs.friction;
    };
    let normal = *m.normal;
    let sliding = slide.length();
    if load > 0.0 {
        return coeffs.friction.min(sliding / coeffs.slip / load);
    }
    let closing = v.dot(normal);
    if !(closing > 0.0 && sliding > 0.0) {
        return coeffs.friction;
    }
    let inverse = |dir: Vector| {
        inverse_effective_mass(rb1, c.anchor1, dir) + inverse_effective_mass(rb2, c.anchor2, dir)
    };
    let impact = Impact {
        sliding: f64::from(sliding),
        inv_mass_along: f64::from(inverse(slide / sliding)),
        closing: f64::from(closing),
        inv_mass_normal: f64::from(inverse(normal)),
        restitution: f64::from(restitution),
    };
    ode_impact_friction(
        f64::from(coeffs.friction),
        f64::from(coeffs.slip),
        f64::from(h),
        &impact,
    ) as f32
}

/// Whether a collider is a wheel's (a WheelCylinder's sphere, on the wheel's own body or, in
/// fast mode, as a driven surface of its chassis).
fn is_wheel(c: &Collider) -> bool {
    c.collision_groups().memberships.contains(GROUP_WHEEL)
}

/// What a manifold's contacts carried the step before (`of` each one's impulses), summed over
/// its points and divided by the step `h`: a force.
fn per_second<T>(m: &ModifiableManifold, h: f32, of: impl Fn(&ContactData) -> T) -> T
where
    T: std::iter::Sum + std::ops::Div<f32, Output = T>,
{
    m.manifold.points.iter().map(|p| of(&p.data)).sum::<T>() / h
}

/// At a manifold's first solver contact: the contact, the first body's velocity relative to
/// the second's there (with the first body's surface velocity the contact already asks for:
/// none before [`drive_surface`]), and its part along the contact's plane, the slide.
fn slide_at_first(
    m: &ModifiableManifold,
    rb1: Option<&RigidBody>,
    rb2: Option<&RigidBody>,
) -> Option<(SolverContact, Vector, Vector)> {
    let c = *m.solver_contacts.first()?;
    let normal = *m.normal;
    let v = relative_velocity(&c, rb1, rb2) + c.tangent_velocity;
    Some((c, v, v - normal * v.dot(normal)))
}

/// ODE's force-dependent slip at a wheel on the floor it stands on: the wheel's surface slides
/// over the floor at `slip` m/s per newton of the friction the contact carries, as ODE's
/// contact (friction with a constraint-force mixing of `slip`) lets it. rapier's friction does
/// not slip, so each step the contact is asked to slide by `s`, as a surface velocity of the
/// first body ([`drive_surface`]'s convention: the contact asks `v₁ − v₂ = −s` along the
/// floor, on top of a driven surface's own speed). ODE solves the slide with the friction; here
/// it is worked out from the step before, as one step of Newton's method on `s = slip · F`
/// with the friction `F` the contact kept for its warm start
/// and the slide `σ` the bodies have now: `s = (slip · F + g · σ) / (1 + g)`, `g = slip · m / h`.
/// That holds `s = slip · F` once steady and does not swing as long as `m` is at least the
/// bodies' effective mass at the contact along the friction, so `m` is their reduced mass,
/// which is never less (a slide worked out from the force alone, `g = 0`, swings and grows
/// from an effective `g` near 1/2 on: a fast-mode SumBot is one body of 1.4 kg). A wheel that
/// pulls or brakes slides by that much (a SumBot driving straight at 3 rad/s goes 0.94 ω·r,
/// ODE's 0.93), and the slide takes up the swings of a driven wheel against its motor that a
/// wheel held without slip keeps up (`simrob-odebench`'s robot pushing the ball). Only between
/// a wheel and what does not move, with a normal within 45° of the vertical: elsewhere the slip
/// bounds the friction ([`slip_bounded`]).
fn slip_on_floor(
    m: &mut ModifiableManifold,
    rb1: Option<&RigidBody>,
    rb2: Option<&RigidBody>,
    slip: f32,
    h: f32,
) {
    let force = per_second(m, h, |d| d.warmstart_tangent_world);
    let Some((_, _, slide)) = slide_at_first(m, rb1, rb2) else {
        return;
    };
    let sigma = -slide;
    let inverse = inverse_mass(rb1) + inverse_mass(rb2);
    let g = if inverse > 0.0 {
        slip / (inverse * h)
    } else {
        0.0
    };
    let s = (force * slip + sigma * g) / (1.0 + g);
    if !s.is_finite() || s == Vector::ZERO {
        return;
    }
    for sc in m.solver_contacts.iter_mut() {
        sc.tangent_velocity += s;
    }
}

/// Applies per-material-pair friction and restitution to every contact.
struct MaterialHooks {
    /// The timestep (s).
    h: f32,
    /// The world's gravity (m/s²).
    gravity: Vector,
    /// Sorted by pair, one entry a pair: a binary search costs a fraction of a hashed lookup,
    /// and the hook runs for every contact pair every step.
    pairs: Vec<((MaterialId, MaterialId), PairCoefficients)>,
    default: PairCoefficients,
}

fn pair_key(a: MaterialId, b: MaterialId) -> (MaterialId, MaterialId) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

fn material_of(c: &Collider) -> MaterialId {
    MaterialId((c.user_data & 0xffff_ffff) as u32)
}

fn body_of(c: &Collider) -> BodyId {
    BodyId(((c.user_data >> 32) & 0xffff_ffff) as u32)
}

/// Bit of a collider's user data that marks a driven wheel surface; bits 64–95 hold its rate.
const DRIVEN_BIT: u128 = 1 << 96;

/// The rate (rad/s, about the collider's local X, relative to its body) of a driven wheel
/// surface.
fn driven_rate(c: &Collider) -> Option<f32> {
    (c.user_data & DRIVEN_BIT != 0).then(|| f32::from_bits((c.user_data >> 64) as u32))
}

fn with_rate(user_data: u128, rate: f32) -> u128 {
    (user_data & 0xffff_ffff_ffff_ffff) | DRIVEN_BIT | (u128::from(rate.to_bits()) << 64)
}

/// Whether a contact's other body can move (a dynamic body).
fn moves(rb: Option<&RigidBody>) -> bool {
    rb.is_some_and(|b| b.is_dynamic())
}

/// Sets the tangent velocity of the contacts of a driven wheel surface: the surface point at a
/// contact moves at `ω × (p − centre)` relative to the body carrying it, and the contact asks
/// the bodies' relative velocity there to make up for it (a conveyor belt). Only against
/// bodies that do not move: the surface's speed is a hard target (no wheel inertia, no torque
/// limit, the whole chassis as its lever), and against the side of another robot, where the
/// wheel's surface moves up or down, it made the wheel climb it and tipped robots over
/// (`simrob-odebench`'s random layouts: 4 of 176 SumBots in eight layouts, none since).
fn drive_surface(m: &mut ModifiableManifold, c: &Collider, rate: f32, first: bool) {
    let pose = c.position();
    let omega = pose.rotation * Vector::X * rate;
    for sc in m.solver_contacts.iter_mut() {
        let p = if first { sc.anchor1 } else { sc.anchor2 };
        let v = omega.cross(p - pose.translation);
        if first {
            sc.tangent_velocity += v;
        } else {
            sc.tangent_velocity -= v;
        }
    }
}

impl PhysicsHooks for MaterialHooks {
    fn modify_solver_contacts(&self, context: &mut ContactModificationContext) {
        let (Some(c1), Some(c2)) = (
            context.colliders.get(context.collider1),
            context.colliders.get(context.collider2),
        ) else {
            return;
        };
        let key = pair_key(material_of(c1), material_of(c2));
        let coeffs = self
            .pairs
            .binary_search_by_key(&key, |(k, _)| *k)
            .map_or(self.default, |i| self.pairs[i].1);
        let rb1 = context.rigid_body1.and_then(|b| context.bodies.get(b));
        let rb2 = context.rigid_body2.and_then(|b| context.bodies.get(b));
        let h = self.h;
        if let Some(m) = context.rigid_mut() {
            let restitution = ode_restitution(m, rb1, rb2, &coeffs, h, self.gravity);
            *m.restitution = restitution;
            if restitution > 0.0 {
                let gravity = step_gravity(self.gravity, *m.normal, rb1, rb2, h);
                bounce_as_in_ode(m, rb1, rb2, restitution, gravity, h);
            }
            *m.friction = if slip_bounded(*m.normal, rb1, rb2) {
                slipping_friction(m, rb1, rb2, &coeffs, h, restitution)
            } else {
                coeffs.friction
            };
            // A driven wheel rolls on what does not move (the field); against another robot
            // or the ball it is a plain surface (see `drive_surface`).
            if let Some(rate) = driven_rate(c1).filter(|_| !moves(rb2)) {
                drive_surface(m, c1, rate, true);
            }
            if let Some(rate) = driven_rate(c2).filter(|_| !moves(rb1)) {
                drive_surface(m, c2, rate, false);
            }
            let on_floor = moves(rb1) != moves(rb2) && m.normal.z.abs() >= SUPPORT_NORMAL_COS;
            if on_floor && coeffs.slip > 0.0 && (is_wheel(c1) || is_wheel(c2)) {
                slip_on_floor(m, rb1, rb2, coeffs.slip, h);
            }
        }
    }
}

/// The rapier3d implementation of [`PhysicsBackend`].
pub struct RapierBackend {
    state: State,
    hooks: MaterialHooks,
    /// What [`PhysicsBackend::note_finite_poses`] noted, by body index (not part of a saved
    /// state: a file's readable poses are noted before its engine state is loaded).
    noted: Vec<Option<Noted>>,
    /// The fixed bodies' poses in `noted` still hold: no fixed body was added, removed, moved
    /// or loaded since (a step never moves one).
    fixed_noted: bool,
    /// The bodies [`PhysicsBackend::note_finite_poses`] notes again while `fixed_noted` holds
    /// (every body but the fixed ones noted finite), listed when it last noted every body.
    to_note: Vec<ToNote>,
    /// Every fixed body was found finite by [`PhysicsBackend::non_finite_bodies`] and no state
    /// was loaded since.
    fixed_finite: AtomicBool,
    /// Every body that is not in `to_note` (the fixed ones, and the disabled bodies of driven
    /// wheels, which no step moves) was found finite by [`PhysicsBackend::non_finite_bodies`]
    /// since `to_note` was listed: while `fixed_noted` holds, only `to_note`'s are checked.
    others_finite: AtomicBool,
    /// Threads a step runs on ([`RapierBackend::set_threads`]; not part of a saved state).
    threads: usize,
}

impl Default for RapierBackend {
    fn default() -> Self {
        Self::new(StepParams::default())
    }
}

fn v3(v: Vec3) -> Vector {
    Vector::new(v[0] as f32, v[1] as f32, v[2] as f32)
}

fn from_v3(v: Vector) -> Vec3 {
    [v.x as f64, v.y as f64, v.z as f64]
}

fn finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

fn pose_of(position: Vec3, q: crate::Quat) -> Result<Pose, PhysicsError> {
    if !finite(&position) || !finite(&q) {
        return Err(PhysicsError::Invalid("non-finite pose".into()));
    }
    let n = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
    if n < 1e-9 {
        return Err(PhysicsError::Invalid("zero quaternion".into()));
    }
    let rot = Rotation::from_xyzw(
        (q[0] / n) as f32,
        (q[1] / n) as f32,
        (q[2] / n) as f32,
        (q[3] / n) as f32,
    );
    Ok(Pose::from_parts(v3(position), rot))
}

fn positive(name: &str, v: f64) -> Result<f32, PhysicsError> {
    if v.is_finite() && v > 0.0 {
        Ok(v as f32)
    } else {
        Err(PhysicsError::Invalid(format!(
            "{name} must be a positive number, got {v}"
        )))
    }
}

/// The rapier collider of a body description (shape, mass, groups), without material data.
fn collider_for(desc: &BodyDesc) -> Result<ColliderBuilder, PhysicsError> {
    // Cylinders lie along the body's local Z; rapier's lie along local Y: rotate by +90° about X.
    let y_to_z = Vector::new(std::f32::consts::FRAC_PI_2, 0.0, 0.0);
    let builder = match desc.shape {
        Shape::Sphere { radius } => ColliderBuilder::ball(positive("Radius", radius)?),
        Shape::Box { size } => ColliderBuilder::cuboid(
            positive("Size_X", size[0])? * 0.5,
            positive("Size_Y", size[1])? * 0.5,
            positive("Size_Z", size[2])? * 0.5,
        ),
        Shape::Cylinder { radius, length } => ColliderBuilder::cylinder(
            positive("Length", length)? * 0.5,
            positive("Radius", radius)?,
        )
        .rotation(y_to_z),
        Shape::WheelCylinder { radius, length } => {
            let r = positive("Radius", radius)?;
            let hh = positive("Length", length)? * 0.5;
            let b = ColliderBuilder::ball(r).collision_groups(wheel_groups());
            if desc.mass > 0.0 {
                let mut mp = MassProperties::from_cylinder(1.0, hh, r);
                mp.set_mass(desc.mass as f32, true);
                return Ok(b.mass_properties(mp.transform_by(&Pose::rotation(y_to_z))));
            }
            return Ok(b);
        }
    };
    let builder = builder.collision_groups(InteractionGroups::new(
        GROUP_BODY,
        Group::ALL,
        InteractionTestMode::And,
    ));
    Ok(if desc.mass > 0.0 {
        builder.mass(desc.mass as f32)
    } else {
        builder
    })
}

/// Joint frame of a wheel joint in world coordinates: X = wheel axis (axis 2), Y = suspension
/// axis (axis 1 made orthogonal to axis 2), Z = X × Y; origin at the wheel's centre.
fn wheel_frame(anchor: Vector, axis_1: Vec3, axis_2: Vec3) -> Result<Pose, PhysicsError> {
    let a2 = v3(axis_2);
    let a1 = v3(axis_1);
    if !finite(&axis_1) || !finite(&axis_2) || a2.length() < 1e-6 || a1.length() < 1e-6 {
        return Err(PhysicsError::Invalid(
            "wheel joint axes must be non-zero vectors".into(),
        ));
    }
    let x = a2.normalize();
    let y = a1 - x * a1.dot(x);
    if y.length() < 1e-3 * a1.length() {
        return Err(PhysicsError::Invalid(
            "wheel joint axis 1 and axis 2 must not be parallel".into(),
        ));
    }
    let y = y.normalize();
    let z = x.cross(y);
    let rot = Rotation::from_mat3(&rapier3d::glamx::Mat3::from_cols(x, y, z));
    Ok(Pose::from_parts(anchor, rot))
}

impl RapierBackend {
    /// An empty world with the given parameters.
    pub fn new(params: StepParams) -> Self {
        let mut state = State {
            world: PhysicsWorld::new(),
            bodies: Vec::new(),
            joints: Vec::new(),
            params,
            interactions: Vec::new(),
            driven: Vec::new(),
            wheels_dirty: false,
        };
        // rapier may keep a pair's contacts from a step before while the pair has hardly moved,
        // but never a pair with a contact hook, and every collider here has one (the
        // materials): the check and the state it keeps for it were work for nothing. Off, a step
        // is the same bit for bit with 0.4–0.8 % fewer instructions (fast mode, 1 and 22
        // SumBots).
        state.world.integration_parameters.contact_recycling = false;
        // Each collider's broad-phase margin follows its size (an eighth of its smallest extent)
        // rather than the length unit: fewer tree updates for the field's boxes, 2–3 % fewer
        // instructions a step; contacts are decided by the prediction distance either way.
        state.world.broad_phase.adaptive_change_detection_margin = true;
        install_contact_generation(&mut state.world);
        let hooks = MaterialHooks {
            h: params.timestep as f32,
            gravity: Vector::new(0.0, 0.0, params.gravity as f32),
            pairs: Vec::new(),
            default: PairCoefficients::of(&params.default_interaction),
        };
        let mut backend = RapierBackend {
            state,
            hooks,
            noted: Vec::new(),
            fixed_noted: false,
            to_note: Vec::new(),
            fixed_finite: AtomicBool::new(false),
            others_finite: AtomicBool::new(false),
            threads: 1,
        };
        install_thread_pool(&mut backend.state.world, 1);
        backend.apply_params();
        backend
    }

    fn rebuild_hooks(&mut self) {
        self.hooks.h = self.state.params.timestep as f32;
        self.hooks.gravity = Vector::new(0.0, 0.0, self.state.params.gravity as f32);
        self.hooks.default = PairCoefficients::of(&self.state.params.default_interaction);
        // The last interaction given for a pair wins.
        let mut pairs: Vec<_> = self
            .state
            .interactions
            .iter()
            .rev()
            .map(|((a, b), i)| (pair_key(*a, *b), PairCoefficients::of(i)))
            .collect();
        pairs.sort_by_key(|(k, _)| *k);
        pairs.dedup_by_key(|(k, _)| *k);
        self.hooks.pairs = pairs;
    }

    /// Pushes `params` into rapier: timestep, gravity, solver, softness of contacts and joints.
    fn apply_params(&mut self) {
        let p = self.state.params;
        let w = &mut self.state.world;
        w.gravity = Vector::new(0.0, 0.0, p.gravity as f32);
        let ip = &mut w.integration_parameters;
        ip.dt = p.timestep as f32;
        let soft = rigid_contact(p.timestep);
        ip.contact_softness = soft;
        ip.static_contact_softness = soft;
        (ip.num_solver_iterations, ip.num_internal_pgs_iterations) = if p.fast_mode {
            (FAST_SUBSTEPS, FAST_PASSES)
        } else {
            (SUBSTEPS, PASSES)
        };
        ip.num_internal_stabilization_iterations = if p.fast_mode {
            FAST_STABILIZATION_PASSES
        } else {
            STABILIZATION_PASSES
        };
        ip.length_unit = LENGTH_UNIT;
        ip.normalized_max_corrective_velocity = MAX_CORRECTIVE_VELOCITY / LENGTH_UNIT;
        ip.normalized_max_linear_velocity = MAX_LINEAR_VELOCITY / LENGTH_UNIT;
        ip.friction_model = FrictionModel::Simplified;
        // Friction only in the passes without position correction (see
        // `FAST_STABILIZATION_PASSES`).
        ip.friction_in_bias_pass = false;
        // No continuous collision detection, as in ODE: rapier's stops a fast body (a ball
        // rolling at 1.5 m/s sweeps its own radius in a step) where it first touches a fixed
        // body, without changing its velocity, and so without the overlap that makes it
        // rebound as ODE's does.
        ip.max_ccd_substeps = 0;
        let joint_soft = joint_softness(&p);
        for entry in &self.state.joints {
            if let Some(j) = w.impulse_joints.get_mut(entry.handle, false) {
                j.data.softness = joint_soft;
            }
        }
        self.rebuild_hooks();
    }

    fn body(&self, id: BodyId) -> Result<&BodyEntry, PhysicsError> {
        self.state
            .bodies
            .get(id.index())
            .ok_or(PhysicsError::NoSuchBody(id))
    }
}

/// Lets a body come to rest (see [`SLEEP_AFTER`]), or keeps it awake: a chassis whose driven
/// wheel surfaces turn is moving or pushing, whatever its own speed.
fn rest_thresholds(a: &mut RigidBodyActivation, can_rest: bool) {
    if can_rest {
        a.normalized_linear_threshold = SLEEP_LINEAR / LENGTH_UNIT;
        a.angular_threshold = SLEEP_ANGULAR;
    } else {
        a.normalized_linear_threshold = -1.0;
        a.angular_threshold = -1.0;
    }
    a.time_until_sleep = SLEEP_AFTER;
}

/// The radius of a wheel body that can be driven as a surface: shapes that look the same at
/// every angle about the wheel axis (a WheelCylinder collides as a sphere).
fn spin_invariant_radius(shape: &Shape) -> Option<f64> {
    match *shape {
        Shape::Sphere { radius } | Shape::WheelCylinder { radius, .. } => Some(radius),
        Shape::Box { .. } | Shape::Cylinder { .. } => None,
    }
}

/// Fast mode's driven wheels (see [`DrivenWheel`] and the crate docs).
impl RapierBackend {
    /// Whether joint `j`'s wheel can be driven as a surface of its chassis: a wheel joint with a
    /// motor, two dynamic bodies, a wheel that looks the same at every angle and that no other
    /// joint holds, a chassis that is not itself a wheel.
    fn can_drive(&self, j: usize) -> bool {
        let Some(JointDesc::Wheel {
            body_1,
            body_2,
            max_torque,
            ..
        }) = self.state.joints.get(j).map(|e| e.desc)
        else {
            return false;
        };
        let (Some(chassis), Some(wheel)) = (
            self.state.bodies.get(body_1.index()),
            self.state.bodies.get(body_2.index()),
        ) else {
            return false;
        };
        max_torque > 0.0
            && chassis.desc.mass > 0.0
            && wheel.desc.mass > 0.0
            && spin_invariant_radius(&wheel.desc.shape).is_some()
            && self.state.joints.iter().enumerate().all(|(k, e)| {
                let (a, b) = e.desc.bodies();
                k == j
                    || (a != body_2
                        && b != body_2
                        && !(b == body_1 && matches!(e.desc, JointDesc::Wheel { .. })))
            })
    }

    /// Drives every wheel that can be driven in fast mode, and gives back their bodies and
    /// joints to the wheels that cannot (or to all of them outside fast mode); then splits or
    /// joins the wheel joints' motors (see [`SPLIT_MOTORS_FROM`]).
    fn reconcile_wheels(&mut self) {
        self.fixed_noted = false;
        self.state.wheels_dirty = false;
        let fast = self.state.params.fast_mode;
        let keep: Vec<bool> = self
            .state
            .driven
            .iter()
            .map(|d| fast && self.can_drive(d.joint.index()))
            .collect();
        if keep.iter().any(|k| !k) {
            let driven = std::mem::take(&mut self.state.driven);
            for (d, keep) in driven.into_iter().zip(keep) {
                if keep {
                    self.state.driven.push(d);
                } else {
                    self.undrive(d);
                }
            }
            self.reindex_driven();
        }
        if fast {
            for j in 0..self.state.joints.len() {
                if self.state.joints[j].driven.is_none() && self.can_drive(j) {
                    self.drive(j);
                }
            }
        }
        let motors = self
            .state
            .joints
            .iter()
            .filter(|e| e.driven.is_none() && matches!(e.desc, JointDesc::Wheel { .. }))
            .count();
        let split = motors >= SPLIT_MOTORS_FROM;
        for j in 0..self.state.joints.len() {
            let e = &self.state.joints[j];
            if matches!(e.desc, JointDesc::Wheel { .. }) && e.motor.is_some() != split {
                self.split_motor(j, split);
            }
        }
    }

    /// Makes wheel joint `j`'s motor a joint of its own (`split`) or part of the joint again.
    fn split_motor(&mut self, j: usize, split: bool) {
        let entry = &mut self.state.joints[j];
        let w = &mut self.state.world;
        let Some(joint) = w.impulse_joints.get_mut(entry.handle, false) else {
            return;
        };
        let axis = JointAxis::AngX as usize;
        if split {
            let mut motor = joint.data;
            motor.locked_axes = JointAxesMask::empty();
            motor.motor_axes = JointAxesMask::ANG_X;
            joint.data.motor_axes.remove(JointAxesMask::ANG_X);
            let (b1, b2) = (joint.body1(), joint.body2());
            entry.motor = Some(w.insert_impulse_joint(b1, b2, motor));
        } else if let Some(handle) = entry.motor.take() {
            if let Some(motor) = w.remove_impulse_joint(handle) {
                if let Some(joint) = w.impulse_joints.get_mut(entry.handle, false) {
                    joint.data.motors[axis] = motor.motors[axis];
                    joint.data.motor_axes |= JointAxesMask::ANG_X;
                }
            }
        }
    }

    /// Every wheel back to its own body and joint.
    fn undrive_all(&mut self) {
        for d in std::mem::take(&mut self.state.driven) {
            self.undrive(d);
        }
        self.reindex_driven();
    }

    fn reindex_driven(&mut self) {
        for b in &mut self.state.bodies {
            b.driven = None;
        }
        for j in &mut self.state.joints {
            j.driven = None;
        }
        for (i, d) in self.state.driven.iter().enumerate() {
            self.state.bodies[d.wheel.index()].driven = Some(i);
            self.state.joints[d.joint.index()].driven = Some(i);
        }
    }

    /// Replaces joint `j`'s wheel body and joint by a driven surface on the chassis.
    fn drive(&mut self, j: usize) {
        let entry = &self.state.joints[j];
        let (chassis_id, wheel_id) = entry.desc.bodies();
        let (chassis, wheel) = (
            &self.state.bodies[chassis_id.index()],
            &self.state.bodies[wheel_id.index()],
        );
        let Some(radius) = spin_invariant_radius(&wheel.desc.shape) else {
            return;
        };
        let w = &mut self.state.world;
        let (Some(joint), Some(c), Some(b)) = (
            w.impulse_joints.get(entry.handle),
            w.bodies.get(chassis.handle),
            w.bodies.get(wheel.handle),
        ) else {
            return;
        };
        let in_wheel = joint.data.local_frame2;
        let frame = *b.position() * in_wheel;
        let wheel_in_frame = in_wheel.inverse();
        let mass = b
            .mass_properties()
            .local_mprops
            .transform_by(&wheel_in_frame);
        let collider = ColliderBuilder::ball(radius as f32)
            .position(c.position().inv_mul(&frame))
            .mass_properties(mass)
            .collision_groups(wheel_groups())
            .user_data(with_rate(
                (u128::from(wheel_id.0) << 32) | wheel.desc.material.0 as u128,
                0.0,
            ))
            .active_hooks(ActiveHooks::MODIFY_SOLVER_CONTACTS);
        let (chassis_handle, wheel_handle) = (chassis.handle, wheel.handle);
        let joints = [Some(entry.handle), entry.motor];
        let collider = w.insert_collider(collider, Some(chassis_handle));
        if let Some(b) = w.bodies.get_mut(wheel_handle) {
            b.set_enabled(false);
        }
        for handle in joints.into_iter().flatten() {
            if let Some(j) = w.impulse_joints.get_mut(handle, false) {
                j.data.set_enabled(false);
            }
        }
        let i = self.state.driven.len();
        self.state.driven.push(DrivenWheel {
            joint: JointId(j as u32),
            chassis: chassis_id,
            wheel: wheel_id,
            collider,
            wheel_in_frame,
            angle: 0.0,
        });
        self.state.bodies[wheel_id.index()].driven = Some(i);
        self.state.joints[j].driven = Some(i);
        self.set_driven_rate(i);
    }

    /// Gives a driven wheel its body (where and as fast as it was driven) and joint back.
    fn undrive(&mut self, d: DrivenWheel) {
        let state = self.derived_wheel_state(&d);
        let w = &mut self.state.world;
        w.remove_collider(d.collider);
        if let (Some(state), Some(entry)) = (state, self.state.bodies.get(d.wheel.index())) {
            if let Some(b) = w.bodies.get_mut(entry.handle) {
                b.set_enabled(true);
                if let Ok(pose) = pose_of(state.position, state.orientation) {
                    b.set_position(pose, true);
                }
                b.set_linvel(v3(state.linear_velocity), true);
                b.set_angvel(v3(state.angular_velocity), true);
            }
        }
        if let Some(entry) = self.state.joints.get(d.joint.index()) {
            for handle in [Some(entry.handle), entry.motor].into_iter().flatten() {
                if let Some(j) = w.impulse_joints.get_mut(handle, true) {
                    j.data.set_enabled(true);
                }
            }
        }
        if let Some(entry) = self.state.bodies.get(d.chassis.index()) {
            if let Some(b) = w.bodies.get_mut(entry.handle) {
                rest_thresholds(b.activation_mut(), true);
            }
        }
    }

    /// The rate of driven wheel `i` about its axis relative to the chassis, rapier's sign
    /// (ODE's rate is the chassis' minus the wheel's).
    fn driven_target(&self, i: usize) -> f64 {
        self.target_rate(self.state.driven[i].joint)
    }

    /// A wheel joint's motor target in rapier's sign.
    fn target_rate(&self, joint: JointId) -> f64 {
        self.state
            .joints
            .get(joint.index())
            .map_or(0.0, |e| -e.motor_target)
    }

    /// Passes driven wheel `i`'s motor target to its surface; its chassis rests only while all
    /// its driven wheels are at 0.
    fn set_driven_rate(&mut self, i: usize) {
        let rate = self.driven_target(i) as f32;
        let d = &self.state.driven[i];
        let chassis = d.chassis;
        if let Some(c) = self.state.world.colliders.get_mut(d.collider) {
            c.user_data = with_rate(c.user_data, rate);
        }
        let turning = self
            .state
            .driven
            .iter()
            .enumerate()
            .any(|(k, d)| d.chassis == chassis && self.driven_target(k) != 0.0);
        let handle = self.state.bodies[chassis.index()].handle;
        if let Some(b) = self.state.world.bodies.get_mut(handle) {
            rest_thresholds(b.activation_mut(), !turning);
            b.wake_up(true);
        }
    }

    /// A driven wheel's chassis, and the wheel's joint frame in the world.
    /// The engine's pose of a body of the table (a driven wheel's derived from its chassis).
    fn entry_pose(&self, entry: &BodyEntry) -> Option<Pose> {
        match entry.driven {
            Some(i) => {
                let d = &self.state.driven[i];
                self.wheel_frame(d).map(|(_, frame)| wheel_pose(d, frame))
            }
            None => self
                .state
                .world
                .bodies
                .get(entry.handle)
                .map(|rb| *rb.position()),
        }
    }

    fn wheel_frame(&self, d: &DrivenWheel) -> Option<(&RigidBody, Pose)> {
        let w = &self.state.world;
        let c = w
            .bodies
            .get(self.state.bodies.get(d.chassis.index())?.handle)?;
        Some((
            c,
            *c.position() * *w.colliders.get(d.collider)?.position_wrt_parent()?,
        ))
    }

    /// Pose and velocity of a driven wheel: its frame on the chassis turned by its angle.
    fn derived_wheel_state(&self, d: &DrivenWheel) -> Option<BodyState> {
        let (c, frame) = self.wheel_frame(d)?;
        let pose = wheel_pose(d, frame);
        let axis = frame.rotation * Vector::X;
        let rate = self.target_rate(d.joint) as f32;
        let q = pose.rotation;
        Some(BodyState {
            position: from_v3(pose.translation),
            orientation: [q.x as f64, q.y as f64, q.z as f64, q.w as f64],
            linear_velocity: from_v3(c.velocity_at_point(frame.translation)),
            angular_velocity: from_v3(c.angvel() + axis * rate),
        })
    }

    fn driven_wheel_state(&self, i: usize) -> Result<BodyState, PhysicsError> {
        let d = &self.state.driven[i];
        self.derived_wheel_state(d)
            .ok_or(PhysicsError::NoSuchBody(d.wheel))
    }

    /// What [`PhysicsBackend::note_finite_poses`] notes of driven wheel `i` (`None`: nothing,
    /// its angle is not finite or its collider has no frame).
    fn wheel_noted(&self, i: usize) -> Option<Noted> {
        let d = &self.state.driven[i];
        let frame = self
            .state
            .world
            .colliders
            .get(d.collider)
            .and_then(|c| c.position_wrt_parent())?;
        d.angle.is_finite().then_some(Noted::Wheel {
            chassis: d.chassis.index(),
            frame_on_chassis: *frame,
            wheel_in_frame: d.wheel_in_frame,
            angle: d.angle,
        })
    }

    /// Turns driven wheel `i` to the angle about its axis that `orientation` has on the chassis
    /// (a driven wheel's place is its chassis').
    fn set_driven_angle(&mut self, i: usize, orientation: crate::Quat) {
        let Ok(target) = pose_of([0.0; 3], orientation) else {
            return;
        };
        let d = &self.state.driven[i];
        let w = &self.state.world;
        let (Some(c), Some(col)) = (
            w.bodies.get(self.state.bodies[d.chassis.index()].handle),
            w.colliders.get(d.collider),
        ) else {
            return;
        };
        let Some(local) = col.position_wrt_parent() else {
            return;
        };
        let frame = c.position().rotation * local.rotation;
        let spin = frame.inverse() * target.rotation * d.wheel_in_frame.rotation.inverse();
        let angle = 2.0 * (spin.x as f64).atan2(spin.w as f64);
        self.state.driven[i].angle = angle.rem_euclid(std::f64::consts::TAU);
    }
}

/// A driven wheel's pose: its joint `frame` turned by its angle.
/// A pose as the API gives it: position and orientation `[x, y, z, w]`.
fn pose_parts(p: &Pose) -> (Vec3, crate::Quat) {
    let q = p.rotation;
    (
        from_v3(p.translation),
        [q.x as f64, q.y as f64, q.z as f64, q.w as f64],
    )
}

fn wheel_pose(d: &DrivenWheel, frame: Pose) -> Pose {
    frame * Pose::rotation(Vector::X * d.angle as f32) * d.wheel_in_frame
}

/// Whether a rigid body's pose and velocities (the `f32` values that
/// [`PhysicsBackend::body_state`] converts exactly) are surely finite: `true` only if they are,
/// `false` if one is not or they are large enough for their sum to overflow.
fn rigid_body_finite(rb: &RigidBody) -> bool {
    let p = rb.position();
    // A sum of finite values is finite unless it overflows: a non-finite sum only sends the
    // caller to its exact per-body check.
    let q = p.rotation;
    let sum = p.translation.element_sum()
        + (q.x + q.y + q.z + q.w)
        + rb.linvel().element_sum()
        + rb.angvel().element_sum();
    sum.is_finite()
}

/// Box-on-a-face contacts first, rapier's own for everything else (see [`crate::face_contacts`]),
/// and no pipeline statistics. Neither is part of a saved state: both are set again on import.
fn install_contact_generation(world: &mut PhysicsWorld) {
    world
        .narrow_phase
        .set_query_dispatcher(FaceContacts.chain(DefaultQueryDispatcher));
    // The pipeline's statistics (constraints and contacts counted every step) are never read:
    // counting them cost 3 % of a fast step at 1 SumBot.
    world.physics_pipeline.counters.disable();
}

/// Two threads or more: a pool of the world's own, `threads` threads, runs each step (the
/// calling thread waits for it). One: no pool of its own; [`on_this_thread`] runs the step.
#[cfg(feature = "parallel")]
fn install_thread_pool(world: &mut PhysicsWorld, threads: usize) {
    if threads > 1 {
        // Building a pool fails only when the system refuses a thread; the step then runs
        // on the calling thread's pool (the same result, on other threads).
        let _ = world.configure_thread_pool(threads);
    } else {
        world.clear_thread_pool();
    }
}

/// Without the `parallel` feature every step runs on the calling thread.
#[cfg(not(feature = "parallel"))]
fn install_thread_pool(_world: &mut PhysicsWorld, _threads: usize) {}

#[cfg(feature = "parallel")]
thread_local! {
    /// A pool of one thread, the calling thread itself (no thread is started): a step run in
    /// it runs its parallel parts in place, one after the other, without handing them to
    /// another thread. `None` when the thread already works for a pool.
    static THIS_THREAD: Option<rayon::ThreadPool> = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .use_current_thread()
        .build()
        .ok();
}

/// Runs `op` on the calling thread alone: rapier's parallel parts then take no other thread
/// (handing each step of a one-SumBot world to a pool of one thread made it 3.6 times
/// slower). A thread that already works for a pool runs `op` in that pool (the same result).
#[cfg(feature = "parallel")]
fn on_this_thread<R: Send>(op: impl FnOnce() -> R + Send) -> R {
    THIS_THREAD.with(|pool| match pool {
        Some(pool) => pool.install(op),
        None => op(),
    })
}

/// Without the `parallel` feature rapier has no parallel parts: `op` runs as it is.
#[cfg(not(feature = "parallel"))]
fn on_this_thread<R>(op: impl FnOnce() -> R) -> R {
    op()
}

/// Collision groups of wheel colliders.
fn wheel_groups() -> InteractionGroups {
    InteractionGroups::new(
        GROUP_WHEEL,
        Group::ALL.difference(GROUP_WHEEL),
        InteractionTestMode::And,
    )
}

/// Softness of every joint's locked axes: the world's Hardness/Bounciness (ODE's global CFM/ERP).
fn joint_softness(p: &StepParams) -> SpringCoefficients<f32> {
    let s = ode_spring(p.world_bounciness, p.world_hardness, p.timestep);
    SpringCoefficients::new(s.frequency_hz() as f32, s.zeta as f32)
}

/// The solver's own contact softness: nearly rigid (error reduction 0.91 per step, almost no
/// constraint-force mixing). A soft contact under a steady load keeps a residual sinking
/// velocity after every step that the next step's position correction undoes; the friction
/// pass sees that velocity, and a robot at rest on it creeps and turns.
fn rigid_contact(h: f64) -> SpringCoefficients<f32> {
    let omega = RIGID_CONTACT_H_OMEGA / h;
    SpringCoefficients::new((omega / std::f64::consts::TAU) as f32, 1.0)
}

impl PhysicsBackend for RapierBackend {
    /// More than one thread needs the crate's `parallel` feature (rapier's parallel step);
    /// without it, asking for more is refused.
    fn set_threads(&mut self, threads: usize) -> Result<(), PhysicsError> {
        if threads == 0 || threads > MAX_THREADS {
            return Err(PhysicsError::Invalid(format!(
                "threads: {threads} (1 to {MAX_THREADS})"
            )));
        }
        if threads > 1 && !cfg!(feature = "parallel") {
            return Err(PhysicsError::Invalid(format!(
                "threads: {threads}, but simrob-physics was built without its `parallel` \
                 feature (one thread only)"
            )));
        }
        if threads != self.threads {
            install_thread_pool(&mut self.state.world, threads);
            self.threads = threads;
        }
        Ok(())
    }

    fn threads(&self) -> usize {
        self.threads
    }

    fn add_body(&mut self, desc: &BodyDesc) -> Result<BodyId, PhysicsError> {
        self.fixed_noted = false;
        if !desc.mass.is_finite() || desc.mass == 0.0 {
            return Err(PhysicsError::Invalid(format!(
                "Mass must be positive or -1 (static), got {}",
                desc.mass
            )));
        }
        let pose = pose_of(desc.position, desc.orientation)?;
        let id = BodyId(self.state.bodies.len() as u32);
        let collider = collider_for(desc)?
            .user_data((u128::from(id.0) << 32) | desc.material.0 as u128)
            .active_hooks(ActiveHooks::MODIFY_SOLVER_CONTACTS);
        // No cap on how fast a body turns, as in ODE: rapier's (45° a step, 79 rad/s at dt
        // 0.01) keeps a ball from rolling faster than 2.4 m/s; it slid instead.
        let rb = if desc.mass > 0.0 {
            RigidBodyBuilder::dynamic().allow_fast_rotation(true)
        } else {
            RigidBodyBuilder::fixed()
        }
        .pose(pose);
        let (handle, _) = self.state.world.insert(rb, collider);
        if let Some(rb) = self.state.world.bodies.get_mut(handle) {
            // rapier's default thresholds (5 cm/s, 0.5 rad/s) would freeze a slowly rolling ball.
            rest_thresholds(rb.activation_mut(), true);
        }
        self.state.bodies.push(BodyEntry {
            handle,
            desc: *desc,
            driven: None,
        });
        Ok(id)
    }

    fn add_joint(&mut self, desc: &JointDesc) -> Result<JointId, PhysicsError> {
        let (b1, b2) = desc.bodies();
        if b1 == b2 {
            return Err(PhysicsError::Invalid(
                "a joint must connect two different bodies".into(),
            ));
        }
        let (h1, h2) = (self.body(b1)?.handle, self.body(b2)?.handle);
        let bodies = &self.state.world.bodies;
        let (Some(r1), Some(r2)) = (bodies.get(h1), bodies.get(h2)) else {
            return Err(PhysicsError::NoSuchBody(b1));
        };
        let (p1, p2) = (*r1.position(), *r2.position());
        let softness = joint_softness(&self.state.params);
        let joint = match *desc {
            JointDesc::Fixed { .. } => GenericJointBuilder::new(JointAxesMask::LOCKED_FIXED_AXES)
                .local_frame1(p1.inv_mul(&p2))
                .local_frame2(Pose::IDENTITY)
                .contacts_enabled(false)
                .softness(softness)
                .build(),
            JointDesc::Wheel {
                axis_1,
                axis_2,
                hardness,
                bounciness,
                max_torque,
                ..
            } => {
                let torque = if max_torque.is_finite() && max_torque >= 0.0 {
                    max_torque as f32
                } else {
                    return Err(PhysicsError::Invalid(format!(
                        "Maximum_Torque must be a non-negative number, got {max_torque}"
                    )));
                };
                if !hardness.is_finite() || !bounciness.is_finite() {
                    return Err(PhysicsError::Invalid(
                        "wheel joint Hardness and Bounciness must be finite".into(),
                    ));
                }
                let frame = wheel_frame(p2.translation, axis_1, axis_2)?;
                // The suspension along axis 1 is held rigidly (see the crate docs).
                GenericJointBuilder::new(
                    JointAxesMask::LIN_X
                        | JointAxesMask::LIN_Y
                        | JointAxesMask::LIN_Z
                        | JointAxesMask::ANG_Y
                        | JointAxesMask::ANG_Z,
                )
                .local_frame1(p1.inv_mul(&frame))
                .local_frame2(p2.inv_mul(&frame))
                .contacts_enabled(false)
                .softness(softness)
                .motor_model(JointAxis::AngX, MotorModel::ForceBased)
                .motor_velocity(JointAxis::AngX, 0.0, MOTOR_GAIN)
                .motor_max_force(JointAxis::AngX, torque)
                .build()
            }
        };
        let handle = self.state.world.insert_impulse_joint(h1, h2, joint);
        let id = JointId(self.state.joints.len() as u32);
        self.state.joints.push(JointEntry {
            handle,
            motor: None,
            desc: *desc,
            motor_target: 0.0,
            driven: None,
        });
        self.state.wheels_dirty = true;
        Ok(id)
    }

    fn truncate(&mut self, bodies: usize, joints: usize) {
        self.fixed_noted = false;
        self.undrive_all();
        self.state.wheels_dirty = true;
        while self.state.joints.len() > joints {
            if let Some(j) = self.state.joints.pop() {
                self.state.world.remove_impulse_joint(j.handle);
                if let Some(m) = j.motor {
                    self.state.world.remove_impulse_joint(m);
                }
            }
        }
        while self.state.bodies.len() > bodies {
            if let Some(b) = self.state.bodies.pop() {
                self.state.world.remove_body(b.handle);
            }
        }
    }

    fn body_count(&self) -> usize {
        self.state.bodies.len()
    }

    fn joint_count(&self) -> usize {
        self.state.joints.len()
    }

    fn set_interactions(&mut self, pairs: &[((MaterialId, MaterialId), Contact)]) {
        let mut merged: Vec<((MaterialId, MaterialId), Contact)> = Vec::new();
        for ((a, b), i) in pairs {
            let key = pair_key(*a, *b);
            match merged.iter_mut().find(|(k, _)| *k == key) {
                Some(slot) => slot.1 = *i,
                None => merged.push((key, *i)),
            }
        }
        self.state.interactions = merged;
        self.rebuild_hooks();
    }

    fn set_params(&mut self, params: &StepParams) -> Result<(), PhysicsError> {
        self.fixed_noted = false;
        let i = &params.default_interaction;
        if !(params.timestep.is_finite() && params.timestep > 0.0) {
            return Err(PhysicsError::Invalid(format!(
                "timestep must be a positive number of seconds, got {}",
                params.timestep
            )));
        }
        if !finite(&[
            params.gravity,
            params.world_hardness,
            params.world_bounciness,
            i.hardness,
            i.bounciness,
            i.slip1,
            i.slip2,
            i.friction,
        ]) {
            return Err(PhysicsError::Invalid(
                "world parameters must be finite".into(),
            ));
        }
        if params.fast_mode != self.state.params.fast_mode {
            self.state.wheels_dirty = true;
        }
        self.state.params = *params;
        self.apply_params();
        Ok(())
    }

    fn params(&self) -> StepParams {
        self.state.params
    }

    fn set_motor_velocity(&mut self, joint: JointId, velocity: f64) -> Result<(), PhysicsError> {
        if !velocity.is_finite() {
            return Err(PhysicsError::Invalid(format!(
                "motor velocity must be finite, got {velocity}"
            )));
        }
        let entry = self
            .state
            .joints
            .get_mut(joint.index())
            .ok_or(PhysicsError::NoSuchJoint(joint))?;
        if !matches!(entry.desc, JointDesc::Wheel { .. }) {
            return Err(PhysicsError::NotAWheelJoint(joint));
        }
        entry.motor_target = velocity;
        let driven = entry.driven;
        let motor = entry.motor.unwrap_or(entry.handle);
        if let Some(j) = self.state.world.impulse_joints.get_mut(motor, true) {
            // ODE's rate is body 1's angular velocity minus body 2's; rapier's is body 2's
            // minus body 1's.
            j.data
                .set_motor_velocity(JointAxis::AngX, -(velocity as f32), MOTOR_GAIN);
        }
        if let Some(d) = driven {
            self.set_driven_rate(d);
        }
        Ok(())
    }

    fn motor_velocity(&self, joint: JointId) -> Result<f64, PhysicsError> {
        let entry = self
            .state
            .joints
            .get(joint.index())
            .ok_or(PhysicsError::NoSuchJoint(joint))?;
        match entry.desc {
            JointDesc::Wheel { .. } => Ok(entry.motor_target),
            JointDesc::Fixed { .. } => Err(PhysicsError::NotAWheelJoint(joint)),
        }
    }

    fn step(&mut self) {
        if self.state.wheels_dirty {
            self.reconcile_wheels();
        }
        if self.threads > 1 {
            self.state.world.step_with_events(&self.hooks, &());
        } else {
            let (world, hooks) = (&mut self.state.world, &self.hooks);
            on_this_thread(|| world.step_with_events(hooks, &()));
        }
        let h = self.state.params.timestep;
        for i in 0..self.state.driven.len() {
            let rate = self.driven_target(i);
            let d = &mut self.state.driven[i];
            // `rem_euclid` (a `fmod`) only when the angle leaves [0, 2π): the same value.
            let a = d.angle + rate * h;
            d.angle = if (0.0..std::f64::consts::TAU).contains(&a) {
                a
            } else {
                a.rem_euclid(std::f64::consts::TAU)
            };
        }
    }

    fn body_state(&self, body: BodyId) -> Result<BodyState, PhysicsError> {
        let entry = self.body(body)?;
        if let Some(d) = entry.driven {
            return self.driven_wheel_state(d);
        }
        let rb = self
            .state
            .world
            .bodies
            .get(entry.handle)
            .ok_or(PhysicsError::NoSuchBody(body))?;
        let p = rb.position();
        let q = p.rotation;
        Ok(BodyState {
            position: from_v3(p.translation),
            orientation: [q.x as f64, q.y as f64, q.z as f64, q.w as f64],
            linear_velocity: from_v3(rb.linvel()),
            angular_velocity: from_v3(rb.angvel()),
        })
    }

    fn body_pose(&self, body: BodyId) -> Result<(Vec3, crate::Quat), PhysicsError> {
        let pose = self
            .entry_pose(self.body(body)?)
            .ok_or(PhysicsError::NoSuchBody(body))?;
        Ok(pose_parts(&pose))
    }

    fn note_finite_poses(&mut self) {
        // Without a lookup and a `Result` per body (the world notes every pose before every
        // iteration), and, when nothing but steps changed the world since every body was noted
        // (`fixed_noted`), only the bodies listed then: the fixed ones noted finite keep their
        // pose, and a driven wheel its frame (only its angle turns).
        if std::mem::replace(&mut self.fixed_noted, true) {
            let world = &self.state.world;
            for &n in &self.to_note {
                match n {
                    ToNote::Body(i, handle) => {
                        if let Some(rb) = world.bodies.get(handle) {
                            let p = rb.position();
                            if p.translation.is_finite() && p.rotation.is_finite() {
                                // In place: a note built aside and copied in is read back
                                // whole right after its parts were stored (a stall).
                                match &mut self.noted[i] {
                                    Some(Noted::Body(pose)) => *pose = *p,
                                    noted => *noted = Some(Noted::Body(*p)),
                                }
                            }
                        }
                    }
                    ToNote::Wheel(i, d) => {
                        let a = self.state.driven[d].angle;
                        if let (Some(Noted::Wheel { angle, .. }), true) =
                            (&mut self.noted[i], a.is_finite())
                        {
                            *angle = a;
                        }
                    }
                    ToNote::WheelAgain(i, d) => {
                        if let Some(n) = self.wheel_noted(d) {
                            self.noted[i] = Some(n);
                        }
                    }
                }
            }
            return;
        }
        self.noted.resize(self.state.bodies.len(), None);
        self.to_note.clear();
        *self.others_finite.get_mut() = false;
        for i in 0..self.state.bodies.len() {
            let entry = &self.state.bodies[i];
            if let Some(d) = entry.driven {
                // Noted now, the wheel's frame holds until the next change (which notes every
                // body again); otherwise it is looked for again each time.
                if let Some(n) = self.wheel_noted(d) {
                    self.noted[i] = Some(n);
                    self.to_note.push(ToNote::Wheel(i, d));
                } else {
                    self.to_note.push(ToNote::WheelAgain(i, d));
                }
                continue;
            }
            let handle = entry.handle;
            // A body of negative mass is fixed (see `add_body`).
            let fixed = entry.desc.mass < 0.0;
            if let Some(rb) = self.state.world.bodies.get(handle) {
                let p = rb.position();
                if p.translation.is_finite() && p.rotation.is_finite() {
                    self.noted[i] = Some(Noted::Body(*p));
                }
            }
            if !fixed || self.noted[i].is_none() {
                self.to_note.push(ToNote::Body(i, handle));
            }
        }
    }

    fn last_finite_pose(&self, body: BodyId) -> Option<(Vec3, crate::Quat)> {
        match (*self.noted.get(body.index())?)? {
            Noted::Body(pose) => Some(pose_parts(&pose)),
            Noted::Wheel {
                chassis,
                frame_on_chassis,
                wheel_in_frame,
                angle,
            } => {
                let Some(Some(Noted::Body(c))) = self.noted.get(chassis) else {
                    return None;
                };
                // As `wheel_pose` builds it from the chassis's pose.
                let pose = *c
                    * frame_on_chassis
                    * Pose::rotation(Vector::X * angle as f32)
                    * wheel_in_frame;
                Some(pose_parts(&pose))
            }
        }
    }

    fn non_finite_bodies(&self, out: &mut Vec<BodyId>) {
        // Every body's state is made of the rigid bodies' states and the driven wheels' angles
        // (turned at finite rates): when those are all finite, as they are unless the engine
        // diverged, so is every state. Otherwise each body's state is checked. Fixed bodies
        // found finite stay so until a state is loaded (nothing else makes one non-finite).
        // While nothing but steps changed the world since `to_note` was listed, and the bodies
        // not in it were found finite since, only those in it can have become non-finite.
        if self.fixed_noted && self.others_finite.load(Ordering::Relaxed) {
            let world = &self.state.world;
            let finite = |n: &ToNote| match *n {
                ToNote::Body(_, handle) => world.bodies.get(handle).is_none_or(rigid_body_finite),
                ToNote::Wheel(_, d) | ToNote::WheelAgain(_, d) => {
                    self.state.driven[d].angle.is_finite()
                }
            };
            if self.to_note.iter().all(finite) {
                return;
            }
            crate::non_finite_states(self, out);
            return;
        }
        let skip_fixed = self.fixed_finite.load(Ordering::Relaxed);
        if self
            .state
            .world
            .bodies
            .iter()
            .all(|(_, rb)| (skip_fixed && rb.is_fixed()) || rigid_body_finite(rb))
            && self.state.driven.iter().all(|d| d.angle.is_finite())
        {
            self.fixed_finite.store(true, Ordering::Relaxed);
            self.others_finite
                .store(self.fixed_noted, Ordering::Relaxed);
            return;
        }
        crate::non_finite_states(self, out);
    }

    fn set_body_state(&mut self, body: BodyId, state: &BodyState) -> Result<(), PhysicsError> {
        self.fixed_noted = false;
        let pose = pose_of(state.position, state.orientation)?;
        if !finite(&state.linear_velocity) || !finite(&state.angular_velocity) {
            return Err(PhysicsError::Invalid("non-finite velocity".into()));
        }
        let entry = self.body(body)?;
        if let Some(d) = entry.driven {
            self.set_driven_angle(d, state.orientation);
            return Ok(());
        }
        let handle = entry.handle;
        let rb = self
            .state
            .world
            .bodies
            .get_mut(handle)
            .ok_or(PhysicsError::NoSuchBody(body))?;
        rb.set_position(pose, true);
        if rb.is_dynamic() {
            rb.set_linvel(v3(state.linear_velocity), true);
            rb.set_angvel(v3(state.angular_velocity), true);
        }
        Ok(())
    }

    fn cast_ray(
        &self,
        origin: Vec3,
        direction: Vec3,
        max_distance: f64,
        exclude: &[BodyId],
    ) -> Option<RayHit> {
        let dir = v3(direction);
        if !finite(&origin) || !finite(&direction) || dir.length() < 1e-12 {
            return None;
        }
        let ray = Ray::new(v3(origin), dir.normalize());
        let predicate = |_h: ColliderHandle, c: &Collider| !exclude.contains(&body_of(c));
        let filter = QueryFilter::default().predicate(&predicate);
        let (handle, hit) =
            self.state
                .world
                .cast_ray_and_get_normal(&ray, max_distance as f32, true, filter)?;
        let collider = self.state.world.colliders.get(handle)?;
        Some(RayHit {
            body: body_of(collider),
            distance: hit.time_of_impact as f64,
            normal: from_v3(hit.normal),
        })
    }

    fn export_state(&self) -> Vec<u8> {
        // Serialising plain in-memory data cannot fail; an empty vector would be refused by
        // `import_state`.
        bincode::serialize(&self.state).unwrap_or_default()
    }

    fn import_state(&mut self, bytes: &[u8]) -> Result<(), PhysicsError> {
        self.fixed_noted = false;
        *self.fixed_finite.get_mut() = false;
        let state: State =
            bincode::deserialize(bytes).map_err(|e| PhysicsError::CorruptState(e.to_string()))?;
        for b in &state.bodies {
            if state.world.bodies.get(b.handle).is_none() {
                return Err(PhysicsError::CorruptState(
                    "a body of the table is missing from the engine".into(),
                ));
            }
        }
        let n = state.driven.len();
        if state
            .bodies
            .iter()
            .map(|b| b.driven)
            .chain(state.joints.iter().map(|j| j.driven))
            .any(|d| d.is_some_and(|i| i >= n))
        {
            return Err(PhysicsError::CorruptState(
                "a body or joint names a driven wheel that is not there".into(),
            ));
        }
        for d in &state.driven {
            if state.world.colliders.get(d.collider).is_none()
                || state.bodies.get(d.wheel.index()).is_none()
                || state.bodies.get(d.chassis.index()).is_none()
                || state.joints.get(d.joint.index()).is_none()
            {
                return Err(PhysicsError::CorruptState(
                    "a driven wheel of the table is missing from the engine".into(),
                ));
            }
        }
        for j in &state.joints {
            if state.world.impulse_joints.get(j.handle).is_none()
                || j.motor
                    .is_some_and(|m| state.world.impulse_joints.get(m).is_none())
            {
                return Err(PhysicsError::CorruptState(
                    "a joint of the table is missing from the engine".into(),
                ));
            }
        }
        self.state = state;
        install_contact_generation(&mut self.state.world);
        install_thread_pool(&mut self.state.world, self.threads);
        self.rebuild_hooks();
        Ok(())
    }
}
