//! The loop: until the turn completes, is rejected, fails or parks: the entry gate,
//! budgets, the model call, then the response's tool calls or its completion. Every step is
//! committed before the next one starts.

use serde_json::{Value, json};

use tracing::Instrument;

use crate::cancel::{Raced, race};
use crate::error::RunError;
use crate::events::Event;
use crate::hooks::Phase;
use crate::outcome::Outcome;
use crate::state::Status;

use super::Mode;
use super::dispatch::unique_call_ids;
use super::gates::Gate;
use super::{Turn, step_limit};

impl Turn<'_> {
    /// The loop, until the turn completes, is rejected or fails, inside the turn's span
    /// (its outcome recorded on it); each step inside its state segment's span.
    pub(super) async fn run(mut self) -> Result<Outcome, RunError> {
        self.spans.turn = self.turn_span();
        let turn_span = self.spans.turn.clone();
        let out = self.run_loop().instrument(turn_span.clone()).await;
        if !turn_span.is_disabled() {
            match &out {
                Ok(o) => {
                    let word = crate::trace::outcome_word(o.kind);
                    tracing::info!(parent: &turn_span, outcome = word, state = o.state.as_str(), "turn ended");
                    turn_span.record("archmax.outcome", word);
                    turn_span.record("archmax.status", o.status);
                    if o.kind != crate::outcome::OutcomeKind::Completed {
                        turn_span.record("archmax.state", o.state.as_str());
                    }
                }
                Err(e) => {
                    tracing::error!(parent: &turn_span, error = %e, "turn failed");
                    turn_span.record("otel.status_code", "ERROR");
                    turn_span.record("error.type", e.to_string().as_str());
                }
            }
        }
        out
    }

    async fn run_loop(mut self) -> Result<Outcome, RunError> {
        let limit = if self.h.plain {
            crate::plain::PLAIN_MAX_MODEL_CALLS
        } else {
            step_limit(self.max_model_calls())
        };
        loop {
            let segment = self
                .spans
                .segment(self.id.as_str(), &self.session.workflow_state);
            match self.step(limit).instrument(segment).await? {
                Flow::Next => continue,
                Flow::Stop => break,
            }
        }
        self.park_trace();
        self.commit().await?;
        Ok(self.outcome())
    }

    /// One step of the loop: the entry gate, the budgets, a model call and what it asked for.
    async fn step(&mut self, limit: u64) -> Result<Flow, RunError> {
        if self.session.status.is_finished() {
            return Ok(Flow::Stop);
        }
        if self.session.park.is_none()
            && self.session.status == Status::Running
            && !self.session.pending_delegations.is_empty()
        {
            // A child of this turn's calls parked: the caller parks with it.
            self.present_child(crate::park::ReplyCase::HandedOver);
        }
        if self.session.park.is_some() {
            match self.mode {
                // The park's one reply-only message: tools stay listed, every call is refused.
                Mode::OwesReply => self.mode = Mode::ReplyOnly,
                Mode::ReplyOnly => {}
                Mode::Work => return Ok(Flow::Stop),
            }
        } else if self.session.status != Status::Running {
            return Ok(Flow::Stop);
        }
        if self.cancel.is_cancelled() {
            self.fail_cancelled().await?;
            return Ok(Flow::Stop);
        }
        if self.mode != Mode::ReplyOnly
            && let Some(reason) = self.entry_gate().await
        {
            let here = self.session.workflow_state.clone();
            self.transcript.push(json!({ "role": "assistant", "content": format!("Request rejected before the '{here}' state could run: {reason}") }));
            self.route_failure(&reason).await?;
            return Ok(Flow::Next);
        }
        if self.mode != Mode::ReplyOnly
            && let Some(reason) = self.budget_exhausted()
        {
            self.route_failure(&reason).await?;
            return Ok(Flow::Next);
        }
        self.steps += 1;
        if self.steps > limit {
            self.fail(
                "recursion-limit",
                &format!("the turn exceeded its step limit ({limit} steps)"),
            )
            .await?;
            return Ok(Flow::Stop);
        }
        self.list_mcp().await;
        let request = self.request();
        let msg_id = format!("msg_{}_{}", self.transcript.len(), crate::clock::now_ms());
        let shown = crate::events::TextDeltas::new(
            self.emitter.clone(),
            self.id.as_str(),
            &self.session.workflow_state,
            &msg_id,
        );
        let chat = crate::trace::chat_span(&request.model);
        let first = crate::trace::FirstToken::new(&shown);
        if crate::trace::capture_content(&chat) {
            chat.record(
                "gen_ai.input.messages",
                serde_json::to_string(&request.messages)
                    .unwrap_or_default()
                    .as_str(),
            );
        }
        let raced = race(
            &self.cancel,
            self.segment_left(),
            self.h
                .model
                .stream(&request, &first)
                .instrument(chat.clone()),
        )
        .await;
        record_chat(&chat, &raced, first.seconds());
        if !matches!(raced, Raced::Done(Ok(_))) {
            shown.partial();
        }
        // The conversation moves back out of the request (no per-call copy), unless the
        // request was a copy with images added (no lineage).
        if request.lineage.is_some() {
            self.transcript.give_back(request.messages);
        }
        let response = match raced {
            Raced::Done(Ok(r)) => r,
            Raced::Done(Err(e)) => {
                self.fail("turn-error", &e.to_string()).await?;
                return Ok(Flow::Stop);
            }
            Raced::TimedOut => {
                let reason = self.timeout_reason().unwrap_or_default();
                self.route_failure(&reason).await?;
                return Ok(Flow::Next);
            }
            Raced::Cancelled => {
                self.fail_cancelled().await?;
                return Ok(Flow::Stop);
            }
        };
        self.session.state_turns += 1;
        self.session.turn_model_calls += 1;
        self.record_usage(&response);
        let calls = unique_call_ids(response.message.tool_calls.clone(), &mut self.call_ids);
        let text = response.message.content.clone().unwrap_or_default();
        let mut assistant = json!({ "role": "assistant", "content": text });
        if !calls.is_empty() {
            assistant["tool_calls"] = Value::Array(
                calls.iter().map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } })).collect(),
            );
        }
        self.transcript.push(assistant);
        if !text.trim().is_empty() {
            self.emit(Event::AgentText {
                state: self.session.workflow_state.clone(),
                text: text.clone(),
                message_id: Some(msg_id),
                partial: None,
            });
        }
        if self.mode == Mode::ReplyOnly {
            // Any call of a reply-only turn is refused; the session stays parked either way.
            self.run_batch(&calls).await;
            // Only an answer to a person is a message to them from the park: the text
            // handing the run over (after a tool result or a runtime note) is not.
            let answers_person = self
                .transcript
                .messages()
                .iter()
                .rev()
                .nth(1 + calls.len())
                .is_some_and(|m| {
                    m.get("role").and_then(Value::as_str) == Some("user")
                        && m.get("archmax").is_none()
                });
            if calls.is_empty()
                && answers_person
                && !text.trim().is_empty()
                && let Some(state) = self.parked_state()
            {
                self.emit(Event::ParkMessage {
                    state,
                    session_id: self.id.as_str().to_string(),
                    direction: "outbound".into(),
                    text: text.clone(),
                });
            }
            self.mode = Mode::Work;
            self.commit().await?;
            return Ok(Flow::Stop);
        }
        if calls.is_empty() {
            // Delegations that failed and were not recovered fail the state now that
            // the model has finished (the original's `pendingFailure`).
            if let Some(reason) = self.take_failures()
                && self.session.rejected.is_none()
            {
                self.session.rejected = Some(reason);
            }
            let here = self.session.workflow_state.clone();
            let terminal = self
                .h
                .spec
                .states
                .get(&here)
                .is_some_and(|s| s.is_terminal());
            if terminal && self.session.rejected.is_none() {
                match self.run_hooks(&here, Phase::After, None, None).await {
                    Gate::Pass => {}
                    Gate::Block(r) => {
                        // The completion check did not pass: the agent revises in place.
                        self.transcript.note(crate::notes::NoteKind::After, &format!("[after] The '{here}' completion check did not pass: {r}. Revise your work and produce a corrected final response."));
                        self.commit().await?;
                        return Ok(Flow::Next);
                    }
                    Gate::Fail(r) => {
                        self.route_failure(&r).await?;
                        return Ok(Flow::Next);
                    }
                }
            }
            self.complete().await?;
            // A failure routed at completion jumps back to the model: the handler's
            // segment runs, or, at a human handler, the park's one message is owed.
            if self.session.status == Status::Running
                || (self.session.park.is_some() && self.mode == Mode::OwesReply)
            {
                return Ok(Flow::Next);
            }
            return Ok(Flow::Stop);
        }
        self.run_batch(&calls).await;
        // A terminal failure of this step (a hook that could not run, an exhausted park
        // budget, an unevaluable guard) stays committed as `rejected`: the model reads
        // the refusal and goes on in this state, and the failure routes once it has
        // finished its segment (text without a tool call, `complete`), as the original's
        // `afterModel` does. The state does not move under the model's feet.
        if self.session.park.is_some() && self.session.rejected.is_some() {
            // A park refused by its budget: the failure routes instead.
            let reason = self.session.rejected.clone().unwrap_or_default();
            self.session.park = None;
            self.session.status = Status::Running;
            self.route_failure(&reason).await?;
            return Ok(Flow::Next);
        }
        self.commit().await?;
        Ok(Flow::Next)
    }
}

