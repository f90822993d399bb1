//! Grammars of the workflow spec (validation digest §4): slugs, variable
//! names, mount names, hook script paths, trigger session paths, the
//! `${{…}}` reference scanner and substitution, and value-path resolution.

use std::fmt;

use serde_json::Value;

use crate::jsfmt::{js_number_of, js_trim};

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// True when `s` matches the slug grammar `^[a-z0-9]+(?:-[a-z0-9]+)*$`
/// (state keys, workflow directories, delegation targets, skill slugs).
pub fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.split('-')
            .all(|part| !part.is_empty() && part.bytes().all(is_lower_alnum))
}

/// True when `s` matches the variable-name grammar `^[a-z][a-z0-9_]*$`.
pub fn is_variable_name(s: &str) -> bool {
    let mut bytes = s.bytes();
    match bytes.next() {
        Some(first) if first.is_ascii_lowercase() => bytes.all(|b| is_lower_alnum(b) || b == b'_'),
        _ => false,
    }
}

/// Checks the mount-name grammar: non-empty, no surrounding white space, none
/// of `* ? [ ] { }`, no leading or trailing `/`, and no empty, `.` or `..`
/// segment. Returns `None` when valid, else a short reason.
pub fn mount_name_problem(s: &str) -> Option<&'static str> {
    if s.is_empty() {
        return Some("it is empty");
    }
    if js_trim(s) != s {
        return Some("it has leading or trailing white space");
    }
    if s.chars()
        .any(|c| matches!(c, '*' | '?' | '[' | ']' | '{' | '}'))
    {
        return Some("it contains a glob character (* ? [ ] { })");
    }
    if s.starts_with('/') || s.ends_with('/') {
        return Some("it starts or ends with '/'");
    }
    if s.split('/').any(|seg| seg.is_empty()) {
        return Some("it has an empty segment");
    }
    if s.split('/').any(|seg| seg == "." || seg == "..") {
        return Some("it has a '.' or '..' segment");
    }
    None
}

fn is_js_line_terminator(c: char) -> bool {
    matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}')
}

/// True when `s` is a valid hook script path: it matches
/// `^hooks/[^/].*\.(js|mjs)$` (JS regex semantics: `.` does not match line
/// terminators) and has no `..` segment.
pub fn is_hook_script_path(s: &str) -> bool {
    let Some(after) = s.strip_prefix("hooks/") else {
        return false;
    };
    let mut chars = after.chars();
    match chars.next() {
        Some(c) if c != '/' => {}
        _ => return false,
    }
    let rest = chars.as_str();
    if rest.chars().any(is_js_line_terminator) {
        return false;
    }
    if !(rest.ends_with(".js") || rest.ends_with(".mjs")) {
        return false;
    }
    !s.split('/').any(|seg| seg == "..")
}

/// Checks a trigger declaration's `session:` / `message:` path (trimmed
/// first) in the order of the §4 "Session path" table and returns the exact
/// error text of the first failing check, or `None` when the path is valid.
pub fn session_path_problem(path: &str) -> Option<String> {
    let path = js_trim(path);
    if path.is_empty() {
        return Some("it is empty.".to_string());
    }
    if path.contains("${{") {
        return Some(
            "write the bare path, not a '${{…}}' reference (e.g. 'conversation_id').".to_string(),
        );
    }
    let mut segments = path.split('.');
    let first = segments.next().unwrap_or("");
    if !is_variable_name(first) {
        return Some(
            "its first segment must be a variable name (a lowercase letter, then lowercase letters, digits or underscores)."
                .to_string(),
        );
    }
    if segments.any(str::is_empty) {
        return Some("it has an empty segment (look for a doubled or trailing '.').".to_string());
    }
    None
}

/// Why a `${{…}}` reference is structurally invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceProblem {
    /// Empty name or an empty path segment (`${{}}`, `${{a..b}}`).
    Malformed,
    /// The name fails the variable-name pattern (`${{Name}}`).
    InvalidName,
}

