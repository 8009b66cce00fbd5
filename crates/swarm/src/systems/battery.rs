use crate::event::{Event, Tag};
use crate::sim::{Ctx, System};

/// Battery drain: every frame a battery loses `idle_drain × dt` plus `move_drain` per map
/// unit the robot is moving this frame. An empty battery stops its robot for good (its
/// velocity is held at zero and its path dropped) and raises a `BatteryEmpty` error once.
/// Runs after the systems that set velocities and before movement.
#[derive(Debug, Default)]
pub struct BatterySystem;

impl System for BatterySystem {
    fn name(&self) -> &str {
        "battery"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let dt = ctx.dt;
        let w = &mut ctx.world;
        let mut emptied = Vec::new();
        for (e, b) in w.battery.iter_mut() {
            if b.empty {
                if let Some(v) = w.vel.get_mut(e) {
                    *v = Default::default();
                }
                continue;
            }
            let speed = w.vel.get(e).map(|v| v.x.hypot(v.y)).unwrap_or(0.0);
            b.charge -= b.idle_drain * dt + b.move_drain * speed * dt;
            if b.charge <= 0.0 {
                b.charge = 0.0;
                b.empty = true;
                emptied.push(e);
                if let Some(v) = w.vel.get_mut(e) {
                    *v = Default::default();
                }
            }
        }
        for e in emptied {
            w.path.remove(e);
            let text = format!("{}: battery empty", w.label(e));
            ctx.events.emit(Event::error(Tag::BATTERY_EMPTY, e, text));
        }
    }
}
