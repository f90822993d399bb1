//! The cost of a step's commit and store-level turns per second, PostgreSQL beside the
//! filesystem store: `cargo run -p archmax-store-pg --example store_bench -- <postgres-url>
//! [steps] [turns]` (`scripts/bench-pg.sh` starts a throwaway server and runs it).
//!
//! A commit is a step of two messages (~400 bytes) and a ~2 KiB state, under a held lease
//! (the fenced path a turn takes). A "turn" is what a turn asks of its store without the
//! model: take the lease, load the session, three commits, release; 4 threads at once over
//! distinct sessions.

use std::sync::Arc;
use std::time::{Duration, Instant};

use archmax_machine::store::{FsStore, SessionId, SessionStore, Step};
use archmax_store_pg::PgStore;
use serde_json::{Value, json};

fn state(step: usize) -> Value {
    json!({
        "workflow": "bench", "workflowState": "work", "status": "running", "step": step,
        "variables": (0..20).map(|i| (format!("v{i}"), json!({"value": "x".repeat(60)}))).collect::<serde_json::Map<_, _>>(),
        "trail": (0..5).map(|i| json!({"kind": "model", "to": format!("s{i}")})).collect::<Vec<_>>(),
    })
}

fn messages(step: usize) -> Vec<Value> {
    vec![
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("c{step}"), "type": "function", "function": {"name": "write_file", "arguments": "{\"file_path\":\"scratchpad/a.md\",\"content\":\"some text\"}"}}]}),
        json!({"role": "tool", "tool_call_id": format!("c{step}"), "content": "Successfully wrote to 'scratchpad/a.md'"}),
    ]
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn commits(
    store: &dyn SessionStore,
    steps: usize,
) -> Result<Vec<Duration>, Box<dyn std::error::Error>> {
    let id = SessionId::parse("bench-commit")?;
    let _lease = store.acquire(&id)?;
    let mut times = Vec::with_capacity(steps);
    for step in 0..steps {
        let (msgs, st) = (messages(step), state(step));
        let t = Instant::now();
        store.commit(
            &id,
            Step {
                new_messages: &msgs,
                state: &st,
            },
        )?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(times)
}

fn turns(store: Arc<dyn SessionStore>, turns: usize) -> Result<f64, Box<dyn std::error::Error>> {
    let t = Instant::now();
    let handles: Vec<_> = (0..4)
        .map(|w| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || -> Result<(), String> {
                for n in 0..turns / 4 {
                    let id =
                        SessionId::parse(&format!("turn-{w}-{n}")).map_err(|e| e.to_string())?;
                    let lease = store.acquire(&id).map_err(|e| e.to_string())?;
                    store.load(&id).map_err(|e| e.to_string())?;
                    for step in 0..3 {
                        let (msgs, st) = (messages(step), state(step));
                        store
                            .commit(
                                &id,
                                Step {
                                    new_messages: &msgs,
                                    state: &st,
                                },
                            )
                            .map_err(|e| e.to_string())?;
                    }
                    drop(lease);
                }
                Ok(())
            })
        })
        .collect();
    for h in handles {
        h.join().map_err(|_| "a bench thread panicked")??;
    }
    Ok((turns / 4 * 4) as f64 / t.elapsed().as_secs_f64())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let url = args
        .first()
        .ok_or("usage: store_bench <postgres-url> [steps] [turns]")?;
    let steps: usize = args.get(1).map_or(Ok(500), |s| s.parse())?;
    let turn_count: usize = args.get(2).map_or(Ok(200), |s| s.parse())?;
    let schema = format!("bench_{}", std::process::id());
    let pg = PgStore::builder(url.as_str()).schema(&schema).connect()?;
    let dir = std::env::temp_dir().join(format!("archmax-store-bench-{}", std::process::id()));
    let fs = FsStore::new(&dir);

    let pg_commits = commits(&pg, steps)?;
    let fs_commits = commits(&fs, steps)?;
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    for (name, times) in [("postgres", &pg_commits), ("filesystem", &fs_commits)] {
        println!(
            "commit {name:<10} p50 {:>7.3} ms  p99 {:>7.3} ms  ({steps} steps)",
            ms(percentile(times, 0.5)),
            ms(percentile(times, 0.99))
        );
    }
    println!(
        "commit p50 ratio postgres/filesystem: {:.2}",
        ms(percentile(&pg_commits, 0.5)) / ms(percentile(&fs_commits, 0.5))
    );
    let pg_turns = turns(Arc::new(pg.clone()), turn_count)?;
    let fs_turns = turns(Arc::new(FsStore::new(&dir)), turn_count)?;
    println!(
        "store turns/s (4 threads, lease + load + 3 commits + release): postgres {pg_turns:.0}, filesystem {fs_turns:.0}, ratio {:.2}",
        pg_turns / fs_turns
    );
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
