//! `archmax run` end to end: a real harness, real files, real HTTP to the
//! scripted OpenAI-compatible server; exact stderr and stdout.

use serde_json::json;

use crate::scripted::{Reply, ScriptedServer};
use crate::support::{Workspace, cli, cli_with};

pub const SPEC: &str = r#"title: Orders
instructions: Answer order questions.
states:
  classify:
    triggers:
      manual:
      mail: { requires: [order_id] }
    instructions: Decide what the customer wants.
    tools:
      allow:
        - { tool: read_file, paths: ["notes/**"] }
    transitions:
      - { to: answer, description: The order is known. }
  answer:
    instructions: Answer from the order data.
"#;

pub fn workspace() -> Workspace {
    Workspace::new(&[
        ("workflows/orders/workflow.yaml", SPEC),
        ("sessions/s-1/notes/KK-1.md", "shipped"),
    ])
}

fn usage(prompt: u64, completion: u64) -> serde_json::Value {
    json!({ "prompt_tokens": prompt, "completion_tokens": completion })
}

/// The script of a completed turn: a governed read, a move, an answer.
pub fn completed_script() -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![(
            "c1",
            "read_file",
            json!({ "file_path": "notes/KK-1.md" }),
        )])
        .with_usage(usage(1200, 30)),
        Reply::tool_calls(vec![(
            "c2",
            "archmax_advance",
            json!({ "to": "answer", "reason": "order known" }),
        )])
        .with_usage(usage(1300, 20)),
        Reply::text("Your order KK-1 has shipped.\nAnything else?").with_usage(usage(20_369, 40)),
    ]
}

pub fn raise_script() -> Vec<Reply> {
    vec![Reply::tool_calls(vec![(
        "c1",
        "archmax_raise",
        json!({ "code": "orders-unavailable", "reason": "the order system is down" }),
    )])]
}

#[test]
fn a_completed_run() {
    let ws = workspace();
    let server = ScriptedServer::start(completed_script()).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "Where", "is", "KK-1?", "--session", "s-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Your order KK-1 has shipped.\nAnything else?\n");
    let expected = format!(
        "{}\n● classify\n    › read_file\n    → order known\n✔ classify → answer\n\n● answer\n    │ Your order KK-1 has shipped.\n    │ Anything else?\n✔ answer (turn ends here)\n\n✔ answer\n\ntokens     in 22,869 · out 90 · cache r 0/w 0\n",
        ws.header("orders", Some("scripted-model"))
    );
    assert_eq!(r.err, expected);
    let first = &server.requests()[0];
    assert_eq!(first["model"], "scripted-model");
    let user = first["messages"][1]["content"].as_str().unwrap_or_default();
    assert!(user.contains("Where is KK-1?"), "{user}");
}

#[test]
fn a_streamed_answer_prints_as_the_whole_one_would_and_a_cut_one_says_so() {
    let whole = {
        let ws = workspace();
        let server = ScriptedServer::start(completed_script()).expect("server");
        let r = cli(
            &ws,
            Some(&server),
            &["run", "orders", "Where is KK-1?", "--session", "s-1"],
        );
        assert_eq!(r.code, 0, "{}", r.err);
        r.err
            .replace(&ws.header("orders", Some("scripted-model")), "")
    };
    let ws = workspace();
    let mut script = completed_script();
    script.pop();
    script.push(Reply::stream_text(&[
        "Your order ",
        "KK-1 has shipped.\nAny",
        "thing else?",
    ]));
    let server = ScriptedServer::start(script).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "Where is KK-1?", "--session", "s-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Your order KK-1 has shipped.\nAnything else?\n");
    let streamed = r
        .err
        .replace(&ws.header("orders", Some("scripted-model")), "");
    // The usage differs (the stream's last chunk reports its own); the flow does not.
    let flow = |t: &str| t.split("\ntokens").next().unwrap_or_default().to_string();
    assert_eq!(flow(&streamed), flow(&whole));
    assert_eq!(server.requests()[2]["stream"], json!(true));

    let ws = workspace();
    let mut script = completed_script();
    script.pop();
    script.push(
        Reply::stream_text(&["Your order ", "KK-1", " never"])
            .cut_after(3, crate::scripted::SseEnd::Cut),
    );
    let server = ScriptedServer::start(script).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "Where is KK-1?", "--session", "s-1"],
    );
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(
        r.err
            .contains("\n● answer\n    │ Your order KK-1 (cut off)\n"),
        "{}",
        r.err
    );
    assert!(r.err.contains("with code 'turn-error'"), "{}", r.err);
}

