//! The swarm (`simrob._native.Swarm`: any swarm scenario file) and the drone swarm flying to
//! its targets under outside control (`simrob._native.DroneTargets`, one agent per drone).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use simrob_swarm::drones::{self, Drone, DroneState, SwarmParams};
use simrob_swarm::scenario::{bundled_names, Overrides, Scenario};
use simrob_swarm::systems::{CollisionSystem, MovementSystem, ProximitySystem, StopOnCollision};
use simrob_swarm::{
    Ctx, EntityId, Event, Payload, SimConfig, Simulation, SwarmWorld, System, Tag, Velocity,
};

use crate::{closed, Local, MaxFileBytes, Whole};
use simrob_math::Xoshiro256StarStar;

/// An entity's id and three numbers about it.
type Row = (u32, [f64; 3]);

/// A swarm run in this process: a scenario file (TOML or JSON, as `simrob swarm run`
/// takes) or a bundled scenario by name (`hospital`, `drone-swarm`, `warehouse`), built with
/// a seed, stepped frame by frame. Units: map units (x right, y down),
/// seconds, radians.
#[pyclass(module = "simrob._native", subclass)]
pub struct Swarm {
    sim: Option<Local<Simulation>>,
    /// Wall time spent in `step` and `run` (the summary's `wall_seconds`).
    wall: Duration,
}

impl Swarm {
    fn sim(&self) -> PyResult<&Local<Simulation>> {
        self.sim.as_ref().ok_or_else(|| closed("Swarm"))
    }

    /// `(ids, rows)`: three numbers per entity, read from the world by `rows` (the GIL
    /// released).
    fn rows<'py>(
        &self,
        py: Python<'py>,
        rows: fn(&SwarmWorld) -> Vec<Row>,
    ) -> PyResult<crate::Table<'py>> {
        let rows = self.sim()?.call(py, move |sim| rows(sim.world()))?;
        let ids = rows.iter().map(|r| r.0).collect();
        let flat = rows.iter().flat_map(|r| r.1).collect();
        crate::table(py, ids, flat, 3)
    }
}

