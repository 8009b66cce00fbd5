//! A robot's Task Manager: the tasks it holds, whichever way they came (sent by the Control
//! Center or won in a Contract Net auction — it cannot tell), run one per class at a time.
//!
//! Each task is translated into basic tasks (a path into one `GoTo` per point), handed to
//! the robot's lower layer one at a time per class: the next only once the current one has
//! concluded. Before a task starts, the Task Manager asks its Synchronize Tasks module
//! (`QUERY`); a task with preconditions was registered with `SET_DEPENDENCIES` when it
//! arrived. Every state change is reported as a [`TmEvent::State`].
//!
//! Queue discipline: first come, first served within a class, except that a task waiting on
//! preconditions is overtaken by later tasks of its class that may run (a waiting task never
//! holds its class). Abort stops the running basic task and drops the rest.

use std::collections::{HashMap, VecDeque};

use crate::model::{BasicKind, FailCode, TaskClass, TaskId, TaskSpec, TaskState};
use crate::sync::{SyncRequest, SyncResponse, SyncTasks, TaskBoard};

/// What the Task Manager asks of the rest of the robot.
#[derive(Clone, Debug, PartialEq)]
pub enum TmEvent {
    /// A task changed state: report it upward.
    State {
        /// The task.
        task: TaskId,
        /// Its new state.
        state: TaskState,
    },
    /// Start basic task `index` of `task` in the lower layer.
    Start {
        /// The task it belongs to.
        task: TaskId,
        /// Its class: the lower layer runs one basic task per class at a time.
        class: TaskClass,
        /// Which basic task of the task, from 0.
        index: usize,
        /// What to do.
        basic: BasicKind,
    },
    /// Stop whatever the lower layer runs for `task` (it was aborted).
    Stop {
        /// The aborted task.
        task: TaskId,
        /// The class whose basic task to stop.
        class: TaskClass,
    },
}

/// A task the robot holds.
#[derive(Clone, Debug)]
pub struct Held {
    /// The task as received.
    pub spec: TaskSpec,
    /// Its current state.
    pub state: TaskState,
    /// Basic tasks concluded so far.
    pub step: usize,
}

/// Why a Task Manager request was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TmError {
    /// The robot holds no task with this id.
    #[error("task {0} is not held by this robot")]
    Unknown(TaskId),
    /// Only a final task can be cleared: abort it first.
    #[error("task {0} is not final yet (abort it first)")]
    NotFinal(TaskId),
    /// The task is already ENDED, ABORTED or FAILED.
    #[error("task {0} is already final")]
    AlreadyFinal(TaskId),
    /// The robot already holds a task with this id.
    #[error("task {0} is already held by this robot")]
    Duplicate(TaskId),
    /// A basic task was reported concluded for a task that is not running.
    #[error("task {0} is not running")]
    NotRunning(TaskId),
}

/// One robot's Task Manager with its Synchronize Tasks module.
#[derive(Clone, Debug)]
pub struct TaskManager {
    capabilities: [bool; 3],
    world: Option<String>,
    tasks: HashMap<TaskId, Held>,
    /// Non-final tasks in arrival order.
    queue: Vec<TaskId>,
    /// How many of `queue` are BLOCKED.
    blocked: usize,
    running: [Option<TaskId>; 3],
    sync: SyncTasks,
    out: VecDeque<TmEvent>,
    /// Where the movement tasks held leave the robot (kept up to date on every change, so a
    /// bid costs no walk over the queue).
    tail: Option<(f64, f64)>,
    /// The last [`TaskManager::schedule`] changed nothing, nothing changed since, and no
    /// task waits for preconditions: scheduling again would change nothing either,
    /// whatever the board says (a robot ticked every round costs nothing then).
    settled: bool,
}

impl TaskManager {
    /// A Task Manager for a robot that can run `capabilities`, living in `world`.
    pub fn new(capabilities: &[TaskClass], world: Option<String>) -> Self {
        TaskManager {
            capabilities: crate::wire::class_set(capabilities),
            world,
            tasks: HashMap::new(),
            queue: Vec::new(),
            blocked: 0,
            running: [None; 3],
            sync: SyncTasks::default(),
            out: VecDeque::new(),
            tail: None,
            settled: false,
        }
    }

    /// Whether the robot can run tasks of `class`.
    pub fn can(&self, class: TaskClass) -> bool {
        self.capabilities[class.index()]
    }

