//! Sub-workflows through `archmax run`: a caller's live flow shows its child indented
//! under the calling state, and the child run alone enters the same `manual` entry on
//! the same contract (its `requires`, their types, the seeds locked).

use serde_json::json;

use crate::scripted::{Reply, ScriptedServer, tool_results};
use crate::support::{Workspace, cli};

const CALLER: &str = r#"title: Orders
instructions: Handle the order.
states:
  work:
    triggers: { manual: }
    instructions: Enrich the order, then answer.
    tools:
      allow: [archmax_workflow_enrich]
"#;

pub const CHILD: &str = r#"title: Enrichment
instructions: Set the risk.
states:
  enrich:
    triggers:
      manual:
        description: Enrich one order
        requires:
          - { name: order_id, type: string }
          - { name: quantity, type: integer }
        returns: [risk]
"#;

fn workspace() -> Workspace {
    Workspace::new(&[
        ("workflows/orders/workflow.yaml", CALLER),
        ("workflows/enrich/workflow.yaml", CHILD),
    ])
}

/// The flow with each child's duration blanked (`done (<n> ms)`).
fn steady(err: &str) -> String {
    err.lines()
        .map(|l| match l.find("done (") {
            Some(at) if l.ends_with(" ms)") => format!("{}done (… ms)", &l[..at]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_caller_shows_its_child_indented_under_the_calling_state() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![
            (
                "c1",
                "archmax_workflow_enrich",
                json!({ "order_id": "KK-1", "quantity": 2 }),
            ),
            (
                "c2",
                "archmax_workflow_enrich",
                json!({ "order_id": "KK-2", "quantity": "two" }),
            ),
        ]),
        Reply::tool_calls(vec![(
            "k1",
            "archmax_set_variables",
            json!({ "variables": { "risk": "low" } }),
        )]),
        Reply::text("Enriched KK-1."),
        Reply::text("KK-1 is low risk."),
    ])
    .expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "Enrich", "KK-1", "--session", "s-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "KK-1 is low risk.\n");
    let flow = steady(
        &r.err
            .replace(&ws.header("orders", Some("scripted-model")), ""),
    );
    // The refused call reports at dispatch, before the batch's child runs.
    let expected = "● work
    ✖ archmax_workflow_enrich refused: Refusing to run sub-workflow 'enrich': 'quantity' must be an integer (a number with no fractional part), but a string (\"two\") arrived. Call it again with a value of the declared type.
    › running sub-workflow 'enrich' from 'work'

    ● enrich
        › archmax_set_variables
        │ Enriched KK-1.
    ✔ enrich (turn ends here)
    ✔ sub-workflow 'enrich' done (… ms)
    │ KK-1 is low risk.
✔ work (turn ends here)
";
    assert!(flow.contains(expected), "{flow:?}");
    // The child session is listed with its parent.
    let listed = cli(&ws, None, &["sessions", "--workflow", "orders", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.err);
    let rows: serde_json::Value = serde_json::from_str(&listed.out).expect("json");
    let child = rows
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["sessionId"] == "s-1~work:enrich:0")
        .cloned()
        .unwrap_or_default();
    assert_eq!(child["parentSessionId"], "s-1", "{rows}");
}

#[test]
fn the_child_run_alone_enters_the_same_manual_entry_on_the_same_contract() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![
            (
                "k1",
                "archmax_set_variables",
                json!({ "variables": { "order_id": "KK-9" } }),
            ),
            (
                "k2",
                "archmax_set_variables",
                json!({ "variables": { "risk": "low" } }),
            ),
        ]),
        Reply::text("Enriched KK-1."),
    ])
    .expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &[
            "run",
            "enrich",
            "Enrich it.",
            "--variables",
            r#"{"order_id":"KK-1","quantity":2}"#,
            "--session",
            "e-1",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Enriched KK-1.\n");
    assert!(r.err.contains("● enrich\n"), "{}", r.err);
    // The seeds are locked, as a delegation's are: the agent cannot overwrite one.
    let requests = server.requests();
    let answer = tool_results(&requests[1]);
    assert_eq!(answer.len(), 2, "{answer:?}");
    assert!(
        answer[0].contains("order_id") && answer[0].contains("locked"),
        "{answer:?}"
    );
    assert!(!answer[1].contains("locked"), "{answer:?}");

    // The same signature refuses what a delegation would: a missing, then a mistyped input;
    // neither reaches the model.
    let idle = ScriptedServer::start(Vec::new()).expect("server");
    let missing = cli(
        &ws,
        Some(&idle),
        &[
            "run",
            "enrich",
            "Enrich it.",
            "--variables",
            r#"{"order_id":"KK-1"}"#,
        ],
    );
    assert_ne!(missing.code, 0, "{}", missing.err);
    assert!(
        missing.err.contains(
            "Refusing to start: trigger 'manual' requires 'quantity', which this firing does not supply."
        ),
        "{}",
        missing.err
    );
    let mistyped = cli(
        &ws,
        Some(&idle),
        &[
            "run",
            "enrich",
            "Enrich it.",
            "--variables",
            r#"{"order_id":"KK-1","quantity":"two"}"#,
        ],
    );
    assert_ne!(mistyped.code, 0, "{}", mistyped.err);
    assert!(
        mistyped.err.contains("Refusing to start: trigger 'manual' declares typed inputs this firing does not satisfy: "),
        "{}",
        mistyped.err
    );
    assert!(idle.requests().is_empty());
}

