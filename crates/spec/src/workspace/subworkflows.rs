//! The sub-workflow pass: every `archmax_workflow_<slug>` a reachable state may
//! call must name a loadable workflow with a `manual` entry, at most three delegations
//! deep; a call the runtime refuses as a cycle is reported where it would be made.
//!
//! The walk follows the runtime's dispatch chain: the delegations below the validated
//! workflow, which is not among them. So a workflow may call itself once (its child runs)
//! and the child's own call of it is the one refused; `a → b → a` runs, and that `a`'s
//! call of `b` is refused. A refused call is a warning (the run goes on without it, as with
//! a disabled target): the spec is not wrong, its recursion stops there.

use super::{Context, load};
use crate::diagnostic::Diagnostic;
use crate::grammar::is_slug;
use crate::yaml::{Node, Value};

/// The prefix of a delegation tool.
pub const WORKFLOW_TOOL_PREFIX: &str = "archmax_workflow_";
/// Delegations below the root a chain may reach.
pub const MAX_DEPTH: usize = 3;

/// The states reachable from the start states (via transitions and `on_error`),
/// in declaration order.
fn reachable(tree: &Node) -> Vec<&crate::yaml::Entry> {
    let Some(states_node) = tree.get("states") else {
        return Vec::new();
    };
    let states = states_node.as_map().unwrap_or(&[]);
    let mut seen: std::collections::HashSet<&str> = states
        .iter()
        .filter(|e| {
            e.value
                .get("triggers")
                .and_then(Node::as_map)
                .is_some_and(|t| !t.is_empty())
        })
        .map(|e| e.key.as_str())
        .collect();
    let mut queue: Vec<&str> = seen.iter().copied().collect();
    while let Some(slug) = queue.pop() {
        let Some(st) = states_node.entry(slug) else {
            continue;
        };
        let edges = st
            .value
            .get("transitions")
            .and_then(Node::as_seq)
            .unwrap_or(&[]);
        let targets = edges
            .iter()
            .filter_map(|t| t.get("to").and_then(Node::as_str))
            .chain(st.value.get("on_error").and_then(Node::as_str));
        for t in targets {
            if !seen.contains(t) && states_node.entry(t).is_some() {
                seen.insert(t);
                queue.push(t);
            }
        }
    }
    states
        .iter()
        .filter(|e| seen.contains(e.key.as_str()))
        .collect()
}

/// Delegation targets named by a list of allow entries.
fn targets(list: Option<&Node>) -> Vec<String> {
    list.and_then(Node::as_seq)
        .into_iter()
        .flatten()
        .filter_map(|i| i.as_str().or_else(|| i.get("tool").and_then(Node::as_str)))
        .filter_map(|t| t.strip_prefix(WORKFLOW_TOOL_PREFIX))
        .map(str::to_string)
        .collect()
}

fn disabled(tree: &Node) -> bool {
    tree.get("disabled")
        .is_some_and(|d| !matches!(d.value, Value::Null | Value::Bool(false)))
}

fn declares_manual(tree: &Node) -> bool {
    super::trigger_ids(tree).iter().any(|id| id == "manual")
}

/// `root → a → b → t`: the path from the validated workflow to the call of `t`.
fn path_to(root: &str, chain: &[String], t: &str) -> String {
    let mut all: Vec<&str> = vec![root];
    all.extend(chain.iter().map(String::as_str));
    all.push(t);
    all.join(" → ")
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    walk(ctx, ctx.tree, &mut Vec::new(), out);
}

/// The calls `tree` makes, `chain` being the delegations down to it (empty for the
/// validated workflow itself).
fn walk(ctx: &Context<'_>, tree: &Node, chain: &mut Vec<String>, out: &mut Vec<Diagnostic>) {
    let depth = chain.len();
    let current = chain
        .last()
        .map_or(ctx.workflow, String::as_str)
        .to_string();
    // A workflow met again down its own recursion: what its targets are was said where it
    // was met first, and the walk went on from there; what this path decides for its own
    // calls (a cycle, the depth) is all that is new.
    let repeat = depth > 0 && (current == ctx.workflow || chain[..depth - 1].contains(&current));
    let always = targets(tree.get("tools").and_then(|t| t.get("allow_always")));
    for state in reachable(tree) {
        let mut names = targets(state.value.get("tools").and_then(|t| t.get("allow")));
        names.extend(always.iter().cloned());
        names.sort();
        names.dedup();
        for t in names {
            let tool = format!("{WORKFLOW_TOOL_PREFIX}{t}");
            let place = if depth == 0 {
                format!("state '{}' allows '{tool}'", state.key)
            } else {
                format!(
                    "workflow '{current}' (state '{}') allows '{tool}'",
                    state.key
                )
            };
            let mut say = |severity_error: bool, msg: String| {
                if repeat {
                    return;
                }
                out.push(if severity_error {
                    Diagnostic::error("states", msg)
                } else {
                    Diagnostic::warning("states", msg)
                });
            };
            if !is_slug(&t) {
                say(
                    true,
                    format!(
                        "{place}, whose target '{t}' is not hyphen-separated kebab-case; a delegation names a workflow by its directory slug."
                    ),
                );
                continue;
            }
            if chain.contains(&t) {
                let path = path_to(ctx.workflow, chain, &t);
                out.push(Diagnostic::warning(
                    "states",
                    format!(
                        "{place}, which is already running in this chain ({path}), so the runtime refuses that call and the recursion stops there."
                    ),
                ));
                continue;
            }
            let loaded = load(ctx.files, &t).filter(|l| l.usable);
            let Some(loaded) = loaded else {
                say(
                    true,
                    format!(
                        "{place}, but 'workflows/{t}/workflow.yaml' is missing or has no valid machine spec."
                    ),
                );
                continue;
            };
            let Some(child) = loaded.tree.as_ref() else {
                continue;
            };
            if !declares_manual(child) {
                say(
                    true,
                    format!(
                        "{place}, but '{t}' declares no 'manual' trigger, so it has no state to start in. Declare 'triggers: {{ manual: }}' on its entry state."
                    ),
                );
                continue;
            }
            if disabled(child) {
                say(
                    false,
                    format!(
                        "{place}, but '{t}' is disabled: every call to it is refused at runtime until its 'disabled' flag is removed."
                    ),
                );
            }
            if depth + 1 > MAX_DEPTH {
                let path = path_to(ctx.workflow, chain, &t);
                out.push(Diagnostic::error(
                    "states",
                    format!(
                        "{place}, reaching {} levels ({path}), beyond the dispatcher's default bound of {MAX_DEPTH}.",
                        depth + 1
                    ),
                ));
                continue;
            }
            if repeat {
                continue;
            }
            chain.push(t);
            walk(ctx, child, chain, out);
            chain.pop();
        }
    }
}
