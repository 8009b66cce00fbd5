//! Decoding: datagrams → [`Request`]s, server datagrams → [`ServerMessage`]s, and the
//! element-level decoders other crates reuse (entity specs, bodies, joints, materials).
//!
//! See the crate documentation for the leniencies.

use crate::commands::{Command, Family};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::fields::{
    ANGULAR_VELOCITY, AXIS_1, AXIS_2, LINEAR_VELOCITY, POS, POSITION, ROT, ROTATION, SIZE,
};
use crate::ids::{EntityId, MaterialId};
use crate::keys::CommandKeys;
use crate::model::*;
use crate::tree::{parse_elements_bytes, parse_partial, utf8, Element};

const AGENT_MESSAGE: &str = Family::Agent.element();
const SIMULATION_MESSAGE: &str = "Simulation_Message";
const CONTROL_REQUEST: &str = Family::Control.element();
const ENTITY_REQUEST: &str = Family::Entity.element();

/// What only a server sends, as the start of a datagram: a `<Response>` (a confirmation, an
/// error, an `Agent_Information`), a `<Broadcast>`, or a bare error text (`Error: …`).
/// Returns the root's name (`"Response"`, `"Broadcast"`, `"Error"`) when `data` starts so
/// (after a byte-order mark, white space, an XML declaration and comments), else `None`.
///
/// A server drops such a datagram unanswered: answering another server's answer (or its
/// own) with an error starts an exchange of errors that never ends.
pub fn server_sent_root(data: &[u8]) -> Option<&'static str> {
    let mut rest = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    loop {
        let start = rest.iter().position(|b| !b.is_ascii_whitespace())?;
        rest = &rest[start..];
        let skip_to = |rest: &[u8], open: &[u8], close: &[u8]| -> Option<usize> {
            rest.starts_with(open).then(|| {
                rest.windows(close.len())
                    .position(|w| w == close)
                    .map_or(rest.len(), |i| i + close.len())
            })
        };
        if let Some(n) = skip_to(rest, b"<?", b"?>").or_else(|| skip_to(rest, b"<!--", b"-->")) {
            rest = &rest[n..];
            continue;
        }
        break;
    }
    if rest.starts_with(b"Error:") {
        return Some("Error");
    }
    ["Response", "Broadcast"].into_iter().find(|name| {
        rest.strip_prefix(b"<")
            .and_then(|r| r.strip_prefix(name.as_bytes()))
            .and_then(|r| r.first())
            .is_some_and(|b| matches!(b, b'>' | b'/') || b.is_ascii_whitespace())
    })
}

/// An XML declaration naming an encoding other than UTF-8: SimRob messages are UTF-8 only,
/// and text in another encoding would be read wrong.
fn other_encoding(text: &str) -> Option<DecodeError> {
    let decl = text.trim_start().strip_prefix("<?xml")?;
    let decl = &decl[..decl.find("?>")?];
    let at = decl.find("encoding")?;
    let rest = decl[at + "encoding".len()..]
        .trim_start()
        .strip_prefix('=')?
        .trim_start();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let value = &rest[1..];
    let name = &value[..value.find(quote)?];
    let utf8 = ["utf-8", "utf8"].contains(&name.trim().to_ascii_lowercase().as_str());
    (!utf8).then(|| {
        DecodeError::new(
            DecodeErrorKind::NotUtf8,
            format!(
                "the datagram declares encoding {name:?}, but SimRob messages are UTF-8 only: send UTF-8 and declare encoding=\"UTF-8\" or no encoding; nothing in it was executed"
            ),
        )
    })
}

