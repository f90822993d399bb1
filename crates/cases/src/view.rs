//! What assertions see after an action: the outcome it returned and the session's whole
//! transcript (tool calls, trail and messages accumulate across the case's turns).

use archmax_machine::outcome::content_text;
use archmax_machine::{Outcome, OutcomeKind};
use serde_json::Value;

/// A tool call's status, as the transcript records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStatus {
    /// Not answered (yet).
    Pending,
    /// Answered without error.
    Completed,
    /// Answered with an error.
    Failed,
    /// Refused by governance (or at dispatch, for a sub-workflow).
    Rejected,
}

impl CallStatus {
    /// As the judge's evidence names it.
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Pending => "pending",
            CallStatus::Completed => "completed",
            CallStatus::Failed => "failed",
            CallStatus::Rejected => "rejected",
        }
    }
}

/// One of the agent's tool calls.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallView {
    /// The tool name.
    pub name: String,
    /// Its arguments (`{}` when they were not JSON).
    pub input: Value,
    /// How it was answered.
    pub status: CallStatus,
    /// The answer's text, when answered.
    pub output: Option<String>,
}

/// One entry of the chronological record the judge reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// The agent's text.
    Message(String),
    /// A runtime note (`kind`, text).
    Note(String, String),
    /// A tool call (index into [`View::calls`]).
    Call(usize),
}

/// The view of a case's session after its latest action.
#[derive(Debug, Clone)]
pub struct View {
    /// The action's outcome.
    pub outcome: Outcome,
    /// Every tool call of the session, in order (runtime notes excluded).
    pub calls: Vec<ToolCallView>,
    /// Every text the agent said (runtime notes excluded), in order.
    pub texts: Vec<String>,
    /// The record the judge reads, in order.
    pub record: Vec<Entry>,
}

impl View {
    /// The view of `outcome` (whose `messages` are the session's whole transcript).
    pub fn of(outcome: Outcome) -> View {
        let mut calls: Vec<ToolCallView> = Vec::new();
        let mut texts = Vec::new();
        let mut record = Vec::new();
        let mut ids: Vec<(String, usize)> = Vec::new();
        for m in &outcome.messages {
            let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
            let note = m
                .get("archmax")
                .and_then(|a| a.get("note"))
                .and_then(Value::as_str);
            match role {
                "assistant" if m.get("archmax").is_none() => {
                    let text = m.get("content").map(content_text).unwrap_or_default();
                    if !text.trim().is_empty() {
                        texts.push(text.clone());
                        record.push(Entry::Message(text));
                    }
                    for c in m
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let f = c.get("function");
                        let name = f
                            .and_then(|f| f.get("name"))
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string();
                        let input = f
                            .and_then(|f| f.get("arguments"))
                            .and_then(Value::as_str)
                            .and_then(|a| serde_json::from_str(a).ok())
                            .unwrap_or_else(|| Value::Object(Default::default()));
                        let id = c
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string();
                        ids.push((id, calls.len()));
                        record.push(Entry::Call(calls.len()));
                        calls.push(ToolCallView {
                            name,
                            input,
                            status: CallStatus::Pending,
                            output: None,
                        });
                    }
                }
                "tool" if note.is_none() => {
                    let id = m.get("tool_call_id").and_then(Value::as_str);
                    let Some(&(_, i)) = ids.iter().rev().find(|(c, _)| Some(c.as_str()) == id)
                    else {
                        continue;
                    };
                    let error = m.get("is_error").and_then(Value::as_bool) == Some(true);
                    let blocked =
                        m.get("governance_blocked").and_then(Value::as_bool) == Some(true);
                    calls[i].status = match (blocked, error) {
                        (true, _) => CallStatus::Rejected,
                        (false, true) => CallStatus::Failed,
                        (false, false) => CallStatus::Completed,
                    };
                    calls[i].output = Some(m.get("content").map(content_text).unwrap_or_default());
                }
                "tool" => {
                    if let Some(kind) = note {
                        let text = m.get("content").map(content_text).unwrap_or_default();
                        record.push(Entry::Note(kind.to_string(), text));
                    }
                }
                _ => {}
            }
        }
        View {
            outcome,
            calls,
            texts,
            record,
        }
    }

    /// Parked, by the outcome.
    pub fn parked(&self) -> bool {
        self.outcome.kind == OutcomeKind::Parked
    }

    /// A tool result carried an error that was not a governance refusal.
    pub fn tool_failed(&self) -> bool {
        self.calls.iter().any(|c| c.status == CallStatus::Failed)
    }

    /// The session failed (a raise, a thrown turn, a hook failure).
    pub fn failed(&self) -> bool {
        self.outcome.kind == OutcomeKind::Failed
    }

    /// The session ended through `archmax_raise` (not a runtime failure code).
    pub fn raised(&self) -> bool {
        let code = self
            .outcome
            .exit
            .as_ref()
            .and_then(|e| e.get("code"))
            .and_then(Value::as_str);
        self.failed()
            && !matches!(
                code,
                None | Some("turn-error" | "turn-cancelled" | "recursion-limit")
            )
    }

    /// The text `reply` matches: every agent text of the session joined by `\n`, else the
    /// outcome's reply.
    pub fn reply_text(&self) -> String {
        if self.texts.is_empty() {
            self.outcome.reply.clone()
        } else {
            self.texts.join("\n")
        }
    }
}
