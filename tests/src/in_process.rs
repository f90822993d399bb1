//! [`InProcessModel`]: a script of [`Reply`]s answered in process, as
//! [`OpenAiClient`](archmax_machine::model::OpenAiClient) would have read it from a
//! [`ScriptedServer`](crate::scripted::ScriptedServer).
//!
//! - [`Reply::Json`] is read by the client's own parser (`ChatResponse::from_value`): a
//!   malformed completion is the same `Decode` error, a body over `max_response_bytes` the
//!   same `TooLarge`.
//! - [`Reply::Status`] with a non-success status is the client's `Http` error (URL, model,
//!   status, body excerpt), after one attempt: a retryable status (429, 5xx) is "gave up after
//!   1 attempt", as from the one-attempt client of `archmax_tests::client`.
//! - [`Reply::Delayed`] waits (tokio), then answers its inner reply; a wait past the
//!   configured timeout is the client's `Timeout` instead.
//! - The other replies (`Raw`, `Sse`, `Hang`, `ResetMidBody`, `Huge`, a `Status` with a
//!   success status) are the wire's and the client's business: the call fails with an
//!   `InvalidRequest` saying to script them on a [`ScriptedServer`](crate::scripted::ScriptedServer).
//!
//! Retries, headers and connections do not exist here: tests of those stay on HTTP.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use archmax_machine::model::client::chat_completions_url;
use archmax_machine::model::{
    ChatRequest, ChatResponse, Model, ModelConfig, ModelError, ModelFuture, TextSink, show_whole,
};
use archmax_machine::testing::http_error;
use serde_json::{Value, json};

use crate::scripted::{Reply, Script, lock};

/// The base URL an in-process model's errors name; nothing is ever sent there.
pub const IN_PROCESS_URL: &str = "http://in-process.invalid/v1";

/// A scripted model without HTTP: answers [`Reply`]s in order, keeping every request as the
/// JSON body the HTTP client would have sent. Hand [`InProcessModel::client`] (or
/// `archmax_tests::harness(…, &model, …)`) to a harness; [`InProcessModel::requests`] and
/// [`InProcessModel::remaining`] read as a [`ScriptedServer`](crate::scripted::ScriptedServer)'s do.
#[derive(Debug, Clone)]
pub struct InProcessModel {
    shared: Arc<Mutex<Shared>>,
}

#[derive(Debug)]
struct Shared {
    script: Script,
    requests: Vec<Value>,
}

impl InProcessModel {
    /// A model answering `script` in order.
    pub fn new(script: Vec<Reply>) -> InProcessModel {
        InProcessModel {
            shared: Arc::new(Mutex::new(Shared {
                script: Script::new(script),
                requests: Vec::new(),
            })),
        }
    }

    /// Every request body so far, in order, as the HTTP client would have sent it: the
    /// request with an empty `model` replaced by the configured one, `temperature` and
    /// `max_tokens` from the configuration when unset, and, for a streamed call with
    /// streaming configured, `stream: true` and `stream_options: {"include_usage": true}`.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.shared).requests.clone()
    }

    /// How many scripted replies have not been given yet.
    pub fn remaining(&self) -> usize {
        lock(&self.shared).script.remaining()
    }

    /// A client of this script configured by `config` as an
    /// [`OpenAiClient`](archmax_machine::model::OpenAiClient) would be (model id, temperature,
    /// max tokens, streaming, timeout, response bound; `base_url` only names the endpoint in
    /// errors). It makes one attempt per call, whatever `config.retry.attempts` says.
    pub fn client(&self, config: ModelConfig) -> InProcessClient {
        InProcessClient {
            url: chat_completions_url(&config.base_url),
            config,
            shared: Arc::clone(&self.shared),
        }
    }
}

/// The [`Model`] of an [`InProcessModel`]: see [`InProcessModel::client`].
#[derive(Debug, Clone)]
pub struct InProcessClient {
    config: ModelConfig,
    url: String,
    shared: Arc<Mutex<Shared>>,
}

