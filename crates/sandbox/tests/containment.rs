//! Containment: every escape or resource attack is stopped inside the limits with a clear error,
//! and the same `Sandbox` (transparently rebuilt after a broken limit) keeps working.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use archmax_sandbox::{EvalRun, HookVerdict, Limits, Sandbox};
use common::{TestBridge, sandbox, sandbox_with, short_limits};
use serde_json::{Value, json};

async fn still_works(sb: &Sandbox) {
    let run = sb
        .eval(
            "const after = await Promise.resolve(40); after + 2",
            Value::Null,
            TestBridge::standard(),
        )
        .await;
    assert_eq!(
        run,
        EvalRun {
            text: "→ 42".into(),
            is_error: false
        }
    );
    let hook = sb
        .run_hook(
            "hooks/ok.js",
            "export default () => veto('still here')",
            json!({}),
            TestBridge::standard(),
        )
        .await;
    assert_eq!(hook.verdict, Ok(HookVerdict::Veto("still here".into())));
}

#[tokio::test]
async fn infinite_loop_is_interrupted_at_the_deadline() {
    let sb = sandbox_with(short_limits(300)).await;
    let started = Instant::now();
    let run = sb
        .eval(
            "console.log('start'); for (;;) {}",
            Value::Null,
            TestBridge::standard(),
        )
        .await;
    let elapsed = started.elapsed();
    assert_eq!(
        run,
        EvalRun {
            text: "start\nInternalError: interrupted (time limit of 300 ms reached)".into(),
            is_error: true
        }
    );
    assert!(
        // Stopped at the deadline, not after it: the loop itself never ends.
        elapsed >= Duration::from_millis(300) && elapsed < Duration::from_secs(10),
        "{elapsed:?}"
    );
    // try/catch cannot swallow the interrupt.
    let run = sb
        .eval(
            "try { for (;;) {} } catch (e) { 'caught' }",
            Value::Null,
            TestBridge::standard(),
        )
        .await;
    assert!(
        run.is_error && run.text.starts_with("InternalError: interrupted"),
        "{run:?}"
    );
    still_works(&sb).await;
}

#[tokio::test]
async fn infinite_loop_in_a_hook_fails_closed() {
    let sb = sandbox_with(short_limits(200)).await;
    let run = sb
        .run_hook(
            "hooks/spin.js",
            "export default () => { while (true) {} }",
            json!({}),
            TestBridge::standard(),
        )
        .await;
    assert_eq!(
        run.verdict,
        Err("InternalError: interrupted (time limit of 200 ms reached)".into())
    );
    still_works(&sb).await;
}

