//! Sub-workflows are tools (`archmax_workflow_<slug>`), end to end: one scripted model
//! answers the caller and its children, over real files.

use std::sync::{Arc, Mutex};

use archmax_machine::{Envelope, EventSink, OutcomeKind};
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, send, tool_results};
use serde_json::{Value, json};

const CALLER: &str = r#"
title: Orders
instructions: Handle the order.
states:
  work:
    triggers: { manual: }
    instructions: Enrich the order, then answer.
    tools:
      allow: [archmax_workflow_enrich, archmax_workflow_off, archmax_workflow_nowhere]
    on_error: failed
    transitions:
      - { to: failed, description: Never by the agent. }
  failed:
    instructions: Apologise.
"#;

const CHILD: &str = r#"
title: Enrichment
instructions: CHILD-ONLY instructions.
states:
  enrich:
    triggers:
      manual:
        description: Enrich one order
        requires:
          - { name: order_id, type: string, description: The order to enrich. }
          - { name: quantity, type: integer }
        returns:
          - { name: risk, type: string }
          - delayed
    instructions: Set risk for the order.
    tools:
      allow: [{ tool: write_file, paths: ["scratchpad/**"] }]
"#;

const OFF: &str = "disabled: true\nstates:\n  s:\n    triggers: { manual: }\n";

#[derive(Default)]
struct Recorder(Mutex<Vec<Value>>);

impl EventSink for Recorder {
    fn emit(&self, e: &Envelope) {
        if let (Ok(mut v), Ok(j)) = (self.0.lock(), serde_json::to_value(e)) {
            v.push(j);
        }
    }
}

fn workspace() -> TempWorkspace {
    TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", CALLER),
        ("workflows/enrich/workflow.yaml", CHILD),
        ("workflows/off/workflow.yaml", OFF),
    ])
}

#[test]
fn a_delegation_runs_the_child_on_its_own_spec_and_answers_with_its_returns() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            (
                "c1",
                "archmax_workflow_enrich",
                json!({ "order_id": "KK-1", "quantity": 2 }),
            ),
            (
                "c2",
                "archmax_workflow_enrich",
                json!({ "order_id": "KK-1" }),
            ),
            ("c3", "archmax_workflow_off", json!({})),
        ]),
        // The child: it writes the caller's scratchpad and sets one of its returns.
        Reply::tool_calls(vec![
            (
                "k1",
                "archmax_set_variables",
                json!({ "variables": { "risk": "low" } }),
            ),
            (
                "k2",
                "write_file",
                json!({ "file_path": "scratchpad/e.md", "content": "enriched" }),
            ),
        ]),
        Reply::text("Enriched KK-1."),
        Reply::text("Done."),
    ]);
    let events = Arc::new(Recorder::default());
    let sink = Arc::clone(&events);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |o| o.events = sink);
    let out = send(&h, "d-1", "Enrich KK-1.");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    assert_eq!(out.reply, "Done.");
    // The child that ran is on the trail; the two refused calls ran nothing.
    let steps: Vec<Value> = out
        .audit_trail
        .iter()
        .filter(|t| t.kind == "sub-workflow")
        .map(|t| json!([t.to, t.workflow, t.status]))
        .collect();
    assert_eq!(steps, vec![json!(["work", "enrich", "ok"])]);
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The tool, from the child's `manual` signature.
    let def = requests[0]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["function"]["name"] == "archmax_workflow_enrich")
        .cloned()
        .expect("the delegation tool is offered");
    assert!(def["function"]["description"].as_str().is_some_and(|d| {
        d.starts_with("Enrich one order. Run the 'enrich' workflow (Enrichment) to completion")
    }));
    assert_eq!(
        def["function"]["parameters"]["required"],
        json!(["order_id", "quantity"])
    );
    // The child: its own instructions, a fresh transcript opened by the opening note.
    let child = &requests[1];
    let system = child["messages"][0]["content"].to_string();
    assert!(system.contains("CHILD-ONLY instructions."));
    assert!(!system.contains("Handle the order."));
    assert_eq!(child["messages"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        child["messages"][1]["content"],
        "Begin. Your instructions are already in context. You were started with these inputs:\n- order_id: \"KK-1\"\n- quantity: 2"
    );
    assert!(
        !requests[0]["messages"][0]["content"]
            .to_string()
            .contains("CHILD-ONLY")
    );
    // The answers, in call order.
    assert_eq!(
        tool_results(&requests[3]),
        vec![
            json!({ "message": "Enriched KK-1.", "returns": { "risk": "low", "note": "Not all return variables were set by the sub-workflow: 'delayed' was not set." } }).to_string(),
            "Refusing to run sub-workflow 'enrich': it requires 'quantity', which this call does not supply. Call it again with that argument.".to_string(),
            "Refusing to run sub-workflow 'off': it is disabled ('disabled: true' in its workflow.yaml), so it starts no run. Remove that flag to re-enable it.".to_string(),
        ]
    );
    // Nothing is captured into the caller's variables; the child wrote the caller's files.
    assert!(!out.variables.contains_key("risk"));
    assert_eq!(
        std::fs::read_to_string(ws.root().join("sessions/d-1/scratchpad/e.md"))
            .ok()
            .as_deref(),
        Some("enriched")
    );
    // The child is its own session, named after the calling state.
    let child_out = h
        .session_summary("d-1~work:enrich:0")
        .expect("store")
        .expect("the child session");
    assert_eq!(child_out.status.as_str(), "completed");
    assert_eq!(child_out.parent_session_id.as_deref(), Some("d-1"));
    // `sessions` lists the child with its parent.
    let listed = h.session_summaries().expect("store");
    assert!(
        listed.iter().any(|s| s.session_id == "d-1~work:enrich:0"
            && s.parent_session_id.as_deref() == Some("d-1")),
        "{listed:?}"
    );
    // Events: a start and a result per call; refusals are blocked calls.
    let seen: Vec<(String, String)> = events
        .0
        .lock()
        .map(|v| {
            v.iter()
                .filter(|e| {
                    e["type"]
                        .as_str()
                        .is_some_and(|t| t.starts_with("sub-workflow") || t == "tool-blocked")
                })
                .map(|e| {
                    let t = e["type"].as_str().unwrap_or_default().to_string();
                    let status = e["status"].as_str().unwrap_or_default().to_string();
                    (t, status)
                })
                .collect()
        })
        .unwrap_or_default();
    let pair = |t: &str, s: &str| (t.to_string(), s.to_string());
    assert_eq!(
        seen,
        vec![
            pair("tool-blocked", ""),
            pair("sub-workflow-start", ""),
            pair("sub-workflow-result", "error"),
            pair("tool-blocked", ""),
            pair("sub-workflow-start", ""),
            pair("sub-workflow-result", "error"),
            pair("sub-workflow-start", ""),
            pair("sub-workflow-result", "ok"),
        ]
    );
    // The result names what the answer's `returns` holds: the note among them.
    let ok = events
        .0
        .lock()
        .ok()
        .and_then(|v| {
            v.iter()
                .find(|e| e["type"] == "sub-workflow-result" && e["status"] == "ok")
                .cloned()
        })
        .unwrap_or_default();
    assert_eq!(ok["returns"], json!(["risk", "note"]));
}

