//! What a call answers JS as data: `{ ok: true, value }`, or `{ ok: false, code, message,
//! fields? }` (`NativeResult`), which `agent.js` raises as the error class named `code`; and
//! how a value JS gave is named in those messages.

use archmax_machine::RunError;
use archmax_spec::runtime_contract::{SUPPORTED, contract_id};
use serde_json::{Value, json};

/// An error as data, with no fields: `{ ok: false, code, message }` (`code` names its class).
pub(crate) fn plain_error(code: &str, message: impl Into<String>) -> Value {
    json!({ "ok": false, "code": code, "message": message.into() })
}

/// What a JS value is, in an error's text (`got an array`).
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null/undefined",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The original's constructor fields of an error class, where the error carries them.
fn error_fields(e: &RunError) -> Value {
    let targets = |valid: &str| -> Vec<String> {
        valid
            .split(", ")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    match e {
        RunError::WorkflowLoad(l) => json!({
            "workflow": l.workflow,
            "workflowPath": l.path,
            "problem": l.problem,
            "diagnostics": serde_json::to_value(&l.diagnostics).unwrap_or(Value::Null),
        }),
        RunError::WorkflowDisabled(workflow) => json!({ "workflow": workflow }),
        RunError::UnknownTrigger { id, available } => {
            json!({ "triggerId": id, "available": available })
        }
        RunError::ReservedToolName { names, reservation } => {
            json!({ "names": names, "reservation": reservation.as_str() })
        }
        RunError::MountCollision { key, .. } => json!({ "key": key }),
        RunError::SessionId(e) => json!({ "sessionId": e.raw() }),
        RunError::Busy { id, status } => json!({ "sessionId": id, "status": status }),
        RunError::StoreCapability {
            kind, capability, ..
        } => json!({ "storeKind": kind, "capability": capability }),
        RunError::UnsupportedRuntimeContract(contract) => json!({
            "requested": contract_id(contract),
            "supported": SUPPORTED,
        }),
        RunError::Parked(id)
        | RunError::SessionNotParked(id)
        | RunError::EmptyMessage(id)
        | RunError::SessionNotAwaitingInput(id)
        | RunError::MissingDeliveryTrigger(id) => json!({ "sessionId": id }),
        RunError::InvalidDecisionTarget { id, target, valid } => {
            json!({ "sessionId": id, "target": target, "validTargets": targets(valid) })
        }
        RunError::MissingDecisionTarget { id, valid } => {
            json!({ "sessionId": id, "validTargets": targets(valid) })
        }
        RunError::InvalidVariableName { name, origin } => {
            json!({ "variable": name, "source": origin })
        }
        RunError::UnknownSessionTrigger(trigger) => json!({ "trigger": trigger }),
        _ => json!({}),
    }
}

/// A harness error as data: `agent.js` raises it as the class named `code`.
pub(crate) fn error_dto(e: &RunError) -> Value {
    json!({ "ok": false, "code": e.code(), "message": e.to_string(), "fields": error_fields(e) })
}