    /// Whether the robot may take `spec` at all (class and world).
    pub fn refusal(&self, spec: &TaskSpec) -> Option<FailCode> {
        if !self.can(spec.class()) {
            return Some(FailCode::NotCapable);
        }
        match (&spec.world, &self.world) {
            (Some(w), Some(mine)) if w != mine => Some(FailCode::WrongWorld),
            _ => None,
        }
    }

    fn set_state(&mut self, task: TaskId, state: TaskState) {
        self.settled = false;
        if let Some(h) = self.tasks.get_mut(&task) {
            if h.state != state {
                let was_blocked = matches!(h.state, TaskState::Blocked { .. });
                let is_blocked = matches!(state, TaskState::Blocked { .. });
                if was_blocked != is_blocked {
                    if is_blocked {
                        self.blocked += 1;
                    } else {
                        self.blocked -= 1;
                    }
                }
                h.state = state;
                self.out.push_back(TmEvent::State { task, state });
            }
        }
        if state.is_final() {
            self.queue.retain(|&t| t != task);
            self.sync.forget(task);
        }
        self.refresh_tail();
    }

    /// The last point of the movement task that will run last: the last one queued that is
    /// not running nor BLOCKED (it will not run), or else the running one.
    fn refresh_tail(&mut self) {
        let current = self.running[TaskClass::Movement.index()];
        let last_queued = self.queue.iter().rev().find_map(|&t| {
            let h = self.tasks.get(&t)?;
            (Some(t) != current
                && h.spec.class() == TaskClass::Movement
                && !matches!(h.state, TaskState::Blocked { .. }))
            .then(|| h.spec.kind.last_point())
            .flatten()
        });
        self.tail = last_queued.or_else(|| {
            current
                .and_then(|t| self.tasks.get(&t))
                .and_then(|h| h.spec.kind.last_point())
        });
    }

    /// Where the robot will be once its movement tasks are done (`None`: it holds none that
    /// may still run, so where it is now); BLOCKED tasks are left out, as they will not run.
    /// Constant time: kept up to date as the queue changes.
    pub fn movement_end(&self) -> Option<(f64, f64)> {
        self.tail
    }

    /// A task to run (from the Control Center or won in an auction). It is reported
    /// QUEUED, or FAILED when the robot cannot take it (class, world, cycle).
    pub fn submit(&mut self, spec: TaskSpec, board: &TaskBoard) -> Result<(), TmError> {
        self.settled = false;
        let id = spec.id;
        if self.tasks.contains_key(&id) {
            // The task already held keeps its state; nothing is reported for the duplicate.
            return Err(TmError::Duplicate(id));
        }
        let refusal = self.refusal(&spec);
        let after = spec.after.clone();
        self.tasks.insert(
            id,
            Held {
                spec,
                state: TaskState::Queued,
                step: 0,
            },
        );
        self.out.push_back(TmEvent::State {
            task: id,
            state: TaskState::Queued,
        });
        if let Some(code) = refusal {
            self.set_state(id, TaskState::Failed { code });
            return Ok(());
        }
        self.queue.push(id);
        self.refresh_tail();
        if !after.is_empty() {
            let request = SyncRequest::SetDependencies { task: id, after };
            if let Some(SyncResponse::Cycle { .. }) = self.sync.handle(request, board) {
                self.set_state(
                    id,
                    TaskState::Failed {
                        code: FailCode::Cycle,
                    },
                );
            }
        }
        Ok(())
    }

    /// Starts whatever may start: for each free class, the first queued task of that class
    /// whose preconditions are met. Tasks whose preconditions failed are marked BLOCKED.
    pub fn schedule(&mut self, board: &TaskBoard) {
        if self.queue.is_empty() || self.settled {
            return;
        }
        let events = self.out.len();
        self.schedule_queue(board);
        // Every change schedule makes is reported (a new state, a basic task to start).
        self.settled = self.out.len() == events && !self.sync.waits();
    }

    fn schedule_queue(&mut self, board: &TaskBoard) {
        let mut i = 0;
        while i < self.queue.len() {
            let id = self.queue[i];
            i += 1;
            let Some(h) = self.tasks.get(&id) else {
                continue;
            };
            let class = h.spec.class();
            if !matches!(h.state, TaskState::Queued | TaskState::Blocked { .. }) {
                continue;
            }
            let blocked_now = matches!(h.state, TaskState::Blocked { .. });
            let free = self.running[class.index()].is_none();
            if !free && !blocked_now && self.sync.waiting_for(id).is_empty() {
                continue; // nothing to learn: it waits for its class only
            }
            let Some(SyncResponse::Response {
                can_run,
                blocked_by,
                ..
            }) = self.sync.handle(SyncRequest::Query { task: id }, board)
            else {
                continue;
            };
            match (can_run, blocked_by) {
                (true, _) if free => {
                    self.running[class.index()] = Some(id);
                    self.set_state(id, TaskState::Running);
                    self.start_step(id);
                }
                (true, _) => {
                    if blocked_now {
                        self.set_state(id, TaskState::Queued);
                    }
                }
                (false, Some(by)) => self.set_state(id, TaskState::Blocked { by }),
                (false, None) => {
                    if blocked_now {
                        self.set_state(id, TaskState::Queued);
                    }
                }
            }
        }
    }

