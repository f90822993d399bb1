//! The 200-step turn the turn and telemetry benchmarks time: 200 tool-call steps against the
//! scripted OpenAI-compatible server (zero latency), the harness time of each step measured
//! between a model response arriving and the next request leaving.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use archmax_machine::model::{
    ChatRequest, ChatResponse, Model, ModelConfig, ModelError, ModelFuture, OpenAiClient,
};
use archmax_machine::store::SessionStore;
use archmax_machine::{Harness, HarnessOptions, NoEvents, SendInput};
use archmax_tests::TempWorkspace;
use archmax_tests::scripted::{Reply, ScriptedServer};
use serde_json::json;
use tracing::instrument::WithSubscriber;

pub const STEPS: usize = 200;

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

pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// One turn of [`STEPS`] steps on a fresh workspace (`store` built for its root), under
/// `dispatch` when given; the harness milliseconds of each step.
pub fn step_turn(
    store: impl FnOnce(&std::path::Path) -> Arc<dyn SessionStore>,
    dispatch: Option<&tracing::Dispatch>,
) -> Vec<f64> {
    step_turn_under(BUDGET, false, store, dispatch)
}

/// The bench workflow's budget: model calls enough for the turn.
pub const BUDGET: &str = "budget: { maxModelCalls: 1000 }";

/// [`step_turn`] with the workflow's root `budget` line `budget`; `usage`: every answer
/// reports tokens (so the spend is counted at every step).
pub fn step_turn_under(
    budget: &str,
    usage: bool,
    store: impl FnOnce(&std::path::Path) -> Arc<dyn SessionStore>,
    dispatch: Option<&tracing::Dispatch>,
) -> Vec<f64> {
    let spec = format!(
        "{budget}\nstates:\n  work:\n    triggers: {{ manual: }}\n    instructions: Write the files.\n"
    );
    let ws = TempWorkspace::new(&[("workflows/bench/workflow.yaml", spec.as_str())]);
    let mut script: Vec<Reply> = (0..STEPS)
        .map(|i| {
            let reply = Reply::tool_calls(vec![(
                &format!("c{i}"),
                "archmax_set_variables",
                json!({ "variables": { "step": i } }),
            )]);
            if usage {
                reply.with_usage(json!({ "prompt_tokens": 1000, "completion_tokens": 10 }))
            } else {
                reply
            }
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
        store: store(ws.root()),
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
    let out = match dispatch {
        Some(d) => rt.block_on(turn.with_subscriber(d.clone())),
        None => rt.block_on(turn),
    }
    .expect("turn");
    assert_eq!(out.reply, "done");
    let calls = timed.calls.lock().map(|c| c.clone()).unwrap_or_default();
    assert_eq!(calls.len(), STEPS + 1);
    calls
        .windows(2)
        .map(|w| w[1].0.duration_since(w[0].1).as_secs_f64() * 1e3)
        .collect()
}
