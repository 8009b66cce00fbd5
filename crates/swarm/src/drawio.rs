//! Maps drawn in draw.io / diagrams.net (mxGraph XML).
//!
//! A map is an uncompressed `.drawio` file (the first page is used) or a bare
//! `<mxGraphModel>`. What the parser keeps:
//!
//! * **shapes** (`mxCell vertex="1"`), with absolute geometry (children of groups and
//!   containers are offset by their parent), style, label, and the annotations of an
//!   `<object>` / `<UserObject>` wrapper ("Edit Data" in draw.io: `type`, `name`,
//!   `component_Claw`, …);
//! * **map-paths**: every edge (`mxCell edge="1"`) as a polyline — source point (or the
//!   centre of the source shape), waypoints, target point (or the centre of the target
//!   shape). An edge annotated `oneway="1"` (or whose style contains `oneway=1`) may only
//!   be travelled from source to target;
//! * the page size (`pageWidth` × `pageHeight`), grown to hold every shape.
//!
//! How shapes become entities is the scenario loader's business ([`crate::scenario`]).

use std::collections::{BTreeMap, HashMap};

use quick_xml::events::Event as XmlEvent;
use quick_xml::Reader;

/// A shape of the map, in absolute map coordinates (top-left corner and size).
#[derive(Clone, Debug, PartialEq)]
pub struct MapShape {
    /// The cell's draw.io id.
    pub id: String,
    /// The label text (may hold HTML).
    pub label: String,
    /// The draw.io style string (`key=value;…`).
    pub style: String,
    /// Left edge, map units (draw.io pixels).
    pub x: f64,
    /// Top edge, map units (y down).
    pub y: f64,
    /// Width, map units.
    pub width: f64,
    /// Height, map units.
    pub height: f64,
    /// Annotations from the `<object>` / `<UserObject>` wrapper (without `id`, `label`).
    pub attrs: BTreeMap<String, String>,
    /// Whether the shape was wrapped in an `<object>` (annotated in draw.io).
    pub annotated: bool,
}

impl MapShape {
    /// Centre of the shape.
    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.width * 0.5, self.y + self.height * 0.5)
    }

    /// Whether the style draws an ellipse.
    pub fn is_ellipse(&self) -> bool {
        self.style
            .split(';')
            .any(|s| s == "ellipse" || s == "shape=ellipse")
    }

    /// Whether the style is a text label.
    pub fn is_text(&self) -> bool {
        self.style
            .split(';')
            .any(|s| s == "text" || s == "edgeLabel")
    }
}

/// A map-path: a polyline drawn as an edge.
#[derive(Clone, Debug, PartialEq)]
pub struct MapPath {
    /// The edge's draw.io id.
    pub id: String,
    /// The polyline's points `(x, y)`, map units: source, waypoints, target.
    pub points: Vec<(f64, f64)>,
    /// Whether it may only be travelled from source to target (`oneway="1"`).
    pub oneway: bool,
}

/// A parsed draw.io map.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DrawioMap {
    /// Page width, map units (`pageWidth`, grown to hold every shape).
    pub width: f64,
    /// Page height, map units (`pageHeight`, grown to hold every shape).
    pub height: f64,
    /// The shapes (vertices), in document order.
    pub shapes: Vec<MapShape>,
    /// The map-paths (edges), in document order.
    pub paths: Vec<MapPath>,
}

#[derive(Debug, Default)]
struct Node {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<Node>,
    has_text: bool,
    line: usize,
}

impl Node {
    fn attr(&self, k: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(a, _)| a == k)
            .map(|(_, v)| v.as_str())
    }
}

