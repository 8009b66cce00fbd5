//! The Mobile Robot Simulator's sans-IO core: one robot per client on a shared
//! [`simrob_flat::FlatWorld`], request lines in, reply lines out. Files (maps, snapshots) go
//! through a [`MapFiles`] the shell provides.

use std::collections::BTreeMap;
use std::path::PathBuf;

use simrob_flat::{
    FlatPose, FlatWorld, Map, MapError, PlaceError, Rect, RobotId, RobotModel, Vec2, Velocity,
};

use crate::protocol::{
    bumper_rel_reply, bumpers_reply, error_reply, parse_request, pos_reply, sonar_reply,
    sonars_reply, step_reply, strip_line, ProtocolError, Request, HELP,
};
use crate::render;

/// A connection's id, handed out by the shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClientId(pub u64);

/// The widest and highest map the Mobile Robot Simulator takes, in inches: the largest
/// position `P` can report (5 digits in tenths of an inch). The 2D worlds of other commands
/// take larger maps ([`simrob_flat::MAX_MAP_SIDE`]).
pub const MAX_MAP_SIDE: f64 = 9999.9;

/// Refuses a map larger than `P` can report ([`MAX_MAP_SIDE`]).
pub fn check_map_size(map: &Map) -> Result<(), CoreError> {
    let (width, height) = (map.width(), map.height());
    if width > MAX_MAP_SIDE || height > MAX_MAP_SIDE {
        return Err(CoreError::MapTooLarge { width, height });
    }
    Ok(())
}

/// Refuses a picture file name (`#SNAPSHOT`, `--snapshot`) that does not end in `.png` (in
/// any case): the picture is a PNG whatever the name.
pub fn check_png_name(name: &str) -> Result<(), FileError> {
    let png = name.len() > 4
        && name
            .get(name.len() - 4..)
            .is_some_and(|end| end.eq_ignore_ascii_case(".png"));
    if png {
        Ok(())
    } else {
        Err(FileError::NotPng(name.to_string()))
    }
}

/// Largest map file read by `#LOAD` / `#MERGE` (bytes) by default
/// ([`DirMapFiles::with_max_map_bytes`](crate::DirMapFiles::with_max_map_bytes) sets another).
pub const MAX_MAP_FILE: u64 = 256 * 1024 * 1024;

