//! From the brain's broadcast (`simrob_protocol::humanoid::BrainBroadcast`) to what a FutRob
//! brain takes in: the body's report for its [`BodyLink`](simrob_futrob::body::BodyLink) and
//! the camera frame as [`Sighting`]s; and from a brain's action to the `Humanoid_Action`
//! name and parameters.

use simrob_futrob::body::BodyReport;
use simrob_futrob::{Action, Fall, ObjectKind, Sighting};
use simrob_protocol::humanoid::BrainBroadcast;

/// The body's report in a broadcast.
pub fn body_report(b: &BrainBroadcast) -> BodyReport {
    let s = &b.state;
    BodyReport {
        head_pan_deg: s.head_pan,
        head_tilt_deg: s.head_tilt,
        fallen: match s.posture.as_str() {
            "fallenFront" => Some(Fall::Front),
            "fallenBack" => Some(Fall::Back),
            _ => None,
        },
        action: s.action.as_ref().map(|a| (a.seq, a.status == "running")),
    }
}

/// The camera frame in a broadcast, if it carries one (unknown object names are skipped).
pub fn sightings(b: &BrainBroadcast) -> Option<Vec<Sighting>> {
    b.camera.as_ref().map(|c| {
        c.objects
            .iter()
            .filter_map(|o| {
                ObjectKind::from_token(&o.kind).map(|k| Sighting::new(k, o.angle, o.distance))
            })
            .collect()
    })
}

/// The `Humanoid_Action` name and parameters of a brain's action.
pub fn request_of(a: &Action) -> (&'static str, Vec<(String, String)>) {
    let mut params = Vec::new();
    if let (Some(v), Some(spec)) = (a.param, a.kind.params().first()) {
        params.push((spec.name.to_string(), format!("{v}")));
    }
    (a.kind.name(), params)
}

/// A broadcast's simulated time in whole milliseconds.
pub fn time_ms(b: &BrainBroadcast) -> u64 {
    (b.state.time * 1000.0).round().max(0.0) as u64
}
