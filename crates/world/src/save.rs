//! Save and Load (SimRob manual §2.16–§2.17, SPEC S15): the whole simulation as one XML document.
//!
//! ```xml
//! <SimRob_Simulation Version="1">
//!   <Parameters> Iteration, Simulated_Time, Timestep, Gravity, World_Hardness,
//!     World_Bounciness, Fast_Mode, Steps_Per_Iteration, Step_Mode, Pending_Steps,
//!     AutoAdjust_Mode, Sync_Mode, Sync_Wait, Initialized, Default_Interaction </Parameters>
//!   <Control_Request Command="Register_Materials_Interactions"> … </Control_Request>
//!   <Entities> one Create_Entity Control_Request per entity, in order of creation </Entities>
//!   <State> <Body Entity_Id Body_id> pose (quaternion) and velocities </Body>
//!           <Motor Entity_Id Wheel_Joint_Id>target</Motor> </State>
//!   <Physics_State Encoding="hex" Seal="…"> the engine's complete state </Physics_State>
//! </SimRob_Simulation>
//! ```
//!
//! Everything above `Physics_State` is readable and editable. Numbers are written in Rust's
//! shortest round-trip form, so f64 values survive the text exactly.
//!
//! # The engine state is trusted only when this server wrote it
//!
//! `Physics_State` is the physics engine's own serialization: fed crafted bytes, the engine
//! may panic or allocate without bound on a later step. So it carries a `Seal`, an
//! HMAC-SHA256 under a [`SaveKey`] over the whole file up to the element and the state itself.
//! A file whose seal verifies under the loading world's key resumes from the engine state
//! exactly, contact warm-starts included: a loaded run continues bit for bit like one that
//! never stopped. Any other file — hand-written, edited, written by another installation,
//! sealed with another key, or with a damaged state — is rebuilt from its readable part:
//! entities from `Entities`, bodies placed from `State` ([`EngineState::Rebuilt`] says why).
//!
//! The key is the caller's ([`LoadOptions::key`], [`World::save_xml_sealed`]; a server's session
//! holds its configured or per-installation key), else [`default_save_key`], one drawn at random
//! for this process: files then resume exactly within one run of the server.
//!
//! # Limits
//!
//! A file may hold at most [`LoadLimits::max_entities`] entities and
//! [`LoadLimits::max_bodies`] bodies; parameters, positions and velocities must be finite and
//! within [`LoadLimits`]' ranges. Loading builds a complete new world first and replaces the
//! running one only on success: a corrupt, truncated or oversized file is refused with the
//! reason and the running world is untouched.

use simrob_physics::{BodyState, PhysicsBackend};
use simrob_protocol::tree::{parse_elements, Element};
use simrob_protocol::{
    contact_children, decode_contact, decode_entity_spec_element, decode_materials_element,
    entity_spec_element, materials_element, CommandKeys, ControlRequest, EntityId,
    Interaction as WireInteraction, Material,
};

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use crate::{protocol, EntityKind, World, WorldError};

/// A secret key that seals the engine state of save files (see the module docs).
#[derive(Clone, PartialEq, Eq)]
pub struct SaveKey([u8; 32]);

impl std::fmt::Debug for SaveKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SaveKey(…)")
    }
}

impl SaveKey {
    /// A key from 32 secret bytes (e.g. read from the OS's random source).
    pub fn from_bytes(bytes: [u8; 32]) -> SaveKey {
        SaveKey(bytes)
    }

    /// A key derived from a configured secret phrase.
    pub fn from_secret(secret: &str) -> SaveKey {
        let mut h = Sha256::new();
        h.update(b"simrob save key v1\0");
        h.update(secret.as_bytes());
        SaveKey(h.finalize().into())
    }

