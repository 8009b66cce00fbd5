//! What the session allows a sender: who may change the world, how much work one datagram
//! may cause, how large the world may grow, which values are in range, and how much the
//! server may send to an address that has not shown it asked (anti-amplification).
//!
//! Every limit is a configuration key (see [`Limits::set`] and docs/security.md, "Security and
//! limits"). The keys, their defaults, the values they accept and their meanings are in
//! [`crate::keydoc::LIMIT_KEYS`].
//!
//! **Proven addresses.** A UDP source address can be forged, so the server treats an address
//! as having asked for what it is sent only when it is on loopback (forging it takes root on
//! this machine) or listed in `trustedagentips`. To any other address it sends at most
//! `amplificationfactor` times the bytes that address sent it: a forged registration or a
//! registration naming another port gets almost nothing, whatever it asks for. Remote agents
//! that receive broadcasts belong in `trustedagentips`.
//!
//! **Addresses that asked.** Proven or not, an agent's address is sent broadcasts, other
//! agents' confirmations and `Info_Request` answers only once it has sent the server a
//! datagram itself (the session's `Agent::asked`); and what an unproven address causes is
//! confirmed to it alone, never fanned out to other agents.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};

use simrob_math::Shown;
use simrob_protocol::{ControlRequest, EntityRequest, EntitySpec, Request};
use simrob_world::{LoadLimits, World};

/// Who may change the world.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorldAccess {
    /// Any sender.
    Everyone,
    /// Registered agents, from the address they registered from.
    Agents,
    /// Registered agents, and any sender on loopback (this machine's users).
    LocalOrAgents,
    /// Registered agents whose key starts with the shared secret and `:`.
    Secret,
}

impl WorldAccess {
    fn parse(text: &str) -> Option<WorldAccess> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "everyone" => WorldAccess::Everyone,
            "agents" => WorldAccess::Agents,
            "local-or-agents" => WorldAccess::LocalOrAgents,
            "secret" => WorldAccess::Secret,
            _ => return None,
        })
    }

    fn as_str(self) -> &'static str {
        match self {
            WorldAccess::Everyone => "everyone",
            WorldAccess::Agents => "agents",
            WorldAccess::LocalOrAgents => "local-or-agents",
            WorldAccess::Secret => "secret",
        }
    }
}

/// Which IPs count as proven besides loopback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trusted {
    /// Only loopback (if `trustloopback`) counts as proven.
    None,
    /// Addresses on these IPs count as proven.
    Ips(Vec<IpAddr>),
    /// Every address (a closed network).
    All,
}

