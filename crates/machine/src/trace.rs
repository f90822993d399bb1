//! The runtime's `tracing` spans: one per turn, state segment, model call, tool call, hook
//! and park, named and attributed after OpenTelemetry's GenAI semantic conventions
//! (`docs/telemetry.md` has the tree). The core only opens spans; a host that wants them
//! installs a subscriber (`archmax-telemetry`). Without one, every span is `tracing`'s
//! disabled fast path: no field is evaluated, nothing is formatted.
//!
//! Two things need the host's OpenTelemetry context, which the core does not link: the W3C
//! `traceparent` a park stores (so the process that resumes the session links its turn to
//! the one that parked it) and the span link itself. The host provides both through
//! [`install`]; without it, a park stores nothing and a resume links nothing.
//!
//! ```
//! use archmax_machine::trace;
//! // The default: nothing installed, message contents off.
//! assert!(!trace::capture_content(&tracing::Span::none()));
//! assert_eq!(trace::traceparent(&tracing::Span::none()), None);
//! ```

use std::sync::OnceLock;

/// What the host's telemetry does with span contexts the core cannot see.
pub trait Propagation: Send + Sync {
    /// The W3C `traceparent` of `span`, when it is recorded.
    fn traceparent(&self, span: &tracing::Span) -> Option<String>;
    /// Links `span` to the span `traceparent` names (a resumed turn to its park's turn).
    fn link(&self, span: &tracing::Span, traceparent: &str);
    /// Whether `span`'s subscriber records message contents.
    fn capture_content(&self, span: &tracing::Span) -> bool;
}

static PROPAGATION: OnceLock<Box<dyn Propagation>> = OnceLock::new();

/// Installs the host's propagation, once per process (a second call keeps the first).
pub fn install(propagation: Box<dyn Propagation>) {
    let _ = PROPAGATION.set(propagation);
}

/// Whether `span`'s subscriber records message contents (`gen_ai.input.messages`,
/// `gen_ai.output.messages`): the host's `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`.
/// Asked of the span's own subscriber, so two hosts in one process can differ.
pub fn capture_content(span: &tracing::Span) -> bool {
    !span.is_disabled() && PROPAGATION.get().is_some_and(|p| p.capture_content(span))
}

/// The `traceparent` of `span`, through the installed propagation.
pub fn traceparent(span: &tracing::Span) -> Option<String> {
    if span.is_disabled() {
        return None;
    }
    PROPAGATION.get()?.traceparent(span)
}

/// Links `span` to `traceparent`, through the installed propagation.
pub fn link(span: &tracing::Span, traceparent: &str) {
    if span.is_disabled() {
        return;
    }
    if let Some(p) = PROPAGATION.get() {
        p.link(span, traceparent);
    }
}

/// The spans a turn holds open: its own and the current state segment's.
pub(crate) struct TurnSpans {
    pub(crate) turn: tracing::Span,
    /// The segment of `segment_state`, a child of `turn`.
    pub(crate) segment: tracing::Span,
    pub(crate) segment_state: String,
}

impl TurnSpans {
    pub(crate) fn none() -> Self {
        TurnSpans {
            turn: tracing::Span::none(),
            segment: tracing::Span::none(),
            segment_state: String::new(),
        }
    }

    /// The segment span of `state`, opening a new one (and closing the last) when the
    /// position moved since.
    pub(crate) fn segment(&mut self, session_id: &str, state: &str) -> tracing::Span {
        if self.segment_state != state || self.segment.is_none() {
            self.segment_state = state.to_string();
            self.segment = tracing::info_span!(
                parent: &self.turn,
                "archmax.state",
                otel.name = %format_args!("state {state}"),
                archmax.session.id = session_id,
                archmax.state = state,
            );
        }
        self.segment.clone()
    }
}

/// The model call's span (`chat {model}`), a child of the current span.
pub(crate) fn chat_span(model: &str) -> tracing::Span {
    tracing::info_span!(
        "gen_ai.chat",
        otel.name = %format_args!("chat {model}"),
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        gen_ai.operation.name = "chat",
        gen_ai.request.model = model,
        gen_ai.response.model = tracing::field::Empty,
        archmax.model.fallback = tracing::field::Empty,
        gen_ai.usage.input_tokens = tracing::field::Empty,
        gen_ai.usage.output_tokens = tracing::field::Empty,
        gen_ai.response.finish_reasons = tracing::field::Empty,
        gen_ai.server.time_to_first_token = tracing::field::Empty,
        gen_ai.input.messages = tracing::field::Empty,
        gen_ai.output.messages = tracing::field::Empty,
        error.type = tracing::field::Empty,
    )
}

