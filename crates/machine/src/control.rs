//! The control tools: the run's own moves (`archmax_advance`, `archmax_reset`,
//! `archmax_raise`) and its variables (`archmax_get_variables`,
//! `archmax_set_variables`). Each returns the model-facing result; the turn loop
//! applies the effects.

use archmax_spec::Workflow;
use archmax_spec::grammar::{is_variable_name, resolve_path};
use archmax_spec::jsfmt::json_of;
use archmax_spec::signature::{TriggerSignature, signature_value_issues};
use serde_json::{Map, Value};

use crate::state::{LockedBy, SessionState, Variable};

/// The longest run title.
pub const TITLE_MAX_LENGTH: usize = 200;

/// A control tool's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlResult {
    /// The tool message content.
    pub text: String,
    /// Error status.
    pub is_error: bool,
}

impl ControlResult {
    fn ok(text: impl Into<String>) -> Self {
        ControlResult {
            text: text.into(),
            is_error: false,
        }
    }
    fn err(text: impl Into<String>) -> Self {
        ControlResult {
            text: text.into(),
            is_error: true,
        }
    }
}

fn str_arg<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// `archmax_get_variables({ name?, path? })`.
pub fn get_variables(session: &SessionState, args: &Value) -> ControlResult {
    if !args.is_object() && !args.is_null() {
        return ControlResult::err("archmax_get_variables rejected: invalid arguments.");
    }
    let Some(name) = str_arg(args, "name") else {
        let all: Map<String, Value> = session
            .variables
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    serde_json::json!({ "value": v.value, "locked": v.locked() }),
                )
            })
            .collect();
        return ControlResult::ok(
            serde_json::to_string_pretty(&Value::Object(all)).unwrap_or_default(),
        );
    };
    let Some(var) = session.variables.get(name) else {
        let names: Vec<&str> = session.variables.keys().map(String::as_str).collect();
        let set = if names.is_empty() {
            "(none set yet)".to_string()
        } else {
            names.join(", ")
        };
        return ControlResult::err(format!("Variable '{name}' is not set. Set: {set}."));
    };
    match str_arg(args, "path") {
        None => ControlResult::ok(
            serde_json::to_string_pretty(
                &serde_json::json!({ "value": var.value, "locked": var.locked() }),
            )
            .unwrap_or_default(),
        ),
        Some(path) => {
            let segs: Vec<String> = path.split('.').map(str::to_string).collect();
            match resolve_path(&var.value, &segs) {
                Some(v) => ControlResult::ok(
                    serde_json::to_string_pretty(&serde_json::json!({ "value": v }))
                        .unwrap_or_default(),
                ),
                None => ControlResult::err(format!(
                    "Path '{path}' does not resolve against variable '{name}'."
                )),
            }
        }
    }
}

/// What a successful `archmax_set_variables` wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    /// The names, in call order.
    pub names: Vec<String>,
    /// Locked by this call.
    pub locked: bool,
    /// The new title, when `title` was written.
    pub title: Option<String>,
}

/// Why `v` cannot be the run's `title` (a non-empty single line of at most
/// [`TITLE_MAX_LENGTH`] characters), or `None` when it can.
pub(crate) fn title_problem(v: &Value) -> Option<String> {
    let base = format!(
        "'title' is reserved for a short label naming the task this run is doing. It must be a non-empty single-line string of at most {TITLE_MAX_LENGTH} characters"
    );
    let Some(s) = v.as_str() else {
        let kind = archmax_spec::jsfmt::json_kind(v);
        let article = if kind == "object" || kind == "array" {
            "an"
        } else {
            "a"
        };
        return Some(format!("{base}, but {article} {kind} was given."));
    };
    let t = s.trim();
    if t.is_empty() {
        return Some(format!("{base}; this one is empty."));
    }
    if t.contains('\n') || t.contains('\r') {
        return Some(format!("{base}; this one spans more than one line."));
    }
    let n = t.chars().count();
    (n > TITLE_MAX_LENGTH).then(|| format!("{base}; this one is {n}. Shorten it and retry."))
}

