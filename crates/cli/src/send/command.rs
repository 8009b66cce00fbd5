//! The commander's commands: one subcommand per command of the SimRob manual, with typed
//! arguments, and the requests each one sends.
//!
//! Every value is checked here, before anything is sent: numbers must be finite, counts and
//! ids non-negative integers, files must hold requests of the right kind. Ranges that belong
//! to the world (the largest timestep, hardness in 0..1, …) are the server's to judge; its
//! error comes back as the answer.

use std::io::Read;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Subcommand, ValueEnum};
use simrob_protocol::tree::parse_finite_f64;
use simrob_protocol::{
    decode_datagram, AgentRequest, AgentType, CommandKeys, ControlRequest, EntityId, EntityRequest,
    MotorCommand, Request,
};

/// An on/off switch (`true`/`false`, `yes`/`no` and `1`/`0` are accepted too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Switch {
    #[value(alias = "true", alias = "yes", alias = "1")]
    On,
    #[value(alias = "false", alias = "no", alias = "0")]
    Off,
}

impl Switch {
    fn on(self) -> bool {
        self == Switch::On
    }
}

/// The communication mode of `sync-mode` (the SimRob Commander says Synchronic/Asynchronic).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SyncSwitch {
    /// Synchronous: the server waits for every synchronous agent's Synchronize.
    #[value(alias = "synchronic", alias = "true", alias = "yes", alias = "1")]
    On,
    /// Asynchronous: the server never waits.
    #[value(alias = "asynchronic", alias = "false", alias = "no", alias = "0")]
    Off,
}

