//! `archmax sessions` after real runs: listing (text and JSON), the detail
//! view, unknown ids. No `ARCHMAX_*` variable is set for these commands: the
//! listing never calls a model and does not need credentials.

use serde_json::{Value, json};

use crate::run::{completed_script, raise_script, workspace};
use crate::scripted::ScriptedServer;
use crate::support::{Workspace, cli, no_times};

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
    let out = no_times(&r.out);
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    // The original's line, then where the session stands: an agent's raise is a failure that
    // does not resume; `answer` has no transitions, so its completed session is done.
    assert_eq!(
        lines,
        vec![
            "  f-1  failed  finished  state=classify  exit=orders-unavailable  vars=trigger  → failed at 'classify' · <age>",
            "  s-1  completed  finished  state=answer  vars=trigger  → done at 'answer'",
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
    for v in &mut all {
        let since = v["standing"]
            .as_object_mut()
            .and_then(|s| s.remove("since"));
        assert!(since.is_some_and(|t| t.as_u64().is_some_and(|t| t > 1_700_000_000_000)));
    }
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
                "standing": { "kind": "failed", "state": "classify", "resumable": false },
            }),
            json!({
                "sessionId": "s-1",
                "status": "completed",
                "classification": "finished",
                "workflowState": "answer",
                "specHash": hash,
                "variables": trigger,
                "usage": { "inputTokens": 22869, "outputTokens": 90, "cacheReadTokens": 0, "cacheCreationTokens": 0 },
                "standing": { "kind": "done", "state": "answer", "resumable": false },
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
            "variables",
            "standing"
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
        no_times(&r.out),
        format!(
            "  status   failed  (finished)\n  state    classify\n  raised   orders-unavailable: the order system is down\n  standing failed at 'classify'  since <t> (<age> ago)\n  spec     {hash}\n  variables\n    trigger (locked) = \"manual\"\n"
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
        no_times(&r.out),
        "  status   running  (open)\n  state    ?\n  standing running  since <t> (<age> ago)\n  spent    22959 tokens (22869 in, 90 out)\n  variables  none set\n"
    );
    let r = cli(&ws, None, &["sessions"]);
    assert!(
        no_times(&r.out).contains("  v-1  running  open  state=?  → running · <age>\n"),
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

/// [`two_sessions`] plus `i-1`, whose turn answered at `classify` (not a terminal state),
/// and `c-1`, a copy of `f-1` whose turn was cancelled.
fn four_sessions() -> Workspace {
    let ws = two_sessions();
    let server =
        ScriptedServer::start(vec![crate::scripted::Reply::text("Which order?")]).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "hello", "--session", "i-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let from = ws.root().join("sessions/f-1/checkpoints");
    let to = ws.root().join("sessions/c-1/checkpoints");
    std::fs::create_dir_all(&to).expect("dir");
    std::fs::copy(from.join("transcript.jsonl"), to.join("transcript.jsonl")).expect("copy");
    let raw = std::fs::read_to_string(from.join("state.json")).expect("state");
    let mut doc: Value = serde_json::from_str(&raw).expect("JSON");
    doc["state"]["exit"] = json!({ "code": "turn-cancelled", "reason": "the turn was cancelled" });
    // Stood so since before i-1 ran: the longest-stalled.
    doc["state"]["statusSince"] = json!(1_700_000_000_000u64);
    std::fs::write(to.join("state.json"), doc.to_string()).expect("state");
    ws
}

fn listed_ids(out: &str) -> Vec<String> {
    let all: Vec<Value> = serde_json::from_str(out).expect("a JSON array");
    all.iter()
        .map(|v| v["sessionId"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_listing_by_standing_and_age() {
    let ws = four_sessions();
    let r = cli(&ws, None, &["sessions", "--status", "idle"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        no_times(&r.out),
        "  i-1  completed  finished  state=classify  vars=trigger  → idle at 'classify' (not a terminal state) · <age>\n"
    );
    let r = cli(
        &ws,
        None,
        &["sessions", "--status", "failed,cancelled", "--json"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let mut ids = listed_ids(&r.out);
    ids.sort();
    assert_eq!(ids, ["c-1", "f-1"]);
    // The original's status values name the standings they cover.
    let r = cli(&ws, None, &["sessions", "--status", "completed", "--json"]);
    let mut ids = listed_ids(&r.out);
    ids.sort();
    assert_eq!(ids, ["i-1", "s-1"]);
    let r = cli(&ws, None, &["sessions", "--older-than", "1h", "--json"]);
    assert_eq!(listed_ids(&r.out), ["c-1"]);
    let r = cli(&ws, None, &["sessions", "--status", "waiting"]);
    assert_eq!((r.code, r.out.as_str()), (0, "No sessions match.\n"));

    let r = cli(&ws, None, &["sessions", "c-1"]);
    assert!(
        no_times(&r.out).contains(
            "  raised   turn-cancelled: the turn was cancelled\n  standing cancelled at 'classify', resumable  since <t> (<age> ago)\n  next     archmax run orders \"<message>\" --session c-1   (continues at 'classify')\n"
        ),
        "{}",
        r.out
    );
    let r = cli(&ws, None, &["sessions", "c-1", "--json"]);
    let v: Value = serde_json::from_str(&r.out).expect("JSON");
    // The original's fields as they were, the standing beside them.
    assert_eq!(
        (v["status"].clone(), v["classification"].clone()),
        (json!("failed"), json!("finished"))
    );
    assert_eq!(
        v["standing"],
        json!({ "kind": "cancelled", "state": "classify", "resumable": true, "since": 1_700_000_000_000u64 })
    );
}

#[test]
fn the_attention_view_lists_stalled_sessions_longest_first() {
    let ws = four_sessions();
    let r = cli(&ws, None, &["sessions", "--attention"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!(
            "{}\n✔ sessions needing attention\n",
            ws.header("orders", None)
        )
    );
    let out = no_times(&r.out);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "  c-1  failed  finished  state=classify  exit=turn-cancelled  vars=trigger  → cancelled at 'classify', resumable · <age>",
            "  i-1  completed  finished  state=classify  vars=trigger  → idle at 'classify' (not a terminal state) · <age>",
        ]
    );
    let r = cli(&ws, None, &["sessions", "--attention", "--json"]);
    assert_eq!(listed_ids(&r.out), ["c-1", "i-1"]);
}

#[test]
fn bad_filters_are_usage_errors() {
    let ws = four_sessions();
    for (args, message) in [
        (
            &["sessions", "--status", "stuck"][..],
            "--status: 'stuck' is not a session status; use running, awaiting-decision, awaiting-input, waiting, idle, done, failed, cancelled, rejected (or the original's completed, awaiting_decision, awaiting_input)",
        ),
        (
            &["sessions", "--older-than", "a week"],
            "--older-than: 'a week' is not an age; write a whole number and a unit: 30s, 15m, 12h, 7d or 2w",
        ),
        (
            &["sessions", "--dry-run"],
            "--dry-run applies to 'archmax sessions prune'",
        ),
        (
            &["sessions", "s-1", "--status", "idle"],
            "--status, --older-than and --attention select sessions to list; omit the session 's-1'",
        ),
        (
            &["sessions", "prune", "--attention"],
            "--attention is a listing; prune by --status and --older-than",
        ),
        (
            &["sessions", "prune", "--status", "awaiting-decision"],
            "a prune by status never removes a awaiting-decision session (running or parked); name the session to remove one: prune <session>",
        ),
        (
            &["sessions", "prune", "s-1", "--status", "done"],
            "a prune by session id takes no --status or --older-than: it removes 's-1' whatever it stands as",
        ),
        (
            &["sessions", "s-1", "f-1"],
            "unexpected argument 'f-1' (one session at a time)",
        ),
    ] {
        let r = cli(&ws, None, args);
        assert_eq!(r.code, 2, "{args:?}: {}", r.err);
        assert!(
            r.err.ends_with(&format!(
                "Error: {message} (try: archmax sessions --help)\n"
            )),
            "{args:?}: {}",
            r.err
        );
    }
}

#[test]
fn prune_removes_ended_sessions_after_a_dry_run() {
    let ws = four_sessions();
    let dir = |id: &str| ws.root().join("sessions").join(id);
    let r = cli(&ws, None, &["sessions", "prune", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!(
            "{}\n⚠ dry run: 3 sessions would be pruned\n",
            ws.header("orders", None)
        )
    );
    let out = no_times(&r.out);
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "  c-1  cancelled at 'classify', resumable · <age>  workflow=orders",
            "  f-1  failed at 'classify' · <age>  workflow=orders",
            "  s-1  done at 'answer'  workflow=orders",
        ]
    );
    assert!(dir("s-1").exists() && dir("f-1").exists() && dir("c-1").exists());
    // Only what stood so for a day: c-1.
    let r = cli(
        &ws,
        None,
        &["sessions", "prune", "--older-than", "1d", "--json"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let report: Value = serde_json::from_str(&r.out).expect("JSON");
    assert_eq!(report["dryRun"], false);
    assert_eq!(report["pruned"][0]["sessionId"], "c-1");
    assert_eq!(report["pruned"].as_array().map(Vec::len), Some(1));
    assert!(!dir("c-1").exists());
    let r = cli(&ws, None, &["sessions", "prune", "--status", "failed"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.err.ends_with("✔ pruned 1 session\n"), "{}", r.err);
    assert!(!dir("f-1").exists() && dir("s-1").exists() && dir("i-1").exists());
    // Idle only when named, or by id.
    let r = cli(&ws, None, &["sessions", "prune"]);
    assert!(r.err.ends_with("✔ pruned 1 session\n"), "{}", r.err);
    assert!(!dir("s-1").exists() && dir("i-1").exists());
    let r = cli(&ws, None, &["sessions", "prune", "i-1"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(!dir("i-1").exists());
    let r = cli(&ws, None, &["sessions", "prune", "i-1"]);
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert_eq!(
        r.err,
        "Error: no durable session 'i-1'. Use 'archmax sessions' to list them.\n"
    );
}
