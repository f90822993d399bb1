//! Layer 2: document rules that need more than one field. Errors; run only on a
//! shape-clean spec; a spec that breaks one does not load.

use std::collections::BTreeMap;

use crate::diagnostic::Diagnostic;
use crate::grammar::scan_references;
use crate::model::{GuardedTool, State, ToolEntry, Workflow};

/// Message when `states` is empty (also the shape message when it is missing).
pub const EMPTY_STATES: &str = "Machine spec is missing or has empty 'states'";

/// Runs every document rule in the original's order.
pub fn check(wf: &Workflow) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if wf.states.is_empty() {
        out.push(Diagnostic::error("states", EMPTY_STATES));
        return out;
    }
    for (slug, st) in &wf.states {
        per_state(wf, slug, st, &mut out);
    }
    let root_tools = wf.tools.as_ref();
    if let Some(list) = root_tools.and_then(|t| t.allow_always.as_ref()) {
        entries(
            list,
            "tools.allow_always",
            "tools.allow_always",
            true,
            &mut out,
        );
    }
    if let Some(list) = root_tools.and_then(|t| t.forbid_always.as_ref()) {
        entries(
            list,
            "tools.forbid_always",
            "tools.forbid_always",
            false,
            &mut out,
        );
    }
    lock_owners(wf, &mut out);
    trigger_ownership(wf, &mut out);
    if wf
        .states
        .values()
        .all(|s| s.triggers.as_ref().is_none_or(|t| t.is_empty()))
    {
        out.push(Diagnostic::error(
            "states",
            "Workflow has no start state; declare a 'triggers' mapping on the state a run \
             starts in (e.g. 'triggers: { manual: }').",
        ));
    }
    if let Some(n) = wf.tests.as_ref().and_then(|t| t.max_concurrency)
        && n > 1
    {
        out.push(Diagnostic::error(
            "tests.maxConcurrency",
            format!(
                "'tests.maxConcurrency' above 1 is not supported (it is {n}): cases run \
                     sequentially. Set it to 1 or remove the field."
            ),
        ));
    }
    out
}

fn per_state(wf: &Workflow, slug: &str, st: &State, out: &mut Vec<Diagnostic>) {
    let base = format!("states.{slug}");
    for (i, t) in st.edges().iter().enumerate() {
        let path = format!("{base}.transitions.{i}");
        match wf.states.get(&t.to) {
            None => out.push(Diagnostic::error(
                &format!("{path}.to"),
                format!("State '{slug}' transitions to undefined state '{}'", t.to),
            )),
            Some(target) if !t.is_described() => {
                if st.is_human() {
                    out.push(Diagnostic::error(
                        &format!("{path}.description"),
                        format!(
                            "Human state '{slug}' has an undescribed transition to '{}'; on a \
                             human state the description is the button the person presses. \
                             Give it a description.",
                            t.to
                        ),
                    ));
                } else if !target.has_instructions() {
                    out.push(Diagnostic::error(
                        &format!("{path}.description"),
                        format!(
                            "State '{slug}' has an undescribed transition to '{}', which has no \
                             'instructions' to route on. Describe when to take the edge, or give \
                             '{}' instructions.",
                            t.to, t.to
                        ),
                    ));
                }
            }
            Some(_) => {}
        }
    }
    if let Some(target) = &st.on_error
        && !wf.states.contains_key(target)
    {
        out.push(Diagnostic::error(
            &format!("{base}.on_error"),
            format!("State '{slug}' on_error routes to undefined state '{target}'"),
        ));
    }
    if let Some(before) = &st.before
        && before.hooks().iter().any(|h| h.max_iterations().is_some())
    {
        out.push(Diagnostic::error(
            &format!("{base}.before"),
            format!(
                "State '{slug}' 'before' hook declares 'max_iterations', but before hooks \
                     are ok/veto only: a correction budget applies to 'after' hooks."
            ),
        ));
    }
    let who = format!("State '{slug}'");
    if let Some(list) = st.tools.as_ref().and_then(|t| t.allow.as_ref()) {
        entries(list, &format!("{base}.tools.allow"), &who, true, out);
    }
    if let Some(list) = st.tools.as_ref().and_then(|t| t.forbid.as_ref()) {
        entries(list, &format!("{base}.tools.forbid"), &who, false, out);
    }
    if let Some(locks) = &st.locks {
        if st.is_human() {
            out.push(Diagnostic::error(
                &format!("{base}.locks"),
                format!(
                    "Human state '{slug}' declares 'locks', but a person routes a human state \
                     and no agent writes variables there; move the locks to the agent state \
                     that sets them."
                ),
            ));
        }
        for (i, name) in locks.iter().enumerate() {
            if name == "trigger" || name == "title" {
                out.push(Diagnostic::error(
                    &format!("{base}.locks.{i}"),
                    format!(
                        "State '{slug}' locks '{name}', a built-in variable no state can own \
                         ('trigger' is set by the harness, 'title' belongs to the whole run)."
                    ),
                ));
            }
        }
    }
}

