//! The assertion kinds (`sandbox-hooks-cases.md` §6.4) over a [`View`]. `grade` is the
//! judge's ([`crate::judge`]); everything else is decided here.

use archmax_machine::mocks::{partial_match, token_regex};
use serde_json::{Map, Value};

use crate::report::AssertionRecord;
use crate::view::{CallStatus, View};

/// The assertions whose failure halts the case: later steps are not executed.
pub const STRUCTURAL: &[&str] = &[
    "succeeded",
    "raised",
    "parked",
    "reachedState",
    "trail",
    "noTraversal",
    "triggerArrival",
    "variables",
];

/// Whether a failed record of `kind` halts the case.
pub fn is_structural(kind: &str) -> bool {
    STRUCTURAL.contains(&kind)
}

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The records of assertion `kind` with argument `arg` at `step` (not `grade`).
pub fn evaluate(kind: &str, arg: &Value, step: usize, view: &View) -> Vec<AssertionRecord> {
    let one = |passed: bool, detail: Option<String>| {
        vec![AssertionRecord::new(kind, step, passed, detail)]
    };
    let trail = &view.outcome.audit_trail;
    match kind {
        "succeeded" => one(
            !view.failed() && !view.parked() && !view.tool_failed(),
            None,
        ),
        "raised" => one(view.raised(), None),
        "usedNoTools" => one(view.calls.is_empty(), None),
        "noTraversal" => one(
            trail.iter().all(|t| t.kind == "trigger"),
            Some("no committed transitions".to_string()),
        ),
        "reachedState" => {
            let slug = s(arg);
            one(
                trail.iter().any(|t| t.kind != "trigger" && t.to == slug),
                Some(slug),
            )
        }
        "triggerArrival" => {
            let id = s(arg);
            one(
                trail
                    .iter()
                    .any(|t| t.kind == "trigger" && t.reason.as_deref() == Some(id.as_str())),
                Some(id),
            )
        }
        "parked" => parked(arg, step, view),
        "trail" => {
            let field = |k: &str| arg.get(k).and_then(Value::as_str);
            let (to, tk, reason) = (field("to"), field("kind"), field("reason"));
            let want = arg.get("count").and_then(Value::as_u64).unwrap_or(0);
            let saw = trail
                .iter()
                .filter(|t| {
                    to.is_none_or(|x| t.to == x)
                        && tk.is_none_or(|x| t.kind == x)
                        && reason.is_none_or(|x| t.reason.as_deref() == Some(x))
                })
                .count() as u64;
            let mut parts = Vec::new();
            for (k, v) in [("to", to), ("kind", tk), ("reason", reason)] {
                if let Some(v) = v {
                    parts.push(format!("{k}={v}"));
                }
            }
            one(
                saw == want,
                Some(format!("{} expected {want}, saw {saw}", parts.join(" "))),
            )
        }
        "variables" => variables(arg, step, view),
        "reply" => reply(arg, step, view),
        "calledTool" | "notCalledTool" | "blockedTool" => {
            let name = arg.get("name").and_then(Value::as_str).unwrap_or_default();
            let input = arg.get("input");
            let matching = |status: Option<CallStatus>| {
                view.calls.iter().any(|c| {
                    c.name == name
                        && input.is_none_or(|i| partial_match(i, &c.input))
                        && status.is_none_or(|st| c.status == st)
                })
            };
            let passed = match kind {
                "calledTool" => matching(None),
                "notCalledTool" => !matching(None),
                _ => matching(Some(CallStatus::Rejected)),
            };
            one(passed, Some(name.to_string()))
        }
        "ranWorkflow" => {
            let wf = arg
                .get("workflow")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let status = arg.get("status").and_then(Value::as_str).unwrap_or("ok");
            let tool = format!("{WORKFLOW_TOOL_PREFIX}{wf}");
            let ran = view
                .calls
                .iter()
                .filter(|c| c.name == tool && c.status != CallStatus::Rejected)
                .filter(|c| {
                    let st = if c.status == CallStatus::Failed {
                        "error"
                    } else {
                        "ok"
                    };
                    st == status
                })
                .count() as u64;
            match arg.get("count").and_then(Value::as_u64) {
                Some(n) => one(ran == n, Some(format!("{wf} ({status}, {ran}/{n})"))),
                None => one(ran >= 1, Some(format!("{wf} ({status})"))),
            }
        }
        other => one(false, Some(format!("unknown assertion '{other}'"))),
    }
}

/// The delegation tools' prefix (`archmax_workflow_<slug>`).
const WORKFLOW_TOOL_PREFIX: &str = "archmax_workflow_";

