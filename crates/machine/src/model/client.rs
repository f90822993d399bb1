//! The HTTP client for OpenAI-compatible `POST {base_url}/chat/completions` endpoints.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde_json::Value;

use super::config::ModelConfig;
use super::stream::{Chunks, TextSink};
use super::types::{ChatRequest, ChatResponse};

/// Longest body excerpt kept in [`ModelError::Http`], in characters.
pub const BODY_EXCERPT_CHARS: usize = 500;

/// The boxed future a [`Model`] returns.
pub type ModelFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ChatResponse, ModelError>> + Send + 'a>>;

/// Anything that answers a chat-completions request: the HTTP client, or a test double.
pub trait Model: Send + Sync {
    /// Completes one request (retries, if any, happen inside).
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a>;

    /// Completes one request, reporting the answer's text to `text` as it arrives, in
    /// order, when the model streams; a model that does not reports its whole text as one
    /// piece ([`show_whole`]), as a stream of one chunk would. The answer is the same whole
    /// response either way. A call that fails after some text was reported is never
    /// retried: what was shown stays the failed call's.
    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        Box::pin(async move {
            let response = self.complete(req).await?;
            show_whole(&response, text);
            Ok(response)
        })
    }
}

/// Reports a whole answer's text to `text` as one piece (nothing for an answer without text).
pub fn show_whole(response: &ChatResponse, text: &dyn TextSink) {
    if let Some(content) = response
        .message
        .content
        .as_deref()
        .filter(|c| !c.is_empty())
    {
        text.text(content);
    }
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        (**self).complete(req)
    }
    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        (**self).stream(req, text)
    }
}

impl<M: Model + ?Sized> Model for Box<M> {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        (**self).complete(req)
    }
    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        (**self).stream(req, text)
    }
}

/// A failed model call. Every text names the endpoint URL and the model id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The endpoint answered with a non-success HTTP status.
    #[error("model request to {url} (model '{model}') failed with HTTP {status}: {}{}", excerpt_text(.body_excerpt), not_found_hint(.url, *.status))]
    Http {
        /// The request URL.
        url: String,
        /// The model id of the request.
        model: String,
        /// The HTTP status code.
        status: u16,
        /// The start of the response body (at most [`BODY_EXCERPT_CHARS`] characters, trimmed).
        body_excerpt: String,
    },
    /// The request could not be sent or the response could not be received.
    #[error("model request to {url} (model '{model}') failed: {message}")]
    Transport {
        /// The request URL.
        url: String,
        /// The model id of the request.
        model: String,
        /// What went wrong (connection refused, reset, DNS, TLS, …).
        message: String,
    },
    /// The request did not complete within the per-request timeout.
    #[error("model request to {url} (model '{model}') timed out after {}", duration_text(.after))]
    Timeout {
        /// The request URL.
        url: String,
        /// The model id of the request.
        model: String,
        /// The timeout that expired.
        after: Duration,
    },
    /// The response was not a usable chat completion (invalid JSON, no choices, …).
    #[error("model response from {url} (model '{model}') could not be read: {message}")]
    Decode {
        /// The request URL.
        url: String,
        /// The model id of the request.
        model: String,
        /// What was wrong with the body.
        message: String,
    },
    /// The request could not be built (client set-up or body encoding); never retried.
    #[error("model request to {url} (model '{model}') could not be built: {message}")]
    InvalidRequest {
        /// The request URL.
        url: String,
        /// The model id of the request.
        model: String,
        /// What went wrong.
        message: String,
    },
    /// The response body is longer than the configured bound (`ARCHMAX_MAX_RESPONSE_BYTES`);
    /// never retried. The body is not kept.
    #[error(
        "model response from {url} (model '{model}') is larger than the {limit}-byte limit (ARCHMAX_MAX_RESPONSE_BYTES); it was not read"
    )]
    TooLarge {
        /// The request URL.
        url: String,
        /// The model id of the request.
        model: String,
        /// The bound, in bytes.
        limit: u64,
    },
    /// A replayed run asked a request its cassette does not hold; never retried.
    #[error("model request (model '{model}') is not in the cassette {cassette}: {message}")]
    Unrecorded {
        /// The cassette file.
        cassette: String,
        /// The model id of the request.
        model: String,
        /// Which request it was and how it differs from the nearest recorded one.
        message: String,
    },
    /// A replayed run met a call that failed when it was recorded: the recorded failure's
    /// text, as it read then; never retried.
    #[error("{message}")]
    Replayed {
        /// The recorded failure's text.
        message: String,
    },
    /// Every attempt failed with a retryable error; `last` is the final failure.
    #[error("model request gave up after {attempts} attempt{}: {last}", if *.attempts == 1 { "" } else { "s" })]
    Exhausted {
        /// How many attempts were made.
        attempts: u32,
        /// The error of the last attempt.
        last: Box<ModelError>,
    },
}

