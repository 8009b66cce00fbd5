//! The page's commands: how their JSON is read and why one is refused.
//!
//! Every view (the 3D viewer, a replay, the 2D views of a swarm, the Mobile Robot Simulator
//! and a Control Center) reads a command `{"cmd":NAME,…}` with the same helpers and refuses it
//! with a [`CommandError`], whose text the page shows after `Error: `.

/// The smallest real-time factor above 0 a live server is paced at (the page's `rtf`, `simrob
/// serve --speed` and its `realtimefactor`): a factor of 1e-300 made the next iteration due
/// in more seconds than a clock holds, and the server panicked (`{"cmd":"rtf","value":1e-300}`
/// from a page stopped it). At 10⁻⁶ an iteration of 1,000 steps of 1 s (the default
/// `maxstepsperiteration` and `maxtimestep`) is due some 30 years on.
pub const MIN_REAL_TIME_FACTOR: f64 = 1e-6;

/// A replay speed that is not a number from 0.001 to 10,000 ([`crate::player::SPEEDS`]).
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error(
    "the speed must be a number from 0.001 to 10000 (recorded seconds per wall second), not {0}"
)]
pub struct BadSpeed(pub f64);

/// Why a command from the page was not carried out; the text is what the page shows.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The message is not JSON.
    #[error("bad command: {0}")]
    Json(#[from] serde_json::Error),
    /// More commands a second than the page may send ([`crate::Guard`]).
    #[error("command dropped: more than {per_second} commands a second from this page (--viewer-commands-per-second {per_second}, configuration key viewercommandspersecond)")]
    TooMany {
        /// The most commands a second the page may send.
        per_second: f64,
    },
    /// No `"cmd"` string.
    #[error("a command needs \"cmd\"")]
    NoName,
    /// A command this view does not take; `takes` lists the ones it does (or is empty).
    #[error("unknown command {name:?}{takes}")]
    Unknown {
        /// The command's `"cmd"`.
        name: String,
        /// The commands the view does take, as ` (… takes a, b, c)` after the message; or empty.
        takes: &'static str,
    },
    /// A command a replay does not take; `takes` lists the ones it does (or is empty).
    #[error("{name:?} is not available in a replay{takes}")]
    NotInReplay {
        /// The command's `"cmd"`.
        name: String,
        /// The commands the view does take, as ` (… takes a, b, c)` after the message; or empty.
        takes: &'static str,
    },
    /// The field `name` is missing or not a finite number.
    #[error("{0} must be a finite number")]
    NotANumber(&'static str),
    /// An argument missing or out of range: what the command takes.
    #[error("{0}")]
    Usage(&'static str),
    /// `step` past the most frames one command may ask for.
    #[error("step: 1 to {max} frames")]
    Steps {
        /// The most frames one `step` may ask for.
        max: u64,
    },
    /// A replay's speed that is not a number from 0.001 to 10,000.
    #[error(transparent)]
    Speed(#[from] BadSpeed),
    /// A file name the Mobile Robot Simulator's map directory refuses.
    #[error(transparent)]
    FileName(#[from] simrob_mrs::FileError),
    /// The page only watches: what drives the run instead.
    #[error("{0}")]
    WatchOnly(&'static str),
    /// What the command was for (`the server`, `the simulator`, `the replay`) has stopped.
    #[error("{0} has stopped")]
    Stopped(&'static str),
    /// A thread panicked while it held the view's state.
    #[error("viewer state poisoned")]
    Poisoned,
}

/// The command's name (`"cmd"`).
pub fn name(cmd: &serde_json::Value) -> Result<&str, CommandError> {
    cmd.get("cmd")
        .and_then(|c| c.as_str())
        .ok_or(CommandError::NoName)
}

/// The command's field `field` as a finite number.
pub fn number(cmd: &serde_json::Value, field: &'static str) -> Result<f64, CommandError> {
    cmd.get(field)
        .and_then(|v| v.as_f64())
        .filter(|v| v.is_finite())
        .ok_or(CommandError::NotANumber(field))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_and_numbers_are_read_or_refused_with_the_page_text() {
        assert_eq!(name(&json!({"cmd": "play"})).unwrap(), "play");
        for bad in [json!({}), json!({"cmd": 3}), json!("play")] {
            let e = name(&bad).unwrap_err();
            assert!(matches!(e, CommandError::NoName));
            assert_eq!(e.to_string(), "a command needs \"cmd\"");
        }
        assert_eq!(number(&json!({"value": 2.5}), "value").unwrap(), 2.5);
        for bad in [json!({}), json!({"value": "2"}), json!({"value": null})] {
            assert_eq!(
                number(&bad, "value").unwrap_err().to_string(),
                "value must be a finite number"
            );
        }
        let e = serde_json::from_str::<serde_json::Value>("{")
            .map_err(CommandError::from)
            .unwrap_err();
        assert!(e.to_string().starts_with("bad command: "), "{e}");
        let e = CommandError::Unknown {
            name: "fly".into(),
            takes: "",
        };
        assert_eq!(e.to_string(), "unknown command \"fly\"");
    }

    /// What the page shows for a refused command, whole, from each view that takes commands.
    #[test]
    fn every_view_refuses_with_the_text_the_page_shows() {
        use crate::view2d::swarm::SwarmControl;
        use crate::{Backend, SessionBridge};

        let (tx, rx) = std::sync::mpsc::channel();
        let bridge = SessionBridge::new(tx);
        let swarm = SwarmControl::new(false, 1.0);
        let refused = |b: &dyn Backend, cmd: serde_json::Value| match b.command(&cmd) {
            Ok(()) => panic!("{cmd} was taken"),
            Err(e) => e.to_string(),
        };
        for (cmd, want) in [
            (
                json!({"cmd": "rtf", "value": -1}),
                "the real-time factor must not be negative",
            ),
            (json!({"cmd": "timestep"}), "value must be a finite number"),
            (json!({"cmd": "motors"}), "motors needs \"entity\""),
            (
                json!({"cmd": "motors", "entity": 1}),
                "motors needs \"values\": [[joint, rad/s], …]",
            ),
            (
                json!({"cmd": "motors", "entity": 1, "values": [[0]]}),
                "each motor is [joint id, finite rad/s]",
            ),
            (json!({"cmd": "fly"}), "unknown command \"fly\""),
            (json!({"value": 1}), "a command needs \"cmd\""),
        ] {
            assert_eq!(refused(bridge.as_ref(), cmd), want);
        }
        assert!(rx.try_recv().is_err(), "a refused command sends nothing");
        drop(rx);
        assert_eq!(
            refused(bridge.as_ref(), json!({"cmd": "play"})),
            "the server has stopped"
        );
        for (cmd, want) in [
            (
                json!({"cmd": "step", "value": 0}),
                format!(
                    "step: 1 to {} frames",
                    crate::Guard::default().max_step_frames
                ),
            ),
            (
                json!({"cmd": "speed", "value": -1}),
                "speed: a factor ≥ 0 (0 = as fast as possible)".into(),
            ),
            (
                json!({"cmd": "seek"}),
                "unknown command \"seek\" (a swarm run takes play, pause, step, speed)".into(),
            ),
        ] {
            assert_eq!(refused(swarm.as_ref(), cmd), want);
        }
        for (cmd, want) in [
            (
                json!({"cmd": "place", "x": 1}),
                "place needs \"robot\": a robot id",
            ),
            (
                json!({"cmd": "place", "robot": 1, "x": 1, "y": 2}),
                "heading must be a finite number",
            ),
            (
                json!({"cmd": "go"}),
                "unknown command \"go\" (the Mobile Robot Simulator's view takes place, load, \
                 merge, rect)",
            ),
        ] {
            assert_eq!(
                crate::view2d::mrs::parse(&cmd).unwrap_err().to_string(),
                want
            );
        }
    }
}
