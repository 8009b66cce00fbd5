//! Server configuration: every key of the SimRob manual §6, plus simrob's own, with built-in defaults.
//!
//! Two file forms carry the same keys:
//!
//! * the legacy `Configuration.data`: one `key value` per line (`key=value` and `key: value`
//!   are accepted too), `#` starts a comment, blank lines are ignored;
//! * TOML: a flat table of the same keys (`communicationreceiverport = 5005`).
//!
//! Keys are case-insensitive. An unknown key, a value of the wrong type or a value out of range
//! is an error naming the line; keys whose values disagree (`defaultgravity` beyond
//! `maxgravity`, `mintimestep` above `maxtimestep`, …) are an error naming both keys
//! ([`ServerConfig::check_together`]). No file is needed: every key has a default.
//!
//! Every key, its default, the values it accepts and its meaning are in [`crate::keydoc`]
//! (the tables the reference page `docs/reference/config.md` is generated from).

use std::net::IpAddr;
use std::path::PathBuf;

use simrob_math::Shown;
use simrob_protocol::{config_keys, CommandKeys, KeysError};
use simrob_world::WorldConfig;

/// Why a configuration key, value or file is refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A value of the wrong type or out of range.
    #[error("{key}: {problem}")]
    Value {
        /// The key, lower case.
        key: String,
        /// What is wrong with the value.
        problem: String,
    },
    /// Two keys whose values disagree: a default beyond the limit on it (`defaultgravity` and
    /// `maxgravity`, `syncwait` and `maxsyncwait`, `defaultstepsize` and `mintimestep` …
    /// `maxtimestep`), or a minimum above its maximum (`mintimestep`, `maxtimestep`).
    #[error("{keys}: {problem}")]
    Conflict {
        /// The keys, lower case, as `a and b`.
        keys: String,
        /// What is wrong, with both values.
        problem: String,
    },
    /// A key that is neither a SimRob key, a simrob key, a limit nor a command key.
    #[error("unknown configuration key {0:?} (run `simrob serve --list-config` for the keys)")]
    UnknownKey(String),
    /// A line of the legacy form that is not `key value` (nor `key=value`, `key: value`).
    #[error("{file}:{line}: expected `key value`, found {text:?}")]
    Syntax {
        /// The file's name.
        file: String,
        /// The line, counted from 1.
        line: usize,
        /// The line's text, comment and surrounding blanks removed.
        text: String,
    },
    /// A TOML file that does not parse.
    #[error("{file}: {message}")]
    Toml {
        /// The file's name.
        file: String,
        /// The TOML parser's message.
        message: String,
    },
    /// An error in a file, at a line of the legacy form.
    #[error("{file}{}: {source}", line.map(|l| format!(":{l}")).unwrap_or_default())]
    In {
        /// The file's name.
        file: String,
        /// The line, counted from 1; `None` in a TOML file.
        line: Option<usize>,
        /// The error itself.
        #[source]
        source: Box<ConfigError>,
    },
    /// The command keys of a file, taken together, are refused (two commands with one name, say).
    #[error("{file}: command keys: {source}")]
    Keys {
        /// The file's name.
        file: String,
        /// What is wrong with the command keys.
        #[source]
        source: KeysError,
    },
}

fn bad(key: &str, problem: String) -> ConfigError {
    ConfigError::Value {
        key: key.to_string(),
        problem,
    }
}

/// Smallest accepted `maximumdatagramsize`.
pub const MIN_DATAGRAM_SIZE: usize = 1024;
/// Largest UDP payload over IPv4.
pub const MAX_DATAGRAM_SIZE: usize = 65507;

/// Default of [`ServerConfig::unproven_silence_timeout`], seconds.
pub const DEFAULT_UNPROVEN_SILENCE_TIMEOUT: f64 = 60.0;

