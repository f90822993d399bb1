//! Cancelling a turn in flight.
//!
//! Every turn registers a [`Cancel`] under its session id; [`crate::Harness::cancel`]
//! trips it. The turn races each model call and host-tool call against it (a hook
//! finishes first; the loop checks the switch before every model call) and, when it
//! trips, ends the session `failed` with exit code `turn-cancelled` (the 0.9.0 rule for
//! a turn that throws). Tool results already in hand are kept; a model reply cut off
//! is not recorded. The next message starts a fresh turn.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

/// The exit reason of a cancelled turn.
pub const CANCELLED_REASON: &str = "the turn was cancelled";

/// A one-way switch a turn watches.
#[derive(Clone, Default, Debug)]
pub struct Cancel(Arc<Inner>);

#[derive(Default, Debug)]
struct Inner {
    tripped: AtomicBool,
    notify: Notify,
}

impl Cancel {
    /// Trips the switch; every waiter wakes.
    pub fn cancel(&self) {
        self.0.tripped.store(true, Ordering::SeqCst);
        self.0.notify.notify_waiters();
    }

    /// Whether the switch was tripped.
    pub fn is_cancelled(&self) -> bool {
        self.0.tripped.load(Ordering::SeqCst)
    }

    /// Resolves once the switch is tripped.
    pub async fn cancelled(&self) {
        loop {
            // Created before the check: a `notify_waiters` after the check still wakes it.
            let woken = self.0.notify.notified();
            if self.is_cancelled() {
                return;
            }
            woken.await;
        }
    }
}

/// How a raced piece of work ended.
pub(crate) enum Raced<T> {
    Done(T),
    TimedOut,
    Cancelled,
}

/// Runs `work` against the cancel switch and an optional time budget.
pub(crate) async fn race<T>(
    cancel: &Cancel,
    budget: Option<Duration>,
    work: impl Future<Output = T>,
) -> Raced<T> {
    let timed = async {
        match budget {
            None => Some(work.await),
            Some(left) => tokio::time::timeout(left, work).await.ok(),
        }
    };
    tokio::select! {
        biased;
        () = cancel.cancelled() => Raced::Cancelled,
        r = timed => match r {
            Some(v) => Raced::Done(v),
            None => Raced::TimedOut,
        },
    }
}

/// The switches of the turns in flight, by session id.
#[derive(Default, Debug)]
pub(crate) struct Registry(Mutex<HashMap<String, Cancel>>);

impl Registry {
    /// Registers a fresh switch for a turn of `session`.
    pub(crate) fn register(&self, session: &str) -> Cancel {
        let c = Cancel::default();
        if let Ok(mut m) = self.0.lock() {
            m.insert(session.to_string(), c.clone());
        }
        c
    }

    /// Forgets `c` if it is still the switch registered for `session`.
    pub(crate) fn release(&self, session: &str, c: &Cancel) {
        if let Ok(mut m) = self.0.lock()
            && m.get(session).is_some_and(|x| Arc::ptr_eq(&x.0, &c.0))
        {
            m.remove(session);
        }
    }

    /// Trips the switch of `session`'s turn in flight; false when none runs.
    pub(crate) fn cancel(&self, session: &str) -> bool {
        match self.0.lock().ok().and_then(|m| m.get(session).cloned()) {
            Some(c) => {
                c.cancel();
                true
            }
            None => false,
        }
    }

    /// Trips every switch of a turn in flight; how many there were.
    pub(crate) fn cancel_all(&self) -> usize {
        let all: Vec<Cancel> = self
            .0
            .lock()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default();
        for c in &all {
            c.cancel();
        }
        all.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_tripped_switch_wins_the_race_and_an_untripped_one_does_not() {
        let c = Cancel::default();
        let r = race(&c, None, async { 7 }).await;
        assert!(matches!(r, Raced::Done(7)));
        let r = race(
            &c,
            Some(Duration::from_millis(5)),
            std::future::pending::<()>(),
        )
        .await;
        assert!(matches!(r, Raced::TimedOut));
        let c2 = c.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            c2.cancel();
        });
        let r = race(&c, None, std::future::pending::<()>()).await;
        assert!(matches!(r, Raced::Cancelled));
        assert!(c.is_cancelled());
    }

    #[test]
    fn the_registry_releases_only_its_own_switch() {
        let r = Registry::default();
        let first = r.register("s");
        let second = r.register("s");
        r.release("s", &first);
        assert!(r.cancel("s"));
        assert!(second.is_cancelled());
        assert!(!first.is_cancelled());
        r.release("s", &second);
        assert!(!r.cancel("s"));
    }
}
