#![doc = include_str!("../../../docs/reference/humanoid.md")]
//!
//! ## In Rust
//!
//! (The page above is the documentation site's reference page `docs/reference/humanoid.md`.)
//!
//! The requests are [`EntitySpec::Humanoid`](crate::EntitySpec::Humanoid),
//! [`EntityRequest::HumanoidAction`](crate::EntityRequest::HumanoidAction) and
//! [`ControlRequest::SetRollingResistance`](crate::ControlRequest::SetRollingResistance),
//! decoded and encoded like every other request. A brain's broadcast is a [`BrainBroadcast`]:
//! [`encode_brain_broadcast`] writes it, [`decode_brain_broadcast`] reads it.
//!
//! ```
//! use simrob_protocol::humanoid::*;
//!
//! let b = BrainBroadcast {
//!     iteration: 812,
//!     state: HumanoidState {
//!         entity_id: simrob_protocol::EntityId(21),
//!         time: 8.12,
//!         head_pan: 0.0,
//!         head_tilt: -20.0,
//!         posture: "standing".into(),
//!         action: Some(ActionReport {
//!             seq: 4,
//!             status: "running".into(),
//!             name: "walk".into(),
//!             params: vec![("distance".into(), "30".into())],
//!         }),
//!         ended: vec![ActionReport {
//!             seq: 3,
//!             status: "interrupted".into(),
//!             name: "turn".into(),
//!             params: vec![("angle".into(), "-40".into())],
//!         }],
//!     },
//!     camera: Some(CameraMessage {
//!         time: 8.0,
//!         objects: vec![ObjectSeen { kind: "BALL".into(), angle: 11.31, distance: 101.98 }],
//!     }),
//! };
//! let xml = encode_brain_broadcast(&b);
//! assert_eq!(decode_brain_broadcast(xml.as_bytes()).unwrap(), b);
//! ```

use crate::encode::{real, Real};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::ids::EntityId;
use crate::tree::{escape_attr_into, escape_text_into, parse_elements_bytes, Element};

/// The state of the running (or last) action of a humanoid.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionReport {
    /// The request's sequence number for this robot (from 1).
    pub seq: u64,
    /// `running`, `done`, `interrupted` or `fell`.
    pub status: String,
    /// FutRob's action name.
    pub name: String,
    /// Its parameters, as `<Action>` attributes.
    pub params: Vec<(String, String)>,
}

/// A humanoid's proprioception.
#[derive(Debug, Clone, PartialEq)]
pub struct HumanoidState {
    /// The humanoid's entity.
    pub entity_id: EntityId,
    /// Simulated seconds.
    pub time: f64,
    /// Degrees, positive right.
    pub head_pan: f64,
    /// Degrees, negative down.
    pub head_tilt: f64,
    /// `standing`, `fallenFront`, `fallenBack`, `savingRight` or `savingLeft`.
    pub posture: String,
    /// `None` before its first action.
    pub action: Option<ActionReport>,
    /// The actions that ended since the previous broadcast to this brain, in the order they
    /// ended, each with its final status (`done`, `interrupted` or `fell`): every action
    /// requested is listed here exactly once, even one replaced before it started.
    pub ended: Vec<ActionReport>,
}

/// One object the camera recognised.
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectSeen {
    /// `BALL`, `PARTNER`, `OPPONENT`, `MY_GOAL`, `OPP_GOAL`, `MY_LATERAL_POST`,
    /// `OPP_LATERAL_POST`, `RIGHT_LANDMARK` or `LEFT_LANDMARK`.
    pub kind: String,
    /// Degrees from the robot's heading, positive right.
    pub angle: f64,
    /// Centimetres on the floor from the robot's centre.
    pub distance: f64,
}

/// One camera frame.
#[derive(Debug, Clone, PartialEq)]
pub struct CameraMessage {
    /// Simulated seconds when it was taken.
    pub time: f64,
    /// Every object recognised in the frame (empty if none).
    pub objects: Vec<ObjectSeen>,
}

/// What a `Humanoid_Brain` agent receives.
#[derive(Debug, Clone, PartialEq)]
pub struct BrainBroadcast {
    /// The iteration just simulated.
    pub iteration: u64,
    /// The humanoid's proprioception after it.
    pub state: HumanoidState,
    /// Present when the camera has a new frame.
    pub camera: Option<CameraMessage>,
}

