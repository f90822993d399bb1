//! `NativeTurn`: one harness call (`send`, `decide`, `reply`, `deliver`) driven from the JS
//! main thread.
//!
//! A JS model function answers on the JS main thread. Driving the turn on a tokio worker
//! costs two thread hand-offs per model call (the request to the main thread, the answer
//! back), and waking Node's sleeping main thread alone costs tens of microseconds. So a turn
//! with a JS model is polled *on the main thread* whenever JS gave it something, by
//! `agent.js`'s drive loop:
//!
//! - `poll()` polls the future (inside napi's tokio runtime context, so timers and I/O work)
//!   until it waits; it returns the events it emitted, the JS calls it wants answered (model
//!   requests, host tool calls) and, at the end, the outcome;
//! - the loop hands each call to its JS function and gives the answer back with
//!   `answer(id, envelope)`, then polls again: no thread is woken at all.
//!
//! Anything else the turn waits for (a commit, a file tool or a hook on the blocking pool, a
//! timer, a cancellation) wakes it from another thread, and there it is *not* handed to the
//! main thread: a tokio worker polls it instead, until it waits again. Only when that leaves
//! something for JS (a call, events, the outcome) is the drive loop told, through its `wake`
//! function (`onWake`, a threadsafe call). So the turn's own work after its disk work (the
//! tool results, the next commit, the next request) costs the host's event loop nothing.
//!
//! One poller at a time: [`Pump::state`] is `RUNNING` while someone polls and `NOTIFIED`
//! when a wake-up asked for a poll; a wake-up that finds the turn running leaves `NOTIFIED`
//! and the poller polls again before it lets go (no wake-up is lost, no poll runs twice).
//! The main thread never waits for the future's lock: when a worker is polling, `poll()`
//! hands over what is queued and returns; the worker tells the loop what it leaves.
//!
//! The JS-facing callbacks (`callback.rs`, `events.rs`) take this path when [`active`]
//! names a pump on the calling thread, i.e. while a poll runs (on either thread); a host
//! governance rule, synchronous, is called directly through [`env`] on the main thread and
//! through a threadsafe call from a worker. A turn without a JS model, or whose session store
//! is a JS object, runs on a tokio worker instead (that store is called synchronously, and
//! waiting for JS on the main thread would deadlock); its `poll()` only reports the end.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::FutureExt;
use napi::Status;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::Value;
use tokio::runtime::Handle;
use tokio::sync::oneshot;

/// The drive loop's `() => void` that asks for another poll. Strong: while a turn waits on
/// something other than JS (the blocking pool, a timer), it is what keeps Node running.
type WakeJsFn = ThreadsafeFunction<(), (), (), Status, false>;

/// A turn's whole work; its output is the `{ ok, value | code, message }` answer as JSON
/// text (parsed once by `JSON.parse` on the JS side, faster than napi building the outcome
/// object property by property).
pub(crate) type TurnFuture = Pin<Box<dyn Future<Output = String> + Send>>;

thread_local! {
    /// The pump polling on this thread, while `poll()` runs.
    static ACTIVE: RefCell<Option<Arc<Pump>>> = const { RefCell::new(None) };
    /// The napi environment of the `poll()` running on this thread: a synchronous JS
    /// callback (a host governance rule) is called directly through it.
    static ENV: Cell<Option<napi::sys::napi_env>> = const { Cell::new(None) };
}

/// The JS environment, while a turn is polled on this (the JS main) thread.
pub(crate) fn env() -> Option<napi::Env> {
    ENV.with(Cell::get).map(napi::Env::from_raw)
}

/// Runs `f` with `env` as this thread's [`env`], so a host rule `f` asks is called directly
/// (a synchronous call on the JS thread, as `Governance.decide`'s).
pub(crate) fn with_env<T>(env: &napi::Env, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<napi::sys::napi_env>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ENV.with(|e| e.set(self.0));
        }
    }
    let _restore = Restore(ENV.with(|e| e.replace(Some(env.raw()))));
    f()
}

/// The pump polling on this thread, if any.
pub(crate) fn active() -> Option<Arc<Pump>> {
    ACTIVE.with(|a| a.borrow().clone())
}

/// Makes `pump` the [`ACTIVE`] one (and `env` the [`ENV`]) for its lifetime, while its turn
/// is polled or answered on this thread.
/// Restores what it replaced when dropped, so a poll nested in another (a host rule that
/// starts a turn) leaves the outer one as it was.
struct Driving {
    previous: Option<Arc<Pump>>,
    env: Option<napi::sys::napi_env>,
}

