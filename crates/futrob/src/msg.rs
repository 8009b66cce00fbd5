//! Team messages: the 16-byte FutRob message, its parameter table, the teammate table with
//! its time-to-live, discovery (announcement, `ASK_ROLE`), and a simulated radio for
//! in-process runs.
//!
//! **Wire format.** Four 32-bit signed integers, little-endian: source id, destination id
//! (or [`BROADCAST`] = 255), param, value — exactly 16 bytes. Any other length, an
//! unknown param, or a source id that is no robot's (outside [`ROBOT_IDS`], 1–254) is counted
//! and dropped ([`CommStats`]).
//!
//! **Param codes** ([`Param`]): FutRob fixed `ACTION_TAKEN` = 20 (its value an action code,
//! `kickBall` = 19, see [`crate::ActionKind::code`]); the rest are assigned here:
//!
//! | code | param | value |
//! |---|---|---|
//! | 1 | `COMM_PARAM_START` | role |
//! | 2 | `COMM_PARAM_ROLE` | 1 = goalkeeper, 2 = field player |
//! | 3 | `COMM_PARAM_BALL_IN_SIGHT` | 0/1 |
//! | 4 | `COMM_PARAM_BALL_DISTANCE` | cm |
//! | 5 | `COMM_PARAM_ASK_ROLE` | 0 (unused) |
//! | 6 | `COMM_PARAM_GK_POS_X` | keeper's offset from the goal centre, cm, + to the keeper's right |
//! | 7 | `COMM_PARAM_GK_POS_Y` | keeper's distance out from the goal line, cm |
//! | 8 | `COMM_PARAM_EXIT` | internal: unblocks the receiver at shutdown |
//! | 9 | `COMM_PARAM_BALL_IS_MINE` | 0/1 |
//! | 10 | `COMM_PARAM_PARTNER_DISTANCE` | cm, −1 = not in sight |
//! | 11 | `COMM_PARAM_OPPONENT_DISTANCE` | cm, −1 = not in sight |
//! | 12 | `COMM_PARAM_MY_GOAL_DISTANCE` | cm, −1 = not in sight |
//! | 13 | `COMM_PARAM_OPP_GOAL_DISTANCE` | cm, −1 = not in sight |
//! | 14 | `COMM_PARAM_LEAVE` | 0: the sender leaves the game |
//! | 20 | `COMM_PARAM_ACTION_TAKEN` | action code |

use std::collections::{BTreeMap, VecDeque};

use simrob_math::SplitMix64;

use crate::names::ActionKind;

/// Destination id meaning "every robot".
pub const BROADCAST: i32 = 255;
/// The robot ids, 1–254 (`ini.config`'s `id`): 255 is [`BROADCAST`] (and the spy's "every
/// message"), so a message whose source is outside them comes from no robot and is dropped
/// ([`Received::BadSource`]).
pub const ROBOT_IDS: std::ops::RangeInclusive<i32> = 1..=254;
/// Least interval between two `ASK_ROLE` to the same teammate whose role is still unknown.
pub const ASK_ROLE_RETRY_MS: u64 = 1000;
/// Least interval between two answers to the same teammate's `ASK_ROLE`: a flood of
/// questions must not draw as many messages onto the team's address. Half of
/// [`ASK_ROLE_RETRY_MS`], so that a teammate's questions, a second apart when sent, are
/// each answered however the radio delays them.
pub const ANSWER_ROLE_RETRY_MS: u64 = 500;
/// Size of a team message on the wire.
pub const MESSAGE_LEN: usize = 16;

/// Role codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// 1: the goalkeeper.
    Goalkeeper,
    /// 2: a field player.
    FieldPlayer,
}

impl Role {
    /// The wire code.
    pub fn code(self) -> i32 {
        match self {
            Role::Goalkeeper => 1,
            Role::FieldPlayer => 2,
        }
    }
    /// From the wire code.
    pub fn from_code(c: i32) -> Option<Role> {
        match c {
            1 => Some(Role::Goalkeeper),
            2 => Some(Role::FieldPlayer),
            _ => None,
        }
    }
    /// `goalkeeper` / `field_player`.
    pub fn name(self) -> &'static str {
        match self {
            Role::Goalkeeper => "goalkeeper",
            Role::FieldPlayer => "field_player",
        }
    }
}

