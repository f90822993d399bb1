//! What only the PostgreSQL store promises: leases across store instances (workers) with
//! expiry and fencing, due-time claims, the versioned schema, files shared by workers.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

mod common;

use std::collections::HashSet;
use std::path::Path;
use std::sync::{Arc, Barrier};
use std::time::Duration;

use archmax_machine::store::{SessionId, SessionStore, Step, StoreError};
use archmax_store_pg::{PgStore, SCHEMA_VERSION};
use serde_json::{Value, json};

fn sid(s: &str) -> SessionId {
    SessionId::parse(s).unwrap()
}

fn commit(store: &dyn SessionStore, id: &SessionId, msgs: &[Value], state: &Value) {
    store
        .commit(
            id,
            Step {
                new_messages: msgs,
                state,
            },
        )
        .expect("commit");
}

fn waiting(resume_at: &str) -> Value {
    json!({"workflow": "waits", "status": "awaiting_input", "park": {"channel": "input", "state": "wait", "reason": "r", "parkedAt": "2026-01-01T00:00:00.000Z", "resumeAt": resume_at}})
}

#[test]
fn two_workers_one_writer_and_the_busy_text() {
    let Some((a, schema)) = common::store("lease") else {
        return;
    };
    let b = schema.store();
    let id = sid("s");
    commit(&a, &id, &[json!({"n": 1})], &json!({"status": "running"}));
    let lease = a.acquire(&id).expect("first worker");
    let err = b.acquire(&id).expect_err("second worker refused");
    assert_eq!(
        err.to_string(),
        "Session 's' has a turn in progress (status 'running'). A session has a single writer: retry once the turn parks or ends."
    );
    assert_eq!(
        schema.scalar("SELECT holder FROM archmax_leases WHERE session_id = 's'"),
        Some(a.holder().to_string())
    );
    drop(lease);
    assert_eq!(
        schema.scalar("SELECT count(*) FROM archmax_leases"),
        Some("0".into())
    );
    drop(b.acquire(&id).expect("after release"));
}

#[test]
fn a_crashed_workers_lease_is_taken_over_after_its_expiry_and_it_cannot_commit() {
    let Some((a, schema)) = common::store_with_ttl("expiry", Duration::from_millis(600)) else {
        return;
    };
    let b = schema
        .builder()
        .lease_ttl(Duration::from_millis(600))
        .connect()
        .unwrap();
    let id = sid("s");
    // A worker that died holding the lease: its row stays, nobody renews it.
    schema.sql("INSERT INTO archmax_leases VALUES ('s', 'dead-worker', now() + interval '700 milliseconds')");
    assert!(matches!(b.acquire(&id), Err(StoreError::Busy { .. })));
    std::thread::sleep(Duration::from_millis(900));
    let taken = b.acquire(&id).expect("taken over after expiry");
    assert_eq!(
        schema.scalar("SELECT holder FROM archmax_leases"),
        Some(b.holder().to_string())
    );
    // The heartbeat keeps a live lease: past several time-to-lives it is still held.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(matches!(a.acquire(&id), Err(StoreError::Busy { .. })));
    // A holder whose lease was taken (here: moved to someone else behind its back) is
    // fenced: its commit fails and writes nothing.
    schema.sql("UPDATE archmax_leases SET holder = 'thief'");
    let err = b
        .commit(
            &id,
            Step {
                new_messages: &[json!({"n": 1})],
                state: &json!({"status": "running"}),
            },
        )
        .expect_err("fenced");
    assert!(
        err.to_string().contains("the writer lease was lost"),
        "{err}"
    );
    assert!(err.to_string().contains("session 's'"), "{err}");
    assert_eq!(b.load(&id).unwrap(), None);
    drop(taken);
    // Its release does not delete the lease it no longer holds.
    assert_eq!(
        schema.scalar("SELECT holder FROM archmax_leases"),
        Some("thief".into())
    );
}

