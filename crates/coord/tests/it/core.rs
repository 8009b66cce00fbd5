//! The coordination core end to end, in memory: a Control Center and robots exchanging
//! GRI messages through the codec, with time driven by the test.

use std::collections::BTreeMap;

use simrob_coord::cc::{Allocation, CcConfig, CcError, Condition, ControlCenter, LogKind};
use simrob_coord::cnp::{AuctionError, CnpConfig, Euclidean};
use simrob_coord::model::{FailCode, RobotInfo, TaskClass, TaskId, TaskKind, TaskSpec, TaskState};
use simrob_coord::robot::{Command, RobotAgent, RobotPose};
use simrob_coord::sync::TaskBoard;
use simrob_coord::time::TimeServer;
use simrob_coord::wire::{decode, encode, Envelope, Msg, OperatorCommand, Policy};

struct Bot {
    agent: RobotAgent,
    board: TaskBoard,
    pose: RobotPose,
    /// Basic tasks the lower layer is running.
    running: Vec<(TaskId, TaskClass)>,
}

/// A Control Center, robots and a wire between them (every message goes through the codec).
struct Net {
    cc: ControlCenter,
    ts: TimeServer,
    bots: BTreeMap<u32, Bot>,
    now: f64,
    /// Drops a message when it returns true.
    drop: Box<dyn FnMut(&Envelope) -> bool>,
    /// Holds back messages when it returns true (delivered by `release`).
    hold: Box<dyn FnMut(&Envelope) -> bool>,
    held: Vec<Envelope>,
    delivered: u64,
}

fn info(robot: u32, caps: &[TaskClass]) -> RobotInfo {
    RobotInfo {
        robot,
        name: format!("r{robot}"),
        kind: "test".into(),
        world: "flat".into(),
        capabilities: caps.to_vec(),
        speed: 1.0,
    }
}

fn wire(env: &Envelope) -> Envelope {
    decode(encode(env).as_bytes(), 1).expect("every message survives the codec")
}

impl Net {
    fn new(policy: Policy) -> Self {
        let config = CcConfig {
            policy,
            cnp: CnpConfig {
                bid_window: 1.0,
                accept_window: 1.0,
            },
            ..CcConfig::default()
        };
        Net {
            cc: ControlCenter::new(config),
            ts: TimeServer::new(0.5),
            bots: BTreeMap::new(),
            now: 0.0,
            drop: Box::new(|_| false),
            hold: Box::new(|_| false),
            held: Vec::new(),
            delivered: 0,
        }
    }

    fn add(&mut self, id: u32, caps: &[TaskClass], x: f64) {
        let agent = RobotAgent::new(info(id, caps));
        let hello = agent.hello();
        self.bots.insert(
            id,
            Bot {
                agent,
                board: TaskBoard::default(),
                pose: RobotPose {
                    x,
                    ..RobotPose::default()
                },
                running: Vec::new(),
            },
        );
        self.send_cc(hello);
        self.status(id);
        self.settle();
    }

    fn status(&mut self, id: u32) {
        let now = self.now;
        let b = self.bots.get_mut(&id).unwrap();
        let s = b.agent.status(now, b.pose, None, None);
        self.send_cc(s);
    }

    fn send_cc(&mut self, env: Envelope) {
        if (self.drop)(&env) {
            return;
        }
        if (self.hold)(&env) {
            self.held.push(env);
            return;
        }
        self.delivered += 1;
        self.cc
            .handle(wire(&env), self.now)
            .expect("the Control Center accepts it");
    }

    /// Delivers everything until nothing moves.
    fn settle(&mut self) {
        loop {
            let mut moved = false;
            if let Some(msg) = self.ts.tick(self.now) {
                let env = Envelope {
                    from: 1000,
                    to: None,
                    msg,
                };
                self.cc.handle(env.clone(), self.now).unwrap();
                self.deliver(&env);
            }
            self.cc.handle_timeout(self.now);
            while let Some(env) = self.cc.poll_transmit() {
                moved = true;
                if (self.drop)(&env) {
                    continue;
                }
                let env = wire(&env);
                self.deliver(&env);
            }
            let ids: Vec<u32> = self.bots.keys().copied().collect();
            for id in ids {
                let now = self.now;
                let b = self.bots.get_mut(&id).unwrap();
                b.agent.tick(now, &mut b.board);
                let mut out = Vec::new();
                while let Some(e) = b.agent.poll_transmit() {
                    out.push(e);
                }
                while let Some(c) = b.agent.poll_command() {
                    match c {
                        Command::Start { task, class, .. } => b.running.push((task, class)),
                        Command::Stop { task, .. } => b.running.retain(|r| r.0 != task),
                    }
                }
                for e in out {
                    moved = true;
                    self.send_cc(e);
                }
            }
            if !moved {
                break;
            }
        }
    }

    fn deliver(&mut self, env: &Envelope) {
        let now = self.now;
        for (id, b) in self.bots.iter_mut() {
            if env.to.is_none() || env.to == Some(*id) {
                b.agent.handle(env, now, b.pose, &mut b.board, &Euclidean);
            }
        }
    }

    fn advance(&mut self, dt: f64) {
        self.now += dt;
        self.settle();
    }

    /// Robot `id`'s lower layer finishes the basic task it runs for `task`.
    fn finish(&mut self, id: u32, task: TaskId, result: Result<(), FailCode>) {
        let now = self.now;
        let b = self.bots.get_mut(&id).unwrap();
        assert!(
            b.running.iter().any(|r| r.0 == task),
            "robot {id} is not running task {task}: {:?}",
            b.running
        );
        b.running.retain(|r| r.0 != task);
        b.agent.basic_done(task, result, now, &mut b.board).unwrap();
        self.settle();
    }

    fn state(&self, task: TaskId) -> Option<TaskState> {
        self.cc.tasks().get(&task).and_then(|t| t.state)
    }

    fn holder(&self, task: TaskId) -> Allocation {
        self.cc.tasks()[&task].allocation
    }

    fn logs(&mut self, kind: LogKind) -> Vec<String> {
        let mut v = Vec::new();
        while let Some(l) = self.cc.poll_log() {
            if l.kind == kind {
                v.push(l.text);
            }
        }
        v
    }
}

/// A bid from `from` to the Control Center, in `robot`'s name (`None`: a refusal).
fn bid(from: u32, auction: u64, robot: u32, cost: Option<f64>) -> Envelope {
    Envelope {
        from,
        to: Some(0),
        msg: Msg::Bid {
            auction,
            robot,
            cost,
        },
    }
}

fn goto(x: f64) -> TaskSpec {
    TaskSpec::new(0, TaskKind::Goto { x, y: 0.0 })
}

fn after(mut t: TaskSpec, deps: &[TaskId]) -> TaskSpec {
    t.after = deps.to_vec();
    t
}

const MOVE: &[TaskClass] = &[TaskClass::Movement];

#[test]
fn b_waits_for_a_on_another_robot_then_runs() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.add(2, MOVE, 10.0);
    let a = net.cc.send_task(1, goto(5.0)).unwrap();
    let b = net.cc.send_task(2, after(goto(20.0), &[a])).unwrap();
    net.settle();
    assert_eq!(net.state(a), Some(TaskState::Running));
    assert_eq!(net.state(b), Some(TaskState::Queued), "B waits for A");
    net.advance(5.0);
    assert_eq!(
        net.state(b),
        Some(TaskState::Queued),
        "still waiting: time alone changes nothing"
    );
    net.finish(1, a, Ok(()));
    assert_eq!(net.state(a), Some(TaskState::Ended));
    assert_eq!(
        net.state(b),
        Some(TaskState::Running),
        "A's ENDED reached robot 2 and B started"
    );
    net.finish(2, b, Ok(()));
    assert_eq!(net.state(b), Some(TaskState::Ended));
    let states = net.logs(LogKind::States);
    assert!(
        states
            .iter()
            .any(|l| l == &format!("robot=2\ttask={b}\tQUEUED→RUNNING")),
        "{states:?}"
    );
}

#[test]
fn task_states_reach_the_robots_that_wait_on_them_even_after_the_fact() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.add(2, MOVE, 10.0);
    net.add(3, MOVE, 20.0);
    let a = net.cc.send_task(1, goto(5.0)).unwrap();
    net.settle();
    net.finish(1, a, Ok(()));
    // Robot 3 holds nothing that waits on A: it hears none of A's states.
    assert_eq!(
        net.bots[&3].board.get(a),
        None,
        "no broadcast of every state"
    );
    // B is given after A ENDED: the Control Center tells robot 2 with the task.
    let b = net.cc.send_task(2, after(goto(20.0), &[a])).unwrap();
    net.settle();
    assert_eq!(net.state(b), Some(TaskState::Running));
    // C waits on B, which is cleared once ENDED, before C reaches a robot: robot 3 still
    // learns that B ENDED.
    let c = net.cc.submit(after(goto(40.0), &[b])).unwrap();
    net.cc.set_policy(Policy::Greedy);
    net.finish(2, b, Ok(()));
    net.cc.clear(b).unwrap();
    net.status(1);
    net.status(2);
    net.status(3);
    net.advance(0.1);
    assert!(
        matches!(net.holder(c), Allocation::Robot(_)),
        "{:?}",
        net.holder(c)
    );
    assert_eq!(
        net.state(c),
        Some(TaskState::Running),
        "a cleared precondition's ENDED travels with the task"
    );
}