/// `archmax_set_variables({ variables, lock? })`: all or nothing.
pub fn set_variables(
    session: &mut SessionState,
    spec: &Workflow,
    signature: Option<&TriggerSignature>,
    args: &Value,
) -> Result<Written, ControlResult> {
    let reject = |m: String| ControlResult::err(format!("archmax_set_variables rejected: {m}"));
    let Some(vars) = args.get("variables").and_then(Value::as_object) else {
        return Err(reject(
            "invalid arguments — variables: expected an object of name → value.".to_string(),
        ));
    };
    let lock = match args.get("lock") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return Err(reject(
                "invalid arguments — lock: expected a boolean.".to_string(),
            ));
        }
    };
    if vars.is_empty() {
        return Err(reject("no variables given.".to_string()));
    }
    let here = session.workflow_state.clone();
    for (name, value) in vars {
        if !is_variable_name(name) {
            let hint = if name.contains('.') {
                " Variables are written whole — there is no sub-path write."
            } else {
                ""
            };
            return Err(reject(format!(
                "'{name}' is not a valid variable name (lowercase letters, digits and underscores, starting with a letter).{hint} Nothing was written."
            )));
        }
        if let Some(existing) = session.variables.get(name).filter(|v| v.locked()) {
            return Err(reject(format!(
                "'{name}' is locked and cannot be changed (current value: {}). Nothing was written.",
                json_of(&existing.value)
            )));
        }
        if let Some(owner) = owner_of(spec, name) {
            if owner != here {
                return Err(reject(format!(
                    "'{name}' is owned by state '{owner}' (its 'locks'), so only '{owner}' may write it. Go back to '{owner}' to change it. Nothing was written."
                )));
            }
            if lock {
                return Err(reject(format!(
                    "'{name}' is owned by state '{owner}' (its 'locks'), which already guards it; it cannot also be locked. Retry without `lock`. Nothing was written."
                )));
            }
        }
        if name == "title" {
            if lock {
                return Err(reject(
                    "'title' is never locked — it names the task this run is doing, and it has to stay correctable when the task changes. Retry without `lock`. Nothing was written.".to_string(),
                ));
            }
            if let Some(p) = title_problem(value) {
                return Err(reject(format!("{p} Nothing was written.")));
            }
        }
    }
    if let Some(sig) = signature {
        let typed: Vec<_> = sig
            .returns
            .iter()
            .filter(|e| e.ty.is_some() && vars.contains_key(&e.name))
            .cloned()
            .collect();
        let issues = signature_value_issues(&typed, vars);
        if !issues.is_empty() {
            let which = if issues.len() == 1 {
                "this return"
            } else {
                "these returns"
            };
            let msgs: Vec<String> = issues.iter().map(|i| i.message.clone()).collect();
            return Err(reject(format!(
                "trigger '{}' declares {which} typed: {}. Write a value of the declared type. Nothing was written.",
                session.trigger,
                msgs.join("; ")
            )));
        }
    }
    let mut title = None;
    let mut names = Vec::with_capacity(vars.len());
    for (name, value) in vars {
        let value = if name == "title" {
            let t = value.as_str().unwrap_or_default().trim().to_string();
            title = Some(t.clone());
            Value::String(t)
        } else {
            value.clone()
        };
        let locked_by = (lock && name != "title").then_some(LockedBy::Agent);
        session
            .variables
            .insert(name.clone(), Variable { value, locked_by });
        names.push(name.clone());
    }
    Ok(Written {
        names,
        locked: lock,
        title,
    })
}

/// The state whose `locks` owns `name`, if any.
pub fn owner_of<'a>(spec: &'a Workflow, name: &str) -> Option<&'a str> {
    spec.states
        .iter()
        .find(|(_, s)| {
            s.locks
                .as_ref()
                .is_some_and(|l| l.iter().any(|n| n == name))
        })
        .map(|(k, _)| k.as_str())
}

/// `archmax_raise` argument checks; `Ok((code, reason))`.
pub fn raise_args(args: &Value, other_calls: usize) -> Result<(String, String), ControlResult> {
    let code = args
        .get("code")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    let reason = args
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    let mut issues = Vec::new();
    if code.is_empty() {
        issues.push("code: a non-empty code is required");
    } else if code.chars().count() > 64 {
        issues.push("code: at most 64 characters");
    } else if code.contains(['\n', '\r']) {
        issues.push("code: one line, no line break");
    }
    if reason.is_empty() {
        issues.push("reason: a non-empty reason is required");
    }
    if !issues.is_empty() {
        return Err(ControlResult::err(format!(
            "archmax_raise rejected: invalid arguments — {}",
            issues.join("; ")
        )));
    }
    if other_calls > 0 {
        let s = if other_calls == 1 { "" } else { "s" };
        return Err(ControlResult::err(format!(
            "archmax_raise rejected: this message makes {other_calls} other tool call{s}, and a raise ends the session, so it has to stand alone. Nothing was raised. If the task still cannot be completed once their results are in, call archmax_raise again on its own."
        )));
    }
    Ok((code.to_string(), reason.to_string()))
}

/// The text of a successful raise.
pub fn raised_text(code: &str, state: &str) -> String {
    format!(
        "Raised '{code}': the session has ended as failed in state '{state}'. Nothing further runs this turn."
    )
}

/// The text of a second move in one message.
pub fn second_move(tool: &str, landed: &str) -> ControlResult {
    ControlResult::err(format!(
        "{tool} rejected: this message already moved the workflow, which is now in state '{landed}'. One transition per message — decide where to go from there on your next turn."
    ))
}

