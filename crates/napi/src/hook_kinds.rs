//! `hookExecutors`: custom hook kinds run by JS functions.
//!
//! A hook of a registered kind becomes a call of kind `hook` for the drive loop of a JS-driven
//! turn (`crate::pump`), or a threadsafe call from a worker. `agent.js` dispatches it to the
//! host's executor by kind and answers its outcome `{ ok, value, logs, error?, formatted }`,
//! which `archmax_machine::hooks::read_outcome` reads.

use std::sync::{Arc, PoisonError};

use archmax_machine::hooks::{HookExecutor, HostHookKinds};
use archmax_machine::tools::BoxFuture;
use napi_derive::napi;
use serde_json::{Value, json};

use crate::agent::{AsyncJsFn, NativeAgent, Slot, call_js, take};

/// The host's executors, behind the one JS function `agent.js` gives.
struct JsHookExecutor {
    f: Slot<AsyncJsFn>,
}

impl HookExecutor for JsHookExecutor {
    fn run(&self, hook: Value, ctx: Value, args: Value) -> BoxFuture<'_, Result<Value, String>> {
        let f = take(&self.f);
        let input = json!({ "hook": hook, "ctx": ctx, "args": args }).to_string();
        Box::pin(async move {
            let f = f.ok_or_else(|| "the agent was disposed".to_string())?;
            call_js(f, input, "hook", "hook executor").await
        })
    }
}

#[napi]
impl NativeAgent {
    /// Registers the host's custom hook kinds (call it before `open`): `handler` answers
    /// `{ hook, ctx, args }` with the executor's outcome.
    #[napi(
        catch_unwind,
        ts_args_type = "kinds: Array<string>, handler: (id: number, callJson: string) => void"
    )]
    pub fn use_hook_executors(&self, kinds: Vec<String>, handler: AsyncJsFn) {
        let kinds = HostHookKinds {
            kinds,
            executor: Arc::new(JsHookExecutor {
                f: Arc::new(std::sync::RwLock::new(Some(Arc::new(handler)))),
            }),
        };
        *self
            .hook_kinds
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(kinds);
    }
}