/// One match of the reference scanner `(\$?)\$\{\{([^}]*)\}\}` in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// Byte offset of the first character of the span (the escape `$` when escaped).
    pub start: usize,
    /// Byte offset just past the closing `}}`.
    pub end: usize,
    /// True for `$${{…}}`: an escape, which is literal text and not a reference.
    pub escaped: bool,
    /// The whole matched span, including an escape `$`.
    pub raw: String,
    /// The inner text between `${{` and `}}`, trimmed (JS `trim`).
    pub inner: String,
    /// The first `.`-segment of `inner`.
    pub name: String,
    /// The remaining `.`-segments of `inner`.
    pub path: Vec<String>,
    /// The structural problem, if any. Always `None` for escaped spans,
    /// which are never references and therefore never invalid.
    pub problem: Option<ReferenceProblem>,
}

/// Scans `text` for `${{…}}` spans exactly like the global JS regex
/// `(\$?)\$\{\{([^}]*)\}\}`: left to right, non-overlapping.
pub fn scan_references(text: &str) -> Vec<Reference> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // First try the alternative with the optional escape `$`, then without.
        let found = [true, false].into_iter().find_map(|escaped| {
            let open = if escaped { i + 1 } else { i };
            if escaped && bytes.get(i) != Some(&b'$') {
                return None;
            }
            if bytes.get(open..open + 3) != Some(b"${{".as_slice()) {
                return None;
            }
            let inner_start = open + 3;
            let close = inner_start + bytes.get(inner_start..)?.iter().position(|b| *b == b'}')?;
            if bytes.get(close + 1) != Some(&b'}') {
                return None;
            }
            Some((escaped, inner_start, close))
        });
        match found {
            Some((escaped, inner_start, close)) => {
                let end = close + 2;
                out.push(make_reference(text, i, end, escaped, inner_start, close));
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

fn make_reference(
    text: &str,
    start: usize,
    end: usize,
    escaped: bool,
    inner_start: usize,
    inner_end: usize,
) -> Reference {
    let raw = text.get(start..end).unwrap_or("").to_string();
    let inner = js_trim(text.get(inner_start..inner_end).unwrap_or("")).to_string();
    let mut parts = inner.split('.').map(str::to_string);
    let name = parts.next().unwrap_or_default();
    let path: Vec<String> = parts.collect();
    let problem = if escaped {
        None
    } else if name.is_empty() || path.iter().any(String::is_empty) {
        Some(ReferenceProblem::Malformed)
    } else if !is_variable_name(&name) {
        Some(ReferenceProblem::InvalidName)
    } else {
        None
    };
    Reference {
        start,
        end,
        escaped,
        raw,
        inner,
        name,
        path,
        problem,
    }
}

/// What went wrong with a reference during [`substitute`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubstituteErrorKind {
    /// Empty name or empty path segment.
    Malformed,
    /// The name is not a valid variable name.
    InvalidName,
    /// The lookup found no value for the reference.
    Unresolved,
}

/// A reference that [`substitute`] could not replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubstituteError {
    /// The whole reference span as written (e.g. `${{order.id}}`).
    pub reference: String,
    /// Why it failed.
    pub kind: SubstituteErrorKind,
}

impl fmt::Display for SubstituteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            SubstituteErrorKind::Malformed => write!(
                f,
                "the reference {} is malformed (it needs a name and no empty path segment)",
                self.reference
            ),
            SubstituteErrorKind::InvalidName => write!(
                f,
                "the reference {} does not name a valid variable (a lowercase letter, then lowercase letters, digits or underscores)",
                self.reference
            ),
            SubstituteErrorKind::Unresolved => {
                write!(f, "the reference {} could not be resolved", self.reference)
            }
        }
    }
}

impl std::error::Error for SubstituteError {}

