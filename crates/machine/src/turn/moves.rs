//! The control tools that change the session: `archmax_set_variables`, `archmax_raise`,
//! `archmax_reset` and `archmax_advance` (one move per batch: `moved` holds the state a
//! batch's earlier move landed in), and [`Turn::enter`], the one way into a state that every
//! arrival, move and routed failure takes.
//!
//! State it changes: the session (position, status, variables, exit, `rejected`), the
//! visit when the position moves, and the mode when a move lands in a human state.

use serde_json::Value;

use crate::control::{self, ControlResult};
use crate::events::Event;
use crate::hooks::Phase;
use crate::state::{Exit, LockedBy, Status};

use super::gates::Gate;
use super::{Turn, Visit};

/// How [`Turn::enter`] enters a state.
pub(super) struct Entry<'a> {
    /// The trail step's kind: `trigger`, `agent`, `human`, `on_error` or `reset`.
    pub(super) by: &'static str,
    /// The trail step's reason.
    pub(super) reason: Option<&'a str>,
    /// The position moves: `state-leave` from where it stood and a new visit. `false` for an
    /// arrival where the session already stands (a new turn, a delivery).
    pub(super) moving: bool,
    /// At a human state its decision is presented, the message owed opening as this says,
    /// with this evidence attached; `None` never parks (a reset).
    pub(super) at_human: Option<(crate::park::ReplyCase, Vec<String>)>,
}

