//! Model fallback: models tried in order when a call still fails after its retries.
//!
//! The first model is the one the harness was given; each fallback is an OpenAI-compatible
//! endpoint (the `ARCHMAX_*` one with another model id, or another base URL). A call falls to
//! the next model only on a failure the endpoint caused ([`falls_back`]: connection errors,
//! timeouts, 5xx and 429 past their retries, 401/403/404, an unreadable answer), never on a
//! 4xx the request caused, and never once the failing call has shown text (the person has
//! seen it; a second answer would repeat it). Each switch is told to the caller's
//! [`TextSink`] (a `model-fallback` event) and recorded on the model call's span; the answer
//! names the model that gave it, so usage is priced for that model and a cassette records it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::client::{Model, ModelError, ModelFuture};
use super::stream::{NoText, TextSink};
use super::types::{ChatRequest, ChatResponse};

/// One model of the chain.
pub struct Link {
    /// The model.
    pub model: Arc<dyn Model>,
    /// The model id it is asked for; `None` keeps the request's (the first model).
    pub id: Option<String>,
    /// How events and spans name it: the model id, with its endpoint when that differs.
    pub label: String,
}

/// The models, tried in order.
pub struct Fallback {
    chain: Vec<Link>,
}

impl Fallback {
    /// `first`, then each of `then`.
    pub fn new(first: Link, then: Vec<Link>) -> Fallback {
        let mut chain = vec![first];
        chain.extend(then);
        Fallback { chain }
    }

    async fn call(
        &self,
        req: &ChatRequest,
        text: &dyn TextSink,
        stream: bool,
    ) -> Result<ChatResponse, ModelError> {
        let mut at = 0;
        loop {
            let link = &self.chain[at];
            let asked = match &link.id {
                Some(id) => {
                    let mut r = req.clone();
                    r.model.clone_from(id);
                    std::borrow::Cow::Owned(r)
                }
                None => std::borrow::Cow::Borrowed(req),
            };
            let watch = Watch {
                inner: text,
                shown: AtomicBool::new(false),
            };
            let answer = if stream {
                link.model.stream(&asked, &watch).await
            } else {
                link.model.complete(&asked).await
            };
            let error = match answer {
                Ok(mut response) => {
                    if response.model.is_none() {
                        response.model = link.id.clone();
                    }
                    return Ok(response);
                }
                Err(e) => e,
            };
            let Some(next) = self.chain.get(at + 1) else {
                return Err(error);
            };
            if watch.shown.load(Ordering::SeqCst) || !falls_back(&error) {
                return Err(error);
            }
            let reason = error.to_string();
            text.fell_back(&link.label, &next.label, &reason);
            tracing::Span::current().record("archmax.model.fallback", next.label.as_str());
            tracing::warn!(from = %link.label, to = %next.label, reason = %reason, "model fallback");
            at += 1;
        }
    }
}

/// Whether a call that failed with `error` goes to the next model: the endpoint's failures
/// (after their retries), not the request's.
pub fn falls_back(error: &ModelError) -> bool {
    match error {
        ModelError::Exhausted { last, .. } => falls_back(last),
        ModelError::Http { status, .. } => {
            matches!(status, 401 | 403 | 404 | 408 | 429) || (500..=599).contains(status)
        }
        ModelError::Transport { .. } | ModelError::Timeout { .. } | ModelError::Decode { .. } => {
            true
        }
        ModelError::TooLarge { .. }
        | ModelError::InvalidRequest { .. }
        | ModelError::Unrecorded { .. }
        | ModelError::Replayed { .. } => false,
    }
}

/// Passes everything on, noting whether any text was shown.
struct Watch<'a> {
    inner: &'a dyn TextSink,
    shown: AtomicBool,
}

impl TextSink for Watch<'_> {
    fn text(&self, delta: &str) {
        self.shown.store(true, Ordering::SeqCst);
        self.inner.text(delta);
    }

    fn queued(&self, waited: std::time::Duration, limit: u32) {
        self.inner.queued(waited, limit);
    }

    fn fell_back(&self, from: &str, to: &str, reason: &str) {
        self.inner.fell_back(from, to, reason);
    }
}