    fn start_step(&mut self, id: TaskId) {
        let Some(h) = self.tasks.get(&id) else { return };
        let class = h.spec.class();
        match h.spec.kind.basic(h.step) {
            Some(basic) => self.out.push_back(TmEvent::Start {
                task: id,
                class,
                index: h.step,
                basic,
            }),
            None => {
                self.running[class.index()] = None;
                self.set_state(id, TaskState::Ended);
            }
        }
    }

    /// The lower layer concluded the current basic task of `task`: the next one starts, or
    /// the task ENDS; an error FAILS the task with `code`.
    pub fn basic_done(
        &mut self,
        task: TaskId,
        result: Result<(), FailCode>,
    ) -> Result<(), TmError> {
        self.settled = false;
        let h = self.tasks.get_mut(&task).ok_or(TmError::Unknown(task))?;
        let class = h.spec.class();
        if h.state != TaskState::Running || self.running[class.index()] != Some(task) {
            return Err(TmError::NotRunning(task));
        }
        match result {
            Ok(()) => {
                h.step += 1;
                self.start_step(task);
            }
            Err(code) => {
                self.running[class.index()] = None;
                self.set_state(task, TaskState::Failed { code });
            }
        }
        Ok(())
    }

    /// Aborts a task: a running one is stopped in the lower layer.
    pub fn abort(&mut self, task: TaskId) -> Result<(), TmError> {
        self.settled = false;
        let h = self.tasks.get(&task).ok_or(TmError::Unknown(task))?;
        if h.state.is_final() {
            return Err(TmError::AlreadyFinal(task));
        }
        let class = h.spec.class();
        if self.running[class.index()] == Some(task) {
            self.running[class.index()] = None;
            self.out.push_back(TmEvent::Stop { task, class });
        }
        self.set_state(task, TaskState::Aborted);
        Ok(())
    }

    /// Removes a final task from tracking.
    pub fn clear(&mut self, task: TaskId) -> Result<(), TmError> {
        self.settled = false;
        let h = self.tasks.get(&task).ok_or(TmError::Unknown(task))?;
        if !h.state.is_final() {
            return Err(TmError::NotFinal(task));
        }
        self.tasks.remove(&task);
        Ok(())
    }

    /// Whether something waits in [`TaskManager::poll_event`].
    #[inline]
    pub fn has_events(&self) -> bool {
        !self.out.is_empty()
    }

    /// The next thing to do or report.
    pub fn poll_event(&mut self) -> Option<TmEvent> {
        self.out.pop_front()
    }

    /// A held task.
    pub fn get(&self, task: TaskId) -> Option<&Held> {
        self.tasks.get(&task)
    }

    /// The task running in each class.
    pub fn running(&self) -> crate::model::Running {
        crate::model::Running {
            movement: self.running[0],
            perception: self.running[1],
            pan_tilt: self.running[2],
        }
    }

    /// Tasks held and not final (BLOCKED ones included).
    pub fn outstanding(&self) -> usize {
        self.queue.len()
    }

    /// Tasks held that may still run: neither final nor BLOCKED. These are what take a place
    /// in the robot's queue (a Contract Net bidder's `max_queue`); a BLOCKED task waits for
    /// the operator and keeps the robot no more than a final one.
    pub fn pending(&self) -> usize {
        self.queue.len() - self.blocked
    }

