//! What the spending caps and the endpoint bound cost a step when not reached.
//!
//! The 200-step turn of the `turn` bench (memory store, so the disk does not drown the
//! difference), run alternately under the baseline budget (`maxModelCalls` only) and under a
//! budget with the turn and session token caps set far above the spend, three rounds each; printed:
//! the median harness time per step of each and their ratio. Then the endpoint bound: the
//! time to take and free a slot of an endpoint with free slots (every model call does it
//! once), beside the median step. Floors: ratio within 1.05x; a slot under 1 % of a step.

use std::sync::Arc;
use std::time::{Duration, Instant};

use archmax_machine::store::{MemStore, SessionStore};

// Shared with the turn bench; this one uses `step_turn_under` only.
#[allow(dead_code)]
mod steps;
use steps::{BUDGET, median};

// The token caps: a dollar cap is checked on the same path, and needs a price this
// assembly (`Harness::assemble`, no pricing) cannot give.
const CAPPED: &str =
    "budget: { maxModelCalls: 1000, maxTurnTokens: 900000000, maxSessionTokens: 900000000 }";

/// The allocator the addon uses, so the comparison is of the same harness.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn store(_: &std::path::Path) -> Arc<dyn SessionStore> {
    Arc::new(MemStore::new())
}

fn main() {
    let rounds = 3;
    let (mut base, mut capped) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        base.extend(steps::step_turn_under(BUDGET, true, store, None));
        std::thread::sleep(Duration::from_millis(50));
        capped.extend(steps::step_turn_under(CAPPED, true, store, None));
        std::thread::sleep(Duration::from_millis(50));
    }
    let (b, c) = (median(base), median(capped));
    println!(
        "turn of {} tool-call steps, memory store, {rounds} rounds each, alternating",
        steps::STEPS
    );
    println!("baseline: budget.maxModelCalls only     {b:.4} ms per step");
    println!(
        "two spending caps, none reached         {c:.4} ms per step   ratio {:.3}x (floor < 1.05x)",
        c / b
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("rt");
    let endpoint =
        archmax_machine::model::limit::endpoint("http://127.0.0.1:1/v1/chat/completions#bench", 16);
    let n = 200_000u32;
    let started = Instant::now();
    rt.block_on(async {
        for _ in 0..n {
            drop(std::hint::black_box(endpoint.take().await));
        }
    });
    let slot_ms = started.elapsed().as_secs_f64() * 1e3 / f64::from(n);
    println!(
        "endpoint bound: a free slot taken and freed {:.1} ns   {:.3} % of the baseline step (floor < 1 %)",
        slot_ms * 1e6,
        slot_ms / b * 100.0
    );
}
