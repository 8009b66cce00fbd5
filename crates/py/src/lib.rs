//! The extension module `simrob._native`: the simulator inside Python.
//!
//! - [`simrob3d`]: the 3D SimRob world (`World`) and the SumBot reaching the ball
//!   (`SumBotBall`, a batch of worlds).
//! - [`mrs`]: the Mobile Robot Simulator's world (`MrsWorld`) and the Nomad-200 driving to a
//!   goal (`NomadGoal`, a batch).
//! - [`swarm`]: any swarm scenario (`Swarm`) and the drone swarm under outside control
//!   (`DroneTargets`).
//! - [`futrob`]: the FutRob case studies (`futrob_trial`) and the FutRob team task
//!   (`FutRobTeam`: KidSize players whose FutRob actions are chosen by agents).
//! - `main`: the `simrob` command line.
//!
//! Every entry point checks what Python hands it (shapes, finite numbers, files, a closed
//! object) and raises a Python exception; stepping releases the GIL, and a long run looks
//! for Ctrl-C at least every [`SIGNAL_LOOK`] ([`run_slices`]). The Python package
//! (`python/src/simrob`) wraps these in Gymnasium and PettingZoo environments.
#![warn(missing_docs)]

use std::path::Path;
use std::time::{Duration, Instant};

use pyo3::exceptions::{PyFileNotFoundError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;

pub mod futrob;
pub mod mrs;
pub mod simrob3d;
pub mod swarm;

/// `(ids, rows)`: entity ids and one row of numbers per entity.
pub(crate) type Table<'py> = (
    Bound<'py, numpy::PyArray1<u32>>,
    Bound<'py, numpy::PyArray2<f64>>,
);

/// Two `(n, k)` arrays.
pub(crate) type Pair<'py> = (
    Bound<'py, numpy::PyArray2<f64>>,
    Bound<'py, numpy::PyArray2<f64>>,
);

/// What a batch's `step` returns: observations `(n, k)` float32, rewards `(n,)` float64,
/// terminated `(n,)` bool.
pub(crate) type BatchStep<'py> = (
    Bound<'py, numpy::PyArray2<f32>>,
    Bound<'py, numpy::PyArray1<f64>>,
    Bound<'py, numpy::PyArray1<bool>>,
);

/// Largest file the module reads (scenarios, maps, save files): 64 MiB.
pub const MAX_FILE: u64 = 64 << 20;
/// Most worlds in one batch.
pub const MAX_BATCH: usize = 65_536;

/// The error for an object used after `close()`.
fn closed(what: &str) -> PyErr {
    PyRuntimeError::new_err(format!("this {what} is closed"))
}

/// `(ids, rows)` from entity ids and their rows of `k` numbers each, laid end to end.
pub(crate) fn table<'py>(
    py: Python<'py>,
    ids: Vec<u32>,
    flat: Vec<f64>,
    k: usize,
) -> PyResult<Table<'py>> {
    let n = ids.len();
    let a = numpy::ndarray::Array2::from_shape_vec((n, k), flat)
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok((
        numpy::IntoPyArray::into_pyarray(ids, py),
        numpy::IntoPyArray::into_pyarray(a, py),
    ))
}

/// Steps a batch of worlds: checks `actions` (see [`batch_actions`]) and that every world
/// is reset, then, with the GIL released, calls `step_one(world, action, obs)` for each
/// world in order, where `obs` is that world's `k` observation values; it returns the
/// world's reward and whether its episode ended.
pub(crate) fn step_batch<'py, T: Send>(
    py: Python<'py>,
    worlds: &mut [Option<T>],
    actions: &numpy::PyReadonlyArray2<'py, f64>,
    k: usize,
    step_one: impl Fn(&mut T, [f64; 2], &mut [f32]) -> (f64, bool) + Send + Sync,
) -> PyResult<BatchStep<'py>> {
    let n = worlds.len();
    let a = batch_actions(actions, n)?;
    all_reset(worlds)?;
    let (obs, rew, term) = py.detach(|| {
        let mut obs = vec![0f32; n * k];
        let mut rew = vec![0f64; n];
        let mut term = vec![false; n];
        for (i, (slot, out)) in worlds.iter_mut().zip(obs.chunks_mut(k)).enumerate() {
            let Some(w) = slot.as_mut() else { continue };
            (rew[i], term[i]) = step_one(w, a[i], out);
        }
        (obs, rew, term)
    });
    let obs = numpy::ndarray::Array2::from_shape_vec((n, k), obs)
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok((
        numpy::IntoPyArray::into_pyarray(obs, py),
        numpy::IntoPyArray::into_pyarray(rew, py),
        numpy::IntoPyArray::into_pyarray(term, py),
    ))
}

/// A batch's actions: `actions` must be an `(n, 2)` array of finite numbers (else
/// `ValueError`); each is clamped to [-1, 1].
pub(crate) fn batch_actions(
    actions: &numpy::PyReadonlyArray2<'_, f64>,
    n: usize,
) -> PyResult<Vec<[f64; 2]>> {
    let a = actions.as_array();
    if a.shape() != [n, 2] {
        return Err(PyValueError::new_err(format!(
            "actions of shape {:?}: expected ({n}, 2)",
            a.shape()
        )));
    }
    if a.iter().any(|v| !v.is_finite()) {
        return Err(PyValueError::new_err("an action is NaN or infinite"));
    }
    Ok(a.rows()
        .into_iter()
        .map(|r| [r[0].clamp(-1.0, 1.0), r[1].clamp(-1.0, 1.0)])
        .collect())
}