#[test]
fn a_failed_delegation_fails_the_calling_state_when_the_model_finishes() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_workflow_enrich",
            json!({ "order_id": "KK-9", "quantity": 1 }),
        )]),
        // The child raises.
        Reply::tool_calls(vec![(
            "k1",
            "archmax_raise",
            json!({ "code": "no-order", "reason": "KK-9 does not exist" }),
        )]),
        Reply::text("I could not enrich it."),
        Reply::text("Sorry, that failed."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let out = send(&h, "d-2", "Enrich KK-9.");
    let requests = server.requests();
    let failure = "Sub-workflow 'enrich' failed: its agent raised 'no-order' in state 'enrich': KK-9 does not exist";
    assert_eq!(tool_results(&requests[2]), vec![failure.to_string()]);
    // Routed through `on_error` once the model answered without a call.
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    assert_eq!(out.state, "failed");
    let routed = out
        .audit_trail
        .iter()
        .find(|t| t.kind == "on_error")
        .and_then(|t| t.reason.clone());
    assert_eq!(
        routed.as_deref(),
        Some(format!("{failure} (called with {{\"order_id\":\"KK-9\",\"quantity\":1}})").as_str())
    );
}

#[test]
fn a_later_success_recovers_a_failure() {
    let ws = TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", CALLER),
        ("workflows/enrich/workflow.yaml", CHILD),
    ]);
    let args = json!({ "order_id": "KK-1", "quantity": 1 });
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            ("c2", "archmax_workflow_nowhere", json!({})),
            ("c3", "archmax_workflow_enrich", args.clone()),
        ]),
        Reply::tool_calls(vec![(
            "k1",
            "archmax_raise",
            json!({ "code": "flaky", "reason": "try again" }),
        )]),
        Reply::tool_calls(vec![("c4", "archmax_workflow_enrich", args)]),
        Reply::text("Enriched."),
        Reply::text("Done."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let out = send(&h, "d-3", "Enrich KK-1.");
    let requests = server.requests();
    let first = tool_results(&requests[2]);
    assert!(
        first[0].starts_with(
            "Refusing to run sub-workflow 'nowhere': it does not load in this workspace ("
        ),
        "{}",
        first[0]
    );
    assert_eq!(
        first[1],
        "Sub-workflow 'enrich' failed: its agent raised 'flaky' in state 'enrich': try again"
    );
    // The second call, from the same state in a later step, succeeded: nothing routes.
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    assert_eq!(out.state, "work");
    assert_eq!(out.reply, "Done.");
    // Each call got its own child session.
    for id in ["d-3~work:enrich:0", "d-3~work:enrich:1"] {
        assert!(h.session_summary(id).expect("store").is_some(), "{id}");
    }
}

/// A workflow that may hand part of its work to itself.
const SPLIT: &str = r#"
title: Splitter
instructions: Split the order.
states:
  split:
    triggers:
      manual:
        description: Split one order
        returns: [verdict]
    instructions: Split the order, or hand a part of it to yourself.
    tools:
      allow: [archmax_workflow_split]
"#;

/// The events of `events` as `(type, sessionId, subWorkflowDispatchId, dispatchId)`.
fn tagged(events: &Recorder) -> Vec<(String, String, Value, Value)> {
    let seen = events.0.lock().map(|v| v.clone()).unwrap_or_default();
    seen.iter()
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_string(),
                e["sessionId"].as_str().unwrap_or_default().to_string(),
                e["subWorkflowDispatchId"].clone(),
                e["dispatchId"].clone(),
            )
        })
        .collect()
}

