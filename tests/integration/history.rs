//! A session's history and forks on the Rust side, over the filesystem and memory stores
//! (PostgreSQL: the store contract suite, the CLI's and the addon's tests).

use std::sync::Arc;

use archmax_machine::store::{FsStore, MemStore, SessionId, SessionStore};
use archmax_machine::{Harness, Status};
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, harness, send};
use serde_json::json;

const SPEC: &str = r#"
states:
  work:
    triggers: { manual: }
    instructions: Do the work.
    transitions:
      - { to: review, description: Ready for review. }
  review:
    type: human
    title: Review
    instructions: Approve or send back.
    transitions:
      - { to: done, description: Approve., type: approve }
      - { to: work, description: Send back., type: refine }
  done:
    instructions: Close.
"#;

/// The replies of one session: a note written, a move to review (parked), then after the
/// decision a closing answer.
fn replies() -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({ "file_path": "scratchpad/notes.md", "content": "first draft" }),
        )])
        .with_usage(json!({ "prompt_tokens": 10, "completion_tokens": 2 })),
        Reply::tool_calls(vec![(
            "c2",
            "archmax_advance",
            json!({ "to": "review", "reason": "ready" }),
        )])
        .with_usage(json!({ "prompt_tokens": 20, "completion_tokens": 3 })),
        Reply::text("Sent for review."),
        Reply::text("Closed."),
        // A fork sent back to work.
        Reply::text("Reworked."),
    ]
}

/// A store the runtime offers that keeps history: the filesystem's or the memory's.
fn store(kind: &str, ws: &TempWorkspace) -> Arc<dyn SessionStore> {
    match kind {
        "filesystem" => Arc::new(FsStore::new(ws.root())),
        _ => Arc::new(MemStore::new()),
    }
}

fn jobs(ws: &TempWorkspace, model: &InProcessModel, store: Arc<dyn SessionStore>) -> Harness {
    harness(ws.root(), "jobs", model, "m", |o| o.store = store)
}

fn decide(h: &Harness, id: &str, to: &str) -> archmax_machine::Outcome {
    archmax_tests::rt()
        .block_on(h.decide(id, to, None))
        .expect("decision")
}

fn note(store: &dyn SessionStore, id: &str) -> Option<String> {
    let files = store.session_files(&SessionId::parse(id).ok()?)?;
    files
        .backend
        .read(&files.dir.join("scratchpad/notes.md"))
        .ok()
        .map(|b| String::from_utf8_lossy(&b).into_owned())
}