/// Everything the SimRob server is configured with.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    /// `communicationreceiverip`: the address the server listens on (default 127.0.0.1).
    pub receiver_ip: IpAddr,
    /// `communicationreceiverport`: the UDP port the server listens on; 0 = any free port
    /// (default 5005).
    pub receiver_port: u16,
    /// `simulationengineip`: accepted for SimRob's internal module link, unused (default 127.0.0.1).
    pub simulation_engine_ip: IpAddr,
    /// `simulationengineport`: accepted, unused (default 5006).
    pub simulation_engine_port: u16,
    /// `maximumdatagramsize`: largest datagram sent or accepted, in bytes, between
    /// [`MIN_DATAGRAM_SIZE`] and [`MAX_DATAGRAM_SIZE`] (default 65000); larger broadcasts are split.
    pub maximum_datagram_size: usize,
    /// The world's settings: the `default…` keys (timestep, gravity, contact and joint defaults).
    pub world: WorldConfig,
    /// Every command's name (the `command…key` keys).
    pub keys: CommandKeys,
    /// `defaultresponserequest`: confirm a command when the request does not say.
    pub default_response_request: bool,
    /// `syncwait`: seconds the session waits for synchronous agents.
    pub sync_wait: f64,
    /// Simulated seconds per wall second in asynchronous mode (0 = as fast as possible).
    pub real_time_factor: f64,
    /// `savedirectory`: where Save and Load files live; paths that leave it are refused (default `.`).
    pub save_directory: PathBuf,
    /// `allowforeignagentip`: whether an agent may register an IP other than the one it sends
    /// from (default false).
    pub allow_foreign_agent_ip: bool,
    /// `randomseed`: every agent's random seed derives from it and the agent's key.
    pub random_seed: u64,
    /// `agentsilencetimeout`: seconds without a datagram from an agent's address after which
    /// the agent is removed (for agents behind a firewall, whose closed port answers
    /// nothing); 0 = never (default). Agents that only listen (a GUI agent) must then send
    /// something (an `Info_Request` about themselves) more often than this.
    pub agent_silence_timeout: f64,
    /// `unprovensilencetimeout`: seconds without a datagram from an agent whose receiving
    /// address is not proven (not loopback with `trustloopback`, not in `trustedagentips`)
    /// after which it is removed; 0 = never. The server sends such an address at most
    /// `amplificationfactor` times what came from it, so a silent one soon gets nothing and
    /// no ICMP would ever tell that it left (default 60).
    pub unproven_silence_timeout: f64,
    /// `removeunreachableagents`: remove an agent as soon as a datagram sent to it is
    /// answered with ICMP port unreachable (its program has stopped; default true).
    pub remove_unreachable_agents: bool,
    /// `physicsthreads`: threads each physics step runs on, 1 to
    /// [`simrob_world::MAX_PHYSICS_THREADS`] (default 1); the run is the same at any number.
    /// Above 1 needs a build with parallel physics ([`simrob_world::PARALLEL_PHYSICS`]).
    pub physics_threads: usize,
    /// Who may change the world, and the limits on work, size and values (their keys are
    /// listed in [`crate::Limits`]).
    pub limits: crate::Limits,
    /// The web viewer's limits (`simrob serve --gui`): the `viewer…` keys of
    /// [`crate::VIEWER_KEYS`]; a `--viewer-…` flag given on the command line wins.
    pub viewer: crate::ViewerGuard,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            receiver_ip: IpAddr::from([127, 0, 0, 1]),
            receiver_port: 5005,
            simulation_engine_ip: IpAddr::from([127, 0, 0, 1]),
            simulation_engine_port: 5006,
            maximum_datagram_size: 65000,
            world: WorldConfig::default(),
            keys: CommandKeys::default(),
            default_response_request: false,
            sync_wait: 0.1,
            real_time_factor: 0.0,
            save_directory: PathBuf::from("."),
            allow_foreign_agent_ip: false,
            random_seed: 0,
            agent_silence_timeout: 0.0,
            unproven_silence_timeout: DEFAULT_UNPROVEN_SILENCE_TIMEOUT,
            remove_unreachable_agents: true,
            physics_threads: 1,
            limits: crate::Limits::default(),
            viewer: crate::ViewerGuard::default(),
        }
    }
}