#[test]
fn a_workflow_calls_itself_once_and_its_childs_own_call_is_refused() {
    let ws = TempWorkspace::new(&[("workflows/split/workflow.yaml", SPLIT)]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![("c1", "archmax_workflow_split", json!({}))]),
        // The child: its own call of the workflow is refused, and it answers.
        Reply::tool_calls(vec![("k1", "archmax_workflow_split", json!({}))]),
        Reply::text("Part done."),
        Reply::tool_calls(vec![(
            "c2",
            "archmax_set_variables",
            json!({ "variables": { "verdict": "split" } }),
        )]),
        Reply::text("Done."),
    ]);
    let events = Arc::new(Recorder::default());
    let sink = Arc::clone(&events);
    let h = archmax_tests::harness(ws.root(), "split", &server, "m", |o| o.events = sink);
    let out = send(&h, "x-1", "Split KK-1.");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    assert_eq!(out.reply, "Done.");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(
        tool_results(&requests[2]),
        vec![
            "Refusing to run sub-workflow 'split': it is already running in this chain (split → split), so the run would not terminate."
        ]
    );
    assert_eq!(
        tool_results(&requests[3]),
        vec![
            json!({ "message": "Part done.", "returns": { "note": "Not all return variables were set by the sub-workflow: 'verdict' was not set." } }).to_string()
        ]
    );
    // The caller is asked for a title and told its returns are checked; its child is not.
    let system = |i: usize| requests[i]["messages"][0]["content"].to_string();
    let set_variables = |i: usize| {
        requests[i]["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["function"]["name"] == "archmax_set_variables")
            .map(|t| t["function"]["description"].to_string())
            .unwrap_or_default()
    };
    assert!(system(0).contains("1. Give the run a short title first"));
    assert!(system(0).contains("finishing without every one set ends it rejected"));
    assert!(set_variables(0).contains("'title'"), "{}", set_variables(0));
    assert!(!system(1).contains("title"), "{}", system(1));
    assert!(system(1).contains("1. Do the work the current state asks for."));
    assert!(
        system(1).contains("your caller gets the ones you set, with a note naming any you did not")
    );
    assert!(!set_variables(1).contains("title"), "{}", set_variables(1));
    assert!(
        set_variables(1).starts_with("\"Set run variables"),
        "{}",
        set_variables(1)
    );
    // Every event of the child carries its dispatch's id; the child's own (refused)
    // delegation is named under it.
    let seen = tagged(&events);
    for (t, session, tag, _) in &seen {
        let expected = if session == "x-1~split:split:0" {
            json!("subwf-0")
        } else {
            Value::Null
        };
        assert_eq!(tag, &expected, "{t} of {session}");
    }
    let delegations: Vec<(String, String, Value, Value)> = seen
        .into_iter()
        .filter(|(t, ..)| t.starts_with("sub-workflow"))
        .collect();
    let row = |t: &str, session: &str, tag: Value, id: &str| {
        (t.to_string(), session.to_string(), tag, json!(id))
    };
    assert_eq!(
        delegations,
        vec![
            row("sub-workflow-start", "x-1", Value::Null, "subwf-0"),
            row(
                "sub-workflow-start",
                "x-1~split:split:0",
                json!("subwf-0"),
                "subwf-0.0"
            ),
            row(
                "sub-workflow-result",
                "x-1~split:split:0",
                json!("subwf-0"),
                "subwf-0.0"
            ),
            row("sub-workflow-result", "x-1", Value::Null, "subwf-0"),
        ]
    );
    // The caller's result names what the answer's `returns` holds: only the note.
    let results = events.0.lock().map(|v| v.clone()).unwrap_or_default();
    let last = results
        .iter()
        .rfind(|e| e["type"] == "sub-workflow-result")
        .cloned()
        .unwrap_or_default();
    assert_eq!(last["returns"], json!(["note"]));
    assert_eq!(last["status"], "ok");
}

/// An in-process model routing by who asks: the caller fans out `fan` delegations, then
/// finishes; each child calls `probe` once, then answers.
struct Router {
    fan: usize,
}

impl archmax_machine::model::Model for Router {
    fn complete<'a>(
        &'a self,
        req: &'a archmax_machine::model::ChatRequest,
    ) -> archmax_machine::model::ModelFuture<'a> {
        use archmax_machine::model::{AssistantMessage, ChatResponse, ToolCall};
        let messages = serde_json::to_value(&req.messages).unwrap_or(Value::Null);
        let system = messages[0]["content"].to_string();
        let answered = messages
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        let call = |id: String, name: &str, args: Value| ToolCall {
            id,
            name: name.to_string(),
            arguments: args.to_string(),
        };
        let message = match (system.contains("PROBE-CHILD"), answered) {
            (true, false) => AssistantMessage {
                content: None,
                tool_calls: vec![call("p".into(), "probe", json!({}))],
            },
            (false, false) => AssistantMessage {
                content: None,
                tool_calls: (0..self.fan)
                    .map(|i| call(format!("c{i}"), "archmax_workflow_prober", json!({})))
                    .collect(),
            },
            (_, true) => AssistantMessage {
                content: Some("Done.".into()),
                tool_calls: Vec::new(),
            },
        };
        Box::pin(async move {
            Ok(ChatResponse {
                message,
                usage: None,
                model: None,
                finish_reason: None,
            })
        })
    }
}

/// Counts the probes running at once: each waits (at most 1 s) for the limit to be
/// reached, so the highest count seen is how many children ran together.
#[derive(Default)]
struct Probe {
    active: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

impl archmax_machine::HostTool for Probe {
    fn name(&self) -> &str {
        "probe"
    }
    fn description(&self) -> &str {
        "Counts concurrent children."
    }
    fn schema(&self) -> Value {
        json!({ "type": "object" })
    }
    fn call<'a>(
        &'a self,
        _args: Value,
        _ctx: archmax_machine::ToolContext,
    ) -> archmax_machine::tools::BoxFuture<'a, Result<String, String>> {
        use std::sync::atomic::Ordering::SeqCst;
        Box::pin(async move {
            let now = self.active.fetch_add(1, SeqCst) + 1;
            self.most.fetch_max(now, SeqCst);
            for _ in 0..100 {
                if self.active.load(SeqCst) >= 4 {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            self.active.fetch_sub(1, SeqCst);
            Ok("probed".into())
        })
    }
}

#[test]
fn a_batch_runs_its_children_at_once_up_to_four_the_rest_queue() {
    let caller = "states:\n  work:\n    triggers: { manual: }\n    tools:\n      allow: [archmax_workflow_prober]\n";
    let child = "instructions: PROBE-CHILD.\nstates:\n  run:\n    triggers: { manual: }\n    tools:\n      allow: [probe]\n";
    let ws = TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", caller),
        ("workflows/prober/workflow.yaml", child),
    ]);
    let probe = Arc::new(Probe::default());
    let tool = Arc::clone(&probe);
    let server = InProcessModel::new(vec![]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |o| {
        o.model = Arc::new(Router { fan: 6 });
        o.tools = vec![tool];
    });
    let out = send(&h, "fan-1", "Fan out.");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    let answers: Vec<String> = out
        .messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .collect();
    assert_eq!(answers, vec!["Done.".to_string(); 6]);
    assert_eq!(probe.most.load(std::sync::atomic::Ordering::SeqCst), 4);
}

