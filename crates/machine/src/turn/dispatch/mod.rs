//! A response's tool calls, from the model's names to the recorded results: per call, name
//! resolution, arguments as a JSON object, `${{…}}` substitution and the kernel's decision
//! (`plan`), execution ([`execute`]), listing redaction, offloading and the
//! result message (`finish`, `apply`). A batch's independent calls run at once.
//!
//! State it changes: the transcript (results, in call order) and `rejected` (a terminal
//! refusal, or the failure a call left); everything else through `execute`.

use std::time::Instant;

use archmax_kernel::tools::WORKFLOW_TOOL_PREFIX;
use archmax_kernel::{CallContext, Origin};
use serde_json::{Value, json};
use tracing::Instrument;

use crate::control::ControlResult;
use crate::events::Event;
use crate::harness::Harness;
use crate::model::ToolCall;
use crate::model::types::ToolDef;

use crate::turn::Turn;

mod execute;

use execute::executable;

/// Results longer than this are offloaded to `large_tool_results/`.
const OFFLOAD_CHARS: usize = 40_000;

/// Which calls of a batch may run at once: consecutive calls of one group do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group {
    /// File reads: nothing they do is seen by another call.
    Reads,
    /// Host tools and delegations: they change nothing the turn holds, but may write the
    /// session's files (`context.workspace`, a child's `scratchpad/`), so reads wait for them.
    Outside,
}

/// The group of a call that may run beside others, `None` for one that runs alone.
fn group_of(name: &str) -> Option<Group> {
    if archmax_kernel::tools::builtin(name).is_some_and(|b| b.reads_only) {
        Some(Group::Reads)
    } else if name.starts_with(WORKFLOW_TOOL_PREFIX)
        || !(executable(name) || name.starts_with(archmax_kernel::tools::RESERVED_PREFIX))
    {
        Some(Group::Outside)
    } else {
        None
    }
}

/// A call's answer, as its result message records it.
struct Answer {
    text: String,
    is_error: bool,
    /// The image its `read_file` showed.
    shown: Option<crate::images::ImageMark>,
    /// The kernel refused it (the message is marked `governance_blocked`, as the
    /// original's `additional_kwargs.governance_blocked`).
    blocked: bool,
}

impl Answer {
    fn error(text: String) -> Self {
        Answer {
            text,
            is_error: true,
            shown: None,
            blocked: false,
        }
    }

    fn blocked(text: String) -> Self {
        Answer {
            blocked: true,
            ..Answer::error(text)
        }
    }
}

/// A call the kernel allowed, announced and ready to run.
struct Allowed {
    name: String,
    args: Value,
    call_id: String,
    /// The state it was decided in.
    state: String,
    /// When it was announced (its `durationMs` counts from here).
    started: Instant,
    /// A delegation's checked target and seeds (it announces itself as a sub-workflow).
    delegation: Option<crate::turn::delegate::Delegation>,
    /// Its `execute_tool` span: what it runs (a delegation's child turn too) runs inside.
    span: tracing::Span,
}

/// What planning a call came to.
enum Planned {
    /// Refused or unknown: nothing runs.
    Answered(Answer),
    Allowed(Box<Allowed>),
}

/// A call of the batch waiting for its answer to be recorded.
enum Queued {
    Answered(String, Answer),
    Run(Box<Allowed>),
}

/// The answer to a call of `delete`, a tool the agent is never given (`remove_file` is the
/// only deletion): the text Deep Agents' own `delete` tool answers when its backend cannot
/// delete, which is what the original's agent got, with the path the call named.
fn deletion_unavailable(arguments: &str) -> String {
    let args: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
    let path = ["file_path", "path"]
        .iter()
        .find_map(|k| args.get(*k).and_then(Value::as_str))
        .unwrap_or("");
    format!("Error: deletion is not available for '{path}'.")
}

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
        let version = self.mcp.as_ref().map_or(0, |m| m.version());
        if let Some(defs) = self.tool_defs.read().ok().and_then(|m| {
            m.get(state)
                .filter(|(v, _)| *v == version)
                .map(|(_, d)| d.clone())
        }) {
            return defs;
        }
        let mut surface = self.policy.surface(state);
        if self.plain {
            surface.retain(|t| crate::plain::is_plain_tool(t, &self.tools));
        }
        let mut out = Vec::new();
        for name in surface {
            if executable(&name) {
                let def = if self.settings.images.is_some() {
                    crate::tooldefs::built_in_with_images(&name)
                } else {
                    crate::tooldefs::built_in(&name)
                };
                let def = def.map(|d| {
                    if self.child {
                        crate::tooldefs::for_child(d)
                    } else {
                        d
                    }
                });
                if let Some(t) = def {
                    out.push(ToolDef {
                        name: t.name,
                        description: t.description,
                        parameters: t.parameters,
                    });
                }
            } else if name.starts_with(WORKFLOW_TOOL_PREFIX) {
                out.extend(self.delegation_def(&name));
            } else if let Some(t) = self.tools.iter().find(|t| t.name() == name) {
                out.push(ToolDef {
                    name: t.name().to_string(),
                    description: t.description().to_string(),
                    parameters: t.schema(),
                });
            } else if let Some(mcp) = &self.mcp {
                // The MCP tools the entry stands for, as listed (`Turn::list_mcp`).
                for t in mcp.expand(&name) {
                    if self.policy.discloses(state, &t.name)
                        && !out.iter().any(|d: &ToolDef| d.name == t.name)
                    {
                        out.push(ToolDef {
                            name: t.name.clone(),
                            description: t.description.clone(),
                            parameters: t.schema.clone(),
                        });
                    }
                }
            }
        }
        let defs: std::sync::Arc<[ToolDef]> = out.into();
        if let Ok(mut m) = self.tool_defs.write() {
            m.insert(state.to_string(), (version, std::sync::Arc::clone(&defs)));
        }
        defs
    }

    /// The MCP tool `name`, when the workspace's servers listed it.
    pub(crate) fn mcp_tool(&self, name: &str) -> Option<std::sync::Arc<crate::mcp::McpTool>> {
        self.mcp.as_ref()?.get(name)
    }
}

