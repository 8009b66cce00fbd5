//! Behaviour rules: the FutRob rules XML, validated at load time and compiled to a compact
//! form that evaluates against a [`PredicateSet`] without allocating.
//!
//! ```
//! use simrob_futrob::rules::RuleSet;
//! use simrob_futrob::{Predicate, PredicateSet};
//!
//! let xml = r#"<RuleSet>
//!   <Rule name="look"><def><not><value term="ballInSight"/></not></def><action name="findBall"/></Rule>
//!   <Rule name="go"><def><value term="ballInSight"/></def><action name="walk" distance="30"/></Rule>
//! </RuleSet>"#;
//! let rules = RuleSet::parse(xml, "keeper.xml").unwrap();
//! let mut world = PredicateSet::default();
//! assert_eq!(rules.evaluate(&world).unwrap().0, 0);
//! world.set(Predicate::of(simrob_futrob::ObjectKind::Ball, simrob_futrob::Family::InSight), true);
//! let (index, action) = rules.evaluate(&world).unwrap();
//! assert_eq!((index, action.to_string()), (1, "walk distance=30".to_string()));
//! ```

use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;

use crate::names::{Action, ActionKind, Predicate};

/// The value of all 36 predicates at one instant, one bit each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct PredicateSet(pub u64);

impl PredicateSet {
    /// The value of `p`.
    #[inline]
    pub fn get(&self, p: Predicate) -> bool {
        self.0 >> p.bit() & 1 == 1
    }

    /// Sets `p` to `v`.
    #[inline]
    pub fn set(&mut self, p: Predicate, v: bool) {
        if v {
            self.0 |= 1 << p.bit();
        } else {
            self.0 &= !(1 << p.bit());
        }
    }

    /// The true predicates, in bit order.
    pub fn true_names(&self) -> Vec<&'static str> {
        Predicate::all()
            .filter(|p| self.get(*p))
            .map(|p| p.name())
            .collect()
    }
}

/// A rules file that cannot be loaded: the file, the line and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct RulesError {
    /// File name as given to the parser.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// What is wrong.
    pub message: String,
}

/// A letter-case difference the loader accepted (names match ignoring case).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseWarning {
    /// 1-based line.
    pub line: u32,
    /// The name as written.
    pub written: String,
    /// The canonical name.
    pub canonical: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Value(u32),
    Not(u32),
    And(u32, u32),
    Or(u32, u32),
}

/// One rule as loaded: its name, description, condition and action.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// `name` attribute (empty if absent).
    pub name: String,
    /// `desc` attribute (empty if absent).
    pub desc: String,
    /// The action sent to the action handler when the condition holds.
    pub action: Action,
    /// Line of the `<Rule>` element.
    pub line: u32,
    root: u32,
}

/// A loaded, validated rule set.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleSet {
    rules: Vec<Rule>,
    nodes: Vec<Node>,
    children: Vec<u32>,
    warnings: Vec<CaseWarning>,
}

/// Deepest nesting accepted (refusing deeper files bounds the recursion).
pub const MAX_DEPTH: usize = 256;

struct El {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<El>,
    line: u32,
}

/// Where a text's lines start, found once: the line of a byte position is then a binary
/// search, not a count from the start (which made a file of n rules take n² time).
struct Lines(Vec<usize>);

impl Lines {
    fn new(text: &str) -> Self {
        Lines(
            text.bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i)
                .collect(),
        )
    }

    /// The 1-based line of byte `pos`.
    fn of(&self, pos: usize) -> u32 {
        u32::try_from(1 + self.0.partition_point(|&nl| nl < pos)).unwrap_or(u32::MAX)
    }
}

