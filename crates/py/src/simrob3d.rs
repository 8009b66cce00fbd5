//! The 3D SimRob world (`simrob._native.World`) and the SumBot reaching the ball
//! (`simrob._native.SumBotBall`, a batch of worlds).

use std::path::{Path, PathBuf};

use numpy::ndarray::{Array1, Array2};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyFileNotFoundError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use simrob_math::Xoshiro256StarStar;
use simrob_protocol::{
    decode_datagram, CommandKeys, ControlRequest, EntityId, EntityRequest, EntitySpec,
    MotorCommand, Request,
};
use simrob_server::files::{read_config, ConfigFileError};
use simrob_session::{Limits, ServerConfig};
use simrob_world::{World, WorldConfig};

use crate::{closed, read_bounded, Batch, MaxFileBytes, Whole};

/// The default SumBot scene: the SimRob manual's materials, field, SumBot and ball.
const SOCCER_XML: &str = include_str!("../../../scenarios/soccer.xml");

/// `(ids, poses)` of those of `ids` that have a pose in `world`: `poses` an `(n, 6)`
/// float64 array of x, y, z and roll, pitch, yaw.
fn pose_table<'py>(
    py: Python<'py>,
    world: &World,
    ids: impl IntoIterator<Item = EntityId>,
) -> PyResult<crate::Table<'py>> {
    let mut found = Vec::new();
    let mut flat = Vec::new();
    for id in ids {
        if let Some((p, r)) = world.entity_pose(id) {
            found.push(id.0);
            flat.extend_from_slice(&p);
            flat.extend_from_slice(&r);
        }
    }
    crate::table(py, found, flat, 6)
}

/// Decodes SimRob XML messages; the first bad one is a `ValueError` naming it.
fn decode(text: &[u8], origin: &str) -> PyResult<Vec<Request>> {
    decode_datagram(text, &CommandKeys::default())
        .into_iter()
        .enumerate()
        .map(|(n, r)| {
            r.map_err(|e| PyValueError::new_err(format!("{origin}: request {}: {e}", n + 1)))
        })
        .collect()
}

/// Applies `requests` as a server would (see [`simrob_server::local`]): Save and Load name
/// plain files in `base`; returns the confirmations. `origin` starts an error's message.
fn apply_all(
    world: &mut World,
    limits: &Limits,
    requests: &[Request],
    base: &Path,
    origin: &str,
) -> PyResult<Vec<String>> {
    simrob_server::local::apply_requests(
        world,
        limits,
        requests,
        base,
        "the scenario's folder (or, for request, the current directory)",
    )
    .map_err(|e| PyValueError::new_err(format!("{origin}: {e}")))
}

fn read_text(path: &Path, max: MaxFileBytes) -> PyResult<String> {
    let bytes = read_bounded(path, max)?;
    String::from_utf8(bytes)
        .map_err(|_| PyValueError::new_err(format!("{} is not UTF-8 text", path.display())))
}

/// A 3D SimRob world in this process: the physics world a `simrob serve` shares with its
/// agents, without the server. Requests are the SimRob manual's XML messages.
#[pyclass(module = "simrob._native", name = "World", subclass)]
pub struct World3d {
    world: Option<World>,
    /// What a request may ask: a server's limits (`maxvelocity`, `maxposition`, …).
    limits: Limits,
    /// The largest file `load` reads (`max_file_bytes=`).
    max_file: MaxFileBytes,
}

impl World3d {
    fn get(&self) -> PyResult<&World> {
        self.world.as_ref().ok_or_else(|| closed("World"))
    }
    fn get_mut(&mut self) -> PyResult<&mut World> {
        self.world.as_mut().ok_or_else(|| closed("World"))
    }
}