fn excerpt_text(excerpt: &str) -> &str {
    if excerpt.is_empty() {
        "(empty body)"
    } else {
        excerpt
    }
}

/// After a 404 from a URL whose path names no API version (`/v1`, `/v1beta`, …): the likely
/// cause, a base URL without `/v1` (llama.cpp, vLLM and Ollama serve `/v1/chat/completions`),
/// and the base URL to try. Empty otherwise.
fn not_found_hint(url: &str, status: u16) -> String {
    if status != 404 {
        return String::new();
    }
    let Some(base) = url.strip_suffix("/chat/completions") else {
        return String::new();
    };
    let after_scheme = base.split_once("://").map_or(base, |(_, rest)| rest);
    let path = after_scheme.split_once('/').map_or("", |(_, path)| path);
    let versioned = path.split('/').any(|segment| {
        segment
            .strip_prefix('v')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
    });
    if versioned {
        String::new()
    } else {
        format!(" \u{2014} is the base URL missing /v1? (try {base}/v1)")
    }
}

fn duration_text(after: &Duration) -> String {
    if after.subsec_millis() == 0 && after.as_secs() > 0 {
        format!("{}s", after.as_secs())
    } else {
        format!("{}ms", after.as_millis())
    }
}

impl ModelError {
    /// Whether another attempt may succeed: HTTP 429 and 5xx, transport failures and timeouts.
    pub fn is_retryable(&self) -> bool {
        match self {
            ModelError::Http { status, .. } => *status == 429 || (500..=599).contains(status),
            ModelError::Transport { .. } | ModelError::Timeout { .. } => true,
            ModelError::Decode { .. }
            | ModelError::TooLarge { .. }
            | ModelError::InvalidRequest { .. }
            | ModelError::Unrecorded { .. }
            | ModelError::Replayed { .. }
            | ModelError::Exhausted { .. } => false,
        }
    }

    /// The HTTP status of this error, or of the last attempt for [`ModelError::Exhausted`].
    pub fn status(&self) -> Option<u16> {
        match self {
            ModelError::Http { status, .. } => Some(*status),
            ModelError::Exhausted { last, .. } => last.status(),
            _ => None,
        }
    }
}

/// `{base_url}/chat/completions`, with exactly one slash between the two.
pub fn chat_completions_url(base_url: &str) -> String {
    format!("{}/chat/completions", base_url.trim().trim_end_matches('/'))
}

/// The OpenAI-compatible HTTP client.
#[derive(Debug, Clone)]
pub struct OpenAiClient {
    config: ModelConfig,
    url: String,
    http: reqwest::Client,
    /// The endpoint's slots, shared by every client of the process that calls `url`.
    endpoint: std::sync::Arc<super::limit::Endpoint>,
}

/// One failed attempt and the server's `Retry-After` hint, if any.
struct Failure {
    error: ModelError,
    retry_after: Option<Duration>,
    /// Some of the answer's text was already reported: the attempt is not repeated.
    shown: bool,
}

/// The request as it is sent to an endpoint configured by `config`: an empty `model` is the
/// configured one, and `temperature`/`max_tokens` are the configured ones when unset.
pub fn request_body(config: &ModelConfig, req: &ChatRequest) -> ChatRequest {
    let mut body = req.clone();
    if body.model.trim().is_empty() {
        body.model.clone_from(&config.model);
    }
    if body.temperature.is_none() {
        body.temperature = config.temperature;
    }
    if body.max_tokens.is_none() {
        body.max_tokens = config.max_tokens;
    }
    body
}

/// A streamed request body: the request plus `stream: true` and `stream_options`.
#[derive(serde::Serialize)]
struct Streamed<'a> {
    #[serde(flatten)]
    request: &'a ChatRequest,
    stream: bool,
    stream_options: StreamOptions,
}

#[derive(serde::Serialize)]
struct StreamOptions {
    include_usage: bool,
}