/// The reset texts.
pub fn reset_result(reason: Option<&str>, entry: &str) -> ControlResult {
    match reason {
        None => ControlResult::err(
            "archmax_reset rejected: a non-empty 'reason' is required — say why the run has to start over.",
        ),
        Some(_) => ControlResult::ok(format!(
            "Reset to state '{entry}'. Correction budgets are cleared and its entry gate runs again; earlier work in the conversation and in scratchpad/ is untouched."
        )),
    }
}

/// The advance argument check: `Ok((to, reason))`.
pub fn advance_args(args: &Value) -> Result<(String, String), ControlResult> {
    let mut issues = Vec::new();
    let to = args
        .get("to")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    let reason = args
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    if to.is_empty() {
        issues.push("to: a target state slug is required");
    }
    if reason.is_empty() {
        issues.push("reason: a non-empty reason is required");
    }
    if !issues.is_empty() {
        return Err(ControlResult::err(format!(
            "archmax_advance rejected: invalid arguments — {}",
            issues.join("; ")
        )));
    }
    Ok((to.to_string(), reason.to_string()))
}

/// The text of a landed move.
pub fn advanced_text(to: &str) -> String {
    format!("Advanced to state '{to}'. You may now use the tools allowed in this state.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> Workflow {
        archmax_spec::parse_machine_spec(
            "states:\n  a:\n    triggers: { manual: }\n    locks: [order_id]\n    transitions: [{ to: b, description: next }]\n  b: { instructions: done }\n",
        )
        .expect("spec")
    }

    fn session(state: &str) -> SessionState {
        SessionState {
            workflow_state: state.to_string(),
            trigger: "manual".to_string(),
            ..SessionState::default()
        }
    }

    #[test]
    fn set_variables_is_all_or_nothing_with_exact_refusals() {
        let spec = spec();
        let mut s = session("a");
        let w = set_variables(
            &mut s,
            &spec,
            None,
            &json!({ "variables": { "order_id": "KK-1", "title": "  Refund for KK-1 " } }),
        )
        .expect("ok");
        assert_eq!(w.names, vec!["order_id", "title"]);
        assert_eq!(w.title.as_deref(), Some("Refund for KK-1"));
        let mut s = session("b");
        let e = set_variables(
            &mut s,
            &spec,
            None,
            &json!({ "variables": { "x": 1, "order_id": "KK-2" } }),
        )
        .expect_err("owned");
        assert!(
            e.text
                .starts_with("archmax_set_variables rejected: 'order_id' is owned by state 'a'"),
            "{}",
            e.text
        );
        assert!(s.variables.is_empty(), "nothing was written");
        let e = set_variables(
            &mut s,
            &spec,
            None,
            &json!({ "variables": { "Bad.Name": 1 } }),
        )
        .expect_err("name");
        assert_eq!(
            e.text,
            "archmax_set_variables rejected: 'Bad.Name' is not a valid variable name (lowercase letters, digits and underscores, starting with a letter). Variables are written whole — there is no sub-path write. Nothing was written."
        );
        let e = set_variables(
            &mut s,
            &spec,
            None,
            &json!({ "variables": { "title": "x" }, "lock": true }),
        )
        .expect_err("title lock");
        assert!(e.text.contains("'title' is never locked"));
        let e = set_variables(
            &mut s,
            &spec,
            None,
            &json!({ "variables": { "title": "a\nb" } }),
        )
        .expect_err("title shape");
        assert!(
            e.text
                .ends_with("; this one spans more than one line. Nothing was written."),
            "{}",
            e.text
        );
        set_variables(
            &mut s,
            &spec,
            None,
            &json!({ "variables": { "k": 1 }, "lock": true }),
        )
        .expect("locks");
        let e = set_variables(&mut s, &spec, None, &json!({ "variables": { "k": 2 } }))
            .expect_err("locked");
        assert_eq!(
            e.text,
            "archmax_set_variables rejected: 'k' is locked and cannot be changed (current value: 1). Nothing was written."
        );
    }

    #[test]
    fn get_variables_reads_whole_values_and_paths() {
        let mut s = session("a");
        s.variables.insert(
            "o".into(),
            Variable {
                value: json!({ "items": [1, 2] }),
                locked_by: None,
            },
        );
        assert_eq!(
            get_variables(&s, &json!({ "name": "o", "path": "items.-1" })).text,
            "{\n  \"value\": 2\n}"
        );
        assert_eq!(
            get_variables(&s, &json!({ "name": "nope" })).text,
            "Variable 'nope' is not set. Set: o."
        );
        assert_eq!(
            get_variables(&s, &json!({ "name": "o", "path": "x" })).text,
            "Path 'x' does not resolve against variable 'o'."
        );
    }

    #[test]
    fn raise_must_stand_alone() {
        assert!(
            raise_args(&json!({ "code": "x", "reason": "y" }), 1)
                .expect_err("alone")
                .text
                .contains("1 other tool call,")
        );
        assert_eq!(
            raise_args(&json!({ "code": " c ", "reason": " r " }), 0).expect("ok"),
            ("c".to_string(), "r".to_string())
        );
    }
}
