//! Every configuration key described by the code itself: its default, the values it accepts
//! and what it means. The reference page `docs/reference/config.md` is generated from these
//! tables, and tests check them against the parser (the default is what [`ServerConfig`]
//! starts with; a value at each bound is accepted and one past it refused), so the page
//! cannot drift from what the server does.
//!
//! [`ServerConfig`]: crate::ServerConfig

use std::fmt;

/// One end of a number range.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// No bound on this side (any finite number).
    Open,
    /// The value itself is allowed.
    Incl(f64),
    /// Values strictly beyond it are allowed, not the value itself.
    Excl(f64),
}

/// The values a key accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Allowed {
    /// A finite number between two bounds; `whole` for integers.
    Number {
        /// The lower bound.
        min: Bound,
        /// The upper bound.
        max: Bound,
        /// Only whole numbers.
        whole: bool,
    },
    /// `true` or `false` (also `1`/`0`, `yes`/`no`, `on`/`off`).
    Bool,
    /// One of these words.
    OneOf(&'static [&'static str]),
    /// Anything else, in words.
    Text(&'static str),
}

impl Allowed {
    /// A whole number from `min` to `max`, both included.
    pub const fn whole(min: f64, max: f64) -> Allowed {
        Allowed::Number {
            min: Bound::Incl(min),
            max: Bound::Incl(max),
            whole: true,
        }
    }
    /// A whole number of at least `min`.
    pub const fn whole_from(min: f64) -> Allowed {
        Allowed::Number {
            min: Bound::Incl(min),
            max: Bound::Open,
            whole: true,
        }
    }
    /// A number from `min` to `max`, both included.
    pub const fn range(min: f64, max: f64) -> Allowed {
        Allowed::Number {
            min: Bound::Incl(min),
            max: Bound::Incl(max),
            whole: false,
        }
    }
    /// A number of at least `min`.
    pub const fn from(min: f64) -> Allowed {
        Allowed::Number {
            min: Bound::Incl(min),
            max: Bound::Open,
            whole: false,
        }
    }
    /// A number above zero.
    pub const POSITIVE: Allowed = Allowed::Number {
        min: Bound::Excl(0.0),
        max: Bound::Open,
        whole: false,
    };
    /// Any finite number.
    pub const ANY_NUMBER: Allowed = Allowed::Number {
        min: Bound::Open,
        max: Bound::Open,
        whole: false,
    };
}

impl fmt::Display for Allowed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Allowed::Number { min, max, whole } => {
                let kind = if *whole { "whole number" } else { "number" };
                match (min, max) {
                    (Bound::Open, Bound::Open) => write!(f, "any finite {kind}"),
                    (Bound::Incl(a), Bound::Open) => write!(f, "{kind} ≥ {a}"),
                    (Bound::Excl(a), Bound::Open) => write!(f, "{kind} > {a}"),
                    (Bound::Open, Bound::Incl(b)) => write!(f, "{kind} ≤ {b}"),
                    (Bound::Open, Bound::Excl(b)) => write!(f, "{kind} < {b}"),
                    (lo, hi) => {
                        let l = match lo {
                            Bound::Incl(a) => format!("[{a}"),
                            Bound::Excl(a) => format!("({a}"),
                            Bound::Open => "(−∞".into(),
                        };
                        let h = match hi {
                            Bound::Incl(b) => format!("{b}]"),
                            Bound::Excl(b) => format!("{b})"),
                            Bound::Open => "∞)".into(),
                        };
                        write!(f, "{kind} in {l}, {h}")
                    }
                }
            }
            Allowed::Bool => f.write_str("true or false"),
            Allowed::OneOf(words) => {
                let quoted: Vec<String> = words.iter().map(|w| format!("`{w}`")).collect();
                f.write_str(&quoted.join(", "))
            }
            Allowed::Text(words) => f.write_str(words),
        }
    }
}

/// One configuration key as the reference documents it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeyDoc {
    /// The key, lower case.
    pub key: &'static str,
    /// Its default, as text (empty: none).
    pub default: &'static str,
    /// The values it accepts.
    pub allowed: Allowed,
    /// What it means, in a sentence.
    pub meaning: &'static str,
}

