//! The body a player runs when no simulator is attached (vision stub mode): it accepts the
//! basic actions and reports each finished after its nominal duration, so the brain, its
//! rules and its team messages run exactly as on a real body.

use simrob_futrob::{Action, ActionKind, BodyStatus};

/// Nominal duration of one body segment, ms (the FutRob motion table).
pub fn nominal_ms(a: &Action) -> u64 {
    match a.kind {
        ActionKind::Walk if a.param.unwrap_or(12.0) <= 2.0 => 400,
        ActionKind::Walk => 800,
        ActionKind::WalkRight | ActionKind::WalkLeft => 600,
        ActionKind::Turn if a.param.unwrap_or(20.0).abs() < 20.0 => 400,
        ActionKind::Turn => 800,
        ActionKind::KickRight | ActionKind::KickLeft => 1200,
        ActionKind::SaveRight | ActionKind::SaveLeft => 3400,
        ActionKind::FrontGetUp | ActionKind::BackGetUp => 4000,
        _ => 0,
    }
}

/// A body without physics: timed segments, an instant head.
pub struct DryBody {
    status: BodyStatus,
    busy_until: Vec<u64>,
}

impl DryBody {
    pub fn new() -> DryBody {
        DryBody {
            status: BodyStatus::default(),
            busy_until: Vec::new(),
        }
    }

    /// Executes `cmds` given at `now_ms`.
    pub fn command(&mut self, now_ms: u64, cmds: &[Action]) {
        for c in cmds {
            match c.kind {
                ActionKind::TurnHeadHorizontally => {
                    self.status.head_pan_deg = c.param.unwrap_or(0.0)
                }
                ActionKind::TurnHeadVertically => {
                    self.status.head_tilt_deg = c.param.unwrap_or(0.0)
                }
                _ => {
                    let start = self
                        .busy_until
                        .last()
                        .copied()
                        .unwrap_or(now_ms)
                        .max(now_ms);
                    self.busy_until.push(start + nominal_ms(c));
                }
            }
        }
    }

    /// The status at `now_ms`.
    pub fn status(&mut self, now_ms: u64) -> BodyStatus {
        let done = self.busy_until.iter().take_while(|t| **t <= now_ms).count();
        self.busy_until.drain(..done);
        self.status.finished += done as u64;
        self.status
    }
}
