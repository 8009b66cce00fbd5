//! FutRob KidSize matches (`simrob soccer match`) on ROS 2. The match is played by its
//! FutRob brains: the ROS side watches it (nothing comes in).
//!
//! * `/clock` and, per player under `<team>_<entity>` (`cyan_1`, `magenta_4`), `odom` and
//!   its `odom → base_link` on `/tf` (as every world);
//! * `/soccer/ball` (`geometry_msgs/PoseStamped`, frame `world`, at the odometry rate) and
//!   `world → ball` on `/tf`;
//! * `/soccer/score` (`std_msgs/Int32MultiArray`, `[cyan, magenta]` goals, one dimension
//!   labelled `cyan,magenta`; latched: reliable, transient local), written at the start and
//!   at every change;
//! * `/soccer/events` (`std_msgs/String`, reliable, transient local, keep last 100): the
//!   match's events as they happen, one per message, `"<simulated s> <what>"` (`"12.34 goal cyan"`).
//!
//! The field's frame is the world frame: metres, x towards the magenta goal, z up.

use std::time::{Duration, Instant};

use crate::bridge::{Bridge, Frame, Out, Rates, RobotFrame};
use crate::env::Discovery;
use crate::msg::{
    Header, Int32MultiArray, MultiArrayDimension, MultiArrayLayout, Pose, PoseStamped, TFMessage,
    Text, Time, Transform, TransformStamped, Vector3,
};
use crate::node::{qos, Inputs, Node, NodeError, TopicWriter};

/// A player as the match shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Player {
    /// Its entity id (its FutRob robot id).
    pub entity: u32,
    /// `cyan` or `magenta`.
    pub team: &'static str,
    /// Position on the field, metres, and heading, radians (counter-clockwise from +x).
    pub pose: [f64; 3],
}

/// The ROS name of a player: `<team>_<entity>`.
pub fn player_name(p: &Player) -> String {
    format!("{}_{}", p.team, p.entity)
}

/// The match at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchFrame<'a> {
    /// Simulated seconds.
    pub time: f64,
    /// The players.
    pub players: Vec<Player>,
    /// The ball's centre, metres.
    pub ball: [f64; 3],
    /// Goals: cyan, magenta.
    pub goals: [u32; 2],
    /// Every event so far, `(simulated s, what)`, in order (those already published are
    /// skipped).
    pub events: &'a [(f64, String)],
}

/// How `simrob soccer match --ros2` runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Domain and discovery range.
    pub discovery: Discovery,
    /// Publication rates (the ball's pose goes at the odometry rate).
    pub rates: Rates,
    /// Simulated seconds per wall second (0 = as fast as possible; the 2D view, when it
    /// watches, paces instead).
    pub speed: f64,
}

/// The participant watching a match.
pub struct SoccerRos {
    node: Node,
    bridge: Bridge,
    options: Options,
    ball: TopicWriter<PoseStamped>,
    score: TopicWriter<Int32MultiArray>,
    events: TopicWriter<Text>,
    events_sent: usize,
    goals: Option<[u32; 2]>,
    started: Option<(Instant, f64)>,
    grid: crate::simrob::Grid,
}

impl SoccerRos {
    /// The participant and its match topics.
    pub fn new(options: Options) -> Result<SoccerRos, NodeError> {
        let node = Node::new(options.discovery, Inputs::default(), false)?;
        Ok(SoccerRos {
            ball: node.topic_writer("/soccer/ball", qos::default(10))?,
            score: node.topic_writer("/soccer/score", qos::latched())?,
            events: node.topic_writer("/soccer/events", qos::latched_history(100))?,
            node,
            bridge: Bridge::new(options.rates),
            options,
            events_sent: 0,
            goals: None,
            started: None,
            grid: crate::simrob::Grid::default(),
        })
    }

    /// The simulated time of iteration `iteration` (the world says `time`, `per` seconds
    /// an iteration) on the iteration grid: the world sums its steps in floating point.
    pub fn on_grid(&mut self, iteration: u64, time: f64, per: f64) -> f64 {
        self.grid.at(iteration, time, per)
    }

    /// Publishes what is due at `m` (and, at `speed`, waits for wall time to catch up).
    pub fn publish(&mut self, m: &MatchFrame) {
        let frame = Frame {
            time: m.time,
            robots: m
                .players
                .iter()
                .map(|p| RobotFrame {
                    name: player_name(p),
                    id: u64::from(p.entity),
                    position: [p.pose[0], p.pose[1], 0.0],
                    rotation: [0.0, 0.0, p.pose[2]],
                    linear_velocity: None,
                    angular_velocity: None,
                    takes_cmd_vel: false,
                    drive: None,
                    sonars: None,
                    bumpers: None,
                })
                .collect(),
        };
        let mut outs = self.bridge.step(&frame);
        let stamp = Time::from_secs(m.time);
        // The ball goes with the odometry (the bridge says whether it was due).
        if outs.iter().any(|o| matches!(o, Out::Odom { .. })) {
            let position = Vector3 {
                x: m.ball[0],
                y: m.ball[1],
                z: m.ball[2],
            };
            let header = Header {
                stamp,
                frame_id: crate::bridge::WORLD_FRAME.to_owned(),
            };
            self.ball.write(PoseStamped {
                header: header.clone(),
                pose: Pose {
                    position,
                    ..Default::default()
                },
            });
            outs.push(Out::Tf(TFMessage {
                transforms: vec![TransformStamped {
                    header,
                    child_frame_id: "ball".to_owned(),
                    transform: Transform {
                        translation: position,
                        ..Default::default()
                    },
                }],
            }));
        }
        if let Err(e) = self.node.publish(outs) {
            tracing::warn!(target: "simrob::ros2", "{e}");
        }
        if self.goals != Some(m.goals) {
            self.goals = Some(m.goals);
            self.score.write(score_message(m.goals));
        }
        for (t, what) in m.events.iter().skip(self.events_sent) {
            self.events.write(Text {
                data: format!("{t:.2} {what}"),
            });
        }
        self.events_sent = self.events_sent.max(m.events.len());
        if self.options.speed > 0.0 {
            let (t0, s0) = *self.started.get_or_insert((Instant::now(), m.time));
            let due = t0 + Duration::from_secs_f64((m.time - s0).max(0.0) / self.options.speed);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
    }
}

/// `/soccer/score`'s message for these goals (cyan, magenta).
pub fn score_message(goals: [u32; 2]) -> Int32MultiArray {
    Int32MultiArray {
        layout: MultiArrayLayout {
            dim: vec![MultiArrayDimension {
                label: "cyan,magenta".to_owned(),
                size: 2,
                stride: 2,
            }],
            data_offset: 0,
        },
        data: goals
            .iter()
            .map(|g| i32::try_from(*g).unwrap_or(i32::MAX))
            .collect(),
    }
}
