//! The humanoid's basic actions as the body executes them, and their validation against
//! FutRob's vocabulary: the names, parameters, units, ranges and defaults are
//! `simrob_futrob::names` ([`ActionKind`], [`ParamSpec`]), the one table the brain's rules
//! loader uses too.
//!
//! | action | parameter | unit, range, default |
//! |---|---|---|
//! | `none` | | hold still (stops the running action at its next equilibrium point) |
//! | `initialPosition` | | back to the rest pose |
//! | `walk` | `distance`, `gait` | cm in [0, 1200], default one step; `gait` = `long` (12 cm steps, default) or `normal` (8 cm), then 2 cm mini steps. Never farther than asked |
//! | `walkRight`, `walkLeft` | `distance` | cm in [0, 1200] in 4 cm lateral steps, default one step |
//! | `turn` | `angle` | degrees in [−360, 360], **positive turns right**, in 20° quanta (never more than asked; under 20°, in 5° small turns), default one quantum to the right |
//! | `turnHeadVertically` | `angle` | target tilt, degrees in [−60, 0] (0 = level, negative = down), default 0 |
//! | `turnHeadHorizontally` | `angle` | target pan, degrees in [−60, 60] (positive = right), default 0 |
//! | `kickRight`, `kickLeft` | | kick with that foot |
//! | `saveRight`, `saveLeft` | | goalkeeper dive to that side, hold, get back up |
//! | `frontGetUp`, `backGetUp` | | stand up after falling forward / backward |
//!
//! `gait` is simrob's addition for the body (the brain's rules do not use it). Names are
//! matched without regard to letter case (FutRob's own files mix `findball` and `findBall`);
//! they are reported in the spelling above. A parameter the action does not take, a value that
//! is not a finite number, or a value out of range is refused.

use std::fmt;

pub use simrob_futrob::names::{ActionKind, ParamSpec};

/// Which foot kicks, which side a keeper dives to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    /// The right foot kicks; the keeper dives to its right.
    Right,
    /// The left foot kicks; the keeper dives to its left.
    Left,
}

/// Forward gait of `walk`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Gait {
    /// 12 cm steps then 2 cm mini steps (FutRob's walk decomposition).
    #[default]
    Long,
    /// 8 cm steps then 2 cm mini steps (FutRob's approach to the ball).
    Normal,
}

/// One basic action with its parameters (centimetres and degrees, FutRob's units).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `none`: hold still; a running action stops at its next equilibrium point.
    None,
    /// `initialPosition`: back to the rest pose.
    InitialPosition,
    /// `walk`: forward, never farther than asked.
    Walk {
        /// Distance to walk, cm in [0, 1200]; default one step of the gait.
        distance_cm: f64,
        /// Step length: 12 cm (`long`, default) or 8 cm (`normal`), then 2 cm mini steps.
        gait: Gait,
    },
    /// `walkRight`: sideways to the right in 4 cm lateral steps.
    WalkRight {
        /// Distance to walk, cm in [0, 1200]; default one 4 cm step.
        distance_cm: f64,
    },
    /// `walkLeft`: sideways to the left in 4 cm lateral steps.
    WalkLeft {
        /// Distance to walk, cm in [0, 1200]; default one 4 cm step.
        distance_cm: f64,
    },
    /// `turn`: on the spot in 20° quanta (5° small turns under 20°), never more than asked.
    Turn {
        /// Angle to turn, degrees in [−360, 360], **positive turns right**; default 20.
        angle_deg: f64,
    },
    /// `turnHeadVertically`: tilt the head to a target angle.
    TurnHeadVertically {
        /// Target tilt, degrees in [−60, 0]: 0 is level, negative looks down; default 0.
        angle_deg: f64,
    },
    /// `turnHeadHorizontally`: pan the head to a target angle.
    TurnHeadHorizontally {
        /// Target pan, degrees in [−60, 60], positive looks right; default 0.
        angle_deg: f64,
    },
    /// `kickRight` / `kickLeft`: kick with that foot.
    Kick(Side),
    /// `saveRight` / `saveLeft`: goalkeeper dive to that side, hold, get back up.
    Save(Side),
    /// `frontGetUp`: stand up after falling forward (lying face down).
    FrontGetUp,
    /// `backGetUp`: stand up after falling backward (lying face up).
    BackGetUp,
}