#[test]
fn a_tty_shows_elapsed_time_while_the_model_is_silent_and_a_pipe_does_not() {
    let slow = || {
        let mut script = completed_script();
        let last = script.pop().expect("the answer");
        script.push(last.after(std::time::Duration::from_millis(900)));
        script
    };
    let ws = workspace();
    let server = ScriptedServer::start(slow()).expect("server");
    let args = ["run", "orders", "Where is KK-1?", "--session", "s-1"];
    let tty = crate::support::cli_with(&ws, Some(&server), &[("NO_COLOR", "1")], true, &args);
    assert_eq!(tty.code, 0, "{}", tty.err);
    let erase = "\r\u{1b}[2K";
    assert!(tty.err.contains(&format!("{erase}    ")), "{:?}", tty.err);
    assert!(
        tty.err.contains(&format!("s{erase}")),
        "the indicator ends in seconds and is erased: {:?}",
        tty.err
    );
    // Without the indicator's frames, the flow is the pipe's.
    let frame = |part: &str| {
        part.strip_prefix("    ")
            .and_then(|p| p.chars().next())
            .is_some_and(|c| ('\u{2800}'..='\u{28ff}').contains(&c))
            && !part.contains('\n')
    };
    let flow: String = tty.err.split(erase).filter(|p| !frame(p)).collect();
    let ws2 = workspace();
    let server2 = ScriptedServer::start(slow()).expect("server");
    let pipe = cli(&ws2, Some(&server2), &args);
    assert!(!pipe.err.contains('\r'), "{:?}", pipe.err);
    let strip = |t: &str, w: &crate::support::Workspace| {
        t.replace(&w.header("orders", Some("scripted-model")), "")
    };
    assert_eq!(strip(&flow, &ws), strip(&pipe.err, &ws2));
}

#[test]
fn verbose_prints_raw_lines_before_the_flow_lines() {
    let ws = workspace();
    let server = ScriptedServer::start(completed_script()).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &[
            "run",
            "orders",
            "Where is KK-1?",
            "--session",
            "s-1",
            "--verbose",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let expected = format!(
        "{}[workflow] entering start state 'classify'\n[workflow] entering node 'classify'\n\n● classify\n[workflow:classify] tool read_file\n    › read_file\n[workflow:classify] tool archmax_advance\n[workflow] advanced 'classify' -> 'answer': order known\n    → order known\n[workflow] leaving node 'classify' -> workflowState=answer\n✔ classify → answer\n[workflow] entering node 'answer'\n\n● answer\n[agent:answer] Your order KK-1 has shipped.\nAnything else?\n    │ Your order KK-1 has shipped.\n    │ Anything else?\n[workflow] leaving node 'answer' -> workflowState=answer\n✔ answer (turn ends here)\n\n✔ answer\n\ntokens     in 22,869 · out 90 · cache r 0/w 0\n",
        ws.header("orders", Some("scripted-model"))
    );
    assert_eq!(r.err, expected);
}

#[test]
fn a_governance_block_is_shown_and_the_turn_goes_on() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![(
            "c1",
            "read_file",
            json!({ "file_path": "secrets/keys.md" }),
        )]),
        Reply::text("I cannot read that file."),
    ])
    .expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "read the keys", "--session", "g-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "I cannot read that file.\n");
    assert_eq!(
        r.err,
        format!(
            "{}\n● classify\n    ✖ read_file refused: 'read_file' on 'secrets/keys.md' is not allowed in state 'classify'.\n    │ I cannot read that file.\n✔ classify (turn ends here)\n\n✔ answer\n",
            ws.header("orders", Some("scripted-model"))
        )
    );
}

