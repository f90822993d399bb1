//! Dispatch-level tests: exit codes, streams and exact messages.

use super::*;

fn run_in(cwd: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let mut io = BufferIo::new(cwd);
    let args: Vec<String> = args.iter().map(|s| (*s).to_string()).collect();
    let code = run(&args, &mut io);
    (code, io.stdout_text(), io.stderr_text())
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("archmax-cli-unit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

#[test]
fn no_command_prints_help_on_stderr() {
    let (code, out, err) = run_in(&tmp("none"), &[]);
    assert_eq!(code, 2);
    assert_eq!(out, "");
    assert_eq!(
        err,
        format!("{}\nError: a command is required\n", help::top_level())
    );
}

#[test]
fn top_level_help_goes_to_stdout() {
    for args in [&["--help"][..], &["-h"], &["help"]] {
        let (code, out, err) = run_in(&tmp("help"), args);
        assert_eq!((code, err.as_str()), (0, ""));
        assert_eq!(out, help::top_level());
    }
}

#[test]
fn the_version_flag_prints_the_package_version() {
    for flag in ["--version", "-V"] {
        let (code, out, err) = run_in(&tmp("version"), &[flag]);
        assert_eq!((code, err.as_str()), (0, ""));
        assert_eq!(out, format!("archmax {}\n", env!("CARGO_PKG_VERSION")));
    }
    assert_eq!(VERSION, "0.9.0", "the npm package's version");
}

#[test]
fn unknown_commands() {
    let (code, out, err) = run_in(&tmp("unknown"), &["Explain this"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "Error: unknown command 'Explain this' (try: archmax help)\n"
    );
    let (code, _, err) = run_in(&tmp("unknown"), &["--root"]);
    assert_eq!(code, 2);
    assert_eq!(err, "Error: unknown command '--root' (try: archmax help)\n");
    let (code, _, err) = run_in(&tmp("unknown"), &["help", "nope"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "Error: unknown command 'nope' (try: archmax help --help)\n"
    );
}

#[test]
fn help_cmd_and_cmd_help_are_identical() {
    for cmd in commands::COMMANDS {
        let (c1, a, _) = run_in(&tmp("same"), &["help", cmd.name]);
        let (c2, b, _) = run_in(&tmp("same"), &[cmd.name, "--help"]);
        let (c3, c, _) = run_in(&tmp("same"), &[cmd.name, "-h", "surplus", "args"]);
        assert_eq!((c1, c2), (0, 0));
        assert_eq!(a, b);
        if cmd.name != "help" {
            assert_eq!((c3, &c), (0, &a));
        }
    }
}

#[test]
fn usage_errors_name_the_command() {
    let dir = tmp("usage");
    let (code, out, err) = run_in(&dir, &["validate", "--bogus", "--help"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "Error: Unknown option '--bogus' (try: archmax validate --help)\n"
    );
    let (code, _, err) = run_in(&dir, &["validate", "a", "b"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "Error: unexpected argument 'b' (try: archmax validate --help)\n"
    );
    let (code, _, err) = run_in(&dir, &["validate", "--workflow", "x"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "Error: Unknown option '--workflow' (try: archmax validate --help)\n"
    );
    let (_, _, err) = run_in(&dir, &["validate", "--json=yes"]);
    assert_eq!(
        err,
        "Error: Option '--json' does not take an argument (try: archmax validate --help)\n"
    );
    let (_, _, err) = run_in(&dir, &["run", "wf", "hi", "--trigger"]);
    assert_eq!(
        err,
        "Error: Option '--trigger <value>' argument missing (try: archmax run --help)\n"
    );
    let (code, _, err) = run_in(&dir, &["help", "run", "test"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        "Error: unexpected argument 'test' (try: archmax help --help)\n"
    );
    let (code, _, err) = run_in(&dir, &["validate"]);
    assert_eq!(code, 2);
    assert_eq!(
        err,
        format!(
            "Error: a workflow is required and none was found under {}/workflows (try: archmax validate --help)\n",
            dir.display()
        )
    );
}

#[test]
fn runtime_commands_check_their_arguments_first() {
    let dir = tmp("pending");
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["run", "wf"],
            2,
            "Error: a prompt is required (try: archmax run --help)\n",
        ),
        (
            &["run", "wf", "  "],
            2,
            "Error: a prompt is required (try: archmax run --help)\n",
        ),
        (
            &["run", "wf", "hi", "--variables", "{"],
            2,
            "Error: --variables is not valid JSON (try: archmax run --help)\n",
        ),
        (
            &["run", "wf", "hi", "--variables=[1]"],
            2,
            "Error: --variables must encode a JSON object (e.g. '{\"from_email\":\"a@b.com\"}') (try: archmax run --help)\n",
        ),
        (
            &["decide"],
            2,
            "Error: a session id is required (try: archmax decide --help)\n",
        ),
        (
            &["decide", "s1"],
            2,
            "Error: --to <state> is required (the target the person picks) (try: archmax decide --help)\n",
        ),
        (
            &["decide", "../x", "--to", "done"],
            2,
            "Error: invalid session id '../x' - it must stay within the session zone (no absolute paths or '..' traversal). Use one from 'archmax sessions'. (try: archmax decide --help)\n",
        ),
        (
            &["decide", "s1", "target"],
            2,
            "Error: unexpected argument 'target' (try: archmax decide --help)\n",
        ),
        (
            &["reply", "s1", " "],
            2,
            "Error: a message is required — there is nothing to answer otherwise (try: archmax reply --help)\n",
        ),
        (
            &["deliver", "s1"],
            2,
            "Error: --trigger <id> is required (the event that arrived) (try: archmax deliver --help)\n",
        ),
        (
            &["deliver", "s1", "--trigger", "mail", "--variables", "1"],
            2,
            "Error: --variables must encode a JSON object (e.g. '{\"from_email\":\"a@b.com\"}') (try: archmax deliver --help)\n",
        ),
        (
            &["sessions", "_specs", "--workflow", "wf"],
            2,
            "Error: invalid session id '_specs' - '_specs' is reserved at the workspace root (a session area or an authored mount). Use one from 'archmax sessions'. (try: archmax sessions --help)\n",
        ),
        (
            &["run", "wf", "hi", "--session", "."],
            2,
            "Error: invalid session id '.' - it must not be made of dots alone. Use one from 'archmax sessions'. (try: archmax run --help)\n",
        ),
        (
            &["decide", "a\r\nb", "--to", "done"],
            2,
            "Error: invalid session id 'a\\u{d}\\u{a}b' - it must not contain control or bidirectional-formatting characters (U+000D at character 2). Use one from 'archmax sessions'. (try: archmax decide --help)\n",
        ),
        (
            &["reply", "x\u{202e}y", "hi"],
            2,
            "Error: invalid session id 'x\\u{202e}y' - it must not contain control or bidirectional-formatting characters (U+202E at character 2). Use one from 'archmax sessions'. (try: archmax reply --help)\n",
        ),
        (
            &["deliver", " ", "--trigger", "mail"],
            2,
            "Error: invalid session id ' ' - it must not be empty. Use one from 'archmax sessions'. (try: archmax deliver --help)\n",
        ),
    ];
    for (args, code, err) in cases {
        let (c, out, e) = run_in(&dir, args);
        assert_eq!((c, out.as_str(), e.as_str()), (*code, "", *err), "{args:?}");
    }
}

#[test]
fn run_and_sessions_reach_the_runtime_after_their_checks() {
    let dir = tmp("runtime");
    let header = |model: bool| {
        format!(
            "◆ wf\n  directory  {}\n{}\n",
            dir.display(),
            if model {
                "  model      (unset — see .env)\n"
            } else {
                ""
            }
        )
    };
    let (code, out, err) = run_in(&dir, &["run", "wf", "hello", "there"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err,
        format!(
            "{}Error: Missing required environment variables: ARCHMAX_API_BASE_URL, ARCHMAX_API_KEY, ARCHMAX_MODEL. Set them in the environment or in {}/.env ('archmax init' writes a .env.example to start from). ARCHMAX_API_KEY may be left out for an endpoint on this machine (localhost, 127.0.0.1).\n",
            header(true),
            dir.display()
        )
    );
    let (code, out, err) = run_in(&dir, &["test", "wf", "filter"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err,
        format!(
            "{}Error: Cannot load workflow 'wf' (workflows/wf/workflow.yaml): no workflow.yaml found. Run 'archmax validate wf' for details.\n",
            header(true)
        )
    );
    let (code, out, err) = run_in(&dir, &["run", "wf", "hi", "--session", "../x"]);
    assert_eq!((code, out.as_str()), (2, ""));
    assert_eq!(
        err,
        "Error: invalid session id '../x' - it must stay within the session zone (no absolute paths or '..' traversal). Use one from 'archmax sessions'. (try: archmax run --help)\n"
    );
    let (code, out, err) = run_in(&dir, &["sessions", "--workflow", "wf", "--json"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err,
        format!(
            "{}Error: Cannot load workflow 'wf' (workflows/wf/workflow.yaml): no workflow.yaml found. Run 'archmax validate wf' for details.\n",
            header(false)
        )
    );
}

#[test]
fn the_park_commands_refuse_an_unknown_session_without_the_model_variables() {
    let dir = tmp("park");
    let missing = "Error: no durable session 's1'. Use 'archmax sessions' to list them.\n";
    for args in [
        &["decide", "s1", "--to", "done", "--workflow", "wf"][..],
        &["decide", "s1", "--to", "done"],
        &["reply", "s1", "ok", "--workflow=wf"],
        &["deliver", "s1", "--trigger", "mail"],
        &["sessions", "s1"],
    ] {
        let (code, out, err) = run_in(&dir, args);
        assert_eq!((code, out.as_str()), (1, ""), "{args:?}");
        assert_eq!(err, missing, "{args:?}");
    }
}

#[test]
fn banner_and_color_follow_the_tty_and_env() {
    let dir = tmp("banner");
    let mut io = BufferIo::new(&dir);
    io.tty = true;
    assert_eq!(run(&["help".to_string()], &mut io), 0);
    assert!(
        io.stderr_text().starts_with("\x1b[36m\n"),
        "{:?}",
        io.stderr_text()
    );
    let mut io = BufferIo::new(&dir).with_env("ARCHMAX_CLI_NO_BANNER", "1");
    io.tty = true;
    run(&["help".to_string()], &mut io);
    assert_eq!(io.stderr_text(), "");
    std::fs::write(dir.join(".env"), "ARCHMAX_CLI_NO_BANNER=1\n").expect("write .env");
    let mut io = BufferIo::new(&dir);
    io.tty = true;
    run(&["help".to_string()], &mut io);
    assert_eq!(
        io.stderr_text(),
        "",
        "the cwd .env is loaded before the banner"
    );
}