/// The first character XML 1.0 does not allow in a document (a control character other
/// than tab, newline and carriage return, U+FFFE, U+FFFF), as a
/// [`DecodeErrorKind::Syntax`] error: a datagram holding one is not well-formed.
fn forbidden_character(text: &str) -> Option<DecodeError> {
    let (offset, c) = text.char_indices().find(|&(_, c)| {
        (c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{7f}'..='\u{9f}'))
            || matches!(c, '\u{fffe}' | '\u{ffff}')
    })?;
    Some(DecodeError::syntax(
        format!(
            "character U+{:04X} is not allowed in XML 1.0 (only tab, newline and carriage return among control characters)",
            u32::from(c)
        ),
        crate::error::Position::locate(text, offset),
    ))
}

/// Decodes one datagram into its requests, one entry per request, in document order.
///
/// - A datagram may hold several roots; each `<Message>` may hold `<Agent_Message>`s and
///   `<Simulation_Message>`s, each of those one or more `<Control_Request>` /
///   `<Entity_Request>`. Each request gives one entry, `Ok` or `Err`: a bad request does not
///   spoil its neighbours.
/// - If the XML breaks part-way, the requests that were complete before the break are
///   returned `Ok`, followed by one `Err` for the rest (a [`DecodeErrorKind::Syntax`] error
///   with byte offset, line and column).
/// - Non-UTF-8 bytes, an empty datagram and text that is not XML give a single `Err`.
/// - A `<Message>` or `<Simulation_Message>` that holds no request, an unknown root and an
///   unknown child of `<Message>` / `<Simulation_Message>` each give an `Err` entry.
/// - A bare `<Agent_Message>`, `<Simulation_Message>`, `<Control_Request>` or
///   `<Entity_Request>` root is accepted as if it were inside a `<Message>` (the SimRob manual
///   shows its `Create_Entity` examples that way).
///
/// The returned vector is never empty.
pub fn decode_datagram(data: &[u8], keys: &CommandKeys) -> Vec<Result<Request, DecodeError>> {
    decode_datagram_with_depth(data, keys, crate::tree::MAX_DEPTH)
}

/// [`decode_datagram`], elements nested at most `max_depth` deep (at most
/// [`crate::tree::MAX_DEPTH_LIMIT`]): deeper is a [`DecodeErrorKind::Syntax`] error.
pub fn decode_datagram_with_depth(
    data: &[u8],
    keys: &CommandKeys,
    max_depth: usize,
) -> Vec<Result<Request, DecodeError>> {
    let max_depth = max_depth.min(crate::tree::MAX_DEPTH_LIMIT);
    let text = match utf8(data) {
        Ok(t) => t,
        Err(e) => return vec![Err(e)],
    };
    if let Some(e) = forbidden_character(text).or_else(|| other_encoding(text)) {
        return vec![Err(e)];
    }
    let partial = parse_partial(text, max_depth);
    let mut out = Vec::new();
    let n = partial.roots.len();
    for (i, root) in partial.roots.iter().enumerate() {
        let open = if i + 1 == n { partial.open } else { 0 };
        let segment = root_segment(root, i + 1);
        walk(root, open, &[segment], keys, &mut out);
    }
    if let Some(mut e) = partial.error {
        if partial.open > 0 {
            if let (Some(root), Some(first)) =
                (partial.roots.last(), e.path_segments_mut().first_mut())
            {
                *first = root_segment(root, n);
            }
        }
        out.push(Err(e));
    }
    if out.is_empty() {
        out.push(Err(DecodeError::new(
            DecodeErrorKind::Empty,
            "empty datagram: no XML element found",
        )));
    }
    out
}

fn root_segment(root: &Element, index: usize) -> String {
    match root.name.as_str() {
        AGENT_MESSAGE | CONTROL_REQUEST | ENTITY_REQUEST => request_segment(root),
        _ => format!("{}[{index}]", root.name),
    }
}

/// `Control_Request[Create_Entity]`, or just the name when there is no `Command`.
fn request_segment(el: &Element) -> String {
    match el.attr("Command") {
        Some(c) => format!("{}[{}]", el.name, c.trim()),
        None => el.name.clone(),
    }
}

fn wrap(mut e: DecodeError, path: &[String]) -> DecodeError {
    for seg in path.iter().rev() {
        e = e.within(seg.clone());
    }
    e
}

/// Walks a container (`Message`, `Simulation_Message`) or request element. `open` > 0
/// means the element is incomplete (the input broke inside it, `open` levels deep).
/// `path` ends with this element's own segment.
fn walk(
    el: &Element,
    open: usize,
    path: &[String],
    keys: &CommandKeys,
    out: &mut Vec<Result<Request, DecodeError>>,
) {
    match el.name.as_str() {
        "Message" | SIMULATION_MESSAGE => {
            let allowed: &[&str] = if el.name == "Message" {
                &[AGENT_MESSAGE, SIMULATION_MESSAGE]
            } else {
                &[CONTROL_REQUEST, ENTITY_REQUEST]
            };
            let before = out.len();
            let last = el.children.len().saturating_sub(1);
            for (j, child) in el.children.iter().enumerate() {
                let child_open = if open > 0 && j == last { open - 1 } else { 0 };
                if !allowed.contains(&child.name.as_str()) {
                    if child_open == 0 {
                        out.push(Err(wrap(
                            DecodeError::new(
                                DecodeErrorKind::UnexpectedElement,
                                format!(
                                    "unexpected element <{}> in <{}> (expected <{}>)",
                                    child.name,
                                    el.name,
                                    allowed.join("> or <")
                                ),
                            ),
                            path,
                        )));
                    }
                    continue;
                }
                let segment = if child.name == SIMULATION_MESSAGE {
                    child.name.clone()
                } else {
                    request_segment(child)
                };
                let mut child_path = path.to_vec();
                child_path.push(segment);
                walk(child, child_open, &child_path, keys, out);
            }
            if open == 0 && out.len() == before {
                out.push(Err(wrap(
                    DecodeError::new(
                        DecodeErrorKind::MissingElement,
                        format!(
                            "<{}> holds no request (expected <{}>)",
                            el.name,
                            allowed.join("> or <")
                        ),
                    ),
                    path,
                )));
            }
        }
        AGENT_MESSAGE | CONTROL_REQUEST | ENTITY_REQUEST => {
            if open == 0 {
                let parents = &path[..path.len().saturating_sub(1)];
                out.push(decode_request_element(el, keys).map_err(|e| wrap(e, parents)));
            }
        }
        other => {
            if open == 0 {
                let parents = &path[..path.len().saturating_sub(1)];
                out.push(Err(wrap(
                    DecodeError::new(
                        DecodeErrorKind::UnexpectedElement,
                        format!(
                            "unexpected root element <{other}> (expected <Message>, or a bare <Agent_Message>, <Simulation_Message>, <Control_Request> or <Entity_Request>)"
                        ),
                    ),
                    parents,
                )));
            }
        }
    }
}

/// Decodes one request element: an `<Agent_Message>`, `<Control_Request>` or
/// `<Entity_Request>`, or a `<Message>` / `<Simulation_Message>` holding exactly one
/// request. Error paths start with the request's own segment
/// (`Control_Request[Create_Entity]/Data/…`).
pub fn decode_request_element(el: &Element, keys: &CommandKeys) -> Result<Request, DecodeError> {
    let seg = request_segment(el);
    match el.name.as_str() {
        AGENT_MESSAGE => decode_command(el, Family::Agent, keys).map_err(|e| e.within(seg)),
        CONTROL_REQUEST => decode_command(el, Family::Control, keys).map_err(|e| e.within(seg)),
        ENTITY_REQUEST => decode_command(el, Family::Entity, keys).map_err(|e| e.within(seg)),
        "Message" | SIMULATION_MESSAGE => {
            let mut out = Vec::new();
            walk(el, 0, std::slice::from_ref(&el.name), keys, &mut out);
            let n = out.len();
            match (out.pop(), n) {
                (Some(only), 1) => only,
                _ => Err(DecodeError::new(
                    DecodeErrorKind::UnexpectedElement,
                    format!("expected exactly one request, found {n}"),
                )
                .within(el.name.clone())),
            }
        }
        other => Err(DecodeError::new(
            DecodeErrorKind::UnexpectedElement,
            format!(
                "<{other}> is not a request (expected <Agent_Message>, <Control_Request> or <Entity_Request>)"
            ),
        )),
    }
}

/// Fails when the request element `el` holds an element its decoding did not read, at any
/// depth: one the command does not take (`<response>`, a `<Rotation_Z>` in
/// `Set_Entity_Position`, a `<Mas>` in a `<Body>`) or one given more often than it is read
/// (two `<Timestep>`s, two `<Radius>` in a ball's `<Data>`). What was read is what the encoder
/// writes back for `request`, so the two are compared ([`every_element_read`]).
fn every_child_read(
    el: &Element,
    request: &Request,
    keys: &CommandKeys,
) -> Result<(), DecodeError> {
    let read = crate::encode::request_element(request, keys);
    let also = if matches!(request, Request::Agent(_)) {
        &[][..]
    } else {
        &["Response"][..]
    };
    every_element_read(el, &read, also)
}

/// The one name read in either spelling (the SimRob manual writes both `Entity_id` and
/// `Entity_Id`).
fn same_name(a: &str, b: &str) -> bool {
    a == b || [a, b].iter().all(|n| n.eq_ignore_ascii_case("Entity_Id"))
}

/// The optional children an element of `read`'s kind (below `parent`) reads when they are
/// there, beside those `read` holds: named when an unknown element is refused, so that a
/// misspelt `<Mas>` is told `<Mass>` is read.
fn optional_children(parent: &Element, read: &Element) -> &'static [&'static str] {
    match read.name.as_str() {
        "Body" => &["Material", "Mass"],
        "Joint" if read.attr("Type") == Some("WheelJoint") => {
            &["Hardness", "Bounciness", "Maximum_Torque"]
        }
        "Data" => match parent.attr("Type") {
            Some("Ball") => &["Material", "Mass"],
            Some("Humanoid") => &["Profile", "Seed", "Material"],
            _ => &[],
        },
        _ => &[],
    }
}

