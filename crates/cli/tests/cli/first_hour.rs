//! What a newcomer meets first: `archmax init`, a run on the workspace it
//! writes, the session commands finding their workflow from the session's
//! record, `--json` outcomes, and refusals that need no model variables.

use serde_json::{Value, json};

use crate::scripted::{Reply, ScriptedServer};
use crate::support::{Workspace, cli, cli_with};

/// A workspace made by `archmax init`, with a second workflow so that nothing
/// can be inferred from "the only workflow".
fn initialised() -> Workspace {
    let ws = Workspace::new(&[]);
    let r = cli(&ws, None, &["init"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let other = ws.root().join("workflows/other/workflow.yaml");
    std::fs::create_dir_all(other.parent().expect("dir")).expect("mkdir");
    std::fs::write(
        &other,
        "instructions: x\nstates:\n  a:\n    triggers: { manual: }\n    instructions: a\n",
    )
    .expect("write");
    ws
}

/// The model's side of a draft: write the answer, move to review, say so.
fn drafts() -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({ "file_path": "scratchpad/answer.md", "content": "Thank you all." }),
        )]),
        Reply::tool_calls(vec![(
            "c2",
            "archmax_advance",
            json!({ "to": "review", "reason": "drafted" }),
        )]),
        Reply::text("Your note is ready for review."),
    ]
}