/// The session's limits (see the module docs for the keys).
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Who may change the world (key `worldaccess`, default `local-or-agents`).
    pub world_access: WorldAccess,
    /// The shared secret of [`WorldAccess::Secret`] (key `worldsecret`, default none).
    pub world_secret: Option<String>,
    /// Requests one datagram may carry; with more, none of them runs (key `maxrequestsperdatagram`, default 64).
    pub max_requests_per_datagram: usize,
    /// Save and Load requests one datagram may carry (key `maxfilerequestsperdatagram`, default 1).
    pub max_file_requests_per_datagram: usize,
    /// A confirmation goes to every agent while there are at most this many, beyond that to its sender only (key `maxconfirmationfanout`, default 64).
    pub max_confirmation_fanout: usize,
    /// Most agents registered at once; a Register_Agent under a new key beyond is refused (key `maxagents`, default 4096).
    pub max_agents: usize,
    /// Largest `Set_Steps_Per_Iteration` (key `maxstepsperiteration`, default 1000).
    pub max_steps_per_iteration: u32,
    /// Physics steps run at a time: a longer iteration runs in slices, agents answered between them (key `stepsperslice`, default 10).
    pub steps_per_slice: u32,
    /// Requests waiting for an iteration under way or a file operation; a datagram that would queue more is refused whole (key `maxqueuedrequests`, default 4096).
    pub max_queued_requests: usize,
    /// Most entities in the world, for Create_Entity and Load (key `maxentities`, default 250).
    pub max_entities: usize,
    /// Most rigid bodies in the world, for Create_Entity and Load (key `maxbodies`, default 1000).
    pub max_bodies: usize,
    /// Largest extent of a body, in metres, for Create_Entity and Load (key `maxbodysize`, default 100).
    pub max_body_size: f64,
    /// Largest mass of a body, in kg (−1, static, always allowed), for Create_Entity and Load (key `maxbodymass`, default 100000).
    pub max_body_mass: f64,
    /// Most registered materials, for Register_Materials_Interactions and Load (key `maxmaterials`, default 1000).
    pub max_materials: usize,
    /// Most material-pair interactions, and most pairs with a rolling resistance, for
    /// Register_Materials_Interactions, Set_Rolling_Resistance and Load (key `maxinteractions`, default 10000).
    pub max_interactions: usize,
    /// Largest |coordinate| of a position, in metres (key `maxposition`, default 10000).
    pub max_position: f64,
    /// Largest |component| of a velocity or motor target (key `maxvelocity`, default 10000).
    pub max_velocity: f64,
    /// Largest |gravity|, in m/s² (key `maxgravity`, default 1000).
    pub max_gravity: f64,
    /// Shortest allowed timestep, in seconds (key `mintimestep`, default 0.00001).
    pub min_timestep: f64,
    /// Longest allowed timestep, in seconds (key `maxtimestep`, default 1).
    pub max_timestep: f64,
    /// Longest wait for synchronous agents, in seconds: the largest `Set_Sync_Wait`, `syncwait`
    /// and `Sync_Wait` of a loaded file (key `maxsyncwait`, default 10).
    pub max_sync_wait: f64,
    /// Bytes sent to an unproven address per byte received from it (key `amplificationfactor`, default 3).
    pub amplification_factor: f64,
    /// Whether addresses on the loopback interface count as proven (key `trustloopback`, default true).
    pub trust_loopback: bool,
    /// IPs whose addresses count as proven besides loopback (key `trustedagentips`, comma-separated or `all`; default none).
    pub trusted: Trusted,
    /// Socket receive buffer asked of the OS, in bytes (key `receivebuffer`, default 8388608).
    pub receive_buffer: usize,
    /// Most bytes of save files in the save directory (key `savedirectorybytes`, default 268435456).
    pub save_directory_bytes: u64,
    /// Most save files in the save directory (key `savedirectoryfiles`, default 1000).
    pub save_directory_files: usize,
    /// Secret that seals the engine state in save files, so files sealed with it resume exactly in any run that has it (key `savekey`, default none: a random key per run).
    pub save_key: Option<String>,
    /// Deepest element nesting a datagram may have (key `maxxmldepth`, default 128, at most 1024).
    pub max_xml_depth: usize,
    /// Unproven addresses the anti-amplification ledger remembers; past it the oldest is forgotten (key `amplificationledger`, default 65536).
    pub amplification_ledger: usize,
    /// Largest save file a Save writes or a Load reads, bytes (key `maxsavefilebytes`, default 67108864).
    pub max_save_file_bytes: u64,
    /// Largest scenario file `simrob serve --scenario`, `simrob run` and `simrob send` read,
    /// bytes (key `maxscenariobytes`, default 67108864).
    pub max_scenario_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        let load = LoadLimits::default();
        Limits {
            // A server on a laptop: a few hundred bodies in contact are what it steps in real
            // time; 300 robots dropped on one spot once took 1.2 GB and 7 s a step.
            world_access: WorldAccess::LocalOrAgents,
            world_secret: None,
            max_requests_per_datagram: 64,
            max_file_requests_per_datagram: 1,
            max_confirmation_fanout: 64,
            max_agents: DEFAULT_MAX_AGENTS,
            max_steps_per_iteration: load.max_steps_per_iteration,
            steps_per_slice: 10,
            max_queued_requests: 4096,
            max_entities: load.max_entities,
            max_bodies: load.max_bodies,
            max_body_size: load.max_body_size,
            max_body_mass: load.max_body_mass,
            max_materials: load.max_materials,
            max_interactions: load.max_interactions,
            max_position: load.max_position,
            max_velocity: load.max_velocity,
            max_gravity: load.max_gravity,
            min_timestep: load.timestep.0,
            max_timestep: load.timestep.1,
            max_sync_wait: DEFAULT_MAX_SYNC_WAIT,
            amplification_factor: 3.0,
            trust_loopback: true,
            trusted: Trusted::None,
            receive_buffer: 8 << 20,
            save_directory_bytes: 256 << 20,
            save_directory_files: 1000,
            save_key: None,
            max_xml_depth: simrob_protocol::tree::MAX_DEPTH,
            amplification_ledger: DEFAULT_LEDGER_SIZE,
            max_save_file_bytes: DEFAULT_MAX_SAVE_FILE_BYTES,
            max_scenario_bytes: DEFAULT_MAX_SCENARIO_BYTES,
        }
    }
}