/// Every basic action's name, in FutRob's spelling and code order.
pub fn action_names() -> impl Iterator<Item = &'static str> {
    ActionKind::ALL
        .into_iter()
        .filter(|k| k.is_basic())
        .map(ActionKind::name)
}

/// Every basic action with its parameters, one line each, made from the vocabulary's table
/// (names, units, ranges, defaults) and the body's motion table (the default step of
/// `walk`, `walkRight` and `walkLeft`, the quanta): what `simrob send action --help` prints.
pub fn actions_help() -> String {
    use simrob_futrob::MotionTable;
    let t = MotionTable::default();
    let num = |v: f64| simrob_math::Shown::of(&v).to_string();
    let mut out = String::from(
        "Actions and their parameters (names in any letter case; ranges include their ends; a parameter left out takes its default):\n",
    );
    for kind in ActionKind::ALL.into_iter().filter(|k| k.is_basic()) {
        let what = match kind {
            ActionKind::None => "hold still: a running action stops at its next equilibrium point".to_string(),
            ActionKind::InitialPosition => "back to the rest pose".to_string(),
            ActionKind::Walk => format!(
                "forward: as many {} cm steps of {} s as fit ({} cm steps of {} s with gait=normal), then as many {} cm mini steps of {} s as fit in the rest; what is left under a mini step is not walked",
                num(t.step_cm),
                num(t.step_ms as f64 / 1000.0),
                num(t.normal_step_cm),
                num(t.normal_step_ms as f64 / 1000.0),
                num(t.mini_step_cm),
                num(t.mini_step_ms as f64 / 1000.0)
            ),
            ActionKind::WalkRight | ActionKind::WalkLeft => format!(
                "sideways: as many {} cm steps of {} s as fit; the rest is not walked",
                num(t.lateral_step_cm),
                num(t.lateral_step_ms as f64 / 1000.0)
            ),
            ActionKind::Turn => format!(
                "on the spot, positive to the right: as many {}° turns of {} s as fit, the rest not turned; an angle under {}° is made of as many {}° turns of {} s as fit",
                num(t.turn_step_deg),
                num(t.turn_step_ms as f64 / 1000.0),
                num(t.turn_step_deg),
                num(t.small_turn_deg),
                num(t.small_turn_ms as f64 / 1000.0)
            ),
            ActionKind::TurnHeadVertically => "head tilt to angle: 0 level, negative down".to_string(),
            ActionKind::TurnHeadHorizontally => "head pan to angle: positive right".to_string(),
            ActionKind::KickRight | ActionKind::KickLeft => format!(
                "kick with that foot ({} s; the ball rolls about {} cm)",
                num(t.kick_ms as f64 / 1000.0),
                num(t.kick_distance_cm)
            ),
            ActionKind::SaveRight | ActionKind::SaveLeft => format!(
                "keeper dive to that side, hold, get back up ({} s)",
                num((t.save_ms + t.save_hold_ms + t.save_recover_ms) as f64 / 1000.0)
            ),
            ActionKind::FrontGetUp => format!(
                "stand up after falling forward (posture fallenFront; {} s)",
                num(t.get_up_ms as f64 / 1000.0)
            ),
            _ => format!(
                "stand up after falling backward (posture fallenBack; {} s)",
                num(t.get_up_ms as f64 / 1000.0)
            ),
        };
        let mut params = Vec::new();
        for p in kind.params() {
            let default = match (p.default, kind) {
                (Some(d), _) => num(d),
                (None, ActionKind::Walk) => format!("one step ({} cm)", num(t.step_cm)),
                (None, _) => format!("one step ({} cm)", num(t.lateral_step_cm)),
            };
            params.push(format!(
                "{}={}..{} {}, default {}",
                p.name,
                num(p.min),
                num(p.max),
                p.unit,
                default
            ));
        }
        if kind == ActionKind::Walk {
            params.push("gait=long|normal, default long".to_string());
        }
        let params = if params.is_empty() {
            "no parameters".to_string()
        } else {
            params.join("; ")
        };
        out.push_str(&format!("  {}: {params}\n      {what}\n", kind.name()));
    }
    out
}

