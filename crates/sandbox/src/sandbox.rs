//! The QuickJS runtime, its limits, and the hook / eval runs.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex as StdMutex, MutexGuard};
use std::task::{Context as TaskContext, Poll};

use rquickjs::context::EvalOptions;
use rquickjs::module::{Declared, WriteOptions};
use rquickjs::prelude::Async;
use rquickjs::{
    AsyncContext, AsyncRuntime, CatchResultExt, CaughtError, Coerced, Ctx, Function, Module, Value,
    qjs,
};
use tokio::sync::{Mutex, watch};

use crate::bridge::{PTC_EXCLUDED_TOOLS, ToolBridge};
use crate::deadline::{Deadline, Heap, LimitAllocator};
use crate::error::SandboxError;
use crate::format::{EvalRun, JsFailure, LogBuf, format_eval};
use crate::limits::Limits;
use crate::native_guard::{CHECK_EVERY, NATIVE_GUARD, NATIVE_MAX, SORT_NATIVE_MAX};
use crate::prelude::{PRELUDE, SANDBOX_VERSION};
use crate::source::{Mode, camel_case, prepare, strip_harness_imports};
use crate::verdict::{
    HookRun, HookVerdict, PRECONDITION_NOT_MET, Shape, from_parts, not_a_verdict,
};

/// File name `archmax_eval` code carries in stack traces.
const EVAL_FILE: &str = "archmax_eval";

/// One QuickJS runtime + context, reusable across runs and safe to share between tasks.
///
/// Runs on one sandbox are serialised. Globals persist from run to run (the original's REPL
/// session), except after a run that broke a limit (time, memory) or hit the wall-clock timeout:
/// the runtime is then discarded and the next run starts on a fresh one, so nothing left behind
/// by the broken run (pending jobs, host calls, half-built state) can leak into later runs.
pub struct Sandbox {
    limits: Limits,
    guards: Guards,
    inner: Mutex<Option<Inner>>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// Field order matters: the context is dropped before its runtime.
struct Inner {
    ctx: AsyncContext,
    _rt: AsyncRuntime,
    shared: Arc<Shared>,
}

/// State shared between the host and the functions installed in the context.
struct Shared {
    deadline: Arc<Deadline>,
    /// The allocator's memory limit and refusals (guarded runtimes only).
    heap: Arc<Heap>,
    run: StdMutex<RunState>,
}

struct RunState {
    bridge: Option<Arc<dyn ToolBridge>>,
    cancel: Option<watch::Receiver<bool>>,
    calls: u32,
    max_calls: Option<u32>,
    logs: LogBuf,
}

impl Shared {
    fn lock_run(&self) -> MutexGuard<'_, RunState> {
        self.run
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn begin(&self, bridge: Arc<dyn ToolBridge>, cancel: watch::Receiver<bool>, limits: &Limits) {
        let mut st = self.lock_run();
        st.bridge = Some(bridge);
        st.cancel = Some(cancel);
        st.calls = 0;
        st.max_calls = limits.max_tool_calls;
        st.logs = LogBuf::new(limits.max_result_chars);
        drop(st);
        self.heap.take_refused();
        self.deadline.arm(limits.timeout);
    }

    /// Disarms the deadline and returns (console lines, dropped chars, interrupted?, an
    /// allocation refused?).
    fn end(&self, cap: usize) -> (Vec<String>, usize, bool, bool) {
        let fired = self.deadline.disarm();
        let refused = self.heap.take_refused();
        let mut st = self.lock_run();
        st.bridge = None;
        st.cancel = None;
        let logs = std::mem::replace(&mut st.logs, LogBuf::new(cap));
        drop(st);
        let (lines, dropped) = logs.finish();
        (lines, dropped, fired, refused)
    }

