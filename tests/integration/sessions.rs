//! `agent.sessions` on the Rust side: summaries, transcripts, deletion and seeding,
//! against real session folders and a scripted model.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use archmax_machine::store::MemStore;
use archmax_machine::{Classification, Harness, SessionExit, Status};
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, harness, send};
use serde_json::{Map, Value, json};

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
    instructions: Approve or not.
    transitions:
      - { to: done, description: Approve., type: approve }
  done:
    instructions: Close.
"#;

fn workspace() -> TempWorkspace {
    TempWorkspace::new(&[("workflows/jobs/workflow.yaml", SPEC)])
}

fn jobs(ws: &TempWorkspace, server: &InProcessModel) -> Harness {
    harness(ws.root(), "jobs", server, "m", |_| {})
}

fn session_dir(ws: &TempWorkspace, id: &str) -> std::path::PathBuf {
    ws.root()
        .join("sessions")
        .join(&*archmax_machine::store::storage_key(id))
}

/// Runs a turn as session `id` even when it is a child id no caller started (a host may not
/// start one): the turn runs under another id, whose folder then takes the child's name.
fn send_as(h: &Harness, ws: &TempWorkspace, id: &str, message: &str) {
    if archmax_machine::store::parent_of(id).is_none() {
        send(h, id, message);
        return;
    }
    let stand_in = format!("stand-in-{}", id.len());
    send(h, &stand_in, message);
    std::fs::rename(session_dir(ws, &stand_in), session_dir(ws, id)).expect("rename");
}

fn files(entries: Value) -> Map<String, Value> {
    entries.as_object().cloned().unwrap_or_default()
}

#[test]
fn summaries_describe_completed_parked_and_failed_sessions() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        // done-1: completes, with usage
        Reply::text("All done.").with_usage(json!({ "prompt_tokens": 12, "completion_tokens": 3 })),
        // decide-1: parks at the human state
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "review", "reason": "ready" }),
        )]),
        Reply::text("Sent for review."),
        // wait-1: parks for input
        Reply::tool_calls(vec![(
            "c2",
            "archmax_wait",
            json!({ "reason": "the invoice", "until": "2h" }),
        )]),
        Reply::text("Waiting for the invoice."),
        // fail-1: raises
        Reply::tool_calls(vec![(
            "c3",
            "archmax_raise",
            json!({ "code": "no-invoice", "reason": "nothing to bill" }),
        )]),
        // fail-1~work:jobs:1: a child id completes
        Reply::text("Child done."),
    ]);
    let h = jobs(&ws, &server);
    for id in [
        "done-1",
        "decide-1",
        "wait-1",
        "fail-1",
        "fail-1~work:jobs:1",
    ] {
        send_as(&h, &ws, id, "go");
    }

    let done = h.session_summary("done-1").expect("ok").expect("present");
    assert_eq!(done.status, Status::Completed);
    assert_eq!(done.classification, Classification::Finished);
    assert_eq!(done.workflow_state.as_deref(), Some("work"));
    assert!(done.spec_hash.as_deref().is_some_and(|h| !h.is_empty()));
    assert_eq!((done.state.as_deref(), done.exit.as_ref()), (None, None));
    let usage = done.usage.expect("usage reported");
    assert_eq!((usage.input_tokens, usage.output_tokens), (12, 3));
    let vars = done.variables.expect("the trigger is a variable");
    assert_eq!(vars["trigger"].value, "manual");
    assert!(vars["trigger"].locked);
    assert_eq!(done.parent_session_id, None);

    let decide = serde_json::to_value(h.session_summary("decide-1").expect("ok")).expect("json");
    assert_eq!(decide["status"], "awaiting_decision");
    assert_eq!(decide["classification"], "open");
    assert_eq!(decide["state"], "review");
    assert_eq!(decide["workflowState"], "review");
    for absent in ["waitReason", "resumeAt", "exit", "usage", "parentSessionId"] {
        assert!(decide.get(absent).is_none(), "{absent} in {decide}");
    }

    let wait = h.session_summary("wait-1").expect("ok").expect("present");
    assert_eq!(wait.status, Status::AwaitingInput);
    assert_eq!(wait.classification, Classification::Open);
    assert_eq!(wait.state.as_deref(), Some("work"));
    assert_eq!(wait.wait_reason.as_deref(), Some("the invoice"));
    assert!(wait.resume_at.as_deref().is_some_and(|t| t.ends_with('Z')));

    let failed = h.session_summary("fail-1").expect("ok").expect("present");
    assert_eq!(failed.classification, Classification::Finished);
    assert_eq!(
        serde_json::to_value(&failed.exit).expect("json"),
        json!({ "success": false, "code": "no-invoice", "reason": "nothing to bill" })
    );
    assert!(matches!(failed.exit, Some(SessionExit::Failure(_))));

    let child = h
        .session_summary("fail-1~work:jobs:1")
        .expect("ok")
        .expect("present");
    assert_eq!(child.parent_session_id.as_deref(), Some("fail-1"));

    assert_eq!(h.session_summary("never-ran").expect("ok"), None);
    let err = h.session_summary("scratchpad/x").expect_err("reserved");
    assert_eq!(err.code(), "SessionStoreIdError");

    let mut listed: Vec<String> = h
        .session_summaries()
        .expect("list")
        .into_iter()
        .map(|s| s.session_id)
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            "decide-1",
            "done-1",
            "fail-1",
            "fail-1~work:jobs:1",
            "wait-1"
        ]
    );
}