macro_rules! params {
    ($($(#[$m:meta])* $v:ident = $code:literal, $name:literal;)*) => {
        /// A message's param (content key).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Param { $($(#[$m])* $v,)* }
        impl Param {
            /// Every param.
            pub const ALL: &'static [Param] = &[$(Param::$v,)*];
            /// The wire code.
            pub fn code(self) -> i32 { match self { $(Param::$v => $code,)* } }
            /// The symbolic name (`COMM_PARAM_…`).
            pub fn name(self) -> &'static str { match self { $(Param::$v => $name,)* } }
            /// From the wire code.
            pub fn from_code(c: i32) -> Option<Param> { match c { $($code => Some(Param::$v),)* _ => None } }
        }
    };
}

params! {
    /// The sender's thread started (value: role).
    Start = 1, "COMM_PARAM_START";
    /// The sender's role (value: role code).
    Role = 2, "COMM_PARAM_ROLE";
    /// The sender sees the ball (0/1).
    BallInSight = 3, "COMM_PARAM_BALL_IN_SIGHT";
    /// The sender's distance to the ball, cm.
    BallDistance = 4, "COMM_PARAM_BALL_DISTANCE";
    /// "What is your role?"
    AskRole = 5, "COMM_PARAM_ASK_ROLE";
    /// Keeper's offset from the goal centre along the goal line, cm.
    GkPosX = 6, "COMM_PARAM_GK_POS_X";
    /// Keeper's distance out from the goal line, cm.
    GkPosY = 7, "COMM_PARAM_GK_POS_Y";
    /// Internal: stop the receiver.
    Exit = 8, "COMM_PARAM_EXIT";
    /// The sender has the ball at its feet (0/1).
    BallIsMine = 9, "COMM_PARAM_BALL_IS_MINE";
    /// Distance to the nearest teammate seen, cm (−1: none).
    PartnerDistance = 10, "COMM_PARAM_PARTNER_DISTANCE";
    /// Distance to the nearest opponent seen, cm (−1: none).
    OpponentDistance = 11, "COMM_PARAM_OPPONENT_DISTANCE";
    /// Distance to its own goal, cm (−1: not seen).
    MyGoalDistance = 12, "COMM_PARAM_MY_GOAL_DISTANCE";
    /// Distance to the opponent goal, cm (−1: not seen).
    OppGoalDistance = 13, "COMM_PARAM_OPP_GOAL_DISTANCE";
    /// The sender leaves the game.
    Leave = 14, "COMM_PARAM_LEAVE";
    /// The action the sender just decided (value: action code).
    ActionTaken = 20, "COMM_PARAM_ACTION_TAKEN";
}

impl Param {
    /// Finds a param by its symbolic name (with or without the `COMM_PARAM_` prefix,
    /// ignoring case) or by its number.
    pub fn parse(s: &str) -> Option<Param> {
        let s = s.trim();
        if let Ok(c) = s.parse::<i32>() {
            return Param::from_code(c);
        }
        let short = |p: &Param| p.name().trim_start_matches("COMM_PARAM_").to_string();
        Param::ALL
            .iter()
            .copied()
            .find(|p| p.name().eq_ignore_ascii_case(s) || short(p).eq_ignore_ascii_case(s))
    }
}

/// One team message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Message {
    /// Sender id.
    pub source: i32,
    /// Destination id, or [`BROADCAST`].
    pub destination: i32,
    /// Content key.
    pub param: Param,
    /// Content value.
    pub value: i32,
}

/// Why a datagram was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not exactly 16 bytes.
    #[error("datagram of {0} bytes (a team message is exactly 16)")]
    WrongLength(usize),
    /// Param code not in the table.
    #[error("unknown param code {0}")]
    UnknownParam(i32),
}

