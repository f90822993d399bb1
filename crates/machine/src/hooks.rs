//! The seam lifecycle hooks plug into: a [`HookRunner`] runs one declared hook
//! and answers a [`Verdict`]. The default runner ([`ModelGrader`]) runs script hooks
//! in the QuickJS sandbox and grades rubric hooks with the model; a host may replace
//! it (`Harness::set_hook_runner`). Whatever cannot run is an execution error, so a
//! state that declares hooks never runs unguarded.

use std::path::PathBuf;

use archmax_spec::model::Hook;
use serde_json::{Map, Value};

use crate::model::{ChatMessage, ChatRequest, Model};
use crate::tools::BoxFuture;

/// Parses a hook script as a run would, without running it ([`archmax_sandbox::check_hook_syntax`]):
/// the parser `validate` hands the language's checks (`ValidateOptions::parse_script`).
pub fn parse_script(file: &str, source: &str) -> Option<archmax_spec::ScriptSyntaxError> {
    archmax_sandbox::check_hook_syntax(file, source)
        .err()
        .map(|e| archmax_spec::ScriptSyntaxError {
            message: e.message,
            line: e.line,
            column: e.column,
        })
}

/// Where a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Gating entry to a state.
    Before,
    /// Gating the move out of a state (or its completion, for a terminal state).
    After,
}

impl Phase {
    /// `before` or `after`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Before => "before",
            Phase::After => "after",
        }
    }
}

/// What a hook is asked about.
#[derive(Debug, Clone)]
pub struct HookInput {
    /// The session the hook runs for.
    pub session_id: String,
    /// The state the hook belongs to.
    pub state: String,
    /// Its phase.
    pub phase: Phase,
    /// The hook's position in the state's list for that phase.
    pub index: usize,
    /// The current trigger.
    pub trigger: String,
    /// The run's variables.
    pub variables: Map<String, Value>,
    /// For an `after` hook in the veto window: the move's target and reason.
    pub to: Option<String>,
    /// The agent's reason for the move.
    pub reason: Option<String>,
    /// The first user message of the session ("" when none).
    pub user_request: String,
    /// The last messages of the transcript (`{ role, content, toolCalls?, note? }`).
    pub history: Vec<Value>,
    /// The hook's `tools.*`, governed with lifecycle authority.
    pub tools: Option<std::sync::Arc<crate::ptc::ScriptTools>>,
}

/// A hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Proceed, with the reason the hook gave (empty when none: a script's `ok()`).
    Ok(String),
    /// Give the agent another attempt (after hooks only).
    Correct(String),
    /// Refuse.
    Veto(String),
    /// The hook could not run: a terminal failure, routed through `on_error`.
    Error(String),
}

/// Longest reason (or error text) a hook verdict keeps, in characters; the rest is cut and
/// counted in a `[truncated <n> chars]` marker.
pub const MAX_HOOK_REASON_CHARS: usize = 4_000;

impl Verdict {
    /// This verdict with its reason cut to [`MAX_HOOK_REASON_CHARS`], so a hook cannot grow
    /// the transcript, the events or the model's context without bound.
    pub fn bounded(self) -> Verdict {
        let cut = |text: String| match text.char_indices().nth(MAX_HOOK_REASON_CHARS) {
            None => text,
            Some((at, _)) => {
                let dropped = text[at..].chars().count();
                format!("{} [truncated {dropped} chars]", &text[..at])
            }
        };
        match self {
            Verdict::Ok(r) => Verdict::Ok(cut(r)),
            Verdict::Correct(r) => Verdict::Correct(cut(r)),
            Verdict::Veto(r) => Verdict::Veto(cut(r)),
            Verdict::Error(e) => Verdict::Error(cut(e)),
        }
    }
}

/// Runs declared hooks.
pub trait HookRunner: Send + Sync {
    /// Runs one hook.
    fn run<'a>(&'a self, hook: &'a Hook, input: HookInput) -> BoxFuture<'a, Verdict>;
}

