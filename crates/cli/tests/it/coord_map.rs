//! `simrob coord cc --gui`: the operator's menu and the live map at once. A robot joins the
//! Control Center over TCP and reports where it is; the operator sends it a task from the
//! menu; the page (headless Chromium) draws the robot where its status says and the task's
//! square at the task's goal in the colour of the state the robot reports, as it changes.
//! Every wait is on an event (a line from the Control Center, a message, what the page
//! says); the time-outs only guard against a hang.

use crate::coord_common;
use crate::headless;

use std::io::Write;
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::mpsc::Receiver;

use coord_common::{start, GUARD};
use headless::Page;
use simrob_coord::model::{RobotInfo, RobotStatus, Running, TaskClass, TaskState};
use simrob_coord::wire::{encode, Envelope, Msg};

/// A robot speaking the General Robot Interface by hand.
struct Robot {
    id: u32,
    stream: TcpStream,
    incoming: Receiver<Msg>,
}

impl Robot {
    fn join(addr: &str, id: u32, at: (f64, f64)) -> Robot {
        let stream = TcpStream::connect(addr).expect("robot connects");
        let rx = coord_common::incoming(&stream);
        let mut r = Robot {
            id,
            stream,
            incoming: rx,
        };
        r.send(Msg::Hello {
            info: Box::new(RobotInfo {
                robot: id,
                name: "tester".into(),
                kind: "tester".into(),
                world: "swarm".into(),
                capabilities: vec![TaskClass::Movement],
                speed: 1.0,
            }),
        });
        r.status(at, None);
        r
    }

    fn send(&mut self, msg: Msg) {
        let env = Envelope {
            from: self.id,
            to: Some(0),
            msg,
        };
        self.stream
            .write_all(encode(&env).as_bytes())
            .expect("robot sends");
    }

    fn status(&mut self, at: (f64, f64), movement: Option<u64>) {
        self.send(Msg::Status {
            status: Box::new(RobotStatus {
                robot: self.id,
                time: 0.0,
                synced: false,
                x: at.0,
                y: at.1,
                heading: 0.0,
                speed: 0.0,
                battery: None,
                running: Running {
                    movement,
                    ..Running::default()
                },
                queued: u32::from(movement.is_some()),
                ok: true,
                error: None,
            }),
        });
    }

    fn state(&mut self, task: u64, state: TaskState) {
        self.send(Msg::TaskState {
            robot: self.id,
            task,
            state,
            time: 0.0,
            synced: false,
        });
    }

    /// The next task the Control Center hands this robot: its id and goal.
    fn task(&self) -> (u64, (f64, f64)) {
        loop {
            match self.incoming.recv_timeout(GUARD) {
                Ok(Msg::Task { task }) => {
                    let (x, y) = task.kind.last_point().expect("a movement task");
                    return (task.id, (x, y));
                }
                Ok(_) => {}
                Err(e) => panic!("no task came: {e}"),
            }
        }
    }
}

/// A page expression that is true once the robot is drawn in `robot` state and the task's
/// square in `rgb` at the task's goal (a pixel of its right side).
fn square_in(task: u64, rgb: [u8; 3], robot: &str) -> String {
    format!(
        "(() => {{ const f = __simrob2d.frame; const t = f && (f.tasks || []).find(t => t.id === {task}); \
         if (!t || t.x === null || __simrob2d.drawn.length !== 1 || __simrob2d.drawn[0].state !== '{robot}') return false; \
         const [sx, sy] = __simrob2d.toScreen(t.x, t.y); \
         const p = __simrob2d.pixel(sx + 10, sy); \
         return Math.abs(p[0] - {}) <= 12 && Math.abs(p[1] - {}) <= 12 && Math.abs(p[2] - {}) <= 12; }})()",
        rgb[0], rgb[1], rgb[2]
    )
}

const RUNNING: [u8; 3] = [0xe6, 0x9f, 0x00];
const ENDED: [u8; 3] = [0x00, 0x9e, 0x73];