#[test]
fn messages_and_message_count_read_the_committed_transcript() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        Reply::text("First answer."),
        Reply::text("Second answer."),
    ]);
    let h = jobs(&ws, &server);
    assert_eq!(h.message_count("m-1").expect("count"), 0);
    assert!(h.session_messages("m-1").expect("messages").is_empty());

    send(&h, "m-1", "hello");
    let first = h.message_count("m-1").expect("count");
    let messages = h.session_messages("m-1").expect("messages");
    assert_eq!(messages.len(), first);
    assert!(messages.iter().any(|m| m["content"] == "hello"));
    assert_eq!(
        messages.last().map(|m| (&m["role"], &m["content"])),
        Some((&json!("assistant"), &json!("First answer.")))
    );

    send(&h, "m-1", "again");
    let second = h.message_count("m-1").expect("count");
    assert!(second > first, "{second} > {first}");
    assert_eq!(
        h.session_messages("m-1").expect("messages")[..first],
        messages[..],
        "a later turn appends"
    );
}

#[test]
fn delete_removes_a_session_and_its_children_only() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        Reply::text("a"),
        Reply::text("b"),
        Reply::text("c"),
        Reply::text("d"),
    ]);
    let h = jobs(&ws, &server);
    for id in ["d-1", "d-1~work:jobs:1", "d-10", "d-1~x"] {
        send_as(&h, &ws, id, "go");
    }
    assert!(h.delete_session("d-1").expect("delete"));
    assert!(!session_dir(&ws, "d-1").exists());
    assert!(
        !session_dir(&ws, "d-1~work:jobs:1").exists(),
        "child removed"
    );
    assert!(session_dir(&ws, "d-10").exists(), "a sibling id stays");
    assert!(session_dir(&ws, "d-1~x").exists(), "not a child id");
    assert_eq!(h.session_summary("d-1").expect("ok"), None);

    assert!(!h.delete_session("d-1").expect("absent"));
    assert!(!session_dir(&ws, "d-1").exists(), "no folder left behind");
    let err = h.delete_session("_specs").expect_err("reserved");
    assert_eq!(err.code(), "SessionStoreIdError");
}

