//! Traces of the example's refund flow, exported over OTLP/HTTP (JSON) to a receiver on
//! 127.0.0.1: the turn that parks at `refund-review`, then `archmax decide` in another
//! process, whose turn links to the first. Also: message contents only when asked, the
//! `ARCHMAX_LOG` lines carrying the trace ids, and nothing sent when export is off.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::otlp::{Receiver, Span};
use crate::scripted::{Reply, ScriptedServer};
use crate::support::{Ran, Workspace, cli_with};

const REFUND: &str = r#"{"order_id":"KK-2043","decision":"partial_refund","amount":10,"currency":"EUR","limit":300,"reason":"Delayed past the promise."}"#;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir").flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

/// A copy of `examples/customer-support`.
fn example() -> Workspace {
    let ws = Workspace::new(&[]);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/customer-support");
    copy_dir(&root, ws.root());
    // Its MCP server (mcp/shop.mjs) imports the MCP SDK: resolved through a link beside it.
    let _ = std::os::unix::fs::symlink(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../node_modules"),
        ws.root().join("mcp/node_modules"),
    );
    ws
}

/// The refund flow up to the park at `refund-review`, then the approved branch.
fn refund_script() -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "refund-request", "reason": "wants money back" }),
        )])
        .with_usage(json!({ "prompt_tokens": 812, "completion_tokens": 24 })),
        Reply::tool_calls(vec![
            (
                "c2",
                "archmax_set_variables",
                json!({ "variables": { "order_id": "KK-2043" } }),
            ),
            (
                "c3",
                "write_file",
                json!({ "file_path": "scratchpad/refund.json", "content": REFUND }),
            ),
            (
                "c4",
                "archmax_advance",
                json!({ "to": "refund-review", "reason": "proposal written" }),
            ),
        ]),
        Reply::text("A colleague will review your refund."),
        // The refund paid through the example's shop MCP server (a real one, over stdio).
        Reply::tool_calls(vec![(
            "c6",
            "mcp__shop__issue_refund",
            json!({ "order_id": "KK-2043", "amount": 10, "currency": "EUR" }),
        )]),
        Reply::tool_calls(vec![(
            "c5",
            "write_file",
            json!({ "file_path": "outbox/refund-KK-2043.md", "content": "KK-2043: 10.00 EUR." }),
        )]),
        Reply::text("Your refund of 10.00 EUR is confirmed."),
    ]
}

fn otel_env(receiver: &Receiver) -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base_url()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json".to_string()),
        ("OTEL_SERVICE_NAME", "refund-desk".to_string()),
    ]
}

/// The refund flow's first turn (it parks at `refund-review`), with `env`.
fn run_parked(ws: &Workspace, server: &ScriptedServer, env: &[(&str, String)]) -> Ran {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let args = [
        "run",
        "order-lookup",
        "I want a refund for KK-2043",
        "--session",
        "r-1",
    ];
    let r = cli_with(ws, Some(server), &env, false, &args);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out.contains("A colleague will review your refund."),
        "{}",
        r.out
    );
    r
}

/// Every file of session `id`, concatenated (its state is among them).
fn session_text(ws: &Workspace, id: &str) -> String {
    fn walk(dir: &Path, out: &mut String) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    let mut out = String::new();
    walk(&ws.root().join("sessions").join(id), &mut out);
    assert!(!out.is_empty(), "session {id} has files");
    out
}

fn one<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found: Vec<&Span> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one '{name}' span in {:#?}", names(spans));
    found[0]
}

fn names(spans: &[Span]) -> Vec<String> {
    spans.iter().map(|s| s.name.clone()).collect()
}

fn children<'a>(spans: &'a [Span], parent: &Span) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|s| s.parent_span_id == parent.span_id && s.trace_id == parent.trace_id)
        .collect()
}

fn tool<'a>(spans: &'a [Span], call_id: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.attr("gen_ai.tool.call.id") == Some(call_id))
        .unwrap_or_else(|| panic!("no span of call {call_id} in {:#?}", names(spans)))
}

