//! `--record` and `--replay`: a run recorded against the scripted server, then replayed
//! with no endpoint variables at all.

use serde_json::json;

use crate::parks::workspace;
use crate::scripted::{Reply, ScriptedServer};
use crate::support::{Workspace, cli};

fn script() -> Vec<Reply> {
    vec![
        Reply::tool_calls(vec![(
            "c1",
            "write_file",
            json!({ "file_path": "scratchpad/refund.json", "content": "{\"amount\": 12}" }),
        )]),
        Reply::tool_calls(vec![(
            "c2",
            "archmax_advance",
            json!({ "to": "review", "reason": "drafted", "evidence": ["scratchpad/refund.json"] }),
        )]),
        Reply::stream_text(&["I have sent ", "your refund to a reviewer."]),
    ]
}

fn record(ws: &Workspace, file: &str) -> crate::support::Ran {
    let server = ScriptedServer::start(script()).expect("server");
    let ran = cli(
        ws,
        Some(&server),
        &[
            "run",
            "refunds",
            "Refund order 7",
            "--session",
            "r-1",
            "--record",
            file,
            "--json",
        ],
    );
    assert_eq!(server.remaining(), 0);
    ran
}

#[test]
fn a_recorded_run_replays_with_no_endpoint() {
    let ws = workspace();
    let recorded = record(&ws, "refund.cassette.json");
    assert_eq!(recorded.code, 0, "{}", recorded.err);
    let file = ws.root().join("refund.cassette.json");
    assert!(file.is_file());
    assert!(
        recorded
            .err
            .contains("  model      scripted-model (recording to refund.cassette.json)\n"),
        "{}",
        recorded.err
    );

    // A fresh workspace, no server, no ARCHMAX_* variables.
    let again = workspace();
    std::fs::copy(&file, again.root().join("refund.cassette.json")).expect("copy");
    let replayed = cli(
        &again,
        None,
        &[
            "run",
            "refunds",
            "Refund order 7",
            "--session",
            "r-1",
            "--replay",
            "refund.cassette.json",
            "--json",
        ],
    );
    assert_eq!(replayed.code, 0, "{}", replayed.err);
    assert!(
        replayed
            .err
            .contains("  model      replayed from refund.cassette.json\n"),
        "{}",
        replayed.err
    );
    // The Outcome but for the times it carries (`createdAt`, …).
    fn untimed(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| !k.ends_with("At") && k != "ts");
                m.values_mut().for_each(untimed);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(untimed),
            _ => {}
        }
    }
    let outcome = |text: &str| {
        let mut v: serde_json::Value = serde_json::from_str(text).expect("outcome json");
        untimed(&mut v);
        v
    };
    assert_eq!(outcome(&replayed.out), outcome(&recorded.out));
    assert_eq!(outcome(&replayed.out)["state"], json!("review"));
    let written = std::fs::read_to_string(again.root().join("sessions/r-1/scratchpad/refund.json"))
        .expect("the replayed turn wrote the file");
    assert_eq!(written, "{\"amount\": 12}");
    assert!(!replayed.err.contains("[cassette]"), "{}", replayed.err);
    // The flow on stderr reads the same, but for the header.
    let flow = |err: &str| {
        err.split_once("\n\n")
            .map(|(_, rest)| rest.to_string())
            .unwrap_or_default()
    };
    assert_eq!(flow(&replayed.err), flow(&recorded.err));
}

#[test]
fn a_replay_that_asks_something_new_names_the_request_and_the_field() {
    let ws = workspace();
    assert_eq!(record(&ws, "tests/refund.cassette.json").code, 0);
    let replayed = cli(
        &ws,
        None,
        &[
            "run",
            "refunds",
            "Refund order 8",
            "--session",
            "r-2",
            "--replay",
            "tests/refund.cassette.json",
        ],
    );
    assert_eq!(replayed.code, 1, "{}", replayed.err);
    assert!(
        replayed.err.contains("is not in the cassette ")
            && replayed.err.contains("request 1 (state 'draft', agent, session 'r-2') was not recorded; the nearest recorded request is exchange 1 (state 'draft', agent, session 'r-1'): "),
        "{}",
        replayed.err
    );
}

#[test]
fn a_replay_that_leaves_recorded_exchanges_unasked_says_which() {
    let ws = workspace();
    assert_eq!(record(&ws, "refund.cassette.json").code, 0);
    // The recording twice over: the run asks for the first three, the other three go unasked.
    let file = ws.root().join("refund.cassette.json");
    let mut tape: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).expect("read")).expect("json");
    let mut again_recorded = tape["exchanges"].as_array().cloned().unwrap_or_default();
    for e in &mut again_recorded {
        e["n"] = json!(e["n"].as_u64().unwrap_or(0) + 3);
        if let Some(base) = e["request"]["base"].as_u64() {
            e["request"]["base"] = json!(base + 3);
        }
    }
    if let Some(list) = tape["exchanges"].as_array_mut() {
        list.extend(again_recorded);
    }
    std::fs::write(&file, tape.to_string()).expect("write");
    let again = workspace();
    std::fs::copy(&file, again.root().join("refund.cassette.json")).expect("copy");
    let replayed = cli(
        &again,
        None,
        &[
            "run",
            "refunds",
            "Refund order 7",
            "--session",
            "r-1",
            "--replay",
            "refund.cassette.json",
        ],
    );
    assert_eq!(replayed.code, 0, "{}", replayed.err);
    assert!(
        replayed.err.contains("[cassette] refund.cassette.json holds 3 exchanges this run did not ask for (exchanges 4, 5, 6)\n"),
        "{}",
        replayed.err
    );
}

#[test]
fn record_and_replay_together_or_a_missing_cassette_are_refused() {
    let ws = workspace();
    let both = cli(
        &ws,
        None,
        &[
            "run", "refunds", "hi", "--record", "a.json", "--replay", "b.json",
        ],
    );
    assert_eq!(both.code, 2);
    assert!(
        both.err.ends_with(
            "Error: --record and --replay cannot be used together (try: archmax run --help)\n"
        ),
        "{}",
        both.err
    );
    let missing = cli(
        &ws,
        None,
        &["run", "refunds", "hi", "--replay", "none.cassette.json"],
    );
    assert_eq!(missing.code, 1);
    assert!(
        missing.err.contains(&format!(
            "Error: cassette {}: cannot be read:",
            ws.root().join("none.cassette.json").display()
        )),
        "{}",
        missing.err
    );
}
