//! The humanoid's basic actions, with FutRob's names and parameters, and their validation.
//!
//! | action | parameter | unit, range, default |
//! |---|---|---|
//! | `none` | | hold still (stops the running action at its next equilibrium point) |
//! | `initialPosition` | | back to the rest pose |
//! | `walk` | `distance`, `gait` | cm in [0, 1000], default one step; `gait` = `long` (12 cm steps, default) or `normal` (8 cm), then 2 cm mini steps. Never farther than asked |
//! | `walkRight`, `walkLeft` | `distance` | cm in [0, 1000] in 4 cm lateral steps, default one step |
//! | `turn` | `angle` | degrees in [−360, 360], **positive turns right**, in 20° quanta (never more than asked; under 20°, in 5° small turns), default one quantum to the right |
//! | `turnHeadVertically` | `angle` | target tilt, degrees in [−60, 0] (0 = level, negative = down) |
//! | `turnHeadHorizontally` | `angle` | target pan, degrees in [−60, 60] (positive = right) |
//! | `kickRight`, `kickLeft` | | kick with that foot |
//! | `saveRight`, `saveLeft` | | goalkeeper dive to that side, hold, get back up |
//! | `frontGetUp`, `backGetUp` | | stand up after falling forward / backward |
//!
//! Names are matched without regard to letter case (FutRob's own files mix `findball` and
//! `findBall`); they are reported in the spelling above. A parameter the action does not take,
//! a value that is not a finite number, or a value out of range is refused.

use std::fmt;

/// Which foot kicks, which side a keeper dives to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Side {
    Right,
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
    None,
    InitialPosition,
    Walk { distance_cm: f64, gait: Gait },
    WalkRight { distance_cm: f64 },
    WalkLeft { distance_cm: f64 },
    Turn { angle_deg: f64 },
    TurnHeadVertically { angle_deg: f64 },
    TurnHeadHorizontally { angle_deg: f64 },
    Kick(Side),
    Save(Side),
    FrontGetUp,
    BackGetUp,
}

/// Every action name, in FutRob's spelling.
pub const ACTION_NAMES: [&str; 14] = [
    "none",
    "initialPosition",
    "walk",
    "walkRight",
    "walkLeft",
    "turn",
    "turnHeadVertically",
    "turnHeadHorizontally",
    "kickRight",
    "kickLeft",
    "saveRight",
    "saveLeft",
    "frontGetUp",
    "backGetUp",
];

/// Largest walking distance accepted in one action (cm): more than the field's diagonal.
pub const MAX_WALK_CM: f64 = 1000.0;

