//! Optimal reciprocal collision avoidance (ORCA) for discs in the plane.
//!
//! Each agent wants a *preferred* velocity (towards its goal). For every neighbour it builds
//! the half-plane of velocities that cannot collide with that neighbour within a time
//! horizon `τ`, assuming the neighbour takes its `responsibility` share of the avoidance
//! (½ between two agents that both run ORCA, 1 towards one that does not avoid: a hovering
//! or a crashed drone). The new velocity is the one closest to the preferred velocity that
//! lies in every half-plane and within the speed limit: a 2-D linear program solved
//! incrementally (randomized-incremental in spirit, here in neighbour order, which keeps the
//! result deterministic). When the half-planes leave no room (a dense crowd), the velocity
//! that violates them least is chosen instead (the 3-D linear program of the method).
//!
//! Reference: J. van den Berg, S. J. Guy, M. Lin and D. Manocha, "Reciprocal n-Body
//! Collision Avoidance", Robotics Research (ISRR 2009), Springer STAR 70, 2011.
//!
//! Units are whatever the caller uses, consistently: positions in map units, velocities in
//! map units per time unit, `τ` and `dt` in the same time unit. Pure computation: no state,
//! no allocation beyond the caller's scratch vectors.

/// A 2-D vector as a pair.
pub type V2 = (f64, f64);

const EPSILON: f64 = 1e-9;

#[inline]
fn add(a: V2, b: V2) -> V2 {
    (a.0 + b.0, a.1 + b.1)
}
#[inline]
fn sub(a: V2, b: V2) -> V2 {
    (a.0 - b.0, a.1 - b.1)
}
#[inline]
fn mul(a: V2, k: f64) -> V2 {
    (a.0 * k, a.1 * k)
}
#[inline]
fn dot(a: V2, b: V2) -> f64 {
    a.0 * b.0 + a.1 * b.1
}
#[inline]
fn det(a: V2, b: V2) -> f64 {
    a.0 * b.1 - a.1 * b.0
}
#[inline]
fn len2(a: V2) -> f64 {
    dot(a, a)
}
#[inline]
fn normalize(a: V2) -> V2 {
    let l = len2(a).sqrt();
    if l > 0.0 {
        mul(a, 1.0 / l)
    } else {
        (0.0, 0.0)
    }
}

/// A directed line; the permitted half-plane lies to the left of `dir` (where
/// `det(dir, v - point) >= 0`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    /// A point on the line (a velocity).
    pub point: V2,
    /// The line's unit direction.
    pub dir: V2,
}

/// Another agent as seen by the one avoiding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbour {
    /// Its position, map units.
    pub pos: V2,
    /// Its velocity, map units per time unit.
    pub vel: V2,
    /// Its disc's radius, map units.
    pub radius: f64,
    /// Share of the avoidance this agent takes: 0.5 when the neighbour avoids too, 1.0 when
    /// it does not.
    pub responsibility: f64,
}

/// The agent that chooses its velocity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agent {
    /// Its position, map units.
    pub pos: V2,
    /// Its current velocity.
    pub vel: V2,
    /// Its disc's radius, map units.
    pub radius: f64,
    /// The fastest it may go, map units per time unit.
    pub max_speed: f64,
}