#[test]
fn a_rejected_run_exits_1() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![]).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &[
            "run",
            "orders",
            "hello",
            "--trigger",
            "mail",
            "--session",
            "r-1",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.err);
    assert_eq!(r.out, "");
    let reason =
        "Refusing to start: trigger 'mail' requires 'order_id', which this firing does not supply.";
    assert_eq!(
        r.err,
        format!(
            "{}⚠ [workflow] {reason}\n\n✖ rejected\nSession r-1 was rejected in the 'classify' state: {reason}\n",
            ws.header("orders", Some("scripted-model"))
        )
    );
    assert!(server.requests().is_empty(), "no model call");
}

#[test]
fn a_raise_fails_the_session_and_exits_1() {
    let ws = workspace();
    let server = ScriptedServer::start(raise_script()).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "status?", "--session", "f-1"],
    );
    assert_eq!(r.code, 1, "{}", r.err);
    assert_eq!(r.out, "");
    assert_eq!(
        r.err,
        format!(
            "{}\n● classify\n    ✖ raised orders-unavailable the order system is down\n✖ classify → failed\n\n✖ failed\nSession f-1 failed in the 'classify' state with code 'orders-unavailable': the order system is down\n",
            ws.header("orders", Some("scripted-model"))
        )
    );
}

#[test]
fn missing_model_variables_are_named_together_after_the_header() {
    let ws = workspace();
    let r = cli(&ws, None, &["run", "orders", "hi"]);
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    let root = ws.root().display();
    assert_eq!(
        r.err,
        format!(
            "{}Error: Missing required environment variables: ARCHMAX_API_BASE_URL, ARCHMAX_API_KEY, ARCHMAX_MODEL. Set them in the environment or in {root}/.env ('archmax init' writes a .env.example to start from). ARCHMAX_API_KEY may be left out for an endpoint on this machine (localhost, 127.0.0.1).\n",
            ws.header("orders", Some("(unset — see .env)"))
        )
    );
    // The root .env supplies the model line and the variables it has; an
    // existing .env.example is the file to copy.
    std::fs::write(
        ws.root().join(".env"),
        "ARCHMAX_API_BASE_URL=https://api.example.com/v1\nARCHMAX_MODEL=from-dotenv\n",
    )
    .expect("write .env");
    std::fs::write(ws.root().join(".env.example"), "ARCHMAX_API_KEY=\n").expect("write");
    let r = cli(&ws, None, &["run", "orders", "hi"]);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.err,
        format!(
            "{}Error: Missing required environment variable: ARCHMAX_API_KEY. Copy {root}/.env.example to {root}/.env and fill it in. ARCHMAX_API_KEY may be left out for an endpoint on this machine (localhost, 127.0.0.1).\n",
            ws.header("orders", Some("from-dotenv"))
        )
    );
}

#[test]
fn a_loopback_endpoint_runs_without_a_key() {
    let ws = workspace();
    let server = ScriptedServer::start(completed_script()).expect("server");
    let r = crate::support::cli_with(
        &ws,
        None,
        &[
            ("ARCHMAX_API_BASE_URL", &server.url()),
            ("ARCHMAX_MODEL", "local-model"),
        ],
        false,
        &["run", "orders", "Where is KK-1?"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Your order KK-1 has shipped.\nAnything else?\n");
    assert_eq!(server.requests()[0]["model"], "local-model");
}

#[test]
fn a_disabled_workflow_starts_no_session() {
    let ws = Workspace::new(&[(
        "workflows/off/workflow.yaml",
        "disabled: true\ninstructions: Be brief.\nstates:\n  a:\n    triggers: { manual: }\n",
    )]);
    let server = ScriptedServer::start(vec![]).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "off", "hi", "--session", "d-1"],
    );
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert_eq!(
        r.err,
        format!(
            "{}⚠ [workflow] workflows/off/workflow.yaml: This workflow is disabled ('disabled: true'): it starts no new turns, but parked sessions can still be decided, replied to and delivered to.\nError: workflow 'off' is disabled ('disabled: true' in its workflow.yaml); no session started. Remove that flag to re-enable it. Parked sessions can still be decided, replied to and delivered to.\n",
            ws.header("off", Some("scripted-model"))
        )
    );
    assert!(
        !ws.root()
            .join("sessions/d-1/checkpoints/state.json")
            .exists()
    );
    assert!(server.requests().is_empty());
}