impl Turn<'_> {
    /// A response's tool calls, answered in call order. Consecutive calls of one [`Group`]
    /// (file reads; host tools and delegations) run at once, their `tool-result`s in
    /// completion order; any other call waits for them and runs alone, so a control tool
    /// sees every earlier call's effect and keeps its one move per batch.
    pub(super) async fn run_batch(&mut self, calls: &[ToolCall]) {
        let others = calls.len().saturating_sub(1);
        let mut moved: Option<String> = None;
        let mut queue: Vec<Queued> = Vec::new();
        let mut queued_group = None;
        for call in calls {
            let group = self.resolve_name(&call.name).and_then(|n| group_of(&n));
            if group.is_none() || group != queued_group {
                self.run_queue(&mut queue).await;
            }
            queued_group = group;
            let alongside = group.is_some();
            let allowed = match self.plan(call) {
                Planned::Answered(answer) => {
                    queue.push(Queued::Answered(call.id.clone(), answer));
                    continue;
                }
                Planned::Allowed(allowed) => allowed,
            };
            if alongside {
                queue.push(Queued::Run(allowed));
                continue;
            }
            let moved_before = moved.is_some();
            let span = allowed.span.clone();
            let (result, effects) = self
                .execute(
                    &allowed.name,
                    &allowed.args,
                    &allowed.call_id,
                    others,
                    &mut moved,
                )
                .instrument(span)
                .await;
            // A refused move answers the agent without erroring its message, but the call
            // did not do what it was for: its `tool-result` says so (the original reads it
            // off the move).
            let settled_ok = !result.is_error
                && (allowed.name != "archmax_advance" || (!moved_before && moved.is_some()));
            let mut effects = effects;
            let shown = effects.shown.take();
            let answer = self.finish(&allowed, result, settled_ok, shown);
            self.apply(&allowed.call_id, answer, effects);
        }
        self.run_queue(&mut queue).await;
    }

    /// Runs the queued calls at once, then records every queued answer in call order.
    async fn run_queue(&mut self, queue: &mut Vec<Queued>) {
        let queued = std::mem::take(queue);
        let this = &*self;
        let ran = futures_util::future::join_all(queued.iter().map(|q| async move {
            let Queued::Run(allowed) = q else {
                return None;
            };
            if let Some(d) = &allowed.delegation {
                let (result, settled) = this
                    .delegate(d, &allowed.call_id)
                    .instrument(allowed.span.clone())
                    .await;
                let effects = execute::Effects {
                    delegated: Some(settled),
                    ..Default::default()
                };
                return Some((this.finish(allowed, result, false, None), effects));
            }
            let (result, mut effects) = this
                .run_alongside(&allowed.name, &allowed.args, &allowed.call_id)
                .instrument(allowed.span.clone())
                .await;
            let settled_ok = !result.is_error;
            let shown = effects.shown.take();
            Some((this.finish(allowed, result, settled_ok, shown), effects))
        }))
        .await;
        for (q, ran) in queued.into_iter().zip(ran) {
            match (q, ran) {
                (Queued::Answered(id, answer), _) => self.apply(&id, answer, Default::default()),
                (Queued::Run(allowed), Some((answer, effects))) => {
                    self.apply(&allowed.call_id, answer, effects)
                }
                (Queued::Run(allowed), None) => {
                    // `join_all` answers every future it was given: this is unreachable, and
                    // still a call is never left without its result.
                    let answer = Answer::error(format!("Error: '{}' did not run.", allowed.name));
                    self.apply(&allowed.call_id, answer, Default::default())
                }
            }
        }
    }

    /// Resolution, arguments, substitution and the kernel's decision: a refusal answers
    /// the call; an allowed call is announced (`tool-called`) and returned to run.
    fn plan(&mut self, call: &ToolCall) -> Planned {
        let state = self.session.workflow_state.clone();
        let Some(name) = self.resolve_name(&call.name) else {
            refused_span(&call.name, &call.id, "unknown", None);
            let answer = if call.name == "delete" {
                deletion_unavailable(&call.arguments)
            } else {
                self.unknown_tool(&call.name)
            };
            let args = serde_json::from_str(&call.arguments).ok();
            self.blocked(state, &call.name, &answer, &call.id, args);
            return Planned::Answered(Answer::error(answer));
        };
        let args = match crate::governed::arguments(&name, &call.arguments) {
            Ok(args) => args,
            Err(refusal) => {
                refused_span(&name, &call.id, "invalid-arguments", None);
                self.blocked(state, &name, &refusal, &call.id, None);
                return Planned::Answered(Answer::error(refusal));
            }
        };
        let vars = self.session.kernel_variables();
        let args = if name.starts_with(WORKFLOW_TOOL_PREFIX) {
            args
        } else {
            match crate::substitute::substitute_args(&args, &vars) {
                Ok(a) => a,
                Err(f) => {
                    let reason = crate::substitute::unresolved_message(&f);
                    refused_span(&name, &call.id, "blocked", Some("unresolved-reference"));
                    self.blocked(state, &name, &reason, &call.id, Some(args));
                    return Planned::Answered(Answer::blocked(reason));
                }
            }
        };
        let ctx = CallContext {
            state: &state,
            origin: Origin::Agent,
            reply_only: self.mode == crate::turn::Mode::ReplyOnly,
            variables: Some(&vars),
            inherited: &self.inherited,
        };
        let (args, verdict) =
            crate::scope::decide(&self.h.policy, self.id.as_str(), &name, args, &ctx);
        // The original's plain agent has no kernel: its file operations answer a read-only
        // mount themselves (`Cannot copy to '…': it is served by a read-only mount.`), and
        // they refuse it just as surely.
        let file_operation_answers = self.h.plain
            && verdict.rule == archmax_kernel::RuleId::ReadOnlyZone
            && matches!(name.as_str(), "copy_file" | "move_file" | "remove_file");
        if !verdict.allowed && !file_operation_answers {
            refused_span(&name, &call.id, "blocked", Some(verdict.rule.as_str()));
            let reason = verdict.message.unwrap_or_default();
            // Every refusal is shown, the kernel's quiet ones (`warn: false`) included: an
            // operator watching the run needs each one (record 0235).
            self.blocked(state, &name, &reason, &call.id, Some(args));
            if verdict.terminal {
                self.session.rejected = Some(reason.clone());
            }
            return Planned::Answered(Answer::blocked(reason));
        }
        let rule = verdict.rule.as_str();
        if name.starts_with(WORKFLOW_TOOL_PREFIX) {
            return match self.prepare(&name, &args) {
                Ok(d) => Planned::Allowed(Box::new(Allowed {
                    span: allowed_span(&name, &call.id, rule),
                    name,
                    args,
                    call_id: call.id.clone(),
                    state,
                    started: Instant::now(),
                    delegation: Some(d),
                })),
                Err(reason) => {
                    refused_span(&name, &call.id, "refused", None);
                    self.blocked(state, &name, &reason, &call.id, Some(args));
                    self.refused(&name, &call.id, &reason);
                    Planned::Answered(Answer::blocked(reason))
                }
            };
        }
        let started = Instant::now();
        let mcp = self
            .h
            .mcp_tool(&name)
            .and_then(|t| crate::tools::HostTool::mcp(&*t));
        let span = allowed_span(&name, &call.id, rule);
        crate::trace::record_mcp(&span, mcp.as_ref());
        self.emit(Event::ToolCalled {
            state: state.clone(),
            tool: name.clone(),
            call_id: Some(call.id.clone()),
            args: Some(args.clone()),
            detail: None,
            origin: None,
            mcp,
        });
        Planned::Allowed(Box::new(Allowed {
            span,
            name,
            args,
            call_id: call.id.clone(),
            state,
            started,
            delegation: None,
        }))
    }

    /// What ran becomes the call's answer: listings redacted, long results offloaded, and
    /// its `tool-result` emitted (when it finishes, so a batch's arrive in completion order).
    fn finish(
        &self,
        allowed: &Allowed,
        result: ControlResult,
        settled_ok: bool,
        shown: Option<crate::images::ImageMark>,
    ) -> Answer {
        crate::trace::record_tool(
            &allowed.span,
            !result.is_error && (settled_ok || allowed.delegation.is_some()),
            allowed.started,
        );
        let (text, is_error) = (result.text, result.is_error);
        let text = if archmax_kernel::tools::builtin(&allowed.name).is_some_and(|b| b.lists_paths) {
            self.h
                .policy
                .redact_listing(&allowed.state, Origin::Agent, &text)
                .into_owned()
        } else {
            text
        };
        let (text, is_error) = match self
            .workspace()
            .map(|ws| crate::files::offload(&ws, &allowed.call_id, &text, OFFLOAD_CHARS))
        {
            Some(Ok(Some(pointer))) => (pointer, is_error),
            Some(Err(refused)) => (refused, true),
            Some(Ok(None)) | None => (text, is_error),
        };
        // A delegation reports itself (`sub-workflow-result`).
        if allowed.delegation.is_none() {
            self.emit(Event::tool_result(
                allowed.state.clone(),
                allowed.name.clone(),
                allowed.call_id.clone(),
                settled_ok,
                allowed.started,
                &text,
                None,
            ));
        }
        Answer {
            text,
            is_error,
            shown,
            blocked: false,
        }
    }

    /// Records a call's answer (with the image its `read_file` showed, if any, and the
    /// kernel's refusal mark) and the effects it left: a step failure, a delegation's result.
    fn apply(&mut self, call_id: &str, answer: Answer, effects: execute::Effects) {
        if let Some(reason) = effects.fails {
            self.session.rejected = Some(reason);
        }
        if let Some(settled) = effects.delegated {
            self.settle(settled);
        }
        let mut msg = json!({ "role": "tool", "tool_call_id": call_id, "content": answer.text, "is_error": answer.is_error });
        if let Some(mark) = answer.shown {
            msg["image"] = mark.to_value();
        }
        if answer.blocked {
            msg["governance_blocked"] = Value::Bool(true);
        }
        self.transcript.push(msg);
    }

    /// A refused call of the agent's (`tool-blocked`), whatever refused it: an unknown name,
    /// arguments that are not a JSON object, an unresolved reference or the kernel.
    fn blocked(&self, state: String, tool: &str, reason: &str, call_id: &str, args: Option<Value>) {
        self.emit(Event::ToolBlocked {
            state,
            tool: tool.to_string(),
            reason: reason.to_string(),
            call_id: Some(call_id.to_string()),
            args,
            origin: None,
        });
    }

    pub(super) fn resolve_name(&self, called: &str) -> Option<String> {
        let resolved = self.resolve_registered(called)?;
        // A plain agent has none of the runtime's own tools: they are not tools there.
        (!self.h.plain || crate::plain::is_plain_tool(&resolved, &self.h.tools)).then_some(resolved)
    }

    pub(super) fn resolve_registered(&self, called: &str) -> Option<String> {
        let registered = |n: &str| {
            executable(n)
                || self.h.tools.iter().any(|t| t.name() == n)
                || n == "eval"
                || n.starts_with(WORKFLOW_TOOL_PREFIX)
                || self.h.mcp_tool(n).is_some()
                || self.h.mocks.declares(self.id.as_str(), n)
        };
        if registered(called) || archmax_kernel::tools::ALWAYS_ALLOWED.contains(&called) {
            return Some(called.to_string());
        }
        match self.suffix_matches(called).as_slice() {
            [one] => Some((*one).to_string()),
            _ => None,
        }
    }

    /// The host tools whose name ends in `__<called>` (an MCP-style prefixed name the model
    /// shortened).
    fn suffix_matches(&self, called: &str) -> Vec<&str> {
        let suffix = format!("__{called}");
        self.h
            .tools
            .iter()
            .map(|t| t.name())
            .filter(|n| n.ends_with(&suffix))
            .collect()
    }

    pub(super) fn unknown_tool(&self, called: &str) -> String {
        let matches = self.suffix_matches(called);
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

/// The span of a call the kernel allowed, with the rule that allowed it.
fn allowed_span(name: &str, call_id: &str, rule: &str) -> tracing::Span {
    let span = crate::trace::tool_span(name, call_id);
    if !span.is_disabled() {
        span.record("archmax.governance.decision", "allowed");
        span.record("archmax.governance.rule", rule);
    }
    span
}

/// The span of a call that did not run: unknown, malformed, or refused (by `rule`).
fn refused_span(name: &str, call_id: &str, status: &str, rule: Option<&str>) {
    let span = crate::trace::tool_span(name, call_id);
    if span.is_disabled() {
        return;
    }
    tracing::warn!(parent: &span, tool = name, call_id, status, rule, "tool call not run");
    span.record("archmax.tool.status", status);
    span.record("otel.status_code", "ERROR");
    if let Some(rule) = rule {
        span.record("archmax.governance.decision", "blocked");
        span.record("archmax.governance.rule", rule);
    }
}
