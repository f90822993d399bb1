//! The park commands end to end: `run` parking at a human state and for
//! input, `reply`, `decide`, `deliver`, and `sessions` showing the parks.

use serde_json::json;

use crate::scripted::{Reply, ScriptedServer};
use crate::support::{Workspace, cli};

pub const SPEC: &str = r#"title: Refunds
instructions: Handle refund requests.
states:
  draft:
    triggers: { manual: }
    instructions: Draft the refund.
    transitions:
      - { to: review, description: The refund is drafted. }
      - { to: poll, description: The payment has to arrive first. }
  review:
    type: human
    title: Refund review
    instructions: Approve the refund or send it back.
    approvers: [finance, ops]
    evidence: [scratchpad/refund.json]
    transitions:
      - { to: paid, description: Approve the refund., type: approve }
      - { to: draft, description: Send it back., type: refine }
  poll:
    title: Payment watch
    instructions: Wait for the payment.
    transitions:
      - { to: paid, description: The payment arrived. }
  paid:
    instructions: Confirm the payment.
"#;

pub fn workspace() -> Workspace {
    Workspace::new(&[("workflows/refunds/workflow.yaml", SPEC)])
}

/// The model's side of a run that drafts and hands over to `review`.
pub fn handover() -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "review", "reason": "drafted", "evidence": ["scratchpad/calc.md"] }),
        )]),
        Reply::text("I have sent your refund to a reviewer."),
    ]
}

/// The model's side of a run that moves to `poll` and waits for the payment.
fn waiting() -> Vec<Reply> {
    waiting_until("2030-01-01T09:00:00Z")
}

/// [`waiting`] with the wait's `until`.
pub fn waiting_until(until: &str) -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "poll", "reason": "await payment" }),
        )]),
        Reply::tool_calls(vec![(
            "c2",
            "archmax_wait",
            json!({ "reason": "the payment", "until": until }),
        )]),
        Reply::text("I am waiting for your payment."),
    ]
}

/// A workspace whose session `p-1` is parked at `review`; `then` is the rest of
/// the script, for the commands that follow.
pub(crate) fn parked_at_review(then: Vec<Reply>) -> (Workspace, ScriptedServer) {
    let ws = workspace();
    let calc = ws.root().join("sessions/p-1/scratchpad/calc.md");
    std::fs::create_dir_all(calc.parent().expect("dir")).expect("mkdir");
    std::fs::write(&calc, "12.00").expect("write");
    let mut script = handover();
    script.extend(then);
    let server = ScriptedServer::start(script).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "refunds", "Refund order 7", "--session", "p-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    (ws, server)
}

/// A workspace whose session `w-1` waits in `poll`.
fn waiting_in_poll(then: Vec<Reply>) -> (Workspace, ScriptedServer) {
    let ws = workspace();
    let mut script = waiting();
    script.extend(then);
    let server = ScriptedServer::start(script).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "refunds", "Refund order 8", "--session", "w-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    (ws, server)
}

const CONTEXT: &str = "  Instructions: Approve the refund or send it back.\n  Approvers: finance, ops\n  Evidence: scratchpad/refund.json, scratchpad/calc.md\n  [approve] paid — Approve the refund.\n  [refine] draft — Send it back.\n";

const DECIDE_HINT: &str = "Decide it with:\n  archmax decide p-1 --to <state> [--comment \"why\"]\n  archmax reply p-1 \"<message>\"   (answer without deciding)\n";

const DELIVER_HINT: &str =
    "Resume it with:\n  archmax deliver w-1 --trigger <id> [--variables '{\"…\":\"…\"}']\n";

#[test]
fn a_run_that_parks_at_a_human_state_reports_the_decision() {
    let ws = workspace();
    let calc = ws.root().join("sessions/p-1/scratchpad/calc.md");
    std::fs::create_dir_all(calc.parent().expect("dir")).expect("mkdir");
    std::fs::write(&calc, "12.00").expect("write");
    let server = ScriptedServer::start(handover()).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "refunds", "Refund", "order", "7", "--session", "p-1"],
    );
    assert_eq!(r.code, 0, "a park is a success: {}", r.err);
    assert_eq!(r.out, "I have sent your refund to a reviewer.\n");
    assert_eq!(
        r.err,
        format!(
            "{}\n● draft\n    → drafted\n✔ draft → review\n\n● review\n    ⚠ awaiting human decision at review\n    │ I have sent your refund to a reviewer.\n\n✔ message\n\n⚠ awaiting human decision\nSession p-1 is parked at the 'review' human state (Refund review) awaiting a decision.\n{CONTEXT}{DECIDE_HINT}",
            ws.header("refunds", Some("scripted-model"))
        )
    );
}