/// Fails when `el` holds a child that `read` (what the encoder writes back for what was
/// decoded from `el`) does not, or more of a name than `read` holds; then the same for each
/// child and its counterpart (the k-th child of a name with the k-th of that name in
/// `read`), at every depth. `also` names the optional children `el`'s kind reads beside
/// those in `read`, for the message. The error's path names where the element is
/// (`Data/Structure/Body[1] (Body_id 0)`).
fn every_element_read(el: &Element, read: &Element, also: &[&str]) -> Result<(), DecodeError> {
    // Most often `el` is written as the encoder writes: the same names in the same order,
    // each child's counterpart at its place.
    let in_order = el.children.len() == read.children.len()
        && el
            .children
            .iter()
            .zip(&read.children)
            .all(|(a, b)| same_name(&a.name, &b.name));
    if in_order {
        for (i, (child, back)) in el.children.iter().zip(&read.children).enumerate() {
            if !child.children.is_empty() {
                every_element_read(child, back, optional_children(el, back))
                    .map_err(|e| e.within(child_segment(el, i)))?;
            }
        }
        return Ok(());
    }
    // Each name once, in order of appearance, with how often `el` gives it: a handful of
    // names however many children (a field's hundreds of bodies are one name).
    let mut names: Vec<(&str, usize)> = Vec::new();
    for child in &el.children {
        match names.iter_mut().find(|(n, _)| same_name(n, &child.name)) {
            Some((_, given)) => *given += 1,
            None => names.push((&child.name, 1)),
        }
    }
    for &(name, given) in &names {
        let taken = read
            .children
            .iter()
            .filter(|c| same_name(&c.name, name))
            .count();
        if taken == 0 {
            return Err(unknown_element(el, name, read, also));
        }
        if given > taken {
            return Err(DecodeError::new(
                DecodeErrorKind::UnexpectedElement,
                format!("<{name}> given {given} times, read {taken}"),
            ));
        }
    }
    for &(name, _) in &names {
        let given_ones = el
            .children
            .iter()
            .enumerate()
            .filter(|(_, c)| same_name(&c.name, name));
        let read_ones = read.children.iter().filter(|c| same_name(&c.name, name));
        for ((i, child), back) in given_ones.zip(read_ones) {
            if !child.children.is_empty() {
                every_element_read(child, back, optional_children(el, back))
                    .map_err(|e| e.within(child_segment(el, i)))?;
            }
        }
    }
    Ok(())
}

