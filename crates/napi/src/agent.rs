//! `NativeAgent`: a harness driven from JS. The hand-written `agent.js`
//! wraps it as `createAgent`; this file only translates.
//!
//! A JS callback is asked through the drive loop of the turn polled on the JS thread
//! (`crate::pump`), or, from a tokio worker, as a weak threadsafe function called with
//! `call_async_catch`; either way it takes and returns JSON text, so a callback that
//! throws, rejects or answers garbage becomes an error of the call it served (a failed
//! model call, a failed tool call), never a crash. The JS wrapper never throws itself: it
//! answers `{ ok, value | error }` envelopes.
//! Expected failures of the harness come back as data (`{ ok: false, code,
//! message }`) and `agent.js` raises them as the original's error classes.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, RwLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use archmax_machine::model::delta::{Channels, StreamTag};
use archmax_machine::model::{
    ChatRequest, ChatResponse, Model, ModelError, ModelFuture, NoText, TextSink, show_whole,
};
use archmax_machine::tools::BoxFuture;
use archmax_machine::{
    AssemblyExtras, DEFAULT_WORKFLOW, Envelope, EventSink, Firing, Governance, Harness,
    HarnessBuilder, HostTool, InvokeInput, ModelSource, Outcome, Recording, RequestOptions,
    RunError, SendInput, ToolContext,
};
use archmax_spec::runtime_contract::{SUPPORTED, contract_id};
use napi::bindgen_prelude::{FnArgs, Status};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use crate::dto::{MountOptions, PromptCacheOptions, mount_decls, pricing_table, tool_paths};
use crate::pump::NativeTurn;

/// A JS `(id: number, json: string) => void` called from a worker, weak so it never holds
/// Node open. It answers call `id` later, through [`answer_call`] (`slices.js`'s `sliced`
/// makes one from an async `(json) => envelope` function and never lets it throw).
pub(crate) type AsyncJsFn =
    ThreadsafeFunction<FnArgs<(u32, String)>, (), FnArgs<(u32, String)>, Status, false, true>;

/// What a call through an [`AsyncJsFn`] is answered with: the envelope's JSON text, or why
/// the JS function failed.
type Answer = std::result::Result<String, String>;

/// The calls made through an [`AsyncJsFn`] that JS has not answered yet, by id. Answering
/// by id, not by a Promise returned to napi, saves napi two functions (the Promise's `then`
/// and `catch` callbacks) and their finalizers per call, which the next major GC runs on
/// the JS thread: with a host store, a thousand sessions' calls made that GC's pause
/// several milliseconds longer.
static ANSWERS: LazyLock<Mutex<HashMap<u32, oneshot::Sender<Answer>>>> =
    LazyLock::new(Mutex::default);
static NEXT_CALL: AtomicU32 = AtomicU32::new(0);

/// A call's answer to come: forgotten when dropped, so a call whose caller stopped waiting
/// (a cancelled turn, a disposed agent) leaves nothing behind if JS never answers it.
struct Expected {
    id: u32,
    answer: oneshot::Receiver<Answer>,
}

impl Expected {
    fn new() -> Self {
        let id = NEXT_CALL.fetch_add(1, Ordering::Relaxed);
        let (tx, answer) = oneshot::channel();
        ANSWERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        Expected { id, answer }
    }
}

impl Drop for Expected {
    fn drop(&mut self) {
        ANSWERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

/// The session a turn runs on when none is named (`invoke` without `thread_id`).
#[napi]
pub const DEFAULT_SESSION_ID: &str = archmax_machine::DEFAULT_SESSION_ID;

/// Answers call `id` of a native callback (`(id, json) => void`, made by `slices.js`'s
/// `sliced`): its envelope, or (`error`) why the function failed. An unknown id (a call
/// whose caller stopped waiting, or one answered before) is ignored. Internal to `agent.js`.
#[napi(catch_unwind)]
pub fn answer_call(id: u32, envelope: Option<String>, error: Option<String>) {
    let waiting = ANSWERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&id);
    if let Some(tx) = waiting {
        let _ = tx.send(match error {
            Some(reason) => Err(reason),
            None => Ok(envelope.unwrap_or_default()),
        });
    }
}

/// A JS `(json: string) => void` for events.
type EventJsFn = ThreadsafeFunction<String, (), String, Status, false, true>;

/// A callback slot `dispose` empties.
pub(crate) type Slot<T> = Arc<RwLock<Option<Arc<T>>>>;

pub(crate) fn take<T>(slot: &Slot<T>) -> Option<Arc<T>> {
    slot.read().ok().and_then(|g| g.clone())
}

/// What the URL of a JS model reads as in error texts.
const JS_MODEL_URL: &str = "js:model";

/// Calls a JS async callback with `input`; the `{ ok, value | error }` envelope it answered.
/// While a turn is polled on this thread (`crate::pump`), the call goes to its drive loop as
/// a call of `kind`; otherwise through `f`. With a [`Spin`], the answer of `f` is first
/// awaited by polling in a loop (see there).
async fn call_js_envelope(
    f: Arc<AsyncJsFn>,
    input: String,
    kind: &'static str,
    what: &str,
    spin: Option<&Spin>,
) -> std::result::Result<Value, String> {
    if let Some(pump) = crate::pump::active() {
        let text = pump
            .call(kind, input)
            .await
            .map_err(|e| format!("the {what} failed: {e}"))?;
        return serde_json::from_str(&text)
            .map_err(|e| format!("the {what} answered unreadable JSON: {e}"));
    }
    let started = Instant::now();
    let budget = spin.map_or(Duration::ZERO, Spin::budget);
    let mut expected = Expected::new();
    let status = f.call(
        FnArgs::from((expected.id, input)),
        ThreadsafeFunctionCallMode::NonBlocking,
    );
    if status != Status::Ok {
        return Err(format!("the {what} could not be called: {status}"));
    }
    let text = match poll_for(&mut expected.answer, budget, started) {
        Some(answer) => answer,
        None => (&mut expected.answer).await,
    }
    .map_err(|_| format!("the {what} failed: its call was dropped before it answered"))?
    .map_err(|reason| format!("the {what} failed: {reason}"))?;
    if let Some(spin) = spin {
        spin.record(started.elapsed());
    }
    serde_json::from_str(&text).map_err(|e| format!("the {what} answered unreadable JSON: {e}"))
}

/// Busy-polling before parking, for a callback that usually answers within microseconds
/// (a JS model function answering from memory, as in tests and benchmarks). A parked tokio
/// worker costs a futex wake-up, and on a virtual machine often a halted vCPU's, per answer;
/// polling for up to [`Spin::LIMIT`] takes an answer that is already there at once. It adapts:
/// after a call slower than the limit (a model behind the network) calls park at once, until
/// one answers within the limit again.
struct Spin {
    fast: AtomicBool,
}

impl Spin {
    /// The longest a call is polled before its task parks.
    const LIMIT: Duration = Duration::from_micros(250);

    fn new() -> Self {
        Spin {
            fast: AtomicBool::new(true),
        }
    }

    fn budget(&self) -> Duration {
        if self.fast.load(Ordering::Relaxed) {
            Self::LIMIT
        } else {
            Duration::ZERO
        }
    }

    fn record(&self, took: Duration) {
        self.fast.store(took <= Self::LIMIT, Ordering::Relaxed);
    }
}

/// Polls `f` in a loop until `started + budget`; its output if it finished by then.
fn poll_for<F: Future + Unpin>(f: &mut F, budget: Duration, started: Instant) -> Option<F::Output> {
    if budget.is_zero() {
        return None;
    }
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = Pin::new(&mut *f).poll(&mut cx) {
            return Some(v);
        }
        if started.elapsed() > budget {
            return None;
        }
        std::hint::spin_loop();
    }
}

/// The value of an envelope, or its error.
fn open_envelope(envelope: Value) -> std::result::Result<Value, String> {
    match envelope {
        Value::Object(mut m) if m.get("ok").and_then(Value::as_bool) == Some(true) => {
            Ok(m.remove("value").unwrap_or(Value::Null))
        }
        other => Err(other
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("unknown error")
            .to_string()),
    }
}

/// Calls a JS async callback with `input` (a call of `kind` for a drive loop); the value it
/// answered, or its error.
pub(crate) async fn call_js(
    f: Arc<AsyncJsFn>,
    input: String,
    kind: &'static str,
    what: &str,
) -> std::result::Result<Value, String> {
    open_envelope(call_js_envelope(f, input, kind, what, None).await?)
}

pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null/undefined",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Reads what a JS model function answered: an assistant message
/// `{ role: "assistant", content, tool_calls? }` or a whole `chat.completion`.
pub(crate) fn read_model_answer(value: &Value) -> std::result::Result<ChatResponse, String> {
    let Some(obj) = value.as_object() else {
        return Err(format!(
            "the model function returned {}; expected an assistant message {{ role: 'assistant', content, tool_calls? }} or a chat.completion {{ choices: [{{ message }}] }}",
            kind(value)
        ));
    };
    if obj.contains_key("choices") || obj.contains_key("error") {
        return ChatResponse::from_value(value);
    }
    if !obj.contains_key("content") && !obj.contains_key("tool_calls") {
        return Err(
            "the model function returned an object with neither 'content' nor 'tool_calls' nor 'choices'; expected an assistant message { role: 'assistant', content, tool_calls? }".to_string(),
        );
    }
    if let Some(role) = obj.get("role").and_then(Value::as_str)
        && role != "assistant"
    {
        return Err(format!(
            "the model function returned a message with role '{role}'; expected role 'assistant'"
        ));
    }
    if let Some(calls) = obj.get("tool_calls")
        && !calls.is_null()
        && !calls.is_array()
    {
        return Err(format!(
            "the model function returned 'tool_calls' as {}; expected an array",
            kind(calls)
        ));
    }
    if let Some(content) = obj.get("content")
        && !(content.is_null() || content.is_string() || content.is_array())
    {
        return Err(format!(
            "the model function returned 'content' as {}; expected a string or null",
            kind(content)
        ));
    }
    ChatResponse::from_message(obj)
}

/// The model: a JS function. Requests cross as deltas over channels the JS side
/// keeps (`archmax_machine::model::delta`), so a call costs the new messages, not the
/// whole transcript; `agent.js` rebuilds the whole request for the function.
struct JsModel {
    f: Slot<AsyncJsFn>,
    channels: Mutex<Channels>,
    spin: Spin,
    /// `createAgent({ streaming })` (default on): a streamed answer's text is shown live.
    streaming: bool,
}

/// What a JS model answered: a whole answer, or (the `{ archmaxStreamed: true }` marker)
/// the pieces it streamed.
enum JsAnswer {
    /// The answer, and whether some of its text was streamed (a LangChain `.stream()`).
    Whole(Value, bool),
    Streamed(archmax_machine::model::Chunks),
}

impl JsModel {
    /// One call: the delta for `req` on a channel, with a stream for the answer's pieces,
    /// the envelope answered, the channel released (forgotten unless the call succeeded).
    /// `Ok(None)`: the JS side refused the delta.
    async fn call(
        &self,
        f: Arc<AsyncJsFn>,
        req: &ChatRequest,
        text: &dyn TextSink,
        show: bool,
    ) -> std::result::Result<Option<JsAnswer>, String> {
        let stream = crate::model_stream::Stream::open();
        let (ch, input) = {
            let mut channels = self
                .channels
                .lock()
                .map_err(|_| "the channel table is poisoned".to_string())?;
            let mut delta = channels.begin(req).map_err(|e| e.to_string())?;
            delta.stream = Some(StreamTag {
                id: stream.id,
                show,
            });
            let ch = delta.ch;
            let input = serde_json::to_string(&delta);
            if input.is_err() {
                channels.end(ch, false);
            }
            (ch, input.map_err(|e| e.to_string())?)
        };
        let answer = call_js_envelope(f, input, "model", "model function", Some(&self.spin));
        let (answer, chunks) = stream.follow(answer, text).await;
        let ok = matches!(&answer, Ok(v) if v.get("ok").and_then(Value::as_bool) == Some(true));
        if let Ok(mut channels) = self.channels.lock() {
            channels.end(ch, ok);
        }
        let envelope = answer?;
        if envelope.get("resync").and_then(Value::as_bool) == Some(true) {
            return Ok(None);
        }
        let value = open_envelope(envelope)?;
        if value.get("archmaxStreamed").and_then(Value::as_bool) == Some(true) {
            return chunks.map(|c| Some(JsAnswer::Streamed(c)));
        }
        let shown = chunks.is_ok_and(|c| !c.text().is_empty());
        Ok(Some(JsAnswer::Whole(value, shown)))
    }

    async fn answer(
        &self,
        req: &ChatRequest,
        text: &dyn TextSink,
        show: bool,
    ) -> std::result::Result<ChatResponse, ModelError> {
        let f = take(&self.f);
        let model = req.model.clone();
        let transport = |message: String| ModelError::Transport {
            url: JS_MODEL_URL.to_string(),
            model: model.clone(),
            message,
        };
        let Some(f) = f else {
            return Err(transport("the agent was disposed".to_string()));
        };
        // A refused delta is retried once, on another channel.
        let answer = match self
            .call(Arc::clone(&f), req, text, show)
            .await
            .map_err(transport)?
        {
            Some(answer) => answer,
            None => self
                .call(f, req, text, show)
                .await
                .map_err(transport)?
                .ok_or_else(|| {
                    transport("the model adapter refused the request twice".to_string())
                })?,
        };
        let decode = |message: String| ModelError::Decode {
            url: JS_MODEL_URL.to_string(),
            model: model.clone(),
            message,
        };
        match answer {
            JsAnswer::Whole(value, shown) => {
                let response = read_model_answer(&value).map_err(decode)?;
                // A whole answer (or a stream that showed no text) is one piece.
                if show && !shown {
                    show_whole(&response, text);
                }
                Ok(response)
            }
            JsAnswer::Streamed(chunks) => chunks.finish().map_err(decode),
        }
    }
}

impl Model for JsModel {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(self.answer(req, &NoText, false))
    }

    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        if self.streaming {
            Box::pin(self.answer(req, text, true))
        } else {
            self.complete(req)
        }
    }
}

/// The model ids the spec declares, for `modelFactory` to build at assembly as the original
/// does: `{ agent: [the settings' and the states' ids], rubric: [each rubric's id, or null] }`,
/// distinct, in declaration order.
fn declared_models(spec: &archmax_spec::Workflow) -> Value {
    let mut agent: Vec<String> = Vec::new();
    let mut rubric: Vec<Value> = Vec::new();
    let settings = spec.settings.as_ref().and_then(|s| s.model.clone());
    for id in settings
        .into_iter()
        .chain(spec.states.values().filter_map(|s| s.model.clone()))
    {
        if !agent.contains(&id) {
            agent.push(id);
        }
    }
    for state in spec.states.values() {
        for hooks in [&state.before, &state.after].into_iter().flatten() {
            for hook in hooks.hooks() {
                if let archmax_spec::model::Hook::Rubric { rubric: r } = hook {
                    let id = r.model.clone().map_or(Value::Null, Value::String);
                    if !rubric.contains(&id) {
                        rubric.push(id);
                    }
                }
            }
        }
    }
    json!({ "agent": agent, "rubric": rubric })
}

