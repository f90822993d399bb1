//! `archmax sessions` after real runs: listing (text and JSON), the detail
//! view, unknown ids. No `ARCHMAX_*` variable is set for these commands: the
//! listing never calls a model and does not need credentials.

use serde_json::{Value, json};

use crate::run::{completed_script, raise_script, workspace};
use crate::scripted::ScriptedServer;
use crate::support::{Workspace, cli};

/// A workspace with a completed session `s-1` and a failed session `f-1`.
fn two_sessions() -> Workspace {
    let ws = workspace();
    let mut script = completed_script();
    script.extend(raise_script());
    let server = ScriptedServer::start(script).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "Where is KK-1?", "--session", "s-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "status?", "--session", "f-1"],
    );
    assert_eq!(r.code, 1, "{}", r.err);
    ws
}

fn spec_hash(ws: &Workspace) -> String {
    let specs = std::fs::read_dir(ws.root().join("sessions/_specs")).expect("specs");
    let names: Vec<String> = specs
        .filter_map(Result::ok)
        .map(|e| {
            e.file_name()
                .to_string_lossy()
                .trim_end_matches(".json")
                .to_string()
        })
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    names[0].clone()
}

#[test]
fn the_listing_in_text() {
    let ws = two_sessions();
    let r = cli(&ws, None, &["sessions"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!("{}\n✔ sessions\n", ws.header("orders", None))
    );
    let mut lines: Vec<&str> = r.out.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        vec![
            "  f-1  failed  finished  state=classify  exit=orders-unavailable  vars=trigger",
            "  s-1  completed  finished  state=answer  vars=trigger",
        ]
    );
}

#[test]
fn the_listing_in_json() {
    let ws = two_sessions();
    let hash = spec_hash(&ws);
    let r = cli(&ws, None, &["sessions", "--json"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.err, ws.header("orders", None));
    assert!(
        r.out.ends_with("]\n") && r.out.contains("\n  {\n"),
        "pretty, 2 spaces"
    );
    let mut all: Vec<Value> = serde_json::from_str::<Vec<Value>>(&r.out).expect("a JSON array");
    all.sort_by_key(|v| v["sessionId"].as_str().unwrap_or_default().to_string());
    let trigger = json!({ "trigger": { "value": "manual", "locked": true } });
    assert_eq!(
        all,
        vec![
            json!({
                "sessionId": "f-1",
                "status": "failed",
                "classification": "finished",
                "workflowState": "classify",
                "specHash": hash,
                "exit": { "success": false, "code": "orders-unavailable", "reason": "the order system is down" },
                "variables": trigger,
            }),
            json!({
                "sessionId": "s-1",
                "status": "completed",
                "classification": "finished",
                "workflowState": "answer",
                "specHash": hash,
                "variables": trigger,
                "usage": { "inputTokens": 22869, "outputTokens": 90, "cacheReadTokens": 0, "cacheCreationTokens": 0 },
            }),
        ]
    );
    // Key order follows the SessionSummary declaration.
    let keys: Vec<&str> = all[0]
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    assert_eq!(
        keys,
        vec![
            "sessionId",
            "status",
            "classification",
            "workflowState",
            "specHash",
            "exit",
            "variables"
        ]
    );
}

#[test]
fn the_detail_view() {
    let ws = two_sessions();
    let hash = spec_hash(&ws);
    let r = cli(&ws, None, &["sessions", "f-1"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!("{}\n✔ session f-1\n", ws.header("orders", None))
    );
    assert_eq!(
        r.out,
        format!(
            "  status   failed  (finished)\n  state    classify\n  raised   orders-unavailable: the order system is down\n  spec     {hash}\n  variables\n    trigger (locked) = \"manual\"\n"
        )
    );
    let r = cli(&ws, None, &["sessions", "s-1", "--json"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).expect("JSON");
    assert_eq!(v["sessionId"], "s-1");
    assert_eq!(v["workflowState"], "answer");
    assert!(v.get("exit").is_none());
}

#[test]
fn an_open_session_without_variables() {
    let ws = two_sessions();
    // A copy of s-1's state, mid-turn, with no variables and no state yet.
    let raw = std::fs::read_to_string(ws.root().join("sessions/s-1/checkpoints/state.json"))
        .expect("state");
    let mut doc: Value = serde_json::from_str(&raw).expect("JSON");
    doc["state"]["status"] = json!("running");
    doc["state"]["workflowState"] = json!("");
    doc["state"]["specHash"] = json!("");
    doc["state"]["variables"] = json!({});
    let dir = ws.root().join("sessions/v-1/checkpoints");
    std::fs::create_dir_all(&dir).expect("dir");
    // The transcript prefix the cache covers (later checkpoint lines would win over it).
    let transcript = std::fs::read(ws.root().join("sessions/s-1/checkpoints/transcript.jsonl"))
        .expect("transcript");
    let covered = doc["transcript_bytes"].as_u64().expect("covered bytes") as usize;
    std::fs::write(dir.join("transcript.jsonl"), &transcript[..covered]).expect("transcript");
    std::fs::write(dir.join("state.json"), doc.to_string()).expect("state");
    let r = cli(&ws, None, &["sessions", "v-1"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.out,
        "  status   running  (open)\n  state    ?\n  variables  none set\n"
    );
    let r = cli(&ws, None, &["sessions"]);
    assert!(
        r.out.contains("  v-1  running  open  state=?\n"),
        "{}",
        r.out
    );
}

#[test]
fn no_sessions_and_unknown_ids() {
    let ws = workspace();
    std::fs::remove_dir_all(ws.root().join("sessions")).expect("clear sessions");
    let r = cli(&ws, None, &["sessions"]);
    assert_eq!(
        (r.code, r.out.as_str()),
        (0, "No durable sessions found.\n")
    );
    assert_eq!(r.err, format!("{}\n", ws.header("orders", None)));
    let r = cli(&ws, None, &["sessions", "--json"]);
    assert_eq!((r.code, r.out.as_str()), (0, "[]\n"));
    for args in [&["sessions", "nope"][..], &["sessions", "nope", "--json"]] {
        let r = cli(&ws, None, args);
        assert_eq!((r.code, r.out.as_str()), (1, ""));
        // No header: an unknown session has no workflow to name.
        assert_eq!(
            r.err,
            "Error: no durable session 'nope'. Use 'archmax sessions' to list them.\n"
        );
    }
}
