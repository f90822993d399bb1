//! The runtime end to end: a real harness, real files, a scripted model answering in
//! process; over real HTTP to a scripted server on 127.0.0.1 where a turn meets the client's
//! retries and bounds.

use std::sync::{Arc, Mutex};

use archmax_machine::model::{Model, ModelConfig, OpenAiClient, RetryPolicy};
use archmax_machine::store::FsStore;
use archmax_machine::{Envelope, EventSink, Harness, HarnessOptions, OutcomeKind, SendInput};
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::{Reply, ScriptedServer};
use archmax_tests::{ModelEndpoint, TempWorkspace, rt, tool_results};
use serde_json::{Map, Value, json};

const SPEC: &str = r#"
title: Order help
instructions: Answer order questions.
tools:
  forbid_always: [archmax_reset]
states:
  classify:
    triggers: { manual: }
    instructions: Decide what the customer wants.
    requires: [order_id]
    tools:
      allow:
        - { tool: write_file, paths: ["scratchpad/**"] }
        - { tool: read_file, args: { file_path: ["orders/${{order_id}}.json"] } }
    transitions:
      - { to: answer, description: The order is known. }
  answer:
    instructions: Answer from the order data.
"#;

#[derive(Default)]
struct Recorder(Mutex<Vec<Value>>);

impl EventSink for Recorder {
    fn emit(&self, e: &Envelope) {
        if let (Ok(mut v), Ok(j)) = (self.0.lock(), serde_json::to_value(e)) {
            v.push(j);
        }
    }
}

impl Recorder {
    fn types(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|v| {
                v.iter()
                    .filter_map(|e| e["type"].as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A harness over `SPEC` whose model answers from `server`'s script, in process.
fn harness(ws: &TempWorkspace, server: &InProcessModel, events: Arc<Recorder>) -> Harness {
    harness_on(ws, server.model("scripted-model"), events)
}

/// A harness over `SPEC` whose model is the HTTP client of `server`, two attempts per call:
/// for what a turn makes of the client's retries and bounds.
fn http_harness(ws: &TempWorkspace, server: &ScriptedServer, events: Arc<Recorder>) -> Harness {
    let mut config = ModelConfig::new(server.url(), "test-key", "scripted-model");
    config.retry = RetryPolicy {
        attempts: 2,
        base_delay: std::time::Duration::from_millis(1),
        ..RetryPolicy::default()
    };
    let client = OpenAiClient::new(config).expect("client");
    harness_on(ws, Arc::new(client), events)
}

fn harness_on(ws: &TempWorkspace, model: Arc<dyn Model>, events: Arc<Recorder>) -> Harness {
    Harness::assemble(HarnessOptions {
        root: ws.root().to_path_buf(),
        workflow: "orders".to_string(),
        model,
        default_model: "scripted-model".to_string(),
        store: Arc::new(FsStore::new(ws.root())),
        events,
        tools: Vec::new(),
        essential_tools: Vec::new(),
        mounts: None,
        skills: vec!["skills/".to_string()],
    })
    .expect("harness")
}

fn workspace() -> TempWorkspace {
    TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", SPEC),
        ("AGENTS.md", "You are Kettle, a support agent."),
        // Run state lives in the session folder: the agent's `orders/…` is there.
        ("sessions/s-1/orders/KK-1.json", "{\"status\": \"shipped\"}"),
    ])
}

#[test]
fn a_governed_turn_runs_tools_moves_and_completes() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            (
                "c1",
                "archmax_set_variables",
                json!({ "variables": { "order_id": "KK-1", "title": "Order KK-1" } }),
            ),
            (
                "c2",
                "write_file",
                json!({ "file_path": "scratchpad/notes.md", "content": "looked up" }),
            ),
            (
                "c3",
                "read_file",
                json!({ "file_path": "orders/${{order_id}}.json" }),
            ),
            (
                "c4",
                "read_file",
                json!({ "file_path": "orders/KK-2.json" }),
            ),
        ]),
        Reply::tool_calls(vec![(
            "c5",
            "archmax_advance",
            json!({ "to": "answer", "reason": "order known" }),
        )]),
        Reply::text("Your order KK-1 has shipped."),
    ]);
    let events = Arc::new(Recorder::default());
    let h = harness(&ws, &server, events.clone());
    let out = rt()
        .block_on(h.send(
            "s-1",
            SendInput {
                message: "Where is KK-1?".into(),
                ..SendInput::default()
            },
        ))
        .expect("turn");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    assert_eq!(out.reply, "Your order KK-1 has shipped.");
    assert_eq!(out.state, "answer");
    assert_eq!(out.variables["order_id"]["value"], "KK-1");
    let notes = std::fs::read_to_string(ws.root().join("sessions/s-1/scratchpad/notes.md"))
        .expect("written in the session");
    assert_eq!(notes, "looked up");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let system = requests[0]["messages"][0]["content"]
        .as_str()
        .expect("system prompt");
    assert!(
        system.starts_with("You are Kettle, a support agent."),
        "{system}"
    );
    assert!(system.contains("## Current state: classify"));
    assert!(system.contains("- to `answer` (terminal) — The order is known."));
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        tools.contains(&"write_file") && tools.contains(&"archmax_advance"),
        "{tools:?}"
    );
    assert!(
        !tools.contains(&"archmax_reset"),
        "forbidden tools are not disclosed: {tools:?}"
    );
    // The tool results the model saw in the second request.
    let results: Vec<&str> = requests[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(results[0], "Set order_id, title.");
    assert_eq!(results[1], "Successfully wrote to 'scratchpad/notes.md'");
    assert!(
        results[2].contains("shipped"),
        "the guard resolved order_id: {}",
        results[2]
    );
    assert!(results[3].starts_with("[workflow] BLOCKED: 'read_file' on 'orders/KK-2.json' is not allowed in state 'classify'."), "{}", results[3]);
    let third = requests[2]["messages"][0]["content"]
        .as_str()
        .expect("system");
    assert!(third.contains("## Current state: answer"));
    // The static prefix is byte-identical across states.
    let prefix = |s: &str| {
        s.split("Current date and time:")
            .next()
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(prefix(system), prefix(third));

    let types = events.types();
    for t in [
        "advance",
        "state-enter",
        "tool-called",
        "tool-blocked",
        "variables-set",
        "title-set",
        "state-leave",
        "agent-text",
    ] {
        assert!(types.iter().any(|x| x == t), "no {t} event in {types:?}");
    }
    let seqs: Vec<u64> = events
        .0
        .lock()
        .expect("events")
        .iter()
        .filter_map(|e| e["seq"].as_u64())
        .collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "seq strictly increases"
    );
}

