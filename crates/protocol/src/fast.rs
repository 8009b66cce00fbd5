//! A streaming decoder for `<Broadcast>`, the message agents receive every iteration.
//!
//! It reads the XML events once and parses numbers in place, without building the element
//! tree. It accepts only well-formed, unambiguous broadcasts (every field once, no entity
//! references in numbers); for anything else it returns `None` and [`crate::decode_server_message`]
//! falls back to the tree decoder, which gives the same value for valid input and the precise
//! error for invalid input. Tests check that both decoders agree.

use quick_xml::events::Event;
use quick_xml::Reader;

use crate::ids::{EntityId, MaterialId};
use crate::model::{BodyState, Broadcast, EntityInfo, EntityInfoKind, Shape};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tag {
    Broadcast,
    Iteration,
    Part,
    Parts,
    DrawData,
    Body,
    /// A leaf of a body: index into [`BodyFields`].
    BodyField(usize),
    EntitiesInfo,
    Entry,
    EntryId,
    Position,
    Rotation,
    /// pos_x.. or rot_x..: axis.
    Coord(usize),
    /// An element whose content does not matter (unknown children are ignored).
    Skip,
}

const BODY_FIELDS: [&[u8]; 22] = [
    b"Entity_id",
    b"Entity_Id",
    b"Body_id",
    b"Material",
    b"Mass",
    b"Radius",
    b"Length",
    b"Size_X",
    b"Size_Y",
    b"Size_Z",
    b"Position_X",
    b"Position_Y",
    b"Position_Z",
    b"Rotation_X",
    b"Rotation_Y",
    b"Rotation_Z",
    b"Linear_Velocity_X",
    b"Linear_Velocity_Y",
    b"Linear_Velocity_Z",
    b"Angular_Velocity_X",
    b"Angular_Velocity_Y",
    b"Angular_Velocity_Z",
];

/// Raw text of each body field.
struct BodyFields<'a> {
    shape_type: Option<&'a str>,
    text: [Option<&'a str>; 22],
}

struct EntryFields<'a> {
    kind: EntityInfoKind,
    id: Option<&'a str>,
    pos: [Option<&'a str>; 3],
    rot: [Option<&'a str>; 3],
    seen_position: bool,
    seen_rotation: bool,
}

fn f64_of(t: Option<&str>) -> Option<f64> {
    let v: f64 = t?.trim().parse().ok()?;
    v.is_finite().then_some(v)
}

fn u32_of(t: Option<&str>) -> Option<u32> {
    t?.trim().parse().ok()
}

fn set<'a>(slot: &mut Option<&'a str>, text: &'a str) -> Option<()> {
    if slot.is_some() {
        return None; // twice: let the tree decoder judge
    }
    *slot = Some(text);
    Some(())
}

impl<'a> BodyFields<'a> {
    fn finish(&self) -> Option<BodyState> {
        let t = &self.text;
        let v3 = |i: usize| Some([f64_of(t[i])?, f64_of(t[i + 1])?, f64_of(t[i + 2])?]);
        if t[0].is_some() && t[1].is_some() {
            return None;
        }
        let entity_id = match t[0].or(t[1]) {
            Some(s) => EntityId(u32_of(Some(s))?),
            None => EntityId(0),
        };
        let shape = match self.shape_type?.trim() {
            "Sphere" => Shape::Sphere {
                radius: f64_of(t[5])?,
            },
            "Box" => Shape::Box { size: v3(7)? },
            "Cylinder" => Shape::Cylinder {
                radius: f64_of(t[5])?,
                length: f64_of(t[6])?,
            },
            "WheelCylinder" => Shape::WheelCylinder {
                radius: f64_of(t[5])?,
                length: f64_of(t[6])?,
            },
            _ => return None,
        };
        Some(BodyState {
            entity_id,
            id: u32_of(t[2])?,
            shape,
            material: MaterialId(u32_of(t[3])?),
            mass: f64_of(t[4])?,
            position: v3(10)?,
            rotation: v3(13)?,
            linear_velocity: v3(16)?,
            angular_velocity: v3(19)?,
        })
    }
}

