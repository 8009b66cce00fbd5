//! Encoding: [`Request`]s, [`Response`]s and [`Broadcast`]s → XML.
//!
//! Requests and responses are built as [`Element`] trees (so other crates can embed the
//! same elements in their own files) and written compactly; broadcasts, which are large
//! and sent every iteration, are written directly into a `String`.
//!
//! Real numbers are written by [`real`]: the shortest text that reads back to the value at
//! the precision it really has (the physics engine computes in `f32`), so every number
//! round-trips exactly and none carries float noise. Text and attribute values are escaped.

use std::fmt::Write as _;

use crate::commands::Command;
use crate::fields::{
    ANGULAR_VELOCITY, AXIS_1, AXIS_2, LINEAR_VELOCITY, POS, POSITION, ROT, ROTATION, SIZE,
};
use crate::keys::CommandKeys;
use crate::model::*;
use crate::tree::{escape_text_into, write_leaf, Element};

/// `<Message>…</Message>` holding `req` (an `<Agent_Message>`, or a
/// `<Simulation_Message>` with one `<Control_Request>` / `<Entity_Request>`), compact.
pub fn encode_request(req: &Request, keys: &CommandKeys) -> String {
    message_element(req, keys).to_xml()
}

/// Several `<Message>` roots, one per request, for one datagram.
pub fn encode_requests(reqs: &[Request], keys: &CommandKeys) -> String {
    let mut out = String::new();
    for req in reqs {
        message_element(req, keys).write_xml(&mut out);
    }
    out
}

/// A `Create_Entity` request for `spec` in its `<Message>` envelope (no `<Response>`).
pub fn encode_entity_spec(spec: &EntitySpec, keys: &CommandKeys) -> String {
    wrap_in_message(entity_spec_element(spec, keys), false).to_xml()
}

/// The `<Message>` element for `req`.
pub fn message_element(req: &Request, keys: &CommandKeys) -> Element {
    let agent = matches!(req, Request::Agent(_));
    wrap_in_message(request_element(req, keys), agent)
}

fn wrap_in_message(request: Element, agent: bool) -> Element {
    let inner = if agent {
        request
    } else {
        Element::new("Simulation_Message").with_child(request)
    };
    Element::new("Message").with_child(inner)
}

fn command(name: &str, command: &str) -> Element {
    Element::new(name).with_attr("Command", command)
}

fn vec3(el: &mut Element, names: [&str; 3], v: Vec3) {
    el.push_vec3(names, v);
}

fn with_response(mut el: Element, response: Option<bool>) -> Element {
    if let Some(r) = response {
        el.push(Element::leaf("Response", r));
    }
    el
}

/// The request element itself: `<Agent_Message>`, `<Control_Request>` or
/// `<Entity_Request>`, with `<Response>` last when given.
pub fn request_element(req: &Request, keys: &CommandKeys) -> Element {
    with_response(encode_payload(req, keys), req.response())
}

/// `<Control_Request Command="Register_Materials_Interactions">` with every `<Material>`
/// then every `<Interaction>`.
pub fn materials_element(
    materials: &[Material],
    interactions: &[Interaction],
    keys: &CommandKeys,
) -> Element {
    let mut el = command(
        "Control_Request",
        &keys[Command::RegisterMaterialsInteractions],
    );
    for m in materials {
        el.push(
            Element::new("Material")
                .with_child(Element::leaf("Material_Id", m.id))
                .with_child(Element::leaf("Material_Name", &m.name)),
        );
    }
    for i in interactions {
        el.push(contact_children(
            Element::new("Interaction")
                .with_child(Element::leaf("Material_1", i.material_1))
                .with_child(Element::leaf("Material_2", i.material_2)),
            &i.contact,
        ));
    }
    el
}

/// `el` with the children `<Hardness>`, `<Bounciness>`, `<Slip1>`, `<Slip2>` and
/// `<Friction>` of `c` appended (what [`crate::decode_contact`] reads).
pub fn contact_children(el: Element, c: &Contact) -> Element {
    el.with_child(Element::leaf("Hardness", real(c.hardness)))
        .with_child(Element::leaf("Bounciness", real(c.bounciness)))
        .with_child(Element::leaf("Slip1", real(c.slip1)))
        .with_child(Element::leaf("Slip2", real(c.slip2)))
        .with_child(Element::leaf("Friction", real(c.friction)))
}

