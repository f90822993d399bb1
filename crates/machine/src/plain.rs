//! The plain agent: a harness assembled without a workflow (`createAgent({ workflow: false })`,
//! or the default workflow looked for and absent).
//!
//! ```text
//! tools:   ls read_file write_file edit_file glob grep write_todos copy_file move_file remove_file + host tools
//! prompt:  AGENTS.md, the host's systemPrompt, the workspace zones, the skills
//! bound:   PLAIN_MAX_MODEL_CALLS model calls per turn, then `recursion-limit`
//! ```
//!
//! It runs on the same turn loop and kernel as a governed agent, over a workflow
//! synthesized here: one terminal state ([`PLAIN_STATE`]) granting exactly the plain
//! tool surface, every skill and every mount, with no hooks, budgets, signatures or
//! variables. The kernel's safety rules still bind (runtime-internal areas, read-only
//! authored mounts, the authoring plane, paths escaping the root); nothing a workflow
//! would declare does. The runtime's own `archmax_*` tools are neither shown nor
//! callable.

use archmax_spec::Workflow;
use archmax_spec::workspace::{Files, LoadedWorkflow, MountDecl, SkillBundle};
use serde_json::{Value, json};

use crate::error::RunError;
use crate::tools::HostTool;

/// The one state a plain session stands in.
pub const PLAIN_STATE: &str = "agent";

/// The built-in tools of a plain agent, in the order the original's Deep Agents offers them:
/// the file tools, the planning list and the runtime's file operations (its `task` subagent
/// is not ported) — the file and todo tools of `archmax_kernel::tools::BUILTINS`, which are
/// exactly what the file layer runs.
pub const PLAIN_TOOLS: [&str; 10] = [
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "glob",
    "grep",
    "copy_file",
    "move_file",
    "remove_file",
    "write_todos",
];

/// How many model calls one plain turn may make before it ends `failed` with
/// `recursion-limit`. The original runs a plain agent's turn under LangGraph's
/// `recursionLimit` of 400 super-steps, two per model call (the model node and the tools
/// node), so 200 calls; a plain agent has no `budget.maxModelCalls` to bound it sooner.
pub const PLAIN_MAX_MODEL_CALLS: u64 = 200;

/// True for a tool a plain agent may be shown and may call: a plain built-in or a host tool.
pub(crate) fn is_plain_tool(name: &str, host: &[std::sync::Arc<dyn HostTool>]) -> bool {
    PLAIN_TOOLS.contains(&name) || host.iter().any(|t| t.name() == name)
}

/// The workflow a plain agent runs under: [`PLAIN_STATE`], terminal, entered by
/// `manual`, granting the plain tools and the host tools (no workflow-wide grant, so
/// neither `archmax_eval` nor `archmax_run`), every skill and every governed mount.
pub(crate) fn synthesize(
    skills: &[SkillBundle],
    mounts: &[MountDecl],
    host: &[std::sync::Arc<dyn HostTool>],
) -> Result<Workflow, RunError> {
    let tools: Vec<&str> = PLAIN_TOOLS
        .iter()
        .copied()
        .chain(host.iter().map(|t| t.name()))
        .collect();
    let mut state = json!({
        "triggers": { "manual": null },
        "tools": { "allow": tools },
    });
    if !skills.is_empty() {
        let slugs: Vec<&str> = skills.iter().map(|s| s.slug.as_str()).collect();
        state["skills"] = json!({ "allow": slugs });
    }
    let governed: Vec<&str> = mounts
        .iter()
        .filter(|m| m.governed)
        .map(|m| m.name.as_str())
        .collect();
    if !governed.is_empty() {
        state["mounts"] = json!({ "allow": governed });
    }
    let spec = json!({
        "tools": { "allow_always": [] },
        "states": { PLAIN_STATE: state },
    });
    // JSON is YAML: the synthesized spec goes through the one spec parser.
    archmax_spec::parse_machine_spec(&spec.to_string()).map_err(|diagnostics| {
        let first = diagnostics
            .first()
            .map(|d| d.message.clone())
            .unwrap_or_default();
        RunError::Store(format!(
            "cannot assemble the plain agent's tool surface: {first}"
        ))
    })
}

