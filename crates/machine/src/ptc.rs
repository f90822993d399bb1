//! `tools.*` for scripts: the bridge a hook (and later `archmax_eval`/`archmax_run`)
//! calls tools through. Every call passes the same kernel as the agent's calls, with
//! the caller's origin: a hook has lifecycle authority (exempt from the state's allow
//! and forbid and from skill/mount enablement, bound by `forbid_always`, the safety
//! rules and the governance plane); script code is governed like the agent.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use std::time::Instant;

use archmax_kernel::{CallContext, Origin, Policy, Variables};
use serde_json::Value;

use crate::cancel::{CANCELLED_REASON, Cancel};
use crate::governed::{HostRun, run_host_tool};

use crate::events::Event;
use crate::files::Workspace;
use crate::tools::{HostTool, ToolContext};

/// The sandbox limits of a workflow's scripts and hooks (`settings`; the original's
/// defaults: 15 s, 64 MiB, 256 `tools.*` calls per run, 4,000 result characters).
pub fn limits(spec: &archmax_spec::model::Workflow) -> archmax_sandbox::Limits {
    let settings = spec.settings.as_ref();
    let defaults = archmax_sandbox::Limits::default();
    archmax_sandbox::Limits {
        timeout: settings
            .and_then(|s| s.timeout_ms)
            .map_or(defaults.timeout, std::time::Duration::from_millis),
        memory_bytes: settings
            .and_then(|s| s.memory_limit_bytes)
            .and_then(|b| usize::try_from(b).ok())
            .unwrap_or(defaults.memory_bytes),
        max_tool_calls: match settings.and_then(|s| s.max_ptc_calls) {
            None => defaults.max_tool_calls,
            Some(n) => n.map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        },
        // The workflow default (4,000) is smaller than the sandbox's own.
        max_result_chars: settings
            .and_then(|s| s.max_result_chars)
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(4_000),
        ..defaults
    }
}

/// One script run's view of the tools, bound to a session, a state and a snapshot
/// of the run's variables.
pub struct ScriptTools {
    pub(crate) policy: Arc<Policy>,
    pub(crate) origin: Origin,
    pub(crate) session_id: String,
    pub(crate) state: String,
    pub(crate) variables: Variables,
    /// The ancestors' workflow-wide denials (inside a sub-workflow).
    pub(crate) inherited: Arc<[archmax_kernel::Inherited]>,
    /// `None` without a filesystem store: file tools answer that they need one.
    pub(crate) workspace: Option<Workspace>,
    pub(crate) host: Vec<Arc<dyn HostTool>>,
    /// The names `tools` lists: every script tool for a hook; for model code, the
    /// ones the state discloses (an unlisted tool is unreachable from the script).
    pub(crate) listed: Vec<String>,
    pub(crate) events: crate::events::Emitter,
    /// Numbers the run's calls (`ptc:<n>`).
    pub(crate) calls: std::sync::atomic::AtomicU64,
    /// The turn's cancel switch: a host tool races it, as the agent's calls do.
    pub(crate) cancel: Cancel,
    /// When the state's time budget runs out, and the reason a call stopped by it
    /// answers; `None` when the state has no `timeoutMs`.
    pub(crate) deadline: Option<(Instant, String)>,
    /// Model code's delegation tools (`None` for a hook, which delegates nothing).
    pub(crate) delegations: Option<Arc<dyn DelegationTools>>,
    /// The cases' mocks: a matching mock answers a host tool call instead of the tool.
    pub(crate) mocks: Arc<crate::mocks::ToolMocks>,
}

/// Model code's delegation tools (`tools.archmaxWorkflow…`), as the turn serves them
/// (`turn/delegate.rs`): the targets the state discloses, loaded before the script runs.
pub(crate) trait DelegationTools: Send + Sync {
    /// One call of delegation tool `name` from a script: checked and run as the agent's
    /// are; a refusal or failure is the call's error.
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: &'a Value,
        vars: &'a Variables,
        call_id: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;
}

