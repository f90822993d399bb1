//! The typed lifecycle event stream hosts subscribe to.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

/// One lifecycle event (the payload; see [`Envelope`]).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(
    tag = "type",
    rename_all = "kebab-case",
    rename_all_fields = "camelCase"
)]
#[ts(export, optional_fields, rename = "LifecycleEvent")]
#[non_exhaustive]
pub enum Event {
    /// Something the host should know.
    Warning { scope: String, message: String },
    /// The skills the agent was assembled with, in discovery order (emitted at assembly,
    /// only when there is at least one).
    SkillsLoaded { names: Vec<String> },
    /// The turn reopened at the entry state.
    WorkflowReset { entry: String },
    /// A state was entered.
    StateEnter { state: String },
    /// A state was left.
    StateLeave { state: String, next: String },
    /// A terminal failure routed through `on_error`.
    StateErrorRouted {
        state: String,
        to: String,
        reason: String,
    },
    /// The run moved (`from` = `__start__` for the turn's arrival).
    Advance {
        from: String,
        to: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// The agent raised: the session failed.
    Raised {
        state: String,
        /// Written once, as the envelope's `sessionId` (see [`Emitter::emit`]).
        #[serde(skip)]
        #[ts(skip)]
        session_id: String,
        code: String,
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// The agent said something. `partial`: the text a failed or cancelled call had
    /// streamed before it stopped (then there is no `messageId`: nothing was recorded).
    AgentText {
        state: String,
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        partial: Option<bool>,
    },
    /// A piece of the agent's text as the model streams it, before the call's `agent-text`.
    AgentTextDelta {
        state: String,
        text: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    /// A governed tool call is about to run.
    ToolCalled {
        state: String,
        tool: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "unknown")]
        args: Option<Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
        /// `script` (model code) or `lifecycle` (a hook); absent for the agent's own calls.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = r#""script" | "lifecycle""#)]
        origin: Option<String>,
        /// An MCP tool's server and its name there; absent for every other tool.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        mcp: Option<McpRef>,
    },
    /// A tool call that is still running said how far it got (an MCP server's progress
    /// notification).
    ToolProgress {
        state: String,
        tool: String,
        call_id: String,
        /// Grows with every notification.
        progress: f64,
        /// The total, when the tool knows it.
        #[serde(skip_serializing_if = "Option::is_none")]
        total: Option<f64>,
        /// The tool's words, when it gives some.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// A tool call settled.
    ToolResult {
        state: String,
        tool: String,
        call_id: String,
        #[ts(type = r#""ok" | "error""#)]
        status: String,
        duration_ms: u64,
        output: String,
        truncated: bool,
        /// `script` (model code) or `lifecycle` (a hook); absent for the agent's own calls.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = r#""script" | "lifecycle""#)]
        origin: Option<String>,
    },
    /// A delegation (`archmax_workflow_<slug>`) began, or was refused at dispatch.
    SubWorkflowStart {
        /// The calling state.
        state: String,
        workflow: String,
        dispatch_id: String,
        /// Delegations below the root (a root's child is 1).
        depth: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
        /// The workflows from the root to the target.
        #[serde(skip_serializing_if = "Option::is_none")]
        chain: Option<Vec<String>>,
    },
    /// A delegation answered (`ok`), failed or was refused (`error`).
    SubWorkflowResult {
        state: String,
        workflow: String,
        dispatch_id: String,
        depth: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        chain: Option<Vec<String>>,
        #[ts(type = r#""ok" | "error" | "parked""#)]
        status: String,
        duration_ms: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The names of the returns the child set.
        #[serde(skip_serializing_if = "Option::is_none")]
        returns: Option<Vec<String>>,
    },
    /// The kernel refused a call.
    ToolBlocked {
        state: String,
        tool: String,
        reason: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = "unknown")]
        args: Option<Value>,
        /// `script` (model code) or `lifecycle` (a hook); absent for the agent's own calls.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional, type = r#""script" | "lifecycle""#)]
        origin: Option<String>,
    },
    /// Variables were written (names only, never values).
    VariablesSet {
        #[serde(skip_serializing_if = "Option::is_none")]
        state: Option<String>,
        names: Vec<String>,
        locked: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// The run's title was set.
    TitleSet {
        title: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        state: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// The session parked.
    Parked {
        state: String,
        /// Written once, as the envelope's `sessionId` (see [`Emitter::emit`]).
        #[serde(skip)]
        #[ts(skip)]
        session_id: String,
        #[ts(type = r#""decision" | "input""#)]
        awaiting: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        resume_at: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// A person decided a human state.
    Decided {
        state: String,
        to: String,
        /// Written once, as the envelope's `sessionId` (see [`Emitter::emit`]).
        #[serde(skip)]
        #[ts(skip)]
        session_id: String,
    },
    /// An event was delivered to a parked session.
    Delivered {
        state: String,
        trigger: String,
        to: String,
        /// Written once, as the envelope's `sessionId` (see [`Emitter::emit`]).
        #[serde(skip)]
        #[ts(skip)]
        session_id: String,
    },
    /// A message to or from a parked session.
    ParkMessage {
        state: String,
        /// Written once, as the envelope's `sessionId` (see [`Emitter::emit`]).
        #[serde(skip)]
        #[ts(skip)]
        session_id: String,
        #[ts(type = r#""inbound" | "outbound""#)]
        direction: String,
        text: String,
    },
    /// A line a hook script logged.
    HookOutput { state: String, line: String },
    /// A hook is about to run.
    HookStart {
        state: String,
        #[ts(type = r#""before" | "after""#)]
        phase: String,
        label: String,
    },
    /// A hook answered with a verdict.
    HookVerdict {
        state: String,
        #[ts(type = r#""before" | "after""#)]
        phase: String,
        label: String,
        #[ts(type = r#""ok" | "correct" | "veto""#)]
        verdict: String,
        reason: String,
    },
    /// A rubric was sent to its grader.
    RubricStart {
        state: String,
        name: String,
        dispatch_id: String,
    },
    /// A rubric's grader answered (`ok`) or could not be reached (`error`).
    RubricResult {
        state: String,
        name: String,
        dispatch_id: String,
        #[ts(type = r#""ok" | "error""#)]
        status: String,
        duration_ms: u64,
    },
    /// A hook's verdict (or its failure) refused the move.
    HookRejected {
        state: String,
        #[ts(type = r#""before" | "after""#)]
        phase: String,
        reason: String,
    },
    /// A model call reported usage.
    ModelUsage {
        state: String,
        input_tokens: u64,
        output_tokens: u64,
        cache_read_tokens: u64,
        cache_creation_tokens: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// Spent so far this turn and in the session (input + output tokens; US dollars when
        /// priced): what the spending caps count.
        #[serde(skip_serializing_if = "Option::is_none")]
        turn_tokens: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        turn_cost_usd: Option<f64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        session_tokens: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        session_cost_usd: Option<f64>,
    },
    /// A model call failed after its retries at `from` and goes to the next model, `to`.
    ModelFallback {
        state: String,
        from: String,
        to: String,
        reason: String,
    },
    /// A model call waited for a slot of its endpoint, which takes `limit` calls at once in
    /// this process (`maxConcurrentCalls`), before it was sent.
    ModelQueued {
        state: String,
        waited_ms: u64,
        limit: u32,
    },
}

/// How many characters of a tool's output a `tool-result` event carries.
const RESULT_PREVIEW_CHARS: usize = 4096;

impl Event {
    /// The session a payload names itself, if it does.
    pub fn own_session(&self) -> Option<&str> {
        match self {
            Event::Raised { session_id, .. }
            | Event::Parked { session_id, .. }
            | Event::Decided { session_id, .. }
            | Event::Delivered { session_id, .. }
            | Event::ParkMessage { session_id, .. } => Some(session_id),
            _ => None,
        }
    }

    /// The `tool-result` of a settled call: its output previewed to 4,096 characters
    /// and its duration since `started`.
    pub fn tool_result(
        state: String,
        tool: String,
        call_id: String,
        ok: bool,
        started: std::time::Instant,
        output: &str,
        origin: Option<String>,
    ) -> Event {
        let preview: String = output.chars().take(RESULT_PREVIEW_CHARS).collect();
        Event::ToolResult {
            state,
            tool,
            call_id,
            status: if ok { "ok" } else { "error" }.to_string(),
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            truncated: preview.len() < output.len(),
            output: preview,
            origin,
        }
    }

    /// What a refused control call answered, as `(tool, reason)`: a runtime tool's
    /// (`archmax_*`) `tool-result` whose output is the refusal the model reads,
    /// `<tool> rejected: <reason>` (a move the kernel or a hook refused, invalid arguments, a
    /// second move, …). Hosts show it beside the kernel's `tool-blocked` and a hook's
    /// `hook-rejected`.
    pub fn control_refusal(&self) -> Option<(&str, &str)> {
        let Event::ToolResult { tool, output, .. } = self else {
            return None;
        };
        if !tool.starts_with("archmax_") {
            return None;
        }
        let reason = output
            .strip_prefix(tool.as_str())?
            .strip_prefix(" rejected: ")?;
        Some((tool, reason))
    }

    /// `warn` for warnings, refusals and raises; `info` otherwise.
    pub fn level(&self) -> &'static str {
        match self {
            Event::Warning { .. }
            | Event::ToolBlocked { .. }
            | Event::Raised { .. }
            | Event::HookRejected { .. }
            | Event::ModelFallback { .. } => "warn",
            Event::ToolResult { status, .. }
            | Event::RubricResult { status, .. }
            | Event::SubWorkflowResult { status, .. }
                if status == "error" =>
            {
                "warn"
            }
            _ => "info",
        }
    }
}

/// Which MCP server's tool a call runs: the server's name in `.mcp.json` and the tool's
/// name as the server lists it (`mcp__<server>__<tool>` may have changed characters of it).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct McpRef {
    pub server: String,
    pub tool: String,
}

/// An event with its envelope.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields, rename = "EventEnvelope")]
pub struct Envelope {
    /// The payload.
    #[serde(flatten)]
    pub event: Event,
    /// `info`, `warn` or `error`.
    #[ts(type = r#""info" | "warn" | "error""#)]
    pub level: &'static str,
    /// Epoch milliseconds.
    pub ts: u64,
    /// Strictly increasing per harness.
    pub seq: u64,
    /// The session the event is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The delegation (`dispatchId` of its `sub-workflow-start`) whose child session emitted
    /// the event; absent for what a session does on its own behalf, the delegations it
    /// makes included.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub_workflow_dispatch_id: Option<String>,
}

/// Where events go. Called synchronously, in order.
pub trait EventSink: Send + Sync {
    /// Receives one event.
    fn emit(&self, event: &Envelope);
}

/// A sink that drops everything.
#[derive(Debug, Default)]
pub struct NoEvents;

impl EventSink for NoEvents {
    fn emit(&self, _event: &Envelope) {}
}

/// Stamps events with `ts` and `seq` (and, inside a child session, the delegation's id) and
/// hands them to the sink.
#[derive(Clone)]
pub struct Emitter {
    sink: Arc<dyn EventSink>,
    seq: Arc<AtomicU64>,
    /// The delegation whose child session emits through this emitter.
    dispatch: Option<Arc<str>>,
}

impl Emitter {
    /// An emitter over `sink`.
    pub fn new(sink: Arc<dyn EventSink>) -> Self {
        Emitter {
            sink,
            seq: Arc::new(AtomicU64::new(0)),
            dispatch: None,
        }
    }

