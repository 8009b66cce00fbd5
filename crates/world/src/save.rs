//! Save and Load (seed 000 §2.16–§2.17, SPEC S15): the whole simulation as one XML document.
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
//!   <Physics_State Encoding="hex"> the engine's complete state </Physics_State>
//! </SimRob_Simulation>
//! ```
//!
//! Everything above `Physics_State` is readable and editable. When `Physics_State` is present
//! (always, in files simrob writes) the engine resumes from it exactly, contact warm-starts
//! included, so a loaded run continues bit for bit like one that never stopped. Without it
//! (a hand-written file) the bodies are placed from `State`. Numbers are written in Rust's
//! shortest round-trip form, so f64 values survive the text exactly.
//!
//! Loading builds a complete new world first and replaces the running one only on success: a
//! corrupt or truncated file is refused with the reason and the running world is untouched.

use simrob_physics::{BodyState, PhysicsBackend};
use simrob_protocol::tree::{parse_elements, Element};
use simrob_protocol::{
    decode_entity_spec_element, decode_materials_element, entity_spec_element, materials_element,
    CommandKeys, ControlRequest, Interaction as WireInteraction, Material,
};

use crate::{EntityKind, World, WorldError};

/// Version of the save format written by this build.
pub const SAVE_VERSION: u32 = 1;

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
    if digits.len() % 2 != 0 {
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

impl<P: PhysicsBackend + Default> World<P> {
    /// The whole simulation as an XML document (see the module docs of `save`).
    pub fn save_xml(&self) -> String {
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
        params.push(Element::leaf("AutoAdjust_Mode", self.modes.auto_adjust));
        params.push(Element::leaf("Sync_Mode", self.modes.sync_mode));
        params.push(Element::leaf("Sync_Wait", self.modes.sync_wait));
        params.push(Element::leaf("Initialized", self.modes.initialized));
        let d = p.default_interaction;
        params.push(
            Element::new("Default_Interaction")
                .with_child(Element::leaf("Hardness", d.hardness))
                .with_child(Element::leaf("Bounciness", d.bounciness))
                .with_child(Element::leaf("Slip1", d.slip1))
                .with_child(Element::leaf("Slip2", d.slip2))
                .with_child(Element::leaf("Friction", d.friction)),
        );

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
                el.push(Element::leaf("Quaternion_X", s.orientation[0]));
                el.push(Element::leaf("Quaternion_Y", s.orientation[1]));
                el.push(Element::leaf("Quaternion_Z", s.orientation[2]));
                el.push(Element::leaf("Quaternion_W", s.orientation[3]));
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
        let root = Element::new("SimRob_Simulation")
            .with_attr("Version", SAVE_VERSION.to_string())
            .with_child(params)
            .with_child(materials_element(&materials, &interactions, &keys))
            .with_child(entities)
            .with_child(state)
            .with_child(
                Element::new("Physics_State")
                    .with_attr("Encoding", "hex")
                    .with_text(hex(&self.physics.export_state())),
            );
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        out.push_str(&root.to_xml_pretty());
        out.push('\n');
        out
    }

    /// Replaces the simulation with the one in `xml` (written by [`World::save_xml`]). On error
    /// nothing changes.
    pub fn load_xml(&mut self, xml: &str) -> Result<(), WorldError> {
        let loaded = Self::from_save(self.config.clone(), xml)?;
        *self = loaded;
        Ok(())
    }

    fn from_save(config: crate::WorldConfig, xml: &str) -> Result<Self, WorldError> {
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
        let mut world = World::<P>::with_backend(config);
        let params = root.required_child("Parameters").map_err(load_err)?;
        let mut p = world.physics.params();
        p.timestep = params.child_f64("Timestep").map_err(load_err)?;
        p.gravity = params.child_f64("Gravity").map_err(load_err)?;
        p.world_hardness = params.child_f64("World_Hardness").map_err(load_err)?;
        p.world_bounciness = params.child_f64("World_Bounciness").map_err(load_err)?;
        p.fast_mode = params.child_bool("Fast_Mode").map_err(load_err)?;
        if let Some(d) = params.child("Default_Interaction") {
            p.default_interaction = simrob_physics::Interaction {
                hardness: d.child_f64("Hardness").map_err(load_err)?,
                bounciness: d.child_f64("Bounciness").map_err(load_err)?,
                slip1: d.child_f64("Slip1").map_err(load_err)?,
                slip2: d.child_f64("Slip2").map_err(load_err)?,
                friction: d.child_f64("Friction").map_err(load_err)?,
            };
        }
        world.physics.set_params(&p).map_err(load_err)?;
        let steps = params.child_u32("Steps_Per_Iteration").map_err(load_err)?;
        world
            .apply_control(&ControlRequest::SetStepsPerIteration(steps))
            .map_err(load_err)?;
        world
            .apply_control(&ControlRequest::SetSyncWait(
                params.child_f64("Sync_Wait").map_err(load_err)?,
            ))
            .map_err(load_err)?;
        world.modes.step_mode = params.child_bool("Step_Mode").map_err(load_err)?;
        world.modes.auto_adjust = params.child_bool("AutoAdjust_Mode").map_err(load_err)?;
        world.modes.sync_mode = params.child_bool("Sync_Mode").map_err(load_err)?;
        world.modes.initialized = params.child_bool("Initialized").map_err(load_err)?;
        world.pending_steps = params
            .opt_child_u64("Pending_Steps")
            .map_err(load_err)?
            .unwrap_or(0);
        world.iteration = params.child_u64("Iteration").map_err(load_err)?;
        world.sim_time = params.child_f64("Simulated_Time").map_err(load_err)?;

        if let Some(m) = root.children("Control_Request").next() {
            let (materials, interactions) = decode_materials_element(m).map_err(load_err)?;
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
                world.create_entity(&spec).map_err(load_err)?;
            }
        }

        match root.child("Physics_State") {
            Some(ps) => {
                let bytes = unhex(ps.text()).map_err(load_err)?;
                let (bodies, joints) = (world.physics.body_count(), world.physics.joint_count());
                world.physics.import_state(&bytes).map_err(load_err)?;
                if world.physics.body_count() != bodies || world.physics.joint_count() != joints {
                    return Err(load_err(
                        "Physics_State does not match the entities of the file",
                    ));
                }
            }
            None => world.restore_state(root.child("State"))?,
        }
        Ok(world)
    }

    /// Places bodies and sets motors from a `<State>` element (files without Physics_State).
    fn restore_state(&mut self, state: Option<&Element>) -> Result<(), WorldError> {
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
            let entity = attr_u32("Entity_Id")?;
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
