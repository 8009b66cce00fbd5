//! # simrob-world
//!
//! The 3D simulation of simrob: entities (Robot, Field, Ball) made of bodies and joints, the
//! commands of the SimRob manual §2–§3 with their validation, the iteration loop (Initialize_Simulation
//! gate, step mode and Make_Step, steps per iteration), the broadcast snapshot of §5, and
//! Save/Load of the whole simulation as XML.
//!
//! It does no I/O: no sockets, files, threads or clocks (threads only inside a physics step
//! asked to run on several, [`World::set_physics_threads`], with the `parallel` feature). A shell (the server, the `simrob`
//! binary) hands it decoded requests and asks it to advance; Save and Load come back as
//! [`Applied::Save`] / [`Applied::Load`] so the shell does the file work (see
//! [`World::save_xml`] and [`World::load_xml`]).
//!
//! **A rejected command changes nothing.** Every command is validated completely before the
//! first change is made; entity creation additionally undoes a partial creation if the
//! physics engine refuses a body or joint.
//!
//! ```
//! use simrob_world::{World, WorldConfig};
//! use simrob_protocol::{ControlRequest, EntityId, EntitySpec};
//!
//! let mut world = World::new(WorldConfig::default());
//! world.apply_control(&ControlRequest::CreateEntity(EntitySpec::Ball {
//!     entity_id: EntityId(1), material: None, mass: Some(0.6),
//!     position: [0.0, 0.0, 1.0], rotation: [0.0; 3], radius: 0.03,
//! })).unwrap();
//! world.apply_control(&ControlRequest::InitializeSimulation).unwrap();
//! assert!(world.advance());
//! let b = world.snapshot();
//! assert_eq!(b.iteration, 1);
//! assert!(b.entities[0].position[2] < 1.0); // falling
//! ```
//!
//! Extension points: new entity types are new [`EntitySpec`] variants validated in
//! `entity.rs`; new commands are new [`ControlRequest`] / [`EntityRequest`] variants handled in
//! [`World::apply_control`] / [`World::apply_entity`]; the physics engine is any
//! [`PhysicsBackend`].
#![warn(missing_docs)]

pub mod brain;
mod config;
mod entity;
mod humanoid;
mod save;
mod slice;

use std::collections::BTreeMap;

pub use config::WorldConfig;
pub use humanoid::HumanoidSpec;
pub use save::{
    default_save_key, session_flags_of, EngineState, LoadLimits, LoadOptions, SaveKey, SessionFlags,
};
use simrob_physics::{euler_to_quat, quat_to_euler, BodyId, BodyState, StepParams};

/// A body's Euler angles (radians) at the precision of the engine's `f32` orientation they
/// come from, so that each is printed as the shortest text of an `f32` (0.13483973, not
/// 0.13483972862247642), as the engine's own values are.
fn euler_of(orientation: simrob_physics::Quat) -> [f64; 3] {
    quat_to_euler(orientation).map(|a| f64::from(a as f32))
}
pub use simrob_physics::{PhysicsBackend, RapierBackend};
/// Most threads a physics step may run on, and whether this build can use more than one
/// ([`World::set_physics_threads`]).
pub use simrob_physics::{MAX_THREADS as MAX_PHYSICS_THREADS, PARALLEL as PARALLEL_PHYSICS};
pub use simrob_protocol as protocol;
use simrob_protocol::{
    BodyState as WireBody, Broadcast, ControlRequest, EntityId, EntityInfo, EntityInfoKind,
    EntityRequest, EntitySpec, Interaction, Material, MaterialId, Request,
};
pub use slice::{Advance, Diverged};

use entity::{Entity, EntityKind};

/// Largest accepted timestep (s).
pub const MAX_TIMESTEP: f64 = 10.0;
/// Largest accepted steps per iteration.
pub const MAX_STEPS_PER_ITERATION: u32 = 100_000;

