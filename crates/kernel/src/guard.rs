//! `${{…}}` references inside guard globs, resolved on every call against
//! the current variables (kernel digest §5.4).

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::glob::{Glob, push_escaped};
use crate::grammar::{ReferenceProblem, resolve_path, scan_references};
use crate::jsfmt::js_number_of;

/// Why a reference in a guard glob could not be substituted (§5.4), in the
/// order the checks run for one reference.
#[derive(Debug, Clone, PartialEq)]
pub enum Unresolved {
    /// Empty name or an empty path segment (`${{}}`, `${{a..b}}`).
    Malformed,
    /// The name is not `^[a-z][a-z0-9_]*$`.
    InvalidName {
        /// The name as written (first `.`-segment of the trimmed inner text).
        name: String,
    },
    /// No such variable (or no variables snapshot at all).
    Unset {
        /// The variable name.
        name: String,
    },
    /// The dotted path resolves to nothing (missing key, out-of-range index,
    /// `length`, prototype keys).
    PathMissing {
        /// The variable name.
        name: String,
        /// The dotted path after the name (`a.b`).
        path: String,
    },
    /// The value is an object, an array or `null`.
    NonScalar {
        /// The variable name.
        name: String,
        /// The dotted path after the name, if any.
        path: Option<String>,
    },
}

impl Unresolved {
    /// The exact detail text of §5.4; `raw` is the reference span as written
    /// (e.g. `${{from_email}}`).
    pub fn detail(&self, raw: &str) -> String {
        match self {
            Unresolved::Malformed => format!(
                "{raw} is not a valid reference — use ${{{{name}}}} or ${{{{name.path.to.value}}}}"
            ),
            Unresolved::InvalidName { name } => format!(
                "{raw} names '{name}', which is not a valid variable name (lowercase letters, digits and underscores, starting with a letter)"
            ),
            Unresolved::Unset { name } => format!("variable '{name}' is not set"),
            Unresolved::PathMissing { name, path } => {
                format!("'{name}' at path '{path}' does not resolve — the value has no such path")
            }
            Unresolved::NonScalar { name, path } => {
                let target = match path {
                    Some(p) => format!("'{name}' at path '{p}'"),
                    None => format!("'{name}'"),
                };
                format!(
                    "{target} resolves to a non-scalar value; only strings, numbers and booleans can be substituted into a guard"
                )
            }
        }
    }
}

/// The first reference of a guard glob that could not be resolved.
#[derive(Debug, Clone)]
pub struct GuardFailure {
    /// The reference span as written, e.g. `${{from_email}}`.
    pub reference: String,
    /// Why it failed.
    pub reason: Unresolved,
}

impl GuardFailure {
    /// The exact detail text of §5.4 for this failure.
    pub fn detail(&self) -> String {
        self.reason.detail(&self.reference)
    }
}

/// One guard glob of an allow/forbid entry.
#[derive(Debug, Clone)]
pub enum GuardPattern {
    /// No non-escaped `${{…}}` reference: compiled once. Escaped `$${{x}}`
    /// spans were turned into glob-escaped literal `${{x}}` text.
    Static(Glob),
    /// Has at least one non-escaped reference (valid or not): substituted
    /// and compiled on every call by [`GuardPattern::resolve`].
    Bound {
        /// The glob as written in the spec.
        template: String,
    },
}

impl GuardPattern {
    /// Classifies and, when static, compiles `pattern`.
    pub fn new(pattern: &str) -> GuardPattern {
        let refs = scan_references(pattern);
        if refs.iter().any(|r| !r.escaped) {
            return GuardPattern::Bound {
                template: pattern.to_string(),
            };
        }
        if refs.is_empty() {
            return GuardPattern::Static(Glob::new(pattern));
        }
        let mut text = String::with_capacity(pattern.len() + 8);
        let mut last = 0;
        for r in &refs {
            text.push_str(pattern.get(last..r.start).unwrap_or(""));
            push_escaped(&mut text, r.raw.get(1..).unwrap_or(""));
            last = r.end;
        }
        text.push_str(pattern.get(last..).unwrap_or(""));
        GuardPattern::Static(Glob::new(&text))
    }

