//! A small XML element tree: parse any number of root elements, read them with typed
//! accessors that produce path-carrying [`DecodeError`]s, and write them back.
//!
//! This is what the SimRob decoder is built on, and it is public so that other crates can
//! read and write their own XML (the world's save files, scenario files) with the same rules
//! and error messages as the wire format.
//!
//! What it keeps: element names, attributes (in order, unescaped), child elements (in
//! order) and the text directly inside each element (all text and CDATA pieces
//! concatenated, unescaped, **not** trimmed — the typed accessors trim). Comments, the XML
//! declaration, processing instructions and DOCTYPE are skipped. Namespaces are not
//! interpreted (a prefixed name is kept as written). No I/O.
//!
//! ```
//! use simrob_protocol::tree::{parse_elements, Element};
//!
//! let roots = parse_elements("<A x='1'><B> 2.5 </B></A><C/>").unwrap();
//! assert_eq!(roots.len(), 2);
//! assert_eq!(roots[0].attr("x"), Some("1"));
//! assert_eq!(roots[0].child_f64("B").unwrap(), 2.5);
//! let e = roots[0].child_f64("Missing").unwrap_err();
//! assert_eq!(e.to_string(), "missing required child <Missing>");
//!
//! let built = Element::new("A").with_child(Element::leaf("B", 2.5));
//! assert_eq!(built.to_xml(), "<A><B>2.5</B></A>");
//! ```

use std::fmt::{self, Write as _};

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::error::{DecodeError, DecodeErrorKind, Position};

/// Deepest element nesting accepted by the parser by default (the SimRob server's
/// configuration key `maxxmldepth`). Deeper input is a syntax error: it is never legitimate
/// in SimRob messages or save files, and refusing it bounds recursion.
pub const MAX_DEPTH: usize = 128;

/// The largest `maxxmldepth` a server accepts: deeper trees would make recursion over them
/// a risk to the stack.
pub const MAX_DEPTH_LIMIT: usize = 1024;

/// Longest piece of offending text quoted in an error message.
const MAX_QUOTED: usize = 64;

/// One XML element.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Element {
    /// Tag name as written.
    pub name: String,
    /// Attributes in document order, values unescaped.
    pub attrs: Vec<(String, String)>,
    /// Child elements in document order.
    pub children: Vec<Element>,
    /// All text directly inside this element, unescaped, untrimmed.
    pub text: String,
}

/// Quotes `s` for an error message (Rust string syntax, cut after [`MAX_QUOTED`] chars).
pub(crate) fn quote(s: &str) -> String {
    if s.chars().count() > MAX_QUOTED {
        let cut: String = s.chars().take(MAX_QUOTED).collect();
        format!("{cut:?}…")
    } else {
        format!("{s:?}")
    }
}

/// Parses a boolean the SimRob way: `true`/`false` in any case, `1`/`0`; surrounding
/// whitespace and **leading `>` characters** are ignored (SimRob manual §2.1 shows
/// `<Sync>>false</Sync>`).
pub fn parse_bool(text: &str) -> Option<bool> {
    let t = text.trim().trim_start_matches('>').trim();
    if t.eq_ignore_ascii_case("true") || t == "1" {
        Some(true)
    } else if t.eq_ignore_ascii_case("false") || t == "0" {
        Some(false)
    } else {
        None
    }
}

/// Parses a finite `f64` (surrounding whitespace ignored). NaN, infinities and numbers too
/// large for `f64` are rejected.
pub fn parse_finite_f64(text: &str) -> Result<f64, NumberError> {
    let t = text.trim();
    match t.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(_) => Err(NumberError::NotFinite(quote(t))),
        Err(_) => Err(NumberError::NotANumber(quote(t))),
    }
}

