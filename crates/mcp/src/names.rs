//! Tool names as a model sees them: `mcp__<server>__<tool>`, the form Claude Code
//! uses in its permissions, held to OpenAI's function-name rule
//! `^[a-zA-Z0-9_-]{1,64}$`.
//!
//! An MCP tool name may hold characters that rule forbids (`.`, `/`, spaces, any
//! non-ASCII letter); each of them becomes `_`. The mapping is not reversible as
//! text (`a.b` and `a_b` both become `a_b`), so the pool keeps a table from the
//! full name back to the server's own name ([`crate::McpPool::parse_tool_name`]).
//! A tool whose name needed no mapping keeps it; a mapped name that meets another
//! tool's name, or a full name over 64 characters, is not offered (and reported
//! once, [`crate::McpEvent::ToolSkipped`]).

/// What every MCP tool name starts with.
pub const PREFIX: &str = "mcp__";
/// Between the server and the tool.
pub const SEPARATOR: &str = "__";
/// OpenAI's limit on a function name.
pub const MAX_TOOL_NAME: usize = 64;
/// Characters a full name keeps for the tool, whatever the server's name.
pub const MIN_TOOL_ROOM: usize = 32;
/// The longest server name: `mcp__` + server + `__` + 32 characters fit in 64.
pub const MAX_SERVER_NAME: usize = MAX_TOOL_NAME - PREFIX.len() - SEPARATOR.len() - MIN_TOOL_ROOM;

/// True for a character OpenAI allows in a function name.
pub fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Why a server name cannot be used, or `None` when it can. The rules:
/// `[A-Za-z0-9_-]+`, no `__` (it separates server and tool), no trailing `_` (so
/// the first `__` after `mcp__` is always the separator), at most
/// [`MAX_SERVER_NAME`] characters.
pub fn server_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("a server name must not be empty".to_string());
    }
    if let Some(c) = name.chars().find(|c| !is_name_char(*c)) {
        return Some(format!(
            "server name '{name}' holds '{c}'; a server name may hold only letters, digits, '_' and '-'"
        ));
    }
    if name.contains(SEPARATOR) {
        return Some(format!(
            "server name '{name}' must not contain '__': it separates the server from the tool in mcp__<server>__<tool>"
        ));
    }
    if name.ends_with('_') {
        return Some(format!(
            "server name '{name}' must not end with '_': the tool names mcp__<server>__<tool> could not be split"
        ));
    }
    let n = name.chars().count();
    if n > MAX_SERVER_NAME {
        return Some(format!(
            "server name '{name}' has {n} characters; at most {MAX_SERVER_NAME}, so that mcp__<server>__<tool> keeps {MIN_TOOL_ROOM} of its {MAX_TOOL_NAME} characters for the tool"
        ));
    }
    None
}

/// The tool part of a full name: every character OpenAI forbids becomes `_`.
pub fn map_tool(tool: &str) -> String {
    tool.chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect()
}

/// `mcp__<server>__<tool>` with the tool mapped ([`map_tool`]); `None` when the
/// tool name is empty or the full name would pass 64 characters.
pub fn tool_name(server: &str, tool: &str) -> Option<String> {
    if tool.is_empty() {
        return None;
    }
    let name = format!("{PREFIX}{server}{SEPARATOR}{}", map_tool(tool));
    (name.len() <= MAX_TOOL_NAME).then_some(name)
}

/// Splits a full name into the server and the mapped tool, as text: the server is
/// what lies between `mcp__` and the next `__` (server names hold no `__` and end
/// in no `_`, so that is exact). The mapped tool may differ from the server's own
/// name; [`crate::McpPool::parse_tool_name`] gives that one.
pub fn split_tool_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix(PREFIX)?;
    let at = rest.find(SEPARATOR)?;
    let (server, tool) = (&rest[..at], &rest[at + SEPARATOR.len()..]);
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_forbidden_characters_and_bounds_the_length() {
        assert_eq!(
            tool_name("everything", "get-sum").as_deref(),
            Some("mcp__everything__get-sum")
        );
        assert_eq!(
            tool_name("fs", "files/read.text").as_deref(),
            Some("mcp__fs__files_read_text")
        );
        assert_eq!(tool_name("fs", "é").as_deref(), Some("mcp__fs___"));
        assert_eq!(tool_name("fs", ""), None);
        let long = "x".repeat(MAX_TOOL_NAME - 9);
        assert_eq!(tool_name("fs", &long).map(|n| n.len()), Some(64));
        assert_eq!(tool_name("fs", &format!("{long}x")), None);
        assert_eq!(MAX_SERVER_NAME, 25);
    }

    #[test]
    fn splits_at_the_first_separator() {
        assert_eq!(split_tool_name("mcp__fs__read"), Some(("fs", "read")));
        assert_eq!(split_tool_name("mcp__a-b__x__y"), Some(("a-b", "x__y")));
        assert_eq!(split_tool_name("mcp___x__y"), Some(("_x", "y")));
        assert_eq!(split_tool_name("mcp__fs___y"), Some(("fs", "_y")));
        assert_eq!(split_tool_name("mcp__fs"), None);
        assert_eq!(split_tool_name("read_file"), None);
    }

    #[test]
    fn server_names() {
        assert_eq!(server_name_problem("github"), None);
        assert_eq!(server_name_problem("_x-1"), None);
        assert!(server_name_problem("a.b").is_some_and(|m| m.contains("'.'")));
        assert!(server_name_problem("a__b").is_some_and(|m| m.contains("'__'")));
        assert!(server_name_problem("ab_").is_some_and(|m| m.contains("end with")));
        assert!(server_name_problem(&"s".repeat(26)).is_some_and(|m| m.contains("26 characters")));
        assert_eq!(server_name_problem(&"s".repeat(25)), None);
    }
}
