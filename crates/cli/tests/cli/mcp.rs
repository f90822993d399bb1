//! MCP servers through the CLI, against the real `@modelcontextprotocol/server-everything`:
//! `archmax run` calls a granted tool, `archmax tools` prints the governance matrix with the
//! server's tools, `archmax validate` reads `.mcp.json`.

use serde_json::{Value, json};

use crate::scripted::{Reply, ScriptedServer, tool_results};
use crate::support::{Workspace, cli};

fn everything() -> Option<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if path.is_file() {
        return Some(path.to_string_lossy().into_owned());
    }
    assert!(
        std::env::var("CI").map_or(true, |v| v != "true"),
        "{} is not installed: run npm ci",
        path.display()
    );
    eprintln!("skipped: server-everything is not installed");
    None
}

const SPEC: &str = r#"
states:
  lookup:
    triggers: { manual: }
    tools:
      allow: [{ tool: mcp__everything__echo, args: { message: ["hi*"] } }]
    transitions: [{ to: all, description: Everything. }]
  all:
    tools:
      allow: [mcp__everything]
      forbid: [mcp__everything__get-env]
"#;

fn workspace(script: &str) -> Workspace {
    let mcp =
        json!({ "mcpServers": { "everything": { "command": "node", "args": [script, "stdio"] } } });
    Workspace::new(&[
        ("workflows/w/workflow.yaml", SPEC),
        (".mcp.json", &mcp.to_string()),
    ])
}

#[test]
fn run_calls_a_granted_mcp_tool_and_tools_prints_the_matrix() {
    let Some(script) = everything() else {
        return;
    };
    let ws = workspace(&script);
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![
            (
                "c1",
                "mcp__everything__echo",
                json!({ "message": "hi there" }),
            ),
            ("c2", "mcp__everything__echo", json!({ "message": "bye" })),
        ]),
        Reply::text("Said hi."),
    ])
    .expect("server");
    let r = cli(&ws, Some(&server), &["run", "w", "say hi"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let results = tool_results(&server.requests()[1]);
    assert_eq!(results[0], "Echo: hi there");
    assert!(
        results[1].starts_with("[workflow] BLOCKED:"),
        "{}",
        results[1]
    );

    let r = cli(&ws, None, &["tools", "w"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let line = |name: &str| {
        r.out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_default()
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        line("mcp__everything__echo"),
        ["mcp__everything__echo", "guarded", "allowed"],
        "{}",
        r.out
    );
    assert_eq!(
        line("mcp__everything__get-sum"),
        ["mcp__everything__get-sum", "·", "allowed"],
        "{}",
        r.out
    );
    assert_eq!(
        line("mcp__everything__get-env"),
        ["mcp__everything__get-env", "·", "denied"],
        "{}",
        r.out
    );
    // A terminal state shows no archmax_advance.
    assert_eq!(line("archmax_advance")[1..], ["always", "·"], "{}", r.out);
    assert!(
        r.out
            .contains("mcp__everything__echo in lookup: only mcp__everything__echo(message=hi*)"),
        "{}",
        r.out
    );
    assert!(r.out.contains("  everything: "), "{}", r.out);

    let r = cli(&ws, None, &["tools", "w", "--json"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).expect("json");
    let echo = v["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["name"] == "mcp__everything__echo")
        .cloned()
        .unwrap_or_default();
    assert_eq!(echo["source"], "mcp");
    assert_eq!(echo["server"], "everything");
    assert_eq!(echo["states"]["lookup"]["standing"], "granted");
    assert_eq!(
        echo["states"]["lookup"]["guard"],
        "mcp__everything__echo(message=hi*)"
    );
    assert_eq!(v["servers"][0]["name"], "everything");
}

#[test]
fn validate_reads_the_mcp_json() {
    let ws = Workspace::new(&[
        ("workflows/w/workflow.yaml", SPEC),
        (
            ".mcp.json",
            "{\"mcpServers\": {\"everything\": {\"command\": \"node\", \"cwdd\": \".\"}}}",
        ),
    ]);
    let r = cli(&ws, None, &["validate", "w"]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(r.err.contains(".mcp.json:1:"), "{}", r.err);
    assert!(r.err.contains("cwdd"), "{}", r.err);
}
