//! MCP tools through the harness, against the real `@modelcontextprotocol/server-everything`
//! over stdio: a state grants one tool or a whole server, the kernel refuses the rest with
//! its own texts, arguments are checked against the tool's schema, an error result is a
//! tool error the turn goes on from, and progress becomes events.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use archmax_machine::{Envelope, Event, EventSink, OutcomeKind};
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, tool_results};
use serde_json::{Value, json};

/// The installed server, or `None` (after saying why); under `CI=true` a missing one fails.
pub(crate) fn everything() -> Option<PathBuf> {
    let path = archmax_tests::repo_root()
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if path.is_file() {
        return Some(path);
    }
    let why = format!("{} is not installed: run npm ci", path.display());
    assert!(std::env::var("CI").map_or(true, |v| v != "true"), "{why}");
    eprintln!("skipped: {why}");
    None
}

/// A `.mcp.json` declaring server-everything over stdio as `everything`.
pub(crate) fn mcp_json(script: &std::path::Path) -> String {
    json!({ "mcpServers": { "everything": { "command": "node", "args": [script, "stdio"] } } })
        .to_string()
}

const SPEC: &str = r#"
states:
  lookup:
    triggers: { manual: }
    tools:
      allow: [mcp__everything__echo]
    transitions: [{ to: all, description: Everything. }]
  all:
    tools:
      allow: [mcp__everything]
      forbid: [mcp__everything__get-env]
"#;

#[derive(Default)]
struct Events(Mutex<Vec<Event>>);

impl EventSink for Events {
    fn emit(&self, e: &Envelope) {
        if let Ok(mut v) = self.0.lock() {
            v.push(e.event.clone());
        }
    }
}

#[test]
fn a_state_grants_an_mcp_tool_or_a_whole_server_and_the_kernel_refuses_the_rest() {
    let Some(script) = everything() else {
        return;
    };
    let ws = TempWorkspace::new(&[
        ("workflows/w/workflow.yaml", SPEC),
        (".mcp.json", &mcp_json(&script)),
    ]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            ("c1", "mcp__everything__echo", json!({ "message": "hi" })),
            ("c2", "mcp__everything__get-sum", json!({ "a": 1, "b": 2 })),
            ("c3", "mcp__everything__echo", json!({ "message": 5 })),
        ]),
        Reply::tool_calls(vec![(
            "c4",
            "archmax_advance",
            json!({ "to": "all", "reason": "next" }),
        )]),
        Reply::tool_calls(vec![
            ("c5", "mcp__everything__get-sum", json!({ "a": 1, "b": 2 })),
            ("c6", "mcp__everything__get-env", json!({})),
            (
                "c7",
                "mcp__everything__trigger-long-running-operation",
                json!({ "duration": 1, "steps": 3 }),
            ),
        ]),
        Reply::text("Done."),
    ]);
    let events = Arc::new(Events::default());
    let sink = Arc::clone(&events);
    let h = archmax_tests::harness(ws.root(), "w", &server, "m", move |o| {
        o.events = sink;
    });
    let out = archmax_tests::send(&h, "s1", "go");
    assert_eq!(out.kind, OutcomeKind::Completed, "{:?}", out.reply);
    let requests = server.requests();
    let offered = |n: usize| -> Vec<String> {
        requests[n]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
            .filter(|t| t.starts_with("mcp__"))
            .collect()
    };
    // One tool where one is granted; the server's tools (but the forbidden one) where it is.
    assert_eq!(offered(0), ["mcp__everything__echo"]);
    let all = offered(2);
    assert!(
        all.contains(&"mcp__everything__get-sum".to_string()),
        "{all:?}"
    );
    assert!(
        !all.contains(&"mcp__everything__get-env".to_string()),
        "{all:?}"
    );
    let echo = requests[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["function"]["name"] == "mcp__everything__echo")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(
        echo["function"]["parameters"]["properties"]["message"]["type"],
        "string"
    );

    let first = tool_results(&requests[1]);
    assert_eq!(first[0], "Echo: hi");
    assert!(
        first[1].starts_with("[workflow] BLOCKED: 'mcp__everything__get-sum'"),
        "{}",
        first[1]
    );
    assert!(
        first[2].starts_with("Error:") && first[2].contains("message"),
        "{}",
        first[2]
    );
    let all_results = tool_results(&requests[3]);
    let third = &all_results[all_results.len() - 3..];
    assert!(third[0].contains('3'), "{}", third[0]);
    assert!(
        third[1].starts_with("[workflow] BLOCKED: 'mcp__everything__get-env'"),
        "{}",
        third[1]
    );
    let progress = events
        .0
        .lock()
        .map(|v| {
            v.iter()
                .filter(|e| matches!(e, Event::ToolProgress { call_id, .. } if call_id == "c7"))
                .count()
        })
        .unwrap_or(0);
    assert!(progress >= 2, "progress events: {progress}");
}

