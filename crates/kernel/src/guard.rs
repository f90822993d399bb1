//! Placeholder until the full module lands.
use crate::glob::{Glob, escape_value};
use crate::grammar::{ReferenceProblem, resolve_path, scan_references};
use serde_json::Value;
use std::borrow::Cow;
#[derive(Debug, Clone, PartialEq)]
pub enum Unresolved {
    Malformed,
    InvalidName { name: String },
    Unset { name: String },
    PathMissing { name: String, path: String },
    NonScalar { name: String, path: Option<String> },
}
impl Unresolved {
    pub fn detail(&self, raw: &str) -> String {
        let t = |name: &str, path: Option<&str>| match path {
            Some(p) => format!("'{name}' at path '{p}'"),
            None => format!("'{name}'"),
        };
        match self {
            Unresolved::Malformed => format!(
                "{raw} is not a valid reference — use ${{{{name}}}} or ${{{{name.path.to.value}}}}"
            ),
            Unresolved::InvalidName { name } => format!(
                "{raw} names '{name}', which is not a valid variable name (lowercase letters, digits and underscores, starting with a letter)"
            ),
            Unresolved::Unset { name } => format!("variable '{name}' is not set"),
            Unresolved::PathMissing { name, path } => format!(
                "{} does not resolve — the value has no such path",
                t(name, Some(path))
            ),
            Unresolved::NonScalar { name, path } => format!(
                "{} resolves to a non-scalar value; only strings, numbers and booleans can be substituted into a guard",
                t(name, path.as_deref())
            ),
        }
    }
}
#[derive(Debug, Clone)]
pub struct GuardFailure {
    pub reference: String,
    pub reason: Unresolved,
}
impl GuardFailure {
    pub fn detail(&self) -> String {
        self.reason.detail(&self.reference)
    }
}
#[derive(Debug, Clone)]
pub enum GuardPattern {
    Static(Glob),
    Bound { template: String },
}
impl GuardPattern {
    pub fn new(pattern: &str) -> GuardPattern {
        if scan_references(pattern).is_empty() {
            GuardPattern::Static(Glob::new(pattern))
        } else {
            GuardPattern::Bound {
                template: pattern.to_string(),
            }
        }
    }
    pub fn resolve(
        &self,
        variables: Option<&serde_json::Map<String, Value>>,
    ) -> Result<Cow<'_, Glob>, GuardFailure> {
        let template = match self {
            GuardPattern::Static(g) => return Ok(Cow::Borrowed(g)),
            GuardPattern::Bound { template } => template,
        };
        let mut out = String::new();
        let mut last = 0;
        for r in scan_references(template) {
            out.push_str(&template[last..r.start]);
            last = r.end;
            if r.escaped {
                out.push_str(&escape_value(&r.raw[1..]));
                continue;
            }
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
            let Some(root) = variables.and_then(|v| v.get(&r.name)) else {
                return Err(fail(Unresolved::Unset {
                    name: r.name.clone(),
                }));
            };
            let p = (!r.path.is_empty()).then(|| r.path.join("."));
            let Some(v) = resolve_path(root, &r.path) else {
                return Err(fail(Unresolved::PathMissing {
                    name: r.name.clone(),
                    path: p.unwrap_or_default(),
                }));
            };
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(_) | Value::Bool(_) => crate::jsfmt::js_string_of(v),
                _ => {
                    return Err(fail(Unresolved::NonScalar {
                        name: r.name.clone(),
                        path: p,
                    }));
                }
            };
            out.push_str(&escape_value(&s));
        }
        out.push_str(&template[last..]);
        Ok(Cow::Owned(Glob::new(&out)))
    }
}
