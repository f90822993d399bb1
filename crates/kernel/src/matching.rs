//! Argument matching for allow/forbid entries (kernel digest §5.2, 0.9.0
//! deltas D8 and D9).

use serde_json::Value;

use crate::canonical::canonicalize;
use crate::glob::Glob;
use crate::jsfmt::js_string_of;

/// Property names that never resolve in a dotted argument lookup.
const BLOCKED_KEYS: [&str; 4] = ["length", "constructor", "__proto__", "toString"];

/// JS `String(v)` of an argument value; `None` for `null` (an absent value).
pub fn stringify(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        other => Some(js_string_of(other)),
    }
}

/// Reads the argument `name` from `args`; a dotted name `a.b.c` reads
/// `args.a.b.c` by own properties only. Arrays take canonical non-negative
/// indices (`0`, `12`; not `01`) or negative-from-end ones (`-1`; not `-0`).
/// `length`, `constructor`, `__proto__` and `toString` never resolve (even
/// as own keys of an object).
pub fn arg_lookup<'a>(args: &'a Value, name: &str) -> Option<&'a Value> {
    let mut current = args;
    for seg in name.split('.') {
        if BLOCKED_KEYS.contains(&seg) {
            return None;
        }
        current = match current {
            Value::Object(map) => map.get(seg)?,
            Value::Array(items) => items.get(array_index(seg, items.len())?)?,
            _ => return None,
        };
    }
    Some(current)
}

fn is_canonical_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

fn array_index(seg: &str, len: usize) -> Option<usize> {
    if is_canonical_digits(seg) {
        return seg.parse().ok();
    }
    let back = seg.strip_prefix('-')?;
    if !is_canonical_digits(back) || back == "0" {
        return None;
    }
    len.checked_sub(back.parse().ok()?)
}

/// Which side of the decision a guard sits on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    /// A grant (`allow`, `allow_always`).
    Allow,
    /// A denial (`forbid`, `forbid_always`).
    Deny,
}

