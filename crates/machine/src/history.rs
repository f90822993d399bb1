//! A session's history and forks (`archmax sessions history|fork`, `agent.sessions.history|
//! fork`, `GET /sessions/{id}/history`, `POST /sessions/{id}/fork`): every committed step
//! as the store keeps it, in words, and a new session made from any one of them.
//!
//! A fork copies the step's state (position, variables, counters, its park) and the
//! transcript that step covered, under the same spec snapshot, and records where it came
//! from (`forkedFrom`). The session's files are copied as they are now: the stores keep
//! only the latest of each file, not one per step. A fork of a parked step is parked the
//! same way (a decision or a delivery moves it on); a fork of a step inside a turn is a
//! turn its process left off (a message moves it on, and PostgreSQL workers finish it from
//! that step). The original is not touched. Not forked: a child session (a sub-workflow's
//! run: fork its parent) and a step whose session waits on a child (the child cannot be
//! copied as it was then).

use std::path::Path;

use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

use crate::error::RunError;
use crate::files::SessionFiles;
use crate::harness::Harness;
use crate::outcome::content_text;
use crate::sessions::SessionSummary;
use crate::state::{ForkedFrom, Park, SessionState, Status};
use crate::store::{
    Checkpoint, SessionId, StoreError, WriterLease, is_child_identity, layout, parent_of,
};

/// One committed step of a session (`agent.sessions.history`).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct HistoryStep {
    /// 1-based, in commit order: what `fork --at` names.
    pub step: u64,
    /// The workflow state the session was in after the step.
    pub state: String,
    /// Its status after the step.
    pub status: Status,
    /// What the step did, in words (`called lookup_order; moved to review`).
    pub what: String,
    /// When the step was committed (ISO-8601 UTC); absent for a step written before the
    /// store recorded it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
    /// Transcript messages the step covers.
    pub messages: u64,
    /// Tokens (input and output) the step's model calls used.
    pub tokens: u64,
    /// Tokens used by the session up to and with this step.
    pub total_tokens: u64,
    /// What the step's model calls cost, when priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// What the session cost up to and with this step, when priced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_cost_usd: Option<f64>,
}

impl Harness {
    /// Every committed step of session `id`, oldest first; `None` when it has not run.
    ///
    /// Errors: `SessionStoreIdError`; `SessionStoreCapabilityError` for a store that keeps
    /// only the latest step (a host's); `SessionStoreError` when the store fails.
    pub fn session_history(&self, id: &str) -> Result<Option<Vec<HistoryStep>>, RunError> {
        let sid = self.parse_session_id(id)?;
        let Some(history) = self.read_history(&sid)? else {
            return Ok(None);
        };
        let mut steps = Vec::with_capacity(history.checkpoints.len());
        let mut prev: Option<SessionState> = None;
        let mut covered = 0usize;
        for cp in &history.checkpoints {
            let state = step_state(&sid, cp)?;
            let len = usize::try_from(cp.transcript_len).unwrap_or(usize::MAX);
            let added = history
                .messages
                .get(covered.min(len)..len.min(history.messages.len()))
                .unwrap_or_default();
            steps.push(describe(cp, prev.as_ref(), &state, added));
            covered = len;
            prev = Some(state);
        }
        Ok(Some(steps))
    }

