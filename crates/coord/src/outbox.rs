//! What the robots of one process send the Control Center, in order: the in-process
//! transport of the General Robot Interface.
//!
//! Over a network every message is an [`Envelope`] on a line. In one process (the swarm's
//! coordination system, the benchmark) the message every robot sends in every auction, its
//! bid, does not need one: an [`Outbox`] keeps the bids for one auction that follow one
//! another as one run of compact `(robot, cost)` records (16 bytes each, nothing to drop),
//! and every other message as its envelope, all in the order they were sent.
//! [`crate::cc::ControlCenter::handle_outbox`] takes it in that order, with exactly the
//! effect of [`crate::cc::ControlCenter::handle`] on each message; a robot writes its bid
//! straight into it with [`crate::robot::RobotAgent::handle_into`]. A bid is still a message:
//! the robot counts it as sent and [`Outbox::len`] counts it.
//!
//! Only a bid that the wire would carry unchanged is kept compact: sent to the Control
//! Center, in the sender's own name, with no cost (a refusal) or a valid one. Anything else
//! (a bid in another robot's name, a negative cost) stays an envelope, so the Control
//! Center refuses it as it would from the network.

use crate::model::{AuctionId, RobotId, CONTROL_CENTER};
use crate::wire::{valid_cost, Envelope, Msg};

/// The cost a compact refusal carries (a bid with no cost): not a valid cost, so it cannot
/// be mistaken for one.
const REFUSAL: f64 = -1.0;

/// One bid kept compact: the robot (the sender, in its own name) and its cost: a valid one
/// (≥ 0, or −0), or [`REFUSAL`] (negative) for a bid with no cost.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct CompactBid {
    pub(crate) robot: RobotId,
    pub(crate) cost: f64,
}

impl CompactBid {
    /// The cost as the message has it: `None` for a refusal.
    #[inline(always)]
    pub(crate) fn cost(self) -> Option<f64> {
        valid_cost(self.cost).then_some(self.cost)
    }

    /// The message as it would travel on the wire.
    pub(crate) fn envelope(self, auction: AuctionId) -> Envelope {
        Envelope {
            from: self.robot,
            to: Some(CONTROL_CENTER),
            msg: Msg::Bid {
                auction,
                robot: self.robot,
                cost: self.cost(),
            },
        }
    }
}

/// One entry of an [`Outbox`], in order.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Item {
    /// A message as its envelope.
    Env(Envelope),
    /// Bids for `auction` that followed one another: `bids[start..start + len]`.
    Bids {
        auction: AuctionId,
        start: usize,
        len: usize,
    },
}

/// Messages for the Control Center from the robots of one process, in the order they were
/// sent, bids kept compact (see the [module](self)). Emptied by
/// [`crate::cc::ControlCenter::handle_outbox`], which keeps its buffers for the next round.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outbox {
    pub(crate) items: Vec<Item>,
    pub(crate) bids: Vec<CompactBid>,
}

impl Outbox {
    /// An empty outbox.
    pub fn new() -> Self {
        Outbox::default()
    }

    /// Messages in it (each bid one).
    pub fn len(&self) -> usize {
        self.bids.len()
            + self
                .items
                .iter()
                .filter(|i| matches!(i, Item::Env(_)))
                .count()
    }

    /// Whether it holds no message.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Drops every message in it, keeping its buffers.
    pub fn clear(&mut self) {
        self.items.clear();
        self.bids.clear();
    }

    /// Adds a message after those already in it.
    pub fn push(&mut self, env: Envelope) {
        if let Msg::Bid {
            auction,
            robot,
            cost,
        } = env.msg
        {
            if env.from == robot && env.to == Some(CONTROL_CENTER) && cost.is_none_or(valid_cost) {
                self.push_bid(auction, robot, cost);
                return;
            }
        }
        self.items.push(Item::Env(env));
    }