/// Every key this configuration understands, with its default as text.
pub fn all_keys() -> Vec<(String, String)> {
    let mut keys: Vec<(String, String)> = crate::keydoc::SERVER_KEYS
        .iter()
        .map(|d| (d.key.to_string(), d.default.to_string()))
        .collect();
    keys.extend(
        crate::Limits::keys()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v)),
    );
    keys.extend(
        crate::ViewerGuard::default()
            .keys()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v)),
    );
    keys.extend(
        config_keys()
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    keys
}

fn number(key: &str, value: &str) -> Result<f64, ConfigError> {
    value
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .ok_or_else(|| bad(key, format!("expected a finite number, found {value:?}")))
}

fn unit(key: &str, value: &str) -> Result<f64, ConfigError> {
    let v = number(key, value)?;
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(bad(key, format!("must be between 0 and 1, found {v}")))
    }
}

fn non_negative(key: &str, value: &str) -> Result<f64, ConfigError> {
    let v = number(key, value)?;
    if v >= 0.0 {
        Ok(v)
    } else {
        Err(bad(key, format!("must not be negative, found {v}")))
    }
}

fn boolean(key: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => Err(bad(key, format!("expected true or false, found {value:?}"))),
    }
}

fn integer<T: std::str::FromStr>(key: &str, value: &str) -> Result<T, ConfigError> {
    value.trim().parse::<T>().map_err(|_| {
        bad(
            key,
            format!("expected a whole number in range, found {value:?}"),
        )
    })
}