/// Default of [`Limits::max_save_file_bytes`]: 64 MiB.
pub const DEFAULT_MAX_SAVE_FILE_BYTES: u64 = 64 << 20;

/// Default of [`Limits::max_scenario_bytes`]: 64 MiB.
pub const DEFAULT_MAX_SCENARIO_BYTES: u64 = 64 << 20;

/// Why a limit's value was refused (the configuration error names the key).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LimitValueError {
    /// A value that must be a finite number above zero is not one (holds the text given).
    #[error("expected a positive number, found {0:?}")]
    NotPositive(String),
    /// A count that must be a whole number of at least 1 is not one (holds the text given).
    #[error("expected a whole number ≥ 1, found {0:?}")]
    NotCount(String),
    /// A value that must be a whole number (0 allowed) is not one (holds the text given).
    #[error("expected a whole number, found {0:?}")]
    NotWhole(String),
    /// A switch that must be `true`/`false` (or `1`/`0`, `yes`/`no`, `on`/`off`) is not one.
    #[error("expected true or false, found {0:?}")]
    NotBool(String),
    /// `worldaccess` is none of `everyone`, `agents`, `local-or-agents`, `secret`.
    #[error("expected everyone, agents, local-or-agents or secret, found {0:?}")]
    NotWorldAccess(String),
    /// The `worldsecret` contains `:`, which separates the secret from the rest of an agent key.
    #[error("a secret without ':'")]
    SecretWithColon,
    /// An entry of `trustedagentips` is not an IP address (holds the entry).
    #[error("{0:?} is not an IP address")]
    NotIp(String),
    /// `maxstepsperiteration` is above what the world can ever run in one iteration.
    #[error("at most {max}, found {found}")]
    TooManySteps {
        /// The largest value allowed ([`simrob_world::MAX_STEPS_PER_ITERATION`]).
        max: u32,
        /// The value given.
        found: u32,
    },
    /// `maxxmldepth` is deeper than the parser allows.
    #[error("at most {max}, found {found}")]
    TooDeep {
        /// The largest value allowed ([`simrob_protocol::tree::MAX_DEPTH_LIMIT`]).
        max: usize,
        /// The value given.
        found: usize,
    },
    /// `maxtimestep` is above the longest timestep the world accepts.
    #[error("at most {max} s, found {}", Shown::of(.found))]
    TimestepTooLong {
        /// The longest timestep allowed, in seconds ([`simrob_world::MAX_TIMESTEP`]).
        max: f64,
        /// The value given, in seconds.
        found: f64,
    },
}