/// Runs the custom hook kinds a host registers (`createAgent`'s `hookExecutors`). `hook` is
/// the declaration (`{ <kind>: <value> }`), `ctx` the session's context (`sessionId`,
/// `state`, `phase`, `trigger`, `variables`), `args` what a script hook receives. It answers
/// the original's script outcome `{ ok, value, logs, error?, formatted }`, read by
/// [`read_outcome`].
pub trait HookExecutor: Send + Sync {
    /// Runs one hook of a kind it registered.
    fn run(&self, hook: Value, ctx: Value, args: Value) -> BoxFuture<'_, Result<Value, String>>;
}

/// The hook kinds the runtime runs itself; a host may not register these.
pub const BUILTIN_KINDS: [&str; 2] = ["script", "rubric"];

/// The kinds a host registered and who runs them.
#[derive(Clone)]
pub struct HostHookKinds {
    /// The custom kinds (never `script` or `rubric`).
    pub kinds: Vec<String>,
    /// Their executor.
    pub executor: std::sync::Arc<dyn HookExecutor>,
}

impl std::fmt::Debug for HostHookKinds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostHookKinds")
            .field("kinds", &self.kinds)
            .finish_non_exhaustive()
    }
}

/// The default runner with a host's custom kinds beside it.
pub(crate) struct WithHostKinds {
    pub(crate) builtin: std::sync::Arc<dyn HookRunner>,
    pub(crate) host: HostHookKinds,
}

impl HookRunner for WithHostKinds {
    fn run<'a>(&'a self, hook: &'a Hook, input: HookInput) -> BoxFuture<'a, Verdict> {
        let kind = hook.kind();
        let declared = match hook {
            Hook::Custom(m) if self.host.kinds.iter().any(|k| k == kind) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            ),
            _ => return self.builtin.run(hook, input),
        };
        Box::pin(async move {
            let ctx = serde_json::json!({
                "sessionId": input.session_id,
                "state": input.state,
                "phase": input.phase.as_str(),
                "trigger": { "id": input.trigger },
                "variables": input.variables,
            });
            let args = sandbox_input(&input).to_value();
            match self.host.executor.run(declared, ctx, args).await {
                Ok(outcome) => read_outcome(&outcome),
                Err(e) => Verdict::Error(format!(
                    "the '{kind}' hook of state '{}' failed: {e}",
                    input.state
                )),
            }
        })
    }
}

/// Reads a custom hook kind's outcome by the contract every hook kind keeps: a verdict
/// object decides, a bare `false` vetoes, nothing (or any non-object) is `ok`, and any other
/// object fails closed with its keys named; `ok: false` is an execution error.
pub fn read_outcome(outcome: &Value) -> Verdict {
    if outcome.get("ok").and_then(Value::as_bool) != Some(true) {
        let message = outcome
            .pointer("/error/message")
            .and_then(Value::as_str)
            .or_else(|| outcome.get("error").and_then(Value::as_str))
            .unwrap_or("script error");
        return Verdict::Error(message.to_string());
    }
    let value = outcome.get("value").unwrap_or(&Value::Null);
    match value {
        Value::Bool(false) => Verdict::Veto("precondition not met".to_string()),
        Value::Object(m) => {
            // A verdict object is taken as it is; a missing or blank reason gets the
            // helpers' default, exactly as a script hook's `{ verdict }` does.
            let reason = m.get("reason").and_then(Value::as_str).map(str::to_string);
            let given = reason.clone().unwrap_or_default();
            let verdict = m
                .get("verdict")
                .and_then(Value::as_str)
                .and_then(|v| archmax_sandbox::verdict_from_parts(v, reason));
            match verdict {
                Some(archmax_sandbox::HookVerdict::Ok) => Verdict::Ok(given),
                Some(archmax_sandbox::HookVerdict::Veto(r)) => Verdict::Veto(r),
                Some(archmax_sandbox::HookVerdict::Correct(r)) => Verdict::Correct(r),
                None => Verdict::Error(format!(
                    "hook returned {}, which is not a verdict — return {{ verdict: \"ok\" | \"correct\" | \"veto\", reason }}, false, or nothing at all",
                    describe_keys(m)
                )),
            }
        }
        Value::Array(_) => Verdict::Error(
            "hook returned an array, which is not a verdict — return { verdict: \"ok\" | \"correct\" | \"veto\", reason }, false, or nothing at all".to_string(),
        ),
        _ => Verdict::Ok(String::new()),
    }
}