#[test]
fn the_session_persists_and_the_next_turn_continues_where_it_ended() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            (
                "c1",
                "archmax_set_variables",
                json!({ "variables": { "order_id": "KK-1" } }),
            ),
            (
                "c2",
                "archmax_advance",
                json!({ "to": "answer", "reason": "known" }),
            ),
        ]),
        Reply::text("Shipped."),
        Reply::text("You are welcome."),
    ]);
    let first = {
        let h = harness(&ws, &server, Arc::new(Recorder::default()));
        rt().block_on(h.send(
            "s-2",
            SendInput {
                message: "Where is KK-1?".into(),
                ..SendInput::default()
            },
        ))
        .expect("turn")
    };
    assert_eq!(first.state, "answer");
    // A new harness (a new process, in effect) reads the session from disk.
    let h = harness(&ws, &server, Arc::new(Recorder::default()));
    let second = rt()
        .block_on(h.send(
            "s-2",
            SendInput {
                message: "Thanks!".into(),
                ..SendInput::default()
            },
        ))
        .expect("turn");
    assert_eq!(second.kind, OutcomeKind::Completed);
    assert_eq!(
        second.state, "answer",
        "continues in the state the last turn ended in"
    );
    assert_eq!(second.reply, "You are welcome.");
    let third = &server.requests()[2];
    let roles: Vec<&str> = third["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter_map(|m| m["role"].as_str())
        .collect();
    assert_eq!(
        roles,
        vec![
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "user"
        ],
        "the whole transcript is replayed"
    );
}

#[test]
fn leaving_with_unset_requires_is_refused_and_a_raise_fails_the_session() {
    let ws = workspace();
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "answer", "reason": "done" }),
        )]),
        Reply::tool_calls(vec![(
            "c2",
            "archmax_raise",
            json!({ "code": "orders-unavailable", "reason": "no order id" }),
        )]),
    ]);
    let h = harness(&ws, &server, Arc::new(Recorder::default()));
    let out = rt()
        .block_on(h.send(
            "s-3",
            SendInput {
                message: "help".into(),
                ..SendInput::default()
            },
        ))
        .expect("turn");
    assert_eq!(out.kind, OutcomeKind::Failed);
    assert_eq!(
        out.exit,
        Some(json!({ "success": false, "code": "orders-unavailable", "reason": "no order id" }))
    );
    let second = &server.requests()[1];
    let advance_result = second["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default();
    assert_eq!(
        advance_result,
        "archmax_advance rejected: cannot leave 'classify' yet: 'order_id' is not set. Record it with archmax_set_variables, then advance."
    );
}

#[test]
fn a_model_that_keeps_failing_ends_the_turn_failed_and_the_next_message_starts_fresh() {
    let ws = workspace();
    // Over HTTP: the two 503s are one call's two attempts (the client's retry).
    let server = ScriptedServer::start(vec![
        Reply::Status(503, "down".into()),
        Reply::Status(503, "down".into()),
        Reply::text("Back."),
    ])
    .expect("server");
    let h = http_harness(&ws, &server, Arc::new(Recorder::default()));
    let out = rt()
        .block_on(h.send(
            "s-4",
            SendInput {
                message: "hi".into(),
                ..SendInput::default()
            },
        ))
        .expect("turn");
    assert_eq!(out.kind, OutcomeKind::Failed);
    assert_eq!(
        out.exit.as_ref().and_then(|e| e["code"].as_str()),
        Some("turn-error")
    );
    let again = rt()
        .block_on(h.send(
            "s-4",
            SendInput {
                message: "hi again".into(),
                ..SendInput::default()
            },
        ))
        .expect("turn");
    assert_eq!(again.kind, OutcomeKind::Completed);
    assert_eq!(again.reply, "Back.");
}

#[test]
fn the_model_call_budget_rejects_a_runaway_turn() {
    let ws = TempWorkspace::new(&[(
        "workflows/orders/workflow.yaml",
        "budget: { maxModelCalls: 3 }\nstates:\n  a:\n    triggers: { manual: }\n",
    )]);
    let looping = || Reply::tool_calls(vec![("c", "archmax_get_variables", json!({}))]);
    let server = InProcessModel::new(vec![looping(), looping(), looping(), looping(), looping()]);
    let h = harness(&ws, &server, Arc::new(Recorder::default()));
    let out = rt()
        .block_on(h.send(
            "s-5",
            SendInput {
                message: "go".into(),
                ..SendInput::default()
            },
        ))
        .expect("turn");
    assert_eq!(out.kind, OutcomeKind::Rejected);
    assert_eq!(
        out.rejected.as_deref(),
        Some("the turn exhausted its model-call budget (budget.maxModelCalls: 3)")
    );
    assert_eq!(server.requests().len(), 3, "no model call past the budget");
}

#[test]
fn a_trigger_requires_its_inputs_before_any_model_call() {
    let ws = TempWorkspace::new(&[(
        "workflows/orders/workflow.yaml",
        "states:\n  a:\n    triggers:\n      mail: { requires: [{ name: quantity, type: integer }, order_id] }\n",
    )]);
    let server = InProcessModel::new(vec![]);
    let h = harness(&ws, &server, Arc::new(Recorder::default()));
    let mut vars = Map::new();
    vars.insert("quantity".into(), json!("4"));
    let out = rt()
        .block_on(h.send(
            "s-6",
            SendInput {
                message: "x".into(),
                trigger: Some("mail".into()),
                variables: vars,
            },
        ))
        .expect("turn");
    assert_eq!(out.kind, OutcomeKind::Rejected);
    assert_eq!(
        out.rejected.as_deref(),
        Some(
            "Refusing to start: trigger 'mail' requires 'order_id', which this firing does not supply. It also declares typed inputs this firing does not satisfy: 'quantity' must be an integer (a number with no fractional part), but a string (\"4\") arrived."
        )
    );
    assert!(server.requests().is_empty());
}

/// A harness over an arbitrary spec, with options applied by `f`.
fn harness_with(
    ws: &TempWorkspace,
    server: &InProcessModel,
    model: &str,
    f: impl FnOnce(&mut HarnessOptions),
) -> Harness {
    archmax_tests::harness(ws.root(), "orders", server, model, |o| {
        o.events = Arc::new(Recorder::default());
        f(o);
    })
}

fn spec_ws(spec: &str) -> TempWorkspace {
    TempWorkspace::new(&[("workflows/orders/workflow.yaml", spec)])
}

fn send(h: &Harness, id: &str) -> archmax_machine::Outcome {
    archmax_tests::send(h, id, "go")
}