    /// Makes session `new_id` (default `<id>-fork-<step>`, numbered on when taken) from
    /// step `step` of session `id`, and answers its summary. The original is not touched.
    ///
    /// Errors: `SessionForkError` (no such session or step, a child session, a step
    /// waiting on a child, a taken or child-shaped new id); `SessionStoreIdError`;
    /// `SessionNotResumableError` when a turn holds the new id; `SessionStoreCapabilityError`
    /// for a store without history; `SessionStoreError`.
    pub fn fork_session(
        &self,
        id: &str,
        step: u64,
        new_id: Option<&str>,
    ) -> Result<SessionSummary, RunError> {
        let sid = self.parse_session_id(id)?;
        if let Some(parent) = parent_of(sid.as_str()) {
            return Err(RunError::Fork(format!(
                "Session '{id}' is a sub-workflow's run inside session '{parent}': fork '{parent}' instead."
            )));
        }
        let Some(history) = self.read_history(&sid)? else {
            return Err(RunError::Fork(format!(
                "Session '{id}' has not run: there is nothing to fork."
            )));
        };
        let last = history.checkpoints.len();
        let Some(cp) = history.checkpoints.iter().find(|c| c.step == step) else {
            return Err(RunError::Fork(format!(
                "Session '{id}' has no step {step}: its steps are 1 to {last} ('archmax sessions history {id}' lists them)."
            )));
        };
        let mut state = step_state(&sid, cp)?;
        if let Some(child) = state.pending_delegations.first() {
            return Err(RunError::Fork(format!(
                "Step {step} of session '{id}' waits on a sub-workflow's session ('{id}~{}'), which a fork cannot copy as it was then: fork from a step before the call or after it returned.",
                child.identity
            )));
        }
        let (target, lease) = self.fork_target(&sid, step, new_id)?;
        state.forked_from = Some(ForkedFrom {
            session_id: sid.as_str().to_owned(),
            step,
            forked_at: crate::clock::iso(crate::clock::now_ms()),
        });
        let len = usize::try_from(cp.transcript_len)
            .unwrap_or(usize::MAX)
            .min(history.messages.len());
        let made = self.copy_files(&sid, &target).and_then(|()| {
            let value = serde_json::to_value(&state).map_err(|source| StoreError::Encode {
                id: target.as_str().to_owned(),
                source,
            })?;
            self.store.commit(
                &target,
                crate::store::Step {
                    new_messages: &history.messages[..len],
                    state: &value,
                },
            )
        });
        if let Err(e) = made {
            // Nothing half made stays: the files copied so far go with the new id.
            let _ = self.store.delete(&target);
            return Err(e.into());
        }
        drop(lease);
        self.session_summary(target.as_str())?
            .ok_or_else(|| RunError::Store(format!("the fork '{}' was not stored", target)))
    }

    /// The store's history of `sid`, a store without one answered as a capability it lacks.
    fn read_history(&self, sid: &SessionId) -> Result<Option<crate::store::History>, RunError> {
        match self.store.history(sid) {
            Err(StoreError::NoHistory { .. }) => Err(RunError::StoreCapability {
                kind: self.store.kind(),
                capability: "history",
                hint: "A session's history and forks need a store that keeps every step: the filesystem, in-memory or PostgreSQL store.",
            }),
            other => Ok(other?),
        }
    }

    /// The fork's id, held under its writer lease: `new_id` when given (a new, top-level
    /// id), else the first of `<id>-fork-<step>`, `-2`, `-3`, … that has not run and that
    /// no other fork holds.
    fn fork_target(
        &self,
        sid: &SessionId,
        step: u64,
        new_id: Option<&str>,
    ) -> Result<(SessionId, WriterLease), RunError> {
        let taken = |id: &str| {
            RunError::Fork(format!(
                "Session '{id}' already exists: choose another id for the fork."
            ))
        };
        if let Some(given) = new_id {
            let target = self.parse_session_id(given)?;
            if is_child_identity(target.as_str()) || parent_of(target.as_str()).is_some() {
                return Err(RunError::Fork(format!(
                    "'{given}' names a sub-workflow's run ('~' joins a parent's id to its child's): give the fork an id of its own."
                )));
            }
            if target == *sid {
                return Err(taken(given));
            }
            let lease = self.store.acquire(&target)?;
            if self.store.load_state(&target)?.is_some() {
                return Err(taken(given));
            }
            return Ok((target, lease));
        }
        let base = format!("{}-fork-{step}", sid.as_str());
        for n in 1u32..=10_000 {
            let candidate = if n == 1 {
                base.clone()
            } else {
                format!("{base}-{n}")
            };
            let target = self.parse_session_id(&candidate)?;
            if self.store.load_state(&target)?.is_some() {
                continue;
            }
            match self.store.acquire(&target) {
                // Another fork is making this one: the next number.
                Err(StoreError::Busy { .. }) => continue,
                Err(e) => return Err(e.into()),
                Ok(lease) if self.store.load_state(&target)?.is_none() => {
                    return Ok((target, lease));
                }
                Ok(_) => continue,
            }
        }
        Err(RunError::Fork(format!("no free id after '{base}'")))
    }