/// Why a command was refused. The world is unchanged when this is returned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WorldError {
    /// No entity has this id.
    #[error("entity {0} does not exist")]
    UnknownEntity(EntityId),
    /// A Create_Entity with an id already in use.
    #[error("entity {0} already exists; entity ids must be unique")]
    DuplicateEntity(EntityId),
    /// A request with a value out of range or that does not fit the entity (says why).
    #[error("{0}")]
    Invalid(String),
    /// A request the world cannot run in its present mode, such as Make_Step before
    /// Initialize_Simulation or outside step mode (says why).
    #[error("{0}")]
    NotNow(String),
    /// A save file that cannot be loaded (says why).
    #[error("cannot load simulation: {0}")]
    Load(String),
    /// An agent message (register, synchronize…) given to the world.
    #[error("agent messages are handled by the server, not by the world")]
    AgentMessage,
    /// A sync mode, sync wait or auto-adjust command given to the world.
    #[error("sync mode, sync wait and auto-adjust are the session's settings, not the world's")]
    SessionCommand,
}

fn invalid<T>(msg: impl Into<String>) -> Result<T, WorldError> {
    Err(WorldError::Invalid(msg.into()))
}

/// What an accepted command asks of the shell, beyond the change already made.
#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    /// Done; the text is the confirmation to broadcast when one is asked for.
    Done(String),
    /// Save the simulation (the XML of [`World::save_xml`]) to this path.
    Save(String),
    /// Load the simulation from this path (then call [`World::load_xml`]).
    Load(String),
}

/// Simulation-wide modes and parameters that are not the physics engine's.
#[derive(Debug, Clone, PartialEq)]
pub struct Modes {
    /// `Initialize_Simulation` received: the world advances.
    pub initialized: bool,
    /// Step mode: paused, advancing one iteration per `Make_Step`.
    pub step_mode: bool,
    /// Physics steps per iteration (`Set_Steps_Per_Iteration`).
    pub steps_per_iteration: u32,
}

/// The 3D world. `P` is the physics engine.
pub struct World<P: PhysicsBackend + Default = RapierBackend> {
    config: WorldConfig,
    physics: P,
    entities: BTreeMap<EntityId, Entity>,
    /// Entity ids in order of creation (the order their bodies were added to the engine, which
    /// a save file must reproduce).
    creation_order: Vec<EntityId>,
    materials: BTreeMap<MaterialId, String>,
    /// Registered interactions keyed by the unordered material pair (min, max).
    interactions: BTreeMap<(MaterialId, MaterialId), Interaction>,
    modes: Modes,
    iteration: u64,
    sim_time: f64,
    pending_steps: u64,
    /// Physics steps done of the iteration in progress (0: none in progress; `slice.rs`).
    slice_steps: u32,
    /// Bodies found not finite after an iteration (kept for its allocation).
    non_finite: Vec<BodyId>,
    /// Entities the divergence guard put back, not yet taken.
    diverged: Vec<Diverged>,
    /// Humanoid robots and rolling resistance (`humanoid.rs`).
    soccer: humanoid::Soccer,
}

impl World<RapierBackend> {
    /// An empty world on the rapier backend.
    pub fn new(config: WorldConfig) -> Self {
        World::with_backend(config)
    }
}

impl<P: PhysicsBackend + Default> World<P> {
    /// Runs each physics step on `threads` threads (1 to [`simrob_physics::MAX_THREADS`];
    /// default 1). The run is the same whatever the number; a loaded save file keeps it.
    pub fn set_physics_threads(&mut self, threads: usize) -> Result<(), WorldError> {
        self.physics
            .set_threads(threads)
            .map_err(|e| WorldError::Invalid(e.to_string()))
    }

    /// Threads each physics step runs on ([`World::set_physics_threads`]).
    pub fn physics_threads(&self) -> usize {
        self.physics.threads()
    }

