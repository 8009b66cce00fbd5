//! The sans-IO part of the bed: what happens to each datagram (a pure function of the seed,
//! the stream and the datagram's number in it) and the queue that releases them in time.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};
use std::time::{Duration, Instant};

use simrob_math::rng::hash_u01;

use crate::NetbedError;

/// How a link misbehaves. Every choice comes from `seed`: the `n`-th datagram of a stream
/// meets the same fate in every run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Impairment {
    /// Probability that a datagram is lost (0–1).
    pub loss: f64,
    /// Probability that a datagram that is not lost arrives twice (0–1).
    pub duplicate: f64,
    /// Probability that a datagram is held back until the next one of its stream that is not
    /// held has gone (so that one overtakes it), or [`REORDER_HOLD`] past its time when none
    /// comes (0–1). Several may be held at once, at most [`MAX_HELD`] a stream: that share of
    /// the datagrams (not lost) arrives overtaken, except the few that wait out
    /// [`REORDER_HOLD`] and those past [`MAX_HELD`] (a datagram drawn to be held when as many
    /// are held goes, and takes them along).
    pub reorder: f64,
    /// Mean one-way delay added to every datagram.
    pub delay: Duration,
    /// Each datagram's delay is `delay` ± up to this, uniformly (at most `delay`).
    pub jitter: Duration,
    /// The random stream's seed.
    pub seed: u64,
}

/// The most bytes of datagrams a relay holds on their way (64 MiB): a copy that would take it
/// past this is dropped, as a full router queue drops, and counted in
/// [`LinkStats::overflowed`]. With a long delay, a flood would otherwise be held in memory
/// without end. Datagrams held back for reordering (at most [`MAX_HELD`] a stream) count
/// against it too.
pub const MAX_QUEUED_BYTES: usize = 64 << 20;

/// The most datagrams a stream holds back for reordering at once.
pub const MAX_HELD: usize = 64;

/// How long a datagram held back for reordering waits for the next one of its stream (past
/// its own delay) before it goes anyway.
pub const REORDER_HOLD: Duration = Duration::from_millis(20);

impl Impairment {
    /// A perfect link (nothing lost, duplicated, reordered or delayed).
    pub fn clean() -> Self {
        Impairment {
            loss: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            seed: 0,
        }
    }

    /// Checks the numbers: probabilities in 0–1, jitter at most the delay.
    pub fn validate(&self) -> Result<(), NetbedError> {
        for (name, p) in [
            ("loss", self.loss),
            ("duplicate", self.duplicate),
            ("reorder", self.reorder),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err(NetbedError::Probability { name, value: p });
            }
        }
        if self.jitter > self.delay {
            return Err(NetbedError::Jitter {
                jitter: self.jitter,
                delay: self.delay,
            });
        }
        Ok(())
    }

    /// The fate of datagram number `seq` (from 0) of stream `stream`.
    pub fn fate(&self, stream: u64, seq: u64) -> Fate {
        // Counter-based draws: each depends only on the seed, the stream, the datagram's
        // number and which draw it is.
        let draw = |k: u64| hash_u01(self.seed, stream, seq, k);
        let lost = draw(0) < self.loss;
        let twice = draw(1) < self.duplicate;
        let reordered = draw(2) < self.reorder;
        let delay = |k: u64| {
            let j = self.jitter.as_secs_f64() * (2.0 * draw(k) - 1.0);
            Duration::from_secs_f64((self.delay.as_secs_f64() + j).max(0.0))
        };
        let first = delay(3);
        let second = delay(4);
        Fate {
            lost,
            delays: if lost {
                Vec::new()
            } else if twice {
                vec![first, second]
            } else {
                vec![first]
            },
            reordered: reordered && !lost,
        }
    }
}

/// What happens to one datagram.
#[derive(Debug, Clone, PartialEq)]
pub struct Fate {
    /// It never arrives.
    pub lost: bool,
    /// The delay of each copy that arrives (none when lost, two when duplicated).
    pub delays: Vec<Duration>,
    /// It is held back until the next datagram of its stream that is not held has gone.
    pub reordered: bool,
}