impl Driving {
    fn enter(pump: Arc<Pump>, env: Option<&napi::Env>) -> Driving {
        let env = ENV.with(|e| e.replace(env.map(napi::Env::raw).or(e.get())));
        let previous = ACTIVE.with(|a| a.borrow_mut().replace(pump));
        Driving { previous, env }
    }
}

impl Drop for Driving {
    fn drop(&mut self) {
        let previous = self.previous.take();
        ACTIVE.with(|a| *a.borrow_mut() = previous);
        ENV.with(|e| e.set(self.env));
    }
}

/// `fut`, answering a panic as an `Error` instead of unwinding through its poller. A panic
/// in a poll would otherwise leave the turn unanswered (and, on a worker, marked as being
/// polled), so its `createAgent` call would never settle. The future is dropped with its
/// panic, releasing its session; what the session last committed stays as it was.
fn guarded(fut: TurnFuture) -> TurnFuture {
    Box::pin(
        AssertUnwindSafe(debug_fault(fut))
            .catch_unwind()
            .map(|result| {
                result.unwrap_or_else(|panic| {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| (*s).to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "no message".to_string());
                    crate::result::plain_error(
                        "Error",
                        format!("internal error: the harness panicked during this call ({what}); the session keeps its last committed step"),
                    )
                    .to_string()
                })
            }),
    )
}

/// Debug builds only: `ARCHMAX_DEBUG_PANIC_TURN` makes the next turns panic, for the tests of
/// [`guarded`]: `first-poll` in their first poll (on the JS thread for a JS-driven turn),
/// `after-timer` once a timer woke them (on a tokio worker).
#[cfg(debug_assertions)]
fn debug_fault(fut: TurnFuture) -> TurnFuture {
    #[allow(clippy::panic, reason = "the fault the tests of `guarded` inject")]
    match std::env::var("ARCHMAX_DEBUG_PANIC_TURN").as_deref() {
        Ok("first-poll") => Box::pin(async { panic!("injected: first-poll") }),
        Ok("after-timer") => Box::pin(async {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            panic!("injected: after-timer")
        }),
        _ => fut,
    }
}

#[cfg(not(debug_assertions))]
fn debug_fault(fut: TurnFuture) -> TurnFuture {
    fut
}

/// A call the turn wants a JS function to answer.
struct Call {
    id: u32,
    kind: &'static str,
    json: String,
}

#[derive(Default)]
struct Outbox {
    next: u32,
    calls: Vec<Call>,
    events: Vec<String>,
    waiting: HashMap<u32, oneshot::Sender<String>>,
}

/// [`Pump::state`]: somebody is polling the turn.
const RUNNING: u8 = 1;
/// [`Pump::state`]: a wake-up asked for a poll (the poller's next, or a new one).
const NOTIFIED: u8 = 2;

/// What the turn shares with its wakers, its pollers and its JS calls.
pub(crate) struct Pump {
    out: Mutex<Outbox>,
    /// `RUNNING` and `NOTIFIED`: who polls next (see the module's doc).
    state: AtomicU8,
    /// The future, while it has not ended; locked only by the `RUNNING` poller.
    work: Mutex<Option<TurnFuture>>,
    /// The turn's answer once it has ended, until `poll()` hands it over.
    answer: Mutex<Option<String>>,
    /// The drive loop's wake function, from `onWake` until the turn ends.
    wake_fn: Mutex<Option<WakeJsFn>>,
    /// Where a wake-up from another thread polls the turn; without one (no runtime), the
    /// drive loop does.
    workers: Option<Handle>,
}

impl Pump {
    fn new(work: Option<TurnFuture>) -> Pump {
        let workers = match work {
            Some(_) => napi::bindgen_prelude::within_runtime_if_available(Handle::try_current).ok(),
            None => None,
        };
        Pump {
            workers,
            out: Mutex::default(),
            // The drive loop's first poll starts the turn.
            state: AtomicU8::new(NOTIFIED),
            work: Mutex::new(work),
            answer: Mutex::new(None),
            wake_fn: Mutex::new(None),
        }
    }

