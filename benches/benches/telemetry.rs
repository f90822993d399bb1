//! The 200-step turn (benches/turn.rs's) with tracing off, on with a no-op exporter, and on
//! with OTLP to receivers on 127.0.0.1 (HTTP/JSON and gRPC): harness time per step for each, and
//! each as a ratio against "off" measured in the same run (rounds interleaved).
//!
//! The memory store, so the commit's disk time does not hide what the spans cost.

use std::sync::Arc;
use std::time::Duration;

use archmax_machine::store::{MemStore, SessionStore};
use archmax_telemetry::{Config, Telemetry};
use archmax_tests::otlp::Receiver;

mod steps;
use steps::{STEPS, median};

/// Drops every span it is given.
#[derive(Debug)]
struct NoopExporter;

impl opentelemetry_sdk::trace::SpanExporter for NoopExporter {
    async fn export(
        &self,
        _batch: Vec<opentelemetry_sdk::trace::SpanData>,
    ) -> opentelemetry_sdk::error::OTelSdkResult {
        Ok(())
    }
}

/// One turn under `telemetry` (none: off), its spans flushed; harness ms per step.
fn run_once(telemetry: Option<&Telemetry>) -> Vec<f64> {
    let per_step = steps::step_turn(
        |_| Arc::new(MemStore::new()) as Arc<dyn SessionStore>,
        telemetry.map(Telemetry::dispatch),
    );
    if let Some(t) = telemetry {
        t.flush().expect("flush");
    }
    per_step
}

/// The allocator the addon uses, so the comparison is of the same harness.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let receiver = Receiver::start().expect("receiver");
    let noop = Telemetry::start_with(&Config::default(), Some(NoopExporter))
        .expect("no-op telemetry")
        .expect("started");
    let otlp_config = Config::from_env(|k| match k {
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(receiver.base_url()),
        "OTEL_EXPORTER_OTLP_PROTOCOL" => Some("http/json".into()),
        _ => None,
    })
    .expect("config");
    let otlp = Telemetry::start(&otlp_config)
        .expect("OTLP telemetry")
        .expect("started");
    let grpc_receiver = Receiver::start_grpc().expect("gRPC receiver");
    let grpc_config = Config::from_env(|k| match k {
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some(grpc_receiver.base_url()),
        "OTEL_EXPORTER_OTLP_PROTOCOL" => Some("grpc".into()),
        _ => None,
    })
    .expect("config");
    let grpc = Telemetry::start(&grpc_config)
        .expect("OTLP/gRPC telemetry")
        .expect("started");
    let modes: [(&str, Option<&Telemetry>); 4] = [
        ("off", None),
        ("on, no-op exporter", Some(&noop)),
        ("on, OTLP/HTTP to 127.0.0.1", Some(&otlp)),
        ("on, OTLP/gRPC to 127.0.0.1", Some(&grpc)),
    ];
    let rounds = 5;
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); modes.len()];
    let _ = run_once(None); // warm-up
    for _ in 0..rounds {
        for (i, (_, t)) in modes.iter().enumerate() {
            samples[i].extend(run_once(*t));
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let spans = receiver.spans().len();
    let grpc_spans = grpc_receiver.spans().len();
    let off = median(samples[0].clone());
    println!(
        "turn of {STEPS} tool-call steps, memory store, {rounds} rounds per mode (interleaved)"
    );
    for (i, (name, _)) in modes.iter().enumerate() {
        let m = median(samples[i].clone());
        println!(
            "{name:<28} {:>8.1} µs per step   {:.2}x off",
            m * 1000.0,
            m / off
        );
    }
    println!("spans the receivers decoded: HTTP {spans}, gRPC {grpc_spans}");
    let _ = noop.shutdown();
    let _ = otlp.shutdown();
    let _ = grpc.shutdown();
    // Each round's turn is 1 turn span + 1 state + 201 chat + 200 tool spans.
    for (name, got) in [("HTTP", spans), ("gRPC", grpc_spans)] {
        if got < rounds * (2 * STEPS + 3) {
            println!("FAIL: the {name} receiver got {got} spans, fewer than the turns opened");
            std::process::exit(1);
        }
    }
}
