//! Cassettes over the real harness: the example's refund flow recorded against the scripted
//! server, then replayed with no server at all.

use std::path::Path;
use std::sync::{Arc, Mutex};

use archmax_cases::cassette::{Cassette, Recorder, Replayer};
use archmax_machine::model::{Model, ModelError, OpenAiClient};
use archmax_machine::{Envelope, EventSink, Harness, NoEvents, Outcome};
use archmax_tests::scripted::{Reply, ScriptedServer};
use archmax_tests::{TempWorkspace, example_root};
use serde_json::Value;

#[derive(Default)]
struct Collect(Mutex<Vec<Envelope>>);

impl EventSink for Collect {
    fn emit(&self, event: &Envelope) {
        self.0.lock().expect("lock").push(event.clone());
    }
}

/// The example's refund flow (a veto, a correction, a close), the reply streamed in pieces.
fn refund_script() -> Vec<Reply> {
    archmax_tests::refund_flow(Reply::stream_text(&[
        "We cannot ",
        "refund a cancelled ",
        "order.",
    ]))
}

fn harness(root: &Path, model: Arc<dyn Model>, events: Arc<dyn EventSink>) -> Harness {
    // The URL is never used: `model` replaces the client.
    archmax_tests::harness(root, "order-lookup", "http://127.0.0.1:9", "m", |o| {
        o.model = model;
        o.events = events;
    })
}

fn client(url: &str) -> OpenAiClient {
    archmax_tests::client(url, "m")
}

const ASK: &str = "I want my money back for KK-2046.";

/// Runs the refund flow on `model` in a fresh copy of the example; its outcome and events.
fn run(model: Arc<dyn Model>, edit: impl FnOnce(&Path)) -> (Outcome, Vec<Envelope>) {
    let ws = TempWorkspace::copy_of(&example_root());
    edit(ws.root());
    let events = Arc::new(Collect::default());
    let h = harness(ws.root(), model, events.clone());
    let out = archmax_tests::send(&h, "refund-1", ASK);
    let events = events.0.lock().expect("lock").clone();
    (out, events)
}

/// An event as compared across runs: without its time, and with the time in message ids
/// (`msg_<n>_<ms>`) and durations left out.
fn comparable(e: &Envelope) -> Value {
    let mut v = serde_json::to_value(e).expect("event json");
    fn scrub(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.remove("ts");
                m.remove("durationMs");
                for (_, x) in m.iter_mut() {
                    scrub(x);
                }
            }
            Value::Array(a) => a.iter_mut().for_each(scrub),
            Value::String(s) if s.starts_with("msg_") => {
                if let Some((head, _)) = s.rsplit_once('_') {
                    *s = head.to_string();
                }
            }
            _ => {}
        }
    }
    scrub(&mut v);
    v
}

fn comparable_outcome(o: &Outcome) -> Value {
    let mut v = serde_json::to_value(o).expect("outcome json");
    // The audit trail stamps its steps with the time.
    if let Some(steps) = v.get_mut("auditTrail").and_then(Value::as_array_mut) {
        for step in steps {
            if let Some(m) = step.as_object_mut() {
                m.retain(|k, _| !k.ends_with("At") && k != "ts");
            }
        }
    }
    v
}

