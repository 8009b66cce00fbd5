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

use numpy::PyArrayMethods;
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

/// Largest file the module reads (scenarios, maps, save files) by default: 64 MiB; each
/// constructor that reads files takes `max_file_bytes=` to set another ([`MaxFileBytes`]).
pub const MAX_FILE: u64 = 64 << 20;

/// How a Python caller raises the largest file read, said by every refusal of a file over it.
pub(crate) const RAISE_MAX_FILE: &str = "max_file_bytes= (an int of bytes, default MAX_FILE)";

/// `max_file_bytes=` of a constructor that reads files: the most bytes a file it reads may
/// have, a whole number of at least 1 (`None`: [`MAX_FILE`]). A bool or a non-integer is a
/// `TypeError`, 0 or a negative number a `ValueError`.
#[derive(Clone, Copy, Debug)]
pub struct MaxFileBytes(pub u64);

impl Default for MaxFileBytes {
    fn default() -> Self {
        MaxFileBytes(MAX_FILE)
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for MaxFileBytes {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        if obj.is_instance_of::<pyo3::types::PyBool>() {
            return Err(pyo3::exceptions::PyTypeError::new_err(
                "max_file_bytes is a number of bytes (an int of at least 1), not a bool",
            ));
        }
        if let Ok(v @ ..=0) = obj.extract::<i64>() {
            return Err(PyValueError::new_err(format!(
                "max_file_bytes is a number of bytes of at least 1, found {v}"
            )));
        }
        Whole::<u64>::extract(obj)
            .map(|Whole(n)| MaxFileBytes(n))
            .map_err(|e| {
                if e.is_instance_of::<pyo3::exceptions::PyTypeError>(obj.py()) {
                    let kind = obj
                        .get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_else(|_| "?".into());
                    pyo3::exceptions::PyTypeError::new_err(format!(
                        "max_file_bytes is a number of bytes (an int of at least 1), not a {kind}"
                    ))
                } else {
                    PyValueError::new_err(format!("max_file_bytes: {e}"))
                }
            })
    }
}

impl MaxFileBytes {
    /// `max_file_bytes=` as given, or [`MAX_FILE`].
    pub(crate) fn or_default(given: Option<MaxFileBytes>) -> MaxFileBytes {
        given.unwrap_or_default()
    }

    /// The limit on a swarm scenario's files, said to be raised with `max_file_bytes=`.
    pub(crate) fn swarm(self) -> simrob_swarm::scenario::FileLimit {
        simrob_swarm::scenario::FileLimit {
            max_bytes: self.0,
            raise_with: RAISE_MAX_FILE,
        }
    }
}
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

/// A whole number from Python (an `int`, a numpy integer, anything with `__index__`) that
/// fits `T`: a negative or too large one is a `ValueError` saying so (Python adds a note
/// naming the argument), not the `OverflowError` of a plain `usize` or `u64` argument.
#[derive(Clone, Copy, Debug)]
pub struct Whole<T>(pub T);

impl<'a, 'py, T: TryFrom<u64>> FromPyObject<'a, 'py> for Whole<T> {
    type Error = PyErr;

    fn extract(obj: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<Self> {
        let most = || {
            let mut m = u64::MAX;
            while T::try_from(m).is_err() {
                m >>= 1;
            }
            m
        };
        let v: u64 = match obj.extract::<i64>() {
            Ok(v) if v < 0 => {
                return Err(PyValueError::new_err(format!(
                    "{v}: a whole number of at least 0 is wanted"
                )))
            }
            Ok(v) => v.unsigned_abs(),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyOverflowError>(obj.py()) => {
                obj.extract::<u64>().map_err(|_| {
                    PyValueError::new_err(format!(
                        "a whole number too large: at most {} is wanted",
                        most()
                    ))
                })?
            }
            Err(e) => return Err(e),
        };
        T::try_from(v).map(Whole).map_err(|_| {
            PyValueError::new_err(format!(
                "{v}: a whole number too large (at most {})",
                most()
            ))
        })
    }
}

/// `obj` (an array of any integer type, or a sequence of ints) as an int64 array; an array
/// of another kind (floats, strings) is a `TypeError` naming `what`.
pub(crate) fn integers<'py>(
    obj: &Bound<'py, PyAny>,
    what: &str,
) -> PyResult<numpy::PyReadonlyArray1<'py, i64>> {
    let np = obj.py().import("numpy")?;
    let a = np.call_method1("asarray", (obj,))?;
    let kind: String = a.getattr("dtype")?.getattr("kind")?.extract()?;
    if !matches!(kind.as_str(), "i" | "u" | "b") {
        let dtype: String = a.getattr("dtype")?.str()?.extract()?;
        return Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "{what}: integers are wanted, not an array of {dtype}"
        )));
    }
    let a = a.call_method1("astype", ("int64",))?;
    let a = a
        .cast_into::<numpy::PyArray1<i64>>()
        .map_err(|_| PyValueError::new_err(format!("{what}: a one-dimensional array is wanted")))?;
    Ok(a.readonly())
}

