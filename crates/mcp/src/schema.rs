//! The arguments of a call, checked against the tool's `inputSchema` before
//! anything is sent, so a model gets a message it can correct.

use jsonschema::Validator;
use serde_json::Value;

/// At most this many mismatches are listed.
const MAX_LISTED: usize = 5;
/// A mismatch's text is cut after this many characters (a huge argument value
/// would otherwise be quoted whole).
const MAX_ITEM_CHARS: usize = 300;

/// A compiled `inputSchema`; `None` inside when the server's schema does not
/// compile (then the server alone judges the arguments).
pub(crate) struct ArgumentCheck(Option<Validator>);

impl ArgumentCheck {
    pub(crate) fn compile(schema: &Value) -> ArgumentCheck {
        match jsonschema::validator_for(schema) {
            Ok(v) => ArgumentCheck(Some(v)),
            Err(e) => {
                tracing::debug!(error = %e, "an MCP tool's inputSchema does not compile; its arguments go unchecked");
                ArgumentCheck(None)
            }
        }
    }

    /// `Err` with the model-facing message when `args` do not match.
    pub(crate) fn check(&self, args: &Value) -> Result<(), String> {
        let Some(validator) = &self.0 else {
            return Ok(());
        };
        let errors: Vec<String> = validator
            .iter_errors(args)
            .map(|e| {
                let path = e.instance_path().to_string();
                let at = if path.is_empty() {
                    "at the top level".to_string()
                } else {
                    format!("at {path}")
                };
                let mut item = format!("{at}: {e}");
                if item.chars().count() > MAX_ITEM_CHARS {
                    item = item.chars().take(MAX_ITEM_CHARS).collect::<String>() + "…";
                }
                item
            })
            .collect();
        if errors.is_empty() {
            return Ok(());
        }
        let mut message = errors
            .iter()
            .take(MAX_LISTED)
            .cloned()
            .collect::<Vec<_>>()
            .join("; ");
        if errors.len() > MAX_LISTED {
            message.push_str(&format!("; and {} more", errors.len() - MAX_LISTED));
        }
        Err(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_path_and_the_problem() {
        let check = ArgumentCheck::compile(&json!({
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"]
        }));
        assert_eq!(check.check(&json!({"a": 1, "b": 2})), Ok(()));
        assert_eq!(
            check.check(&json!({"a": "one"})),
            Err(r#"at the top level: "b" is a required property; at /a: "one" is not of type "number""#.to_string())
        );
    }

    #[test]
    fn a_schema_that_does_not_compile_checks_nothing() {
        let check = ArgumentCheck::compile(&json!({"type": "no-such-type"}));
        assert_eq!(check.check(&json!({"anything": 1})), Ok(()));
    }
}