    /// This emitter for the child session delegation `dispatch_id` runs: the same sink and
    /// `seq`, every event tagged `subWorkflowDispatchId`.
    pub fn within(&self, dispatch_id: &str) -> Emitter {
        Emitter {
            dispatch: Some(Arc::from(dispatch_id)),
            ..self.clone()
        }
    }

    /// Emits one event for `session`. An event that names its own session (`parked`,
    /// `raised`, …) is stamped with that one, so the JSON holds one `sessionId`.
    pub fn emit(&self, session: Option<&str>, event: Event) {
        let seq = self.seq.fetch_add(1, Ordering::SeqCst) + 1;
        let level = event.level();
        let session_id = event.own_session().or(session).map(str::to_string);
        self.sink.emit(&Envelope {
            event,
            level,
            ts: crate::clock::now_ms(),
            seq,
            session_id,
            sub_workflow_dispatch_id: self.dispatch.as_deref().map(str::to_string),
        });
    }
}

/// A model call's text as it streams: each piece becomes an `agent-text-delta`, and what
/// was shown is kept, so a call that fails afterwards can report it as a `partial`
/// `agent-text` ([`TextDeltas::partial`]).
pub struct TextDeltas {
    emitter: Emitter,
    session: String,
    state: String,
    message_id: String,
    shown: std::sync::Mutex<String>,
}

impl TextDeltas {
    /// The deltas of one call of `session` in `state`, for the message `message_id`.
    pub fn new(emitter: Emitter, session: &str, state: &str, message_id: &str) -> TextDeltas {
        TextDeltas {
            emitter,
            session: session.to_string(),
            state: state.to_string(),
            message_id: message_id.to_string(),
            shown: std::sync::Mutex::default(),
        }
    }

