//! Clients that come and go over real TCP on 127.0.0.1: silent connections that fill the
//! server and make room for a newcomer, a client that disconnects and connects again, a
//! connection the server cuts or that stalls. Each waits for the server's event (a line, the
//! end of the stream, the robot count), never for time to pass.

use crate::common;

use std::io::{BufRead, Read};
use std::net::TcpListener;
use std::time::Duration;

use common::{robot_count_hook, Conn};

use simrob_mrs::flat::{FlatPose, Map};
use simrob_mrs::{
    MrsClient, MrsConfig, MrsCore, MrsError, MrsServer, NoFiles, ShellHook, ShellOptions,
    EXAMPLE_MAP,
};

const START: (f64, f64) = (150.0, 130.0);

fn server(max_clients: usize, options: ShellOptions, hook: ShellHook) -> simrob_mrs::MrsHandle {
    let core = MrsCore::new(
        Map::parse_vector(EXAMPLE_MAP).expect("map"),
        MrsConfig {
            start: Some(FlatPose::new(START.0, START.1, 0.0)),
            stepped: true,
            max_clients,
            ..MrsConfig::default()
        },
    );
    MrsServer::bind("127.0.0.1:0", core, Box::new(NoFiles), options)
        .expect("bind")
        .with_hook(hook)
        .spawn()
        .expect("spawn")
}

/// Waits (failure guard: the channel's 60 s) until the server holds `n` robots.
fn wait_for_robots(counts: &std::sync::mpsc::Receiver<usize>, n: usize) {
    loop {
        let c = counts
            .recv_timeout(Duration::from_secs(60))
            .expect("robot count");
        if c == n {
            return;
        }
    }
}

#[test]
fn sixty_four_silent_connections_make_room_for_a_newcomer() {
    let (hook, counts) = robot_count_hook();
    let h = server(
        64,
        ShellOptions {
            idle_timeout: None,
            make_room_after: Some(Duration::ZERO),
            ..ShellOptions::default()
        },
        hook,
    );
    let mut silent: Vec<Conn> = (0..64).map(|_| Conn::open(h.addr())).collect();
    wait_for_robots(&counts, 64);
    // A real client gets in and works.
    let mut robot = MrsClient::connect_addr(h.addr()).expect("connect");
    robot.set_vel(10.0, 0.0).expect("set_vel");
    robot.step(10).expect("step");
    robot.get_pos().expect("pos");
    robot.get_sonars().expect("sonars");
    // The first silent connection (silent longest) was told why and closed; the others stay.
    let mut line = String::new();
    silent[0].reader.read_line(&mut line).expect("farewell");
    assert!(
        line.starts_with("E closing: the server is full"),
        "{line:?}"
    );
    let mut rest = Vec::new();
    silent[0].reader.read_to_end(&mut rest).expect("end");
    assert!(rest.is_empty());
    assert!(silent[1].ask("B").starts_with('B'));
    let core = h.stop().expect("stop");
    assert_eq!(core.world().robot_count(), 64);
}

#[test]
fn a_full_server_keeps_clients_that_spoke_within_the_grace() {
    let (hook, counts) = robot_count_hook();
    let h = server(
        2,
        ShellOptions {
            make_room_after: Some(Duration::from_secs(3600)),
            ..ShellOptions::default()
        },
        hook,
    );
    let mut kept: Vec<Conn> = (0..2).map(|_| Conn::open(h.addr())).collect();
    wait_for_robots(&counts, 2);
    let mut refused = Conn::open(h.addr());
    let mut line = String::new();
    refused.reader.read_line(&mut line).expect("refusal");
    assert!(line.starts_with("E ") && line.contains("full"), "{line}");
    for c in &mut kept {
        assert!(c.ask("B").starts_with('B'));
    }
}

#[test]
fn a_client_that_disconnects_and_connects_again_gets_a_fresh_robot() {
    let (hook, counts) = robot_count_hook();
    let h = server(64, ShellOptions::default(), hook);
    let mut robot = MrsClient::connect_addr(h.addr()).expect("connect");
    wait_for_robots(&counts, 1);
    robot.place(60.0, 60.0, 90.0).expect("place");
    assert_eq!(robot.get_pos().expect("pos"), (60.0, 60.0, 90.0));
    robot.disconnect().expect("disconnect");
    wait_for_robots(&counts, 0);
    // The next run of the controller: a new connection, a robot at the start again.
    let mut again = MrsClient::connect_addr(h.addr()).expect("connect again");
    assert_eq!(again.get_pos().expect("pos"), (START.0, START.1, 0.0));
    again.set_vel(5.0, 0.0).expect("set_vel");
    again.step(5).expect("step");
    assert!(again.get_pos().expect("pos").0 > START.0);
    let core = h.stop().expect("stop");
    assert_eq!(core.world().robot_count(), 1);
}

#[test]
fn a_connection_the_server_cuts_is_noticed_and_the_client_reconnects() {
    let (hook, counts) = robot_count_hook();
    let h = server(
        64,
        ShellOptions {
            idle_timeout: Some(Duration::from_millis(50)),
            ..ShellOptions::default()
        },
        hook,
    );
    let mut robot = MrsClient::connect_addr(h.addr()).expect("connect");
    wait_for_robots(&counts, 1);
    // The server closes the idle connection (the robot goes): the next request says so.
    wait_for_robots(&counts, 0);
    let e = robot.get_pos().expect_err("closed");
    assert!(
        matches!(e, MrsError::ClosedBecause(ref why) if why.contains("nothing received")),
        "{e}"
    );
    assert!(e.to_string().contains("reconnect"), "{e}");
    assert!(matches!(robot.stop(), Err(MrsError::GivenUp(_))));
    robot.reconnect().expect("reconnect");
    assert_eq!(robot.get_pos().expect("pos"), (START.0, START.1, 0.0));
}

#[test]
fn a_stalled_server_gives_a_clear_timeout_and_the_connection_is_given_up() {
    // A listener that accepts and never answers: the connection stalls.
    let stalled = TcpListener::bind("127.0.0.1:0").expect("bind");
    let mut robot = MrsClient::connect_addr(stalled.local_addr().expect("addr")).expect("connect");
    let (_held, _) = stalled.accept().expect("accept");
    robot
        .set_timeout(Some(Duration::from_millis(100)))
        .expect("timeout");
    let e = robot.get_pos().expect_err("no reply");
    assert!(
        matches!(e, MrsError::TimedOut { ref request, .. } if request == "P"),
        "{e}"
    );
    assert!(e.to_string().contains("within 0.1 s"), "{e}");
    // A late reply must not be taken for the next request's.
    assert!(matches!(robot.get_pos(), Err(MrsError::GivenUp(_))));
}
