//! End to end on the network: `simrob serve` with the KidSize field, two
//! `simrob soccer player` processes driving humanoids through `Humanoid_Brain` agents. The
//! field player finds the ball and kicks it towards the goal; the keeper tracks it. The
//! server runs at real time (the brains act on simulated time but talk over the network) and
//! the brains see through the exact camera, so that the run does not hang on camera noise.

use crate::soccer_common;

use simrob_protocol::EntityId;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use simrob_client::agent::{Agent, AgentOptions};
use soccer_common::{simrob, Proc, GUARD};

fn root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn humanoid(id: u32, team: &str, x: f64, y: f64, heading: f64) -> String {
    format!(
        "<Message><Simulation_Message><Control_Request Command=\"Create_Entity\" Type=\"Humanoid\"><Data><Entity_id>{id}</Entity_id><Team>{team}</Team><Position_X>{x}</Position_X><Position_Y>{y}</Position_Y><Heading>{heading}</Heading><Profile>ideal</Profile><Seed>7</Seed></Data></Control_Request></Simulation_Message></Message>\n"
    )
}

#[test]
fn the_field_player_kicks_towards_the_goal_and_the_keeper_tracks_the_ball() {
    let dir = std::env::temp_dir().join(format!("simrob-soccer-e2e-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The KidSize field and ball, the ball moved to the penalty mark in front of the magenta
    // goal (+X), a cyan field player 40 cm behind it turned 30° away, the magenta keeper.
    let mut scenario =
        std::fs::read_to_string(root().join("scenarios/soccer/kidsize.xml")).unwrap();
    scenario.push_str("<Message><Simulation_Message><Entity_Request Command=\"Set_Entity_Position\"><Entity_Id>2</Entity_Id><Position_X>2.7</Position_X><Position_Y>0</Position_Y><Position_Z>0.05</Position_Z></Entity_Request></Simulation_Message></Message>\n");
    scenario.push_str(&humanoid(22, "cyan", 2.3, 0.05, 30f64.to_radians()));
    scenario.push_str(&humanoid(31, "magenta", 4.2, 0.0, std::f64::consts::PI));
    std::fs::write(dir.join("penalty.xml"), scenario).unwrap();
    let rules = root().join("scenarios/soccer/rules");
    let port = 40_000 + (std::process::id() % 5000) as u16 * 2;
    for (name, id, role, rules_file, entity, comm) in [
        ("kicker", 2, 2, "field_player.xml", 22, port),
        ("keeper", 1, 1, "goalkeeper.xml", 31, port + 1),
    ] {
        std::fs::write(
            dir.join(format!("{name}.config")),
            format!(
                "[robot_profile]\nid={id}\nrole={role}\nlogEnabled=0\nrules={}\nentityId={entity}\ncommPort={comm}\n",
                rules.join(rules_file).display()
            ),
        )
        .unwrap();
    }
    let mut server = Proc::start(
        simrob()
            .arg("serve")
            .args(["--port", "0", "--speed", "1", "--scenario"])
            .arg(dir.join("penalty.xml")),
    );
    let line = server.wait_for("listening on udp://");
    let addr = line
        .split("udp://")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    // An observer that watches the ball.
    let mut eye = Agent::connect(addr.parse().unwrap()).unwrap();
    eye.register("watcher", AgentOptions::default()).unwrap();
    let ball = |eye: &mut Agent| -> [f64; 3] {
        let deadline = Instant::now() + GUARD;
        loop {
            assert!(Instant::now() < deadline, "no broadcast with the ball");
            if let Some(b) = eye.next_broadcast(Duration::from_secs(5)).unwrap() {
                if let Some(e) = b.entities.iter().find(|e| e.entity_id == EntityId(2)) {
                    return e.position;
                }
            }
        }
    };
    let start = ball(&mut eye);
    let player = |config: &str| {
        Proc::start(
            simrob()
                .args([
                    "soccer",
                    "player",
                    "--ideal-camera",
                    "--server",
                    &addr,
                    "--robot-config",
                ])
                .arg(dir.join(config)),
        )
    };
    let mut kicker = player("kicker.config");
    let mut keeper = player("keeper.config");
    kicker.wait_for("robot 2: brain of humanoid 22");
    keeper.wait_for("robot 1: brain of humanoid 31");
    // The field player finds the ball, walks to it, finds the goal and kicks.
    kicker.wait_for("robot 2: action findBall");
    kicker.wait_for("robot 2: action followBall");
    kicker.wait_for("robot 2: action kickBall");
    // The ball leaves towards the goal.
    let deadline = Instant::now() + GUARD;
    let mut moved = start;
    while Instant::now() < deadline {
        moved = ball(&mut eye);
        if moved[0] - start[0] > 0.5 {
            break;
        }
    }
    kicker.drain();
    let (dx, dy) = (moved[0] - start[0], moved[1] - start[1]);
    assert!(
        dx > 0.5,
        "the ball went {dx:.2} m along X; kicker:\n{}",
        kicker.seen.join("\n")
    );
    let y_at_goal = start[1] + dy / dx * (4.5 - start[0]);
    assert!(
        y_at_goal.abs() < 1.2,
        "aimed at y = {y_at_goal:.2} m on the goal line"
    );
    // The keeper watched it: it looked at the ball and went to save it.
    keeper.drain();
    assert!(
        keeper
            .seen
            .iter()
            .any(|l| l.contains("action lookAtBall") || l.contains("action save")),
        "keeper:\n{}",
        keeper.seen.join("\n")
    );
}
