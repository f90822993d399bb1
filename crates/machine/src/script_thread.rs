//! Script runs (script hooks, `archmax_eval`, `archmax_run`) on a thread of their own.
//!
//! A script may spin, allocate or sort for as long as its `timeoutMs` allows. A turn driven
//! from JS is polled on Node's main thread (`archmax-napi`'s pump), so running QuickJS inside
//! the turn's future would freeze the host's event loop, and every other session of the
//! process, for that long. [`run`] moves the QuickJS work to a blocking thread and keeps
//! everything else where it was: each `tools.*` call the script makes comes back over a
//! channel and is served by the real bridge *on the turn's task*, so governance, events
//! (in order) and host tools (JS callbacks of a JS-driven turn) behave exactly as before.
//! The calls of one script are served concurrently (`Promise.all` in a script overlaps its
//! host tools), their answers going back to the script as each completes.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use archmax_sandbox::ToolBridge;
use futures_util::stream::{FuturesUnordered, StreamExt};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

/// What a script's call answers once the turn that served it has gone.
const ENDED: &str = "the turn that ran this script has ended";

/// One `tools.*` call on its way from the script's thread to the turn's task.
struct Request {
    name: String,
    args: Value,
    reply: oneshot::Sender<Result<String, String>>,
}

/// The bridge the script sees: it lists the real bridge's tools and forwards every call.
struct Relay {
    tools: Vec<String>,
    tx: mpsc::UnboundedSender<Request>,
}

impl ToolBridge for Relay {
    fn tools(&self) -> Vec<String> {
        self.tools.clone()
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        args: Value,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let request = Request {
                name: name.to_owned(),
                args,
                reply,
            };
            self.tx.send(request).map_err(|_| ENDED.to_owned())?;
            answer.await.map_err(|_| ENDED.to_owned())?
        })
    }
}

/// How long past its own time limit a script is waited for. QuickJS consults its interrupt
/// handler only every 10 000 polls, so a loop of heavy builtins that neither allocates nor
/// calls back (`===` on two 16 MB strings) can outrun the limit by far; past this grace the
/// run is abandoned: its caller gets [`overrun`]'s error and goes on, and the thread ends
/// when QuickJS next looks at its interrupt handler.
pub(crate) const GRACE: Duration = Duration::from_secs(1);

/// The error of a script abandoned after `limit` + [`GRACE`].
pub(crate) fn overrun(limit: Duration) -> String {
    format!(
        "the script did not stop at its time limit of {} ms and was abandoned {} ms later",
        limit.as_millis(),
        GRACE.as_millis()
    )
}