    /// A key drawn at random for this process (from the standard library's hash seed, which
    /// the OS provides).
    fn random_for_this_process() -> SaveKey {
        use std::hash::{BuildHasher, Hasher};
        let mut out = [0u8; 32];
        for (i, chunk) in out.chunks_mut(8).enumerate() {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(i as u64);
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
        SaveKey::from_secret(&hex(&out))
    }

    /// HMAC-SHA256 of `parts` under this key.
    fn seal(&self, parts: &[&[u8]]) -> [u8; 32] {
        const BLOCK: usize = 64;
        let mut ipad = [0x36u8; BLOCK];
        let mut opad = [0x5cu8; BLOCK];
        for (i, k) in self.0.iter().enumerate() {
            ipad[i] ^= k;
            opad[i] ^= k;
        }
        let mut inner = Sha256::new();
        inner.update(ipad);
        for p in parts {
            inner.update(p);
        }
        let mut outer = Sha256::new();
        outer.update(opad);
        outer.update(inner.finalize());
        outer.finalize().into()
    }
}

static DEFAULT_KEY: OnceLock<SaveKey> = OnceLock::new();

/// The key [`World::save_xml`] and [`World::load_xml`] use.
pub fn default_save_key() -> &'static SaveKey {
    DEFAULT_KEY.get_or_init(SaveKey::random_for_this_process)
}

/// Bounds on what a save file may hold.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadLimits {
    /// Most entities in a file (`maxentities`).
    pub max_entities: usize,
    /// Most rigid bodies in a file (`maxbodies`).
    pub max_bodies: usize,
    /// Largest |coordinate| of a body position, metres (`maxposition`).
    pub max_position: f64,
    /// Largest |speed| of a body, m/s or rad/s (`maxvelocity`).
    pub max_velocity: f64,
    /// Largest |gravity|, m/s² (`maxgravity`).
    pub max_gravity: f64,
    /// Allowed timestep, seconds (`mintimestep`, `maxtimestep`).
    pub timestep: (f64, f64),
    /// Most steps per iteration (`maxstepsperiteration`).
    pub max_steps_per_iteration: u32,
    /// Largest extent of a body, metres (`maxbodysize`; see [`protocol::Shape::size`]).
    pub max_body_size: f64,
    /// Largest mass of a body, kg; −1 (static) is always allowed (`maxbodymass`).
    pub max_body_mass: f64,
    /// Most registered materials in a file (`maxmaterials`).
    pub max_materials: usize,
    /// Most material-pair interactions in a file (`maxinteractions`).
    pub max_interactions: usize,
}

impl LoadLimits {
    /// Why a body of `spec` is too large or too heavy (`maxbodysize`, `maxbodymass`), if so.
    pub fn body_too_large(&self, spec: &protocol::EntitySpec) -> Option<String> {
        let (bodies, _) = spec.structure();
        for b in bodies.iter() {
            let size = b.shape.size();
            if size.is_nan() || size > self.max_body_size {
                return Some(format!(
                    "body {} is {} m across, more than {} m (configuration key maxbodysize)",
                    b.id,
                    simrob_math::Shown::of(&size),
                    simrob_math::Shown::of(&self.max_body_size)
                ));
            }
            if let Some(m) = b.mass {
                if m != -1.0 && (m.is_nan() || m > self.max_body_mass) {
                    return Some(format!(
                        "body {} has a mass of {} kg, more than {} kg (configuration key maxbodymass; -1 is a static body)",
                        b.id,
                        simrob_math::Shown::of(&m),
                        simrob_math::Shown::of(&self.max_body_mass)
                    ));
                }
            }
        }
        None
    }
}

/// Default of [`LoadLimits::max_entities`].
pub const DEFAULT_MAX_ENTITIES: usize = 250;
/// Default of [`LoadLimits::max_bodies`].
pub const DEFAULT_MAX_BODIES: usize = 1000;
/// Default of [`LoadLimits::max_body_size`], metres: ten times a football pitch's width; a
/// ball of radius 10¹⁵ m once made every iteration diverge.
pub const DEFAULT_MAX_BODY_SIZE: f64 = 100.0;
/// Default of [`LoadLimits::max_body_mass`], kg.
pub const DEFAULT_MAX_BODY_MASS: f64 = 100_000.0;
/// Default of [`LoadLimits::max_materials`]: a SimRob world names a handful; each name may
/// be as long as a datagram, so a thousand stay within what a save file may hold.
pub const DEFAULT_MAX_MATERIALS: usize = 1000;
/// Default of [`LoadLimits::max_interactions`].
pub const DEFAULT_MAX_INTERACTIONS: usize = 10_000;