/// A tool call's span (`execute_tool {name}`), a child of the current span.
pub(crate) fn tool_span(name: &str, call_id: &str) -> tracing::Span {
    tracing::info_span!(
        "gen_ai.execute_tool",
        otel.name = %format_args!("execute_tool {name}"),
        otel.status_code = tracing::field::Empty,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        archmax.governance.decision = tracing::field::Empty,
        archmax.governance.rule = tracing::field::Empty,
        archmax.tool.status = tracing::field::Empty,
        archmax.tool.duration_ms = tracing::field::Empty,
        archmax.mcp.server = tracing::field::Empty,
        archmax.mcp.tool = tracing::field::Empty,
    )
}

/// Names an MCP tool's server and tool on its call's span.
pub(crate) fn record_mcp(span: &tracing::Span, mcp: Option<&crate::events::McpRef>) {
    if let Some(m) = mcp.filter(|_| !span.is_disabled()) {
        span.record("archmax.mcp.server", m.server.as_str());
        span.record("archmax.mcp.tool", m.tool.as_str());
    }
}

/// A hook's span (`hook {phase} {label}`), a child of the current span.
pub(crate) fn hook_span(state: &str, phase: &str, kind: &str, label: &str) -> tracing::Span {
    tracing::info_span!(
        "archmax.hook",
        otel.name = %format_args!("{kind} {phase} {label}"),
        otel.status_code = tracing::field::Empty,
        archmax.state = state,
        archmax.hook.phase = phase,
        archmax.hook.kind = kind,
        archmax.hook.name = label,
        archmax.hook.verdict = tracing::field::Empty,
        archmax.hook.reason = tracing::field::Empty,
    )
}

/// Records a finished tool call on its span: the outcome and how long it ran.
pub(crate) fn record_tool(span: &tracing::Span, ok: bool, started: std::time::Instant) {
    if span.is_disabled() {
        return;
    }
    span.record("archmax.tool.status", if ok { "ok" } else { "error" });
    span.record(
        "archmax.tool.duration_ms",
        started.elapsed().as_secs_f64() * 1000.0,
    );
    if !ok {
        span.record("otel.status_code", "ERROR");
    }
}

/// A text sink that notes when the first text arrived (time to first token).
pub(crate) struct FirstToken<'a> {
    inner: &'a dyn crate::model::TextSink,
    started: std::time::Instant,
    first: OnceLock<std::time::Duration>,
}

impl<'a> FirstToken<'a> {
    pub(crate) fn new(inner: &'a dyn crate::model::TextSink) -> Self {
        FirstToken {
            inner,
            started: std::time::Instant::now(),
            first: OnceLock::new(),
        }
    }

    /// Seconds from the call to its first text, if any text came.
    pub(crate) fn seconds(&self) -> Option<f64> {
        self.first.get().map(std::time::Duration::as_secs_f64)
    }
}

impl crate::model::TextSink for FirstToken<'_> {
    fn fell_back(&self, from: &str, to: &str, reason: &str) {
        self.inner.fell_back(from, to, reason);
    }

    fn queued(&self, waited: std::time::Duration, limit: u32) {
        self.inner.queued(waited, limit);
    }

    fn text(&self, delta: &str) {
        if self.first.get().is_none() {
            let _ = self.first.set(self.started.elapsed());
        }
        self.inner.text(delta);
    }
}

/// The outcome as its span records it: `completed`, `parked`, `rejected`, `failed`.
pub(crate) fn outcome_word(kind: crate::outcome::OutcomeKind) -> &'static str {
    use crate::outcome::OutcomeKind;
    match kind {
        OutcomeKind::Completed => "completed",
        OutcomeKind::Parked => "parked",
        OutcomeKind::Rejected => "rejected",
        OutcomeKind::Failed => "failed",
    }
}
