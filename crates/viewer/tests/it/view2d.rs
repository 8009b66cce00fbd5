//! The live 2D view in headless Chromium, on real worlds: a Mobile Robot Simulator server
//! with a client's robot, and swarm runs. The tests read the page's `window.__simrob2d`
//! state and the canvas' pixels, and wait on what the page says (a generous timeout only as
//! a failure guard), never for a span of time.

use crate::headless;

use std::path::{Path, PathBuf};

use headless::Page;
use serde_json::Value;
use simrob_mrs::flat::Map;
use simrob_mrs::{DirMapFiles, MrsClient, MrsConfig, MrsCore, MrsServer, ShellOptions};
use simrob_swarm::drones::{Avoidance, DroneState};
use simrob_swarm::scenario::{Overrides, Scenario};
use simrob_viewer::view2d::swarm::still;
use simrob_viewer::view2d::{mrs, Frame2d, View2d};
use simrob_viewer::Guard;

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("simrob-view2d-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
}

/// Whether some pixel within `r` of (x, y) satisfies `f`.
fn any_pixel_near(page: &mut Page, x: f64, y: f64, r: i32, f: impl Fn(&[u8]) -> bool) -> bool {
    for dy in -r..=r {
        for dx in -r..=r {
            let v = page.eval(&format!(
                "__simrob2d.pixel({}, {})",
                x + f64::from(dx),
                y + f64::from(dy)
            ));
            let p: Vec<u8> = v
                .as_array()
                .map(|a| a.iter().map(|c| c.as_u64().unwrap_or(0) as u8).collect())
                .unwrap_or_default();
            if p.len() == 4 && f(&p) {
                return true;
            }
        }
    }
    false
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

#[test]
fn the_mrs_robot_its_sonar_rays_and_a_merged_rectangle_are_drawn_where_the_world_says() {
    let dir = scratch("mrs");
    std::fs::write(dir.join("wall.txt"), "300 300\n200 30 260 60\n").expect("map file");
    let map = Map::parse_vector(simrob_mrs::EXAMPLE_MAP).expect("example map");
    let core = MrsCore::new(
        map,
        MrsConfig {
            stepped: true,
            ..MrsConfig::default()
        },
    );
    let files = DirMapFiles::new(&dir).expect("map directory");
    let server = MrsServer::bind(
        "127.0.0.1:0",
        core,
        Box::new(files),
        ShellOptions::default(),
    )
    .expect("bind");
    let (view, hook) = mrs::live(
        "127.0.0.1:0".parse().expect("addr"),
        "test",
        Guard::default(),
        0.0,
        true,
    )
    .expect("view");
    let handle = server.with_hook(hook).spawn().expect("spawn");
    let mut robot = MrsClient::connect_addr(handle.addr()).expect("connect");
    robot.place(150.0, 60.0, 30.0).expect("place");
    robot.show_message("hello page").expect("message");

    let mut page = Page::open(
        &format!("http://{}/", view.addr()),
        &dir.join("profile"),
        900,
        700,
    );
    page.wait_for(
        "__simrob2d.drawn.length === 1 && __simrob2d.frame.sensors[0].message === 'hello page'",
        "JSON.stringify({drawn: __simrob2d.drawn, conn: __simrob2d.connected})",
    );
    // The robot: where the world has it, with its id as its label.
    let (x, y, heading) = robot.get_pos().expect("pos");
    let d = page.eval("__simrob2d.drawn[0]");
    assert!(
        (f(&d["x"]) - x).abs() < 0.1 && (f(&d["y"]) - y).abs() < 0.1,
        "{d} vs ({x}, {y})"
    );
    assert!(
        (f(&d["theta"]).to_degrees() - heading).abs() < 0.1,
        "{d} vs {heading}°"
    );
    assert_eq!(d["label"], "robot 0");
    let (sx, sy) = (f(&d["sx"]), f(&d["sy"]));
    let colour = d["color"].as_str().unwrap_or_default().to_string();
    let rgb = page.eval(&format!(
        "(() => {{ const c = document.createElement('canvas').getContext('2d'); c.fillStyle = '{colour}'; c.fillRect(0, 0, 1, 1); return Array.from(c.getImageData(0, 0, 1, 1).data); }})()"
    ));
    let want: Vec<i64> = rgb
        .as_array()
        .expect("rgb")
        .iter()
        .map(|c| c.as_i64().unwrap_or(0))
        .collect();
    // Off the heading line: a quarter turn away, half a radius out.
    let r = f(&d["r"]);
    let t = f(&d["theta"]) + std::f64::consts::FRAC_PI_2;
    assert!(
        any_pixel_near(
            &mut page,
            sx + t.cos() * r * 0.5,
            sy + t.sin() * r * 0.5,
            1,
            |p| { (0..3).all(|k| (i64::from(p[k]) - want[k]).abs() <= 12) }
        ),
        "the robot's body is not drawn in its colour {colour} at ({sx}, {sy})"
    );
    // Sonar rays: each as long as the robot's own reading says, and green on the canvas.
    let sonars = robot.get_sonars().expect("sonars");
    let rays = page.eval("__simrob2d.frame.sensors[0].rays");
    let rays = rays.as_array().expect("rays");
    assert_eq!(rays.len(), sonars.len());
    let radius = simrob_mrs::flat::RobotModel::NOMAD_200.radius;
    for (k, ray) in rays.iter().enumerate() {
        let (x2, y2) = (f(&ray[2]), f(&ray[3]));
        let reach = (x2 - x).hypot(y2 - y) - radius;
        assert!(
            (reach - f64::from(sonars[k])).abs() <= 1.0,
            "ray {k} reaches {reach} in, the robot reads {}",
            sonars[k]
        );
    }
    let longest = rays
        .iter()
        .max_by(|a, b| {
            let la = (f(&a[2]) - f(&a[0])).hypot(f(&a[3]) - f(&a[1]));
            let lb = (f(&b[2]) - f(&b[0])).hypot(f(&b[3]) - f(&b[1]));
            la.total_cmp(&lb)
        })
        .expect("a ray");
    let mid = page.eval(&format!(
        "__simrob2d.toScreen({}, {})",
        (f(&longest[0]) + f(&longest[2])) / 2.0,
        (f(&longest[1]) + f(&longest[3])) / 2.0
    ));
    assert!(
        any_pixel_near(&mut page, f(&mid[0]), f(&mid[1]), 2, |p| {
            p[1] > 120
                && i32::from(p[1]) - i32::from(p[0]) > 40
                && i32::from(p[1]) - i32::from(p[2]) > 30
        }),
        "no sonar ray drawn at {mid}"
    );

    page.docs_picture("mrs");
    // Merge a map from the page: the server merges it, the page draws it.
    page.eval("document.getElementById('file').value = 'wall.txt'; document.getElementById('merge').click(); 1");
    page.wait_for(
        "__simrob2d.scene.rects.some(r => r.join() === '200,30,260,60') && __simrob2d.drawnScene === __simrob2d.scene.version",
        "JSON.stringify({rects: __simrob2d.scene.rects.length, responses: __simrob2d.responses})",
    );
    page.wait_for(
        "__simrob2d.responses.includes('map wall.txt merged')",
        "__simrob2d.responses",
    );
    // The world has it: a sonar now stops at it (robot at (230, 100) facing up: −90°).
    robot
        .place(230.0, 85.0, -90.0)
        .expect("place under the rectangle");
    let ahead = robot.get_sonar(0).expect("sonar 0");
    assert!(
        (f64::from(ahead) - (85.0 - 60.0 - radius)).abs() <= 1.0,
        "sonar 0 reads {ahead}: the merged rectangle is not in the world"
    );
    let c = page.eval("__simrob2d.toScreen(230, 45)");
    assert!(
        any_pixel_near(&mut page, f(&c[0]), f(&c[1]), 0, |p| p[0] < 80
            && p[1] < 80
            && p[2] < 80),
        "the merged rectangle is not drawn dark at {c}: {}",
        page.eval(&format!("JSON.stringify([__simrob2d.pixel({}, {}), __simrob2d.scene.rects.length, __simrob2d.draws, __simrob2d.camera])", f(&c[0]), f(&c[1])))
    );
    // A bad file name is refused with a clear error and changes nothing.
    page.eval("document.getElementById('file').value = '../etc/passwd'; document.getElementById('merge').click(); 1");
    page.wait_for(
        "__simrob2d.responses.some(t => t.startsWith('Error') && t.includes('plain file name'))",
        "__simrob2d.responses",
    );

    // Place the robot from the page: select it, press Place, click the map.
    page.wait_for(
        "__simrob2d.drawn.length === 1 && Math.abs(__simrob2d.drawn[0].x - 230) < 0.01",
        "JSON.stringify(__simrob2d.drawn)",
    );
    page.eval(
        "(() => { const c = document.getElementById('map'); const r = c.getBoundingClientRect();
          const click = (x, y) => { for (const t of ['mousedown', 'mouseup']) c.dispatchEvent(new MouseEvent(t, {clientX: r.left + x, clientY: r.top + y, bubbles: true})); };
          const d = __simrob2d.drawn[0]; click(d.sx, d.sy);
          document.getElementById('heading').value = '90';
          document.getElementById('place').click();
          const [x, y] = __simrob2d.toScreen(60, 60); click(x, y); return 1; })()",
    );
    page.wait_for(
        "__simrob2d.responses.some(t => t.startsWith('robot 0 placed'))",
        "__simrob2d.responses",
    );
    let (x, y, heading) = robot.get_pos().expect("pos");
    assert!(
        (x - 60.0).abs() < 1.0 && (y - 60.0).abs() < 1.0,
        "placed at ({x}, {y})"
    );
    assert!((heading - 90.0).abs() < 0.1, "heading {heading}");

    // Driven into the merged rectangle, a bumper closes: drawn red where the robot says.
    robot
        .place(230.0, 85.0, -90.0)
        .expect("place under the rectangle");
    robot.set_vel(10.0, 0.0).expect("forward");
    let mut steps = 0;
    while !robot.get_bumper().expect("bumper") {
        steps += 1;
        assert!(steps < 500, "the robot never touched the rectangle");
        robot.step(5).expect("step");
    }
    robot.stop().expect("stop");
    let closed = robot.get_bumpers().expect("bumpers");
    let (x, y, _) = robot.get_pos().expect("pos");
    page.wait_for(
        &format!(
            "__simrob2d.frame.sensors[0].bumpers.length > 0 && Math.abs(__simrob2d.frame.bodies.pose[1] - {y}) < 0.01 && __simrob2d.drawnFrame === __simrob2d.frame.frame"
        ),
        "JSON.stringify(__simrob2d.frame.sensors[0].bumpers)",
    );
    let bumpers = page.eval("__simrob2d.frame.sensors[0].bumpers");
    for b in bumpers.as_array().expect("bumpers") {
        let k = b[0].as_u64().expect("index") as usize;
        assert!(
            closed[k],
            "bumper {k} drawn closed, the robot reads {closed:?}"
        );
        let rim = (f(&b[1]) - x).hypot(f(&b[2]) - y);
        assert!(
            (rim - radius).abs() < 1.0,
            "bumper {k} at {rim} in from the centre"
        );
        assert!(
            f(&b[2]) < y,
            "bumper {k} is not on the side facing the rectangle: {b}"
        );
    }
    let first = &bumpers[0];
    let at = page.eval(&format!(
        "__simrob2d.toScreen({}, {})",
        f(&first[1]),
        f(&first[2])
    ));
    assert!(
        any_pixel_near(&mut page, f(&at[0]), f(&at[1]), 1, |p| p[0] > 180
            && p[1] < 90
            && p[2] < 90),
        "the closed bumper is not drawn red at {at}"
    );
    drop(page);
    drop(robot);
    handle.stop().expect("stop");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Serves one frame of `sim` in the 2D view and opens a 1000 × 700 page on it, with a