/// The refusal of `<name>` in `el`, naming what `el` reads (`read`'s children and `also`).
fn unknown_element(el: &Element, name: &str, read: &Element, also: &[&str]) -> DecodeError {
    let mut takes: Vec<&str> = read.children.iter().map(|c| c.name.as_str()).collect();
    for a in also {
        if !takes.contains(a) {
            takes.push(a);
        }
    }
    takes.dedup();
    let mut message = format!("unknown element <{name}>");
    if let Some(like) = takes.iter().find(|t| t.eq_ignore_ascii_case(name)) {
        message.push_str(&format!(
            " (did you mean <{like}>? names are case-sensitive)"
        ));
    } else {
        let this = match el.name.as_str() {
            AGENT_MESSAGE | CONTROL_REQUEST | ENTITY_REQUEST => "this request".into(),
            other => format!("this <{other}>"),
        };
        if takes.is_empty() {
            message.push_str(&format!(" ({this} holds no element)"));
        } else {
            message.push_str(&format!(" ({this} reads <{}>)", takes.join(">, <")));
        }
    }
    DecodeError::new(DecodeErrorKind::UnexpectedElement, message)
}

/// Where the `i`-th child of `parent` is, as the decoders name it: `Body[3] (Body_id 2)`,
/// `Motor[2]`, `Data`; a name given more than once gets its index among those.
fn child_segment(parent: &Element, i: usize) -> String {
    let child = &parent.children[i];
    let name = child.name.as_str();
    let index = 1 + parent.children[..i]
        .iter()
        .filter(|c| same_name(&c.name, name))
        .count();
    let given = parent
        .children
        .iter()
        .filter(|c| same_name(&c.name, name))
        .count();
    match name {
        "Body" => indexed_segment(child, index, "Body_id"),
        "Joint" => indexed_segment(child, index, "Joint_id"),
        "Motor" | "Material" | "Interaction" => format!("{name}[{index}]"),
        _ if given > 1 => format!("{name}[{index}]"),
        _ => name.to_string(),
    }
}

/// Decodes the request element `el` of `family`: its `Command` attribute names the
/// command (under `keys`), the command table says how to read the rest.
fn decode_command(
    el: &Element,
    family: Family,
    keys: &CommandKeys,
) -> Result<Request, DecodeError> {
    let cmd = el.required_attr("Command")?;
    match keys.lookup(cmd) {
        Some(command) if command.family() == family => {
            let request = decode_payload(command, el)?;
            every_child_read(el, &request, keys)?;
            Ok(request)
        }
        other => {
            let mut message = format!(
                "unknown command {:?} in {} (known: {})",
                cmd,
                family.element(),
                keys.names_in(family).join(", ")
            );
            if let Some(command) = other {
                message.push_str(&format!(
                    "; {cmd} is a command of <{}>",
                    command.family().element()
                ));
            }
            Err(DecodeError::new(DecodeErrorKind::UnknownCommand, message))
        }
    }
}

pub(crate) fn unexpected_child(child: &Element, parent: &str, expected: &str) -> DecodeError {
    DecodeError::new(
        DecodeErrorKind::UnexpectedElement,
        format!(
            "unexpected element <{}> in <{parent}> (expected <{expected}>)",
            child.name
        ),
    )
}

/// `Entity_id` (as in `Create_Entity`) or `Entity_Id` (as in entity requests and
/// broadcasts): either spelling is accepted everywhere.
pub(crate) fn entity_id(el: &Element) -> Result<EntityId, DecodeError> {
    match el.child("Entity_id").or_else(|| el.child("Entity_Id")) {
        Some(c) => c.text_u32().map(EntityId),
        None => Err(DecodeError::new(
            DecodeErrorKind::MissingElement,
            "missing required child <Entity_id>",
        )),
    }
}

/// The `<Hardness>`, `<Bounciness>`, `<Slip1>`, `<Slip2>` and `<Friction>` children of an
/// `<Interaction>` (or of a save file's `<Default_Interaction>`).
pub fn decode_contact(el: &Element) -> Result<Contact, DecodeError> {
    Ok(Contact {
        hardness: el.child_f64("Hardness")?,
        bounciness: el.child_f64("Bounciness")?,
        slip1: el.child_f64("Slip1")?,
        slip2: el.child_f64("Slip2")?,
        friction: el.child_f64("Friction")?,
    })
}

