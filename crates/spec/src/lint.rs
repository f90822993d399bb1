//! Layer 3: findings about a shape-clean spec that never block loading.
//! Mostly warnings; the human-state rules and a forbidden `archmax_advance` are
//! errors that fail `validate` but still let the runtime load the spec.

use crate::diagnostic::Diagnostic;
use crate::grammar::scan_references;
use crate::model::{
    MountAccess, MountGrant, State, StateType, ToolEntry, TransitionType, Workflow,
};
use crate::rules::guard_globs;
use crate::shape::DECLARATION_KEYS;

/// The built-in file tools whose only path accesses are read/list/write/remove,
/// with at least one write or remove.
const WRITING_FILE_TOOLS: &[&str] = &[
    "write_file",
    "edit_file",
    "copy_file",
    "move_file",
    "remove_file",
];

/// Runs every lint in the original's order.
pub fn check(wf: &Workflow) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    if wf.instructions.is_none() {
        out.push(Diagnostic::warning(
            "instructions",
            "No top-level 'instructions', so the workflow ships no standing guidance for the \
             whole run; add an 'instructions' block (conventions, house rules, what done means).",
        ));
    }
    if wf.disabled == Some(true) {
        out.push(Diagnostic::warning(
            "disabled",
            "This workflow is disabled ('disabled: true'): it starts no new turns, but parked \
             sessions can still be decided, replied to and delivered to.",
        ));
    }
    forbidden_skills(wf, &mut out);
    forbidden_mounts(wf, &mut out);
    forbidden_advance(wf, &mut out);
    for (slug, st) in &wf.states {
        per_state(wf, slug, st, &mut out);
    }
    guard_variables(wf, &mut out);
    out
}

fn root_skill_grants(wf: &Workflow) -> &[String] {
    wf.skills
        .as_ref()
        .and_then(|s| s.allow_always.as_deref())
        .unwrap_or(&[])
}

fn root_mount_grants(wf: &Workflow) -> &[MountGrant] {
    wf.mounts
        .as_ref()
        .and_then(|m| m.allow_always.as_deref())
        .unwrap_or(&[])
}

fn forbidden_skills(wf: &Workflow, out: &mut Vec<Diagnostic>) {
    let Some(forbid) = wf.skills.as_ref().and_then(|s| s.forbid_always.as_ref()) else {
        return;
    };
    for slug in forbid {
        let granted = root_skill_grants(wf).contains(slug)
            || wf.states.values().any(|s| {
                s.skills
                    .as_ref()
                    .and_then(|k| k.allow.as_ref())
                    .is_some_and(|a| a.contains(slug))
            });
        if granted {
            out.push(Diagnostic::warning(
                "skills.forbid_always",
                format!(
                    "'skills.forbid_always' denies skill '{slug}' in every state while a grant \
                     names it; a denial beats every grant, so the grant reaches nothing. Drop one \
                     of the two."
                ),
            ));
        }
    }
}

fn forbidden_mounts(wf: &Workflow, out: &mut Vec<Diagnostic>) {
    let Some(forbid) = wf.mounts.as_ref().and_then(|m| m.forbid_always.as_ref()) else {
        return;
    };
    for name in forbid {
        let granted = root_mount_grants(wf).iter().any(|g| g.name() == name)
            || wf.states.values().any(|s| {
                s.mounts
                    .as_ref()
                    .and_then(|m| m.allow.as_ref())
                    .is_some_and(|a| a.iter().any(|g| g.name() == name))
            });
        if granted {
            out.push(Diagnostic::warning(
                "mounts.forbid_always",
                format!(
                    "'mounts.forbid_always' denies mount '{name}' in every state while a grant \
                     names it; a denial beats every grant, so the grant reaches nothing. Drop one \
                     of the two."
                ),
            ));
        }
    }
}

fn forbidden_advance(wf: &Workflow, out: &mut Vec<Diagnostic>) {
    let denies = wf
        .tools
        .as_ref()
        .and_then(|t| t.forbid_always.as_ref())
        .is_some_and(|f| f.iter().any(|e| e.tool() == "archmax_advance"));
    if denies && wf.states.values().any(|s| !s.is_terminal()) {
        out.push(Diagnostic::error(
            "tools.forbid_always",
            "'tools.forbid_always' denies 'archmax_advance', the only way a state moves, while \
             states declare transitions: no run could ever leave its first state.",
        ));
    }
}