#[test]
fn an_unknown_trigger_names_the_declared_ones() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![]).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "hi", "--trigger", "nope"],
    );
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert_eq!(
        r.err,
        format!(
            "{}Error: No start state for trigger 'nope'. Declared triggers: manual, mail.\n",
            ws.header("orders", Some("scripted-model"))
        )
    );
    assert!(!ws.root().join("sessions").join("_specs").exists());
}

#[test]
fn an_unsupported_runtime_contract_is_refused_before_any_model_call() {
    let ws = Workspace::new(&[(
        "workflows/future/workflow.yaml",
        "runtime: { version: 99 }\nstates:\n  a:\n    triggers: { manual: }\n",
    )]);
    let server = ScriptedServer::start(vec![]).expect("server");
    let r = cli(&ws, Some(&server), &["run", "future", "hi"]);
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert_eq!(
        r.err,
        format!(
            "{}Error: Unsupported runtime contract 'archmax-harness@99'. Supported: archmax-harness@1, archmax-harness@2.\n",
            ws.header("future", Some("scripted-model"))
        )
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_missing_workflow_is_a_load_error() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![]).expect("server");
    let r = cli(&ws, Some(&server), &["run", "nope", "hi"]);
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert_eq!(
        r.err,
        format!(
            "{}Error: Cannot load workflow 'nope' (workflows/nope/workflow.yaml): no workflow.yaml found. Run 'archmax validate nope' for details.\n",
            ws.header("nope", Some("scripted-model"))
        )
    );
}

#[test]
fn a_session_with_a_turn_in_progress_is_refused() {
    let ws = workspace();
    let dir = ws.root().join("sessions/b-1/checkpoints");
    std::fs::create_dir_all(&dir).expect("session dir");
    // Another writer's lock, as a turn of another process holds it.
    let lock =
        std::fs::File::create(dir.join(archmax_machine::store::LOCK_FILE)).expect("lock file");
    lock.try_lock().expect("lock");
    let server = ScriptedServer::start(vec![]).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "hi", "--session", "b-1"],
    );
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert_eq!(
        r.err,
        format!(
            "{}Error: Session 'b-1' has a turn in progress (status 'unknown'). A session has a single writer: retry once the turn parks or ends.\n",
            ws.header("orders", Some("scripted-model"))
        )
    );
}

#[test]
fn an_unresolved_session_path_warns_and_mints() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![Reply::text("Hi.")]).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &[
            "run",
            "orders",
            "hi",
            "--variables",
            "{\"order_id\":\"KK-1\"}",
            "--session-path",
            "thread.id",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Hi.\n");
    let warning = r
        .err
        .lines()
        .find(|l| l.starts_with("⚠ [session] "))
        .unwrap_or_default();
    assert!(
        warning.contains("'thread.id' does not resolve"),
        "{}",
        r.err
    );
}

