//! The FutRob vocabulary: objects, the 36 predicates, the actions with their parameters and
//! numeric codes, and simrob's two additions for team play (the predicate `partnerNearerBall`
//! and the action `supportBall`, numbered after FutRob's). Canonical names are camelCase; lookups ignore letter case (see
//! [`Predicate::lookup`]).

use std::fmt;

/// What the camera recognises (the FutRob vision module's object list).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ObjectKind {
    /// The ball.
    Ball,
    /// A robot of our team colour.
    Partner,
    /// A robot of the other team colour.
    Opponent,
    /// The landmark pole on the right side of the halfway line.
    RightMark,
    /// The landmark pole on the left side of the halfway line.
    LeftMark,
    /// The centre of our own goal.
    MyGoal,
    /// The centre of the opponent goal.
    OppGoal,
    /// A post of our own goal.
    MyPost,
    /// A post of the opponent goal.
    OppPost,
}

impl ObjectKind {
    /// Every object, in predicate order.
    pub const ALL: [ObjectKind; 9] = [
        ObjectKind::Ball,
        ObjectKind::Partner,
        ObjectKind::Opponent,
        ObjectKind::RightMark,
        ObjectKind::LeftMark,
        ObjectKind::MyGoal,
        ObjectKind::OppGoal,
        ObjectKind::MyPost,
        ObjectKind::OppPost,
    ];

    /// Index in [`ObjectKind::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stem used in predicate names (`ball`, `partner`, `rightMark`, …).
    pub fn stem(self) -> &'static str {
        match self {
            ObjectKind::Ball => "ball",
            ObjectKind::Partner => "partner",
            ObjectKind::Opponent => "opponent",
            ObjectKind::RightMark => "rightMark",
            ObjectKind::LeftMark => "leftMark",
            ObjectKind::MyGoal => "myGoal",
            ObjectKind::OppGoal => "oppGoal",
            ObjectKind::MyPost => "myPost",
            ObjectKind::OppPost => "oppPost",
        }
    }

    /// The token of the vision stub file and of the camera (`ball`, `opp_goal`,
    /// `my_lateral_post`, `right_landmark`, …).
    pub fn token(self) -> &'static str {
        match self {
            ObjectKind::Ball => "ball",
            ObjectKind::Partner => "partner",
            ObjectKind::Opponent => "opponent",
            ObjectKind::RightMark => "right_landmark",
            ObjectKind::LeftMark => "left_landmark",
            ObjectKind::MyGoal => "my_goal",
            ObjectKind::OppGoal => "opp_goal",
            ObjectKind::MyPost => "my_lateral_post",
            ObjectKind::OppPost => "opp_lateral_post",
        }
    }

    /// Parses a camera / stub token, ignoring letter case.
    pub fn from_token(s: &str) -> Option<ObjectKind> {
        ObjectKind::ALL
            .into_iter()
            .find(|k| k.token().eq_ignore_ascii_case(s.trim()))
    }
}

/// The three per-object predicate families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// `…InSight`: seen now (with hysteresis).
    InSight,
    /// `…LastPosValid`: the last seen position still holds.
    LastPosValid,
    /// `…Searched`: already searched for from the current position.
    Searched,
}

/// One of the 38 predicates — FutRob's 36 and simrob's `partnerNearerBall` and
/// `partnerBetterPlaced` — stored as its bit index (0..38) in a [`crate::PredicateSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Predicate(u8);