fn parse_tree(text: &str, file: &str) -> Result<El, RulesError> {
    let lines = Lines::new(text);
    let err = |pos: usize, message: String| RulesError {
        file: file.to_string(),
        line: lines.of(pos),
        message,
    };
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<El> = Vec::new();
    let mut root: Option<El> = None;
    let start_el = |e: &BytesStart, pos: usize| -> Result<El, RulesError> {
        let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
        let mut attrs = Vec::new();
        for a in e.attributes() {
            let a = a.map_err(|x| err(pos, format!("malformed attribute in <{name}>: {x}")))?;
            let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
            let value = a
                .unescape_value()
                .map_err(|x| err(pos, format!("bad attribute value in <{name}>: {x}")))?
                .into_owned();
            attrs.push((key, value));
        }
        Ok(El {
            name,
            attrs,
            children: Vec::new(),
            line: lines.of(pos),
        })
    };
    loop {
        let pos = reader.buffer_position() as usize;
        let ev = reader.read_event().map_err(|e| {
            err(
                reader.buffer_position() as usize,
                format!("not well-formed XML: {e}"),
            )
        })?;
        match ev {
            Event::Start(e) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(err(pos, format!("nesting deeper than {MAX_DEPTH}")));
                }
                if root.is_some() && stack.is_empty() {
                    return Err(err(pos, "more than one root element".into()));
                }
                stack.push(start_el(&e, pos)?);
            }
            Event::Empty(e) => {
                if root.is_some() && stack.is_empty() {
                    return Err(err(pos, "more than one root element".into()));
                }
                let el = start_el(&e, pos)?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => root = Some(el),
                }
            }
            Event::End(_) => {
                let Some(el) = stack.pop() else {
                    return Err(err(pos, "unexpected closing tag".into()));
                };
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => root = Some(el),
                }
            }
            Event::Text(t) => {
                let raw = String::from_utf8_lossy(t.as_ref()).into_owned();
                if !raw.trim().is_empty() {
                    let lead = raw.len() - raw.trim_start().len();
                    let where_ = stack
                        .last()
                        .map(|e| e.name.as_str())
                        .unwrap_or("the document");
                    return Err(err(
                        pos + lead,
                        format!("unexpected text {:?} in <{where_}>", raw.trim()),
                    ));
                }
            }
            Event::CData(_) => return Err(err(pos, "unexpected CDATA".into())),
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(RulesError {
            file: file.into(),
            line: open.line,
            message: format!("<{}> is never closed", open.name),
        });
    }
    root.ok_or_else(|| err(text.len(), "empty file: expected <RuleSet>".into()))
}

impl RuleSet {
    /// Parses and validates a rules file. `file` names it in error messages.
    ///
    /// Refused, with the line: XML that is not well formed; a root other than `<RuleSet>`;
    /// anything but `<Rule>` in it; a `<Rule>` without exactly one `<def>` and one
    /// `<action>` (or with other children or attributes than `name`/`desc`); a `<def>` or
    /// `<not>` without exactly one child; an `<and>`/`<or>` with fewer than two; a
    /// `<value>` without `term` or with an unknown predicate; an unknown action; an unknown
    /// parameter; a parameter value that is not a number or is out of range.
    pub fn parse(text: &str, file: &str) -> Result<RuleSet, RulesError> {
        let root = parse_tree(text, file)?;
        let mut set = RuleSet {
            rules: Vec::new(),
            nodes: Vec::new(),
            children: Vec::new(),
            warnings: Vec::new(),
        };
        let err = |line: u32, message: String| RulesError {
            file: file.to_string(),
            line,
            message,
        };
        if root.name != "RuleSet" {
            return Err(err(
                root.line,
                format!("the root element must be <RuleSet>, not <{}>", root.name),
            ));
        }
        if let Some((k, _)) = root.attrs.first() {
            return Err(err(
                root.line,
                format!("<RuleSet> takes no attributes (found {k:?})"),
            ));
        }
        for rule in &root.children {
            if rule.name != "Rule" {
                return Err(err(
                    rule.line,
                    format!("<RuleSet> may only contain <Rule>, not <{}>", rule.name),
                ));
            }
            let mut name = String::new();
            let mut desc = String::new();
            for (k, v) in &rule.attrs {
                match k.as_str() {
                    "name" => name = v.clone(),
                    "desc" => desc = v.clone(),
                    _ => {
                        return Err(err(
                            rule.line,
                            format!("unknown attribute {k:?} on <Rule> (only name and desc)"),
                        ))
                    }
                }
            }
            let label = if name.is_empty() {
                String::from("(unnamed)")
            } else {
                format!("{name:?}")
            };
            let defs: Vec<&El> = rule.children.iter().filter(|c| c.name == "def").collect();
            let actions: Vec<&El> = rule
                .children
                .iter()
                .filter(|c| c.name == "action")
                .collect();
            if let Some(other) = rule
                .children
                .iter()
                .find(|c| c.name != "def" && c.name != "action")
            {
                return Err(err(
                    other.line,
                    format!(
                        "rule {label}: <{}> is not allowed in <Rule> (only <def> and <action>)",
                        other.name
                    ),
                ));
            }
            if defs.len() != 1 || actions.len() != 1 {
                return Err(err(
                    rule.line,
                    format!(
                        "rule {label}: needs exactly one <def> and one <action> (found {} and {})",
                        defs.len(),
                        actions.len()
                    ),
                ));
            }
            let def = defs[0];
            if let Some((k, _)) = def.attrs.first() {
                return Err(err(
                    def.line,
                    format!("rule {label}: <def> takes no attributes (found {k:?})"),
                ));
            }
            if def.children.len() != 1 {
                return Err(err(
                    def.line,
                    format!(
                        "rule {label}: <def> needs exactly one child expression (found {})",
                        def.children.len()
                    ),
                ));
            }
            let root_node = set.compile(&def.children[0], &label, file)?;
            let action = parse_action(actions[0], &label, file, &mut set.warnings)?;
            set.rules.push(Rule {
                name,
                desc,
                action,
                line: rule.line,
                root: root_node,
            });
        }
        for w in &set.warnings {
            tracing::warn!(target: "futrob::rules", file, line = w.line, written = %w.written, canonical = w.canonical, "name matched ignoring letter case");
        }
        Ok(set)
    }

