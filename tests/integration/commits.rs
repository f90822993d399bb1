//! Durable commits leave the turn's thread free: a store whose commit waits on the disk
//! commits on a blocking thread, so a turn polled on one thread (Node's event loop, for a
//! JS-driven turn) does not hold that thread for its `fdatasync`s.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use archmax_machine::store::{
    FsStore, SessionId, SessionStore, Snapshot, Step, StoreError, WriterLease,
};
use archmax_machine::{OutcomeKind, SendInput};
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, rt};
use serde_json::{Value, json};

const SPEC: &str = r#"
title: Notes
instructions: Write notes.
mounts:
  allow_always: []
states:
  write:
    triggers: { manual: }
    instructions: Write the notes.
"#;

/// The filesystem store, each commit slowed by `delay` (a slow disk), recording the
/// thread every commit ran on.
struct SlowDisk {
    inner: FsStore,
    delay: Duration,
    threads: Mutex<Vec<ThreadId>>,
    /// Each commit's number of new messages and state.
    steps: Mutex<Vec<(usize, Value)>>,
    /// How many spec snapshots were written.
    snapshots: AtomicUsize,
}

impl SlowDisk {
    fn new(root: &std::path::Path, delay: Duration) -> SlowDisk {
        SlowDisk {
            inner: FsStore::new(root),
            delay,
            threads: Mutex::new(Vec::new()),
            steps: Mutex::new(Vec::new()),
            snapshots: AtomicUsize::new(0),
        }
    }
}

impl SessionStore for SlowDisk {
    fn load(&self, id: &SessionId) -> Result<Option<Snapshot>, StoreError> {
        self.inner.load(id)
    }
    fn load_state(&self, id: &SessionId) -> Result<Option<Value>, StoreError> {
        self.inner.load_state(id)
    }
    fn commit(&self, id: &SessionId, step: Step<'_>) -> Result<(), StoreError> {
        if let Ok(mut t) = self.threads.lock() {
            t.push(std::thread::current().id());
        }
        if let Ok(mut s) = self.steps.lock() {
            s.push((step.new_messages.len(), step.state.clone()));
        }
        std::thread::sleep(self.delay);
        self.inner.commit(id, step)
    }
    fn list(&self) -> Result<Vec<String>, StoreError> {
        self.inner.list()
    }
    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        self.inner.delete(id)
    }
    fn acquire(&self, id: &SessionId) -> Result<WriterLease, StoreError> {
        self.inner.acquire(id)
    }
    fn write_spec_snapshot(&self, hash: &str, spec: &Value) -> Result<(), StoreError> {
        self.snapshots.fetch_add(1, Ordering::SeqCst);
        self.inner.write_spec_snapshot(hash, spec)
    }
    fn read_spec_snapshot(&self, hash: &str) -> Result<Option<Value>, StoreError> {
        self.inner.read_spec_snapshot(hash)
    }
    fn session_dir(&self, id: &SessionId) -> Option<std::path::PathBuf> {
        self.inner.session_dir(id)
    }
    fn waits_on_disk(&self) -> bool {
        self.inner.waits_on_disk()
    }
}

/// The notes workflow on `store`, its model `server`.
fn on_store(
    ws: &TempWorkspace,
    server: &InProcessModel,
    store: &Arc<SlowDisk>,
) -> archmax_machine::Harness {
    let shared: Arc<dyn SessionStore> = store.clone();
    archmax_tests::harness(ws.root(), "notes", server, "m", |o| {
        o.store = shared;
    })
}

/// One turn of `message` on session `id`.
fn send(h: &archmax_machine::Harness, id: &str, message: &str) -> archmax_machine::Outcome {
    let input = SendInput {
        message: message.into(),
        ..SendInput::default()
    };
    rt().block_on(h.send(id, input)).expect("turn")
}