/// Decodes the materials and interactions of a `Register_Materials_Interactions` element
/// (the `Command` attribute is not checked). Children other than `<Material>`,
/// `<Interaction>` and `<Response>` are an error.
pub fn decode_materials_element(
    el: &Element,
) -> Result<(Vec<Material>, Vec<Interaction>), DecodeError> {
    let (materials, interactions) = materials_of(el)?;
    let read = crate::encode::materials_element(&materials, &interactions, &CommandKeys::default());
    every_element_read(el, &read, &["Response"])?;
    Ok((materials, interactions))
}

/// [`decode_materials_element`] without the check that every element was read (a request's
/// decoding checks the whole request).
fn materials_of(el: &Element) -> Result<(Vec<Material>, Vec<Interaction>), DecodeError> {
    let mut materials = Vec::new();
    let mut interactions = Vec::new();
    for child in &el.children {
        match child.name.as_str() {
            "Material" => {
                let seg = format!("Material[{}]", materials.len() + 1);
                let m = (|| {
                    Ok(Material {
                        id: MaterialId(child.child_u32("Material_Id")?),
                        name: child.child_string("Material_Name")?,
                    })
                })()
                .map_err(|e: DecodeError| e.within(seg))?;
                materials.push(m);
            }
            "Interaction" => {
                let seg = format!("Interaction[{}]", interactions.len() + 1);
                let i = (|| {
                    Ok(Interaction {
                        material_1: MaterialId(child.child_u32("Material_1")?),
                        material_2: MaterialId(child.child_u32("Material_2")?),
                        contact: decode_contact(child)?,
                    })
                })()
                .map_err(|e: DecodeError| e.within(seg))?;
                interactions.push(i);
            }
            "Response" => {}
            _ => {
                return Err(unexpected_child(
                    child,
                    &el.name,
                    "Material> or <Interaction",
                ))
            }
        }
    }
    Ok((materials, interactions))
}

/// Decodes a `<Control_Request Command="Create_Entity" Type="…">` element (the `Command`
/// attribute is not checked, so save files can embed the element whatever the configured
/// key). Error paths start below the element (`Data/Structure/Body[3] (Body_id 2): …`).
pub fn decode_entity_spec_element(el: &Element) -> Result<EntitySpec, DecodeError> {
    let spec = entity_spec_of(el)?;
    let read = crate::encode::entity_spec_element(&spec, &CommandKeys::default());
    every_element_read(el, &read, &[])?;
    Ok(spec)
}

/// [`decode_entity_spec_element`] without the check that every element was read (a
/// request's decoding checks the whole request).
fn entity_spec_of(el: &Element) -> Result<EntitySpec, DecodeError> {
    let ty = el.required_attr("Type")?;
    let data = el.required_child("Data")?;
    let spec = match ty {
        "Robot" => (|| {
            let entity_id = entity_id(data)?;
            let (bodies, joints) = decode_structure(data)?;
            let motors_el = data.required_child("Motors")?;
            let mut motors = Vec::new();
            for (i, child) in motors_el.children.iter().enumerate() {
                if child.name != "Motor_id" {
                    return Err(unexpected_child(child, "Motors", "Motor_id").within("Motors"));
                }
                let id = child
                    .text_u32()
                    .map_err(|e| e.within(format!("Motor_id[{}]", i + 1)).within("Motors"))?;
                motors.push(id);
            }
            Ok(EntitySpec::Robot {
                entity_id,
                bodies,
                joints,
                motors,
                reference_body: data.child_u32("Reference_Body")?,
            })
        })(),
        "Field" => (|| {
            let entity_id = entity_id(data)?;
            let (bodies, joints) = decode_structure(data)?;
            Ok(EntitySpec::Field {
                entity_id,
                bodies,
                joints,
            })
        })(),
        "Ball" => (|| {
            Ok(EntitySpec::Ball {
                entity_id: entity_id(data)?,
                material: data.opt_child_u32("Material")?.map(MaterialId),
                mass: data.opt_child_f64("Mass")?,
                position: data.child_vec3(POSITION)?,
                rotation: data.child_vec3(ROTATION)?,
                radius: data.child_f64("Radius")?,
            })
        })(),
        "Humanoid" => (|| {
            Ok(EntitySpec::Humanoid {
                entity_id: entity_id(data)?,
                team: data.child_string("Team")?,
                position: [data.child_f64("Position_X")?, data.child_f64("Position_Y")?],
                heading: data.opt_child_f64("Heading")?.unwrap_or(0.0),
                profile: data.child("Profile").map(|p| p.text().to_string()),
                seed: data.opt_child_u64("Seed")?,
                material: data.opt_child_u32("Material")?.map(MaterialId),
            })
        })(),
        other => {
            return Err(DecodeError::new(
                DecodeErrorKind::UnknownType,
                format!(
                    "unknown entity type {other:?} in attribute Type (known: Robot, Field, Ball, Humanoid)"
                ),
            ))
        }
    };
    spec.map_err(|e| e.within("Data"))
}