std::thread_local! {
    /// The events of an assembly in progress on this (the JS) thread: handed back with
    /// `open`'s answer and delivered before `createAgent` resolves, in order with what follows.
    static ASSEMBLY_EVENTS: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `assemble` collecting the events it emits on this thread.
fn collecting_events<T>(assemble: impl FnOnce() -> T) -> (T, Vec<String>) {
    ASSEMBLY_EVENTS.with(|c| *c.borrow_mut() = Some(Vec::new()));
    let out = assemble();
    let events = ASSEMBLY_EVENTS
        .with(|c| c.borrow_mut().take())
        .unwrap_or_default();
    (out, events)
}

/// Events: a JS function, called in order on the JS thread.
struct JsEvents {
    f: Slot<EventJsFn>,
}

impl EventSink for JsEvents {
    fn emit(&self, event: &Envelope) {
        // Serialized only when someone listens; to the drive loop polling this thread, if any.
        if let Some(f) = take(&self.f)
            && let Ok(text) = serde_json::to_string(event)
        {
            let text = match ASSEMBLY_EVENTS.with(|c| match c.borrow_mut().as_mut() {
                Some(collected) => {
                    collected.push(text);
                    None
                }
                None => Some(text),
            }) {
                Some(text) => text,
                None => return,
            };
            match crate::pump::active() {
                Some(pump) => pump.event(text),
                None => {
                    let _ = f.call(text, ThreadsafeFunctionCallMode::NonBlocking);
                }
            }
        }
    }
}

/// `runCases`' progress, sent where the agent's events go (in order with them).
struct CaseProgress {
    events: JsEvents,
}

impl CaseProgress {
    fn send(&self, value: Value) {
        let Some(f) = take(&self.events.f) else {
            return;
        };
        let text = value.to_string();
        match crate::pump::active() {
            Some(pump) => pump.event(text),
            None => {
                let _ = f.call(text, ThreadsafeFunctionCallMode::NonBlocking);
            }
        }
    }
}

impl archmax_cases::Observer for CaseProgress {
    fn case_start(&self, file: &archmax_cases::CaseFile, session_id: Option<&str>) {
        self.send(json!({ "type": "case-start", "file": file.path, "sessionId": session_id }));
    }
    fn case_result(&self, result: &archmax_cases::CaseResult) {
        self.send(json!({ "type": "case-result", "result": result }));
    }
}

/// A host tool whose handler is JS (dispatched by name in `agent.js`).
struct JsTool {
    name: String,
    description: String,
    schema: Value,
    paths: Option<Vec<(String, String)>>,
    f: Slot<AsyncJsFn>,
    /// Where the call's `context.workspace` is registered while it runs.
    workspaces: Arc<crate::tool_workspace::ToolWorkspaces>,
}

impl HostTool for JsTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn schema(&self) -> Value {
        self.schema.clone()
    }
    fn paths(&self) -> Option<Vec<(String, String)>> {
        self.paths.clone()
    }
    fn call<'a>(
        &'a self,
        args: Value,
        ctx: ToolContext,
    ) -> BoxFuture<'a, std::result::Result<String, String>> {
        let f = take(&self.f);
        let registered = ctx
            .workspace
            .map(|ws| crate::tool_workspace::ToolWorkspaces::register(&self.workspaces, ws));
        let input = json!({
            "name": self.name,
            "args": args,
            "sessionId": ctx.session_id,
            "state": ctx.state,
            "callId": ctx.call_id,
            "contextId": registered.as_ref().map(crate::tool_workspace::Registered::id),
        })
        .to_string();
        Box::pin(async move {
            // Held until the call settles: the handle is closed with it.
            let _registered = registered;
            let f = f.ok_or_else(|| "the agent was disposed".to_string())?;
            match call_js(f, input, "tool", "tool handler").await? {
                Value::String(text) => Ok(text),
                other => Err(format!(
                    "the tool handler answered {}; expected text",
                    kind(&other)
                )),
            }
        })
    }
}

/// One host tool as `agent.js` passes it (the handler stays in JS).
#[napi(object)]
pub struct NativeToolDef {
    /// The name the model calls.
    pub name: String,
    /// What it does, for the model.
    pub description: Option<String>,
    /// JSON Schema of its arguments.
    #[napi(ts_type = "Record<string, unknown>")]
    pub schema: Option<Value>,
    /// Path arguments: `{ arg: "read" | "write" | … }`.
    #[napi(ts_type = "Record<string, string>")]
    pub paths: Option<Value>,
}

/// Options of `NativeAgent`.
#[napi(object)]
pub struct NativeAgentOptions {
    /// Workspace root.
    pub root_dir: String,
    /// `mcpServers`: the MCP servers (`.mcp.json`'s `mcpServers` shape) instead of the
    /// workspace's `.mcp.json`; `false`: none.
    #[napi(ts_type = "Record<string, unknown> | false")]
    pub mcp_servers: Option<Value>,
    /// Workflow slug; absent: the default workflow (`order-lookup`) is looked for, and a
    /// plain agent is assembled when it is missing.
    pub workflow: Option<String>,
    /// `workflow: false`: no workflow is read; a plain agent.
    pub ungoverned: Option<bool>,
    /// `systemPrompt`: a prompt layer right after the workspace's `AGENTS.md`.
    pub system_prompt: Option<String>,
    /// Default model id (the JS model's requests carry it; `settings.model` and
    /// `state.model` win). Default: `ARCHMAX_MODEL`, else `default`.
    pub default_model: Option<String>,
    /// Host tools.
    pub tools: Option<Vec<NativeToolDef>>,
    /// Host tools permitted in every state.
    pub essential_tools: Option<Vec<String>>,
    /// Skill sources, workspace-relative (default: `["skills/"]`; `[]` = none).
    pub skills: Option<Vec<String>>,
    /// The host's mount table, keyed like `validateWorkflow`'s (default: zero-config).
    pub mounts: Option<HashMap<String, MountOptions>>,
    /// `toolPaths`: `{ tool: { arg: access } }`, replacing each tool's own `paths`.
    #[napi(ts_type = "Record<string, Record<string, string>>")]
    pub tool_paths: Option<Value>,
    /// The default trigger, checked at assembly (`UnknownTriggerError`).
    pub trigger: Option<String>,
    /// `images`: `true`, or `{ maxBytes?, keep? }`, shows the agent the images it reads.
    #[napi(ts_type = "boolean | { maxBytes?: number; keep?: number }")]
    pub images: Option<Value>,
    /// Host seeds, checked at assembly (`InvalidVariableNameError`).
    #[napi(ts_type = "Record<string, unknown>")]
    pub variables: Option<Value>,
    /// `promptCache`: outranks the spec's `settings.prompt_cache` and the env.
    #[napi(ts_type = "NativePromptCacheOptions")]
    pub prompt_cache: Option<PromptCacheOptions>,
    /// `pricing`: `{ modelIdOrDefault: { input?, output?, cacheRead?, cacheWrite? } }` (USD per
    /// 1M tokens). Absent: `ARCHMAX_PRICE_*`, else no cost.
    #[napi(
        ts_type = "Record<string, { input?: number; output?: number; cacheRead?: number; cacheWrite?: number }>"
    )]
    pub pricing: Option<Value>,
    /// `requestTimeoutMs`: the `ARCHMAX_*` endpoint's per-attempt timeout (outranks
    /// `ARCHMAX_REQUEST_TIMEOUT_MS`).
    pub request_timeout_ms: Option<u32>,
    /// `maxRetries`: the `ARCHMAX_*` endpoint's retries (outranks `ARCHMAX_MAX_RETRIES`).
    pub max_retries: Option<u32>,
    /// `maxResponseBytes`: the `ARCHMAX_*` endpoint's response bound (outranks
    /// `ARCHMAX_MAX_RESPONSE_BYTES`).
    pub max_response_bytes: Option<u32>,
    /// `streaming`: the model's text is shown as it arrives (`agent-text-delta`); the
    /// `ARCHMAX_*` endpoint is asked for a stream. Outranks `ARCHMAX_STREAMING`; default on.
    pub streaming: Option<bool>,
    /// `telemetry`: this agent's OTLP export (default: the `OTEL_*` environment's).
    pub telemetry: Option<crate::telemetry::NativeTelemetryOptions>,
    /// `cassette`: record the model's exchanges into a cassette, or replay them from one.
    #[napi(ts_type = "NativeCassetteOptions")]
    pub cassette: Option<crate::dto::CassetteOptions>,
    /// `cassettes` (`runTests`, `createCaseTarget`): each case's model exchanges recorded
    /// into, or answered from, `tests/<case>.cassette.json` beside it.
    #[napi(ts_type = "'record' | 'replay'")]
    pub case_cassettes: Option<String>,
}

/// `caseCassettes`: `Some(true)` to replay each case's cassette, `Some(false)` to record it.
fn case_cassettes_option(
    options: &NativeAgentOptions,
) -> std::result::Result<Option<bool>, String> {
    let replay = match options.case_cassettes.as_deref() {
        None => return Ok(None),
        Some("replay") => true,
        Some("record") => false,
        Some(other) => {
            return Err(format!(
                "'cassettes' must be 'record' or 'replay', got '{other}'"
            ));
        }
    };
    if options.cassette.is_some() {
        return Err(
            "'cassettes' (one per case) and 'cassette' (one file) cannot be used together"
                .to_string(),
        );
    }
    Ok(Some(replay))
}

/// The cassette of `options`: where, and whether it is replayed (else recorded).
fn cassette_option(
    options: &NativeAgentOptions,
) -> std::result::Result<Option<(PathBuf, bool)>, String> {
    let Some(c) = &options.cassette else {
        return Ok(None);
    };
    if c.path.trim().is_empty() {
        return Err("'cassette.path' must be a non-empty file path".to_string());
    }
    let replay = match c.mode.as_str() {
        "replay" => true,
        "record" => false,
        other => {
            return Err(format!(
                "'cassette.mode' must be 'record' or 'replay', got '{other}'"
            ));
        }
    };
    let path = PathBuf::from(&c.path);
    let path = if path.is_absolute() {
        path
    } else {
        std::env::current_dir()
            .map_err(|e| format!("cannot read the current directory: {e}"))?
            .join(path)
    };
    Ok(Some((path, replay)))
}

