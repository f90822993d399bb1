//! Runtime contract (validation digest §3.3): which engine and version a
//! workflow declares, the surfaces it selects, and whether it is supported.

use serde::Serialize;
use serde_json::Value;
use ts_rs::TS;

use crate::jsfmt::js_number_of;
use crate::model::RuntimeDecl;

/// The engine id of this harness.
pub const ENGINE: &str = "archmax-harness";

/// The supported contracts, `<engine>@<version>`, in message order.
pub const SUPPORTED: [&str; 2] = ["archmax-harness@1", "archmax-harness@2"];

/// Whether the contract was declared in the spec or defaulted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum ContractSource {
    /// The spec's `runtime` mapping declared `engine` and/or `version`.
    Declared,
    /// `runtime` was omitted or declared neither key.
    Defaulted,
}

/// A resolved runtime contract with its derived surfaces (the original's
/// `ResolvedRuntimeContract`, `agent.runtimeContract`).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeContract {
    /// The engine id (declared, or [`ENGINE`]).
    pub engine: String,
    /// The version as a string (declared numbers rendered like JS `String(n)`).
    pub version: String,
    /// Declared or defaulted.
    pub source: ContractSource,
    /// The sandbox surface version (2 for version `2`, else 1).
    pub sandbox: u32,
    /// The test-case format version (always `"1"`).
    pub test_format: String,
}

fn version_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(js_number_of(n)),
        _ => None,
    }
}

/// Resolves the spec's `runtime` mapping (`{engine?, version?}`) as parsed
/// JSON. Never fails: omitted, non-mapping or key-less input is the defaulted
/// `archmax-harness@1`; with either key present the contract is declared.
/// `null` and values of the wrong type count as absent. See [`resolve`].
pub fn resolve_contract(runtime: Option<&Value>) -> RuntimeContract {
    let map = runtime.and_then(Value::as_object);
    let engine = map
        .and_then(|m| m.get("engine"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let version = map.and_then(|m| m.get("version")).and_then(version_text);
    resolve(engine, version)
}

/// Resolves a typed spec's `runtime:` declaration, as [`resolve_contract`] does
/// the parsed mapping.
pub fn resolve_declared(runtime: Option<&RuntimeDecl>) -> RuntimeContract {
    resolve(
        runtime.and_then(|r| r.engine.clone()),
        runtime
            .and_then(|r| r.version.as_ref())
            .and_then(version_text),
    )
}

/// The contract of a declared `engine` and `version` (either may be absent): with
/// neither it is the defaulted `archmax-harness@1`; otherwise declared, a missing
/// engine meaning [`ENGINE`] and a missing version `"1"`. An unknown version still
/// resolves, with version 1's surfaces.
pub fn resolve(engine: Option<String>, version: Option<String>) -> RuntimeContract {
    let source = if engine.is_none() && version.is_none() {
        ContractSource::Defaulted
    } else {
        ContractSource::Declared
    };
    let engine = engine.unwrap_or_else(|| ENGINE.to_string());
    let version = version.unwrap_or_else(|| "1".to_string());
    let sandbox = if version == "2" { 2 } else { 1 };
    RuntimeContract {
        engine,
        version,
        source,
        sandbox,
        test_format: "1".to_string(),
    }
}

/// The `<engine>@<version>` id of a contract.
pub fn contract_id(c: &RuntimeContract) -> String {
    format!("{}@{}", c.engine, c.version)
}

/// True when the contract is one of [`SUPPORTED`].
pub fn is_supported(c: &RuntimeContract) -> bool {
    SUPPORTED.contains(&contract_id(c).as_str())
}

/// The exact unsupported-contract message:
/// `Unsupported runtime contract '<engine>@<version>'. Supported: archmax-harness@1, archmax-harness@2.`
pub fn unsupported_message(c: &RuntimeContract) -> String {
    format!(
        "Unsupported runtime contract '{}'. Supported: {}.",
        contract_id(c),
        SUPPORTED.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaulted() {
        for input in [
            None,
            Some(json!({})),
            Some(json!({"other": 1})),
            Some(json!(null)),
        ] {
            let c = resolve_contract(input.as_ref());
            assert_eq!(
                c,
                RuntimeContract {
                    engine: "archmax-harness".into(),
                    version: "1".into(),
                    source: ContractSource::Defaulted,
                    sandbox: 1,
                    test_format: "1".into(),
                }
            );
            assert!(is_supported(&c));
        }
    }

    #[test]
    fn declared() {
        let c = resolve_contract(Some(&json!({"version": 2})));
        assert_eq!(
            (c.engine.as_str(), c.version.as_str()),
            ("archmax-harness", "2")
        );
        assert_eq!(c.source, ContractSource::Declared);
        assert_eq!((c.sandbox, c.test_format.as_str()), (2, "1"));
        assert!(is_supported(&c));

        let c = resolve_contract(Some(&json!({"version": 2.0})));
        assert_eq!(c.version, "2");
        assert_eq!(c.sandbox, 2);

        let c = resolve_contract(Some(&json!({"version": "2"})));
        assert_eq!(c.sandbox, 2);

        let c = resolve_contract(Some(&json!({"engine": "archmax-harness"})));
        assert_eq!(c.version, "1");
        assert_eq!(c.source, ContractSource::Declared);
        assert!(is_supported(&c));
    }

    #[test]
    fn unsupported() {
        let c = resolve_contract(Some(&json!({"version": 2.5})));
        assert_eq!(c.version, "2.5");
        assert_eq!(c.sandbox, 1);
        assert!(!is_supported(&c));
        assert_eq!(
            unsupported_message(&c),
            "Unsupported runtime contract 'archmax-harness@2.5'. Supported: archmax-harness@1, archmax-harness@2."
        );
        let c = resolve_contract(Some(
            &json!({"engine": "deep-agent-harness", "version": "1"}),
        ));
        assert!(!is_supported(&c));
        assert_eq!(
            unsupported_message(&c),
            "Unsupported runtime contract 'deep-agent-harness@1'. Supported: archmax-harness@1, archmax-harness@2."
        );
        let c = resolve_contract(Some(&json!({"version": "3"})));
        assert_eq!((c.sandbox, c.test_format.as_str()), (1, "1"));
        assert!(!is_supported(&c));
    }

    #[test]
    fn typed_declaration_resolves_like_the_mapping() {
        let decl = |engine: Option<&str>, version: Option<Value>| RuntimeDecl {
            engine: engine.map(str::to_string),
            version,
        };
        assert_eq!(resolve_declared(None), resolve_contract(None));
        assert_eq!(
            resolve_declared(Some(&decl(None, None))),
            resolve_contract(Some(&json!({})))
        );
        let v2 = resolve_declared(Some(&decl(None, Some(json!(2)))));
        assert_eq!(v2, resolve_contract(Some(&json!({"version": 2}))));
        assert_eq!(
            (v2.source, v2.sandbox, v2.version.as_str()),
            (ContractSource::Declared, 2, "2")
        );
        let legacy = resolve_declared(Some(&decl(Some("deep-agent-harness"), None)));
        assert_eq!(contract_id(&legacy), "deep-agent-harness@1");
        assert!(!is_supported(&legacy));
        let v99 = resolve_declared(Some(&decl(None, Some(json!("99")))));
        assert!(!is_supported(&v99));
        assert_eq!((v99.sandbox, v99.test_format.as_str()), (1, "1"));
    }

    #[test]
    fn serializes_camel_case() {
        let c = resolve_contract(None);
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"engine":"archmax-harness","version":"1","source":"defaulted","sandbox":1,"testFormat":"1"}"#
        );
    }
}
