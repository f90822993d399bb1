//! Golden tests of `archmax validate` against the fixture workspace in
//! `tests/fixtures/ws`: exact stderr, stdout and exit codes.

use std::path::PathBuf;

use archmax_cli::{BufferIo, run};

fn fixture_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/ws")
}

/// Runs `archmax <args>` from the crate directory; returns (code, stdout, stderr).
fn check(args: &[&str]) -> (i32, String, String) {
    let mut io = BufferIo::new(env!("CARGO_MANIFEST_DIR"));
    let args: Vec<String> = args.iter().map(|s| (*s).to_string()).collect();
    let code = run(&args, &mut io);
    (code, io.stdout_text(), io.stderr_text())
}

fn header(workflow: &str) -> String {
    format!(
        "◆ {workflow}\n  directory  {}\n\n",
        fixture_root().display()
    )
}

#[test]
fn a_clean_workflow() {
    let (code, out, err) = check(&["validate", "greet", "--root", "tests/fixtures/ws"]);
    assert_eq!(code, 0);
    assert_eq!(out, "valid — 0 error(s), 0 warning(s)\n");
    assert_eq!(err, format!("{}  ✔ no issues found\n\n", header("greet")));
}

#[test]
fn warnings_do_not_fail() {
    let (code, out, err) = check(&["validate", "--root=tests/fixtures/ws/", "terse"]);
    assert_eq!(code, 0);
    assert_eq!(out, "valid — 0 error(s), 1 warning(s)\n");
    let expected = "  ⚠ warn   workflows/terse/workflow.yaml: No top-level 'instructions', so the workflow \
                    ships no standing guidance for the whole run; add an 'instructions' block (conventions, \
                    house rules, what done means). [workflows/terse/workflow.yaml:2:1]\n\n";
    assert_eq!(err, format!("{}{expected}", header("terse")));
}

#[test]
fn errors_fail_with_file_line_and_column() {
    let (code, out, err) = check(&["validate", "broken", "--root", "tests/fixtures/ws"]);
    assert_eq!(code, 1);
    assert_eq!(out, "invalid — 1 error(s), 0 warning(s)\n");
    let expected = "  ✖ error  workflows/broken/workflow.yaml: 'states.start.transitions.0.to': State 'start' \
                    transitions to undefined state 'nowhere' [workflows/broken/workflow.yaml:11:9]\n\n";
    assert_eq!(err, format!("{}{expected}", header("broken")));
}

#[test]
fn json_output() {
    let (code, out, err) = check(&[
        "validate",
        "broken",
        "--json",
        "--root",
        "tests/fixtures/ws",
    ]);
    assert_eq!(code, 1);
    let expected = r#"{
  "workflow": "broken",
  "valid": false,
  "diagnostics": [
    {
      "severity": "error",
      "message": "workflows/broken/workflow.yaml: 'states.start.transitions.0.to': State 'start' transitions to undefined state 'nowhere'",
      "file": "workflows/broken/workflow.yaml",
      "field": "states.start.transitions.0.to",
      "line": 11,
      "column": 9
    }
  ]
}
"#;
    assert_eq!(out, expected);
    assert!(
        err.starts_with(&header("broken")),
        "the header still goes to stderr: {err}"
    );
    let (code, out, _) = check(&["validate", "greet", "--json", "--root", "tests/fixtures/ws"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "{\n  \"workflow\": \"greet\",\n  \"valid\": true,\n  \"diagnostics\": []\n}\n"
    );
}

#[test]
fn a_missing_workflow_is_a_diagnostic_not_a_usage_error() {
    let (code, out, err) = check(&["validate", "nope", "--root", "tests/fixtures/ws"]);
    assert_eq!(code, 1);
    assert_eq!(out, "invalid — 1 error(s), 0 warning(s)\n");
    let expected =
        "  ✖ error  No workflow.yaml found for workflow 'nope' [workflows/nope/workflow.yaml]\n\n";
    assert_eq!(err, format!("{}{expected}", header("nope")));
}

