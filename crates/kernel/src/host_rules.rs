//! A host's governance rules (`policyRules`): what a rule is asked, what it may answer and
//! how the chain of them decides, in one place for every host (`createAgent` and
//! `Governance` alike). A rule only tightens what the workflow allows: the rules are asked in
//! order, after the workflow's own denials; the first that does not abstain ends the chain; a
//! `block` refuses the call, a `pass` (the original's `allow`) leaves it to the workflow's
//! grants. A rule that cannot answer (it threw, it answered something that is not a verdict,
//! it could not be reached) refuses the call: the chain fails closed.
//!
//! ```
//! use archmax_kernel::host_rules::{Asked, HostRule, HostRules};
//! use archmax_kernel::{CallContext, CustomRule, ToolCall};
//! use serde_json::{Value, json};
//!
//! struct NoRefundsOnFriday;
//! impl HostRule for NoRefundsOnFriday {
//!     fn ask(&self, action: &Value) -> Asked {
//!         if action["tool"] == "refund" {
//!             Asked::Answer(json!({ "decision": "block", "ruleId": "no-friday-refunds" }))
//!         } else {
//!             Asked::Answer(Value::Null)
//!         }
//!     }
//! }
//! let rules = HostRules::new(vec![Box::new(NoRefundsOnFriday)]);
//! let args = json!({});
//! let d = rules.check(&ToolCall::new("refund", &args), &CallContext::agent("s")).unwrap();
//! assert_eq!(d.rule.as_str(), "no-friday-refunds");
//! assert!(rules.check(&ToolCall::new("ls", &args), &CallContext::agent("s")).is_none());
//! ```

use serde_json::{Value, json};

use crate::policy::CustomRule;
use crate::{CallContext, Decision, Origin, ToolCall};

/// The rule id of a refusal made because a rule could not answer.
pub const UNANSWERED: &str = "policy.error";

/// What asking one rule gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// What the rule returned, as JSON (`null` for nothing: it abstains).
    Answer(Value),
    /// The rule threw; why, in the host's words.
    Threw(String),
    /// The rule could not be asked at all (its host is gone); why.
    Unreachable(String),
}

/// One host rule.
pub trait HostRule: Send + Sync {
    /// Asks the rule about `action` ([`action`] describes a call).
    fn ask(&self, action: &Value) -> Asked;
}

/// What a rule's answer means.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// No opinion: the next rule is asked.
    Abstain,
    /// The rule lets the call through to the workflow's grants (the original's `allow`).
    Pass,
    /// The call is refused.
    Block {
        /// The rule id the refusal names (default `policyRules[<i>]`).
        rule_id: Option<String>,
        /// The model-facing text (default: a sentence naming the tool and the rule).
        reason: Option<String>,
        /// Whether the refusal is reported as a warning (default yes).
        warn: Option<bool>,
        /// A refusal retrying cannot fix: the turn ends.
        terminal: bool,
    },
}

impl Verdict {
    /// Reads an answer: `null` abstains; `{ decision: 'allow' | 'block', ruleId?, reason?,
    /// warn?, terminal? }` passes or blocks. Anything else is what the answer is, in words.
    pub fn read(answer: &Value) -> Result<Verdict, String> {
        let Value::Object(o) = answer else {
            return match answer {
                Value::Null => Ok(Verdict::Abstain),
                other => Err(described(other)),
            };
        };
        match o.get("decision").and_then(Value::as_str) {
            Some("allow") => Ok(Verdict::Pass),
            Some("block") => {
                let text = |key: &str| {
                    o.get(key)
                        .and_then(Value::as_str)
                        .map(str::trim)
                        .filter(|t| !t.is_empty())
                        .map(str::to_string)
                };
                Ok(Verdict::Block {
                    rule_id: text("ruleId"),
                    reason: o.get("reason").and_then(Value::as_str).map(str::to_string),
                    warn: o.get("warn").and_then(Value::as_bool),
                    terminal: o.get("terminal").and_then(Value::as_bool) == Some(true),
                })
            }
            _ => Err("an object".to_string()),
        }
    }
}

/// A value in words, as a refusal names it (`string yes`, `number 5`, `an array`).
fn described(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) => format!("string {}", s.chars().take(40).collect::<String>()),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// What a rule is asked about a call: `{ kind: 'tool-call', state, tool, args, origin
/// ('agent' | 'script' | 'lifecycle'), replyOnly, variables }`.
pub fn action(call: &ToolCall<'_>, ctx: &CallContext<'_>) -> Value {
    let origin = match ctx.origin {
        Origin::Agent => "agent",
        Origin::Script => "script",
        Origin::Lifecycle => "lifecycle",
    };
    json!({
        "kind": "tool-call",
        "state": ctx.state,
        "tool": call.tool,
        "args": call.args,
        "origin": origin,
        "replyOnly": ctx.reply_only,
        "variables": ctx.variables,
    })
}

/// A host's rules, in order: one [`CustomRule`] for the kernel's chain.
pub struct HostRules {
    rules: Vec<Box<dyn HostRule>>,
}

impl HostRules {
    /// The chain of `rules`, asked in order.
    pub fn new(rules: Vec<Box<dyn HostRule>>) -> Self {
        HostRules { rules }
    }

