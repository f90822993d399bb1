//! How a turn begins: a message (`send`), a plain agent's input, a decision, a reply, a
//! delivery. Each arrival loads the session, moves it as the arrival says, commits, and hands
//! the turn to the loop ([`run`](super::run)).
//!
//! State it changes: the session's position, park, status, variables and trigger, the turn's
//! `disposition`, `reply_case` and mode (a reply owed) and the visit (`before_done`) at the
//! arrival; a state is entered through [`Turn::enter`](super::Turn).

use archmax_spec::signature::signature_for_trigger;
use serde_json::{Map, Value, json};

use crate::control::{self};
use crate::error::RunError;
use crate::events::Event;
use crate::harness::Harness;
use crate::outcome::Outcome;
use crate::state::{LockedBy, Status};

use super::{SendInput, Turn};

impl Harness {
    /// Sends a message to a session: a new turn, the next turn of a finished one,
    /// a reply to a session parked at a human state, or a delivery to one parked for
    /// input (the trigger of the input, `manual` when none is given).
    pub async fn send(&self, session_id: &str, input: SendInput) -> Result<Outcome, RunError> {
        self.send_with(session_id, input, Vec::new(), false).await
    }

    /// [`Harness::send`] with `prior` messages appended before the message when a turn
    /// opens (`invoke`'s earlier input messages). `via_invoke`: a disabled workflow settles
    /// the fresh turn `rejected` instead of refusing it (the original's `invoke` path).
    pub(crate) async fn send_with(
        &self,
        session_id: &str,
        input: SendInput,
        prior: Vec<Value>,
        via_invoke: bool,
    ) -> Result<Outcome, RunError> {
        let (lease, mut turn) = self.begin(session_id).await?;
        // A send to a parked session becomes a reply or a delivery, boxed: their futures
        // would otherwise size every send's (the turn's future is made and moved, whole, on
        // the caller's thread: the JS thread for `createAgent`). Through `invoke`, a session
        // parked for a decision takes a fresh turn instead, as the original's graph does: at
        // the human state it stands in, the turn presents the decision again (`open`).
        match turn.session.status {
            Status::AwaitingDecision if turn.session.park.is_some() && !via_invoke => {
                self.release(lease).await;
                return Box::pin(self.reply(session_id, &input.message)).await;
            }
            Status::AwaitingInput if turn.session.park.is_some() => {
                self.release(lease).await;
                let trigger = input
                    .trigger
                    .clone()
                    .unwrap_or_else(|| "manual".to_string());
                let message = Some(input.message.as_str()).filter(|m| !m.trim().is_empty());
                return Box::pin(self.deliver(session_id, &trigger, input.variables, message))
                    .await;
            }
            _ => {}
        }
        let trigger = input
            .trigger
            .clone()
            .unwrap_or_else(|| "manual".to_string());
        if turn.session.workflow_state.is_empty() && self.start_state(&trigger).is_err() {
            // A session that never ran has nowhere to start (the original's resolution refusal).
            return Err(RunError::UnknownSessionTrigger(trigger));
        }
        if self.spec.disabled == Some(true) && !via_invoke {
            return Err(RunError::WorkflowDisabled(self.workflow.clone()));
        }
        if input.message.trim().is_empty() {
            return Err(RunError::EmptyMessage(turn.id.as_str().to_string()));
        }
        crate::harness::check_variable_names(&input.variables, "seeded")?;
        let start = self.start_state(&trigger)?;
        if self.spec.disabled == Some(true) {
            turn.refuse_disabled(&trigger, &start, prior, &input)
                .await?;
            return Ok(turn.outcome());
        }
        turn.open(&trigger, &start, prior, &input).await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }

    /// A plain agent's turn (`crate::plain`): `messages` appended, then the loop. No
    /// position moves, no trigger, seeds or spec snapshot: there is no workflow.
    pub(crate) async fn run_plain(
        &self,
        session_id: &str,
        messages: Vec<Value>,
    ) -> Result<Outcome, RunError> {
        let (lease, mut turn) = self.begin(session_id).await?;
        let s = &mut turn.session;
        s.workflow_state = crate::plain::PLAIN_STATE.to_string();
        s.entry_state = crate::plain::PLAIN_STATE.to_string();
        s.status = Status::Running;
        s.rejected = None;
        s.exit = None;
        s.state_turns = 0;
        s.turn_model_calls = 0;
        s.turn_usage = crate::state::Usage::default();
        for m in messages {
            turn.transcript.push(m);
        }
        turn.commit().await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }

    /// A person's decision at a human state: routed deterministically, then the
    /// target state's work runs in the same call.
    pub async fn decide(
        &self,
        session_id: &str,
        target: &str,
        comment: Option<&str>,
    ) -> Result<Outcome, RunError> {
        self.decide_as(session_id, target, comment, None).await
    }