    /// An empty world on backend `P`.
    pub fn with_backend(config: WorldConfig) -> Self {
        let mut physics = P::default();
        let params = StepParams {
            timestep: config.default_step_size,
            gravity: config.default_gravity,
            world_hardness: config.default_world_hardness,
            world_bounciness: config.default_world_bounciness,
            fast_mode: false,
            default_interaction: config.default_interaction,
        };
        if physics.set_params(&params).is_err() {
            // An invalid configuration falls back to the engine's defaults for the step
            // parameters; the configuration loader validates values before they get here.
            let _ = physics.set_params(&StepParams::default());
        }
        let modes = Modes {
            initialized: false,
            step_mode: false,
            steps_per_iteration: 1,
        };
        World {
            config,
            physics,
            entities: BTreeMap::new(),
            creation_order: Vec::new(),
            materials: BTreeMap::new(),
            interactions: BTreeMap::new(),
            modes,
            iteration: 0,
            sim_time: 0.0,
            pending_steps: 0,
            slice_steps: 0,
            non_finite: Vec::new(),
            diverged: Vec::new(),
            soccer: humanoid::Soccer::default(),
        }
    }

    /// The configuration the world was made with.
    pub fn config(&self) -> &WorldConfig {
        &self.config
    }
    /// Iterations run so far.
    pub fn iteration(&self) -> u64 {
        self.iteration
    }
    /// Simulated seconds so far.
    pub fn sim_time(&self) -> f64 {
        self.sim_time
    }
    /// Modes and non-physics parameters.
    pub fn modes(&self) -> &Modes {
        &self.modes
    }
    /// Physics parameters (timestep, gravity, world hardness/bounciness, fast mode).
    pub fn params(&self) -> StepParams {
        self.physics.params()
    }
    /// Simulated seconds per iteration (timestep × steps per iteration).
    pub fn iteration_seconds(&self) -> f64 {
        self.physics.params().timestep * self.modes.steps_per_iteration as f64
    }
    /// Ids of the entities, ascending.
    pub fn entity_ids(&self) -> impl Iterator<Item = EntityId> + '_ {
        self.entities.keys().copied()
    }
    /// The creation request of an entity.
    pub fn entity_spec(&self, id: EntityId) -> Option<&EntitySpec> {
        self.entities.get(&id).map(|e| &e.spec)
    }
    /// Registered materials.
    pub fn materials(&self) -> impl Iterator<Item = (MaterialId, &str)> {
        self.materials.iter().map(|(k, v)| (*k, v.as_str()))
    }
    /// Whether material `id` is registered.
    pub fn has_material(&self, id: MaterialId) -> bool {
        self.materials.contains_key(&id)
    }
    /// How many materials are registered.
    pub fn material_count(&self) -> usize {
        self.materials.len()
    }
    /// Whether an interaction of materials `a` and `b` (in either order) is registered.
    pub fn has_interaction(&self, a: MaterialId, b: MaterialId) -> bool {
        self.interactions.contains_key(&(a.min(b), a.max(b)))
    }
    /// How many material-pair interactions are registered.
    pub fn interaction_count(&self) -> usize {
        self.interactions.len()
    }
    /// Whether a rolling resistance of materials `a` and `b` (in either order) is set.
    pub fn has_rolling_resistance(&self, a: MaterialId, b: MaterialId) -> bool {
        self.soccer
            .rolling
            .contains_key(&humanoid::rolling_key(a, b))
    }
    /// How many material pairs have a rolling resistance set.
    pub fn rolling_resistance_count(&self) -> usize {
        self.soccer.rolling.len()
    }
    /// The physics engine (read-only: ray casts, body states).
    pub fn physics(&self) -> &P {
        &self.physics
    }

    /// Applies a control or entity request. Agent requests are the server's.
    pub fn apply(&mut self, request: &Request) -> Result<Applied, WorldError> {
        match request {
            Request::Control { request, .. } => self.apply_control(request),
            Request::Entity { request, .. } => self.apply_entity(request).map(Applied::Done),
            Request::Agent(_) => Err(WorldError::AgentMessage),
        }
    }

    /// Applies a `Control_Request` (SimRob manual §2.3–§2.19).
    pub fn apply_control(&mut self, request: &ControlRequest) -> Result<Applied, WorldError> {
        use ControlRequest as C;
        let done = |s: String| Ok(Applied::Done(s));
        match request {
            C::RegisterMaterialsInteractions {
                materials,
                interactions,
            } => self.register_materials(materials, interactions),
            C::CreateEntity(spec) => {
                let text = format!("Created {} entity {}", spec.type_name(), spec.entity_id());
                self.create_entity(spec)?;
                done(text)
            }
            C::InitializeSimulation => {
                self.modes.initialized = true;
                done("Simulation initialized".into())
            }
            C::SetStepMode(on) => {
                self.modes.step_mode = *on;
                if !on {
                    self.pending_steps = 0;
                }
                done(format!("Step mode set to {on}"))
            }
            C::MakeStep => {
                if !self.modes.initialized {
                    return Err(WorldError::NotNow(
                        "Make_Step refused: the simulation is not initialized (send Initialize_Simulation first)".into(),
                    ));
                }
                if !self.modes.step_mode {
                    return Err(WorldError::NotNow(
                        "Make_Step refused: step mode is off (send Set_Step_Mode true first)"
                            .into(),
                    ));
                }
                self.pending_steps += 1;
                done("Step granted".into())
            }
            C::SetAutoAdjustMode(_) | C::SetSyncMode(_) | C::SetSyncWait(_) => {
                Err(WorldError::SessionCommand)
            }
            C::SetTimestep(t) => {
                if !(t.is_finite() && *t > 0.0 && *t <= MAX_TIMESTEP) {
                    return invalid(format!(
                        "Timestep must be in (0, {MAX_TIMESTEP}] seconds (0.010–0.070 recommended), got {t}"
                    ));
                }
                self.update_params(|p| p.timestep = *t)?;
                done(format!("Timestep set to {t}"))
            }
            C::SetWorldGravity(g) => {
                if !g.is_finite() {
                    return invalid(format!("Gravity must be a finite number, got {g}"));
                }
                self.update_params(|p| p.gravity = *g)?;
                done(format!("Gravity set to {g}"))
            }
            C::SetWorldHardness(h) => {
                unit_interval("Hardness", *h)?;
                self.update_params(|p| p.world_hardness = *h)?;
                done(format!("World hardness set to {h}"))
            }
            C::SetWorldBounciness(b) => {
                unit_interval("Bounciness", *b)?;
                self.update_params(|p| p.world_bounciness = *b)?;
                done(format!("World bounciness set to {b}"))
            }
            C::SetFastMode(on) => {
                self.update_params(|p| p.fast_mode = *on)?;
                done(format!("Fast mode set to {on}"))
            }
            C::SetStepsPerIteration(n) => {
                if *n == 0 || *n > MAX_STEPS_PER_ITERATION {
                    return invalid(format!(
                        "Steps_Per_Iteration must be between 1 and {MAX_STEPS_PER_ITERATION}, got {n}"
                    ));
                }
                self.modes.steps_per_iteration = *n;
                done(format!("Steps per iteration set to {n}"))
            }
            C::SetRollingResistance {
                material_1,
                material_2,
                coefficient,
            } => {
                for m in [*material_1, *material_2] {
                    if !self.material_known(m) {
                        return invalid(format!(
                            "Set_Rolling_Resistance: material {m} is not registered (send Register_Materials_Interactions first)"
                        ));
                    }
                }
                self.set_rolling_resistance(*material_1, *material_2, *coefficient)?;
                done(format!(
                    "Rolling resistance of materials {material_1} and {material_2} set to {coefficient}"
                ))
            }
            C::Save(path) => {
                if path.trim().is_empty() {
                    return invalid("Save needs a file name in <File>");
                }
                Ok(Applied::Save(path.clone()))
            }
            C::Load(path) => {
                if path.trim().is_empty() {
                    return invalid("Load needs a file name in <File>");
                }
                Ok(Applied::Load(path.clone()))
            }
        }
    }

    fn update_params(&mut self, change: impl FnOnce(&mut StepParams)) -> Result<(), WorldError> {
        let mut p = self.physics.params();
        change(&mut p);
        self.physics
            .set_params(&p)
            .map_err(|e| WorldError::Invalid(e.to_string()))
    }

    fn register_materials(
        &mut self,
        materials: &[Material],
        interactions: &[Interaction],
    ) -> Result<Applied, WorldError> {
        let known = |id: MaterialId| {
            id == self.config.default_body_material
                || self.materials.contains_key(&id)
                || materials.iter().any(|m| m.id == id)
        };
        for (n, i) in interactions.iter().enumerate() {
            let at = format!(
                "Interaction {} (materials {} and {})",
                n + 1,
                i.material_1,
                i.material_2
            );
            for m in [i.material_1, i.material_2] {
                if !known(m) {
                    return invalid(format!(
                        "{at}: material {m} is not registered (add a <Material> with Material_Id {m})"
                    ));
                }
            }
            check_interaction(&at, i)?;
        }
        for m in materials {
            self.materials.insert(m.id, m.name.clone());
        }
        for i in interactions {
            let key = (
                i.material_1.min(i.material_2),
                i.material_1.max(i.material_2),
            );
            self.interactions.insert(key, i.clone());
        }
        self.push_interactions();
        Ok(Applied::Done(format!(
            "Registered {} materials and {} interactions",
            materials.len(),
            interactions.len()
        )))
    }

    fn push_interactions(&mut self) {
        let pairs: Vec<_> = self
            .interactions
            .iter()
            .map(|(k, i)| (*k, i.contact))
            .collect();
        self.physics.set_interactions(&pairs);
    }

    fn material_known(&self, id: MaterialId) -> bool {
        id == self.config.default_body_material || self.materials.contains_key(&id)
    }

    fn create_entity(&mut self, spec: &EntitySpec) -> Result<(), WorldError> {
        let id = spec.entity_id();
        if self.entities.contains_key(&id) {
            return Err(WorldError::DuplicateEntity(id));
        }
        if let EntitySpec::Humanoid { .. } = spec {
            return self.create_humanoid_entity(spec);
        }
        let plan = entity::plan(spec, &self.config, &|m| self.material_known(m))?;
        let (bodies_before, joints_before) =
            (self.physics.body_count(), self.physics.joint_count());
        match entity::build(&mut self.physics, spec, plan) {
            Ok(entity) => {
                self.entities.insert(id, entity);
                self.creation_order.push(id);
                Ok(())
            }
            Err(e) => {
                self.physics.truncate(bodies_before, joints_before);
                Err(e)
            }
        }
    }

    /// Applies an `Entity_Request` (SimRob manual §3); returns the confirmation text.
    pub fn apply_entity(&mut self, request: &EntityRequest) -> Result<String, WorldError> {
        let id = request.entity_id();
        if self.humanoid(id).is_some() {
            return self.apply_humanoid_request(request);
        }
        let entity = self
            .entities
            .get(&id)
            .ok_or(WorldError::UnknownEntity(id))?;
        match request {
            EntityRequest::SetEntityPosition { position, .. } => {
                if !position.iter().all(|v| v.is_finite()) {
                    return invalid("Set_Entity_Position: position must be finite numbers");
                }
                let anchor = match &entity.kind {
                    EntityKind::Field => {
                        return invalid(format!(
                            "Set_Entity_Position: entity {id} is a Field; only robots and balls can be moved"
                        ))
                    }
                    EntityKind::Robot { reference, .. } | EntityKind::Humanoid { reference } => {
                        *reference
                    }
                    EntityKind::Ball => entity.bodies[0].handle,
                };
                let anchor_pos = self
                    .physics
                    .body_state(anchor)
                    .map_err(|e| WorldError::Invalid(e.to_string()))?
                    .position;
                let delta = [
                    position[0] - anchor_pos[0],
                    position[1] - anchor_pos[1],
                    position[2] - anchor_pos[2],
                ];
                let mut moved = Vec::with_capacity(entity.bodies.len());
                for b in &entity.bodies {
                    let s = self
                        .physics
                        .body_state(b.handle)
                        .map_err(|e| WorldError::Invalid(e.to_string()))?;
                    moved.push((
                        b.handle,
                        BodyState {
                            position: [
                                s.position[0] + delta[0],
                                s.position[1] + delta[1],
                                s.position[2] + delta[2],
                            ],
                            orientation: s.orientation,
                            linear_velocity: [0.0; 3],
                            angular_velocity: [0.0; 3],
                        },
                    ));
                }
                for (h, s) in moved {
                    self.physics
                        .set_body_state(h, &s)
                        .map_err(|e| WorldError::Invalid(e.to_string()))?;
                }
                Ok(format!(
                    "Entity {id} moved to ({}, {}, {})",
                    position[0], position[1], position[2]
                ))
            }
            EntityRequest::HumanoidAction { .. } => invalid(format!(
                "Humanoid_Action: entity {id} is a {}, not a Humanoid",
                entity.spec.type_name()
            )),
            EntityRequest::RobotMotorControl { motors, .. } => {
                let EntityKind::Robot {
                    motors: robot_motors,
                    ..
                } = &entity.kind
                else {
                    return invalid(format!(
                        "Robot_Motor_Control: entity {id} is a {}, not a Robot",
                        entity.spec.type_name()
                    ));
                };
                let mut targets = Vec::with_capacity(motors.len());
                for m in motors {
                    let Some(joint) = robot_motors.get(&m.wheel_joint_id) else {
                        let list: Vec<String> =
                            robot_motors.keys().map(|k| k.to_string()).collect();
                        return invalid(format!(
                            "Robot_Motor_Control: robot {id} has no motor on wheel joint {} (its motors: {})",
                            m.wheel_joint_id,
                            list.join(", ")
                        ));
                    };
                    if !m.value.is_finite() {
                        return invalid(format!(
                            "Robot_Motor_Control: Value of wheel joint {} must be finite",
                            m.wheel_joint_id
                        ));
                    }
                    targets.push((*joint, m.value));
                }
                for (joint, value) in targets {
                    self.physics
                        .set_motor_velocity(joint, value)
                        .map_err(|e| WorldError::Invalid(e.to_string()))?;
                }
                Ok(format!("Motors of robot {id} set"))
            }
        }
    }

    /// Whether [`World::advance`] would run an iteration now: the simulation is initialized and
    /// either step mode is off or a Make_Step is pending (or an iteration is under way).
    pub fn can_advance(&self) -> bool {
        self.iteration_in_progress()
            || (self.modes.initialized && (!self.modes.step_mode || self.pending_steps > 0))
    }

    /// Runs one iteration (steps-per-iteration physics steps, or the rest of the one under
    /// way) if [`World::can_advance`]; returns whether it did. [`World::advance_slice`] runs
    /// one in pieces.
    pub fn advance(&mut self) -> bool {
        self.advance_slice(u32::MAX) == Advance::Completed
    }

    /// The world state a broadcast carries (SimRob manual §5): every body with its entity, and the
    /// pose of every robot's reference body and every ball. Agent filters shape it further.
    pub fn snapshot(&self) -> Broadcast {
        let mut out = Broadcast {
            iteration: self.iteration,
            part: None,
            bodies: Vec::with_capacity(self.physics.body_count()),
            entities: Vec::new(),
        };
        for (id, e) in &self.entities {
            for b in &e.bodies {
                let Ok(s) = self.physics.body_state(b.handle) else {
                    continue;
                };
                out.bodies.push(WireBody {
                    entity_id: *id,
                    id: b.body_id,
                    shape: b.shape,
                    material: b.material,
                    mass: b.mass,
                    position: s.position,
                    rotation: euler_of(s.orientation),
                    linear_velocity: s.linear_velocity,
                    angular_velocity: s.angular_velocity,
                });
            }
            let (kind, body) = match &e.kind {
                EntityKind::Robot { reference, .. } | EntityKind::Humanoid { reference } => {
                    (EntityInfoKind::Robot, *reference)
                }
                EntityKind::Ball => (EntityInfoKind::Ball, e.bodies[0].handle),
                EntityKind::Field => continue,
            };
            if let Ok(s) = self.physics.body_state(body) {
                out.entities.push(EntityInfo {
                    kind,
                    entity_id: *id,
                    position: s.position,
                    rotation: euler_of(s.orientation),
                });
            }
        }
        out
    }

    /// Pose (position, Euler rotation) of an entity: a robot's reference body, a ball's sphere,
    /// a field's first body.
    pub fn entity_pose(&self, id: EntityId) -> Option<([f64; 3], [f64; 3])> {
        let e = self.entities.get(&id)?;
        let handle = match &e.kind {
            EntityKind::Robot { reference, .. } | EntityKind::Humanoid { reference } => *reference,
            _ => e.bodies.first()?.handle,
        };
        let s = self.physics.body_state(handle).ok()?;
        Some((s.position, euler_of(s.orientation)))
    }

    /// Full kinematic state of one body of an entity.
    pub fn body_state(&self, entity: EntityId, body_id: u32) -> Option<BodyState> {
        let e = self.entities.get(&entity)?;
        let b = e.bodies.iter().find(|b| b.body_id == body_id)?;
        self.physics.body_state(b.handle).ok()
    }

    /// Sets the linear and angular velocity of every body of an entity (a rigid push: all
    /// bodies get the same velocities). Not a SimRob command: a convenience for scenario set-up
    /// and tests (kick a ball, launch a robot). Fields cannot be pushed.
    pub fn set_entity_velocity(
        &mut self,
        id: EntityId,
        linear: [f64; 3],
        angular: [f64; 3],
    ) -> Result<(), WorldError> {
        let e = self
            .entities
            .get(&id)
            .ok_or(WorldError::UnknownEntity(id))?;
        if matches!(e.kind, EntityKind::Field) {
            return invalid(format!("entity {id} is a Field and cannot move"));
        }
        if !linear.iter().chain(angular.iter()).all(|v| v.is_finite()) {
            return invalid("velocities must be finite numbers");
        }
        let mut states = Vec::with_capacity(e.bodies.len());
        for b in &e.bodies {
            let mut s = self
                .physics
                .body_state(b.handle)
                .map_err(|e| WorldError::Invalid(e.to_string()))?;
            s.linear_velocity = linear;
            s.angular_velocity = angular;
            states.push((b.handle, s));
        }
        for (h, s) in states {
            self.physics
                .set_body_state(h, &s)
                .map_err(|e| WorldError::Invalid(e.to_string()))?;
        }
        Ok(())
    }

    /// Motor target of a robot's wheel joint.
    pub fn motor_target(&self, entity: EntityId, wheel_joint: u32) -> Option<f64> {
        match &self.entities.get(&entity)?.kind {
            EntityKind::Robot { motors, .. } => {
                self.physics.motor_velocity(*motors.get(&wheel_joint)?).ok()
            }
            _ => None,
        }
    }
}