/// The ORCA half-plane of `agent` with respect to one neighbour, for time horizon `tau`;
/// `dt` is the step over which a velocity is held (used when the two already overlap).
#[inline]
pub fn half_plane(agent: &Agent, other: &Neighbour, tau: f64, dt: f64) -> Line {
    let rel_pos = sub(other.pos, agent.pos);
    let rel_vel = sub(agent.vel, other.vel);
    let dist2 = len2(rel_pos);
    let r = agent.radius + other.radius;
    let r2 = r * r;
    let (dir, u);
    if dist2 > r2 {
        let inv_tau = 1.0 / tau;
        // From the centre of the truncation disc to the relative velocity.
        let w = sub(rel_vel, mul(rel_pos, inv_tau));
        let w_len2 = len2(w);
        let dot1 = dot(w, rel_pos);
        if dot1 < 0.0 && dot1 * dot1 > r2 * w_len2 {
            // Closest to the truncation (the disc of the cone's cut-off).
            let w_len = w_len2.sqrt();
            let unit_w = mul(w, 1.0 / w_len);
            dir = (unit_w.1, -unit_w.0);
            u = mul(unit_w, r * inv_tau - w_len);
        } else {
            // Closest to one of the cone's legs.
            let leg = (dist2 - r2).sqrt();
            if det(rel_pos, w) > 0.0 {
                dir = mul(
                    (
                        rel_pos.0 * leg - rel_pos.1 * r,
                        rel_pos.0 * r + rel_pos.1 * leg,
                    ),
                    1.0 / dist2,
                );
            } else {
                dir = mul(
                    (
                        rel_pos.0 * leg + rel_pos.1 * r,
                        -rel_pos.0 * r + rel_pos.1 * leg,
                    ),
                    -1.0 / dist2,
                );
            }
            u = sub(mul(dir, dot(rel_vel, dir)), rel_vel);
        }
    } else {
        // Already overlapping: get apart within one step.
        let inv_dt = 1.0 / dt;
        let w = sub(rel_vel, mul(rel_pos, inv_dt));
        let w_len = len2(w).sqrt();
        let unit_w = if w_len > 0.0 {
            mul(w, 1.0 / w_len)
        } else {
            // Same place, same velocity: separate along an arbitrary fixed direction.
            (1.0, 0.0)
        };
        dir = (unit_w.1, -unit_w.0);
        u = mul(unit_w, r * inv_dt - w_len);
    }
    Line {
        point: add(agent.vel, mul(u, other.responsibility)),
        dir,
    }
}

/// On line `k`, the point closest to `opt` (or furthest along `opt` when `direction`)
/// within the disc of `radius` and the half-planes `lines[..k]`; `None` if there is none.
fn lp1(lines: &[Line], k: usize, radius: f64, opt: V2, direction: bool) -> Option<V2> {
    let line = lines[k];
    let d = dot(line.point, line.dir);
    let disc = d * d + radius * radius - len2(line.point);
    if disc < 0.0 {
        return None;
    }
    let s = disc.sqrt();
    let (mut t_left, mut t_right) = (-d - s, -d + s);
    for other in &lines[..k] {
        let denom = det(line.dir, other.dir);
        let numer = det(other.dir, sub(line.point, other.point));
        if denom.abs() <= EPSILON {
            // Parallel lines.
            if numer < 0.0 {
                return None;
            }
            continue;
        }
        let t = numer / denom;
        if denom >= 0.0 {
            t_right = t_right.min(t);
        } else {
            t_left = t_left.max(t);
        }
        if t_left > t_right {
            return None;
        }
    }
    let t = if direction {
        if dot(opt, line.dir) > 0.0 {
            t_right
        } else {
            t_left
        }
    } else {
        dot(line.dir, sub(opt, line.point)).clamp(t_left, t_right)
    };
    Some(add(line.point, mul(line.dir, t)))
}

/// The velocity closest to `preferred` within the speed limit `max_speed`: what
/// [`velocity`] gives an agent with no neighbours (the same bits, without its set-up).
#[inline]
pub fn free_velocity(preferred: V2, max_speed: f64) -> V2 {
    if len2(preferred) > max_speed * max_speed {
        mul(normalize(preferred), max_speed)
    } else {
        preferred
    }
}

/// The point closest to `opt` in the disc of `radius` and every half-plane. Returns the
/// number of lines satisfied in order (`lines.len()` on success) and the best point found.
fn lp2(lines: &[Line], radius: f64, opt: V2, direction: bool) -> (usize, V2) {
    let mut result = if direction {
        mul(opt, radius)
    } else {
        free_velocity(opt, radius)
    };
    for (i, line) in lines.iter().enumerate() {
        if det(line.dir, sub(line.point, result)) > 0.0 {
            match lp1(lines, i, radius, opt, direction) {
                Some(p) => result = p,
                None => return (i, result),
            }
        }
    }
    (lines.len(), result)
}

/// From the first line that `lp2` could not satisfy on: the velocity that minimizes the
/// largest violation of the half-planes.
fn lp3(lines: &[Line], begin: usize, radius: f64, mut result: V2, proj: &mut Vec<Line>) -> V2 {
    let mut distance = 0.0;
    for i in begin..lines.len() {
        let li = lines[i];
        if det(li.dir, sub(li.point, result)) > distance {
            proj.clear();
            for lj in &lines[..i] {
                let d = det(li.dir, lj.dir);
                let point = if d.abs() <= EPSILON {
                    if dot(li.dir, lj.dir) > 0.0 {
                        continue; // same direction
                    }
                    mul(add(li.point, lj.point), 0.5)
                } else {
                    add(
                        li.point,
                        mul(li.dir, det(lj.dir, sub(li.point, lj.point)) / d),
                    )
                };
                proj.push(Line {
                    point,
                    dir: normalize(sub(lj.dir, li.dir)),
                });
            }
            let (n, p) = lp2(proj, radius, (-li.dir.1, li.dir.0), true);
            if n == proj.len() {
                result = p;
            }
            distance = det(li.dir, sub(li.point, result));
        }
    }
    result
}