    /// Whether there is no rule to ask.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

impl CustomRule for HostRules {
    fn check(&self, call: &ToolCall<'_>, ctx: &CallContext<'_>) -> Option<Decision> {
        if self.rules.is_empty() {
            return None;
        }
        let action = action(call, ctx);
        let tool = call.tool;
        for (i, rule) in self.rules.iter().enumerate() {
            let refused = |why: String| {
                Some(Decision::custom_block(
                    UNANSWERED,
                    format!("[workflow] BLOCKED: '{tool}' was refused: {why}"),
                ))
            };
            let answer = match rule.ask(&action) {
                Asked::Answer(answer) => answer,
                Asked::Threw(why) => return refused(format!("policyRules[{i}] threw: {why}")),
                Asked::Unreachable(why) => {
                    return Some(Decision::custom_block(
                        UNANSWERED,
                        format!(
                            "[workflow] BLOCKED: '{tool}' was refused because the host's policy rules could not be asked: {why}"
                        ),
                    ));
                }
            };
            match Verdict::read(&answer) {
                Err(what) => {
                    return refused(format!(
                        "policyRules[{i}] returned {what}; expected {{ decision: 'allow' | 'block', ruleId, reason? }} or null"
                    ));
                }
                Ok(Verdict::Abstain) => continue,
                Ok(Verdict::Pass) => return None,
                Ok(Verdict::Block {
                    rule_id,
                    reason,
                    warn,
                    terminal,
                }) => {
                    let rule_id = rule_id.unwrap_or_else(|| format!("policyRules[{i}]"));
                    let reason = reason.filter(|r| !r.trim().is_empty()).unwrap_or_else(|| {
                        format!(
                            "[workflow] BLOCKED: '{tool}' was refused by the host's policy rule '{rule_id}'."
                        )
                    });
                    let mut d = Decision::custom_block(&rule_id, reason);
                    if let Some(warn) = warn {
                        d.warn = warn;
                    }
                    d.terminal = terminal;
                    return Some(d);
                }
            }
        }
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    struct Answers(Asked);
    impl HostRule for Answers {
        fn ask(&self, _action: &Value) -> Asked {
            self.0.clone()
        }
    }

    fn chain(answers: Vec<Asked>) -> HostRules {
        HostRules::new(
            answers
                .into_iter()
                .map(|a| Box::new(Answers(a)) as Box<dyn HostRule>)
                .collect(),
        )
    }

    fn decide(answers: Vec<Asked>) -> Option<Decision> {
        let args = json!({ "id": 7 });
        chain(answers).check(&ToolCall::new("crm", &args), &CallContext::agent("s"))
    }

    #[test]
    fn the_first_rule_that_does_not_abstain_ends_the_chain() {
        let block = |v: Value| Asked::Answer(v);
        assert_eq!(decide(vec![]), None);
        assert_eq!(decide(vec![Asked::Answer(Value::Null)]), None);
        assert_eq!(
            decide(vec![
                Asked::Answer(Value::Null),
                Asked::Answer(json!({ "decision": "allow" })),
                block(json!({ "decision": "block", "ruleId": "never" }))
            ]),
            None,
            "a pass ends the chain and leaves the call to the workflow"
        );
        let d = decide(vec![
            Asked::Answer(Value::Null),
            block(json!({ "decision": "block", "ruleId": "vip-only", "reason": "no VIPs", "warn": false, "terminal": true })),
        ])
        .unwrap();
        assert_eq!(d.rule.as_str(), "vip-only");
        assert_eq!(d.message.as_deref(), Some("no VIPs"));
        assert!(!d.allowed && !d.warn && d.terminal);
        let d = decide(vec![
            Asked::Answer(Value::Null),
            block(json!({ "decision": "block" })),
        ])
        .unwrap();
        assert_eq!(d.rule.as_str(), "policyRules[1]");
        assert_eq!(
            d.message.as_deref(),
            Some(
                "[workflow] BLOCKED: 'crm' was refused by the host's policy rule 'policyRules[1]'."
            )
        );
        assert!(d.warn && !d.terminal);
    }

    #[test]
    fn a_rule_that_cannot_answer_refuses_the_call() {
        let d = decide(vec![Asked::Threw("boom".into())]).unwrap();
        assert_eq!(d.rule.as_str(), UNANSWERED);
        assert_eq!(
            d.message.as_deref(),
            Some("[workflow] BLOCKED: 'crm' was refused: policyRules[0] threw: boom")
        );
        for (answer, what) in [
            (json!("yes"), "string yes"),
            (json!(true), "boolean true"),
            (json!(5), "number 5"),
            (json!([]), "an array"),
            (json!({ "decision": "maybe" }), "an object"),
        ] {
            let d = decide(vec![Asked::Answer(Value::Null), Asked::Answer(answer)]).unwrap();
            assert_eq!(
                d.message.unwrap(),
                format!(
                    "[workflow] BLOCKED: 'crm' was refused: policyRules[1] returned {what}; expected {{ decision: 'allow' | 'block', ruleId, reason? }} or null"
                )
            );
        }
        let d = decide(vec![Asked::Unreachable("the agent was disposed".into())]).unwrap();
        assert_eq!(
            d.message.as_deref(),
            Some(
                "[workflow] BLOCKED: 'crm' was refused because the host's policy rules could not be asked: the agent was disposed"
            )
        );
    }

    #[test]
    fn a_rule_is_asked_what_the_call_is() {
        let args = json!({ "id": 7 });
        let vars = serde_json::Map::from_iter([("case".to_string(), json!("K-1"))]);
        let ctx = CallContext {
            state: "review",
            origin: Origin::Script,
            reply_only: true,
            variables: Some(&vars),
            inherited: &[],
        };
        assert_eq!(
            action(&ToolCall::new("crm", &args), &ctx),
            json!({ "kind": "tool-call", "state": "review", "tool": "crm", "args": { "id": 7 }, "origin": "script", "replyOnly": true, "variables": { "case": "K-1" } })
        );
    }
}