/// Why a number's text was refused. `found` is the text as the message quotes it (Rust
/// string syntax, cut after 64 characters).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NumberError {
    /// A number that is NaN, infinite or too large for `f64`; holds the quoted text.
    #[error("expected a finite number (NaN and infinity are not allowed), found {0}")]
    NotFinite(String),
    /// Text that is not a number at all; holds the quoted text.
    #[error("expected a number, found {0}")]
    NotANumber(String),
    /// A negative integer where an unsigned one is expected.
    #[error("expected a non-negative integer ({range}), found {found}")]
    Negative {
        /// The expected type's name and range, as the message states it.
        range: &'static str,
        /// The quoted text.
        found: String,
    },
    /// Not an integer, or out of the expected type's range.
    #[error("expected an integer ({range}; digits, no decimal point or exponent), found {found}")]
    NotInteger {
        /// The expected type's name and range, as the message states it.
        range: &'static str,
        /// The quoted text.
        found: String,
    },
}

fn parse_unsigned<T: std::str::FromStr>(text: &str, range: &'static str) -> Result<T, NumberError> {
    let t = text.trim();
    match t.parse::<T>() {
        Ok(v) => Ok(v),
        Err(_) if t.starts_with('-') && t[1..].parse::<u128>().is_ok() => {
            Err(NumberError::Negative {
                range,
                found: quote(t),
            })
        }
        Err(_) => Err(NumberError::NotInteger {
            range,
            found: quote(t),
        }),
    }
}

/// Whether element name `found` looks like a misspelling of `wanted`: the same but for case,
/// or at most two letters apart (one for short names).
pub(crate) fn looks_like(found: &str, wanted: &str) -> bool {
    if found == wanted {
        return false;
    }
    let (a, b): (Vec<char>, Vec<char>) = (
        found.to_lowercase().chars().collect(),
        wanted.to_lowercase().chars().collect(),
    );
    if a == b {
        return true;
    }
    let most = if b.len() <= 4 { 1 } else { 2 };
    if a.len().abs_diff(b.len()) > most {
        return false;
    }
    // Edit distance, a transposition counting as one.
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = v;
        }
    }
    d[a.len()][b.len()] <= most
}

impl Element {
    /// An element with no attributes, children or text.
    pub fn new(name: impl Into<String>) -> Element {
        Element {
            name: name.into(),
            ..Element::default()
        }
    }

    /// An element holding only `value` as text (written with `Display`, so `f64`s are
    /// written in their shortest exactly round-tripping form).
    pub fn leaf(name: impl Into<String>, value: impl fmt::Display) -> Element {
        Element {
            name: name.into(),
            text: value.to_string(),
            ..Element::default()
        }
    }

    /// Adds an attribute (builder style).
    #[must_use]
    pub fn with_attr(mut self, name: impl Into<String>, value: impl Into<String>) -> Element {
        self.attrs.push((name.into(), value.into()));
        self
    }

    /// Adds a child (builder style).
    #[must_use]
    pub fn with_child(mut self, child: Element) -> Element {
        self.children.push(child);
        self
    }

    /// Adds children (builder style).
    #[must_use]
    pub fn with_children(mut self, children: impl IntoIterator<Item = Element>) -> Element {
        self.children.extend(children);
        self
    }

    /// Sets the text (builder style).
    #[must_use]
    pub fn with_text(mut self, text: impl Into<String>) -> Element {
        self.text = text.into();
        self
    }

    /// Appends a child.
    pub fn push(&mut self, child: Element) {
        self.children.push(child);
    }

    /// Appends `<X>x</X><Y>y</Y><Z>z</Z>` children, written by [`crate::real`].
    pub fn push_vec3(&mut self, names: [&str; 3], v: [f64; 3]) {
        for (name, value) in names.iter().zip(v) {
            self.children.push(Element::leaf(*name, crate::real(value)));
        }
    }

    // ----- reading ---------------------------------------------------------------------

    /// The value of attribute `name` (first one if repeated).
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The value of attribute `name`, trimmed, or a [`DecodeErrorKind::MissingAttribute`]
    /// error.
    pub fn required_attr(&self, name: &str) -> Result<&str, DecodeError> {
        self.attr(name).map(str::trim).ok_or_else(|| {
            DecodeError::new(
                DecodeErrorKind::MissingAttribute,
                format!("missing required attribute {name}"),
            )
        })
    }

