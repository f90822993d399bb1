//! The workflows a harness may delegate to (`archmax_workflow_<slug>`): each target is
//! assembled once, at its first use, the way its caller was (model, store, host tools,
//! mounts, skills, the host's extras), and shares the caller's events, prices, image reads
//! and prompt-cache settings. The tool a caller is offered is written from the target's
//! `manual` signature (`runtime.md` §7.1); the target's instructions never reach it.
//!
//! How the caller was assembled is its [`Recipe`](crate::harness::Recipe), which the
//! harness keeps.

use std::sync::Arc;

use archmax_spec::signature::{SignatureEntry, TriggerSignature, signature_for_trigger};
use serde_json::{Value, json};

use crate::error::RunError;
use crate::harness::{Governance, Harness};
use crate::model::types::ToolDef;

/// The entry every caller, the CLI and a host firing use.
pub(crate) const MANUAL: &str = "manual";

impl Harness {
    /// The harness of delegation target `slug`, assembled at its first call and kept.
    pub(crate) fn child_harness(&self, slug: &str) -> Result<Arc<Harness>, RunError> {
        if let Some(h) = self.children.lock().ok().and_then(|m| m.get(slug).cloned()) {
            return Ok(h);
        }
        let mut opts = self.recipe.opts.clone();
        opts.workflow = slug.to_string();
        // Its assembly warnings were the caller's `validate` findings; its turns' events go
        // through the caller's emitter (one `seq` per listener).
        opts.events = Arc::new(crate::events::NoEvents);
        let mut extras = self.recipe.extras.clone();
        extras.governance = Governance::Required;
        let mut child = Harness::assemble_as(opts, extras, true)?;
        child.emitter = self.emitter.clone();
        child.mocks = Arc::clone(&self.mocks);
        let child = Arc::new(child);
        if let Ok(mut m) = self.children.lock() {
            m.insert(slug.to_string(), Arc::clone(&child));
        }
        Ok(child)
    }

    /// The signature of this workflow's `manual` entry, when it has one.
    pub(crate) fn manual_signature(&self) -> Option<TriggerSignature> {
        signature_for_trigger(&self.spec_json, MANUAL)
    }

    /// The definition of delegation tool `name` (`archmax_workflow_<slug>`), or `None` when
    /// its target does not load or has no `manual` entry (a call is refused at dispatch).
    pub(crate) fn delegation_def(&self, name: &str) -> Option<ToolDef> {
        let slug = name.strip_prefix(archmax_kernel::tools::WORKFLOW_TOOL_PREFIX)?;
        let child = self.child_harness(slug).ok()?;
        let sig = child.manual_signature()?;
        Some(ToolDef {
            name: name.to_string(),
            description: delegation_description(slug, child.spec.title.as_deref(), &sig),
            parameters: delegation_schema(&sig.requires),
        })
    }
}

