//! Where ROS 2 says a node's DDS participant lives: the domain (`ROS_DOMAIN_ID`) and how far
//! discovery reaches (`ROS_AUTOMATIC_DISCOVERY_RANGE`, or the older `ROS_LOCALHOST_ONLY`).

/// The highest domain id whose ports fit (ROS 2 documents 0–101 as safe, and up to 232 on
/// Linux).
pub const MAX_DOMAIN_ID: u16 = 232;

/// How far discovery reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Range {
    /// This machine only: unicast on the loopback interface, no multicast anywhere else.
    Localhost,
    /// The local network (multicast on every interface), ROS 2's default.
    Subnet,
}

/// The participant's place: domain and discovery range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Discovery {
    /// The DDS domain, `ROS_DOMAIN_ID` (default 0).
    pub domain_id: u16,
    /// The discovery range.
    pub range: Range,
    /// Most other participants the node tracks before it stops (`--ros2-max-participants`,
    /// default [`DEFAULT_MAX_PARTICIPANTS`]).
    pub max_participants: usize,
    /// The largest sample, in bytes, that a peer may send in fragments (`--ros2-max-sample`,
    /// default [`DEFAULT_MAX_SAMPLE`]): on Linux, a datagram announcing a larger one is
    /// dropped before the DDS library sets memory aside for it.
    pub max_sample: u32,
}

/// The largest fragmented sample taken by default: 64 KiB, some thousand times the inputs
/// simrob reads (a `Twist` is 52 bytes), and a reassembly of at most 8 MiB per peer writer
/// (the DDS library keeps up to 128 incomplete samples per writer).
pub const DEFAULT_MAX_SAMPLE: u32 = 64 * 1024;

/// How many other DDS participants on the domain a node tracks, by default, before it stops:
/// a ROS 2 process is one participant, so a thousand is a large laboratory's worth, and
/// bounds what forged announcements cost (some 3 KB of memory each, and the work and traffic
/// RustDDS spends on each until its announced lease ends).
pub const DEFAULT_MAX_PARTICIPANTS: usize = 1000;

/// A ROS environment variable with a value ROS 2 would refuse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvError {
    /// `ROS_DOMAIN_ID` is not a number from 0 to [`MAX_DOMAIN_ID`].
    #[error("ROS_DOMAIN_ID={0:?}: expected a number from 0 to 232")]
    DomainId(String),
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE` names no range simrob knows.
    #[error(
        "ROS_AUTOMATIC_DISCOVERY_RANGE={0:?}: expected LOCALHOST, SUBNET or SYSTEM_DEFAULT (OFF is not supported: simrob's participant is there to be found)"
    )]
    Range(String),
}

impl Discovery {
    /// From the process's environment.
    pub fn from_env() -> Result<Discovery, EnvError> {
        Discovery::from_vars(|k| std::env::var(k).ok())
    }

    /// From the variables `get` returns (ROS 2's rules: an empty variable is unset;
    /// `ROS_AUTOMATIC_DISCOVERY_RANGE` wins over `ROS_LOCALHOST_ONLY`).
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Discovery, EnvError> {
        let get = |k: &str| {
            get(k)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        let domain_id = match get("ROS_DOMAIN_ID") {
            None => 0,
            Some(v) => v
                .parse::<u16>()
                .ok()
                .filter(|d| *d <= MAX_DOMAIN_ID)
                .ok_or(EnvError::DomainId(v))?,
        };
        let range = match get("ROS_AUTOMATIC_DISCOVERY_RANGE").as_deref() {
            Some("LOCALHOST") => Range::Localhost,
            Some("SUBNET") => Range::Subnet,
            Some("SYSTEM_DEFAULT") | None => {
                if get("ROS_LOCALHOST_ONLY").as_deref() == Some("1") {
                    Range::Localhost
                } else {
                    Range::Subnet
                }
            }
            Some(other) => return Err(EnvError::Range(other.to_owned())),
        };
        Ok(Discovery {
            domain_id,
            range,
            max_participants: DEFAULT_MAX_PARTICIPANTS,
            max_sample: DEFAULT_MAX_SAMPLE,
        })
    }
}