    /// The first child named `name`.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// The first child named `name`, or a [`DecodeErrorKind::MissingElement`] error
    /// `missing required child <name>`, which names a child that looks like a misspelling
    /// of it (`missing required child <Value>; found <Valeu>: is it misspelt?`).
    pub fn required_child(&self, name: &str) -> Result<&Element, DecodeError> {
        self.child(name).ok_or_else(|| {
            let near: Vec<String> = self
                .children
                .iter()
                .filter(|c| looks_like(&c.name, name))
                .map(|c| format!("<{}>", c.name))
                .collect();
            let found = if near.is_empty() {
                String::new()
            } else {
                format!("; found {}: is it misspelt?", near.join(", "))
            };
            DecodeError::new(
                DecodeErrorKind::MissingElement,
                format!("missing required child <{name}>{found}"),
            )
        })
    }

    /// All children named `name`, in order.
    pub fn children<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }

    /// The text, trimmed.
    pub fn text(&self) -> &str {
        self.text.trim()
    }

    fn value_error(&self, message: impl fmt::Display) -> DecodeError {
        DecodeError::invalid(format!("{}: {message}", self.name))
    }

    /// The text as a finite `f64` (see [`parse_finite_f64`]). Errors read
    /// `Name: expected a number, found "abc"`.
    pub fn text_f64(&self) -> Result<f64, DecodeError> {
        parse_finite_f64(&self.text).map_err(|m| self.value_error(m))
    }

    /// The text as a `u32` (ids). Negative numbers are an error.
    pub fn text_u32(&self) -> Result<u32, DecodeError> {
        parse_unsigned(&self.text, "0 to 4294967295").map_err(|m| self.value_error(m))
    }

    /// The text as a `u16` (ports).
    pub fn text_u16(&self) -> Result<u16, DecodeError> {
        parse_unsigned(&self.text, "0 to 65535").map_err(|m| self.value_error(m))
    }

    /// The text as a `u64` (iterations).
    pub fn text_u64(&self) -> Result<u64, DecodeError> {
        parse_unsigned(&self.text, "0 to 18446744073709551615").map_err(|m| self.value_error(m))
    }

    /// The text as a boolean (see [`parse_bool`]).
    pub fn text_bool(&self) -> Result<bool, DecodeError> {
        parse_bool(&self.text).ok_or_else(|| {
            self.value_error(format!(
                "expected true or false (or 1 or 0; in any case), found {}",
                quote(self.text())
            ))
        })
    }

    /// The text, trimmed, as an owned string.
    pub fn text_string(&self) -> String {
        self.text().to_string()
    }

    /// Required child as `f64`.
    pub fn child_f64(&self, name: &str) -> Result<f64, DecodeError> {
        self.required_child(name)?.text_f64()
    }

    /// Required child as `u32`.
    pub fn child_u32(&self, name: &str) -> Result<u32, DecodeError> {
        self.required_child(name)?.text_u32()
    }

    /// Required child as `u16`.
    pub fn child_u16(&self, name: &str) -> Result<u16, DecodeError> {
        self.required_child(name)?.text_u16()
    }

    /// Required child as `u64`.
    pub fn child_u64(&self, name: &str) -> Result<u64, DecodeError> {
        self.required_child(name)?.text_u64()
    }

    /// Required child as a boolean.
    pub fn child_bool(&self, name: &str) -> Result<bool, DecodeError> {
        self.required_child(name)?.text_bool()
    }

    /// Required child's trimmed text.
    pub fn child_string(&self, name: &str) -> Result<String, DecodeError> {
        Ok(self.required_child(name)?.text_string())
    }

    /// Optional child as `f64` (`Ok(None)` when absent, an error when present but invalid).
    pub fn opt_child_f64(&self, name: &str) -> Result<Option<f64>, DecodeError> {
        self.child(name).map(Element::text_f64).transpose()
    }

    /// Optional child as `u32`.
    pub fn opt_child_u32(&self, name: &str) -> Result<Option<u32>, DecodeError> {
        self.child(name).map(Element::text_u32).transpose()
    }

    /// Optional child as `u64`.
    pub fn opt_child_u64(&self, name: &str) -> Result<Option<u64>, DecodeError> {
        self.child(name).map(Element::text_u64).transpose()
    }

    /// Optional child as a boolean.
    pub fn opt_child_bool(&self, name: &str) -> Result<Option<bool>, DecodeError> {
        self.child(name).map(Element::text_bool).transpose()
    }

    /// Three required `f64` children, e.g. `["Position_X", "Position_Y", "Position_Z"]`.
    pub fn child_vec3(&self, names: [&str; 3]) -> Result<[f64; 3], DecodeError> {
        Ok([
            self.child_f64(names[0])?,
            self.child_f64(names[1])?,
            self.child_f64(names[2])?,
        ])
    }

    // ----- writing ---------------------------------------------------------------------

    /// Compact XML (no whitespace added).
    pub fn to_xml(&self) -> String {
        let mut out = String::new();
        self.write_xml(&mut out);
        out
    }

    /// Appends compact XML to `out`.
    pub fn write_xml(&self, out: &mut String) {
        self.write_start(out);
        if self.children.is_empty() && self.text.is_empty() {
            return;
        }
        escape_text_into(&self.text, out);
        for c in &self.children {
            c.write_xml(out);
        }
        write_end(&self.name, out);
    }

    /// Indented XML (two spaces per level, one element per line), for files people read.
    /// Text of elements that also have children is written on its own line (so it gains
    /// surrounding whitespace, which the typed accessors trim).
    pub fn to_xml_pretty(&self) -> String {
        let mut out = String::new();
        self.write_pretty(&mut out, 0);
        out
    }

    fn write_pretty(&self, out: &mut String, depth: usize) {
        for _ in 0..depth {
            out.push_str("  ");
        }
        self.write_start(out);
        if self.children.is_empty() {
            if !self.text.is_empty() {
                escape_text_into(&self.text, out);
                write_end(&self.name, out);
            }
            out.push('\n');
            return;
        }
        out.push('\n');
        if !self.text.trim().is_empty() {
            for _ in 0..=depth {
                out.push_str("  ");
            }
            escape_text_into(self.text.trim(), out);
            out.push('\n');
        }
        for c in &self.children {
            c.write_pretty(out, depth + 1);
        }
        for _ in 0..depth {
            out.push_str("  ");
        }
        write_end(&self.name, out);
        out.push('\n');
    }

    /// Writes `<name attrs>` or, for an element without content, `<name attrs/>`.
    fn write_start(&self, out: &mut String) {
        out.push('<');
        out.push_str(&self.name);
        for (k, v) in &self.attrs {
            out.push(' ');
            out.push_str(k);
            out.push_str("=\"");
            escape_attr_into(v, out);
            out.push('"');
        }
        if self.children.is_empty() && self.text.is_empty() {
            out.push_str("/>");
        } else {
            out.push('>');
        }
    }
}