fn line_of(text: &str, pos: usize) -> usize {
    text.as_bytes()[..pos.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Why a draw.io map was refused; lines are the XML's, counted from 1.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DrawioError {
    /// XML the reader cannot parse.
    #[error("line {line}: malformed XML: {message}")]
    Malformed {
        /// The line.
        line: usize,
        /// What the XML reader reported.
        message: String,
    },
    /// An attribute the reader cannot parse.
    #[error("line {line}: malformed attribute: {message}")]
    Attribute {
        /// The line.
        line: usize,
        /// What the XML reader reported.
        message: String,
    },
    /// An attribute value the reader cannot unescape.
    #[error("line {line}: malformed attribute value: {message}")]
    AttributeValue {
        /// The line.
        line: usize,
        /// What the XML reader reported.
        message: String,
    },
    /// A closing tag without a matching opening tag.
    #[error("unbalanced XML")]
    Unbalanced,
    /// Elements still open at the end of the text.
    #[error("the XML ends before its elements are closed")]
    Unclosed,
    /// No XML element at all.
    #[error("empty document")]
    Empty,
    /// A geometry attribute that is not a finite number.
    #[error("line {line}: {what}: {key}={value:?} is not a number")]
    NotANumber {
        /// The line.
        line: usize,
        /// The element, e.g. the shape and its id.
        what: String,
        /// The attribute.
        key: String,
        /// Its value.
        value: String,
    },
    /// A compressed diagram (this parser reads only uncompressed ones).
    #[error("the diagram is compressed; in diagrams.net choose File › Properties, untick \"Compressed\" and save again")]
    Compressed,
    /// No `<mxGraphModel>` element: not a draw.io file.
    #[error("no <mxGraphModel> found: is this a draw.io file?")]
    NoModel,
    /// An `<mxGraphModel>` without `<root>` (its line).
    #[error("line {0}: <mxGraphModel> has no <root>")]
    NoRoot(usize),
    /// An `<object>` or `<UserObject>` wrapper without the `<mxCell>` it annotates.
    #[error("line {line}: <{element}> without an <mxCell>")]
    NoCell {
        /// The line.
        line: usize,
        /// The wrapper element's name.
        element: String,
    },
    /// An edge missing an end: neither a shape nor a point at its source or its target.
    #[error("line {line}: {what} has no source or target point (draw it between two points or two shapes)")]
    NoEnds {
        /// The line.
        line: usize,
        /// The edge, with its id.
        what: String,
    },
}

fn parse_tree(text: &str) -> Result<Node, DrawioError> {
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Node> = vec![Node::default()];
    loop {
        let pos = reader.buffer_position() as usize;
        let ev = reader.read_event().map_err(|e| DrawioError::Malformed {
            line: line_of(text, pos),
            message: e.to_string(),
        })?;
        let open = |e: &quick_xml::events::BytesStart<'_>| -> Result<Node, DrawioError> {
            let mut n = Node {
                name: String::from_utf8_lossy(e.name().as_ref()).into_owned(),
                line: line_of(text, pos),
                ..Node::default()
            };
            for a in e.attributes() {
                let a = a.map_err(|err| DrawioError::Attribute {
                    line: line_of(text, pos),
                    message: err.to_string(),
                })?;
                let v = a
                    .unescape_value()
                    .map_err(|err| DrawioError::AttributeValue {
                        line: line_of(text, pos),
                        message: err.to_string(),
                    })?;
                n.attrs.push((
                    String::from_utf8_lossy(a.key.as_ref()).into_owned(),
                    v.into_owned(),
                ));
            }
            Ok(n)
        };
        match ev {
            XmlEvent::Start(e) => {
                let n = open(&e)?;
                stack.push(n);
            }
            XmlEvent::Empty(e) => {
                let n = open(&e)?;
                if let Some(top) = stack.last_mut() {
                    top.children.push(n);
                }
            }
            XmlEvent::End(_) => {
                let Some(n) = stack.pop() else {
                    return Err(DrawioError::Unbalanced);
                };
                match stack.last_mut() {
                    Some(top) => top.children.push(n),
                    None => return Err(DrawioError::Unbalanced),
                }
            }
            XmlEvent::Text(t) if !t.iter().all(|b| b.is_ascii_whitespace()) => {
                if let Some(top) = stack.last_mut() {
                    top.has_text = true;
                }
            }
            XmlEvent::Eof => break,
            _ => {}
        }
    }
    if stack.len() != 1 {
        return Err(DrawioError::Unclosed);
    }
    stack.pop().ok_or(DrawioError::Empty)
}

fn find<'a>(n: &'a Node, name: &str) -> Option<&'a Node> {
    if n.name == name {
        return Some(n);
    }
    n.children.iter().find_map(|c| find(c, name))
}

fn num(n: &Node, k: &str, what: &str) -> Result<f64, DrawioError> {
    match n.attr(k) {
        None => Ok(0.0),
        Some(v) => match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(DrawioError::NotANumber {
                line: n.line,
                what: what.to_string(),
                key: k.to_string(),
                value: v.to_string(),
            }),
        },
    }
}

struct Cell<'a> {
    cell: &'a Node,
    wrapper: Option<&'a Node>,
}

