//! A JS callback asked from Rust. It is asked through the drive loop of the turn polled on
//! the JS thread (`crate::pump`), or, from a tokio worker, as a weak threadsafe function
//! called with `call_async_catch`; either way it takes and returns JSON text, so a callback
//! that throws, rejects or answers garbage becomes an error of the call it served (a failed
//! model call, a failed tool call), never a crash. The JS wrapper never throws itself: it
//! answers `{ ok, value | error }` envelopes.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, RwLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use napi::bindgen_prelude::{FnArgs, Status};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::Value;
use tokio::sync::oneshot;

/// A JS `(id: number, json: string) => void` called from a worker, weak so it never holds
/// Node open. It answers call `id` later, through [`answer_call`] (`slices.js`'s `sliced`
/// makes one from an async `(json) => envelope` function and never lets it throw).
pub(crate) type AsyncJsFn =
    ThreadsafeFunction<FnArgs<(u32, String)>, (), FnArgs<(u32, String)>, Status, false, true>;

/// What a call through an [`AsyncJsFn`] is answered with: the envelope's JSON text, or why
/// the JS function failed.
type Answer = std::result::Result<String, String>;

/// The calls made through an [`AsyncJsFn`] that JS has not answered yet, by id. Answering
/// by id, not by a Promise returned to napi, saves napi two functions (the Promise's `then`
/// and `catch` callbacks) and their finalizers per call, which the next major GC runs on
/// the JS thread: with a host store, a thousand sessions' calls made that GC's pause
/// several milliseconds longer.
static ANSWERS: LazyLock<Mutex<HashMap<u32, oneshot::Sender<Answer>>>> =
    LazyLock::new(Mutex::default);
static NEXT_CALL: AtomicU32 = AtomicU32::new(0);

/// A call's answer to come: forgotten when dropped, so a call whose caller stopped waiting
/// (a cancelled turn, a disposed agent) leaves nothing behind if JS never answers it.
struct Expected {
    id: u32,
    answer: oneshot::Receiver<Answer>,
}

impl Expected {
    fn new() -> Self {
        let id = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
        let (tx, answer) = oneshot::channel();
        ANSWERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        Expected { id, answer }
    }
}

impl Drop for Expected {
    fn drop(&mut self) {
        ANSWERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// Answers call `id` of a native callback (`(id, json) => void`, made by `slices.js`'s
/// `sliced`): its envelope, or (`error`) why the function failed. An unknown id (a call
/// whose caller stopped waiting, or one answered before) is ignored. Internal to `agent.js`.
#[napi(catch_unwind)]
pub fn answer_call(id: u32, envelope: Option<String>, error: Option<String>) {
    let waiting = ANSWERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&id);
    if let Some(tx) = waiting {
        let _ = tx.send(match error {
            Some(reason) => Err(reason),
            None => Ok(envelope.unwrap_or_default()),
        });
    }
}

/// A callback slot `dispose` empties.
pub(crate) type Slot<T> = Arc<RwLock<Option<Arc<T>>>>;

pub(crate) fn take<T>(slot: &Slot<T>) -> Option<Arc<T>> {
    slot.read().ok().and_then(|g| g.clone())
}

/// Calls a JS async callback with `input`; the `{ ok, value | error }` envelope it answered.
/// While a turn is polled on this thread (`crate::pump`), the call goes to its drive loop as
/// a call of `kind`; otherwise through `f`. With a [`Spin`], the answer of `f` is first
/// awaited by polling in a loop (see there).
pub(crate) async fn call_js_envelope(
    f: Arc<AsyncJsFn>,
    input: String,
    kind: &'static str,
    what: &str,
    spin: Option<&Spin>,
) -> std::result::Result<Value, String> {
    if let Some(pump) = crate::pump::active() {
        let text = pump
            .call(kind, input)
            .await
            .map_err(|e| format!("the {what} failed: {e}"))?;
        return serde_json::from_str(&text)
            .map_err(|e| format!("the {what} answered unreadable JSON: {e}"));
    }
    let started = Instant::now();
    let budget = spin.map_or(Duration::ZERO, Spin::budget);
    let mut expected = Expected::new();
    let status = f.call(
        FnArgs::from((expected.id, input)),
        ThreadsafeFunctionCallMode::NonBlocking,
    );
    if status != Status::Ok {
        return Err(format!("the {what} could not be called: {status}"));
    }
    let text = match poll_for(&mut expected.answer, budget, started) {
        Some(answer) => answer,
        None => (&mut expected.answer).await,
    }
    .map_err(|_| format!("the {what} failed: its call was dropped before it answered"))?
    .map_err(|reason| format!("the {what} failed: {reason}"))?;
    if let Some(spin) = spin {
        spin.record(started.elapsed());
    }
    serde_json::from_str(&text).map_err(|e| format!("the {what} answered unreadable JSON: {e}"))
}

/// Busy-polling before parking, for a callback that usually answers within microseconds
/// (a JS model function answering from memory, as in tests and benchmarks). A parked tokio
/// worker costs a futex wake-up, and on a virtual machine often a halted vCPU's, per answer;
/// polling for up to [`Spin::LIMIT`] takes an answer that is already there at once. It adapts:
/// after a call slower than the limit (a model behind the network) calls park at once, until
/// one answers within the limit again.
pub(crate) struct Spin {
    fast: AtomicBool,
}

impl Spin {
    /// The longest a call is polled before its task parks.
    const LIMIT: Duration = Duration::from_micros(250);

