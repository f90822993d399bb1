//! The 200-step turn (benches/turn.rs's) with tracing off, on with a no-op exporter, and on
//! with OTLP/HTTP (JSON) to a receiver on 127.0.0.1: harness time per step for each, and
//! each as a ratio against "off" measured in the same run (rounds interleaved).
//!
//! The memory store, so the commit's disk time does not hide what the spans cost.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use archmax_machine::model::{
    ChatRequest, ChatResponse, Model, ModelConfig, ModelError, ModelFuture, OpenAiClient,
};
use archmax_machine::{Harness, HarnessOptions, NoEvents, SendInput};
use archmax_telemetry::{Config, Telemetry};
use archmax_tests::TempWorkspace;
use archmax_tests::otlp::Receiver;
use archmax_tests::scripted::{Reply, ScriptedServer};
use serde_json::json;
use tracing::instrument::WithSubscriber;

const STEPS: usize = 200;

/// Times every model call: (start, end) per call.
struct Timed {
    inner: OpenAiClient,
    calls: Mutex<Vec<(Instant, Instant)>>,
}

impl Model for Timed {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let start = Instant::now();
            let r: Result<ChatResponse, ModelError> = self.inner.complete(req).await;
            if let Ok(mut c) = self.calls.lock() {
                c.push((start, Instant::now()));
            }
            r
        })
    }
}

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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One turn under `telemetry` (none: off); harness milliseconds per step.
fn run_once(telemetry: Option<&Telemetry>) -> Vec<f64> {
    let ws = TempWorkspace::new(&[(
        "workflows/bench/workflow.yaml",
        "budget: { maxModelCalls: 1000 }\nstates:\n  work:\n    triggers: { manual: }\n    instructions: Write the files.\n",
    )]);
    let mut script: Vec<Reply> = (0..STEPS)
        .map(|i| {
            Reply::tool_calls(vec![(
                &format!("c{i}"),
                "archmax_set_variables",
                json!({ "variables": { "step": i } }),
            )])
        })
        .collect();
    script.push(Reply::text("done"));
    let server = ScriptedServer::start(script).expect("server");
    let timed = Arc::new(Timed {
        inner: OpenAiClient::new(ModelConfig::new(server.url(), "k", "bench")).expect("client"),
        calls: Mutex::new(Vec::new()),
    });
    let harness = Harness::assemble(HarnessOptions {
        root: ws.root().to_path_buf(),
        workflow: "bench".into(),
        model: timed.clone(),
        default_model: "bench".into(),
        store: Arc::new(archmax_machine::store::MemStore::new()),
        events: Arc::new(NoEvents),
        tools: Vec::new(),
        essential_tools: Vec::new(),
        mounts: None,
        skills: vec!["skills/".into()],
    })
    .expect("harness");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("rt");
    let turn = harness.send(
        "bench",
        SendInput {
            message: "go".into(),
            ..SendInput::default()
        },
    );
    let out = match telemetry {
        Some(t) => rt.block_on(turn.with_subscriber(t.dispatch().clone())),
        None => rt.block_on(turn),
    }
    .expect("turn");
    assert_eq!(out.reply, "done");
    if let Some(t) = telemetry {
        t.flush().expect("flush");
    }
    let calls = timed.calls.lock().map(|c| c.clone()).unwrap_or_default();
    assert_eq!(calls.len(), STEPS + 1);
    calls
        .windows(2)
        .map(|w| w[1].0.duration_since(w[0].1).as_secs_f64() * 1e3)
        .collect()
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
    let modes: [(&str, Option<&Telemetry>); 3] = [
        ("off", None),
        ("on, no-op exporter", Some(&noop)),
        ("on, OTLP/HTTP to 127.0.0.1", Some(&otlp)),
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
    println!("spans the receiver decoded: {spans}");
    let _ = noop.shutdown();
    let _ = otlp.shutdown();
    // Each round's turn is 1 turn span + 1 state + 201 chat + 200 tool spans.
    if spans < rounds * (2 * STEPS + 3) {
        println!("FAIL: the receiver got {spans} spans, fewer than the turns opened");
        std::process::exit(1);
    }
}
