//! Argument checks shared by several commands (cli digest §10).

use serde_json::{Map, Value};

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

/// The usage message for a bad session id, if it is one: the session-id rule of the
/// session store (`archmax_machine::store::IdRules`), in the CLI's words.
pub fn check_session_id(id: &str) -> Result<(), String> {
    archmax_machine::store::SessionId::parse(id)
        .map(drop)
        .map_err(|e| e.cli_message())
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
