//! A turn of 200 tool-call steps against the scripted OpenAI-compatible server
//! (zero latency), with the filesystem store (every step durably committed).
//!
//! Harness time per step = the time between a model response arriving and the
//! next request leaving: tool execution under governance, the durable commit,
//! the prompt and the request. The server's time is excluded by measuring around
//! the model call. Printed: the median per step, and steps 5–15 beside 190–200
//! (does the cost grow with the transcript?). Floors: < 1 ms per step; step 200
//! within 1.5× of step 10.

use std::sync::Arc;
use std::time::Duration;

use archmax_machine::store::{FsStore, SessionStore};

mod steps;
use steps::{STEPS, median};

fn run_once() -> Vec<f64> {
    steps::step_turn(
        |root| {
            if std::env::var_os("BENCH_MEM_STORE").is_some() {
                Arc::new(archmax_machine::store::MemStore::new()) as Arc<dyn SessionStore>
            } else {
                Arc::new(FsStore::new(root))
            }
        },
        None,
    )
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
