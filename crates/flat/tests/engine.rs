//! The engine against hand-computed geometry, on the seed's 300×300 example environment in
//! both map kinds.

use simrob_flat::{
    bumper_mask, sonar_reading, Bitmap, FlatPose, FlatWorld, Map, MapError, Ray, Rect, RobotModel,
    Vec2, Velocity,
};

const EXAMPLE: &str = include_str!("../../../maps/example.txt");
const EXAMPLE_BMP: &[u8] = include_bytes!("../../../maps/example.bmp");
const NOMAD: RobotModel = RobotModel::NOMAD_200;

fn vector() -> Map {
    Map::parse_vector(EXAMPLE).expect("example map")
}

fn bitmap() -> Map {
    Map::from_bmp(EXAMPLE_BMP).expect("example bitmap")
}

fn both() -> [(&'static str, Map); 2] {
    [("vector", vector()), ("bitmap", bitmap())]
}

#[test]
fn the_seed_example_loads() {
    let m = vector();
    assert_eq!((m.width(), m.height()), (300.0, 300.0));
    assert_eq!(m.rects().len(), 10);
    assert_eq!(m.rects()[0], Rect::new(0.0, 0.0, 300.0, 1.0));
    let b = bitmap();
    assert_eq!((b.width(), b.height()), (300.0, 300.0));
    assert!(b
        .bitmap()
        .is_some_and(|bm| bm.get(0, 0) && !bm.get(150, 150)));
    // from_bytes tells the two kinds apart.
    assert!(Map::from_bytes(EXAMPLE_BMP).is_ok_and(|m| m.bitmap().is_some()));
    assert!(Map::from_bytes(EXAMPLE.as_bytes()).is_ok_and(|m| m.rects().len() == 10));
}

#[test]
fn sonar_readings_match_hand_computed_distances() {
    let s2 = std::f64::consts::SQRT_2;
    // (pose, sonar, expected reading from the robot's surface)
    let cases = [
        // Up (sonar 12 at heading 0 = 270°): wall 50 98 250 103, bottom face y = 103.
        (FlatPose::new(150.0, 130.0, 0.0), 12, 130.0 - 103.0 - 10.0),
        // Down-right (45°): face x = 200 of 200 155 205 250, met at y = 180.
        (FlatPose::new(150.0, 130.0, 0.0), 2, 50.0 * s2 - 10.0),
        // Down-left (135°): face x = 105 of 100 155 105 250, met at y = 175.
        (FlatPose::new(150.0, 130.0, 0.0), 6, 45.0 * s2 - 10.0),
        // Right: the right wall's face x = 298 is 138 from the centre: clamped to 110.
        (FlatPose::new(150.0, 130.0, 0.0), 0, 110.0),
        // Heading 90 (down): sonar 0 looks down from (150, 130) to y = 298: clamped.
        (FlatPose::new(150.0, 130.0, 90.0), 0, 110.0),
        // Heading 90: sonar 4 looks left (180°): from x = 150 to the face x = 105? No: the
        // wall 100 155 105 250 starts at y = 155, so the left wall x = 1 is met: 149 → 110.
        (FlatPose::new(150.0, 130.0, 90.0), 4, 110.0),
        // Heading 90: sonar 8 looks up: 27 - 10.
        (FlatPose::new(150.0, 130.0, 90.0), 8, 17.0),
        // Close to the left wall (face x = 1): 12 from the centre → 2, clamped to 5.
        (FlatPose::new(13.0, 150.0, 0.0), 8, 5.0),
        // Heading 30, sonar 15 looks at 7.5°; from (20, 250) towards x = 298 at y ≈ 286.6,
        // above the bottom wall (y = 298): 278 / cos 7.5° - 10 ≈ 270 → 110.
        (FlatPose::new(20.0, 250.0, 30.0), 15, 110.0),
        // From (150, 180), sonar 10 at heading 0 looks at 225° (up-left): the bottom face
        // y = 103 of 50 98 250 103 at dx = dy = 77: 77√2 = 108.9 → 98.9.
        (FlatPose::new(150.0, 180.0, 0.0), 10, 77.0 * s2 - 10.0),
        // From (150, 180), sonar 12 straight up to y = 103: 77 - 10.
        (FlatPose::new(150.0, 180.0, 0.0), 12, 67.0),
        // From (60, 180) heading 0, sonar 4 straight down to y = 200 (0 200 100 205): 10.
        (FlatPose::new(60.0, 180.0, 0.0), 4, 10.0),
        // … and sonar 3 (67.5°): 20 / sin 67.5° - 10.
        (
            FlatPose::new(60.0, 180.0, 0.0),
            3,
            20.0 / 67.5f64.to_radians().sin() - 10.0,
        ),
    ];
    for (kind, map) in both() {
        for (pose, i, want) in cases {
            let got = sonar_reading(&map, &NOMAD, &pose, i);
            assert!(
                (got - want).abs() < 0.5,
                "{kind}: pose {pose:?} sonar {i}: got {got}, want {want}"
            );
            assert!((got - want).abs() < 1e-9, "{kind}: exact: {got} vs {want}");
        }
    }
}

#[test]
fn vector_and_bitmap_agree_everywhere() {
    let (v, b) = (vector(), bitmap());
    let mut n = 0;
    for x in (12..290).step_by(7) {
        for y in (12..290).step_by(11) {
            for h in 0..24 {
                let ray = Ray::from_heading(
                    Vec2::new(f64::from(x) + 0.3, f64::from(y) + 0.6),
                    f64::from(h) * 15.0 + 1.0,
                );
                let a = v.cast_ray(&ray, 500.0);
                let c = b.cast_ray(&ray, 500.0);
                match (a, c) {
                    (Some(a), Some(c)) => assert!((a - c).abs() < 1e-6, "{ray:?}: {a} vs {c}"),
                    _ => panic!("{ray:?}: {a:?} vs {c:?}"),
                }
                n += 1;
            }
        }
    }
    assert!(n > 10_000);
}

#[test]
fn ray_cast_matches_brute_force() {
    // Random-ish rectangles, every ray against every rectangle.
    let mut rects = Vec::new();
    let mut s = 12345u64;
    let mut rnd = |m: f64| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64 * m
    };
    for _ in 0..200 {
        let (x, y, w, h) = (rnd(990.0), rnd(990.0), rnd(40.0), rnd(40.0));
        rects.push(Rect::new(x, y, x + w, y + h));
    }
    let map = Map::from_rects(1000.0, 1000.0, rects.clone()).expect("map");
    for _ in 0..5000 {
        let o = Vec2::new(rnd(1000.0), rnd(1000.0));
        let ray = Ray::from_heading(o, rnd(360.0));
        let mut want = f64::INFINITY;
        for r in &rects {
            if let Some(t) = ray.hit_rect(r) {
                want = want.min(t);
            }
        }
        // The border.
        let border = Rect::new(0.0, 0.0, 1000.0, 1000.0);
        let far = ray.at(5000.0);
        let _ = far;
        let bx = if ray.dir.x > 0.0 {
            (border.x2 - o.x) / ray.dir.x
        } else if ray.dir.x < 0.0 {
            -o.x / ray.dir.x
        } else {
            f64::INFINITY
        };
        let by = if ray.dir.y > 0.0 {
            (border.y2 - o.y) / ray.dir.y
        } else if ray.dir.y < 0.0 {
            -o.y / ray.dir.y
        } else {
            f64::INFINITY
        };
        want = want.min(bx).min(by);
        for max in [120.0, 2000.0] {
            let got = map.cast_ray(&ray, max);
            let expect = (want <= max).then_some(want);
            match (got, expect) {
                (Some(g), Some(e)) => assert!((g - e).abs() < 1e-9, "{ray:?}: {g} vs {e}"),
                (None, None) => {}
                _ => panic!("{ray:?} max {max}: {got:?} vs {expect:?}"),
            }
        }
    }
}

