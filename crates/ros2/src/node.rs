//! The DDS/RTPS side: one participant (RustDDS) with ROS 2's conventions on the wire: topic
//! `/a/b` is DDS topic `rt/a/b`, types are named `pkg::msg::dds_::Type_`, and each standard
//! topic gets the QoS ROS 2 nodes expect of it (see [`qos`]).
//!
//! [`Node::publish`] writes what the [`crate::bridge::Bridge`] says; [`Node::receive`]
//! hands it what arrived. Readers keep only the latest sample (history depth 1) and each
//! call takes a bounded number, so a flood costs bounded work.
//!
//! Nothing polls: every reader is registered in the node's own event queue (mio: RustDDS
//! signals a reader's new data on a socket pair), so [`Node::wait`] sleeps until a sample
//! arrives or another thread calls [`Wake::wake`]; an outer event loop can wait on the same
//! queue through [`Node::ready_source`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::Duration;

use rustdds::no_key::{DataReader, DataWriter};
use rustdds::policy::{Durability, History, Reliability};
use rustdds::{
    CDRSerializerAdapter, DomainParticipant, DomainParticipantBuilder,
    DomainParticipantStatusEvent, DomainParticipantStatusListener, Publisher, QosPolicies,
    QosPolicyBuilder, StatusEvented, Subscriber, TopicKind, GUID,
};

use crate::bridge::{Bridge, Out};
use crate::env::{Discovery, Range};
use crate::msg::{
    Clock, Empty, Float64MultiArray, LaserScan, Message, Odometry, PoseStamped, TFMessage, Twist,
};

/// Most samples taken from one reader per [`Node::receive`].
pub const MAX_TAKE: usize = 16;

/// How long dropping a [`Node`] waits for its DDS participant to stop (it says goodbye to
/// its peers and joins RustDDS's threads); past it the participant is left to stop on its
/// own, or with the process. A participant busy with a flood of forged peers took minutes.
pub const STOP_WAIT: Duration = Duration::from_secs(2);

/// The QoS profiles of ROS 2's standard topics.
pub mod qos {
    use super::*;

    /// Reliable, with RustDDS's 100 ms blocking time.
    fn reliable() -> Reliability {
        Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_millis(100),
        }
    }

    fn profile(reliability: Reliability, durability: Durability, depth: i32) -> QosPolicies {
        QosPolicyBuilder::new()
            .reliability(reliability)
            .durability(durability)
            .history(History::KeepLast { depth })
            .build()
    }

    /// ROS 2's default (`rmw_qos_profile_default`): reliable, volatile, keep last `depth`.
    pub fn default(depth: i32) -> QosPolicies {
        profile(reliable(), Durability::Volatile, depth)
    }

    /// Sensor data (`rmw_qos_profile_sensor_data`): best effort, volatile, keep last 5.
    pub fn sensor_data() -> QosPolicies {
        profile(Reliability::BestEffort, Durability::Volatile, 5)
    }

    /// `/tf_static` (tf2's static broadcaster): reliable, transient local, keep last 1.
    pub fn tf_static() -> QosPolicies {
        profile(reliable(), Durability::TransientLocal, 1)
    }

    /// A state a late joiner needs (a match's score): reliable, transient local, keep last 1,
    /// as a latched topic.
    pub fn latched() -> QosPolicies {
        profile(reliable(), Durability::TransientLocal, 1)
    }

    /// A log a late joiner should see the end of (a match's events): reliable, transient
    /// local, keep last `depth`.
    pub fn latched_history(depth: i32) -> QosPolicies {
        profile(reliable(), Durability::TransientLocal, depth)
    }

    /// What simrob reads commands with: best effort (it matches reliable and best-effort
    /// publishers alike), keep last 1 (only the latest command counts).
    pub fn command() -> QosPolicies {
        profile(Reliability::BestEffort, Durability::Volatile, 1)
    }

    /// A reliable reader that keeps every sample (lockstep's step trigger).
    pub fn trigger() -> QosPolicies {
        profile(reliable(), Durability::Volatile, 100)
    }
}

