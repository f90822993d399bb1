//! What a turn hands back to the host.

use std::collections::BTreeMap;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::state::{Exit, Park, SessionState, Status, TrailStep, Usage, Variable};

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum OutcomeKind {
    /// The turn finished normally.
    Completed,
    /// The session waits for a person or an event.
    Parked,
    /// Governance ended the turn.
    Rejected,
    /// The agent raised, or the turn threw.
    Failed,
}

/// One run variable as hosts see it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct VariableEntry {
    /// The value.
    #[ts(type = "unknown")]
    pub value: Value,
    /// True when the host (or the agent, with `lock: true`) locked it.
    pub locked: bool,
}

impl VariableEntry {
    /// The host's view of a stored variable.
    pub fn of(v: &Variable) -> Self {
        VariableEntry {
            value: v.value.clone(),
            locked: v.locked(),
        }
    }
}

/// A session's variables as hosts see them, by name.
pub fn variable_entries(s: &SessionState) -> BTreeMap<String, VariableEntry> {
    s.variables
        .iter()
        .map(|(k, v)| (k.clone(), VariableEntry::of(v)))
        .collect()
}

/// How a session ended: `{ success: true }`, or `{ success: false, code, reason }`
/// for a raise or a thrown turn.
#[derive(Debug, Clone, PartialEq, Eq, TS)]
#[ts(
    export,
    type = "{ success: true } | { success: false, code: string, reason: string }"
)]
pub enum SessionExit {
    /// The turn finished normally.
    Success,
    /// The agent raised, or the turn threw.
    Failure(Exit),
}

impl Serialize for SessionExit {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SessionExit::Success => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("success", &true)?;
                map.end()
            }
            SessionExit::Failure(exit) => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("success", &false)?;
                map.serialize_entry("code", &exit.code)?;
                map.serialize_entry("reason", &exit.reason)?;
                map.end()
            }
        }
    }
}

/// The child a parked session's park belongs to: a sub-workflow's child session parked (for
/// a person or an event), and its caller parked with it, presenting the child's park as its
/// own. A decision or delivery on the caller is handed to this child.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct DelegatedPark {
    /// The child's workflow.
    pub workflow: String,
    /// The child's own session id (`<caller>~<identity>`).
    pub session_id: String,
    /// The delegation's identity, `<state>:<workflow>:<ordinal>`.
    pub identity: String,
    /// The delegation's `dispatchId`, as its `sub-workflow-*` events and the child's
    /// events (`subWorkflowDispatchId`) name it.
    pub dispatch_id: String,
    /// The call in the caller's transcript the child answers.
    pub tool_call_id: String,
    /// The caller's state that made the call: where the caller parks, and resumes.
    pub state: String,
}

impl DelegatedPark {
    /// The child `session` (of id `session_id`) presents as its park, if it presents one.
    pub fn of(session_id: &str, session: &SessionState) -> Option<DelegatedPark> {
        let child = session.presented_child()?;
        Some(DelegatedPark {
            workflow: child.workflow.clone(),
            session_id: format!(
                "{session_id}{}{}",
                crate::store::CHILD_SEPARATOR,
                child.identity
            ),
            identity: child.identity.clone(),
            dispatch_id: child.dispatch_id.clone(),
            tool_call_id: child.tool_call_id.clone(),
            state: child.state.clone(),
        })
    }
}

/// The result of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct Outcome {
    /// How it ended.
    pub kind: OutcomeKind,
    /// `turn`, `decide`, `reply` or `deliver`.
    #[ts(type = r#""turn" | "decide" | "reply" | "deliver""#)]
    pub disposition: &'static str,
    /// The session.
    pub session_id: String,
    /// The session's status.
    #[ts(as = "Status")]
    pub status: &'static str,
    /// The current state: the state parked at when parked, else `workflowState`.
    pub state: String,
    /// The state the session stands in (the original's `workflowState`).
    pub workflow_state: String,
    /// Whether a resumed session (`decide`, `reply`, `deliver`) parked again, on either
    /// channel; absent for a turn, as in the original's `send` outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reparked: Option<bool>,
    /// The agent's last text ("" if none).
    pub reply: String,
    /// Why the turn was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// `{ success: true }` when completed; the failure record when failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(as = "Option<SessionExit>")]
    pub exit: Option<Value>,
    /// The audit trail.
    pub audit_trail: Vec<TrailStep>,
    /// name → { value, locked } (see [`VariableEntry`]).
    #[ts(as = "BTreeMap<String, VariableEntry>")]
    pub variables: Map<String, Value>,
    /// `decision` or `input`, when parked.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = r#""decision" | "input""#)]
    pub parked_channel: Option<&'static str>,
    /// The park record, when parked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<Park>,
    /// When parked because a sub-workflow's child parked: which child, and which call.
    /// Absent for the session's own park.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delegation: Option<DelegatedPark>,
    /// Cumulative usage; absent when every counter is 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The session's whole transcript (OpenAI chat messages; runtime notes carry `archmax`).
    #[ts(type = "Array<Record<string, unknown>>")]
    pub messages: Vec<Value>,
}