fn write_end(name: &str, out: &mut String) {
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// Appends `text` escaped for element content (`&`, `<`, `>`); a character XML 1.0 does not
/// allow (a control character other than tab, newline and carriage return, U+FFFE, U+FFFF)
/// becomes U+FFFD, so the document stays well-formed for every parser.
pub fn escape_text_into(text: &str, out: &mut String) {
    escape_into(text, out, |c| match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '\r' => Some("&#13;"),
        c => forbidden(c),
    });
}

/// Whether XML 1.0 forbids `c` in a document (a control character other than tab, newline
/// and carriage return, U+FFFE, U+FFFF; surrogates cannot be in a `str`).
pub fn is_forbidden_in_xml(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}')
}

fn forbidden(c: char) -> Option<&'static str> {
    is_forbidden_in_xml(c).then_some("\u{FFFD}")
}

/// Appends `text` escaped for a double-quoted attribute value (`&`, `<`, `>`, `"`, `'`,
/// and tab / newline / carriage return as character references so they survive).
pub fn escape_attr_into(text: &str, out: &mut String) {
    escape_into(text, out, |c| match c {
        '&' => Some("&amp;"),
        '<' => Some("&lt;"),
        '>' => Some("&gt;"),
        '"' => Some("&quot;"),
        '\'' => Some("&apos;"),
        '\t' => Some("&#9;"),
        '\n' => Some("&#10;"),
        '\r' => Some("&#13;"),
        c => forbidden(c),
    });
}