#[test]
fn the_map_shows_every_robot_and_task_as_plain_data() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.add(2, &[TaskClass::Perception], 10.0);
    let a = net.cc.send_task(1, goto(5.0)).unwrap();
    let p = net
        .cc
        .send_task(
            2,
            after(TaskSpec::new(0, TaskKind::Perceive { seconds: 2.0 }), &[a]),
        )
        .unwrap();
    net.settle();
    net.status(1);
    net.status(2);
    net.settle();
    let map = net.cc.map();
    assert_eq!(map.policy, Policy::Cnp);
    let r: Vec<_> = map
        .robots
        .iter()
        .map(|r| (r.robot, r.condition, r.pose))
        .collect();
    assert_eq!(
        r,
        [
            (1, Condition::Busy, Some([0.0, 0.0, 0.0])),
            (2, Condition::Idle, Some([10.0, 0.0, 0.0]))
        ]
    );
    assert_eq!(map.robots[0].running.movement, Some(a));
    let t: Vec<_> = map
        .tasks
        .iter()
        .map(|t| (t.task, t.robot, t.state, t.target))
        .collect();
    assert_eq!(
        t,
        [
            (a, Some(1), Some(TaskState::Running), Some([5.0, 0.0])),
            (p, Some(2), Some(TaskState::Queued), None)
        ]
    );
    assert_eq!(map.tasks[1].what, format!("perceive 2 after {a} in flat"));
    net.cc.leave(2);
    assert_eq!(net.cc.map().robots[1].condition, Condition::Left);
    let json = serde_json::to_string(&net.cc.map()).unwrap();
    assert!(json.contains("\"condition\":\"left\""), "{json}");
}

#[test]
fn a_dependency_cycle_is_refused_and_changes_nothing() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.add(2, MOVE, 10.0);
    // Tasks 10 → 11 → 12 → 10, named ahead of time by the operator.
    net.cc
        .send_task(
            1,
            after(
                TaskSpec {
                    id: 10,
                    ..goto(1.0)
                },
                &[12],
            ),
        )
        .unwrap();
    net.cc
        .send_task(
            2,
            after(
                TaskSpec {
                    id: 11,
                    ..goto(2.0)
                },
                &[10],
            ),
        )
        .unwrap();
    let err = net
        .cc
        .send_task(
            2,
            after(
                TaskSpec {
                    id: 12,
                    ..goto(3.0)
                },
                &[11],
            ),
        )
        .unwrap_err();
    assert_eq!(
        err,
        CcError::Cycle {
            task: 12,
            cycle: vec![12, 11, 10, 12]
        }
    );
    assert!(!net.cc.tasks().contains_key(&12));
    assert!(net
        .cc
        .send_task(
            1,
            after(
                TaskSpec {
                    id: 13,
                    ..goto(3.0)
                },
                &[13]
            )
        )
        .is_err());
    // A robot refuses a cycle it can see on its own, whoever sent it.
    let mut board = TaskBoard::default();
    let bot = &mut net.bots.get_mut(&1).unwrap().agent;
    bot.tm
        .submit(
            after(
                TaskSpec {
                    id: 20,
                    ..goto(1.0)
                },
                &[21],
            ),
            &board,
        )
        .unwrap();
    bot.tm
        .submit(
            after(
                TaskSpec {
                    id: 21,
                    ..goto(1.0)
                },
                &[20],
            ),
            &board,
        )
        .unwrap();
    bot.tick(0.0, &mut board);
    assert_eq!(
        board.get(21),
        Some(TaskState::Failed {
            code: FailCode::Cycle
        })
    );
    assert_eq!(
        board.get(20),
        Some(TaskState::Blocked { by: 21 }),
        "and what waits on it is blocked"
    );
}

#[test]
fn a_failed_precondition_shows_as_blocked_until_the_operator_acts() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.add(2, MOVE, 10.0);
    let a = net.cc.send_task(1, goto(5.0)).unwrap();
    let b = net.cc.send_task(2, after(goto(20.0), &[a])).unwrap();
    let c = net.cc.send_task(2, after(goto(30.0), &[b])).unwrap();
    net.settle();
    net.finish(1, a, Err(FailCode::Unreachable));
    assert_eq!(
        net.state(a),
        Some(TaskState::Failed {
            code: FailCode::Unreachable
        })
    );
    assert_eq!(net.state(b), Some(TaskState::Blocked { by: a }));
    assert_eq!(
        net.state(c),
        Some(TaskState::Blocked { by: a }),
        "the root cause is named"
    );
    assert!(net.cc.tasks_table().contains(&format!("BLOCKED(by {a})")));
    // The operator clears B: the robot drops it and stops tracking it.
    net.cc.clear(b).unwrap();
    net.settle();
    assert!(!net.cc.tasks().contains_key(&b));
    assert!(net.bots[&2].agent.tm.get(b).is_none());
    assert_eq!(net.cc.clear(c).err(), None);
}

/// A BLOCKED task keeps its robot no more than a final one: under a centralised policy the
/// robot is idle again once all it holds is blocked, and clearing the blocked task leaves
/// it idle (its robot's ABORTED for the cleared task is taken quietly, not refused).
#[test]
fn a_robot_whose_tasks_are_blocked_or_cleared_is_allocated_again() {
    for policy in [Policy::Greedy, Policy::Hungarian] {
        let mut net = Net::new(policy);
        net.add(1, &TaskClass::ALL, 0.0);
        let a = net.cc.send_task(1, goto(100.0)).unwrap();
        let b = net
            .cc
            .send_task(
                1,
                after(TaskSpec::new(0, TaskKind::Perceive { seconds: 1.0 }), &[a]),
            )
            .unwrap();
        net.settle();
        net.finish(1, a, Err(FailCode::Unreachable));
        assert_eq!(net.state(b), Some(TaskState::Blocked { by: a }));
        // Only a blocked task left: the robot takes the next one.
        let c = net.cc.submit(goto(2.0)).unwrap();
        net.advance(0.1);
        assert_eq!(net.holder(c), Allocation::Robot(1), "{policy:?}");
        net.finish(1, c, Ok(()));
        // The operator clears the blocked task: the robot is idle, and is given more.
        net.cc.clear(b).unwrap();
        net.advance(0.1);
        assert!(net.bots[&1].agent.tm.get(b).is_none());
        assert_eq!(net.cc.robots()[&1].assigned, 0);
        let d = net.cc.submit(goto(3.0)).unwrap();
        net.advance(0.1);
        assert_eq!(net.holder(d), Allocation::Robot(1), "{policy:?}");
        let states = net.logs(LogKind::States);
        assert!(
            !states.iter().any(|l| l.contains("unknown task")),
            "{states:?}"
        );
    }
}

/// Under Contract Net too a BLOCKED task keeps its robot no more than a final one: it takes
/// no place in the robot's queue (`max_queue`, 3), and adds nothing to the route or the
/// booked seconds the robot bids with. A robot holding three blocked tasks still bids, its
/// true cost; the tasks that may still run fill its queue as before.
#[test]
fn under_contract_net_blocked_tasks_take_no_queue_place_and_add_nothing_to_a_bid() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, &TaskClass::ALL, 0.0);
    net.add(2, &TaskClass::ALL, 10.0);
    // Robot 2's task fails: the three robot 1 holds after it are BLOCKED, one of each class.
    let p = net.cc.send_task(2, goto(10.0)).unwrap();
    let far = net.cc.send_task(1, after(goto(100.0), &[p])).unwrap();
    let look = net
        .cc
        .send_task(
            1,
            after(TaskSpec::new(0, TaskKind::Perceive { seconds: 50.0 }), &[p]),
        )
        .unwrap();
    let pan = net
        .cc
        .send_task(
            1,
            after(
                TaskSpec::new(
                    0,
                    TaskKind::PanTilt {
                        pan: 0.5,
                        tilt: 0.0,
                        seconds: 50.0,
                    },
                ),
                &[p],
            ),
        )
        .unwrap();
    net.settle();
    net.finish(2, p, Err(FailCode::Unreachable));
    for t in [far, look, pan] {
        assert_eq!(net.state(t), Some(TaskState::Blocked { by: p }), "task {t}");
    }
    net.logs(LogKind::Tasks);
    let accepted = |net: &mut Net| -> Vec<String> {
        net.logs(LogKind::Tasks)
            .into_iter()
            .filter(|l| l.starts_with("accepted"))
            .collect()
    };
    // A point 1 m from robot 1: it bids 1 m (not 99 m from where its blocked task would
    // have left it) and beats robot 2's 9 m; with three blocked tasks it still bids.
    let near = net.cc.submit(goto(1.0)).unwrap();
    net.settle();
    let won = accepted(&mut net);
    assert_eq!(net.holder(near), Allocation::Robot(1), "{won:?}");
    assert!(won[0].ends_with("robot=1\tcost=1.000"), "{won:?}");
    // Two seconds of perception: robot 1 bids 2 s, not 52 s behind its blocked 50 s, and
    // wins the tie with robot 2 (the lower id).
    let glance = net
        .cc
        .submit(TaskSpec::new(0, TaskKind::Perceive { seconds: 2.0 }))
        .unwrap();
    net.settle();
    let won = accepted(&mut net);
    assert_eq!(net.holder(glance), Allocation::Robot(1), "{won:?}");
    assert!(won[0].ends_with("robot=1\tcost=2.000"), "{won:?}");
    // The tasks that may run still fill the queue: a third, then robot 1 refuses.
    let third = net.cc.submit(goto(2.0)).unwrap();
    net.settle();
    assert_eq!(net.holder(third), Allocation::Robot(1));
    let fourth = net.cc.submit(goto(3.0)).unwrap();
    net.settle();
    assert_eq!(
        net.holder(fourth),
        Allocation::Robot(2),
        "robot 1 holds three tasks that may run"
    );
    assert_eq!(
        net.bots[&1].agent.tm.outstanding(),
        6,
        "three blocked, three that may run"
    );
}

