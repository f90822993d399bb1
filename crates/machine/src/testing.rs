//! An in-process turn harness for tests: a [`ScriptedModel`] answering from a list, the
//! memory store, and [`Turns`], which runs arrivals on a workflow and renders what happened —
//! the events, the outcome, the trail — as text a test compares with an inline snapshot
//! (`expect_test::expect!`). No HTTP, no disk but the workflow's folder.
//!
//! ```text
//! let mut t = Turns::new(WORKFLOW_YAML, vec![reply::call("c1", "archmax_advance", args), reply::text("…")]);
//! expect![[r#"…"#]].assert_eq(&t.send("s-1", "Hi"));
//! ```
//!
//! (`turn/behaviour_tests.rs` holds the turn behaviours written this way.)
//! Timestamps are left out of the rendering, so a snapshot does not depend on the clock.
//! Enabled for the crate's own tests and, for other crates, by the `test-support` feature.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;

use crate::events::{Envelope, EventSink};
use crate::model::{ChatRequest, ChatResponse, Model, ModelError, ModelFuture};
use crate::{Harness, HarnessBuilder, ModelSource, Outcome, SendInput};

/// Scripted answers.
pub mod reply {
    use crate::model::{AssistantMessage, ChatResponse, ToolCall};

    fn answer(content: Option<String>, tool_calls: Vec<ToolCall>) -> ChatResponse {
        let finish = if tool_calls.is_empty() {
            "stop"
        } else {
            "tool_calls"
        };
        ChatResponse {
            message: AssistantMessage {
                content,
                tool_calls,
            },
            usage: None,
            model: None,
            finish_reason: Some(finish.to_string()),
        }
    }

    /// An answer in text.
    pub fn text(text: &str) -> ChatResponse {
        answer(Some(text.to_string()), Vec::new())
    }

    /// An answer making `calls`, each `(id, tool, arguments)`.
    pub fn calls(calls: &[(&str, &str, serde_json::Value)]) -> ChatResponse {
        let calls = calls
            .iter()
            .map(|(id, name, args)| ToolCall {
                id: (*id).to_string(),
                name: (*name).to_string(),
                arguments: args.to_string(),
            })
            .collect();
        answer(None, calls)
    }

    /// An answer making one call.
    pub fn call(id: &str, name: &str, args: serde_json::Value) -> ChatResponse {
        calls(&[(id, name, args)])
    }

    /// `answer` reporting `input` and `output` tokens.
    pub fn using(mut answer: ChatResponse, input: u64, output: u64) -> ChatResponse {
        answer.usage = Some(crate::model::Usage {
            input_tokens: input,
            output_tokens: output,
            ..crate::model::Usage::default()
        });
        answer
    }

    /// An answer making one call whose arguments are `raw` as the model wrote them (not
    /// necessarily JSON).
    pub fn call_raw(id: &str, name: &str, raw: &str) -> ChatResponse {
        answer(
            None,
            vec![ToolCall {
                id: id.to_string(),
                name: name.to_string(),
                arguments: raw.to_string(),
            }],
        )
    }
}

/// A model answering from a script, in order; every request kept. Running out of answers
/// fails the call (the turn fails, and the rendering shows it).
#[derive(Default)]
pub struct ScriptedModel {
    answers: Mutex<std::collections::VecDeque<ChatResponse>>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedModel {
    /// A model answering `answers` in order.
    pub fn new(answers: Vec<ChatResponse>) -> Arc<ScriptedModel> {
        Arc::new(ScriptedModel {
            answers: Mutex::new(answers.into()),
            requests: Mutex::default(),
        })
    }

    /// Adds answers to the end of the script.
    pub fn then(&self, answers: Vec<ChatResponse>) {
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(answers);
    }

    /// The requests made so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// How many answers were not asked for.
    pub fn left(&self) -> usize {
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

impl Model for ScriptedModel {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(req.clone());
        let next = self
            .answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front();
        let model = req.model.clone();
        Box::pin(async move {
            next.ok_or_else(|| ModelError::Replayed {
                message: format!("the script ran out of answers (model '{model}')"),
            })
        })
    }
}

/// The error [`OpenAiClient`](crate::model::OpenAiClient) makes of an answer with the
/// non-success `status` and `body` to a request to `url` (the full `…/chat/completions` URL)
/// for `model`, before any retry: for a stand-in of the HTTP endpoint that fails as the
/// client would.
pub fn http_error(url: &str, model: &str, status: u16, body: &str) -> ModelError {
    crate::model::client::http_error(url, model, status, body.as_bytes())
}

/// The events of the turns, kept in order.
#[derive(Default)]
struct Recorded(Mutex<Vec<Envelope>>);

impl EventSink for Recorded {
    fn emit(&self, event: &Envelope) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event.clone());
    }
}