#[test]
fn pricing_adds_the_cost_and_a_tty_adds_color() {
    let ws = workspace();
    let server = ScriptedServer::start(completed_script()).expect("server");
    let r = cli_with(
        &ws,
        Some(&server),
        &[("ARCHMAX_PRICE_INPUT", "3"), ("ARCHMAX_PRICE_OUTPUT", "15")],
        true,
        &["run", "orders", "Where is KK-1?", "--session", "s-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    // 22,869 × 3 + 90 × 15 per million tokens.
    assert!(
        r.err
            .ends_with("\n\x1b[2mtokens\x1b[0m     in 22,869 · out 90 · cache r 0/w 0 · $0.0700\n"),
        "{:?}",
        r.err
    );
    assert!(
        r.err.contains("\n\x1b[32m\x1b[1m✔ answer\x1b[0m\x1b[0m\n"),
        "{:?}",
        r.err
    );
    assert!(r.err.contains("\x1b[36m●\x1b[0m \x1b[1mclassify\x1b[0m"));
    assert_eq!(r.out, "Your order KK-1 has shipped.\nAnything else?\n");
    let server = ScriptedServer::start(completed_script()).expect("server");
    let r = cli_with(
        &ws,
        Some(&server),
        &[("NO_COLOR", "1")],
        true,
        &["run", "orders", "again", "--session", "s-2"],
    );
    assert!(!r.err.contains('\x1b'), "{:?}", r.err);
}

#[test]
fn a_cost_cap_needs_a_price_and_a_token_cap_ends_the_turn_naming_the_spend() {
    let ws = workspace();
    let server = ScriptedServer::start(completed_script()).expect("server");
    let r = cli_with(
        &ws,
        Some(&server),
        &[("ARCHMAX_MAX_SESSION_COST_USD", "0.5")],
        false,
        &["run", "orders", "Where is KK-1?", "--session", "s-1"],
    );
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(
        r.err.contains("the cap ARCHMAX_MAX_SESSION_COST_USD / caps.sessionCostUsd is in US dollars, but model 'scripted-model' has no price"),
        "{}",
        r.err
    );
    assert_eq!(server.requests().len(), 0, "nothing ran");
    // The script's first answer reports more than 1,000 tokens: past the cap, nothing more is asked.
    let server = ScriptedServer::start(completed_script()).expect("server");
    let r = cli_with(
        &ws,
        Some(&server),
        &[("ARCHMAX_MAX_TURN_TOKENS", "1000")],
        false,
        &["run", "orders", "Where is KK-1?", "--session", "s-2"],
    );
    assert!(
        r.err.contains("the turn reached its token cap (ARCHMAX_MAX_TURN_TOKENS / caps.turnTokens: 1000 tokens)"),
        "{}",
        r.err
    );
    assert_eq!(server.requests().len(), 1, "{}", r.err);
}

#[test]
fn a_model_that_is_down_falls_back_to_the_next_and_a_cassette_keeps_which_answered() {
    let ws = workspace();
    // The first endpoint refuses connections: a port that was free a moment ago.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let backup = ScriptedServer::start(
        completed_script()
            .into_iter()
            .map(|r| r.with_model("backup-model"))
            .collect(),
    )
    .expect("server");
    let fallback = format!("backup-model@{}", backup.url());
    let cassette = ws.root().join("fell-back.cassette.json");
    let env = [
        ("ARCHMAX_API_BASE_URL", format!("http://{closed}/v1")),
        ("ARCHMAX_API_KEY", "k".to_string()),
        ("ARCHMAX_MODEL", "primary-model".to_string()),
        ("ARCHMAX_MAX_RETRIES", "0".to_string()),
        ("ARCHMAX_FALLBACK_MODELS", fallback.clone()),
        ("ARCHMAX_PRICE_INPUT", "3".to_string()),
        ("ARCHMAX_PRICE_OUTPUT", "15".to_string()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let r = cli_with(
        &ws,
        None,
        &env,
        false,
        &[
            "run",
            "orders",
            "Where is KK-1?",
            "--session",
            "s-1",
            "--record",
            cassette.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Your order KK-1 has shipped.\nAnything else?\n");
    assert!(
        r.err.contains(&format!(
            "⚠ model primary-model failed, switching to {fallback}:"
        )),
        "{}",
        r.err
    );
    // Every call went to the backup, asking for its own model id.
    let asked: Vec<serde_json::Value> = backup
        .requests()
        .iter()
        .map(|q| q["model"].clone())
        .collect();
    assert_eq!(asked, vec![json!("backup-model"); asked.len()]);
    let recorded = std::fs::read_to_string(&cassette).expect("recorded");
    assert!(
        recorded.contains("\"model\": \"backup-model\""),
        "{recorded}"
    );
    // The replay, on a fresh copy of the workspace, answers as the backup did, with no
    // endpoint at all.
    let fresh = workspace();
    let r = cli(
        &fresh,
        None,
        &[
            "run",
            "orders",
            "Where is KK-1?",
            "--session",
            "s-1",
            "--replay",
            cassette.to_str().expect("utf-8"),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "Your order KK-1 has shipped.\nAnything else?\n");
}

#[test]
fn a_model_error_fails_the_turn_with_turn_error() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![Reply::Status(400, "{\"error\":\"bad\"}".into())])
        .expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "hi", "--session", "t-1"],
    );
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    let expected = format!(
        "{}\n● classify\n\n✖ failed\nSession t-1 failed in the 'classify' state with code 'turn-error': model request to ",
        ws.header("orders", Some("scripted-model"))
    );
    assert!(r.err.starts_with(&expected), "{}", r.err);
    assert!(r.err.contains("failed with HTTP 400"), "{}", r.err);
}

#[test]
fn the_next_turn_continues_the_session() {
    let ws = workspace();
    let mut script = completed_script();
    script.push(Reply::text("You are welcome."));
    let server = ScriptedServer::start(script).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "Where is KK-1?", "--session", "s-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let r = cli(
        &ws,
        Some(&server),
        &["run", "orders", "Thanks!", "--session", "s-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(r.out, "You are welcome.\n");
    assert_eq!(
        r.err,
        format!(
            "{}\n● answer\n    │ You are welcome.\n✔ answer (turn ends here)\n\n✔ answer\n",
            ws.header("orders", Some("scripted-model"))
        )
    );
}

/// An [`archmax_cli::Io`] that notes, for each stderr write, how many model
/// requests the server had received by then.
struct Watching<'a> {
    inner: archmax_cli::BufferIo,
    server: &'a ScriptedServer,
    writes: Vec<(usize, String)>,
    sink: Vec<u8>,
}

impl std::io::Write for Watching<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let seen = self.server.requests().len();
        self.writes
            .push((seen, String::from_utf8_lossy(buf).into_owned()));
        self.sink.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl archmax_cli::Io for Watching<'_> {
    fn stdout(&mut self) -> &mut dyn std::io::Write {
        &mut self.inner.out
    }
    fn stderr(&mut self) -> &mut dyn std::io::Write {
        self
    }
    fn env_var(&self, name: &str) -> Option<String> {
        self.inner.env.get(name).cloned()
    }
    fn env_lookup(&self) -> archmax_machine::env::Lookup {
        self.inner.env_lookup()
    }
    fn cwd(&self) -> std::io::Result<std::path::PathBuf> {
        Ok(self.inner.cwd.clone())
    }
    fn stderr_is_tty(&self) -> bool {
        false
    }
}

#[test]
fn events_are_rendered_while_the_turn_runs() {
    let ws = workspace();
    let slow = std::time::Duration::from_millis(300);
    let script: Vec<Reply> = completed_script()
        .into_iter()
        .map(|r| r.after(slow))
        .collect();
    let server = ScriptedServer::start(script).expect("server");
    let inner = archmax_cli::BufferIo::new(ws.root())
        .with_env("ARCHMAX_CLI_NO_BANNER", "1")
        .with_env("ARCHMAX_API_BASE_URL", &server.url())
        .with_env("ARCHMAX_API_KEY", "k")
        .with_env("ARCHMAX_MODEL", "m");
    let mut io = Watching {
        inner,
        server: &server,
        writes: Vec::new(),
        sink: Vec::new(),
    };
    let args: Vec<String> = ["run", "orders", "hi", "--session", "s-1"]
        .map(String::from)
        .to_vec();
    assert_eq!(archmax_cli::run(&args, &mut io), 0);
    let seen_at = |needle: &str| {
        io.writes
            .iter()
            .find(|(_, text)| text.contains(needle))
            .map(|(n, _)| *n)
    };
    // `● classify` is on stderr before the first response arrives; the move
    // before the third request has been answered.
    assert!(
        seen_at("● classify").is_some_and(|n| n <= 1),
        "{:?}",
        io.writes
    );
    assert!(
        seen_at("✔ classify → answer").is_some_and(|n| n <= 3),
        "{:?}",
        io.writes
    );
    assert_eq!(seen_at("✔ answer\n"), Some(3));
    assert!(String::from_utf8_lossy(&io.sink).contains("\n✔ answer\n"));
}

#[test]
fn a_blank_prompt_is_a_usage_error_before_anything_runs() {
    // The runtime refuses a blank message on a fresh turn (EmptyMessageError); the CLI
    // never gets there: a prompt of only whitespace counts as absent.
    let ws = workspace();
    let server = ScriptedServer::start(vec![]).expect("server");
    let r = cli(&ws, Some(&server), &["run", "orders", "  ", "\t"]);
    assert_eq!((r.code, r.out.as_str()), (2, ""));
    assert_eq!(
        r.err,
        "Error: a prompt is required (try: archmax run --help)\n"
    );
    assert!(!ws.root().join("sessions").join("_specs").exists());
}

#[test]
fn an_undeclared_trigger_on_a_named_session_that_never_ran_is_refused() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![]).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &[
            "run",
            "orders",
            "hi",
            "--session",
            "s-new",
            "--trigger",
            "nope",
        ],
    );
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert_eq!(
        r.err,
        format!(
            "{}Error: No state declares trigger 'nope', and no parked session is awaiting it, so there is nowhere for this firing to go. Declare it under the 'triggers:' of the state a run should start in, or deliver the firing to a session parked on it — naming the session, or a 'sessionPath' to find it by.\n",
            ws.header("orders", Some("scripted-model"))
        )
    );
    assert!(
        !ws.root()
            .join("sessions")
            .join("s-new")
            .join("checkpoints/state.json")
            .exists()
    );
}

