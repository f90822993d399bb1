//! The Rust half of `scripts/bench-agent.sh`: a turn of 200 tool-call steps
//! driven by an in-process scripted model (no HTTP, no JS), with the
//! filesystem store (`BENCH_AGENT_STORE=memory`: the in-memory one).
//! `scripts/bench-agent.mjs` drives the same turn (same workflow, same replies,
//! same store) through `createAgent` with a JS model function; the difference
//! per model call is the cost of the JS boundary.
//!
//! The script: step `i` (0-based) calls `archmax_get_variables` when `i` is
//! even and writes `scratchpad/step-<i>.md` when odd; reply 201 answers
//! "done". `BENCH_AGENT_FIXTURE=<dir>` writes the workflow (`workflow.yaml`)
//! and the replies (`script.json`, OpenAI assistant messages) there first, so
//! the JS side replays exactly these.
//!
//! Measured per round (a fresh workspace, a fresh harness, one turn):
//! - `gap`: the time from a model call returning to the next model call
//!   starting (the harness's work per step: tool, governance, durable
//!   commit, prompt), median over the 200 steps;
//! - `wall`: the whole `send` divided by the model calls (201).
//!
//! Prints a human line per round and, last, one JSON line:
//! `{ steps, calls, rounds, gap_us: [..], wall_us: [..], gap_early_us, gap_late_us,
//! probe_calls, request_bytes, serialize_us }` (the last three: the size of the
//! requests of calls 10 and 200 as JSON, and the time to serialize them, which
//! this model never does and a JS model function needs).
//! `ROUNDS` sets the measured rounds (default 7, after one warm-up round).

use std::sync::{Arc, Mutex};
use std::time::Instant;

use archmax_machine::model::{ChatRequest, ChatResponse, Model, ModelError, ModelFuture};
use archmax_machine::store::{FsStore, MemStore, SessionStore};
use archmax_machine::{Harness, HarnessOptions, NoEvents, SendInput};
use archmax_tests::TempWorkspace;
use serde_json::{Value, json};

/// The allocator the addon uses, so the comparison is of the same harness.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const STEPS: usize = 200;

const WORKFLOW: &str = "\
budget: { maxModelCalls: 1000 }
states:
  work:
    triggers: { manual: }
    instructions: Do the scripted steps.
";

/// The replies, as the OpenAI assistant messages a JS model function returns.
fn script() -> Vec<Value> {
    let mut out: Vec<Value> = (0..STEPS)
        .map(|i| {
            let (name, args) = if i % 2 == 0 {
                ("archmax_get_variables", json!({}))
            } else {
                (
                    "write_file",
                    json!({ "file_path": format!("scratchpad/step-{i}.md"), "content": format!("step {i}") }),
                )
            };
            json!({
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": format!("c{i}"),
                    "type": "function",
                    "function": { "name": name, "arguments": args.to_string() },
                }],
            })
        })
        .collect();
    out.push(json!({ "role": "assistant", "content": "done" }));
    out
}

/// The in-process scripted model: answers reply `n` to call `n`, and records
/// when each call started and returned.
struct Scripted {
    replies: Vec<ChatResponse>,
    calls: Mutex<Vec<(Instant, Instant)>>,
    /// For calls [`PROBES`]: the request's JSON size (bytes) and the time to
    /// serialize it (µs), what a model across the JS boundary pays and this one
    /// does not. Measured inside the call, so outside the gaps.
    probes: Mutex<Vec<(usize, f64)>>,
}

/// The calls whose request is probed: around step 10 and the last step.
const PROBES: [usize; 2] = [10, STEPS];

impl Model for Scripted {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let start = Instant::now();
            let mut calls = self.calls.lock().map_err(|_| ModelError::Transport {
                url: "scripted".into(),
                model: "bench".into(),
                message: "poisoned".into(),
            })?;
            let reply =
                self.replies
                    .get(calls.len())
                    .cloned()
                    .ok_or_else(|| ModelError::Transport {
                        url: "scripted".into(),
                        model: "bench".into(),
                        message: "the script is exhausted".into(),
                    })?;
            if PROBES.contains(&calls.len()) {
                let t = Instant::now();
                let bytes = serde_json::to_string(req).map(|s| s.len()).unwrap_or(0);
                let us = t.elapsed().as_secs_f64() * 1e6;
                if let Ok(mut p) = self.probes.lock() {
                    p.push((bytes, us));
                }
            }
            calls.push((start, Instant::now()));
            Ok(reply)
        })
    }
}