    /// Adds `robot`'s bid for `auction` (`None`: it refuses), sent in its own name, after
    /// the messages already in it: the same as [`Outbox::push`] of its envelope.
    #[inline]
    pub fn push_bid(&mut self, auction: AuctionId, robot: RobotId, cost: Option<f64>) {
        let cost = match cost {
            None => REFUSAL,
            Some(c) if valid_cost(c) => c,
            Some(_) => {
                // Invalid: kept as the envelope the Control Center refuses.
                self.items.push(Item::Env(Envelope {
                    from: robot,
                    to: Some(CONTROL_CENTER),
                    msg: Msg::Bid {
                        auction,
                        robot,
                        cost,
                    },
                }));
                return;
            }
        };
        match self.items.last_mut() {
            Some(Item::Bids {
                auction: a, len, ..
            }) if *a == auction => *len += 1,
            _ => self.items.push(Item::Bids {
                auction,
                start: self.bids.len(),
                len: 1,
            }),
        }
        self.bids.push(CompactBid { robot, cost });
    }

    /// The messages as envelopes, in order (what the wire would carry).
    pub fn envelopes(&self) -> Vec<Envelope> {
        let mut out = Vec::with_capacity(self.len());
        for item in &self.items {
            match item {
                Item::Env(e) => out.push(e.clone()),
                Item::Bids {
                    auction,
                    start,
                    len,
                } => out.extend(
                    self.bids[*start..*start + *len]
                        .iter()
                        .map(|b| b.envelope(*auction)),
                ),
            }
        }
        out
    }
}

impl Extend<Envelope> for Outbox {
    fn extend<I: IntoIterator<Item = Envelope>>(&mut self, iter: I) {
        for e in iter {
            self.push(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bid(from: RobotId, auction: AuctionId, robot: RobotId, cost: Option<f64>) -> Envelope {
        Envelope {
            from,
            to: Some(CONTROL_CENTER),
            msg: Msg::Bid {
                auction,
                robot,
                cost,
            },
        }
    }

    #[test]
    fn an_outbox_gives_back_what_was_pushed_in_order() {
        let msgs = vec![
            bid(1, 1, 1, Some(4.0)),
            bid(2, 1, 2, None),
            bid(3, 1, 3, Some(-0.0)),
            bid(3, 2, 3, Some(1.0)),
            bid(4, 2, 5, Some(1.0)),      // in another's name: an envelope
            bid(4, 2, 4, Some(-1.0)),     // negative: an envelope
            bid(4, 2, 4, Some(f64::NAN)), // not a number: an envelope
            Envelope {
                from: 4,
                to: None,
                msg: Msg::Bid {
                    auction: 2,
                    robot: 4,
                    cost: None,
                },
            }, // not to the Control Center: an envelope
            Envelope {
                from: 4,
                to: Some(CONTROL_CENTER),
                msg: Msg::Bye { robot: 4 },
            },
            bid(5, 2, 5, Some(2.0)),
            bid(6, 2, 6, Some(3.0)),
        ];
        let mut ob = Outbox::new();
        ob.extend(msgs.clone());
        assert_eq!(ob.len(), msgs.len());
        assert_eq!(ob.bids.len(), 6);
        assert_eq!(ob.items.len(), 8, "{:?}", ob.items);
        let back = ob.envelopes();
        assert_eq!(format!("{back:?}"), format!("{msgs:?}"));
        let mut by_push_bid = Outbox::new();
        by_push_bid.push_bid(1, 1, Some(4.0));
        by_push_bid.push_bid(1, 2, None);
        by_push_bid.push_bid(1, 3, Some(-0.0));
        by_push_bid.push_bid(2, 3, Some(1.0));
        by_push_bid.push_bid(2, 4, Some(-1.0));
        let mut pushed = Outbox::new();
        pushed.extend(msgs[..4].iter().cloned());
        pushed.push(msgs[5].clone());
        assert_eq!(by_push_bid, pushed);
        ob.clear();
        assert!(ob.is_empty() && ob.envelopes().is_empty());
    }
}