    fn push_log(&self, line: &str) {
        self.lock_run().logs.push(line);
    }
}

/// The host side of one `tools.<camel>(args)` call. Returns `o<result>` or `e<message>`.
async fn host_call(shared: Arc<Shared>, name: String, camel: String, json: String) -> String {
    const ENDED: &str = "the script run that made this call has ended";
    let (bridge, cancel) = {
        let mut st = shared.lock_run();
        let open = st
            .cancel
            .as_ref()
            .is_some_and(|rx| rx.has_changed().is_ok() && !*rx.borrow());
        let (Some(bridge), Some(cancel), true) = (st.bridge.clone(), st.cancel.clone(), open)
        else {
            return format!("eTool '{name}' failed: {ENDED}");
        };
        st.calls = st.calls.saturating_add(1);
        if let Some(limit) = st.max_calls
            && st.calls > limit
        {
            return format!(
                "eTool '{name}' failed: PTC call budget exceeded (limit={limit}, attempted={}, function={camel})",
                st.calls
            );
        }
        (bridge, cancel)
    };
    let args = serde_json::from_str(&json)
        .unwrap_or_else(|_| serde_json::Value::Object(serde_json::Map::new()));
    let result = tokio::select! {
        r = bridge.call(&name, args) => r,
        () = cancelled(cancel) => Err(ENDED.to_owned()),
    };
    match result {
        Ok(text) => format!("o{text}"),
        Err(text) => format!("eTool '{name}' failed: {text}"),
    }
}

async fn cancelled(mut rx: watch::Receiver<bool>) {
    // Resolves when the run's sender is dropped (Err) or flips to true.
    let _ = rx.wait_for(|c| *c).await;
}

/// A future that is pending exactly once, letting rquickjs poll spawned host futures.
struct YieldOnce(bool);

impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

/// Runs queued jobs and resolves host calls left floating by a finished run (they are cancelled
/// once the run's sender is dropped) until two rounds make no progress. Bounded by the deadline.
async fn drain(ctx: &Ctx<'_>) {
    let mut idle_rounds = 0;
    while idle_rounds < 2 {
        let mut progressed = false;
        while ctx.execute_pending_job() {
            progressed = true;
        }
        YieldOnce(false).await;
        if ctx.execute_pending_job() {
            progressed = true;
        }
        idle_rounds = if progressed { 0 } else { idle_rounds + 1 };
    }
}

/// Whether a runtime gets the native-loop guards (always, except the benchmark's baseline).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Guards {
    On,
    #[cfg_attr(not(feature = "unguarded-baseline"), allow(dead_code))]
    Off,
}

async fn build(limits: &Limits, guards: Guards) -> Result<Inner, SandboxError> {
    let deadline = Arc::new(Deadline::new());
    let heap = Arc::new(Heap::new());
    let rt = match guards {
        // The allocator enforces the memory limit (see `deadline`), from `attach_heap` on.
        Guards::On => {
            AsyncRuntime::new_with_alloc(LimitAllocator::new(deadline.clone(), heap.clone()))?
        }
        Guards::Off => {
            let rt = AsyncRuntime::new()?;
            rt.set_memory_limit(limits.memory_bytes).await;
            rt
        }
    };
    rt.set_max_stack_size(limits.stack_bytes).await;
    let shared = Arc::new(Shared {
        deadline,
        heap,
        run: StdMutex::new(RunState {
            bridge: None,
            cancel: None,
            calls: 0,
            max_calls: limits.max_tool_calls,
            logs: LogBuf::new(limits.max_result_chars),
        }),
    });
    let interrupt = shared.deadline.clone();
    rt.set_interrupt_handler(Some(Box::new(move || interrupt.passed())))
        .await;
    let ctx = AsyncContext::full(&rt).await?;
    let for_log = shared.clone();
    let for_call = shared.clone();
    let for_guard = shared.deadline.clone();
    let for_heap = shared.heap.clone();
    let memory_bytes = limits.memory_bytes;
    let installed: Result<(), String> = ctx
        .with(move |ctx| {
            if guards == Guards::On {
                attach_heap(&ctx, &for_heap, memory_bytes);
                install_native_guard(&ctx, for_guard)?;
            }
            let source = PRELUDE.replace("__VERSION__", &SANDBOX_VERSION.to_string());
            let prelude: Function = ctx.eval(source).catch(&ctx).map_err(|e| e.to_string())?;
            let log = Function::new(ctx.clone(), move |line: String| for_log.push_log(&line))
                .map_err(|e| e.to_string())?;
            let call = Function::new(
                ctx.clone(),
                Async(move |name: String, camel: String, json: String| {
                    let shared = for_call.clone();
                    async move {
                        Ok::<String, rquickjs::Error>(host_call(shared, name, camel, json).await)
                    }
                }),
            )
            .map_err(|e| e.to_string())?;
            prelude
                .call::<_, ()>((log, call))
                .catch(&ctx)
                .map_err(|e| e.to_string())
        })
        .await;
    installed.map_err(SandboxError::Engine)?;
    Ok(Inner {
        ctx,
        _rt: rt,
        shared,
    })
}

