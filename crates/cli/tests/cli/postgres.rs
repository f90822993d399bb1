//! `ARCHMAX_SESSION_STORE=postgres://…`: the session commands over the PostgreSQL store,
//! and `archmax worker` waking a due wait. Needs `ARCHMAX_TEST_PG_URL` (`.ci/run` starts a
//! server); without it these fail under CI and are skipped elsewhere.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;

use crate::parks::workspace;
use crate::scripted::{Reply, ScriptedServer};
use crate::support::cli_with;

/// A URL of the test database with a schema of its own, `None` (said why) when not set.
fn store_url() -> Option<String> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let Some(url) = std::env::var("ARCHMAX_TEST_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        assert!(
            std::env::var("CI").map_or(true, |v| v.is_empty() || v == "false"),
            "ARCHMAX_TEST_PG_URL is not set: CI must run the PostgreSQL tests (scripts/pg-test-server.sh)"
        );
        eprintln!("skipped: ARCHMAX_TEST_PG_URL is not set");
        return None;
    };
    let n = N.fetch_add(1, Ordering::SeqCst);
    Some(format!("{url}?schema=cli_{}_{n}", std::process::id()))
}

#[test]
fn sessions_live_in_postgres_and_a_worker_wakes_a_due_wait() {
    let Some(url) = store_url() else { return };
    let ws = workspace();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "poll", "reason": "await payment" }),
        )]),
        // A due time in the past: due at once (the runtime records now).
        Reply::tool_calls(vec![(
            "c2",
            "archmax_wait",
            json!({ "reason": "the payment", "until": "2020-01-01T09:00:00Z" }),
        )]),
        Reply::text("I am waiting for your payment."),
        Reply::text("Payment received."),
    ])
    .expect("server");
    let env = [("ARCHMAX_SESSION_STORE", url.as_str())];
    let r = cli_with(
        &ws,
        Some(&server),
        &env,
        false,
        &["run", "refunds", "Refund order 8", "--session", "w-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(!ws.root().join("sessions").exists(), "nothing on disk");
    let r = cli_with(&ws, Some(&server), &env, false, &["sessions"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.out.contains("w-1"), "{}", r.out);
    let due = r
        .out
        .split_once("due=")
        .and_then(|(_, rest)| rest.lines().next())
        .expect("a due time")
        .to_string();
    assert!(
        due.len() == 24 && due.ends_with('Z') && due.as_str() > "2026",
        "{due}"
    );

    let r = cli_with(
        &ws,
        Some(&server),
        &env,
        false,
        &["worker", "refunds", "--once", "--trigger", "payment"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.err.contains(&format!(
            "  waking w-1 (due {due}) with trigger 'payment'\n"
        )),
        "{}",
        r.err
    );
    assert!(
        r.err.contains("✔ payment delivered, resuming poll"),
        "{}",
        r.err
    );
    assert!(r.err.ends_with("✔ woke 1 session\n"), "{}", r.err);
    let r = cli_with(&ws, Some(&server), &env, false, &["sessions", "w-1"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out.contains("trigger (locked) = \"payment\""),
        "{}",
        r.out
    );
    assert!(!r.out.contains("waiting for"), "{}", r.out);
    // Woken once: nothing is due any more.
    let r = cli_with(
        &ws,
        Some(&server),
        &env,
        false,
        &["worker", "refunds", "--once"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.err.ends_with("✔ woke 0 sessions\n"), "{}", r.err);
}

#[test]
fn the_worker_needs_a_postgres_store_and_a_bad_store_value_is_named() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![]).expect("server");
    let r = cli_with(
        &ws,
        Some(&server),
        &[],
        false,
        &["worker", "refunds", "--once"],
    );
    assert_eq!(r.code, 1);
    assert_eq!(
        r.err,
        "Error: archmax worker needs ARCHMAX_SESSION_STORE=postgres://…: it wakes sessions other processes parked, which the filesystem store cannot hand out to one worker at a time\n"
    );
    let env = [("ARCHMAX_SESSION_STORE", "redis://x")];
    for args in [&["worker", "refunds", "--once"][..], &["sessions"][..]] {
        let r = cli_with(&ws, Some(&server), &env, false, args);
        assert_eq!(r.code, 1, "{args:?}");
        assert!(
            r.err.ends_with("Error: ARCHMAX_SESSION_STORE must be a postgres:// or postgresql:// URL (or unset, for the workspace's sessions folder), got 'redis://x'\n"),
            "{args:?}: {}",
            r.err
        );
    }
    let r = cli_with(
        &ws,
        Some(&server),
        &[],
        false,
        &["worker", "refunds", "--poll", "soon"],
    );
    assert_eq!(r.code, 2);
    assert!(
        r.err
            .starts_with("Error: --poll must be a positive number of milliseconds, got 'soon'"),
        "{}",
        r.err
    );
}
