//! `archmax_eval` on a real QuickJS runtime.

mod common;

use std::time::{Duration, Instant};

use archmax_sandbox::{EvalRun, Limits, eval_args};
use common::{BLOCKED, TestBridge, sandbox, sandbox_with};
use serde_json::{Map, Value, json};

async fn eval(code: &str) -> EvalRun {
    sandbox()
        .await
        .eval(code, Value::Null, TestBridge::standard())
        .await
}

fn ok(text: &str) -> EvalRun {
    EvalRun {
        text: text.to_owned(),
        is_error: false,
    }
}

#[tokio::test]
async fn result_formatting() {
    assert_eq!(eval("1 + 1").await, ok("→ 2"));
    assert_eq!(eval("'raw text'").await, ok("→ raw text"));
    assert_eq!(
        eval("({ a: 1, b: [true] })").await,
        ok("→ {\n  \"a\": 1,\n  \"b\": [\n    true\n  ]\n}")
    );
    assert_eq!(eval("undefined").await, ok("(no output)"));
    assert_eq!(eval("let x = 1").await, ok("(no output)"));
    assert_eq!(eval("null").await, ok("→ null"));
    assert_eq!(
        eval("(function named() {})").await,
        ok("→ function named() {}")
    );
    assert_eq!(eval("10n").await, ok("→ 10"));
    assert_eq!(
        eval("console.log('a', { b: 1 }); console.warn('w'); console.error('e'); 3").await,
        ok("a {\"b\":1}\n[warn] w\n[error] e\n→ 3")
    );
    assert_eq!(eval("console.log('only logs')").await, ok("only logs"));
}

#[tokio::test]
async fn errors_are_formatted_with_stack() {
    assert_eq!(
        eval("const a = 1;\nthrow new TypeError('bad input');").await,
        EvalRun {
            text: "TypeError: bad input\n    at <eval> (archmax_eval:2:11)".into(),
            is_error: true
        }
    );
    assert_eq!(
        eval("console.log('before'); throw 'str'").await,
        EvalRun {
            text: "before\nError: str".into(),
            is_error: true
        }
    );
    let run = eval("function (").await;
    assert!(
        run.is_error && run.text.starts_with("SyntaxError: "),
        "{run:?}"
    );
}

#[tokio::test]
async fn top_level_await_and_promise_results() {
    assert_eq!(
        eval("const v = await Promise.resolve(21); v * 2").await,
        ok("→ 42")
    );
    assert_eq!(eval("Promise.resolve('later')").await, ok("→ later"));
    assert_eq!(
        eval("await Promise.reject(new RangeError('nope'))")
            .await
            .text
            .lines()
            .next(),
        Some("RangeError: nope")
    );
}

#[tokio::test]
async fn interpreter_state_is_shared_across_evals() {
    let sb = sandbox().await;
    let bridge = TestBridge::standard();
    assert_eq!(sb.eval("const total = 5;\nfunction twice(n) { return n * 2 }\nclass Box { constructor(v) { this.v = v } }", Value::Null, bridge.clone()).await, ok("(no output)"));
    assert_eq!(
        sb.eval("twice(total) + new Box(1).v", Value::Null, bridge.clone())
            .await,
        ok("→ 11")
    );
    // Redeclaring top-level bindings in a later eval works (they live on globalThis).
    assert_eq!(
        sb.eval(
            "const total = 7; let y = 1; class Box {}; total",
            Value::Null,
            bridge.clone()
        )
        .await,
        ok("→ 7")
    );
    assert_eq!(
        sb.eval("globalThis.total", Value::Null, bridge).await,
        ok("→ 7")
    );
}

#[tokio::test]
async fn args_and_variables() {
    let mut vars = Map::new();
    vars.insert("customer".into(), json!({"id": 7}));
    let args = eval_args(json!({"limit": 3, "variables": "ignored"}), vars);
    let run = sandbox()
        .await
        .run_file(
            "skills/x/scripts/a.js",
            "args.limit + args.variables.customer.id",
            args,
            TestBridge::standard(),
        )
        .await;
    assert_eq!(run, ok("→ 10"));
    assert_eq!(eval("typeof args").await, ok("→ undefined"));
    assert_eq!(
        eval("SANDBOX_CONTRACT.context + ' ' + typeof ok + typeof veto + typeof defineHook").await,
        ok("→ ptc undefinedundefinedundefined")
    );
}

#[tokio::test]
async fn tools_call_the_bridge_with_snake_names_and_json_args() {
    let bridge = TestBridge::standard();
    let sb = sandbox().await;
    let run = sb
        .eval("const r = await tools.readFile({ file_path: 'a.txt', offset: 1, nested: { k: [1, 'x'] } }); typeof r + ':' + r", Value::Null, bridge.clone())
        .await;
    assert_eq!(run, ok("→ string:contents of a.txt"));
    assert_eq!(
        bridge.calls(),
        vec![(
            "read_file".to_owned(),
            json!({"file_path": "a.txt", "offset": 1, "nested": {"k": [1, "x"]}})
        )]
    );
    // Non-object input becomes {}.
    let run = sb
        .eval(
            "await tools.archmaxWorkflowEnrichOrder([1, 2])",
            Value::Null,
            bridge.clone(),
        )
        .await;
    assert_eq!(run, ok("→ called archmax_workflow_enrich-order with {}"));
    // Excluded tools are never exposed; names are camelCased.
    let run = sb
        .eval(
            "Object.keys(tools).join(',') + ' ' + typeof tools.archmaxAdvance",
            Value::Null,
            bridge,
        )
        .await;
    assert_eq!(
        run,
        ok("→ readFile,writeFile,sleep,archmaxWorkflowEnrichOrder undefined")
    );
    // No tools at all: no `tools` global.
    let run = sb
        .eval("typeof tools", Value::Null, TestBridge::new(&[]))
        .await;
    assert_eq!(run, ok("→ undefined"));
}

