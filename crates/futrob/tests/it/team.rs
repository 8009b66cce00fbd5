//! Team messages: codec, filtering, discovery, ASK_ROLE, TTL and the simulated radio.

use simrob_futrob::msg::{CommParams, Received};
use simrob_futrob::rules::RuleSet;
use simrob_futrob::{
    ActionKind, BodyStatus, Brain, BrainParams, Message, Param, Role, SimRadio, TeamComm, BROADCAST,
};

#[test]
fn the_message_is_sixteen_little_endian_bytes() {
    let m = Message::new(2, 3, Param::ActionTaken, 19);
    let b = m.encode();
    assert_eq!(b, [2, 0, 0, 0, 3, 0, 0, 0, 20, 0, 0, 0, 19, 0, 0, 0]);
    assert_eq!(Message::decode(&b), Ok(m));
    assert_eq!(
        m.to_string(),
        "src 2 -> dest 3: COMM_PARAM_ACTION_TAKEN = 19 (kickBall)"
    );
    let neg = Message::new(1, BROADCAST, Param::GkPosX, -20);
    assert_eq!(Message::decode(&neg.encode()), Ok(neg));
    for p in Param::ALL {
        assert_eq!(Param::from_code(p.code()), Some(*p));
        assert_eq!(Param::parse(p.name()), Some(*p));
    }
    assert_eq!(Param::parse("ask_role"), Some(Param::AskRole));
    assert_eq!(Param::parse("20"), Some(Param::ActionTaken));
}

#[test]
fn garbage_is_dropped_and_counted() {
    let mut c = TeamComm::new(1, Role::Goalkeeper, CommParams::default());
    let mut bad = Message::new(2, 255, Param::Role, 2).encode();
    bad[8] = 99;
    let inputs: [&[u8]; 5] = [&[], &[1, 2, 3], &[0; 17], &bad, &[0xff; 16]];
    for i in inputs {
        assert!(matches!(c.handle_datagram(i, 0), Received::Dropped(_)));
    }
    let s = c.stats();
    assert_eq!(
        (s.received, s.bad_length, s.unknown_param, s.accepted),
        (5, 3, 2, 0)
    );
    assert_eq!(c.members().count(), 0, "garbage changes nothing");
    assert!(c.poll_transmit().is_none());
}

#[test]
fn addressing_own_and_other_robots_messages() {
    let mut c = TeamComm::new(1, Role::FieldPlayer, CommParams::default());
    assert!(matches!(
        c.handle_message(Message::new(1, 255, Param::Role, 2), 0),
        Received::Own(_)
    ));
    assert!(matches!(
        c.handle_message(Message::new(2, 3, Param::Role, 2), 0),
        Received::NotForMe(_)
    ));
    assert!(matches!(
        c.handle_message(Message::new(2, 1, Param::Role, 2), 0),
        Received::Accepted(_)
    ));
    let s = c.stats();
    assert_eq!((s.own, s.not_for_me, s.accepted), (1, 1, 1));
}

#[test]
fn messages_from_ids_no_robot_has_are_dropped_and_draw_no_question() {
    // A ROLE from sources 0, -5, 255 (the broadcast and spy id) and i32's ends was taken as
    // a teammate joining, and ASK_ROLE went out to them.
    let mut c = TeamComm::new(2, Role::FieldPlayer, CommParams::default());
    let bad = [0, -5, 255, 256, i32::MAX, i32::MIN];
    for (k, src) in bad.into_iter().enumerate() {
        for (param, value) in [(Param::Role, 1), (Param::BallDistance, 80)] {
            let m = Message::new(src, BROADCAST, param, value);
            assert_eq!(c.handle_message(m, 10 * k as u64), Received::BadSource(m));
            let d = Message::new(src, 2, param, value).encode();
            assert!(matches!(
                c.handle_datagram(&d, 10 * k as u64),
                Received::BadSource(_)
            ));
        }
    }
    assert_eq!(c.members().count(), 0, "no teammate from them");
    assert!(c.poll_transmit().is_none(), "no ASK_ROLE to them");
    let s = c.stats();
    assert_eq!((s.bad_source, s.accepted), (4 * bad.len() as u64, 0));
    // The ends of the robot ids are robots.
    for src in [1, 254] {
        assert!(matches!(
            c.handle_message(Message::new(src, BROADCAST, Param::Role, 2), 100),
            Received::Accepted(_)
        ));
    }
    assert_eq!(c.members().count(), 2);
}

