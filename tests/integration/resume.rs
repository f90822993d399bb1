//! `Harness::resume_interrupted`: a turn whose process stopped after a committed step is
//! finished from that step (what `archmax worker` does for a worker killed mid-turn), and a
//! session that is not an interrupted turn is left alone.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use archmax_machine::store::{
    FsStore, SessionId, SessionStore, Snapshot, Step, StoreError, WriterLease,
};
use archmax_machine::{Envelope, EventSink, OutcomeKind};
use archmax_tests::scripted::{Reply, ScriptedServer};
use archmax_tests::{TempWorkspace, harness, rt};
use serde_json::{Value, json};

const SPEC: &str = r#"
instructions: Do jobs.
states:
  work:
    triggers: { manual: }
    instructions: Do the work.
"#;

/// The filesystem store whose commit number `fail_at` (1-based) fails, as a process that
/// stopped before that step was durable.
struct StopsAt {
    inner: FsStore,
    commits: AtomicUsize,
    fail_at: usize,
}

impl SessionStore for StopsAt {
    fn load(&self, id: &SessionId) -> Result<Option<Snapshot>, StoreError> {
        self.inner.load(id)
    }
    fn load_state(&self, id: &SessionId) -> Result<Option<Value>, StoreError> {
        self.inner.load_state(id)
    }
    fn commit(&self, id: &SessionId, step: Step<'_>) -> Result<(), StoreError> {
        if self.commits.fetch_add(1, Ordering::SeqCst) + 1 == self.fail_at {
            return Err(StoreError::Backend {
                store: "filesystem",
                op: "commit",
                id: Some(id.as_str().to_string()),
                message: "the process stopped".into(),
            });
        }
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
        self.inner.write_spec_snapshot(hash, spec)
    }
    fn read_spec_snapshot(&self, hash: &str) -> Result<Option<Value>, StoreError> {
        self.inner.read_spec_snapshot(hash)
    }
    fn session_dir(&self, id: &SessionId) -> Option<std::path::PathBuf> {
        self.inner.session_dir(id)
    }
}

#[derive(Default)]
struct Warnings(Mutex<Vec<String>>);

impl EventSink for Warnings {
    fn emit(&self, e: &Envelope) {
        if let (Ok(mut v), Ok(j)) = (self.0.lock(), serde_json::to_value(e))
            && j["type"] == "warning"
        {
            v.push(j["message"].as_str().unwrap_or_default().to_string());
        }
    }
}

#[test]
fn an_interrupted_turn_is_finished_from_its_last_committed_step() {
    let ws = TempWorkspace::new(&[("workflows/jobs/workflow.yaml", SPEC)]);
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({ "file_path": "scratchpad/a.md", "content": "step one" }),
        )]),
        // The answer whose step never became durable: the process "stopped".
        Reply::text("All done (lost)."),
        // The resumed turn's one model call.
        Reply::text("All done."),
    ])
    .expect("server");
    let stopping = harness(ws.root(), "jobs", &server.url(), "m", |o| {
        o.store = Arc::new(StopsAt {
            inner: FsStore::new(ws.root()),
            commits: AtomicUsize::new(0),
            // 1: the opening commit, 2: the write_file step, 3: the completion.
            fail_at: 3,
        });
    });
    let stopped = rt().block_on(stopping.send(
        "j1",
        archmax_machine::SendInput {
            message: "Do job 1".into(),
            ..Default::default()
        },
    ));
    assert!(stopped.is_err(), "the turn stopped at its third commit");
    drop(stopping);

    let warnings = Arc::new(Warnings::default());
    let sink = Arc::clone(&warnings);
    let worker = harness(ws.root(), "jobs", &server.url(), "m", |o| o.events = sink);
    assert_eq!(
        worker
            .session_state("j1")
            .expect("state")
            .expect("stored")
            .status,
        archmax_machine::Status::Running,
        "left running, as a killed process leaves it"
    );
    let outcome = rt()
        .block_on(worker.resume_interrupted("j1"))
        .expect("resumed")
        .expect("an interrupted turn");
    assert_eq!(outcome.kind, OutcomeKind::Completed);
    assert_eq!(outcome.reply, "All done.");
    // The committed step was not run again: one write_file call, one tool result, and the
    // resumed model call saw them.
    let messages = worker.session_messages("j1").expect("messages");
    let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant"],
        "{messages:?}"
    );
    assert_eq!(messages[3]["content"], "All done.");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests[2].to_string().contains("step one"),
        "{}",
        requests[2]
    );
    assert_eq!(
        std::fs::read_to_string(ws.root().join("sessions/j1/scratchpad/a.md")).expect("file"),
        "step one"
    );
    let warned = warnings.0.lock().expect("warnings").clone();
    assert_eq!(
        warned,
        [
            "Resuming the turn of session 'j1' in state 'work' from its last committed step: the process running it stopped before the turn finished."
        ]
    );

    // Settled now: nothing to resume, no model call, nothing written.
    let before = worker.session_messages("j1").expect("messages").len();
    assert!(
        rt().block_on(worker.resume_interrupted("j1"))
            .expect("answer")
            .is_none()
    );
    assert!(
        rt().block_on(worker.resume_interrupted("absent"))
            .expect("answer")
            .is_none()
    );
    assert_eq!(
        worker.session_messages("j1").expect("messages").len(),
        before
    );
    assert_eq!(server.requests().len(), 3);
}