#[test]
fn robots_never_pass_through_walls_at_any_speed() {
    for (kind, map) in both() {
        for speed in [1.0, 20.0, 99.9, 1000.0, 100_000.0] {
            for heading in [0.0, 30.0, 90.0, 135.0, 180.0, 250.0, 270.0, 333.0] {
                let mut w = FlatWorld::new(map.clone());
                let id = w
                    .add_robot(NOMAD, FlatPose::new(150.0, 130.0, heading))
                    .expect("free start");
                w.set_velocity(id, Velocity::new(speed, 0.0));
                for _ in 0..300 {
                    w.step();
                    let r = w.robot(id).expect("robot");
                    assert!(
                        !w.map()
                            .disc_overlaps(r.pose.position(), NOMAD.radius - 1e-6),
                        "{kind} speed {speed} heading {heading}: overlaps at {:?}",
                        r.pose
                    );
                }
                let r = w.robot(id).expect("robot");
                // Still in the room it started in: between y = 103 and the walls at 155+.
                assert!(r.pose.y > 103.0 && r.pose.y < 298.0, "{kind}: {:?}", r.pose);
                if speed * 3.0 > 200.0 {
                    assert!(
                        r.blocked,
                        "{kind} {speed} {heading}: not blocked at {:?}",
                        r.pose
                    );
                    assert_ne!(r.bumpers, 0, "{kind}: no bumper closed at {:?}", r.pose);
                }
            }
        }
    }
}

