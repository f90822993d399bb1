//! The Prometheus metrics of `GET /metrics` (text exposition via `prometheus-client`):
//! turns and their latency by arrival, model calls (counted where they are made, so a call
//! whose endpoint reports no usage counts too), their failures and latency, tokens (as the
//! endpoint reports them), parks, HTTP requests, and each model endpoint's slots: its bound,
//! the calls sending and queued now, and the waits so far (read from the process-wide
//! registry on each scrape).

use std::sync::Arc;
use std::time::{Duration, Instant};

use archmax_machine::model::{ChatRequest, Model, ModelFuture, TextSink};

use archmax_machine::Event;
use archmax_machine::model::limit::EndpointFigures;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// A label set of one value.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct Kind {
    /// `message`, `decision`, `reply`, `delivery`, `trigger` (turns); `input`/`output`/… (tokens).
    pub kind: String,
}

/// Every metric the server exports.
pub struct Metrics {
    registry: Registry,
    turns: Family<Kind, Counter>,
    turn_seconds: Family<Kind, Histogram>,
    model_calls: Counter,
    model_failures: Counter,
    model_seconds: Histogram,
    tokens: Family<Kind, Counter>,
    cost_usd: Counter<f64, std::sync::atomic::AtomicU64>,
    parks: Family<Kind, Counter>,
    requests: Family<Kind, Counter>,
}

fn turn_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.005, 2.0, 14))
}

impl Metrics {
    /// The registry with every metric registered under `archmax_`.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("archmax");
        let turns = Family::<Kind, Counter>::default();
        let turn_seconds =
            Family::<Kind, Histogram>::new_with_constructor(turn_histogram as fn() -> Histogram);
        let model_calls = Counter::default();
        let model_failures = Counter::default();
        let model_seconds = turn_histogram();
        let tokens = Family::<Kind, Counter>::default();
        let cost_usd = Counter::<f64, std::sync::atomic::AtomicU64>::default();
        let parks = Family::<Kind, Counter>::default();
        let requests = Family::<Kind, Counter>::default();
        registry.register("turns", "Turns run, by arrival", turns.clone());
        registry.register(
            "turn_seconds",
            "Wall-clock time of a turn, by arrival",
            turn_seconds.clone(),
        );
        registry.register(
            "model_calls",
            "Model calls (answered or failed), whether or not the endpoint reported usage",
            model_calls.clone(),
        );
        registry.register(
            "model_call_failures",
            "Model calls that failed, retries included",
            model_failures.clone(),
        );
        registry.register(
            "model_call_seconds",
            "Wall-clock time of a model call (answered or failed), retries included",
            model_seconds.clone(),
        );
        registry.register("tokens", "Model tokens, by kind", tokens.clone());
        registry.register(
            "cost_usd",
            "US dollars spent on model calls, at the configured prices",
            cost_usd.clone(),
        );
        registry.register("parks", "Sessions parked, by channel", parks.clone());
        registry.register("http_requests", "HTTP requests, by route", requests.clone());
        registry.register_collector(Box::new(EndpointSlots));
        Metrics {
            registry,
            turns,
            turn_seconds,
            model_calls,
            model_failures,
            model_seconds,
            tokens,
            cost_usd,
            parks,
            requests,
        }
    }

    fn kind(kind: &str) -> Kind {
        Kind {
            kind: kind.to_string(),
        }
    }

    /// Counts what an event says about tokens and parks.
    pub fn on_event(&self, event: &Event) {
        match event {
            Event::ModelUsage {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cache_creation_tokens,
                cost_usd,
                ..
            } => {
                if let Some(cost) = cost_usd {
                    self.cost_usd.inc_by(*cost);
                }
                for (k, n) in [
                    ("input", input_tokens),
                    ("output", output_tokens),
                    ("cache_read", cache_read_tokens),
                    ("cache_creation", cache_creation_tokens),
                ] {
                    self.tokens.get_or_create(&Metrics::kind(k)).inc_by(*n);
                }
            }
            Event::Parked { awaiting, .. } => {
                self.parks.get_or_create(&Metrics::kind(awaiting)).inc();
            }
            _ => {}
        }
    }

    /// Counts one turn of `arrival` that took `took`.
    pub fn on_turn(&self, arrival: &str, took: Duration) {
        let k = Metrics::kind(arrival);
        self.turns.get_or_create(&k).inc();
        self.turn_seconds
            .get_or_create(&k)
            .observe(took.as_secs_f64());
    }

    /// Counts one model call that took `took` (`ok`: it answered).
    pub fn on_model_call(&self, took: Duration, ok: bool) {
        self.model_calls.inc();
        if !ok {
            self.model_failures.inc();
        }
        self.model_seconds.observe(took.as_secs_f64());
    }

    /// Counts one request of `route`.
    pub fn on_request(&self, route: &str) {
        self.requests.get_or_create(&Metrics::kind(route)).inc();
    }

    /// The text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if prometheus_client::encoding::text::encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        out
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// One model endpoint, named by its URL (without any credentials in it).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct EndpointLabel {
    endpoint: String,
}

