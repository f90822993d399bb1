//! Placeholder until the full module lands.
use crate::canonical::canonicalize;
use crate::glob::Glob;
use serde_json::Value;
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    Allow,
    Deny,
}
pub fn stringify(v: &Value) -> Option<String> {
    if v.is_null() {
        None
    } else {
        Some(crate::jsfmt::js_string_of(v))
    }
}
pub fn arg_lookup<'a>(args: &'a Value, name: &str) -> Option<&'a Value> {
    let segs: Vec<String> = name.split('.').map(str::to_string).collect();
    if segs.iter().any(|s| {
        matches!(
            s.as_str(),
            "length" | "constructor" | "__proto__" | "toString"
        )
    }) {
        return None;
    }
    crate::grammar::resolve_path(args, &segs)
}
pub fn value_matches(
    value: Option<&Value>,
    globs: &[&Glob],
    is_path_arg: bool,
    side: Side,
) -> bool {
    let Some(s) = value.and_then(stringify) else {
        return false;
    };
    if globs.is_empty() {
        return false;
    }
    if is_path_arg {
        let c = canonicalize(&s).path;
        return globs.iter().any(|g| g.is_match(&c));
    }
    if globs.iter().any(|g| g.is_match(&s)) {
        return true;
    }
    side == Side::Deny && {
        let c = canonicalize(&s).path;
        globs.iter().any(|g| g.is_match(&c))
    }
}
