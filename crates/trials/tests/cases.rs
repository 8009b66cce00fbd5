//! The case studies run for real: outcomes come from the world, the same seed gives the same
//! trials.

use simrob_futrob::Role;
use simrob_soccer::{Pose2, Profile, Team};
use simrob_trials::{run_trial, Arena, ArenaParams, Case, PlayerSpec};

#[test]
fn the_same_seed_gives_the_same_trials() {
    let p = Profile::paper();
    for case in [Case::PenaltyKick, Case::PenaltySave, Case::Pass] {
        let a = run_trial(case, 1, 42, &p).unwrap();
        let b = run_trial(case, 1, 42, &p).unwrap();
        assert_eq!(a, b, "{}", case.name());
    }
    let a = run_trial(Case::PenaltySave, 0, 1, &p).unwrap();
    let b = run_trial(Case::PenaltySave, 0, 2, &p).unwrap();
    assert_ne!(
        a.placement, b.placement,
        "another seed places things elsewhere"
    );
}

#[test]
fn with_ideal_robots_the_keeper_decides_as_the_report_says() {
    let p = Profile::ideal();
    // Trial i runs scenario i+1: offsets 5, 20, 30, 50 cm.
    let stays = run_trial(Case::Relocation, 0, 3, &p).unwrap();
    assert!(stays.success && stays.outcome == "stayed", "{stays:?}");
    let moves = run_trial(Case::Relocation, 1, 3, &p).unwrap();
    assert!(
        moves.success && moves.outcome == "moved to the centre",
        "{moves:?}"
    );
    let too_far = run_trial(Case::Relocation, 3, 3, &p).unwrap();
    assert!(
        too_far.success && too_far.outcome == "stayed",
        "{too_far:?}"
    );
}

#[test]
fn with_ideal_robots_a_ball_straight_at_the_keeper_is_saved_and_a_pass_is_received() {
    let p = Profile::ideal();
    let save = run_trial(Case::PenaltySave, 0, 5, &p).unwrap();
    assert_eq!(save.outcome, "saved", "{save:?}");
    // Passes are received nearly always with FutRob's camera (94 in 100), not always: a
    // passer falls, a pass leaves 20° off, a receiver is still searching.
    let passes: Vec<_> = (0..5)
        .map(|t| run_trial(Case::Pass, t, 1, &Profile::paper()).unwrap())
        .collect();
    let received = passes.iter().filter(|r| r.outcome == "received").count();
    assert!(received >= 4, "{passes:?}");
    for r in passes.iter().filter(|r| r.success) {
        let (pass_t, got_t) = (r.metric("pass_time_s"), r.metric("received_time_s"));
        assert!(
            matches!((pass_t, got_t), (Some(a), Some(b)) if a < b),
            "received after the pass: {r:?}"
        );
    }
}

/// FutRob's camera places the opponent goal 15.8° too far right. With the keeper on the
/// kicker's right, the kick-direction rule then shot past the far post of the goal it saw
/// (these three trials went wide); the kicker now finds the goal's centre from one post,
/// seen without that error, and the shot crosses the goal line between the posts — where
/// the ball went is the physics'.
#[test]
fn a_penalty_aimed_from_a_goal_post_beats_vision_s_goal_bias() {
    let p = Profile::paper();
    for trial in [4, 10, 19] {
        let r = run_trial(Case::PenaltyKick, trial, 1, &p).unwrap();
        assert_eq!(r.scenario, 2, "the keeper 20 cm to the kicker's right");
        let crossing = r.metric("goal_line_crossing_cm");
        assert!(
            r.success && crossing.is_some_and(|y| y.abs() < 90.0),
            "{r:?}"
        );
    }
}

