//! The command table: every SimRob command, once.
//!
//! `command_table!` below is the single list of commands. Each row gives the command's
//! [`Command`] variant, its [`Family`] (which element carries it), its configuration key
//! (SimRob manual §6, spelled as there, including its `commandsetimestepkey` and
//! `commandsynthesizekey`; the four commands for which the SimRob manual lists no key get keys
//! invented in the same style, marked *simrob*) and its default name (the SimRob manual's).
//! [`CommandKeys`], [`config_keys`](crate::config_keys), the decoder's
//! dispatch and the encoder's `Command` attribute are all derived from it.
//!
//! Below the table, in this file, are the typed requests ([`AgentRequest`],
//! [`ControlRequest`], [`EntityRequest`]) and, per command, how its payload is read from and
//! written to its request element. **A new command** is a row in the table, a variant, one
//! arm in `decode_payload` and one in `encode_payload` — all in this file; the compiler
//! points at every arm still missing — and then its handling where requests are applied.
//!
//! | configuration key | command (default) | section |
//! |---|---|---|
//! | `commandregisteragentkey` (*simrob*) | `Register_Agent` | §2.1 |
//! | `commandinforequestkey` (*simrob*) | `Info_Request` | §2.2 |
//! | `commandregistermaterialsinteractionskey` | `Register_Materials_Interactions` | §2.3 |
//! | `commandcreateentitykey` | `Create_Entity` | §2.4 |
//! | `commandinitializesimulationkey` | `Initialize_Simulation` | §2.5 |
//! | `commandsetstepmodekey` | `Set_Step_Mode` | §2.6 |
//! | `commandsetstepflagkey` | `Make_Step` | §2.7 |
//! | `commandsetautoadjustmodekey` (*simrob*) | `Set_AutoAdjust_Mode` | §2.8 |
//! | `commandsetsyncmodekey` (*simrob*) | `Set_Sync_Mode` | §2.9 |
//! | `commandsynthesizekey` | `Synchronize` | §2.10 |
//! | `commandsetsyncwaitkey` | `Set_Sync_Wait` | §2.11 |
//! | `commandsetimestepkey` | `Set_Timestep` | §2.12 |
//! | `commandsetworldgravitykey` | `Set_World_Gravity` | §2.13 |
//! | `commandworldhardnesskey` | `Set_World_Hardness` | §2.14 |
//! | `commandworldbouncinesskey` | `Set_World_Bounciness` | §2.15 |
//! | `commandsavetofilekey` | `Save` | §2.16 |
//! | `commandloadfromfilekey` | `Load` | §2.17 |
//! | `commandsetfastmodekey` | `Set_Fast_Mode` | §2.18 |
//! | `commandsetstepsperiterationkey` | `Set_Steps_Per_Iteration` | §2.19 |
//! | `commandsetentitypositionkey` | `Set_Entity_Position` | §3.1 |
//! | `commandrobotcontrolkey` | `Robot_Motor_Control` | §3.2 |
//! | `commandsetrollingresistancekey` (*simrob*) | `Set_Rolling_Resistance` | [humanoid soccer](crate::humanoid) |
//! | `commandhumanoidactionkey` (*simrob*) | `Humanoid_Action` | [humanoid soccer](crate::humanoid) |

use crate::decode::{decode_entity_spec_element, decode_materials_element, entity_id, POSITION};
use crate::encode::{entity_spec_element, materials_element};
use crate::error::DecodeError;
use crate::ids::{EntityId, MaterialId};
use crate::keys::CommandKeys;
use crate::model::{AgentType, EntitySpec, Interaction, Material, MotorCommand, Vec3};
use crate::tree::Element;

/// The element a command travels in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `<Message><Agent_Message Command=…>`.
    Agent,
    /// `<Message><Simulation_Message><Control_Request Command=…>`.
    Control,
    /// `<Message><Simulation_Message><Entity_Request Command=…>`.
    Entity,
}