fn per_state(wf: &Workflow, slug: &str, st: &State, out: &mut Vec<Diagnostic>) {
    let base = format!("states.{slug}");
    if let (Some(m), Some(root)) = (
        &st.model,
        wf.settings.as_ref().and_then(|s| s.model.as_ref()),
    ) && m == root
    {
        out.push(Diagnostic::warning(
            &format!("{base}.model"),
            format!(
                "State '{slug}' declares model '{m}', which is already 'settings.model'; the \
                     entry changes nothing. Drop it."
            ),
        ));
    }
    state_skills(wf, slug, st, out);
    state_mounts(wf, slug, st, out);
    state_tools(slug, st, out);
    let edges = st.edges();
    if !st.is_human() && edges.len() > 1 && !st.has_instructions() {
        out.push(Diagnostic::warning(
            &format!("{base}.instructions"),
            format!(
                "State '{slug}' has {} outgoing transitions but no 'instructions'; say what the \
                 agent does here before it picks an edge.",
                edges.len()
            ),
        ));
    }
    if st.kind == Some(StateType::Human) {
        human_state(slug, st, out);
    }
    let mut seen: Vec<&str> = Vec::new();
    for name in st.requires.iter().flatten() {
        if seen.contains(&name.as_str()) {
            out.push(Diagnostic::warning(
                &format!("{base}.requires"),
                format!("State '{slug}' lists '{name}' twice in requires."),
            ));
        }
        seen.push(name);
    }
    let mut seen: Vec<&str> = Vec::new();
    for name in st.locks.iter().flatten() {
        if seen.contains(&name.as_str()) {
            out.push(Diagnostic::warning(
                &format!("{base}.locks"),
                format!("State '{slug}' lists '{name}' twice in locks."),
            ));
        }
        seen.push(name);
    }
    scratchpad_writes(slug, st, out);
    for (id, decl) in st.triggers.iter().flatten() {
        for key in decl.iter().flat_map(|d| d.host.keys()) {
            if !DECLARATION_KEYS.contains(&key.as_str()) {
                out.push(Diagnostic::warning(
                    &format!("{base}.triggers.{id}"),
                    format!(
                        "Trigger '{id}' declares unknown key '{key}', which the SDK ignores. The \
                         keys it reads are 'session', 'message', 'connection', 'description', \
                         'requires', 'returns'."
                    ),
                ));
            }
        }
    }
}

fn state_skills(wf: &Workflow, slug: &str, st: &State, out: &mut Vec<Diagnostic>) {
    let field = format!("states.{slug}.skills.allow");
    let root = root_skill_grants(wf);
    let allow = st.skills.as_ref().and_then(|k| k.allow.as_ref());
    let forbid = st
        .skills
        .as_ref()
        .and_then(|k| k.forbid.as_deref())
        .unwrap_or(&[]);
    if let Some(allow) = allow {
        if !root.is_empty() && allow.is_empty() {
            out.push(Diagnostic::warning(
                &field,
                format!(
                    "State '{slug}' declares 'skills: {{ allow: [] }}', which reads like a deny \
                     but subtracts nothing: 'skills.allow_always' enables {} in every state. \
                     'skills: {{ forbid: [...] }}' is what subtracts.",
                    root.join(", ")
                ),
            ));
        }
        for s in allow {
            if root.contains(s) {
                out.push(Diagnostic::warning(
                    &field,
                    format!(
                        "State '{slug}' enables skill '{s}', which 'skills.allow_always' already \
                         enables in every state; the entry grants nothing. Drop it."
                    ),
                ));
            }
        }
        for s in allow {
            if forbid.contains(s) {
                out.push(Diagnostic::warning(
                    &field,
                    format!(
                        "State '{slug}' both enables and forbids skill '{s}'; the denial wins, so \
                         drop one of the two."
                    ),
                ));
            }
        }
    }
    let root_forbid = wf
        .skills
        .as_ref()
        .and_then(|k| k.forbid_always.as_deref())
        .unwrap_or(&[]);
    for s in forbid {
        let enabled =
            allow.is_some_and(|a| a.contains(s)) || root.contains(s) || root_forbid.contains(s);
        if !enabled {
            out.push(Diagnostic::warning(
                &format!("states.{slug}.skills.forbid"),
                format!(
                    "State '{slug}' forbids skill '{s}', which nothing enables here; the entry \
                     subtracts nothing."
                ),
            ));
        }
    }
}