#[test]
fn discovery_asks_an_unknown_sender_its_role_and_the_answer_is_directed() {
    let p = CommParams::default();
    let mut a = TeamComm::new(1, Role::Goalkeeper, p);
    let mut b = TeamComm::new(3, Role::FieldPlayer, p);
    // b's announcement was lost; its next message is a ball report.
    a.handle_message(Message::new(3, BROADCAST, Param::BallDistance, 162), 100);
    assert_eq!(a.member(3).unwrap().ball_distance, Some(162));
    assert_eq!(a.member(3).unwrap().role, None);
    let ask = a.poll_transmit().unwrap();
    assert_eq!(ask, Message::new(1, 3, Param::AskRole, 0));
    assert!(a.poll_transmit().is_none(), "asked once");
    b.handle_message(ask, 120);
    let reply = b.poll_transmit().unwrap();
    assert_eq!(
        reply,
        Message::new(3, 1, Param::Role, Role::FieldPlayer.code())
    );
    a.handle_message(reply, 140);
    assert_eq!(a.member(3).unwrap().role, Some(Role::FieldPlayer));
    // b learnt about a from the question: it asks too (the question carries no role).
    assert_eq!(
        b.poll_transmit(),
        Some(Message::new(3, 1, Param::AskRole, 0))
    );
    // A sender that announces itself is not asked.
    let mut c = TeamComm::new(4, Role::FieldPlayer, p);
    c.handle_message(Message::new(1, BROADCAST, Param::Start, 1), 0);
    assert!(c.poll_transmit().is_none());
    assert_eq!(c.keeper_id(0), Some(1));
}

#[test]
fn teammates_expire_after_the_ttl_of_handed_in_time() {
    let mut c = TeamComm::new(
        1,
        Role::FieldPlayer,
        CommParams {
            ttl_ms: 10_000,
            pass_window_ms: 10_000,
            ..CommParams::default()
        },
    );
    c.handle_message(Message::new(2, BROADCAST, Param::Role, 2), 1_000);
    c.handle_message(Message::new(3, BROADCAST, Param::Role, 1), 5_000);
    c.expire(11_000);
    assert_eq!(c.members().count(), 2, "exactly at the TTL: still fresh");
    c.expire(11_001);
    let ids: Vec<i32> = c.members().map(|t| t.id).collect();
    assert_eq!(ids, vec![3]);
    c.handle_message(Message::new(3, BROADCAST, Param::BallInSight, 1), 14_000);
    c.expire(24_000);
    assert_eq!(c.members().count(), 1, "refreshed by any message");
    c.handle_message(Message::new(3, BROADCAST, Param::Leave, 0), 24_500);
    assert_eq!(c.members().count(), 0, "leaving removes it at once");
}