/// A time as written: simulated seconds to the microsecond (`8.12`, not the
/// `8.120000000000001` that summing 10 ms steps makes).
fn time_text(t: f64) -> Real {
    let rounded = (t * 1e6).round() / 1e6;
    real(if rounded.is_finite() { rounded } else { t })
}

/// An angle (degrees) or distance (cm) as written: at the `f32` precision every other number
/// of the protocol has (`30`, not the `29.999999999999996` a conversion from radians makes).
fn measure_text(v: f64) -> Real {
    let single = (v as f32) as f64;
    real(if single.is_finite() { single } else { v })
}

/// The `<Broadcast>` of a brain.
pub fn brain_broadcast_element(b: &BrainBroadcast) -> Element {
    let s = &b.state;
    let mut state = Element::new("Humanoid_State")
        .with_child(Element::leaf("Entity_Id", s.entity_id))
        .with_child(Element::leaf("Time", time_text(s.time)))
        .with_child(Element::leaf("Head_Pan", measure_text(s.head_pan)))
        .with_child(Element::leaf("Head_Tilt", measure_text(s.head_tilt)))
        .with_child(Element::leaf("Posture", &s.posture));
    let report = |tag: &str, a: &ActionReport| {
        let mut el = Element::new(tag)
            .with_attr("Seq", a.seq.to_string())
            .with_attr("Status", a.status.clone())
            .with_attr("name", a.name.clone());
        for (k, v) in &a.params {
            el = el.with_attr(k.clone(), v.clone());
        }
        el
    };
    if let Some(a) = &s.action {
        state = state.with_child(report("Action", a));
    }
    for a in &s.ended {
        state = state.with_child(report("Ended", a));
    }
    let mut out = Element::new("Broadcast")
        .with_child(Element::leaf("Iteration", b.iteration))
        .with_child(state);
    if let Some(c) = &b.camera {
        out = out.with_child(
            Element::new("Camera")
                .with_child(Element::leaf("Time", time_text(c.time)))
                .with_children(c.objects.iter().map(|o| {
                    Element::new("Object")
                        .with_attr("Type", o.kind.clone())
                        .with_attr("Angle", measure_text(o.angle).to_string())
                        .with_attr("Distance", measure_text(o.distance).to_string())
                })),
        );
    }
    out
}

/// Writes a brain's broadcast (the same XML as [`brain_broadcast_element`], written directly:
/// it goes out every iteration to every brain).
pub fn encode_brain_broadcast(b: &BrainBroadcast) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(512);
    let s = &b.state;
    let _ = write!(
        out,
        "<Broadcast><Iteration>{}</Iteration><Humanoid_State><Entity_Id>{}</Entity_Id><Time>{}</Time><Head_Pan>{}</Head_Pan><Head_Tilt>{}</Head_Tilt><Posture>",
        b.iteration,
        s.entity_id,
        time_text(s.time),
        measure_text(s.head_pan),
        measure_text(s.head_tilt)
    );
    escape_text_into(&s.posture, &mut out);
    out.push_str("</Posture>");
    let report = |out: &mut String, tag: &str, a: &ActionReport| {
        let _ = write!(out, "<{tag} Seq=\"{}\" Status=\"", a.seq);
        escape_attr_into(&a.status, out);
        out.push_str("\" name=\"");
        escape_attr_into(&a.name, out);
        out.push('"');
        for (k, v) in &a.params {
            out.push(' ');
            out.push_str(k);
            out.push_str("=\"");
            escape_attr_into(v, out);
            out.push('"');
        }
        out.push_str("/>");
    };
    if let Some(a) = &s.action {
        report(&mut out, "Action", a);
    }
    for a in &s.ended {
        report(&mut out, "Ended", a);
    }
    out.push_str("</Humanoid_State>");
    if let Some(c) = &b.camera {
        let _ = write!(out, "<Camera><Time>{}</Time>", time_text(c.time));
        for o in &c.objects {
            out.push_str("<Object Type=\"");
            escape_attr_into(&o.kind, &mut out);
            let _ = write!(
                out,
                "\" Angle=\"{}\" Distance=\"{}\"/>",
                measure_text(o.angle),
                measure_text(o.distance)
            );
        }
        out.push_str("</Camera>");
    }
    out.push_str("</Broadcast>");
    out
}

