//! The DDS/RTPS side: one participant (RustDDS) with ROS 2's conventions on the wire: topic
//! `/a/b` is DDS topic `rt/a/b`, types are named `pkg::msg::dds_::Type_`, and each standard
//! topic gets the QoS ROS 2 nodes expect of it (see [`qos`]).
//!
//! [`Node::publish`] writes what the [`crate::bridge::Bridge`] says; [`Node::receive`]
//! hands it what arrived. Readers keep only the latest sample (history depth 1) and each
//! call takes a bounded number, so a flood costs bounded work.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use rustdds::no_key::{DataReader, DataWriter};
use rustdds::policy::{Durability, History, Reliability};
use rustdds::{
    CDRDeserializerAdapter, CDRSerializerAdapter, DomainParticipant, DomainParticipantBuilder,
    Publisher, QosPolicies, QosPolicyBuilder, Subscriber, TopicKind,
};

use crate::bridge::{Bridge, Out};
use crate::env::{Discovery, Range};
use crate::msg::{
    Clock, Empty, Float64MultiArray, LaserScan, Message, Odometry, PoseStamped, TFMessage, Twist,
};

/// Most samples taken from one reader per [`Node::receive`].
pub const MAX_TAKE: usize = 16;

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
type Reader<M> = DataReader<M, CDRDeserializerAdapter<M>>;

struct RobotTopics {
    odom: Writer<Odometry>,
    cmd_vel: Option<Reader<Twist>>,
    wheels: Option<Reader<Float64MultiArray>>,
    goal: Option<Reader<PoseStamped>>,
    sonars: Vec<Writer<crate::msg::Range>>,
    scan: Option<Writer<LaserScan>>,
    bumpers: Option<Writer<Float64MultiArray>>,
}

/// Which inputs the robots of this world take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Inputs {
    /// `<robot>/cmd_vel` and `<robot>/wheel_commands`.
    pub velocity: bool,
    /// `<robot>/goal_pose`.
    pub goal: bool,
}

/// A ROS 2 participant publishing a world.
pub struct Node {
    participant: DomainParticipant,
    publisher: Publisher,
    subscriber: Subscriber,
    clock: Writer<Clock>,
    tf: Writer<TFMessage>,
    tf_static: Writer<TFMessage>,
    step: Option<Reader<Empty>>,
    robots: BTreeMap<String, RobotTopics>,
    inputs: Inputs,
    dropped: u64,
}

impl Node {
    /// A participant in `discovery`'s domain; confined to the loopback interface when its
    /// range is [`Range::Localhost`]. `lockstep` adds the step trigger `/simrob/step`.
    pub fn new(discovery: Discovery, inputs: Inputs, lockstep: bool) -> Result<Node, NodeError> {
        let mut b = DomainParticipantBuilder::new(discovery.domain_id);
        if discovery.range == Range::Localhost {
            b = b
                .with_only_networks([IpAddr::V4(Ipv4Addr::LOCALHOST)])
                .same_host_loopback(true);
        }
        let participant = dds(b.build(), "participant")?;
        let publisher = dds(participant.create_publisher(&qos::default(10)), "publisher")?;
        let subscriber = dds(
            participant.create_subscriber(&qos::default(10)),
            "subscriber",
        )?;
        let mut node = Node {
            clock: writer(&participant, &publisher, "/clock", qos::default(1))?,
            tf: writer(&participant, &publisher, "/tf", qos::default(100))?,
            tf_static: writer(&participant, &publisher, "/tf_static", qos::tf_static())?,
            step: None,
            participant,
            publisher,
            subscriber,
            robots: BTreeMap::new(),
            inputs,
            dropped: 0,
        };
        if lockstep {
            node.step = Some(reader(
                &node.participant,
                &node.subscriber,
                "/simrob/step",
                qos::trigger(),
            )?);
        }
        Ok(node)
    }

    /// The DDS domain.
    pub fn domain_id(&self) -> u16 {
        self.participant.domain_id()
    }

