//! The budgets a turn runs under: the segment's `timeoutMs`, the visit's `maxTurns`, the
//! spending caps (`crate::caps`), the whole turn's `maxModelCalls` (with its one warning and its
//! grace after routing).
//!
//! State it changes: the session's `budget_warned`/`budget_routed`/`cap_routed` flags, and the
//! budget note.

use super::{DEFAULT_MAX_MODEL_CALLS, Turn};
use crate::caps::Scope;

impl Turn<'_> {
    /// A spending cap this turn or session has reached (`crate::caps`): the first time, the
    /// reason routes through `on_error`; the handler then has a tenth of the cap more to
    /// finish, past which the turn ends rejected.
    fn cap_reached(&mut self) -> Option<String> {
        for cap in &self.h.caps {
            let usage = match cap.scope {
                Scope::Turn => &self.session.turn_usage,
                Scope::Session => &self.session.usage,
            };
            let spent = cap.spent(usage);
            if spent < cap.limit {
                continue;
            }
            if !self.session.cap_routed {
                self.session.cap_routed = true;
                return Some(cap.reason(spent));
            }
            if spent >= cap.limit * 1.1 {
                return Some(cap.reason(spent));
            }
        }
        None
    }

    pub(super) fn max_model_calls(&self) -> u64 {
        self.h
            .spec
            .budget
            .as_ref()
            .and_then(|b| b.max_model_calls)
            .unwrap_or(DEFAULT_MAX_MODEL_CALLS)
    }

    /// The state's `budget.timeoutMs`, if it declares one.
    pub(super) fn segment_timeout(&self) -> Option<u64> {
        let st = self.h.spec.states.get(&self.session.workflow_state)?;
        st.budget.as_ref()?.timeout_ms
    }

    /// Time left in the state's segment, when it is bounded.
    pub(super) fn segment_left(&self) -> Option<std::time::Duration> {
        let ms = self.segment_timeout()?;
        Some(
            std::time::Duration::from_millis(ms)
                .saturating_sub(self.visit.segment_started.elapsed()),
        )
    }

    pub(super) fn timeout_reason(&self) -> Option<String> {
        let ms = self.segment_timeout()?;
        Some(format!(
            "state '{}' exceeded its time budget (timeoutMs: {ms})",
            self.session.workflow_state
        ))
    }

    /// `timeoutMs` of this segment, `maxTurns` of this visit, then the whole-turn
    /// `maxModelCalls`.
    pub(super) fn budget_exhausted(&mut self) -> Option<String> {
        if self.h.plain {
            // No workflow, no budgets: the step limit alone bounds a plain turn.
            return None;
        }
        if self.segment_left().is_some_and(|left| left.is_zero()) {
            return self.timeout_reason();
        }
        let here = self.session.workflow_state.clone();
        let st = self.h.spec.states.get(&here);
        if let Some(max) = st.and_then(|s| s.budget.as_ref()).and_then(|b| b.max_turns)
            && self.session.state_turns + 1 > max
        {
            return Some(format!(
                "state '{here}' exhausted its turn budget (maxTurns: {max})"
            ));
        }
        if let Some(reason) = self.cap_reached() {
            return Some(reason);
        }
        let max = self.max_model_calls();
        let reason =
            format!("the turn exhausted its model-call budget (budget.maxModelCalls: {max})");
        if self.session.turn_model_calls + 1 > max {
            if !self.session.budget_routed {
                self.session.budget_routed = true;
                return Some(reason);
            }
            // After routing once, the error handler gets a grace of a tenth of the
            // budget (at least one call) to finish; then the turn ends rejected.
            if self.session.turn_model_calls + 1 > max + (max / 10).max(1) {
                return Some(reason);
            }
            return None;
        }
        let left = max - self.session.turn_model_calls;
        if !self.session.budget_warned && left * 5 <= max {
            self.session.budget_warned = true;
            let note = format!(
                "[budget] {left} of this turn's {max} model calls are left (budget.maxModelCalls). Finish the current work, or advance, before they run out."
            );
            self.transcript.note(crate::notes::NoteKind::Budget, &note);
        }
        None
    }
}