/// browser profile in a fresh scratch directory named after `tag`; returns the page, the view
/// (kept alive), the frame served and the directory.
pub(crate) fn open_still(
    sim: &simrob_swarm::Simulation,
    map: Option<&simrob_swarm::drawio::DrawioMap>,
    tag: &str,
) -> (Page, View2d, Frame2d, PathBuf) {
    let (view, frame) =
        still(sim, map, "127.0.0.1:0".parse().expect("addr"), "test").expect("view");
    let dir = scratch(tag);
    let page = Page::open(
        &format!("http://{}/", view.addr()),
        &dir.join("profile"),
        1000,
        700,
    );
    (page, view, frame, dir)
}

/// Shows one frame of `sim` in a page and returns the page, the view kept alive.
fn show(
    sim: &simrob_swarm::Simulation,
    map: Option<&simrob_swarm::drawio::DrawioMap>,
    tag: &str,
) -> (Page, View2d, PathBuf) {
    let (mut page, view, _, dir) = open_still(sim, map, tag);
    page.wait_for(
        &format!(
            "__simrob2d.frame && __simrob2d.frame.frame === {} && __simrob2d.drawn.length > 0",
            sim.frame()
        ),
        "JSON.stringify({frames: __simrob2d.frames, drawn: __simrob2d.drawn.length})",
    );
    (page, view, dir)
}

