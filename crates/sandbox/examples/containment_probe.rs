//! Containment probe: runs every script of `tests/common/native_loops.rs` in its own process
//! under a short time limit and prints how each one ended and how long it took.
//!
//! ```sh
//! cargo run -p archmax-sandbox --example containment_probe            # every case, 300 ms limit
//! cargo run -p archmax-sandbox --example containment_probe -- 1000 sparse.sort
//! ```
//!
//! A case that outlives the limit by more than the margin (or never ends: it is killed) counts
//! as an escape; the exit code is 1 when any case escaped.

#[path = "../tests/common/native_loops.rs"]
mod native_loops;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use archmax_sandbox::{Limits, Sandbox, ToolBridge};
use native_loops::NATIVE_LOOPS;

/// Time past the limit after which a case counts as escaped.
const MARGIN: Duration = Duration::from_millis(1500);
/// A child still running this long past the limit is killed (`PROBE_KILL_SECS` overrides).
const KILL_AFTER: Duration = Duration::from_secs(20);

struct NoTools;

impl ToolBridge for NoTools {
    fn tools(&self) -> Vec<String> {
        Vec::new()
    }
    fn call<'a>(
        &'a self,
        name: &'a str,
        _args: serde_json::Value,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, String>> + Send + 'a>>
    {
        Box::pin(async move { Err(format!("no tool {name}")) })
    }
}

fn one(ms: u64, name: &str) -> i32 {
    let Some((_, code)) = NATIVE_LOOPS.iter().find(|(n, _)| *n == name) else {
        eprintln!("no case {name}");
        return 2;
    };
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return 2;
    };
    rt.block_on(async {
        let limits = Limits {
            timeout: Duration::from_millis(ms),
            ..Limits::default()
        };
        let Ok(sb) = Sandbox::new(limits).await else {
            return 2;
        };
        let run = sb
            .eval(code, serde_json::Value::Null, std::sync::Arc::new(NoTools))
            .await;
        let first = run
            .text
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(110)
            .collect::<String>();
        println!("{}\t{first}", if run.is_error { "error" } else { "value" });
        0
    })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--one") {
        let ms = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(300);
        std::process::exit(one(ms, args.get(2).map_or("", String::as_str)));
    }
    let ms: u64 = args.first().and_then(|s| s.parse().ok()).unwrap_or(300);
    let only: Vec<&str> = args.iter().skip(1).map(String::as_str).collect();
    let Ok(exe) = std::env::current_exe() else {
        std::process::exit(2)
    };
    let limit = Duration::from_millis(ms);
    let kill_after = std::env::var("PROBE_KILL_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .map_or(KILL_AFTER, Duration::from_secs);
    let (mut runs, mut escapes) = (0, 0);
    for (name, _) in NATIVE_LOOPS
        .iter()
        .filter(|(n, _)| only.is_empty() || only.contains(n))
    {
        let started = Instant::now();
        let Ok(mut child) = Command::new(&exe)
            .args(["--one", &ms.to_string(), name])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
        else {
            std::process::exit(2)
        };
        let mut killed = false;
        loop {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            if started.elapsed() > limit + kill_after {
                let _ = child.kill();
                let _ = child.wait();
                killed = true;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let elapsed = started.elapsed();
        let out = child
            .wait_with_output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default();
        let escaped = killed || elapsed > limit + MARGIN;
        runs += 1;
        if escaped {
            escapes += 1;
        }
        let verdict = if killed {
            "HUNG"
        } else if escaped {
            "ESCAPED"
        } else {
            "held"
        };
        println!("{verdict:8}{:>9.2}s  {name:28}{out}", elapsed.as_secs_f64());
    }
    println!(
        "containment probe: {runs} cases, {escapes} escaped (limit {ms} ms, margin {} ms)",
        MARGIN.as_millis()
    );
    std::process::exit(i32::from(escapes > 0));
}