#[test]
fn a_404_from_a_base_url_without_v1_suggests_it() {
    let ws = workspace();
    let server = ScriptedServer::start(vec![Reply::error(404, "File Not Found")]).expect("server");
    let base = format!("http://{}", server.addr());
    let r = cli_with(
        &ws,
        None,
        &[
            ("ARCHMAX_API_BASE_URL", base.as_str()),
            ("ARCHMAX_API_KEY", "test-key"),
            ("ARCHMAX_MODEL", "scripted-model"),
        ],
        false,
        &["run", "orders", "hi", "--session", "v-1"],
    );
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    let hint = format!(
        "failed with HTTP 404: {{\"error\":{{\"message\":\"File Not Found\"}}}} — is the base URL missing /v1? (try {base}/v1)\n"
    );
    assert!(r.err.ends_with(&hint), "{}", r.err);
    assert!(
        r.err
            .contains(&format!("model request to {base}/chat/completions")),
        "{}",
        r.err
    );
}

/// A refund that needs a person's review before it is approved.
const REVIEWED: &str = r#"title: Refunds
instructions: Handle refund requests.
states:
  classify:
    triggers: { manual: }
    instructions: Route the request.
    tools:
      forbid: [write_file]
    transitions:
      - { to: review, description: A refund needs a review. }
  review:
    type: human
    instructions: Approve the refund or not.
    transitions:
      - { to: approved, description: Approve., type: approve }
  approved:
    instructions: Confirm the refund.
