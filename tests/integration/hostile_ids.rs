//! Hostile session ids: every spelling that once put a session's folder at the store root,
//! inside another session's folder or beside it under another name, over the filesystem and
//! the memory store. An id no storage keeps apart is refused before anything is made; every
//! other id is a session of its own, whose agent cannot read, list or change another's
//! records or files, whatever paths it tries.

use std::path::Path;
use std::sync::Arc;

use archmax_machine::store::{FsStore, MemStore, SessionStore};
use archmax_machine::{OutcomeKind, RunError};
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, rt, tool_results};
use serde_json::json;

const WORKFLOW: &str = "states:\n  work:\n    triggers: { manual: }\n";
const SECRET: &str = "VICTIM-SECRET";

/// Ids refused, with the reason's opening words.
const REFUSED: [(&str, &str); 11] = [
    (".", "it must not be made of dots alone"),
    ("...", "it must not be made of dots alone"),
    ("/.", "it must not be made of dots alone"),
    ("a\r\nb", "it must not contain control"),
    ("x\u{202E}y", "it must not contain control"),
    (" ", "it must not be empty"),
    ("victim/../victim", "it must stay within the session zone"),
    ("..", "it must stay within the session zone"),
    ("checkpoints", "'checkpoints' is reserved"),
    ("_specs/x", "'_specs' is reserved"),
    (
        "victim~work:x:1",
        "it names a sub-workflow session of 'victim' that its caller has not started",
    ),
];

/// Ids accepted as sessions of their own (each once reached the victim's folder or nested
/// one session in another's).
const OWN: [&str; 13] = [
    "victim/",
    "./victim",
    "victim/.",
    "victim/scratchpad",
    "victim/checkpoints",
    "victim/sub",
    "./",
    "a/b",
    ".%2f",
    "~",
    "CON",
    "a\\b",
    "Victim",
];

fn send(h: &archmax_machine::Harness, id: &str) -> Result<archmax_machine::Outcome, RunError> {
    rt().block_on(h.send(
        id,
        archmax_machine::SendInput {
            message: "go".into(),
            ..Default::default()
        },
    ))
}

/// What the attacker's agent tries: read, list, write and edit the victim's records and files
/// by every spelling its own session's folder might put them at.
fn attack() -> Reply {
    let mut calls = Vec::new();
    let reads = [
        "victim/scratchpad/secret.md",
        "../victim/scratchpad/secret.md",
        "../../victim/scratchpad/secret.md",
        "scratchpad/secret.md",
        "secret.md",
        "../scratchpad/secret.md",
        "victim/checkpoints/state.json",
        "../victim/checkpoints/state.json",
        "checkpoints/state.json",
        "../checkpoints/state.json",
    ];
    for (n, path) in reads.iter().enumerate() {
        calls.push((format!("r{n}"), "read_file", json!({ "file_path": path })));
    }
    for (n, path) in [".", "..", "victim", "../victim", "scratchpad", "../.."]
        .iter()
        .enumerate()
    {
        calls.push((format!("l{n}"), "ls", json!({ "path": path })));
    }
    for (n, path) in [
        "victim/checkpoints/PWN.md",
        "../victim/checkpoints/PWN.md",
        "../checkpoints/PWN.md",
        "victim/scratchpad/PWN.md",
        "../victim/scratchpad/PWN.md",
        "../scratchpad/PWN.md",
    ]
    .iter()
    .enumerate()
    {
        calls.push((
            format!("w{n}"),
            "write_file",
            json!({ "file_path": path, "content": "pwned" }),
        ));
    }
    for (n, path) in [
        "victim/checkpoints/state.json",
        "../victim/checkpoints/state.json",
        "checkpoints/state.json",
    ]
    .iter()
    .enumerate()
    {
        calls.push((
            format!("e{n}"),
            "edit_file",
            json!({ "file_path": path, "old_string": "completed", "new_string": "running" }),
        ));
    }
    Reply::tool_calls(
        calls
            .iter()
            .map(|(id, tool, args)| (id.as_str(), *tool, args.clone()))
            .collect(),
    )
}

/// Every file under `dir` with its bytes, for before/after comparison.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = std::fs::read(&p).unwrap_or_default();
                out.push((p.display().to_string(), bytes));
            }
        }
    }
    out.sort();
    out
}