fn state_mounts(wf: &Workflow, slug: &str, st: &State, out: &mut Vec<Diagnostic>) {
    let field = format!("states.{slug}.mounts.allow");
    let root = root_mount_grants(wf);
    let Some(allow) = st.mounts.as_ref().and_then(|m| m.allow.as_ref()) else {
        return;
    };
    let forbid = st
        .mounts
        .as_ref()
        .and_then(|m| m.forbid.as_deref())
        .unwrap_or(&[]);
    if !root.is_empty() && allow.is_empty() {
        let names: Vec<&str> = root.iter().map(MountGrant::name).collect();
        out.push(Diagnostic::warning(
            &field,
            format!(
                "State '{slug}' declares 'mounts: {{ allow: [] }}', which reads like a deny but \
                 subtracts nothing: 'mounts.allow_always' reaches {} in every state. 'mounts: {{ \
                 forbid: [...] }}' is what subtracts.",
                names.join(", ")
            ),
        ));
    }
    for g in allow {
        let repeats = root.iter().find(|r| r.name() == g.name()).is_some_and(|r| {
            // A state may narrow a writable root grant to read; that entry does work.
            !(g.access() == Some(MountAccess::Read) && r.access() != Some(MountAccess::Read))
        });
        if repeats {
            out.push(Diagnostic::warning(
                &field,
                format!(
                    "State '{slug}' enables mount '{}', which 'mounts.allow_always' already \
                     enables in every state; the entry grants nothing. Drop it.",
                    g.name()
                ),
            ));
        }
    }
    for g in allow {
        if forbid.iter().any(|f| f == g.name()) {
            out.push(Diagnostic::warning(
                &field,
                format!(
                    "State '{slug}' both enables and forbids mount '{}'; the denial wins, so drop \
                     one of the two.",
                    g.name()
                ),
            ));
        }
    }
}

fn state_tools(slug: &str, st: &State, out: &mut Vec<Diagnostic>) {
    let Some(tools) = &st.tools else { return };
    let (Some(allow), Some(forbid)) = (&tools.allow, &tools.forbid) else {
        return;
    };
    for f in forbid {
        if f.tool() != "*" && allow.iter().any(|a| a.tool() == f.tool()) {
            out.push(Diagnostic::warning(
                &format!("states.{slug}.tools.allow"),
                format!(
                    "State '{slug}' both allows and forbids '{}'; the denial wins, so the grant \
                     reaches nothing.",
                    f.tool()
                ),
            ));
        }
    }
}

fn human_state(slug: &str, st: &State, out: &mut Vec<Diagnostic>) {
    let base = format!("states.{slug}");
    if !st.has_instructions() {
        out.push(Diagnostic::error(
            &format!("{base}.instructions"),
            format!(
                "Human state '{slug}' must declare 'instructions' describing the decision to \
                 present to the person."
            ),
        ));
    }
    if st.is_terminal() {
        out.push(Diagnostic::error(
            &format!("{base}.transitions"),
            format!(
                "Human state '{slug}' must declare at least one outgoing transition: the choices \
                 a person picks from."
            ),
        ));
    }
    for (i, t) in st.edges().iter().enumerate() {
        if t.to == slug {
            out.push(Diagnostic::error(
                &format!("{base}.transitions.{i}.to"),
                format!(
                    "Human state '{slug}' declares a transition to itself; a decision must move \
                     the session (use a 'refine' edge to the state that reworks it)."
                ),
            ));
        }
    }
    for ty in [
        TransitionType::Approve,
        TransitionType::Reject,
        TransitionType::Refine,
    ] {
        let n = st.edges().iter().filter(|t| t.kind == Some(ty)).count();
        if n > 1 {
            out.push(Diagnostic::error(
                &format!("{base}.transitions"),
                format!(
                    "Human state '{slug}' declares {n} '{}' transitions; a labeled decision type \
                     must map to a single target.",
                    ty.as_str()
                ),
            ));
        }
    }
    for (phase, hook) in [("before", &st.before), ("after", &st.after)] {
        if hook.is_some() {
            out.push(Diagnostic::error(
                &format!("{base}.{phase}"),
                format!(
                    "Human state '{slug}' declares a '{phase}' hook, which can never run: a \
                     person decides a human state and no agent acts in it. Remove it."
                ),
            ));
        }
    }
}

