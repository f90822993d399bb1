//! Tool mocks (`archmax test`, `sandbox-hooks-cases.md` §6.7–§6.8): a case's declared
//! answers for host tools and for `archmax_workflow_<slug>`, consulted after governance
//! decided a call, so a mocked call is governed, evented and recorded like a real one.
//!
//! The table is keyed by the case's session; a sub-workflow child of that session (its id
//! is `<root>~…`) sees the same mocks. The first mock in declaration order whose name is the
//! call's and whose `whenInput` partially matches the call's arguments answers it.

use std::collections::HashMap;
use std::sync::RwLock;

use serde_json::Value;

/// One declared mock: `{ tool, whenInput?, result }`.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolMock {
    /// The tool name the mock answers (`archmax_workflow_<slug>` for a sub-workflow).
    pub name: String,
    /// A partial matcher against the call's arguments (see [`partial_match`]).
    pub when_input: Option<Value>,
    /// The mocked answer.
    pub result: Value,
}

/// The mocks of the sessions a harness serves (shared with its delegation targets).
#[derive(Debug, Default)]
pub struct ToolMocks {
    by_session: RwLock<HashMap<String, Vec<ToolMock>>>,
}

impl ToolMocks {
    /// Declares `mocks` for `session_id` and its sub-workflow children (replacing any).
    pub fn set(&self, session_id: &str, mocks: Vec<ToolMock>) {
        if let Ok(mut m) = self.by_session.write() {
            if mocks.is_empty() {
                m.remove(session_id);
            } else {
                m.insert(session_id.to_string(), mocks);
            }
        }
    }

    /// Drops the mocks of `session_id`.
    pub fn clear(&self, session_id: &str) {
        if let Ok(mut m) = self.by_session.write() {
            m.remove(session_id);
        }
    }

    /// Whether `session_id` (or its case's root session) declares a mock of `name`: the name
    /// is then callable even where no host tool carries it.
    pub fn declares(&self, session_id: &str, name: &str) -> bool {
        let root = session_id.split('~').next().unwrap_or(session_id);
        self.by_session
            .read()
            .ok()
            .and_then(|m| {
                m.get(root)
                    .map(|list| list.iter().any(|mock| mock.name == name))
            })
            .unwrap_or(false)
    }

    /// The mocked answer of `name` called with `args` in `session_id`, if a mock matches.
    pub fn find(&self, session_id: &str, name: &str, args: &Value) -> Option<Value> {
        let root = session_id.split('~').next().unwrap_or(session_id);
        let m = self.by_session.read().ok()?;
        m.get(root)?
            .iter()
            .find(|mock| {
                mock.name == name
                    && mock
                        .when_input
                        .as_ref()
                        .is_none_or(|w| partial_match(w, args))
            })
            .map(|mock| mock.result.clone())
    }
}

/// A mocked tool's payload: a string result verbatim, anything else as JSON.
pub fn payload(result: &Value) -> String {
    match result {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Whether `actual` matches `expected` partially: a mapping needs every declared key present
/// and matching (extra keys ignored), an array the same length element-wise, a `/pattern/flags`
/// string a regex match against the actual value as text, anything else strict equality.
pub fn partial_match(expected: &Value, actual: &Value) -> bool {
    match expected {
        Value::Object(want) => match actual {
            Value::Object(got) => want
                .iter()
                .all(|(k, v)| got.get(k).is_some_and(|g| partial_match(v, g))),
            _ => false,
        },
        Value::Array(want) => match actual {
            Value::Array(got) => {
                want.len() == got.len() && want.iter().zip(got).all(|(w, g)| partial_match(w, g))
            }
            _ => false,
        },
        Value::String(s) => match token_regex(s) {
            Some(Ok(re)) => re.is_match(&as_text(actual)),
            Some(Err(_)) => false,
            None => actual.as_str() == Some(s.as_str()),
        },
        other => other == actual,
    }
}

/// A value as the original's `String(actual ?? "")`.
fn as_text(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// For a `/pattern/flags` string, its compiled regex (dot-all; `i`, `m` honoured; `g`, `y`,
/// `u`, `d`, `v`, `s` accepted), or the compile error; `None` for any other string.
pub fn token_regex(token: &str) -> Option<Result<regex::Regex, String>> {
    let body = token.strip_prefix('/')?;
    let end = body.rfind('/')?;
    let (pattern, flags) = (&body[..end], &body[end + 1..]);
    if !flags.chars().all(|c| c.is_ascii_lowercase()) {
        return None;
    }
    let mut b = regex::RegexBuilder::new(pattern);
    b.dot_matches_new_line(true);
    for f in flags.chars() {
        match f {
            'i' => {
                b.case_insensitive(true);
            }
            'm' => {
                b.multi_line(true);
            }
            'g' | 'y' | 'u' | 'd' | 'v' | 's' => {}
            other => {
                return Some(Err(format!(
                    "Invalid flags supplied to RegExp constructor '{other}'"
                )));
            }
        }
    }
    Some(b.build().map_err(|e| e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn partial_matching_follows_the_digest() {
        assert!(partial_match(&json!({"a": 1}), &json!({"a": 1, "b": 2})));
        assert!(!partial_match(&json!({"a": 1, "c": 3}), &json!({"a": 1})));
        assert!(partial_match(
            &json!([1, {"x": "y"}]),
            &json!([1, {"x": "y", "z": 0}])
        ));
        assert!(!partial_match(&json!([1]), &json!([1, 2])));
        assert!(partial_match(&json!("/^KK-\\d+$/"), &json!("KK-12")));
        assert!(partial_match(&json!("/kk/i"), &json!("order KK")));
        assert!(partial_match(&json!("/^12$/"), &json!(12)));
        assert!(!partial_match(&json!("12"), &json!(12)));
        assert!(partial_match(&json!(null), &json!(null)));
    }

    #[test]
    fn the_first_matching_mock_answers_the_session_and_its_children() {
        let t = ToolMocks::default();
        t.set(
            "s1",
            vec![
                ToolMock {
                    name: "crm".into(),
                    when_input: Some(json!({"id": "A"})),
                    result: json!("first"),
                },
                ToolMock {
                    name: "crm".into(),
                    when_input: None,
                    result: json!({"n": 2}),
                },
            ],
        );
        assert_eq!(
            t.find("s1", "crm", &json!({"id": "A"})),
            Some(json!("first"))
        );
        assert_eq!(
            t.find("s1~work:child:0", "crm", &json!({"id": "B"})),
            Some(json!({"n": 2}))
        );
        assert_eq!(t.find("s2", "crm", &json!({})), None);
        assert_eq!(payload(&json!({"n": 2})), "{\"n\":2}");
        t.clear("s1");
        assert_eq!(t.find("s1", "crm", &json!({})), None);
    }
}