/// Parses a map from draw.io XML text.
pub fn parse(text: &str) -> Result<DrawioMap, DrawioError> {
    let root = parse_tree(text)?;
    let Some(model) = find(&root, "mxGraphModel") else {
        if let Some(d) = find(&root, "diagram") {
            if d.has_text {
                return Err(DrawioError::Compressed);
            }
        }
        return Err(DrawioError::NoModel);
    };
    let Some(groot) = model.children.iter().find(|c| c.name == "root") else {
        return Err(DrawioError::NoRoot(model.line));
    };
    let mut cells: Vec<Cell> = Vec::new();
    for c in &groot.children {
        match c.name.as_str() {
            "mxCell" => cells.push(Cell {
                cell: c,
                wrapper: None,
            }),
            "object" | "UserObject" => {
                let Some(inner) = c.children.iter().find(|k| k.name == "mxCell") else {
                    return Err(DrawioError::NoCell {
                        line: c.line,
                        element: c.name.clone(),
                    });
                };
                cells.push(Cell {
                    cell: inner,
                    wrapper: Some(c),
                })
            }
            _ => {}
        }
    }
    let id_of = |c: &Cell| -> String {
        c.wrapper
            .and_then(|w| w.attr("id"))
            .or(c.cell.attr("id"))
            .unwrap_or("")
            .to_string()
    };
    // Geometry of every vertex, relative to its parent.
    let mut rel: HashMap<String, (f64, f64, f64, f64, String)> = HashMap::new();
    for c in &cells {
        if c.cell.attr("vertex") != Some("1") {
            continue;
        }
        let id = id_of(c);
        let what = format!("shape id={id:?}");
        let (x, y, w, h) = match c.cell.children.iter().find(|k| k.name == "mxGeometry") {
            Some(g) => (
                num(g, "x", &what)?,
                num(g, "y", &what)?,
                num(g, "width", &what)?,
                num(g, "height", &what)?,
            ),
            None => (0.0, 0.0, 0.0, 0.0),
        };
        let parent = c.cell.attr("parent").unwrap_or("").to_string();
        rel.insert(id, (x, y, w, h, parent));
    }
    let absolute = |id: &str| -> (f64, f64, f64, f64) {
        let Some(&(x, y, w, h, ref parent)) = rel.get(id) else {
            return (0.0, 0.0, 0.0, 0.0);
        };
        let (mut ax, mut ay) = (x, y);
        let mut p = parent.clone();
        for _ in 0..64 {
            match rel.get(&p) {
                Some((px, py, _, _, pp)) => {
                    ax += px;
                    ay += py;
                    p = pp.clone();
                }
                None => break,
            }
        }
        (ax, ay, w, h)
    };
    let mut map = DrawioMap {
        width: num(model, "pageWidth", "<mxGraphModel>")?,
        height: num(model, "pageHeight", "<mxGraphModel>")?,
        ..DrawioMap::default()
    };
    for c in &cells {
        let id = id_of(c);
        if c.cell.attr("vertex") == Some("1") {
            let (x, y, width, height) = absolute(&id);
            let mut attrs = BTreeMap::new();
            let mut label = c.cell.attr("value").unwrap_or("").to_string();
            if let Some(w) = c.wrapper {
                for (k, v) in &w.attrs {
                    match k.as_str() {
                        "id" => {}
                        "label" => label = v.clone(),
                        _ => {
                            attrs.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            map.width = map.width.max(x + width);
            map.height = map.height.max(y + height);
            map.shapes.push(MapShape {
                id,
                label,
                style: c.cell.attr("style").unwrap_or("").to_string(),
                x,
                y,
                width,
                height,
                attrs,
                annotated: c.wrapper.is_some(),
            });
        } else if c.cell.attr("edge") == Some("1") {
            let what = format!("edge id={id:?}");
            let g = c.cell.children.iter().find(|k| k.name == "mxGeometry");
            let mut source = None;
            let mut target = None;
            let mut waypoints = Vec::new();
            if let Some(g) = g {
                for k in &g.children {
                    match (k.name.as_str(), k.attr("as")) {
                        ("mxPoint", Some("sourcePoint")) => {
                            source = Some((num(k, "x", &what)?, num(k, "y", &what)?))
                        }
                        ("mxPoint", Some("targetPoint")) => {
                            target = Some((num(k, "x", &what)?, num(k, "y", &what)?))
                        }
                        ("Array", Some("points")) => {
                            for p in k.children.iter().filter(|p| p.name == "mxPoint") {
                                waypoints.push((num(p, "x", &what)?, num(p, "y", &what)?));
                            }
                        }
                        _ => {}
                    }
                }
            }
            let centre_of = |sid: &str| {
                let (x, y, w, h) = absolute(sid);
                (x + w * 0.5, y + h * 0.5)
            };
            if let Some(s) = c.cell.attr("source").filter(|s| rel.contains_key(*s)) {
                source = Some(centre_of(s));
            }
            if let Some(t) = c.cell.attr("target").filter(|t| rel.contains_key(*t)) {
                target = Some(centre_of(t));
            }
            let (Some(s), Some(t)) = (source, target) else {
                return Err(DrawioError::NoEnds {
                    line: c.cell.line,
                    what,
                });
            };
            let mut points = vec![s];
            points.extend(waypoints);
            points.push(t);
            let oneway = c.wrapper.and_then(|w| w.attr("oneway")) == Some("1")
                || c.cell
                    .attr("style")
                    .is_some_and(|s| s.split(';').any(|p| p == "oneway=1"));
            map.paths.push(MapPath { id, points, oneway });
        }
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAP: &str = r##"<mxfile host="app.diagrams.net"><diagram name="Page-1" id="p">
<mxGraphModel pageWidth="400" pageHeight="300"><root>
<mxCell id="0"/><mxCell id="1" parent="0"/>
<mxCell id="w" value="" style="rounded=0;" vertex="1" parent="1">
  <mxGeometry x="0" y="0" width="400" height="10" as="geometry"/></mxCell>
<object label="R1" type="robot" component_Claw="{&quot;range&quot;: 20}" id="r">
  <mxCell style="ellipse;" vertex="1" parent="1">
    <mxGeometry x="40" y="40" width="20" height="20" as="geometry"/></mxCell></object>
<mxCell id="g" value="" style="group" vertex="1" parent="1">
  <mxGeometry x="100" y="100" width="50" height="50" as="geometry"/></mxCell>
<mxCell id="c" value="in group" style="" vertex="1" parent="g">
  <mxGeometry x="10" y="10" width="10" height="10" as="geometry"/></mxCell>
<mxCell id="e" style="endArrow=none;" edge="1" parent="1" source="r">
  <mxGeometry relative="1" as="geometry">
    <mxPoint x="200" y="50" as="targetPoint"/>
    <Array as="points"><mxPoint x="100" y="50"/></Array>
  </mxGeometry></mxCell>
</root></mxGraphModel></diagram></mxfile>"##;

    #[test]
    fn shapes_annotations_groups_and_paths() {
        let m = parse(MAP).unwrap();
        assert_eq!((m.width, m.height), (400.0, 300.0));
        assert_eq!(m.shapes.len(), 4);
        let r = &m.shapes[1];
        assert_eq!(r.label, "R1");
        assert!(r.annotated && r.is_ellipse());
        assert_eq!(r.attrs.get("type").map(String::as_str), Some("robot"));
        assert_eq!(
            r.attrs.get("component_Claw").map(String::as_str),
            Some("{\"range\": 20}")
        );
        let c = &m.shapes[3];
        assert_eq!((c.x, c.y), (110.0, 110.0));
        assert_eq!(m.paths.len(), 1);
        assert_eq!(
            m.paths[0].points,
            vec![(50.0, 50.0), (100.0, 50.0), (200.0, 50.0)]
        );
    }

    #[test]
    fn bad_maps_say_why() {
        let e = parse("<mxfile><diagram>7VxbU</diagram></mxfile>").unwrap_err();
        assert_eq!(e, DrawioError::Compressed);
        assert!(e.to_string().contains("compressed"), "{e}");
        let e = parse("<notamap/>").unwrap_err();
        assert_eq!(e, DrawioError::NoModel);
        assert!(e.to_string().contains("mxGraphModel"), "{e}");
        let bad = MAP.replace("x=\"40\"", "x=\"forty\"");
        let e = parse(&bad).unwrap_err();
        assert!(
            matches!(&e, DrawioError::NotANumber { key, value, .. } if key == "x" && value == "forty"),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(e.contains("forty") && e.contains("line"), "{e}");
        let e = parse("<mxGraphModel><root><mxCell id=\"0\"></root>").unwrap_err();
        assert!(matches!(e, DrawioError::Malformed { .. }), "{e:?}");
        assert!(e.to_string().contains("XML"), "{e}");
    }
}
