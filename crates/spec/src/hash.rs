//! Spec hash (validation digest §3.4): canonical JSON of the parsed spec with
//! every `metadata` block removed, SHA-256, first 32 lowercase hex chars.

use std::fmt::Write as _;

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::jsfmt::write_json;

/// Canonical JSON: object keys sorted by UTF-16 code-unit order at every
/// level, arrays in order, no white space, numbers as JavaScript prints them
/// and strings escaped exactly like `JSON.stringify`.
pub fn canonical_json(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out, utf16_sorted);
    out
}

/// Object entries sorted by UTF-16 code units, as JavaScript compares strings.
fn utf16_sorted(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|(a, _), (b, _)| a.encode_utf16().cmp(b.encode_utf16()));
    entries
}

fn strip_hook(hook: &mut Value) {
    if let Some(Value::Object(rubric)) = hook.as_object_mut().and_then(|h| h.get_mut("rubric")) {
        rubric.shift_remove("metadata");
    }
}

fn strip_state(state: &mut Map<String, Value>) {
    state.shift_remove("metadata");
    for phase in ["before", "after"] {
        match state.get_mut(phase) {
            Some(Value::Array(hooks)) => hooks.iter_mut().for_each(strip_hook),
            Some(hook @ Value::Object(_)) => strip_hook(hook),
            _ => {}
        }
    }
}

/// A copy of `spec` without root `metadata`, each state's `metadata`, and the
/// `metadata` of every inline `rubric` declaration in a state's `before` /
/// `after` (a single hook object or a list). Everything else is kept, in
/// its original key order.
pub fn strip_metadata(spec: &Value) -> Value {
    let mut out = spec.clone();
    if let Value::Object(root) = &mut out {
        root.shift_remove("metadata");
        if let Some(Value::Object(states)) = root.get_mut("states") {
            for state in states.values_mut() {
                if let Value::Object(state) = state {
                    strip_state(state);
                }
            }
        }
    }
    out
}

/// The spec hash: SHA-256 of `canonical_json(strip_metadata(spec))`, lowercase
/// hex, first 32 characters.
pub fn spec_hash(spec: &Value) -> String {
    let digest = Sha256::digest(canonical_json(&strip_metadata(spec)).as_bytes());
    let mut hex = String::with_capacity(64);
    for byte in digest {
        let _ = write!(hex, "{byte:02x}");
    }
    hex.chars().take(32).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pinned_hash() {
        let spec = json!({"states":{"a":{"triggers":{"manual":null},"transitions":[{"to":"b","description":"go"}]},"b":{}}});
        assert_eq!(
            canonical_json(&spec),
            r#"{"states":{"a":{"transitions":[{"description":"go","to":"b"}],"triggers":{"manual":null}},"b":{}}}"#
        );
        assert_eq!(spec_hash(&spec), "f007501ce5dfe5c4f39719a81b0265d6");
    }

    #[test]
    fn metadata_is_excluded() {
        let plain = json!({"states":{"a":{"triggers":{"manual":null},"transitions":[{"to":"b","description":"go"}]},"b":{}}});
        let with_meta = json!({
            "metadata": {"editor": {"x": 1}},
            "states": {
                "a": {"metadata": {"pos": [1, 2]}, "triggers": {"manual": null},
                      "transitions": [{"to": "b", "description": "go"}]},
                "b": {}
            }
        });
        assert_eq!(spec_hash(&with_meta), "f007501ce5dfe5c4f39719a81b0265d6");
        assert_eq!(strip_metadata(&with_meta), plain);
    }

    #[test]
    fn rubric_metadata_is_excluded() {
        let spec = json!({"states": {
            "a": {
                "before": {"rubric": {"instructions": "x", "metadata": {"k": 1}}},
                "after": [
                    {"script": "hooks/a.js", "metadata": {"kept": true}},
                    {"rubric": {"instructions": "y", "metadata": {}}},
                    {"rubric": "named"}
                ],
                "triggers": {"manual": {"host_key": {"metadata": 1}}}
            }
        }});
        let stripped = strip_metadata(&spec);
        assert_eq!(
            canonical_json(&stripped),
            r#"{"states":{"a":{"after":[{"metadata":{"kept":true},"script":"hooks/a.js"},{"rubric":{"instructions":"y"}},{"rubric":"named"}],"before":{"rubric":{"instructions":"x"}},"triggers":{"manual":{"host_key":{"metadata":1}}}}}}"#
        );
    }

    #[test]
    fn strip_keeps_order() {
        let spec = json!({"title": "t", "metadata": {}, "states": {"a": {"title": "x", "metadata": 1, "type": "human"}}});
        assert_eq!(
            strip_metadata(&spec).to_string(),
            r#"{"title":"t","states":{"a":{"title":"x","type":"human"}}}"#
        );
    }

    #[test]
    fn null_and_empty_states_differ_in_triggers_only() {
        let a = json!({"states": {"s": {"triggers": {"manual": null}}}});
        let b = json!({"states": {"s": {"triggers": {"manual": {}}}}});
        assert_ne!(spec_hash(&a), spec_hash(&b));
    }

    #[test]
    fn utf16_key_order() {
        // U+1F600 (surrogate pair 0xD83D 0xDE00) sorts before U+FF5E in UTF-16,
        // although its UTF-8 bytes (F0 …) sort after those of U+FF5E (EF …).
        let v = json!({"\u{1F600}": 1, "\u{FF5E}": 2, "b": 3, "B": 4, "": 5});
        assert_eq!(
            canonical_json(&v),
            "{\"\":5,\"B\":4,\"b\":3,\"\u{1F600}\":1,\"\u{FF5E}\":2}"
        );
    }

    #[test]
    fn scalars_like_json_stringify() {
        let v = json!({"n": [1.0, 2.5, -0.0, 1e21, 100], "s": "a/é\u{7}\t"});
        assert_eq!(
            canonical_json(&v),
            "{\"n\":[1,2.5,0,1e+21,100],\"s\":\"a/é\\u0007\\t\"}"
        );
    }
}