    /// The glob to match for this call. `Static` borrows its compiled glob;
    /// `Bound` substitutes every reference with its value glob-escaped
    /// (strings as-is, numbers as JS `String()`, booleans `true`/`false`;
    /// escaped `$${{x}}` spans become literal `${{x}}`) and compiles the
    /// result. References are checked left to right and the first failure
    /// is returned; per reference the checks run malformed, invalid name,
    /// unset, path missing, non-scalar. `None` variables (no snapshot) make
    /// every well-formed reference `Unset`.
    ///
    /// Compiling is cheap for the common shapes (literal text, `*`, `?`,
    /// `**`): no regex is built; a substituted glob with no wildcard at all
    /// is matched by string comparison. Templates with classes or braces
    /// build a `globset` matcher per call (slower, same answers).
    pub fn resolve(
        &self,
        variables: Option<&Map<String, Value>>,
    ) -> Result<Cow<'_, Glob>, GuardFailure> {
        let template = match self {
            GuardPattern::Static(glob) => return Ok(Cow::Borrowed(glob)),
            GuardPattern::Bound { template } => template,
        };
        let mut text = String::with_capacity(template.len() + 16);
        let mut last = 0;
        for r in scan_references(template) {
            text.push_str(template.get(last..r.start).unwrap_or(""));
            last = r.end;
            if r.escaped {
                push_escaped(&mut text, r.raw.get(1..).unwrap_or(""));
                continue;
            }
            match reference_text(&r, variables)? {
                ReferenceValue::Text(t) => push_escaped(&mut text, &t),
                ReferenceValue::Bool(b) => text.push_str(if b { "true" } else { "false" }),
            }
        }
        text.push_str(template.get(last..).unwrap_or(""));
        Ok(Cow::Owned(Glob::new(&text)))
    }
}

/// What a resolved reference stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReferenceValue {
    /// A string as is, or a number as JavaScript prints it.
    Text(String),
    /// A boolean.
    Bool(bool),
}

impl ReferenceValue {
    /// The text substituted for the reference.
    pub fn into_text(self) -> String {
        match self {
            ReferenceValue::Text(t) => t,
            ReferenceValue::Bool(b) => b.to_string(),
        }
    }
}

