//! Humanoid robots in the 3D world, and the ball's rolling resistance.
//!
//! A humanoid (`simrob_soccer::Humanoid`) is moved by its timed actions, not by forces: every
//! physics step the world advances each humanoid's motion and places its six body boxes (trunk,
//! head, arms, feet) where the motion puts them. The boxes are static bodies for the engine —
//! moved by the world, never pushed — so the ball collides with them like with any wall: a
//! walking robot pushes the ball, a diving keeper's body and stretched arm stop what they cover
//! and nothing else. Robots do not walk into each other or the field's upright cylinders
//! (goal posts, landmark poles): a step that would end inside one while closing on it slides
//! along it — it keeps only its part along the tangent there, as a body brushing past another
//! does, so a step 65° off the line to a robot it touches still covers 91 % of its length —
//! and a step straight into one, into two at once, or whose slide still closes on one, is
//! stopped where it is.
//!
//! A kick strikes at its strike moment: a ball within the kicking foot's reach
//! (`Humanoid::kick_reaches`: in front of the toe by at most the table's reach, near the foot's
//! axis, on the floor) leaves along the robot's heading at the table's kick speed, rolling;
//! any other ball is not touched. Feet that strike one ball in the same step add their kicks,
//! and every robot moves against where the others stood at the start of the step: the order
//! the world steps robots in (their ids) decides nothing.
//!
//! **Rolling resistance.** rapier has no rolling friction, so a ball rolling on a flat floor
//! would never stop. The world adds it: after every physics step, a ball resting on a body
//! (a ray down from its centre meets something within its radius + 3 mm) whose material pair
//! with the ball has a rolling-resistance coefficient `C` loses `C·|g|·dt` of its horizontal
//! speed, its spin scaled alike, down to rest — a constant deceleration, the classic model of a
//! ball on carpet. On the KidSize carpet (`C` = 0.06) a ball kicked at 1.12 m/s rolls 1.05 m.

use std::collections::BTreeMap;

use simrob_math::Xoshiro256StarStar;
use simrob_physics::{euler_to_quat, BodyDesc, BodyId, BodyState, PhysicsBackend};
use simrob_protocol::{EntityId, EntitySpec, MaterialId, Shape};
use simrob_soccer::camera::{RobotView, SceneView};
use simrob_soccer::humanoid::{PARTS, PART_SIZES};
use simrob_soccer::{
    Action, Humanoid, HumanoidEvent, KidSizeField, MotionNoise, MotionTable, Pose2, Profile, Team,
};

use crate::entity::{Entity, EntityBody, EntityKind};
use crate::WorldError;

/// How to create a humanoid (the `Create_Entity Type="Humanoid"` payload).
#[derive(Debug, Clone, PartialEq)]
pub struct HumanoidSpec {
    /// The new entity's id.
    pub entity_id: EntityId,
    /// The team it plays for.
    pub team: Team,
    /// Where it stands (m) and its heading (rad, counter-clockwise from +X).
    pub pose: Pose2,
    /// Motion noise and falls: `paper` or `ideal`.
    pub profile: String,
    /// Seed of its noise stream; `None` = its entity id.
    pub seed: Option<u64>,
    /// Material of its bodies; `None` = its team's KidSize material (14 cyan, 15 magenta)
    /// when registered, else the default body material.
    pub material: Option<MaterialId>,
}

impl HumanoidSpec {
    /// The `Create_Entity` payload of this humanoid.
    pub fn to_wire(&self) -> EntitySpec {
        EntitySpec::Humanoid {
            entity_id: self.entity_id,
            team: self.team.as_str().to_string(),
            position: [self.pose.x, self.pose.y],
            heading: self.pose.heading,
            profile: Some(self.profile.clone()),
            seed: self.seed,
            material: self.material,
        }
    }

    /// Reads a `Create_Entity Type="Humanoid"` payload.
    pub fn from_wire(spec: &EntitySpec) -> Result<HumanoidSpec, WorldError> {
        let EntitySpec::Humanoid {
            entity_id,
            team,
            position,
            heading,
            profile,
            seed,
            material,
        } = spec
        else {
            return Err(WorldError::Invalid(format!(
                "entity {} is a {}, not a Humanoid",
                spec.entity_id(),
                spec.type_name()
            )));
        };
        let team = Team::parse(team).ok_or_else(|| {
            WorldError::Invalid(format!(
                "Create_Entity Humanoid {entity_id}: Team must be cyan or magenta, got \"{team}\""
            ))
        })?;
        Ok(HumanoidSpec {
            entity_id: *entity_id,
            team,
            pose: Pose2 {
                x: position[0],
                y: position[1],
                heading: *heading,
            },
            profile: profile.clone().unwrap_or_else(|| "paper".to_string()),
            seed: *seed,
            material: *material,
        })
    }
}