"#;

#[test]
fn a_refused_move_and_a_refused_tool_show_their_reasons_live() {
    let ws = Workspace::new(&[("workflows/refunds/workflow.yaml", REVIEWED)]);
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "approved", "reason": "the customer is right" }),
        )]),
        Reply::tool_calls(vec![(
            "c2",
            "write_file",
            json!({ "file_path": "scratchpad/refund.json", "content": "{}" }),
        )]),
        Reply::tool_calls(vec![
            ("c3", "issue_refund", json!({ "order": "KK-1" })),
            ("c4", "eval", json!({ "code": "1" })),
        ]),
        Reply::text("A person has to review the refund first."),
    ])
    .expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "refunds", "Refund KK-1", "--session", "x-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    assert_eq!(
        r.err,
        format!(
            "{}\n● classify\n    ✖ archmax_advance refused: cannot advance from 'classify' to 'approved'. Valid target slugs: review.\n    ✖ write_file refused: 'write_file' on 'scratchpad/refund.json' is forbidden by state 'classify' (states.classify.tools.forbid). A denial beats every grant, so no allow entry here permits it.\n    ✖ issue_refund refused: [workflow] 'issue_refund' is not a tool. Call one of the tools you were given, by its exact name.\n    ✖ eval refused: an unnamespaced `eval` tool is never governed — use `archmax_eval`, the runtime's own code interpreter.\n    │ A person has to review the refund first.\n✔ classify (turn ends here)\n\n✔ answer\n",
            ws.header("refunds", Some("scripted-model"))
        )
    );
}