/// Why a request may not run: past a limit, or from an address that may not change the world.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// A position coordinate beyond `maxposition` (or not finite).
    #[error(
        "{what} {} is out of range (|{what}| ≤ {max} m, configuration key maxposition)",
        Shown::of(.value)
    )]
    Position {
        /// The request field the value came from (`Position`).
        what: &'static str,
        /// The offending coordinate, in metres.
        value: f64,
        /// The limit, in metres (`maxposition`).
        max: f64,
    },
    /// A velocity or motor target component beyond `maxvelocity` (or not finite).
    #[error(
        "{what} {} is out of range (at most {max} in size, configuration key maxvelocity)",
        Shown::of(.value)
    )]
    Velocity {
        /// The request field the value came from (`Value` of a motor).
        what: &'static str,
        /// The offending component.
        value: f64,
        /// The limit (`maxvelocity`).
        max: f64,
    },
    /// A gravity beyond `maxgravity` in size (or not finite).
    #[error(
        "Gravity {} is out of range (|Gravity| ≤ {max} m/s², configuration key maxgravity)",
        Shown::of(.value)
    )]
    Gravity {
        /// The gravity asked for, in m/s².
        value: f64,
        /// The limit, in m/s² (`maxgravity`).
        max: f64,
    },
    /// A timestep outside `mintimestep` … `maxtimestep` (or not finite).
    #[error(
        "Timestep {} is out of range ({min} … {max} s, configuration keys mintimestep and maxtimestep)",
        Shown::of(.value)
    )]
    Timestep {
        /// The timestep asked for, in seconds.
        value: f64,
        /// The shortest allowed, in seconds (`mintimestep`).
        min: f64,
        /// The longest allowed, in seconds (`maxtimestep`).
        max: f64,
    },
    /// A `Set_Sync_Wait` beyond `maxsyncwait` (or not finite).
    #[error(
        "Sync_Wait {} is out of range (0 … {max} s, configuration key maxsyncwait)",
        Shown::of(.value)
    )]
    SyncWait {
        /// The wait asked for, in seconds.
        value: f64,
        /// The limit, in seconds (`maxsyncwait`).
        max: f64,
    },
    /// A `Set_Steps_Per_Iteration` above `maxstepsperiteration`.
    #[error(
        "Steps_Per_Iteration {value} is more than {max} (configuration key maxstepsperiteration)"
    )]
    Steps {
        /// The steps per iteration asked for.
        value: u32,
        /// The limit (`maxstepsperiteration`).
        max: u32,
    },
    /// A Create_Entity in a world that already holds `maxentities` entities.
    #[error(
        "the world already has {max} entities, the most allowed (configuration key maxentities)"
    )]
    Entities {
        /// The limit (`maxentities`).
        max: usize,
    },
    /// A Create_Entity that would take the world past `maxbodies` rigid bodies.
    #[error("the world would have {would} bodies, more than {max} (configuration key maxbodies)")]
    Bodies {
        /// Bodies the world would hold with the new entity.
        would: usize,
        /// The limit (`maxbodies`).
        max: usize,
    },
    /// A Create_Entity with a body larger than `maxbodysize` or heavier than `maxbodymass`
    /// (holds which body, its size or mass, and the limit).
    #[error("{0}")]
    Body(String),
    /// A Register_Materials_Interactions that would take the world past `maxmaterials`.
    #[error("the world would have {would} materials, more than {max} (configuration key maxmaterials); nothing was registered")]
    Materials {
        /// Materials the world would hold with the new ones.
        would: usize,
        /// The limit (`maxmaterials`).
        max: usize,
    },
    /// A Register_Materials_Interactions or Set_Rolling_Resistance that would take the world
    /// past `maxinteractions` material pairs.
    #[error("the world would have {would} {what}, more than {max} (configuration key maxinteractions); nothing was registered")]
    Interactions {
        /// `interactions` or `rolling resistances`.
        what: &'static str,
        /// Pairs the world would hold with the new ones.
        would: usize,
        /// The limit (`maxinteractions`).
        max: usize,
    },
    /// A sender that `worldaccess` does not let change the world.
    #[error("{from} may not change the world (configuration key worldaccess = {access}): register as an agent from this address first")]
    WorldAccess {
        /// The sender's address.
        from: SocketAddr,
        /// The `worldaccess` in force, as its key value.
        access: &'static str,
    },
}

fn positive(value: &str) -> Result<f64, LimitValueError> {
    match value.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(LimitValueError::NotPositive(value.to_string())),
    }
}

/// Default of [`Limits::max_sync_wait`], in seconds: a hundred times the SimRob manual's
/// `syncwait` (0.1 s), room for lockstep over a slow link. One synchronous agent that never
/// synchronizes holds every iteration this long.
pub const DEFAULT_MAX_SYNC_WAIT: f64 = 10.0;

/// Default of [`Limits::max_agents`].
pub const DEFAULT_MAX_AGENTS: usize = 4096;

fn count<T: std::str::FromStr + PartialOrd + From<u8>>(value: &str) -> Result<T, LimitValueError> {
    match value.trim().parse::<T>() {
        Ok(v) if v >= T::from(1) => Ok(v),
        _ => Err(LimitValueError::NotCount(value.to_string())),
    }
}

