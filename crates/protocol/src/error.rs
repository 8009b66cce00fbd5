//! [`DecodeError`]: what is wrong with a message and where.

/// The broad class of a [`DecodeError`], for callers that react differently to, say, a
/// syntax error and an unknown command. The human-readable detail is in the error's
/// [`Display`](std::fmt::Display).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The bytes are not valid UTF-8.
    NotUtf8,
    /// Nothing but whitespace (or nothing at all).
    Empty,
    /// Not well-formed XML (unclosed or mismatched tags, bad attributes, bad entities, text
    /// outside any element, nesting too deep …). Carries a [`Position`].
    Syntax,
    /// Well-formed XML, but an element that has no place where it was found (e.g. an
    /// unknown root element, or a `<Message>` child that is neither `<Agent_Message>` nor
    /// `<Simulation_Message>`).
    UnexpectedElement,
    /// A `Command` attribute names no known command.
    UnknownCommand,
    /// A `Type` attribute names no known entity, body or joint type.
    UnknownType,
    /// A required child element is missing.
    MissingElement,
    /// A required attribute is missing.
    MissingAttribute,
    /// An element's text is not a valid value (not a number, NaN, out of range …).
    InvalidValue,
}

/// Where in the input a syntax error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Position {
    /// Byte offset from the start of the input.
    pub offset: usize,
    /// Line number, from 1.
    pub line: usize,
    /// Column (in characters) on that line, from 1.
    pub column: usize,
}

impl Position {
    /// Computes line and column of byte `offset` in `text` (the offset is clamped to the
    /// text's length and moved back to a character boundary).
    pub fn locate(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Position {
            offset,
            line,
            column,
        }
    }
}

/// A message (or part of one) that could not be decoded.
///
/// Its `Display` says **what** is wrong and **where**, as a path of elements from the root,
/// for example
///
/// ```text
/// Message[2]/Simulation_Message/Control_Request[Create_Entity]/Data/Structure/Body[3] (Body_id 2): Radius: expected a number, found "abc"
/// ```
///
/// Path segments: a root carries its 1-based index among the datagram's roots
/// (`Message[2]`); a request carries its command (`Control_Request[Create_Entity]`);
/// repeated elements carry their 1-based index among same-named siblings and, when it could
/// be read, their id (`Body[3] (Body_id 2)`, `Joint[1] (Joint_id 0)`, `Motor[2]`).
/// XML syntax errors add the byte offset, line and column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", render(.path, .position, .message))]
pub struct DecodeError {
    kind: DecodeErrorKind,
    /// Outermost segment first.
    path: Vec<String>,
    message: String,
    position: Option<Position>,
}

impl DecodeError {
    /// A new error with an empty path; add the path with [`DecodeError::within`] as it
    /// propagates outwards.
    pub fn new(kind: DecodeErrorKind, message: impl Into<String>) -> DecodeError {
        DecodeError {
            kind,
            path: Vec::new(),
            message: message.into(),
            position: None,
        }
    }

    /// An [`DecodeErrorKind::InvalidValue`] error.
    pub fn invalid(message: impl Into<String>) -> DecodeError {
        DecodeError::new(DecodeErrorKind::InvalidValue, message)
    }

    /// A [`DecodeErrorKind::Syntax`] error at `position`.
    pub fn syntax(message: impl Into<String>, position: Position) -> DecodeError {
        DecodeError {
            position: Some(position),
            ..DecodeError::new(DecodeErrorKind::Syntax, message)
        }
    }

    /// Prepends a path segment (the element the error happened in).
    #[must_use]
    pub fn within(mut self, segment: impl Into<String>) -> DecodeError {
        self.path.insert(0, segment.into());
        self
    }

    /// The class of the error.
    pub fn kind(&self) -> DecodeErrorKind {
        self.kind
    }

    /// The element path, segments joined by `/` (empty when the error is about the whole
    /// input).
    pub fn path(&self) -> String {
        self.path.join("/")
    }

    /// The path segments, outermost first.
    pub fn path_segments(&self) -> &[String] {
        &self.path
    }

    pub(crate) fn path_segments_mut(&mut self) -> &mut [String] {
        &mut self.path
    }

    /// What is wrong, without the path.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Where a syntax error was found.
    pub fn position(&self) -> Option<Position> {
        self.position
    }
}

fn render(path: &[String], position: &Option<Position>, message: &str) -> String {
    let mut out = String::new();
    if !path.is_empty() {
        out.push_str(&path.join("/"));
        out.push_str(": ");
    }
    if let Some(p) = position {
        out.push_str(&format!(
            "XML syntax error at byte {} (line {}, column {}): ",
            p.offset, p.line, p.column
        ));
    }
    out.push_str(message);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_lines_and_columns() {
        let t = "ab\ncdé\nf";
        assert_eq!(
            Position::locate(t, 0),
            Position {
                offset: 0,
                line: 1,
                column: 1
            }
        );
        let p = Position::locate(t, 3);
        assert_eq!((p.line, p.column), (2, 1));
        // 'é' is two bytes; offset 6 is inside it and moves back to its start.
        let p = Position::locate(t, 6);
        assert_eq!((p.offset, p.line, p.column), (5, 2, 3));
        let p = Position::locate(t, 100);
        assert_eq!((p.line, p.column), (3, 2));
    }

    #[test]
    fn display_has_path_and_message() {
        let e = DecodeError::invalid("Radius: expected a number, found \"abc\"")
            .within("Body[3] (Body_id 2)")
            .within("Structure");
        assert_eq!(
            e.to_string(),
            "Structure/Body[3] (Body_id 2): Radius: expected a number, found \"abc\""
        );
        assert_eq!(e.kind(), DecodeErrorKind::InvalidValue);
    }
}