#[test]
fn a_turns_commits_run_off_its_thread_and_the_steps_are_durable() {
    let ws = TempWorkspace::new(&[("workflows/notes/workflow.yaml", SPEC)]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({ "file_path": "scratchpad/a.md", "content": "alpha" }),
        )]),
        Reply::tool_calls(vec![(
            "c2",
            "write_file",
            json!({ "file_path": "scratchpad/b.md", "content": "beta" }),
        )]),
        Reply::text("Both written."),
    ]);
    let store = Arc::new(SlowDisk::new(ws.root(), Duration::from_millis(100)));
    let h = on_store(&ws, &server, &store);
    let here = std::thread::current().id();
    let ticks = Arc::new(AtomicUsize::new(0));
    let out = rt().block_on(async {
        // Another task on the turn's (single) thread, as the host's timers are on Node's.
        let ticking = Arc::clone(&ticks);
        let ticker = tokio::spawn(async move {
            loop {
                ticking.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        });
        let input = SendInput {
            message: "Write them.".into(),
            ..SendInput::default()
        };
        let out = h.send("n1", input).await;
        ticker.abort();
        out
    });
    let out = out.expect("turn");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    let threads = store.threads.lock().expect("lock").clone();
    assert!(threads.len() >= 3, "a commit per step: {}", threads.len());
    assert!(
        threads.iter().all(|t| *t != here),
        "a commit ran on the turn's thread"
    );
    // ≥ 300 ms of commits; a thread held by them would have ticked a handful of times.
    let ticks = ticks.load(Ordering::SeqCst);
    assert!(ticks >= 30, "the turn's thread was held: {ticks} ticks");
    // Every step is durable: a fresh store reads the whole transcript back.
    let snapshot = FsStore::new(ws.root())
        .load(&SessionId::parse("n1").expect("id"))
        .expect("load")
        .expect("committed");
    assert!(
        snapshot
            .messages
            .iter()
            .any(|m| m["content"] == "Both written.")
    );
}

/// A commit with nothing new (no message, the state of the commit before it) is not made:
/// a completed turn's closing bookkeeping, when the completion already committed it, costs
/// no store call. Every commit that is made still carries something.
#[test]
fn a_commit_with_nothing_new_is_not_made() {
    let ws = TempWorkspace::new(&[("workflows/notes/workflow.yaml", SPEC)]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({ "file_path": "scratchpad/a.md", "content": "alpha" }),
        )]),
        Reply::text("Written."),
    ]);
    let store = Arc::new(SlowDisk::new(ws.root(), Duration::ZERO));
    let h = on_store(&ws, &server, &store);
    let out = send(&h, "n1", "Write it.");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    let steps = store.steps.lock().expect("lock").clone();
    assert!(
        steps.len() >= 3,
        "the opening, a step, the completion: {steps:?}"
    );
    for pair in steps.windows(2) {
        assert!(
            pair[1].0 > 0 || pair[1].1 != pair[0].1,
            "a commit with nothing new was made: {pair:?}"
        );
    }
    assert_eq!(
        steps.last().map(|s| s.1["status"].clone()),
        Some(json!("completed"))
    );
    let snapshot = FsStore::new(ws.root())
        .load(&SessionId::parse("n1").expect("id"))
        .expect("load")
        .expect("committed");
    assert_eq!(snapshot.state["status"], "completed");
}

/// The spec snapshot is written by the first turn of a harness; the sessions it starts
/// after that record the same hash without a store call for it.
#[test]
fn a_harness_writes_its_spec_snapshot_once() {
    let ws = TempWorkspace::new(&[("workflows/notes/workflow.yaml", SPEC)]);
    let server = InProcessModel::new(vec![Reply::text("One."), Reply::text("Two.")]);
    let store = Arc::new(SlowDisk::new(ws.root(), Duration::ZERO));
    let h = on_store(&ws, &server, &store);
    for id in ["s1", "s2"] {
        let out = send(&h, id, "Hello.");
        assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    }
    assert_eq!(store.snapshots.load(Ordering::SeqCst), 1);
    let fresh = FsStore::new(ws.root());
    let hashes: Vec<String> = ["s1", "s2"]
        .iter()
        .map(|id| {
            let state = fresh
                .load_state(&SessionId::parse(id).expect("id"))
                .expect("load")
                .expect("state");
            state["specHash"].as_str().unwrap_or_default().to_string()
        })
        .collect();
    assert!(!hashes[0].is_empty(), "{hashes:?}");
    assert_eq!(hashes[0], hashes[1]);
    assert!(
        fresh
            .read_spec_snapshot(&hashes[0])
            .expect("read")
            .is_some(),
        "the snapshot both sessions name is in the store"
    );
}