/// Appends `text` with every character `replace` names replaced (the text between them
/// stays whole UTF-8).
fn escape_into(text: &str, out: &mut String, replace: impl Fn(char) -> Option<&'static str>) {
    let mut last = 0;
    for (i, c) in text.char_indices() {
        let Some(rep) = replace(c) else {
            continue;
        };
        out.push_str(&text[last..i]);
        out.push_str(rep);
        last = i + c.len_utf8();
    }
    out.push_str(&text[last..]);
}

/// Writes `<name>` `value` `</name>` with `Display` (no escaping: for numbers).
pub(crate) fn write_leaf<T: fmt::Display>(out: &mut String, name: &str, value: T) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    // Writing to a String cannot fail.
    let _ = write!(out, "{value}");
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// Result of [`parse_partial`]: the elements read before any error.
#[derive(Debug)]
pub(crate) struct Partial {
    /// Complete roots, followed (when `error` is set and the error happened inside an
    /// element) by the incomplete root holding what was read of it.
    pub roots: Vec<Element>,
    /// How many elements were still open when the error happened: the incomplete chain is
    /// the last root, its last child, that one's last child … `open` levels deep.
    pub open: usize,
    pub error: Option<DecodeError>,
}

/// Parses every root element of `xml`.
///
/// Errors (kind [`DecodeErrorKind::Syntax`], with a [`Position`]; the path names the
/// elements open at the error): malformed markup, mismatched or missing end tags, text
/// other than whitespace outside any element, bad attributes, unknown entities, nesting
/// deeper than [`MAX_DEPTH`]. An input with no element at all is an error of kind
/// [`DecodeErrorKind::Empty`].
pub fn parse_elements(xml: &str) -> Result<Vec<Element>, DecodeError> {
    let p = parse_partial(xml, MAX_DEPTH);
    match p.error {
        Some(e) => Err(e),
        None if p.roots.is_empty() => Err(DecodeError::new(
            DecodeErrorKind::Empty,
            "no XML element found (the input is empty or only whitespace/comments)",
        )),
        None => Ok(p.roots),
    }
}

/// Like [`parse_elements`] for bytes: they must be UTF-8 (a leading byte-order mark is
/// skipped).
pub fn parse_elements_bytes(data: &[u8]) -> Result<Vec<Element>, DecodeError> {
    parse_elements(utf8(data)?)
}

/// Checks UTF-8 and strips a byte-order mark.
pub(crate) fn utf8(data: &[u8]) -> Result<&str, DecodeError> {
    match std::str::from_utf8(data) {
        Ok(s) => Ok(s.strip_prefix('\u{feff}').unwrap_or(s)),
        Err(e) => Err(DecodeError::new(
            DecodeErrorKind::NotUtf8,
            format!(
                "the input is not valid UTF-8 (invalid byte at offset {})",
                e.valid_up_to()
            ),
        )),
    }
}