/// `RuntimeError` naming the first world of a batch that has not been reset.
pub(crate) fn all_reset<T>(worlds: &[Option<T>]) -> PyResult<()> {
    match worlds.iter().position(Option::is_none) {
        Some(i) => Err(PyRuntimeError::new_err(format!(
            "world {i} is not reset: call reset before step"
        ))),
        None => Ok(()),
    }
}

/// Reads a regular file of at most [`MAX_FILE`] bytes; a missing file is
/// `FileNotFoundError`, anything else odd a `ValueError`.
fn read_bounded(path: &Path) -> PyResult<Vec<u8>> {
    simrob_files::read_bounded(path, MAX_FILE).map_err(|e| match e {
        simrob_files::ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(format!("no file {}", path.display()))
        }
        e => PyValueError::new_err(format!("cannot read {}: {e}", path.display())),
    })
}

/// Runs the `simrob` command line with `argv` (program name first), the GIL released;
/// returns its exit status.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> u8 {
    py.detach(|| simrob_cli::exit_status(argv))
}

/// The module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(futrob::futrob_trial, m)?)?;
    m.add_function(wrap_pyfunction!(futrob::futrob_cases, m)?)?;
    m.add_function(wrap_pyfunction!(futrob::team_actions, m)?)?;
    m.add_function(wrap_pyfunction!(futrob::team_predicates, m)?)?;
    m.add_class::<futrob::FutRobTeam>()?;
    m.add_class::<simrob3d::World3d>()?;
    m.add_class::<simrob3d::SumBotBall>()?;
    m.add_class::<mrs::MrsWorld>()?;
    m.add_class::<mrs::NomadGoal>()?;
    m.add_class::<swarm::Swarm>()?;
    m.add_class::<swarm::DroneTargets>()?;
    m.add("SUMBOT_OBS", simrob3d::SUMBOT_OBS)?;
    m.add("NOMAD_OBS", mrs::NOMAD_OBS)?;
    m.add("DRONE_OBS", swarm::DRONE_OBS)?;
    m.add("MAX_FILE", MAX_FILE)?;
    m.add("MAX_BATCH", MAX_BATCH)?;
    Ok(())
}

/// How long a call runs with the GIL released before it looks for a signal: Ctrl-C stops a
/// long `step` or `run` within about this much (a `KeyboardInterrupt`; what ran stays run).
pub const SIGNAL_LOOK: Duration = Duration::from_millis(50);

/// Runs `one` at most `n` times on `state`, stopping early when it says the run is over,
/// for at most [`SIGNAL_LOOK`] at a call: `(how many ran, whether the run goes on)`. What
/// runs is the same however the calls slice it.
pub(crate) fn run_for_a_while<S>(
    state: &mut S,
    n: u64,
    mut one: impl FnMut(&mut S) -> bool,
) -> (u64, bool) {
    let start = Instant::now();
    let mut ran = 0;
    while ran < n {
        if !one(state) {
            return (ran, false);
        }
        ran += 1;
        if start.elapsed() >= SIGNAL_LOOK {
            break;
        }
    }
    (ran, true)
}

/// Runs `n` iterations in slices, each through `slice` (given how many are left, it runs
/// some with the GIL released, see [`run_for_a_while`]), looking for a signal between them:
/// returns how many ran, fewer when a slice says the run is over; Ctrl-C raises
/// `KeyboardInterrupt` with what ran kept.
pub(crate) fn run_slices(
    py: Python<'_>,
    n: u64,
    mut slice: impl FnMut(Python<'_>, u64) -> PyResult<(u64, bool)>,
) -> PyResult<u64> {
    let mut done = 0;
    while done < n {
        let (ran, more) = slice(py, n - done)?;
        done += ran;
        if !more || done >= n {
            break;
        }
        py.check_signals()?;
    }
    Ok(done)
}

/// A state stepped on the caller's thread with the GIL released (a swarm run, FutRob's arena:
/// both are `Send`): no thread to hand each call to and wake, which cost more than a small
/// swarm's frame. A panic while it ran raises `RuntimeError` and leaves it unusable (it is dropped).
pub(crate) struct Local<S> {
    state: std::sync::Mutex<Option<S>>,
}

fn stopped() -> PyErr {
    PyRuntimeError::new_err("the simulation has stopped (a panic while it ran)")
}

impl<S: Send> Local<S> {
    /// Builds the state with `make`, the GIL released; a panic while building raises
    /// `RuntimeError` too.
    pub(crate) fn start(
        py: Python<'_>,
        make: impl FnOnce() -> PyResult<S> + Send,
    ) -> PyResult<Self> {
        let state = py.detach(|| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(make)).unwrap_or_else(|_| {
                Err(PyRuntimeError::new_err(
                    "the simulation failed to start (a panic)",
                ))
            })
        })?;
        Ok(Local {
            state: std::sync::Mutex::new(Some(state)),
        })
    }

    /// Runs `f` on the state, the GIL released while it runs.
    pub(crate) fn call<R: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut S) -> R + Send,
    ) -> PyResult<R> {
        py.detach(|| {
            let mut slot = self.state.lock().map_err(|_| stopped())?;
            let state = slot.as_mut().ok_or_else(stopped)?;
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(state))) {
                Ok(r) => Ok(r),
                Err(_) => {
                    *slot = None;
                    Err(stopped())
                }
            }
        })
    }
}