/// `<Control_Request Command="Create_Entity" Type="…"><Data>…</Data></Control_Request>`
/// in the layout of the SimRob manual §2.4 (bodies, then joints, inside `<Structure>`).
pub fn entity_spec_element(spec: &EntitySpec, keys: &CommandKeys) -> Element {
    let mut data = Element::new("Data").with_child(Element::leaf("Entity_id", spec.entity_id()));
    match spec {
        EntitySpec::Robot {
            bodies,
            joints,
            motors,
            reference_body,
            ..
        } => {
            data.push(structure_element(bodies, joints));
            data.push(
                Element::new("Motors")
                    .with_children(motors.iter().map(|m| Element::leaf("Motor_id", m))),
            );
            data.push(Element::leaf("Reference_Body", reference_body));
        }
        EntitySpec::Field { bodies, joints, .. } => {
            data.push(structure_element(bodies, joints));
        }
        EntitySpec::Ball { radius, .. } => {
            // The ball's one sphere carries its material, mass and pose.
            let (bodies, _) = spec.structure();
            for b in bodies.iter() {
                if let Some(m) = b.material {
                    data.push(Element::leaf("Material", m));
                }
                if let Some(m) = b.mass {
                    data.push(Element::leaf("Mass", real(m)));
                }
                vec3(&mut data, POSITION, b.position);
                vec3(&mut data, ROTATION, b.rotation);
            }
            data.push(Element::leaf("Radius", real(*radius)));
        }
        EntitySpec::Humanoid {
            team,
            position,
            heading,
            profile,
            seed,
            material,
            ..
        } => {
            data.push(Element::leaf("Team", team));
            data.push(Element::leaf("Position_X", real(position[0])));
            data.push(Element::leaf("Position_Y", real(position[1])));
            data.push(Element::leaf("Heading", real(*heading)));
            if let Some(p) = profile {
                data.push(Element::leaf("Profile", p));
            }
            if let Some(s) = seed {
                data.push(Element::leaf("Seed", s));
            }
            if let Some(m) = material {
                data.push(Element::leaf("Material", m));
            }
        }
    }
    command("Control_Request", &keys[Command::CreateEntity])
        .with_attr("Type", spec.type_name())
        .with_child(data)
}

fn structure_element(bodies: &[BodySpec], joints: &[JointSpec]) -> Element {
    Element::new("Structure")
        .with_children(bodies.iter().map(body_element))
        .with_children(joints.iter().map(joint_element))
}

/// One `<Body Type="…">` of a `<Structure>` (SimRob manual §2.4 order: id, material, mass,
/// position, rotation, dimensions).
pub fn body_element(b: &BodySpec) -> Element {
    let mut el = Element::new("Body")
        .with_attr("Type", b.shape.type_name())
        .with_child(Element::leaf("Body_id", b.id));
    if let Some(m) = b.material {
        el.push(Element::leaf("Material", m));
    }
    if let Some(m) = b.mass {
        el.push(Element::leaf("Mass", real(m)));
    }
    vec3(&mut el, POSITION, b.position);
    vec3(&mut el, ROTATION, b.rotation);
    match &b.shape {
        Shape::Sphere { radius } => el.push(Element::leaf("Radius", real(*radius))),
        Shape::Box { size } => vec3(&mut el, SIZE, *size),
        Shape::Cylinder { radius, length } | Shape::WheelCylinder { radius, length } => {
            el.push(Element::leaf("Radius", real(*radius)));
            el.push(Element::leaf("Length", real(*length)));
        }
    }
    el
}

/// One `<Joint Type="…">` of a `<Structure>`.
pub fn joint_element(j: &JointSpec) -> Element {
    let (id, (b1, b2)) = (j.id(), j.bodies());
    let mut el = Element::new("Joint")
        .with_attr("Type", j.type_name())
        .with_child(Element::leaf("Joint_id", id))
        .with_child(Element::leaf("Body_1", b1))
        .with_child(Element::leaf("Body_2", b2));
    if let JointSpec::Wheel {
        axis_1,
        axis_2,
        hardness,
        bounciness,
        maximum_torque,
        ..
    } = j
    {
        vec3(&mut el, AXIS_1, *axis_1);
        vec3(&mut el, AXIS_2, *axis_2);
        for (name, v) in [
            ("Hardness", hardness),
            ("Bounciness", bounciness),
            ("Maximum_Torque", maximum_torque),
        ] {
            if let Some(v) = v {
                el.push(Element::leaf(name, real(*v)));
            }
        }
    }
    el
}

// ----- server → agent ----------------------------------------------------------------------