/// Why an action request was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ActionError {
    #[error("unknown action \"{0}\" (actions: {names})", names = ACTION_NAMES.join(", "))]
    UnknownAction(String),
    #[error("action {action} takes no parameter \"{param}\"{takes}")]
    UnknownParameter {
        action: &'static str,
        param: String,
        takes: String,
    },
    #[error("action {action}: parameter {param} is given twice")]
    DuplicateParameter { action: &'static str, param: String },
    #[error("action {action}: {param} must be a finite number, got \"{value}\"")]
    NotANumber {
        action: &'static str,
        param: &'static str,
        value: String,
    },
    #[error("action {action}: {param} = {value} is out of range [{min}, {max}] {unit}")]
    OutOfRange {
        action: &'static str,
        param: &'static str,
        value: f64,
        min: f64,
        max: f64,
        unit: &'static str,
    },
    #[error("action walk: gait must be \"long\" or \"normal\", got \"{0}\"")]
    BadGait(String),
    #[error("action {action} is missing its parameter {param}")]
    Missing {
        action: &'static str,
        param: &'static str,
    },
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
        let canonical = ACTION_NAMES
            .iter()
            .copied()
            .find(|n| n.eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| ActionError::UnknownAction(name.to_string()))?;
        let allowed: &[&'static str] = match canonical {
            "walk" => &["distance", "gait"],
            "walkRight" | "walkLeft" => &["distance"],
            "turn" | "turnHeadVertically" | "turnHeadHorizontally" => &["angle"],
            _ => &[],
        };
        let mut seen: Vec<&'static str> = Vec::new();
        let get = |p: &'static str| -> Option<&str> { lookup(params, p) };
        for (k, _) in params {
            let Some(p) = allowed.iter().find(|a| a.eq_ignore_ascii_case(k.trim())) else {
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
            if seen.contains(p) {
                return Err(ActionError::DuplicateParameter {
                    action: canonical,
                    param: k.clone(),
                });
            }
            seen.push(p);
        }
        let walk_range = (0.0, MAX_WALK_CM);
        let distance = |default: f64| -> Result<f64, ActionError> {
            match lookup(params, "distance") {
                Some(v) => ranged(
                    canonical,
                    "distance",
                    number(canonical, "distance", v)?,
                    walk_range,
                    "cm",
                ),
                None => Ok(default),
            }
        };
        Ok(match canonical {
            "none" => Action::None,
            "initialPosition" => Action::InitialPosition,
            "walk" => {
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
                    distance_cm: distance(default)?,
                    gait,
                }
            }
            "walkRight" => Action::WalkRight {
                distance_cm: distance(4.0)?,
            },
            "walkLeft" => Action::WalkLeft {
                distance_cm: distance(4.0)?,
            },
            "turn" => {
                let a = match get("angle") {
                    Some(v) => number(canonical, "angle", v)?,
                    None => 20.0,
                };
                Action::Turn {
                    angle_deg: ranged(canonical, "angle", a, (-360.0, 360.0), "degrees")?,
                }
            }
            "turnHeadVertically" | "turnHeadHorizontally" => {
                let v = get("angle").ok_or(ActionError::Missing {
                    action: canonical,
                    param: "angle",
                })?;
                let a = number(canonical, "angle", v)?;
                if canonical == "turnHeadVertically" {
                    Action::TurnHeadVertically {
                        angle_deg: ranged(canonical, "angle", a, (-60.0, 0.0), "degrees")?,
                    }
                } else {
                    Action::TurnHeadHorizontally {
                        angle_deg: ranged(canonical, "angle", a, (-60.0, 60.0), "degrees")?,
                    }
                }
            }
            "kickRight" => Action::Kick(Side::Right),
            "kickLeft" => Action::Kick(Side::Left),
            "saveRight" => Action::Save(Side::Right),
            "saveLeft" => Action::Save(Side::Left),
            "frontGetUp" => Action::FrontGetUp,
            _ => Action::BackGetUp,
        })
    }

    /// FutRob's name of the action.
    pub fn name(&self) -> &'static str {
        match self {
            Action::None => "none",
            Action::InitialPosition => "initialPosition",
            Action::Walk { .. } => "walk",
            Action::WalkRight { .. } => "walkRight",
            Action::WalkLeft { .. } => "walkLeft",
            Action::Turn { .. } => "turn",
            Action::TurnHeadVertically { .. } => "turnHeadVertically",
            Action::TurnHeadHorizontally { .. } => "turnHeadHorizontally",
            Action::Kick(Side::Right) => "kickRight",
            Action::Kick(Side::Left) => "kickLeft",
            Action::Save(Side::Right) => "saveRight",
            Action::Save(Side::Left) => "saveLeft",
            Action::FrontGetUp => "frontGetUp",
            Action::BackGetUp => "backGetUp",
        }
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
        for n in ACTION_NAMES {
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
        let e = Action::parse("turnHeadHorizontally", &[]).unwrap_err();
        assert!(matches!(e, ActionError::Missing { .. }), "{e}");
        let e = Action::parse("walk", &p(&[("distance", "3"), ("Distance", "4")])).unwrap_err();
        assert!(matches!(e, ActionError::DuplicateParameter { .. }), "{e}");
    }
}