    /// Copies the session's files as they are now (all but its own records in
    /// `checkpoints/`) from `from` to `to`; nothing for a store that keeps none.
    fn copy_files(&self, from: &SessionId, to: &SessionId) -> Result<(), StoreError> {
        let (Some(src), Some(dst)) = (self.store.session_files(from), self.store.session_files(to))
        else {
            return Ok(());
        };
        copy_tree(&src, &dst, Path::new(""), to.as_str())
    }
}

/// Copies folder `rel` of `src` into `dst`, recursively; links are not followed or copied.
fn copy_tree(
    src: &SessionFiles,
    dst: &SessionFiles,
    rel: &Path,
    id: &str,
) -> Result<(), StoreError> {
    let from = src.dir.join(rel);
    let names = match src.backend.read_dir(&from) {
        Ok(names) => names,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(StoreError::io(id, "list", from)(e)),
    };
    for name in names {
        if rel.as_os_str().is_empty() && name == layout::CHECKPOINTS_DIR {
            continue;
        }
        let rel = rel.join(&name);
        let path = src.dir.join(&rel);
        let meta = src
            .backend
            .meta(&path)
            .map_err(StoreError::io(id, "read", path.clone()))?;
        let target = dst.dir.join(&rel);
        if meta.is_dir() {
            dst.backend.create_dir_all(&target).map_err(StoreError::io(
                id,
                "create folder",
                target.clone(),
            ))?;
            copy_tree(src, dst, &rel, id)?;
        } else if meta.is_file() {
            let bytes =
                src.backend
                    .read(&path)
                    .map_err(StoreError::io(id, "read", path.clone()))?;
            // Under the store root, never through a link (a folder planted at the new id).
            let base = dst.dir.parent().unwrap_or(&dst.dir);
            dst.backend
                .write_confined(base, &target, &bytes)
                .map_err(StoreError::io(id, "write", target.clone()))?;
        }
    }
    Ok(())
}

/// A checkpoint's state, read as the runtime's.
fn step_state(sid: &SessionId, cp: &Checkpoint) -> Result<SessionState, RunError> {
    serde_json::from_value(cp.state.clone()).map_err(|e| {
        RunError::Store(format!(
            "session '{}': step {} holds a state this version cannot read: {e}",
            sid.as_str(),
            cp.step
        ))
    })
}