#[test]
fn an_exhausted_turn_budget_routes_through_on_error_with_a_runtime_note() {
    let ws = spec_ws(
        "states:\n  work:\n    triggers: { manual: }\n    budget: { maxTurns: 1 }\n    on_error: fallback\n    transitions: [{ to: fallback, description: Never. }]\n  fallback:\n    instructions: Apologise.\n",
    );
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![("c1", "archmax_get_variables", json!({}))]),
        Reply::text("Sorry, I could not finish."),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let out = send(&h, "b-1");
    assert_eq!(out.kind, OutcomeKind::Completed);
    assert_eq!(out.state, "fallback");
    assert_eq!(
        out.audit_trail.last().map(|t| t.kind.as_str()),
        Some("on_error")
    );
    let notes = tool_results(&server.requests()[1]);
    assert_eq!(
        notes.last().map(String::as_str),
        Some(
            "[error] The 'work' state failed: state 'work' exhausted its turn budget (maxTurns: 1). Routing to the 'fallback' error handler."
        )
    );
}

#[test]
fn a_state_time_budget_bounds_a_slow_model_call() {
    let ws =
        spec_ws("states:\n  work:\n    triggers: { manual: }\n    budget: { timeoutMs: 200 }\n");
    let server = InProcessModel::new(vec![
        Reply::text("late").after(std::time::Duration::from_secs(5)),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let started = std::time::Instant::now();
    let out = send(&h, "t-1");
    assert_eq!(out.kind, OutcomeKind::Rejected);
    assert_eq!(
        out.rejected.as_deref(),
        Some("state 'work' exceeded its time budget (timeoutMs: 200)")
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "the call was cut at the budget"
    );
}

#[test]
fn completing_without_the_declared_returns_is_rejected() {
    let ws = spec_ws(
        "states:\n  work:\n    triggers:\n      manual: { returns: [{ name: total, type: number }] }\n",
    );
    let server = InProcessModel::new(vec![
        Reply::text("done"),
        Reply::tool_calls(vec![(
            "c",
            "archmax_set_variables",
            json!({ "variables": { "total": "12" } }),
        )]),
        Reply::text("tried"),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let out = send(&h, "r-1");
    assert_eq!(out.kind, OutcomeKind::Rejected);
    assert_eq!(
        out.rejected.as_deref(),
        Some(
            "Completed in state 'work' without setting 'total', which trigger 'manual' declares in its 'returns'. Set it with 'archmax_set_variables' before finishing."
        )
    );
    // A mistyped return is refused at the write.
    let again = rt().block_on(h.send(
        "r-1",
        SendInput {
            message: "set it".into(),
            ..SendInput::default()
        },
    ));
    assert!(again.is_ok());
    let results = tool_results(&server.requests()[2]);
    assert!(
        results.last().is_some_and(|r| r.starts_with("archmax_set_variables rejected: trigger 'manual' declares this return typed: 'total' must be a number")),
        "{results:?}"
    );
}

#[test]
fn script_hooks_run_in_quickjs_a_throw_fails_closed_and_a_host_runner_can_decide() {
    let spec = "states:\n  draft:\n    triggers: { manual: }\n    after: { script: hooks/check.js }\n    on_error: failed\n    transitions: [{ to: done, description: Finished. }]\n  done:\n    instructions: Say so.\n  failed:\n    instructions: Explain.\n";
    // The script reads its input: the move's target and reason, the run's variables
    // and the transcript (the note of the first refusal included).
    let check = "import { ok, veto } from '@archmax-ai/harness'\n\nexport default (input) => {\n  if (input.variables.refund === undefined) {\n    const notes = input.messages.filter((m) => m.role === 'tool').length\n    return veto(`${input.from} -> ${input.to} (${input.reason}): no refund yet, ${notes} tool result(s) seen`)\n  }\n  if (input.variables.refund > 100) throw new Error('refund too large')\n  return ok()\n}\n";
    let ws = TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", spec),
        ("workflows/orders/hooks/check.js", check),
    ]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "done", "reason": "ready" }),
        )]),
        Reply::tool_calls(vec![
            (
                "c2",
                "archmax_set_variables",
                json!({ "variables": { "refund": 20 } }),
            ),
            (
                "c3",
                "archmax_advance",
                json!({ "to": "done", "reason": "refund set" }),
            ),
        ]),
        Reply::text("Done."),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let out = send(&h, "h-1");
    assert_eq!(out.kind, OutcomeKind::Completed);
    assert_eq!(out.state, "done", "the second advance passed the hook");
    assert_eq!(
        tool_results(&server.requests()[1])[0],
        "archmax_advance rejected: hook veto: draft -> done (ready): no refund yet, 0 tool result(s) seen"
    );

    // A hook that throws is an execution error: terminal, routed through on_error.
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            (
                "c1",
                "archmax_set_variables",
                json!({ "variables": { "refund": 500 } }),
            ),
            (
                "c2",
                "archmax_advance",
                json!({ "to": "done", "reason": "ready" }),
            ),
        ]),
        Reply::text("I could not finish."),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let out = send(&h, "h-3");
    assert_eq!(out.state, "failed", "a throwing hook fails closed");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results
            .iter()
            .any(|r| r.contains("hook 'hooks/check.js' failed: Error: refund too large")),
        "{results:?}"
    );

    // A runner that vetoes keeps the agent in place with the reason.
    struct Veto;
    impl archmax_machine::hooks::HookRunner for Veto {
        fn run<'a>(
            &'a self,
            _hook: &'a archmax_spec::model::Hook,
            input: archmax_machine::hooks::HookInput,
        ) -> archmax_machine::tools::BoxFuture<'a, archmax_machine::hooks::Verdict> {
            Box::pin(async move {
                archmax_machine::hooks::Verdict::Veto(format!(
                    "{} needs a refund.json",
                    input.state
                ))
            })
        }
    }
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "done", "reason": "ready" }),
        )]),
        Reply::text("Waiting for the file."),
    ]);
    let mut h = harness_with(&ws, &server, "m", |_| {});
    h.set_hook_runner(Arc::new(Veto));
    let out = send(&h, "h-2");
    assert_eq!(out.state, "draft");
    assert_eq!(
        tool_results(&server.requests()[1])[0],
        "archmax_advance rejected: hook veto: draft needs a refund.json"
    );
}

#[test]
fn a_claude_model_gets_a_cache_marker_on_the_static_prefix() {
    let ws = spec_ws("instructions: Be brief.\nstates:\n  work:\n    triggers: { manual: }\n");
    let server = InProcessModel::new(vec![Reply::text("ok"), Reply::text("ok")]);
    let h = harness_with(&ws, &server, "anthropic/claude-sonnet-4", |_| {});
    send(&h, "c-1");
    let system = &server.requests()[0]["messages"][0]["content"];
    assert_eq!(
        system[0]["cache_control"],
        json!({ "type": "ephemeral", "ttl": "5m" }),
        "{system}"
    );
    assert!(
        system[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("## Instructions\n\nBe brief."))
    );
    assert!(
        system[1]["text"]
            .as_str()
            .is_some_and(|t| t.contains("## Current state: work"))
    );
    assert!(system[1].get("cache_control").is_none());
    // Other models get one plain text.
    let h = harness_with(&ws, &server, "gpt-test", |_| {});
    send(&h, "c-2");
    assert!(server.requests()[1]["messages"][0]["content"].is_string());
}

