//! Parks inside children (`runtime.md` §7.7): a child of an agent's call that stops for a
//! person or an event parks its caller too. The call is answered at once (its siblings keep
//! their answers) and the child joins the session's queue; before the next model call the
//! queue's head is presented as this session's own park, on the child's channel, with the
//! closing message a park owes. A decision or delivery on this session is handed to the
//! child by identity; its answer lands as a `[sub-workflow: <slug>]` note and the next
//! queued child is presented, or, with none left, the calling state continues.
//!
//! State it changes: the session's queue (`pending_delegations`), park, status and
//! `decision_count` (a presented decision takes this session's next `seq`; `park_counts`
//! are not touched: nothing the calling agent did parked it), the transcript (the notes) and
//! the mode (a reply owed) and the reply case.

use std::time::Instant;

use crate::error::RunError;
use crate::events::Event;
use crate::park::ReplyCase;
use crate::state::{Park, Status};

use super::Turn;
use super::delegate::{Resume, Settlement, answer};

impl crate::harness::Harness {
    /// Hands `resume` to the child `turn`'s park presents, then runs the caller on.
    pub(super) async fn resume_through(
        &self,
        lease: crate::store::WriterLease,
        mut turn: Turn<'_>,
        resume: Resume,
    ) -> Result<crate::outcome::Outcome, RunError> {
        turn.resume_presented(resume).await?;
        turn.commit().await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }
}

impl Turn<'_> {
    /// Presents the queue's head as this session's park: a child's decision takes this
    /// session's next `seq`; a child's wait is this session's wait. `case`: how the closing
    /// message opens.
    pub(super) fn present_child(&mut self, case: ReplyCase) {
        let Some(head) = self.session.pending_delegations.first().cloned() else {
            return;
        };
        let awaiting = match head.decision {
            Park::Decision {
                state,
                title,
                transitions,
                evidence,
                created_at,
                ..
            } => {
                self.session.decision_count += 1;
                self.session.park = Some(Park::Decision {
                    state,
                    title,
                    seq: self.session.decision_count,
                    transitions,
                    evidence,
                    created_at,
                });
                self.session.status = Status::AwaitingDecision;
                self.reply_case = case;
                "decision"
            }
            input @ Park::Input { .. } => {
                self.session.park = Some(input);
                self.session.status = Status::AwaitingInput;
                self.reply_case = ReplyCase::Waiting;
                "input"
            }
        };
        self.session.rejected = None;
        self.failed.clear();
        self.mode = super::Mode::OwesReply;
        self.emit(Event::Parked {
            state: self.session.workflow_state.clone(),
            session_id: self.id.as_str().to_string(),
            awaiting: awaiting.into(),
            reason: None,
            resume_at: None,
            call_id: None,
        });
    }

    /// Hands `resume` to the child this session's park presents, and records what it
    /// answered: a child that parks again is presented again; otherwise its answer (or its
    /// failure) is a note, and the next queued child is presented, or the calling state
    /// continues.
    pub(super) async fn resume_presented(&mut self, resume: Resume) -> Result<(), RunError> {
        let Some(head) = self.session.pending_delegations.first().cloned() else {
            return Ok(());
        };
        let here = self.session.workflow_state.clone();
        if let Resume::Decision { target, .. } = &resume {
            self.emit(Event::Decided {
                state: here.clone(),
                to: target.clone(),
                session_id: self.id.as_str().to_string(),
            });
        }
        let w = head.workflow.clone();
        let caller = self.caller();
        let child_id = format!(
            "{}{}{}",
            self.id.as_str(),
            crate::store::CHILD_SEPARATOR,
            head.identity
        );
        let started = Instant::now();
        let result = match self.h.child_harness(&w) {
            Err(e) => Err(format!("Sub-workflow '{w}' failed after resuming: {e}")),
            Ok(child) => {
                let lineage = caller.lineage_to(&w, &head.dispatch_id);
                let run = child.resume_child(&child_id, resume, lineage);
                match run.await {
                    Ok(out) => match out.pending.clone() {
                        Some(park) if out.kind == crate::outcome::OutcomeKind::Parked => {
                            // Parked again (a second decision inside the same child): presented
                            // on the spot, on a fresh `seq`.
                            if let Some(first) = self.session.pending_delegations.first_mut() {
                                first.decision = park;
                            }
                            self.session.park = None;
                            self.present_child(ReplyCase::HandedOver);
                            return Ok(());
                        }
                        _ => answer(&w, &child, &out),
                    },
                    Err(e) => Err(format!("Sub-workflow '{w}' failed after resuming: {e}")),
                }
            }
        };
        let settled = Settlement::of(started, result.as_deref().map_err(String::as_str));
        caller.result(&w, &head.dispatch_id, &head.tool_call_id, settled);
        self.trail_delegation(&here, &w, result.is_ok());
        match result {
            Ok(text) => self.transcript.note(
                crate::notes::NoteKind::SubWorkflow,
                &format!("[sub-workflow: {w}] {text}"),
            ),
            Err(message) => self.transcript.note(
                crate::notes::NoteKind::Error,
                &format!("[error] sub-workflow '{w}' failed after the decision: {message}"),
            ),
        }
        self.session.pending_delegations.remove(0);
        self.session.park = None;
        if self.session.pending_delegations.is_empty() {
            self.session.status = Status::Running;
        } else {
            // The next child waiting, after a runtime note: a decision has routed the run on.
            self.present_child(ReplyCase::Routed);
        }
        Ok(())
    }
}