fn attr_f64(el: &Element, name: &str) -> Result<f64, DecodeError> {
    let v = el.required_attr(name)?;
    match v.parse::<f64>() {
        Ok(x) if x.is_finite() => Ok(x),
        _ => Err(DecodeError::invalid(format!(
            "attribute {name}: expected a finite number, found {v:?}"
        ))),
    }
}

/// Reads a brain's broadcast (one datagram). Errors say what is wrong and where.
pub fn decode_brain_broadcast(data: &[u8]) -> Result<BrainBroadcast, DecodeError> {
    let roots = parse_elements_bytes(data)?;
    let [root] = roots.as_slice() else {
        return Err(DecodeError::new(
            DecodeErrorKind::UnexpectedElement,
            format!(
                "expected one <Broadcast>, found {} root elements",
                roots.len()
            ),
        ));
    };
    if root.name != "Broadcast" {
        return Err(DecodeError::new(
            DecodeErrorKind::UnexpectedElement,
            format!(
                "unexpected root element <{}> (expected <Broadcast>)",
                root.name
            ),
        ));
    }
    let iteration = root
        .child_u64("Iteration")
        .map_err(|e| e.within("Broadcast"))?;
    let st = root
        .required_child("Humanoid_State")
        .map_err(|e| e.within("Broadcast"))?;
    let state = (|| {
        let report = |a: &Element| -> Result<ActionReport, DecodeError> {
            let seq = a.required_attr("Seq")?;
            Ok(ActionReport {
                seq: seq.parse().map_err(|_| {
                    DecodeError::invalid(format!(
                        "attribute Seq: expected an integer, found {seq:?}"
                    ))
                })?,
                status: a.required_attr("Status")?.to_string(),
                name: a.required_attr("name")?.to_string(),
                params: a
                    .attrs
                    .iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "Seq" | "Status" | "name"))
                    .cloned()
                    .collect(),
            })
        };
        let action = match st.child("Action") {
            None => None,
            Some(a) => Some(report(a).map_err(|e| e.within("Action"))?),
        };
        let mut ended = Vec::new();
        for (i, a) in st.children("Ended").enumerate() {
            ended.push(report(a).map_err(|e| e.within(format!("Ended[{}]", i + 1)))?);
        }
        Ok(HumanoidState {
            entity_id: EntityId(st.child_u32("Entity_Id")?),
            time: st.child_f64("Time")?,
            head_pan: st.child_f64("Head_Pan")?,
            head_tilt: st.child_f64("Head_Tilt")?,
            posture: st.child_string("Posture")?,
            action,
            ended,
        })
    })()
    .map_err(|e: DecodeError| e.within("Humanoid_State").within("Broadcast"))?;
    let camera = match root.child("Camera") {
        None => None,
        Some(c) => Some(
            (|| {
                let mut objects = Vec::new();
                for (i, o) in c.children("Object").enumerate() {
                    objects.push(
                        (|| {
                            Ok(ObjectSeen {
                                kind: o.required_attr("Type")?.to_string(),
                                angle: attr_f64(o, "Angle")?,
                                distance: attr_f64(o, "Distance")?,
                            })
                        })()
                        .map_err(|e: DecodeError| e.within(format!("Object[{}]", i + 1)))?,
                    );
                }
                Ok(CameraMessage {
                    time: c.child_f64("Time")?,
                    objects,
                })
            })()
            .map_err(|e: DecodeError| e.within("Camera").within("Broadcast"))?,
        ),
    };
    Ok(BrainBroadcast {
        iteration,
        state,
        camera,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{decode_datagram, encode_request, CommandKeys, EntityRequest, Request};

    #[test]
    fn the_documented_datagrams_decode() {
        let keys = CommandKeys::default();
        let doc = include_str!("../../../docs/reference/humanoid.md");
        // Every <Message> example of the documentation decodes.
        let mut found = 0;
        for block in doc.split("```xml").skip(1) {
            let xml = block.split("```").next().unwrap_or("");
            if !xml.trim_start().starts_with("<Message>") {
                continue;
            }
            for r in decode_datagram(xml.as_bytes(), &keys) {
                let r = r.unwrap_or_else(|e| panic!("{e}\n{xml}"));
                // And round-trips.
                let again = encode_request(&r, &keys);
                let back: Vec<_> = decode_datagram(again.as_bytes(), &keys)
                    .into_iter()
                    .map(|x| x.unwrap())
                    .collect();
                assert_eq!(back, vec![r]);
                found += 1;
            }
        }
        assert!(found >= 3, "{found}");
        // The table's one-line actions.
        for line in doc.lines().filter(|l| l.contains("`<Action name=")) {
            for part in line.split('`').filter(|p| p.starts_with("<Action")) {
                let xml = format!(
                    "<Message><Simulation_Message><Entity_Request Command=\"Humanoid_Action\"><Entity_Id>21</Entity_Id>{part}</Entity_Request></Simulation_Message></Message>"
                );
                let r = decode_datagram(xml.as_bytes(), &keys).remove(0).unwrap();
                let Request::Entity {
                    request: EntityRequest::HumanoidAction { name, .. },
                    ..
                } = r
                else {
                    panic!("{part}")
                };
                assert!(part.contains(&format!("name=\"{name}\"")));
            }
        }
    }

    #[test]
    fn the_documented_broadcast_decodes() {
        let doc = include_str!("../../../docs/reference/humanoid.md");
        let block = doc
            .split("```xml")
            .skip(1)
            .map(|b| b.split("```").next().unwrap_or(""))
            .find(|b| b.trim_start().starts_with("<Broadcast>"))
            .expect("a broadcast example");
        let b = decode_brain_broadcast(block.as_bytes()).unwrap();
        assert_eq!(b.state.entity_id, EntityId(21));
        let a = b.state.action.as_ref().unwrap();
        assert_eq!((a.seq, a.name.as_str()), (4, "walk"));
        assert_eq!(a.params, vec![("distance".to_string(), "30".to_string())]);
        let c = b.camera.as_ref().unwrap();
        assert_eq!(c.objects.len(), 3);
        assert_eq!(c.objects[0].kind, "BALL");
        assert_eq!(
            decode_brain_broadcast(encode_brain_broadcast(&b).as_bytes()).unwrap(),
            b
        );
    }

    #[test]
    fn numbers_are_written_without_float_noise() {
        let b = BrainBroadcast {
            iteration: 812,
            state: HumanoidState {
                entity_id: EntityId(21),
                time: 0.01 * 812.0 + 1e-12,
                head_pan: (30.0f64 * std::f64::consts::PI / 180.0).to_degrees(),
                head_tilt: -20.0,
                posture: "standing".into(),
                action: None,
                ended: Vec::new(),
            },
            camera: Some(CameraMessage {
                time: 8.120000000000001,
                objects: vec![ObjectSeen {
                    kind: "BALL".into(),
                    angle: -19.97380964689998,
                    distance: 585.2349955359813,
                }],
            }),
        };
        assert_eq!(b.state.head_pan, 29.999999999999996);
        let xml = encode_brain_broadcast(&b);
        for part in [
            "<Time>8.12</Time>",
            "<Head_Pan>30</Head_Pan>",
            "Angle=\"-19.97381\"",
            "Distance=\"585.235\"",
        ] {
            assert!(xml.contains(part), "{part} in {xml}");
        }
        assert_eq!(brain_broadcast_element(&b).to_xml(), xml);
    }

    #[test]
    fn bad_broadcasts_say_where() {
        let e =
            decode_brain_broadcast(b"<Broadcast><Iteration>1</Iteration></Broadcast>").unwrap_err();
        assert!(e.to_string().contains("Humanoid_State"), "{e}");
        let e = decode_brain_broadcast(
            b"<Broadcast><Iteration>1</Iteration><Humanoid_State><Entity_Id>1</Entity_Id><Time>0</Time><Head_Pan>0</Head_Pan><Head_Tilt>0</Head_Tilt><Posture>standing</Posture></Humanoid_State><Camera><Time>0</Time><Object Type=\"BALL\" Angle=\"NaN\" Distance=\"1\"/></Camera></Broadcast>",
        )
        .unwrap_err();
        assert!(e.to_string().contains("Angle"), "{e}");
    }
}