/// One SimRob command. Each is sent with `<Response>true</Response>` and the commander waits
/// for its confirmation or error.
#[derive(Debug, Clone, Subcommand)]
pub enum SendCommand {
    /// Register_Materials_Interactions: the materials and interactions of a file.
    ///
    /// FILE holds one or more Register_Materials_Interactions requests, with or without the
    /// `<Message><Simulation_Message>` envelope, e.g. scenarios/materials.xml.
    RegisterMaterials {
        /// XML file with the request(s); `-` reads standard input.
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Create_Entity: a robot, field or ball described in a file.
    ///
    /// FILE holds one or more Create_Entity requests, with or without the
    /// `<Message><Simulation_Message>` envelope, e.g. scenarios/sumbot.xml. The materials
    /// the bodies use must be registered first (register-materials).
    CreateEntity {
        /// XML file with the request(s); `-` reads standard input.
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
    /// Initialize_Simulation: simulated time starts to advance.
    #[command(visible_alias = "init")]
    Initialize,
    /// Set_Step_Mode: on = paused, advancing one iteration per `step`; off = running.
    StepMode {
        #[arg(value_name = "on|off")]
        mode: Switch,
    },
    /// Pause: Set_Step_Mode true (the simulation advances only on `step`).
    Pause,
    /// Play: Set_Step_Mode false (the simulation runs on its own again).
    Play,
    /// Make_Step: advance one iteration while paused.
    ///
    /// The confirmation, `Step granted`, says the step is granted (queued): the server runs
    /// it at its own pace. One that runs as fast as it can runs it at once; a paced one
    /// (`serve --speed F`, or `--gui` or `--record` without `--speed 0`) runs an iteration
    /// every timestep / F wall seconds, so `step` can return before its steps have run (a
    /// Save then holds them as `Pending_Steps`).
    Step {
        /// Number of Make_Step requests to send, one after the other, each confirmed (granted).
        #[arg(long, short = 'n', value_name = "N", default_value_t = 1,
              value_parser = crate::flags::count(1u32, u32::MAX))]
        count: u32,
    },
    /// Set_AutoAdjust_Mode: keep simulated time in step with wall-clock time.
    AutoAdjust {
        #[arg(value_name = "on|off")]
        mode: Switch,
    },
    /// Set_Sync_Mode: synchronous (lockstep with synchronous agents) or not.
    SyncMode {
        #[arg(value_name = "on|off")]
        mode: SyncSwitch,
    },
    /// Set_Sync_Wait: how long the server waits for synchronous agents each iteration.
    SyncWait {
        /// Seconds (or 50ms, 2s, 1min), 0 or more.
        #[arg(value_name = "S", value_parser = non_negative)]
        seconds: f64,
    },
    /// Set_Timestep: simulated seconds per physics step (0.010–0.070 recommended).
    #[command(visible_alias = "timestep")]
    SetTimestep {
        /// Seconds (or 50ms, 2s, 1min), above 0.
        #[arg(value_name = "S", value_parser = positive)]
        seconds: f64,
    },
    /// Set_World_Gravity: gravity along Z, m/s² (the default is -9.8).
    Gravity {
        /// m/s² along Z; negative pulls down.
        #[arg(value_name = "M_S2", value_parser = finite, allow_negative_numbers = true)]
        value: f64,
    },
    /// Set_World_Hardness: how much every joint gives under load, 0 (rigid) to 1 (soft): a
    /// softer world lets a robot's parts sag and stretch apart (ODE's CFM).
    WorldHardness {
        #[arg(value_name = "V", value_parser = finite, allow_negative_numbers = true)]
        value: f64,
    },
    /// Set_World_Bounciness: how quickly every joint springs back when its parts have drifted
    /// apart, 0 (never) to 1 (at once, in one step) (ODE's ERP).
    WorldBounciness {
        #[arg(value_name = "V", value_parser = finite, allow_negative_numbers = true)]
        value: f64,
    },
    /// Save: the whole simulation to a file on the server.
    ///
    /// The name is resolved by the server, inside its save directory (`simrob serve
    /// --save-dir`), e.g. `run1.xml`.
    Save {
        /// The file's name on the server, inside its save directory (e.g. `run1.xml`).
        #[arg(value_name = "FILE")]
        file: String,
    },
    /// Load: a simulation saved with `save`, from the server's save directory.
    Load {
        /// The file's name on the server, inside its save directory (as given to `save`).
        #[arg(value_name = "FILE")]
        file: String,
    },
    /// Set_Fast_Mode: a faster, less exact solver.
    FastMode {
        #[arg(value_name = "on|off")]
        mode: Switch,
    },
    /// Set_Steps_Per_Iteration: physics steps per iteration (agents see one).
    StepsPerIteration {
        /// Steps (≥ 1).
        #[arg(value_name = "N", value_parser = crate::flags::count(1u32, u32::MAX))]
        steps: u32,
    },
    /// Set_Entity_Position: move a robot or ball rigidly to X Y Z (metres).
    SetPosition {
        /// Entity id.
        #[arg(long, value_name = "ID")]
        entity: u32,
        /// X, metres.
        #[arg(value_name = "X", value_parser = finite, allow_negative_numbers = true)]
        x: f64,
        /// Y, metres.
        #[arg(value_name = "Y", value_parser = finite, allow_negative_numbers = true)]
        y: f64,
        /// Z, metres (Z is up).
        #[arg(value_name = "Z", value_parser = finite, allow_negative_numbers = true)]
        z: f64,
    },
    /// Robot_Motor_Control: target wheel speeds of a robot.
    ///
    /// Example: `motors --entity 3 0=3 1=-5` sets wheel joint 0 to 3 rad/s and wheel joint
    /// 1 to -5 rad/s.
    Motors {
        /// Robot entity id.
        #[arg(long, value_name = "ID")]
        entity: u32,
        /// Wheel joint id and target angular velocity in rad/s.
        #[arg(value_name = "JOINT=VALUE", required = true, value_parser = motor)]
        motors: Vec<MotorCommand>,
    },
    /// Create_Entity Type="Humanoid": a FutRob humanoid robot on the KidSize field.
    ///
    /// Example: `humanoid --entity 21 --team cyan -- -0.3 0 0` puts a cyan robot 30 cm
    /// behind the centre spot, facing the magenta goal (+X). Load scenarios/soccer/kidsize.xml
    /// first (`scenario`).
    Humanoid {
        /// Entity id of the new robot.
        #[arg(long, value_name = "ID")]
        entity: u32,
        /// Team: cyan (defends the goal at -X) or magenta (the goal at +X).
        #[arg(long, value_name = "cyan|magenta")]
        team: String,
        /// X on the field, metres.
        #[arg(value_name = "X", value_parser = finite, allow_negative_numbers = true)]
        x: f64,
        /// Y on the field, metres.
        #[arg(value_name = "Y", value_parser = finite, allow_negative_numbers = true)]
        y: f64,
        /// Heading, radians counter-clockwise from +X.
        #[arg(value_name = "HEADING", value_parser = finite, allow_negative_numbers = true,
              default_value = "0")]
        heading: f64,
        /// Motion noise and falls: paper (FutRob's robots) or ideal (exact, no falls).
        #[arg(long, value_name = "PROFILE", default_value = "paper")]
        profile: String,
        /// Seed of the robot's noise (default: its entity id).
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
    },
    /// Humanoid_Action: one of a humanoid's actions, by FutRob's name and parameters.
    ///
    /// Examples: `action --entity 21 walk distance=30` (2 steps of 12 cm and 3 of 2 cm),
    /// `action --entity 21 turn angle=-40` (two 20° turns to the left),
    /// `action --entity 21 turnHeadVertically angle=-30`, `action --entity 21 kickRight`.
    /// Units are centimetres and degrees; angles are positive to the right. Every action,
    /// its parameters, their ranges and defaults are listed below.
    Action {
        /// Humanoid entity id.
        #[arg(long, value_name = "ID")]
        entity: u32,
        /// The action's name.
        #[arg(value_name = "NAME")]
        name: String,
        /// Its parameters.
        #[arg(value_name = "PARAM=VALUE", value_parser = action_param)]
        params: Vec<(String, String)>,
    },
    /// Register_Agent: register an agent.
    ///
    /// Without --port it registers this commander's own address under KEY, and the
    /// confirmation comes back. With --ip/--port it registers another program's address;
    /// the server sends that confirmation to registered agents only, so the commander sees
    /// it only when it is registered itself (--register); otherwise only an error would
    /// come back, and silence after --timeout means accepted.
    Register {
        /// The agent's key (re-registering a key updates it).
        #[arg(value_name = "KEY")]
        key: String,
        /// Agent type: GUI, RobotController or an extension type of the server.
        #[arg(long, value_name = "TYPE", default_value = "GUI")]
        agent_type: String,
        /// Synchronous agent (the server waits for its Synchronize in sync mode).
        #[arg(long)]
        sync: bool,
        /// Simulated seconds (or 50ms, 2s, 1min) between the broadcasts the agent gets; -1 =
        /// never, 0 = every iteration.
        #[arg(long, value_name = "S", default_value = "-1",
              value_parser = broadcast_interval, allow_negative_numbers = true)]
        broadcast: f64,
        /// The agent's IP (default: the commander's).
        #[arg(long, value_name = "IP", requires = "port")]
        ip: Option<IpAddr>,
        /// The agent's UDP port (default: the commander's).
        #[arg(long, value_name = "PORT", value_parser = crate::flags::count(1u16, u16::MAX))]
        port: Option<u16>,
    },
    /// Info_Request: where agent KEY is. Needs --register (the answer goes to the
    /// registered requester).
    Info {
        /// Key of the agent asked about.
        #[arg(value_name = "KEY")]
        key: String,
    },
    /// Synchronize: tell the server an agent finished an iteration.
    ///
    /// The protocol confirms nothing here: the commander waits --timeout for an error and
    /// reports the request as sent when none comes.
    Synchronize {
        /// The iteration finished.
        #[arg(value_name = "ITERATION")]
        iteration: u64,
        /// The agent's key (default: the --register key).
        #[arg(long, value_name = "KEY")]
        key: Option<String>,
    },
    /// Every request of a file, in order, one datagram per request, each waited for.
    ///
    /// For example scenarios/soccer.xml (materials, field, SumBot and ball). Stops at the
    /// first error. Control and entity requests are sent asking for a confirmation whatever
    /// the file says.
    Scenario {
        /// XML file of SimRob messages; `-` reads standard input.
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

fn finite(s: &str) -> Result<f64, String> {
    parse_finite_f64(s).map_err(|e| e.to_string())
}

/// A time above 0 ([`crate::flags::seconds`]).
fn positive(s: &str) -> Result<f64, String> {
    match crate::flags::seconds(s)? {
        v if v > 0.0 => Ok(v),
        _ => Err(format!(
            "expected a time above 0: seconds {}, got '{s}'",
            crate::flags::TIME_FORMS
        )),
    }
}

/// A time, 0 or more ([`crate::flags::seconds`]).
fn non_negative(s: &str) -> Result<f64, String> {
    crate::flags::seconds(s)
}

fn broadcast_interval(s: &str) -> Result<f64, String> {
    if s.trim() == "-1" {
        return Ok(-1.0);
    }
    crate::flags::seconds(s).map_err(|_| {
        format!(
            "expected -1 (never) or a time: seconds, 0 or more {}, got '{s}'",
            crate::flags::TIME_FORMS
        )
    })
}

/// `PARAM=VALUE`: an action parameter (the server judges the name and the value).
fn action_param(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.trim().is_empty() => Ok((k.trim().to_string(), v.trim().to_string())),
        _ => Err(format!(
            "expected PARAM=VALUE (e.g. distance=30 or angle=-20), found {s:?}"
        )),
    }
}