/// One humanoid entity: its motion state and its engine bodies.
#[derive(Debug, Clone)]
pub(crate) struct HumanoidEntity {
    pub spec: HumanoidSpec,
    pub model: Humanoid,
    pub noise: MotionNoise,
    pub parts: [BodyId; 6],
    /// Where the parts were last put (unchanged poses are not sent to the engine again).
    pub placed: Option<[simrob_soccer::humanoid::PartPose; 6]>,
}

/// Everything the world keeps for humanoid soccer: humanoids, the motion table and the
/// rolling resistance of material pairs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Soccer {
    pub humanoids: BTreeMap<EntityId, HumanoidEntity>,
    pub table: MotionTable,
    /// Rolling-resistance coefficient per unordered material pair.
    pub rolling: BTreeMap<(MaterialId, MaterialId), f64>,
    /// Material of each engine body (index = body id), refreshed when bodies are added.
    materials: Vec<MaterialId>,
}

fn part_state(p: &simrob_soccer::humanoid::PartPose) -> BodyState {
    BodyState {
        position: p.position,
        orientation: euler_to_quat(p.rotation),
        linear_velocity: [0.0; 3],
        angular_velocity: [0.0; 3],
    }
}

/// Every ball's sphere and its radius.
fn balls(entities: &BTreeMap<EntityId, Entity>) -> impl Iterator<Item = (&EntityBody, f64)> {
    entities
        .values()
        .filter_map(|e| match (&e.kind, e.bodies.first()) {
            (EntityKind::Ball, Some(b)) => match b.shape {
                Shape::Sphere { radius } => Some((b, radius)),
                _ => None,
            },
            _ => None,
        })
}

fn pair(a: MaterialId, b: MaterialId) -> (MaterialId, MaterialId) {
    (a.min(b), a.max(b))
}

impl Soccer {
    /// Validates a humanoid; nothing is changed.
    pub fn check(spec: &HumanoidSpec) -> Result<Profile, WorldError> {
        let eid = spec.entity_id;
        let p = spec.pose;
        if !(p.x.is_finite() && p.y.is_finite() && p.heading.is_finite()) {
            return Err(WorldError::Invalid(format!(
                "Create_Entity Humanoid {eid}: position and heading must be finite numbers"
            )));
        }
        Profile::named(&spec.profile).ok_or_else(|| {
            WorldError::Invalid(format!(
                "Create_Entity Humanoid {eid}: unknown profile \"{}\" (profiles: paper, ideal)",
                spec.profile
            ))
        })
    }

    /// Adds the humanoid's bodies to the engine and its motion model to the table; returns
    /// the bodies. On error the caller truncates the engine.
    pub fn build<P: PhysicsBackend>(
        &mut self,
        physics: &mut P,
        spec: &HumanoidSpec,
        profile: Profile,
        material: MaterialId,
    ) -> Result<Vec<EntityBody>, WorldError> {
        let rng = Xoshiro256StarStar::for_stream(
            spec.seed.unwrap_or(u64::from(spec.entity_id.0)),
            0x4855_4d41,
        );
        let model = Humanoid::new(spec.entity_id.0, spec.team, spec.pose, rng);
        let poses = model.part_poses(&self.table);
        let mut parts = [BodyId(0); 6];
        let mut bodies = Vec::with_capacity(6);
        for (i, pose) in poses.iter().enumerate() {
            let desc = BodyDesc {
                shape: Shape::Box {
                    size: PART_SIZES[i],
                },
                mass: -1.0,
                material,
                position: pose.position,
                orientation: euler_to_quat(pose.rotation),
            };
            parts[i] = physics.add_body(&desc).map_err(|e| {
                WorldError::Invalid(format!(
                    "Create_Entity Humanoid {}: {} {e}",
                    spec.entity_id, PARTS[i]
                ))
            })?;
            bodies.push(EntityBody {
                body_id: i as u32,
                handle: parts[i],
                shape: desc.shape,
                material,
                mass: -1.0,
            });
        }
        self.humanoids.insert(
            spec.entity_id,
            HumanoidEntity {
                spec: spec.clone(),
                model,
                noise: profile.motion,
                parts,
                placed: None,
            },
        );
        Ok(bodies)
    }

