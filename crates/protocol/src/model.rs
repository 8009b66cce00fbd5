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
    /// A robot controller (`RobotController`): the agent that drives robots.
    RobotController,
    /// A graphical viewer (`GUI`): the agent that draws the world.
    Gui,
    /// Any other name (an extension agent type); the server decides whether it accepts it.
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
    /// `Material_Id`: how bodies and interactions refer to this material.
    pub id: MaterialId,
    /// `Material_Name`: a human-readable name.
    pub name: String,
}

/// A material-pair interaction of `Register_Materials_Interactions` (ODE semantics, see SPEC S8).
#[derive(Debug, Clone, PartialEq)]
pub struct Interaction {
    /// `Material_1`: one material of the pair.
    pub material_1: MaterialId,
    /// `Material_2`: the other material of the pair (the order does not matter).
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
    /// `Hardness`: the contact's softness, ODE CFM (0..1, smaller = stiffer); default 0.15.
    pub hardness: f64,
    /// `Bounciness`: share of the penetration corrected per step, ODE ERP (0..1); default 0.6.
    pub bounciness: f64,
    /// `Slip1`: force-dependent slip along the first friction direction; default 0.1.
    pub slip1: f64,
    /// `Slip2`: force-dependent slip along the second friction direction; default 0.1.
    pub slip2: f64,
    /// `Friction`: the Coulomb friction coefficient μ (0..∞); default 1.0.
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
    /// A sphere (`Sphere`).
    Sphere {
        /// `Radius`, metres.
        radius: f64,
    },
    /// Full side lengths.
    Box {
        /// `Size_X/Y/Z`: side lengths along the body's local axes, metres.
        size: Vec3,
    },
    /// Along the body's local Z axis.
    Cylinder {
        /// `Radius`, metres.
        radius: f64,
        /// `Length` along the local Z axis, metres.
        length: f64,
    },
    /// A wheel: drawn as a cylinder, collides as a sphere of `radius`, never with other wheels.
    WheelCylinder {
        /// `Radius`, metres (also the radius of its collision sphere).
        radius: f64,
        /// `Length` along the local Z axis, metres (drawn only).
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

    /// Its largest extent, metres: the diameter of a sphere, the longest side of a box, the
    /// larger of a cylinder's diameter and length. NaN when a dimension is not a number.
    pub fn size(&self) -> f64 {
        let dims: &[f64] = match self {
            Shape::Sphere { radius } => &[2.0 * radius.abs()],
            Shape::Box { size } => &[size[0].abs(), size[1].abs(), size[2].abs()],
            Shape::Cylinder { radius, length } | Shape::WheelCylinder { radius, length } => {
                &[2.0 * radius.abs(), length.abs()]
            }
        };
        dims.iter()
            .fold(0.0, |acc, &d| if d.is_nan() || d > acc { d } else { acc })
    }
}

/// A `<Body>` inside `<Structure>`.
#[derive(Debug, Clone, PartialEq)]
pub struct BodySpec {
    /// `Body_id`: unique within its entity; joints and `Reference_Body` refer to it.
    pub id: u32,
    /// The `Type` attribute and its dimensions.
    pub shape: Shape,
    /// `None` = not given (the server's `defaultbodymaterial` applies).
    pub material: Option<MaterialId>,
    /// kg; −1 = infinite (static). `None` = not given (`defaultbodymass`).
    pub mass: Option<f64>,
    /// `Position_X/Y/Z`: the body's centre in the world frame, metres.
    pub position: Vec3,
    /// Euler angles, see the module docs.
    pub rotation: Vec3,
}

/// A `<Joint>` inside `<Structure>`.
#[derive(Debug, Clone, PartialEq)]
pub enum JointSpec {
    /// `FixedJoint`: welds two bodies of the entity together.
    Fixed {
        /// `Joint_id`: unique within its entity.
        id: u32,
        /// `Body_1`: the `Body_id` of the first body joined.
        body_1: u32,
        /// `Body_2`: the `Body_id` of the second body joined.
        body_2: u32,
    },
    /// ODE Hinge2: axis 1 is the suspension/steering axis held by a spring made from
    /// `hardness`/`bounciness`; axis 2 is the wheel axis driven by the motor.
    Wheel {
        /// `Joint_id`: unique within its entity; `Motors` and `Wheel_Joint_Id` refer to it.
        id: u32,
        /// `Body_1`: the `Body_id` the wheel hangs on (e.g. the chassis).
        body_1: u32,
        /// `Body_2`: the `Body_id` of the wheel.
        body_2: u32,
        /// `Axis_1_X/Y/Z`: the suspension/steering axis, a direction in the world frame.
        axis_1: Vec3,
        /// `Axis_2_X/Y/Z`: the wheel's spin axis (driven by the motor), a direction in the world
        /// frame.
        axis_2: Vec3,
        /// `None` = not given (`defaultwheeljointhardness`).
        hardness: Option<f64>,
        /// `Bounciness` of the suspension spring (ERP, 0..1); `None` = not given
        /// (`defaultwheeljointbounciness`).
        bounciness: Option<f64>,
        /// `Maximum_Torque`: the most torque the motor uses to reach its target speed, N·m; `None`
        /// = not given (`defaultwheeljointmaxtorque`).
        maximum_torque: Option<f64>,
    },
}

impl JointSpec {
    /// Its `Joint_id`.
    pub fn id(&self) -> u32 {
        match self {
            JointSpec::Fixed { id, .. } | JointSpec::Wheel { id, .. } => *id,
        }
    }
    /// Its `Body_1` and `Body_2` ids, in that order.
    pub fn bodies(&self) -> (u32, u32) {
        match self {
            JointSpec::Fixed { body_1, body_2, .. } | JointSpec::Wheel { body_1, body_2, .. } => {
                (*body_1, *body_2)
            }
        }
    }
    /// The wire name of the `Type` attribute (`FixedJoint` or `WheelJoint`).
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
    /// A robot (`Robot`): bodies held together by joints, driven by the motors of its wheel joints.
    Robot {
        /// `Entity_id`: the id requests and broadcasts address the entity by.
        entity_id: EntityId,
        /// The `<Body>`s of its `<Structure>`.
        bodies: Vec<BodySpec>,
        /// The `<Joint>`s of its `<Structure>`.
        joints: Vec<JointSpec>,
        /// `<Motors><Motor_id>` = WheelJoint ids.
        motors: Vec<u32>,
        /// `Reference_Body`: the `Body_id` whose pose is reported as the robot's pose
        /// (`Entities_Info`).
        reference_body: u32,
    },
    /// A field: bodies only. `joints` is decoded so that the world can reject a field that
    /// has any (the protocol does not judge entity rules).
    Field {
        /// `Entity_id`: the id requests and broadcasts address the entity by.
        entity_id: EntityId,
        /// The `<Body>`s of its `<Structure>`.
        bodies: Vec<BodySpec>,
        /// The `<Joint>`s of its `<Structure>` (a valid field has none).
        joints: Vec<JointSpec>,
    },
    /// A ball: one sphere given inline in `<Data>`.
    Ball {
        /// `Entity_id`: the id requests and broadcasts address the entity by.
        entity_id: EntityId,
        /// `Material`; `None` = not given (`defaultbodymaterial`).
        material: Option<MaterialId>,
        /// `Mass`, kg; −1 = infinite (static). `None` = not given (`defaultbodymass`).
        mass: Option<f64>,
        /// `Position_X/Y/Z`: the ball's centre in the world frame, metres.
        position: Vec3,
        /// `Rotation_X/Y/Z`: Euler angles, radians (see the module docs).
        rotation: Vec3,
        /// `Radius`, metres.
        radius: f64,
    },
    /// A humanoid robot of the KidSize soccer field (simrob extension, see [`crate::humanoid`]):
    /// moved by timed actions (`Humanoid_Action`), not by motors.
    Humanoid {
        /// `Entity_id`: the id requests and broadcasts address the entity by.
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
    /// Its `Entity_id`.
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

    /// The wire name of the `Type` attribute (`Robot`, `Field`, `Ball` or `Humanoid`).
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
    /// `Wheel_Joint_Id`: the `Joint_id` of the wheel joint whose motor is set.
    pub wheel_joint_id: u32,
    /// Target angular velocity, rad/s.
    pub value: f64,
}

/// `<Response>` (SimRob manual §2.1, §2.2, §4).
#[derive(Debug, Clone, PartialEq)]
pub enum Response {
    /// Plain text: confirmations (`Sucessfully added agent with key …`) and errors.
    Text(String),
    /// The answer to `Info_Request`: the requested agent's `<Agent_Information>`.
    AgentInformation {
        /// `Key`: the requested agent's key.
        key: String,
        /// `Port`: the UDP port it receives on.
        port: u16,
        /// `IP`: the address it receives on.
        ip: String,
    },
}

/// One body in a broadcast's `<DrawData>`. simrob adds `<Entity_id>` so bodies are
/// attributable to their entity (SPEC S19).
#[derive(Debug, Clone, PartialEq)]
pub struct BodyState {
    /// `Entity_id`: the entity the body belongs to (simrob extension).
    pub entity_id: EntityId,
    /// `Body_id`: the body's id within its entity.
    pub id: u32,
    /// `Type` and dimensions.
    pub shape: Shape,
    /// `Material`: the body's material.
    pub material: MaterialId,
    /// `Mass`, kg; −1 = infinite (static).
    pub mass: f64,
    /// `Position_X/Y/Z`: the body's centre in the world frame, metres.
    pub position: Vec3,
    /// `Rotation_X/Y/Z`: Euler angles, radians (see the module docs).
    pub rotation: Vec3,
    /// Velocity of the body's centre in the world frame, m/s.
    pub linear_velocity: Vec3,
    /// Angular velocity in the world frame, rad/s.
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
    /// Whether this is a `<Robot_Entity>` (robots and humanoids) or a `<Ball_Entity>` entry.
    pub kind: EntityInfoKind,
    /// `Entity_Id`: the entity described.
    pub entity_id: EntityId,
    /// `Position` (`pos_x/y/z`): the reference body's (or ball's) centre in the world frame,
    /// metres.
    pub position: Vec3,
    /// `Rotation` (`rot_x/y/z`): its Euler angles, radians (see the module docs).
    pub rotation: Vec3,
}

/// `<Broadcast>` (SimRob manual §5).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Broadcast {
    /// `Iteration`: the number of the iteration just simulated.
    pub iteration: u64,
    /// Set when a broadcast was split over several datagrams (simrob extension):
    /// `<Part>index</Part><Parts>count</Parts>`, index from 1.
    pub part: Option<(u32, u32)>,
    /// `<DrawData>`: every body of the world (or this part's share of them).
    pub bodies: Vec<BodyState>,
    /// `<Entities_Info>`: one entry per robot (humanoids included) and per ball (or this part's
    /// share); none for fields.
    pub entities: Vec<EntityInfo>,
}

/// Anything the server sends to an agent.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerMessage {
    /// A `<Response>`: a confirmation, an error or an agent's information.
    Response(Response),
    /// A `<Broadcast>`: the world's state after an iteration.
    Broadcast(Broadcast),
}

