//! The protocol's reference page (`docs/reference/gri.md`) against the code: every message
//! kind, operator request, task kind, task state, failure code, capability, policy and
//! field the wire format has is on the page, and every example line on it decodes.

use simrob_coord::model::{
    FailCode, RobotInfo, RobotStatus, Running, TaskClass, TaskKind, TaskSpec, TaskState,
};
use simrob_coord::wire::{decode, Msg, OperatorCommand, Policy};

fn page() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/reference/gri.md");
    std::fs::read_to_string(path).expect("docs/reference/gri.md")
}

/// The names serde expects where `probe` puts an unknown one (its error lists them all),
/// straight from the code: a name added there is asked for here.
fn names(probe: &str) -> Vec<String> {
    let e = decode(probe.as_bytes(), 1)
        .expect_err("an unknown name")
        .to_string();
    let list = e
        .split("expected one of ")
        .nth(1)
        .unwrap_or_else(|| panic!("a list of names in {e}"));
    list.split(", ")
        .map(|n| {
            n.trim_start_matches("or ")
                .split('`')
                .nth(1)
                .expect("a quoted name")
                .to_string()
        })
        .collect()
}

#[test]
fn every_name_of_the_wire_format_is_on_the_reference_page() {
    let page = page();
    let task = |kind: &str| {
        format!(r#"{{"from":0,"msg":{{"kind":"task","task":{{"id":1,"kind":{kind}}}}}}}"#)
    };
    let state = |state: &str| {
        format!(
            r#"{{"from":1,"msg":{{"kind":"task_state","robot":1,"task":1,"state":{state},"time":0,"synced":true}}}}"#
        )
    };
    let groups = [
        ("message kind", names(r#"{"from":0,"msg":{"kind":"?"}}"#)),
        (
            "operator request",
            names(r#"{"from":0,"msg":{"kind":"operator","command":{"op":"?"}}}"#),
        ),
        ("task kind", names(&task(r#"{"?":{}}"#))),
        ("task state", names(&state(r#"{"state":"?"}"#))),
        (
            "failure code",
            names(&state(r#"{"state":"failed","code":"?"}"#)),
        ),
        (
            "capability",
            names(
                r#"{"from":1,"msg":{"kind":"hello","info":{"robot":1,"name":"a","kind":"b","world":"c","capabilities":["?"],"speed":1}}}"#,
            ),
        ),
        (
            "policy",
            names(r#"{"from":0,"msg":{"kind":"operator","command":{"op":"mode","policy":"?"}}}"#),
        ),
    ];
    for (what, list) in &groups {
        assert!(list.len() >= 3, "{what}: {list:?}");
        for name in list {
            assert!(
                page.contains(&format!("`{name}`")) || page.contains(&format!("\"{name}\"")),
                "the {what} `{name}` is not on docs/reference/gri.md"
            );
        }
    }
    assert_eq!(
        groups[0].1.len(),
        18,
        "every message kind: {:?}",
        groups[0].1
    );
}

#[test]
fn every_field_of_the_wire_format_is_on_the_reference_page() {
    let page = page();
    let mut task = TaskSpec::new(
        1,
        TaskKind::PanTilt {
            pan: 0.5,
            tilt: 0.0,
            seconds: 1.0,
        },
    );
    task.after = vec![2];
    task.world = Some("w".into());
    // Every optional field set, so that each of its keys is serialised.
    let info = RobotInfo {
        robot: 1,
        name: "a".into(),
        kind: "b".into(),
        world: "c".into(),
        capabilities: TaskClass::ALL.to_vec(),
        speed: 1.0,
    };
    let status = RobotStatus {
        robot: 1,
        time: 0.0,
        synced: true,
        x: 0.0,
        y: 0.0,
        heading: 0.0,
        speed: 0.0,
        battery: Some(1.0),
        running: Running {
            movement: Some(1),
            perception: Some(2),
            pan_tilt: Some(3),
        },
        queued: 0,
        ok: false,
        error: Some("e".into()),
    };
    let values = [
        serde_json::to_value(simrob_coord::wire::Envelope {
            from: 1,
            to: Some(0),
            msg: Msg::Operator {
                command: Box::new(OperatorCommand::Send {
                    robot: 1,
                    task: task.clone(),
                }),
            },
        }),
        serde_json::to_value(OperatorCommand::Mode {
            policy: Policy::Cnp,
        }),
        serde_json::to_value(&info),
        serde_json::to_value(&status),
        serde_json::to_value(TaskKind::Path {
            points: vec![[0.0, 0.0]],
        }),
        serde_json::to_value(TaskKind::Goto { x: 0.0, y: 0.0 }),
        serde_json::to_value(TaskKind::Perceive { seconds: 1.0 }),
        serde_json::to_value(TaskState::Failed {
            code: FailCode::Cycle,
        }),
        serde_json::to_value(TaskState::Blocked { by: 1 }),
        serde_json::to_value(Msg::TaskState {
            robot: 1,
            task: 1,
            state: TaskState::Ended,
            time: 0.0,
            synced: true,
        }),
        serde_json::to_value(Msg::Clock { seq: 1, time: 0.0 }),
        serde_json::to_value(Msg::Award {
            auction: 1,
            task: Box::new(task.clone()),
            winner: 1,
            deadline: 0.0,
        }),
        serde_json::to_value(Msg::Bid {
            auction: 1,
            robot: 1,
            cost: Some(1.0),
        }),
        serde_json::to_value(Msg::Decline {
            auction: 1,
            robot: 1,
            reason: "r".into(),
        }),
        serde_json::to_value(Msg::Refused { reason: "r".into() }),
        serde_json::to_value(Msg::Report { text: "t".into() }),
        serde_json::to_value(Msg::Welcome { robot: 1 }),
        serde_json::to_value(Msg::Hello {
            info: Box::new(info.clone()),
        }),
        serde_json::to_value(Msg::Status {
            status: Box::new(status.clone()),
        }),
    ];
    fn keys(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    out.push(k.clone());
                    keys(v, out);
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| keys(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    for v in values {
        keys(&v.expect("serialises"), &mut all);
    }
    for k in all {
        assert!(
            page.contains(&format!("`{k}`")) || page.contains(&format!("{{\"{k}\":")),
            "the field `{k}` is not on docs/reference/gri.md"
        );
    }
}

#[test]
fn every_example_line_on_the_reference_page_decodes() {
    let page = page();
    let mut in_json = false;
    let mut n = 0;
    for line in page.lines() {
        if line.starts_with("```") {
            in_json = line == "```json";
            continue;
        }
        if in_json {
            decode(line.as_bytes(), 1).unwrap_or_else(|e| panic!("{e}: {line}"));
            n += 1;
        }
    }
    assert!(n >= 30, "{n} example lines");
}
