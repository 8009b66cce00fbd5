//! FutRob brains on simulated humanoids, in-process: the case studies of FutRob's report —
//! penalty kick, penalty save, discovery, keeper relocation, pass and reception — rerun as
//! many times as wanted, and judged from the world, never scripted.
//!
//! - [`arena`]: a KidSize world with humanoids, a FutRob brain per robot (`simrob-futrob`),
//!   each robot's head camera (`simrob-world`'s brain view, the code the server's
//!   `Humanoid_Brain` filter runs) and a simulated team radio, stepped together with simulated
//!   time. Same seed, same run.
//! - [`cases`]: each case's set-up from the report's tables, with a person's placement error
//!   drawn from the trial's seed, and its judge.
//! - [`stats`]: success rates with 95 % Wilson intervals.
//!
//! It does no I/O and starts no threads: `simrob soccer case` runs trials in parallel and
//! prints the tables.
//!
//! ```no_run
//! use simrob_trials::cases::{run_trial, Case};
//! use simrob_soccer::Profile;
//! let r = run_trial(Case::PenaltyKick, 0, 1, &Profile::paper()).unwrap();
//! println!("{} {}", r.outcome, r.success);
//! ```
#![warn(missing_docs)]

pub mod arena;
pub mod cases;
pub mod link;
pub mod matchplay;
pub mod referee;
pub mod stats;

pub use arena::{Arena, ArenaParams, Inspector, Observer, PlayerSpec};
pub use cases::{run_trial, run_trial_inspected, run_trial_observed, Case, TrialResult};

/// Why a trial could not run.
#[derive(Debug, thiserror::Error)]
pub enum TrialError {
    /// The world refused a set-up request.
    #[error("the scene could not be set up: {0}")]
    World(#[from] simrob_world::WorldError),
    /// A bundled rule set did not load.
    #[error("a bundled rule set did not load: {0}")]
    Rules(String),
    /// The world would not advance (not initialized, or in step mode).
    #[error("the world does not advance")]
    Stalled,
}
