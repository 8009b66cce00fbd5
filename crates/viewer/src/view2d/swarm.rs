//! Swarm runs in the 2D view: walls and the obstacle map, the draw.io map's rooms (its text
//! shapes), POIs and map-paths; every robot, drone and item with its state (flying, arrived,
//! crashed, carried, blocked, done, …) and who carries what; planned routes. The page plays,
//! pauses, steps and sets the speed.
//!
//! Observing never changes the run: the view only reads the world between frames (no system
//! is added, no event scheduled), so a run watched, paused or stepped is the same run, bit
//! for bit, as one left alone.
//!
//! Page commands: `{"cmd":"play"}`, `{"cmd":"pause"}`, `{"cmd":"step","value":FRAMES}`,
//! `{"cmd":"speed","value":F}` (simulated seconds per wall second; 0 = as fast as possible).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use simrob_swarm::drawio::DrawioMap;
use simrob_swarm::seer;
use simrob_swarm::{Shape, Simulation, SwarmWorld};

use super::{
    Bitmap2d, Body2d, Frame2d, Label2d, Poi2d, Route2d, Scene2d, StateStyle, Status2d, View2d,
};
use crate::{Backend, CommandError};

/// The states a swarm entity is drawn in: the Seer's state names.
pub fn states() -> Vec<StateStyle> {
    vec![
        StateStyle::new("", "robot", "#4477aa", "fill"),
        StateStyle::new("moving", "moving", "#2a9d4a", "fill"),
        StateStyle::new("ready", "working (script ready)", "#17becf", "fill"),
        StateStyle::new("blocked", "waiting (script blocked)", "#e69f00", "fill"),
        StateStyle::new("done", "done", "#8a8f98", "ring"),
        StateStyle::new("failed", "script failed", "#d62728", "ring"),
        StateStyle::new("empty", "battery empty", "#7f3fbf", "cross"),
        StateStyle::new("flying", "drone flying", "#1f77b4", "fill"),
        StateStyle::new("hovering", "drone arrived", "#2ca02c", "ring"),
        StateStyle::new("crashed", "drone crashed", "#d62728", "cross"),
        StateStyle::new("idle", "drone idle (no target)", "#8a8f98", "ring"),
        StateStyle::new("carried", "item, carried", "#c2571a", "dot"),
        StateStyle::new("item", "item", "#c2571a", "fill"),
    ]
}

/// The scene of a swarm world (and of its draw.io map, when it has one). Its walls are the
/// world's static index, which [`Simulation::start`] builds: the scene of a world that has not
/// started has none.
pub fn scene(world: &SwarmWorld, map: Option<&DrawioMap>, title: &str) -> Scene2d {
    let header = seer::header(world, title, 0, 0.0, 0.0);
    let mut labels = Vec::new();
    if let Some(map) = map {
        for s in &map.shapes {
            let text = simrob_swarm::scenario::strip_html(&s.label);
            if s.is_text() && !s.annotated && !text.trim().is_empty() {
                labels.push(Label2d {
                    text,
                    x: s.x,
                    y: s.y,
                    w: s.width,
                    h: s.height,
                });
            }
        }
    }
    let bitmap = world.res.obstacles.as_ref().and_then(|m| {
        m.bitmap()
            .map(|b| Bitmap2d::from_fn(b.width(), b.height(), 1.0, |x, y| b.get(x, y)))
    });
    Scene2d {
        world: "swarm".into(),
        title: title.into(),
        units: "unit".into(),
        width: header.width,
        height: header.height,
        rects: header
            .walls
            .iter()
            .map(|w| [w[0] - w[2], w[1] - w[3], w[0] + w[2], w[1] + w[3]])
            .collect(),
        bitmap,
        labels,
        pois: header
            .pois
            .iter()
            .map(|p| Poi2d {
                name: p.name.clone(),
                x: p.x,
                y: p.y,
            })
            .collect(),
        paths: header.paths,
        kinds: header.kinds,
        states: states(),
        version: 1,
    }
}