/// Why a map or snapshot file could not be named, read or written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// A file was to be read but the server has no map directory (holds the name).
    #[error("cannot read {0:?}: this server has no map directory")]
    NoDirectoryToRead(String),
    /// A file was to be written but the server has no map directory (holds the name).
    #[error("cannot write {0:?}: this server has no map directory")]
    NoDirectoryToWrite(String),
    /// The file name is empty.
    #[error("a file name is needed")]
    EmptyName,
    /// The file name is longer than allowed.
    #[error("file name too long ({len} bytes, at most {max})")]
    NameTooLong {
        /// The name's length, in bytes.
        len: usize,
        /// The longest name allowed, in bytes.
        max: usize,
    },
    /// The file name contains control characters.
    #[error("a file name may not contain control characters")]
    ControlCharacters,
    /// The name has a `/` or `\\`, or starts with `.` (holds the name).
    #[error("{0:?} is not a plain file name in the map directory (no '/', no leading '.')")]
    NotPlain(String),
    /// The name resolves, through a link, to a file outside the map directory.
    #[error("{0:?} leads out of the map directory")]
    LeavesDirectory(String),
    /// A picture's name that does not end in `.png` (holds the name).
    #[error("{0:?}: pictures are written as PNG, so the file name must end in .png")]
    NotPng(String),
    /// Reading the file failed.
    #[error("cannot read {name}: {source}")]
    Read {
        /// The file's name.
        name: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The name is not a regular file, or one larger than [`MAX_MAP_FILE`].
    #[error("cannot read {0}: not a file of at most {MAX_MAP_FILE} bytes")]
    NotAMapFile(String),
    /// The map file is larger than the server's limit
    /// ([`DirMapFiles::with_max_map_bytes`](crate::DirMapFiles::with_max_map_bytes)).
    #[error("{}", simrob_files::over_limit(&format!("map {name}"), Some(*len), *max, raise_with))]
    MapTooLarge {
        /// The file's name.
        name: String,
        /// Its size, or the bytes read when it grew past the limit.
        len: u64,
        /// The limit, in bytes.
        max: u64,
        /// How to raise it (`--max-map-bytes BYTES`).
        raise_with: &'static str,
    },
    /// Writing the file failed (holds the name).
    #[error("cannot write {0}")]
    Write(String),
    /// The files this server wrote would be more, or larger, than it may write.
    #[error("cannot write {name}: {problem}")]
    Quota {
        /// The file's name.
        name: String,
        /// Which limit, and its flag.
        problem: String,
    },
    /// Writing through a temporary file failed (the file is unchanged).
    #[error("cannot write {}: {source}", path.display())]
    WriteAtomically {
        /// The file being written.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The map directory is not an existing directory (holds its path).
    #[error("the map directory {} does not exist or is not a directory (it is not created: make it first)", .0.display())]
    NotADirectory(PathBuf),
    /// The map directory could not be opened (resolved to its real path).
    #[error("cannot open the map directory {}: {source}", path.display())]
    OpenDirectory {
        /// The map directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// Why a request or an operator's operation was refused; the world is unchanged. Its text
/// is the reply's error line.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The server already has its most robots (`--max-clients`, held here).
    #[error("the server is full ({n} {robots}, the most it takes: --max-clients {n})", n = .0, robots = if *.0 == 1 { "robot" } else { "robots" })]
    Full(usize),
    /// No spot near the start pose is free for a new robot.
    #[error(
        "no free place for a robot within {PLACE_SEARCH} in of ({}, {})",
        simrob_math::Shown::of(.x),
        simrob_math::Shown::of(.y)
    )]
    NoFreePlace {
        /// The start's x, in inches.
        x: f64,
        /// The start's y, in inches.
        y: f64,
    },
    /// A request from a connection that has no robot.
    #[error("this connection has no robot")]
    NoRobot,
    /// The connection's robot is no longer in the world.
    #[error("this connection's robot is gone")]
    RobotGone,
    /// An operator's operation on a client that has no robot.
    #[error("no robot for this client")]
    NoRobotForClient,
    /// A sonar number the robot does not have.
    #[error("no such sonar")]
    NoSuchSonar,
    /// The robot's sonars could not be read.
    #[error("no sonars")]
    NoSonars,
    /// `#STEP` on a server that runs in real time.
    #[error(
        "#STEP only works on a stepped server (simrob mrs --stepped); this one runs in real time"
    )]
    NotStepped,
    /// A `#RECT` that does not lie inside the map.
    #[error(
        "#RECT {} {} {} {} is not inside the {} × {} in map",
        simrob_math::Shown(rect[0]),
        simrob_math::Shown(rect[1]),
        simrob_math::Shown(rect[2]),
        simrob_math::Shown(rect[3]),
        simrob_math::Shown::of(.w),
        simrob_math::Shown::of(.h)
    )]
    RectOutside {
        /// The rectangle's four numbers as given, in inches.
        rect: [f64; 4],
        /// The map's width, in inches.
        w: f64,
        /// The map's height, in inches.
        h: f64,
    },
    /// A map change (`#LOAD`, `#MERGE`, `#RECT`, the live view's) that would put a connected
    /// robot inside an obstacle or outside the map.
    #[error(
        "{change} would put robot {robot} at ({}, {}) inside an obstacle or outside the map; move it first (#PLACE)",
        simrob_math::Shown::of(.x),
        simrob_math::Shown::of(.y)
    )]
    BuriesRobot {
        /// What was refused (`#LOAD file`, …).
        change: String,
        /// The robot's id.
        robot: u32,
        /// Its x, in inches.
        x: f64,
        /// Its y, in inches.
        y: f64,
    },
    /// A map wider or higher than `P` can report ([`MAX_MAP_SIDE`]).
    #[error(
        "a {} × {} in map is too large: `P` reports positions in 5 digits of tenths of an inch, so each side may be at most {MAX_MAP_SIDE} in",
        simrob_math::Shown::of(.width),
        simrob_math::Shown::of(.height)
    )]
    MapTooLarge {
        /// The map's width, in inches.
        width: f64,
        /// The map's height, in inches.
        height: f64,
    },
    /// A map change that would leave more rectangles than [`MrsConfig::max_rects`].
    #[error("{change}: the map would hold {count} rectangles, more than --max-rects {max}")]
    TooManyRects {
        /// The change refused.
        change: String,
        /// The rectangles it would leave.
        count: usize,
        /// The most allowed.
        max: usize,
    },
    /// `#STEP n` with n over [`MrsConfig::max_step`].
    #[error("#STEP {n}: at most {max} steps at a time (--max-step {max}); send several")]
    TooManySteps {
        /// The steps asked for.
        n: u32,
        /// The most allowed.
        max: u32,
    },
    /// The `#SNAPSHOT` picture could not be encoded as PNG.
    #[error("cannot encode the picture: {0}")]
    Picture(#[source] image::ImageError),
    /// The request line does not parse.
    #[error(transparent)]
    Request(#[from] ProtocolError),
    /// The robot cannot be placed there.
    #[error(transparent)]
    Place(#[from] PlaceError),
    /// A map operation was refused.
    #[error(transparent)]
    Map(#[from] MapError),
    /// A map file that does not read as a map.
    #[error("{name}: {source}")]
    MapFile {
        /// The file's name.
        name: String,
        /// Why it is not a map.
        source: MapError,
    },
    /// A map or snapshot file could not be named, read or written.
    #[error(transparent)]
    File(#[from] FileError),
}

/// Where `#LOAD`, `#MERGE` and `#SNAPSHOT` files live.
pub trait MapFiles {
    /// The bytes of the file `name`.
    fn read(&mut self, name: &str) -> Result<Vec<u8>, FileError>;
    /// Writes `bytes` to `name` atomically; returns where it went.
    fn write(&mut self, name: &str, bytes: &[u8]) -> Result<PathBuf, FileError>;
}

/// A [`MapFiles`] that refuses every file (for servers without a map directory).
#[derive(Debug, Default)]
pub struct NoFiles;

impl MapFiles for NoFiles {
    fn read(&mut self, name: &str) -> Result<Vec<u8>, FileError> {
        Err(FileError::NoDirectoryToRead(name.to_string()))
    }
    fn write(&mut self, name: &str, _: &[u8]) -> Result<PathBuf, FileError> {
        Err(FileError::NoDirectoryToWrite(name.to_string()))
    }
}

/// How the core runs.
#[derive(Clone, Debug)]
pub struct MrsConfig {
    /// Where new robots go (the nearest free spot to it); default: the map's centre,
    /// heading 0.
    pub start: Option<FlatPose>,
    /// Time advances only with `#STEP n`.
    pub stepped: bool,
    /// The fixed step in seconds.
    pub timestep: f64,
    /// Pixels per inch of `#SNAPSHOT` pictures.
    pub snapshot_scale: u32,
    /// Most pixels a side of a `#SNAPSHOT` picture (1 to [`render::MAX_SIDE`]; the scale is
    /// lowered to fit, `--max-snapshot-side`).
    pub max_snapshot_side: u32,
    /// Most rectangles a client may leave in a vector map by `#LOAD`, `#MERGE` or `#RECT`
    /// (`--max-rects`, at most [`simrob_flat::MAX_RECTS`]): each change rebuilds the map's
    /// index, so the cost of each grows with it.
    pub max_rects: usize,
    /// Most steps one `#STEP n` may ask for (`--max-step`): a larger n is refused.
    pub max_step: u32,
    /// Most bytes of an `M` message's text written to the log (`--max-message-log-bytes`);
    /// the rest is left out, and how much is said.
    pub max_message_log_bytes: usize,
    /// Most `M` messages written to the log a second (`--max-message-log-rate`; 0 = none):
    /// the others are counted, and the count logged once the second is over. Seconds are
    /// those given to [`MrsCore::set_log_time`].
    pub max_message_log_rate: u32,
    /// Most robots (connections) at a time; past it a new connection is refused at once,
    /// without searching the map for room (`--max-clients`).
    pub max_clients: usize,
}

/// Default of [`MrsConfig::max_message_log_bytes`].
pub const DEFAULT_MAX_MESSAGE_LOG_BYTES: usize = 200;

/// Default of [`MrsConfig::max_message_log_rate`].
pub const DEFAULT_MAX_MESSAGE_LOG_RATE: u32 = 20;

/// Default of [`MrsConfig::max_step`].
pub const DEFAULT_MAX_STEP: u32 = 100_000;

/// Default of [`MrsConfig::max_snapshot_side`].
pub const DEFAULT_MAX_SNAPSHOT_SIDE: u32 = render::MAX_SIDE;

/// Default of [`MrsConfig::max_clients`].
pub const DEFAULT_MAX_CLIENTS: usize = 64;

impl Default for MrsConfig {
    fn default() -> Self {
        MrsConfig {
            start: None,
            stepped: false,
            timestep: simrob_flat::DEFAULT_TIMESTEP,
            snapshot_scale: 2,
            max_snapshot_side: DEFAULT_MAX_SNAPSHOT_SIDE,
            max_step: DEFAULT_MAX_STEP,
            max_rects: simrob_flat::MAX_RECTS,
            max_message_log_bytes: DEFAULT_MAX_MESSAGE_LOG_BYTES,
            max_message_log_rate: DEFAULT_MAX_MESSAGE_LOG_RATE,
            max_clients: DEFAULT_MAX_CLIENTS,
        }
    }
}

/// The simulator: a world, its clients' robots, what they asked the server to show.
#[derive(Debug)]
pub struct MrsCore {
    world: FlatWorld,
    config: MrsConfig,
    robots: BTreeMap<ClientId, RobotId>,
    messages: BTreeMap<RobotId, String>,
    log: Vec<String>,
    /// The `M` messages logged in the current second.
    message_log: MessageLog,
    requests: u64,
    errors: u64,
}

/// How many `M` messages were logged, and left out, in the current second.
#[derive(Debug, Default)]
struct MessageLog {
    /// The time now and when the current second began, in seconds.
    now: f64,
    since: f64,
    logged: u32,
    left_out: u64,
}

/// How far from the start a new robot may be put when the start is taken (inches).
const PLACE_SEARCH: f64 = 400.0;

impl MrsCore {
    /// A simulator on `map`.
    pub fn new(map: Map, config: MrsConfig) -> Self {
        let mut world = FlatWorld::new(map);
        world.set_timestep(config.timestep);
        MrsCore {
            world,
            config,
            robots: BTreeMap::new(),
            messages: BTreeMap::new(),
            log: Vec::new(),
            message_log: MessageLog::default(),
            requests: 0,
            errors: 0,
        }
    }

    /// The world.
    pub fn world(&self) -> &FlatWorld {
        &self.world
    }

    /// The configuration.
    pub fn config(&self) -> &MrsConfig {
        &self.config
    }

    /// The robot of a client.
    pub fn robot_of(&self, client: ClientId) -> Option<RobotId> {
        self.robots.get(&client).copied()
    }

    /// The last `M` text of each robot.
    pub fn messages(&self) -> &BTreeMap<RobotId, String> {
        &self.messages
    }

    /// Requests handled and errors answered so far.
    pub fn counts(&self) -> (u64, u64) {
        (self.requests, self.errors)
    }

    /// The time, in seconds from any start, for the rate of `M` messages logged
    /// ([`MrsConfig::max_message_log_rate`]): a server gives its clock here each turn. When
    /// a second is over, how many messages were left out in it is logged.
    pub fn set_log_time(&mut self, seconds: f64) {
        self.message_log.now = seconds;
        let m = &mut self.message_log;
        if seconds - m.since >= 1.0 || seconds < m.since {
            if m.left_out > 0 {
                self.log.push(format!(
                    "{} messages not shown (--max-message-log-rate {} a second)",
                    m.left_out, self.config.max_message_log_rate
                ));
            }
            m.since = seconds;
            m.logged = 0;
            m.left_out = 0;
        }
    }

    /// Logs robot `id`'s message, within the rate and length allowed.
    fn log_message(&mut self, id: RobotId, text: &str) {
        self.set_log_time(self.message_log.now);
        if self.message_log.logged >= self.config.max_message_log_rate {
            self.message_log.left_out += 1;
            return;
        }
        self.message_log.logged += 1;
        let max = self.config.max_message_log_bytes;
        let line = if text.len() > max {
            let mut cut = max;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            format!(
                "robot {}: {}… ({} bytes more, --max-message-log-bytes {max})",
                id.0,
                printable(&text[..cut]),
                text.len() - cut
            )
        } else {
            format!("robot {}: {}", id.0, printable(text))
        };
        self.log.push(line);
    }

    /// Log lines (messages shown, robots added and removed) since the last call.
    pub fn drain_log(&mut self) -> Vec<String> {
        std::mem::take(&mut self.log)
    }

    /// The pose new robots start from.
    pub fn start_pose(&self) -> FlatPose {
        self.config.start.unwrap_or_else(|| {
            let m = self.world.map();
            FlatPose::new(m.width() / 2.0, m.height() / 2.0, 0.0)
        })
    }

    /// A new client: it gets a robot at the start pose or the nearest free spot.
    pub fn connect(&mut self, client: ClientId) -> Result<RobotId, CoreError> {
        if let Some(&id) = self.robots.get(&client) {
            return Ok(id);
        }
        if self.robots.len() >= self.config.max_clients {
            return Err(CoreError::Full(self.config.max_clients));
        }
        let start = self.start_pose();
        let spot = self.free_start().ok_or(CoreError::NoFreePlace {
            x: start.x,
            y: start.y,
        })?;
        let id = self.world.add_robot(
            RobotModel::NOMAD_200,
            FlatPose::new(spot.x, spot.y, start.heading_deg),
        )?;
        self.robots.insert(client, id);
        self.log.push(format!(
            "robot {} connected at ({:.1}, {:.1}, {:.1}°)",
            id.0, spot.x, spot.y, start.heading_deg
        ));
        Ok(id)
    }

    /// A connection refused before it got a robot (`why`: the server is full, no free
    /// place): said in the log, as a closed connection is.
    pub fn refused(&mut self, why: &CoreError) {
        self.log.push(format!(
            "a connection refused: {}",
            printable(&why.to_string())
        ));
    }

    /// A client left: its robot is removed.
    pub fn disconnect(&mut self, client: ClientId) {
        self.disconnect_because(client, None);
    }

    /// Removes the client's robot, logging why the server closed its connection.
    pub fn disconnect_because(&mut self, client: ClientId, why: Option<&str>) {
        if let Some(id) = self.robots.remove(&client) {
            self.world.remove_robot(id);
            self.messages.remove(&id);
            match why {
                Some(why) => {
                    self.log
                        .push(format!("robot {} disconnected: {}", id.0, printable(why)))
                }
                None => self.log.push(format!("robot {} disconnected", id.0)),
            }
        }
    }

    /// Sets a robot's velocity, as its client's `V` would (for robots driven from
    /// elsewhere: ROS 2's `cmd_vel`); false for an unknown robot.
    pub fn set_velocity(&mut self, id: RobotId, v: simrob_flat::robot::Velocity) -> bool {
        self.world.set_velocity(id, v)
    }

    /// Advances one fixed step.
    pub fn step(&mut self) {
        self.world.step();
    }

    /// Handles one request line from `client`; returns the reply line (without terminator),
    /// or `None` for a blank line.
    pub fn handle_line(
        &mut self,
        client: ClientId,
        line: &str,
        files: &mut dyn MapFiles,
    ) -> Option<String> {
        let line = strip_line(line)?;
        self.requests += 1;
        let reply = match parse_request(line) {
            Ok(req) => self.handle(client, req, files),
            Err(e) => Err(CoreError::Request(e)),
        };
        Some(reply.unwrap_or_else(|e| {
            self.errors += 1;
            error_reply(&e)
        }))
    }

    fn handle(
        &mut self,
        client: ClientId,
        req: Request,
        files: &mut dyn MapFiles,
    ) -> Result<String, CoreError> {
        let id = self
            .robots
            .get(&client)
            .copied()
            .ok_or(CoreError::NoRobot)?;
        let robot = self.world.robot(id).ok_or(CoreError::RobotGone)?;
        match req {
            Request::SetVel {
                forward_tenths,
                turn_tenths,
            } => {
                let v = Velocity::new(
                    f64::from(forward_tenths) / 10.0,
                    f64::from(turn_tenths) / 10.0,
                );
                self.world.set_velocity(id, v);
                Ok("V".into())
            }
            Request::Stop => {
                self.world.set_velocity(id, Velocity::ZERO);
                Ok("A".into())
            }
            Request::Sonar(i) => {
                let r = self.world.sonar(id, i).ok_or(CoreError::NoSuchSonar)?;
                Ok(sonar_reply(i, r))
            }
            Request::Bumper => Ok(if robot.bumpers != 0 { "B1" } else { "B0" }.into()),
            Request::BumperRel => Ok(bumper_rel_reply(
                (robot.bumpers != 0).then(|| robot.bumpers.trailing_zeros() as usize),
            )),
            Request::Pos => Ok(pos_reply(
                robot.pose.x,
                robot.pose.y,
                robot.pose.heading_deg,
            )),
            Request::Message(text) => {
                self.log_message(id, &text);
                self.messages.insert(id, text);
                Ok("M".into())
            }
            Request::Sonars => {
                let all = self.world.sonars(id).ok_or(CoreError::NoSonars)?;
                Ok(sonars_reply(&all))
            }
            Request::Bumpers => Ok(bumpers_reply(robot.bumpers, robot.model.bumper_count)),
            Request::Place { x, y, heading } => {
                self.world.place_robot(id, FlatPose::new(x, y, heading))?;
                Ok("#PLACE".into())
            }
            Request::Load(name) => {
                self.load_map(&name, files)?;
                Ok("#LOAD".into())
            }
            Request::Merge(name) => {
                self.merge_map(&name, files)?;
                Ok("#MERGE".into())
            }
            Request::Rect(rect) => {
                self.add_rect(rect)?;
                Ok("#RECT".into())
            }
            Request::Step(n) => {
                if !self.config.stepped {
                    return Err(CoreError::NotStepped);
                }
                if n > self.config.max_step {
                    return Err(CoreError::TooManySteps {
                        n,
                        max: self.config.max_step,
                    });
                }
                for _ in 0..n {
                    self.world.step();
                }
                Ok(step_reply(self.world.time(), self.world.timestep()))
            }
            Request::Snapshot(name) => {
                check_png_name(&name)?;
                let png = self.snapshot_png()?;
                files.write(&name, &png)?;
                Ok("#SNAPSHOT".into())
            }
            Request::Help => Ok(HELP.into()),
        }
    }

    /// A PNG picture of the world (map, robots, sonar rays, closed bumpers).
    pub fn snapshot_png(&self) -> Result<Vec<u8>, CoreError> {
        render::png_within(
            &self.world,
            self.config.snapshot_scale,
            self.config.max_snapshot_side,
        )
        .map_err(CoreError::Picture)
    }

    /// Places a robot for tests and the command line (see [`FlatWorld::place_robot`]).
    pub fn place(&mut self, client: ClientId, pose: FlatPose) -> Result<(), CoreError> {
        let id = self.robot_of(client).ok_or(CoreError::NoRobotForClient)?;
        Ok(self.world.place_robot(id, pose)?)
    }

    /// Places robot `id` (the operator's placing, e.g. from the live view).
    pub fn place_robot(&mut self, id: RobotId, pose: FlatPose) -> Result<(), CoreError> {
        self.world.place_robot(id, pose)?;
        self.log.push(format!(
            "robot {} placed at ({:.1}, {:.1}, {:.1}°)",
            id.0, pose.x, pose.y, pose.heading_deg
        ));
        Ok(())
    }

    /// Replaces the map with the file `name` (`#LOAD`): at most [`MAX_MAP_SIDE`] a side, and
    /// no connected robot may end up inside an obstacle or outside it.
    pub fn load_map(&mut self, name: &str, files: &mut dyn MapFiles) -> Result<(), CoreError> {
        let map = read_map(files, name)?;
        check_map_size(&map)?;
        self.change_map(map, &format!("#LOAD {name}"))?;
        self.log.push(format!("map {name} loaded"));
        Ok(())
    }

    /// Merges the vector map in the file `name` onto the map (`#MERGE`): it may be no larger
    /// than the map, and no connected robot may end up inside a rectangle.
    pub fn merge_map(&mut self, name: &str, files: &mut dyn MapFiles) -> Result<(), CoreError> {
        let other = read_map(files, name)?;
        let mut map = self.world.map().clone();
        map.merge(&other).map_err(|source| CoreError::MapFile {
            name: name.to_string(),
            source,
        })?;
        self.change_map(map, &format!("#MERGE {name}"))?;
        self.log.push(format!("map {name} merged"));
        Ok(())
    }

    /// Puts `map` in place of the map unless a connected robot would then overlap an
    /// obstacle or the border (the first such robot is named; nothing changes).
    fn change_map(&mut self, map: Map, change: &str) -> Result<(), CoreError> {
        let count = map.rects().len();
        if count > self.config.max_rects {
            return Err(CoreError::TooManyRects {
                change: change.to_string(),
                count,
                max: self.config.max_rects,
            });
        }
        for (id, robot) in self.world.robots() {
            let p = robot.pose.position();
            if map.disc_overlaps(p, robot.model.radius) {
                return Err(CoreError::BuriesRobot {
                    change: change.to_string(),
                    robot: id.0,
                    x: p.x,
                    y: p.y,
                });
            }
        }
        self.world.set_map(map);
        Ok(())
    }

    /// Merges one rectangle `[x1, y1, x2, y2]` onto the map (`#RECT`); it must lie inside it
    /// and overlap no connected robot.
    pub fn add_rect(&mut self, [x1, y1, x2, y2]: [f64; 4]) -> Result<(), CoreError> {
        let (w, h) = (self.world.map().width(), self.world.map().height());
        if ![x1, x2].iter().all(|x| (0.0..=w).contains(x))
            || ![y1, y2].iter().all(|y| (0.0..=h).contains(y))
        {
            return Err(CoreError::RectOutside {
                rect: [x1, y1, x2, y2],
                w,
                h,
            });
        }
        let mut map = self.world.map().clone();
        map.add_rects([Rect::new(x1, y1, x2, y2)])?;
        let change = format!(
            "#RECT {} {} {} {}",
            simrob_math::Shown(x1),
            simrob_math::Shown(y1),
            simrob_math::Shown(x2),
            simrob_math::Shown(y2)
        );
        self.change_map(map, &change)
    }

    /// Where a new robot would go now, if anywhere: the start, else the nearest free spot
    /// (rings 1 in apart up to three robot radii), else the nearest on a coarser search
    /// (half a radius apart, up to 400 in). A full map costs a bounded search.
    pub fn free_start(&self) -> Option<Vec2> {
        let near = self.start_pose().position();
        let r = RobotModel::NOMAD_200.radius;
        self.world
            .find_free_spot(near, r, 3.0 * r)
            .or_else(|| coarse_free_spot(&self.world, near, r, PLACE_SEARCH))
    }
}

/// The free spot nearest to `near` on rings `radius / 2` apart, points at most `radius / 2`
/// apart on each ring.
fn coarse_free_spot(world: &FlatWorld, near: Vec2, radius: f64, max_dist: f64) -> Option<Vec2> {
    let step = (radius / 2.0).max(0.5);
    let mut ring = step;
    while ring <= max_dist {
        let n = ((2.0 * std::f64::consts::PI * ring / step).ceil() as usize).max(8);
        for k in 0..n {
            let p = near + Vec2::from_heading_deg(k as f64 * 360.0 / n as f64) * ring;
            if world.is_free(p, radius, None) {
                return Some(p);
            }
        }
        ring += step;
    }
    None
}

/// `text` with control characters (terminal escapes, bells, …) written as escapes, fit for
/// a terminal or a log.
pub fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

fn read_map(files: &mut dyn MapFiles, name: &str) -> Result<Map, CoreError> {
    let bytes = files.read(name)?;
    Map::from_bytes(&bytes).map_err(|source| CoreError::MapFile {
        name: name.to_string(),
        source,
    })
}

#[cfg(test)]
mod plural_tests {
    #[test]
    fn a_full_server_of_one_robot_says_robot() {
        assert_eq!(
            super::CoreError::Full(1).to_string(),
            "the server is full (1 robot, the most it takes: --max-clients 1)"
        );
        assert!(super::CoreError::Full(64)
            .to_string()
            .starts_with("the server is full (64 robots,"));
    }
}
