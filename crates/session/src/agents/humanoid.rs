//! The `Humanoid_Brain` agent types: a humanoid's brain receives, instead of the world state,
//! its robot's proprioception every broadcast and what the robot's head camera sees
//! (`simrob_protocol::humanoid`). `Humanoid_Brain` sees through FutRob's camera (the `paper`
//! profile: 4 Hz, its calibration's distance errors, dropouts…), `Humanoid_Brain_Ideal`
//! through an exact camera every broadcast. The agent's `Key` is its robot's entity id.
//!
//! A brain's key must be a number: the id of a humanoid, or of no entity yet (the brain
//! receives nothing, and lockstep does not wait for it, until a humanoid with that id is
//! made); a key naming another kind of entity (the ball, a wheeled robot) is refused
//! ([`check_key`]).
//!
//! Each agent gets its own filter (its camera's frame clock and noise stream, seeded from the
//! session's `randomseed` and the agent's key), so the same run gives every brain the same
//! frames.

use simrob_protocol::humanoid::encode_brain_broadcast;
use simrob_protocol::EntityId;
use simrob_soccer::camera::CameraProfile;
use simrob_world::brain::BrainView;
use simrob_world::World;

use super::{AgentFilter, AgentInfo, FilterRegistry, View};
use crate::snapshot::Snapshot;

/// Agent type of a brain with FutRob's camera.
pub const HUMANOID_BRAIN: &str = "Humanoid_Brain";
/// Agent type of a brain with an exact camera.
pub const HUMANOID_BRAIN_IDEAL: &str = "Humanoid_Brain_Ideal";

/// Whether `agent_type` is one of the brain agent types.
pub fn is_brain(agent_type: &str) -> bool {
    agent_type == HUMANOID_BRAIN || agent_type == HUMANOID_BRAIN_IDEAL
}

/// Checks a brain's `Key` against the world: `Err` with what is wrong (without the command's
/// name) when it is not an
/// entity id or names an entity that is not a humanoid; `Ok` with a note for the
/// confirmation when no entity has that id yet (empty when the humanoid exists).
pub fn check_key(agent_type: &str, key: &str, world: &World) -> Result<String, String> {
    let Ok(id) = key.trim().parse::<u32>() else {
        return Err(format!(
            "a {agent_type} agent's Key is its humanoid's entity id (a number), got {}",
            crate::quote::quoted(key)
        ));
    };
    if world.humanoid(EntityId(id)).is_some() {
        return Ok(String::new());
    }
    match world.entity_spec(EntityId(id)) {
        Some(spec) => Err(format!(
            "a {agent_type} agent's Key is its humanoid's entity id; entity {id} is a {}, not a Humanoid",
            spec.type_name()
        )),
        None => Ok(format!(
            "; no humanoid {id} yet: it receives nothing, and lockstep does not wait for it, until Create_Entity Type=\"Humanoid\" makes entity {id}"
        )),
    }
}

/// One brain's filter.
pub struct BrainFilter {
    /// `None` when the key names no entity id: nothing is sent.
    view: Option<BrainView>,
}

impl BrainFilter {
    /// The filter of a newly registered brain.
    pub fn new(agent: &AgentInfo, profile: CameraProfile) -> Self {
        let view = match agent.key.trim().parse::<u32>() {
            Ok(robot) => Some(BrainView::new(robot, profile, agent.seed)),
            Err(_) => {
                tracing::warn!(
                    key = %agent.key,
                    "a {} agent's key must be its humanoid's entity id; it will receive nothing",
                    agent.agent_type
                );
                None
            }
        };
        BrainFilter { view }
    }
}

impl AgentFilter for BrainFilter {
    fn view(&mut self, snapshot: &Snapshot, _agent: &AgentInfo) -> Option<View> {
        let b = self
            .view
            .as_mut()?
            .view(snapshot.iteration, &snapshot.soccer)?;
        Some(View::Body(encode_brain_broadcast(&b)))
    }
}

/// Registers both brain agent types.
pub fn register(filters: &mut FilterRegistry) {
    filters.register_per_agent(HUMANOID_BRAIN, |a: &AgentInfo| {
        BrainFilter::new(a, CameraProfile::paper())
    });
    filters.register_per_agent(HUMANOID_BRAIN_IDEAL, |a: &AgentInfo| {
        BrainFilter::new(a, CameraProfile::ideal())
    });
}
