//! Centralised allocation: waiting tasks to idle robots, optimally (Hungarian algorithm,
//! `pathfinding::kuhn_munkres`) or greedily (each task, in order, to the nearest idle robot).
//!
//! Costs are the same as the robots' Contract Net bids for an idle robot: the distance
//! from the robot to the task's first point plus the task's own length (metres) for
//! movement, the task's seconds otherwise. A pair the cost model cannot serve is never
//! assigned.

use pathfinding::kuhn_munkres::kuhn_munkres;
use pathfinding::matrix::Matrix;

use crate::cnp::CostModel;
use crate::model::{RobotId, TaskId, TaskKind, TaskSpec};

/// An idle robot a task may go to.
#[derive(Clone, Debug, PartialEq)]
pub struct Idle {
    /// The robot.
    pub robot: RobotId,
    /// Where it is (x, y), metres in the frame of its world.
    pub at: (f64, f64),
}

/// The cost for an idle robot at `at` to do `task`, or `None` if it cannot.
pub fn idle_cost(task: &TaskSpec, at: (f64, f64), model: &dyn CostModel) -> Option<f64> {
    match &task.kind {
        TaskKind::Goto { x, y } => model.distance(at, (*x, *y)),
        TaskKind::Path { points } => {
            let first = points.first()?;
            let mut c = model.distance(at, (first[0], first[1]))?;
            for w in points.windows(2) {
                c += model.distance((w[0][0], w[0][1]), (w[1][0], w[1][1]))?;
            }
            Some(c)
        }
        TaskKind::Perceive { seconds } | TaskKind::PanTilt { seconds, .. } => Some(*seconds),
    }
}

const SCALE: f64 = 1000.0;
const INFEASIBLE: i64 = -(1 << 50);

/// Optimal assignment (minimum total cost) of tasks to idle robots, at most one task per
/// robot. `fits(task, robot)` says whether a robot may take a task at all.
pub fn hungarian(
    tasks: &[&TaskSpec],
    robots: &[Idle],
    model: &dyn CostModel,
    fits: impl Fn(&TaskSpec, RobotId) -> bool,
) -> Vec<(TaskId, RobotId)> {
    if tasks.is_empty() || robots.is_empty() {
        return Vec::new();
    }
    let weight = |t: &TaskSpec, r: &Idle| -> i64 {
        if !fits(t, r.robot) {
            return INFEASIBLE;
        }
        match idle_cost(t, r.at, model) {
            Some(c) => -((c * SCALE).round().min(1e15) as i64),
            None => INFEASIBLE,
        }
    };
    let mut out = Vec::new();
    if robots.len() <= tasks.len() {
        let m = Matrix::from_fn(robots.len(), tasks.len(), |(i, j)| {
            weight(tasks[j], &robots[i])
        });
        let (_, cols) = kuhn_munkres(&m);
        for (i, &j) in cols.iter().enumerate() {
            if m[(i, j)] > INFEASIBLE {
                out.push((tasks[j].id, robots[i].robot));
            }
        }
    } else {
        let m = Matrix::from_fn(tasks.len(), robots.len(), |(j, i)| {
            weight(tasks[j], &robots[i])
        });
        let (_, cols) = kuhn_munkres(&m);
        for (j, &i) in cols.iter().enumerate() {
            if m[(j, i)] > INFEASIBLE {
                out.push((tasks[j].id, robots[i].robot));
            }
        }
    }
    out.sort_unstable();
    out
}

/// Each task in the order given to the nearest idle robot that fits (ties to the lower id).
pub fn greedy(
    tasks: &[&TaskSpec],
    robots: &[Idle],
    model: &dyn CostModel,
    fits: impl Fn(&TaskSpec, RobotId) -> bool,
) -> Vec<(TaskId, RobotId)> {
    let mut free: Vec<bool> = vec![true; robots.len()];
    let mut out = Vec::new();
    for t in tasks {
        let mut best: Option<(f64, RobotId, usize)> = None;
        for (i, r) in robots.iter().enumerate() {
            if !free[i] || !fits(t, r.robot) {
                continue;
            }
            let Some(c) = idle_cost(t, r.at, model) else {
                continue;
            };
            if best.is_none_or(|(bc, br, _)| c < bc || (c == bc && r.robot < br)) {
                best = Some((c, r.robot, i));
            }
        }
        if let Some((_, robot, i)) = best {
            free[i] = false;
            out.push((t.id, robot));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cnp::Euclidean;

    fn idle(robot: RobotId, x: f64) -> Idle {
        Idle {
            robot,
            at: (x, 0.0),
        }
    }

    fn goto(id: TaskId, x: f64) -> TaskSpec {
        TaskSpec::new(id, TaskKind::Goto { x, y: 0.0 })
    }

    #[test]
    fn hungarian_beats_greedy_where_greedy_is_short_sighted() {
        // Robots at 0 and 10; tasks at 4 and -6 (in that order). Greedy gives task 1 (x=4)
        // to the robot at 0 (4 m) and task 2 to the robot at 10 (16 m): 20 m. The optimum
        // sends the robot at 10 to x=4 (6 m) and the robot at 0 to x=-6 (6 m): 12 m.
        let tasks = [goto(1, 4.0), goto(2, -6.0)];
        let refs: Vec<&TaskSpec> = tasks.iter().collect();
        let robots = [idle(1, 0.0), idle(2, 10.0)];
        assert_eq!(
            greedy(&refs, &robots, &Euclidean, |_, _| true),
            [(1, 1), (2, 2)]
        );
        assert_eq!(
            hungarian(&refs, &robots, &Euclidean, |_, _| true),
            [(1, 2), (2, 1)]
        );
    }

    #[test]
    fn more_robots_than_tasks_and_infeasible_pairs() {
        let tasks = [goto(1, 5.0)];
        let refs: Vec<&TaskSpec> = tasks.iter().collect();
        let robots = [idle(1, 4.0), idle(2, 5.0), idle(3, 100.0)];
        assert_eq!(
            hungarian(&refs, &robots, &Euclidean, |_, r| r != 2),
            [(1, 1)]
        );
        assert_eq!(hungarian(&refs, &robots, &Euclidean, |_, _| false), []);
        assert_eq!(greedy(&refs, &robots, &Euclidean, |_, _| false), []);
        assert_eq!(hungarian(&[], &robots, &Euclidean, |_, _| true), []);
    }
}
