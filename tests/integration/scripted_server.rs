//! The scripted OpenAI-compatible server itself, and the in-process model that answers the
//! same scripts as the HTTP client reads them from it.

use archmax_machine::model::{
    ChatMessage, ChatRequest, ChatResponse, Model, ModelError, OpenAiClient, TextSink,
};
use archmax_tests::in_process::{IN_PROCESS_URL, InProcessModel};
use archmax_tests::scripted::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Mutex;
use std::time::Duration;

/// Sends raw HTTP/1.1 text and reads until the server closes the connection.
fn raw_exchange(server: &ScriptedServer, text: &str) -> String {
    let mut stream = TcpStream::connect(server.addr()).expect("connect");
    stream.write_all(text.as_bytes()).expect("write");
    let mut out = String::new();
    stream.read_to_string(&mut out).expect("read");
    out
}

#[test]
fn keep_alive_serves_several_requests_then_close() {
    let server =
        ScriptedServer::start(vec![Reply::text("one"), Reply::text("two")]).expect("start");
    let out = raw_exchange(
        &server,
        "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 7\r\n\r\n{\"a\":1}\
         POST /chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
    );
    assert_eq!(out.matches("HTTP/1.1 200 OK\r\n").count(), 2, "{out}");
    assert!(out.contains("Connection: keep-alive\r\n"), "{out}");
    assert!(out.contains("Connection: close\r\n"), "{out}");
    assert!(out.contains("\"content\":\"one\""), "{out}");
    assert!(out.contains("\"content\":\"two\""), "{out}");
    assert_eq!(
        server.requests(),
        vec![json!({"a": 1}), Value::String("hi".into())]
    );
    let recorded = server.recorded();
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert_eq!(recorded[1].path, "/chat/completions");
    assert_eq!(recorded[1].header("Connection"), Some("close"));
    assert_eq!(server.connections(), 1);
    assert_eq!(server.remaining(), 0);
}

#[test]
fn exhausted_script_and_unknown_route() {
    let server = ScriptedServer::start(vec![]).expect("start");
    let out = raw_exchange(
        &server,
        "POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
    );
    assert!(
        out.starts_with("HTTP/1.1 500 Internal Server Error\r\n"),
        "{out}"
    );
    assert!(
        out.contains(
            "scripted server: script exhausted: request 1 arrived but only 0 replies were scripted"
        ),
        "{out}"
    );
    let out = raw_exchange(
        &server,
        "GET /v1/models HTTP/1.1\r\nConnection: close\r\n\r\n",
    );
    assert!(out.starts_with("HTTP/1.1 404 Not Found\r\n"), "{out}");
    assert!(out.contains("no route for GET /v1/models"), "{out}");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn chunked_bodies_and_raw_replies() {
    let server = ScriptedServer::start(vec![
        Reply::Status(503, "busy".into()).with_header("Retry-After", "1"),
    ])
    .expect("start");
    let out = raw_exchange(
        &server,
        "POST /chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n3\r\n{\"a\r\n4\r\n\":2}\r\n0\r\n\r\n",
    );
    assert_eq!(
        out,
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy"
    );
    assert_eq!(server.requests(), vec![json!({"a": 2})]);
}

#[test]
fn reply_constructors_build_chat_completions() {
    let Reply::Json(body) = Reply::tool_calls(vec![("call_1", "f", json!({"x": 1}))])
        .with_usage(json!({"prompt_tokens": 3}))
        .with_model("m")
    else {
        unreachable!("tool_calls builds a JSON reply")
    };
    assert_eq!(
        body,
        json!({
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
            "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [{"id": "call_1", "type": "function",
                                "function": {"name": "f", "arguments": "{\"x\":1}"}}]}}],
            "usage": {"prompt_tokens": 3}
        })
    );
    assert_eq!(
        Reply::Status(400, "x".into()).with_usage(json!({})),
        Reply::Status(400, "x".into())
    );
    assert_eq!(
        Reply::error(429, "slow down"),
        Reply::Status(429, "{\"error\":{\"message\":\"slow down\"}}".into())
    );
}

#[test]
fn drop_stops_the_server() {
    let server = ScriptedServer::start(vec![]).expect("start");
    let addr = server.addr();
    drop(server);
    assert!(TcpStream::connect(addr).is_err());
}

/// Keeps the text a streamed call shows.
#[derive(Default)]
struct Shown(Mutex<Vec<String>>);

impl TextSink for Shown {
    fn text(&self, delta: &str) {
        if let Ok(mut v) = self.0.lock() {
            v.push(delta.to_string());
        }
    }
}