impl Message {
    /// A message.
    pub fn new(source: i32, destination: i32, param: Param, value: i32) -> Message {
        Message {
            source,
            destination,
            param,
            value,
        }
    }

    /// The 16 bytes on the wire.
    pub fn encode(&self) -> [u8; MESSAGE_LEN] {
        let mut b = [0u8; MESSAGE_LEN];
        b[0..4].copy_from_slice(&self.source.to_le_bytes());
        b[4..8].copy_from_slice(&self.destination.to_le_bytes());
        b[8..12].copy_from_slice(&self.param.code().to_le_bytes());
        b[12..16].copy_from_slice(&self.value.to_le_bytes());
        b
    }

    /// Decodes a datagram.
    pub fn decode(bytes: &[u8]) -> Result<Message, DecodeError> {
        let b: &[u8; MESSAGE_LEN] = bytes
            .try_into()
            .map_err(|_| DecodeError::WrongLength(bytes.len()))?;
        let int = |i: usize| i32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let code = int(8);
        Ok(Message {
            source: int(0),
            destination: int(4),
            param: Param::from_code(code).ok_or(DecodeError::UnknownParam(code))?,
            value: int(12),
        })
    }

    /// The value printed symbolically where it has a name (roles, action codes).
    pub fn value_text(&self) -> String {
        match self.param {
            Param::Role | Param::Start => Role::from_code(self.value)
                .map(|r| format!("{} ({})", self.value, r.name()))
                .unwrap_or_else(|| self.value.to_string()),
            Param::ActionTaken => ActionKind::from_code(self.value)
                .map(|a| format!("{} ({})", self.value, a.name()))
                .unwrap_or_else(|| self.value.to_string()),
            _ => self.value.to_string(),
        }
    }
}

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dest = if self.destination == BROADCAST {
            "255 (all)".to_string()
        } else {
            self.destination.to_string()
        };
        write!(
            f,
            "src {} -> dest {}: {} = {}",
            self.source,
            dest,
            self.param.name(),
            self.value_text()
        )
    }
}

/// What is known about one teammate (FutRob's `TeamMemberData`). Distances are cm, `None`
/// when not in sight or not reported.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TeamMember {
    /// Its id.
    pub id: i32,
    /// Its role, once announced.
    pub role: Option<Role>,
    /// It sees the ball.
    pub ball_in_sight: bool,
    /// It has the ball.
    pub ball_is_mine: bool,
    /// Its distance to the ball.
    pub ball_distance: Option<i32>,
    /// Its distance to the nearest teammate it sees.
    pub partner_distance: Option<i32>,
    /// When its `ASK_ROLE` was last answered, ms.
    pub role_answered: Option<u64>,
    /// Its distance to the nearest opponent it sees.
    pub opponent_distance: Option<i32>,
    /// Its distance to its own goal.
    pub my_goal_distance: Option<i32>,
    /// Its distance to the opponent goal.
    pub opp_goal_distance: Option<i32>,
    /// The last action it reported.
    pub action_taken: Option<ActionKind>,
    /// When it last reported `passBall`, ms.
    pub last_team_pass: Option<u64>,
    /// When its last message arrived, ms.
    pub last_update: u64,
    /// When it was last asked its role, ms.
    pub role_asked: Option<u64>,
}

/// Counters of the team-message receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CommStats {
    /// Datagrams handed in.
    pub received: u64,
    /// Accepted and applied.
    pub accepted: u64,
    /// Dropped: not exactly 16 bytes.
    pub bad_length: u64,
    /// Dropped: unknown param code.
    pub unknown_param: u64,
    /// Rejected: addressed to another robot.
    pub not_for_me: u64,
    /// Dropped: from a robot not in the table while it held `max_teammates` fresh ones.
    pub table_full: u64,
    /// Ignored: our own broadcast echoed back.
    pub own: u64,
    /// Dropped: the source id is not a robot id ([`ROBOT_IDS`]).
    pub bad_source: u64,
    /// Sent.
    pub sent: u64,
}