#[pymethods]
impl World3d {
    /// `World(scenario=None, config=None, max_file_bytes=None)`: an empty world, or one set up by a scenario file
    /// of SimRob XML messages (applied in order). The world is initialized (it advances)
    /// unless the scenario leaves it in step mode. `config` is a server configuration file
    /// (as `simrob serve --config` takes): its world defaults and limits apply. Requests are
    /// held to a server's limits (`maxvelocity`, `maxposition`, `maxentities`, …; the
    /// defaults without `config`): one past them raises `ValueError` and does not run.
    /// `max_file_bytes` is the largest scenario file read, and the largest file `load` reads
    /// later (an int of at least 1, default `MAX_FILE`, 64 MiB): a larger one raises
    /// `ValueError` naming it, its size and the limit. A save file the scenario's own `Load`
    /// names is held to `config`'s `maxsavefilebytes` instead, as on a server.
    #[new]
    #[pyo3(signature = (scenario=None, config=None, max_file_bytes=None))]
    fn new(
        scenario: Option<PathBuf>,
        config: Option<PathBuf>,
        max_file_bytes: Option<MaxFileBytes>,
    ) -> PyResult<Self> {
        let max_file = MaxFileBytes::or_default(max_file_bytes);
        let config = match config {
            Some(path) => read_config(&path).map_err(|e| match e {
                ConfigFileError::Read { missing: true, .. } => {
                    PyFileNotFoundError::new_err(e.to_string())
                }
                e => PyValueError::new_err(e.to_string()),
            })?,
            None => ServerConfig::default(),
        };
        let limits = config.limits;
        let mut world = World::new(config.world);
        if let Some(path) = scenario {
            let bytes = read_bounded(&path, max_file)?;
            let requests = decode(&bytes, &path.display().to_string())?;
            let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
            let origin = path.display().to_string();
            apply_all(&mut world, &limits, &requests, &base, &origin)?;
            if !world.modes().initialized {
                world
                    .apply_control(&ControlRequest::InitializeSimulation)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
            }
        }
        Ok(World3d {
            world: Some(world),
            limits,
            max_file,
        })
    }

    /// Applies SimRob XML messages (one or more `<Message>` elements, as a scenario file holds
    /// them); returns the confirmations. Save and Load name plain files in the current
    /// directory (no directories, no leading dot; `save`/`load` take any path). A bad message
    /// raises `ValueError`; the messages before it stay applied.
    fn request(&mut self, xml: &str) -> PyResult<Vec<String>> {
        self.get()?;
        let requests = decode(xml.as_bytes(), "request")?;
        let limits = self.limits.clone();
        apply_all(
            self.get_mut()?,
            &limits,
            &requests,
            Path::new("."),
            "request",
        )
    }

    /// Runs `n` iterations (the GIL released meanwhile); returns how many ran (fewer when
    /// the world is not initialized or is in step mode). Ctrl-C stops it with
    /// `KeyboardInterrupt`, the iterations run so far kept.
    #[pyo3(signature = (n=Whole(1)), text_signature = "($self, n=1)")]
    fn step(&mut self, py: Python<'_>, n: Whole<u64>) -> PyResult<u64> {
        let n = n.0;
        let world = self.get_mut()?;
        crate::run_slices(py, n, |py, left| {
            Ok(py.detach(|| crate::run_for_a_while(world, left, |w| w.advance())))
        })
    }