/// A stable number for a stream named `name` (FNV-1a), so that fates do not depend on ports.
pub fn stream_id(name: &[u8]) -> u64 {
    name.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// What a link did, counted. Every copy of a datagram that came in and was not lost is, at
/// any time, either `sent`, `waiting` or `overflowed`: `received - lost + duplicated = sent +
/// waiting + overflowed`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Datagrams that came in.
    pub received: u64,
    /// Datagrams lost (their fate; never sent).
    pub lost: u64,
    /// Datagrams that are to arrive twice (two copies).
    pub duplicated: u64,
    /// Datagrams held back and overtaken by a later one.
    pub reordered: u64,
    /// Copies that have left: handed to the socket towards their receiver (counted just
    /// before, so whoever received one finds it counted).
    pub sent: u64,
    /// Copies on their way now: waiting for their delay, or held back for reordering.
    pub waiting: u64,
    /// Copies dropped because the relay already held [`MAX_QUEUED_BYTES`] on their way.
    pub overflowed: u64,
}

struct Entry<T> {
    due: Instant,
    order: u64,
    item: T,
    bytes: Vec<u8>,
}

impl<T> PartialEq for Entry<T> {
    fn eq(&self, o: &Self) -> bool {
        (self.due, self.order) == (o.due, o.order)
    }
}
impl<T> Eq for Entry<T> {}
impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Entry<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        // Earliest first out of the (max-)heap.
        (o.due, o.order).cmp(&(self.due, self.order))
    }
}

/// Datagrams on their way, released in order of time (and of arrival for equal times).
/// It holds at most [`MAX_QUEUED_BYTES`] (or the limit given to [`Schedule::with_limit`]).
pub struct Schedule<T> {
    heap: BinaryHeap<Entry<T>>,
    order: u64,
    bytes: usize,
    limit: usize,
}

impl<T> Default for Schedule<T> {
    fn default() -> Self {
        Self::with_limit(MAX_QUEUED_BYTES)
    }
}

impl<T> Schedule<T> {
    /// A schedule that holds at most `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        Schedule {
            heap: BinaryHeap::new(),
            order: 0,
            bytes: 0,
            limit,
        }
    }

    /// Queues `bytes` for `item` at `due`; `false` (and nothing queued) when that would take
    /// the schedule past its limit.
    pub fn push(&mut self, due: Instant, item: T, bytes: Vec<u8>) -> bool {
        if self.bytes.saturating_add(bytes.len()) > self.limit {
            return false;
        }
        self.bytes += bytes.len();
        self.order += 1;
        self.heap.push(Entry {
            due,
            order: self.order,
            item,
            bytes,
        });
        true
    }

    /// Counts `n` bytes held outside the schedule (for reordering) against its limit; `false`
    /// (and nothing counted) when they do not fit.
    pub fn reserve(&mut self, n: usize) -> bool {
        if self.bytes.saturating_add(n) > self.limit {
            return false;
        }
        self.bytes += n;
        true
    }

    /// Bytes counted by [`Schedule::reserve`] no longer held.
    pub fn unreserve(&mut self, n: usize) {
        self.bytes = self.bytes.saturating_sub(n);
    }

    /// Bytes on their way (in the schedule or held for reordering).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// When the next datagram is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.heap.peek().map(|e| e.due)
    }

    /// The next datagram due at or before `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<(T, Vec<u8>)> {
        if self.heap.peek()?.due > now {
            return None;
        }
        let e = self.heap.pop()?;
        self.bytes -= e.bytes.len();
        Some((e.item, e.bytes))
    }

    /// Datagrams on their way.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Nothing on its way.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// One direction of one stream: numbers its datagrams, draws their fates, holds some back
/// for reordering (at most [`MAX_HELD`]).
pub struct Stream {
    id: u64,
    seq: u64,
    /// Held back for reordering: when each was due, and its bytes, in order of arrival.
    held: VecDeque<(Instant, Vec<u8>)>,
    /// What this stream did.
    pub stats: LinkStats,
}

impl Stream {
    /// A stream known by `id` (see [`stream_id`]).
    pub fn new(id: u64) -> Self {
        Stream {
            id,
            seq: 0,
            held: VecDeque::new(),
            stats: LinkStats::default(),
        }
    }

