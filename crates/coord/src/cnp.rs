//! Contract Net: the auctioneer (the Control Center's CNP Manager) and the bidder (each
//! robot's CNP Manager module).
//!
//! Phases: **announce** (the task and a bid deadline on the Time Server's clock) →
//! **bids** (each robot's marginal cost, or a refusal) → **award** to the lowest bid
//! (ties to the lower robot id) with an answer deadline → **accept** or **decline**. A
//! decline, or no answer by the deadline, awards the next-best bid; an auction nobody
//! bids on — or every bidder declines — ends as *unallocated* and the task goes back to
//! the Control Center, which logs it and announces it again later (or, under a centralised
//! policy, hands it to that policy). Bids after the bid deadline, for an auction not open,
//! twice from one robot or from a robot not invited are refused and change nothing (the
//! auction may also close early, once every invited robot has answered); a bid from a
//! robot that may not take the task (another world, a class it cannot run) counts as its
//! refusal, so such a robot never wins. An accept after its deadline is answered with `cancel`: the robot drops the
//! task. A robot that leaves mid-auction loses its bid; if it held the award, the award
//! moves on.

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, HashMap, VecDeque};

use crate::model::{AuctionId, RobotId, TaskClass, TaskId, TaskSpec, TaskState};
use crate::task_manager::TaskManager;
use crate::wire::{valid_cost, Msg};

/// Default time robots have to bid (`bid_window`, seconds).
pub const DEFAULT_BID_WINDOW: f64 = 0.5;
/// Default time the winner has to accept (`accept_window`, seconds).
pub const DEFAULT_ACCEPT_WINDOW: f64 = 0.5;

/// Auction timing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CnpConfig {
    /// Seconds robots have to bid after an announcement (`bid_window`, default 0.5 s).
    pub bid_window: f64,
    /// Seconds the winner has to answer its award (`accept_window`, default 0.5 s).
    pub accept_window: f64,
}

impl Default for CnpConfig {
    fn default() -> Self {
        CnpConfig {
            bid_window: DEFAULT_BID_WINDOW,
            accept_window: DEFAULT_ACCEPT_WINDOW,
        }
    }
}

/// Ended auctions an [`Auctioneer`] remembers by default, for late accepts
/// ([`Auctioneer::with_closed_limit`]; the Control Center keeps as many as finished tasks,
/// `max_final_tasks`).
pub const DEFAULT_KEEP_CLOSED: usize = 10_000;

/// What the auctioneer wants done.
#[derive(Clone, Debug, PartialEq)]
pub enum CnpOut {
    /// A message to one robot (`Some`) or to every robot (`None`).
    Send {
        /// The robot, or `None` for every robot.
        to: Option<RobotId>,
        /// The message.
        msg: Msg,
    },
    /// The winner accepted: the task is now its.
    Allocated {
        /// The auction.
        auction: AuctionId,
        /// The task allocated.
        task: TaskId,
        /// The robot that won and accepted it.
        robot: RobotId,
        /// Its winning bid (metres for movement, seconds otherwise; see [`Bidder::cost`]).
        cost: f64,
    },
    /// Nobody bid, or every bidder declined: the task is back with the caller.
    Unallocated {
        /// The auction.
        auction: AuctionId,
        /// The task, back with the caller.
        task: TaskSpec,
        /// Answers received (bids and refusals).
        bids: usize,
    },
    /// Something worth a log line (late accepts, awards not answered in time).
    Note(String),
}

/// Why an auction message (a bid, an accept, a decline) was not taken: nothing changed for
/// the auction, and the sender is told so.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AuctionError {
    /// No auction with this id is open (it never was, or it has ended).
    #[error("auction {0} is not open (it has ended, or never was)")]
    NotOpen(AuctionId),
    /// Bidding of this auction has closed (its deadline passed, or its award is out).
    #[error("auction {0}: bidding has closed")]
    BiddingClosed(AuctionId),
    /// The robot was not invited to bid (it joined after the announcement), or has
    /// answered already.
    #[error("auction {auction}: robot {robot} has answered already, or was not invited (it joined after the announcement)")]
    NotInvited {
        /// The auction.
        auction: AuctionId,
        /// The robot.
        robot: RobotId,
    },
    /// The robot may not take the task (another world, a class it cannot run): its bid
    /// counts as a refusal. The Control Center says why in its own words.
    #[error("auction {auction}: robot {robot} may not take the task")]
    Unfit {
        /// The auction.
        auction: AuctionId,
        /// The robot.
        robot: RobotId,
    },
    /// The robot holds no award of this auction to decline.
    #[error("auction {auction}: robot {robot} holds no award of it to decline")]
    NoAward {
        /// The auction.
        auction: AuctionId,
        /// The robot.
        robot: RobotId,
    },
}

