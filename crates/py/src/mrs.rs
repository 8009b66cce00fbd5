//! The Mobile Robot Simulator's world (`simrob._native.MrsWorld`) and the Nomad-200 reaching
//! a goal on a map (`simrob._native.NomadGoal`, a batch of worlds).

use std::path::PathBuf;

use numpy::ndarray::{Array1, Array2};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use simrob_math::Xoshiro256StarStar;
use simrob_mrs::flat::geom::{normalize_deg, Vec2};
use simrob_mrs::flat::{FlatPose, FlatWorld, Map, RobotId, RobotModel, Velocity};

use crate::{closed, read_bounded, Batch, MaxFileBytes, Whole};

fn load_map(map: Option<PathBuf>, max: MaxFileBytes) -> PyResult<Map> {
    match map {
        None => Map::parse_vector(simrob_mrs::EXAMPLE_MAP)
            .map_err(|e| PyRuntimeError::new_err(e.to_string())),
        Some(path) => {
            let bytes = read_bounded(&path, max)?;
            Map::from_bytes(&bytes)
                .map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))
        }
    }
}

/// The largest speed (in/s) and turn rate (°/s) a Python caller may ask of a Nomad-200: a
/// robot moving a map's width in a step is no experiment (the network's `V` message carries
/// at most 99.9).
const MAX_RATE: f64 = 1000.0;

/// A timestep (s) within the range the command line's `simrob mrs --timestep` takes: from
/// the SimRob server's `mintimestep` to 1 s.
fn timestep_ok(what: &str, dt: f64) -> PyResult<()> {
    let min = simrob_session::Limits::default().min_timestep;
    if dt.is_finite() && (min..=1.0).contains(&dt) {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{what} is from {min} to 1 s, found {}",
            simrob_math::Shown(dt)
        )))
    }
}

fn finite(what: &str, values: &[f64]) -> PyResult<()> {
    match values.iter().find(|v| !v.is_finite()) {
        Some(v) => Err(PyValueError::new_err(format!(
            "{what}: {v} is not a finite number"
        ))),
        None => Ok(()),
    }
}

/// The Mobile Robot Simulator's world in this process: Nomad-200 robots (radius 10 in, 16
/// sonars, 20 bumpers) on a map, in inches, degrees (heading clockwise from +x, as the
/// protocol has it) and seconds.
#[pyclass(module = "simrob._native", subclass)]
pub struct MrsWorld {
    world: Option<FlatWorld>,
}

impl MrsWorld {
    fn get(&self) -> PyResult<&FlatWorld> {
        self.world.as_ref().ok_or_else(|| closed("MrsWorld"))
    }
    fn get_mut(&mut self) -> PyResult<&mut FlatWorld> {
        self.world.as_mut().ok_or_else(|| closed("MrsWorld"))
    }
}

fn robot_id(world: &FlatWorld, id: Whole<u32>) -> PyResult<RobotId> {
    let id = id.0;
    let r = RobotId(id);
    world
        .robot(r)
        .map(|_| r)
        .ok_or_else(|| PyValueError::new_err(format!("no robot {id}")))
}

#[pymethods]
impl MrsWorld {
    /// `MrsWorld(map=None, timestep=0.01, max_file_bytes=None)`: a world on a map file (the simulator's vector
    /// text format or a BMP), or on the built-in 300 × 300 example map; `timestep` from
    /// 0.00001 to 1 s. `max_file_bytes` is the largest map file read (an int of at least 1,
    /// default `MAX_FILE`, 64 MiB): a larger one raises `ValueError` naming it, its size and
    /// the limit.
    #[new]
    #[pyo3(signature = (map=None, timestep=0.01, max_file_bytes=None))]
    fn new(
        map: Option<PathBuf>,
        timestep: f64,
        max_file_bytes: Option<MaxFileBytes>,
    ) -> PyResult<Self> {
        timestep_ok("timestep", timestep)?;
        let mut world = FlatWorld::new(load_map(map, MaxFileBytes::or_default(max_file_bytes))?);
        world.set_timestep(timestep);
        Ok(MrsWorld { world: Some(world) })
    }

    /// Map width and height (inches).
    #[getter]
    fn size(&self) -> PyResult<(f64, f64)> {
        let m = self.get()?.map();
        Ok((m.width(), m.height()))
    }

    /// Simulated seconds.
    #[getter]
    fn time(&self) -> PyResult<f64> {
        Ok(self.get()?.time())
    }