/// A frame of the world now: every entity with its state, who carries what, and at most
/// `guard`'s [`crate::Guard::max_view_routes`] routes and
/// [`crate::Guard::max_view_names`] names.
pub fn frame(
    sim: &Simulation,
    scene: &Scene2d,
    status: Status2d,
    snap: &mut seer::Snapshot,
    guard: &crate::Guard,
) -> Frame2d {
    let (max_routes, max_names) = (guard.max_view_routes, guard.max_view_names);
    let world = sim.world();
    seer::snapshot(world, sim.frame(), sim.time(), snap);
    let state_index = |name: &str| scene.state(name);
    let item_state = state_index("item");
    let moving = state_index("moving");
    let mut f = Frame2d {
        scene: scene.version,
        frame: snap.frame,
        time: snap.t,
        status,
        ..Frame2d::default()
    };
    f.bodies.reserve(snap.entities.len());
    for e in &snap.entities {
        let id = simrob_swarm::EntityId(e.id);
        let mut state = state_index(e.state);
        if e.state.is_empty() && world.item.has(id) {
            state = item_state;
        } else if matches!(e.state, "" | "ready" | "blocked")
            && world.vel.get(id).is_some_and(|v| v.is_moving())
        {
            state = moving;
        }
        let disc = matches!(world.collider.get(id), Some(Shape::Circle { .. }) | None);
        let half = if e.half == [0.0, 0.0] {
            [1.5, 1.5]
        } else {
            e.half
        };
        f.bodies.push(Body2d {
            id: e.id,
            x: e.x,
            y: e.y,
            theta: e.theta,
            half,
            kind: u8::try_from(e.kind).unwrap_or(u8::MAX),
            state,
            disc,
        });
    }
    for (e, item) in world.item.iter() {
        if let Some(c) = item.carried_by {
            f.carried.push([e.0, c.0]);
        }
    }
    for (e, name) in world.name.iter().take(max_names) {
        if !world.poi.has(e) {
            f.names.push((e.0, name.clone()));
        }
    }
    for (e, path) in world.path.iter() {
        if f.routes.len() >= max_routes {
            break;
        }
        let Some(p) = world.pose.get(e) else { continue };
        let mut points = vec![[p.x, p.y]];
        points.extend(path.points.iter().skip(path.next).map(|&(x, y)| [x, y]));
        if points.len() > 1 {
            f.routes.push(Route2d { id: e.0, points });
        }
    }
    if let Some(drones) = world.custom::<simrob_swarm::drones::Drone>() {
        for (e, d) in drones.iter() {
            if f.routes.len() >= max_routes {
                break;
            }
            if d.state == simrob_swarm::drones::DroneState::Flying {
                if let Some(p) = world.pose.get(e) {
                    f.routes.push(Route2d {
                        id: e.0,
                        points: vec![[p.x, p.y], [d.target.0, d.target.1]],
                    });
                }
            }
        }
    }
    let st = &sim.ctx.stats;
    f.figures = vec![
        ("robots".into(), world.robot_count().to_string()),
        ("collisions".into(), st.collisions.to_string()),
        ("tasks done".into(), st.tasks_done.to_string()),
        ("errors".into(), st.errors.to_string()),
    ];
    if world.custom::<simrob_swarm::drones::Drone>().is_some() {
        f.figures.push(("arrived".into(), st.arrived.to_string()));
        f.figures.push(("crashed".into(), st.crashed.to_string()));
    }
    f
}

/// What the page asked: playing or paused, the speed, frames to step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Control {
    /// Running (true) or paused.
    pub playing: bool,
    /// Simulated seconds per wall second; 0 = as fast as possible.
    pub speed: f64,
    /// Frames to run while paused.
    pub steps: u64,
    /// Changes whenever play, pause or speed does (the pacing starts again from now).
    pub epoch: u64,
}

/// The page's controls, shared between the viewer's thread and the run's.
pub struct SwarmControl {
    state: Mutex<Control>,
    changed: Condvar,
    /// The most frames one `step` command runs ([`crate::Guard::max_step_frames`]).
    max_step: u64,
}

impl SwarmControl {
    /// Controls starting with `playing` at `speed`, within the [`crate::Guard`]'s defaults.
    pub fn new(playing: bool, speed: f64) -> Arc<Self> {
        Self::within(playing, speed, &crate::Guard::default())
    }

