//! Lifecycle hook scripts on a real QuickJS runtime.

mod common;

use archmax_sandbox::{HookInput, HookMessage, HookPhase, HookVerdict};
use common::{TestBridge, sandbox};
use serde_json::{Map, Value, json};

fn input() -> Value {
    let mut variables = Map::new();
    variables.insert("orders".into(), json!([1, 2]));
    variables.insert("trigger".into(), json!("t1"));
    HookInput {
        state: "review".into(),
        phase: HookPhase::After,
        trigger: Some("t1".into()),
        variables,
        messages: vec![
            HookMessage::new("user", "hi"),
            HookMessage::runtime_note("decision", "advanced"),
        ],
        from: Some("review".into()),
        to: Some("done".into()),
        reason: Some("all good".into()),
    }
    .to_value()
}

async fn verdict_of(source: &str) -> Result<HookVerdict, String> {
    sandbox()
        .await
        .run_hook("hooks/check.js", source, input(), TestBridge::standard())
        .await
        .verdict
}

fn veto(r: &str) -> Result<HookVerdict, String> {
    Ok(HookVerdict::Veto(r.to_owned()))
}

#[tokio::test]
async fn nothing_true_and_non_objects_are_ok() {
    for src in [
        "export default function () {}",
        "export default () => true",
        "export default async () => 42",
        "export default () => 'text'",
        "export default () => null",
        "export default () => () => 1",
        "1 + 1",
        "",
    ] {
        assert_eq!(verdict_of(src).await, Ok(HookVerdict::Ok), "{src}");
    }
}

#[tokio::test]
async fn bare_false_vetoes_precondition_not_met() {
    assert_eq!(
        verdict_of("export default () => false").await,
        veto("precondition not met")
    );
    assert_eq!(verdict_of("false").await, veto("precondition not met"));
}

#[tokio::test]
async fn helpers_and_verdict_objects() {
    assert_eq!(
        verdict_of("export default () => ok('fine')").await,
        Ok(HookVerdict::Ok)
    );
    assert_eq!(
        verdict_of("export default () => veto('no orders')").await,
        veto("no orders")
    );
    assert_eq!(
        verdict_of("export default () => veto()").await,
        veto("vetoed by hook")
    );
    assert_eq!(
        verdict_of("export default () => correct('add totals')").await,
        Ok(HookVerdict::Correct("add totals".into()))
    );
    assert_eq!(
        verdict_of("export default () => correct('  ')").await,
        Ok(HookVerdict::Correct("correction requested".into()))
    );
    assert_eq!(
        verdict_of("export default () => ({ verdict: 'veto', reason: 'raw object' })").await,
        veto("raw object")
    );
    assert_eq!(
        verdict_of("export default () => ({ verdict: 'veto' })").await,
        veto("vetoed by hook")
    );
}

#[tokio::test]
async fn non_verdict_objects_fail_closed_naming_keys() {
    let tail = ", which is not a verdict — return ok(), veto(reason), correct(reason), false, or nothing at all";
    let cases = [
        (
            "export default () => ({ a: 1, b: 2 })",
            "an object with keys 'a', 'b'",
        ),
        ("export default () => ({})", "an object with no keys"),
        ("export default () => [1]", "an array"),
        (
            "export default () => ({ verdict: 'OK', reason: 'x' })",
            "an object with keys 'verdict', 'reason'",
        ),
        (
            "export default () => ({ a:1, b:2, c:3, d:4, e:5, f:6, g:7 })",
            "an object with keys including 'a', 'b', 'c', 'd', 'e', 'f'",
        ),
    ];
    for (src, shape) in cases {
        assert_eq!(
            verdict_of(src).await,
            Err(format!("hook returned {shape}{tail}")),
            "{src}"
        );
    }
}