    /// Sets the wheel speeds (rad/s) of robot `entity`: `speeds[i]` drives wheel joint `i`
    /// (each finite and within `maxvelocity`, 10 000 by default).
    fn set_wheels(&mut self, entity: Whole<u32>, speeds: Vec<f64>) -> PyResult<()> {
        let entity = entity.0;
        if speeds.is_empty() {
            return Err(PyValueError::new_err(
                "set_wheels with no speeds: give one a wheel joint, from joint 0",
            ));
        }
        if let Some(bad) = speeds.iter().find(|v| !v.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "wheel speed {bad} is not a finite number"
            )));
        }
        let motors = speeds
            .iter()
            .enumerate()
            .map(|(i, &value)| MotorCommand {
                wheel_joint_id: i as u32,
                value,
            })
            .collect();
        let request = Request::Entity {
            request: EntityRequest::RobotMotorControl {
                entity_id: EntityId(entity),
                motors,
            },
            response: None,
        };
        let limits = &self.limits;
        let world = self.world.as_mut().ok_or_else(|| closed("World"))?;
        limits
            .check(&request, world)
            .map_err(|e| PyValueError::new_err(format!("set_wheels: {e}")))?;
        world
            .apply(&request)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(())
    }

    /// Iterations run so far.
    #[getter]
    fn iteration(&self) -> PyResult<u64> {
        Ok(self.get()?.iteration())
    }

    /// Simulated seconds so far.
    #[getter]
    fn time(&self) -> PyResult<f64> {
        Ok(self.get()?.sim_time())
    }

    /// The ids of the entities (fields included), in id order.
    fn entity_ids(&self) -> PyResult<Vec<u32>> {
        Ok(self.get()?.entity_ids().map(|e| e.0).collect())
    }

    /// The kind of entity `id`: "Robot", "Ball", "Field" or "Humanoid".
    fn kind(&self, id: Whole<u32>) -> PyResult<String> {
        let id = id.0;
        self.get()?
            .entity_spec(EntityId(id))
            .map(|s| s.type_name().to_string())
            .ok_or_else(|| PyValueError::new_err(format!("no entity {id}")))
    }

    /// `(ids, poses)`: the robots and balls (not fields), `ids` a `uint32` array and `poses`
    /// an `(n, 6)` float64 array of x, y, z (m) and roll, pitch, yaw (rad).
    fn poses<'py>(&self, py: Python<'py>) -> PyResult<crate::Table<'py>> {
        let world = self.get()?;
        let ids = world
            .entity_ids()
            .filter(|&id| !matches!(world.entity_spec(id), Some(EntitySpec::Field { .. })));
        pose_table(py, world, ids)
    }

    /// Every body: an `(n, 14)` float64 array of entity id, body id, x, y, z, roll, pitch,
    /// yaw, linear velocity (3, m/s) and angular velocity (3, rad/s), in world coordinates.
    fn bodies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let snap = self.get()?.snapshot();
        let mut flat = Vec::with_capacity(snap.bodies.len() * 14);
        for b in &snap.bodies {
            flat.push(f64::from(b.entity_id.0));
            flat.push(f64::from(b.id));
            flat.extend_from_slice(&b.position);
            flat.extend_from_slice(&b.rotation);
            flat.extend_from_slice(&b.linear_velocity);
            flat.extend_from_slice(&b.angular_velocity);
        }
        let n = snap.bodies.len();
        let a = Array2::from_shape_vec((n, 14), flat)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(a.into_pyarray(py))
    }

    /// The world as the SimRob save file's XML.
    fn save_xml(&self) -> PyResult<String> {
        Ok(self.get()?.save_xml())
    }

    /// Replaces the world with a saved one (XML of `save_xml` or a save file's text).
    fn load_xml(&mut self, xml: &str) -> PyResult<()> {
        let limits = self.limits.clone();
        simrob_server::local::load_within(self.get_mut()?, xml, &limits)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Saves the world to a file.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        std::fs::write(&path, self.get()?.save_xml())
            .map_err(|e| crate::os_error(&format!("cannot save to {}", path.display()), &e))
    }

    /// Loads a saved world from a file (of at most the constructor's `max_file_bytes`).
    fn load(&mut self, path: PathBuf) -> PyResult<()> {
        let xml = read_text(&path, self.max_file)?;
        let limits = self.limits.clone();
        simrob_server::local::load_within(self.get_mut()?, &xml, &limits)
            .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))
    }

    /// Frees the world; using it afterwards raises `RuntimeError`.
    fn close(&mut self) {
        self.world = None;
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.world.is_none()
    }
}

/// The SumBot task's constants.
const SUMBOT: EntityId = EntityId(3);
/// Observation size of the SumBot task.
pub const SUMBOT_OBS: usize = 10;
/// Where the ball is put at a reset: x and y uniform in these ranges (m); never closer
/// than [`BALL_MIN_START`] to the robot.
const BALL_X: (f64, f64) = (-1.0, 1.0);
const BALL_Y: (f64, f64) = (-0.7, 0.7);
const BALL_MIN_START: f64 = 0.3;
/// The robot reaches the ball when their centres are this close (m).
pub const REACH: f64 = 0.12;

/// One SumBot world of the task.
struct SumBotWorld {
    world: World,
    ball: EntityId,
    prev_distance: f64,
}

/// The SumBot reaching the ball: `n` worlds stepped together in Rust.
#[pyclass(module = "simrob._native", subclass)]
pub struct SumBotBall {
    template: Vec<Request>,
    ball: EntityId,
    frame_skip: u32,
    max_wheel_speed: f64,
    worlds: Batch<SumBotWorld>,
}

