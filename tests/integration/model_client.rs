//! The OpenAI client against the scripted server over real 127.0.0.1 HTTP.

use std::time::{Duration, Instant};

use archmax_machine::model::{
    ChatMessage, ChatRequest, Model, ModelConfig, ModelError, OpenAiClient, RetryPolicy, ToolCall,
    ToolDef, Usage,
};
use archmax_tests::scripted::{Reply, ScriptedServer};
use serde_json::{Value, json};

fn policy(attempts: u32) -> RetryPolicy {
    RetryPolicy {
        attempts,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(50),
        timeout: Duration::from_secs(5),
    }
}

fn client_with(server: &ScriptedServer, retry: RetryPolicy) -> OpenAiClient {
    let mut config = ModelConfig::new(server.url(), "sk-test", "default-model");
    config.retry = retry;
    OpenAiClient::new(config).expect("client builds")
}

fn client(server: &ScriptedServer) -> OpenAiClient {
    client_with(server, policy(4))
}

fn request() -> ChatRequest {
    ChatRequest::new("gpt-test", vec![ChatMessage::user("hello")])
}

fn start(script: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::start(script).expect("server starts")
}

#[tokio::test]
async fn text_reply() {
    let server = start(vec![Reply::text("Hi there").with_model("gpt-test-2024")]);
    let client = client(&server);
    let resp = client.complete(&request()).await.expect("completes");
    assert_eq!(resp.message.content.as_deref(), Some("Hi there"));
    assert!(resp.message.tool_calls.is_empty());
    assert_eq!(resp.model.as_deref(), Some("gpt-test-2024"));
    assert_eq!(resp.finish_reason.as_deref(), Some("stop"));
    assert_eq!(resp.usage, None);
    let recorded = server.recorded();
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].method, "POST");
    assert_eq!(recorded[0].path, "/v1/chat/completions");
    assert_eq!(recorded[0].header("authorization"), Some("Bearer sk-test"));
    assert_eq!(recorded[0].header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn parallel_tool_calls_reply() {
    let server = start(vec![Reply::tool_calls(vec![
        ("call_1", "read_file", json!({"path": "a.md"})),
        (
            "call_2",
            "archmax_advance",
            json!({"to": "done", "reason": "ok"}),
        ),
    ])]);
    let resp = client(&server)
        .complete(&request())
        .await
        .expect("completes");
    assert_eq!(resp.message.content, None);
    assert_eq!(
        resp.message.tool_calls,
        vec![
            ToolCall::new("call_1", "read_file", r#"{"path":"a.md"}"#),
            ToolCall::new(
                "call_2",
                "archmax_advance",
                r#"{"to":"done","reason":"ok"}"#
            ),
        ]
    );
    assert_eq!(resp.finish_reason.as_deref(), Some("tool_calls"));
}

#[tokio::test]
async fn usage_is_parsed() {
    let server = start(vec![
        Reply::text("a").with_usage(json!({
            "prompt_tokens": 1200, "completion_tokens": 34, "total_tokens": 1234,
            "prompt_tokens_details": {"cached_tokens": 1024}
        })),
        Reply::text("b").with_usage(json!({
            "prompt_tokens": 900, "completion_tokens": 10,
            "cache_read_input_tokens": 500, "cache_creation_input_tokens": 300
        })),
    ]);
    let client = client(&server);
    let first = client.complete(&request()).await.expect("completes");
    assert_eq!(
        first.usage,
        Some(Usage {
            input_tokens: 1200,
            output_tokens: 34,
            cache_read_tokens: 1024,
            cache_creation_tokens: 0
        })
    );
    let second = client.complete(&request()).await.expect("completes");
    assert_eq!(
        second.usage,
        Some(Usage {
            input_tokens: 900,
            output_tokens: 10,
            cache_read_tokens: 500,
            cache_creation_tokens: 300
        })
    );
    // Both calls reused one keep-alive connection.
    assert_eq!(server.connections(), 1);
}

#[tokio::test]
async fn retries_after_429_then_succeeds() {
    let server = start(vec![Reply::error(429, "rate limited"), Reply::text("ok")]);
    let resp = client(&server)
        .complete(&request())
        .await
        .expect("completes");
    assert_eq!(resp.message.content.as_deref(), Some("ok"));
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0], requests[1]);
}

