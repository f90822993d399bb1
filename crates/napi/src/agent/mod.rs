//! `NativeAgent`: a harness driven from JS. The hand-written `agent.js`
//! wraps it as `createAgent`; this folder only translates.
//!
//! Its JS callbacks are asked as [`crate::callback`] says. Expected failures of the harness
//! come back as data (`{ ok: false, code, message }`, [`crate::result`]) and `agent.js`
//! raises them as the original's error classes.
//!
//! One module per concern, each adding its methods to `NativeAgent`: `open` maps the JS
//! options onto the harness's assembly; `cases` runs `runTests`' cases; `turns` runs the
//! harness calls that make a turn, placed by `drive` (on the JS thread or a tokio worker);
//! `sessions` reads and changes stored sessions; `channels` keeps the JS model's request
//! channels; `dispose` releases it all; `host` takes what the host plugs in before `open`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use archmax_machine::{Harness, RunError};
use napi_derive::napi;
use serde_json::{Value, json};

use crate::callback::{AsyncJsFn, Slot};
use crate::events::EventJsFn;
use crate::js_model::JsModel;
use crate::result::{error_dto, plain_error};

/// The session a turn runs on when none is named (`invoke` without `thread_id`).
#[napi]
pub const DEFAULT_SESSION_ID: &str = archmax_machine::DEFAULT_SESSION_ID;

/// A workflow assembled for JS. Use `createAgent` (agent.js), not this class.
#[napi]
pub struct NativeAgent {
    harness: RwLock<Option<Arc<Harness>>>,
    model: Slot<AsyncJsFn>,
    tools: Slot<AsyncJsFn>,
    events: Slot<EventJsFn>,
    /// The sessions with a call in flight (and how many), so `dispose` can cancel them.
    running: Arc<Mutex<HashMap<String, usize>>>,
    /// The session store `open` uses (`useSessionStore`; default: the filesystem).
    store: crate::store::StoreChoice,
    /// The JS model, when there is one: `disposeSession` releases its conversation copies.
    js_model: RwLock<Option<Arc<JsModel>>>,
    /// The host's governance rules `open` compiles in (`usePolicy`; default: none).
    policy_rules: Mutex<archmax_machine::HostRules>,
    /// The host's custom hook kinds `open` assembles with (`useHookExecutors`).
    hook_kinds: Mutex<Option<archmax_machine::hooks::HostHookKinds>>,
    /// The host's answers to its MCP servers' requests (`useMcpHost`), and the JS function
    /// behind them, which `dispose` releases.
    mcp_host: Mutex<Option<Arc<crate::mcp_host::JsMcpHost>>>,
    mcp_handler: Slot<AsyncJsFn>,
    /// The `context.workspace` handles of the host tool calls in flight.
    tool_workspaces: Arc<crate::tool_workspace::ToolWorkspaces>,
    /// Where this agent's spans go (`open`), if anywhere.
    telemetry: RwLock<Option<Arc<archmax_telemetry::Telemetry>>>,
    /// The parent trace context of the next turn (`setTraceparent`, just before it).
    traceparent: Mutex<Option<String>>,
    /// A cassette per case (`runTests({ cassettes })`): the harness's model, which
    /// `runCases` switches to each case's cassette.
    tapes: Arc<RwLock<Option<Arc<archmax_cases::cassette::CaseTapes>>>>,
}

#[napi]
impl NativeAgent {
    /// An agent whose callbacks are set; `open` assembles it.
    #[napi(
        constructor,
        ts_args_type = "model: ((id: number, requestJson: string) => void) | null | undefined, toolHandler: ((id: number, callJson: string) => void) | null | undefined, onEvent: ((envelopeJson: string) => void) | null | undefined"
    )]
    pub fn new(
        model: Option<AsyncJsFn>,
        tool_handler: Option<AsyncJsFn>,
        on_event: Option<EventJsFn>,
    ) -> Self {
        NativeAgent {
            harness: RwLock::new(None),
            model: Arc::new(RwLock::new(model.map(Arc::new))),
            tools: Arc::new(RwLock::new(tool_handler.map(Arc::new))),
            events: Arc::new(RwLock::new(on_event.map(Arc::new))),
            running: Arc::new(Mutex::new(HashMap::new())),
            store: crate::store::StoreChoice::new(),
            js_model: RwLock::new(None),
            policy_rules: Mutex::default(),
            hook_kinds: Mutex::default(),
            mcp_host: Mutex::default(),
            mcp_handler: Arc::default(),
            tool_workspaces: Arc::default(),
            telemetry: RwLock::new(None),
            traceparent: Mutex::new(None),
            tapes: Arc::default(),
        }
    }

    /// The W3C `traceparent` the next turn runs under (agent.js sets it right before the
    /// call); `null` clears it.
    #[napi(catch_unwind)]
    pub fn set_traceparent(&self, traceparent: Option<String>) {
        if let Ok(mut g) = self.traceparent.lock() {
            *g = traceparent.filter(|t| !t.trim().is_empty());
        }
    }

    /// Starts delivering events to `onEvent` when the agent was built without a listener
    /// (`agent.workflow.stream` needs them); an agent that has one keeps it.
    #[napi(ts_args_type = "onEvent: (envelopeJson: string) => void")]
    pub fn listen(&self, on_event: EventJsFn) {
        if let Ok(mut g) = self.events.write()
            && g.is_none()
        {
            *g = Some(Arc::new(on_event));
        }
    }
}

impl NativeAgent {
    fn harness(&self) -> std::result::Result<Arc<Harness>, Value> {
        self.harness
            .read()
            .ok()
            .and_then(|g| g.clone())
            .ok_or_else(|| plain_error("AgentDisposedError", "the agent was disposed"))
    }

    /// `{ ok: true, value }` from a harness call, or its error as data.
    fn answer<T: serde::Serialize>(
        &self,
        f: impl FnOnce(&Harness) -> std::result::Result<T, RunError>,
    ) -> Value {
        match self.harness() {
            Ok(h) => match f(&h).map(|v| serde_json::to_value(v)) {
                Ok(Ok(value)) => json!({ "ok": true, "value": value }),
                Ok(Err(e)) => plain_error("Error", format!("cannot encode the answer: {e}")),
                Err(e) => error_dto(&e),
            },
            Err(e) => e,
        }
    }
}

// napi writes `NativeAgent`'s methods into `index.d.ts` in the order their `#[napi] impl`
// blocks are expanded: the one above, then each module's in the order they are declared
// here. Hence below the struct, one group each, so that `cargo fmt` keeps the order.
mod open;

mod cases;

mod drive;

mod turns;

mod sessions;

mod channels;

mod dispose;

mod host;