/// A copy of an entity's creation request with another id, moved by `offset` (metres). Handy
/// for populating a scene with many copies of one robot.
pub fn moved_copy(spec: &EntitySpec, entity_id: EntityId, offset: [f64; 3]) -> EntitySpec {
    let shift = |p: [f64; 3]| [p[0] + offset[0], p[1] + offset[1], p[2] + offset[2]];
    let mut copy = spec.clone();
    match &mut copy {
        EntitySpec::Robot {
            entity_id: id,
            bodies,
            ..
        }
        | EntitySpec::Field {
            entity_id: id,
            bodies,
            ..
        } => {
            *id = entity_id;
            for b in bodies {
                b.position = shift(b.position);
            }
        }
        EntitySpec::Ball {
            entity_id: id,
            position,
            ..
        } => {
            *id = entity_id;
            *position = shift(*position);
        }
        EntitySpec::Humanoid {
            entity_id: id,
            position,
            ..
        } => {
            *id = entity_id;
            *position = [position[0] + offset[0], position[1] + offset[1]];
        }
    }
    copy
}

fn unit_interval(name: &str, v: f64) -> Result<(), WorldError> {
    if v.is_finite() && (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        invalid(format!("{name} must be between 0 and 1, got {v}"))
    }
}

fn check_interaction(at: &str, i: &Interaction) -> Result<(), WorldError> {
    let i = &i.contact;
    unit_interval(&format!("{at}: Hardness"), i.hardness)?;
    unit_interval(&format!("{at}: Bounciness"), i.bounciness)?;
    for (name, v) in [
        ("Slip1", i.slip1),
        ("Slip2", i.slip2),
        ("Friction", i.friction),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            return invalid(format!(
                "{at}: {name} must be a non-negative number, got {v}"
            ));
        }
    }
    Ok(())
}

pub(crate) fn orientation(rotation: [f64; 3]) -> [f64; 4] {
    euler_to_quat(rotation)
}
