//! Scoping and deciding a call, the first step of the governed-call pipeline
//! (`governed.rs`): one canonical path per declared path argument, and the kernel's decision
//! on exactly those arguments, for every origin (the agent's calls, a hook's or a script's
//! `tools.*`, a host tool's `context.workspace`).
//!
//! Scoping is where a path is classified once: an agent may name its own session
//! (`<id>/scratchpad/x` is `scratchpad/x`, as the original allows), so the id is stripped
//! *before* the kernel sees the path, and a spelling of a runtime area that a
//! case-insensitive or normalizing file system would serve as that area
//! (`Checkpoints/`, `chec\u{212A}points/`) is written as the area, so the zone rules refuse
//! it whatever the file system underneath.

use archmax_kernel::canonical::canonicalize;
use archmax_kernel::zones::{RUN_INTERNAL, RUN_OFFLOAD};
use archmax_kernel::{CallContext, Decision, Policy, ToolCall};
use serde_json::Value;

/// The runtime areas whose spellings scoping folds to the area's own name.
fn protected_area(segment: &str) -> Option<&'static str> {
    let folded = fold(segment);
    RUN_INTERNAL
        .iter()
        .chain(RUN_OFFLOAD.iter())
        .find(|area| folded == **area)
        .copied()
}

/// Case folding plus the code points HFS+ ignores in names (U+200C–U+200F,
/// U+202A–U+202E, U+206A–U+206F, U+FEFF): two names that fold alike may be one file
/// on some file system.
fn fold(segment: &str) -> String {
    segment
        .chars()
        .filter(|c| {
            !matches!(u32::from(*c), 0x200C..=0x200F | 0x202A..=0x202E | 0x206A..=0x206F | 0xFEFF)
        })
        .flat_map(char::to_uppercase)
        .flat_map(char::to_lowercase)
        .collect()
}

/// The path the kernel and the router both use for `raw`, or `None` when `raw` is
/// already that path (kept as written, so refusals quote what the caller wrote).
/// An escaping path is left alone: the router refuses it.
pub(crate) fn scope_path(raw: &str, session_id: Option<&str>) -> Option<String> {
    let canonical = canonicalize(raw);
    if canonical.escapes {
        return None;
    }
    let mut rel = canonical.path.as_str();
    let mut changed = false;
    if let Some(id) = session_id.filter(|id| !id.is_empty()) {
        if rel == id {
            rel = "";
            changed = true;
        } else if let Some(rest) = rel.strip_prefix(id).and_then(|r| r.strip_prefix('/')) {
            rel = rest;
            changed = true;
        }
    }
    let (first, rest) = rel.split_once('/').unwrap_or((rel, ""));
    let area = protected_area(first).filter(|a| *a != first);
    if !changed && area.is_none() {
        return None;
    }
    let first = area.unwrap_or(first);
    Some(match (first.is_empty(), rest.is_empty()) {
        (true, _) => "/".to_string(),
        (false, true) => first.to_string(),
        (false, false) => format!("{first}/{rest}"),
    })
}

fn scope_value(value: &mut Value, session_id: Option<&str>) {
    match value {
        Value::String(s) => {
            if let Some(scoped) = scope_path(s, session_id) {
                *s = scoped;
            }
        }
        Value::Array(items) => {
            for item in items {
                if let Value::String(s) = item
                    && let Some(scoped) = scope_path(s, session_id)
                {
                    *s = scoped;
                }
            }
        }
        _ => {}
    }
}

/// `args` with every declared path argument of `tool` (and a built-in's alias) scoped.
pub(crate) fn scope_args(
    policy: &Policy,
    tool: &str,
    mut args: Value,
    session_id: Option<&str>,
) -> Value {
    let Some(decl) = policy.tool_paths().of(tool) else {
        return args;
    };
    if let Value::Object(map) = &mut args {
        for p in decl {
            for name in std::iter::once(p.name.as_str()).chain(p.alias) {
                if let Some(v) = map.get_mut(name) {
                    scope_value(v, session_id);
                }
            }
        }
    }
    args
}

/// Scopes a call's paths and decides it: the returned arguments are the ones the
/// kernel decided on, and the only ones the call may run with.
pub(crate) fn decide(
    policy: &Policy,
    session_id: &str,
    tool: &str,
    args: Value,
    ctx: &CallContext<'_>,
) -> (Value, Decision) {
    if policy.tool_paths().native(tool).is_some() {
        return policy.decide_native(&ToolCall::new(tool, &args), ctx);
    }
    let args = scope_args(policy, tool, args, Some(session_id));
    let verdict = policy.decide(&ToolCall::new(tool, &args), ctx);
    (args, verdict)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::scope_path;

    #[test]
    fn every_spelling_of_an_own_record_is_scoped_to_the_area() {
        let id = Some("g1");
        for (raw, want) in [
            ("g1/checkpoints/state.json", Some("checkpoints/state.json")),
            ("./g1/checkpoints/x", Some("checkpoints/x")),
            ("/g1//checkpoints/x", Some("checkpoints/x")),
            ("scratchpad/../g1/_specs/h.json", Some("_specs/h.json")),
            ("g1/Checkpoints/x", Some("checkpoints/x")),
            ("CHECKPOINTS", Some("checkpoints")),
            ("g1/chec\u{212A}points/x", Some("checkpoints/x")),
            ("checkpoint\u{17F}/x", Some("checkpoints/x")),
            ("check\u{200C}points/x", Some("checkpoints/x")),
            ("Large_Tool_Results/r", Some("large_tool_results/r")),
            ("g1", Some("/")),
            ("g1/scratchpad/n.md", Some("scratchpad/n.md")),
            // Already the canonical path, or nothing the runtime owns: kept as written.
            ("checkpoints/x", None),
            ("./scratchpad/n.md", None),
            ("Scratchpad/n.md", None),
            ("G1/checkpoints/x", None),
            ("g10/checkpoints/x", None),
            ("sessions/g1/checkpoints/x", None),
            ("../g1/checkpoints/x", None),
        ] {
            assert_eq!(scope_path(raw, id).as_deref(), want, "{raw}");
        }
        assert_eq!(scope_path("g1/x", None), None);
    }
}
