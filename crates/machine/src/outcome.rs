//! What a turn hands back to the host.

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::state::{SessionState, Status, TrailStep, Usage};

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
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

/// The result of a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Outcome {
    /// How it ended.
    pub kind: OutcomeKind,
    /// `turn`, `decide`, `reply` or `deliver`.
    pub disposition: &'static str,
    /// The session.
    pub session_id: String,
    /// The session's status.
    pub status: &'static str,
    /// The current state.
    pub state: String,
    /// The agent's last text ("" if none).
    pub reply: String,
    /// Why the turn was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// `{ success: true }` when completed; the failure record when failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<Value>,
    /// The audit trail.
    pub audit_trail: Vec<TrailStep>,
    /// name → { value, locked }.
    pub variables: Map<String, Value>,
    /// `decision` or `input`, when parked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parked_channel: Option<&'static str>,
    /// The park record, when parked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pending: Option<crate::state::Park>,
    /// Cumulative usage; absent when every counter is 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// The last text the agent said, skipping runtime notes.
pub fn last_agent_text(messages: &[Value]) -> String {
    messages
        .iter()
        .rev()
        .filter(|m| {
            m.get("role").and_then(Value::as_str) == Some("assistant") && m.get("archmax").is_none()
        })
        .filter_map(|m| m.get("content").and_then(Value::as_str))
        .find(|t| !t.trim().is_empty())
        .unwrap_or_default()
        .to_string()
}

impl Outcome {
    /// The outcome of a session as it stands.
    pub fn from_session(session_id: &str, s: &SessionState, messages: &[Value]) -> Outcome {
        let kind = match s.status {
            Status::AwaitingDecision | Status::AwaitingInput if s.park.is_some() => {
                OutcomeKind::Parked
            }
            Status::Rejected => OutcomeKind::Rejected,
            Status::Failed => OutcomeKind::Failed,
            _ => OutcomeKind::Completed,
        };
        let exit = match kind {
            OutcomeKind::Completed => Some(json!({ "success": true })),
            OutcomeKind::Failed => s
                .exit
                .as_ref()
                .map(|e| json!({ "success": false, "code": e.code, "reason": e.reason })),
            _ => None,
        };
        Outcome {
            kind,
            disposition: "turn",
            session_id: session_id.to_string(),
            status: s.status.as_str(),
            state: match &s.park {
                Some(
                    crate::state::Park::Decision { state, .. }
                    | crate::state::Park::Input { state, .. },
                ) => state.clone(),
                None => s.workflow_state.clone(),
            },
            reply: last_agent_text(messages),
            rejected: s
                .rejected
                .clone()
                .filter(|r| !r.trim().is_empty() && s.status == Status::Rejected),
            exit,
            audit_trail: s.trail.clone(),
            variables: s
                .variables
                .iter()
                .map(|(k, v)| (k.clone(), json!({ "value": v.value, "locked": v.locked() })))
                .collect(),
            usage: (!s.usage.is_empty()).then_some(s.usage),
            parked_channel: s.park.as_ref().map(|p| match p {
                crate::state::Park::Decision { .. } => "decision",
                crate::state::Park::Input { .. } => "input",
            }),
            pending: s.park.clone(),
        }
    }
}