#[test]
fn history_lists_every_step_and_a_fork_of_a_parked_step_presents_its_park_again() {
    for kind in ["filesystem", "in-memory"] {
        let ws = TempWorkspace::new(&[("workflows/jobs/workflow.yaml", SPEC)]);
        let store = store(kind, &ws);
        let model = InProcessModel::new(replies());
        let h = jobs(&ws, &model, Arc::clone(&store));
        let parked = send(&h, "s1", "Write it up.");
        assert_eq!(parked.status, "awaiting_decision", "{kind}");
        let closed = decide(&h, "s1", "done");
        assert_eq!(closed.status, "completed", "{kind}");

        let steps = h.session_history("s1").expect("history").expect("ran");
        assert!(steps.len() >= 4, "{kind}: {steps:#?}");
        assert_eq!(
            steps.iter().map(|s| s.step).collect::<Vec<_>>(),
            (1..=steps.len() as u64).collect::<Vec<_>>()
        );
        assert!(
            steps[0].what.starts_with("started by manual"),
            "{kind}: {}",
            steps[0].what
        );
        let whats: Vec<&str> = steps.iter().map(|s| s.what.as_str()).collect();
        assert!(
            whats.iter().any(|w| w.contains("called write_file")),
            "{kind}: {whats:#?}"
        );
        let park = steps
            .iter()
            .find(|s| s.status == Status::AwaitingDecision)
            .expect("a parked step");
        assert!(
            park.what.contains("parked for a decision at review"),
            "{kind}: {}",
            park.what
        );
        assert_eq!(park.state, "review");
        assert_eq!(park.total_tokens, 35, "{kind}: spend to the park");
        let last = steps.last().expect("last");
        assert_eq!(last.status, Status::Completed);
        assert!(
            whats.iter().any(|w| w.contains("decided: done")),
            "{kind}: {whats:#?}"
        );
        assert!(last.what.contains("completed"), "{kind}: {}", last.what);
        assert!(
            steps
                .iter()
                .all(|s| s.at.as_deref().is_some_and(|t| t.ends_with('Z')))
        );
        // The tokens of each step add up to the session's.
        assert_eq!(
            steps.iter().map(|s| s.tokens).sum::<u64>(),
            last.total_tokens
        );

        // The note changes after the park; the fork gets the files as they are now.
        let files = store
            .session_files(&SessionId::parse("s1").expect("id"))
            .expect("files");
        files
            .backend
            .write(&files.dir.join("scratchpad/notes.md"), b"final")
            .expect("write");
        let before = h.session_history("s1").expect("history");
        let before_messages = h.session_messages("s1").expect("messages");

        let fork = h.fork_session("s1", park.step, None).expect("fork");
        assert_eq!(
            fork.session_id,
            "s1-fork-".to_string() + &park.step.to_string()
        );
        assert_eq!(fork.status, Status::AwaitingDecision, "{kind}");
        assert_eq!(fork.state.as_deref(), Some("review"));
        let from = fork.forked_from.as_ref().expect("lineage");
        assert_eq!((from.session_id.as_str(), from.step), ("s1", park.step));
        // The park is presented again: the same record, decidable.
        let original_park = h
            .fork_session("s1", park.step, Some("again"))
            .and_then(|_| h.session_park("again"))
            .expect("park")
            .expect("parked");
        assert_eq!(
            h.session_park(&fork.session_id).expect("park"),
            Some(original_park)
        );
        assert_eq!(
            h.session_messages(&fork.session_id)
                .expect("messages")
                .len() as u64,
            park.messages
        );
        assert_eq!(
            note(store.as_ref(), &fork.session_id).as_deref(),
            Some("final")
        );
        // The original is untouched.
        assert_eq!(h.session_history("s1").expect("history"), before);
        assert_eq!(h.session_messages("s1").expect("messages"), before_messages);
        // The fork goes another way: sent back, it works again, and its history starts
        // with its lineage.
        let back = decide(&h, &fork.session_id, "work");
        assert_eq!(back.status, "completed", "{kind}");
        let fork_steps = h
            .session_history(&fork.session_id)
            .expect("history")
            .expect("ran");
        assert_eq!(
            fork_steps[0].what,
            format!(
                "forked from s1 step {}; parked for a decision at review",
                park.step
            )
        );
        assert!(fork_steps.iter().any(|s| s.what.contains("decided: work")));
        assert_eq!(
            h.session_summary("s1").expect("get").expect("s1").status,
            Status::Completed
        );
        // A second fork of the same step gets the next free id.
        let third = h.fork_session("s1", park.step, None).expect("fork");
        assert_eq!(third.session_id, format!("s1-fork-{}-2", park.step));
    }
}

#[test]
fn forks_refuse_what_they_cannot_copy() {
    let ws = TempWorkspace::new(&[("workflows/jobs/workflow.yaml", SPEC)]);
    let model = InProcessModel::new(replies());
    let h = jobs(&ws, &model, Arc::new(MemStore::new()));
    send(&h, "s1", "Write it up.");
    let steps = h
        .session_history("s1")
        .expect("history")
        .expect("ran")
        .len();
    let refusal = |id: &str, at: u64, to: Option<&str>| {
        let e = h.fork_session(id, at, to).expect_err("refused");
        (e.code(), e.to_string())
    };
    assert_eq!(
        refusal("s1", 99, None),
        (
            "SessionForkError",
            format!(
                "Session 's1' has no step 99: its steps are 1 to {steps} ('archmax sessions history s1' lists them)."
            )
        )
    );
    assert_eq!(
        refusal("nobody", 1, None),
        (
            "SessionForkError",
            "Session 'nobody' has not run: there is nothing to fork.".to_string()
        )
    );
    assert_eq!(
        refusal("s1", 1, Some("s1")).0,
        "SessionForkError",
        "into itself"
    );
    assert_eq!(
        refusal("s1~review:w:1", 1, None),
        (
            "SessionForkError",
            "Session 's1~review:w:1' is a sub-workflow's run inside session 's1': fork 's1' instead.".to_string()
        )
    );
    assert_eq!(refusal("s1", 1, Some("s2~a:b:1")).0, "SessionForkError");
    assert_eq!(refusal("s1", 1, Some("../x")).0, "SessionStoreIdError");
    // Nothing was made by a refusal.
    assert_eq!(h.session_summaries().expect("list").len(), 1);
    // A store that keeps only the latest step says so.
    let none = h.session_history("nobody").expect("history");
    assert!(none.is_none());
}

