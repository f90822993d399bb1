//! The hook gates: a state's `before` hooks once per visit, its `after` hooks at a move or at
//! completion, each verdict reduced by its hook's correction budget.
//!
//! State it changes: the session's correction counters (`iterations`) and the visit's
//! `before_done`.

use archmax_kernel::Origin;
use tracing::Instrument;

use crate::events::Event;
use crate::hooks::{HookInput, Phase, Verdict};

use super::Turn;

/// A hook as events and the CLI name it: a script by its path, a rubric by its
/// position, a custom kind as `kind:value`.
fn hook_label(hook: &archmax_spec::model::Hook, index: usize) -> String {
    match hook {
        archmax_spec::model::Hook::Script { script, .. } => script.clone(),
        archmax_spec::model::Hook::Rubric { .. } => format!("rubric#{index}"),
        archmax_spec::model::Hook::Custom(m) => m
            .iter()
            .map(|(k, v)| format!("{k}:{v}"))
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// What a phase's hooks decided, after the correction budgets.
pub(super) enum Gate {
    /// Every hook passed.
    Pass,
    /// A recoverable refusal: the agent stays and retries.
    Block(String),
    /// A terminal failure: routed through `on_error`.
    Fail(String),
}

impl Turn<'_> {
    /// Runs a state's hooks of one phase in order, stopping at the first non-ok, and
    /// reduces the verdict with each hook's correction budget (`max_iterations`,
    /// counted per hook position in the session state).
    pub(super) async fn run_hooks(
        &mut self,
        state: &str,
        phase: Phase,
        to: Option<&str>,
        reason: Option<&str>,
    ) -> Gate {
        let Some(st) = self.h.spec.states.get(state) else {
            return Gate::Pass;
        };
        let spec = match phase {
            Phase::Before => &st.before,
            Phase::After => &st.after,
        };
        let Some(spec) = spec.clone() else {
            return Gate::Pass;
        };
        // A hook may call the MCP tools of the state it gates.
        self.list_mcp().await;
        let variables = self.session.kernel_variables();
        // Governed against the session's state at the last model call: the source
        // state while a move is in its veto window, even for the target's hooks.
        let (tools, _) = self.script_tools(Origin::Lifecycle, variables.clone(), self.workspace());
        for (index, hook) in spec.hooks().iter().enumerate() {
            let input = HookInput {
                session_id: self.id.as_str().to_string(),
                state: state.to_string(),
                phase,
                index,
                trigger: self.session.trigger.clone(),
                variables: variables.clone(),
                to: to.map(str::to_string),
                reason: reason.map(str::to_string),
                user_request: self.transcript.first_user_message(),
                history: self.transcript.history(),
                tools: Some(tools.clone()),
            };
            let label = if matches!(hook, archmax_spec::model::Hook::Rubric { .. }) {
                "rubric"
            } else {
                "hook"
            };
            let key = format!("{state}::{}::{index}", phase.as_str());
            let shown = hook_label(hook, index);
            self.emit(Event::HookStart {
                state: state.to_string(),
                phase: phase.as_str().into(),
                label: shown.clone(),
            });
            let span = crate::trace::hook_span(state, phase.as_str(), label, &shown);
            let verdict = self
                .h
                .hooks
                .run(hook, input)
                .instrument(span.clone())
                .await
                .bounded();
            record_verdict(&span, &verdict);
            let (word, why) = match &verdict {
                Verdict::Ok(r) => ("ok", r.clone()),
                Verdict::Correct(r) => ("correct", r.clone()),
                Verdict::Veto(r) => ("veto", r.clone()),
                Verdict::Error(e) => {
                    self.emit(Event::HookRejected {
                        state: state.to_string(),
                        phase: phase.as_str().into(),
                        reason: e.clone(),
                    });
                    ("", String::new())
                }
            };
            if !word.is_empty() {
                self.emit(Event::HookVerdict {
                    state: state.to_string(),
                    phase: phase.as_str().into(),
                    label: shown,
                    verdict: word.into(),
                    reason: why,
                });
            }
            let gate = match verdict {
                Verdict::Ok(_) => {
                    self.session.iterations.remove(&key);
                    continue;
                }
                Verdict::Error(e) => return Gate::Fail(e),
                Verdict::Veto(r) if phase == Phase::Before => Gate::Block(r),
                Verdict::Correct(r) if phase == Phase::Before => Gate::Block(format!(
                    "before hooks cannot request corrections ('correct' gates nothing at entry, treated as veto): {r}"
                )),
                Verdict::Veto(r) => Gate::Block(format!("{label} veto: {r}")),
                Verdict::Correct(r) => {
                    let max = hook.max_iterations().unwrap_or(0);
                    let used = self.session.iterations.get(&key).copied().unwrap_or(0);
                    if used >= max {
                        Gate::Fail(format!(
                            "{label} veto: reply still incomplete after {max} attempt(s) — {r}"
                        ))
                    } else {
                        self.session.iterations.insert(key, used + 1);
                        let call = match to {
                            Some(t) => format!("archmax_advance({{ to: \"{t}\" }})"),
                            None => "archmax_advance".to_string(),
                        };
                        Gate::Block(format!(
                            "{label}: reply incomplete — {r}. Update your answer and call {call} again. ({} attempt(s) remaining)",
                            max - used - 1
                        ))
                    }
                }
            };
            // A verdict that refuses is announced as the original does: `hook-rejected`
            // with the reason the agent reads.
            if let Gate::Block(r) | Gate::Fail(r) = &gate {
                self.emit(Event::HookRejected {
                    state: state.to_string(),
                    phase: phase.as_str().into(),
                    reason: r.clone(),
                });
            }
            return gate;
        }
        Gate::Pass
    }

    /// The entry gate of the current state, once per visit, before its first model call.
    /// `Some(reason)` when it refused (the turn routes the failure).
    pub(super) async fn entry_gate(&mut self) -> Option<String> {
        if self.visit.before_done {
            return None;
        }
        self.visit.before_done = true;
        let here = self.session.workflow_state.clone();
        match self.run_hooks(&here, Phase::Before, None, None).await {
            Gate::Pass => None,
            Gate::Block(r) | Gate::Fail(r) => Some(r),
        }
    }
}

/// A hook's verdict on its span (`ok`, `correct`, `veto`, `error`).
fn record_verdict(span: &tracing::Span, verdict: &Verdict) {
    if span.is_disabled() {
        return;
    }
    let (word, reason) = match verdict {
        Verdict::Ok(r) => ("ok", r),
        Verdict::Correct(r) => ("correct", r),
        Verdict::Veto(r) => ("veto", r),
        Verdict::Error(e) => ("error", e),
    };
    span.record("archmax.hook.verdict", word);
    // A reason may quote the conversation: recorded only where message contents are.
    if !reason.is_empty() && crate::trace::capture_content(span) {
        span.record("archmax.hook.reason", reason.as_str());
    }
    if word == "error" {
        span.record("otel.status_code", "ERROR");
    }
}
