//! The OpenAI client streaming (SSE) against the scripted server over real 127.0.0.1 HTTP,
//! including servers that misbehave.

use std::sync::Mutex;
use std::time::Duration;

use archmax_machine::model::{
    ChatMessage, ChatRequest, ChatResponse, Model, ModelConfig, ModelError, OpenAiClient,
    RetryPolicy, TextSink,
};
use archmax_tests::scripted::{Reply, SSE_DONE, ScriptedServer, SseEnd, chunk, sse_data};
use serde_json::json;

/// Keeps every piece of text it is given.
#[derive(Default)]
struct Pieces(Mutex<Vec<String>>);

impl TextSink for Pieces {
    fn text(&self, delta: &str) {
        if let Ok(mut v) = self.0.lock() {
            v.push(delta.to_string());
        }
    }
}

impl Pieces {
    fn all(&self) -> Vec<String> {
        self.0.lock().map(|v| v.clone()).unwrap_or_default()
    }
}

fn client(server: &ScriptedServer, streaming: bool) -> OpenAiClient {
    let mut config = ModelConfig::new(server.url(), "sk-test", "default-model");
    config.retry = RetryPolicy {
        attempts: 3,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
        timeout: Duration::from_secs(5),
    };
    config.streaming = streaming;
    OpenAiClient::new(config).expect("client builds")
}

fn request() -> ChatRequest {
    ChatRequest::new("gpt-test", vec![ChatMessage::user("hello")])
}

fn start(script: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::start(script).expect("server starts")
}

/// One streamed call to a server serving `pieces`: the answer and the text shown.
async fn streamed(pieces: Vec<String>) -> (ChatResponse, Vec<String>) {
    let server = start(vec![Reply::sse(pieces)]);
    let shown = Pieces::default();
    let resp = client(&server, true)
        .stream(&request(), &shown)
        .await
        .expect("completes");
    (resp, shown.all())
}

#[tokio::test]
async fn a_streamed_answer_is_shown_piece_by_piece_and_assembled_whole() {
    let server = start(vec![Reply::stream_text(&["Hel", "lo, ", "world"])]);
    let pieces = Pieces::default();
    let resp = client(&server, true)
        .stream(&request(), &pieces)
        .await
        .expect("completes");
    assert_eq!(pieces.all(), vec!["Hel", "lo, ", "world"]);
    assert_eq!(resp.message.content.as_deref(), Some("Hello, world"));
    assert_eq!(resp.finish_reason.as_deref(), Some("stop"));
    assert_eq!(resp.model.as_deref(), Some("scripted-model"));
    let usage = resp.usage.expect("usage from the last chunk");
    assert_eq!((usage.input_tokens, usage.output_tokens), (11, 3));
    let recorded = server.recorded();
    assert_eq!(recorded[0].body["stream"], json!(true));
    assert_eq!(recorded[0].body["stream_options"], json!({"include_usage": true}));
    assert_eq!(recorded[0].body["model"], json!("gpt-test"));
    assert!(
        recorded[0]
            .header("accept")
            .is_some_and(|a| a.contains("text/event-stream"))
    );
}

#[tokio::test]
async fn streaming_off_sends_a_plain_request_and_shows_nothing() {
    let server = start(vec![Reply::text("whole")]);
    let pieces = Pieces::default();
    let resp = client(&server, false)
        .stream(&request(), &pieces)
        .await
        .expect("completes");
    assert_eq!(resp.message.content.as_deref(), Some("whole"));
    assert!(pieces.all().is_empty());
    let body = &server.requests()[0];
    assert!(body.get("stream").is_none(), "{body}");
    assert!(body.get("stream_options").is_none(), "{body}");
}

#[tokio::test]
async fn complete_never_asks_for_a_stream() {
    let server = start(vec![Reply::text("whole")]);
    let resp = client(&server, true).complete(&request()).await.expect("completes");
    assert_eq!(resp.message.content.as_deref(), Some("whole"));
    assert!(server.requests()[0].get("stream").is_none());
}

#[tokio::test]
async fn a_server_that_ignores_stream_is_read_as_json() {
    let server = start(vec![
        Reply::text("not streamed").with_usage(json!({"prompt_tokens": 2, "completion_tokens": 1})),
    ]);
    let pieces = Pieces::default();
    let resp = client(&server, true)
        .stream(&request(), &pieces)
        .await
        .expect("completes");
    assert_eq!(resp.message.content.as_deref(), Some("not streamed"));
    assert_eq!(resp.usage.map(|u| u.input_tokens), Some(2));
    assert_eq!(pieces.all(), vec!["not streamed"], "a whole answer is one piece");
    assert_eq!(server.requests()[0]["stream"], json!(true));
}

#[tokio::test]
async fn tool_calls_split_across_chunks_come_back_whole() {
    let pieces = vec![
        sse_data(&chunk(json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}), None)),
        sse_data(&chunk(json!({"tool_calls": [{"index": 1, "id": "call_b", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}), None)),
        sse_data(&chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"file_path\":"}}]}), None)),
        sse_data(&chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.md\"}"}}]}), None)),
        sse_data(&chunk(json!({}), Some("tool_calls"))),
        SSE_DONE.to_owned(),
    ];
    let (resp, shown) = streamed(pieces).await;
    let calls: Vec<_> = resp
        .message
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        vec![("call_a", "read_file", "{\"file_path\":\"a.md\"}"), ("call_b", "ls", "{}")]
    );
    assert!(shown.is_empty());
    assert_eq!(resp.message.content, None);
}