/// `JOINT=VALUE`: a wheel joint id and a target angular velocity (rad/s).
fn motor(s: &str) -> Result<MotorCommand, String> {
    let Some((joint, value)) = s.split_once('=') else {
        return Err(format!(
            "expected JOINT=VALUE (a wheel joint id and rad/s, e.g. 0=3.5), found {s:?}"
        ));
    };
    let wheel_joint_id = joint.trim().parse::<u32>().map_err(|_| {
        format!("the wheel joint id (before '=') must be a non-negative integer, found {joint:?}")
    })?;
    let value =
        parse_finite_f64(value).map_err(|e| format!("the speed in rad/s (after '='): {e}"))?;
    Ok(MotorCommand {
        wheel_joint_id,
        value,
    })
}

/// What the requests of a command need to know about the commander.
pub struct Commander<'a> {
    pub keys: &'a CommandKeys,
    /// The commander's own address, as the server sees it.
    pub local: std::net::SocketAddr,
    /// The key the commander registered under, if it did.
    pub registered: Option<&'a str>,
    /// The largest file read (`--max-scenario-bytes`, `maxscenariobytes`).
    pub max_file_bytes: u64,
}

fn control(request: ControlRequest) -> Request {
    Request::Control {
        request,
        response: Some(true),
    }
}

