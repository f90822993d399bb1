//! The seam lifecycle hooks plug into: a [`HookRunner`] runs one declared hook
//! and answers a [`Verdict`]. The sandbox issue brings the QuickJS runner and the
//! rubric grader; until then [`NoSandbox`] answers every hook with an execution
//! error, so a state that declares hooks fails closed instead of running
//! unguarded.

use archmax_spec::model::Hook;
use serde_json::{Map, Value};

use crate::model::{ChatMessage, ChatRequest, Model};
use crate::tools::BoxFuture;

/// Where a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Gating entry to a state.
    Before,
    /// Gating the move out of a state (or its completion, for a terminal state).
    After,
}

impl Phase {
    /// `before` or `after`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Before => "before",
            Phase::After => "after",
        }
    }
}

/// What a hook is asked about.
#[derive(Debug, Clone)]
pub struct HookInput {
    /// The state the hook belongs to.
    pub state: String,
    /// Its phase.
    pub phase: Phase,
    /// The hook's position in the state's list for that phase.
    pub index: usize,
    /// The current trigger.
    pub trigger: String,
    /// The run's variables.
    pub variables: Map<String, Value>,
    /// For an `after` hook in the veto window: the move's target and reason.
    pub to: Option<String>,
    /// The agent's reason for the move.
    pub reason: Option<String>,
    /// The first user message of the session ("" when none).
    pub user_request: String,
    /// The last messages of the transcript (`{ role, content, toolCalls? }`).
    pub history: Vec<Value>,
}

/// A hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Proceed.
    Ok,
    /// Give the agent another attempt (after hooks only).
    Correct(String),
    /// Refuse.
    Veto(String),
    /// The hook could not run: a terminal failure, routed through `on_error`.
    Error(String),
}

/// Runs declared hooks.
pub trait HookRunner: Send + Sync {
    /// Runs one hook.
    fn run<'a>(&'a self, hook: &'a Hook, input: HookInput) -> BoxFuture<'a, Verdict>;
}

/// The runner of a build without the sandbox: every hook is an execution error.
#[derive(Debug, Default)]
pub struct NoSandbox;

fn sandbox_missing(hook: &Hook, state: &str) -> Verdict {
    let what = match hook {
        Hook::Script { script, .. } => format!("hook script '{script}'"),
        Hook::Rubric { .. } => "rubric".to_string(),
        Hook::Custom(m) => format!("'{}' hook", m.keys().next().map_or("", String::as_str)),
    };
    Verdict::Error(format!(
        "the {what} of state '{state}' cannot run: lifecycle hooks need the sandbox, which this build does not include yet"
    ))
}

impl HookRunner for NoSandbox {
    fn run<'a>(&'a self, hook: &'a Hook, input: HookInput) -> BoxFuture<'a, Verdict> {
        Box::pin(async move { sandbox_missing(hook, &input.state) })
    }
}

/// The default runner: rubric hooks are graded by a model; script and custom hooks
/// wait for the sandbox (an execution error until then).
pub struct ModelGrader {
    model: std::sync::Arc<dyn Model>,
    default_model: String,
}

impl ModelGrader {
    /// Grades with `model`; a rubric without its own `model` uses `default_model`.
    pub fn new(model: std::sync::Arc<dyn Model>, default_model: impl Into<String>) -> Self {
        ModelGrader {
            model,
            default_model: default_model.into(),
        }
    }
}

/// The instruction every grader call ends with: the verdict shape, every time.
const VERDICT_REQUEST: &str = "Answer with one JSON object and nothing else: {\"verdict\": \"ok\" | \"correct\" | \"veto\", \"reason\": \"<one sentence>\"}.";

/// Reads a grader's answer: a JSON object with a known verdict, possibly wrapped in prose.
pub fn parse_verdict(text: &str) -> Option<Verdict> {
    let candidates = [
        Some(text.trim()),
        text.find('{')
            .zip(text.rfind('}'))
            .and_then(|(a, b)| text.get(a..=b)),
    ];
    for c in candidates.into_iter().flatten() {
        if let Ok(v) = serde_json::from_str::<Value>(c) {
            let reason = v
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            return match v.get("verdict").and_then(Value::as_str) {
                Some("ok") => Some(Verdict::Ok),
                Some("correct") => Some(Verdict::Correct(reason)),
                Some("veto") => Some(Verdict::Veto(reason)),
                _ => None,
            };
        }
    }
    None
}

impl HookRunner for ModelGrader {
    fn run<'a>(&'a self, hook: &'a Hook, input: HookInput) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            let Hook::Rubric { rubric } = hook else {
                return sandbox_missing(hook, &input.state);
            };
            let id = format!("{}--{}--{}", input.state, input.phase.as_str(), input.index);
            let payload = serde_json::json!({
                "userRequest": input.user_request,
                "history": input.history,
                "state": input.state,
                "phase": input.phase.as_str(),
            });
            let messages = vec![
                ChatMessage::system(format!(
                    "{}\n\n{VERDICT_REQUEST}",
                    rubric.instructions.trim()
                )),
                ChatMessage::user(serde_json::to_string_pretty(&payload).unwrap_or_default()),
            ];
            let model = rubric
                .model
                .clone()
                .unwrap_or_else(|| self.default_model.clone());
            match self
                .model
                .complete(&ChatRequest::new(model, messages))
                .await
            {
                Err(e) => Verdict::Error(format!("rubric '{id}' could not be graded: {e}")),
                Ok(r) => {
                    let text = r.message.content.unwrap_or_default();
                    parse_verdict(&text).unwrap_or_else(|| {
                        let snippet: String = if text.is_empty() {
                            "(no output)".to_string()
                        } else {
                            text.chars().take(200).collect()
                        };
                        let more = if text.chars().count() > 200 {
                            "…"
                        } else {
                            ""
                        };
                        Verdict::Veto(format!(
                            "rubric '{id}' returned no parseable verdict: {snippet}{more}"
                        ))
                    })
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_from_json_even_inside_prose() {
        assert_eq!(
            parse_verdict(r#"{"verdict":"ok","reason":"fine"}"#),
            Some(Verdict::Ok)
        );
        assert_eq!(
            parse_verdict("Here: {\"verdict\": \"veto\", \"reason\": \"wrong date\"} done"),
            Some(Verdict::Veto("wrong date".into()))
        );
        assert_eq!(parse_verdict(r#"{"verdict":"maybe"}"#), None);
        assert_eq!(parse_verdict("looks good"), None);
    }
}