/// A task announced for Contract Net that nobody took follows the policy in force: under
/// a centralised one, its next round allocates it like any waiting task.
#[test]
fn an_announced_task_nobody_took_follows_a_centralised_policy() {
    for policy in [Policy::Hungarian, Policy::Greedy] {
        let mut net = Net::new(policy);
        let t = net.cc.announce(goto(2.0)).unwrap();
        net.settle();
        assert_eq!(net.holder(t), Allocation::Waiting, "no robot to bid");
        net.add(1, MOVE, 0.0);
        net.advance(0.1);
        assert_eq!(net.holder(t), Allocation::Robot(1), "{policy:?}");
        // And the same once robots are there but none can take it.
        let p = net
            .cc
            .announce(TaskSpec::new(0, TaskKind::Perceive { seconds: 1.0 }))
            .unwrap();
        net.settle();
        assert_eq!(net.holder(p), Allocation::Waiting);
        net.add(2, &[TaskClass::Perception], 0.0);
        net.advance(0.1);
        assert_eq!(net.holder(p), Allocation::Robot(2), "{policy:?}");
    }
}

/// Contract Net holds a bid to what `send` would: a robot of another world, or without the
/// task's class, cannot win however low it bids; its bid is refused saying why, counts as
/// its refusal, and the award goes to a robot that may take the task. The same whether
/// the bids come as envelopes or as compact records through an outbox.
#[test]
fn contract_net_never_awards_a_task_to_a_robot_that_may_not_take_it() {
    use simrob_coord::outbox::Outbox;
    for outbox in [false, true] {
        let mut cc = ControlCenter::new(CcConfig::default());
        cc.join(info(1, MOVE)).unwrap();
        let mut lab = info(7, &TaskClass::ALL);
        lab.world = "lab".into();
        cc.join(lab).unwrap();
        cc.join(info(8, MOVE)).unwrap();
        let bids = |cc: &mut ControlCenter, list: Vec<(u64, u32, Option<f64>)>| {
            if outbox {
                let mut ob = Outbox::new();
                for (auction, robot, cost) in list {
                    ob.push_bid(auction, robot, cost);
                }
                cc.handle_outbox(&mut ob, 0.1)
            } else {
                list.into_iter()
                    .filter_map(|(a, r, c)| cc.handle(bid(r, a, r, c), 0.1).err())
                    .collect()
            }
        };
        let mut far = goto(100.0);
        far.world = Some("flat".into());
        let t = cc.announce(far).unwrap();
        drain(&mut cc);
        let refused = bids(
            &mut cc,
            vec![(1, 7, Some(0.0)), (1, 8, None), (1, 1, Some(99.0))],
        );
        assert_eq!(
            refused,
            vec![CcError::OtherWorld {
                task: "flat".into(),
                robot: 7,
                robot_world: "lab".into()
            }]
        );
        let (sent, _) = drain(&mut cc);
        assert!(
            sent.iter()
                .any(|e| matches!(e.msg, Msg::Award { winner: 1, .. })),
            "every robot answered, robot 1 wins: {sent:?}"
        );
        assert!(matches!(cc.tasks()[&t].allocation, Allocation::Auction(1)));
        // A class the bidder cannot run: robot 8 moves only.
        let p = cc
            .announce(TaskSpec::new(0, TaskKind::Perceive { seconds: 1.0 }))
            .unwrap();
        drain(&mut cc);
        let refused = bids(&mut cc, vec![(2, 8, Some(0.0)), (2, 1, None), (2, 7, None)]);
        assert_eq!(
            refused,
            vec![CcError::NotCapable {
                robot: 8,
                class: "perception"
            }]
        );
        let (sent, logs) = drain(&mut cc);
        assert!(
            !sent.iter().any(|e| matches!(e.msg, Msg::Award { .. })),
            "{sent:?}"
        );
        assert!(
            logs.iter().any(|l| l.contains("unallocated\tauction=2")),
            "{logs:?}"
        );
        assert_eq!(cc.tasks()[&p].allocation, Allocation::Waiting);
        assert_eq!(cc.cnp_stats().refusals, 5, "{outbox}");
    }
}

/// Robot messages about auctions or tasks that are not theirs are refused with the
/// reason (the server answers each with a `refused` line), change nothing, and leave no
/// log line that reads as a real decline or state change.
#[test]
fn bad_robot_messages_are_refused_and_never_logged_as_events() {
    let mut cc = ControlCenter::new(CcConfig::default());
    cc.join(info(1, MOVE)).unwrap();
    cc.join(info(2, MOVE)).unwrap();
    let held = cc.send_task(2, goto(1.0)).unwrap();
    drain(&mut cc);
    let robot1 = |msg: Msg| Envelope {
        from: 1,
        to: Some(0),
        msg,
    };
    let state = |task: TaskId| {
        robot1(Msg::TaskState {
            robot: 1,
            task,
            state: TaskState::Ended,
            time: 0.0,
            synced: false,
        })
    };
    let cases = [
        (
            bid(1, 12345, 1, Some(1.0)),
            CcError::Auction(AuctionError::NotOpen(12345)),
        ),
        (
            robot1(Msg::Accept {
                auction: 12345,
                robot: 1,
            }),
            CcError::Auction(AuctionError::NotOpen(12345)),
        ),
        (
            robot1(Msg::Decline {
                auction: 12345,
                robot: 1,
                reason: "x".into(),
            }),
            CcError::Auction(AuctionError::NotOpen(12345)),
        ),
        (state(4242), CcError::UnknownTask(4242)),
        (
            state(held),
            CcError::NotItsTask {
                robot: 1,
                task: held,
            },
        ),
    ];
    for (env, why) in cases {
        assert_eq!(cc.handle(wire(&env), 0.1), Err(why));
    }
    let (sent, logs) = drain(&mut cc);
    assert!(sent.is_empty(), "nothing relayed: {sent:?}");
    assert!(logs.is_empty(), "nothing logged: {logs:?}");
    assert_eq!(cc.tasks()[&held].state, None);
    // A decline once its auction has ended: refused, not logged as a decline.
    let t = cc.announce(goto(0.0)).unwrap();
    cc.handle(bid(1, 1, 1, Some(1.0)), 0.2).unwrap();
    cc.handle(bid(2, 1, 2, None), 0.2).unwrap();
    let accept = robot1(Msg::Accept {
        auction: 1,
        robot: 1,
    });
    cc.handle(accept, 0.3).unwrap();
    assert_eq!(cc.tasks()[&t].allocation, Allocation::Robot(1));
    drain(&mut cc);
    let late = robot1(Msg::Decline {
        auction: 1,
        robot: 1,
        reason: "changed my mind".into(),
    });
    assert_eq!(
        cc.handle(late, 0.4),
        Err(CcError::Auction(AuctionError::NotOpen(1)))
    );
    // Nor a decline from a robot the award is not out to.
    let u = cc.announce(goto(5.0)).unwrap();
    cc.handle(bid(1, 2, 1, Some(4.0)), 0.5).unwrap();
    cc.handle(bid(2, 2, 2, Some(9.0)), 0.5).unwrap();
    let not_mine = Envelope {
        from: 2,
        to: Some(0),
        msg: Msg::Decline {
            auction: 2,
            robot: 2,
            reason: "x".into(),
        },
    };
    assert_eq!(
        cc.handle(not_mine, 0.5),
        Err(CcError::Auction(AuctionError::NoAward {
            auction: 2,
            robot: 2
        }))
    );
    let (_, logs) = drain(&mut cc);
    assert!(!logs.iter().any(|l| l.contains("\tdeclined\t")), "{logs:?}");
    assert_eq!(cc.cnp_stats().declines, 0);
    assert!(matches!(cc.tasks()[&u].allocation, Allocation::Auction(2)));
}

