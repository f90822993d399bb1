//! OTLP over gRPC: tonic's exporter on a runtime of its own.
//!
//! The batch processor exports on a plain thread of its own (`futures_executor::block_on`),
//! where tonic finds no tokio runtime: its channel's worker and the HTTP/2 connection are
//! tokio tasks. This exporter owns a current-thread runtime, builds the channel inside it and
//! drives each export on it, so those tasks run exactly while an export is under way, on the
//! batch thread, never on a turn's runtime.

use std::time::Duration;

use opentelemetry_otlp::tonic_types::metadata::MetadataMap;
use opentelemetry_otlp::{WithExportConfig, WithTonicConfig};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SpanData, SpanExporter};

use crate::{Error, Export};

/// tonic's span exporter and the runtime it runs on.
pub(crate) struct Exporter {
    inner: opentelemetry_otlp::SpanExporter,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("grpc::Exporter")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

/// The gRPC exporter `export` describes: its headers as request metadata, its timeout per
/// export. The channel connects lazily, at the first export.
pub(crate) fn exporter(export: &Export, timeout: Option<Duration>) -> Result<Exporter, Error> {
    let mut headers = http::HeaderMap::new();
    for (k, v) in &export.headers {
        let key = http::HeaderName::from_bytes(k.as_bytes()).map_err(|e| {
            Error(format!(
                "OTEL_EXPORTER_OTLP_HEADERS: '{k}' is not a gRPC metadata key: {e}"
            ))
        })?;
        let value = http::HeaderValue::from_str(v).map_err(|e| {
            Error(format!(
                "OTEL_EXPORTER_OTLP_HEADERS: the value of '{k}' is not a gRPC metadata value: {e}"
            ))
        })?;
        headers.insert(key, value);
    }
    let metadata = MetadataMap::from_headers(headers);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error(format!("cannot start the gRPC exporter's runtime: {e}")))?;
    let inner = {
        // The lazy channel spawns its worker onto the runtime it is built in.
        let _entered = runtime.enter();
        let mut b = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(export.endpoint.clone())
            .with_metadata(metadata);
        if let Some(t) = timeout {
            b = b.with_timeout(t);
        }
        b.build()
            .map_err(|e| Error(format!("cannot export spans to '{}': {e}", export.endpoint)))?
    };
    Ok(Exporter { inner, runtime })
}

impl SpanExporter for Exporter {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        // Called from the batch processor's thread, outside any runtime; a call from inside
        // one (a host's own processor) would make `block_on` panic, so it is refused.
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(OTelSdkError::InternalFailure(
                "the gRPC exporter cannot export from inside an async runtime".to_string(),
            ));
        }
        self.runtime.block_on(self.inner.export(batch))
    }

    fn shutdown_with_timeout(&mut self, timeout: Duration) -> OTelSdkResult {
        let _entered = self.runtime.enter();
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&mut self) -> OTelSdkResult {
        let _entered = self.runtime.enter();
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &opentelemetry_sdk::Resource) {
        self.inner.set_resource(resource);
    }
}
