//! `policyRules`: a host's governance rules written in JS, each one a kernel
//! [`HostRule`](archmax_kernel::host_rules::HostRule). The chain (order, abstain, pass,
//! block, the refusal when a rule cannot answer, every text) is the kernel's
//! (`archmax_kernel::host_rules`); JS only calls rule `index` with the action and answers
//! `{ verdict }` or `{ threw }` (`agent.js` `policyAsk`).
//!
//! A rule is synchronous, like the kernel. While a turn is polled on the JS main thread
//! (`crate::pump`), or `Governance.decide` runs there, the rules are called directly; a turn
//! run on a tokio worker (a host session store) waits for the main thread to answer.

use std::sync::Arc;

use archmax_kernel::host_rules::{Asked, HostRule, HostRules};
use napi::bindgen_prelude::{FunctionRef, Status};
use napi::threadsafe_function::ThreadsafeFunction;
use serde_json::{Value, json};

/// The ask function as the worker path calls it: `(callJson) => answerJson`.
pub(crate) type SyncJsFn = ThreadsafeFunction<String, String, String, Status, false, true>;

/// The JS function that asks one of the host's rules (`agent.js` `policyAsk`).
pub(crate) struct JsAsk {
    direct: FunctionRef<String, String>,
    queued: Option<Arc<SyncJsFn>>,
}

impl JsAsk {
    /// The ask function, called directly on the JS thread and (when `queued` is given) from
    /// workers through it.
    pub(crate) fn new(direct: FunctionRef<String, String>, queued: Option<SyncJsFn>) -> Arc<JsAsk> {
        Arc::new(JsAsk {
            direct,
            queued: queued.map(Arc::new),
        })
    }

    fn call(&self, input: String) -> Result<String, String> {
        match (crate::pump::env(), &self.queued) {
            (Some(env), _) => self
                .direct
                .borrow_back(&env)
                .and_then(|f| f.call(input))
                .map_err(|e| e.reason.clone()),
            (None, Some(queued)) => {
                let queued = Arc::clone(queued);
                crate::store::wait(async move {
                    queued.call_async(input).await.map_err(|e| e.reason.clone())
                })
            }
            (None, None) => Err("the JS thread is not there to answer".to_string()),
        }
    }
}

/// Host rule `index`, asked through the shared ask function.
struct JsRule {
    index: usize,
    ask: Arc<JsAsk>,
}

impl HostRule for JsRule {
    fn ask(&self, action: &Value) -> Asked {
        let input = json!({ "index": self.index, "action": action }).to_string();
        match self.ask.call(input) {
            Err(why) => Asked::Unreachable(why),
            Ok(answer) => read_answer(&answer),
        }
    }
}

/// What `policyAsk` answered: `{ verdict }` or `{ threw }` (anything else could not be read).
fn read_answer(answer: &str) -> Asked {
    match serde_json::from_str::<Value>(answer) {
        Ok(Value::Object(mut o)) => {
            if let Some(Value::String(why)) = o.remove("threw") {
                Asked::Threw(why)
            } else {
                Asked::Answer(o.remove("verdict").unwrap_or(Value::Null))
            }
        }
        _ => Asked::Unreachable(format!("the rules answered something unreadable: {answer}")),
    }
}

/// The chain of `count` rules asked through `ask`.
pub(crate) fn host_rules(ask: &Arc<JsAsk>, count: u32) -> HostRules {
    HostRules::new(
        (0..count as usize)
            .map(|index| {
                Box::new(JsRule {
                    index,
                    ask: Arc::clone(ask),
                }) as Box<dyn HostRule>
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ask_answer_is_a_verdict_a_throw_or_unreadable() {
        assert_eq!(
            read_answer(r#"{"verdict":{"decision":"block"}}"#),
            Asked::Answer(json!({ "decision": "block" }))
        );
        assert_eq!(
            read_answer(r#"{"verdict":null}"#),
            Asked::Answer(Value::Null)
        );
        assert_eq!(
            read_answer(r#"{"threw":"boom"}"#),
            Asked::Threw("boom".into())
        );
        assert!(matches!(read_answer("garbage"), Asked::Unreachable(_)));
    }
}