fn parked(arg: &Value, step: usize, view: &View) -> Vec<AssertionRecord> {
    let (channel, state) = match arg {
        Value::String(c) => (Some(c.as_str()), None),
        Value::Object(m) => (
            m.get("channel").and_then(Value::as_str),
            m.get("state").and_then(Value::as_str),
        ),
        _ => (None, None),
    };
    let got_channel = view.outcome.parked_channel;
    let got_state = view.outcome.pending.as_ref().map(|p| p.state().to_string());
    let passed = view.parked()
        && channel.is_none_or(|c| got_channel == Some(c))
        && state.is_none_or(|st| got_state.as_deref() == Some(st));
    let mut parts = Vec::new();
    if let Some(c) = channel {
        parts.push(c.to_string());
    }
    if let Some(st) = state {
        parts.push(format!("in {st}"));
    }
    let detail = (!parts.is_empty()).then(|| parts.join(" "));
    vec![AssertionRecord::new("parked", step, passed, detail)]
}

/// A variable's value at a dotted `path`: own keys only; arrays by canonical index or
/// from the end (`-1`); `length`, `constructor`, `__proto__` never resolve.
fn at_path<'a>(mut v: &'a Value, path: &str) -> Option<&'a Value> {
    for seg in path.split('.') {
        if matches!(seg, "length" | "constructor" | "__proto__") {
            return None;
        }
        v = match v {
            Value::Object(m) => m.get(seg)?,
            Value::Array(a) => {
                let canonical = |s: &str| {
                    s == "0" || (!s.starts_with('0') && s.chars().all(|c| c.is_ascii_digit()))
                };
                let i = if let Some(back) = seg.strip_prefix('-') {
                    if !canonical(back) || back == "0" {
                        return None;
                    }
                    a.len().checked_sub(back.parse::<usize>().ok()?)?
                } else if canonical(seg) {
                    seg.parse::<usize>().ok()?
                } else {
                    return None;
                };
                a.get(i)?
            }
            _ => return None,
        };
    }
    Some(v)
}

fn variables(arg: &Value, step: usize, view: &View) -> Vec<AssertionRecord> {
    let empty = Map::new();
    let expect = arg
        .get("expect")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let paths = arg.get("path").and_then(Value::as_object).unwrap_or(&empty);
    let locked = arg
        .get("locked")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let vars = &view.outcome.variables;
    let mut out = Vec::new();
    for (name, want) in expect {
        let rec =
            |passed, detail: String| AssertionRecord::new("variables", step, passed, Some(detail));
        let Some(entry) = vars.get(name) else {
            out.push(rec(false, format!("{name} (not set)")));
            continue;
        };
        let value = entry.get("value").unwrap_or(&Value::Null);
        let (label, got) = match paths.get(name).and_then(Value::as_str) {
            Some(p) => match at_path(value, p) {
                Some(v) => (format!("{name}.{p}"), v),
                None => {
                    out.push(rec(false, format!("{name}.{p} (path does not resolve)")));
                    continue;
                }
            },
            None => (name.clone(), value),
        };
        out.push(rec(
            got == want,
            format!("{label}: expected {want}, got {got}"),
        ));
    }
    for (name, want) in locked {
        let want = want.as_bool().unwrap_or(false);
        let got = vars
            .get(name)
            .and_then(|e| e.get("locked"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
        out.push(AssertionRecord::new(
            "variables",
            step,
            got == want,
            Some(format!("{name} locked={want} (actual {got})")),
        ));
    }
    out
}

fn tokens(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a.iter().map(s).collect(),
        Some(other) => vec![s(other)],
        None => Vec::new(),
    }
}

/// Whether `token` (a substring, or `/pattern/flags`) is found in `text`.
pub fn token_matches(token: &str, text: &str) -> bool {
    match token_regex(token) {
        Some(Ok(re)) => re.is_match(text),
        Some(Err(_)) => false,
        None => text.contains(token),
    }
}

fn reply(arg: &Value, step: usize, view: &View) -> Vec<AssertionRecord> {
    let text = view.reply_text();
    let mut out = Vec::new();
    for t in tokens(arg.get("includes")) {
        let hit = token_matches(&t, &text);
        out.push(AssertionRecord::new("reply.includes", step, hit, Some(t)));
    }
    for t in tokens(arg.get("excludes")) {
        let hit = token_matches(&t, &text);
        out.push(AssertionRecord::new("reply.excludes", step, !hit, Some(t)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_resolve_own_keys_and_indexes_only() {
        let v = json!({"a": {"b": [1, 2, 3]}, "s": "x"});
        assert_eq!(at_path(&v, "a.b.0"), Some(&json!(1)));
        assert_eq!(at_path(&v, "a.b.-1"), Some(&json!(3)));
        assert_eq!(at_path(&v, "a.b.01"), None);
        assert_eq!(at_path(&v, "a.b.length"), None);
        assert_eq!(at_path(&v, "s.length"), None);
        assert_eq!(at_path(&v, "a.c"), None);
    }

    #[test]
    fn reply_tokens_are_substrings_or_regexes() {
        assert!(token_matches("refund", "your refund is on its way"));
        assert!(token_matches(
            "/REFUND\\s+is/i",
            "your refund is on its way"
        ));
        assert!(token_matches("/a.b/", "a\nb"));
        assert!(!token_matches("/^way/", "on its way"));
    }
}
