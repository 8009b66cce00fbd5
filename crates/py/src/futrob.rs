//! The FutRob case studies in this process (`simrob._native.futrob_trial`).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use simrob_soccer::Profile;
use simrob_trials::{run_trial, Case};

/// The case studies' names: penalty-kick, penalty-save, discovery, relocation, pass.
#[pyfunction]
pub fn futrob_cases() -> Vec<&'static str> {
    Case::ALL.iter().map(|c| c.name()).collect()
}

/// Runs trial `trial` of FutRob case study `case` for a run seeded `seed` with noise profile
/// `profile` ("paper" or "ideal"), the GIL released; returns the result as a dict (case,
/// trial, seed, scenario, placement, outcome, success, metrics, sim_seconds), the same as
/// one row of `simrob soccer case --json`.
#[pyfunction]
#[pyo3(signature = (case, trial=0, seed=0, profile="paper"))]
pub fn futrob_trial(
    py: Python<'_>,
    case: &str,
    trial: u32,
    seed: u64,
    profile: &str,
) -> PyResult<Py<PyAny>> {
    let c = Case::parse(case).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown case {case:?}: one of {}",
            futrob_cases().join(", ")
        ))
    })?;
    let p = Profile::named(profile).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown profile {profile:?}: \"paper\" or \"ideal\""
        ))
    })?;
    let result = py
        .detach(|| run_trial(c, trial, seed, &p))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let text = serde_json::to_string(&result)
        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
    Ok(py.import("json")?.call_method1("loads", (text,))?.unbind())
}