impl Default for LoadLimits {
    fn default() -> Self {
        LoadLimits {
            max_entities: DEFAULT_MAX_ENTITIES,
            max_bodies: DEFAULT_MAX_BODIES,
            max_position: 1e4,
            max_velocity: 1e4,
            max_gravity: 1000.0,
            timestep: (1e-5, 1.0),
            max_steps_per_iteration: 1000,
            max_body_size: DEFAULT_MAX_BODY_SIZE,
            max_body_mass: DEFAULT_MAX_BODY_MASS,
            max_materials: DEFAULT_MAX_MATERIALS,
            max_interactions: DEFAULT_MAX_INTERACTIONS,
        }
    }
}

/// How a load treated the file's engine state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EngineState {
    /// Sealed by this key: the engine resumed from it exactly.
    Resumed,
    /// Rebuilt from the readable part; the text says why the engine state was not used.
    Rebuilt(String),
}

/// How [`World::load_xml_with`] loads.
#[derive(Clone, Debug)]
pub struct LoadOptions<'k> {
    /// The key the engine state must be sealed with to be used; `None` never uses it.
    pub key: Option<&'k SaveKey>,
    /// Bounds on the file's contents.
    pub limits: LoadLimits,
}

impl Default for LoadOptions<'static> {
    fn default() -> Self {
        LoadOptions {
            key: Some(default_save_key()),
            limits: LoadLimits::default(),
        }
    }
}

fn check_range(what: &str, v: f64, max_abs: f64) -> Result<(), WorldError> {
    if v.is_finite() && v.abs() <= max_abs {
        Ok(())
    } else {
        Err(load_err(format!(
            "{what} {v} is out of range (at most {max_abs} in size)"
        )))
    }
}

/// Version of the save format written by this build.
pub const SAVE_VERSION: u32 = 1;

const STATE_TAG: &str = "<Physics_State";

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

fn unhex(text: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return Err("Physics_State has an odd number of hex digits (truncated?)".into());
    }
    let val = |c: u8| match c {
        b'0'..=b'9' => Ok(c - b'0'),
        b'a'..=b'f' => Ok(c - b'a' + 10),
        b'A'..=b'F' => Ok(c - b'A' + 10),
        _ => Err(format!(
            "Physics_State holds a non-hex character {:?}",
            c as char
        )),
    };
    digits
        .chunks(2)
        .map(|p| Ok(val(p[0])? << 4 | val(p[1])?))
        .collect()
}

fn load_err(e: impl std::fmt::Display) -> WorldError {
    WorldError::Load(e.to_string())
}

/// The session's flags a save file carries next to the world (`AutoAdjust_Mode`,
/// `Sync_Mode`, `Sync_Wait` in `<Parameters>`). The world keeps none of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionFlags {
    /// Auto-adjust: simulated time tracks wall time.
    pub auto_adjust: bool,
    /// Synchronous mode: each iteration waits for the synchronous agents.
    pub sync_mode: bool,
    /// Seconds; finite and ≥ 0.
    pub sync_wait: f64,
}

impl Default for SessionFlags {
    /// Off, off, and the SimRob manual's `syncwait` default (0.1 s).
    fn default() -> Self {
        SessionFlags {
            auto_adjust: false,
            sync_mode: false,
            sync_wait: 0.1,
        }
    }
}

fn session_flags_in(params: &Element) -> Result<SessionFlags, WorldError> {
    let sync_wait = params.child_f64("Sync_Wait").map_err(load_err)?;
    if !(sync_wait.is_finite() && sync_wait >= 0.0) {
        return Err(load_err(format!(
            "Sync_Wait must be a non-negative number of seconds, got {sync_wait}"
        )));
    }
    Ok(SessionFlags {
        auto_adjust: params.child_bool("AutoAdjust_Mode").map_err(load_err)?,
        sync_mode: params.child_bool("Sync_Mode").map_err(load_err)?,
        sync_wait,
    })
}

/// The session flags of a save file (read without loading it).
pub fn session_flags_of(xml: &str) -> Result<SessionFlags, WorldError> {
    let roots = parse_elements(xml).map_err(load_err)?;
    let params = roots
        .iter()
        .find(|r| r.name == "SimRob_Simulation")
        .ok_or_else(|| load_err("not a simrob save file (expected one <SimRob_Simulation> root)"))?
        .required_child("Parameters")
        .map_err(load_err)?;
    session_flags_in(params)
}