impl Family {
    /// The element name (`Agent_Message`, `Control_Request`, `Entity_Request`).
    pub const fn element(self) -> &'static str {
        match self {
            Family::Agent => "Agent_Message",
            Family::Control => "Control_Request",
            Family::Entity => "Entity_Request",
        }
    }
}

macro_rules! command_table {
    ($( $variant:ident, $family:ident, $key:literal, $name:literal; )*) => {
        /// Every SimRob command, in the order of the command table.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Command {
            $(
                #[doc = concat!("`", $name, "` (configuration key `", $key, "`).")]
                $variant,
            )*
        }

        impl Command {
            /// Every command, in table order.
            pub const ALL: &'static [Command] = &[$(Command::$variant),*];
            /// How many commands there are.
            pub const COUNT: usize = Command::ALL.len();

            /// The configuration key that renames this command.
            pub const fn config_key(self) -> &'static str {
                match self { $(Command::$variant => $key,)* }
            }

            /// The SimRob manual's name for this command (its default `Command` attribute).
            pub const fn default_name(self) -> &'static str {
                match self { $(Command::$variant => $name,)* }
            }

            /// The element this command travels in.
            pub const fn family(self) -> Family {
                match self { $(Command::$variant => Family::$family,)* }
            }

            /// This command's position in [`Command::ALL`].
            pub const fn index(self) -> usize {
                self as usize
            }
        }

        /// (configuration key, default name) of every command, in table order.
        pub(crate) const CONFIG_KEYS: &[(&str, &str)] = &[$(($key, $name)),*];
    };
}

command_table! {
    RegisterAgent, Agent, "commandregisteragentkey", "Register_Agent";
    InfoRequest, Agent, "commandinforequestkey", "Info_Request";
    RegisterMaterialsInteractions, Control, "commandregistermaterialsinteractionskey", "Register_Materials_Interactions";
    CreateEntity, Control, "commandcreateentitykey", "Create_Entity";
    InitializeSimulation, Control, "commandinitializesimulationkey", "Initialize_Simulation";
    SetStepMode, Control, "commandsetstepmodekey", "Set_Step_Mode";
    MakeStep, Control, "commandsetstepflagkey", "Make_Step";
    SetAutoAdjustMode, Control, "commandsetautoadjustmodekey", "Set_AutoAdjust_Mode";
    SetSyncMode, Control, "commandsetsyncmodekey", "Set_Sync_Mode";
    Synchronize, Agent, "commandsynthesizekey", "Synchronize";
    SetSyncWait, Control, "commandsetsyncwaitkey", "Set_Sync_Wait";
    SetTimestep, Control, "commandsetimestepkey", "Set_Timestep";
    SetWorldGravity, Control, "commandsetworldgravitykey", "Set_World_Gravity";
    SetWorldHardness, Control, "commandworldhardnesskey", "Set_World_Hardness";
    SetWorldBounciness, Control, "commandworldbouncinesskey", "Set_World_Bounciness";
    Save, Control, "commandsavetofilekey", "Save";
    Load, Control, "commandloadfromfilekey", "Load";
    SetFastMode, Control, "commandsetfastmodekey", "Set_Fast_Mode";
    SetStepsPerIteration, Control, "commandsetstepsperiterationkey", "Set_Steps_Per_Iteration";
    SetEntityPosition, Entity, "commandsetentitypositionkey", "Set_Entity_Position";
    RobotMotorControl, Entity, "commandrobotcontrolkey", "Robot_Motor_Control";
    SetRollingResistance, Control, "commandsetrollingresistancekey", "Set_Rolling_Resistance";
    HumanoidAction, Entity, "commandhumanoidactionkey", "Humanoid_Action";
}

/// One decoded request: the unit a datagram is split into and executed in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `<Message><Agent_Message Command=…>`.
    Agent(AgentRequest),
    /// `<Message><Simulation_Message><Control_Request Command=…>`.
    Control {
        request: ControlRequest,
        /// `<Response>true|false</Response>` inside the request; `None` = not given (the
        /// server's `defaultresponserequest` applies).
        response: Option<bool>,
    },
    /// `<Message><Simulation_Message><Entity_Request Command=…>`.
    Entity {
        request: EntityRequest,
        response: Option<bool>,
    },
}