const fn key(
    key: &'static str,
    default: &'static str,
    allowed: Allowed,
    meaning: &'static str,
) -> KeyDoc {
    KeyDoc {
        key,
        default,
        allowed,
        meaning,
    }
}

/// The server's own keys (the SimRob manual §6 and simrob's), in the order of the shipped
/// example files. The limits are in [`LIMIT_KEYS`], the command names in
/// [`simrob_protocol::config_keys`].
pub const SERVER_KEYS: &[KeyDoc] = &[
    key(
        "communicationreceiverport",
        "5005",
        Allowed::whole(0.0, 65535.0),
        "UDP port the server listens on (0 = any free port)",
    ),
    key(
        "communicationreceiverip",
        "127.0.0.1",
        Allowed::Text("an IP address"),
        "address the server listens on (loopback by default; 0.0.0.0 for every interface)",
    ),
    key(
        "simulationengineip",
        "127.0.0.1",
        Allowed::Text("an IP address"),
        "accepted, unused (SimRob's internal module link)",
    ),
    key(
        "simulationengineport",
        "5006",
        Allowed::whole(0.0, 65535.0),
        "accepted, unused",
    ),
    key(
        "maximumdatagramsize",
        "65000",
        Allowed::whole(
            crate::MIN_DATAGRAM_SIZE as f64,
            crate::MAX_DATAGRAM_SIZE as f64,
        ),
        "largest datagram sent or accepted, bytes; larger broadcasts are split",
    ),
    key(
        "contactpointsammount",
        "4",
        Allowed::whole(0.0, u32::MAX as f64),
        "accepted; the physics engine keeps at most 4 points per contact manifold",
    ),
    key(
        "defaultresponserequest",
        "false",
        Allowed::Bool,
        "confirm every command unless the request says `<Response>`",
    ),
    key(
        "defaultstepsize",
        "0.01",
        Allowed::Number {
            min: Bound::Excl(0.0),
            max: Bound::Incl(simrob_world::MAX_TIMESTEP),
            whole: false,
        },
        "timestep, s; from `mintimestep` to `maxtimestep`",
    ),
    key(
        "syncwait",
        "0.1",
        Allowed::from(0.0),
        "longest wait for synchronous agents, s; at most `maxsyncwait`",
    ),
    key(
        "defaultphysicsworldbounciness",
        "0.2",
        Allowed::range(0.0, 1.0),
        "global ERP (error reduction)",
    ),
    key(
        "defaultphysicsworldhardness",
        "0.00001",
        Allowed::range(0.0, 1.0),
        "global CFM (constraint force mixing)",
    ),
    key(
        "defaulthardnessinteraction",
        "0.15",
        Allowed::range(0.0, 1.0),
        "contact Hardness of material pairs nobody registered",
    ),
    key(
        "defaultbouncinessinteraction",
        "0.6",
        Allowed::range(0.0, 1.0),
        "contact Bounciness of unregistered pairs",
    ),
    key(
        "defaultslip1interaction",
        "0.1",
        Allowed::from(0.0),
        "Slip1 of unregistered pairs",
    ),
    key(
        "defaultslip2interaction",
        "0.1",
        Allowed::from(0.0),
        "Slip2 of unregistered pairs",
    ),
    key(
        "defaultfrictioninteraction",
        "1",
        Allowed::from(0.0),
        "friction of unregistered pairs",
    ),
    key(
        "defaultgravity",
        "-9.8",
        Allowed::ANY_NUMBER,
        "gravity along Z, m/s²; |defaultgravity| at most `maxgravity` (which also bounds what agents may set)",
    ),
    key(
        "defaultwheeljointhardness",
        "0.001",
        Allowed::range(0.0, 1.0),
        "WheelJoint Hardness when a joint gives none",
    ),
    key(
        "defaultwheeljointbounciness",
        "0.9",
        Allowed::range(0.0, 1.0),
        "WheelJoint Bounciness when a joint gives none",
    ),
    key(
        "defaultwheeljointmaxtorque",
        "10",
        Allowed::from(0.0),
        "WheelJoint Maximum_Torque when a joint gives none, N·m",
    ),
    key(
        "defaultbodymaterial",
        "0",
        Allowed::whole(0.0, u32::MAX as f64),
        "material of a body that names none",
    ),
    key(
        "defaultbodymass",
        "1",
        Allowed::POSITIVE,
        "mass of a body that gives none, kg",
    ),
    key(
        "realtimefactor",
        "0",
        Allowed::from(0.0),
        "simulated seconds per wall second in asynchronous mode; 0 = as fast as the machine can",
    ),
    key(
        "savedirectory",
        ".",
        Allowed::Text("a directory"),
        "Save and Load files live here; paths that leave it are refused",
    ),
    key(
        "allowforeignagentip",
        "false",
        Allowed::Bool,
        "let an agent register an IP other than the one it sends from",
    ),
    key(
        "randomseed",
        "0",
        Allowed::whole_from(0.0),
        "seeds every per-agent random draw (agent filters): same seed, same run",
    ),
    key(
        "agentsilencetimeout",
        "0",
        Allowed::range(0.0, 1e6),
        "remove an agent nothing was heard from for this many seconds (agents behind a firewall, whose closed port answers nothing); 0 = never. Agents that only listen must then send something more often",
    ),
    key(
        "unprovensilencetimeout",
        "60",
        Allowed::range(0.0, 1e6),
        "remove an agent at an unproven address (not loopback with `trustloopback`, not in `trustedagentips`) nothing was heard from for this many seconds; 0 = never. The server sends such an address at most `amplificationfactor` times what came from it, so once that is spent it is sent nothing, and no ICMP would tell that it left",
    ),
    key(
        "physicsthreads",
        "1",
        Allowed::whole(1.0, simrob_world::MAX_PHYSICS_THREADS as f64),
        "threads each physics step runs on; the run is the same at any number. Above 1 needs a simrob built with parallel physics (`cargo build --release -p simrob --features parallel`); another build refuses to start",
    ),
    key(
        "removeunreachableagents",
        "true",
        Allowed::Bool,
        "remove an agent as soon as a datagram sent to it is answered with ICMP port unreachable (its program has stopped)",
    ),
];