#[test]
fn a_host_tool_that_fails_answers_the_model_and_the_turn_goes_on() {
    struct Flaky;
    impl archmax_machine::HostTool for Flaky {
        fn name(&self) -> &str {
            "lookup"
        }
        fn description(&self) -> &str {
            "Looks an order up."
        }
        fn schema(&self) -> Value {
            json!({ "type": "object", "properties": { "id": { "type": "string" } } })
        }
        fn call<'a>(
            &'a self,
            args: Value,
            _ctx: archmax_machine::ToolContext,
        ) -> archmax_machine::tools::BoxFuture<'a, Result<String, String>> {
            Box::pin(async move {
                if args["id"] == "ok" {
                    Ok("found".into())
                } else {
                    Err("Error: the order service is down".into())
                }
            })
        }
    }
    let ws =
        spec_ws("states:\n  work:\n    triggers: { manual: }\n    tools: { allow: [lookup] }\n");
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            ("c1", "lookup", json!({ "id": "x" })),
            ("c2", "lookup", json!({ "id": "ok" })),
        ]),
        Reply::text("Done."),
    ]);
    let h = harness_with(&ws, &server, "m", |o| o.tools = vec![Arc::new(Flaky)]);
    let out = send(&h, "ht-1");
    assert_eq!(out.kind, OutcomeKind::Completed);
    assert_eq!(
        tool_results(&server.requests()[1]),
        vec![
            "Error: the order service is down".to_string(),
            "found".to_string()
        ]
    );
}

#[test]
fn the_runtime_contract_is_resolved_at_assembly() {
    use archmax_spec::runtime_contract::ContractSource;
    let server = InProcessModel::new(vec![]);
    let state = "states:\n  work:\n    triggers: { manual: }\n";
    let assemble = |runtime: &str| {
        let ws = spec_ws(&format!("{runtime}{state}"));
        Harness::assemble(HarnessOptions {
            root: ws.root().to_path_buf(),
            workflow: "orders".into(),
            model: server.model("m"),
            default_model: "m".into(),
            store: Arc::new(FsStore::new(ws.root())),
            events: Arc::new(Recorder::default()),
            tools: Vec::new(),
            essential_tools: Vec::new(),
            mounts: None,
            skills: vec![],
        })
    };
    let v2 = assemble("runtime: { engine: archmax-harness, version: 2 }\n").expect("v2");
    let c = v2.runtime_contract();
    assert_eq!(
        (c.engine.as_str(), c.version.as_str(), c.source, c.sandbox),
        ("archmax-harness", "2", ContractSource::Declared, 2)
    );
    let defaulted = assemble("").expect("defaulted");
    let c = defaulted.runtime_contract();
    assert_eq!(
        (
            c.version.as_str(),
            c.source,
            c.sandbox,
            c.test_format.as_str()
        ),
        ("1", ContractSource::Defaulted, 1, "1")
    );
    let err = assemble("runtime: { version: 99 }\n").expect_err("unsupported");
    assert_eq!(err.code(), "UnsupportedRuntimeContractError");
    assert_eq!(
        err.to_string(),
        "Unsupported runtime contract 'archmax-harness@99'. Supported: archmax-harness@1, archmax-harness@2."
    );
    // An unusable spec is a load error first, whatever it declares.
    let err = assemble("runtime: { version: 99 }\nbogus: 1\n").expect_err("unusable");
    assert_eq!(err.code(), "WorkflowLoadError");
}

#[test]
fn mounts_may_not_take_run_areas_or_the_authoring_plane() {
    use archmax_spec::workspace::{MountDecl, MountKind};
    let ws = spec_ws("states:\n  work:\n    triggers: { manual: }\n");
    let server = InProcessModel::new(vec![]);
    for (name, fragment) in [
        ("workflows", "would serve the authoring plane"),
        ("scratchpad", "collides with the run area 'scratchpad/'"),
    ] {
        let err = Harness::assemble(HarnessOptions {
            root: ws.root().to_path_buf(),
            workflow: "orders".into(),
            model: server.model("m"),
            default_model: "m".into(),
            store: Arc::new(FsStore::new(ws.root())),
            events: Arc::new(Recorder::default()),
            tools: Vec::new(),
            essential_tools: Vec::new(),
            mounts: Some(vec![MountDecl {
                name: name.into(),
                kind: MountKind::Dir,
                governed: false,
                read_only: true,
            }]),
            skills: vec![],
        })
        .expect_err("collision");
        assert_eq!(err.code(), "MountCollisionError");
        assert!(err.to_string().contains(fragment), "{err}");
    }
}