/// A ball rolled at a standing keeper's body stops there; the same ball rolled wide of it
/// crosses the goal line: the physics decides, not a script.
#[test]
fn the_keepers_body_stops_what_it_covers_and_nothing_else() {
    let goal_x = 4.5;
    let run = |ball_y: f64| -> bool {
        let mut a = Arena::new(ArenaParams::new(Profile::ideal(), 1)).unwrap();
        a.add_players(vec![PlayerSpec {
            entity: 4,
            team: Team::Magenta,
            role: Role::Goalkeeper,
            pose: Pose2 {
                x: goal_x - 0.30,
                y: 0.0,
                heading: std::f64::consts::PI,
            },
            rules: None,
        }])
        .unwrap();
        a.place_ball(goal_x - 1.6, ball_y, 1.6, 0.0).unwrap();
        for _ in 0..400 {
            a.step().unwrap();
            if a.ball()[0] > goal_x + 0.05 {
                return true;
            }
        }
        false
    };
    assert!(
        !run(0.0),
        "a ball straight at the keeper is stopped by its body"
    );
    assert!(run(0.5), "a ball 50 cm to the side goes in");
}

/// A value an observer (which must be `Send`) writes and the test reads afterwards.
type Shared<T> = std::sync::Arc<std::sync::Mutex<T>>;

fn shared<T>(v: T) -> Shared<T> {
    std::sync::Arc::new(std::sync::Mutex::new(v))
}

fn get<T: Copy>(s: &Shared<T>) -> T {
    *s.lock().unwrap()
}

fn set<T>(s: &Shared<T>, v: T) {
    *s.lock().unwrap() = v;
}

/// Until the ball has left the centre spot (moved 5 cm) or 10 s have passed, keeps in
/// `nearest` the least distance from the spot of the robots `ids` (the team not kicking off).
fn defenders_from_the_spot(
    w: &simrob_world::World,
    ball: [f64; 3],
    ids: std::ops::RangeInclusive<u32>,
    touched: &mut bool,
    nearest: &Shared<f64>,
) {
    *touched |= ball[0].hypot(ball[1]) > 0.05 || w.sim_time() > 10.0;
    if !*touched {
        for id in ids {
            if let Some(h) = w.humanoid(simrob_protocol::EntityId(id)) {
                let q = h.pose();
                set(nearest, get(nearest).min(q.x.hypot(q.y)));
            }
        }
    }
}

#[test]
fn magenta_kicks_off_a_match_and_cyan_stays_out_of_the_circle() {
    use simrob_trials::matchplay::{play, MatchParams};
    let p = MatchParams {
        profile: Profile::paper(),
        seed: 2,
        duration_s: 12.0,
        kick_off: Team::Magenta,
        stop: None,
    };
    // Until the ball leaves the centre spot, the cyan robots (3–5) stay out of the centre
    // circle and magenta's first field player (7) stands at the ball.
    let cyan_nearest = shared(f64::INFINITY);
    let kicker_start = shared(f64::NAN);
    let (watch, start) = (cyan_nearest.clone(), kicker_start.clone());
    let mut touched = false;
    let observer = move |w: &simrob_world::World| {
        let ball = w
            .entity_pose(simrob_soccer::field::BALL_ENTITY)
            .map_or([0.0; 3], |(p, _)| p);
        if get(&start).is_nan() {
            if let Some(h) = w.humanoid(simrob_protocol::EntityId(7)) {
                let q = h.pose();
                set(&start, (q.x - ball[0]).hypot(q.y - ball[1]));
            }
        }
        defenders_from_the_spot(w, ball, 3..=5, &mut touched, &watch);
    };
    let s = play(&p, Some(Box::new(observer))).unwrap();
    assert_eq!(
        s.events.first().map(|e| e.1.as_str()),
        Some("kick-off magenta")
    );
    assert!(
        get(&cyan_nearest) > 0.75,
        "the defending team stayed out of the circle: {}",
        get(&cyan_nearest)
    );
    assert!(
        get(&kicker_start) < 0.35,
        "magenta's kicker starts at the ball: {}",
        get(&kicker_start)
    );
}

