//! Plain timing benchmark (no criterion): one hook run on a fresh runtime, and on a reused one.
//! Run with `cargo bench --bench hook`.

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

const HOOK: &str = "import { ok, veto } from '@archmax-ai/harness/sandbox';\n\nexport default async function check({ variables, messages, tools }) {\n  const orders = variables.orders ?? [];\n  if (!messages.some((m) => m.role === 'assistant')) return veto('no reply yet');\n  return orders.length > 0 ? ok() : veto('no orders');\n}\n";

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

fn report(label: &str, samples: &mut [Duration]) {
    samples.sort();
    let total: Duration = samples.iter().sum();
    let n = samples.len() as u32;
    let pct = |p: usize| samples[(samples.len() * p / 100).min(samples.len() - 1)];
    println!(
        "{label:<34} n={n:<6} mean={:>9.3?} p50={:>9.3?} p90={:>9.3?} p99={:>9.3?}",
        total / n,
        pct(50),
        pct(90),
        pct(99)
    );
}

fn main() {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        eprintln!("cannot build tokio runtime");
        return;
    };
    rt.block_on(async {
        let bridge: Arc<dyn ToolBridge> = Arc::new(Bridge);
        let input = input();

        // Fresh runtime: build a Sandbox (runtime + context + prelude) and run one hook.
        let mut fresh = Vec::new();
        for i in 0..1_200 {
            let started = Instant::now();
            let Ok(sb) = Sandbox::new(Limits::default()).await else { return };
            let run = sb.run_hook("hooks/check.js", HOOK, input.clone(), bridge.clone()).await;
            drop(sb);
            let took = started.elapsed();
            assert_eq!(run.verdict, Ok(HookVerdict::Ok));
            if i >= 200 {
                fresh.push(took);
            }
        }
        report("hook run, fresh runtime", &mut fresh);

        // Reused runtime: one Sandbox, many hook runs.
        let Ok(sb) = Sandbox::new(Limits::default()).await else { return };
        let mut reused = Vec::new();
        for i in 0..11_000 {
            let started = Instant::now();
            let run = sb.run_hook("hooks/check.js", HOOK, input.clone(), bridge.clone()).await;
            let took = started.elapsed();
            assert_eq!(run.verdict, Ok(HookVerdict::Ok));
            if i >= 1_000 {
                reused.push(took);
            }
        }
        report("hook run, reused runtime", &mut reused);

        // Reused runtime with one awaited tool call.
        let tool_hook = "export default async ({ tools }) => JSON.parse(await tools.ls({ path: '.' })).length === 0";
        let mut with_tool = Vec::new();
        for i in 0..5_500 {
            let started = Instant::now();
            let run = sb.run_hook("hooks/tool.js", tool_hook, input.clone(), bridge.clone()).await;
            let took = started.elapsed();
            assert_eq!(run.verdict, Ok(HookVerdict::Ok));
            if i >= 500 {
                with_tool.push(took);
            }
        }
        report("hook run + 1 tool call, reused", &mut with_tool);
    });
}
