//! The hosts' telemetry (the CLI, the Node addon): the runtime's `tracing` spans
//! (`archmax_machine::trace`) exported over OTLP with the OpenTelemetry SDK, and the
//! `ARCHMAX_LOG` structured logs. The core never links this crate; a host starts one
//! [`Telemetry`] and runs its turns inside [`Telemetry::dispatch`].
//!
//! ```
//! use archmax_telemetry::{Config, Telemetry};
//! // Nothing configured: nothing starts, and a plain run pays nothing.
//! let config = Config::from_env(|_| None).expect("config");
//! assert!(Telemetry::start(&config).expect("start").is_none());
//! ```

mod config;
mod grpc;
mod logs;
mod propagation;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::filter::{EnvFilter, FilterExt, filter_fn};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::{Layer, Registry};

pub use config::{Config, Export, Protocol, parse_headers, signal_endpoint};
pub use propagation::{context_from_traceparent, with_parent};

/// A telemetry setting that cannot be used, with what and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// The spans the runtime opens: the export keeps to them (an HTTP client's own spans, say,
/// are not the run's).
const RUNTIME_TARGET: &str = "archmax_machine";

/// Running telemetry: the subscriber the host's turns run under, and the provider that
/// batches and exports their spans.
pub struct Telemetry {
    dispatch: tracing::Dispatch,
    provider: SdkTracerProvider,
    /// Where the spans go (`None`: nowhere), for the errors.
    endpoint: Option<String>,
}

impl Telemetry {
    /// Starts what `config` asks for; `None` when it asks for nothing (no endpoint, no
    /// logs). Builds the exporter: call it outside an async runtime (the HTTP client is a
    /// blocking one, on the batch processor's own thread).
    pub fn start(config: &Config) -> Result<Option<Telemetry>, Error> {
        if !config.is_active() {
            return Ok(None);
        }
        Self::start_with(config, config.export.as_ref().map(exporter).transpose()?)
    }

    /// [`start`](Self::start) with a given exporter (`None`: spans get ids, for the logs,
    /// and go nowhere). The benchmarks pass a no-op one.
    pub fn start_with<E>(config: &Config, exporter: Option<E>) -> Result<Option<Telemetry>, Error>
    where
        E: opentelemetry_sdk::trace::SpanExporter + 'static,
    {
        archmax_machine::trace::install(Box::new(propagation::OtelPropagation));
        propagation::keep_interest_asked();
        let resource = opentelemetry_sdk::Resource::builder()
            .with_service_name(config.service_name.clone())
            .build();
        let mut builder = SdkTracerProvider::builder().with_resource(resource);
        if let Some(e) = exporter {
            builder = builder.with_batch_exporter(e);
        }
        let provider = builder.build();
        let tracer = provider.tracer("archmax");
        // Filters asked per callsite, never cached as `always`: a process may run turns
        // under several of these subscribers (two agents) and under none.
        let spans = tracing_opentelemetry::layer()
            .with_tracer(tracer)
            .with_tracked_inactivity(false)
            .with_threads(false)
            .with_location(false)
            .with_filter(filter_fn(|meta| meta.target().starts_with(RUNTIME_TARGET)));
        let logs = match &config.log_filter {
            Some(directive) => {
                let filter = EnvFilter::builder()
                    .parse(directive)
                    .map_err(|e| Error(format!("ARCHMAX_LOG is '{directive}': {e}")))?;
                let asked = filter_fn(|_| true);
                Some(logs::JsonLines::new(log_sink(config)?).with_filter(filter.and(asked)))
            }
            None => None,
        };
        // The log layer sits under the span layer: it closes a span before the span layer
        // takes the span's OpenTelemetry data away.
        let content = config
            .capture_content
            .then_some(propagation::CaptureContent);
        let subscriber = Registry::default().with(logs).with(spans).with(content);
        Ok(Some(Telemetry {
            dispatch: tracing::Dispatch::new(subscriber),
            provider,
            endpoint: config.export.as_ref().map(|e| e.endpoint.clone()),
        }))
    }

