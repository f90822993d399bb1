//! The exporters against endpoints that refuse: a failed export is an error of the flush
//! and of the shutdown (the hosts report it), never a hang or a panic.

use archmax_telemetry::{Config, Telemetry};

fn refused_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn started(protocol: &str) -> Telemetry {
    let endpoint = format!("http://127.0.0.1:{}", refused_port());
    let config = Config::from_env(|k| match k {
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(endpoint.clone()),
        "OTEL_EXPORTER_OTLP_PROTOCOL" => Some(protocol.to_string()),
        "OTEL_EXPORTER_OTLP_TIMEOUT" => Some("2000".to_string()),
        _ => None,
    })
    .expect("config");
    Telemetry::start(&config).expect("start").expect("active")
}

fn one_span(t: &Telemetry) {
    tracing::dispatcher::with_default(t.dispatch(), || {
        let span = tracing::info_span!(target: "archmax_machine", "turn");
        drop(span.enter());
    });
}

#[test]
fn a_refused_export_fails_the_flush_over_each_protocol() {
    for protocol in ["grpc", "http/protobuf", "http/json"] {
        let t = started(protocol);
        one_span(&t);
        let e = t.flush().expect_err("nothing listens");
        assert!(
            e.0.starts_with("cannot send the spans to 'http://127.0.0.1:"),
            "{protocol}: {e}"
        );
    }
}

#[test]
fn a_refused_grpc_export_fails_the_shutdown() {
    let t = started("grpc");
    one_span(&t);
    let e = t.shutdown().expect_err("nothing listens");
    assert!(
        e.0.starts_with("cannot send the spans to 'http://127.0.0.1:"),
        "{e}"
    );
}
