//! `ARCHMAX_LOG`: one JSON object per line for every event the filter lets through, and for
//! every span as it closes, each with its trace and span ids (the OpenTelemetry ones, so a
//! log line finds its trace).
//!
//! Our own layer rather than `tracing-subscriber`'s JSON formatter: that one has no place
//! for the OpenTelemetry ids, which live in the span's `OtelData`
//! (design/decisions/0163-own-json-lines-layer.md).

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_opentelemetry::OtelData;
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;

/// Where the lines go.
pub type Sink = Arc<Mutex<Box<dyn Write + Send>>>;

/// The JSON-lines layer.
pub struct JsonLines {
    sink: Sink,
}

impl JsonLines {
    pub fn new(sink: Sink) -> Self {
        JsonLines { sink }
    }

    fn write(&self, line: &Map<String, Value>) {
        let Ok(mut text) = serde_json::to_vec(line) else {
            return;
        };
        text.push(b'\n');
        if let Ok(mut sink) = self.sink.lock() {
            let _ = sink.write_all(&text);
            let _ = sink.flush();
        }
    }
}

/// A span's fields as recorded so far, and when it opened.
struct Fields {
    values: Map<String, Value>,
    opened: Instant,
}

struct Collect<'a>(&'a mut Map<String, Value>);

impl Visit for Collect<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), Value::from(value));
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), Value::from(value));
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), Value::from(value));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), Value::from(value));
    }
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), Value::from(value));
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().into(), Value::from(format!("{value:?}")));
    }
}

fn unix_nanos() -> Value {
    let ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    Value::from(ns.to_string())
}

impl JsonLines {
    /// The trace and span ids of `span` (and its name), into `line`.
    fn ids<S>(span: &tracing_subscriber::registry::SpanRef<'_, S>, line: &mut Map<String, Value>)
    where
        S: for<'a> LookupSpan<'a>,
    {
        line.insert("span".into(), Value::from(span.name()));
        let ext = span.extensions();
        if let Some(data) = ext.get::<OtelData>() {
            if let Some(t) = data.trace_id() {
                line.insert("trace_id".into(), Value::from(t.to_string()));
            }
            if let Some(s) = data.span_id() {
                line.insert("span_id".into(), Value::from(s.to_string()));
            }
        }
    }
}

impl<S> tracing_subscriber::Layer<S> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        let mut values = Map::new();
        attrs.record(&mut Collect(&mut values));
        span.extensions_mut().insert(Fields {
            values,
            opened: Instant::now(),
        });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else {
            return;
        };
        if let Some(fields) = span.extensions_mut().get_mut::<Fields>() {
            values.record(&mut Collect(&mut fields.values));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut line = Map::new();
        line.insert("time_unix_nano".into(), unix_nanos());
        let meta = event.metadata();
        line.insert("level".into(), Value::from(meta.level().as_str()));
        line.insert("target".into(), Value::from(meta.target()));
        let mut fields = Map::new();
        event.record(&mut Collect(&mut fields));
        line.insert("fields".into(), Value::Object(fields));
        if let Some(span) = ctx.event_span(event) {
            Self::ids(&span, &mut line);
        }
        self.write(&line);
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else {
            return;
        };
        let mut line = Map::new();
        line.insert("time_unix_nano".into(), unix_nanos());
        line.insert(
            "level".into(),
            Value::from(span.metadata().level().as_str()),
        );
        line.insert("target".into(), Value::from(span.metadata().target()));
        line.insert("message".into(), Value::from("span closed"));
        Self::ids(&span, &mut line);
        if let Some(fields) = span.extensions().get::<Fields>() {
            line.insert(
                "duration_ms".into(),
                Value::from(fields.opened.elapsed().as_secs_f64() * 1000.0),
            );
            line.insert("fields".into(), Value::Object(fields.values.clone()));
        }
        self.write(&line);
    }
}