/// Waits until `path` exists (the turn took its lease), at most a few seconds.
fn wait_for(path: &Path) {
    for _ in 0..300 {
        if path.exists() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("{} never appeared", path.display());
}

#[test]
fn delete_is_refused_while_a_turn_holds_the_session() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        Reply::text("slow answer").after(Duration::from_millis(800)),
    ]);
    let h = jobs(&ws, &server);
    std::thread::scope(|scope| {
        let turn = scope.spawn(|| send(&h, "busy-1", "go"));
        wait_for(
            &session_dir(&ws, "busy-1")
                .join("checkpoints")
                .join(archmax_machine::store::LOCK_FILE),
        );
        let err = h.delete_session("busy-1").expect_err("busy");
        assert_eq!(err.code(), "SessionNotResumableError");
        assert!(
            err.to_string()
                .starts_with("Session 'busy-1' has a turn in progress"),
            "{err}"
        );
        let out = turn.join().expect("turn thread");
        assert_eq!(out.reply, "slow answer");
    });
    assert!(
        session_dir(&ws, "busy-1")
            .join("checkpoints/state.json")
            .exists()
    );
    assert!(h.delete_session("busy-1").expect("free now"));
}

#[test]
fn seed_writes_agent_visible_files() {
    let ws = workspace();
    let server = InProcessModel::new(Vec::new());
    let h = jobs(&ws, &server);
    h.seed_session(
        "s-1",
        &files(json!({
            "trigger.json": { "from": "a@b.c", "n": [1, 2] },
            "scratchpad/notes.md": "# Notes\nverbatim",
            "inbox/mail.txt": "hi",
        })),
    )
    .expect("seed");
    let read = |p: &str| std::fs::read_to_string(session_dir(&ws, "s-1").join(p)).expect(p);
    assert_eq!(
        read("trigger.json"),
        "{\n  \"from\": \"a@b.c\",\n  \"n\": [\n    1,\n    2\n  ]\n}\n"
    );
    assert_eq!(read("scratchpad/notes.md"), "# Notes\nverbatim");
    assert_eq!(read("inbox/mail.txt"), "hi");
    h.seed_session("s-1", &files(json!({ "inbox/mail.txt": "again" })))
        .expect("overwrite");
    assert_eq!(read("inbox/mail.txt"), "again");
}

#[test]
fn seed_refuses_paths_outside_the_session_files_before_writing_any() {
    let ws = workspace();
    let server = InProcessModel::new(Vec::new());
    let h = jobs(&ws, &server);
    let refused = |path: &str| {
        let err = h
            .seed_session("s-2", &files(json!({ "ok.txt": "x", path: "y" })))
            .expect_err(path);
        assert_eq!(err.code(), "Error", "{path}");
        assert!(
            !session_dir(&ws, "s-2").join("ok.txt").exists(),
            "nothing written when {path} is refused"
        );
        err.to_string()
    };
    assert_eq!(
        refused("checkpoints/x.json"),
        "Cannot seed \"checkpoints/x.json\": it resolves to the 'run-internal' zone. Seedable paths are agent-visible session files (e.g. 'trigger.json', 'scratchpad/…')."
    );
    assert!(refused("large_tool_results/x").contains("the 'run-offload' zone"));
    assert!(refused("skills/x.md").contains("the 'authored' zone"));
    assert!(refused("../x").contains("the 'escapes' zone"));
    assert!(refused("").contains("the 'root' zone"));
    assert!(refused("/etc/passwd").contains("it is an absolute path"));
    assert!(refused("a/../b").contains("'..' segments are not allowed"));

    let err = h
        .seed_session("checkpoints", &files(json!({ "ok.txt": "x" })))
        .expect_err("bad id");
    assert_eq!(err.code(), "SessionStoreIdError");
}