#[test]
fn a_rubric_grades_a_terminal_answer_and_the_agent_revises_once() {
    let ws = spec_ws(
        "states:\n  answer:\n    triggers: { manual: }\n    instructions: Answer.\n    after:\n      rubric:\n        instructions: The reply must name a date.\n        max_iterations: 1\n",
    );
    let server = InProcessModel::new(vec![
        Reply::text("It ships soon."),
        Reply::text(r#"{"verdict": "correct", "reason": "no date given"}"#),
        Reply::text("It ships on 3 March."),
        Reply::text(r#"{"verdict": "ok", "reason": "names a date"}"#),
    ]);
    let events = Arc::new(Recorder::default());
    let sink = events.clone();
    let h = harness_with(&ws, &server, "m", move |o| o.events = sink);
    let out = send(&h, "g-1");
    assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
    assert_eq!(out.reply, "It ships on 3 March.");
    let requests = server.requests();
    let grader = requests[1]["messages"][0]["content"]
        .as_str()
        .expect("grader system");
    assert!(
        grader.starts_with("The reply must name a date."),
        "{grader}"
    );
    assert!(
        grader.contains("\"verdict\""),
        "the verdict shape is requested every time"
    );
    let payload: Value = serde_json::from_str(
        requests[1]["messages"][1]["content"]
            .as_str()
            .expect("payload"),
    )
    .expect("json");
    assert_eq!(payload["userRequest"], "go");
    assert_eq!(payload["phase"], "after");
    let note = tool_results(&requests[2])
        .last()
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        note,
        "[after] The 'answer' completion check did not pass: rubric: reply incomplete — no date given. Update your answer and call archmax_advance again. (0 attempt(s) remaining). Revise your work and produce a corrected final response."
    );
    // Each grading is a rubric-start / rubric-result pair named by the rubric's id.
    let recorded = events.0.lock().map(|v| v.clone()).unwrap_or_default();
    let rubric: Vec<(String, String, String)> = recorded
        .iter()
        .filter(|e| e["type"].as_str().is_some_and(|t| t.starts_with("rubric-")))
        .map(|e| {
            (
                e["type"].as_str().unwrap_or_default().to_string(),
                e["name"].as_str().unwrap_or_default().to_string(),
                e["dispatchId"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    let pair = |n: &str| {
        [
            (
                "rubric-start".to_string(),
                "answer--after--0".to_string(),
                n.to_string(),
            ),
            (
                "rubric-result".to_string(),
                "answer--after--0".to_string(),
                n.to_string(),
            ),
        ]
    };
    assert_eq!(rubric, [pair("bridge-1"), pair("bridge-2")].concat());
}

const REVIEW_SPEC: &str = r#"
states:
  draft:
    triggers: { manual: }
    instructions: Draft the refund.
    transitions:
      - { to: review, description: The refund is drafted. }
  review:
    type: human
    title: Refund review
    instructions: Approve or send back.
    evidence: [scratchpad/refund.json]
    transitions:
      - { to: paid, description: Approve the refund., type: approve }
      - { to: draft, description: Send it back., type: refine }
  paid:
    instructions: Confirm the payment.
"#;

#[test]
fn a_human_state_parks_answers_replies_and_routes_a_decision() {
    let ws = spec_ws(REVIEW_SPEC);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "review", "reason": "drafted", "evidence": ["./scratchpad/calc.md", "scratchpad/refund.json"] }),
        )]),
        Reply::text("I have sent your refund to a reviewer."),
        // reply while parked: a tool call is refused, and the session stays parked
        Reply::tool_calls(vec![(
            "c2",
            "read_file",
            json!({ "file_path": "scratchpad/refund.json" }),
        )]),
        // decision: the target's work runs in the same call
        Reply::text("The refund is paid."),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let out = send(&h, "p-1");
    assert_eq!(out.kind, OutcomeKind::Parked);
    assert_eq!(out.parked_channel, Some("decision"));
    assert_eq!(out.state, "review");
    assert_eq!(out.reply, "I have sent your refund to a reviewer.");
    let pending = serde_json::to_value(&out.pending).expect("json");
    assert_eq!(pending["seq"], 1);
    assert_eq!(pending["title"], "Refund review");
    assert_eq!(
        pending["evidence"],
        json!(["scratchpad/refund.json", "scratchpad/calc.md"]),
        "declared first, then attached, de-duplicated"
    );
    assert_eq!(
        pending["transitions"][0],
        json!({ "to": "paid", "description": "Approve the refund.", "type": "approve" })
    );
    let handoff = server.requests()[1]["messages"][0]["content"]
        .as_str()
        .expect("system")
        .to_string();
    assert!(handoff.contains("## This run is parked\n\nYou have just handed this run to a person: 'review' (Refund review) is now waiting"), "{handoff}");

    // A message while parked is answered by one reply-only turn; the park is unchanged.
    let replied = rt().block_on(h.reply("p-1", "Any news?")).expect("reply");
    assert_eq!(replied.kind, OutcomeKind::Parked);
    assert_eq!(
        serde_json::to_value(&replied.pending).expect("json"),
        pending,
        "same record, same seq and time"
    );
    // The refused call reached the transcript:
    let snap = archmax_machine::store::FsStore::new(ws.root());
    let id = archmax_machine::store::SessionId::parse("p-1").expect("id");
    let msgs = archmax_machine::store::SessionStore::load(&snap, &id)
        .expect("load")
        .expect("present")
        .messages;
    assert!(msgs.iter().any(|m| m["content"].as_str().is_some_and(|c| {
        c.starts_with("[workflow] BLOCKED: 'read_file' cannot run — this run is parked")
    })));

    let err = rt()
        .block_on(h.decide("p-1", "review", None))
        .expect_err("self");
    assert_eq!(
        err.to_string(),
        "'review' is not a valid decision target for session 'p-1'. Choose one of: paid, draft."
    );
    let decided = rt()
        .block_on(h.decide("p-1", "paid", Some("looks right")))
        .expect("decide");
    assert_eq!(decided.kind, OutcomeKind::Completed, "{decided:?}");
    assert_eq!(decided.state, "paid");
    assert_eq!(decided.reply, "The refund is paid.");
    let last = server.requests().last().cloned().expect("request");
    let notes = tool_results(&last);
    assert_eq!(
        notes.last().map(String::as_str),
        Some(
            "[decision] A human selected approve → 'paid' at the 'review' checkpoint: looks right. The run has already been routed: you are now in 'paid'. Do its work and continue from here."
        )
    );
    let err = rt()
        .block_on(h.decide("p-1", "paid", None))
        .expect_err("not parked");
    assert_eq!(
        err.to_string(),
        "Session 'p-1' is not parked at a human state; there is nothing to decide."
    );
}

