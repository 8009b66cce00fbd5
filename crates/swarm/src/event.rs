//! Discrete events: tags, payloads and the time-ordered queue.
//!
//! The queue is a binary heap ordered by `(time, sequence number)`: two events due at the
//! same instant come out in the order they were scheduled, so the run is deterministic. An
//! event can never be scheduled in the past (it is moved to "now").

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::ecs::EntityId;

/// An event's tag: what happened. Reactive systems and scripts select events by tag.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tag(Cow<'static, str>);

impl Tag {
    /// Two colliders started touching (payload: the pair).
    pub const COLLISION: Tag = Tag::fixed("Collision");
    /// A robot reached the end of its path.
    pub const END_OF_PATH: Tag = Tag::fixed("EndOfPath");
    /// Error: no route to the requested goal.
    pub const UNREACHABLE: Tag = Tag::fixed("Unreachable");
    /// A claw finished grabbing.
    pub const GRABBED: Tag = Tag::fixed("Grabbed");
    /// A claw finished dropping.
    pub const DROPPED: Tag = Tag::fixed("Dropped");
    /// Error: a grab could not be done (item missing, too far, claw full).
    pub const GRAB_FAILED: Tag = Tag::fixed("GrabFailed");
    /// Error: nothing to drop.
    pub const DROP_FAILED: Tag = Tag::fixed("DropFailed");
    /// Error: a battery ran out.
    pub const BATTERY_EMPTY: Tag = Tag::fixed("BatteryEmpty");
    /// A `Wait` elapsed.
    pub const WAKEUP: Tag = Tag::fixed("Wakeup");
    /// A drone reached its target.
    pub const ARRIVED: Tag = Tag::fixed("Arrived");
    /// A script ran its last instruction.
    pub const SCRIPT_DONE: Tag = Tag::fixed("ScriptDone");
    /// Error: a script was aborted by an error handler.
    pub const SCRIPT_FAILED: Tag = Tag::fixed("ScriptFailed");
    /// Ends the run.
    pub const KILL_SWITCH: Tag = Tag::fixed("KillSwitch");
    /// Error: an instruction failed for another reason.
    pub const INSTRUCTION_FAILED: Tag = Tag::fixed("InstructionFailed");

    /// A tag known at compile time.
    pub const fn fixed(name: &'static str) -> Tag {
        Tag(Cow::Borrowed(name))
    }

    /// A tag made at run time (e.g. named in a scenario file).
    pub fn new(name: impl Into<String>) -> Tag {
        Tag(Cow::Owned(name.into()))
    }

    /// The tag's name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Tag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What an event carries besides its tag and entity.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Payload {
    /// Nothing besides the tag and the entity.
    #[default]
    None,
    /// Two entities (a collision).
    Pair(EntityId, EntityId),
    /// A message (error details, log text).
    Text(String),
    /// A number (a custom event's value).
    Value(f64),
}

/// Something that happens at an instant of simulated time.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// What happened (e.g. `EndOfPath`, `Collision`).
    pub tag: Tag,
    /// The entity concerned, if any.
    pub entity: Option<EntityId>,
    /// Error events trigger script error handlers.
    pub error: bool,
    /// An observer's own event (a snapshot tick, the wall clock): delivered like any other
    /// but not counted in the run's figures, so observing a run does not change them.
    pub observation: bool,
    /// What it carries.
    pub payload: Payload,
}

impl Event {
    /// An observer's event with no entity (not counted in the run's figures).
    pub fn observation(tag: Tag) -> Self {
        Event {
            observation: true,
            ..Event::global(tag)
        }
    }

    /// An event with no entity.
    pub fn global(tag: Tag) -> Self {
        Event {
            tag,
            entity: None,
            error: false,
            observation: false,
            payload: Payload::None,
        }
    }

    /// An event about `entity`.
    pub fn about(tag: Tag, entity: EntityId) -> Self {
        Event {
            tag,
            entity: Some(entity),
            error: false,
            observation: false,
            payload: Payload::None,
        }
    }

    /// An error about `entity`, with an explanation.
    pub fn error(tag: Tag, entity: EntityId, message: impl Into<String>) -> Self {
        Event {
            tag,
            entity: Some(entity),
            error: true,
            observation: false,
            payload: Payload::Text(message.into()),
        }
    }

    /// The explanation of an error event, if it has one.
    pub fn message(&self) -> Option<&str> {
        match &self.payload {
            Payload::Text(t) => Some(t),
            _ => None,
        }
    }
}

#[derive(Debug)]
struct Queued {
    time: f64,
    seq: u64,
    event: Event,
}

impl PartialEq for Queued {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Queued {
    // Reversed: the heap's maximum is the earliest (time, seq).
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .total_cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

/// The time-ordered event queue.
#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Queued>,
    seq: u64,
    now: f64,
}

impl EventQueue {
    /// Schedules `event` at `time` (seconds of simulated time; never before now).
    pub fn schedule(&mut self, time: f64, event: Event) {
        let time = if time.is_nan() || time < self.now {
            self.now
        } else {
            time
        };
        self.seq += 1;
        self.heap.push(Queued {
            time,
            seq: self.seq,
            event,
        });
    }

    /// Schedules `event` now (it is handled before time moves on).
    pub fn emit(&mut self, event: Event) {
        self.schedule(self.now, event);
    }

    /// Schedules `event` `delay` seconds from now.
    pub fn after(&mut self, delay: f64, event: Event) {
        self.schedule(self.now + delay.max(0.0), event);
    }

    /// The current simulated time as the queue sees it.
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Moves the clock (never backwards).
    pub(crate) fn set_now(&mut self, t: f64) {
        if t > self.now {
            self.now = t;
        }
    }

    /// Time of the next event.
    pub fn peek_time(&self) -> Option<f64> {
        self.heap.peek().map(|q| q.time)
    }

    /// Takes the next event if it is due at or before `t`, moving the clock to it.
    pub fn pop_due(&mut self, t: f64) -> Option<(f64, Event)> {
        self.pop_if(|time| time <= t)
    }

    /// Takes the next event if it is due strictly before `t`, moving the clock to it.
    pub fn pop_before(&mut self, t: f64) -> Option<(f64, Event)> {
        self.pop_if(|time| time < t)
    }

    fn pop_if(&mut self, due: impl Fn(f64) -> bool) -> Option<(f64, Event)> {
        if due(self.heap.peek()?.time) {
            let q = self.heap.pop()?;
            self.set_now(q.time);
            Some((q.time, q.event))
        } else {
            None
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_order_then_schedule_order() {
        let mut q = EventQueue::default();
        q.schedule(2.0, Event::global(Tag::new("c")));
        q.schedule(1.0, Event::global(Tag::new("a")));
        q.schedule(1.0, Event::global(Tag::new("b")));
        let order: Vec<String> = std::iter::from_fn(|| q.pop_due(10.0))
            .map(|(_, e)| e.tag.as_str().to_string())
            .collect();
        assert_eq!(order, ["a", "b", "c"]);
        q.schedule(1.0, Event::global(Tag::new("late")));
        assert_eq!(q.peek_time(), Some(2.0), "the past is now");
    }
}