#[test]
fn a_script_fans_out_over_the_delegation_tools() {
    let caller = CALLER.replace(
        "allow: [archmax_workflow_enrich, archmax_workflow_off, archmax_workflow_nowhere]",
        "allow: [archmax_workflow_enrich, archmax_eval]",
    );
    let ws = TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", caller.as_str()),
        ("workflows/enrich/workflow.yaml", CHILD),
    ]);
    let code = "const r = await Promise.all(['A', 'B'].map((id) => tools.archmaxWorkflowEnrich({ order_id: id, quantity: 1 })));\nconst refused = await tools.archmaxWorkflowEnrich({ order_id: 'C' }).catch((e) => String(e));\n[r.map((x) => JSON.parse(x).message), refused.includes(\"requires 'quantity'\")]";
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![("c1", "archmax_eval", json!({ "code": code }))]),
        Reply::text("Enriched."),
        Reply::text("Enriched."),
        Reply::text("Done."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let out = send(&h, "d-4", "Enrich A and B.");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    let requests = server.requests();
    let result = tool_results(&requests[3]).join("\n");
    assert!(
        result.contains("[\n  [\n    \"Enriched.\",\n    \"Enriched.\"\n  ],\n  true\n]"),
        "{result}"
    );
    // A script's children are on the trail too; the refused third call ran nothing.
    let steps = out
        .audit_trail
        .iter()
        .filter(|t| t.kind == "sub-workflow" && t.status.as_deref() == Some("ok"))
        .count();
    assert_eq!(steps, 2);
    for id in ["d-4~work:enrich:0", "d-4~work:enrich:1"] {
        assert!(h.session_summary(id).expect("store").is_some(), "{id}");
    }
}

#[test]
fn every_ancestors_forbid_always_binds_inside_a_child_naming_the_declaring_workflow() {
    let root = r#"
tools:
  forbid_always: [{ tool: write_file, paths: ["scratchpad/secret/**"] }]
states:
  work:
    triggers: { manual: }
    tools:
      allow: [archmax_workflow_mid]
"#;
    let mid = r#"
tools:
  forbid_always: [{ tool: write_file, paths: ["scratchpad/private/**"] }]
states:
  relay:
    triggers: { manual: { description: Relay } }
    tools:
      allow: [archmax_workflow_leaf]
"#;
    let leaf = r#"
states:
  write:
    triggers: { manual: { description: Write } }
    tools:
      allow: [{ tool: write_file, paths: ["scratchpad/**"] }]
"#;
    let ws = TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", root),
        ("workflows/mid/workflow.yaml", mid),
        ("workflows/leaf/workflow.yaml", leaf),
    ]);
    let write = |path: &str| json!({ "file_path": path, "content": "x" });
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![("c1", "archmax_workflow_mid", json!({}))]),
        Reply::tool_calls(vec![("m1", "archmax_workflow_leaf", json!({}))]),
        Reply::tool_calls(vec![
            ("l1", "write_file", write("scratchpad/secret/a.md")),
            ("l2", "write_file", write("scratchpad/private/b.md")),
            ("l3", "write_file", write("scratchpad/open/c.md")),
        ]),
        Reply::text("Leaf done."),
        Reply::text("Mid done."),
        Reply::text("Done."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let out = send(&h, "d-5", "Go.");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 6);
    let leaf_results = tool_results(&requests[3]);
    assert_eq!(
        leaf_results[0],
        "[workflow] BLOCKED: 'write_file' on 'scratchpad/secret/a.md' is forbidden by the workflow inherited from workflow 'orders' (tools.forbid_always: paths=scratchpad/secret/**). A denial beats every grant, so no allow entry here permits it."
    );
    assert_eq!(
        leaf_results[1],
        "[workflow] BLOCKED: 'write_file' on 'scratchpad/private/b.md' is forbidden by the workflow inherited from workflow 'mid' (tools.forbid_always: paths=scratchpad/private/**). A denial beats every grant, so no allow entry here permits it."
    );
    let files = ws.root().join("sessions/d-5/scratchpad");
    assert!(files.join("open/c.md").is_file());
    assert!(!files.join("secret/a.md").exists());
    assert!(!files.join("private/b.md").exists());
    // The leaf run alone answers to its own spec only: the same write is allowed.
    let alone = InProcessModel::new(vec![
        Reply::tool_calls(vec![("l1", "write_file", write("scratchpad/secret/a.md"))]),
        Reply::text("Done."),
    ]);
    let h = archmax_tests::harness(ws.root(), "leaf", &alone, "m", |_| {});
    let out = send(&h, "d-6", "Go.");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    assert!(
        ws.root()
            .join("sessions/d-6/scratchpad/secret/a.md")
            .is_file()
    );
}

#[test]
fn a_mistyped_return_is_refused_where_the_child_writes_it() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_workflow_enrich",
            json!({ "order_id": "KK-1", "quantity": 2 }),
        )]),
        Reply::tool_calls(vec![(
            "k1",
            "archmax_set_variables",
            json!({ "variables": { "risk": 3 } }),
        )]),
        Reply::text("Enriched."),
        Reply::text("Done."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let out = send(&h, "d-7", "Enrich KK-1.");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    let requests = server.requests();
    // The child's signature holds the return to its type when the child writes it...
    assert_eq!(
        tool_results(&requests[2]),
        vec![
            "archmax_set_variables rejected: trigger 'manual' declares this return typed: 'risk' must be a string, but a number (3) arrived. Write a value of the declared type. Nothing was written."
        ]
    );
    // ...so the caller hears of it as an unset return, never as a mistyped value.
    assert_eq!(
        tool_results(&requests[3]),
        vec![
            json!({ "message": "Enriched.", "returns": { "note": "Not all return variables were set by the sub-workflow: 'risk', 'delayed' were not set." } }).to_string()
        ]
    );
}

/// A caller whose state delegates reviews; the child hands each order to a person.
const REVIEWS: &str = r#"
title: Reviews
instructions: CALLER-ROOT.
states:
  work:
    triggers: { manual: }
    instructions: Have the orders reviewed, then answer.
    tools:
      allow: [archmax_workflow_review, archmax_workflow_waiter, archmax_eval]
"#;

