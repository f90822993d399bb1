//! Authored files that are not regular files (a FIFO, a link to `/dev/zero`, a folder)
//! are refused with their path and what they are, promptly: nothing blocks or reads
//! forever, in `validate`, at assembly or when a hook runs.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use archmax_spec::{DiskFiles, ValidateOptions, validate_workflow};
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{ModelEndpoint, TempWorkspace};
use serde_json::json;

/// Runs `f` on a thread of its own and answers what it returned, or panics when it
/// takes longer than a few seconds (a FIFO read blocks forever).
fn promptly<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("returned within 10 s (a non-regular file was read as one)")
}

fn mkfifo(path: &Path) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("dir");
    }
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(status.success());
}

fn messages(root: &Path, workflow: &str) -> Vec<String> {
    let files = DiskFiles::new(root);
    let opts = ValidateOptions::new(workflow);
    validate_workflow(&files, &opts)
        .diagnostics
        .into_iter()
        .map(|d| d.message)
        .collect()
}

const SPEC: &str = "states:\n  draft:\n    triggers: { manual: }\n    after: { script: hooks/check.js }\n    on_error: failed\n    transitions: [{ to: done, description: Finished. }]\n  done:\n    instructions: Say so.\n  failed:\n    instructions: Explain.\n";

#[test]
fn a_workflow_yaml_that_is_a_fifo_or_a_device_is_named_not_read() {
    let ws = TempWorkspace::new(&[]);
    mkfifo(&ws.root().join("workflows/piped/workflow.yaml"));
    std::fs::create_dir_all(ws.root().join("workflows/zero")).expect("dir");
    std::os::unix::fs::symlink("/dev/zero", ws.root().join("workflows/zero/workflow.yaml"))
        .expect("link");
    let root = ws.root().to_path_buf();
    let found = promptly(move || (messages(&root, "piped"), messages(&root, "zero")));
    assert_eq!(
        found.0,
        vec!["workflows/piped/workflow.yaml is a named pipe (FIFO), not a regular file"]
    );
    // A link to a device leads out of the workspace: refused before its kind matters.
    assert_eq!(
        found.1,
        vec![format!(
            "workflows/zero/workflow.yaml is a link that leads out of {}; links are followed only within it",
            ws.root().display()
        )]
    );
}

#[test]
fn a_hook_that_is_a_fifo_fails_validation_and_fails_closed_at_run_time() {
    let ws = TempWorkspace::new(&[("workflows/orders/workflow.yaml", SPEC)]);
    mkfifo(&ws.root().join("workflows/orders/hooks/check.js"));
    let root = ws.root().to_path_buf();
    let found = promptly(move || messages(&root, "orders"));
    assert!(
        found.iter().any(|m| m
            == "State 'draft' 'after' hook script workflows/orders/hooks/check.js is a named pipe (FIFO), not a regular file"),
        "{found:?}"
    );
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "done", "reason": "ready" }),
        )]),
        Reply::text("Failed."),
    ]);
    let root = ws.root().to_path_buf();
    let out = promptly(move || {
        let h = archmax_tests::harness(&root, "orders", &server, "m", |_| {});
        archmax_tests::send(&h, "h1", "go")
    });
    assert_eq!(
        out.state, "failed",
        "the hook failed closed through on_error"
    );
    let messages = serde_json::to_string(&out.messages).unwrap_or_default();
    assert!(
        messages.contains("could not be read: it is a named pipe (FIFO), not a regular file"),
        "{messages}"
    );
}

#[test]
fn assembly_names_an_unreadable_spec_or_agents_md() {
    let ws = TempWorkspace::new(&[("workflows/orders/workflow.yaml", SPEC)]);
    mkfifo(&ws.root().join("workflows/piped/workflow.yaml"));
    mkfifo(&ws.root().join("AGENTS.md"));
    let root = ws.root().to_path_buf();
    let errors = promptly(move || {
        ["piped", "orders"].map(|w| {
            let opts = archmax_machine::HarnessOptions {
                root: root.clone(),
                workflow: w.to_string(),
                model: std::sync::Arc::new(
                    archmax_machine::model::OpenAiClient::new(
                        archmax_machine::model::ModelConfig::new("http://127.0.0.1:9", "k", "m"),
                    )
                    .expect("client"),
                ),
                default_model: "m".into(),
                store: std::sync::Arc::new(archmax_machine::store::FsStore::new(&root)),
                events: std::sync::Arc::new(archmax_machine::NoEvents),
                tools: Vec::new(),
                essential_tools: Vec::new(),
                mounts: None,
                skills: vec!["skills/".to_string()],
            };
            archmax_machine::Harness::assemble(opts)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        })
    });
    assert_eq!(
        errors[0],
        "Cannot load workflow 'piped' (workflows/piped/workflow.yaml): the file is a named pipe (FIFO), not a regular file. Run 'archmax validate piped' for details."
    );
    assert_eq!(
        errors[1],
        "AGENTS.md is a named pipe (FIFO), not a regular file"
    );
}

#[test]
fn validate_and_a_run_refuse_the_same_oversized_persona_with_the_same_words() {
    let ws = TempWorkspace::new(&[("workflows/orders/workflow.yaml", SPEC)]);
    // 9 MiB without writing them: a sparse file.
    let persona = std::fs::File::create(ws.root().join("AGENTS.md")).expect("create");
    persona.set_len(9 * 1024 * 1024).expect("grow");
    let found = messages(ws.root(), "orders");
    let words = "AGENTS.md is larger than 8 MiB, the most this kind of file may hold";
    assert!(found.iter().any(|m| m == words), "{found:?}");
    let server = InProcessModel::new(vec![]);
    let assembled = archmax_machine::Harness::assemble(archmax_machine::HarnessOptions {
        root: ws.root().to_path_buf(),
        workflow: "orders".into(),
        model: server.model("m"),
        default_model: "m".into(),
        store: std::sync::Arc::new(archmax_machine::store::MemStore::new()),
        events: std::sync::Arc::new(archmax_machine::NoEvents),
        tools: Vec::new(),
        essential_tools: Vec::new(),
        mounts: None,
        skills: vec!["skills/".into()],
    });
    let Err(err) = assembled else {
        panic!("an oversized AGENTS.md was assembled")
    };
    assert_eq!(err.to_string(), words);
    // A persona linked out of the workspace is refused by both alike.
    std::fs::remove_file(ws.root().join("AGENTS.md")).expect("rm");
    let outside = ws
        .root()
        .parent()
        .expect("tmp")
        .join(format!("persona-outside-{}.md", std::process::id()));
    std::fs::write(&outside, "You are someone else.").expect("outside");
    std::os::unix::fs::symlink(&outside, ws.root().join("AGENTS.md")).expect("link");
    let found = messages(ws.root(), "orders");
    let _ = std::fs::remove_file(&outside);
    assert!(
        found
            .iter()
            .any(|m| m.starts_with("AGENTS.md is a link that leads out of")),
        "{found:?}"
    );
}