impl<P: PhysicsBackend + Default> World<P> {
    /// The whole simulation as an XML document (see the module docs of `save`), sealed with
    /// the default key.
    pub fn save_xml(&self) -> String {
        self.save_xml_sealed(default_save_key())
    }

    /// The whole simulation as an XML document, its engine state sealed with `key`; the
    /// session flags are written as their defaults (see [`World::save_xml_with_flags`]).
    pub fn save_xml_sealed(&self, key: &SaveKey) -> String {
        self.save_xml_with_flags(key, &SessionFlags::default())
    }

    /// The whole simulation as an XML document, its engine state sealed with `key`, with the
    /// session's `flags` in its parameters (the world does not act on them; the session reads
    /// them back with [`session_flags_of`]).
    pub fn save_xml_with_flags(&self, key: &SaveKey, flags: &SessionFlags) -> String {
        let keys = CommandKeys::default();
        let p = self.physics.params();
        let mut params = Element::new("Parameters");
        params.push(Element::leaf("Iteration", self.iteration));
        params.push(Element::leaf("Simulated_Time", self.sim_time));
        params.push(Element::leaf("Timestep", p.timestep));
        params.push(Element::leaf("Gravity", p.gravity));
        params.push(Element::leaf("World_Hardness", p.world_hardness));
        params.push(Element::leaf("World_Bounciness", p.world_bounciness));
        params.push(Element::leaf("Fast_Mode", p.fast_mode));
        params.push(Element::leaf(
            "Steps_Per_Iteration",
            self.modes.steps_per_iteration,
        ));
        params.push(Element::leaf("Step_Mode", self.modes.step_mode));
        params.push(Element::leaf("Pending_Steps", self.pending_steps));
        params.push(Element::leaf("AutoAdjust_Mode", flags.auto_adjust));
        params.push(Element::leaf("Sync_Mode", flags.sync_mode));
        params.push(Element::leaf("Sync_Wait", flags.sync_wait));
        params.push(Element::leaf("Initialized", self.modes.initialized));
        let d = p.default_interaction;
        params.push(contact_children(Element::new("Default_Interaction"), &d));

        let materials: Vec<Material> = self
            .materials
            .iter()
            .map(|(id, name)| Material {
                id: *id,
                name: name.clone(),
            })
            .collect();
        let interactions: Vec<WireInteraction> = self.interactions.values().cloned().collect();

        let mut entities = Element::new("Entities");
        let mut state = Element::new("State");
        for id in &self.creation_order {
            let Some(e) = self.entities.get(id) else {
                continue;
            };
            entities.push(entity_spec_element(&e.spec, &keys));
            for b in &e.bodies {
                let Ok(s) = self.physics.body_state(b.handle) else {
                    continue;
                };
                let mut el = Element::new("Body")
                    .with_attr("Entity_Id", id.to_string())
                    .with_attr("Body_id", b.body_id.to_string());
                el.push_vec3(["Position_X", "Position_Y", "Position_Z"], s.position);
                for (name, q) in [
                    "Quaternion_X",
                    "Quaternion_Y",
                    "Quaternion_Z",
                    "Quaternion_W",
                ]
                .into_iter()
                .zip(s.orientation)
                {
                    el.push(Element::leaf(name, protocol::real(q)));
                }
                el.push_vec3(
                    [
                        "Linear_Velocity_X",
                        "Linear_Velocity_Y",
                        "Linear_Velocity_Z",
                    ],
                    s.linear_velocity,
                );
                el.push_vec3(
                    [
                        "Angular_Velocity_X",
                        "Angular_Velocity_Y",
                        "Angular_Velocity_Z",
                    ],
                    s.angular_velocity,
                );
                state.push(el);
            }
            if let EntityKind::Robot { motors, .. } = &e.kind {
                for (wheel_joint, joint) in motors {
                    if let Ok(v) = self.physics.motor_velocity(*joint) {
                        state.push(
                            Element::leaf("Motor", v)
                                .with_attr("Entity_Id", id.to_string())
                                .with_attr("Wheel_Joint_Id", wheel_joint.to_string()),
                        );
                    }
                }
            }
        }
        // The readable part is written first; the seal covers it byte for byte, then the
        // engine state.
        let blob = self.physics.export_state();
        let placeholder = "0".repeat(64);
        let root = Element::new("SimRob_Simulation")
            .with_attr("Version", SAVE_VERSION.to_string())
            .with_child(params)
            .with_child(materials_element(&materials, &interactions, &keys))
            .with_child(entities)
            .with_child(state)
            .with_child(
                Element::new("Physics_State")
                    .with_attr("Encoding", "hex")
                    .with_attr("Seal", placeholder.clone())
                    .with_text(hex(&blob)),
            );
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        out.push_str(&root.to_xml_pretty());
        out.push('\n');
        if let Some(at) = out.find(STATE_TAG) {
            let seal = hex(&key.seal(&[&out.as_bytes()[..at], &blob]));
            if let Some(p) = out[at..].find(&placeholder) {
                out.replace_range(at + p..at + p + placeholder.len(), &seal);
            }
        }
        out
    }