/// One decoded request: the unit a datagram is split into and executed in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `<Message><Agent_Message Command=…>`.
    Agent(AgentRequest),
    /// `<Message><Simulation_Message><Control_Request Command=…>`.
    Control {
        /// The command and its payload.
        request: ControlRequest,
        /// `<Response>true|false</Response>` inside the request; `None` = not given (the
        /// server's `defaultresponserequest` applies).
        response: Option<bool>,
    },
    /// `<Message><Simulation_Message><Entity_Request Command=…>`.
    Entity {
        /// The command and its payload.
        request: EntityRequest,
        /// `<Response>true|false</Response>` inside the request; `None` = not given (the server's
        /// `defaultresponserequest` applies).
        response: Option<bool>,
    },
}

/// `<Agent_Message>` requests (SimRob manual §2.1, §2.2, §2.10).
#[derive(Debug, Clone, PartialEq)]
pub enum AgentRequest {
    /// `Register_Agent`: adds an agent, or updates the one registered with the same key.
    RegisterAgent {
        /// The `Agent_Type` attribute: which filter shapes what the agent receives.
        agent_type: AgentType,
        /// `Port`: the UDP port the agent receives on.
        port: u16,
        /// `IP`: the address the agent receives on.
        ip: String,
        /// `Sync`: whether the agent is synchronous (in sync mode the server waits for its
        /// `Synchronize` each iteration).
        sync: bool,
        /// Broadcast interval in simulated seconds; −1 = never.
        broadcast: f64,
        /// `Key`: the agent's name, unique among agents.
        key: String,
    },
    /// `Info_Request`: asks for the address of another agent; answered to the requester only.
    InfoRequest {
        /// `Requester`: the key of the asking agent.
        requester: String,
        /// `Requested`: the key of the agent asked about.
        requested: String,
    },
    /// `Synchronize`: a synchronous agent has finished an iteration.
    Synchronize {
        /// `Key`: the key of the agent.
        key: String,
        /// `Iteration`: the iteration it has finished.
        iteration: u64,
    },
    /// `Unregister_Agent` (a simrob extension, not in the SimRob manual): the agent stops; the
    /// server removes it, stops sending to it and no longer waits for it in lockstep.
    UnregisterAgent {
        /// `Key`: the key of the agent.
        key: String,
    },
}

