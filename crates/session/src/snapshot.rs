//! [`Snapshot`]: the world at one moment, computed once and shared by every consumer.

use simrob_protocol::{Broadcast, EntityId};
use simrob_world::World;

/// The session's modes and parameters at the moment of a snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotModes {
    /// `Initialize_Simulation` received.
    pub initialized: bool,
    /// Step mode (paused, advancing on `Make_Step`).
    pub step_mode: bool,
    /// Synchronous mode: each iteration waits (up to `syncwait`) for the synchronous agents.
    pub sync_mode: bool,
    /// Auto-adjust: simulated time tracks wall time.
    pub auto_adjust: bool,
    /// Seconds per physics step.
    pub timestep: f64,
    /// m/s² along Z.
    pub gravity: f64,
    /// Physics steps per iteration (`Set_Steps_Per_Iteration`).
    pub steps_per_iteration: u32,
    /// Simulated seconds per wall second the session paces at in asynchronous mode (0 = as
    /// fast as possible; auto-adjust paces at 1 whatever this says).
    pub real_time_factor: f64,
}

/// The world at one moment: what broadcasts are cut from, what the viewer draws and what a
/// recording stores. The session builds one per iteration (only when someone will read it)
/// and hands it out in an `Arc`, so broadcasts, the viewer and recorders share it.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Iterations the world had run when the snapshot was taken.
    pub iteration: u64,
    /// Simulated seconds.
    pub time: f64,
    /// Every body and every robot's and ball's pose (SimRob manual §5), before agent filters.
    pub broadcast: Broadcast,
    /// Every entity's id and type name (`Robot`, `Field`, `Ball`…), ascending by id.
    pub kinds: Vec<(EntityId, &'static str)>,
    /// The session's modes and parameters at that moment.
    pub modes: SnapshotModes,
    /// The humanoids (pose, head, posture, action) and balls, for the humanoids' cameras and
    /// the viewer; empty when the world has no humanoid.
    pub soccer: simrob_world::brain::SoccerSnapshot,
}

impl Snapshot {
    /// The snapshot of `world` now, with the session's `modes`.
    pub fn of(world: &World, modes: SnapshotModes) -> Snapshot {
        Snapshot {
            iteration: world.iteration(),
            time: world.sim_time(),
            broadcast: world.snapshot(),
            kinds: world
                .entity_ids()
                .filter_map(|id| world.entity_spec(id).map(|s| (id, s.type_name())))
                .collect(),
            modes,
            soccer: if world.humanoid_ids().next().is_some() {
                world.soccer_snapshot()
            } else {
                Default::default()
            },
        }
    }
}

/// What a shell tells the session's observers (a viewer, a recorder): the observable part
/// of the session's events.
#[derive(Debug, Clone)]
pub enum Observation {
    /// An iteration ran: the world after it (the session's one snapshot of it).
    Iterated(std::sync::Arc<Snapshot>),
    /// The world changed while not advancing (paused, not initialized), or observing began.
    Changed(std::sync::Arc<Snapshot>),
    /// A confirmation, or the answer to a local command.
    Response(String),
}

/// Something that watches a session from its shell's loop. It runs on the simulation's
/// thread and must be quick: hand the `Arc` to another thread.
pub type Observer = Box<dyn FnMut(&Observation) + Send>;
