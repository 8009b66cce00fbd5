//! The Synchronize Tasks module: preconditions between tasks of any robots.
//!
//! It talks only to its robot's Task Manager, with three messages:
//! [`SyncRequest::SetDependencies`] (a task and the tasks it waits for),
//! [`SyncRequest::Query`] (may this task run?) and [`SyncResponse::Response`] (yes or no).
//! It reads the states of every task in the system from a [`TaskBoard`] — the latest
//! state published for each task id, whichever robot it belongs to.
//!
//! Decisions where the architecture is silent:
//! * a precondition already ENDED when `SET_DEPENDENCIES` arrives is satisfied at once;
//! * an unknown task id is waited for (it may not have been sent yet);
//! * a dependency cycle among the tasks this module knows is refused;
//! * a precondition that was ABORTED or FAILED (or is itself BLOCKED) makes the answer
//!   "no, blocked by N", so the task shows as BLOCKED instead of waiting silently.

use std::collections::{HashMap, HashSet};

use crate::model::{TaskId, TaskState};

/// The latest state of every task heard of (the GRI's task-state slots).
#[derive(Clone, Debug, Default)]
pub struct TaskBoard {
    states: HashMap<TaskId, TaskState>,
}

impl TaskBoard {
    /// Records a task's new state.
    pub fn publish(&mut self, task: TaskId, state: TaskState) {
        self.states.insert(task, state);
    }

    /// The latest state of `task`.
    pub fn get(&self, task: TaskId) -> Option<TaskState> {
        self.states.get(&task).copied()
    }

    /// Tasks heard of.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Whether no task has been heard of.
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }
}

/// Task Manager → Synchronize Tasks.
#[derive(Clone, Debug, PartialEq)]
pub enum SyncRequest {
    /// `SET_DEPENDENCIES`: `task` runs only once every task in `after` is ENDED.
    SetDependencies {
        /// The task.
        task: TaskId,
        /// The tasks it waits for, of any robot.
        after: Vec<TaskId>,
    },
    /// `QUERY`: may `task` run now?
    Query {
        /// The task about to start.
        task: TaskId,
    },
}

/// Synchronize Tasks → Task Manager.
#[derive(Clone, Debug, PartialEq)]
pub enum SyncResponse {
    /// `RESPONSE`: whether `task` may run; when it may not because a precondition was
    /// aborted or failed, which one.
    Response {
        /// The task asked about.
        task: TaskId,
        /// Whether it may run now.
        can_run: bool,
        /// The aborted, failed or blocked precondition that keeps it from ever running, if any.
        blocked_by: Option<TaskId>,
    },
    /// `SET_DEPENDENCIES` refused: these preconditions close a cycle (listed in order, from
    /// the task back to itself).
    Cycle {
        /// The task refused.
        task: TaskId,
        /// The cycle, from the task back to itself.
        cycle: Vec<TaskId>,
    },
}

/// A cycle through `task` if it waited for `after`, given the other tasks' preconditions.
pub fn find_cycle<'a>(
    task: TaskId,
    after: &[TaskId],
    deps_of: impl Fn(TaskId) -> Option<&'a [TaskId]>,
) -> Option<Vec<TaskId>> {
    if after.contains(&task) {
        return Some(vec![task, task]);
    }
    // Depth-first search from each precondition, looking for `task`.
    let mut seen = HashSet::new();
    let mut stack: Vec<(TaskId, usize)> = Vec::new();
    let mut path: Vec<TaskId> = Vec::new();
    for &start in after {
        if !seen.insert(start) {
            continue;
        }
        stack.push((start, 0));
        path.push(start);
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let deps = deps_of(node).unwrap_or(&[]);
            if let Some(&d) = deps.get(*next) {
                *next += 1;
                if d == task {
                    let mut cycle = vec![task];
                    cycle.extend(path.iter().copied());
                    cycle.push(task);
                    return Some(cycle);
                }
                if seen.insert(d) {
                    stack.push((d, 0));
                    path.push(d);
                }
            } else {
                stack.pop();
                path.pop();
            }
        }
    }
    None
}

/// The register of this robot's tasks and their preconditions.
#[derive(Clone, Debug, Default)]
pub struct SyncTasks {
    /// Remaining preconditions of each task that has some.
    deps: HashMap<TaskId, Vec<TaskId>>,
}

impl SyncTasks {
    /// Handles a request from the Task Manager; `QUERY` always gets a `RESPONSE`,
    /// `SET_DEPENDENCIES` only an answer when refused.
    pub fn handle(&mut self, request: SyncRequest, board: &TaskBoard) -> Option<SyncResponse> {
        match request {
            SyncRequest::SetDependencies { task, mut after } => {
                after.sort_unstable();
                after.dedup();
                if let Some(cycle) =
                    find_cycle(task, &after, |t| self.deps.get(&t).map(Vec::as_slice))
                {
                    return Some(SyncResponse::Cycle { task, cycle });
                }
                after.retain(|&d| board.get(d) != Some(TaskState::Ended));
                if after.is_empty() {
                    self.deps.remove(&task);
                } else {
                    self.deps.insert(task, after);
                }
                None
            }
            SyncRequest::Query { task } => {
                let (can_run, blocked_by) = self.query(task, board);
                Some(SyncResponse::Response {
                    task,
                    can_run,
                    blocked_by,
                })
            }
        }
    }