#[tokio::test]
async fn a_throw_is_an_execution_error_with_message_and_line() {
    let src =
        "export default function check(input) {\n  const n = 1;\n  throw new Error('boom');\n}\n";
    assert_eq!(
        verdict_of(src).await,
        Err("Error: boom (at hooks/check.js:3:13)".into())
    );
    let err = verdict_of("export default () => { throw 'plain' }").await;
    assert_eq!(err, Err("Error: plain".into()));
    let err = verdict_of("export default () => missing()")
        .await
        .expect_err("throws");
    assert!(
        err.starts_with("ReferenceError: missing is not defined (at hooks/check.js:1"),
        "{err}"
    );
    let err = verdict_of("export default () => {")
        .await
        .expect_err("syntax");
    assert!(err.starts_with("SyntaxError: "), "{err}");
    let err = verdict_of("export default async () => { await null; throw new TypeError('late') }")
        .await
        .expect_err("async throw");
    assert!(err.starts_with("TypeError: late"), "{err}");
}

#[tokio::test]
async fn module_forms() {
    // default export of a named function, with other exports and a helper.
    let src = "export const limit = 1;\nfunction helper(n) { return n > limit }\nexport default function check({ variables }) {\n  return helper(variables.orders.length) ? ok() : veto('few');\n}\n(1)";
    assert_eq!(verdict_of(src).await, Ok(HookVerdict::Ok));
    // defineHook(fn)
    let src = "defineHook(async (input) => input.variables.orders.length > 5 ? ok() : veto('few orders'))";
    assert_eq!(verdict_of(src).await, veto("few orders"));
    // export default defineHook(fn)
    let src = "export default defineHook((i) => veto(i.state))";
    assert_eq!(verdict_of(src).await, veto("review"));
    // bare script ending in an expression, with top-level await and args.
    let src = "const orders = await Promise.resolve(args.variables.orders);\norders.length > 5 ? ok() : veto(`only ${orders.length}`)";
    assert_eq!(verdict_of(src).await, veto("only 2"));
    // bare script ending in an if statement's completion value.
    assert_eq!(
        verdict_of("if (args.phase === 'after') { veto('after') } else { ok() }").await,
        veto("after")
    );
    // a default-exported class is a function called without `new`: it throws, failing closed.
    let err = verdict_of("export default class Hook {}")
        .await
        .expect_err("class");
    assert!(err.starts_with("TypeError: "), "{err}");
}

#[tokio::test]
async fn harness_imports_are_stripped_and_lines_kept() {
    let src = "import { ok, veto } from '@archmax-ai/harness/sandbox';\nimport type_only from \"@archmax-ai/harness\";\n\nexport default () => {\n  throw new Error('line five');\n};\n";
    assert_eq!(
        verdict_of(src).await,
        Err("Error: line five (at hooks/check.js:5:13)".into())
    );
}

#[tokio::test]
async fn foreign_import_is_refused_before_running() {
    let bridge = TestBridge::standard();
    let run = sandbox()
        .await
        .run_hook(
            "hooks/check.js",
            "import fs from 'node:fs';\nconsole.log('ran');\nexport default () => ok()",
            input(),
            bridge.clone(),
        )
        .await;
    assert_eq!(
        run.verdict,
        Err("sandbox scripts may import only from '@archmax-ai/harness/*' type-carrier entry points; found 'import ... from \"node:fs\"' in hooks/check.js (line 1). Sandbox scripts are self-contained — inline the logic or use the tools bridge.".into())
    );
    assert!(run.output.is_empty());
}

#[tokio::test]
async fn input_object_and_args_global() {
    let src = "export default (i) => {\n  console.log(JSON.stringify({ ...i, tools: Object.keys(i.tools) }));\n  console.log(JSON.stringify(args));\n  console.log(SANDBOX_CONTRACT.context, __SANDBOX_VERSION, typeof args.tools);\n}";
    let run = sandbox()
        .await
        .run_hook("hooks/check.js", src, input(), TestBridge::standard())
        .await;
    assert_eq!(run.verdict, Ok(HookVerdict::Ok));
    let seen: Value = serde_json::from_str(&run.output[0]).expect("json");
    assert_eq!(
        seen,
        json!({
            "state": "review", "phase": "after", "trigger": "t1",
            "variables": {"orders": [1, 2], "trigger": "t1"},
            "messages": [{"role": "user", "text": "hi"}, {"role": "runtime", "text": "advanced", "note": "decision"}],
            "from": "review", "to": "done", "reason": "all good",
            "tools": ["readFile", "writeFile", "sleep", "archmaxWorkflowEnrichOrder"]
        })
    );
    let args: Value = serde_json::from_str(&run.output[1]).expect("json");
    assert_eq!(args, input());
    assert_eq!(run.output[2], "lifecycle-hook 2 undefined");
}