/// `<Response>text</Response>` for [`Response::Text`] (text escaped), or
/// `<Response><Agent_Information><Key/><Port/><IP/></Agent_Information></Response>`
/// (SimRob manual §2.2).
pub fn encode_response(r: &Response) -> String {
    match r {
        Response::Text(t) => {
            let mut out = String::with_capacity(t.len() + 21);
            out.push_str("<Response>");
            escape_text_into(t, &mut out);
            out.push_str("</Response>");
            out
        }
        Response::AgentInformation { .. } => response_element(r).to_xml(),
    }
}

/// The `<Response>` element of [`encode_response`].
pub fn response_element(r: &Response) -> Element {
    match r {
        Response::Text(t) => Element::new("Response").with_text(t.clone()),
        Response::AgentInformation { key, port, ip } => Element::new("Response").with_child(
            Element::new("Agent_Information")
                .with_child(Element::leaf("Key", key))
                .with_child(Element::leaf("Port", port))
                .with_child(Element::leaf("IP", ip)),
        ),
    }
}

/// A response or a broadcast.
pub fn encode_server_message(m: &ServerMessage) -> String {
    match m {
        ServerMessage::Response(r) => encode_response(r),
        ServerMessage::Broadcast(b) => encode_broadcast(b),
    }
}

/// The `<Broadcast>` of the SimRob manual §5, compact. See [`encode_broadcast_into`].
pub fn encode_broadcast(b: &Broadcast) -> String {
    let mut out = String::with_capacity(128 + b.bodies.len() * 900 + b.entities.len() * 250);
    encode_broadcast_into(b, &mut out);
    out
}

fn write_vec3(out: &mut String, names: [&str; 3], v: Vec3) {
    for (name, value) in names.iter().zip(v) {
        write_real_leaf(out, name, value);
    }
}

/// `<name>v</name>`, `v` as [`real`] prints it.
fn write_real_leaf(out: &mut String, name: &str, v: f64) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    real(v).push_to(out);
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// A real number for printing (see [`real`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Real(pub f64);

/// `v` as the shortest text that reads back to it at the precision it really has: when `v`
/// is exactly an `f32` (every value the physics engine computes is), the shortest text whose
/// `f32` reading is `v`; otherwise the shortest text whose `f64` reading is `v`. Plain or
/// exponent notation, whichever is shorter: `-0.1` for the engine's −0.1 (not
/// `-0.10000000149011612`), `4.229089e-20` rather than twenty zeros. Every number simrob
/// prints — broadcasts, files, CSV — goes through this.
///
/// ```
/// use simrob_protocol::real;
/// assert_eq!(real(-0.1f32 as f64).to_string(), "-0.1");
/// assert_eq!(real(0.1).to_string(), "0.1");
/// assert_eq!(real(3.0).to_string(), "3");
/// assert_eq!(real(4.229089e-20f32 as f64).to_string(), "4.229089e-20");
/// assert_eq!("-0.1".parse::<f32>().unwrap() as f64, -0.1f32 as f64);
/// ```
pub fn real(v: f64) -> Real {
    Real(v)
}

impl std::fmt::Display for Real {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut buf = RealText::new();
        f.write_str(buf.format(self.0))
    }
}

impl Real {
    /// Appends the text to `out` (what `Display` writes, without the formatter's machinery).
    pub fn push_to(self, out: &mut String) {
        let mut buf = RealText::new();
        out.push_str(buf.format(self.0));
    }
}

/// The text of a [`Real`], made on the stack. Rust's float formatting is run once, in
/// exponent notation (the shortest round-tripping digits and their exponent); the plain
/// notation — what `{}` prints, never with an exponent — is laid out from those digits, and
/// the shorter of the two is kept (plain when it has at most 8 characters or ties).
struct RealText {
    /// Exponent notation first, then the plain one after it.
    buf: [u8; 64],
    len: usize,
}

impl std::fmt::Write for RealText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl RealText {
    fn new() -> Self {
        RealText {
            buf: [0; 64],
            len: 0,
        }
    }

