//! `NativeTurn`: one harness call (`send`, `decide`, `reply`, `deliver`) driven from the JS
//! main thread.
//!
//! A JS model function answers on the JS main thread. Driving the turn on a tokio worker
//! costs two thread hand-offs per model call (the request to the main thread, the answer
//! back), and waking Node's sleeping main thread alone costs tens of microseconds. So the
//! turn's future is polled *on the main thread* instead, by `agent.js`'s drive loop:
//!
//! - `poll()` polls the future (inside napi's tokio runtime context, so timers and I/O work)
//!   until it waits; it returns the events it emitted, the JS calls it wants answered (model
//!   requests, host tool calls) and, at the end, the outcome;
//! - the loop hands each call to its JS function and gives the answer back with
//!   `answer(id, envelope)`, then polls again: no thread is woken at all;
//! - anything else the turn waits for (a timeout, a cancellation, the blocking pool) wakes it
//!   from another thread through the loop's `wake` function (`onWake`, a threadsafe call:
//!   one queued JS call per wake-up, no task or promise made).
//!
//! The JS-facing callbacks (`agent.rs`, `hook_kinds.rs`) take this path when [`active`]
//! names a pump on the calling thread, i.e. while `poll()` runs; a host governance rule,
//! synchronous, is called directly through [`env`]. A turn without a JS model, or whose
//! session store is a JS object, runs on a tokio worker instead (that store is called
//! synchronously, and waiting for JS on the main thread would deadlock); its `poll()` only
//! reports the end.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use napi::Status;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::Value;
use tokio::sync::oneshot;

/// The drive loop's `() => void` that asks for another poll. Strong: while a turn waits on
/// something other than JS (the blocking pool, a timer), it is what keeps Node running.
type WakeJsFn = ThreadsafeFunction<(), (), (), Status, false>;

/// A turn's whole work; its output is the `{ ok, value | code, message }` answer.
pub(crate) type TurnFuture = Pin<Box<dyn Future<Output = Value> + Send>>;

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

/// What the turn shares with its wakers and its JS calls.
pub(crate) struct Pump {
    out: Mutex<Outbox>,
    woken: AtomicBool,
    /// The drive loop's wake function, from `onWake` until the turn ends.
    wake_fn: Mutex<Option<WakeJsFn>>,
}

impl Pump {
    fn outbox(&self) -> std::sync::MutexGuard<'_, Outbox> {
        self.out.lock().unwrap_or_else(PoisonError::into_inner)
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
}

impl Wake for Pump {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        // Only a wake-up of the turn this thread is polling or answering needs no message
        // (its drive loop polls again anyway). Any other, including one raised here by
        // another session's turn (a permit it released, a lock it dropped), is signalled.
        let driving_this =
            ACTIVE.with(|a| a.borrow().as_ref().is_some_and(|p| Arc::ptr_eq(p, self)));
        if !driving_this {
            self.signal();
        }
    }
}

enum Work {
    /// Polled by `poll()` on the JS main thread.
    Inline(TurnFuture),
    /// Running on a tokio worker; its answer lands here.
    Spawned(Arc<Mutex<Option<Value>>>),
    Done,
}

/// One harness call in flight. `agent.js` drives it; use `createAgent`, not this class.
#[napi]
pub struct NativeTurn {
    pump: Arc<Pump>,
    work: Mutex<Work>,
}

/// What one `poll()` found.
#[napi(object)]
pub struct NativePoll {
    /// The turn's answer once it has ended: `{ ok, value | code, message }`.
    #[napi(ts_type = "NativeResult | undefined")]
    pub done: Option<Value>,
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
    fn new(work: Work) -> NativeTurn {
        NativeTurn {
            pump: Arc::new(Pump {
                out: Mutex::default(),
                woken: AtomicBool::new(false),
                wake_fn: Mutex::new(None),
            }),
            work: Mutex::new(work),
        }
    }

    /// A turn polled on the JS main thread.
    pub(crate) fn inline(fut: TurnFuture) -> NativeTurn {
        NativeTurn::new(Work::Inline(fut))
    }

    /// A turn run on a tokio worker; `poll()` reports its end.
    pub(crate) fn spawned(fut: TurnFuture) -> NativeTurn {
        let slot = Arc::new(Mutex::new(None));
        let turn = NativeTurn::new(Work::Spawned(Arc::clone(&slot)));
        let pump = Arc::clone(&turn.pump);
        napi::bindgen_prelude::spawn(async move {
            let answer = fut.await;
            *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(answer);
            pump.signal();
        });
        turn
    }

    /// A turn that has already ended with `answer`.
    pub(crate) fn ended(answer: Value) -> NativeTurn {
        NativeTurn::new(Work::Spawned(Arc::new(Mutex::new(Some(answer)))))
    }
}

#[napi]
impl NativeTurn {
    /// Runs the turn until it waits; what it emitted and wants, or its answer.
    #[napi(catch_unwind)]
    pub fn poll(&self, env: napi::Env) -> NativePoll {
        let mut work = self.work.lock().unwrap_or_else(PoisonError::into_inner);
        let done = match &mut *work {
            Work::Inline(fut) => {
                let _driving = Driving::enter(Arc::clone(&self.pump), Some(&env));
                let waker = Waker::from(Arc::clone(&self.pump));
                let mut cx = Context::from_waker(&waker);
                napi::bindgen_prelude::within_runtime_if_available(|| {
                    loop {
                        self.pump.woken.store(false, Ordering::Release);
                        if let Poll::Ready(answer) = fut.as_mut().poll(&mut cx) {
                            break Some(answer);
                        }
                        let out = self.pump.outbox();
                        if !out.calls.is_empty() || !out.events.is_empty() {
                            break None;
                        }
                        drop(out);
                        if !self.pump.woken.load(Ordering::Acquire) {
                            break None;
                        }
                    }
                })
            }
            Work::Spawned(slot) => slot.lock().unwrap_or_else(PoisonError::into_inner).take(),
            Work::Done => None,
        };
        if done.is_some() {
            // Drops the future here, on this thread, and lets Node go.
            *work = Work::Done;
            self.pump.release();
        }
        drop(work);
        let again = done.is_none() && self.pump.woken.load(Ordering::Acquire);
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