    fn outbox(&self) -> std::sync::MutexGuard<'_, Outbox> {
        self.out.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn answer_slot(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.answer.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues a call for the drive loop; its answer (the `{ ok, … }` envelope text).
    pub(crate) async fn call(&self, kind: &'static str, json: String) -> Result<String, String> {
        let rx = {
            let mut out = self.outbox();
            out.next = out.next.wrapping_add(1);
            let id = out.next;
            let (tx, rx) = oneshot::channel();
            out.waiting.insert(id, tx);
            out.calls.push(Call { id, kind, json });
            rx
        };
        rx.await
            .map_err(|_| "the turn ended before the call was answered".to_string())
    }

    /// Queues an event (its envelope's JSON) for the drive loop, in order.
    pub(crate) fn event(&self, json: String) {
        self.outbox().events.push(json);
    }

    /// Asks the drive loop for another poll, from any thread: one call queued to the JS
    /// thread, no task spawned. Before `onWake` (the loop polls first anyway) and after the
    /// turn ended, nobody needs telling.
    fn signal(&self) {
        let wake = self.wake_fn.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(f) = wake.as_ref() {
            let _ = f.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }

    /// The turn ended: releases the wake function, so it no longer holds Node.
    fn release(&self) {
        let wake = self
            .wake_fn
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(wake);
    }

    /// Whether the drive loop has something to take: a call, an event, the answer.
    fn has_news(&self) -> bool {
        let out = self.outbox();
        !out.calls.is_empty() || !out.events.is_empty() || self.answer_slot().is_some()
    }

    /// Polls the turn while it is `NOTIFIED`, if nobody else polls it; the caller has made
    /// this thread's [`Driving`] this pump. On the JS thread (`for_js`) it stops as soon as
    /// a poll leaves calls or events, to hand them over: true when it should then be polled
    /// again at once (a wake-up came meanwhile, which nobody else will act on).
    fn run(self: &Arc<Self>, for_js: bool) -> bool {
        let mut current = self.state.load(Ordering::Acquire);
        loop {
            if current & RUNNING != 0 || current & NOTIFIED == 0 {
                // Someone else polls it (and will see any `NOTIFIED`), or nothing asked.
                return false;
            }
            match self.state.compare_exchange_weak(
                current,
                RUNNING,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => break,
                Err(now) => current = now,
            }
        }
        let mut work = self.work.lock().unwrap_or_else(PoisonError::into_inner);
        let waker = Waker::from(Arc::clone(self));
        let mut cx = Context::from_waker(&waker);
        loop {
            let Some(fut) = work.as_mut() else {
                self.state.store(0, Ordering::Release);
                return false;
            };
            if let Poll::Ready(answer) = fut.as_mut().poll(&mut cx) {
                // Dropped here, by its poller; later wake-ups find nothing to poll.
                *work = None;
                *self.answer_slot() = Some(answer);
                self.state.store(0, Ordering::Release);
                return false;
            }
            if for_js {
                let out = self.outbox();
                if !out.calls.is_empty() || !out.events.is_empty() {
                    drop(out);
                    let before = self.state.fetch_and(!RUNNING, Ordering::AcqRel);
                    return before & NOTIFIED != 0;
                }
            }
            match self
                .state
                .compare_exchange(RUNNING, 0, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return false,
                // Woken while it was polled: poll again.
                Err(_) => self.state.store(RUNNING, Ordering::Release),
            }
        }
    }

    /// A wake-up from another thread: a tokio worker polls the turn until it waits again,
    /// and tells the drive loop when that leaves it something.
    fn poll_elsewhere(self: Arc<Self>) {
        let Some(workers) = self.workers.clone() else {
            self.signal();
            return;
        };
        // A runtime that has shut down drops the task, and the process is going.
        drop(workers.spawn(async move {
            archmax_machine::background_thread();
            {
                let _driving = Driving::enter(Arc::clone(&self), None);
                self.run(false);
            }
            if self.has_news() {
                self.signal();
            }
        }));
    }
}

impl Wake for Pump {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let before = self.state.fetch_or(NOTIFIED, Ordering::AcqRel);
        if before != 0 {
            // Its poller polls again, or a poll is already asked for.
            return;
        }
        // An answer given on the JS thread (`answer()`) needs nobody: its drive loop polls
        // next. Any other wake-up, including one raised here by another session's turn (a
        // permit it released, a lock it dropped), is polled on a worker.
        let answering_this =
            ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|p| Arc::ptr_eq(p, self)));
        if !answering_this {
            Arc::clone(self).poll_elsewhere();
        }
    }
}