#[test]
fn bumpers_close_on_contact_and_open_when_backing_off() {
    for (kind, map) in both() {
        let mut w = FlatWorld::new(map);
        // Facing up towards the wall 50 98 250 103 (face y = 103).
        let id = w
            .add_robot(NOMAD, FlatPose::new(150.0, 130.0, 270.0))
            .expect("free");
        w.set_velocity(id, Velocity::new(30.0, 0.0));
        for _ in 0..100 {
            w.step();
        }
        let r = w.robot(id).expect("robot").clone();
        assert!((r.pose.y - 113.0).abs() < 1e-3, "{kind}: {:?}", r.pose);
        assert_eq!(r.bumpers, 1, "{kind}: bumper 0 (front) closed");
        assert_eq!(bumper_mask(w.map(), &NOMAD, &r.pose), 1);
        // Turning in place keeps the contact but moves it round the ring: 90° clockwise puts
        // the wall on the robot's left, at bumper 15 (270°).
        w.set_velocity(id, Velocity::new(0.0, 90.0));
        for _ in 0..100 {
            w.step();
        }
        let r = w.robot(id).expect("robot").clone();
        assert!(
            (r.pose.heading_deg - 0.0).abs() < 1e-6 || (r.pose.heading_deg - 360.0).abs() < 1e-6,
            "{:?}",
            r.pose
        );
        assert_eq!(r.bumpers, 1 << 15, "{kind}: {:b}", r.bumpers);
        // Backing off (heading 0 → move left) opens it.
        w.set_velocity(id, Velocity::new(0.0, 0.0));
        w.place_robot(id, FlatPose::new(150.0, 130.0, 0.0))
            .expect("place");
        assert_eq!(w.robot(id).expect("robot").bumpers, 0);
    }
}

#[test]
fn corner_closes_two_bumpers() {
    let map = vector();
    // Into the top-left corner at 225°.
    let mut w = FlatWorld::new(map);
    let id = w
        .add_robot(NOMAD, FlatPose::new(40.0, 40.0, 225.0))
        .expect("free");
    w.set_velocity(id, Velocity::new(50.0, 0.0));
    for _ in 0..200 {
        w.step();
    }
    let r = w.robot(id).expect("robot");
    // Left wall face x = 1 and top wall face y = 1: the robot sits at (11, 11) touching both,
    // at 180° (bumper 17.5 → round: 315°-225°... relative 315 and 45 ) .
    assert!(
        (r.pose.x - 11.0).abs() < 1e-3 && (r.pose.y - 11.0).abs() < 1e-3,
        "{:?}",
        r.pose
    );
    // Contacts at world 180° and 270°; relative to heading 225: 315° and 45° → bumpers
    // 17.5 → 18 and 2.5 → 3 (round half away from zero).
    assert_eq!(r.bumpers, (1 << 18) | (1 << 3), "{:b}", r.bumpers);
}