#[tokio::test]
async fn refusals_are_catchable_errors() {
    let run = eval("try { await tools.writeFile({ file_path: 'x' }); 'wrote' } catch (e) { `${e instanceof Error} ${e.message}` }").await;
    assert_eq!(
        run,
        ok(&format!("→ true Tool 'write_file' failed: {BLOCKED}"))
    );
    let run = eval("await tools.writeFile({})").await;
    assert!(run.is_error);
    assert!(
        run.text
            .starts_with(&format!("Error: Tool 'write_file' failed: {BLOCKED}")),
        "{run:?}"
    );
}

#[tokio::test]
async fn promise_all_runs_tool_calls_concurrently() {
    let bridge = TestBridge::standard();
    let sb = sandbox().await;
    let started = Instant::now();
    let run = sb
        .eval("const [a, b] = await Promise.all([tools.sleep({ ms: 200 }), tools.sleep({ ms: 200 })]); a + ', ' + b", Value::Null, bridge.clone())
        .await;
    let elapsed = started.elapsed();
    assert_eq!(run, ok("→ slept 200, slept 200"));
    // Two 200 ms sleeps in sequence would take 400 ms; the spans below are the real check.
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    let spans = bridge.spans.lock().map(|s| s.clone()).unwrap_or_default();
    assert_eq!(spans.len(), 2);
    assert!(
        spans[0].0 < spans[1].1 && spans[1].0 < spans[0].1,
        "calls did not overlap"
    );
}

#[tokio::test]
async fn tool_call_budget_per_eval() {
    let sb = sandbox_with(Limits {
        max_tool_calls: Some(2),
        ..Limits::default()
    })
    .await;
    let bridge = TestBridge::standard();
    let code = "const out = [];\nfor (let i = 0; i < 3; i++) {\n  try { out.push(await tools.readFile({ file_path: String(i) })) } catch (e) { out.push(e.message) }\n}\nout.join(' | ')";
    let expected = "→ contents of 0 | contents of 1 | Tool 'read_file' failed: PTC call budget exceeded (limit=2, attempted=3, function=readFile)";
    assert_eq!(
        sb.eval(code, Value::Null, bridge.clone()).await,
        ok(expected)
    );
    // The budget resets each eval.
    assert_eq!(
        sb.eval(code, Value::Null, bridge.clone()).await,
        ok(expected)
    );
    assert_eq!(bridge.calls().len(), 4);
    let none = sandbox_with(Limits {
        max_tool_calls: Some(0),
        ..Limits::default()
    })
    .await;
    let run = none
        .eval("await tools.sleep({})", Value::Null, bridge)
        .await;
    assert!(run.text.starts_with("Error: Tool 'sleep' failed: PTC call budget exceeded (limit=0, attempted=1, function=sleep)"), "{run:?}");
    let unlimited = sandbox_with(Limits {
        max_tool_calls: None,
        ..Limits::default()
    })
    .await;
    let run = unlimited
        .eval(
            "let n = 0; for (let i = 0; i < 300; i++) { await tools.readFile({}); n++ } n",
            Value::Null,
            TestBridge::standard(),
        )
        .await;
    assert_eq!(run, ok("→ 300"));
}

#[tokio::test]
async fn console_output_and_result_are_truncated() {
    let sb = sandbox_with(Limits {
        max_result_chars: 12,
        ..Limits::default()
    })
    .await;
    let bridge = TestBridge::standard();
    let run = sb
        .eval(
            "console.log('12345'); console.log('67890abcdef'); console.log('zzz'); 'r'",
            Value::Null,
            bridge.clone(),
        )
        .await;
    assert_eq!(run, ok("12345\n67890a\n[truncated 10 chars]\n→ r"));
    let run = sb.eval("'x'.repeat(20)", Value::Null, bridge).await;
    assert_eq!(run, ok("→ xxxxxxxxxxxx\n[truncated 8 chars]"));
}

#[tokio::test]
async fn foreign_imports_are_refused_and_harness_imports_stripped() {
    assert_eq!(
        eval("import { x } from 'lodash';\n1").await,
        EvalRun {
            text: "error: sandbox scripts may import only from '@archmax-ai/harness/*' type-carrier entry points; found 'import ... from \"lodash\"' (line 1). Sandbox scripts are self-contained — inline the logic or use the tools bridge.".into(),
            is_error: true
        }
    );
    assert_eq!(
        eval("import type { Tools } from '@archmax-ai/harness/sandbox';\n'fine'").await,
        ok("→ fine")
    );
}

#[tokio::test]
async fn floating_tool_calls_do_not_outlive_their_run() {
    let bridge = TestBridge::standard();
    let sb = sandbox().await;
    let run = sb
        .eval("tools.sleep({ ms: 5000 }).catch((e) => { globalThis.caught = e.message; return tools.readFile({ file_path: 'late' }); }).catch((e) => { globalThis.late = e.message; });\n'returned'", Value::Null, bridge.clone())
        .await;
    assert_eq!(run, ok("→ returned"));
    let run = sb
        .eval("caught + ' / ' + late", Value::Null, bridge.clone())
        .await;
    assert_eq!(
        run,
        ok(
            "→ Tool 'sleep' failed: the script run that made this call has ended / Tool 'read_file' failed: the script run that made this call has ended"
        )
    );
    assert!(bridge.calls().iter().all(|(name, _)| name != "read_file"));
    assert!(bridge.spans.lock().map(|s| s.is_empty()).unwrap_or(false));
}