/// The `images` option: off when absent or false; `true` for the defaults; or
/// `{ maxBytes?, keep? }` (positive whole numbers).
fn images_option(
    value: Option<&Value>,
) -> std::result::Result<Option<archmax_machine::images::ImageReads>, String> {
    let mut reads = archmax_machine::images::ImageReads::default();
    let given = match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Bool(true)) => return Ok(Some(reads)),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(format!(
                "'images' must be a boolean or {{ maxBytes?, keep? }}, got {}",
                kind(other)
            ));
        }
    };
    let count =
        |name: &str| -> std::result::Result<Option<u64>, String> {
            match given.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => v.as_u64().filter(|n| *n > 0).map(Some).ok_or_else(|| {
                    format!("'images.{name}' must be a positive whole number, got {v}")
                }),
            }
        };
    if let Some(n) = count("maxBytes")? {
        reads.max_bytes = n;
    }
    if let Some(n) = count("keep")? {
        reads.keep = usize::try_from(n).unwrap_or(usize::MAX);
    }
    Ok(Some(reads))
}

/// A `variables` argument: absent or null is none; anything but an object is a `TypeError`.
fn variables_arg(value: Option<Value>) -> std::result::Result<Map<String, Value>, Value> {
    match value {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(other) => Err(plain_error(
            "TypeError",
            format!("'variables' must be an object, got {}", kind(&other)),
        )),
    }
}

/// The original's constructor fields of an error class, where the error carries them.
fn error_fields(e: &RunError) -> Value {
    let targets = |valid: &str| -> Vec<String> {
        valid
            .split(", ")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    match e {
        RunError::WorkflowLoad(l) => json!({
            "workflow": l.workflow,
            "workflowPath": l.path,
            "problem": l.problem,
            "diagnostics": serde_json::to_value(&l.diagnostics).unwrap_or(Value::Null),
        }),
        RunError::WorkflowDisabled(workflow) => json!({ "workflow": workflow }),
        RunError::UnknownTrigger { id, available } => {
            json!({ "triggerId": id, "available": available })
        }
        RunError::ReservedToolName { names, reservation } => {
            json!({ "names": names, "reservation": reservation.as_str() })
        }
        RunError::MountCollision { key, .. } => json!({ "key": key }),
        RunError::SessionId(e) => json!({ "sessionId": e.raw() }),
        RunError::Busy { id, status } => json!({ "sessionId": id, "status": status }),
        RunError::StoreCapability {
            kind, capability, ..
        } => json!({ "storeKind": kind, "capability": capability }),
        RunError::UnsupportedRuntimeContract(contract) => json!({
            "requested": contract_id(contract),
            "supported": SUPPORTED,
        }),
        RunError::Parked(id)
        | RunError::SessionNotParked(id)
        | RunError::EmptyMessage(id)
        | RunError::SessionNotAwaitingInput(id)
        | RunError::MissingDeliveryTrigger(id) => json!({ "sessionId": id }),
        RunError::InvalidDecisionTarget { id, target, valid } => {
            json!({ "sessionId": id, "target": target, "validTargets": targets(valid) })
        }
        RunError::MissingDecisionTarget { id, valid } => {
            json!({ "sessionId": id, "validTargets": targets(valid) })
        }
        RunError::InvalidVariableName { name, origin } => {
            json!({ "variable": name, "source": origin })
        }
        RunError::UnknownSessionTrigger(trigger) => json!({ "trigger": trigger }),
        _ => json!({}),
    }
}

/// A harness error as data: `agent.js` raises it as the class named `code`.
fn error_dto(e: &RunError) -> Value {
    json!({ "ok": false, "code": e.code(), "message": e.to_string(), "fields": error_fields(e) })
}

/// The standings an option names: a string of comma-separated words or an array of them
/// (`archmax_machine::standing::parse_status_words`); absent or null: none.
fn option_kinds(
    options: &Value,
    name: &str,
) -> std::result::Result<Vec<archmax_machine::StandingKind>, String> {
    let words = match options.get(name) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => {
            return Err(format!(
                "'{name}' must be a status word or an array of them, got {}",
                kind(other)
            ));
        }
    };
    archmax_machine::standing::parse_status_words(&words).map_err(|e| format!("'{name}': {e}"))
}

/// An age option: a duration text (`7d`, `12h`) or whole milliseconds; absent or null: none.
fn option_age(options: &Value, name: &str) -> std::result::Result<Option<u64>, String> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => archmax_machine::standing::parse_age(s)
            .map(Some)
            .map_err(|e| format!("'{name}': {e}")),
        Some(Value::Number(n)) => n.as_u64().map(Some).ok_or_else(|| {
            format!("'{name}' must be a duration such as '7d' or whole milliseconds, got {n}")
        }),
        Some(other) => Err(format!(
            "'{name}' must be a duration such as '7d' or whole milliseconds, got {}",
            kind(other)
        )),
    }
}

/// A boolean option; absent or null: false.
fn option_flag(options: &Value, name: &str) -> std::result::Result<bool, String> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!("'{name}' must be a boolean, got {}", kind(other))),
    }
}

/// `agent.sessions.list`'s options.
fn session_query(
    query: Option<&Value>,
) -> std::result::Result<archmax_machine::SessionQuery, String> {
    let Some(q) = query.filter(|q| !q.is_null()) else {
        return Ok(archmax_machine::SessionQuery::default());
    };
    if !q.is_object() {
        return Err(format!(
            "sessions.list takes {{ status?, olderThan?, attention? }}, got {}",
            kind(q)
        ));
    }
    Ok(archmax_machine::SessionQuery {
        kinds: option_kinds(q, "status")?,
        older_than_ms: option_age(q, "olderThan")?,
        attention: option_flag(q, "attention")?,
    })
}

/// `agent.sessions.prune`'s options.
fn prune_options(o: &Value) -> std::result::Result<archmax_machine::PruneOptions, String> {
    if !(o.is_object() || o.is_null()) {
        return Err(format!(
            "sessions.prune takes {{ status?, olderThan?, dryRun?, sessionId? }}, got {}",
            kind(o)
        ));
    }
    let session_id = match o.get("sessionId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(format!("'sessionId' must be a string, got {}", kind(other)));
        }
    };
    Ok(archmax_machine::PruneOptions {
        kinds: option_kinds(o, "status")?,
        older_than_ms: option_age(o, "olderThan")?,
        dry_run: option_flag(o, "dryRun")?,
        session_id,
    })
}

pub(crate) fn plain_error(code: &str, message: impl Into<String>) -> Value {
    json!({ "ok": false, "code": code, "message": message.into() })
}

/// A turn's answer as JSON text (what [`crate::pump::TurnFuture`] ends with): the outcome is
/// written out directly, with no `Value` tree in between.
fn outcome_dto(result: std::result::Result<Outcome, RunError>) -> String {
    #[derive(serde::Serialize)]
    struct Answered<'a> {
        ok: bool,
        value: &'a Outcome,
    }
    match result {
        Ok(outcome) => serde_json::to_string(&Answered {
            ok: true,
            value: &outcome,
        })
        .unwrap_or_else(|e| {
            plain_error("Error", format!("cannot encode the outcome: {e}")).to_string()
        }),
        Err(e) => error_dto(&e).to_string(),
    }
}

/// The settings of a workspace at `root`: the environment, then `.env` in the cwd and in
/// `root` (as every harness reads them: `archmax_machine::env`).
fn env_lookup(root: &std::path::Path) -> archmax_machine::env::Lookup {
    let cwd = std::env::current_dir().ok();
    archmax_machine::env::Env::of_workspace(
        &archmax_machine::env::process_env,
        cwd.as_deref(),
        root,
    )
    .into_lookup()
}

/// The `names` that are set, as an agent rooted at `rootDir` reads its settings: the
/// environment first, then `.env` in the current directory and in `rootDir` (what
/// `modelFactory`'s `env()` returns).
#[napi(catch_unwind)]
pub fn read_env(root_dir: String, names: Vec<String>) -> HashMap<String, String> {
    let lookup = env_lookup(&root_of(&root_dir));
    names
        .into_iter()
        .filter_map(|name| lookup(&name).map(|value| (name, value)))
        .collect()
}

/// The workspace root `rootDir` names, resolved against the working directory.
fn root_of(root_dir: &str) -> PathBuf {
    archmax_machine::builder::workspace_root(std::path::Path::new(root_dir))
        .unwrap_or_else(|_| PathBuf::from(root_dir))
}

