//! FutRob team messages over real UDP on loopback, through the bed's relay at 20 % loss (and
//! 5 % duplication): three players' brains, each with a socket of its own; a message
//! broadcast by one goes to each teammate through the relay in front of that teammate (a
//! unicast to a loopback address per teammate, which is what a broadcast delivers on a LAN;
//! no broadcast leaves `lo`). The brains run on simulated time (50 ms cycles); each cycle
//! waits until the relays have passed on or lost every datagram sent in it and the
//! teammates have read every copy that was passed on, so the run is the same whatever the
//! machine's load, and the losses are the seed's. The teammate table never flaps (presence
//! and roles the same at every cycle) and a player restarted mid-match is learnt again.

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use simrob_futrob::rules::RuleSet;
use simrob_futrob::{BodyStatus, Brain, BrainParams, Message, Role};
use simrob_netbed::{Impairment, UdpRelay};

/// The longest a wait for the relay or a datagram may take before the test fails.
const GUARD: Duration = Duration::from_secs(60);

/// Team players with their sockets, each behind a lossy relay.
struct UdpRadio {
    ids: Vec<i32>,
    sockets: Vec<UdpSocket>,
    relays: Vec<UdpRelay>,
    /// Datagrams sent towards each player's relay so far.
    sent: Vec<u64>,
    /// Datagrams each player read so far.
    read: Vec<u64>,
}

impl UdpRadio {
    fn new(ids: &[i32], lossy: Impairment) -> UdpRadio {
        let mut sockets = Vec::new();
        let mut relays = Vec::new();
        for (k, _) in ids.iter().enumerate() {
            let s = UdpSocket::bind("127.0.0.1:0").expect("a player's socket");
            s.set_read_timeout(Some(GUARD)).expect("guard");
            let imp = Impairment {
                seed: lossy.seed + k as u64,
                ..lossy
            };
            relays.push(
                UdpRelay::start(s.local_addr().expect("addr"), imp, Impairment::clean())
                    .expect("relay"),
            );
            sockets.push(s);
        }
        UdpRadio {
            ids: ids.to_vec(),
            sockets,
            relays,
            sent: vec![0; ids.len()],
            read: vec![0; ids.len()],
        }
    }

    /// `m`, broadcast by its sender: a copy to each teammate, through its relay.
    fn send(&mut self, m: Message) {
        let from = self.index(m.source);
        for to in 0..self.ids.len() {
            if to == from {
                continue;
            }
            self.sockets[from]
                .send_to(&m.encode(), self.relays[to].addr())
                .expect("send");
            self.sent[to] += 1;
        }
    }

    /// Every copy the relays passed on since the last call, as (player id, message), once
    /// the relays have dealt with every datagram sent.
    fn deliver(&mut self) -> Vec<(i32, Message)> {
        let mut out = Vec::new();
        for k in 0..self.ids.len() {
            let until = Instant::now() + GUARD;
            let passed = loop {
                let s = self.relays[k].stats().up;
                if s.received == self.sent[k] && s.sent == s.received - s.lost + s.duplicated {
                    break s.sent;
                }
                assert!(Instant::now() < until, "the relay stopped: {s:?}");
                std::thread::yield_now();
            };
            let mut buf = [0u8; 64];
            while self.read[k] < passed {
                let (n, _) = self.sockets[k]
                    .recv_from(&mut buf)
                    .expect("a datagram the relay passed on (guard)");
                self.read[k] += 1;
                let m = Message::decode(&buf[..n]).expect("a team message");
                out.push((self.ids[k], m));
            }
        }
        out
    }

    fn index(&self, id: i32) -> usize {
        self.ids.iter().position(|&i| i == id).expect("a player")
    }
}

fn brain(id: i32, role: Role) -> Brain {
    let rules = RuleSet::parse(
        "<RuleSet><Rule><def><not><value term=\"ballInSight\"/></not></def><action name=\"none\"/></Rule></RuleSet>",
        "idle.xml",
    )
    .expect("rules");
    let mut b = Brain::new(id, role, rules, BrainParams::default());
    b.start();
    b
}

/// One 50 ms cycle at `now`: what came is handled, then every brain steps and sends.
fn cycle(brains: &mut [Brain], radio: &mut UdpRadio, now: u64) {
    for (to, m) in radio.deliver() {
        if let Some(b) = brains.iter_mut().find(|b| b.world().comm.id() == to) {
            b.handle_message(now, m);
        }
    }
    let body = BodyStatus {
        finished: u64::MAX,
        ..Default::default()
    };
    for b in brains.iter_mut() {
        let out = b.step(now, &body).messages.clone();
        for m in out {
            radio.send(m);
        }
    }
}

/// Each player's fresh teammates and their roles at `now`.
fn views(brains: &[Brain], now: u64) -> Vec<Vec<(i32, Option<Role>)>> {
    brains
        .iter()
        .map(|b| b.world().comm.fresh_roles(now))
        .collect()
}

#[test]
fn futrob_team_messages_over_udp_at_twenty_percent_loss_never_flap_and_a_restarted_player_is_learnt_again(
) {
    let everyone = [
        (1, Some(Role::Goalkeeper)),
        (2, Some(Role::FieldPlayer)),
        (3, Some(Role::FieldPlayer)),
    ];
    let want = |me: i32| -> Vec<(i32, Option<Role>)> {
        everyone.into_iter().filter(|(i, _)| *i != me).collect()
    };
    let lossy = Impairment {
        loss: 0.2,
        duplicate: 0.05,
        seed: 30,
        ..Impairment::clean()
    };
    let mut radio = UdpRadio::new(&[1, 2, 3], lossy);
    let mut brains = vec![
        brain(1, Role::Goalkeeper),
        brain(2, Role::FieldPlayer),
        brain(3, Role::FieldPlayer),
    ];
    // Two seconds to find each other, then 8 s of play: every cycle every player sees both
    // teammates with their roles.
    let mut now = 0;
    while now < 2000 {
        cycle(&mut brains, &mut radio, now);
        now += 50;
    }
    while now < 10_000 {
        cycle(&mut brains, &mut radio, now);
        now += 50;
        for (b, v) in brains.iter().zip(views(&brains, now)) {
            let me = b.world().comm.id();
            assert_eq!(v, want(me), "player {me} at {now} ms");
        }
    }
    // Player 2's process is restarted: a new brain, the same id and socket, an empty table.
    brains[1] = brain(2, Role::FieldPlayer);
    assert_eq!(brains[1].world().comm.members().count(), 0);
    let restart = now;
    let mut relearnt = None;
    while now < restart + 10_000 {
        cycle(&mut brains, &mut radio, now);
        now += 50;
        let v = views(&brains, now);
        // The others never lose it: it reports again at once, well within the TTL.
        assert_eq!(v[0], want(1), "player 1 at {now} ms");
        assert_eq!(v[2], want(3), "player 3 at {now} ms");
        if relearnt.is_none() && v[1] == want(2) {
            relearnt = Some(now - restart);
        }
        if relearnt.is_some() {
            assert_eq!(v[1], want(2), "player 2 at {now} ms, once learnt again");
        }
    }
    let took = relearnt.expect("the restarted player learns its teammates again");
    assert!(took <= 5000, "took {took} ms");
    // The link really lost and duplicated datagrams.
    let (lost, dup, received) = radio.relays.iter().fold((0, 0, 0), |a, r| {
        let s = r.stats().up;
        (a.0 + s.lost, a.1 + s.duplicated, a.2 + s.received)
    });
    assert!(
        lost * 100 >= received * 10 && dup > 0,
        "{lost} lost, {dup} duplicated of {received}"
    );
}
