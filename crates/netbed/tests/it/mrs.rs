//! The Mobile Robot Simulator over a TCP link that slows down, stalls and is cut: the client
//! notices (a clear timeout, a closed connection) and gets going again by reconnecting.

use std::time::Duration;

use simrob_mrs::flat::{FlatPose, Map};
use simrob_mrs::{MrsClient, MrsError};
use simrob_netbed::TcpRelay;

#[path = "../../../mrs/tests/it/stepped.rs"]
mod stepped;

fn server() -> simrob_mrs::MrsHandle {
    stepped::serve_stepped(
        Map::parse_vector(simrob_mrs::EXAMPLE_MAP).expect("map"),
        Some(FlatPose::new(150.0, 130.0, 0.0)),
    )
}

#[test]
fn a_slow_link_only_slows_the_replies() {
    let h = server();
    let relay = TcpRelay::start(h.addr()).expect("relay");
    relay.set_delay(Duration::from_millis(5));
    let mut robot = MrsClient::connect_addr(relay.addr()).expect("connect");
    robot.set_vel(10.0, 0.0).expect("set_vel");
    robot.step(10).expect("step");
    assert!(robot.get_pos().expect("pos").0 > 150.0);
}

#[test]
fn a_stalled_link_gives_a_clear_timeout_and_a_reconnect_recovers() {
    let h = server();
    let relay = TcpRelay::start(h.addr()).expect("relay");
    let mut robot = MrsClient::connect_addr(relay.addr()).expect("connect");
    assert_eq!(robot.get_pos().expect("pos").0, 150.0);
    relay.stall(true);
    robot
        .set_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let e = robot.get_sonars().expect_err("stalled");
    assert!(matches!(e, MrsError::TimedOut { .. }), "{e}");
    relay.stall(false);
    relay.cut();
    robot
        .set_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    robot.reconnect().expect("reconnect");
    robot.get_sonars().expect("sonars after reconnecting");
}

#[test]
fn a_cut_connection_is_noticed_and_a_reconnect_recovers() {
    let h = server();
    let relay = TcpRelay::start(h.addr()).expect("relay");
    let mut robot = MrsClient::connect_addr(relay.addr()).expect("connect");
    robot.place(60.0, 60.0, 0.0).expect("place");
    relay.cut();
    let e = robot.get_pos().expect_err("cut");
    assert!(matches!(e, MrsError::Closed | MrsError::Io(_)), "{e}");
    robot.reconnect().expect("reconnect");
    // A new robot at the start: the old one went with its connection.
    assert_eq!(robot.get_pos().expect("pos"), (150.0, 130.0, 0.0));
    assert_eq!(relay.stats().connections, 2);
    assert_eq!(relay.stats().cut, 1);
}