    fn compile(&mut self, el: &El, label: &str, file: &str) -> Result<u32, RulesError> {
        let err = |message: String| RulesError {
            file: file.to_string(),
            line: el.line,
            message: format!("rule {label}: {message}"),
        };
        let node = match el.name.as_str() {
            "value" => {
                if !el.children.is_empty() {
                    return Err(err("<value> takes no children".into()));
                }
                let mut term = None;
                for (k, v) in &el.attrs {
                    if k == "term" {
                        term = Some(v);
                    } else {
                        return Err(err(format!(
                            "unknown attribute {k:?} on <value> (only term)"
                        )));
                    }
                }
                let term =
                    term.ok_or_else(|| err("<value> needs a term=\"predicate\" attribute".into()))?;
                let (p, case_differs) = Predicate::lookup(term)
                    .ok_or_else(|| err(format!("unknown predicate {term:?}")))?;
                if case_differs {
                    self.warnings.push(CaseWarning {
                        line: el.line,
                        written: term.clone(),
                        canonical: p.name(),
                    });
                }
                Node::Value(p.bit())
            }
            "not" | "and" | "or" => {
                if let Some((k, _)) = el.attrs.first() {
                    return Err(err(format!(
                        "<{}> takes no attributes (found {k:?})",
                        el.name
                    )));
                }
                let n = el.children.len();
                if el.name == "not" && n != 1 {
                    return Err(err(format!("<not> needs exactly one child (found {n})")));
                }
                if el.name != "not" && n < 2 {
                    return Err(err(format!(
                        "<{}> needs two or more children (found {n})",
                        el.name
                    )));
                }
                let mut kids = Vec::with_capacity(n);
                for c in &el.children {
                    kids.push(self.compile(c, label, file)?);
                }
                if el.name == "not" {
                    Node::Not(kids[0])
                } else {
                    let start = self.children.len() as u32;
                    self.children.extend(kids);
                    if el.name == "and" {
                        Node::And(start, n as u32)
                    } else {
                        Node::Or(start, n as u32)
                    }
                }
            }
            other => {
                return Err(err(format!(
                    "<{other}> is not an expression (expected <value>, <not>, <and> or <or>)"
                )))
            }
        };
        self.nodes.push(node);
        Ok(self.nodes.len() as u32 - 1)
    }

    /// The rules in file order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Names the loader accepted only by ignoring letter case.
    pub fn case_warnings(&self) -> &[CaseWarning] {
        &self.warnings
    }