/// Replaces every non-escaped `${{name.path}}` in `text` with
/// `lookup(name, path)`; an escaped `$${{…}}` emits its span minus one `$`.
/// The first malformed, invalid-name or unresolved reference is an error.
pub fn substitute(
    text: &str,
    lookup: impl Fn(&str, &[String]) -> Option<String>,
) -> Result<String, SubstituteError> {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for r in scan_references(text) {
        out.push_str(text.get(last..r.start).unwrap_or(""));
        last = r.end;
        if r.escaped {
            out.push_str(r.raw.get(1..).unwrap_or(""));
            continue;
        }
        let kind = match r.problem {
            Some(ReferenceProblem::Malformed) => Some(SubstituteErrorKind::Malformed),
            Some(ReferenceProblem::InvalidName) => Some(SubstituteErrorKind::InvalidName),
            None => None,
        };
        if let Some(kind) = kind {
            return Err(SubstituteError {
                reference: r.raw,
                kind,
            });
        }
        match lookup(&r.name, &r.path) {
            Some(value) => out.push_str(&value),
            None => {
                return Err(SubstituteError {
                    reference: r.raw,
                    kind: SubstituteErrorKind::Unresolved,
                });
            }
        }
    }
    out.push_str(text.get(last..).unwrap_or(""));
    Ok(out)
}

fn is_canonical_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && (s == "0" || !s.starts_with('0'))
}

/// Steps from `root` through `segments`: objects by own key, arrays by a
/// canonical index (`0`, `12`; not `01`) or from the end (`-1`, `-2`; `-0`
/// and `-01` are ordinary keys, so they fail on an array). Scalars and
/// out-of-range indices resolve to `None`.
pub fn resolve_path<'a>(root: &'a Value, segments: &[String]) -> Option<&'a Value> {
    let mut current = root;
    for seg in segments {
        current = match current {
            Value::Object(map) => map.get(seg.as_str())?,
            Value::Array(items) => {
                if is_canonical_digits(seg) {
                    let i: usize = seg.parse().ok()?;
                    items.get(i)?
                } else if let Some(back) = seg.strip_prefix('-') {
                    if !is_canonical_digits(back) || back == "0" {
                        return None;
                    }
                    let k: usize = back.parse().ok()?;
                    items.get(items.len().checked_sub(k)?)?
                } else {
                    return None;
                }
            }
            _ => return None,
        };
    }
    Some(current)
}

/// The session id a resolved value names: a non-blank string (as is) or a
/// finite number (JS `String(n)`); anything else is `None`.
pub fn session_id_from_value(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !js_trim(s).is_empty() => Some(s.clone()),
        Value::Number(n) if n.as_f64().is_some_and(f64::is_finite) => Some(js_number_of(n)),
        _ => None,
    }
}

/// What every MCP tool name starts with: `mcp__<server>__<tool>` (Claude Code's form).
pub const MCP_PREFIX: &str = "mcp__";
/// Between an MCP server's name and its tool's.
pub const MCP_SEPARATOR: &str = "__";

/// The MCP server a name is about: `mcp__payments__refund` (a tool), `mcp__payments` (every
/// tool of the server, as a grant names them) and `mcp__payments__*` (a forbid pattern) are
/// all about `payments`. `None` for any other name.
pub fn mcp_server(name: &str) -> Option<&str> {
    let rest = name.strip_prefix(MCP_PREFIX)?;
    let server = rest.split(MCP_SEPARATOR).next().unwrap_or(rest);
    (!server.is_empty()).then_some(server)
}