#[test]
fn the_refund_flow_is_one_span_tree_per_turn_and_the_decision_links_to_the_park() {
    let receiver = Receiver::start().expect("receiver");
    let ws = example();
    let server = ScriptedServer::start(refund_script()).expect("server");
    let env = otel_env(&receiver);
    run_parked(&ws, &server, &env);

    let first = receiver.spans();
    assert!(
        receiver
            .request_heads()
            .iter()
            .all(|(path, ct)| path == "/v1/traces" && ct == "application/json"),
        "{:?}",
        receiver.request_heads()
    );
    let turn = one(&first, "invoke_agent order-lookup");
    assert_eq!(turn.parent_span_id, "");
    assert_eq!(turn.service, "refund-desk");
    assert_eq!(turn.attr("gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(turn.attr("archmax.session.id"), Some("r-1"));
    assert_eq!(turn.attr("archmax.workflow"), Some("order-lookup"));
    assert_eq!(turn.attr("archmax.disposition"), Some("turn"));
    assert_eq!(turn.attr("archmax.outcome"), Some("parked"));
    assert_eq!(turn.attr("archmax.state"), Some("refund-review"));
    // The turn's spend so far, as the spending caps count it (input + output tokens).
    assert_eq!(
        turn.attributes
            .get("archmax.turn.tokens")
            .and_then(serde_json::Value::as_i64),
        Some(812 + 24),
        "{:?}",
        turn.attributes
    );
    assert!(
        first.iter().all(|s| s.trace_id == turn.trace_id),
        "one trace"
    );

    // turn → states (in order) and the park.
    let mut under_turn: Vec<String> = children(&first, turn)
        .iter()
        .map(|s| s.name.clone())
        .collect();
    under_turn.sort();
    assert_eq!(
        under_turn,
        [
            "park refund-review",
            "state classify",
            "state refund-request",
            "state refund-review"
        ]
    );
    let park = one(&first, "park refund-review");
    let stored = format!("00-{}-{}-01", turn.trace_id, turn.span_id);
    assert!(session_text(&ws, "r-1").contains(&format!("\"parkTrace\":\"{stored}\"")));
    assert_eq!(park.attr("archmax.park.kind"), Some("decision"));

    // Each state → its model call and tool calls.
    let classify = one(&first, "state classify");
    let request = one(&first, "state refund-request");
    let review = one(&first, "state refund-review");
    let under = |s: &Span| {
        let mut n: Vec<String> = children(&first, s).iter().map(|c| c.name.clone()).collect();
        n.sort();
        n
    };
    assert_eq!(
        under(classify),
        ["chat scripted-model", "execute_tool archmax_advance"]
    );
    assert_eq!(
        under(request),
        [
            "chat scripted-model",
            "execute_tool archmax_advance",
            "execute_tool archmax_set_variables",
            "execute_tool write_file"
        ]
    );
    assert_eq!(under(review), ["chat scripted-model"]);

    let chat = children(&first, classify)
        .into_iter()
        .find(|s| s.name == "chat scripted-model")
        .expect("chat");
    assert_eq!(chat.attr("gen_ai.operation.name"), Some("chat"));
    assert_eq!(chat.attr("gen_ai.request.model"), Some("scripted-model"));
    assert_eq!(chat.attr("gen_ai.response.model"), Some("scripted-model"));
    assert!(
        chat.attributes["gen_ai.usage.input_tokens"].is_i64(),
        "{chat:?}"
    );
    assert!(
        chat.attributes["gen_ai.usage.output_tokens"].is_i64(),
        "{chat:?}"
    );
    assert_eq!(
        chat.attr("gen_ai.response.finish_reasons"),
        Some(r#"["tool_calls"]"#)
    );
    assert!(
        first
            .iter()
            .all(|s| !s.attributes.contains_key("gen_ai.input.messages")),
        "no message contents unless asked"
    );

    let write = tool(&first, "c3");
    assert_eq!(write.name, "execute_tool write_file");
    assert_eq!(write.attr("gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(write.attr("gen_ai.tool.name"), Some("write_file"));
    assert_eq!(write.attr("archmax.governance.decision"), Some("allowed"));
    assert!(
        write
            .attr("archmax.governance.rule")
            .is_some_and(|r| !r.is_empty()),
        "{write:?}"
    );
    assert_eq!(write.attr("archmax.tool.status"), Some("ok"));
    assert!(
        write.attributes["archmax.tool.duration_ms"].is_f64(),
        "{write:?}"
    );

    // The move to review runs the refund state's after hook inside its tool call.
    let to_review = tool(&first, "c4");
    let hooks = children(&first, to_review);
    assert_eq!(
        names(&hooks.iter().map(|s| (*s).clone()).collect::<Vec<_>>()),
        ["hook after hooks/check-refund.js"]
    );
    assert_eq!(hooks[0].attr("archmax.hook.verdict"), Some("ok"));
    assert_eq!(hooks[0].attr("archmax.hook.phase"), Some("after"));

    // `archmax decide` in another process: its turn links to the parked turn.
    let before = first.len();
    decide_approved(&ws, &server, &env);
    let all = receiver.wait_for(before + 1, Duration::from_secs(10));
    let second: Vec<Span> = all.into_iter().skip(before).collect();
    let resumed = one(&second, "invoke_agent order-lookup");
    assert_eq!(resumed.attr("archmax.disposition"), Some("decide"));
    assert_eq!(resumed.attr("archmax.outcome"), Some("completed"));
    assert_ne!(resumed.trace_id, turn.trace_id, "a trace per process");
    assert_eq!(
        resumed.links,
        [(turn.trace_id.clone(), turn.span_id.clone())]
    );
    assert_eq!(
        resumed.attr("archmax.resumes"),
        Some(format!("00-{}-{}-01", turn.trace_id, turn.span_id).as_str())
    );
    let approved = one(&second, "state refund-approved");
    assert_eq!(approved.parent_span_id, resumed.span_id);
    assert_eq!(tool(&second, "c5").parent_span_id, approved.span_id);
    // An MCP tool's span names its server and the tool as the server lists it.
    let refund = tool(&second, "c6");
    assert_eq!(refund.name, "execute_tool mcp__shop__issue_refund");
    assert_eq!(refund.attr("archmax.mcp.server"), Some("shop"));
    assert_eq!(refund.attr("archmax.mcp.tool"), Some("issue_refund"));
    assert_eq!(refund.attr("archmax.tool.status"), Some("ok"));
    assert!(write.attr("archmax.mcp.server").is_none(), "{write:?}");
}

#[test]
fn message_contents_only_when_asked_and_the_log_lines_carry_the_trace_ids() {
    let receiver = Receiver::start().expect("receiver");
    let ws = example();
    let server = ScriptedServer::start(refund_script()).expect("server");
    let log = ws.root().join("archmax.log");
    let mut env = otel_env(&receiver);
    env.push((
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
        "true".into(),
    ));
    env.push(("ARCHMAX_LOG", "archmax_machine=info".into()));
    env.push(("ARCHMAX_LOG_FILE", log.display().to_string()));
    run_parked(&ws, &server, &env);

    let spans = receiver.spans();
    let turn = one(&spans, "invoke_agent order-lookup");
    let chats: Vec<&Span> = spans
        .iter()
        .filter(|s| s.attr("gen_ai.operation.name") == Some("chat"))
        .collect();
    assert_eq!(chats.len(), 3);
    assert!(
        chats[0]
            .attr("gen_ai.input.messages")
            .is_some_and(|m| m.contains("I want a refund for KK-2043")),
        "{:?}",
        chats[0]
    );
    assert!(
        chats.iter().any(|c| c
            .attr("gen_ai.output.messages")
            .is_some_and(|m| m.contains("A colleague will review your refund."))),
        "{chats:?}"
    );

    let text = std::fs::read_to_string(&log).expect("log file");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let ended = lines
        .iter()
        .find(|l| l["fields"]["message"] == "turn ended")
        .unwrap_or_else(|| panic!("no 'turn ended' line in {text}"));
    assert_eq!(ended["level"], "INFO");
    assert_eq!(ended["fields"]["outcome"], "parked");
    assert_eq!(ended["trace_id"], turn.trace_id.as_str());
    assert_eq!(ended["span_id"], turn.span_id.as_str());
    let closed_chat = lines
        .iter()
        .find(|l| l["message"] == "span closed" && l["span"] == "gen_ai.chat")
        .unwrap_or_else(|| panic!("no closed chat span in {text}"));
    assert_eq!(closed_chat["trace_id"], turn.trace_id.as_str());
    assert!(
        spans
            .iter()
            .any(|s| Some(s.span_id.as_str()) == closed_chat["span_id"].as_str()),
        "the log's span id is an exported span's: {closed_chat}"
    );
}

#[test]
fn nothing_is_sent_without_an_endpoint_or_with_the_sdk_disabled() {
    let receiver = Receiver::start().expect("receiver");
    let ws = example();
    let server = ScriptedServer::start(refund_script()).expect("server");
    let mut env = otel_env(&receiver);
    env.push(("OTEL_SDK_DISABLED", "true".into()));
    run_parked(&ws, &server, &env);
    assert_eq!(receiver.requests(), 0);
    assert!(!session_text(&ws, "r-1").contains("parkTrace"));

    let ws = example();
    let server = ScriptedServer::start(refund_script()).expect("server");
    run_parked(&ws, &server, &[("OTEL_SERVICE_NAME", "refund-desk".into())]);
    assert_eq!(receiver.requests(), 0);
    assert!(!session_text(&ws, "r-1").contains("parkTrace"));
}

/// `archmax decide r-1 --to refund-approved` in another process, with `env`.
fn decide_approved(ws: &Workspace, server: &ScriptedServer, env: &[(&str, String)]) {
    let out = Command::new(env!("CARGO_BIN_EXE_archmax"))
        .args(["decide", "r-1", "--to", "refund-approved"])
        .current_dir(ws.root())
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("ARCHMAX_API_BASE_URL", server.url())
        .env("ARCHMAX_API_KEY", "test-key")
        .env("ARCHMAX_MODEL", "scripted-model")
        .env("ARCHMAX_CLI_NO_BANNER", "1")
        .env("SHOP_LEDGER", ws.root().join("ledger.jsonl"))
        .output()
        .expect("archmax decide");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each span as (name, its parent's name, its tool call id), sorted: the tree without ids.
fn shape(spans: &[Span]) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = spans
        .iter()
        .map(|s| {
            let parent = spans
                .iter()
                .find(|p| p.span_id == s.parent_span_id && p.trace_id == s.trace_id)
                .map(|p| p.name.clone())
                .unwrap_or_default();
            let call = s.attr("gen_ai.tool.call.id").unwrap_or_default();
            (s.name.clone(), parent, call.to_string())
        })
        .collect();
    out.sort();
    out
}

#[test]
fn over_grpc_the_refund_flow_gives_the_same_span_tree_with_its_headers_as_metadata() {
    // The flow over HTTP/JSON, the reference.
    let http = Receiver::start().expect("receiver");
    let ws = example();
    let server = ScriptedServer::start(refund_script()).expect("server");
    let env = otel_env(&http);
    run_parked(&ws, &server, &env);
    let parked = http.spans().len();
    decide_approved(&ws, &server, &env);
    let reference = http.wait_for(parked + 1, Duration::from_secs(10));

    // The same over gRPC: a park, then the decision in another process.
    let grpc = Receiver::start_grpc().expect("grpc receiver");
    let ws = example();
    let server = ScriptedServer::start(refund_script()).expect("server");
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", grpc.base_url()),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_string()),
        ("OTEL_SERVICE_NAME", "refund-desk".to_string()),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "x-team=refund%20desk".to_string(),
        ),
    ];
    let r = run_parked(&ws, &server, &env);
    assert!(!r.err.contains("Warning"), "{}", r.err);
    let first = grpc.spans();
    assert_eq!(
        first.len(),
        parked,
        "the parked turn's spans, sent before it exited"
    );
    decide_approved(&ws, &server, &env);
    let all = grpc.wait_for(reference.len(), Duration::from_secs(10));

    assert_eq!(shape(&all), shape(&reference));
    assert!(
        grpc.request_heads().iter().all(|(path, ct)| path
            == "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
            && ct.starts_with("application/grpc")),
        "{:?}",
        grpc.request_heads()
    );
    assert!(
        grpc.request_headers()
            .iter()
            .all(|m| m.get("x-team").map(String::as_str) == Some("refund desk")),
        "{:?}",
        grpc.request_headers()
    );
    let turn = one(&first, "invoke_agent order-lookup");
    assert_eq!(turn.service, "refund-desk");
    assert_eq!(turn.attr("archmax.outcome"), Some("parked"));
    let second: Vec<Span> = all.into_iter().skip(first.len()).collect();
    let resumed = one(&second, "invoke_agent order-lookup");
    assert_eq!(resumed.attr("archmax.outcome"), Some("completed"));
    assert_eq!(
        resumed.links,
        [(turn.trace_id.clone(), turn.span_id.clone())]
    );
    let write = tool(&first, "c3");
    assert_eq!(write.attr("gen_ai.tool.name"), Some("write_file"));
    assert!(
        write.attributes["archmax.tool.duration_ms"].is_f64(),
        "{write:?}"
    );
}

#[test]
fn a_grpc_endpoint_that_refuses_is_reported_and_the_run_goes_on() {
    // Nothing listens on the port: the export fails, the run does not.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let ws = example();
    let server = ScriptedServer::start(refund_script()).expect("server");
    let env = [
        (
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            format!("http://127.0.0.1:{port}"),
        ),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc".to_string()),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "2000".to_string()),
    ];
    let r = run_parked(&ws, &server, &env);
    assert!(session_text(&ws, "r-1").contains("refund-review"));
    assert!(
        r.err.contains(&format!(
            "Warning: cannot send the spans to 'http://127.0.0.1:{port}'"
        )),
        "the failed export is reported: {}",
        r.err
    );
}