    /// The call failed: the text it had shown, as a `partial` `agent-text` (nothing when it
    /// showed none).
    pub fn partial(&self) {
        let text = std::mem::take(
            &mut *self
                .shown
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        if !text.trim().is_empty() {
            self.emitter.emit(
                Some(&self.session),
                Event::AgentText {
                    state: self.state.clone(),
                    text,
                    message_id: None,
                    partial: Some(true),
                },
            );
        }
    }
}

impl crate::model::TextSink for TextDeltas {
    fn fell_back(&self, from: &str, to: &str, reason: &str) {
        self.emitter.emit(
            Some(&self.session),
            Event::ModelFallback {
                state: self.state.clone(),
                from: from.to_string(),
                to: to.to_string(),
                reason: reason.to_string(),
            },
        );
    }

    fn queued(&self, waited: std::time::Duration, limit: u32) {
        self.emitter.emit(
            Some(&self.session),
            Event::ModelQueued {
                state: self.state.clone(),
                waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX),
                limit,
            },
        );
    }

    fn text(&self, delta: &str) {
        self.shown
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push_str(delta);
        self.emitter.emit(
            Some(&self.session),
            Event::AgentTextDelta {
                state: self.state.clone(),
                text: delta.to_string(),
                message_id: Some(self.message_id.clone()),
            },
        );
    }
}

impl std::fmt::Debug for Emitter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emitter").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    #[derive(Default)]
    struct Keep(Mutex<Vec<String>>);