const REVIEW: &str = r#"
title: Review
instructions: REVIEW-CHILD.
states:
  check:
    triggers:
      manual:
        description: Review one order
        requires: [{ name: order_id, type: string }]
        returns: [{ name: verdict, type: string }]
    instructions: Check the order, then hand it to a person.
    transitions:
      - { to: approve, description: Ready for a person. }
  approve:
    type: human
    title: Approve the order
    instructions: A person approves the order.
    evidence: [scratchpad/review.md]
    transitions:
      - { to: done, description: Approve it., type: approve }
      - { to: check, description: Send it back., type: refine }
  done:
    instructions: Record the verdict and say the order is approved.
"#;

const WAITER: &str = r#"
instructions: WAIT-CHILD.
states:
  poll:
    triggers: { manual: { description: Wait for the payment } }
    instructions: Wait for the payment, then confirm it.
"#;

fn reviews() -> TempWorkspace {
    TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", REVIEWS),
        ("workflows/review/workflow.yaml", REVIEW),
        ("workflows/waiter/workflow.yaml", WAITER),
    ])
}

/// The caller's call: `review` for KK-1.
fn review_kk1() -> Reply {
    Reply::tool_calls(vec![(
        "c1",
        "archmax_workflow_review",
        json!({ "order_id": "KK-1" }),
    )])
}

/// A child's move into its human state `approve` (call `id`).
fn to_approve(id: &str) -> Reply {
    Reply::tool_calls(vec![(
        id,
        "archmax_advance",
        json!({ "to": "approve", "reason": "checked" }),
    )])
}

fn decide(h: &archmax_machine::Harness, id: &str, to: &str) -> archmax_machine::Outcome {
    archmax_tests::rt()
        .block_on(h.decide(id, to, Some("fine")))
        .expect("decide")
}

/// The `sub-workflow-result` statuses, in order.
fn result_statuses(events: &Recorder) -> Vec<String> {
    let seen = events.0.lock().map(|v| v.clone()).unwrap_or_default();
    seen.iter()
        .filter(|e| e["type"] == "sub-workflow-result")
        .map(|e| e["status"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_child_that_parks_parks_its_caller_and_a_decision_on_the_caller_resumes_it() {
    let ws = reviews();
    let server = InProcessModel::new(vec![
        review_kk1(),
        // The child moves into its human state and owes the person one message.
        to_approve("k1"),
        Reply::text("KK-1 is with a reviewer."),
        // The caller parks with it, and owes its own closing message.
        Reply::text("Your order is being reviewed."),
    ]);
    let events = Arc::new(Recorder::default());
    let sink = Arc::clone(&events);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |o| o.events = sink);
    let parked = send(&h, "p-1", "Review KK-1.");
    assert_eq!(parked.kind, OutcomeKind::Parked, "{parked:?}");
    assert_eq!(parked.status, "awaiting_decision");
    assert_eq!(parked.reply, "Your order is being reviewed.");
    assert_eq!(parked.workflow_state, "work");
    // The caller's park presents the child's decision, numbered in the caller's sequence.
    let pending = serde_json::to_value(&parked.pending).expect("json");
    assert_eq!(pending["channel"], "decision");
    assert_eq!(pending["state"], "approve");
    assert_eq!(pending["title"], "Approve the order");
    assert_eq!(pending["seq"], 1);
    assert_eq!(pending["evidence"], json!(["scratchpad/review.md"]));
    assert_eq!(
        pending["transitions"],
        json!([
            { "to": "done", "description": "Approve it.", "type": "approve" },
            { "to": "check", "description": "Send it back.", "type": "refine" }
        ])
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    // The call was answered at once; the caller's closing turn is reply-only.
    assert_eq!(
        tool_results(&requests[3]),
        vec![
            "The 'review' sub-workflow stopped for a person at its 'approve' step. This run is now waiting on that decision and will continue here once it is made."
        ]
    );
    let closing = requests[3]["messages"][0]["content"].to_string();
    assert!(closing.contains("## This run is parked"), "{closing}");
    assert!(
        closing.contains("'approve' (Approve the order) is now waiting"),
        "{closing}"
    );
    assert_eq!(result_statuses(&events), vec!["parked"]);
    // The child is parked in its own session, under its parent.
    let child = h
        .session_summary("p-1~work:review:0")
        .expect("store")
        .expect("the child session");
    assert_eq!(child.parent_session_id.as_deref(), Some("p-1"));
    assert_eq!(child.state.as_deref(), Some("approve"));
    assert_eq!(
        serde_json::to_value(child.status).expect("json"),
        "awaiting_decision"
    );
    drop(h);

    // Another process: a new harness over the same files. A message to the caller is
    // answered by the caller, and it stays parked on the same record.
    let server = InProcessModel::new(vec![
        Reply::text("It is still with the reviewer."),
        Reply::tool_calls(vec![(
            "k2",
            "archmax_set_variables",
            json!({ "variables": { "verdict": "approved" } }),
        )]),
        Reply::text("KK-1 is approved."),
        Reply::text("KK-1 was reviewed and approved."),
    ]);
    let events = Arc::new(Recorder::default());
    let sink = Arc::clone(&events);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |o| o.events = sink);
    let replied = archmax_tests::rt()
        .block_on(h.reply("p-1", "Any news?"))
        .expect("reply");
    assert_eq!(replied.kind, OutcomeKind::Parked, "{replied:?}");
    assert_eq!(replied.reparked, Some(true));
    assert_eq!(replied.reply, "It is still with the reviewer.");
    assert_eq!(
        serde_json::to_value(&replied.pending).expect("json"),
        pending
    );
    let refused = archmax_tests::rt()
        .block_on(h.decide("p-1", "approve", None))
        .expect_err("the parked state is not a target");
    assert!(
        refused.to_string().contains("Choose one of: done, check"),
        "{refused}"
    );
    let done = decide(&h, "p-1", "done");
    assert_eq!(done.kind, OutcomeKind::Completed, "{done:?}");
    assert_eq!(done.disposition, "decide");
    assert_eq!(done.reply, "KK-1 was reviewed and approved.");
    assert_eq!(done.state, "work");
    let requests = server.requests()[1..].to_vec();
    assert_eq!(requests.len(), 3);
    // The child resumed on its own transcript with the decision note.
    let child_request = requests[0]["messages"].to_string();
    assert!(child_request.contains("REVIEW-CHILD."));
    assert!(child_request.contains(
        "[decision] A human selected approve → 'done' at the 'approve' checkpoint: fine."
    ));
    // Its answer lands in the caller's transcript as a note; the caller's turn goes on.
    let caller_request = &requests[2]["messages"];
    assert!(
        caller_request[0]["content"]
            .to_string()
            .contains("CALLER-ROOT.")
    );
    let note = format!(
        "[sub-workflow: review] {}",
        json!({ "message": "KK-1 is approved.", "returns": { "verdict": "approved" } })
    );
    assert_eq!(tool_results(&requests[2]).last(), Some(&note));
    assert_eq!(result_statuses(&events), vec!["ok"]);
    let seen = events.0.lock().map(|v| v.clone()).unwrap_or_default();
    let decided: Vec<&Value> = seen.iter().filter(|e| e["type"] == "decided").collect();
    assert_eq!(decided.len(), 2, "the caller's and the child's");
    assert_eq!(decided[0]["sessionId"], "p-1");
    assert_eq!(decided[0]["state"], "work");
    assert_eq!(decided[1]["sessionId"], "p-1~work:review:0");
    let child = h
        .session_summary("p-1~work:review:0")
        .expect("store")
        .expect("the child session");
    assert_eq!(
        serde_json::to_value(child.status).expect("json"),
        "completed"
    );
    assert!(done.pending.is_none());
    // One trail step for the delegation, once it settled (none while it was parked).
    let steps: Vec<Value> = done
        .audit_trail
        .iter()
        .filter(|t| t.kind == "sub-workflow")
        .map(|t| json!([t.to, t.workflow, t.status]))
        .collect();
    assert_eq!(steps, vec![json!(["work", "review", "ok"])]);
}

/// An in-process model for concurrent children, answering by who asks: the caller fans
/// out two reviews, then finishes; each child moves to its human state, then, once
/// decided, answers; every parked turn says one line.
struct Reviewers;

impl archmax_machine::model::Model for Reviewers {
    fn complete<'a>(
        &'a self,
        req: &'a archmax_machine::model::ChatRequest,
    ) -> archmax_machine::model::ModelFuture<'a> {
        use archmax_machine::model::{AssistantMessage, ChatResponse, ToolCall};
        let messages = serde_json::to_value(&req.messages).unwrap_or(Value::Null);
        let system = messages[0]["content"].to_string();
        let answered = messages
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
        let call = |id: &str, name: &str, args: Value| ToolCall {
            id: id.to_string(),
            name: name.to_string(),
            arguments: args.to_string(),
        };
        let say = |text: &str| AssistantMessage {
            content: Some(text.to_string()),
            tool_calls: Vec::new(),
        };
        let child = system.contains("REVIEW-CHILD");
        let message = if system.contains("## This run is parked") {
            say(if child {
                "With a reviewer."
            } else {
                "Both orders are with reviewers."
            })
        } else if child && system.contains("## Current state: check") {
            AssistantMessage {
                content: None,
                tool_calls: vec![call(
                    "k1",
                    "archmax_advance",
                    json!({ "to": "approve", "reason": "checked" }),
                )],
            }
        } else if child {
            say("Approved.")
        } else if !answered {
            AssistantMessage {
                content: None,
                tool_calls: vec![
                    call(
                        "c1",
                        "archmax_workflow_review",
                        json!({ "order_id": "KK-1" }),
                    ),
                    call(
                        "c2",
                        "archmax_workflow_review",
                        json!({ "order_id": "KK-2" }),
                    ),
                ],
            }
        } else {
            say("All done.")
        };
        Box::pin(async move {
            Ok(ChatResponse {
                message,
                usage: None,
                model: None,
                finish_reason: None,
            })
        })
    }
}

