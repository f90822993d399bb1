//! A turn of 200 tool-call steps against the scripted OpenAI-compatible server
//! (zero latency), with the filesystem store (every step durably committed).
//!
//! Harness time per step = the time between a model response arriving and the
//! next request leaving: tool execution under governance, the durable commit,
//! the prompt and the request. The server's time is excluded by measuring around
//! the model call. Printed: the median per step, and steps 5–15 beside 190–200
//! (does the cost grow with the transcript?). Floors: < 1 ms per step; step 200
//! within 1.5× of step 10.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use archmax_machine::model::{
    ChatRequest, ChatResponse, Model, ModelConfig, ModelError, ModelFuture, OpenAiClient,
};
use archmax_machine::store::FsStore;
use archmax_machine::{Harness, HarnessOptions, NoEvents, SendInput};
use archmax_tests::TempWorkspace;
use archmax_tests::scripted::{Reply, ScriptedServer};
use serde_json::json;

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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn run_once() -> Vec<f64> {
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
        store: if std::env::var_os("BENCH_MEM_STORE").is_some() {
            Arc::new(archmax_machine::store::MemStore::new())
                as Arc<dyn archmax_machine::store::SessionStore>
        } else {
            Arc::new(FsStore::new(ws.root()))
        },
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
    let out = rt
        .block_on(harness.send(
            "bench",
            SendInput {
                message: "go".into(),
                ..SendInput::default()
            },
        ))
        .expect("turn");
    assert_eq!(out.reply, "done");
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
    let rounds = 3;
    let mut per_step: Vec<Vec<f64>> = vec![Vec::new(); STEPS];
    for _ in 0..rounds {
        for (i, ms) in run_once().into_iter().enumerate() {
            if let Some(v) = per_step.get_mut(i) {
                v.push(ms);
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let step = |i: usize| median(per_step[i].clone());
    let all: Vec<f64> = (0..STEPS).map(step).collect();
    let early = median((5..15).map(step).collect());
    let late = median((190..200).map(step).collect());
    let med = median(all.clone());
    println!("turn of {STEPS} tool-call steps, filesystem store, {rounds} rounds");
    println!("harness time per step (median)      {med:.3} ms   (floor < 1 ms)");
    println!("steps 5-15 (around step 10)         {early:.3} ms");
    println!(
        "steps 190-200 (around step 200)     {late:.3} ms   ratio {:.2}x (floor < 1.50x)",
        late / early
    );
    println!(
        "baseline for scale (from the issue): Deep Agents JS 12-20 ms per step in process, 42 ms over HTTP"
    );
    let ok = med < 1.0 && late / early < 1.5;
    if !ok {
        println!("FAIL: a floor is not met");
        std::process::exit(1);
    }
}
