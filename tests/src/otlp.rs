//! OTLP receivers on 127.0.0.1 for the telemetry tests and benchmark. [`Receiver::start`]
//! accepts `POST /v1/traces` in the JSON encoding (`http/json`) and answers `200 {}`;
//! [`Receiver::start_grpc`] serves the collector's gRPC `TraceService/Export` (tonic) and
//! keeps each request in the same JSON encoding, with its metadata. Both decode every span
//! they got into a [`Span`] (ids, parent, name, attributes, links).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{
    TraceService, TraceServiceServer,
};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use serde_json::Value;

/// One span as the receiver decoded it.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a root.
    pub parent_span_id: String,
    pub name: String,
    /// The resource's `service.name`.
    pub service: String,
    /// Attribute values as JSON: strings, numbers (an OTLP `intValue` string as a number),
    /// booleans.
    pub attributes: BTreeMap<String, Value>,
    /// (trace id, span id) of each link.
    pub links: Vec<(String, String)>,
}

impl Span {
    /// The string attribute `key`, if present.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }
}

/// (path, content type, body as JSON, request headers or gRPC metadata) of a request.
type Request = (String, String, Value, BTreeMap<String, String>);
type Requests = Arc<Mutex<Vec<Request>>>;

/// The receiver: runs until dropped.
pub struct Receiver {
    port: u16,
    bodies: Requests,
}

impl Receiver {
    pub fn start() -> std::io::Result<Receiver> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&bodies);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let seen = Arc::clone(&seen);
                std::thread::spawn(move || serve(stream, &seen));
            }
        });
        Ok(Receiver { port, bodies })
    }

    /// A gRPC receiver (the collector's `TraceService` over HTTP/2, tonic), on a runtime of
    /// its own thread.
    pub fn start_grpc() -> std::io::Result<Receiver> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        listener.set_nonblocking(true)?;
        let bodies: Requests = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&bodies);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        std::thread::spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
                let _ = tonic::transport::Server::builder()
                    .add_service(TraceServiceServer::new(Collector { seen }))
                    .serve_with_incoming(incoming)
                    .await;
            });
        });
        Ok(Receiver { port, bodies })
    }

    /// `http://127.0.0.1:<port>` (the base `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// How many export requests arrived.
    pub fn requests(&self) -> usize {
        self.bodies.lock().map(|b| b.len()).unwrap_or(0)
    }

    /// (path, content type) of each request.
    pub fn request_heads(&self) -> Vec<(String, String)> {
        self.bodies
            .lock()
            .map(|b| {
                b.iter()
                    .map(|(p, c, _, _)| (p.clone(), c.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The headers (HTTP) or metadata (gRPC) of each request, names in lower case.
    pub fn request_headers(&self) -> Vec<BTreeMap<String, String>> {
        self.bodies
            .lock()
            .map(|b| b.iter().map(|(_, _, _, h)| h.clone()).collect())
            .unwrap_or_default()
    }

    /// Every span received so far, in arrival order.
    pub fn spans(&self) -> Vec<Span> {
        let bodies = self.bodies.lock().map(|b| b.clone()).unwrap_or_default();
        bodies.iter().flat_map(|(_, _, b, _)| decode(b)).collect()
    }

    /// Waits (up to `timeout`) until at least `n` spans arrived; the spans then.
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Span> {
        let start = Instant::now();
        loop {
            let spans = self.spans();
            if spans.len() >= n || start.elapsed() > timeout {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The gRPC collector service: every export kept as the HTTP receiver keeps its bodies.
struct Collector {
    seen: Requests,
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        let metadata = request
            .metadata()
            .clone()
            .into_headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    v.to_str().unwrap_or_default().to_string(),
                )
            })
            .collect();
        let content_type = request
            .metadata()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let body = serde_json::to_value(request.get_ref()).unwrap_or(Value::Null);
        if let Ok(mut s) = self.seen.lock() {
            s.push((
                "/opentelemetry.proto.collector.trace.v1.TraceService/Export".to_string(),
                content_type,
                body,
                metadata,
            ));
        }
        Ok(tonic::Response::new(ExportTraceServiceResponse {
            partial_success: None,
        }))
    }
}

fn serve(stream: TcpStream, seen: &Mutex<Vec<Request>>) {
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = String::new();
        match reader.read_line(&mut request_line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let path = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_string();
        let mut length = 0usize;
        let mut content_type = String::new();
        let mut headers = BTreeMap::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
                match k.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = v.trim().parse().unwrap_or(0),
                    "content-type" => content_type = v.trim().to_string(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
        if let Ok(mut s) = seen.lock() {
            s.push((path, content_type, json, headers));
        }
        let answer =
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}";
        if writer.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// The spans of one `ExportTraceServiceRequest` in the JSON encoding.
pub fn decode(body: &Value) -> Vec<Span> {
    let list = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let text = |v: &Value, k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let mut out = Vec::new();
    for rs in list(body, "resourceSpans") {
        let resource = rs.get("resource").cloned().unwrap_or(Value::Null);
        let service = attributes(&list(&resource, "attributes"))
            .get("service.name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        for ss in list(&rs, "scopeSpans") {
            for s in list(&ss, "spans") {
                out.push(Span {
                    trace_id: text(&s, "traceId"),
                    span_id: text(&s, "spanId"),
                    parent_span_id: text(&s, "parentSpanId"),
                    name: text(&s, "name"),
                    service: service.clone(),
                    attributes: attributes(&list(&s, "attributes")),
                    links: list(&s, "links")
                        .iter()
                        .map(|l| (text(l, "traceId"), text(l, "spanId")))
                        .collect(),
                });
            }
        }
    }
    out
}

fn attributes(list: &[Value]) -> BTreeMap<String, Value> {
    list.iter()
        .filter_map(|kv| {
            let key = kv.get("key")?.as_str()?.to_string();
            let v = kv.get("value")?;
            let value = if let Some(s) = v.get("stringValue") {
                s.clone()
            } else if let Some(i) = v.get("intValue") {
                // The JSON encoding writes 64-bit integers as strings.
                match i {
                    Value::String(s) => s.parse::<i64>().map(Value::from).unwrap_or(Value::Null),
                    other => other.clone(),
                }
            } else if let Some(d) = v.get("doubleValue") {
                d.clone()
            } else if let Some(b) = v.get("boolValue") {
                b.clone()
            } else {
                v.clone()
            };
            Some((key, value))
        })
        .collect()
}
