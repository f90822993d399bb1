//! How a turn's segment ends: completion (returns checked first), a terminal failure
//! routed through `on_error`, or the session failed with an exit code.
//!
//! State it changes: the session's position (to the error handler), status, `rejected` and
//! exit, and the visit when it routes.

use archmax_spec::signature::signature_value_issues;
use serde_json::{Map, Value};

use crate::cancel::CANCELLED_REASON;
use crate::error::RunError;
use crate::events::Event;
use crate::state::{Exit, Status};

use super::Turn;

impl Turn<'_> {
    /// Text without a tool call: the turn completes (returns checked first).
    pub(super) async fn complete(&mut self) -> Result<(), RunError> {
        let here = self.session.workflow_state.clone();
        if let Some(reason) = self.session.rejected.clone() {
            return self.route_failure(&reason).await;
        }
        // A child's unset returns are its caller's note, and their types the caller's
        // `invalid-return` check (`delegate`): the child completes.
        if let Some(reason) = self
            .returns_shortfall(&here)
            .filter(|_| self.chain.len() < 2)
        {
            self.session.status = Status::Rejected;
            self.session.rejected = Some(reason);
            return self.commit().await;
        }
        if !self.h.plain {
            self.emit(Event::StateLeave {
                state: here.clone(),
                next: here,
            });
        }
        self.session.status = Status::Completed;
        self.commit().await
    }

    pub(super) fn returns_shortfall(&self, here: &str) -> Option<String> {
        let sig = self.signature.as_ref()?;
        if sig.returns.is_empty() {
            return None;
        }
        let values: Map<String, Value> = self
            .session
            .variables
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect();
        let t = &self.session.trigger;
        let unset: Vec<String> = sig
            .returns
            .iter()
            .filter(|e| !values.contains_key(&e.name))
            .map(|e| format!("'{}'", e.name))
            .collect();
        if !unset.is_empty() {
            let pronoun = if unset.len() == 1 { "it" } else { "them" };
            return Some(format!(
                "Completed in state '{here}' without setting {}, which trigger '{t}' declares in its 'returns'. Set {pronoun} with 'archmax_set_variables' before finishing.",
                unset.join(", ")
            ));
        }
        let typed: Vec<_> = sig
            .returns
            .iter()
            .filter(|e| e.ty.is_some())
            .cloned()
            .collect();
        let msgs: Vec<String> = signature_value_issues(&typed, &values)
            .into_iter()
            .map(|i| i.message)
            .collect();
        (!msgs.is_empty()).then(|| {
            format!(
                "Completed in state '{here}' with returns that do not conform to the types trigger '{t}' declares: {}. Set a conforming value with 'archmax_set_variables' before finishing.",
                msgs.join(" ")
            )
        })
    }

    /// A terminal failure: through the state's `on_error` when it has one, else the
    /// turn ends rejected.
    pub(super) async fn route_failure(&mut self, reason: &str) -> Result<(), RunError> {
        self.failed.clear();
        let from = self.session.workflow_state.clone();
        let target = self
            .h
            .spec
            .states
            .get(&from)
            .and_then(|s| s.on_error.clone());
        self.session.rejected = None;
        match target {
            None => {
                self.session.status = Status::Rejected;
                self.session.rejected = Some(reason.to_string());
            }
            Some(to) => {
                self.emit(Event::StateErrorRouted {
                    state: from.clone(),
                    to: to.clone(),
                    reason: reason.to_string(),
                });
                self.transcript.note(crate::notes::NoteKind::Error, &format!("[error] The '{from}' state failed: {reason}. Routing to the '{to}' error handler."));
                // An error handler that is a person's decision: the run parks there, owing
                // them one message about the failure (the runtime note opens it).
                self.enter(
                    &to,
                    super::moves::Entry {
                        by: "on_error",
                        reason: Some(reason),
                        moving: true,
                        at_human: Some((crate::park::ReplyCase::Routed, Vec::new())),
                    },
                );
            }
        }
        self.commit().await
    }

    /// Ends the session `failed` with `turn-cancelled`.
    pub(super) async fn fail_cancelled(&mut self) -> Result<(), RunError> {
        self.fail("turn-cancelled", CANCELLED_REASON).await
    }

    /// Ends the session `failed` with exit `code` (a turn that throws).
    pub(super) async fn fail(&mut self, code: &str, reason: &str) -> Result<(), RunError> {
        self.session.status = Status::Failed;
        self.session.exit = Some(Exit {
            code: code.to_string(),
            reason: reason.to_string(),
        });
        self.commit().await
    }
}