    /// Adds a Nomad-200 at (x, y) heading `heading` degrees; returns its id. A place that
    /// overlaps a wall or a robot raises `ValueError`.
    #[pyo3(signature = (x, y, heading=0.0))]
    fn add_robot(&mut self, x: f64, y: f64, heading: f64) -> PyResult<u32> {
        finite("pose", &[x, y, heading])?;
        self.get_mut()?
            .add_robot(RobotModel::NOMAD_200, FlatPose::new(x, y, heading))
            .map(|r| r.0)
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Moves robot `id` to (x, y, heading).
    fn place(&mut self, id: Whole<u32>, x: f64, y: f64, heading: f64) -> PyResult<()> {
        finite("pose", &[x, y, heading])?;
        let w = self.get_mut()?;
        let r = robot_id(w, id)?;
        w.place_robot(r, FlatPose::new(x, y, heading))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Removes robot `id`.
    fn remove_robot(&mut self, id: Whole<u32>) -> PyResult<()> {
        let w = self.get_mut()?;
        let r = robot_id(w, id)?;
        w.remove_robot(r);
        Ok(())
    }

    /// Sets robot `id`'s speed (inches/s, negative backwards) and turn rate (degrees/s,
    /// positive clockwise), each at most 1000 in size; they persist.
    fn set_velocity(&mut self, id: Whole<u32>, forward: f64, turn: f64) -> PyResult<()> {
        finite("velocity", &[forward, turn])?;
        if let Some(v) = [forward, turn].into_iter().find(|v| v.abs() > MAX_RATE) {
            return Err(PyValueError::new_err(format!(
                "velocity: {} is more than {MAX_RATE} in size (in/s or °/s)",
                simrob_math::Shown(v)
            )));
        }
        let w = self.get_mut()?;
        let r = robot_id(w, id)?;
        w.set_velocity(r, Velocity::new(forward, turn));
        Ok(())
    }

    /// Runs `n` fixed steps (the GIL released meanwhile). Ctrl-C stops it with
    /// `KeyboardInterrupt`, the steps run so far kept.
    #[pyo3(signature = (n=Whole(1)), text_signature = "($self, n=1)")]
    fn step(&mut self, py: Python<'_>, n: Whole<u64>) -> PyResult<()> {
        let n = n.0;
        let w = self.get_mut()?;
        crate::run_slices(py, n, |py, left| {
            Ok(py.detach(|| {
                crate::run_for_a_while(w, left, |w| {
                    w.step();
                    true
                })
            }))
        })?;
        Ok(())
    }

    /// `(ids, poses)`: `ids` uint32, `poses` an `(n, 3)` float64 array of x, y (inches) and
    /// heading (degrees).
    fn poses<'py>(&self, py: Python<'py>) -> PyResult<crate::Table<'py>> {
        let w = self.get()?;
        let mut ids = Vec::new();
        let mut flat = Vec::new();
        for (id, r) in w.robots() {
            ids.push(id.0);
            flat.extend_from_slice(&[r.pose.x, r.pose.y, r.pose.heading_deg]);
        }
        crate::table(py, ids, flat, 3)
    }

    /// Robot `id`'s 16 sonar readings (inches from its surface, 5 to 110), sonar 0 ahead,
    /// then clockwise.
    fn sonars<'py>(&self, py: Python<'py>, id: Whole<u32>) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let w = self.get()?;
        let r = robot_id(w, id)?;
        let s = w.sonars(r).unwrap_or_default();
        Ok(Array1::from_vec(s).into_pyarray(py))
    }

    /// Robot `id`'s 20 bumpers (True = closed), bumper 0 at the front, then clockwise.
    fn bumpers<'py>(
        &self,
        py: Python<'py>,
        id: Whole<u32>,
    ) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let w = self.get()?;
        let r = robot_id(w, id)?;
        let mask = w.bumpers(r).unwrap_or(0);
        let n = RobotModel::NOMAD_200.bumper_count;
        let v: Vec<bool> = (0..n).map(|i| mask >> i & 1 == 1).collect();
        Ok(Array1::from_vec(v).into_pyarray(py))
    }

    /// Every robot's 16 sonar readings at once: an `(n, 16)` float64 array, a row a robot
    /// in the order of `poses()`, each row as `sonars(id)` gives it (the GIL released).
    fn all_sonars<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let w = self.get()?;
        let k = RobotModel::NOMAD_200.sonar_count;
        let flat = py.detach(|| {
            let mut flat = Vec::with_capacity(w.robots().count() * k);
            for (id, _) in w.robots() {
                let mut s = w.sonars(id).unwrap_or_default();
                s.resize(k, 0.0);
                flat.extend_from_slice(&s);
            }
            flat
        });
        let n = flat.len() / k;
        Array2::from_shape_vec((n, k), flat)
            .map(|a| a.into_pyarray(py))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))
    }

    /// Every robot's 20 bumpers at once: an `(n, 20)` bool array, a row a robot in the
    /// order of `poses()`, each row as `bumpers(id)` gives it.
    fn all_bumpers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<bool>>> {
        let w = self.get()?;
        let k = RobotModel::NOMAD_200.bumper_count;
        let mut flat = Vec::new();
        for (id, _) in w.robots() {
            let mask = w.bumpers(id).unwrap_or(0);
            flat.extend((0..k).map(|i| mask >> i & 1 == 1));
        }
        let n = flat.len() / k;
        Array2::from_shape_vec((n, k), flat)
            .map(|a| a.into_pyarray(py))
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))
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