    /// A datagram came in at `now`: queues its copies for `item` in `out` as its fate says.
    pub fn submit<T: Clone>(
        &mut self,
        imp: &Impairment,
        now: Instant,
        bytes: Vec<u8>,
        item: T,
        out: &mut Schedule<T>,
    ) {
        let fate = imp.fate(self.id, self.seq);
        self.seq += 1;
        self.stats.received += 1;
        if fate.lost {
            self.stats.lost += 1;
            return;
        }
        if fate.delays.len() > 1 {
            self.stats.duplicated += 1;
        }
        // Datagrams drawn to be held wait (up to MAX_HELD); the next one that goes releases
        // them all after itself, in their order.
        let hold_this = fate.reordered && self.held.len() < MAX_HELD;
        let previously = if hold_this {
            VecDeque::new()
        } else {
            std::mem::take(&mut self.held)
        };
        let mut last_due = now;
        for (i, d) in fate.delays.iter().enumerate() {
            let due = now + *d;
            if i == 0 && hold_this {
                if out.reserve(bytes.len()) {
                    self.stats.waiting += 1;
                    self.held.push_back((due, bytes.clone()));
                } else {
                    self.stats.overflowed += 1;
                }
                continue;
            }
            last_due = last_due.max(due);
            self.queue(out, due, item.clone(), bytes.clone());
        }
        for (due, held) in previously {
            self.stats.reordered += 1;
            self.stats.waiting -= 1;
            out.unreserve(held.len());
            self.queue(out, due.max(last_due), item.clone(), held);
        }
    }

    /// Releases the held datagrams whose wait for a follower is over.
    pub fn expire<T: Clone>(&mut self, now: Instant, item: T, out: &mut Schedule<T>) {
        if self.held.iter().all(|(due, _)| now < *due + REORDER_HOLD) {
            return;
        }
        let (gone, stay): (VecDeque<_>, VecDeque<_>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|(due, _)| now >= *due + REORDER_HOLD);
        self.held = stay;
        for (_, held) in gone {
            self.stats.waiting -= 1;
            out.unreserve(held.len());
            self.queue(out, now, item.clone(), held);
        }
    }

    /// Queues a copy, counted as waiting, or as overflowed when the schedule is full.
    fn queue<T>(&mut self, out: &mut Schedule<T>, due: Instant, item: T, bytes: Vec<u8>) {
        if out.push(due, item, bytes) {
            self.stats.waiting += 1;
        } else {
            self.stats.overflowed += 1;
        }
    }

    /// A copy of this stream taken from the schedule leaves now: counted as sent.
    pub fn leave(&mut self) {
        self.stats.waiting = self.stats.waiting.saturating_sub(1);
        self.stats.sent += 1;
    }