/// `<Control_Request>` commands (SimRob manual §2.3–§2.19).
#[derive(Debug, Clone, PartialEq)]
pub enum ControlRequest {
    /// `Register_Materials_Interactions`: registers materials and how pairs of them meet.
    RegisterMaterialsInteractions {
        /// The `<Material>`s.
        materials: Vec<Material>,
        /// The `<Interaction>`s.
        interactions: Vec<Interaction>,
    },
    /// `Create_Entity`: adds a robot, field, ball or humanoid.
    CreateEntity(EntitySpec),
    /// `Initialize_Simulation`: starts the physics (it does not advance before).
    InitializeSimulation,
    /// `Set_Step_Mode` (`Step_Mode`): `true` advances one iteration per `Make_Step` (pause),
    /// `false` runs.
    SetStepMode(bool),
    /// `Make_Step`: grants one iteration in step mode (queued: the server runs it at its pace).
    MakeStep,
    /// `Set_AutoAdjust_Mode` (`AutoAdjust_Mode`): `true` adjusts timestep and steps per iteration
    /// so that simulated time tracks wall-clock time.
    SetAutoAdjustMode(bool),
    /// `Set_Sync_Mode` (`Sync_Mode`): `true` makes the server wait for the synchronous agents'
    /// `Synchronize` after each broadcast.
    SetSyncMode(bool),
    /// `Set_Sync_Wait` (`Sync_Wait`): the longest the server waits for synchronous agents, seconds.
    SetSyncWait(f64),
    /// `Set_Timestep` (`Timestep`): the physics step, seconds (recommended 0.010–0.070).
    SetTimestep(f64),
    /// `Set_World_Gravity` (`Gravity`): gravity along Z, m/s² (default −9.8).
    SetWorldGravity(f64),
    /// `Set_World_Hardness` (`Hardness`): the world's global softness, ODE CFM.
    SetWorldHardness(f64),
    /// `Set_World_Bounciness` (`Bounciness`): the world's global error correction, ODE ERP.
    SetWorldBounciness(f64),
    /// `Save` (`File`): writes the whole simulation to this file.
    Save(String),
    /// `Load` (`File`): replaces the simulation with the one saved in this file.
    Load(String),
    /// `Set_Fast_Mode` (`Fast_Mode`): `true` selects a faster, less exact solver.
    SetFastMode(bool),
    /// `Set_Steps_Per_Iteration` (`Steps_Per_Iteration`): physics steps per iteration, at least 1
    /// (default 1).
    SetStepsPerIteration(u32),
    /// Rolling resistance of a ball of one material resting on another (simrob extension, see
    /// [`crate::humanoid`]): deceleration = `coefficient`·|g|.
    SetRollingResistance {
        /// `Material_1`: one material of the pair (e.g. the ball's).
        material_1: MaterialId,
        /// `Material_2`: the other material (e.g. the floor's); the order does not matter.
        material_2: MaterialId,
        /// `Coefficient`: the dimensionless rolling-resistance coefficient (≥ 0).
        coefficient: f64,
    },
}

