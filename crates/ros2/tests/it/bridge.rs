//! The bridge's logic, driven by frames of simulated time.

use simrob_ros2::bridge::*;
use simrob_ros2::msg::{Odometry, PoseStamped, Twist, Vector3};

fn robot(name: &str, id: u64, x: f64, yaw: f64) -> RobotFrame {
    RobotFrame {
        name: name.into(),
        id,
        position: [x, 0.0, 0.0],
        rotation: [0.0, 0.0, yaw],
        linear_velocity: None,
        angular_velocity: None,
        takes_cmd_vel: true,
        drive: Some(DiffDrive {
            wheel_radius: 0.05,
            separation: 0.2,
            joints: [1, 0],
            sign: -1.0,
        }),
        sonars: None,
        bumpers: None,
    }
}

fn frame(t: f64, robots: Vec<RobotFrame>) -> Frame {
    Frame { time: t, robots }
}

fn odoms(outs: &[Out]) -> usize {
    outs.iter()
        .filter(|o| matches!(o, Out::Odom { .. }))
        .count()
}

/// The first odometry message of a step.
fn first_odom(outs: &[Out]) -> &Odometry {
    outs.iter()
        .find_map(|o| match o {
            Out::Odom { msg, .. } => Some(&**msg),
            _ => None,
        })
        .expect("odom")
}

#[test]
fn robots_appear_and_disappear_with_their_topics() {
    let mut b = Bridge::new(Rates::default());
    let outs = b.step(&frame(0.0, vec![robot("a", 1, 0.0, 0.0)]));
    assert!(outs
        .iter()
        .any(|o| matches!(o, Out::Appeared { robot, drive: true, .. } if robot == "a")));
    assert!(outs.iter().any(|o| matches!(o, Out::TfStatic(_))));
    let outs = b.step(&frame(
        0.01,
        vec![robot("a", 1, 0.0, 0.0), robot("b", 2, 0.0, 0.0)],
    ));
    assert!(outs
        .iter()
        .any(|o| matches!(o, Out::Appeared { robot, .. } if robot == "b")));
    // The static transforms always carry every robot (keep-last-1 on /tf_static).
    let statics = outs.iter().find_map(|o| match o {
        Out::TfStatic(t) => Some(t.transforms.len()),
        _ => None,
    });
    assert_eq!(statics, Some(2));
    let outs = b.step(&frame(0.02, vec![robot("b", 2, 0.0, 0.0)]));
    assert!(outs
        .iter()
        .any(|o| matches!(o, Out::Gone { robot } if robot == "a")));
    // ...and without a robot that has gone.
    let statics = |outs: &[Out]| {
        outs.iter().find_map(|o| match o {
            Out::TfStatic(t) => Some(
                t.transforms
                    .iter()
                    .map(|t| t.child_frame_id.clone())
                    .collect::<Vec<_>>(),
            ),
            _ => None,
        })
    };
    assert_eq!(statics(&outs), Some(vec!["b/odom".to_string()]));
    assert_eq!(statics(&b.step(&frame(0.03, vec![]))), Some(vec![]));
    b.step(&frame(0.04, vec![robot("b", 2, 0.0, 0.0)]));
    assert_eq!(b.robots().collect::<Vec<_>>(), ["b"]);
    assert!(
        !b.cmd_vel("a", Twist::default()),
        "a gone robot takes nothing"
    );
}

#[test]
fn odometry_comes_at_its_rate_in_simulated_time() {
    let mut b = Bridge::new(Rates {
        clock: 0.0,
        odom: 50.0,
        sensors: 10.0,
    });
    let mut odom = 0;
    let mut clocks = 0;
    // 1 simulated second at 1 ms per frame.
    for i in 0..1000 {
        let outs = b.step(&frame(i as f64 * 0.001, vec![robot("a", 1, 0.0, 0.0)]));
        odom += odoms(&outs);
        clocks += outs.iter().filter(|o| matches!(o, Out::Clock(_))).count();
    }
    assert_eq!(odom, 50);
    assert_eq!(clocks, 1000);
}

