//! The typed model of every SimRob XML message (SimRob manual §2–§5).
//!
//! Units and frames, stated once for the whole project:
//! - lengths in metres, masses in kilograms, time in seconds, angles in radians;
//! - a right-handed world frame with **Z up**; gravity acts along Z (default −9.8 m/s²);
//! - `Rotation_X/Y/Z` are **extrinsic X-Y-Z Euler angles** (roll about the world X axis first,
//!   then pitch about world Y, then yaw about world Z), i.e. `R = Rz(z) · Ry(y) · Rx(x)`.
//!   This is the convention of ODE's `dRFromEulerAngles` family that the SimRob manual used and is
//!   used for both directions (decode a pose, encode a pose) everywhere in simrob.
//!
//! Numbers are carried as `f64` on the wire; identifiers as `u32` (entity, body, joint,
//! material ids are non-negative integers in every example of the SimRob manual).

/// A 3-vector as it appears in `*_X`, `*_Y`, `*_Z` children.
pub type Vec3 = [f64; 3];

use crate::commands::Command;
use crate::ids::{EntityId, MaterialId};
use crate::keys::CommandKeys;

/// Agent type of `Register_Agent`'s `Agent_Type` attribute. Unknown names are kept so that a
/// server with an extra agent type (an extension) can accept them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AgentType {
    RobotController,
    Gui,
    Other(String),
}

impl AgentType {
    /// The wire name (`RobotController`, `GUI`, or the custom name).
    pub fn as_str(&self) -> &str {
        match self {
            AgentType::RobotController => "RobotController",
            AgentType::Gui => "GUI",
            AgentType::Other(s) => s,
        }
    }

    /// Parses a wire name; never fails (unknown names become [`AgentType::Other`]).
    pub fn parse(s: &str) -> AgentType {
        match s {
            "RobotController" => AgentType::RobotController,
            "GUI" => AgentType::Gui,
            other => AgentType::Other(other.to_string()),
        }
    }
}

/// A material of `Register_Materials_Interactions`.
#[derive(Debug, Clone, PartialEq)]
pub struct Material {
    pub id: MaterialId,
    pub name: String,
}

/// A material-pair interaction of `Register_Materials_Interactions` (ODE semantics, see SPEC S8).
#[derive(Debug, Clone, PartialEq)]
pub struct Interaction {
    pub material_1: MaterialId,
    pub material_2: MaterialId,
    /// How the two materials meet.
    pub contact: Contact,
}

/// How two materials meet, in ODE's parameters: the contact's softness (`Hardness` = CFM,
/// `Bounciness` = ERP), force-dependent slip of each side and the Coulomb friction
/// coefficient. The one definition shared by the wire format, the world and the physics
/// engine (which maps it as its crate docs say).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Contact {
    pub hardness: f64,
    pub bounciness: f64,
    pub slip1: f64,
    pub slip2: f64,
    pub friction: f64,
}

impl Contact {
    /// The interaction of a material pair with none registered (`default*interaction` of the
    /// SimRob manual's configuration file).
    pub const DEFAULT: Contact = Contact {
        hardness: 0.15,
        bounciness: 0.6,
        slip1: 0.1,
        slip2: 0.1,
        friction: 1.0,
    };
}

impl Default for Contact {
    fn default() -> Self {
        Contact::DEFAULT
    }
}

/// Shape of a body (`<Body Type=…>`), in the body's frame: the one definition shared by the
/// wire format, the world and the physics engine. Cylinders (and wheel cylinders) lie along
/// the body's local Z axis, as in ODE.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Shape {
    Sphere {
        radius: f64,
    },
    /// Full side lengths.
    Box {
        size: Vec3,
    },
    /// Along the body's local Z axis.
    Cylinder {
        radius: f64,
        length: f64,
    },
    /// A wheel: drawn as a cylinder, collides as a sphere of `radius`, never with other wheels.
    WheelCylinder {
        radius: f64,
        length: f64,
    },
}

impl Shape {
    /// The wire name of the `Type` attribute.
    pub fn type_name(&self) -> &'static str {
        match self {
            Shape::Sphere { .. } => "Sphere",
            Shape::Box { .. } => "Box",
            Shape::Cylinder { .. } => "Cylinder",
            Shape::WheelCylinder { .. } => "WheelCylinder",
        }
    }
}

/// A `<Body>` inside `<Structure>`.
#[derive(Debug, Clone, PartialEq)]
pub struct BodySpec {
    pub id: u32,
    pub shape: Shape,
    /// `None` = not given (the server's `defaultbodymaterial` applies).
    pub material: Option<MaterialId>,
    /// kg; −1 = infinite (static). `None` = not given (`defaultbodymass`).
    pub mass: Option<f64>,
    pub position: Vec3,
    /// Euler angles, see the module docs.
    pub rotation: Vec3,
}

/// A `<Joint>` inside `<Structure>`.
#[derive(Debug, Clone, PartialEq)]
pub enum JointSpec {
    Fixed {
        id: u32,
        body_1: u32,
        body_2: u32,
    },
    /// ODE Hinge2: axis 1 is the suspension/steering axis held by a spring made from
    /// `hardness`/`bounciness`; axis 2 is the wheel axis driven by the motor.
    Wheel {
        id: u32,
        body_1: u32,
        body_2: u32,
        axis_1: Vec3,
        axis_2: Vec3,
        /// `None` = not given (`defaultwheeljointhardness`).
        hardness: Option<f64>,
        bounciness: Option<f64>,
        maximum_torque: Option<f64>,
    },
}