    /// Asks humanoid `id` for an action; the confirmation text.
    pub fn request(&mut self, id: EntityId, action: Action) -> Result<String, WorldError> {
        let h = self
            .humanoids
            .get_mut(&id)
            .ok_or(WorldError::UnknownEntity(id))?;
        let text = action.to_string();
        match h.model.request(action, &self.table) {
            Ok(Some(seq)) => Ok(format!("robot {id}: {text} is action {seq}")),
            Ok(None) => Ok(format!("robot {id}: {text} is already running")),
            Err(e) => Err(WorldError::NotNow(format!("robot {id}: {e}"))),
        }
    }

    /// Upright cylinders of the fields (posts, poles) as discs (x, y, radius).
    fn obstacles(
        entities: &BTreeMap<EntityId, Entity>,
        physics: &impl PhysicsBackend,
    ) -> Vec<[f64; 3]> {
        let mut out = Vec::new();
        for e in entities.values() {
            if !matches!(e.kind, EntityKind::Field) {
                continue;
            }
            for b in &e.bodies {
                if let Shape::Cylinder { radius, .. } = b.shape {
                    if let Ok(s) = physics.body_state(b.handle) {
                        // Upright: the body's Z axis stays vertical.
                        let z = simrob_physics::rotate(s.orientation, [0.0, 0.0, 1.0]);
                        if z[2] > 0.99 {
                            out.push([s.position[0], s.position[1], radius]);
                        }
                    }
                }
            }
        }
        out
    }

    /// Before a physics step of `dt` s: advance every humanoid, strike balls, place the bodies.
    pub fn before_step<P: PhysicsBackend>(
        &mut self,
        physics: &mut P,
        entities: &BTreeMap<EntityId, Entity>,
        dt: f64,
    ) {
        if self.humanoids.is_empty() {
            return;
        }
        let obstacles = Self::obstacles(entities, physics);
        let radius = simrob_soccer::humanoid::body_radius(&self.table);
        // Every robot moves against where the others stood at the start of the step, and the
        // strikes of one step land together: the order robots are stepped in (their ids)
        // decides nothing — two robots stepping into one gap, or kicking one ball at once,
        // are treated alike.
        let start: Vec<(EntityId, [f64; 2])> = self
            .humanoids
            .iter()
            .map(|(k, h)| {
                let p = h.model.pose();
                (*k, [p.x, p.y])
            })
            .collect();
        let mut strikes: Vec<(BodyId, f64, [f64; 3])> = Vec::new();
        for &(id, _) in &start {
            let others: Vec<[f64; 2]> = start
                .iter()
                .filter(|(k, _)| *k != id)
                .map(|(_, p)| *p)
                .collect();
            let Some(h) = self.humanoids.get_mut(&id) else {
                continue;
            };
            // A move that ends inside another robot or a post while closing on it slides along
            // it: it keeps only its part along the tangent there, as a body brushing past
            // another does. Into two at once, or when what is left of it still closes on one,
            // it stops.
            let reach = |from: Pose2, to: Pose2| {
                let all = others
                    .iter()
                    .map(|o| [o[0], o[1], radius])
                    .chain(obstacles.iter().copied());
                let closes_on = |p: Pose2, o: &[f64; 3]| {
                    let d_new = (p.x - o[0]).hypot(p.y - o[1]);
                    d_new < radius + o[2] && d_new < (from.x - o[0]).hypot(from.y - o[1])
                };
                let mut touched = all.clone().filter(|o| closes_on(to, o));
                let Some(o) = touched.next() else {
                    return to;
                };
                if touched.next().is_some() {
                    return from;
                }
                let (nx, ny) = (from.x - o[0], from.y - o[1]);
                let n = nx.hypot(ny);
                if n == 0.0 {
                    return from;
                }
                let (nx, ny) = (nx / n, ny / n);
                let (sx, sy) = (to.x - from.x, to.y - from.y);
                let into = sx * nx + sy * ny;
                let slid = Pose2 {
                    x: from.x + sx - into * nx,
                    y: from.y + sy - into * ny,
                    ..to
                };
                if all.clone().any(|o| closes_on(slid, &o)) {
                    from
                } else {
                    slid
                }
            };
            let events = h.model.advance(dt, &self.table, &h.noise, &reach);
            for e in events {
                if let HumanoidEvent::Strike {
                    side,
                    speed,
                    heading,
                } = e
                {
                    for (body, r) in balls(entities) {
                        let Ok(s) = physics.body_state(body.handle) else {
                            continue;
                        };
                        if h.model.kick_reaches(side, s.position, r, &self.table) {
                            let (sn, cs) = heading.sin_cos();
                            strikes.push((body.handle, r, [speed * cs, speed * sn, 0.0]));
                        }
                    }
                }
            }
            let poses = h.model.part_poses(&self.table);
            if h.placed.as_ref() != Some(&poses) {
                for (i, p) in poses.iter().enumerate() {
                    if h.placed.as_ref().map(|q| &q[i]) != Some(p) {
                        let _ = physics.set_body_state(h.parts[i], &part_state(p));
                    }
                }
                h.placed = Some(poses);
            }
        }
        // A ball struck by several feet in one step leaves with the sum of their velocities.
        strikes.sort_by_key(|(b, _, _)| b.index());
        for group in strikes.chunk_by(|a, b| a.0 == b.0) {
            let (body, r, _) = group[0];
            let v = group.iter().fold([0.0; 3], |acc, (_, _, v)| {
                [acc[0] + v[0], acc[1] + v[1], acc[2] + v[2]]
            });
            if let Ok(mut s) = physics.body_state(body) {
                s.linear_velocity = v;
                s.angular_velocity = [-v[1] / r, v[0] / r, 0.0];
                let _ = physics.set_body_state(body, &s);
            }
        }
    }