/// The DDS topic of ROS 2 topic `name` (absolute, `/clock` or `robot_3/odom`): `rt/…`.
pub fn dds_topic(name: &str) -> String {
    format!("rt/{}", name.trim_start_matches('/'))
}

/// Why the participant or one of its topics could not be made.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// The node's event queue could not be made or a reader not registered in it.
    #[error("event queue: {0}")]
    Events(#[from] std::io::Error),
    /// RustDDS refused.
    #[error("DDS: {context}: {message}")]
    Dds {
        /// What was being made.
        context: String,
        /// What RustDDS said.
        message: String,
    },
}

fn dds<T, E: std::fmt::Debug>(r: Result<T, E>, context: impl Into<String>) -> Result<T, NodeError> {
    r.map_err(|e| NodeError::Dds {
        context: context.into(),
        message: format!("{e:?}"),
    })
}

type Writer<M> = DataWriter<M, CDRSerializerAdapter<M>>;
type Reader<M> = DataReader<M, ExactCdr<M>>;

/// CDR decoding that refuses a sample with bytes left over after the message (beyond the
/// up to 3 zero bytes that pad a sample to a multiple of 4): a publisher with another
/// layout under the same type name (a `Twist` with more after its six doubles).
pub struct ExactCdr<D>(std::marker::PhantomData<D>);

/// [`ExactCdr`]'s decoder.
pub struct ExactDecoder<D>(std::marker::PhantomData<D>);

impl<D> Clone for ExactDecoder<D> {
    fn clone(&self) -> Self {
        ExactDecoder(std::marker::PhantomData)
    }
}

const CDR_ENCODINGS: [rustdds::RepresentationIdentifier; 2] = [
    rustdds::RepresentationIdentifier::CDR_BE,
    rustdds::RepresentationIdentifier::CDR_LE,
];

impl<D> rustdds::no_key::DeserializerAdapter<D> for ExactCdr<D> {
    type Error = rustdds::serialization::Error;
    type Decoded = D;

    fn supported_encodings() -> &'static [rustdds::RepresentationIdentifier] {
        &CDR_ENCODINGS
    }

    fn transform_decoded(decoded: D) -> D {
        decoded
    }
}

impl<D: serde::de::DeserializeOwned> rustdds::no_key::DefaultDecoder<D> for ExactCdr<D> {
    type Decoder = ExactDecoder<D>;
    const DECODER: Self::Decoder = ExactDecoder(std::marker::PhantomData);
}

impl<'de, D: serde::Deserialize<'de>> rustdds::no_key::Decode<'de, D> for ExactDecoder<D> {
    type Error = rustdds::serialization::Error;

    fn decode_bytes(
        self,
        input: &'de [u8],
        encoding: rustdds::RepresentationIdentifier,
    ) -> Result<D, Self::Error> {
        let (value, used) = rustdds::serialization::deserialize_from_cdr_with_decoder_and_rep_id(
            input,
            encoding,
            std::marker::PhantomData::<D>,
        )?;
        let rest = input.get(used..).unwrap_or_default();
        if rest.len() > 3 || rest.iter().any(|b| *b != 0) {
            return Err(rustdds::serialization::Error::Message(format!(
                "{} bytes after the message: another layout under the same type name",
                rest.len()
            )));
        }
        Ok(value)
    }
}

struct RobotTopics {
    odom: Writer<Odometry>,
    cmd_vel: Option<Reader<Twist>>,
    wheels: Option<Reader<Float64MultiArray>>,
    goal: Option<Reader<PoseStamped>>,
    sonars: Vec<Writer<crate::msg::Range>>,
    scan: Option<Writer<LaserScan>>,
    bumpers: Option<Writer<Float64MultiArray>>,
    /// Its readers' tokens in the event queue.
    tokens: Vec<mio::Token>,
}

/// What a reader's token stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Input {
    CmdVel,
    Wheels,
    Goal,
    Step,
}

/// Which inputs the robots of this world take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    /// `<robot>/cmd_vel`, for the robots that take velocities.
    pub velocity: bool,
    /// `<robot>/wheel_commands`, for the robots that take velocities and have a wheel drive
    /// (the SimRob server's wheeled robots).
    pub wheels: bool,
    /// `<robot>/goal_pose`.
    pub goal: bool,
}

