//! Files `archmax test` and `--replay` read that an attacker (or an accident) made into a
//! FIFO, a link to `/dev/zero` or a link out of their folder: each is refused promptly,
//! naming the file and what it is, and nothing of it reaches the model.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::Value;

use crate::scripted::{Reply, ScriptedServer};
use crate::support::{Ran, Workspace, cli};

const SPEC: &str =
    "states:\n  draft:\n    triggers: { manual: }\n    instructions: Read the notes.\n";

const SEEDED: &str = r#"title: A fixture is seeded
description: The fixture file is read into the session.
workspace:
  scratchpad/notes.md: { from: fixtures/notes.md }
steps:
  - send: read them
"#;

const PLAIN: &str = r#"title: A plain case
description: One message.
steps:
  - send: hi
"#;

/// `args` run on a thread of their own; panics if the command has not returned within
/// 20 s (a FIFO read blocks forever, `/dev/zero` streams forever).
fn promptly(ws: Workspace, server: Option<ScriptedServer>, args: &[&str]) -> (Ran, Workspace) {
    let args: Vec<String> = args.iter().map(|s| (*s).to_string()).collect();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let ran = cli(&ws, server.as_ref(), &argv);
        let _ = tx.send((ran, ws));
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("returned within 20 s (a special file was read as a regular one)")
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("dir")).expect("mkdir");
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo")
        .success();
    assert!(ok);
}

fn link(target: &Path, at: &Path) {
    std::fs::create_dir_all(at.parent().expect("dir")).expect("mkdir");
    std::os::unix::fs::symlink(target, at).expect("link");
}

fn error_of(out: &str, n: usize) -> String {
    let v: Value = serde_json::from_str(out).expect("json");
    v["results"][n]["error"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_fixture_that_is_a_device_a_fifo_or_a_link_out_of_tests_is_refused_unread() {
    let ws = Workspace::new(&[
        ("workflows/notes/workflow.yaml", SPEC),
        ("workflows/notes/tests/a.test.yaml", SEEDED),
        ("outside.md", "SECRET-OUTSIDE-TESTS"),
    ]);
    let tests = ws.root().join("workflows/notes/tests");
    // Three workspaces' worth in one: each case reads the fixture a different attack made.
    let outside = ws.root().join("outside.md");
    for (case, target) in [("b", "zero"), ("c", "fifo"), ("d", "out")] {
        let text = SEEDED.replace("fixtures/notes.md", &format!("fixtures/{target}.md"));
        std::fs::write(tests.join(format!("{case}.test.yaml")), text).expect("case");
    }
    link(Path::new("/dev/zero"), &tests.join("fixtures/zero.md"));
    mkfifo(&tests.join("fixtures/fifo.md"));
    link(&outside, &tests.join("fixtures/out.md"));
    std::fs::write(tests.join("fixtures/notes.md"), "fine notes").expect("fixture");
    let server = ScriptedServer::start(vec![Reply::text("Read.")]).expect("server");
    let (r, ws) = promptly(ws, Some(server), &["test", "notes", "--json"]);
    assert_eq!(r.code, 1, "{}", r.err);
    let at = |name: &str| format!("'workflows/notes/tests/fixtures/{name}.md' cannot be read: it");
    let zero = error_of(&r.out, 1);
    assert!(
        zero.contains(&at("zero")) && zero.contains("is a link that leads out of"),
        "{zero}"
    );
    let fifo = error_of(&r.out, 2);
    assert!(
        fifo.contains(&at("fifo")) && fifo.contains("is a named pipe (FIFO), not a regular file"),
        "{fifo}"
    );
    let out = error_of(&r.out, 3);
    assert!(
        out.contains(&at("out")) && out.contains("is a link that leads out of"),
        "{out}"
    );
    assert!(!r.out.contains("SECRET-OUTSIDE-TESTS"));
    drop(ws);
}

#[test]
fn a_case_file_that_is_a_fifo_or_a_link_out_of_tests_is_refused_unread() {
    let ws = Workspace::new(&[
        ("workflows/notes/workflow.yaml", SPEC),
        ("workflows/notes/tests/a.test.yaml", PLAIN),
        ("elsewhere.test.yaml", PLAIN),
    ]);
    let tests = ws.root().join("workflows/notes/tests");
    mkfifo(&tests.join("b.test.yaml"));
    link(
        &ws.root().join("elsewhere.test.yaml"),
        &tests.join("c.test.yaml"),
    );
    let server = ScriptedServer::start(vec![Reply::text("Hi.")]).expect("server");
    let (r, _ws) = promptly(ws, Some(server), &["test", "notes", "--json"]);
    assert_eq!(r.code, 1, "{}", r.err);
    let fifo = error_of(&r.out, 1);
    assert!(
        fifo.ends_with(
            "b.test.yaml: cannot read the case file: it is a named pipe (FIFO), not a regular file"
        ),
        "{fifo}"
    );
    let out = error_of(&r.out, 2);
    assert!(
        out.contains("c.test.yaml: cannot read the case file: it is a link that leads out of"),
        "{out}"
    );
}

#[test]
fn a_cassette_that_is_a_fifo_or_a_link_to_a_device_is_refused_promptly() {
    for attack in ["fifo", "zero"] {
        let ws = Workspace::new(&[
            ("workflows/notes/workflow.yaml", SPEC),
            ("workflows/notes/tests/a.test.yaml", PLAIN),
        ]);
        let cassette = ws.root().join("workflows/notes/tests/a.cassette.json");
        match attack {
            "fifo" => mkfifo(&cassette),
            _ => link(Path::new("/dev/zero"), &cassette),
        }
        let (r, ws) = promptly(ws, None, &["test", "notes", "--replay", "--json"]);
        assert_eq!(r.code, 1, "{attack}: {}", r.err);
        let err = format!("{}{}", r.out, r.err);
        let why = match attack {
            "fifo" => "is a named pipe (FIFO), not a regular file",
            _ => "is a link that leads out of",
        };
        assert!(
            err.contains("a.cassette.json: cannot be read: it ") && err.contains(why),
            "{attack}: {err}"
        );
        assert!(!err.contains("no cassette"), "{attack}: {err}");
        // The same file given to `run --replay` is refused the same way.
        let (r, _ws) = promptly(
            ws,
            None,
            &[
                "run",
                "notes",
                "hi",
                "--replay",
                "workflows/notes/tests/a.cassette.json",
            ],
        );
        assert_eq!(r.code, 1, "{attack}: {}", r.err);
        assert!(r.err.contains(why), "{attack}: {}", r.err);
    }
}
