//! `ARCHMAX_SESSION_STORE=postgres://…`: the session commands over the PostgreSQL store,
//! and `archmax worker` waking a due wait. Needs `ARCHMAX_TEST_PG_URL` (`.ci/run` starts a
//! server); without it these fail under CI and are skipped elsewhere.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::parks::{waiting_until, workspace};
use crate::scripted::{Reply, ScriptedServer};
use crate::support::cli_with;

/// A URL of the test database with a schema of its own, `None` (said why) when not set.
pub fn store_url() -> Option<String> {
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
    // A due time in the past: due at once (the runtime records now).
    let mut script = waiting_until("2020-01-01T09:00:00Z");
    script.push(Reply::text("Payment received."));
    let server = ScriptedServer::start(script).expect("server");
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

/// An `archmax worker refunds <args>` process over the store at `url`, its model `server`.
fn worker_process(
    ws: &crate::support::Workspace,
    url: &str,
    server: &ScriptedServer,
    args: &[&str],
) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_archmax"))
        .args(["worker", "refunds"])
        .args(args)
        .current_dir(ws.root())
        .env("ARCHMAX_SESSION_STORE", url)
        .env("ARCHMAX_API_BASE_URL", server.url())
        .env("ARCHMAX_API_KEY", "test-key")
        .env("ARCHMAX_MODEL", "scripted-model")
        .env("ARCHMAX_CLI_NO_BANNER", "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn a worker")
}

/// Sizes from the environment (`PG_WORKER_SESSIONS`, `PG_WORKER_KILLS`), else CI's.
fn size(var: &str, ci: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ci)
}