/// The text of a message content: a string, or the concatenated `text` of its parts.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// The last text the agent said, skipping runtime notes, trimmed ("" if none).
pub fn last_agent_text(messages: &[Value]) -> String {
    messages
        .iter()
        .rev()
        .filter(|m| {
            m.get("role").and_then(Value::as_str) == Some("assistant") && m.get("archmax").is_none()
        })
        .filter_map(|m| m.get("content").map(content_text))
        .map(|t| t.trim().to_string())
        .find(|t| !t.is_empty())
        .unwrap_or_default()
}

impl Outcome {
    /// This outcome as `disposition` settled it: a resume (`decide`, `reply`, `deliver`)
    /// says whether it parked again.
    pub fn with_disposition(mut self, disposition: &'static str) -> Outcome {
        self.disposition = disposition;
        self.reparked = (disposition != "turn").then_some(self.kind == OutcomeKind::Parked);
        self
    }

    /// The outcome of a session as it stands.
    pub fn from_session(session_id: &str, s: &SessionState, messages: &[Value]) -> Outcome {
        Self::from_session_owning(session_id, s, messages.to_vec())
    }

    /// [`from_session`](Self::from_session), keeping `messages` instead of a copy (a turn's
    /// end hands its whole transcript over).
    pub fn from_session_owning(
        session_id: &str,
        s: &SessionState,
        messages: Vec<Value>,
    ) -> Outcome {
        let kind = match s.status {
            Status::AwaitingDecision | Status::AwaitingInput if s.park.is_some() => {
                OutcomeKind::Parked
            }
            Status::Rejected => OutcomeKind::Rejected,
            Status::Failed => OutcomeKind::Failed,
            _ => OutcomeKind::Completed,
        };
        let exit = match kind {
            OutcomeKind::Completed => Some(SessionExit::Success),
            OutcomeKind::Failed => s.exit.clone().map(SessionExit::Failure),
            _ => None,
        };
        Outcome {
            kind,
            disposition: "turn",
            session_id: session_id.to_string(),
            status: s.status.as_str(),
            state: s
                .park
                .as_ref()
                .map_or_else(|| s.workflow_state.clone(), |p| p.state().to_string()),
            workflow_state: s.workflow_state.clone(),
            reparked: None,
            reply: last_agent_text(&messages),
            rejected: s
                .rejected
                .clone()
                .filter(|r| !r.trim().is_empty() && s.status == Status::Rejected),
            exit: exit.and_then(|e| serde_json::to_value(e).ok()),
            audit_trail: s.trail.clone(),
            variables: variable_entries(s)
                .into_iter()
                .filter_map(|(k, v)| Some((k, serde_json::to_value(v).ok()?)))
                .collect(),
            usage: (!s.usage.is_empty()).then_some(s.usage),
            parked_channel: s.park.as_ref().map(Park::channel),
            pending: s.park.clone(),
            delegation: (kind == OutcomeKind::Parked)
                .then(|| DelegatedPark::of(session_id, s))
                .flatten(),
            messages,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{LockedBy, Variable};

    #[test]
    fn the_outcome_json_keeps_its_field_order() {
        let mut s = SessionState {
            workflow_state: "work".into(),
            status: Status::Failed,
            exit: Some(Exit {
                code: "no-invoice".into(),
                reason: "nothing to bill".into(),
            }),
            ..SessionState::default()
        };
        s.variables.insert(
            "trigger".into(),
            Variable {
                value: "manual".into(),
                locked_by: Some(LockedBy::Host),
            },
        );
        let failed = serde_json::to_string(&Outcome::from_session("s", &s, &[])).unwrap();
        assert_eq!(
            failed,
            r#"{"kind":"failed","disposition":"turn","sessionId":"s","status":"failed","state":"work","workflowState":"work","reply":"","exit":{"success":false,"code":"no-invoice","reason":"nothing to bill"},"auditTrail":[],"variables":{"trigger":{"value":"manual","locked":true}},"messages":[]}"#
        );
        s.status = Status::Completed;
        let completed = serde_json::to_value(Outcome::from_session("s", &s, &[])).unwrap();
        assert_eq!(completed["exit"], serde_json::json!({ "success": true }));
    }

    #[test]
    fn the_reply_is_the_last_agent_text_trimmed_skipping_notes_and_reading_parts() {
        let messages = vec![
            serde_json::json!({ "role": "assistant", "content": [{ "type": "text", "text": "  Part " }, { "type": "text", "text": "one. " }] }),
            serde_json::json!({ "role": "assistant", "content": "", "archmax": { "note": "decision" } }),
            serde_json::json!({ "role": "assistant", "content": "   " }),
        ];
        assert_eq!(last_agent_text(&messages), "Part one.");
        assert_eq!(last_agent_text(&messages[1..]), "");
    }
}
