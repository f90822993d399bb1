//! Host tools: the tools a host adds beside the runtime's own.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::Value;

pub use crate::error::Reservation;
use crate::error::RunError;

/// A boxed, sendable future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where a host tool is called from.
#[derive(Debug, Clone)]
pub struct ToolContext {
    /// The session.
    pub session_id: String,
    /// The active state.
    pub state: String,
    /// The model's tool call this call answers; `None` for a script's or a hook's call.
    pub call_id: Option<String>,
    /// The turn's files as this call may use them (`context.workspace`); `None` where the
    /// caller gives none (a script's call).
    pub workspace: Option<Arc<crate::host_workspace::HostWorkspace>>,
}

/// A tool the host provides. Its result is text for the model; an `Err` answers
/// the model with the error and the turn goes on.
pub trait HostTool: Send + Sync {
    /// The name the model calls.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of its arguments. Read once per state and kept for the harness's life.
    fn schema(&self) -> Value;
    /// Its path arguments, `(arg, access)` in order, if it has any.
    fn paths(&self) -> Option<Vec<(String, String)>> {
        None
    }
    /// Runs the tool.
    fn call<'a>(&'a self, args: Value, ctx: ToolContext) -> BoxFuture<'a, Result<String, String>>;
    /// The MCP server and tool it calls, for an MCP tool (events and spans name them).
    fn mcp(&self) -> Option<crate::events::McpRef> {
        None
    }
}

/// Refuses host tools that take the runtime's names: the prefix is checked first.
pub(crate) fn check_names(tools: &[Arc<dyn HostTool>]) -> Result<(), RunError> {
    let reserved = |reservation: Reservation, hit: &dyn Fn(&str) -> bool| {
        let names: Vec<String> = tools
            .iter()
            .map(|t| t.name())
            .filter(|n| hit(n))
            .map(str::to_string)
            .collect();
        if names.is_empty() {
            Ok(())
        } else {
            Err(RunError::ReservedToolName { names, reservation })
        }
    };
    reserved(Reservation::Prefix, &|n| n.starts_with("archmax_"))?;
    reserved(Reservation::FileOperation, &|n| {
        archmax_kernel::tools::FILE_OPERATIONS.contains(&n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named(&'static str);

    impl HostTool for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            ""
        }
        fn schema(&self) -> Value {
            Value::Null
        }
        fn call<'a>(&'a self, _: Value, _: ToolContext) -> BoxFuture<'a, Result<String, String>> {
            Box::pin(async { Ok(String::new()) })
        }
    }

    fn refusal(names: &[&'static str]) -> Option<(Vec<String>, &'static str, String)> {
        let tools: Vec<Arc<dyn HostTool>> = names
            .iter()
            .map(|n| Arc::new(Named(n)) as Arc<dyn HostTool>)
            .collect();
        match check_names(&tools) {
            Ok(()) => None,
            Err(e @ RunError::ReservedToolName { .. }) => {
                let message = e.to_string();
                let RunError::ReservedToolName { names, reservation } = e else {
                    return None;
                };
                Some((names, reservation.as_str(), message))
            }
            Err(other) => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn reserved_names_carry_the_names_and_the_reservation() {
        assert_eq!(refusal(&["crm_lookup", "ls_orders"]), None);
        assert_eq!(
            refusal(&["archmax_x"]),
            Some((
                vec!["archmax_x".to_string()],
                "prefix",
                "Host tool 'archmax_x' uses the reserved 'archmax_' prefix, which names the runtime's own control tools. Rename it.".to_string()
            ))
        );
        assert_eq!(
            refusal(&["archmax_a", "ok", "archmax_b"]).map(|r| (r.0, r.2)),
            Some((
                vec!["archmax_a".to_string(), "archmax_b".to_string()],
                "Host tools 'archmax_a', 'archmax_b' use the reserved 'archmax_' prefix, which names the runtime's own control tools. Rename them.".to_string()
            ))
        );
        assert_eq!(
            refusal(&["copy_file"]),
            Some((
                vec!["copy_file".to_string()],
                "file-operation",
                "Host tool 'copy_file' takes the name of the runtime's own file operation (copy_file, move_file, remove_file), which every agent already has. Drop it, or rename it.".to_string()
            ))
        );
        assert_eq!(
            refusal(&["move_file", "remove_file"]).map(|r| r.2),
            Some("Host tools 'move_file', 'remove_file' take the names of the runtime's own file operations (copy_file, move_file, remove_file), which every agent already has. Drop them, or rename them.".to_string())
        );
        // The prefix is checked first.
        assert_eq!(
            refusal(&["copy_file", "archmax_x"]).map(|r| r.1),
            Some("prefix")
        );
    }
}