#[test]
fn a_flood_of_new_senders_fills_the_table_only_to_its_limit_and_asks_no_more() {
    // Each datagram from a new source id added a teammate and drew an ASK_ROLE onto the
    // team's address: 49,000 forged ids in 8 s grew the table (and the messages sent) by as
    // many.
    let p = CommParams {
        max_teammates: 4,
        ..CommParams::default()
    };
    let mut c = TeamComm::new(1, Role::Goalkeeper, p);
    c.handle_message(Message::new(2, BROADCAST, Param::Role, 2), 0);
    let mut sent = 0;
    while c.poll_transmit().is_some() {
        sent += 1;
    }
    // Every robot id but the two above (ids outside 1-254 are no robot's: dropped before).
    for id in 10..=254 {
        let r = c.handle_message(Message::new(id, BROADCAST, Param::BallDistance, 5), 100);
        assert!(
            id < 13 || matches!(r, Received::TableFull(_)),
            "{id}: {r:?}"
        );
        while c.poll_transmit().is_some() {
            sent += 1;
        }
    }
    assert_eq!(c.members().count(), 4);
    assert_eq!(c.stats().table_full, 245 - 3);
    assert_eq!(
        sent, 3,
        "the three newcomers let in were asked their role, no one else"
    );
    // The teammate already known is heard as before.
    assert!(matches!(
        c.handle_message(Message::new(2, BROADCAST, Param::BallInSight, 1), 200),
        Received::Accepted(_)
    ));
    assert!(c.member(2).unwrap().ball_in_sight);
    // Those silent past the TTL make room.
    c.handle_message(Message::new(2, BROADCAST, Param::BallInSight, 1), 10_050);
    assert!(matches!(
        c.handle_message(Message::new(7, BROADCAST, Param::Role, 2), 10_101),
        Received::Accepted(_)
    ));
    let ids: Vec<i32> = c.members().map(|t| t.id).collect();
    assert_eq!(ids, vec![2, 7]);
}

#[test]
fn ask_role_is_answered_at_most_twice_a_second_per_asker() {
    // Each ASK_ROLE drew an answer onto the team's address: a flood of them from one id made
    // every robot send as much as it was sent.
    let mut c = TeamComm::new(1, Role::Goalkeeper, CommParams::default());
    c.handle_message(Message::new(3, BROADCAST, Param::Role, 2), 0);
    while c.poll_transmit().is_some() {}
    let mut answers = Vec::new();
    for t in 0..1500u64 {
        c.handle_message(Message::new(3, 1, Param::AskRole, 0), t);
        answers.extend(std::iter::from_fn(|| c.poll_transmit()).map(|m| (t, m)));
    }
    let role = Message::new(1, 3, Param::Role, Role::Goalkeeper.code());
    assert_eq!(answers, vec![(0, role), (500, role), (1000, role)]);
}

fn brain(id: i32, role: Role) -> Brain {
    let rules = RuleSet::parse(
        "<RuleSet><Rule><def><not><value term=\"ballInSight\"/></not></def><action name=\"none\"/></Rule></RuleSet>",
        "idle.xml",
    )
    .unwrap();
    Brain::new(id, role, rules, BrainParams::default())
}

/// Runs brains on a simulated radio for `ms` of simulated time, 50 ms per cycle.
fn run(brains: &mut [Brain], radio: &mut SimRadio, from: u64, ms: u64) {
    let body = BodyStatus {
        finished: u64::MAX,
        ..Default::default()
    };
    let mut now = from;
    while now < from + ms {
        for (to, m) in radio.deliver(now) {
            if let Some(b) = brains.iter_mut().find(|b| b.world().comm.id() == to) {
                b.handle_message(now, m);
            }
        }
        for b in brains.iter_mut() {
            let out = b.step(now, &body).messages.clone();
            for m in out {
                radio.send(m, now);
            }
        }
        now += 50;
    }
}

/// A keeper (1) and two field players (2, 3), each having announced itself.
fn started_team() -> Vec<Brain> {
    let mut brains = vec![
        brain(1, Role::Goalkeeper),
        brain(2, Role::FieldPlayer),
        brain(3, Role::FieldPlayer),
    ];
    for b in &mut brains {
        b.start();
    }
    brains
}

