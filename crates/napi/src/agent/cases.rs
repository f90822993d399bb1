//! `runCases`: `runTests`' engine, the workflow's cases each run on its own session of this
//! agent.

use std::collections::HashMap;
use std::sync::Arc;

use napi_derive::napi;
use serde_json::{Value, json};

use super::NativeAgent;
use crate::events::{CaseProgress, JsEvents};
use crate::pump::NativeTurn;
use crate::result::plain_error;

#[napi]
impl NativeAgent {
    /// `runTests`' engine: the workflow's cases (`archmax_cases`), each on its own session of
    /// this agent. `{ filter?, files?, toolMocks?, caseTimeoutMs?, sessionIds?: { [file]: id },
    /// runId? }`: `files` runs exactly those case files (`runCase`); `toolMocks: false` (the
    /// agent cannot intercept its own tool calls) fails a case declaring mocks before it runs
    /// (default true); `caseTimeoutMs` outranks `tests.caseTimeoutMs`. With `cassettes`, each case runs on its own cassette. Case progress
    /// reaches `onEvent` as `{ type: "case-start", file, sessionId? }` and
    /// `{ type: "case-result", result }` among the cases' own events.
    #[napi(catch_unwind)]
    pub fn run_cases(
        &self,
        #[napi(
            ts_arg_type = "{ filter?: string; files?: string[]; toolMocks?: boolean; caseTimeoutMs?: number; sessionIds?: Record<string, string>; runId?: string }"
        )]
        options: Value,
    ) -> NativeTurn {
        let h = match self.harness() {
            Ok(h) => h,
            Err(e) => return NativeTurn::ended(e),
        };
        if h.is_plain() {
            return NativeTurn::ended(plain_error(
                "Error",
                format!(
                    "Case target '{}' has no workflow machine; cases require a workflow-governed agent.",
                    h.workflow()
                ),
            ));
        }
        let ids: HashMap<String, String> = options
            .get("sessionIds")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let opts = archmax_cases::RunOptions {
            filter: options
                .get("filter")
                .and_then(Value::as_str)
                .filter(|f| !f.is_empty())
                .map(str::to_string),
            files: options.get("files").and_then(Value::as_array).map(|files| {
                files
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            }),
            tool_mocks: options
                .get("toolMocks")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            case_timeout_ms: options.get("caseTimeoutMs").and_then(Value::as_u64),
            run_id: options
                .get("runId")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            session_id_for_case: (!ids.is_empty()).then(|| {
                let ids = Arc::new(ids);
                let f: archmax_cases::engine::SessionIdFor = Arc::new(move |file: &str| {
                    ids.get(file)
                        .cloned()
                        .unwrap_or_else(|| format!("test-{}", file.replace('/', "-")))
                });
                f
            }),
        };
        let progress = CaseProgress::new(JsEvents::new(Arc::clone(&self.events)));
        let tapes = self.tapes.read().ok().and_then(|g| g.clone());
        self.value_turn(async move {
            let suite = archmax_cases::Suite::discover(h.root(), h.workflow());
            let spec = h.spec().clone();
            let target: Box<dyn archmax_cases::Target> = match tapes {
                Some(tapes) => Box::new(archmax_cases::cassette::TapedTarget {
                    harness: Arc::clone(&h),
                    tapes,
                }),
                None => Box::new(archmax_cases::SharedTarget(Arc::clone(&h))),
            };
            match archmax_cases::run_suite(&suite, &spec, target.as_ref(), &opts, &progress).await {
                Ok(result) => match serde_json::to_value(&result) {
                    Ok(v) => json!({ "ok": true, "value": v }),
                    Err(e) => plain_error("Error", format!("cannot encode the results: {e}")),
                },
                Err(e) => plain_error("Error", e.to_string()),
            }
        })
    }
}