    fn refresh_materials<P: PhysicsBackend>(
        &mut self,
        physics: &P,
        entities: &BTreeMap<EntityId, Entity>,
    ) {
        if self.materials.len() == physics.body_count() {
            return;
        }
        self.materials = vec![MaterialId(u32::MAX); physics.body_count()];
        for e in entities.values() {
            for b in &e.bodies {
                if let Some(m) = self.materials.get_mut(b.handle.index()) {
                    *m = b.material;
                }
            }
        }
    }

    /// After a physics step of `dt` s: rolling resistance on every ball resting on something.
    pub fn after_step<P: PhysicsBackend>(
        &mut self,
        physics: &mut P,
        entities: &BTreeMap<EntityId, Entity>,
        dt: f64,
    ) {
        if self.rolling.is_empty() {
            return;
        }
        self.refresh_materials(physics, entities);
        let g = physics.params().gravity.abs();
        for (body, radius) in balls(entities) {
            let Ok(mut s) = physics.body_state(body.handle) else {
                continue;
            };
            let Some(hit) =
                physics.cast_ray(s.position, [0.0, 0.0, -1.0], radius + 0.003, &[body.handle])
            else {
                continue;
            };
            let other = self
                .materials
                .get(hit.body.index())
                .copied()
                .unwrap_or(MaterialId(u32::MAX));
            let Some(&c) = self.rolling.get(&pair(body.material, other)) else {
                continue;
            };
            let [vx, vy, _] = s.linear_velocity;
            let speed = vx.hypot(vy);
            if speed == 0.0 {
                continue;
            }
            let k = (speed - c * g * dt).max(0.0) / speed;
            s.linear_velocity[0] *= k;
            s.linear_velocity[1] *= k;
            s.angular_velocity[0] *= k;
            s.angular_velocity[1] *= k;
            let _ = physics.set_body_state(body.handle, &s);
        }
    }

    /// The scene as the humanoids' cameras see it.
    pub fn scene_view<P: PhysicsBackend>(
        &self,
        physics: &P,
        entities: &BTreeMap<EntityId, Entity>,
        time: f64,
        field: &KidSizeField,
    ) -> SceneView {
        let balls = balls(entities)
            .filter_map(|(b, _)| physics.body_state(b.handle).ok())
            .map(|s| s.position)
            .collect();
        let robots = self
            .humanoids
            .values()
            .map(|h| RobotView {
                id: h.spec.entity_id.0,
                team: h.model.team,
                pose: h.model.pose(),
                head: h.model.head(),
                posture: h.model.posture(),
                camera_ready: h.model.camera().is_some(),
            })
            .collect();
        SceneView {
            time,
            field: field.clone(),
            balls,
            robots,
        }
    }
}