#[test]
fn init_names_the_installed_schema_relative_to_each_file() {
    let ws = Workspace::new(&[]);
    // The package installed at the project root; the workspace two folders below it.
    let package = ws.root().join("node_modules/@archmax-ai/harness");
    std::fs::create_dir_all(&package).expect("package dir");
    for name in ["workflow.schema.json", "case.schema.json"] {
        std::fs::write(package.join(name), "{}").expect("schema");
    }
    let r = cli(&ws, None, &["init", "agents/support"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let root = ws.root().join("agents/support");
    let first = |path: &str| {
        let text = std::fs::read_to_string(root.join(path)).expect("read");
        text.lines().next().expect("first line").to_owned()
    };
    assert_eq!(
        first("workflows/hello/workflow.yaml"),
        "# yaml-language-server: $schema=../../../../node_modules/@archmax-ai/harness/workflow.schema.json"
    );
    assert_eq!(
        first("workflows/hello/tests/parks-for-review.test.yaml"),
        "# yaml-language-server: $schema=../../../../../node_modules/@archmax-ai/harness/case.schema.json"
    );
    // The named files exist from where each file is.
    assert!(
        root.join("workflows/hello")
            .join("../../../../node_modules/@archmax-ai/harness/workflow.schema.json")
            .is_file()
    );
    let v = cli(&ws, None, &["validate", "--root", "agents/support"]);
    assert_eq!(v.code, 0, "{}", v.err);
}

#[test]
fn init_writes_a_workspace_that_validates_and_refuses_to_overwrite() {
    let ws = Workspace::new(&[]);
    let r = cli(&ws, None, &["init", "starter"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let root = ws.root().join("starter");
    for file in [
        ".env.example",
        "AGENTS.md",
        "workflows/hello/workflow.yaml",
        "workflows/hello/hooks/check-answer.js",
        "workflows/hello/tests/parks-for-review.test.yaml",
    ] {
        assert!(root.join(file).is_file(), "{file}");
    }
    assert_eq!(
        r.out,
        "Next:\n  archmax validate --root starter\n  cp starter/.env.example starter/.env   # then set the endpoint\n  archmax run hello \"Draft a thank-you note to the team\" --root starter\n"
    );
    let v = cli(&ws, None, &["validate", "--root", "starter"]);
    assert_eq!(
        (v.code, v.out.as_str()),
        (0, "valid — 0 error(s), 0 warning(s)\n"),
        "{}",
        v.err
    );
    let yaml = std::fs::read_to_string(root.join("workflows/hello/workflow.yaml")).expect("read");
    assert!(yaml.contains("type: human") && yaml.contains("script: hooks/check-answer.js"));
    // No package installed around the workspace: editors fetch this version's published schema.
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        yaml.lines().next().expect("first line"),
        format!(
            "# yaml-language-server: $schema=https://unpkg.com/@archmax-ai/harness@{version}/workflow.schema.json"
        )
    );
    let case =
        std::fs::read_to_string(root.join("workflows/hello/tests/parks-for-review.test.yaml"))
            .expect("read case");
    assert_eq!(
        case.lines().next().expect("first line"),
        format!(
            "# yaml-language-server: $schema=https://unpkg.com/@archmax-ai/harness@{version}/case.schema.json"
        )
    );
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    assert!(repo.join("case.schema.json").is_file());
    assert!(repo.join("workflow.schema.json").is_file());
    let again = cli(&ws, None, &["init", "starter"]);
    assert_eq!((again.code, again.out.as_str()), (1, ""));
    assert_eq!(
        again.err,
        format!(
            "Error: {}/.env.example already exists; 'archmax init' writes a new workspace and changes none (nothing was written)\n",
            root.display()
        )
    );
}

#[test]
fn a_run_parks_and_decide_finds_the_workflow_from_the_session() {
    let ws = initialised();
    let mut script = drafts();
    script.push(Reply::text("Approved: Thank you all."));
    let server = ScriptedServer::start(script).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "hello", "Thank the team", "--session", "h-1"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    // An ok verdict without a reason has no dangling dash.
    assert!(r.err.contains("    ✔ after ok\n"), "{}", r.err);
    assert!(!r.err.contains("ok — "), "{}", r.err);
    assert!(
        r.err
            .contains("\nfiles     sessions/h-1/scratchpad/answer.md\n"),
        "{}",
        r.err
    );

    // No --workflow, although the workspace has two: the session names its own.
    let d = cli(
        &ws,
        Some(&server),
        &["decide", "h-1", "--to", "done", "--json"],
    );
    assert_eq!(d.code, 0, "{}", d.err);
    assert!(d.err.starts_with("◆ hello\n"), "{}", d.err);
    assert!(d.err.contains("✔ done (turn ends here)\n"), "{}", d.err);
    assert!(!d.err.contains("done → done"), "{}", d.err);
    let outcome: Value = serde_json::from_str(&d.out).expect("the Outcome as JSON");
    assert_eq!(outcome["kind"], "completed");
    assert_eq!(outcome["sessionId"], "h-1");
    assert_eq!(outcome["state"], "done");
    assert_eq!(outcome["reply"], "Approved: Thank you all.");
    assert!(
        outcome.get("messages").is_none(),
        "the transcript stays on disk"
    );

    // --workflow naming another workflow than the session's is a usage error.
    let w = cli(&ws, None, &["sessions", "h-1", "--workflow", "other"]);
    assert_eq!(w.code, 2);
    assert_eq!(
        w.err,
        "Error: session 'h-1' runs the workflow 'hello', not 'other' (omit --workflow) (try: archmax sessions --help)\n"
    );
}

#[test]
fn run_json_prints_the_parked_outcome() {
    let ws = initialised();
    let server = ScriptedServer::start(drafts()).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &[
            "run",
            "hello",
            "Thank the team",
            "--session",
            "h-2",
            "--json",
        ],
    );
    assert_eq!(r.code, 0, "a park is not a failure: {}", r.err);
    let outcome: Value = serde_json::from_str(&r.out).expect("json");
    assert_eq!(outcome["kind"], "parked");
    assert_eq!(outcome["status"], "awaiting_decision");
    assert_eq!(outcome["state"], "review");
    assert_eq!(outcome["parkedChannel"], "decision");
    assert_eq!(outcome["pending"]["state"], "review");
    assert_eq!(outcome["pending"]["transitions"][0]["to"], "done");
    // The narration still goes to stderr.
    assert!(r.err.contains("⚠ awaiting human decision\n"), "{}", r.err);
}

#[test]
fn refusals_known_from_the_record_need_no_model_variables() {
    let ws = initialised();
    let server = ScriptedServer::start(drafts()).expect("server");
    let r = cli(
        &ws,
        Some(&server),
        &["run", "hello", "Thank the team", "--session", "h-3"],
    );
    assert_eq!(r.code, 0, "{}", r.err);
    let calls = server.requests().len();
    let header = ws.header("hello", None);
    // Without any ARCHMAX_* variable.
    let bad = cli(&ws, None, &["decide", "h-3", "--to", "nowhere"]);
    assert_eq!((bad.code, bad.out.as_str()), (1, ""));
    assert_eq!(
        bad.err,
        format!(
            "{header}Error: 'nowhere' is not a valid decision target for session 'h-3'. Choose one of: done, draft.\n"
        )
    );
    let deliver = cli(&ws, None, &["deliver", "h-3", "--trigger", "mail"]);
    assert_eq!(
        deliver.err,
        format!(
            "{header}Error: Session 'h-3' is not parked awaiting an event; there is nothing to deliver to. A session awaiting a human decision resumes through a decision instead.\n"
        )
    );
    let unknown = cli(&ws, None, &["reply", "nope", "hello?"]);
    assert_eq!(
        (unknown.code, unknown.err.as_str()),
        (
            1,
            "Error: no durable session 'nope'. Use 'archmax sessions' to list them.\n"
        )
    );
    let shown = cli(&ws, None, &["sessions", "h-3", "--json"]);
    assert_eq!(shown.code, 0, "{}", shown.err);
    assert_eq!(server.requests().len(), calls, "no model call");
    // A decision that runs a state does need them, and names every missing one.
    let needs = cli_with(
        &ws,
        None,
        &[("ARCHMAX_MODEL", "m")],
        false,
        &["decide", "h-3", "--to", "done"],
    );
    assert_eq!(needs.code, 1);
    assert!(
        needs.err.ends_with(&format!(
            "Error: Missing required environment variables: ARCHMAX_API_BASE_URL, ARCHMAX_API_KEY. Copy {0}/.env.example to {0}/.env and fill it in. ARCHMAX_API_KEY may be left out for an endpoint on this machine (localhost, 127.0.0.1).\n",
            ws.root().display()
        )),
        "{}",
        needs.err
    );
    assert!(!needs.err.contains("archmax failed"), "{}", needs.err);
}
