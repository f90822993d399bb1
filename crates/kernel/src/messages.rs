//! The model-facing refusal texts, each in one place. The wording is contract:
//! hosts and prompts match on it.

use crate::paths::CallPath;

/// `'{tool}' on '{path}'`, plus ` ({arg})` when the tool declares several path arguments.
pub(crate) fn subject(tool: &str, p: &CallPath, multi: bool) -> String {
    if multi {
        format!("'{tool}' on '{}' ({})", p.raw, p.arg)
    } else {
        format!("'{tool}' on '{}'", p.raw)
    }
}

pub(crate) fn path_argument(tool: &str, arg: &str) -> String {
    format!(
        "[workflow] BLOCKED: '{tool}' argument '{arg}' must be a path or a list of paths (strings); it holds something else, so the path rules cannot read it."
    )
}

pub(crate) fn governance_plane(tool: &str, target: &str) -> String {
    format!(
        "[workflow] BLOCKED: '{tool}' on '{target}' addresses the authoring plane ('workflows/'), which holds machine specs, grading rubrics, hook scripts, and test cases. The harness reads it through the authoring backend; nothing running inside a run can."
    )
}

pub(crate) fn skill_only(tool: &str, path: &str) -> String {
    format!(
        "[workflow] BLOCKED: '{tool}' may only execute scripts that live in a skill bundle, and '{path}' is not in one. Scripts the agent runs belong in 'skills/<capability>/scripts/'; lifecycle hook scripts live on the authoring plane and are run by the harness, never by the agent."
    )
}

pub(crate) fn reply_only(tool: &str) -> String {
    format!(
        "[workflow] BLOCKED: '{tool}' cannot run — this run is parked and a person is deciding what happens next. Reply to them in text; you cannot act until the run resumes."
    )
}

pub(crate) const EVAL: &str = "[workflow] BLOCKED: an unnamespaced `eval` tool is never governed — use `archmax_eval`, the runtime's own code interpreter.";

pub(crate) fn read_only_zone(subject: &str, mount: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} targets a read-only mount ('{mount}'). Authored content is mounted read-only — write your files under 'scratchpad/…' (persisted per-session in the session store)."
    )
}

pub(crate) fn runtime_internal(subject: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} targets a harness-internal run area ('checkpoints/', 'artifacts/', '_specs/'). These hold the runtime's own bookkeeping and are not part of your workspace — use 'scratchpad/…' for your own files."
    )
}

pub(crate) fn session_store(subject: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} targets the session store ('sessions/'), which holds every session's records and is not part of your workspace — use 'scratchpad/…' for your own files."
    )
}

pub(crate) fn runtime_managed(subject: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} targets a runtime-owned area ('large_tool_results/', 'conversation_history/'), where the runtime offloads oversized context. You may read those files; write your own under 'scratchpad/…'."
    )
}

fn listed(prefix: &str, names: &[String], none: &str) -> String {
    if names.is_empty() {
        none.to_string()
    } else {
        format!("{prefix}{}.", names.join(", "))
    }
}

pub(crate) fn skills_here(enabled: &[String]) -> String {
    listed(
        "Skills enabled here: ",
        enabled,
        "No skill is enabled in this state.",
    )
}

pub(crate) fn mounts_here(enabled: &[String]) -> String {
    listed(
        "Mounts available here: ",
        enabled,
        "This state has no governed mount.",
    )
}

pub(crate) fn skill_forbidden(subject: &str, slug: &str, denied_by: &str, here: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} belongs to the skill '{slug}', which {denied_by}. A denial beats every grant. {here}"
    )
}

pub(crate) fn skill_not_allowed(subject: &str, slug: &str, state: &str, here: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} belongs to the skill '{slug}', which is not enabled in state '{state}'. {here}"
    )
}

pub(crate) fn mount_read_only(subject: &str, name: &str, state: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} targets the mount '{name}', which state '{state}' may read but not write ('access: read'). Write your files under 'scratchpad/…' instead."
    )
}

pub(crate) fn mount_forbidden(subject: &str, name: &str, denied_by: &str, here: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} is under the mount '{name}', which {denied_by}. A denial beats every grant. {here}"
    )
}

pub(crate) fn mount_not_allowed(subject: &str, name: &str, state: &str, here: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} is under the mount '{name}', which state '{state}' does not have. The path exists; this state was not given it. {here}"
    )
}

pub(crate) fn inherited_skill(subject: &str, slug: &str, source: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} belongs to the skill '{slug}', which workflow '{source}' denies in every state it delegates to (skills.forbid_always). A denial beats every grant."
    )
}

pub(crate) fn inherited_mount(subject: &str, name: &str, source: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} is under the mount '{name}', which workflow '{source}' denies in every state it delegates to (mounts.forbid_always). A denial beats every grant."
    )
}

pub(crate) fn forbidden(tool: &str, on: &str, by: &str, key: &str, guard: &str) -> String {
    format!(
        "[workflow] BLOCKED: '{tool}'{on} is forbidden by {by} ({key}{guard}). A denial beats every grant, so no allow entry here permits it."
    )
}

pub(crate) fn not_allowed(
    tool: &str,
    on: &str,
    to: &str,
    state: &str,
    allowed: &str,
    terminal: bool,
) -> String {
    let next = if terminal {
        "This state ends automatically once you finish — do not call archmax_advance."
    } else {
        "Complete the current state's work and call archmax_advance when ready to move on."
    };
    format!(
        "[workflow] BLOCKED: '{tool}'{on}{to} is not allowed in state '{state}'.\nAllowed in '{state}': {allowed}.\n{next}"
    )
}

pub(crate) fn unresolved(tool: &str, state: &str, reference: &str, detail: &str) -> String {
    format!(
        "[workflow] FAILED: '{tool}' in state '{state}' is guarded by '{reference}', which could not be resolved — {detail}. The run cannot continue against a guard the harness cannot evaluate."
    )
}

pub(crate) fn transition_requires(from: &str, missing: &[String]) -> String {
    let names: Vec<String> = missing.iter().map(|n| format!("'{n}'")).collect();
    let (verb, pronoun) = if missing.len() == 1 {
        ("is", "it")
    } else {
        ("are", "them")
    };
    format!(
        "cannot leave '{from}' yet: {} {verb} not set. Record {pronoun} with archmax_set_variables, then advance.",
        names.join(", ")
    )
}

pub(crate) fn transition_no_edge(from: &str, to: &str, edges: &[String]) -> String {
    let tail = if edges.is_empty() {
        "No transitions from this state.".to_string()
    } else {
        format!("Valid target slugs: {}.", edges.join(", "))
    };
    format!("cannot advance from '{from}' to '{to}'. {tail}")
}