#[derive(Clone, Copy, Debug)]
struct Due(f64);
impl PartialEq for Due {
    fn eq(&self, o: &Self) -> bool {
        self.0.total_cmp(&o.0) == Ordering::Equal
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Due {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// Hashes auction ids (sequential integers) with one multiplication.
#[derive(Clone, Copy, Debug, Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ self.0).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type IdMap<V> = HashMap<AuctionId, V, std::hash::BuildHasherDefault<IdHasher>>;

/// Robot ids below this are kept as bits (at most 128 KiB per set); larger ones in a
/// sorted list, so a robot that picks a huge id costs memory for itself only.
const DENSE_IDS: RobotId = 1 << 20;

/// A set of robot ids: one bit each for ids below [`DENSE_IDS`], a sorted list above.
#[derive(Clone, Debug, Default)]
pub(crate) struct IdSet {
    bits: Vec<u64>,
    sparse: Vec<RobotId>,
}

impl IdSet {
    /// How many ids.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.bits
            .iter()
            .map(|w| w.count_ones() as usize)
            .sum::<usize>()
            + self.sparse.len()
    }

    /// Adds `id`; false if it was there.
    #[inline]
    pub(crate) fn insert(&mut self, id: RobotId) -> bool {
        if id >= DENSE_IDS {
            return match self.sparse.binary_search(&id) {
                Ok(_) => false,
                Err(i) => {
                    self.sparse.insert(i, id);
                    true
                }
            };
        }
        let (w, b) = ((id / 64) as usize, id % 64);
        if w >= self.bits.len() {
            self.bits.resize(w + 1, 0);
        }
        let had = self.bits[w] >> b & 1 == 1;
        self.bits[w] |= 1 << b;
        !had
    }

    /// Removes `id`; false if it was not there.
    #[inline]
    pub(crate) fn remove(&mut self, id: RobotId) -> bool {
        if id >= DENSE_IDS {
            return match self.sparse.binary_search(&id) {
                Ok(i) => {
                    self.sparse.remove(i);
                    true
                }
                Err(_) => false,
            };
        }
        let (w, b) = ((id / 64) as usize, id % 64);
        match self.bits.get_mut(w) {
            Some(x) if *x >> b & 1 == 1 => {
                *x &= !(1 << b);
                true
            }
            _ => false,
        }
    }

    /// Whether the set holds no id.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.sparse.is_empty() && self.bits.iter().all(|&w| w == 0)
    }

    /// Whether `id` is in the set.
    #[inline]
    pub(crate) fn contains(&self, id: RobotId) -> bool {
        if id >= DENSE_IDS {
            return self.sparse.binary_search(&id).is_ok();
        }
        self.bits
            .get((id / 64) as usize)
            .is_some_and(|x| x >> (id % 64) & 1 == 1)
    }
}

#[derive(Clone, Debug)]
enum Phase {
    Bidding,
    Awarded { robot: RobotId, cost: f64 },
}

#[derive(Clone, Debug)]
struct Auction {
    task: TaskSpec,
    deadline: f64,
    /// Invited robots that have not answered yet.
    pending: IdSet,
    /// Invited robots that may not take the task (another world, a class they cannot run):
    /// a bid from one counts as a refusal.
    unfit: IdSet,
    /// `unfit` holds a robot (most auctions: none; a bid then needs no look-up).
    unfit_any: bool,
    waiting: usize,
    /// Answers (bids and refusals) received.
    answered: usize,
    /// (cost, robot) of every bid still in play.
    bids: Vec<(f64, RobotId)>,
    phase: Phase,
}

/// The auctioneer: runs any number of auctions at once.
#[derive(Clone, Debug)]
pub struct Auctioneer {
    config: CnpConfig,
    me: RobotId,
    next: AuctionId,
    open: IdMap<Auction>,
    /// (deadline, auction): the earliest first; stale entries are skipped.
    timers: BinaryHeap<Reverse<(Due, AuctionId)>>,
    /// Auctions that ended (with an award, or with nobody left to take the task) and their
    /// task, for answering late accepts with `cancel`: the last `keep_closed` of them, the
    /// oldest first in `closed_order`.
    closed: IdMap<TaskId>,
    closed_order: VecDeque<AuctionId>,
    keep_closed: usize,
    out: Vec<CnpOut>,
    /// Counters.
    pub stats: CnpStats,
}

/// What the auctions did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CnpStats {
    /// Auctions opened.
    pub announced: u64,
    /// Bids with a cost received in time.
    pub bids: u64,
    /// Refusals received in time.
    pub refusals: u64,
    /// Bids and refusals that came after bidding closed, or for an auction not open.
    pub late_bids: u64,
    /// Awards sent (each award again after a decline counts).
    pub awards: u64,
    /// Awards declined, or not answered by their deadline.
    pub declines: u64,
    /// Auctions ended with an accepted award.
    pub allocated: u64,
    /// Auctions ended with nobody taking the task.
    pub unallocated: u64,
}

