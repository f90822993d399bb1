//! A YAML 1.2 (core schema) document tree that remembers where every node sits.
//!
//! `saphyr-parser` supplies events with spans; this module folds them into a
//! [`Node`] tree with JavaScript-like scalars (every number is an `f64`, as in the
//! original), rejects what the original rejected (duplicate keys, several documents),
//! and bounds alias expansion so a "billion laughs" document is an error, not an
//! out-of-memory.

use std::collections::HashMap;

use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// A 1-based line and column in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub column: u32,
}

impl Pos {
    fn of(span: &Span) -> Pos {
        Pos {
            line: u32::try_from(span.start.line()).unwrap_or(u32::MAX),
            column: u32::try_from(span.start.col() + 1).unwrap_or(u32::MAX),
        }
    }
}

/// One value of the document, with the position it starts at.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// Where the value starts.
    pub pos: Pos,
}

/// A YAML value read with the core schema.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `~`, `null`, or an empty value.
    Null,
    /// `true` / `false` (YAML 1.2: `yes`/`no` are strings).
    Bool(bool),
    /// Any number; like the original, integers are doubles.
    Number(f64),
    /// A string.
    Str(String),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping in document order; keys are stringified.
    Map(Map),
}

/// A mapping's entries in document order; a large one also indexes its keys, so a
/// lookup (and so validating a document of many keys) stays linear overall.
#[derive(Debug, Clone, Default)]
pub struct Map {
    entries: Vec<Entry>,
    index: Option<HashMap<String, usize>>,
}

/// Mappings up to this many entries are searched in order; larger ones by index.
const INDEX_FROM: usize = 16;

impl Map {
    /// A mapping of `entries` (keys unique).
    pub fn new(entries: Vec<Entry>) -> Self {
        let index = (entries.len() > INDEX_FROM).then(|| {
            entries
                .iter()
                .enumerate()
                .map(|(i, e)| (e.key.clone(), i))
                .collect()
        });
        Map { entries, index }
    }

    fn with_index(entries: Vec<Entry>, index: HashMap<String, usize>) -> Self {
        let index = (entries.len() > INDEX_FROM).then_some(index);
        Map { entries, index }
    }

    /// The entries, in document order.
    pub fn as_slice(&self) -> &[Entry] {
        &self.entries
    }

    /// The entry under `key`.
    pub fn find(&self, key: &str) -> Option<&Entry> {
        match &self.index {
            Some(index) => index.get(key).and_then(|&i| self.entries.get(i)),
            None => self.entries.iter().find(|e| e.key == key),
        }
    }
}

impl std::ops::Deref for Map {
    type Target = [Entry];
    fn deref(&self) -> &[Entry] {
        &self.entries
    }
}

impl PartialEq for Map {
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

/// One key of a mapping.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The key, stringified as the original did (`1:` is `"1"`, a null key `""`).
    pub key: String,
    /// Where the key starts.
    pub key_pos: Pos,
    /// The value.
    pub value: Node,
}

/// Why a text is not a single YAML document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    /// What went wrong.
    pub message: String,
    /// Where, when known.
    pub pos: Option<Pos>,
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pos {
            Some(p) => write!(f, "{} at line {} column {}", self.message, p.line, p.column),
            None => f.write_str(&self.message),
        }
    }
}

/// Upper bound on nodes built, aliases included: a guard against alias bombs.
const MAX_NODES: usize = 1_000_000;
/// Upper bound on nesting: a guard against stack exhaustion.
const MAX_DEPTH: usize = 256;