/// A writer of a world's own topic (see [`Node::topic_writer`]).
pub struct TopicWriter<M: Message>(Option<Writer<M>>);

impl<M: Message> TopicWriter<M> {
    /// Writes `m`; a failure is logged (the next one tries again).
    pub fn write(&self, m: M) {
        let Some(w) = &self.0 else {
            return;
        };
        if let Err(e) = write(w, m) {
            tracing::debug!(target: "simrob::ros2", "not written: {e}");
        }
    }
}

/// Wakes a [`Node::wait`] from another thread (a frame to publish, a stop).
#[derive(Clone, Debug)]
pub struct Wake(Arc<mio::Waker>);

impl Wake {
    /// Makes the node's current or next [`Node::wait`] return.
    pub fn wake(&self) {
        if let Err(e) = self.0.wake() {
            tracing::warn!(target: "simrob::ros2", "cannot wake the ROS 2 node: {e}");
        }
    }
}

/// The token of the node's [`Wake`].
const WAKE_TOKEN: mio::Token = mio::Token(0);
/// The token of the participant's status (peers found and lost); readers get the ones after
/// it.
const STATUS_TOKEN: mio::Token = mio::Token(1);

/// The node's event queue: readable when [`Node::wait`] would return at once (see
/// [`Node::ready_source`]).
#[cfg(unix)]
#[derive(Debug)]
pub struct ReadySource(std::os::fd::RawFd);

#[cfg(unix)]
impl mio::event::Source for ReadySource {
    fn register(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> std::io::Result<()> {
        mio::unix::SourceFd(&self.0).register(registry, token, interests)
    }

    fn reregister(
        &mut self,
        registry: &mio::Registry,
        token: mio::Token,
        interests: mio::Interest,
    ) -> std::io::Result<()> {
        mio::unix::SourceFd(&self.0).reregister(registry, token, interests)
    }

    fn deregister(&mut self, registry: &mio::Registry) -> std::io::Result<()> {
        mio::unix::SourceFd(&self.0).deregister(registry)
    }
}

/// The DDS side of a [`Node`]: the participant and everything made from it.
struct Dds {
    participant: DomainParticipant,
    publisher: Publisher,
    subscriber: Subscriber,
    /// Peers found and lost.
    status: DomainParticipantStatusListener,
    clock: Writer<Clock>,
    tf: Writer<TFMessage>,
    tf_static: Writer<TFMessage>,
    step: Option<Reader<Empty>>,
    robots: BTreeMap<String, RobotTopics>,
}

impl Dds {
    /// Writes one of the bridge's messages (not a robot's appearing or going).
    fn write(&self, out: Out) -> Result<(), String> {
        match out {
            Out::Clock(c) => write(&self.clock, c),
            Out::Tf(t) => write(&self.tf, t),
            Out::TfStatic(t) => write(&self.tf_static, t),
            Out::Odom { robot, msg } => match self.robots.get(&robot) {
                Some(t) => write(&t.odom, *msg),
                None => Ok(()),
            },
            Out::Sonars {
                robot,
                ranges,
                scan,
            } => match self.robots.get(&robot) {
                Some(t) => {
                    let mut r = Ok(());
                    for (w, m) in t.sonars.iter().zip(ranges) {
                        r = r.and(write(w, m));
                    }
                    match &t.scan {
                        Some(w) => r.and(write(w, scan)),
                        None => r,
                    }
                }
                None => Ok(()),
            },
            Out::Bumpers { robot, pressed } => match self.robots.get(&robot) {
                Some(RobotTopics {
                    bumpers: Some(w), ..
                }) => write(
                    w,
                    Float64MultiArray {
                        data: pressed.iter().map(|p| if *p { 1.0 } else { 0.0 }).collect(),
                        ..Default::default()
                    },
                ),
                _ => Ok(()),
            },
            Out::Appeared { .. } | Out::Gone { .. } => Ok(()),
        }
    }