fn random_in(rng: &mut Xoshiro256StarStar, (lo, hi): (f64, f64)) -> f64 {
    lo + (hi - lo) * rng.next_f64()
}

impl SumBotBall {
    /// A new world with the ball at `ball` (x, y).
    fn build(&self, ball: [f64; 2]) -> Result<SumBotWorld, String> {
        let mut world = World::new(WorldConfig::default());
        for request in &self.template {
            let request = match request {
                Request::Control {
                    request:
                        ControlRequest::CreateEntity(EntitySpec::Ball {
                            entity_id,
                            material,
                            mass,
                            position,
                            rotation,
                            radius,
                        }),
                    response,
                } if *entity_id == self.ball => &Request::Control {
                    request: ControlRequest::CreateEntity(EntitySpec::Ball {
                        entity_id: *entity_id,
                        material: *material,
                        mass: *mass,
                        position: [ball[0], ball[1], position[2]],
                        rotation: *rotation,
                        radius: *radius,
                    }),
                    response: *response,
                },
                other => other,
            };
            world.apply(request).map_err(|e| e.to_string())?;
        }
        world
            .apply_control(&ControlRequest::InitializeSimulation)
            .map_err(|e| e.to_string())?;
        let mut w = SumBotWorld {
            world,
            ball: self.ball,
            prev_distance: 0.0,
        };
        w.prev_distance = w.distance();
        Ok(w)
    }
}

impl SumBotWorld {
    fn robot(&self) -> ([f64; 3], [f64; 3]) {
        self.world
            .entity_pose(SUMBOT)
            .unwrap_or(([0.0; 3], [0.0; 3]))
    }
    fn ball_xy(&self) -> [f64; 2] {
        let (p, _) = self
            .world
            .entity_pose(self.ball)
            .unwrap_or(([0.0; 3], [0.0; 3]));
        [p[0], p[1]]
    }
    fn distance(&self) -> f64 {
        let (p, _) = self.robot();
        let b = self.ball_xy();
        (b[0] - p[0]).hypot(b[1] - p[1])
    }
    /// The observation (see the Python docs): robot x, y, cos and sin of its heading, the ball
    /// ahead and to the left in the robot's frame, the distance, the robot's forward speed
    /// and turn rate, its tilt.
    fn observe(&self, out: &mut [f32]) {
        let (p, r) = self.robot();
        let yaw = r[2];
        // Positive wheel speeds drive the SumBot along its body's -x axis: that is "ahead".
        let heading = yaw + std::f64::consts::PI;
        let (s, c) = heading.sin_cos();
        let b = self.ball_xy();
        let (dx, dy) = (b[0] - p[0], b[1] - p[1]);
        let ahead = c * dx + s * dy;
        let left = -s * dx + c * dy;
        let state = self.world.body_state(SUMBOT, 0);
        let (v, w) = state
            .map(|st| {
                (
                    c * st.linear_velocity[0] + s * st.linear_velocity[1],
                    st.angular_velocity[2],
                )
            })
            .unwrap_or((0.0, 0.0));
        let tilt = r[0].abs().max(r[1].abs());
        let vals = [p[0], p[1], c, s, ahead, left, dx.hypot(dy), v, w, tilt];
        for (o, v) in out.iter_mut().zip(vals) {
            *o = v as f32;
        }
    }
}