#[test]
fn brains_discover_each_other_over_the_simulated_radio() {
    let mut brains = started_team();
    let mut radio = SimRadio::new(&[1, 2, 3], 0.0, 30, 10, 7);
    run(&mut brains, &mut radio, 0, 500);
    for b in &brains {
        let mut known: Vec<(i32, Option<Role>)> =
            b.world().comm.members().map(|t| (t.id, t.role)).collect();
        known.sort();
        let me = b.world().comm.id();
        let want: Vec<(i32, Option<Role>)> = [
            (1, Some(Role::Goalkeeper)),
            (2, Some(Role::FieldPlayer)),
            (3, Some(Role::FieldPlayer)),
        ]
        .into_iter()
        .filter(|(i, _)| *i != me)
        .collect();
        assert_eq!(known, want, "robot {me}");
        // The action decided at start was announced.
        let first = b.world().comm.members().next().unwrap();
        assert_eq!(first.action_taken, Some(ActionKind::None));
    }
}

#[test]
fn a_lost_announcement_is_recovered_by_the_next_message() {
    let mut brains = vec![brain(1, Role::Goalkeeper), brain(3, Role::FieldPlayer)];
    // Robot 1 starts deaf: robot 3's announcement never reaches it.
    brains[1].start();
    let out = brains[1].step(0, &BodyStatus::default()).messages.clone();
    assert!(out.iter().any(|m| m.param == Param::Start));
    assert!(brains[0].world().comm.member(3).is_none());
    brains[0].start();
    let mut radio = SimRadio::new(&[1, 3], 0.0, 20, 0, 1);
    // The next status report from 3 (every second) makes 1 ask for its role.
    run(&mut brains, &mut radio, 50, 1500);
    assert_eq!(
        brains[0].world().comm.member(3).unwrap().role,
        Some(Role::FieldPlayer)
    );
    assert!(brains[1].world().comm.stats().accepted > 0);
}

#[test]
fn a_lossy_radio_still_converges_and_is_deterministic() {
    let go = || {
        let mut brains = vec![brain(1, Role::Goalkeeper), brain(2, Role::FieldPlayer)];
        for b in &mut brains {
            b.start();
        }
        let mut radio = SimRadio::new(&[1, 2], 0.5, 40, 40, 99);
        run(&mut brains, &mut radio, 0, 8000);
        (
            radio.lost(),
            radio.delivered(),
            brains[0].world().comm.member(2).and_then(|t| t.role),
            brains[1].world().comm.member(1).and_then(|t| t.role),
        )
    };
    let a = go();
    assert!(a.0 > 0, "some copies were lost");
    assert_eq!(
        (a.2, a.3),
        (Some(Role::FieldPlayer), Some(Role::Goalkeeper))
    );
    assert_eq!(a, go(), "same seed, same run");
}

#[test]
fn the_keeper_relocates_on_a_field_players_report() {
    let rules = RuleSet::parse(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scenarios/soccer/rules/relocation_keeper.xml"
        ))
        .unwrap(),
        "relocation_keeper.xml",
    )
    .unwrap();
    let mut keeper = Brain::new(1, Role::Goalkeeper, rules, BrainParams::default());
    keeper.handle_message(0, Message::new(2, 1, Param::GkPosX, 20));
    let out = keeper.step(10, &BodyStatus::default());
    assert_eq!(out.rule, Some(0));
    assert_eq!(
        out.commands
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>(),
        ["walkLeft distance=4"]
    );
    // Field players ignore keeper reports.
    let mut fp = brain(3, Role::FieldPlayer);
    fp.handle_message(0, Message::new(2, BROADCAST, Param::GkPosX, 20));
    assert_eq!(fp.world().gk_offsets(10), (None, None));
}

/// Each robot's view of its fresh teammates and their roles at `now`.
fn views(brains: &[Brain], now: u64) -> Vec<Vec<(i32, Option<Role>)>> {
    brains
        .iter()
        .map(|b| b.world().comm.fresh_roles(now))
        .collect()
}