fn probe(store_kind: &str) {
    let ws = TempWorkspace::new(&[("workflows/w/workflow.yaml", WORKFLOW)]);
    let store: Arc<dyn SessionStore> = match store_kind {
        "filesystem" => Arc::new(FsStore::new(ws.root())),
        _ => Arc::new(MemStore::new()),
    };
    let mut script = vec![
        Reply::tool_calls(vec![(
            "v1",
            "write_file",
            json!({ "file_path": "scratchpad/secret.md", "content": SECRET }),
        )]),
        Reply::text("Stored."),
    ];
    for _ in OWN {
        script.push(attack());
        script.push(Reply::text("Done."));
    }
    let server = InProcessModel::new(script);
    let store_for = Arc::clone(&store);
    let h = archmax_tests::harness(ws.root(), "w", &server, "m", move |o| {
        o.store = store_for;
    });
    assert_eq!(
        send(&h, "victim").expect("victim").kind,
        OutcomeKind::Completed
    );
    let victim = archmax_machine::store::SessionId::parse("victim").expect("id");
    let victim_state = store.load_state(&victim).expect("state");
    let victim_turn = store.load(&victim).expect("load");
    let on_disk = snapshot(&ws.root().join("sessions"));

    let mut refused = 0;
    for (id, reason) in REFUSED {
        let Err(err) = send(&h, id) else {
            panic!("{id:?} was accepted")
        };
        assert_eq!(err.code(), "SessionStoreIdError", "{id:?}");
        assert!(err.to_string().contains(reason), "{id:?}: {err}");
        refused += 1;
    }
    assert_eq!(server.requests().len(), 2, "a refused id asks no model");
    assert_eq!(
        snapshot(&ws.root().join("sessions")),
        on_disk,
        "a refused id makes nothing"
    );

    let mut calls = 0;
    let mut leaks = Vec::new();
    for (n, id) in OWN.iter().enumerate() {
        let out = send(&h, id).unwrap_or_else(|e| panic!("{id:?}: {e}"));
        assert_eq!(out.kind, OutcomeKind::Completed, "{id:?}");
        let request = &server.requests()[3 + 2 * n];
        for result in tool_results(request) {
            calls += 1;
            if result.contains(SECRET) || result.contains("\"completed\"") {
                leaks.push(format!("{id:?}: {result}"));
            }
        }
    }
    println!(
        "hostile ids ({store_kind}): {refused} refused, {} own sessions, {calls} attack calls, {} leaks",
        OWN.len(),
        leaks.len()
    );
    assert!(leaks.is_empty(), "{leaks:#?}");
    assert_eq!(store.load_state(&victim).expect("state"), victim_state);
    assert_eq!(store.load(&victim).expect("load"), victim_turn);
    let files = store.session_files(&victim).expect("files");
    assert_eq!(
        files
            .backend
            .read(&files.dir.join("scratchpad/secret.md"))
            .expect("secret"),
        SECRET.as_bytes()
    );
    for pwn in ["checkpoints/PWN.md", "scratchpad/PWN.md"] {
        assert!(files.backend.read(&files.dir.join(pwn)).is_err(), "{pwn}");
    }
    // Every accepted id is listed as itself, and the victim once.
    let listed = store.list().expect("list");
    for id in OWN.iter().chain(["victim"].iter()) {
        let canonical = id.trim_start_matches('/');
        assert_eq!(
            listed.iter().filter(|l| *l == canonical).count(),
            1,
            "{id:?} in {listed:?}"
        );
    }
}

#[test]
fn hostile_ids_over_the_filesystem_store() {
    probe("filesystem");
}

#[test]
fn hostile_ids_over_the_memory_store() {
    probe("memory");
}

#[test]
fn an_id_read_from_a_triggers_session_path_is_checked_before_any_turn() {
    let ws = TempWorkspace::new(&[(
        "workflows/w/workflow.yaml",
        "states:\n  work:\n    triggers:\n      ticket: { session: ticket.id }\n",
    )]);
    let server = InProcessModel::new(vec![]);
    let h = archmax_tests::harness(ws.root(), "w", &server, "m", |_| {});
    for id in [".", "a\nb", "x\u{202e}y"] {
        let vars = json!({ "ticket": { "id": id } });
        let err = h
            .resolve_session(None, "ticket", vars.as_object().expect("object"), None)
            .expect_err(id);
        assert_eq!(err.code(), "SessionStoreIdError", "{id:?}: {err}");
    }
    let vars = json!({ "ticket": { "id": "T-1/2" } });
    let (id, _) = h
        .resolve_session(None, "ticket", vars.as_object().expect("object"), None)
        .expect("a usable id");
    assert_eq!(id, "T-1/2");
    assert_eq!(server.requests().len(), 0);
}