#[pymethods]
impl SumBotBall {
    /// `SumBotBall(n=1, frame_skip=2, max_wheel_speed=30.0)`: `n` SumBot worlds (the
    /// default scene: field, SumBot 3, ball 8); each step runs `frame_skip` iterations of
    /// 0.01 s with the wheels at `action * max_wheel_speed` rad/s.
    #[new]
    #[pyo3(
        signature = (n=Whole(1), frame_skip=Whole(2), max_wheel_speed=30.0),
        text_signature = "(n=1, frame_skip=2, max_wheel_speed=30.0)"
    )]
    fn new(n: Whole<usize>, frame_skip: Whole<u32>, max_wheel_speed: f64) -> PyResult<Self> {
        let worlds = Batch::new("SumBotBall", n.0)?;
        let frame_skip = frame_skip.0;
        if frame_skip == 0 || frame_skip > 1000 {
            return Err(PyValueError::new_err("frame_skip is 1 to 1000 iterations"));
        }
        if !(max_wheel_speed.is_finite() && max_wheel_speed > 0.0 && max_wheel_speed <= 200.0) {
            return Err(PyValueError::new_err(
                "max_wheel_speed is above 0 and at most 200 rad/s",
            ));
        }
        let template = decode(SOCCER_XML.as_bytes(), "scenarios/soccer.xml")?;
        let ball = template
            .iter()
            .find_map(|r| match r {
                Request::Control {
                    request: ControlRequest::CreateEntity(EntitySpec::Ball { entity_id, .. }),
                    ..
                } => Some(*entity_id),
                _ => None,
            })
            .ok_or_else(|| PyRuntimeError::new_err("the SumBot scene has no ball"))?;
        Ok(SumBotBall {
            template,
            ball,
            frame_skip,
            max_wheel_speed,
            worlds,
        })
    }

    /// The number of worlds.
    fn __len__(&self) -> PyResult<usize> {
        self.worlds.len()
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.worlds.len().is_err()
    }

    /// Resets world `i` from `seed` (the ball's place); returns its observation.
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        i: Whole<usize>,
        seed: Whole<u64>,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let i = self.worlds.index(i.0)?;
        let mut rng = Xoshiro256StarStar::new(seed.0);
        let ball = loop {
            let b = [random_in(&mut rng, BALL_X), random_in(&mut rng, BALL_Y)];
            // The robot starts at (0, -0.1).
            if b[0].hypot(b[1] + 0.1) >= BALL_MIN_START {
                break b;
            }
        };
        let w = py
            .detach(|| self.build(ball))
            .map_err(PyRuntimeError::new_err)?;
        let mut obs = vec![0f32; SUMBOT_OBS];
        w.observe(&mut obs);
        self.worlds.put(i, w);
        Ok(Array1::from_vec(obs).into_pyarray(py))
    }

    /// Steps the worlds with `actions` (an `(n, 2)` array in [-1, 1]: wheel joint 0 and 1),
    /// every world or those `active` (an `(n,)` bool array) names. Returns `(obs (n, 10)
    /// float32, reward (n,) float64, terminated (n,) bool)`, zeros for a world left out. A
    /// world whose episode has ended must be reset (or left out) before it is stepped again.
    #[pyo3(signature = (actions, active=None))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: crate::Actions<'py>,
        active: crate::Active<'py>,
    ) -> PyResult<crate::BatchStep<'py>> {
        let (skip, max) = (self.frame_skip, self.max_wheel_speed);
        self.worlds
            .step(py, &actions, &active, SUMBOT_OBS, |w, a, obs| {
                let motors = vec![
                    MotorCommand {
                        wheel_joint_id: 0,
                        value: a[0] * max,
                    },
                    MotorCommand {
                        wheel_joint_id: 1,
                        value: a[1] * max,
                    },
                ];
                let _ = w.world.apply_entity(&EntityRequest::RobotMotorControl {
                    entity_id: SUMBOT,
                    motors,
                });
                for _ in 0..skip {
                    w.world.advance();
                }
                let d = w.distance();
                let (_, r) = w.robot();
                let flipped = r[0].abs() > 1.2 || r[1].abs() > 1.2;
                let mut reward = 10.0 * (w.prev_distance - d) - 0.01;
                w.prev_distance = d;
                let mut ended = false;
                if d < REACH {
                    reward += 10.0;
                    ended = true;
                } else if flipped || !d.is_finite() {
                    reward -= 10.0;
                    ended = true;
                }
                w.observe(obs);
                (reward, ended)
            })
    }

    /// `(ids, poses)` of world `i`, as `World.poses`.
    fn poses<'py>(&self, py: Python<'py>, i: Whole<usize>) -> PyResult<crate::Table<'py>> {
        let w = self.worlds.get(i.0)?;
        pose_table(py, &w.world, [SUMBOT, w.ball])
    }

    /// Frees the worlds; using them afterwards raises `RuntimeError`.
    fn close(&mut self) {
        self.worlds.close();
    }
}