/// An object named by its keys, never its values.
fn describe_keys(m: &Map<String, Value>) -> String {
    if m.is_empty() {
        return "an object with no keys".to_string();
    }
    let shown: Vec<String> = m.keys().take(6).map(|k| format!("'{k}'")).collect();
    let including = if m.len() > 6 {
        "keys including "
    } else {
        "keys "
    };
    format!("an object with {including}{}", shown.join(", "))
}

/// A hook kind with no runner: an execution error, so the state fails closed.
fn no_runner(hook: &Hook, state: &str) -> Verdict {
    let kind = hook.kind();
    Verdict::Error(format!(
        "the '{kind}' hook of state '{state}' cannot run: no runner for that hook kind is registered (set one with the host's hook runner)"
    ))
}

/// The default runner: script hooks run in a fresh QuickJS sandbox, rubric hooks are
/// graded by a model, and custom kinds (which need a host runner) fail closed.
pub struct ModelGrader {
    model: std::sync::Arc<dyn Model>,
    default_model: String,
    /// The workflow's folder; script paths are relative to it.
    workflow_dir: PathBuf,
    /// Numbers grader dispatches (`bridge-<n>`).
    dispatches: std::sync::atomic::AtomicU64,
    /// The workflow's sandbox limits (`settings`), for script hooks.
    limits: archmax_sandbox::Limits,
}

impl ModelGrader {
    /// Grades with `model`; a rubric without its own `model` uses `default_model`;
    /// scripts are read from `workflow_dir` and run under `limits`.
    pub fn new(
        model: std::sync::Arc<dyn Model>,
        default_model: impl Into<String>,
        workflow_dir: impl Into<PathBuf>,
        limits: archmax_sandbox::Limits,
    ) -> Self {
        ModelGrader {
            model,
            default_model: default_model.into(),
            workflow_dir: workflow_dir.into(),
            dispatches: std::sync::atomic::AtomicU64::new(0),
            limits,
        }
    }