/// Each request of `calls` made in turn (streamed or not) of `model`: the answers, each with
/// the text it showed.
fn answers(
    model: &dyn Model,
    calls: &[(ChatRequest, bool)],
) -> Vec<(Result<ChatResponse, ModelError>, Vec<String>)> {
    let rt = archmax_tests::rt();
    calls
        .iter()
        .map(|(request, streamed)| {
            let shown = Shown::default();
            let answer = if *streamed {
                rt.block_on(model.stream(request, &shown))
            } else {
                rt.block_on(model.complete(request))
            };
            let shown = shown.0.into_inner().unwrap_or_default();
            (answer, shown)
        })
        .collect()
}

#[test]
fn the_in_process_model_answers_and_records_what_the_client_reads_from_the_server() {
    let script = || {
        vec![
            Reply::text("hello").with_usage(json!({"prompt_tokens": 10, "completion_tokens": 2})),
            Reply::tool_calls(vec![("c1", "lookup", json!({"id": "KK-1"}))]).with_model("other"),
            Reply::Json(json!({"id": "x", "choices": []})),
            Reply::error(400, "bad request"),
            Reply::Status(503, format!("  {}  ", "é".repeat(600))),
            Reply::text("soon").after(Duration::from_millis(20)),
            Reply::text("late").after(Duration::from_millis(900)),
            Reply::text("streamed"),
        ]
    };
    let request = |model: &str| ChatRequest::new(model, vec![ChatMessage::user("hello")]);
    let mut hot = request("");
    hot.temperature = Some(0.9);
    let calls = [
        (request(""), false),
        (hot, true),
        (request("gpt-x"), true),
        (request("gpt-x"), false),
        (request(""), true),
        (request(""), true),
        (request(""), true),
        (request(""), true),
    ];
    let configure = |url: &str, streaming: bool| {
        let mut config = archmax_tests::config(url, "default-model");
        config.temperature = Some(0.2);
        config.max_tokens = Some(64);
        config.retry.timeout = Duration::from_millis(300);
        config.streaming = streaming;
        config
    };
    for streaming in [true, false] {
        let server = ScriptedServer::start(script()).expect("start");
        let config = configure(&server.url(), streaming);
        let over_http = answers(&OpenAiClient::new(config.clone()).expect("client"), &calls);
        let in_process = InProcessModel::new(script());
        // The same URL, so that the errors, which name it, read alike.
        let answered = answers(&in_process.client(config), &calls);
        assert_eq!(answered, over_http, "streaming: {streaming}");
        assert_eq!(
            in_process.requests(),
            server.requests(),
            "streaming: {streaming}"
        );
        assert_eq!(in_process.remaining(), 0);
        // What was compared: answers, failures of each kind, shown text, defaulted bodies.
        let kinds: Vec<String> = answered
            .iter()
            .map(|(a, shown)| match a {
                Ok(r) => format!("ok {:?} {shown:?}", r.message.content),
                Err(e) => e.to_string(),
            })
            .collect();
        assert!(kinds[2].contains("could not be read"), "{kinds:?}");
        assert!(kinds[3].contains("failed with HTTP 400"), "{kinds:?}");
        assert!(
            kinds[4].starts_with("model request gave up after 1 attempt"),
            "{kinds:?}"
        );
        assert!(
            kinds[6].starts_with("model request gave up after 1 attempt"),
            "{kinds:?}"
        );
        let shown = if streaming { "[\"streamed\"]" } else { "[]" };
        assert_eq!(kinds[7], format!("ok Some(\"streamed\") {shown}"));
        let bodies = server.requests();
        assert_eq!(bodies[0]["model"], "default-model");
        assert_eq!(
            (
                bodies[0]["temperature"].as_f64(),
                bodies[1]["temperature"].as_f64()
            ),
            (Some(0.2), Some(0.9))
        );
        assert_eq!(bodies[0]["max_tokens"], 64);
        assert_eq!(bodies[1]["stream"].as_bool(), streaming.then_some(true));
    }
}

#[test]
fn the_in_process_model_refuses_what_only_http_gives_and_runs_out_like_the_server() {
    let model = InProcessModel::new(vec![Reply::Hang, Reply::sse(vec![SSE_DONE.into()])]);
    let client = model.client(archmax_tests::config(IN_PROCESS_URL, "m"));
    let request = ChatRequest::new("", vec![ChatMessage::user("hi")]);
    let rt = archmax_tests::rt();
    for kind in ["a hanging connection", "an SSE stream"] {
        let err = rt.block_on(client.complete(&request)).expect_err("refused");
        assert_eq!(
            err.to_string(),
            format!(
                "model request to http://in-process.invalid/v1/chat/completions (model 'm') could not be built: the in-process model does not answer {kind}: that is the wire's and the HTTP client's business; script it on a ScriptedServer"
            )
        );
    }
    let err = rt.block_on(client.complete(&request)).expect_err("ran out");
    assert_eq!(err.status(), Some(500));
    assert!(
        err.to_string().contains(
            "scripted model: script exhausted: request 3 arrived but only 2 replies were scripted"
        ),
        "{err}"
    );
    assert_eq!(model.requests().len(), 3);
}
