//! One governed-call pipeline for every origin: the agent's own calls (`turn/dispatch/`), a
//! hook's `tools.*` and `archmax_eval`/`archmax_run` scripts (`ptc.rs`).
//!
//! ```text
//! args ──scope──▶ one canonical path per declared path argument
//!                  ├─▶ kernel decides on exactly these arguments
//!                  ├─▶ the file router resolves exactly these (it rewrites nothing)
//!                  └─▶ a host tool gets exactly these, after the same escape check,
//!                      raced against the state's time budget and the cancel switch
//! ```
//!
//! Scoping and the kernel's decision are `scope.rs` ([`decide`](crate::scope::decide));
//! here a call's arguments are read as a JSON object, and an allowed host tool call is run.

use std::sync::Arc;
use std::time::Duration;

use archmax_kernel::Policy;
use serde_json::Value;

use crate::cancel::{Cancel, Raced, race};
use crate::tools::{HostTool, ToolContext};

/// A model's tool-call arguments as a JSON object: empty text (or `null`) is no
/// arguments; anything else that is not a JSON object is refused before the call is
/// decided or run, saying so (not as a missing argument).
pub(crate) fn arguments(tool: &str, raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    let again = format!("Call '{tool}' again with its arguments as one JSON object.");
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Null) => Ok(Value::Object(serde_json::Map::new())),
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => {
            let kind = match other {
                Value::Array(_) => "a JSON array",
                Value::String(_) => "a JSON string",
                Value::Number(_) => "a JSON number",
                _ => "a JSON boolean",
            };
            Err(format!(
                "Error: the arguments of '{tool}' are {kind}, not a JSON object, so nothing was run. {again}"
            ))
        }
        Err(e) => Err(format!(
            "Error: the arguments of '{tool}' are not valid JSON ({e}), so nothing was run. {again}"
        )),
    }
}

/// How a host tool call ended.
pub(crate) enum HostRun {
    /// The tool answered (its text, or its error).
    Done(Result<String, String>),
    /// A declared path leaves the workspace: refused before the tool saw it (the text).
    Escapes(String),
    /// The state's time budget ran out first.
    TimedOut,
    /// The turn was cancelled first.
    Cancelled,
}

/// The first declared path argument of host tool `name` in `args` that resolves outside
/// the workspace root, as written.
pub(crate) fn escaping_path(policy: &Policy, name: &str, args: &Value) -> Option<String> {
    let decl = policy.tool_paths().of(name)?;
    let paths = archmax_kernel::paths::call_paths(decl, args).ok()?;
    paths
        .into_iter()
        .find(|p| p.canonical.escapes)
        .map(|p| p.raw)
}

/// Runs an allowed host tool call, the same way for every origin: the kernel allows a
/// declared path that leaves the workspace (as the original's does) and the file tools'
/// router refuses it, so this refuses it before the tool sees it; then the tool races
/// the state's time budget (`left`) and the cancel switch.
pub(crate) async fn run_host_tool(
    policy: &Policy,
    tool: &Arc<dyn HostTool>,
    args: Value,
    ctx: ToolContext,
    cancel: &Cancel,
    left: Option<Duration>,
) -> HostRun {
    if let Some(escaping) = escaping_path(policy, tool.name(), &args) {
        return HostRun::Escapes(format!(
            "Error: {}",
            crate::files::route::escape_error(&escaping)
        ));
    }
    match race(cancel, left, tool.call(args, ctx)).await {
        Raced::Done(r) => HostRun::Done(r),
        Raced::TimedOut => HostRun::TimedOut,
        Raced::Cancelled => HostRun::Cancelled,
    }
}