/// Observation size of the Nomad task.
pub const NOMAD_OBS: usize = 16 + 20 + 3 + 2;
/// The robot is at its goal when its centre is this close (inches).
pub const GOAL_RADIUS: f64 = 20.0;
/// A goal is put at least this far from the start (inches).
const GOAL_MIN_START: f64 = 60.0;

struct NomadRun {
    world: FlatWorld,
    robot: RobotId,
    goal: Vec2,
    prev_distance: f64,
    velocity: Velocity,
}

/// The Nomad-200 driving to a goal on a map: `n` worlds stepped together in Rust.
#[pyclass(module = "simrob._native", subclass)]
pub struct NomadGoal {
    base: FlatWorld,
    max_speed: f64,
    max_turn: f64,
    runs: Batch<NomadRun>,
}

impl NomadRun {
    fn distance(&self) -> f64 {
        self.world
            .robot(self.robot)
            .map(|r| (self.goal - r.pose.position()).length())
            .unwrap_or(f64::INFINITY)
    }

    fn observe(&self, out: &mut [f32], max_speed: f64, max_turn: f64) {
        let model = RobotModel::NOMAD_200;
        let Some(robot) = self.world.robot(self.robot) else {
            return;
        };
        let sonars = self.world.sonars(self.robot).unwrap_or_default();
        for (o, s) in out[..16].iter_mut().zip(&sonars) {
            *o = (s / model.sonar_max) as f32;
        }
        for (i, o) in out[16..36].iter_mut().enumerate() {
            *o = f32::from(u8::from(robot.bumpers >> i & 1 == 1));
        }
        let to_goal = self.goal - robot.pose.position();
        let map = self.world.map();
        let diag = map.width().hypot(map.height());
        let bearing = normalize_deg(to_goal.heading_deg() - robot.pose.heading_deg).to_radians();
        out[36] = (to_goal.length() / diag) as f32;
        out[37] = bearing.cos() as f32;
        out[38] = bearing.sin() as f32;
        out[39] = (self.velocity.forward / max_speed) as f32;
        out[40] = (self.velocity.turn / max_turn) as f32;
    }
}

fn free_point(world: &FlatWorld, rng: &mut Xoshiro256StarStar, radius: f64) -> Option<Vec2> {
    let m = world.map();
    (0..10_000).find_map(|_| {
        let p = Vec2::new(rng.next_f64() * m.width(), rng.next_f64() * m.height());
        world.is_free(p, radius, None).then_some(p)
    })
}