#[test]
fn a_one_minute_match_is_played_and_scored_from_the_world() {
    use simrob_trials::matchplay::{play, MatchParams};
    let p = MatchParams {
        profile: Profile::paper(),
        seed: 1,
        duration_s: 60.0,
        kick_off: Team::Cyan,
        stop: None,
    };
    let seen = shared(0u64);
    let counter = seen.clone();
    // Until the ball leaves the centre spot, the magenta robots (6–8) stay out of the centre
    // circle (radius 0.75 m): cyan kicks off.
    let nearest = shared(f64::INFINITY);
    let watch = nearest.clone();
    let mut touched = false;
    let observer = move |w: &simrob_world::World| {
        set(&counter, get(&counter) + 1);
        let ball = w
            .entity_pose(simrob_soccer::field::BALL_ENTITY)
            .map_or([0.0; 3], |(p, _)| p);
        defenders_from_the_spot(w, ball, 6..=8, &mut touched, &watch);
    };
    let s = play(&p, Some(Box::new(observer))).unwrap();
    assert_eq!(get(&seen), 6000, "one iteration every 10 ms");
    assert!(
        get(&nearest) > 0.75,
        "the defending team stayed out of the circle: {}",
        get(&nearest)
    );
    assert_eq!(
        s.events.first().map(|e| e.1.as_str()),
        Some("kick-off cyan")
    );
    let goals: u32 = s.goals.iter().sum();
    let kickoffs = s
        .events
        .iter()
        .filter(|e| e.1.starts_with("kick-off"))
        .count() as u32;
    assert_eq!(
        kickoffs,
        goals + 1,
        "every goal is followed by a kick-off: {s:?}"
    );
    assert!(
        s.possession_s.iter().sum::<f64>() > 0.0,
        "someone reached the ball: {s:?}"
    );
    assert!(s.messages > 0);
    assert_eq!(s.played_s, 60.0, "played to the end");
    let again = play(&p, None).unwrap();
    assert_eq!(s, again, "the same seed plays the same match");
}

#[test]
fn a_match_stopped_early_sums_up_what_was_played() {
    use simrob_trials::matchplay::{play, MatchParams};
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let p = MatchParams {
        profile: Profile::paper(),
        seed: 3,
        duration_s: 60.0,
        kick_off: Team::Cyan,
        stop: Some(stop.clone()),
    };
    // Ctrl-C after 2.5 simulated seconds (as the signal handler raises the flag).
    let seen = shared(0u64);
    let counter = seen.clone();
    let observer = move |_: &simrob_world::World| {
        set(&counter, get(&counter) + 1);
        if get(&counter) == 250 {
            stop.store(true, Ordering::Relaxed);
        }
    };
    let s = play(&p, Some(Box::new(observer))).unwrap();
    assert_eq!(get(&seen), 250, "no iteration after the stop");
    assert_eq!((s.duration_s, s.played_s), (60.0, 2.5));
    assert!(s.strikes.iter().all(|x| x.t <= 2.5), "{s:?}");
}

/// The case figures hold beyond the seeds they were developed on: at seeds this test picks
/// (none of them used in development), with FutRob's camera (`paper`), each case keeps its
/// rate. The counts are small so that the test runs in seconds in a debug build; the floors
/// sit a few trials under the rates measured over 20 seeds × 100 trials (docs/benchmarks.md),
/// so a change that costs a case a few points over many seeds fails here.
#[test]
fn the_case_rates_hold_at_seeds_the_test_picks() {
    let p = Profile::paper();
    // (case, trials at each seed, fewest successes allowed over all seeds)
    let floors = [
        (Case::PenaltySave, 60, 166), // 180 trials (60 of each scenario): ≥ 92.2 %
        (Case::PenaltyKick, 9, 25),   // 27 trials: ≥ 92.6 %
        (Case::Pass, 8, 22),          // 24 trials: ≥ 91.7 %
        (Case::Relocation, 8, 24),    // every offset of the report's table at each seed: all
    ];
    let seeds = [7001_u64, 7002, 7003];
    for (case, per_seed, floor) in floors {
        let results: Vec<_> = seeds
            .iter()
            .flat_map(|&s| (0..per_seed).map(move |t| (s, t)))
            .map(|(s, t)| run_trial(case, t, s, &p).unwrap())
            .collect();
        let ok = results.iter().filter(|r| r.success).count();
        let failed: Vec<String> = results
            .iter()
            .filter(|r| !r.success)
            .map(|r| format!("trial {} seed {}: {}", r.trial + 1, r.seed, r.outcome))
            .collect();
        assert!(
            ok >= floor,
            "{}: {ok}/{} succeeded, at least {floor} expected; failed: {failed:?}",
            case.name(),
            results.len()
        );
    }
}