    /// Takes every reader and the status listener out of `events` (so that nothing of this
    /// participant wakes the node once it is handed to [`reap`]).
    fn deregister(&mut self, events: &mio::Poll) {
        let registry = events.registry();
        let gone = |r: &mut dyn mio::event::Source| {
            if let Err(e) = registry.deregister(r) {
                tracing::debug!(target: "simrob::ros2", "deregistering a reader: {e}");
            }
        };
        gone(&mut self.status);
        if let Some(r) = &mut self.step {
            gone(r);
        }
        for t in self.robots.values_mut() {
            if let Some(r) = &mut t.cmd_vel {
                gone(r);
            }
            if let Some(r) = &mut t.wheels {
                gone(r);
            }
            if let Some(r) = &mut t.goal {
                gone(r);
            }
        }
    }
}

/// Drops a participant on a thread of its own (RustDDS joins its threads, and says goodbye
/// to its peers, when its participant is dropped), waiting for it at most `wait`.
fn reap(dds: Dds, wait: Duration) {
    let (done, stopped) = std::sync::mpsc::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name("ros2-stop".into())
        .spawn(move || {
            drop(dds);
            let _ = done.send(());
        });
    match spawned {
        Ok(_) if wait.is_zero() => {}
        Ok(_) => {
            if stopped.recv_timeout(wait).is_err() {
                tracing::warn!(target: "simrob::ros2", "the DDS participant did not stop within {wait:?}; left to stop on its own");
            }
        }
        // The closure, and the participant with it, was dropped here.
        Err(e) => {
            tracing::warn!(target: "simrob::ros2", "no thread to stop the DDS participant on ({e}); stopped in place")
        }
    }
}

/// A ROS 2 participant publishing a world.
pub struct Node {
    events: mio::Poll,
    event_buf: mio::Events,
    wake: Arc<mio::Waker>,
    next_token: usize,
    /// Each reader's robot (empty for `/simrob/step`) and input, by token.
    sources: HashMap<mio::Token, (String, Input)>,
    /// Readers with samples to take (those that signalled, and those left with more than a
    /// turn takes).
    pending: BTreeSet<mio::Token>,
    /// The participant, until the node stops ([`Node::stopped`]).
    dds: Option<Dds>,
    domain_id: u16,
    /// The other participants found on the domain (at most `max_participants`).
    peers: Vec<GUID>,
    max_participants: usize,
    /// Why the node stopped, once it has.
    stopped: Option<String>,
    inputs: Inputs,
    dropped: u64,
    /// The sockets the packet filter is on (their inodes), the datagrams the kernel had
    /// dropped on them at the last look, and when that was.
    #[cfg(target_os = "linux")]
    filtered: (std::collections::BTreeSet<u64>, u64, std::time::Instant),
    #[cfg(target_os = "linux")]
    max_sample: u32,
    #[cfg(target_os = "linux")]
    local: bool,
}

impl Node {
    /// A participant in `discovery`'s domain; confined to the loopback interface when its
    /// range is [`Range::Localhost`]. `lockstep` adds the step trigger `/simrob/step`.
    pub fn new(discovery: Discovery, inputs: Inputs, lockstep: bool) -> Result<Node, NodeError> {
        let mut b = DomainParticipantBuilder::new(discovery.domain_id);
        let local = discovery.range == Range::Localhost;
        if local {
            b = b
                .with_only_networks([IpAddr::V4(Ipv4Addr::LOCALHOST)])
                .same_host_loopback(true);
        }
        #[cfg(target_os = "linux")]
        let before = crate::confine::sockets();
        let participant = dds(b.build(), "participant")?;
        #[cfg(target_os = "linux")]
        #[cfg(target_os = "linux")]
        let mut filtered = std::collections::BTreeSet::new();
        #[cfg(target_os = "linux")]
        match before.and_then(|b| crate::confine::confine(&b, local, discovery.max_sample)) {
            Ok(inodes) => {
                tracing::debug!(target: "simrob::ros2", "{} sockets filtered (loopback only: {local}; samples of at most {} bytes)", inodes.len(), discovery.max_sample);
                filtered = inodes;
            }
            Err(e) if local => {
                tracing::warn!(target: "simrob::ros2", "cannot keep other machines' datagrams out of the participant's sockets ({e}): they bind every address, so firewall the domain's ports on a network you do not trust")
            }
            Err(e) => {
                tracing::warn!(target: "simrob::ros2", "cannot filter the participant's sockets ({e}): samples larger than --ros2-max-sample are not kept out")
            }
        }
        let publisher = dds(participant.create_publisher(&qos::default(10)), "publisher")?;
        let subscriber = dds(
            participant.create_subscriber(&qos::default(10)),
            "subscriber",
        )?;
        let events = mio::Poll::new()?;
        let wake = Arc::new(mio::Waker::new(events.registry(), WAKE_TOKEN)?);
        let mut status = participant.status_listener();
        events.registry().register(
            status.as_status_source_mio1(),
            STATUS_TOKEN,
            mio::Interest::READABLE,
        )?;
        let mut node = Node {
            events,
            event_buf: mio::Events::with_capacity(256),
            wake,
            next_token: STATUS_TOKEN.0 + 1,
            sources: HashMap::new(),
            pending: BTreeSet::new(),
            dds: Some(Dds {
                clock: writer(&participant, &publisher, "/clock", qos::default(1))?,
                tf: writer(&participant, &publisher, "/tf", qos::default(100))?,
                tf_static: writer(&participant, &publisher, "/tf_static", qos::tf_static())?,
                step: None,
                status,
                participant,
                publisher,
                subscriber,
                robots: BTreeMap::new(),
            }),
            domain_id: discovery.domain_id,
            peers: Vec::new(),
            max_participants: discovery.max_participants,
            stopped: None,
            inputs,
            dropped: 0,
            #[cfg(target_os = "linux")]
            filtered: (filtered, 0, std::time::Instant::now()),
            #[cfg(target_os = "linux")]
            max_sample: discovery.max_sample,
            #[cfg(target_os = "linux")]
            local,
        };
        if lockstep {
            let r = match &node.dds {
                Some(d) => reader(
                    &d.participant,
                    &d.subscriber,
                    "/simrob/step",
                    qos::trigger(),
                )?,
                None => return Ok(node),
            };
            let r = node.watch(r, "", Input::Step)?;
            if let Some(d) = &mut node.dds {
                d.step = Some(r);
            }
        }
        Ok(node)
    }