/// `<Agent_Message>` requests (SimRob manual §2.1, §2.2, §2.10).
#[derive(Debug, Clone, PartialEq)]
pub enum AgentRequest {
    RegisterAgent {
        agent_type: AgentType,
        port: u16,
        ip: String,
        sync: bool,
        /// Broadcast interval in simulated seconds; −1 = never.
        broadcast: f64,
        key: String,
    },
    InfoRequest {
        requester: String,
        requested: String,
    },
    Synchronize {
        key: String,
        iteration: u64,
    },
}

/// `<Control_Request>` commands (SimRob manual §2.3–§2.19).
#[derive(Debug, Clone, PartialEq)]
pub enum ControlRequest {
    RegisterMaterialsInteractions {
        materials: Vec<Material>,
        interactions: Vec<Interaction>,
    },
    CreateEntity(EntitySpec),
    InitializeSimulation,
    SetStepMode(bool),
    MakeStep,
    SetAutoAdjustMode(bool),
    SetSyncMode(bool),
    SetSyncWait(f64),
    SetTimestep(f64),
    SetWorldGravity(f64),
    SetWorldHardness(f64),
    SetWorldBounciness(f64),
    Save(String),
    Load(String),
    SetFastMode(bool),
    SetStepsPerIteration(u32),
    /// Rolling resistance of a ball of one material resting on another (simrob extension, see
    /// [`crate::humanoid`]): deceleration = `coefficient`·|g|.
    SetRollingResistance {
        material_1: MaterialId,
        material_2: MaterialId,
        coefficient: f64,
    },
}

/// `<Entity_Request>` commands (SimRob manual §3).
#[derive(Debug, Clone, PartialEq)]
pub enum EntityRequest {
    SetEntityPosition {
        entity_id: EntityId,
        position: Vec3,
    },
    RobotMotorControl {
        entity_id: EntityId,
        motors: Vec<MotorCommand>,
    },
    /// One of a humanoid's actions by FutRob's name and parameters (simrob extension, see
    /// [`crate::humanoid`]): `<Action name="walk" distance="30"/>`.
    HumanoidAction {
        entity_id: EntityId,
        name: String,
        /// The `<Action>`'s other attributes, in order.
        params: Vec<(String, String)>,
    },
}

impl EntityRequest {
    /// `Robot_Motor_Control` of a two-wheeled robot: wheel joint 0 (left) at `left` and
    /// wheel joint 1 (right) at `right` rad/s, as on the SimRob manual's SumBot.
    pub fn two_wheels(entity_id: EntityId, left: f64, right: f64) -> EntityRequest {
        EntityRequest::RobotMotorControl {
            entity_id,
            motors: vec![
                MotorCommand {
                    wheel_joint_id: 0,
                    value: left,
                },
                MotorCommand {
                    wheel_joint_id: 1,
                    value: right,
                },
            ],
        }
    }

    pub fn entity_id(&self) -> EntityId {
        match self {
            EntityRequest::SetEntityPosition { entity_id, .. }
            | EntityRequest::RobotMotorControl { entity_id, .. }
            | EntityRequest::HumanoidAction { entity_id, .. } => *entity_id,
        }
    }
}