/// In a match a pass goes to a teammate clearly nearer the opponent goal, and never straight
/// back: over several seeds no pass is answered by a pass from its receiver, and no two
/// teammates strike the ball back and forth without progress (a pass loop) — read from each
/// match's own score sheet. (With FutRob's `partnerInRange` as the match's pass rule, seed 6
/// passed the ball from robot 4 to 5 and straight back at 41 s.)
#[test]
fn match_passes_go_forward_and_never_straight_back() {
    use simrob_trials::matchplay::{play, MatchParams};
    use simrob_trials::referee::StrikeKind;
    for seed in 1..=6 {
        let s = play(&MatchParams::new(Profile::paper(), seed, 90.0), None).unwrap();
        for w in s.strikes.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            let returned = a.kind == StrikeKind::Pass
                && b.kind == StrikeKind::Pass
                && a.next.is_some()
                && a.next == b.robot
                && b.next == a.robot;
            assert!(
                !returned,
                "seed {seed}: robot {:?} passed to {:?} at {:.1} s and got it straight back at {:.1} s",
                a.robot, a.next, a.t, b.t
            );
        }
        let loops: Vec<_> = s.exchanges.iter().filter(|e| e.is_loop()).collect();
        assert!(loops.is_empty(), "seed {seed}: pass loops {loops:?}");
        assert_eq!(s.pass_loops, [0, 0]);
    }
}

/// The score sheet is kept from the world: every goal has a strike that put it in (or none,
/// off a post), is counted as a shot on target, and goals never outnumber shots on target nor
/// these the shots.
#[test]
fn a_matchs_goals_shots_and_passes_add_up() {
    use simrob_trials::matchplay::{play, MatchParams};
    use simrob_trials::referee::{StrikeEnd, StrikeKind};
    let s = play(&MatchParams::new(Profile::paper(), 1, 200.0), None).unwrap();
    assert!(s.goals.iter().sum::<u32>() > 0, "{:?}", s.events);
    for k in 0..2 {
        assert!(
            s.goals[k]
                <= s.shots_on_target[k]
                    + s.goal_log.iter().filter(|g| g.scorer.is_none()).count() as u32
        );
        assert!(s.shots_on_target[k] <= s.shots[k]);
        assert!(s.passes_completed[k] <= s.passes[k]);
    }
    assert_eq!(s.goal_log.len() as u32, s.goals.iter().sum::<u32>());
    let scored: Vec<_> = s
        .strikes
        .iter()
        .filter(|x| x.end == StrikeEnd::Goal)
        .collect();
    for x in &scored {
        if !s.goal_log.iter().any(|g| g.own_goal) {
            assert!(x.kind == StrikeKind::Shot && x.on_target, "{x:?}");
        }
    }
    let shots: u32 = s
        .strikes
        .iter()
        .filter(|x| x.kind == StrikeKind::Shot)
        .count() as u32;
    assert_eq!(shots, s.shots.iter().sum::<u32>());
    for g in &s.goal_log {
        if let Some(r) = g.scorer {
            assert!((3..=8).contains(&r), "{g:?}");
        }
    }
}