fn decode_structure(data: &Element) -> Result<(Vec<BodySpec>, Vec<JointSpec>), DecodeError> {
    let structure = data.required_child("Structure")?;
    let mut bodies = Vec::new();
    let mut joints = Vec::new();
    for child in &structure.children {
        match child.name.as_str() {
            "Body" => {
                let seg = indexed_segment(child, bodies.len() + 1, "Body_id");
                bodies.push(body_of(child).map_err(|e| e.within(seg).within("Structure"))?);
            }
            "Joint" => {
                let seg = indexed_segment(child, joints.len() + 1, "Joint_id");
                joints.push(joint_of(child).map_err(|e| e.within(seg).within("Structure"))?);
            }
            _ => {
                return Err(
                    unexpected_child(child, "Structure", "Body> or <Joint").within("Structure")
                )
            }
        }
    }
    Ok((bodies, joints))
}

/// `Body[3] (Body_id 2)`, or `Body[3]` when the id cannot be read.
fn indexed_segment(el: &Element, index: usize, id_name: &str) -> String {
    match el.child(id_name).map(Element::text_u32) {
        Some(Ok(id)) => format!("{}[{index}] ({id_name} {id})", el.name),
        _ => format!("{}[{index}]", el.name),
    }
}

fn decode_shape(el: &Element) -> Result<Shape, DecodeError> {
    let ty = el.required_attr("Type")?;
    Ok(match ty {
        "Sphere" => Shape::Sphere {
            radius: el.child_f64("Radius")?,
        },
        "Box" => Shape::Box {
            size: el.child_vec3(SIZE)?,
        },
        "Cylinder" => Shape::Cylinder {
            radius: el.child_f64("Radius")?,
            length: el.child_f64("Length")?,
        },
        "WheelCylinder" => Shape::WheelCylinder {
            radius: el.child_f64("Radius")?,
            length: el.child_f64("Length")?,
        },
        other => {
            return Err(DecodeError::new(
                DecodeErrorKind::UnknownType,
                format!(
                    "unknown body type {other:?} in attribute Type (known: Sphere, Box, Cylinder, WheelCylinder)"
                ),
            ))
        }
    })
}

/// Decodes one `<Body Type="…">` of a `<Structure>`.
pub fn decode_body_element(el: &Element) -> Result<BodySpec, DecodeError> {
    let body = body_of(el)?;
    let read = crate::encode::body_element(&body);
    every_element_read(el, &read, optional_children(&read, &read))?;
    Ok(body)
}

fn body_of(el: &Element) -> Result<BodySpec, DecodeError> {
    let shape = decode_shape(el)?;
    Ok(BodySpec {
        id: el.child_u32("Body_id")?,
        shape,
        material: el.opt_child_u32("Material")?.map(MaterialId),
        mass: el.opt_child_f64("Mass")?,
        position: el.child_vec3(POSITION)?,
        rotation: el.child_vec3(ROTATION)?,
    })
}

/// Decodes one `<Joint Type="FixedJoint|WheelJoint">` of a `<Structure>`.
pub fn decode_joint_element(el: &Element) -> Result<JointSpec, DecodeError> {
    let joint = joint_of(el)?;
    let read = crate::encode::joint_element(&joint);
    every_element_read(el, &read, optional_children(&read, &read))?;
    Ok(joint)
}

fn joint_of(el: &Element) -> Result<JointSpec, DecodeError> {
    let ty = el.required_attr("Type")?;
    match ty {
        "FixedJoint" => Ok(JointSpec::Fixed {
            id: el.child_u32("Joint_id")?,
            body_1: el.child_u32("Body_1")?,
            body_2: el.child_u32("Body_2")?,
        }),
        "WheelJoint" => Ok(JointSpec::Wheel {
            id: el.child_u32("Joint_id")?,
            body_1: el.child_u32("Body_1")?,
            body_2: el.child_u32("Body_2")?,
            axis_1: el.child_vec3(AXIS_1)?,
            axis_2: el.child_vec3(AXIS_2)?,
            hardness: el.opt_child_f64("Hardness")?,
            bounciness: el.opt_child_f64("Bounciness")?,
            maximum_torque: el.opt_child_f64("Maximum_Torque")?,
        }),
        other => Err(DecodeError::new(
            DecodeErrorKind::UnknownType,
            format!(
                "unknown joint type {other:?} in attribute Type (known: FixedJoint, WheelJoint)"
            ),
        )),
    }
}

// ----- server → agent ----------------------------------------------------------------------

/// Decodes what the server sends to an agent: one `<Response>` or one `<Broadcast>` root.
pub fn decode_server_message(data: &[u8]) -> Result<ServerMessage, DecodeError> {
    // Broadcasts arrive every iteration: try the streaming decoder first. It gives the same
    // value as the tree decoder below, or declines.
    if let Ok(text) = std::str::from_utf8(data) {
        if let Some(b) =
            crate::fast::decode_broadcast(text.strip_prefix('\u{feff}').unwrap_or(text))
        {
            return Ok(ServerMessage::Broadcast(b));
        }
    }
    let roots = parse_elements_bytes(data)?;
    let [root] = roots.as_slice() else {
        return Err(DecodeError::new(
            DecodeErrorKind::UnexpectedElement,
            format!(
                "expected one root element (<Response> or <Broadcast>), found {}",
                roots.len()
            ),
        ));
    };
    match root.name.as_str() {
        "Response" => decode_response_element(root).map(ServerMessage::Response),
        "Broadcast" => decode_broadcast_element(root).map(ServerMessage::Broadcast),
        other => Err(DecodeError::new(
            DecodeErrorKind::UnexpectedElement,
            format!("unexpected root element <{other}> (expected <Response> or <Broadcast>)"),
        )),
    }
}