impl OpenAiClient {
    /// Builds the client. Fails only when the TLS/HTTP stack cannot be initialised.
    pub fn new(config: ModelConfig) -> Result<OpenAiClient, ModelError> {
        let url = chat_completions_url(&config.base_url);
        let http = reqwest::Client::builder()
            .build()
            .map_err(|e| ModelError::InvalidRequest {
                url: url.clone(),
                model: config.model.clone(),
                message: error_chain(&e),
            })?;
        let endpoint = super::limit::endpoint(&url, config.max_concurrent_calls);
        Ok(OpenAiClient {
            config,
            url,
            http,
            endpoint,
        })
    }

    /// The configuration the client was built from.
    pub fn config(&self) -> &ModelConfig {
        &self.config
    }

    /// The full `…/chat/completions` URL requests go to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Sends `req`, retrying per the [`RetryPolicy`](super::config::RetryPolicy).
    ///
    /// The body is `req` with an empty `model` replaced by the configured default, and
    /// `temperature`/`max_tokens` filled from the configuration when the request leaves them
    /// unset. HTTP 429, 5xx, transport failures and timeouts are retried with exponential
    /// backoff (a `retry-after-ms` or `Retry-After: <seconds>` header replaces the backoff,
    /// capped at `max_delay`); other failures return at once. When the last attempt fails with
    /// a retryable error the result is [`ModelError::Exhausted`].
    pub async fn send(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.send_with(req, false, &super::NoText).await
    }

    /// [`OpenAiClient::send`], streamed (`stream: true`, `stream_options.include_usage`) when
    /// the configuration streams (`ARCHMAX_STREAMING`, default on): each piece of text goes
    /// to `text` as it arrives, and the chunks are assembled into the same response
    /// ([`Chunks`]). A server that ignores `stream` and answers JSON is read as JSON; a
    /// `[DONE]` ends the answer whatever follows; a stream that ends before its answer is
    /// whole (no finish reason, no `[DONE]`) is a transport failure, retried only while none
    /// of its text was reported.
    pub async fn send_streaming(
        &self,
        req: &ChatRequest,
        text: &dyn TextSink,
    ) -> Result<ChatResponse, ModelError> {
        self.send_with(req, self.config.streaming, text).await
    }

