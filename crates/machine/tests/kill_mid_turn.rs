//! A turn killed with SIGKILL mid-turn leaves a session the next arrival resumes
//! cleanly: the completed steps are there, the lock is taken over, and a new
//! turn runs from the state the session was in.

#[path = "../../../tests/src/scripted.rs"]
#[allow(dead_code)]
mod scripted;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use archmax_machine::model::{ModelConfig, OpenAiClient};
use archmax_machine::store::{FsStore, SessionId, SessionStore};
use archmax_machine::{Harness, HarnessOptions, NoEvents, OutcomeKind, SendInput};
use scripted::{Reply, ScriptedServer};
use serde_json::json;

fn runner() -> PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf();
    let bin = dir
        .join("examples")
        .join(format!("turn_runner{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = Command::new(cargo)
            .args(["build", "--example", "turn_runner", "--manifest-path"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .status()
            .expect("cargo build");
        assert!(status.success());
    }
    bin
}

const SPEC: &str = "states:\n  work:\n    triggers: { manual: }\n    transitions: [{ to: done, description: Finished. }]\n  done:\n    instructions: Say so.\n";

#[test]
fn a_killed_turn_resumes_cleanly() {
    let root = std::env::temp_dir().join(format!("kill-mid-turn-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("workflows/w")).expect("dir");
    std::fs::write(root.join("workflows/w/workflow.yaml"), SPEC).expect("spec");
    let server = ScriptedServer::start(vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({ "file_path": "scratchpad/a.txt", "content": "one" }),
        )]),
        Reply::tool_calls(vec![(
            "c2",
            "archmax_advance",
            json!({ "to": "done", "reason": "ok" }),
        )]),
        Reply::text("never seen").after(Duration::from_secs(30)),
    ])
    .expect("server");
    let mut child = Command::new(runner())
        .args([root.to_str().expect("utf8"), "w", "s", &server.url(), "go"])
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn");
    // Wait until the third request is in flight: two steps are committed.
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.requests().len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the runner did not reach the third model call"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("kill -9");
    let _ = child.wait();

    let store = FsStore::new(&root);
    let id = SessionId::parse("s").expect("id");
    let snap = store.load(&id).expect("load").expect("committed steps");
    assert_eq!(
        snap.state["status"], "running",
        "the killed turn never finished"
    );
    assert_eq!(snap.state["workflowState"], "done");
    assert_eq!(
        snap.messages.len(),
        5,
        "user, two assistant steps and their two tool results"
    );
    assert_eq!(
        std::fs::read_to_string(root.join("sessions/s/scratchpad/a.txt")).expect("file"),
        "one"
    );

    let server2 = ScriptedServer::start(vec![Reply::text("Resumed.")]).expect("server");
    let harness = Harness::assemble(HarnessOptions {
        root: root.clone(),
        workflow: "w".into(),
        model: Arc::new(
            OpenAiClient::new(ModelConfig::new(server2.url(), "k", "m")).expect("client"),
        ),
        default_model: "m".into(),
        store: Arc::new(FsStore::new(&root)),
        events: Arc::new(NoEvents),
        tools: Vec::new(),
        essential_tools: Vec::new(),
        mounts: None,
        skills: vec![],
    })
    .expect("harness");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    let out = rt
        .block_on(harness.send(
            "s",
            SendInput {
                message: "still there?".into(),
                ..SendInput::default()
            },
        ))
        .expect("resumes");
    assert_eq!(out.kind, OutcomeKind::Completed);
    assert_eq!(
        out.state, "done",
        "the new turn starts where the killed one stood"
    );
    assert_eq!(out.reply, "Resumed.");
    let sent = &server2.requests()[0]["messages"];
    assert_eq!(
        sent.as_array().map(Vec::len),
        Some(7),
        "system + the 5 committed lines + the new message"
    );
    let _ = std::fs::remove_dir_all(&root);
}