    /// Why the node stopped publishing and reading (more peers than it may track), once it
    /// has; the world goes on without ROS 2.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.as_deref()
    }

    /// The participant's index among this machine's participants on the domain (it sets the
    /// participant's UDP ports), while the node runs.
    pub fn participant_id(&self) -> Option<u16> {
        self.dds.as_ref().map(|d| d.participant.participant_id())
    }

    /// Reads what the participant says of its peers; past `max_participants` of them the
    /// node stops: its participant is dropped (on a thread of its own, not waited for), so
    /// what a flood of forged peers costs in memory, processor time and traffic to the
    /// addresses they name is bounded.
    /// Says (once a second at most) how many datagrams the sockets' filter or full buffers
    /// dropped since the last time it said so.
    #[cfg(target_os = "linux")]
    fn track_drops(&mut self) {
        let (inodes, seen, at) = &mut self.filtered;
        if inodes.is_empty() || at.elapsed() < Duration::from_secs(1) {
            return;
        }
        *at = std::time::Instant::now();
        let Ok(now) = crate::confine::drops(inodes) else {
            return;
        };
        if now > *seen {
            let other = if self.local {
                ", a datagram from another machine"
            } else {
                ""
            };
            tracing::info!(target: "simrob::ros2", "{} datagrams dropped: a sample of more than {} bytes (--ros2-max-sample){other}, or a full receive buffer", now - *seen, self.max_sample);
            *seen = now;
        }
    }

