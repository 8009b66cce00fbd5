use std::sync::Arc;

use crate::ecs::{EntityId, SwarmWorld};
use crate::event::{Event, Tag};
use crate::sim::{Ctx, InstructionDef, InstructionError, Outcome, System};

/// The claw: adds the `Grab ITEM` and `Drop [ITEM]` instructions. A grab needs a claw
/// with room, an item of that name that nobody carries, within the claw's range of the
/// robot's centre; the item then moves with the robot. Each takes the claw's `duration`
/// (the script waits for `Grabbed` / `Dropped`). A drop counts one task done per item.
#[derive(Debug, Default)]
pub struct ClawSystem;

fn check_item(world: &SwarmWorld, args: &[String]) -> Result<(), InstructionError> {
    match args.first() {
        Some(name) => match world.find(name) {
            Some(e) if world.item.has(e) => Ok(()),
            Some(_) => Err(InstructionError::NotAnItem(name.clone())),
            None => Err(InstructionError::NoItem(name.clone())),
        },
        None => Ok(()),
    }
}

fn grab(ctx: &mut Ctx, e: EntityId, args: &[String]) -> Outcome {
    let w = &mut ctx.world;
    let name = &args[0];
    let fail = |m: String| Outcome::Failed(Tag::GRAB_FAILED, m);
    let Some(claw) = w.claw.get(e) else {
        return fail(format!("{} has no claw", w.label(e)));
    };
    let Some(item) = w.find(name).filter(|i| w.item.has(*i)) else {
        return fail(format!("there is no item called {name:?}"));
    };
    if claw.held.contains(&item) {
        // Already held (a grab retried after an interruption): done.
        return Outcome::Ready;
    }
    if claw.held.len() as u32 >= claw.capacity {
        return fail(format!("{}'s claw is full", w.label(e)));
    }
    if let Some(Some(by)) = w.item.get(item).map(|i| i.carried_by) {
        return fail(format!("{name} is already carried by {}", w.label(by)));
    }
    let (Some(p), Some(q)) = (w.pose.get(e), w.pose.get(item)) else {
        return fail(format!("{name} or {} has no position", w.label(e)));
    };
    let d = (p.x - q.x).hypot(p.y - q.y);
    if d > claw.range {
        return fail(format!(
            "{name} is {d:.1} away from {}, beyond the claw's reach of {}",
            w.label(e),
            claw.range
        ));
    }
    let duration = claw.duration;
    if let Some(c) = w.claw.get_mut(e) {
        c.held.push(item);
    }
    if let Some(it) = w.item.get_mut(item) {
        it.carried_by = Some(e);
    }
    ctx.events.after(duration, Event::about(Tag::GRABBED, e));
    Outcome::Blocked(vec![Tag::GRABBED])
}

fn drop_items(ctx: &mut Ctx, e: EntityId, args: &[String]) -> Outcome {
    let w = &mut ctx.world;
    let label = w.label(e);
    let target = args.first().and_then(|n| w.find(n));
    let Some(claw) = w.claw.get_mut(e) else {
        return Outcome::Failed(Tag::DROP_FAILED, format!("{label} has no claw"));
    };
    let dropped: Vec<EntityId> = match args.first() {
        None => std::mem::take(&mut claw.held),
        Some(name) => match claw.held.iter().position(|h| Some(*h) == target) {
            Some(k) => vec![claw.held.remove(k)],
            None => {
                return Outcome::Failed(Tag::DROP_FAILED, format!("{label} does not hold {name:?}"))
            }
        },
    };
    if dropped.is_empty() {
        return Outcome::Failed(Tag::DROP_FAILED, format!("{label} holds nothing"));
    }
    let duration = claw.duration;
    for item in &dropped {
        if let Some(it) = w.item.get_mut(*item) {
            it.carried_by = None;
        }
    }
    ctx.stats.tasks_done += dropped.len() as u64;
    ctx.events.after(duration, Event::about(Tag::DROPPED, e));
    Outcome::Blocked(vec![Tag::DROPPED])
}

impl System for ClawSystem {
    fn name(&self) -> &str {
        "claw"
    }

    fn instructions(&self) -> Vec<(String, InstructionDef)> {
        vec![
            (
                "Grab".into(),
                InstructionDef {
                    usage: "Grab ITEM",
                    min_args: 1,
                    max_args: 1,
                    run: Arc::new(grab),
                    check: Some(check_item),
                },
            ),
            (
                "Drop".into(),
                InstructionDef {
                    usage: "Drop [ITEM]",
                    min_args: 0,
                    max_args: 1,
                    run: Arc::new(drop_items),
                    check: Some(check_item),
                },
            ),
        ]
    }
}
