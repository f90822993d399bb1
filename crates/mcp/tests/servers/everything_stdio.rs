//! server-everything over stdio: tools, every kind of result, progress,
//! cancellation, timeouts, argument checks, the environment a child sees,
//! server-initiated requests.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use archmax_mcp::{
    CallOptions, CancellationToken, ElicitAnswer, McpError, McpEvent, McpHost, McpPool, Progress,
};
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use crate::need;
use crate::support::{Events, TempDir, config_of, node_server, pool, repo_root};

fn opts() -> CallOptions {
    CallOptions::default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_tools_and_maps_every_kind_of_result() {
    let script = need!("server-everything");
    let (pool, events) = pool(node_server("everything", &script, &["stdio"]));

    let tools = pool.tools("everything").await.unwrap();
    let names: BTreeSet<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "mcp__everything__echo",
        "mcp__everything__get-sum",
        "mcp__everything__get-tiny-image",
        "mcp__everything__get-structured-content",
        "mcp__everything__get-resource-links",
        "mcp__everything__get-env",
        "mcp__everything__trigger-long-running-operation",
    ] {
        assert!(names.contains(expected), "{expected} in {names:?}");
    }
    assert_eq!(tools.skipped, []);
    let echo = tools.by_name("mcp__everything__echo").unwrap();
    assert_eq!(echo.tool, "echo");
    assert_eq!(echo.input_schema["properties"]["message"]["type"], "string");
    assert_eq!(
        pool.parse_tool_name("mcp__everything__get-sum"),
        Some(("everything".to_string(), "get-sum".to_string()))
    );
    assert_eq!(pool.parse_tool_name("mcp__everything__nope"), None);
    let started: Vec<McpEvent> = events
        .all()
        .into_iter()
        .filter(|e| !matches!(e, McpEvent::ToolsChanged { .. }))
        .collect();
    assert!(
        matches!(&started[..], [McpEvent::Started { server, pid: Some(_) }] if server == "everything"),
        "{started:?}"
    );

    let r = pool
        .call("everything", "echo", json!({"message": "hello"}), opts())
        .await
        .unwrap();
    assert_eq!(r.text, "Echo: hello");
    assert!(!r.is_error);

    let r = pool
        .call("everything", "get-sum", json!({"a": 2, "b": 40}), opts())
        .await
        .unwrap();
    assert_eq!(r.text, "The sum of 2 and 40 is 42.");

    let r = pool
        .call("everything", "get-tiny-image", json!({}), opts())
        .await
        .unwrap();
    assert_eq!(r.images.len(), 1);
    assert_eq!(r.images[0].mime_type, "image/png");
    assert!(r.images[0].data.starts_with("iVBOR"), "a base64 PNG");
    assert_eq!(
        r.text,
        "Here's the image you requested:\nThe image above is the MCP logo."
    );

    let r = pool
        .call(
            "everything",
            "get-structured-content",
            json!({"location": "Chicago"}),
            opts(),
        )
        .await
        .unwrap();
    assert_eq!(
        r.structured,
        Some(json!({"temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82}))
    );

    let r = pool
        .call(
            "everything",
            "get-resource-links",
            json!({"count": 2}),
            opts(),
        )
        .await
        .unwrap();
    let lines: Vec<&str> = r.text.lines().collect();
    assert_eq!(lines.len(), 3, "{}", r.text);
    assert!(
        lines[1].starts_with("[resource: Blob Resource 1 "),
        "{}",
        r.text
    );
    assert!(
        lines[2].starts_with("[resource: Text Resource 2 "),
        "{}",
        r.text
    );

    let r = pool
        .call(
            "everything",
            "get-resource-reference",
            json!({"resourceType": "Text", "resourceId": 1}),
            opts(),
        )
        .await
        .unwrap();
    assert!(r.text.contains("\n[resource: "), "{}", r.text);

    // The schema's enum is checked here, before the server sees the call.
    let e = pool
        .call(
            "everything",
            "get-resource-reference",
            json!({"resourceType": "Video", "resourceId": 1}),
            opts(),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, McpError::InvalidArguments { message, .. } if message == r#"at /resourceType: "Video" is not one of "Text" or "Blob""#),
        "{e:?}"
    );

    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_bad_arguments_before_sending_anything() {
    let script = need!("server-everything");
    let wire = TempDir::new("bad-arguments");
    let (pool, _) = pool(logged_server(&script, &wire.0));

    let e = pool
        .call("everything", "get-sum", json!({"a": "2", "b": 3}), opts())
        .await
        .unwrap_err();
    assert_eq!(
        e,
        McpError::InvalidArguments {
            server: "everything".into(),
            tool: "get-sum".into(),
            message: r#"at /a: "2" is not of type "number""#.into(),
        }
    );
    assert_eq!(
        e.to_string(),
        r#"invalid arguments for tool 'get-sum' of MCP server 'everything': at /a: "2" is not of type "number""#
    );
    let e = pool
        .call("everything", "echo", json!(["hello"]), opts())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, McpError::InvalidArguments { message, .. } if message == "the arguments must be a JSON object; found an array"),
        "{e:?}"
    );
    let e = pool
        .call("everything", "echo", json!({}), opts())
        .await
        .unwrap_err();
    assert!(
        matches!(&e, McpError::InvalidArguments { message, .. } if message == r#"at the top level: "message" is a required property"#),
        "{e:?}"
    );
    assert_eq!(
        pool.call("everything", "no-such-tool", json!({}), opts())
            .await
            .unwrap_err(),
        McpError::UnknownTool {
            server: "everything".into(),
            tool: "no-such-tool".into()
        }
    );
    assert_eq!(
        pool.call("nowhere", "echo", json!({}), opts())
            .await
            .unwrap_err(),
        McpError::UnknownServer {
            server: "nowhere".into()
        }
    );
    pool.shutdown().await;
    let sent = wire_messages(&wire.0);
    assert!(
        !sent.iter().any(|m| m["method"] == "tools/call"),
        "no tools/call reached the server: {sent:?}"
    );
    assert!(sent.iter().any(|m| m["method"] == "tools/list"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_progress_in_order() {
    let script = need!("server-everything");
    let (pool, _) = pool(node_server("everything", &script, &["stdio"]));
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = seen.clone();
    let r = pool
        .call(
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 0.4, "steps": 4}),
            CallOptions {
                on_progress: Some(Arc::new(move |p| sink.lock().unwrap().push(p))),
                ..opts()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        r.text,
        "Long running operation completed. Duration: 0.4 seconds, Steps: 4."
    );
    // Notifications are handled on separate tasks: the last one may land just
    // after the result.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let seen = seen.lock().unwrap().clone();
    let steps: Vec<(f64, Option<f64>)> = seen.iter().map(|p| (p.progress, p.total)).collect();
    assert!(!steps.is_empty() && steps.len() <= 4, "{steps:?}");
    assert!(
        steps.windows(2).all(|w| w[0].0 < w[1].0),
        "increasing: {steps:?}"
    );
    assert!(steps.iter().all(|s| s.1 == Some(4.0)), "{steps:?}");
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_tells_the_server_and_returns_at_once() {
    let script = need!("server-everything");
    let wire = TempDir::new("cancel");
    let (pool, _) = pool(logged_server(&script, &wire.0));
    pool.tools("everything").await.unwrap();

    let cancel = CancellationToken::new();
    let on_first = cancel.clone();
    let started = Instant::now();
    let e = pool
        .call(
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 10, "steps": 10}),
            CallOptions {
                cancel: Some(cancel),
                on_progress: Some(Arc::new(move |_| on_first.cancel())),
                ..opts()
            },
        )
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert_eq!(
        e,
        McpError::Cancelled {
            server: "everything".into(),
            tool: "trigger-long-running-operation".into()
        }
    );
    assert!(
        took < Duration::from_secs(3),
        "ended promptly, took {took:?}"
    );

    // Still usable afterwards.
    let r = pool
        .call("everything", "echo", json!({"message": "after"}), opts())
        .await
        .unwrap();
    assert_eq!(r.text, "Echo: after");
    pool.shutdown().await;
    assert_cancelled_on_wire(
        &wire.0,
        "trigger-long-running-operation",
        "cancelled by the caller",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_its_limit_times_out_and_is_cancelled() {
    let script = need!("server-everything");
    let wire = TempDir::new("timeout");
    let (pool, _) = pool(logged_server(&script, &wire.0));
    pool.tools("everything").await.unwrap();
    let started = Instant::now();
    let e = pool
        .call(
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 5, "steps": 5}),
            CallOptions {
                timeout: Some(Duration::from_millis(400)),
                ..opts()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "tool 'trigger-long-running-operation' of MCP server 'everything' timed out after 400 ms"
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    // A caller that drops the call's future cancels it too.
    let dropped = tokio::time::timeout(
        Duration::from_millis(300),
        pool.call(
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 3, "steps": 3}),
            opts(),
        ),
    )
    .await;
    assert!(dropped.is_err());
    tokio::time::sleep(Duration::from_millis(300)).await;
    pool.shutdown().await;
    assert_cancelled_on_wire(
        &wire.0,
        "trigger-long-running-operation",
        "timed out after 400 ms",
    );
    assert_cancelled_on_wire(
        &wire.0,
        "trigger-long-running-operation",
        "the caller stopped waiting",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_sees_only_path_home_and_its_declared_variables() {
    let script = need!("server-everything");
    // The test process has variables of its own (cargo sets these); none may leak.
    assert!(std::env::var("CARGO_MANIFEST_DIR").is_ok());
    assert!(std::env::var("CARGO_PKG_NAME").is_ok());
    let lookup = |name: &str| (name == "MY_TOKEN").then(|| "s3cr3t-value".to_string());
    let config = config_of(
        &json!({"mcpServers": {"everything": {
            "command": "node",
            "args": [script, "stdio"],
            "env": {"DECLARED": "${MY_TOKEN}", "PLAIN": "plain-value"}
        }}}),
        &lookup,
    );
    let (pool, _) = pool(config);
    let r = pool
        .call("everything", "get-env", json!({}), opts())
        .await
        .unwrap();
    let env: serde_json::Map<String, Value> = serde_json::from_str(&r.text).unwrap();
    let keys: BTreeSet<&str> = env.keys().map(String::as_str).collect();
    let mut expected: BTreeSet<&str> = ["PATH", "DECLARED", "PLAIN"].into();
    if std::env::var_os("HOME").is_some() {
        expected.insert("HOME");
    }
    assert_eq!(keys, expected);
    assert_eq!(env["DECLARED"], "s3cr3t-value");
    assert_eq!(env["PATH"], std::env::var("PATH").unwrap());
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_runs_in_its_cwd_relative_to_the_root() {
    let script = need!("server-everything");
    let root = TempDir::new("cwd");
    std::fs::create_dir_all(root.0.join("tools")).unwrap();
    // A relative program is taken from the server's directory.
    let wrapper = root.0.join("tools/run.sh");
    std::fs::write(&wrapper, "#!/bin/sh\npwd >&2\nexec node \"$@\"\n").unwrap();
    set_executable(&wrapper);
    let config = config_of(
        &json!({"mcpServers": {"everything": {
            "command": "./run.sh", "args": [script, "stdio"], "cwd": "tools"
        }}}),
        &|_| None,
    );
    let events = Events::default();
    let pool = McpPool::new(config, events.options(&root.0));
    let r = pool
        .call("everything", "echo", json!({"message": "here"}), opts())
        .await
        .unwrap();
    assert_eq!(r.text, "Echo: here");
    pool.shutdown().await;
}

#[cfg(unix)]
fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A host that answers elicitations with a name and sampling with a fixed text.
struct Host {
    asked: Mutex<Vec<(String, Value)>>,
}

impl McpHost for Host {
    fn elicit<'a>(&'a self, server: &'a str, params: Value) -> BoxFuture<'a, ElicitAnswer> {
        self.asked
            .lock()
            .unwrap()
            .push((server.to_string(), params));
        async { ElicitAnswer::Accept(json!({"name": "Ada Lovelace"})) }.boxed()
    }
    fn sample<'a>(
        &'a self,
        _server: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, String>> {
        async move {
            let asked = params["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or("")
                .to_string();
            Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": format!("sampled: {asked}")},
                "model": "test-model",
                "stopReason": "endTurn"
            }))
        }
        .boxed()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_host_answers_elicitation_and_sampling_and_new_tools_are_seen() {
    let script = need!("server-everything");
    let host = Arc::new(Host {
        asked: Mutex::default(),
    });
    let events = Events::default();
    let mut options = events.options(&repo_root());
    options.host = Some(host.clone());
    let pool = McpPool::new(node_server("everything", &script, &["stdio"]), options);
    pool.tools("everything").await.unwrap();
    // With the capabilities advertised, the server registers more tools after
    // the handshake and says so.
    events
        .wait_for(|e| matches!(e, McpEvent::ToolsChanged { server } if server == "everything"))
        .await;
    let tools = pool.tools("everything").await.unwrap();
    assert!(tools.tool("trigger-elicitation-request").is_some());
    assert!(tools.tool("trigger-sampling-request").is_some());

    let r = pool
        .call(
            "everything",
            "trigger-elicitation-request",
            json!({}),
            opts(),
        )
        .await
        .unwrap();
    assert!(r.text.contains("Ada Lovelace"), "{}", r.text);
    // The fields the host left out went with the schema's defaults.
    assert!(r.text.contains("- Favorite Integer: 42"), "{}", r.text);
    assert!(
        r.text.contains("It was a dark and stormy night."),
        "{}",
        r.text
    );
    let asked = host.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].0, "everything");
    assert_eq!(
        asked[0].1["message"],
        "Please provide inputs for the following fields:"
    );

    let r = pool
        .call(
            "everything",
            "trigger-sampling-request",
            json!({"prompt": "say hi", "maxTokens": 20}),
            opts(),
        )
        .await
        .unwrap();
    assert!(
        r.text
            .contains("sampled: Resource trigger-sampling-request context: say hi"),
        "{}",
        r.text
    );
    assert!(r.text.contains("test-model"), "{}", r.text);
    pool.shutdown().await;
}

/// server-everything behind `tee`, which copies every message we send to
/// `dir/wire.jsonl`.
fn logged_server(script: &Path, dir: &Path) -> archmax_mcp::McpConfig {
    let log = dir.join("wire.jsonl");
    config_of(
        &json!({"mcpServers": {"everything": {
            "command": "sh",
            "args": ["-c", format!("tee -a \"$WIRE_LOG\" | exec node '{}' stdio", script.display())],
            "env": {"WIRE_LOG": log}
        }}}),
        &|_| None,
    )
}

/// The messages the client sent, as logged.
fn wire_messages(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("wire.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// A `notifications/cancelled` with `reason` went out for a `tools/call` of `tool`.
fn assert_cancelled_on_wire(dir: &Path, tool: &str, reason: &str) {
    let sent = wire_messages(dir);
    let calls: Vec<&Value> = sent
        .iter()
        .filter(|m| m["method"] == "tools/call" && m["params"]["name"] == tool)
        .map(|m| &m["id"])
        .collect();
    let found = sent.iter().any(|m| {
        m["method"] == "notifications/cancelled"
            && m["params"]["reason"] == reason
            && calls.contains(&&m["params"]["requestId"])
    });
    assert!(
        found,
        "a cancellation '{reason}' for a call of {tool} in {sent:#?}"
    );
}