    fn track_peers(&mut self) {
        #[cfg(target_os = "linux")]
        self.track_drops();
        let Some(d) = &self.dds else {
            return;
        };
        while let Some(event) = d.status.try_recv_status() {
            match event {
                DomainParticipantStatusEvent::ParticipantDiscovered { dpd }
                    if !self.peers.contains(&dpd.guid) =>
                {
                    self.peers.push(dpd.guid);
                }
                DomainParticipantStatusEvent::ParticipantLost { id, .. } => {
                    self.peers.retain(|g| g.prefix != id);
                }
                _ => {}
            }
            if self.peers.len() > self.max_participants {
                let why = format!(
                    "ROS 2 stopped: more than {} other DDS participant{} on domain {} (--ros2-max-participants); the world goes on without ROS 2",
                    self.max_participants,
                    if self.max_participants == 1 { "" } else { "s" },
                    self.domain_id
                );
                tracing::error!(target: "simrob::ros2", "{why}");
                self.stopped = Some(why);
                self.peers = Vec::new();
                self.sources.clear();
                self.pending.clear();
                if let Some(mut d) = self.dds.take() {
                    d.deregister(&self.events);
                    reap(d, Duration::ZERO);
                }
                return;
            }
        }
    }

    /// Registers a reader in the event queue.
    fn watch<M: Message>(
        &mut self,
        mut r: Reader<M>,
        robot: &str,
        input: Input,
    ) -> Result<Reader<M>, NodeError> {
        let token = mio::Token(self.next_token);
        self.next_token += 1;
        self.events
            .registry()
            .register(&mut r, token, mio::Interest::READABLE)?;
        self.sources.insert(token, (robot.to_owned(), input));
        Ok(r)
    }

    fn watch_opt<M: Message>(
        &mut self,
        r: Option<Reader<M>>,
        robot: &str,
        input: Input,
    ) -> Result<Option<Reader<M>>, NodeError> {
        r.map(|r| self.watch(r, robot, input)).transpose()
    }

    /// What wakes [`Node::wait`] from another thread.
    pub fn waker(&self) -> Wake {
        Wake(self.wake.clone())
    }