#[test]
fn merge_adds_obstacles() {
    let mut map = vector();
    let pose = FlatPose::new(150.0, 130.0, 0.0);
    assert_eq!(sonar_reading(&map, &NOMAD, &pose, 0), 110.0);
    let boxes = Map::parse_vector("300 300\n180 120 190 140\n").expect("box");
    map.merge(&boxes).expect("merge");
    assert_eq!(sonar_reading(&map, &NOMAD, &pose, 0), 20.0);
    assert_eq!(map.rects().len(), 11);
    // A bitmap cannot be merged.
    assert_eq!(map.merge(&bitmap()), Err(MapError::MergeBitmap));
    // Merging onto a bitmap works.
    let mut b = bitmap();
    b.merge(&boxes).expect("merge onto bitmap");
    assert_eq!(sonar_reading(&b, &NOMAD, &pose, 0), 20.0);
    // A merged map larger than the map is refused, and the map is unchanged.
    let big = Map::parse_vector("20000 20000\n5000 5000 6000 6000\n").expect("big");
    let e = b.merge(&big).expect_err("larger").to_string();
    assert!(
        e.contains("a 20000 × 20000 in map cannot be merged onto this 300 × 300 in map"),
        "{e}"
    );
    assert_eq!(b.rects().len(), 1);
}

#[test]
fn bad_vector_maps_are_refused_with_the_line() {
    let cases = [
        ("", "empty map"),
        ("300\n", "line 1"),
        ("300 300\n0 0 300\n", "line 2"),
        ("300 300\n0 0 x 1\n", "line 2"),
        ("300 300\n\n0 0 1 1\n5 5 NaN 6", "line 4"),
        ("0 300\n", "map size"),
        ("-5 300\n", "map size"),
        ("1e9 300\n", "map size"),
        ("1e300 300\n", "map size 1e300 x 300: each side"),
        (
            "300 300\n# a comment\n-50 -50 -10 -10\n",
            "line 3: rectangle -50 -50 -10 -10 is not inside the 300 × 300 in map",
        ),
        (
            "300 300\n0 0 300 300\n250 250 400 400\n",
            "line 3: rectangle",
        ),
        ("300 200\n0 0 10 201\n", "line 2: rectangle"),
    ];
    for (text, needle) in cases {
        let e = Map::parse_vector(text).expect_err(text).to_string();
        assert!(e.contains(needle), "{text:?}: {e}");
    }
    assert!(Map::from_bmp(b"BMnot really").is_err());
    assert!(Map::from_bytes(&[0xff, 0xfe, 0x00]).is_err());
}

#[test]
fn a_map_holds_at_most_max_rects_rectangles() {
    use simrob_flat::MAX_RECTS;
    let rects = |n: usize| "10 10 11 11\n".repeat(n);
    let full = Map::parse_vector(&format!("300 300\n{}", rects(MAX_RECTS))).expect("at the limit");
    let e = Map::parse_vector(&format!("300 300\n{}", rects(MAX_RECTS + 1)))
        .expect_err("past it")
        .to_string();
    assert!(e.contains(&format!("at most {MAX_RECTS}")), "{e}");
    // Merged onto a full map, one more is refused and the map is unchanged.
    let mut map = full;
    let one = Map::parse_vector("300 300\n5 5 6 6\n").expect("one");
    assert!(map.merge(&one).is_err());
    assert_eq!(map.rects().len(), MAX_RECTS);
    assert!(!map.disc_overlaps(simrob_flat::geom::Vec2::new(5.5, 5.5), 0.1));
}

#[test]
fn robots_collide_with_and_see_each_other() {
    let mut w = FlatWorld::new(Map::empty(400.0, 400.0).expect("map"));
    let a = w
        .add_robot(NOMAD, FlatPose::new(100.0, 200.0, 0.0))
        .expect("a");
    let b = w
        .add_robot(NOMAD, FlatPose::new(200.0, 200.0, 180.0))
        .expect("b");
    // Overlapping placement is refused.
    assert!(w
        .add_robot(NOMAD, FlatPose::new(110.0, 200.0, 0.0))
        .is_err());
    // Each sees the other's surface: 100 - 10 - 10 = 80.
    assert_eq!(w.sonar(a, 0), Some(80.0));
    assert_eq!(w.sonar(b, 0), Some(80.0));
    w.set_velocity(a, Velocity::new(40.0, 0.0));
    w.set_velocity(b, Velocity::new(40.0, 0.0));
    for _ in 0..300 {
        w.step();
    }
    let (ra, rb) = (w.robot(a).expect("a"), w.robot(b).expect("b"));
    let gap = rb.pose.x - ra.pose.x;
    assert!((gap - 20.0).abs() < 1e-3, "gap {gap}");
    assert_eq!(ra.bumpers, 1);
    assert_eq!(rb.bumpers, 1);
    assert_eq!(w.sonar(a, 0), Some(5.0));
    // Removing one frees the other.
    w.remove_robot(b);
    w.step();
    assert_eq!(w.robot(a).expect("a").bumpers, 0);
}