#[test]
fn cnp_awards_the_lowest_bid_ties_to_the_lower_id_and_refusals_do_not_bid() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 10.0);
    net.add(2, MOVE, -10.0);
    net.add(3, &[TaskClass::Perception], 1.0);
    let t = net.cc.submit(goto(0.0)).unwrap();
    net.settle();
    assert_eq!(
        net.holder(t),
        Allocation::Robot(1),
        "a tie at 10 m goes to robot 1; robot 3 cannot move"
    );
    assert_eq!(net.state(t), Some(TaskState::Running));
    let stats = net.cc.cnp_stats();
    assert_eq!((stats.bids, stats.refusals), (2, 1));
    // Robot 1 now ends its queue at 0: it is the cheapest for the next one too.
    let u = net.cc.submit(goto(-1.0)).unwrap();
    net.settle();
    assert_eq!(net.holder(u), Allocation::Robot(1));
    assert_eq!(net.state(u), Some(TaskState::Queued));
}

#[test]
fn lost_bids_do_not_stall_the_auction_past_its_deadline() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.add(2, MOVE, 100.0);
    net.drop = Box::new(|e| matches!(e.msg, Msg::Bid { robot: 1, .. }));
    let t = net.cc.submit(goto(1.0)).unwrap();
    net.settle();
    assert!(
        matches!(net.holder(t), Allocation::Auction(_)),
        "waiting for robot 1's bid"
    );
    net.advance(0.9);
    assert!(matches!(net.holder(t), Allocation::Auction(_)));
    net.advance(0.2); // past the 1 s deadline on the Time Server's clock
    assert_eq!(
        net.holder(t),
        Allocation::Robot(2),
        "the best bid that arrived wins"
    );
}

#[test]
fn no_bids_is_logged_and_the_task_is_announced_again_later() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, &[TaskClass::Perception], 0.0);
    let t = net.cc.submit(goto(1.0)).unwrap();
    net.settle();
    assert_eq!(net.holder(t), Allocation::Waiting);
    let tasks = net.logs(LogKind::Tasks);
    assert!(
        tasks
            .iter()
            .any(|l| l.starts_with("unallocated") && l.contains(&format!("task={t}"))),
        "{tasks:?}"
    );
    net.add(2, MOVE, 0.0);
    net.advance(1.0); // the re-announcement period
    assert_eq!(net.holder(t), Allocation::Robot(2));
}

#[test]
fn a_decline_moves_the_award_to_the_next_best_bid() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.add(2, MOVE, 5.0);
    net.bots.get_mut(&1).unwrap().agent.bidder.max_queue = 1;
    // Robot 1 bids (its queue is empty), then fills its queue before the award comes.
    net.hold = Box::new(|e| matches!(e.msg, Msg::Bid { .. }));
    let t = net.cc.submit(goto(1.0)).unwrap();
    net.settle();
    let other = net.cc.send_task(1, goto(-3.0)).unwrap();
    net.hold = Box::new(|_| false);
    for e in std::mem::take(&mut net.held) {
        net.send_cc(e);
    }
    net.settle();
    assert_eq!(net.holder(other), Allocation::Robot(1));
    assert_eq!(
        net.holder(t),
        Allocation::Robot(2),
        "robot 1 declined (queue full), robot 2 took it"
    );
    assert_eq!(net.cc.cnp_stats().declines, 1);
    let tasks = net.logs(LogKind::Tasks);
    assert!(
        tasks
            .iter()
            .any(|l| l.starts_with("declined\trobot=1") && l.contains("queue full")),
        "{tasks:?}"
    );
}

#[test]
fn a_late_accept_is_cancelled_and_the_task_re_awarded() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.add(2, MOVE, 5.0);
    net.hold = Box::new(|e| matches!(e.msg, Msg::Accept { robot: 1, .. }));
    let t = net.cc.submit(goto(1.0)).unwrap();
    net.settle();
    assert_eq!(
        net.held.len(),
        1,
        "robot 1 won and accepted; the accept is delayed"
    );
    net.advance(1.5); // the 1 s answer deadline passes: robot 2 gets the award
    assert_eq!(net.holder(t), Allocation::Robot(2));
    net.hold = Box::new(|_| false);
    for e in std::mem::take(&mut net.held) {
        net.send_cc(e);
    }
    net.settle();
    assert_eq!(net.holder(t), Allocation::Robot(2));
    assert_eq!(
        net.bots[&1].agent.tm.get(t).map(|h| h.state),
        Some(TaskState::Aborted),
        "robot 1 dropped it"
    );
    assert!(net.bots[&1].running.is_empty());
    assert_eq!(
        net.state(t),
        Some(TaskState::Running),
        "robot 2's state is the one the CC tracks"
    );
}

/// The last bidder's accept came after its deadline, when no bid was left and the task had
/// gone back to allocation: it was refused ("auction … is not open"), not cancelled, so the
/// robot went on with a task the Control Center was announcing again.
#[test]
fn a_late_accept_of_the_last_award_is_cancelled_too() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.hold = Box::new(|e| {
        matches!(
            e.msg,
            Msg::Accept {
                robot: 1,
                auction: 1
            }
        )
    });
    net.cc.submit(goto(1.0)).unwrap();
    net.settle();
    assert_eq!(
        net.held.len(),
        1,
        "robot 1 won and accepted; the accept is delayed"
    );
    net.advance(1.5); // the 1 s answer deadline passes: no bid is left
    net.hold = Box::new(|_| false);
    for e in std::mem::take(&mut net.held) {
        net.send_cc(e);
    }
    net.settle();
    let tasks = net.logs(LogKind::Tasks);
    assert!(
        tasks
            .iter()
            .any(|l| l.contains("auction 1: accept from robot 1 came too late; cancelled")),
        "{tasks:?}"
    );
    // Whatever later auctions of the task did, robot 1 runs it at most once.
    assert!(net.bots[&1].running.len() <= 1);
}

#[test]
fn a_robot_leaving_mid_auction_loses_its_bid_and_its_tasks() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.add(2, MOVE, 5.0);
    net.add(3, MOVE, 50.0);
    let held = net.cc.send_task(1, goto(-2.0)).unwrap();
    net.settle();
    // Robot 2 never answers; robot 1 bids and then leaves before the deadline.
    net.drop = Box::new(|e| matches!(e.msg, Msg::Bid { robot: 2, .. }));
    let t = net.cc.submit(goto(0.0)).unwrap();
    net.settle();
    let bye = net.bots.get_mut(&1).unwrap().agent.bye();
    net.send_cc(bye);
    net.bots.remove(&1);
    net.settle();
    assert!(
        matches!(net.holder(t), Allocation::Auction(_)),
        "robot 2 is still awaited"
    );
    net.drop = Box::new(|_| false);
    net.advance(1.1);
    assert_eq!(
        net.holder(t),
        Allocation::Robot(3),
        "only robot 3's bid is left"
    );
    // Robot 1's unfinished task went back to allocation and was announced again.
    net.advance(1.0);
    assert!(matches!(
        net.holder(held),
        Allocation::Robot(2) | Allocation::Robot(3)
    ));
    let tasks = net.logs(LogKind::Tasks);
    assert!(
        tasks
            .iter()
            .any(|l| l == "left\trobot=1\t1 tasks back to allocation"),
        "{tasks:?}"
    );
}

#[test]
fn switching_centralised_and_cnp_mid_run_needs_no_restart() {
    let mut net = Net::new(Policy::Hungarian);
    net.add(1, MOVE, 0.0);
    net.add(2, MOVE, 10.0);
    let a = net.cc.submit(goto(4.0)).unwrap();
    let b = net.cc.submit(goto(-6.0)).unwrap();
    let c = net.cc.submit(goto(30.0)).unwrap();
    net.settle();
    // Optimal: robot 2 → 4 (6 m), robot 1 → -6 (6 m); c waits for an idle robot.
    assert_eq!(net.holder(a), Allocation::Robot(2));
    assert_eq!(net.holder(b), Allocation::Robot(1));
    assert_eq!(net.holder(c), Allocation::Waiting);
    net.cc.set_policy(Policy::Cnp);
    net.settle();
    assert!(
        matches!(net.holder(c), Allocation::Robot(_)),
        "the waiting task was announced"
    );
    let d = net.cc.submit(goto(0.0)).unwrap();
    net.settle();
    assert!(matches!(net.holder(d), Allocation::Robot(_)));
    net.cc.set_policy(Policy::Greedy);
    let e = net.cc.submit(goto(0.0)).unwrap();
    net.settle();
    assert_eq!(
        net.holder(e),
        Allocation::Waiting,
        "greedy gives work to idle robots only"
    );
    // Robot 1 works through its queue; when idle (and it reports where it is), it gets e.
    for _ in 0..4 {
        let Some(&(task, _)) = net.bots[&1].running.first() else {
            break;
        };
        net.finish(1, task, Ok(()));
    }
    net.bots.get_mut(&1).unwrap().pose.x = -6.0;
    net.status(1);
    net.settle();
    assert_eq!(
        net.holder(e),
        Allocation::Robot(1),
        "{}\n{}",
        net.cc.tasks_table(),
        net.cc.robots_table()
    );
    let modes: Vec<String> = net
        .logs(LogKind::Tasks)
        .into_iter()
        .filter(|l| l.starts_with("mode"))
        .collect();
    assert_eq!(modes, ["mode\thungarian→cnp", "mode\tcnp→greedy"]);
}