/// Tells the allocator which runtime it serves and puts the memory limit in force: from here on
/// a refused allocation turns the runtime's automatic GC off first (see `deadline`).
fn attach_heap(ctx: &Ctx<'_>, heap: &Heap, memory_bytes: usize) {
    #[allow(unsafe_code)]
    // SAFETY: `ctx` is a live context whose lock this thread holds; `JS_GetRuntime` only reads
    // the context's runtime pointer.
    let runtime = unsafe { qjs::JS_GetRuntime(ctx.as_raw().as_ptr()) };
    heap.attach(runtime, memory_bytes);
}

/// Installs the wrappers that keep builtins' native loops interruptible (see `native_guard`).
fn install_native_guard(ctx: &Ctx<'_>, deadline: Arc<Deadline>) -> Result<(), String> {
    let is_proxy =
        Function::new(ctx.clone(), |v: Value<'_>| v.is_proxy()).map_err(|e| e.to_string())?;
    let passed =
        Function::new(ctx.clone(), move || deadline.passed()).map_err(|e| e.to_string())?;
    let host = rquickjs::Array::new(ctx.clone()).map_err(|e| e.to_string())?;
    host.set(0, is_proxy).map_err(|e| e.to_string())?;
    host.set(1, passed).map_err(|e| e.to_string())?;
    ctx.globals()
        .set(GUARD_HOST, host)
        .map_err(|e| e.to_string())?;
    let module = guard_module(ctx)?;
    let (_, promise) = module.eval().catch(ctx).map_err(|e| e.to_string())?;
    match promise.result::<Value>() {
        Some(Ok(_)) => Ok(()),
        Some(Err(e)) => Err(Err::<(), _>(e)
            .catch(ctx)
            .map_err(|e| e.to_string())
            .err()
            .unwrap_or_default()),
        None => Err("the native guard did not finish installing".to_owned()),
    }
}

/// The global the guard module takes its two host functions from (and deletes).
const GUARD_HOST: &str = "__archmax_guard_host";

/// The guard's compiled bytecode, shared by every context of the process: parsing the guard
/// is most of its cost, and a fresh sandbox is built for every script hook.
static GUARD_BYTECODE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();

fn guard_module<'js>(ctx: &Ctx<'js>) -> Result<Module<'js, Declared>, String> {
    if let Some(bytes) = GUARD_BYTECODE.get() {
        return load_guard(ctx, bytes);
    }
    let source = format!(
        "const [isProxy, deadlinePassed] = globalThis.{GUARD_HOST};\ndelete globalThis.{GUARD_HOST};\n({})(isProxy, deadlinePassed);\n",
        NATIVE_GUARD
            .replace("__NATIVE_MAX__", &NATIVE_MAX.to_string())
            .replace("__SORT_NATIVE_MAX__", &SORT_NATIVE_MAX.to_string())
            .replace("__CHECK_EVERY__", &CHECK_EVERY.to_string())
    );
    let declared = Module::declare(ctx.clone(), "archmax:native-guard", source)
        .catch(ctx)
        .map_err(|e| e.to_string())?;
    let bytes = declared
        .write(WriteOptions::default())
        .map_err(|e| e.to_string())?;
    let _ = GUARD_BYTECODE.set(bytes);
    Ok(declared)
}

#[allow(unsafe_code)]
fn load_guard<'js>(ctx: &Ctx<'js>, bytes: &'static [u8]) -> Result<Module<'js, Declared>, String> {
    // SAFETY: `bytes` is bytecode this process wrote with `Module::write` from the guard's
    // source, with the same QuickJS build, and it lives for the whole process (QuickJS may keep
    // pointing into it).
    unsafe { Module::load(ctx.clone(), bytes) }.map_err(|e| e.to_string())
}

