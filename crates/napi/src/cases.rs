//! The case functions of `@archmax-ai/harness/testing` (the engine itself runs through
//! `NativeAgent.runCases`): discovery, the case document read and written, the input
//! matcher.

use archmax_spec::DiskFiles;
use napi_derive::napi;
use serde_json::{Value, json};

/// The case files of `workflow` under `rootDir`, workspace-relative, sorted by path.
#[napi(catch_unwind)]
pub fn discover_case_files(root_dir: String, workflow: String) -> Vec<String> {
    archmax_spec::workspace::cases::discover_cases(&DiskFiles::new(&root_dir), &workflow)
}

/// A case's verdict from its assertion records and its death's `error` (`reduceVerdict`):
/// the engine's own reduction, so no JS copies it.
#[napi(
    catch_unwind,
    ts_args_type = "records: Array<import('./types/AssertionRecord.js').AssertionRecord>, error?: string | null",
    ts_return_type = "import('./types/CaseVerdict.js').CaseVerdict"
)]
pub fn reduce_verdict(records: Value, error: Option<String>) -> napi::Result<Value> {
    let records: Vec<archmax_cases::AssertionRecord> = match records {
        Value::Null => Vec::new(),
        other => serde_json::from_value(other).map_err(|e| {
            napi::Error::new(
                napi::Status::InvalidArg,
                format!("reduceVerdict: a record is not an assertion record: {e}"),
            )
        })?,
    };
    serde_json::to_value(archmax_cases::reduce_verdict(&records, error.as_deref()))
        .map_err(|e| napi::Error::from_reason(e.to_string()))
}

/// Reads a case document: `{ ok: true, value }` (the document, collapsed), or
/// `{ ok: false, message }` with every problem (`<file>: <problem>; …`).
/// With the tests folder `dir`, the value carries `file` and its `id` (the path under `dir`
/// without the extension), as the original's `parseCaseDocument(file, source, testsDir)`.
#[napi(
    catch_unwind,
    ts_return_type = "{ ok: true; value: Record<string, unknown> } | { ok: false; message: string }"
)]
pub fn parse_case_document(text: String, file: Option<String>, dir: Option<String>) -> Value {
    let name = file.clone().unwrap_or_else(|| "<case>".to_string());
    match archmax_cases::parse_case(&name, &text) {
        Ok(case) => {
            let mut value = case.to_json();
            if let (Some(file), Some(dir), Value::Object(m)) = (&file, &dir, &mut value) {
                let id = archmax_cases::CaseFile::in_dir(dir, file).id;
                m.insert("file".into(), Value::String(file.clone()));
                m.insert("id".into(), Value::String(id));
            }
            json!({ "ok": true, "value": value })
        }
        Err(message) => json!({ "ok": false, "message": message }),
    }
}

/// Writes a case document back as YAML (`serializeCaseDocument`): `{ ok: true, value }`
/// (the text), or `{ ok: false, message }` when the document is not a valid case.
#[napi(
    catch_unwind,
    ts_return_type = "{ ok: true; value: string } | { ok: false; message: string }"
)]
pub fn serialize_case_document(#[napi(ts_arg_type = "unknown")] doc: Value) -> Value {
    match archmax_cases::serialize_case(&doc) {
        Ok(text) => json!({ "ok": true, "value": text }),
        Err(message) => json!({ "ok": false, "message": message }),
    }
}

/// Whether `actual` partially matches `expected` (mocks' `whenInput`, `calledTool.input`).
#[napi(catch_unwind)]
pub fn partial_match(
    #[napi(ts_arg_type = "unknown")] expected: Value,
    #[napi(ts_arg_type = "unknown")] actual: Value,
) -> bool {
    archmax_machine::mocks::partial_match(&expected, &actual)
}

/// What `runTests` answers without building an agent, as `archmax test` decides before it runs
/// anything (`archmax_cases::engine::plan`): a workflow that does not load, or a filter that
/// selects no case, refused with exit code 1 and the CLI's message in `error`; a disabled
/// workflow skipped; no case to run. `null` when cases are to run.
#[napi(
    catch_unwind,
    ts_args_type = "rootDir: string, workflow: string, filter?: string | null",
    ts_return_type = "import('./types/RunTestsResult.js').RunTestsResult | null"
)]
pub fn suite_without_run(root_dir: String, workflow: String, filter: Option<String>) -> Value {
    let root = std::path::Path::new(&root_dir);
    let result = match archmax_cases::engine::plan(root, &workflow, filter.as_deref()) {
        Err(e) => archmax_cases::RunTestsResult::refused(&e),
        Ok(plan) if plan.disabled() => archmax_cases::RunTestsResult {
            results: Vec::new(),
            exit_code: 0,
            discovered: 0,
            skipped: Some("disabled"),
            error: None,
        },
        Ok(plan) if plan.selected.is_empty() => archmax_cases::RunTestsResult {
            results: Vec::new(),
            exit_code: 0,
            discovered: plan.suite.files.len(),
            skipped: None,
            error: None,
        },
        Ok(_) => return Value::Null,
    };
    serde_json::to_value(result).unwrap_or(Value::Null)
}
