//! W3C trace context across process and host boundaries: the `traceparent` a park stores,
//! the link a resume adds, and a JS host's parent context for a turn.

use std::collections::HashMap;

use opentelemetry::propagation::TextMapPropagator;
use opentelemetry::trace::TraceContextExt;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The core's [`archmax_machine::trace::Propagation`], over `tracing-opentelemetry`.
pub(crate) struct OtelPropagation;

impl archmax_machine::trace::Propagation for OtelPropagation {
    fn traceparent(&self, span: &tracing::Span) -> Option<String> {
        let cx = span.context();
        let sc = cx.span().span_context().clone();
        sc.is_valid().then(|| {
            format!(
                "00-{}-{}-{:02x}",
                sc.trace_id(),
                sc.span_id(),
                sc.trace_flags().to_u8()
            )
        })
    }

    fn capture_content(&self, span: &tracing::Span) -> bool {
        span.with_subscriber(|(_, dispatch)| dispatch.downcast_ref::<CaptureContent>().is_some())
            .unwrap_or(false)
    }

    fn link(&self, span: &tracing::Span, traceparent: &str) {
        if let Some(cx) = context_from_traceparent(traceparent) {
            let sc = cx.span().span_context().clone();
            span.add_link(sc);
        }
    }
}

/// A layer that does nothing: its presence in a subscriber says the subscriber records
/// message contents (found by `downcast_ref`, so each subscriber answers for itself).
pub(crate) struct CaptureContent;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for CaptureContent {}

/// The remote context a W3C `traceparent` names; `None` when it is not one.
pub fn context_from_traceparent(traceparent: &str) -> Option<opentelemetry::Context> {
    let carrier = HashMap::from([("traceparent".to_string(), traceparent.trim().to_string())]);
    let cx = TraceContextPropagator::new().extract(&carrier);
    cx.span().span_context().is_valid().then_some(cx)
}

/// `work` with `traceparent` as the OpenTelemetry parent of the spans it opens at its top
/// (a JS host's turn under the host's own span). An invalid `traceparent` is an error that
/// names it.
pub fn with_parent<F: std::future::Future>(
    work: F,
    traceparent: Option<&str>,
) -> Result<opentelemetry::context::WithContext<F>, crate::Error> {
    use opentelemetry::context::FutureExt;
    let cx = match traceparent {
        Some(tp) => context_from_traceparent(tp).ok_or_else(|| {
            crate::Error(format!(
                "traceparent '{tp}' is not a W3C trace context (00-<32 hex>-<16 hex>-<2 hex>)"
            ))
        })?,
        None => opentelemetry::Context::current(),
    };
    Ok(work.with_context(cx))
}

/// A subscriber that wants nothing, kept registered for the life of the process once a
/// [`crate::Telemetry`] started.
///
/// `tracing` caches each callsite's interest across subscribers. While only one subscriber
/// is registered, it asks the registering thread's default instead of every subscriber, so
/// a callsite first reached on a thread without ours (an untraced agent's turn beside a
/// traced one) is cached as never wanted, for every subscriber. A second registered
/// subscriber, this one, makes `tracing` ask them all.
struct Bystander;

impl tracing::Subscriber for Bystander {
    fn register_callsite(
        &self,
        _: &'static tracing::Metadata<'static>,
    ) -> tracing::subscriber::Interest {
        tracing::subscriber::Interest::sometimes()
    }
    fn max_level_hint(&self) -> Option<tracing::level_filters::LevelFilter> {
        Some(tracing::level_filters::LevelFilter::OFF)
    }
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        false
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {}
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// Registers the [`Bystander`], once.
pub(crate) fn keep_interest_asked() {
    static BYSTANDER: std::sync::OnceLock<tracing::Dispatch> = std::sync::OnceLock::new();
    BYSTANDER.get_or_init(|| tracing::Dispatch::new(Bystander));
}