/// The `[snake, camel, snake, camel, …]` list handed to the prelude.
fn tool_names(bridge: &dyn ToolBridge) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for name in bridge.tools() {
        if PTC_EXCLUDED_TOOLS.contains(&name.as_str()) || out.iter().step_by(2).any(|n| *n == name)
        {
            continue;
        }
        let camel = camel_case(&name);
        out.push(name);
        out.push(camel);
    }
    out
}

fn failure(e: CaughtError<'_>) -> JsFailure {
    match e {
        CaughtError::Exception(ex) => JsFailure {
            name: ex.get::<_, Coerced<String>>("name").ok().map(|c| c.0),
            message: ex.message(),
            stack: ex.stack(),
        },
        CaughtError::Value(v) => JsFailure {
            name: None,
            message: v.get::<Coerced<String>>().ok().map(|c| c.0),
            stack: None,
        },
        CaughtError::Error(e) => JsFailure::new("Error", e.to_string()),
    }
}

fn setup(
    ctx: &Ctx<'_>,
    kind: &str,
    names: &[String],
    args_json: Option<&str>,
) -> Result<(), JsFailure> {
    let f: Function = ctx
        .globals()
        .get("__archmax_setup")
        .catch(ctx)
        .map_err(failure)?;
    let args = match args_json {
        Some(json) => rquickjs::String::from_str(ctx.clone(), json)
            .catch(ctx)
            .map_err(failure)?
            .into_value(),
        None => Value::new_undefined(ctx.clone()),
    };
    f.call::<_, ()>((kind, names.to_vec(), args))
        .catch(ctx)
        .map_err(failure)
}

/// Evaluates `source` as a global async script (top-level await) and returns its completion value.
async fn eval_async<'js>(
    ctx: &Ctx<'js>,
    source: &str,
    file: &str,
) -> Result<Value<'js>, JsFailure> {
    let mut opts = EvalOptions::default();
    opts.global = true;
    opts.strict = false;
    opts.promise = true;
    opts.backtrace_barrier = true;
    opts.filename = Some(file.to_owned());
    let promise: rquickjs::Promise = ctx
        .eval_with_options(source.as_bytes().to_vec(), opts)
        .catch(ctx)
        .map_err(failure)?;
    let wrapped: Value = promise
        .into_future::<Value>()
        .await
        .catch(ctx)
        .map_err(failure)?;
    match wrapped.as_object() {
        Some(o) => o.get("value").catch(ctx).map_err(failure),
        None => Ok(Value::new_undefined(ctx.clone())),
    }
}

/// Awaits `value` when it is a promise.
async fn settle<'js>(ctx: &Ctx<'js>, value: Value<'js>) -> Result<Value<'js>, JsFailure> {
    match value.as_promise() {
        Some(p) => p
            .clone()
            .into_future::<Value>()
            .await
            .catch(ctx)
            .map_err(failure),
        None => Ok(value),
    }
}

enum HookOut {
    Verdict(HookVerdict),
    NotVerdict(String),
    Failed(JsFailure),
}

fn read_verdict<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> HookOut {
    if let Some(b) = value.as_bool() {
        return HookOut::Verdict(if b {
            HookVerdict::Ok
        } else {
            HookVerdict::Veto(PRECONDITION_NOT_MET.to_owned())
        });
    }
    if value.is_array() {
        return HookOut::NotVerdict(not_a_verdict(&Shape::Array));
    }
    let Some(obj) = value.as_object().filter(|_| !value.is_function()) else {
        return HookOut::Verdict(HookVerdict::Ok);
    };
    let verdict = obj
        .get::<_, Value>("verdict")
        .catch(ctx)
        .ok()
        .and_then(|v| v.as_string().and_then(|s| s.to_string().ok()));
    if let Some(verdict) = verdict {
        let reason = obj
            .get::<_, Value>("reason")
            .catch(ctx)
            .ok()
            .filter(|r| !r.is_undefined() && !r.is_null())
            .and_then(|r| r.get::<Coerced<String>>().catch(ctx).ok())
            .map(|c| c.0);
        if let Some(v) = from_parts(&verdict, reason) {
            return HookOut::Verdict(v);
        }
    }
    let keys: Result<Vec<String>, _> = obj.keys::<String>().collect();
    let shape = match keys.catch(ctx) {
        Ok(keys) => Shape::Object(keys),
        Err(_) => Shape::Unreadable,
    };
    HookOut::NotVerdict(not_a_verdict(&shape))
}

