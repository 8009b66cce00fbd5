use crate::ecs::{centre_range, SwarmPose};
use crate::grid::{SpatialGrid, StaticIndex};
use crate::sim::{Ctx, System};
use simrob_math::wrap_angle;

/// Movement: the only system that writes poses. Integrates velocities over one frame,
/// keeps every entity inside the map, carries grabbed items along with their carrier, then
/// rebuilds the spatial grid (and the static index when walls changed) for the systems that
/// run after it.
#[derive(Debug, Default)]
pub struct MovementSystem;

/// Below this many entities the poses are integrated on one thread.
const PARALLEL_MIN: usize = 1 << 13;

impl System for MovementSystem {
    fn name(&self) -> &str {
        "movement"
    }

    fn fixed_rate(&self) -> bool {
        true
    }

    fn run(&mut self, ctx: &mut Ctx) {
        let dt = ctx.dt;
        let w = &mut ctx.world;
        let (width, height) = (w.res.width, w.res.height);
        {
            let (vels, vp) = w.vel.raw();
            let (shapes, sp) = w.collider.raw();
            let (poses, pp) = w.pose.raw_mut();
            let n = poses.len().min(vels.len());
            // Each pose depends on its own entity alone: chunks on several threads give the
            // same poses as one.
            let bounds = |hw: f64, hh: f64| centre_range((width, height), hw, hh);
            let integrate = |first: usize, poses: &mut [SwarmPose]| {
                // The last shape's range, kept while the next has the same half extents (to
                // the bit: the same range), as most entities share a shape.
                let mut last = (0u64, 0u64);
                let mut range = bounds(0.0, 0.0);
                for (k, p) in poses.iter_mut().enumerate() {
                    let i = first + k;
                    if !(pp[i] && vp[i]) {
                        continue;
                    }
                    let v = vels[i];
                    if v.x == 0.0 && v.y == 0.0 && v.w == 0.0 {
                        continue;
                    }
                    let (hw, hh) = if sp.get(i).copied().unwrap_or(false) {
                        shapes[i].half_extents()
                    } else {
                        (0.0, 0.0)
                    };
                    if (hw.to_bits(), hh.to_bits()) != last {
                        last = (hw.to_bits(), hh.to_bits());
                        range = bounds(hw, hh);
                    }
                    let (x0, x1, y0, y1) = range;
                    p.x = (p.x + v.x * dt).clamp(x0, x1);
                    p.y = (p.y + v.y * dt).clamp(y0, y1);
                    if v.w != 0.0 {
                        p.theta = wrap_angle(p.theta + v.w * dt);
                    }
                }
            };
            let threads = ctx.config.thread_count();
            if threads <= 1 || n < PARALLEL_MIN {
                integrate(0, &mut poses[..n]);
            } else {
                let chunk = n.div_ceil(threads);
                let parts = poses[..n].chunks_mut(chunk).enumerate().collect();
                crate::par::each(threads, parts, |(c, part)| integrate(c * chunk, part));
            }
        }
        if !w.item.is_empty() {
            let carried: Vec<_> = w
                .item
                .iter()
                .filter_map(|(e, it)| it.carried_by.map(|c| (e, c)))
                .collect();
            for (e, carrier) in carried {
                if let Some(p) = w.pose.get(carrier).copied() {
                    w.pose.insert(e, SwarmPose { ..p });
                }
            }
        }
        let cell = ctx.config.cell_size;
        if w.res.statics_dirty {
            let mut statics = std::mem::take(w.res.get_mut::<StaticIndex>());
            statics.rebuild(w, cell);
            *w.res.get_mut::<StaticIndex>() = statics;
            w.res.statics_dirty = false;
        }
        let mut grid = std::mem::take(w.res.get_mut::<SpatialGrid>());
        grid.threads = ctx.config.thread_count();
        grid.rebuild(w, cell);
        *w.res.get_mut::<SpatialGrid>() = grid;
    }
}