/// `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`.
fn quoted_list(entries: &[SignatureEntry]) -> String {
    let names: Vec<String> = entries.iter().map(|e| format!("'{}'", e.name)).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// The text ending with a period.
fn sentence(text: &str) -> String {
    let t = text.trim();
    if t.ends_with('.') {
        t.to_string()
    } else {
        format!("{t}.")
    }
}

/// The tool description of §7.1: the target's entry description, what a call does, its
/// contract both ways, fan-out and failure handling.
fn delegation_description(slug: &str, title: Option<&str>, sig: &TriggerSignature) -> String {
    let mut parts = Vec::new();
    if let Some(d) = sig.description.as_deref().filter(|d| !d.trim().is_empty()) {
        parts.push(sentence(d));
    }
    let titled = title
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    parts.push(format!(
        "Run the '{slug}' workflow{titled} to completion and return its result. It runs as its own governed machine with its own states and tools; your run stays where it is and continues when the call answers."
    ));
    if !sig.requires.is_empty() {
        parts.push(format!(
            "It requires {}, which the call must supply.",
            quoted_list(&sig.requires)
        ));
    }
    if sig.returns.is_empty() {
        parts.push("The result is the workflow's closing message.".to_string());
    } else {
        parts.push(format!(
            "The result carries {} under 'returns', alongside the workflow's closing message under 'message'. A run that finished without setting some of them returns the ones it set, with a 'note' under 'returns' naming the rest.",
            quoted_list(&sig.returns)
        ));
    }
    parts.push(
        "One call runs it once; call it again (in the same turn) to run several at once."
            .to_string(),
    );
    parts.push("A call whose run fails answers with an error, and that failure fails your current state when you finish, unless a later call of this workflow from the same state succeeds. Each success recovers one failed call: the one it repeats, else the oldest.".to_string());
    parts.join(" ")
}

/// The JSON Schema of the target's `requires`: typed as `signatureJsonSchema` types them,
/// each property described as a seeded locked variable, extra properties allowed.
fn delegation_schema(requires: &[SignatureEntry]) -> Value {
    let mut schema = archmax_spec::signature::signature_json_schema(requires);
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for entry in requires {
            let text = match entry
                .description
                .as_deref()
                .filter(|d| !d.trim().is_empty())
            {
                Some(d) => format!("{} Seeded as a locked run variable.", sentence(d)),
                None => format!(
                    "Required input '{}', seeded as a locked run variable.",
                    entry.name
                ),
            };
            if let Some(p) = props.get_mut(&entry.name).and_then(Value::as_object_mut) {
                p.insert("description".into(), json!(text));
            }
        }
    }
    if let Some(m) = schema.as_object_mut() {
        m.insert("additionalProperties".into(), json!(true));
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, ty: Option<&str>, description: Option<&str>) -> SignatureEntry {
        SignatureEntry {
            name: name.into(),
            ty: ty.map(str::to_string),
            description: description.map(str::to_string),
        }
    }

    #[test]
    fn the_tool_is_written_from_the_manual_signature() {
        let sig = TriggerSignature {
            description: Some("Enrich one order".into()),
            requires: vec![
                entry("order_id", Some("string"), Some("The order to enrich.")),
                entry("quantity", Some("integer"), None),
            ],
            returns: vec![
                entry("enrichment_file", None, None),
                entry("delayed", Some("boolean"), None),
            ],
        };
        assert_eq!(
            delegation_description("enrich-order", Some("Enrichment"), &sig),
            "Enrich one order. Run the 'enrich-order' workflow (Enrichment) to completion and return its result. It runs as its own governed machine with its own states and tools; your run stays where it is and continues when the call answers. It requires 'order_id' and 'quantity', which the call must supply. The result carries 'enrichment_file' and 'delayed' under 'returns', alongside the workflow's closing message under 'message'. A run that finished without setting some of them returns the ones it set, with a 'note' under 'returns' naming the rest. One call runs it once; call it again (in the same turn) to run several at once. A call whose run fails answers with an error, and that failure fails your current state when you finish, unless a later call of this workflow from the same state succeeds. Each success recovers one failed call: the one it repeats, else the oldest."
        );
        assert_eq!(
            delegation_schema(&sig.requires),
            json!({
                "type": "object",
                "properties": {
                    "order_id": { "type": "string", "description": "The order to enrich. Seeded as a locked run variable." },
                    "quantity": { "type": "integer", "description": "Required input 'quantity', seeded as a locked run variable." },
                },
                "required": ["order_id", "quantity"],
                "additionalProperties": true,
            })
        );
        let bare = TriggerSignature {
            description: None,
            requires: vec![],
            returns: vec![],
        };
        assert_eq!(
            delegation_description("leaf", None, &bare),
            "Run the 'leaf' workflow to completion and return its result. It runs as its own governed machine with its own states and tools; your run stays where it is and continues when the call answers. The result is the workflow's closing message. One call runs it once; call it again (in the same turn) to run several at once. A call whose run fails answers with an error, and that failure fails your current state when you finish, unless a later call of this workflow from the same state succeeds. Each success recovers one failed call: the one it repeats, else the oldest."
        );
    }
}