    pub(crate) fn new() -> Self {
        Spin {
            fast: AtomicBool::new(true),
        }
    }

    fn budget(&self) -> Duration {
        if self.fast.load(Ordering::Relaxed) {
            Self::LIMIT
        } else {
            Duration::ZERO
        }
    }

    fn record(&self, took: Duration) {
        self.fast.store(took <= Self::LIMIT, Ordering::Relaxed);
    }
}

/// Polls `f` in a loop until `started + budget`; its output if it finished by then.
fn poll_for<F: Future + Unpin>(f: &mut F, budget: Duration, started: Instant) -> Option<F::Output> {
    if budget.is_zero() {
        return None;
    }
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = Pin::new(&mut *f).poll(&mut cx) {
            return Some(v);
        }
        if started.elapsed() > budget {
            return None;
        }
        std::hint::spin_loop();
    }
}

/// The value of an envelope, or its error.
pub(crate) fn open_envelope(envelope: Value) -> std::result::Result<Value, String> {
    match envelope {
        Value::Object(mut m) if m.get("ok").and_then(Value::as_bool) == Some(true) => {
            Ok(m.remove("value").unwrap_or(Value::Null))
        }
        other => Err(other
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown error")
            .to_string()),
    }
}

/// Calls a JS async callback with `input` (a call of `kind` for a drive loop); the value it
/// answered, or its error.
pub(crate) async fn call_js(
    f: Arc<AsyncJsFn>,
    input: String,
    kind: &'static str,
    what: &str,
) -> std::result::Result<Value, String> {
    open_envelope(call_js_envelope(f, input, kind, what, None).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(id: u32) -> bool {
        ANSWERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&id)
    }

    /// An answer reaches its call once; a call whose caller stopped waiting is forgotten, and
    /// a late answer to it (or a second one) goes nowhere.
    #[test]
    fn answers_reach_their_call_and_a_dropped_call_leaves_nothing() {
        let mut first = Expected::new();
        let second = Expected::new();
        assert_ne!(first.id, second.id);
        assert!(waiting(first.id) && waiting(second.id));

        answer_call(first.id, Some(r#"{"ok":true}"#.to_owned()), None);
        assert_eq!(
            first.answer.try_recv().ok(),
            Some(Ok(r#"{"ok":true}"#.to_owned()))
        );
        assert!(!waiting(first.id));
        answer_call(first.id, None, Some("again".to_owned()));

        let (id, failed) = {
            let mut e = Expected::new();
            answer_call(e.id, None, Some("it threw".to_owned()));
            (e.id, e.answer.try_recv())
        };
        assert_eq!(failed.ok(), Some(Err("it threw".to_owned())));
        assert!(!waiting(id));

        let gone = second.id;
        drop(second);
        assert!(!waiting(gone), "a dropped call is forgotten");
        answer_call(gone, Some("{}".to_owned()), None);
        assert!(!waiting(gone));
    }
}
