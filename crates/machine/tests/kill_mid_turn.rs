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

/// A long workflow: one state, a model-call budget large enough for every round.
const LONG_SPEC: &str = "budget:\n  maxModelCalls: 100000\nstates:\n  work:\n    triggers: { manual: }\n    instructions: Write notes.\n";

/// A small xorshift: the probe's kill moments, reproducible from the printed seed.
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// The reliability probe: `KILL_ROUNDS` times (8 here, 420 at full size), a long turn
/// writing a note per step is killed with SIGKILL at a random moment; after each kill the
/// session must load (no corruption) and hold every step the killed process had committed
/// before its last model call (no lost step); each round's new turn resumes the session the
/// previous one left. Prints the figures; fails on any corrupt load or lost step.
#[test]
fn long_turns_killed_at_random_moments_lose_no_step() {
    let rounds: usize = std::env::var("KILL_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let mut seed = std::env::var("KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| u64::from(std::process::id()) * 2_654_435_761 + 1);
    let first_seed = seed;
    let root = std::env::temp_dir().join(format!("kill-long-turns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("workflows/w")).expect("dir");
    std::fs::write(root.join("workflows/w/workflow.yaml"), LONG_SPEC).expect("spec");
    let steps_per_round = 2_000;
    let replies = (0..rounds * steps_per_round)
        .map(|i| {
            Reply::tool_calls(vec![(
                &format!("c{i}"),
                "write_file",
                json!({ "file_path": format!("scratchpad/n{i}.txt"), "content": format!("note {i}") }),
            )])
        })
        .collect();
    let server = ScriptedServer::start(replies).expect("server");
    let store = FsStore::new(&root);
    let id = SessionId::parse("s").expect("id");
    let (mut lost, mut corrupt, mut steps) = (0usize, 0usize, 0usize);
    for round in 0..rounds {
        let before = server.requests().len();
        let mut child = Command::new(runner())
            .args([root.to_str().expect("utf8"), "w", "s", &server.url(), "go"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        // Let it reach its first model call, then kill it 0-300 ms later.
        let deadline = Instant::now() + Duration::from_secs(20);
        while server.requests().len() == before {
            assert!(Instant::now() < deadline, "round {round}: no model call");
            std::thread::sleep(Duration::from_millis(2));
        }
        std::thread::sleep(Duration::from_millis(next(&mut seed) % 300));
        child.kill().expect("kill -9");
        let _ = child.wait();
        let requests = server.requests();
        // Every step before the last model call was committed before that call.
        let sent = requests
            .last()
            .and_then(|r| r["messages"].as_array().map(Vec::len))
            .unwrap_or(1)
            .saturating_sub(1);
        match store.load(&id) {
            Ok(Some(snap)) => {
                lost += sent.saturating_sub(snap.messages.len());
                steps = snap.messages.len();
            }
            Ok(None) | Err(_) => corrupt += 1,
        }
    }
    println!(
        "kill probe: {rounds} kills (seed {first_seed}), {} model calls, {steps} transcript lines, {corrupt} corrupt loads, {lost} lost steps",
        server.requests().len()
    );
    assert_eq!(
        corrupt, 0,
        "a killed turn left a session that does not load"
    );
    assert_eq!(lost, 0, "a committed step was lost");
    let _ = std::fs::remove_dir_all(&root);
}

/// Concurrent arrivals: `ARRIVALS` processes (10) start a turn of one session at the same
/// moment while the first model call takes a while; exactly one runs it, every other is
/// refused as busy and touches nothing. Prints the figures.
#[test]
fn concurrent_arrivals_on_one_session_have_exactly_one_writer() {
    let arrivals: usize = std::env::var("ARRIVALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let root = std::env::temp_dir().join(format!("arrivals-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(root.join("workflows/w")).expect("dir");
    std::fs::write(root.join("workflows/w/workflow.yaml"), LONG_SPEC).expect("spec");
    let replies = (0..arrivals)
        .map(|_| Reply::text("Written.").after(Duration::from_millis(1_500)))
        .collect();
    let server = ScriptedServer::start(replies).expect("server");
    let children: Vec<_> = (0..arrivals)
        .map(|_| {
            Command::new(runner())
                .args([root.to_str().expect("utf8"), "w", "s", &server.url(), "go"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    let outputs: Vec<_> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait"))
        .collect();
    let ran = outputs.iter().filter(|o| o.status.success()).count();
    let busy = outputs
        .iter()
        .filter(|o| String::from_utf8_lossy(&o.stderr).contains("Busy {"))
        .count();
    println!(
        "arrivals probe: {arrivals} arrivals, {ran} ran the turn, {busy} refused as busy, {} model calls",
        server.requests().len()
    );
    let snap = FsStore::new(&root)
        .load(&SessionId::parse("s").expect("id"))
        .expect("load")
        .expect("committed");
    let _ = std::fs::remove_dir_all(&root);
    assert_eq!(ran, 1, "exactly one arrival runs the turn");
    assert_eq!(busy, arrivals - 1, "every other arrival is refused as busy");
    assert_eq!(server.requests().len(), 1, "one model call in all");
    assert_eq!(snap.messages.len(), 2, "one user message and one answer");
}