impl Recorded {
    fn take(&self) -> Vec<Envelope> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// A workflow (written to a fresh folder as `workflows/wf/workflow.yaml`, with any other
/// files given) run in-process on a [`ScriptedModel`] over the memory store.
pub struct Turns {
    /// The harness (for what the renderings do not show).
    pub harness: Harness,
    /// The model (its requests, more answers).
    pub model: Arc<ScriptedModel>,
    events: Arc<Recorded>,
    rt: tokio::runtime::Runtime,
    root: std::path::PathBuf,
}

impl Drop for Turns {
    fn drop(&mut self) {
        crate::clock::set_manual(None);
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

impl Turns {
    /// The workflow `yaml` answering from `answers`.
    pub fn new(yaml: &str, answers: Vec<ChatResponse>) -> Turns {
        Turns::with_files(yaml, &[], answers)
    }

    /// The workflow `yaml` with the workspace files `files` (path, content).
    ///
    /// # Panics
    /// When the folder cannot be written or the workflow does not assemble: a test's mistake.
    #[allow(clippy::panic, clippy::unwrap_used)]
    pub fn with_files(yaml: &str, files: &[(&str, &str)], answers: Vec<ChatResponse>) -> Turns {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let root = std::env::temp_dir().join(format!(
            "archmax-turns-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let write = |path: &str, text: &str| {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        write("workflows/wf/workflow.yaml", yaml);
        for (path, text) in files {
            write(path, text);
        }
        let model = ScriptedModel::new(answers);
        let events = Arc::new(Recorded::default());
        let harness = HarnessBuilder::new(&root, "wf")
            .env(Arc::new(|_: &str| None))
            .mcp(None)
            .model(ModelSource::Given(model.clone()))
            .store(Arc::new(crate::store::MemStore::new()))
            .events(events.clone())
            .build()
            .unwrap_or_else(|e| panic!("the workflow does not assemble: {e}"));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        Turns {
            harness,
            model,
            events,
            rt,
            root,
        }
    }

    /// Sets the time the turns run at on this thread (epoch milliseconds), so times in
    /// records and events are fixed; `advance` moves it on.
    pub fn at(&mut self, ms: u64) -> &mut Self {
        crate::clock::set_manual(Some(ms));
        self
    }

    /// Moves the manual time on by `ms` (from now, when none was set).
    pub fn advance(&mut self, ms: u64) -> &mut Self {
        crate::clock::set_manual(Some(crate::clock::now_ms().saturating_add(ms)));
        self
    }

    /// Sends `message` to session `id`: the rendering of what happened.
    pub fn send(&mut self, id: &str, message: &str) -> String {
        let input = SendInput {
            message: message.to_string(),
            ..SendInput::default()
        };
        let out = self.rt.block_on(self.harness.send(id, input));
        self.render(&format!("send {message:?}"), out)
    }

    /// Decides session `id`'s pending decision for `target`.
    pub fn decide(&mut self, id: &str, target: &str, comment: Option<&str>) -> String {
        let out = self.rt.block_on(self.harness.decide(id, target, comment));
        self.render(&format!("decide {target}"), out)
    }

    /// Replies `message` to session `id`.
    pub fn reply(&mut self, id: &str, message: &str) -> String {
        let out = self.rt.block_on(self.harness.reply(id, message));
        self.render(&format!("reply {message:?}"), out)
    }

    fn render(&self, arrival: &str, out: Result<Outcome, crate::RunError>) -> String {
        let mut text = format!("> {arrival}\n");
        for e in self.events.take() {
            text.push_str(&event_line(&e));
            text.push('\n');
        }
        match out {
            Ok(o) => text.push_str(&outcome_line(&o)),
            Err(e) => text.push_str(&format!("= error {}: {e}\n", e.code())),
        }
        text
    }
}

/// An event as one line: its type and its fields, without timestamps, ids the run makes up
/// or previews that repeat the transcript.
fn event_line(e: &Envelope) -> String {
    let Ok(Value::Object(mut fields)) = serde_json::to_value(&e.event) else {
        return String::from("?");
    };
    let kind = fields
        .remove("type")
        .and_then(|t| t.as_str().map(str::to_string))
        .unwrap_or_default();
    for noisy in [
        "durationMs",
        "ts",
        "at",
        "createdAt",
        "parkedAt",
        "messageId",
        "specHash",
        "usage",
        "costUsd",
        "model",
    ] {
        fields.remove(noisy);
    }
    let mut line = format!("  {kind}");
    for (k, v) in fields {
        let shown = match v {
            Value::String(s) => s,
            other => other.to_string(),
        };
        let shown: String = shown.replace('\n', "⏎").chars().take(200).collect();
        line.push_str(&format!(" {k}={shown}"));
    }
    line
}

/// The outcome as a line, and the trail below it.
fn outcome_line(o: &Outcome) -> String {
    let kind = serde_json::to_value(o.kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let mut text = format!("= {kind} at {}: {}\n", o.state, o.reply);
    if let Some(why) = &o.rejected {
        text.push_str(&format!("  rejected: {why}\n"));
    }
    if let Some(exit) = o
        .exit
        .as_ref()
        .filter(|e| e.get("success") != Some(&Value::Bool(true)))
    {
        text.push_str(&format!("  exit: {exit}\n"));
    }
    let trail: Vec<String> = o
        .audit_trail
        .iter()
        .map(|s| format!("{}({})", s.to, s.kind))
        .collect();
    text.push_str(&format!("  trail: {}\n", trail.join(" → ")));
    text
}