#[test]
fn same_inputs_same_run() {
    let run = || {
        let mut w = FlatWorld::new(bitmap());
        let mut ids = Vec::new();
        for k in 0..6 {
            let p = w
                .find_free_spot(Vec2::new(150.0, 140.0), 10.0, 100.0)
                .expect("room");
            let id = w
                .add_robot(NOMAD, FlatPose::new(p.x, p.y, f64::from(k) * 60.0))
                .expect("add");
            w.set_velocity(
                id,
                Velocity::new(25.0 + f64::from(k), 13.0 * f64::from(k) - 30.0),
            );
            ids.push(id);
        }
        for _ in 0..2000 {
            w.step();
        }
        ids.iter()
            .map(|&id| {
                let r = w.robot(id).expect("robot");
                (
                    r.pose.x.to_bits(),
                    r.pose.y.to_bits(),
                    r.pose.heading_deg.to_bits(),
                    r.bumpers,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

#[test]
fn bitmap_builder_and_curves() {
    let mut bm = Bitmap::new(100, 100);
    for y in 40..60 {
        for x in 40..60 {
            bm.set(x, y, true);
        }
    }
    assert_eq!(bm.count(), 400);
    let map = Map::from_bitmap(bm).expect("map");
    // From (10, 50) to the right: the block's face x = 40.
    let t = map.cast_ray(&Ray::from_heading(Vec2::new(10.0, 50.5), 0.0), 200.0);
    assert_eq!(t, Some(30.0));
    // Diagonal from (10, 10) at 45°: the block's corner pixel (40, 40) at t = 30√2.
    let t = map
        .cast_ray(&Ray::from_heading(Vec2::new(10.0, 10.0), 45.0), 200.0)
        .expect("hit");
    assert!((t - 30.0 * std::f64::consts::SQRT_2).abs() < 1e-9, "{t}");
}

#[test]
fn bitmap_ray_cast_matches_brute_force() {
    let mut s = 99u64;
    let mut rnd = |m: f64| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64 * m
    };
    let mut bm = Bitmap::new(240, 200);
    for _ in 0..60 {
        let (cx, cy, r) = (rnd(240.0), rnd(200.0), 1.0 + rnd(12.0));
        for y in 0..200u32 {
            for x in 0..240u32 {
                let (dx, dy) = (f64::from(x) + 0.5 - cx, f64::from(y) + 0.5 - cy);
                if dx * dx + dy * dy <= r * r {
                    bm.set(x, y, true);
                }
            }
        }
    }
    let mut squares = Vec::new();
    for y in 0..200u32 {
        for x in 0..240u32 {
            if bm.get(x, y) {
                squares.push(Rect::new(
                    f64::from(x),
                    f64::from(y),
                    f64::from(x + 1),
                    f64::from(y + 1),
                ));
            }
        }
    }
    let border = [
        Rect::new(-1.0, -1.0, 0.0, 201.0),
        Rect::new(240.0, -1.0, 241.0, 201.0),
        Rect::new(-1.0, -1.0, 241.0, 0.0),
        Rect::new(-1.0, 200.0, 241.0, 201.0),
    ];
    let map = Map::from_bitmap(bm).expect("map");
    let mut checked = 0;
    while checked < 1500 {
        let o = Vec2::new(rnd(240.0), rnd(200.0));
        let ray = Ray::from_heading(
            o,
            if checked % 10 == 0 {
                f64::from(checked % 4) * 90.0
            } else {
                rnd(360.0)
            },
        );
        let want = squares
            .iter()
            .chain(border.iter())
            .filter_map(|r| ray.hit_rect(r))
            .fold(f64::INFINITY, f64::min);
        for max in [30.0, 120.0, 1000.0] {
            let got = map.cast_ray(&ray, max);
            let expect = (want <= max).then_some(want);
            match (got, expect) {
                (Some(g), Some(e)) => assert!((g - e).abs() < 1e-9, "{ray:?}: {g} vs {e}"),
                (None, None) => {}
                _ => panic!("{ray:?} max {max}: {got:?} vs {expect:?}"),
            }
        }
        checked += 1;
    }
}