#[test]
fn abort_from_the_control_center_stops_the_robot() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, &[TaskClass::Movement, TaskClass::Perception], 0.0);
    let a = net.cc.send_task(1, goto(5.0)).unwrap();
    let p = net
        .cc
        .send_task(1, TaskSpec::new(0, TaskKind::Perceive { seconds: 2.0 }))
        .unwrap();
    net.settle();
    assert_eq!(
        net.bots[&1].running.len(),
        2,
        "movement and perception run in parallel"
    );
    net.cc.abort(a).unwrap();
    net.settle();
    assert_eq!(net.state(a), Some(TaskState::Aborted));
    assert_eq!(net.bots[&1].running, [(p, TaskClass::Perception)]);
    assert_eq!(net.cc.abort(a), Err(CcError::AlreadyFinal(a)));
    assert_eq!(net.cc.clear(p), Err(CcError::NotFinal(p)));
}

#[test]
fn robots_that_have_not_heard_the_time_server_say_so() {
    let mut agent = RobotAgent::new(info(7, MOVE));
    let s = agent.status(3.0, RobotPose::default(), None, None);
    let Msg::Status { status } = s.msg else {
        panic!()
    };
    assert!(!status.synced);
    let mut board = TaskBoard::default();
    let clock = Envelope {
        from: 1000,
        to: None,
        msg: Msg::Clock {
            seq: 1,
            time: 100.0,
        },
    };
    agent.handle(&clock, 3.0, RobotPose::default(), &mut board, &Euclidean);
    let Msg::Status { status } = agent.status(4.0, RobotPose::default(), None, None).msg else {
        panic!()
    };
    assert!(status.synced);
    assert_eq!(status.time, 101.0);
}

#[test]
fn a_robot_process_restarted_with_the_same_id_gets_its_unfinished_tasks_again() {
    let mut net = Net::new(Policy::Greedy);
    net.add(1, MOVE, 0.0);
    let done = net.cc.submit(goto(1.0)).unwrap();
    net.settle();
    assert_eq!(net.holder(done), Allocation::Robot(1));
    net.finish(1, done, Ok(()));
    let t = net.cc.submit(goto(3.0)).unwrap();
    net.settle();
    assert_eq!(net.holder(t), Allocation::Robot(1));
    assert!(net.bots[&1].running.iter().any(|r| r.0 == t));
    // While the old connection is open, the id is taken: a second process is refused.
    let twin = RobotAgent::new(info(1, MOVE)).hello();
    assert!(matches!(
        net.cc.handle(wire(&twin), net.now),
        Err(CcError::RobotIdTaken(1))
    ));
    // The process dies: its connection closes and the shell tells the Control Center. The
    // unfinished task goes back to allocation; the finished one stays done.
    net.cc.leave(1);
    net.bots.remove(&1);
    net.settle();
    assert_eq!(net.holder(t), Allocation::Waiting);
    assert_eq!(net.state(done), Some(TaskState::Ended));
    // Restarted with the same id: it joins again and the task is sent to it again, afresh.
    net.add(1, MOVE, 0.0);
    net.advance(0.5);
    assert_eq!(net.holder(t), Allocation::Robot(1));
    assert!(
        net.bots[&1].running.iter().any(|r| r.0 == t),
        "the restarted process runs the task again: {:?}",
        net.bots[&1].running
    );
    net.finish(1, t, Ok(()));
    assert_eq!(net.state(t), Some(TaskState::Ended));
}

/// Bids arriving together (`handle_all`) do exactly what the same messages handled one by
/// one do: the same answers, logs, counters and refusals, odd bids included (twice from one
/// robot, from a stranger, in another robot's name, a negative cost, for another auction,
/// after bidding closed) and other messages between them.
#[test]
fn bids_handled_together_equal_bids_handled_one_by_one() {
    let build = || {
        let mut cc = ControlCenter::new(CcConfig {
            policy: Policy::Cnp,
            ..CcConfig::default()
        });
        for r in 1..=6 {
            cc.join(info(r, MOVE)).unwrap();
        }
        cc.announce(goto(1.0)).unwrap();
        cc.announce(goto(2.0)).unwrap();
        while cc.poll_transmit().is_some() {}
        cc
    };
    let status = Envelope {
        from: 3,
        to: Some(0),
        msg: Msg::Status {
            status: Box::new(simrob_coord::model::RobotStatus {
                robot: 3,
                time: 0.0,
                synced: false,
                x: 0.0,
                y: 0.0,
                heading: 0.0,
                speed: 0.0,
                battery: None,
                running: Default::default(),
                queued: 0,
                ok: true,
                error: None,
            }),
        },
    };
    let batch = vec![
        bid(1, 1, 1, Some(4.0)),
        bid(2, 1, 2, Some(3.0)),
        bid(2, 1, 2, Some(1.0)),  // twice
        bid(9, 1, 9, Some(0.5)),  // a stranger
        bid(3, 1, 4, Some(0.5)),  // in another's name
        bid(3, 1, 3, Some(-1.0)), // a negative cost
        bid(1, 2, 1, Some(7.0)),  // the other auction
        status,
        bid(3, 1, 3, None),
        bid(4, 1, 4, Some(2.0)),
        bid(5, 1, 5, Some(2.0)),
        bid(6, 1, 6, Some(9.0)), // the last: bidding closes
        bid(6, 1, 6, Some(9.0)), // after it closed
        bid(2, 2, 2, Some(1.0)),
        bid(3, 2, 3, Some(1.0)),
        bid(99, 77, 99, Some(1.0)), // no such auction, no such robot
    ];
    let mut one = build();
    let mut refused_one = Vec::new();
    for env in batch.clone() {
        if let Err(e) = one.handle(env, 0.25) {
            refused_one.push(e);
        }
    }
    let mut all = build();
    let mut envs = batch;
    let refused_all = all.handle_all(&mut envs, 0.25);
    assert!(envs.is_empty());
    assert_eq!(refused_all, refused_one);
    assert_eq!(refused_all.len(), 6, "{refused_all:?}");
    assert!(
        refused_all.contains(&CcError::Auction(AuctionError::NotInvited {
            auction: 1,
            robot: 2
        }))
    );
    assert!(refused_all.contains(&CcError::Auction(AuctionError::BiddingClosed(1))));
    assert_eq!(all.cnp_stats(), one.cnp_stats());
    let drain = |cc: &mut ControlCenter| {
        let mut out = Vec::new();
        while let Some(e) = cc.poll_transmit() {
            out.push(e);
        }
        let mut logs = Vec::new();
        while let Some(l) = cc.poll_log() {
            logs.push(l.to_string());
        }
        (out, logs)
    };
    let (a, b) = (drain(&mut all), drain(&mut one));
    assert_eq!(a, b);
    assert!(
        a.0.iter()
            .any(|e| matches!(e.msg, Msg::Award { winner: 4, .. })),
        "robot 4 and 5 tie at 2 m and robot 2's first bid of 3 stands: {:?}",
        a.0
    );
}