/// One harness call in flight. `agent.js` drives it; use `createAgent`, not this class.
#[napi]
pub struct NativeTurn {
    pump: Arc<Pump>,
}

/// What one `poll()` found.
#[napi(object)]
pub struct NativePoll {
    /// The turn's answer once it has ended: `{ ok, value | code, message }` as JSON text.
    pub done: Option<String>,
    /// The events emitted since the last poll (envelope JSON), in order.
    pub events: Vec<String>,
    /// The calls to answer: `kind` is `model` (a request delta) or `tool`.
    pub calls: Vec<NativeCall>,
    /// True when the turn woke itself during this poll (a wake-up on the polling thread
    /// sends no message): poll again at once, without waiting for a `wake`.
    pub again: bool,
}

/// A call the turn waits on.
#[napi(object)]
pub struct NativeCall {
    /// What `answer` takes back.
    pub id: u32,
    /// `model` or `tool`.
    pub kind: String,
    /// The request (JSON text), as the callback of the worker path receives it.
    pub json: String,
}

impl NativeTurn {
    /// A turn polled on the JS main thread (and on a worker after a wake-up from elsewhere).
    pub(crate) fn inline(fut: TurnFuture) -> NativeTurn {
        NativeTurn {
            pump: Arc::new(Pump::new(Some(guarded(fut)))),
        }
    }

    /// A turn run on a tokio worker; `poll()` reports its end.
    pub(crate) fn spawned(fut: TurnFuture) -> NativeTurn {
        let turn = NativeTurn {
            pump: Arc::new(Pump::new(None)),
        };
        let pump = Arc::clone(&turn.pump);
        let fut = guarded(fut);
        napi::bindgen_prelude::spawn(async move {
            archmax_machine::background_thread();
            let answer = fut.await;
            *pump.answer_slot() = Some(answer);
            pump.signal();
        });
        turn
    }

    /// A turn that has already ended with `answer`.
    pub(crate) fn ended(answer: Value) -> NativeTurn {
        let pump = Pump::new(None);
        *pump.answer_slot() = Some(answer.to_string());
        NativeTurn {
            pump: Arc::new(pump),
        }
    }
}

impl Drop for NativeTurn {
    /// A turn dropped before its end (its agent's process is going): its future goes now,
    /// unless a worker is polling it (that worker then drops it), so the wakers it left
    /// elsewhere no longer hold it.
    fn drop(&mut self) {
        if let Ok(mut work) = self.pump.work.try_lock() {
            work.take();
        }
        self.pump.release();
    }
}

#[napi]
impl NativeTurn {
    /// Runs the turn until it waits; what it emitted and wants, or its answer. When a
    /// worker is polling it, only what is queued so far.
    #[napi(catch_unwind)]
    pub fn poll(&self, env: napi::Env) -> NativePoll {
        let again = {
            let _driving = Driving::enter(Arc::clone(&self.pump), Some(&env));
            napi::bindgen_prelude::within_runtime_if_available(|| self.pump.run(true))
        };
        let done = self.pump.answer_slot().take();
        if done.is_some() {
            // The turn has ended: let Node go.
            self.pump.release();
        }
        let mut out = self.pump.outbox();
        NativePoll {
            again,
            done,
            events: std::mem::take(&mut out.events),
            calls: out
                .calls
                .drain(..)
                .map(|c| NativeCall {
                    id: c.id,
                    kind: c.kind.to_string(),
                    json: c.json,
                })
                .collect(),
        }
    }

    /// Gives call `id` its answer (the `{ ok, value | error }` envelope text); false when
    /// the turn no longer waits for it.
    #[napi(catch_unwind)]
    pub fn answer(&self, id: u32, envelope: String) -> bool {
        let _driving = Driving::enter(Arc::clone(&self.pump), None);
        let tx = self.pump.outbox().waiting.remove(&id);
        tx.is_some_and(|tx| tx.send(envelope).is_ok())
    }

    /// Registers the drive loop's `wake`: called (on the JS thread) whenever the turn should
    /// be polled again after waiting on something other than its JS calls (a timer, a
    /// cancellation, the blocking pool, a worker). Held until the turn ends.
    #[napi(ts_args_type = "wake: () => void")]
    pub fn on_wake(&self, wake: WakeJsFn) {
        *self
            .pump
            .wake_fn
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(wake);
    }
}
