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

/// QuickJS takes an object's shape off the GC list while it reallocates it for a longer property
/// table, and throws `out of memory` before putting it back when the reallocation is refused;
/// a GC pass started by that error then unlinked the shape twice (SIGSEGV in `list_del`). Which
/// allocation the limit refuses depends on what the heap already holds, so the padding sweeps
/// the whole limit in steps narrower than the window where the shape's is the refused one.
#[tokio::test]
async fn a_refusal_while_a_property_table_grows_does_not_crash() {
    const LIMIT: usize = 4 << 20;
    let sb = sandbox_with(Limits {
        memory_bytes: LIMIT,
        ..Limits::default()
    })
    .await;
    for pad in (0..LIMIT).step_by(40_000) {
        let code = format!(
            "const pad = new Uint8Array({pad}); const o = {{}}; for (let i = 0; ; i++) o[i] = 0;"
        );
        let run = sb.eval(&code, Value::Null, TestBridge::standard()).await;
        assert!(
            run.text.starts_with(
                "InternalError: out of memory (memory limit of 4194304 bytes reached)"
            ),
            "pad {pad}: {run:?}"
        );
    }
    still_works(&sb).await;
}

/// The same growth refused by the deadline instead: the refusal lands wherever the time runs out,
/// on the property array, the shape or the hash table.
#[tokio::test]
async fn growth_refused_at_the_deadline_does_not_crash() {
    let scripts = [
        "const o = {}; for (let i = 0; ; i++) o[i] = 0;",
        "const a = []; a.length = 2e9; a.fill(0)",
        "const a = []; a.length = 2e9; a.map((x) => x)",
    ];
    for ms in 1..=12u64 {
        let sb = sandbox_with(short_limits(ms * 7)).await;
        for code in scripts {
            let run = sb.eval(code, Value::Null, TestBridge::standard()).await;
            assert!(run.is_error, "{ms} ms, {code}: {run:?}");
        }
        still_works(&sb).await;
    }
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

#[path = "common/native_loops.rs"]
mod native_loops;

/// Runs `code` on its own thread and gives up waiting `limit + 2 s` after the start, so a
/// script that never yields fails the test instead of hanging it.
fn run_bounded(limit_ms: u64, code: &'static str) -> Result<EvalRun, Duration> {
    let (tx, rx) = std::sync::mpsc::channel();
    let started = Instant::now();
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        let run = rt.block_on(async {
            let sb = sandbox_with(short_limits(limit_ms)).await;
            sb.eval(code, Value::Null, TestBridge::standard()).await
        });
        let _ = tx.send(run);
    });
    let bound = Duration::from_millis(limit_ms) + Duration::from_secs(2);
    rx.recv_timeout(bound).map_err(|_| started.elapsed())
}

#[test]
fn native_loops_stop_at_the_time_limit() {
    let mut escaped = Vec::new();
    for (name, code) in native_loops::NATIVE_LOOPS {
        let started = Instant::now();
        match run_bounded(250, code) {
            Ok(run) => {
                let elapsed = started.elapsed();
                eprintln!(
                    "{name:28} {elapsed:>10.2?}  {}",
                    run.text.lines().next().unwrap_or("")
                );
                if elapsed > Duration::from_millis(250) + Duration::from_secs(2) {
                    escaped.push(format!("{name}: ran {elapsed:?}"));
                }
            }
            Err(after) => {
                eprintln!("{name:28} still running after {after:?}");
                escaped.push(format!("{name}: still running after {after:?}"));
            }
        }
    }
    assert!(
        escaped.is_empty(),
        "escaped the 250 ms limit:\n{}",
        escaped.join("\n")
    );
}

#[tokio::test]
async fn a_native_sort_over_a_huge_length_ends_with_the_interrupt() {
    let sb = sandbox_with(short_limits(300)).await;
    for code in [
        "const a = []; a.length = 2e9; a.sort()",
        "Array.prototype.copyWithin.call({ length: 2 ** 53 - 1 }, 0, 1)",
        "const p = new Proxy([], { get: (t, k) => k === 'length' ? 2 ** 53 - 1 : Reflect.get(t, k) }); p.reverse()",
    ] {
        let run = sb.eval(code, Value::Null, TestBridge::standard()).await;
        assert_eq!(
            run,
            EvalRun {
                text: "InternalError: interrupted (time limit of 300 ms reached)".into(),
                is_error: true
            },
            "{code}"
        );
    }
    let hook = sb
        .run_hook(
            "hooks/sort.js",
            "export default () => { const a = []; a.length = 2e9; a.reverse(); return true }",
            json!({}),
            TestBridge::standard(),
        )
        .await;
    assert_eq!(
        hook.verdict,
        Err("InternalError: interrupted (time limit of 300 ms reached)".into())
    );
    still_works(&sb).await;
}

