//! The harness calls that run a turn on a session (`send`, `invoke`, `decide`, `reply`,
//! `deliver`), how a firing lands on its session, and cancelling a turn.

use std::sync::Arc;

use archmax_machine::{Firing, InvokeInput, SendInput};
use napi_derive::napi;
use serde_json::Value;

use super::NativeAgent;
use super::drive::Running;
use crate::dto::variables_arg;
use crate::pump::NativeTurn;
use crate::result::plain_error;

#[napi]
impl NativeAgent {
    /// `send`: `{ message, trigger?, variables? }`; an empty id is resolved.
    #[napi(catch_unwind)]
    pub fn send(
        &self,
        session_id: Option<String>,
        #[napi(
            ts_arg_type = "{ message?: string; trigger?: string; variables?: Record<string, unknown> }"
        )]
        input: Value,
        session_path: Option<String>,
    ) -> NativeTurn {
        let h = match self.harness() {
            Ok(h) => h,
            Err(e) => return NativeTurn::ended(e),
        };
        let message = input
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let trigger = input
            .get("trigger")
            .and_then(Value::as_str)
            .map(str::to_string);
        let variables = match variables_arg(input.get("variables").cloned()) {
            Ok(variables) => variables,
            Err(e) => return NativeTurn::ended(e),
        };
        let explicit = session_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let input = SendInput {
            message,
            trigger,
            variables,
        };
        if let Some(id) = explicit {
            return self.session_turn(id, |id| async move { h.send(&id, input).await });
        }
        // The id is resolved inside the turn, so a warning it emits (a session path that
        // does not resolve) reaches `onEvent` in order with the turn's own events.
        let running = Arc::clone(&self.running);
        self.turn(async move {
            let id = h
                .resolve_firing(&Firing {
                    trigger: input.trigger.as_deref(),
                    variables: input.variables.clone(),
                    session_id: None,
                    session_path: session_path.as_deref(),
                })?
                .session_id;
            let _busy = Running::new(&running, &id);
            h.send(&id, input).await
        })
    }

    /// `invoke`: `{ messages, trigger?, variables? }` on `sessionId` (`thread_id`), else on
    /// `__default__`. The messages are appended; the last user message opens the turn.
    #[napi(catch_unwind)]
    pub fn invoke(
        &self,
        session_id: Option<String>,
        #[napi(
            ts_arg_type = "{ messages: Array<{ role: string; content: unknown }>; trigger?: string; variables?: Record<string, unknown> }"
        )]
        input: Value,
    ) -> NativeTurn {
        let h = match self.harness() {
            Ok(h) => h,
            Err(e) => return NativeTurn::ended(e),
        };
        let Some(messages) = input.get("messages").and_then(Value::as_array).cloned() else {
            return NativeTurn::ended(plain_error(
                "TypeError",
                "invoke's input must be { messages: [{ role, content }...] }",
            ));
        };
        let variables = match variables_arg(input.get("variables").cloned()) {
            Ok(variables) => variables,
            Err(e) => return NativeTurn::ended(e),
        };
        let input = InvokeInput {
            messages,
            trigger: input
                .get("trigger")
                .and_then(Value::as_str)
                .map(str::to_string),
            variables,
        };
        let id = session_id
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| archmax_machine::DEFAULT_SESSION_ID.to_string());
        self.session_turn(id, |id| async move { h.invoke(&id, input).await })
    }

    /// `decide`: moves a session parked at a human state to `to`.
    #[napi(catch_unwind)]
    pub fn decide(&self, session_id: String, to: String, comment: Option<String>) -> NativeTurn {
        match self.harness() {
            Ok(h) => self.session_turn(session_id, |id| async move {
                h.decide(&id, &to, comment.as_deref()).await
            }),
            Err(e) => NativeTurn::ended(e),
        }
    }

    /// `reply`: one reply-only message to a session parked at a human state.
    #[napi(catch_unwind)]
    pub fn reply(&self, session_id: String, message: String) -> NativeTurn {
        match self.harness() {
            Ok(h) => {
                self.session_turn(session_id, |id| async move { h.reply(&id, &message).await })
            }
            Err(e) => NativeTurn::ended(e),
        }
    }

    /// `deliver`: an event to a session parked awaiting input.
    #[napi(catch_unwind)]
    pub fn deliver(
        &self,
        session_id: String,
        trigger: String,
        #[napi(ts_arg_type = "Record<string, unknown> | null | undefined")] variables: Option<
            Value,
        >,
        message: Option<String>,
    ) -> NativeTurn {
        let h = match self.harness() {
            Ok(h) => h,
            Err(e) => return NativeTurn::ended(e),
        };
        let variables = match variables_arg(variables) {
            Ok(variables) => variables,
            Err(e) => return NativeTurn::ended(e),
        };
        self.session_turn(session_id, |id| async move {
            h.deliver(&id, &trigger, variables, message.as_deref())
                .await
        })
    }

    /// How a firing lands on its session (`agent.workflow.resolveSession`):
    /// `{ ok: true, value: ResolvedSession }`. Reads the session store, so it is async.
    #[napi(
        ts_args_type = "sessionId: string | null | undefined, trigger: string | null | undefined, variables: Record<string, unknown> | null | undefined, sessionPath: string | null | undefined",
        ts_return_type = "Promise<NativeResult>"
    )]
    pub async fn resolve_session(
        &self,
        session_id: Option<String>,
        trigger: Option<String>,
        variables: Option<Value>,
        session_path: Option<String>,
    ) -> Value {
        let variables = match variables_arg(variables) {
            Ok(variables) => variables,
            Err(e) => return e,
        };
        self.answer(|h| {
            h.resolve_firing(&Firing {
                trigger: trigger.as_deref(),
                variables,
                session_id: session_id.as_deref(),
                session_path: session_path.as_deref(),
            })
        })
    }

    /// The start state of `trigger`: `{ ok: true, value: startState }`, or `UnknownTriggerError`.
    #[napi(catch_unwind, ts_return_type = "NativeResult")]
    pub fn start_state(&self, trigger: String) -> Value {
        self.answer(|h| h.start_state(&trigger))
    }

    /// Cancels a session's turn in flight; false when none runs here.
    #[napi(catch_unwind)]
    pub fn cancel(&self, session_id: String) -> bool {
        self.harness()
            .map(|h| h.cancel(&session_id))
            .unwrap_or(false)
    }
}