fn entity(request: EntityRequest) -> Request {
    Request::Entity {
        request,
        response: Some(true),
    }
}

/// The Register_Agent request for the commander itself: a GUI agent that never receives
/// broadcasts (its log is the responses).
pub fn register_self(key: &str, local: std::net::SocketAddr) -> Request {
    Request::Agent(AgentRequest::RegisterAgent {
        agent_type: AgentType::Gui,
        port: local.port(),
        ip: local.ip().to_string(),
        sync: false,
        broadcast: -1.0,
        key: key.to_string(),
    })
}

/// Asks for a confirmation on a control or entity request.
pub fn confirmed(request: Request) -> Request {
    match request {
        Request::Control { request, .. } => control(request),
        Request::Entity { request, .. } => entity(request),
        agent => agent,
    }
}

/// Reads a file (`-` = standard input) of at most `max` bytes (`--max-scenario-bytes`, the
/// configuration key `maxscenariobytes`).
pub fn read_input(path: &Path, max: u64) -> Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .take(max.saturating_add(1))
            .read_to_end(&mut bytes)
            .context("cannot read standard input")?;
        if bytes.len() as u64 > max {
            bail!(simrob_files::over_limit(
                "standard input",
                None,
                max,
                crate::flags::RAISE_SCENARIO_BYTES_OR_KEY
            ));
        }
        Ok(bytes)
    } else {
        crate::run::read_scenario(path, max)
    }
}