/// The endpoint settings a `modelFactory` is given (`AgentEnv`), as the harness reads them
/// for a workspace at `rootDir`: `{ apiBaseUrl, apiKey, model, temperature, maxTokens }`.
/// The key may be left out for an endpoint on this machine (it is then `""`). Throws the
/// harness's message naming the first missing or malformed setting.
#[napi(
    catch_unwind,
    ts_return_type = "{ apiBaseUrl: string; apiKey: string; model: string; temperature: number | null; maxTokens: number | null }"
)]
pub fn model_settings(root_dir: String) -> napi::Result<Value> {
    let lookup = env_lookup(&root_of(&root_dir));
    archmax_machine::builder::model_settings(&*lookup)
        .map_err(|e| napi::Error::from_reason(e.to_string()))
}

/// The default model id of an agent rooted at `rootDir`: `defaultModel`, else
/// `ARCHMAX_MODEL` (the environment, then `.env` in the cwd and in `rootDir`), else
/// `default` (what a `modelFactory` is asked for without an id).
#[napi(catch_unwind)]
pub fn default_model_id(root_dir: String, default_model: Option<String>) -> String {
    let lookup = env_lookup(&root_of(&root_dir));
    archmax_machine::default_model_id(default_model.as_deref(), &*lookup)
}

/// A workflow assembled for JS. Use `createAgent` (agent.js), not this class.
#[napi]
pub struct NativeAgent {
    harness: RwLock<Option<Arc<Harness>>>,
    model: Slot<AsyncJsFn>,
    tools: Slot<AsyncJsFn>,
    events: Slot<EventJsFn>,
    /// The sessions with a call in flight (and how many), so `dispose` can cancel them.
    running: Arc<Mutex<HashMap<String, usize>>>,
    /// The session store `open` uses (`useSessionStore`; default: the filesystem).
    pub(crate) store: crate::store::StoreChoice,
    /// The JS model, when there is one: `disposeSession` releases its conversation copies.
    js_model: RwLock<Option<Arc<JsModel>>>,
    /// The host's governance rules `open` compiles in (`usePolicy`; default: none).
    pub(crate) policy_rules: Mutex<archmax_machine::HostRules>,
    /// The host's custom hook kinds `open` assembles with (`useHookExecutors`).
    pub(crate) hook_kinds: Mutex<Option<archmax_machine::hooks::HostHookKinds>>,
    /// The host's answers to its MCP servers' requests (`useMcpHost`), and the JS function
    /// behind them, which `dispose` releases.
    pub(crate) mcp_host: Mutex<Option<Arc<crate::mcp_host::JsMcpHost>>>,
    pub(crate) mcp_handler: Slot<AsyncJsFn>,
    /// The `context.workspace` handles of the host tool calls in flight.
    pub(crate) tool_workspaces: Arc<crate::tool_workspace::ToolWorkspaces>,
    /// Where this agent's spans go (`open`), if anywhere.
    telemetry: RwLock<Option<Arc<archmax_telemetry::Telemetry>>>,
    /// The parent trace context of the next turn (`setTraceparent`, just before it).
    traceparent: Mutex<Option<String>>,
    /// A cassette per case (`runTests({ cassettes })`): the harness's model, which
    /// `runCases` switches to each case's cassette.
    tapes: Arc<RwLock<Option<Arc<archmax_cases::cassette::CaseTapes>>>>,
}

/// Marks a session busy for the life of one call.
struct Running {
    running: Arc<Mutex<HashMap<String, usize>>>,
    id: String,
}

impl Running {
    fn new(running: &Arc<Mutex<HashMap<String, usize>>>, id: &str) -> Running {
        if let Ok(mut m) = running.lock() {
            *m.entry(id.to_string()).or_default() += 1;
        }
        Running {
            running: Arc::clone(running),
            id: id.to_string(),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(mut m) = self.running.lock()
            && let Some(n) = m.get_mut(&self.id)
        {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.id);
            }
        }
    }
}