/// True when the argument value matches any of `globs`.
///
/// - Absent or `null` value, or no globs: no match.
/// - The value is stringified with JS `String()`.
/// - Path arguments: canonicalized (§5.1) and matched with
///   [`Glob::is_match`] (the glob's leading `/`s are ignored).
/// - Other arguments, allow side: only the text as written, matched with
///   [`Glob::is_match_as_written`] (a glob's leading `/`s are kept).
/// - Other arguments, deny side: the text as written, or else its canonical
///   path form (matched like a path argument).
pub fn value_matches(
    value: Option<&Value>,
    globs: &[&Glob],
    is_path_arg: bool,
    side: Side,
) -> bool {
    if globs.is_empty() {
        return false;
    }
    let Some(text) = value.and_then(stringify) else {
        return false;
    };
    if is_path_arg {
        let canonical = canonicalize(&text).path;
        return globs.iter().any(|g| g.is_match(&canonical));
    }
    if globs.iter().any(|g| g.is_match_as_written(&text)) {
        return true;
    }
    if side == Side::Deny {
        let canonical = canonicalize(&text).path;
        return globs.iter().any(|g| g.is_match(&canonical));
    }
    false
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vm(v: Value, globs: &[&str], path: bool, side: Side) -> bool {
        let compiled: Vec<Glob> = globs.iter().map(|g| Glob::new(g)).collect();
        let refs: Vec<&Glob> = compiled.iter().collect();
        value_matches(Some(&v), &refs, path, side)
    }

    #[test]
    fn stringify_values() {
        assert_eq!(stringify(&json!(null)), None);
        assert_eq!(stringify(&json!(1)), Some("1".to_string()));
        assert_eq!(stringify(&json!(1.0)), Some("1".to_string()));
        assert_eq!(stringify(&json!(true)), Some("true".to_string()));
        assert_eq!(stringify(&json!(["a", "b"])), Some("a,b".to_string()));
        assert_eq!(
            stringify(&json!({"a": 1})),
            Some("[object Object]".to_string())
        );
        assert_eq!(stringify(&json!("x")), Some("x".to_string()));
    }

    #[test]
    fn lookups() {
        let args =
            json!({"a": {"b": [10, {"c": "x"}]}, "n": 1, "obj": {"length": 3, "toString": 1}});
        assert_eq!(arg_lookup(&args, "n"), Some(&json!(1)));
        assert_eq!(arg_lookup(&args, "a.b.0"), Some(&json!(10)));
        assert_eq!(arg_lookup(&args, "a.b.-1.c"), Some(&json!("x")));
        assert_eq!(arg_lookup(&args, "a.b.-2"), Some(&json!(10)));
        assert_eq!(arg_lookup(&args, "a.b.-3"), None);
        assert_eq!(arg_lookup(&args, "a.b.2"), None);
        assert_eq!(arg_lookup(&args, "a.b.01"), None);
        assert_eq!(arg_lookup(&args, "a.b.-0"), None);
        assert_eq!(arg_lookup(&args, "a.b.length"), None);
        assert_eq!(arg_lookup(&args, "obj.length"), None);
        assert_eq!(arg_lookup(&args, "obj.toString"), None);
        assert_eq!(arg_lookup(&args, "constructor"), None);
        assert_eq!(arg_lookup(&args, "__proto__"), None);
        assert_eq!(arg_lookup(&args, "missing"), None);
        assert_eq!(arg_lookup(&args, "n.x"), None);
    }

    #[test]
    fn absent_and_empty() {
        let g = Glob::new("**");
        assert!(!value_matches(None, &[&g], true, Side::Allow));
        assert!(!value_matches(Some(&json!(null)), &[&g], false, Side::Deny));
        assert!(!value_matches(Some(&json!("x")), &[], true, Side::Deny));
    }

    #[test]
    fn path_arguments() {
        for v in [
            "./secrets/key",
            ".//secrets/key",
            "secrets/../secrets/key",
            "/secrets/key",
        ] {
            assert!(vm(json!(v), &["secrets/**"], true, Side::Deny), "{v}");
        }
        assert!(!vm(
            json!("../secrets/key"),
            &["secrets/**"],
            true,
            Side::Allow
        ));
        assert!(vm(json!("a"), &["b", "a"], true, Side::Allow));
        // D9: "" matches only an empty value; "/" and "." canonicalize to "".
        assert!(vm(json!(""), &[""], true, Side::Allow));
        assert!(vm(json!("/"), &[""], true, Side::Allow));
        assert!(vm(json!("."), &[""], true, Side::Allow));
        assert!(!vm(json!("a"), &[""], true, Side::Allow));
        assert!(!vm(json!(""), &["*"], true, Side::Allow));
        assert!(vm(json!(7), &["7"], true, Side::Allow));
    }

    #[test]
    fn non_path_arguments() {
        let url = ["https://x.com/*"];
        assert!(vm(json!("https://x.com/y"), &url, false, Side::Allow));
        assert!(!vm(json!("https://x.com/a/b"), &url, false, Side::Allow));
        assert!(vm(json!("bob@x.com"), &["*@x.com"], false, Side::Allow));
        assert!(!vm(json!("bob@y.com"), &["*@x.com"], false, Side::Allow));
        // Allow side: as written only.
        assert!(!vm(json!("./a"), &["a"], false, Side::Allow));
        assert!(vm(json!("./a"), &["./a"], false, Side::Allow));
        // Deny side: as written or canonical.
        assert!(vm(json!("./a"), &["a"], false, Side::Deny));
        assert!(vm(
            json!("x/../secrets/k"),
            &["secrets/**"],
            false,
            Side::Deny
        ));
        assert!(!vm(
            json!("x/../secrets/k"),
            &["secrets/**"],
            false,
            Side::Allow
        ));
        assert!(vm(
            json!("https://x.com/y"),
            &["https:/x.com/*"],
            false,
            Side::Deny
        ));
        assert!(!vm(
            json!("https://x.com/y"),
            &["https:/x.com/*"],
            false,
            Side::Allow
        ));
        // A glob's leading `/` is kept for as-written values.
        assert!(vm(json!("/api/v1"), &["/api/*"], false, Side::Allow));
        assert!(!vm(json!("api/v1"), &["/api/*"], false, Side::Allow));
        assert!(vm(json!("api/v1"), &["/api/*"], false, Side::Deny));
        // D9 for as-written values.
        assert!(vm(json!(""), &[""], false, Side::Allow));
        assert!(!vm(json!(" "), &[""], false, Side::Allow));
        // JS String() of non-strings.
        assert!(vm(json!(["a", "b"]), &["a,b"], false, Side::Allow));
        assert!(vm(
            json!({"k": 1}),
            &["\\[object Object\\]"],
            false,
            Side::Allow
        ));
        assert!(vm(json!(true), &["true"], false, Side::Allow));
    }
}
