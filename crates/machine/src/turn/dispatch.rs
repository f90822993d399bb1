//! One tool call, from the model's name to the recorded result: name resolution, arguments as
//! a JSON object, `${{…}}` substitution, the kernel's decision, execution
//! ([`execute`](super::execute)), listing redaction, offloading, and the result message.
//!
//! State it changes: the call marks (`answering`: the image shown, the governance block, the
//! call ids used) and `rejected` for a terminal refusal.

use std::time::Instant;

use archmax_kernel::{CallContext, Origin};
use serde_json::{Value, json};

use crate::events::Event;
use crate::harness::Harness;
use crate::model::types::ToolDef;

use super::Turn;

/// The tools the runtime can run itself, besides host tools.
pub(super) const EXECUTABLE: [&str; 18] = [
    "archmax_advance",
    "archmax_wait",
    "archmax_reset",
    "archmax_raise",
    "archmax_get_variables",
    "archmax_set_variables",
    "archmax_eval",
    "archmax_run",
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

/// Results longer than this are offloaded to `large_tool_results/`.
const OFFLOAD_CHARS: usize = 40_000;

/// `calls` with every id this turn already used (or an earlier call of the same message
/// used) renamed `{id}_2`, `{id}_3`, …: the assistant message is stored with the renamed
/// ids, so each tool result answers exactly one call.
pub(super) fn unique_call_ids(
    mut calls: Vec<crate::model::types::ToolCall>,
    used: &mut std::collections::HashSet<String>,
) -> Vec<crate::model::types::ToolCall> {
    for call in &mut calls {
        if used.contains(&call.id) {
            let base = call.id.clone();
            let mut n = 2u64;
            while used.contains(&format!("{base}_{n}")) {
                n += 1;
            }
            call.id = format!("{base}_{n}");
        }
        used.insert(call.id.clone());
    }
    calls
}

impl Harness {
    /// The tool definitions offered in `state`: a function of the state alone, so they are
    /// built once per state and shared by every request (which also lets a model that keeps
    /// conversations, `model::delta`, see they did not change without comparing them).
    pub(crate) fn tool_defs(&self, state: &str) -> std::sync::Arc<[ToolDef]> {
        if let Some(defs) = self
            .tool_defs
            .read()
            .ok()
            .and_then(|m| m.get(state).cloned())
        {
            return defs;
        }
        let mut surface = self.policy.surface(state);
        if self.plain {
            surface.retain(|t| crate::plain::is_plain_tool(t, &self.tools));
        }
        let mut out = Vec::new();
        for name in surface {
            if EXECUTABLE.contains(&name.as_str()) {
                let def = if self.images.is_some() {
                    crate::tooldefs::built_in_with_images(&name)
                } else {
                    crate::tooldefs::built_in(&name)
                };
                if let Some(t) = def {
                    out.push(ToolDef {
                        name: t.name,
                        description: t.description,
                        parameters: t.parameters,
                    });
                }
            } else if let Some(t) = self.tools.iter().find(|t| t.name() == name) {
                out.push(ToolDef {
                    name: t.name().to_string(),
                    description: t.description().to_string(),
                    parameters: t.schema(),
                });
            }
        }
        let defs: std::sync::Arc<[ToolDef]> = out.into();
        if let Ok(mut m) = self.tool_defs.write() {
            m.insert(state.to_string(), std::sync::Arc::clone(&defs));
        }
        defs
    }
}

impl Turn<'_> {
    /// One tool call: resolution, substitution, kernel, execution.
    pub(super) async fn tool_call(
        &mut self,
        call: &crate::model::types::ToolCall,
        others: usize,
        moved: &mut Option<String>,
        _index: usize,
    ) -> (String, bool) {
        let state = self.session.workflow_state.clone();
        let Some(name) = self.resolve_name(&call.name) else {
            return (self.unknown_tool(&call.name), true);
        };
        let args = match crate::governed::arguments(&name, &call.arguments) {
            Ok(args) => args,
            Err(refusal) => return (refusal, true),
        };
        let vars = self.session.kernel_variables();
        let args = if name.starts_with(archmax_kernel::tools::WORKFLOW_TOOL_PREFIX) {
            args
        } else {
            match crate::substitute::substitute_args(&args, &vars) {
                Ok(a) => a,
                Err(f) => {
                    let reason = crate::substitute::unresolved_message(&f);
                    self.answering.blocked = true;
                    self.emit(Event::ToolBlocked {
                        state,
                        tool: name,
                        reason: reason.clone(),
                        call_id: Some(call.id.clone()),
                        args: Some(args),
                        origin: None,
                    });
                    return (reason, true);
                }
            }
        };
        let ctx = CallContext {
            state: &state,
            origin: Origin::Agent,
            reply_only: self.mode.reply_only,
            variables: Some(&vars),
        };
        let (args, verdict) =
            crate::governed::decide(&self.h.policy, self.id.as_str(), &name, args, &ctx);
        // The original's plain agent has no kernel: its file operations answer a read-only
        // mount themselves (`Cannot copy to '…': it is served by a read-only mount.`), and
        // they refuse it just as surely.
        let file_operation_answers = self.h.plain
            && verdict.rule == archmax_kernel::RuleId::ReadOnlyZone
            && matches!(name.as_str(), "copy_file" | "move_file" | "remove_file");
        if !verdict.allowed && !file_operation_answers {
            let reason = verdict.message.unwrap_or_default();
            self.answering.blocked = true;
            if verdict.warn {
                self.emit(Event::ToolBlocked {
                    state,
                    tool: name,
                    reason: reason.clone(),
                    call_id: Some(call.id.clone()),
                    args: Some(args),
                    origin: None,
                });
            }
            if verdict.terminal {
                self.session.rejected = Some(reason.clone());
            }
            return (reason, true);
        }
        let started = Instant::now();
        self.emit(Event::ToolCalled {
            state: state.clone(),
            tool: name.clone(),
            call_id: Some(call.id.clone()),
            args: Some(args.clone()),
            detail: None,
            origin: None,
        });
        let moved_before = moved.is_some();
        let result = self.execute(&name, &args, &call.id, others, moved).await;
        let (text, is_error) = (result.text, result.is_error);
        // A refused move answers the agent without erroring its message, but the call did
        // not do what it was for: its `tool-result` says so (the original reads it off the
        // move).
        let settled_ok =
            !is_error && (name != "archmax_advance" || (!moved_before && moved.is_some()));
        let text = if matches!(name.as_str(), "ls" | "glob" | "grep") {
            self.h
                .policy
                .redact_listing(&state, Origin::Agent, &text)
                .into_owned()
        } else {
            text
        };
        let (text, is_error) = match self
            .workspace()
            .map(|ws| crate::files::offload(&ws, &call.id, &text, OFFLOAD_CHARS))
        {
            Some(Ok(Some(pointer))) => (pointer, is_error),
            Some(Err(refused)) => (refused, true),
            Some(Ok(None)) | None => (text, is_error),
        };
        self.emit(Event::tool_result(
            state,
            name,
            call.id.clone(),
            settled_ok,
            started,
            &text,
            None,
        ));
        (text, is_error)
    }

    /// A tool call's answer, carrying the image its `read_file` showed, if any.
    pub(super) fn push_result(&mut self, call_id: &str, content: String, is_error: bool) {
        let mut msg = json!({ "role": "tool", "tool_call_id": call_id, "content": content, "is_error": is_error });
        if let Some(mark) = self.answering.shown.take() {
            msg["image"] = mark.to_value();
        }
        if std::mem::take(&mut self.answering.blocked) {
            msg["governance_blocked"] = Value::Bool(true);
        }
        self.transcript.push(msg);
    }

    pub(super) fn resolve_name(&self, called: &str) -> Option<String> {
        let resolved = self.resolve_registered(called)?;
        // A plain agent has none of the runtime's own tools: they are not tools there.
        (!self.h.plain || crate::plain::is_plain_tool(&resolved, &self.h.tools)).then_some(resolved)
    }

    pub(super) fn resolve_registered(&self, called: &str) -> Option<String> {
        let registered = |n: &str| {
            EXECUTABLE.contains(&n)
                || self.h.tools.iter().any(|t| t.name() == n)
                || n == "eval"
                || n == "task"
        };
        if registered(called) || archmax_kernel::tools::ALWAYS_ALLOWED.contains(&called) {
            return Some(called.to_string());
        }
        let suffix = format!("__{called}");
        let matches: Vec<&str> = self
            .h
            .tools
            .iter()
            .map(|t| t.name())
            .filter(|n| n.ends_with(&suffix))
            .collect();
        match matches.as_slice() {
            [one] => Some((*one).to_string()),
            _ => None,
        }
    }

    pub(super) fn unknown_tool(&self, called: &str) -> String {
        let suffix = format!("__{called}");
        let matches: Vec<&str> = self
            .h
            .tools
            .iter()
            .map(|t| t.name())
            .filter(|n| n.ends_with(&suffix))
            .collect();
        let mut text = format!(
            "[workflow] '{called}' is not a tool. Call one of the tools you were given, by its exact name."
        );
        if matches.len() > 1 {
            text.push_str(&format!(
                " Did you mean one of: {}? Call it by its full name.",
                matches.join(", ")
            ));
        }
        text
    }
}
