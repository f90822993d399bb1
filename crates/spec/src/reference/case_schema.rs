//! The JSON Schema (2020-12) of a case file (`workflows/<slug>/tests/**/*.test.yaml`),
//! from one table per level that a test holds equal to the case checker's key lists
//! ([`crate::case::TOP_KEYS`], [`crate::case::ACTIONS`], [`crate::case::ASSERTIONS`]).

use serde_json::{Map, Value, json};

/// The top-level keys of a case file and their schemas (JSON text).
pub const CASE_KEYS: &[(&str, &str)] = &[
    (
        "title",
        r#"{"type":"string","pattern":"^[^\\n]*\\S[^\\n]*$","description":"A one-line label for the case."}"#,
    ),
    (
        "description",
        r#"{"type":"string","pattern":"\\S","description":"One or two sentences: the scenario driven and what is asserted."}"#,
    ),
    (
        "skip",
        r#"{"type":"string","pattern":"\\S","description":"Why the case is skipped."}"#,
    ),
    (
        "trigger",
        r#"{"type":"object","properties":{"id":{"type":"string","pattern":"\\S"}},"required":["id"],"additionalProperties":false,"description":"The trigger that starts the case (default manual)."}"#,
    ),
    (
        "variables",
        r##"{"$ref":"#/$defs/variables","description":"The run's starting variables."}"##,
    ),
    (
        "workspace",
        r#"{"type":"object","description":"Files seeded before the run: session path → content, or { from: <tests/-relative file> }."}"#,
    ),
    (
        "mocks",
        r#"{"type":"array","items":{"type":"object","properties":{"tool":{"type":"string","pattern":"\\S"},"whenInput":{"type":"object"},"result":{}},"required":["tool","result"],"additionalProperties":false},"description":"Canned answers for host tools."}"#,
    ),
    (
        "steps",
        r##"{"type":"array","items":{"$ref":"#/$defs/step"},"description":"Actions and assertions, in order; each a single-key mapping."}"##,
    ),
];

/// Every step kind (actions, then assertions) and the schema of its argument.
pub const STEP_KEYS: &[(&str, &str)] = &[
    ("send", r#"{"type":"string","pattern":"\\S"}"#),
    (
        "decide",
        r#"{"type":"object","properties":{"to":{"type":"string","pattern":"\\S"},"comment":{"type":"string"}},"required":["to"],"additionalProperties":false}"#,
    ),
    (
        "deliver",
        r##"{"type":"object","properties":{"trigger":{"type":"string","pattern":"\\S"},"variables":{"$ref":"#/$defs/variables"}},"required":["trigger"],"additionalProperties":false}"##,
    ),
    ("succeeded", r#"{"const":true}"#),
    ("raised", r#"{"const":true}"#),
    ("usedNoTools", r#"{"const":true}"#),
    ("noTraversal", r#"{"const":true}"#),
    (
        "parked",
        r#"{"anyOf":[{"const":true},{"enum":["decision","input"]},{"type":"object","properties":{"channel":{},"state":{}},"additionalProperties":false}]}"#,
    ),
    ("reachedState", r#"{"type":"string","pattern":"\\S"}"#),
    ("triggerArrival", r#"{"type":"string","pattern":"\\S"}"#),
    (
        "reply",
        r##"{"type":"object","properties":{"includes":{"$ref":"#/$defs/tokens"},"excludes":{"$ref":"#/$defs/tokens"}},"minProperties":1,"additionalProperties":false}"##,
    ),
    ("calledTool", r##"{"$ref":"#/$defs/tool_call"}"##),
    ("notCalledTool", r##"{"$ref":"#/$defs/tool_call"}"##),
    ("blockedTool", r##"{"$ref":"#/$defs/tool_call"}"##),
    (
        "ranWorkflow",
        r##"{"type":"object","properties":{"workflow":{"type":"string"},"status":{"enum":["ok","error"]},"count":{"$ref":"#/$defs/count"}},"required":["workflow"],"additionalProperties":false}"##,
    ),
    (
        "trail",
        r##"{"type":"object","properties":{"to":{},"kind":{},"reason":{},"count":{"$ref":"#/$defs/count"}},"required":["count"],"anyOf":[{"required":["to"]},{"required":["kind"]},{"required":["reason"]}],"additionalProperties":false}"##,
    ),
    (
        "variables",
        r#"{"type":"object","properties":{"expect":{"type":"object"},"path":{},"locked":{}},"required":["expect"],"additionalProperties":false}"#,
    ),
    (
        "grade",
        r#"{"type":"object","properties":{"closedQA":{"type":"string","pattern":"\\S"},"atLeast":{"type":"number","minimum":0,"maximum":1}},"required":["closedQA","atLeast"],"additionalProperties":false}"#,
    ),
];

fn parsed(text: &str) -> Value {
    // The fragments are literals the reference tests parse one by one.
    serde_json::from_str(text).unwrap_or_else(|_| json!({}))
}

/// The case-file schema as a JSON value (`case.schema.json`).
pub fn case_json_schema() -> Value {
    let properties: Map<String, Value> = CASE_KEYS
        .iter()
        .map(|(k, s)| (k.to_string(), parsed(s)))
        .collect();
    let steps: Vec<Value> = STEP_KEYS
        .iter()
        .map(|(k, s)| {
            json!({
                "type": "object",
                "properties": { *k: parsed(s) },
                "required": [k],
                "additionalProperties": false
            })
        })
        .collect();
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/archmax-ai/harness/case.schema.json",
        "title": "archmax case file (*.test.yaml)",
        "type": "object",
        "properties": properties,
        "required": ["title", "description"],
        "additionalProperties": false,
        "$defs": {
            "step": { "anyOf": steps },
            "variables": {
                "type": "object",
                "propertyNames": { "pattern": "^[a-z][a-z0-9_]*$" }
            },
            "tokens": { "anyOf": [{ "type": "string" }, { "type": "array", "items": { "type": "string" } }] },
            "tool_call": {
                "type": "object",
                "properties": { "name": { "type": "string" }, "input": {} },
                "required": ["name"],
                "additionalProperties": false
            },
            "count": { "type": "integer", "minimum": 0 }
        }
    })
}
