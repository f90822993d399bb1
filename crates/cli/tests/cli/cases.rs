//! `archmax test` end to end against the scripted server: cases that pass (with a mocked
//! host tool and a mocked sub-workflow, a park and a decision, a graded reply), fail, die,
//! are skipped and time out; `--json`; filters; a disabled suite; `validate` on case files.

use serde_json::{Value, json};

use crate::delegation::CHILD;
use crate::scripted::{Reply, ScriptedServer, tool_results};
use crate::support::{Workspace, cli};

const SPEC: &str = r#"title: Refunds
instructions: Handle refund requests.
tests:
  caseTimeoutMs: 6000
  judge: { model: judge-model }
states:
  draft:
    triggers: { manual: }
    instructions: Draft the refund.
    tools:
      allow: [crm_lookup, archmax_workflow_enrich]
    transitions:
      - { to: review, description: The refund is drafted. }
  review:
    type: human
    title: Refund review
    instructions: Approve the refund or send it back.
    transitions:
      - { to: paid, description: Approve the refund., type: approve }
      - { to: draft, description: Send it back., type: refine }
  paid:
    instructions: Confirm the payment.
"#;

const PARK: &str = r#"title: A refund parks for review and is paid
description: Looks the order up (mocked), enriches it (mocked sub-workflow), parks, and is approved.
mocks:
  - { tool: crm_lookup, whenInput: { id: '/^KK-\d+$/' }, result: { tier: gold } }
  - tool: archmax_workflow_enrich
    result: { message: enriched, returns: { risk: low } }
steps:
  - send: refund KK-1
  - calledTool: { name: crm_lookup, input: { id: KK-1 } }
  - ranWorkflow: { workflow: enrich, count: 1 }
  - parked: { channel: decision, state: review }
  - reply: { includes: [reviewer, '/sent .* refund/i'], excludes: declined }
  - decide: { to: paid, comment: fine }
  - reachedState: paid
  - succeeded: true
  - grade: { closedQA: The customer is told the refund was paid, atLeast: 0.5 }
"#;

const FAIL: &str = r#"title: A greeting never reaches payment
description: The agent only greets, so reaching 'paid' fails and halts the case.
steps:
  - send: hi
  - reachedState: paid
  - reply: { includes: Hello }
"#;

const DIE: &str = r#"title: A decision without a park dies
description: Deciding a session that is not parked is refused by the runtime.
steps:
  - send: hi
  - decide: { to: paid }
  - reachedState: paid
"#;

const GRADE: &str = r#"title: A vague answer is graded down
description: The judge first answers prose, then a low score after the retry.
steps:
  - send: what about my refund
  - usedNoTools: true
  - grade: { closedQA: The answer names the refund amount, atLeast: 0.8 }
"#;

const SKIP: &str = r#"title: Skipped for now
description: Not ready.
skip: waiting on the new policy
steps:
  - send: hi
"#;

const SLOW: &str = r#"title: A hung model times out
description: The model never answers, so the case clock ends it.
steps:
  - send: hi
  - succeeded: true
"#;

fn workspace(spec: &str) -> Workspace {
    Workspace::new(&[
        ("workflows/refunds/workflow.yaml", spec),
        ("workflows/enrich/workflow.yaml", CHILD),
        ("workflows/refunds/tests/a-park.test.yaml", PARK),
        ("workflows/refunds/tests/b-fail.test.yaml", FAIL),
        ("workflows/refunds/tests/c-die.test.yaml", DIE),
        ("workflows/refunds/tests/d-grade.test.yaml", GRADE),
        ("workflows/refunds/tests/e-skip.test.yml", SKIP),
        ("workflows/refunds/tests/f-slow.test.yaml", SLOW),
        ("workflows/refunds/tests/fixtures/notes.md", "not a case"),
    ])
}