/// Decodes a `<Response>` element: [`Response::AgentInformation`] when it holds an
/// `<Agent_Information>`, otherwise [`Response::Text`] with its trimmed text.
pub fn decode_response_element(el: &Element) -> Result<Response, DecodeError> {
    match el.child("Agent_Information") {
        Some(info) => Ok(Response::AgentInformation {
            key: info.child_string("Key")?,
            port: info.child_u16("Port")?,
            ip: info.child_string("IP")?,
        })
        .map_err(|e: DecodeError| e.within("Agent_Information").within("Response")),
        None => Ok(Response::Text(el.text_string())),
    }
}

/// Decodes a `<Broadcast>` element.
///
/// Lenient where a client should be: `<DrawData>` and `<Entities_Info>` may be absent
/// (empty); a body without `<Entity_id>` belongs to entity 0 (the SimRob manual's own example has
/// none); unknown children, including unknown `<Entities_Info>` entries, are ignored so
/// that servers can add data without breaking clients. `<Part>` and `<Parts>` come
/// together, with 1 ≤ Part ≤ Parts.
pub fn decode_broadcast_element(el: &Element) -> Result<Broadcast, DecodeError> {
    let inner = || -> Result<Broadcast, DecodeError> {
        let iteration = el.child_u64("Iteration")?;
        let part = match (el.opt_child_u32("Part")?, el.opt_child_u32("Parts")?) {
            (None, None) => None,
            (Some(p), Some(n)) if p >= 1 && p <= n => Some((p, n)),
            (Some(p), Some(n)) => {
                return Err(DecodeError::invalid(format!(
                    "Part: must be between 1 and Parts ({n}), found {p}"
                )))
            }
            _ => {
                return Err(DecodeError::new(
                    DecodeErrorKind::MissingElement,
                    "<Part> and <Parts> must be given together",
                ))
            }
        };
        let mut bodies = Vec::new();
        if let Some(draw) = el.child("DrawData") {
            for (i, body) in draw.children("Body").enumerate() {
                let seg = indexed_segment(body, i + 1, "Body_id");
                bodies.push(
                    decode_body_state_element(body)
                        .map_err(|e| e.within(seg).within("DrawData"))?,
                );
            }
        }
        let mut entities = Vec::new();
        if let Some(info) = el.child("Entities_Info") {
            for (i, entry) in info.children.iter().enumerate() {
                let kind = match entry.name.as_str() {
                    "Robot_Entity" => EntityInfoKind::Robot,
                    "Ball_Entity" => EntityInfoKind::Ball,
                    _ => continue,
                };
                let decoded = (|| {
                    Ok(EntityInfo {
                        kind,
                        entity_id: entity_id(entry)?,
                        position: entry
                            .required_child("Position")?
                            .child_vec3(POS)
                            .map_err(|e| e.within("Position"))?,
                        rotation: entry
                            .required_child("Rotation")?
                            .child_vec3(ROT)
                            .map_err(|e| e.within("Rotation"))?,
                    })
                })()
                .map_err(|e: DecodeError| {
                    e.within(format!("{}[{}]", entry.name, i + 1))
                        .within("Entities_Info")
                })?;
                entities.push(decoded);
            }
        }
        Ok(Broadcast {
            iteration,
            part,
            bodies,
            entities,
        })
    };
    inner().map_err(|e| e.within("Broadcast"))
}

/// Decodes one `<Body>` of a broadcast's `<DrawData>`.
pub fn decode_body_state_element(el: &Element) -> Result<BodyState, DecodeError> {
    let shape = decode_shape(el)?;
    let entity_id = match el.child("Entity_id").or_else(|| el.child("Entity_Id")) {
        Some(c) => EntityId(c.text_u32()?),
        None => EntityId(0),
    };
    Ok(BodyState {
        entity_id,
        id: el.child_u32("Body_id")?,
        shape,
        material: MaterialId(el.child_u32("Material")?),
        mass: el.child_f64("Mass")?,
        position: el.child_vec3(POSITION)?,
        rotation: el.child_vec3(ROTATION)?,
        linear_velocity: el.child_vec3(LINEAR_VELOCITY)?,
        angular_velocity: el.child_vec3(ANGULAR_VELOCITY)?,
    })
}