/// The guarded builtins answer exactly what QuickJS's own answer for ordinary inputs.
#[tokio::test]
async fn guarded_builtins_behave_like_the_originals() {
    let sb = sandbox().await;
    let run = sb
        .eval(GUARDED_BEHAVIOUR, Value::Null, TestBridge::standard())
        .await;
    assert_eq!(
        run,
        EvalRun {
            text: "→ all equal".into(),
            is_error: false
        }
    );
    // The guard is a module compiled once per process; importing it yields nothing.
    let run = sb
        .eval(
            "const m = await import('archmax:native-guard').catch((e) => e.message); typeof m === 'string' ? m : Object.keys(m).length",
            Value::Null,
            TestBridge::standard(),
        )
        .await;
    assert!(
        run.text == "→ 0" || run.text.starts_with("→ could not load module"),
        "{run:?}"
    );
}

const GUARDED_BEHAVIOUR: &str = r#"
const r = [];
const eq = (name, got, want) => {
  const g = JSON.stringify(got), w = JSON.stringify(want);
  if (g !== w) r.push(name + ': ' + g + ' != ' + w);
};
const throws = (f) => { try { f(); return 'no throw'; } catch (e) { return e.constructor.name; } };
eq('sort', [3, 1, 10, 2].sort(), [1, 10, 2, 3]);
eq('sort undefined and holes', [3, undefined, 1, , 2].sort(), [1, 2, 3, undefined, undefined]);
eq('sort comparator', [3, 1, 2].sort((a, b) => b - a), [3, 2, 1]);
const big = Array.from({ length: 70000 }, (_, i) => (i * 7919) % 70000);
const sorted = big.slice().sort();
eq('long sort', sorted.every((v, i) => i === 0 || `${sorted[i - 1]}` <= `${v}`) && sorted.length, 70000);
eq('long sort stable', Array.from({ length: 5000 }, (_, i) => ({ k: `${i % 3}`, i })).sort((a, b) => a.k < b.k ? -1 : a.k > b.k ? 1 : 0).every((v, i, a) => i === 0 || a[i - 1].k < v.k || a[i - 1].i < v.i), true);
eq('long sort symbols throw', throws(() => { const a = new Array(70000).fill(1); a[7] = Symbol(); a.sort(); }), 'TypeError');
eq('reverse', [1, 2, 3].reverse(), [3, 2, 1]);
eq('like reverse', Array.prototype.reverse.call({ length: 3, 0: 'a', 2: 'c' }), { 0: 'c', 2: 'a', length: 3 });
const like = { length: 2, 0: 1, 1: 2 };
eq('like identity', Array.prototype.reverse.call(like) === like, true);
eq('copyWithin', [1, 2, 3, 4, 5].copyWithin(0, 3), [4, 5, 3, 4, 5]);
eq('splice', (() => { const a = [1, 2, 3]; const d = a.splice(1, 1, 'x', 'y'); return [a, d]; })(), [[1, 'x', 'y', 3], [2]]);
eq('like splice', Array.isArray(Array.prototype.splice.call({ length: 2, 0: 1, 1: 2 }, 0, 1)), true);
eq('join', [1, [2, 3], null, undefined].join('-'), '1-2,3--');
eq('toString', String([1, [2, [3]]]), '1,2,3');
eq('like join', Array.prototype.join.call({ length: 2, 0: 'a', 1: 'b' }), 'a,b');
eq('string join', Array.prototype.join.call('abc', '-'), 'a-b-c');
eq('toLocaleString', [1, 'a'].toLocaleString(), '1,a');
eq('concat', [1].concat([2], [[3]], 4, { length: 1, 0: 'x', [Symbol.isConcatSpreadable]: true }), [1, 2, [3], 4, 'x']);
const obj = { a: 1 };
eq('concat keeps objects', [].concat(obj)[0] === obj, true);
eq('concat this object', Array.prototype.concat.call(obj, 1)[0] === obj, true);
eq('concat proxy array', [0].concat(new Proxy([1, 2], {})), [0, 1, 2]);
eq('flat', [1, [2, [3, [4]]]].flat(), [1, 2, [3, [4]]]);
eq('flat Infinity', [1, [2, [3, [4]]]].flat(Infinity), [1, 2, 3, 4]);
eq('flat holes', [1, , [2, , 3]].flat(), [1, 2, 3]);
eq('flat 0', [[1]].flat(0), [[1]]);
eq('flatMap', [1, 2].flatMap((x) => [x, x * 2]), [1, 2, 2, 4]);
eq('flatMap not callable', throws(() => [1].flatMap(5)), 'TypeError');
class MyArr extends Array {}
eq('species', [new MyArr(1, 2).flat() instanceof MyArr, new MyArr(1, 2, 3).slice(1) instanceof MyArr, new MyArr(1).concat([2]) instanceof MyArr], [true, true, true]);
eq('fill', new Array(3).fill(0), [0, 0, 0]);
eq('shift', (() => { const a = [1, 2, 3]; return [a.shift(), a]; })(), [1, [2, 3]]);
eq('unshift', (() => { const a = [2]; return [a.unshift(0, 1), a]; })(), [3, [0, 1, 2]]);
eq('slice', [1, 2, 3].slice(-2), [2, 3]);
eq('change-by-copy', [[3, 1, 2].toSorted(), [1, 2].toReversed(), [1, 2].with(0, 9), [1, 2, 3].toSpliced(1, 1)], [[1, 2, 3], [2, 1], [9, 2], [1, 3]]);
const t = new Float64Array(70000);
for (let i = 0; i < t.length; i++) t[i] = ((i * 7919) % 70000) - 35000;
t[0] = NaN; t[1] = -0; t[2] = 0;
t.sort();
eq('typed sort', [t.every((v, i) => i === 0 || i === t.length - 1 || t[i - 1] <= v), Number.isNaN(t[69999]), Object.is(t[t.indexOf(0)], -0)], [true, true, true]);
eq('typed small sort', Array.from(new Int8Array([3, -1, 2]).sort()), [-1, 2, 3]);
eq('typed fill', Array.from(new Uint8Array(3).fill(7)), [7, 7, 7]);
eq('typed set', (() => { const u = new Uint8Array(3); u.set([1, 2], 1); return Array.from(u); })(), [0, 1, 2]);
eq('typed indexOf', new Uint8Array([1, 2, 3]).indexOf(3), 2);
eq('JSON', JSON.stringify({ a: [1, { b: 2 }], c: undefined }), '{"a":[1,{"b":2}]}');
eq('JSON space', JSON.stringify([1], null, 2), '[\n  1\n]');
eq('JSON replacer', JSON.stringify({ a: 1, b: 2 }, (k, v) => k === 'a' ? undefined : v), '{"b":2}');
eq('JSON list', JSON.stringify({ b: 1, a: 2, c: { a: 3, d: 4 } }, ['a', 'c']), '{"a":2,"c":{"a":3}}');
eq('JSON list order', JSON.stringify({ b: 1, a: 2 }, ['a', 'b', 'a', 1]), '{"a":2,"b":1}');
eq('JSON list arrays', JSON.stringify([{ x: 1, y: 2 }, [3]], ['x']), '[{"x":1},[3]]');
eq('JSON toJSON', JSON.stringify({ d: { toJSON() { return 'x'; } } }), '{"d":"x"}');
eq('JSON boxed', JSON.stringify([new Number(3), new String('s'), new Boolean(false)], ['x']), '[3,"s",false]');
eq('JSON undefined', JSON.stringify(undefined) === undefined, true);
eq('JSON cycle', throws(() => { const c = {}; c.c = c; JSON.stringify(c); }), 'TypeError');
eq('JSON bigint', throws(() => JSON.stringify(1n)), 'TypeError');
eq('shape', [Array.prototype.sort.name, Array.prototype.sort.length, Array.prototype.concat.length, Array.prototype.splice.length, JSON.stringify.length, Array.prototype.flat.length, Array.prototype.flatMap.length], ['sort', 1, 1, 2, 3, 0, 1]);
eq('not constructible', throws(() => new Array.prototype.sort()), 'TypeError');
eq('not enumerable', Object.keys(Array.prototype).length, 0);
eq('null this', [throws(() => Array.prototype.sort.call(null)), throws(() => Array.prototype.flat.call(undefined))], ['TypeError', 'TypeError']);
eq('frozen', throws(() => Object.freeze([2, 1]).sort()), 'TypeError');
eq('getFunction', (() => {
  Error.prepareStackTrace = (e, s) => s;
  let seen = 'none';
  [2, 1].sort(() => { seen = new Error().stack.map((c) => typeof c.getFunction()).join(); return 0; });
  Error.prepareStackTrace = undefined;
  return seen.includes('function');
})(), false);
eq('guard host hidden', typeof globalThis.__archmax_guard_host, 'undefined');
r.length ? r.join('\n') : 'all equal'
"#;