    /// [`SwarmControl::new`] with `guard`'s [`crate::Guard::max_step_frames`].
    pub fn within(playing: bool, speed: f64, guard: &crate::Guard) -> Arc<Self> {
        Arc::new(SwarmControl {
            max_step: guard.max_step_frames,
            state: Mutex::new(Control {
                playing,
                speed,
                steps: 0,
                epoch: 0,
            }),
            changed: Condvar::new(),
        })
    }

    /// The controls now.
    pub fn get(&self) -> Control {
        self.state.lock().map(|c| *c).unwrap_or(Control {
            playing: false,
            speed: 1.0,
            steps: 0,
            epoch: 0,
        })
    }

    /// Changes the controls and wakes the run.
    pub fn update(&self, f: impl FnOnce(&mut Control)) {
        if let Ok(mut c) = self.state.lock() {
            f(&mut c);
        }
        self.changed.notify_all();
    }

    /// Takes one frame of a step request; whether there was one.
    fn take_step(&self) -> bool {
        let Ok(mut c) = self.state.lock() else {
            return false;
        };
        if c.steps > 0 {
            c.steps -= 1;
            true
        } else {
            false
        }
    }

    /// Waits until the controls change or `timeout` passes.
    fn wait(&self, seen: Control, timeout: Duration) {
        if let Ok(c) = self.state.lock() {
            let _ = self.changed.wait_timeout_while(c, timeout, |c| *c == seen);
        }
    }
}

impl Backend for SwarmControl {
    fn command(&self, cmd: &serde_json::Value) -> Result<(), CommandError> {
        let (name, value) = super::command_parts(cmd)?;
        match name {
            "play" => self.update(|c| {
                c.playing = true;
                c.epoch += 1;
            }),
            "pause" => self.update(|c| {
                c.playing = false;
                c.steps = 0;
                c.epoch += 1;
            }),
            "step" => {
                let n = value.unwrap_or(1.0);
                let max = self.max_step;
                if !(n.is_finite() && (1.0..=max as f64).contains(&n)) {
                    return Err(CommandError::Steps { max });
                }
                self.update(|c| {
                    c.playing = false;
                    c.steps = c.steps.saturating_add(n as u64).min(max);
                });
            }
            "speed" => {
                let v = value
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or(CommandError::Usage(
                        "speed: a factor ≥ 0 (0 = as fast as possible)",
                    ))?;
                self.update(|c| {
                    c.speed = v;
                    c.epoch += 1;
                });
            }
            other => {
                return Err(CommandError::Unknown {
                    name: other.to_string(),
                    takes: " (a swarm run takes play, pause, step, speed)",
                })
            }
        }
        Ok(())
    }
}

/// How a live run ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LiveRun {
    /// Wall seconds spent running frames (pauses and waits not counted).
    pub stepping_seconds: f64,
    /// Stopped by `stop` before the run's end.
    pub interrupted: bool,
}

fn status(c: &Control, state: &str) -> Status2d {
    Status2d {
        state: state.into(),
        speed: c.speed,
        controls: true,
    }
}