impl Node {
    /// The mapping entries, when this is a mapping.
    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Map(m) => Some(m.as_slice()),
            _ => None,
        }
    }
    /// The sequence items, when this is a sequence.
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }
    /// The string, when this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    /// True for a null.
    pub fn is_null(&self) -> bool {
        matches!(self.value, Value::Null)
    }
    /// The entry under `key`, when this is a mapping that has it.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }
    /// The whole entry under `key`.
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        match &self.value {
            Value::Map(m) => m.find(key),
            _ => None,
        }
    }
    /// The kind name zod would print for this value.
    pub fn kind(&self) -> &'static str {
        match &self.value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_nan() => "NaN",
            Value::Number(n) if *n == f64::INFINITY => "Infinity",
            Value::Number(n) if *n == f64::NEG_INFINITY => "-Infinity",
            Value::Number(_) => "number",
            Value::Str(_) => "string",
            Value::Seq(_) => "array",
            Value::Map(_) => "object",
        }
    }
    /// The value as JSON (numbers that are whole and safe become integers;
    /// NaN and infinities become `null`, as `JSON.stringify` does).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Number(n) => number_to_json(*n),
            Value::Str(s) => J::String(s.clone()),
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => {
                let mut m = serde_json::Map::new();
                for e in entries.iter() {
                    m.insert(e.key.clone(), e.value.to_json());
                }
                J::Object(m)
            }
        }
    }
}

/// A double as JSON, integral values as integers.
pub fn number_to_json(n: f64) -> serde_json::Value {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if n.fract() == 0.0 && n.abs() <= SAFE {
        // Exact: the value is a whole number within i64 range.
        #[allow(clippy::cast_possible_truncation)]
        let i = n as i64;
        serde_json::Value::from(i)
    } else {
        serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

/// Parses one YAML document. An empty or comment-only text is `Ok(None)`.
pub fn parse(text: &str) -> Result<Option<Node>, YamlError> {
    let mut b = Builder::default();
    let mut parser = Parser::new_from_str(text);
    let mut documents = 0usize;
    let mut root: Option<Node> = None;
    while let Some(ev) = parser.next_event() {
        let (event, span) = ev.map_err(|e| YamlError {
            message: e.info().to_string(),
            pos: Some(Pos {
                line: u32::try_from(e.marker().line()).unwrap_or(u32::MAX),
                column: u32::try_from(e.marker().col() + 1).unwrap_or(u32::MAX),
            }),
        })?;
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(YamlError {
                        message: "a workflow file holds one YAML document; found a second one"
                            .to_string(),
                        pos: Some(Pos::of(&span)),
                    });
                }
            }
            Event::StreamStart | Event::StreamEnd | Event::DocumentEnd | Event::Nothing => {}
            other => {
                if let Some(done) = b.push(other, span)? {
                    root = Some(done);
                }
            }
        }
    }
    Ok(root)
}

enum Frame {
    Seq {
        items: Vec<Node>,
        pos: Pos,
        anchor: usize,
    },
    Map {
        entries: Vec<Entry>,
        /// Key → entry index, kept once the mapping is larger than [`INDEX_FROM`].
        keys: HashMap<String, usize>,
        pending_key: Option<(String, Pos)>,
        pos: Pos,
        anchor: usize,
    },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    nodes: usize,
}

impl Builder {
    fn push(&mut self, event: Event<'_>, span: Span) -> Result<Option<Node>, YamlError> {
        let pos = Pos::of(&span);
        let node = match event {
            Event::Scalar(text, style, anchor, tag) => {
                let forced_str = tag.as_ref().is_some_and(|t| t.suffix == "str");
                let value = if style == ScalarStyle::Plain && !forced_str {
                    resolve_plain(&text)
                } else {
                    Value::Str(text.into_owned())
                };
                let node = Node { value, pos };
                self.count(1, pos)?;
                if anchor > 0 {
                    self.anchors.insert(anchor, node.clone());
                }
                node
            }
            Event::Alias(id) => {
                let node = self.anchors.get(&id).cloned().ok_or_else(|| YamlError {
                    message: "alias refers to an unknown anchor".to_string(),
                    pos: Some(pos),
                })?;
                let size = node_size(&node);
                self.count(size, pos)?;
                Node {
                    value: node.value,
                    pos,
                }
            }
            Event::SequenceStart(anchor, _) => {
                self.open(
                    Frame::Seq {
                        items: Vec::new(),
                        pos,
                        anchor,
                    },
                    pos,
                )?;
                return Ok(None);
            }
            Event::MappingStart(anchor, _) => {
                self.open(
                    Frame::Map {
                        entries: Vec::new(),
                        keys: HashMap::new(),
                        pending_key: None,
                        pos,
                        anchor,
                    },
                    pos,
                )?;
                return Ok(None);
            }
            Event::SequenceEnd => match self.stack.pop() {
                Some(Frame::Seq { items, pos, anchor }) => {
                    self.close(Value::Seq(items), pos, anchor)
                }
                _ => return Err(internal(pos)),
            },
            Event::MappingEnd => match self.stack.pop() {
                Some(Frame::Map {
                    entries,
                    keys,
                    pos,
                    anchor,
                    ..
                }) => self.close(Value::Map(Map::with_index(entries, keys)), pos, anchor),
                _ => return Err(internal(pos)),
            },
            _ => return Ok(None),
        };
        self.attach(node)
    }

