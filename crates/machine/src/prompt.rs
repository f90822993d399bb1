//! The system prompt: a static prefix (identical in every state, so providers
//! can cache it) and a volatile block rendered per model call for the active
//! state only.

use archmax_kernel::Policy;
use archmax_spec::Workflow;
use archmax_spec::model::{HookSpec, State, StateType};
use archmax_spec::signature::TriggerSignature;

use crate::state::SessionState;

/// Our platform prompt: how a governed run works, in the runtime's words.
const PLATFORM_INTRO: &str = "\
# How this run works

You are working one step of a governed workflow. At every moment you stand in exactly one
state, and that state's rules decide which tools you have and which files you may touch.
The harness checks every tool call against them before it runs.";

/// The first step of a session a host started: naming the run. A sub-workflow's child is
/// not asked for a title (its caller's run has one).
const TITLE_STEP: &str =
    "Give the run a short title first: call `archmax_set_variables` with `title`.";

/// How a run moves, after the title step.
const STEPS: [&str; 3] = [
    "Do the work the current state asks for. Keep your own files under `scratchpad/` unless the
   state tells you where to write.",
    "When the state's work is done, call `archmax_advance` with one of the transition targets
   listed under the current state, and a short reason. The harness checks the move, and hooks
   may correct or refuse it. Make at most one move per message.",
    "A message with text and no tool call ends your turn. Put any text and the call that
   follows it in the same message.",
];

const PLATFORM_RULES: &str = "\
The conversation keeps its place between messages. If the current state cannot serve a new
message, call `archmax_reset` to start over at the entry state. If the work cannot be done
at all after you tried to recover, call `archmax_raise` with a code and a reason, on its own
in its message; it ends the session as failed.

Tools are closed by default: you see only what this state grants. Tools whose names start
with `archmax_` are the run's own controls. Where you need a value the run already holds,
write `${{name}}` (or `${{name.path}}`) in a tool argument instead of retyping it; write
`$${{…}}` for the literal text.";

/// The platform prompt of a session a host started (`child: false`) or of a sub-workflow's
/// child session (`child: true`, without the title step).
pub fn platform_prompt(child: bool) -> String {
    let steps: Vec<&str> = (!child)
        .then_some(TITLE_STEP)
        .into_iter()
        .chain(STEPS)
        .collect();
    let numbered: Vec<String> = steps
        .iter()
        .enumerate()
        .map(|(i, step)| format!("{}. {step}", i + 1))
        .collect();
    format!(
        "{PLATFORM_INTRO}\n\n{}\n\n{PLATFORM_RULES}",
        numbered.join("\n")
    )
}

/// The static prefix: persona, the host's `systemPrompt` (`extra`), platform prompt
/// ([`platform_prompt`] of `child`), workspace zones, workflow header, prose.
pub fn static_prefix(
    persona: Option<&str>,
    extra: Option<&str>,
    zones: &str,
    spec: &Workflow,
    prose: Option<&str>,
    child: bool,
) -> String {
    let mut header = match spec
        .title
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        Some(t) => format!("# Workflow: {t}"),
        None => "# Workflow".to_string(),
    };
    if let Some(i) = spec
        .instructions
        .as_deref()
        .map(str::trim)
        .filter(|i| !i.is_empty())
    {
        header.push_str("\n\n## Instructions\n\n");
        header.push_str(i);
    }
    let prose = prose.map(strip_html_comments);
    [
        persona.map(str::to_string),
        extra.map(str::to_string),
        Some(platform_prompt(child)),
        Some(zones.to_string()),
        Some(header),
        prose,
    ]
    .into_iter()
    .flatten()
    .map(|s| s.trim().to_string())
    .filter(|s| !s.is_empty())
    .collect::<Vec<_>>()
    .join("\n\n")
}

