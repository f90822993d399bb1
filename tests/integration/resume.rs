//! `Harness::resume_interrupted`: a turn whose process stopped after a committed step is
//! finished from that step (what `archmax worker` does for a worker killed mid-turn), and a
//! session that is not an interrupted turn is left alone.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use archmax_machine::store::{FsStore, StoreError};
use archmax_machine::{Envelope, EventSink, OutcomeKind};
use archmax_tests::hooked::Hooked;
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, harness, rt};
use serde_json::json;

const SPEC: &str = r#"
instructions: Do jobs.
states:
  work:
    triggers: { manual: }
    instructions: Do the work.
"#;

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
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({ "file_path": "scratchpad/a.md", "content": "step one" }),
        )]),
        // The answer whose step never became durable: the process "stopped".
        Reply::text("All done (lost)."),
        // The resumed turn's one model call.
        Reply::text("All done."),
    ]);
    let stopping = harness(ws.root(), "jobs", &server, "m", |o| {
        // Commit 1 opens the turn, 2 is the write_file step, 3 (the completion) never
        // becomes durable: the process "stopped" there.
        let commits = AtomicUsize::new(0);
        o.store = Arc::new(Hooked::new(
            Arc::new(FsStore::new(ws.root())),
            move |store, id, step| {
                if commits.fetch_add(1, Ordering::SeqCst) + 1 == 3 {
                    return Err(StoreError::Backend {
                        store: "filesystem",
                        op: "commit",
                        id: Some(id.as_str().to_string()),
                        message: "the process stopped".into(),
                    });
                }
                store.commit(id, step)
            },
        ));
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
    let worker = harness(ws.root(), "jobs", &server, "m", |o| o.events = sink);
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
