//! The Mobile Robot Simulator client against a real server on 127.0.0.1: every call of the
//! seed, errors, several clients, and the wandering controller for minutes of simulated time.

use crate::common::{serve_counting_robots, wait_for_robots};
use crate::stepped::serve_stepped;
use simrob_mrs::flat::{FlatPose, Map};
use simrob_mrs::wander::Wander;
use simrob_mrs::EXAMPLE_MAP;
use simrob_mrs::{MrsClient, MrsError};

fn example() -> Map {
    Map::parse_vector(EXAMPLE_MAP).expect("example")
}

#[test]
fn the_seed_calls() {
    let (h, robots) = serve_counting_robots(example(), FlatPose::new(150.0, 130.0, 270.0));
    let mut robot = MrsClient::connect(&h.addr().to_string()).expect("connect");
    robot.show_message("Hello world!").expect("M");
    assert_eq!(robot.get_pos().expect("P"), (150.0, 130.0, 270.0));
    // Heading 270 (up): sonar 0 sees the wall face y = 103: 27 - 10.
    assert_eq!(robot.get_sonar(0).expect("S"), 17);
    assert!(!robot.get_bumper().expect("B"));
    assert_eq!(robot.get_bumper_rel().expect("R"), None);
    robot.set_vel(10.0, 0.0).expect("V");
    robot.step(300).expect("#STEP");
    assert!(robot.get_bumper().expect("B"));
    assert_eq!(robot.get_bumper_rel().expect("R"), Some(0));
    assert_eq!(robot.get_pos().expect("P"), (150.0, 113.0, 270.0));
    assert_eq!(robot.get_sonar(0).expect("S"), 5);
    robot.set_vel(10.0, -30.0).expect("V");
    robot.set_vel(10.0, 30.0).expect("V");
    robot.stop().expect("A");
    let s = robot.get_sonars().expect("#SONARS");
    assert_eq!(s[0], 5);
    let b = robot.get_bumpers().expect("#BUMPERS");
    assert!(b[0] && b.iter().filter(|&&x| x).count() == 1);
    robot.place(150.0, 130.0, 90.0).expect("#PLACE");
    assert_eq!(robot.get_pos().expect("P"), (150.0, 130.0, 90.0));
    // Errors are reported, the connection stays usable.
    assert!(matches!(robot.get_sonar(16), Err(MrsError::BadArgument(_))));
    assert!(matches!(
        robot.place(0.0, 0.0, 0.0),
        Err(MrsError::Refused { .. })
    ));
    assert!(matches!(
        robot.request("S99"),
        Err(MrsError::Refused { .. })
    ));
    assert!(matches!(
        robot.request("A\nB"),
        Err(MrsError::BadArgument(_))
    ));
    assert!(matches!(
        robot.set_vel(f64::NAN, 0.0),
        Err(MrsError::BadArgument(_))
    ));
    assert_eq!(robot.get_pos().expect("P"), (150.0, 130.0, 90.0));
    robot.disconnect().expect("disconnect");
    // The server sees the close on its next poll; stopping it before then would leave the
    // robot in place, so wait until its thread reports the world without robots.
    wait_for_robots(&robots, 0);
    let core = h.stop().expect("stop");
    assert_eq!(core.messages().len(), 0, "the robot left with its message");
}

#[test]
fn clients_get_their_own_robots() {
    let h = serve_stepped(example(), Some(FlatPose::new(150.0, 130.0, 0.0)));
    let mut a = MrsClient::connect(&h.addr().to_string()).expect("a");
    let (ax, ay, _) = a.get_pos().expect("P");
    let mut b = MrsClient::connect(&h.addr().to_string()).expect("b");
    let (bx, by, _) = b.get_pos().expect("P");
    assert_eq!((ax, ay), (150.0, 130.0));
    assert!((bx - ax).hypot(by - ay) >= 20.0, "robots do not overlap");
    // a sees b with some sonar at its surface distance.
    let d = (bx - ax).hypot(by - ay) - 20.0;
    let s = a.get_sonars().expect("sonars");
    assert!(
        s.iter().any(|&r| (f64::from(r) - d.max(5.0)).abs() <= 1.0),
        "{s:?} {d}"
    );
    h.stop().expect("stop");
}

/// The wandering controller drives for `minutes` of simulated time at 10 Hz and must never
/// touch anything.
fn wander_without_touching(map: Map, start: FlatPose, minutes: u32) -> f64 {
    let h = serve_stepped(map, Some(start));
    let mut robot = MrsClient::connect(&h.addr().to_string()).expect("connect");
    let mut ctl = Wander::default();
    let mut travelled = 0.0;
    let (mut x, mut y, _) = robot.get_pos().expect("P");
    for _ in 0..minutes * 600 {
        let sonars = robot.get_sonars().expect("sonars");
        let (v, w) = ctl.command(&sonars);
        robot.set_vel(v, w).expect("V");
        robot.step(10).expect("step");
        assert!(
            !robot.get_bumper().expect("B"),
            "touched at {:?}",
            robot.get_pos()
        );
        let (nx, ny, _) = robot.get_pos().expect("P");
        travelled += (nx - x).hypot(ny - y);
        (x, y) = (nx, ny);
    }
    h.stop().expect("stop");
    travelled
}

#[test]
fn wandering_for_minutes_never_touches_a_wall() {
    // 3 simulated minutes in the seed's example environment…
    let d = wander_without_touching(example(), FlatPose::new(150.0, 130.0, 0.0), 3);
    assert!(d > 500.0, "it wandered {d} in");
    // … and 2 in the bitmap arena with round pillars.
    let arena = Map::from_bmp(include_bytes!("../../../../maps/arena.bmp")).expect("arena");
    let d = wander_without_touching(arena, FlatPose::new(200.0, 150.0, 30.0), 2);
    assert!(d > 500.0, "it wandered {d} in");
}