/// A batch's actions as given: any array-like of real numbers (float64 or not: an
/// `action_space.sample()` is float32).
pub(crate) type Actions<'py> = numpy::PyArrayLike2<'py, f64, numpy::AllowTypeChange>;
/// Which worlds of a batch a step runs (`None`: all): an array of bools (checked by
/// [`Batch::step`]: another dtype is a `ValueError`).
pub(crate) type Active<'py> = Option<Bound<'py, PyAny>>;

/// `obj` as `n` booleans: an array (or sequence) of dtype bool and shape `(n,)`; numbers
/// (0.5 is not a yes) or another shape are a `ValueError` naming `what`.
pub(crate) fn bools(obj: &Bound<'_, PyAny>, n: usize, what: &str) -> PyResult<Vec<bool>> {
    let np = obj.py().import("numpy")?;
    let a = np.call_method1("asarray", (obj,))?;
    let kind: String = a.getattr("dtype")?.getattr("kind")?.extract()?;
    if kind != "b" {
        let dtype: String = a.getattr("dtype")?.str()?.extract()?;
        return Err(PyValueError::new_err(format!(
            "{what} of {dtype}: an ({n},) bool array is wanted"
        )));
    }
    let shape: Vec<usize> = a.getattr("shape")?.extract()?;
    if shape != [n] {
        return Err(PyValueError::new_err(format!(
            "{what} of shape {shape:?}: expected ({n},)"
        )));
    }
    a.call_method0("tolist")?.extract()
}

/// The worlds of a batch task (`SumBotBall`, `NomadGoal`): each reset or not, its episode
/// ended or not, the batch closed or not.
pub(crate) struct Batch<T> {
    what: &'static str,
    worlds: Vec<Option<T>>,
    ended: Vec<bool>,
    closed: bool,
}

impl<T: Send> Batch<T> {
    /// `n` worlds, none reset: 1 to [`MAX_BATCH`], else `ValueError`.
    pub(crate) fn new(what: &'static str, n: usize) -> PyResult<Self> {
        if n == 0 || n > MAX_BATCH {
            return Err(PyValueError::new_err(format!(
                "n = {n}: a batch holds 1 to {MAX_BATCH} worlds"
            )));
        }
        Ok(Batch {
            what,
            worlds: (0..n).map(|_| None).collect(),
            ended: vec![false; n],
            closed: false,
        })
    }

    /// The number of worlds (`RuntimeError` once closed).
    pub(crate) fn len(&self) -> PyResult<usize> {
        if self.closed {
            return Err(closed(self.what));
        }
        Ok(self.worlds.len())
    }

    /// `i` if the batch is open and has a world `i` (else `RuntimeError`, `ValueError`).
    pub(crate) fn index(&self, i: usize) -> PyResult<usize> {
        let n = self.len()?;
        if i >= n {
            return Err(PyValueError::new_err(format!(
                "world {i} of a batch of {n}"
            )));
        }
        Ok(i)
    }

    /// World `i`, reset (else `RuntimeError`).
    pub(crate) fn get(&self, i: usize) -> PyResult<&T> {
        let i = self.index(i)?;
        self.worlds[i]
            .as_ref()
            .ok_or_else(|| PyRuntimeError::new_err(format!("world {i} is not reset")))
    }

    /// World `i` starts an episode as `w` (its index checked by [`Batch::index`] before).
    pub(crate) fn put(&mut self, i: usize, w: T) {
        self.worlds[i] = Some(w);
        self.ended[i] = false;
    }

    /// Frees the worlds; using them afterwards raises `RuntimeError`.
    pub(crate) fn close(&mut self) {
        self.closed = true;
        self.worlds.iter_mut().for_each(|w| *w = None);
    }