    /// Sleeps until a sample may have arrived on one of the readers, [`Wake::wake`] was
    /// called, or `timeout` (None: no limit) passed. It may return early; [`Node::receive`]
    /// says what came.
    pub fn wait(&mut self, timeout: Option<Duration>) {
        match self.events.poll(&mut self.event_buf, timeout) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => tracing::warn!(target: "simrob::ros2", "waiting for DDS samples: {e}"),
        }
        for e in self.event_buf.iter() {
            if e.token() != WAKE_TOKEN && e.token() != STATUS_TOKEN {
                self.pending.insert(e.token());
            }
        }
    }

    /// The node's event queue as a source for an outer event loop (the MRS server's): it
    /// turns readable when a sample arrives or [`Wake::wake`] is called. The loop then calls
    /// [`Node::receive`], which re-arms it. Valid while the node lives.
    #[cfg(unix)]
    pub fn ready_source(&self) -> ReadySource {
        use std::os::fd::AsRawFd;
        ReadySource(self.events.as_raw_fd())
    }

    /// A writer on ROS 2 topic `name` for a world's own topics (beside the robots'). One made
    /// after the node has stopped writes nothing; one made before stops reaching anyone with
    /// the participant.
    pub fn topic_writer<M: Message>(
        &self,
        name: &str,
        qos: QosPolicies,
    ) -> Result<TopicWriter<M>, NodeError> {
        match &self.dds {
            Some(d) => Ok(TopicWriter(Some(writer(
                &d.participant,
                &d.publisher,
                name,
                qos,
            )?))),
            None => Ok(TopicWriter(None)),
        }
    }

    /// The DDS domain.
    pub fn domain_id(&self) -> u16 {
        self.domain_id
    }

    /// The robots whose topics are open (none once the node has stopped).
    pub fn robots(&self) -> impl Iterator<Item = &str> {
        self.dds
            .iter()
            .flat_map(|d| d.robots.keys().map(String::as_str))
    }

    /// Messages dropped: malformed, or for a robot that is gone.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Publishes what the bridge said (opening and closing robots' topics as they come and
    /// go). A failed write is logged; the next step tries again.
    pub fn publish(&mut self, outs: Vec<Out>) -> Result<(), NodeError> {
        self.track_peers();
        if self.dds.is_none() {
            return Ok(());
        }
        for out in outs {
            let written = match out {
                Out::Appeared {
                    robot,
                    drive,
                    sonars,
                    bumpers,
                } => {
                    self.open(&robot, drive, sonars, bumpers)?;
                    Ok(())
                }
                Out::Gone { robot } => {
                    if let Some(t) = self.dds.as_mut().and_then(|d| d.robots.remove(&robot)) {
                        for token in t.tokens {
                            self.sources.remove(&token);
                            self.pending.remove(&token);
                        }
                    }
                    Ok(())
                }
                out => {
                    let Some(d) = &self.dds else {
                        return Ok(());
                    };
                    d.write(out)
                }
            };
            if let Err(e) = written {
                tracing::debug!(target: "simrob::ros2", "not written: {e}");
            }
        }
        Ok(())
    }

    fn open(
        &mut self,
        robot: &str,
        drive: bool,
        sonars: usize,
        bumpers: bool,
    ) -> Result<(), NodeError> {
        let Some(d) = &self.dds else {
            return Ok(());
        };
        let (p, pb, s) = (&d.participant, &d.publisher, &d.subscriber);
        let velocity = drive && self.inputs.velocity;
        let wheels = drive && self.inputs.wheels;
        let topics = RobotTopics {
            odom: writer(p, pb, &format!("{robot}/odom"), qos::default(10))?,
            cmd_vel: velocity
                .then(|| reader(p, s, &format!("{robot}/cmd_vel"), qos::command()))
                .transpose()?,
            wheels: wheels
                .then(|| reader(p, s, &format!("{robot}/wheel_commands"), qos::command()))
                .transpose()?,
            goal: self
                .inputs
                .goal
                .then(|| reader(p, s, &format!("{robot}/goal_pose"), qos::command()))
                .transpose()?,
            sonars: (0..sonars)
                .map(|i| writer(p, pb, &format!("{robot}/sonar/{i}"), qos::sensor_data()))
                .collect::<Result<_, _>>()?,
            scan: (sonars > 0)
                .then(|| writer(p, pb, &format!("{robot}/scan"), qos::sensor_data()))
                .transpose()?,
            bumpers: bumpers
                .then(|| writer(p, pb, &format!("{robot}/bumpers"), qos::sensor_data()))
                .transpose()?,
            tokens: Vec::new(),
        };
        let first = self.next_token;
        let topics = RobotTopics {
            cmd_vel: self.watch_opt(topics.cmd_vel, robot, Input::CmdVel)?,
            wheels: self.watch_opt(topics.wheels, robot, Input::Wheels)?,
            goal: self.watch_opt(topics.goal, robot, Input::Goal)?,
            tokens: (first..self.next_token).map(mio::Token).collect(),
            ..topics
        };
        if let Some(d) = &mut self.dds {
            d.robots.insert(robot.to_owned(), topics);
        }
        Ok(())
    }

    /// Hands the bridge what arrived (at most [`MAX_TAKE`] samples per reader; malformed
    /// ones are dropped with a log line). Returns the number of step triggers received.
    /// Readiness is cleared first, so a sample that arrives after this call wakes the next
    /// [`Node::wait`].
    pub fn receive(&mut self, bridge: &mut Bridge) -> usize {
        self.wait(Some(Duration::ZERO));
        self.track_peers();
        let Some(d) = &mut self.dds else {
            return 0;
        };
        let mut dropped = 0;
        let mut steps = 0;
        // Only the readers that signalled: a world of many robots costs nothing per idle one.
        for token in std::mem::take(&mut self.pending) {
            let Some((name, input)) = self.sources.get(&token) else {
                continue;
            };
            let (name, input) = (name.as_str(), *input);
            let more = match (input, d.robots.get_mut(name)) {
                (Input::Step, _) => match &mut d.step {
                    Some(r) => {
                        let (ms, more) = take(r, "simrob", "step", &mut dropped);
                        steps += ms.len();
                        more
                    }
                    None => false,
                },
                (
                    Input::CmdVel,
                    Some(RobotTopics {
                        cmd_vel: Some(r), ..
                    }),
                ) => {
                    let (ms, more) = take(r, name, "cmd_vel", &mut dropped);
                    for m in ms {
                        if !bridge.cmd_vel(name, m) {
                            dropped += 1;
                            tracing::info!(target: "simrob::ros2", "{name}/cmd_vel: not a finite velocity, dropped");
                        }
                    }
                    more
                }
                (
                    Input::Wheels,
                    Some(RobotTopics {
                        wheels: Some(r), ..
                    }),
                ) => {
                    let (ms, more) = take(r, name, "wheel_commands", &mut dropped);
                    for m in ms {
                        if m.data.len() != 2 || !bridge.wheel_speeds(name, m.data) {
                            dropped += 1;
                            tracing::info!(target: "simrob::ros2", "{name}/wheel_commands: expected 2 finite speeds (left, right) for a robot with a wheel drive, dropped");
                        }
                    }
                    more
                }
                (Input::Goal, Some(RobotTopics { goal: Some(r), .. })) => {
                    let (ms, more) = take(r, name, "goal_pose", &mut dropped);
                    for m in ms {
                        if let Err(e) = bridge.goal(name, m) {
                            dropped += 1;
                            tracing::info!(target: "simrob::ros2", "{name}/goal_pose: {e}, dropped");
                        }
                    }
                    more
                }
                _ => false,
            };
            // More than one turn takes: the reader stays pending (it will not signal again
            // for what it already holds).
            if more {
                self.pending.insert(token);
            }
        }
        self.dropped += dropped;
        steps
    }
}