    /// When the first held datagram goes at the latest.
    pub fn held_until(&self) -> Option<Instant> {
        self.held.iter().map(|(due, _)| *due + REORDER_HOLD).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lossy(loss: f64, seed: u64) -> Impairment {
        Impairment {
            loss,
            seed,
            ..Impairment::clean()
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_fates_and_another_seed_others() {
        let a: Vec<bool> = (0..1000).map(|n| lossy(0.2, 7).fate(1, n).lost).collect();
        let b: Vec<bool> = (0..1000).map(|n| lossy(0.2, 7).fate(1, n).lost).collect();
        let c: Vec<bool> = (0..1000).map(|n| lossy(0.2, 8).fate(1, n).lost).collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let lost = a.iter().filter(|l| **l).count();
        assert!((150..250).contains(&lost), "{lost} of 1000 lost at 20 %");
    }

    #[test]
    fn delays_stay_within_the_jitter() {
        let imp = Impairment {
            delay: Duration::from_millis(50),
            jitter: Duration::from_millis(20),
            duplicate: 0.5,
            ..Impairment::clean()
        };
        let mut twice = 0;
        for n in 0..1000 {
            let f = imp.fate(3, n);
            twice += usize::from(f.delays.len() == 2);
            for d in f.delays {
                assert!(d >= Duration::from_millis(30) && d <= Duration::from_millis(70));
            }
        }
        assert!((400..600).contains(&twice), "{twice}");
    }

    #[test]
    fn a_held_datagram_goes_after_the_next_one() {
        let imp = Impairment {
            reorder: 1.0,
            ..Impairment::clean()
        };
        let t0 = Instant::now();
        let mut s = Stream::new(1);
        let mut out = Schedule::default();
        s.submit(&imp, t0, b"a".to_vec(), (), &mut out);
        s.submit(&imp, t0, b"b".to_vec(), (), &mut out);
        assert!(out.is_empty());
        // Both are held until one that is not held goes: x, then a and b in their order.
        s.submit(&Impairment::clean(), t0, b"x".to_vec(), (), &mut out);
        let order: Vec<Vec<u8>> = std::iter::from_fn(|| out.pop_due(t0).map(|(_, b)| b)).collect();
        assert_eq!(order, vec![b"x".to_vec(), b"a".to_vec(), b"b".to_vec()]);
        assert_eq!(s.stats.reordered, 2);
        // With no follower it goes anyway, REORDER_HOLD later.
        s.submit(&imp, t0, b"c".to_vec(), (), &mut out);
        s.expire(t0, (), &mut out);
        assert!(out.is_empty());
        s.expire(t0 + REORDER_HOLD, (), &mut out);
        assert_eq!(
            out.pop_due(t0 + REORDER_HOLD).map(|(_, b)| b),
            Some(b"c".to_vec())
        );
    }

    #[test]
    fn the_share_reordered_is_the_probability_asked() {
        let t0 = Instant::now();
        for (p, seed) in [(0.1, 3), (0.5, 3), (0.5, 4), (0.9, 5)] {
            let imp = Impairment {
                reorder: p,
                loss: 0.05,
                seed,
                ..Impairment::clean()
            };
            let mut s = Stream::new(7);
            let mut out = Schedule::default();
            let n = 4000u64;
            for k in 0..n {
                s.submit(&imp, t0, k.to_le_bytes().to_vec(), (), &mut out);
            }
            // Every datagram drawn to be held is overtaken, but those past MAX_HELD and the
            // last few, still held at the end.
            let drawn = (0..n).filter(|k| imp.fate(7, *k).reordered).count() as u64;
            let passed = s.stats.received - s.stats.lost;
            let share = s.stats.reordered as f64 / passed as f64;
            assert!((share - p).abs() < 0.03, "{p}: {share}");
            assert!(
                s.stats.reordered <= drawn,
                "{p}: {} of {drawn}",
                s.stats.reordered
            );
            assert!(
                drawn - s.stats.reordered <= drawn / 50 + MAX_HELD as u64,
                "{p}"
            );
            // Counted inversions: each datagram reordered arrives after a later one.
            let order: Vec<u64> = std::iter::from_fn(|| out.pop_due(t0))
                .map(|(_, b)| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                .collect();
            let mut latest = 0;
            let mut overtaken = 0;
            for k in &order {
                overtaken += u64::from(*k < latest);
                latest = latest.max(*k);
            }
            assert_eq!(overtaken, s.stats.reordered, "{p}");
        }
    }

    #[test]
    fn the_schedule_holds_no_more_than_its_limit() {
        let imp = Impairment {
            delay: Duration::from_secs(3600),
            duplicate: 1.0,
            ..Impairment::clean()
        };
        let t0 = Instant::now();
        let mut s = Stream::new(1);
        let mut out = Schedule::with_limit(1000);
        for _ in 0..10 {
            s.submit(&imp, t0, vec![0; 100], (), &mut out);
        }
        // Ten copies fit, the ten others are dropped and counted.
        assert_eq!(out.bytes(), 1000);
        let st = s.stats;
        assert_eq!((st.waiting, st.sent, st.overflowed), (10, 0, 10));
        let later = t0 + Duration::from_secs(7200);
        while out.pop_due(later).is_some() {
            s.leave();
        }
        assert_eq!(out.bytes(), 0);
        let st = s.stats;
        assert_eq!((st.waiting, st.sent, st.overflowed), (0, 10, 10));
        assert_eq!(st.received - st.lost + st.duplicated, 20);
    }

    #[test]
    fn bad_numbers_are_refused() {
        assert!(lossy(1.5, 0).validate().is_err());
        assert!(lossy(-0.1, 0).validate().is_err());
        assert!(Impairment {
            jitter: Duration::from_millis(5),
            ..Impairment::clean()
        }
        .validate()
        .is_err());
    }
}
