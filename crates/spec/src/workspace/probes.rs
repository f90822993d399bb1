//! The per-state pass of `validateWorkflow`: slug, hook scripts, and the static
//! governance probes over each allow entry.
//!
//! The probes read allow entries statically; the kernel that decides calls at run
//! time arrives with the governance issue. They catch grants that can never take
//! effect: paths on the authoring plane or in runtime-owned
//! areas, scripts outside every skill bundle, tools denied outright.

use super::Context;
use super::hooks::check_phase;
use super::skills::SkillBundle;
use crate::diagnostic::Diagnostic;
use crate::grammar::is_slug;
use crate::yaml::Node;

/// Areas of a session the runtime owns: no tool may write there.
const RUNTIME_AREAS: &[&str] = &[
    "checkpoints/",
    "artifacts/",
    "_specs/",
    "large_tool_results/",
    "conversation_history/",
];

/// Built-in tools that write or remove, and the arguments that do it.
const MUTATING: &[(&str, &[&str])] = &[
    ("write_file", &["file_path"]),
    ("edit_file", &["file_path"]),
    ("remove_file", &["file_path"]),
    ("copy_file", &["destination"]),
    ("move_file", &["source", "destination"]),
];

/// Slug, hooks and probes for every state, in declaration order.
pub(crate) fn per_state(ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let bundles = ctx.bundles;
    let root_skills = bare_names(ctx.node("skills.allow_always"));
    for e in ctx.states() {
        let slug = e.key.as_str();
        if slug.trim().is_empty() {
            out.push(ctx.at(Diagnostic::error(
                "states",
                "A state is declared with an empty slug, so nothing can route to it. Name it in \
                 kebab-case (e.g. 'identify-case'); a human-readable label belongs in 'title'.",
            )));
        } else if !is_slug(slug) {
            out.push(ctx.at(Diagnostic::error(
                &format!("states.{slug}"),
                format!(
                    "State slug '{slug}' is not a valid slug; use hyphen-separated kebab-case \
                     (e.g. 'identify-case'). A human-readable label belongs in 'title'."
                ),
            )));
        }
        for phase in ["before", "after"] {
            if let Some(spec) = e.value.get(phase) {
                check_phase(ctx, slug, phase, spec, out);
            }
        }
        let field = format!("states.{slug}.tools.allow");
        let who = format!("State '{slug}'");
        let allow = ctx.node(&field).and_then(Node::as_seq).unwrap_or(&[]);
        let own_forbid: Vec<String> = bare_names(ctx.node(&format!("states.{slug}.tools.forbid")));
        for item in allow {
            probe(
                ctx,
                &Probe {
                    field: &field,
                    who: &who,
                    state: Some(e),
                    own_forbid: &own_forbid,
                    bundles,
                    root_skills: &root_skills,
                },
                item,
                out,
            );
        }
    }
}

/// Probes for `tools.allow_always`.
pub(crate) fn allow_always(ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let bundles = ctx.bundles;
    let field = "tools.allow_always";
    for item in ctx.node(field).and_then(Node::as_seq).unwrap_or(&[]) {
        probe(
            ctx,
            &Probe {
                field,
                who: field,
                state: None,
                own_forbid: &[],
                bundles,
                root_skills: &[],
            },
            item,
            out,
        );
    }
}

struct Probe<'a> {
    field: &'a str,
    who: &'a str,
    state: Option<&'a crate::yaml::Entry>,
    own_forbid: &'a [String],
    bundles: &'a [SkillBundle],
    root_skills: &'a [String],
}