    fn format(&mut self, v: f64) -> &str {
        use std::fmt::Write as _;
        let single = v.is_finite() && (v as f32) as f64 == v;
        // At most 25 bytes ("-1.2345678901234567e-308"): cannot overflow.
        let _ = if single {
            write!(self, "{:e}", v as f32)
        } else {
            write!(self, "{v:e}")
        };
        let exp_len = self.len;
        if !v.is_finite() {
            // "NaN", "inf", "-inf": the same in both notations.
            return self.text(0, exp_len);
        }
        // Split "-d.ddde-x" into sign, digits and exponent.
        let bytes = &self.buf[..exp_len];
        let negative = bytes[0] == b'-';
        let e_at = bytes.iter().rposition(|&b| b == b'e').unwrap_or(exp_len);
        let exponent: i32 = std::str::from_utf8(&bytes[e_at + 1..])
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
        let mut digits = [0u8; 20];
        let mut n = 0;
        for &b in &bytes[usize::from(negative)..e_at] {
            if b.is_ascii_digit() && n < digits.len() {
                digits[n] = b;
                n += 1;
            }
        }
        let sign = usize::from(negative);
        let plain_len = if exponent >= 0 {
            let int_digits = exponent as usize + 1;
            if n <= int_digits {
                sign + int_digits
            } else {
                sign + n + 1
            }
        } else {
            sign + 1 + exponent.unsigned_abs() as usize + n
        };
        if plain_len > 8 && exp_len < plain_len {
            return self.text(0, exp_len);
        }
        if plain_len > self.buf.len() - exp_len {
            // Longer than the buffer's rest: exponent notation was shorter (returned above).
            return self.text(0, exp_len);
        }
        // Lay the plain notation out after the exponent one.
        let mut at = exp_len;
        let buf = &mut self.buf;
        let mut put = |b: u8| {
            if let Some(slot) = buf.get_mut(at) {
                *slot = b;
            }
            at += 1;
        };
        if negative {
            put(b'-');
        }
        if exponent >= 0 {
            let int_digits = exponent as usize + 1;
            for (i, &d) in digits[..n].iter().enumerate() {
                if i == int_digits {
                    put(b'.');
                }
                put(d);
            }
            for _ in n..int_digits {
                put(b'0');
            }
        } else {
            put(b'0');
            put(b'.');
            for _ in 1..exponent.unsigned_abs() {
                put(b'0');
            }
            for &d in &digits[..n] {
                put(d);
            }
        }
        self.text(exp_len, at)
    }

    fn text(&self, from: usize, to: usize) -> &str {
        // Only ASCII was written.
        std::str::from_utf8(&self.buf[from..to]).unwrap_or("NaN")
    }
}

/// Appends the `<Broadcast>` to `out`, without building a tree:
///
/// ```text
/// <Broadcast><Iteration>i</Iteration>[<Part>p</Part><Parts>n</Parts>]
///   <DrawData><Body Type="…"><Entity_id/><Body_id/><Material/><Mass/>dimensions
///     <Position_X/Y/Z/><Rotation_X/Y/Z/><Linear_Velocity_X/Y/Z/><Angular_Velocity_X/Y/Z/>
///   </Body>…</DrawData>
///   <Entities_Info><Robot_Entity|Ball_Entity><Entity_Id/>
///     <Position><pos_x/><pos_y/><pos_z/></Position><Rotation><rot_x/>…</Rotation>
///   </…>…</Entities_Info></Broadcast>
/// ```
///
/// (written without the whitespace shown). Dimensions as in the SimRob manual's broadcast: `Radius`
/// for spheres, `Size_X/Y/Z` for boxes, `Length` then `Radius` for cylinders and wheels.
pub fn encode_broadcast_into(b: &Broadcast, out: &mut String) {
    out.push_str("<Broadcast>");
    write_leaf(out, "Iteration", b.iteration);
    if let Some((part, parts)) = b.part {
        write_leaf(out, "Part", part);
        write_leaf(out, "Parts", parts);
    }
    out.push_str("<DrawData>");
    for body in &b.bodies {
        // Writing to a String cannot fail.
        let _ = write!(out, "<Body Type=\"{}\">", body.shape.type_name());
        write_leaf(out, "Entity_id", body.entity_id);
        write_leaf(out, "Body_id", body.id);
        write_leaf(out, "Material", body.material);
        write_real_leaf(out, "Mass", body.mass);
        match &body.shape {
            Shape::Sphere { radius } => write_real_leaf(out, "Radius", *radius),
            Shape::Box { size } => write_vec3(out, SIZE, *size),
            Shape::Cylinder { radius, length } | Shape::WheelCylinder { radius, length } => {
                write_real_leaf(out, "Length", *length);
                write_real_leaf(out, "Radius", *radius);
            }
        }
        write_vec3(out, POSITION, body.position);
        write_vec3(out, ROTATION, body.rotation);
        write_vec3(out, LINEAR_VELOCITY, body.linear_velocity);
        write_vec3(out, ANGULAR_VELOCITY, body.angular_velocity);
        out.push_str("</Body>");
    }
    out.push_str("</DrawData><Entities_Info>");
    for e in &b.entities {
        let tag = match e.kind {
            EntityInfoKind::Robot => "Robot_Entity",
            EntityInfoKind::Ball => "Ball_Entity",
        };
        let _ = write!(out, "<{tag}>");
        write_leaf(out, "Entity_Id", e.entity_id);
        out.push_str("<Position>");
        write_vec3(out, POS, e.position);
        out.push_str("</Position><Rotation>");
        write_vec3(out, ROT, e.rotation);
        let _ = write!(out, "</Rotation></{tag}>");
    }
    out.push_str("</Entities_Info></Broadcast>");
}