impl Limits {
    /// Every key with its default, as text.
    pub fn keys() -> Vec<(&'static str, String)> {
        let d = Limits::default();
        vec![
            ("worldaccess", d.world_access.as_str().into()),
            ("worldsecret", String::new()),
            (
                "maxrequestsperdatagram",
                d.max_requests_per_datagram.to_string(),
            ),
            (
                "maxfilerequestsperdatagram",
                d.max_file_requests_per_datagram.to_string(),
            ),
            (
                "maxconfirmationfanout",
                d.max_confirmation_fanout.to_string(),
            ),
            ("maxagents", d.max_agents.to_string()),
            (
                "maxstepsperiteration",
                d.max_steps_per_iteration.to_string(),
            ),
            ("stepsperslice", d.steps_per_slice.to_string()),
            ("maxqueuedrequests", d.max_queued_requests.to_string()),
            ("maxentities", d.max_entities.to_string()),
            ("maxbodies", d.max_bodies.to_string()),
            ("maxbodysize", d.max_body_size.to_string()),
            ("maxbodymass", d.max_body_mass.to_string()),
            ("maxmaterials", d.max_materials.to_string()),
            ("maxinteractions", d.max_interactions.to_string()),
            ("maxposition", d.max_position.to_string()),
            ("maxvelocity", d.max_velocity.to_string()),
            ("maxgravity", d.max_gravity.to_string()),
            ("mintimestep", d.min_timestep.to_string()),
            ("maxtimestep", d.max_timestep.to_string()),
            ("maxsyncwait", d.max_sync_wait.to_string()),
            ("amplificationfactor", d.amplification_factor.to_string()),
            ("trustloopback", d.trust_loopback.to_string()),
            ("trustedagentips", String::new()),
            ("receivebuffer", d.receive_buffer.to_string()),
            ("savedirectorybytes", d.save_directory_bytes.to_string()),
            ("savedirectoryfiles", d.save_directory_files.to_string()),
            ("savekey", String::new()),
            ("maxxmldepth", d.max_xml_depth.to_string()),
            ("amplificationledger", d.amplification_ledger.to_string()),
            ("maxsavefilebytes", d.max_save_file_bytes.to_string()),
            ("maxscenariobytes", d.max_scenario_bytes.to_string()),
        ]
    }

    /// Sets `key` (lower case) from its text; `None` when `key` is not a limit.
    pub fn set(&mut self, key: &str, value: &str) -> Option<Result<(), LimitValueError>> {
        // Ok(false): `key` is not a limit.
        let result = (|| -> Result<bool, LimitValueError> {
            match key {
                "worldaccess" => {
                    self.world_access = WorldAccess::parse(value)
                        .ok_or_else(|| LimitValueError::NotWorldAccess(value.to_string()))?
                }
                "worldsecret" => {
                    let v = value.trim();
                    if v.contains(':') {
                        return Err(LimitValueError::SecretWithColon);
                    }
                    self.world_secret = (!v.is_empty()).then(|| v.to_string());
                }
                "maxrequestsperdatagram" => self.max_requests_per_datagram = count(value)?,
                "maxfilerequestsperdatagram" => self.max_file_requests_per_datagram = count(value)?,
                "maxconfirmationfanout" => {
                    self.max_confirmation_fanout = value
                        .trim()
                        .parse()
                        .map_err(|_| LimitValueError::NotWhole(value.to_string()))?
                }
                "maxagents" => self.max_agents = count(value)?,
                "maxstepsperiteration" => {
                    let n: u32 = count(value)?;
                    if n > simrob_world::MAX_STEPS_PER_ITERATION {
                        return Err(LimitValueError::TooManySteps {
                            max: simrob_world::MAX_STEPS_PER_ITERATION,
                            found: n,
                        });
                    }
                    self.max_steps_per_iteration = n;
                }
                "stepsperslice" => self.steps_per_slice = count(value)?,
                "maxqueuedrequests" => self.max_queued_requests = count(value)?,
                "maxentities" => self.max_entities = count(value)?,
                "maxbodies" => self.max_bodies = count(value)?,
                "maxbodysize" => self.max_body_size = positive(value)?,
                "maxbodymass" => self.max_body_mass = positive(value)?,
                "maxmaterials" => self.max_materials = count(value)?,
                "maxinteractions" => self.max_interactions = count(value)?,
                "maxposition" => self.max_position = positive(value)?,
                "maxvelocity" => self.max_velocity = positive(value)?,
                "maxgravity" => self.max_gravity = positive(value)?,
                "mintimestep" => self.min_timestep = positive(value)?,
                "maxtimestep" => {
                    let v = positive(value)?;
                    if v > simrob_world::MAX_TIMESTEP {
                        return Err(LimitValueError::TimestepTooLong {
                            max: simrob_world::MAX_TIMESTEP,
                            found: v,
                        });
                    }
                    self.max_timestep = v;
                }
                "maxsyncwait" => self.max_sync_wait = positive(value)?,
                "amplificationfactor" => self.amplification_factor = positive(value)?,
                "trustloopback" => {
                    self.trust_loopback = match value.trim().to_ascii_lowercase().as_str() {
                        "true" | "1" | "yes" | "on" => true,
                        "false" | "0" | "no" | "off" => false,
                        _ => return Err(LimitValueError::NotBool(value.to_string())),
                    }
                }
                "trustedagentips" => {
                    let v = value.trim();
                    self.trusted = if v.eq_ignore_ascii_case("all") {
                        Trusted::All
                    } else if v.is_empty() {
                        Trusted::None
                    } else {
                        Trusted::Ips(
                            v.split(',')
                                .map(|ip| {
                                    ip.trim()
                                        .parse()
                                        .map_err(|_| LimitValueError::NotIp(ip.to_string()))
                                })
                                .collect::<Result<_, _>>()?,
                        )
                    }
                }
                "receivebuffer" => self.receive_buffer = count(value)?,
                "savedirectorybytes" => self.save_directory_bytes = count(value)?,
                "savedirectoryfiles" => self.save_directory_files = count(value)?,
                "savekey" => {
                    let v = value.trim();
                    self.save_key = (!v.is_empty()).then(|| v.to_string());
                }
                "maxxmldepth" => {
                    let n: usize = count(value)?;
                    let max = simrob_protocol::tree::MAX_DEPTH_LIMIT;
                    if n > max {
                        return Err(LimitValueError::TooDeep { max, found: n });
                    }
                    self.max_xml_depth = n;
                }
                "amplificationledger" => self.amplification_ledger = count(value)?,
                "maxsavefilebytes" => self.max_save_file_bytes = count(value)?,
                "maxscenariobytes" => self.max_scenario_bytes = count(value)?,
                _ => return Ok(false),
            }
            Ok(true)
        })();
        match result {
            Ok(false) => None,
            Ok(true) => Some(Ok(())),
            Err(e) => Some(Err(e)),
        }
    }

