//! The wandering controller as the `mrs_wander` example runs it: the example map, the
//! server's default start, 300 simulated seconds at 10 Hz. It must keep moving (it once
//! stood still from t = 40 s, dithering left and right in front of a wall's end) and never
//! touch anything.

use simrob_mrs::flat::Map;
use simrob_mrs::wander::Wander;
use simrob_mrs::{MrsClient, EXAMPLE_MAP};

use crate::stepped::serve_stepped;

#[test]
fn wanders_300_simulated_seconds_from_the_default_start() {
    let server = serve_stepped(Map::parse_vector(EXAMPLE_MAP).expect("example map"), None);
    let mut robot = MrsClient::connect(&server.addr().to_string()).expect("connect");
    let mut ctl = Wander::default();
    let (mut x, mut y, _) = robot.get_pos().expect("P");
    let mut window = 0.0;
    for cycle in 1..=3000 {
        let sonars = robot.get_sonars().expect("sonars");
        let (v, w) = ctl.command(&sonars);
        robot.set_vel(v, w).expect("V");
        robot.step(10).expect("step");
        assert!(!robot.get_bumper().expect("B"), "touched at cycle {cycle}");
        let (nx, ny, _) = robot.get_pos().expect("P");
        window += (nx - x).hypot(ny - y);
        (x, y) = (nx, ny);
        // Every 20 simulated seconds it has gone somewhere.
        if cycle % 200 == 0 {
            assert!(
                window > 40.0,
                "only {window:.1} in travelled in the 20 s before t = {} s",
                cycle / 10
            );
            window = 0.0;
        }
    }
    server.stop().expect("stop");
}
