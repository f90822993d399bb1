//! Decisions for a host that runs its own tools (`Governance` in JavaScript, a custom loop):
//! the runtime's router keeps every path inside the workspace and away from the session
//! store before a tool runs, and such a host has no router, so its decision says the same.
//!
//! ```
//! use archmax_kernel::{CallContext, Origin, Policy, PolicyOptions, ToolCall};
//! let spec = archmax_spec::validate_spec("states:\n  s:\n    triggers: { manual: }\n").spec.unwrap();
//! let policy = Policy::compile(&spec, PolicyOptions::default()).unwrap();
//! let ctx = CallContext { state: "s", origin: Origin::Agent, reply_only: false, variables: None, inherited: &[] };
//! let args = serde_json::json!({ "file_path": "../../etc/passwd" });
//! let d = policy.decide_for_host(&ToolCall::new("read_file", &args), &ctx);
//! assert_eq!(d.decision.rule.as_str(), "path.outside-workspace");
//! ```

use serde::Serialize;
use serde_json::Value;

use crate::paths::call_paths;
use crate::zones::{Zone, classify};
use crate::{CallContext, Decision, Policy, RuleId, ToolCall};

/// The folder of the session store under the workspace root: every session's records.
pub const SESSION_STORE: &str = "sessions";

/// Where a path argument lands in the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PathZone {
    /// Above the workspace root.
    Outside,
    /// The workspace root itself.
    Root,
    /// A read-only mount (authored content).
    Authored,
    /// `checkpoints/`, `artifacts/`, `_specs/`, or the session store.
    Internal,
    /// `large_tool_results/`, `conversation_history/`.
    Offload,
    /// `scratchpad/`.
    Scratchpad,
    /// Anything else the run may write.
    Run,
}

/// One path argument as the kernel understood it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResolvedPath {
    /// The argument it came from (`file_path`, `source`, …).
    pub argument: String,
    /// The value as the model wrote it.
    pub given: String,
    /// The workspace-relative path decided on (no leading `/`): what a host must resolve
    /// under its workspace root. Never the given text as an operating-system path.
    pub path: String,
    /// Where it lands.
    pub zone: PathZone,
}

/// A host's decision: the kernel's, and the call's path arguments that were not already in
/// their plain workspace-relative form (a leading `/`, `.` or `..` segments, …).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HostDecision {
    /// The decision.
    #[serde(flatten)]
    pub decision: Decision,
    /// The path arguments a host must resolve as `path` says (empty when every one was
    /// already plain).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<ResolvedPath>,
}

impl Policy {
    /// [`Policy::decide_with_move`] for a host that runs its own tools, with what the
    /// runtime's router adds before a tool runs: a path that climbs above the workspace root
    /// is refused (`path.outside-workspace`, the router's words), and so is one in the session
    /// store (`zone.runtime-internal`); the call's path arguments come back resolved.
    pub fn decide_for_host(&self, call: &ToolCall<'_>, ctx: &CallContext<'_>) -> HostDecision {
        let decision = self.decide_with_move(call, ctx);
        let Some(Ok(paths)) = self
            .tool_paths
            .of(call.tool)
            .map(|d| call_paths(d, call.args))
        else {
            return HostDecision {
                decision,
                paths: Vec::new(),
            };
        };
        let mut resolved = Vec::new();
        let mut refusal = None;
        for p in &paths {
            let zone = match classify(&p.canonical, &self.mounts) {
                Zone::Escapes => PathZone::Outside,
                Zone::Root => PathZone::Root,
                Zone::Authored => PathZone::Authored,
                Zone::RunInternal => PathZone::Internal,
                Zone::RunOffload => PathZone::Offload,
                Zone::RunOpen => PathZone::Scratchpad,
                Zone::Run if in_session_store(&p.canonical.path) => PathZone::Internal,
                Zone::Run => PathZone::Run,
            };
            if refusal.is_none() && decision.allowed {
                refusal = match zone {
                    PathZone::Outside => Some(Decision::block(
                        RuleId::OutsideWorkspace,
                        outside_workspace(&p.raw),
                    )),
                    PathZone::Internal if in_session_store(&p.canonical.path) => {
                        Some(Decision::block(
                            RuleId::RuntimeInternal,
                            crate::messages::session_store(&crate::messages::subject(
                                call.tool,
                                p,
                                paths.len() > 1,
                            )),
                        ))
                    }
                    _ => None,
                };
            }
            if p.raw != p.canonical.path || zone == PathZone::Outside {
                resolved.push(ResolvedPath {
                    argument: p.arg.clone(),
                    given: p.raw.clone(),
                    path: p.canonical.path.clone(),
                    zone,
                });
            }
        }
        HostDecision {
            decision: refusal.unwrap_or(decision),
            paths: resolved,
        }
    }
}