#[napi]
impl NativeAgent {
    /// An agent whose callbacks are set; `open` assembles it.
    #[napi(
        constructor,
        ts_args_type = "model: ((id: number, requestJson: string) => void) | null | undefined, toolHandler: ((id: number, callJson: string) => void) | null | undefined, onEvent: ((envelopeJson: string) => void) | null | undefined"
    )]
    pub fn new(
        model: Option<AsyncJsFn>,
        tool_handler: Option<AsyncJsFn>,
        on_event: Option<EventJsFn>,
    ) -> Self {
        NativeAgent {
            harness: RwLock::new(None),
            model: Arc::new(RwLock::new(model.map(Arc::new))),
            tools: Arc::new(RwLock::new(tool_handler.map(Arc::new))),
            events: Arc::new(RwLock::new(on_event.map(Arc::new))),
            running: Arc::new(Mutex::new(HashMap::new())),
            store: crate::store::StoreChoice::new(),
            js_model: RwLock::new(None),
            policy_rules: Mutex::default(),
            hook_kinds: Mutex::default(),
            mcp_host: Mutex::default(),
            mcp_handler: Arc::default(),
            tool_workspaces: Arc::default(),
            telemetry: RwLock::new(None),
            traceparent: Mutex::new(None),
            tapes: Arc::default(),
        }
    }

    /// The W3C `traceparent` the next turn runs under (agent.js sets it right before the
    /// call); `null` clears it.
    #[napi(catch_unwind)]
    pub fn set_traceparent(&self, traceparent: Option<String>) {
        if let Ok(mut g) = self.traceparent.lock() {
            *g = traceparent.filter(|t| !t.trim().is_empty());
        }
    }

    /// Starts delivering events to `onEvent` when the agent was built without a listener
    /// (`agent.workflow.stream` needs them); an agent that has one keeps it.
    #[napi(ts_args_type = "onEvent: (envelopeJson: string) => void")]
    pub fn listen(&self, on_event: EventJsFn) {
        if let Ok(mut g) = self.events.write()
            && g.is_none()
        {
            *g = Some(Arc::new(on_event));
        }
    }

    /// Assembles the workflow: `{ ok: true, value: { warnings, runtimeContract } }` or
    /// `{ ok: false, code, message, fields }`.
    #[napi(catch_unwind, ts_return_type = "NativeResult")]
    pub fn open(&self, options: NativeAgentOptions) -> Value {
        let root = PathBuf::from(&options.root_dir);
        let root = if root.is_absolute() {
            root
        } else {
            match std::env::current_dir() {
                Ok(cwd) => cwd.join(root),
                Err(e) => {
                    return plain_error("Error", format!("cannot read the current directory: {e}"));
                }
            }
        };
        let lookup = env_lookup(&root);
        match crate::telemetry::for_agent(options.telemetry.as_ref(), &*lookup) {
            Ok(t) => {
                if let Ok(mut g) = self.telemetry.write() {
                    *g = t;
                }
            }
            Err(e) => return plain_error("TypeError", e),
        }
        let cassette = match cassette_option(&options) {
            Ok(c) => c,
            Err(message) => return plain_error("TypeError", message),
        };
        let case_tapes = match case_cassettes_option(&options) {
            Ok(c) => c,
            Err(message) => return plain_error("TypeError", message),
        };
        let workflow = options
            .workflow
            .clone()
            .unwrap_or_else(|| DEFAULT_WORKFLOW.to_string());
        let mut builder = HarnessBuilder::new(&root, workflow.clone())
            .env(Arc::clone(&lookup))
            .default_model(options.default_model.clone())
            .requests(RequestOptions {
                timeout_ms: options.request_timeout_ms.map(u64::from),
                max_retries: options.max_retries,
                max_response_bytes: options.max_response_bytes.map(u64::from),
                streaming: options.streaming,
                max_concurrent_calls: None,
            });
        // The model: each case's cassette, a cassette file, the JS function, else the endpoint.
        let mut tapes = None;
        if case_tapes == Some(true) {
            let suite = archmax_cases::Suite::discover(&root, &workflow);
            let recorded_model =
                archmax_cases::cassette::CaseTapes::recorded_model(&root, &suite.files);
            let replay = Arc::new(archmax_cases::cassette::CaseTapes::replay(&root));
            tapes = Some(Arc::clone(&replay));
            builder = builder
                .model(ModelSource::Recorded {
                    model: Arc::clone(&replay) as _,
                    recorded_model,
                })
                .mcp_tape(Some(replay));
        } else if let Some((path, true)) = &cassette {
            builder = builder.model(ModelSource::Replay(path.clone()));
        } else if take(&self.model).is_some() {
            let js = Arc::new(JsModel {
                f: Arc::clone(&self.model),
                channels: Mutex::new(Channels::new()),
                spin: Spin::new(),
                streaming: options.streaming.unwrap_or(true),
            });
            if let Ok(mut slot) = self.js_model.write() {
                *slot = Some(Arc::clone(&js));
            }
            builder = builder.model(ModelSource::Given(js));
        }
        match &cassette {
            Some((path, false)) => builder = builder.record(Recording::File(path.clone())),
            _ if case_tapes == Some(false) => {
                let slot = Arc::clone(&self.tapes);
                let at = root.clone();
                builder = builder.record(Recording::Wrap(Box::new(move |model, default| {
                    let record = Arc::new(archmax_cases::cassette::CaseTapes::record(
                        &at, model, default,
                    ));
                    if let Ok(mut slot) = slot.write() {
                        *slot = Some(Arc::clone(&record));
                    }
                    record
                })));
            }
            _ => {}
        }
        if let Ok(mut slot) = self.tapes.write() {
            *slot = tapes;
        }
        let mut tools: Vec<Arc<dyn HostTool>> = Vec::new();
        for def in options.tools.unwrap_or_default() {
            let paths = match def.paths {
                None | Some(Value::Null) => None,
                Some(Value::Object(m)) => {
                    let mut out = Vec::new();
                    for (arg, access) in m {
                        let Some(access) = access.as_str() else {
                            return plain_error(
                                "ToolPathsError",
                                format!(
                                    "Tool '{}': the access of path argument '{arg}' must be a string",
                                    def.name
                                ),
                            );
                        };
                        out.push((arg, access.to_string()));
                    }
                    Some(out)
                }
                Some(other) => {
                    return plain_error(
                        "ToolPathsError",
                        format!(
                            "Tool '{}': 'paths' must be an object, got {}",
                            def.name,
                            kind(&other)
                        ),
                    );
                }
            };
            tools.push(Arc::new(JsTool {
                description: def.description.unwrap_or_default(),
                schema: def
                    .schema
                    .unwrap_or_else(|| json!({ "type": "object", "properties": {} })),
                name: def.name,
                paths,
                f: Arc::clone(&self.tools),
                workspaces: Arc::clone(&self.tool_workspaces),
            }));
        }
        let tool_paths = match options.tool_paths.as_ref().map(tool_paths).transpose() {
            Ok(paths) => paths.unwrap_or_default(),
            Err(message) => return plain_error("TypeError", message),
        };
        let pricing = match options.pricing.as_ref().filter(|v| !v.is_null()) {
            Some(v) => match pricing_table(v) {
                Ok(table) => Some(table),
                Err(message) => return plain_error("TypeError", message),
            },
            None => None,
        };
        let seeds = match variables_arg(options.variables) {
            Ok(seeds) => seeds,
            Err(e) => return e,
        };
        let images = match images_option(options.images.as_ref()) {
            Ok(images) => images,
            Err(message) => return plain_error("TypeError", message),
        };
        let mcp_host = self
            .mcp_host
            .lock()
            .ok()
            .and_then(|h| h.clone())
            .map(|h| h as Arc<dyn archmax_machine::mcp::McpHost>);
        let builder = match &options.mcp_servers {
            None | Some(Value::Null) => builder.mcp_host(mcp_host),
            Some(Value::Bool(false)) => builder.mcp(None),
            Some(servers @ Value::Object(_)) => {
                let text = json!({ "mcpServers": servers }).to_string();
                match archmax_machine::mcp::parse(&text, "mcpServers", &*lookup) {
                    Ok(config) => builder.mcp(Some(archmax_machine::mcp::McpTools::of(
                        config, &root, mcp_host,
                    ))),
                    Err(e) => return plain_error("TypeError", e.to_string()),
                }
            }
            Some(other) => {
                return plain_error(
                    "TypeError",
                    format!(
                        "'mcpServers' must be an object of servers ({{ name: {{ command, args }} | {{ type: 'http', url }} }}) or false, got {}",
                        kind(other)
                    ),
                );
            }
        };
        let (enabled, ttl) = options
            .prompt_cache
            .as_ref()
            .map_or((None, None), |p| (p.enabled, p.ttl.clone()));
        let builder = builder
            .store(self.store.build(&root))
            .events(Arc::new(JsEvents {
                f: Arc::clone(&self.events),
            }))
            .tools(tools, options.essential_tools.unwrap_or_default())
            .mounts(options.mounts.map(mount_decls))
            .skills(
                options
                    .skills
                    .unwrap_or_else(|| vec!["skills/".to_string()]),
            )
            .governance(if options.ungoverned == Some(true) {
                Governance::Plain
            } else if options.workflow.is_some() {
                Governance::Required
            } else {
                Governance::IfPresent
            })
            .extras(AssemblyExtras {
                tool_paths,
                system_prompt: options.system_prompt.clone(),
                policy_rules: self
                    .policy_rules
                    .lock()
                    .map(|r| r.clone())
                    .unwrap_or_default(),
                hook_kinds: self.hook_kinds.lock().ok().and_then(|k| k.clone()),
                ..AssemblyExtras::default()
            })
            .pricing(pricing)
            .prompt_cache(enabled, ttl)
            .images(images)
            .trigger(options.trigger.clone())
            .seeds(seeds);
        let (assembled, events) = collecting_events(|| builder.build());
        match assembled {
            Ok(harness) => {
                let plain = harness.is_plain();
                let models = declared_models(harness.spec());
                let warnings = serde_json::to_value(&harness.warnings).unwrap_or(Value::Null);
                let contract =
                    serde_json::to_value(harness.runtime_contract()).unwrap_or(Value::Null);
                if let Ok(mut slot) = self.harness.write() {
                    *slot = Some(Arc::new(harness));
                }
                json!({ "ok": true, "value": { "warnings": warnings, "runtimeContract": contract, "plain": plain, "events": events, "models": models } })
            }
            Err(e) => {
                // Nobody waits for the agent: what assembly said before refusing goes out as usual.
                if let Some(f) = take(&self.events) {
                    for text in events {
                        let _ = f.call(text, ThreadsafeFunctionCallMode::NonBlocking);
                    }
                }
                error_dto(&e)
            }
        }
    }

    fn harness(&self) -> std::result::Result<Arc<Harness>, Value> {
        self.harness
            .read()
            .ok()
            .and_then(|g| g.clone())
            .ok_or_else(|| plain_error("AgentDisposedError", "the agent was disposed"))
    }

    /// The turn of one harness call. With a JS model function it is polled on the JS main
    /// thread (`crate::pump`: no thread hand-off per model call). Otherwise it runs on a tokio
    /// worker, as it must with a host session store (called synchronously, so never from the
    /// main thread) and as is better with the `ARCHMAX_*` endpoint (nothing to hand to JS but
    /// tool calls, and the main thread stays free); its events then reach `onEvent` before
    /// its answer does.
    fn turn<F>(&self, call: F) -> NativeTurn
    where
        F: Future<Output = std::result::Result<Outcome, RunError>> + Send + 'static,
    {
        // A turn's future is tens of KiB: boxed once here, the wrappers below move a pointer.
        let call = Box::pin(call);
        let traceparent = self.traceparent.lock().ok().and_then(|mut g| g.take());
        let telemetry = self.telemetry.read().ok().and_then(|g| g.clone());
        let call = match crate::telemetry::traced(telemetry, traceparent, call) {
            Ok(call) => call,
            Err(e) => return NativeTurn::ended(plain_error("TypeError", e)),
        };
        if take(&self.model).is_some() && !self.store.is_host() {
            return NativeTurn::inline(Box::pin(async move { outcome_dto(call.await) }));
        }
        let events = take(&self.events);
        NativeTurn::spawned(Box::pin(async move {
            let result = call.await;
            if let Some(f) = events {
                let _ = f.call_async(String::new()).await;
            }
            outcome_dto(result)
        }))
    }

    /// [`Self::turn`] for a call on `session_id`, which is busy (for `dispose`) while it runs.
    fn session_turn<F>(&self, session_id: String, call: impl FnOnce(String) -> F) -> NativeTurn
    where
        F: Future<Output = std::result::Result<Outcome, RunError>> + Send + 'static,
    {
        let busy = Running::new(&self.running, &session_id);
        // Boxed where it is made: the wrapper below then moves a pointer, not the future.
        let call = Box::pin(call(session_id));
        self.turn(async move {
            let result = call.await;
            drop(busy);
            result
        })
    }

    /// A turn answering `fut`'s value as is (not an outcome): [`Self::turn`]'s placement.
    fn value_turn<F>(&self, fut: F) -> NativeTurn
    where
        F: Future<Output = Value> + Send + 'static,
    {
        if take(&self.model).is_some() && !self.store.is_host() {
            return NativeTurn::inline(Box::pin(async move { fut.await.to_string() }));
        }
        let events = take(&self.events);
        NativeTurn::spawned(Box::pin(async move {
            let answer = fut.await;
            if let Some(f) = events {
                let _ = f.call_async(String::new()).await;
            }
            answer.to_string()
        }))
    }

    /// `runTests`' engine: the workflow's cases (`archmax_cases`), each on its own session of
    /// this agent. `{ filter?, files?, toolMocks?, caseTimeoutMs?, sessionIds?: { [file]: id },
    /// runId? }`: `files` runs exactly those case files (`runCase`); `toolMocks: false` (the
    /// agent cannot intercept its own tool calls) fails a case declaring mocks before it runs
    /// (default true); `caseTimeoutMs` outranks `tests.caseTimeoutMs`. With `cassettes`, each case runs on its own cassette. Case progress
    /// reaches `onEvent` as `{ type: "case-start", file, sessionId? }` and
    /// `{ type: "case-result", result }` among the cases' own events.
    #[napi(catch_unwind)]
    pub fn run_cases(
        &self,
        #[napi(
            ts_arg_type = "{ filter?: string; files?: string[]; toolMocks?: boolean; caseTimeoutMs?: number; sessionIds?: Record<string, string>; runId?: string }"
        )]
        options: Value,
    ) -> NativeTurn {
        let h = match self.harness() {
            Ok(h) => h,
            Err(e) => return NativeTurn::ended(e),
        };
        if h.is_plain() {
            return NativeTurn::ended(plain_error(
                "Error",
                format!(
                    "Case target '{}' has no workflow machine; cases require a workflow-governed agent.",
                    h.workflow()
                ),
            ));
        }
        let ids: HashMap<String, String> = options
            .get("sessionIds")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
                    .collect()
            })
            .unwrap_or_default();
        let opts = archmax_cases::RunOptions {
            filter: options
                .get("filter")
                .and_then(Value::as_str)
                .filter(|f| !f.is_empty())
                .map(str::to_string),
            files: options.get("files").and_then(Value::as_array).map(|files| {
                files
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            }),
            tool_mocks: options
                .get("toolMocks")
                .and_then(Value::as_bool)
                .unwrap_or(true),
            case_timeout_ms: options.get("caseTimeoutMs").and_then(Value::as_u64),
            run_id: options
                .get("runId")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            session_id_for_case: (!ids.is_empty()).then(|| {
                let ids = Arc::new(ids);
                let f: archmax_cases::engine::SessionIdFor = Arc::new(move |file: &str| {
                    ids.get(file)
                        .cloned()
                        .unwrap_or_else(|| format!("test-{}", file.replace('/', "-")))
                });
                f
            }),
        };
        let progress = CaseProgress {
            events: JsEvents {
                f: Arc::clone(&self.events),
            },
        };
        let tapes = self.tapes.read().ok().and_then(|g| g.clone());
        self.value_turn(async move {
            let suite = archmax_cases::Suite::discover(h.root(), h.workflow());
            let spec = h.spec().clone();
            let target: Box<dyn archmax_cases::Target> = match tapes {
                Some(tapes) => Box::new(archmax_cases::cassette::TapedTarget {
                    harness: Arc::clone(&h),
                    tapes,
                }),
                None => Box::new(archmax_cases::SharedTarget(Arc::clone(&h))),
            };
            match archmax_cases::run_suite(&suite, &spec, target.as_ref(), &opts, &progress).await {
                Ok(result) => match serde_json::to_value(&result) {
                    Ok(v) => json!({ "ok": true, "value": v }),
                    Err(e) => plain_error("Error", format!("cannot encode the results: {e}")),
                },
                Err(e) => plain_error("Error", e.to_string()),
            }
        })
    }

    /// `send`: `{ message, trigger?, variables? }`; an empty id is resolved.
    #[napi(catch_unwind)]
    pub fn send(
        &self,
        session_id: Option<String>,
        #[napi(
            ts_arg_type = "{ message?: string; trigger?: string; variables?: Record<string, unknown> }"
        )]
        input: Value,
        session_path: Option<String>,
    ) -> NativeTurn {
        let h = match self.harness() {
            Ok(h) => h,
            Err(e) => return NativeTurn::ended(e),
        };
        let message = input
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let trigger = input
            .get("trigger")
            .and_then(Value::as_str)
            .map(str::to_string);
        let variables = match variables_arg(input.get("variables").cloned()) {
            Ok(variables) => variables,
            Err(e) => return NativeTurn::ended(e),
        };
        let explicit = session_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        let input = SendInput {
            message,
            trigger,
            variables,
        };
        if let Some(id) = explicit {
            return self.session_turn(id, |id| async move { h.send(&id, input).await });
        }
        // The id is resolved inside the turn, so a warning it emits (a session path that
        // does not resolve) reaches `onEvent` in order with the turn's own events.
        let running = Arc::clone(&self.running);
        self.turn(async move {
            let id = h
                .resolve_firing(&Firing {
                    trigger: input.trigger.as_deref(),
                    variables: input.variables.clone(),
                    session_id: None,
                    session_path: session_path.as_deref(),
                })?
                .session_id;
            let _busy = Running::new(&running, &id);
            h.send(&id, input).await
        })
    }

    /// `invoke`: `{ messages, trigger?, variables? }` on `sessionId` (`thread_id`), else on
    /// `__default__`. The messages are appended; the last user message opens the turn.
    #[napi(catch_unwind)]
    pub fn invoke(
        &self,
        session_id: Option<String>,
        #[napi(
            ts_arg_type = "{ messages: Array<{ role: string; content: unknown }>; trigger?: string; variables?: Record<string, unknown> }"
        )]
        input: Value,
    ) -> NativeTurn {
        let h = match self.harness() {
            Ok(h) => h,
            Err(e) => return NativeTurn::ended(e),
        };
        let Some(messages) = input.get("messages").and_then(Value::as_array).cloned() else {
            return NativeTurn::ended(plain_error(
                "TypeError",
                "invoke's input must be { messages: [{ role, content }...] }",
            ));
        };
        let variables = match variables_arg(input.get("variables").cloned()) {
            Ok(variables) => variables,
            Err(e) => return NativeTurn::ended(e),
        };
        let input = InvokeInput {
            messages,
            trigger: input
                .get("trigger")
                .and_then(Value::as_str)
                .map(str::to_string),
            variables,
        };
        let id = session_id
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| archmax_machine::DEFAULT_SESSION_ID.to_string());
        self.session_turn(id, |id| async move { h.invoke(&id, input).await })
    }

    /// `decide`: moves a session parked at a human state to `to`.
    #[napi(catch_unwind)]
    pub fn decide(&self, session_id: String, to: String, comment: Option<String>) -> NativeTurn {
        match self.harness() {
            Ok(h) => self.session_turn(session_id, |id| async move {
                h.decide(&id, &to, comment.as_deref()).await
            }),
            Err(e) => NativeTurn::ended(e),
        }
    }

    /// `reply`: one reply-only message to a session parked at a human state.
    #[napi(catch_unwind)]
    pub fn reply(&self, session_id: String, message: String) -> NativeTurn {
        match self.harness() {
            Ok(h) => {
                self.session_turn(session_id, |id| async move { h.reply(&id, &message).await })
            }
            Err(e) => NativeTurn::ended(e),
        }
    }

    /// `deliver`: an event to a session parked awaiting input.
    #[napi(catch_unwind)]
    pub fn deliver(
        &self,
        session_id: String,
        trigger: String,
        #[napi(ts_arg_type = "Record<string, unknown> | null | undefined")] variables: Option<
            Value,
        >,
        message: Option<String>,
    ) -> NativeTurn {
        let h = match self.harness() {
            Ok(h) => h,
            Err(e) => return NativeTurn::ended(e),
        };
        let variables = match variables_arg(variables) {
            Ok(variables) => variables,
            Err(e) => return NativeTurn::ended(e),
        };
        self.session_turn(session_id, |id| async move {
            h.deliver(&id, &trigger, variables, message.as_deref())
                .await
        })
    }

    /// How a firing lands on its session (`agent.workflow.resolveSession`):
    /// `{ ok: true, value: ResolvedSession }`. Reads the session store, so it is async.
    #[napi(
        ts_args_type = "sessionId: string | null | undefined, trigger: string | null | undefined, variables: Record<string, unknown> | null | undefined, sessionPath: string | null | undefined",
        ts_return_type = "Promise<NativeResult>"
    )]
    pub async fn resolve_session(
        &self,
        session_id: Option<String>,
        trigger: Option<String>,
        variables: Option<Value>,
        session_path: Option<String>,
    ) -> Value {
        let variables = match variables_arg(variables) {
            Ok(variables) => variables,
            Err(e) => return e,
        };
        self.answer(|h| {
            h.resolve_firing(&Firing {
                trigger: trigger.as_deref(),
                variables,
                session_id: session_id.as_deref(),
                session_path: session_path.as_deref(),
            })
        })
    }

    /// The start state of `trigger`: `{ ok: true, value: startState }`, or `UnknownTriggerError`.
    #[napi(catch_unwind, ts_return_type = "NativeResult")]
    pub fn start_state(&self, trigger: String) -> Value {
        self.answer(|h| h.start_state(&trigger))
    }

    /// Cancels a session's turn in flight; false when none runs here.
    #[napi(catch_unwind)]
    pub fn cancel(&self, session_id: String) -> bool {
        self.harness()
            .map(|h| h.cancel(&session_id))
            .unwrap_or(false)
    }

    /// The summaries `agent.sessions.list` selects: every session, or `{ status, olderThan,
    /// attention }` (`archmax_machine::SessionQuery`); a bad option answers `TypeError`.
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_list(
        &self,
        #[napi(
            ts_arg_type = "{ status?: string | string[]; olderThan?: string | number; attention?: boolean } | null"
        )]
        query: Option<Value>,
    ) -> Value {
        let query = match session_query(query.as_ref()) {
            Ok(q) => q,
            Err(e) => return plain_error("TypeError", e),
        };
        self.answer(|h| h.list_sessions(&query))
    }

    /// Removes sessions by standing and age, or one by id (`agent.sessions.prune`,
    /// `archmax_machine::PruneOptions`); a bad option answers `TypeError`.
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_prune(
        &self,
        #[napi(
            ts_arg_type = "{ status?: string | string[]; olderThan?: string | number; dryRun?: boolean; sessionId?: string }"
        )]
        options: Value,
    ) -> Value {
        let opts = match prune_options(&options) {
            Ok(o) => o,
            Err(e) => return plain_error("TypeError", e),
        };
        self.answer(|h| h.prune_sessions(&opts))
    }

    /// One session's summary, `null` when it has not run (`agent.sessions.get`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_get(&self, session_id: String) -> Value {
        self.answer(|h| h.session_summary(&session_id))
    }

    /// A parked session's park record with its state's instructions and approvers,
    /// `null` when not parked (`agent.sessions.park`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_park(&self, session_id: String) -> Value {
        self.answer(|h| h.session_park(&session_id))
    }

    /// The spec snapshot a session's `specHash` names, `null` when absent (`agent.getSpecSnapshot`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn spec_snapshot(&self, hash: String) -> Value {
        self.answer(|h| h.spec_snapshot(&hash))
    }

    /// One session's committed transcript (`agent.sessions.messages`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_messages(&self, session_id: String) -> Value {
        self.answer(|h| h.session_messages(&session_id))
    }

    /// How many messages a session's transcript holds (`agent.sessions.messageCount`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_message_count(&self, session_id: String) -> Value {
        self.answer(|h| h.message_count(&session_id))
    }

    /// Deletes a session and its child sessions; whether anything was removed.
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_delete(&self, session_id: String) -> Value {
        self.answer(|h| h.delete_session(&session_id))
    }

    /// Writes files into a session's folder (`agent.sessions.seed`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_seed(
        &self,
        session_id: String,
        #[napi(ts_arg_type = "Record<string, unknown>")] files: Value,
    ) -> Value {
        let Value::Object(files) = files else {
            return plain_error(
                "TypeError",
                format!(
                    "'files' must be an object of path → content, got {}",
                    kind(&files)
                ),
            );
        };
        self.answer(|h| h.seed_session(&session_id, &files))
    }

    /// Writes session `sessionId`'s run artifacts under its `artifacts/` folder
    /// (`agent.emitRunArtifacts`): `{ ok: true, value: "<id>/artifacts", events }`, or `value:
    /// null` with the `warning` event (scope `run-artifacts`) in `events` (JSON texts, for
    /// `onEvent` in order) when they could not be written.
    #[napi(catch_unwind, ts_return_type = "NativeResult & { events?: string[] }")]
    pub fn emit_run_artifacts(
        &self,
        session_id: String,
        #[napi(ts_arg_type = "unknown")] trajectory: Value,
        #[napi(ts_arg_type = "unknown")] trail: Option<Value>,
    ) -> Value {
        let (mut answer, events) = collecting_events(|| {
            self.answer(|h| {
                h.emit_run_artifacts(
                    &session_id,
                    archmax_machine::run_artifacts::RunArtifacts {
                        trajectory,
                        trail: trail.filter(|t| !t.is_null()),
                        package_version: env!("CARGO_PKG_VERSION"),
                    },
                )
            })
        });
        if let Value::Object(m) = &mut answer {
            m.insert("events".into(), json!(events));
        }
        answer
    }

    /// `{ ok: true, value }` from a harness call, or its error as data.
    fn answer<T: serde::Serialize>(
        &self,
        f: impl FnOnce(&Harness) -> std::result::Result<T, RunError>,
    ) -> Value {
        match self.harness() {
            Ok(h) => match f(&h).map(|v| serde_json::to_value(v)) {
                Ok(Ok(value)) => json!({ "ok": true, "value": value }),
                Ok(Err(e)) => plain_error("Error", format!("cannot encode the answer: {e}")),
                Err(e) => error_dto(&e),
            },
            Err(e) => e,
        }
    }

    /// The JSON text of request block `id` (a system message or a tool list that request
    /// deltas name, `archmax_machine::model::delta`), for `agent.js` to keep once for every
    /// channel; `null` once it is forgotten (the JS side then refuses the delta). Never fails.
    #[napi(catch_unwind)]
    pub fn model_block(&self, id: i64) -> Option<String> {
        let js = self.js_model.read().ok().and_then(|g| g.clone())?;
        let channels = js.channels.lock().ok()?;
        channels
            .block(u64::try_from(id).ok()?)
            .map(|b| b.to_string())
    }

    /// Releases what this agent keeps for `session_id` and its child sessions between
    /// turns: the idle request channels (conversation copies) of the JS model. Returns their
    /// ids, for `agent.js` to forget its side. Idempotent; never fails.
    #[napi(catch_unwind)]
    pub fn dispose_session(&self, session_id: String) -> Vec<u32> {
        let Some(js) = self.js_model.read().ok().and_then(|g| g.clone()) else {
            return Vec::new();
        };
        let Ok(mut channels) = js.channels.lock() else {
            return Vec::new();
        };
        channels
            .forget_session(&session_id)
            .into_iter()
            .filter_map(|id| u32::try_from(id).ok())
            .collect()
    }

    /// Cancels every turn in flight, then releases the JS callbacks and the
    /// harness; idempotent. Calls in flight resolve (`turn-cancelled`).
    #[napi(catch_unwind)]
    pub fn dispose(&self) {
        if let Ok(h) = self.harness() {
            let ids: Vec<String> = self
                .running
                .lock()
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default();
            for id in ids {
                h.cancel(&id);
            }
        }
        for slot in [&self.model, &self.tools, &self.mcp_handler] {
            if let Ok(mut g) = slot.write() {
                *g = None;
            }
        }
        if let Ok(mut g) = self.events.write() {
            *g = None;
        }
        self.store.close();
        if let Ok(mut g) = self.harness.write() {
            *g = None;
        }
        if let Ok(mut g) = self.js_model.write() {
            *g = None;
        }
        if let Ok(mut g) = self.tapes.write() {
            *g = None;
        }
        if let Some(t) = self.telemetry.write().ok().and_then(|mut g| g.take()) {
            crate::telemetry::close(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(id: u32) -> bool {
        ANSWERS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&id)
    }

    /// An answer reaches its call once; a call whose caller stopped waiting is forgotten, and
    /// a late answer to it (or a second one) goes nowhere.
    #[test]
    fn answers_reach_their_call_and_a_dropped_call_leaves_nothing() {
        let mut first = Expected::new();
        let second = Expected::new();
        assert_ne!(first.id, second.id);
        assert!(waiting(first.id) && waiting(second.id));

        answer_call(first.id, Some(r#"{"ok":true}"#.to_owned()), None);
        assert_eq!(
            first.answer.try_recv().ok(),
            Some(Ok(r#"{"ok":true}"#.to_owned()))
        );
        assert!(!waiting(first.id));
        answer_call(first.id, None, Some("again".to_owned()));

        let (id, failed) = {
            let mut e = Expected::new();
            answer_call(e.id, None, Some("it threw".to_owned()));
            (e.id, e.answer.try_recv())
        };
        assert_eq!(failed.ok(), Some(Err("it threw".to_owned())));
        assert!(!waiting(id));

        let gone = second.id;
        drop(second);
        assert!(!waiting(gone), "a dropped call is forgotten");
        answer_call(gone, Some("{}".to_owned()), None);
        assert!(!waiting(gone));
    }
}