/// Runs `sim` to its end shown in `view`, paced by `control` (waits for the first page
/// before the first frame unless `stop` is set). Frames go to the view at most
/// [`super::FRAME_RATE`] times a second while a page is connected.
pub fn run_live(
    sim: &mut Simulation,
    scene: &Scene2d,
    view: &View2d,
    control: &SwarmControl,
    stop: &AtomicBool,
) -> LiveRun {
    let mut snap = seer::Snapshot::default();
    view.set_scene(scene);
    let c = control.get();
    publish(view, sim, scene, &c, "waiting", &mut snap);
    let mut run = LiveRun {
        stepping_seconds: 0.0,
        interrupted: false,
    };
    if !view.wait_for_page(stop) {
        run.interrupted = true;
        return run;
    }
    let mut epoch = u64::MAX;
    let (mut wall0, mut sim0) = (Instant::now(), sim.time());
    loop {
        if stop.load(Ordering::Relaxed) {
            run.interrupted = true;
            break;
        }
        let c = control.get();
        if c.epoch != epoch {
            epoch = c.epoch;
            (wall0, sim0) = (Instant::now(), sim.time());
        }
        let go = if c.playing {
            if c.speed > 0.0 {
                let due = sim0 + wall0.elapsed().as_secs_f64() * c.speed;
                let ahead = sim.time() - due;
                if ahead > 0.0 {
                    if view.due() {
                        publish(view, sim, scene, &c, "running", &mut snap);
                    }
                    let wait = Duration::from_secs_f64((ahead / c.speed).min(1.0 / 30.0));
                    control.wait(c, wait);
                    continue;
                }
            }
            true
        } else {
            control.take_step()
        };
        if !go {
            publish(view, sim, scene, &c, "paused", &mut snap);
            control.wait(c, Duration::from_millis(100));
            continue;
        }
        let t0 = Instant::now();
        let more = sim.step();
        run.stepping_seconds += t0.elapsed().as_secs_f64();
        if !more {
            break;
        }
        let state = if c.playing { "running" } else { "paused" };
        if view.due() || (!c.playing && control.get().steps == 0) {
            publish(view, sim, scene, &c, state, &mut snap);
        }
    }
    let c = control.get();
    let state = if run.interrupted { "stopped" } else { "ended" };
    publish(view, sim, scene, &c, state, &mut snap);
    run
}

/// Shows `sim` in `view` now, its state `state` under the controls `c`.
fn publish(
    view: &View2d,
    sim: &Simulation,
    scene: &Scene2d,
    c: &Control,
    state: &str,
    snap: &mut seer::Snapshot,
) {
    view.publish_owned(frame(sim, scene, status(c, state), snap, view.guard()));
}

/// The page of a still frame: nothing to play.
struct Still;

impl Backend for Still {
    fn command(&self, _: &serde_json::Value) -> Result<(), CommandError> {
        Err(CommandError::WatchOnly(
            "this page shows one moment of a run: there is nothing to play",
        ))
    }
}

/// Serves the 2D view of `sim`'s map (with its draw.io `map`) on `bind`, its page's commands
/// going to `backend`.
fn serve_scene(
    bind: std::net::SocketAddr,
    backend: Arc<dyn Backend>,
    sim: &Simulation,
    map: Option<&DrawioMap>,
    hello: &str,
    guard: crate::Guard,
) -> std::io::Result<(View2d, Scene2d)> {
    let view = View2d::start(bind, backend, "swarm", hello, guard)?;
    let scene = scene(sim.world(), map, &sim.name);
    view.set_scene(&scene);
    Ok((view, scene))
}

/// Serves one still frame of `sim` (with its draw.io `map`) on `bind`: the world as it is
/// now, `paused`. For looking at a world between steps (tests, benchmarks); returns the view
/// and the frame it shows.
pub fn still(
    sim: &Simulation,
    map: Option<&DrawioMap>,
    bind: std::net::SocketAddr,
    hello: &str,
) -> std::io::Result<(View2d, Frame2d)> {
    let (view, scene) = serve_scene(
        bind,
        Arc::new(Still),
        sim,
        map,
        hello,
        crate::Guard::default(),
    )?;
    let status = Status2d {
        state: "paused".into(),
        speed: 0.0,
        controls: false,
    };
    let f = frame(
        sim,
        &scene,
        status,
        &mut seer::Snapshot::default(),
        view.guard(),
    );
    view.publish(&f);
    Ok((view, f))
}

/// The page of a run its shell paces itself (a swarm linked to a Control Center): it only
/// watches.
struct Paced;

impl Backend for Paced {
    fn command(&self, _: &serde_json::Value) -> Result<(), CommandError> {
        Err(CommandError::WatchOnly(
            "this run is paced by its shell (the Control Center's time): the page only watches",
        ))
    }
}

/// A run shown live that its shell steps and paces itself: call [`Watch::show`] after each
/// frame (it publishes at most [`super::FRAME_RATE`] times a second while a page is there).
pub struct Watch {
    view: View2d,
    scene: Scene2d,
    snap: seer::Snapshot,
}

