//! `hookExecutors`: custom hook kinds run by JS functions.
//!
//! A hook of a registered kind becomes a call of kind `hook` for the drive loop of a JS-driven
//! turn (`crate::pump`), or a threadsafe call from a worker. `agent.js` dispatches it to the
//! host's executor by kind and answers its outcome `{ ok, value, logs, error?, formatted }`,
//! which `archmax_machine::hooks::read_outcome` reads.

use std::sync::{Arc, RwLock};

use archmax_machine::hooks::{HookExecutor, HostHookKinds};
use archmax_machine::tools::BoxFuture;
use serde_json::{Value, json};

use crate::callback::{AsyncJsFn, Slot, call_js, take};

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

/// The host's custom hook `kinds`, run by `handler` (`agent.js` dispatches by kind).
pub(crate) fn host_hook_kinds(kinds: Vec<String>, handler: AsyncJsFn) -> HostHookKinds {
    HostHookKinds {
        kinds,
        executor: Arc::new(JsHookExecutor {
            f: Arc::new(RwLock::new(Some(Arc::new(handler)))),
        }),
    }
}