/// Robots answering calls for bids straight into an outbox (`handle_into`: a bid is a
/// compact record in a per-auction run, not an envelope queued by the robot) give the
/// Control Center exactly what their envelopes handled one by one give: the same awards,
/// allocation, messages out, logs, counters, refusals and messages sent per robot. Mixed
/// in: a robot that cannot take the task (it refuses), one whose cost is not a number,
/// a bid twice, a stranger's bid, one in another robot's name, a negative cost, bids for
/// two auctions at once and a bid after bidding closed.
#[test]
fn bids_through_an_outbox_equal_envelopes_one_by_one() {
    use simrob_coord::outbox::Outbox;

    struct Side {
        cc: ControlCenter,
        agents: Vec<RobotAgent>,
        board: TaskBoard,
        refused: Vec<CcError>,
        out: Vec<Envelope>,
        logs: Vec<String>,
        messages: usize,
    }
    let build = || {
        let mut cc = ControlCenter::new(CcConfig {
            policy: Policy::Cnp,
            ..CcConfig::default()
        });
        let mut agents = Vec::new();
        for r in 1..=6 {
            let caps = if r == 5 {
                &[TaskClass::Perception][..]
            } else {
                MOVE
            };
            let a = RobotAgent::new(info(r, caps));
            cc.handle(a.hello(), 0.0).unwrap();
            agents.push(a);
        }
        cc.announce(goto(10.0)).unwrap();
        cc.announce(goto(3.0)).unwrap();
        Side {
            cc,
            agents,
            board: TaskBoard::default(),
            refused: Vec::new(),
            out: Vec::new(),
            logs: Vec::new(),
            messages: 0,
        }
    };
    // Robot 6 is lost: its cost is not a number, which the Control Center refuses.
    let pose = |r: u32| RobotPose {
        x: if r == 6 { f64::NAN } else { r as f64 },
        ..RobotPose::default()
    };
    // One round: what the Control Center sends goes to its robots, their answers (and
    // `extra` after them) go back; true if anything moved.
    let round = |s: &mut Side, outbox: bool, now: f64, extra: Vec<Envelope>| {
        let mut ob = Outbox::new();
        let mut envs = Vec::new();
        let mut moved = false;
        s.cc.handle_timeout(now);
        while let Some(env) = s.cc.poll_transmit() {
            moved = true;
            for a in s.agents.iter_mut() {
                if env.to.is_some_and(|to| to != a.id()) {
                    continue;
                }
                let p = pose(a.id());
                if outbox {
                    a.handle_into(&env, now, p, &mut s.board, &Euclidean, &mut ob);
                } else {
                    a.handle(&env, now, p, &mut s.board, &Euclidean);
                    envs.extend(std::iter::from_fn(|| a.poll_transmit()));
                }
            }
            s.out.push(env);
        }
        if outbox {
            ob.extend(extra);
            moved |= !ob.is_empty();
            s.messages += ob.len();
            let refused = s.cc.handle_outbox(&mut ob, now);
            s.refused.extend(refused);
            assert!(ob.is_empty());
        } else {
            envs.extend(extra);
            moved |= !envs.is_empty();
            s.messages += envs.len();
            for e in envs {
                if let Err(e) = s.cc.handle(e, now) {
                    s.refused.push(e);
                }
            }
        }
        while let Some(l) = s.cc.poll_log() {
            s.logs.push(l.to_string());
        }
        moved
    };
    let run = |outbox: bool| {
        let mut s = build();
        let odd = vec![
            bid(2, 1, 2, Some(0.0)),  // twice
            bid(9, 1, 9, Some(0.0)),  // a stranger
            bid(3, 2, 4, Some(0.0)),  // in another's name
            bid(3, 2, 3, Some(-2.0)), // a negative cost
        ];
        round(&mut s, outbox, 0.1, odd);
        while round(&mut s, outbox, 0.1, Vec::new()) {}
        // Robot 6 never bid validly: bidding closes at its deadline.
        while round(&mut s, outbox, 1.0, Vec::new()) {}
        round(&mut s, outbox, 1.0, vec![bid(4, 1, 4, Some(0.0))]); // late
                                                                   // A third task, bid on from the robots' queues.
        s.cc.announce(goto(-4.0)).unwrap();
        while round(&mut s, outbox, 1.2, Vec::new()) {}
        while round(&mut s, outbox, 2.0, Vec::new()) {}
        s
    };
    let (a, b) = (run(true), run(false));
    // (Compared as text: a cost that is not a number is not equal to itself.)
    assert_eq!(format!("{:?}", a.refused), format!("{:?}", b.refused));
    assert_eq!(a.cc.cnp_stats(), b.cc.cnp_stats());
    assert_eq!(a.out, b.out);
    assert_eq!(a.logs, b.logs);
    assert_eq!(a.messages, b.messages);
    let sent = |s: &Side| s.agents.iter().map(|a| a.sent).collect::<Vec<_>>();
    assert_eq!(sent(&a), sent(&b));
    let held = |s: &Side| {
        s.cc.tasks()
            .iter()
            .map(|(&t, e)| (t, e.allocation, e.state))
            .collect::<Vec<_>>()
    };
    assert_eq!(held(&a), held(&b));
    // The run did what it says: every odd message refused or ignored as it should be, and
    // each task won by the robot nearest its end of queue.
    let stats = a.cc.cnp_stats();
    assert_eq!((stats.announced, stats.allocated), (3, 3), "{stats:?}");
    assert_eq!(stats.refusals, 3, "robot 5 refuses every task: {stats:?}");
    assert_eq!(stats.late_bids, 1, "{stats:?}");
    assert!(
        a.refused.contains(&CcError::UnknownRobot(9)),
        "{:?}",
        a.refused
    );
    assert!(a
        .refused
        .contains(&CcError::SpeaksFor { from: 3, robot: 4 }));
    assert_eq!(
        a.refused
            .iter()
            .filter(|e| matches!(e, CcError::Value(_)))
            .count(),
        4,
        "robot 6's three costs and the negative one: {:?}",
        a.refused
    );
    assert!(
        a.refused
            .contains(&CcError::Auction(AuctionError::NotInvited {
                auction: 1,
                robot: 2
            })),
        "robot 2's second bid: {:?}",
        a.refused
    );
    assert_eq!(
        held(&a).iter().map(|h| h.1).collect::<Vec<_>>(),
        vec![
            Allocation::Robot(4),
            Allocation::Robot(3),
            Allocation::Robot(1)
        ],
        "{:?}",
        a.logs
    );
}

#[test]
fn the_largest_task_id_is_taken_and_the_next_chosen_id_goes_on_from_1() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    let top = net
        .cc
        .submit(TaskSpec {
            id: TaskId::MAX,
            ..goto(1.0)
        })
        .unwrap();
    assert_eq!(top, TaskId::MAX);
    // Chosen by the Control Center: not the largest again, not 0.
    let next = net.cc.submit(goto(2.0)).unwrap();
    assert_eq!(next, 1);
    assert_eq!(net.cc.submit(goto(3.0)).unwrap(), 2);
}

/// Everything the Control Center sends and logs until it has nothing more (drained).
fn drain(cc: &mut ControlCenter) -> (Vec<Envelope>, Vec<String>) {
    let sent = std::iter::from_fn(|| cc.poll_transmit()).collect();
    let logs = std::iter::from_fn(|| cc.poll_log())
        .map(|l| l.to_string())
        .collect();
    (sent, logs)
}

/// An operator's request as it comes from the network (through the codec).
fn operator(command: OperatorCommand) -> Envelope {
    wire(&Envelope {
        from: 0x4000_0001,
        to: Some(0),
        msg: Msg::Operator {
            command: Box::new(command),
        },
    })
}

#[test]
fn a_task_past_the_coordinate_points_or_name_limits_is_refused_and_changes_nothing() {
    let mut cc = ControlCenter::new(CcConfig {
        max_path_points: 8,
        max_name_bytes: 16,
        ..CcConfig::default()
    });
    cc.join(info(1, MOVE)).unwrap();
    let _ = drain(&mut cc);
    let path = |points: Vec<[f64; 2]>| TaskSpec::new(0, TaskKind::Path { points });
    let far = |x: f64, y: f64| TaskSpec::new(0, TaskKind::Goto { x, y });
    let cases: Vec<(TaskSpec, &str)> = vec![
        (
            far(1e300, 0.0),
            "invalid: x = 1e300 is beyond ±1000000 m (key max_coordinate)",
        ),
        (
            far(0.0, -1_000_000.5),
            "invalid: y = -1000000.5 is beyond ±1000000 m (key max_coordinate)",
        ),
        (
            path(vec![[0.0, 0.0], [1e300, 1e300]]),
            "invalid: x = 1e300 is beyond ±1000000 m (key max_coordinate)",
        ),
        (
            path(vec![[1.0, 2.0]; 9]),
            "invalid: a path has at most 8 points (max_path_points), found 9",
        ),
        (
            TaskSpec {
                world: Some("w".repeat(17)),
                ..far(1.0, 1.0)
            },
            "invalid: task world is 17 bytes, longer than 16 (key max_name_bytes)",
        ),
    ];
    for (task, why) in cases {
        for command in [
            OperatorCommand::Submit { task: task.clone() },
            OperatorCommand::Announce { task: task.clone() },
            OperatorCommand::Send {
                robot: 1,
                task: task.clone(),
            },
        ] {
            cc.handle(operator(command), 0.0).unwrap();
            let (sent, logs) = drain(&mut cc);
            assert_eq!(
                sent.iter().map(|e| &e.msg).collect::<Vec<_>>(),
                [&Msg::Report {
                    text: format!("error: {why}")
                }],
                "only the answer, to the operator"
            );
            assert_eq!(sent[0].to, Some(0x4000_0001));
            assert!(logs.is_empty(), "{logs:?}");
            assert!(cc.tasks().is_empty());
            assert_eq!(cc.waiting(), 0);
            assert_eq!(cc.cnp_stats().announced, 0);
        }
        assert_eq!(cc.submit(task).unwrap_err().to_string(), why);
    }
    // At the limits, taken.
    cc.submit(far(1e6, -1e6)).unwrap();
    cc.submit(path(vec![[-1e6, 1e6]; 8])).unwrap();
    cc.submit(TaskSpec {
        world: Some("w".repeat(16)),
        ..far(1.0, 1.0)
    })
    .unwrap();
    assert_eq!(cc.tasks().len(), 3);
}

