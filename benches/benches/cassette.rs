//! Replay against the scripted server: the example's refund flow (five model calls over
//! four states, a hook veto, files written) run through the real harness, its model either
//! the scripted OpenAI-compatible server on 127.0.0.1 (zero latency) or a cassette recorded
//! from it in the same run. Printed: the median wall time per run and per model call of
//! each, and their ratio; the model call's own time is measured around the call.
//!
//! `cargo bench -p archmax-bench --bench cassette` (release), or for a quick look in debug
//! `cargo test -p archmax-bench --bench cassette`.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use archmax_cases::cassette::{Cassette, Recorder, Replayer};
use archmax_machine::model::{ChatRequest, Model, ModelFuture, TextSink};
use archmax_tests::scripted::{Reply, ScriptedServer};
use archmax_tests::{TempWorkspace, example_root};

const RUNS: usize = 15;
const CALLS: usize = 5;

fn refund_script() -> Vec<Reply> {
    archmax_tests::refund_flow(Reply::stream_text(&[
        "We cannot ",
        "refund a cancelled ",
        "order.",
    ]))
}

/// Times each model call (the time inside the model).
struct Timed<M> {
    inner: M,
    calls: Mutex<Vec<f64>>,
}

impl<M: Model> Model for Timed<M> {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let start = Instant::now();
            let r = self.inner.complete(req).await;
            self.calls
                .lock()
                .map(|mut c| c.push(start.elapsed().as_secs_f64() * 1e6))
                .ok();
            r
        })
    }
    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        Box::pin(async move {
            let start = Instant::now();
            let r = self.inner.stream(req, text).await;
            self.calls
                .lock()
                .map(|mut c| c.push(start.elapsed().as_secs_f64() * 1e6))
                .ok();
            r
        })
    }
}

/// One refund flow on `model` in a fresh copy of the example; wall µs.
fn run(rt: &tokio::runtime::Runtime, model: Arc<dyn Model>) -> f64 {
    let ws = TempWorkspace::copy_of(&example_root());
    // The URL is never used: `model` replaces the client.
    let h = archmax_tests::harness(ws.root(), "order-lookup", "http://127.0.0.1:9", "m", |o| {
        o.model = model;
    });
    let start = Instant::now();
    let out = rt
        .block_on(h.send(
            "refund-1",
            archmax_machine::SendInput {
                message: "I want my money back for KK-2046.".into(),
                ..Default::default()
            },
        ))
        .expect("turn");
    let took = start.elapsed().as_secs_f64() * 1e6;
    assert_eq!(out.state, "closed", "{out:?}");
    took
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    // Record once from the server.
    let server = ScriptedServer::start(refund_script()).expect("server");
    let recorder =
        Arc::new(Recorder::new(archmax_tests::client(&server.url(), "m")).with_default_model("m"));
    run(&rt, recorder.clone());
    let cassette: Cassette = recorder.cassette();
    assert_eq!(cassette.exchanges().len(), CALLS);
    let text = cassette.to_json().expect("cassette");

    let script: Vec<Reply> = (0..RUNS).flat_map(|_| refund_script()).collect();
    let server = ScriptedServer::start(script).expect("server");
    let live = Arc::new(Timed {
        inner: archmax_tests::client(&server.url(), "m"),
        calls: Mutex::new(Vec::new()),
    });
    let mut live_runs = Vec::new();
    let mut replay_runs = Vec::new();
    let mut replay_calls = Vec::new();
    for _ in 0..RUNS {
        // Interleaved, so both see the same machine load.
        live_runs.push(run(&rt, live.clone()));
        let replayer = Replayer::new(
            Cassette::from_json(&text, "bench").expect("decodes"),
            "bench",
        );
        let timed = Arc::new(Timed {
            inner: replayer,
            calls: Mutex::new(Vec::new()),
        });
        replay_runs.push(run(&rt, timed.clone()));
        replay_calls.extend(timed.calls.lock().map(|c| c.clone()).unwrap_or_default());
    }
    let live_calls = live.calls.lock().map(|c| c.clone()).unwrap_or_default();
    let (lr, rr) = (median(live_runs), median(replay_runs));
    let (lc, rc) = (median(live_calls), median(replay_calls));
    println!(
        "refund flow ({CALLS} model calls, {RUNS} runs each, cassette {} bytes)",
        text.len()
    );
    println!(
        "  scripted server: {:>9.0} µs per run, {:>7.0} µs per model call",
        lr, lc
    );
    println!(
        "  cassette replay: {:>9.0} µs per run, {:>7.0} µs per model call",
        rr, rc
    );
    println!(
        "  replay / server: {:>9.2}x per run, {:>7.2}x per model call",
        rr / lr,
        rc / lc
    );
}