#[test]
fn a_swarm_item_carried_by_a_robot_is_drawn_with_it_and_labelled_as_an_item() {
    let scenario = Scenario::load(&repo("scenarios/swarm/hospital.toml")).expect("hospital");
    let mut sim = scenario.build(&Overrides::default()).expect("build");
    let carried = loop {
        assert!(sim.step(), "the run ended before a robot carried an item");
        let w = sim.world();
        if let Some((item, i)) = w.item.iter().find(|(_, i)| i.carried_by.is_some()) {
            break (item, i.carried_by.expect("carrier"));
        }
    };
    let (item, carrier) = carried;
    let name = sim
        .world()
        .name
        .get(item)
        .cloned()
        .expect("items are named");
    let (mut page, _view, dir) = show(&sim, scenario.map.as_ref(), "carried");
    let drawn = page.eval(&format!(
        "JSON.stringify([__simrob2d.drawn.find(d => d.id === {}), __simrob2d.drawn.find(d => d.id === {})])",
        item.0, carrier.0
    ));
    let drawn: Value = serde_json::from_str(drawn.as_str().expect("json")).expect("drawn");
    let (i, c) = (&drawn[0], &drawn[1]);
    assert_eq!(i["kind"], "item", "{i}");
    assert_eq!(i["carrier"], carrier.0, "{i}");
    assert_eq!(i["label"], format!("item {name}"));
    assert_eq!(c["kind"], "robot", "{c}");
    // Drawn on its carrier: inside the carrier's body on the screen.
    let gap = (f(&i["sx"]) - f(&c["sx"])).hypot(f(&i["sy"]) - f(&c["sy"]));
    assert!(
        gap <= f(&c["r"]),
        "item at {gap} px from its carrier (radius {})",
        c["r"]
    );
    // In the item colour, and its label shown.
    assert!(
        any_pixel_near(&mut page, f(&i["sx"]), f(&i["sy"]), 1, |p| {
            (i32::from(p[0]) - 0xc2).abs() < 12
                && (i32::from(p[1]) - 0x57).abs() < 12
                && (i32::from(p[2]) - 0x1a).abs() < 12
        }),
        "the carried item is not drawn in the item colour"
    );
    let labels = page.eval("__simrob2d.labels.map(l => l.text)");
    assert!(
        labels
            .as_array()
            .expect("labels")
            .iter()
            .any(|t| *t == format!("item {name}")),
        "no label for the item: {labels}"
    );
    // Selected, the carrier says what it carries.
    page.eval(&format!("__simrob2d.select({}); 1", carrier.0));
    page.wait_for(
        &format!("document.getElementById('info').textContent.includes('carries item {name}')"),
        "document.getElementById('info').textContent",
    );
    // Rooms, POIs and paths of the map are there.
    let counts = page.eval("[__simrob2d.scene.labels.length, __simrob2d.scene.pois.length, __simrob2d.scene.paths.length]");
    assert!(
        counts
            .as_array()
            .expect("counts")
            .iter()
            .all(|n| n.as_u64().unwrap_or(0) > 0),
        "{counts}"
    );
    page.docs_picture("swarm-hospital");
    drop(page);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The labels the page placed that cover a body on the screen (its drawn disc or square,
/// `r` around its centre): each as `label text / body label`.
fn labels_over_bodies(page: &mut Page) -> Vec<String> {
    let v = page.eval(
        "JSON.stringify((() => {
          const out = [];
          const bodies = __simrob2d.drawn;
          for (const l of __simrob2d.labels) {
            for (const d of bodies) {
              if (l.x + l.w <= d.sx - d.r || d.sx + d.r <= l.x || l.y + l.h <= d.sy - d.r || d.sy + d.r <= l.y) continue;
              out.push(l.text + ' / ' + d.label);
            }
          }
          return out;
        })())",
    );
    serde_json::from_str(v.as_str().unwrap_or("[]")).expect("labels over bodies")
}