/// The rolling-resistance pair key (unordered).
pub(crate) fn rolling_key(a: MaterialId, b: MaterialId) -> (MaterialId, MaterialId) {
    pair(a, b)
}

impl<P: PhysicsBackend + Default> crate::World<P> {
    /// Creates a humanoid robot (what `Create_Entity Type="Humanoid"` does). Refused — and
    /// nothing changed — when the id is taken or a value is invalid.
    pub fn create_humanoid(&mut self, spec: &HumanoidSpec) -> Result<(), WorldError> {
        self.apply_control(&simrob_protocol::ControlRequest::CreateEntity(
            spec.to_wire(),
        ))
        .map(|_| ())
    }

    /// `Create_Entity` of a humanoid: validate, build its bodies, record it.
    pub(crate) fn create_humanoid_entity(&mut self, wire: &EntitySpec) -> Result<(), WorldError> {
        let spec = HumanoidSpec::from_wire(wire)?;
        let id = spec.entity_id;
        let profile = Soccer::check(&spec)?;
        let material = match spec.material {
            Some(m) if self.material_known(m) => m,
            Some(m) => {
                return Err(WorldError::Invalid(format!(
                    "Create_Entity Humanoid {id}: material {m} is not registered (send Register_Materials_Interactions first)"
                )))
            }
            None if self.material_known(spec.team.material()) => spec.team.material(),
            None => self.config.default_body_material,
        };
        let (bodies, joints) = (self.physics.body_count(), self.physics.joint_count());
        match self
            .soccer
            .build(&mut self.physics, &spec, profile, material)
        {
            Ok(parts) => {
                let reference = parts[0].handle;
                self.entities.insert(
                    id,
                    Entity {
                        spec: wire.clone(),
                        kind: EntityKind::Humanoid { reference },
                        bodies: parts,
                    },
                );
                self.creation_order.push(id);
                Ok(())
            }
            Err(e) => {
                self.physics.truncate(bodies, joints);
                Err(e)
            }
        }
    }

    /// Asks humanoid `id` for an action by FutRob's name and parameters (the
    /// `Humanoid_Action` request); returns the confirmation. Refused, changing nothing, for an
    /// unknown robot, action or parameter, a value out of range, or a robot that is down.
    pub fn humanoid_action(
        &mut self,
        id: EntityId,
        name: &str,
        params: &[(String, String)],
    ) -> Result<String, WorldError> {
        if !self.soccer.humanoids.contains_key(&id) {
            return Err(match self.entities.get(&id) {
                Some(e) => WorldError::Invalid(format!(
                    "Humanoid_Action: entity {id} is a {}, not a Humanoid",
                    e.spec.type_name()
                )),
                None => WorldError::UnknownEntity(id),
            });
        }
        let action = Action::parse(name, params)
            .map_err(|e| WorldError::Invalid(format!("robot {id}: {e}")))?;
        self.soccer.request(id, action)
    }

    /// A humanoid's motion state (pose, head, posture, actions).
    pub fn humanoid(&self, id: EntityId) -> Option<&Humanoid> {
        self.soccer.humanoids.get(&id).map(|h| &h.model)
    }