/// What a plain assembly "loads": the synthesized workflow and the skill registry of
/// `sources`, as a governed assembly loads a workflow's.
pub(crate) fn loaded(
    files: &dyn Files,
    sources: &[String],
    mounts: &[MountDecl],
    host: &[std::sync::Arc<dyn HostTool>],
) -> Result<LoadedWorkflow, RunError> {
    let (skills, _) = archmax_spec::workspace::skills::discover(files, sources);
    Ok(LoadedWorkflow {
        spec: synthesize(&skills, mounts, host)?,
        skills,
        warnings: Vec::new(),
    })
}

/// The plain agent's system prompt: the persona (`AGENTS.md`), the host's
/// `systemPrompt`, the workspace zones and the skills, each when present. No platform
/// prompt: there is no graph for it to explain.
pub(crate) fn system_prompt(
    persona: Option<&str>,
    extra: Option<&str>,
    zones: &str,
    skills: &[SkillBundle],
) -> String {
    let skills = skills_section(skills);
    [persona, extra, Some(zones), skills.as_deref()]
        .into_iter()
        .flatten()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Every skill of the registry, each with its description and `SKILL.md` path: a plain
/// agent has no states to vary disclosure by, so it is shown all of them.
fn skills_section(skills: &[SkillBundle]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut s = String::from("# Skills\n\n");
    for b in skills {
        let mut d = b
            .description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if !d.is_empty() && !d.ends_with(['.', '!', '?']) {
            d.push('.');
        }
        s.push_str(&format!(
            "- **`{}`** — {d} Read `{}SKILL.md` first.\n",
            b.slug, b.prefix
        ));
    }
    Some(s)
}

/// The input messages of an `invoke` as transcript lines: roles `human`/`ai` read as
/// `user`/`assistant`; anything but `{ role, content }` of a known role is dropped.
pub(crate) fn input_messages(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter_map(|m| {
            let role = match m.get("role").or_else(|| m.get("type"))?.as_str()? {
                "user" | "human" => "user",
                "assistant" | "ai" => "assistant",
                "system" => "system",
                _ => return None,
            };
            let content = m
                .get("content")
                .cloned()
                .unwrap_or(Value::String(String::new()));
            Some(json!({ "role": role, "content": content }))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_tools_are_the_file_and_todo_tools_of_the_runtime_table() {
        use archmax_kernel::tools::{BUILTINS, BuiltinKind};
        let mut table: Vec<&str> = BUILTINS
            .iter()
            .filter(|b| matches!(b.kind, BuiltinKind::File | BuiltinKind::Todos))
            .map(|b| b.name)
            .collect();
        let mut plain = PLAIN_TOOLS.to_vec();
        table.sort_unstable();
        plain.sort_unstable();
        assert_eq!(plain, table);
    }

    #[test]
    fn the_synthesized_spec_parses_and_grants_the_plain_surface() {
        let skills = vec![SkillBundle {
            slug: "refund-policy".into(),
            prefix: "skills/refund-policy/".into(),
            name: "refund-policy".into(),
            description: "When a refund is due".into(),
        }];
        let spec = synthesize(&skills, &archmax_spec::workspace::zero_config(), &[]).unwrap();
        let policy =
            archmax_kernel::Policy::compile(&spec, archmax_kernel::PolicyOptions::default())
                .unwrap();
        let surface = policy.surface(PLAIN_STATE);
        for t in PLAIN_TOOLS {
            assert!(
                surface.iter().any(|s| s == t),
                "{t} missing from {surface:?}"
            );
        }
        assert!(
            !surface
                .iter()
                .any(|s| s == "archmax_eval" || s == "archmax_run")
        );
    }

    #[test]
    fn the_prompt_lists_every_skill_after_the_host_layer() {
        let skills = vec![SkillBundle {
            slug: "order-data".into(),
            prefix: "skills/order-data/".into(),
            name: "order-data".into(),
            description: "Reading orders".into(),
        }];
        let p = system_prompt(Some("# Persona"), Some("Be brief."), "# Workspace", &skills);
        assert_eq!(
            p,
            "# Persona\n\nBe brief.\n\n# Workspace\n\n# Skills\n\n- **`order-data`** — Reading orders. Read `skills/order-data/SKILL.md` first."
        );
    }

    #[test]
    fn input_messages_take_langchain_roles() {
        let m = input_messages(&[
            json!({ "role": "human", "content": "hi" }),
            json!({ "type": "ai", "content": "hello" }),
            json!({ "role": "tool", "content": "x" }),
        ]);
        assert_eq!(
            m,
            vec![
                json!({ "role": "user", "content": "hi" }),
                json!({ "role": "assistant", "content": "hello" })
            ]
        );
    }
}