impl Auctioneer {
    /// An auctioneer with id `me` (0 for the Control Center).
    pub fn new(me: RobotId, config: CnpConfig) -> Self {
        Auctioneer {
            config,
            me,
            next: 1,
            open: IdMap::default(),
            timers: BinaryHeap::new(),
            closed: IdMap::default(),
            closed_order: VecDeque::new(),
            keep_closed: DEFAULT_KEEP_CLOSED,
            out: Vec::new(),
            stats: CnpStats::default(),
        }
    }

    /// Remembers at most `n` ended auctions for answering late accepts with `cancel` (default
    /// [`DEFAULT_KEEP_CLOSED`]); an accept for one forgotten is refused as for an auction that
    /// is not open. Without a bound an auctioneer that runs for days would remember every
    /// auction it ever held.
    pub fn with_closed_limit(mut self, n: usize) -> Self {
        self.keep_closed = n;
        self
    }

    /// Remembers that `auction` (of `task`) ended, forgetting the oldest beyond the limit.
    fn remember_closed(&mut self, auction: AuctionId, task: TaskId) {
        if self.keep_closed == 0 {
            return;
        }
        if self.closed.insert(auction, task).is_none() {
            self.closed_order.push_back(auction);
        }
        while self.closed_order.len() > self.keep_closed {
            if let Some(old) = self.closed_order.pop_front() {
                self.closed.remove(&old);
            }
        }
    }

    /// The timing in use.
    pub fn config(&self) -> CnpConfig {
        self.config
    }

    /// Changes the timing of later auctions.
    pub fn set_config(&mut self, config: CnpConfig) {
        self.config = config;
    }

    /// Announces `task` to `robots` (those present now) at time `now`. Returns the auction id.
    pub fn announce(
        &mut self,
        task: TaskSpec,
        robots: impl IntoIterator<Item = RobotId>,
        now: f64,
    ) -> AuctionId {
        let mut invited = IdSet::default();
        for r in robots {
            invited.insert(r);
        }
        self.announce_to(task, invited, IdSet::default(), now)
    }

    /// [`Auctioneer::announce`] to a set of robots, of which those in `unfit` may not take
    /// the task (their bids count as refusals).
    pub(crate) fn announce_to(
        &mut self,
        task: TaskSpec,
        invited: IdSet,
        unfit: IdSet,
        now: f64,
    ) -> AuctionId {
        let id = self.next;
        self.next += 1;
        let waiting = invited.len();
        let deadline = now + self.config.bid_window;
        self.out.push(CnpOut::Send {
            to: None,
            msg: Msg::Announce {
                auction: id,
                task: Box::new(task.clone()),
                deadline,
            },
        });
        self.stats.announced += 1;
        self.open.insert(
            id,
            Auction {
                task,
                deadline,
                pending: invited,
                unfit_any: !unfit.is_empty(),
                unfit,
                waiting,
                answered: 0,
                bids: Vec::with_capacity(waiting),
                phase: Phase::Bidding,
            },
        );
        self.timers.push(Reverse((Due(deadline), id)));
        if waiting == 0 {
            self.close_bidding(id, now);
        }
        id
    }