#[test]
fn a_recorded_refund_flow_replays_offline_with_the_same_outcome_and_events() {
    let dir = TempWorkspace::new(&[]);
    let file = dir.root().join("tests/refund.cassette.json");
    let (recorded, recorded_events) = {
        let server = ScriptedServer::start(refund_script()).expect("server");
        let recorder =
            Arc::new(Recorder::to_file(client(&server.url()), &file).with_default_model("m"));
        let ran = run(recorder.clone(), |_| {});
        assert_eq!(server.remaining(), 0, "every scripted answer was asked for");
        assert_eq!(recorder.cassette().exchanges().len(), 5);
        ran
    };
    assert_eq!(recorded.state, "closed");
    assert_eq!(recorded.reply, "We cannot refund a cancelled order.");

    // No server now: the replay is answered from the file alone.
    let replayer = Arc::new(Replayer::load(&file).expect("cassette"));
    let (replayed, replayed_events) = run(replayer.clone(), |_| {});
    assert_eq!(
        replayer.unused(),
        Vec::<usize>::new(),
        "every exchange answered"
    );
    assert_eq!(comparable_outcome(&replayed), comparable_outcome(&recorded));
    let a: Vec<Value> = recorded_events.iter().map(comparable).collect();
    let b: Vec<Value> = replayed_events.iter().map(comparable).collect();
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert_eq!(x, y, "event {i}");
    }
    let deltas = b.iter().filter(|e| e["type"] == "agent-text-delta").count();
    assert_eq!(
        deltas, 3,
        "the last answer streams in its three recorded pieces"
    );

    // The file is small: the long system prompt is written once per state it changed in.
    let text = std::fs::read_to_string(&file).expect("file");
    let cassette = Cassette::load(&file).expect("cassette");
    let raw: usize = cassette
        .exchanges()
        .iter()
        .map(|e| {
            e.request.to_string().len() + serde_json::to_string(&e.response).map_or(0, |r| r.len())
        })
        .sum();
    println!(
        "refund flow: raw exchanges {raw} bytes, cassette {} bytes",
        text.len()
    );
    assert!(
        text.len() * 2 < raw,
        "cassette {} bytes vs raw {raw}",
        text.len()
    );
}

#[test]
fn a_replay_of_an_edited_workspace_names_the_request_and_the_field() {
    let dir = TempWorkspace::new(&[]);
    let file = dir.root().join("refund.cassette.json");
    {
        let server = ScriptedServer::start(refund_script()).expect("server");
        let recorder = Arc::new(Recorder::to_file(client(&server.url()), &file));
        run(recorder, |_| {});
    }
    let replayer = Arc::new(Replayer::load(&file).expect("cassette"));
    let (out, _) = run(replayer.clone(), |root| {
        let spec = root.join("workflows/order-lookup/workflow.yaml");
        let text = std::fs::read_to_string(&spec).expect("spec");
        let edited = text.replacen(
            "You handle one customer conversation",
            "You tersely handle one customer conversation",
            1,
        );
        assert_ne!(edited, text);
        std::fs::write(&spec, edited).expect("edit");
    });
    assert_eq!(out.status, "failed", "{out:?}");
    let exit = out.exit.clone().unwrap_or(Value::Null);
    let reason = exit["reason"].as_str().unwrap_or_default().to_string();
    assert!(
        reason.contains("is not in the cassette") && reason.contains("refund.cassette.json"),
        "{exit}"
    );
    assert!(
        reason.contains("request 1 (state 'classify', agent, session 'refund-1') was not recorded; the nearest recorded request is exchange 1 (state 'classify', agent, session 'refund-1'): messages[0].content differs: recorded"),
        "{reason}"
    );
    assert!(reason.contains("You tersely handle"), "{reason}");
    // A model that refuses is not a replay: the error is its own kind.
    let err = ModelError::Unrecorded {
        cassette: "c".into(),
        model: "m".into(),
        message: "x".into(),
    };
    assert!(!err.is_retryable());
}

#[test]
fn a_failed_call_is_recorded_and_replays_as_the_same_failure() {
    let server = ScriptedServer::start(vec![Reply::error(400, "bad request")]).expect("server");
    let recorder = Arc::new(Recorder::new(client(&server.url())));
    let ws = TempWorkspace::copy_of(&example_root());
    let h = harness(ws.root(), recorder.clone(), Arc::new(NoEvents));
    let failed = archmax_tests::send(&h, "r-1", ASK);
    assert_eq!(failed.status, "failed");
    let cassette = recorder.cassette();
    assert_eq!(cassette.exchanges().len(), 1);
    let error = cassette.exchanges()[0].error.clone().unwrap_or_default();
    assert!(error.contains("failed with HTTP 400"), "{error}");
    let text = cassette.to_json().expect("encodes");
    let replayer = Arc::new(Replayer::new(
        Cassette::from_json(&text, "t").expect("decodes"),
        "t",
    ));
    let ws = TempWorkspace::copy_of(&example_root());
    let h = harness(ws.root(), replayer, Arc::new(NoEvents));
    let replayed = archmax_tests::send(&h, "r-1", ASK);
    assert_eq!(comparable_outcome(&replayed), comparable_outcome(&failed));
    assert_eq!(replayed.exit, failed.exit);
}
