//! The session state the runtime checkpoints after every step: small and fixed
//! in size (the transcript lives beside it, appended).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

/// Where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, rename = "WorkflowStatus")]
pub enum Status {
    /// A turn is in progress.
    #[default]
    Running,
    /// The last turn finished normally.
    Completed,
    /// The agent raised, or the turn threw.
    Failed,
    /// Governance ended the turn.
    Rejected,
    /// Parked at a human state.
    AwaitingDecision,
    /// Parked for an outside event.
    AwaitingInput,
}

impl Status {
    /// The status as hosts see it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Rejected => "rejected",
            Status::AwaitingDecision => "awaiting_decision",
            Status::AwaitingInput => "awaiting_input",
        }
    }
    /// `completed`, `failed` or `rejected`.
    pub fn is_finished(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Rejected)
    }
}

/// Who locked a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockedBy {
    /// The host seeded it (or a delivery, or the harness: `trigger`).
    Host,
    /// The agent wrote it with `lock: true` (`archmax_reset` releases it).
    Agent,
}

/// One run variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Variable {
    /// The value.
    pub value: Value,
    /// Who locked it, if anyone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locked_by: Option<LockedBy>,
}

impl Variable {
    /// True when locked.
    pub fn locked(&self) -> bool {
        self.locked_by.is_some()
    }
}

/// One step of the audit trail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct TrailStep {
    /// The state entered.
    pub to: String,
    /// `trigger`, `agent`, `human`, `sub-workflow`, `reset` or `on_error`.
    #[ts(type = r#""trigger" | "agent" | "human" | "sub-workflow" | "reset" | "on_error""#)]
    pub kind: String,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The child's workflow, on a `sub-workflow` step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// How the child's run settled, on a `sub-workflow` step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = r#""ok" | "error""#)]
    pub status: Option<String>,
    /// Epoch milliseconds.
    pub ts: u64,
}

/// Token counts, cumulative per session.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields, rename = "UsageSummary")]
pub struct Usage {
    /// Input tokens (cache counts are a breakdown of it).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from a prompt cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to a prompt cache.
    pub cache_creation_tokens: u64,
    /// Cost, when pricing is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Adds one call's `usage` and its `cost` (when priced); the cost kept to a millionth of
    /// a dollar.
    pub fn add(&mut self, usage: &crate::model::Usage, cost: Option<f64>) {
        self.input_tokens = self.input_tokens.saturating_add(usage.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(usage.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(usage.cache_read_tokens);
        self.cache_creation_tokens = self
            .cache_creation_tokens
            .saturating_add(usage.cache_creation_tokens);
        if let Some(cost) = cost {
            let sum = self.cost_usd.unwrap_or(0.0) + cost;
            self.cost_usd = Some((sum * 1e6).round() / 1e6);
        }
    }

    /// The tokens a cap counts: input and output.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// True when nothing was spent: every counter zero and no cost.
    pub fn is_unused(&self) -> bool {
        self.is_empty() && self.cost_usd.is_none()
    }

    /// True when every counter is zero.
    pub fn is_empty(&self) -> bool {
        self.input_tokens == 0
            && self.output_tokens == 0
            && self.cache_read_tokens == 0
            && self.cache_creation_tokens == 0
    }
}

/// How a failed session ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exit {
    /// The code (`orders-unavailable`, `turn-error`, …).
    pub code: String,
    /// Why.
    pub reason: String,
}

/// A transition as a person deciding a human state sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export, optional_fields)]
pub struct DecisionOption {
    /// The target state.
    pub to: String,
    /// The button label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// `approve`, `reject`, `refine` or `none`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    #[ts(as = "Option<archmax_spec::model::TransitionType>")]
    pub kind: Option<String>,
}

/// Where a parked session waits: the pending decision or the pending input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(
    tag = "channel",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
#[ts(export, optional_fields, rename = "ParkRecord")]
pub enum Park {
    /// A person decides a human state.
    Decision {
        /// The human state.
        state: String,
        /// Its title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// 1-based, increasing with every decision of the session.
        seq: u64,
        /// The choices.
        transitions: Vec<DecisionOption>,
        /// Declared then attached evidence paths.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        #[ts(as = "Option<Vec<String>>", optional)]
        evidence: Vec<String>,
        /// ISO-8601 UTC.
        created_at: String,
    },
    /// An outside event is awaited.
    Input {
        /// The state that waits.
        state: String,
        /// Its title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// What it waits for.
        reason: String,
        /// ISO-8601 UTC.
        parked_at: String,
        /// When whoever schedules the wake-up should deliver (ISO-8601 UTC).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        resume_at: Option<String>,
    },
}

impl Park {
    /// `decision` or `input`.
    pub fn channel(&self) -> &'static str {
        match self {
            Park::Decision { .. } => "decision",
            Park::Input { .. } => "input",
        }
    }

    /// The parked state.
    pub fn state(&self) -> &str {
        match self {
            Park::Decision { state, .. } | Park::Input { state, .. } => state,
        }
    }
}

