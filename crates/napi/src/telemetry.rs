//! `createAgent({ telemetry })`: the agent's OTLP export (its own settings, else the
//! `OTEL_*` environment's, shared by every agent of the process that uses it) and the
//! parent trace context a turn runs under. Translation only: `archmax-telemetry` does the
//! work.

use std::future::Future;
use std::sync::{Arc, Mutex};

use archmax_telemetry::{Config, Export, Protocol, Telemetry};
use napi_derive::napi;
use tracing::instrument::WithSubscriber;

/// `telemetry` of `createAgent`: where this agent's spans go, instead of the `OTEL_*`
/// environment. A native addon cannot hand its spans to the host's JavaScript
/// `TracerProvider`; a host that has one points this at the same collector and passes its
/// active context per turn (`traceparent`), so the agent's spans join the host's traces.
#[napi(object)]
#[derive(Default)]
pub struct NativeTelemetryOptions {
    /// `false`: no export, whatever the environment says.
    pub enabled: Option<bool>,
    /// The OTLP traces endpoint, complete (`http://collector:4318/v1/traces`).
    pub endpoint: Option<String>,
    /// `http/protobuf` (default), `http/json` or `grpc`.
    pub protocol: Option<String>,
    /// Sent with every export request (an API key, say).
    pub headers: Option<std::collections::HashMap<String, String>>,
    /// The resource's `service.name` (default `OTEL_SERVICE_NAME`, else `archmax`).
    pub service_name: Option<String>,
    /// Model spans carry the messages (default
    /// `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`).
    pub capture_message_content: Option<bool>,
}

/// The environment's telemetry, shared by the agents that use it (one exporter per
/// process and configuration).
static FROM_ENV: Mutex<Option<(Config, Arc<Telemetry>)>> = Mutex::new(None);

/// The telemetry an agent opened with `options` uses; `Ok(None)`: none.
pub(crate) fn for_agent(
    options: Option<&NativeTelemetryOptions>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Arc<Telemetry>>, String> {
    let base = Config::from_env(env).map_err(|e| e.to_string())?;
    let Some(o) = options else {
        return shared(base);
    };
    if o.enabled == Some(false) {
        return Ok(None);
    }
    let mut config = base;
    if let Some(name) = &o.service_name {
        config.service_name = name.clone();
    }
    if let Some(c) = o.capture_message_content {
        config.capture_content = c;
    }
    if let Some(endpoint) = o
        .endpoint
        .as_deref()
        .map(str::trim)
        .filter(|e| !e.is_empty())
    {
        let protocol = match o.protocol.as_deref() {
            Some(p) => Protocol::parse(p, "telemetry.protocol").map_err(|e| e.to_string())?,
            None => Protocol::HttpProtobuf,
        };
        config.export = Some(Export {
            endpoint: endpoint.to_string(),
            protocol,
            headers: o.headers.clone().unwrap_or_default().into_iter().collect(),
            timeout_ms: None,
        });
    } else if o.protocol.is_some() || o.headers.is_some() {
        return Err("telemetry.protocol and telemetry.headers need telemetry.endpoint".into());
    }
    if config.export.is_none() && !config.is_active() {
        return Ok(None);
    }
    // Built off the JS thread's async context: the exporter's HTTP client is a blocking one.
    let started = std::thread::spawn(move || Telemetry::start(&config))
        .join()
        .map_err(|_| "the telemetry could not start".to_string())?;
    Ok(started.map_err(|e| e.to_string())?.map(Arc::new))
}

fn shared(config: Config) -> Result<Option<Arc<Telemetry>>, String> {
    if !config.is_active() {
        return Ok(None);
    }
    let mut slot = FROM_ENV
        .lock()
        .map_err(|_| "the telemetry lock is poisoned".to_string())?;
    if let Some((c, t)) = slot.as_ref()
        && *c == config
    {
        return Ok(Some(Arc::clone(t)));
    }
    let started = {
        let config = config.clone();
        std::thread::spawn(move || Telemetry::start(&config))
            .join()
            .map_err(|_| "the telemetry could not start".to_string())?
    };
    let Some(t) = started.map_err(|e| e.to_string())?.map(Arc::new) else {
        return Ok(None);
    };
    *slot = Some((config, Arc::clone(&t)));
    Ok(Some(t))
}

/// `call` under `telemetry`'s subscriber and `traceparent`'s context, its spans sent when it
/// ends; `call` itself when there is no telemetry. A `traceparent` that is not one is the
/// error the turn answers.
pub(crate) fn traced<F, T>(
    telemetry: Option<Arc<Telemetry>>,
    traceparent: Option<String>,
    call: F,
) -> Result<std::pin::Pin<Box<dyn Future<Output = T> + Send>>, String>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    let Some(t) = telemetry else {
        return Ok(Box::pin(call));
    };
    let call = archmax_telemetry::with_parent(
        call.with_subscriber(t.dispatch().clone()),
        traceparent.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    Ok(Box::pin(async move {
        let out = call.await;
        flush(t).await;
        out
    }))
}

/// Sends the turn's spans on a thread of its own (the export blocks), awaited.
async fn flush(t: Arc<Telemetry>) {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("archmax-telemetry-flush".into())
        .spawn(move || {
            let _ = tx.send(t.flush());
        });
    if spawned.is_ok() {
        let _ = rx.await;
    }
}

/// Stops an agent's own export at `dispose` (its last spans sent), off the JS thread.
pub(crate) fn close(t: Arc<Telemetry>) {
    let _ = std::thread::Builder::new()
        .name("archmax-telemetry-close".into())
        .spawn(move || {
            // The environment's telemetry is shared: only the last holder shuts it down,
            // and the shared slot holds one.
            if Arc::strong_count(&t) == 1 {
                let _ = t.shutdown();
            }
        });
}
