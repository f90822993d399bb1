//! Concurrency in a batch, end to end over the scripted server (127.0.0.1) with a 50 ms
//! model latency and the filesystem store:
//! - 16 children fanned out from one script (`archmax_eval` awaiting `Promise.all` over
//!   `tools.archmaxWorkflowLeaf`), and 16 fanned out in one batch (`archmax_workflow_leaf`
//!   called 16 times at once), beside 16 children called one per batch. The children's share of the wall time (the
//!   wall minus the caller's own model calls) shows the concurrency bound: ≈ 4×
//!   (`maxConcurrent` 4: four waves of one child model call each, against sixteen).
//! - 4 slow host tools (200 ms each) in one batch beside the same 4 one per batch: the
//!   batch takes ≈ one tool's time, not four.
//!
//! Prints one line per measurement and the ratios. `ROUNDS` (default 3) rounds each.

use std::sync::Arc;
use std::time::{Duration, Instant};

use archmax_machine::{HostTool, ToolContext};
use archmax_tests::scripted::{Reply, ScriptedServer};
use archmax_tests::{TempWorkspace, send};
use serde_json::{Value, json};

const LATENCY: Duration = Duration::from_millis(50);
const TOOL_TIME: Duration = Duration::from_millis(200);
const CHILDREN: usize = 16;
const TOOLS: usize = 4;

const CALLER: &str = "budget: { maxModelCalls: 100 }\nstates:\n  work:\n    triggers: { manual: }\n    tools:\n      allow: [archmax_workflow_leaf, archmax_eval, slow]\n";
const LEAF: &str = "states:\n  leaf:\n    triggers: { manual: }\n    instructions: Answer.\n";

struct Slow;

impl HostTool for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn description(&self) -> &str {
        "Takes a while."
    }
    fn schema(&self) -> Value {
        json!({ "type": "object" })
    }
    fn call<'a>(
        &'a self,
        _args: Value,
        _ctx: ToolContext,
    ) -> archmax_machine::tools::BoxFuture<'a, Result<String, String>> {
        Box::pin(async {
            tokio::time::sleep(TOOL_TIME).await;
            Ok("done".into())
        })
    }
}

fn calls(name: &str, n: usize, from: usize) -> Reply {
    let owned: Vec<(String, Value)> = (from..from + n)
        .map(|i| (format!("c{i}"), json!({})))
        .collect();
    Reply::tool_calls(
        owned
            .iter()
            .map(|(id, args)| (id.as_str(), name, args.clone()))
            .collect(),
    )
    .after(LATENCY)
}

/// One turn over `script`; the wall time and the caller's model calls in it.
fn turn(script: Vec<Reply>, caller_calls: u32) -> (Duration, Duration) {
    let ws = TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", CALLER),
        ("workflows/leaf/workflow.yaml", LEAF),
    ]);
    let server = ScriptedServer::start(script).expect("server");
    let h = archmax_tests::harness(ws.root(), "orders", &server.url(), "m", |o| {
        o.tools = vec![Arc::new(Slow)];
    });
    let started = Instant::now();
    let out = send(&h, "bench", "Go.");
    let wall = started.elapsed();
    assert_eq!(out.reply, "Done.", "{out:?}");
    (wall, wall.saturating_sub(LATENCY * caller_calls))
}

fn fanned() -> (Duration, Duration) {
    let mut script = vec![calls("archmax_workflow_leaf", CHILDREN, 0)];
    script.extend((0..CHILDREN).map(|_| Reply::text("Leaf done.").after(LATENCY)));
    script.push(Reply::text("Done.").after(LATENCY));
    turn(script, 2)
}

fn scripted() -> (Duration, Duration) {
    let code = format!(
        "const r = await Promise.all(Array.from({{ length: {CHILDREN} }}, () => tools.archmaxWorkflowLeaf({{}})));\nr.length"
    );
    let mut script = vec![
        Reply::tool_calls(vec![("c0", "archmax_eval", json!({ "code": code }))]).after(LATENCY),
    ];
    script.extend((0..CHILDREN).map(|_| Reply::text("Leaf done.").after(LATENCY)));
    script.push(Reply::text("Done.").after(LATENCY));
    turn(script, 2)
}

fn one_by_one() -> (Duration, Duration) {
    let mut script = Vec::new();
    for i in 0..CHILDREN {
        script.push(calls("archmax_workflow_leaf", 1, i));
        script.push(Reply::text("Leaf done.").after(LATENCY));
    }
    script.push(Reply::text("Done.").after(LATENCY));
    turn(script, CHILDREN as u32 + 1)
}

fn tools(batched: bool) -> (Duration, Duration) {
    let mut script = if batched {
        vec![calls("slow", TOOLS, 0)]
    } else {
        (0..TOOLS).map(|i| calls("slow", 1, i)).collect()
    };
    script.push(Reply::text("Done.").after(LATENCY));
    turn(script, if batched { 2 } else { TOOLS as u32 + 1 })
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let measure = |f: &dyn Fn() -> (Duration, Duration)| {
        let (walls, own): (Vec<_>, Vec<_>) = (0..rounds).map(|_| f()).unzip();
        (median(walls), median(own))
    };
    let (script_wall, script) = measure(&scripted);
    let (fan_wall, fan) = measure(&fanned);
    let (seq_wall, seq) = measure(&one_by_one);
    let (batch_wall, batch) = measure(&|| tools(true));
    let (apart_wall, apart) = measure(&|| tools(false));
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{CHILDREN} children fanned out from one script: {:.0} ms wall, {:.0} ms of children",
        ms(script_wall),
        ms(script)
    );
    println!(
        "{CHILDREN} children fanned out in one batch: {:.0} ms wall, {:.0} ms of children",
        ms(fan_wall),
        ms(fan)
    );
    println!(
        "{CHILDREN} children one per batch: {:.0} ms wall, {:.0} ms of children",
        ms(seq_wall),
        ms(seq)
    );
    println!(
        "{TOOLS} slow host tools in one batch: {:.0} ms wall, {:.0} ms of tools (one tool: {} ms)",
        ms(batch_wall),
        ms(batch),
        TOOL_TIME.as_millis()
    );
    println!(
        "{TOOLS} slow host tools one per batch: {:.0} ms wall, {:.0} ms of tools",
        ms(apart_wall),
        ms(apart)
    );
    println!(
        "ratio children one-by-one / fanned from a script: {:.2}x (bound: maxConcurrent 4)",
        ms(seq) / ms(script)
    );
    println!(
        "ratio children one-by-one / fanned in a batch: {:.2}x (bound: maxConcurrent 4)",
        ms(seq) / ms(fan)
    );
    println!(
        "ratio batch of {TOOLS} tools / one tool: {:.2}x",
        ms(batch) / TOOL_TIME.as_secs_f64() / 1000.0
    );
}