impl InProcessClient {
    /// Records the body the HTTP client would send for `req` and answers the next reply.
    async fn send(&self, req: &ChatRequest, streamed: bool) -> Result<ChatResponse, ModelError> {
        let body = archmax_machine::model::client::request_body(&self.config, req);
        let model = body.model.clone();
        let mut sent = serde_json::to_value(&body).map_err(|e| ModelError::InvalidRequest {
            url: self.url.clone(),
            model: model.clone(),
            message: format!("could not encode the request body: {e}"),
        })?;
        if streamed && let Some(fields) = sent.as_object_mut() {
            fields.insert("stream".to_owned(), Value::Bool(true));
            fields.insert("stream_options".to_owned(), json!({"include_usage": true}));
        }
        let reply = {
            let mut shared = lock(&self.shared);
            shared.requests.push(sent);
            shared.script.next("scripted model")
        };
        self.answer(reply, &model).await
    }

    /// What the client makes of `reply`, after its delays.
    async fn answer(&self, reply: Reply, model: &str) -> Result<ChatResponse, ModelError> {
        let mut reply = reply;
        let mut delay = Duration::ZERO;
        while let Reply::Delayed(more, inner) = reply {
            delay = delay.saturating_add(more);
            reply = *inner;
        }
        let timeout = self.config.retry.timeout;
        if delay > timeout {
            tokio::time::sleep(timeout).await;
            return Err(one_attempt(ModelError::Timeout {
                url: self.url.clone(),
                model: model.to_owned(),
                after: timeout,
            }));
        }
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        match reply {
            Reply::Json(value) => {
                let limit = self.config.max_response_bytes;
                if value.to_string().len() as u64 > limit {
                    return Err(ModelError::TooLarge {
                        url: self.url.clone(),
                        model: model.to_owned(),
                        limit,
                    });
                }
                ChatResponse::from_value(&value).map_err(|message| ModelError::Decode {
                    url: self.url.clone(),
                    model: model.to_owned(),
                    message,
                })
            }
            Reply::Status(status, body) if !(200..=299).contains(&status) => {
                Err(one_attempt(http_error(&self.url, model, status, &body)))
            }
            other => Err(ModelError::InvalidRequest {
                url: self.url.clone(),
                model: model.to_owned(),
                message: format!(
                    "the in-process model does not answer {}: that is the wire's and the HTTP client's business; script it on a ScriptedServer",
                    kind(&other)
                ),
            }),
        }
    }
}

impl Model for InProcessClient {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(self.send(req, false))
    }

    /// As the HTTP client: with streaming configured the request asks for a stream and the
    /// whole answer's text is shown as one piece (a JSON answer to a streamed request); with
    /// streaming off nothing is shown.
    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        let streamed = self.config.streaming;
        Box::pin(async move {
            let response = self.send(req, streamed).await?;
            if streamed {
                show_whole(&response, text);
            }
            Ok(response)
        })
    }
}

/// The client's result for a failed first attempt when it makes one: a retryable failure
/// means it gave up.
fn one_attempt(error: ModelError) -> ModelError {
    if error.is_retryable() {
        ModelError::Exhausted {
            attempts: 1,
            last: Box::new(error),
        }
    } else {
        error
    }
}

/// The reply's kind, for the refusal of one only HTTP gives.
fn kind(reply: &Reply) -> &'static str {
    match reply {
        Reply::Json(_) => "a JSON reply",
        Reply::Status(..) => "a success status with a raw body",
        Reply::Raw { .. } => "a raw reply (headers, verbatim body)",
        Reply::Delayed(..) => "a delayed reply",
        Reply::Hang => "a hanging connection",
        Reply::ResetMidBody { .. } => "a reset mid-body",
        Reply::Sse { .. } => "an SSE stream",
        Reply::Huge { .. } => "a huge streamed body",
    }
}
