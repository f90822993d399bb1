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
    ⚠ blocked archmax_workflow_enrich (not allowed in work)
    › running sub-workflow 'enrich' from 'work'
    ✖ sub-workflow 'enrich' failed Refusing to run sub-workflow 'enrich': 'quantity' must be an integer (a number with no fractional part), but a string (\"two\") arrived. Call it again with a value of the declared type.
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