/// Each endpoint's figures from `archmax_machine::model::limit`, read at the scrape.
#[derive(Debug)]
struct EndpointSlots;

/// A gauge of [`EndpointSlots`]: its name, its help text, and how it reads an endpoint's
/// figures.
type SlotGauge = (&'static str, &'static str, fn(&EndpointFigures) -> i64);

impl Collector for EndpointSlots {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let figures = archmax_machine::model::limit::snapshot();
        let label = |url: &str| EndpointLabel {
            endpoint: without_credentials(url),
        };
        let gauges: [SlotGauge; 3] = [
            (
                "model_endpoint_limit",
                "Model calls an endpoint takes at once (maxConcurrentCalls)",
                |f| i64::from(f.limit),
            ),
            (
                "model_endpoint_in_flight",
                "Model calls being sent to an endpoint now",
                |f| i64::from(f.in_flight),
            ),
            (
                "model_endpoint_queued",
                "Model calls waiting for a slot of an endpoint now",
                |f| i64::from(f.waiting),
            ),
        ];
        for (name, help, value) in gauges {
            let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for f in &figures {
                let l = label(&f.url);
                ConstGauge::new(value(f)).encode(family.encode_family(&l)?)?;
            }
        }
        let mut waits = encoder.encode_descriptor(
            "model_queue_waits",
            "Model calls that waited for a slot of their endpoint",
            None,
            MetricType::Counter,
        )?;
        for f in &figures {
            let l = label(&f.url);
            ConstCounter::new(f.waited_calls).encode(waits.encode_family(&l)?)?;
        }
        let mut seconds = encoder.encode_descriptor(
            "model_queue_wait_seconds",
            "Time model calls spent waiting for a slot of their endpoint",
            None,
            MetricType::Counter,
        )?;
        for f in &figures {
            let l = label(&f.url);
            ConstCounter::new(f.waited_seconds).encode(seconds.encode_family(&l)?)?;
        }
        Ok(())
    }
}

/// `url` without a `user:password@` part.
fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let host_end = rest.find('/').unwrap_or(rest.len());
    match rest[..host_end].rfind('@') {
        Some(at) => format!("{scheme}://{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

/// A model whose every call is counted into [`Metrics`] (`model_calls`, `model_call_failures`)
/// with its wall-clock time (`model_call_seconds`).
pub struct TimedModel {
    inner: Arc<dyn Model>,
    metrics: Arc<Metrics>,
}

impl TimedModel {
    /// `inner`, timed into `metrics`.
    pub fn new(inner: Arc<dyn Model>, metrics: Arc<Metrics>) -> TimedModel {
        TimedModel { inner, metrics }
    }
}

impl Model for TimedModel {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let started = Instant::now();
            let answer = self.inner.complete(req).await;
            self.metrics
                .on_model_call(started.elapsed(), answer.is_ok());
            answer
        })
    }

    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        Box::pin(async move {
            let started = Instant::now();
            let answer = self.inner.stream(req, text).await;
            self.metrics
                .on_model_call(started.elapsed(), answer.is_ok());
            answer
        })
    }
}