impl Request {
    /// Which command this request is.
    pub fn kind(&self) -> Command {
        match self {
            Request::Agent(a) => match a {
                AgentRequest::RegisterAgent { .. } => Command::RegisterAgent,
                AgentRequest::InfoRequest { .. } => Command::InfoRequest,
                AgentRequest::Synchronize { .. } => Command::Synchronize,
            },
            Request::Control { request, .. } => match request {
                ControlRequest::RegisterMaterialsInteractions { .. } => {
                    Command::RegisterMaterialsInteractions
                }
                ControlRequest::CreateEntity(_) => Command::CreateEntity,
                ControlRequest::InitializeSimulation => Command::InitializeSimulation,
                ControlRequest::SetStepMode(_) => Command::SetStepMode,
                ControlRequest::MakeStep => Command::MakeStep,
                ControlRequest::SetAutoAdjustMode(_) => Command::SetAutoAdjustMode,
                ControlRequest::SetSyncMode(_) => Command::SetSyncMode,
                ControlRequest::SetSyncWait(_) => Command::SetSyncWait,
                ControlRequest::SetTimestep(_) => Command::SetTimestep,
                ControlRequest::SetWorldGravity(_) => Command::SetWorldGravity,
                ControlRequest::SetWorldHardness(_) => Command::SetWorldHardness,
                ControlRequest::SetWorldBounciness(_) => Command::SetWorldBounciness,
                ControlRequest::Save(_) => Command::Save,
                ControlRequest::Load(_) => Command::Load,
                ControlRequest::SetFastMode(_) => Command::SetFastMode,
                ControlRequest::SetStepsPerIteration(_) => Command::SetStepsPerIteration,
                ControlRequest::SetRollingResistance { .. } => Command::SetRollingResistance,
            },
            Request::Entity { request, .. } => match request {
                EntityRequest::SetEntityPosition { .. } => Command::SetEntityPosition,
                EntityRequest::RobotMotorControl { .. } => Command::RobotMotorControl,
                EntityRequest::HumanoidAction { .. } => Command::HumanoidAction,
            },
        }
    }

    /// The command name of this request under `keys` (what its `Command` attribute says).
    pub fn command<'k>(&self, keys: &'k CommandKeys) -> &'k str {
        keys.name(self.kind())
    }

    /// The `<Response>` flag of a control or entity request (`None` for agent requests and
    /// when not given).
    pub fn response(&self) -> Option<bool> {
        match self {
            Request::Agent(_) => None,
            Request::Control { response, .. } | Request::Entity { response, .. } => *response,
        }
    }
}