impl Model for Fallback {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(self.call(req, &NoText, false))
    }

    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        Box::pin(self.call(req, text, true))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Fails with `error` (or answers) and keeps the model ids it was asked for.
    struct Fixed {
        answer: Result<(), fn() -> ModelError>,
        asked: Mutex<Vec<String>>,
        shows: bool,
    }

    impl Model for Fixed {
        fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
            self.stream(req, &NoText)
        }
        fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
            if let Ok(mut a) = self.asked.lock() {
                a.push(req.model.clone());
            }
            if self.shows {
                text.text("Hel");
            }
            let answer = match self.answer {
                Ok(()) => ChatResponse::from_value(&serde_json::json!({
                    "choices": [{ "message": { "role": "assistant", "content": "ok" }, "finish_reason": "stop" }]
                }))
                .map_err(|message| ModelError::Replayed { message }),
                Err(e) => Err(e()),
            };
            Box::pin(async move { answer })
        }
    }

    fn fixed(answer: Result<(), fn() -> ModelError>, shows: bool) -> Arc<Fixed> {
        Arc::new(Fixed {
            answer,
            asked: Mutex::default(),
            shows,
        })
    }

    fn down() -> ModelError {
        ModelError::Exhausted {
            attempts: 3,
            last: Box::new(ModelError::Http {
                url: "u".into(),
                model: "a".into(),
                status: 503,
                body_excerpt: String::new(),
            }),
        }
    }

    fn bad_request() -> ModelError {
        ModelError::Http {
            url: "u".into(),
            model: "a".into(),
            status: 400,
            body_excerpt: "context too long".into(),
        }
    }

    #[derive(Default)]
    struct Told(Mutex<Vec<String>>);
    impl TextSink for Told {
        fn text(&self, _: &str) {}
        fn fell_back(&self, from: &str, to: &str, _reason: &str) {
            if let Ok(mut t) = self.0.lock() {
                t.push(format!("{from} -> {to}"));
            }
        }
    }

    fn chain(first: Arc<Fixed>, then: &[Arc<Fixed>]) -> Fallback {
        Fallback::new(
            Link {
                model: first,
                id: None,
                label: "a".into(),
            },
            then.iter()
                .enumerate()
                .map(|(i, m)| Link {
                    model: Arc::clone(m) as Arc<dyn Model>,
                    id: Some(format!("b{i}")),
                    label: format!("b{i}"),
                })
                .collect(),
        )
    }

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
    }

    #[test]
    fn a_model_that_is_down_falls_to_the_next_which_answers_under_its_own_id() {
        let (a, b0, b1) = (
            fixed(Err(down), false),
            fixed(Err(down), false),
            fixed(Ok(()), false),
        );
        let f = chain(Arc::clone(&a), &[Arc::clone(&b0), Arc::clone(&b1)]);
        let told = Told::default();
        let req = ChatRequest::new("a".to_string(), Vec::new());
        let r = rt().block_on(f.stream(&req, &told)).expect("answered");
        assert_eq!(r.model.as_deref(), Some("b1"));
        assert_eq!(*b1.asked.lock().expect("asked"), ["b1"]);
        assert_eq!(*told.0.lock().expect("told"), ["a -> b0", "b0 -> b1"]);
    }

    #[test]
    fn a_request_s_own_4xx_and_a_failure_after_shown_text_do_not_fall_back() {
        let next = fixed(Ok(()), false);
        let f = chain(fixed(Err(bad_request), false), &[Arc::clone(&next)]);
        let req = ChatRequest::new("a".to_string(), Vec::new());
        assert!(rt().block_on(f.stream(&req, &NoText)).is_err());
        let f = chain(fixed(Err(down), true), &[Arc::clone(&next)]);
        assert!(rt().block_on(f.stream(&req, &NoText)).is_err());
        assert!(next.asked.lock().expect("asked").is_empty());
        assert!(falls_back(&down()));
        assert!(!falls_back(&bad_request()));
    }
}