impl JointSpec {
    pub fn id(&self) -> u32 {
        match self {
            JointSpec::Fixed { id, .. } | JointSpec::Wheel { id, .. } => *id,
        }
    }
    pub fn bodies(&self) -> (u32, u32) {
        match self {
            JointSpec::Fixed { body_1, body_2, .. } | JointSpec::Wheel { body_1, body_2, .. } => {
                (*body_1, *body_2)
            }
        }
    }
    pub fn type_name(&self) -> &'static str {
        match self {
            JointSpec::Fixed { .. } => "FixedJoint",
            JointSpec::Wheel { .. } => "WheelJoint",
        }
    }
}

/// The payload of `Create_Entity` (`Type` attribute + `<Data>`).
#[derive(Debug, Clone, PartialEq)]
pub enum EntitySpec {
    Robot {
        entity_id: EntityId,
        bodies: Vec<BodySpec>,
        joints: Vec<JointSpec>,
        /// `<Motors><Motor_id>` = WheelJoint ids.
        motors: Vec<u32>,
        reference_body: u32,
    },
    /// A field: bodies only. `joints` is decoded so that the world can reject a field that
    /// has any (the protocol does not judge entity rules).
    Field {
        entity_id: EntityId,
        bodies: Vec<BodySpec>,
        joints: Vec<JointSpec>,
    },
    /// A ball: one sphere given inline in `<Data>`.
    Ball {
        entity_id: EntityId,
        material: Option<MaterialId>,
        mass: Option<f64>,
        position: Vec3,
        rotation: Vec3,
        radius: f64,
    },
    /// A humanoid robot of the KidSize soccer field (simrob extension, see [`crate::humanoid`]):
    /// moved by timed actions (`Humanoid_Action`), not by motors.
    Humanoid {
        entity_id: EntityId,
        /// `cyan` or `magenta` (the world judges it).
        team: String,
        /// x, y on the floor (m).
        position: [f64; 2],
        /// Radians, counter-clockwise from +X.
        heading: f64,
        /// Motion noise profile (`paper`, `ideal`); `None` = `paper`.
        profile: Option<String>,
        /// Seed of its noise; `None` = its entity id.
        seed: Option<u64>,
        /// Material of its bodies; `None` = the world's choice.
        material: Option<MaterialId>,
    },
}

impl EntitySpec {
    pub fn entity_id(&self) -> EntityId {
        match self {
            EntitySpec::Robot { entity_id, .. }
            | EntitySpec::Field { entity_id, .. }
            | EntitySpec::Ball { entity_id, .. }
            | EntitySpec::Humanoid { entity_id, .. } => *entity_id,
        }
    }
    /// The bodies and joints it is made of, as its `<Structure>` lists them; a ball's is its
    /// one sphere, body 0. A humanoid's bodies are built by the world: none here.
    pub fn structure(&self) -> (std::borrow::Cow<'_, [BodySpec]>, &[JointSpec]) {
        match self {
            EntitySpec::Robot { bodies, joints, .. } | EntitySpec::Field { bodies, joints, .. } => {
                (bodies.into(), joints)
            }
            EntitySpec::Ball {
                material,
                mass,
                position,
                rotation,
                radius,
                ..
            } => (
                vec![BodySpec {
                    id: 0,
                    shape: Shape::Sphere { radius: *radius },
                    material: *material,
                    mass: *mass,
                    position: *position,
                    rotation: *rotation,
                }]
                .into(),
                &[],
            ),
            EntitySpec::Humanoid { .. } => (Vec::new().into(), &[]),
        }
    }

    pub fn type_name(&self) -> &'static str {
        match self {
            EntitySpec::Robot { .. } => "Robot",
            EntitySpec::Field { .. } => "Field",
            EntitySpec::Ball { .. } => "Ball",
            EntitySpec::Humanoid { .. } => "Humanoid",
        }
    }
}

/// One `<Motor>` of `Robot_Motor_Control`.
#[derive(Debug, Clone, PartialEq)]
pub struct MotorCommand {
    pub wheel_joint_id: u32,
    /// Target angular velocity, rad/s.
    pub value: f64,
}

/// `<Response>` (SimRob manual §2.1, §2.2, §4).
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// Plain text: confirmations (`Sucessfully added agent with key …`) and errors.
    Text(String),
    /// The answer to `Info_Request`.
    AgentInformation { key: String, port: u16, ip: String },
}

/// One body in a broadcast's `<DrawData>`. simrob adds `<Entity_id>` so bodies are
/// attributable to their entity (SPEC S19).
#[derive(Debug, Clone, PartialEq)]
pub struct BodyState {
    pub entity_id: EntityId,
    pub id: u32,
    pub shape: Shape,
    pub material: MaterialId,
    pub mass: f64,
    pub position: Vec3,
    pub rotation: Vec3,
    pub linear_velocity: Vec3,
    pub angular_velocity: Vec3,
}

/// Kind of an `<Entities_Info>` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntityInfoKind {
    /// `<Robot_Entity>`.
    Robot,
    /// `<Ball_Entity>` (the SimRob manual gives no example; simrob uses the robot entry's layout).
    Ball,
}

/// One `<Entities_Info>` entry: the pose of a robot's reference body or of a ball.
#[derive(Debug, Clone, PartialEq)]
pub struct EntityInfo {
    pub kind: EntityInfoKind,
    pub entity_id: EntityId,
    pub position: Vec3,
    pub rotation: Vec3,
}

/// `<Broadcast>` (SimRob manual §5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Broadcast {
    pub iteration: u64,
    /// Set when a broadcast was split over several datagrams (simrob extension):
    /// `<Part>index</Part><Parts>count</Parts>`, index from 1.
    pub part: Option<(u32, u32)>,
    pub bodies: Vec<BodyState>,
    pub entities: Vec<EntityInfo>,
}

/// Anything the server sends to an agent.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerMessage {
    Response(Response),
    Broadcast(Broadcast),
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