/// The limits' keys (see [`crate::Limits`]).
pub const LIMIT_KEYS: &[KeyDoc] = &[
    key("worldaccess", "local-or-agents", Allowed::OneOf(&["everyone", "agents", "local-or-agents", "secret"]), "who may change the world (create, move, step, save, load…): `everyone`; `agents` (registered agents, from the address they registered from); `local-or-agents` (those, and any sender on this machine's loopback); `secret` (agents whose key starts with `worldsecret` then `:`)"),
    key("worldsecret", "", Allowed::Text("text without `:`"), "the shared secret of `worldaccess = secret`"),
    key("maxrequestsperdatagram", "64", Allowed::whole_from(1.0), "requests one datagram may carry; with more, none of them runs"),
    key("maxfilerequestsperdatagram", "1", Allowed::whole_from(1.0), "Save and Load requests one datagram may carry"),
    key("maxconfirmationfanout", "64", Allowed::whole_from(0.0), "a confirmation goes to every agent while there are at most this many; beyond, to its sender only"),
    key("maxagents", "4096", Allowed::whole_from(1.0), "most agents registered at once: a Register_Agent under a new key beyond is refused (a key registered again, from a new port, is not new)"),
    key("maxstepsperiteration", "1000", Allowed::whole(1.0, simrob_world::MAX_STEPS_PER_ITERATION as f64), "largest `Set_Steps_Per_Iteration`"),
    key("stepsperslice", "10", Allowed::whole_from(1.0), "physics steps run at a time: a longer iteration runs in slices, the server answering agents between them"),
    key("maxqueuedrequests", "4096", Allowed::whole_from(1.0), "requests waiting for an iteration under way or a file operation; a datagram that would queue more is refused whole"),
    key("maxentities", "250", Allowed::whole_from(1.0), "most entities in the world (Create_Entity and Load)"),
    key("maxbodies", "1000", Allowed::whole_from(1.0), "most rigid bodies in the world (Create_Entity and Load)"),
    key("maxbodysize", "100", Allowed::POSITIVE, "largest extent of a body (Create_Entity and Load), m: a sphere's diameter, a box's longest side, the larger of a cylinder's diameter and length (a ball of radius 10¹⁵ m once made every iteration diverge)"),
    key("maxbodymass", "100000", Allowed::POSITIVE, "largest mass of a body (Create_Entity and Load), kg; −1 (a static body) is always allowed"),
    key("maxmaterials", "1000", Allowed::whole_from(1.0), "most registered materials (Register_Materials_Interactions and Load): registering more is refused whole"),
    key("maxinteractions", "10000", Allowed::whole_from(1.0), "most material-pair interactions (Register_Materials_Interactions and Load), and most material pairs with a rolling resistance (Set_Rolling_Resistance): past it the request is refused whole"),
    key("maxposition", "10000", Allowed::POSITIVE, "largest |coordinate| of a position, m"),
    key("maxvelocity", "10000", Allowed::POSITIVE, "largest |component| of a velocity or motor target"),
    key("maxgravity", "1000", Allowed::POSITIVE, "largest |gravity|, m/s²"),
    key("mintimestep", "0.00001", Allowed::POSITIVE, "shortest timestep an agent may set, s; at most `maxtimestep`"),
    key("maxtimestep", "1", Allowed::Number { min: Bound::Excl(0.0), max: Bound::Incl(simrob_world::MAX_TIMESTEP), whole: false }, "longest timestep an agent may set, s (the SimRob manual's example sets 0.3; 10 once sent a robot 40 km underground)"),
    key("maxsyncwait", "10", Allowed::POSITIVE, "longest wait for synchronous agents an agent may set (`Set_Sync_Wait`), a loaded file may carry, or `syncwait` may give, s: one synchronous agent that never synchronizes holds every iteration this long"),
    key("amplificationfactor", "3", Allowed::POSITIVE, "bytes sent to an unproven address, per byte received from it"),
    key("trustloopback", "true", Allowed::Bool, "addresses on the loopback interface count as proven"),
    key("trustedagentips", "", Allowed::Text("IP addresses, comma-separated, or `all`"), "addresses on these IPs count as proven (remote agents that receive broadcasts belong here)"),
    key("receivebuffer", "8388608", Allowed::whole_from(1.0), "socket receive buffer asked of the OS, bytes"),
    key("savedirectorybytes", "268435456", Allowed::whole_from(1.0), "most bytes of save files in the save directory"),
    key("savedirectoryfiles", "1000", Allowed::whole_from(1.0), "most save files in the save directory"),
    key("savekey", "", Allowed::Text("text (none: a random key per run)"), "secret that seals the engine state in save files: files sealed with it resume exactly in any run that has it; any other file is rebuilt from its readable part"),
    key("maxxmldepth", "128", Allowed::whole(1.0, simrob_protocol::tree::MAX_DEPTH_LIMIT as f64), "deepest element nesting a datagram may have; deeper is not well-formed and runs nothing (SimRob messages nest far less)"),
    key("amplificationledger", "65536", Allowed::whole_from(1.0), "unproven addresses whose bytes the anti-amplification rule remembers; past it the oldest is forgotten (it then has less credit, never more)"),
    key("maxsavefilebytes", "67108864", Allowed::whole_from(1.0), "largest save file a `Save` writes or a `Load` reads, bytes (a Save that would write more is refused and leaves the file as it was)"),
    key("maxscenariobytes", "67108864", Allowed::whole_from(1.0), "largest scenario file (SimRob XML messages) `simrob serve --scenario`, `simrob run` and `simrob send` read, bytes; a larger one is refused before anything starts (the flag `--max-scenario-bytes` sets it for one run)"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ServerConfig;

    fn accepts(key: &str, value: &str) -> bool {
        ServerConfig::default().set(key, value).is_ok()
    }

    fn text(v: f64, whole: bool) -> String {
        if whole {
            format!("{v:.0}")
        } else {
            format!("{v}")
        }
    }

    /// A value at each bound is accepted and one past it refused: the documented limits are
    /// the parser's.
    #[test]
    fn every_documented_limit_is_the_parsers() {
        for doc in SERVER_KEYS.iter().chain(LIMIT_KEYS) {
            let k = doc.key;
            match doc.allowed {
                Allowed::Number { min, max, whole } => {
                    // A tiny step past a bound, or 1 for whole numbers.
                    let past = |b: f64| {
                        if whole {
                            1.0
                        } else {
                            (b.abs() * 1e-6).max(1e-9)
                        }
                    };
                    // Beyond u64 the text form of a whole bound is not exact; skip those.
                    let exact = |b: f64| b.abs() < 9.0e15;
                    match min {
                        Bound::Incl(a) if exact(a) => {
                            assert!(accepts(k, &text(a, whole)), "{k} refuses its minimum {a}");
                            assert!(
                                !accepts(k, &text(a - past(a), whole)),
                                "{k} accepts below {a}"
                            );
                        }
                        Bound::Excl(a) => {
                            assert!(
                                !accepts(k, &text(a, whole)),
                                "{k} accepts its exclusive minimum {a}"
                            );
                            assert!(
                                accepts(k, &text(a + past(a), whole)),
                                "{k} refuses just above {a}"
                            );
                        }
                        _ => assert!(
                            accepts(k, "-1e12") || whole,
                            "{k} refuses a large negative number"
                        ),
                    }
                    match max {
                        Bound::Incl(b) if exact(b) => {
                            assert!(accepts(k, &text(b, whole)), "{k} refuses its maximum {b}");
                            assert!(
                                !accepts(k, &text(b + past(b), whole)),
                                "{k} accepts above {b}"
                            );
                        }
                        Bound::Excl(b) => {
                            assert!(
                                !accepts(k, &text(b, whole)),
                                "{k} accepts its exclusive maximum {b}"
                            );
                        }
                        _ => {}
                    }
                    if whole {
                        assert!(!accepts(k, "1.5"), "{k} accepts a fraction");
                    }
                    assert!(
                        !accepts(k, "NaN") && !accepts(k, "banana"),
                        "{k} accepts text"
                    );
                }
                Allowed::Bool => {
                    assert!(accepts(k, "true") && accepts(k, "false"), "{k}");
                    assert!(!accepts(k, "maybe"), "{k} accepts maybe");
                }
                Allowed::OneOf(words) => {
                    for w in words {
                        assert!(accepts(k, w), "{k} refuses {w}");
                    }
                    assert!(!accepts(k, "banana"), "{k} accepts banana");
                }
                Allowed::Text(_) => {}
            }
        }
    }

    /// The documented defaults are what the server starts with, and every key it understands
    /// (but the command names) is documented.
    #[test]
    fn the_documented_defaults_are_the_defaults() {
        let mut c = ServerConfig::default();
        for doc in SERVER_KEYS.iter().chain(LIMIT_KEYS) {
            c.set(doc.key, doc.default)
                .unwrap_or_else(|e| panic!("{}: {e}", doc.key));
        }
        assert_eq!(c, ServerConfig::default());
        let documented: Vec<&str> = SERVER_KEYS
            .iter()
            .chain(LIMIT_KEYS)
            .map(|d| d.key)
            .collect();
        let commands: Vec<&str> = simrob_protocol::config_keys()
            .iter()
            .map(|(k, _)| *k)
            .collect();
        let viewer: Vec<&str> = crate::VIEWER_KEYS.iter().map(|k| k.key).collect();
        for (k, _) in crate::all_keys() {
            assert!(
                documented.contains(&k.as_str())
                    || commands.contains(&k.as_str())
                    || viewer.contains(&k.as_str()),
                "{k} is not documented"
            );
        }
        for (k, v) in crate::Limits::keys() {
            let doc = LIMIT_KEYS.iter().find(|d| d.key == k).expect("documented");
            let parsed = |t: &str| t.parse::<f64>().ok();
            assert!(
                doc.default == v
                    || (parsed(doc.default).is_some() && parsed(doc.default) == parsed(&v)),
                "{k}: documented default {} but the limit starts at {v}",
                doc.default
            );
        }
    }
}