#[pymethods]
impl Swarm {
    /// `Swarm(scenario, seed=None, duration=None, robots=None, full_duration=False,
    /// max_file_bytes=None, max_robots=None, max_grid_cells=None)`: the scenario's run; `seed`,
    /// `duration` (simulated seconds) and `robots` (generated scenarios) replace the file's.
    /// `max_file_bytes` is the largest scenario file read, and the largest file it names (its
    /// draw.io `map`, its `world.obstacles` map): an int of at least 1, default `MAX_FILE`
    /// (64 MiB); a larger file raises `ValueError` naming it, its size and the limit, before
    /// anything runs. `max_robots` (the robots a generated scenario may make; 50,000,000
    /// drones and 2,000,000 warehouse robots by default) and `max_grid_cells` (the cells of
    /// the world's spatial grid; 4,194,304 by default) are the command line's `--max-robots`
    /// and `--max-grid-cells`: a scenario over one raises `ValueError` saying which.
    #[new]
    #[pyo3(signature = (
        scenario, seed=None, duration=None, robots=None, full_duration=false,
        max_file_bytes=None, max_robots=None, max_grid_cells=None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        scenario: PathBuf,
        seed: Option<Whole<u64>>,
        duration: Option<f64>,
        robots: Option<Whole<usize>>,
        full_duration: bool,
        max_file_bytes: Option<MaxFileBytes>,
        max_robots: Option<Whole<usize>>,
        max_grid_cells: Option<Whole<usize>>,
    ) -> PyResult<Self> {
        let limit = MaxFileBytes::or_default(max_file_bytes).swarm();
        let build_limits = simrob_swarm::scenario::BuildLimits::given(
            max_robots.map(|n| n.0),
            max_grid_cells.map(|n| n.0),
            "max_robots=",
            "max_grid_cells=",
        )
        .map_err(|e| PyValueError::new_err(e.0))?;
        let (seed, robots) = (seed.map(|s| s.0), robots.map(|r| r.0));
        if let Some(d) = duration {
            if !(d.is_finite() && d >= 0.0) {
                return Err(PyValueError::new_err(
                    "duration is a number of seconds, 0 or more",
                ));
            }
        }
        // A bundled scenario's name (no such file here), as `simrob swarm run hospital`
        // (`Scenario::open`).
        let bundled = !scenario.is_file()
            && scenario
                .to_str()
                .is_some_and(|n| bundled_names().any(|b| b == n));
        // As the other worlds' files: a missing one is FileNotFoundError, one that is there
        // but not a regular file (a directory, a device) a ValueError.
        match std::fs::metadata(&scenario) {
            _ if bundled => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(pyo3::exceptions::PyFileNotFoundError::new_err(format!(
                    "no scenario file {}, and not a bundled scenario ({})",
                    scenario.display(),
                    bundled_names().collect::<Vec<_>>().join(", ")
                )));
            }
            Err(e) => return Err(crate::os_error(&scenario.display().to_string(), &e)),
            Ok(m) if !m.is_file() => {
                return Err(PyValueError::new_err(format!(
                    "cannot read {}: not a regular file (a device, a FIFO or a directory)",
                    scenario.display()
                )));
            }
            Ok(_) => {}
        }
        let ov = Overrides {
            duration,
            seed,
            robots,
            full_duration,
            limits: build_limits,
            ..Overrides::default()
        };
        let worker = Local::start(py, move || {
            let s =
                Scenario::open_within(&scenario, limit).map_err(|e| PyValueError::new_err(e.0))?;
            s.build(&ov).map_err(|e| PyValueError::new_err(e.0))
        })?;
        Ok(Swarm {
            sim: Some(worker),
            wall: Duration::ZERO,
        })
    }

    /// Runs `n` frames (the GIL released meanwhile); returns whether the run goes on.
    /// Ctrl-C stops it with `KeyboardInterrupt`, the frames run so far kept.
    #[pyo3(signature = (n=Whole(1)), text_signature = "($self, n=1)")]
    fn step(&mut self, py: Python<'_>, n: Whole<u64>) -> PyResult<bool> {
        let n = n.0;
        let sim = self.sim()?;
        let start = Instant::now();
        let ran = crate::run_slices(py, n, |py, left| {
            sim.call(py, move |sim| {
                crate::run_for_a_while(sim, left, |sim| sim.step())
            })
        });
        self.wall += start.elapsed();
        ran?;
        self.sim()?.call(py, |sim| !sim.is_finished())
    }

    /// Runs to the end (the GIL released); returns the summary as `summary()` does (its
    /// `wall_seconds` the wall time of every `step` and `run` of this swarm). Ctrl-C
    /// stops it with `KeyboardInterrupt`, the frames run so far kept (the run not ended).
    fn run(&mut self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let sim = self.sim()?;
        let start = Instant::now();
        let ran = crate::run_slices(py, u64::MAX, |py, left| {
            sim.call(py, move |sim| {
                crate::run_for_a_while(sim, left, |sim| sim.step())
            })
        });
        self.wall += start.elapsed();
        ran?;
        let wall = self.wall.as_secs_f64();
        let summary = self.sim()?.call(py, move |sim| sim.finish(wall))?;
        to_py(py, &summary.to_json(Some(summary.ended_by(false))))
    }

    /// Simulated seconds.
    #[getter]
    fn time(&self, py: Python<'_>) -> PyResult<f64> {
        self.sim()?.call(py, |sim| sim.time())
    }

    /// Frames run.
    #[getter]
    fn frame(&self, py: Python<'_>) -> PyResult<u64> {
        self.sim()?.call(py, |sim| sim.frame())
    }

    /// Whether the run has ended.
    #[getter]
    fn finished(&self, py: Python<'_>) -> PyResult<bool> {
        self.sim()?.call(py, |sim| sim.is_finished())
    }

    /// `(ids, poses)`: every entity with a pose; `ids` uint32, `poses` an `(n, 3)` float64
    /// array of x, y, heading.
    fn poses<'py>(&self, py: Python<'py>) -> PyResult<crate::Table<'py>> {
        self.rows(py, |w| {
            w.pose
                .iter()
                .map(|(e, p)| (e.0, [p.x, p.y, p.theta]))
                .collect()
        })
    }

    /// `(ids, velocities)`: every entity that moves; `velocities` an `(n, 3)` float64 array
    /// of vx, vy (map units/s) and angular velocity (rad/s).
    fn velocities<'py>(&self, py: Python<'py>) -> PyResult<crate::Table<'py>> {
        self.rows(py, |w| {
            w.vel.iter().map(|(e, v)| (e.0, [v.x, v.y, v.w])).collect()
        })
    }

    /// The type ("robot", "drone", "poi", …) and name ("" if none) of entity `id`.
    fn entity(&self, py: Python<'_>, id: Whole<u32>) -> PyResult<(String, String)> {
        let id = id.0;
        self.sim()?
            .call(py, move |sim| {
                let e = EntityId(id);
                if !sim.world().is_alive(e) {
                    return None;
                }
                let name = sim.world().name.get(e).cloned().unwrap_or_default();
                Some((sim.world().kind_name(e).to_string(), name))
            })?
            .ok_or_else(|| PyValueError::new_err(format!("no entity {id}")))
    }

    /// The log lines written since the last call (the run's events in words):
    /// `(t, entity id or None, text)`.
    fn drain_log(&mut self, py: Python<'_>) -> PyResult<Vec<(f64, Option<u32>, String)>> {
        self.sim()?.call(py, |sim| {
            std::mem::take(&mut sim.ctx.logs)
                .into_iter()
                .map(|l| (l.t, l.entity, l.text))
                .collect()
        })
    }

    /// The figures so far (arrived, crashed, collisions, tasks done, …) as a dict, the keys
    /// of `simrob swarm run --json`'s summary; `wall_seconds` is the wall time spent in
    /// `step` and `run` so far, `ended_by` why the run ended ("all work done" or
    /// "duration"; None while it goes on).
    fn summary(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let wall = self.wall.as_secs_f64();
        let (s, finished) = self
            .sim()?
            .call(py, move |sim| (sim.summary(wall), sim.is_finished()))?;
        to_py(py, &s.to_json(finished.then(|| s.ended_by(false))))
    }

    /// Frees the run; using it afterwards raises `RuntimeError`.
    fn close(&mut self) {
        self.sim = None;
    }

    /// Whether `close` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.sim.is_none()
    }
}