impl Predicate {
    /// Number of predicates.
    pub const COUNT: usize = 38;
    /// Number of FutRob's own predicates (the first ones, in bit order).
    pub const FUTROB_COUNT: usize = 36;
    /// `ballIsMine`: the ball is at the robot's feet, close enough to kick.
    pub const BALL_IS_MINE: Predicate = Predicate(27);
    /// `ballIsOurs`: some team member (this robot included) has the ball.
    pub const BALL_IS_OURS: Predicate = Predicate(28);
    /// `ballIsGettingCloser`: the ball trajectory approaches the robot.
    pub const BALL_IS_GETTING_CLOSER: Predicate = Predicate(29);
    /// `partnerInRange`: a teammate is within kick range.
    pub const PARTNER_IN_RANGE: Predicate = Predicate(30);
    /// `opponentInRange`: an opponent is within kick range.
    pub const OPPONENT_IN_RANGE: Predicate = Predicate(31);
    /// `goalInRange`: a seen goal is within kick range.
    pub const GOAL_IN_RANGE: Predicate = Predicate(32);
    /// `partnerPass`: a teammate passed recently.
    pub const PARTNER_PASS: Predicate = Predicate(33);
    /// `gkNeedsRelocate`: the keeper is off the goal centre beyond the thresholds.
    pub const GK_NEEDS_RELOCATE: Predicate = Predicate(34);
    /// `gkNeedsStartSaving`: the keeper must start moving now to save.
    pub const GK_NEEDS_START_SAVING: Predicate = Predicate(35);
    /// `partnerNearerBall` (simrob's, for team play): a field-player teammate has the ball,
    /// or reports it nearer than this robot sees it (by more than `supportMargin`, or by
    /// less with a lower id). The nearest field player goes for the ball; the other supports.
    pub const PARTNER_NEARER_BALL: Predicate = Predicate(36);
    /// `partnerBetterPlaced` (simrob's, for team play): a teammate this robot sees within pass
    /// range stands at least `passGain` nearer the opponent goal than it, and no teammate
    /// passed to it within the pass window. What a pass in a match waits for.
    pub const PARTNER_BETTER_PLACED: Predicate = Predicate(37);

    /// The predicate of `family` for `object` (bits 0..27: family-major, object-minor).
    pub const fn of(object: ObjectKind, family: Family) -> Predicate {
        let f = match family {
            Family::InSight => 0,
            Family::LastPosValid => 1,
            Family::Searched => 2,
        };
        Predicate(f * 9 + object as u8)
    }

    /// Bit index in a [`crate::PredicateSet`].
    pub fn bit(self) -> u32 {
        self.0 as u32
    }

    /// The predicate with bit index `i`, if `i < 38`.
    pub fn from_bit(i: u32) -> Option<Predicate> {
        (i < Self::COUNT as u32).then_some(Predicate(i as u8))
    }

    /// Every predicate in bit order.
    pub fn all() -> impl Iterator<Item = Predicate> {
        (0..Self::COUNT as u8).map(Predicate)
    }

    /// The canonical (camelCase) name.
    pub fn name(self) -> &'static str {
        const NAMES: [&str; Predicate::COUNT] = [
            "ballInSight",
            "partnerInSight",
            "opponentInSight",
            "rightMarkInSight",
            "leftMarkInSight",
            "myGoalInSight",
            "oppGoalInSight",
            "myPostInSight",
            "oppPostInSight",
            "ballLastPosValid",
            "partnerLastPosValid",
            "opponentLastPosValid",
            "rightMarkLastPosValid",
            "leftMarkLastPosValid",
            "myGoalLastPosValid",
            "oppGoalLastPosValid",
            "myPostLastPosValid",
            "oppPostLastPosValid",
            "ballSearched",
            "partnerSearched",
            "opponentSearched",
            "rightMarkSearched",
            "leftMarkSearched",
            "myGoalSearched",
            "oppGoalSearched",
            "myPostSearched",
            "oppPostSearched",
            "ballIsMine",
            "ballIsOurs",
            "ballIsGettingCloser",
            "partnerInRange",
            "opponentInRange",
            "goalInRange",
            "partnerPass",
            "gkNeedsRelocate",
            "gkNeedsStartSaving",
            "partnerNearerBall",
            "partnerBetterPlaced",
        ];
        NAMES[self.0 as usize]
    }

    /// Finds a predicate by name, ignoring letter case. The second value is `true` when the
    /// case differs from the canonical name (the loader warns about it).
    pub fn lookup(name: &str) -> Option<(Predicate, bool)> {
        Predicate::all()
            .find(|p| p.name().eq_ignore_ascii_case(name))
            .map(|p| (p, p.name() != name))
    }

    /// The object and family of a per-object predicate.
    pub fn object_family(self) -> Option<(ObjectKind, Family)> {
        if self.0 >= 27 {
            return None;
        }
        let family = match self.0 / 9 {
            0 => Family::InSight,
            1 => Family::LastPosValid,
            _ => Family::Searched,
        };
        Some((ObjectKind::ALL[(self.0 % 9) as usize], family))
    }
}

