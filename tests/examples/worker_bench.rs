//! End-to-end turns per second with a model, 4 workers over PostgreSQL beside 4 over the
//! filesystem store in the same run, and what a step's commit costs inside those turns
//! (p50, p99): `cargo run --release -p archmax-tests --example worker_bench -- <postgres-url>
//! [turns] [model-ms]` (`scripts/bench-pg.sh` starts a throwaway server and runs it).
//!
//! The model is the scripted OpenAI-compatible server on 127.0.0.1, answering every call
//! after `model-ms` (default 0: the runtime's and the store's cost alone). A turn is a
//! message to a fresh session of a one-state workflow: the opening commit, one model call,
//! the completing commit. A worker is a harness over a store of its own (for PostgreSQL, its
//! own pool and lease holder, as a separate process would have); the 4 run at once, each
//! through its share of the sessions.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use archmax_machine::model::{ModelConfig, OpenAiClient};
use archmax_machine::store::{FsStore, SessionStore};
use archmax_machine::{Harness, HarnessOptions, NoEvents, SendInput};
use archmax_store_pg::PgStore;
use archmax_tests::hooked::Hooked;
use archmax_tests::scripted::{Reply, ScriptedServer};

const WORKERS: usize = 4;

const SPEC: &str = "title: Bench\ninstructions: Answer.\nstates:\n  answer:\n    triggers: { manual: }\n    instructions: Answer the request.\n";

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

struct Figures {
    turns_per_s: f64,
    p50: Duration,
    p99: Duration,
}

/// `turns` turns by 4 workers, each over the store `make` gives it.
fn run(
    root: &std::path::Path,
    url: &str,
    turns: usize,
    tag: &str,
    make: &dyn Fn() -> Result<Arc<dyn SessionStore>, Box<dyn std::error::Error>>,
) -> Result<Figures, Box<dyn std::error::Error>> {
    let commits = Arc::new(Mutex::new(Vec::new()));
    let mut harnesses = Vec::new();
    for _ in 0..WORKERS {
        let times = Arc::clone(&commits);
        let store = Arc::new(Hooked::new(make()?, move |store, id, step| {
            let started = Instant::now();
            let done = store.commit(id, step);
            times
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(started.elapsed());
            done
        }));
        harnesses.push(Arc::new(Harness::assemble(HarnessOptions {
            root: root.to_path_buf(),
            workflow: "bench".into(),
            model: Arc::new(OpenAiClient::new(ModelConfig::new(
                url.to_string(),
                "k",
                "m",
            ))?),
            default_model: "m".into(),
            store,
            events: Arc::new(NoEvents),
            tools: Vec::new(),
            essential_tools: Vec::new(),
            mounts: None,
            skills: vec!["skills/".into()],
        })?));
    }
    let started = Instant::now();
    let threads: Vec<_> = harnesses
        .into_iter()
        .enumerate()
        .map(|(w, harness)| {
            let tag = tag.to_string();
            std::thread::spawn(move || -> Result<(), String> {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                for n in (w..turns).step_by(WORKERS) {
                    let out = rt
                        .block_on(harness.send(
                            &format!("{tag}-{n}"),
                            SendInput {
                                message: format!("Request {n}"),
                                ..SendInput::default()
                            },
                        ))
                        .map_err(|e| e.to_string())?;
                    if out.status != "completed" {
                        return Err(format!("turn {n} ended {}", out.status));
                    }
                }
                Ok(())
            })
        })
        .collect();
    for t in threads {
        t.join().map_err(|_| "a worker panicked")??;
    }
    let elapsed = started.elapsed();
    let mut commits = std::mem::take(&mut *commits.lock().unwrap_or_else(PoisonError::into_inner));
    commits.sort();
    Ok(Figures {
        turns_per_s: turns as f64 / elapsed.as_secs_f64(),
        p50: percentile(&commits, 0.5),
        p99: percentile(&commits, 0.99),
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(pg_url) = args.first().cloned() else {
        return Err("usage: worker_bench <postgres-url> [turns] [model-ms]".into());
    };
    let turns: usize = args.get(1).map_or(Ok(400), |t| t.parse())?;
    let model_ms: u64 = args.get(2).map_or(Ok(0), |t| t.parse())?;
    let dir = std::env::temp_dir().join(format!("archmax-worker-bench-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("workflows/bench"))?;
    std::fs::write(dir.join("workflows/bench/workflow.yaml"), SPEC)?;
    let reply = || Reply::text("Done.").after(Duration::from_millis(model_ms));
    let server = ScriptedServer::start((0..turns * 2 + 8).map(|_| reply()).collect())?;
    let schema = format!("worker_bench_{}", std::process::id());
    let pg = {
        let url = pg_url.clone();
        let schema = schema.clone();
        run(&dir, &server.url(), turns, "pg", &move || {
            Ok(Arc::new(PgStore::builder(&url).schema(&schema).connect()?)
                as Arc<dyn SessionStore>)
        })?
    };
    let fs_root = dir.clone();
    let fs = run(&dir, &server.url(), turns, "fs", &move || {
        Ok(Arc::new(FsStore::new(&fs_root)) as Arc<dyn SessionStore>)
    })?;
    let _ = std::fs::remove_dir_all(&dir);
    println!("end to end, {WORKERS} workers, {turns} turns, model answering after {model_ms} ms:");
    println!("| | postgres | filesystem |");
    println!("|---|---|---|");
    println!(
        "| turns/s | {:.0} | {:.0} |",
        pg.turns_per_s, fs.turns_per_s
    );
    println!(
        "| a step's commit in those turns, p50 | {:.2} ms | {:.2} ms |",
        pg.p50.as_secs_f64() * 1e3,
        fs.p50.as_secs_f64() * 1e3
    );
    println!(
        "| a step's commit in those turns, p99 | {:.2} ms | {:.2} ms |",
        pg.p99.as_secs_f64() * 1e3,
        fs.p99.as_secs_f64() * 1e3
    );
    println!(
        "postgres / filesystem: {:.2}x the turns per second",
        pg.turns_per_s / fs.turns_per_s
    );
    println!("(tables left in schema {schema})");
    Ok(())
}
