//! One governed-call pipeline for every origin: what the agent's own call of a host tool
//! gets (a declared path leaving the workspace refused, the state's time budget and the
//! cancel switch raced), a script's `tools.*` call of it gets too.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use archmax_machine::tools::BoxFuture;
use archmax_machine::{HostTool, ToolContext};
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, tool_results};
use serde_json::{Value, json};

/// A host tool with a declared `file_path` (read) that records what it was handed and
/// takes `delay` to answer.
struct Docs {
    seen: Arc<Mutex<Vec<Value>>>,
    delay: Duration,
}

impl HostTool for Docs {
    fn name(&self) -> &str {
        "fetch_doc"
    }
    fn description(&self) -> &str {
        "Reads a document."
    }
    fn schema(&self) -> Value {
        json!({ "type": "object", "properties": { "file_path": { "type": "string" } } })
    }
    fn paths(&self) -> Option<Vec<(String, String)>> {
        Some(vec![("file_path".into(), "read".into())])
    }
    fn call<'a>(&'a self, args: Value, _ctx: ToolContext) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            if let Ok(mut seen) = self.seen.lock() {
                seen.push(args.clone());
            }
            tokio::time::sleep(self.delay).await;
            Ok(format!("doc {}", args["file_path"]))
        })
    }
}

fn harness(ws: &TempWorkspace, server: &InProcessModel, tool: Docs) -> archmax_machine::Harness {
    archmax_tests::harness(ws.root(), "orders", server, "m", |o| {
        o.tools = vec![Arc::new(tool)];
    })
}

const EVAL_ESCAPE: &str = "try { await tools.fetchDoc({ file_path: '../outside.txt' }) } catch (e) { 'refused: ' + e.message }";

#[test]
fn a_script_cannot_hand_a_host_tool_a_path_the_agents_own_call_is_refused() {
    let ws = TempWorkspace::new(&[(
        "workflows/orders/workflow.yaml",
        "states:\n  work:\n    triggers: { manual: }\n    tools: { allow: [fetch_doc] }\n",
    )]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            ("a", "fetch_doc", json!({ "file_path": "../outside.txt" })),
            ("b", "archmax_eval", json!({ "code": EVAL_ESCAPE })),
            (
                "c",
                "archmax_eval",
                json!({ "code": "await tools.fetchDoc({ file_path: 'g1/notes.md' })" }),
            ),
        ]),
        Reply::text("Done."),
    ]);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let h = harness(
        &ws,
        &server,
        Docs {
            seen: seen.clone(),
            delay: Duration::ZERO,
        },
    );
    let _ = archmax_tests::send(&h, "g1", "go");
    let results = tool_results(&server.requests()[1]);
    let refusal = "Path \"../outside.txt\" resolves outside the workspace root; workspace paths may not traverse above it.";
    assert_eq!(
        results[0],
        format!("Error: {refusal}"),
        "the agent's own call"
    );
    assert!(
        results[1].contains(refusal),
        "a script's call is refused the same way: {results:?}"
    );
    assert_eq!(
        results[2], "→ doc \"notes.md\"",
        "the tool gets the path the kernel decided on"
    );
    let seen = seen.lock().map(|s| s.clone()).unwrap_or_default();
    assert_eq!(
        seen,
        vec![json!({ "file_path": "notes.md" })],
        "never saw '../'"
    );
}

#[test]
fn a_scripts_host_tool_call_races_the_states_time_budget() {
    let ws = TempWorkspace::new(&[(
        "workflows/orders/workflow.yaml",
        "states:\n  work:\n    triggers: { manual: }\n    budget: { timeoutMs: 400 }\n    tools: { allow: [fetch_doc] }\n",
    )]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "a",
            "archmax_eval",
            json!({ "code": "try { await tools.fetchDoc({ file_path: 'a.md' }) } catch (e) { 'stopped: ' + e.message }" }),
        )]),
        Reply::text("Done."),
    ]);
    let h = harness(
        &ws,
        &server,
        Docs {
            seen: Arc::default(),
            delay: Duration::from_secs(4),
        },
    );
    let started = Instant::now();
    let _ = archmax_tests::send(&h, "t1", "go");
    let elapsed = started.elapsed();
    let messages = h.session_messages("t1").expect("messages");
    let result = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        result.contains(
            "'fetch_doc' was stopped: state 'work' exceeded its time budget (timeoutMs: 400)"
        ),
        "{result}"
    );
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
}

/// A host tool that writes `path` through its call's workspace and answers what it got.
struct Upload;

impl HostTool for Upload {
    fn name(&self) -> &str {
        "upload"
    }
    fn description(&self) -> &str {
        "Uploads a note through the call's workspace."
    }
    fn schema(&self) -> Value {
        json!({ "type": "object", "properties": { "path": { "type": "string" } } })
    }
    fn call<'a>(&'a self, args: Value, ctx: ToolContext) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let path = args["path"].as_str().unwrap_or_default().to_string();
            let ws = ctx.workspace.ok_or("no workspace")?;
            Ok(match ws.upload(&path, b"x") {
                Ok(()) => format!("wrote {path}"),
                Err(e) => format!("refused: {e}"),
            })
        })
    }
}

#[test]
fn a_host_tools_workspace_inside_a_child_is_bound_by_the_callers_forbid_always() {
    let ws = TempWorkspace::new(&[
        (
            "workflows/orders/workflow.yaml",
            "tools:\n  forbid_always: [{ tool: write_file, paths: ['scratchpad/secret/**'] }]\nstates:\n  work:\n    triggers: { manual: }\n    tools: { allow: [archmax_workflow_leaf] }\n",
        ),
        (
            "workflows/leaf/workflow.yaml",
            "states:\n  s:\n    triggers: { manual: { description: Leaf } }\n    tools: { allow: [upload, write_file] }\n",
        ),
    ]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![("c1", "archmax_workflow_leaf", json!({}))]),
        Reply::tool_calls(vec![
            ("l1", "upload", json!({ "path": "scratchpad/secret/a.md" })),
            ("l2", "upload", json!({ "path": "scratchpad/open/b.md" })),
        ]),
        Reply::text("Leaf done."),
        Reply::text("Done."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |o| {
        o.tools = vec![Arc::new(Upload)];
    });
    let out = archmax_tests::send(&h, "u-1", "Go.");
    assert_eq!(out.kind, archmax_machine::OutcomeKind::Completed, "{out:?}");
    let results = tool_results(&server.requests()[2]);
    assert_eq!(
        results,
        vec![
            "refused: [workflow] BLOCKED: 'write_file' on 'scratchpad/secret/a.md' is forbidden by the workflow inherited from workflow 'orders' (tools.forbid_always: paths=scratchpad/secret/**). A denial beats every grant, so no allow entry here permits it.".to_string(),
            "wrote scratchpad/open/b.md".to_string(),
        ]
    );
}