/// The request element of `req` (without `<Response>`): `<Agent_Message>`,
/// `<Control_Request>` or `<Entity_Request>` with its `Command` attribute from `keys`.
fn encode_payload(req: &Request, keys: &CommandKeys) -> Element {
    let kind = req.kind();
    let el = || Element::new(kind.family().element()).with_attr("Command", keys.name(kind));
    let leaf =
        |child: &str, value: &dyn std::fmt::Display| el().with_child(Element::leaf(child, value));
    match req {
        Request::Agent(a) => match a {
            AgentRequest::RegisterAgent {
                agent_type,
                port,
                ip,
                sync,
                broadcast,
                key,
            } => el()
                .with_attr("Agent_Type", agent_type.as_str())
                .with_child(Element::leaf("Port", port))
                .with_child(Element::leaf("IP", ip))
                .with_child(Element::leaf("Sync", sync))
                .with_child(Element::leaf("Broadcast", broadcast))
                .with_child(Element::leaf("Key", key)),
            AgentRequest::InfoRequest {
                requester,
                requested,
            } => el()
                .with_child(Element::leaf("Requester", requester))
                .with_child(Element::leaf("Requested", requested)),
            AgentRequest::Synchronize { key, iteration } => el()
                .with_child(Element::leaf("Key", key))
                .with_child(Element::leaf("Iteration", iteration)),
            AgentRequest::UnregisterAgent { key } => el().with_child(Element::leaf("Key", key)),
        },
        Request::Control { request, .. } => match request {
            ControlRequest::RegisterMaterialsInteractions {
                materials,
                interactions,
            } => materials_element(materials, interactions, keys),
            ControlRequest::CreateEntity(spec) => entity_spec_element(spec, keys),
            ControlRequest::InitializeSimulation | ControlRequest::MakeStep => el(),
            ControlRequest::SetStepMode(v) => leaf("Step_Mode", v),
            ControlRequest::SetAutoAdjustMode(v) => leaf("AutoAdjust_Mode", v),
            ControlRequest::SetSyncMode(v) => leaf("Sync_Mode", v),
            ControlRequest::SetSyncWait(v) => leaf("Sync_Wait", v),
            ControlRequest::SetTimestep(v) => leaf("Timestep", v),
            ControlRequest::SetWorldGravity(v) => leaf("Gravity", v),
            ControlRequest::SetWorldHardness(v) => leaf("Hardness", v),
            ControlRequest::SetWorldBounciness(v) => leaf("Bounciness", v),
            ControlRequest::Save(f) => leaf("File", f),
            ControlRequest::Load(f) => leaf("File", f),
            ControlRequest::SetFastMode(v) => leaf("Fast_Mode", v),
            ControlRequest::SetStepsPerIteration(v) => leaf("Steps_Per_Iteration", v),
            ControlRequest::SetRollingResistance {
                material_1,
                material_2,
                coefficient,
            } => el()
                .with_child(Element::leaf("Material_1", material_1))
                .with_child(Element::leaf("Material_2", material_2))
                .with_child(Element::leaf("Coefficient", coefficient)),
        },
        Request::Entity { request, .. } => match request {
            EntityRequest::SetEntityPosition {
                entity_id,
                position,
            } => {
                let mut e = el().with_child(Element::leaf("Entity_Id", entity_id));
                e.push_vec3(POSITION, *position);
                e
            }
            EntityRequest::RobotMotorControl { entity_id, motors } => el()
                .with_child(Element::leaf("Entity_Id", entity_id))
                .with_child(Element::new("Motors").with_children(motors.iter().map(|m| {
                    Element::new("Motor")
                        .with_child(Element::leaf("Wheel_Joint_Id", m.wheel_joint_id))
                        .with_child(Element::leaf("Value", m.value))
                }))),
            EntityRequest::HumanoidAction {
                entity_id,
                name,
                params,
            } => {
                let mut action = Element::new("Action").with_attr("name", name);
                for (k, v) in params {
                    action = action.with_attr(k, v);
                }
                el().with_child(Element::leaf("Entity_Id", entity_id))
                    .with_child(action)
            }
        },
    }
}