#[tokio::test]
async fn endless_await_chain_is_interrupted() {
    let sb = sandbox_with(short_limits(300)).await;
    let started = Instant::now();
    let run = sb
        .eval(
            "for (;;) await Promise.resolve();",
            Value::Null,
            TestBridge::standard(),
        )
        .await;
    assert_eq!(
        run,
        EvalRun {
            text: "InternalError: interrupted (time limit of 300 ms reached)".into(),
            is_error: true
        }
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    // A floating (not awaited) microtask storm is stopped too.
    let run = sb
        .eval(
            "(async () => { for (;;) await null })(); 'returned'",
            Value::Null,
            TestBridge::standard(),
        )
        .await;
    assert!(
        run.is_error && run.text.starts_with("InternalError: interrupted"),
        "{run:?}"
    );
    still_works(&sb).await;
}

#[tokio::test]
async fn endless_host_await_hits_the_wall_clock_timeout() {
    let sb = sandbox_with(short_limits(300)).await;
    let bridge = TestBridge::standard();
    let started = Instant::now();
    let run = sb
        .eval(
            "await tools.sleep({ ms: 3600000 }); 'woke'",
            Value::Null,
            bridge.clone(),
        )
        .await;
    let elapsed = started.elapsed();
    assert_eq!(
        run,
        EvalRun {
            text: "Error: Promise timed out — execution interrupted (time limit of 300 ms reached)"
                .into(),
            is_error: true
        }
    );
    // The awaited sleep is an hour long.
    assert!(elapsed < Duration::from_secs(10), "{elapsed:?}");
    let hook = sb
        .run_hook(
            "hooks/wait.js",
            "export default async ({ tools }) => { await tools.sleep({ ms: 3600000 }); }",
            json!({}),
            bridge.clone(),
        )
        .await;
    assert_eq!(
        hook.verdict,
        Err(
            "Error: Promise timed out — execution interrupted (time limit of 300 ms reached)"
                .into()
        )
    );
    still_works(&sb).await;
    assert!(bridge.spans.lock().map(|s| s.is_empty()).unwrap_or(false));
}

#[tokio::test]
async fn memory_bomb_is_stopped_by_the_memory_limit() {
    let limits = Limits {
        memory_bytes: 16 * 1024 * 1024,
        ..Limits::default()
    };
    let sb = sandbox_with(limits).await;
    let run = sb
        .eval(
            "const hoard = [];\nfor (let i = 0; ; i++) hoard.push('x'.repeat(1 << 20) + i);",
            Value::Null,
            TestBridge::standard(),
        )
        .await;
    assert!(run.is_error, "{run:?}");
    assert!(
        run.text
            .starts_with("InternalError: out of memory (memory limit of 16777216 bytes reached)"),
        "{run:?}"
    );
    still_works(&sb).await;
    let hook = sb
        .run_hook("hooks/bomb.js", "export default () => { const a = []; for (;;) a.push(new Array(100000).fill(a.length)); }", json!({}), TestBridge::standard())
        .await;
    let err = hook.verdict.expect_err("oom");
    assert!(
        err.starts_with("InternalError: out of memory (memory limit of 16777216 bytes reached)"),
        "{err}"
    );
    still_works(&sb).await;
}

#[tokio::test]
async fn deep_recursion_is_stopped_by_the_stack_limit() {
    let sb = sandbox().await;
    let run = sb
        .eval(
            "function down(n) { return down(n + 1) + 1 }\ndown(0)",
            Value::Null,
            TestBridge::standard(),
        )
        .await;
    assert!(run.is_error, "{run:?}");
    assert!(
        run.text
            .starts_with("RangeError: Maximum call stack size exceeded"),
        "{run:?}"
    );
    let hook = sb
        .run_hook(
            "hooks/deep.js",
            "const f = (n) => f(n + 1);\nexport default () => f(0)",
            json!({}),
            TestBridge::standard(),
        )
        .await;
    assert!(
        hook.verdict
            .as_ref()
            .is_err_and(|e| e.starts_with("RangeError: Maximum call stack size exceeded")),
        "{hook:?}"
    );
    still_works(&sb).await;
}

#[tokio::test]
async fn no_host_capabilities_are_reachable() {
    let sb = sandbox().await;
    let bridge = TestBridge::standard();
    let run = sb
        .eval("['require', 'process', 'fetch', 'std', 'os', 'setTimeout', 'XMLHttpRequest', 'WebSocket', 'Deno', 'Bun', 'module', 'exports', '__archmax_host'].map((n) => typeof globalThis[n]).join(',')", Value::Null, bridge.clone())
        .await;
    assert_eq!(
        run.text,
        "→ undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined"
    );
    for module in [
        "fs",
        "node:child_process",
        "os",
        "std",
        "https://example.com/x.js",
    ] {
        let run = sb
            .eval(
                &format!("await import('{module}')"),
                Value::Null,
                bridge.clone(),
            )
            .await;
        assert_eq!(
            run.text,
            format!("ReferenceError: could not load module '{module}'"),
            "{module}"
        );
        assert!(run.is_error);
    }
    // The prelude's setup cannot be replaced, and clobbering console/tools is repaired next run.
    let run = sb
        .eval("globalThis.__archmax_setup = null; delete globalThis.console; tools.readFile = () => 'fake'; typeof __archmax_setup", Value::Null, bridge.clone())
        .await;
    assert_eq!(run.text, "→ function");
    let run = sb
        .eval(
            "console.log('back'); await tools.readFile({ file_path: 'f' })",
            Value::Null,
            bridge,
        )
        .await;
    assert_eq!(run.text, "back\n→ contents of f");
    still_works(&sb).await;
}

#[tokio::test]
async fn sessions_do_not_share_state() {
    let a = sandbox().await;
    let b = sandbox().await;
    let bridge = TestBridge::standard();
    assert_eq!(
        a.eval(
            "globalThis.secret = 'a-only'; const mine = 1; 'set'",
            Value::Null,
            bridge.clone()
        )
        .await
        .text,
        "→ set"
    );
    assert_eq!(
        b.eval(
            "typeof secret + ' ' + typeof mine",
            Value::Null,
            bridge.clone()
        )
        .await
        .text,
        "→ undefined undefined"
    );
    assert_eq!(a.eval("secret", Value::Null, bridge).await.text, "→ a-only");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runaway_session_does_not_block_others() {
    let runaway = Arc::new(sandbox_with(short_limits(1500)).await);
    let healthy = Arc::new(sandbox().await);
    let spinning = {
        let runaway = runaway.clone();
        tokio::spawn(async move {
            runaway
                .eval("for (;;) {}", Value::Null, TestBridge::standard())
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let run = {
        let healthy = healthy.clone();
        tokio::spawn(async move {
            healthy
                .eval("'fine'", Value::Null, TestBridge::standard())
                .await
        })
        .await
        .expect("join")
    };
    assert_eq!(run.text, "→ fine");
    // The healthy run finished while the runaway still spins (it runs to its 1.5 s limit).
    assert!(
        !spinning.is_finished(),
        "the healthy run waited for the runaway"
    );
    let spun = spinning.await.expect("join");
    assert!(
        spun.is_error && spun.text.starts_with("InternalError: interrupted"),
        "{spun:?}"
    );
    still_works(&runaway).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_on_one_sandbox_are_serialised_across_tasks() {
    let sb = Arc::new(sandbox().await);
    let mut handles = Vec::new();
    for i in 0..8 {
        let sb = sb.clone();
        handles.push(tokio::spawn(async move {
            sb.eval(
                &format!(
                    "globalThis.n = (globalThis.n || 0) + 1; await tools.sleep({{ ms: 5 }}); {i}"
                ),
                Value::Null,
                TestBridge::standard(),
            )
            .await
        }));
    }
    for (i, h) in handles.into_iter().enumerate() {
        assert_eq!(h.await.expect("join").text, format!("→ {i}"));
    }
    assert_eq!(
        sb.eval("n", Value::Null, TestBridge::standard()).await.text,
        "→ 8"
    );
}