impl ServerConfig {
    /// Sets one key from its text value.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), ConfigError> {
        let k = key.trim().to_ascii_lowercase();
        let w = &mut self.world;
        match k.as_str() {
            "communicationreceiverport" => self.receiver_port = integer(&k, value)?,
            "communicationreceiverip" => {
                self.receiver_ip = value
                    .trim()
                    .parse()
                    .map_err(|_| bad(&k, format!("{value:?} is not an IP address")))?
            }
            "simulationengineip" => {
                self.simulation_engine_ip = value
                    .trim()
                    .parse()
                    .map_err(|_| bad(&k, format!("{value:?} is not an IP address")))?
            }
            "simulationengineport" => self.simulation_engine_port = integer(&k, value)?,
            "maximumdatagramsize" => {
                let n: usize = integer(&k, value)?;
                if !(MIN_DATAGRAM_SIZE..=MAX_DATAGRAM_SIZE).contains(&n) {
                    return Err(bad(
                        &k,
                        format!("must be between {MIN_DATAGRAM_SIZE} and {MAX_DATAGRAM_SIZE} bytes, found {n}"),
                    ));
                }
                self.maximum_datagram_size = n;
            }
            "contactpointsammount" => w.contact_points_amount = integer(&k, value)?,
            "defaultresponserequest" => self.default_response_request = boolean(&k, value)?,
            "defaultstepsize" => {
                let v = number(&k, value)?;
                if !(v > 0.0 && v <= simrob_world::MAX_TIMESTEP) {
                    return Err(bad(
                        &k,
                        format!(
                            "must be in (0, {}] seconds, found {v}",
                            simrob_world::MAX_TIMESTEP
                        ),
                    ));
                }
                w.default_step_size = v;
            }
            "syncwait" => self.sync_wait = non_negative(&k, value)?,
            "defaultphysicsworldbounciness" => w.default_world_bounciness = unit(&k, value)?,
            "defaultphysicsworldhardness" => w.default_world_hardness = unit(&k, value)?,
            "defaulthardnessinteraction" => w.default_interaction.hardness = unit(&k, value)?,
            "defaultbouncinessinteraction" => w.default_interaction.bounciness = unit(&k, value)?,
            "defaultslip1interaction" => w.default_interaction.slip1 = non_negative(&k, value)?,
            "defaultslip2interaction" => w.default_interaction.slip2 = non_negative(&k, value)?,
            "defaultfrictioninteraction" => {
                w.default_interaction.friction = non_negative(&k, value)?
            }
            "defaultgravity" => w.default_gravity = number(&k, value)?,
            "defaultwheeljointhardness" => w.default_wheel_joint_hardness = unit(&k, value)?,
            "defaultwheeljointbounciness" => w.default_wheel_joint_bounciness = unit(&k, value)?,
            "defaultwheeljointmaxtorque" => {
                w.default_wheel_joint_max_torque = non_negative(&k, value)?
            }
            "defaultbodymaterial" => w.default_body_material = integer(&k, value)?,
            "defaultbodymass" => {
                let v = number(&k, value)?;
                if v <= 0.0 {
                    return Err(bad(&k, format!("must be a positive mass in kg, found {v}")));
                }
                w.default_body_mass = v;
            }
            "realtimefactor" => self.real_time_factor = non_negative(&k, value)?,
            "savedirectory" => {
                let v = value.trim();
                if v.is_empty() {
                    return Err(bad(&k, "needs a directory".into()));
                }
                self.save_directory = PathBuf::from(v);
            }
            "allowforeignagentip" => self.allow_foreign_agent_ip = boolean(&k, value)?,
            "randomseed" => self.random_seed = integer(&k, value)?,
            "agentsilencetimeout" | "unprovensilencetimeout" => {
                let v = non_negative(&k, value)?;
                if v > 1e6 {
                    return Err(bad(
                        &k,
                        format!("must be at most 1000000 seconds (0 = never), found {v}"),
                    ));
                }
                if k == "agentsilencetimeout" {
                    self.agent_silence_timeout = v;
                } else {
                    self.unproven_silence_timeout = v;
                }
            }
            "removeunreachableagents" => self.remove_unreachable_agents = boolean(&k, value)?,
            "physicsthreads" => {
                let n: usize = integer(&k, value)?;
                if !(1..=simrob_world::MAX_PHYSICS_THREADS).contains(&n) {
                    return Err(bad(
                        &k,
                        format!(
                            "must be between 1 and {} threads, found {n}",
                            simrob_world::MAX_PHYSICS_THREADS
                        ),
                    ));
                }
                self.physics_threads = n;
            }
            other => {
                if let Some(result) = self.limits.set(other, value) {
                    return result.map_err(|problem| bad(other, problem.to_string()));
                }
                if let Some(result) = self.viewer.set(other, value) {
                    return result.map_err(|problem| bad(other, problem.to_string()));
                }
                if !self.keys.set(other, value.trim()) {
                    return Err(ConfigError::UnknownKey(key.to_string()));
                }
            }
        }
        Ok(())
    }

    /// Whether the values agree with each other: each default within the limit on it, each
    /// minimum at most its maximum (a [`ConfigError::Conflict`] naming both keys if not).
    /// [`ServerConfig::from_text`] checks it once every key is read, so a file may give the
    /// keys in any order.
    pub fn check_together(&self) -> Result<(), ConfigError> {
        let l = &self.limits;
        let w = &self.world;
        let conflict = |keys: &str, problem: String| {
            Err(ConfigError::Conflict {
                keys: keys.to_string(),
                problem,
            })
        };
        if l.min_timestep > l.max_timestep {
            return conflict(
                "mintimestep and maxtimestep",
                format!(
                    "mintimestep {} s is above maxtimestep {} s",
                    Shown::of(&l.min_timestep),
                    Shown::of(&l.max_timestep)
                ),
            );
        }
        if !(l.min_timestep..=l.max_timestep).contains(&w.default_step_size) {
            return conflict(
                "defaultstepsize, mintimestep and maxtimestep",
                format!(
                    "defaultstepsize {} s is outside mintimestep … maxtimestep ({} … {} s)",
                    Shown::of(&w.default_step_size),
                    Shown::of(&l.min_timestep),
                    Shown::of(&l.max_timestep)
                ),
            );
        }
        if w.default_gravity.abs() > l.max_gravity {
            return conflict(
                "defaultgravity and maxgravity",
                format!(
                    "defaultgravity {} m/s² is beyond maxgravity {} (|defaultgravity| ≤ maxgravity)",
                    Shown::of(&w.default_gravity),
                    Shown::of(&l.max_gravity)
                ),
            );
        }
        if self.sync_wait > l.max_sync_wait {
            return conflict(
                "syncwait and maxsyncwait",
                format!(
                    "syncwait {} s is more than maxsyncwait {} s",
                    Shown::of(&self.sync_wait),
                    Shown::of(&l.max_sync_wait)
                ),
            );
        }
        Ok(())
    }

    /// Reads a configuration file: TOML when the name ends in `.toml`, the legacy
    /// `Configuration.data` form otherwise.
    pub fn from_text(name: &str, text: &str) -> Result<ServerConfig, ConfigError> {
        let mut c = ServerConfig::default();
        if name.ends_with(".toml") {
            let table: toml::Table =
                text.parse()
                    .map_err(|e: toml::de::Error| ConfigError::Toml {
                        file: name.to_string(),
                        message: e.to_string(),
                    })?;
            for (key, value) in &table {
                if let Some(wrong) = toml_type_mismatch(key, value) {
                    return Err(ConfigError::In {
                        file: name.to_string(),
                        line: None,
                        source: Box::new(bad(key, wrong)),
                    });
                }
                let text = match value {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Integer(i) => i.to_string(),
                    toml::Value::Float(f) => f.to_string(),
                    toml::Value::Boolean(b) => b.to_string(),
                    other => {
                        return Err(ConfigError::In {
                            file: name.to_string(),
                            line: None,
                            source: Box::new(bad(
                                key,
                                format!(
                                    "expected a string, number or boolean, found a {}",
                                    other.type_str()
                                ),
                            )),
                        })
                    }
                };
                c.set(key, &text).map_err(|e| ConfigError::In {
                    file: name.to_string(),
                    line: None,
                    source: Box::new(e),
                })?;
            }
        } else {
            for (n, line) in text.lines().enumerate() {
                let line = line.split('#').next().unwrap_or("").trim();
                if line.is_empty() {
                    continue;
                }
                let (key, value) = line
                    .split_once(['=', ':'])
                    .or_else(|| line.split_once(char::is_whitespace))
                    .ok_or_else(|| ConfigError::Syntax {
                        file: name.to_string(),
                        line: n + 1,
                        text: line.to_string(),
                    })?;
                c.set(key.trim(), value.trim())
                    .map_err(|e| ConfigError::In {
                        file: name.to_string(),
                        line: Some(n + 1),
                        source: Box::new(e),
                    })?;
            }
        }
        c.keys.validate().map_err(|source| ConfigError::Keys {
            file: name.to_string(),
            source,
        })?;
        c.check_together().map_err(|e| ConfigError::In {
            file: name.to_string(),
            line: None,
            source: Box::new(e),
        })?;
        Ok(c)
    }
}