/// The discovery study used to start every robot at once on a loss-free radio: each trial
/// was the same (every robot knew the team from the announcements, no role ever asked),
/// whatever the seed. Its robots now start at seeded times on a lossy radio, so a robot
/// that missed an announcement finds the teammate from a later message and asks its role.
#[test]
fn discovery_trials_start_robots_at_seeded_times_on_a_lossy_radio_and_ask_roles() {
    let p = Profile::paper();
    let trials: Vec<_> = (0..4)
        .map(|t| run_trial(Case::Discovery, t, 1, &p).unwrap())
        .collect();
    for r in &trials {
        let on: Vec<f64> = r.placement.iter().map(|(_, v)| *v).collect();
        assert_eq!(on.len(), 3, "{r:?}");
        assert!(on.iter().all(|s| (0.0..=10.0).contains(s)), "{r:?}");
        assert!(r.metric("copies_lost").is_some_and(|n| n > 0.0), "{r:?}");
        // The later robots missed the first one's announcement: they asked its role, and
        // were answered, directed.
        assert!(r.metric("ask_role_sent").is_some_and(|n| n >= 1.0), "{r:?}");
        assert!(r.metric("role_answers").is_some_and(|n| n >= 1.0), "{r:?}");
    }
    assert_ne!(
        trials[0].placement, trials[1].placement,
        "seeded start times"
    );
    let other = run_trial(Case::Discovery, 0, 2, &p).unwrap();
    assert_ne!(other.placement, trials[0].placement, "another seed");
}

fn team_rules(file: &str) -> simrob_futrob::RuleSet {
    let path = format!(
        "{}/../../scenarios/soccer/rules/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    simrob_futrob::RuleSet::parse(&std::fs::read_to_string(&path).unwrap(), &path).unwrap()
}

/// Two robots, the second switched on 3 s after the first, on `loss`'s radio; after `secs`
/// simulated seconds, the roles each knows of the other and the directed messages sent.
fn late_joiner(loss: f64, secs: u64) -> (Option<Role>, Option<Role>, u64, u64) {
    let mut params = ArenaParams::new(Profile::ideal(), 9);
    params.radio_loss = loss;
    let mut a = Arena::new(params).unwrap();
    let spec = |entity, role, y, file| PlayerSpec {
        entity,
        team: Team::Cyan,
        role,
        pose: Pose2 {
            x: -1.0,
            y,
            heading: 0.0,
        },
        rules: Some(team_rules(file)),
    };
    a.add_players(vec![
        spec(3, Role::Goalkeeper, 0.8, "goalkeeper.xml"),
        spec(4, Role::FieldPlayer, -0.8, "field_player.xml"),
    ])
    .unwrap();
    a.join_at(4, 3000);
    let role_of = |a: &Arena, who: usize, of: i32| {
        a.players()[who]
            .brain()
            .and_then(|b| b.world().comm.member(of).and_then(|m| m.role))
    };
    while a.now_ms() < 2990 {
        a.step().unwrap();
    }
    assert!(!a.players()[1].joined());
    assert_eq!(role_of(&a, 0, 4), None, "robot 4 is not on yet");
    while a.now_ms() < secs * 1000 {
        a.step().unwrap();
    }
    (
        role_of(&a, 0, 4),
        role_of(&a, 1, 3),
        a.sent_count(simrob_futrob::Param::AskRole, true),
        a.sent_count(simrob_futrob::Param::Role, true),
    )
}

#[test]
fn a_robot_switched_on_late_asks_the_role_of_a_teammate_whose_announcement_it_missed() {
    // Loss-free: robot 3 hears robot 4's announcement; robot 4 missed robot 3's, finds it
    // from its next status report, asks its role (directed) and is answered (directed).
    let (three_knows, four_knows, asks, answers) = late_joiner(0.0, 6);
    assert_eq!(three_knows, Some(Role::FieldPlayer));
    assert_eq!(four_knows, Some(Role::Goalkeeper));
    assert_eq!((asks, answers), (1, 1));
    // A radio that loses everything: nobody learns anything, and the judge's condition
    // (every role known) cannot be met — the study can fail.
    let (three_knows, four_knows, asks, _) = late_joiner(1.0, 6);
    assert_eq!((three_knows, four_knows, asks), (None, None, 0));
}