#[pymethods]
impl NomadGoal {
    /// `NomadGoal(n=1, map=None, dt=0.1, max_speed=24.0, max_turn=60.0, max_file_bytes=None)`:
    /// `n` worlds on a
    /// map file (or the built-in example map), each with one Nomad-200; a step lasts `dt` s
    /// at speed `action[0] * max_speed` in/s and turn rate `action[1] * max_turn` °/s.
    /// `max_file_bytes` is the largest map file read (as `MrsWorld`'s).
    #[new]
    #[pyo3(
        signature = (n=Whole(1), map=None, dt=0.1, max_speed=24.0, max_turn=60.0, max_file_bytes=None),
        text_signature = "(n=1, map=None, dt=0.1, max_speed=24.0, max_turn=60.0, max_file_bytes=None)"
    )]
    fn new(
        n: Whole<usize>,
        map: Option<PathBuf>,
        dt: f64,
        max_speed: f64,
        max_turn: f64,
        max_file_bytes: Option<MaxFileBytes>,
    ) -> PyResult<Self> {
        let runs = Batch::new("NomadGoal", n.0)?;
        timestep_ok("dt", dt)?;
        for (name, v) in [("max_speed", max_speed), ("max_turn", max_turn)] {
            if !(v.is_finite() && v > 0.0 && v <= MAX_RATE) {
                return Err(PyValueError::new_err(format!(
                    "{name} is above 0 and at most {MAX_RATE}"
                )));
            }
        }
        let mut base = FlatWorld::new(load_map(map, MaxFileBytes::or_default(max_file_bytes))?);
        base.set_timestep(dt);
        Ok(NomadGoal {
            base,
            max_speed,
            max_turn,
            runs,
        })
    }

    /// The number of worlds.
    fn __len__(&self) -> PyResult<usize> {
        self.runs.len()
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.runs.len().is_err()
    }

    /// Resets world `i` from `seed` (start pose and goal drawn on free ground); returns its
    /// observation.
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        i: Whole<usize>,
        seed: Whole<u64>,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        let i = self.runs.index(i.0)?;
        let mut rng = Xoshiro256StarStar::new(seed.0);
        let radius = RobotModel::NOMAD_200.radius + 1.0;
        let mut world = self.base.clone();
        let start = free_point(&world, &mut rng, radius)
            .ok_or_else(|| PyValueError::new_err("the map has no room for a Nomad-200"))?;
        let goal = (0..10_000)
            .find_map(|_| {
                free_point(&world, &mut rng, radius)
                    .filter(|g| (*g - start).length() >= GOAL_MIN_START)
            })
            .ok_or_else(|| PyValueError::new_err("the map has no room for a goal"))?;
        let heading = rng.next_f64() * 360.0;
        let robot = world
            .add_robot(
                RobotModel::NOMAD_200,
                FlatPose::new(start.x, start.y, heading),
            )
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let mut run = NomadRun {
            world,
            robot,
            goal,
            prev_distance: 0.0,
            velocity: Velocity::ZERO,
        };
        run.prev_distance = run.distance();
        let mut obs = vec![0f32; NOMAD_OBS];
        run.observe(&mut obs, self.max_speed, self.max_turn);
        self.runs.put(i, run);
        Ok(Array1::from_vec(obs).into_pyarray(py))
    }

    /// Steps the worlds with `actions` (an `(n, 2)` array in [-1, 1]: speed, turn rate),
    /// every world or those `active` (an `(n,)` bool array) names. Returns `(obs (n, 41)
    /// float32, reward (n,) float64, terminated (n,) bool)`, zeros for a world left out. A
    /// world whose episode has ended must be reset (or left out) before it is stepped again.
    #[pyo3(signature = (actions, active=None))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: crate::Actions<'py>,
        active: crate::Active<'py>,
    ) -> PyResult<crate::BatchStep<'py>> {
        let (max_speed, max_turn) = (self.max_speed, self.max_turn);
        self.runs
            .step(py, &actions, &active, NOMAD_OBS, |run, a, obs| {
                run.velocity = Velocity::new(a[0] * max_speed, a[1] * max_turn);
                run.world.set_velocity(run.robot, run.velocity);
                run.world.step();
                let d = run.distance();
                let bumped = run.world.bumpers(run.robot).unwrap_or(0) != 0;
                let mut r = (run.prev_distance - d) / 10.0 - 0.01;
                if bumped {
                    r -= 0.5;
                }
                run.prev_distance = d;
                let reached = d < GOAL_RADIUS;
                if reached {
                    r += 10.0;
                }
                run.observe(obs, max_speed, max_turn);
                (r, reached)
            })
    }

    /// World `i`'s robot pose (x, y in inches, heading in degrees) and goal (x, y).
    #[allow(clippy::type_complexity)]
    fn state(&self, i: Whole<usize>) -> PyResult<((f64, f64, f64), (f64, f64))> {
        let run = self.runs.get(i.0)?;
        let r = run
            .world
            .robot(run.robot)
            .ok_or_else(|| PyRuntimeError::new_err("the robot is gone"))?;
        Ok((
            (r.pose.x, r.pose.y, r.pose.heading_deg),
            (run.goal.x, run.goal.y),
        ))
    }

    /// Map width and height (inches).
    #[getter]
    fn size(&self) -> PyResult<(f64, f64)> {
        self.runs.len()?;
        Ok((self.base.map().width(), self.base.map().height()))
    }

    /// Frees the worlds; using them afterwards raises `RuntimeError`.
    fn close(&mut self) {
        self.runs.close();
    }
}