/// Whether a tool entry named `entry` (of an allow or a forbid list) is about `tool`: the
/// same name; `*` (every tool: forbid lists only); an MCP server, `mcp__<server>`, for each
/// of its tools; an MCP pattern ending in `*`, `mcp__<server>__<prefix>*`, for the tools of
/// that server whose names start with the prefix (forbid lists only; `validate` refuses `*`
/// in a grant, as the original does).
pub fn entry_covers(entry: &str, tool: &str) -> bool {
    if entry == tool || entry == "*" {
        return true;
    }
    let Some(server) = mcp_server(entry) else {
        return false;
    };
    let Some(tool_rest) = tool
        .strip_prefix(MCP_PREFIX)
        .and_then(|r| r.strip_prefix(server))
        .and_then(|r| r.strip_prefix(MCP_SEPARATOR))
    else {
        return false;
    };
    let entry_rest = &entry[MCP_PREFIX.len() + server.len()..];
    match entry_rest.strip_prefix(MCP_SEPARATOR) {
        None => entry_rest.is_empty(),
        Some(pattern) => pattern
            .strip_suffix('*')
            .is_some_and(|prefix| !prefix.contains('*') && tool_rest.starts_with(prefix)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_entries_cover_their_servers_tools() {
        assert_eq!(mcp_server("mcp__payments__refund"), Some("payments"));
        assert_eq!(mcp_server("mcp__payments"), Some("payments"));
        assert_eq!(mcp_server("mcp__payments__*"), Some("payments"));
        assert_eq!(mcp_server("crm_lookup"), None);
        assert_eq!(mcp_server("mcp__"), None);
        for (entry, tool, covers) in [
            ("mcp__payments__refund", "mcp__payments__refund", true),
            ("mcp__payments", "mcp__payments__refund", true),
            ("mcp__payments", "mcp__payments", true),
            ("mcp__payments", "mcp__paymentsx__refund", false),
            ("mcp__payments", "mcp__pay__refund", false),
            ("mcp__payments__*", "mcp__payments__refund", true),
            ("mcp__payments__re*", "mcp__payments__refund", true),
            ("mcp__payments__re*", "mcp__payments__lookup", false),
            ("mcp__payments__*", "mcp__orders__lookup", false),
            ("mcp__payments__refund", "mcp__payments__refund_all", false),
            ("*", "anything", true),
            ("crm", "crm_lookup", false),
            ("mcp__payments", "crm", false),
        ] {
            assert_eq!(entry_covers(entry, tool), covers, "{entry} / {tool}");
        }
    }
    use serde_json::json;

    #[test]
    fn slugs() {
        for ok in ["a", "order-lookup", "a1-b2-c3", "0", "x-9"] {
            assert!(is_slug(ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a b", "é", "a.b"] {
            assert!(!is_slug(bad), "{bad}");
        }
    }

    #[test]
    fn variable_names() {
        for ok in ["a", "order_id", "x9_", "trigger"] {
            assert!(is_variable_name(ok), "{ok}");
        }
        for bad in ["", "9a", "_a", "Name", "a-b", "a.b", "a b"] {
            assert!(!is_variable_name(bad), "{bad}");
        }
    }

    #[test]
    fn mount_names() {
        assert_eq!(mount_name_problem("catalogs/eu"), None);
        assert_eq!(mount_name_problem("AGENTS.md"), None);
        assert_eq!(mount_name_problem(""), Some("it is empty"));
        assert_eq!(
            mount_name_problem(" a"),
            Some("it has leading or trailing white space")
        );
        assert_eq!(
            mount_name_problem("a*"),
            Some("it contains a glob character (* ? [ ] { })")
        );
        assert_eq!(
            mount_name_problem("{a}"),
            Some("it contains a glob character (* ? [ ] { })")
        );
        assert_eq!(mount_name_problem("/a"), Some("it starts or ends with '/'"));
        assert_eq!(mount_name_problem("a/"), Some("it starts or ends with '/'"));
        assert_eq!(mount_name_problem("a//b"), Some("it has an empty segment"));
        assert_eq!(
            mount_name_problem("a/./b"),
            Some("it has a '.' or '..' segment")
        );
        assert_eq!(
            mount_name_problem(".."),
            Some("it has a '.' or '..' segment")
        );
        assert_eq!(mount_name_problem("a..b"), None);
    }

    #[test]
    fn hook_paths() {
        for ok in [
            "hooks/a.js",
            "hooks/check.mjs",
            "hooks/sub/dir/x.js",
            "hooks/.x.js",
            "hooks/a.b.js",
        ] {
            assert!(is_hook_script_path(ok), "{ok}");
        }
        for bad in [
            "hooks/.js",
            "hooks//a.js",
            "hooks/a.ts",
            "skills/x.js",
            "hooks/",
            "hooks/a.jsx",
            "hooks/../a.js",
            "hooks/a/../b.js",
            "hooks/a\nb.js",
            "./hooks/a.js",
        ] {
            assert!(!is_hook_script_path(bad), "{bad:?}");
        }
        // `[^/]` matches a newline; only the `.*` part excludes it.
        assert!(is_hook_script_path("hooks/\n.js"));
    }

    #[test]
    fn session_paths() {
        assert_eq!(session_path_problem("conversation_id"), None);
        assert_eq!(session_path_problem("  trigger.payload.0.id "), None);
        assert_eq!(session_path_problem("   ").as_deref(), Some("it is empty."));
        assert_eq!(
            session_path_problem("${{conversation_id}}").as_deref(),
            Some("write the bare path, not a '${{…}}' reference (e.g. 'conversation_id').")
        );
        let first = session_path_problem("Conversation.id").unwrap_or_default();
        assert!(first.starts_with("its first segment must be a variable name"));
        assert_eq!(
            first,
            "its first segment must be a variable name (a lowercase letter, then lowercase letters, digits or underscores)."
        );
        assert!(
            session_path_problem(".a")
                .unwrap_or_default()
                .contains("first segment must be a variable name")
        );
        let empty = session_path_problem("a..b").unwrap_or_default();
        assert!(empty.starts_with("it has an empty segment"));
        assert_eq!(
            empty,
            "it has an empty segment (look for a doubled or trailing '.')."
        );
        assert!(
            session_path_problem("a.")
                .unwrap_or_default()
                .contains("empty segment")
        );
    }

    #[test]
    fn scanner_basic() {
        let refs = scan_references("x ${{ a.b.0 }} y $${{c}} ${{}} ${{Name}} ${{a..b}}");
        assert_eq!(refs.len(), 5);
        assert_eq!(refs[0].raw, "${{ a.b.0 }}");
        assert_eq!((refs[0].start, refs[0].end), (2, 14));
        assert_eq!(refs[0].inner, "a.b.0");
        assert_eq!(refs[0].name, "a");
        assert_eq!(refs[0].path, vec!["b".to_string(), "0".to_string()]);
        assert_eq!(refs[0].problem, None);
        assert!(!refs[0].escaped);
        assert!(refs[1].escaped);
        assert_eq!(refs[1].raw, "$${{c}}");
        assert_eq!(refs[1].problem, None);
        assert_eq!(refs[2].problem, Some(ReferenceProblem::Malformed));
        assert_eq!(refs[3].problem, Some(ReferenceProblem::InvalidName));
        assert_eq!(refs[4].problem, Some(ReferenceProblem::Malformed));
    }

    #[test]
    fn scanner_edges() {
        // No closing `}}` directly after the inner text: no match.
        assert!(scan_references("${{a} }}").is_empty());
        assert!(scan_references("${{a").is_empty());
        assert!(scan_references("${a}}").is_empty());
        // Three dollars: the match starts at the second one (escaped).
        let r = scan_references("$$${{a}}");
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].start, r[0].escaped), (1, true));
        // `{` inside is allowed by `[^}]*`.
        let r = scan_references("${{a{b}}");
        assert_eq!(r[0].inner, "a{b");
        assert_eq!(r[0].problem, Some(ReferenceProblem::InvalidName));
        // Non-overlapping, adjacent.
        let r = scan_references("${{a}}${{b}}}");
        assert_eq!(
            r.iter().map(|x| x.name.as_str()).collect::<Vec<_>>(),
            vec!["a", "b"]
        );
        // Escaped malformed is literal, not a problem.
        assert_eq!(scan_references("$${{}}")[0].problem, None);
        // Non-ASCII offsets are byte offsets.
        let r = scan_references("é${{x}}");
        assert_eq!((r[0].start, r[0].end), (2, 8));
    }

    #[test]
    fn substitution() {
        let lookup = |name: &str, path: &[String]| -> Option<String> {
            match (name, path) {
                ("a", []) => Some("A".to_string()),
                ("o", [p]) if p == "id" => Some("42".to_string()),
                _ => None,
            }
        };
        assert_eq!(
            substitute("x=${{a}}, id=${{ o.id }}!", lookup),
            Ok("x=A, id=42!".to_string())
        );
        assert_eq!(
            substitute("lit $${{a}} and $${{ }}", lookup),
            Ok("lit ${{a}} and ${{ }}".to_string())
        );
        assert_eq!(substitute("no refs", lookup), Ok("no refs".to_string()));
        let err = substitute("v ${{missing}}", lookup).unwrap_err();
        assert_eq!(err.reference, "${{missing}}");
        assert_eq!(err.kind, SubstituteErrorKind::Unresolved);
        assert_eq!(
            err.to_string(),
            "the reference ${{missing}} could not be resolved"
        );
        let err = substitute("${{a..b}}", lookup).unwrap_err();
        assert_eq!(err.kind, SubstituteErrorKind::Malformed);
        assert_eq!(
            err.to_string(),
            "the reference ${{a..b}} is malformed (it needs a name and no empty path segment)"
        );
        let err = substitute("${{Name}}", lookup).unwrap_err();
        assert_eq!(err.kind, SubstituteErrorKind::InvalidName);
    }

    fn segs(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn path_resolution() {
        let v = json!({"a": [10, 20, {"b": "x"}], "-0": 1, "01": 2});
        assert_eq!(resolve_path(&v, &[]), Some(&v));
        assert_eq!(resolve_path(&v, &segs(&["a", "0"])), Some(&json!(10)));
        assert_eq!(
            resolve_path(&v, &segs(&["a", "-1", "b"])),
            Some(&json!("x"))
        );
        assert_eq!(resolve_path(&v, &segs(&["a", "-3"])), Some(&json!(10)));
        assert_eq!(resolve_path(&v, &segs(&["a", "-4"])), None);
        assert_eq!(resolve_path(&v, &segs(&["a", "3"])), None);
        assert_eq!(resolve_path(&v, &segs(&["a", "01"])), None);
        assert_eq!(resolve_path(&v, &segs(&["a", "-0"])), None);
        assert_eq!(resolve_path(&v, &segs(&["a", "-01"])), None);
        assert_eq!(resolve_path(&v, &segs(&["a", "length"])), None);
        assert_eq!(resolve_path(&v, &segs(&["-0"])), Some(&json!(1)));
        assert_eq!(resolve_path(&v, &segs(&["01"])), Some(&json!(2)));
        assert_eq!(resolve_path(&v, &segs(&["a", "0", "x"])), None);
        assert_eq!(resolve_path(&v, &segs(&["constructor"])), None);
    }

    #[test]
    fn session_ids() {
        assert_eq!(
            session_id_from_value(&json!("c-1")),
            Some("c-1".to_string())
        );
        assert_eq!(
            session_id_from_value(&json!(" c ")),
            Some(" c ".to_string())
        );
        assert_eq!(session_id_from_value(&json!("  ")), None);
        assert_eq!(session_id_from_value(&json!(42)), Some("42".to_string()));
        assert_eq!(session_id_from_value(&json!(2.5)), Some("2.5".to_string()));
        assert_eq!(session_id_from_value(&json!(3.0)), Some("3".to_string()));
        assert_eq!(session_id_from_value(&json!(true)), None);
        assert_eq!(session_id_from_value(&json!(null)), None);
        assert_eq!(session_id_from_value(&json!({})), None);
    }
}