/// `BENCH_AGENT_STORE=memory`: the in-memory store instead of the filesystem one.
fn memory_store() -> bool {
    std::env::var("BENCH_AGENT_STORE").is_ok_and(|s| s == "memory")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

struct Round {
    /// µs per step between model calls, steps 1..=200.
    gaps: Vec<f64>,
    /// µs of the whole turn per model call.
    wall: f64,
    /// (bytes, µs to serialize) of the probed requests.
    probes: Vec<(usize, f64)>,
}

fn run_once(replies: &[ChatResponse], rt: &tokio::runtime::Runtime) -> Round {
    let ws = TempWorkspace::new(&[("workflows/bench/workflow.yaml", WORKFLOW)]);
    let model = Arc::new(Scripted {
        replies: replies.to_vec(),
        calls: Mutex::new(Vec::new()),
        probes: Mutex::new(Vec::new()),
    });
    let harness = Arc::new(
        Harness::assemble(HarnessOptions {
            root: ws.root().to_path_buf(),
            workflow: "bench".into(),
            model: model.clone(),
            default_model: "bench".into(),
            store: if memory_store() {
                Arc::new(MemStore::new()) as Arc<dyn SessionStore>
            } else {
                Arc::new(FsStore::new(ws.root()))
            },
            events: Arc::new(NoEvents),
            tools: Vec::new(),
            essential_tools: Vec::new(),
            mounts: None,
            skills: vec!["skills/".into()],
        })
        .expect("harness"),
    );
    // As the addon does: the turn runs as a task on the multi-threaded runtime.
    let h = Arc::clone(&harness);
    let start = Instant::now();
    let out = rt
        .block_on(rt.spawn(async move {
            h.send(
                "bench",
                SendInput {
                    message: "go".into(),
                    ..SendInput::default()
                },
            )
            .await
        }))
        .expect("join")
        .expect("turn");
    let wall = start.elapsed().as_secs_f64() * 1e6 / (STEPS + 1) as f64;
    assert_eq!(out.reply, "done");
    let calls = model.calls.lock().map(|c| c.clone()).unwrap_or_default();
    assert_eq!(calls.len(), STEPS + 1);
    let gaps = calls
        .windows(2)
        .map(|w| w[1].0.duration_since(w[0].1).as_secs_f64() * 1e6)
        .collect();
    let probes = model.probes.lock().map(|p| p.clone()).unwrap_or_default();
    Round { gaps, wall, probes }
}

fn main() {
    let script = script();
    if let Some(dir) = std::env::var_os("BENCH_AGENT_FIXTURE") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("fixture dir");
        std::fs::write(dir.join("workflow.yaml"), WORKFLOW).expect("workflow.yaml");
        std::fs::write(
            dir.join("script.json"),
            serde_json::to_string_pretty(&script).expect("script"),
        )
        .expect("script.json");
    }
    let replies: Vec<ChatResponse> = script
        .iter()
        .map(|m| {
            ChatResponse::from_value(&json!({ "choices": [{ "message": m }] })).expect("reply")
        })
        .collect();
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(7);
    // napi-rs's default runtime: multi-threaded, one worker per core.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("rt");
    run_once(&replies, &rt); // warm-up
    let mut gap_us = Vec::new();
    let mut wall_us = Vec::new();
    let mut per_step: Vec<Vec<f64>> = vec![Vec::new(); STEPS];
    let mut probe_bytes = vec![0usize; PROBES.len()];
    let mut probe_us: Vec<Vec<f64>> = vec![Vec::new(); PROBES.len()];
    for r in 0..rounds {
        let round = run_once(&replies, &rt);
        let gap = median(round.gaps.clone());
        println!(
            "rust round {r}: {gap:8.1} µs/step (median gap), {:8.1} µs/call (wall)",
            round.wall
        );
        for (i, g) in round.gaps.into_iter().enumerate() {
            if let Some(v) = per_step.get_mut(i) {
                v.push(g);
            }
        }
        for (k, (bytes, us)) in round.probes.into_iter().enumerate() {
            if let (Some(b), Some(v)) = (probe_bytes.get_mut(k), probe_us.get_mut(k)) {
                *b = bytes;
                v.push(us);
            }
        }
        gap_us.push(gap);
        wall_us.push(round.wall);
    }
    let step = |i: usize| median(per_step[i].clone());
    let early = median((5..15).map(step).collect());
    let late = median((190..200).map(step).collect());
    println!(
        "{}",
        json!({
            "steps": STEPS,
            "calls": STEPS + 1,
            "rounds": rounds,
            "gap_us": gap_us,
            "wall_us": wall_us,
            "gap_early_us": early,
            "gap_late_us": late,
            "probe_calls": PROBES,
            "request_bytes": probe_bytes,
            "serialize_us": probe_us.into_iter().map(median).collect::<Vec<_>>(),
        })
    );
}