fn seq_of(out: &archmax_machine::Outcome) -> Value {
    serde_json::to_value(&out.pending).expect("json")["seq"].clone()
}

#[test]
fn two_children_parked_in_one_batch_are_presented_one_at_a_time() {
    let ws = reviews();
    let server = InProcessModel::new(vec![]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |o| {
        o.model = Arc::new(Reviewers);
    });
    let first = send(&h, "p-2", "Review KK-1 and KK-2.");
    assert_eq!(first.kind, OutcomeKind::Parked, "{first:?}");
    assert_eq!(first.state, "approve");
    assert_eq!(seq_of(&first), 1);
    // Both calls were answered, in call order, and both children wait.
    let stopped = "The 'review' sub-workflow stopped for a person at its 'approve' step. This run is now waiting on that decision and will continue here once it is made.";
    let answers: Vec<&str> = first
        .messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(answers, vec![stopped, stopped]);
    for id in ["p-2~work:review:0", "p-2~work:review:1"] {
        let s = h.session_summary(id).expect("store").expect(id);
        assert_eq!(
            serde_json::to_value(s.status).expect("json"),
            "awaiting_decision"
        );
    }
    // The first decision resumes the first child; the second child is presented next,
    // on the caller's next seq (each child's own record is its seq 1).
    let second = decide(&h, "p-2", "done");
    assert_eq!(second.kind, OutcomeKind::Parked, "{second:?}");
    assert_eq!(second.reparked, Some(true));
    assert_eq!(seq_of(&second), 2);
    let done = |id: &str| {
        let s = h.session_summary(id).expect("store").expect(id);
        serde_json::to_value(s.status).expect("json") == "completed"
    };
    assert!(done("p-2~work:review:0"));
    assert!(!done("p-2~work:review:1"));
    let notes: Vec<&str> = second
        .messages
        .iter()
        .filter_map(|m| m["content"].as_str())
        .filter(|t| t.starts_with("[sub-workflow: review]"))
        .collect();
    let note = format!(
        "[sub-workflow: review] {}",
        json!({ "message": "Approved.", "returns": { "note": "Not all return variables were set by the sub-workflow: 'verdict' was not set." } })
    );
    assert_eq!(notes, vec![note.as_str()]);
    // The second decision resumes the second child; with none left the caller goes on.
    let last = decide(&h, "p-2", "done");
    assert_eq!(last.kind, OutcomeKind::Completed, "{last:?}");
    assert_eq!(last.reply, "All done.");
    assert!(done("p-2~work:review:1"));
    let notes = last
        .messages
        .iter()
        .filter_map(|m| m["content"].as_str())
        .filter(|t| t.starts_with("[sub-workflow: review]"))
        .count();
    assert_eq!(notes, 2);
}