/// The history line of checkpoint `cp`, whose state is `now`, after `prev` (none for the
/// first step), having added the `added` messages.
fn describe(
    cp: &Checkpoint,
    prev: Option<&SessionState>,
    now: &SessionState,
    added: &[Value],
) -> HistoryStep {
    let mut what: Vec<String> = Vec::new();
    // A fork's first step copies what its source's steps did: it says where from.
    let copied = prev.is_none() && now.forked_from.is_some();
    if prev.is_none() {
        match &now.forked_from {
            Some(f) => what.push(format!("forked from {} step {}", f.session_id, f.step)),
            None if !now.trigger.is_empty() => what.push(format!("started by {}", now.trigger)),
            None => what.push("started".to_string()),
        }
    }
    let added = if copied { &[] } else { added };
    for msg in added {
        match msg.get("role").and_then(Value::as_str) {
            Some("user") => {
                let text = msg.get("content").map(content_text).unwrap_or_default();
                what.push(format!("message \"{}\"", clip(&text)));
            }
            Some("assistant") => {
                let calls: Vec<&str> = msg
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .map(|calls| {
                        calls
                            .iter()
                            .filter_map(|c| c.pointer("/function/name").and_then(Value::as_str))
                            // The harness's own record of a decision or a notice.
                            .filter(|name| *name != archmax_kernel::tools::NOTE)
                            .collect()
                    })
                    .unwrap_or_default();
                if !calls.is_empty() {
                    what.push(format!("called {}", calls.join(", ")));
                } else {
                    let text = msg.get("content").map(content_text).unwrap_or_default();
                    if !text.trim().is_empty() {
                        what.push(format!("answered \"{}\"", clip(&text)));
                    }
                }
            }
            _ => {}
        }
    }
    let seen = prev.map_or(if copied { now.trail.len() } else { 0 }, |p| p.trail.len());
    for t in now.trail.iter().skip(seen) {
        what.push(match t.kind.as_str() {
            "human" => format!("decided: {}", t.to),
            "reset" => format!("reset to {}", t.to),
            "on_error" => format!("routed to {} (on_error)", t.to),
            "trigger" if prev.is_none() => continue,
            "sub-workflow" => format!(
                "sub-workflow {} {}",
                t.workflow.as_deref().unwrap_or("?"),
                match t.status.as_deref() {
                    Some("ok") => "returned",
                    Some(_) => "failed",
                    None => "ran",
                }
            ),
            _ => format!("moved to {}", t.to),
        });
    }
    if prev.map(|p| p.status) != Some(now.status) {
        match now.status {
            Status::Running if prev.is_some() => what.push("resumed".to_string()),
            Status::Running => {}
            Status::AwaitingDecision => what.push(format!(
                "parked for a decision at {}",
                now.park
                    .as_ref()
                    .map_or(now.workflow_state.as_str(), Park::state)
            )),
            Status::AwaitingInput => what.push(match &now.park {
                Some(Park::Input {
                    reason,
                    resume_at: Some(at),
                    ..
                }) => format!("waiting until {at}: {}", clip(reason)),
                Some(Park::Input { reason, .. }) => format!("waiting for {}", clip(reason)),
                _ => "waiting for input".to_string(),
            }),
            Status::Completed => what.push("completed".to_string()),
            Status::Failed => what.push(match &now.exit {
                Some(exit) => format!("failed ({}): {}", exit.code, clip(&exit.reason)),
                None => "failed".to_string(),
            }),
            Status::Rejected => what.push(match &now.rejected {
                Some(why) => format!("rejected: {}", clip(why)),
                None => "rejected".to_string(),
            }),
        }
    }
    if what.is_empty() {
        what.push("checkpoint".to_string());
    }
    let before = prev.map(|p| p.usage).unwrap_or_default();
    let cost = match (now.usage.cost_usd, before.cost_usd) {
        (Some(n), b) => Some(((n - b.unwrap_or(0.0)) * 1e6).round() / 1e6),
        (None, _) => None,
    };
    HistoryStep {
        step: cp.step,
        state: now.workflow_state.clone(),
        status: now.status,
        what: what.join("; "),
        at: cp.at.map(crate::clock::iso),
        messages: cp.transcript_len,
        tokens: now.usage.tokens().saturating_sub(before.tokens()),
        total_tokens: now.usage.tokens(),
        cost_usd: cost,
        total_cost_usd: now.usage.cost_usd,
    }
}