impl fmt::Display for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An action name: 14 basic actions the body executes and 17 composite actions the brain
/// runs as state machines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ActionKind {
    /// `none`: hold the current pose.
    None,
    /// `initialPosition`: the static equilibrium pose.
    InitialPosition,
    /// `walk distance=cm`: forward, never farther than asked.
    Walk,
    /// `walkRight distance=cm`: lateral steps to the right.
    WalkRight,
    /// `walkLeft distance=cm`: lateral steps to the left.
    WalkLeft,
    /// `turn angle=deg`: in place, positive to the right, [−360, 360].
    Turn,
    /// `turnHeadVertically angle=deg`: head tilt target, [−60, 0].
    TurnHeadVertically,
    /// `turnHeadHorizontally angle=deg`: head pan target, [−60, 60], positive right.
    TurnHeadHorizontally,
    /// `kickRight`.
    KickRight,
    /// `kickLeft`.
    KickLeft,
    /// `frontGetUp`: stand up after falling face down.
    FrontGetUp,
    /// `backGetUp`: stand up after falling on the back.
    BackGetUp,
    /// `saveRight`: keeper dive to the right.
    SaveRight,
    /// `saveLeft`: keeper dive to the left.
    SaveLeft,
    /// `findBall`.
    FindBall,
    /// `findPartner`.
    FindPartner,
    /// `findOpponent`.
    FindOpponent,
    /// `findRightLM`.
    FindRightLm,
    /// `findLeftLM`.
    FindLeftLm,
    /// `findMyGoal`.
    FindMyGoal,
    /// `findOppGoal`.
    FindOppGoal,
    /// `findMyLP`.
    FindMyLp,
    /// `findOppLP`.
    FindOppLp,
    /// `lookAtBall`.
    LookAtBall,
    /// `followBall`.
    FollowBall,
    /// `passBall`.
    PassBall,
    /// `kickBall`.
    KickBall,
    /// `clearBall`.
    ClearBall,
    /// `save`.
    Save,
    /// `relocate`.
    Relocate,
    /// `supportBall` (simrob's, for team play): stay `supportDistance` from the ball, facing
    /// it, ready to receive a pass, without crowding the teammate that goes for it.
    SupportBall,
}

/// A parameter an action accepts: its name, unit, range and default. The one table of
/// FutRob's action parameters: the rules loader validates rule files with it and the
/// simulated body (`simrob-soccer`) validates the requests it executes with it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamSpec {
    /// Attribute name in the rules file and in a `Humanoid_Action` request.
    pub name: &'static str,
    /// Unit of the value (`cm`, `degrees`).
    pub unit: &'static str,
    /// Inclusive lower bound.
    pub min: f64,
    /// Inclusive upper bound.
    pub max: f64,
    /// Value used when the attribute is absent (`None` = one motion quantum of the body:
    /// one step, one lateral step).
    pub default: Option<f64>,
}

/// `walk`, `walkRight`, `walkLeft`: an upper bound on the distance walked (FutRob §5.1.2,
/// notes c.1), which gives no largest value; simrob's is 1200 cm, more than the 9 × 6 m
/// field's diagonal (1082 cm).
const DISTANCE: ParamSpec = ParamSpec {
    name: "distance",
    unit: "cm",
    min: 0.0,
    max: 1200.0,
    default: None,
};

/// `turn`: degrees, positive to the right (FutRob §5.1.2, notes c.1). FutRob states no range
/// (c.1 gives only the sign; out-of-range values are left open). simrob accepts one whole turn
/// either way, [−360, 360]: FutRob's ball search may "even turn in place to see in every
/// direction" (§5.1.2, notes c.3), a whole turn, and a turn never needs more. Default one
/// elementary turn to the right (20°, §8.4, notes c.2).
const TURN: ParamSpec = ParamSpec {
    name: "angle",
    unit: "degrees",
    min: -360.0,
    max: 360.0,
    default: Some(20.0),
};

