//! The turn boundary of a fresh turn: position, trigger, locked seeds, the spec snapshot,
//! the trigger's `requires`, and the first commit; or, for a disabled workflow reached
//! through `invoke`, the `rejected` settlement in their place.
//!
//! State it changes: the session (position, seeds, status, budgets' counters) and the
//! signature.

use archmax_spec::signature::{signature_for_trigger, signature_value_issues};
use serde_json::{Map, Value, json};

use crate::error::RunError;
use crate::events::Event;
use crate::state::{Exit, LockedBy, Status, Variable};

use super::{SendInput, Turn};

impl Turn<'_> {
    /// A fresh turn through `invoke` on a disabled workflow: settled `rejected` at the turn
    /// boundary with a warning, before any hook or model call (the input is kept).
    pub(super) async fn refuse_disabled(
        &mut self,
        trigger: &str,
        start: &str,
        prior: Vec<Value>,
        input: &SendInput,
    ) -> Result<(), RunError> {
        let reason = format!(
            "Refusing to start: workflow '{}' is disabled.",
            self.h.workflow
        );
        let s = &mut self.session;
        s.workflow = self.h.workflow.clone();
        if s.workflow_state.is_empty() || !self.h.spec.states.contains_key(&s.workflow_state) {
            s.workflow_state = start.to_string();
        }
        if s.entry_state.is_empty() {
            s.entry_state = s.workflow_state.clone();
        }
        s.trigger = trigger.to_string();
        s.status = Status::Rejected;
        s.rejected = Some(reason.clone());
        s.exit = None;
        self.emit(Event::Warning {
            scope: "workflow".into(),
            message: reason,
        });
        for m in prior {
            self.transcript.push(m);
        }
        self.transcript
            .push(json!({ "role": "user", "content": input.message.trim() }));
        self.commit().await
    }

    /// The turn boundary: position, trigger, seeds, signature check, first commit.
    pub(super) async fn open(
        &mut self,
        trigger: &str,
        start: &str,
        prior: Vec<Value>,
        input: &SendInput,
    ) -> Result<(), RunError> {
        let h = self.h;
        let s = &mut self.session;
        if s.status == Status::Running && !s.workflow_state.is_empty() {
            // The process running the previous turn stopped mid-turn: that turn failed.
            s.status = Status::Failed;
            s.exit = Some(Exit {
                code: "turn-error".into(),
                reason: "the process running the previous turn stopped before the turn finished"
                    .into(),
            });
        }
        s.workflow = h.workflow.clone();
        let reopening =
            !s.workflow_state.is_empty() && !h.spec.states.contains_key(&s.workflow_state);
        if s.workflow_state.is_empty() || reopening {
            s.workflow_state = start.to_string();
        }
        if s.entry_state.is_empty() {
            s.entry_state = s.workflow_state.clone();
        }
        if reopening {
            let entry = s.entry_state.clone();
            self.emit(Event::WorkflowReset { entry });
        }
        self.session.trigger = trigger.to_string();
        if self.session.spec_hash != h.spec_hash {
            // The turn's start wrote it (`Harness::begin`); if that failed, it is tried
            // again here, where a failure fails the turn. Once written: no hand-off.
            if !h.spec_snapshot.written() {
                let snapshot = std::sync::Arc::clone(&h.spec_snapshot);
                h.store_io(move |store| snapshot.ensure(store)).await??;
            }
            self.session.spec_hash = h.spec_hash.clone();
        }
        let s = &mut self.session;
        let mut seeded_title = None;
        for (k, v) in &input.variables {
            if k == "title" {
                // An opening label: it loses to a title the session holds, and stays
                // unlocked so the agent can correct it.
                if !s.variables.contains_key("title") {
                    seeded_title = v.as_str().map(str::to_string);
                    s.variables.insert(
                        k.clone(),
                        Variable {
                            value: v.clone(),
                            locked_by: None,
                        },
                    );
                }
                continue;
            }
            s.variables.insert(
                k.clone(),
                Variable {
                    value: v.clone(),
                    locked_by: Some(LockedBy::Host),
                },
            );
        }
        s.variables.insert(
            "trigger".into(),
            Variable {
                value: Value::String(trigger.to_string()),
                locked_by: Some(LockedBy::Host),
            },
        );
        s.status = Status::Running;
        s.rejected = None;
        s.exit = None;
        // A turn boundary starts every park budget over (the original's `parkCounts: {}`).
        s.park_counts.clear();
        // A fresh turn abandons the children still queued (and the one presented, which
        // is no park of this session's own): what they waited on is over.
        if s.presented_child().is_some() {
            s.park = None;
        }
        s.pending_delegations.clear();
        s.state_turns = 0;
        s.turn_model_calls = 0;
        s.budget_warned = false;
        s.budget_routed = false;
        s.cap_routed = false;
        s.turn_usage = crate::state::Usage::default();
        let here = s.workflow_state.clone();
        self.signature = signature_for_trigger(&h.spec_json, trigger);
        self.emit(Event::Advance {
            from: "__start__".into(),
            to: here.clone(),
            reason: None,
            call_id: None,
        });
        if let Some(title) = seeded_title {
            self.emit(Event::TitleSet {
                title,
                state: None,
                call_id: None,
            });
        }
        if let Some(reason) = self.requires_refusal(trigger) {
            // The arrival is on the trail; the state is never entered.
            self.trail(&here, "trigger", Some(trigger));
            self.emit(Event::Warning {
                scope: "workflow".into(),
                message: reason.clone(),
            });
            self.session.status = Status::Rejected;
            self.session.rejected = Some(reason);
            return self.commit().await;
        }
        // A turn opened at a human state presents the decision again on a fresh record
        // (`seq` + 1): the run owes the person one message, then waits where it stood.
        self.enter(
            &here,
            super::moves::Entry {
                by: "trigger",
                reason: Some(trigger),
                moving: false,
                at_human: Some((crate::park::ReplyCase::PersonWrote, Vec::new())),
            },
        );
        for m in prior {
            self.transcript.push(m);
        }
        self.transcript
            .push(json!({ "role": "user", "content": input.message.trim() }));
        self.commit().await
    }

    /// The trigger's `requires` against the seeds: the refusal text, if any.
    pub(super) fn requires_refusal(&self, trigger: &str) -> Option<String> {
        let sig = self.signature.as_ref()?;
        let values: Map<String, Value> = self
            .session
            .variables
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect();
        let missing: Vec<String> = sig
            .requires
            .iter()
            .filter(|e| !values.contains_key(&e.name))
            .map(|e| format!("'{}'", e.name))
            .collect();
        let typed: Vec<_> = sig
            .requires
            .iter()
            .filter(|e| e.ty.is_some() && values.contains_key(&e.name))
            .cloned()
            .collect();
        let invalid: Vec<String> = signature_value_issues(&typed, &values)
            .into_iter()
            .map(|i| i.message)
            .collect();
        let typed_text = |lead: &str| {
            format!(
                "{lead} declares typed inputs this firing does not satisfy: {}.",
                invalid.join("; ")
            )
        };
        match (missing.is_empty(), invalid.is_empty()) {
            (true, true) => None,
            (false, true) => Some(format!(
                "Refusing to start: trigger '{trigger}' requires {}, which this firing does not supply.",
                missing.join(", ")
            )),
            (true, false) => Some(typed_text(&format!(
                "Refusing to start: trigger '{trigger}'"
            ))),
            (false, false) => Some(format!(
                "Refusing to start: trigger '{trigger}' requires {}, which this firing does not supply. It also {}",
                missing.join(", "),
                typed_text("").trim_start()
            )),
        }
    }
}