#[test]
fn a_path_nobody_takes_is_logged_in_full_once_then_in_a_few_words() {
    let mut cc = ControlCenter::new(CcConfig::default());
    // A robot that cannot take it answers every announcement with a refusal.
    cc.join(info(1, &[TaskClass::Perception])).unwrap();
    let points: Vec<[f64; 2]> = (0..4096)
        .map(|i| [-999_999.123_456_789_1 + i as f64, 5e-324])
        .collect();
    let id = cc
        .submit(TaskSpec::new(0, TaskKind::Path { points }))
        .unwrap();
    let (_, first) = drain(&mut cc);
    let full: Vec<&String> = first
        .iter()
        .filter(|l| l.contains("\tannounced\t") || l.contains("\tsubmitted\t"))
        .collect();
    assert_eq!(full.len(), 2, "{first:?}");
    for l in &full {
        assert!(l.contains("-999999.1234567891,5e-324 "), "numbers in short");
        assert!(l.len() < 4096 * 32, "{} bytes", l.len());
    }
    // Nobody takes it: announced again every second for an hour, a line or two each time,
    // none of them growing with the path.
    let mut again = 0;
    let mut bytes = 0;
    for tick in 1..=3600 * 4 {
        let now = tick as f64 * 0.25;
        cc.handle_timeout(now);
        // (Refused once that auction has ended: it changes nothing.)
        let _ = cc.handle(
            Envelope {
                from: 1,
                to: Some(0),
                msg: Msg::Bid {
                    auction: cc.cnp_stats().announced,
                    robot: 1,
                    cost: None,
                },
            },
            now,
        );
        let (_, logs) = drain(&mut cc);
        for l in logs {
            assert!(l.len() < 200, "{l}");
            again += usize::from(l.contains("\tannounced\t"));
            bytes += l.len();
        }
    }
    assert!(again >= 3000, "announced again {again} times");
    assert!(bytes < 3600 * 300, "{bytes} bytes of log in an hour");
    assert_eq!(cc.tasks()[&id].announced as usize, again + 1);
    let mut logs = Vec::new();
    cc.handle_timeout(3601.0);
    cc.handle_timeout(3602.0);
    while let Some(l) = cc.poll_log() {
        logs.push(l.text);
    }
    assert!(
        logs.iter().any(|l| l.starts_with("announced\t")
            && l.ends_with(&format!(
                "\ttask={id}\tagain ({} times): path of 4096 points to -995904.1234567891,5e-324",
                again + 2
            ))),
        "{logs:?}"
    );
}

#[test]
fn a_hello_with_a_name_past_max_name_bytes_is_refused_and_changes_nothing() {
    let mut cc = ControlCenter::new(CcConfig::default());
    for (field, what) in [(0, "name"), (1, "kind"), (2, "world")] {
        let mut r = info(1, MOVE);
        let long = "n".repeat(64_000);
        match field {
            0 => r.name = long,
            1 => r.kind = long,
            _ => r.world = long,
        }
        let hello = wire(&Envelope {
            from: 1,
            to: Some(0),
            msg: Msg::Hello { info: Box::new(r) },
        });
        assert_eq!(
            cc.handle(hello, 0.0).unwrap_err().to_string(),
            format!("invalid: robot {what} is 64000 bytes, longer than 256 (key max_name_bytes)")
        );
        let (sent, logs) = drain(&mut cc);
        assert!(sent.is_empty() && logs.is_empty(), "{sent:?} {logs:?}");
        assert!(cc.robots().is_empty());
    }
    let mut r = info(1, MOVE);
    r.name = "n".repeat(256);
    cc.join(r).unwrap();
    assert_eq!(cc.robots().len(), 1);
}

/// Robot names, kinds and worlds and task worlds go into the logs and tables as one
/// tab-separated field each: one with a tab or a line break would forge fields and lines
/// (`joined` of a robot that never came, `awarded` of an auction that never ran).
#[test]
fn names_and_worlds_with_control_characters_are_refused_and_change_nothing() {
    let mut cc = ControlCenter::new(CcConfig::default());
    for (field, what) in [(0, "name"), (1, "kind"), (2, "world")] {
        let mut r = info(1, MOVE);
        let forged = "a\n99.000\tjoined\trobot=5\tx".to_string();
        match field {
            0 => r.name = forged,
            1 => r.kind = forged,
            _ => r.world = forged,
        }
        let why = format!("invalid: robot {what} holds the control character U+000A at byte 1: it must be one line of printable text (no tab, line break or other control character)");
        // Straight to the Control Center (in one process) and through its checks of a
        // message: the same refusal.
        assert_eq!(cc.join(r.clone()).unwrap_err().to_string(), why);
        let hello = Envelope {
            from: 1,
            to: Some(0),
            msg: Msg::Hello { info: Box::new(r) },
        };
        assert_eq!(cc.handle(hello, 0.0).unwrap_err().to_string(), why);
        let (sent, logs) = drain(&mut cc);
        assert!(sent.is_empty() && logs.is_empty(), "{sent:?} {logs:?}");
        assert!(cc.robots().is_empty());
    }
    cc.join(info(1, MOVE)).unwrap();
    let _ = drain(&mut cc);
    for world in [
        "w\n99.000\tawarded\tauction=1\trobot=5",
        "w\tx",
        "w\u{7f}",
        "",
    ] {
        let task = TaskSpec {
            world: Some(world.into()),
            ..goto(1.0)
        };
        let why = if world.is_empty() {
            "invalid: task world is empty".to_string()
        } else {
            let (at, c) = world.char_indices().find(|(_, c)| c.is_control()).unwrap();
            format!("invalid: task world holds the control character U+{:04X} at byte {at}: it must be one line of printable text (no tab, line break or other control character)", c as u32)
        };
        assert_eq!(cc.submit(task.clone()).unwrap_err().to_string(), why);
        assert_eq!(cc.announce(task.clone()).unwrap_err().to_string(), why);
        assert_eq!(cc.send_task(1, task).unwrap_err().to_string(), why);
        let (sent, logs) = drain(&mut cc);
        assert!(sent.is_empty() && logs.is_empty(), "{sent:?} {logs:?}");
        assert!(cc.tasks().is_empty());
    }
    // The table has one line per robot, each of 12 fields.
    let table = cc.robots_table();
    assert_eq!(table.lines().count(), 2, "{table}");
    assert!(
        table.lines().all(|l| l.split('\t').count() == 12),
        "{table}"
    );
}

#[test]
fn robots_that_left_are_forgotten_past_max_departed_robots_and_make_room_past_max_robots() {
    let mut cc = ControlCenter::new(CcConfig {
        max_robots: 6,
        max_departed_robots: 3,
        ..CcConfig::default()
    });
    // Ten robots say hello and hang up: the three that left last are remembered.
    for id in 1..=10 {
        cc.join(info(id, MOVE)).unwrap();
        cc.leave(id);
    }
    let ids = |cc: &ControlCenter| cc.robots().keys().copied().collect::<Vec<_>>();
    assert_eq!(ids(&cc), [8, 9, 10]);
    assert_eq!(cc.robots_table().lines().count(), 1 + 3);
    let (_, logs) = drain(&mut cc);
    assert_eq!(
        logs.iter().filter(|l| l.contains("\tforgotten\t")).count(),
        7
    );
    // One that comes back is present again, no longer among those that left.
    cc.join(info(9, MOVE)).unwrap();
    assert!(cc.robots()[&9].present);
    // A full table: a new robot takes the place of the one that left longest ago (8, then
    // 10), and is refused once every robot in the table is present.
    for id in 11..=13 {
        cc.join(info(id, MOVE)).unwrap();
    }
    assert_eq!(ids(&cc), [8, 9, 10, 11, 12, 13]);
    cc.join(info(14, MOVE)).unwrap();
    assert_eq!(ids(&cc), [9, 10, 11, 12, 13, 14]);
    cc.join(info(15, MOVE)).unwrap();
    assert_eq!(ids(&cc), [9, 11, 12, 13, 14, 15]);
    let _ = drain(&mut cc);
    assert_eq!(
        cc.join(info(16, MOVE)).unwrap_err(),
        CcError::Limit {
            what: "robots",
            limit: 6,
            key: "max_robots"
        }
    );
    let (sent, logs) = drain(&mut cc);
    assert!(sent.is_empty() && logs.is_empty());
    assert_eq!(ids(&cc), [9, 11, 12, 13, 14, 15]);
    // The table stays within the limits however many come and go.
    for id in 100..1100 {
        cc.leave(id - 100 + 9);
        let _ = cc.join(info(id, MOVE));
        cc.leave(id);
    }
    assert!(cc.robots().len() <= 6);
    assert!(cc.robots().values().filter(|r| !r.present).count() <= 3);
}