#[test]
fn a_fork_of_a_step_inside_a_turn_goes_on_from_there_with_a_message() {
    let ws = TempWorkspace::new(&[("workflows/jobs/workflow.yaml", SPEC)]);
    let model = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({ "file_path": "scratchpad/notes.md", "content": "draft" }),
        )]),
        Reply::text("Done for now."),
        // The fork's turn.
        Reply::text("Picked up again."),
    ]);
    let h = jobs(&ws, &model, Arc::new(MemStore::new()));
    send(&h, "s1", "Write it up.");
    let steps = h.session_history("s1").expect("history").expect("ran");
    let mid = steps
        .iter()
        .find(|s| s.status == Status::Running && s.what.contains("called write_file"))
        .expect("a step inside the turn");
    let fork = h.fork_session("s1", mid.step, Some("retry")).expect("fork");
    assert_eq!(fork.status, Status::Running);
    let out = send(&h, "retry", "Go on.");
    assert_eq!(out.status, "completed");
    let messages = h.session_messages("retry").expect("messages");
    assert_eq!(
        messages.last().and_then(|m| m["content"].as_str()),
        Some("Picked up again.")
    );
    // The fork's transcript is the step's, then the new turn: the original's closing
    // answer is not in it.
    assert!(
        messages
            .iter()
            .all(|m| m["content"].as_str() != Some("Done for now."))
    );
}

#[cfg(unix)]
#[test]
fn a_fork_never_writes_through_a_link_planted_at_its_new_id() {
    let ws = TempWorkspace::new(&[("workflows/jobs/workflow.yaml", SPEC)]);
    let store = store("filesystem", &ws);
    let model = InProcessModel::new(replies());
    let h = jobs(&ws, &model, Arc::clone(&store));
    send(&h, "s1", "Write it up.");
    let outside = ws.root().join("outside");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::os::unix::fs::symlink(&outside, ws.root().join("sessions").join("planted")).expect("link");
    let err = h
        .fork_session("s1", 2, Some("planted"))
        .expect_err("refused");
    assert_eq!(err.code(), "SessionStoreError", "{err}");
    assert_eq!(
        std::fs::read_dir(&outside).expect("read").count(),
        0,
        "nothing was written through the link"
    );
}

#[test]
fn forks_made_at_once_each_get_an_id_of_their_own() {
    for kind in ["filesystem", "in-memory"] {
        let ws = TempWorkspace::new(&[("workflows/jobs/workflow.yaml", SPEC)]);
        let model = InProcessModel::new(replies());
        let h = Arc::new(jobs(&ws, &model, store(kind, &ws)));
        send(&h, "s1", "Write it up.");
        let barrier = Arc::new(std::sync::Barrier::new(6));
        let made: Vec<String> = (0..6)
            .map(|_| {
                let (h, barrier) = (Arc::clone(&h), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    h.fork_session("s1", 3, None).map(|s| s.session_id)
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().expect("thread").expect("every fork is made"))
            .collect();
        let mut ids = made.clone();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 6, "{kind}: {made:?}");
        assert!(ids.contains(&"s1-fork-3".to_string()), "{kind}: {made:?}");
        for id in &ids {
            let s = h.session_summary(id).expect("get").expect("made");
            assert_eq!(s.status, Status::AwaitingDecision, "{kind}: {id}");
        }
    }
}
