//! `open`: the JS options (`NativeAgentOptions`) mapped onto the harness's assembly
//! (`HarnessBuilder`): the model source and cassettes, host tools, MCP servers, the session
//! store, events, and the host's rules and hook kinds.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use archmax_machine::{
    AssemblyExtras, DEFAULT_WORKFLOW, Governance, HarnessBuilder, ModelSource, Recording,
    RequestOptions,
};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use serde_json::{Value, json};

use super::NativeAgent;
use crate::callback::take;
use crate::dto::{
    MountOptions, PromptCacheOptions, mount_decls, pricing_table, tool_paths, variables_arg,
};
use crate::events::{JsEvents, collecting_events};
use crate::host_tool::{NativeToolDef, host_tools};
use crate::js_model::JsModel;
use crate::result::{error_dto, kind, plain_error};
use crate::settings::env_lookup;

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
    /// `fallbackModels`: models a call goes to, in order, when it still fails after its
    /// retries (outranks `ARCHMAX_FALLBACK_MODELS`).
    #[napi(ts_type = "Array<string | { model: string; baseUrl?: string; apiKey?: string }>")]
    pub fallback_models: Option<Value>,
    /// `caps`: the host's spending ceilings (outrank `ARCHMAX_MAX_TURN_TOKENS`, …; the
    /// workflow's `budget` caps hold where stricter).
    pub caps: Option<NativeCaps>,
    /// `maxConcurrentCalls`: calls this process sends the `ARCHMAX_*` endpoint at once
    /// (outranks `ARCHMAX_MAX_CONCURRENT_CALLS`).
    pub max_concurrent_calls: Option<u32>,
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

/// `caps`: tokens (input + output) and US dollars, per turn and per session.
#[napi(object)]
#[derive(Debug, Clone, Copy, Default)]
pub struct NativeCaps {
    pub turn_tokens: Option<f64>,
    pub turn_cost_usd: Option<f64>,
    pub session_tokens: Option<f64>,
    pub session_cost_usd: Option<f64>,
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

#[napi]
impl NativeAgent {
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
                max_concurrent_calls: options.max_concurrent_calls,
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
            let js = Arc::new(JsModel::new(
                Arc::clone(&self.model),
                options.streaming.unwrap_or(true),
            ));
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
        let tools = match host_tools(
            options.tools.unwrap_or_default(),
            &self.tools,
            &self.tool_workspaces,
        ) {
            Ok(tools) => tools,
            Err(e) => return e,
        };
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
        let fallbacks = match options.fallback_models.as_ref().filter(|v| !v.is_null()) {
            Some(v) => match archmax_machine::FallbackModel::from_json(v) {
                Ok(f) => Some(f),
                Err(message) => return plain_error("TypeError", message),
            },
            None => None,
        };
        let c = options.caps.unwrap_or_default();
        let caps = match archmax_machine::caps::SpendCaps::from_numbers(
            c.turn_tokens,
            c.turn_cost_usd,
            c.session_tokens,
            c.session_cost_usd,
        ) {
            Ok(caps) => caps,
            Err(e) => return plain_error("TypeError", e.to_string()),
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
            .events(Arc::new(JsEvents::new(Arc::clone(&self.events))))
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
            .caps(caps)
            .fallbacks(fallbacks)
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
}
