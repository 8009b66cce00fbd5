//! The link between a brain and a body that runs one action at a time and reports it by
//! sequence number — the simulated humanoid, over the network or in-process.
//!
//! The brain sends one body segment at a time and head targets whenever it likes; a body
//! that takes every request into a single action slot (a new request replaces the pending
//! one) would lose some. [`BodyLink`] sits between them: it keeps the brain's body segments in
//! order and only the newest head target, hands out the next request only when the previous
//! one is over (reported `done`, `interrupted` or `fell`, or refused), and turns the body's
//! reports into the brain's [`BodyStatus`]. No I/O; time is handed in.
//!
//! ```
//! use simrob_futrob::body::{BodyLink, BodyReport};
//! use simrob_futrob::{Action, ActionKind};
//!
//! let mut link = BodyLink::default();
//! link.command(&[Action::with(ActionKind::Walk, 12.0), Action::with(ActionKind::TurnHeadHorizontally, 30.0)]);
//! let first = link.poll_request(0).unwrap();        // send it to the body
//! assert_eq!(first.to_string(), "walk distance=12");
//! assert!(link.poll_request(10).is_none());          // one at a time
//! link.report(500, &BodyReport { action: Some((1, false)), ..Default::default() }); // seq 1 done
//! assert_eq!(link.status().finished, 1);
//! assert_eq!(link.poll_request(510).unwrap().to_string(), "turnHeadHorizontally angle=30");
//! ```

use std::collections::VecDeque;

use crate::actions::{BodyStatus, Fall};
use crate::names::{Action, ActionKind};

/// What the body reports.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BodyReport {
    /// Head pan, degrees, positive right.
    pub head_pan_deg: f64,
    /// Head tilt, degrees, negative down.
    pub head_tilt_deg: f64,
    /// Down on the floor.
    pub fallen: Option<Fall>,
    /// The latest action: its sequence number and whether it is still running.
    pub action: Option<(u64, bool)>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct InFlight {
    body: bool,
    after_seq: u64,
    since_ms: u64,
}

/// See the module documentation.
#[derive(Debug, Clone, PartialEq)]
pub struct BodyLink {
    status: BodyStatus,
    last_seq: u64,
    in_flight: Option<InFlight>,
    queue: VecDeque<Action>,
    pan: Option<f64>,
    tilt: Option<f64>,
    timeout_ms: u64,
    refused: u64,
}

impl Default for BodyLink {
    fn default() -> Self {
        BodyLink::new(15_000)
    }
}

impl BodyLink {
    /// A link; a request not reported over after `timeout_ms` counts as over.
    pub fn new(timeout_ms: u64) -> BodyLink {
        BodyLink {
            status: BodyStatus::default(),
            last_seq: 0,
            in_flight: None,
            queue: VecDeque::new(),
            pan: None,
            tilt: None,
            timeout_ms,
            refused: 0,
        }
    }

    /// The brain's commands of one step.
    pub fn command(&mut self, cmds: &[Action]) {
        for c in cmds {
            match c.kind {
                ActionKind::TurnHeadHorizontally => self.pan = c.param,
                ActionKind::TurnHeadVertically => self.tilt = c.param,
                _ => self.queue.push_back(*c),
            }
        }
    }

    /// The next request to send to the body at `now_ms`, if the body is free for it.
    pub fn poll_request(&mut self, now_ms: u64) -> Option<Action> {
        if let Some(f) = self.in_flight {
            if now_ms.saturating_sub(f.since_ms) <= self.timeout_ms {
                return None;
            }
            self.complete();
        }
        let (a, body) = if let Some(b) = self.queue.pop_front() {
            (b, true)
        } else if let Some(p) = self.pan.take() {
            (Action::with(ActionKind::TurnHeadHorizontally, p), false)
        } else if let Some(t) = self.tilt.take() {
            (Action::with(ActionKind::TurnHeadVertically, t), false)
        } else {
            return None;
        };
        self.in_flight = Some(InFlight {
            body,
            after_seq: self.last_seq,
            since_ms: now_ms,
        });
        Some(a)
    }

    fn complete(&mut self) {
        if let Some(f) = self.in_flight.take() {
            if f.body {
                self.status.finished += 1;
            }
        }
    }

    /// The body refused the last request (it will never run).
    pub fn refused(&mut self) {
        self.refused += 1;
        self.complete();
    }

    /// Requests refused so far.
    pub fn refused_count(&self) -> u64 {
        self.refused
    }

    /// A report from the body at `now_ms`.
    pub fn report(&mut self, _now_ms: u64, r: &BodyReport) {
        self.status.head_pan_deg = r.head_pan_deg;
        self.status.head_tilt_deg = r.head_tilt_deg;
        self.status.fallen = r.fallen;
        if let Some((seq, running)) = r.action {
            self.last_seq = self.last_seq.max(seq);
            if let Some(f) = self.in_flight {
                if seq > f.after_seq && !running {
                    self.complete();
                }
            }
        }
    }

    /// The status to hand to [`crate::Brain::step`].
    pub fn status(&self) -> BodyStatus {
        self.status
    }
}