/// What a model call came to, on its span.
fn record_chat(
    span: &tracing::Span,
    raced: &Raced<Result<crate::model::ChatResponse, crate::model::ModelError>>,
    first_token: Option<f64>,
) {
    if span.is_disabled() {
        return;
    }
    match raced {
        Raced::Done(Ok(r)) => {
            if let Some(model) = &r.model {
                span.record("gen_ai.response.model", model.as_str());
            }
            if let Some(u) = &r.usage {
                // As `i64`: the OpenTelemetry bridge sends a `u64` as a string.
                let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
                span.record("gen_ai.usage.input_tokens", count(u.input_tokens));
                span.record("gen_ai.usage.output_tokens", count(u.output_tokens));
            }
            if let Some(reason) = &r.finish_reason {
                span.record(
                    "gen_ai.response.finish_reasons",
                    json!([reason]).to_string().as_str(),
                );
            }
            if let Some(s) = first_token {
                span.record("gen_ai.server.time_to_first_token", s);
            }
            if crate::trace::capture_content(span) {
                let out = json!([{ "role": "assistant", "content": r.message.content, "tool_calls": r.message.tool_calls }]);
                span.record("gen_ai.output.messages", out.to_string().as_str());
            }
        }
        Raced::Done(Err(e)) => {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", e.to_string().as_str());
        }
        Raced::TimedOut => {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", "timeout");
        }
        Raced::Cancelled => {
            span.record("otel.status_code", "ERROR");
            span.record("error.type", "cancelled");
        }
    }
}

/// Whether the loop goes on after a step.
enum Flow {
    Next,
    Stop,
}