/// Team-communication settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CommParams {
    /// A teammate's data is used only while younger than this, ms (`COMM_TTL`).
    pub ttl_ms: u64,
    /// How long after a teammate's `passBall` `partnerPass` holds, ms.
    pub pass_window_ms: u64,
    /// Most teammates in the table (`commMaxTeammates`): a message from a new sender while
    /// it holds this many fresh ones is dropped (counted in [`CommStats::table_full`]), and
    /// its sender is not asked its role. Datagrams with a new source id each added a
    /// teammate, and drew an `ASK_ROLE` onto the team's address: a flood of them grew the
    /// table by 49,000 robots (and sent as many messages) in 8 s.
    pub max_teammates: usize,
}

impl Default for CommParams {
    fn default() -> Self {
        CommParams {
            ttl_ms: 10_000,
            pass_window_ms: 10_000,
            max_teammates: 64,
        }
    }
}

/// The sans-IO team link of one robot: decodes and filters datagrams, keeps the teammate
/// table, runs discovery, and queues outgoing messages.
#[derive(Debug, Clone)]
pub struct TeamComm {
    id: i32,
    role: Role,
    params: CommParams,
    members: BTreeMap<i32, TeamMember>,
    outbox: VecDeque<Message>,
    stats: CommStats,
}

/// What [`TeamComm::handle_datagram`] did with a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// Applied to the teammate table.
    Accepted(Message),
    /// Well formed but addressed to another robot.
    NotForMe(Message),
    /// From a robot not in the table, which is full ([`CommParams::max_teammates`]).
    TableFull(Message),
    /// Our own message echoed back.
    Own(Message),
    /// Dropped: its source id is not a robot id (outside [`ROBOT_IDS`]: 0, negative, 255,
    /// …), so it is no teammate's.
    BadSource(Message),
    /// Dropped (bad length or unknown param).
    Dropped(DecodeError),
}

impl TeamComm {
    /// The link of robot `id` playing `role`.
    pub fn new(id: i32, role: Role, params: CommParams) -> TeamComm {
        TeamComm {
            id,
            role,
            params,
            members: BTreeMap::new(),
            outbox: VecDeque::new(),
            stats: CommStats::default(),
        }
    }

    /// This robot's id.
    pub fn id(&self) -> i32 {
        self.id
    }

    /// This robot's role.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Changes role and announces it.
    pub fn set_role(&mut self, role: Role) {
        self.role = role;
        self.send(BROADCAST, Param::Role, role.code());
    }

    /// Queues the announcement: `START` then `ROLE`, both broadcast.
    pub fn announce(&mut self) {
        self.send(BROADCAST, Param::Start, self.role.code());
        self.send(BROADCAST, Param::Role, self.role.code());
    }

    /// Queues a message from this robot.
    pub fn send(&mut self, destination: i32, param: Param, value: i32) {
        self.outbox
            .push_back(Message::new(self.id, destination, param, value));
    }

    /// The next message to put on the air.
    pub fn poll_transmit(&mut self) -> Option<Message> {
        let m = self.outbox.pop_front();
        if m.is_some() {
            self.stats.sent += 1;
        }
        m
    }

    /// Handles a received datagram at `now_ms`.
    pub fn handle_datagram(&mut self, bytes: &[u8], now_ms: u64) -> Received {
        self.stats.received += 1;
        match Message::decode(bytes) {
            Ok(m) => self.handle_message(m, now_ms),
            Err(e) => {
                match e {
                    DecodeError::WrongLength(_) => self.stats.bad_length += 1,
                    DecodeError::UnknownParam(_) => self.stats.unknown_param += 1,
                }
                tracing::debug!(target: "futrob::comm", robot = self.id, error = %e, "MSG DROPPED");
                Received::Dropped(e)
            }
        }
    }