    /// Every predicate the rules read.
    pub fn predicates_used(&self) -> Vec<Predicate> {
        let mut v: Vec<Predicate> = self
            .nodes
            .iter()
            .filter_map(|n| match n {
                Node::Value(b) => Predicate::from_bit(*b),
                _ => None,
            })
            .collect();
        v.sort();
        v.dedup();
        v
    }

    #[inline]
    fn eval(&self, node: u32, w: u64) -> bool {
        match self.nodes[node as usize] {
            Node::Value(b) => w >> b & 1 == 1,
            Node::Not(c) => !self.eval(c, w),
            Node::And(s, n) => self.children[s as usize..(s + n) as usize]
                .iter()
                .all(|c| self.eval(*c, w)),
            Node::Or(s, n) => self.children[s as usize..(s + n) as usize]
                .iter()
                .any(|c| self.eval(*c, w)),
        }
    }

    /// Whether rule `index`'s condition holds.
    pub fn rule_holds(&self, index: usize, world: &PredicateSet) -> bool {
        self.rules
            .get(index)
            .is_some_and(|r| self.eval(r.root, world.0))
    }

    /// The first rule (in file order) whose condition holds, and its action; `None` when no
    /// rule holds (the action handler then keeps what it is doing).
    #[inline]
    pub fn evaluate(&self, world: &PredicateSet) -> Option<(usize, &Action)> {
        self.rules
            .iter()
            .enumerate()
            .find(|(_, r)| self.eval(r.root, world.0))
            .map(|(i, r)| (i, &r.action))
    }
}

fn parse_action(
    el: &El,
    label: &str,
    file: &str,
    warnings: &mut Vec<CaseWarning>,
) -> Result<Action, RulesError> {
    let err = |message: String| RulesError {
        file: file.to_string(),
        line: el.line,
        message: format!("rule {label}: {message}"),
    };
    if !el.children.is_empty() {
        return Err(err("<action> takes no children".into()));
    }
    let name = el
        .attrs
        .iter()
        .find(|(k, _)| k == "name")
        .map(|(_, v)| v)
        .ok_or_else(|| err("<action> needs a name=\"action\" attribute".into()))?;
    let (kind, case_differs) =
        ActionKind::lookup(name).ok_or_else(|| err(format!("unknown action {name:?}")))?;
    if case_differs {
        warnings.push(CaseWarning {
            line: el.line,
            written: name.clone(),
            canonical: kind.name(),
        });
    }
    let mut action = Action::new(kind);
    for (k, v) in el.attrs.iter().filter(|(k, _)| k != "name") {
        let Some(spec) = kind
            .params()
            .iter()
            .find(|s| s.name.eq_ignore_ascii_case(k))
        else {
            let accepted = match kind.params().first() {
                Some(s) => format!("it accepts only {}", s.name),
                None => "it takes no parameters".to_string(),
            };
            return Err(err(format!(
                "action {} has no parameter {k:?} ({accepted})",
                kind.name()
            )));
        };
        if action.param.is_some() {
            return Err(err(format!("parameter {} given twice", spec.name)));
        }
        let value: f64 = v
            .trim()
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite())
            .ok_or_else(|| {
                err(format!(
                    "{} {}={v:?} is not a number",
                    kind.name(),
                    spec.name
                ))
            })?;
        if value < spec.min || value > spec.max {
            return Err(err(format!(
                "{} {}={value} is out of range [{}, {}]",
                kind.name(),
                spec.name,
                spec.min,
                spec.max
            )));
        }
        action.param = Some(value);
    }
    Ok(action)
}

#[cfg(test)]
mod tests {
    use super::Lines;

    #[test]
    fn a_byte_is_on_the_line_its_newlines_say() {
        let text = "a\nbc\n\nd";
        let lines = Lines::new(text);
        let want = [1, 1, 2, 2, 2, 3, 4, 4];
        for (pos, line) in want.iter().enumerate() {
            assert_eq!(lines.of(pos), *line, "byte {pos}");
        }
        assert_eq!(Lines::new("").of(0), 1);
    }
}
