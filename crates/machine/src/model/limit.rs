//! The process-wide bound on concurrent calls per model endpoint.
//!
//! Every [`OpenAiClient`](super::OpenAiClient) of the process that calls the same
//! `…/chat/completions` URL takes a slot of that endpoint's [`Endpoint`] for each attempt, so
//! a thousand sessions starting at once queue for the endpoint instead of failing on its rate
//! limit. The bound is the smallest any client of the process asked for; a retry's backoff
//! holds no slot. What waits, and for how long, is counted here for `/metrics`
//! ([`snapshot`]) and told to the caller's [`TextSink`](super::TextSink) for its events.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// `ARCHMAX_MAX_CONCURRENT_CALLS` / `maxConcurrentCalls` when unset: a public API's
/// comfortable concurrency per key.
pub const DEFAULT_MAX_CONCURRENT_CALLS: u32 = 16;
/// The largest bound accepted.
pub const MAX_CONCURRENT_CALLS_LIMIT: u32 = 1024;

/// One endpoint's slots and counters.
#[derive(Debug)]
pub struct Endpoint {
    url: String,
    slots: Arc<Semaphore>,
    /// The bound in force: the smallest asked.
    limit: AtomicU32,
    /// Slots still to take out of circulation after the bound shrank while they were taken.
    owed: AtomicU32,
    in_flight: AtomicU32,
    waiting: AtomicU32,
    /// Calls that had to wait for a slot, and how long they waited in all (microseconds).
    waited_calls: AtomicU64,
    waited_us: AtomicU64,
}

/// A taken slot; dropping it frees it (or retires it, when the bound shrank meanwhile).
#[derive(Debug)]
pub struct Slot {
    endpoint: Arc<Endpoint>,
    permit: Option<OwnedSemaphorePermit>,
    /// How long the call waited for it (zero when one was free).
    pub waited: Duration,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.endpoint.in_flight.fetch_sub(1, Ordering::SeqCst);
        let Some(permit) = self.permit.take() else {
            return;
        };
        let owed = &self.endpoint.owed;
        if owed
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            permit.forget();
        }
    }
}

static ENDPOINTS: LazyLock<Mutex<HashMap<String, Arc<Endpoint>>>> = LazyLock::new(Mutex::default);

/// The endpoint at `url`, bounded by `limit` (at least 1) unless a client of this process
/// asked for less.
pub fn endpoint(url: &str, limit: u32) -> Arc<Endpoint> {
    let limit = limit.clamp(1, MAX_CONCURRENT_CALLS_LIMIT);
    let mut all = ENDPOINTS.lock().unwrap_or_else(PoisonError::into_inner);
    let e = all.entry(url.to_string()).or_insert_with(|| {
        Arc::new(Endpoint {
            url: url.to_string(),
            slots: Arc::new(Semaphore::new(limit as usize)),
            limit: AtomicU32::new(limit),
            owed: AtomicU32::new(0),
            in_flight: AtomicU32::new(0),
            waiting: AtomicU32::new(0),
            waited_calls: AtomicU64::new(0),
            waited_us: AtomicU64::new(0),
        })
    });
    let current = e.limit.load(Ordering::SeqCst);
    if limit < current {
        // The registry's lock serializes every change of the bound.
        e.limit.store(limit, Ordering::SeqCst);
        let cut = current - limit;
        let retired = u32::try_from(e.slots.forget_permits(cut as usize)).unwrap_or(cut);
        e.owed
            .fetch_add(cut.saturating_sub(retired), Ordering::SeqCst);
    }
    Arc::clone(e)
}

