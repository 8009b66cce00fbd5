//! Work still to do in a run, of every kind: each system whose work can end (the scripts, the
//! generated drones) says here when it has work and when its work is done, and the run's
//! kill switch ([`crate::SimConfig::end_when_done`]) is raised once no kind of work is left —
//! not when the first kind ends (scripted robots done while drones still fly).

use std::collections::BTreeSet;

use super::Ctx;
use crate::ecs::Resource;
use crate::event::{Event, Tag};

/// The kinds of work not yet done (a world-level resource).
#[derive(Clone, Debug, Default)]
pub struct WorkLeft {
    pending: BTreeSet<&'static str>,
    ended: bool,
}

impl Resource for WorkLeft {
    fn initial() -> &'static Self {
        static INITIAL: WorkLeft = WorkLeft {
            pending: BTreeSet::new(),
            ended: false,
        };
        &INITIAL
    }
}

impl WorkLeft {
    /// `kind` (e.g. `"scripts"`) has work to do: the run does not end for work done until
    /// [`WorkLeft::done`] says it is done.
    pub fn begin(ctx: &mut Ctx, kind: &'static str) {
        ctx.world.res.get_mut::<WorkLeft>().pending.insert(kind);
    }

    /// `kind`'s work is done (`what`: the log line that says so, logged once). When no other
    /// kind has work left and the run ends when its work is done, raises the kill switch
    /// (once).
    pub fn done(ctx: &mut Ctx, kind: &'static str, what: &str) {
        let work = ctx.world.res.get_mut::<WorkLeft>();
        if !work.pending.remove(kind) {
            return;
        }
        let end = work.pending.is_empty() && !work.ended && ctx.config.end_when_done;
        if end {
            work.ended = true;
        }
        ctx.log(None, what);
        if end {
            ctx.events.emit(Event::global(Tag::KILL_SWITCH));
        }
    }
}