#[test]
fn validate_reads_the_mcp_json_with_positions_and_warns_of_undeclared_servers() {
    let ws = TempWorkspace::new(&[
        (
            "workflows/w/workflow.yaml",
            SPEC.replace("mcp__everything__echo", "mcp__crm__lookup")
                .as_str(),
        ),
        (
            ".mcp.json",
            "{\n  \"mcpServers\": {\n    \"everything\": { \"command\": \"node\", \"argz\": [] },\n    \"remote\": { \"type\": \"http\" }\n  }\n}\n",
        ),
    ]);
    let result = archmax_machine::mcp::validate_workspace(
        ws.root(),
        &archmax_spec::ValidateOptions::new("w"),
    );
    assert!(!result.valid);
    let lines: Vec<String> = result
        .diagnostics
        .iter()
        .map(|d| {
            format!(
                "{:?} {} {}:{}:{} {}",
                d.severity,
                d.file.as_deref().unwrap_or(""),
                d.field.as_deref().unwrap_or(""),
                d.line.unwrap_or(0),
                d.column.unwrap_or(0),
                d.message
            )
        })
        .collect();
    let text = lines.join("\n");
    assert!(
        text.contains(".mcp.json mcpServers.everything.argz:3:"),
        "{text}"
    );
    assert!(text.contains("mcpServers.remote"), "{text}");
    assert!(
        text.contains("names MCP server 'crm' (mcp__crm…), which .mcp.json does not declare"),
        "{text}"
    );
}

/// server-filesystem over stdio, rooted at the workspace, its path arguments declared in
/// `.mcp.json`: the kernel governs them as a host tool's `paths` (outside the workspace and
/// the session store refused with its rule ids) before the server sees the call.
#[test]
fn a_filesystem_servers_declared_path_arguments_are_governed_by_the_kernels_zones() {
    let path = archmax_tests::repo_root()
        .join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    if !path.is_file() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "{} is not installed: run npm ci",
            path.display()
        );
        eprintln!("skipped: server-filesystem is not installed");
        return;
    }
    const FS_SPEC: &str = r#"
states:
  files:
    triggers: { manual: }
    tools:
      allow:
        - mcp__fs__read_text_file
        - { tool: mcp__fs__write_file, args: { path: ["notes/*"] } }
"#;
    let outside = TempWorkspace::new(&[("secret.txt", "not yours")]);
    let ws = TempWorkspace::new(&[
        ("workflows/w/workflow.yaml", FS_SPEC),
        ("notes/a.txt", "hello from the workspace"),
        ("sessions/other/checkpoints/state.json", "{\"secret\": 1}"),
    ]);
    let root = ws.root().canonicalize().expect("root");
    let config = json!({ "mcpServers": { "fs": {
        "command": "node",
        "args": [path, root, outside.root().canonicalize().expect("outside")],
        "paths": {
            "read_text_file": { "path": "read" },
            "write_file": { "path": "write" }
        }
    } } });
    std::fs::write(root.join(".mcp.json"), config.to_string()).expect("write");
    let secret = outside
        .root()
        .canonicalize()
        .expect("outside")
        .join("secret.txt");
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            (
                "c1",
                "mcp__fs__read_text_file",
                json!({ "path": root.join("notes/a.txt") }),
            ),
            ("c2", "mcp__fs__read_text_file", json!({ "path": secret })),
            (
                "c3",
                "mcp__fs__read_text_file",
                json!({ "path": root.join("sessions/other/checkpoints/state.json") }),
            ),
            (
                "c4",
                "mcp__fs__write_file",
                json!({ "path": root.join("notes/b.txt"), "content": "written" }),
            ),
            (
                "c5",
                "mcp__fs__write_file",
                json!({ "path": root.join("other.txt"), "content": "no" }),
            ),
        ]),
        Reply::text("Done."),
    ]);
    let h = archmax_tests::harness(ws.root(), "w", &server, "m", |_| {});
    let out = archmax_tests::send(&h, "f1", "go");
    assert_eq!(out.kind, OutcomeKind::Completed, "{:?}", out.reply);
    let results = tool_results(&server.requests()[1]);
    assert_eq!(results[0], "hello from the workspace");
    // The server itself may read `outside` (it was given that root): the kernel refuses first.
    assert_eq!(
        results[1],
        format!(
            "Path \"{}\" resolves outside the workspace root; workspace paths may not traverse above it.",
            secret.display()
        )
    );
    assert!(results[2].contains("session store"), "{}", results[2]);
    // A guard on a path argument is matched against the workspace path the real one names.
    assert!(
        results[4].starts_with("[workflow] BLOCKED: 'mcp__fs__write_file'"),
        "{}",
        results[4]
    );
    assert!(!root.join("other.txt").exists());
    assert_eq!(
        std::fs::read_to_string(root.join("notes/b.txt")).unwrap_or_default(),
        "written",
        "{}",
        results[3]
    );
}
