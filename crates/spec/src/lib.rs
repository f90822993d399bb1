//! `archmax-spec`: the `workflow.yaml` language of the archmax harness.
//!
//! ```
//! let text = "states:\n  start:\n    triggers: { manual: }\n    transitions:\n      - to: done\n  done:\n    instructions: Say goodbye.\n";
//! let v = archmax_spec::validate_spec(text);
//! assert!(v.ok);
//! let spec = v.spec.expect("typed spec");
//! assert_eq!(spec.states.len(), 2);
//! // An undescribed edge routes on its target's instructions; the only finding is
//! // the advice to give the workflow standing instructions.
//! assert_eq!(v.lint.len(), 1);
//! assert_eq!(v.lint[0].field.as_deref(), Some("instructions"));
//! ```
//!
//! Layers, as in the original: the YAML is read (L0), its shape checked (L1), its
//! document rules checked (L2, only on a clean shape) and linted (L3, only on a
//! clean shape). [`validate_workflow`] adds the checks that need the rest of a
//! workspace (skills, mounts, hook scripts, sub-workflows, cases).
//!
//! This crate does no IO except through the [`Files`] trait; [`DiskFiles`] is the
//! one implementation that touches the file system.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::panic))]

pub mod case;
pub mod code_description;
pub mod diagnostic;
pub mod disk;
pub mod grammar;
pub mod graph;
mod graph_layout;
mod graph_model;
mod graph_svg;
pub mod hash;
pub mod jsfmt;
pub mod lint;
pub mod model;
pub mod reference;
pub mod rules;
pub mod runtime_contract;
mod shape;
pub mod signature;
pub mod workspace;
pub mod yaml;

pub use diagnostic::{Diagnostic, Severity};
pub use disk::DiskFiles;
pub use model::Workflow;
pub use workspace::{
    Files, ScriptParser, ScriptSyntaxError, ValidateOptions, ValidationResult, validate_workflow,
};

use serde::Serialize;
use ts_rs::TS;

/// The result of [`validate_spec`]: shape and document rules (`schema`) and lint.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct SpecValidation {
    /// No schema error (lint errors do not count).
    pub ok: bool,
    /// The typed spec, when the shape is clean (present even if a document rule failed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<Workflow>,
    /// Shape (L1) and document-rule (L2) errors, and YAML errors.
    pub schema: Vec<Diagnostic>,
    /// Lint findings (L3).
    pub lint: Vec<Diagnostic>,
    /// `schema` then `lint`.
    pub diagnostics: Vec<Diagnostic>,
}

/// What [`read_spec`] found in a text: the positioned tree and the typed spec.
#[derive(Debug, Clone)]
pub struct ReadSpec {
    /// The YAML tree, when the text is a mapping.
    pub tree: Option<yaml::Node>,
    /// The validation result.
    pub validation: SpecValidation,
}

/// Why a text is not a machine spec at all.
pub const NOT_A_MAPPING: &str = "machine spec is not a YAML mapping";

/// Validates one `workflow.yaml` text: never fails, never panics.
pub fn validate_spec(text: &str) -> SpecValidation {
    read_spec(text).validation
}

/// Like [`validate_spec`], also returning the YAML tree for later passes.
pub fn read_spec(text: &str) -> ReadSpec {
    let text = strip_cr(text);
    let tree = match yaml::parse(&text) {
        Ok(Some(node)) if node.as_map().is_some() => node,
        Ok(other) => {
            let kind = other.as_ref().map_or("empty", yaml::Node::kind);
            let d = Diagnostic::error("", format!("{NOT_A_MAPPING} (found {kind})"))
                .at(other.map(|n| n.pos));
            return ReadSpec {
                tree: None,
                validation: finish(None, vec![d], Vec::new()),
            };
        }
        Err(e) => {
            let d = Diagnostic::error("", format!("{NOT_A_MAPPING}: {}", e.message)).at(e.pos);
            return ReadSpec {
                tree: None,
                validation: finish(None, vec![d], Vec::new()),
            };
        }
    };
    let (spec, issues) = shape::walk(&tree);
    let mut schema: Vec<Diagnostic> = issues
        .into_iter()
        .map(shape::Issue::into_diagnostic)
        .collect();
    let mut lint_found = Vec::new();
    if let Some(wf) = &spec {
        schema.extend(rules::check(wf));
        lint_found = lint::check(wf);
    }
    for d in schema.iter_mut().chain(lint_found.iter_mut()) {
        if d.line.is_none() {
            *d = d
                .clone()
                .at(locate(&tree, d.field.as_deref().unwrap_or("")));
        }
    }
    ReadSpec {
        validation: finish(spec, schema, lint_found),
        tree: Some(tree),
    }
}

fn finish(
    spec: Option<Workflow>,
    schema: Vec<Diagnostic>,
    lint: Vec<Diagnostic>,
) -> SpecValidation {
    let ok = !schema.iter().any(Diagnostic::is_error);
    let diagnostics = schema.iter().chain(lint.iter()).cloned().collect();
    SpecValidation {
        ok,
        spec,
        schema,
        lint,
        diagnostics,
    }
}

/// Parses a spec: the typed workflow when it loads (shape and document rules clean).
pub fn parse_machine_spec(text: &str) -> Result<Workflow, Vec<Diagnostic>> {
    let v = validate_spec(text);
    match (v.ok, v.spec) {
        (true, Some(spec)) => Ok(spec),
        _ => Err(v.schema),
    }
}

/// Drops every `\r` that precedes `\n` or the end of the text, as the original did.
fn strip_cr(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\r') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\r' && matches!(chars.peek(), None | Some('\n')) {
            continue;
        }
        out.push(c);
    }
    std::borrow::Cow::Owned(out)
}

/// The position of a dotted field path in the tree: the key for a mapping entry,
/// the item for a sequence element. Keys containing dots are matched greedily.
pub fn locate(root: &yaml::Node, field: &str) -> Option<yaml::Pos> {
    if field.is_empty() {
        return Some(root.pos);
    }
    let segs: Vec<&str> = field.split('.').collect();
    locate_in(root, &segs, root.pos)
}

fn locate_in(node: &yaml::Node, segs: &[&str], here: yaml::Pos) -> Option<yaml::Pos> {
    let Some((first, _)) = segs.split_first() else {
        return Some(here);
    };
    if let Some(items) = node.as_seq() {
        let i: usize = first.parse().ok()?;
        let item = items.get(i)?;
        return locate_in(item, &segs[1..], item.pos);
    }
    node.as_map()?;
    for take in (1..=segs.len()).rev() {
        let key = segs[..take].join(".");
        if let Some(e) = node.entry(&key) {
            return locate_in(&e.value, &segs[take..], e.key_pos);
        }
    }
    // The path names a key that is absent: point at the object that lacks it.
    Some(here)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_points_at_keys_and_items() {
        let tree = yaml::parse("states:\n  a.b:\n    transitions:\n      - to: x\n")
            .ok()
            .flatten()
            .expect("doc");
        assert_eq!(locate(&tree, "states.a.b").map(|p| p.line), Some(2));
        assert_eq!(
            locate(&tree, "states.a.b.transitions.0.to").map(|p| p.line),
            Some(4)
        );
        assert_eq!(
            locate(&tree, "states.a.b.transitions.0.description").map(|p| p.line),
            Some(4)
        );
    }

    #[test]
    fn crlf_is_read_like_lf() {
        let v = validate_spec("states:\r\n  a:\r\n    triggers: { manual: }\r\n");
        assert!(v.ok, "{:?}", v.schema);
    }
}