/// 4 `archmax worker` processes over one database wake `PG_WORKER_SESSIONS` due waits
/// while one of them is killed with SIGKILL `PG_WORKER_KILLS` times, mid-turn (a
/// replacement starts each time), then a last worker runs once the killed workers' leases
/// expired. At the end: 0 sessions stuck (every turn a kill interrupted was finished by
/// another worker: none left `running` or waiting past its due time, none leased past its
/// expiry), 0 lost steps (every transcript begins with what the session held before the
/// workers ran, and loads whole), 0 double turns (each session's delivery applied once and
/// answered once; the only repeated model calls are the ones a kill cut off). Prints the
/// figures (`-- --nocapture`).
#[test]
fn workers_killed_mid_turn_leave_no_session_stuck_no_step_lost_no_turn_doubled() {
    use std::process::Child;
    use std::time::{Duration, Instant};

    use archmax_machine::store::{SessionId, SessionStore};

    let Some(url) = store_url() else { return };
    let sessions = size("PG_WORKER_SESSIONS", 16);
    let kills = size("PG_WORKER_KILLS", 3);
    let ttl = Duration::from_millis(1500);
    let url = format!("{url}&lease_ttl_ms={}", ttl.as_millis());
    let ws = workspace();
    let env = [("ARCHMAX_SESSION_STORE", url.as_str())];
    let order = |i: usize| format!("Refund order <{i}>");
    let setup = (0..sessions)
        .flat_map(|_| waiting_until("2020-01-01T09:00:00Z"))
        .collect();
    let setup = ScriptedServer::start(setup).expect("server");
    for i in 0..sessions {
        let id = format!("w-{i}");
        let r = cli_with(
            &ws,
            Some(&setup),
            &env,
            false,
            &["run", "refunds", &order(i), "--session", &id],
        );
        assert_eq!(r.code, 0, "{}", r.err);
    }
    let before: Vec<Vec<serde_json::Value>> = {
        let store = archmax_store_pg::PgStore::connect(&url).expect("store");
        (0..sessions)
            .map(|i| {
                let id = SessionId::parse(&format!("w-{i}")).expect("id");
                store.load(&id).expect("load").expect("present").messages
            })
            .collect()
    };

    let replies = (0..sessions * 2 + kills)
        .map(|_| Reply::text("Payment received.").after(Duration::from_millis(100)))
        .collect();
    let server = ScriptedServer::start(replies).expect("server");
    let spawn = || {
        worker_process(
            &ws,
            &url,
            &server,
            &["--once", "--trigger", "payment", "--poll", "50"],
        )
    };
    let started = Instant::now();
    let mut workers: Vec<Child> = (0..4).map(|_| spawn()).collect();
    let mut killed = 0;
    while killed < kills {
        // Let the workers make progress, then kill one while its model call is in flight.
        let seen = server.requests().len();
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut all_done = false;
        while server.requests().len() < seen + 2 && Instant::now() < deadline {
            all_done = workers
                .iter_mut()
                .all(|w| w.try_wait().ok().flatten().is_some());
            if all_done {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        if all_done {
            break; // everything was woken before all the kills happened
        }
        let victim = killed % workers.len();
        let _ = workers[victim].kill();
        let _ = workers[victim].wait();
        workers[victim] = spawn();
        killed += 1;
    }
    for w in &mut workers {
        let _ = w.wait();
    }
    // A killed worker's unstarted claims are due again once its claim expires.
    std::thread::sleep(ttl + Duration::from_millis(300));
    // Turns the kills interrupted that no worker has finished yet: the last worker's.
    let left_running = {
        let store = archmax_store_pg::PgStore::connect(&url).expect("store");
        (0..sessions)
            .filter(|i| {
                let id = SessionId::parse(&format!("w-{i}")).expect("id");
                store.load_state(&id).expect("load").expect("present")["status"] == "running"
            })
            .count()
    };
    let mut last = spawn();
    assert!(last.wait().expect("worker").success());
    let elapsed = started.elapsed();

    let requests: Vec<String> = server.requests().iter().map(|r| r.to_string()).collect();
    let store = archmax_store_pg::PgStore::connect(&url).expect("store");
    let (mut stuck, mut lost, mut double, mut resumed) = (0, 0, 0, 0);
    let mut extra_calls = 0;
    for (i, held) in before.iter().enumerate() {
        let calls = requests.iter().filter(|r| r.contains(&order(i))).count();
        assert!(calls >= 1, "session w-{i} was never woken");
        if calls > 1 {
            resumed += 1;
            extra_calls += calls - 1;
        }
        let id = SessionId::parse(&format!("w-{i}")).expect("id");
        let snap = store.load(&id).expect("loads whole").expect("present");
        let status = snap.state["status"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if status == "running" || status == "awaiting_input" {
            stuck += 1;
            eprintln!("w-{i} is stuck '{status}'");
        }
        if !snap.messages.starts_with(held) {
            lost += 1;
            eprintln!("w-{i} lost a step it held before the workers ran");
        }
        let events = snap
            .messages
            .iter()
            .filter(|m| m["role"] == "tool" && m["archmax"]["note"] == "event")
            .count();
        let answers = snap
            .messages
            .iter()
            .filter(|m| m["content"] == "Payment received.")
            .count();
        if events != 1 || answers != 1 {
            double += 1;
            eprintln!("w-{i}: {events} deliveries applied, {answers} answers");
        }
        drop(store.acquire(&id).expect("no lease outlives its expiry"));
    }
    println!(
        "pg workers: {sessions} sessions, 4 workers, {killed} kills: {stuck} stuck past their lease, {lost} lost steps, {double} double turns; {} interrupted turns finished by another worker ({extra_calls} model calls repeated); {:.1} sessions/s ({:.2} s, including one lease expiry of {} ms)",
        resumed.max(left_running),
        sessions as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64(),
        ttl.as_millis()
    );
    assert_eq!(
        (stuck, lost, double),
        (0, 0, 0),
        "stuck, lost steps, double turns"
    );
    assert!(
        extra_calls <= killed,
        "{extra_calls} repeated model calls for {killed} kills"
    );
    assert!(
        killed == 0 || resumed.max(left_running) > 0,
        "no kill interrupted a turn: the probe did not test recovery"
    );
}

/// The Outcome of a delivery without what differs between two sessions given the same
/// delivery: the id and the times (the trail's, the park's).
fn comparable(mut outcome: serde_json::Value) -> serde_json::Value {
    if let Some(map) = outcome.as_object_mut() {
        map.remove("sessionId");
    }
    if let Some(pending) = outcome["pending"].as_object_mut() {
        pending.remove("parkedAt");
    }
    if let Some(trail) = outcome["auditTrail"].as_array_mut() {
        for step in trail {
            if let Some(step) = step.as_object_mut() {
                step.remove("ts");
            }
        }
    }
    outcome
}

/// `archmax deliver --enqueue` queues deliveries in the database; one `archmax worker` runs
/// each once, a session's in arrival order, and stores the Outcome a direct `archmax deliver`
/// gives (or its refusal, which `--wait` reports as a direct deliver would).
#[test]
fn queued_deliveries_run_once_in_order_with_the_outcome_of_a_direct_delivery() {
    use archmax_machine::store::{SessionId, SessionStore};
    use serde_json::json;

    let Some(url) = store_url() else { return };
    let ws = workspace();
    let rewait = || {
        vec![
            Reply::tool_calls(vec![(
                "c3",
                "archmax_wait",
                json!({ "reason": "the second instalment", "until": "2999-01-01T09:00:00Z" }),
            )]),
            Reply::text("Waiting for the second instalment."),
        ]
    };
    let mut script = waiting_until("2999-01-01T09:00:00Z"); // q-1
    script.extend(waiting_until("2999-01-01T09:00:00Z")); // d-1
    script.extend(rewait()); // the direct delivery to d-1
    script.extend(rewait()); // q-1's first queued delivery
    script.push(Reply::text("Payment received.")); // q-1's second
    script.extend(waiting_until("2999-01-01T09:00:00Z")); // w-2
    script.push(Reply::text("Paid, thank you.")); // w-2's delivery, awaited with --wait
    let server = ScriptedServer::start(script).expect("server");
    let env = [("ARCHMAX_SESSION_STORE", url.as_str())];
    for id in ["q-1", "d-1"] {
        let r = cli_with(
            &ws,
            Some(&server),
            &env,
            false,
            &["run", "refunds", "Refund order 9", "--session", id],
        );
        assert_eq!(r.code, 0, "{}", r.err);
    }
    let direct = cli_with(
        &ws,
        Some(&server),
        &env,
        false,
        &[
            "deliver",
            "d-1",
            "--trigger",
            "payment",
            "--variables",
            r#"{"n": 1}"#,
            "--json",
        ],
    );
    assert_eq!(direct.code, 0, "{}", direct.err);
    let direct: serde_json::Value = serde_json::from_str(&direct.out).expect("outcome JSON");

    let mut queued = Vec::new();
    for n in [1, 2] {
        let vars = format!(r#"{{"n": {n}}}"#);
        let r = cli_with(
            &ws,
            None,
            &env,
            false,
            &[
                "deliver",
                "q-1",
                "--trigger",
                "payment",
                "--variables",
                &vars,
                "--enqueue",
                "--json",
            ],
        );
        assert_eq!(r.code, 0, "{}", r.err);
        let answer: serde_json::Value = serde_json::from_str(&r.out).expect("JSON");
        assert_eq!(answer["status"], "queued");
        let seq = answer["delivery"].as_i64().expect("its number");
        assert!(
            r.err.contains(&format!(
                "✔ queued delivery {seq} of 'payment' for session q-1\n"
            )),
            "{}",
            r.err
        );
        queued.push(seq);
    }
    let store = archmax_store_pg::PgStore::connect(&url).expect("store");
    let q1 = SessionId::parse("q-1").expect("id");
    assert_eq!(
        store.load_state(&q1).expect("load").expect("present")["status"],
        "awaiting_input",
        "queued, not run"
    );

    let r = cli_with(
        &ws,
        Some(&server),
        &env,
        false,
        &["worker", "refunds", "--once"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let first = r
        .err
        .find(&format!(
            "delivering 'payment' to q-1 (delivery {})",
            queued[0]
        ))
        .expect("the first delivery ran");
    let second = r
        .err
        .find(&format!(
            "delivering 'payment' to q-1 (delivery {})",
            queued[1]
        ))
        .expect("the second delivery ran");
    assert!(first < second, "in arrival order: {}", r.err);
    assert!(r.err.ends_with("✔ woke 2 sessions\n"), "{}", r.err);

    let one = store.delivery(queued[0]).expect("read").expect("stored");
    assert_eq!((one.status, one.error.as_deref()), ("done", None));
    let outcome = one.outcome.expect("an outcome");
    assert_eq!(outcome["sessionId"], "q-1");
    assert_eq!(comparable(outcome), comparable(direct));
    let two = store.delivery(queued[1]).expect("read").expect("stored");
    let outcome = two.outcome.expect("an outcome");
    assert_eq!(outcome["reply"], "Payment received.");
    assert_eq!(outcome["variables"]["n"]["value"], 2, "{outcome}");
    // Each applied once: two event notes in the transcript, in order.
    let snap = store.load(&q1).expect("load").expect("present");
    let events: Vec<&str> = snap
        .messages
        .iter()
        .filter(|m| m["role"] == "tool" && m["archmax"]["note"] == "event")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(
        events[0].contains(": n=1 ") && events[1].contains(": n=2 "),
        "{events:?}"
    );
    assert_eq!(
        server.requests().len(),
        11,
        "no model call beyond the script"
    );

    // A delivery the runtime refuses is recorded with its refusal; --wait reports it as
    // a direct deliver does, from a worker running elsewhere.
    let mut worker = worker_process(&ws, &url, &server, &["--poll", "50"]);
    let r = cli_with(
        &ws,
        None,
        &env,
        false,
        &[
            "deliver",
            "q-1",
            "--trigger",
            "payment",
            "--enqueue",
            "--wait",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(
        r.err.ends_with("Error: Session 'q-1' is not parked awaiting an event; there is nothing to deliver to. A session awaiting a human decision resumes through a decision instead.\n"),
        "{}",
        r.err
    );
    // And a delivery that runs: --wait reports its reply (--json: its Outcome), exit 0.
    let r = cli_with(
        &ws,
        Some(&server),
        &env,
        false,
        &["run", "refunds", "Refund order 10", "--session", "w-2"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let r = cli_with(
        &ws,
        None,
        &env,
        false,
        &[
            "deliver",
            "w-2",
            "--trigger",
            "payment",
            "--enqueue",
            "--wait",
            "--json",
        ],
    );
    let _ = worker.kill();
    let _ = worker.wait();
    assert_eq!(r.code, 0, "{}", r.err);
    let outcome: serde_json::Value = serde_json::from_str(&r.out).expect("the Outcome");
    assert_eq!(
        (
            &outcome["sessionId"],
            &outcome["reply"],
            &outcome["disposition"]
        ),
        (&json!("w-2"), &json!("Paid, thank you."), &json!("deliver"))
    );
    assert!(
        r.err.contains(&format!(
            "ran: session w-2 is {}\n",
            outcome["status"].as_str().expect("a status")
        )),
        "{}",
        r.err
    );

    let r = cli_with(
        &ws,
        None,
        &[],
        false,
        &["deliver", "q-1", "--trigger", "payment", "--enqueue"],
    );
    assert_eq!(r.code, 1);
    assert!(
        r.err
            .contains("Error: --enqueue needs ARCHMAX_SESSION_STORE=postgres://…"),
        "{}",
        r.err
    );
}

/// A `running` session the worker cannot resume (its state does not read) is reported and
/// left, and `--once` still ends: it is not claimed again and again.
#[test]
fn an_interrupted_session_that_cannot_be_resumed_is_reported_and_left() {
    use archmax_machine::store::{SessionId, SessionStore, Step};
    use serde_json::json;

    let Some(url) = store_url() else { return };
    let ws = workspace();
    let server = ScriptedServer::start(vec![]).expect("server");
    let store = archmax_store_pg::PgStore::connect(&url).expect("store");
    let id = SessionId::parse("broken-1").expect("id");
    let state = json!({"workflow": "refunds", "status": "running", "workflowState": 5});
    store
        .commit(
            &id,
            Step {
                new_messages: &[],
                state: &state,
            },
        )
        .expect("commit");
    let env = [("ARCHMAX_SESSION_STORE", url.as_str())];
    let r = cli_with(
        &ws,
        Some(&server),
        &env,
        false,
        &["worker", "refunds", "--once"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.err
            .contains("  resuming broken-1: its turn was interrupted"),
        "{}",
        r.err
    );
    assert!(
        r.err.contains("  broken-1: ") && r.err.contains("unreadable state"),
        "{}",
        r.err
    );
    assert!(r.err.ends_with("✔ woke 0 sessions\n"), "{}", r.err);
    assert!(server.requests().is_empty());
    // Its claim was dropped: another worker (or a fix) may take it.
    drop(store.acquire(&id).expect("not leased"));
}

#[test]
fn test_runs_its_cases_in_the_chosen_postgres_store_and_clears_them() {
    let Some(url) = store_url() else { return };
    let ws = workspace();
    let tests = ws.root().join("workflows/refunds/tests");
    std::fs::create_dir_all(&tests).expect("tests folder");
    std::fs::write(
        tests.join("greet.test.yaml"),
        "title: A greeting\ndescription: The agent greets and completes in draft.\nsteps:\n  - send: hi\n  - reply: { includes: Hello }\n",
    )
    .expect("case");
    let env = [("ARCHMAX_SESSION_STORE", url.as_str())];
    let server = ScriptedServer::start(vec![Reply::text("Hello there.")]).expect("server");
    // The workspace's store is this database too: `archmax test` does not use it unless named.
    let r = cli_with(
        &ws,
        Some(&server),
        &env,
        false,
        &["test", "refunds", "--json"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.err, r.out);
    let listed = cli_with(&ws, None, &env, false, &["sessions", "--json"]);
    assert_eq!(listed.out, "[]\n", "{}", listed.err);
    // Named with --store and --keep: the case's session is there, then pruned by id.
    let server = ScriptedServer::start(vec![Reply::text("Hello there.")]).expect("server");
    let r = cli_with(
        &ws,
        Some(&server),
        &[],
        false,
        &[
            "test",
            "refunds",
            "--store",
            url.as_str(),
            "--keep",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.err, r.out);
    let v: serde_json::Value = serde_json::from_str(&r.out).expect("json");
    let sid = v["results"][0]["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let shown = cli_with(&ws, None, &env, false, &["sessions", &sid, "--json"]);
    assert_eq!(shown.code, 0, "{}", shown.err);
    let s: serde_json::Value = serde_json::from_str(&shown.out).expect("json");
    assert_eq!(s["standing"]["kind"], "idle", "{s}");
    let pruned = cli_with(
        &ws,
        None,
        &env,
        false,
        &["sessions", "prune", "--status", "idle", "--json"],
    );
    assert_eq!(pruned.code, 0, "{}", pruned.err);
    let report: serde_json::Value = serde_json::from_str(&pruned.out).expect("json");
    assert_eq!(report["pruned"][0]["sessionId"], sid.as_str(), "{report}");
    // Without --keep, the chosen store is left without the case's session.
    let server = ScriptedServer::start(vec![Reply::text("Hello there.")]).expect("server");
    let r = cli_with(
        &ws,
        Some(&server),
        &[],
        false,
        &["test", "refunds", "--store", url.as_str(), "--json"],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.err, r.out);
    let listed = cli_with(&ws, None, &env, false, &["sessions", "--json"]);
    assert_eq!(listed.out, "[]\n", "{}", listed.err);
}