    /// Replaces the simulation with the one in `xml`, with the default key and limits (see
    /// [`World::load_xml_with`]). On error nothing changes.
    pub fn load_xml(&mut self, xml: &str) -> Result<(), WorldError> {
        self.load_xml_with(xml, &LoadOptions::default()).map(|_| ())
    }

    /// Replaces the simulation with the one in `xml`: the engine resumes from the file's
    /// engine state when `options.key` seals it, else the world is rebuilt from the readable
    /// part (see the module docs). On error nothing changes.
    pub fn load_xml_with(
        &mut self,
        xml: &str,
        options: &LoadOptions<'_>,
    ) -> Result<EngineState, WorldError> {
        let (mut loaded, engine) = Self::from_save(self.config.clone(), xml, options)?;
        // The threads a step runs on belong to the shell that runs the world, not to the
        // simulation a file holds: the loaded world keeps this one's.
        loaded.set_physics_threads(self.physics_threads())?;
        *self = loaded;
        Ok(engine)
    }

    fn from_save(
        config: crate::WorldConfig,
        xml: &str,
        options: &LoadOptions<'_>,
    ) -> Result<(Self, EngineState), WorldError> {
        let limits = &options.limits;
        let roots = parse_elements(xml).map_err(load_err)?;
        let root = match roots.as_slice() {
            [r] if r.name == "SimRob_Simulation" => r,
            _ => {
                return Err(load_err(
                    "not a simrob save file (expected one <SimRob_Simulation> root)",
                ))
            }
        };
        match root.attr("Version").map(str::trim) {
            Some(v) if v == SAVE_VERSION.to_string() => {}
            Some(v) => {
                return Err(load_err(format!(
                    "save format version {v} is not supported (this build reads version {SAVE_VERSION})"
                )))
            }
            None => return Err(load_err("the Version attribute is missing")),
        }
        if let Some(entities) = root.child("Entities") {
            if entities.children.len() > limits.max_entities {
                return Err(load_err(format!(
                    "the file has {} entities, more than the {} allowed (maxentities)",
                    entities.children.len(),
                    limits.max_entities
                )));
            }
        }
        let mut world = World::<P>::with_backend(config);
        let params = root.required_child("Parameters").map_err(load_err)?;
        let mut p = world.physics.params();
        p.timestep = params.child_f64("Timestep").map_err(load_err)?;
        p.gravity = params.child_f64("Gravity").map_err(load_err)?;
        p.world_hardness = params.child_f64("World_Hardness").map_err(load_err)?;
        p.world_bounciness = params.child_f64("World_Bounciness").map_err(load_err)?;
        p.fast_mode = params.child_bool("Fast_Mode").map_err(load_err)?;
        if let Some(d) = params.child("Default_Interaction") {
            p.default_interaction = decode_contact(d).map_err(load_err)?;
        }
        check_range("Gravity", p.gravity, limits.max_gravity)?;
        if !(p.timestep.is_finite()
            && p.timestep >= limits.timestep.0
            && p.timestep <= limits.timestep.1)
        {
            return Err(load_err(format!(
                "Timestep {} is outside {} … {} s",
                p.timestep, limits.timestep.0, limits.timestep.1
            )));
        }
        for (what, v) in [
            ("World_Hardness", p.world_hardness),
            ("World_Bounciness", p.world_bounciness),
        ] {
            check_range(what, v, 1e9)?;
        }
        world.physics.set_params(&p).map_err(load_err)?;
        let steps = params.child_u32("Steps_Per_Iteration").map_err(load_err)?;
        if steps > limits.max_steps_per_iteration {
            return Err(load_err(format!(
                "Steps_Per_Iteration {steps} is more than the {} allowed (maxstepsperiteration)",
                limits.max_steps_per_iteration
            )));
        }
        world
            .apply_control(&ControlRequest::SetStepsPerIteration(steps))
            .map_err(load_err)?;
        session_flags_in(params)?;
        world.modes.step_mode = params.child_bool("Step_Mode").map_err(load_err)?;
        world.modes.initialized = params.child_bool("Initialized").map_err(load_err)?;
        world.pending_steps = params
            .opt_child_u64("Pending_Steps")
            .map_err(load_err)?
            .unwrap_or(0);
        world.iteration = params.child_u64("Iteration").map_err(load_err)?;
        world.sim_time = params.child_f64("Simulated_Time").map_err(load_err)?;
        if !(world.sim_time.is_finite() && world.sim_time >= 0.0) {
            return Err(load_err("Simulated_Time must be a finite number ≥ 0"));
        }

        if let Some(m) = root.children("Control_Request").next() {
            let (materials, interactions) = decode_materials_element(m).map_err(load_err)?;
            if materials.len() > limits.max_materials {
                return Err(load_err(format!(
                    "the file has {} materials, more than the {} allowed (maxmaterials)",
                    materials.len(),
                    limits.max_materials
                )));
            }
            if interactions.len() > limits.max_interactions {
                return Err(load_err(format!(
                    "the file has {} interactions, more than the {} allowed (maxinteractions)",
                    interactions.len(),
                    limits.max_interactions
                )));
            }
            world
                .apply_control(&ControlRequest::RegisterMaterialsInteractions {
                    materials,
                    interactions,
                })
                .map_err(load_err)?;
        }
        if let Some(entities) = root.child("Entities") {
            for el in &entities.children {
                let spec = decode_entity_spec_element(el).map_err(load_err)?;
                let bodies = match &spec {
                    protocol::EntitySpec::Robot { bodies, .. }
                    | protocol::EntitySpec::Field { bodies, .. } => bodies.len(),
                    protocol::EntitySpec::Ball { .. } => 1,
                    protocol::EntitySpec::Humanoid { .. } => simrob_soccer::humanoid::PARTS.len(),
                };
                if let Some(why) = limits.body_too_large(&spec) {
                    return Err(load_err(why));
                }
                if world.physics.body_count() + bodies > limits.max_bodies {
                    return Err(load_err(format!(
                        "the file has more than the {} bodies allowed (maxbodies)",
                        limits.max_bodies
                    )));
                }
                world.create_entity(&spec).map_err(load_err)?;
            }
        }

        let engine = match trusted_engine_state(xml, root, options.key) {
            Ok(bytes) => {
                // The file's readable poses are where the divergence guard puts a body back
                // should the engine's state of it not be finite.
                if world.restore_state(root.child("State"), limits).is_ok() {
                    world.note_finite_states();
                }
                // Sealed by this key: the engine wrote it, for exactly these entities.
                let (bodies, joints) = (world.physics.body_count(), world.physics.joint_count());
                world.physics.import_state(&bytes).map_err(load_err)?;
                if world.physics.body_count() != bodies || world.physics.joint_count() != joints {
                    return Err(load_err(
                        "Physics_State does not match the entities of the file",
                    ));
                }
                EngineState::Resumed
            }
            Err(why) => {
                world.restore_state(root.child("State"), limits)?;
                EngineState::Rebuilt(why)
            }
        };
        Ok((world, engine))
    }