    /// Sends `req`, streamed into `sink` when `stream`; `sink` hears of a wait for a slot of
    /// the endpoint either way.
    async fn send_with(
        &self,
        req: &ChatRequest,
        stream: bool,
        sink: &dyn TextSink,
    ) -> Result<ChatResponse, ModelError> {
        let text = stream.then_some(sink);
        let body = request_body(&self.config, req);
        let model = body.model.clone();
        let encoded = match text {
            Some(_) => serde_json::to_vec(&Streamed {
                request: &body,
                stream: true,
                stream_options: StreamOptions {
                    include_usage: true,
                },
            }),
            None => serde_json::to_vec(&body),
        };
        let bytes = encoded.map_err(|e| ModelError::InvalidRequest {
            url: self.url.clone(),
            model: model.clone(),
            message: format!("could not encode the request body: {e}"),
        })?;
        let policy = self.config.retry;
        let attempts = policy.attempts.max(1);
        let mut attempt = 1;
        loop {
            // Each attempt queues for a slot; a retry's backoff holds none.
            let slot = self.endpoint.take().await;
            if !slot.waited.is_zero() {
                sink.queued(slot.waited, self.endpoint.limit());
            }
            let failure = match self.attempt(&bytes, &model, text).await {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            drop(slot);
            if failure.shown || !failure.error.is_retryable() {
                return Err(failure.error);
            }
            if attempt >= attempts {
                return Err(ModelError::Exhausted {
                    attempts,
                    last: Box::new(failure.error),
                });
            }
            let delay = failure
                .retry_after
                .map(|hint| hint.min(policy.max_delay))
                .unwrap_or_else(|| policy.backoff(attempt));
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    async fn attempt(
        &self,
        body: &[u8],
        model: &str,
        text: Option<&dyn TextSink>,
    ) -> Result<ChatResponse, Failure> {
        let timeout = self.config.retry.timeout;
        let fail = |error: ModelError| Failure {
            error,
            retry_after: None,
            shown: false,
        };
        let transport = |e: reqwest::Error| {
            if e.is_timeout() {
                ModelError::Timeout {
                    url: self.url.clone(),
                    model: model.to_owned(),
                    after: timeout,
                }
            } else {
                ModelError::Transport {
                    url: self.url.clone(),
                    model: model.to_owned(),
                    message: error_chain(&e),
                }
            }
        };
        let response = self
            .http
            .post(&self.url)
            .bearer_auth(&self.config.api_key)
            .header(CONTENT_TYPE, "application/json")
            .header(
                ACCEPT,
                if text.is_some() {
                    "text/event-stream, application/json"
                } else {
                    "application/json"
                },
            )
            .timeout(timeout)
            .body(body.to_vec())
            .send()
            .await
            .map_err(|e| fail(transport(e)))?;
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let limit = self.config.max_response_bytes;
        let too_large = || {
            fail(ModelError::TooLarge {
                url: self.url.clone(),
                model: model.to_owned(),
                limit,
            })
        };
        let decode = |message: String| {
            fail(ModelError::Decode {
                url: self.url.clone(),
                model: model.to_owned(),
                message,
            })
        };
        if let Some(sink) = text
            && status.is_success()
            && is_event_stream(response.headers())
        {
            return read_events(response, limit, sink).await.map_err(|e| {
                let shown = e.shown;
                let mut failure = match e.kind {
                    StreamError::TooLarge => too_large(),
                    StreamError::Transport(e) => fail(transport(e)),
                    StreamError::Cut(message) => fail(ModelError::Transport {
                        url: self.url.clone(),
                        model: model.to_owned(),
                        message,
                    }),
                    StreamError::Decode(message) => decode(message),
                };
                failure.shown = shown;
                failure
            });
        }
        let bytes = read_body(response, limit).await.map_err(|e| match e {
            BodyError::TooLarge => too_large(),
            BodyError::Transport(e) => fail(transport(e)),
        })?;
        if !status.is_success() {
            return Err(Failure {
                error: http_error(&self.url, model, status.as_u16(), &bytes),
                retry_after,
                shown: false,
            });
        }
        let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
            decode(format!(
                "invalid JSON ({e}); body starts: {}",
                excerpt_text(&excerpt(&bytes))
            ))
        })?;
        let response = ChatResponse::from_value(&value).map_err(decode)?;
        // Asked for a stream, answered whole: the whole text is the one piece.
        if let Some(sink) = text {
            show_whole(&response, sink);
        }
        Ok(response)
    }
}

impl Model for OpenAiClient {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(self.send(req))
    }
    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        Box::pin(self.send_streaming(req, text))
    }
}

/// Whether the answer is an SSE stream (else it is read as one JSON body).
fn is_event_stream(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.trim()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        })
}

enum StreamError {
    TooLarge,
    Transport(reqwest::Error),
    /// The stream ended before the answer was whole.
    Cut(String),
    Decode(String),
}

/// A failed stream, and whether some of its text had been reported.
struct StreamFailure {
    kind: StreamError,
    shown: bool,
}

/// Reads an SSE answer event by event: each `data:` is a `chat.completion.chunk` (or
/// `[DONE]`, which ends the answer at once), folded into [`Chunks`]; its text goes to
/// `sink`. The bytes read are bounded by `limit`, as for a whole body.
async fn read_events(
    response: reqwest::Response,
    limit: u64,
    sink: &dyn TextSink,
) -> Result<ChatResponse, StreamFailure> {
    let mut read: u64 = 0;
    let bytes = response.bytes_stream().map(move |chunk| {
        let chunk = chunk.map_err(StreamError::Transport)?;
        read += chunk.len() as u64;
        if read > limit {
            return Err(StreamError::TooLarge);
        }
        Ok(chunk)
    });
    let mut events = std::pin::pin!(bytes.eventsource());
    let mut chunks = Chunks::default();
    let mut shown = false;
    let failed = |kind: StreamError, shown: bool| StreamFailure { kind, shown };
    let mut done = false;
    while let Some(event) = events.next().await {
        let event = event.map_err(|e| match e {
            eventsource_stream::EventStreamError::Transport(kind) => failed(kind, shown),
            eventsource_stream::EventStreamError::Utf8(e) => failed(
                StreamError::Decode(format!("the event stream is not UTF-8: {e}")),
                shown,
            ),
            eventsource_stream::EventStreamError::Parser(e) => failed(
                StreamError::Decode(format!("the event stream is malformed: {e}")),
                shown,
            ),
        })?;
        let data = event.data.trim();
        if data.is_empty() {
            continue;
        }
        if data == "[DONE]" {
            done = true;
            break;
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            failed(
                StreamError::Decode(format!(
                    "a stream chunk is invalid JSON ({e}): {}",
                    excerpt(data.as_bytes())
                )),
                shown,
            )
        })?;
        if let Some(piece) = chunks
            .push(&chunk)
            .map_err(|m| failed(StreamError::Decode(m), shown))?
        {
            sink.text(&piece);
            shown = true;
        }
    }
    if !done && !chunks.finished() {
        let message = if chunks.any() {
            "the answer's stream ended before the answer was complete (no finish reason, no [DONE])"
        } else {
            "the answer's stream ended before its first chunk"
        };
        return Err(failed(StreamError::Cut(message.to_owned()), shown));
    }
    chunks
        .finish()
        .map_err(|m| failed(StreamError::Decode(m), shown))
}

