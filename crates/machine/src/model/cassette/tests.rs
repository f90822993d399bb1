use std::sync::Mutex;

use crate::clock::clock_line;
use crate::model::{
    AssistantMessage, ChatMessage, ChatRequest, ChatResponse, Model, ModelError, ModelFuture,
    TextSink, ToolCall, ToolDef, Usage,
};
use serde_json::json;

use super::*;

/// Answers from a script, in order; streams each answer's text in the given pieces.
struct Scripted(Mutex<Vec<(ChatResponse, Vec<&'static str>)>>);

impl Scripted {
    fn new(answers: Vec<(ChatResponse, Vec<&'static str>)>) -> Scripted {
        Scripted(Mutex::new(answers.into_iter().rev().collect()))
    }
    fn next(&self) -> (ChatResponse, Vec<&'static str>) {
        self.0
            .lock()
            .expect("lock")
            .pop()
            .expect("the script has an answer left")
    }
}

impl Model for Scripted {
    fn complete<'a>(&'a self, _req: &'a ChatRequest) -> ModelFuture<'a> {
        let (answer, _) = self.next();
        Box::pin(async move { Ok(answer) })
    }
    fn stream<'a>(&'a self, _req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        let (answer, pieces) = self.next();
        for piece in pieces {
            text.text(piece);
        }
        Box::pin(async move { Ok(answer) })
    }
}

#[derive(Default)]
struct Shown(Mutex<Vec<String>>);

impl TextSink for Shown {
    fn text(&self, delta: &str) {
        self.0.lock().expect("lock").push(delta.to_string());
    }
}

fn text(content: &str) -> ChatResponse {
    ChatResponse {
        message: AssistantMessage {
            content: Some(content.to_string()),
            tool_calls: Vec::new(),
        },
        usage: Some(Usage {
            input_tokens: 100,
            output_tokens: 7,
            ..Usage::default()
        }),
        model: Some("m-1".to_string()),
        finish_reason: Some("stop".to_string()),
    }
}

fn call(id: &str, name: &str, args: serde_json::Value) -> ChatResponse {
    ChatResponse {
        message: AssistantMessage {
            content: None,
            tool_calls: vec![ToolCall::new(id, name, args.to_string())],
        },
        finish_reason: Some("tool_calls".to_string()),
        ..ChatResponse::default()
    }
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
}

/// A long system prompt (with a clock line, as the harness renders one) and tools.
fn system(state: &str, ms: u64) -> ChatMessage {
    let rules = "Refunds above the limit go to a person. ".repeat(100);
    ChatMessage::system(format!(
        "# Support\n\n{rules}\n\n{}\n\n## State: {state}",
        clock_line(ms)
    ))
}

fn tools() -> Vec<ToolDef> {
    (0..6)
        .map(|i| {
            ToolDef::new(
                format!("tool_{i}"),
                "Looks something up in the order system. ".repeat(5),
                json!({ "type": "object", "properties": { "order_id": { "type": "string", "description": "The order." } } }),
            )
        })
        .collect()
}

fn request(session: &str, state: &str, messages: Vec<ChatMessage>) -> ChatRequest {
    let mut req = ChatRequest::new("m", messages).with_tools(tools());
    req.session = Some(session.to_string());
    req.state = Some(state.to_string());
    req
}

/// A conversation of `n` calls growing by a tool call and its result each time.
fn conversation(session: &str, n: usize, ms: u64) -> Vec<ChatRequest> {
    let mut messages = vec![
        system("triage", ms),
        ChatMessage::user("Refund KK-2046, please."),
    ];
    let mut out = Vec::new();
    for i in 0..n {
        out.push(request(session, "triage", messages.clone()));
        let id = format!("c{i}");
        messages.push(ChatMessage::assistant(
            None,
            vec![ToolCall::new(&id, "tool_1", r#"{"order_id":"KK-2046"}"#)],
        ));
        messages.push(ChatMessage::tool(&id, format!("order KK-2046: line {i}")));
    }
    out
}

fn answers(n: usize) -> Vec<(ChatResponse, Vec<&'static str>)> {
    (0..n)
        .map(|i| {
            if i + 1 == n {
                (text("Hello there"), vec!["Hel", "lo th", "ere"])
            } else {
                (
                    call(&format!("c{i}"), "tool_1", json!({ "order_id": "KK-2046" })),
                    vec![],
                )
            }
        })
        .collect()
}

fn record(requests: &[ChatRequest]) -> Cassette {
    let recorder = Recorder::new(Scripted::new(answers(requests.len()))).with_default_model("m");
    rt().block_on(async {
        for req in requests {
            recorder
                .stream(req, &Shown::default())
                .await
                .expect("recorded");
        }
    });
    recorder.cassette()
}

#[test]
fn a_cassette_reads_back_as_it_was_recorded() {
    let requests = conversation("s1", 4, 1_772_357_999_000);
    let cassette = record(&requests);
    assert_eq!(cassette.exchanges().len(), 4);
    let text = cassette.to_json().expect("encodes");
    let back = Cassette::from_json(&text, "t.cassette.json").expect("decodes");
    assert_eq!(back, cassette);
    assert_eq!(back.default_model.as_deref(), Some("m"));
    let last = &back.exchanges()[3];
    assert_eq!(last.pieces, Some(vec![3, 5, 3]));
    assert_eq!(last.response.usage.map(|u| u.input_tokens), Some(100));
    assert_eq!(last.state.as_deref(), Some("triage"));
    assert_eq!(last.digest(), request_digest(&requests[3]));
}

#[test]
fn a_cassette_is_far_smaller_than_its_raw_exchanges() {
    let requests = conversation("s1", 10, 1_772_357_999_000);
    let cassette = record(&requests);
    let text = cassette.to_json().expect("encodes");
    let raw: usize = cassette
        .exchanges()
        .iter()
        .map(|e| {
            serde_json::to_string_pretty(&e.request).map_or(0, |r| r.len())
                + serde_json::to_string_pretty(&e.response).map_or(0, |r| r.len())
        })
        .sum();
    let ratio = raw as f64 / text.len() as f64;
    println!(
        "raw exchanges {raw} bytes, cassette {} bytes: {ratio:.1}x smaller",
        text.len()
    );
    std::fs::write(std::env::temp_dir().join("ratio.cassette.json"), &text).ok();
    assert!(
        ratio > 6.0,
        "raw {raw} bytes vs cassette {} bytes",
        text.len()
    );
    // The system prompt and the tools are written once.
    assert_eq!(text.matches("# Support").count(), 1);
    assert_eq!(text.matches("\"tool_3\"").count(), 1);
}

#[test]
fn a_changed_system_prompt_is_stored_as_a_replaced_first_message() {
    let mut requests = conversation("s1", 3, 1_772_357_999_000);
    let mut moved = requests[2].clone();
    moved.messages[0] = system("refund-request", 1_772_357_999_000);
    requests.push(moved);
    let cassette = record(&requests);
    let file: serde_json::Value =
        serde_json::from_str(&cassette.to_json().expect("encodes")).expect("json");
    let last = &file["exchanges"][3]["request"];
    assert_eq!(last["base"], json!(3));
    assert_eq!(last["keep"], json!(6));
    assert_eq!(last["firstEdit"]["insert"], json!("refund-request"));
    assert_eq!(last["firstEdit"]["tail"], json!(0));
    assert_eq!(last["messages"], json!([]));
    let back = Cassette::from_json(&cassette.to_json().expect("encodes"), "t").expect("decodes");
    assert_eq!(back, cassette);
}

#[test]
fn replay_answers_by_digest_whatever_the_order_of_conversations() {
    let a = conversation("a", 2, 1_772_357_999_000);
    let b = conversation("b", 2, 1_772_357_999_000);
    let b: Vec<ChatRequest> = b
        .into_iter()
        .map(|mut r| {
            r.messages[1] = ChatMessage::user("Where is KK-2047?");
            r
        })
        .collect();
    let recorded = [a[0].clone(), b[0].clone(), a[1].clone(), b[1].clone()];
    let cassette = record(&recorded);
    let replayer = Replayer::new(cassette.clone(), "t.cassette.json");
    let shown = Shown::default();
    rt().block_on(async {
        for req in [&b[0], &b[1], &a[0], &a[1]] {
            let i = recorded
                .iter()
                .position(|r| r.session == req.session && r.messages == req.messages)
                .expect("recorded");
            let got = replayer.stream(req, &shown).await.expect("replayed");
            assert_eq!(got, cassette.exchanges()[i].response);
        }
    });
    assert_eq!(replayer.unused(), Vec::<usize>::new());
    // b[1] was the last recorded: its text streams in its three recorded pieces.
    assert_eq!(*shown.0.lock().expect("lock"), vec!["Hel", "lo th", "ere"]);
}

#[test]
fn replay_ignores_the_prompt_clock() {
    let cassette = record(&conversation("s1", 2, 1_772_357_999_000));
    let later = conversation("s1", 2, 1_772_390_000_000);
    let replayer = Replayer::new(cassette, "t");
    rt().block_on(async {
        for req in &later {
            replayer
                .complete(req)
                .await
                .expect("the clock does not count");
        }
    });
}

#[test]
fn note_ids_are_kept_without_their_time() {
    let at = |ms: u64| {
        let id = format!("note_3_{ms}");
        request(
            "s1",
            "triage",
            vec![
                ChatMessage::system("S"),
                ChatMessage::assistant(None, vec![ToolCall::new(&id, "archmax_note", "{}")]),
                ChatMessage::tool(&id, "noted"),
                ChatMessage::assistant(None, vec![ToolCall::new("note_x_1", "t", "{}")]),
                ChatMessage::user(format!(
                    "Grade this: [{{\"id\": \"{id}\"}}] note_ note_4_ x"
                )),
            ],
        )
    };
    assert_eq!(request_digest(&at(1)), request_digest(&at(2)));
    let json = request_json(&at(1));
    assert_eq!(json["messages"][1]["tool_calls"][0]["id"], json!("note_3"));
    assert_eq!(json["messages"][2]["tool_call_id"], json!("note_3"));
    assert_eq!(
        json["messages"][3]["tool_calls"][0]["id"],
        json!("note_x_1")
    );
    assert_eq!(
        json["messages"][4]["content"],
        json!("Grade this: [{\"id\": \"note_3\"}] note_ note_4_ x")
    );
}

fn system_text(message: &ChatMessage) -> String {
    match message {
        ChatMessage::System { content } => content.text(),
        other => format!("(not a system message: {other:?})"),
    }
}

fn unrecorded(err: ModelError) -> String {
    match err {
        ModelError::Unrecorded { message, .. } => message,
        // Not the error kind a replay fails with: the callers' assertions on the text fail.
        other => format!("(not ModelError::Unrecorded: {other:?})"),
    }
}

#[test]
fn an_unrecorded_request_names_the_request_and_the_field() {
    let requests = conversation("s1", 2, 1_772_357_999_000);
    let replayer = Replayer::new(record(&requests), "tests/refund.cassette.json");
    let mut edited = requests[0].clone();
    edited.messages[0] = ChatMessage::system(
        system_text(&requests[0].messages[0]).replace("go to a person", "go to a manager"),
    );
    let err = rt()
        .block_on(replayer.complete(&edited))
        .expect_err("not recorded");
    let text = err.to_string();
    assert!(
        text.starts_with("model request (model 'm') is not in the cassette tests/refund.cassette.json: request 1 (state 'triage', agent, session 's1') was not recorded; the nearest recorded request is exchange 1 (state 'triage', agent, session 's1'): messages[0].content differs: recorded \"…"),
        "{text}"
    );
    assert!(text.contains("go to a person"), "{text}");
    assert!(text.contains("go to a manager"), "{text}");
    assert!(text.contains("(at character 44)"), "{text}");

    let mut hotter = requests[1].clone();
    hotter.temperature = Some(0.9);
    let message = unrecorded(
        rt().block_on(replayer.complete(&hotter))
            .expect_err("not recorded"),
    );
    assert!(
        message.ends_with("exchange 2 (state 'triage', agent, session 's1'): temperature was not recorded: asked 0.9"),
        "{message}"
    );

    rt().block_on(replayer.complete(&requests[0]))
        .expect("recorded");
    let again = unrecorded(
        rt().block_on(replayer.complete(&requests[0]))
            .expect_err("used up"),
    );
    assert_eq!(
        again,
        "request 4 (state 'triage', agent, session 's1') was asked more often than it was recorded (exchange 1 answered it already)"
    );
}

#[test]
fn bad_files_are_refused_naming_where() {
    let cassette = record(&conversation("s1", 2, 1_772_357_999_000));
    let text = cassette.to_json().expect("encodes");
    let err = |text: &str| {
        Cassette::from_json(text, "x.cassette.json")
            .expect_err("refused")
            .to_string()
    };
    assert_eq!(
        err(&text.replacen("\"version\": 1", "\"version\": 2", 1)),
        "cassette x.cassette.json: version: the cassette is version 2; this build reads version 1 (record it again)"
    );
    assert!(err("{").starts_with("cassette x.cassette.json: line 1 column 1: not JSON"));
    assert_eq!(
        err("{\"format\": \"other\"}"),
        "cassette x.cassette.json: format: not a cassette (expected \"format\": \"archmax-cassette\")"
    );
    assert!(
        err(&text.replacen("Refund KK-2046, please.", "Refund KK-2047, please.", 1)).starts_with(
            "cassette x.cassette.json: exchanges[0].digest: does not match the request it records"
        ),
    );
    assert_eq!(
        err(&text.replacen("\"base\": 1", "\"base\": 2", 1)),
        "cassette x.cassette.json: exchanges[1].request.base: names exchange 2, which is not an earlier one"
    );
    assert!(
        err(&text.replacen(
            "\"role\": \"agent\"",
            "\"role\": \"agent\", \"extra\": 1",
            1
        ))
        .contains("unknown field `extra`")
    );
}

#[test]
fn an_edited_answer_that_a_later_request_continues_is_refused_saying_so() {
    let cassette = record(&conversation("s1", 2, 1_772_357_999_000));
    let mut file: serde_json::Value =
        serde_json::from_str(&cassette.to_json().expect("encodes")).expect("json");
    assert_eq!(file["exchanges"][1]["request"]["answered"], json!(true));
    file["exchanges"][0]["answer"]["tool_calls"][0]["function"]["arguments"] = json!("{}");
    let err = Cassette::from_json(&file.to_string(), "x.cassette.json").expect_err("refused");
    assert!(
        err.to_string().contains("exchanges[1].digest: does not match the request it records")
            && err.to_string().contains("(it continues exchange 1's answer, so an edited answer changes the requests after it)"),
        "{err}"
    );
    // The last answer continues nothing: it may be edited.
    let mut file: serde_json::Value =
        serde_json::from_str(&cassette.to_json().expect("encodes")).expect("json");
    file["exchanges"][1]["answer"] = json!({ "content": "Edited." });
    let edited = Cassette::from_json(&file.to_string(), "x.cassette.json").expect("loads");
    assert_eq!(
        edited.exchanges()[1].response.message.content.as_deref(),
        Some("Edited.")
    );
}

#[test]
fn save_is_atomic_and_load_reads_it() {
    let dir = std::env::temp_dir().join(format!("cassette-save-{}", std::process::id()));
    let path = dir.join("tests/refund.cassette.json");
    let requests = conversation("s1", 2, 1_772_357_999_000);
    let recorder = Recorder::to_file(Scripted::new(answers(2)), &path);
    rt().block_on(recorder.complete(&requests[0]))
        .expect("recorded");
    assert_eq!(
        Cassette::load(&path)
            .expect("saved after one")
            .exchanges()
            .len(),
        1
    );
    rt().block_on(recorder.complete(&requests[1]))
        .expect("recorded");
    assert_eq!(
        Cassette::load(&path).expect("saved after two"),
        recorder.cassette()
    );
    let names: Vec<String> = std::fs::read_dir(dir.join("tests"))
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["refund.cassette.json"]);
    let missing = Cassette::load(&dir.join("none.cassette.json")).expect_err("missing");
    assert!(
        missing
            .to_string()
            .contains("none.cassette.json: cannot be read"),
        "{missing}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