    /// The bounds a Load applies to a save file.
    pub fn load_limits(&self) -> LoadLimits {
        LoadLimits {
            max_entities: self.max_entities,
            max_bodies: self.max_bodies,
            max_position: self.max_position,
            max_velocity: self.max_velocity,
            max_gravity: self.max_gravity,
            timestep: (self.min_timestep, self.max_timestep),
            max_steps_per_iteration: self.max_steps_per_iteration,
            max_body_size: self.max_body_size,
            max_body_mass: self.max_body_mass,
            max_materials: self.max_materials,
            max_interactions: self.max_interactions,
        }
    }

    /// Whether datagrams from `addr` show it asked for what it is sent (see the module docs).
    pub fn proven(&self, addr: SocketAddr) -> bool {
        (self.trust_loopback && addr.ip().is_loopback())
            || match &self.trusted {
                Trusted::None => false,
                Trusted::All => true,
                Trusted::Ips(ips) => ips.contains(&addr.ip()),
            }
    }

    /// Why `request` may not run in a world like `world` under these limits, if so: values
    /// out of range, a world grown past its entity or body limit.
    pub fn check(&self, request: &Request, world: &World) -> Result<(), Refusal> {
        // The first of `v` that is not finite or larger than `max` in size.
        let beyond = |v: &[f64], max: f64| {
            v.iter()
                .copied()
                .find(|x| !(x.is_finite() && x.abs() <= max))
        };
        let pos = |what: &'static str, v: &[f64]| -> Result<(), Refusal> {
            let max = self.max_position;
            beyond(v, max).map_or(Ok(()), |value| Err(Refusal::Position { what, value, max }))
        };
        let vel = |what: &'static str, v: &[f64]| -> Result<(), Refusal> {
            let max = self.max_velocity;
            beyond(v, max).map_or(Ok(()), |value| Err(Refusal::Velocity { what, value, max }))
        };
        match request {
            Request::Control { request, .. } => match request {
                ControlRequest::SetWorldGravity(g)
                    if !(g.is_finite() && g.abs() <= self.max_gravity) =>
                {
                    return Err(Refusal::Gravity {
                        value: *g,
                        max: self.max_gravity,
                    });
                }
                ControlRequest::SetTimestep(t)
                    if !(t.is_finite() && *t >= self.min_timestep && *t <= self.max_timestep) =>
                {
                    return Err(Refusal::Timestep {
                        value: *t,
                        min: self.min_timestep,
                        max: self.max_timestep,
                    });
                }
                ControlRequest::SetSyncWait(s)
                    if !(s.is_finite() && *s >= 0.0 && *s <= self.max_sync_wait) =>
                {
                    return Err(Refusal::SyncWait {
                        value: *s,
                        max: self.max_sync_wait,
                    });
                }
                ControlRequest::SetStepsPerIteration(n) if *n > self.max_steps_per_iteration => {
                    return Err(Refusal::Steps {
                        value: *n,
                        max: self.max_steps_per_iteration,
                    });
                }
                ControlRequest::RegisterMaterialsInteractions {
                    materials,
                    interactions,
                } => {
                    let new: std::collections::BTreeSet<_> = materials
                        .iter()
                        .map(|m| m.id)
                        .filter(|&id| !world.has_material(id))
                        .collect();
                    let would = world.material_count() + new.len();
                    if !new.is_empty() && would > self.max_materials {
                        return Err(Refusal::Materials {
                            would,
                            max: self.max_materials,
                        });
                    }
                    let new: std::collections::BTreeSet<_> = interactions
                        .iter()
                        .map(|i| {
                            (
                                i.material_1.min(i.material_2),
                                i.material_1.max(i.material_2),
                            )
                        })
                        .filter(|&(a, b)| !world.has_interaction(a, b))
                        .collect();
                    let would = world.interaction_count() + new.len();
                    if !new.is_empty() && would > self.max_interactions {
                        return Err(Refusal::Interactions {
                            what: "interactions",
                            would,
                            max: self.max_interactions,
                        });
                    }
                }
                ControlRequest::SetRollingResistance {
                    material_1,
                    material_2,
                    coefficient,
                } if *coefficient != 0.0
                    && !world.has_rolling_resistance(*material_1, *material_2)
                    && world.rolling_resistance_count() >= self.max_interactions =>
                {
                    return Err(Refusal::Interactions {
                        what: "rolling resistances",
                        would: world.rolling_resistance_count() + 1,
                        max: self.max_interactions,
                    });
                }
                ControlRequest::CreateEntity(spec) => {
                    if world.entity_ids().count() >= self.max_entities {
                        return Err(Refusal::Entities {
                            max: self.max_entities,
                        });
                    }
                    let (bodies, positions): (usize, Vec<f64>) = match spec {
                        EntitySpec::Robot { bodies, .. } | EntitySpec::Field { bodies, .. } => (
                            bodies.len(),
                            bodies.iter().flat_map(|b| b.position).collect(),
                        ),
                        EntitySpec::Ball { position, .. } => (1, position.to_vec()),
                        EntitySpec::Humanoid { position, .. } => {
                            (simrob_soccer_parts(), position.to_vec())
                        }
                    };
                    pos("Position", &positions)?;
                    if let Some(why) = self.load_limits().body_too_large(spec) {
                        return Err(Refusal::Body(why));
                    }
                    let have = simrob_world::PhysicsBackend::body_count(world.physics());
                    if have + bodies > self.max_bodies {
                        return Err(Refusal::Bodies {
                            would: have + bodies,
                            max: self.max_bodies,
                        });
                    }
                }
                _ => {}
            },
            Request::Entity { request, .. } => match request {
                EntityRequest::SetEntityPosition { position, .. } => pos("Position", position)?,
                EntityRequest::RobotMotorControl { motors, .. } => {
                    let v: Vec<f64> = motors.iter().map(|m| m.value).collect();
                    vel("Value", &v)?;
                }
                _ => {}
            },
            Request::Agent(_) => {}
        }
        Ok(())
    }

    /// Whether `from` may change the world, given whether it is the registering address of
    /// a registered agent (`agent_key`).
    pub fn may_change_world(
        &self,
        from: SocketAddr,
        agent_key: Option<&str>,
    ) -> Result<(), Refusal> {
        let ok = match self.world_access {
            WorldAccess::Everyone => true,
            WorldAccess::Agents => agent_key.is_some(),
            WorldAccess::LocalOrAgents => agent_key.is_some() || from.ip().is_loopback(),
            WorldAccess::Secret => match (agent_key, &self.world_secret) {
                (Some(k), Some(s)) => k
                    .strip_prefix(s.as_str())
                    .is_some_and(|rest| rest.starts_with(':')),
                _ => false,
            },
        };
        if ok {
            Ok(())
        } else {
            Err(Refusal::WorldAccess {
                from,
                access: self.world_access.as_str(),
            })
        }
    }
}