/// A child of this session parked for a person or an event (`runtime.md` §7.7): the head of
/// the queue is presented as this session's own park, and a decision or delivery on this
/// session resumes the child by identity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingDelegation {
    /// The calling state.
    pub state: String,
    /// The child's workflow.
    pub workflow: String,
    /// The call the child was started by.
    pub tool_call_id: String,
    /// The child's identity `{state}:{workflow}:{ordinal}` (its id is `{parent}~{identity}`).
    pub identity: String,
    /// The dispatch's id (`subwf-{n}`).
    pub dispatch_id: String,
    /// The child's own park record, as the child holds it.
    pub decision: Park,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Where a fork came from (a forked session's `forkedFrom`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct ForkedFrom {
    /// The session it was forked from.
    pub session_id: String,
    /// The step of that session it starts from.
    pub step: u64,
    /// When the fork was made (ISO-8601 UTC).
    pub forked_at: String,
}

/// Everything the runtime knows about a session between steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// The workflow the session runs.
    pub workflow: String,
    /// The current state.
    pub workflow_state: String,
    /// Where `archmax_reset` goes.
    pub entry_state: String,
    /// The trigger of the current turn.
    pub trigger: String,
    /// The spec the last turn ran under.
    pub spec_hash: String,
    /// Where the session stands.
    pub status: Status,
    /// When `status` last changed (epoch milliseconds): stamped by the commit that changed
    /// it; 0 for a session last written before it was recorded.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub status_since: u64,
    /// A pending or committed rejection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
    /// How a failed session ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<Exit>,
    /// The run's variables.
    pub variables: BTreeMap<String, Variable>,
    /// Model calls in the current visit of the current state.
    pub state_turns: u64,
    /// Model calls in the current turn, across states.
    pub turn_model_calls: u64,
    /// The budget warning was given this turn.
    #[serde(default)]
    pub budget_warned: bool,
    /// The budget already routed through `on_error` this turn.
    #[serde(default)]
    pub budget_routed: bool,
    /// A spending cap already routed through `on_error` this turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cap_routed: bool,
    /// This turn's usage (the caps per turn read it); not written while empty, so a
    /// checkpoint of a turn that reports no usage is as long as before.
    #[serde(default, skip_serializing_if = "Usage::is_unused")]
    pub turn_usage: Usage,
    /// The audit trail.
    pub trail: Vec<TrailStep>,
    /// Cumulative usage.
    pub usage: Usage,
    /// Transcript lines this state covers.
    pub transcript_len: u64,
    /// Where the session is parked, if it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub park: Option<Park>,
    /// The W3C `traceparent` of the turn that parked the session, when a host traced it:
    /// the turn that resumes the park links to it (`crate::trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub park_trace: Option<String>,
    /// Decisions so far (the next decision's `seq` is this plus one).
    #[serde(default)]
    pub decision_count: u64,
    /// Delegations dispatched so far: the next child's ordinal (`<id>~<state>:<workflow>:<n>`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sub_workflow_count: u64,
    /// Children parked in this session's delegations, presented one at a time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending_delegations: Vec<PendingDelegation>,
    /// Parks counted per state, against `budget.maxParks`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub park_counts: BTreeMap<String, u64>,
    /// Corrections used per hook, keyed `<state>::<phase>::<index>`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub iterations: BTreeMap<String, u64>,
    /// The agent's todo list (`write_todos`).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub todos: Value,
    /// The session and step this session was forked from, when it is a fork.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<ForkedFrom>,
}

impl SessionState {
    /// The queued child this session's park presents, if it presents one (the caller's own
    /// park, a wait or a human state it moved into beside the call, is not a child's): the
    /// record is the child's, unchanged but for a decision's `seq`.
    pub fn presented_child(&self) -> Option<&PendingDelegation> {
        let head = self.pending_delegations.first()?;
        let presents = match (self.park.as_ref()?, &head.decision) {
            (
                Park::Decision {
                    state,
                    transitions,
                    created_at,
                    ..
                },
                Park::Decision {
                    state: s,
                    transitions: t,
                    created_at: c,
                    ..
                },
            ) => state == s && transitions == t && created_at == c,
            (own, child) => own == child,
        };
        presents.then_some(head)
    }

    /// The variables as the kernel reads them (values only).
    pub fn kernel_variables(&self) -> archmax_kernel::Variables {
        self.variables
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn park_records_round_trip_through_the_checkpoint() {
        let mut s = SessionState {
            status: Status::AwaitingInput,
            ..SessionState::default()
        };
        s.park = Some(Park::Input {
            state: "poll".into(),
            title: None,
            reason: "the bank statement".into(),
            parked_at: "2026-03-01T09:30:00.000Z".into(),
            resume_at: Some("2026-03-02T09:30:00.000Z".into()),
        });
        let v = serde_json::to_value(&s).expect("json");
        assert_eq!(v["park"]["channel"], "input");
        assert_eq!(v["park"]["resumeAt"], "2026-03-02T09:30:00.000Z");
        assert_eq!(v["status"], "awaiting_input");
        let back: SessionState = serde_json::from_value(v).expect("back");
        assert_eq!(back, s);
    }
}