    /// Places bodies and sets motors from a `<State>` element (files without Physics_State).
    fn restore_state(
        &mut self,
        state: Option<&Element>,
        limits: &LoadLimits,
    ) -> Result<(), WorldError> {
        let Some(state) = state else {
            return Ok(());
        };
        for el in &state.children {
            let attr_u32 = |name: &str| -> Result<u32, WorldError> {
                el.required_attr(name)
                    .map_err(load_err)?
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| load_err(format!("State/{}: {name} is not an id", el.name)))
            };
            let entity = EntityId(attr_u32("Entity_Id")?);
            match el.name.as_str() {
                "Body" => {
                    let body_id = attr_u32("Body_id")?;
                    let handle = self
                        .entities
                        .get(&entity)
                        .and_then(|e| e.bodies.iter().find(|b| b.body_id == body_id))
                        .map(|b| b.handle)
                        .ok_or_else(|| {
                            load_err(format!(
                                "State: body {body_id} of entity {entity} does not exist"
                            ))
                        })?;
                    let q = [
                        el.child_f64("Quaternion_X").map_err(load_err)?,
                        el.child_f64("Quaternion_Y").map_err(load_err)?,
                        el.child_f64("Quaternion_Z").map_err(load_err)?,
                        el.child_f64("Quaternion_W").map_err(load_err)?,
                    ];
                    let s = BodyState {
                        position: el
                            .child_vec3(["Position_X", "Position_Y", "Position_Z"])
                            .map_err(load_err)?,
                        orientation: q,
                        linear_velocity: el
                            .child_vec3([
                                "Linear_Velocity_X",
                                "Linear_Velocity_Y",
                                "Linear_Velocity_Z",
                            ])
                            .map_err(load_err)?,
                        angular_velocity: el
                            .child_vec3([
                                "Angular_Velocity_X",
                                "Angular_Velocity_Y",
                                "Angular_Velocity_Z",
                            ])
                            .map_err(load_err)?,
                    };
                    for v in s.position {
                        check_range("State: a position", v, limits.max_position)?;
                    }
                    for v in s.linear_velocity.iter().chain(&s.angular_velocity) {
                        check_range("State: a velocity", *v, limits.max_velocity)?;
                    }
                    for v in s.orientation {
                        check_range("State: a quaternion component", v, 1.0 + 1e-6)?;
                    }
                    self.physics.set_body_state(handle, &s).map_err(load_err)?;
                }
                "Motor" => {
                    let wheel_joint = attr_u32("Wheel_Joint_Id")?;
                    let value = el.text_f64().map_err(load_err)?;
                    self.apply_entity(&simrob_protocol::EntityRequest::RobotMotorControl {
                        entity_id: entity,
                        motors: vec![simrob_protocol::MotorCommand {
                            wheel_joint_id: wheel_joint,
                            value,
                        }],
                    })
                    .map_err(load_err)?;
                }
                other => return Err(load_err(format!("State: unexpected element <{other}>"))),
            }
        }
        Ok(())
    }
}