struct HookJob {
    path: String,
    source: String,
    input_json: String,
    names: Vec<String>,
}

async fn hook_steps<'js>(ctx: &Ctx<'js>, job: &HookJob) -> Result<HookOut, JsFailure> {
    setup(ctx, "hook", &job.names, Some(&job.input_json))?;
    let body = eval_async(ctx, &job.source, &job.path).await?;
    let def: Value = ctx.globals().get("__hookDef").catch(ctx).map_err(failure)?;
    let value = match def.as_function() {
        Some(f) => {
            let arg = ctx
                .json_parse(job.input_json.clone())
                .catch(ctx)
                .map_err(failure)?;
            if let Some(obj) = arg.as_object() {
                let tools: Value = ctx.globals().get("tools").catch(ctx).map_err(failure)?;
                if !tools.is_undefined() {
                    obj.set("tools", tools).catch(ctx).map_err(failure)?;
                }
            }
            f.call::<_, Value>((arg,)).catch(ctx).map_err(failure)?
        }
        None => body,
    };
    let value = settle(ctx, value).await?;
    Ok(read_verdict(ctx, &value))
}

struct EvalJob {
    file: String,
    source: String,
    args_json: Option<String>,
    names: Vec<String>,
}

fn render<'js>(ctx: &Ctx<'js>, value: &Value<'js>) -> Option<String> {
    if value.is_undefined() {
        return None;
    }
    if let Some(s) = value.as_string() {
        return Some(s.to_string().unwrap_or_default());
    }
    let json = ctx
        .json_stringify_replacer_space(value.clone(), Value::new_undefined(ctx.clone()), 2)
        .catch(ctx);
    if let Ok(Some(s)) = json
        && let Ok(s) = s.to_string()
    {
        return Some(s);
    }
    Some(
        value
            .get::<Coerced<String>>()
            .catch(ctx)
            .map(|c| c.0)
            .unwrap_or_else(|_| format!("[{}]", value.type_name())),
    )
}

async fn eval_steps<'js>(ctx: &Ctx<'js>, job: &EvalJob) -> Result<Option<String>, JsFailure> {
    setup(ctx, "ptc", &job.names, job.args_json.as_deref())?;
    let value = eval_async(ctx, &job.source, &job.file).await?;
    let value = settle(ctx, value).await?;
    Ok(render(ctx, &value))
}

/// What a driven run produced.
struct Driven<R> {
    /// `None` when the wall-clock timeout fired first.
    result: Option<R>,
    interrupted: bool,
    /// An allocation was refused during the run (the memory limit or the deadline).
    refused: bool,
    logs: Vec<String>,
    dropped: usize,
}

fn is_out_of_memory(f: &JsFailure) -> bool {
    f.message
        .as_deref()
        .is_some_and(|m| m.contains("out of memory"))
}

impl Sandbox {
    /// Builds a sandbox: one QuickJS runtime and context with `limits` applied and the prelude
    /// installed.
    pub async fn new(limits: Limits) -> Result<Sandbox, SandboxError> {
        Self::with_guards(limits, Guards::On).await
    }

    /// A sandbox without the native-loop guards (`native_guard`, the limit allocator): the
    /// baseline `benches/native_guard.rs` measures their cost against. Never for scripts.
    #[cfg(feature = "unguarded-baseline")]
    #[doc(hidden)]
    pub async fn new_unguarded(limits: Limits) -> Result<Sandbox, SandboxError> {
        Self::with_guards(limits, Guards::Off).await
    }

    async fn with_guards(limits: Limits, guards: Guards) -> Result<Sandbox, SandboxError> {
        let inner = build(&limits, guards).await?;
        Ok(Sandbox {
            limits,
            guards,
            inner: Mutex::new(Some(inner)),
        })
    }

    /// The limits every run of this sandbox uses.
    #[must_use]
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    fn timeout_ms(&self) -> u128 {
        self.limits.timeout.as_millis()
    }

