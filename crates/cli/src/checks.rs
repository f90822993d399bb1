//! Argument checks shared by several commands (cli digest §10).

use serde_json::{Map, Value};

/// First segments a session id may not start with at the CLI stage.
pub const RESERVED_SESSION_SEGMENTS: [&str; 6] = [
    "checkpoints",
    "artifacts",
    "_specs",
    "large_tool_results",
    "conversation_history",
    "scratchpad",
];

/// Parses `--variables`: a JSON object, or a usage message.
pub fn parse_variables(raw: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(raw) {
        Err(_) => Err("--variables is not valid JSON".to_string()),
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(
            "--variables must encode a JSON object (e.g. '{\"from_email\":\"a@b.com\"}')"
                .to_string(),
        ),
    }
}

/// Why a session id is unusable, if it is.
pub fn session_id_problem(id: &str) -> Option<String> {
    let trimmed = id.trim_start_matches('/');
    if trimmed.is_empty() {
        return Some("it must not be empty".to_string());
    }
    let segments: Vec<&str> = trimmed.split(['/', '\\']).collect();
    let drive = trimmed.len() >= 2
        && trimmed.as_bytes()[1] == b':'
        && trimmed.as_bytes()[0].is_ascii_alphabetic();
    if drive || trimmed.starts_with('\\') || segments.contains(&"..") {
        return Some(
            "it must stay within the session zone (no absolute paths or '..' traversal)"
                .to_string(),
        );
    }
    let first = segments.first().copied().unwrap_or_default();
    RESERVED_SESSION_SEGMENTS.contains(&first).then(|| {
        format!("'{first}' is reserved at the workspace root (a session area or an authored mount)")
    })
}

/// The usage message for a bad session id, if it is one.
pub fn check_session_id(id: &str) -> Result<(), String> {
    match session_id_problem(id) {
        Some(reason) => Err(format!(
            "invalid session id '{id}' - {reason}. Use one from 'archmax sessions'."
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_must_be_a_json_object() {
        assert!(parse_variables("{\"a\":1}").is_ok());
        assert_eq!(
            parse_variables("{oops").err().as_deref(),
            Some("--variables is not valid JSON")
        );
        for raw in ["\"s\"", "1", "null", "[]"] {
            assert_eq!(
                parse_variables(raw).err().as_deref(),
                Some("--variables must encode a JSON object (e.g. '{\"from_email\":\"a@b.com\"}')")
            );
        }
    }

    #[test]
    fn session_ids() {
        assert!(check_session_id("session-1").is_ok());
        assert!(check_session_id("/tenant/a").is_ok());
        assert_eq!(
            check_session_id("//").err().as_deref(),
            Some(
                "invalid session id '//' - it must not be empty. Use one from 'archmax sessions'."
            )
        );
        assert!(
            check_session_id("a/../b")
                .err()
                .is_some_and(|e| e.contains("'..' traversal"))
        );
        assert!(
            check_session_id("a\\..")
                .err()
                .is_some_and(|e| e.contains("'..' traversal"))
        );
        assert_eq!(
            check_session_id("scratchpad/x").err().as_deref(),
            Some(
                "invalid session id 'scratchpad/x' - 'scratchpad' is reserved at the workspace root \
                 (a session area or an authored mount). Use one from 'archmax sessions'."
            )
        );
    }
}