/// `text` on one line, cut to 60 characters.
fn clip(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(59).collect::<String>())
    } else {
        line
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::state::{Exit, TrailStep};

    fn cp(step: u64) -> Checkpoint {
        Checkpoint {
            step,
            transcript_len: 0,
            state: Value::Null,
            at: Some(1_765_000_000_000),
        }
    }

    fn trail(to: &str, kind: &str, workflow: Option<&str>, status: Option<&str>) -> TrailStep {
        TrailStep {
            to: to.into(),
            kind: kind.into(),
            reason: None,
            workflow: workflow.map(str::to_string),
            status: status.map(str::to_string),
            ts: 0,
        }
    }

    fn running(trail: Vec<TrailStep>) -> SessionState {
        SessionState {
            workflow_state: "work".into(),
            trigger: "manual".into(),
            trail,
            ..SessionState::default()
        }
    }

    #[test]
    fn each_kind_of_step_in_words() {
        let first = running(vec![trail("work", "trigger", None, None)]);
        let said = describe(
            &cp(1),
            None,
            &first,
            &[json!({"role": "user", "content": "Hello\n  there"})],
        );
        assert_eq!(said.what, "started by manual; message \"Hello there\"");
        assert_eq!(said.at.as_deref(), Some("2025-12-06T05:46:40.000Z"));

        let mut next = first.clone();
        next.trail
            .push(trail("work", "sub-workflow", Some("calc"), Some("ok")));
        next.trail
            .push(trail("work", "sub-workflow", Some("lookup"), Some("error")));
        next.trail.push(trail("work", "reset", None, None));
        next.trail.push(trail("fix", "on_error", None, None));
        let calls = json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "calc", "arguments": "{}"}},
            {"id": "n", "type": "function", "function": {"name": archmax_kernel::tools::NOTE, "arguments": "{}"}}
        ]});
        assert_eq!(
            describe(&cp(2), Some(&first), &next, &[calls]).what,
            "called calc; sub-workflow calc returned; sub-workflow lookup failed; reset to work; routed to fix (on_error)"
        );

        let mut waiting = next.clone();
        waiting.status = Status::AwaitingInput;
        waiting.park = Some(Park::Input {
            state: "work".into(),
            title: None,
            reason: "the payment".into(),
            parked_at: String::new(),
            resume_at: Some("2026-01-01T00:00:00Z".into()),
        });
        assert_eq!(
            describe(&cp(3), Some(&next), &waiting, &[]).what,
            "waiting until 2026-01-01T00:00:00Z: the payment"
        );
        let mut failed = next.clone();
        failed.status = Status::Failed;
        failed.exit = Some(Exit {
            code: "turn-error".into(),
            reason: "x".repeat(80),
        });
        assert_eq!(
            describe(&cp(4), Some(&next), &failed, &[]).what,
            format!("failed (turn-error): {}…", "x".repeat(59))
        );
        let mut rejected = next.clone();
        rejected.status = Status::Rejected;
        rejected.rejected = Some("the budget".into());
        assert_eq!(
            describe(&cp(5), Some(&next), &rejected, &[]).what,
            "rejected: the budget"
        );
        assert_eq!(describe(&cp(6), Some(&next), &next, &[]).what, "checkpoint");

        let mut fork = next.clone();
        fork.forked_from = Some(ForkedFrom {
            session_id: "s1".into(),
            step: 4,
            forked_at: String::new(),
        });
        let copied = describe(
            &cp(1),
            None,
            &fork,
            &[json!({"role": "user", "content": "old"})],
        );
        assert_eq!(
            copied.what, "forked from s1 step 4",
            "what the source did is not repeated"
        );
    }

    #[test]
    fn a_steps_spend_is_what_it_added() {
        let mut before = running(Vec::new());
        before.usage.input_tokens = 100;
        before.usage.output_tokens = 10;
        before.usage.cost_usd = Some(0.5);
        let mut after = before.clone();
        after.usage.input_tokens = 130;
        after.usage.output_tokens = 15;
        after.usage.cost_usd = Some(0.75);
        let step = describe(&cp(2), Some(&before), &after, &[]);
        assert_eq!((step.tokens, step.total_tokens), (35, 145));
        assert_eq!(
            (step.cost_usd, step.total_cost_usd),
            (Some(0.25), Some(0.75))
        );
    }
}