/// The robots at (530, 440), (595, 450), (660, 440) and the tasks to 560, 480 and 700 on
/// y = 440, each message handled in a turn of its own with a round due after each, as the
/// live Control Center's loop does. Returns who got which goal.
fn one_message_a_turn(policy: Policy, tasks_first: bool) -> BTreeMap<u32, f64> {
    let mut cc = ControlCenter::new(CcConfig {
        policy,
        round_period: 0.5,
        ..CcConfig::default()
    });
    let mut now = 0.0;
    let turn = |cc: &mut ControlCenter, env: Envelope, now: &mut f64| {
        *now += 0.01;
        cc.handle(wire(&env), *now).unwrap();
        cc.handle_timeout(*now);
    };
    let submits: Vec<Envelope> = [560.0, 480.0, 700.0]
        .into_iter()
        .map(|x| {
            operator(OperatorCommand::Submit {
                task: TaskSpec::new(0, TaskKind::Goto { x, y: 440.0 }),
            })
        })
        .collect();
    if tasks_first {
        for s in &submits {
            turn(&mut cc, s.clone(), &mut now);
        }
    }
    for (id, x, y) in [
        (100, 530.0, 440.0),
        (101, 595.0, 450.0),
        (102, 660.0, 440.0),
    ] {
        let mut agent = RobotAgent::new(info(id, MOVE));
        turn(&mut cc, agent.hello(), &mut now);
        let pose = RobotPose {
            x,
            y,
            ..RobotPose::default()
        };
        let status = agent.status(now, pose, None, None);
        turn(&mut cc, status, &mut now);
    }
    if !tasks_first {
        for s in &submits {
            turn(&mut cc, s.clone(), &mut now);
        }
    }
    // Nothing is assigned until the round is due; then all at once.
    assert!(cc
        .tasks()
        .values()
        .all(|t| t.allocation == Allocation::Waiting));
    cc.handle_timeout(now + 0.5);
    cc.tasks()
        .values()
        .map(|t| match (t.allocation, &t.spec.kind) {
            (Allocation::Robot(r), TaskKind::Goto { x, .. }) => (r, *x),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[test]
fn a_live_hungarian_round_assigns_everything_that_arrived_together_optimally() {
    let optimal = BTreeMap::from([(100, 480.0), (101, 560.0), (102, 700.0)]);
    // Tasks waiting for robots that join one by one (costs 126.4, not 315.5).
    assert_eq!(one_message_a_turn(Policy::Hungarian, true), optimal);
    // Idle robots, tasks submitted one after the other (not greedy's choice).
    assert_eq!(one_message_a_turn(Policy::Hungarian, false), optimal);
    // Greedy takes the cheapest pair first, as it should (costs 185.4).
    assert_eq!(
        one_message_a_turn(Policy::Greedy, false),
        BTreeMap::from([(100, 560.0), (101, 480.0), (102, 700.0)])
    );
}

#[test]
fn a_task_back_from_a_robot_that_left_stays_in_that_robots_world() {
    for policy in [Policy::Greedy, Policy::Hungarian, Policy::Cnp] {
        let mut cc = ControlCenter::new(CcConfig {
            policy,
            cnp: CnpConfig {
                bid_window: 1.0,
                accept_window: 1.0,
            },
            ..CcConfig::default()
        });
        let in_world = |robot, world: &str| RobotInfo {
            world: world.into(),
            ..info(robot, MOVE)
        };
        let mut now = 0.0;
        let status = |cc: &mut ControlCenter, robot: u32, now: f64| {
            let mut agent = RobotAgent::new(info(robot, MOVE));
            let s = agent.status(now, RobotPose::default(), None, None);
            cc.handle(s, now).unwrap();
        };
        cc.join(in_world(1, "mrs")).unwrap();
        cc.join(in_world(2, "swarm")).unwrap();
        status(&mut cc, 2, now);
        let task = cc.send_task(1, goto(3.0)).unwrap();
        assert_eq!(cc.tasks()[&task].spec.world.as_deref(), Some("mrs"));
        cc.leave(1);
        // The swarm robot, idle, never gets it (nor bids on it), however long it waits.
        for _ in 0..50 {
            now += 0.5;
            cc.handle_timeout(now);
            while let Some(env) = cc.poll_transmit() {
                if let Msg::Announce { auction, .. } = env.msg {
                    // It would refuse: another world (its task manager says so too).
                    let bid = Envelope {
                        from: 2,
                        to: Some(0),
                        msg: Msg::Bid {
                            auction,
                            robot: 2,
                            cost: None,
                        },
                    };
                    cc.handle(bid, now).unwrap();
                }
            }
            assert_ne!(
                cc.tasks()[&task].allocation,
                Allocation::Robot(2),
                "{policy:?}"
            );
        }
        assert_eq!(cc.tasks()[&task].spec.world.as_deref(), Some("mrs"));
        // A robot of its world takes it.
        cc.join(in_world(3, "mrs")).unwrap();
        status(&mut cc, 3, now);
        for _ in 0..10 {
            now += 0.5;
            cc.handle_timeout(now);
            while let Some(env) = cc.poll_transmit() {
                if let Msg::Announce { auction, .. } = env.msg {
                    for robot in [2, 3] {
                        let cost = (robot == 3).then_some(1.0);
                        let bid = Envelope {
                            from: robot,
                            to: Some(0),
                            msg: Msg::Bid {
                                auction,
                                robot,
                                cost,
                            },
                        };
                        cc.handle(bid, now).unwrap();
                    }
                }
                if let Msg::Award {
                    auction, winner, ..
                } = env.msg
                {
                    let accept = Envelope {
                        from: winner,
                        to: Some(0),
                        msg: Msg::Accept {
                            auction,
                            robot: winner,
                        },
                    };
                    cc.handle(accept, now).unwrap();
                }
            }
        }
        assert_eq!(
            cc.tasks()[&task].allocation,
            Allocation::Robot(3),
            "{policy:?}"
        );
    }
}

#[test]
fn a_robot_that_leaves_hands_back_its_tasks_in_the_states_log_and_runs_nothing() {
    let mut net = Net::new(Policy::Cnp);
    net.add(1, MOVE, 0.0);
    net.add(2, MOVE, 10.0);
    let t = net.cc.send_task(1, goto(5.0)).unwrap();
    net.settle();
    net.status(1);
    net.settle();
    assert!(net
        .cc
        .robots_table()
        .contains(&format!("\t{t}\t-\t-\t1\tok")));
    let _ = net.logs(LogKind::States);
    net.cc.leave(1);
    net.bots.remove(&1);
    let mut states = Vec::new();
    while let Some(l) = net.cc.poll_log() {
        if l.kind == LogKind::States {
            states.push(l.text);
        }
    }
    assert_eq!(
        states,
        [format!(
            "robot=1\ttask={t}\tRUNNING→new\t(robot 1 left: back to allocation)"
        )]
    );
    let table = net.cc.robots_table();
    let row = table.lines().find(|l| l.starts_with("1\t")).unwrap();
    assert!(row.ends_with("\t-\t-\t-\t0\tleft"), "{row}");
    assert_eq!(net.cc.map().robots[0].running, Default::default());
}

#[test]
fn an_id_a_waiting_precondition_names_is_not_given_to_another_task() {
    let mut cc = ControlCenter::new(CcConfig::default());
    cc.join(info(1, MOVE)).unwrap();
    let waits = TaskSpec {
        id: 63,
        ..after(goto(1.0), &[64])
    };
    assert_eq!(cc.send_task(1, waits).unwrap(), 63);
    // An unrelated task the Control Center numbers does not take 64 (task 63 would run
    // after it); 64 stays for the task 63 waits for.
    assert_eq!(cc.send_task(1, goto(2.0)).unwrap(), 65);
    let awaited = TaskSpec {
        id: 64,
        ..goto(3.0)
    };
    assert_eq!(cc.send_task(1, awaited).unwrap(), 64);
}

#[test]
fn finished_tasks_past_max_final_tasks_are_cleared_so_a_control_center_keeps_taking_work() {
    let mut net = Net::new(Policy::Greedy);
    net.cc = ControlCenter::new(CcConfig {
        policy: Policy::Greedy,
        max_tasks: 5,
        max_final_tasks: 3,
        ..CcConfig::default()
    });
    let clears = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let seen = clears.clone();
    net.drop = Box::new(move |env| {
        if let (Some(to), Msg::Clear { task }) = (env.to, &env.msg) {
            seen.borrow_mut().push((to, *task));
        }
        false
    });
    net.add(1, MOVE, 0.0);
    // Twenty tasks one after another, each done: far more than `max_tasks` in all, never
    // more than one in hand. The three finished last are kept for the reports.
    let mut done = Vec::new();
    for i in 0..20 {
        let t = net
            .cc
            .submit(goto(1.0 + f64::from(i)))
            .expect("room for a new task");
        net.settle();
        net.finish(1, t, Ok(()));
        done.push(t);
    }
    let kept = |net: &Net| net.cc.tasks().keys().copied().collect::<Vec<_>>();
    assert_eq!(kept(&net), done[17..]);
    assert_eq!(net.cc.tasks_table().lines().count(), 1 + 3);
    // Each one forgotten was cleared as an operator's `clear` would: its robot told too.
    let told: Vec<TaskId> = clears.borrow().iter().map(|&(_, t)| t).collect();
    assert_eq!(told, done[..17]);
    assert!(clears.borrow().iter().all(|&(to, _)| to == 1));
    let forgotten = net
        .logs(LogKind::Tasks)
        .into_iter()
        .filter(|l| l.starts_with("forgotten\t"))
        .count();
    assert_eq!(forgotten, 17);
    // A task aborted before any robot took it is finished too: it pushes out the oldest.
    let waiting = net
        .cc
        .submit(TaskSpec::new(0, TaskKind::Perceive { seconds: 1.0 }))
        .unwrap();
    net.settle();
    assert_eq!(net.holder(waiting), Allocation::Waiting);
    net.cc.abort(waiting).unwrap();
    net.settle();
    assert_eq!(kept(&net), [done[18], done[19], waiting]);
    // One the operator clears leaves room: the next finished task pushes out nothing.
    net.cc.clear(waiting).unwrap();
    let t = net.cc.submit(goto(50.0)).unwrap();
    net.settle();
    net.finish(1, t, Ok(()));
    assert_eq!(kept(&net), [done[18], done[19], t]);
}