enum BodyError {
    TooLarge,
    Transport(reqwest::Error),
}

/// Reads the body chunk by chunk, giving up as soon as it (or its declared length) passes
/// `limit` bytes, so an endless or enormous body costs at most `limit` of memory.
async fn read_body(mut response: reqwest::Response, limit: u64) -> Result<Vec<u8>, BodyError> {
    if response.content_length().is_some_and(|n| n > limit) {
        return Err(BodyError::TooLarge);
    }
    let mut body: Vec<u8> = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(BodyError::Transport)? {
        if (body.len() + chunk.len()) as u64 > limit {
            return Err(BodyError::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The server's retry hint: `retry-after-ms` (milliseconds) or `Retry-After` (seconds;
/// HTTP-date values are ignored).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)?
            .to_str()
            .ok()?
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|n| n.is_finite() && *n >= 0.0)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms.min(86_400_000.0) / 1000.0))
        .or_else(|| number("retry-after").map(|s| Duration::from_secs_f64(s.min(86_400.0))))
}

/// The error of an answer with the non-success `status` and `body`, from `url` for `model`.
pub(crate) fn http_error(url: &str, model: &str, status: u16, body: &[u8]) -> ModelError {
    ModelError::Http {
        url: url.to_owned(),
        model: model.to_owned(),
        status,
        body_excerpt: excerpt(body),
    }
}

/// The first [`BODY_EXCERPT_CHARS`] characters of a body, trimmed, with `…` when cut.
fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.trim();
    match text.char_indices().nth(BODY_EXCERPT_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// A reqwest error with its causes, without the URL (the caller names it).
fn error_chain(error: &reqwest::Error) -> String {
    let mut text = String::new();
    let mut current: Option<&dyn std::error::Error> = Some(error);
    while let Some(e) = current {
        let part = match e.downcast_ref::<reqwest::Error>() {
            Some(re) if re.url().is_some() => kind_text(re),
            _ => e.to_string(),
        };
        if !part.is_empty() && !text.contains(&part) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&part);
        }
        current = e.source();
    }
    text
}