/// Why a TOML `value` has the wrong type for `key`, if it has: a number key takes a TOML
/// number (`physicsthreads = 2`, not `"2"`), a yes/no key `true` or `false`. Keys of words
/// (addresses, names, the command names) take strings, and numbers where the words are digits.
fn toml_type_mismatch(key: &str, value: &toml::Value) -> Option<String> {
    use crate::keydoc::{Allowed, LIMIT_KEYS, SERVER_KEYS};
    let k = key.trim().to_ascii_lowercase();
    let allowed = match SERVER_KEYS.iter().chain(LIMIT_KEYS).find(|d| d.key == k) {
        Some(doc) => doc.allowed,
        None => crate::viewer::viewer_key(&k)?.allowed(),
    };
    let fits = match allowed {
        Allowed::Number { .. } => value.is_integer() || value.is_float(),
        Allowed::Bool => value.is_bool(),
        Allowed::OneOf(_) | Allowed::Text(_) => !value.is_bool(),
    };
    (!fits).then(|| {
        let wanted = match allowed {
            Allowed::Number { .. } => "a number, without quotes",
            Allowed::Bool => "true or false, without quotes",
            Allowed::OneOf(_) | Allowed::Text(_) => "a string",
        };
        format!(
            "expected {wanted} ({}), found a {}",
            allowed,
            value.type_str()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_and_toml_forms_agree() {
        let legacy = "# SimRob\ncommunicationreceiverport 6000\nmaximumdatagramsize=2048\n\
                      defaultresponserequest: true\ncommandcreateentitykey Make_Thing\n\
                      syncwait 0.5\nrealtimefactor 1\n";
        let toml = "communicationreceiverport = 6000\nmaximumdatagramsize = 2048\n\
                    defaultresponserequest = true\ncommandcreateentitykey = \"Make_Thing\"\n\
                    syncwait = 0.5\nrealtimefactor = 1\n";
        let a = ServerConfig::from_text("Configuration.data", legacy).unwrap();
        let b = ServerConfig::from_text("simrob.toml", toml).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.receiver_port, 6000);
        assert_eq!(a.maximum_datagram_size, 2048);
        assert!(a.default_response_request);
        assert_eq!(
            &a.keys[simrob_protocol::Command::CreateEntity],
            "Make_Thing"
        );
        assert_eq!(a.sync_wait, 0.5);
    }

    /// In a TOML file a value of the wrong TOML type is refused naming the key, though its
    /// text would parse (`physicsthreads = "2"` and `maxentities = "1"` were taken as
    /// numbers); words keys take strings as before.
    #[test]
    fn toml_values_of_the_wrong_type_are_refused() {
        for (text, key) in [
            ("physicsthreads = \"2\"\n", "physicsthreads"),
            ("maxentities = \"1\"\n", "maxentities"),
            (
                "defaultresponserequest = \"true\"\n",
                "defaultresponserequest",
            ),
            ("defaultresponserequest = 1\n", "defaultresponserequest"),
            (
                "communicationreceiverip = true\n",
                "communicationreceiverip",
            ),
        ] {
            let e = ServerConfig::from_text("simrob.toml", text)
                .expect_err(text)
                .to_string();
            assert!(e.contains(key) && e.contains("expected"), "{text}: {e}");
        }
        let c = ServerConfig::from_text(
            "simrob.toml",
            "physicsthreads = 1\ncommunicationreceiverip = \"127.0.0.1\"\n",
        )
        .expect("the right types");
        assert_eq!(c.physics_threads, 1);
    }

    #[test]
    fn every_documented_key_is_accepted_with_its_default() {
        let mut c = ServerConfig::default();
        for (k, v) in all_keys() {
            c.set(&k, &v).unwrap_or_else(|e| panic!("{k}: {e}"));
        }
        assert_eq!(c, ServerConfig::default());
    }

    #[test]
    fn the_shipped_example_files_are_the_defaults() {
        for (name, text) in [
            (
                "Configuration.data",
                include_str!("../../../config/Configuration.data"),
            ),
            ("simrob.toml", include_str!("../../../config/simrob.toml")),
        ] {
            let c = ServerConfig::from_text(name, text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(c, ServerConfig::default(), "{name}");
            // Every key is in the file.
            for (key, _) in all_keys() {
                assert!(text.contains(&key), "{name} lacks {key}");
            }
        }
    }

    #[test]
    fn bad_values_name_the_line() {
        for (text, word) in [
            ("nosuchkey 1", "unknown configuration key"),
            ("syncwait -1", "syncwait"),
            ("maximumdatagramsize 10", "maximumdatagramsize"),
            ("defaultgravity NaN", "defaultgravity"),
            ("communicationreceiverip banana", "IP address"),
            ("justakey", "expected `key value`"),
        ] {
            let e = ServerConfig::from_text("c.data", text)
                .unwrap_err()
                .to_string();
            assert!(e.contains(word) && e.contains("c.data:1"), "{e}");
        }
        let e = ServerConfig::from_text("c.data", "commandcreateentitykey Make_Step\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("command keys"), "{e}");
    }
}