/// Reads the payload of command `cmd` from its request element `el` (whose `Command`
/// attribute named `cmd`; `cmd.family()` is `el`'s family). `<Response>` is read here too.
pub(crate) fn decode_payload(cmd: Command, el: &Element) -> Result<Request, DecodeError> {
    let control = |request| {
        Ok(Request::Control {
            request,
            response: el.opt_child_bool("Response")?,
        })
    };
    let entity = |request| {
        Ok(Request::Entity {
            request,
            response: el.opt_child_bool("Response")?,
        })
    };
    match cmd {
        Command::RegisterAgent => Ok(Request::Agent(AgentRequest::RegisterAgent {
            agent_type: AgentType::parse(el.required_attr("Agent_Type")?),
            port: el.child_u16("Port")?,
            ip: el.child_string("IP")?,
            sync: el.child_bool("Sync")?,
            broadcast: el.child_f64("Broadcast")?,
            key: el.child_string("Key")?,
        })),
        Command::InfoRequest => Ok(Request::Agent(AgentRequest::InfoRequest {
            requester: el.child_string("Requester")?,
            requested: el.child_string("Requested")?,
        })),
        Command::Synchronize => Ok(Request::Agent(AgentRequest::Synchronize {
            key: el.child_string("Key")?,
            iteration: el.child_u64("Iteration")?,
        })),
        Command::RegisterMaterialsInteractions => {
            let (materials, interactions) = decode_materials_element(el)?;
            control(ControlRequest::RegisterMaterialsInteractions {
                materials,
                interactions,
            })
        }
        Command::CreateEntity => control(ControlRequest::CreateEntity(decode_entity_spec_element(
            el,
        )?)),
        Command::InitializeSimulation => control(ControlRequest::InitializeSimulation),
        Command::SetStepMode => control(ControlRequest::SetStepMode(el.child_bool("Step_Mode")?)),
        Command::MakeStep => control(ControlRequest::MakeStep),
        Command::SetAutoAdjustMode => control(ControlRequest::SetAutoAdjustMode(
            el.child_bool("AutoAdjust_Mode")?,
        )),
        Command::SetSyncMode => control(ControlRequest::SetSyncMode(el.child_bool("Sync_Mode")?)),
        Command::SetSyncWait => control(ControlRequest::SetSyncWait(el.child_f64("Sync_Wait")?)),
        Command::SetTimestep => control(ControlRequest::SetTimestep(el.child_f64("Timestep")?)),
        Command::SetWorldGravity => {
            control(ControlRequest::SetWorldGravity(el.child_f64("Gravity")?))
        }
        Command::SetWorldHardness => {
            control(ControlRequest::SetWorldHardness(el.child_f64("Hardness")?))
        }
        Command::SetWorldBounciness => control(ControlRequest::SetWorldBounciness(
            el.child_f64("Bounciness")?,
        )),
        Command::Save => control(ControlRequest::Save(el.child_string("File")?)),
        Command::Load => control(ControlRequest::Load(el.child_string("File")?)),
        Command::SetFastMode => control(ControlRequest::SetFastMode(el.child_bool("Fast_Mode")?)),
        Command::SetStepsPerIteration => {
            let steps = el.child_u32("Steps_Per_Iteration")?;
            if steps == 0 {
                return Err(DecodeError::invalid(
                    "Steps_Per_Iteration: must be at least 1, found \"0\"",
                ));
            }
            control(ControlRequest::SetStepsPerIteration(steps))
        }
        Command::SetEntityPosition => entity(EntityRequest::SetEntityPosition {
            entity_id: entity_id(el)?,
            position: el.child_vec3(POSITION)?,
        }),
        Command::RobotMotorControl => {
            let entity_id = entity_id(el)?;
            let motors_el = el.required_child("Motors")?;
            let mut motors = Vec::new();
            for (i, child) in motors_el.children.iter().enumerate() {
                if child.name != "Motor" {
                    return Err(
                        crate::decode::unexpected_child(child, "Motors", "Motor").within("Motors")
                    );
                }
                let index = i + 1;
                let motor = (|| {
                    Ok(MotorCommand {
                        wheel_joint_id: child.child_u32("Wheel_Joint_Id")?,
                        value: child.child_f64("Value")?,
                    })
                })()
                .map_err(|e: DecodeError| e.within(format!("Motor[{index}]")).within("Motors"))?;
                motors.push(motor);
            }
            entity(EntityRequest::RobotMotorControl { entity_id, motors })
        }
        Command::SetRollingResistance => control(ControlRequest::SetRollingResistance {
            material_1: MaterialId(el.child_u32("Material_1")?),
            material_2: MaterialId(el.child_u32("Material_2")?),
            coefficient: el.child_f64("Coefficient")?,
        }),
        Command::HumanoidAction => {
            let entity_id = entity_id(el)?;
            let action = el.required_child("Action")?;
            let name = action
                .required_attr("name")
                .map_err(|e| e.within("Action"))?
                .to_string();
            let params = action
                .attrs
                .iter()
                .filter(|(k, _)| k != "name")
                .cloned()
                .collect();
            entity(EntityRequest::HumanoidAction {
                entity_id,
                name,
                params,
            })
        }
    }
}

