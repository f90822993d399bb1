//! Host tools: the tools a host adds beside the runtime's own.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

use crate::harness::RunError;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a host tool is called from.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session.
    pub session_id: String,
    /// The active state.
    pub state: String,
}

/// A tool the host provides. Its result is text for the model; an `Err` answers
/// the model with the error and the turn goes on.
pub trait HostTool: Send + Sync {
    /// The name the model calls.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of its arguments.
    fn schema(&self) -> Value;
    /// Its path arguments, `(arg, access)` in order, if it has any.
    fn paths(&self) -> Option<Vec<(String, String)>> {
        None
    }
    /// Runs the tool.
    fn call<'a>(&'a self, args: Value, ctx: ToolContext) -> BoxFuture<'a, Result<String, String>>;
}

/// Refuses host tools that take the runtime's names.
pub(crate) fn check_names(tools: &[Arc<dyn HostTool>]) -> Result<(), RunError> {
    let prefixed: Vec<&str> = tools
        .iter()
        .map(|t| t.name())
        .filter(|n| n.starts_with("archmax_"))
        .collect();
    if !prefixed.is_empty() {
        let quoted: Vec<String> = prefixed.iter().map(|n| format!("'{n}'")).collect();
        return Err(RunError::ReservedToolName(if prefixed.len() == 1 {
            format!(
                "Host tool {} uses the reserved 'archmax_' prefix, which names the runtime's own control tools. Rename it.",
                quoted[0]
            )
        } else {
            format!(
                "Host tools {} use the reserved 'archmax_' prefix, which names the runtime's own control tools. Rename them.",
                quoted.join(", ")
            )
        }));
    }
    let ops: Vec<&str> = tools
        .iter()
        .map(|t| t.name())
        .filter(|n| archmax_kernel::tools::FILE_OPERATIONS.contains(n))
        .collect();
    if !ops.is_empty() {
        let quoted: Vec<String> = ops.iter().map(|n| format!("'{n}'")).collect();
        return Err(RunError::ReservedToolName(if ops.len() == 1 {
            format!(
                "Host tool {} takes the name of the runtime's own file operation (copy_file, move_file, remove_file), which every agent already has. Drop it, or rename it.",
                quoted[0]
            )
        } else {
            format!(
                "Host tools {} take the names of the runtime's own file operations (copy_file, move_file, remove_file), which every agent already has. Drop them, or rename them.",
                quoted.join(", ")
            )
        }));
    }
    Ok(())
}
