//! `onMcpElicitation` / `onMcpSampling`: a host answers what an MCP server asks of the client.
//!
//! A server's request arrives on the MCP pool's task, never inside a turn's poll, so it is a
//! threadsafe call of the one JS function `agent.js` gives (`{ kind, server, params }`); its
//! `{ ok, value | error }` envelope is read here. A handler that throws or answers what cannot
//! be read declines (elicitation) or refuses (sampling), with the reason in the trace: a
//! server's question never fails the tool call that raised it on the harness's side.

use archmax_machine::mcp::{ElicitAnswer, McpHost};
use archmax_machine::tools::BoxFuture;
use serde_json::{Value, json};

use crate::callback::{AsyncJsFn, Slot, call_js, take};

/// The host's handlers, behind the one JS function `agent.js` gives.
pub(crate) struct JsMcpHost {
    pub(crate) f: Slot<AsyncJsFn>,
    pub(crate) elicits: bool,
    pub(crate) samples: bool,
}

impl JsMcpHost {
    async fn ask(&self, kind: &str, server: &str, params: Value) -> Result<Value, String> {
        let f = take(&self.f).ok_or_else(|| "the agent was disposed".to_string())?;
        let input = json!({ "kind": kind, "server": server, "params": params }).to_string();
        call_js(f, input, "mcp", "MCP request handler").await
    }
}

/// An elicitation handler's answer: `{ action: 'accept', content? }`, `{ action: 'decline' }`
/// or `{ action: 'cancel' }`.
fn elicit_answer(answer: &Value) -> Result<ElicitAnswer, String> {
    match answer.get("action").and_then(Value::as_str) {
        Some("accept") => Ok(ElicitAnswer::Accept(
            answer.get("content").cloned().unwrap_or_else(|| json!({})),
        )),
        Some("decline") => Ok(ElicitAnswer::Decline),
        Some("cancel") => Ok(ElicitAnswer::Cancel),
        _ => Err(format!(
            "onMcpElicitation answered {answer}; expected {{ action: 'accept', content }}, {{ action: 'decline' }} or {{ action: 'cancel' }}"
        )),
    }
}

/// A sampling handler's answer: a `CreateMessageResult`, or a string (its text, answered as
/// the assistant's with the model `host`).
fn sample_answer(answer: Value) -> Value {
    match answer {
        Value::String(text) => json!({
            "role": "assistant",
            "content": { "type": "text", "text": text },
            "model": "host",
        }),
        other => other,
    }
}

impl McpHost for JsMcpHost {
    fn elicits(&self) -> bool {
        self.elicits
    }

    fn samples(&self) -> bool {
        self.samples
    }

    fn elicit<'a>(&'a self, server: &'a str, params: Value) -> BoxFuture<'a, ElicitAnswer> {
        Box::pin(async move {
            match self
                .ask("elicitation", server, params)
                .await
                .and_then(|a| elicit_answer(&a))
            {
                Ok(answer) => answer,
                Err(why) => {
                    tracing::warn!(server, "an MCP elicitation was declined: {why}");
                    ElicitAnswer::Decline
                }
            }
        })
    }

    fn sample<'a>(
        &'a self,
        server: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move {
            self.ask("sampling", server, params)
                .await
                .map(sample_answer)
                .map_err(|why| format!("the host's onMcpSampling failed: {why}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_elicitation_answer_reads_its_action() {
        assert_eq!(
            elicit_answer(&json!({ "action": "accept", "content": { "a": 1 } })),
            Ok(ElicitAnswer::Accept(json!({ "a": 1 })))
        );
        assert_eq!(
            elicit_answer(&json!({ "action": "accept" })),
            Ok(ElicitAnswer::Accept(json!({})))
        );
        assert_eq!(
            elicit_answer(&json!({ "action": "cancel" })),
            Ok(ElicitAnswer::Cancel)
        );
        let bad = elicit_answer(&json!({ "ok": true })).unwrap_err();
        assert!(
            bad.starts_with("onMcpElicitation answered {\"ok\":true}; expected"),
            "{bad}"
        );
    }

    #[test]
    fn a_sampling_answer_in_text_is_the_assistant_s() {
        assert_eq!(
            sample_answer(json!("hi")),
            json!({ "role": "assistant", "content": { "type": "text", "text": "hi" }, "model": "host" })
        );
        let full = json!({ "role": "assistant", "content": { "type": "text", "text": "x" }, "model": "m" });
        assert_eq!(sample_answer(full.clone()), full);
    }
}