/// Why an action request was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionError {
    /// The name is not one of the basic actions (the name as given).
    #[error("unknown action \"{0}\" (actions: {names})", names = action_names().collect::<Vec<_>>().join(", "))]
    UnknownAction(String),
    /// A parameter the action does not take.
    #[error("action {action} takes no parameter \"{param}\"{takes}")]
    UnknownParameter {
        /// The action, in FutRob's spelling.
        action: &'static str,
        /// The parameter name as given.
        param: String,
        /// The parameters the action does take, as a ready-made message tail.
        takes: String,
    },
    /// The same parameter appears more than once (letter case ignored).
    #[error("action {action}: parameter {param} is given twice")]
    DuplicateParameter {
        /// The action, in FutRob's spelling.
        action: &'static str,
        /// The repeated parameter name, as given the second time.
        param: String,
    },
    /// A numeric parameter's value does not parse as a finite number.
    #[error("action {action}: {param} must be a finite number, got \"{value}\"")]
    NotANumber {
        /// The action, in FutRob's spelling.
        action: &'static str,
        /// The parameter, in the vocabulary's spelling.
        param: &'static str,
        /// The value as given.
        value: String,
    },
    /// A numeric parameter lies outside the vocabulary's range for it.
    #[error(
        "action {action}: {param} = {} is out of range [{min}, {max}] {unit}",
        simrob_math::Shown::of(.value)
    )]
    OutOfRange {
        /// The action, in FutRob's spelling.
        action: &'static str,
        /// The parameter, in the vocabulary's spelling.
        param: &'static str,
        /// The value given, in `unit`.
        value: f64,
        /// Smallest value allowed, in `unit`.
        min: f64,
        /// Largest value allowed, in `unit`.
        max: f64,
        /// The parameter's unit as the vocabulary names it (`cm`, `degrees`).
        unit: &'static str,
    },
    /// `walk`'s `gait` is neither `long` nor `normal` (the value as given).
    #[error("action walk: gait must be \"long\" or \"normal\", got \"{0}\"")]
    BadGait(String),
}

fn lookup<'a>(params: &'a [(String, String)], p: &str) -> Option<&'a str> {
    params
        .iter()
        .find(|(k, _)| k.trim().eq_ignore_ascii_case(p))
        .map(|(_, v)| v.as_str())
}

fn number(action: &'static str, param: &'static str, v: &str) -> Result<f64, ActionError> {
    match v.trim().parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(ActionError::NotANumber {
            action,
            param,
            value: v.to_string(),
        }),
    }
}

fn ranged(
    action: &'static str,
    param: &'static str,
    value: f64,
    (min, max): (f64, f64),
    unit: &'static str,
) -> Result<f64, ActionError> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(ActionError::OutOfRange {
            action,
            param,
            value,
            min,
            max,
            unit,
        })
    }
}