    /// The auction `auction` if it takes bids at `now`, for a run of bids from one batch
    /// (see [`BidRun`]).
    #[inline]
    pub(crate) fn bid_run(&mut self, auction: AuctionId, now: f64) -> Option<BidRun<'_>> {
        let a = self.open.get_mut(&auction)?;
        if !matches!(a.phase, Phase::Bidding) || now > a.deadline {
            return None;
        }
        Some(BidRun {
            a,
            stats: &mut self.stats,
        })
    }

    /// A bid (or refusal, `cost: None`) from `robot`. `Err` (and nothing changed) for an
    /// auction not open, after bidding closed, or from a robot not invited or that has
    /// answered already; a bid from a robot that may not take the task counts as its
    /// refusal and is `Err` too (`Unfit`).
    #[inline]
    pub fn on_bid(
        &mut self,
        auction: AuctionId,
        robot: RobotId,
        cost: Option<f64>,
        now: f64,
    ) -> Result<(), AuctionError> {
        let Some(a) = self.open.get_mut(&auction) else {
            self.stats.late_bids += 1;
            return Err(AuctionError::NotOpen(auction));
        };
        if !matches!(a.phase, Phase::Bidding) || now > a.deadline {
            self.stats.late_bids += 1;
            return Err(AuctionError::BiddingClosed(auction));
        }
        if !a.pending.remove(robot) {
            return Err(AuctionError::NotInvited { auction, robot });
        }
        a.waiting -= 1;
        a.answered += 1;
        let mut result = Ok(());
        match cost {
            Some(c) if valid_cost(c) && a.unfit_any && a.unfit.contains(robot) => {
                self.stats.refusals += 1;
                result = Err(AuctionError::Unfit { auction, robot });
            }
            Some(c) if valid_cost(c) => {
                a.bids.push((c, robot));
                self.stats.bids += 1;
            }
            _ => self.stats.refusals += 1,
        }
        if a.waiting == 0 {
            self.close_bidding(auction, now);
        }
        result
    }

    /// The lowest bid, ties to the lower robot id. Every cost kept is valid (≥ 0, or −0):
    /// for those, the bits with the sign bit flipped order as `total_cmp` does (−0 first),
    /// so the comparison is one of integers.
    fn best(bids: &[(f64, RobotId)]) -> Option<usize> {
        let key = |&(c, r): &(f64, RobotId)| {
            debug_assert!(valid_cost(c));
            ((c.to_bits() ^ (1 << 63)) as u128) << 32 | r as u128
        };
        let mut best: Option<(usize, u128)> = None;
        for (i, b) in bids.iter().enumerate() {
            let k = key(b);
            if best.is_none_or(|(_, bk)| k < bk) {
                best = Some((i, k));
            }
        }
        best.map(|(i, _)| i)
    }

    /// Closes bidding of an auction whose [`BidRun`] is complete.
    pub(crate) fn close_bidding_now(&mut self, auction: AuctionId, now: f64) {
        self.close_bidding(auction, now);
    }

    /// Awards to the best remaining bid, or gives the task back.
    fn close_bidding(&mut self, auction: AuctionId, now: f64) {
        let Some(a) = self.open.get_mut(&auction) else {
            return;
        };
        match Self::best(&a.bids) {
            Some(i) => {
                let (cost, robot) = a.bids.swap_remove(i);
                let deadline = now + self.config.accept_window;
                a.deadline = deadline;
                a.phase = Phase::Awarded { robot, cost };
                self.stats.awards += 1;
                self.out.push(CnpOut::Send {
                    to: Some(robot),
                    msg: Msg::Award {
                        auction,
                        task: Box::new(a.task.clone()),
                        winner: robot,
                        deadline,
                    },
                });
                self.timers.push(Reverse((Due(deadline), auction)));
            }
            None => {
                let Some(a) = self.open.remove(&auction) else {
                    return;
                };
                self.stats.unallocated += 1;
                // An award that lapsed may still be accepted late: that robot must drop it.
                if matches!(a.phase, Phase::Awarded { .. }) {
                    self.remember_closed(auction, a.task.id);
                }
                let bids = a.answered;
                self.out.push(CnpOut::Unallocated {
                    auction,
                    task: a.task,
                    bids,
                });
            }
        }
    }

    /// `robot` accepted the award of `auction`. An accept too late, or for an award it
    /// does not hold, is answered with `cancel`; `Err` (and nothing sent) for an auction
    /// that is neither open nor ended after an award.
    pub fn on_accept(
        &mut self,
        auction: AuctionId,
        robot: RobotId,
        now: f64,
    ) -> Result<(), AuctionError> {
        let on_time = self.open.get(&auction).is_some_and(|a| {
            matches!(a.phase, Phase::Awarded { robot: r, .. } if r == robot) && now <= a.deadline
        });
        if on_time {
            if let Some(a) = self.open.remove(&auction) {
                let Phase::Awarded { cost, .. } = a.phase else {
                    return Ok(());
                };
                self.stats.allocated += 1;
                self.remember_closed(auction, a.task.id);
                self.out.push(CnpOut::Allocated {
                    auction,
                    task: a.task.id,
                    robot,
                    cost,
                });
            }
            return Ok(());
        }
        // Too late, or never awarded to it: the robot must drop the task.
        let task = self
            .open
            .get(&auction)
            .map(|a| a.task.id)
            .or_else(|| self.closed.get(&auction).copied());
        let Some(task) = task else {
            return Err(AuctionError::NotOpen(auction));
        };
        self.out.push(CnpOut::Note(format!(
            "auction {auction}: accept from robot {robot} came too late; cancelled"
        )));
        self.out.push(CnpOut::Send {
            to: Some(robot),
            msg: Msg::Cancel { auction, task },
        });
        Ok(())
    }

    /// `robot` declined the award of `auction`: the next-best bid gets it. `Err` (and
    /// nothing changed) when it holds no award of that auction.
    pub fn on_decline(
        &mut self,
        auction: AuctionId,
        robot: RobotId,
        now: f64,
    ) -> Result<(), AuctionError> {
        let Some(a) = self.open.get(&auction) else {
            return Err(AuctionError::NotOpen(auction));
        };
        if !matches!(a.phase, Phase::Awarded { robot: r, .. } if r == robot) {
            return Err(AuctionError::NoAward { auction, robot });
        }
        self.stats.declines += 1;
        self.close_bidding(auction, now);
        Ok(())
    }

    /// `robot` left: its bids are dropped, and an award it held moves on.
    pub fn robot_left(&mut self, robot: RobotId, now: f64) {
        let mut ids: Vec<AuctionId> = self.open.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let Some(a) = self.open.get_mut(&id) else {
                continue;
            };
            a.bids.retain(|&(_, r)| r != robot);
            match a.phase {
                Phase::Bidding => {
                    if a.pending.remove(robot) {
                        a.waiting -= 1;
                        if a.waiting == 0 {
                            self.close_bidding(id, now);
                        }
                    }
                }
                Phase::Awarded { robot: r, .. } if r == robot => self.close_bidding(id, now),
                Phase::Awarded { .. } => {}
            }
        }
    }

    /// Closes whatever is due at `now`: bidding ends at its deadline, a silent winner
    /// counts as a decline.
    pub fn handle_timeout(&mut self, now: f64) {
        while let Some(&Reverse((Due(t), id))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            let Some(a) = self.open.get(&id) else {
                continue;
            };
            if a.deadline.total_cmp(&t) != Ordering::Equal {
                continue; // a later deadline replaced this one
            }
            if let Phase::Awarded { robot, .. } = a.phase {
                self.out.push(CnpOut::Note(format!(
                    "auction {id}: robot {robot} did not answer its award in time"
                )));
                self.stats.declines += 1;
            }
            self.close_bidding(id, now);
        }
    }

    /// When [`Auctioneer::handle_timeout`] next has something to do.
    pub fn poll_timeout(&mut self) -> Option<f64> {
        while let Some(&Reverse((Due(t), id))) = self.timers.peek() {
            match self.open.get(&id) {
                Some(a) if a.deadline.total_cmp(&t) == Ordering::Equal => return Some(t),
                _ => {
                    self.timers.pop();
                }
            }
        }
        None
    }

    /// Whether the auctions produced something since the last [`Auctioneer::drain`].
    #[inline]
    pub fn has_output(&self) -> bool {
        !self.out.is_empty()
    }

    /// Takes what the auctions produced since the last call.
    pub fn drain(&mut self) -> std::vec::Drain<'_, CnpOut> {
        self.out.drain(..)
    }

    /// The robot the award of `auction` is out to, if it is open and awarded.
    pub fn awarded_to(&self, auction: AuctionId) -> Option<RobotId> {
        match self.open.get(&auction)?.phase {
            Phase::Awarded { robot, .. } => Some(robot),
            Phase::Bidding => None,
        }
    }

    /// Auctions not yet decided.
    pub fn open_count(&self) -> usize {
        self.open.len()
    }

    /// The sender id of this auctioneer's messages.
    pub fn id(&self) -> RobotId {
        self.me
    }
}