impl<'a> EntryFields<'a> {
    fn finish(&self) -> Option<EntityInfo> {
        if !self.seen_position || !self.seen_rotation {
            return None;
        }
        let v3 = |a: &[Option<&str>; 3]| Some([f64_of(a[0])?, f64_of(a[1])?, f64_of(a[2])?]);
        Some(EntityInfo {
            kind: self.kind,
            entity_id: EntityId(u32_of(self.id)?),
            position: v3(&self.pos)?,
            rotation: v3(&self.rot)?,
        })
    }
}

/// Decodes a broadcast, or `None` when the input needs the tree decoder (anything unusual,
/// invalid, or not a broadcast).
pub(crate) fn decode_broadcast(xml: &str) -> Option<Broadcast> {
    let mut reader = Reader::from_str(xml);
    let mut stack: Vec<Tag> = Vec::with_capacity(8);
    let mut iteration: Option<&str> = None;
    let mut part: Option<&str> = None;
    let mut parts: Option<&str> = None;
    let mut seen_draw = false;
    let mut seen_info = false;
    let mut roots = 0;
    let mut bodies = Vec::new();
    let mut entities = Vec::new();
    let mut body: Option<BodyFields> = None;
    let mut entry: Option<EntryFields> = None;
    loop {
        let event = reader.read_event().ok()?;
        let (start, empty) = match &event {
            Event::Start(s) => (Some(s), false),
            Event::Empty(s) => (Some(s), true),
            _ => (None, false),
        };
        if let Some(s) = start {
            let name = s.name();
            let name = name.as_ref();
            let parent = stack.last().copied();
            let tag = match parent {
                None => {
                    roots += 1;
                    if roots > 1 || name != b"Broadcast" {
                        return None;
                    }
                    Tag::Broadcast
                }
                Some(Tag::Broadcast) => match name {
                    b"Iteration" => Tag::Iteration,
                    b"Part" => Tag::Part,
                    b"Parts" => Tag::Parts,
                    b"DrawData" if !seen_draw => {
                        seen_draw = true;
                        Tag::DrawData
                    }
                    b"Entities_Info" if !seen_info => {
                        seen_info = true;
                        Tag::EntitiesInfo
                    }
                    b"DrawData" | b"Entities_Info" => return None,
                    _ => Tag::Skip,
                },
                Some(Tag::DrawData) => {
                    if name == b"Body" {
                        let mut shape_type = None;
                        for a in s.attributes() {
                            let a = a.ok()?;
                            if a.key.as_ref() == b"Type" {
                                let v = std::str::from_utf8(a.value.as_ref()).ok()?;
                                if v.contains('&') || shape_type.is_some() {
                                    return None;
                                }
                                // The value borrows from `xml` only through `a`; look it up
                                // again as a slice of the input.
                                shape_type = Some(v.to_string());
                            }
                        }
                        let shape_type = shape_type?;
                        let shape: &'static str = match shape_type.trim() {
                            "Sphere" => "Sphere",
                            "Box" => "Box",
                            "Cylinder" => "Cylinder",
                            "WheelCylinder" => "WheelCylinder",
                            _ => return None,
                        };
                        body = Some(BodyFields {
                            shape_type: Some(shape),
                            text: [None; 22],
                        });
                        Tag::Body
                    } else {
                        Tag::Skip
                    }
                }
                Some(Tag::Body) => match BODY_FIELDS.iter().position(|f| *f == name) {
                    Some(i) => Tag::BodyField(i),
                    None => Tag::Skip,
                },
                Some(Tag::EntitiesInfo) => {
                    let kind = match name {
                        b"Robot_Entity" => Some(EntityInfoKind::Robot),
                        b"Ball_Entity" => Some(EntityInfoKind::Ball),
                        _ => None,
                    };
                    match kind {
                        Some(kind) => {
                            entry = Some(EntryFields {
                                kind,
                                id: None,
                                pos: [None; 3],
                                rot: [None; 3],
                                seen_position: false,
                                seen_rotation: false,
                            });
                            Tag::Entry
                        }
                        None => Tag::Skip,
                    }
                }
                Some(Tag::Entry) => {
                    let e = entry.as_mut()?;
                    match name {
                        b"Entity_Id" | b"Entity_id" => Tag::EntryId,
                        b"Position" => {
                            if e.seen_position {
                                return None;
                            }
                            e.seen_position = true;
                            Tag::Position
                        }
                        b"Rotation" => {
                            if e.seen_rotation {
                                return None;
                            }
                            e.seen_rotation = true;
                            Tag::Rotation
                        }
                        _ => Tag::Skip,
                    }
                }
                Some(Tag::Position) => match name {
                    b"pos_x" => Tag::Coord(0),
                    b"pos_y" => Tag::Coord(1),
                    b"pos_z" => Tag::Coord(2),
                    _ => Tag::Skip,
                },
                Some(Tag::Rotation) => match name {
                    b"rot_x" => Tag::Coord(0),
                    b"rot_y" => Tag::Coord(1),
                    b"rot_z" => Tag::Coord(2),
                    _ => Tag::Skip,
                },
                // Leaves and skipped subtrees: anything below is ignored, except that a
                // leaf with child elements is not a number.
                Some(Tag::Skip) => Tag::Skip,
                Some(_) => return None,
            };
            if empty {
                // An empty leaf has no value; an empty container is fine.
                match tag {
                    Tag::Iteration
                    | Tag::Part
                    | Tag::Parts
                    | Tag::BodyField(_)
                    | Tag::EntryId
                    | Tag::Coord(_)
                    | Tag::Body
                    | Tag::Entry => return None,
                    Tag::Position | Tag::Rotation => return None,
                    _ => {}
                }
            } else {
                stack.push(tag);
            }
            continue;
        }
        match event {
            Event::End(_) => match stack.pop()? {
                Tag::Body => bodies.push(body.take()?.finish()?),
                Tag::Entry => entities.push(entry.take()?.finish()?),
                _ => {}
            },
            Event::Text(t) => {
                let raw: &[u8] = t.as_ref();
                let text = std::str::from_utf8(raw).ok()?;
                match stack.last().copied() {
                    None => {
                        if !text.trim().is_empty() {
                            return None;
                        }
                    }
                    Some(tag) => {
                        // Text is a slice of the input: find it there to keep its lifetime.
                        let offset = (raw.as_ptr() as usize).checked_sub(xml.as_ptr() as usize)?;
                        let text: &str = xml.get(offset..offset + raw.len())?;
                        if text.as_bytes() != raw || text.contains('&') {
                            return None;
                        }
                        match tag {
                            Tag::Iteration => set(&mut iteration, text)?,
                            Tag::Part => set(&mut part, text)?,
                            Tag::Parts => set(&mut parts, text)?,
                            Tag::BodyField(i) => set(&mut body.as_mut()?.text[i], text)?,
                            Tag::EntryId => set(&mut entry.as_mut()?.id, text)?,
                            Tag::Coord(i) => {
                                let e = entry.as_mut()?;
                                match stack.get(stack.len().checked_sub(2)?) {
                                    Some(Tag::Position) => set(&mut e.pos[i], text)?,
                                    Some(Tag::Rotation) => set(&mut e.rot[i], text)?,
                                    _ => return None,
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
            Event::Eof => break,
            Event::CData(_) | Event::DocType(_) => return None,
            // Comments, the XML declaration, processing instructions.
            _ => {}
        }
    }
    if !stack.is_empty() || roots != 1 {
        return None;
    }
    let iteration: u64 = iteration?.trim().parse().ok()?;
    let part = match (part, parts) {
        (None, None) => None,
        (Some(p), Some(n)) => {
            let (p, n): (u32, u32) = (p.trim().parse().ok()?, n.trim().parse().ok()?);
            if p < 1 || p > n {
                return None;
            }
            Some((p, n))
        }
        _ => return None,
    };
    Some(Broadcast {
        iteration,
        part,
        bodies,
        entities,
    })
}
