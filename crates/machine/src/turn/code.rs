//! `archmax_eval` and `archmax_run`: model code in the turn's sandbox, and the `tools.*` a
//! script or hook is given.
//!
//! State it changes: the turn's sandbox (built at the first call, dropped after an abandoned run).

use std::time::Instant;

use archmax_kernel::Origin;
use serde_json::Value;

use crate::control::ControlResult;

use super::Turn;

impl Turn<'_> {
    /// `archmax_eval` (inline code) or `archmax_run` (a skill script read through the
    /// agent's workspace) in the turn's sandbox; `tools.*` carry the agent's authority
    /// and list the tools the state discloses.
    pub(super) async fn run_code(&mut self, name: &str, args: &Value) -> ControlResult {
        let error = |text: String| ControlResult {
            text,
            is_error: true,
        };
        let variables = self.session.kernel_variables();
        let workspace = self.workspace();
        let (path, code, script_args) = if name == "archmax_eval" {
            let Some(code) = args.get("code").and_then(Value::as_str) else {
                return error("Error: 'code' must be a string of JavaScript.".into());
            };
            (None, code.to_string(), Value::Null)
        } else {
            let Some(file) = args.get("file_path").and_then(Value::as_str) else {
                return error("Error: 'file_path' must be the path of a script.".into());
            };
            let Some(ws) = &workspace else {
                return error("Error: 'archmax_run' needs a filesystem session store.".into());
            };
            let route = match crate::files::route::resolve(ws, file) {
                Ok(r) => r,
                Err(e) => return error(format!("Error: {e}")),
            };
            let read = route
                .fs
                .read_regular(&route.disk, archmax_spec::disk::MAX_AUTHORED_FILE_BYTES);
            match read.map_err(|why| format!("it {why}")).and_then(|bytes| {
                let bytes = bytes.ok_or_else(|| "it does not exist".to_string())?;
                String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())
            }) {
                Ok(code) => (
                    Some(route.rel.clone()),
                    code,
                    archmax_sandbox::eval_args(
                        args.get("args").cloned().unwrap_or(Value::Null),
                        variables.clone().into_iter().collect(),
                    ),
                ),
                Err(e) => {
                    return error(format!(
                        "Error: cannot read script '{}': {e}",
                        route.shown()
                    ));
                }
            }
        };
        let sandbox = match &self.sandbox {
            Some(s) => s.clone(),
            None => match archmax_sandbox::Sandbox::new(crate::ptc::limits(&self.h.spec)).await {
                Ok(s) => {
                    let s = std::sync::Arc::new(s);
                    self.sandbox = Some(s.clone());
                    s
                }
                Err(e) => return error(format!("Error: the sandbox could not start: {e}")),
            },
        };
        let (bridge, delegations) = self.script_tools(Origin::Script, variables, workspace);
        // QuickJS runs on a thread of its own; its tools.* calls are served here.
        let limit = crate::ptc::limits(&self.h.spec).timeout;
        let run = crate::script_thread::run(bridge, limit, move |bridge| async move {
            match path {
                None => sandbox.eval(&code, Value::Null, bridge).await,
                Some(p) => sandbox.run_file(&p, &code, script_args, bridge).await,
            }
        })
        .await;
        if let Some(d) = delegations {
            // The script's children took ordinals: the next call goes on from there.
            self.session.sub_workflow_count = d.next.load(std::sync::atomic::Ordering::SeqCst);
            let ran = d
                .ran
                .lock()
                .map(|mut r| std::mem::take(&mut *r))
                .unwrap_or_default();
            let here = self.session.workflow_state.clone();
            for (workflow, ok) in ran {
                self.trail_delegation(&here, &workflow, ok);
            }
        }
        match run {
            Ok(run) => ControlResult {
                text: run.text,
                is_error: run.is_error,
            },
            Err(e) => {
                // The abandoned run still holds its sandbox; the next script gets a new one.
                self.sandbox = None;
                error(format!("Error: {e}"))
            }
        }
    }

    /// The `tools.*` of a script run by `origin`, bound to this session and its current
    /// state. A hook lists every tool a script may call; model code lists the ones the
    /// state discloses, and gets its delegation tools, returned beside the bridge too (the
    /// turn reads what they ran once the script ends).
    pub(super) fn script_tools(
        &self,
        origin: Origin,
        variables: archmax_kernel::Variables,
        workspace: Option<crate::files::Workspace>,
    ) -> (
        std::sync::Arc<crate::ptc::ScriptTools>,
        Option<std::sync::Arc<super::delegate::ScriptDelegations>>,
    ) {
        let state = self.session.workflow_state.clone();
        // The host's tools, and the MCP tools listed so far, are tools a script may call.
        let host: Vec<std::sync::Arc<dyn crate::tools::HostTool>> = self
            .h
            .tools
            .iter()
            .cloned()
            .chain(
                self.h
                    .mcp
                    .iter()
                    .flat_map(|m| m.listed())
                    .map(|t| t as std::sync::Arc<dyn crate::tools::HostTool>),
            )
            .collect();
        let callable = archmax_kernel::tools::BUILTINS
            .iter()
            .filter(|b| b.from_scripts)
            .map(|b| b.name.to_string())
            .chain(host.iter().map(|t| t.name().to_string()));
        let mut delegations = None;
        let listed = match origin {
            Origin::Lifecycle => callable.collect(),
            _ => {
                let disclosed = self.h.policy.surface(&state);
                let targets: Vec<&String> = disclosed
                    .iter()
                    .filter(|t| t.starts_with(archmax_kernel::tools::WORKFLOW_TOOL_PREFIX))
                    .collect();
                if !targets.is_empty() && !self.h.plain {
                    let children = targets
                        .iter()
                        .map(|t| {
                            let slug = super::delegate::target(t);
                            let child = self.h.child_harness(slug).map_err(|e| e.to_string());
                            (slug.to_string(), child)
                        })
                        .collect();
                    delegations = Some(std::sync::Arc::new(super::delegate::ScriptDelegations {
                        caller: self.caller(),
                        children,
                        next: self.session.sub_workflow_count.into(),
                        ran: std::sync::Mutex::new(Vec::new()),
                    }));
                }
                let mut listed: Vec<String> = callable
                    .filter(|t| {
                        disclosed
                            .iter()
                            .any(|d| archmax_spec::grammar::entry_covers(d, t))
                    })
                    .collect();
                listed.extend(targets.into_iter().cloned());
                listed
            }
        };
        let bridge = std::sync::Arc::new(crate::ptc::ScriptTools {
            cancel: self.cancel.clone(),
            deadline: self
                .segment_left()
                .map(|left| Instant::now() + left)
                .zip(self.timeout_reason()),
            policy: self.h.policy.clone(),
            origin,
            session_id: self.id.as_str().to_string(),
            state,
            variables,
            inherited: std::sync::Arc::clone(&self.inherited),
            workspace,
            host,
            listed,
            events: self.emitter.clone(),
            calls: Default::default(),
            delegations: delegations
                .clone()
                .map(|d| d as std::sync::Arc<dyn crate::ptc::DelegationTools>),
            mocks: std::sync::Arc::clone(&self.h.mocks),
        });
        (bridge, delegations)
    }
}
