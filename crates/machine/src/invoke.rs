//! `invoke`: the original's entry point of a plain agent (a LangGraph `invoke`), on
//! both kinds of agent. The input messages are appended to the session's transcript;
//! the last user message is the turn's message.

use serde_json::{Map, Value};

use crate::outcome::Outcome;
use crate::turn::SendInput;
use crate::{error::RunError, harness::Harness};

/// The session an `invoke` without `configurable.thread_id` runs on.
pub const DEFAULT_SESSION_ID: &str = "__default__";

/// What `invoke` takes: `{ messages: [{ role, content }...], trigger?, variables? }`.
#[derive(Debug, Clone, Default)]
pub struct InvokeInput {
    /// The messages to append (`user`/`human`, `assistant`/`ai`, `system`); others are dropped.
    pub messages: Vec<Value>,
    /// A governed agent's trigger (default `manual`); ignored by a plain agent.
    pub trigger: Option<String>,
    /// A governed agent's seeds (locked); ignored by a plain agent.
    pub variables: Map<String, Value>,
}

impl Harness {
    /// Runs one turn on `session_id` (checked first: `SessionStoreIdError`). A plain agent
    /// appends the messages and answers; a governed one runs the turn `send` would (a
    /// delivery on a session parked for input), with the earlier input messages appended
    /// before the last user message, except that a session parked for a decision takes a
    /// fresh turn (at a human state it presents the decision again, on the next `seq`) and
    /// a fresh turn of a disabled workflow settles `rejected` (no model call) instead of
    /// refusing. Without a non-blank user message the turn is refused (`EmptyMessageError`).
    pub async fn invoke(&self, session_id: &str, input: InvokeInput) -> Result<Outcome, RunError> {
        let id = self.parse_session_id(session_id)?;
        let mut messages = crate::plain::input_messages(&input.messages);
        let last_user = messages
            .iter()
            .rposition(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .filter(|&i| {
                !crate::outcome::content_text(&messages[i]["content"])
                    .trim()
                    .is_empty()
            });
        let Some(last_user) = last_user else {
            return Err(RunError::EmptyMessage(id.as_str().to_string()));
        };
        if self.plain {
            return self.run_plain(id.as_str(), messages).await;
        }
        // Messages after the last user message are dropped: the turn answers that one.
        messages.truncate(last_user + 1);
        let message = messages
            .pop()
            .map(|m| m["content"].clone())
            .unwrap_or_default();
        let input = SendInput {
            message: crate::outcome::content_text(&message),
            trigger: input.trigger,
            variables: input.variables,
        };
        self.send_with(id.as_str(), input, messages, true).await
    }
}