    /// Handles a decoded message at `now_ms` (the simulated radio delivers these).
    pub fn handle_message(&mut self, m: Message, now_ms: u64) -> Received {
        if !ROBOT_IDS.contains(&m.source) {
            self.stats.bad_source += 1;
            tracing::debug!(target: "futrob::comm", robot = self.id, msg = %m, "MSG DROPPED: the source is not a robot id (1-254)");
            return Received::BadSource(m);
        }
        if m.source == self.id {
            self.stats.own += 1;
            return Received::Own(m);
        }
        if m.destination != self.id && m.destination != BROADCAST {
            self.stats.not_for_me += 1;
            tracing::debug!(target: "futrob::comm", robot = self.id, msg = %m, "MSG REJECTED");
            return Received::NotForMe(m);
        }
        let is_new = !self.members.contains_key(&m.source);
        if is_new && m.param != Param::Leave && self.members.len() >= self.params.max_teammates {
            // Room only where a teammate has gone silent past the TTL.
            self.expire(now_ms);
            if self.members.len() >= self.params.max_teammates {
                self.stats.table_full += 1;
                tracing::debug!(target: "futrob::comm", robot = self.id, msg = %m, "MSG DROPPED: the teammate table is full");
                return Received::TableFull(m);
            }
        }
        self.stats.accepted += 1;
        tracing::debug!(target: "futrob::comm", robot = self.id, msgSrc = m.source, msgDest = m.destination, msgParam = m.param.name(), msgValue = m.value, "MSG RECEIVED");
        let member = self.members.entry(m.source).or_insert_with(|| TeamMember {
            id: m.source,
            ..TeamMember::default()
        });
        member.last_update = now_ms;
        let dist = |v: i32| (v >= 0).then_some(v);
        match m.param {
            Param::Start | Param::Role => member.role = Role::from_code(m.value),
            Param::BallInSight => member.ball_in_sight = m.value != 0,
            Param::BallDistance => member.ball_distance = dist(m.value),
            Param::BallIsMine => member.ball_is_mine = m.value != 0,
            Param::PartnerDistance => member.partner_distance = dist(m.value),
            Param::OpponentDistance => member.opponent_distance = dist(m.value),
            Param::MyGoalDistance => member.my_goal_distance = dist(m.value),
            Param::OppGoalDistance => member.opp_goal_distance = dist(m.value),
            Param::ActionTaken => {
                member.action_taken = ActionKind::from_code(m.value);
                if member.action_taken == Some(ActionKind::PassBall) {
                    member.last_team_pass = Some(now_ms);
                }
            }
            Param::Leave => {
                self.members.remove(&m.source);
                return Received::Accepted(m);
            }
            Param::AskRole => {
                let due = member
                    .role_answered
                    .is_none_or(|a| now_ms.saturating_sub(a) >= ANSWER_ROLE_RETRY_MS);
                if due {
                    member.role_answered = Some(now_ms);
                    let role = self.role.code();
                    self.send(m.source, Param::Role, role);
                }
            }
            Param::GkPosX | Param::GkPosY | Param::Exit => {}
        }
        // Discovery: a sender whose role we do not know (its announcement was lost) is asked
        // on its first message, and again on a later message if a second has passed.
        let ask = self.members.get_mut(&m.source).and_then(|t| {
            let due = t.role.is_none()
                && (is_new
                    || t.role_asked
                        .is_none_or(|a| now_ms.saturating_sub(a) >= ASK_ROLE_RETRY_MS));
            if due {
                t.role_asked = Some(now_ms);
            }
            due.then_some(t.id)
        });
        if let Some(id) = ask {
            self.send(id, Param::AskRole, 0);
        }
        Received::Accepted(m)
    }

    /// Drops teammates whose data is older than the TTL at `now_ms`.
    pub fn expire(&mut self, now_ms: u64) {
        let ttl = self.params.ttl_ms;
        self.members
            .retain(|_, t| now_ms.saturating_sub(t.last_update) <= ttl);
    }

    /// Teammates whose data is fresh at `now_ms`.
    pub fn fresh(&self, now_ms: u64) -> impl Iterator<Item = &TeamMember> {
        let ttl = self.params.ttl_ms;
        self.members
            .values()
            .filter(move |t| now_ms.saturating_sub(t.last_update) <= ttl)
    }