#[test]
fn a_wait_parks_for_input_and_a_delivery_resumes_in_place() {
    let ws = spec_ws(
        "states:\n  poll:\n    triggers: { manual: }\n    instructions: Wait for the payment.\n    budget: { maxParks: 2 }\n",
    );
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c0",
            "archmax_wait",
            json!({ "reason": "the payment", "until": "tomorrow-ish" }),
        )]),
        Reply::tool_calls(vec![(
            "c1",
            "archmax_wait",
            json!({ "reason": "the payment", "until": "2h" }),
        )]),
        Reply::text("I am waiting for your payment."),
        Reply::text("Payment received, thank you."),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let out = send(&h, "w-1");
    assert_eq!(out.kind, OutcomeKind::Parked);
    assert_eq!(out.parked_channel, Some("input"));
    assert_eq!(out.reply, "I am waiting for your payment.");
    let pending = serde_json::to_value(&out.pending).expect("json");
    assert_eq!(pending["reason"], "the payment");
    assert!(
        pending["resumeAt"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    let first = tool_results(&server.requests()[1]);
    assert!(first[0].starts_with("archmax_wait rejected: 'until' value 'tomorrow-ish' is neither a duration nor an instant."), "{first:?}");

    let err = rt()
        .block_on(h.decide("w-1", "x", None))
        .expect_err("not a decision park");
    assert!(err.to_string().contains("is not parked at a human state"));
    let mut vars = Map::new();
    vars.insert("amount".into(), json!(12));
    let resumed = rt()
        .block_on(h.deliver("w-1", "payment", vars, Some("Paid just now.")))
        .expect("deliver");
    assert_eq!(resumed.kind, OutcomeKind::Completed);
    assert_eq!(resumed.reply, "Payment received, thank you.");
    assert_eq!(
        resumed.variables["amount"],
        json!({ "value": 12, "locked": true })
    );
    assert_eq!(resumed.variables["trigger"]["value"], "payment");
    let last = server.requests().last().cloned().expect("request");
    let msgs = last["messages"].as_array().cloned().unwrap_or_default();
    let n = msgs.len();
    assert_eq!(
        msgs[n - 2]["content"],
        "[event] 'payment' arrived while the run waited in 'poll': amount=12 (also readable as run variables). You are still in 'poll'; continue from here. The person's message that came with it follows."
    );
    assert_eq!(msgs[n - 1]["content"], "Paid just now.");
    let err = rt()
        .block_on(h.deliver("w-1", "payment", Map::new(), None))
        .expect_err("no park");
    assert!(
        err.to_string()
            .starts_with("Session 'w-1' is not parked awaiting an event")
    );
}

#[test]
fn a_cancelled_turn_ends_failed_keeps_its_finished_steps_and_the_next_message_starts_fresh() {
    let ws =
        spec_ws("states:\n  work:\n    triggers: { manual: }\n    instructions: Take notes.\n");
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({ "file_path": "scratchpad/notes.md", "content": "kept" }),
        )]),
        Reply::text("too late").after(std::time::Duration::from_secs(5)),
        Reply::text("Fresh start."),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    assert!(!h.cancel("x-1"), "no turn of x-1 is running yet");
    let started = std::time::Instant::now();
    let out = std::thread::scope(|s| {
        s.spawn(|| {
            // Cancel while the second model call hangs.
            while server.requests().len() < 2 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            assert!(h.cancel("x-1"));
        });
        send(&h, "x-1")
    });
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "the hanging call was abandoned"
    );
    assert_eq!(out.kind, OutcomeKind::Failed);
    assert_eq!(
        out.exit,
        Some(
            json!({ "success": false, "code": "turn-cancelled", "reason": "the turn was cancelled" })
        )
    );
    assert!(!h.cancel("x-1"), "the turn has ended");
    // The step that finished before the cancel is on disk, in the session's scratchpad.
    let notes = ws.root().join("sessions/x-1/scratchpad/notes.md");
    assert_eq!(std::fs::read_to_string(notes).ok().as_deref(), Some("kept"));
    let next = send(&h, "x-1");
    assert_eq!(next.kind, OutcomeKind::Completed);
    assert_eq!(next.reply, "Fresh start.");
}

#[test]
fn a_hook_reads_files_through_governed_tools_and_cannot_touch_the_authoring_plane() {
    // The state forbids read_file for the agent; the hook's lifecycle authority is exempt
    // from that, but not from the governance plane.
    let spec = "states:\n  draft:\n    triggers: { manual: }\n    tools: { forbid: [read_file] }\n    after: { script: hooks/check.js }\n    on_error: failed\n    transitions: [{ to: done, description: Finished. }]\n  done:\n    instructions: Say so.\n  failed:\n    instructions: Explain.\n";
    let check = "export default async ({ tools }) => {\n  let plane\n  try {\n    await tools.writeFile({ file_path: 'workflows/orders/workflow.yaml', content: 'x' })\n    plane = 'wrote the spec'\n  } catch (e) {\n    plane = e.message.includes('[workflow] BLOCKED') ? 'plane refused' : e.message\n  }\n  const text = await tools.readFile({ file_path: 'scratchpad/refund.json' })\n  console.log('read', text.length, 'chars')\n  if (text.includes('\"amount\"')) return ok()\n  return veto(`${plane}; refund.json: ${text.split('\\n')[0]}`)\n}\n";
    let ws = TempWorkspace::new(&[
        ("workflows/orders/workflow.yaml", spec),
        ("workflows/orders/hooks/check.js", check),
    ]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "done", "reason": "ready" }),
        )]),
        Reply::tool_calls(vec![
            (
                "c2",
                "write_file",
                json!({ "file_path": "scratchpad/refund.json", "content": "{\"amount\": 20}" }),
            ),
            (
                "c3",
                "archmax_advance",
                json!({ "to": "done", "reason": "written" }),
            ),
        ]),
        Reply::text("Done."),
    ]);
    let events = Arc::new(Recorder::default());
    let sink = events.clone();
    let h = harness_with(&ws, &server, "m", move |o| o.events = sink);
    let out = send(&h, "p-1");
    let first = &tool_results(&server.requests()[1])[0];
    assert!(
        first
            .starts_with("archmax_advance rejected: hook veto: plane refused; refund.json: Error:"),
        "{first}"
    );
    assert_eq!(out.state, "done", "the hook read the file the agent wrote");
    assert_eq!(
        std::fs::read_to_string(ws.root().join("workflows/orders/workflow.yaml"))
            .ok()
            .as_deref(),
        Some(spec),
        "the spec is untouched"
    );
    // The hook's calls and its console are on the event stream, named as the hook's.
    let recorded = events.0.lock().map(|v| v.clone()).unwrap_or_default();
    let blocked = recorded
        .iter()
        .find(|e| e["type"] == "tool-blocked")
        .expect("a blocked event");
    assert_eq!(blocked["origin"], "lifecycle");
    assert_eq!(blocked["tool"], "write_file");
    let reads: Vec<&Value> = recorded
        .iter()
        .filter(|e| e["type"] == "tool-called" && e["origin"] == "lifecycle")
        .collect();
    assert_eq!(reads.len(), 2, "one read per hook run");
    assert_eq!(reads[0]["callId"], "ptc:2");
    let output: Vec<&str> = recorded
        .iter()
        .filter(|e| e["type"] == "hook-output")
        .filter_map(|e| e["line"].as_str())
        .collect();
    assert_eq!(output.len(), 2, "one console line per hook run: {output:?}");
    assert_eq!(
        output[1], "read 14 chars",
        "the second run read the agent's file"
    );
}