/// Every request of a file, decoded with `keys`; any error in it is reported (nothing is
/// sent from a broken file).
pub fn read_requests(path: &Path, keys: &CommandKeys, max: u64) -> Result<Vec<Request>> {
    let bytes = read_input(path, max)?;
    let name = path.display();
    let mut requests = Vec::new();
    for (n, r) in decode_datagram(&bytes, keys).into_iter().enumerate() {
        requests.push(r.map_err(|e| anyhow::anyhow!("{name}: request {}: {e}", n + 1))?);
    }
    if requests.is_empty() {
        bail!("{name} holds no SimRob request");
    }
    Ok(requests)
}

/// Like [`read_requests`], but every request must be a `wanted` control command.
fn read_only(
    path: &Path,
    cx: &Commander,
    wanted: &str,
    is_wanted: fn(&ControlRequest) -> bool,
) -> Result<Vec<Request>> {
    let keys = cx.keys;
    let requests = read_requests(path, keys, cx.max_file_bytes)?;
    for (n, r) in requests.iter().enumerate() {
        let ok = matches!(r, Request::Control { request, .. } if is_wanted(request));
        if !ok {
            bail!(
                "{}: request {} is {}, not {wanted} (`simrob send scenario FILE` sends every request of a file)",
                path.display(),
                n + 1,
                r.command(keys)
            );
        }
    }
    Ok(requests.into_iter().map(confirmed).collect())
}

