//! Typed builders for the JSON handed to scripts.

use serde::Serialize;
use serde_json::{Map, Value};

/// The most recent transcript entries a hook sees.
pub const HOOK_MESSAGE_LIMIT: usize = 24;

/// Which side of a state a hook guards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HookPhase {
    /// Runs before the state's first model call of a visit.
    Before,
    /// Runs when the agent leaves the state (or finishes in a terminal state).
    After,
}

/// One tool call made by an assistant message, as a hook sees it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookToolCall {
    /// The tool's snake_case name.
    pub name: String,
    /// The call's arguments.
    pub args: Value,
}

/// One transcript entry: `{ role, text, toolCalls?, tool?, note? }`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HookMessage {
    /// `user`, `assistant`, `system`, `tool`, `runtime`, or the transcript's own type.
    pub role: String,
    /// The entry's text.
    pub text: String,
    /// Calls made by an assistant message (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<HookToolCall>>,
    /// The tool a `tool` entry answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The runtime note kind of a `runtime` entry (`decision`, `event`, `error`, `after`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl HookMessage {
    /// A plain entry with a role and text.
    #[must_use]
    pub fn new(role: &str, text: &str) -> Self {
        Self {
            role: role.to_owned(),
            text: text.to_owned(),
            tool_calls: None,
            tool: None,
            note: None,
        }
    }

    /// A runtime note (`role: "runtime"`, `note: <kind>`).
    #[must_use]
    pub fn runtime_note(kind: &str, text: &str) -> Self {
        Self {
            note: Some(kind.to_owned()),
            ..Self::new("runtime", text)
        }
    }
}

/// The object a hook receives (also the global `args`, which lacks `tools`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookInput {
    /// The state whose hook runs.
    pub state: String,
    /// `before` or `after`.
    pub phase: HookPhase,
    /// The run's trigger id, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// Flat name → value map of the run's variables (a copy; writes do nothing).
    pub variables: Map<String, Value>,
    /// The last [`HOOK_MESSAGE_LIMIT`] transcript entries, newest last.
    pub messages: Vec<HookMessage>,
    /// The attempted transition's source (`after` on an advance).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The attempted transition's target (`after` on an advance).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The agent's trimmed, non-blank advance reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl HookInput {
    /// The JSON value for [`crate::Sandbox::run_hook`]. Keeps only the last
    /// [`HOOK_MESSAGE_LIMIT`] messages and drops a blank reason.
    #[must_use]
    pub fn to_value(&self) -> Value {
        let mut copy = self.clone();
        let extra = copy.messages.len().saturating_sub(HOOK_MESSAGE_LIMIT);
        copy.messages.drain(..extra);
        copy.reason = copy
            .reason
            .map(|r| r.trim().to_owned())
            .filter(|r| !r.is_empty());
        serde_json::to_value(copy).unwrap_or(Value::Null)
    }
}

/// Builds an `archmax_run`-style `args` global: the model's args (an object; anything else counts
/// as `{}`) with `variables` set to the snapshot, overriding any model-supplied `variables` key.
#[must_use]
pub fn eval_args(args: Value, variables: Map<String, Value>) -> Value {
    let mut map = match args {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    map.insert("variables".to_owned(), Value::Object(variables));
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hook_input_serialises_the_contract_shape() {
        let mut messages: Vec<HookMessage> = (0..30)
            .map(|i| HookMessage::new("user", &format!("m{i}")))
            .collect();
        messages.push(HookMessage::runtime_note("after", "check failed"));
        let input = HookInput {
            state: "review".into(),
            phase: HookPhase::After,
            trigger: None,
            variables: Map::new(),
            messages,
            from: Some("review".into()),
            to: Some("done".into()),
            reason: Some("   ".into()),
        };
        let v = input.to_value();
        assert_eq!(v["phase"], "after");
        assert_eq!(v["messages"].as_array().map(Vec::len), Some(24));
        assert_eq!(v["messages"][0]["text"], "m7");
        assert_eq!(
            v["messages"][23],
            json!({"role": "runtime", "text": "check failed", "note": "after"})
        );
        assert!(v.get("reason").is_none());
        assert!(v.get("trigger").is_none());
        assert_eq!(v["to"], "done");
    }

    #[test]
    fn eval_args_overrides_variables() {
        let mut vars = Map::new();
        vars.insert("n".into(), json!(1));
        assert_eq!(
            eval_args(json!({"a": 1, "variables": "x"}), vars.clone()),
            json!({"a": 1, "variables": {"n": 1}})
        );
        assert_eq!(eval_args(json!([1]), vars), json!({"variables": {"n": 1}}));
    }
}