    fn count(&mut self, n: usize, pos: Pos) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes > MAX_NODES {
            return Err(YamlError {
                message: format!(
                    "the document expands to more than {MAX_NODES} values (alias expansion limit)"
                ),
                pos: Some(pos),
            });
        }
        Ok(())
    }

    fn open(&mut self, frame: Frame, pos: Pos) -> Result<(), YamlError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(YamlError {
                message: format!("the document nests deeper than {MAX_DEPTH} levels"),
                pos: Some(pos),
            });
        }
        self.count(1, pos)?;
        self.stack.push(frame);
        Ok(())
    }

    fn close(&mut self, value: Value, pos: Pos, anchor: usize) -> Node {
        let node = Node { value, pos };
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        node
    }

    /// Hands a finished node to its parent; returns it when it is the root.
    fn attach(&mut self, node: Node) -> Result<Option<Node>, YamlError> {
        match self.stack.last_mut() {
            None => Ok(Some(node)),
            Some(Frame::Seq { items, .. }) => {
                items.push(node);
                Ok(None)
            }
            Some(Frame::Map {
                entries,
                keys,
                pending_key,
                ..
            }) => {
                match pending_key.take() {
                    None => {
                        let key = key_string(&node).ok_or_else(|| YamlError {
                            message: "a mapping key must be a scalar".to_string(),
                            pos: Some(node.pos),
                        })?;
                        let seen = if entries.len() > INDEX_FROM {
                            keys.contains_key(&key)
                        } else {
                            entries.iter().any(|e| e.key == key)
                        };
                        if seen {
                            return Err(YamlError {
                                message: format!("duplicate key '{key}' in one mapping"),
                                pos: Some(node.pos),
                            });
                        }
                        *pending_key = Some((key, node.pos));
                    }
                    Some((key, key_pos)) => {
                        if entries.len() == INDEX_FROM {
                            keys.extend(
                                entries.iter().enumerate().map(|(i, e)| (e.key.clone(), i)),
                            );
                        }
                        if entries.len() >= INDEX_FROM {
                            keys.insert(key.clone(), entries.len());
                        }
                        entries.push(Entry {
                            key,
                            key_pos,
                            value: node,
                        });
                    }
                }
                Ok(None)
            }
        }
    }
}

fn internal(pos: Pos) -> YamlError {
    YamlError {
        message: "unbalanced YAML structure".to_string(),
        pos: Some(pos),
    }
}

fn node_size(node: &Node) -> usize {
    match &node.value {
        Value::Seq(items) => 1 + items.iter().map(node_size).sum::<usize>(),
        Value::Map(entries) => 1 + entries.iter().map(|e| node_size(&e.value)).sum::<usize>(),
        _ => 1,
    }
}

/// How the original stringified a non-string key.
fn key_string(node: &Node) -> Option<String> {
    Some(match &node.value {
        Value::Null => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => crate::jsfmt::js_number(*n),
        Value::Str(s) => s.clone(),
        Value::Seq(_) | Value::Map(_) => return None,
    })
}

/// YAML 1.2 core-schema resolution of a plain scalar.
fn resolve_plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::Number(f64::INFINITY);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::Number(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Value::Number(f64::NAN),
        _ => {}
    }
    if let Some(oct) = s.strip_prefix("0o")
        && !oct.is_empty()
        && oct.bytes().all(|b| (b'0'..=b'7').contains(&b))
    {
        return Value::Number(radix_value(oct, 8));
    }
    if let Some(hex) = s.strip_prefix("0x")
        && !hex.is_empty()
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return Value::Number(radix_value(hex, 16));
    }
    if is_core_number(s)
        && let Ok(n) = s.parse::<f64>()
    {
        return Value::Number(n);
    }
    Value::Str(s.to_string())
}