/// Reads the payload of command `cmd` from its request element `el` (whose `Command`
/// attribute named `cmd`; `cmd.family()` is `el`'s family). `<Response>` is read here too.
fn decode_payload(cmd: Command, el: &Element) -> Result<Request, DecodeError> {
    let control = |request| {
        Ok(Request::Control {
            request,
            response: el.opt_child_bool("Response")?,
        })
    };
    let entity = |request| {
        Ok(Request::Entity {
            request,
            response: el.opt_child_bool("Response")?,
        })
    };
    match cmd {
        Command::RegisterAgent => Ok(Request::Agent(AgentRequest::RegisterAgent {
            agent_type: AgentType::parse(el.required_attr("Agent_Type")?),
            port: el.child_u16("Port")?,
            ip: el.child_string("IP")?,
            sync: el.child_bool("Sync")?,
            broadcast: el.child_f64("Broadcast")?,
            key: el.child_string("Key")?,
        })),
        Command::InfoRequest => Ok(Request::Agent(AgentRequest::InfoRequest {
            requester: el.child_string("Requester")?,
            requested: el.child_string("Requested")?,
        })),
        Command::Synchronize => Ok(Request::Agent(AgentRequest::Synchronize {
            key: el.child_string("Key")?,
            iteration: el.child_u64("Iteration")?,
        })),
        Command::UnregisterAgent => Ok(Request::Agent(AgentRequest::UnregisterAgent {
            key: el.child_string("Key")?,
        })),
        Command::RegisterMaterialsInteractions => {
            let (materials, interactions) = materials_of(el)?;
            control(ControlRequest::RegisterMaterialsInteractions {
                materials,
                interactions,
            })
        }
        Command::CreateEntity => control(ControlRequest::CreateEntity(entity_spec_of(el)?)),
        Command::InitializeSimulation => control(ControlRequest::InitializeSimulation),
        Command::SetStepMode => control(ControlRequest::SetStepMode(el.child_bool("Step_Mode")?)),
        Command::MakeStep => control(ControlRequest::MakeStep),
        Command::SetAutoAdjustMode => control(ControlRequest::SetAutoAdjustMode(
            el.child_bool("AutoAdjust_Mode")?,
        )),
        Command::SetSyncMode => control(ControlRequest::SetSyncMode(el.child_bool("Sync_Mode")?)),
        Command::SetSyncWait => control(ControlRequest::SetSyncWait(el.child_f64("Sync_Wait")?)),
        Command::SetTimestep => control(ControlRequest::SetTimestep(el.child_f64("Timestep")?)),
        Command::SetWorldGravity => {
            control(ControlRequest::SetWorldGravity(el.child_f64("Gravity")?))
        }
        Command::SetWorldHardness => {
            control(ControlRequest::SetWorldHardness(el.child_f64("Hardness")?))
        }
        Command::SetWorldBounciness => control(ControlRequest::SetWorldBounciness(
            el.child_f64("Bounciness")?,
        )),
        Command::Save => control(ControlRequest::Save(el.child_string("File")?)),
        Command::Load => control(ControlRequest::Load(el.child_string("File")?)),
        Command::SetFastMode => control(ControlRequest::SetFastMode(el.child_bool("Fast_Mode")?)),
        Command::SetStepsPerIteration => {
            let steps = el.child_u32("Steps_Per_Iteration")?;
            if steps == 0 {
                return Err(DecodeError::invalid(
                    "Steps_Per_Iteration: must be at least 1, found \"0\"",
                ));
            }
            control(ControlRequest::SetStepsPerIteration(steps))
        }
        Command::SetEntityPosition => entity(EntityRequest::SetEntityPosition {
            entity_id: entity_id(el)?,
            position: el.child_vec3(POSITION)?,
        }),
        Command::RobotMotorControl => {
            let entity_id = entity_id(el)?;
            let motors_el = el.required_child("Motors")?;
            let mut motors = Vec::new();
            for (i, child) in motors_el.children.iter().enumerate() {
                if child.name != "Motor" {
                    return Err(unexpected_child(child, "Motors", "Motor").within("Motors"));
                }
                let index = i + 1;
                let motor = (|| {
                    Ok(MotorCommand {
                        wheel_joint_id: child.child_u32("Wheel_Joint_Id")?,
                        value: child.child_f64("Value")?,
                    })
                })()
                .map_err(|e: DecodeError| e.within(format!("Motor[{index}]")).within("Motors"))?;
                if motors
                    .iter()
                    .any(|m: &MotorCommand| m.wheel_joint_id == motor.wheel_joint_id)
                {
                    return Err(DecodeError::new(
                        DecodeErrorKind::UnexpectedElement,
                        format!(
                            "wheel joint {} is given twice (one <Motor> a joint)",
                            motor.wheel_joint_id
                        ),
                    )
                    .within(format!("Motor[{index}]"))
                    .within("Motors"));
                }
                motors.push(motor);
            }
            entity(EntityRequest::RobotMotorControl { entity_id, motors })
        }
        Command::SetRollingResistance => control(ControlRequest::SetRollingResistance {
            material_1: MaterialId(el.child_u32("Material_1")?),
            material_2: MaterialId(el.child_u32("Material_2")?),
            coefficient: el.child_f64("Coefficient")?,
        }),
        Command::HumanoidAction => {
            let entity_id = entity_id(el)?;
            let action = el.required_child("Action")?;
            let name = action
                .required_attr("name")
                .map_err(|e| e.within("Action"))?
                .to_string();
            let params = action
                .attrs
                .iter()
                .filter(|(k, _)| k != "name")
                .cloned()
                .collect();
            entity(EntityRequest::HumanoidAction {
                entity_id,
                name,
                params,
            })
        }
    }
}