/// The file's engine state, if it is sealed with `key`; else why not.
fn trusted_engine_state(
    xml: &str,
    root: &Element,
    key: Option<&SaveKey>,
) -> Result<Vec<u8>, String> {
    let Some(ps) = root.child("Physics_State") else {
        return Err("the file has no engine state".into());
    };
    let Some(key) = key else {
        return Err("engine states are not trusted here".into());
    };
    // The seal covers the text up to the one Physics_State element, which must come last.
    let at = match xml.match_indices(STATE_TAG).collect::<Vec<_>>()[..] {
        [(at, _)] => at,
        _ => return Err("the file must have exactly one Physics_State".into()),
    };
    if root.children.last().map(|c| c.name.as_str()) != Some("Physics_State") {
        return Err("Physics_State must be the last element".into());
    }
    let seal = ps
        .attr("Seal")
        .ok_or("the engine state is not sealed")?
        .trim();
    let bytes = unhex(ps.text())?;
    let want = hex(&key.seal(&[&xml.as_bytes()[..at], &bytes]));
    if !constant_time_eq(want.as_bytes(), seal.as_bytes()) {
        return Err("the engine state was not sealed by this server's key".into());
    }
    Ok(bytes)
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip_and_errors() {
        let data = [0u8, 1, 127, 128, 255];
        assert_eq!(unhex(&hex(&data)).unwrap(), data);
        assert!(unhex("abc").is_err());
        assert!(unhex("zz").is_err());
    }
}