fn radix_value(digits: &str, radix: u32) -> f64 {
    digits
        .chars()
        .filter_map(|c| c.to_digit(radix))
        .fold(0.0, |acc, d| acc * f64::from(radix) + f64::from(d))
}

/// `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?`
fn is_core_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let int_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    let int_digits = i - int_start;
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        i += 1;
        let f = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        frac_digits = i - f;
        if int_digits == 0 && frac_digits == 0 {
            return false;
        }
    } else if int_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        let e = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == e {
            return false;
        }
    }
    let _ = frac_digits;
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root(text: &str) -> Node {
        parse(text).expect("parses").expect("not empty")
    }

    #[test]
    fn scalars_follow_the_core_schema() {
        let n = root("a: yes\nb: 0o17\nc: 017\nd: 1.0\ne: .inf\nf: ~\ng:\nh: 'true'\ni: 0x1F\n");
        let j = n.to_json();
        assert_eq!(j["a"], "yes");
        assert_eq!(j["b"], 15);
        assert_eq!(j["c"], 17);
        assert_eq!(j["d"], 1);
        assert_eq!(n.get("e").map(Node::kind), Some("Infinity"));
        assert!(j["f"].is_null());
        assert!(j["g"].is_null());
        assert_eq!(j["h"], "true");
        assert_eq!(j["i"], 31);
    }

    #[test]
    fn positions_are_one_based() {
        let n = root("title: x\nstates:\n  a:\n    title: y\n");
        let states = n.entry("states").expect("states");
        assert_eq!(states.key_pos, Pos { line: 2, column: 1 });
        let a = states.value.entry("a").expect("a");
        assert_eq!(a.key_pos, Pos { line: 3, column: 3 });
        assert_eq!(
            a.value.get("title").map(|t| t.pos),
            Some(Pos {
                line: 4,
                column: 12
            })
        );
    }

    #[test]
    fn duplicate_keys_and_second_documents_fail() {
        let e = parse("a: 1\na: 2\n").expect_err("duplicate");
        assert!(e.message.contains("duplicate key 'a'"), "{e}");
        assert_eq!(e.pos.map(|p| p.line), Some(2));
        assert!(parse("a: 1\n---\nb: 2\n").is_err());
        assert!(parse("a:\n\tb: 1\n").is_err());
    }

    #[test]
    fn a_large_mapping_finds_its_keys_and_its_duplicates_by_index() {
        let mut text: String = (0..40).map(|i| format!("k{i}: {i}\n")).collect();
        let tree = parse(&text).expect("parses").expect("a document");
        assert_eq!(
            tree.get("k0").map(Node::to_json),
            Some(serde_json::json!(0))
        );
        assert_eq!(
            tree.get("k39").map(Node::to_json),
            Some(serde_json::json!(39))
        );
        assert_eq!(tree.get("k40"), None);
        assert_eq!(tree.as_map().map(<[Entry]>::len), Some(40));
        for dup in ["k3", "k20", "k39"] {
            let with = format!("{text}{dup}: again\n");
            let e = parse(&with).expect_err("duplicate");
            assert!(e.message.contains(&format!("duplicate key '{dup}'")), "{e}");
        }
        text.push_str("k40: 40\n");
        assert!(parse(&text).is_ok());
    }

    #[test]
    fn merge_keys_are_literal_and_keys_are_stringified() {
        let n = root("base: &b {x: 1}\nm:\n  <<: *b\n1: one\ntrue: t\n");
        assert!(n.get("m").and_then(|m| m.get("<<")).is_some());
        assert!(n.get("1").is_some());
        assert!(n.get("true").is_some());
    }

    #[test]
    fn empty_text_is_none_and_alias_bombs_are_bounded() {
        assert_eq!(parse("# only a comment\n").expect("ok"), None);
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            bomb.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let e = parse(&bomb).expect_err("bomb");
        assert!(e.message.contains("alias expansion limit"), "{e}");
    }
}