fn bare_names(list: Option<&Node>) -> Vec<String> {
    list.and_then(Node::as_seq)
        .map(|items| {
            items
                .iter()
                .filter_map(Node::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// The globs an entry puts on argument `arg` (its `args.<arg>`, else its `paths`).
fn globs_for<'a>(item: &'a Node, arg: &str) -> Vec<&'a str> {
    let list = |n: &'a Node| -> Vec<&'a str> {
        match n.as_str() {
            Some(s) => vec![s],
            None => n
                .as_seq()
                .map(|v| v.iter().filter_map(Node::as_str).collect())
                .unwrap_or_default(),
        }
    };
    let mut out: Vec<&str> = item
        .get("args")
        .and_then(|a| a.get(arg))
        .map(list)
        .unwrap_or_default();
    out.extend(item.get("paths").map(list).unwrap_or_default());
    out
}

/// The literal directory prefix of a glob, canonicalized (no leading `./` or `/`).
fn literal_prefix(glob: &str) -> String {
    let g = glob.trim_start_matches("./").trim_start_matches('/');
    let end = g.find(['*', '?', '[', '{']).unwrap_or(g.len());
    g[..end].to_string()
}

fn probe(ctx: &Context<'_>, p: &Probe<'_>, item: &Node, out: &mut Vec<Diagnostic>) {
    let tool = match item.as_str() {
        Some(t) => t,
        None => match item.get("tool").and_then(Node::as_str) {
            Some(t) => t,
            None => return,
        },
    };
    let at = |d: Diagnostic| d.in_file(ctx.file).at(Some(item.pos));
    let (who, field) = (p.who, p.field);
    let forbid_always = bare_names(ctx.node("tools.forbid_always"));
    if forbid_always.iter().any(|f| f == tool || f == "*") {
        out.push(at(Diagnostic::error(
            field,
            format!(
                "{who} allows '{tool}', which 'tools.forbid_always' denies in every state; a \
                 denial beats every grant, so drop one of the two."
            ),
        )));
        return;
    }
    if p.own_forbid.iter().any(|f| f == tool || f == "*") {
        out.push(at(Diagnostic::error(
            field,
            format!(
                "{who} allows '{tool}' and forbids it in the same state; the denial wins, so the \
                 grant reaches nothing."
            ),
        )));
        return;
    }
    if let (Some(state), "archmax_advance") = (p.state, tool) {
        advance_targets(ctx, state, item, out);
    }
    if tool == "archmax_run" {
        for glob in globs_for(item, "file_path") {
            let prefix = literal_prefix(glob);
            let reachable = p
                .bundles
                .iter()
                .any(|b| b.prefix.starts_with(&prefix) || prefix.starts_with(&b.prefix));
            if !reachable {
                out.push(at(Diagnostic::error(
                    field,
                    format!(
                        "{who} allows 'archmax_run' on '{glob}', which is outside every skill \
                         bundle: archmax_run only executes scripts inside a skill bundle \
                         ('skills/<capability>/scripts/'), so the grant can never run anything."
                    ),
                )));
            }
        }
    }
    let path_args: &[&str] = MUTATING
        .iter()
        .find(|(t, _)| *t == tool)
        .map_or(&["file_path"], |(_, a)| a);
    let mutating = MUTATING.iter().any(|(t, _)| *t == tool);
    for arg in path_args {
        for glob in globs_for(item, arg) {
            let prefix = literal_prefix(glob);
            if prefix.starts_with("workflows/") || prefix == "workflows" {
                out.push(at(Diagnostic::error(
                    field,
                    format!(
                        "{who} allows '{tool}' on '{glob}', which names the authoring plane \
                         ('workflows/'): machine specs, grading rubrics, hook scripts, and test \
                         cases are never reachable by the agent, so the runtime blocks it."
                    ),
                )));
            } else if mutating && RUNTIME_AREAS.iter().any(|a| prefix.starts_with(a)) {
                out.push(at(Diagnostic::error(
                    field,
                    format!(
                        "{who} allows '{tool}' on '{glob}', which targets a runtime-owned run area \
                         the runtime will block; write under 'scratchpad/' instead."
                    ),
                )));
            } else if let Some(m) = ctx
                .mounts
                .iter()
                .find(|m| m.read_only && m.contains(&prefix))
                .filter(|_| mutating)
            {
                out.push(at(Diagnostic::error(
                    field,
                    format!(
                        "{who} allows '{tool}' on '{glob}', which is in the read-only zone of \
                         mount '{}': the host serves it read-only, so the runtime refuses every \
                         write there whatever this entry grants.",
                        m.name
                    ),
                )));
            } else if let (Some(state), false) = (p.state, tool == "archmax_run") {
                skill_only(p, state, tool, glob, &prefix, &at, out);
                mount_only(ctx, state, tool, glob, &prefix, &at, out);
            }
        }
    }
}

/// A path pattern that can only match inside one skill bundle the state does not enable.
fn skill_only(
    p: &Probe<'_>,
    state: &crate::yaml::Entry,
    tool: &str,
    glob: &str,
    prefix: &str,
    at: &dyn Fn(Diagnostic) -> Diagnostic,
    out: &mut Vec<Diagnostic>,
) {
    let inside: Vec<&SkillBundle> = p
        .bundles
        .iter()
        .filter(|b| prefix.starts_with(&b.prefix))
        .collect();
    let [bundle] = inside.as_slice() else { return };
    let state_allow = bare_names(state.value.get("skills").and_then(|s| s.get("allow")));
    if !state_allow
        .iter()
        .chain(p.root_skills)
        .any(|s| *s == bundle.slug)
    {
        out.push(at(Diagnostic::error(
            p.field,
            format!(
                "State '{}' allows '{tool}' on '{glob}', which can only match inside skill '{}', \
                 and this state does not enable it; enable it with 'skills: {{ allow: [{}] }}' or \
                 drop the entry.",
                state.key, bundle.slug, bundle.slug
            ),
        )));
    }
}

/// A path pattern that can only match inside one governed mount the state does
/// not enable: the grant reaches nothing.
fn mount_only(
    ctx: &Context<'_>,
    state: &crate::yaml::Entry,
    tool: &str,
    glob: &str,
    prefix: &str,
    at: &dyn Fn(Diagnostic) -> Diagnostic,
    out: &mut Vec<Diagnostic>,
) {
    let inside: Vec<&super::MountDecl> = ctx
        .mounts
        .iter()
        .filter(|m| m.governed && m.contains(prefix.trim_end_matches('/')))
        .collect();
    let [mount] = inside.as_slice() else { return };
    let grants = |n: Option<&Node>| -> Vec<String> {
        n.and_then(Node::as_seq)
            .into_iter()
            .flatten()
            .filter_map(|i| i.as_str().or_else(|| i.get("mount").and_then(Node::as_str)))
            .map(str::to_string)
            .collect()
    };
    let mut enabled = grants(ctx.node("mounts.allow_always"));
    enabled.extend(grants(
        state.value.get("mounts").and_then(|m| m.get("allow")),
    ));
    if !enabled.contains(&mount.name) {
        out.push(at(Diagnostic::warning(
            &format!("states.{}.tools.allow", state.key),
            format!(
                "State '{}' allows '{tool}' on '{glob}', which can only match inside mount '{}', \
                 and this state does not enable that governed mount: the entry reaches nothing. \
                 Grant it with 'mounts: {{ allow: [{}] }}' or drop the entry.",
                state.key, mount.name, mount.name
            ),
        )));
    }
}

/// `archmax_advance` guards naming a literal target.
fn advance_targets(
    ctx: &Context<'_>,
    state: &crate::yaml::Entry,
    item: &Node,
    out: &mut Vec<Diagnostic>,
) {
    let slug = &state.key;
    for target in globs_for(item, "to") {
        if target.contains(['*', '?', '[', '{']) || target.contains("${{") {
            continue;
        }
        let exists = ctx.states().iter().any(|e| e.key == target);
        if !exists {
            out.push(ctx.at(Diagnostic::warning(
                &format!("states.{slug}.tools.allow"),
                format!("State '{slug}' allows archmax_advance to undefined state '{target}'"),
            )));
            continue;
        }
        let has_edge = state
            .value
            .get("transitions")
            .and_then(Node::as_seq)
            .is_some_and(|t| {
                t.iter()
                    .any(|e| e.get("to").and_then(Node::as_str) == Some(target))
            });
        if !has_edge {
            out.push(ctx.at(Diagnostic::warning(
                &format!("states.{slug}.transitions"),
                format!(
                    "State '{slug}' allows archmax_advance to '{target}' but declares no edge to \
                     it; the runtime will block that move."
                ),
            )));
        }
    }
}