#[test]
fn archmax_eval_computes_with_governed_tools_and_keeps_globals_for_the_turn_only() {
    // The state narrows write_file to one path and forbids edit_file: a script's calls
    // are governed like the agent's own.
    let ws = TempWorkspace::new(&[
        (
            "workflows/orders/workflow.yaml",
            "states:\n  work:\n    triggers: { manual: }\n    tools:\n      allow: [{ tool: write_file, paths: [outbox/ok.md] }]\n      forbid: [edit_file]\n",
        ),
        (
            "sessions/e-1/scratchpad/orders.json",
            "[{\"id\": 1, \"total\": 20.5}, {\"id\": 2, \"total\": 4}]",
        ),
    ]);
    let first = "const orders = JSON.parse(await tools.readFile({ file_path: 'scratchpad/orders.json' }))\nglobalThis.sum = orders.reduce((a, o) => a + o.total, 0)\nconsole.log('orders', orders.length)\nsum";
    let second = "let refused\ntry { await tools.writeFile({ file_path: 'outbox/x.md', content: 'x' }) } catch (e) { refused = e.message }\nawait tools.writeFile({ file_path: 'outbox/ok.md', content: 'ok' });\n[sum * 2, typeof tools.editFile, refused.includes('[workflow] BLOCKED')]";
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![("c1", "archmax_eval", json!({ "code": first }))]),
        Reply::tool_calls(vec![("c2", "archmax_eval", json!({ "code": second }))]),
        Reply::text("The total is 24.5."),
        Reply::tool_calls(vec![(
            "c3",
            "archmax_eval",
            json!({ "code": "typeof sum" }),
        )]),
        Reply::text("Fresh."),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let out = send(&h, "e-1");
    assert_eq!(out.kind, OutcomeKind::Completed);
    let requests = server.requests();
    assert_eq!(tool_results(&requests[1]), vec!["orders 2\n→ 24.5"]);
    assert_eq!(
        tool_results(&requests[2])[1],
        "→ [\n  49,\n  \"undefined\",\n  true\n]",
        "globals persist within the turn; an undisclosed tool is unlisted and refused"
    );
    assert!(!ws.root().join("sessions/e-1/outbox/x.md").exists());
    assert!(ws.root().join("sessions/e-1/outbox/ok.md").exists());
    let _ = send(&h, "e-1");
    assert_eq!(
        tool_results(&server.requests()[4])
            .last()
            .map(String::as_str),
        Some("→ undefined"),
        "a new turn starts a new sandbox"
    );
}

#[test]
fn a_disabled_workflow_starts_nothing_but_still_takes_a_decision_for_a_parked_session() {
    let ws = spec_ws(REVIEW_SPEC);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "review", "reason": "drafted" }),
        )]),
        Reply::text("Sent to a reviewer."),
        Reply::text("The refund is paid."),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    assert_eq!(send(&h, "d-1").kind, OutcomeKind::Parked);
    // The author disables the workflow while the session waits for a person.
    std::fs::write(
        ws.root().join("workflows/orders/workflow.yaml"),
        format!("disabled: true\n{REVIEW_SPEC}"),
    )
    .expect("write");
    let h = harness_with(&ws, &server, "m", |_| {});
    let refused = rt()
        .block_on(h.send(
            "d-2",
            SendInput {
                message: "hi".into(),
                ..SendInput::default()
            },
        ))
        .expect_err("disabled");
    assert_eq!(refused.code(), "WorkflowDisabledError");
    let decided = rt()
        .block_on(h.decide("d-1", "paid", None))
        .expect("a parked session is still decided");
    assert_eq!(decided.kind, OutcomeKind::Completed);
    assert_eq!(decided.state, "paid");
}

#[test]
fn runtime_notes_cannot_be_called_by_the_model() {
    let ws = spec_ws(
        "states:\n  work:\n    triggers: { manual: }\n    budget: { maxTurns: 1 }\n    on_error: fallback\n    transitions: [{ to: fallback, description: Never. }]\n  fallback:\n    instructions: Apologise.\n",
    );
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![("c1", "archmax_note", json!({ "note": "error" }))]),
        // The [error] note is the last thing in the transcript when this call is made.
        Reply::text(""),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let out = send(&h, "n-1");
    let first = tool_results(&server.requests()[1]);
    assert_eq!(
        first[0],
        "[workflow] 'archmax_note' is not a tool. Call one of the tools you were given, by its exact name."
    );
    assert!(
        first[1].starts_with("[error] The 'work' state failed"),
        "{first:?}"
    );
    assert_eq!(out.state, "fallback");
}

#[test]
fn the_sandbox_limits_come_from_the_workflow_settings() {
    let ws = spec_ws(
        "settings: { maxPtcCalls: 1, maxResultChars: 12, timeoutMs: 300 }\nstates:\n  work:\n    triggers: { manual: }\n",
    );
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            (
                "c1",
                "archmax_eval",
                json!({ "code": "await tools.ls({ path: '.' }); await tools.ls({ path: '.' })" }),
            ),
            (
                "c2",
                "archmax_eval",
                json!({ "code": "console.log('x'.repeat(40)); 1" }),
            ),
            ("c3", "archmax_eval", json!({ "code": "for (;;) {}" })),
        ]),
        Reply::text("Done."),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let _ = send(&h, "l-1");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].starts_with(
            "Error: Tool 'ls' failed: PTC call budget exceeded (limit=1, attempted=2, function=ls)"
        ),
        "{results:?}"
    );
    assert!(
        results[1].starts_with("xxxxxxxxxxxx\n[truncated 29 chars]"),
        "{results:?}"
    );
    assert_eq!(
        results[2],
        "InternalError: interrupted (time limit of 300 ms reached)"
    );
}

#[test]
fn a_hook_runs_under_the_workflow_sandbox_limits() {
    let ws = TempWorkspace::new(&[
        (
            "workflows/orders/workflow.yaml",
            "settings: { timeoutMs: 300 }\nstates:\n  draft:\n    triggers: { manual: }\n    after: { script: hooks/spin.js }\n    on_error: failed\n    transitions: [{ to: done, description: Finished. }]\n  done:\n    instructions: Say so.\n  failed:\n    instructions: Explain.\n",
        ),
        ("workflows/orders/hooks/spin.js", "for (;;) {}\n"),
    ]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "done", "reason": "ready" }),
        )]),
        Reply::text("Sorry."),
    ]);
    let h = harness_with(&ws, &server, "m", |_| {});
    let out = send(&h, "t-h");
    assert_eq!(out.state, "failed", "a hook that overruns fails closed");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results.iter().any(|r| r.contains(
            "hook 'hooks/spin.js' failed: InternalError: interrupted (time limit of 300 ms reached)"
        )),
        "{results:?}"
    );
}