impl Watch {
    /// Serves the 2D view of `sim` (with its draw.io `map`) on `addr`; starts `sim` (see
    /// [`scene`]) if it has not started.
    pub fn start(
        addr: std::net::SocketAddr,
        sim: &mut Simulation,
        map: Option<&DrawioMap>,
        hello: &str,
    ) -> std::io::Result<Watch> {
        Self::start_guarded(addr, sim, map, hello, crate::Guard::default())
    }

    /// [`Watch::start`] within other limits than the [`crate::Guard`]'s defaults.
    pub fn start_guarded(
        addr: std::net::SocketAddr,
        sim: &mut Simulation,
        map: Option<&DrawioMap>,
        hello: &str,
        guard: crate::Guard,
    ) -> std::io::Result<Watch> {
        sim.start();
        let (view, scene) = serve_scene(addr, Arc::new(Paced), sim, map, hello, guard)?;
        Ok(Watch {
            view,
            scene,
            snap: seer::Snapshot::default(),
        })
    }

    /// The page's address.
    pub fn addr(&self) -> std::net::SocketAddr {
        self.view.addr()
    }

    /// Shows `sim` now, if a frame is due.
    pub fn show(&mut self, sim: &Simulation) {
        if self.view.due() {
            let status = Status2d {
                state: "running".into(),
                speed: 0.0,
                controls: false,
            };
            self.view.publish_owned(frame(
                sim,
                &self.scene,
                status,
                &mut self.snap,
                self.view.guard(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simrob_swarm::scenario::{Overrides, Scenario};

    fn hospital(duration: f64) -> (Scenario, Simulation) {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../scenarios/swarm/hospital.toml");
        let scenario = Scenario::load(&path).expect("hospital");
        let sim = scenario
            .build(&Overrides {
                duration: Some(duration),
                ..Overrides::default()
            })
            .expect("build");
        (scenario, sim)
    }

    /// Everything a run leaves behind that observing could change.
    fn outcome(sim: &mut Simulation) -> String {
        let poses: Vec<_> = sim.world().pose.iter().map(|(e, p)| (e.0, *p)).collect();
        let mut s = sim.finish(0.0);
        s.wall_seconds = 0.0;
        format!(
            "{poses:?} {}",
            serde_json::to_string(&s).unwrap_or_default()
        )
    }

    fn frame_within(
        sim: &Simulation,
        scene: &Scene2d,
        snap: &mut seer::Snapshot,
        guard: &crate::Guard,
    ) -> Frame2d {
        frame(sim, scene, Status2d::default(), snap, guard)
    }

    /// A frame carries at most the guard's routes and names, and a page's step at most its
    /// frames; the defaults carry more of this run.
    #[test]
    fn a_frame_and_a_step_keep_to_the_guard() {
        let (scenario, mut sim) = hospital(30.0);
        sim.start();
        let scene = scene(sim.world(), scenario.map.as_ref(), "hospital");
        let mut snap = seer::Snapshot::default();
        let (mut routes, mut names) = (0, 0);
        let tight = crate::Guard {
            max_view_routes: 1,
            max_view_names: 2,
            max_step_frames: 5,
            ..crate::Guard::default()
        };
        while sim.step() {
            let wide = frame_within(&sim, &scene, &mut snap, &crate::Guard::default());
            let narrow = frame_within(&sim, &scene, &mut snap, &tight);
            assert!(narrow.routes.len() <= 1 && narrow.names.len() <= 2);
            assert_eq!(narrow.routes.len(), wide.routes.len().min(1));
            assert_eq!(narrow.bodies, wide.bodies);
            routes = routes.max(wide.routes.len());
            names = names.max(wide.names.len());
        }
        assert!(routes > 1 && names > 2, "{routes} routes, {names} names");
        let control = SwarmControl::within(false, 1.0, &tight);
        let step = |n: u64| control.command(&serde_json::json!({"cmd": "step", "value": n}));
        assert!(step(5).is_ok());
        let refused = step(6).map_err(|e| e.to_string());
        assert_eq!(refused, Err("step: 1 to 5 frames".to_string()));
        assert_eq!(control.get().steps, 5, "a refused step changes nothing");
    }

    #[test]
    fn observing_a_run_never_changes_it() {
        let (_, mut alone) = hospital(120.0);
        while alone.step() {}
        let (scenario, mut watched) = hospital(120.0);
        let scene = scene(watched.world(), scenario.map.as_ref(), "hospital");
        let mut snap = seer::Snapshot::default();
        let mut carried = 0;
        while watched.step() {
            let f = frame_within(&watched, &scene, &mut snap, &crate::Guard::default());
            carried += f.carried.len();
        }
        assert!(
            carried > 0,
            "the run never carried an item: not a useful comparison"
        );
        assert_eq!(outcome(&mut alone), outcome(&mut watched));
    }

    /// The header of a binary frame.
    fn header(bytes: &[u8]) -> serde_json::Value {
        assert_eq!(&bytes[..4], super::super::MAGIC);
        let len = u32::from_le_bytes(bytes[4..8].try_into().expect("length")) as usize;
        serde_json::from_slice(&bytes[8..8 + len]).expect("header")
    }

    #[test]
    fn a_page_pauses_steps_and_plays_the_run_to_its_end_unchanged() {
        let (_, mut alone) = hospital(30.0);
        while alone.step() {}
        let (scenario, mut sim) = hospital(30.0);
        let control = SwarmControl::new(false, 1.0);
        let view = View2d::start(
            "127.0.0.1:0".parse().expect("addr"),
            control.clone(),
            "swarm",
            "test",
            crate::Guard::default(),
        )
        .expect("view");
        let addr = view.addr();
        let page = std::thread::spawn(move || {
            let stream = std::net::TcpStream::connect(addr).expect("connect");
            let (mut ws, _) =
                tungstenite::client::client(format!("ws://{addr}/ws"), stream).expect("ws");
            let wait = |ws: &mut tungstenite::WebSocket<std::net::TcpStream>,
                        want: &dyn Fn(&serde_json::Value) -> bool|
             -> serde_json::Value {
                loop {
                    match ws.read().expect("read") {
                        tungstenite::Message::Binary(b) => {
                            let h = header(&b);
                            if want(&h) {
                                return h;
                            }
                        }
                        tungstenite::Message::Text(t) => {
                            assert!(!t.contains("Error"), "{t}");
                        }
                        _ => {}
                    }
                }
            };
            let cmd = |ws: &mut tungstenite::WebSocket<std::net::TcpStream>,
                       c: serde_json::Value| {
                ws.send(tungstenite::Message::Text(c.to_string().into()))
                    .expect("send");
            };
            let h = wait(&mut ws, &|h| h["status"]["state"] == "paused");
            assert_eq!(h["frame"], 0);
            cmd(&mut ws, serde_json::json!({"cmd": "step", "value": 5}));
            let h = wait(&mut ws, &|h| h["frame"] == 5);
            assert_eq!(h["status"]["state"], "paused");
            cmd(&mut ws, serde_json::json!({"cmd": "step"}));
            wait(&mut ws, &|h| h["frame"] == 6);
            cmd(&mut ws, serde_json::json!({"cmd": "speed", "value": 0}));
            cmd(&mut ws, serde_json::json!({"cmd": "play"}));
            let h = wait(&mut ws, &|h| h["status"]["state"] == "ended");
            assert_eq!(h["status"]["speed"], 0.0);
            h
        });
        let stop = AtomicBool::new(false);
        let scene = scene(sim.world(), scenario.map.as_ref(), "hospital");
        let run = run_live(&mut sim, &scene, &view, &control, &stop);
        assert!(!run.interrupted);
        let last = page.join().expect("page");
        assert_eq!(last["frame"], sim.frame());
        assert_eq!(outcome(&mut alone), outcome(&mut sim));
    }

    #[test]
    fn bad_page_commands_are_refused_and_change_nothing() {
        let control = SwarmControl::new(false, 1.0);
        let before = control.get();
        for cmd in [
            serde_json::json!({"cmd": "speed", "value": -1}),
            serde_json::json!({"cmd": "speed"}),
            serde_json::json!({"cmd": "step", "value": 0}),
            serde_json::json!({"cmd": "step", "value": 1e12}),
            serde_json::json!({"cmd": "fly"}),
            serde_json::json!({"nothing": 1}),
        ] {
            assert!(control.command(&cmd).is_err(), "{cmd}");
        }
        assert_eq!(control.get(), before);
    }
}