#[test]
fn a_fresh_turn_abandons_a_queued_child() {
    let ws = reviews();
    let server = InProcessModel::new(vec![
        review_kk1(),
        to_approve("k1"),
        Reply::text("With a reviewer."),
        // The caller's closing message fails: its turn ends with the child still queued.
        Reply::error(500, "model down"),
        Reply::text("Starting over."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let failed = send(&h, "p-3", "Review KK-1.");
    assert_eq!(failed.kind, OutcomeKind::Failed, "{failed:?}");
    // The next message is a fresh turn: the queued child is abandoned, never presented.
    let fresh = send(&h, "p-3", "Start over.");
    assert_eq!(fresh.kind, OutcomeKind::Completed, "{fresh:?}");
    assert_eq!(fresh.reply, "Starting over.");
    assert!(fresh.pending.is_none());
    let refused = archmax_tests::rt()
        .block_on(h.decide("p-3", "done", None))
        .expect_err("nothing to decide");
    assert_eq!(
        refused.to_string(),
        "Session 'p-3' is not parked at a human state; there is nothing to decide."
    );
    // The child itself still waits where it stopped.
    let child = h
        .session_summary("p-3~work:review:0")
        .expect("store")
        .expect("child");
    assert_eq!(
        serde_json::to_value(child.status).expect("json"),
        "awaiting_decision"
    );
    assert_eq!(server.remaining(), 0);
}

#[test]
fn a_childs_wait_parks_its_caller_for_input_and_a_delivery_on_the_caller_reaches_the_child() {
    let ws = reviews();
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![("c1", "archmax_workflow_waiter", json!({}))]),
        Reply::tool_calls(vec![(
            "k1",
            "archmax_wait",
            json!({ "reason": "the payment" }),
        )]),
        Reply::text("Waiting for the payment."),
        Reply::text("We are waiting for your payment."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let parked = send(&h, "p-4", "Take the payment.");
    assert_eq!(parked.kind, OutcomeKind::Parked, "{parked:?}");
    assert_eq!(parked.status, "awaiting_input");
    assert_eq!(parked.parked_channel, Some("input"));
    let pending = serde_json::to_value(&parked.pending).expect("json");
    assert_eq!(pending["state"], "poll");
    assert_eq!(pending["reason"], "the payment");
    let closing = server.requests()[3]["messages"][0]["content"].to_string();
    assert!(
        closing.contains("You have parked this run: it stays in 'poll' until something arrives from outside (the payment)."),
        "{closing}"
    );
    let server = InProcessModel::new(vec![
        Reply::text("Payment received."),
        Reply::text("Thanks, your payment arrived."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let mut variables = serde_json::Map::new();
    variables.insert("amount".into(), json!(5));
    let done = archmax_tests::rt()
        .block_on(h.deliver("p-4", "paid", variables, None))
        .expect("deliver");
    assert_eq!(done.kind, OutcomeKind::Completed, "{done:?}");
    assert_eq!(done.disposition, "deliver");
    assert_eq!(done.reply, "Thanks, your payment arrived.");
    let requests = server.requests();
    // The child got the event; the caller got the child's answer.
    assert!(
        requests[0]["messages"]
            .to_string()
            .contains("[event] 'paid' arrived while the run waited in 'poll': amount=5")
    );
    assert_eq!(
        tool_results(&requests[1]).last().map(String::as_str),
        Some("[sub-workflow: waiter] Payment received.")
    );
    // The delivered variables are the child's, not the caller's.
    assert!(done.variables.get("amount").is_none());
    let child = h
        .session_summary("p-4~work:waiter:0")
        .expect("store")
        .expect("child");
    assert!(child.variables.is_some_and(|v| v.contains_key("amount")));
}

#[test]
fn a_scripts_delegation_cannot_park_its_call_fails_parked() {
    let ws = reviews();
    let code = "await tools.archmaxWorkflowReview({ order_id: 'KK-1' }).catch((e) => String(e))";
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![("c1", "archmax_eval", json!({ "code": code }))]),
        to_approve("k1"),
        Reply::text("With a reviewer."),
        Reply::text("The review could not run from a script."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let out = send(&h, "p-5", "Review KK-1 from a script.");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    assert!(out.pending.is_none());
    let result = tool_results(&server.requests()[3]).join("\n");
    assert!(
        result.contains("Sub-workflow 'review' settled in state 'approve' with status 'awaiting_decision' but no pending suspension, so nothing could resume it."),
        "{result}"
    );
}

#[test]
fn a_childs_own_hook_gates_its_moves_and_reads_its_seeds() {
    let caller = "states:\n  work:\n    triggers: { manual: }\n    tools:\n      allow: [archmax_workflow_gated]\n";
    let child = "instructions: GATED-CHILD.\nstates:\n  draft:\n    triggers:\n      manual:\n        description: Gate one order\n        requires: [order_id]\n    after: { script: hooks/check.js }\n    transitions: [{ to: done, description: Finished. }]\n  done:\n    instructions: Say so.\n";
    // The hook is the child's (its own folder), and reads the child's variables.
    let check = "import { ok, veto } from '@archmax-ai/harness'\n\nexport default (input) => input.variables.risk === undefined ? veto(`no risk yet for ${input.variables.order_id}`) : ok()\n";
    let ws = TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", caller),
        ("workflows/gated/workflow.yaml", child),
        ("workflows/gated/hooks/check.js", check),
    ]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_workflow_gated",
            json!({ "order_id": "KK-1" }),
        )]),
        Reply::tool_calls(vec![(
            "k1",
            "archmax_advance",
            json!({ "to": "done", "reason": "ready" }),
        )]),
        Reply::tool_calls(vec![
            (
                "k2",
                "archmax_set_variables",
                json!({ "variables": { "risk": "low" } }),
            ),
            (
                "k3",
                "archmax_advance",
                json!({ "to": "done", "reason": "risk set" }),
            ),
        ]),
        Reply::text("Gated KK-1."),
        Reply::text("Done."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let out = send(&h, "g-1", "Gate KK-1.");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    let requests = server.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(
        tool_results(&requests[2]),
        vec!["archmax_advance rejected: hook veto: no risk yet for KK-1"]
    );
    assert_eq!(tool_results(&requests[4]), vec!["Gated KK-1."]);
    let child = h
        .session_summary("g-1~work:gated:0")
        .expect("store")
        .expect("child");
    assert_eq!(child.workflow_state.as_deref(), Some("done"));
}

#[test]
fn a_grandchilds_park_reaches_the_root_and_one_decision_unwinds_the_chain() {
    let root = "states:\n  work:\n    triggers: { manual: }\n    tools:\n      allow: [archmax_workflow_mid]\n";
    let mid = "instructions: MID.\nstates:\n  relay:\n    triggers: { manual: { description: Relay } }\n    tools:\n      allow: [archmax_workflow_review]\n";
    let ws = TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", root),
        ("workflows/mid/workflow.yaml", mid),
        ("workflows/review/workflow.yaml", REVIEW),
    ]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![("c1", "archmax_workflow_mid", json!({}))]),
        Reply::tool_calls(vec![(
            "m1",
            "archmax_workflow_review",
            json!({ "order_id": "KK-1" }),
        )]),
        to_approve("l1"),
        Reply::text("Leaf waits."),
        Reply::text("Mid waits."),
        Reply::text("Root waits."),
        // One decision on the root: the leaf finishes, then the middle, then the root.
        Reply::text("Leaf approved."),
        Reply::text("Mid done."),
        Reply::text("Root done."),
    ]);
    let events = Arc::new(Recorder::default());
    let sink = Arc::clone(&events);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |o| o.events = sink);
    let parked = send(&h, "n-1", "Go.");
    assert_eq!(parked.kind, OutcomeKind::Parked, "{parked:?}");
    assert_eq!(parked.state, "approve");
    assert_eq!(parked.reply, "Root waits.");
    // The root's park is its child's: the outcome names that child and the call.
    assert_eq!(
        serde_json::to_value(&parked.delegation).expect("json"),
        json!({
            "workflow": "mid",
            "sessionId": "n-1~work:mid:0",
            "identity": "work:mid:0",
            "dispatchId": "subwf-0",
            "toolCallId": "c1",
            "state": "work",
        })
    );
    // Presented at the root with the leaf's own declaration of its state.
    let park = h.session_park("n-1").expect("store").expect("parked");
    assert_eq!(park["instructions"], "A person approves the order.");
    let mid_id = "n-1~work:mid:0";
    let leaf_id = "n-1~work:mid:0~relay:review:0";
    for id in [mid_id, leaf_id] {
        let s = h.session_summary(id).expect("store").expect(id);
        assert_eq!(
            serde_json::to_value(s.status).expect("json"),
            "awaiting_decision",
            "{id}"
        );
    }
    let done = decide(&h, "n-1", "done");
    assert_eq!(done.kind, OutcomeKind::Completed, "{done:?}");
    assert_eq!(done.reply, "Root done.");
    assert_eq!(done.delegation, None);
    // Each session's events carry the delegation it runs for, in its first run and after
    // the decision: the middle's `subwf-0`, the leaf's `subwf-0.0` (the middle's first).
    for (t, session, tag, _) in tagged(&events) {
        let expected = match session.as_str() {
            "n-1" | "" => Value::Null,
            s if s == mid_id => json!("subwf-0"),
            s if s == leaf_id => json!("subwf-0.0"),
            other => panic!("an event of {other}"),
        };
        assert_eq!(tag, expected, "{t} of {session}");
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 9);
    assert_eq!(
        tool_results(&requests[7]).last().map(String::as_str),
        Some(
            "[sub-workflow: review] {\"message\":\"Leaf approved.\",\"returns\":{\"note\":\"Not all return variables were set by the sub-workflow: 'verdict' was not set.\"}}"
        )
    );
    assert_eq!(
        tool_results(&requests[8]).last().map(String::as_str),
        Some("[sub-workflow: mid] Mid done.")
    );
    for id in [mid_id, leaf_id] {
        let s = h.session_summary(id).expect("store").expect(id);
        assert_eq!(
            serde_json::to_value(s.status).expect("json"),
            "completed",
            "{id}"
        );
    }
}