/// Bodies a humanoid is made of, counted generously.
fn simrob_soccer_parts() -> usize {
    8
}

/// Bytes received from and sent to each address, for the anti-amplification rule.
#[derive(Debug, Default)]
pub struct Amplification {
    ledger: HashMap<SocketAddr, (u64, u64)>,
    /// The addresses of the ledger, in the order they first came (the oldest first).
    order: std::collections::VecDeque<SocketAddr>,
    /// Datagrams not sent because their address had no credit left.
    pub withheld: u64,
    /// Addresses forgotten because the ledger was full (`amplificationledger`).
    pub forgotten: u64,
}

/// Default of [`Limits::amplification_ledger`]: the addresses the ledger remembers; past it
/// the oldest is forgotten (it then has less credit, never more).
pub const DEFAULT_LEDGER_SIZE: usize = 65_536;

impl Amplification {
    /// `bytes` arrived from `from`; the ledger remembers at most `size` addresses, the
    /// oldest forgotten first.
    pub fn received_within(&mut self, size: usize, from: SocketAddr, bytes: usize) {
        if !self.ledger.contains_key(&from) {
            while self.ledger.len() >= size.max(1) {
                let Some(oldest) = self.order.pop_front() else {
                    break;
                };
                self.ledger.remove(&oldest);
                self.forgotten += 1;
            }
            self.order.push_back(from);
        }
        self.ledger.entry(from).or_default().0 += bytes as u64;
    }