fn to_py(py: Python<'_>, value: &impl serde::Serialize) -> PyResult<Py<PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}

/// Marks drones that collided as crashed (the stop-on-collision reaction has stopped them).
struct CrashMarker;

impl System for CrashMarker {
    fn name(&self) -> &str {
        "crash-marker"
    }
    fn wants(&self, event: &Event) -> bool {
        event.tag == Tag::COLLISION && event.entity.is_none()
    }
    fn react(&mut self, event: &Event, ctx: &mut Ctx) {
        let Payload::Pair(a, b) = event.payload else {
            return;
        };
        let drones = ctx.world.custom_mut::<Drone>();
        for e in [a, b] {
            if let Some(d) = drones.get_mut(e) {
                d.state = DroneState::Crashed;
            }
        }
    }
}

/// Observation size per drone.
pub const DRONE_OBS: usize = 4 + PROXIMITY_BEAMS as usize;
const PROXIMITY_BEAMS: u16 = 8;
const PROXIMITY_RANGE: f64 = 20.0;
const FPS: f64 = 24.0;
/// Largest speed per axis (map units per frame), HMR Sim's.
const MAX_STEP: f64 = 2.5;
/// A drone within this distance of its target has arrived (map units).
const ARRIVE: f64 = 5.0;

struct DroneRun {
    sim: Simulation,
    ids: Vec<EntityId>,
    prev_distance: Vec<f64>,
    done: Vec<bool>,
}

/// The drone swarm of HMR Sim's example with the controller left to the caller: `n` drones
/// take off from a grid and each flies to its own target on rings; a collision stops both
/// drones (crashed).
#[pyclass(module = "simrob._native", subclass)]
pub struct DroneTargets {
    drones: usize,
    run: Option<Local<Option<DroneRun>>>,
}

/// How far (map units, each way) a reset moves each drone from its place on the take-off
/// grid, drawn from the seed: the grid's pitch is 20 and a drone 5 across, so drones never
/// start touching.
const START_JITTER: f64 = 6.0;

fn build_drones(n: usize, seed: u64) -> DroneRun {
    let lay = drones::layout(n);
    let mut world = SwarmWorld::new(lay.width, lay.height);
    let params = SwarmParams {
        drones: n,
        proximity_beams: PROXIMITY_BEAMS,
        proximity_range: PROXIMITY_RANGE,
        ..SwarmParams::default()
    };
    let ids = drones::populate(&mut world, &params);
    let mut rng = Xoshiro256StarStar::new(seed);
    for &e in &ids {
        let dx = START_JITTER * (2.0 * rng.next_f64() - 1.0);
        let dy = START_JITTER * (2.0 * rng.next_f64() - 1.0);
        if let Some(p) = world.pose.get_mut(e) {
            p.x += dx;
            p.y += dy;
        }
        // A drone without a target (more drones than targets) hovers where it starts.
        if let Some(d) = world.custom_mut::<Drone>().get_mut(e) {
            if d.state == DroneState::Idle {
                d.target = (d.target.0 + dx, d.target.1 + dy);
            }
        }
    }
    let config = SimConfig {
        fps: FPS,
        duration: None,
        seed,
        end_when_done: false,
        ..SimConfig::default()
    };
    let mut sim = Simulation::new(world, config);
    sim.add_system(Box::new(MovementSystem));
    sim.add_system(Box::new(CollisionSystem::default()));
    sim.add_system(Box::new(StopOnCollision));
    sim.add_system(Box::new(CrashMarker));
    sim.add_system(Box::new(ProximitySystem::default()));
    sim.start();
    let mut run = DroneRun {
        prev_distance: vec![0.0; ids.len()],
        done: ids
            .iter()
            .map(|&e| {
                sim.world()
                    .custom::<Drone>()
                    .and_then(|c| c.get(e))
                    .is_none_or(|d| d.state == DroneState::Idle)
            })
            .collect(),
        sim,
        ids,
    };
    for i in 0..run.ids.len() {
        run.prev_distance[i] = run.distance(i);
    }
    run
}

impl DroneRun {
    fn drone(&self, i: usize) -> Drone {
        self.sim
            .world()
            .custom::<Drone>()
            .and_then(|c| c.get(self.ids[i]).copied())
            .unwrap_or_default()
    }
    fn distance(&self, i: usize) -> f64 {
        let d = self.drone(i);
        let p = self
            .sim
            .world()
            .pose
            .get(self.ids[i])
            .copied()
            .unwrap_or_default();
        (d.target.0 - p.x).hypot(d.target.1 - p.y)
    }
    fn observe(&self, out: &mut [f32]) {
        let w = self.sim.world();
        let vmax = MAX_STEP * FPS;
        for (i, &e) in self.ids.iter().enumerate() {
            let o = &mut out[i * DRONE_OBS..(i + 1) * DRONE_OBS];
            let d = self.drone(i);
            let p = w.pose.get(e).copied().unwrap_or_default();
            let v = w.vel.get(e).copied().unwrap_or_default();
            o[0] = ((d.target.0 - p.x) / 100.0) as f32;
            o[1] = ((d.target.1 - p.y) / 100.0) as f32;
            o[2] = (v.x / vmax) as f32;
            o[3] = (v.y / vmax) as f32;
            let readings = w
                .proximity
                .get(e)
                .map(|s| s.readings.as_slice())
                .unwrap_or(&[]);
            for k in 0..PROXIMITY_BEAMS as usize {
                o[4 + k] =
                    (readings.get(k).copied().unwrap_or(PROXIMITY_RANGE) / PROXIMITY_RANGE) as f32;
            }
        }
    }
}

impl DroneTargets {
    fn worker(&self) -> PyResult<&Local<Option<DroneRun>>> {
        self.run.as_ref().ok_or_else(|| closed("DroneTargets"))
    }
}

#[pymethods]
impl DroneTargets {
    /// `DroneTargets(n=20)`: `n` drones (1 to 10 000).
    #[new]
    #[pyo3(signature = (n=Whole(20)), text_signature = "(n=20)")]
    fn new(py: Python<'_>, n: Whole<usize>) -> PyResult<Self> {
        let n = n.0;
        if n == 0 || n > 10_000 {
            return Err(PyValueError::new_err(format!("n = {n}: 1 to 10000 drones")));
        }
        Ok(DroneTargets {
            drones: n,
            run: Some(Local::start(py, || Ok(None))?),
        })
    }

    /// Number of drones.
    fn __len__(&self) -> PyResult<usize> {
        self.worker()?;
        Ok(self.drones)
    }

    /// Whether `close()` was called.
    #[getter]
    fn closed(&self) -> bool {
        self.run.is_none()
    }

    /// Starts a new episode from `seed` (each drone's place on the take-off grid moved by up
    /// to 6 map units each way); returns the observations `(n, 12)` float32.
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: Whole<u64>,
    ) -> PyResult<Bound<'py, PyArray2<f32>>> {
        let (n, seed) = (self.drones, seed.0);
        let obs = self.worker()?.call(py, move |slot| {
            let run = build_drones(n, seed);
            let mut obs = vec![0f32; n * DRONE_OBS];
            run.observe(&mut obs);
            *slot = Some(run);
            obs
        })?;
        let a = Array2::from_shape_vec((n, DRONE_OBS), obs)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok(a.into_pyarray(py))
    }

    /// Runs one frame with `actions` (`(n, 2)` float64 in [-1, 1]: x and y velocity, as a
    /// fraction of 2.5 map units per frame); drones whose episode has ended ignore theirs
    /// and stay still. Returns `(obs (n, 12) float32, reward (n,), arrived (n,) bool,
    /// crashed (n,) bool)`.
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: crate::Actions<'py>,
    ) -> PyResult<(
        Bound<'py, PyArray2<f32>>,
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyArray1<bool>>,
    )> {
        let n = self.drones;
        let worker = self.worker()?;
        let a = crate::batch_actions(&actions, n)?;
        let out = worker.call(py, move |slot| {
            let run = slot.as_mut()?;
            let vmax = MAX_STEP * FPS;
            for (i, act) in a.iter().enumerate() {
                let e = run.ids[i];
                let v = if run.done[i] {
                    Velocity::default()
                } else {
                    Velocity {
                        x: act[0] * vmax,
                        y: act[1] * vmax,
                        w: 0.0,
                    }
                };
                if let Some(slot) = run.sim.world_mut().vel.get_mut(e) {
                    *slot = v;
                }
            }
            run.sim.step();
            let mut rew = vec![0.0; n];
            let mut arrived = vec![false; n];
            let mut crashed = vec![false; n];
            for i in 0..n {
                if run.done[i] {
                    continue;
                }
                let d = run.distance(i);
                let mut r = (run.prev_distance[i] - d) / 10.0 - 0.01;
                run.prev_distance[i] = d;
                if run.drone(i).state == DroneState::Crashed {
                    r -= 10.0;
                    crashed[i] = true;
                    run.done[i] = true;
                } else if d < ARRIVE {
                    r += 10.0;
                    arrived[i] = true;
                    run.done[i] = true;
                    let e = run.ids[i];
                    let drones = run.sim.world_mut().custom_mut::<Drone>();
                    if let Some(dr) = drones.get_mut(e) {
                        dr.state = DroneState::Hovering;
                    }
                }
                rew[i] = r;
            }
            let mut obs = vec![0f32; n * DRONE_OBS];
            run.observe(&mut obs);
            Some((obs, rew, arrived, crashed))
        })?;
        let (obs, rew, arrived, crashed) =
            out.ok_or_else(|| PyRuntimeError::new_err("call reset before step"))?;
        let obs = Array2::from_shape_vec((n, DRONE_OBS), obs)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok((
            obs.into_pyarray(py),
            rew.into_pyarray(py),
            arrived.into_pyarray(py),
            crashed.into_pyarray(py),
        ))
    }

    /// `(positions (n, 2), targets (n, 2))` in map units.
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<crate::Pair<'py>> {
        let out = self.worker()?.call(py, |slot| {
            let run = slot.as_ref()?;
            let n = run.ids.len();
            let mut p = Vec::with_capacity(2 * n);
            let mut t = Vec::with_capacity(2 * n);
            for i in 0..n {
                let pose = run
                    .sim
                    .world()
                    .pose
                    .get(run.ids[i])
                    .copied()
                    .unwrap_or_default();
                let d = run.drone(i);
                p.extend_from_slice(&[pose.x, pose.y]);
                t.extend_from_slice(&[d.target.0, d.target.1]);
            }
            Some((n, p, t))
        })?;
        let (n, p, t) = out.ok_or_else(|| PyRuntimeError::new_err("call reset first"))?;
        let p = Array2::from_shape_vec((n, 2), p)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        let t = Array2::from_shape_vec((n, 2), t)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok((p.into_pyarray(py), t.into_pyarray(py)))
    }

    /// Map width and height (map units).
    #[getter]
    fn size(&self) -> PyResult<(f64, f64)> {
        self.worker()?;
        let l = drones::layout(self.drones);
        Ok((l.width, l.height))
    }

    /// Frees the run; using it afterwards raises `RuntimeError`.
    fn close(&mut self) {
        self.run = None;
    }
}