#[test]
fn a_huge_hook_reason_is_truncated_and_the_session_stays_small() {
    let ws = TempWorkspace::new(&[
        (
            "workflows/orders/workflow.yaml",
            "states:\n  draft:\n    triggers: { manual: }\n    after: { script: hooks/loud.js }\n    transitions: [{ to: done, description: Finished. }]\n  done:\n    instructions: Say so.\n",
        ),
        (
            "workflows/orders/hooks/loud.js",
            "import { veto } from '@archmax-ai/harness'\nexport default () => veto('no '.repeat(10000000))\n",
        ),
    ]);
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "done", "reason": "ready" }),
        )]),
        Reply::text("Understood."),
    ]);
    let events = Arc::new(Recorder::default());
    let sink = events.clone();
    let h = harness_with(&ws, &server, "m", move |o| o.events = sink);
    let out = send(&h, "t-loud");
    assert_eq!(out.state, "draft", "the veto held");
    let results = tool_results(&server.requests()[1]);
    let refusal = results
        .iter()
        .find(|r| r.contains("[truncated 29996000 chars]"))
        .unwrap_or_else(|| panic!("{:?}", results.iter().map(|r| r.len()).collect::<Vec<_>>()));
    assert!(refusal.len() < 20_000, "{}", refusal.len());
    let verdicts: Vec<usize> = events
        .0
        .lock()
        .map(|v| {
            v.iter()
                .filter(|e| e["type"] == "hook-verdict")
                .map(|e| e["reason"].as_str().map_or(0, str::len))
                .collect()
        })
        .unwrap_or_default();
    assert!(
        !verdicts.is_empty() && verdicts.iter().all(|n| *n < 20_000),
        "{verdicts:?}"
    );
    let transcript = ws
        .root()
        .join("sessions/t-loud/checkpoints/transcript.jsonl");
    let size = std::fs::metadata(&transcript)
        .map(|m| m.len())
        .unwrap_or(u64::MAX);
    assert!(size < 1_000_000, "transcript is {size} bytes");
}

#[test]
fn a_huge_model_response_fails_the_turn_and_leaves_the_session_small_and_usable() {
    let ws = workspace();
    // Over HTTP: a body the client reads in chunks and gives up on, without retrying it.
    let server = ScriptedServer::start(vec![
        Reply::Huge {
            bytes: 200_000_000,
            declare_length: false,
        },
        Reply::text("Back."),
    ])
    .expect("server");
    let h = http_harness(&ws, &server, Arc::new(Recorder::default()));
    let out = rt()
        .block_on(h.send(
            "s-huge",
            SendInput {
                message: "hi".into(),
                ..SendInput::default()
            },
        ))
        .expect("turn");
    assert_eq!(out.kind, OutcomeKind::Failed);
    let exit = out.exit.clone().unwrap_or_default();
    assert_eq!(exit["code"].as_str(), Some("turn-error"));
    assert!(
        exit.to_string()
            .contains("is larger than the 8388608-byte limit (ARCHMAX_MAX_RESPONSE_BYTES)"),
        "{exit}"
    );
    assert_eq!(
        server.requests().len(),
        1,
        "an oversized body is not retried"
    );
    let transcript = ws
        .root()
        .join("sessions/s-huge/checkpoints/transcript.jsonl");
    let size = std::fs::metadata(&transcript).map(|m| m.len()).unwrap_or(0);
    assert!(size < 100_000, "transcript is {size} bytes");
    let again = rt()
        .block_on(h.send(
            "s-huge",
            SendInput {
                message: "hi again".into(),
                ..SendInput::default()
            },
        ))
        .expect("turn");
    assert_eq!(again.kind, OutcomeKind::Completed);
    assert_eq!(again.reply, "Back.");
}

/// Host tools of one batch that can only finish together: `first` waits for `second` to
/// have started and then to have finished; each waits at most `BOUND`, so run one after the
/// other they answer `alone` instead of hanging the suite.
struct Meeting {
    name: &'static str,
    started: Arc<tokio::sync::Barrier>,
    second_done: Arc<tokio::sync::Notify>,
}

impl archmax_machine::HostTool for Meeting {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "Meets the other tool."
    }
    fn schema(&self) -> Value {
        json!({ "type": "object" })
    }
    fn call<'a>(
        &'a self,
        _args: Value,
        _ctx: archmax_machine::ToolContext,
    ) -> archmax_machine::tools::BoxFuture<'a, Result<String, String>> {
        const BOUND: std::time::Duration = std::time::Duration::from_secs(3);
        Box::pin(async move {
            if tokio::time::timeout(BOUND, self.started.wait())
                .await
                .is_err()
            {
                return Ok(format!("{}: alone", self.name));
            }
            if self.name == "second" {
                self.second_done.notify_one();
            } else if tokio::time::timeout(BOUND, self.second_done.notified())
                .await
                .is_err()
            {
                return Ok(format!("{}: second never finished", self.name));
            }
            Ok(format!("{}: together", self.name))
        })
    }
}

#[test]
fn a_batch_runs_its_host_tools_at_once_results_in_call_order_events_as_they_finish() {
    let ws = spec_ws(
        "states:\n  work:\n    triggers: { manual: }\n    tools: { allow: [first, second, read_file] }\n",
    );
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![
            ("c1", "first", json!({})),
            ("c2", "second", json!({})),
            // A control tool waits for the calls before it, and runs alone.
            (
                "c3",
                "archmax_set_variables",
                json!({ "variables": { "seen": "yes" } }),
            ),
            (
                "c4",
                "read_file",
                json!({ "file_path": "scratchpad/missing.md" }),
            ),
        ]),
        Reply::text("Done."),
    ]);
    let started = Arc::new(tokio::sync::Barrier::new(2));
    let second_done = Arc::new(tokio::sync::Notify::new());
    let events = Arc::new(Recorder::default());
    let sink = Arc::clone(&events);
    let h = harness_with(&ws, &server, "m", |o| {
        o.events = sink;
        o.tools = ["first", "second"]
            .into_iter()
            .map(|name| {
                Arc::new(Meeting {
                    name,
                    started: Arc::clone(&started),
                    second_done: Arc::clone(&second_done),
                }) as Arc<dyn archmax_machine::HostTool>
            })
            .collect();
    });
    let out = send(&h, "batch-1");
    assert_eq!(out.kind, OutcomeKind::Completed);
    let results = tool_results(&server.requests()[1]);
    assert_eq!(
        results[..3],
        [
            "first: together".to_string(),
            "second: together".to_string(),
            "Set seen.".to_string(),
        ]
    );
    assert!(results[3].contains("missing.md"), "{}", results[3]);
    // Announced in call order; `second` finished first, so its result comes first; the
    // control tool starts only once both are done.
    let calls: Vec<(String, String)> = events
        .0
        .lock()
        .map(|v| {
            v.iter()
                .filter(|e| e["type"] == "tool-called" || e["type"] == "tool-result")
                .map(|e| {
                    (
                        e["type"].as_str().unwrap_or_default().to_string(),
                        e["callId"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let pair = |t: &str, id: &str| (t.to_string(), id.to_string());
    assert_eq!(
        calls,
        vec![
            pair("tool-called", "c1"),
            pair("tool-called", "c2"),
            pair("tool-result", "c2"),
            pair("tool-result", "c1"),
            pair("tool-called", "c3"),
            pair("tool-result", "c3"),
            pair("tool-called", "c4"),
            pair("tool-result", "c4"),
        ]
    );
}