#[test]
fn the_decision_report_in_color() {
    let ws = workspace();
    let server = ScriptedServer::start(handover()).expect("server");
    let r = crate::support::cli_with(
        &ws,
        Some(&server),
        &[],
        true,
        &["run", "refunds", "Refund order 7", "--session", "p-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.err
            .contains("\x1b[33m\x1b[1m⚠ awaiting human decision\x1b[0m\x1b[0m\n"),
        "{:?}",
        r.err
    );
    assert!(
        r.err
            .contains("    \x1b[33m⚠ awaiting human decision\x1b[0m \x1b[2mat review\x1b[0m\n"),
        "{:?}",
        r.err
    );
}

#[test]
fn reply_answers_and_the_session_stays_parked() {
    let (ws, server) = parked_at_review(vec![Reply::text("It is with finance.")]);
    let r = cli(&ws, Some(&server), &["reply", "p-1", "Any", "news?"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "It is with finance.\n");
    assert_eq!(
        r.err,
        format!(
            "{}    → message to the parked session at review\n    │ Any news?\n    │ It is with finance.\n\n✔ replied\n\nSession p-1 is still parked at the 'review' human state — a decision is pending.\n",
            ws.header("refunds", None)
        )
    );
    let sent = server.requests();
    let last = sent.last().expect("a model call");
    let messages = last["messages"].as_array().expect("messages");
    assert_eq!(
        messages.last().map(|m| &m["content"]),
        Some(&json!("Any news?"))
    );
    let r = cli(&ws, Some(&server), &["sessions", "p-1", "--json"]);
    let summary: serde_json::Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(summary["status"], "awaiting_decision");
    assert_eq!(summary["state"], "review");
}

#[test]
fn a_run_on_a_session_awaiting_a_decision_is_a_reply() {
    let (ws, server) = parked_at_review(vec![Reply::text("Still with finance.")]);
    let r = cli(
        &ws,
        Some(&server),
        &["run", "refunds", "Any news?", "--session", "p-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Still with finance.\n");
    assert_eq!(
        r.err,
        format!(
            "{}    → message to the parked session at review\n    │ Any news?\n    │ Still with finance.\n\n✔ replied\n\nSession p-1 is still parked at the 'review' human state — a decision is pending.\n",
            ws.header("refunds", Some("scripted-model"))
        )
    );
}

#[test]
fn decide_refuses_a_target_that_is_not_a_choice() {
    let (ws, server) = parked_at_review(Vec::new());
    let calls = server.requests().len();
    let r = cli(&ws, Some(&server), &["decide", "p-1", "--to", "review"]);
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert_eq!(
        r.err,
        format!(
            "{}Error: 'review' is not a valid decision target for session 'p-1'. Choose one of: paid, draft.\n",
            ws.header("refunds", None)
        )
    );
    assert_eq!(server.requests().len(), calls, "no model call");
}

#[test]
fn decide_resumes_and_the_target_state_completes() {
    let (ws, server) = parked_at_review(vec![Reply::text("The refund is paid.")]);
    let r = cli(
        &ws,
        Some(&server),
        &["decide", "p-1", "--to", "paid", "--comment", "looks right"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "The refund is paid.\n");
    assert_eq!(
        r.err,
        format!(
            "{}    ✔ decision -> paid\n✔ review → paid\n\n● paid\n    │ The refund is paid.\n✔ paid (turn ends here)\n\n✔ decided\n",
            ws.header("refunds", None)
        )
    );
    // Decided once: the session is no longer parked.
    let r = cli(&ws, Some(&server), &["decide", "p-1", "--to", "paid"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.err,
        format!(
            "{}Error: Session 'p-1' is not parked at a human state; there is nothing to decide.\n",
            ws.header("refunds", None)
        )
    );
    let r = cli(&ws, Some(&server), &["reply", "p-1", "hello?"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.ends_with(
            "Error: Session 'p-1' is not parked at a human state; there is nothing to decide.\n"
        ),
        "{}",
        r.err
    );
}

#[test]
fn decide_with_verbose_prints_the_raw_lines() {
    let (ws, server) = parked_at_review(vec![Reply::text("The refund is paid.")]);
    let r = cli(
        &ws,
        Some(&server),
        &["decide", "p-1", "--to", "paid", "--verbose"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.err.contains(
            "[workflow] decision at 'review' routed to 'paid' (session p-1)\n    ✔ decision -> paid\n"
        ),
        "{}",
        r.err
    );
}

#[test]
fn a_decision_that_ends_failed_exits_1() {
    let (ws, server) = parked_at_review(vec![Reply::tool_calls(vec![(
        "c9",
        "archmax_raise",
        json!({ "code": "bank-down", "reason": "the bank is unreachable" }),
    )])]);
    let r = cli(&ws, Some(&server), &["decide", "p-1", "--to", "paid"]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert_eq!(
        r.err,
        format!(
            "{}    ✔ decision -> paid\n✔ review → paid\n\n● paid\n    ✖ raised bank-down the bank is unreachable\n✖ paid → failed\n\n✖ failed\nSession p-1 failed in the 'paid' state with code 'bank-down': the bank is unreachable\n",
            ws.header("refunds", None)
        )
    );
}

#[test]
fn a_run_that_waits_reports_the_input_park() {
    let ws = workspace();
    let server = ScriptedServer::start(waiting()).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "refunds", "Refund order 8", "--session", "w-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "I am waiting for your payment.\n");
    assert_eq!(
        r.err,
        format!(
            "{}\n● draft\n    → await payment\n✔ draft → poll\n\n● poll\n    › archmax_wait\n    ⚠ awaiting input in poll — the payment (due 2030-01-01T09:00:00.000Z)\n    │ I am waiting for your payment.\n\n✔ message\n\n⚠ awaiting input\nSession w-1 is parked in the 'poll' state (Payment watch) awaiting an external event.\n  waiting for: the payment\n  due:         2030-01-01T09:00:00.000Z (whoever schedules the wake-up)\n{DELIVER_HINT}",
            ws.header("refunds", Some("scripted-model"))
        )
    );
}

#[test]
fn deliver_resumes_the_session_in_place() {
    let (ws, server) = waiting_in_poll(vec![Reply::text("Payment received.")]);
    let r = cli(
        &ws,
        Some(&server),
        &[
            "deliver",
            "w-1",
            "--trigger",
            "payment",
            "--variables",
            "{\"amount\":12}",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Payment received.\n");
    assert_eq!(
        r.err,
        format!(
            "{}    ✔ payment delivered, resuming poll\n\n● poll\n    │ Payment received.\n✔ poll (turn ends here)\n\n✔ delivered\n",
            ws.header("refunds", None)
        )
    );
    let r = cli(&ws, Some(&server), &["sessions", "w-1"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(
        r.out
            .contains("    amount (locked) = 12\n    trigger (locked) = \"payment\"\n"),
        "{}",
        r.out
    );
    // Nothing waits any more.
    let r = cli(
        &ws,
        Some(&server),
        &["deliver", "w-1", "--trigger", "payment"],
    );
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert_eq!(
        r.err,
        format!(
            "{}Error: Session 'w-1' is not parked awaiting an event; there is nothing to deliver to. A session awaiting a human decision resumes through a decision instead.\n",
            ws.header("refunds", None)
        )
    );
}

#[test]
fn a_run_on_a_session_waiting_for_input_is_a_delivery() {
    let (ws, server) = waiting_in_poll(vec![Reply::text("Thanks, the payment is in.")]);
    let r = cli(
        &ws,
        Some(&server),
        &[
            "run",
            "refunds",
            "Paid just now.",
            "--session",
            "w-1",
            "--trigger",
            "payment",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Thanks, the payment is in.\n");
    assert_eq!(
        r.err,
        format!(
            "{}    ✔ payment delivered, resuming poll\n    → message to the parked session at poll\n    │ Paid just now.\n\n● poll\n    │ Thanks, the payment is in.\n✔ poll (turn ends here)\n\n✔ delivered\n",
            ws.header("refunds", Some("scripted-model"))
        )
    );
}

#[test]
fn a_delivery_that_waits_again_reparks() {
    let (ws, server) = waiting_in_poll(vec![
        Reply::tool_calls(vec![(
            "c7",
            "archmax_wait",
            json!({ "reason": "the rest of the payment" }),
        )]),
        Reply::text("Half of it arrived; waiting for the rest."),
    ]);
    let r = cli(
        &ws,
        Some(&server),
        &["deliver", "w-1", "--trigger", "payment"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Session w-1 parked again in the 'poll' state.\n");
    assert_eq!(
        r.err,
        format!(
            "{}    ✔ payment delivered, resuming poll\n\n● poll\n    › archmax_wait\n    ⚠ awaiting input in poll — the rest of the payment\n    │ Half of it arrived; waiting for the rest.\n\n⚠ awaiting input\n{DELIVER_HINT}",
            ws.header("refunds", None)
        )
    );
}

#[test]
fn decide_and_deliver_refuse_the_other_channel() {
    let (ws, server) = waiting_in_poll(Vec::new());
    let r = cli(&ws, Some(&server), &["decide", "w-1", "--to", "paid"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.ends_with(
            "Error: Session 'w-1' is not parked at a human state; there is nothing to decide.\n"
        ),
        "{}",
        r.err
    );
    let r = cli(&ws, Some(&server), &["reply", "w-1", "hello"]);
    assert_eq!(r.code, 1);
    assert!(
        r.err.ends_with(
            "Error: Session 'w-1' is not parked at a human state; there is nothing to decide.\n"
        ),
        "{}",
        r.err
    );
}

#[test]
fn sessions_list_a_parked_session_with_its_decision_context() {
    let (ws, _server) = parked_at_review(Vec::new());
    let r = cli(&ws, None, &["sessions"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!("{}\n✔ sessions\n", ws.header("refunds", None))
    );
    assert_eq!(
        crate::support::no_times(&r.out),
        format!(
            "  p-1  awaiting_decision  open  state=review  awaiting=review  vars=trigger  → awaiting a decision at 'review' · <age>\n{CONTEXT}"
        )
    );
    let r = cli(&ws, None, &["sessions", "p-1"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(
        &lines[..3],
        &[
            "  status   awaiting_decision  (open)",
            "  state    review",
            "  awaiting review",
        ]
    );
    // awaiting= is yellow, on stdout too, when stderr is a TTY.
    let r = crate::support::cli_with(&ws, None, &[], true, &["sessions"]);
    assert!(
        r.out
            .contains("  \x1b[33mawaiting=review\x1b[0m  vars=trigger  \x1b[33m→ awaiting a decision at 'review' · "),
        "{:?}",
        r.out
    );
}

#[test]
fn sessions_show_what_a_waiting_session_waits_for() {
    let (ws, _server) = waiting_in_poll(Vec::new());
    let r = cli(&ws, None, &["sessions"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        crate::support::no_times(&r.out),
        "  w-1  awaiting_input  open  state=poll  awaiting=poll  vars=trigger  → waiting at 'poll' until 2030-01-01T09:00:00.000Z · <age>\n    waiting for: the payment  due=2030-01-01T09:00:00.000Z\n"
    );
    let r = cli(&ws, None, &["sessions", "w-1"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let lines: Vec<&str> = r.out.lines().collect();
    assert_eq!(
        &lines[..4],
        &[
            "  status   awaiting_input  (open)",
            "  state    poll",
            "  awaiting poll",
            "  waiting  the payment  due=2030-01-01T09:00:00.000Z",
        ]
    );
    let r = cli(&ws, None, &["sessions", "w-1", "--json"]);
    let summary: serde_json::Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(summary["state"], "poll");
    assert_eq!(summary["waitReason"], "the payment");
    assert_eq!(summary["resumeAt"], "2030-01-01T09:00:00.000Z");
}

#[test]
fn reply_and_deliver_print_the_outcome_with_json() {
    let (ws, server) = parked_at_review(vec![Reply::text("It is with finance.")]);
    let r = cli(&ws, Some(&server), &["reply", "p-1", "Any news?", "--json"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let outcome: serde_json::Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(outcome["disposition"], "reply");
    assert_eq!(outcome["kind"], "parked");
    assert_eq!(outcome["reply"], "It is with finance.");
    assert!(r.err.ends_with("a decision is pending.\n"), "{}", r.err);

    let (ws, server) = waiting_in_poll(vec![Reply::text("Payment received.")]);
    let r = cli(
        &ws,
        Some(&server),
        &["deliver", "w-1", "--trigger", "payment", "--json"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let outcome: serde_json::Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(outcome["disposition"], "deliver");
    assert_eq!(outcome["sessionId"], "w-1");
    assert_eq!(outcome["status"], "completed");
}

#[test]
fn a_parked_session_is_pruned_only_by_id() {
    let (ws, _server) = parked_at_review(Vec::new());
    let r = cli(
        &ws,
        None,
        &[
            "sessions",
            "prune",
            "--status",
            "done,failed,cancelled,rejected,idle",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.err.ends_with("✔ pruned 0 sessions\n"), "{}", r.err);
    assert!(ws.root().join("sessions/p-1").exists());
    let r = cli(&ws, None, &["sessions", "prune", "p-1", "--dry-run"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        crate::support::no_times(&r.out),
        "  p-1  awaiting a decision at 'review' · <age>  workflow=refunds\n"
    );
    assert!(ws.root().join("sessions/p-1").exists());
    let r = cli(&ws, None, &["sessions", "prune", "p-1"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.err.ends_with("✔ pruned 1 session\n"), "{}", r.err);
    assert!(!ws.root().join("sessions/p-1").exists());
}