/// The ROS 2 topic `name` carrying `M` (no key), as a writer or a reader needs it.
fn topic<M: Message>(
    p: &DomainParticipant,
    name: &str,
    qos: &QosPolicies,
) -> Result<rustdds::Topic, NodeError> {
    dds(
        p.create_topic(
            dds_topic(name),
            M::TYPE_NAME.to_owned(),
            qos,
            TopicKind::NoKey,
        ),
        format!("topic {name}"),
    )
}

fn writer<M: Message>(
    p: &DomainParticipant,
    publisher: &Publisher,
    name: &str,
    qos: QosPolicies,
) -> Result<Writer<M>, NodeError> {
    let topic = topic::<M>(p, name, &qos)?;
    dds(
        publisher.create_datawriter_no_key_cdr::<M>(&topic, Some(qos)),
        format!("writer {name}"),
    )
}

fn reader<M: Message>(
    p: &DomainParticipant,
    subscriber: &Subscriber,
    name: &str,
    qos: QosPolicies,
) -> Result<Reader<M>, NodeError> {
    let topic = topic::<M>(p, name, &qos)?;
    dds(
        subscriber.create_datareader_no_key::<M, ExactCdr<M>>(&topic, Some(qos)),
        format!("reader {name}"),
    )
}

fn write<M: Message>(w: &Writer<M>, m: M) -> Result<(), String> {
    w.write(m, None).map_err(|e| format!("{e:?}"))
}

/// At most [`MAX_TAKE`] samples (malformed ones dropped and counted), and whether the reader
/// may hold more.
fn take<M: Message>(
    r: &mut Reader<M>,
    robot: &str,
    topic: &str,
    dropped: &mut u64,
) -> (Vec<M>, bool) {
    let mut out = Vec::new();
    for _ in 0..MAX_TAKE {
        match r.take_next_sample() {
            Ok(Some(s)) => out.push(s.into_value()),
            Ok(None) => return (out, false),
            Err(e) => {
                *dropped += 1;
                tracing::info!(target: "simrob::ros2", "{robot}/{topic}: malformed message dropped: {e}");
            }
        }
    }
    (out, true)
}

impl Drop for Node {
    /// Stops the participant, waiting for it at most [`STOP_WAIT`].
    fn drop(&mut self) {
        if let Some(mut d) = self.dds.take() {
            d.deregister(&self.events);
            reap(d, STOP_WAIT);
        }
    }
}
