//! `simrob send humanoid` and `simrob send action` against a real server on the KidSize field.

use std::process::Output;

use simrob_session::ServerConfig;

use crate::support::InProcess;

/// A server on the KidSize field.
fn kidsize() -> InProcess {
    InProcess::start(
        "humanoid-send",
        ServerConfig::default(),
        Some("scenarios/soccer/kidsize.xml"),
    )
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn create_a_humanoid_and_drive_it() {
    let server = kidsize();
    let o = server.send(&[
        "humanoid", "--entity", "21", "--team", "cyan", "--", "-0.3", "0.04", "0",
    ]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert_eq!(out.trim(), "Create_Entity: Created Humanoid entity 21");

    let o = server.send(&["action", "--entity", "21", "walk", "distance=14"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{out}{err}");
    assert_eq!(
        out.trim(),
        "Humanoid_Action: robot 21: walk distance=14 is action 1"
    );

    let o = server.send(&["action", "--entity", "21", "turnHeadVertically", "angle=10"]);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    assert!(
        err.contains("angle = 10 is out of range [-60, 0] degrees"),
        "{err}"
    );

    let o = server.send(&[
        "humanoid", "--entity", "22", "--team", "green", "--", "1", "1",
    ]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("Team must be cyan or magenta"), "{err}");

    // A malformed parameter is refused before anything is sent.
    let o = server.send(&["action", "--entity", "21", "walk", "30"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("PARAM=VALUE"), "{err}");
}