impl SendCommand {
    /// The requests this command sends, in order. Files are read and checked here.
    pub fn requests(&self, cx: &Commander) -> Result<Vec<Request>> {
        use ControlRequest as C;
        let one = |r: ControlRequest| Ok(vec![control(r)]);
        match self {
            SendCommand::RegisterMaterials { file } => read_only(
                file,
                cx,
                &cx.keys[simrob_protocol::Command::RegisterMaterialsInteractions],
                |r| matches!(r, C::RegisterMaterialsInteractions { .. }),
            ),
            SendCommand::CreateEntity { file } => read_only(
                file,
                cx,
                &cx.keys[simrob_protocol::Command::CreateEntity],
                |r| matches!(r, C::CreateEntity(_)),
            ),
            SendCommand::Initialize => one(C::InitializeSimulation),
            SendCommand::StepMode { mode } => one(C::SetStepMode(mode.on())),
            SendCommand::Pause => one(C::SetStepMode(true)),
            SendCommand::Play => one(C::SetStepMode(false)),
            SendCommand::Step { count } => Ok((0..*count).map(|_| control(C::MakeStep)).collect()),
            SendCommand::AutoAdjust { mode } => one(C::SetAutoAdjustMode(mode.on())),
            SendCommand::SyncMode { mode } => one(C::SetSyncMode(*mode == SyncSwitch::On)),
            SendCommand::SyncWait { seconds } => one(C::SetSyncWait(*seconds)),
            SendCommand::SetTimestep { seconds } => one(C::SetTimestep(*seconds)),
            SendCommand::Gravity { value } => one(C::SetWorldGravity(*value)),
            SendCommand::WorldHardness { value } => one(C::SetWorldHardness(*value)),
            SendCommand::WorldBounciness { value } => one(C::SetWorldBounciness(*value)),
            SendCommand::Save { file } => one(C::Save(nonempty(file)?)),
            SendCommand::Load { file } => one(C::Load(nonempty(file)?)),
            SendCommand::FastMode { mode } => one(C::SetFastMode(mode.on())),
            SendCommand::StepsPerIteration { steps } => one(C::SetStepsPerIteration(*steps)),
            SendCommand::SetPosition {
                entity: id,
                x,
                y,
                z,
            } => Ok(vec![entity(EntityRequest::SetEntityPosition {
                entity_id: EntityId(*id),
                position: [*x, *y, *z],
            })]),
            SendCommand::Motors { entity: id, motors } => {
                Ok(vec![entity(EntityRequest::RobotMotorControl {
                    entity_id: EntityId(*id),
                    motors: motors.clone(),
                })])
            }
            SendCommand::Humanoid {
                entity: id,
                team,
                x,
                y,
                heading,
                profile,
                seed,
            } => one(C::CreateEntity(simrob_protocol::EntitySpec::Humanoid {
                entity_id: EntityId(*id),
                team: team.clone(),
                position: [*x, *y],
                heading: *heading,
                profile: Some(profile.clone()),
                seed: *seed,
                material: None,
            })),
            SendCommand::Action {
                entity: id,
                name,
                params,
            } => Ok(vec![entity(EntityRequest::HumanoidAction {
                entity_id: EntityId(*id),
                name: name.clone(),
                params: params.clone(),
            })]),
            SendCommand::Register {
                key,
                agent_type,
                sync,
                broadcast,
                ip,
                port,
            } => {
                if key.trim().is_empty() {
                    bail!("the agent key must not be empty");
                }
                if agent_type.trim().is_empty() {
                    bail!("the agent type must not be empty");
                }
                Ok(vec![Request::Agent(AgentRequest::RegisterAgent {
                    agent_type: AgentType::parse(agent_type.trim()),
                    port: port.unwrap_or(cx.local.port()),
                    ip: ip.unwrap_or(cx.local.ip()).to_string(),
                    sync: *sync,
                    broadcast: *broadcast,
                    key: key.clone(),
                })])
            }
            SendCommand::Info { key } => {
                let Some(requester) = cx.registered else {
                    bail!(
                        "info needs --register KEY: the server answers Info_Request to the registered requester only"
                    );
                };
                Ok(vec![Request::Agent(AgentRequest::InfoRequest {
                    requester: requester.to_string(),
                    requested: key.clone(),
                })])
            }
            SendCommand::Synchronize { iteration, key } => {
                let Some(key) = key.as_deref().or(cx.registered) else {
                    bail!("synchronize needs the agent's key: --key KEY (or --register KEY)");
                };
                Ok(vec![Request::Agent(AgentRequest::Synchronize {
                    key: key.to_string(),
                    iteration: *iteration,
                })])
            }
            SendCommand::Scenario { file } => Ok(read_requests(file, cx.keys, cx.max_file_bytes)?
                .into_iter()
                .map(confirmed)
                .collect()),
        }
    }
}

fn nonempty(file: &str) -> Result<String> {
    if file.trim().is_empty() {
        bail!("a file name is needed");
    }
    Ok(file.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn motor_values_parse_and_bad_ones_say_why() {
        assert_eq!(
            motor("1=-5"),
            Ok(MotorCommand {
                wheel_joint_id: 1,
                value: -5.0
            })
        );
        assert!(motor("0=abc").unwrap_err().contains("expected a number"));
        assert!(motor("0=NaN").unwrap_err().contains("finite"));
        assert!(motor("-1=2").unwrap_err().contains("wheel joint id"));
        assert!(motor("3").unwrap_err().contains("JOINT=VALUE"));
    }

    #[test]
    fn numbers_are_checked() {
        assert!(positive("0").is_err());
        assert!(positive("inf").is_err());
        assert_eq!(positive("0.02"), Ok(0.02));
        assert_eq!(positive("20ms"), Ok(0.02));
        assert_eq!(non_negative("1min"), Ok(60.0));
        assert_eq!(broadcast_interval("2s"), Ok(2.0));
        assert!(non_negative("-1").is_err());
        assert_eq!(broadcast_interval("-1"), Ok(-1.0));
        assert!(broadcast_interval("-0.5").is_err());
    }
}
