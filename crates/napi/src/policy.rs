//! `policyRules`: host governance rules written in JS, as kernel custom rules.
//!
//! A rule is synchronous, like the kernel. While a turn is polled on the JS main thread
//! (`crate::pump`) the rules are called directly; a turn run on a tokio worker (a host
//! session store) waits for the main thread to answer. `agent.js` folds the host's rules
//! into one function, `(actionJson) => verdictJson | ""`, that never throws; it only ever
//! answers a block (a host rule can only tighten what the workflow allows).

use std::sync::{Arc, PoisonError};

use archmax_kernel::{CallContext, CustomRule, Decision, Origin, ToolCall};
use archmax_machine::HostRules;
use napi::bindgen_prelude::{Function, FunctionRef, Status};
use napi::threadsafe_function::ThreadsafeFunction;
use napi_derive::napi;
use serde_json::{Value, json};

use crate::agent::{NativeAgent, plain_error};

/// The rules' function as the worker path calls it: `(actionJson) => verdictJson | ""`.
type SyncJsFn = ThreadsafeFunction<String, String, String, Status, false, true>;

/// The rule id of a rule that could not be asked (fail closed).
const UNANSWERED: &str = "policy.error";

/// The host's rules, folded into one JS function by `agent.js`.
struct JsRules {
    direct: FunctionRef<String, String>,
    queued: Arc<SyncJsFn>,
}

impl JsRules {
    fn ask(&self, action: String) -> Result<String, String> {
        match crate::pump::env() {
            Some(env) => self
                .direct
                .borrow_back(&env)
                .and_then(|f| f.call(action))
                .map_err(|e| e.reason.clone()),
            None => {
                let queued = Arc::clone(&self.queued);
                crate::store::wait(async move {
                    queued
                        .call_async(action)
                        .await
                        .map_err(|e| e.reason.clone())
                })
            }
        }
    }
}

impl CustomRule for JsRules {
    fn check(&self, call: &ToolCall<'_>, ctx: &CallContext<'_>) -> Option<Decision> {
        let origin = match ctx.origin {
            Origin::Agent => "agent",
            Origin::Script => "script",
            Origin::Lifecycle => "lifecycle",
        };
        let action = json!({
            "kind": "tool-call",
            "state": ctx.state,
            "tool": call.tool,
            "args": call.args,
            "origin": origin,
            "replyOnly": ctx.reply_only,
            "variables": ctx.variables,
        })
        .to_string();
        let answer = match self.ask(action) {
            Ok(answer) => answer,
            Err(e) => {
                return Some(Decision::custom_block(
                    UNANSWERED,
                    format!(
                        "[workflow] BLOCKED: '{}' was refused because the host's policy rules could not be asked: {e}",
                        call.tool
                    ),
                ));
            }
        };
        if answer.is_empty() {
            return None;
        }
        Some(block_of(call.tool, &answer))
    }
}

/// The block an `agent.js` verdict answer describes (anything unreadable blocks too).
fn block_of(tool: &str, answer: &str) -> Decision {
    let verdict: Value = serde_json::from_str(answer).unwrap_or(Value::Null);
    let rule = verdict
        .get("ruleId")
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty())
        .unwrap_or(UNANSWERED);
    let reason = verdict
        .get("reason")
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| {
            format!("[workflow] BLOCKED: '{tool}' was refused by the host's policy rule '{rule}'.")
        });
    let mut decision = Decision::custom_block(rule, reason);
    if let Some(warn) = verdict.get("warn").and_then(Value::as_bool) {
        decision.warn = warn;
    }
    decision.terminal = verdict.get("terminal").and_then(Value::as_bool) == Some(true);
    decision
}

#[napi]
impl NativeAgent {
    /// Sets the host's governance rules (call it before `open`): `rules` is the one
    /// function `agent.js` folds them into, passed twice (called directly, and from
    /// worker threads).
    #[napi(
        catch_unwind,
        ts_args_type = "rules: (actionJson: string) => string, queued: (actionJson: string) => string",
        ts_return_type = "NativeResult"
    )]
    pub fn use_policy(&self, rules: Function<String, String>, queued: SyncJsFn) -> Value {
        let direct = match rules.create_ref() {
            Ok(r) => r,
            Err(e) => return plain_error("Error", e.reason.clone()),
        };
        let mut slot = self
            .policy_rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *slot = HostRules(vec![Arc::new(JsRules {
            direct,
            queued: Arc::new(queued),
        })]);
        json!({ "ok": true, "value": null })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verdict_answer_becomes_a_block_and_garbage_blocks_too() {
        let d = block_of(
            "crm",
            r#"{"decision":"block","ruleId":"vip-only","reason":"no VIPs","warn":false,"terminal":true}"#,
        );
        assert!(!d.allowed);
        assert_eq!(d.rule.as_str(), "vip-only");
        assert_eq!(d.message.as_deref(), Some("no VIPs"));
        assert!(!d.warn && d.terminal);
        let d = block_of("crm", "not json");
        assert!(!d.allowed);
        assert_eq!(d.rule.as_str(), UNANSWERED);
        assert_eq!(
            d.message.as_deref(),
            Some("[workflow] BLOCKED: 'crm' was refused by the host's policy rule 'policy.error'.")
        );
    }
}