impl Policy {
    /// Decides a call of a tool given real paths (an MCP server's, see
    /// [`crate::paths::NativeBase`]) on the workspace paths they name, as a host's own call
    /// is decided (a path outside the workspace or in the session store refused). Returns
    /// the arguments decided on, the only ones the call may run with: the workspace paths,
    /// which the tool is given back as real ones ([`crate::ToolPaths::native_args`]).
    pub fn decide_native(&self, call: &ToolCall<'_>, ctx: &CallContext<'_>) -> (Value, Decision) {
        match self.tool_paths.workspace_args(call.tool, call.args.clone()) {
            Ok(view) => {
                let decision = self.decide_for_host(&ToolCall::new(call.tool, &view), ctx);
                (view, decision.decision)
            }
            Err(outside) => {
                let decision = self.decide(call, ctx);
                if !decision.allowed {
                    return (call.args.clone(), decision);
                }
                let refused =
                    Decision::block(RuleId::OutsideWorkspace, outside_workspace(&outside));
                (call.args.clone(), refused)
            }
        }
    }
}

/// Whether a canonical path is the session store or under it.
fn in_session_store(canonical: &str) -> bool {
    crate::canonical::first_segment(canonical) == SESSION_STORE
}

/// The router's refusal of a path above the workspace root (`WorkspacePathEscapeError`).
pub fn outside_workspace(path: &str) -> String {
    let quoted = Value::from(path).to_string();
    format!(
        "Path {quoted} resolves outside the workspace root; workspace paths may not traverse above it."
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::{Origin, PolicyOptions};

    fn decide(tool: &str, args: Value) -> HostDecision {
        let spec = archmax_spec::validate_spec(
            "states:\n  s:\n    triggers: { manual: }\n    tools: { allow: [write_file, read_file, copy_file], forbid: [edit_file] }\n",
        )
        .spec
        .expect("spec");
        let policy = Policy::compile(&spec, PolicyOptions::default()).expect("policy");
        let ctx = CallContext {
            state: "s",
            origin: Origin::Agent,
            reply_only: false,
            variables: None,
            inherited: &[],
        };
        policy.decide_for_host(&ToolCall::new(tool, &args), &ctx)
    }

    #[test]
    fn a_hosts_paths_stay_in_the_workspace_and_out_of_the_session_store() {
        for escape in ["../../etc/passwd", "scratchpad/../../x", "/../x", ".."] {
            let d = decide("write_file", serde_json::json!({ "file_path": escape }));
            assert!(!d.decision.allowed, "{escape}");
            assert_eq!(d.decision.rule.as_str(), "path.outside-workspace");
            assert_eq!(
                d.decision.message.as_deref(),
                Some(outside_workspace(escape).as_str())
            );
            assert_eq!(d.paths[0].zone, PathZone::Outside);
        }
        for store in [
            "/sessions/a/checkpoints/state.json",
            "sessions/a/scratchpad/x",
            "./sessions",
        ] {
            let d = decide("read_file", serde_json::json!({ "file_path": store }));
            assert_eq!(d.decision.rule.as_str(), "zone.runtime-internal", "{store}");
            assert!(
                d.decision
                    .message
                    .as_deref()
                    .is_some_and(|m| m.contains("targets the session store ('sessions/')")),
                "{d:?}"
            );
        }
        // An absolute path is workspace-relative: allowed, and flagged with what it means.
        let d = decide(
            "write_file",
            serde_json::json!({ "file_path": "/etc/passwd" }),
        );
        assert!(d.decision.allowed);
        assert_eq!(
            d.paths,
            vec![ResolvedPath {
                argument: "file_path".into(),
                given: "/etc/passwd".into(),
                path: "etc/passwd".into(),
                zone: PathZone::Run,
            }]
        );
        // A plain path needs no flag; both paths of a two-path tool are checked.
        let d = decide(
            "write_file",
            serde_json::json!({ "file_path": "scratchpad/a.md" }),
        );
        assert!(d.decision.allowed && d.paths.is_empty());
        let d = decide(
            "copy_file",
            serde_json::json!({ "source": "scratchpad/a.md", "destination": "../b.md" }),
        );
        assert_eq!(d.decision.rule.as_str(), "path.outside-workspace");
        assert_eq!(d.paths.len(), 1);
        assert_eq!(d.paths[0].argument, "destination");
        // A refusal the kernel made first stands.
        let d = decide("edit_file", serde_json::json!({ "file_path": "../x" }));
        assert_eq!(d.decision.rule.as_str(), "tool.forbidden-here");
    }
}