impl Action {
    /// Parses an action from its name and `(parameter, value)` pairs, as FutRob's rule files
    /// and simrob's `Humanoid_Action` request write them.
    pub fn parse(name: &str, params: &[(String, String)]) -> Result<Action, ActionError> {
        let kind = ActionKind::lookup(name.trim())
            .map(|(k, _)| k)
            .filter(|k| k.is_basic())
            .ok_or_else(|| ActionError::UnknownAction(name.to_string()))?;
        let canonical = kind.name();
        let spec = kind.params().first();
        let mut allowed: Vec<&'static str> = spec.iter().map(|p| p.name).collect();
        if kind == ActionKind::Walk {
            allowed.push("gait");
        }
        let mut seen: Vec<&'static str> = Vec::new();
        let get = |p: &'static str| -> Option<&str> { lookup(params, p) };
        for (k, _) in params {
            let Some(&p) = allowed.iter().find(|a| a.eq_ignore_ascii_case(k.trim())) else {
                let takes = if allowed.is_empty() {
                    " (it takes none)".to_string()
                } else {
                    format!(" (it takes: {})", allowed.join(", "))
                };
                return Err(ActionError::UnknownParameter {
                    action: canonical,
                    param: k.clone(),
                    takes,
                });
            };
            if seen.contains(&p) {
                return Err(ActionError::DuplicateParameter {
                    action: canonical,
                    param: k.clone(),
                });
            }
            seen.push(p);
        }
        // The action's one numeric parameter, validated by the vocabulary's table; absent, its
        // default (`quantum` when the table leaves it to the body: one step).
        let value = |quantum: f64| -> Result<f64, ActionError> {
            let Some(spec) = spec else {
                return Ok(quantum);
            };
            match lookup(params, spec.name) {
                Some(v) => ranged(
                    canonical,
                    spec.name,
                    number(canonical, spec.name, v)?,
                    (spec.min, spec.max),
                    spec.unit,
                ),
                None => Ok(spec.default.unwrap_or(quantum)),
            }
        };
        Ok(match kind {
            ActionKind::None => Action::None,
            ActionKind::InitialPosition => Action::InitialPosition,
            ActionKind::Walk => {
                let gait = match get("gait") {
                    None => Gait::Long,
                    Some(g) if g.trim().eq_ignore_ascii_case("long") => Gait::Long,
                    Some(g) if g.trim().eq_ignore_ascii_case("normal") => Gait::Normal,
                    Some(g) => return Err(ActionError::BadGait(g.to_string())),
                };
                let default = match gait {
                    Gait::Long => 12.0,
                    Gait::Normal => 8.0,
                };
                Action::Walk {
                    distance_cm: value(default)?,
                    gait,
                }
            }
            ActionKind::WalkRight => Action::WalkRight {
                distance_cm: value(4.0)?,
            },
            ActionKind::WalkLeft => Action::WalkLeft {
                distance_cm: value(4.0)?,
            },
            ActionKind::Turn => Action::Turn {
                angle_deg: value(20.0)?,
            },
            ActionKind::TurnHeadVertically => Action::TurnHeadVertically {
                angle_deg: value(0.0)?,
            },
            ActionKind::TurnHeadHorizontally => Action::TurnHeadHorizontally {
                angle_deg: value(0.0)?,
            },
            ActionKind::KickRight => Action::Kick(Side::Right),
            ActionKind::KickLeft => Action::Kick(Side::Left),
            ActionKind::SaveRight => Action::Save(Side::Right),
            ActionKind::SaveLeft => Action::Save(Side::Left),
            ActionKind::FrontGetUp => Action::FrontGetUp,
            _ => Action::BackGetUp,
        })
    }

    /// The vocabulary's entry for this action.
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::None => ActionKind::None,
            Action::InitialPosition => ActionKind::InitialPosition,
            Action::Walk { .. } => ActionKind::Walk,
            Action::WalkRight { .. } => ActionKind::WalkRight,
            Action::WalkLeft { .. } => ActionKind::WalkLeft,
            Action::Turn { .. } => ActionKind::Turn,
            Action::TurnHeadVertically { .. } => ActionKind::TurnHeadVertically,
            Action::TurnHeadHorizontally { .. } => ActionKind::TurnHeadHorizontally,
            Action::Kick(Side::Right) => ActionKind::KickRight,
            Action::Kick(Side::Left) => ActionKind::KickLeft,
            Action::Save(Side::Right) => ActionKind::SaveRight,
            Action::Save(Side::Left) => ActionKind::SaveLeft,
            Action::FrontGetUp => ActionKind::FrontGetUp,
            Action::BackGetUp => ActionKind::BackGetUp,
        }
    }

    /// FutRob's name of the action.
    pub fn name(&self) -> &'static str {
        self.kind().name()
    }

    /// The parameters as `(name, value)` pairs, every one given explicitly.
    pub fn params(&self) -> Vec<(&'static str, String)> {
        match self {
            Action::Walk { distance_cm, gait } => {
                let mut v = vec![("distance", fmt_num(*distance_cm))];
                if *gait == Gait::Normal {
                    v.push(("gait", "normal".to_string()));
                }
                v
            }
            Action::WalkRight { distance_cm } | Action::WalkLeft { distance_cm } => {
                vec![("distance", fmt_num(*distance_cm))]
            }
            Action::Turn { angle_deg }
            | Action::TurnHeadVertically { angle_deg }
            | Action::TurnHeadHorizontally { angle_deg } => vec![("angle", fmt_num(*angle_deg))],
            _ => Vec::new(),
        }
    }

    /// Whether this is a head motion (it leaves the body's posture alone).
    pub fn is_head(&self) -> bool {
        matches!(
            self,
            Action::TurnHeadVertically { .. } | Action::TurnHeadHorizontally { .. }
        )
    }
}