#[test]
fn the_map_draws_a_task_at_its_goal_in_the_state_its_robot_reports() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("simrob-coord-map-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let logs = dir.join("logs");
    let mut cc = start(
        &[
            "coord",
            "cc",
            "--port",
            "0",
            "--gui=0",
            "--log-dir",
            logs.to_str().expect("a path in UTF-8"),
        ],
        true,
    );
    let gri = cc.after("listening on tcp://");
    let map = cc.after("map on http://");
    let mut robot = Robot::join(&gri, 7, (100.0, 50.0));

    let mut page = Page::open(&format!("http://{map}/"), &dir.join("profile"), 900, 700);
    page.wait_for(
        "__simrob2d.scene && __simrob2d.scene.world === 'coord' && __simrob2d.drawn.length === 1",
        "JSON.stringify({scene: __simrob2d.scene, drawn: __simrob2d.drawn})",
    );
    // The robot's body is where its status puts it (the map is shifted by its origin).
    let d = page.eval("__simrob2d.drawn[0]");
    assert_eq!(d["id"], 7);
    assert_eq!(d["state"], "idle");
    assert!(d["x"].as_f64().is_some_and(|x| x > 0.0));

    // The operator sends the robot a task from the menu; the robot takes it and runs it.
    cc.type_line("send 7 goto 160 90");
    let (task, goal) = robot.task();
    assert_eq!(goal, (160.0, 90.0));
    robot.state(task, TaskState::Queued);
    robot.state(task, TaskState::Running);
    robot.status((100.0, 50.0), Some(task));
    page.wait_for(
        &square_in(task, RUNNING, "busy"),
        "JSON.stringify({tasks: __simrob2d.frame.tasks, drawn: __simrob2d.drawn})",
    );
    // At the task's goal, as the world has it: the map's origin (which moved to take the
    // goal in) from the robot's body in the same frame.
    let t = page.eval(&format!(
        "__simrob2d.frame.tasks.find(t => t.id === {task})"
    ));
    let body = page.eval("Array.from(__simrob2d.frame.bodies.pose.slice(0, 2))");
    let ox = 100.0 - body[0].as_f64().expect("x");
    let oy = 50.0 - body[1].as_f64().expect("y");
    assert_eq!(t["state"], "running");
    assert_eq!(t["robot"], 7);
    let (tx, ty) = (t["x"].as_f64().expect("x"), t["y"].as_f64().expect("y"));
    assert!(
        (tx + ox - 160.0).abs() < 1e-3 && (ty + oy - 90.0).abs() < 1e-3,
        "the task is drawn at ({}, {}), its goal is (160, 90)",
        tx + ox,
        ty + oy
    );

    // The robot ends it: the square turns to the ended colour.
    robot.state(task, TaskState::Ended);
    robot.status((160.0, 90.0), None);
    page.wait_for(
        &square_in(task, ENDED, "idle"),
        "JSON.stringify({tasks: __simrob2d.frame.tasks})",
    );
    // The robot stands at the task's goal, inside its square: it is labelled all the same,
    // its label outside the square (it once had none: no spot next to it was free).
    page.wait_for(
        "__simrob2d.labels.some(l => l.text === __simrob2d.drawn[0].label)",
        "JSON.stringify({labels: __simrob2d.labels, robot: __simrob2d.drawn[0]})",
    );
    cc.wait_line("RUNNING→ENDED");

    // A robot on the edge of a task's square is drawn over it (a SumBot once hid under one:
    // the map said 5 robots and showed 4). TASK_MARK: the square's half side, 10 px.
    let scale = page
        .eval("__simrob2d.camera.scale")
        .as_f64()
        .expect("scale");
    let x0 = page.eval("__simrob2d.drawn[0].x").as_f64().expect("x");
    let step = 10.0 / scale;
    robot.status((160.0 + step, 90.0), None);
    page.wait_for(
        &format!("Math.abs(__simrob2d.drawn[0].x - {x0} - {step}) < 1e-3"),
        "JSON.stringify(__simrob2d.drawn)",
    );
    // Off its white heading line: a quarter turn away, half a radius out.
    let seen = page.eval(
        "(() => { const d = __simrob2d.drawn[0]; \
         const c = document.createElement('canvas').getContext('2d'); \
         c.fillStyle = d.color; c.fillRect(0, 0, 1, 1); \
         const t = d.theta + Math.PI / 2; \
         return JSON.stringify({want: Array.from(c.getImageData(0, 0, 1, 1).data), \
           got: __simrob2d.pixel(d.sx + Math.cos(t) * d.r * 0.5, d.sy + Math.sin(t) * d.r * 0.5)}); })()",
    );
    let seen: serde_json::Value =
        serde_json::from_str(seen.as_str().expect("json")).expect("colours");
    let channel = |v: &serde_json::Value, k: usize| v[k].as_i64().unwrap_or(-1);
    assert!(
        (0..3).all(|k| (channel(&seen["want"], k) - channel(&seen["got"], k)).abs() <= 12),
        "the robot on the square's edge is not drawn over it: {seen}"
    );
    cc.type_line("quit");
    let _ = std::fs::remove_dir_all(&dir);
}
