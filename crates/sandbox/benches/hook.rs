//! Plain timing benchmark (no criterion): one hook run on a fresh runtime, and on a reused one.
//! Run with `cargo bench -p archmax-sandbox --bench hook` (`-- --quick` for fewer samples).
//!
//! Prints one human-readable line per case and, last, one JSON line with the mean and median
//! of each case in microseconds (read by `scripts/bench-sandbox.sh`):
//! `{"fresh_mean_us":…,"fresh_p50_us":…,"reused_mean_us":…,"reused_p50_us":…,"tool_mean_us":…,"tool_p50_us":…}`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use archmax_sandbox::{
    HookInput, HookMessage, HookPhase, HookVerdict, Limits, Sandbox, ToolBridge,
};
use serde_json::{Map, Value, json};

struct Bridge;

impl ToolBridge for Bridge {
    fn tools(&self) -> Vec<String> {
        vec!["read_file".into(), "ls".into()]
    }
    fn call<'a>(
        &'a self,
        _name: &'a str,
        _args: Value,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(async { Ok("[]".to_owned()) })
    }
}

/// The hook both this bench and `scripts/bench-sandbox.mjs` run (keep the two in step).
const HOOK: &str = "import { ok, veto } from '@archmax-ai/harness/sandbox';\n\nexport default async function check({ variables, messages, tools }) {\n  const orders = variables.orders ?? [];\n  if (!messages.some((m) => m.role === 'assistant')) return veto('no reply yet');\n  return orders.length > 0 ? ok() : veto('no orders');\n}\n";

/// A hook that awaits one tool call (also in `scripts/bench-sandbox.mjs`).
const TOOL_HOOK: &str =
    "export default async ({ tools }) => JSON.parse(await tools.ls({ path: '.' })).length === 0";

fn input() -> Value {
    let mut variables = Map::new();
    variables.insert("orders".into(), json!([{"id": 1}, {"id": 2}]));
    HookInput {
        state: "review".into(),
        phase: HookPhase::After,
        trigger: None,
        variables,
        messages: vec![
            HookMessage::new("user", "go"),
            HookMessage::new("assistant", "done"),
        ],
        from: Some("review".into()),
        to: Some("done".into()),
        reason: None,
    }
    .to_value()
}

/// Mean and median of `samples`, in microseconds.
struct Stats {
    mean_us: f64,
    p50_us: f64,
}

fn report(label: &str, samples: &mut [Duration]) -> Stats {
    samples.sort();
    let total: Duration = samples.iter().sum();
    let n = samples.len() as u32;
    let pct = |p: usize| samples[(samples.len() * p / 100).min(samples.len() - 1)];
    let mean = total / n;
    println!(
        "{label:<34} n={n:<6} mean={:>9.3?} p50={:>9.3?} p90={:>9.3?} p99={:>9.3?}",
        mean,
        pct(50),
        pct(90),
        pct(99)
    );
    Stats {
        mean_us: mean.as_secs_f64() * 1e6,
        p50_us: pct(50).as_secs_f64() * 1e6,
    }
}

fn fail(what: &str) -> ! {
    eprintln!("hook bench: {what}");
    std::process::exit(1)
}

/// `warmup` untimed-for-the-result runs, then `measured` timed ones.
struct Plan {
    warmup: usize,
    measured: usize,
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let scale = |warmup: usize, measured: usize| {
        if quick {
            Plan {
                warmup: warmup / 4,
                measured: measured / 5,
            }
        } else {
            Plan { warmup, measured }
        }
    };
    let (fresh_plan, reused_plan, tool_plan) =
        (scale(200, 1_000), scale(1_000, 10_000), scale(500, 5_000));

    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        fail("cannot build tokio runtime");
    };
    let (fresh, reused, tool) = rt.block_on(async {
        let bridge: Arc<dyn ToolBridge> = Arc::new(Bridge);
        let input = input();

        // Fresh runtime: build a Sandbox (runtime + context + prelude) and run one hook.
        let mut fresh = Vec::new();
        for i in 0..fresh_plan.warmup + fresh_plan.measured {
            let started = Instant::now();
            let Ok(sb) = Sandbox::new(Limits::default()).await else {
                fail("cannot build a sandbox");
            };
            let run = sb
                .run_hook("hooks/check.js", HOOK, input.clone(), bridge.clone())
                .await;
            drop(sb);
            let took = started.elapsed();
            assert_eq!(run.verdict, Ok(HookVerdict::Ok));
            if i >= fresh_plan.warmup {
                fresh.push(took);
            }
        }
        let fresh = report("hook run, fresh runtime", &mut fresh);

        // Reused runtime: one Sandbox, many hook runs.
        let Ok(sb) = Sandbox::new(Limits::default()).await else {
            fail("cannot build a sandbox");
        };
        let mut reused = Vec::new();
        for i in 0..reused_plan.warmup + reused_plan.measured {
            let started = Instant::now();
            let run = sb
                .run_hook("hooks/check.js", HOOK, input.clone(), bridge.clone())
                .await;
            let took = started.elapsed();
            assert_eq!(run.verdict, Ok(HookVerdict::Ok));
            if i >= reused_plan.warmup {
                reused.push(took);
            }
        }
        let reused = report("hook run, reused runtime", &mut reused);

        // Reused runtime with one awaited tool call.
        let mut with_tool = Vec::new();
        for i in 0..tool_plan.warmup + tool_plan.measured {
            let started = Instant::now();
            let run = sb
                .run_hook("hooks/tool.js", TOOL_HOOK, input.clone(), bridge.clone())
                .await;
            let took = started.elapsed();
            assert_eq!(run.verdict, Ok(HookVerdict::Ok));
            if i >= tool_plan.warmup {
                with_tool.push(took);
            }
        }
        let tool = report("hook run + 1 tool call, reused", &mut with_tool);
        (fresh, reused, tool)
    });

    let round = |us: f64| (us * 10.0).round() / 10.0;
    println!(
        "{}",
        json!({
            "fresh_mean_us": round(fresh.mean_us),
            "fresh_p50_us": round(fresh.p50_us),
            "reused_mean_us": round(reused.mean_us),
            "reused_p50_us": round(reused.p50_us),
            "tool_mean_us": round(tool.mean_us),
            "tool_p50_us": round(tool.p50_us),
        })
    );
}