fn kind_text(error: &reqwest::Error) -> String {
    if error.is_connect() {
        "could not connect".to_owned()
    } else if error.is_body() || error.is_decode() {
        "could not read the response body".to_owned()
    } else if error.is_request() {
        "could not send the request".to_owned()
    } else {
        "request failed".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    #[test]
    fn url_join_has_one_slash() {
        assert_eq!(
            chat_completions_url("http://h/v1"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            chat_completions_url("http://h/v1/"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            chat_completions_url("http://h/v1//"),
            "http://h/v1/chat/completions"
        );
        assert_eq!(
            chat_completions_url("http://h"),
            "http://h/chat/completions"
        );
    }

    #[test]
    fn retry_after_headers() {
        let mut headers = HeaderMap::new();
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(150)));
        let mut headers = HeaderMap::new();
        headers.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(retry_after(&headers), None);
        headers.insert("retry-after", HeaderValue::from_static("0.5"));
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(500)));
    }

    #[test]
    fn excerpt_is_trimmed_and_cut_on_char_boundaries() {
        assert_eq!(excerpt(b"  {\"error\":1}\n"), "{\"error\":1}");
        let long = "é".repeat(BODY_EXCERPT_CHARS + 10);
        let cut = excerpt(long.as_bytes());
        assert_eq!(cut.chars().count(), BODY_EXCERPT_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn error_texts_name_url_and_model() {
        let url = "http://h/v1/chat/completions".to_owned();
        let model = "gpt-x".to_owned();
        let http = ModelError::Http {
            url: url.clone(),
            model: model.clone(),
            status: 400,
            body_excerpt: "bad".into(),
        };
        assert_eq!(
            http.to_string(),
            "model request to http://h/v1/chat/completions (model 'gpt-x') failed with HTTP 400: bad"
        );
        let empty = ModelError::Http {
            url: url.clone(),
            model: model.clone(),
            status: 502,
            body_excerpt: String::new(),
        };
        assert_eq!(
            empty.to_string(),
            "model request to http://h/v1/chat/completions (model 'gpt-x') failed with HTTP 502: (empty body)"
        );
        let not_found = |url: &str| {
            ModelError::Http {
                url: url.into(),
                model: model.clone(),
                status: 404,
                body_excerpt: String::new(),
            }
            .to_string()
        };
        assert_eq!(
            not_found("http://127.0.0.1:8080/chat/completions"),
            "model request to http://127.0.0.1:8080/chat/completions (model 'gpt-x') failed with HTTP 404: (empty body) \u{2014} is the base URL missing /v1? (try http://127.0.0.1:8080/v1)"
        );
        assert_eq!(
            not_found("https://gw.example/openai/chat/completions"),
            "model request to https://gw.example/openai/chat/completions (model 'gpt-x') failed with HTTP 404: (empty body) \u{2014} is the base URL missing /v1? (try https://gw.example/openai/v1)"
        );
        for versioned in [
            "http://h/v1/chat/completions",
            "https://g.example/v1beta/openai/chat/completions",
        ] {
            assert!(!not_found(versioned).contains("missing /v1"), "{versioned}");
        }
        let timeout = ModelError::Timeout {
            url: url.clone(),
            model: model.clone(),
            after: Duration::from_secs(120),
        };
        assert_eq!(
            timeout.to_string(),
            "model request to http://h/v1/chat/completions (model 'gpt-x') timed out after 120s"
        );
        let short = ModelError::Timeout {
            url: url.clone(),
            model: model.clone(),
            after: Duration::from_millis(250),
        };
        assert!(short.to_string().ends_with("timed out after 250ms"));
        let transport = ModelError::Transport {
            url: url.clone(),
            model: model.clone(),
            message: "could not connect".into(),
        };
        assert_eq!(
            transport.to_string(),
            "model request to http://h/v1/chat/completions (model 'gpt-x') failed: could not connect"
        );
        let decode = ModelError::Decode {
            url: url.clone(),
            model: model.clone(),
            message: "the response has no choices".into(),
        };
        assert_eq!(
            decode.to_string(),
            "model response from http://h/v1/chat/completions (model 'gpt-x') could not be read: the response has no choices"
        );
        let once = ModelError::Exhausted {
            attempts: 1,
            last: Box::new(timeout.clone()),
        };
        assert_eq!(
            once.to_string(),
            "model request gave up after 1 attempt: model request to http://h/v1/chat/completions (model 'gpt-x') timed out after 120s"
        );
        let exhausted = ModelError::Exhausted {
            attempts: 4,
            last: Box::new(empty.clone()),
        };
        assert!(
            exhausted
                .to_string()
                .starts_with("model request gave up after 4 attempts: ")
        );
        assert_eq!(exhausted.status(), Some(502));
        assert_eq!(http.status(), Some(400));
        assert_eq!(transport.status(), None);
    }

    #[test]
    fn retryable_classification() {
        let http = |status| ModelError::Http {
            url: String::new(),
            model: String::new(),
            status,
            body_excerpt: String::new(),
        };
        assert!(http(429).is_retryable());
        assert!(http(500).is_retryable());
        assert!(http(503).is_retryable());
        assert!(http(599).is_retryable());
        assert!(!http(400).is_retryable());
        assert!(!http(401).is_retryable());
        assert!(!http(404).is_retryable());
        assert!(!http(408).is_retryable());
        let decode = ModelError::Decode {
            url: String::new(),
            model: String::new(),
            message: String::new(),
        };
        assert!(!decode.is_retryable());
        assert!(
            ModelError::Timeout {
                url: String::new(),
                model: String::new(),
                after: Duration::ZERO
            }
            .is_retryable()
        );
    }
}