    /// The robots whose topics are open.
    pub fn robots(&self) -> impl Iterator<Item = &str> {
        self.robots.keys().map(String::as_str)
    }

    /// Messages dropped: malformed, or for a robot that is gone.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Publishes what the bridge said (opening and closing robots' topics as they come and
    /// go). A failed write is logged; the next step tries again.
    pub fn publish(&mut self, outs: Vec<Out>) -> Result<(), NodeError> {
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
                    self.robots.remove(&robot);
                    Ok(())
                }
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
        let (p, pb, s) = (&self.participant, &self.publisher, &self.subscriber);
        let velocity = drive && self.inputs.velocity;
        let topics = RobotTopics {
            odom: writer(p, pb, &format!("{robot}/odom"), qos::default(10))?,
            cmd_vel: velocity
                .then(|| reader(p, s, &format!("{robot}/cmd_vel"), qos::command()))
                .transpose()?,
            wheels: velocity
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
        };
        self.robots.insert(robot.to_owned(), topics);
        Ok(())
    }

    /// Hands the bridge what arrived (at most [`MAX_TAKE`] samples per reader; malformed
    /// ones are dropped with a log line). Returns the number of step triggers received.
    pub fn receive(&mut self, bridge: &mut Bridge) -> usize {
        let mut dropped = 0;
        for (name, t) in &mut self.robots {
            if let Some(r) = &mut t.cmd_vel {
                for m in take(r, name, "cmd_vel", &mut dropped) {
                    if !bridge.cmd_vel(name, m) {
                        dropped += 1;
                        tracing::info!(target: "simrob::ros2", "{name}/cmd_vel: not a finite velocity, dropped");
                    }
                }
            }
            if let Some(r) = &mut t.wheels {
                for m in take(r, name, "wheel_commands", &mut dropped) {
                    if m.data.len() != 2 || !bridge.wheel_speeds(name, m.data) {
                        dropped += 1;
                        tracing::info!(target: "simrob::ros2", "{name}/wheel_commands: expected 2 finite speeds (left, right), dropped");
                    }
                }
            }
            if let Some(r) = &mut t.goal {
                for m in take(r, name, "goal_pose", &mut dropped) {
                    if !bridge.goal(name, m) {
                        dropped += 1;
                        tracing::info!(target: "simrob::ros2", "{name}/goal_pose: not a finite position, dropped");
                    }
                }
            }
        }
        let steps = match &mut self.step {
            Some(r) => take(r, "simrob", "step", &mut dropped).len(),
            None => 0,
        };
        self.dropped += dropped;
        steps
    }
}

fn writer<M: Message>(
    p: &DomainParticipant,
    publisher: &Publisher,
    name: &str,
    qos: QosPolicies,
) -> Result<Writer<M>, NodeError> {
    let topic = dds(
        p.create_topic(
            dds_topic(name),
            M::TYPE_NAME.to_owned(),
            &qos,
            TopicKind::NoKey,
        ),
        format!("topic {name}"),
    )?;
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
    let topic = dds(
        p.create_topic(
            dds_topic(name),
            M::TYPE_NAME.to_owned(),
            &qos,
            TopicKind::NoKey,
        ),
        format!("topic {name}"),
    )?;
    dds(
        subscriber.create_datareader_no_key_cdr::<M>(&topic, Some(qos)),
        format!("reader {name}"),
    )
}

fn write<M: Message>(w: &Writer<M>, m: M) -> Result<(), String> {
    w.write(m, None).map_err(|e| format!("{e:?}"))
}

fn take<M: Message>(r: &mut Reader<M>, robot: &str, topic: &str, dropped: &mut u64) -> Vec<M> {
    let mut out = Vec::new();
    for _ in 0..MAX_TAKE {
        match r.take_next_sample() {
            Ok(Some(s)) => out.push(s.into_value()),
            Ok(None) => break,
            Err(e) => {
                *dropped += 1;
                tracing::info!(target: "simrob::ros2", "{robot}/{topic}: malformed message dropped: {e}");
            }
        }
    }
    out
}