#[test]
fn seed_needs_a_store_with_session_folders() {
    let ws = workspace();
    let server = InProcessModel::new(Vec::new());
    let h = harness(ws.root(), "jobs", &server, "m", |o| {
        o.store = Arc::new(MemStore::new());
    });
    let err = h
        .seed_session("s-3", &files(json!({ "trigger.json": {} })))
        .expect_err("no folder");
    assert_eq!(err.code(), "SessionStoreCapabilityError");
    assert_eq!(
        err.to_string(),
        "The configured in-memory session store does not support 'seed'. Seeding writes files into the session folder and needs a filesystem session store."
    );
}

#[test]
fn park_is_the_parking_outcomes_record_with_the_states_instructions_and_approvers() {
    let spec = SPEC.replace(
        "    instructions: Approve or not.\n",
        "    instructions: Approve or not.\n    approvers: [lead@example.com]\n    evidence: [scratchpad/plan.md]\n",
    );
    let ws = TempWorkspace::new(&[("workflows/jobs/workflow.yaml", spec.as_str())]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "review", "reason": "ready" }),
        )]),
        Reply::text("Sent for review."),
        Reply::tool_calls(vec![(
            "c2",
            "archmax_wait",
            json!({ "reason": "the invoice" }),
        )]),
        Reply::text("Waiting."),
        Reply::text("Done."),
    ]);
    let h = jobs(&ws, &server);
    let parked = send(&h, "p-1", "go");
    let pending = serde_json::to_value(&parked.pending).expect("json");
    let mut expected = pending.as_object().cloned().expect("a park record");
    expected.insert("instructions".into(), json!("Approve or not."));
    expected.insert("approvers".into(), json!(["lead@example.com"]));
    assert_eq!(
        expected["transitions"],
        json!([{ "to": "done", "description": "Approve.", "type": "approve" }])
    );
    assert_eq!(expected["evidence"], json!(["scratchpad/plan.md"]));
    assert_eq!(
        h.session_park("p-1").expect("ok"),
        Some(Value::Object(expected.clone()))
    );
    // A new harness over the same store (a restart) reads the same record.
    let again = jobs(&ws, &server);
    assert_eq!(
        again.session_park("p-1").expect("ok"),
        Some(Value::Object(expected))
    );

    // A wait's record: the state declares no approvers, so none are added.
    send(&h, "w-1", "go");
    let wait = h.session_park("w-1").expect("ok").expect("parked");
    assert_eq!(
        (wait["channel"].clone(), wait["reason"].clone()),
        (json!("input"), json!("the invoice"))
    );
    assert_eq!(wait["instructions"], "Do the work.");
    assert!(wait.get("approvers").is_none(), "{wait}");

    send(&h, "d-1", "go");
    assert_eq!(
        h.session_park("d-1").expect("ok"),
        None,
        "a completed session has no park"
    );
    assert_eq!(h.session_park("never-ran").expect("ok"), None);
    assert_eq!(
        h.session_park("scratchpad/x").expect_err("reserved").code(),
        "SessionStoreIdError"
    );
}

const REVIEWED: &str = r#"
states:
  draft:
    triggers: { manual: }
    instructions: Draft it.
    transitions:
      - { to: review, description: Ready for review. }
  review:
    type: human
    instructions: Approve or send back.
    transitions:
      - { to: done, description: Approve., type: approve }
      - { to: draft, description: Send back., type: refine }
  done:
    instructions: Close.
"#;

fn advance(id: &str, to: &str) -> Reply {
    Reply::tool_calls(vec![(
        id,
        "archmax_advance",
        json!({ "to": to, "reason": "ready" }),
    )])
}

fn decide(h: &Harness, id: &str, to: &str) -> archmax_machine::Outcome {
    archmax_tests::rt()
        .block_on(h.decide(id, to, None))
        .expect("decision")
}