/// Why a start tag could not be read.
#[derive(Debug, thiserror::Error)]
enum TagError {
    #[error("{0}")]
    Utf8(#[from] std::str::Utf8Error),
    #[error("bad attribute in <{element}>: {message}")]
    Attribute { element: String, message: String },
    #[error("bad value of attribute {key} in <{element}>: {message}")]
    Value {
        key: String,
        element: String,
        message: String,
    },
}

fn start_element(start: &BytesStart<'_>) -> Result<Element, TagError> {
    let name = std::str::from_utf8(start.name().as_ref())?.to_string();
    let mut el = Element::new(name);
    for attr in start.attributes() {
        let attr = attr.map_err(|e| TagError::Attribute {
            element: el.name.clone(),
            message: e.to_string(),
        })?;
        let key = std::str::from_utf8(attr.key.as_ref())?.to_string();
        let value = attr.unescape_value().map_err(|e| TagError::Value {
            element: el.name.clone(),
            message: e.to_string(),
            key: key.clone(),
        })?;
        el.attrs.push((key, value.into_owned()));
    }
    Ok(el)
}

fn attach(stack: &mut [Element], roots: &mut Vec<Element>, el: Element) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(el),
        None => roots.push(el),
    }
}

/// Parses as much as possible, nesting at most `max_depth` deep; see [`Partial`].
pub(crate) fn parse_partial(xml: &str, max_depth: usize) -> Partial {
    let mut reader = Reader::from_str(xml);
    let mut stack: Vec<Element> = Vec::new();
    let mut roots: Vec<Element> = Vec::new();
    let error = loop {
        let at = usize::try_from(reader.buffer_position()).unwrap_or(usize::MAX);
        let event = match reader.read_event() {
            Ok(ev) => ev,
            Err(e) => {
                let pos = usize::try_from(reader.error_position()).unwrap_or(usize::MAX);
                break Some((e.to_string(), pos));
            }
        };
        match event {
            Event::Start(start) => {
                if stack.len() >= max_depth {
                    break Some((
                        format!(
                            "elements nested deeper than {max_depth} levels (the SimRob server's configuration key maxxmldepth)"
                        ),
                        at,
                    ));
                }
                match start_element(&start) {
                    Ok(el) => stack.push(el),
                    Err(m) => break Some((m.to_string(), at)),
                }
            }
            Event::Empty(start) => match start_element(&start) {
                Ok(el) => attach(&mut stack, &mut roots, el),
                Err(m) => break Some((m.to_string(), at)),
            },
            Event::End(_) => match stack.pop() {
                // quick-xml has already checked that the names match.
                Some(el) => attach(&mut stack, &mut roots, el),
                None => break Some(("end tag without a start tag".to_string(), at)),
            },
            Event::Text(t) => {
                let text = match t.unescape() {
                    Ok(s) => s,
                    Err(e) => {
                        let place = stack
                            .last()
                            .map_or("outside any element".to_string(), |el| {
                                format!("in <{}>", el.name)
                            });
                        break Some((format!("bad text {place} (escape & as &amp;): {e}"), at));
                    }
                };
                match stack.last_mut() {
                    Some(top) => top.text.push_str(&text),
                    None if text.trim().is_empty() => {}
                    None => {
                        break Some((
                            format!("text outside any element: {}", quote(text.trim())),
                            at,
                        ))
                    }
                }
            }
            Event::CData(c) => {
                let bytes = c.into_inner();
                let text = String::from_utf8_lossy(&bytes);
                match stack.last_mut() {
                    Some(top) => top.text.push_str(&text),
                    None => break Some(("CDATA outside any element".to_string(), at)),
                }
            }
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
            Event::Eof => {
                if let Some(open) = stack.last() {
                    break Some((
                        format!(
                            "unexpected end of input: <{}> is not closed",
                            open.name.clone()
                        ),
                        xml.len(),
                    ));
                }
                break None;
            }
        }
    };
    let open = stack.len();
    let error = error.map(|(message, offset)| {
        let mut err = DecodeError::syntax(message, Position::locate(xml, offset));
        for el in stack.iter().rev() {
            err = err.within(el.name.clone());
        }
        err
    });
    while let Some(el) = stack.pop() {
        attach(&mut stack, &mut roots, el);
    }
    Partial { roots, open, error }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_several_roots_and_text() {
        let r = parse_elements(
            "<?xml version='1.0'?><!-- c --><A a=\"&lt;1&gt;\">x &amp; y<![CDATA[<z>]]></A>\n<B/>",
        )
        .unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].attr("a"), Some("<1>"));
        assert_eq!(r[0].text, "x & y<z>");
        assert_eq!(r[1].name, "B");
    }

    #[test]
    fn spaces_around_equals_are_accepted() {
        let r = parse_elements("<A Command = \"X\"></A>").unwrap();
        assert_eq!(r[0].attr("Command"), Some("X"));
    }

    #[test]
    fn errors_have_positions_and_paths() {
        let e = parse_elements("<A>\n<B></C></A>").unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::Syntax);
        assert!(e.position().is_some());
        let e = parse_elements("<A><B>").unwrap_err();
        assert_eq!(e.path(), "A/B");
        assert!(e.to_string().contains("<B> is not closed"), "{e}");
        let e = parse_elements("garbage").unwrap_err();
        assert!(e.to_string().contains("text outside any element"), "{e}");
        let e = parse_elements("  ").unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::Empty);
        let e = parse_elements("<A>&bogus;</A>").unwrap_err();
        assert_eq!(e.kind(), DecodeErrorKind::Syntax);
        let deep = "<a>".repeat(MAX_DEPTH + 1);
        let e = parse_elements(&deep).unwrap_err();
        assert!(e.to_string().contains("nested deeper"), "{e}");
    }

    #[test]
    fn partial_keeps_complete_roots() {
        let p = parse_partial("<A/><B><C/><D>", MAX_DEPTH);
        assert!(p.error.is_some());
        assert_eq!(p.roots.len(), 2);
        assert_eq!(p.open, 2);
        assert_eq!(p.roots[1].children.len(), 2);
    }

    #[test]
    fn typed_accessors() {
        let r = parse_elements(
            "<A><F> 1.5 </F><N>NaN</N><I>inf</I><U>-3</U><P>70000</P><T>>FALSE</T><S>x</S></A>",
        )
        .unwrap();
        let a = &r[0];
        assert_eq!(a.child_f64("F").unwrap(), 1.5);
        assert!(a.child_f64("N").unwrap_err().to_string().contains("finite"));
        assert!(a.child_f64("I").unwrap_err().to_string().contains("finite"));
        let e = a.child_u32("U").unwrap_err().to_string();
        assert!(e.contains("U: expected a non-negative integer"), "{e}");
        assert!(a.child_u16("P").is_err());
        assert!(!a.child_bool("T").unwrap());
        assert_eq!(
            a.child_f64("S").unwrap_err().to_string(),
            "S: expected a number, found \"x\""
        );
        assert_eq!(a.opt_child_f64("Z").unwrap(), None);
    }

    #[test]
    fn writes_and_reads_back() {
        let el = Element::new("A")
            .with_attr("k", "a\"'<>&\n\tb")
            .with_child(Element::leaf("B", "<&>\r"))
            .with_child(Element::new("C"));
        let xml = el.to_xml();
        assert_eq!(parse_elements(&xml).unwrap(), vec![el.clone()]);
        let pretty = el.to_xml_pretty();
        let back = parse_elements(&pretty).unwrap();
        assert_eq!(back[0].attr("k"), el.attr("k"));
        assert_eq!(back[0].children[0].text, "<&>\r");
    }

    #[test]
    fn characters_xml_forbids_never_reach_a_document() {
        let mut out = String::new();
        escape_text_into("a\u{1}b\u{FFFF}c\td&", &mut out);
        assert_eq!(out, "a\u{FFFD}b\u{FFFD}c\td&amp;");
        let mut out = String::new();
        escape_attr_into("k\u{1B}[31m\u{0}", &mut out);
        assert_eq!(out, "k\u{FFFD}[31m\u{FFFD}");
        let doc = format!("<R>{out}</R>");
        assert!(parse_elements_bytes(doc.as_bytes()).is_ok());
    }
}