#[tokio::test]
async fn retry_after_header_is_honoured_and_capped() {
    let server = start(vec![
        Reply::error(429, "slow").with_header("Retry-After", "0.2"),
        Reply::error(503, "busy").with_header("Retry-After", "3600"),
        Reply::text("ok"),
    ]);
    let mut retry = policy(4);
    retry.max_delay = Duration::from_millis(300);
    let started = Instant::now();
    let resp = client_with(&server, retry)
        .complete(&request())
        .await
        .expect("completes");
    let elapsed = started.elapsed();
    assert_eq!(resp.message.content.as_deref(), Some("ok"));
    assert_eq!(server.requests().len(), 3);
    // 200 ms from the header + 300 ms (3600 s capped at max_delay).
    assert!(elapsed >= Duration::from_millis(500), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
}

#[tokio::test]
async fn persistent_503_is_exhausted_after_four_attempts() {
    let server = start(vec![
        Reply::error(503, "overloaded"),
        Reply::error(503, "overloaded"),
        Reply::error(503, "overloaded"),
        Reply::error(503, "overloaded"),
        Reply::text("never reached"),
    ]);
    let client = client(&server);
    let err = client.complete(&request()).await.expect_err("fails");
    let url = format!("{}/chat/completions", server.url());
    assert_eq!(
        err,
        ModelError::Exhausted {
            attempts: 4,
            last: Box::new(ModelError::Http {
                url: url.clone(),
                model: "gpt-test".into(),
                status: 503,
                body_excerpt: r#"{"error":{"message":"overloaded"}}"#.into(),
            }),
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "model request gave up after 4 attempts: model request to {url} (model 'gpt-test') failed with HTTP 503: {{\"error\":{{\"message\":\"overloaded\"}}}}"
        )
    );
    assert_eq!(server.requests().len(), 4);
    assert_eq!(server.remaining(), 1);
}

#[tokio::test]
async fn bad_request_is_not_retried() {
    let server = start(vec![
        Reply::error(400, "invalid tools"),
        Reply::text("never reached"),
    ]);
    let err = client(&server)
        .complete(&request())
        .await
        .expect_err("fails");
    assert_eq!(
        err,
        ModelError::Http {
            url: format!("{}/chat/completions", server.url()),
            model: "gpt-test".into(),
            status: 400,
            body_excerpt: r#"{"error":{"message":"invalid tools"}}"#.into(),
        }
    );
    assert!(!err.is_retryable());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn unauthorized_is_not_retried() {
    let server = start(vec![Reply::error(401, "bad key"), Reply::text("x")]);
    let err = client(&server)
        .complete(&request())
        .await
        .expect_err("fails");
    assert_eq!(err.status(), Some(401));
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn malformed_json_is_a_decode_error() {
    let server = start(vec![
        Reply::Raw {
            status: 200,
            headers: vec![],
            body: "{\"choices\": [".into(),
        },
        Reply::text("never reached"),
    ]);
    let err = client(&server)
        .complete(&request())
        .await
        .expect_err("fails");
    let ModelError::Decode {
        url,
        model,
        message,
    } = &err
    else {
        unreachable!("expected Decode, got {err:?}")
    };
    assert_eq!(url, &format!("{}/chat/completions", server.url()));
    assert_eq!(model, "gpt-test");
    assert!(message.starts_with("invalid JSON ("), "{message}");
    assert!(
        message.ends_with("); body starts: {\"choices\": ["),
        "{message}"
    );
    assert!(
        err.to_string().starts_with(&format!(
            "model response from {url} (model 'gpt-test') could not be read: invalid JSON ("
        )),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn no_choices_is_a_decode_error() {
    let server = start(vec![Reply::Json(
        json!({"object": "chat.completion", "choices": []}),
    )]);
    let err = client(&server)
        .complete(&request())
        .await
        .expect_err("fails");
    assert_eq!(
        err,
        ModelError::Decode {
            url: format!("{}/chat/completions", server.url()),
            model: "gpt-test".into(),
            message: "the response has no choices".into(),
        }
    );
}

#[tokio::test]
async fn request_body_shape() {
    let server = start(vec![Reply::text("done")]);
    let tools = vec![
        ToolDef::new(
            "read_file",
            "Read a file",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ),
        ToolDef::new("archmax_advance", "Advance", json!({"type": "object"})),
    ];
    let mut req = ChatRequest::new(
        "claude-sonnet",
        vec![
            ChatMessage::system("You are the agent."),
            ChatMessage::user("Do it"),
            ChatMessage::assistant(
                Some("Reading.".into()),
                vec![
                    ToolCall::new("call_1", "read_file", r#"{"path":"a.md"}"#),
                    ToolCall::new("call_2", "read_file", r#"{"path":"b.md"}"#),
                ],
            ),
            ChatMessage::tool("call_1", "A"),
            ChatMessage::tool("call_2", "B"),
        ],
    )
    .with_tools(tools);
    req.parallel_tool_calls = Some(true);
    let resp = client(&server).complete(&req).await.expect("completes");
    assert_eq!(resp.message.content.as_deref(), Some("done"));
    assert_eq!(
        server.requests(),
        vec![json!({
            "model": "claude-sonnet",
            "messages": [
                {"role": "system", "content": "You are the agent."},
                {"role": "user", "content": "Do it"},
                {"role": "assistant", "content": "Reading.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.md\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"b.md\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "A"},
                {"role": "tool", "tool_call_id": "call_2", "content": "B"}
            ],
            "tools": [
                {"type": "function", "function": {"name": "read_file", "description": "Read a file",
                  "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}},
                {"type": "function", "function": {"name": "archmax_advance", "description": "Advance",
                  "parameters": {"type": "object"}}}
            ],
            "parallel_tool_calls": true
        })]
    );
}

#[tokio::test]
async fn config_defaults_fill_the_request() {
    let server = start(vec![Reply::text("a"), Reply::text("b")]);
    let mut config = ModelConfig::new(format!("{}/", server.url()), "k", "env-model");
    config.temperature = Some(0.5);
    config.max_tokens = Some(256);
    config.retry = policy(1);
    let client = OpenAiClient::new(config).expect("builds");
    assert_eq!(client.url(), format!("{}/chat/completions", server.url()));
    // An empty model id falls back to the configured default; unset options come from config.
    client
        .complete(&ChatRequest::new("", vec![ChatMessage::user("x")]))
        .await
        .expect("completes");
    // Request values win over the configuration.
    let mut req = ChatRequest::new("state-model", vec![ChatMessage::user("y")]);
    req.temperature = Some(0.0);
    req.max_tokens = Some(10);
    client.complete(&req).await.expect("completes");
    let requests = server.requests();
    let pick = |r: &Value| {
        (
            r["model"].clone(),
            r["temperature"].clone(),
            r["max_tokens"].clone(),
        )
    };
    assert_eq!(
        pick(&requests[0]),
        (json!("env-model"), json!(0.5), json!(256))
    );
    assert_eq!(
        pick(&requests[1]),
        (json!("state-model"), json!(0.0), json!(10))
    );
    // No double slash despite the trailing slash in the base URL.
    assert_eq!(server.recorded()[0].path, "/v1/chat/completions");
}

#[tokio::test]
async fn timeout_is_retried_then_exhausted() {
    let server = start(vec![
        Reply::text("late").after(Duration::from_millis(600)),
        Reply::text("late").after(Duration::from_millis(600)),
    ]);
    let mut retry = policy(2);
    retry.timeout = Duration::from_millis(150);
    let err = client_with(&server, retry)
        .complete(&request())
        .await
        .expect_err("times out");
    let url = format!("{}/chat/completions", server.url());
    assert_eq!(
        err,
        ModelError::Exhausted {
            attempts: 2,
            last: Box::new(ModelError::Timeout {
                url: url.clone(),
                model: "gpt-test".into(),
                after: Duration::from_millis(150),
            }),
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "model request gave up after 2 attempts: model request to {url} (model 'gpt-test') timed out after 150ms"
        )
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn timeout_then_success() {
    let server = start(vec![
        Reply::text("late").after(Duration::from_millis(600)),
        Reply::text("on time"),
    ]);
    let mut retry = policy(3);
    retry.timeout = Duration::from_millis(150);
    let resp = client_with(&server, retry)
        .complete(&request())
        .await
        .expect("completes");
    assert_eq!(resp.message.content.as_deref(), Some("on time"));
}

#[tokio::test]
async fn connection_refused_is_a_retried_transport_error() {
    let server = start(vec![]);
    let base = server.url();
    drop(server);
    let mut config = ModelConfig::new(base.clone(), "k", "m");
    config.retry = policy(2);
    let client = OpenAiClient::new(config).expect("builds");
    let err = client
        .complete(&ChatRequest::new("gpt-test", vec![ChatMessage::user("x")]))
        .await
        .expect_err("refused");
    let ModelError::Exhausted { attempts, last } = &err else {
        unreachable!("expected Exhausted, got {err:?}")
    };
    assert_eq!(*attempts, 2);
    let ModelError::Transport {
        url,
        model,
        message,
    } = last.as_ref()
    else {
        unreachable!("expected Transport, got {last:?}")
    };
    assert_eq!(url, &format!("{base}/chat/completions"));
    assert_eq!(model, "gpt-test");
    assert!(message.starts_with("could not connect"), "{message}");
    assert!(
        err.to_string().starts_with(&format!(
            "model request gave up after 2 attempts: model request to {base}/chat/completions (model 'gpt-test') failed: could not connect"
        )),
        "{err}"
    );
}

#[tokio::test]
async fn exhausted_script_surfaces_as_http_500() {
    let server = start(vec![]);
    let err = client_with(&server, policy(1))
        .complete(&request())
        .await
        .expect_err("fails");
    assert_eq!(err.status(), Some(500));
    assert!(
        err.to_string()
            .contains("script exhausted: request 1 arrived but only 0 replies were scripted"),
        "{err}"
    );
}

#[tokio::test]
async fn model_trait_object_and_conversation_round_trip() {
    let server = start(vec![
        Reply::tool_calls(vec![("call_9", "lookup", json!({"q": "x"}))]),
        Reply::text("answer"),
    ]);
    let model: std::sync::Arc<dyn Model> = std::sync::Arc::new(client(&server));
    let mut req = request();
    let first = model.complete(&req).await.expect("completes");
    req.messages.push(first.message.to_message());
    req.messages.push(ChatMessage::tool("call_9", "found"));
    let second = model.complete(&req).await.expect("completes");
    assert_eq!(second.message.content.as_deref(), Some("answer"));
    let requests = server.requests();
    assert_eq!(
        requests[1]["messages"],
        json!([
            {"role": "user", "content": "hello"},
            {"role": "assistant", "content": "", "tool_calls": [
                {"id": "call_9", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":\"x\"}"}}]},
            {"role": "tool", "tool_call_id": "call_9", "content": "found"}
        ])
    );
}
