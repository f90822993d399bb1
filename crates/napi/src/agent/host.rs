//! What the host plugs into the agent before `open` (its custom hook kinds, its answers to
//! MCP servers' requests, its governance rules, its session store), and the governed
//! workspace its tool handlers reach (`context.workspace`).

use std::sync::{Arc, PoisonError};

use napi::bindgen_prelude::Function;
use napi_derive::napi;
use serde_json::{Value, json};

use super::NativeAgent;
use crate::callback::AsyncJsFn;
use crate::hook_kinds::host_hook_kinds;
use crate::mcp_host::JsMcpHost;
use crate::policy::{JsAsk, SyncJsFn, host_rules};
use crate::result::plain_error;
use crate::store::NativeSessionStore;
use crate::tool_workspace::serve;

#[napi]
impl NativeAgent {
    /// Registers the host's custom hook kinds (call it before `open`): `handler` answers
    /// `{ hook, ctx, args }` with the executor's outcome.
    #[napi(
        catch_unwind,
        ts_args_type = "kinds: Array<string>, handler: (id: number, callJson: string) => void"
    )]
    pub fn use_hook_executors(&self, kinds: Vec<String>, handler: AsyncJsFn) {
        let kinds = host_hook_kinds(kinds, handler);
        *self
            .hook_kinds
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(kinds);
    }

    /// Registers the host's answers to its MCP servers' requests (call it before `open`):
    /// `handler` answers `{ kind: 'elicitation' | 'sampling', server, params }`; `elicits` and
    /// `samples` say which the host answers (and so which capabilities the client advertises).
    #[napi(
        catch_unwind,
        ts_args_type = "elicits: boolean, samples: boolean, handler: (id: number, callJson: string) => void"
    )]
    pub fn use_mcp_host(&self, elicits: bool, samples: bool, handler: AsyncJsFn) {
        if let Ok(mut slot) = self.mcp_handler.write() {
            *slot = Some(Arc::new(handler));
        }
        *self.mcp_host.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(JsMcpHost {
            f: Arc::clone(&self.mcp_handler),
            elicits,
            samples,
        }));
    }

    /// Sets the host's governance rules (call it before `open`): `count` rules, asked
    /// through `ask` (`agent.js` `policyAsk`), passed twice (called directly, and from
    /// worker threads).
    #[napi(
        catch_unwind,
        ts_args_type = "ask: (callJson: string) => string, queued: (callJson: string) => string, count: number",
        ts_return_type = "NativeResult"
    )]
    pub fn use_policy(&self, ask: Function<String, String>, queued: SyncJsFn, count: u32) -> Value {
        let direct = match ask.create_ref() {
            Ok(r) => r,
            Err(e) => return plain_error("Error", e.reason.clone()),
        };
        let ask = JsAsk::new(direct, Some(queued));
        let mut slot = self
            .policy_rules
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *slot = archmax_machine::HostRules(vec![Arc::new(host_rules(&ask, count))]);
        json!({ "ok": true, "value": null })
    }

    /// Chooses the session store `open` assembles with (call it before `open`). A host
    /// store needs `handler`, which answers its method calls; `hostSpecs` says whether the
    /// host keeps spec snapshots (else they are kept in memory).
    #[napi(
        catch_unwind,
        ts_args_type = "store: NativeSessionStore, handler: ((id: number, callJson: string) => void) | null | undefined, hostSpecs: boolean | null | undefined",
        ts_return_type = "NativeResult"
    )]
    pub fn use_session_store(
        &self,
        store: &NativeSessionStore,
        handler: Option<AsyncJsFn>,
        host_specs: Option<bool>,
    ) -> Value {
        match self.store.choose(store, handler, host_specs) {
            Ok(()) => json!({ "ok": true, "value": null }),
            Err(message) => plain_error("TypeError", message),
        }
    }

    // "The operations above" are `crate::tool_workspace::serve`'s: this doc text is
    // `index.d.ts`'s, kept as it was when the method lived beside them.
    /// Serves one `context.workspace` access of the host tool call `contextId`:
    /// `{ ok: true, value }` (see the operations above) or `{ ok: false, code, message }`.
    #[napi(catch_unwind, ts_return_type = "NativeResult")]
    pub fn tool_workspace(
        &self,
        context_id: u32,
        op: String,
        #[napi(ts_arg_type = "Record<string, unknown>")] args: Value,
    ) -> Value {
        if !matches!(op.as_str(), "read" | "download" | "upload" | "delete") {
            return plain_error("TypeError", format!("'{op}' is not a workspace operation"));
        }
        let ws = self.tool_workspaces.get(context_id);
        json!({ "ok": true, "value": serve(ws.as_deref(), &op, &args) })
    }
}
