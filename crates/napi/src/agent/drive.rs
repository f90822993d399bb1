//! Where a harness call's turn runs: polled on the JS main thread by `agent.js`'s drive loop
//! (`crate::pump`), or on a tokio worker; and which sessions have a call in flight.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use archmax_machine::{Outcome, RunError};
use serde_json::Value;

use super::NativeAgent;
use crate::callback::take;
use crate::pump::NativeTurn;
use crate::result::{error_dto, plain_error};

/// Marks a session busy for the life of one call.
pub(super) struct Running {
    running: Arc<Mutex<HashMap<String, usize>>>,
    id: String,
}

impl Running {
    pub(super) fn new(running: &Arc<Mutex<HashMap<String, usize>>>, id: &str) -> Running {
        if let Ok(mut m) = running.lock() {
            *m.entry(id.to_string()).or_default() += 1;
        }
        Running {
            running: Arc::clone(running),
            id: id.to_string(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(mut m) = self.running.lock()
            && let Some(n) = m.get_mut(&self.id)
        {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.id);
            }
        }
    }
}

/// A turn's answer as JSON text (what [`crate::pump::TurnFuture`] ends with): the outcome is
/// written out directly, with no `Value` tree in between.
fn outcome_dto(result: std::result::Result<Outcome, RunError>) -> String {
    #[derive(serde::Serialize)]
    struct Answered<'a> {
        ok: bool,
        value: &'a Outcome,
    }
    match result {
        Ok(outcome) => serde_json::to_string(&Answered {
            ok: true,
            value: &outcome,
        })
        .unwrap_or_else(|e| {
            plain_error("Error", format!("cannot encode the outcome: {e}")).to_string()
        }),
        Err(e) => error_dto(&e).to_string(),
    }
}

impl NativeAgent {
    /// The turn of one harness call. With a JS model function it is polled on the JS main
    /// thread (`crate::pump`: no thread hand-off per model call). Otherwise it runs on a tokio
    /// worker, as it must with a host session store (called synchronously, so never from the
    /// main thread) and as is better with the `ARCHMAX_*` endpoint (nothing to hand to JS but
    /// tool calls, and the main thread stays free); its events then reach `onEvent` before
    /// its answer does.
    pub(super) fn turn<F>(&self, call: F) -> NativeTurn
    where
        F: Future<Output = std::result::Result<Outcome, RunError>> + Send + 'static,
    {
        // A turn's future is tens of KiB: boxed once here, the wrappers below move a pointer.
        let call = Box::pin(call);
        let traceparent = self.traceparent.lock().ok().and_then(|mut g| g.take());
        let telemetry = self.telemetry.read().ok().and_then(|g| g.clone());
        let call = match crate::telemetry::traced(telemetry, traceparent, call) {
            Ok(call) => call,
            Err(e) => return NativeTurn::ended(plain_error("TypeError", e)),
        };
        if take(&self.model).is_some() && !self.store.is_host() {
            return NativeTurn::inline(Box::pin(async move { outcome_dto(call.await) }));
        }
        let events = take(&self.events);
        NativeTurn::spawned(Box::pin(async move {
            let result = call.await;
            if let Some(f) = events {
                let _ = f.call_async(String::new()).await;
            }
            outcome_dto(result)
        }))
    }

    /// [`Self::turn`] for a call on `session_id`, which is busy (for `dispose`) while it runs.
    pub(super) fn session_turn<F>(
        &self,
        session_id: String,
        call: impl FnOnce(String) -> F,
    ) -> NativeTurn
    where
        F: Future<Output = std::result::Result<Outcome, RunError>> + Send + 'static,
    {
        let busy = Running::new(&self.running, &session_id);
        // Boxed where it is made: the wrapper below then moves a pointer, not the future.
        let call = Box::pin(call(session_id));
        self.turn(async move {
            let result = call.await;
            drop(busy);
            result
        })
    }

    /// A turn answering `fut`'s value as is (not an outcome): [`Self::turn`]'s placement.
    pub(super) fn value_turn<F>(&self, fut: F) -> NativeTurn
    where
        F: Future<Output = Value> + Send + 'static,
    {
        if take(&self.model).is_some() && !self.store.is_host() {
            return NativeTurn::inline(Box::pin(async move { fut.await.to_string() }));
        }
        let events = take(&self.events);
        NativeTurn::spawned(Box::pin(async move {
            let answer = fut.await;
            if let Some(f) = events {
                let _ = f.call_async(String::new()).await;
            }
            answer.to_string()
        }))
    }
}