#[test]
fn a_player_restarted_mid_match_is_learnt_again_and_the_table_never_flaps_at_twenty_percent_loss() {
    let everyone = [
        (1, Some(Role::Goalkeeper)),
        (2, Some(Role::FieldPlayer)),
        (3, Some(Role::FieldPlayer)),
    ];
    let want = |me: i32| -> Vec<(i32, Option<Role>)> {
        everyone.into_iter().filter(|(i, _)| *i != me).collect()
    };
    let mut brains = started_team();
    let mut radio = SimRadio::new(&[1, 2, 3], 0.2, 30, 20, 5);
    // Settle, then 8 s of play: every cycle every robot sees both teammates, roles right.
    run(&mut brains, &mut radio, 0, 2000);
    for step in 0..160 {
        let now = 2000 + step * 50;
        run(&mut brains, &mut radio, now, 50);
        for (b, v) in brains.iter().zip(views(&brains, now + 50)) {
            let me = b.world().comm.id();
            assert_eq!(v, want(me), "robot {me} at {} ms", now + 50);
        }
    }
    // Robot 2's process is restarted: a new brain, the same id, an empty table.
    brains[1] = brain(2, Role::FieldPlayer);
    brains[1].start();
    assert_eq!(brains[1].world().comm.members().count(), 0);
    let restart = 10_000;
    let mut relearnt = None;
    for step in 0..200 {
        let now = restart + step * 50;
        run(&mut brains, &mut radio, now, 50);
        let v = views(&brains, now + 50);
        // The others never lose it (it reports again at once, well within the TTL).
        assert_eq!(v[0], want(1), "robot 1 at {} ms", now + 50);
        assert_eq!(v[2], want(3), "robot 3 at {} ms", now + 50);
        if relearnt.is_none() && v[1] == want(2) {
            relearnt = Some(now + 50 - restart);
        }
        // Once learnt again, never lost.
        if relearnt.is_some() {
            assert_eq!(v[1], want(2), "robot 2 at {} ms", now + 50);
        }
    }
    // Through their reports and ASK_ROLE, within a few report periods.
    let took = relearnt.expect("the restarted robot learns its teammates again");
    assert!(took <= 5000, "took {took} ms");
    assert!(brains[1].world().comm.stats().sent > 0);
}

/// A brain without rules runs the actions handed to it from outside (a learning agent's
/// choice): each starts at an equilibrium point; one asked for again while it runs goes on.
#[test]
fn a_brain_without_rules_runs_the_actions_it_is_asked_for() {
    let rules = RuleSet::parse("<RuleSet></RuleSet>", "agent").unwrap();
    let mut b = Brain::new(3, Role::FieldPlayer, rules, BrainParams::default());
    let idle = BodyStatus::default();
    assert!(
        b.step(0, &idle).commands.is_empty(),
        "no rules: nothing to do"
    );
    b.request(simrob_futrob::Action {
        kind: simrob_futrob::ActionKind::Walk,
        param: Some(24.0),
    });
    let out = b.step(40, &idle);
    assert_eq!(
        out.started.map(|a| a.to_string()).as_deref(),
        Some("walk distance=24")
    );
    assert_eq!(out.commands.len(), 1);
    assert_eq!(out.rule, None);
    // Asked again while its first step is under way: it goes on, nothing restarts.
    b.request(simrob_futrob::Action {
        kind: simrob_futrob::ActionKind::Walk,
        param: Some(24.0),
    });
    let out = b.step(80, &idle);
    assert_eq!(out.started, None);
    assert!(out.commands.is_empty(), "the body is still busy");
    // A kick replaces it at the next equilibrium point (the step finished).
    b.request(simrob_futrob::Action::new(
        simrob_futrob::ActionKind::KickRight,
    ));
    let done = BodyStatus {
        finished: 1,
        ..BodyStatus::default()
    };
    let out = b.step(120, &done);
    assert_eq!(
        out.started.map(|a| a.to_string()).as_deref(),
        Some("kickRight")
    );
    assert_eq!(
        out.commands
            .iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>(),
        ["kickRight"]
    );
}