/// Sessions at every standing a run can leave: `idle-1` (a turn that answered at `draft`),
/// `back-1` (sent back by a `refine` decision, answered at `draft`), `park-1` (awaiting
/// the decision at `review`), `done-1` (approved, answered at the terminal `done`),
/// `fail-1` (the agent raised), `cancel-1` (its turn cancelled), `wait-1` (waiting with a
/// due time).
fn every_standing(h: &Harness, server: &InProcessModel) {
    send(h, "idle-1", "go");
    send(h, "back-1", "go");
    decide(h, "back-1", "draft");
    send(h, "park-1", "go");
    send(h, "done-1", "go");
    decide(h, "done-1", "done");
    send(h, "fail-1", "go");
    let before = server.requests().len();
    std::thread::scope(|s| {
        s.spawn(|| {
            while server.requests().len() < before + 1 {
                std::thread::sleep(Duration::from_millis(5));
            }
            while !h.cancel("cancel-1") {
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        send(h, "cancel-1", "go")
    });
    send(h, "wait-1", "go");
}

fn every_standing_script() -> Vec<Reply> {
    vec![
        // idle-1
        Reply::text("Here is a draft."),
        // back-1: parks, then the refine decision's turn answers at draft
        advance("b1", "review"),
        Reply::text("Sent for review."),
        Reply::text("Reworking the draft."),
        // park-1
        advance("p1", "review"),
        Reply::text("Sent for review."),
        // done-1
        advance("d1", "review"),
        Reply::text("Sent for review."),
        Reply::text("Closed."),
        // fail-1
        Reply::tool_calls(vec![(
            "f1",
            "archmax_raise",
            json!({ "code": "no-draft", "reason": "nothing to draft" }),
        )]),
        // cancel-1: hangs until cancelled
        Reply::text("too late").after(Duration::from_secs(5)),
        // wait-1
        Reply::tool_calls(vec![(
            "w1",
            "archmax_wait",
            json!({ "reason": "the figures", "until": "2h" }),
        )]),
        Reply::text("Waiting for the figures."),
    ]
}

fn standing_of(h: &Harness, id: &str) -> archmax_machine::Standing {
    h.session_summary(id)
        .expect("ok")
        .expect("present")
        .standing
}

fn ids(list: &[archmax_machine::SessionSummary]) -> Vec<&str> {
    list.iter().map(|s| s.session_id.as_str()).collect()
}

#[test]
fn every_session_says_where_it_stands() {
    use archmax_machine::StandingKind as K;
    let ws = TempWorkspace::new(&[("workflows/jobs/workflow.yaml", REVIEWED)]);
    let server = InProcessModel::new(every_standing_script());
    let h = jobs(&ws, &server);
    let before = archmax_machine::clock::now_ms();
    every_standing(&h, &server);
    let after = archmax_machine::clock::now_ms();
    let expected = [
        ("idle-1", K::Idle, Some("draft"), true, "completed"),
        ("back-1", K::Idle, Some("draft"), true, "completed"),
        (
            "park-1",
            K::AwaitingDecision,
            Some("review"),
            true,
            "awaiting_decision",
        ),
        ("done-1", K::Done, Some("done"), false, "completed"),
        ("fail-1", K::Failed, Some("draft"), false, "failed"),
        ("cancel-1", K::Cancelled, Some("draft"), true, "failed"),
        ("wait-1", K::Waiting, Some("draft"), true, "awaiting_input"),
    ];
    for (id, kind, state, resumable, status) in expected {
        let summary = serde_json::to_value(h.session_summary(id).expect("ok")).expect("json");
        // The original's fields keep their values; the standing is beside them.
        assert_eq!(summary["status"], status, "{id}");
        let s = standing_of(&h, id);
        assert_eq!(
            (s.kind, s.state.as_deref(), s.resumable),
            (kind, state, resumable),
            "{id}"
        );
        let since = s.since.expect("since");
        assert!((before..=after).contains(&since), "{id}: {since}");
    }
    let wait = standing_of(&h, "wait-1");
    assert_eq!(
        wait.until,
        h.session_summary("wait-1")
            .expect("ok")
            .expect("present")
            .resume_at
    );
    assert_eq!(
        serde_json::to_value(standing_of(&h, "idle-1")).expect("json")["kind"],
        "idle"
    );

    // By standing, in the store's order.
    let idle = h
        .list_sessions(&archmax_machine::SessionQuery {
            kinds: vec![K::Idle],
            ..Default::default()
        })
        .expect("list");
    let mut idle = ids(&idle);
    idle.sort_unstable();
    assert_eq!(idle, ["back-1", "idle-1"]);
    let old = h
        .list_sessions(&archmax_machine::SessionQuery {
            older_than_ms: Some(3_600_000),
            ..Default::default()
        })
        .expect("list");
    assert!(old.is_empty(), "nothing is an hour old");

    // Attention: stalled work longest first; fresh parks are not stalled yet, old ones follow.
    let attention = archmax_machine::SessionQuery {
        attention: true,
        ..Default::default()
    };
    let now = archmax_machine::clock::now_ms();
    let list = h.list_sessions_at(&attention, now).expect("list");
    assert_eq!(ids(&list), ["idle-1", "back-1", "cancel-1"]);
    let tomorrow = now + 25 * 3_600_000;
    let list = h.list_sessions_at(&attention, tomorrow).expect("list");
    assert_eq!(
        ids(&list),
        ["idle-1", "back-1", "cancel-1", "wait-1", "park-1"],
        "the wait fell due (stalled), the decision waited a day"
    );
}

#[test]
fn prune_removes_ended_sessions_by_status_and_age_and_never_a_live_one() {
    use archmax_machine::{PruneOptions, StandingKind as K};
    let ws = TempWorkspace::new(&[("workflows/jobs/workflow.yaml", REVIEWED)]);
    let server = InProcessModel::new(every_standing_script());
    let h = jobs(&ws, &server);
    every_standing(&h, &server);
    let names = |r: &archmax_machine::PruneReport| {
        let mut v: Vec<String> = r.pruned.iter().map(|p| p.session_id.clone()).collect();
        v.sort();
        v
    };
    let now = archmax_machine::clock::now_ms();
    // Nothing is a week old.
    let r = h
        .prune_sessions(&PruneOptions {
            older_than_ms: Some(7 * 24 * 3_600_000),
            ..Default::default()
        })
        .expect("prune");
    assert!(r.pruned.is_empty() && r.skipped.is_empty(), "{r:?}");
    // A dry run names the ended sessions and removes nothing.
    let dry = h
        .prune_sessions_at(
            &PruneOptions {
                dry_run: true,
                ..Default::default()
            },
            now,
        )
        .expect("dry run");
    assert!(dry.dry_run);
    assert_eq!(names(&dry), ["cancel-1", "done-1", "fail-1"]);
    assert!(session_dir(&ws, "done-1").exists());
    assert_eq!(
        serde_json::to_value(&dry).expect("json")["pruned"][0]["workflow"],
        "jobs"
    );
    // Then for real: the same, and gone.
    let r = h.prune_sessions(&PruneOptions::default()).expect("prune");
    assert!(!r.dry_run);
    assert_eq!(names(&r), ["cancel-1", "done-1", "fail-1"]);
    for id in ["cancel-1", "done-1", "fail-1"] {
        assert!(!session_dir(&ws, id).exists(), "{id}");
    }
    // Idle only when named.
    let r = h
        .prune_sessions(&PruneOptions {
            kinds: vec![K::Idle],
            ..Default::default()
        })
        .expect("prune");
    assert_eq!(names(&r), ["back-1", "idle-1"]);
    // Never a parked or running one by status…
    for live in [
        K::AwaitingDecision,
        K::Waiting,
        K::Running,
        K::AwaitingInput,
    ] {
        let err = h
            .prune_sessions(&PruneOptions {
                kinds: vec![K::Done, live],
                ..Default::default()
            })
            .expect_err("live");
        assert_eq!(err.code(), "TypeError");
        assert!(
            err.to_string().starts_with(&format!(
                "a prune by status never removes a {} session",
                live.as_str()
            )),
            "{err}"
        );
    }
    // …but by id, parked or not.
    let r = h
        .prune_sessions(&PruneOptions {
            session_id: Some("park-1".into()),
            ..Default::default()
        })
        .expect("prune");
    assert_eq!(names(&r), ["park-1"]);
    assert_eq!(r.pruned[0].standing.kind, K::AwaitingDecision);
    assert!(!session_dir(&ws, "park-1").exists());
    let r = h
        .prune_sessions(&PruneOptions {
            session_id: Some("park-1".into()),
            ..Default::default()
        })
        .expect("prune");
    assert_eq!(
        serde_json::to_value(&r).expect("json"),
        json!({ "dryRun": false, "pruned": [], "skipped": [{ "sessionId": "park-1", "reason": "there is no such session" }] })
    );
    assert!(!session_dir(&ws, "park-1").exists(), "no folder made");
    let err = h
        .prune_sessions(&PruneOptions {
            session_id: Some("wait-1".into()),
            kinds: vec![K::Done],
            ..Default::default()
        })
        .expect_err("id and status");
    assert_eq!(err.code(), "TypeError");
    assert_eq!(h.session_ids().expect("ids"), ["wait-1"]);
}

#[test]
fn prune_takes_the_lease_so_a_running_turn_keeps_its_session() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        Reply::text("First.").with_usage(json!({ "prompt_tokens": 1, "completion_tokens": 1 })),
        Reply::text("slow answer").after(Duration::from_millis(800)),
    ]);
    let h = jobs(&ws, &server);
    send(&h, "busy-1", "go");
    std::thread::scope(|scope| {
        let turn = scope.spawn(|| send(&h, "busy-1", "again"));
        while h.session_standing("busy-1").expect("ok").map(|s| s.kind)
            != Some(archmax_machine::StandingKind::Running)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let r = h
            .prune_sessions(&archmax_machine::PruneOptions {
                session_id: Some("busy-1".into()),
                ..Default::default()
            })
            .expect("prune");
        assert!(r.pruned.is_empty(), "{r:?}");
        assert_eq!(r.skipped[0].reason, "a turn holds it (running)");
        turn.join().expect("turn thread");
    });
    assert!(session_dir(&ws, "busy-1").exists());
}

