//! The cost of the native-loop guards (`src/native_guard.rs`, the limit allocator) on
//! ordinary array, JSON and string code: the same scripts on a guarded sandbox and on an
//! unguarded baseline, in alternating blocks, on one long-lived sandbox each.
//!
//! ```sh
//! cargo bench -p archmax-sandbox --features unguarded-baseline --bench native_guard
//! ```
//!
//! Prints one line per script with both medians and the ratio guarded / baseline.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use archmax_sandbox::{Limits, Sandbox, ToolBridge};
use serde_json::Value;

struct NoTools;

impl ToolBridge for NoTools {
    fn tools(&self) -> Vec<String> {
        Vec::new()
    }
    fn call<'a>(
        &'a self,
        _name: &'a str,
        _args: Value,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(async { Ok(String::new()) })
    }
}

/// `(name, script)`; each ends with a number so both sides can be checked to agree.
const SCRIPTS: &[(&str, &str)] = &[
    (
        "small sort × 20 000",
        "let s = 0; for (let i = 0; i < 20000; i++) s += [i, 3, 1, 2].sort().length; s",
    ),
    (
        "small reverse × 20 000",
        "let s = 0; for (let i = 0; i < 20000; i++) s += [i, 3, 1, 2].reverse().length; s",
    ),
    (
        "small concat × 20 000",
        "let s = 0; for (let i = 0; i < 20000; i++) s += [i, 3].concat([i]).length; s",
    ),
    (
        "small join × 20 000",
        "let s = 0; for (let i = 0; i < 20000; i++) s += [i, 3].join('-').length; s",
    ),
    (
        "small flat × 20 000",
        "let s = 0; for (let i = 0; i < 20000; i++) s += [[i], [2]].flat().length; s",
    ),
    (
        "small JSON × 20 000",
        "let s = 0; for (let i = 0; i < 20000; i++) s += JSON.stringify({ i, t: ['a'] }).length; s",
    ),
    (
        "hook-sized (small arrays, many calls)",
        "let s = 0;\nfor (let i = 0; i < 2000; i++) {\n  const a = [i, 3, 1, 2];\n  s += a.slice().sort().reverse().concat([i]).join('-').length;\n  s += JSON.stringify({ i, tags: ['a', 'b'] }).length + [[i], [2]].flat().length;\n}\ns",
    ),
    (
        "2 000-element arrays",
        "const a = Array.from({ length: 2000 }, (_, i) => (i * 7919) % 2000);\nlet s = 0;\nfor (let k = 0; k < 20; k++) {\n  const b = a.slice().sort((x, y) => x - y).reverse();\n  s += b.concat([1, 2]).join(',').length + JSON.stringify(b.slice(0, 100)).length;\n  s += a.filter((x) => x % 2).map((x) => x * 2).reduce((x, y) => x + y, 0);\n  s += a.slice().sort().length + a.slice(0, 50).splice(10, 5).length;\n}\ns",
    ),
    (
        "20 000-element default sort",
        "const a = Array.from({ length: 20000 }, (_, i) => (i * 7919) % 20000);\na.slice().sort().length + a.slice().sort().length",
    ),
    (
        "JSON of records",
        "const rows = Array.from({ length: 500 }, (_, i) => ({ id: i, name: 'order ' + i, lines: [{ sku: 'a', qty: i % 5 }] }));\nlet s = 0;\nfor (let k = 0; k < 10; k++) s += JSON.stringify(rows).length + JSON.stringify(rows, null, 2).length;\ns",
    ),
    (
        "strings",
        "let s = '';\nfor (let i = 0; i < 20000; i++) s += String(i % 10);\nlet n = 0;\nfor (let k = 0; k < 50; k++) n += s.split('5').join('x').length + s.replace(/1/g, 'one').length;\nn",
    ),
];

const WARMUP: usize = 3;
const BLOCKS: usize = 8;
const PER_BLOCK: usize = 5;

async fn time(sb: &Sandbox, code: &str, samples: &mut Vec<Duration>) -> String {
    let started = Instant::now();
    let run = sb.eval(code, Value::Null, Arc::new(NoTools)).await;
    samples.push(started.elapsed());
    assert!(!run.is_error, "{}", run.text);
    run.text
}

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let limits = Limits::default();
    let guarded = Sandbox::new(limits.clone()).await.expect("sandbox");
    let baseline = Sandbox::new_unguarded(limits).await.expect("sandbox");
    let mut ratios = Vec::new();
    for (name, code) in SCRIPTS {
        let (mut g, mut b) = (Vec::new(), Vec::new());
        for _ in 0..WARMUP {
            time(&guarded, code, &mut Vec::new()).await;
            time(&baseline, code, &mut Vec::new()).await;
        }
        for _ in 0..BLOCKS {
            for _ in 0..PER_BLOCK {
                let a = time(&guarded, code, &mut g).await;
                let c = time(&baseline, code, &mut b).await;
                assert_eq!(a, c, "{name}: the guarded run answered differently");
            }
        }
        let (gm, bm) = (median(&mut g), median(&mut b));
        let ratio = gm.as_secs_f64() / bm.as_secs_f64();
        ratios.push(ratio);
        println!("{name:<40} guarded p50 {gm:>10.3?}  baseline p50 {bm:>10.3?}  ratio {ratio:.2}");
    }
    // Building a sandbox (each script hook gets a fresh one) now also installs the guards.
    let (mut g, mut b) = (Vec::new(), Vec::new());
    for round in 0..(WARMUP + BLOCKS * PER_BLOCK * 4) {
        for (guarded, samples) in [(true, &mut g), (false, &mut b)] {
            let started = Instant::now();
            let sb = if guarded {
                Sandbox::new(Limits::default()).await
            } else {
                Sandbox::new_unguarded(Limits::default()).await
            }
            .expect("sandbox");
            let run = sb.eval("1 + 1", Value::Null, Arc::new(NoTools)).await;
            drop(sb);
            assert!(!run.is_error);
            if round >= WARMUP {
                samples.push(started.elapsed());
            }
        }
    }
    let (gm, bm) = (median(&mut g), median(&mut b));
    println!(
        "{:<40} guarded p50 {gm:>10.3?}  baseline p50 {bm:>10.3?}  ratio {:.2}",
        "fresh sandbox + one eval",
        gm.as_secs_f64() / bm.as_secs_f64()
    );
    let geo = ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64;
    println!("geometric mean ratio guarded / baseline: {:.2}", geo.exp());
}