/// Bids for one auction that is taking bids, taken one after another with the auction
/// looked up once: each has exactly the effect of [`Auctioneer::on_bid`] for an in-time bid
/// from an invited robot that has not answered yet.
pub(crate) struct BidRun<'a> {
    a: &'a mut Auction,
    stats: &'a mut CnpStats,
}

impl BidRun<'_> {
    /// Takes the answer of `robot`: a bid with cost `cost` if it is ≥ 0 (or −0), a refusal
    /// if it is negative (the caller checked it is one or the other; see
    /// [`crate::outbox`]); false (and nothing changed) if it is not a robot still to answer
    /// (the caller hands it to [`Auctioneer::on_bid`], which says why).
    #[inline]
    pub(crate) fn take(&mut self, robot: RobotId, cost: f64) -> bool {
        // A bid from a robot that may not take the task: the general path says why.
        if cost >= 0.0 && self.a.unfit.contains(robot) {
            return false;
        }
        if !self.a.pending.remove(robot) {
            return false;
        }
        self.a.waiting -= 1;
        self.a.answered += 1;
        if cost >= 0.0 {
            self.a.bids.push((cost, robot));
            self.stats.bids += 1;
        } else {
            self.stats.refusals += 1;
        }
        true
    }

    /// Every invited robot has answered: bidding must close
    /// ([`Auctioneer::close_bidding_now`]).
    #[inline]
    pub(crate) fn complete(&self) -> bool {
        self.a.waiting == 0
    }
}