#[test]
fn inference_with_several_workflows_is_a_usage_error() {
    let (code, out, err) = check(&["validate", "--root", "tests/fixtures/ws"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "Error: a workflow is required; this workspace has several: broken, greet, terse \
         (try: archmax validate --help)\n"
    );
}

#[test]
fn color_on_a_tty() {
    let mut io = BufferIo::new(env!("CARGO_MANIFEST_DIR")).with_env("ARCHMAX_CLI_NO_BANNER", "1");
    io.tty = true;
    let args: Vec<String> = ["validate", "greet", "--root", "tests/fixtures/ws"]
        .map(String::from)
        .to_vec();
    assert_eq!(run(&args, &mut io), 0);
    let expected = format!(
        "\x1b[36m\x1b[1m◆ greet\x1b[0m\x1b[0m\n  \x1b[2mdirectory\x1b[0m  {}\n\n  \x1b[32m✔ no issues found\x1b[0m\n\n",
        fixture_root().display()
    );
    assert_eq!(io.stderr_text(), expected);
    assert_eq!(
        io.stdout_text(),
        "valid — 0 error(s), 0 warning(s)\n",
        "stdout is never styled here"
    );
}

#[test]
fn an_unknown_key_names_the_nearest_known_one() {
    let ws = crate::support::Workspace::new(&[(
        "workflows/w/workflow.yaml",
        "instructions: x\nbudget:\n  maxModelCall: 5\nstates:\n  a:\n    triggers: { manual: }\n    instructions: a\n    titel: A\n",
    )]);
    let r = crate::support::cli(&ws, None, &["validate"]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert!(
        r.err
            .contains("Unrecognized key: \"maxModelCall\" — did you mean \"maxModelCalls\"?"),
        "{}",
        r.err
    );
    assert!(
        r.err
            .contains("Unrecognized key: \"titel\" — did you mean \"title\"?"),
        "{}",
        r.err
    );
}

/// A workflow whose `refunds` state's `after` hook is `hooks/check.js`, holding `hook`.
fn with_hook(hook: &str) -> crate::support::Workspace {
    crate::support::Workspace::new(&[
        (
            "workflows/w/workflow.yaml",
            "instructions: Handle refunds.\nstates:\n  refunds:\n    triggers: { manual: }\n    instructions: Decide the refund.\n    after: { script: hooks/check.js }\n",
        ),
        ("workflows/w/hooks/check.js", hook),
    ])
}

#[test]
fn a_yaml_syntax_error_says_why_in_validate_and_in_run() {
    let ws = crate::support::Workspace::new(&[(
        "workflows/w/workflow.yaml",
        "instructions: \"Handle refunds.\nstates:\n  a: {}\n",
    )]);
    let r = crate::support::cli(&ws, None, &["validate"]);
    assert_eq!(r.code, 1, "{}", r.err);
    let finding = "workflows/w/workflow.yaml machine spec is not a YAML mapping: invalid indentation in quoted scalar [workflows/w/workflow.yaml:1:15]";
    assert_eq!(
        r.err,
        format!("{}  ✖ error  {finding}\n\n", ws.header("w", None))
    );
    let server = crate::scripted::ScriptedServer::start(Vec::new()).expect("server");
    let r = crate::support::cli(&ws, Some(&server), &["run", "w", "hello"]);
    assert_eq!((r.code, r.out.as_str()), (1, ""));
    assert!(
        r.err.ends_with(&format!(
            "Error: Cannot load workflow 'w' (workflows/w/workflow.yaml): no valid machine spec. Run 'archmax validate w' for details.\n  ✖ error  {finding}\n"
        )),
        "{}",
        r.err
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_hook_script_that_does_not_parse_is_an_error_at_its_line_and_column() {
    let ws = with_hook(
        "import { defineHook, veto } from '@archmax-ai/harness/sandbox'\n\nexport default defineHook((input) => {\n  if (input.to === 'paid' {\n    return veto('no date')\n  }\n})\n",
    );
    let r = crate::support::cli(&ws, None, &["validate"]);
    assert_eq!(r.code, 1, "{}", r.err);
    assert_eq!(r.out, "invalid — 1 error(s), 0 warning(s)\n");
    assert_eq!(
        r.err,
        format!(
            "{}  ✖ error  State 'refunds' 'after' hook script 'workflows/w/hooks/check.js' does not parse: SyntaxError: Unexpected token '{{' [workflows/w/hooks/check.js:4:27]\n\n",
            ws.header("w", None)
        )
    );
    let ws = with_hook(
        "import { defineHook, veto } from '@archmax-ai/harness/sandbox'\n\nexport default defineHook((input) => {\n  if (input.to === 'paid') {\n    return veto('no date')\n  }\n})\n",
    );
    let r = crate::support::cli(&ws, None, &["validate"]);
    assert_eq!(r.code, 0, "{}", r.err);
}
