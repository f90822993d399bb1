//! Running a call the kernel allowed: each kind to its runner (the control tools in
//! [`moves`](super::moves) and [`parks`](super::parks), model code in [`code`](super::code)),
//! and here the file tools and host tools.
//!
//! State it changes: the call marks when `read_file` shows an image, and `rejected` when a
//! host tool runs out of the segment's time.

use archmax_kernel::Origin;
use serde_json::Value;

use crate::cancel::CANCELLED_REASON;
use crate::control::{self, ControlResult};
use crate::governed::HostRun;
use crate::tools::ToolContext;

use super::Turn;
use super::dispatch::EXECUTABLE;

impl Turn<'_> {
    /// Runs an allowed call: `others` is how many other calls share its batch, `moved` the
    /// state an earlier move of the batch landed in.
    pub(super) async fn execute(
        &mut self,
        name: &str,
        args: &Value,
        call_id: &str,
        others: usize,
        moved: &mut Option<String>,
    ) -> ControlResult {
        match name {
            "archmax_get_variables" => control::get_variables(&self.session, args),
            "archmax_eval" | "archmax_run" => self.run_code(name, args).await,
            "archmax_set_variables" => self.set_variables(args, call_id),
            "archmax_raise" => self.raise(args, call_id, others),
            "archmax_reset" => self.reset(args, moved),
            "archmax_advance" => self.advance(args, call_id, moved).await,
            "archmax_wait" => self.wait(args, call_id),
            "write_todos" => {
                self.session.todos = args.get("todos").cloned().unwrap_or(Value::Null);
                ControlResult {
                    text: "Updated the todo list.".to_string(),
                    is_error: false,
                }
            }
            _ if EXECUTABLE.contains(&name) => self.file_tool(name, args).await,
            _ => self.host_tool(name, args).await,
        }
    }

    /// A file tool over the session's workspace (`read_file` may answer with an image).
    async fn file_tool(&mut self, name: &str, args: &Value) -> ControlResult {
        match self.workspace() {
            Some(ws) => {
                if name == "read_file"
                    && let Some(opts) = &self.h.images
                    && let Some((text, mark)) = crate::images::answer(&ws, args, opts)
                {
                    self.answering.shown = mark;
                    return ControlResult {
                        text,
                        is_error: false,
                    };
                }
                let out = crate::files::run_tool_async(&ws, name, args).await;
                ControlResult {
                    text: out.text,
                    is_error: out.is_error,
                }
            }
            None => ControlResult {
                text: format!("Error: '{name}' needs a filesystem session store."),
                is_error: true,
            },
        }
    }

    /// A host tool, governed and bounded by the segment's time; unknown names answer so.
    async fn host_tool(&mut self, name: &str, args: &Value) -> ControlResult {
        let state = self.session.workflow_state.clone();
        match self.h.tools.iter().find(|t| t.name() == name).cloned() {
            Some(tool) => {
                let workspace = std::sync::Arc::new(crate::host_workspace::HostWorkspace::new(
                    std::sync::Arc::clone(&self.h.policy),
                    self.id.as_str(),
                    &state,
                    Origin::Agent,
                    self.session.kernel_variables(),
                    self.mode.reply_only,
                    self.workspace(),
                ));
                let ctx = ToolContext {
                    session_id: self.id.as_str().to_string(),
                    state,
                    workspace: Some(std::sync::Arc::clone(&workspace)),
                };
                let left = self.segment_left();
                let run = crate::governed::run_host_tool(
                    &self.h.policy,
                    &tool,
                    args.clone(),
                    ctx,
                    &self.cancel,
                    left,
                )
                .await;
                workspace.close();
                let result = match run {
                    HostRun::Done(r) => r,
                    HostRun::Escapes(text) => Err(text),
                    HostRun::TimedOut => {
                        let reason = self.timeout_reason().unwrap_or_default();
                        self.session.rejected = Some(reason.clone());
                        Err(format!("'{name}' was stopped: {reason}"))
                    }
                    // The loop ends the turn before the next model call.
                    HostRun::Cancelled => Err(format!("'{name}' was stopped: {CANCELLED_REASON}")),
                };
                match result {
                    Ok(text) => ControlResult {
                        text,
                        is_error: false,
                    },
                    Err(e) => ControlResult {
                        text: e,
                        is_error: true,
                    },
                }
            }
            None => ControlResult {
                text: self.unknown_tool(name),
                is_error: true,
            },
        }
    }
}