    /// The subscriber to run turns under (`tracing::instrument::WithSubscriber`).
    pub fn dispatch(&self) -> &tracing::Dispatch {
        &self.dispatch
    }

    /// Sends every finished span now (a turn's end). Blocks until the export answered; a
    /// failed export is the error.
    pub fn flush(&self) -> Result<(), Error> {
        self.provider.force_flush().map_err(|e| {
            let to = self.endpoint.as_deref().unwrap_or("nowhere");
            Error(format!("cannot send the spans to '{to}': {e}"))
        })
    }

    /// Flushes and stops the export (the process's or the agent's end). The SDK's shutdown
    /// drops its last export's result, so the flush before it is what reports a failure.
    pub fn shutdown(&self) -> Result<(), Error> {
        let flushed = self.flush();
        let stopped = self
            .provider
            .shutdown()
            .map_err(|e| Error(format!("cannot shut the span export down: {e}")));
        flushed.and(stopped)
    }
}

fn log_sink(config: &Config) -> Result<logs::Sink, Error> {
    let out: Box<dyn std::io::Write + Send> = match &config.log_file {
        Some(path) => Box::new(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| {
                    Error(format!(
                        "ARCHMAX_LOG_FILE: cannot open '{}': {e}",
                        path.display()
                    ))
                })?,
        ),
        None => Box::new(std::io::stderr()),
    };
    Ok(Arc::new(Mutex::new(out)))
}

/// The OTLP exporter `export` describes.
fn exporter(export: &Export) -> Result<OtlpExporter, Error> {
    use opentelemetry_otlp::{WithExportConfig, WithHttpConfig};
    let timeout = export.timeout_ms.map(std::time::Duration::from_millis);
    let built = match export.protocol {
        Protocol::HttpJson | Protocol::HttpProtobuf => {
            let protocol = if export.protocol == Protocol::HttpJson {
                opentelemetry_otlp::Protocol::HttpJson
            } else {
                opentelemetry_otlp::Protocol::HttpBinary
            };
            let headers: HashMap<String, String> = export.headers.clone().into_iter().collect();
            let mut b = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_protocol(protocol)
                .with_endpoint(export.endpoint.clone())
                .with_headers(headers);
            if let Some(t) = timeout {
                b = b.with_timeout(t);
            }
            b.build()
        }
        Protocol::Grpc => return grpc::exporter(export, timeout).map(OtlpExporter::Grpc),
    };
    built
        .map(OtlpExporter::Http)
        .map_err(|e| Error(format!("cannot export spans to '{}': {e}", export.endpoint)))
}

/// The exporter of a configured protocol: HTTP's exports on the batch processor's thread
/// with a blocking client; gRPC's on a runtime of its own ([`grpc::Exporter`]).
#[derive(Debug)]
enum OtlpExporter {
    Http(opentelemetry_otlp::SpanExporter),
    Grpc(grpc::Exporter),
}

impl opentelemetry_sdk::trace::SpanExporter for OtlpExporter {
    async fn export(
        &self,
        batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        match self {
            OtlpExporter::Http(e) => e.export(batch).await,
            OtlpExporter::Grpc(e) => e.export(batch).await,
        }
    }

    fn shutdown_with_timeout(
        &mut self,
        timeout: std::time::Duration,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        match self {
            OtlpExporter::Http(e) => e.shutdown_with_timeout(timeout),
            OtlpExporter::Grpc(e) => e.shutdown_with_timeout(timeout),
        }
    }

    fn force_flush(&mut self) -> opentelemetry_sdk::error::OTelSdkResult {
        match self {
            OtlpExporter::Http(e) => e.force_flush(),
            OtlpExporter::Grpc(e) => e.force_flush(),
        }
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        match self {
            OtlpExporter::Http(e) => e.set_resource(resource),
            OtlpExporter::Grpc(e) => e.set_resource(resource),
        }
    }
}