fn park_replies() -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![
            ("c1", "crm_lookup", json!({ "id": "KK-1" })),
            (
                "c2",
                "archmax_workflow_enrich",
                json!({ "order_id": "KK-1", "quantity": 2 }),
            ),
        ])
        .with_usage(json!({ "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110 })),
        Reply::tool_calls(vec![(
            "c3",
            "archmax_advance",
            json!({ "to": "review", "reason": "drafted" }),
        )]),
        Reply::text("I have sent your refund to a reviewer."),
        Reply::text("Your refund was paid."),
        Reply::text("{\"score\": 0.9, \"pass\": true, \"reason\": \"the reply says paid\"}")
            .with_usage(json!({ "prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55 })),
    ]
}

fn block(err: &str, id: &str) -> String {
    let start = err
        .find(&format!("\n✔ {id}"))
        .or_else(|| err.find(&format!("\n✖ {id}")))
        .or_else(|| err.find(&format!("\n○ {id}")))
        .unwrap_or_else(|| panic!("no verdict for {id} in:\n{err}"));
    let rest = &err[start + 1..];
    let end = rest.find("\n\n").unwrap_or(rest.len());
    rest[..end].to_string()
}

#[test]
fn a_suite_passes_fails_dies_skips_and_times_out() {
    let ws = workspace(SPEC);
    let mut script = park_replies();
    script.extend([
        Reply::text("Hello there."),
        Reply::text("Hi."),
        Reply::text("It is being handled."),
        Reply::text("I think it looks fine overall."),
        Reply::text("{\"score\": 0.2, \"reason\": \"no amount\"}"),
        Reply::Hang,
    ]);
    let server = ScriptedServer::start(script).expect("server");
    let r = cli(&ws, Some(&server), &["test", "refunds"]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert_eq!(r.out, "1 passed, 4 failed, 1 skipped\n");
    let err = &r.err;
    assert!(
        err.contains(
            "\n◆ case workflows/refunds/tests/a-park.test.yaml\n  session  test-default-test-run-"
        ),
        "{err}"
    );
    // A skipped case runs no session.
    assert!(
        err.contains("\n◆ case workflows/refunds/tests/e-skip.test.yml\n\n○ e-skip"),
        "{err}"
    );
    assert_eq!(
        block(err, "a-park"),
        "✔ a-park — A refund parks for review and is paid\n      ✔ grade.closedQA 0.9 / 0.5\n    tokens in 150 · out 15 · cache r 0/w 0"
    );
    assert_eq!(
        block(err, "b-fail"),
        "✖ b-fail — A greeting never reaches payment\n      ✖ reachedState: paid\n      ○ 1 assertion not executed"
    );
    let died = block(err, "c-die");
    let (head, tail) = died
        .split_once("-workflows-refunds-tests-c-die.test.yaml")
        .unwrap_or_default();
    assert!(
        head.starts_with(
            "✖ c-die — A decision without a park dies\n      ✖ Session 'test-default-test-run-"
        ),
        "{died}"
    );
    assert_eq!(
        tail,
        "' is not parked at a human state; there is nothing to decide.\n      ○ 1 assertion not executed"
    );
    assert_eq!(
        block(err, "d-grade"),
        "✖ d-grade — A vague answer is graded down\n      ✖ grade.closedQA: The answer names the refund amount: no amount (score 0.2 < 0.8)\n      ⚠ grade.closedQA 0.2 / 0.8"
    );
    assert_eq!(
        block(err, "e-skip"),
        "○ e-skip — Skipped for now (waiting on the new policy)"
    );
    assert_eq!(
        block(err, "f-slow"),
        "✖ f-slow — A hung model times out\n      ✖ case 'f-slow' timed out after 6000ms (tests.caseTimeoutMs)\n      ○ 1 assertion not executed"
    );
    assert!(
        err.contains("\n◆ summary 1 passed, 4 failed, 1 skipped\n  ✖ b-fail — A greeting never reaches payment\n  ✖ c-die — A decision without a park dies\n  ✖ d-grade — A vague answer is graded down\n  ✖ f-slow — A hung model times out\n  ✔ a-park — A refund parks for review and is paid\n  ○ e-skip — Skipped for now\n"),
        "{err}"
    );
    assert!(
        err.ends_with("\ntokens     in 150 · out 15 · cache r 0/w 0\n"),
        "{err}"
    );

    let requests = server.requests();
    // The mocked host tool and the mocked sub-workflow answered the agent's calls.
    assert_eq!(
        tool_results(&requests[1]),
        vec![
            "{\"tier\":\"gold\"}".to_string(),
            "{\"message\":\"enriched\",\"returns\":{\"risk\":\"low\"}}".to_string()
        ]
    );
    // The judge: its model id, the criterion and the evidence, and (for d-grade) one retry.
    let judge = &requests[4];
    assert_eq!(judge["model"], "judge-model");
    let human = judge["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(
        human.starts_with("Criterion: The customer is told the refund was paid\n\nWhat the assistant did, in order:\n1. [tool] crm_lookup input={\"id\":\"KK-1\"} → completed output="),
        "{human}"
    );
    assert!(
        human.ends_with("\n\nFinal reply to the user:\nYour refund was paid."),
        "{human}"
    );
    let retry = &requests[9];
    assert_eq!(retry["messages"].as_array().map(Vec::len), Some(4));
    assert!(
        retry["messages"][3]["content"]
            .as_str()
            .unwrap_or_default()
            .starts_with("Your previous reply could not be read as JSON.")
    );
}

#[test]
fn json_results_carry_records_and_the_session_id() {
    let ws = workspace(SPEC);
    let server = ScriptedServer::start(park_replies()).expect("server");
    let r = cli(&ws, Some(&server), &["test", "refunds", "a-park", "--json"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(v["workflow"], "refunds");
    assert_eq!(v["exitCode"], 0);
    assert_eq!(v["discovered"], 6);
    let case = &v["results"][0];
    assert_eq!(case["id"], "a-park");
    assert_eq!(
        case["verdict"],
        json!({ "status": "passed", "failures": [] })
    );
    let sid = case["sessionId"].as_str().unwrap_or_default();
    assert!(
        sid.starts_with("test-default-test-run-")
            && sid.ends_with("-workflows-refunds-tests-a-park.test.yaml"),
        "{sid}"
    );
    let kinds: Vec<&str> = case["records"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "calledTool",
            "ranWorkflow",
            "parked",
            "reply.includes",
            "reply.includes",
            "reply.excludes",
            "reachedState",
            "succeeded",
            "grade.closedQA"
        ]
    );
    assert_eq!(
        case["records"][8],
        json!({ "kind": "grade.closedQA", "threshold": 0.5, "status": "passed", "score": 0.9, "detail": "The customer is told the refund was paid: the reply says paid", "step": 8 })
    );
    assert_eq!(case["records"][2]["detail"], "decision in review");
    // The case ran in a store of its own, removed after the run: the workspace has no
    // sessions, and none is kept.
    assert!(!ws.root().join("sessions").exists());
    assert!(v.get("sessionsKept").is_none(), "{v}");
    let s = cli(&ws, None, &["sessions", sid, "--json"]);
    assert_eq!(s.code, 1, "{}", s.err);
}

/// The folder `--keep` names on the line `the cases' sessions are kept in <dir>`.
fn kept_in(err: &str) -> std::path::PathBuf {
    let line = err
        .lines()
        .find_map(|l| l.trim().strip_prefix("the cases' sessions are kept in "))
        .unwrap_or_else(|| panic!("no kept line in:\n{err}"));
    std::path::PathBuf::from(line)
}

#[test]
fn cases_run_in_a_store_of_their_own_kept_only_when_asked() {
    let ws = workspace(SPEC);
    // --keep: a temporary folder, named, holding the case's session.
    let server = ScriptedServer::start(park_replies()).expect("server");
    let r = cli(&ws, Some(&server), &["test", "refunds", "a-park", "--keep"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let dir = kept_in(&r.err);
    assert!(dir.starts_with(std::env::temp_dir()), "{}", dir.display());
    let sessions: Vec<String> = std::fs::read_dir(&dir)
        .expect("the kept folder")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("test-default-test-run-"))
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert!(
        r.err.contains(&format!(
            "list them: archmax sessions --workflow refunds --store {}\n",
            dir.display()
        )),
        "{}",
        r.err
    );
    // `archmax sessions --store <dir>` reads them: the case ended at the terminal `paid`.
    let dir_text = dir.display().to_string();
    let listed = cli(
        &ws,
        None,
        &[
            "sessions",
            "--workflow",
            "refunds",
            "--store",
            &dir_text,
            "--json",
        ],
    );
    assert_eq!(listed.code, 0, "{}", listed.err);
    let all: Value = serde_json::from_str(&listed.out).expect("json");
    assert_eq!(all[0]["sessionId"], sessions[0].as_str());
    assert_eq!(all[0]["standing"]["kind"], "done", "{all}");
    let shown = cli(&ws, None, &["sessions", &sessions[0], "--store", &dir_text]);
    assert_eq!(shown.code, 0, "{}", shown.err);
    assert!(
        shown.out.contains("  standing done at 'paid'"),
        "{}",
        shown.out
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
    assert!(!ws.root().join("sessions").exists());

    // --store <dir>: the cases' sessions there, removed after the run unless --keep.
    let chosen = ws.root().join("case-sessions");
    let server = ScriptedServer::start(park_replies()).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &[
            "test",
            "refunds",
            "a-park",
            "--store",
            "case-sessions",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).expect("json");
    let sid = v["results"][0]["sessionId"].as_str().unwrap_or_default();
    assert!(!sid.is_empty());
    assert!(chosen.is_dir(), "the chosen store was used");
    assert!(!chosen.join(sid).exists(), "the case's session was removed");
    let server = ScriptedServer::start(park_replies()).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &[
            "test",
            "refunds",
            "a-park",
            "--store",
            "case-sessions",
            "--keep",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(v["sessionsKept"], chosen.display().to_string());
    let sid = v["results"][0]["sessionId"].as_str().unwrap_or_default();
    assert!(chosen.join(sid).join("checkpoints/state.json").exists());
    assert!(!ws.root().join("sessions").exists());
}

#[test]
fn filters_empty_suites_and_disabled_suites() {
    let ws = workspace(SPEC);
    let r = cli(&ws, None, &["test", "refunds", "nothing-like-this"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.out, "");
    assert!(
        r.err
            .ends_with("Error: no cases matched 'nothing-like-this' (6 discovered)\n"),
        "{}",
        r.err
    );

    let disabled = SPEC.replace("title: Refunds\n", "title: Refunds\ndisabled: true\n");
    let ws = workspace(&disabled);
    let r = cli(&ws, None, &["test", "refunds"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "suite skipped — disabled\n");
    assert!(
        r.err
            .ends_with("\n○ suite skipped — the workflow is disabled (refunds); no case ran\n"),
        "{}",
        r.err
    );
    let r = cli(&ws, None, &["test", "refunds", "--json"]);
    let v: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(
        v,
        json!({ "workflow": "refunds", "results": [], "exitCode": 0, "discovered": 0, "skipped": "disabled" })
    );

    let ws = Workspace::new(&[("workflows/refunds/workflow.yaml", SPEC)]);
    let r = cli(&ws, None, &["test", "refunds"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "0 passed, 0 failed, 0 skipped\n");
}

#[test]
fn a_case_file_that_does_not_parse_fails_its_case_and_validate_names_where() {
    let bad = "title: Bad\ndescription: Has an unknown step.\nsteps:\n  - send: hi\n  - reachedStat: paid\n";
    let ws = Workspace::new(&[
        ("workflows/refunds/workflow.yaml", SPEC),
        ("workflows/enrich/workflow.yaml", CHILD),
        ("workflows/refunds/tests/bad.test.yaml", bad),
    ]);
    let want = "workflows/refunds/tests/bad.test.yaml: steps[1]: unknown step 'reachedStat' (actions: send, decide, deliver; assertions: succeeded, raised, usedNoTools, noTraversal, parked, reachedState, triggerArrival, reply, calledTool, notCalledTool, blockedTool, ranWorkflow, trail, variables, grade)";
    let server = ScriptedServer::start(Vec::new()).expect("server");
    let r = cli(&ws, Some(&server), &["test", "refunds", "--json"]);
    assert_eq!(r.code, 1, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(
        v["results"][0],
        json!({
            "id": "workflows/refunds/tests/bad.test.yaml",
            "file": "workflows/refunds/tests/bad.test.yaml",
            "verdict": { "status": "failed", "failures": [want] },
            "records": [],
            "error": want
        })
    );
    assert!(server.requests().is_empty());

    let r = cli(&ws, None, &["validate", "refunds", "--json"]);
    assert_eq!(r.code, 1, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).expect("json");
    let d = v["diagnostics"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["file"] == "workflows/refunds/tests/bad.test.yaml")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(d["message"], want);
    assert_eq!(
        (d["line"].clone(), d["column"].clone()),
        (json!(5), json!(5))
    );
}

#[test]
fn a_mocked_sub_workflow_is_held_to_its_returns_contract_and_can_fail() {
    let typed = CHILD.replace("returns: [risk]", "returns: [{ name: risk, type: string }]");
    let case = r#"title: Mocked children that fail
description: One mock errors, one returns a mistyped value; both calls fail.
mocks:
  - tool: archmax_workflow_enrich
    whenInput: { quantity: 1 }
    result: { error: boom }
  - tool: archmax_workflow_enrich
    result: { message: enriched, returns: { risk: 3 } }
steps:
  - send: enrich both
  - ranWorkflow: { workflow: enrich, status: error, count: 2 }
  - ranWorkflow: { workflow: enrich, count: 0 }
"#;
    let ws = Workspace::new(&[
        ("workflows/refunds/workflow.yaml", SPEC),
        ("workflows/enrich/workflow.yaml", &typed),
        ("workflows/refunds/tests/mocked.test.yaml", case),
    ]);
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![
            (
                "c1",
                "archmax_workflow_enrich",
                json!({ "order_id": "KK-1", "quantity": 1 }),
            ),
            (
                "c2",
                "archmax_workflow_enrich",
                json!({ "order_id": "KK-2", "quantity": 2 }),
            ),
        ]),
        Reply::text("Both failed."),
    ])
    .expect("server");
    let r = cli(&ws, Some(&server), &["test", "refunds"]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "1 passed, 0 failed, 0 skipped\n");
    let answers = tool_results(&server.requests()[1]);
    assert_eq!(answers[0], "Sub-workflow 'enrich' failed (mocked): boom");
    assert!(
        answers[1].starts_with(
            "Sub-workflow 'enrich' settled in state '(mocked)' with returns its 'manual' trigger types otherwise: "
        ),
        "{answers:?}"
    );
}

#[test]
fn suite_settings_that_cannot_run_fail_the_command() {
    let server = ScriptedServer::start(Vec::new()).expect("server");
    let concurrent = SPEC.replace(
        "  caseTimeoutMs: 6000\n",
        "  caseTimeoutMs: 6000\n  maxConcurrency: 2\n",
    );
    let ws = workspace(&concurrent);
    let r = cli(&ws, Some(&server), &["test", "refunds"]);
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    // The spec's own rules refuse a concurrency above 1, so the suite never loads.
    assert!(
        r.err.ends_with("Error: Cannot load workflow 'refunds' (workflows/refunds/workflow.yaml): no valid machine spec. Run 'archmax validate refunds' for details.\n"),
        "{}",
        r.err
    );
    let ws = Workspace::new(&[
        ("workflows/refunds/workflow.yaml", SPEC),
        ("workflows/refunds/tests/a.test.yaml", FAIL),
        ("workflows/refunds/tests.config.js", "export default {}\n"),
    ]);
    let r = cli(&ws, Some(&server), &["test", "refunds"]);
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert!(
        r.err.ends_with("archmax failed: Error: tests.config.js was removed: case-suite settings live under the workflow's 'tests' key (maxConcurrency, caseTimeoutMs, judge). Move them there and delete the file.\n"),
        "{}",
        r.err
    );
    assert!(server.requests().is_empty());
}

#[test]
fn start_conditions_seed_the_workspace_or_kill_the_case() {
    let seeded = r#"title: Seeded files are there
description: Inline content and a fixture are in the session before the first turn.
workspace:
  scratchpad/notes.md: hello from the case
  scratchpad/order.json: { from: fixtures/order.json }
steps:
  - send: read them
  - calledTool: { name: read_file, input: { file_path: scratchpad/order.json } }
"#;
    let missing = r#"title: A missing fixture kills the case
description: The fixture file does not exist.
workspace:
  scratchpad/x.json: { from: fixtures/missing.json }
steps:
  - send: hi
  - succeeded: true
"#;
    let unknown = r#"title: An unknown trigger kills the case
description: No state declares the trigger.
trigger: { id: nope }
steps:
  - send: hi
"#;
    let ws = Workspace::new(&[
        ("workflows/refunds/workflow.yaml", SPEC),
        ("workflows/refunds/tests/a.test.yaml", seeded),
        ("workflows/refunds/tests/b.test.yaml", missing),
        ("workflows/refunds/tests/c.test.yaml", unknown),
        (
            "workflows/refunds/tests/fixtures/order.json",
            "{\"id\": \"KK-7\"}",
        ),
    ]);
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![
            (
                "r1",
                "read_file",
                json!({ "file_path": "scratchpad/notes.md" }),
            ),
            (
                "r2",
                "read_file",
                json!({ "file_path": "scratchpad/order.json" }),
            ),
        ]),
        Reply::text("Read."),
    ])
    .expect("server");
    let r = cli(&ws, Some(&server), &["test", "refunds", "--json"]);
    assert_eq!(r.code, 1, "{}", r.err);
    let v: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(v["results"][0]["verdict"]["status"], "passed", "{}", r.out);
    let answers = tool_results(&server.requests()[1]);
    assert!(answers[0].contains("hello from the case"), "{answers:?}");
    assert!(answers[1].contains("KK-7"), "{answers:?}");
    assert_eq!(
        v["results"][1]["error"],
        "workspace entry 'scratchpad/x.json' references 'from: fixtures/missing.json', but 'workflows/refunds/tests/fixtures/missing.json' does not exist"
    );
    assert_eq!(
        v["results"][1]["records"],
        json!([{ "kind": "succeeded", "threshold": null, "status": "not-executed", "step": 1 }])
    );
    let died = v["results"][2]["error"].as_str().unwrap_or_default();
    assert!(died.contains("nope"), "{died}");
    assert_eq!(server.requests().len(), 2);
}

/// `--record` keeps each case's exchanges (the agent's and the judge's) in a cassette beside
/// the case; `--replay` runs the suite from them with no model endpoint at all, to the same
/// verdicts; a case whose requests changed since, or that has no cassette, dies naming why.
#[test]
fn a_suite_recorded_against_the_server_replays_offline_case_by_case() {
    let ws = workspace(SPEC);
    let server = ScriptedServer::start(park_replies()).expect("server");
    let recorded = cli(
        &ws,
        Some(&server),
        &["test", "refunds", "a-park", "--record", "--json"],
    );
    assert_eq!(recorded.code, 0, "{}", recorded.err);
    let cassette = ws
        .root()
        .join("workflows/refunds/tests/a-park.cassette.json");
    let text = std::fs::read_to_string(&cassette).expect("the case's cassette");
    let file: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(file["format"], "archmax-cassette");
    // Four agent calls and the judge's.
    assert_eq!(
        file["exchanges"].as_array().map(Vec::len),
        Some(5),
        "{text}"
    );
    drop(server);

    // No server, no ARCHMAX_* variable: every answer comes from the cassette.
    let replayed = cli(
        &ws,
        None,
        &["test", "refunds", "a-park", "--replay", "--json"],
    );
    assert_eq!(replayed.code, 0, "{}\n{}", replayed.err, replayed.out);
    let (a, b): (Value, Value) = (
        serde_json::from_str(&recorded.out).expect("json"),
        serde_json::from_str(&replayed.out).expect("json"),
    );
    assert_eq!(a["results"][0]["verdict"], b["results"][0]["verdict"]);
    assert_eq!(a["results"][0]["records"], b["results"][0]["records"]);
    assert_eq!(b["results"][0]["verdict"]["status"], "passed");
    assert!(
        replayed.err.contains("replayed from each case's cassette"),
        "{}",
        replayed.err
    );

    // A case whose message changed asks what the cassette does not hold.
    std::fs::write(
        ws.root().join("workflows/refunds/tests/a-park.test.yaml"),
        PARK.replace("send: refund KK-1", "send: refund KK-1 today"),
    )
    .expect("edit");
    let changed = cli(&ws, None, &["test", "refunds", "a-park", "--replay"]);
    assert_eq!(changed.code, 1, "{}", changed.err);
    assert!(
        changed.err.contains("the turn failed: turn-error:"),
        "{}",
        changed.err
    );
    assert!(changed.err.contains("was not recorded"), "{}", changed.err);
    assert!(changed.err.contains("differs: recorded"), "{}", changed.err);

    // A case never recorded says how to record it.
    let missing = cli(&ws, None, &["test", "refunds", "b-fail", "--replay"]);
    assert_eq!(missing.code, 1, "{}", missing.err);
    assert!(
        missing.err.contains("no cassette workflows/refunds/tests/b-fail.cassette.json for case workflows/refunds/tests/b-fail.test.yaml: record it with 'archmax test --record'"),
        "{}",
        missing.err
    );

    let both = cli(&ws, None, &["test", "refunds", "--record", "--replay"]);
    assert_eq!(both.code, 2);
    assert!(
        both.err
            .contains("--record and --replay cannot be used together"),
        "{}",
        both.err
    );
}
