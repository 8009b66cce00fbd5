//! # simrob-protocol
//!
//! The SimRob XML wire format (SimRob manual §1.6, §2–§5): a typed model of every message, its
//! decoder and its encoder.
//!
//! **What it is:** bytes in, typed values out, and back. [`decode_datagram`] turns one UDP
//! datagram from an agent into its [`Request`]s; [`encode_request`] does the reverse for
//! clients; [`encode_response`] / [`encode_broadcast`] write what the server sends and
//! [`decode_server_message`] reads it on the agent side. [`CommandKeys`] holds the
//! configurable command names (SimRob manual §6) of the [`commands`] table. The [`tree`] module is
//! the small XML element tree everything is built on, public so that other crates read and write
//! their own XML (save files, scenarios) with the same rules and error messages.
//!
//! **What it is not:** no I/O (no sockets, files or clocks), and no judgement of what a
//! request means — it checks syntax, required elements, number formats and finiteness, not
//! whether an entity exists, a mass is positive or a field has joints. Those are the world's
//! checks.
//!
//! **Units and frames** (metres, kilograms, seconds, radians; Z up; extrinsic X-Y-Z Euler
//! angles) are stated once in [`model`] and used everywhere in simrob.
//!
//! ## Example
//!
//! ```
//! use simrob_protocol::*;
//!
//! let keys = CommandKeys::default();
//! let datagram = br#"<Message><Simulation_Message>
//!     <Entity_Request Command="Robot_Motor_Control">
//!       <Entity_Id>1</Entity_Id>
//!       <Motors><Motor><Wheel_Joint_Id>0</Wheel_Joint_Id><Value>3</Value></Motor></Motors>
//!     </Entity_Request>
//!     <Control_Request Command="Make_Step"><Response>true</Response></Control_Request>
//!   </Simulation_Message></Message>"#;
//! let requests = decode_datagram(datagram, &keys);
//! assert_eq!(requests.len(), 2);
//! assert_eq!(
//!     requests[1],
//!     Ok(Request::Control { request: ControlRequest::MakeStep, response: Some(true) })
//! );
//!
//! // Encoding round-trips exactly.
//! let first = requests[0].clone().unwrap();
//! let xml = encode_request(&first, &keys);
//! assert_eq!(decode_datagram(xml.as_bytes(), &keys), vec![Ok(first)]);
//!
//! // Errors say what and where.
//! let bad = br#"<Message><Simulation_Message><Control_Request Command="Set_Timestep">
//!     <Timestep>NaN</Timestep></Control_Request></Simulation_Message></Message>"#;
//! let err = decode_datagram(bad, &keys).remove(0).unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "Message[1]/Simulation_Message/Control_Request[Set_Timestep]: Timestep: \
//!      expected a finite number (NaN and infinity are not allowed), found \"NaN\""
//! );
//! ```
//!
//! ## Decoding rules and leniencies
//!
//! - One datagram may hold several roots, each `<Message>` any number of
//!   `<Agent_Message>` / `<Simulation_Message>`, each `<Simulation_Message>` any number of
//!   `<Control_Request>` / `<Entity_Request>`: one result per request, in document order.
//!   If the XML breaks part-way, the requests complete before the break are returned,
//!   followed by one error.
//! - **Bare requests:** an `<Agent_Message>`, `<Simulation_Message>`, `<Control_Request>` or
//!   `<Entity_Request>` root without the `<Message>` envelope is accepted as if enveloped
//!   (the SimRob manual shows its `Create_Entity` examples that way).
//! - **Whitespace** around element text and around the `Command`, `Type` and `Agent_Type`
//!   attribute values is trimmed (so `Command = "Set_Step_Mode"` and indented values work).
//! - **Booleans** accept `true`/`false` in any case and `1`/`0`. Leading `>` characters are
//!   ignored, so the SimRob manual's `<Sync>>false</Sync>` (§2.1, a typo) reads as `false`.
//! - **`Entity_id` / `Entity_Id`:** the SimRob manual spells it `Entity_id` in `Create_Entity` and
//!   `Entity_Id` in entity requests and broadcasts; either spelling is accepted everywhere.
//!   Other element names are case-sensitive, as in the SimRob manual.
//! - **Numbers** are `f64` (`str::parse` syntax, e.g. `1`, `-0.5`, `1e-3`); NaN, infinities
//!   and values too large for `f64` are rejected. Ids are `u32` (negative is an error),
//!   ports `u16`, iterations `u64`, `Steps_Per_Iteration` a `u32` ≥ 1.
//! - **Optional** elements (per [`model`]): `Material` and `Mass` of bodies and balls;
//!   `Hardness`, `Bounciness` and `Maximum_Torque` of wheel joints; `<Response>` inside
//!   control and entity requests (not inside `<Agent_Message>`, where the SimRob manual does
//!   not allow it). Everything else is required; a missing element is an error naming it.
//! - **An element that is not read is an error**, at every depth: a name misspelt or in
//!   another case, one its command or its parent element does not take, one given more often
//!   than it is read (two `<Radius>`). The error names it and where it is
//!   (`…/Data/Structure/Body[3] (Body_id 2): unknown element <Mas> (this <Body> reads …,
//!   <Mass>)`), so a misspelt optional `<Mas>` does not fall back to the default mass. The
//!   element decoders save files use ([`decode_entity_spec_element`],
//!   [`decode_materials_element`], [`decode_body_element`], [`decode_joint_element`]) check
//!   the same. Attributes other than those read are not checked.
//! - An unknown `Agent_Type` decodes to [`AgentType::Other`] (the server decides); unknown
//!   commands, entity, body and joint types are errors that list the known names.
//! - Comments, the XML declaration and a UTF-8 byte-order mark are skipped. Input must be
//!   UTF-8; nesting deeper than [`tree::MAX_DEPTH`] is refused.
//!
//! On the agent side, [`decode_server_message`] is lenient where a client should be: a
//! broadcast body without `<Entity_id>` belongs to entity 0 (the SimRob manual's own example has
//! none), and unknown elements are ignored. See [`decode_broadcast_element`].
//!
//! ## Errors
//!
//! [`DecodeError`]'s `Display` says what is wrong and where, as an element path:
//! `Message[2]/Simulation_Message/Control_Request[Create_Entity]/Data/Structure/Body[3]
//! (Body_id 2): Radius: expected a number, found "abc"`; XML syntax errors add the byte
//! offset, line and column. [`DecodeError::kind`] classifies it.
//!
//! ## Errata of the SimRob manual, as decided here
//!
//! The manual's examples are the test fixtures (`tests/fixtures/seed000/`), repaired where
//! the manual is at fault, each repair marked with an XML comment:
//! - `<Sync>>false</Sync>` (§2.1) is well-formed and accepted as `false` (see booleans).
//! - The Info response closes `<IP>` with `</Port>` (§2.2): repaired; the encoder writes
//!   `<IP>…</IP>`.
//! - `Command = Set_AutoAdjust_Mode"` lacks a quote (§2.8): repaired; such input is a
//!   syntax error, as it should be.
//! - §2.10 names the command `Set_Sync_Mode`; its example (correctly) uses `Synchronize`,
//!   which is the default.
//! - The Field example never closes `<Structure>` and the Ball example is split by a page
//!   break (§2.4.2–3): repaired.
//! - The `Create_Entity` examples lack the `<Message><Simulation_Message>` envelope: the
//!   fixtures add it, and the decoder accepts bare requests anyway.
//! - The §5 broadcast example, with a wheel below the field, is kept as data.
//!
//! ## Encoding
//!
//! Encoders write compact, well-formed XML; numbers use `f64`'s `Display` (the shortest text
//! that parses back to the same value), so encode → decode gives back the same values;
//! text and attributes are escaped. Requests go in a `<Message>` envelope; the element
//! builders ([`request_element`], [`entity_spec_element`], [`materials_element`],
//! [`body_element`], …) give the same XML as [`tree::Element`]s for embedding, and the
//! `decode_*_element` functions read them back.
//!
//! ## Split broadcasts (simrob extension)
//!
//! A broadcast larger than the datagram limit is sent as several datagrams, each a complete
//! `<Broadcast>` with the same `<Iteration>`, followed by `<Part>i</Part><Parts>n</Parts>`
//! (i from 1 to n) and a share of the bodies and entity entries ([`Broadcast::part`]).
//! Clients that ignore `<Part>` still read each datagram as a valid (partial) broadcast.

#![warn(missing_docs)]

pub mod commands;
pub mod error;
mod fast;
mod fields;
pub mod humanoid;
pub mod ids;
pub mod keys;
pub mod model;
pub mod tree;

mod decode;
mod encode;

pub use commands::{Command, Family};
pub use decode::{
    decode_body_element, decode_body_state_element, decode_broadcast_element, decode_contact,
    decode_datagram, decode_datagram_with_depth, decode_entity_spec_element, decode_joint_element,
    decode_materials_element, decode_request_element, decode_response_element,
    decode_server_message, server_sent_root,
};
pub use encode::{
    body_element, contact_children, encode_broadcast, encode_broadcast_into, encode_entity_spec,
    encode_request, encode_requests, encode_response, encode_server_message, entity_spec_element,
    joint_element, materials_element, message_element, real, request_element, response_element,
    Real,
};
pub use error::{DecodeError, DecodeErrorKind, Position};
pub use ids::{EntityId, MaterialId};
pub use keys::{config_keys, CommandKeys, KeysError};
pub use model::*;