impl Endpoint {
    /// Waits for a free slot.
    pub async fn take(self: &Arc<Self>) -> Slot {
        let started = Instant::now();
        let permit = match Arc::clone(&self.slots).try_acquire_owned() {
            Ok(p) => Some(p),
            Err(_) => {
                self.waiting.fetch_add(1, Ordering::SeqCst);
                // The semaphore is never closed, so this only waits.
                let p = Arc::clone(&self.slots).acquire_owned().await.ok();
                self.waiting.fetch_sub(1, Ordering::SeqCst);
                p
            }
        };
        let waited = if started.elapsed() >= Duration::from_millis(1) {
            let waited = started.elapsed();
            self.waited_calls.fetch_add(1, Ordering::SeqCst);
            self.waited_us.fetch_add(
                u64::try_from(waited.as_micros()).unwrap_or(u64::MAX),
                Ordering::SeqCst,
            );
            waited
        } else {
            Duration::ZERO
        };
        self.in_flight.fetch_add(1, Ordering::SeqCst);
        Slot {
            endpoint: Arc::clone(self),
            permit,
            waited,
        }
    }

    /// The bound in force.
    pub fn limit(&self) -> u32 {
        self.limit.load(Ordering::SeqCst)
    }
}

/// One endpoint's figures at a moment.
#[derive(Debug, Clone, PartialEq)]
pub struct EndpointFigures {
    /// The `…/chat/completions` URL.
    pub url: String,
    /// The bound in force.
    pub limit: u32,
    /// Calls holding a slot now.
    pub in_flight: u32,
    /// Calls waiting for one now.
    pub waiting: u32,
    /// Calls that waited, since the process started.
    pub waited_calls: u64,
    /// Their wait in all, in seconds.
    pub waited_seconds: f64,
}

/// Every endpoint this process has called, sorted by URL.
pub fn snapshot() -> Vec<EndpointFigures> {
    let all = ENDPOINTS.lock().unwrap_or_else(PoisonError::into_inner);
    let mut figures: Vec<EndpointFigures> = all
        .values()
        .map(|e| EndpointFigures {
            url: e.url.clone(),
            limit: e.limit(),
            in_flight: e.in_flight.load(Ordering::SeqCst),
            waiting: e.waiting.load(Ordering::SeqCst),
            waited_calls: e.waited_calls.load(Ordering::SeqCst),
            waited_seconds: e.waited_us.load(Ordering::SeqCst) as f64 / 1e6,
        })
        .collect();
    figures.sort_by(|a, b| a.url.cmp(&b.url));
    figures
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    #[test]
    fn calls_past_the_bound_wait_for_a_slot_and_the_wait_is_counted() {
        rt().block_on(async {
            let e = endpoint("http://127.0.0.1:1/v1/chat/completions#bound", 2);
            let a = e.take().await;
            let b = e.take().await;
            assert_eq!((a.waited, b.waited), (Duration::ZERO, Duration::ZERO));
            let e2 = Arc::clone(&e);
            let third = tokio::spawn(async move { e2.take().await.waited });
            tokio::time::sleep(Duration::from_millis(20)).await;
            let f = snapshot()
                .into_iter()
                .find(|f| f.url == e.url)
                .expect("listed");
            assert_eq!((f.in_flight, f.waiting), (2, 1));
            drop(a);
            let waited = third.await.expect("joined");
            assert!(waited >= Duration::from_millis(15), "{waited:?}");
            let f = snapshot()
                .into_iter()
                .find(|f| f.url == e.url)
                .expect("listed");
            assert_eq!((f.waiting, f.waited_calls), (0, 1));
            drop(b);
        });
    }

    #[test]
    fn the_smallest_bound_asked_wins_even_while_slots_are_taken() {
        rt().block_on(async {
            let url = "http://127.0.0.1:1/v1/chat/completions#shrink";
            let e = endpoint(url, 3);
            let taken = [e.take().await, e.take().await];
            // Shrinking to 1 while 2 are out: one free slot is retired now, one is owed.
            assert_eq!(endpoint(url, 1).limit(), 1);
            assert_eq!(endpoint(url, 5).limit(), 1, "a larger ask changes nothing");
            drop(taken);
            let one = e.take().await;
            assert!(
                Arc::clone(&e.slots).try_acquire_owned().is_err(),
                "one slot in all"
            );
            drop(one);
            assert_eq!(e.slots.available_permits(), 1);
        });
    }
}
