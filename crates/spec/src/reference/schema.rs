//! The JSON Schema (2020-12) of `workflow.yaml`, built from [`super::KEYS`].

use serde_json::{Map, Value, json};

use super::{KEYS, OBJECT_DOCS};

/// A key's schema fragment. The table's fragments are literals checked by the
/// reference tests, so a bad one is a bug caught there; here it reads as `{}`.
fn fragment(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| json!({}))
}

fn object_schema(name: &str, intro: &str) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for d in KEYS.iter().filter(|d| d.object == name) {
        let mut s = fragment(d.schema);
        if let Value::Object(m) = &mut s {
            m.insert("description".into(), Value::String(d.rules.to_string()));
        }
        properties.insert(d.key.to_string(), s);
        if d.default == "required" {
            required.push(Value::String(d.key.to_string()));
        }
    }
    let mut out = json!({ "type": "object", "description": intro, "properties": properties });
    if !required.is_empty() {
        out["required"] = Value::Array(required);
    }
    if name == "trigger" {
        out["not"] = json!({ "anyOf": [{ "required": ["entry"] }, { "required": ["name"] }] });
    } else {
        out["additionalProperties"] = Value::Bool(false);
    }
    match name {
        "tool_entry" => json!({ "anyOf": [{ "type": "string" }, out] }),
        "mount_grant" => json!({ "anyOf": [{ "$ref": "#/$defs/mount_name" }, out] }),
        "signature_entry" => json!({ "anyOf": [{ "$ref": "#/$defs/variable_name" }, out] }),
        _ => out,
    }
}

/// The schema as a JSON value (`workflow.schema.json`).
pub fn json_schema() -> Value {
    let mut defs = Map::new();
    for (name, _, intro) in OBJECT_DOCS.iter().skip(1) {
        defs.insert(name.to_string(), object_schema(name, intro));
    }
    let scalars = json!({
        "variable_name": { "type": "string", "pattern": "^[a-z][a-z0-9_]*$" },
        "skill_slug": { "type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$" },
        "mount_name": { "type": "string", "pattern": "^[^*?\\[\\]{}/\\s]([^*?\\[\\]{}]*[^*?\\[\\]{}/\\s])?$" },
        "glob_list": { "anyOf": [{ "type": "string" }, { "type": "array", "items": { "type": "string" } }] },
        "custom_hook": {
            "type": "object", "minProperties": 1, "maxProperties": 1,
            "additionalProperties": { "type": "string" },
            "propertyNames": { "not": { "enum": ["script", "rubric", "max_iterations"] } }
        },
        "hook": { "anyOf": [
            { "$ref": "#/$defs/script_hook" },
            { "$ref": "#/$defs/rubric_hook" },
            { "$ref": "#/$defs/custom_hook" }
        ] },
        "hook_spec": { "anyOf": [
            { "$ref": "#/$defs/hook" },
            { "type": "array", "items": { "$ref": "#/$defs/hook" } }
        ] }
    });
    if let Value::Object(m) = scalars {
        defs.extend(m);
    }
    let mut root = object_schema("workflow", OBJECT_DOCS[0].2);
    root["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    root["$id"] = json!("https://github.com/archmax-ai/harness/workflow.schema.json");
    root["title"] = json!("archmax workflow.yaml");
    root["required"] = json!(["states"]);
    root["$defs"] = Value::Object(defs);
    root
}