    /// `bytes` arrived from `from` (a ledger of the default size).
    pub fn received(&mut self, from: SocketAddr, bytes: usize) {
        self.received_within(DEFAULT_LEDGER_SIZE, from, bytes);
    }

    /// Whether `bytes` may go to `to` now (and books them if so).
    pub fn may_send(&mut self, limits: &Limits, to: SocketAddr, bytes: usize) -> bool {
        if limits.proven(to) {
            return true;
        }
        let (received, sent) = self.ledger.get(&to).copied().unwrap_or((0, 0));
        let allowed = (received as f64 * limits.amplification_factor) as u64;
        if sent + bytes as u64 <= allowed {
            self.ledger.entry(to).or_default().1 += bytes as u64;
            true
        } else {
            self.withheld += 1;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_parse_and_refuse_bad_values() {
        let mut l = Limits::default();
        assert_eq!(l.set("maxentities", "10"), Some(Ok(())));
        assert_eq!(l.max_entities, 10);
        assert!(matches!(l.set("maxentities", "0"), Some(Err(_))));
        assert!(matches!(l.set("worldaccess", "nobody"), Some(Err(_))));
        assert_eq!(l.set("worldaccess", "agents"), Some(Ok(())));
        assert_eq!(l.set("trustedagentips", "10.0.0.2, 10.0.0.3"), Some(Ok(())));
        assert!(l.proven("10.0.0.3:7".parse().unwrap()));
        assert!(!l.proven("10.0.0.4:7".parse().unwrap()));
        assert!(matches!(l.set("maxtimestep", "11"), Some(Err(_))));
        assert_eq!(l.set("communicationreceiverport", "1"), None);
        for (k, v) in Limits::keys() {
            if !v.is_empty() {
                assert_eq!(Limits::default().clone().set(k, &v), Some(Ok(())), "{k}");
            }
        }
    }

    #[test]
    fn a_full_ledger_forgets_its_oldest_address_only() {
        let limits = Limits::default();
        let mut a = Amplification::default();
        let addr = |p: u16| SocketAddr::from(([192, 0, 2, 7], p));
        for p in 1..=3 {
            a.received_within(3, addr(p), 100);
        }
        a.received_within(3, addr(4), 100);
        assert_eq!(a.forgotten, 1);
        assert!(!a.may_send(&limits, addr(1), 1), "the oldest is forgotten");
        for p in 2..=4 {
            assert!(a.may_send(&limits, addr(p), 300), "{p} keeps its credit");
        }
    }

    #[test]
    fn an_unproven_address_gets_at_most_three_times_what_it_sent() {
        let limits = Limits::default();
        let mut a = Amplification::default();
        let victim: SocketAddr = "192.0.2.7:4000".parse().unwrap();
        a.received(victim, 324);
        let mut sent = 0;
        for _ in 0..100 {
            if a.may_send(&limits, victim, 500) {
                sent += 500;
            }
        }
        assert!(sent <= 3 * 324, "{sent}");
        assert_eq!(a.withheld, 99);
        // Loopback is proven: no limit.
        let local: SocketAddr = "127.0.0.1:4000".parse().unwrap();
        assert!((0..100).all(|_| a.may_send(&limits, local, 60_000)));
        // An address that never sent anything gets nothing.
        assert!(!a.may_send(&limits, "192.0.2.8:1".parse().unwrap(), 1));
    }
}