fn strip_html_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        out.push_str(&rest[..start]);
        match rest[start..].find("-->") {
            Some(end) => rest = &rest[start + end + 3..],
            None => {
                rest = "";
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The workspace zones section, from the mount table.
pub fn zones_section(mounts: &[archmax_spec::workspace::MountDecl]) -> String {
    let mut lines = vec![
        "# Workspace".to_string(),
        String::new(),
        "- `scratchpad/` — your working area for this session; it persists between turns.".to_string(),
        "- `large_tool_results/`, `conversation_history/` — where the runtime puts oversized results; read them, do not write there.".to_string(),
    ];
    for m in mounts
        .iter()
        .filter(|m| !m.governed && !m.name.starts_with('.'))
    {
        let posture = if m.read_only {
            "read-only"
        } else {
            "read/write"
        };
        let shown = match m.kind {
            archmax_spec::workspace::MountKind::Dir => format!("{}/", m.name),
            archmax_spec::workspace::MountKind::File => m.name.clone(),
        };
        lines.push(format!("- `{shown}` — {posture}."));
    }
    if mounts.iter().any(|m| m.governed) {
        lines.push(
            "- Some mounts open only in the states that grant them; a state lists the ones it has."
                .to_string(),
        );
    }
    lines.join("\n")
}

/// Everything the volatile block needs besides the spec.
pub struct VolatileInput<'a> {
    /// The clock line.
    pub clock: &'a str,
    /// The session.
    pub session: &'a SessionState,
    /// Skill descriptions by slug, with their `SKILL.md` path.
    pub skills: &'a [(String, String, String)],
    /// The signature of this turn's trigger.
    pub signature: Option<&'a TriggerSignature>,
    /// A sub-workflow's child session: its returns go back to its caller, unchecked.
    pub child: bool,
}

/// The per-call block for the active state.
pub fn volatile_block(spec: &Workflow, policy: &Policy, input: &VolatileInput<'_>) -> String {
    let slug = input.session.workflow_state.as_str();
    let Some(state) = spec.states.get(slug) else {
        return format!("{}\n\n## Current state: {slug}", input.clock);
    };
    let mut sections: Vec<String> = Vec::new();
    if let Some(i) = state
        .instructions
        .as_deref()
        .map(str::trim)
        .filter(|i| !i.is_empty())
    {
        sections.push(i.to_string());
    }
    let enabled = policy.enabled_skills(slug);
    if !enabled.is_empty() {
        let mut s = String::from("## Skills available in this state\n\n");
        for (sl, description, path) in input.skills.iter().filter(|(s, _, _)| enabled.contains(s)) {
            let mut d = description.split_whitespace().collect::<Vec<_>>().join(" ");
            if !d.ends_with(['.', '!', '?']) {
                d.push('.');
            }
            s.push_str(&format!("- **`{sl}`** — {d} Read `{path}` first.\n"));
        }
        s.push_str("\nOnly these skills are reachable from this state: every other skill's files are blocked here, whatever an earlier state could read.");
        sections.push(s);
    }
    let mounts = policy.enabled_mounts(slug);
    if !mounts.is_empty() {
        let mut names = mounts.to_vec();
        names.sort();
        let mut s = String::from("## Mounts available in this state\n\n");
        for m in names {
            s.push_str(&format!("- **`{m}/`** — open in this state.\n"));
        }
        s.push_str("\nOnly these mounts are reachable from this state.");
        sections.push(s);
    }
    let names: Vec<&str> = input.session.variables.keys().map(String::as_str).collect();
    sections.push(if names.is_empty() {
        "Run variables: none set.".to_string()
    } else {
        format!(
            "Run variables set: {}. Read one with archmax_get_variables.",
            names.join(", ")
        )
    });
    let hooks = hooks_line(state);
    if let Some(h) = hooks {
        sections.push(h);
    }
    if let Some(sig) = input.signature {
        sections.extend(signature_lines(sig, input.child));
    }
    sections.push(transitions(spec, state));
    format!(
        "{}\n\n## Current state: {slug}\n\nThis is the state you are in now; it overrides any state movement recorded earlier in this conversation.\n\n{}",
        input.clock,
        sections.join("\n\n")
    )
}

fn hooks_line(state: &State) -> Option<String> {
    let label = |h: &HookSpec| -> String {
        h.hooks()
            .iter()
            .map(|k| match k {
                archmax_spec::model::Hook::Script { script, .. } => script.clone(),
                archmax_spec::model::Hook::Rubric { .. } => "rubric".to_string(),
                archmax_spec::model::Hook::Custom(m) => m
                    .iter()
                    .map(|(k, v)| format!("{k}:{v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if let Some(b) = &state.before {
        parts.push(format!("before: {}", label(b)));
    }
    if let Some(a) = &state.after {
        parts.push(format!("after: {}", label(a)));
    }
    (!parts.is_empty()).then(|| format!("Hooks: {}", parts.join("; ")))
}

/// This turn's trigger signature as the agent reads it. A child's returns are not checked
/// when it finishes (its caller gets the ones it set, with a note naming the rest), so it
/// is told that instead of the rejection a top-level run meets.
fn signature_lines(sig: &TriggerSignature, child: bool) -> Vec<String> {
    let entry = |e: &archmax_spec::signature::SignatureEntry| {
        let mut line = format!("- {}", e.name);
        if let Some(t) = &e.ty {
            line.push_str(&format!(" ({t})"));
        }
        if let Some(d) = &e.description {
            line.push_str(&format!(" — {d}"));
        }
        line
    };
    let plain = |list: &[archmax_spec::signature::SignatureEntry]| {
        list.iter()
            .all(|e| e.ty.is_none() && e.description.is_none())
    };
    let mut out = Vec::new();
    if !sig.requires.is_empty() {
        out.push(if plain(&sig.requires) {
            format!(
                "This run was started with: {}.",
                sig.requires
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            format!(
                "This run was started with:\n{}",
                sig.requires
                    .iter()
                    .map(entry)
                    .collect::<Vec<_>>()
                    .join("\n")
            )
        });
    }
    if !sig.returns.is_empty() {
        let how = if child {
            "with `archmax_set_variables` before it finishes — your caller gets the ones you set, with a note naming any you did not"
        } else {
            "with `archmax_set_variables` before it finishes — finishing without every one set ends it rejected"
        };
        out.push(if plain(&sig.returns) {
            format!(
                "This run must set {} {how}.",
                sig.returns
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            format!(
                "This run must set these {how}:\n{}",
                sig.returns.iter().map(entry).collect::<Vec<_>>().join("\n")
            )
        });
    }
    out
}

fn transitions(spec: &Workflow, state: &State) -> String {
    if state.is_terminal() {
        return "This state is terminal: no transition leads out of it. Finish its work and stop."
            .to_string();
    }
    let mut s = String::from(
        "Transitions — choose one with `archmax_advance` when this state's work is done:",
    );
    for t in state.edges() {
        let target = spec.states.get(&t.to);
        let mut notes: Vec<&str> = Vec::new();
        if let Some(k) = t
            .kind
            .filter(|k| *k != archmax_spec::model::TransitionType::None)
        {
            notes.push(k.as_str());
        }
        if target.is_some_and(|s| s.kind == Some(StateType::Human)) {
            notes.push("human decision node");
        }
        if target.is_some_and(State::is_terminal) {
            notes.push("terminal");
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join(", "))
        };
        let what = if t.is_described() {
            t.description
                .as_deref()
                .unwrap_or_default()
                .trim()
                .to_string()
        } else {
            // 0.9.0: an undescribed edge routes on the target's instructions, quoted.
            let i = target
                .and_then(|s| s.instructions.as_deref())
                .unwrap_or_default()
                .trim();
            format!("\"{}\"", i.split_whitespace().collect::<Vec<_>>().join(" "))
        };
        s.push_str(&format!("\n- to `{}`{notes} — {what}", t.to));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_not_asked_for_a_title_and_the_steps_keep_their_numbers() {
        let top = platform_prompt(false);
        assert!(top.contains(
            "\n\n1. Give the run a short title first: call `archmax_set_variables` with `title`.\n2. Do the work the current state asks for."
        ));
        assert!(top.contains("\n4. A message with text and no tool call ends your turn."));
        let child = platform_prompt(true);
        assert!(!child.contains("title"), "{child}");
        assert!(child.contains("\n\n1. Do the work the current state asks for."));
        assert!(child.contains("\n3. A message with text and no tool call ends your turn."));
        assert_eq!(
            child
                .replace("1. Do the work", "2. Do the work")
                .replace("2. When", "3. When")
                .replace("3. A message", "4. A message"),
            top.replace(
                "1. Give the run a short title first: call `archmax_set_variables` with `title`.\n",
                ""
            )
        );
    }

    #[test]
    fn comments_are_stripped_from_prose() {
        assert_eq!(strip_html_comments("a<!-- hidden -->b<!-- open"), "ab");
    }
}
