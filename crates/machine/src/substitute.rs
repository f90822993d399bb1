//! `${{…}}` in a tool call's arguments: every reference in every string leaf is
//! replaced verbatim by the variable's value before the kernel sees the call;
//! `$${{…}}` stands for the literal text `${{…}}`.

use archmax_kernel::guard::{GuardFailure, reference_text};
use archmax_spec::grammar::scan_references;
use serde_json::{Map, Value};

/// The refusal a model reads when a reference in its arguments does not resolve.
pub fn unresolved_message(f: &GuardFailure) -> String {
    let literal = f.reference.replacen("${{", "$${{", 1);
    format!(
        "Call refused before it ran: the argument reference {} could not be resolved — {}. Nothing was called and no partial value was delivered. Check what is set with `archmax_get_variables`, then retry with a reference that resolves — or, if you meant the literal text, write it as {literal}.",
        f.reference,
        f.detail()
    )
}

/// The arguments with every reference substituted (a deep walk of string leaves).
pub fn substitute_args(
    args: &Value,
    variables: &Map<String, Value>,
) -> Result<Value, GuardFailure> {
    Ok(match args {
        Value::String(s) => Value::String(substitute_text(s, variables)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| substitute_args(v, variables))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => {
            let mut out = Map::with_capacity(m.len());
            for (k, v) in m {
                out.insert(k.clone(), substitute_args(v, variables)?);
            }
            Value::Object(out)
        }
        other => other.clone(),
    })
}

fn substitute_text(text: &str, variables: &Map<String, Value>) -> Result<String, GuardFailure> {
    let refs = scan_references(text);
    if refs.is_empty() {
        return Ok(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for r in refs {
        out.push_str(text.get(last..r.start).unwrap_or_default());
        last = r.end;
        if r.escaped {
            out.push_str(r.raw.get(1..).unwrap_or_default());
        } else {
            out.push_str(&reference_text(&r, Some(variables))?.into_text());
        }
    }
    out.push_str(text.get(last..).unwrap_or_default());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> Map<String, Value> {
        match json!({ "order_id": "KK-1", "n": 2.5, "ok": true, "o": { "list": ["a", "b"] } }) {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn references_are_replaced_in_every_string_leaf() {
        let args = json!({ "file_path": "out/${{order_id}}.md", "tags": ["${{o.list.-1}}", "$${{order_id}}"], "n": 3, "deep": { "x": "${{ n }}/${{ok}}" } });
        let got = substitute_args(&args, &vars()).expect("resolves");
        assert_eq!(
            got,
            json!({ "file_path": "out/KK-1.md", "tags": ["b", "${{order_id}}"], "n": 3, "deep": { "x": "2.5/true" } })
        );
    }

    #[test]
    fn an_unresolved_reference_is_refused_with_the_literal_hint() {
        let f = substitute_args(&json!({ "to": "${{missing}}" }), &vars()).expect_err("unset");
        assert_eq!(
            unresolved_message(&f),
            "Call refused before it ran: the argument reference ${{missing}} could not be resolved — variable 'missing' is not set. Nothing was called and no partial value was delivered. Check what is set with `archmax_get_variables`, then retry with a reference that resolves — or, if you meant the literal text, write it as $${{missing}}."
        );
        let f = substitute_args(&json!("${{o}}"), &vars()).expect_err("object");
        assert!(f.detail().contains("non-scalar"), "{}", f.detail());
    }
}