const REVIEWS: &str = r#"title: Reviews
instructions: Have orders reviewed.
states:
  work:
    triggers: { manual: }
    instructions: Have the order reviewed, then answer.
    tools:
      allow: [archmax_workflow_review]
"#;

const REVIEW: &str = r#"title: Review
instructions: Review one order.
states:
  check:
    triggers: { manual: { description: Review one order } }
    instructions: Check the order, then hand it to a person.
    transitions:
      - { to: approve, description: Ready for a person. }
  approve:
    type: human
    title: Approve the order
    instructions: A person approves the order.
    transitions:
      - { to: done, description: Approve it., type: approve }
      - { to: check, description: Send it back., type: refine }
  done:
    instructions: Say the order is approved.
"#;

/// The `archmax` binary itself, in its own process, against `server`.
fn archmax(ws: &Workspace, server: &ScriptedServer, args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_archmax"))
        .args(args)
        .arg("--root")
        .arg(ws.root())
        .env("ARCHMAX_API_BASE_URL", server.url())
        .env("ARCHMAX_API_KEY", "k")
        .env("ARCHMAX_MODEL", "scripted-model")
        .env("ARCHMAX_CLI_NO_BANNER", "1")
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

#[test]
fn a_child_parks_its_caller_in_one_process_and_a_decision_in_another_resumes_it() {
    let ws = Workspace::new(&[
        ("workflows/orders/workflow.yaml", REVIEWS),
        ("workflows/review/workflow.yaml", REVIEW),
    ]);
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![("c1", "archmax_workflow_review", json!({}))]),
        Reply::tool_calls(vec![(
            "k1",
            "archmax_advance",
            json!({ "to": "approve", "reason": "checked" }),
        )]),
        Reply::text("KK-1 is with a reviewer."),
        Reply::text("Your order is being reviewed."),
    ])
    .expect("server");
    let run = archmax(
        &ws,
        &server,
        &["run", "orders", "Review KK-1", "--session", "p-1"],
    );
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "Your order is being reviewed.\n"
    );
    // The child's park, presented as the caller's, with the child's declaration.
    assert!(err.contains("sub-workflow 'review' parked ("), "{err}");
    assert!(
        err.contains("Session p-1 is parked at the 'approve' human state (Approve the order) awaiting a decision.\n  Instructions: A person approves the order.\n  [approve] done — Approve it.\n  [refine] check — Send it back.\nDecide it with:\n  archmax decide p-1 --to <state>"),
        "{err}"
    );
    // `sessions` lists the parked child with its parent.
    let listed = cli(&ws, None, &["sessions", "--workflow", "orders", "--json"]);
    assert_eq!(listed.code, 0, "{}", listed.err);
    let rows: serde_json::Value = serde_json::from_str(&listed.out).expect("json");
    let row = |id: &str| {
        rows.as_array()
            .into_iter()
            .flatten()
            .find(|s| s["sessionId"] == id)
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(row("p-1")["status"], "awaiting_decision", "{rows}");
    assert_eq!(row("p-1")["state"], "approve");
    let child = row("p-1~work:review:0");
    assert_eq!(child["parentSessionId"], "p-1", "{rows}");
    assert_eq!(child["status"], "awaiting_decision");
    let text = cli(&ws, None, &["sessions", "--workflow", "orders"]);
    assert!(
        text.out.contains("  [approve] done — Approve it.\n"),
        "{}",
        text.out
    );

    // Another process decides on the caller: the child resumes, then the caller.
    let server = ScriptedServer::start(vec![
        Reply::text("KK-1 is approved."),
        Reply::text("KK-1 was reviewed and approved."),
    ])
    .expect("server");
    let decided = archmax(&ws, &server, &["decide", "p-1", "--to", "done"]);
    let err = String::from_utf8_lossy(&decided.stderr);
    assert_eq!(decided.status.code(), Some(0), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&decided.stdout),
        "KK-1 was reviewed and approved.\n"
    );
    assert!(err.contains("sub-workflow 'review' done ("), "{err}");
    assert_eq!(
        tool_results(&server.requests()[1])
            .last()
            .map(String::as_str),
        Some("[sub-workflow: review] KK-1 is approved.")
    );
    let listed = cli(&ws, None, &["sessions", "--workflow", "orders", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(&listed.out).expect("json");
    let status = |id: &str| {
        rows.as_array()
            .into_iter()
            .flatten()
            .find(|s| s["sessionId"] == id)
            .map(|s| s["status"].clone())
    };
    assert_eq!(status("p-1"), Some(json!("completed")));
    assert_eq!(status("p-1~work:review:0"), Some(json!("completed")));
}

#[test]
fn a_childs_wait_parks_its_caller_and_a_delivery_to_the_caller_in_another_process_resumes_it() {
    let caller = REVIEWS.replace("archmax_workflow_review", "archmax_workflow_waiter");
    let waiter = "title: Payments\nstates:\n  poll:\n    triggers: { manual: { description: Wait for the payment } }\n    instructions: Wait for the payment, then confirm it.\n";
    let ws = Workspace::new(&[
        ("workflows/orders/workflow.yaml", caller.as_str()),
        ("workflows/waiter/workflow.yaml", waiter),
    ]);
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![("c1", "archmax_workflow_waiter", json!({}))]),
        Reply::tool_calls(vec![(
            "k1",
            "archmax_wait",
            json!({ "reason": "the payment" }),
        )]),
        Reply::text("Waiting for the payment."),
        Reply::text("We are waiting for your payment."),
    ])
    .expect("server");
    let run = archmax(
        &ws,
        &server,
        &["run", "orders", "Take the payment", "--session", "w-1"],
    );
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{err}");
    assert!(
        err.contains("Session w-1 is parked in the 'poll' state awaiting an external event.\n  waiting for: the payment\n"),
        "{err}"
    );
    let server = ScriptedServer::start(vec![
        Reply::text("Payment received."),
        Reply::text("Thanks, your payment arrived."),
    ])
    .expect("server");
    let delivered = archmax(
        &ws,
        &server,
        &[
            "deliver",
            "w-1",
            "--trigger",
            "paid",
            "--variables",
            r#"{"amount":5}"#,
        ],
    );
    let err = String::from_utf8_lossy(&delivered.stderr);
    assert_eq!(delivered.status.code(), Some(0), "{err}");
    assert_eq!(
        String::from_utf8_lossy(&delivered.stdout),
        "Thanks, your payment arrived.\n"
    );
    let requests = server.requests();
    assert!(
        requests[0]["messages"]
            .to_string()
            .contains("[event] 'paid' arrived while the run waited in 'poll': amount=5")
    );
    assert_eq!(
        tool_results(&requests[1]).last().map(String::as_str),
        Some("[sub-workflow: waiter] Payment received.")
    );
}
