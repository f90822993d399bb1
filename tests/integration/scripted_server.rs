//! The scripted OpenAI-compatible server itself.

use archmax_tests::scripted::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::TcpStream;

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