/// Guard references and `*` in one allow or forbid list.
fn entries(list: &[ToolEntry], path: &str, who: &str, allow: bool, out: &mut Vec<Diagnostic>) {
    for (i, entry) in list.iter().enumerate() {
        let at = format!("{path}.{i}");
        if let Some(g) = entry.guarded() {
            for glob in guard_globs(g) {
                for r in scan_references(glob) {
                    if !r.escaped && r.problem.is_some() {
                        out.push(Diagnostic::error(
                            &at,
                            format!(
                                "{who} guards '{}' on '{glob}', which is not a valid variable \
                                 reference — use ${{{{name}}}} or ${{{{name.path.to.value}}}}.",
                                g.tool
                            ),
                        ));
                    }
                }
            }
        }
        if allow && entry.tool() == "*" {
            out.push(Diagnostic::error(
                &at,
                "'*' is not a tool name a grant may use; it belongs in a 'forbid' or \
                 'forbid_always' list, where it denies every tool.",
            ));
        } else if allow
            && entry.tool().contains('*')
            && let Some(server) = crate::grammar::mcp_server(entry.tool())
        {
            out.push(Diagnostic::error(
                &at,
                format!(
                    "'{}' is not a tool name a grant may use: a grant names no '*'. Grant every \
                     tool of the server with 'mcp__{server}', or name each tool \
                     ('mcp__{server}__<tool>'); a pattern belongs in a 'forbid' list.",
                    entry.tool()
                ),
            ));
        }
    }
}

/// Every glob of an entry's `args` and `paths`.
pub(crate) fn guard_globs(g: &GuardedTool) -> impl Iterator<Item = &str> {
    g.args
        .iter()
        .flat_map(|a| a.values())
        .flat_map(|l| l.iter())
        .chain(g.paths.iter().flat_map(|l| l.iter()))
}

fn lock_owners(wf: &Workflow, out: &mut Vec<Diagnostic>) {
    let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
    for (slug, st) in &wf.states {
        for (i, name) in st.locks.iter().flatten().enumerate() {
            match owner.get(name.as_str()) {
                Some(first) if first != slug => out.push(Diagnostic::error(
                    &format!("states.{slug}.locks.{i}"),
                    format!(
                        "State '{slug}' locks '{name}', which state '{first}' already owns; a \
                         variable has one owner. Keep it in one 'locks' list and route the other \
                         states back to the owner to change it."
                    ),
                )),
                Some(_) => {}
                None => {
                    owner.insert(name, slug);
                }
            }
        }
    }
}

fn trigger_ownership(wf: &Workflow, out: &mut Vec<Diagnostic>) {
    let mut owners: Vec<(&str, Vec<&str>)> = Vec::new();
    for (slug, st) in &wf.states {
        for id in st.triggers.iter().flat_map(|t| t.keys()) {
            match owners.iter_mut().find(|(k, _)| *k == id) {
                Some((_, list)) => list.push(slug),
                None => owners.push((id, vec![slug])),
            }
        }
    }
    for (id, states) in owners {
        if states.len() > 1 {
            let why = if id == "manual" {
                "a manual start state must be unambiguous"
            } else {
                "a tool trigger must name a unique start state"
            };
            out.push(Diagnostic::error(
                "states",
                format!(
                    "Multiple states declare trigger '{id}' ({}); {why}",
                    states.join(", ")
                ),
            ));
        }
    }
}
