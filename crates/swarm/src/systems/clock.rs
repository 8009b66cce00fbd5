use crate::event::{Event, Payload, Tag};
use crate::sim::{Ctx, Summary, System};

/// The clock system: once per simulated second it records the wall seconds that second
/// took (in `Stats::clock`, and as a `Clock` event the recorders write). The wall clock is
/// handed in by the shell — the core never reads a clock itself.
pub struct ClockSystem {
    now: Box<dyn FnMut() -> f64 + Send>,
    last: f64,
}

impl ClockSystem {
    /// The tag of the clock's events (payload: wall seconds of the last simulated second).
    pub const TAG: Tag = Tag::fixed("Clock");

    /// A clock system reading wall seconds from `now`.
    pub fn new(now: Box<dyn FnMut() -> f64 + Send>) -> Self {
        ClockSystem { now, last: 0.0 }
    }
}

impl System for ClockSystem {
    fn name(&self) -> &str {
        "clock"
    }

    fn start(&mut self, ctx: &mut Ctx) {
        self.last = (self.now)();
        ctx.events
            .schedule(1.0, Event::observation(Tag::fixed("ClockTick")));
    }

    fn wants(&self, event: &Event) -> bool {
        event.tag.as_str() == "ClockTick"
    }

    fn react(&mut self, _event: &Event, ctx: &mut Ctx) {
        let now = (self.now)();
        let spent = now - self.last;
        self.last = now;
        ctx.stats.clock.push(spent);
        ctx.events.emit(Event {
            tag: Self::TAG,
            entity: None,
            error: false,
            observation: true,
            payload: Payload::Value(spent),
        });
        ctx.events
            .after(1.0, Event::observation(Tag::fixed("ClockTick")));
    }

    fn finish(&mut self, _ctx: &mut Ctx, _summary: &Summary) {}
}