#[test]
fn many_workers_race_for_one_session() {
    let Some((_first, schema)) = common::store("race") else {
        return;
    };
    let stores: Vec<PgStore> = (0..6).map(|_| schema.store()).collect();
    let barrier = Arc::new(Barrier::new(stores.len()));
    let wins: usize = stores
        .into_iter()
        .map(|store| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let got = store.acquire(&sid("hot"));
                std::thread::sleep(Duration::from_millis(100));
                usize::from(got.is_ok())
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .sum();
    assert_eq!(wins, 1);
}

#[test]
fn due_waits_are_claimed_once_among_many_workers() {
    let Some((store, schema)) = common::store("due") else {
        return;
    };
    for n in 0..40 {
        commit(
            &store,
            &sid(&format!("w{n:02}")),
            &[],
            &waiting("2020-01-01T00:00:00.000Z"),
        );
    }
    commit(
        &store,
        &sid("later"),
        &[],
        &waiting("2999-01-01T00:00:00.000Z"),
    );
    commit(&store, &sid("running"), &[], &json!({"status": "running"}));
    let workers: Vec<PgStore> = (0..4).map(|_| schema.store()).collect();
    let barrier = Arc::new(Barrier::new(workers.len()));
    let claimed: Vec<String> = workers
        .into_iter()
        .map(|w| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let mut mine = Vec::new();
                loop {
                    let got = w.claim_due(3, None).expect("claim");
                    if got.is_empty() {
                        return mine;
                    }
                    for d in got {
                        assert_eq!(d.due_at, "2020-01-01T00:00:00.000Z");
                        mine.push(d.id);
                    }
                }
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let unique: HashSet<&String> = claimed.iter().collect();
    assert_eq!(claimed.len(), 40, "each due session once");
    assert_eq!(unique.len(), 40);
    assert!(!unique.contains(&"later".to_string()));
    // A claim is a lease on the wake-up: not due again until it expires (30 s here)...
    assert!(store.claim_due(100, None).unwrap().is_empty());
    let next = store.next_due_in().unwrap().expect("a due time is stored");
    assert!(next > Duration::from_secs(20), "{next:?}");
    // ...and a commit that leaves the wait clears the due time.
    commit(&store, &sid("w00"), &[], &json!({"status": "running"}));
    assert_eq!(
        schema.scalar("SELECT due_at FROM archmax_sessions WHERE id = 'w00'"),
        None
    );
    // An expired claim (the claimer died before resuming) is due again.
    schema.sql("UPDATE archmax_sessions SET due_at = now() - interval '1 second' WHERE id = 'w01'");
    let again = store.claim_due(10, Some("other")).unwrap();
    assert!(
        again.is_empty(),
        "another workflow's worker does not take it"
    );
    let again = store.claim_due(10, Some("waits")).unwrap();
    assert_eq!(
        again.iter().map(|d| d.id.as_str()).collect::<Vec<_>>(),
        vec!["w01"]
    );
}

#[test]
fn a_session_written_before_the_history_table_keeps_its_latest_state_as_step_one() {
    let Some((store, schema)) = common::store("upgrade") else {
        return;
    };
    commit(
        &store,
        &sid("old"),
        &[json!(1), json!(2)],
        &json!({"status": "completed"}),
    );
    // The tables as version 2 made them, holding that session.
    schema.sql(
        "DROP TABLE archmax_checkpoints; ALTER TABLE archmax_sessions DROP COLUMN steps; \
         UPDATE archmax_schema SET version = 2",
    );
    let upgraded = schema.store();
    let h = upgraded.history(&sid("old")).unwrap().expect("present");
    assert_eq!(h.checkpoints.len(), 1);
    assert_eq!(h.checkpoints[0].step, 1);
    assert_eq!(h.checkpoints[0].transcript_len, 2);
    assert_eq!(h.checkpoints[0].state, json!({"status": "completed"}));
    assert!(h.checkpoints[0].at.is_some());
    assert_eq!(h.messages, vec![json!(1), json!(2)]);
    // Its next commit is step 2.
    commit(
        &upgraded,
        &sid("old"),
        &[json!(3)],
        &json!({"status": "running"}),
    );
    let h = upgraded.history(&sid("old")).unwrap().expect("present");
    assert_eq!(
        h.checkpoints
            .iter()
            .map(|c| (c.step, c.transcript_len))
            .collect::<Vec<_>>(),
        vec![(1, 2), (2, 3)]
    );
    assert_eq!(
        schema.scalar("SELECT version FROM archmax_schema"),
        Some(SCHEMA_VERSION.to_string())
    );
}

#[test]
fn schema_is_versioned_and_a_newer_one_is_refused() {
    let Some((store, schema)) = common::store("schema") else {
        return;
    };
    assert_eq!(
        schema.scalar("SELECT version FROM archmax_schema"),
        Some(SCHEMA_VERSION.to_string())
    );
    assert_eq!(
        schema.scalar("SELECT count(*) FROM archmax_schema"),
        Some("1".into())
    );
    // Connecting again migrates nothing and keeps the data.
    commit(
        &store,
        &sid("kept"),
        &[json!(1)],
        &json!({"status": "completed"}),
    );
    let again = schema.store();
    assert_eq!(again.list().unwrap(), vec!["kept"]);
    schema.sql(&format!(
        "UPDATE archmax_schema SET version = {}",
        SCHEMA_VERSION + 1
    ));
    let err = schema.builder().connect().expect_err("newer schema");
    assert_eq!(
        err.to_string(),
        format!(
            "session store (postgres): cannot connect: the database holds archmax tables of schema version {}, newer than this build's {SCHEMA_VERSION}: upgrade archmax",
            SCHEMA_VERSION + 1
        )
    );
}

#[test]
fn bad_configuration_is_named() {
    let err = PgStore::connect("mysql://nope").expect_err("not postgres");
    assert!(
        err.to_string()
            .starts_with("session store (postgres): cannot connect: not a PostgreSQL URL"),
        "{err}"
    );
    let err = PgStore::builder("postgres://127.0.0.1/x")
        .schema("bad-name; drop")
        .connect()
        .expect_err("bad schema");
    assert_eq!(
        err.to_string(),
        "session store (postgres): cannot connect: invalid schema name 'bad-name; drop': expected ASCII letters, digits and '_', not starting with a digit, at most 63 bytes"
    );
    // Nothing listens on port 1 of the loopback: the driver's refusal is passed on.
    let err = PgStore::builder("postgres://archmax@127.0.0.1:1/x")
        .connect()
        .expect_err("unreachable");
    let text = err.to_string();
    assert!(
        text.starts_with("session store (postgres): cannot connect: "),
        "{text}"
    );
    assert!(text.to_lowercase().contains("refused"), "{text}");
}

#[test]
fn another_worker_sees_the_session_files_once_it_takes_the_lease() {
    let Some((a, schema)) = common::store("files") else {
        return;
    };
    let b = schema.store();
    let id = sid("s");
    let lease = a.acquire(&id).unwrap();
    commit(&a, &id, &[json!(1)], &json!({"status": "running"}));
    let files = a.session_files(&id).unwrap();
    let deep = files.dir.join("scratchpad/notes/today.md");
    files
        .backend
        .write_confined(&files.dir, &deep, b"first")
        .unwrap();
    // b's view is loaded now, before a's second write.
    let seen = b.session_files(&id).unwrap();
    assert_eq!(seen.backend.read(&deep).unwrap(), b"first");
    files.backend.write(&deep, b"second").unwrap();
    files
        .backend
        .write(&files.dir.join("gone.txt"), b"x")
        .unwrap();
    files
        .backend
        .remove_file(&files.dir.join("gone.txt"))
        .unwrap();
    drop(lease);
    let lease_b = b.acquire(&id).unwrap();
    assert_eq!(seen.backend.read(&deep).unwrap(), b"second");
    assert_eq!(
        seen.backend
            .read(&files.dir.join("gone.txt"))
            .unwrap_err()
            .kind(),
        std::io::ErrorKind::NotFound
    );
    let mut names = seen
        .backend
        .read_dir(&files.dir.join("scratchpad"))
        .unwrap();
    names.sort();
    assert_eq!(names, vec!["notes"]);
    assert_eq!(
        schema.scalar("SELECT string_agg(path, ',' ORDER BY path) FROM archmax_files"),
        Some("scratchpad,scratchpad/notes,scratchpad/notes/today.md".into())
    );
    // Paths outside the session are refused as in memory.
    assert_eq!(
        seen.backend
            .write(Path::new("/etc/x"), b"x")
            .unwrap_err()
            .kind(),
        std::io::ErrorKind::PermissionDenied
    );
    drop(lease_b);
}

#[test]
fn a_step_is_one_transaction() {
    let Some((store, schema)) = common::store("tx") else {
        return;
    };
    let id = sid("s");
    commit(
        &store,
        &id,
        &[json!({"n": 1})],
        &json!({"status": "running", "step": 1}),
    );
    // A NUL in a message survives (JSON text, escaped).
    commit(
        &store,
        &id,
        &[json!("nul \u{0000} here")],
        &json!({"status": "running", "step": 2}),
    );
    // A step the database refuses part of (here: a row squatting on its next message's
    // place) fails whole: neither the messages nor the state move.
    schema.sql("INSERT INTO archmax_messages VALUES ('s', 3, '\"squatter\"')");
    let err = store
        .commit(
            &id,
            Step {
                new_messages: &[json!({"n": 3}), json!({"n": 4})],
                state: &json!({"status": "running", "step": 3}),
            },
        )
        .expect_err("refused by the database");
    assert!(
        err.to_string()
            .starts_with("session store (postgres): cannot commit session 's': duplicate key"),
        "{err}"
    );
    let snap = store.load(&id).unwrap().unwrap();
    assert_eq!(snap.state, json!({"status": "running", "step": 2}));
    assert_eq!(
        snap.messages,
        vec![json!({"n": 1}), json!("nul \u{0000} here")]
    );
    assert_eq!(
        schema.scalar("SELECT transcript_len FROM archmax_sessions"),
        Some("2".into())
    );
}

#[test]
fn interrupted_turns_are_claimed_once_among_many_workers() {
    let Some((store, schema)) = common::store("interrupted") else {
        return;
    };
    let running = json!({"workflow": "waits", "status": "running"});
    for n in 0..30 {
        commit(
            &store,
            &sid(&format!("r{n:02}")),
            &[json!({"n": n})],
            &running,
        );
    }
    commit(
        &store,
        &sid("done"),
        &[],
        &json!({"workflow": "waits", "status": "completed"}),
    );
    // A child session of a delegation is its root's to run again.
    commit(&store, &sid("r02~child"), &[], &running);
    // A turn in progress elsewhere: its lease is live, so it is not interrupted.
    schema.sql(
        "INSERT INTO archmax_leases VALUES ('r00', 'live-worker', now() + interval '1 hour'); \
         INSERT INTO archmax_leases VALUES ('r01', 'dead-worker', now() - interval '1 second')",
    );
    assert!(
        store
            .claim_interrupted(10, Some("other"))
            .unwrap()
            .is_empty()
    );
    let workers: Vec<PgStore> = (0..4).map(|_| schema.store()).collect();
    let barrier = Arc::new(Barrier::new(workers.len()));
    let claimed: Vec<String> = workers
        .into_iter()
        .map(|w| {
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let mut mine = Vec::new();
                loop {
                    let got = w.claim_interrupted(3, Some("waits")).expect("claim");
                    if got.is_empty() {
                        return mine;
                    }
                    for s in got {
                        // The claim is the claimer's lease row: its own acquire takes it...
                        let id = sid(&s.id);
                        let lease = w.acquire(&id).expect("the claimer's acquire");
                        // ...and the finished turn leaves `running` before the lease drops.
                        commit(
                            &w,
                            &id,
                            &[],
                            &json!({"workflow": "waits", "status": "completed"}),
                        );
                        drop(lease);
                        mine.push(s.id);
                    }
                }
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    let unique: HashSet<&String> = claimed.iter().collect();
    assert_eq!(
        claimed.len(),
        29,
        "every interrupted session once: {claimed:?}"
    );
    assert_eq!(unique.len(), 29);
    assert!(
        !unique.contains(&"r00".to_string()),
        "a live lease is not taken"
    );
    assert!(unique.contains(&"r01".to_string()), "an expired lease is");
    assert!(
        !unique.contains(&"r02~child".to_string()),
        "a child session is not"
    );
    assert_eq!(
        schema.scalar("SELECT count(*) FROM archmax_leases WHERE holder <> 'live-worker'"),
        Some("0".into()),
        "every claim ended with its lease"
    );

    // While a claim is held, nobody else gets the session, and a dropped claim frees it.
    commit(&store, &sid("r05"), &[], &running);
    let other = schema.store();
    let got = store.claim_interrupted(10, None).unwrap();
    assert_eq!(
        got.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
        vec!["r05"]
    );
    assert!(other.claim_interrupted(10, None).unwrap().is_empty());
    assert!(matches!(
        other.acquire(&sid("r05")),
        Err(StoreError::Busy { .. })
    ));
    store.drop_claim("r05").unwrap();
    assert_eq!(
        other
            .claim_interrupted(10, None)
            .unwrap()
            .iter()
            .map(|s| s.id.as_str())
            .collect::<Vec<_>>(),
        vec!["r05"]
    );
}

#[test]
fn deliveries_are_claimed_once_in_order_per_session_and_applied_by_the_commit() {
    use archmax_store_pg::Delivery;
    let Some((store, schema)) = common::store("deliveries") else {
        return;
    };
    let parked = json!({"workflow": "waits", "status": "awaiting_input"});
    commit(&store, &sid("a"), &[], &parked);
    commit(&store, &sid("b"), &[], &parked);
    let queue = |session: &str, n: i64| {
        let mut variables = serde_json::Map::new();
        variables.insert("n".into(), json!(n));
        store
            .enqueue_delivery(&Delivery {
                session: session.into(),
                workflow: Some("waits".into()),
                trigger: "payment".into(),
                variables,
                message: (n == 2).then(|| "paid".to_string()),
            })
            .unwrap()
    };
    let a1 = queue("a", 1);
    let b1 = queue("b", 1);
    let a2 = queue("a", 2);
    assert!(a1 < b1 && b1 < a2);
    assert_eq!(store.delivery(a1).unwrap().unwrap().status, "queued");

    // Two workers: each session's oldest delivery, once; the later one waits for it.
    let other = schema.store();
    let mut first = store.claim_deliveries(1, Some("waits")).unwrap();
    first.extend(other.claim_deliveries(10, Some("waits")).unwrap());
    assert_eq!(
        first.iter().map(|c| c.seq).collect::<Vec<_>>(),
        vec![a1, b1]
    );
    assert_eq!(first[0].delivery.variables["n"], 1);
    assert!(!first[0].applied);
    assert!(store.claim_deliveries(10, None).unwrap().is_empty());
    assert!(
        other
            .claim_deliveries(10, Some("other"))
            .unwrap()
            .is_empty()
    );
    assert_eq!(store.delivery(a1).unwrap().unwrap().status, "claimed");

    // The commit that applies it marks it applied in its own transaction.
    let lease = store.acquire(&sid("a")).unwrap();
    store.apply_on_commit("a", a1);
    commit(
        &store,
        &sid("a"),
        &[json!({"role": "user", "content": "event"})],
        &json!({"workflow": "waits", "status": "running"}),
    );
    assert_eq!(store.delivery(a1).unwrap().unwrap().status, "applied");
    commit(&store, &sid("a"), &[], &parked);
    drop(lease);
    let outcome = json!({"kind": "parked", "status": "awaiting_input"});
    store.finish_delivery(a1, Ok(&outcome)).unwrap();
    let done = store.delivery(a1).unwrap().unwrap();
    assert_eq!(
        (done.status, done.outcome, done.error),
        ("done", Some(outcome), None)
    );

    // Now a2 is next for `a`; `b` is held by a writer, so its next one would wait.
    let next = other.claim_deliveries(10, None).unwrap();
    assert_eq!(next.iter().map(|c| c.seq).collect::<Vec<_>>(), vec![a2]);
    assert_eq!(next[0].delivery.message.as_deref(), Some("paid"));
    other
        .finish_delivery(a2, Err("Session 'a' is not parked"))
        .unwrap();
    assert_eq!(
        store.delivery(a2).unwrap().unwrap().error.as_deref(),
        Some("Session 'a' is not parked")
    );

    // A busy session hands its delivery back; it is claimed again once the writer is gone.
    store.release_delivery(b1).unwrap();
    let held = other.acquire(&sid("b")).unwrap();
    assert!(
        store.claim_deliveries(10, None).unwrap().is_empty(),
        "b has a writer"
    );
    drop(held);
    let again = store.claim_deliveries(10, None).unwrap();
    assert_eq!(again.iter().map(|c| c.seq).collect::<Vec<_>>(), vec![b1]);

    // Applied by a worker that stopped mid-turn: back only once the claim expired and the
    // session is no longer running, flagged applied (to finish, not to deliver again).
    let lease = store.acquire(&sid("b")).unwrap();
    store.apply_on_commit("b", b1);
    commit(
        &store,
        &sid("b"),
        &[],
        &json!({"workflow": "waits", "status": "running"}),
    );
    drop(lease);
    schema.sql("UPDATE archmax_deliveries SET claimed_until = now() - interval '1 second'");
    assert!(
        store.claim_deliveries(10, None).unwrap().is_empty(),
        "its turn is still interrupted"
    );
    commit(
        &store,
        &sid("b"),
        &[],
        &json!({"workflow": "waits", "status": "completed"}),
    );
    let stale = store.claim_deliveries(10, None).unwrap();
    assert_eq!(
        stale.iter().map(|c| (c.seq, c.applied)).collect::<Vec<_>>(),
        vec![(b1, true)]
    );
    store
        .finish_applied("b", &json!({"status": "completed"}))
        .unwrap();
    assert_eq!(store.delivery(b1).unwrap().unwrap().status, "done");
    assert_eq!(store.delivery(9999).unwrap(), None);
}
