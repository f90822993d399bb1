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

/// Sizes from the environment (`PG_WORKER_SESSIONS`, `PG_WORKER_KILLS`), else CI's.
fn size(var: &str, ci: usize) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ci)
}

/// 4 `archmax worker` processes over one database wake `PG_WORKER_SESSIONS` due waits
/// while one of them is killed with SIGKILL `PG_WORKER_KILLS` times (a replacement starts
/// each time): no session is woken twice, every session loads whole, none is left waiting
/// past its due time or held past its lease, and only a killed worker's session in flight
/// is left interrupted. Prints the figures (`-- --nocapture`).
#[test]
fn workers_killed_mid_turn_wake_every_due_session_once() {
    use std::process::{Child, Command, Stdio};
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

    let replies = (0..sessions * 2 + kills)
        .map(|_| Reply::text("Payment received.").after(Duration::from_millis(100)))
        .collect();
    let server = ScriptedServer::start(replies).expect("server");
    let spawn = || -> Child {
        Command::new(env!("CARGO_BIN_EXE_archmax"))
            .args([
                "worker",
                "refunds",
                "--once",
                "--trigger",
                "payment",
                "--poll",
                "50",
            ])
            .current_dir(ws.root())
            .env("ARCHMAX_SESSION_STORE", &url)
            .env("ARCHMAX_API_BASE_URL", server.url())
            .env("ARCHMAX_API_KEY", "test-key")
            .env("ARCHMAX_MODEL", "scripted-model")
            .env("ARCHMAX_CLI_NO_BANNER", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn a worker")
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
    let mut last = spawn();
    assert!(last.wait().expect("worker").success());
    let elapsed = started.elapsed();

    let requests: Vec<String> = server.requests().iter().map(|r| r.to_string()).collect();
    let store = archmax_store_pg::PgStore::connect(&url).expect("store");
    let (mut finished, mut interrupted) = (0, 0);
    for i in 0..sessions {
        let wakes = requests.iter().filter(|r| r.contains(&order(i))).count();
        assert!(wakes <= 1, "session w-{i} was woken {wakes} times");
        let id = SessionId::parse(&format!("w-{i}")).expect("id");
        let snap = store.load(&id).expect("loads whole").expect("present");
        assert_ne!(
            snap.state["status"], "awaiting_input",
            "w-{i} still waits past its due time"
        );
        let replied = snap
            .messages
            .last()
            .is_some_and(|m| m["content"] == "Payment received.");
        if replied {
            finished += 1;
        } else {
            // Killed after the delivery's commit, before or during its model call: the
            // committed step is there and the turn never finished.
            interrupted += 1;
            assert_eq!(snap.state["status"], "running", "w-{i}");
        }
        drop(store.acquire(&id).expect("no lease outlives its expiry"));
    }
    assert!(
        interrupted <= killed,
        "{interrupted} interrupted by {killed} kills"
    );
    assert_eq!(finished + interrupted, sessions);
    println!(
        "pg workers: {sessions} sessions, 4 workers, {killed} kills: {finished} woken and finished, {interrupted} interrupted mid-turn, 0 woken twice; {:.1} wakes/s ({:.2} s, including one lease expiry of {} ms)",
        finished as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64(),
        ttl.as_millis()
    );
}