    /// [`Harness::decide`], run as a child session when `lineage` is given. A session whose
    /// park presents a parked child hands the decision to that child.
    pub(crate) async fn decide_as(
        &self,
        session_id: &str,
        target: &str,
        comment: Option<&str>,
        lineage: Option<super::delegate::Lineage>,
    ) -> Result<Outcome, RunError> {
        let (lease, mut turn) = self.begin_as(session_id, lineage).await?;
        let id = turn.id.as_str().to_string();
        let Some(crate::state::Park::Decision {
            state, transitions, ..
        }) = turn.session.park.clone()
        else {
            return Err(RunError::SessionNotParked(id));
        };
        let valid: Vec<&crate::state::DecisionOption> =
            transitions.iter().filter(|t| t.to != state).collect();
        let names = valid
            .iter()
            .map(|t| t.to.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let target = target.trim();
        if target.is_empty() {
            return Err(RunError::MissingDecisionTarget { id, valid: names });
        }
        let Some(edge) = valid.iter().find(|t| t.to == target) else {
            return Err(RunError::InvalidDecisionTarget {
                id,
                target: target.to_string(),
                valid: names,
            });
        };
        let kind = edge.kind.clone();
        turn.disposition = "decide";
        turn.resume_common();
        if turn.session.presented_child().is_some() {
            let resume = super::delegate::Resume::Decision {
                target: target.to_string(),
                comment: comment.map(str::to_string),
            };
            return self.resume_through(lease, turn, resume).await;
        }
        turn.emit(Event::Decided {
            state: state.clone(),
            to: target.to_string(),
            session_id: id,
        });
        turn.transcript.note(
            crate::notes::NoteKind::Decision,
            &crate::park::decision_note(&state, target, kind.as_deref(), comment),
        );
        turn.session.park = None;
        turn.session.status = Status::Running;
        turn.enter(
            target,
            super::moves::Entry {
                by: "human",
                reason: comment.map(str::trim).filter(|c| !c.is_empty()),
                moving: true,
                at_human: Some((crate::park::ReplyCase::Routed, Vec::new())),
            },
        );
        turn.commit().await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }

    /// A message to a session awaiting a decision: one reply-only turn, and the
    /// session stays parked on the same record.
    pub async fn reply(&self, session_id: &str, message: &str) -> Result<Outcome, RunError> {
        let (lease, mut turn) = self.begin(session_id).await?;
        let id = turn.id.as_str().to_string();
        let Some(crate::state::Park::Decision { state, .. }) = turn.session.park.clone() else {
            return Err(RunError::SessionNotParked(id));
        };
        if message.trim().is_empty() {
            return Err(RunError::EmptyMessage(id));
        }
        turn.disposition = "reply";
        turn.resume_common();
        turn.emit(Event::ParkMessage {
            state,
            session_id: id,
            direction: "inbound".into(),
            text: message.to_string(),
        });
        turn.transcript
            .push(json!({ "role": "user", "content": message }));
        turn.reply_case = crate::park::ReplyCase::PersonWrote;
        turn.mode = super::Mode::OwesReply;
        turn.commit().await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }

    /// An outside event for a session parked for input: it resumes in place, with
    /// the trigger recorded and the variables seeded locked.
    pub async fn deliver(
        &self,
        session_id: &str,
        trigger: &str,
        variables: Map<String, Value>,
        message: Option<&str>,
    ) -> Result<Outcome, RunError> {
        self.deliver_as(session_id, trigger, variables, message, None)
            .await
    }

    /// [`Harness::deliver`], run as a child session when `lineage` is given. A session whose
    /// park presents a parked child hands the event to that child.
    pub(crate) async fn deliver_as(
        &self,
        session_id: &str,
        trigger: &str,
        variables: Map<String, Value>,
        message: Option<&str>,
        lineage: Option<super::delegate::Lineage>,
    ) -> Result<Outcome, RunError> {
        let (lease, mut turn) = self.begin_as(session_id, lineage).await?;
        let id = turn.id.as_str().to_string();
        let Some(crate::state::Park::Input { state, .. }) = turn.session.park.clone() else {
            return Err(RunError::SessionNotAwaitingInput(id));
        };
        let trigger = trigger.trim();
        if trigger.is_empty() {
            return Err(RunError::MissingDeliveryTrigger(id));
        }
        crate::harness::check_variable_names(&variables, &format!("delivered to session '{id}'"))?;
        turn.disposition = "deliver";
        turn.resume_common();
        if turn.session.presented_child().is_some() {
            let resume = super::delegate::Resume::Delivery {
                trigger: trigger.to_string(),
                variables,
                message: message.map(str::to_string),
            };
            return self.resume_through(lease, turn, resume).await;
        }
        turn.emit(Event::Delivered {
            state: state.clone(),
            trigger: trigger.to_string(),
            to: state.clone(),
            session_id: id.clone(),
        });
        let mut delivered_title = None;
        for (k, v) in &variables {
            if k == "title" {
                // The title stays the agent's: a delivered one is written unlocked, trimmed; a
                // malformed one is skipped with a warning (dropping the whole delivery over a
                // bad label would be the worse failure).
                if let Some(problem) = control::title_problem(v) {
                    turn.emit(Event::Warning {
                        scope: "workflow".into(),
                        message: format!("Delivered title ignored: {problem}"),
                    });
                    continue;
                }
                let t = v.as_str().unwrap_or_default().trim().to_string();
                delivered_title = Some(t.clone());
                turn.session.variables.insert(
                    k.clone(),
                    crate::state::Variable {
                        value: Value::String(t),
                        locked_by: None,
                    },
                );
            } else {
                turn.session.variables.insert(
                    k.clone(),
                    crate::state::Variable {
                        value: v.clone(),
                        locked_by: Some(LockedBy::Host),
                    },
                );
            }
        }
        turn.session.variables.insert(
            "trigger".into(),
            crate::state::Variable {
                value: Value::String(trigger.to_string()),
                locked_by: Some(LockedBy::Host),
            },
        );
        let names: Vec<String> = variables
            .keys()
            .filter(|k| *k != "title" || delivered_title.is_some())
            .cloned()
            .collect();
        if !names.is_empty() {
            turn.emit(Event::VariablesSet {
                state: Some(state.clone()),
                names,
                locked: true,
                call_id: None,
            });
        }
        if let Some(title) = delivered_title {
            turn.emit(Event::TitleSet {
                title,
                state: Some(state.clone()),
                call_id: None,
            });
        }
        turn.transcript.note(
            crate::notes::NoteKind::Event,
            &crate::park::event_note(trigger, &state, &variables, message.is_some()),
        );
        if let Some(m) = message {
            // A person wrote: the state's wait loop starts over, so `maxParks` bounds how long
            // the run waits unanswered, not how long a conversation lasts.
            turn.session.park_counts.remove(&state);
            turn.emit(Event::ParkMessage {
                state: state.clone(),
                session_id: id,
                direction: "inbound".into(),
                text: m.to_string(),
            });
            turn.transcript
                .push(json!({ "role": "user", "content": m }));
        }
        turn.session.trigger = trigger.to_string();
        turn.signature = signature_for_trigger(&turn.h.spec_json, trigger);
        turn.session.park = None;
        turn.session.status = Status::Running;
        turn.enter(
            &state,
            super::moves::Entry {
                by: "trigger",
                reason: Some(trigger),
                moving: false,
                at_human: None,
            },
        );
        // A delivery resumes the visit: the parked state's `before` hooks do not run again.
        turn.visit.before_done = true;
        turn.commit().await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }
}

impl Harness {
    /// Finishes a turn that a stopped process left `running` (killed, or its machine lost,
    /// after a step was committed and before the turn settled): the loop goes on from the
    /// session's last committed step, in the state it was in, with the turn's counters as
    /// committed (its model calls so far count against `maxModelCalls`). The step that was
    /// in flight when the process stopped is run again (its model call and tool calls were
    /// never committed); the state's `before` hooks run again only when no model call of
    /// this visit was committed.
    ///
    /// `Ok(None)` when the session is not an interrupted turn (absent, parked, settled):
    /// nothing is changed. The writer lease is taken first, so a turn in progress in any
    /// process answers the busy refusal instead.
    pub async fn resume_interrupted(&self, session_id: &str) -> Result<Option<Outcome>, RunError> {
        let (lease, mut turn) = self.begin(session_id).await?;
        let s = &turn.session;
        if s.status != Status::Running || s.park.is_some() || s.workflow_state.is_empty() {
            self.release(lease).await;
            return Ok(None);
        }
        turn.visit.before_done = s.state_turns > 0;
        turn.emit(Event::Warning {
            scope: "session".into(),
            message: format!(
                "Resuming the turn of session '{}' in state '{}' from its last committed step: the process running it stopped before the turn finished.",
                turn.id.as_str(),
                turn.session.workflow_state
            ),
        });
        let out = turn.run().await;
        self.release(lease).await;
        out.map(Some)
    }
}

impl Turn<'_> {
    /// What every resume resets: the per-turn budgets (each arrival counts from zero).
    pub(super) fn resume_common(&mut self) {
        self.session.turn_model_calls = 0;
        self.session.state_turns = 0;
        self.session.budget_warned = false;
        self.session.budget_routed = false;
        self.session.cap_routed = false;
        self.session.turn_usage = crate::state::Usage::default();
        self.session.rejected = None;
    }
}