fn scratchpad_writes(slug: &str, st: &State, out: &mut Vec<Diagnostic>) {
    for entry in st.tools.iter().flat_map(|t| t.allow.iter().flatten()) {
        let Some(g) = entry.guarded() else { continue };
        if !WRITING_FILE_TOOLS.contains(&g.tool.as_str()) {
            continue;
        }
        let globs: Vec<&str> = guard_globs(g).collect();
        if globs.is_empty()
            || !globs
                .iter()
                .all(|p| p.starts_with("scratchpad/") || *p == "scratchpad")
        {
            continue;
        }
        let listed: Vec<String> = globs.iter().map(|p| format!("'{p}'")).collect();
        out.push(Diagnostic::warning(
            &format!("states.{slug}.tools.allow"),
            format!(
                "State '{slug}' allows '{}' on {}, which is in the always-open 'scratchpad/' \
                 area: those writes are permitted in every state that is granted '{}', so the \
                 guard narrows nothing. Guard a governed run path instead (e.g. '{slug}.json').",
                g.tool,
                listed.join(", "),
                g.tool
            ),
        ));
    }
}

/// Every variable name a state or trigger `requires`.
fn required_names(wf: &Workflow) -> Vec<&str> {
    let mut names = Vec::new();
    for st in wf.states.values() {
        names.extend(st.requires.iter().flatten().map(String::as_str));
        for decl in st.triggers.iter().flat_map(|t| t.values()).flatten() {
            names.extend(decl.requires.iter().flatten().map(|e| e.name()));
        }
    }
    names
}

fn guard_variables(wf: &Workflow, out: &mut Vec<Diagnostic>) {
    let required = required_names(wf);
    let mut check = |list: &[ToolEntry], field: &str, who: &str, always: bool| {
        for entry in list {
            let Some(g) = entry.guarded() else { continue };
            for glob in guard_globs(g) {
                for r in scan_references(glob) {
                    if r.escaped || r.problem.is_some() {
                        continue;
                    }
                    if r.name == "trigger" || required.contains(&r.name.as_str()) {
                        continue;
                    }
                    let tail = if always {
                        " An 'allow_always' guard binds in every state, so the value must exist \
                         before the first call."
                    } else {
                        ""
                    };
                    out.push(Diagnostic::warning(
                        field,
                        format!(
                            "{who} guards '{}' on '{glob}', but no state requires '{}'. Supply it \
                             through the 'variables' option or a trigger's 'requires', or add it \
                             to a state's 'requires', so the guard can resolve.{tail}",
                            g.tool, r.name
                        ),
                    ));
                }
            }
        }
    };
    for (slug, st) in &wf.states {
        let who = format!("State '{slug}'");
        let field = format!("states.{slug}.tools.allow");
        if let Some(t) = &st.tools {
            check(t.allow.as_deref().unwrap_or(&[]), &field, &who, false);
            check(
                t.forbid.as_deref().unwrap_or(&[]),
                &format!("states.{slug}.tools.forbid"),
                &who,
                false,
            );
        }
    }
    if let Some(t) = &wf.tools {
        check(
            t.allow_always.as_deref().unwrap_or(&[]),
            "tools.allow_always",
            "tools.allow_always",
            true,
        );
        check(
            t.forbid_always.as_deref().unwrap_or(&[]),
            "tools.forbid_always",
            "tools.forbid_always",
            true,
        );
    }
}