#[cfg(test)]
mod tests {
    use archmax_machine::model::{ChatResponse, ModelError, NoText};
    use serde_json::json;

    use super::*;

    /// Answers without `usage` (as llama.cpp does), then fails.
    struct NoUsage;

    impl Model for NoUsage {
        fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
            Box::pin(async move {
                if req.messages.is_empty() {
                    return Err(ModelError::Replayed {
                        message: "down".into(),
                    });
                }
                ChatResponse::from_value(&json!({
                    "choices": [{ "message": { "role": "assistant", "content": "hi" }, "finish_reason": "stop" }]
                }))
                .map_err(|message| ModelError::Replayed { message })
            })
        }
    }

    fn line<'a>(text: &'a str, name: &str) -> &'a str {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn every_call_counts_whether_it_reported_usage_answered_or_failed() {
        let metrics = Arc::new(Metrics::new());
        let model = TimedModel::new(Arc::new(NoUsage), Arc::clone(&metrics));
        let ask = |messages: serde_json::Value| -> ChatRequest {
            serde_json::from_value(json!({ "model": "m", "messages": messages }))
                .expect("a request")
        };
        let said = ask(json!([{ "role": "user", "content": "hello" }]));
        assert!(model.complete(&said).await.is_ok());
        assert!(model.stream(&said, &NoText).await.is_ok());
        assert!(model.complete(&ask(json!([]))).await.is_err());
        let text = metrics.render();
        assert_eq!(
            line(&text, "archmax_model_calls_total"),
            "archmax_model_calls_total 3"
        );
        assert_eq!(
            line(&text, "archmax_model_call_failures_total"),
            "archmax_model_call_failures_total 1"
        );
        assert_eq!(
            line(&text, "archmax_model_call_seconds_count"),
            "archmax_model_call_seconds_count 3"
        );
        // A usage event adds tokens, never a second count of its call.
        metrics.on_event(&Event::ModelUsage {
            state: "a".into(),
            input_tokens: 7,
            output_tokens: 2,
            cache_read_tokens: 0,
            cache_creation_tokens: 0,
            model: None,
            cost_usd: Some(0.25),
            turn_tokens: None,
            turn_cost_usd: None,
            session_tokens: None,
            session_cost_usd: None,
        });
        let text = metrics.render();
        assert_eq!(
            line(&text, "archmax_model_calls_total"),
            "archmax_model_calls_total 3"
        );
        assert!(
            text.contains("archmax_tokens_total{kind=\"input\"} 7"),
            "{text}"
        );
        assert_eq!(
            line(&text, "archmax_cost_usd_total"),
            "archmax_cost_usd_total 0.25"
        );
    }

    #[tokio::test]
    async fn each_endpoint_s_slots_and_waits_are_scraped_without_credentials() {
        let url = "http://user:secret@127.0.0.1:9/v1/chat/completions#metrics";
        let endpoint = archmax_machine::model::limit::endpoint(url, 1);
        let held = endpoint.take().await;
        let waiter = {
            let e = Arc::clone(&endpoint);
            tokio::spawn(async move { e.take().await.waited })
        };
        tokio::time::sleep(Duration::from_millis(20)).await;
        let label = "{endpoint=\"http://127.0.0.1:9/v1/chat/completions#metrics\"}";
        let text = Metrics::new().render();
        assert!(!text.contains("secret"), "{text}");
        for (name, value) in [
            ("archmax_model_endpoint_limit", "1"),
            ("archmax_model_endpoint_in_flight", "1"),
            ("archmax_model_endpoint_queued", "1"),
        ] {
            assert_eq!(
                line(&text, &format!("{name}{label}")),
                format!("{name}{label} {value}")
            );
        }
        drop(held);
        assert!(waiter.await.is_ok_and(|w| w >= Duration::from_millis(15)));
        let text = Metrics::new().render();
        assert_eq!(
            line(&text, &format!("archmax_model_queue_waits_total{label}")),
            format!("archmax_model_queue_waits_total{label} 1")
        );
        assert!(
            text.contains(&format!(
                "archmax_model_queue_wait_seconds_total{label} 0.0"
            )),
            "{text}"
        );
    }
}