#[tokio::test]
async fn empty_deltas_and_comments_between_chunks_change_nothing() {
    let pieces = vec![
        ": keep-alive\n\n".to_owned(),
        sse_data(&chunk(json!({"content": ""}), None)),
        sse_data(&chunk(json!({"content": "a"}), None)),
        sse_data(&chunk(json!({}), None)),
        "\n".to_owned(),
        sse_data(&chunk(json!({"content": null}), None)),
        sse_data(&chunk(json!({"content": "b"}), Some("stop"))),
        SSE_DONE.to_owned(),
    ];
    let (resp, shown) = streamed(pieces).await;
    assert_eq!(shown, vec!["a", "b"]);
    assert_eq!(resp.message.content.as_deref(), Some("ab"));
}

#[tokio::test]
async fn an_early_done_ends_the_answer_even_if_the_stream_stays_open() {
    let pieces = vec![
        sse_data(&chunk(json!({"content": "short"}), None)),
        SSE_DONE.to_owned(),
        sse_data(&chunk(json!({"content": " ignored"}), None)),
    ];
    let server = start(vec![Reply::sse(pieces).cut_after(3, SseEnd::Hang)]);
    let shown = Pieces::default();
    let resp = tokio::time::timeout(
        Duration::from_secs(3),
        client(&server, true).stream(&request(), &shown),
    )
    .await
    .expect("does not wait for the end of the body")
    .expect("completes");
    assert_eq!(resp.message.content.as_deref(), Some("short"));
    assert_eq!(shown.all(), vec!["short"]);
}

#[tokio::test]
async fn a_stream_without_done_is_whole_once_it_has_a_finish_reason() {
    let pieces = vec![
        sse_data(&chunk(json!({"content": "done"}), Some("stop"))),
    ];
    let (resp, shown) = streamed(pieces).await;
    assert_eq!(resp.message.content.as_deref(), Some("done"));
    assert_eq!(shown, vec!["done"]);
}

#[tokio::test]
async fn a_stream_cut_before_any_text_is_retried() {
    let server = start(vec![
        Reply::stream_text(&["never shown"]).cut_after(1, SseEnd::Cut),
        Reply::stream_text(&["second ", "try"]),
    ]);
    let shown = Pieces::default();
    let resp = client(&server, true)
        .stream(&request(), &shown)
        .await
        .expect("the retry completes");
    assert_eq!(resp.message.content.as_deref(), Some("second try"));
    assert_eq!(shown.all(), vec!["second ", "try"]);
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_cut_after_text_was_shown_fails_without_a_retry() {
    let server = start(vec![
        Reply::stream_text(&["half ", "an answer", "never sent"]).cut_after(3, SseEnd::Cut),
        Reply::stream_text(&["a retry would show this"]),
    ]);
    let shown = Pieces::default();
    let err = client(&server, true)
        .stream(&request(), &shown)
        .await
        .expect_err("a cut stream is a failed call");
    assert_eq!(shown.all(), vec!["half ", "an answer"]);
    assert_eq!(server.requests().len(), 1, "not retried once text was shown");
    assert_eq!(server.remaining(), 1);
    assert!(matches!(err, ModelError::Transport { .. }), "{err:?}");
    assert!(
        err.to_string().starts_with("model request to http://127.0.0.1:"),
        "{err}"
    );
}

#[tokio::test]
async fn a_stream_that_ends_cleanly_but_early_is_a_retried_transport_failure() {
    let server = start(vec![
        Reply::stream_text(&["x"]).cut_after(1, SseEnd::Close),
        Reply::stream_text(&["x"]).cut_after(1, SseEnd::Close),
        Reply::stream_text(&["x"]).cut_after(1, SseEnd::Close),
    ]);
    let err = client(&server, true)
        .stream(&request(), &Pieces::default())
        .await
        .expect_err("never whole");
    let text = err.to_string();
    assert!(text.starts_with("model request gave up after 3 attempts: "), "{text}");
    assert!(
        text.ends_with("the answer's stream ended before the answer was complete (no finish reason, no [DONE])"),
        "{text}"
    );
}

#[tokio::test]
async fn an_error_event_and_an_invalid_chunk_are_decode_errors() {
    let server = start(vec![
        Reply::sse(vec![sse_data(&json!({"error": {"message": "overloaded"}}))]),
        Reply::sse(vec!["data: {not json\n\n".to_owned()]),
    ]);
    let c = client(&server, true);
    let first = c.stream(&request(), &Pieces::default()).await.expect_err("error event");
    assert!(matches!(first, ModelError::Decode { .. }), "{first:?}");
    assert!(first.to_string().ends_with("the endpoint sent an error in the stream: overloaded"), "{first}");
    let second = c.stream(&request(), &Pieces::default()).await.expect_err("bad chunk");
    assert!(second.to_string().contains("a stream chunk is invalid JSON"), "{second}");
    assert_eq!(server.requests().len(), 2, "decode errors are not retried");
}

#[tokio::test]
async fn an_http_error_is_read_as_before_when_streaming() {
    let server = start(vec![Reply::error(400, "bad tools")]);
    let err = client(&server, true)
        .stream(&request(), &Pieces::default())
        .await
        .expect_err("400");
    assert_eq!(err.status(), Some(400));
    assert!(err.to_string().contains("bad tools"), "{err}");
}

#[tokio::test]
async fn a_stream_larger_than_the_limit_is_refused() {
    let text = "y".repeat(4096);
    let pieces: Vec<&str> = std::iter::repeat_n(text.as_str(), 8).collect();
    let server = start(vec![Reply::stream_text(&pieces)]);
    let mut config = ModelConfig::new(server.url(), "sk-test", "m");
    config.max_response_bytes = 16 * 1024;
    let err = OpenAiClient::new(config)
        .expect("client")
        .stream(&request(), &Pieces::default())
        .await
        .expect_err("too large");
    assert!(matches!(err, ModelError::TooLarge { limit: 16384, .. }), "{err:?}");
}