/// Scratch space reused between calls (no allocation in steady state).
#[derive(Clone, Debug, Default)]
pub struct Scratch {
    lines: Vec<Line>,
    proj: Vec<Line>,
}

/// The velocity closest to `preferred`, within `agent.max_speed`, that avoids every
/// neighbour for `tau` (given in the same time unit as the velocities; `dt` is the step).
pub fn velocity(
    agent: &Agent,
    preferred: V2,
    neighbours: &[Neighbour],
    tau: f64,
    dt: f64,
    scratch: &mut Scratch,
) -> V2 {
    scratch.lines.clear();
    for n in neighbours {
        scratch.lines.push(half_plane(agent, n, tau, dt));
    }
    let (failed, result) = lp2(&scratch.lines, agent.max_speed, preferred, false);
    if failed < scratch.lines.len() {
        lp3(
            &scratch.lines,
            failed,
            agent.max_speed,
            result,
            &mut scratch.proj,
        )
    } else {
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(pos: V2, vel: V2) -> Agent {
        Agent {
            pos,
            vel,
            radius: 1.0,
            max_speed: 2.0,
        }
    }

    fn other(pos: V2, vel: V2, responsibility: f64) -> Neighbour {
        Neighbour {
            pos,
            vel,
            radius: 1.0,
            responsibility,
        }
    }

    #[test]
    fn free_agent_keeps_its_preferred_velocity() {
        let mut s = Scratch::default();
        let a = agent((0.0, 0.0), (1.0, 0.0));
        assert_eq!(velocity(&a, (1.0, 0.5), &[], 2.0, 0.1, &mut s), (1.0, 0.5));
        // Capped at the maximum speed, same direction.
        let v = velocity(&a, (4.0, 0.0), &[], 2.0, 0.1, &mut s);
        assert!((v.0 - 2.0).abs() < 1e-12 && v.1.abs() < 1e-12, "{v:?}");
        // A neighbour far away and moving away changes nothing.
        let far = other((50.0, 0.0), (1.0, 0.0), 0.5);
        assert_eq!(
            velocity(&a, (1.0, 0.0), &[far], 2.0, 0.1, &mut s),
            (1.0, 0.0)
        );
    }

    #[test]
    fn head_on_agents_each_step_aside() {
        // Two agents 6 apart, flying at each other at 1 unit/s each; horizon 5 s.
        let mut s = Scratch::default();
        let a = agent((0.0, 0.0), (1.0, 0.0));
        let b = agent((6.0, 0.1), (-1.0, 0.0));
        let va = velocity(
            &a,
            (1.0, 0.0),
            &[other(b.pos, b.vel, 0.5)],
            5.0,
            0.1,
            &mut s,
        );
        let vb = velocity(
            &b,
            (-1.0, 0.0),
            &[other(a.pos, a.vel, 0.5)],
            5.0,
            0.1,
            &mut s,
        );
        // They turn to opposite sides (reciprocity), symmetric about the midpoint.
        assert!(va.1 * vb.1 < 0.0, "{va:?} {vb:?}");
        assert!((va.1 + vb.1).abs() < 1e-9, "{va:?} {vb:?}");
        // And with these velocities they do not come within 2 (the two radii) for 5 s.
        let closest = closest_approach(a.pos, va, b.pos, vb, 5.0);
        assert!(closest >= 2.0 - 1e-6, "closest {closest}");
    }

    fn closest_approach(pa: V2, va: V2, pb: V2, vb: V2, horizon: f64) -> f64 {
        let p = sub(pb, pa);
        let v = sub(vb, va);
        let t = if len2(v) > 0.0 {
            (-dot(p, v) / len2(v)).clamp(0.0, horizon)
        } else {
            0.0
        };
        len2(add(p, mul(v, t))).sqrt()
    }

    #[test]
    fn full_responsibility_towards_a_still_obstacle() {
        let mut s = Scratch::default();
        let a = agent((0.0, 0.0), (1.0, 0.0));
        let rock = other((4.0, 0.0), (0.0, 0.0), 1.0);
        let v = velocity(&a, (1.0, 0.0), &[rock], 5.0, 0.1, &mut s);
        let closest = closest_approach(a.pos, v, rock.pos, (0.0, 0.0), 5.0);
        assert!(closest >= 2.0 - 1e-6, "{v:?} closest {closest}");
    }

    #[test]
    fn overlapping_agents_push_apart() {
        let mut s = Scratch::default();
        let a = agent((0.0, 0.0), (0.0, 0.0));
        let b = other((1.0, 0.0), (0.0, 0.0), 0.5);
        let v = velocity(&a, (0.0, 0.0), &[b], 5.0, 0.5, &mut s);
        assert!(v.0 < 0.0, "moves away from the overlap: {v:?}");
    }

    #[test]
    fn crowd_gets_a_least_bad_velocity_within_the_speed_limit() {
        // Surrounded on all sides at contact distance: no velocity satisfies every
        // half-plane; the result must still be finite and within the speed limit.
        let mut s = Scratch::default();
        let a = agent((0.0, 0.0), (0.0, 0.0));
        let ring: Vec<Neighbour> = (0..8)
            .map(|k| {
                let t = k as f64 * std::f64::consts::TAU / 8.0;
                other((2.05 * t.cos(), 2.05 * t.sin()), (-t.cos(), -t.sin()), 0.5)
            })
            .collect();
        let v = velocity(&a, (2.0, 0.0), &ring, 5.0, 0.1, &mut s);
        assert!(v.0.is_finite() && v.1.is_finite());
        assert!(len2(v).sqrt() <= 2.0 + 1e-9, "{v:?}");
    }

    #[test]
    fn crossing_crowds_never_collide_and_arrive() {
        // Two blocks of 4 × 4 agents cross each other at right angles, ORCA every step.
        let (radius, dt, tau, speed) = (1.0, 0.1, 3.0, 2.0);
        let mut pos = Vec::new();
        let mut goals = Vec::new();
        for i in 0..4 {
            for j in 0..4 {
                let (a, b) = (3.0 * i as f64, 3.0 * j as f64 + 0.3 * ((i + j) % 2) as f64);
                pos.push((-20.0 + a, -4.5 + b));
                goals.push((20.0 + a, -4.5 + b));
                // Not a mirror image of the first block: a mirror-symmetric crowd is a
                // standstill for any reciprocal method.
                pos.push((-3.2 + b, -23.0 + a));
                goals.push((-3.2 + b, 17.0 + a));
            }
        }
        let n = pos.len();
        let mut vel = vec![(0.0, 0.0); n];
        let mut s = Scratch::default();
        let mut min_gap = f64::INFINITY;
        for _ in 0..600 {
            let mut next = vel.clone();
            for i in 0..n {
                let to_goal = sub(goals[i], pos[i]);
                let pref = if len2(to_goal) > speed * speed {
                    mul(normalize(to_goal), speed)
                } else {
                    to_goal
                };
                let neighbours: Vec<Neighbour> = (0..n)
                    .filter(|&j| j != i)
                    .map(|j| Neighbour {
                        pos: pos[j],
                        vel: vel[j],
                        radius,
                        responsibility: 0.5,
                    })
                    .collect();
                let a = Agent {
                    pos: pos[i],
                    vel: vel[i],
                    radius,
                    max_speed: speed,
                };
                next[i] = velocity(&a, pref, &neighbours, tau, dt, &mut s);
            }
            vel = next;
            for i in 0..n {
                pos[i] = add(pos[i], mul(vel[i], dt));
            }
            for i in 0..n {
                for j in i + 1..n {
                    min_gap = min_gap.min(len2(sub(pos[i], pos[j])).sqrt());
                }
            }
        }
        assert!(min_gap > 2.0 * radius - 0.05, "closest pair {min_gap}");
        let arrived = (0..n)
            .filter(|&i| len2(sub(pos[i], goals[i])) < 4.0 * radius * radius)
            .count();
        // ORCA is local: an agent that overshoots can be boxed in behind others already at
        // their goals (a local minimum of the method, not a collision).
        assert!(arrived * 10 >= n * 9, "{arrived} of {n} crossed: {pos:?}");
    }
}