    fn wall_clock_failure(&self) -> JsFailure {
        JsFailure::new(
            "Error",
            format!(
                "Promise timed out — execution interrupted (time limit of {} ms reached)",
                self.timeout_ms()
            ),
        )
    }

    fn interrupted_failure(&self) -> JsFailure {
        JsFailure::new(
            "InternalError",
            format!(
                "interrupted (time limit of {} ms reached)",
                self.timeout_ms()
            ),
        )
    }

    /// Adds the limit to QuickJS's bare `out of memory`. QuickJS throws `null` when it cannot
    /// allocate even that error: after a refused allocation (`refused`), that is the same failure.
    fn annotate(&self, mut f: JsFailure, refused: bool) -> JsFailure {
        if refused && f.name.is_none() && f.message.as_deref() == Some("null") {
            f = JsFailure::new("InternalError", "out of memory".to_owned());
        }
        if is_out_of_memory(&f) {
            f.message = Some(format!(
                "out of memory (memory limit of {} bytes reached)",
                self.limits.memory_bytes
            ));
        }
        f
    }

    /// Runs `f` in the context under the run's limits; discards the runtime when the run broke
    /// a limit (`fatal(result)`, the interrupt or the wall-clock timeout).
    async fn drive<F, R>(
        &self,
        bridge: Arc<dyn ToolBridge>,
        fatal: fn(&R) -> bool,
        f: F,
    ) -> Result<Driven<R>, String>
    where
        F: for<'js> AsyncFnOnce(Ctx<'js>, watch::Sender<bool>) -> R + Send,
        R: Send + 'static,
    {
        let mut guard = self.inner.lock().await;
        if guard.is_none() {
            *guard = Some(
                build(&self.limits, self.guards)
                    .await
                    .map_err(|e| e.to_string())?,
            );
        }
        let Some(inner) = guard.as_ref() else {
            return Err("the sandbox runtime is unavailable".to_owned());
        };
        let (cancel_tx, cancel_rx) = watch::channel(false);
        inner.shared.begin(bridge, cancel_rx, &self.limits);
        let run = inner
            .ctx
            .async_with(async move |ctx| f(ctx, cancel_tx).await);
        let result = tokio::time::timeout(self.limits.timeout, run).await.ok();
        let (logs, dropped, interrupted, refused) = inner.shared.end(self.limits.max_result_chars);
        // A refused allocation left the runtime without automatic GC (see `deadline`), and
        // perhaps with half-built state a caught `out of memory` hid: it is not reused.
        let broken = match &result {
            None => true,
            Some(r) => interrupted || refused || fatal(r),
        };
        if broken {
            *guard = None;
        }
        Ok(Driven {
            result,
            interrupted,
            refused,
            logs,
            dropped,
        })
    }

    /// Runs one lifecycle hook script.
    ///
    /// `path` is the hook's workflow-relative path (used in messages and stack traces), `source`
    /// its text and `input` the hook input object (see [`crate::HookInput`]). The script may be
    /// an ES module with a default export, call `defineHook(fn)`, or be a bare script whose last
    /// expression is the verdict; top-level `await` works. A registered function is called with
    /// the input plus `tools`. The returned value is read as: a `{ verdict: "ok"|"veto"|"correct",
    /// reason }` object as-is; bare `false` → veto `precondition not met`; any other non-object
    /// (nothing, `true`, numbers, strings, functions) → ok; any other object or array → error
    /// naming its keys; a throw, syntax error, refused import or broken limit → error.
    pub async fn run_hook(
        &self,
        path: &str,
        source: &str,
        input: serde_json::Value,
        bridge: Arc<dyn ToolBridge>,
    ) -> HookRun {
        let prepared = match strip_harness_imports(source) {
            Ok(stripped) => prepare(&stripped, Mode::Hook),
            Err(e) => {
                return HookRun {
                    verdict: Err(e.with_file(path).to_string()),
                    output: Vec::new(),
                };
            }
        };
        let job = HookJob {
            path: path.to_owned(),
            source: prepared,
            input_json: input.to_string(),
            names: tool_names(bridge.as_ref()),
        };
        let fatal: fn(&HookOut) -> bool =
            |out| matches!(out, HookOut::Failed(f) if is_out_of_memory(f));
        let driven = self
            .drive(bridge, fatal, async move |ctx, cancel| {
                let out = match hook_steps(&ctx, &job).await {
                    Ok(out) => out,
                    Err(f) => HookOut::Failed(f),
                };
                drop(cancel);
                drain(&ctx).await;
                out
            })
            .await;
        let driven = match driven {
            Ok(d) => d,
            Err(e) => {
                return HookRun {
                    verdict: Err(format!("sandbox unavailable: {e}")),
                    output: Vec::new(),
                };
            }
        };
        let mut output: Vec<String> = driven
            .logs
            .iter()
            .map(|l| l.trim_end().to_owned())
            .filter(|l| !l.is_empty())
            .collect();
        if driven.dropped > 0 {
            output.push(format!("[truncated {} chars]", driven.dropped));
        }
        let verdict = match driven.result {
            _ if driven.interrupted => Err(self.interrupted_failure().one_line(path)),
            None => Err(self.wall_clock_failure().one_line(path)),
            Some(HookOut::Verdict(v)) => Ok(v),
            Some(HookOut::NotVerdict(msg)) => Err(msg),
            Some(HookOut::Failed(f)) => Err(self.annotate(f, driven.refused).one_line(path)),
        };
        HookRun { verdict, output }
    }

    /// Runs `archmax_eval` code: a global async script (top-level `await`; the last expression
    /// is the result) sharing globals with earlier evals on this sandbox. `args` becomes the
    /// global `args` unless it is `null` (see [`crate::eval_args`] for `archmax_run`'s shape).
    pub async fn eval(
        &self,
        code: &str,
        args: serde_json::Value,
        bridge: Arc<dyn ToolBridge>,
    ) -> EvalRun {
        self.run_file(EVAL_FILE, code, args, bridge).await
    }

    /// Like [`Sandbox::eval`], for a script file (`archmax_run`): `path` names the code in
    /// messages and stack traces.
    pub async fn run_file(
        &self,
        path: &str,
        code: &str,
        args: serde_json::Value,
        bridge: Arc<dyn ToolBridge>,
    ) -> EvalRun {
        let cap = self.limits.max_result_chars;
        let prepared = match strip_harness_imports(code) {
            Ok(stripped) => prepare(&stripped, Mode::Eval),
            Err(e) => {
                let e = if path == EVAL_FILE {
                    e
                } else {
                    e.with_file(path)
                };
                return EvalRun {
                    text: format!("error: {e}"),
                    is_error: true,
                };
            }
        };
        let job = EvalJob {
            file: path.to_owned(),
            source: prepared,
            args_json: (!args.is_null()).then(|| args.to_string()),
            names: tool_names(bridge.as_ref()),
        };
        let fatal: fn(&Result<Option<String>, JsFailure>) -> bool =
            |r| matches!(r, Err(f) if is_out_of_memory(f));
        let driven = self
            .drive(bridge, fatal, async move |ctx, cancel| {
                let out = eval_steps(&ctx, &job).await;
                drop(cancel);
                drain(&ctx).await;
                out
            })
            .await;
        let driven = match driven {
            Ok(d) => d,
            Err(e) => {
                return EvalRun {
                    text: format!("error: sandbox unavailable: {e}"),
                    is_error: true,
                };
            }
        };
        let result = match driven.result {
            _ if driven.interrupted => Err(self.interrupted_failure()),
            None => Err(self.wall_clock_failure()),
            Some(Ok(v)) => Ok(v),
            Some(Err(f)) => Err(self.annotate(f, driven.refused)),
        };
        EvalRun {
            text: format_eval(&driven.logs, driven.dropped, &result, cap),
            is_error: result.is_err(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn sandbox_is_send_and_sync() {
        assert_send_sync::<Sandbox>();
    }

    #[test]
    fn deadline_unarmed_never_interrupts() {
        let deadline = Deadline::new();
        assert!(!deadline.passed());
        deadline.arm(Duration::ZERO);
        std::thread::sleep(Duration::from_millis(1));
        assert!(deadline.passed());
        assert!(deadline.fired());
        assert!(deadline.disarm());
        assert!(!deadline.passed());
    }
}