impl Turn<'_> {
    /// Every entry of a state, written once: the leave and the new visit when the position
    /// moves, the trail step, `state-enter`, and at a human state its decision.
    pub(super) fn enter(&mut self, to: &str, how: Entry<'_>) {
        if how.moving {
            self.emit(Event::StateLeave {
                state: self.session.workflow_state.clone(),
                next: to.to_string(),
            });
            self.session.workflow_state = to.to_string();
            self.session.state_turns = 0;
            self.visit = Visit::new();
        }
        self.trail(to, how.by, how.reason);
        self.emit(Event::StateEnter {
            state: to.to_string(),
        });
        if let Some((case, evidence)) = how.at_human
            && self
                .h
                .spec
                .states
                .get(to)
                .is_some_and(archmax_spec::model::State::is_human)
        {
            self.reply_case = case;
            self.park_decision(to, evidence);
        }
    }

    /// `archmax_set_variables`: writes the variables and announces them.
    pub(super) fn set_variables(&mut self, args: &Value, call_id: &str) -> ControlResult {
        let state = self.session.workflow_state.clone();
        match control::set_variables(
            &mut self.session,
            &self.h.spec,
            self.signature.as_ref(),
            args,
        ) {
            Ok(w) => {
                if let Some(t) = &w.title {
                    self.emit(Event::TitleSet {
                        title: t.clone(),
                        state: Some(state.clone()),
                        call_id: Some(call_id.to_string()),
                    });
                }
                let text = format!(
                    "Set {}{}.",
                    w.names.join(", "),
                    if w.locked { " (locked)" } else { "" }
                );
                self.emit(Event::VariablesSet {
                    state: Some(state),
                    names: w.names,
                    locked: w.locked,
                    call_id: Some(call_id.to_string()),
                });
                ControlResult {
                    text,
                    is_error: false,
                }
            }
            Err(e) => e,
        }
    }

    /// `archmax_raise`: the session fails with the raised code (alone in its batch).
    pub(super) fn raise(&mut self, args: &Value, call_id: &str, others: usize) -> ControlResult {
        let state = self.session.workflow_state.clone();
        match control::raise_args(args, others) {
            Err(e) => e,
            Ok((code, reason)) => {
                self.emit(Event::Raised {
                    state: state.clone(),
                    session_id: self.id.as_str().to_string(),
                    code: code.clone(),
                    reason: reason.clone(),
                    call_id: Some(call_id.to_string()),
                });
                self.emit(Event::StateLeave {
                    state: state.clone(),
                    next: state.clone(),
                });
                self.session.status = Status::Failed;
                self.session.exit = Some(Exit {
                    code: code.clone(),
                    reason,
                });
                ControlResult {
                    text: control::raised_text(&code, &state),
                    is_error: false,
                }
            }
        }
    }

    /// `archmax_reset`: back to the entry state, agent locks released.
    pub(super) fn reset(&mut self, args: &Value, moved: &mut Option<String>) -> ControlResult {
        let name = "archmax_reset";
        if let Some(landed) = moved.as_ref() {
            return control::second_move(name, landed);
        }
        let reason = args
            .get("reason")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|r| !r.is_empty());
        let entry = self.session.entry_state.clone();
        let result = control::reset_result(reason, &entry);
        if !result.is_error {
            for v in self.session.variables.values_mut() {
                if v.locked_by == Some(LockedBy::Agent) {
                    v.locked_by = None;
                }
            }
            self.enter(
                &entry,
                Entry {
                    by: "reset",
                    reason,
                    moving: true,
                    at_human: None,
                },
            );
            self.failed.clear();
            *moved = Some(entry);
        }
        result
    }

    /// `archmax_advance`: the transition check, the source's `after` and the target's
    /// `before` hooks, then the move (and the park, into a human state).
    pub(super) async fn advance(
        &mut self,
        args: &Value,
        call_id: &str,
        moved: &mut Option<String>,
    ) -> ControlResult {
        let state = self.session.workflow_state.clone();
        let name = "archmax_advance";
        if let Some(landed) = moved.as_ref() {
            return control::second_move(name, landed);
        }
        let (to, reason) = match control::advance_args(args) {
            Ok(x) => x,
            Err(e) => return e,
        };
        let into_human = self
            .h
            .spec
            .states
            .get(&to)
            .is_some_and(archmax_spec::model::State::is_human);
        let evidence = match crate::park::evidence_arg(args, &to, into_human) {
            Ok(e) => e,
            Err(text) => {
                return ControlResult {
                    text,
                    is_error: false,
                };
            }
        };
        let vars = self.session.kernel_variables();
        let verdict = self.h.policy.transition(&state, &to, Some(&vars));
        if !verdict.allowed {
            // A refused move answers the agent, not as an error: it stays and retries.
            return ControlResult {
                text: format!(
                    "archmax_advance rejected: {}",
                    verdict.message.unwrap_or_default()
                ),
                is_error: false,
            };
        }
        for (gate, phase, target) in [
            (&state, Phase::After, Some(to.as_str())),
            (&to, Phase::Before, None),
        ] {
            match self.run_hooks(gate, phase, target, Some(&reason)).await {
                Gate::Pass => {}
                Gate::Block(r) => {
                    return ControlResult {
                        text: format!("archmax_advance rejected: {r}"),
                        is_error: false,
                    };
                }
                Gate::Fail(r) => {
                    // A hook that cannot run is a terminal failure: routed at the end of the step.
                    self.session.rejected = Some(r.clone());
                    return ControlResult {
                        text: format!("archmax_advance rejected: {r}"),
                        is_error: false,
                    };
                }
            }
        }
        self.visit.before_done = true;
        self.emit(Event::Advance {
            from: state.clone(),
            to: to.clone(),
            reason: Some(reason.clone()),
            call_id: Some(call_id.to_string()),
        });
        self.session.rejected = None;
        self.enter(
            &to,
            Entry {
                by: "agent",
                reason: Some(&reason),
                moving: true,
                at_human: Some((crate::park::ReplyCase::HandedOver, evidence)),
            },
        );
        // The target's `before` hooks ran as the move's gate.
        self.visit.before_done = true;
        self.failed.clear();
        *moved = Some(to.clone());
        ControlResult {
            text: control::advanced_text(&to),
            is_error: false,
        }
    }
}