    impl EventSink for Keep {
        fn emit(&self, event: &Envelope) {
            if let (Ok(mut v), Ok(text)) = (self.0.lock(), serde_json::to_string(event)) {
                v.push(text);
            }
        }
    }

    #[test]
    fn a_control_tools_refusal_is_read_from_its_answer() {
        let result = |tool: &str, output: &str| Event::ToolResult {
            state: "classify".into(),
            tool: tool.into(),
            call_id: "c1".into(),
            status: "ok".into(),
            duration_ms: 0,
            output: output.into(),
            truncated: false,
            origin: None,
        };
        assert_eq!(
            result(
                "archmax_advance",
                "archmax_advance rejected: cannot advance from 'classify' to 'refund-approved'."
            )
            .control_refusal(),
            Some((
                "archmax_advance",
                "cannot advance from 'classify' to 'refund-approved'."
            ))
        );
        assert_eq!(
            result("archmax_advance", "Advanced to state 'b'.").control_refusal(),
            None
        );
        assert_eq!(
            result("archmax_wait", "archmax_advance rejected: x").control_refusal(),
            None,
            "another tool's words"
        );
        assert_eq!(
            result("read_file", "read_file rejected: x").control_refusal(),
            None,
            "only the runtime's own tools answer so"
        );
    }

    #[test]
    fn an_event_naming_its_session_writes_session_id_once_and_that_one_wins() {
        let keep = Arc::new(Keep::default());
        let emitter = Emitter::new(keep.clone());
        emitter.emit(
            Some("bound"),
            Event::Decided {
                state: "review".into(),
                to: "done".into(),
                session_id: "own".into(),
            },
        );
        emitter.emit(Some("bound"), Event::StateEnter { state: "a".into() });
        let lines = keep.0.lock().map(|v| v.clone()).unwrap_or_default();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].matches("\"sessionId\"").count(), 1, "{}", lines[0]);
        assert!(lines[0].contains("\"sessionId\":\"own\""), "{}", lines[0]);
        assert!(lines[1].contains("\"sessionId\":\"bound\""), "{}", lines[1]);
    }

    #[test]
    fn deltas_are_events_in_order_and_a_failed_call_reports_what_it_showed_once() {
        use crate::model::TextSink;
        let keep = Arc::new(Keep::default());
        let deltas = TextDeltas::new(Emitter::new(keep.clone()), "s1", "draft", "msg_1");
        deltas.text("Hel");
        deltas.text("lo");
        deltas.partial();
        deltas.partial();
        let lines = keep.0.lock().map(|v| v.clone()).unwrap_or_default();
        let events: Vec<Value> = lines
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let shape: Vec<(String, String, Value, Value)> = events
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap_or_default().to_string(),
                    e["text"].as_str().unwrap_or_default().to_string(),
                    e["messageId"].clone(),
                    e["partial"].clone(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                (
                    "agent-text-delta".into(),
                    "Hel".into(),
                    Value::from("msg_1"),
                    Value::Null
                ),
                (
                    "agent-text-delta".into(),
                    "lo".into(),
                    Value::from("msg_1"),
                    Value::Null
                ),
                (
                    "agent-text".into(),
                    "Hello".into(),
                    Value::Null,
                    Value::Bool(true)
                ),
            ]
        );
        assert!(
            events
                .iter()
                .all(|e| e["sessionId"] == "s1" && e["state"] == "draft")
        );
    }
}