    /// Non-final tasks in arrival order.
    pub fn queue(&self) -> impl Iterator<Item = &Held> + '_ {
        self.queue.iter().filter_map(|t| self.tasks.get(t))
    }

    /// Where the robot will be once its movement tasks are done, starting from `here`, and
    /// the straight-line distance it will have driven to get there (BLOCKED tasks left out).
    pub fn plan_end(&self, here: (f64, f64)) -> ((f64, f64), f64) {
        let mut at = here;
        let mut driven = 0.0;
        let current = self.running[TaskClass::Movement.index()];
        let running = current.and_then(|t| self.tasks.get(&t));
        let rest = self.queue().filter(|h| Some(h.spec.id) != current);
        for h in running.into_iter().chain(rest) {
            if h.spec.class() != TaskClass::Movement || matches!(h.state, TaskState::Blocked { .. })
            {
                continue;
            }
            let rest: Vec<BasicKind> = (h.step..h.spec.kind.basic_count())
                .filter_map(|i| h.spec.kind.basic(i))
                .collect();
            for b in rest {
                if let BasicKind::GoTo { x, y } = b {
                    driven += (x - at.0).hypot(y - at.1);
                    at = (x, y);
                }
            }
        }
        (at, driven)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::TaskKind;

    fn drain(tm: &mut TaskManager, board: &mut TaskBoard) -> Vec<TmEvent> {
        let mut v = Vec::new();
        while let Some(e) = tm.poll_event() {
            if let TmEvent::State { task, state } = e {
                board.publish(task, state);
            }
            v.push(e);
        }
        v
    }

    fn all() -> Vec<TaskClass> {
        TaskClass::ALL.to_vec()
    }

    #[test]
    fn states_from_queued_to_ended_one_basic_task_at_a_time() {
        let mut b = TaskBoard::default();
        let mut tm = TaskManager::new(&all(), None);
        tm.submit(
            TaskSpec::new(
                1,
                TaskKind::Path {
                    points: vec![[1.0, 0.0], [2.0, 0.0]],
                },
            ),
            &b,
        )
        .unwrap();
        assert_eq!(
            drain(&mut tm, &mut b),
            [TmEvent::State {
                task: 1,
                state: TaskState::Queued
            }]
        );
        tm.schedule(&b);
        let ev = drain(&mut tm, &mut b);
        assert_eq!(
            ev[0],
            TmEvent::State {
                task: 1,
                state: TaskState::Running
            }
        );
        assert!(
            matches!(ev[1], TmEvent::Start { task: 1, index: 0, basic: BasicKind::GoTo { x, .. }, .. } if x == 1.0)
        );
        assert_eq!(ev.len(), 2, "the second point waits for the first");
        tm.basic_done(1, Ok(())).unwrap();
        let ev = drain(&mut tm, &mut b);
        assert!(matches!(ev[..], [TmEvent::Start { index: 1, .. }]));
        tm.basic_done(1, Ok(())).unwrap();
        assert_eq!(
            drain(&mut tm, &mut b),
            [TmEvent::State {
                task: 1,
                state: TaskState::Ended
            }]
        );
        assert_eq!(tm.basic_done(1, Ok(())), Err(TmError::NotRunning(1)));
        assert_eq!(tm.clear(1), Ok(()));
        assert_eq!(tm.clear(1), Err(TmError::Unknown(1)));
    }

    #[test]
    fn classes_run_in_parallel_one_of_each() {
        let mut b = TaskBoard::default();
        let mut tm = TaskManager::new(&all(), None);
        tm.submit(TaskSpec::new(1, TaskKind::Goto { x: 1.0, y: 1.0 }), &b)
            .unwrap();
        tm.submit(TaskSpec::new(2, TaskKind::Goto { x: 2.0, y: 1.0 }), &b)
            .unwrap();
        tm.submit(TaskSpec::new(3, TaskKind::Perceive { seconds: 1.0 }), &b)
            .unwrap();
        tm.submit(
            TaskSpec::new(
                4,
                TaskKind::PanTilt {
                    pan: 0.1,
                    tilt: 0.2,
                    seconds: 0.0,
                },
            ),
            &b,
        )
        .unwrap();
        drain(&mut tm, &mut b);
        tm.schedule(&b);
        drain(&mut tm, &mut b);
        assert_eq!(tm.running().movement, Some(1));
        assert_eq!(tm.running().perception, Some(3));
        assert_eq!(tm.running().pan_tilt, Some(4));
        assert_eq!(tm.get(2).unwrap().state, TaskState::Queued);
        tm.basic_done(1, Err(FailCode::Unreachable)).unwrap();
        tm.schedule(&b);
        let ev = drain(&mut tm, &mut b);
        assert_eq!(
            ev[0],
            TmEvent::State {
                task: 1,
                state: TaskState::Failed {
                    code: FailCode::Unreachable
                }
            }
        );
        assert_eq!(tm.running().movement, Some(2));
    }

    #[test]
    fn abort_stops_the_running_task_and_refusals_fail() {
        let mut b = TaskBoard::default();
        let mut tm = TaskManager::new(&[TaskClass::Movement], Some("mrs".into()));
        tm.submit(TaskSpec::new(1, TaskKind::Goto { x: 1.0, y: 1.0 }), &b)
            .unwrap();
        tm.submit(TaskSpec::new(2, TaskKind::Perceive { seconds: 1.0 }), &b)
            .unwrap();
        let mut other = TaskSpec::new(3, TaskKind::Goto { x: 0.0, y: 0.0 });
        other.world = Some("simrob".into());
        tm.submit(other, &b).unwrap();
        assert_eq!(
            tm.submit(TaskSpec::new(1, TaskKind::Goto { x: 5.0, y: 1.0 }), &b),
            Err(TmError::Duplicate(1))
        );
        tm.schedule(&b);
        let ev = drain(&mut tm, &mut b);
        assert!(ev.contains(&TmEvent::State {
            task: 2,
            state: TaskState::Failed {
                code: FailCode::NotCapable
            }
        }));
        assert!(ev.contains(&TmEvent::State {
            task: 3,
            state: TaskState::Failed {
                code: FailCode::WrongWorld
            }
        }));
        assert_eq!(
            tm.get(1).unwrap().state,
            TaskState::Running,
            "the duplicate changes nothing"
        );
        assert_eq!(tm.clear(1), Err(TmError::NotFinal(1)));
        tm.abort(1).unwrap();
        let ev = drain(&mut tm, &mut b);
        assert_eq!(
            ev,
            [
                TmEvent::Stop {
                    task: 1,
                    class: TaskClass::Movement
                },
                TmEvent::State {
                    task: 1,
                    state: TaskState::Aborted
                },
            ]
        );
        assert_eq!(tm.abort(1), Err(TmError::AlreadyFinal(1)));
        assert_eq!(tm.outstanding(), 0);
    }

    /// A BLOCKED task will not run: it takes no place among the tasks pending and the
    /// robot's route does not end at it; aborted, it leaves the count of tasks held too.
    #[test]
    fn blocked_tasks_are_not_pending_and_the_route_does_not_end_at_them() {
        let mut b = TaskBoard::default();
        let mut tm = TaskManager::new(&all(), None);
        tm.submit(TaskSpec::new(1, TaskKind::Goto { x: 1.0, y: 0.0 }), &b)
            .unwrap();
        let mut far = TaskSpec::new(2, TaskKind::Goto { x: 100.0, y: 0.0 });
        far.after = vec![9];
        tm.submit(far, &b).unwrap();
        tm.schedule(&b);
        drain(&mut tm, &mut b);
        assert_eq!(
            (tm.outstanding(), tm.pending()),
            (2, 2),
            "waiting is pending"
        );
        assert_eq!(tm.movement_end(), Some((100.0, 0.0)));
        b.publish(9, TaskState::Aborted);
        tm.schedule(&b);
        drain(&mut tm, &mut b);
        assert_eq!(tm.get(2).unwrap().state, TaskState::Blocked { by: 9 });
        assert_eq!((tm.outstanding(), tm.pending()), (2, 1));
        assert_eq!(
            tm.movement_end(),
            Some((1.0, 0.0)),
            "the running task's end"
        );
        assert_eq!(tm.plan_end((0.0, 0.0)), ((1.0, 0.0), 1.0));
        tm.abort(2).unwrap();
        assert_eq!((tm.outstanding(), tm.pending()), (1, 1));
        tm.basic_done(1, Ok(())).unwrap();
        assert_eq!((tm.outstanding(), tm.pending()), (0, 0));
        assert_eq!(tm.movement_end(), None);
    }

    #[test]
    fn a_waiting_task_is_overtaken_and_plans_end_where_the_queue_ends() {
        let mut b = TaskBoard::default();
        let mut tm = TaskManager::new(&all(), None);
        let mut first = TaskSpec::new(2, TaskKind::Goto { x: 3.0, y: 4.0 });
        first.after = vec![1];
        tm.submit(first, &b).unwrap();
        tm.submit(TaskSpec::new(3, TaskKind::Goto { x: 3.0, y: 0.0 }), &b)
            .unwrap();
        tm.schedule(&b);
        drain(&mut tm, &mut b);
        assert_eq!(tm.running().movement, Some(3));
        assert_eq!(
            tm.plan_end((0.0, 0.0)),
            ((3.0, 4.0), 7.0),
            "the running task first"
        );
        assert_eq!(
            tm.movement_end(),
            Some((3.0, 4.0)),
            "kept as the queue changes"
        );
        tm.abort(2).unwrap();
        assert_eq!(tm.movement_end(), Some((3.0, 0.0)));
        tm.basic_done(3, Ok(())).unwrap();
        assert_eq!(tm.movement_end(), None, "nothing left: where the robot is");
    }
}