#[test]
fn the_memory_store_stands_and_prunes_the_same() {
    use archmax_machine::StandingKind as K;
    let ws = TempWorkspace::new(&[("workflows/jobs/workflow.yaml", REVIEWED)]);
    let server = InProcessModel::new(every_standing_script());
    let h = harness(ws.root(), "jobs", &server, "m", |o| {
        o.store = Arc::new(MemStore::new());
    });
    every_standing(&h, &server);
    let kinds: Vec<(String, K)> = h
        .session_summaries()
        .expect("list")
        .into_iter()
        .map(|s| (s.session_id, s.standing.kind))
        .collect::<std::collections::BTreeMap<_, _>>()
        .into_iter()
        .collect();
    assert_eq!(
        kinds,
        [
            ("back-1".to_string(), K::Idle),
            ("cancel-1".to_string(), K::Cancelled),
            ("done-1".to_string(), K::Done),
            ("fail-1".to_string(), K::Failed),
            ("idle-1".to_string(), K::Idle),
            ("park-1".to_string(), K::AwaitingDecision),
            ("wait-1".to_string(), K::Waiting),
        ]
    );
    let r = h
        .prune_sessions(&archmax_machine::PruneOptions::default())
        .expect("prune");
    assert_eq!(r.pruned.len(), 3, "{r:?}");
    assert_eq!(h.session_ids().expect("ids").len(), 4);
    assert!(!ws.root().join("sessions").exists(), "nothing on disk");
}