/// How far a robot has to drive between two points (metres), or `None` if it cannot.
pub trait CostModel {
    /// The distance to drive from `from` to `to`, metres; `None` if the robot cannot get there.
    fn distance(&self, from: (f64, f64), to: (f64, f64)) -> Option<f64>;
}

/// Straight-line distance (a square root of the sum of squares: exact to the last bit on
/// every platform, unlike `hypot`, and several times faster).
#[derive(Clone, Copy, Debug, Default)]
pub struct Euclidean;

impl CostModel for Euclidean {
    fn distance(&self, from: (f64, f64), to: (f64, f64)) -> Option<f64> {
        let (dx, dy) = (to.0 - from.0, to.1 - from.1);
        Some((dx * dx + dy * dy).sqrt())
    }
}

/// The default largest number of tasks a robot holds that may still run (neither final nor
/// BLOCKED) before it stops bidding (`max_queue`).
pub const DEFAULT_MAX_QUEUE: usize = 3;

/// A robot's CNP Manager: bids its marginal cost and answers awards.
#[derive(Clone, Debug)]
pub struct Bidder {
    /// The robot this CNP Manager bids for.
    pub robot: RobotId,
    /// Tasks held that may still run (neither final nor BLOCKED: see
    /// [`TaskManager::pending`]) from which on the robot refuses to bid and declines awards.
    /// A BLOCKED task takes no place: it waits for the operator and will not run.
    pub max_queue: usize,
    /// A robot that is leaving declines every award.
    pub leaving: bool,
}

impl Bidder {
    /// A bidder for `robot`.
    pub fn new(robot: RobotId) -> Self {
        Bidder {
            robot,
            max_queue: DEFAULT_MAX_QUEUE,
            leaving: false,
        }
    }

