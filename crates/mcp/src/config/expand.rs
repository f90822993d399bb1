//! `${VAR}` and `${VAR:-default}` in the fields Claude Code expands.
//!
//! The two forms are the ones Claude Code documents; like Claude Code there is no
//! escape, and anything else (`$VAR`, `$$`, a `$` or `${` with no closing `}`)
//! stays as written. Unlike Claude Code, which leaves an unset `${VAR}` in place,
//! an unset variable without a default is an error naming it. `:-` follows the
//! shell: the default also stands in for a variable set to the empty string. A
//! default is literal text (no nested references).

/// A variable the caller can look up (the environment and the workspace's `.env`).
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// `text` with its references replaced; every value a reference produced is
/// pushed to `expanded` (they are secrets to cut out of messages). The error is
/// the message for the field.
pub(crate) fn expand(
    text: &str,
    lookup: Lookup<'_>,
    expanded: &mut Vec<String>,
) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let Some(close) = after.find('}') else {
            // No closing brace: literal, as Claude Code leaves it.
            out.push_str(&rest[at..]);
            return Ok(out);
        };
        let inner = &after[..close];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if !is_variable_name(name) {
            return Err(format!(
                "'${{{inner}}}' is not a variable reference: write ${{NAME}} or ${{NAME:-default}}, NAME of letters, digits and '_', not starting with a digit"
            ));
        }
        let value = match (lookup(name), default) {
            (Some(v), Some(d)) if v.is_empty() => d.to_string(),
            (Some(v), _) => v,
            (None, Some(d)) => d.to_string(),
            (None, None) => {
                return Err(format!(
                    "variable ${{{name}}} is not set and has no default (set it in the environment or the workspace's .env, or write ${{{name}:-default}})"
                ));
            }
        };
        expanded.push(value.clone());
        out.push_str(&value);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str) -> Result<String, String> {
        let lookup = |name: &str| match name {
            "HOME" => Some("/home/u".to_string()),
            "EMPTY" => Some(String::new()),
            "TOKEN" => Some("s3cret".to_string()),
            _ => None,
        };
        expand(text, &lookup, &mut Vec::new())
    }

    #[test]
    fn the_two_forms() {
        assert_eq!(run("${HOME}/x").as_deref(), Ok("/home/u/x"));
        assert_eq!(run("a${TOKEN}b${HOME}").as_deref(), Ok("as3cretb/home/u"));
        assert_eq!(run("${NOPE:-fallback}").as_deref(), Ok("fallback"));
        assert_eq!(run("${NOPE:-}").as_deref(), Ok(""));
        assert_eq!(run("${EMPTY:-d}").as_deref(), Ok("d"));
        assert_eq!(run("${EMPTY}").as_deref(), Ok(""));
        assert_eq!(run("${HOME:-d}").as_deref(), Ok("/home/u"));
        assert_eq!(run("${NOPE:-a:-b}").as_deref(), Ok("a:-b"));
    }

    #[test]
    fn everything_else_is_literal() {
        for text in ["$HOME", "$$", "$", "${", "a ${HOME", "${HOME:-x", "$${"] {
            assert_eq!(run(text).as_deref(), Ok(text), "{text}");
        }
        assert_eq!(run("$${HOME}").as_deref(), Ok("$/home/u"));
    }

    #[test]
    fn errors_name_the_variable() {
        assert_eq!(
            run("Bearer ${API_KEY}"),
            Err("variable ${API_KEY} is not set and has no default (set it in the environment or the workspace's .env, or write ${API_KEY:-default})".to_string())
        );
        assert!(run("${}").is_err_and(|e| e.starts_with("'${}' is not a variable reference")));
        assert!(run("${1X}").is_err());
        assert!(run("${A B}").is_err());
    }

    #[test]
    fn collects_the_expanded_values() {
        let mut got = Vec::new();
        let lookup = |_: &str| Some("v1".to_string());
        let _ = expand("${A}-${B:-x}", &lookup, &mut got);
        assert_eq!(got, ["v1", "v1"]);
    }
}
