//! What a model answers that makes no sense is named as such: arguments that are not a
//! JSON object, tool-call ids used twice, token counts no call could have.

use archmax_tests::scripted::{Reply, ScriptedServer};
use archmax_tests::{TempWorkspace, tool_results};
use serde_json::{Value, json};

fn ws() -> TempWorkspace {
    TempWorkspace::new(&[(
        "workflows/orders/workflow.yaml",
        "states:\n  work:\n    triggers: { manual: }\n",
    )])
}

/// A completion whose tool calls carry these raw argument texts.
fn raw_calls(calls: &[(&str, &str, &str)]) -> Reply {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, arguments)| {
            json!({ "id": id, "type": "function", "function": { "name": name, "arguments": arguments } })
        })
        .collect();
    Reply::Json(json!({
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{ "index": 0, "finish_reason": "tool_calls",
            "message": { "role": "assistant", "content": null, "tool_calls": calls } }]
    }))
}

#[test]
fn arguments_that_are_not_a_json_object_are_named_as_such() {
    let ws = ws();
    let server = ScriptedServer::start(vec![
        raw_calls(&[
            ("a", "read_file", "{\"file_path\": \"scratchpad/x.md\""),
            ("b", "read_file", "\"scratchpad/x.md\""),
            ("c", "ls", ""),
        ]),
        Reply::text("Done."),
    ])
    .expect("server");
    let h = archmax_tests::harness(ws.root(), "orders", &server.url(), "m", |_| {});
    let _ = archmax_tests::send(&h, "j1", "go");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].starts_with("Error: the arguments of 'read_file' are not valid JSON (")
            && results[0].ends_with(
                "), so nothing was run. Call 'read_file' again with its arguments as one JSON object."
            ),
        "{results:?}"
    );
    assert_eq!(
        results[1],
        "Error: the arguments of 'read_file' are a JSON string, not a JSON object, so nothing was run. Call 'read_file' again with its arguments as one JSON object."
    );
    assert!(
        !results[2].starts_with("Error"),
        "no arguments are none: {results:?}"
    );
}

#[test]
fn a_repeated_tool_call_id_is_renamed_and_each_result_answers_its_own_call() {
    let ws = ws();
    let write = |path: &str| json!({ "file_path": path, "content": "x" });
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![
            ("dup", "write_file", write("scratchpad/a.md")),
            ("dup", "write_file", write("scratchpad/b.md")),
        ]),
        Reply::tool_calls(vec![("dup", "write_file", write("scratchpad/c.md"))]),
        Reply::text("Done."),
    ])
    .expect("server");
    let h = archmax_tests::harness(ws.root(), "orders", &server.url(), "m", |_| {});
    let _ = archmax_tests::send(&h, "d1", "go");
    let last = &server.requests()[2];
    let messages = last["messages"].as_array().cloned().unwrap_or_default();
    let call_ids: Vec<String> = messages
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .filter_map(|c| c["id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(call_ids, ["dup", "dup_2", "dup_3"]);
    let answers: Vec<(String, String)> = messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(answers.len(), 3);
    for ((id, text), (want_id, file)) in
        answers
            .iter()
            .zip([("dup", "a.md"), ("dup_2", "b.md"), ("dup_3", "c.md")])
    {
        assert_eq!(id, want_id);
        assert!(text.contains(file), "{id}: {text}");
    }
}

#[test]
fn a_nonsense_token_count_is_not_stored() {
    let ws = ws();
    let server = ScriptedServer::start(vec![
        Reply::text("Done.").with_usage(json!({
            "prompt_tokens": 1e30, "completion_tokens": -3, "prompt_tokens_details": { "cached_tokens": 2.5 }
        })),
    ])
    .expect("server");
    let h = archmax_tests::harness(ws.root(), "orders", &server.url(), "m", |_| {});
    let out = archmax_tests::send(&h, "u1", "go");
    let usage = serde_json::to_value(out.usage).unwrap_or(Value::Null);
    for field in ["inputTokens", "outputTokens", "cacheReadTokens"] {
        assert!(
            usage[field].as_u64().unwrap_or(0) == 0,
            "{field} stored as {}: {usage}",
            usage[field]
        );
    }
}