/// `turnHeadVertically`: the target tilt, [−60, 0] degrees, 0 level, negative down (FutRob
/// §5.1.2, notes c.1). Default level.
const HEAD_TILT: ParamSpec = ParamSpec {
    name: "angle",
    unit: "degrees",
    min: -60.0,
    max: 0.0,
    default: Some(0.0),
};

/// `turnHeadHorizontally`: the target pan, [−60, 60] degrees, positive right (FutRob §5.1.2,
/// notes c.1). Default straight ahead.
const HEAD_PAN: ParamSpec = ParamSpec {
    name: "angle",
    unit: "degrees",
    min: -60.0,
    max: 60.0,
    default: Some(0.0),
};

impl ActionKind {
    /// Every action, in code order.
    pub const ALL: [ActionKind; 31] = [
        ActionKind::None,
        ActionKind::InitialPosition,
        ActionKind::Walk,
        ActionKind::WalkRight,
        ActionKind::WalkLeft,
        ActionKind::Turn,
        ActionKind::TurnHeadVertically,
        ActionKind::TurnHeadHorizontally,
        ActionKind::KickRight,
        ActionKind::KickLeft,
        ActionKind::FrontGetUp,
        ActionKind::BackGetUp,
        ActionKind::SaveRight,
        ActionKind::SaveLeft,
        ActionKind::FindBall,
        ActionKind::FindPartner,
        ActionKind::FindOpponent,
        ActionKind::FindRightLm,
        ActionKind::FindLeftLm,
        ActionKind::FindMyGoal,
        ActionKind::FindOppGoal,
        ActionKind::FindMyLp,
        ActionKind::FindOppLp,
        ActionKind::LookAtBall,
        ActionKind::FollowBall,
        ActionKind::PassBall,
        ActionKind::KickBall,
        ActionKind::ClearBall,
        ActionKind::Save,
        ActionKind::Relocate,
        ActionKind::SupportBall,
    ];