#[test]
fn odometry_twist_is_in_the_robot_frame() {
    let mut b = Bridge::new(Rates {
        odom: 0.0,
        ..Rates::default()
    });
    let mut r = robot("a", 1, 0.0, std::f64::consts::FRAC_PI_2);
    // Moving along world +y while facing +y: forward in its own frame.
    r.linear_velocity = Some([0.0, 0.3, 0.0]);
    r.angular_velocity = Some([0.0, 0.0, 0.5]);
    let outs = b.step(&frame(0.0, vec![r]));
    let o = first_odom(&outs);
    assert!((o.twist.twist.linear.x - 0.3).abs() < 1e-12);
    assert!(o.twist.twist.linear.y.abs() < 1e-12);
    assert!((o.twist.twist.angular.z - 0.5).abs() < 1e-12);
    assert_eq!(o.header.frame_id, "a/odom");
    assert_eq!(o.child_frame_id, "a/base_link");
    assert!((o.pose.pose.orientation.yaw() - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
}

#[test]
fn without_velocities_the_bridge_differentiates_poses() {
    let mut b = Bridge::new(Rates {
        odom: 0.0,
        ..Rates::default()
    });
    b.step(&frame(1.0, vec![robot("a", 1, 0.0, 0.0)]));
    let outs = b.step(&frame(1.5, vec![robot("a", 1, 0.25, 0.1)]));
    let o = first_odom(&outs);
    assert!((o.twist.twist.angular.z - 0.2).abs() < 1e-9);
    assert!(o.twist.twist.linear.x > 0.49);
}

#[test]
fn a_cmd_vel_flood_keeps_only_the_latest() {
    let mut b = Bridge::new(Rates::default());
    b.step(&frame(0.0, vec![robot("a", 1, 0.0, 0.0)]));
    for i in 0..10_000 {
        let t = Twist {
            linear: Vector3 {
                x: i as f64 * 1e-5,
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(b.cmd_vel("a", t));
    }
    let cmds = b.take_commands();
    assert_eq!(cmds.len(), 1);
    assert_eq!(b.superseded(), 9_999);
    let Command::Wheels { id, speeds, .. } = &cmds[0] else {
        panic!("{cmds:?}")
    };
    assert_eq!(*id, 1);
    // v = 0.09999 m/s on 5 cm wheels: 1.9998 rad/s, negated (joint axes along +y).
    assert_eq!(speeds.len(), 2);
    for (_, s) in speeds {
        assert!((s + 0.09999 / 0.05).abs() < 1e-9, "{speeds:?}");
    }
    assert!(b.take_commands().is_empty());
}

#[test]
fn turning_spins_the_wheels_apart_and_bad_numbers_are_refused() {
    let d = DiffDrive {
        wheel_radius: 0.05,
        separation: 0.2,
        joints: [1, 0],
        sign: 1.0,
    };
    let [l, r] = d.wheel_speeds(0.0, 1.0);
    assert!((l + 2.0).abs() < 1e-12 && (r - 2.0).abs() < 1e-12);
    let mut b = Bridge::new(Rates::default());
    b.step(&frame(0.0, vec![robot("a", 1, 0.0, 0.0)]));
    let nan = Twist {
        linear: Vector3 {
            x: f64::NAN,
            ..Default::default()
        },
        ..Default::default()
    };
    assert!(!b.cmd_vel("a", nan));
    assert!(!b.cmd_vel("nobody", Twist::default()));
    assert!(!b.wheel_speeds("a", vec![1.0, f64::INFINITY]));
    assert!(b.take_commands().is_empty());
    assert!(b.wheel_speeds("a", vec![1.0, 2.0]));
    assert_eq!(
        b.take_commands(),
        [Command::Wheels {
            id: 1,
            speeds: vec![(1, -1.0), (0, -2.0)],
            from: simrob_ros2::bridge::Sent::Wheels(vec![1.0, 2.0])
        }]
    );
}

#[test]
fn lockstep_waits_for_every_driven_robot() {
    let mut b = Bridge::new(Rates::default());
    b.step(&frame(
        0.0,
        vec![robot("a", 1, 0.0, 0.0), robot("b", 2, 0.0, 0.0)],
    ));
    assert!(!b.all_commanded());
    b.cmd_vel("a", Twist::default());
    assert!(!b.all_commanded());
    b.cmd_vel("b", Twist::default());
    assert!(b.all_commanded());
    b.take_commands();
    assert!(!b.all_commanded());
}

#[test]
fn goals_and_sonars() {
    let mut b = Bridge::new(Rates {
        sensors: 0.0,
        ..Rates::default()
    });
    let mut r = robot("n", 7, 0.0, 0.0);
    r.takes_cmd_vel = false;
    r.drive = None;
    r.sonars = Some(RangeRing {
        headings: (0..4)
            .map(|i| -(i as f64) * std::f64::consts::FRAC_PI_2)
            .collect(),
        radius: 0.25,
        height: 0.0,
        ranges: vec![1.0, 2.0, 3.0, 4.0],
        field_of_view: 0.4,
        min_range: 0.1,
        max_range: 2.8,
    });
    let outs = b.step(&frame(0.0, vec![r]));
    let (ranges, scan) = outs
        .iter()
        .find_map(|o| match o {
            Out::Sonars { ranges, scan, .. } => Some((ranges, scan)),
            _ => None,
        })
        .expect("sonars");
    assert_eq!(ranges.len(), 4);
    assert_eq!(ranges[1].range, 2.0);
    assert_eq!(ranges[1].header.frame_id, "n/sonar_1");
    // Counter-clockwise from 0: sonar 0 (ahead), then 3 (left, at +90°), 2, 1; from the
    // centre.
    assert_eq!(scan.ranges, [1.25, 4.25, 3.25, 2.25]);
    assert_eq!(scan.angle_min, 0.0);
    assert!(!b.cmd_vel("n", Twist::default()), "no cmd_vel without one");
    let mut g = PoseStamped::default();
    g.pose.position.x = 3.0;
    g.pose.position.y = -1.0;
    assert_eq!(b.goal("n", g.clone()), Ok(()));
    // In the world frame, or an empty one; no other.
    g.header.frame_id = "map".into();
    assert_eq!(
        b.goal("n", g.clone()),
        Err(simrob_ros2::bridge::GoalRefused::Frame("map".into()))
    );
    g.header.frame_id = "world".into();
    assert_eq!(b.goal("n", g.clone()), Ok(()));
    let mut bad = g.clone();
    bad.pose.position.x = f64::NAN;
    assert_eq!(
        b.goal("n", bad),
        Err(simrob_ros2::bridge::GoalRefused::NotFinite)
    );
    assert_eq!(
        b.take_commands(),
        [Command::Goal {
            id: 7,
            x: 3.0,
            y: -1.0
        }]
    );
}

#[test]
fn a_paused_world_repeats_its_state_whatever_the_rates() {
    let mut b = Bridge::new(Rates {
        clock: 1.0,
        odom: 1.0,
        sensors: 1.0,
    });
    let f = frame(0.5, vec![robot("a", 1, 0.0, 0.0)]);
    b.step(&f);
    // Not due again for a simulated second...
    assert_eq!(odoms(&b.step(&f)), 0);
    // ...but repeated on demand, with the same stamp.
    let outs = b.repeat(&f);
    assert_eq!(odoms(&outs), 1);
    assert!(outs
        .iter()
        .any(|o| matches!(o, Out::Clock(c) if c.clock.nanosec == 500_000_000)));
}

#[test]
fn after_a_jump_back_in_time_everything_is_published_from_then_on() {
    let mut b = Bridge::new(Rates {
        clock: 10.0,
        odom: 50.0,
        sensors: 10.0,
    });
    let a = || vec![robot("a", 1, 0.0, 0.0)];
    // 41.8 simulated seconds at 10 ms per frame.
    for i in 0..=4180 {
        b.step(&frame(i as f64 * 0.01, a()));
    }
    // A load: the world is back at 2.38 s. Odometry, /tf and /clock go on at their rates
    // from there, not once the old time comes round again.
    assert!(b.needs_frame(2.38), "the frame is built after the jump");
    let (mut odom, mut tf, mut clocks) = (0, 0, 0);
    for i in 238..338 {
        let t = i as f64 * 0.01;
        let outs = if b.needs_frame(t) {
            b.step(&frame(t, a()))
        } else {
            b.clock_only(t)
        };
        odom += odoms(&outs);
        tf += outs.iter().filter(|o| matches!(o, Out::Tf(_))).count();
        clocks += outs.iter().filter(|o| matches!(o, Out::Clock(_))).count();
    }
    assert_eq!((odom, tf, clocks), (50, 50, 10));
}

#[test]
fn lockstep_makes_one_step_per_step_message() {
    let mut l = Lockstep::default();
    // Five messages together, before the world has shown anything: they wait.
    assert!(!l.step(None, 5, false));
    let mut steps = 0;
    for it in 0..10 {
        // Each iteration shown once or twice (a repeat): at most one step from it.
        steps += usize::from(l.step(Some(it), 0, false));
        assert!(!l.step(Some(it), 0, false));
    }
    assert_eq!((steps, l.owed()), (5, 0));
    // Messages that arrive while a step is under way are kept for the next iterations.
    assert!(l.step(Some(10), 1, false));
    assert!(!l.step(Some(10), 2, false));
    assert!(l.step(Some(11), 0, false));
    assert!(l.step(Some(12), 0, false));
    assert!(!l.step(Some(13), 0, false));
    // Every driven robot commanded: one step.
    assert!(l.step(Some(13), 0, true));
    assert!(!l.step(Some(13), 0, true));
}