#[test]
fn the_callers_own_wait_beside_a_parked_child_is_its_own_and_the_child_is_presented_after() {
    let ws = reviews();
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            (
                "c1",
                "archmax_workflow_review",
                json!({ "order_id": "KK-1" }),
            ),
            ("c2", "archmax_wait", json!({ "reason": "the bank" })),
        ]),
        to_approve("k1"),
        Reply::text("With a reviewer."),
        Reply::text("Waiting for the bank."),
        // Delivered to the caller's own wait: the queued child is presented next.
        Reply::text("The review is with a person now."),
        // Decided: the child finishes, then the caller.
        Reply::text("Approved."),
        Reply::text("All done."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let waiting = send(&h, "p-6", "Review KK-1 once the bank answers.");
    assert_eq!(waiting.kind, OutcomeKind::Parked, "{waiting:?}");
    let pending = serde_json::to_value(&waiting.pending).expect("json");
    assert_eq!(pending["state"], "work");
    assert_eq!(pending["reason"], "the bank");
    let delivered = archmax_tests::rt()
        .block_on(h.deliver("p-6", "bank", serde_json::Map::new(), None))
        .expect("deliver");
    assert_eq!(delivered.kind, OutcomeKind::Parked, "{delivered:?}");
    assert_eq!(delivered.state, "approve");
    assert_eq!(delivered.reply, "The review is with a person now.");
    // The delivery was the caller's: the child still waited for its decision.
    let child = h
        .session_summary("p-6~work:review:0")
        .expect("store")
        .expect("child");
    assert_eq!(
        serde_json::to_value(child.status).expect("json"),
        "awaiting_decision"
    );
    let done = decide(&h, "p-6", "done");
    assert_eq!(done.kind, OutcomeKind::Completed, "{done:?}");
    assert_eq!(done.reply, "All done.");
    assert_eq!(server.remaining(), 0);
}
