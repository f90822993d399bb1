//! Hook verdicts and how a hook's return value is read.

/// Reason used for a bare `false` return (this project's decision: a veto, as the 0.4.x code).
pub const PRECONDITION_NOT_MET: &str = "precondition not met";

/// A hook's decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookVerdict {
    /// Allow (`ok()`, `true`, nothing, or any non-object value).
    Ok,
    /// Block with a reason (`veto(reason)` or a bare `false`).
    Veto(String),
    /// Ask the agent to correct its work (`correct(reason)`).
    Correct(String),
}

/// The outcome of one hook run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRun {
    /// The verdict, or `Err(reason)` for an execution error (terminal, fail closed): a throw, a
    /// syntax error, a refused import, a non-verdict object, a timeout or a broken limit.
    pub verdict: Result<HookVerdict, String>,
    /// Captured console lines: non-blank, right-trimmed, `[warn] `/`[error] ` prefixed.
    pub output: Vec<String>,
}

/// What a returned object looked like, for the fail-closed message (keys only, never values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shape {
    Array,
    Object(Vec<String>),
    Unreadable,
}

impl Shape {
    pub(crate) fn describe(&self) -> String {
        match self {
            Shape::Array => "an array".to_owned(),
            Shape::Unreadable => "an object".to_owned(),
            Shape::Object(keys) if keys.is_empty() => "an object with no keys".to_owned(),
            Shape::Object(keys) => {
                let listed: Vec<String> = keys.iter().take(6).map(|k| format!("'{k}'")).collect();
                let including = if keys.len() > 6 { "including " } else { "" };
                format!("an object with keys {including}{}", listed.join(", "))
            }
        }
    }
}

/// The fail-closed message for a returned value that is not a verdict.
pub(crate) fn not_a_verdict(shape: &Shape) -> String {
    format!(
        "hook returned {}, which is not a verdict — return ok(), veto(reason), correct(reason), false, or nothing at all",
        shape.describe()
    )
}

/// Builds a verdict from a `verdict` string and an optional reason; blank reasons get the
/// helpers' defaults. `None` when `verdict` is not exactly `ok`, `veto` or `correct`.
/// Hosts reading a custom hook kind's answer use the same rule.
pub fn from_parts(verdict: &str, reason: Option<String>) -> Option<HookVerdict> {
    let reason = reason.filter(|r| !r.trim().is_empty());
    match verdict {
        "ok" => Some(HookVerdict::Ok),
        "veto" => Some(HookVerdict::Veto(
            reason.unwrap_or_else(|| "vetoed by hook".to_owned()),
        )),
        "correct" => Some(HookVerdict::Correct(
            reason.unwrap_or_else(|| "correction requested".to_owned()),
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_name_keys_only() {
        assert_eq!(Shape::Array.describe(), "an array");
        assert_eq!(Shape::Object(vec![]).describe(), "an object with no keys");
        assert_eq!(
            Shape::Object(vec!["a".into(), "b".into()]).describe(),
            "an object with keys 'a', 'b'"
        );
        let seven: Vec<String> = (1..=7).map(|i| format!("k{i}")).collect();
        assert_eq!(
            Shape::Object(seven).describe(),
            "an object with keys including 'k1', 'k2', 'k3', 'k4', 'k5', 'k6'"
        );
        assert_eq!(Shape::Unreadable.describe(), "an object");
    }

    #[test]
    fn parts_use_helper_defaults() {
        assert_eq!(from_parts("ok", None), Some(HookVerdict::Ok));
        assert_eq!(
            from_parts("veto", Some(" ".into())),
            Some(HookVerdict::Veto("vetoed by hook".into()))
        );
        assert_eq!(
            from_parts("correct", None),
            Some(HookVerdict::Correct("correction requested".into()))
        );
        assert_eq!(from_parts("OK", None), None);
    }
}