    fn query(&mut self, task: TaskId, board: &TaskBoard) -> (bool, Option<TaskId>) {
        let Some(list) = self.deps.get_mut(&task) else {
            return (true, None);
        };
        // Every precondition seen ENDED is removed.
        list.retain(|&d| board.get(d) != Some(TaskState::Ended));
        if list.is_empty() {
            self.deps.remove(&task);
            return (true, None);
        }
        let blocked = list.iter().find_map(|&d| match board.get(d) {
            Some(TaskState::Blocked { by }) => Some(by),
            Some(s) if s.dooms_dependents() => Some(d),
            _ => None,
        });
        (false, blocked)
    }

    /// Forgets a task (aborted or cleared).
    pub fn forget(&mut self, task: TaskId) {
        self.deps.remove(&task);
    }

    /// Whether some task still waits for preconditions (its answer may change with the
    /// board).
    pub fn waits(&self) -> bool {
        !self.deps.is_empty()
    }

    /// The preconditions `task` still waits for.
    pub fn waiting_for(&self, task: TaskId) -> &[TaskId] {
        self.deps.get(&task).map(Vec::as_slice).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FailCode;

    fn set(
        s: &mut SyncTasks,
        b: &TaskBoard,
        task: TaskId,
        after: &[TaskId],
    ) -> Option<SyncResponse> {
        s.handle(
            SyncRequest::SetDependencies {
                task,
                after: after.to_vec(),
            },
            b,
        )
    }

    fn query(s: &mut SyncTasks, b: &TaskBoard, task: TaskId) -> (bool, Option<TaskId>) {
        match s.handle(SyncRequest::Query { task }, b) {
            Some(SyncResponse::Response {
                can_run,
                blocked_by,
                ..
            }) => (can_run, blocked_by),
            other => panic!("expected a response, got {other:?}"),
        }
    }

    #[test]
    fn runs_once_every_precondition_ended() {
        let mut b = TaskBoard::default();
        let mut s = SyncTasks::default();
        assert_eq!(
            query(&mut s, &b, 9),
            (true, None),
            "no preconditions: always runnable"
        );
        assert_eq!(set(&mut s, &b, 3, &[1, 2]), None);
        assert_eq!(
            query(&mut s, &b, 3),
            (false, None),
            "unknown ids are waited for"
        );
        b.publish(1, TaskState::Ended);
        b.publish(2, TaskState::Running);
        assert_eq!(query(&mut s, &b, 3), (false, None));
        assert_eq!(s.waiting_for(3), &[2]);
        b.publish(2, TaskState::Ended);
        assert_eq!(query(&mut s, &b, 3), (true, None));
    }

    #[test]
    fn preconditions_already_ended_are_satisfied_at_once() {
        let mut b = TaskBoard::default();
        b.publish(1, TaskState::Ended);
        let mut s = SyncTasks::default();
        set(&mut s, &b, 2, &[1]);
        assert!(s.waiting_for(2).is_empty());
        assert_eq!(query(&mut s, &b, 2), (true, None));
    }

    #[test]
    fn cycles_are_refused() {
        let b = TaskBoard::default();
        let mut s = SyncTasks::default();
        set(&mut s, &b, 1, &[2]);
        set(&mut s, &b, 2, &[3]);
        assert_eq!(
            set(&mut s, &b, 3, &[1]),
            Some(SyncResponse::Cycle {
                task: 3,
                cycle: vec![3, 1, 2, 3]
            })
        );
        assert_eq!(
            set(&mut s, &b, 4, &[4]),
            Some(SyncResponse::Cycle {
                task: 4,
                cycle: vec![4, 4]
            })
        );
        assert!(s.waiting_for(3).is_empty(), "a refused set stores nothing");
        // A diamond is not a cycle.
        assert_eq!(set(&mut s, &b, 5, &[1, 2]), None);
    }

    #[test]
    fn a_failed_precondition_blocks_and_says_which() {
        let mut b = TaskBoard::default();
        let mut s = SyncTasks::default();
        set(&mut s, &b, 2, &[1]);
        set(&mut s, &b, 3, &[2]);
        b.publish(
            1,
            TaskState::Failed {
                code: FailCode::Unreachable,
            },
        );
        assert_eq!(query(&mut s, &b, 2), (false, Some(1)));
        b.publish(2, TaskState::Blocked { by: 1 });
        assert_eq!(
            query(&mut s, &b, 3),
            (false, Some(1)),
            "blocked names the root cause"
        );
    }
}