/// The request element of `req` (without `<Response>`): `<Agent_Message>`,
/// `<Control_Request>` or `<Entity_Request>` with its `Command` attribute from `keys`.
pub(crate) fn encode_payload(req: &Request, keys: &CommandKeys) -> Element {
    let kind = req.kind();
    let el = || Element::new(kind.family().element()).with_attr("Command", keys.name(kind));
    let leaf =
        |child: &str, value: &dyn std::fmt::Display| el().with_child(Element::leaf(child, value));
    match req {
        Request::Agent(a) => match a {
            AgentRequest::RegisterAgent {
                agent_type,
                port,
                ip,
                sync,
                broadcast,
                key,
            } => el()
                .with_attr("Agent_Type", agent_type.as_str())
                .with_child(Element::leaf("Port", port))
                .with_child(Element::leaf("IP", ip))
                .with_child(Element::leaf("Sync", sync))
                .with_child(Element::leaf("Broadcast", broadcast))
                .with_child(Element::leaf("Key", key)),
            AgentRequest::InfoRequest {
                requester,
                requested,
            } => el()
                .with_child(Element::leaf("Requester", requester))
                .with_child(Element::leaf("Requested", requested)),
            AgentRequest::Synchronize { key, iteration } => el()
                .with_child(Element::leaf("Key", key))
                .with_child(Element::leaf("Iteration", iteration)),
        },
        Request::Control { request, .. } => match request {
            ControlRequest::RegisterMaterialsInteractions {
                materials,
                interactions,
            } => materials_element(materials, interactions, keys),
            ControlRequest::CreateEntity(spec) => entity_spec_element(spec, keys),
            ControlRequest::InitializeSimulation | ControlRequest::MakeStep => el(),
            ControlRequest::SetStepMode(v) => leaf("Step_Mode", v),
            ControlRequest::SetAutoAdjustMode(v) => leaf("AutoAdjust_Mode", v),
            ControlRequest::SetSyncMode(v) => leaf("Sync_Mode", v),
            ControlRequest::SetSyncWait(v) => leaf("Sync_Wait", v),
            ControlRequest::SetTimestep(v) => leaf("Timestep", v),
            ControlRequest::SetWorldGravity(v) => leaf("Gravity", v),
            ControlRequest::SetWorldHardness(v) => leaf("Hardness", v),
            ControlRequest::SetWorldBounciness(v) => leaf("Bounciness", v),
            ControlRequest::Save(f) => leaf("File", f),
            ControlRequest::Load(f) => leaf("File", f),
            ControlRequest::SetFastMode(v) => leaf("Fast_Mode", v),
            ControlRequest::SetStepsPerIteration(v) => leaf("Steps_Per_Iteration", v),
            ControlRequest::SetRollingResistance {
                material_1,
                material_2,
                coefficient,
            } => el()
                .with_child(Element::leaf("Material_1", material_1))
                .with_child(Element::leaf("Material_2", material_2))
                .with_child(Element::leaf("Coefficient", coefficient)),
        },
        Request::Entity { request, .. } => match request {
            EntityRequest::SetEntityPosition {
                entity_id,
                position,
            } => {
                let mut e = el().with_child(Element::leaf("Entity_Id", entity_id));
                e.push_vec3(POSITION, *position);
                e
            }
            EntityRequest::RobotMotorControl { entity_id, motors } => el()
                .with_child(Element::leaf("Entity_Id", entity_id))
                .with_child(Element::new("Motors").with_children(motors.iter().map(|m| {
                    Element::new("Motor")
                        .with_child(Element::leaf("Wheel_Joint_Id", m.wheel_joint_id))
                        .with_child(Element::leaf("Value", m.value))
                }))),
            EntityRequest::HumanoidAction {
                entity_id,
                name,
                params,
            } => {
                let mut action = Element::new("Action").with_attr("name", name);
                for (k, v) in params {
                    action = action.with_attr(k, v);
                }
                el().with_child(Element::leaf("Entity_Id", entity_id))
                    .with_child(action)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_consistent() {
        for (i, c) in Command::ALL.iter().enumerate() {
            assert_eq!(c.index(), i);
            assert_eq!(CONFIG_KEYS[i], (c.config_key(), c.default_name()));
        }
        assert_eq!(Command::COUNT, 23);
        let count = |f| Command::ALL.iter().filter(|c| c.family() == f).count();
        assert_eq!(
            (
                count(Family::Agent),
                count(Family::Control),
                count(Family::Entity)
            ),
            (3, 17, 3)
        );
    }
}