    /// The marginal cost for this robot, at `here`, to add `task` to what it holds: for a
    /// movement task the extra distance from where its queue ends to the task's first point
    /// plus the task's own length (metres); for perception and pan-tilt the seconds its
    /// class is already booked plus the task's own (seconds). BLOCKED tasks, which will not
    /// run, add nothing to either. `None`: it refuses (leaving, a task it may not take, or
    /// `max_queue` tasks that may still run held already).
    #[inline(always)]
    pub fn cost(
        &self,
        task: &TaskSpec,
        tm: &TaskManager,
        here: (f64, f64),
        model: &dyn CostModel,
    ) -> Option<f64> {
        if self.leaving || tm.refusal(task).is_some() || tm.pending() >= self.max_queue {
            return None;
        }
        match task.class() {
            TaskClass::Movement => {
                let end = tm.movement_end().unwrap_or(here);
                let first = task.kind.first_point()?;
                let approach = model.distance(end, first)?;
                let mut own = 0.0;
                if let crate::model::TaskKind::Path { points } = &task.kind {
                    for w in points.windows(2) {
                        own += model.distance((w[0][0], w[0][1]), (w[1][0], w[1][1]))?;
                    }
                }
                Some(approach + own)
            }
            class => {
                let booked: f64 = tm
                    .queue()
                    .filter(|h| {
                        h.spec.class() == class && !matches!(h.state, TaskState::Blocked { .. })
                    })
                    .map(|h| seconds(&h.spec))
                    .sum();
                Some(booked + seconds(task))
            }
        }
    }

    /// The answer to an announcement.
    #[inline]
    pub fn on_announce(
        &self,
        auction: AuctionId,
        task: &TaskSpec,
        tm: &TaskManager,
        here: (f64, f64),
        model: &dyn CostModel,
    ) -> Msg {
        Msg::Bid {
            auction,
            robot: self.robot,
            cost: self.cost(task, tm, here, model),
        }
    }

    /// The answer to an award: accept (then submit the task to the Task Manager) or decline.
    pub fn on_award(&self, auction: AuctionId, task: &TaskSpec, tm: &TaskManager) -> Msg {
        let reason = if self.leaving {
            Some("leaving".to_string())
        } else if let Some(code) = tm.refusal(task) {
            Some(format!("cannot take it ({code:?})"))
        } else if tm.pending() >= self.max_queue {
            Some(format!("queue full ({} tasks)", tm.pending()))
        } else {
            None
        };
        match reason {
            None => Msg::Accept {
                auction,
                robot: self.robot,
            },
            Some(reason) => Msg::Decline {
                auction,
                robot: self.robot,
                reason,
            },
        }
    }
}

fn seconds(task: &TaskSpec) -> f64 {
    match task.kind {
        crate::model::TaskKind::Perceive { seconds }
        | crate::model::TaskKind::PanTilt { seconds, .. } => seconds,
        _ => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn id_sets_keep_small_and_huge_ids() {
        let mut s = IdSet::default();
        for id in [5, 70, u32::MAX, 3, DENSE_IDS, 70] {
            s.insert(id);
        }
        assert_eq!(s.len(), 5);
        assert!(s.contains(u32::MAX) && s.contains(70) && !s.contains(71));
        assert!(s.remove(u32::MAX) && !s.remove(u32::MAX) && s.remove(5));
        assert_eq!(s.len(), 3);
        assert!(s.contains(3) && s.contains(DENSE_IDS) && !s.contains(5));
        assert!(s.bits.len() <= 2, "a huge id allocates no bits");
    }

    /// An auctioneer that runs for days remembered every auction it ever held for late
    /// accepts; it keeps the last `with_closed_limit` of them.
    #[test]
    fn ended_auctions_are_remembered_up_to_the_limit() {
        use crate::model::{TaskKind, TaskSpec};
        let mut a = Auctioneer::new(0, CnpConfig::default()).with_closed_limit(2);
        let mut ids = Vec::new();
        for k in 1..=5u64 {
            let task = TaskSpec::new(k, TaskKind::Goto { x: 1.0, y: 1.0 });
            let id = a.announce(task, 7..=7, 0.0);
            a.on_bid(id, 7, Some(1.0), 0.0).expect("a bid in time");
            a.on_accept(id, 7, 0.0).expect("the award accepted");
            a.drain().for_each(drop);
            ids.push(id);
        }
        assert_eq!(a.closed.len(), 2);
        assert_eq!(a.closed_order.len(), 2);
        // The oldest is forgotten: its late accept is refused; the latest is cancelled.
        assert!(a.on_accept(ids[0], 8, 9.0).is_err());
        a.on_accept(ids[4], 8, 9.0).expect("answered");
        assert!(a.drain().any(|o| matches!(
            o,
            CnpOut::Send {
                msg: Msg::Cancel { .. },
                ..
            }
        )));
    }
}