    /// Runs a script hook in a sandbox of its own (no state shared between hooks or
    /// sessions); its `tools.*` go through the kernel with lifecycle authority.
    async fn run_script(&self, script: &str, input: &HookInput) -> Verdict {
        let read = archmax_spec::disk::read_within(
            &self.workflow_dir,
            std::path::Path::new(script),
            archmax_spec::disk::MAX_AUTHORED_FILE_BYTES,
        );
        let source = match read {
            Ok(Some(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
            Ok(None) => {
                return Verdict::Error(format!(
                    "hook script '{script}' of state '{}' could not be read: it does not exist",
                    input.state
                ));
            }
            Err(why) => {
                return Verdict::Error(format!(
                    "hook script '{script}' of state '{}' could not be read: it {why}",
                    input.state
                ));
            }
        };
        let bridge: std::sync::Arc<dyn archmax_sandbox::ToolBridge> = match &input.tools {
            Some(t) => t.clone(),
            None => std::sync::Arc::new(NoTools),
        };
        // QuickJS runs on a thread of its own; its tools.* calls are served here.
        let limits = self.limits.clone();
        let (name, hook_input) = (script.to_owned(), sandbox_input(input).to_value());
        let limit = limits.timeout;
        let started = crate::script_thread::run(bridge, limit, move |bridge| async move {
            let sandbox = archmax_sandbox::Sandbox::new(limits).await?;
            Ok::<_, archmax_sandbox::SandboxError>(
                sandbox.run_hook(&name, &source, hook_input, bridge).await,
            )
        })
        .await;
        let run = match started {
            Ok(Ok(run)) => run,
            Ok(Err(e)) => return Verdict::Error(format!("the sandbox could not start: {e}")),
            Err(e) => return Verdict::Error(format!("hook '{script}' failed: {e}")),
        };
        if let Some(t) = &input.tools {
            for line in run.output {
                t.emit(crate::events::Event::HookOutput {
                    state: input.state.clone(),
                    line,
                });
            }
        }
        match run.verdict {
            Ok(archmax_sandbox::HookVerdict::Ok) => Verdict::Ok(String::new()),
            Ok(archmax_sandbox::HookVerdict::Veto(r)) => Verdict::Veto(r),
            Ok(archmax_sandbox::HookVerdict::Correct(r)) => Verdict::Correct(r),
            Err(e) => Verdict::Error(format!("hook '{script}' failed: {e}")),
        }
    }
}

/// The bridge of a hook run with no session to bind tools to: no tools.
struct NoTools;

impl archmax_sandbox::ToolBridge for NoTools {
    fn tools(&self) -> Vec<String> {
        Vec::new()
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        _args: Value,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, String>> + Send + 'a>>
    {
        Box::pin(async move { Err(format!("'{name}' is not available to hook scripts")) })
    }
}

/// The sandbox's view of a hook's input: transcript entries as `{ role, text,
/// toolCalls? }`, runtime notes as `role: "runtime"` with their kind.
fn sandbox_input(input: &HookInput) -> archmax_sandbox::HookInput {
    let messages = input
        .history
        .iter()
        .filter_map(|m| {
            let role = m.get("role").and_then(Value::as_str).unwrap_or_default();
            let text = m.get("content").and_then(Value::as_str).unwrap_or_default();
            match m.get("note").and_then(Value::as_str) {
                // A note is an assistant call plus a tool answer; the answer carries the text.
                Some(kind) if role == "tool" => {
                    Some(archmax_sandbox::HookMessage::runtime_note(kind, text))
                }
                Some(_) => None,
                None => {
                    let mut msg = archmax_sandbox::HookMessage::new(role, text);
                    msg.tool_calls = m.get("toolCalls").and_then(Value::as_array).map(|calls| {
                        calls
                            .iter()
                            .map(|c| archmax_sandbox::HookToolCall {
                                name: c
                                    .pointer("/function/name")
                                    .and_then(Value::as_str)
                                    .unwrap_or_default()
                                    .to_string(),
                                args: c
                                    .pointer("/function/arguments")
                                    .and_then(Value::as_str)
                                    .and_then(|a| serde_json::from_str(a).ok())
                                    .unwrap_or(Value::Object(Map::new())),
                            })
                            .collect()
                    });
                    Some(msg)
                }
            }
        })
        .collect();
    archmax_sandbox::HookInput {
        state: input.state.clone(),
        phase: match input.phase {
            Phase::Before => archmax_sandbox::HookPhase::Before,
            Phase::After => archmax_sandbox::HookPhase::After,
        },
        trigger: Some(input.trigger.clone()).filter(|t| !t.is_empty()),
        variables: input.variables.clone(),
        messages,
        from: input.to.as_ref().map(|_| input.state.clone()),
        to: input.to.clone(),
        reason: input.reason.clone(),
    }
}

/// The instruction every grader call ends with: the verdict shape, every time.
const VERDICT_REQUEST: &str = "Answer with one JSON object and nothing else: {\"verdict\": \"ok\" | \"correct\" | \"veto\", \"reason\": \"<one sentence>\"}.";

/// Reads a grader's answer: a JSON object with a known verdict, possibly wrapped in prose.
pub fn parse_verdict(text: &str) -> Option<Verdict> {
    let candidates = [
        Some(text.trim()),
        text.find('{')
            .zip(text.rfind('}'))
            .and_then(|(a, b)| text.get(a..=b)),
    ];
    for c in candidates.into_iter().flatten() {
        if let Ok(v) = serde_json::from_str::<Value>(c) {
            let reason = v
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            return match v.get("verdict").and_then(Value::as_str) {
                Some("ok") => Some(Verdict::Ok(reason)),
                Some("correct") => Some(Verdict::Correct(reason)),
                Some("veto") => Some(Verdict::Veto(reason)),
                _ => None,
            };
        }
    }
    None
}

impl HookRunner for ModelGrader {
    fn run<'a>(&'a self, hook: &'a Hook, input: HookInput) -> BoxFuture<'a, Verdict> {
        Box::pin(async move {
            let rubric = match hook {
                Hook::Rubric { rubric } => rubric,
                Hook::Script { script, .. } => return self.run_script(script, &input).await,
                Hook::Custom(_) => return no_runner(hook, &input.state),
            };
            let id = format!("{}--{}--{}", input.state, input.phase.as_str(), input.index);
            let payload = serde_json::json!({
                "userRequest": input.user_request,
                "history": input.history,
                "state": input.state,
                "phase": input.phase.as_str(),
            });
            let messages = vec![
                ChatMessage::system(format!(
                    "{}\n\n{VERDICT_REQUEST}",
                    rubric.instructions.trim()
                )),
                ChatMessage::user(serde_json::to_string_pretty(&payload).unwrap_or_default()),
            ];
            let model = rubric
                .model
                .clone()
                .unwrap_or_else(|| self.default_model.clone());
            let n = self
                .dispatches
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst)
                + 1;
            let dispatch_id = format!("bridge-{n}");
            // The session-bound emitter travels with the hook's tools.
            let emit = |event| {
                if let Some(t) = &input.tools {
                    t.emit(event);
                }
            };
            emit(crate::events::Event::RubricStart {
                state: input.state.clone(),
                name: id.clone(),
                dispatch_id: dispatch_id.clone(),
            });
            let started = std::time::Instant::now();
            let answer = self
                .model
                .complete(&{
                    let mut req = ChatRequest::new(model, messages);
                    req.role = crate::model::ModelRole::Rubric;
                    req.state = Some(input.state.clone());
                    req
                })
                .await;
            emit(crate::events::Event::RubricResult {
                state: input.state.clone(),
                name: id.clone(),
                dispatch_id,
                status: if answer.is_ok() { "ok" } else { "error" }.to_string(),
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
            match answer {
                Err(e) => Verdict::Error(format!("rubric '{id}' could not be graded: {e}")),
                Ok(r) => {
                    let text = r.message.content.unwrap_or_default();
                    parse_verdict(&text).unwrap_or_else(|| {
                        let snippet: String = if text.is_empty() {
                            "(no output)".to_string()
                        } else {
                            text.chars().take(200).collect()
                        };
                        let more = if text.chars().count() > 200 {
                            "…"
                        } else {
                            ""
                        };
                        Verdict::Veto(format!(
                            "rubric '{id}' returned no parseable verdict: {snippet}{more}"
                        ))
                    })
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_read_from_json_even_inside_prose() {
        assert_eq!(
            parse_verdict(r#"{"verdict":"ok","reason":"fine"}"#),
            Some(Verdict::Ok("fine".into()))
        );
        assert_eq!(
            parse_verdict("Here: {\"verdict\": \"veto\", \"reason\": \"wrong date\"} done"),
            Some(Verdict::Veto("wrong date".into()))
        );
        assert_eq!(parse_verdict(r#"{"verdict":"maybe"}"#), None);
        assert_eq!(parse_verdict("looks good"), None);
    }

    /// A custom executor's verdict object is taken as it is: no reason is needed, and a
    /// missing one gets the helpers' default (sandbox-hooks-cases §2.5).
    #[test]
    fn a_custom_kinds_verdict_needs_no_reason() {
        let read = |value: Value| read_outcome(&serde_json::json!({ "ok": true, "value": value }));
        assert_eq!(
            read(serde_json::json!({ "verdict": "ok" })),
            Verdict::Ok(String::new())
        );
        assert_eq!(
            read(serde_json::json!({ "verdict": "veto" })),
            Verdict::Veto("vetoed by hook".into())
        );
        assert_eq!(
            read(serde_json::json!({ "verdict": "correct", "reason": " " })),
            Verdict::Correct("correction requested".into())
        );
        assert!(matches!(
            read(serde_json::json!({ "verdict": "OK" })),
            Verdict::Error(_)
        ));
    }

    #[test]
    fn a_long_reason_is_cut_with_a_marker() {
        let long = "é".repeat(MAX_HOOK_REASON_CHARS + 25);
        let Verdict::Veto(r) = Verdict::Veto(long).bounded() else {
            panic!("still a veto");
        };
        assert_eq!(
            r.chars().count(),
            MAX_HOOK_REASON_CHARS + " [truncated 25 chars]".len()
        );
        assert!(
            r.ends_with("é [truncated 25 chars]"),
            "{}",
            &r[r.len() - 40..]
        );
        let short = Verdict::Correct("fix the date".into());
        assert_eq!(short.clone().bounded(), short);
        assert_eq!(
            Verdict::Ok("fine".into()).bounded(),
            Verdict::Ok("fine".into())
        );
    }
}