/// Resolves one non-escaped `${{…}}` reference against the run's variables,
/// with the checks in order: malformed, invalid name, unset, path missing,
/// non-scalar. Shared by guards and by the runtime's argument substitution.
pub fn reference_text(
    r: &crate::grammar::Reference,
    variables: Option<&Map<String, Value>>,
) -> Result<ReferenceValue, GuardFailure> {
    let fail = |reason| GuardFailure {
        reference: r.raw.clone(),
        reason,
    };
    match r.problem {
        Some(ReferenceProblem::Malformed) => return Err(fail(Unresolved::Malformed)),
        Some(ReferenceProblem::InvalidName) => {
            return Err(fail(Unresolved::InvalidName {
                name: r.name.clone(),
            }));
        }
        None => {}
    }
    let Some(root) = variables.and_then(|vars| vars.get(r.name.as_str())) else {
        return Err(fail(Unresolved::Unset {
            name: r.name.clone(),
        }));
    };
    let Some(value) = resolve_path(root, &r.path) else {
        return Err(fail(Unresolved::PathMissing {
            name: r.name.clone(),
            path: r.path.join("."),
        }));
    };
    match value {
        Value::String(s) => Ok(ReferenceValue::Text(s.clone())),
        Value::Number(n) => Ok(ReferenceValue::Text(js_number_of(n))),
        Value::Bool(b) => Ok(ReferenceValue::Bool(*b)),
        Value::Null | Value::Array(_) | Value::Object(_) => Err(fail(Unresolved::NonScalar {
            name: r.name.clone(),
            path: (!r.path.is_empty()).then(|| r.path.join(".")),
        })),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("object expected"),
        }
    }

    fn fails(pattern: &str, v: Option<&Map<String, Value>>) -> (String, Unresolved, String) {
        let f = GuardPattern::new(pattern).resolve(v).unwrap_err();
        let d = f.detail();
        (f.reference, f.reason, d)
    }

    #[test]
    fn classification() {
        assert!(matches!(
            GuardPattern::new("output/**"),
            GuardPattern::Static(_)
        ));
        assert!(matches!(
            GuardPattern::new("a/$${{x}}"),
            GuardPattern::Static(_)
        ));
        assert!(matches!(
            GuardPattern::new("output/${{case_id}}/**"),
            GuardPattern::Bound { .. }
        ));
        assert!(matches!(
            GuardPattern::new("${{}}"),
            GuardPattern::Bound { .. }
        ));
    }

    #[test]
    fn escaped_reference_is_literal() {
        let g = GuardPattern::new("a/$${{x}}");
        let glob = g.resolve(None).unwrap();
        assert!(glob.is_match("a/${{x}}"));
        assert!(!glob.is_match("a/$x"));
        assert!(!glob.is_match("a/x"));
        let v = vars(json!({"id": 7}));
        let g = GuardPattern::new("$${{x}}/${{id}}/*");
        let glob = g.resolve(Some(&v)).unwrap();
        assert!(glob.is_match("${{x}}/7/f"));
        assert!(!glob.is_match("${{x}}/8/f"));
    }

    #[test]
    fn substitution() {
        let v = vars(json!({
            "case_id": "c-1",
            "n": 42,
            "f": 2.5,
            "b": true,
            "star": "*",
            "alts": "{a,b}",
            "order": {"items": [{"sku": "A1"}, {"sku": "B2"}]},
            "from_email": "bob@x.com"
        }));
        let g = GuardPattern::new("output/${{case_id}}/**");
        let glob = g.resolve(Some(&v)).unwrap();
        assert!(glob.is_match("output/c-1/x.json"));
        assert!(glob.is_match("output/c-1"));
        assert!(!glob.is_match("output/c-2/x.json"));
        let m = |p: &str, val: &str| {
            GuardPattern::new(p)
                .resolve(Some(&v))
                .unwrap()
                .is_match(val)
        };
        assert!(m("${{n}}", "42"));
        assert!(m("x-${{f}}", "x-2.5"));
        assert!(m("${{b}}", "true"));
        assert!(m("${{star}}", "*"));
        assert!(!m("${{star}}", "a"));
        assert!(m("${{alts}}", "{a,b}"));
        assert!(!m("${{alts}}", "a"));
        assert!(m("${{ order.items.-1.sku }}", "B2"));
        assert!(m("${{order.items.0.sku}}-*", "A1-x"));
        assert!(m("${{from_email}}", "bob@x.com"));
        assert!(!m("${{from_email}}", "eve@x.com"));
    }

    #[test]
    fn failures_in_order() {
        let v = vars(json!({"obj": {"a": {"b": 1}}, "arr": [1], "nul": null, "Name": "x"}));
        let vs = Some(&v);
        assert_eq!(
            fails("x/${{}}", vs),
            (
                "${{}}".to_string(),
                Unresolved::Malformed,
                "${{}} is not a valid reference — use ${{name}} or ${{name.path.to.value}}"
                    .to_string()
            )
        );
        assert_eq!(fails("${{a..b}}", vs).1, Unresolved::Malformed);
        assert_eq!(
            fails("${{Name}}", vs),
            (
                "${{Name}}".to_string(),
                Unresolved::InvalidName { name: "Name".to_string() },
                "${{Name}} names 'Name', which is not a valid variable name (lowercase letters, digits and underscores, starting with a letter)".to_string()
            )
        );
        assert_eq!(
            fails("${{from_email}}", vs),
            (
                "${{from_email}}".to_string(),
                Unresolved::Unset {
                    name: "from_email".to_string()
                },
                "variable 'from_email' is not set".to_string()
            )
        );
        assert_eq!(
            fails("${{obj.a.c}}", vs),
            (
                "${{obj.a.c}}".to_string(),
                Unresolved::PathMissing {
                    name: "obj".to_string(),
                    path: "a.c".to_string()
                },
                "'obj' at path 'a.c' does not resolve — the value has no such path".to_string()
            )
        );
        assert_eq!(
            fails("${{arr.1}}", vs).1,
            Unresolved::PathMissing {
                name: "arr".into(),
                path: "1".into()
            }
        );
        assert_eq!(
            fails("${{arr.length}}", vs).1,
            Unresolved::PathMissing {
                name: "arr".into(),
                path: "length".into()
            }
        );
        assert_eq!(
            fails("${{obj.constructor}}", vs).1,
            Unresolved::PathMissing {
                name: "obj".into(),
                path: "constructor".into()
            }
        );
        assert_eq!(
            fails("${{obj.a}}", vs),
            (
                "${{obj.a}}".to_string(),
                Unresolved::NonScalar { name: "obj".to_string(), path: Some("a".to_string()) },
                "'obj' at path 'a' resolves to a non-scalar value; only strings, numbers and booleans can be substituted into a guard".to_string()
            )
        );
        assert_eq!(
            fails("${{arr}}", vs).2,
            "'arr' resolves to a non-scalar value; only strings, numbers and booleans can be substituted into a guard"
        );
        assert_eq!(
            fails("${{nul}}", vs).1,
            Unresolved::NonScalar {
                name: "nul".into(),
                path: None
            }
        );
        // No snapshot: every well-formed reference is unset.
        assert_eq!(
            fails("${{obj}}", None).1,
            Unresolved::Unset { name: "obj".into() }
        );
        // Malformed still wins without a snapshot.
        assert_eq!(fails("${{}}", None).1, Unresolved::Malformed);
        // Left to right: the first failing reference is reported.
        assert_eq!(fails("${{zz}}/${{}}", vs).0, "${{zz}}");
    }

    #[test]
    fn static_borrows() {
        let g = GuardPattern::new("a/*");
        assert!(matches!(g.resolve(None).unwrap(), Cow::Borrowed(_)));
    }
}
