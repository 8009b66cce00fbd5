//! Speed of the FutRob brain (run with `--release`):
//!
//! 1. rule evaluations per second on the largest FutRob rule set (the penalty kicker's five
//!    rules), over varied world states, with how often each rule fired;
//! 2. brain cycles per second with a full world model — every kind of object in view (three
//!    teammates, three opponents, both goals and their posts, both landmarks), a rolling ball
//!    with a full trajectory history, three teammates in the team table — each cycle a new
//!    camera frame, a team message, the predicates, the rules, the action handler.
//!
//! `cargo run --release -p simrob-futrob --example futrob_bench [-- SECONDS]`

use std::time::Instant;

use simrob_futrob::rules::RuleSet;
use simrob_futrob::{
    BodyStatus, Brain, BrainParams, Message, ObjectKind, Param, PredicateSet, Role, Sighting,
    BROADCAST,
};
use simrob_math::SplitMix64;

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2.0);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/soccer/rules");
    let kicker = RuleSet::parse(
        &std::fs::read_to_string(format!("{dir}/kicker.xml")).unwrap(),
        "kicker.xml",
    )
    .unwrap();

    // 1. Rule evaluations.
    let mut rng = SplitMix64::new(1);
    let worlds: Vec<PredicateSet> = (0..4096)
        .map(|_| PredicateSet(rng.next_u64() & ((1 << 36) - 1)))
        .collect();
    let mut fired = vec![0u64; kicker.rules().len() + 1];
    let mut n = 0u64;
    let t0 = Instant::now();
    while t0.elapsed().as_secs_f64() < secs {
        for w in &worlds {
            let i = kicker
                .evaluate(std::hint::black_box(w))
                .map_or(kicker.rules().len(), |(i, _)| i);
            fired[i] += 1;
        }
        n += worlds.len() as u64;
    }
    let dt = t0.elapsed().as_secs_f64();
    println!(
        "rule evaluations (kicker.xml, {} rules, {} varied world states):",
        kicker.rules().len(),
        worlds.len()
    );
    println!(
        "  {n} evaluations in {dt:.2} s = {:.0} evaluations/s on one core",
        n as f64 / dt
    );
    for (i, r) in kicker.rules().iter().enumerate() {
        println!(
            "  rule {i} {:?} -> {}: fired {}",
            r.name, r.action, fired[i]
        );
    }
    println!("  no rule true: {}", fired[kicker.rules().len()]);

    // 2. Brain cycles with a full world model.
    let fp = RuleSet::parse(
        &std::fs::read_to_string(format!("{dir}/field_player.xml")).unwrap(),
        "field_player.xml",
    )
    .unwrap();
    let mut brain = Brain::new(2, Role::FieldPlayer, fp, BrainParams::default());
    brain.start();
    for id in [1, 3, 4] {
        brain.handle_message(
            0,
            Message::new(id, BROADCAST, Param::Role, if id == 1 { 1 } else { 2 }),
        );
    }
    let mut status = BodyStatus::default();
    let (mut cycles, mut commands, mut messages, mut kicks) = (0u64, 0u64, 0u64, 0u64);
    let mut rules_fired = std::collections::BTreeMap::new();
    let t0 = Instant::now();
    let mut now = 0u64;
    while t0.elapsed().as_secs_f64() < secs {
        now += 10;
        let k = (now / 10 % 400) as f64;
        let ball_d = 150.0 - 0.3 * k; // the ball rolls towards the robot and starts again
        let frame = [
            Sighting::new(ObjectKind::Ball, 10.0 + 0.01 * k, ball_d),
            Sighting::new(ObjectKind::Partner, -30.0, 120.0),
            Sighting::new(ObjectKind::Partner, 25.0, 300.0),
            Sighting::new(ObjectKind::Partner, 5.0, 500.0),
            Sighting::new(ObjectKind::Opponent, 12.0, 200.0),
            Sighting::new(ObjectKind::Opponent, -12.0, 250.0),
            Sighting::new(ObjectKind::Opponent, 0.0, 420.0),
            Sighting::new(ObjectKind::RightMark, 70.0, 300.0),
            Sighting::new(ObjectKind::LeftMark, -70.0, 300.0),
            Sighting::new(ObjectKind::MyGoal, 179.0, 450.0),
            Sighting::new(ObjectKind::OppGoal, 2.0, 450.0),
            Sighting::new(ObjectKind::MyPost, 170.0, 460.0),
            Sighting::new(ObjectKind::OppPost, 12.0, 455.0),
        ];
        brain.observe(now, &frame);
        brain.handle_message(now, Message::new(3, BROADCAST, Param::BallDistance, 140));
        let out = brain.step(now, &status);
        cycles += 1;
        commands += out.commands.len() as u64;
        messages += out.messages.len() as u64;
        kicks += out
            .commands
            .iter()
            .filter(|c| c.kind.name().starts_with("kick"))
            .count() as u64;
        if let Some(r) = out.rule {
            *rules_fired.entry(r).or_insert(0u64) += 1;
        }
        status.finished = brain.handler().issued();
    }
    let dt = t0.elapsed().as_secs_f64();
    println!("brain cycles (field_player.xml, 13 objects per frame, 3 teammates, ball trajectory of {} samples):", brain.world().trajectory.len());
    println!(
        "  {cycles} cycles in {dt:.2} s = {:.0} cycles/s on one core ({:.2} µs per cycle)",
        cycles as f64 / dt,
        dt * 1e6 / cycles as f64
    );
    println!("  did: {commands} body/head commands ({kicks} kicks), {messages} team messages");
    for (r, n) in rules_fired {
        println!("  rule {r} {:?}: {n} cycles", brain.rules().rules()[r].name);
    }
}
