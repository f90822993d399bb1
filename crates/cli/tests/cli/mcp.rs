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

/// `--record` keeps the MCP servers' lists and answers in the cassette beside the model's
/// exchanges; `--replay` answers from it, so a replay needs no server: here the server's
/// command no longer exists.
#[test]
fn a_recorded_mcp_run_replays_with_no_server() {
    let Some(script) = everything() else {
        return;
    };
    let ws = workspace(&script);
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![(
            "c1",
            "mcp__everything__echo",
            json!({ "message": "hi there" }),
        )]),
        Reply::tool_calls(vec![(
            "c2",
            "archmax_advance",
            json!({ "to": "all", "reason": "next" }),
        )]),
        Reply::tool_calls(vec![(
            "c3",
            "mcp__everything__get-sum",
            json!({ "a": 2, "b": 3 }),
        )]),
        Reply::text("Said hi."),
    ])
    .expect("server");
    let args = |tape: &str| {
        vec![
            "run".to_string(),
            "w".to_string(),
            "say hi".to_string(),
            "--session".to_string(),
            "m-1".to_string(),
            tape.to_string(),
            "mcp.cassette.json".to_string(),
            "--json".to_string(),
        ]
    };
    let record: Vec<String> = args("--record");
    let record: Vec<&str> = record.iter().map(String::as_str).collect();
    let recorded = cli(&ws, Some(&server), &record);
    assert_eq!(recorded.code, 0, "{}", recorded.err);
    let results = tool_results(&server.requests()[3]);
    assert_eq!(results[0], "Echo: hi there");
    assert!(results[2].contains('5'), "{}", results[2]);
    let tape: Value = serde_json::from_str(
        &std::fs::read_to_string(ws.root().join("mcp.cassette.json")).expect("cassette"),
    )
    .expect("json");
    let kinds: Vec<&str> = tape["mcp"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["kind"].as_str())
        .collect();
    // The list once (it did not change between requests), then each call.
    assert_eq!(kinds, ["tools", "call", "call"], "{}", tape["mcp"]);

    let gone = json!({ "mcpServers": { "everything": { "command": "node", "args": ["/nonexistent/everything.js"] } } });
    let again = Workspace::new(&[
        ("workflows/w/workflow.yaml", SPEC),
        (".mcp.json", &gone.to_string()),
    ]);
    std::fs::copy(
        ws.root().join("mcp.cassette.json"),
        again.root().join("mcp.cassette.json"),
    )
    .expect("copy");
    let replay: Vec<String> = args("--replay");
    let replay: Vec<&str> = replay.iter().map(String::as_str).collect();
    let replayed = cli(&again, None, &replay);
    assert_eq!(replayed.code, 0, "{}", replayed.err);
    let outcome = |out: &str| {
        let v: Value = serde_json::from_str(out).expect("json");
        (v["state"].clone(), v["reply"].clone())
    };
    assert_eq!(outcome(&replayed.out), outcome(&recorded.out));
    let transcript = std::fs::read_to_string(
        again
            .root()
            .join("sessions/m-1/checkpoints/transcript.jsonl"),
    )
    .unwrap_or_default();
    assert!(transcript.contains("Echo: hi there"), "{transcript}");
}

/// `archmax test --record` keeps each case's MCP traffic in the case's cassette; `--replay`
/// answers from it with neither the endpoint nor the server.
#[test]
fn a_suite_records_and_replays_its_mcp_calls_case_by_case() {
    let Some(script) = everything() else {
        return;
    };
    const CASE: &str = r#"title: The agent echoes through the server
description: The agent calls the echo tool of the MCP server and says so.
steps:
  - send: say hi
  - calledTool: { name: mcp__everything__echo, input: { message: hi there } }
  - reply: { includes: Said }
"#;
    let mcp =
        json!({ "mcpServers": { "everything": { "command": "node", "args": [script, "stdio"] } } });
    let files = |mcp: &str| {
        Workspace::new(&[
            ("workflows/w/workflow.yaml", SPEC),
            ("workflows/w/tests/echo.test.yaml", CASE),
            (".mcp.json", mcp),
        ])
    };
    let ws = files(&mcp.to_string());
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![(
            "c1",
            "mcp__everything__echo",
            json!({ "message": "hi there" }),
        )]),
        Reply::text("Said hi."),
    ])
    .expect("server");
    let recorded = cli(&ws, Some(&server), &["test", "w", "--record", "--json"]);
    assert_eq!(recorded.code, 0, "{}\n{}", recorded.err, recorded.out);
    assert_eq!(
        tool_results(&server.requests()[1])[0],
        "Echo: hi there",
        "the server answered while recording"
    );
    let tape = ws.root().join("workflows/w/tests/echo.cassette.json");
    let text = std::fs::read_to_string(&tape).expect("cassette");
    assert!(text.contains("\"Echo: hi there\""), "{text}");

    let gone = json!({ "mcpServers": { "everything": { "command": "node", "args": ["/nonexistent/everything.js"] } } });
    let again = files(&gone.to_string());
    std::fs::copy(
        &tape,
        again.root().join("workflows/w/tests/echo.cassette.json"),
    )
    .expect("copy");
    let replayed = cli(&again, None, &["test", "w", "--replay", "--json"]);
    assert_eq!(replayed.code, 0, "{}\n{}", replayed.err, replayed.out);
    let v: Value = serde_json::from_str(&replayed.out).expect("json");
    assert_eq!(v["results"][0]["verdict"]["status"], "passed", "{v}");
}