/// `<Entity_Request>` commands (SimRob manual §3).
#[derive(Debug, Clone, PartialEq)]
pub enum EntityRequest {
    /// `Set_Entity_Position`: moves a robot or a ball rigidly (fields cannot be moved).
    SetEntityPosition {
        /// `Entity_Id`: the entity to move.
        entity_id: EntityId,
        /// `Position_X/Y/Z`: where its reference body's (or ball's) centre goes, world frame,
        /// metres.
        position: Vec3,
    },
    /// `Robot_Motor_Control`: sets target speeds of a robot's wheel motors.
    RobotMotorControl {
        /// `Entity_Id`: the robot.
        entity_id: EntityId,
        /// `<Motors>`: one target per wheel joint; motors not listed keep theirs.
        motors: Vec<MotorCommand>,
    },
    /// One of a humanoid's actions by FutRob's name and parameters (simrob extension, see
    /// [`crate::humanoid`]): `<Action name="walk" distance="30"/>`.
    HumanoidAction {
        /// `Entity_Id`: the humanoid.
        entity_id: EntityId,
        /// The `name` attribute: FutRob's action name (e.g. `walk`).
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

    /// The `Entity_Id` the request addresses.
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
                AgentRequest::UnregisterAgent { .. } => Command::UnregisterAgent,
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