    /// The fresh teammates at `now_ms` as `(id, role)`, by id: what a player believes of its
    /// team at that moment (a table that flaps shows as this list changing).
    pub fn fresh_roles(&self, now_ms: u64) -> Vec<(i32, Option<Role>)> {
        let mut v: Vec<(i32, Option<Role>)> = self.fresh(now_ms).map(|t| (t.id, t.role)).collect();
        v.sort();
        v
    }

    /// Every teammate in the table (fresh or not yet expired).
    pub fn members(&self) -> impl Iterator<Item = &TeamMember> {
        self.members.values()
    }

    /// One teammate.
    pub fn member(&self, id: i32) -> Option<&TeamMember> {
        self.members.get(&id)
    }

    /// Some fresh teammate has the ball.
    pub fn teammate_has_ball(&self, now_ms: u64) -> bool {
        self.fresh(now_ms).any(|t| t.ball_is_mine)
    }

    /// Time of the most recent pass by a fresh teammate inside the pass window.
    pub fn recent_pass(&self, now_ms: u64) -> Option<u64> {
        let w = self.params.pass_window_ms;
        self.fresh(now_ms)
            .filter_map(|t| t.last_team_pass)
            .filter(|p| now_ms.saturating_sub(*p) <= w)
            .max()
    }

    /// The id of a fresh teammate announced as goalkeeper.
    pub fn keeper_id(&self, now_ms: u64) -> Option<i32> {
        self.fresh(now_ms)
            .find(|t| t.role == Some(Role::Goalkeeper))
            .map(|t| t.id)
    }

    /// Receiver counters.
    pub fn stats(&self) -> CommStats {
        self.stats
    }
}

/// A broadcast radio for in-process runs: every message sent reaches every other robot
/// (each copy lost independently with probability `loss`) `latency_ms` later (plus up to
/// `jitter_ms`). Deterministic for a given seed and sequence of calls.
#[derive(Debug, Clone)]
pub struct SimRadio {
    loss: f64,
    latency_ms: u64,
    jitter_ms: u64,
    rng: SplitMix64,
    robots: Vec<i32>,
    in_flight: Vec<(u64, u64, i32, Message)>,
    seq: u64,
    lost: u64,
    delivered: u64,
}

impl SimRadio {
    /// A radio among `robots` (ids).
    pub fn new(robots: &[i32], loss: f64, latency_ms: u64, jitter_ms: u64, seed: u64) -> SimRadio {
        SimRadio {
            loss: loss.clamp(0.0, 1.0),
            latency_ms,
            jitter_ms,
            rng: SplitMix64::new(seed),
            robots: robots.to_vec(),
            in_flight: Vec::new(),
            seq: 0,
            lost: 0,
            delivered: 0,
        }
    }

    /// Puts `m` on the air at `now_ms`: one copy per other robot (the sender hears its own
    /// broadcast, as on a LAN).
    pub fn send(&mut self, m: Message, now_ms: u64) {
        for i in 0..self.robots.len() {
            let to = self.robots[i];
            if self.loss > 0.0 && self.rng.next_f64() < self.loss {
                self.lost += 1;
                continue;
            }
            let jitter = if self.jitter_ms > 0 {
                self.rng.next_u64() % (self.jitter_ms + 1)
            } else {
                0
            };
            self.seq += 1;
            self.in_flight
                .push((now_ms + self.latency_ms + jitter, self.seq, to, m));
        }
    }

    /// Messages due at `now_ms`, as (receiving robot id, message), in send order.
    pub fn deliver(&mut self, now_ms: u64) -> Vec<(i32, Message)> {
        let mut due: Vec<(u64, u64, i32, Message)> = Vec::new();
        self.in_flight.retain(|e| {
            if e.0 <= now_ms {
                due.push(*e);
                false
            } else {
                true
            }
        });
        due.sort_by_key(|e| (e.0, e.1));
        self.delivered += due.len() as u64;
        due.into_iter().map(|e| (e.2, e.3)).collect()
    }

    /// Copies lost so far.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Copies delivered so far.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }
}
