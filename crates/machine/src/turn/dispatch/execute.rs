//! Running a call the kernel allowed: each kind to its runner (the control tools in
//! [`moves`](crate::turn::moves) and [`parks`](crate::turn::parks), model code in [`code`](crate::turn::code)),
//! and here the file tools and host tools; which tools the runtime runs itself
//! ([`executable`]).
//!
//! State it changes: nothing for the file and host tools, which run beside each other
//! (`&self`): what they leave for the turn (an image shown, a timed-out segment) comes back
//! as [`Effects`], applied in call order by [`dispatch`](super).

use archmax_kernel::Origin;
use serde_json::Value;

use crate::cancel::CANCELLED_REASON;
use crate::control::{self, ControlResult};
use crate::governed::HostRun;
use crate::tools::ToolContext;

use crate::turn::Turn;

/// Whether the runtime runs tool `name` itself (a control, a file tool, code), not a host.
pub(super) fn executable(name: &str) -> bool {
    archmax_kernel::tools::builtin(name).is_some()
}

/// What a call leaves for the turn besides its text, applied in call order.
#[derive(Default)]
pub(super) struct Effects {
    /// The image its `read_file` showed (recorded on its result message).
    pub(super) shown: Option<crate::images::ImageMark>,
    /// A terminal failure of the step (a host tool stopped by the segment's time budget):
    /// committed as `rejected`.
    pub(super) fails: Option<String>,
    /// A delegation's result, for the failure bookkeeping.
    pub(super) delegated: Option<crate::turn::delegate::Settled>,
}

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
    ) -> (ControlResult, Effects) {
        let result = match name {
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
            _ => return self.run_alongside(name, args, call_id).await,
        };
        (result, Effects::default())
    }

    /// Runs a file or host tool: a call that changes nothing the turn holds, so the calls
    /// of a batch that are all such run at once.
    pub(super) async fn run_alongside(
        &self,
        name: &str,
        args: &Value,
        call_id: &str,
    ) -> (ControlResult, Effects) {
        if let Some(tool) = self
            .h
            .mcp_tool(name)
            .filter(|_| self.h.mocks.find(self.id.as_str(), name, args).is_none())
        {
            // Boxed: an MCP call's future (the server's start included) is large, and every
            // turn's future (a child's, nested in its caller's) would carry it.
            return Box::pin(self.mcp_tool(&tool, args, call_id)).await;
        }
        if executable(name) {
            let (result, shown) = self.file_tool(name, args).await;
            (
                result,
                Effects {
                    shown,
                    ..Default::default()
                },
            )
        } else {
            let (result, fails) = self.host_tool(name, args, call_id).await;
            (
                result,
                Effects {
                    fails,
                    ..Default::default()
                },
            )
        }
    }

    /// An MCP tool: run under the turn's cancel
    /// switch and the state's time left (a timeout is the step's failure, returned), its
    /// progress told as `tool-progress` events, an image it returns shown as `read_file`'s
    /// are when images are on.
    async fn mcp_tool(
        &self,
        tool: &crate::mcp::McpTool,
        args: &Value,
        call_id: &str,
    ) -> (ControlResult, Effects) {
        // Its declared paths were decided as workspace paths (outside ones refused); the
        // tool sends them to the server as real ones.
        let name = tool.name.as_str();
        let (emitter, session) = (self.emitter.clone(), self.id.as_str().to_string());
        let (state, tool_name, id) = (
            self.session.workflow_state.clone(),
            name.to_string(),
            call_id.to_string(),
        );
        let progress: crate::mcp::ProgressFn =
            std::sync::Arc::new(move |p: crate::mcp::Progress| {
                emitter.emit(
                    Some(&session),
                    crate::events::Event::ToolProgress {
                        state: state.clone(),
                        tool: tool_name.clone(),
                        call_id: id.clone(),
                        progress: p.progress,
                        total: p.total,
                        message: p.message,
                    },
                );
            });
        let raced = crate::cancel::race(
            &self.cancel,
            self.segment_left(),
            tool.run(args.clone(), Some(progress)),
        )
        .await;
        let answered = match raced {
            crate::cancel::Raced::Done(a) => a,
            crate::cancel::Raced::TimedOut => {
                let reason = self.timeout_reason().unwrap_or_default();
                let text = format!("'{name}' was stopped: {reason}");
                let effects = Effects {
                    fails: Some(reason),
                    ..Default::default()
                };
                return (
                    ControlResult {
                        text,
                        is_error: true,
                    },
                    effects,
                );
            }
            crate::cancel::Raced::Cancelled => {
                let text = format!("'{name}' was stopped: {CANCELLED_REASON}");
                return (
                    ControlResult {
                        text,
                        is_error: true,
                    },
                    Effects::default(),
                );
            }
        };
        let mut text = answered.text;
        let mut shown = None;
        for (n, (mime, data)) in answered.images.iter().enumerate() {
            let line = match (&self.h.settings.images, self.workspace()) {
                (Some(opts), Some(ws)) if shown.is_none() => {
                    let (line, mark) =
                        crate::images::keep_answered(&ws, call_id, n, mime, data, opts);
                    shown = mark;
                    line
                }
                _ => format!("[an image ({mime}) was returned; images are not shown here]"),
            };
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&line);
        }
        let result = ControlResult {
            text,
            is_error: answered.is_error,
        };
        (
            result,
            Effects {
                shown,
                ..Default::default()
            },
        )
    }

    /// A file tool over the session's workspace (`read_file` may answer with an image).
    async fn file_tool(
        &self,
        name: &str,
        args: &Value,
    ) -> (ControlResult, Option<crate::images::ImageMark>) {
        match self.workspace() {
            Some(ws) => {
                if name == "read_file"
                    && let Some(opts) = &self.h.settings.images
                    && let Some((text, mark)) = crate::images::answer(&ws, args, opts)
                {
                    let result = ControlResult {
                        text,
                        is_error: false,
                    };
                    return (result, mark);
                }
                let out = crate::files::run_tool_async(&ws, name, args).await;
                let result = ControlResult {
                    text: out.text,
                    is_error: out.is_error,
                };
                (result, None)
            }
            None => {
                let result = ControlResult {
                    text: format!("Error: '{name}' needs a filesystem session store."),
                    is_error: true,
                };
                (result, None)
            }
        }
    }

    /// A host tool, governed and bounded by the segment's time (a timeout is the step's
    /// failure, returned); unknown names answer so.
    async fn host_tool(
        &self,
        name: &str,
        args: &Value,
        call_id: &str,
    ) -> (ControlResult, Option<String>) {
        if let Some(result) = self.h.mocks.find(self.id.as_str(), name, args) {
            let result = ControlResult {
                text: crate::mocks::payload(&result),
                is_error: false,
            };
            return (result, None);
        }
        let state = self.session.workflow_state.clone();
        match self.h.tools.iter().find(|t| t.name() == name).cloned() {
            Some(tool) => {
                let workspace = std::sync::Arc::new(
                    crate::host_workspace::HostWorkspace::new(
                        std::sync::Arc::clone(&self.h.policy),
                        self.id.as_str(),
                        &state,
                        Origin::Agent,
                        self.session.kernel_variables(),
                        self.mode == crate::turn::Mode::ReplyOnly,
                        self.workspace(),
                    )
                    .with_inherited(std::sync::Arc::clone(&self.inherited)),
                );
                let ctx = ToolContext {
                    session_id: self.id.as_str().to_string(),
                    state,
                    call_id: Some(call_id.to_string()),
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
                let mut fails = None;
                let result = match run {
                    HostRun::Done(r) => r,
                    HostRun::Escapes(text) => Err(text),
                    HostRun::TimedOut => {
                        let reason = self.timeout_reason().unwrap_or_default();
                        fails = Some(reason.clone());
                        Err(format!("'{name}' was stopped: {reason}"))
                    }
                    // The loop ends the turn before the next model call.
                    HostRun::Cancelled => Err(format!("'{name}' was stopped: {CANCELLED_REASON}")),
                };
                let result = match result {
                    Ok(text) => ControlResult {
                        text,
                        is_error: false,
                    },
                    Err(e) => ControlResult {
                        text: e,
                        is_error: true,
                    },
                };
                (result, fails)
            }
            None => {
                let result = ControlResult {
                    text: self.unknown_tool(name),
                    is_error: true,
                };
                (result, None)
            }
        }
    }
}