    /// Steps the worlds `active` names (all when `None`; an `(n,)` array of booleans) with
    /// `actions` (an `(n, 2)` array of finite numbers, each clamped to [-1, 1]): with the
    /// GIL released, `step_one(world, action, obs)` for each in order, where `obs` is that
    /// world's `k` observation values; it returns the world's reward and whether its episode
    /// ended. A world left out gets zeros, reward 0 and not ended. Stepping a world that is
    /// not reset, or whose episode has ended, is a `RuntimeError` and steps none.
    pub(crate) fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: &Actions<'py>,
        active: &Active<'py>,
        k: usize,
        step_one: impl Fn(&mut T, [f64; 2], &mut [f32]) -> (f64, bool) + Send + Sync,
    ) -> PyResult<BatchStep<'py>> {
        let n = self.len()?;
        let a = batch_actions(actions, n)?;
        let on: Vec<bool> = match active {
            None => vec![true; n],
            Some(m) => bools(m, n, "active")?,
        };
        for (i, _) in on.iter().enumerate().filter(|(_, on)| **on) {
            if self.worlds[i].is_none() {
                return Err(PyRuntimeError::new_err(format!(
                    "world {i} is not reset: call reset before step"
                )));
            }
            if self.ended[i] {
                return Err(PyRuntimeError::new_err(format!(
                    "world {i}'s episode has ended: reset it, or leave it out of the step \
                     (active)"
                )));
            }
        }
        let worlds = &mut self.worlds;
        let (obs, rew, term) = py.detach(|| {
            let mut obs = vec![0f32; n * k];
            let mut rew = vec![0f64; n];
            let mut term = vec![false; n];
            for (i, (slot, out)) in worlds.iter_mut().zip(obs.chunks_mut(k)).enumerate() {
                let Some(w) = slot.as_mut().filter(|_| on[i]) else {
                    continue;
                };
                (rew[i], term[i]) = step_one(w, a[i], out);
            }
            (obs, rew, term)
        });
        for (ended, t) in self.ended.iter_mut().zip(&term) {
            *ended |= *t;
        }
        let obs = numpy::ndarray::Array2::from_shape_vec((n, k), obs)
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        Ok((
            numpy::IntoPyArray::into_pyarray(obs, py),
            numpy::IntoPyArray::into_pyarray(rew, py),
            numpy::IntoPyArray::into_pyarray(term, py),
        ))
    }
}

/// A batch's actions: `actions` must be an `(n, 2)` array of finite numbers (else
/// `ValueError`); each is clamped to [-1, 1].
pub(crate) fn batch_actions(actions: &Actions<'_>, n: usize) -> PyResult<Vec<[f64; 2]>> {
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

/// The `OSError` subclass Python raises for `e` (`FileNotFoundError`, `PermissionError`,
/// `IsADirectoryError`, …), its message `what` and `e`.
pub(crate) fn os_error(what: &str, e: &std::io::Error) -> PyErr {
    use pyo3::exceptions as x;
    use std::io::ErrorKind as K;
    let msg = format!("{what}: {e}");
    match e.kind() {
        K::NotFound => x::PyFileNotFoundError::new_err(msg),
        K::PermissionDenied => x::PyPermissionError::new_err(msg),
        K::IsADirectory => x::PyIsADirectoryError::new_err(msg),
        K::NotADirectory => x::PyNotADirectoryError::new_err(msg),
        K::AlreadyExists => x::PyFileExistsError::new_err(msg),
        _ => x::PyOSError::new_err(msg),
    }
}

/// Reads a regular file of at most `max` bytes; a missing file is `FileNotFoundError`, one
/// over the limit a `ValueError` naming it, its size, the limit and `max_file_bytes=`,
/// anything else odd a `ValueError`.
fn read_bounded(path: &Path, max: MaxFileBytes) -> PyResult<Vec<u8>> {
    simrob_files::read_bounded(path, max.0).map_err(|e| match e {
        simrob_files::ReadError::Io(e) if e.kind() == std::io::ErrorKind::NotFound => {
            PyFileNotFoundError::new_err(format!("no file {}", path.display()))
        }
        e => PyValueError::new_err(e.message(&path.display().to_string(), RAISE_MAX_FILE)),
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