#[test]
fn labels_cover_no_body_and_a_carried_item_is_labelled_beside_its_carrier() {
    // A crowd of drones avoiding each other: many labels, bodies close together.
    let scenario = Scenario::load(&repo("scenarios/swarm/drone-swarm.toml")).expect("drone swarm");
    let mut sim = scenario
        .build(&Overrides {
            avoidance: Some(Avoidance::Hmr),
            ..Overrides::default()
        })
        .expect("build");
    for _ in 0..300 {
        if !sim.step() {
            break;
        }
    }
    let (mut page, _view, dir) = show(&sim, scenario.map.as_ref(), "label-crowd");
    let n = f(&page.eval("__simrob2d.labels.length"));
    assert!(n >= 20.0, "only {n} labels placed");
    let over = labels_over_bodies(&mut page);
    assert!(over.is_empty(), "labels over bodies: {over:?}");
    drop(page);
    let _ = std::fs::remove_dir_all(&dir);

    // A robot carrying an item: both labelled, neither label over the robot.
    let scenario = Scenario::load(&repo("scenarios/swarm/hospital.toml")).expect("hospital");
    let mut sim = scenario.build(&Overrides::default()).expect("build");
    let (item, carrier) = loop {
        assert!(sim.step(), "the run ended before a robot carried an item");
        let w = sim.world();
        if let Some((item, i)) = w.item.iter().find(|(_, i)| i.carried_by.is_some()) {
            break (item, i.carried_by.expect("carrier"));
        }
    };
    let (mut page, _view, dir) = show(&sim, scenario.map.as_ref(), "label-carried");
    let texts = page.eval(&format!(
        "JSON.stringify([__simrob2d.drawn.find(d => d.id === {}).label, __simrob2d.drawn.find(d => d.id === {}).label, __simrob2d.labels.map(l => l.text)])",
        item.0, carrier.0
    ));
    let texts: Value = serde_json::from_str(texts.as_str().expect("json")).expect("labels");
    for k in 0..2 {
        assert!(
            texts[2]
                .as_array()
                .expect("labels")
                .iter()
                .any(|t| *t == texts[k]),
            "{} not labelled: {texts}",
            texts[k]
        );
    }
    let over = labels_over_bodies(&mut page);
    assert!(over.is_empty(), "labels over bodies: {over:?}");
    drop(page);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_crashed_drone_is_drawn_differently_from_a_flying_one() {
    let scenario = Scenario::load(&repo("scenarios/swarm/drone-swarm.toml")).expect("drone swarm");
    let mut sim = scenario
        .build(&Overrides {
            robots: Some(60),
            avoidance: Some(Avoidance::Hmr),
            ..Overrides::default()
        })
        .expect("build");
    let state_of = |sim: &simrob_swarm::Simulation, s: DroneState| {
        sim.world()
            .custom::<simrob_swarm::drones::Drone>()
            .and_then(|c| c.iter().find(|(_, d)| d.state == s).map(|(e, _)| e))
    };
    let (crashed, flying) = loop {
        assert!(
            sim.step(),
            "the run ended before a drone crashed with others flying"
        );
        if let (Some(c), Some(f)) = (
            state_of(&sim, DroneState::Crashed),
            state_of(&sim, DroneState::Flying),
        ) {
            break (c, f);
        }
    };
    let (mut page, _view, dir) = show(&sim, scenario.map.as_ref(), "drones");
    let drawn = page.eval(&format!(
        "JSON.stringify([__simrob2d.drawn.find(d => d.id === {}), __simrob2d.drawn.find(d => d.id === {})])",
        crashed.0, flying.0
    ));
    let drawn: Value = serde_json::from_str(drawn.as_str().expect("json")).expect("drawn");
    let (c, fl) = (&drawn[0], &drawn[1]);
    assert_eq!(c["state"], "crashed", "{c}");
    assert_eq!(fl["state"], "flying", "{fl}");
    assert_ne!(c["mark"], fl["mark"]);
    assert_ne!(c["color"], fl["color"]);
    // On the canvas, close up: the flying drone in its blue, the crashed one grey (crossed
    // out in red); the legend names both.
    // Where each is and how large, as first drawn: zoomed in, the page is sent only the
    // bodies in its view.
    let scale = f(&page.eval("__simrob2d.camera.scale"));
    let at = |d: &Value| (f(&d["x"]), f(&d["y"]), 25.0 * scale / f(&d["r"]));
    let (at_fl, at_c) = (at(fl), at(c));
    let close_up = |page: &mut Page, id: u32, (x, y, s): (f64, f64, f64)| -> Value {
        let draws = page.eval("__simrob2d.draws");
        page.eval(&format!("__simrob2d.focus({x}, {y}, {s}); 1"));
        page.wait_for(
            &format!(
                "__simrob2d.draws > {draws} && __simrob2d.drawn.some(d => d.id === {id} && d.r >= 15)"
            ),
            "__simrob2d.draws",
        );
        let d = page.eval(&format!(
            "JSON.stringify(__simrob2d.drawn.find(d => d.id === {id}))"
        ));
        serde_json::from_str(d.as_str().expect("json")).expect("drawn")
    };
    let fl = close_up(&mut page, flying.0, at_fl);
    assert!(f(&fl["r"]) >= 15.0, "{fl}");
    assert!(
        any_pixel_near(
            &mut page,
            f(&fl["sx"]) + f(&fl["r"]) * 0.4,
            f(&fl["sy"]) - f(&fl["r"]) * 0.6,
            1,
            |p| {
                (i32::from(p[0]) - 0x1f).abs() < 20
                    && (i32::from(p[1]) - 0x77).abs() < 20
                    && (i32::from(p[2]) - 0xb4).abs() < 20
            }
        ),
        "the flying drone is not drawn blue: {fl}"
    );
    // No heading mark: the model's drones have none (it was a white line pointing east).
    assert!(
        any_pixel_near(
            &mut page,
            f(&fl["sx"]) + f(&fl["r"]) * 0.6,
            f(&fl["sy"]),
            0,
            |p| {
                (i32::from(p[0]) - 0x1f).abs() < 20
                    && (i32::from(p[1]) - 0x77).abs() < 20
                    && (i32::from(p[2]) - 0xb4).abs() < 20
            }
        ),
        "a heading mark is drawn on the flying drone: {fl}"
    );
    let c = close_up(&mut page, crashed.0, at_c);
    assert!(
        any_pixel_near(
            &mut page,
            f(&c["sx"]) + f(&c["r"]) * 0.6,
            f(&c["sy"]),
            1,
            |p| {
                (i32::from(p[0]) - 0x9a).abs() < 16
                    && (i32::from(p[1]) - 0x9e).abs() < 16
                    && (i32::from(p[2]) - 0xa5).abs() < 16
            }
        ),
        "the crashed drone is not drawn grey: {c}"
    );
    assert!(
        any_pixel_near(
            &mut page,
            f(&c["sx"]) + f(&c["r"]) * 0.5,
            f(&c["sy"]) + f(&c["r"]) * 0.5,
            1,
            |p| { p[0] > 170 && p[1] < 90 && p[2] < 90 }
        ),
        "the crashed drone is not crossed out in red: {c}"
    );
    let legend = page.text("legend");
    assert!(
        legend.contains("drone crashed")
            && legend.contains("drone flying")
            && legend.contains("planned route"),
        "{legend}"
    );
    drop(page);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hundreds_of_drones_a_few_pixels_across_are_stamped_in_their_states_colours() {
    let scenario = Scenario::load(&repo("scenarios/swarm/drone-swarm.toml")).expect("drone swarm");
    let mut sim = scenario
        .build(&Overrides {
            robots: Some(400),
            avoidance: Some(Avoidance::Hmr),
            ..Overrides::default()
        })
        .expect("build");
    // Until some drones have crashed while others fly.
    let drones = |sim: &simrob_swarm::Simulation, s: DroneState| {
        sim.world()
            .custom::<simrob_swarm::drones::Drone>()
            .map_or(0, |c| c.iter().filter(|(_, d)| d.state == s).count())
    };
    while drones(&sim, DroneState::Crashed) < 20 || drones(&sim, DroneState::Flying) < 20 {
        assert!(sim.step(), "the run ended before 20 drones crashed");
    }
    let (mut page, _view, dir) = show(&sim, scenario.map.as_ref(), "stamps");
    let stamped = f(&page.eval("__simrob2d.stamped"));
    assert!(stamped >= 300.0, "{stamped} drones stamped");
    // A drone of `state` with no body in another state near it on the screen (crashed
    // drones come in twos): where it is drawn.
    let alone = |page: &mut Page, state: &str| -> Value {
        let d = page.eval(&format!(
            "JSON.stringify((() => {{ const all = __simrob2d.drawn; return all.find(d => d.state === '{state}' && d.r < 4 && all.every(o => o.state === d.state || Math.hypot(o.sx - d.sx, o.sy - d.sy) > 2 * (d.r + o.r) + 2)); }})())"
        ));
        serde_json::from_str(d.as_str().unwrap_or("null")).expect("drawn")
    };
    let fl = alone(&mut page, "flying");
    assert!(fl.is_object(), "no flying drone alone on the screen");
    assert!(
        any_pixel_near(&mut page, f(&fl["sx"]), f(&fl["sy"]), 1, |p| {
            (i32::from(p[0]) - 0x1f).abs() < 20
                && (i32::from(p[1]) - 0x77).abs() < 20
                && (i32::from(p[2]) - 0xb4).abs() < 20
        }),
        "the flying drone is not stamped blue: {fl}"
    );
    let c = alone(&mut page, "crashed");
    assert!(c.is_object(), "no crashed drone alone on the screen");
    let (x, y, r) = (f(&c["sx"]), f(&c["sy"]), f(&c["r"]).round() as i32);
    assert!(
        any_pixel_near(&mut page, x, y, r, |p| {
            (i32::from(p[0]) - 0x9a).abs() < 16
                && (i32::from(p[1]) - 0x9e).abs() < 16
                && (i32::from(p[2]) - 0xa5).abs() < 16
        }) && any_pixel_near(&mut page, x, y, 1, |p| p[0] > 150
            && p[1] < 110
            && p[2] < 110),
        "the crashed drone is not stamped grey, crossed out in red: {c}"
    );
    // Panned, the view leaves no stamp behind: where flying drones were and no body is
    // drawn now, no blue remains.
    page.eval("window.before = __simrob2d.drawn.filter(d => d.state === 'flying' && d.r < 4); 1");
    let draws = page.eval("__simrob2d.draws");
    page.eval("__simrob2d.camera.ox += 40; __simrob2d.camera.oy += 25; __simrob2d.select(null); 1");
    page.wait_for(&format!("__simrob2d.draws > {draws}"), "__simrob2d.draws");
    let left = page.eval(
        "JSON.stringify((() => {
          const now = __simrob2d.drawn;
          const ctx = document.getElementById('map').getContext('2d');
          const free = before.filter(d => now.every(o => Math.hypot(o.sx - d.sx, o.sy - d.sy) > 2 * o.r + 4));
          const blue = free.filter(d => {
            const p = ctx.getImageData(Math.round(d.sx), Math.round(d.sy), 1, 1).data;
            return p[2] > 150 && p[0] < 80;
          });
          return [free.length, blue.length, __simrob2d.stamped];
        })())",
    );
    let left: Vec<f64> = serde_json::from_str(left.as_str().expect("json")).expect("counts");
    assert!(left[0] > 0.0 && left[2] > 0.0, "{left:?}");
    assert_eq!(
        left[1], 0.0,
        "stamps left behind where drones were (free, stale, stamped): {left:?}"
    );
    drop(page);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_crowd_of_drones_a_pixel_or_two_across_is_drawn_at_its_true_size_with_gaps_between() {
    // Thousands of drones on their take-off grid, the whole map in view: each a pixel or two
    // across, a few pixels apart.
    let scenario = Scenario::load(&repo("scenarios/swarm/drone-swarm.toml")).expect("drone swarm");
    let sim = scenario
        .build(&Overrides {
            robots: Some(3_000),
            ..Overrides::default()
        })
        .expect("build");
    let (mut page, _view, dir) = show(&sim, scenario.map.as_ref(), "true-size");
    // Without the routes (lines between the drones).
    let draws = page.eval("__simrob2d.draws");
    page.eval("const r = document.getElementById('routes'); r.checked = false; r.dispatchEvent(new Event('change')); 1");
    page.wait_for(&format!("__simrob2d.draws > {draws}"), "__simrob2d.draws");
    let v = page.eval(
        "JSON.stringify((() => {
          const b = __simrob2d.frame.bodies, s = __simrob2d.camera.scale;
          const d = __simrob2d.drawn;
          const i = Math.floor(d.length / 2);
          let best = null;
          for (const o of d) {
            if (o === d[i]) continue;
            const g = Math.hypot(o.sx - d[i].sx, o.sy - d[i].sy);
            if (!best || g < best.g) best = { g, o };
          }
          return { n: d.length, half: Math.max(b.pose[3], b.pose[4]) * s, r: d[i].r, a: [d[i].sx, d[i].sy], b: [best.o.sx, best.o.sy], gap: best.g, color: d[i].color };
        })())",
    );
    let v: Value = serde_json::from_str(v.as_str().expect("json")).expect("crowd");
    let (half, r, gap) = (f(&v["half"]), f(&v["r"]), f(&v["gap"]));
    assert!(
        half < 2.0 && gap > 2.0 * half + 2.0,
        "not a crowd of small drones: {v}"
    );
    assert!(
        (r - half.max(0.5)).abs() < 1e-3,
        "drawn at radius {r}, true {half}: {v}"
    );
    // Between a drone and its nearest neighbour, the map's white shows.
    let (mx, my) = (
        (f(&v["a"][0]) + f(&v["b"][0])) / 2.0,
        (f(&v["a"][1]) + f(&v["b"][1])) / 2.0,
    );
    let p = page.eval(&format!("__simrob2d.pixel({mx}, {my})"));
    let p: Vec<u64> = p
        .as_array()
        .expect("pixel")
        .iter()
        .map(|c| c.as_u64().unwrap_or(0))
        .collect();
    assert!(
        p.iter().take(3).all(|c| *c > 200),
        "no gap between neighbouring drones at ({mx}, {my}): pixel {p:?}, {v}"
    );
    drop(page);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Records `scenario` (cut to `duration` simulated seconds) as `simrob swarm run --record`