/// Runs `job` (given the bridge it must use) on a blocking thread and serves its tool calls
/// with `bridge` here, until the job ends or `limit` (the script's own time limit) plus
/// [`GRACE`] has passed; its output.
///
/// Without a tokio runtime to lend a thread, the job runs here, on the caller's task. If the
/// caller stops waiting (the turn is cancelled), the script's later calls fail and it ends
/// at its own time limit.
pub(crate) async fn run<T, F, Fut>(
    bridge: Arc<dyn ToolBridge>,
    limit: Duration,
    job: F,
) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce(Arc<dyn ToolBridge>) -> Fut + Send + 'static,
    Fut: Future<Output = T>,
{
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return Ok(job(bridge).await);
    };
    let (tx, mut requests) = mpsc::unbounded_channel();
    let relay: Arc<dyn ToolBridge> = Arc::new(Relay {
        tools: bridge.tools(),
        tx,
    });
    let runtime = handle.clone();
    let mut done = handle.spawn_blocking(move || {
        crate::blocking::background_thread();
        runtime.block_on(job(relay))
    });
    let mut calls = FuturesUnordered::new();
    let abandon = tokio::time::sleep(limit.saturating_add(GRACE));
    tokio::pin!(abandon);
    loop {
        tokio::select! {
            out = &mut done => {
                return out.map_err(|e| format!("the script's thread failed: {e}"));
            }
            () = &mut abandon => return Err(overrun(limit)),
            Some(request) = requests.recv() => {
                let bridge = Arc::clone(&bridge);
                calls.push(async move {
                    let answer = bridge.call(&request.name, request.args).await;
                    // The script may have ended (timed out) meanwhile; nobody to tell.
                    let _ = request.reply.send(answer);
                });
            }
            Some(()) = calls.next(), if !calls.is_empty() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// Answers `name:args` on the thread that polls it, and records that thread.
    struct Recording {
        served_on: std::sync::Mutex<Vec<std::thread::ThreadId>>,
        in_flight: AtomicUsize,
        most_at_once: AtomicUsize,
    }

    impl ToolBridge for Recording {
        fn tools(&self) -> Vec<String> {
            vec!["read_file".into()]
        }
        fn call<'a>(
            &'a self,
            name: &'a str,
            args: Value,
        ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
            Box::pin(async move {
                if let Ok(mut t) = self.served_on.lock() {
                    t.push(std::thread::current().id());
                }
                let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                self.most_at_once.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                self.in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok(format!("{name}:{args}"))
            })
        }
    }

    /// A script's concurrent calls are served together on the caller's thread while the
    /// QuickJS run itself is on another; a script that spins does not hold the caller.
    #[tokio::test(flavor = "current_thread")]
    async fn calls_come_back_to_the_callers_thread_and_overlap() {
        let bridge = Arc::new(Recording {
            served_on: std::sync::Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            most_at_once: AtomicUsize::new(0),
        });
        let here = std::thread::current().id();
        let sandbox = archmax_sandbox::Sandbox::new(archmax_sandbox::Limits::default())
            .await
            .expect("sandbox");
        let sandbox = Arc::new(sandbox);
        let job_sandbox = Arc::clone(&sandbox);
        let ticks = Arc::new(AtomicUsize::new(0));
        let ticking = Arc::clone(&ticks);
        // The caller's thread keeps running other work while the script spins.
        let ticker = tokio::spawn(async move {
            loop {
                ticking.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        let code = "const t = Date.now(); while (Date.now() - t < 300) {}\n\
                    const [a, b] = await Promise.all([tools.readFile({ n: 1 }), tools.readFile({ n: 2 })]); a + '|' + b";
        let ran_on = run(
            bridge.clone(),
            Duration::from_secs(15),
            move |b| async move {
                let thread = std::thread::current().id();
                (job_sandbox.eval(code, Value::Null, b).await, thread)
            },
        )
        .await
        .expect("ran");
        ticker.abort();
        let (out, script_thread) = ran_on;
        assert!(!out.is_error, "{}", out.text);
        assert_eq!(out.text, r#"→ read_file:{"n":1}|read_file:{"n":2}"#);
        assert_ne!(script_thread, here, "QuickJS ran on the caller's thread");
        let served = bridge.served_on.lock().expect("lock").clone();
        assert_eq!(
            served,
            vec![here, here],
            "calls are served on the caller's thread"
        );
        assert_eq!(
            bridge.most_at_once.load(Ordering::SeqCst),
            2,
            "the two calls overlapped"
        );
        // ~300 ms of spinning; a caller held by it would have ticked about once.
        assert!(
            ticks.load(Ordering::SeqCst) >= 10,
            "the caller's thread was held: {} ticks",
            ticks.load(Ordering::SeqCst)
        );
    }

    /// A call made after the caller stopped serving fails with a clear text; nothing hangs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_after_the_caller_left_fails() {
        let (tx, rx) = mpsc::unbounded_channel::<Request>();
        drop(rx);
        let relay = Relay {
            tools: Vec::new(),
            tx,
        };
        let answer = relay.call("read_file", Value::Null).await;
        assert_eq!(answer, Err(ENDED.to_owned()));
    }

    /// A run that does not stop at its limit (as a loop QuickJS does not interrupt in time,
    /// stood in for here by a thread that just sleeps) is abandoned at its limit plus the
    /// grace: the caller gets the overrun error instead of waiting for the run.
    #[test]
    fn a_run_outliving_its_limit_is_abandoned() {
        // A runtime of its own, shut down without waiting for the abandoned thread.
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let limit = Duration::from_millis(200);
        let started = std::time::Instant::now();
        let bridge: Arc<dyn ToolBridge> = Arc::new(Relay {
            tools: Vec::new(),
            tx: mpsc::unbounded_channel().0,
        });
        let out = rt.block_on(run(bridge, limit, |_| async {
            std::thread::sleep(Duration::from_secs(10));
        }));
        let took = started.elapsed();
        rt.shutdown_background();
        assert_eq!(out, Err(overrun(limit)));
        assert!(took >= limit + GRACE, "abandoned early, after {took:?}");
        assert!(
            took < limit + GRACE + Duration::from_secs(2),
            "the caller waited {took:?}"
        );
    }
}
