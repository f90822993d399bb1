//! `dispose`: the turns in flight cancelled, then every callback, the store, the harness and
//! the telemetry released.

use napi_derive::napi;

use super::NativeAgent;

#[napi]
impl NativeAgent {
    /// Cancels every turn in flight, then releases the JS callbacks and the
    /// harness; idempotent. Calls in flight resolve (`turn-cancelled`).
    #[napi(catch_unwind)]
    pub fn dispose(&self) {
        if let Ok(h) = self.harness() {
            let ids: Vec<String> = self
                .running
                .lock()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            for id in ids {
                h.cancel(&id);
            }
        }
        for slot in [&self.model, &self.tools, &self.mcp_handler] {
            if let Ok(mut g) = slot.write() {
                *g = None;
            }
        }
        if let Ok(mut g) = self.events.write() {
            *g = None;
        }
        self.store.close();
        if let Ok(mut g) = self.harness.write() {
            *g = None;
        }
        if let Ok(mut g) = self.js_model.write() {
            *g = None;
        }
        if let Ok(mut g) = self.tapes.write() {
            *g = None;
        }
        if let Some(t) = self.telemetry.write().ok().and_then(|mut g| g.take()) {
            crate::telemetry::close(t);
        }
    }
}