impl std::fmt::Debug for ScriptTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptTools")
            .field("origin", &self.origin)
            .field("session_id", &self.session_id)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl ScriptTools {
    /// Runs one call under governance: `Err` carries a refusal (with the kernel's
    /// `[workflow] BLOCKED` text) or a host tool's failure; file tools answer text,
    /// their errors included, as they do for the agent.
    pub async fn call(&self, name: &str, args: Value) -> Result<String, String> {
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let call_id = format!("ptc:{n}");
        let origin = Some(self.origin_name().to_string());
        let ctx = CallContext {
            state: &self.state,
            origin: self.origin,
            reply_only: false,
            variables: Some(&self.variables),
            inherited: &self.inherited,
        };
        let (args, verdict) =
            crate::scope::decide(&self.policy, &self.session_id, name, args, &ctx);
        if !verdict.allowed {
            let reason = verdict
                .message
                .unwrap_or_else(|| format!("'{name}' is not allowed in state '{}'.", self.state));
            // Shown even when the kernel's refusal is a quiet one (record 0235).
            self.emit(Event::ToolBlocked {
                state: self.state.clone(),
                tool: name.to_string(),
                reason: reason.clone(),
                call_id: Some(call_id),
                args: Some(args),
                origin,
            });
            return Err(reason);
        }
        if name.starts_with(archmax_kernel::tools::WORKFLOW_TOOL_PREFIX) {
            // A delegation reports itself (`sub-workflow-start`/`-result`).
            return match &self.delegations {
                Some(d) => d.call(name, &args, &self.variables, &call_id).await,
                None => Err(format!("'{name}' is not a tool scripts can call")),
            };
        }
        self.emit(Event::ToolCalled {
            state: self.state.clone(),
            tool: name.to_string(),
            call_id: Some(call_id.clone()),
            args: Some(args.clone()),
            detail: None,
            origin: origin.clone(),
            mcp: self
                .host
                .iter()
                .find(|t| t.name() == name)
                .and_then(|t| t.mcp()),
        });
        let started = std::time::Instant::now();
        let result = self.run(name, args).await;
        let (Ok(output) | Err(output)) = &result;
        self.emit(Event::tool_result(
            self.state.clone(),
            name.to_string(),
            call_id,
            result.is_ok(),
            started,
            output,
            origin,
        ));
        result
    }

    /// `script` or `lifecycle`, as events name the caller.
    fn origin_name(&self) -> &'static str {
        match self.origin {
            Origin::Lifecycle => "lifecycle",
            _ => "script",
        }
    }

    /// Emits an event for the bound session.
    pub(crate) fn emit(&self, event: Event) {
        self.events.emit(Some(&self.session_id), event);
    }

    /// Runs an allowed call.
    async fn run(&self, name: &str, args: Value) -> Result<String, String> {
        if let Some(tool) = archmax_kernel::tools::builtin(name).filter(|b| b.from_scripts) {
            let Some(ws) = &self.workspace else {
                return Err(format!("'{name}' needs a filesystem session store."));
            };
            let text = crate::files::run_tool_async(ws, name, &args).await.text;
            return Ok(if tool.lists_paths {
                self.policy
                    .redact_listing(&self.state, self.origin, &text)
                    .into_owned()
            } else if name == "read_file" {
                strip_line_numbers(&text).unwrap_or(text)
            } else {
                text
            });
        }
        if let Some(result) = self.mocks.find(&self.session_id, name, &args) {
            return Ok(crate::mocks::payload(&result));
        }
        match self.host.iter().find(|t| t.name() == name) {
            Some(tool) => {
                let workspace = Arc::new(
                    crate::host_workspace::HostWorkspace::new(
                        Arc::clone(&self.policy),
                        &self.session_id,
                        &self.state,
                        self.origin,
                        self.variables.clone(),
                        false,
                        self.workspace.clone(),
                    )
                    .with_inherited(Arc::clone(&self.inherited)),
                );
                let ctx = ToolContext {
                    session_id: self.session_id.clone(),
                    state: self.state.clone(),
                    call_id: None,
                    workspace: Some(Arc::clone(&workspace)),
                };
                let left = self
                    .deadline
                    .as_ref()
                    .map(|(at, _)| at.saturating_duration_since(Instant::now()));
                let run = run_host_tool(&self.policy, tool, args, ctx, &self.cancel, left).await;
                workspace.close();
                match run {
                    HostRun::Done(result) => result,
                    HostRun::Escapes(text) => Err(text),
                    HostRun::TimedOut => {
                        let reason = self.deadline.as_ref().map_or("", |(_, r)| r.as_str());
                        Err(format!("'{name}' was stopped: {reason}"))
                    }
                    HostRun::Cancelled => Err(format!("'{name}' was stopped: {CANCELLED_REASON}")),
                }
            }
            None => Err(format!("'{name}' is not a tool scripts can call")),
        }
    }
}

/// A script reads a file's text, not the model's `cat -n` view: the `<n>\t` (or
/// `<n>.<k>\t`) prefixes go when every non-empty line has one; `None` otherwise
/// (an error text, an empty-file reminder).
fn strip_line_numbers(text: &str) -> Option<String> {
    fn body(line: &str) -> Option<&str> {
        let (prefix, rest) = line.split_once('\t')?;
        let number = prefix.trim_start();
        let (whole, part) = number.split_once('.').unwrap_or((number, "0"));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        (digits(whole) && digits(part)).then_some(rest)
    }
    let mut out = Vec::new();
    for line in text.split('\n') {
        if line.trim().is_empty() {
            out.push(line);
        } else {
            out.push(body(line)?);
        }
    }
    Some(out.join("\n"))
}

impl archmax_sandbox::ToolBridge for ScriptTools {
    fn tools(&self) -> Vec<String> {
        self.listed.clone()
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        args: Value,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(ScriptTools::call(self, name, args))
    }
}

#[cfg(test)]
mod tests {
    use super::strip_line_numbers;

    #[test]
    fn line_numbers_go_only_when_every_line_has_one() {
        assert_eq!(
            strip_line_numbers("     1\t{\n     2\t  \"a\": 1\n  2.1\tmore\n\n     3\t}")
                .as_deref(),
            Some("{\n  \"a\": 1\nmore\n\n}")
        );
        assert_eq!(strip_line_numbers("Error: File '/x' not found"), None);
        assert_eq!(strip_line_numbers("     1\tok\nplain"), None);
        assert_eq!(strip_line_numbers("  x1\tno"), None);
    }
}