#[tokio::test]
async fn console_lines_become_output() {
    let src = "console.log('a', 1, { b: [2] }, null, undefined);\nconsole.info('two\\n\\nlines   ');\nconsole.warn('w');\nconsole.error(new Error('e').message);\nconsole.debug('   ');\ntrue";
    let run = sandbox()
        .await
        .run_hook("hooks/check.js", src, input(), TestBridge::standard())
        .await;
    assert_eq!(run.verdict, Ok(HookVerdict::Ok));
    assert_eq!(
        run.output,
        vec![
            "a 1 {\"b\":[2]} null undefined",
            "two",
            "lines",
            "[warn] w",
            "[error] e"
        ]
    );
}

#[tokio::test]
async fn hook_tools_reach_the_bridge() {
    let bridge = TestBridge::standard();
    let src = "export default async ({ tools }) => {\n  const text = await tools.readFile({ file_path: 'orders.json', limit: 2 });\n  return text === 'contents of orders.json' ? ok() : veto(text);\n}";
    let run = sandbox()
        .await
        .run_hook("hooks/check.js", src, input(), bridge.clone())
        .await;
    assert_eq!(run.verdict, Ok(HookVerdict::Ok));
    assert_eq!(
        bridge.calls(),
        vec![(
            "read_file".to_owned(),
            json!({"file_path": "orders.json", "limit": 2})
        )]
    );
}

#[tokio::test]
async fn refusal_is_catchable_in_a_hook_and_uncaught_fails_closed() {
    let bridge = TestBridge::standard();
    let src = "export default async ({ tools }) => {\n  try { await tools.writeFile({ file_path: 'x' }); return ok(); }\n  catch (e) { return veto(e.message); }\n}";
    let run = sandbox()
        .await
        .run_hook("hooks/check.js", src, input(), bridge.clone())
        .await;
    assert_eq!(
        run.verdict,
        veto(&format!("Tool 'write_file' failed: {}", common::BLOCKED))
    );
    let src = "export default async ({ tools }) => { await tools.writeFile({}); }";
    let err = sandbox()
        .await
        .run_hook("hooks/check.js", src, input(), bridge)
        .await
        .verdict
        .expect_err("uncaught refusal");
    assert!(
        err.starts_with("Error: Tool 'write_file' failed: [workflow] BLOCKED"),
        "{err}"
    );
}

#[tokio::test]
async fn reused_sandbox_resets_hook_registration_and_keeps_globals() {
    let sb = sandbox().await;
    let bridge = TestBridge::standard();
    let first = sb
        .run_hook("hooks/a.js", "const seen = 1;\nglobalThis.counter = (globalThis.counter || 0) + 1;\nexport default () => veto('a')", input(), bridge.clone())
        .await;
    assert_eq!(first.verdict, veto("a"));
    // Same script again: no redeclaration error, and the counter persisted.
    let again = sb
        .run_hook("hooks/a.js", "const seen = 1;\nglobalThis.counter = (globalThis.counter || 0) + 1;\nexport default () => veto('a' + counter)", input(), bridge.clone())
        .await;
    assert_eq!(again.verdict, veto("a2"));
    // A bare script after a default-export script is read by its own value, not the old function.
    let bare = sb.run_hook("hooks/b.js", "false", input(), bridge).await;
    assert_eq!(bare.verdict, veto("precondition not met"));
}