/// does, into `path`.
fn record_swarm(scenario: &Scenario, duration: f64, path: &Path) {
    use simrob_swarm::seer::{JsonLinesRecorder, Seer};
    let mut sim = scenario
        .build(&Overrides {
            duration: Some(duration),
            ..Overrides::default()
        })
        .expect("build");
    let out = std::io::BufWriter::new(std::fs::File::create(path).expect("recording"));
    let name = sim.name.clone();
    sim.add_system(Box::new(Seer::new(
        &name,
        scenario.file.world.snapshot_period,
        vec![Box::new(JsonLinesRecorder::new(out))],
    )));
    while sim.step() {}
    sim.finish(0.0);
}

#[test]
fn a_swarm_recording_replays_in_the_2d_view_with_its_controls() {
    use simrob_viewer::view2d::replay::{SwarmRecording, SwarmReplay};
    let dir = scratch("replay");
    let path = dir.join("hospital.jsonl");
    let scenario = Scenario::load(&repo("scenarios/swarm/hospital.toml")).expect("hospital");
    record_swarm(&scenario, 90.0, &path);
    // What the file says: the first snapshot with a carried item, and the robot it sits on.
    let text = std::fs::read_to_string(&path).expect("read");
    let snaps: Vec<Value> = text
        .lines()
        .filter(|l| l.starts_with("{\"type\":\"snapshot\""))
        .map(|l| serde_json::from_str(l).expect("snapshot"))
        .collect();
    let (t, item, carrier) = snaps
        .iter()
        .find_map(|s| {
            let es = s["entities"].as_array()?;
            let it = es.iter().find(|e| e[5] == "carried")?;
            let c = es
                .iter()
                .find(|e| e[5] != "carried" && e[2] == it[2] && e[3] == it[3])?;
            Some((f(&s["t"]), it[0].as_u64()?, c[0].as_u64()?))
        })
        .expect("no item carried in the recording");
    let end = f(&snaps.last().expect("snapshots")["t"]);

    let recording = SwarmRecording::open(&path).expect("open");
    assert_eq!(recording.len(), snaps.len());
    let replay = SwarmReplay::serve(
        recording,
        "127.0.0.1:0".parse().expect("addr"),
        4.0,
        Guard::default(),
    )
    .expect("serve");
    replay.play();
    assert_eq!(
        replay.status().0,
        "waiting",
        "playback starts with the first page"
    );
    let mut page = Page::open(
        &format!("http://{}/", replay.addr()),
        &dir.join("profile"),
        1000,
        700,
    );
    let state = "JSON.stringify({status: __simrob2d.frame && __simrob2d.frame.status, replay: __simrob2d.frame && __simrob2d.frame.replay, text: document.getElementById('state').textContent})";
    page.wait_for(
        "__simrob2d.frame && __simrob2d.frame.status.state === 'playing' && document.getElementById('state').textContent === 'playing'",
        state,
    );
    // A replay, said so; the speed box shows the replay's speed; the live controls hidden.
    assert_eq!(page.text("mode"), "REPLAY");
    assert_eq!(page.eval("document.getElementById('r-speed').value"), "4");
    assert_eq!(
        page.eval("[document.getElementById('replay').hidden, document.getElementById('controls').hidden]"),
        serde_json::json!([false, true])
    );
    assert_eq!(
        page.eval("__simrob2d.frame.replay.end"),
        serde_json::json!(end)
    );
    assert_eq!(
        page.eval("document.getElementById('seek').max"),
        Value::String(format!("{end}"))
    );

    // Pause; the status says so.
    page.eval("document.getElementById('r-pause').click(); 1");
    page.wait_for(
        "__simrob2d.frame.status.state === 'paused' && document.getElementById('state').textContent === 'paused'",
        state,
    );
    // The slider, in simulated seconds: to when the item is carried.
    page.eval(&format!(
        "(() => {{ const s = document.getElementById('seek'); s.value = '{t}'; s.dispatchEvent(new Event('input')); return 1; }})()"
    ));
    page.wait_for(
        &format!(
            "__simrob2d.frame.time === {t} && __simrob2d.drawnFrame === __simrob2d.frame.frame"
        ),
        state,
    );
    let drawn = page.eval(&format!(
        "JSON.stringify([__simrob2d.drawn.find(d => d.id === {item}), __simrob2d.drawn.find(d => d.id === {carrier})])"
    ));
    let drawn: Value = serde_json::from_str(drawn.as_str().expect("json")).expect("drawn");
    // "frame" is the run's frame, as the live view and the log say; the snapshot is counted
    // apart.
    let sim_frame = page.eval("__simrob2d.frame.frame");
    let index = page.eval("__simrob2d.frame.replay.index");
    let time_text = page.text("time");
    assert!(
        time_text.contains(&format!(
            ", frame {sim_frame} (snapshot {}/{})",
            index.as_u64().unwrap_or(0) + 1,
            snaps.len()
        )),
        "{time_text}"
    );
    let (i, c) = (&drawn[0], &drawn[1]);
    assert_eq!(i["kind"], "item", "{i}");
    assert_eq!(i["carrier"], carrier, "{i}");
    assert_eq!(i["label"], format!("item #{item}"));
    assert_eq!(c["kind"], "robot", "{c}");
    assert_eq!(
        (i["sx"].clone(), i["sy"].clone()),
        (c["sx"].clone(), c["sy"].clone())
    );
    // Rooms are not recorded, the map's POIs and paths are.
    assert_eq!(
        page.eval("[__simrob2d.scene.pois.length > 0, __simrob2d.scene.paths.length > 0, __simrob2d.scene.rects.length > 0]"),
        serde_json::json!([true, true, true])
    );

    // The speed box sets the speed; a bad one is refused and changes nothing.
    page.eval("(() => { const b = document.getElementById('r-speed'); b.value = '8'; b.dispatchEvent(new Event('change')); return 1; })()");
    page.wait_for("__simrob2d.frame.status.speed === 8", state);
    page.eval("(() => { const b = document.getElementById('r-speed'); b.value = '0'; b.dispatchEvent(new Event('change')); return 1; })()");
    page.wait_for(
        "__simrob2d.responses.some(t => t.startsWith('Error') && t.includes('0.001 to 10000'))",
        "__simrob2d.responses",
    );
    page.eval("document.getElementById('r-step').click(); 1");
    page.wait_for(&format!("__simrob2d.frame.time > {t}"), state);
    assert_eq!(f(&page.eval("__simrob2d.frame.status.speed")), 8.0);
    // To the end: the status says ended; Play starts again from the first frame.
    page.eval(&format!(
        "(() => {{ const s = document.getElementById('seek'); s.value = '{end}'; s.dispatchEvent(new Event('input')); return 1; }})()"
    ));
    page.wait_for(
        "__simrob2d.frame.status.state === 'ended' && document.getElementById('state').textContent === 'ended'",
        state,
    );
    assert_eq!(replay.status().0, "ended");
    page.eval("document.getElementById('r-play').click(); 1");
    page.wait_for(
        "__simrob2d.frame.status.state === 'playing' && __simrob2d.frame.replay.index < 5",
        state,
    );
    drop(page);
    drop(replay);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The swarm legend gives drones, drawn as squares, square swatches (it once showed circles),
/// and the scale bar sits below the map instead of over its bottom wall.
#[test]
fn the_legend_shows_drones_as_drawn_and_the_scale_bar_clears_the_map() {
    let scenario = Scenario::load(&repo("scenarios/swarm/drone-swarm.toml")).expect("drone swarm");
    let mut sim = scenario
        .build(&Overrides {
            robots: Some(60),
            ..Overrides::default()
        })
        .expect("build");
    for _ in 0..24 {
        assert!(sim.step(), "the run ended in its first second");
    }
    let (view, _) = still(
        &sim,
        scenario.map.as_ref(),
        "127.0.0.1:0".parse().expect("addr"),
        "test",
    )
    .expect("view");
    let dir = scratch("legend");
    // Wide and low: the map's height sets the scale, so its bottom wall is near the scale bar.
    let mut page = Page::open(
        &format!("http://{}/", view.addr()),
        &dir.join("profile"),
        1400,
        520,
    );
    page.wait_for(
        &format!(
            "__simrob2d.frame && __simrob2d.frame.frame === {} && __simrob2d.drawn.length > 0 \
             && document.querySelectorAll('#legend li').length > 0",
            sim.frame()
        ),
        "JSON.stringify({frames: __simrob2d.frames, drawn: __simrob2d.drawn.length})",
    );
    let legend = page.eval(
        "JSON.stringify([...document.querySelectorAll('#legend li')].map(li => [li.textContent, li.firstChild.className]))",
    );
    let legend: Vec<(String, String)> =
        serde_json::from_str(legend.as_str().expect("json")).expect("legend");
    let drones: Vec<&(String, String)> = legend
        .iter()
        .filter(|(text, _)| text.starts_with("drone"))
        .collect();
    assert!(
        !drones.is_empty(),
        "no drone state in the legend: {legend:?}"
    );
    for (text, class) in drones {
        assert!(
            class.split(' ').any(|c| c == "square"),
            "{text:?}: drones are drawn as squares, the legend's swatch is {class:?}"
        );
    }
    let g = page.eval(
        "JSON.stringify({oy: __simrob2d.camera.oy, scale: __simrob2d.camera.scale, \
         h: document.getElementById('map').height, height: __simrob2d.scene.height})",
    );
    let g: Value = serde_json::from_str(g.as_str().expect("json")).expect("geometry");
    let bottom = f(&g["oy"]) + f(&g["height"]) * f(&g["scale"]);
    // The scale bar's box: from 36 px above the canvas' bottom edge (`Renderer.scaleBar`).
    let bar_top = f(&g["h"]) - 36.0;
    assert!(
        bottom <= bar_top,
        "the map's bottom edge at y = {bottom} runs under the scale bar (from y = {bar_top}): {g}"
    );
    page.docs_picture("swarm-drones");
}
