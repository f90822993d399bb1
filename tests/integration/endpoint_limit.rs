//! The process-wide bound on concurrent calls per endpoint: a thousand sessions starting at
//! once against an endpoint bounded at 8 queue for it, none fails, and the server never sees
//! more than 8 calls at once. Real HTTP to a server on 127.0.0.1 that counts what it serves.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use archmax_machine::model::{ModelConfig, OpenAiClient};
use archmax_machine::store::MemStore;
use archmax_machine::{Envelope, EventSink, Harness, HarnessOptions, OutcomeKind, SendInput};
use archmax_tests::TempWorkspace;
use serde_json::{Value, json};

const SPEC: &str = "\
instructions: Answer.
states:
  answer:
    triggers: { manual: }
    instructions: Say hello.
";

/// Calls in progress now, and the most there ever were.
#[derive(Default)]
struct Load {
    now: AtomicUsize,
    most: AtomicUsize,
    served: AtomicUsize,
}

/// Answers every chat completion with "Hello." after `hold`, on a thread per connection.
fn counting_server(hold: Duration) -> (String, Arc<Load>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    let load = Arc::new(Load::default());
    let shared = Arc::clone(&load);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let load = Arc::clone(&shared);
            std::thread::spawn(move || serve(stream, &load, hold));
        }
    });
    (url, load)
}

fn serve(stream: TcpStream, load: &Load, hold: Duration) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
    let mut out = stream;
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        // The request line, then headers up to the blank line.
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = v.trim().parse().unwrap_or(0);
            }
            if line == "\r\n" {
                break;
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let now = load.now.fetch_add(1, Ordering::SeqCst) + 1;
        load.most.fetch_max(now, Ordering::SeqCst);
        std::thread::sleep(hold);
        load.now.fetch_sub(1, Ordering::SeqCst);
        load.served.fetch_add(1, Ordering::SeqCst);
        let answer = json!({
            "id": "x", "object": "chat.completion", "model": "m",
            "choices": [{ "index": 0, "finish_reason": "stop", "message": { "role": "assistant", "content": "Hello." } }]
        })
        .to_string();
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            answer.len()
        );
        if out.write_all(head.as_bytes()).is_err() || out.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

#[derive(Default)]
struct Queued(Mutex<Vec<Value>>);

impl EventSink for Queued {
    fn emit(&self, e: &Envelope) {
        let Ok(v) = serde_json::to_value(e) else {
            return;
        };
        if v["type"] == "model-queued"
            && let Ok(mut all) = self.0.lock()
        {
            all.push(v);
        }
    }
}

#[test]
fn a_thousand_sessions_queue_for_an_endpoint_bounded_at_eight_and_none_fails() {
    let ws = TempWorkspace::new(&[("workflows/hello/workflow.yaml", SPEC)]);
    let (url, load) = counting_server(Duration::from_millis(2));
    let mut config = ModelConfig::new(url, "k", "m");
    config.streaming = false;
    config.max_concurrent_calls = 8;
    let events = Arc::new(Queued::default());
    let h = Arc::new(
        Harness::assemble(HarnessOptions {
            root: ws.root().to_path_buf(),
            workflow: "hello".to_string(),
            model: Arc::new(OpenAiClient::new(config).expect("client")),
            default_model: "m".to_string(),
            store: Arc::new(MemStore::new()),
            events: events.clone(),
            tools: Vec::new(),
            essential_tools: Vec::new(),
            mounts: None,
            skills: Vec::new(),
        })
        .expect("harness"),
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let outcomes = rt.block_on(async {
        let turns = (0..1000).map(|i| {
            let h = Arc::clone(&h);
            tokio::spawn(async move {
                h.send(
                    &format!("s-{i}"),
                    SendInput {
                        message: "Hi".into(),
                        ..SendInput::default()
                    },
                )
                .await
            })
        });
        let mut all = Vec::new();
        for turn in turns.collect::<Vec<_>>() {
            all.push(turn.await);
        }
        all
    });
    let completed = outcomes
        .into_iter()
        .filter(|o| matches!(o, Ok(Ok(out)) if out.kind == OutcomeKind::Completed))
        .count();
    assert_eq!(completed, 1000, "every session completed");
    assert_eq!(load.served.load(Ordering::SeqCst), 1000);
    let most = load.most.load(Ordering::SeqCst);
    assert!(most <= 8, "the server saw {most} calls at once");
    let queued = events.0.lock().map(|q| q.clone()).unwrap_or_default();
    assert!(!queued.is_empty(), "the waits are events");
    assert!(
        queued
            .iter()
            .all(|e| e["limit"] == 8 && e["waitedMs"].as_u64().is_some() && e["state"] == "answer"),
        "{:?}",
        queued.first()
    );
    let figures = archmax_machine::model::limit::snapshot();
    let this = figures
        .iter()
        .find(|f| f.url.starts_with("http://127.0.0.1") && f.limit == 8 && f.waited_calls > 0)
        .expect("the endpoint is listed");
    assert_eq!((this.in_flight, this.waiting), (0, 0), "{this:?}");
}
