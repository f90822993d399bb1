//! `archmax sessions history` and `archmax sessions fork`, over the filesystem store and
//! (with `ARCHMAX_TEST_PG_URL`) PostgreSQL: a parked session's steps listed, a fork of the
//! parked step decided another way, the original untouched.

use serde_json::Value;

use crate::parks::{handover, workspace};
use crate::scripted::{Reply, ScriptedServer};
use crate::support::cli_with;

fn history_and_fork(env: &[(&str, &str)]) {
    let ws = workspace();
    let mut script = handover();
    script[0] = script[0]
        .clone()
        .with_usage(serde_json::json!({ "prompt_tokens": 11, "completion_tokens": 3 }));
    script.push(Reply::text("Refund paid."));
    script.push(Reply::text("Redrafted the refund."));
    let server = ScriptedServer::start(script).expect("server");
    let run = |args: &[&str]| cli_with(&ws, Some(&server), env, false, args);
    let r = run(&["run", "refunds", "Refund order 8", "--session", "r-1"]);
    assert_eq!(r.code, 0, "{}", r.err);

    let r = run(&["sessions", "history", "r-1"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.err.contains("✔ session r-1: "), "{}", r.err);
    assert!(
        r.err
            .contains("fork from a step: archmax sessions fork r-1 --at <step>"),
        "{}",
        r.err
    );
    let lines: Vec<&str> = r.out.lines().collect();
    assert!(lines[0].trim_start().starts_with("1  "), "{}", r.out);
    assert!(
        lines[0].contains("started by manual; message \"Refund order 8\""),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains("called archmax_advance; moved to review; parked for a decision at review"),
        "{}",
        r.out
    );

    let r = run(&["sessions", "history", "r-1", "--json"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let steps: Value = serde_json::from_str(&r.out).expect("json");
    let parked = steps
        .as_array()
        .expect("steps")
        .iter()
        .find(|s| s["status"] == "awaiting_decision")
        .expect("a parked step");
    let at = parked["step"].as_u64().expect("step");
    assert_eq!(parked["state"], "review");
    assert!(parked["at"].as_str().is_some_and(|t| t.ends_with('Z')));

    let r = run(&["decide", "r-1", "--to", "paid"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let before = run(&["sessions", "history", "r-1", "--json"]).out;

    let at_text = at.to_string();
    let r = run(&["sessions", "fork", "r-1", "--at", &at_text]);
    assert_eq!(r.code, 0, "{}", r.err);
    let fork = format!("r-1-fork-{at}");
    assert!(
        r.err
            .contains(&format!("✔ forked r-1 at step {at} into {fork}")),
        "{}",
        r.err
    );
    assert!(
        r.out.contains("  status   awaiting_decision  (open)"),
        "{}",
        r.out
    );
    assert!(r.out.contains("  awaiting review"), "{}", r.out);
    assert!(
        r.out.contains("  spent    14 tokens (11 in, 3 out)\n"),
        "the spend up to the step: {}",
        r.out
    );
    assert!(
        r.out
            .contains(&format!("  forked   from r-1 step {at} at ")),
        "{}",
        r.out
    );
    assert!(
        r.out
            .contains(&format!("  next     archmax decide {fork} --to <state>")),
        "{}",
        r.out
    );
    // The fork goes the other way; the original stays as it was.
    let r = run(&["decide", &fork, "--to", "draft"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(run(&["sessions", "history", "r-1", "--json"]).out, before);
    let r = run(&["sessions", &fork, "--json"]);
    let summary: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(summary["forkedFrom"]["sessionId"], "r-1");
    assert_eq!(summary["forkedFrom"]["step"], at);
    assert_eq!(summary["workflowState"], "draft");
    let r = run(&["sessions", "r-1", "--json"]);
    let original: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(original["workflowState"], "paid");
    assert!(original.get("forkedFrom").is_none());

    // --as names the fork; a taken id, a missing step, a missing --at are refused.
    let r = run(&[
        "sessions", "fork", "r-1", "--at", "1", "--as", "again", "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    let again: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(again["sessionId"], "again");
    let r = run(&["sessions", "fork", "r-1", "--at", "1", "--as", "again"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err
            .contains("Session 'again' already exists: choose another id for the fork."),
        "{}",
        r.err
    );
    let r = run(&["sessions", "fork", "r-1", "--at", "99"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err
            .contains("Session 'r-1' has no step 99: its steps are 1 to"),
        "{}",
        r.err
    );
    let r = run(&["sessions", "fork", "r-1"]);
    assert_eq!(r.code, 2, "{}", r.err);
    assert!(r.err.contains("needs --at <step>"), "{}", r.err);
    let r = run(&["sessions", "fork", "r-1", "--at", "zero"]);
    assert_eq!(r.code, 2, "{}", r.err);
    let r = run(&["sessions", "r-1", "--at", "2"]);
    assert_eq!(r.code, 2, "{}", r.err);
    let r = run(&["sessions", "history"]);
    assert_eq!(r.code, 2, "{}", r.err);
}

#[test]
fn history_and_fork_on_the_filesystem_store() {
    history_and_fork(&[]);
}

#[test]
fn history_and_fork_on_the_postgres_store() {
    let Some(url) = crate::postgres::store_url() else {
        return;
    };
    history_and_fork(&[("ARCHMAX_SESSION_STORE", url.as_str())]);
}

/// A fork of a step inside a turn is a turn its process left off: a PostgreSQL worker
/// finishes it from that step, as it finishes a turn a stopped worker left.
#[test]
fn a_worker_finishes_the_turn_of_a_fork_made_inside_one() {
    let Some(url) = crate::postgres::store_url() else {
        return;
    };
    let env = [("ARCHMAX_SESSION_STORE", url.as_str())];
    let ws = workspace();
    let mut script = handover();
    // The fork's turn, run again from its first step.
    script.extend(handover());
    let server = ScriptedServer::start(script).expect("server");
    let run = |args: &[&str]| cli_with(&ws, Some(&server), &env, false, args);
    let r = run(&["run", "refunds", "Refund order 8", "--session", "m-1"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let r = run(&[
        "sessions", "fork", "m-1", "--at", "1", "--as", "m-2", "--json",
    ]);
    assert_eq!(r.code, 0, "{}", r.err);
    let fork: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(fork["status"], "running");
    let r = run(&["worker", "refunds", "--once"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.err.contains("  resuming m-2: its turn was interrupted"),
        "{}",
        r.err
    );
    assert!(r.err.contains("  m-2: awaiting_decision\n"), "{}", r.err);
    let r = run(&["sessions", "m-2", "--json"]);
    let summary: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(summary["status"], "awaiting_decision");
    assert_eq!(summary["forkedFrom"]["step"], 1);
    // The original was not touched.
    let r = run(&["sessions", "m-1", "--json"]);
    let original: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(original["status"], "awaiting_decision");
    assert!(original.get("forkedFrom").is_none());
}