    /// Ids of the humanoids, ascending.
    pub fn humanoid_ids(&self) -> impl Iterator<Item = EntityId> + '_ {
        self.soccer.humanoids.keys().copied()
    }

    /// Puts humanoid `id` at `pose`, standing, head level, its running and waiting actions ending `interrupted`.
    pub fn place_humanoid(&mut self, id: EntityId, pose: Pose2) -> Result<(), WorldError> {
        if !(pose.x.is_finite() && pose.y.is_finite() && pose.heading.is_finite()) {
            return Err(WorldError::Invalid(
                "a humanoid's position and heading must be finite numbers".into(),
            ));
        }
        let table = self.soccer.table;
        let h = self
            .soccer
            .humanoids
            .get_mut(&id)
            .ok_or(WorldError::UnknownEntity(id))?;
        h.model.place(pose);
        let poses = h.model.part_poses(&table);
        for (i, p) in poses.iter().enumerate() {
            let _ = self.physics.set_body_state(h.parts[i], &part_state(p));
        }
        h.placed = Some(poses);
        Ok(())
    }

    /// The durations and distances of the humanoids' motions.
    pub fn motion_table(&self) -> &MotionTable {
        &self.soccer.table
    }

    /// Replaces the motion table (durations, step lengths, kick) for every humanoid.
    pub fn set_motion_table(&mut self, table: MotionTable) {
        self.soccer.table = table;
    }

    /// Sets the rolling-resistance coefficient (deceleration = `c`·|g|) of a ball of material
    /// `a` resting on material `b` (or the reverse); 0 removes it.
    pub fn set_rolling_resistance(
        &mut self,
        a: MaterialId,
        b: MaterialId,
        c: f64,
    ) -> Result<(), WorldError> {
        if !(c.is_finite() && c >= 0.0) {
            return Err(WorldError::Invalid(format!(
                "rolling resistance must be a non-negative number, got {c}"
            )));
        }
        if c == 0.0 {
            self.soccer.rolling.remove(&rolling_key(a, b));
        } else {
            self.soccer.rolling.insert(rolling_key(a, b), c);
        }
        Ok(())
    }

    /// The scene as the humanoids' cameras see it, on `field`
    /// (see `simrob_soccer::camera::look`).
    pub fn scene_view(&self, field: &KidSizeField) -> SceneView {
        self.soccer
            .scene_view(&self.physics, &self.entities, self.sim_time, field)
    }
}

impl<P: PhysicsBackend + Default> crate::World<P> {
    /// A SimRob entity request addressed to a humanoid.
    pub(crate) fn apply_humanoid_request(
        &mut self,
        request: &simrob_protocol::EntityRequest,
    ) -> Result<String, WorldError> {
        use simrob_protocol::EntityRequest as E;
        let id = request.entity_id();
        match request {
            E::SetEntityPosition { position, .. } => {
                let heading = self
                    .humanoid(id)
                    .map(|h| h.pose().heading)
                    .ok_or(WorldError::UnknownEntity(id))?;
                if !position.iter().all(|v| v.is_finite()) {
                    return Err(WorldError::Invalid(
                        "Set_Entity_Position: position must be finite numbers".into(),
                    ));
                }
                self.place_humanoid(
                    id,
                    Pose2 {
                        x: position[0],
                        y: position[1],
                        heading,
                    },
                )?;
                Ok(format!(
                    "Humanoid {id} placed at ({}, {})",
                    position[0], position[1]
                ))
            }
            E::HumanoidAction { name, params, .. } => self.humanoid_action(id, name, params),
            E::RobotMotorControl { .. } => Err(WorldError::Invalid(format!(
                "Robot_Motor_Control: entity {id} is a Humanoid; it has no wheel motors (use Humanoid_Action)"
            ))),
        }
    }
}

impl crate::World<crate::RapierBackend> {
    /// A KidSize scene ready to run: the materials, the carpet's rolling resistance for the
    /// ball, the field and the ball on the centre spot
    /// (`simrob_soccer::KidSizeField::scene_requests`, the content of
    /// `scenarios/soccer/kidsize.xml`), and the simulation initialized. Add humanoids with [`World::create_humanoid`](crate::World::create_humanoid).
    pub fn kidsize(config: crate::WorldConfig, field: &KidSizeField) -> Result<Self, WorldError> {
        let mut world = crate::World::new(config);
        for r in field.scene_requests() {
            world.apply_control(&r)?;
        }
        world.apply_control(&simrob_protocol::ControlRequest::InitializeSimulation)?;
        Ok(world)
    }
}

impl<P: PhysicsBackend + Default> crate::World<P> {
    /// Writes each humanoid's current place and heading into its creation request, so that a
    /// save file rebuilds it where it stands (a running action, the head's angles and the
    /// noise stream start afresh after a load).
    pub(crate) fn record_humanoid_poses(&mut self) {
        for (id, h) in &self.soccer.humanoids {
            let pose = h.model.pose();
            if let Some(Entity {
                spec:
                    EntitySpec::Humanoid {
                        position, heading, ..
                    },
                ..
            }) = self.entities.get_mut(id)
            {
                *position = [pose.x, pose.y];
                *heading = pose.heading;
            }
        }
    }
}
