//! The Time Server and each participant's view of its clock.
//!
//! The Time Server publishes one time base for everyone: inside simrob that is the
//! simulated time of the world it runs beside. It sends `clock { seq, time }` every
//! `period` seconds. A participant keeps the offset between the Time Server's time and its
//! own clock at the last `clock` it heard, and stamps every log line and every deadline
//! with its own clock plus that offset. Until it has heard one, it uses its own clock and
//! says so (`synced: false`, `unsynced` in logs).

use crate::wire::Msg;

/// The default publication period (`clock_period`, seconds).
pub const DEFAULT_CLOCK_PERIOD: f64 = 0.1;

/// The Time Server: decides when to publish the common time.
#[derive(Clone, Debug)]
pub struct TimeServer {
    period: f64,
    seq: u64,
    next: f64,
}

impl TimeServer {
    /// A server publishing every `period` seconds (at least 1 ms).
    pub fn new(period: f64) -> Self {
        let period = if period.is_finite() {
            period.max(0.001)
        } else {
            DEFAULT_CLOCK_PERIOD
        };
        TimeServer {
            period,
            seq: 0,
            next: 0.0,
        }
    }

    /// The clock message due at time `now`, if any.
    pub fn tick(&mut self, now: f64) -> Option<Msg> {
        if now + 1e-12 < self.next {
            return None;
        }
        self.seq += 1;
        self.next = now + self.period;
        Some(Msg::Clock {
            seq: self.seq,
            time: now,
        })
    }

    /// When the next publication is due.
    pub fn next_due(&self) -> f64 {
        self.next
    }

    /// Publications so far.
    pub fn published(&self) -> u64 {
        self.seq
    }
}

/// A time as a participant knows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stamp {
    /// Seconds on the Time Server's clock (or on the local clock when not synced).
    pub time: f64,
    /// Whether the Time Server has been heard.
    pub synced: bool,
}

impl std::fmt::Display for Stamp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // (A time too large to print in full, in exponent form: a log line stays short.)
        match (self.synced, self.time.abs() < 1e15) {
            (true, true) => write!(f, "{:.3}", self.time),
            (false, true) => write!(f, "{:.3}(unsynced)", self.time),
            (true, false) => write!(f, "{:e}", self.time),
            (false, false) => write!(f, "{:e}(unsynced)", self.time),
        }
    }
}

/// A participant's view of the Time Server's clock.
#[derive(Clone, Debug, Default)]
pub struct ClockView {
    offset: Option<f64>,
    last_seq: u64,
}

impl ClockView {
    /// Hears `clock { seq, time }` at local time `local`. Older publications are ignored.
    pub fn hear(&mut self, seq: u64, time: f64, local: f64) {
        if seq < self.last_seq || !time.is_finite() {
            return;
        }
        self.last_seq = seq;
        self.offset = Some(time - local);
    }

    /// Whether the Time Server has been heard.
    pub fn synced(&self) -> bool {
        self.offset.is_some()
    }

    /// The common time at local time `local`.
    pub fn now(&self, local: f64) -> Stamp {
        match self.offset {
            Some(o) => Stamp {
                time: local + o,
                synced: true,
            },
            None => Stamp {
                time: local,
                synced: false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publishes_every_period_and_participants_follow() {
        let mut ts = TimeServer::new(0.5);
        assert!(ts.tick(0.0).is_some());
        assert!(ts.tick(0.2).is_none());
        let Some(Msg::Clock { seq, time }) = ts.tick(0.5) else {
            panic!("due")
        };
        assert_eq!((seq, time), (2, 0.5));
        let mut view = ClockView::default();
        assert_eq!(
            view.now(3.0),
            Stamp {
                time: 3.0,
                synced: false
            }
        );
        view.hear(seq, time, 100.0); // the local clock runs 99.5 s ahead
        assert_eq!(
            view.now(101.0),
            Stamp {
                time: 1.5,
                synced: true
            }
        );
        view.hear(1, 0.0, 200.0); // an older publication arriving late changes nothing
        assert_eq!(view.now(101.0).time, 1.5);
        assert_eq!(
            format!(
                "{}",
                Stamp {
                    time: 1.0,
                    synced: false
                }
            ),
            "1.000(unsynced)"
        );
    }
}