    /// The canonical (camelCase) name.
    pub fn name(self) -> &'static str {
        match self {
            ActionKind::None => "none",
            ActionKind::InitialPosition => "initialPosition",
            ActionKind::Walk => "walk",
            ActionKind::WalkRight => "walkRight",
            ActionKind::WalkLeft => "walkLeft",
            ActionKind::Turn => "turn",
            ActionKind::TurnHeadVertically => "turnHeadVertically",
            ActionKind::TurnHeadHorizontally => "turnHeadHorizontally",
            ActionKind::KickRight => "kickRight",
            ActionKind::KickLeft => "kickLeft",
            ActionKind::FrontGetUp => "frontGetUp",
            ActionKind::BackGetUp => "backGetUp",
            ActionKind::SaveRight => "saveRight",
            ActionKind::SaveLeft => "saveLeft",
            ActionKind::FindBall => "findBall",
            ActionKind::FindPartner => "findPartner",
            ActionKind::FindOpponent => "findOpponent",
            ActionKind::FindRightLm => "findRightLM",
            ActionKind::FindLeftLm => "findLeftLM",
            ActionKind::FindMyGoal => "findMyGoal",
            ActionKind::FindOppGoal => "findOppGoal",
            ActionKind::FindMyLp => "findMyLP",
            ActionKind::FindOppLp => "findOppLP",
            ActionKind::LookAtBall => "lookAtBall",
            ActionKind::FollowBall => "followBall",
            ActionKind::PassBall => "passBall",
            ActionKind::KickBall => "kickBall",
            ActionKind::ClearBall => "clearBall",
            ActionKind::Save => "save",
            ActionKind::Relocate => "relocate",
            ActionKind::SupportBall => "supportBall",
        }
    }

    /// The numeric action code sent as the value of `COMM_PARAM_ACTION_TAKEN`.
    ///
    /// Basic actions are 1–14 in the manual's order; `findBall` 15, `lookAtBall` 16,
    /// `followBall` 17, `passBall` 18, `kickBall` **19** (the FutRob code
    /// `ACTION_KICK_BALL`), `clearBall` 20, `save` 21, `relocate` 22, then the other searches
    /// 23–30 (`findPartner` … `findOppLP`).
    pub fn code(self) -> i32 {
        match self {
            ActionKind::None => 1,
            ActionKind::InitialPosition => 2,
            ActionKind::Walk => 3,
            ActionKind::WalkRight => 4,
            ActionKind::WalkLeft => 5,
            ActionKind::Turn => 6,
            ActionKind::TurnHeadVertically => 7,
            ActionKind::TurnHeadHorizontally => 8,
            ActionKind::KickRight => 9,
            ActionKind::KickLeft => 10,
            ActionKind::FrontGetUp => 11,
            ActionKind::BackGetUp => 12,
            ActionKind::SaveRight => 13,
            ActionKind::SaveLeft => 14,
            ActionKind::FindBall => 15,
            ActionKind::LookAtBall => 16,
            ActionKind::FollowBall => 17,
            ActionKind::PassBall => 18,
            ActionKind::KickBall => 19,
            ActionKind::ClearBall => 20,
            ActionKind::Save => 21,
            ActionKind::Relocate => 22,
            ActionKind::FindPartner => 23,
            ActionKind::FindOpponent => 24,
            ActionKind::FindRightLm => 25,
            ActionKind::FindLeftLm => 26,
            ActionKind::FindMyGoal => 27,
            ActionKind::FindOppGoal => 28,
            ActionKind::FindMyLp => 29,
            ActionKind::FindOppLp => 30,
            ActionKind::SupportBall => 31,
        }
    }

    /// The action with this code.
    pub fn from_code(code: i32) -> Option<ActionKind> {
        ActionKind::ALL.into_iter().find(|a| a.code() == code)
    }

    /// Finds an action by name ignoring letter case; the flag says the case differed.
    pub fn lookup(name: &str) -> Option<(ActionKind, bool)> {
        ActionKind::ALL
            .into_iter()
            .find(|a| a.name().eq_ignore_ascii_case(name))
            .map(|a| (a, a.name() != name))
    }

    /// `true` for the 14 actions the body executes itself.
    pub fn is_basic(self) -> bool {
        (self as usize) <= ActionKind::SaveLeft as usize
    }

    /// The parameters this action accepts (at most one for every FutRob action).
    pub fn params(self) -> &'static [ParamSpec] {
        match self {
            ActionKind::Walk | ActionKind::WalkRight | ActionKind::WalkLeft => {
                std::slice::from_ref(&DISTANCE)
            }
            ActionKind::Turn => std::slice::from_ref(&TURN),
            ActionKind::TurnHeadVertically => std::slice::from_ref(&HEAD_TILT),
            ActionKind::TurnHeadHorizontally => std::slice::from_ref(&HEAD_PAN),
            _ => &[],
        }
    }

    /// The object a `find…` action searches for.
    pub fn search_target(self) -> Option<ObjectKind> {
        Some(match self {
            ActionKind::FindBall => ObjectKind::Ball,
            ActionKind::FindPartner => ObjectKind::Partner,
            ActionKind::FindOpponent => ObjectKind::Opponent,
            ActionKind::FindRightLm => ObjectKind::RightMark,
            ActionKind::FindLeftLm => ObjectKind::LeftMark,
            ActionKind::FindMyGoal => ObjectKind::MyGoal,
            ActionKind::FindOppGoal => ObjectKind::OppGoal,
            ActionKind::FindMyLp => ObjectKind::MyPost,
            ActionKind::FindOppLp => ObjectKind::OppPost,
            _ => return None,
        })
    }
}

impl fmt::Display for ActionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An action with its parameter value (at most one: `distance` or `angle`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Action {
    /// Which action.
    pub kind: ActionKind,
    /// The `distance`/`angle` value, if given.
    pub param: Option<f64>,
}

impl Action {
    /// An action without parameter.
    pub const fn new(kind: ActionKind) -> Action {
        Action { kind, param: None }
    }

    /// An action with its parameter.
    pub const fn with(kind: ActionKind, value: f64) -> Action {
        Action {
            kind,
            param: Some(value),
        }
    }

    /// Same action: the same name and the same parameter (the action handler does not
    /// restart an action that is already running).
    pub fn same_as(&self, other: &Action) -> bool {
        self.kind == other.kind && self.param == other.param
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.param, self.kind.params().first()) {
            (Some(v), Some(spec)) => write!(f, "{} {}={}", self.kind.name(), spec.name, v),
            _ => f.write_str(self.kind.name()),
        }
    }
}
