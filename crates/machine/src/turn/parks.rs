//! Parks: a human state's decision record, and `archmax_wait`'s wait for input.
//!
//! State it changes: the session's park, status, `decision_count` and park budgets, and the
//! mode (`OwesReply`: the one reply-only message a park owes) and the reply case.

use serde_json::Value;

use crate::control::ControlResult;
use crate::events::Event;
use crate::state::Status;

use super::Turn;

impl Turn<'_> {
    /// Parks at human state `state`: a decision record, status `awaiting_decision`,
    /// and the one reply-only message still owed.
    pub(super) fn park_decision(&mut self, state: &str, attached: Vec<String>) {
        let st = self.h.spec.states.get(state);
        let mut evidence: Vec<String> = st.and_then(|s| s.evidence.clone()).unwrap_or_default();
        for p in attached {
            if !evidence.contains(&p) {
                evidence.push(p);
            }
        }
        self.session.decision_count += 1;
        self.failed.clear();
        let transitions = st
            .map(|s| {
                s.edges()
                    .iter()
                    .map(|t| crate::state::DecisionOption {
                        to: t.to.clone(),
                        description: t.description.clone(),
                        kind: t.kind.map(|k| k.as_str().to_string()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.session.park = Some(crate::state::Park::Decision {
            state: state.to_string(),
            title: st.and_then(|s| s.title.clone()),
            seq: self.session.decision_count,
            transitions,
            evidence,
            created_at: crate::clock::iso(crate::clock::now_ms()),
        });
        self.session.status = Status::AwaitingDecision;
        self.mode = super::Mode::OwesReply;
        self.emit(Event::Parked {
            state: state.to_string(),
            session_id: self.id.as_str().to_string(),
            awaiting: "decision".into(),
            reason: None,
            resume_at: None,
            call_id: None,
        });
    }

    /// The state a parked session waits in.
    pub(super) fn parked_state(&self) -> Option<String> {
        match self.session.park.as_ref()? {
            crate::state::Park::Decision { state, .. }
            | crate::state::Park::Input { state, .. } => Some(state.clone()),
        }
    }

    /// `archmax_wait({ reason, until? })`: park in place until an event is delivered.
    pub(super) fn wait(&mut self, args: &Value, call_id: &str) -> ControlResult {
        let state = self.session.workflow_state.clone();
        let Some(reason) = args
            .get("reason")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|r| !r.is_empty())
        else {
            return ControlResult {
                text: "archmax_wait rejected: a non-empty 'reason' is required — say what the run is waiting for.".into(),
                is_error: true,
            };
        };
        let now = crate::clock::now_ms();
        let resume_at = match args.get("until").filter(|u| !u.is_null()) {
            None => None,
            Some(u) => match crate::park::parse_until(u.as_str().unwrap_or_default(), now) {
                Ok(ms) => Some(crate::clock::iso(ms)),
                Err(problem) => {
                    return ControlResult {
                        text: crate::park::until_error(&problem),
                        is_error: true,
                    };
                }
            },
        };
        let used = self.session.park_counts.get(&state).copied().unwrap_or(0);
        let max = self
            .h
            .spec
            .states
            .get(&state)
            .and_then(|s| s.budget.as_ref())
            .and_then(|b| b.max_parks);
        if let Some(max) = max.filter(|m| used + 1 > *m) {
            let text = format!(
                "archmax_wait rejected: state '{state}' exhausted its park budget (maxParks: {max}) — it asked to wait again for: {reason}"
            );
            self.session.rejected = Some(
                text.trim_start_matches("archmax_wait rejected: ")
                    .to_string(),
            );
            return ControlResult {
                text,
                is_error: true,
            };
        }
        self.session.park_counts.insert(state.clone(), used + 1);
        // The model that already spoke this turn owes no reply-only message.
        self.mode = if self.transcript.spoke_this_turn() {
            super::Mode::Work
        } else {
            super::Mode::OwesReply
        };
        self.reply_case = crate::park::ReplyCase::Waiting;
        self.session.park = Some(crate::state::Park::Input {
            state: state.clone(),
            title: self.h.spec.states.get(&state).and_then(|s| s.title.clone()),
            reason: reason.to_string(),
            parked_at: crate::clock::iso(now),
            resume_at: resume_at.clone(),
        });
        self.session.status = Status::AwaitingInput;
        self.failed.clear();
        self.emit(Event::Parked {
            state: state.clone(),
            session_id: self.id.as_str().to_string(),
            awaiting: "input".into(),
            reason: Some(reason.to_string()),
            resume_at: resume_at.clone(),
            call_id: Some(call_id.to_string()),
        });
        ControlResult {
            text: crate::park::waiting_text(&state, resume_at.as_deref()),
            is_error: false,
        }
    }
}