fn fmt_num(v: f64) -> String {
    format!("{v}")
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        for (k, v) in self.params() {
            write!(f, " {k}={v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn seed_names_and_defaults() {
        assert_eq!(
            Action::parse("walk", &p(&[("distance", "30")])).unwrap(),
            Action::Walk {
                distance_cm: 30.0,
                gait: Gait::Long
            }
        );
        assert_eq!(
            Action::parse("walk", &[]).unwrap(),
            Action::Walk {
                distance_cm: 12.0,
                gait: Gait::Long
            }
        );
        assert_eq!(
            Action::parse("TURN", &[]).unwrap(),
            Action::Turn { angle_deg: 20.0 }
        );
        assert_eq!(
            Action::parse("kickLeft", &[]).unwrap(),
            Action::Kick(Side::Left)
        );
        for n in action_names() {
            let params = match n {
                "turnHeadVertically" | "turnHeadHorizontally" => p(&[("angle", "0")]),
                _ => Vec::new(),
            };
            assert_eq!(Action::parse(n, &params).unwrap().name(), n);
        }
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        let e = Action::parse("turnHeadVertically", &p(&[("angle", "10")])).unwrap_err();
        assert!(e.to_string().contains("[-60, 0]"), "{e}");
        let e = Action::parse("jump", &[]).unwrap_err();
        assert!(e.to_string().contains("unknown action \"jump\""), "{e}");
        let e = Action::parse("kickRight", &p(&[("distance", "3")])).unwrap_err();
        assert!(e.to_string().contains("takes none"), "{e}");
        let e = Action::parse("walk", &p(&[("distance", "NaN")])).unwrap_err();
        assert!(matches!(e, ActionError::NotANumber { .. }), "{e}");
        let e = Action::parse("walk", &p(&[("distance", "-5")])).unwrap_err();
        assert!(matches!(e, ActionError::OutOfRange { .. }), "{e}");
        assert_eq!(
            Action::parse("turnHeadHorizontally", &[]).unwrap(),
            Action::TurnHeadHorizontally { angle_deg: 0.0 }
        );
        let e = Action::parse("turn", &p(&[("angle", "361")])).unwrap_err();
        assert!(e.to_string().contains("[-360, 360] degrees"), "{e}");
        let e = Action::parse("walk", &p(&[("distance", "1201")])).unwrap_err();
        assert!(e.to_string().contains("[0, 1200] cm"), "{e}");
        let e = Action::parse("walk", &p(&[("distance", "3"), ("Distance", "4")])).unwrap_err();
        assert!(matches!(e, ActionError::DuplicateParameter { .. }), "{e}");
        // The help names every action and the ranges the parser enforces.
        let help = actions_help();
        for n in action_names() {
            assert!(help.contains(&format!("  {n}")), "{n}: {help}");
        }
        assert!(
            help.contains("walk: distance=0..1200 cm, default one step (12 cm); gait=long|normal"),
            "{help}"
        );
        assert!(
            help.contains("turn: angle=-360..360 degrees, default 20\n"),
            "{help}"
        );
    }
}
